// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PAMT cache's slot transitions, its reaction to every error
 * the fake module can return, bad input, reserves, evict, DEMOTE/PROMOTE
 * pairs and control pages.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include "pamt_kunit.h"

#define W_INST		PAMT_SLOT_INSTALLED
#define W_IDLE		(PAMT_SLOT_INSTALLED | PAMT_SLOT_RECENT)

static DEFINE_SPINLOCK(pk_lock);

static int pk_get(unsigned long pfn)
{
	return tdx_pamt_get(pfn, NULL);
}

/* Run one call on another task, to meet it in the middle of a transition. */
struct pk_async {
	int (*fn)(unsigned long pfn);
	unsigned long pfn;
	int ret;
	struct completion done;
};

static int pk_async_fn(void *data)
{
	struct pk_async *a = data;

	a->ret = a->fn(a->pfn);
	complete(&a->done);
	return 0;
}

/*
 * Start @fn on the @nth online CPU other than the caller's.  A transition
 * runs with preemption off (and, inside a stalled fake SEAMCALL, with
 * IRQs off), so nothing else can run on its CPU until it ends: a caller
 * that watches it keeps to its own CPU with migrate_disable(), and two
 * helpers that must both run get different CPUs.
 */
static void pk_async_start_nth(struct kunit *test, struct pk_async *a,
			       int (*fn)(unsigned long), unsigned long pfn,
			       unsigned int nth)
{
	unsigned int cpu, self = raw_smp_processor_id(), i = 0;
	struct task_struct *t;

	a->fn = fn;
	a->pfn = pfn;
	a->ret = -EINPROGRESS;
	init_completion(&a->done);
	for_each_online_cpu(cpu) {
		if (cpu != self && i++ == nth)
			break;
	}
	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "needs %u online CPUs", nth + 2);
	t = kthread_create(pk_async_fn, a, "pamt_kunit_async");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	kthread_bind(t, cpu);
	wake_up_process(t);
}

static void pk_async_start(struct kunit *test, struct pk_async *a,
			   int (*fn)(unsigned long), unsigned long pfn)
{
	pk_async_start_nth(test, a, fn, pfn, 0);
}

/* Wait until the slot of @pfn is in @state; false only if it never is. */
static bool pk_wait_state(unsigned long pfn, enum pamt_slot_state state)
{
	unsigned long deadline = jiffies + nsecs_to_jiffies(PK_WAIT_NS);

	while (pamt_slot_state(pk_word(pfn)) != state) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(50, 100);
	}
	return true;
}

/* EMPTY -> ADDING -> ACTIVE, and ACTIVE -> IDLE on the last put. */
static void pk_get_empty_adds(struct kunit *test)
{
	unsigned long pfn;
	u64 v[TDX_PAMT_STAT_NR];

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 0);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_EMPTY);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn, NULL), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	pk_stats(v);
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_ADD], 1ULL);
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_GET_SLOW], 1ULL);
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_INSTALLED], 1ULL);
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_PAGE_ALLOC], 2ULL);
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_MAG_MISS], 1ULL);
	pk_check_accounting(test, 0);

	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_IDLE);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_IDLE);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), 0ULL);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	pk_check_accounting(test, 0);
}

/* ACTIVE: further gets and puts are counted, no SEAMCALL. */
static void pk_get_active_fast(struct kunit *test)
{
	unsigned long pfn;
	int i;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 1);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn + i, NULL), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 3);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GET_FAST), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 1ULL);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn + i), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_IDLE);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PUT_FAST), 3ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PUT_SLOW), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.calls[PAMT_FAKE_ADD]), 1LL);
}

/* IDLE -> ACTIVE without a SEAMCALL. */
static void pk_revive_idle(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 2);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REVIVE), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.calls[PAMT_FAKE_ADD]), 1LL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	pk_check_accounting(test, 0);
}

/* Wait until @n gets have met a transition and are waiting for it. */
static bool pk_wait_waiters(u64 n)
{
	unsigned long deadline = jiffies + nsecs_to_jiffies(PK_WAIT_NS);

	while (pk_stat(TDX_PAMT_STAT_GET_WAIT) < n) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(50, 100);
	}
	return true;
}

/*
 * A get that meets ADDING waits for the owner and then takes a reference.
 * The fake holds the owner's ADD open until the waiter is seen waiting,
 * so the outcome does not depend on how fast either thread runs.
 */
static void pk_adding_seen_and_waited(struct kunit *test)
{
	struct pk_async a, b;
	unsigned long pfn;

	/* The owner, the waiter and this thread each need a CPU. */
	if (num_online_cpus() < 3)
		kunit_skip(test, "needs 3 online CPUs");
	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 3);
	pamt_fake_stall(PAMT_FAKE_ADD, true);
	migrate_disable();
	pk_async_start(test, &a, pk_get, pfn);
	KUNIT_EXPECT_TRUE(test, pk_wait_state(pfn, PAMT_SLOT_ADDING));
	pk_async_start_nth(test, &b, pk_get, pfn, 1);
	KUNIT_EXPECT_TRUE(test, pk_wait_waiters(1));
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_ADDING);
	pamt_fake_stall(PAMT_FAKE_ADD, false);
	migrate_enable();
	wait_for_completion(&a.done);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(test, a.ret, 0);
	KUNIT_EXPECT_EQ(test, b.ret, 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 2);
	KUNIT_EXPECT_GE(test, pk_stat(TDX_PAMT_STAT_GET_WAIT), 1ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.calls[PAMT_FAKE_ADD]), 1LL);
	tdx_pamt_put(pfn);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

/* A transition that never ends: the wait is bounded, nothing changes. */
static void pk_transit_wait_bounded(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 4);
	/* The bound itself, not its length, is tested: keep it short. */
	WRITE_ONCE(pamt.wait_ns, 10 * NSEC_PER_MSEC);
	pk_set_word(pfn, PAMT_SLOT_TRANSIT);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), PAMT_SLOT_TRANSIT);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GET_WAIT), 1ULL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), PAMT_SLOT_TRANSIT);
	pk_set_word(pfn, 0);
	pk_check_accounting(test, 0);
}

static int pk_clear_later(unsigned long pfn)
{
	msleep(20);
	pk_set_word(pfn, 0);
	return 0;
}

/* ADDING -> EMPTY (the owner failed): the waiter issues the ADD itself. */
static void pk_adding_failed_waiter_adds(struct kunit *test)
{
	struct pk_async a;
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 5);
	pk_set_word(pfn, PAMT_SLOT_TRANSIT);
	pk_async_start(test, &a, pk_clear_later, pfn);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	wait_for_completion(&a.done);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 1ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

static int pk_evict(unsigned long pfn)
{
	return tdx_pamt_evict(pfn);
}

/*
 * IDLE -> REMOVING -> EMPTY by evict; a get meeting REMOVING re-adds.  The
 * fake holds the REMOVE open until the get is seen waiting.
 */
static void pk_removing_seen_and_waited(struct kunit *test)
{
	struct pk_async a, b;
	unsigned long pfn;

	/* The owner, the waiter and this thread each need a CPU. */
	if (num_online_cpus() < 3)
		kunit_skip(test, "needs 3 online CPUs");
	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 6);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_put(pfn), 0);
	pamt_fake_stall(PAMT_FAKE_REMOVE, true);
	migrate_disable();
	pk_async_start(test, &a, pk_evict, pfn);
	KUNIT_EXPECT_TRUE(test, pk_wait_state(pfn, PAMT_SLOT_REMOVING));
	pk_async_start_nth(test, &b, pk_get, pfn, 1);
	KUNIT_EXPECT_TRUE(test, pk_wait_waiters(1));
	pamt_fake_stall(PAMT_FAKE_REMOVE, false);
	migrate_enable();
	wait_for_completion(&a.done);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(test, a.ret, 0);
	KUNIT_EXPECT_EQ(test, b.ret, 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.calls[PAMT_FAKE_ADD]), 2LL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_EVICT), 1ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

/* Evict of an IDLE slot REMOVEs and keeps the pair for the next ADD. */
static void pk_evict_idle(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 7);
	migrate_disable();
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(pfn));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_EVICT), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 0ULL);
	/* Already EMPTY: nothing to do. */
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), 0);
	pk_check_accounting(test, 0);
	/* The next ADD reuses the cached pair. */
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
	migrate_enable();
}

/* Evict refuses, changing nothing, while the range is in use. */
static void pk_evict_in_use(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 8);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), 0ULL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	pk_check_accounting(test, 0);
}

/* Eager mode: the last put REMOVEs at once and caches the pair. */
static void pk_eager_put_removes(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_EAGER);
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
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	pk_check_accounting(test, 0);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 2ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
	migrate_enable();
}

/* RECENT buys a second chance; unreferenced slots go first. */
static void pk_shrink_second_chance(struct kunit *test)
{
	unsigned long a, b, scanned = 0;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	a = pk_slot_pfn(test, 10);
	b = pk_slot_pfn(test, 11);
	KUNIT_ASSERT_EQ(test, pk_get(a), 0);
	KUNIT_ASSERT_EQ(test, pk_get(b), 0);
	tdx_pamt_put(a);
	tdx_pamt_put(b);
	/* As if the shrinker had already given b its second chance. */
	pk_set_word(b, W_INST);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_count(), 2UL);

	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_scan(1, &scanned), 1UL);
	KUNIT_EXPECT_EQ(test, scanned, 1UL);
	KUNIT_EXPECT_EQ(test, pk_word(b), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(b));
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(a)), PAMT_SLOT_IDLE);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(a));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_SHRINK), 1ULL);
	/* The shrinker frees pairs, reset first. */
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 2ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.resets), 2LL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_count(), 1UL);

	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_scan(1, &scanned), 1UL);
	KUNIT_EXPECT_EQ(test, pk_word(a), 0UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_count(), 0UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_scan(8, &scanned), 0UL);
	KUNIT_EXPECT_EQ(test, scanned, 0UL);
	pk_check_accounting(test, 0);
}

/* A slot revived before reclaim reaches its entry is not removed. */
static void pk_shrink_skips_revived(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 12);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	tdx_pamt_put(pfn);
	pk_set_word(pfn, W_INST);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_count(), 0UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_scan(4, NULL), 0UL);
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
		tdx_pamt_pair_give(&p);
	}
}

/* Pairs beyond two magazines go to the depot, which the shrinker frees. */
static void pk_shrink_depot(struct kunit *test)
{
	unsigned long depot;

	KUNIT_ASSERT_EQ(test, pk_setup(test, TDX_PAMT_MODE_MAGAZINE, 2,
				       PK_NO_CAP), 0);
	migrate_disable();
	pk_give_new_pairs(test, 9);
	migrate_enable();
	depot = pamt_depot_pairs();
	KUNIT_EXPECT_GE(test, depot, 4UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 9ULL);
	/* The shrinker counts magazine pairs too, but frees the depot first. */
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_count(), 9UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_scan(depot, NULL), depot);
	KUNIT_EXPECT_EQ(test, pamt_depot_pairs(), 0UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 9ULL - depot);
	pk_check_accounting(test, 0);
}

/* At the idle cap, pairs given back are freed instead of cached. */
static void pk_depot_respects_cap(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, pk_setup(test, TDX_PAMT_MODE_MAGAZINE, 2, 2), 0);
	migrate_disable();
	pk_give_new_pairs(test, 12);
	migrate_enable();
	KUNIT_EXPECT_LE(test, pamt_depot_pairs(), 2UL);
	KUNIT_EXPECT_GT(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 0ULL);
	pk_check_accounting(test, 0);
}

/* tdx_pamt_set_idle_cap() trims idle slots down to the new cap. */
static void pk_set_idle_cap_trims(struct kunit *test)
{
	unsigned long base;
	int i;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	base = pk_slot_pfn(test, 13);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, pk_get(base + i * 512), 0);
	for (i = 0; i < 4; i++)
		tdx_pamt_put(base + i * 512);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 4ULL);
	tdx_pamt_set_idle_cap(1);
	KUNIT_EXPECT_EQ(test, tdx_pamt_idle_cap(), 1UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CAP), 3ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 1ULL);
	pk_check_accounting(test, 0);
}

/* Over the cap, a put that idles a slot frees a depot pair first. */
static void pk_put_over_cap_frees_depot(struct kunit *test)
{
	unsigned long pfn, depot;

	KUNIT_ASSERT_EQ(test, pk_setup(test, TDX_PAMT_MODE_MAGAZINE, 2, 8), 0);
	pfn = pk_slot_pfn(test, 20);
	migrate_disable();
	pk_give_new_pairs(test, 10);
	depot = pamt_depot_pairs();
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	/* Idle memory (magazines and depot) is now exactly the cap. */
	tdx_pamt_set_idle_cap(tdx_pamt_shrink_count());
	tdx_pamt_put(pfn);
	migrate_enable();
	KUNIT_EXPECT_GT(test, depot, 0UL);
	KUNIT_EXPECT_EQ(test, pamt_depot_pairs(), depot - 1);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_IDLE);
	pk_check_accounting(test, 0);
}

/* ADD answering BUSY is retried; then it succeeds. */
static void pk_add_busy_retried(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
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

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 14);
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_RETRIES + 2);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD),
			(u64)PAMT_BUSY_RETRIES + 3);
	/* The fallback lock, once per serialised call: BUSY, then success. */
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GLOBAL_LOCK), 2ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pamt.serializing), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

/* A failed ADD: slot back to EMPTY, the pair back in a magazine. */
static void pk_add_fails(struct kunit *test, u64 status, unsigned int n,
			 int err)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
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
	/* Every BUSY answer but the last was retried. */
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_BUSY),
			(u64)PAMT_BUSY_CALLS_MAX - 1);
}

static void pk_add_page_not_free(struct kunit *test)
{
	pk_add_fails(test, TDX_PAMT_PAGE_NOT_FREE, 1, -EIO);
}

static void pk_add_addr_range(struct kunit *test)
{
	pk_add_fails(test, TDX_PAMT_OPERAND_ADDR_RANGE | 0x11, 1, -EIO);
}

/* REMOVE answering BUSY for good: the slot stays IDLE, nothing lost. */
static void pk_remove_busy_stays_idle(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 16);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	tdx_pamt_put(pfn);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_CALLS_MAX);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_IDLE);
	KUNIT_EXPECT_FALSE(test, pk_word(pfn) & PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_LEAKED), 0ULL);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	pk_check_accounting(test, 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	pk_check_accounting(test, 0);
}

/* Any other REMOVE error: the slot is LEAKED, counted, never reclaimed. */
static void pk_remove_error_leaks(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 17);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	tdx_pamt_put(pfn);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EIO);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_LEAKED), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 1ULL);
	/* Evict and the shrinker leave it alone; get and put still work. */
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EIO);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_count(), 0UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_scan(4, NULL), 0UL);
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

/* Eager mode: a failed REMOVE on put leaks; a BUSY one leaves it IDLE. */
static void pk_eager_remove_errors(struct kunit *test)
{
	unsigned long a, b;

	pk_up(test, TDX_PAMT_MODE_EAGER);
	a = pk_slot_pfn(test, 18);
	b = pk_slot_pfn(test, 19);
	KUNIT_ASSERT_EQ(test, pk_get(a), 0);
	KUNIT_ASSERT_EQ(test, pk_get(b), 0);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(a), 0);
	KUNIT_EXPECT_EQ(test, pk_word(a), W_INST | PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_LEAKED), 1ULL);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_CALLS_MAX);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(b), 0);
	KUNIT_EXPECT_EQ(test, pk_word(b), W_INST);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	pk_check_accounting(test, 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(b), 0);
	pk_unleak(test, a);
	pk_check_accounting(test, 0);
}

/* Bad input: uncovered pfns, beyond the end and in a hole. */
static void pk_bad_pfn(struct kunit *test)
{
	struct tdx_pamt_range r[2];
	unsigned long end, hole;

	end = round_up(max_pfn, TDX_PAMT_PAGES_PER_SLOT);
	KUNIT_ASSERT_GE(test, end, 16UL * TDX_PAMT_PAGES_PER_SLOT);
	r[0].start_pfn = 0;
	r[0].end_pfn = 4 * TDX_PAMT_PAGES_PER_SLOT;
	r[1].start_pfn = 8 * TDX_PAMT_PAGES_PER_SLOT;
	r[1].end_pfn = end;
	KUNIT_ASSERT_EQ(test, pk_setup_ranges(test, r, 2, TDX_PAMT_MODE_MAGAZINE,
					      0, PK_NO_CAP), 0);
	hole = 5 * TDX_PAMT_PAGES_PER_SLOT + 3;
	KUNIT_EXPECT_EQ(test, pk_get(hole), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(hole), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(hole), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_word(hole), PAMT_SLOT_HOLE);
	KUNIT_EXPECT_EQ(test, pk_get(end), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_get(end + 100 * TDX_PAMT_PAGES_PER_SLOT), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(end), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(end), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_get(ULONG_MAX), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 0ULL);
	/* Covered slots on both sides of the hole work. */
	KUNIT_EXPECT_EQ(test, pk_get(3 * TDX_PAMT_PAGES_PER_SLOT), 0);
	KUNIT_EXPECT_EQ(test, pk_get(8 * TDX_PAMT_PAGES_PER_SLOT), 0);
	tdx_pamt_put(3 * TDX_PAMT_PAGES_PER_SLOT);
	tdx_pamt_put(8 * TDX_PAMT_PAGES_PER_SLOT);
	pk_check_accounting(test, 0);
}

#define PK_FAR_PFN	BIT(46)
#define PK_GIB_PFNS	BIT(18)

/*
 * RAM, and 1 GiB at pfn 2^46: get, put, evict, the idle cap and the
 * shrinker at both ends of both; holes between, below and above are
 * -EINVAL and change no word; -EOVERFLOW on a far slot changes nothing;
 * and the slot metadata is what the covered memory needs, not the span.
 */
static void pk_sparse_far(struct kunit *test)
{
	const unsigned long far = PK_FAR_PFN, gib = PK_GIB_PFNS;
	unsigned long end, pfn, idx, i, nr, meta, *words;
	struct tdx_pamt_range r[2];
	unsigned long ends[4], holes[7];
	u64 adds, fast;

	end = round_up(max_pfn, TDX_PAMT_PAGES_PER_SLOT);
	KUNIT_ASSERT_LT(test, end, far - gib);
	r[0].start_pfn = 0;
	r[0].end_pfn = end;
	r[1].start_pfn = far;
	r[1].end_pfn = far + gib;
	KUNIT_ASSERT_EQ(test, pk_setup_ranges(test, r, 2, TDX_PAMT_MODE_MAGAZINE,
					      0, PK_NO_CAP), 0);

	/* RAM is the flat window, the far GiB one block: no hole at all. */
	nr = end / TDX_PAMT_PAGES_PER_SLOT + PAMT_BLOCK_SLOTS;
	KUNIT_EXPECT_EQ(test, pamt.nr_flat, end / TDX_PAMT_PAGES_PER_SLOT);
	KUNIT_ASSERT_EQ(test, pamt.nr_slots, nr);
	meta = nr * sizeof(atomic_t) + sizeof(unsigned long) +
	       2 * sizeof(struct pamt_far) + nr * sizeof(u32) +
	       BITS_TO_LONGS(nr) * sizeof(long);
	KUNIT_EXPECT_EQ(test, pamt.meta_bytes, meta);
	kunit_info(test, "slot metadata: %lu bytes for %lu covered 2M ranges, 2^46 pfns apart\n",
		   pamt.meta_bytes, nr);

	ends[0] = pk_slot_pfn(test, 0);
	ends[1] = end - 1;
	ends[2] = far;
	ends[3] = far + gib - 1;
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		pfn = ends[i];
		KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
		KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
		KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
		idx = pamt_slot_idx(pamt_slot_lookup(pfn));
		KUNIT_EXPECT_EQ(test, pamt_slot_base_pfn(idx),
				round_down(pfn, TDX_PAMT_PAGES_PER_SLOT));
	}

	/* -EOVERFLOW at the most references, on the far slot. */
	pk_set_word(far, W_INST | (PAMT_SLOT_REF_MAX - 1));
	KUNIT_EXPECT_EQ(test, pk_get(far + 1), 0);
	fast = pk_stat(TDX_PAMT_STAT_GET_FAST);
	KUNIT_EXPECT_EQ(test, pk_get(far + 2), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, pk_word(far), W_INST | PAMT_SLOT_REF_MAX);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GET_FAST), fast);
	pk_set_word(far, W_INST | 1);

	/* Holes: nothing changes, not a word, not a counter. */
	holes[0] = end;
	holes[1] = end + 100 * TDX_PAMT_PAGES_PER_SLOT;
	holes[2] = far - 1;
	holes[3] = far - gib;
	holes[4] = far + gib;
	holes[5] = 2 * far;
	holes[6] = ULONG_MAX;
	words = kcalloc(nr, sizeof(*words), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, words);
	for (i = 0; i < nr; i++)
		words[i] = atomic_read(&pamt.slots[i]);
	adds = pk_stat(TDX_PAMT_STAT_ADD);
	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		KUNIT_EXPECT_NULL(test, pamt_slot_lookup(holes[i]));
		KUNIT_EXPECT_EQ(test, pk_get(holes[i]), -EINVAL);
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(holes[i]), -EINVAL);
		KUNIT_EXPECT_EQ(test, tdx_pamt_evict(holes[i]), -EINVAL);
	}
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, (unsigned long)atomic_read(&pamt.slots[i]),
				words[i]);
	kfree(words);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), adds);

	/* Idle at both ends; the cap, evict and the shrinker empty them. */
	for (i = 0; i < ARRAY_SIZE(ends); i++)
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(ends[i]), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 4ULL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(far + gib - 1), 0);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(far + gib - 1));
	tdx_pamt_set_idle_cap(1);
	KUNIT_EXPECT_LE(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS) +
			pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	tdx_pamt_shrink_scan(16, NULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		KUNIT_EXPECT_EQ(test, pk_word(ends[i]), 0UL);
		KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(ends[i]));
	}
	tdx_pamt_set_idle_cap(PK_NO_CAP);
	pk_check_accounting(test, 0);
}

/* Without the cache (no Dynamic PAMT) every call is a no-op success. */
static void pk_disabled_noop(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };

	KUNIT_ASSERT_FALSE(test, tdx_pamt_enabled());
	KUNIT_EXPECT_EQ(test, pk_get(1234), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(1234), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(1234), 0);
	KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, 2, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, res.nr, 0U);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_count(), 0UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_shrink_scan(10, NULL), 0UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_drain(), 0UL);
	/* Without Dynamic PAMT, DEMOTE takes no pair. */
	{
		struct tdx_pamt_pair p;

		KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&p, &res, GFP_KERNEL),
				-EOPNOTSUPP);
	}
}

/* tdx_pamt_init() refuses bad configurations and a second init. */
static void pk_init_bad_config(struct kunit *test)
{
	static const struct tdx_pamt_ops no_remove = {
		.add = NULL,
	};
	struct tdx_pamt_config cfg = { .ops = &pamt_fake_ops };
	struct tdx_pamt_range r[2] = {
		{ 0, 2 * TDX_PAMT_PAGES_PER_SLOT },
		{ TDX_PAMT_PAGES_PER_SLOT, 4 * TDX_PAMT_PAGES_PER_SLOT },
	};
	struct tdx_pamt_range odd = { 1, TDX_PAMT_PAGES_PER_SLOT };

	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 0, &cfg), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(&odd, 1, &cfg), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 2, &cfg), -EINVAL);
	cfg.mag_size = PAMT_MAG_SIZE_MAX + 1;
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 1, &cfg), -EINVAL);
	cfg.mag_size = 0;
	cfg.mode = 7;
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 1, &cfg), -EINVAL);
	cfg.mode = TDX_PAMT_MODE_MAGAZINE;
	cfg.ops = &no_remove;
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 1, &cfg), -EINVAL);
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	cfg.ops = &pamt_fake_ops;
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 1, &cfg), -EBUSY);
	KUNIT_EXPECT_TRUE(test, tdx_pamt_enabled());
}

/* A saturated refcount: -EOVERFLOW, nothing changed. */
static void pk_refcount_overflow(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	pfn = pk_slot_pfn(test, 21);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	pk_set_word(pfn, W_INST | (PAMT_SLOT_REF_MAX - 1));
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | PAMT_SLOT_REF_MAX);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | PAMT_SLOT_REF_MAX);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | (PAMT_SLOT_REF_MAX - 1));
	pk_set_word(pfn, W_INST | 1);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	pk_check_accounting(test, 0);
}

/* Pages held so that GFP_NOWAIT allocations fail on this CPU. */
struct pk_hog {
	struct list_head pages;
	unsigned long nr;
};

static void pk_hog_more(struct pk_hog *hog)
{
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	struct page *page;
	int order;

	for (order = MAX_PAGE_ORDER; order >= 0; order--) {
		while ((page = alloc_pages(gfp, order))) {
			set_page_private(page, order);
			list_add(&page->lru, &hog->pages);
			hog->nr += 1UL << order;
		}
	}
}

static void pk_hog_free(struct pk_hog *hog)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &hog->pages, lru) {
		list_del(&page->lru);
		__free_pages(page, page_private(page));
	}
	hog->nr = 0;
}

/*
 * Out of memory: a get without a reserve fails with -ENOMEM and changes
 * nothing; a get with a reserve, under a spinlock, still succeeds.
 */
static void pk_enomem(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 }, res2 = { .nr = 0 };
	struct pk_hog hog = { .pages = LIST_HEAD_INIT(hog.pages) };
	unsigned long a, b;
	struct page *page;
	int ret_a, ret_b, ret_topup;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	a = pk_slot_pfn(test, 22);
	b = pk_slot_pfn(test, 23);
	KUNIT_ASSERT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);

	migrate_disable();
	pk_hog_more(&hog);
	ret_a = pk_get(a);
	pk_hog_more(&hog);
	spin_lock(&pk_lock);
	ret_b = tdx_pamt_get(b, &res);
	spin_unlock(&pk_lock);
	pk_hog_more(&hog);
	ret_topup = __tdx_topup_pamt_cache(&res2, 2, GFP_NOWAIT | __GFP_NOWARN);
	pk_hog_more(&hog);
	page = __tdx_alloc_control_page(GFP_NOWAIT | __GFP_NOWARN);
	pk_hog_free(&hog);
	migrate_enable();

	KUNIT_EXPECT_EQ(test, ret_a, -ENOMEM);
	KUNIT_EXPECT_EQ(test, pk_word(a), 0UL);
	KUNIT_EXPECT_EQ(test, ret_b, 0);
	KUNIT_EXPECT_EQ(test, res.nr, 0U);
	KUNIT_EXPECT_EQ(test, pk_word(b), W_INST | 1);
	KUNIT_EXPECT_EQ(test, ret_topup, -ENOMEM);
	KUNIT_EXPECT_EQ(test, res2.nr, 0U);
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 1ULL);
	pk_check_accounting(test, 0);
	tdx_free_control_page(page);
	tdx_pamt_put(b);
	pk_check_accounting(test, 0);
}

/* Reserves: top-up, the bound, drain back into the magazines. */
static void pk_reserve_topup_drain(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
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

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
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

/* DEMOTE takes a pair, PROMOTE gives one back; LIFO on one CPU. */
static void pk_pair_take_give(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	struct tdx_pamt_pair p, q;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	migrate_disable();
	KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&p, NULL, GFP_NOWAIT), 0);
	KUNIT_EXPECT_NE(test, p.pfn[0], p.pfn[1]);
	KUNIT_EXPECT_LT(test, p.pfn[0], pk(test)->end_pfn);
	pk_check_accounting(test, 1);
	tdx_pamt_pair_give(&p);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&q, NULL, GFP_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, q.pfn[0], p.pfn[0]);
	KUNIT_EXPECT_EQ(test, q.pfn[1], p.pfn[1]);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_MAG_HIT), 1ULL);
	migrate_enable();

	/* Empty magazines: the reserve is next, then the allocator. */
	KUNIT_ASSERT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);
	p = res.pairs[0];
	KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&q, &res, GFP_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, q.pfn[0], p.pfn[0]);
	KUNIT_EXPECT_EQ(test, res.nr, 0U);
	pk_check_accounting(test, 2);
	tdx_pamt_pair_give(&q);
	tdx_pamt_pair_give(&p);
	pk_check_accounting(test, 0);
}

/*
 * Control pages hold a reference on their range's pair.  The module keeps
 * the pair's pages in its PAMT page bitmap until REMOVE, and refuses one
 * as a TD's page.
 */
static void pk_control_pages(struct kunit *test)
{
	struct tdx_pamt_pair pair;
	struct page *page;
	unsigned long pfn;

	pk_up(test, TDX_PAMT_MODE_MAGAZINE);
	page = __tdx_alloc_control_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	pfn = page_to_pfn(page);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_ACTIVE);
	KUNIT_EXPECT_GE(test, pamt_slot_refs(pk_word(pfn)), 1UL);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	pair = pamt_fake.ranges[(pfn - pamt_fake.start_pfn) /
				TDX_PAMT_PAGES_PER_SLOT].pair;
	KUNIT_EXPECT_TRUE(test, pamt_fake_is_pamt_page(pair.pfn[0]));
	KUNIT_EXPECT_TRUE(test, pamt_fake_is_pamt_page(pair.pfn[1]));
	KUNIT_EXPECT_FALSE(test, pamt_fake_is_pamt_page(pfn));
	KUNIT_EXPECT_EQ(test, pamt_fake_control_add(pair.pfn[1]),
			TDX_PAMT_PAGE_METADATA_INCORRECT);
	/* That violation was provoked here. */
	atomic64_dec(&pamt_fake.violations);
	/* A TD page of the range is accepted by the module now. */
	KUNIT_EXPECT_EQ(test, pamt_fake_page_aug(pfn), TDX_PAMT_SUCCESS);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pamt_fake_page_remove(pfn), TDX_PAMT_SUCCESS);
	tdx_free_control_page(page);
	tdx_free_control_page(NULL);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_IDLE);
	pk_check_accounting(test, 0);

	/* ADD failing: no page, no reference, nothing leaked. */
	tdx_pamt_drain();
	/* REMOVE cleared the pair's bits. */
	KUNIT_EXPECT_FALSE(test, pamt_fake_is_pamt_page(pair.pfn[0]));
	KUNIT_EXPECT_FALSE(test, pamt_fake_is_pamt_page(pair.pfn[1]));
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_PAGE_NOT_FREE, 1);
	page = __tdx_alloc_control_page(GFP_KERNEL);
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	pk_check_accounting(test, 0);
}

/* drain: every idle slot REMOVEd, every cached pair freed. */
static void pk_drain_all(struct kunit *test)
{
	unsigned long base;
	int i;

	KUNIT_ASSERT_EQ(test, pk_setup(test, TDX_PAMT_MODE_MAGAZINE, 4,
				       PK_NO_CAP), 0);
	base = pk_slot_pfn(test, 25);
	for (i = 0; i < 6; i++)
		KUNIT_ASSERT_EQ(test, pk_get(base + i * 512), 0);
	for (i = 0; i < 6; i++)
		tdx_pamt_put(base + i * 512);
	pk_give_new_pairs(test, 13);
	KUNIT_EXPECT_EQ(test, tdx_pamt_drain(), 19UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.pairs), 0LL);
	pk_check_accounting(test, 0);
}

/* The one mapping of TDX status to errno. */
static void pk_status_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_SUCCESS), 0);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_SUCCESS | 5), 0);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_OPERAND_BUSY), -EBUSY);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_OPERAND_BUSY | 0x93), -EBUSY);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_HPA_RANGE_NOT_FREE), -EIO);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_PAGE_NOT_FREE), -EIO);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_OPERAND_ADDR_RANGE), -EIO);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_PAGE_NOT_EMPTY), -EIO);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(TDX_PAMT_NO_PAGE_PAIR), -EIO);
}

/* Every counter has a name. */
static void pk_stat_names(struct kunit *test)
{
	int i;

	for (i = 0; i < TDX_PAMT_STAT_NR; i++)
		KUNIT_EXPECT_NOT_NULL_MSG(test, tdx_pamt_stat_names[i],
					  "counter %d", i);
}

static struct kunit_case pk_func_cases[] = {
	KUNIT_CASE(pk_get_empty_adds),
	KUNIT_CASE(pk_get_active_fast),
	KUNIT_CASE(pk_revive_idle),
	KUNIT_CASE(pk_adding_seen_and_waited),
	KUNIT_CASE(pk_transit_wait_bounded),
	KUNIT_CASE(pk_adding_failed_waiter_adds),
	KUNIT_CASE(pk_removing_seen_and_waited),
	KUNIT_CASE(pk_evict_idle),
	KUNIT_CASE(pk_evict_in_use),
	KUNIT_CASE(pk_eager_put_removes),
	KUNIT_CASE(pk_shrink_second_chance),
	KUNIT_CASE(pk_shrink_skips_revived),
	KUNIT_CASE(pk_shrink_depot),
	KUNIT_CASE(pk_depot_respects_cap),
	KUNIT_CASE(pk_set_idle_cap_trims),
	KUNIT_CASE(pk_put_over_cap_frees_depot),
	KUNIT_CASE(pk_add_busy_retried),
	KUNIT_CASE(pk_add_busy_serialised),
	KUNIT_CASE(pk_add_busy_exhausted),
	KUNIT_CASE(pk_add_page_not_free),
	KUNIT_CASE(pk_add_addr_range),
	KUNIT_CASE(pk_remove_busy_stays_idle),
	KUNIT_CASE(pk_remove_error_leaks),
	KUNIT_CASE(pk_eager_remove_errors),
	KUNIT_CASE(pk_bad_pfn),
	KUNIT_CASE(pk_sparse_far),
	KUNIT_CASE(pk_disabled_noop),
	KUNIT_CASE(pk_init_bad_config),
	KUNIT_CASE(pk_refcount_overflow),
	KUNIT_CASE(pk_enomem),
	KUNIT_CASE(pk_reserve_topup_drain),
	KUNIT_CASE(pk_reserve_used_under_lock),
	KUNIT_CASE(pk_pair_take_give),
	KUNIT_CASE(pk_control_pages),
	KUNIT_CASE(pk_drain_all),
	KUNIT_CASE(pk_status_errno),
	KUNIT_CASE(pk_stat_names),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_func_suite = {
	.name = "tdx_pamt_func",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_func_cases,
};

kunit_test_suite(pk_func_suite);
