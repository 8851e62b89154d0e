// SPDX-License-Identifier: GPL-2.0
/*
 * The shim's page allocator: a buddy allocator over the simulated memory
 * (orders 0 to 9, split on demand, LIFO reuse, merge back to 2M, grouping
 * by migratetype), its accounting and its failure injection.  The
 * benchmark's shared memory relies on each behaviour pinned here.
 */
#include <signal.h>
#include "../harness.h"

#define ORDER_2M	PAMT_SIM_MAX_ORDER
#define PAGES_2M	BIT(ORDER_2M)

/* The environment's memory: 64 wholly free 2M blocks, nothing in use. */
static void env_mem(void)
{
	pamt_env_up_default();
}

static unsigned long pfn_of(struct page *p)
{
	return page_to_pfn(p);
}

PAMT_TEST(alloc_fresh_hands_out_ascending_pages)
{
	struct page *p[4];
	int i;

	env_mem();
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
	for (i = 0; i < 4; i++) {
		p[i] = alloc_page(GFP_KERNEL);
		ASSERT(p[i]);
		EXPECT_EQ(pfn_of(p[i]), env.base_pfn + i);
	}
	EXPECT_EQ(pamt_sim_pages_in_use(), 4);
	/* The first 2M block was split; the others are whole. */
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 63);
	for (i = 3; i >= 0; i--)
		__free_page(p[i]);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	/* And merged back. */
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
	EXPECT_EQ(pamt_sim_free_blocks(0), 0);
}

PAMT_TEST(alloc_high_order_is_aligned_and_whole)
{
	struct page *p, *q;
	unsigned long pfn, i;

	env_mem();
	p = alloc_pages(GFP_KERNEL, ORDER_2M);
	ASSERT(p);
	pfn = pfn_of(p);
	EXPECT(IS_ALIGNED(pfn, PAGES_2M));
	EXPECT_EQ(pamt_sim_pages_in_use(), PAGES_2M);
	/* Every page of the block is allocated and maps back and forth. */
	for (i = 0; i < PAGES_2M; i++) {
		EXPECT(pamt_sim_pfn_allocated(pfn + i));
		EXPECT(pfn_to_page(pfn + i) == nth_page(p, i));
		EXPECT_EQ(page_to_pfn(nth_page(p, i)), pfn + i);
	}
	EXPECT(!pamt_sim_pfn_allocated(pfn + PAGES_2M));

	q = alloc_pages(GFP_KERNEL, 1);
	ASSERT(q);
	EXPECT(IS_ALIGNED(pfn_of(q), 2));
	EXPECT_EQ(pamt_sim_pages_in_use(), PAGES_2M + 2);
	__free_pages(q, 1);
	__free_pages(p, ORDER_2M);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
}

PAMT_TEST(alloc_free_is_reused_first)
{
	struct page *a, *b, *c;
	unsigned long pfn;

	env_mem();
	a = alloc_page(GFP_KERNEL);
	b = alloc_page(GFP_KERNEL);
	ASSERT(a && b);
	pfn = pfn_of(a);
	__free_page(a);
	c = alloc_page(GFP_KERNEL);
	ASSERT(c);
	EXPECT_EQ(pfn_of(c), pfn);

	/* A freed 2M block is the next 2M block out, not the lowest. */
	a = alloc_pages(GFP_KERNEL, ORDER_2M);
	b = alloc_pages(GFP_KERNEL, ORDER_2M);
	ASSERT(a && b);
	EXPECT(pfn_of(b) > pfn_of(a));
	pfn = pfn_of(b);
	__free_pages(b, ORDER_2M);
	b = alloc_pages(GFP_KERNEL, ORDER_2M);
	ASSERT(b);
	EXPECT_EQ(pfn_of(b), pfn);

	__free_pages(b, ORDER_2M);
	__free_pages(a, ORDER_2M);
	__free_page(c);
	__free_page(pfn_to_page(env.base_pfn + 1));
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
}

/* One page in every 2M block: plenty of pages, no 2M block. */
PAMT_TEST(alloc_fragmented_memory_has_no_2m_block)
{
	unsigned long s;
	struct page *p, *q, *half;

	env_mem();
	for (s = 0; s < env.nr_slots; s++)
		ASSERT(pamt_sim_alloc_pfn(slot_pfn(s, 100 + s)));
	env.held_pages = env.nr_slots;
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 0);
	EXPECT(!alloc_pages(GFP_KERNEL, ORDER_2M));
	/* The upper halves are whole. */
	half = alloc_pages(GFP_KERNEL, ORDER_2M - 1);
	ASSERT(half);
	EXPECT_EQ(pfn_of(half) % PAGES_2M, PAGES_2M / 2);
	p = alloc_page(GFP_KERNEL);
	ASSERT(p);
	/* Freeing the one page of slot 5 makes its block whole again. */
	__free_page(pfn_to_page(slot_pfn(5, 105)));
	env.held_pages--;
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 1);
	q = alloc_pages(GFP_KERNEL, ORDER_2M);
	ASSERT(q);
	EXPECT_EQ(pfn_of(q), slot_pfn(5, 0));
	__free_pages(q, ORDER_2M);
	__free_page(p);
	__free_pages(half, ORDER_2M - 1);
	EXPECT_EQ(pamt_sim_pages_in_use(), env.nr_slots - 1);
}

PAMT_TEST(alloc_pfn_splits_its_block_and_merges_back)
{
	struct page *p;

	env_mem();
	ASSERT(pamt_sim_alloc_pfn(slot_pfn(2, 301)));
	EXPECT(!pamt_sim_alloc_pfn(slot_pfn(2, 301)));
	EXPECT_EQ(pamt_sim_pages_in_use(), 1);
	EXPECT(!pamt_sim_pfn_allocated(slot_pfn(2, 300)));
	EXPECT(!pamt_sim_pfn_allocated(slot_pfn(2, 302)));
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 63);
	/* The rest of the block is still there, split into 9 buddies. */
	EXPECT_EQ(pamt_sim_free_blocks(0) + pamt_sim_free_blocks(1) +
		  pamt_sim_free_blocks(8), 3);
	/* A neighbour in the same block can be taken too. */
	p = pamt_sim_alloc_pfn(slot_pfn(2, 300));
	ASSERT(p);
	__free_page(p);
	__free_page(pfn_to_page(slot_pfn(2, 301)));
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

PAMT_TEST(alloc_split_page_frees_page_by_page)
{
	struct page *p;
	unsigned long pfn;

	env_mem();
	p = alloc_pages(GFP_KERNEL, 1);
	ASSERT(p);
	pfn = pfn_of(p);
	split_page(p, 1);
	__free_page(pfn_to_page(pfn + 1));
	EXPECT_EQ(pamt_sim_pages_in_use(), 1);
	__free_page(p);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
}

PAMT_TEST(alloc_failure_injection_per_order)
{
	struct page *p, *q;

	env_mem();
	/* Order 9 only. */
	pamt_sim_fail_set(&pamt_sim_fail_order[ORDER_2M], 0, 0);
	EXPECT(!alloc_pages(GFP_KERNEL, ORDER_2M));
	EXPECT_EQ(pamt_sim_fail_order[ORDER_2M].failed, 1);
	p = alloc_pages(GFP_KERNEL, 1);
	ASSERT(p);
	pamt_sim_fail_set(&pamt_sim_fail_order[ORDER_2M], -1, 0);

	/* Order 1 only; order 0 still works. */
	pamt_sim_fail_set(&pamt_sim_fail_order[1], 0, 0);
	EXPECT(!alloc_pages(GFP_KERNEL, 1));
	q = alloc_page(GFP_KERNEL);
	ASSERT(q);
	__free_page(q);
	pamt_sim_fail_set(&pamt_sim_fail_order[1], -1, 0);

	/* pamt_sim_fail_page: every order. */
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);
	EXPECT(!alloc_page(GFP_KERNEL));
	EXPECT(!alloc_pages(GFP_KERNEL, 1));
	EXPECT(!alloc_pages(GFP_KERNEL, ORDER_2M));
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);

	/* Only the opportunistic: __GFP_NORETRY, or no direct reclaim. */
	pamt_sim_fail_set(&pamt_sim_fail_order[ORDER_2M], 0, 0);
	pamt_sim_fail_order[ORDER_2M].noretry_only = true;
	EXPECT(!alloc_pages(GFP_KERNEL | __GFP_NORETRY, ORDER_2M));
	EXPECT(!alloc_pages(GFP_NOWAIT, ORDER_2M));
	q = alloc_pages(GFP_KERNEL, ORDER_2M);
	ASSERT(q);
	__free_pages(q, ORDER_2M);
	/* Only the non-blocking. */
	pamt_sim_fail_set(&pamt_sim_fail_order[ORDER_2M], 0, 0);
	pamt_sim_fail_order[ORDER_2M].nonblocking_only = true;
	EXPECT(!alloc_pages(GFP_NOWAIT | __GFP_NORETRY, ORDER_2M));
	q = alloc_pages(GFP_KERNEL | __GFP_NORETRY, ORDER_2M);
	ASSERT(q);
	__free_pages(q, ORDER_2M);
	pamt_sim_fail_set(&pamt_sim_fail_order[ORDER_2M], -1, 0);

	/* Nothing was taken by a failed call. */
	EXPECT_EQ(pamt_sim_pages_in_use(), 2);
	__free_pages(p, 1);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

/* Memory that ends short of a 2M boundary still hands out every page. */
/*
 * Pages of different migratetypes come from different 2M blocks, however
 * they interleave: what keeps __GFP_RECLAIMABLE pair pages out of guest
 * memory's 2M blocks.  Once a type's blocks are used up it steals, and a
 * block at least half free changes type.
 */
PAMT_TEST(alloc_groups_by_migratetype)
{
	static struct page *u[PAGES_2M + 1], *r[4];
	unsigned long ublk, rblk, i;

	env_mem();
	for (i = 0; i < 4; i++) {
		u[i] = alloc_page(GFP_KERNEL);
		r[i] = alloc_page(GFP_KERNEL | __GFP_RECLAIMABLE);
		ASSERT(u[i] && r[i]);
	}
	ublk = pfn_of(u[0]) / PAGES_2M;
	rblk = pfn_of(r[0]) / PAGES_2M;
	EXPECT(ublk != rblk);
	for (i = 1; i < 4; i++) {
		EXPECT_EQ(pfn_of(u[i]) / PAGES_2M, ublk);
		EXPECT_EQ(pfn_of(r[i]) / PAGES_2M, rblk);
	}
	EXPECT_EQ(pamt_sim_page_mt(r[0]), MIGRATE_RECLAIMABLE);
	EXPECT_EQ(pamt_sim_page_mt(u[0]), MIGRATE_UNMOVABLE);
	/* 62 whole blocks left; the unmovable block fills, then a new one. */
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 62);
	for (i = 4; i < PAGES_2M + 1; i++) {
		u[i] = alloc_page(GFP_KERNEL);
		ASSERT(u[i]);
		EXPECT(pfn_of(u[i]) / PAGES_2M != rblk);
	}
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 61);
	for (i = 0; i < PAGES_2M + 1; i++)
		__free_page(u[i]);
	for (i = 0; i < 4; i++)
		__free_page(r[i]);
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
	/* A whole free 2M block keeps its type until another type claims it. */
	r[0] = alloc_page(GFP_KERNEL | __GFP_RECLAIMABLE);
	ASSERT(r[0]);
	EXPECT_EQ(pfn_of(r[0]) / PAGES_2M, rblk);
	__free_page(r[0]);
}

/* With no block of its type or whole and free, a type steals and claims. */
PAMT_TEST(alloc_steals_and_claims_half_free_blocks)
{
	struct page *big[64], *r, *u, *half;
	unsigned long i;

	env_mem();
	for (i = 0; i < 64; i++) {
		big[i] = alloc_pages(GFP_KERNEL, ORDER_2M);
		ASSERT(big[i]);
	}
	ASSERT(!alloc_page(GFP_KERNEL));
	/* Free half of one unmovable block: a reclaimable page claims it. */
	__free_pages(big[0], ORDER_2M);
	half = alloc_pages(GFP_KERNEL, ORDER_2M - 1);
	ASSERT(half);
	r = alloc_page(GFP_KERNEL | __GFP_RECLAIMABLE);
	ASSERT(r);
	EXPECT_EQ(pamt_sim_page_mt(r), MIGRATE_RECLAIMABLE);
	EXPECT_EQ(pamt_sim_page_mt(half), MIGRATE_RECLAIMABLE);
	/* An unmovable page now steals from it without claiming it back. */
	u = alloc_pages(GFP_KERNEL, ORDER_2M - 2);
	ASSERT(u);
	EXPECT_EQ(pfn_of(u) / PAGES_2M, pfn_of(r) / PAGES_2M);
	EXPECT_EQ(pamt_sim_page_mt(u), MIGRATE_RECLAIMABLE);
	__free_pages(u, ORDER_2M - 2);
	__free_page(r);
	__free_pages(half, ORDER_2M - 1);
	for (i = 1; i < 64; i++)
		__free_pages(big[i], ORDER_2M);
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 64);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}

PAMT_TEST(alloc_ragged_memory_is_all_usable)
{
	unsigned long n = 0, want = 3 * PAGES_2M + 200;
	struct page *p;

	/* No environment: the allocator alone, at an unaligned base. */
	ASSERT(!pamt_sim_mem_init(0x100000UL + 56, want));
	while ((p = alloc_page(GFP_KERNEL)))
		n++;
	EXPECT_EQ(n, want);
	EXPECT_EQ(pamt_sim_pages_in_use(), want);
	EXPECT_EQ(pamt_sim_free_blocks(0), 0);
	pamt_sim_mem_exit();
	ASSERT(!pamt_sim_mem_init(0x100000UL + 56, want));
	/* Two whole aligned 2M blocks fit in there. */
	EXPECT_EQ(pamt_sim_free_blocks(ORDER_2M), 2);
	pamt_sim_mem_exit();
}

static void free_wrong_order(void)
{
	struct page *p;

	pamt_sim_mem_init(0x100000UL, PAGES_2M);
	p = alloc_pages(GFP_KERNEL, 1);
	__free_page(p);
}

static void free_tail_page(void)
{
	struct page *p;

	pamt_sim_mem_init(0x100000UL, PAGES_2M);
	p = alloc_pages(GFP_KERNEL, ORDER_2M);
	__free_page(nth_page(p, 7));
}

static void free_twice(void)
{
	struct page *p;

	pamt_sim_mem_init(0x100000UL, PAGES_2M);
	p = alloc_pages(GFP_KERNEL, 2);
	__free_pages(p, 2);
	__free_pages(p, 2);
}

PAMT_TEST(alloc_bad_frees_abort)
{
	EXPECT_EQ(run_in_child(free_wrong_order), SIGABRT);
	EXPECT_EQ(run_in_child(free_tail_page), SIGABRT);
	EXPECT_EQ(run_in_child(free_twice), SIGABRT);
}
