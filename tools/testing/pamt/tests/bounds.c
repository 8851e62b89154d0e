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
	cap = tdx_pamt_idle_cap();
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
			ret = tdx_pamt_evict(pfn);
			EXPECT(ret == 0 || ret == -EBUSY);
		} else if (r < 88 && nr_pairs < 8) {
			ASSERT(!tdx_pamt_pair_take(&pairs[nr_pairs++], NULL,
						   GFP_KERNEL));
			env.held_pairs++;
		} else if (r < 91 && nr_pairs) {
			tdx_pamt_pair_give(&pairs[--nr_pairs]);
			env.held_pairs--;
		} else if (r < 94) {
			env.held_pairs -= res.nr;
			ASSERT(!__tdx_topup_pamt_cache(&res, 4, GFP_KERNEL));
			env.held_pairs += res.nr;
		} else if (r < 97) {
			env.held_pairs -= res.nr;
			tdx_free_pamt_cache(&res);
		} else {
			tdx_pamt_shrink_scan(1 + get_random_u32_below(4), NULL);
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
		tdx_pamt_pair_give(&pairs[--nr_pairs]);
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
		freed += tdx_pamt_shrink_scan(SCALE_K - freed, NULL);
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

/*
 * The shrinker counts the pairs in every CPU's magazines and frees them:
 * this CPU's at once, the others' through the worker, on their CPUs.
 */
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
			ASSERT(!tdx_pamt_pair_take(&p[i], NULL, GFP_KERNEL));
		for (i = 0; i < 6; i++)
			tdx_pamt_pair_give(&p[i]);
	}
	pamt_sim_set_cpu(0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 24);
	EXPECT_EQ(tdx_pamt_shrink_count(), 24);
	freed = tdx_pamt_shrink_scan(24, NULL);
	EXPECT_EQ(freed, 6);			/* this CPU's, at once */
	run_deferred();
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(tdx_pamt_shrink_count(), 0);
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
	EXPECT_EQ(tdx_pamt_shrink_scan(n, NULL) + 0, n);
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
	EXPECT_EQ(tdx_pamt_shrink_scan(20, NULL), 20);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(tdx_pamt_shrink_count(), 0);
	pamt_env_down();
}

/*
 * With the arena the idle cap also counts the free pairs in chunks.
 * Ranges over several chunks go idle one chunk after another in turn, so
 * that the oldest idle slots are spread over every chunk; two chunks keep
 * one range in use each to the end.  Whenever the worker has run, idle
 * memory plus the chunks' free pairs is within the cap plus 255 pairs per
 * chunk that holds a range in use (Documentation/arch/x86/tdx-dpamt.rst,
 * "Memory cost and the shrinker").  Then ranges of those chunks revived
 * and put again do not REMOVE, nor call the worker at once: it would
 * free nothing.
 */
#define SPREAD_RANGES	1600
#define SPREAD_CHUNKS	16
#define SPREAD_PINNED	2
#define SPREAD_CAP	64

static struct {
	unsigned short of[SPREAD_RANGES];	/* chunk of each range's pair */
	unsigned int in_use[SPREAD_CHUNKS];	/* ranges in use per chunk */
	unsigned int nr;			/* chunks */
	long worst;				/* most over the bound */
	unsigned int runs;			/* worker runs */
} spread;

static u64 held_memory(void)
{
	return idle_memory() + stat(TDX_PAMT_STAT_ARENA_FREE);
}

static unsigned int spread_chunk(unsigned long slot, unsigned long *chunks)
{
	const struct tdx_pamt_pair *p = &pamt_fake.ranges[slot].pair;
	unsigned long c = min(p->pfn[0], p->pfn[1]) / PAMT_ARENA_PAGES;
	unsigned int i;

	for (i = 0; i < spread.nr; i++)
		if (chunks[i] == c)
			return i;
	if (spread.nr == SPREAD_CHUNKS)
		pamt_sim_fatal("too many chunks", __FILE__, __LINE__);
	chunks[spread.nr++] = c;
	return i;
}

/* The cap plus 255 pairs per chunk that holds a range in use. */
static long spread_bound(void)
{
	long bound = SPREAD_CAP;
	unsigned int c;

	for (c = 0; c < spread.nr; c++)
		if (spread.in_use[c])
			bound += PAMT_ARENA_PAIRS - 1;
	return bound;
}

/* The worker, if a put asked for it; @lazy: a second has passed. */
static void spread_run_worker(bool lazy)
{
	bool due = atomic_long_xchg(&pamt_sim_deferred, 0);

	if (lazy)
		due |= atomic_long_xchg(&pamt_sim_deferred_lazy, 0);
	if (!due)
		return;
	run_deferred();
	spread.runs++;
	if ((long)held_memory() - spread_bound() > spread.worst)
		spread.worst = (long)held_memory() - spread_bound();
}

PAMT_TEST(bounds_idle_cap_counts_chunk_free_pairs)
{
	struct pamt_env_opts o = {
		.mag_size = 16,
		.idle_cap = SPREAD_CAP, .nr_cpus = 4, .nr_slots = 2048,
		.mem_slots = 64, .arena = true,
	};
	unsigned long chunks[SPREAD_CHUNKS], pinned[SPREAD_PINNED], slot;
	unsigned int c, round, i, kicks = 0;
	long removes;

	memset(&spread, 0, sizeof(spread));
	spread.worst = LONG_MIN;
	ASSERT(!pamt_env_up(&o));
	for (slot = 0; slot < SPREAD_RANGES; slot++) {
		pamt_sim_set_cpu(slot % 4);
		ASSERT(!tdx_pamt_get(slot_pfn(slot, 0), NULL));
		spread.of[slot] = spread_chunk(slot, chunks);
		spread.in_use[spread.of[slot]]++;
	}
	ASSERT(spread.nr > SPREAD_PINNED + 2);
	/* The first range of each of the first chunks stays in use. */
	for (i = 0; i < SPREAD_PINNED; i++)
		for (slot = 0; slot < SPREAD_RANGES; slot++)
			if (spread.of[slot] == i) {
				pinned[i] = slot;
				break;
			}
	/* Round r puts the r-th range of every chunk: chunks in turn. */
	for (round = 0; round < PAMT_ARENA_PAIRS; round++) {
		for (c = 0; c < spread.nr; c++) {
			i = 0;
			for (slot = 0; slot < SPREAD_RANGES; slot++) {
				if (spread.of[slot] != c || i++ != round)
					continue;
				if (c < SPREAD_PINNED && slot == pinned[c])
					break;
				pamt_sim_set_cpu(get_random_u32_below(4));
				EXPECT_EQ(tdx_pamt_put(slot_pfn(slot, 0)), 0);
				spread.in_use[c]--;
				spread_run_worker(false);
				break;
			}
		}
	}
	pamt_sim_set_cpu(0);
	spread_run_worker(true);
	printf("    %u chunks, %d in use, cap %d: held %llu (bound %ld), %u worker runs\n",
	       spread.nr, SPREAD_PINNED, SPREAD_CAP,
	       (unsigned long long)held_memory(), spread_bound(), spread.runs);
	EXPECT(held_memory() <= spread_bound());
	EXPECT(spread.worst <= 0);
	EXPECT(stat(TDX_PAMT_STAT_ARENA_CHUNKS) <= SPREAD_PINNED);
	EXPECT(idle_memory() <= SPREAD_CAP);
	EXPECT_EQ(pamt_arena_check(), 0);
	EXPECT(pamt_accounting_ok());

	/* Revive and put the idle ranges left: no REMOVE, no worker now. */
	removes = fake_calls(PAMT_FAKE_REMOVE);
	for (round = 0; round < 4; round++) {
		for (slot = 0; slot < SPREAD_RANGES; slot++) {
			if (pamt_slot_state(slot_word(slot)) != PAMT_SLOT_IDLE)
				continue;
			pamt_sim_set_cpu(get_random_u32_below(4));
			EXPECT_EQ(tdx_pamt_get(slot_pfn(slot, 0), NULL), 0);
			EXPECT_EQ(tdx_pamt_put(slot_pfn(slot, 0)), 0);
			kicks += atomic_long_xchg(&pamt_sim_deferred, 0) != 0;
		}
	}
	pamt_sim_set_cpu(0);
	spread_run_worker(true);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE) - removes, 0);
	EXPECT_EQ(kicks, 0);

	/* The last ranges in use go: their chunks can go too. */
	for (i = 0; i < SPREAD_PINNED; i++) {
		EXPECT_EQ(tdx_pamt_put(slot_pfn(pinned[i], 0)), 0);
		spread.in_use[i]--;
	}
	spread_run_worker(true);
	EXPECT(held_memory() <= SPREAD_CAP);
	EXPECT(spread.worst <= 0);
	EXPECT_EQ(pamt_arena_check(), 0);
	EXPECT(pamt_accounting_ok());
}
