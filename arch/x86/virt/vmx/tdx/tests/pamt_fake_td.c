// SPDX-License-Identifier: GPL-2.0
/*
 * The fake TDX module's TD pages: 4K pages given to a TD (PAGE.AUG,
 * PAGE.ADD, control pages) and taken back (PAGE.REMOVE), and 2M mappings
 * with DEMOTE and PROMOTE, which hand the module a range's pair and take
 * it back.  The rules are in Documentation/arch/x86/tdx-dpamt.rst ("The
 * fake TDX module"); PAMT.ADD and PAMT.REMOVE are in pamt_fake.c.
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/printk.h>
#include "pamt_fake.h"

/*
 * A 4K page's locks, as the module takes them for PAGE.AUG, PAGE.ADD and
 * PAGE.REMOVE: its range's 2M entry shared, its own 4K entry exclusively;
 * either conflict is BUSY.  Return: TDX_PAMT_SUCCESS with both held, or
 * the status to answer.
 */
static u64 pamt_fake_lock_4k(unsigned long pfn, struct pamt_fake_range **r,
			     unsigned long *bit)
{
	if (!pamt_fake_covered(pfn))
		return TDX_PAMT_OPERAND_ADDR_RANGE;
	*r = pamt_fake_range(pfn);
	*bit = pamt_fake_bit(pfn);
	if (!pamt_fake_trylock_shared(*r))
		return TDX_PAMT_OPERAND_BUSY;
	if (test_and_set_bit_lock(*bit, pamt_fake.lock_map)) {
		pamt_fake_unlock_shared(*r);
		return TDX_PAMT_OPERAND_BUSY;
	}
	return TDX_PAMT_SUCCESS;
}

static void pamt_fake_unlock_4k(struct pamt_fake_range *r, unsigned long bit)
{
	clear_bit_unlock(bit, pamt_fake.lock_map);
	pamt_fake_unlock_shared(r);
}

/*
 * A 4K page goes to a TD: PAGE.AUG, PAGE.ADD, or a control page (TDR,
 * TDCS, TDVPR, TDCX), under pamt_fake_lock_4k().  A page in the PAMT page
 * bitmap is refused with PAGE_METADATA_INCORRECT: the host handed a TD a
 * page it had lent the module, a violation.
 */
static u64 pamt_fake_td_page_add(unsigned long pfn, const char *what)
{
	struct pamt_fake_range *r;
	unsigned long bit;
	u64 status;

	status = pamt_fake_lock_4k(pfn, &r, &bit);
	if (status != TDX_PAMT_SUCCESS)
		return status;
	/*
	 * The page's own metadata first: a pair page is refused whether or
	 * not its range has a pair.
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
	pamt_fake_unlock_4k(r, bit);
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
	u64 status;

	status = pamt_fake_lock_4k(pfn, &r, &bit);
	if (status != TDX_PAMT_SUCCESS)
		return status;
	if (!test_and_clear_bit(bit, pamt_fake.td_map))
		status = TDX_PAMT_PAGE_NOT_FREE;
	else
		atomic_dec(&r->td_pages);
	pamt_fake_unlock_4k(r, bit);
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
