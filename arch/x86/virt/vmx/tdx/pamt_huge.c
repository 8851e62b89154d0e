// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, for a future huge-page series: a 2M range split
 * by DEMOTE takes a pair, one merged by PROMOTE gives it back.  KVM in
 * 7.3 maps private memory at 4K only and calls none of this.
 */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include "pamt_internal.h"

/**
 * tdx_pamt_pair_take() - take a free pair, outside any slot
 * @pair: filled on success
 * @res: reserve to fall back on, or NULL
 * @gfp: allocation flags for when both run dry
 *
 * The slot of no range learns of it: a split must use tdx_pamt_demote(),
 * which takes its pair the same way and installs it in the slot.
 *
 * Return: 0; -ENOMEM; -EOPNOTSUPP while the cache is off, when DEMOTE
 * takes no pair.
 */
int tdx_pamt_pair_take(struct tdx_pamt_pair *pair,
		       struct tdx_pamt_cache *res, gfp_t gfp)
{
	might_alloc(gfp);
	if (!pamt.enabled)
		return -EOPNOTSUPP;
	if (pamt_mag_pop(pair))
		return 0;
	/* A pair outside any range is charged to no memcg. */
	if (res && res->nr) {
		*pair = res->pairs[--res->nr];
		pamt_pair_uncharge(pair);
		return 0;
	}
	return pamt_pair_alloc_pages(pair, gfp & ~__GFP_ACCOUNT);
}

/**
 * tdx_pamt_pair_give() - give back a pair taken by tdx_pamt_pair_take()
 * @pair: a pair the module does not hold
 *
 * A merge must use tdx_pamt_promote(), which empties the slot and gives
 * the pair PROMOTE handed back to the magazines itself.
 */
void tdx_pamt_pair_give(const struct tdx_pamt_pair *pair)
{
	/* No pair can be taken while the cache is off. */
	if (WARN_ON_ONCE(!pamt.enabled))
		return;
	pamt_mag_push(pair);
}

/**
 * tdx_pamt_evict() - remove the pair of an idle range, to map it at 2M
 * @pfn: any page of the range
 *
 * Return: 0 if the range has no pair now; -EBUSY if it is in use, the
 * REMOVE stayed BUSY or another CPU took it over; -EINVAL if @pfn is not
 * covered; -EIO if LEAKED.
 */
int tdx_pamt_evict(unsigned long pfn)
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
	if (!ret)
		pamt_pair_release(&pair, PAMT_PAIR_TO_MAG);
	else if (ret != -ENOENT)
		return ret;
	pamt_stat_inc(EVICT);
	return 0;
}

/**
 * tdx_pamt_demote() - give a 2M range its pair as DEMOTE splits its mapping
 * @pfn: any page of the range, which a TD maps at 2M
 * @res: pairs to use before this CPU's magazines, or NULL
 * @demote: issues TDH.MEM.PAGE.DEMOTE with the pair in R12/R13
 * @arg: passed to @demote
 *
 * A range mapped at 2M has no pair (tdx_pamt_evict() emptied it), so its
 * slot is EMPTY.  Takes a pair (@res, this CPU's magazines, then the page
 * allocator without sleeping), then the slot: EMPTY -> ADDING, as a get
 * about to ADD does, so that no get, evict or shrinker acts on the range
 * while the module installs the pair.  Calls @demote inside that
 * transition, and on success publishes INSTALLED with
 * TDX_PAMT_PAGES_PER_SLOT references, one for each 4K page the split
 * maps: each is dropped by the tdx_pamt_put() that follows that page's
 * TDH.MEM.PAGE.REMOVE, as for a page mapped at 4K from the start.  On
 * failure the slot is EMPTY again and the pair goes back where it came
 * from.  Without Dynamic PAMT, calls @demote with a NULL pair.
 *
 * Context: as tdx_pamt_get(); @demote runs with preemption disabled.
 *
 * Return: 0; -EBUSY, changing nothing, if the range has a pair or is in
 * transition, or if @demote answered TDX_OPERAND_BUSY; -ENOMEM if no pair
 * could be found; -EINVAL if @pfn is not covered; -EIO if @demote failed
 * otherwise.
 */
int tdx_pamt_demote(unsigned long pfn, struct tdx_pamt_cache *res,
		    tdx_pamt_demote_fn demote, void *arg)
{
	atomic_t *slot = pamt_slot_lookup(pfn);
	struct tdx_pamt_pair pair;
	enum pamt_pair_src src;
	int old, ret;
	u64 status;

	if (!slot) {
		if (pamt.enabled)
			return -EINVAL;
		return pamt_status_errno(demote(NULL, arg));
	}

	/* EMPTY: no flag; a count is a get's, which the split serves too. */
	old = atomic_read(slot);
	if (old & ~PAMT_SLOT_REF_MASK)
		return (old & PAMT_SLOT_HOLE) ? -EINVAL : -EBUSY;
	/* The pair first, while we may still sleep on RT. */
	src = pamt_slot_pair_get(&pair, res);
	if (src == PAMT_PAIR_NONE)
		return -ENOMEM;

	pamt_transit_begin();
	if (!atomic_try_cmpxchg_acquire(slot, &old, old | PAMT_SLOT_TRANSIT)) {
		pamt_transit_end();
		pamt_slot_pair_put(&pair, src, res);
		return -EBUSY;
	}
	old |= PAMT_SLOT_TRANSIT;
	status = demote(&pair, arg);
	ret = pamt_status_errno(status);
	if (ret) {
		pamt_slot_publish(slot, old, old & ~PAMT_SLOT_TRANSIT);
	} else {
		pamt_stat_inc(INSTALLED);
		pamt_slot_publish(slot, old, (old & ~PAMT_SLOT_TRANSIT) +
				  (PAMT_SLOT_INSTALLED |
				   TDX_PAMT_PAGES_PER_SLOT));
		pamt_stat_inc(DEMOTE);
	}
	pamt_transit_end();
	if (!ret)
		pamt_shrink_installed(pamt_slot_idx(slot), &pair);
	else if (!pamt_pair_refused(status, &pair))
		pamt_slot_pair_put(&pair, src, res);
	return ret;
}

/**
 * tdx_pamt_promote() - take a 2M range's pair back as PROMOTE merges it
 * @pfn: any page of the range, which a TD maps as 512 4K pages
 * @promote: issues TDH.MEM.PAGE.PROMOTE and fills the pair it hands back
 * @arg: passed to @promote
 *
 * The range must be ACTIVE with exactly TDX_PAMT_PAGES_PER_SLOT
 * references, one per 4K page about to be merged, and nothing else: any
 * other reference means a page of the range is not one of the 512.
 * Takes the slot (ACTIVE -> REMOVING: gets wait, evict and the shrinker
 * back off), calls @promote inside that transition, and on success
 * publishes EMPTY, the 512 references gone with the 4K mappings, and
 * gives the pair to this CPU's magazines, unless it is not two distinct
 * valid pages: then it warns and leaks them.  On failure the slot is as
 * it was.  Without Dynamic PAMT, calls @promote with a NULL pair.
 *
 * Context: as tdx_pamt_put() minus softirq; @promote runs with preemption
 * disabled.
 *
 * Return: 0; -EBUSY, changing nothing, if the slot does not hold exactly
 * the 512 references, is in transition or LEAKED, or if @promote answered
 * TDX_OPERAND_BUSY; -EINVAL if @pfn is not covered; -EIO if @promote
 * failed otherwise.
 */
int tdx_pamt_promote(unsigned long pfn, tdx_pamt_promote_fn promote,
		     void *arg)
{
	const int merged = PAMT_SLOT_INSTALLED | TDX_PAMT_PAGES_PER_SLOT;
	atomic_t *slot = pamt_slot_lookup(pfn);
	struct tdx_pamt_pair pair = { };
	int old, ret;
	u64 status;

	if (!slot) {
		if (pamt.enabled)
			return -EINVAL;
		return pamt_status_errno(promote(NULL, arg));
	}

	old = atomic_read(slot);
	if (old != merged)
		return (old & PAMT_SLOT_HOLE) ? -EINVAL : -EBUSY;

	/* No reference in the word while owned: a get waits, a put warns. */
	pamt_transit_begin();
	if (!atomic_try_cmpxchg_acquire(slot, &old, PAMT_SLOT_INSTALLED |
							 PAMT_SLOT_TRANSIT)) {
		pamt_transit_end();
		return -EBUSY;
	}
	status = promote(&pair, arg);
	ret = pamt_status_errno(status);
	if (ret) {
		pamt_slot_publish(slot, PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT,
				  merged);
	} else {
		pamt_stat_add(INSTALLED, -1);
		pamt_slot_publish(slot, PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT,
				  0);
		pamt_stat_inc(PROMOTE);
	}
	pamt_transit_end();
	if (ret)
		return ret;
	/* As for REMOVE: pages we cannot name are leaked, never touched. */
	if (WARN_ONCE(!pair.pfn[0] || !pair.pfn[1] ||
		      pair.pfn[0] == pair.pfn[1] ||
		      !pfn_valid(pair.pfn[0]) || !pfn_valid(pair.pfn[1]),
		      "tdx-pamt: PROMOTE on pfn %#lx handed back %#lx, %#lx\n",
		      pfn, pair.pfn[0], pair.pfn[1]))
		pamt_stat_inc(LEAKED);
	else
		pamt_pair_release(&pair, PAMT_PAIR_TO_MAG);
	return 0;
}
