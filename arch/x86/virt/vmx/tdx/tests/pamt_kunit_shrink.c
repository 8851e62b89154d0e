// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PAMT cache's shrink layer: the idle LRU and its order,
 * the shrinker's count and scan, the idle cap, tdx_pamt_drain(), and a
 * host without Dynamic PAMT.
 */
#include <linux/mm.h>
#include "pamt_kunit.h"

/* Idle slots go in the order first queued: a, idle again, goes first. */
static void pk_shrink_queue_order(struct kunit *test)
{
	unsigned long a, b, scanned = 0;

	pk_up(test);
	a = pk_slot_pfn(test, 10);
	b = pk_slot_pfn(test, 11);
	KUNIT_ASSERT_EQ(test, pk_get(a), 0);
	KUNIT_ASSERT_EQ(test, pk_get(b), 0);
	tdx_pamt_put(a);
	tdx_pamt_put(b);
	KUNIT_EXPECT_EQ(test, pk_word(a), W_IDLE);
	KUNIT_ASSERT_EQ(test, pk_get(a), 0);
	tdx_pamt_put(a);
	KUNIT_EXPECT_EQ(test, pk_word(a), W_IDLE);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 2UL);

	/* One look: a, queued first, and queued once. */
	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(1, &scanned), 1UL);
	KUNIT_EXPECT_EQ(test, scanned, 1UL);
	KUNIT_EXPECT_EQ(test, pk_word(a), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(a));
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(b)), PAMT_SLOT_IDLE);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(b));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_SHRINK), 1ULL);
	/* The shrinker frees pairs, reset first. */
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 2ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.resets), 2LL);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 1UL);

	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(1, &scanned), 1UL);
	KUNIT_EXPECT_EQ(test, pk_word(b), 0UL);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 0UL);
	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(8, &scanned), 0UL);
	KUNIT_EXPECT_EQ(test, scanned, 0UL);
	pk_check_accounting(test, 0);
}

/* A slot revived before reclaim reaches its entry is not removed. */
static void pk_shrink_skips_revived(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 12);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	tdx_pamt_put(pfn);
	pk_set_word(pfn, W_INST);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 0UL);
	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(4, NULL), 0UL);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

static void pk_give_new_pairs(struct kunit *test, int n)
{
	struct tdx_pamt_pair p;
	int i;

	for (i = 0; i < n; i++) {
		if (pamt_pair_alloc(&p, GFP_KERNEL)) {
			KUNIT_FAIL(test, "no memory for a pair");
			return;
		}
		pamt_mag_push(&p);
	}
}

/* Pairs beyond a full magazine go back; the shrinker frees the cached. */
static void pk_shrink_magazines(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, pk_setup(test, 4, PK_NO_CAP), 0);
	migrate_disable();
	pk_give_new_pairs(test, 9);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 4ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 2ULL * 5);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 4UL);
	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(3, NULL), 3UL);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	pk_check_accounting(test, 0);
}

/* At the idle cap, pairs given back are freed instead of cached. */
static void pk_magazines_respect_cap(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, pk_setup(test, 8, 2), 0);
	migrate_disable();
	pk_give_new_pairs(test, 6);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 2ULL * 4);
	pk_check_accounting(test, 0);
}

/* A new cap: the worker trims idle slots down to it. */
static void pk_set_idle_cap_trims(struct kunit *test)
{
	unsigned long base;
	int i;

	pk_up(test);
	base = pk_slot_pfn(test, 13);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, pk_get(base + i * 512), 0);
	for (i = 0; i < 4; i++)
		tdx_pamt_put(base + i * 512);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 4ULL);
	pk_set_idle_cap(1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pamt.idle_cap), 1UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CAP), 3ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 1ULL);
	pk_check_accounting(test, 0);
}

/* Over the cap, a put that idles a slot frees a cached pair first. */
static void pk_put_over_cap_frees_a_cached_pair(struct kunit *test)
{
	unsigned long pfn, cached;

	KUNIT_ASSERT_EQ(test, pk_setup(test, 4, 8), 0);
	pfn = pk_slot_pfn(test, 20);
	migrate_disable();
	pk_give_new_pairs(test, 4);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	cached = pk_stat(TDX_PAMT_STAT_CACHED_PAIRS);
	/* Idle memory (this CPU's magazine) is now exactly the cap. */
	pk_set_idle_cap(pamt_fake_idle_pairs());
	tdx_pamt_put(pfn);
	migrate_enable();
	KUNIT_EXPECT_GT(test, cached, 0UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), cached - 1ULL);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_IDLE);
	pk_check_accounting(test, 0);
}

/* Any other REMOVE error: the slot is LEAKED, counted, never reclaimed. */
static void pk_remove_error_leaks(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 17);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	tdx_pamt_put(pfn);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), -EIO);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_LEAKED), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 1ULL);
	/* Evict and the shrinker leave it alone; get and put still work. */
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), -EIO);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 0UL);
	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(4, NULL), 0UL);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pamt_slot_refs(pk_word(pfn)), 1UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_TRUE(test, pk_word(pfn) & PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	tdx_pamt_drain();
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	pk_check_accounting(test, 0);
	pk_unleak(test, pfn);
	pk_check_accounting(test, 0);
}

/* Without the cache (no Dynamic PAMT) every call is a no-op success. */
static void pk_disabled_noop(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };

	KUNIT_ASSERT_FALSE(test, tdx_pamt_enabled());
	KUNIT_EXPECT_EQ(test, pk_get(1234), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(1234), 0);
	KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, 2, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, res.nr, 0U);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 0UL);
	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(10, NULL), 0UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_drain(), 0UL);
}

/* drain: every idle slot REMOVEd, every cached pair freed. */
static void pk_drain_all(struct kunit *test)
{
	unsigned long base;
	int i;

	KUNIT_ASSERT_EQ(test, pk_setup(test, 8, PK_NO_CAP), 0);
	base = pk_slot_pfn(test, 25);
	for (i = 0; i < 6; i++)
		KUNIT_ASSERT_EQ(test, pk_get(base + i * 512), 0);
	for (i = 0; i < 6; i++)
		tdx_pamt_put(base + i * 512);
	migrate_disable();
	pk_give_new_pairs(test, 13);
	migrate_enable();
	/* Six idle slots and this CPU's full magazine; the rest went back. */
	KUNIT_EXPECT_EQ(test, tdx_pamt_drain(), 6UL + 8);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.pairs), 0LL);
	pk_check_accounting(test, 0);
}

/*
 * Idle memory is in /proc/meminfo's KReclaimable, hence MemAvailable, to
 * the page; a drain takes it out again (the teardown checks it to the page
 * after exit, too).
 */
static void pk_meminfo_counts_idle(struct kunit *test)
{
	long start, pairs;
	unsigned long base;
	int i;

	KUNIT_ASSERT_EQ(test, pk_setup(test, 8, PK_NO_CAP), 0);
	start = pk(test)->misc_reclaimable;
	base = pk_slot_pfn(test, 64);
	for (i = 0; i < 128; i++) {
		KUNIT_ASSERT_EQ(test, pk_get(base + i * 512), 0);
		tdx_pamt_put(base + i * 512);
	}
	pairs = pk_stat(TDX_PAMT_STAT_IDLE_SLOTS) +
		pk_stat(TDX_PAMT_STAT_CACHED_PAIRS);
	KUNIT_EXPECT_GE(test, pairs, 128L);
	KUNIT_EXPECT_EQ(test, pk_misc_reclaimable() - start, 2 * pairs);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_misc_reclaimable(), start);
	pk_check_accounting(test, 0);
}

/* An idle cap of 0: the last put REMOVEs at once and frees the pair. */
static void pk_cap0_put_removes(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pk_set_idle_cap(0);
	pfn = pk_slot_pfn(test, 9);
	migrate_disable();
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), 0ULL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(pfn));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PUT_SLOW), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	pk_check_accounting(test, 0);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC), 4ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 2ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
	migrate_enable();
}

static struct kunit_case pk_shrink_cases[] = {
	KUNIT_CASE(pk_cap0_put_removes),
	KUNIT_CASE(pk_shrink_queue_order),
	KUNIT_CASE(pk_shrink_skips_revived),
	KUNIT_CASE(pk_shrink_magazines),
	KUNIT_CASE(pk_magazines_respect_cap),
	KUNIT_CASE(pk_set_idle_cap_trims),
	KUNIT_CASE(pk_put_over_cap_frees_a_cached_pair),
	KUNIT_CASE(pk_remove_error_leaks),
	KUNIT_CASE(pk_disabled_noop),
	KUNIT_CASE(pk_drain_all),
	KUNIT_CASE(pk_meminfo_counts_idle),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_shrink_suite = {
	.name = "tdx_pamt_shrink",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_shrink_cases,
};

kunit_test_suite(pk_shrink_suite);
