// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, shrink layer: giving idle memory back.
 *
 * Idle memory is the pairs of IDLE slots plus the pairs parked in the
 * depot.  A clock hand sweeps the slot array: an IDLE slot with
 * PAMT_SLOT_RECENT set loses the bit (second chance), one without it is
 * moved to REMOVING with a compare-and-exchange (it may have been revived
 * meanwhile) and its pair is freed.  The same sweep enforces the idle cap
 * from the put path, a few slots at a time.
 */
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include "pamt_internal.h"
#include "pamt_trace.h"

#define PAMT_CAP_BUDGET		64	/* slots a put may visit for the cap */
#define PAMT_SHRINK_MAX_BUSY	8	/* BUSY removals before a scan stops */

enum pamt_shrink_why {
	PAMT_SHRINK_FOR_SCAN,
	PAMT_SHRINK_FOR_CAP,
};

/*
 * Move an IDLE slot whose word is still @old to REMOVING and free its
 * pair.  Returns 0, -EAGAIN if the slot changed meanwhile (a get revived
 * it), or pamt_slot_remove()'s error.
 */
static int pamt_shrink_remove(unsigned long idx, unsigned long old)
{
	atomic_long_t *slot = &pamt.slots[idx];
	struct tdx_pamt_pair pair;
	int ret;

	/* RECENT stays in the word: a BUSY REMOVE restores it exactly. */
	pamt_transit_begin();
	if (!atomic_long_try_cmpxchg_acquire(slot, &old,
					     old | PAMT_SLOT_TRANSIT)) {
		pamt_transit_end();
		return -EAGAIN;
	}
	atomic_long_dec(&pamt.idle);
	ret = pamt_slot_remove(slot, idx, &pair);
	pamt_transit_end();
	/* Reset and freed with preemption on: the allocator sleeps on RT. */
	if (!ret)
		pamt_pair_release(&pair, PAMT_PAIR_TO_FREE);
	return ret;
}

static bool pamt_shrink_reclaimable(unsigned long word)
{
	return pamt_slot_state(word) == PAMT_SLOT_IDLE &&
	       !(word & PAMT_SLOT_LEAKED);
}

/*
 * Advance the clock hand over at most @budget slots and REMOVE at most
 * @nr IDLE slots that were not referenced since the hand last passed.
 * Their pairs are freed.  For the cap, a sweep that found only recently
 * used slots takes the first of them rather than nothing.  Never sleeps.
 * Adds the REMOVE sequences it issued, whatever their outcome, to
 * *@removes when that is not NULL.
 */
static unsigned long pamt_shrink_sweep(unsigned long nr, unsigned long budget,
				       enum pamt_shrink_why why,
				       unsigned long *removes)
{
	unsigned long freed = 0, busy = 0, spare = ULONG_MAX, idx, old;
	atomic_long_t *slot;
	int ret;

	while (freed < nr && budget-- && busy < PAMT_SHRINK_MAX_BUSY &&
	       atomic_long_read(&pamt.idle) > 0) {
		idx = (unsigned long)atomic_long_inc_return(&pamt.hand) %
		      pamt.nr_slots;
		slot = &pamt.slots[idx];
		old = atomic_long_read(slot);
		if (!pamt_shrink_reclaimable(old))
			continue;
		if (old & PAMT_SLOT_RECENT) {
			/* Losing the race to a get only costs a second chance. */
			atomic_long_try_cmpxchg(slot, &old,
						old & ~PAMT_SLOT_RECENT);
			if (spare == ULONG_MAX)
				spare = idx;
			continue;
		}
		ret = pamt_shrink_remove(idx, old);
		if (removes && ret != -EAGAIN)
			(*removes)++;
		if (ret == -EBUSY)
			busy++;
		if (ret)
			continue;
		freed++;
		if (why == PAMT_SHRINK_FOR_CAP)
			pamt_stat_inc(CAP);
		else
			pamt_stat_inc(SHRINK);
	}

	if (why == PAMT_SHRINK_FOR_CAP && !freed && spare != ULONG_MAX) {
		old = atomic_long_read(&pamt.slots[spare]);
		ret = pamt_shrink_reclaimable(old) ?
		      pamt_shrink_remove(spare, old) : -EAGAIN;
		if (removes && ret != -EAGAIN)
			(*removes)++;
		if (!ret) {
			pamt_stat_inc(CAP);
			freed++;
		}
	}
	return freed;
}

static unsigned long pamt_shrink_idle_memory(void)
{
	long idle = atomic_long_read(&pamt.idle);

	return (idle > 0 ? idle : 0) + pamt_depot_pairs();
}

/**
 * pamt_shrink_idle_inc() - account a slot that went IDLE, enforce the cap
 *
 * Called from put, in any context but hardirq.  Over the cap, it frees a
 * depot pair or REMOVEs the oldest idle slot it finds within a small
 * budget, so that idle memory stays bounded without waiting for reclaim.
 *
 * Return: true if it issued a PAMT.REMOVE (the put counts as put_slow).
 */
bool pamt_shrink_idle_inc(void)
{
	unsigned long removes = 0;

	atomic_long_inc(&pamt.idle);
	if (likely(pamt_shrink_idle_memory() <= READ_ONCE(pamt.idle_cap)))
		return false;
	if (pamt_depot_pairs() && pamt_depot_shrink(1))
		return false;
	pamt_shrink_sweep(1, PAMT_CAP_BUDGET, PAMT_SHRINK_FOR_CAP, &removes);
	return removes;
}

/**
 * pamt_shrink_remove_all_idle() - REMOVE every IDLE slot, referenced or not
 *
 * Context: process context; may sleep.
 *
 * Return: slots whose pair was freed.
 */
unsigned long pamt_shrink_remove_all_idle(void)
{
	unsigned long idx, old, freed = 0;

	for (idx = 0; idx < pamt.nr_slots; idx++) {
		old = atomic_long_read(&pamt.slots[idx]);
		if (pamt_shrink_reclaimable(old) &&
		    !pamt_shrink_remove(idx, old)) {
			pamt_stat_inc(SHRINK);
			freed++;
		}
		/* Up to a SEAMCALL per slot, over all of memory. */
		if (!(idx % 256))
			cond_resched();
	}
	return freed;
}

/**
 * tdx_pamt_shrink_count() - idle pairs the shrinker could free
 *
 * Return: IDLE slots plus pairs parked in the depot; 0 when disabled.
 */
unsigned long tdx_pamt_shrink_count(void)
{
	if (!pamt.enabled)
		return 0;
	return pamt_shrink_idle_memory();
}

/**
 * tdx_pamt_shrink_scan() - free up to @nr_to_scan idle pairs
 * @nr_to_scan: most pairs to free
 * @nr_scanned: set to the number of pairs freed
 *
 * IDLE slots go first, oldest first by the clock, then depot pairs.  The
 * sweep visits each slot at most twice and stops early when the module
 * keeps answering BUSY.  Never sleeps.
 *
 * Return: pairs freed; 0 means no progress could be made.
 */
unsigned long tdx_pamt_shrink_scan(unsigned long nr_to_scan,
				   unsigned long *nr_scanned)
{
	unsigned long freed = 0;

	if (pamt.enabled) {
		freed = pamt_shrink_sweep(nr_to_scan, 2 * pamt.nr_slots,
					  PAMT_SHRINK_FOR_SCAN, NULL);
		if (freed < nr_to_scan)
			freed += pamt_depot_shrink(nr_to_scan - freed);
		trace_tdx_pamt_shrink(nr_to_scan, freed);
	}
	if (nr_scanned)
		*nr_scanned = freed;
	return freed;
}

/**
 * tdx_pamt_drain() - free every idle slot's pair and every cached pair
 *
 * Context: process context; may sleep.  Runs a function on every online
 * CPU to empty its magazines.
 *
 * Return: pairs freed.
 */
unsigned long tdx_pamt_drain(void)
{
	unsigned long freed;

	might_sleep();
	if (!pamt.enabled)
		return 0;
	freed = pamt_shrink_remove_all_idle();
	/* Two empty magazines per CPU let every CPU park both of its own. */
	if (!pamt_depot_prefill_empty(2 * nr_cpu_ids))
		pamt_platform_drain_cpus();
	freed += pamt_depot_shrink(ULONG_MAX);
	pamt_depot_free_empty();
	return freed;
}

/**
 * tdx_pamt_drain_cpu() - free the cached pairs of an offline CPU
 * @cpu: a CPU that is dead and stays so during the call
 *
 * Context: process context, for example a CPU hotplug "dead" callback.
 */
void tdx_pamt_drain_cpu(unsigned int cpu)
{
	if (pamt.enabled)
		pamt_mag_drain_dead(cpu);
}

/**
 * tdx_pamt_set_idle_cap() - set the most idle pairs kept, and enforce it
 * @cap: the cap, in pairs
 *
 * Context: process context.
 */
void tdx_pamt_set_idle_cap(unsigned long cap)
{
	unsigned long now;

	WRITE_ONCE(pamt.idle_cap, cap);
	if (!pamt.enabled)
		return;
	now = pamt_shrink_idle_memory();
	if (now > cap) {
		now -= pamt_depot_shrink(now - cap);
		if (now > cap)
			pamt_shrink_sweep(now - cap, 2 * pamt.nr_slots,
					  PAMT_SHRINK_FOR_CAP, NULL);
	}
}

/**
 * tdx_pamt_idle_cap() - the current idle cap
 *
 * Return: the cap, in pairs.
 */
unsigned long tdx_pamt_idle_cap(void)
{
	return READ_ONCE(pamt.idle_cap);
}
