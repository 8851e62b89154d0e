// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the arena's chunks given back once their pairs are free: by the
 * shrinker as reclaim calls it, by a drain and by the idle cap; and idle
 * slots holding a fallback pair, REMOVEd alone.  Needs the arena, the
 * shrink layer and the glue's shrinker together.
 */
#include <kunit/static_stub.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/shrinker.h>
#include "pamt_glue.h"
#include "pamt_kunit.h"

/*
 * @n slots idle, their pairs from one chunk: a GFP_KERNEL top-up makes
 * the chunk, the gets take the rest from it.  With two-pair magazines
 * (pk_arena_up(test, 2)) each refill leaves at most one pair
 * cached, which the next get takes.
 */
static void pk_arena_idle(struct kunit *test, int n)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	int i;

	KUNIT_ASSERT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, tdx_pamt_get(pk_slot_pfn(test, 80 + i),
						   &res), 0);
	for (i = 0; i < n; i++)
		tdx_pamt_put(pk_slot_pfn(test, 80 + i));
	tdx_free_pamt_cache(&res);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), (u64)n);
	KUNIT_EXPECT_GE(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1ULL);
}

/* The shrinker, called as reclaim calls it, gives the chunks back. */
static void pk_arena_release_shrinker(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	struct shrinker *s;
	int rounds = 0;

	pk_arena_up(test, 2);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	pk_arena_idle(test, 24);
	/* Idle slots only: the top-up's one pair went to the first get. */
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	while (s->count_objects(s, &sc) != SHRINK_EMPTY && rounds++ < 16) {
		sc.nr_to_scan = 8;
		s->scan_objects(s, &sc);
	}
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_SHRINK), 24ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC),
			pk_stat(TDX_PAMT_STAT_PAGE_FREE));
	pk_check_accounting(test, 0);
}

/* scan_objects through the registered shrinker; SHRINK_STOP reads 0. */
static unsigned long pk_release_scan(struct shrinker *s, unsigned long nr)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0,
				     .nr_to_scan = nr };
	unsigned long ret = s->scan_objects(s, &sc);

	return ret == SHRINK_STOP ? 0 : ret;
}

/*
 * Every other slot of a chunk in use: no REMOVE would give anything
 * back, so none is issued, and the shrinker says what went back (pairs'
 * worth, two pages each).  Once the rest goes idle, the chunk goes back
 * whole and the shrinker says 256.
 */
static void pk_arena_release_counts_pages(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	struct tdx_pamt_cache res = { .nr = 0 };
	u64 removes, pages;
	unsigned long freed = 0;
	struct shrinker *s;
	int i;

	pk_arena_up(test, 2);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	/* Free pairs stay in this CPU's magazines, where the scan looks. */
	migrate_disable();
	KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);
	if (!pk_stat(TDX_PAMT_STAT_CHUNK_ALLOC)) {
		tdx_free_pamt_cache(&res);
		migrate_enable();
		kunit_skip(test, "no free 2M block on this machine");
	}
	for (i = 0; i < 24; i++)
		KUNIT_EXPECT_EQ(test, tdx_pamt_get(pk_slot_pfn(test, 80 + i),
						   &res), 0);
	tdx_free_pamt_cache(&res);
	for (i = 0; i < 24; i += 2)
		tdx_pamt_put(pk_slot_pfn(test, 80 + i));
	removes = pk_stat(TDX_PAMT_STAT_REMOVE);
	pages = pk_stat(TDX_PAMT_STAT_PAGE_FREE);
	/* An upper bound: the chunk's pairs that are not in use. */
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), PAMT_ARENA_PAIRS - 12UL);
	for (i = 0; i < 16; i++)
		freed += pk_release_scan(s, 128);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), removes);
	KUNIT_EXPECT_EQ(test, 2 * freed, pk_stat(TDX_PAMT_STAT_PAGE_FREE) - pages);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1ULL);

	for (i = 1; i < 24; i += 2)
		tdx_pamt_put(pk_slot_pfn(test, 80 + i));
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 256UL);
	pages = pk_stat(TDX_PAMT_STAT_PAGE_FREE);
	KUNIT_EXPECT_EQ(test, pk_release_scan(s, 128), 256UL);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE) - pages, 512ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	pk_check_accounting(test, 0);
}

/* A drain gives every chunk back. */
static void pk_arena_release_drain(struct kunit *test)
{
	pk_arena_up(test, 2);
	pk_arena_idle(test, 24);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC),
			pk_stat(TDX_PAMT_STAT_PAGE_FREE));
	pk_check_accounting(test, 0);
}

static void pk_arena_restore_cap(void *unused)
{
	pk_set_idle_cap(PK_NO_CAP);
}

/* The idle cap, lowered to 0, gives every chunk back. */
static void pk_arena_release_cap(struct kunit *test)
{
	pk_arena_up(test, 2);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pk_arena_restore_cap,
							NULL), 0);
	pk_arena_idle(test, 24);
	pk_set_idle_cap(0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CAP), 24ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	pk_check_accounting(test, 0);
}

/*
 * The idle cap counts the free pairs in chunks.  A chunk kept by one range
 * in use stays, whatever the cap; once that range's put leaves every pair
 * of the chunk idle, the put issues no REMOVE but has the worker run
 * within PAMT_DEFER_LAZY_MS, through the glue's delayed work, and the
 * worker gives the chunk back.
 */
static void pk_arena_release_cap_lazy(struct kunit *test)
{
	u64 removes, deadline;

	pk_arena_up(test, 2);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pk_arena_restore_cap,
							NULL), 0);
	pk_arena_idle(test, 24);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pk_slot_pfn(test, 80), NULL), 0);
	pk_set_idle_cap(32);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CAP), 0ULL);

	removes = pk_stat(TDX_PAMT_STAT_REMOVE);
	tdx_pamt_put(pk_slot_pfn(test, 80));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), removes);
	deadline = ktime_get_ns() + PK_WAIT_NS;
	while (pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS) && ktime_get_ns() < deadline)
		msleep(20);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CAP), 24ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	pk_check_accounting(test, 0);
}

/* The arena's chunk allocations fail: every pair is a fallback pair. */
static struct page *pk_release_no_chunk(gfp_t gfp, unsigned int order)
{
	return order == PAMT_ARENA_ORDER ? NULL : alloc_pages(gfp, order);
}

/*
 * Only an idle slot holding a fallback pair is worth a REMOVE on its own:
 * the shrinker REMOVEs that one, not a fallback pair in use, nor an idle
 * slot whose chunk holds a pair in use.  It counts every pair not in use,
 * an upper bound: the chunk's free and idle pairs too.
 */
static void pk_arena_shrink_fallback(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	struct shrinker *s;
	unsigned long pfn[4];
	int i;

	pk_arena_up(test, 0);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i < 4; i++)
		pfn[i] = pk_slot_pfn(test, i + 1);
	kunit_activate_static_stub(test, pamt_pages_alloc,
				   pk_release_no_chunk);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn[0], NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn[1], NULL), 0);
	kunit_deactivate_static_stub(test, pamt_pages_alloc);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAIR_ORDER1), 2ULL);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn[2], NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn[3], NULL), 0);
	if (pk_stat(TDX_PAMT_STAT_PAIR_ORDER1) != 2) {
		for (i = 0; i < 4; i++)
			tdx_pamt_put(pfn[i]);
		tdx_pamt_drain();
		kunit_skip(test, "no free 2M block on this machine");
	}
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), PAMT_ARENA_PAIRS - 2UL);

	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn[0]), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn[2]), 0);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), (unsigned long)PAMT_ARENA_PAIRS);
	KUNIT_EXPECT_EQ(test, pk_release_scan(s, 8), 1UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_word(pfn[0]), 0UL);
	KUNIT_EXPECT_NE(test, pk_word(pfn[2]), 0UL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), PAMT_ARENA_PAIRS - 1UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn[1]), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn[3]), 0);
	tdx_pamt_drain();
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_release_cases[] = {
	KUNIT_CASE(pk_arena_release_shrinker),
	KUNIT_CASE(pk_arena_release_counts_pages),
	KUNIT_CASE(pk_arena_release_drain),
	KUNIT_CASE(pk_arena_release_cap),
	KUNIT_CASE(pk_arena_release_cap_lazy),
	KUNIT_CASE(pk_arena_shrink_fallback),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_release_suite = {
	.name = "tdx_pamt_release",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_release_cases,
};

kunit_test_suite(pk_release_suite);
