// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, shrink layer: the idle index, the idle cap, the
 * shrinker and the drains.  See Documentation/arch/x86/tdx-dpamt.rst,
 * "Memory cost and the shrinker".
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/string.h>
#include "pamt_internal.h"
#include "pamt_trace.h"

#define PAMT_CAP_POPS		8	/* index entries a put may look at */
#define PAMT_SHRINK_MAX_BUSY	8	/* failed removals before a scan stops */
#define PAMT_RESCHED_POPS	32	/* entries between two cond_resched() */
#define PAMT_LOOSE_SKIPS	256	/* entries a shrinker's pop may pass over */

/*
 * With the arena, held memory a put must exceed to wake the worker after
 * a trim that chunks with a pair in use left over the cap; 0 otherwise.
 * The worker writes it (WRITE_ONCE()), puts read it without a lock
 * (READ_ONCE()): a stale mark wakes the worker once too often or once
 * too late, and the next put looks again.
 */
static unsigned long pamt_cap_mark;

int pamt_shrink_init(unsigned long nr_slots)
{
	struct pamt_idle_index *ix = &pamt.idle_index;

	spin_lock_init(&ix->lock);
	ix->ring = kvcalloc(nr_slots, sizeof(*ix->ring), GFP_KERNEL);
	if (!ix->ring)
		return -ENOMEM;
	ix->size = nr_slots;
	ix->head = 0;
	ix->nr = 0;
	ix->pops = 0;
	pamt_cap_mark = 0;
	atomic_set(&pamt.deferred, 0);
	atomic_long_set(&pamt.defer_drain, 0);
	return 0;
}

void pamt_shrink_exit(void)
{
	kvfree(pamt.idle_index.ring);
	pamt.idle_index.ring = NULL;
	pamt.idle_index.size = 0;
	pamt.idle_index.nr = 0;
}

static void pamt_idle_append(const u32 *batch, unsigned int n)
{
	struct pamt_idle_index *ix = &pamt.idle_index;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&ix->lock, flags);
	pamt_stat_inc(GLOBAL_LOCK);
	for (i = 0; i < n; i++) {
		if (WARN_ON_ONCE(ix->nr >= ix->size))
			break;
		ix->ring[(ix->head + ix->nr) % ix->size] = batch[i];
		WRITE_ONCE(ix->nr, ix->nr + 1);
	}
	spin_unlock_irqrestore(&ix->lock, flags);
}

/* Batched per CPU: the index's lock is taken once per PAMT_IDLE_BATCH. */
static void pamt_idle_push(unsigned long idx)
{
	struct pamt_pcpu *pc = raw_cpu_ptr(pamt.pcpu);
	u32 batch[PAMT_IDLE_BATCH];
	unsigned long flags;
	unsigned int n = 0;

	/* Fully ordered: the slot went IDLE before; see pamt_idle_pop(). */
	if (test_and_set_bit(PAMT_QUEUED_BIT, &pamt.slots[idx].bits))
		return;
	spin_lock_irqsave(&pc->idle_lock, flags);
	pc->idle_buf[pc->idle_nr] = idx;
	if (pc->idle_nr + 1 < PAMT_IDLE_BATCH) {
		WRITE_ONCE(pc->idle_nr, pc->idle_nr + 1);
	} else {
		n = PAMT_IDLE_BATCH;
		memcpy(batch, pc->idle_buf, n * sizeof(*batch));
		WRITE_ONCE(pc->idle_nr, 0);
	}
	spin_unlock_irqrestore(&pc->idle_lock, flags);
	if (n)
		pamt_idle_append(batch, n);
}

/* Any possible CPU, running or not. */
static void pamt_shrink_flush_cpu(unsigned int cpu)
{
	struct pamt_pcpu *pc = per_cpu_ptr(pamt.pcpu, cpu);
	u32 batch[PAMT_IDLE_BATCH];
	unsigned long flags;
	unsigned int n;

	if (!READ_ONCE(pc->idle_nr))
		return;
	spin_lock_irqsave(&pc->idle_lock, flags);
	n = pc->idle_nr;
	memcpy(batch, pc->idle_buf, n * sizeof(*batch));
	WRITE_ONCE(pc->idle_nr, 0);
	spin_unlock_irqrestore(&pc->idle_lock, flags);
	if (n)
		pamt_idle_append(batch, n);
}

static void pamt_idle_flush_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		pamt_shrink_flush_cpu(cpu);
}

static bool pamt_idle_pop(unsigned long *idx)
{
	struct pamt_idle_index *ix = &pamt.idle_index;
	unsigned long flags;
	bool found = false;

	/* The newest entries wait in the CPUs' buffers: one pass per ring. */
	if (!READ_ONCE(ix->nr)) {
		pamt_idle_flush_all();
		if (!READ_ONCE(ix->nr))
			return false;
	}
	spin_lock_irqsave(&ix->lock, flags);
	pamt_stat_inc(GLOBAL_LOCK);
	if (ix->nr) {
		*idx = ix->ring[ix->head];
		ix->head = (ix->head + 1) % ix->size;
		WRITE_ONCE(ix->nr, ix->nr - 1);
		WRITE_ONCE(ix->pops, ix->pops + 1);
		found = true;
	}
	spin_unlock_irqrestore(&ix->lock, flags);
	if (found) {
		clear_bit(PAMT_QUEUED_BIT, &pamt.slots[*idx].bits);
		/*
		 * Clear, then read the slot; a put makes the slot IDLE, then
		 * tests the bit.  Either we see IDLE or the put queues it.
		 */
		smp_mb__after_atomic();
	}
	return found;
}

/*
 * REMOVE slot @idx if IDLE; with @loose only if it holds a fallback pair.
 * Return: 1 if a pair was freed; 0 if it holds a chunk's pair (@loose),
 * queued again; -EAGAIN if no REMOVE was attempted; else the REMOVE
 * sequence's error.
 */
static int pamt_reclaim_slot(unsigned long idx, bool loose)
{
	atomic_t *slot = &pamt.slots[idx].word;
	int old = atomic_read(slot);
	struct tdx_pamt_pair pair;
	int ret;

	for (;;) {
		/* Another CPU's REMOVE may stay BUSY and leave it IDLE. */
		if (pamt_slot_state(old) == PAMT_SLOT_REMOVING) {
			pamt_idle_push(idx);
			return -EAGAIN;
		}
		/* In use, empty or LEAKED: its next last put queues it. */
		if (pamt_slot_state(old) != PAMT_SLOT_IDLE ||
		    (old & PAMT_SLOT_LEAKED))
			return -EAGAIN;
		if (loose && !test_bit(PAMT_LOOSE_BIT, &pamt.slots[idx].bits)) {
			pamt_idle_push(idx);
			return 0;
		}
		ret = pamt_slot_remove(slot, idx, &old, &pair);
		if (ret != -EAGAIN)
			break;
	}
	/* The module held no pair: the slot is EMPTY, nothing came back. */
	if (ret == -ENOENT)
		return ret;
	/* Freed with preemption on: the allocator sleeps on RT. */
	if (!ret) {
		pamt_pair_release(&pair, PAMT_PAIR_TO_FREE);
		return 1;
	}
	/* Whatever the word says now: a BUSY REMOVE left it IDLE. */
	pamt_idle_push(idx);
	return ret;
}

/* For the arena: pamt_reclaim_slot(), whatever pair the slot holds. */
int pamt_shrink_reclaim_slot(unsigned long idx)
{
	return pamt_reclaim_slot(idx, false);
}

/*
 * Pop entries until one REMOVE sequence was attempted, at most *@budget
 * entries, not counting those passed over for a chunk's pair: at most
 * PAMT_LOOSE_SKIPS of them.  Return: as pamt_reclaim_slot(), or 0 if the
 * index or a budget ran out first.
 */
static int pamt_reclaim_one(unsigned long *budget, bool loose)
{
	unsigned long idx = 0;	/* gcc cannot tell pamt_idle_pop() sets it */
	unsigned int skips = PAMT_LOOSE_SKIPS;
	int ret;

	while (*budget) {
		if (!pamt_idle_pop(&idx))
			return 0;
		ret = pamt_reclaim_slot(idx, loose);
		if (!ret) {
			if (!--skips)
				return 0;
			continue;
		}
		(*budget)--;
		if (ret != -EAGAIN)
			return ret;
	}
	return 0;
}

/*
 * Idle memory: with @all, every CPU's unfolded change read (the worker,
 * the shrinker); else this CPU's only, short by the others': the slack.
 */
static unsigned long pamt_shrink_idle_memory(bool all)
{
	long held = atomic_long_read(&pamt.held);
	unsigned int cpu;

	if (!all)
		held += this_cpu_read(pamt.pcpu->stat[PAMT_PCPU_HELD]);
	else
		for_each_possible_cpu(cpu)
			held += READ_ONCE(per_cpu_ptr(pamt.pcpu, cpu)->stat[PAMT_PCPU_HELD]);
	return held > 0 ? held : 0;
}

/* IDLE slots holding a fallback pair; racy. */
static unsigned long pamt_shrink_loose_idle(void)
{
	unsigned int cpu;
	long n = 0;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(pamt.pcpu, cpu)->stat[PAMT_PCPU_LOOSE_IDLE]);
	return max(n, 0L);
}

bool pamt_shrink_over_cap(unsigned long more)
{
	return pamt_shrink_idle_memory(false) + more > READ_ONCE(pamt.idle_cap);
}

static bool pamt_shrink_over_cap_all(void)
{
	return pamt_shrink_idle_memory(true) > READ_ONCE(pamt.idle_cap);
}

/*
 * Free pairs one CPU may stock: more than its share of the room below the
 * cap would push other CPUs' idle slots over it, to be ADDed again.
 */
unsigned long pamt_shrink_refill_share(void)
{
	unsigned long idle = pamt_shrink_idle_memory(false);
	unsigned long cap = READ_ONCE(pamt.idle_cap);

	return idle < cap ? (cap - idle) / num_online_cpus() : 0;
}

/*
 * Counted in this CPU's part of idle memory at once (folded into pamt.held
 * per PAMT_HELD_BATCH); CPUs refilling together each ask for their share
 * only.  pamt_shrink_unreserve() gives back what was not added.
 */
unsigned long pamt_shrink_reserve(unsigned long want)
{
	unsigned long idle = pamt_shrink_idle_memory(false);
	unsigned long cap = READ_ONCE(pamt.idle_cap);

	want = min(want, idle < cap ? cap - idle : 0);
	if (want)
		pamt_held_add(want);
	return want;
}

void pamt_shrink_unreserve(unsigned long nr)
{
	if (nr)
		pamt_held_add(-(long)nr);
}

/* Wake the cap's worker, once: every put over the cap calls this. */
static void pamt_defer_cap(void)
{
	/* Idle memory, then the flag: pairs with pamt_shrink_deferred()'s xchg. */
	smp_mb();
	if (atomic_read(&pamt.deferred) || atomic_xchg(&pamt.deferred, 1))
		return;
	pamt_platform_defer();
}

/*
 * Chunks over the cap are the worker's: a put's REMOVE frees nothing while
 * its chunk holds a pair in use.  At once a chunk over the cap or the mark,
 * else lazily, since this put may have freed a chunk's last pair in use.
 */
static void pamt_shrink_cap_chunks(void)
{
	unsigned long held, cap = READ_ONCE(pamt.idle_cap);

	if (!pamt.arena)
		return;
	held = pamt_shrink_idle_memory(false) + pamt_arena_free_pairs();
	if (held <= cap)
		return;
	if (held > max(READ_ONCE(pamt_cap_mark), cap + PAMT_ARENA_PAIRS))
		pamt_defer_cap();
	else
		pamt_platform_defer_lazy();
}

/*
 * A put made slot @idx IDLE: queue it, unless still queued from before.
 * @loose is its LOOSE bit from before that put.
 * Return: true if it issued a REMOVE.
 */
bool pamt_shrink_idle_inc(unsigned long idx, bool loose)
{
	unsigned long budget = PAMT_CAP_POPS;
	bool removed = false;
	int ret;

	pamt_idle_count(1, loose);
	pamt_idle_push(idx);
	if (likely(!pamt_shrink_over_cap(0))) {
		pamt_shrink_cap_chunks();
		return false;
	}
	/*
	 * A free pair, else at most one REMOVE of the oldest idle slot; the
	 * rest is the worker's, as this put's own slot is the most recent.
	 */
	if (!pamt_mag_shrink_local(1)) {
		ret = pamt_reclaim_one(&budget, false);
		if (ret == 1)
			pamt_stat_inc(CAP);
		removed = ret;	/* 0: no REMOVE within the budget */
	}
	if (pamt_shrink_over_cap(0))
		pamt_defer_cap();
	else
		pamt_shrink_cap_chunks();
	return removed;
}

/*
 * Empty the chunks whose every pair out is idle; if magazines keep a
 * chunk, drain them all once and retry.  What stays over the cap is held
 * by chunks with a pair in use: the mark spares puts until a chunk more.
 */
static void pamt_shrink_cap_trim_chunks(void)
{
	unsigned long held, cap;
	bool drained = false;

	for (;;) {
		held = pamt_shrink_idle_memory(true) + pamt_arena_free_pairs();
		cap = READ_ONCE(pamt.idle_cap);
		if (held <= cap) {
			held = 0;
			break;
		}
		if (pamt_arena_shrink(held - cap, true))
			continue;
		if (drained || !pamt_cached_pairs() ||
		    !pamt_arena_reclaimable(true))
			break;
		pamt_platform_drain_cpus(ULONG_MAX);
		drained = true;
	}
	WRITE_ONCE(pamt_cap_mark, held ? held + PAMT_ARENA_PAIRS : 0);
}

/*
 * With the arena chunks first; then free pairs, idle slots and other CPUs'
 * magazines.
 */
static void pamt_shrink_cap_trim(void)
{
	unsigned long fails = 0, budget, idle, cap;
	int ret;

	might_sleep();
	if (pamt.arena)
		pamt_shrink_cap_trim_chunks();
	while (pamt_shrink_over_cap_all() && fails < PAMT_SHRINK_MAX_BUSY) {
		cond_resched();
		if (pamt_mag_shrink_local(1))
			continue;
		budget = PAMT_RESCHED_POPS;
		ret = pamt_reclaim_one(&budget, false);
		if (ret == 1)
			pamt_stat_inc(CAP);
		else if (ret < 0)
			fails++;
		else if (budget)
			break;		/* the index is empty */
	}
	/* What is left over the cap is in other CPUs' magazines. */
	idle = pamt_shrink_idle_memory(true);
	cap = READ_ONCE(pamt.idle_cap);
	if (fails < PAMT_SHRINK_MAX_BUSY && idle > cap &&
	    pamt_cached_pairs())
		pamt_platform_drain_cpus(idle - cap);
}

/* The work item: other CPUs' pairs the shrinker asked for, the cap. */
void pamt_shrink_deferred(void)
{
	unsigned long nr;

	might_sleep();
	/* The flag, then idle memory: see pamt_defer_cap(). */
	atomic_xchg(&pamt.deferred, 0);
	nr = atomic_long_xchg(&pamt.defer_drain, 0);
	if (!pamt.enabled)
		return;
	if (nr) {
		pamt_platform_drain_cpus(nr);
		if (pamt.arena)
			pamt_arena_shrink(nr, false);
	}
	pamt_shrink_cap_trim();
}

/* One pass over the index; a slot that stays BUSY is queued again. */
unsigned long pamt_shrink_remove_all_idle(void)
{
	unsigned long n, freed = 0, budget;
	int ret;

	might_sleep();
	pamt_idle_flush_all();
	n = READ_ONCE(pamt.idle_index.nr);
	while (n) {
		budget = min_t(unsigned long, n, PAMT_RESCHED_POPS);
		n -= budget;
		ret = pamt_reclaim_one(&budget, false);
		if (!ret && budget)
			break;		/* the index is empty */
		n += budget;
		if (ret == 1) {
			pamt_stat_inc(SHRINK);
			freed++;
		}
		cond_resched();
	}
	return freed;
}

/* In pairs' worth of memory, as tdx_pamt_shrink_scan() frees it. */
unsigned long tdx_pamt_shrink_count(void)
{
	if (!pamt.enabled)
		return 0;
	if (pamt.arena)
		return pamt_arena_reclaimable(false) + pamt_shrink_loose_idle();
	return pamt_shrink_idle_memory(true);
}

/*
 * Idle slots oldest first, then this CPU's free pairs; other CPUs' go to
 * the worker.  With the arena, chunks first; then idle slots alone only
 * if they hold a fallback pair.
 * *@nr_scanned (index entries and pairs processed) falls short only when
 * nothing more can be done here.  Never sleeps.
 */
unsigned long tdx_pamt_shrink_scan(unsigned long nr_to_scan,
				   unsigned long *nr_scanned)
{
	unsigned long freed = 0, fails = 0, budget = nr_to_scan, n, m;
	unsigned long loose = ULONG_MAX;
	int ret;

	if (!pamt.enabled)
		goto out;
	if (pamt.arena) {
		freed = pamt_arena_shrink(nr_to_scan, false);
		budget -= min(freed, budget);
		loose = pamt_shrink_loose_idle();
	}
	while (budget && loose && fails < PAMT_SHRINK_MAX_BUSY) {
		ret = pamt_reclaim_one(&budget, pamt.arena);
		if (!ret)
			break;
		if (ret < 0) {
			fails++;
			continue;
		}
		pamt_stat_inc(SHRINK);
		freed++;
		loose--;
	}
	/* With the arena, pamt_arena_shrink() took them into their chunks. */
	while (!pamt.arena && budget && (n = pamt_mag_shrink_local(budget))) {
		freed += n;
		budget -= n;
	}
	m = pamt_cached_pairs();
	if (budget && m) {
		atomic_long_add(min(budget, m), &pamt.defer_drain);
		pamt_platform_defer();
	}
	trace_tdx_pamt_shrink(nr_to_scan, freed);
out:
	if (nr_scanned)
		*nr_scanned = nr_to_scan - budget;
	return freed;
}

unsigned long pamt_shrink_count_objects(struct shrinker *s,
					struct shrink_control *sc)
{
	return tdx_pamt_shrink_count() ?: SHRINK_EMPTY;
}

unsigned long pamt_shrink_scan_objects(struct shrinker *s,
				       struct shrink_control *sc)
{
	unsigned long freed;

	freed = tdx_pamt_shrink_scan(sc->nr_to_scan, &sc->nr_scanned);
	/* Fell short and freed nothing: another call would do the same. */
	if (!freed && sc->nr_scanned < sc->nr_to_scan)
		return SHRINK_STOP;
	return freed;
}

/* Every idle slot's pair and every cached pair.  Return: pairs freed. */
unsigned long tdx_pamt_drain(void)
{
	unsigned long freed;

	might_sleep();
	if (!pamt.enabled)
		return 0;
	freed = pamt_shrink_remove_all_idle();
	freed += pamt_platform_drain_cpus(ULONG_MAX);
	pamt_arena_unhome(true);
	return freed;
}

/* @cpu is dead and stays so during the call. */
void tdx_pamt_drain_cpu(unsigned int cpu)
{
	if (pamt.enabled) {
		pamt_shrink_flush_cpu(cpu);
		pamt_mag_drain_dead(cpu);
	}
}

unsigned long tdx_pamt_idle_cap(void)
{
	return READ_ONCE(pamt.idle_cap);
}
