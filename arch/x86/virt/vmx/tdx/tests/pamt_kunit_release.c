// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: idle pairs given back to the page allocator by the shrinker as
 * reclaim calls it, in steps, and by the idle cap lowered to 0; what the
 * shrinker counts and returns is pairs, two pages each.  Needs the shrink
 * layer and the glue's shrinker together.
 */
#include <linux/shrinker.h>
#include "pamt_kunit.h"

/* The @i-th slot the tests of this suite get and put. */
static unsigned long pk_release_pfn(struct kunit *test, int i)
{
	return pk_slot_pfn(test, 80 + i);
}

/* @n slots got, then put: @n idle slots, no free pair cached. */
static void pk_release_idle(struct kunit *test, int n)
{
	int i;

	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, pk_get(pk_release_pfn(test, i)), 0);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, tdx_pamt_put(pk_release_pfn(test, i)), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), (u64)n);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
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
 * The shrinker, called as reclaim calls it, eight at a time until it
 * counts nothing, gives every idle pair back, each scan what it was asked.
 */
static void pk_release_shrinker(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	unsigned long freed = 0, n;
	struct shrinker *s;
	int rounds = 0;

	pk_up(test);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	pk_release_idle(test, 24);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 24UL);
	while (s->count_objects(s, &sc) != SHRINK_EMPTY && rounds++ < 16) {
		n = pk_release_scan(s, 8);
		KUNIT_EXPECT_EQ(test, n, 8UL);
		freed += n;
	}
	KUNIT_EXPECT_EQ(test, rounds, 3);
	KUNIT_EXPECT_EQ(test, freed, 24UL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_SHRINK), 24ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC),
			pk_stat(TDX_PAMT_STAT_PAGE_FREE));
	pk_check_accounting(test, 0);
}

/*
 * Every other slot in use.  The shrinker's count is an upper bound: every
 * installed slot stays filed until a walk passes it.  A scan REMOVEs the
 * idle ones, leaves the others installed but off the list until their
 * next idle put, and returns pairs, whose two pages each reach the page
 * allocator.  Once the rest go idle, they are counted and freed alike.
 */
static void pk_release_counts_pairs(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	struct shrinker *s;
	u64 removes, pages;
	int i;

	pk_up(test);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i < 24; i++)
		KUNIT_ASSERT_EQ(test, pk_get(pk_release_pfn(test, i)), 0);
	for (i = 0; i < 24; i += 2)
		KUNIT_ASSERT_EQ(test, tdx_pamt_put(pk_release_pfn(test, i)), 0);
	removes = pk_stat(TDX_PAMT_STAT_REMOVE);
	pages = pk_stat(TDX_PAMT_STAT_PAGE_FREE);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 24UL);
	KUNIT_EXPECT_EQ(test, pk_release_scan(s, 128), 12UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE) - removes, 12ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE) - pages, 24ULL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	for (i = 0; i < 24; i++)
		KUNIT_EXPECT_EQ(test, pk_word(pk_release_pfn(test, i)),
				i % 2 ? W_INST | 1 : 0UL);

	for (i = 1; i < 24; i += 2)
		KUNIT_ASSERT_EQ(test, tdx_pamt_put(pk_release_pfn(test, i)), 0);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 12UL);
	pages = pk_stat(TDX_PAMT_STAT_PAGE_FREE);
	KUNIT_EXPECT_EQ(test, pk_release_scan(s, 128), 12UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE) - pages, 24ULL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	pk_check_accounting(test, 0);
}

static void pk_release_restore_cap(void *unused)
{
	pk_set_idle_cap(PK_NO_CAP);
}

/* The idle cap, lowered to 0, gives every idle pair back. */
static void pk_release_cap(struct kunit *test)
{
	int ret;

	pk_up(test);
	ret = kunit_add_action_or_reset(test, pk_release_restore_cap, NULL);
	KUNIT_ASSERT_EQ(test, ret, 0);
	pk_release_idle(test, 24);
	pk_set_idle_cap(0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CAP), 24ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC),
			pk_stat(TDX_PAMT_STAT_PAGE_FREE));
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_release_cases[] = {
	KUNIT_CASE(pk_release_shrinker),
	KUNIT_CASE(pk_release_counts_pairs),
	KUNIT_CASE(pk_release_cap),
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
