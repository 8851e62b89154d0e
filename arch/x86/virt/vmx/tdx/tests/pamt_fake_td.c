// SPDX-License-Identifier: GPL-2.0
/*
 * The fake TDX module's TD pages: 4K pages given to a TD (PAGE.AUG,
 * PAGE.ADD, control pages) and taken back (PAGE.REMOVE).  The rules are
 * in Documentation/arch/x86/tdx-dpamt.rst ("The fake TDX module");
 * PAMT.ADD and PAMT.REMOVE are in pamt_fake.c.  Also the reclaim a test
 * drives: the shrinker's callbacks called as reclaim calls them.
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/memcontrol.h>
#include <linux/nodemask.h>
#include <linux/printk.h>
#include <linux/shrinker.h>
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

/**
 * pamt_fake_idle_pairs() - idle memory, as the idle cap counts it
 *
 * Return: idle slots plus free pairs in the magazines; 0 with the cache off.
 */
unsigned long pamt_fake_idle_pairs(void)
{
	u64 v[TDX_PAMT_STAT_NR];

	tdx_pamt_read_stats(v);
	return v[TDX_PAMT_STAT_IDLE_SLOTS] + v[TDX_PAMT_STAT_CACHED_PAIRS];
}

/**
 * pamt_fake_shrink_count() - the shrinker's count_objects, every node and
 *	memcg, summed as reclaim would see it
 *
 * Return: objects counted.
 */
unsigned long pamt_fake_shrink_count(void)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct shrinker *s = pamt.shrinker;
	unsigned long n = 0, c;

	if (!s)
		return 0;
	for_each_node_state(sc.nid, N_NORMAL_MEMORY) {
		sc.memcg = mem_cgroup_iter(NULL, NULL, NULL);
		do {
			c = s->count_objects(s, &sc);
			if (c != SHRINK_EMPTY)
				n += c;
		} while ((sc.memcg = mem_cgroup_iter(NULL, sc.memcg, NULL)));
	}
	return n;
}

/**
 * pamt_fake_shrink_scan() - the shrinker's scan_objects on every node and
 *	memcg in turn, each asked for what is still wanted
 * @nr: objects wanted
 * @scanned: if not NULL, the nr_scanned reported, summed
 *
 * Return: objects freed.
 */
unsigned long pamt_fake_shrink_scan(unsigned long nr, unsigned long *scanned)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct shrinker *s = pamt.shrinker;
	unsigned long freed = 0, done = 0, ret;

	for_each_node_state(sc.nid, N_NORMAL_MEMORY) {
		sc.memcg = mem_cgroup_iter(NULL, NULL, NULL);
		do {
			if (!s || freed >= nr)
				continue;
			sc.nr_to_scan = nr - freed;
			sc.nr_scanned = sc.nr_to_scan;
			ret = s->scan_objects(s, &sc);
			if (ret != SHRINK_STOP)
				freed += ret;
			done += sc.nr_scanned;
		} while ((sc.memcg = mem_cgroup_iter(NULL, sc.memcg, NULL)));
	}
	if (scanned)
		*scanned = done;
	return freed;
}
