// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: CPU hotplug.  A dead CPU's magazine keeps its pairs, counted,
 * until a drain or the shrinker frees them; CPUs go down and up under gets
 * and puts.
 */
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include "pamt_kunit.h"

static unsigned long pk_ctx_pfn(struct kunit *test, int i)
{
	return pk_slot_pfn(test, 40 + i);
}

static int pk_pick_cpu(struct kunit *test)
{
	int cpu = cpumask_last(cpu_online_mask);

	if (num_online_cpus() < 2 || !cpu)
		kunit_skip(test, "needs two online CPUs (qemu -smp 4)");
	return cpu;
}

static long pk_give_on_cpu(void *arg)
{
	struct tdx_pamt_pair p;
	long i, n = (long)arg;

	for (i = 0; i < n; i++) {
		if (pamt_pair_alloc(&p, GFP_KERNEL))
			return i;
		pamt_mag_push(&p);
	}
	return n;
}

/* Under its lock: the worker may be draining it from another CPU. */
static unsigned int pk_cpu_cached(int cpu)
{
	struct pamt_pcpu *pc = per_cpu_ptr(pamt.pcpu, cpu);
	unsigned long flags;
	unsigned int nr;

	spin_lock_irqsave(&pc->lock, flags);
	nr = pc->mag->nr;
	spin_unlock_irqrestore(&pc->lock, flags);
	return nr;
}

struct pk_load {
	struct kunit *test;
	unsigned long first;
	bool churn;
	bool stop;
	atomic_long_t ops;
	atomic_long_t errs;
	atomic_t running;
	struct completion done;
};

/* get/put on held slots (fast path only) or, with churn, evict too. */
static int pk_load_fn(void *data)
{
	struct pk_load *l = data;
	unsigned long pfn;
	int ret;

	while (!READ_ONCE(l->stop)) {
		pfn = l->first + get_random_u32_below(8) * TDX_PAMT_PAGES_PER_SLOT;
		ret = tdx_pamt_get(pfn, NULL);
		if (ret && ret != -EBUSY)
			atomic_long_inc(&l->errs);
		if (!ret && tdx_pamt_put(pfn))
			atomic_long_inc(&l->errs);
		if (l->churn) {
			ret = pamt_fake_evict(pfn);
			if (ret && ret != -EBUSY)
				atomic_long_inc(&l->errs);
		}
		atomic_long_inc(&l->ops);
		cond_resched();
	}
	if (atomic_dec_and_test(&l->running))
		complete(&l->done);
	return 0;
}

static void pk_load_start(struct kunit *test, struct pk_load *l, int nr)
{
	struct task_struct *t;
	int i;

	init_completion(&l->done);
	atomic_set(&l->running, nr);
	for (i = 0; i < nr; i++) {
		t = kthread_run(pk_load_fn, l, "pamt_kunit_load/%d", i);
		if (IS_ERR(t)) {
			KUNIT_FAIL(test, "no load thread");
			if (atomic_dec_and_test(&l->running))
				complete(&l->done);
		}
	}
}

static void pk_load_stop(struct pk_load *l)
{
	WRITE_ONCE(l->stop, true);
	wait_for_completion(&l->done);
}

/* A dead CPU's pairs stay counted; a drain reaches them: none leak. */
static void pk_ctx_hotplug_drains(struct kunit *test)
{
	struct pk_load *l;
	unsigned long first;
	u64 cached, freed;
	int cpu, i;

	cpu = pk_pick_cpu(test);
	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	KUNIT_ASSERT_EQ(test, pk_setup(test, 16, PK_NO_CAP), 0);

	/* Load on held slots: fast path only, no pair moves. */
	first = pk_ctx_pfn(test, 0);
	for (i = 0; i < 8; i++)
		KUNIT_ASSERT_EQ(test, tdx_pamt_get(first + i * 512, NULL), 0);
	l->first = first;
	pk_load_start(test, l, 3);

	KUNIT_EXPECT_EQ(test, work_on_cpu(cpu, pk_give_on_cpu, (void *)10L), 10L);
	KUNIT_EXPECT_EQ(test, pk_cpu_cached(cpu), 10U);
	cached = pk_stat(TDX_PAMT_STAT_CACHED_PAIRS);
	freed = pk_stat(TDX_PAMT_STAT_PAGE_FREE);

	KUNIT_EXPECT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_EXPECT_FALSE(test, cpu_online(cpu));
	KUNIT_EXPECT_EQ(test, pk_cpu_cached(cpu), 10U);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), cached);
	KUNIT_EXPECT_EQ(test, tdx_pamt_drain(), 10UL);
	KUNIT_EXPECT_EQ(test, pk_cpu_cached(cpu), 0U);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), cached - 10);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), freed + 20);

	KUNIT_EXPECT_EQ(test, add_cpu(cpu), 0);
	KUNIT_EXPECT_TRUE(test, cpu_online(cpu));
	KUNIT_EXPECT_EQ(test, work_on_cpu(cpu, pk_give_on_cpu, (void *)3L), 3L);
	KUNIT_EXPECT_EQ(test, pk_cpu_cached(cpu), 3U);

	pk_load_stop(l);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&l->errs), 0L);
	KUNIT_EXPECT_GT(test, atomic_long_read(&l->ops), 0L);
	for (i = 0; i < 8; i++)
		tdx_pamt_put(first + i * 512);
	pk_check_accounting(test, 0);
}

/* The shrinker frees a dead CPU's free pairs, as any other CPU's. */
static void pk_ctx_hotplug_shrinker(struct kunit *test)
{
	struct shrink_control sc = {
		.gfp_mask = GFP_KERNEL,
		.nid = first_online_node,
		.nr_to_scan = 10,
	};
	struct shrinker *s;
	u64 cached, freed;
	int cpu;

	cpu = pk_pick_cpu(test);
	KUNIT_ASSERT_EQ(test, pk_setup(test, 16, PK_NO_CAP), 0);
	s = pamt.shrinker;
	KUNIT_EXPECT_EQ(test, work_on_cpu(cpu, pk_give_on_cpu, (void *)10L), 10L);
	cached = pk_stat(TDX_PAMT_STAT_CACHED_PAIRS);
	freed = pk_stat(TDX_PAMT_STAT_PAGE_FREE);

	KUNIT_EXPECT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_EXPECT_EQ(test, pk_cpu_cached(cpu), 10U);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), (unsigned long)cached);
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), 10UL);
	KUNIT_EXPECT_EQ(test, sc.nr_scanned, 10UL);
	KUNIT_EXPECT_EQ(test, pk_cpu_cached(cpu), 0U);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), cached - 10);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), freed + 20);
	KUNIT_EXPECT_EQ(test, add_cpu(cpu), 0);
	pk_check_accounting(test, 0);
}

/* Offline and online a CPU twice while every CPU moves pairs around. */
static void pk_ctx_hotplug_under_load(struct kunit *test)
{
	struct pk_load *l;
	int cpu, round;

	cpu = pk_pick_cpu(test);
	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	KUNIT_ASSERT_EQ(test, pk_setup(test, 8, 16), 0);
	l->first = pk_ctx_pfn(test, 0);
	l->churn = true;
	pk_load_start(test, l, 4);
	for (round = 0; round < 2; round++) {
		msleep(100);
		KUNIT_EXPECT_EQ(test, remove_cpu(cpu), 0);
		msleep(100);
		KUNIT_EXPECT_EQ(test, add_cpu(cpu), 0);
	}
	msleep(100);
	pk_load_stop(l);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_cpu_cached(cpu), 0U);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&l->errs), 0L);
	kunit_info(test, "%ld operations\n", atomic_long_read(&l->ops));
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_hotplug_cases[] = {
	KUNIT_CASE(pk_ctx_hotplug_drains),
	KUNIT_CASE(pk_ctx_hotplug_shrinker),
	KUNIT_CASE_SLOW(pk_ctx_hotplug_under_load),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_hotplug_suite = {
	.name = "tdx_pamt_hotplug",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_hotplug_cases,
};

kunit_test_suite(pk_hotplug_suite);
