// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: one thread per CPU doing random get, put, evict, shrink, reserve
 * and DEMOTE/PROMOTE pair traffic on a small set of shared slots, then an
 * exact accounting of every pair.
 *
 * pk_stress_faults adds the kernel's fault injection, for the workers
 * alone (task-filter): failslab and fail_page_alloc fail their
 * allocations, sleeping ones included, while the fake module fails ADDs
 * with an operand error and REMOVEs with BUSY.  Every failure a call may
 * return is counted, and every pair is still accounted for at the end.
 */
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/stringify.h>
#include "pamt_kunit.h"

#define PK_STRESS_SLOTS		48
#define PK_STRESS_PAIRS		2
/*
 * Operations per thread: a count, not a duration, so that a loaded
 * machine runs the same test, only slower (about 3 s on an idle one).
 */
#define PK_STRESS_OPS		2500

struct pk_stress;

/**
 * struct pk_worker - one stress thread and what it holds when it stops
 * @s: the shared state
 * @res: its reserve
 * @pairs: pairs taken out of the magazines, as DEMOTE would
 * @nr_pairs: entries of @pairs held
 * @refs: references held, per slot
 * @ops: operations done
 * @failed: calls that failed as injected faults may make them fail
 * @bad: results no call may return
 * @lock: held around a quarter of the gets, for atomic context; one per
 *	worker, so that a preempted vCPU holding it stalls nobody else
 */
struct pk_worker {
	struct pk_stress *s;
	spinlock_t lock;	/* see @lock above */
	struct tdx_pamt_cache res;
	struct tdx_pamt_pair pairs[PK_STRESS_PAIRS];
	unsigned int nr_pairs;
	unsigned int refs[PK_STRESS_SLOTS];
	unsigned long ops;
	unsigned long failed;
	unsigned long bad;
};

struct pk_stress {
	unsigned long pfn[PK_STRESS_SLOTS];
	bool faults;	/* kernel fault injection on: -ENOMEM and -EIO allowed */
	atomic_t running;
	struct completion done;
	struct pk_worker w[NR_CPUS];
};

static void pk_worker_get(struct pk_worker *w, unsigned int i)
{
	bool locked = get_random_u32_below(4) == 0;
	int ret;

	if (w->res.nr < 2 && __tdx_topup_pamt_cache(&w->res, 4, GFP_KERNEL)) {
		if (!w->s->faults)
			w->bad++;
		w->failed++;
	}
	/* A quarter of the gets in atomic context, as the fault path does. */
	if (locked) {
		spin_lock(&w->lock);
		ret = tdx_pamt_get(w->s->pfn[i], &w->res);
		spin_unlock(&w->lock);
	} else {
		ret = tdx_pamt_get(w->s->pfn[i], &w->res);
	}
	if (!ret)
		w->refs[i]++;
	else if (w->s->faults && (ret == -ENOMEM || ret == -EIO))
		w->failed++;
	else if (ret != -EBUSY)
		w->bad++;
}

static void pk_worker_put(struct pk_worker *w, unsigned int i)
{
	if (!w->refs[i])
		return;
	if (tdx_pamt_put(w->s->pfn[i]))
		w->bad++;
	w->refs[i]--;
}

static void pk_worker_pairs(struct pk_worker *w)
{
	if (w->nr_pairs < PK_STRESS_PAIRS && get_random_u32_below(2)) {
		if (pamt_mag_pop(&w->pairs[w->nr_pairs]) ||
		    !pamt_pair_alloc(&w->pairs[w->nr_pairs], GFP_KERNEL))
			w->nr_pairs++;
		else if (w->s->faults)
			w->failed++;
		else
			w->bad++;
	} else if (w->nr_pairs) {
		pamt_mag_push(&w->pairs[--w->nr_pairs]);
	}
}

static void pk_worker_op(struct pk_worker *w)
{
	unsigned int op = get_random_u32_below(1000);
	unsigned int i = get_random_u32_below(PK_STRESS_SLOTS);
	int ret;

	if (op < 400) {
		pk_worker_get(w, i);
	} else if (op < 780) {
		pk_worker_put(w, i);
	} else if (op < 880) {
		ret = pamt_fake_evict(w->s->pfn[i]);
		if (ret && ret != -EBUSY)
			w->bad++;
	} else if (op < 940) {
		pamt_fake_shrink_scan(1 + get_random_u32_below(8), NULL);
	} else if (op < 990) {
		pk_worker_pairs(w);
	} else if (op < 998) {
		pk_set_idle_cap(4 + get_random_u32_below(64));
	} else if (op < 999 - 9 * w->s->faults) {
		tdx_free_pamt_cache(&w->res);
	} else {
		/* Ten times as often with faults: refills allocate again. */
		tdx_pamt_drain();
	}
	w->ops++;
}

static int pk_worker_fn(void *data)
{
	struct pk_worker *w = data;

#ifdef CONFIG_FAULT_INJECTION
	/* The injection's task-filter: this thread's allocations fail. */
	current->make_it_fail = w->s->faults;
#endif
	while (w->ops < PK_STRESS_OPS) {
		pk_worker_op(w);
		cond_resched();
	}
	if (atomic_dec_and_test(&w->s->running))
		complete(&w->s->done);
	return 0;
}

/*
 * The kernel's allocation fault injection, for threads that ask for it,
 * sleeping allocations and order 0 included, at most PK_FAIL_TIMES
 * failures: one page allocation in two, and every slab allocation.  The
 * cache's pairs are pages; failslab fails whatever slab allocation a
 * worker's calls make, which the cache must then handle.
 */
#define PK_FAIL_TIMES	1000000
static const char * const pk_fail_attrs[] = { "failslab", "fail_page_alloc" };

static int pk_fail_set(struct kunit *test, const char *attr,
		       const char *file, const char *val)
{
	char path[64];

	snprintf(path, sizeof(path), "%s/%s", attr, file);
	return pk_debugfs_write(test, path, val);
}

static void pk_fail_start(struct kunit *test)
{
	static const char * const set[][2] = {
		{ "task-filter", "Y" }, { "ignore-gfp-wait", "N" },
		{ "verbose", "0" }, { "interval", "1" },
		{ "times", __stringify(PK_FAIL_TIMES) },
	};
	unsigned int a, i;

	for (a = 0; a < ARRAY_SIZE(pk_fail_attrs); a++)
		for (i = 0; i < ARRAY_SIZE(set); i++)
			KUNIT_ASSERT_EQ_MSG(test, pk_fail_set(test, pk_fail_attrs[a],
							      set[i][0], set[i][1]), 0,
					    "%s/%s", pk_fail_attrs[a], set[i][0]);
	KUNIT_ASSERT_EQ(test, pk_fail_set(test, "fail_page_alloc", "min-order", "0"), 0);
	KUNIT_ASSERT_EQ(test, pk_fail_set(test, "fail_page_alloc", "probability", "50"), 0);
	KUNIT_ASSERT_EQ(test, pk_fail_set(test, "failslab", "probability", "100"), 0);
}

/* Stops the injection; returns the failures @attr injected. */
static long pk_fail_stop(struct kunit *test, const char *attr)
{
	char path[64], buf[32];
	long left;

	KUNIT_EXPECT_EQ(test, pk_fail_set(test, attr, "probability", "0"), 0);
	snprintf(path, sizeof(path), "%s/times", attr);
	if (pk_debugfs_read(test, path, buf, sizeof(buf)) < 0 ||
	    kstrtol(strim(buf), 10, &left))
		return -1;
	return PK_FAIL_TIMES - left;
}

static void pk_stress(struct kunit *test, unsigned int mag_size,
		      unsigned long idle_cap, bool faults, bool kfaults_on)
{
	unsigned long ops = 0, bad = 0, failed = 0, refs, held = 0;
	u64 injected[2] = {};
	long kfaults[2] = {};
	struct task_struct *t;
	struct pk_stress *s;
	struct pk_worker *w;
	int cpu, i, nr = 0;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, pk_setup(test, mag_size, idle_cap), 0);
	for (i = 0; i < PK_STRESS_SLOTS; i++)
		s->pfn[i] = pk_slot_pfn(test, 60 + i) + i;
	if (faults) {
		pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY, 0, 200000);
		pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 0, 200000);
		pamt_fake_set_latency(PAMT_FAKE_ADD, 1000, 4000, 20000);
		pamt_fake_set_latency(PAMT_FAKE_REMOVE, 1000, 2000, 10000);
	}
	if (kfaults_on) {
		s->faults = true;
		/* An operand error on 10% of ADDs, BUSY on 30% of REMOVEs. */
		pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 0, 100000);
		pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 0, 300000);
		injected[0] = atomic64_read(&pamt_fake.injected[PAMT_FAKE_ADD]);
		injected[1] = atomic64_read(&pamt_fake.injected[PAMT_FAKE_REMOVE]);
		pk_fail_start(test);
	}

	init_completion(&s->done);
	cpus_read_lock();
	atomic_set(&s->running, num_online_cpus());
	for_each_online_cpu(cpu) {
		w = &s->w[nr++];
		w->s = s;
		spin_lock_init(&w->lock);
		t = kthread_create(pk_worker_fn, w, "pamt_kunit_stress/%d", cpu);
		if (IS_ERR(t)) {
			KUNIT_FAIL(test, "no thread for CPU %d", cpu);
			if (atomic_dec_and_test(&s->running))
				complete(&s->done);
			continue;
		}
		kthread_bind(t, cpu);
		wake_up_process(t);
	}
	cpus_read_unlock();
	wait_for_completion(&s->done);
	if (kfaults_on) {
		kfaults[0] = pk_fail_stop(test, pk_fail_attrs[0]);
		kfaults[1] = pk_fail_stop(test, pk_fail_attrs[1]);
		injected[0] = atomic64_read(&pamt_fake.injected[PAMT_FAKE_ADD]) - injected[0];
		injected[1] = atomic64_read(&pamt_fake.injected[PAMT_FAKE_REMOVE]) - injected[1];
	}
	pamt_fake_inject(PAMT_FAKE_ADD, 0, 0, 0);
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);

	/* Quiescent: every pair is installed, cached or held by a worker. */
	for (i = 0; i < nr; i++) {
		w = &s->w[i];
		ops += w->ops;
		bad += w->bad;
		failed += w->failed;
		held += w->res.nr + w->nr_pairs;
	}
	kunit_info(test, "%d threads, %lu operations\n", nr, ops);
	if (kfaults_on) {
		kunit_info(test, "faults injected: failslab %ld, fail_page_alloc %ld, ADD operand errors %llu, REMOVE BUSY %llu; calls failed by them %lu\n",
			   kfaults[0], kfaults[1], injected[0], injected[1],
			   failed);
		/* failslab may find nothing to fail; -1: not read back. */
		KUNIT_EXPECT_GE(test, kfaults[0], 0L);
		KUNIT_EXPECT_GT(test, kfaults[1], 0L);
		KUNIT_EXPECT_GT(test, injected[0], 0ULL);
		KUNIT_EXPECT_GT(test, injected[1], 0ULL);
		KUNIT_EXPECT_GT(test, failed, 0UL);
	}
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_EQ(test, ops, (unsigned long)nr * PK_STRESS_OPS);
	pk_check_accounting(test, held);
	KUNIT_EXPECT_EQ(test, pamt_fake_check_all(), 0UL);
	for (i = 0; i < PK_STRESS_SLOTS; i++) {
		unsigned long word = pk_word(s->pfn[i]);
		int j;

		for (refs = 0, j = 0; j < nr; j++)
			refs += s->w[j].refs[i];
		KUNIT_EXPECT_EQ_MSG(test, pamt_slot_refs(word), refs, "slot %d", i);
		KUNIT_EXPECT_FALSE(test, word & PAMT_SLOT_TRANSIT);
		KUNIT_EXPECT_FALSE(test, word & PAMT_SLOT_LEAKED);
		KUNIT_EXPECT_EQ(test, !!(word & PAMT_SLOT_INSTALLED),
				pamt_fake_range_has_pair(s->pfn[i]));
	}

	/* Give everything back. */
	for (i = 0; i < nr; i++) {
		w = &s->w[i];
		while (w->nr_pairs)
			pamt_mag_push(&w->pairs[--w->nr_pairs]);
		tdx_free_pamt_cache(&w->res);
		for (refs = 0; refs < PK_STRESS_SLOTS; refs++)
			while (w->refs[refs])
				pk_worker_put(w, refs);
	}
	pk_check_accounting(test, 0);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	pk_check_accounting(test, 0);
}

static void pk_stress_magazine(struct kunit *test)
{
	pk_stress(test, 16, 32, false, false);
}

/* An idle cap of one pair: nearly every last put REMOVEs. */
static void pk_stress_lean(struct kunit *test)
{
	pk_stress(test, 8, 1, false, false);
}

static void pk_stress_busy_module(struct kunit *test)
{
	pk_stress(test, 4, 8, true, false);
}

static void pk_stress_faults(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_FAILSLAB) || !IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC) ||
	    !IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS))
		kunit_skip(test, "needs allocation fault injection in debugfs");
	/* An idle cap of one pair: nearly every last put REMOVEs. */
	pk_stress(test, 4, 1, false, true);
}

static struct kunit_case pk_stress_cases[] = {
	KUNIT_CASE_SLOW(pk_stress_magazine),
	KUNIT_CASE_SLOW(pk_stress_lean),
	KUNIT_CASE_SLOW(pk_stress_busy_module),
	KUNIT_CASE_SLOW(pk_stress_faults),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_stress_suite = {
	.name = "tdx_pamt_stress",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_stress_cases,
};

kunit_test_suite(pk_stress_suite);
