// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PAMT cache's magazines: pairs that REMOVE hands back, or a
 * failed ADD leaves unused, are kept for the next ADD, unless the module
 * refused them; reserves (struct tdx_pamt_cache) and the pairs DEMOTE and
 * PROMOTE take and give.
 */
#include <linux/spinlock.h>
#include "pamt_kunit.h"

static DEFINE_SPINLOCK(pk_lock);

/* Evict of an IDLE slot REMOVEs and keeps the pair for the next ADD. */
static void pk_evict_idle(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 7);
	migrate_disable();
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(pfn));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 0ULL);
	/* Already EMPTY: nothing to do. */
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), 0);
	pk_check_accounting(test, 0);
	/* The next ADD reuses the cached pair. */
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
	migrate_enable();
}

/* A failed ADD: slot back to EMPTY, the pair back in a magazine. */
static void pk_add_fails(struct kunit *test, u64 status, unsigned int n,
			 int err)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 15);
	migrate_disable();
	PK_INJECT(PAMT_FAKE_ADD, status, n);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), err);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(pfn));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 0ULL);
	pk_check_accounting(test, 0);
	/* The module is fine again: the cached pair is used. */
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC), 2ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
	migrate_enable();
}

static void pk_add_busy_exhausted(struct kunit *test)
{
	pk_add_fails(test, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_CALLS_MAX, -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_BUSY),
			(u64)PAMT_BUSY_CALLS_MAX);
}

/* ADD refused a pair page as in use: that pair is leaked, not reused. */
static void pk_add_page_not_free(struct kunit *test)
{
	struct tdx_pamt_pair p;
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 15);
	migrate_disable();
	KUNIT_ASSERT_EQ(test, pamt_pair_alloc(&p, GFP_KERNEL), 0);
	pamt_mag_push(&p);
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_PAGE_NOT_FREE, 1);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), -EIO);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_LEAKED), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	pk_check_accounting(test, 1);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_FALSE(test, pamt_fake_is_pamt_page(p.pfn[0]));
	KUNIT_EXPECT_FALSE(test, pamt_fake_is_pamt_page(p.pfn[1]));
	tdx_pamt_put(pfn);
	migrate_enable();
	/* Only the test knows the pair was never the module's. */
	pamt_pair_free(&p, 1);
	pk_check_accounting(test, 0);
}

static void pk_add_addr_range(struct kunit *test)
{
	pk_add_fails(test, TDX_PAMT_OPERAND_ADDR_RANGE | 0x11, 1, -EIO);
}

/* Reserves: top-up, the bound, drain back into the magazines. */
static void pk_reserve_topup_drain(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };

	pk_up(test);
	KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, 3, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, res.nr, 3U);
	KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, 2, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, res.nr, 3U);
	KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, TDX_PAMT_CACHE_MAX + 1,
						     GFP_KERNEL), -EINVAL);
	KUNIT_EXPECT_NE(test, res.pairs[0].pfn[0], res.pairs[0].pfn[1]);
	pk_check_accounting(test, res.nr);
	tdx_free_pamt_cache(&res);
	KUNIT_EXPECT_EQ(test, res.nr, 0U);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 3ULL);
	pk_check_accounting(test, 0);
}

/* With empty magazines, a get under a spinlock takes from the reserve. */
static void pk_reserve_used_under_lock(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	unsigned long pfn;
	int ret;

	pk_up(test);
	pfn = pk_slot_pfn(test, 24);
	KUNIT_ASSERT_EQ(test, __tdx_topup_pamt_cache(&res, 2, GFP_KERNEL), 0);
	spin_lock(&pk_lock);
	ret = tdx_pamt_get(pfn, &res);
	spin_unlock(&pk_lock);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, res.nr, 1U);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC), 4ULL);
	pk_check_accounting(test, res.nr);
	tdx_pamt_put(pfn);
	tdx_free_pamt_cache(&res);
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_mag_cases[] = {
	KUNIT_CASE(pk_evict_idle),
	KUNIT_CASE(pk_add_busy_exhausted),
	KUNIT_CASE(pk_add_page_not_free),
	KUNIT_CASE(pk_add_addr_range),
	KUNIT_CASE(pk_reserve_topup_drain),
	KUNIT_CASE(pk_reserve_used_under_lock),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_mag_suite = {
	.name = "tdx_pamt_mag",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_mag_cases,
};

kunit_test_suite(pk_mag_suite);
