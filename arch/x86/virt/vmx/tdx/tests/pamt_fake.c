// SPDX-License-Identifier: GPL-2.0
/*
 * A fake TDX module: PAMT.ADD and PAMT.REMOVE as described in
 * Documentation/arch/x86/tdx-dpamt.rst ("The fake TDX module").
 *
 * Locking follows the real module: PAMT.ADD and PAMT.REMOVE hold the
 * target 2M range exclusively and the ranges of the two pair pages shared;
 * a conflict is TDX_OPERAND_BUSY, never a wait.  PAGE.AUG/PAGE.REMOVE hold
 * their page's range shared.  Every call checks the invariants it can see
 * and counts and logs any breach in pamt_fake.violations.
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

#define pamt_fake_violation(fmt, ...) do {				\
	atomic64_inc(&pamt_fake.violations);				\
	pr_err("tdx-pamt-fake: VIOLATION: " fmt "\n", ##__VA_ARGS__);	\
} while (0)

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

static bool pamt_fake_covered(unsigned long pfn)
{
	return pamt_fake_piece(pfn);
}

/* The bit of a covered @pfn in the bitmaps. */
static unsigned long pamt_fake_bit(unsigned long pfn)
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

static struct pamt_fake_range *pamt_fake_range(unsigned long pfn)
{
	return &pamt_fake.ranges[pamt_fake_bit(pfn) / TDX_PAMT_PAGES_PER_SLOT];
}

/*
 * Only PAMT.ADD and PAMT.REMOVE of a range take it exclusively, so finding
 * it held exclusively means two CPUs own one slot's transition: the bug
 * the slot layer's TRANSIT bit exists to prevent.  The module answers
 * BUSY; the fake also reports it.
 */
static bool pamt_fake_trylock_excl(struct pamt_fake_range *r,
				   unsigned long base)
{
	int old = atomic_cmpxchg(&r->lock, 0, PAMT_FAKE_RANGE_EXCL);

	if (old == PAMT_FAKE_RANGE_EXCL)
		pamt_fake_violation("concurrent PAMT.ADD/REMOVE on pfn %#lx", base);
	return old == 0;
}

static void pamt_fake_unlock_excl(struct pamt_fake_range *r)
{
	atomic_set_release(&r->lock, 0);
}

static bool pamt_fake_trylock_shared(struct pamt_fake_range *r)
{
	int v = atomic_read(&r->lock);

	do {
		if (v < 0)
			return false;
	} while (!atomic_try_cmpxchg_acquire(&r->lock, &v, v + 1));
	return true;
}

static void pamt_fake_unlock_shared(struct pamt_fake_range *r)
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
 * The fake module's randomness: a lock-free splitmix64 sequence, seeded
 * at init.  Not get_random_u32(): it takes a local lock and, to refill,
 * base_crng's spinlock_t, which sleep on PREEMPT_RT, while a SEAMCALL runs
 * with preemption and IRQs off.
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

static void pamt_fake_delay(enum pamt_fake_op op)
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
static u64 pamt_fake_injected(enum pamt_fake_op op)
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
static bool pamt_fake_lock_pair(struct pamt_fake_range *target,
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

static void pamt_fake_unlock_pair(struct pamt_fake_range *target,
				  const struct tdx_pamt_pair *pair)
{
	struct pamt_fake_range *r0 = pamt_fake_range(pair->pfn[0]);
	struct pamt_fake_range *r1 = pamt_fake_range(pair->pfn[1]);

	if (r1 != target)
		pamt_fake_unlock_shared(r1);
	if (r0 != target)
		pamt_fake_unlock_shared(r0);
}

static u64 pamt_fake_result(enum pamt_fake_op op, u64 status)
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
 * The locks of an ADD or a DEMOTE on @base with @pair, as the module takes
 * them: the target range exclusive, the pair pages' ranges shared.  On
 * success *@rp is the target range, locked; otherwise the status to
 * answer, nothing held.
 */
static u64 pamt_fake_lock_for_pair(enum pamt_fake_op op, unsigned long base,
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
 * Hand @pair to range @r, as ADD and DEMOTE do: each page must be free (no
 * TD page, no PAMT page) and the two must differ.  Then both become PAMT
 * pages in the bitmap.
 */
static u64 pamt_fake_install_pair(struct pamt_fake_range *r,
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

	if (r->has_pair || r->mapped_2m) {
		pamt_fake_violation("PAMT.ADD on pfn %#lx, which has a pair or a 2M mapping",
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

/*
 * A 4K page goes to a TD: PAGE.AUG, PAGE.ADD, or a control page (TDR,
 * TDCS, TDVPR, TDCX).  The module holds the page's 2M entry shared and its
 * 4K entry exclusively; either conflict is BUSY.  A page in the PAMT page
 * bitmap is refused with PAGE_METADATA_INCORRECT: the host handed a TD a
 * page it had lent the module, a violation.
 */
static u64 pamt_fake_td_page_add(unsigned long pfn, const char *what)
{
	struct pamt_fake_range *r;
	unsigned long bit;
	u64 status = TDX_PAMT_SUCCESS;

	if (!pamt_fake_covered(pfn))
		return TDX_PAMT_OPERAND_ADDR_RANGE;
	r = pamt_fake_range(pfn);
	bit = pamt_fake_bit(pfn);
	if (!pamt_fake_trylock_shared(r))
		return TDX_PAMT_OPERAND_BUSY;
	if (test_and_set_bit_lock(bit, pamt_fake.lock_map)) {
		pamt_fake_unlock_shared(r);
		return TDX_PAMT_OPERAND_BUSY;
	}
	/*
	 * The page's own metadata first: a pair page is refused whether or
	 * not its range has a pair (an arena chunk's range never has one).
	 */
	if (test_bit(bit, pamt_fake.pamt_map)) {
		pamt_fake_violation("%s of pfn %#lx, a PAMT page in use",
				    what, pfn);
		status = TDX_PAMT_PAGE_METADATA_INCORRECT;
	} else if (!r->has_pair) {
		pamt_fake_violation("%s of pfn %#lx: range has no pair",
				    what, pfn);
		status = TDX_PAMT_MISSING_PAGE_PAIR;
	} else if (test_and_set_bit(bit, pamt_fake.td_map)) {
		status = TDX_PAMT_PAGE_NOT_FREE;
	} else {
		atomic_inc(&r->td_pages);
	}
	clear_bit_unlock(bit, pamt_fake.lock_map);
	pamt_fake_unlock_shared(r);
	return status;
}

/**
 * pamt_fake_page_aug() - a TD starts using a 4K page, as PAGE.AUG would
 * @pfn: the page
 *
 * Return: TDX_PAMT_SUCCESS; MISSING_PAGE_PAIR (a violation) if its range
 * has no pair; PAGE_METADATA_INCORRECT (a violation) if the page is a PAMT
 * page; PAGE_NOT_FREE if the page is in use; OPERAND_BUSY if the range is
 * locked exclusively or the page's 4K entry is locked; OPERAND_ADDR_RANGE
 * if not covered.
 */
u64 pamt_fake_page_aug(unsigned long pfn)
{
	return pamt_fake_td_page_add(pfn, "PAGE.AUG");
}

/**
 * pamt_fake_page_add() - a TD's initial 4K page, as PAGE.ADD would
 * @pfn: the page
 *
 * Return: as pamt_fake_page_aug().
 */
u64 pamt_fake_page_add(unsigned long pfn)
{
	return pamt_fake_td_page_add(pfn, "PAGE.ADD");
}

/**
 * pamt_fake_control_add() - a TD control page (TDR, TDCS, TDVPR, TDCX)
 * @pfn: the page
 *
 * The module keeps control pages in the same PAMT entries as TD pages;
 * pamt_fake_page_remove() gives one back.
 *
 * Return: as pamt_fake_page_aug().
 */
u64 pamt_fake_control_add(unsigned long pfn)
{
	return pamt_fake_td_page_add(pfn, "control page");
}

/**
 * pamt_fake_page_remove() - a TD stops using a 4K page
 * @pfn: the page
 *
 * Locks as pamt_fake_page_aug().
 *
 * Return: TDX_PAMT_SUCCESS; OPERAND_BUSY on a lock conflict; an error if
 * the page was not a TD page.
 */
u64 pamt_fake_page_remove(unsigned long pfn)
{
	struct pamt_fake_range *r;
	unsigned long bit;
	u64 status = TDX_PAMT_SUCCESS;

	if (!pamt_fake_covered(pfn))
		return TDX_PAMT_OPERAND_ADDR_RANGE;
	r = pamt_fake_range(pfn);
	bit = pamt_fake_bit(pfn);
	if (!pamt_fake_trylock_shared(r))
		return TDX_PAMT_OPERAND_BUSY;
	if (test_and_set_bit_lock(bit, pamt_fake.lock_map)) {
		pamt_fake_unlock_shared(r);
		return TDX_PAMT_OPERAND_BUSY;
	}
	if (!test_and_clear_bit(bit, pamt_fake.td_map))
		status = TDX_PAMT_PAGE_NOT_FREE;
	else
		atomic_dec(&r->td_pages);
	clear_bit_unlock(bit, pamt_fake.lock_map);
	pamt_fake_unlock_shared(r);
	return status;
}

/**
 * pamt_fake_is_pamt_page() - whether @pfn is in the PAMT page bitmap
 * @pfn: the page
 *
 * Return: true if the module holds it as a pair page.
 */
bool pamt_fake_is_pamt_page(unsigned long pfn)
{
	return pamt_fake_covered(pfn) &&
	       test_bit(pamt_fake_bit(pfn), pamt_fake.pamt_map);
}

/* Whether any of the 512 pages of @base's range is set in @map. */
static bool pamt_fake_range_any(const unsigned long *map, unsigned long base)
{
	unsigned long bit = pamt_fake_bit(base);

	return find_next_bit(map, bit + TDX_PAMT_PAGES_PER_SLOT, bit) <
	       bit + TDX_PAMT_PAGES_PER_SLOT;
}

/**
 * pamt_fake_page_aug_2m() - a TD maps a whole 2M range, as PAGE.AUG at 2M
 * @base: the range's first pfn
 *
 * The module needs the range free of a pair and of PAMT pages (its PAMT
 * page bitmap all zero), and every page unused.  It holds the range
 * exclusively, so an ADD whose pair pages lie in the range (shared lock)
 * makes it BUSY.  Neither refusal is a violation: the host cannot see the
 * bitmap, and evicting the range's idle pair is its part.
 *
 * Return: TDX_PAMT_SUCCESS; HPA_RANGE_NOT_FREE if the range has a pair;
 * PAGE_METADATA_INCORRECT if a page of the range is a PAMT page;
 * PAGE_NOT_FREE if a page is in use; OPERAND_BUSY if the range is locked;
 * OPERAND_ADDR_RANGE if not covered or not 2M aligned.
 */
u64 pamt_fake_page_aug_2m(unsigned long base)
{
	unsigned long bit = pamt_fake_bit(base), i;
	struct pamt_fake_range *r;
	u64 status = TDX_PAMT_SUCCESS;

	if (!pamt_fake_covered(base) || base % TDX_PAMT_PAGES_PER_SLOT)
		return TDX_PAMT_OPERAND_ADDR_RANGE;
	r = pamt_fake_range(base);
	if (!pamt_fake_trylock_excl(r, base))
		return TDX_PAMT_OPERAND_BUSY;
	if (r->has_pair)
		status = TDX_PAMT_HPA_RANGE_NOT_FREE;
	else if (pamt_fake_range_any(pamt_fake.pamt_map, base))
		status = TDX_PAMT_PAGE_METADATA_INCORRECT;
	else if (r->mapped_2m || pamt_fake_range_any(pamt_fake.td_map, base))
		status = TDX_PAMT_PAGE_NOT_FREE;
	if (!status) {
		for (i = 0; i < TDX_PAMT_PAGES_PER_SLOT; i++)
			set_bit(bit + i, pamt_fake.td_map);
		WRITE_ONCE(r->mapped_2m, true);
	}
	pamt_fake_unlock_excl(r);
	return status;
}

/**
 * pamt_fake_page_remove_2m() - a TD stops mapping a 2M range
 * @base: the range's first pfn
 *
 * Return: TDX_PAMT_SUCCESS, or an error if the range is not mapped at 2M.
 */
u64 pamt_fake_page_remove_2m(unsigned long base)
{
	unsigned long bit = pamt_fake_bit(base), i;
	struct pamt_fake_range *r;

	if (!pamt_fake_covered(base) || base % TDX_PAMT_PAGES_PER_SLOT)
		return TDX_PAMT_OPERAND_ADDR_RANGE;
	r = pamt_fake_range(base);
	if (!pamt_fake_trylock_excl(r, base))
		return TDX_PAMT_OPERAND_BUSY;
	if (!r->mapped_2m) {
		pamt_fake_unlock_excl(r);
		return PAMT_FAKE_NOT_MAPPED_2M;
	}
	for (i = 0; i < TDX_PAMT_PAGES_PER_SLOT; i++)
		clear_bit(bit + i, pamt_fake.td_map);
	WRITE_ONCE(r->mapped_2m, false);
	pamt_fake_unlock_excl(r);
	return TDX_PAMT_SUCCESS;
}

/**
 * pamt_fake_page_demote() - TDH.MEM.PAGE.DEMOTE of a range mapped at 2M
 * @base: the range's first pfn
 * @pair: the pair the host passes in R12/R13
 *
 * Locks as PAMT.ADD does: the range exclusively, the pair pages' ranges
 * shared.  On success the range holds @pair and its 512 pages are mapped
 * at 4K.
 *
 * Return: TDX_PAMT_SUCCESS; MISSING_PAGE_PAIR without a pair;
 * PAMT_FAKE_NOT_MAPPED_2M if the range is not mapped at 2M; PAGE_NOT_FREE
 * (a violation) if a pair page is in use; HPA_RANGE_NOT_FREE (a violation)
 * if the range has a pair; OPERAND_BUSY on a lock conflict;
 * OPERAND_ADDR_RANGE if not covered.
 */
u64 pamt_fake_page_demote(unsigned long base, const struct tdx_pamt_pair *pair)
{
	struct pamt_fake_range *r;
	u64 status;

	atomic64_inc(&pamt_fake.calls[PAMT_FAKE_DEMOTE]);
	status = pamt_fake_injected(PAMT_FAKE_DEMOTE);
	if (status)
		return status;
	if (!pair)
		return pamt_fake_result(PAMT_FAKE_DEMOTE,
					TDX_PAMT_MISSING_PAGE_PAIR);
	status = pamt_fake_lock_for_pair(PAMT_FAKE_DEMOTE, base, pair, &r);
	if (status)
		return pamt_fake_result(PAMT_FAKE_DEMOTE, status);

	pamt_fake_delay(PAMT_FAKE_DEMOTE);

	if (r->has_pair) {
		pamt_fake_violation("DEMOTE on pfn %#lx, which has a pair", base);
		status = TDX_PAMT_HPA_RANGE_NOT_FREE;
		goto out;
	}
	if (!r->mapped_2m) {
		status = PAMT_FAKE_NOT_MAPPED_2M;
		goto out;
	}
	status = pamt_fake_install_pair(r, base, pair, "DEMOTE");
	if (status)
		goto out;
	WRITE_ONCE(r->mapped_2m, false);
	atomic_set(&r->td_pages, TDX_PAMT_PAGES_PER_SLOT);
out:
	pamt_fake_unlock_pair(r, pair);
	pamt_fake_unlock_excl(r);
	return pamt_fake_result(PAMT_FAKE_DEMOTE, status);
}

/**
 * pamt_fake_page_promote() - TDH.MEM.PAGE.PROMOTE of 512 4K pages to 2M
 * @base: the range's first pfn
 * @pair: filled with the pair the module hands back
 *
 * Return: TDX_PAMT_SUCCESS; MISSING_PAGE_PAIR (a violation: only a range
 * with 4K pages can be promoted, and those need the pair) if the range
 * has no pair; PAMT_FAKE_PROMOTE_REFUSED unless all 512 pages are mapped
 * at 4K; OPERAND_BUSY on a lock conflict; OPERAND_ADDR_RANGE if not
 * covered.
 */
u64 pamt_fake_page_promote(unsigned long base, struct tdx_pamt_pair *pair)
{
	struct pamt_fake_range *r;
	struct tdx_pamt_pair held;
	u64 status;

	atomic64_inc(&pamt_fake.calls[PAMT_FAKE_PROMOTE]);
	status = pamt_fake_injected(PAMT_FAKE_PROMOTE);
	if (status)
		return status;
	if (!pamt_fake_covered(base) || base % TDX_PAMT_PAGES_PER_SLOT)
		return pamt_fake_result(PAMT_FAKE_PROMOTE,
					TDX_PAMT_OPERAND_ADDR_RANGE);

	r = pamt_fake_range(base);
	if (!pamt_fake_trylock_excl(r, base))
		return pamt_fake_result(PAMT_FAKE_PROMOTE, TDX_PAMT_OPERAND_BUSY);
	if (!r->has_pair) {
		pamt_fake_unlock_excl(r);
		pamt_fake_violation("PROMOTE on pfn %#lx, which has no pair", base);
		return pamt_fake_result(PAMT_FAKE_PROMOTE,
					TDX_PAMT_MISSING_PAGE_PAIR);
	}
	held = r->pair;
	if (!pamt_fake_lock_pair(r, &held)) {
		pamt_fake_unlock_excl(r);
		return pamt_fake_result(PAMT_FAKE_PROMOTE, TDX_PAMT_OPERAND_BUSY);
	}

	pamt_fake_delay(PAMT_FAKE_PROMOTE);

	if (atomic_read(&r->td_pages) != TDX_PAMT_PAGES_PER_SLOT) {
		status = PAMT_FAKE_PROMOTE_REFUSED;
		goto out;
	}
	clear_bit(pamt_fake_bit(held.pfn[0]), pamt_fake.pamt_map);
	clear_bit(pamt_fake_bit(held.pfn[1]), pamt_fake.pamt_map);
	WRITE_ONCE(r->has_pair, false);
	atomic_set(&r->td_pages, 0);
	WRITE_ONCE(r->mapped_2m, true);
	atomic64_dec(&pamt_fake.pairs);
	*pair = held;
	status = TDX_PAMT_SUCCESS;
out:
	pamt_fake_unlock_pair(r, &held);
	pamt_fake_unlock_excl(r);
	return pamt_fake_result(PAMT_FAKE_PROMOTE, status);
}

/**
 * pamt_fake_range_mapped_2m() - whether a TD maps @pfn's range at 2M
 * @pfn: any page of the range
 *
 * Return: true if it does; false if not or not covered.
 */
bool pamt_fake_range_mapped_2m(unsigned long pfn)
{
	return pamt_fake_covered(pfn) &&
	       READ_ONCE(pamt_fake_range(pfn)->mapped_2m);
}

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
		if (r->mapped_2m && (r->has_pair || atomic_read(&r->td_pages))) {
			pamt_fake_violation("range %lu mapped 2M with a pair or 4K pages",
					    i);
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
int pamt_fake_init_ranges(const struct tdx_pamt_range *ranges,
			  unsigned int nr)
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
