// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PAMT cache in the contexts its callers use (under a spinlock
 * or an rwlock, with preemption off, puts from softirq while the same CPU
 * is inside a get), the shrinker called directly and for real; reclaim
 * freeing other CPUs' free pairs.
 */
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include "pamt_kunit.h"

#define PK_CTX_SLOTS	32

static DEFINE_SPINLOCK(pk_ctx_lock);
static DEFINE_RWLOCK(pk_ctx_rwlock);

static unsigned long pk_ctx_pfn(struct kunit *test, int i)
{
	return pk_slot_pfn(test, 40 + i);
}

/* A get under a spinlock or a read-held rwlock, with a reserve. */
static void pk_ctx_get_under_locks(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	unsigned long pfn[8];
	int ret[8], i;

	pk_up(test);
	for (i = 0; i < 8; i++)
		pfn[i] = pk_ctx_pfn(test, i);
	KUNIT_ASSERT_EQ(test, __tdx_topup_pamt_cache(&res, TDX_PAMT_CACHE_MAX,
						     GFP_KERNEL), 0);
	spin_lock(&pk_ctx_lock);
	for (i = 0; i < 4; i++)
		ret[i] = tdx_pamt_get(pfn[i], &res);
	spin_unlock(&pk_ctx_lock);
	read_lock(&pk_ctx_rwlock);
	for (i = 4; i < 8; i++)
		ret[i] = tdx_pamt_get(pfn[i], &res);
	read_unlock(&pk_ctx_rwlock);
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_EQ(test, ret[i], 0);
		KUNIT_EXPECT_EQ(test, pk_word(pfn[i]), PAMT_SLOT_INSTALLED | 1);
	}
	pk_check_accounting(test, res.nr);
	/* put under the locks too */
	write_lock(&pk_ctx_rwlock);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn[i]), 0);
	write_unlock(&pk_ctx_rwlock);
	tdx_free_pamt_cache(&res);
	pk_check_accounting(test, 0);
}

/*
 * Atomic and no reserve: a get may fail but must never sleep.  Atomic is
 * a spinlock_t, the caller's mmu_lock: preemption off, or on PREEMPT_RT a
 * lock under which sleeping (GFP_KERNEL) is still caught, while the cache's
 * own sleeping-on-RT locks are allowed.  A bare preempt_disable() is not a
 * context get supports on RT.
 */
static void pk_ctx_get_preempt_off(struct kunit *test)
{
	unsigned long pfn[16];
	int ret[16], i;

	pk_up(test);
	for (i = 0; i < 16; i++)
		pfn[i] = pk_ctx_pfn(test, i);
	spin_lock(&pk_ctx_lock);
	for (i = 0; i < 16; i++)
		ret[i] = tdx_pamt_get(pfn[i], NULL);
	for (i = 0; i < 16; i++)
		if (!ret[i])
			tdx_pamt_put(pfn[i]);
	/* Again, now revived. */
	for (i = 0; i < 16; i++)
		ret[i] = tdx_pamt_get(pfn[i], NULL);
	spin_unlock(&pk_ctx_lock);
	for (i = 0; i < 16; i++) {
		KUNIT_EXPECT_EQ(test, ret[i], 0);
		if (!ret[i])
			tdx_pamt_put(pfn[i]);
	}
	pk_check_accounting(test, 0);
}

/* References a softirq on this CPU still has to put. */
struct pk_softirq {
	struct hrtimer timer;
	unsigned long pfn[PK_CTX_SLOTS];
	atomic_t owed[PK_CTX_SLOTS];
	atomic_long_t puts;
	atomic_long_t softirq_puts;
	atomic_long_t bad;
	bool stop;
};

/*
 * The loop below runs a number of gets, not a duration, and goes on until
 * the softirq has put enough of them, so that a loaded machine runs the
 * same test, only slower.  The iteration cap catches a timer that never
 * fires; no clock is involved.
 */
#define PK_SOFTIRQ_GETS		50000
#define PK_SOFTIRQ_PUTS		1000
#define PK_SOFTIRQ_GETS_MAX	(100 * PK_SOFTIRQ_GETS)

static void pk_softirq_put_owed(struct pk_softirq *s, atomic_long_t *count)
{
	int i;

	for (i = 0; i < PK_CTX_SLOTS; i++) {
		while (atomic_dec_if_positive(&s->owed[i]) >= 0) {
			if (tdx_pamt_put(s->pfn[i]))
				atomic_long_inc(&s->bad);
			atomic_long_inc(count);
		}
	}
}

static enum hrtimer_restart pk_softirq_timer(struct hrtimer *t)
{
	struct pk_softirq *s = container_of(t, struct pk_softirq, timer);

	if (!in_serving_softirq())
		atomic_long_inc(&s->bad);
	pk_softirq_put_owed(s, &s->softirq_puts);
	if (READ_ONCE(s->stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(50 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

/*
 * A task pinned to one CPU gets references in a loop while a soft hrtimer
 * on the same CPU puts them: the softirq runs when the timer interrupt
 * returns, in the middle of whatever get the task was in.  With @lean
 * (an idle cap of 0) the softirq's last puts REMOVE, while the task's
 * gets ADD.  Half the loop runs with bottom halves off, so that the
 * softirq also runs from local_bh_enable().  With @busy, the module
 * answers BUSY to most calls, so the task's gets back off between their
 * tries and, with the serialised fallback, go under pamt.seamcall_lock,
 * which the softirq, interrupting them, must never take (lockdep would
 * see it taken with softirqs on and in softirq): its puts make one call
 * each and never back off.
 */
static void pk_ctx_softirq_put(struct kunit *test, bool lean,
			       unsigned int mag_size, bool busy)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	unsigned long gets = 0, errs = 0, busy_errs = 0;
	struct pk_softirq *s;
	int i, ret;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, pk_setup(test, mag_size, 16), 0);
	if (lean)
		pk_set_idle_cap(0);
	for (i = 0; i < PK_CTX_SLOTS; i++)
		s->pfn[i] = pk_ctx_pfn(test, i);
	if (busy) {
		pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY, 0, 700000);
		pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 0,
				 700000);
	}

	migrate_disable();
	hrtimer_setup(&s->timer, pk_softirq_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_SOFT);
	hrtimer_start(&s->timer, ns_to_ktime(50 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_SOFT);
	while ((gets < PK_SOFTIRQ_GETS ||
		atomic_long_read(&s->softirq_puts) < PK_SOFTIRQ_PUTS) &&
	       gets < PK_SOFTIRQ_GETS_MAX) {
		bool bh = gets & 1024;

		if (res.nr < 2 &&
		    __tdx_topup_pamt_cache(&res, 4, GFP_NOWAIT | __GFP_NOWARN))
			errs++;
		i = get_random_u32_below(PK_CTX_SLOTS);
		if (bh)
			local_bh_disable();
		ret = tdx_pamt_get(s->pfn[i], &res);
		if (!ret)
			atomic_inc(&s->owed[i]);
		if (bh)
			local_bh_enable();
		if (ret && !(busy && ret == -EBUSY))
			errs++;
		else if (ret)
			busy_errs++;
		gets++;
	}
	WRITE_ONCE(s->stop, true);
	hrtimer_cancel(&s->timer);
	migrate_enable();
	pk_softirq_put_owed(s, &s->puts);
	PK_INJECT(PAMT_FAKE_ADD, 0, 0);
	PK_INJECT(PAMT_FAKE_REMOVE, 0, 0);

	KUNIT_EXPECT_EQ(test, errs, 0UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->bad), 0L);
	KUNIT_EXPECT_GE(test, atomic_long_read(&s->softirq_puts),
			(long)PK_SOFTIRQ_PUTS);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->softirq_puts) +
			atomic_long_read(&s->puts),
			(long)gets - (long)errs - (long)busy_errs);
	kunit_info(test, "%lu gets (%lu -EBUSY), %ld puts from softirq, %ld after it\n",
		   gets, busy_errs, atomic_long_read(&s->softirq_puts),
		   atomic_long_read(&s->puts));
	pk_check_accounting(test, res.nr);
	tdx_free_pamt_cache(&res);
	pk_check_accounting(test, 0);
}

static void pk_ctx_softirq_put_magazine(struct kunit *test)
{
	pk_ctx_softirq_put(test, false, 8, false);
}

static void pk_ctx_softirq_put_lean(struct kunit *test)
{
	pk_ctx_softirq_put(test, true, 8, false);
}

static void pk_ctx_softirq_put_busy_storm(struct kunit *test)
{
	pk_ctx_softirq_put(test, true, 8, true);
}

struct pk_rcu_put {
	struct rcu_head rcu;
	unsigned long pfn;
};

static atomic_long_t pk_rcu_bad;

static void pk_rcu_put_cb(struct rcu_head *head)
{
	struct pk_rcu_put *p = container_of(head, struct pk_rcu_put, rcu);

	if (tdx_pamt_put(p->pfn))
		atomic_long_inc(&pk_rcu_bad);
	kfree(p);
}

/* Puts from RCU callbacks, as when KVM frees an S-EPT page. */
static void pk_ctx_rcu_put(struct kunit *test)
{
	struct pk_rcu_put *p;
	unsigned long pfn;
	int i, errs = 0;

	pk_up(test);
	pk_set_idle_cap(0);	/* the last puts REMOVE */
	atomic_long_set(&pk_rcu_bad, 0);
	for (i = 0; i < 2000; i++) {
		pfn = pk_ctx_pfn(test, i % PK_CTX_SLOTS);
		p = kmalloc_obj(*p, GFP_KERNEL);
		if (!p || tdx_pamt_get(pfn, NULL)) {
			kfree(p);
			errs++;
			continue;
		}
		p->pfn = pfn;
		call_rcu(&p->rcu, pk_rcu_put_cb);
		if (!(i % 128))
			cond_resched();
	}
	rcu_barrier();
	/*
	 * A put's own REMOVE looks at the first entries of its list only,
	 * which may be ranges still in use: the worker REMOVEs the rest.
	 */
	pamt_platform_defer_sync();
	pamt_shrink_deferred();
	KUNIT_EXPECT_EQ(test, errs, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&pk_rcu_bad), 0L);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	pk_check_accounting(test, 0);
}

static void pk_make_idle(struct kunit *test, int first, int n)
{
	int i;

	for (i = first; i < first + n; i++)
		KUNIT_ASSERT_EQ(test, tdx_pamt_get(pk_ctx_pfn(test, i), NULL), 0);
	for (i = first; i < first + n; i++)
		tdx_pamt_put(pk_ctx_pfn(test, i));
}

/* count_objects and scan_objects of the registered shrinker, called directly. */
static void pk_ctx_shrinker_direct(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	struct shrinker *s;

	pk_up(test);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	sc.nr_to_scan = 4;
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), SHRINK_STOP);

	pk_make_idle(test, 0, 5);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 5UL);
	sc.nr_to_scan = 3;
	sc.nr_scanned = 3;
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), 3UL);
	KUNIT_EXPECT_EQ(test, sc.nr_scanned, 3UL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 2UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_SHRINK), 3ULL);

	/* The module stays busy: no progress, SHRINK_STOP, nothing lost. */
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 100000);
	sc.nr_to_scan = 10;
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), SHRINK_STOP);
	PK_INJECT(PAMT_FAKE_REMOVE, 0, 0);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 2UL);
	pk_check_accounting(test, 0);

	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), 2UL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	pk_check_accounting(test, 0);
}

/*
 * Looking at a slot in use again is scanned work (include/linux/shrinker.h):
 * a scan that frees nothing so reports nr_scanned = nr_to_scan and 0, not
 * SHRINK_STOP; once the slots are idle again the next one frees.
 */
static void pk_ctx_shrinker_in_use_scanned(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	struct shrinker *s;
	int i;

	pk_up(test);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	pk_make_idle(test, 0, 4);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, tdx_pamt_get(pk_ctx_pfn(test, i), NULL), 0);
	sc.nr_to_scan = 4;
	sc.nr_scanned = 4;
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), 0UL);
	KUNIT_EXPECT_EQ(test, sc.nr_scanned, 4UL);
	for (i = 0; i < 4; i++)
		tdx_pamt_put(pk_ctx_pfn(test, i));
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), 4UL);
	sc.nr_scanned = 4;
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), 4UL);
	KUNIT_EXPECT_EQ(test, sc.nr_scanned, 4UL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	pk_check_accounting(test, 0);
}

/* What the worker does, once and in full: no queued run left behind. */
static void pk_run_deferred(void)
{
	pamt_platform_defer_sync();
	pamt_shrink_deferred();
}

/* The shrinker registered for real: drop_slab() reaches it. */
static void pk_ctx_shrinker_registered(struct kunit *test)
{
	struct tdx_pamt_pair p;
	int i;

	KUNIT_ASSERT_EQ(test, pk_setup(test, 4, PK_NO_CAP), 0);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	KUNIT_EXPECT_EQ(test, pamt_glue_register(), -EBUSY);
	pk_make_idle(test, 0, 6);
	migrate_disable();
	for (i = 0; i < 8; i++) {
		if (pamt_pair_alloc(&p, GFP_KERNEL))
			break;
		pamt_mag_push(&p);
	}
	migrate_enable();
	KUNIT_EXPECT_GE(test, pamt_fake_idle_pairs(), 8UL);
	drop_slab();
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 0UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_SHRINK), 6ULL);
	pk_check_accounting(test, 0);
}

/*
 * A last put from an RCU callback (softirq), at the idle cap, with the
 * module answering BUSY to every REMOVE: one REMOVE in softirq, one
 * sequence in a task; the rest is the worker's, which brings idle memory
 * back within the cap.
 */
static u64 pk_busy_put_removes;
static bool pk_busy_put_softirq;

/*
 * The put and its SEAMCALLs as this CPU counts them: the worker it kicks
 * runs elsewhere, or after this callback.
 */
static void pk_busy_put_cb(struct rcu_head *head)
{
	u64 before = this_cpu_read(pamt.pcpu->stat[TDX_PAMT_STAT_REMOVE]);

	WRITE_ONCE(pk_busy_put_softirq, in_serving_softirq());
	pk_rcu_put_cb(head);
	WRITE_ONCE(pk_busy_put_removes,
		   this_cpu_read(pamt.pcpu->stat[TDX_PAMT_STAT_REMOVE]) - before);
}

static void pk_ctx_softirq_put_busy_bounded(struct kunit *test)
{
	struct pk_rcu_put *p;
	u64 removes;

	KUNIT_ASSERT_EQ(test, pk_setup(test, 8, 4), 0);
	pk_make_idle(test, 0, 8);
	KUNIT_EXPECT_LE(test, pamt_fake_idle_pairs(), 4UL);
	p = kmalloc_obj(*p, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->pfn = pk_ctx_pfn(test, 9);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(p->pfn, NULL), 0);
	atomic_long_set(&pk_rcu_bad, 0);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 1000000);
	call_rcu(&p->rcu, pk_busy_put_cb);
	rcu_barrier();
	pamt_platform_defer_sync();
	removes = READ_ONCE(pk_busy_put_removes);
	PK_INJECT(PAMT_FAKE_REMOVE, 0, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&pk_rcu_bad), 0L);
	KUNIT_EXPECT_GE(test, removes, 1ULL);
	/* RT runs RCU callbacks in a kthread, a task, which may retry. */
	KUNIT_EXPECT_LE(test, removes, READ_ONCE(pk_busy_put_softirq) ?
			1ULL : (u64)PAMT_BUSY_CALLS_MAX);
	kunit_info(test, "%llu PAMT.REMOVE calls in one softirq put\n", removes);
	pk_run_deferred();
	KUNIT_EXPECT_LE(test, pamt_fake_idle_pairs(), 4UL);
	pk_check_accounting(test, 0);
}

static long pk_fill_on_cpu(void *arg)
{
	struct tdx_pamt_pair p[6];
	long i;

	for (i = 0; i < 6; i++)
		if (!pamt_mag_pop(&p[i]) && pamt_pair_alloc(&p[i], GFP_KERNEL))
			break;
	while (i--)
		pamt_mag_push(&p[i]);
	return 0;
}

/* The shrinker sees the pairs in every CPU's magazines and frees them. */
static void pk_ctx_shrinker_magazines(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nid = 0 };
	unsigned long cached;
	struct shrinker *s;
	int cpu;

	KUNIT_ASSERT_EQ(test, pk_setup(test, 8, PK_NO_CAP), 0);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	s = pamt_glue_shrinker();
	KUNIT_ASSERT_NOT_NULL(test, s);
	cpus_read_lock();
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, pk_fill_on_cpu, NULL);
	cpus_read_unlock();
	cached = pk_stat(TDX_PAMT_STAT_CACHED_PAIRS);
	KUNIT_EXPECT_GE(test, cached, 6UL * num_online_cpus());
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), cached);
	sc.nr_to_scan = cached;
	KUNIT_EXPECT_EQ(test, s->scan_objects(s, &sc), cached);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	KUNIT_EXPECT_EQ(test, s->count_objects(s, &sc), SHRINK_EMPTY);
	pk_check_accounting(test, 0);
}

static long pk_give_six(void *arg)
{
	struct kunit *test = arg;
	struct tdx_pamt_pair p;
	int i;

	for (i = 0; i < 6; i++) {
		if (pamt_pair_alloc(&p, GFP_KERNEL)) {
			KUNIT_FAIL(test, "no memory for a pair");
			break;
		}
		pamt_mag_push(&p);
	}
	return 0;
}

/* Six pairs into the magazines of a CPU other than this pinned one. */
static void pk_give_six_elsewhere(struct kunit *test)
{
	int other = cpumask_any_but(cpu_online_mask, smp_processor_id());

	KUNIT_ASSERT_LT(test, other, nr_cpu_ids);
	work_on_cpu(other, pk_give_six, test);
	KUNIT_ASSERT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 6ULL);
}

/*
 * Reclaim freeing other CPUs' free pairs, the cap's and the shrinker's,
 * in a PF_MEMALLOC task as direct reclaim is: neither allocates nor waits
 * for another CPU, and both free what was asked.
 */
static void pk_drain_for_reclaim(struct kunit *test)
{
	unsigned int noreclaim;

	KUNIT_ASSERT_EQ(test, pk_setup(test, 8, PK_NO_CAP), 0);
	migrate_disable();
	pk_give_six_elsewhere(test);
	noreclaim = memalloc_noreclaim_save();
	pk_set_idle_cap(1);
	memalloc_noreclaim_restore(noreclaim);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);

	pk_set_idle_cap(PK_NO_CAP);
	KUNIT_ASSERT_EQ(test, tdx_pamt_drain(), 1UL);
	pk_give_six_elsewhere(test);
	noreclaim = memalloc_noreclaim_save();
	KUNIT_EXPECT_EQ(test, pamt_fake_shrink_scan(4, NULL), 4UL);
	memalloc_noreclaim_restore(noreclaim);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 2ULL);
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_ctx_cases[] = {
	KUNIT_CASE(pk_ctx_get_under_locks),
	KUNIT_CASE(pk_ctx_get_preempt_off),
	KUNIT_CASE(pk_ctx_softirq_put_magazine),
	KUNIT_CASE(pk_ctx_softirq_put_lean),
	KUNIT_CASE(pk_ctx_softirq_put_busy_storm),
	KUNIT_CASE(pk_ctx_rcu_put),
	KUNIT_CASE(pk_ctx_shrinker_direct),
	KUNIT_CASE(pk_ctx_shrinker_in_use_scanned),
	KUNIT_CASE(pk_ctx_shrinker_registered),
	KUNIT_CASE(pk_ctx_softirq_put_busy_bounded),
	KUNIT_CASE(pk_ctx_shrinker_magazines),
	KUNIT_CASE(pk_drain_for_reclaim),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_ctx_suite = {
	.name = "tdx_pamt_ctx",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_ctx_cases,
};

kunit_test_suite(pk_ctx_suite);
