// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, shrink layer: giving idle memory back.
 *
 * Idle memory is the pairs of IDLE slots plus the free pairs in the
 * depot and in every CPU's magazines; the idle cap also counts, with the
 * arena, the free pairs in its chunks.  A last put queues its slot in the
 * idle index, a FIFO; reclaim takes the oldest entry, checks the slot with
 * a compare-and-exchange (it may have been revived meanwhile) and frees
 * its pair, so its cost is O(1) per pair whatever the table size.  The
 * shrinker gives a slot revived since it was queued (PAMT_SLOT_RECENT) a
 * second chance, CLOCK-style; the idle cap, enforced by put with at most
 * one REMOVE sequence and by a worker for the rest, does not.  Bounds:
 * Documentation/arch/x86/tdx-dpamt.rst, "Memory cost and the shrinker".
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

/*
 * With the arena: what idle memory plus the chunks' free pairs must
 * exceed for a put to call the worker, once its last trim was left over
 * the cap by chunks that hold a pair in use: that level plus a chunk.
 * 0 when it reached the cap.
 */
static unsigned long pamt_cap_mark;

/**
 * pamt_shrink_init() - allocate the idle index for @nr_slots slots
 * @nr_slots: entries of pamt.slots, dense: a u32 indexes 8 EiB of
 *	covered 2M ranges, however far apart they are
 *
 * Context: process context; may sleep.
 *
 * Return: 0 or -ENOMEM.
 */
int pamt_shrink_init(unsigned long nr_slots)
{
	struct pamt_idle_index *ix = &pamt.idle_index;

	spin_lock_init(&ix->lock);
	ix->ring = kvcalloc(nr_slots, sizeof(*ix->ring), GFP_KERNEL);
	ix->queued = kvcalloc(BITS_TO_LONGS(nr_slots), sizeof(long),
			      GFP_KERNEL);
	if (!ix->ring || !ix->queued) {
		pamt_shrink_exit();
		return -ENOMEM;
	}
	ix->size = nr_slots;
	ix->head = 0;
	ix->nr = 0;
	ix->pops = 0;
	pamt_cap_mark = 0;
	atomic_set(&pamt.deferred, 0);
	atomic_long_set(&pamt.defer_drain, 0);
	return 0;
}

/**
 * pamt_shrink_exit() - free the idle index
 */
void pamt_shrink_exit(void)
{
	kvfree(pamt.idle_index.ring);
	kvfree(pamt.idle_index.queued);
	pamt.idle_index.ring = NULL;
	pamt.idle_index.queued = NULL;
	pamt.idle_index.size = 0;
	pamt.idle_index.nr = 0;
}

/* Append @n entries to the tail of the idle index: one lock acquisition. */
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

/* Empty @pc's buffer into @batch, under its lock; returns how many. */
static unsigned int pamt_idle_take_buf(struct pamt_pcpu *pc, u32 *batch)
{
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&pc->idle_lock, flags);
	n = pc->idle_nr;
	memcpy(batch, pc->idle_buf, n * sizeof(*batch));
	WRITE_ONCE(pc->idle_nr, 0);	/* read racily by pamt_shrink_flush_cpu() */
	spin_unlock_irqrestore(&pc->idle_lock, flags);
	return n;
}

/*
 * Queue slot @idx in the idle index, unless it is queued already.  The
 * entry waits in this CPU's buffer; a full buffer moves to the index
 * with one acquisition of the index's lock, so the lock shared by all
 * CPUs is taken once per PAMT_IDLE_BATCH slots going idle.  The buffer's
 * own lock is per CPU and uncontended but for reclaim emptying it.
 * Outside any transition: the locks sleep on PREEMPT_RT.
 */
static void pamt_idle_push(unsigned long idx)
{
	struct pamt_pcpu *pc = raw_cpu_ptr(pamt.pcpu);
	u32 batch[PAMT_IDLE_BATCH];
	unsigned long flags;
	unsigned int n = 0;

	/* Fully ordered: the slot went IDLE before; see pamt_idle_pop(). */
	if (test_and_set_bit(idx, pamt.idle_index.queued))
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

/**
 * pamt_shrink_flush_cpu() - move a CPU's buffered idle slots to the index
 * @cpu: any possible CPU, running or not
 *
 * Context: any but hardirq, outside any transition.
 */
void pamt_shrink_flush_cpu(unsigned int cpu)
{
	struct pamt_pcpu *pc = per_cpu_ptr(pamt.pcpu, cpu);
	u32 batch[PAMT_IDLE_BATCH];
	unsigned int n;

	if (!READ_ONCE(pc->idle_nr))
		return;
	n = pamt_idle_take_buf(pc, batch);
	if (n)
		pamt_idle_append(batch, n);
}

/* Every CPU's buffered idle slots to the index: O(CPUs), when it is empty. */
static void pamt_idle_flush_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		pamt_shrink_flush_cpu(cpu);
}

/* Take the oldest entry out of the idle index; false if it is empty. */
static bool pamt_idle_pop(unsigned long *idx)
{
	struct pamt_idle_index *ix = &pamt.idle_index;
	unsigned long flags;
	bool found = false;

	/*
	 * The oldest entries are in the index; the newest wait in the CPUs'
	 * buffers.  An empty index takes them all at once, so the cost is
	 * one pass over the CPUs per index-full of entries.
	 */
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
		clear_bit(*idx, ix->queued);
		/*
		 * Clear, then read the slot; a put makes the slot IDLE, then
		 * tests the bit.  Either we see IDLE or the put queues it.
		 */
		smp_mb__after_atomic();
	}
	return found;
}

static bool pamt_shrink_reclaimable(unsigned long word)
{
	return pamt_slot_state(word) == PAMT_SLOT_IDLE &&
	       !(word & PAMT_SLOT_LEAKED);
}

/*
 * Move slot @idx from IDLE (the word in *@old) to REMOVING and free its
 * pair.  Returns 0; -EAGAIN with *@old updated if the word changed
 * meanwhile; or pamt_slot_remove()'s error, after which the slot goes
 * back into the index.
 */
static int pamt_shrink_remove(unsigned long idx, int *old)
{
	atomic_t *slot = &pamt.slots[idx];
	struct tdx_pamt_pair pair;
	int ret;

	/* RECENT stays in the word: a BUSY REMOVE restores it exactly. */
	ret = pamt_slot_remove(slot, idx, old, &pair);
	if (ret == -EAGAIN)
		return ret;
	/* The module held no pair: the slot is EMPTY, nothing to free. */
	if (ret == -ENOENT)
		return 0;
	/* Reset and freed with preemption on: the allocator sleeps on RT. */
	/*
	 * On failure queue it whatever the word says now: an evict may own
	 * it already, and its BUSY REMOVE would leave it IDLE unqueued.
	 */
	if (!ret)
		pamt_pair_release(&pair, PAMT_PAIR_TO_FREE);
	else
		pamt_idle_push(idx);
	return ret;
}

/*
 * Deal with one entry taken out of the index.  An IDLE slot is removed;
 * with @second_chance, one with PAMT_SLOT_RECENT loses the bit and goes
 * back to the tail instead.  A slot in use, empty or LEAKED is dropped
 * (its next last put queues it again); one that another CPU is removing
 * goes back, since a BUSY REMOVE makes it IDLE again.
 *
 * Return: 1 if a pair was freed; -EAGAIN if no REMOVE was attempted; the
 * error of the one REMOVE sequence attempted otherwise.
 */
static int pamt_reclaim_slot(unsigned long idx, bool second_chance)
{
	atomic_t *slot = &pamt.slots[idx];
	int old = atomic_read(slot);
	int ret;

	for (;;) {
		if (pamt_slot_state(old) == PAMT_SLOT_REMOVING) {
			pamt_idle_push(idx);
			return -EAGAIN;
		}
		if (!pamt_shrink_reclaimable(old))
			return -EAGAIN;
		if (second_chance && (old & PAMT_SLOT_RECENT)) {
			/* Losing the race to a get only costs a second chance. */
			atomic_try_cmpxchg(slot, &old, old & ~PAMT_SLOT_RECENT);
			pamt_idle_push(idx);
			return -EAGAIN;
		}
		ret = pamt_shrink_remove(idx, &old);
		if (ret != -EAGAIN)
			return ret ?: 1;
	}
}

/**
 * pamt_shrink_reclaim_slot() - REMOVE an IDLE slot that reclaim chose
 * @idx: the slot; a hint, checked with a compare-and-exchange
 *
 * No second chance.  The slot's entry, if queued, stays in the idle
 * index and is dropped when reclaim reaches it.
 *
 * Context: any but hardirq, outside any lock of the cache and any
 * transition; never sleeps.
 *
 * Return: 1 if its pair was freed; -EAGAIN if the slot was not IDLE; the
 * error of the REMOVE sequence otherwise.
 */
int pamt_shrink_reclaim_slot(unsigned long idx)
{
	return pamt_reclaim_slot(idx, false);
}

/*
 * Take entries out of the index until one REMOVE sequence was attempted,
 * at most *@budget entries (decremented per entry taken).  Never sleeps.
 *
 * Return: as pamt_reclaim_slot(), or 0 if the index (*@budget left) or
 * *@budget ran out first.
 */
static int pamt_reclaim_one(unsigned long *budget, bool second_chance)
{
	unsigned long idx = 0;	/* gcc cannot tell pamt_idle_pop() sets it */
	int ret;

	while (*budget) {
		if (!pamt_idle_pop(&idx))
			return 0;
		(*budget)--;
		ret = pamt_reclaim_slot(idx, second_chance);
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

/**
 * pamt_shrink_over_cap() - whether @more idle pairs would exceed the cap
 * @more: pairs about to become idle
 *
 * Return: true if idle memory plus @more is over the idle cap.
 */
bool pamt_shrink_over_cap(unsigned long more)
{
	return pamt_shrink_idle_memory(false) + more > READ_ONCE(pamt.idle_cap);
}

static bool pamt_shrink_over_cap_all(void)
{
	return pamt_shrink_idle_memory(true) > READ_ONCE(pamt.idle_cap);
}

/* Idle memory plus, with the arena, the free pairs in its chunks. */
static unsigned long pamt_shrink_held_memory(bool all)
{
	return pamt_shrink_idle_memory(all) + pamt_arena_free_pairs();
}

/**
 * pamt_shrink_refill_share() - free pairs one CPU may stock ahead of need
 *
 * A fair share of the room left below the idle cap: the room divided by
 * the online CPUs.  Stocking more would let one CPU's magazines push the
 * slots that go idle on other CPUs over the cap, and the cap would then
 * REMOVE pairs that the next get ADDs again.
 *
 * Return: pairs, 0 when idle memory is at or over the cap.
 */
unsigned long pamt_shrink_refill_share(void)
{
	unsigned long idle = pamt_shrink_idle_memory(false);
	unsigned long cap = READ_ONCE(pamt.idle_cap);

	return idle < cap ? (cap - idle) / num_online_cpus() : 0;
}

/**
 * pamt_shrink_reserve() - reserve room below the idle cap for free pairs
 * @want: free pairs about to enter the magazines
 *
 * Adds to pamt.held at once as many of @want as fit below the cap; CPUs
 * refilling at the same time each ask for their share of the room only
 * (pamt_shrink_refill_share()).  The caller gives back, with
 * pamt_shrink_unreserve(), what it reserved and did not add.
 *
 * Return: pairs reserved, at most @want.
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

/**
 * pamt_shrink_unreserve() - give back room pamt_shrink_reserve() reserved
 * @nr: pairs reserved and not added
 */
void pamt_shrink_unreserve(unsigned long nr)
{
	if (nr)
		pamt_held_add(-(long)nr);
}

/* Free one free pair, from the depot or this CPU's magazines. */
static bool pamt_shrink_free_cached(void)
{
	return pamt_depot_shrink(1) || pamt_mag_shrink_local(1);
}

static void pamt_defer(unsigned int what)
{
	atomic_or(what, &pamt.deferred);
	pamt_platform_defer();
}

/*
 * A slot went IDLE: with the arena, have the worker trim chunks if they
 * take held memory over the cap.  Only the worker does: a put's REMOVE
 * frees nothing while its chunk holds a pair in use.  At once past the
 * mark; else within PAMT_DEFER_LAZY_MS, as this put may have taken the
 * last pair in use out of a chunk.
 */
static void pamt_shrink_cap_chunks(void)
{
	unsigned long held;

	if (!pamt.arena)
		return;
	held = pamt_shrink_held_memory(false);
	if (held <= READ_ONCE(pamt.idle_cap))
		return;
	if (held > READ_ONCE(pamt_cap_mark))
		pamt_defer(PAMT_DEFER_CAP);
	else
		pamt_platform_defer_lazy();
}

/*
 * Idle memory grew by one with a slot going IDLE; bring it back within
 * the cap.  A free pair goes first (no SEAMCALL); then the oldest idle
 * slot among PAMT_CAP_POPS index entries.  At most one REMOVE sequence:
 * anything still over the cap after it, a BUSY module or PAMT_CAP_POPS
 * stale entries for example, is left to the worker: falling back on the
 * put's own slot would remove the most recently used one.
 */
static bool pamt_shrink_cap_put(void)
{
	unsigned long budget = PAMT_CAP_POPS;
	bool removed = false;
	int ret;

	if (likely(!pamt_shrink_over_cap(0))) {
		pamt_shrink_cap_chunks();
		return false;
	}
	if (!pamt_shrink_free_cached()) {
		ret = pamt_reclaim_one(&budget, false);
		if (ret == 1)
			pamt_stat_inc(CAP);
		/* One REMOVE sequence was issued, whatever its outcome. */
		removed = ret == 1 || (ret < 0 && ret != -EAGAIN);
	}
	if (pamt_shrink_over_cap(0))
		pamt_defer(PAMT_DEFER_CAP);
	else
		pamt_shrink_cap_chunks();
	return removed;
}

/**
 * pamt_shrink_idle_inc() - account a slot that went IDLE, enforce the cap
 * @idx: the slot, just moved from ACTIVE to IDLE by this put
 *
 * Called from put, in any context but hardirq, outside any transition.
 *
 * Return: true if it issued a PAMT.REMOVE (the put counts as put_slow).
 */
bool pamt_shrink_idle_inc(unsigned long idx)
{
	pamt_idle_add(1);
	pamt_idle_push(idx);
	return pamt_shrink_cap_put();
}

/*
 * Bring idle memory within the cap, in process context: free pairs first,
 * then idle slots oldest first, then other CPUs' magazines.  Stops after
 * PAMT_SHRINK_MAX_BUSY failed removals.
 */
static void pamt_shrink_cap_trim_once(unsigned long *fails)
{
	unsigned long budget;
	int ret;

	while (pamt_shrink_over_cap_all() && *fails < PAMT_SHRINK_MAX_BUSY) {
		if (pamt_shrink_free_cached())
			continue;
		budget = PAMT_RESCHED_POPS;
		ret = pamt_reclaim_one(&budget, false);
		if (ret == 1)
			pamt_stat_inc(CAP);
		else if (ret < 0)
			(*fails)++;
		else if (budget)
			break;		/* the index is empty */
		cond_resched();
	}
}

/*
 * With the arena, bring idle memory plus the chunks' free pairs within
 * the cap: empty the chunks whose every pair out is idle, sparsest
 * first, REMOVEing their slots (pamt_arena_shrink()); if free pairs in
 * magazines keep some chunk, those go back to their chunks, every CPU's,
 * and once more.  What is left over the cap is in chunks that hold a
 * pair in use (a range, a reserve), or behind REMOVEs that stayed BUSY:
 * the mark then keeps puts from calling the worker again until a chunk's
 * worth more.
 */
static void pamt_shrink_cap_trim_chunks(void)
{
	unsigned long held, cap;
	bool drained = false;

	for (;;) {
		held = pamt_shrink_held_memory(true);
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
		pamt_depot_shrink(ULONG_MAX);
		pamt_platform_drain_cpus(ULONG_MAX);
		drained = true;
	}
	WRITE_ONCE(pamt_cap_mark, held ? held + PAMT_ARENA_PAIRS : 0);
}

static void pamt_shrink_cap_trim(void)
{
	unsigned long fails = 0, idle, cap;

	might_sleep();
	/* Chunks first: a REMOVE there gives memory back. */
	if (pamt.arena)
		pamt_shrink_cap_trim_chunks();
	pamt_shrink_cap_trim_once(&fails);
	if (!pamt_shrink_over_cap_all() || fails >= PAMT_SHRINK_MAX_BUSY)
		return;
	/* What is left is in other CPUs' magazines. */
	idle = pamt_shrink_idle_memory(true);
	cap = READ_ONCE(pamt.idle_cap);
	if (idle > cap && pamt_cached_pairs())
		pamt_platform_drain_cpus(idle - cap);
}

/**
 * pamt_shrink_deferred() - the work put and the shrinker left over
 *
 * Frees the magazine pairs of other CPUs the shrinker asked for (with
 * the arena, and empties the chunks they kept), then brings idle memory
 * within the cap.
 *
 * Context: process context; may sleep.  The kernel's glue runs it from a
 * work item (pamt_platform_defer()).
 */
void pamt_shrink_deferred(void)
{
	unsigned long nr;

	might_sleep();
	atomic_set(&pamt.deferred, 0);
	nr = atomic_long_xchg(&pamt.defer_drain, 0);
	if (!pamt.enabled)
		return;
	if (nr) {
		pamt_platform_drain_cpus(nr);
		/* With the arena, the chunks those pairs were keeping. */
		if (pamt.arena)
			pamt_arena_shrink(nr, false);
	}
	pamt_shrink_cap_trim();
}

/**
 * pamt_shrink_remove_all_idle() - REMOVE every IDLE slot, referenced or not
 *
 * Goes through the idle index once, from oldest to newest: a slot whose
 * REMOVE stays BUSY is queued again, and left for next time.
 *
 * Context: process context; may sleep.
 *
 * Return: slots whose pair was freed.
 */
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
		while (budget) {
			ret = pamt_reclaim_one(&budget, false);
			/*
			 * 0 with budget left: the index is empty.  0 with none:
			 * the budget went on entries with nothing to remove
			 * (slots since evicted, or in use); go on.
			 */
			if (!ret) {
				if (budget)
					return freed;
				break;
			}
			if (ret == 1) {
				pamt_stat_inc(SHRINK);
				freed++;
			}
		}
		cond_resched();
	}
	return freed;
}

/*
 * With the arena, memory goes back a chunk at a time (pamt_arena_shrink());
 * the oldest idle slots are REMOVEd only while fallback pairs, pages of
 * their own, are out, and count as what those gave back.  *@budget is
 * set to what is left of @nr once the memory given back and the index
 * entries looked at are counted as processed.
 */
static unsigned long pamt_shrink_scan_arena(unsigned long nr,
					    unsigned long *budget)
{
	unsigned long freed, before, now, fails = 0;
	int ret;

	freed = pamt_arena_shrink(nr, false);
	/* Each index entry looked at below counts as processed. */
	*budget = nr - min(freed, nr);
	before = pamt_arena_loose();
	if (!*budget || !before)
		return freed;
	do {
		ret = pamt_reclaim_one(budget, true);
		if (ret == 1)
			pamt_stat_inc(SHRINK);
		else if (ret < 0)
			fails++;
		now = pamt_arena_loose();
		freed += before - min(before, now);
		before = now;
	} while (ret && *budget && now && fails < PAMT_SHRINK_MAX_BUSY);
	return freed;
}

/**
 * tdx_pamt_shrink_count() - idle memory the shrinker could free
 *
 * Return: in pairs' worth of memory (two pages each): IDLE slots plus
 * the free pairs in the depot and in every CPU's magazines; with the
 * arena, the chunks that reclaim could empty (pamt_arena_reclaimable())
 * plus, at most, the fallback pairs; 0 when disabled.
 */
unsigned long tdx_pamt_shrink_count(void)
{
	if (!pamt.enabled)
		return 0;
	if (pamt.arena)
		return pamt_arena_reclaimable(false) +
		       min(pamt_arena_loose(), pamt_shrink_idle_memory(true));
	return pamt_shrink_idle_memory(true);
}

/**
 * tdx_pamt_shrink_scan() - free idle pairs, processing up to @nr_to_scan
 * @nr_to_scan: most index entries and cached pairs to process
 * @nr_scanned: if not NULL, set to those processed: the index entries
 *	looked at (second chances, stale entries and failed REMOVEs
 *	included) plus the cached pairs freed
 *
 * With the arena, see pamt_shrink_scan_arena(): pairs freed are pairs'
 * worth of memory given back to the page allocator, two pages each.
 *
 * IDLE slots go first, oldest first in the idle index; one revived since
 * it was queued (PAMT_SLOT_RECENT) loses the bit and goes back to the
 * tail instead, CLOCK's second chance: one more look at most.  Then depot
 * pairs; then this CPU's magazines.  Other CPUs' magazines are the
 * worker's: it has those CPUs free what is still wanted.
 * The work is O(@nr_to_scan); *@nr_scanned falls short of @nr_to_scan only
 * when nothing more can be done here: the index and this CPU's pairs ran
 * out, or PAMT_SHRINK_MAX_BUSY REMOVE sequences failed.  Never sleeps.
 *
 * Return: pairs freed.
 */
unsigned long tdx_pamt_shrink_scan(unsigned long nr_to_scan,
				   unsigned long *nr_scanned)
{
	unsigned long freed = 0, fails = 0, budget = nr_to_scan, n, m;
	int ret;

	if (!pamt.enabled)
		goto out;
	if (pamt.arena) {
		freed = pamt_shrink_scan_arena(nr_to_scan, &budget);
		/* Chunks with pairs in other CPUs' magazines: the worker. */
		if (budget && pamt_cached_pairs()) {
			atomic_long_add(budget, &pamt.defer_drain);
			pamt_platform_defer();
		}
		goto trace;
	}
	while (budget && fails < PAMT_SHRINK_MAX_BUSY) {
		ret = pamt_reclaim_one(&budget, true);
		if (!ret)
			break;
		if (ret < 0) {
			fails++;
			continue;
		}
		pamt_stat_inc(SHRINK);
		freed++;
	}
	n = pamt_depot_shrink(budget);
	while (budget > n && (m = pamt_mag_shrink_local(budget - n)))
		n += m;
	freed += n;
	budget -= n;
	m = pamt_cached_pairs();
	if (budget && m) {
		atomic_long_add(min(budget, m), &pamt.defer_drain);
		pamt_platform_defer();
	}
trace:
	trace_tdx_pamt_shrink(nr_to_scan, freed);
out:
	if (nr_scanned)
		*nr_scanned = nr_to_scan - budget;
	return freed;
}

/**
 * pamt_shrink_count_objects() - the shrinker's count_objects
 * @s: the shrinker
 * @sc: the request
 *
 * Return: tdx_pamt_shrink_count(), or SHRINK_EMPTY for none.
 */
unsigned long pamt_shrink_count_objects(struct shrinker *s,
					struct shrink_control *sc)
{
	return tdx_pamt_shrink_count() ?: SHRINK_EMPTY;
}

/**
 * pamt_shrink_scan_objects() - the shrinker's scan_objects
 * @s: the shrinker
 * @sc: the request: reads nr_to_scan, sets nr_scanned
 *
 * Return: pairs freed, 0 included; SHRINK_STOP if none was freed and the
 * scan processed less than asked, as nothing more can be done in this
 * context: reclaim would only call again for the same answer.
 */
unsigned long pamt_shrink_scan_objects(struct shrinker *s,
				       struct shrink_control *sc)
{
	unsigned long freed;

	freed = tdx_pamt_shrink_scan(sc->nr_to_scan, &sc->nr_scanned);
	if (!freed && sc->nr_scanned < sc->nr_to_scan)
		return SHRINK_STOP;
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
	freed += pamt_platform_drain_cpus(ULONG_MAX);
	freed += pamt_depot_shrink(ULONG_MAX);
	pamt_depot_free_empty();
	/* Home chunks of processes: back to the page allocator if empty. */
	pamt_arena_unhome(true);
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
	if (pamt.enabled) {
		pamt_shrink_flush_cpu(cpu);
		pamt_mag_drain_dead(cpu);
	}
}

/**
 * tdx_pamt_set_idle_cap() - set the most idle pairs kept, and enforce it
 * @cap: the cap, in pairs
 *
 * Context: process context; may sleep.
 */
void tdx_pamt_set_idle_cap(unsigned long cap)
{
	WRITE_ONCE(pamt.idle_cap, cap);
	WRITE_ONCE(pamt_cap_mark, 0);
	if (pamt.enabled)
		pamt_shrink_cap_trim();
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
