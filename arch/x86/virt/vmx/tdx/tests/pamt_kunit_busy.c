// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: PAMT SEAMCALLs that meet BUSY are retried with a backoff, then
 * serialised.
 */
#include "pamt_kunit.h"

/* ADD answering BUSY is retried; then it succeeds. */
static void pk_add_busy_retried(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 14);
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY, 3);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_BUSY), 3ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 4ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.injected[PAMT_FAKE_ADD]), 3LL);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

/* BUSY through the backoff: the serialised retry gets it in. */
static void pk_add_busy_serialised(struct kunit *test)
{
	unsigned long pfn;
	u64 filed;

	pk_up(test);
	/* What an install takes besides: the root memcg's idle list. */
	KUNIT_ASSERT_EQ(test, pk_get(pk_slot_pfn(test, 15)), 0);
	filed = pk_stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	tdx_pamt_put(pk_slot_pfn(test, 15));
	pfn = pk_slot_pfn(test, 14);
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_RETRIES + 2);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD),
			(u64)PAMT_BUSY_RETRIES + 4);
	/* The fallback lock, once per serialised call: BUSY, then success. */
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GLOBAL_LOCK), 2 * filed + 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pamt.serializing), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_busy_cases[] = {
	KUNIT_CASE(pk_add_busy_retried),
	KUNIT_CASE(pk_add_busy_serialised),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_busy_suite = {
	.name = "tdx_pamt_busy",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_busy_cases,
};

kunit_test_suite(pk_busy_suite);
