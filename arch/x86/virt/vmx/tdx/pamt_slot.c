// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, slot layer: one word per 2M range.
 *
 * A get on an installed slot is one atomic add on the word, a put one
 * compare-and-exchange, and nothing else.  Only the 0->1 step on an EMPTY
 * slot and the removal of an IDLE slot issue a SEAMCALL; one CPU owns such
 * a step by setting PAMT_SLOT_TRANSIT, and everybody else either waits
 * (get) or backs off (evict, shrinker).  The owner holds the slot for one
 * SEAMCALL with preemption off, also on PREEMPT_RT, and takes nothing
 * inside that sleeps there: get takes its pair before, and a removed pair
 * is disposed of after.  The owner publishes by adding, so that the counts
 * of the gets waiting meanwhile stay in the word.  A BUSY answer puts the
 * old word back before the backoff, which runs with preemption on.  The
 * states, their transitions and the lock order are in
 * Documentation/arch/x86/tdx-dpamt.rst; the states are model-checked by
 * tools/testing/pamt/model/pamt_slot.pml.
 */
#include <linux/bug.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kvm_types.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/processor.h>
#include <linux/timekeeping.h>
#include "pamt_internal.h"
#include "pamt_trace.h"

/* The far table of a cache with no far block, and of no cache at all. */
static struct pamt_far pamt_far_none = { .key = PAMT_FAR_EMPTY };

struct pamt_cache pamt = { .far = &pamt_far_none };

/**
 * pamt_far_reset() - free the far table, point at the empty one
 *
 * Every lookup outside the flat window then misses.
 */
void pamt_far_reset(void)
{
	if (pamt.far != &pamt_far_none)
		kvfree(pamt.far);
	pamt.far = &pamt_far_none;
	pamt.far_mask = 0;
	pamt.far_mul = 0;
	pamt.far_shift = 0;
	pamt.far_probes = 0;
}

/**
 * pamt_status_errno() - map a TDX status to an errno
 * @status: the value a PAMT SEAMCALL returned
 *
 * The one place where TDX status codes become errnos.
 *
 * Return: 0, -EBUSY for TDX_OPERAND_BUSY, -EIO for anything else.
 */
int pamt_status_errno(u64 status)
{
	switch (status & TDX_PAMT_STATUS_MASK) {
	case TDX_PAMT_SUCCESS:
		return 0;
	case TDX_PAMT_OPERAND_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

static bool pamt_status_busy(u64 status)
{
	return (status & TDX_PAMT_STATUS_MASK) == TDX_PAMT_OPERAND_BUSY;
}

static bool pamt_status_sw_error(u64 status)
{
	return (status & TDX_PAMT_SW_ERROR) == TDX_PAMT_SW_ERROR;
}

/* Off (no Dynamic PAMT): every call succeeds; on: an uncovered pfn. */
static int pamt_slot_miss(void)
{
	return pamt.enabled ? -EINVAL : 0;
}

/* The flat index of @pfn; >= pamt.nr_flat (0 while off) if not flat. */
static unsigned long pamt_slot_index(unsigned long pfn)
{
	return pfn / TDX_PAMT_PAGES_PER_SLOT - pamt.base_idx;
}

/* One PAMT SEAMCALL, counted and traced. */
static u64 pamt_slot_call_raw(unsigned int leaf, unsigned long base,
			      struct tdx_pamt_pair *pair)
{
	u64 status;

	if (leaf == TDH_PHYMEM_PAMT_ADD) {
		pamt_stat_inc(ADD);
		status = pamt.ops->add(base, pair);
		trace_tdx_pamt_add(base, pair, status);
	} else {
		pamt_stat_inc(REMOVE);
		status = pamt.ops->remove(base, pair);
		trace_tdx_pamt_remove(base, pair, status);
	}
	return status;
}

#ifdef CONFIG_LOCKDEP
static struct lock_class_key pamt_transit_key;
/* A preemption-off section for lockdep: only raw locks may nest inside. */
struct lockdep_map pamt_transit_map = {
	.name = "pamt_transit",
	.key = &pamt_transit_key,
	.wait_type_outer = LD_WAIT_FREE,
	.wait_type_inner = LD_WAIT_SPIN,
};
#endif

/*
 * Issue one PAMT SEAMCALL with IRQs off around it and nothing else.  While
 * a CPU falls back to serialising, go through pamt.seamcall_lock; the
 * per-CPU in-flight count lets that CPU wait for calls already started.
 *
 * The lock is a raw_spinlock_t: it is taken inside a transition, with
 * preemption off, also on PREEMPT_RT, where a spinlock_t would sleep.  The
 * kernel's queued spinlock hands it over in FIFO order, so a waiter waits
 * for at most one SEAMCALL of each CPU queued ahead of it, and it is taken
 * with IRQs on, which are off only around the one SEAMCALL it guards.  So
 * it is never taken from softirq, which could have interrupted its holder
 * or a waiter on this CPU: there the call answers BUSY without running.
 */
static u64 pamt_slot_call(unsigned int leaf, unsigned long base,
			  struct tdx_pamt_pair *pair)
{
	unsigned long flags;
	u64 status;

	/*
	 * IRQs off while counted: a softirq that ran here would keep this
	 * count up while the fallback waits for it.  A SEAMCALL runs with
	 * IRQs blocked anyway.
	 */
	local_irq_save(flags);
	this_cpu_inc(pamt.pcpu->in_flight);
	/* Count, then look; pamt_slot_backoff() sets, then waits. */
	smp_mb();
	if (likely(!atomic_read(&pamt.serializing))) {
		status = pamt_slot_call_raw(leaf, base, pair);
		this_cpu_dec(pamt.pcpu->in_flight);
		local_irq_restore(flags);
		return status;
	}
	this_cpu_dec(pamt.pcpu->in_flight);
	local_irq_restore(flags);

	if (in_serving_softirq())
		return TDX_PAMT_OPERAND_BUSY;
	raw_spin_lock(&pamt.seamcall_lock);
	pamt_stat_inc(GLOBAL_LOCK);
	local_irq_save(flags);
	status = pamt_slot_call_raw(leaf, base, pair);
	local_irq_restore(flags);
	raw_spin_unlock(&pamt.seamcall_lock);
	return status;
}

/*
 * Wait, bounded, for PAMT calls other CPUs started before they saw
 * pamt.serializing; each is one SEAMCALL with IRQs off, so the wait is
 * short.  Called with preemption on (or as the caller has it), IRQs on
 * and no lock held.  This CPU's own count is skipped: a context we
 * interrupted is not inside a SEAMCALL, since those run with IRQs off.
 */
static void pamt_slot_wait_in_flight(void)
{
	u64 deadline = ktime_get_ns() + PAMT_WAIT_NS;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		if (cpu == raw_smp_processor_id())
			continue;
		while (READ_ONCE(per_cpu_ptr(pamt.pcpu, cpu)->in_flight) &&
		       ktime_get_ns() < deadline)
			cpu_relax();
	}
}

/*
 * The retries of one PAMT.ADD or PAMT.REMOVE that met TDX_OPERAND_BUSY.
 * BUSY means another CPU's PAMT call holds a range this one needs: the
 * target, or the range of a pair page.  Each try is one transition that
 * issues one SEAMCALL; between tries the owner publishes the slot's old
 * word, ends the transition and backs off with preemption on.  After
 * PAMT_BUSY_RETRIES backed-off retries, for example against a guest
 * looping conversions whose pair pages share our range, it makes every
 * CPU issue its PAMT calls one at a time under pamt.seamcall_lock, waits
 * for the calls already in flight, and tries as many times again.  This
 * is the only time PAMT calls serialise.
 */
struct pamt_busy {
	unsigned int tries;	/* calls that answered BUSY */
	bool serial;		/* counted in pamt.serializing */
};

/*
 * Whether a try that answered BUSY may be followed by another.  Not in
 * softirq once serialising would begin: pamt.seamcall_lock is not taken
 * there.
 */
static bool pamt_slot_retry(const struct pamt_busy *b)
{
	if (b->tries == PAMT_BUSY_CALLS_MAX - 1)
		return false;
	return b->tries != PAMT_BUSY_RETRIES || !in_serving_softirq();
}

/*
 * Between two tries of @leaf on @base, after the first one's transition
 * ended: back off, or start serialising.
 */
static void pamt_slot_backoff(struct pamt_busy *b, unsigned int leaf,
			      unsigned long base)
{
	unsigned int try = b->tries++;

	pamt_stat_inc(BUSY);
	trace_tdx_pamt_busy(leaf, base, try);
	if (try != PAMT_BUSY_RETRIES) {
		ndelay(PAMT_BUSY_BACKOFF_NS << (try % (PAMT_BUSY_RETRIES + 1)));
		return;
	}
	b->serial = true;
	atomic_inc(&pamt.serializing);
	/* Set, then wait; pamt_slot_call() counts, then looks. */
	smp_mb__after_atomic();
	pamt_slot_wait_in_flight();
}

static void pamt_slot_busy_end(struct pamt_busy *b)
{
	if (b->serial)
		atomic_dec(&pamt.serializing);
}

/* A get revived @slot: drop RECENT, unless the word moved on meanwhile. */
static void pamt_slot_clear_recent(atomic_t *slot)
{
	int w = atomic_read(slot);

	while ((w & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT |
		     PAMT_SLOT_RECENT)) ==
	       (PAMT_SLOT_INSTALLED | PAMT_SLOT_RECENT) && pamt_slot_refs(w)) {
		if (atomic_try_cmpxchg(slot, &w, w & ~PAMT_SLOT_RECENT))
			break;
	}
}

/*
 * Publish the IDLE word @old again after a REMOVE that did not happen.
 * Gets that came meanwhile hold references now: the slot is ACTIVE.
 */
static void pamt_slot_publish_idle(atomic_t *slot, int old)
{
	int now;

	pamt_idle_add(1);
	now = pamt_slot_publish(slot, old | PAMT_SLOT_TRANSIT, old);
	if (!pamt_slot_refs(now))
		return;
	pamt_idle_add(-1);
	pamt_stat_inc(REVIVE);
	if (now & PAMT_SLOT_RECENT)
		pamt_slot_clear_recent(slot);
}

/*
 * Called with @slot in ADDING, owned by this CPU inside
 * pamt_transit_begin(), from the word @owned, and @pair in hand; issues
 * one PAMT.ADD.  Publishes INSTALLED on success, the getters' counts
 * becoming references; on failure publishes EMPTY with those counts and
 * leaves @pair with the caller, who gives it back, or tries again on
 * -EBUSY, once preemption is on again.
 */
static int pamt_slot_add(atomic_t *slot, unsigned long idx, int owned,
			 struct tdx_pamt_pair *pair)
{
	u64 status;
	int ret;

	status = pamt_slot_call(TDH_PHYMEM_PAMT_ADD, pamt_slot_base_pfn(idx),
				pair);
	ret = pamt_status_errno(status);
	if (ret) {
		/* HPA_RANGE_NOT_FREE means we lost track of the module. */
		WARN_ONCE((status & TDX_PAMT_STATUS_MASK) ==
			  TDX_PAMT_HPA_RANGE_NOT_FREE,
			  "tdx-pamt: PAMT.ADD on pfn %#lx: range already has a pair\n",
			  pamt_slot_base_pfn(idx));
		pamt_slot_publish(slot, owned, owned & ~PAMT_SLOT_TRANSIT);
		return ret;
	}

	pamt_arena_note_owner(pair, idx);
	pamt_stat_inc(INSTALLED);
	pamt_slot_publish(slot, owned, owned ^ (PAMT_SLOT_TRANSIT |
					       PAMT_SLOT_INSTALLED));
	pamt_stat_inc(GET_SLOW);
	return 0;
}

/**
 * pamt_pair_release() - dispose of a pair PAMT.REMOVE handed back
 * @pair: the pair
 * @dest: a magazine, or reset and the page allocator
 *
 * Context: outside any transition, preemption as the caller has it; may
 * take the per-CPU and depot locks and free pages.
 */
void pamt_pair_release(const struct tdx_pamt_pair *pair,
		       enum pamt_pair_dest dest)
{
	/* The range no longer holds it: its memcg stops paying. */
	pamt_pair_uncharge(pair);
	pamt_arena_note_owner(pair, -1);
	if (dest == PAMT_PAIR_TO_MAG)
		pamt_mag_push(pair);
	else
		pamt_pair_free(pair);
}

/*
 * Publish what a PAMT.REMOVE that answered @status did to @slot, owned by
 * this CPU, whose IDLE word was @old; see pamt_slot_remove().
 */
static int pamt_slot_removed(atomic_t *slot, unsigned long idx, int old,
			     u64 status)
{
	int ret;

	ret = pamt_status_errno(status);
	if (ret == -EBUSY || (pamt_status_sw_error(status) &&
			      status != TDX_PAMT_SW_PAIR_LOST)) {
		/*
		 * Try again later: the module was busy, or the SEAMCALL did
		 * not run at all (a shrinker on a CPU out of VMX operation).
		 * Either way nothing changed: put the word back as it was,
		 * RECENT included.  No cap check here: the caller is already
		 * reclaiming.
		 */
		pamt_slot_publish_idle(slot, old);
		return -EBUSY;
	}
	if ((status & TDX_PAMT_STATUS_MASK) == TDX_PAMT_NO_PAGE_PAIR ||
	    status == TDX_PAMT_SW_PAIR_LOST) {
		/* The module holds no pair: the range is EMPTY, pages lost. */
		pr_warn_once("tdx-pamt: PAMT.REMOVE on pfn %#lx: %#llx, pair pages lost\n",
			     pamt_slot_base_pfn(idx), status);
		pamt_stat_inc(LEAKED);
		pamt_stat_add(INSTALLED, -1);
		pamt_slot_publish(slot, old | PAMT_SLOT_TRANSIT, 0);
		return -ENOENT;
	}
	if (ret) {
		pr_warn_once("tdx-pamt: PAMT.REMOVE on pfn %#lx failed: %#llx, pair left in the module\n",
			     pamt_slot_base_pfn(idx), status);
		pamt_stat_inc(LEAKED);
		pamt_slot_publish(slot, old | PAMT_SLOT_TRANSIT,
				  PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
		return ret;
	}

	pamt_stat_add(INSTALLED, -1);
	pamt_slot_publish(slot, old | PAMT_SLOT_TRANSIT, 0);
	return 0;
}

/**
 * pamt_slot_remove() - take a slot and REMOVE its pair
 * @slot: the slot
 * @idx: its index
 * @word: the IDLE word the caller read, RECENT included; updated if the
 *	slot no longer holds it
 * @pair: on success, the pair the module handed back
 *
 * Takes the slot by setting PAMT_SLOT_TRANSIT in *@word, and issues
 * PAMT.REMOVE in that transition, with preemption off so that a waiter on
 * the slot never waits for a task that is not running.  *@word is the one
 * to restore when nothing was removed.  A REMOVE that answers BUSY
 * restores it, ends the transition, backs off with preemption on, and
 * takes the slot again only if it still holds that word.  Otherwise
 * another CPU answers for the slot now (a get revived it; an evict or
 * reclaim owns or emptied it, and maybe a get is adding; a put made it
 * IDLE anew): stop as if the REMOVE stayed BUSY.  On success the caller gives @pair to
 * pamt_pair_release().
 *
 * Context: outside any transition.
 *
 * Return: 0 with the slot EMPTY; -EAGAIN, nothing done, with *@word
 * updated, if the slot did not hold *@word; -EBUSY with the slot IDLE, its
 * old word restored exactly, when the module stayed busy or the SEAMCALL
 * did not run, or as another CPU left it; -ENOENT with the slot EMPTY when
 * the module held no pair (or the backend could not name the pages it
 * handed back): nothing to release; -EIO with the slot IDLE and LEAKED
 * otherwise.
 */
int pamt_slot_remove(atomic_t *slot, unsigned long idx, int *word,
		     struct tdx_pamt_pair *pair)
{
	int old = *word, now;
	unsigned long base = pamt_slot_base_pfn(idx);
	struct pamt_busy busy = { };
	u64 status;
	int ret;

	/*
	 * Fully ordered: the REMOVE comes after the other CPUs' uses of the
	 * range, which their puts released.
	 */
	pamt_transit_begin();
	if (!atomic_try_cmpxchg(slot, word, old | PAMT_SLOT_TRANSIT)) {
		pamt_transit_end();
		return -EAGAIN;
	}
	pamt_idle_add(-1);
	for (;;) {
		/* Zeroed: the REMOVE tracepoint reads it even when REMOVE fails. */
		*pair = (struct tdx_pamt_pair) { };
		status = pamt_slot_call(TDH_PHYMEM_PAMT_REMOVE, base, pair);
		if (!pamt_status_busy(status) || !pamt_slot_retry(&busy))
			break;
		pamt_slot_publish_idle(slot, old);
		pamt_transit_end();
		pamt_slot_backoff(&busy, TDH_PHYMEM_PAMT_REMOVE, base);
		pamt_transit_begin();
		now = old;
		if (!atomic_try_cmpxchg_acquire(slot, &now,
						old | PAMT_SLOT_TRANSIT)) {
			pamt_transit_end();
			pamt_slot_busy_end(&busy);
			return -EBUSY;
		}
		pamt_idle_add(-1);
	}
	ret = pamt_slot_removed(slot, idx, old, status);
	pamt_transit_end();
	pamt_slot_busy_end(&busy);
	return ret;
}

/*
 * Wait, with this get's count in @slot, for the word to be neither TRANSIT
 * nor @seen, and read it into *@w: for the owner of a transition to
 * publish its result, or for an EMPTY word to move.  The deadline is set
 * by the first wait of a get and covers all of them: a shrinker that keeps
 * winning the slot and failing its REMOVE with BUSY must not starve the
 * get (found by tools/testing/pamt/model, twice).  Only reads: waiters
 * keep their counts, which the publication makes references, or not.
 * *@waited says whether the get was counted in GET_WAIT already.
 *
 * Return: false once the deadline has passed.
 */
static bool pamt_slot_wait(atomic_t *slot, int seen, int *w, u64 *deadline,
			   bool *waited)
{
	if (!*waited)
		pamt_stat_inc(GET_WAIT);
	*waited = true;
	/* Set on entry: the transition may be over by the first read. */
	if (!*deadline)
		*deadline = ktime_get_ns() + PAMT_WAIT_NS;
	for (;;) {
		*w = atomic_read_acquire(slot);
		if (!(*w & PAMT_SLOT_TRANSIT) && *w != seen)
			return true;
		if (ktime_get_ns() > *deadline)
			return false;
		cpu_relax();
	}
}

/*
 * Take back the count a get added to @slot, which holds *@w: possible
 * while the word is not INSTALLED, or is TRANSIT, whose owner publishes
 * by adding.  Return: false if the word is INSTALLED and not TRANSIT now:
 * the count is a reference.
 */
static bool pamt_slot_uncount(atomic_t *slot, int *w)
{
	do {
		if ((*w & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
		    PAMT_SLOT_INSTALLED)
			return false;
	} while (!atomic_try_cmpxchg(slot, w, *w - 1));
	return true;
}

/* Gets on an EMPTY word try the ADD this far apart, in their order. */
#define PAMT_ADD_TURN_NS	1000
#define PAMT_ADD_TURNS		32UL	/* the turns after the first */

/**
 * pamt_slot_pair_get() - a pair for an ADD, before the transition is owned
 * @pair: filled on success
 * @res: reserve to fall back on, or NULL
 *
 * Magazines, then @res, then the page allocator without sleeping.  The
 * per-CPU lock and the page allocator sleep on PREEMPT_RT, so this never
 * runs inside a transition.
 *
 * Return: where @pair came from; PAMT_PAIR_NONE if nowhere.
 */
enum pamt_pair_src pamt_slot_pair_get(struct tdx_pamt_pair *pair,
				      struct tdx_pamt_cache *res)
{
	if (pamt_mag_pop(pair))
		return PAMT_PAIR_POOL;
	if (res && res->nr) {
		*pair = res->pairs[--res->nr];
		return PAMT_PAIR_RES;
	}
	/* With the arena, also refills this CPU's magazines: one hold. */
	if (pamt_pair_alloc_bulk(pair, 1, GFP_NOWAIT | __GFP_NOWARN))
		return PAMT_PAIR_POOL;
	return PAMT_PAIR_NONE;
}

/**
 * pamt_slot_pair_put() - give back a pair an ADD did not use
 * @pair: from pamt_slot_pair_get()
 * @src: what pamt_slot_pair_get() returned
 * @res: the reserve passed to it
 *
 * Nothing changed, not even @res.
 */
void pamt_slot_pair_put(const struct tdx_pamt_pair *pair,
			enum pamt_pair_src src, struct tdx_pamt_cache *res)
{
	if (src == PAMT_PAIR_RES)
		res->pairs[res->nr++] = *pair;
	else
		pamt_mag_push(pair);
}

static noinline int pamt_slot_put_slow(atomic_t *slot);

/* Take back a get's count that is one reference too many. */
static void pamt_slot_unget(atomic_t *slot)
{
	int w = atomic_read(slot);

	do {
		/* The others put theirs meanwhile: this is a last put. */
		if (pamt_slot_refs(w) <= 1) {
			pamt_slot_put_slow(slot);
			return;
		}
	} while (!atomic_try_cmpxchg_release(slot, &w, w - 1));
}

/* A get's count went onto @old, INSTALLED and not TRANSIT: a reference. */
static int pamt_slot_got(atomic_t *slot, int old)
{
	if (unlikely(pamt_slot_refs(old) >= PAMT_SLOT_REF_MAX)) {
		pamt_slot_unget(slot);
		return -EOVERFLOW;
	}
	if (pamt_slot_refs(old)) {
		pamt_stat_inc(GET_FAST);
		return 0;
	}
	/* IDLE -> ACTIVE: the get that revives owns the change. */
	if (!(old & PAMT_SLOT_LEAKED))
		pamt_idle_add(-1);
	/*
	 * One atomic, not a compare-and-exchange that other gets' adds make
	 * fail: with this reference held nothing else sets RECENT or TRANSIT.
	 */
	if (old & PAMT_SLOT_RECENT)
		atomic_andnot(PAMT_SLOT_RECENT, slot);
	pamt_stat_inc(REVIVE);
	return 0;
}

/*
 * The rest of a get whose count went into @slot on top of @old; out of
 * line, so the fast paths stay free of its register spills.  The count
 * stays in the word until it is a reference, or the get fails and takes
 * it back.
 */
static noinline int pamt_slot_get_slow(atomic_t *slot,
				       struct tdx_pamt_cache *res, int old)
{
	unsigned long idx = pamt_slot_idx(slot);
	enum pamt_pair_src src = PAMT_PAIR_NONE;
	/* Gets that came before this one: its turn to try an ADD. */
	unsigned long pos = pamt_slot_refs(old);
	int w = old + 1;
	struct pamt_busy busy = { };
	struct tdx_pamt_pair pair;
	u64 deadline = 0, turn = 0;
	bool waited = false;
	int ret;

	if ((old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
	    PAMT_SLOT_INSTALLED)
		return pamt_slot_got(slot, old);

	for (;;) {
		if (w & PAMT_SLOT_HOLE) {
			pamt_slot_uncount(slot, &w);
			ret = -EINVAL;
			break;
		}

		if (w & PAMT_SLOT_TRANSIT) {
			/* The owner runs with preemption off: it is running. */
			if (pamt_slot_wait(slot, w, &w, &deadline, &waited)) {
				turn = 0;	/* EMPTY now: turns start again */
				continue;
			}
			ret = pamt_slot_uncount(slot, &w) ? -EBUSY : 0;
			break;
		}

		if (w & PAMT_SLOT_INSTALLED) {
			/* Published with this count in it: a reference. */
			ret = 0;
			if (unlikely(pamt_slot_refs(w) > PAMT_SLOT_REF_MAX)) {
				pamt_slot_unget(slot);
				ret = -EOVERFLOW;
			}
			break;
		}

		/*
		 * EMPTY with the counts of the gets on it.  They try to own
		 * the ADD in the order they came, PAMT_ADD_TURN_NS apart, so
		 * that the first does it and the others wait for its result
		 * rather than all compare-and-exchange at once.
		 */
		if (pos) {
			if (!turn)
				turn = ktime_get_ns() +
				       min(pos, PAMT_ADD_TURNS) * PAMT_ADD_TURN_NS;
			if (pamt_slot_wait(slot, w, &w, &turn, &waited))
				continue;
			pos = 0;
			w = atomic_read(slot);
			continue;
		}
		/* Get a pair first, while we may still sleep on RT. */
		if (src == PAMT_PAIR_NONE) {
			src = pamt_slot_pair_get(&pair, res);
			if (src == PAMT_PAIR_NONE) {
				/* -ENOMEM only if the slot is still EMPTY. */
				w = atomic_read(slot);
				if (w & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT))
					continue;
				ret = pamt_slot_uncount(slot, &w) ? -ENOMEM : 0;
				break;
			}
		}

		/* Become the one CPU that issues the ADD. */
		pamt_transit_begin();
		if (!atomic_try_cmpxchg_acquire(slot, &w,
						w | PAMT_SLOT_TRANSIT)) {
			pamt_transit_end();
			continue;
		}
		ret = pamt_slot_add(slot, idx, w | PAMT_SLOT_TRANSIT, &pair);
		pamt_transit_end();
		/*
		 * EMPTY again: back off with preemption on, then look again.
		 * Without a count in the word meanwhile: other gets try the
		 * ADD themselves rather than wait for this backoff.
		 */
		if (ret == -EBUSY && pamt_slot_retry(&busy)) {
			w = atomic_read(slot);
			if (!pamt_slot_uncount(slot, &w)) {
				ret = 0;	/* another get's ADD made it */
				break;
			}
			pamt_slot_backoff(&busy, TDH_PHYMEM_PAMT_ADD,
					  pamt_slot_base_pfn(idx));
			old = atomic_fetch_add(1, slot);
			if ((old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
			    PAMT_SLOT_INSTALLED) {
				ret = pamt_slot_got(slot, old);
				break;
			}
			w = old + 1;
			pos = pamt_slot_refs(old);
			turn = 0;
			continue;
		}
		if (!ret) {
			src = PAMT_PAIR_NONE;	/* the module holds it */
			pamt_pair_charge(&pair, res);
		} else {
			pamt_stat_inc(ADD_FAILED);
			/* Another get's ADD may have installed it since. */
			w = atomic_read(slot);
			if (!pamt_slot_uncount(slot, &w))
				ret = 0;
		}
		break;
	}

	pamt_slot_busy_end(&busy);
	if (src != PAMT_PAIR_NONE)
		pamt_slot_pair_put(&pair, src, res);
	return ret;
}

/*
 * The fast path of a get on @slot: one atomic add, whatever the word.  A
 * word that was INSTALLED with a count in [1, REF_MAX - 1], no other flag,
 * is done (a LEAKED or RECENT one goes the slow way).  One compare, as
 * cheap as a test of the count alone.
 */
static __always_inline int pamt_slot_get_word(atomic_t *slot,
					      struct tdx_pamt_cache *res)
{
	int old = atomic_fetch_add(1, slot);

	if (unlikely((u32)(old - (PAMT_SLOT_INSTALLED | 1)) >=
		     PAMT_SLOT_REF_MAX - 1))
		return pamt_slot_get_slow(slot, res, old);
	pamt_stat_inc(GET_FAST);
	return 0;
}

/*
 * A get outside the flat window: the far table, then as in the window.
 * Takes the flat index @idx (pamt_slot_index()), not the pfn, so that the
 * fast path keeps nothing else in a register: one instruction fewer.
 */
static noinline int pamt_slot_get_far(unsigned long idx,
				      struct tdx_pamt_cache *res)
{
	atomic_t *slot = pamt_slot_far(idx + pamt.base_idx);

	if (!slot)
		return pamt_slot_miss();
	return pamt_slot_get_word(slot, res);
}

/**
 * tdx_pamt_get() - take a reference on the PAMT pair of a 4K page's range
 * @pfn: the page
 * @res: pairs to fall back on when this CPU's magazines are empty, or NULL
 *
 * Task context; never sleeps, so it may be called with a spinlock held.
 * On PREEMPT_RT it takes the cache's sleeping locks: not with preemption
 * or IRQs off, nor under a raw spinlock.  Not from softirq: a softirq
 * that interrupted the owner of a transition would wait for it in vain.
 * With a non-empty @res it cannot fail with -ENOMEM.  Without one it falls
 * back on the page allocator with GFP_NOWAIT.
 *
 * Return: 0; -EINVAL if @pfn is not covered; -ENOMEM if no pair could be
 * found; -EOVERFLOW if the range holds PAMT_SLOT_REF_MAX references
 * already, a caller bug (see pamt_internal.h); -EBUSY if the module stayed
 * busy, or a concurrent transition did not finish in time; -EIO if
 * PAMT.ADD failed.  On error nothing changed.
 */
int tdx_pamt_get(unsigned long pfn, struct tdx_pamt_cache *res)
{
	unsigned long idx = pamt_slot_index(pfn);

	if (unlikely(idx >= pamt.nr_flat))
		return pamt_slot_get_far(idx, res);
	return pamt_slot_get_word(&pamt.slots[idx], res);
}
EXPORT_SYMBOL_FOR_KVM(tdx_pamt_get);

static noinline int pamt_slot_put_slow(atomic_t *slot)
{
	unsigned long idx = pamt_slot_idx(slot);
	int old = atomic_read(slot);

	for (;;) {
		if (old & PAMT_SLOT_HOLE)
			return -EINVAL;
		/* Counts on a word not INSTALLED, or TRANSIT, are gets' own. */
		if ((old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) !=
		    PAMT_SLOT_INSTALLED || !pamt_slot_refs(old)) {
			WARN_ONCE(1, "tdx-pamt: put on pfn %#lx with no reference\n",
				  pamt_slot_base_pfn(idx));
			return -EINVAL;
		}

		if (pamt_slot_refs(old) > 1) {
			if (atomic_try_cmpxchg(slot, &old, old - 1))
				break;
			continue;
		}

		/* 1 -> 0: the pair stays installed, the slot goes IDLE. */
		if (!atomic_try_cmpxchg_release(slot, &old,
						(old - 1) | pamt_shrink_recent(idx)))
			continue;
		/* put_slow: the cap made this put issue a REMOVE. */
		if (!(old & PAMT_SLOT_LEAKED) && pamt_shrink_idle_inc(idx)) {
			pamt_stat_inc(PUT_SLOW);
			return 0;
		}
		break;
	}

	pamt_stat_inc(PUT_FAST);
	return 0;
}

/*
 * The fast path of a put on @slot: INSTALLED with a count in [2, REF_MAX],
 * no other flag.
 */
static __always_inline int pamt_slot_put_word(atomic_t *slot)
{
	int old = atomic_read(slot);

	do {
		if (unlikely((u32)(old - (PAMT_SLOT_INSTALLED | 2)) >=
			     PAMT_SLOT_REF_MAX - 1))
			return pamt_slot_put_slow(slot);
	} while (!atomic_try_cmpxchg_release(slot, &old, old - 1));

	pamt_stat_inc(PUT_FAST);
	return 0;
}

/* As pamt_slot_get_far(), for a put. */
static noinline int pamt_slot_put_far(unsigned long idx)
{
	atomic_t *slot = pamt_slot_far(idx + pamt.base_idx);

	if (!slot)
		return pamt_slot_miss();
	return pamt_slot_put_word(slot);
}

/**
 * tdx_pamt_put() - drop a reference taken by tdx_pamt_get()
 * @pfn: the page
 *
 * Never sleeps; may be called from softirq.  On PREEMPT_RT, as get: not
 * with preemption or IRQs off, nor under a raw spinlock (the last put may
 * take the cache's locks to cache a pair or enforce the idle cap; RT's
 * softirqs run in task context).  The last put leaves the pair installed
 * (the slot goes IDLE); if that puts idle memory over the idle cap, it
 * issues one PAMT.REMOVE, of the oldest idle slot.  A REMOVE that fails
 * leaves the pair installed.
 *
 * Return: 0, or -EINVAL (changing nothing) if @pfn is not covered or holds
 * no reference.
 */
int tdx_pamt_put(unsigned long pfn)
{
	unsigned long idx = pamt_slot_index(pfn);

	if (unlikely(idx >= pamt.nr_flat))
		return pamt_slot_put_far(idx);
	return pamt_slot_put_word(&pamt.slots[idx]);
}
EXPORT_SYMBOL_FOR_KVM(tdx_pamt_put);

/**
 * tdx_pamt_evict() - remove the pair of an idle range, for a 2M mapping
 * @pfn: any page of the range
 *
 * Return: 0 if the range has no pair (any more), also when the module
 * answered that it held none; -EBUSY, changing nothing (the word is as it
 * was, PAMT_SLOT_RECENT included), if the range is in use or in
 * transition, if the module stayed busy, or if the REMOVE did not run;
 * -EBUSY also if another CPU took the range over while the REMOVE backed
 * off from BUSY (a get revived it, say): the caller maps at 4K and may
 * try again later; -EINVAL if @pfn is not covered; -EIO if the pair is
 * stuck in the module for good.
 */
int tdx_pamt_evict(unsigned long pfn)
{
	atomic_t *slot = pamt_slot_lookup(pfn);
	struct tdx_pamt_pair pair;
	unsigned long idx;
	int old, ret;

	if (!slot)
		return pamt_slot_miss();
	idx = pamt_slot_idx(slot);

	old = atomic_read(slot);
	for (;;) {
		switch (pamt_slot_state(old)) {
		case PAMT_SLOT_NOT_COVERED:
			return -EINVAL;
		case PAMT_SLOT_EMPTY:
			return 0;
		case PAMT_SLOT_IDLE:
			break;
		default:
			return -EBUSY;
		}
		if (old & PAMT_SLOT_LEAKED)
			return -EIO;

		/* Keep RECENT in the word: a BUSY REMOVE puts it back. */
		ret = pamt_slot_remove(slot, idx, &old, &pair);
		if (ret == -EAGAIN)
			continue;
		if (!ret)
			pamt_pair_release(&pair, PAMT_PAIR_TO_MAG);
		/* The module held no pair: the range is empty, as asked. */
		if (ret == -ENOENT)
			ret = 0;
		if (!ret)
			pamt_stat_inc(EVICT);
		return ret;
	}
}
