// SPDX-License-Identifier: GPL-2.0
/*
 * The pair-page placement experiment (issue 29, item 3).  A guest takes
 * 4K pages the way guest_memfd does; each 2M block it lands in for the
 * first time gets a pair, from one of:
 *   a  alloc_page(GFP_KERNEL), twice (what v6 does),
 *   b  alloc_page(GFP_KERNEL | __GFP_RECLAIMABLE), twice,
 *   c  the pair arena, pamt_arena.c itself: 2M chunks, then an order-1
 *      page, then two order-0 pages.
 * It counts the 2M blocks holding a guest page, and of them those that
 * also hold a pair page: a TD cannot map those 2M.  From a fresh boot and
 * from memory fragmented by a tmpfs file, with the guest taking 50% or
 * 90% of the memory free at the start.
 *
 * A measurement: it checks only that its counts add up and that every
 * page went back.  Built only by tools/testing/pamt/kernel/placement.sh
 * (CONFIG_INTEL_TDX_PAMT_PLACEMENT_TEST), one boot per point:
 * pamt_kunit.placement=N runs point N alone, -1 (the default) all.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>
#include <linux/vmstat.h>
#include "pamt_kunit.h"

/* 2M blocks, in pages' worth of pfn bits. */
#define PL_BLOCK_ORDER		(PMD_SHIFT - PAGE_SHIFT)

enum pl_start { PL_CLEAN, PL_FRAG };
enum pl_strategy { PL_PLAIN, PL_RECLAIMABLE, PL_ARENA };

struct pl_point {
	enum pl_start start;
	unsigned int fill;		/* guest: percent of free memory */
	enum pl_strategy strategy;
};

static const struct pl_point pl_points[] = {
	{ PL_CLEAN, 50, PL_PLAIN }, { PL_CLEAN, 50, PL_RECLAIMABLE },
	{ PL_CLEAN, 50, PL_ARENA },
	{ PL_CLEAN, 90, PL_PLAIN }, { PL_CLEAN, 90, PL_RECLAIMABLE },
	{ PL_CLEAN, 90, PL_ARENA },
	{ PL_FRAG, 50, PL_PLAIN }, { PL_FRAG, 50, PL_RECLAIMABLE },
	{ PL_FRAG, 50, PL_ARENA },
	{ PL_FRAG, 90, PL_PLAIN }, { PL_FRAG, 90, PL_RECLAIMABLE },
	{ PL_FRAG, 90, PL_ARENA },
};

static const char * const pl_start_names[] = { "clean", "frag" };

static int pl_only = -1;
module_param_named(placement, pl_only, int, 0444);
MODULE_PARM_DESC(placement, "placement experiment: run only this point (-1: all)");

/* The tmpfs file of a fragmented start: this percentage of free memory. */
static int pl_cache_pct = 80;
module_param_named(placement_cache, pl_cache_pct, int, 0444);
MODULE_PARM_DESC(placement_cache, "placement experiment: tmpfs file, percent of free memory");

/* Which half of the tmpfs file's pages is punched out. */
static int pl_seed = 29;
module_param_named(placement_seed, pl_seed, int, 0444);
MODULE_PARM_DESC(placement_seed, "placement experiment: seed of the pages punched out");

/**
 * struct pl_run - one point of the table
 * @pt: the point
 * @nr_blocks: 2M blocks up to max_pfn
 * @guest: blocks holding a guest page
 * @paired: blocks given a pair
 * @pair_blk: blocks holding a pair page
 * @pairs: each block's pair, valid where @paired
 * @guest_list: the guest pages, on their lru
 * @cache: the tmpfs file of a fragmented start, or NULL
 * @free_start: free pages when the guest started
 * @nr_guest: guest pages taken
 * @guest_fail: guest pages asked for and not had
 * @nr_pairs: pairs given
 * @pair_fail: pairs asked for and not had
 * @stat0: the cache's counters before the run (arena only)
 */
struct pl_run {
	const struct pl_point *pt;
	unsigned long nr_blocks;
	unsigned long *guest;
	unsigned long *paired;
	unsigned long *pair_blk;
	struct tdx_pamt_pair *pairs;
	struct list_head guest_list;
	struct file *cache;
	unsigned long free_start;
	unsigned long nr_guest;
	unsigned long guest_fail;
	unsigned long nr_pairs;
	unsigned long pair_fail;
	u64 stat0[TDX_PAMT_STAT_NR];
};

static void pl_desc(const struct pl_point *pt, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s-%u-%c",
		 pl_start_names[pt->start], pt->fill, 'a' + pt->strategy);
}

KUNIT_ARRAY_PARAM(pl, pl_points, pl_desc);

/* Free pages, those on per-CPU lists (a few MiB) left out. */
static unsigned long pl_free_pages(void)
{
	return global_zone_page_state(NR_FREE_PAGES);
}

static unsigned long *pl_bitmap(struct kunit *test, unsigned long bits)
{
	unsigned long *map;

	map = kunit_kcalloc(test, BITS_TO_LONGS(bits), sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, map);
	return map;
}

/* Punch pages [@first, @end) out of the tmpfs file. */
static void pl_punch(struct pl_run *r, pgoff_t first, pgoff_t end)
{
	shmem_truncate_range(file_inode(r->cache), (loff_t)first << PAGE_SHIFT,
			     ((loff_t)end << PAGE_SHIFT) - 1);
}

/*
 * Page cache over most of free memory (pamt_kunit.placement_cache), then a
 * random half of its pages dropped: movable pages scattered over nearly
 * every 2M block it took.
 */
static void pl_fragment(struct kunit *test, struct pl_run *r)
{
	unsigned long n = pl_free_pages() / 100 * clamp(pl_cache_pct, 1, 99);
	struct rnd_state rnd;
	struct folio *folio;
	pgoff_t i, first = 0;
	bool in_hole = false;

	r->cache = shmem_file_setup("pamt-placement", (loff_t)n << PAGE_SHIFT,
				    mk_vma_flags(VMA_NORESERVE_BIT));
	KUNIT_ASSERT_FALSE(test, IS_ERR(r->cache));
	for (i = 0; i < n; i++) {
		folio = shmem_read_folio(r->cache->f_mapping, i);
		if (IS_ERR(folio)) {
			KUNIT_FAIL(test, "tmpfs page %lu of %lu: %ld", i, n,
				   PTR_ERR(folio));
			n = i;
			break;
		}
		folio_put(folio);
		if (!(i % 1024))
			cond_resched();
	}
	prandom_seed_state(&rnd, pl_seed);
	for (i = 0; i < n; i++) {
		bool drop = prandom_u32_state(&rnd) & 1;

		if (drop && !in_hole)
			first = i;
		else if (!drop && in_hole)
			pl_punch(r, first, i);
		in_hole = drop;
		if (!(i % 1024))
			cond_resched();
	}
	if (in_hole)
		pl_punch(r, first, n);
}

static int pl_two_pages(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	struct page *p0, *p1;

	p0 = alloc_page(gfp);
	if (!p0)
		return -ENOMEM;
	p1 = alloc_page(gfp);
	if (!p1) {
		__free_page(p0);
		return -ENOMEM;
	}
	pair->pfn[0] = page_to_pfn(p0);
	pair->pfn[1] = page_to_pfn(p1);
	return 0;
}

/* A pair for block @blk, the first time a guest page lands in it. */
static void pl_give_pair(struct kunit *test, struct pl_run *r, unsigned long blk)
{
	struct tdx_pamt_pair *pair = &r->pairs[blk];
	int ret;

	switch (r->pt->strategy) {
	case PL_PLAIN:
		ret = pl_two_pages(pair, GFP_KERNEL);
		break;
	case PL_RECLAIMABLE:
		ret = pl_two_pages(pair, GFP_KERNEL | __GFP_RECLAIMABLE);
		break;
	default:
		/* What a top-up asks for; the arena drops __GFP_ACCOUNT. */
		ret = pamt_pair_alloc(pair, GFP_KERNEL);
		if (!ret)
			atomic_long_inc(&pk(test)->held_pairs);
		break;
	}
	if (ret) {
		__clear_bit(blk, r->paired);
		r->pair_fail++;
		return;
	}
	r->nr_pairs++;
	__set_bit(pair->pfn[0] >> PL_BLOCK_ORDER, r->pair_blk);
	__set_bit(pair->pfn[1] >> PL_BLOCK_ORDER, r->pair_blk);
}

/*
 * The guest: order-0 GFP_HIGHUSER pages (unmovable, as guest_memfd's
 * mapping asks), one at a time.  __GFP_NORETRY | __GFP_NOWARN only keep
 * a short guest from calling the OOM killer; the fast path is the same.
 */
static void pl_guest(struct kunit *test, struct pl_run *r)
{
	unsigned long want = r->free_start / 100 * r->pt->fill, i, blk;
	struct page *page;

	for (i = 0; i < want; i++) {
		page = alloc_page(GFP_HIGHUSER | __GFP_NORETRY | __GFP_NOWARN);
		if (!page) {
			r->guest_fail = want - i;
			break;
		}
		list_add_tail(&page->lru, &r->guest_list);
		r->nr_guest++;
		blk = page_to_pfn(page) >> PL_BLOCK_ORDER;
		if (blk >= r->nr_blocks) {
			KUNIT_FAIL(test, "pfn %#lx above max_pfn", page_to_pfn(page));
			break;
		}
		__set_bit(blk, r->guest);
		if (!__test_and_set_bit(blk, r->paired))
			pl_give_pair(test, r, blk);
		if (!(i % 1024))
			cond_resched();
	}
}

/* Everything back; checks that what was freed is what was counted. */
static void pl_free_all(struct kunit *test, struct pl_run *r)
{
	unsigned long blk, pages = 0, pairs = 0;
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &r->guest_list, lru) {
		list_del(&page->lru);
		__free_page(page);
		pages++;
		if (!(pages % 1024))
			cond_resched();
	}
	KUNIT_EXPECT_EQ(test, pages, r->nr_guest);
	for_each_set_bit(blk, r->paired, r->nr_blocks) {
		if (r->pt->strategy == PL_ARENA) {
			pamt_pair_free(&r->pairs[blk]);
			atomic_long_dec(&pk(test)->held_pairs);
		} else {
			__free_page(pfn_to_page(r->pairs[blk].pfn[0]));
			__free_page(pfn_to_page(r->pairs[blk].pfn[1]));
		}
		pairs++;
	}
	KUNIT_EXPECT_EQ(test, pairs, r->nr_pairs);
	if (r->cache) {
		shmem_truncate_range(file_inode(r->cache), 0, (loff_t)-1);
		KUNIT_EXPECT_EQ(test, file_inode(r->cache)->i_mapping->nrpages, 0UL);
		fput(r->cache);
		flush_delayed_fput();
		r->cache = NULL;
	}
	if (r->pt->strategy == PL_ARENA) {
		KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
		KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_FREE), 0ULL);
		pk_check_accounting(test, 0);
	}
}

static u64 pl_delta(struct pl_run *r, enum tdx_pamt_stat item)
{
	return pk_stat(item) - r->stat0[item];
}

/* One line of the table, and the checks that its counts add up. */
static void pl_report(struct kunit *test, struct pl_run *r)
{
	unsigned long *both = pl_bitmap(test, r->nr_blocks);
	unsigned long td, poisoned, pair_blocks, permille;
	u64 chunks = 0, order1 = 0, order0 = 0, chunk_fail = 0;
	char extra[128] = "";

	td = bitmap_weight(r->guest, r->nr_blocks);
	bitmap_and(both, r->guest, r->pair_blk, r->nr_blocks);
	poisoned = bitmap_weight(both, r->nr_blocks);
	pair_blocks = bitmap_weight(r->pair_blk, r->nr_blocks);
	permille = td ? DIV_ROUND_CLOSEST(poisoned * 1000, td) : 0;

	KUNIT_EXPECT_GT(test, r->nr_guest, 0UL);
	KUNIT_EXPECT_LE(test, poisoned, td);
	KUNIT_EXPECT_LE(test, td, r->nr_guest);
	KUNIT_EXPECT_GE(test, td * (1UL << PL_BLOCK_ORDER), r->nr_guest);
	/* Pairs only for blocks with a guest page: all of them, bar failures. */
	KUNIT_EXPECT_EQ(test, bitmap_weight(r->paired, r->nr_blocks),
			r->nr_pairs);
	KUNIT_EXPECT_TRUE(test, bitmap_subset(r->paired, r->guest, r->nr_blocks));
	if (!r->pair_fail)
		KUNIT_EXPECT_EQ(test, r->nr_pairs, td);
	if (r->pt->strategy == PL_ARENA) {
		chunks = pl_delta(r, TDX_PAMT_STAT_CHUNK_ALLOC);
		chunk_fail = pl_delta(r, TDX_PAMT_STAT_CHUNK_FAIL);
		order1 = pl_delta(r, TDX_PAMT_STAT_PAIR_ORDER1);
		order0 = pl_delta(r, TDX_PAMT_STAT_PAIR_ORDER0);
		/* Every pair came from a chunk or a fallback. */
		KUNIT_EXPECT_LE(test, (u64)r->nr_pairs,
				chunks * PAMT_ARENA_PAIRS + order1 + order0);
		KUNIT_EXPECT_LE(test, order1 + order0, (u64)r->nr_pairs);
		snprintf(extra, sizeof(extra),
			 " chunks=%llu chunk_fail=%llu order1=%llu order0=%llu",
			 chunks, chunk_fail, order1, order0);
	}
	kunit_info(test,
		   "placement: start=%s fill=%u strategy=%c cache_pct=%d free_mib=%lu guest=%lu guest_fail=%lu td_blocks=%lu poisoned=%lu pct=%lu.%lu pair_pages=%lu pair_fail=%lu pair_blocks=%lu%s\n",
		   pl_start_names[r->pt->start], r->pt->fill,
		   'a' + r->pt->strategy,
		   r->pt->start == PL_FRAG ? clamp(pl_cache_pct, 1, 99) : 0,
		   r->free_start >> (20 - PAGE_SHIFT),
		   r->nr_guest, r->guest_fail, td, poisoned, permille / 10,
		   permille % 10, 2 * r->nr_pairs, r->pair_fail, pair_blocks,
		   extra);
}

static void pl_run(struct kunit *test)
{
	const struct pl_point *pt = test->param_value;
	struct pl_run *r;

	if (pl_only >= 0 && pt != &pl_points[pl_only])
		kunit_skip(test, "another boot's point");

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->pt = pt;
	INIT_LIST_HEAD(&r->guest_list);
	r->nr_blocks = DIV_ROUND_UP(max_pfn, 1UL << PL_BLOCK_ORDER);
	r->guest = pl_bitmap(test, r->nr_blocks);
	r->paired = pl_bitmap(test, r->nr_blocks);
	r->pair_blk = pl_bitmap(test, r->nr_blocks);
	r->pairs = kunit_kcalloc(test, r->nr_blocks, sizeof(*r->pairs),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->pairs);
	if (pt->strategy == PL_ARENA) {
		pk_arena_up(test, 0);
		pk_stats(r->stat0);
	}
	if (pt->start == PL_FRAG)
		pl_fragment(test, r);

	r->free_start = pl_free_pages();
	pl_guest(test, r);
	pl_report(test, r);
	pl_free_all(test, r);
}

static void pl_pageblock(struct kunit *test)
{
	/* The allocator groups pages by mobility in 2M pageblocks. */
	KUNIT_EXPECT_EQ(test, pageblock_order, (unsigned int)PL_BLOCK_ORDER);
}

static struct kunit_case pl_cases[] = {
	KUNIT_CASE(pl_pageblock),
	KUNIT_CASE_PARAM(pl_run, pl_gen_params),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pl_suite = {
	.name = "tdx_dpamt_placement",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pl_cases,
};

kunit_test_suite(pl_suite);
