// SPDX-License-Identifier: GPL-2.0
/* Magazine layer, reserves, control pages, CPU drains. */
#include <pthread.h>
#include "../harness.h"

/* Small magazines; an idle cap out of the way, or 0: every last put REMOVEs. */
static void env_mag(unsigned int mag_size, bool lean)
{
	struct pamt_env_opts o = { .mag_size = mag_size, .idle_cap = 1000 };

	if (pamt_env_up(&o))
		pamt_sim_fatal("environment", __FILE__, __LINE__);
	if (lean)
		set_idle_cap(0);
}

static void take_pairs(struct tdx_pamt_pair *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		EXPECT_EQ(take_pair(&p[i]), 0);
	env.held_pairs += n;
}

/* Pairs into this CPU's magazine, freed once it is full or at the cap. */
static void give_pairs(struct tdx_pamt_pair *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pamt_mag_push(&p[i]);
	env.held_pairs -= n;
}

PAMT_TEST(mag_lifo_reuse)
{
	struct tdx_pamt_pair a, b;

	env_mag(8, false);
	take_pairs(&a, 1);
	give_pairs(&a, 1);
	take_pairs(&b, 1);
	EXPECT_EQ(a.pfn[0], b.pfn[0]);
	EXPECT_EQ(a.pfn[1], b.pfn[1]);
	EXPECT_EQ(stat(TDX_PAMT_STAT_MAG_HIT), 1);
	give_pairs(&b, 1);
}

/* A full magazine is all a CPU keeps; no all-CPU lock either way. */
PAMT_TEST(mag_pairs_beyond_a_full_magazine_go_back)
{
	struct tdx_pamt_pair p[40];

	env_mag(8, false);
	take_pairs(p, 40);
	give_pairs(p, 40);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 8);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 2 * 32);
	take_pairs(p, 40);
	EXPECT_EQ(stat(TDX_PAMT_STAT_MAG_HIT), 8);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2 * (40 + 32));
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 0);
	give_pairs(p, 40);
}

PAMT_TEST(mag_empty_pop_takes_no_lock)
{
	struct tdx_pamt_pair p;

	pamt_env_up_default();
	EXPECT(!pamt_mag_pop(&p));
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_MAG_MISS), 1);
}

PAMT_TEST(mag_idle_cap_bounds_the_magazines)
{
	struct pamt_env_opts o = { .mag_size = 8, .idle_cap = 6 };
	struct tdx_pamt_pair p[40];

	ASSERT(!pamt_env_up(&o));
	take_pairs(p, 40);
	give_pairs(p, 40);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 6);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 2 * 34);
}

PAMT_TEST(reserve_get_cannot_fail_with_enomem)
{
	struct tdx_pamt_cache res = { 0 };

	pamt_env_up_default();
	EXPECT_EQ(__tdx_topup_pamt_cache(&res, 2, GFP_KERNEL), 0);
	EXPECT_EQ(res.nr, 2);
	/* Give the reserved pairs a home in the accounting. */
	env.held_pairs = 2;
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 1000000);
	pamt_sim_enter_atomic();		/* as under mmu_lock */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), &res), 0);
	env.held_pairs--;
	EXPECT_EQ(tdx_pamt_get(slot_pfn(2, 0), &res), 0);
	env.held_pairs--;
	EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 0), &res), -ENOMEM);
	EXPECT_EQ(slot_word(3), 0);
	pamt_sim_exit_atomic();
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);
	EXPECT_EQ(res.nr, 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(2, 0)), 0);
}

/*
 * A top-up takes the magazine's pairs first; a get takes the reserve's
 * first, whose pairs the caller's memcg pays for, and leaves the
 * magazine's.
 */
PAMT_TEST(reserve_fills_from_magazine_and_serves_first)
{
	struct tdx_pamt_cache res = { 0 };
	struct tdx_pamt_pair p;

	pamt_env_up_default();
	take_pairs(&p, 1);
	give_pairs(&p, 1);
	EXPECT_EQ(__tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2);	/* from the magazine */
	take_pairs(&p, 1);				/* allocator */
	give_pairs(&p, 1);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), &res), 0);
	EXPECT_EQ(res.nr, 0);		/* the reserve served the get */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
}

PAMT_TEST(reserve_topup_limits)
{
	struct tdx_pamt_cache res = { 0 };

	pamt_env_up_default();
	EXPECT_EQ(__tdx_topup_pamt_cache(&res, TDX_PAMT_CACHE_MAX + 1,
					 GFP_KERNEL), -EINVAL);
	EXPECT_EQ(res.nr, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 0);
	/* Fails on the 5th page: two whole pairs stay, nothing else. */
	pamt_sim_fail_set(&pamt_sim_fail_page, 4, 0);
	EXPECT_EQ(__tdx_topup_pamt_cache(&res, 3, GFP_KERNEL), -ENOMEM);
	EXPECT_EQ(res.nr, 2);
	EXPECT_EQ(pamt_sim_pages_in_use(), 4);
	env.held_pairs = 2;
	tdx_free_pamt_cache(&res);
	env.held_pairs = 0;
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 2);
}

/* No reserve, atomic context: falls back on GFP_NOWAIT, never sleeps. */
PAMT_TEST(get_in_atomic_without_reserve_never_sleeps)
{
	pamt_env_up_default();
	pamt_sim_enter_atomic();
	EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 0), NULL), 0);
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 0), NULL), -ENOMEM);
	pamt_sim_exit_atomic();
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), 0);
}

PAMT_TEST(control_page_alloc_and_free)
{
	struct page *page;
	unsigned long slot;

	pamt_env_up_default();
	page = __tdx_alloc_control_page(GFP_KERNEL);
	ASSERT(page);
	env.held_pages = 1;
	slot = (page_to_pfn(page) - env.base_pfn) / 512;
	EXPECT_EQ(slot_word(slot), PAMT_SLOT_INSTALLED | 1);
	tdx_free_control_page(page);
	env.held_pages = 0;
	EXPECT_EQ(pamt_slot_state(slot_word(slot)), PAMT_SLOT_IDLE);
	tdx_free_control_page(NULL);
}

/* A get that stays BUSY past its retries: a control page tries again. */
PAMT_TEST(control_page_retries_a_busy_get)
{
	struct page *page;

	pamt_env_up_default();
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY,
			 PAMT_BUSY_CALLS_MAX + 1, 0);
	page = __tdx_alloc_control_page(GFP_KERNEL);
	ASSERT(page);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), PAMT_BUSY_CALLS_MAX + 2);
	tdx_free_control_page(page);
	tdx_pamt_drain();
	/* Where it may not sleep, it does not. */
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY,
			 PAMT_BUSY_CALLS_MAX, 0);
	EXPECT(!__tdx_alloc_control_page(GFP_NOWAIT));
	EXPECT_EQ(pamt_sim_pages_in_use(), 2);
}

PAMT_TEST(control_page_enomem_leaves_nothing)
{
	pamt_env_up_default();
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);
	EXPECT(!__tdx_alloc_control_page(GFP_KERNEL));
	/* The page comes, the pair does not: the page goes back. */
	pamt_sim_fail_set(&pamt_sim_fail_page, 1, 0);
	EXPECT(!__tdx_alloc_control_page(GFP_KERNEL));
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	/* GFP_NOWAIT fails, the GFP_KERNEL top-up succeeds. */
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);
	pamt_sim_fail_page.nonblocking_only = true;
	{
		struct page *page = __tdx_alloc_control_page(GFP_KERNEL);

		EXPECT(page);
		tdx_free_control_page(page);
	}
}

/* CPU 2 goes offline: its pairs stay counted until a drain frees them. */
PAMT_TEST(drain_frees_a_dead_cpus_pairs)
{
	struct tdx_pamt_pair p[6];

	env_mag(8, false);
	pamt_sim_set_cpu(2);
	take_pairs(p, 6);
	give_pairs(p, 6);
	pamt_sim_set_cpu(0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 6);
	EXPECT_EQ(pamt_sim_pages_in_use(), 12);
	EXPECT_EQ(tdx_pamt_drain(), 6);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 12);
}

PAMT_TEST(drain_all_frees_idle_and_cached)
{
	struct tdx_pamt_pair p[20];
	unsigned long s;

	env_mag(8, false);
	for (s = 0; s < 5; s++) {
		ASSERT(!tdx_pamt_get(slot_pfn(s, 0), NULL));
		ASSERT(!tdx_pamt_put(slot_pfn(s, 0)));
	}
	ASSERT(!tdx_pamt_get(slot_pfn(9, 0), NULL));	/* stays active */
	pamt_sim_set_cpu(3);
	take_pairs(p, 20);
	give_pairs(p, 20);
	pamt_sim_set_cpu(0);
	/* Five idle slots, and CPU 3's full magazine (the rest went back). */
	EXPECT_EQ(tdx_pamt_drain(), 5 + 8);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(pamt_slot_state(slot_word(9)), PAMT_SLOT_ACTIVE);
	EXPECT_EQ(pamt_sim_pages_in_use(), 2);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(9, 0)), 0);
}

/*
 * Drains that reclaim runs -- the shrinker, the cap's worker -- free
 * other CPUs' pairs without allocating anything, free only what was asked.
 */
static void drain_for_reclaim(bool cap)
{
	unsigned long kmalloc_bytes;
	struct tdx_pamt_pair p[6];

	env_mag(8, false);
	pamt_sim_set_cpu(2);
	take_pairs(p, 6);
	give_pairs(p, 6);
	pamt_sim_set_cpu(0);
	ASSERT(stat(TDX_PAMT_STAT_CACHED_PAIRS) == 6);
	kmalloc_bytes = pamt_sim_kmalloc_bytes;
	if (cap) {
		set_idle_cap(1);
	} else {
		/* This CPU holds nothing: the shrinker takes CPU 2's. */
		EXPECT_EQ(pamt_fake_shrink_scan(5, NULL), 5);
	}
	EXPECT_EQ(pamt_sim_kmalloc_bytes - kmalloc_bytes, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 10);
}

PAMT_TEST(drain_shrinker_allocates_nothing)
{
	drain_for_reclaim(false);
}

PAMT_TEST(drain_cap_allocates_nothing)
{
	drain_for_reclaim(true);
}

struct softirq_ctx {
	unsigned long *pfns;
	unsigned long nr;
	unsigned long head;	/* gets done, written by the task */
	unsigned long tail;	/* puts done, written by the softirq */
};

static void *softirq_putter(void *arg)
{
	struct softirq_ctx *c = arg;
	unsigned long i = 0;
	int ret;

	pamt_sim_set_cpu(1);		/* the same CPU as the task */
	while (i < c->nr) {
		if (i < __atomic_load_n(&c->head, __ATOMIC_ACQUIRE)) {
			if (tdx_pamt_put(c->pfns[i]))
				pamt_sim_fatal("put", __FILE__, __LINE__);
			/* -EBUSY: the task got the range again meanwhile. */
			ret = pamt_fake_evict(c->pfns[i]);
			if (ret && ret != -EBUSY)
				pamt_sim_fatal("evict", __FILE__, __LINE__);
			__atomic_store_n(&c->tail, ++i, __ATOMIC_RELEASE);
		} else {
			cpu_relax();
		}
	}
	return NULL;
}

/*
 * One CPU: the task gets (taking pairs from the magazine), the "softirq"
 * puts and evicts (REMOVE, giving pairs back) at the same time.
 */
PAMT_TEST(softirq_put_during_get_on_same_cpu)
{
	unsigned long pfns[4000], i;
	struct softirq_ctx c = { .pfns = pfns, .nr = 4000 };
	pthread_t t;

	env_mag(8, false);
	pamt_sim_set_cpu(1);
	pthread_create(&t, NULL, softirq_putter, &c);
	for (i = 0; i < c.nr; i++) {
		/* Stay at most two ahead, so slots cycle through EMPTY. */
		while (i - __atomic_load_n(&c.tail, __ATOMIC_ACQUIRE) > 2)
			cpu_relax();
		pfns[i] = slot_pfn(i % 3, 0);
		while (tdx_pamt_get(pfns[i], NULL))
			;
		__atomic_store_n(&c.head, i + 1, __ATOMIC_RELEASE);
	}
	pthread_join(t, NULL);
	pamt_sim_set_cpu(0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);
	EXPECT(stat(TDX_PAMT_STAT_MAG_HIT) > 0);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 0);
}

struct storm {
	unsigned long pfn;
	bool stop;
	unsigned long rounds;
};

static void *conversion_storm(void *arg)
{
	struct storm *st = arg;

	pamt_sim_set_cpu(1);
	while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE)) {
		if (!tdx_pamt_get(st->pfn, NULL)) {
			if (tdx_pamt_put(st->pfn))
				pamt_sim_fatal("put", __FILE__, __LINE__);
		}
		__atomic_fetch_add(&st->rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * An idle cap of 0: a guest loops shared<->private conversions on one
 * page, so its pair is ADDed and REMOVEd back to back; the pair's pages
 * lie in the range a bystander now needs.  The module answers the
 * bystander's ADD with BUSY most of the time; its retries get it in.
 */
PAMT_TEST(busy_fallback_beats_a_conversion_storm)
{
	struct storm st = { 0 };
	struct tdx_pamt_pair p;
	int ret, tries;
	pthread_t t;

	env_mag(8, true);
	st.pfn = slot_pfn(40, 0);
	p.pfn[0] = slot_pfn(20, 0);
	p.pfn[1] = slot_pfn(20, 1);
	pamt_fake_set_latency(PAMT_FAKE_ADD, 2000, 4000, 18000);
	pamt_fake_set_latency(PAMT_FAKE_REMOVE, 1000, 2000, 11000);
	ASSERT(pamt_sim_alloc_pfn(p.pfn[0]) && pamt_sim_alloc_pfn(p.pfn[1]));
	pamt_sim_set_cpu(1);
	pamt_stat_add(PAGE_ALLOC, 2);	/* as if the cache had allocated it */
	pamt_mag_push(&p);		/* the storm's only pair */
	pthread_create(&t, NULL, conversion_storm, &st);
	while (__atomic_load_n(&st.rounds, __ATOMIC_RELAXED) < 100)
		cpu_relax();
	pamt_sim_set_cpu(0);
	/*
	 * In the kernel a SEAMCALL in flight ends within microseconds.  Here
	 * the storm thread can be preempted inside the fake module with its
	 * range locks held, so allow a few attempts, as a faulting vCPU
	 * would retry.
	 */
	for (tries = 0; tries < 20; tries++) {
		ret = tdx_pamt_get(slot_pfn(20, 7), NULL);
		if (ret != -EBUSY)
			break;
		ndelay(NSEC_PER_MSEC);
	}
	__atomic_store_n(&st.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	/*
	 * The bystander mostly gets in within its backed-off retries; the
	 * fallback's own tests are err_add_busy_retried_then_ebusy and the
	 * busy_storm tests.
	 */
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(atomic_read(&pamt.serializing), 0);
	if (!ret)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(20, 7)), 0);
}
