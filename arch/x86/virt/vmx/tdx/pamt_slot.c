// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, slot layer: a word per 2M range, get, put and the
 * transitions that ADD and REMOVE.  See Documentation/arch/x86/tdx-dpamt.rst.
 */
#include <linux/bug.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kvm_types.h>
#include <linux/gfp.h>
#include <linux/preempt.h>
#include <linux/processor.h>
#include <linux/timekeeping.h>
#include "pamt_internal.h"
#include "pamt_trace.h"

struct pamt_cache pamt;

/* Where the pair a get holds for an ADD came from. */
enum pamt_pair_src {
	PAMT_PAIR_NONE,
	PAMT_PAIR_POOL,		/* magazines or page allocator */
	PAMT_PAIR_RES,		/* the caller's reserve */
};

/* End a transition owned from @owned: add, keeping pending counts. */
static int pamt_slot_publish(atomic_t *slot, int owned, int new)
{
	return atomic_add_return_release(new - owned, slot);
}

/* A PAMT SEAMCALL's status as 0, -EBUSY for TDX_OPERAND_BUSY, or -EIO. */
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

#ifdef CONFIG_LOCKDEP
static struct lock_class_key pamt_transit_key;
/* A transition, for lockdep: only raw locks may nest inside. */
struct lockdep_map pamt_transit_map = {
	.name = "pamt_transit",
	.key = &pamt_transit_key,
	.wait_type_outer = LD_WAIT_FREE,
	.wait_type_inner = LD_WAIT_SPIN,
};
#endif

/*
 * While a CPU serialises, every call goes under pamt.seamcall_lock: raw, as
 * it is taken in a transition; not in softirq, which may interrupt its holder.
 */
static u64 pamt_slot_call(unsigned int leaf, unsigned long base,
			  struct tdx_pamt_pair *pair)
{
	bool serial = false;
	unsigned long flags;
	u64 status;

	/* IRQs off while counted: the serialiser waits for the count. */
	local_irq_save(flags);
	this_cpu_inc(pamt.pcpu->in_flight);
	/* Count, then look; pamt_slot_backoff() sets, then waits. */
	smp_mb();
	if (unlikely(atomic_read(&pamt.serializing))) {
		this_cpu_dec(pamt.pcpu->in_flight);
		local_irq_restore(flags);
		if (in_serving_softirq())
			return TDX_PAMT_OPERAND_BUSY;
		raw_spin_lock(&pamt.seamcall_lock);
		pamt_stat_inc(GLOBAL_LOCK);
		serial = true;
		local_irq_save(flags);
	}
	if (leaf == TDH_PHYMEM_PAMT_ADD) {
		pamt_stat_inc(ADD);
		status = pamt.ops->add(base, pair);
		trace_tdx_pamt_add(base, pair, status);
	} else {
		pamt_stat_inc(REMOVE);
		status = pamt.ops->remove(base, pair);
		trace_tdx_pamt_remove(base, pair, status);
	}
	if ((status & TDX_PAMT_STATUS_MASK) == TDX_PAMT_OPERAND_BUSY)
		pamt_stat_inc(BUSY);
	if (!serial)
		this_cpu_dec(pamt.pcpu->in_flight);
	local_irq_restore(flags);
	if (serial)
		raw_spin_unlock(&pamt.seamcall_lock);
	return status;
}

/* @tries: BUSY answers so far.  A softirq never backs off. */
static bool pamt_slot_retry(unsigned int tries)
{
	return tries < PAMT_BUSY_CALLS_MAX - 1 && !in_serving_softirq();
}

/* Between two tries, with preemption on: back off, or start serialising. */
static void pamt_slot_backoff(unsigned int *tries, unsigned int leaf,
			      unsigned long base)
{
	unsigned int try = (*tries)++, cpu;
	u64 deadline;

	trace_tdx_pamt_busy(leaf, base, try);
	if (try != PAMT_BUSY_RETRIES) {
		ndelay(PAMT_BUSY_BACKOFF_NS << (try % (PAMT_BUSY_RETRIES + 1)));
		return;
	}
	atomic_inc(&pamt.serializing);
	/* Set, then wait; pamt_slot_call() counts, then looks. */
	smp_mb__after_atomic();
	/* For calls begun before; not ours: a SEAMCALL runs with IRQs off. */
	deadline = ktime_get_ns() + PAMT_WAIT_NS;
	for_each_possible_cpu(cpu) {
		if (cpu == raw_smp_processor_id())
			continue;
		while (READ_ONCE(per_cpu_ptr(pamt.pcpu, cpu)->in_flight) &&
		       ktime_get_ns() < deadline)
			cpu_relax();
	}
}

static void pamt_slot_busy_end(unsigned int tries)
{
	if (tries > PAMT_BUSY_RETRIES)
		atomic_dec(&pamt.serializing);
}

/* Republish IDLE @old after a REMOVE that did not happen. */
static void pamt_slot_publish_idle(atomic_t *slot, int old)
{
	unsigned long idx = pamt_slot_idx(slot);
	int now;

	pamt_idle_count(idx, 1);
	now = pamt_slot_publish(slot, old | PAMT_SLOT_TRANSIT, old);
	if (!pamt_slot_refs(now))
		return;
	pamt_idle_count(idx, -1);
	pamt_stat_inc(REVIVE);
}

/* ADD for @slot, owned from @owned; a refused @pair is dropped from *@src. */
static int pamt_slot_add(atomic_t *slot, unsigned long idx, int owned,
			 struct tdx_pamt_pair *pair, enum pamt_pair_src *src)
{
	u64 status;
	int ret;

	status = pamt_slot_call(TDH_PHYMEM_PAMT_ADD, pamt_slot_base_pfn(idx),
				pair);
	ret = pamt_status_errno(status);
	if (ret) {
		WARN_ONCE((status & TDX_PAMT_STATUS_MASK) ==
			  TDX_PAMT_HPA_RANGE_NOT_FREE,
			  "tdx-pamt: PAMT.ADD on pfn %#lx: range already has a pair\n",
			  pamt_slot_base_pfn(idx));
		pamt_slot_publish(slot, owned, owned & ~PAMT_SLOT_TRANSIT);
		/* A page refused as in use may be the module's: never reuse it. */
		if ((status & TDX_PAMT_STATUS_MASK) == TDX_PAMT_PAGE_NOT_FREE) {
			pr_warn_once("tdx-pamt: pair %#lx/%#lx refused as in use, leaked\n",
				     pair->pfn[0], pair->pfn[1]);
			pamt_stat_inc(LEAKED);
			*src = PAMT_PAIR_NONE;
		}
		return ret;
	}

	pamt_stat_inc(INSTALLED);
	pamt_slot_publish(slot, owned, owned ^ (PAMT_SLOT_TRANSIT |
					       PAMT_SLOT_INSTALLED));
	pamt_stat_inc(GET_SLOW);
	return 0;
}

/* Publish what a REMOVE answering @status did to @slot, taken from @old. */
static int pamt_slot_removed(atomic_t *slot, unsigned long idx, int old,
			     u64 status)
{
	int ret;

	ret = pamt_status_errno(status);
	if (ret == -EBUSY || ((status & TDX_PAMT_SW_ERROR) == TDX_PAMT_SW_ERROR &&
			      status != TDX_PAMT_SW_PAIR_LOST)) {
		/* Nothing changed (busy, or not run): put the word back. */
		pamt_slot_publish_idle(slot, old);
		return -EBUSY;
	}
	if ((status & TDX_PAMT_STATUS_MASK) == TDX_PAMT_NO_PAGE_PAIR ||
	    status == TDX_PAMT_SW_PAIR_LOST) {
		pr_warn_once("tdx-pamt: PAMT.REMOVE on pfn %#lx: %#llx, pair pages lost\n",
			     pamt_slot_base_pfn(idx), status);
		pamt_stat_inc(LEAKED);
		ret = -ENOENT;
	} else if (ret) {
		pr_warn_once("tdx-pamt: PAMT.REMOVE on pfn %#lx failed: %#llx, pair left in the module\n",
			     pamt_slot_base_pfn(idx), status);
		pamt_stat_inc(LEAKED);
		pamt_slot_publish(slot, old | PAMT_SLOT_TRANSIT,
				  PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
		return ret;
	}
	pamt_stat_add(INSTALLED, -1);
	pamt_slot_publish(slot, old | PAMT_SLOT_TRANSIT, 0);
	return ret;
}

/*
 * Take IDLE @slot from *@word and REMOVE its pair into @pair.  Return: 0,
 * EMPTY; -EAGAIN if the slot did not hold *@word (updated); -EBUSY, IDLE
 * again; -ENOENT, EMPTY but the module held no pair; -EIO, LEAKED.
 */
int pamt_slot_remove(atomic_t *slot, unsigned long idx, int *word,
		     struct tdx_pamt_pair *pair)
{
	int old = *word, now;
	unsigned long base = pamt_slot_base_pfn(idx);
	unsigned int busy = 0;
	u64 status;
	int ret;

	/* Fully ordered: after the uses of the range that puts released. */
	pamt_transit_begin();
	if (!atomic_try_cmpxchg(slot, word, old | PAMT_SLOT_TRANSIT)) {
		pamt_transit_end();
		return -EAGAIN;
	}
	pamt_idle_count(idx, -1);
	for (;;) {
		/* The REMOVE tracepoint reads it even when REMOVE fails. */
		*pair = (struct tdx_pamt_pair) { };
		status = pamt_slot_call(TDH_PHYMEM_PAMT_REMOVE, base, pair);
		if (pamt_status_errno(status) != -EBUSY || !pamt_slot_retry(busy))
			break;
		pamt_slot_publish_idle(slot, old);
		pamt_transit_end();
		pamt_slot_backoff(&busy, TDH_PHYMEM_PAMT_REMOVE, base);
		pamt_transit_begin();
		now = old;
		if (!atomic_try_cmpxchg_acquire(slot, &now,
						old | PAMT_SLOT_TRANSIT)) {
			pamt_transit_end();
			pamt_slot_busy_end(busy);
			return -EBUSY;
		}
		pamt_idle_count(idx, -1);
	}
	ret = pamt_slot_removed(slot, idx, old, status);
	pamt_transit_end();
	pamt_slot_busy_end(busy);
	return ret;
}

/*
 * Wait for @slot to be neither TRANSIT nor @seen; false after *@deadline,
 * one for all of a get's waits, so a REMOVE that stays BUSY cannot starve it.
 */
static bool pamt_slot_wait(atomic_t *slot, int seen, int *w, u64 *deadline,
			   bool *waited)
{
	if (!*waited)
		pamt_stat_inc(GET_WAIT);
	*waited = true;
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

/* Take back a get's count; false if it is a reference now. */
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

/* A pair for an ADD, taken before the transition: the reserve first. */
static enum pamt_pair_src pamt_slot_pair_get(struct tdx_pamt_pair *pair,
					     struct tdx_pamt_cache *res)
{
	if (res && res->nr) {
		*pair = res->pairs[--res->nr];
		return PAMT_PAIR_RES;
	}
	if (pamt_mag_pop(pair))
		return PAMT_PAIR_POOL;
	if (!pamt_pair_alloc_pages(pair, GFP_NOWAIT | __GFP_NOWARN))
		return PAMT_PAIR_POOL;
	return PAMT_PAIR_NONE;
}

static noinline int pamt_slot_put_slow(atomic_t *slot);

/* Take back a get's count that is one reference too many. */
static void pamt_slot_unget(atomic_t *slot)
{
	int w = atomic_read(slot);

	do {
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
	if (!(old & PAMT_SLOT_LEAKED))
		pamt_idle_count(pamt_slot_idx(slot), -1);
	pamt_stat_inc(REVIVE);
	return 0;
}

/* Out of line, so that the fast paths stay free of its spills. */
static noinline int pamt_slot_get_slow(atomic_t *slot,
				       struct tdx_pamt_cache *res, int old)
{
	unsigned long idx = pamt_slot_idx(slot), pos;
	enum pamt_pair_src src = PAMT_PAIR_NONE;
	unsigned int busy = 0;
	struct tdx_pamt_pair pair;
	u64 deadline = 0, turn;
	bool waited = false;
	int ret, w;

again:
	if ((old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
	    PAMT_SLOT_INSTALLED) {
		ret = pamt_slot_got(slot, old);
		goto out;
	}
	pos = pamt_slot_refs(old);	/* gets ahead of this one */
	w = old + 1;
	turn = 0;
	for (;;) {
		if (w & PAMT_SLOT_HOLE) {
			pamt_slot_uncount(slot, &w);
			ret = -EINVAL;
			break;
		}
		if (w & PAMT_SLOT_TRANSIT) {
			if (pamt_slot_wait(slot, w, &w, &deadline, &waited)) {
				turn = 0;	/* EMPTY now: turns start again */
				continue;
			}
			ret = pamt_slot_uncount(slot, &w) ? -EBUSY : 0;
			break;
		}
		if (w & PAMT_SLOT_INSTALLED) {
			ret = 0;
			if (unlikely(pamt_slot_refs(w) > PAMT_SLOT_REF_MAX)) {
				pamt_slot_unget(slot);
				ret = -EOVERFLOW;
			}
			break;
		}

		/* EMPTY: gets try the ADD in their order, no herd. */
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
		if (src == PAMT_PAIR_NONE) {
			src = pamt_slot_pair_get(&pair, res);
			if (src == PAMT_PAIR_NONE) {
				w = atomic_read(slot);
				if (w & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT))
					continue;
				ret = pamt_slot_uncount(slot, &w) ? -ENOMEM : 0;
				break;
			}
		}
		pamt_transit_begin();
		if (!atomic_try_cmpxchg_acquire(slot, &w,
						w | PAMT_SLOT_TRANSIT)) {
			pamt_transit_end();
			continue;
		}
		ret = pamt_slot_add(slot, idx, w | PAMT_SLOT_TRANSIT, &pair,
				    &src);
		pamt_transit_end();
		/* Back off without a count: others may ADD meanwhile. */
		if (ret == -EBUSY && pamt_slot_retry(busy)) {
			w = atomic_read(slot);
			if (!pamt_slot_uncount(slot, &w)) {
				ret = 0;	/* another get's ADD made it */
				break;
			}
			pamt_slot_backoff(&busy, TDH_PHYMEM_PAMT_ADD,
					  pamt_slot_base_pfn(idx));
			old = atomic_fetch_add(1, slot);
			goto again;
		}
		if (!ret) {
			src = PAMT_PAIR_NONE;	/* the module holds it */
			pamt_shrink_installed(idx, &pair);
		} else {
			pamt_stat_inc(ADD_FAILED);
			w = atomic_read(slot);
			if (!pamt_slot_uncount(slot, &w))
				ret = 0;
		}
		break;
	}
out:
	pamt_slot_busy_end(busy);
	/* A pair the ADD did not use goes back where it came from. */
	if (src == PAMT_PAIR_RES)
		res->pairs[res->nr++] = pair;
	else if (src == PAMT_PAIR_POOL)
		pamt_mag_push(&pair);
	return ret;
}

/* Done if @old was INSTALLED with a count in [1, REF_MAX - 1]. */
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

/* Takes the flat index, not the pfn: one instruction fewer in get. */
static noinline int pamt_slot_get_far(unsigned long idx,
				      struct tdx_pamt_cache *res)
{
	atomic_t *slot = pamt_slot_far(idx + pamt.base_idx);

	if (!slot)	/* Without Dynamic PAMT every call succeeds. */
		return pamt.enabled ? -EINVAL : 0;
	return pamt_slot_get_word(slot, res);
}

/**
 * tdx_pamt_get() - take a reference on the PAMT pair of a 4K page's range
 * @pfn: the page
 * @res: pairs to use before this CPU's magazines, or NULL
 *
 * Context: task context, not softirq; never sleeps.
 * Return: 0; -EINVAL if @pfn is not covered; -ENOMEM (never with a
 * non-empty @res); -EOVERFLOW; -EBUSY; -EIO.  On error nothing changed.
 */
int tdx_pamt_get(unsigned long pfn, struct tdx_pamt_cache *res)
{
	unsigned long idx = pfn / TDX_PAMT_PAGES_PER_SLOT - pamt.base_idx;

	if (unlikely(idx >= pamt.nr_flat))
		return pamt_slot_get_far(idx, res);
	return pamt_slot_get_word(&pamt.slots[idx].word, res);
}
EXPORT_SYMBOL_FOR_KVM(tdx_pamt_get);

static noinline int pamt_slot_put_slow(atomic_t *slot)
{
	unsigned long idx = pamt_slot_idx(slot);
	int old = atomic_read(slot);

	do {
		if (old & PAMT_SLOT_HOLE)
			return -EINVAL;
		if (WARN_ONCE((old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) !=
			      PAMT_SLOT_INSTALLED || !pamt_slot_refs(old),
			      "tdx-pamt: put on pfn %#lx with no reference\n",
			      pamt_slot_base_pfn(idx)))
			return -EINVAL;
	} while (!atomic_try_cmpxchg_release(slot, &old, old - 1));
	/* The cap made this put issue a REMOVE. */
	if (pamt_slot_refs(old) == 1 && !(old & PAMT_SLOT_LEAKED) &&
	    pamt_shrink_idle_inc(idx)) {
		pamt_stat_inc(PUT_SLOW);
		return 0;
	}
	pamt_stat_inc(PUT_FAST);
	return 0;
}

/* Fast if INSTALLED with a count in [2, REF_MAX], no other flag. */
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

static noinline int pamt_slot_put_far(unsigned long idx)
{
	atomic_t *slot = pamt_slot_far(idx + pamt.base_idx);

	if (!slot)
		return pamt.enabled ? -EINVAL : 0;
	return pamt_slot_put_word(slot);
}

/**
 * tdx_pamt_put() - drop a reference taken by tdx_pamt_get()
 * @pfn: the page
 *
 * Context: any but hardirq; never sleeps.
 * Return: 0, or -EINVAL, changing nothing, if @pfn holds no reference.
 */
int tdx_pamt_put(unsigned long pfn)
{
	unsigned long idx = pfn / TDX_PAMT_PAGES_PER_SLOT - pamt.base_idx;

	if (unlikely(idx >= pamt.nr_flat))
		return pamt_slot_put_far(idx);
	return pamt_slot_put_word(&pamt.slots[idx].word);
}
EXPORT_SYMBOL_FOR_KVM(tdx_pamt_put);
