// SPDX-License-Identifier: GPL-2.0
/*
 * A fake TDX module: PAMT.ADD and PAMT.REMOVE as described in
 * Documentation/arch/x86/tdx-dpamt.rst ("The fake TDX module").
 *
 * Locking follows the real module: PAMT.ADD and PAMT.REMOVE hold the
 * target 2M range exclusively and the ranges of the two pair pages shared;
 * a conflict is TDX_OPERAND_BUSY, never a wait.  PAGE.AUG/PAGE.REMOVE hold
 * their page's range shared (pamt_fake_td.c).  Every call checks the
 * invariants it can see and counts and logs any breach in
 * pamt_fake.violations.
 */
#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/printk.h>
#include <linux/processor.h>
#include <linux/random.h>
#include <linux/slab.h>
#include "pamt_fake.h"

struct pamt_fake pamt_fake;

#define PAMT_FAKE_RANGE_EXCL	(-1)

/* The piece that covers @pfn, or NULL. */
static const struct pamt_fake_piece *pamt_fake_piece(unsigned long pfn)
{
	unsigned int i;

	for (i = 0; i < pamt_fake.nr_pieces; i++) {
		if (pfn >= pamt_fake.pieces[i].start_pfn &&
		    pfn < pamt_fake.pieces[i].end_pfn)
			return &pamt_fake.pieces[i];
	}
	return NULL;
}

bool pamt_fake_covered(unsigned long pfn)
{
	return pamt_fake_piece(pfn);
}

/* The bit of a covered @pfn in the bitmaps. */
unsigned long pamt_fake_bit(unsigned long pfn)
{
	const struct pamt_fake_piece *p = pamt_fake_piece(pfn);

	return p->first + pfn - p->start_pfn;
}

/* The pfn of bit @bit of the bitmaps: pamt_fake_bit() inverted. */
static unsigned long pamt_fake_bit_pfn(unsigned long bit)
{
	unsigned int i;

	for (i = 1; i < pamt_fake.nr_pieces; i++)
		if (bit < pamt_fake.pieces[i].first)
			break;
	return pamt_fake.pieces[i - 1].start_pfn + bit -
	       pamt_fake.pieces[i - 1].first;
}

struct pamt_fake_range *pamt_fake_range(unsigned long pfn)
{
	return &pamt_fake.ranges[pamt_fake_bit(pfn) / TDX_PAMT_PAGES_PER_SLOT];
}

/*
 * Only PAMT.ADD and REMOVE take a range exclusively: found so, two CPUs own
 * one slot's transition, which TRANSIT prevents.  Reported, and BUSY.
 */
bool pamt_fake_trylock_excl(struct pamt_fake_range *r, unsigned long base)
{
	int old = atomic_cmpxchg(&r->lock, 0, PAMT_FAKE_RANGE_EXCL);

	if (old == PAMT_FAKE_RANGE_EXCL)
		pamt_fake_violation("concurrent PAMT.ADD/REMOVE on pfn %#lx", base);
	return old == 0;
}

void pamt_fake_unlock_excl(struct pamt_fake_range *r)
{
	atomic_set_release(&r->lock, 0);
}

bool pamt_fake_trylock_shared(struct pamt_fake_range *r)
{
	int v = atomic_read(&r->lock);

	do {
		if (v < 0)
			return false;
	} while (!atomic_try_cmpxchg_acquire(&r->lock, &v, v + 1));
	return true;
}

void pamt_fake_unlock_shared(struct pamt_fake_range *r)
{
	atomic_dec_return_release(&r->lock);
}

/* -ln((i + 0.5) / 32) * 256: quantiles of an exponential with mean ~1. */
static const u16 pamt_fake_exp_q8[32] = {
	1065, 783, 653, 567, 502, 451, 408, 371, 339, 311, 285, 262, 241, 221,
	203, 186, 170, 155, 140, 127, 114, 102, 90, 79, 68, 58, 48, 39, 30, 21,
	12, 4,
};

/*
 * A lock-free splitmix64 sequence: get_random_u32() takes locks that sleep
 * on PREEMPT_RT, and a SEAMCALL runs with preemption and IRQs off.
 */
static atomic64_t pamt_fake_rng;

static u32 pamt_fake_random_below(u32 ceil)
{
	const u64 golden = 0x9e3779b97f4a7c15ULL;
	u64 z = (u64)atomic64_fetch_add((s64)golden, &pamt_fake_rng) + golden;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (u32)(((z >> 32) * ceil) >> 32);
}

void pamt_fake_delay(enum pamt_fake_op op)
{
	const struct pamt_fake_latency *lat = &pamt_fake.lat[op];
	u64 ns = lat->min_ns;

	if (lat->avg_ns > lat->min_ns) {
		ns += (lat->avg_ns - lat->min_ns) *
		      pamt_fake_exp_q8[pamt_fake_random_below(32)] / 256;
		if (lat->max_ns && ns > lat->max_ns)
			ns = lat->max_ns;
	}
	if (ns)
		ndelay(ns);
	while (atomic_read(&pamt_fake.stall[op]))
		cpu_relax();
}

/* Returns the injected status, or TDX_PAMT_SUCCESS to run the call. */
u64 pamt_fake_injected(enum pamt_fake_op op)
{
	struct pamt_fake_inject *inj = &pamt_fake.inject[op];

	if (!inj->status)
		return TDX_PAMT_SUCCESS;
	if (atomic_add_unless(&inj->count, -1, 0) ||
	    (inj->rate_ppm &&
	     pamt_fake_random_below(1000000) < inj->rate_ppm)) {
		atomic64_inc(&pamt_fake.injected[op]);
		return inj->status;
	}
	return TDX_PAMT_SUCCESS;
}

/* Shared locks on the pair pages' ranges, except the exclusive target's. */
bool pamt_fake_lock_pair(struct pamt_fake_range *target,
			 const struct tdx_pamt_pair *pair)
{
	struct pamt_fake_range *r0 = pamt_fake_range(pair->pfn[0]);
	struct pamt_fake_range *r1 = pamt_fake_range(pair->pfn[1]);

	if (r0 != target && !pamt_fake_trylock_shared(r0))
		return false;
	if (r1 != target && !pamt_fake_trylock_shared(r1)) {
		if (r0 != target)
			pamt_fake_unlock_shared(r0);
		return false;
	}
	return true;
}

void pamt_fake_unlock_pair(struct pamt_fake_range *target,
			   const struct tdx_pamt_pair *pair)
{
	struct pamt_fake_range *r0 = pamt_fake_range(pair->pfn[0]);
	struct pamt_fake_range *r1 = pamt_fake_range(pair->pfn[1]);

	if (r1 != target)
		pamt_fake_unlock_shared(r1);
	if (r0 != target)
		pamt_fake_unlock_shared(r0);
}

u64 pamt_fake_result(enum pamt_fake_op op, u64 status)
{
	if (status == TDX_PAMT_SUCCESS)
		atomic64_inc(&pamt_fake.ok[op]);
	else if (status == TDX_PAMT_OPERAND_BUSY)
		atomic64_inc(&pamt_fake.busy[op]);
	else
		atomic64_inc(&pamt_fake.errors[op]);
	return status;
}

/*
 * An ADD's locks on @base with @pair: the target range exclusive, the pair
 * pages' ranges shared.  Return: success, *@rp locked; else nothing held.
 */
u64 pamt_fake_lock_for_pair(enum pamt_fake_op op, unsigned long base,
			    const struct tdx_pamt_pair *pair,
			    struct pamt_fake_range **rp)
{
	struct pamt_fake_range *r;

	if (!pamt_fake_covered(base) || base % TDX_PAMT_PAGES_PER_SLOT ||
	    !pamt_fake_covered(pair->pfn[0]) || !pamt_fake_covered(pair->pfn[1]))
		return TDX_PAMT_OPERAND_ADDR_RANGE;
	r = pamt_fake_range(base);
	if (!pamt_fake_trylock_excl(r, base))
		return TDX_PAMT_OPERAND_BUSY;
	if (!pamt_fake_lock_pair(r, pair)) {
		pamt_fake_unlock_excl(r);
		return TDX_PAMT_OPERAND_BUSY;
	}
	*rp = r;
	return TDX_PAMT_SUCCESS;
}

/*
 * Hand @pair to range @r, as ADD does: two distinct free pages (no TD or
 * PAMT page), which become PAMT pages in the bitmap.
 */
u64 pamt_fake_install_pair(struct pamt_fake_range *r,
			   unsigned long base,
			   const struct tdx_pamt_pair *pair,
			   const char *what)
{
	int i;

	for (i = 0; i < 2; i++) {
		unsigned long bit = pamt_fake_bit(pair->pfn[i]);

		if (test_bit(bit, pamt_fake.td_map) ||
		    test_bit(bit, pamt_fake.pamt_map) ||
		    pair->pfn[0] == pair->pfn[1]) {
			pamt_fake_violation("%s on pfn %#lx with busy pair page %#lx",
					    what, base, pair->pfn[i]);
			return TDX_PAMT_PAGE_NOT_FREE;
		}
	}
	set_bit(pamt_fake_bit(pair->pfn[0]), pamt_fake.pamt_map);
	set_bit(pamt_fake_bit(pair->pfn[1]), pamt_fake.pamt_map);
	r->pair = *pair;
	WRITE_ONCE(r->has_pair, true);
	atomic64_inc(&pamt_fake.pairs);
	return TDX_PAMT_SUCCESS;
}

static u64 pamt_fake_add(unsigned long base, const struct tdx_pamt_pair *pair)
{
	struct pamt_fake_range *r;
	u64 status;

	atomic64_inc(&pamt_fake.calls[PAMT_FAKE_ADD]);
	status = pamt_fake_injected(PAMT_FAKE_ADD);
	if (status)
		return status;

	status = pamt_fake_lock_for_pair(PAMT_FAKE_ADD, base, pair, &r);
	if (status)
		return pamt_fake_result(PAMT_FAKE_ADD, status);

	pamt_fake_delay(PAMT_FAKE_ADD);

	if (r->has_pair) {
		pamt_fake_violation("PAMT.ADD on pfn %#lx, which has a pair",
				    base);
		status = TDX_PAMT_HPA_RANGE_NOT_FREE;
		goto out;
	}
	status = pamt_fake_install_pair(r, base, pair, "PAMT.ADD");
out:
	pamt_fake_unlock_pair(r, pair);
	pamt_fake_unlock_excl(r);
	return pamt_fake_result(PAMT_FAKE_ADD, status);
}

static u64 pamt_fake_remove(unsigned long base, struct tdx_pamt_pair *pair)
{
	struct pamt_fake_range *r;
	struct tdx_pamt_pair held;
	u64 status;

	atomic64_inc(&pamt_fake.calls[PAMT_FAKE_REMOVE]);
	status = pamt_fake_injected(PAMT_FAKE_REMOVE);
	if (status)
		return status;

	if (!pamt_fake_covered(base) || base % TDX_PAMT_PAGES_PER_SLOT)
		return pamt_fake_result(PAMT_FAKE_REMOVE,
					TDX_PAMT_OPERAND_ADDR_RANGE);

	r = pamt_fake_range(base);
	if (!pamt_fake_trylock_excl(r, base))
		return pamt_fake_result(PAMT_FAKE_REMOVE,
					TDX_PAMT_OPERAND_BUSY);
	if (!r->has_pair) {
		pamt_fake_unlock_excl(r);
		pamt_fake_violation("PAMT.REMOVE on pfn %#lx, which has no pair",
				    base);
		return pamt_fake_result(PAMT_FAKE_REMOVE,
					TDX_PAMT_NO_PAGE_PAIR);
	}
	held = r->pair;
	if (!pamt_fake_lock_pair(r, &held)) {
		pamt_fake_unlock_excl(r);
		return pamt_fake_result(PAMT_FAKE_REMOVE,
					TDX_PAMT_OPERAND_BUSY);
	}

	pamt_fake_delay(PAMT_FAKE_REMOVE);

	if (atomic_read(&r->td_pages)) {
		pamt_fake_violation("PAMT.REMOVE on pfn %#lx with %d TD pages",
				    base, atomic_read(&r->td_pages));
		status = TDX_PAMT_PAGE_NOT_EMPTY;
		goto out;
	}
	clear_bit(pamt_fake_bit(held.pfn[0]), pamt_fake.pamt_map);
	clear_bit(pamt_fake_bit(held.pfn[1]), pamt_fake.pamt_map);
	WRITE_ONCE(r->has_pair, false);
	atomic64_dec(&pamt_fake.pairs);
	*pair = held;
	status = TDX_PAMT_SUCCESS;
out:
	pamt_fake_unlock_pair(r, &held);
	pamt_fake_unlock_excl(r);
	return pamt_fake_result(PAMT_FAKE_REMOVE, status);
}

static void pamt_fake_reset_page(unsigned long pfn)
{
	atomic64_inc(&pamt_fake.resets);
	if (pamt_fake_covered(pfn) &&
	    test_bit(pamt_fake_bit(pfn), pamt_fake.pamt_map))
		pamt_fake_violation("reset of pfn %#lx, a PAMT page in use", pfn);
}

const struct tdx_pamt_ops pamt_fake_ops = {
	.add		= pamt_fake_add,
	.remove		= pamt_fake_remove,
	.reset_page	= pamt_fake_reset_page,
};

/**
 * pamt_fake_range_has_pair() - whether the module holds a pair for @pfn
 * @pfn: any page of the range
 *
 * Return: true if it does; false if not or not covered.
 */
bool pamt_fake_range_has_pair(unsigned long pfn)
{
	return pamt_fake_covered(pfn) && READ_ONCE(pamt_fake_range(pfn)->has_pair);
}

/**
 * pamt_fake_check_all() - check every range's invariants; quiescent only
 *
 * Return: violations found by this check (also added to the total).
 */
unsigned long pamt_fake_check_all(void)
{
	unsigned long nr = pamt_fake.nr_pages / TDX_PAMT_PAGES_PER_SLOT;
	unsigned long i, bad = 0, pairs = 0, pamt_pages = 0, bit;

	for (i = 0; i < nr; i++) {
		struct pamt_fake_range *r = &pamt_fake.ranges[i];

		if (atomic_read(&r->lock)) {
			pamt_fake_violation("range %lu left locked", i);
			bad++;
		}
		if (atomic_read(&r->td_pages) && !r->has_pair) {
			pamt_fake_violation("range %lu has TD pages, no pair", i);
			bad++;
		}
		pairs += r->has_pair;
	}
	for (bit = 0; bit < pamt_fake.nr_pages; bit++) {
		pamt_pages += test_bit(bit, pamt_fake.pamt_map);
		if (test_bit(bit, pamt_fake.lock_map)) {
			pamt_fake_violation("4K entry of pfn %#lx left locked",
					    pamt_fake_bit_pfn(bit));
			bad++;
		}
		if (test_bit(bit, pamt_fake.pamt_map) &&
		    test_bit(bit, pamt_fake.td_map)) {
			pamt_fake_violation("pfn %#lx is a PAMT page and a TD page",
					    pamt_fake_bit_pfn(bit));
			bad++;
		}
	}
	if (pamt_pages != 2 * pairs || pairs != atomic64_read(&pamt_fake.pairs)) {
		pamt_fake_violation("%lu PAMT pages for %lu pairs (counted %lld)",
				    pamt_pages, pairs,
				    (long long)atomic64_read(&pamt_fake.pairs));
		bad++;
	}
	return bad;
}

/**
 * pamt_fake_inject() - set up failures for one SEAMCALL
 * @op: which call
 * @status: status to return; 0 turns injection off
 * @count: fail the next @count calls
 * @rate_ppm: and/or fail this share of calls, in parts per million
 */
void pamt_fake_inject(enum pamt_fake_op op, u64 status, unsigned int count,
		      unsigned int rate_ppm)
{
	struct pamt_fake_inject *inj = &pamt_fake.inject[op];

	inj->status = status;
	atomic_set(&inj->count, count);
	inj->rate_ppm = rate_ppm;
}

/**
 * pamt_fake_stall() - hold every call of @op open until released
 * @op: the SEAMCALL
 * @on: true to hold calls that start from now on, false to let them go
 *
 * A held call waits after its latency, with its range locks held: the
 * caller's slot stays in transition until the test releases it.
 */
void pamt_fake_stall(enum pamt_fake_op op, bool on)
{
	atomic_set(&pamt_fake.stall[op], on);
}

/**
 * pamt_fake_set_latency() - model the latency of one SEAMCALL
 * @op: which call
 * @min_ns: floor
 * @avg_ns: mean
 * @max_ns: ceiling, 0 for none
 */
void pamt_fake_set_latency(enum pamt_fake_op op, u64 min_ns, u64 avg_ns,
			   u64 max_ns)
{
	pamt_fake.lat[op].min_ns = min_ns;
	pamt_fake.lat[op].avg_ns = avg_ns;
	pamt_fake.lat[op].max_ns = max_ns;
}

/**
 * pamt_fake_init_ranges() - bring up a fake module covering @ranges
 * @ranges: covered pfn ranges, sorted, 2M aligned, not overlapping; as
 *	far apart as they like: the module's state covers only them
 * @nr: entries in @ranges, 1 to PAMT_FAKE_MAX_PIECES
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int pamt_fake_init_ranges(const struct tdx_pamt_range *ranges, unsigned int nr)
{
	unsigned long pages = 0, i, nr_ranges;
	unsigned int j;

	if (!nr || nr > PAMT_FAKE_MAX_PIECES)
		return -EINVAL;
	for (j = 0; j < nr; j++) {
		if (ranges[j].start_pfn % TDX_PAMT_PAGES_PER_SLOT ||
		    ranges[j].end_pfn % TDX_PAMT_PAGES_PER_SLOT ||
		    ranges[j].start_pfn >= ranges[j].end_pfn ||
		    (j && ranges[j].start_pfn < ranges[j - 1].end_pfn))
			return -EINVAL;
	}

	memset(&pamt_fake, 0, sizeof(pamt_fake));
	for (j = 0; j < nr; j++) {
		pamt_fake.pieces[j].start_pfn = ranges[j].start_pfn;
		pamt_fake.pieces[j].end_pfn = ranges[j].end_pfn;
		pamt_fake.pieces[j].first = pages;
		pages += ranges[j].end_pfn - ranges[j].start_pfn;
	}
	nr_ranges = pages / TDX_PAMT_PAGES_PER_SLOT;
	atomic64_set(&pamt_fake_rng,
		     (s64)((u64)get_random_u32() << 32 | get_random_u32()));
	pamt_fake.ranges = kvcalloc(nr_ranges, sizeof(*pamt_fake.ranges),
				    GFP_KERNEL);
	pamt_fake.td_map = kvcalloc(BITS_TO_LONGS(pages), sizeof(long),
				    GFP_KERNEL);
	pamt_fake.pamt_map = kvcalloc(BITS_TO_LONGS(pages), sizeof(long),
				      GFP_KERNEL);
	pamt_fake.lock_map = kvcalloc(BITS_TO_LONGS(pages), sizeof(long),
				      GFP_KERNEL);
	if (!pamt_fake.ranges || !pamt_fake.td_map || !pamt_fake.pamt_map ||
	    !pamt_fake.lock_map) {
		pamt_fake_exit();
		return -ENOMEM;
	}
	for (i = 0; i < nr_ranges; i++) {
		atomic_set(&pamt_fake.ranges[i].lock, 0);
		atomic_set(&pamt_fake.ranges[i].td_pages, 0);
	}
	pamt_fake.start_pfn = ranges[0].start_pfn;
	pamt_fake.end_pfn = ranges[nr - 1].end_pfn;
	pamt_fake.nr_pages = pages;
	pamt_fake.nr_pieces = nr;
	return 0;
}

/**
 * pamt_fake_init() - bring up a fake module covering [@start_pfn, @end_pfn)
 * @start_pfn: first pfn, 2M aligned
 * @end_pfn: one past the last, 2M aligned
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int pamt_fake_init(unsigned long start_pfn, unsigned long end_pfn)
{
	struct tdx_pamt_range r = { .start_pfn = start_pfn, .end_pfn = end_pfn };

	return pamt_fake_init_ranges(&r, 1);
}

/**
 * pamt_fake_exit() - tear the fake module down
 */
void pamt_fake_exit(void)
{
	kvfree(pamt_fake.ranges);
	kvfree(pamt_fake.td_map);
	kvfree(pamt_fake.pamt_map);
	kvfree(pamt_fake.lock_map);
	pamt_fake.lock_map = NULL;
	pamt_fake.ranges = NULL;
	pamt_fake.td_map = NULL;
	pamt_fake.pamt_map = NULL;
	pamt_fake.start_pfn = 0;
	pamt_fake.end_pfn = 0;
	pamt_fake.nr_pages = 0;
	pamt_fake.nr_pieces = 0;
}

/**
 * pamt_fake_evict() - REMOVE an idle range's pair, for a test
 * @pfn: a page of the range
 *
 * Not the module's: what the cache's shrinker does to one slot, through
 * its slot layer, on demand.  The pair goes to this CPU's magazine.
 *
 * Return: 0 once the range has no pair; -EBUSY if it is in use, the
 * REMOVE stayed BUSY or another CPU took it over; -EINVAL if @pfn is not
 * covered; -EIO if LEAKED or the REMOVE failed.
 */
int pamt_fake_evict(unsigned long pfn)
{
	atomic_t *slot = pamt_slot_lookup(pfn);
	struct tdx_pamt_pair pair;
	int old, ret;

	if (!slot)
		return pamt.enabled ? -EINVAL : 0;
	old = atomic_read(slot);
	do {
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
		ret = pamt_slot_remove(slot, pamt_slot_idx(slot), &old, &pair);
	} while (ret == -EAGAIN);
	if (!ret) {
		pamt_pair_uncharge(&pair);
		pamt_mag_push(&pair);
	}
	return ret == -ENOENT ? 0 : ret;
}
