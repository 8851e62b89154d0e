// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the tests that WARN on purpose, and the canaries.
 *
 * The WARN tests run last, so that the TAINT_WARN they leave behind cannot
 * hide a warning in another test; the console lines between the two
 * markers below are what the runner allows.
 *
 * The canaries run only with pamt_kunit.canary=1.  Each one trips one
 * checker, and is reported as failed when that checker works: lockdep
 * (a lock-order inversion), the sleep-in-atomic check (a GFP_KERNEL
 * allocation under a spinlock), lockdep's wait-type check (a spinlock_t
 * inside a slot transition, which would sleep on PREEMPT_RT) and KASAN (a
 * use after free).
 */
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "pamt_kunit.h"

#define PK_WARN_BEGIN	"pamt_kunit: BEGIN expected WARNING"
#define PK_WARN_END	"pamt_kunit: END expected WARNING"

/* A second put on an idle slot warns once and changes nothing. */
static void pk_warn_double_put(struct kunit *test)
{
	unsigned long pfn, word;

	pk_up(test);
	pfn = pk_slot_pfn(test, 30);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn, NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_put(pfn), 0);
	word = pk_word(pfn);

	pk_expect_warn(test);
	pr_info(PK_WARN_BEGIN "\n");
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), -EINVAL);
	pr_info(PK_WARN_END "\n");
	KUNIT_EXPECT_TRUE(test, test_taint(TAINT_WARN));
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), word);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PUT_FAST), 1ULL);
	/* On an EMPTY slot too. */
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pk_slot_pfn(test, 31)), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_word(pk_slot_pfn(test, 31)), 0UL);
	pk_check_accounting(test, 0);
}

/* ADD says the range already has a pair: -EIO, a WARN, nothing kept. */
static void pk_warn_add_hpa_range_not_free(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 32);
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_HPA_RANGE_NOT_FREE, 1);
	pk_expect_warn(test);
	pr_info(PK_WARN_BEGIN "\n");
	KUNIT_EXPECT_EQ(test, tdx_pamt_get(pfn, NULL), -EIO);
	pr_info(PK_WARN_END "\n");
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_warn_cases[] = {
	KUNIT_CASE(pk_warn_double_put),
	KUNIT_CASE(pk_warn_add_hpa_range_not_free),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_warn_suite = {
	.name = "tdx_pamt_warn",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_warn_cases,
};

static DEFINE_MUTEX(pk_canary_a);
static DEFINE_MUTEX(pk_canary_b);
static DEFINE_RAW_SPINLOCK(pk_canary_raw);
static DEFINE_SPINLOCK(pk_canary_lock);

static void pk_canary_check(struct kunit *test)
{
	if (!pk_canary)
		kunit_skip(test, "canaries run with pamt_kunit.canary=1");
}

/* a -> b, then b -> a: lockdep reports a possible circular locking. */
static void pk_canary_lock_inversion(struct kunit *test)
{
	pk_canary_check(test);
	mutex_lock(&pk_canary_a);
	mutex_lock(&pk_canary_b);
	mutex_unlock(&pk_canary_b);
	mutex_unlock(&pk_canary_a);

	mutex_lock(&pk_canary_b);
	mutex_lock(&pk_canary_a);
	mutex_unlock(&pk_canary_a);
	mutex_unlock(&pk_canary_b);
}

/*
 * A GFP_KERNEL allocation under a raw spinlock: sleeping in atomic
 * context, with or without PREEMPT_RT.
 */
static void pk_canary_sleep_in_atomic(struct kunit *test)
{
	void *p;

	pk_canary_check(test);
	raw_spin_lock(&pk_canary_raw);
	p = kmalloc(32, GFP_KERNEL);
	raw_spin_unlock(&pk_canary_raw);
	kfree(p);
}

/*
 * A spinlock_t inside a raw spinlock: on PREEMPT_RT the inner lock
 * sleeps.  Lockdep's wait-type check (PROVE_RAW_LOCK_NESTING) reports it
 * on any kernel that has the check.
 */
static void pk_canary_raw_nesting(struct kunit *test)
{
	pk_canary_check(test);
	if (!IS_ENABLED(CONFIG_PROVE_RAW_LOCK_NESTING))
		kunit_skip(test, "needs CONFIG_PROVE_RAW_LOCK_NESTING");
	raw_spin_lock(&pk_canary_raw);
	spin_lock(&pk_canary_lock);
	spin_unlock(&pk_canary_lock);
	raw_spin_unlock(&pk_canary_raw);
}

/*
 * A spinlock_t inside a slot transition, as the owner of an ADD once took
 * the magazines' locks: it sleeps on PREEMPT_RT.  The transition's lockdep
 * map lets the wait-type check (PROVE_RAW_LOCK_NESTING) report it on any
 * kernel, RT or not.
 */
static void pk_canary_transit_sleeping_lock(struct kunit *test)
{
	pk_canary_check(test);
	pamt_transit_begin();
	spin_lock(&pk_canary_lock);
	spin_unlock(&pk_canary_lock);
	pamt_transit_end();
}

/* A read of freed memory: KASAN reports it and KUnit fails the test. */
static void pk_canary_use_after_free(struct kunit *test)
{
	char *p;

	pk_canary_check(test);
	if (!IS_ENABLED(CONFIG_KASAN))
		kunit_skip(test, "needs CONFIG_KASAN");
	p = kmalloc(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	KUNIT_EXPECT_EQ(test, READ_ONCE(p[8]), READ_ONCE(p[8]));
}

static struct kunit_case pk_canary_cases[] = {
	KUNIT_CASE(pk_canary_lock_inversion),
	KUNIT_CASE(pk_canary_sleep_in_atomic),
	KUNIT_CASE(pk_canary_raw_nesting),
	KUNIT_CASE(pk_canary_transit_sleeping_lock),
	KUNIT_CASE(pk_canary_use_after_free),
	{}
};

static struct kunit_suite pk_canary_suite = {
	.name = "tdx_pamt_canary",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_canary_cases,
};

kunit_test_suites(&pk_warn_suite, &pk_canary_suite);
