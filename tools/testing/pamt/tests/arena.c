// SPDX-License-Identifier: GPL-2.0
/*
 * The pair arena: pairs carved out of order-9 chunks, fullest chunk
 * first, a chunk given back once all its pairs are free (directly, and
 * through the shrinker, the idle cap, drains and exit), each page reset
 * before it goes back, and the order-1 and order-0 fallbacks.
 */
#include <pthread.h>
#include "../harness.h"
#include "shrink_slab.h"

#define CHUNK_PAGES	512UL
#define CHUNK_PAIRS	256

static unsigned long chunk_of(unsigned long pfn)
{
	return pfn / CHUNK_PAGES;
}

/* The arena on, small magazines, an idle cap out of the way. */
static void env_arena(void)
{
	struct pamt_env_opts o = {
		.mag_size = 8, .idle_cap = 100000, .arena = true,
	};

	if (pamt_env_up(&o))
		pamt_sim_fatal("environment", __FILE__, __LINE__);
}

static void alloc_pairs(struct tdx_pamt_pair *p, int n, gfp_t gfp)
{
	int i;

	for (i = 0; i < n; i++) {
		EXPECT_EQ(pamt_pair_alloc(&p[i], gfp), 0);
		env.held_pairs++;
	}
}

static void free_pairs(struct tdx_pamt_pair *p, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		pamt_pair_free(&p[i]);
		env.held_pairs--;
	}
}

static bool is_order1_pair(const struct tdx_pamt_pair *p)
{
	return p->pfn[1] == p->pfn[0] + 1 && !(p->pfn[0] % 2);
}

/* Without the arena nothing changes: two order-0 pages per pair. */
PAMT_TEST(arena_off_pairs_are_two_pages)
{
	struct tdx_pamt_pair p;

	pamt_env_up_default();
	alloc_pairs(&p, 1, GFP_KERNEL);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FAIL), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	free_pairs(&p, 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 2);
}

/* 256 pairs fill one 2M-aligned chunk; the 257th starts a second. */
PAMT_TEST(arena_pairs_fill_one_2m_chunk)
{
	static struct tdx_pamt_pair p[CHUNK_PAIRS + 1];
	unsigned long blocks = pamt_sim_free_blocks(9);
	int i;

	env_arena();
	blocks = pamt_sim_free_blocks(9);
	alloc_pairs(p, CHUNK_PAIRS, GFP_KERNEL);
	for (i = 0; i < CHUNK_PAIRS; i++) {
		EXPECT(is_order1_pair(&p[i]));
		EXPECT_EQ(chunk_of(p[i].pfn[0]), chunk_of(p[0].pfn[0]));
		EXPECT(pamt_sim_pfn_allocated(p[i].pfn[0]));
	}
	/* Each pair once: first to last, two pages apart. */
	EXPECT_EQ(p[CHUNK_PAIRS - 1].pfn[0] - p[0].pfn[0], CHUNK_PAGES - 2);
	EXPECT_EQ(p[0].pfn[0] % CHUNK_PAGES, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), CHUNK_PAGES);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), 0);
	EXPECT_EQ(pamt_sim_free_blocks(9), blocks - 1);

	alloc_pairs(&p[CHUNK_PAIRS], 1, GFP_KERNEL);
	EXPECT(chunk_of(p[CHUNK_PAIRS].pfn[0]) != chunk_of(p[0].pfn[0]));
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 1);
	EXPECT(pamt_accounting_ok());
	EXPECT_EQ(pamt_arena_check(), 0);

	free_pairs(p, CHUNK_PAIRS + 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FREE), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 2 * CHUNK_PAGES);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(pamt_sim_free_blocks(9), blocks);
}

/* Pairs come from the chunk with the fewest free pairs, so others drain. */
PAMT_TEST(arena_fullest_chunk_first)
{
	static struct tdx_pamt_pair p[3 * CHUNK_PAIRS], q[51];
	unsigned long a, b, c;
	int i;

	env_arena();
	alloc_pairs(p, 3 * CHUNK_PAIRS, GFP_KERNEL);
	a = chunk_of(p[0].pfn[0]);
	b = chunk_of(p[CHUNK_PAIRS].pfn[0]);
	c = chunk_of(p[2 * CHUNK_PAIRS].pfn[0]);
	EXPECT(a != b && b != c && a != c);
	/* a: 200 free; b: 10 free; c: 40 free. */
	free_pairs(p, 200);
	free_pairs(&p[CHUNK_PAIRS], 10);
	free_pairs(&p[2 * CHUNK_PAIRS], 40);
	EXPECT_EQ(pamt_arena_check(), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), 250);
	/* The next 10 from b, the 40 after from c, then a. */
	alloc_pairs(q, 51, GFP_KERNEL);
	for (i = 0; i < 10; i++)
		EXPECT_EQ(chunk_of(q[i].pfn[0]), b);
	for (i = 10; i < 50; i++)
		EXPECT_EQ(chunk_of(q[i].pfn[0]), c);
	EXPECT_EQ(chunk_of(q[50].pfn[0]), a);
	/* Taken from chunks with free pairs: no new chunk, no fallback. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 3);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), 199);
	EXPECT_EQ(pamt_arena_check(), 0);
	free_pairs(q, 51);
	free_pairs(&p[200], CHUNK_PAIRS - 200);
	free_pairs(&p[CHUNK_PAIRS + 10], CHUNK_PAIRS - 10);
	free_pairs(&p[2 * CHUNK_PAIRS + 40], CHUNK_PAIRS - 40);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/*
 * The ops around the fake module, with a reset that records which pages
 * were reset and checks that each one still belongs to the cache: reset
 * comes before the page goes back to the allocator, chunk or not.
 */
static unsigned long reset_map[BITS_TO_LONGS(64 * CHUNK_PAGES)];
static long reset_of_free_page;

static void arena_reset_page(unsigned long pfn)
{
	if (!pamt_sim_pfn_allocated(pfn))
		reset_of_free_page++;
	set_bit(pfn - env.base_pfn, reset_map);
	pamt_env_ops.reset_page(pfn);
}

static struct tdx_pamt_ops arena_ops_rw;

static void arena_watch_resets(void)
{
	arena_ops_rw = pamt_env_ops;
	arena_ops_rw.reset_page = arena_reset_page;
	pamt.ops = &arena_ops_rw;
	memset(reset_map, 0, sizeof(reset_map));
	reset_of_free_page = 0;
}

/* @n slots used, then idle: their pairs are in the module, in one chunk. */
static void idle_slots(int first, int n)
{
	int i;

	for (i = first; i < first + n; i++)
		EXPECT_EQ(tdx_pamt_get(slot_pfn(i, 0), NULL), 0);
	for (i = first; i < first + n; i++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(i, 0)), 0);
}

/* Every page of @n slots' pairs (taken from the module) was reset. */
static unsigned long pair_pfns[64][2];

static void note_pairs(int first, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct pamt_fake_range *r = &pamt_fake.ranges[first + i];

		pair_pfns[i][0] = r->pair.pfn[0];
		pair_pfns[i][1] = r->pair.pfn[1];
	}
}

static void expect_pairs_reset(int n)
{
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < 2; j++) {
			EXPECT(test_bit(pair_pfns[i][j] - env.base_pfn, reset_map));
			EXPECT(!pamt_sim_pfn_allocated(pair_pfns[i][j]));
		}
	EXPECT_EQ(reset_of_free_page, 0);
}

/* A drain frees every idle pair; the chunk goes back, each page reset. */
PAMT_TEST(arena_chunk_released_by_drain)
{
	env_arena();
	arena_watch_resets();
	idle_slots(1, 40);
	note_pairs(1, 40);
	EXPECT_EQ(chunk_of(pair_pfns[0][0]), chunk_of(pair_pfns[39][1]));
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	/* The gets' refills (1 + 6 each) left 2 in the magazine. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 42);
	EXPECT_EQ(tdx_pamt_drain(), 42);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FREE), 1);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	expect_pairs_reset(40);
}

/* Pairs in magazines on several CPUs (evicted there) are drained too. */
PAMT_TEST(arena_chunk_released_by_drain_of_magazines)
{
	unsigned int cpu, i;

	env_arena();
	for (cpu = 0; cpu < 4; cpu++) {
		pamt_sim_set_cpu(cpu);
		idle_slots(10 * cpu, 10);
		for (i = 0; i < 10; i++)
			EXPECT_EQ(tdx_pamt_evict(slot_pfn(10 * cpu + i, 0)), 0);
	}
	pamt_sim_set_cpu(0);
	EXPECT(stat(TDX_PAMT_STAT_CACHED_PAIRS) > 8);	/* on several CPUs */
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT(pamt_accounting_ok());
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/* The shrinker removes idle slots; the last pair back frees the chunk. */
PAMT_TEST(arena_chunk_released_by_shrinker)
{
	unsigned long scanned, rounds = 0;

	env_arena();
	arena_watch_resets();
	idle_slots(1, 20);
	note_pairs(1, 20);
	while (tdx_pamt_shrink_count() && rounds++ < 10) {
		tdx_pamt_shrink_scan(8, &scanned);
		/* Not the last pair yet: the chunk stays. */
		if (tdx_pamt_shrink_count())
			EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	}
	EXPECT_EQ(tdx_pamt_shrink_count(), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_SHRINK), 20);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FREE), 1);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	expect_pairs_reset(20);
}

/* The idle cap, lowered to 0, takes every idle pair, and the chunk. */
PAMT_TEST(arena_chunk_released_by_idle_cap)
{
	env_arena();
	arena_watch_resets();
	idle_slots(1, 20);
	note_pairs(1, 20);
	set_idle_cap(0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CAP), 20);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FREE), 1);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	expect_pairs_reset(20);
}

/*
 * Free pairs in a chunk with a pair in use put held memory over the cap,
 * by less than a chunk: a last put wakes the worker lazily, not at once
 * (emptying a chunk is the only way to give that memory back).
 */
PAMT_TEST(arena_put_wakes_worker_lazily_within_a_chunk_of_cap)
{
	struct pamt_env_opts o = { .mag_size = 8, .idle_cap = 200, .arena = true };

	if (pamt_env_up(&o))
		pamt_sim_fatal("environment", __FILE__, __LINE__);
	ASSERT(!tdx_pamt_get(slot_pfn(1, 0), NULL));
	ASSERT(!tdx_pamt_get(slot_pfn(2, 0), NULL));
	/* Nothing queued before the put (the gets' pairs may have asked). */
	atomic_set(&pamt.deferred, 0);
	atomic_long_set(&pamt_sim_deferred, 0);
	atomic_long_set(&pamt_sim_deferred_lazy, 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(2, 0)), 0);
	EXPECT(stat(TDX_PAMT_STAT_ARENA_FREE) > 200);
	EXPECT(stat(TDX_PAMT_STAT_ARENA_FREE) < 200 + CHUNK_PAIRS);
	EXPECT_EQ(atomic_long_read(&pamt_sim_deferred), 0);
	EXPECT(atomic_long_read(&pamt_sim_deferred_lazy) > 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
}

/* A chunk whose pairs are not all free stays, and keeps its pages. */
PAMT_TEST(arena_chunk_stays_while_a_pair_is_out)
{
	env_arena();
	idle_slots(1, 20);
	ASSERT(!tdx_pamt_get(slot_pfn(30, 0), NULL));
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 1);
	EXPECT_EQ(pamt_sim_pages_in_use(), CHUNK_PAGES);
	EXPECT(pamt_accounting_ok());
	EXPECT_EQ(tdx_pamt_put(slot_pfn(30, 0)), 0);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
}

/*
 * A pair stuck in the module at exit: the chunk is split, its free pairs
 * go back, the stuck pair's two pages stay (the teardown checks both).
 */
PAMT_TEST(arena_exit_splits_a_chunk_with_a_stuck_pair)
{
	env_arena();
	idle_slots(1, 3);
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 0)), 0);
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1, 0);
	EXPECT_EQ(tdx_pamt_evict(slot_pfn(4, 0)), -EIO);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT_EQ(pamt_sim_pages_in_use(), CHUNK_PAGES);
}

/* No free 2M block (injected): one order-1 page per pair. */
PAMT_TEST(arena_fallback_order1)
{
	struct tdx_pamt_pair p[3];
	int i;

	env_arena();
	pamt_sim_fail_set(&pamt_sim_fail_order[9], 0, 0);
	alloc_pairs(p, 3, GFP_KERNEL);
	for (i = 0; i < 3; i++)
		EXPECT(is_order1_pair(&p[i]));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FAIL), 3);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 3);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 6);
	EXPECT(pamt_accounting_ok());
	pamt_sim_fail_set(&pamt_sim_fail_order[9], -1, 0);
	free_pairs(p, 3);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 6);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	/* A chunk again once order 9 works. */
	alloc_pairs(p, 1, GFP_KERNEL);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 1);
	free_pairs(p, 1);
}

/* Fragmented memory: every 2M block holds a TD page. */
PAMT_TEST(arena_fallback_order1_on_fragmented_memory)
{
	struct tdx_pamt_pair p;
	unsigned long s;

	env_arena();
	for (s = 0; s < env.nr_slots; s++) {
		ASSERT(pamt_sim_alloc_pfn(slot_pfn(s, 100)));
		env.held_pages++;
	}
	EXPECT_EQ(pamt_sim_free_blocks(9), 0);
	alloc_pairs(&p, 1, GFP_KERNEL);
	EXPECT(is_order1_pair(&p));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FAIL), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 1);
	free_pairs(&p, 1);
	for (s = 0; s < env.nr_slots; s++) {
		__free_page(pfn_to_page(slot_pfn(s, 100)));
		env.held_pages--;
	}
}

/* Neither order 9 nor order 1: two order-0 pages; then nothing at all. */
PAMT_TEST(arena_fallback_order0_then_enomem)
{
	struct tdx_pamt_pair p;
	u64 alloc, freed;

	env_arena();
	pamt_sim_fail_set(&pamt_sim_fail_order[9], 0, 0);
	pamt_sim_fail_set(&pamt_sim_fail_order[1], 0, 0);
	alloc_pairs(&p, 1, GFP_KERNEL);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER0), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2);
	EXPECT(pamt_accounting_ok());
	free_pairs(&p, 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 2);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);

	/* The second order-0 page fails: nothing kept, nothing lost. */
	pamt_sim_fail_set(&pamt_sim_fail_order[0], 1, 0);
	EXPECT_EQ(pamt_pair_alloc(&p, GFP_KERNEL), -ENOMEM);
	alloc = stat(TDX_PAMT_STAT_PAGE_ALLOC);
	freed = stat(TDX_PAMT_STAT_PAGE_FREE);
	EXPECT_EQ(alloc - freed, 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	/* And a get answers -ENOMEM with the slot untouched. */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 0), NULL), -ENOMEM);
	EXPECT_EQ(slot_word(3), 0);
	pamt_sim_fail_set(&pamt_sim_fail_order[0], -1, 0);
	pamt_sim_fail_set(&pamt_sim_fail_order[1], -1, 0);
	pamt_sim_fail_set(&pamt_sim_fail_order[9], -1, 0);
}

/* No memory for the chunk's descriptor: the 2M block goes back at once. */
PAMT_TEST(arena_chunk_descriptor_failure_falls_back)
{
	struct tdx_pamt_pair p;
	unsigned long blocks;

	env_arena();
	blocks = pamt_sim_free_blocks(9);
	pamt_sim_fail_set(&pamt_sim_fail_kmalloc, 0, 0);
	alloc_pairs(&p, 1, GFP_KERNEL);
	pamt_sim_fail_set(&pamt_sim_fail_kmalloc, -1, 0);
	EXPECT(is_order1_pair(&p));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FAIL), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2);
	EXPECT(pamt_sim_free_blocks(9) >= blocks - 1);
	free_pairs(&p, 1);
	EXPECT_EQ(pamt_sim_free_blocks(9), blocks);
}

/*
 * Atomic context (a gfp that may not reclaim, under a caller's spinlock):
 * a free 2M block is still taken, without sleeping; none free, order 1.
 */
PAMT_TEST(arena_atomic_takes_a_free_block_or_falls_back)
{
	struct tdx_pamt_pair p[2];
	unsigned long s;

	env_arena();
	pamt_sim_enter_atomic();
	alloc_pairs(&p[0], 1, GFP_NOWAIT);
	pamt_sim_exit_atomic();
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 1);
	free_pairs(&p[0], 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);

	for (s = 0; s < env.nr_slots; s++) {
		ASSERT(pamt_sim_alloc_pfn(slot_pfn(s, 7)));
		env.held_pages++;
	}
	pamt_sim_enter_atomic();
	alloc_pairs(&p[0], 1, GFP_ATOMIC);
	alloc_pairs(&p[1], 1, GFP_NOWAIT);
	free_pairs(p, 2);
	pamt_sim_exit_atomic();
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FAIL), 2);
	for (s = 0; s < env.nr_slots; s++) {
		__free_page(pfn_to_page(slot_pfn(s, 7)));
		env.held_pages--;
	}
}

/* A pair freed twice, or one that is no pair: a warning, no change. */
PAMT_TEST(arena_bad_free_warns_and_changes_nothing)
{
	struct tdx_pamt_pair p[2], bad;

	env_arena();
	alloc_pairs(p, 2, GFP_KERNEL);
	free_pairs(&p[0], 1);
	pamt_pair_free(&p[0]);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 1);
	bad.pfn[0] = p[1].pfn[0];
	bad.pfn[1] = p[1].pfn[0] + 3;
	pamt_pair_free(&bad);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 1);
	EXPECT_EQ(pamt_arena_check(), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	env.expect_warnings = 2;
	free_pairs(&p[1], 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
}

/* The arena lock counts as a global lock; an empty arena skips it. */
PAMT_TEST(arena_lock_counts_as_global)
{
	struct tdx_pamt_pair p[2];

	env_arena();
	alloc_pairs(&p[0], 1, GFP_KERNEL);	/* empty: no lock to take; grow */
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 1);
	alloc_pairs(&p[1], 1, GFP_KERNEL);	/* from the chunk */
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 2);
	free_pairs(p, 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 4);
}

/* The whole cache on the arena: gets, puts, reserves, identities. */
PAMT_TEST(arena_serves_the_cache)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	int i;

	env_arena();
	ASSERT(!__tdx_topup_pamt_cache(&res, TDX_PAMT_CACHE_MAX, GFP_KERNEL_ACCOUNT));
	env.held_pairs += res.nr;
	for (i = 0; i < 60; i++)
		EXPECT_EQ(tdx_pamt_get(slot_pfn(i, 1), i % 2 ? &res : NULL), 0);
	env.held_pairs = res.nr;
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 1);
	EXPECT(pamt_accounting_ok());
	for (i = 0; i < 60; i++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(i, 1)), 0);
	tdx_free_pamt_cache(&res);
	env.held_pairs = 0;
	EXPECT(pamt_accounting_ok());
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/* CPUs allocating and freeing at once: the arena stays sound. */
#define ARENA_THREADS	4
#define ARENA_ROUNDS	2000

static void *arena_thread(void *arg)
{
	unsigned int cpu = (unsigned long)arg, i, n = 0;
	struct tdx_pamt_pair p[32];

	pamt_sim_set_cpu(cpu);
	for (i = 0; i < ARENA_ROUNDS; i++) {
		if (n < 32 && (n == 0 || get_random_u32_below(2))) {
			if (!pamt_pair_alloc(&p[n], i % 3 ? GFP_KERNEL : GFP_NOWAIT))
				n++;
		} else if (n) {
			pamt_pair_free(&p[--n]);
		}
	}
	while (n)
		pamt_pair_free(&p[--n]);
	return NULL;
}

PAMT_TEST(arena_concurrent_alloc_free)
{
	pthread_t t[ARENA_THREADS];
	unsigned long i;

	env_arena();
	pamt_sim_fail_set(&pamt_sim_fail_order[9], -1, 200000);
	for (i = 0; i < ARENA_THREADS; i++)
		pthread_create(&t[i], NULL, arena_thread, (void *)i);
	for (i = 0; i < ARENA_THREADS; i++)
		pthread_join(t[i], NULL);
	pamt_sim_fail_set(&pamt_sim_fail_order[9], -1, 0);
	EXPECT_EQ(pamt_arena_check(), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), stat(TDX_PAMT_STAT_CHUNK_FREE));
	EXPECT(stat(TDX_PAMT_STAT_PAIR_ORDER1) > 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/* A top-up takes what it lacks from the arena under one hold of its lock. */
PAMT_TEST(arena_topup_takes_the_lock_once)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	struct tdx_pamt_pair p;
	u64 locks;
	int i;

	env_arena();
	alloc_pairs(&p, 1, GFP_KERNEL);		/* the chunk */
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	ASSERT(!__tdx_topup_pamt_cache(&res, TDX_PAMT_CACHE_MAX, GFP_KERNEL));
	env.held_pairs += res.nr;
	EXPECT_EQ(res.nr, TDX_PAMT_CACHE_MAX);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1);
	for (i = 0; i < TDX_PAMT_CACHE_MAX; i++)
		EXPECT_EQ(chunk_of(res.pairs[i].pfn[0]), chunk_of(p.pfn[0]));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 1);
	EXPECT(pamt_accounting_ok());
	free_pairs(&p, 1);
	env.held_pairs -= res.nr;
	tdx_free_pamt_cache(&res);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
}

/* Only what the chunks have in one go; then a new chunk for the rest. */
PAMT_TEST(arena_topup_across_a_new_chunk)
{
	static struct tdx_pamt_pair p[CHUNK_PAIRS - 3];
	struct tdx_pamt_cache res = { .nr = 0 };

	env_arena();
	alloc_pairs(p, CHUNK_PAIRS - 3, GFP_KERNEL);
	ASSERT(!__tdx_topup_pamt_cache(&res, TDX_PAMT_CACHE_MAX, GFP_KERNEL));
	env.held_pairs += res.nr;
	EXPECT_EQ(res.nr, TDX_PAMT_CACHE_MAX);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 2);
	/* 5 for the reserve, a magazine and a half (4 + 2) for the CPU. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 6);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 11);
	EXPECT(pamt_accounting_ok());
	free_pairs(p, CHUNK_PAIRS - 3);
	env.held_pairs -= res.nr;
	tdx_free_pamt_cache(&res);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/*
 * A batch of pairs, chunk and fallback mixed, goes back with one hold of
 * the arena lock per 64 chunk pairs; the fallbacks' pages go back too.
 */
PAMT_TEST(arena_bulk_free_one_lock_per_batch)
{
	static struct tdx_pamt_pair p[CHUNK_PAIRS + 10];
	u64 locks;

	env_arena();
	alloc_pairs(p, CHUNK_PAIRS, GFP_KERNEL);	/* one full chunk */
	pamt_sim_fail_set(&pamt_sim_fail_order[9], 0, 0);
	alloc_pairs(&p[CHUNK_PAIRS], 5, GFP_KERNEL);		/* order 1 */
	pamt_sim_fail_set(&pamt_sim_fail_order[1], 0, 0);
	alloc_pairs(&p[CHUNK_PAIRS + 5], 5, GFP_KERNEL);	/* order 0 */
	pamt_sim_fail_set(&pamt_sim_fail_order[1], -1, 0);
	pamt_sim_fail_set(&pamt_sim_fail_order[9], -1, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 5);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER0), 5);
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	/* 40 chunk pairs and the 10 others: one hold. */
	pamt_pair_free_bulk(&p[CHUNK_PAIRS - 40], 50);
	env.held_pairs -= 50;
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 20);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT(pamt_accounting_ok());		/* takes the lock too */
	/* 216 chunk pairs: four holds of 64 at most; the chunk goes back. */
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	pamt_pair_free_bulk(p, CHUNK_PAIRS - 40);
	env.held_pairs -= CHUNK_PAIRS - 40;
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 4);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/*
 * A top-up that goes to the arena fills this CPU's magazine too (to three
 * quarters), under the same hold of the
 * lock, so that the next top-ups find their pairs there; only up to the
 * idle cap.
 */
PAMT_TEST(arena_topup_fills_a_magazine)
{
	struct pamt_env_opts o = {
		.mag_size = 32,
		.idle_cap = 100000, .arena = true,
	};
	struct tdx_pamt_cache res = { .nr = 0 };
	struct tdx_pamt_pair p;
	u64 locks;
	int i;

	ASSERT(!pamt_env_up(&o));
	alloc_pairs(&p, 1, GFP_KERNEL);		/* the chunk */
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	ASSERT(!__tdx_topup_pamt_cache(&res, 1, GFP_KERNEL));
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 16 + 8);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 2 - 24);
	/* Top-ups and frees now meet the magazines: no lock at all. */
	for (i = 0; i < 15; i++) {
		tdx_free_pamt_cache(&res);
		ASSERT(!__tdx_topup_pamt_cache(&res, 1, GFP_KERNEL));
	}
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1);
	env.held_pairs += res.nr;
	EXPECT(pamt_accounting_ok());
	env.held_pairs -= res.nr;
	tdx_free_pamt_cache(&res);
	free_pairs(&p, 1);

	/*
	 * Near the idle cap: the magazines get this CPU's share of the room
	 * it leaves, not all of it, or this CPU's stock would push the slots
	 * going idle elsewhere over the cap.
	 */
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	alloc_pairs(&p, 1, GFP_KERNEL);
	ASSERT(nr_cpu_ids > 1);
	set_idle_cap(4 * nr_cpu_ids);
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	ASSERT(!__tdx_topup_pamt_cache(&res, 2, GFP_KERNEL));
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 4);
	EXPECT(!pamt_shrink_over_cap(0));
	env.held_pairs += res.nr;
	EXPECT(pamt_accounting_ok());
	env.held_pairs -= res.nr;
	tdx_free_pamt_cache(&res);
	free_pairs(&p, 1);
}

/*
 * Gets without a reserve that miss the magazines (GFP_NOWAIT) take the
 * arena lock once per refill of this CPU's magazine, not once per
 * pair; a new chunk costs no hold of its own: it is carved and linked in
 * the hold that serves the refill.
 */
PAMT_TEST(arena_get_miss_refills_magazines)
{
	struct pamt_env_opts o = {
		.mag_size = 32,
		.idle_cap = 100000, .arena = true, .nr_slots = 256,
	};
	u64 locks;
	int i;

	ASSERT(!pamt_env_up(&o));
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	/*
	 * The first miss: a new chunk, 1 pair out, 16 + 8 in the magazines.
	 * Each install also files its slot on the root memcg's list, which
	 * every VM without a memcg of its own shares: one more lock per get.
	 */
	ASSERT(!tdx_pamt_get(slot_pfn(0, 0), NULL));
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1 + 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 24);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_FREE), CHUNK_PAIRS - 25);
	/* 24 more gets: all from the magazines, no arena lock. */
	for (i = 1; i < 25; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1 + 25);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	/* 25 x 7 more gets: one hold per 25 pairs, not one per pair. */
	for (; i < 25 * 8; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 8 + 25 * 8);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT(pamt_accounting_ok());
	for (i = 0; i < 25 * 8; i++)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/*
 * A refill stops at this CPU's share of the room below the idle cap, and
 * stocks nothing at the cap; the caller gets its pairs always.
 */
PAMT_TEST(arena_refill_respects_idle_cap)
{
	struct pamt_env_opts o = {
		.mag_size = 32,
		.idle_cap = 100000, .arena = true,
	};
	struct tdx_pamt_pair p[3];

	ASSERT(!pamt_env_up(&o));
	ASSERT(nr_cpu_ids > 1);
	set_idle_cap(5 * nr_cpu_ids);
	EXPECT_EQ(pamt_pair_alloc_bulk(p, 1, GFP_KERNEL), 1);
	env.held_pairs++;
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 5);
	EXPECT(pamt_accounting_ok());
	/* At the cap: two pairs for the caller, none for the magazines. */
	set_idle_cap(5);
	EXPECT_EQ(pamt_pair_alloc_bulk(&p[1], 2, GFP_NOWAIT), 2);
	env.held_pairs += 2;
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 5);
	EXPECT(!pamt_shrink_over_cap(0));
	EXPECT(pamt_accounting_ok());
	free_pairs(p, 3);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/*
 * A refill reserves its room below the idle cap before it carves, so two
 * CPUs refilling at once cannot both fill the same room: the cap's slack
 * stays what the Documentation states.
 */
PAMT_TEST(arena_refill_reserves_cap_room)
{
	struct pamt_env_opts o = {
		.mag_size = 32,
		.idle_cap = 5, .arena = true,
	};

	ASSERT(!pamt_env_up(&o));
	EXPECT_EQ(pamt_shrink_reserve(128), 5);
	/* A second refill meanwhile finds no room left. */
	EXPECT_EQ(pamt_shrink_reserve(128), 0);
	EXPECT(!pamt_shrink_over_cap(0));
	pamt_shrink_unreserve(2);
	EXPECT_EQ(pamt_shrink_reserve(1), 1);
	EXPECT_EQ(pamt_shrink_reserve(128), 1);
	pamt_shrink_unreserve(5);
	EXPECT_EQ(pamt_shrink_reserve(128), 5);
	pamt_shrink_unreserve(5);
	EXPECT_EQ(pamt_shrink_reserve(0), 0);
}

/* Reclaim, chunk by chunk: 2,048 ranges, eight chunks of pairs. */
#define WIDE_SLOTS	2048

static void env_arena_wide(void)
{
	struct pamt_env_opts o = {
		.mag_size = 8,
		.idle_cap = 100000, .arena = true, .nr_slots = WIDE_SLOTS,
		.mem_slots = 64,
	};

	if (pamt_env_up(&o))
		pamt_sim_fatal("environment", __FILE__, __LINE__);
}

/*
 * The kernel's batches of 128 while the shrinker counts something, until
 * 64 calls in a row free nothing.
 */
static unsigned long shrink_to_exhaustion(void)
{
	unsigned long total = 0, got, scanned;
	int idle = 0, rounds = 0;

	while (tdx_pamt_shrink_count() && idle < 64 && rounds++ < 10000) {
		got = tdx_pamt_shrink_scan(128, &scanned);
		idle = got ? 0 : idle + 1;
		total += got;
	}
	return total;
}

/*
 * Every other range idle: each chunk holds pairs in use, so no REMOVE
 * gives memory back.  The shrinker says what went back to the page
 * allocator (pairs' worth: two pages each), and issues no REMOVE.
 */
PAMT_TEST(arena_shrink_returns_pages_given_back)
{
	unsigned long before, freed, i;
	u64 removes;

	env_arena_wide();
	for (i = 0; i < WIDE_SLOTS; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	for (i = 0; i < WIDE_SLOTS; i += 2)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	before = pamt_sim_pages_in_use();
	removes = stat(TDX_PAMT_STAT_REMOVE);
	freed = shrink_to_exhaustion();
	EXPECT_EQ(2 * freed, before - pamt_sim_pages_in_use());
	EXPECT_EQ(stat(TDX_PAMT_STAT_REMOVE), removes);
	EXPECT(stat(TDX_PAMT_STAT_ARENA_CHUNKS) >= WIDE_SLOTS / 2 / CHUNK_PAIRS);
	EXPECT(pamt_accounting_ok());
	for (i = 1; i < WIDE_SLOTS; i += 2)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
}

/* The second half idle: whole chunks go back, and the return says so. */
PAMT_TEST(arena_shrink_gives_back_idle_chunks)
{
	unsigned long before, freed, i;

	env_arena_wide();
	for (i = 0; i < WIDE_SLOTS; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	for (i = WIDE_SLOTS / 2; i < WIDE_SLOTS; i++)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	before = pamt_sim_pages_in_use();
	EXPECT(tdx_pamt_shrink_count() >= 3 * CHUNK_PAIRS);
	freed = shrink_to_exhaustion();
	EXPECT_EQ(2 * freed, before - pamt_sim_pages_in_use());
	EXPECT(freed >= 3 * CHUNK_PAIRS);
	/* What is left: the chunks of the ranges in use, one shared. */
	EXPECT(stat(TDX_PAMT_STAT_ARENA_CHUNKS) <= WIDE_SLOTS / 2 / CHUNK_PAIRS + 1);
	EXPECT_EQ(tdx_pamt_shrink_count(), 0);
	EXPECT(pamt_accounting_ok());
	for (i = 0; i < WIDE_SLOTS / 2; i++)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
}

/*
 * Two chunks, every pair idle, the full one's slots the oldest in the
 * idle index: one small scan empties the sparse chunk, not the oldest
 * slots.
 */
PAMT_TEST(arena_shrink_empties_the_sparsest_chunk_first)
{
	unsigned long scanned;
	u64 chunk0;
	int i;

	env_arena_wide();
	for (i = 0; i < 300; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	chunk0 = chunk_of(pamt_fake.ranges[0].pair.pfn[0]);
	EXPECT(chunk_of(pamt_fake.ranges[299].pair.pfn[0]) != chunk0);
	for (i = 0; i < 300; i++)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 2);
	EXPECT_EQ(tdx_pamt_shrink_scan(1, &scanned), CHUNK_PAIRS);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT(stat(TDX_PAMT_STAT_SHRINK) < 100);
	/* The full chunk stays, its oldest slot still installed. */
	EXPECT_EQ(chunk_of(pamt_fake.ranges[0].pair.pfn[0]), chunk0);
	EXPECT(slot_word(0) & PAMT_SLOT_INSTALLED);
	EXPECT(pamt_accounting_ok());
}

/*
 * Eight CPUs miss on an empty arena at once, all allocating a chunk
 * (staged: each waits in the order-9 allocation for the others): the
 * first chunk linked serves them all, the others go back.  Half take one
 * pair, half top up a reserve, which also refills their magazines.
 */
#define WAVE_CPUS	8

static pthread_barrier_t wave_barrier;
static struct tdx_pamt_pair wave_pair[WAVE_CPUS];
static struct tdx_pamt_cache wave_res[WAVE_CPUS];

static void wave_hook(unsigned int order)
{
	if (order == 9)
		pthread_barrier_wait(&wave_barrier);
}

static void *wave_thread(void *arg)
{
	unsigned long cpu = (unsigned long)arg;

	pamt_sim_set_cpu(cpu);
	if (cpu % 2)
		EXPECT_EQ(__tdx_topup_pamt_cache(&wave_res[cpu], 2, GFP_KERNEL), 0);
	else
		EXPECT_EQ(pamt_pair_alloc(&wave_pair[cpu], GFP_KERNEL), 0);
	return NULL;
}

PAMT_TEST(arena_miss_wave_links_one_chunk)
{
	struct pamt_env_opts o = {
		.mag_size = 8,
		.idle_cap = 100000, .arena = true, .nr_cpus = WAVE_CPUS,
	};
	pthread_t t[WAVE_CPUS];
	unsigned long i;

	if (pamt_env_up(&o))
		pamt_sim_fatal("environment", __FILE__, __LINE__);
	pthread_barrier_init(&wave_barrier, NULL, WAVE_CPUS);
	__atomic_store_n(&pamt_sim_alloc_hook, wave_hook, __ATOMIC_RELEASE);
	for (i = 0; i < WAVE_CPUS; i++)
		pthread_create(&t[i], NULL, wave_thread, (void *)i);
	for (i = 0; i < WAVE_CPUS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&pamt_sim_alloc_hook, NULL, __ATOMIC_RELEASE);
	pthread_barrier_destroy(&wave_barrier);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), WAVE_CPUS);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_FREE), WAVE_CPUS - 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1) + stat(TDX_PAMT_STAT_PAIR_ORDER0), 0);
	EXPECT_EQ(pamt_arena_check(), 0);
	for (i = 0; i < WAVE_CPUS; i++) {
		pamt_sim_set_cpu(i);
		if (i % 2) {
			EXPECT_EQ(wave_res[i].nr, 2);
			tdx_free_pamt_cache(&wave_res[i]);
		} else {
			pamt_pair_free(&wave_pair[i]);
		}
	}
	pamt_sim_set_cpu(0);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/*
 * Two processes (two mms: two VMs) fault in turn on one CPU, topping up
 * their reserves: each carves from a home chunk of its own, so when the
 * first one's ranges all go idle the shrinker gives its chunk back while
 * the second one's stays.
 */
PAMT_TEST(arena_home_keeps_processes_apart)
{
	static int vm[2];
	struct tdx_pamt_cache res[2] = { { .nr = 0 }, { .nr = 0 } };
	unsigned long scanned;
	int i, p;

	env_arena_wide();
	for (i = 0; i < 200; i++) {
		p = i % 2;
		current->mm = (struct mm_struct *)&vm[p];
		ASSERT(!__tdx_topup_pamt_cache(&res[p], 1, GFP_KERNEL));
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), &res[p]));
	}
	current->mm = NULL;
	for (i = 2; i < 200; i++)
		EXPECT_EQ(chunk_of(pamt_fake.ranges[i].pair.pfn[0]),
			  chunk_of(pamt_fake.ranges[i % 2].pair.pfn[0]));
	EXPECT(chunk_of(pamt_fake.ranges[0].pair.pfn[0]) !=
	       chunk_of(pamt_fake.ranges[1].pair.pfn[0]));
	for (p = 0; p < 2; p++)
		tdx_free_pamt_cache(&res[p]);
	for (i = 0; i < 200; i += 2)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	EXPECT_EQ(tdx_pamt_shrink_scan(128, &scanned), CHUNK_PAIRS);
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT(slot_word(1) & PAMT_SLOT_INSTALLED);
	EXPECT_EQ(pamt_arena_check(), 0);
	for (i = 1; i < 200; i += 2)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
}

/*
 * A reclaim walk goes past the chunks it looked at: they wait at the tail
 * of their bucket, and a marked head ends the bucket.  A chunk the walk
 * looked at that another CPU's carve moves to a new bucket comes back
 * unmarked, or it would hide the chunks behind it.  Chunks: "idle" (every
 * pair in an IDLE slot, no free pair), "held" (pairs out in no slot, 56
 * free) and "sparse" (250 pairs in IDLE slots).  The walk looks at held,
 * takes sparse; while it empties sparse, a carve moves held to idle's
 * bucket.  Both idle chunks go back.
 */
static struct tdx_pamt_pair walk_held[CHUNK_PAIRS];
static int walk_nheld, walk_carve;
static struct tdx_pamt_ops walk_ops;

static void walk_reset_and_carve(unsigned long pfn)
{
	pamt_env_ops.reset_page(pfn);
	alloc_pairs(walk_held + walk_nheld, walk_carve, GFP_NOWAIT);
	walk_nheld += walk_carve;
	walk_carve = 0;
}

PAMT_TEST(arena_walk_sees_chunks_behind_a_relinked_one)
{
	struct pamt_env_opts o = {
		.mag_size = 1, .idle_cap = 100000, .arena = true,
		.nr_slots = WIDE_SLOTS, .mem_slots = 64,
	};
	unsigned long scanned;
	int i;

	ASSERT(!pamt_env_up(&o));	/* no refill: chunks fill in order */
	for (i = 0; i < CHUNK_PAIRS; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	alloc_pairs(walk_held, CHUNK_PAIRS, GFP_KERNEL);
	for (i = CHUNK_PAIRS; i < 2 * CHUNK_PAIRS - 6; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	for (i = 0; i < 2 * CHUNK_PAIRS - 6; i++)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	free_pairs(walk_held + CHUNK_PAIRS - 56, 56);
	walk_nheld = CHUNK_PAIRS - 56;
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 3);

	walk_ops = pamt_env_ops;
	walk_ops.reset_page = walk_reset_and_carve;
	pamt.ops = &walk_ops;
	walk_carve = 56;
	EXPECT_EQ(tdx_pamt_shrink_scan(2 * CHUNK_PAIRS, &scanned),
		  2 * CHUNK_PAIRS);
	pamt.ops = &pamt_env_ops;
	EXPECT_EQ(walk_carve, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CHUNK_ALLOC), 3);	/* carved from held */
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 1);
	EXPECT_EQ(tdx_pamt_shrink_count(), 0);
	EXPECT_EQ(pamt_arena_check(), 0);
	free_pairs(walk_held, walk_nheld);
}

/*
 * Fallback pairs (no free 2M block at the time) are the only pairs an
 * idle slot gives back alone: the shrinker REMOVEs them, and leaves the
 * idle slots whose pairs sit in chunks with pairs in use, since their
 * REMOVEs would give nothing back.  Its count is an upper bound: idle
 * memory, a chunk's idle pairs included.  A pair in use is not counted.
 */
PAMT_TEST(arena_shrink_removes_idle_fallback_pairs_alone)
{
	unsigned long before, i, idle;
	struct pamt_reclaim r;
	u64 removes;
	int a;

	env_arena_wide();
	pamt_sim_fail_set(&pamt_sim_fail_order[9], 0, 0);
	ASSERT(!tdx_pamt_get(slot_pfn(WIDE_SLOTS - 1, 0), NULL));
	ASSERT(!tdx_pamt_get(slot_pfn(WIDE_SLOTS - 2, 0), NULL));
	pamt_sim_fail_set(&pamt_sim_fail_order[9], -1, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAIR_ORDER1), 2);
	for (i = 0; i < WIDE_SLOTS - 2; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	idle = tdx_pamt_shrink_count();
	for (i = 0; i < WIDE_SLOTS - 2; i += 2)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	EXPECT_EQ(tdx_pamt_shrink_count(), idle + (WIDE_SLOTS - 2) / 2);
	idle = tdx_pamt_shrink_count();
	ASSERT(!tdx_pamt_put(slot_pfn(WIDE_SLOTS - 2, 0)));
	EXPECT_EQ(tdx_pamt_shrink_count(), idle + 1);

	before = pamt_sim_pages_in_use();
	removes = stat(TDX_PAMT_STAT_REMOVE);
	pamt_reclaim_init(&r, pamt.shrinker);
	for (a = 0; a < 64; a++)
		pamt_direct_reclaim(&r);
	EXPECT_EQ(stat(TDX_PAMT_STAT_REMOVE), removes + 1);
	EXPECT_EQ(slot_word(WIDE_SLOTS - 2), 0);
	EXPECT_EQ(before - pamt_sim_pages_in_use(), 2);
	EXPECT_EQ(tdx_pamt_shrink_count(), idle);
	EXPECT(slot_word(WIDE_SLOTS - 1) & PAMT_SLOT_INSTALLED);
	EXPECT(pamt_accounting_ok());
	for (i = 1; i < WIDE_SLOTS - 2; i += 2)
		ASSERT(!tdx_pamt_put(slot_pfn(i, 0)));
	ASSERT(!tdx_pamt_put(slot_pfn(WIDE_SLOTS - 1, 0)));
}

/*
 * With the arena, the shrinker's count takes no lock and sees every
 * chunk.  It walked at most 64 chunks, one arena lock hold each, and so
 * counted 16,384 of the 25,600 idle pairs of 100 chunks.
 */
PAMT_TEST(arena_count_takes_no_lock_and_sees_every_chunk)
{
	const unsigned long n = 100 * CHUNK_PAIRS;
	struct pamt_env_opts o = {
		.mag_size = 8, .idle_cap = 1UL << 30, .arena = true,
		.nr_slots = n, .mem_slots = 160,
	};
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	unsigned long s, count;
	u64 locks;

	ASSERT(!pamt_env_up(&o));
	for (s = 0; s < n; s++)
		ASSERT(!tdx_pamt_get(slot_pfn(s, 0), NULL));
	for (s = 0; s < n; s++)
		ASSERT(!tdx_pamt_put(slot_pfn(s, 0)));
	EXPECT(stat(TDX_PAMT_STAT_ARENA_CHUNKS) >= 100);
	locks = stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	count = pamt.shrinker->count_objects(pamt.shrinker, &sc);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks);
	EXPECT(count >= n);
	EXPECT_EQ(tdx_pamt_shrink_count(), count);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0);
}
