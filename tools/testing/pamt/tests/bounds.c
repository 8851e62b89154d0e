// SPDX-License-Identifier: GPL-2.0
/*
 * Bounds on the slow paths (Documentation/arch/x86/tdx-dpamt.rst, "Memory
 * cost and the shrinker"): SEAMCALLs per put, the idle cap and its slack,
 * the cost of reclaim against the table size, pairs in magazines under
 * the shrinker.  Everything is measured in counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include "../harness.h"

static void make_idle(unsigned long first, unsigned long n, unsigned long step)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		EXPECT_EQ(tdx_pamt_get(slot_pfn(first + i * step, 0), NULL), 0);
		EXPECT_EQ(tdx_pamt_put(slot_pfn(first + i * step, 0)), 0);
	}
}

/*
 * A put at the cap, with the module answering BUSY to every REMOVE, in
 * atomic context as from an RCU callback: one REMOVE sequence at most,
 * PAMT_BUSY_CALLS_MAX SEAMCALLs, and what is left over goes to the worker.
 */
PAMT_TEST(bounds_put_one_remove_sequence)
{
	struct pamt_env_opts o = { .idle_cap = 4, .mag_size = 8 };
	long calls;

	ASSERT(!pamt_env_up(&o));
	make_idle(0, 8, 1);
	ASSERT(!tdx_pamt_get(slot_pfn(20, 0), NULL));
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 0, 1000000);
	calls = fake_calls(PAMT_FAKE_REMOVE);
	atomic_long_set(&pamt_sim_deferred, 0);
	pamt_sim_enter_atomic();
	EXPECT_EQ(tdx_pamt_put(slot_pfn(20, 0)), 0);
	pamt_sim_exit_atomic();
	EXPECT(atomic_long_read(&pamt_sim_deferred) > 0);
	calls = fake_calls(PAMT_FAKE_REMOVE) - calls;
	EXPECT(calls >= 1);
	EXPECT(calls <= PAMT_BUSY_CALLS_MAX);
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
	/* The worker brings idle memory back under the cap. */
	run_deferred();
	EXPECT(idle_memory() <= 4);
}

#define CAP_OPS		4000
#define CAP_HELD	64
/* Other CPUs' unfolded changes: below a batch each, with no softirq. */
#define CAP_SLACK	((PAMT_HELD_BATCH - 1) * (4 - 1))

/*
 * Random gets, puts, evicts, pair takes and gives, reserve top-ups and
 * frees, shrinker scans, on random CPUs; after every one of them idle
 * memory (idle slots and magazine pairs) is within the cap plus
 * the other CPUs' unfolded changes, and within the cap once the worker a
 * put asked for has run.  One thread and a module that does not answer
 * BUSY: no other slack.
 */
static void cap_random(unsigned long nr_slots,
		       unsigned long cap, bool sequential)
{
	struct pamt_env_opts o = {
		.mag_size = 16, .idle_cap = cap, .nr_cpus = 4,
		.nr_slots = nr_slots, .mem_slots = 64,
	};
	struct tdx_pamt_cache res = { .nr = 0 };
	unsigned long held[CAP_HELD], pfn, slot = 0, worst = 0;
	struct tdx_pamt_pair pairs[8];
	unsigned int nr_held = 0, nr_pairs = 0, i, r, j;
	int ret;

	ASSERT(!pamt_env_up(&o));
	cap = READ_ONCE(pamt.idle_cap);
	for (i = 0; i < CAP_OPS; i++) {
		pamt_sim_set_cpu(get_random_u32_below(4));
		r = get_random_u32_below(100);
		slot = sequential ? (slot + 1) % nr_slots :
				    get_random_u32_below(nr_slots);
		pfn = slot_pfn(slot, get_random_u32_below(512));
		if (r < 45 && nr_held < CAP_HELD) {
			j = res.nr;
			ret = r < 35 ? tdx_pamt_get(pfn, NULL) :
				       tdx_pamt_get(pfn, &res);
			env.held_pairs -= j - res.nr;	/* one went to an ADD */
			EXPECT_EQ(ret, 0);
			if (!ret)
				held[nr_held++] = pfn;
		} else if (r < 80 && nr_held) {
			j = get_random_u32_below(nr_held);
			EXPECT_EQ(tdx_pamt_put(held[j]), 0);
			held[j] = held[--nr_held];
		} else if (r < 85) {
			ret = pamt_fake_evict(pfn);
			EXPECT(ret == 0 || ret == -EBUSY);
		} else if (r < 88 && nr_pairs < 8) {
			ASSERT(!take_pair(&pairs[nr_pairs++]));
			env.held_pairs++;
		} else if (r < 91 && nr_pairs) {
			pamt_mag_push(&pairs[--nr_pairs]);
			env.held_pairs--;
		} else if (r < 94) {
			env.held_pairs -= res.nr;
			ASSERT(!__tdx_topup_pamt_cache(&res, 4, GFP_KERNEL));
			env.held_pairs += res.nr;
		} else if (r < 97) {
			env.held_pairs -= res.nr;
			tdx_free_pamt_cache(&res);
		} else {
			pamt_fake_shrink_scan(1 + get_random_u32_below(4), NULL);
		}
		/*
		 * The one slack of one thread: a put whose first index
		 * entries were stale leaves one pair over the cap, for the
		 * worker it asked for.
		 */
		if (atomic_long_xchg(&pamt_sim_deferred, 0)) {
			EXPECT(idle_memory() <= cap + 1 + CAP_SLACK);
			run_deferred();
			EXPECT(idle_memory() <= cap);
		}
		if (idle_memory() > worst)
			worst = idle_memory();
		if (idle_memory() > cap + CAP_SLACK) {
			fprintf(stderr, "    op %u: idle memory %llu > cap %lu + %d\n",
				i, (unsigned long long)idle_memory(), cap,
				CAP_SLACK);
			EXPECT(idle_memory() <= cap + CAP_SLACK);
			break;
		}
	}
	while (nr_held)
		EXPECT_EQ(tdx_pamt_put(held[--nr_held]), 0);
	EXPECT(idle_memory() <= cap + CAP_SLACK);
	env.held_pairs -= res.nr;
	tdx_free_pamt_cache(&res);
	while (nr_pairs) {
		pamt_mag_push(&pairs[--nr_pairs]);
		env.held_pairs--;
	}
	EXPECT(idle_memory() <= cap + CAP_SLACK);
	if (getenv("PAMT_VERBOSE"))
		printf("    %lu slots, cap %lu: worst idle memory %lu\n",
		       nr_slots, cap, worst);
}

PAMT_TEST(bounds_idle_cap_random_16k_slots)
{
	cap_random(16384, 16, false);
}

PAMT_TEST(bounds_idle_cap_sequential_16k_slots)
{
	cap_random(16384, 16, true);
}

PAMT_TEST(bounds_idle_cap_random_default_cap)
{
	cap_random(64, 0, false);
}

PAMT_TEST(bounds_idle_cap_random_cap_1)
{
	cap_random(256, 1, false);
}

/*
 * The work to free k pairs, in index entries looked at, is the same for
 * a 1 GiB and a 1 TiB table: 64 idle slots spread over the table, freed
 * by the shrinker, then by lowering the cap, then by puts over the cap.
 */
#define SCALE_K		64

struct scale_work {
	unsigned long scan, cap, put;
};

static void reclaim_at_scale(unsigned long nr_slots, struct scale_work *w)
{
	struct pamt_env_opts o = {
		.idle_cap = 4 * SCALE_K, .nr_slots = nr_slots,
		.mem_slots = 512,
	};
	unsigned long step = nr_slots / SCALE_K, freed = 0, before, i;

	ASSERT(!pamt_env_up(&o));
	make_idle(0, SCALE_K, step);
	before = reclaim_work();
	for (i = 0; i < 4 && freed < SCALE_K; i++)
		freed += pamt_fake_shrink_scan(SCALE_K - freed, NULL);
	w->scan = reclaim_work() - before;
	EXPECT_EQ(freed, SCALE_K);

	make_idle(0, SCALE_K, step);
	before = reclaim_work();
	set_idle_cap(SCALE_K / 2);
	w->cap = reclaim_work() - before;
	EXPECT(idle_memory() <= SCALE_K / 2);

	/* Each put over the cap frees one older idle slot. */
	before = reclaim_work();
	make_idle(step / 2, SCALE_K / 2, step);
	w->put = reclaim_work() - before;
	EXPECT(idle_memory() <= SCALE_K / 2);
	pamt_env_down();
}

PAMT_TEST(bounds_reclaim_cost_flat_1g_vs_1t)
{
	struct scale_work g = { 0 }, t = { 0 };

	reclaim_at_scale(512, &g);		/* 1 GiB */
	reclaim_at_scale(512UL * 1024, &t);	/* 1 TiB */
	printf("    reclaim work (index entries), 1 GiB / 1 TiB: shrinker %lu / %lu, ",
	       g.scan, t.scan);
	printf("cap %lu / %lu, puts %lu / %lu, for %d pairs each\n",
	       g.cap, t.cap, g.put, t.put, SCALE_K);
	/* The shrinker looks at every entry once, and a few spare. */
	EXPECT(t.scan <= SCALE_K + 8);
	EXPECT(t.cap <= SCALE_K + 8);
	EXPECT(t.put <= 2 * SCALE_K + 8);
	EXPECT(t.scan <= g.scan + 8);
	EXPECT(t.cap <= g.cap + 8);
	EXPECT(t.put <= g.put + 8);
}

/* The shrinker counts the pairs in every CPU's magazines and frees them. */
PAMT_TEST(bounds_shrinker_reclaims_magazine_pairs)
{
	struct pamt_env_opts o = { .idle_cap = 1000, .mag_size = 8, .nr_cpus = 4 };
	struct tdx_pamt_pair p[6];
	unsigned long freed;
	unsigned int cpu, i;

	ASSERT(!pamt_env_up(&o));
	for (cpu = 0; cpu < 4; cpu++) {
		pamt_sim_set_cpu(cpu);
		for (i = 0; i < 6; i++)
			ASSERT(!take_pair(&p[i]));
		for (i = 0; i < 6; i++)
			pamt_mag_push(&p[i]);
	}
	pamt_sim_set_cpu(0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 24);
	EXPECT_EQ(pamt_fake_idle_pairs(), 24);
	freed = pamt_fake_shrink_scan(24, NULL);
	EXPECT_EQ(freed, 24);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(pamt_fake_idle_pairs(), 0);
}

/*
 * A slot joins its list when its pair is installed: the put that makes it
 * idle takes no lock (a lock per cold 1->0 put, modelled, misses the
 * churn targets: BENCHMARKS.md, "The idle index on list_lru").
 */
PAMT_TEST(bounds_idle_put_takes_no_lock)
{
	struct pamt_env_opts o = { .idle_cap = 100000, .nr_slots = 1024 };
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	const unsigned long n = 640;
	u64 locks, walked;
	unsigned long s;

	ASSERT(!pamt_env_up(&o));
	for (s = 0; s < n; s++)
		ASSERT(!tdx_pamt_get(slot_pfn(s, 0), NULL));
	EXPECT_EQ(pamt.shrinker->count_objects(pamt.shrinker, &sc), n);
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	walked = reclaim_work();
	for (s = 0; s < n; s++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK) - locks;
	printf("    %lu slots gone idle: %llu global-lock acquisitions\n",
	       n, (unsigned long long)locks);
	EXPECT_EQ(locks, 0);
	EXPECT_EQ(reclaim_work(), walked);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), n);
	/* Every one of them is still reachable by reclaim. */
	EXPECT_EQ(pamt_fake_shrink_scan(n, NULL) + 0, n);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	pamt_env_down();
}

/*
 * Idle slots still in other CPUs' buffers: the shrinker reaches them at
 * once (an empty index takes every CPU's buffer), with no worker.
 */
PAMT_TEST(bounds_shrinker_reaches_other_cpus_idle_slots)
{
	struct pamt_env_opts o = { .idle_cap = 100000, .nr_cpus = 4,
				   .nr_slots = 1024 };
	unsigned int cpu;

	ASSERT(!pamt_env_up(&o));
	for (cpu = 0; cpu < 4; cpu++) {
		pamt_sim_set_cpu(cpu);
		make_idle(cpu * 100, 5, 1);	/* fewer than a batch */
	}
	pamt_sim_set_cpu(0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 20);
	EXPECT_EQ(pamt_fake_shrink_scan(20, NULL), 20);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(pamt_fake_idle_pairs(), 0);
	pamt_env_down();
}
