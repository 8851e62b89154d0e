// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PAMT cache's slot layer: every slot transition and the waits
 * on another CPU's, its reaction to every ADD and REMOVE error the fake
 * module can return, bad input, refcount overflow, control pages, and
 * running out of memory.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include "pamt_kunit.h"

static DEFINE_SPINLOCK(pk_lock);

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

	pk_up(test);
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

	pk_up(test);
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

	pk_up(test);
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
	pk_up(test);
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

	pk_up(test);
	pfn = pk_slot_pfn(test, 4);
	/* The bound itself, not its length, is tested: keep it short. */
	WRITE_ONCE(pamt.wait_ns, 10 * NSEC_PER_MSEC);
	pk_set_word(pfn, PAMT_SLOT_TRANSIT);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), PAMT_SLOT_TRANSIT);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GET_WAIT), 1ULL);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), PAMT_SLOT_TRANSIT);
	pk_set_word(pfn, 0);
	pk_check_accounting(test, 0);
}

static int pk_clear_later(unsigned long pfn)
{
	msleep(20);
	/* As an owner publishes: by adding, the waiter's count kept. */
	atomic_sub(PAMT_SLOT_TRANSIT, pamt_slot_lookup(pfn));
	return 0;
}

/* ADDING -> EMPTY (the owner failed): the waiter issues the ADD itself. */
static void pk_adding_failed_waiter_adds(struct kunit *test)
{
	struct pk_async a;
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 5);
	pk_set_word(pfn, PAMT_SLOT_TRANSIT);
	/* Else the get may spin on the CPU the clearing thread waits for. */
	migrate_disable();
	pk_async_start(test, &a, pk_clear_later, pfn);
	KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
	migrate_enable();
	wait_for_completion(&a.done);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 1ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
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
	pk_up(test);
	pfn = pk_slot_pfn(test, 6);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_put(pfn), 0);
	pamt_fake_stall(PAMT_FAKE_REMOVE, true);
	migrate_disable();
	pk_async_start(test, &a, pamt_fake_evict, pfn);
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
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), 1ULL);
	tdx_pamt_put(pfn);
	pk_check_accounting(test, 0);
}

/* Evict refuses, changing nothing, while the range is in use. */
static void pk_evict_in_use(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 8);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_REMOVE), 0ULL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	pk_check_accounting(test, 0);
}

/* REMOVE answering BUSY for good: the slot stays IDLE, nothing lost. */
static void pk_remove_busy_stays_idle(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 16);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	tdx_pamt_put(pfn);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_CALLS_MAX);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_IDLE);
	KUNIT_EXPECT_FALSE(test, pk_word(pfn) & PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_LEAKED), 0ULL);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	pk_check_accounting(test, 0);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	pk_check_accounting(test, 0);
}

/* A failed REMOVE leaks the pair; a BUSY one leaves the slot IDLE. */
static void pk_remove_errors(struct kunit *test)
{
	unsigned long a, b;

	pk_up(test);
	a = pk_slot_pfn(test, 18);
	b = pk_slot_pfn(test, 19);
	KUNIT_ASSERT_EQ(test, pk_get(a), 0);
	KUNIT_ASSERT_EQ(test, pk_get(b), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(a), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(b), 0);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(a), -EIO);
	KUNIT_EXPECT_EQ(test, pk_word(a), W_INST | PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_LEAKED), 1ULL);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_CALLS_MAX);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(b), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(b), W_INST);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	pk_check_accounting(test, 0);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(b), 0);
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
	KUNIT_ASSERT_EQ(test, pk_setup_ranges(test, r, 2, 0, PK_NO_CAP), 0);
	hole = 5 * TDX_PAMT_PAGES_PER_SLOT + 3;
	KUNIT_EXPECT_EQ(test, pk_get(hole), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(hole), -EINVAL);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(hole), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_word(hole), PAMT_SLOT_HOLE);
	KUNIT_EXPECT_EQ(test, pk_get(end), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_get(end + 100 * TDX_PAMT_PAGES_PER_SLOT), -EINVAL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(end), -EINVAL);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(end), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_get(ULONG_MAX), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), 0ULL);
	/* Covered slots on both sides of the hole work. */
	KUNIT_EXPECT_EQ(test, pk_get(3 * TDX_PAMT_PAGES_PER_SLOT), 0);
	KUNIT_EXPECT_EQ(test, pk_get(8 * TDX_PAMT_PAGES_PER_SLOT), 0);
	tdx_pamt_put(3 * TDX_PAMT_PAGES_PER_SLOT);
	tdx_pamt_put(8 * TDX_PAMT_PAGES_PER_SLOT);
	pk_check_accounting(test, 0);
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
	cfg.ops = &no_remove;
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 1, &cfg), -EINVAL);
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());

	pk_up(test);
	cfg.ops = &pamt_fake_ops;
	KUNIT_EXPECT_EQ(test, tdx_pamt_init(r, 1, &cfg), -EBUSY);
	KUNIT_EXPECT_TRUE(test, tdx_pamt_enabled());
}

/* A saturated refcount: -EOVERFLOW, nothing changed. */
static void pk_refcount_overflow(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
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
	/* Without waking kswapd, whose reclaim would free pages behind us. */
	const gfp_t gfp = __GFP_NOWARN;
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
	unsigned long a, b, pfn;
	struct page *page;
	int ret_a, ret_b, ret_topup;
	unsigned int tries;

	pk_up(test);
	a = pk_slot_pfn(test, 22);
	b = pk_slot_pfn(test, 23);
	KUNIT_ASSERT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);

	migrate_disable();
	/*
	 * Another CPU may free pages between the hog and the get (an RCU
	 * callback, a vmstat drain of its per-CPU lists).  A get that found
	 * one is undone, its pair freed, and the hog tops up; the -ENOMEM
	 * case must come within a few tries.
	 */
	for (tries = 0; tries < 8; tries++) {
		pk_hog_more(&hog);
		ret_a = pk_get(a);
		if (ret_a)
			break;
		KUNIT_ASSERT_EQ(test, tdx_pamt_put(a), 0);
		KUNIT_ASSERT_EQ(test, pamt_fake_evict(a), 0);
		tdx_pamt_drain();
	}
	kunit_info(test, "-ENOMEM after %u gets that found memory\n", tries);
	pk_hog_more(&hog);
	spin_lock(&pk_lock);
	ret_b = tdx_pamt_get(b, &res);
	spin_unlock(&pk_lock);
	/*
	 * The same race, for the top-up and the control page.  Freed, the
	 * reserve's pairs go to this CPU's magazine, where the next top-up
	 * would find them: drain it.
	 */
	for (tries = 0; tries < 8; tries++) {
		pk_hog_more(&hog);
		ret_topup = __tdx_topup_pamt_cache(&res2, 2, __GFP_NOWARN);
		if (ret_topup)
			break;
		tdx_free_pamt_cache(&res2);
		tdx_pamt_drain();
	}
	for (tries = 0; tries < 8; tries++) {
		pk_hog_more(&hog);
		page = __tdx_alloc_control_page(__GFP_NOWARN);
		if (!page)
			break;
		pfn = page_to_pfn(page);
		tdx_free_control_page(page);
		if (pfn / PTRS_PER_PMD != b / PTRS_PER_PMD)
			KUNIT_ASSERT_EQ(test, pamt_fake_evict(pfn), 0);
		tdx_pamt_drain();
	}
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

	pk_up(test);
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
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(pfn), -EBUSY);
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
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 1);
	page = __tdx_alloc_control_page(GFP_KERNEL);
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
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

static struct kunit_case pk_slot_cases[] = {
	KUNIT_CASE(pk_get_empty_adds),
	KUNIT_CASE(pk_get_active_fast),
	KUNIT_CASE(pk_revive_idle),
	KUNIT_CASE(pk_adding_seen_and_waited),
	KUNIT_CASE(pk_transit_wait_bounded),
	KUNIT_CASE(pk_adding_failed_waiter_adds),
	KUNIT_CASE(pk_removing_seen_and_waited),
	KUNIT_CASE(pk_evict_in_use),
	KUNIT_CASE(pk_remove_busy_stays_idle),
	KUNIT_CASE(pk_remove_errors),
	KUNIT_CASE(pk_bad_pfn),
	KUNIT_CASE(pk_init_bad_config),
	KUNIT_CASE(pk_refcount_overflow),
	KUNIT_CASE(pk_enomem),
	KUNIT_CASE(pk_control_pages),
	KUNIT_CASE(pk_status_errno),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_slot_suite = {
	.name = "tdx_pamt_slot",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_slot_cases,
};

kunit_test_suite(pk_slot_suite);
