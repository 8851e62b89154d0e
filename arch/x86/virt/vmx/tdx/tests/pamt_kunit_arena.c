// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the pair arena (pamt_arena.c) on real pages: pairs carved out of
 * order-9 chunks, fullest chunk first, in process context, under a
 * spinlock and from softirq; the order-1 and order-0 fallbacks; a top-up
 * that refills the magazines in the same lock hold.  The common teardown
 * checks that every page is back; pamt_kunit_release.c gives chunks back
 * through the shrinker, a drain and the idle cap.
 */
#include <kunit/static_stub.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "pamt_kunit.h"

#define PK_CHUNK_PAGES	512UL
#define PK_CHUNK_PAIRS	256

static DEFINE_SPINLOCK(pk_arena_lock);

/* BIT(order): the arena's allocations of that order fail. */
static unsigned long pk_fail_orders;

static struct page *pk_arena_alloc_pages(gfp_t gfp, unsigned int order)
{
	return pk_fail_orders & BIT(order) ? NULL : alloc_pages(gfp, order);
}

static unsigned long pk_chunk_of(unsigned long pfn)
{
	return pfn / PK_CHUNK_PAGES;
}

static bool pk_order1_pair(const struct tdx_pamt_pair *p)
{
	return p->pfn[1] == p->pfn[0] + 1 && !(p->pfn[0] % 2);
}

static int pk_arena_alloc(struct kunit *test, struct tdx_pamt_pair *p, int n,
			  gfp_t gfp)
{
	int i;

	for (i = 0; i < n; i++) {
		if (pamt_pair_alloc(&p[i], gfp))
			break;
		atomic_long_inc(&pk(test)->held_pairs);
	}
	return i;
}

static void pk_arena_free(struct kunit *test, struct tdx_pamt_pair *p, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		pamt_pair_free(&p[i]);
		atomic_long_dec(&pk(test)->held_pairs);
	}
}

/* 256 pairs per 2M-aligned chunk; given back once all pairs are. */
static void pk_arena_chunks(struct kunit *test)
{
	struct tdx_pamt_pair *p;
	int i, n;

	p = kunit_kcalloc(test, PK_CHUNK_PAIRS + 1, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	pk_arena_up(test, 0);
	n = pk_arena_alloc(test, p, PK_CHUNK_PAIRS + 1, GFP_KERNEL);
	KUNIT_ASSERT_EQ(test, n, PK_CHUNK_PAIRS + 1);
	/* Order-9 with __GFP_NORETRY may fail on a fragmented machine. */
	if (pk_stat(TDX_PAMT_STAT_CHUNK_FAIL)) {
		pk_arena_free(test, p, n);
		kunit_skip(test, "no free 2M block on this machine");
	}
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CHUNK_ALLOC), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_FREE),
			(u64)PK_CHUNK_PAIRS - 1);
	KUNIT_EXPECT_EQ(test, p[0].pfn[0] % PK_CHUNK_PAGES, 0UL);
	for (i = 0; i < PK_CHUNK_PAIRS; i++) {
		KUNIT_EXPECT_TRUE(test, pk_order1_pair(&p[i]));
		KUNIT_EXPECT_EQ(test, pk_chunk_of(p[i].pfn[0]),
				pk_chunk_of(p[0].pfn[0]));
	}
	KUNIT_EXPECT_NE(test, pk_chunk_of(p[PK_CHUNK_PAIRS].pfn[0]),
			pk_chunk_of(p[0].pfn[0]));
	pk_check_accounting(test, 0);

	pk_arena_free(test, p, PK_CHUNK_PAIRS);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CHUNK_FREE), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE),
			(u64)PK_CHUNK_PAGES);
	pk_arena_free(test, &p[PK_CHUNK_PAIRS], 1);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	pk_check_accounting(test, 0);
}

/* The next pair comes from the chunk with the fewest free pairs. */
static void pk_arena_fullest_first(struct kunit *test)
{
	struct tdx_pamt_pair *p, q[6];
	unsigned long a, b;
	int i, n;

	p = kunit_kcalloc(test, 2 * PK_CHUNK_PAIRS, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	pk_arena_up(test, 0);
	n = pk_arena_alloc(test, p, 2 * PK_CHUNK_PAIRS, GFP_KERNEL);
	KUNIT_ASSERT_EQ(test, n, 2 * PK_CHUNK_PAIRS);
	if (pk_stat(TDX_PAMT_STAT_CHUNK_FAIL)) {
		pk_arena_free(test, p, n);
		kunit_skip(test, "no free 2M block on this machine");
	}
	a = pk_chunk_of(p[0].pfn[0]);
	b = pk_chunk_of(p[PK_CHUNK_PAIRS].pfn[0]);
	/* a: 40 free, b: 5 free. */
	pk_arena_free(test, p, 40);
	pk_arena_free(test, &p[PK_CHUNK_PAIRS], 5);
	KUNIT_ASSERT_EQ(test, pk_arena_alloc(test, q, 6, GFP_NOWAIT), 6);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, pk_chunk_of(q[i].pfn[0]), b);
	KUNIT_EXPECT_EQ(test, pk_chunk_of(q[5].pfn[0]), a);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CHUNK_ALLOC), 2ULL);
	pk_check_accounting(test, 0);
	pk_arena_free(test, q, 6);
	pk_arena_free(test, &p[40], PK_CHUNK_PAIRS - 40);
	pk_arena_free(test, &p[PK_CHUNK_PAIRS + 5], PK_CHUNK_PAIRS - 5);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
}

/*
 * Under a spinlock: GFP_NOWAIT pairs (a free 2M block is still taken, an
 * order-1 page otherwise), gets and puts, frees.  DEBUG_ATOMIC_SLEEP and
 * lockdep watch.
 */
static void pk_arena_atomic(struct kunit *test)
{
	struct tdx_pamt_pair p[16];
	int i, n, ret[8];

	pk_arena_up(test, 8);
	spin_lock(&pk_arena_lock);
	n = pk_arena_alloc(test, p, 16, GFP_NOWAIT);
	for (i = 0; i < 8; i++)
		ret[i] = tdx_pamt_get(pk_slot_pfn(test, 60 + i), NULL);
	for (i = 0; i < 8; i++)
		if (!ret[i])
			tdx_pamt_put(pk_slot_pfn(test, 60 + i));
	pk_arena_free(test, p, n);
	spin_unlock(&pk_arena_lock);
	KUNIT_EXPECT_EQ(test, n, 16);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, ret[i], 0);
	/* Every pair came from a chunk or, failing a free block, order 1. */
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAIR_ORDER0), 0ULL);
	pk_check_accounting(test, 0);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
}

/*
 * A soft hrtimer on this CPU allocates (GFP_ATOMIC) and frees pairs while
 * the task does the same with GFP_KERNEL: the arena lock is taken from
 * both contexts, which lockdep checks.
 */
struct pk_arena_softirq {
	struct hrtimer timer;
	struct tdx_pamt_pair held[4];
	int nr;
	atomic_t fires;
	atomic_t fails;
};

#define PK_ARENA_FIRES		200
#define PK_ARENA_LOOPS_MAX	(1000 * PK_ARENA_FIRES)

static enum hrtimer_restart pk_arena_timer(struct hrtimer *t)
{
	struct pk_arena_softirq *s = container_of(t, struct pk_arena_softirq,
						  timer);

	if (s->nr == ARRAY_SIZE(s->held)) {
		while (s->nr)
			pamt_pair_free(&s->held[--s->nr]);
	} else if (pamt_pair_alloc(&s->held[s->nr], GFP_ATOMIC)) {
		atomic_inc(&s->fails);
	} else {
		s->nr++;
	}
	if (atomic_inc_return(&s->fires) >= PK_ARENA_FIRES)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(20 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void pk_arena_softirq(struct kunit *test)
{
	struct pk_arena_softirq *s;
	struct tdx_pamt_pair p;
	long loops = 0;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	pk_arena_up(test, 0);
	migrate_disable();
	hrtimer_setup(&s->timer, pk_arena_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	hrtimer_start(&s->timer, ns_to_ktime(20 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
	while (atomic_read(&s->fires) < PK_ARENA_FIRES &&
	       loops++ < PK_ARENA_LOOPS_MAX) {
		if (!pamt_pair_alloc(&p, GFP_KERNEL))
			pamt_pair_free(&p);
		cond_resched();
	}
	hrtimer_cancel(&s->timer);
	migrate_enable();
	while (s->nr)
		pamt_pair_free(&s->held[--s->nr]);
	KUNIT_EXPECT_GE(test, atomic_read(&s->fires), PK_ARENA_FIRES);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->fails), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	pk_check_accounting(test, 0);
}

/* Pairs freed from RCU callbacks (softirq) go back to their chunk. */
struct pk_arena_rcu {
	struct rcu_head rcu;
	struct tdx_pamt_pair pair;
};

static void pk_arena_rcu_cb(struct rcu_head *head)
{
	struct pk_arena_rcu *r = container_of(head, struct pk_arena_rcu, rcu);

	pamt_pair_free(&r->pair);
	kfree(r);
}

static void pk_arena_rcu_free(struct kunit *test)
{
	struct pk_arena_rcu *r;
	int i;

	pk_arena_up(test, 0);
	for (i = 0; i < 32; i++) {
		r = kmalloc_obj(*r, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, r);
		if (pamt_pair_alloc(&r->pair, GFP_KERNEL)) {
			kfree(r);
			KUNIT_FAIL(test, "no pair");
			break;
		}
		call_rcu(&r->rcu, pk_arena_rcu_cb);
	}
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC),
			pk_stat(TDX_PAMT_STAT_PAGE_FREE));
	pk_check_accounting(test, 0);
}

/* No order 9: order-1 pairs; no order 1 either: order 0; then -ENOMEM. */
static void pk_arena_fallbacks(struct kunit *test)
{
	struct tdx_pamt_pair p[3];

	pk_arena_up(test, 0);
	kunit_activate_static_stub(test, pamt_pages_alloc,
				   pk_arena_alloc_pages);
	pk_fail_orders = BIT(9);
	KUNIT_ASSERT_EQ(test, pk_arena_alloc(test, &p[0], 1, GFP_KERNEL), 1);
	KUNIT_EXPECT_TRUE(test, pk_order1_pair(&p[0]));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CHUNK_FAIL), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAIR_ORDER1), 1ULL);

	pk_fail_orders = BIT(9) | BIT(1);
	KUNIT_ASSERT_EQ(test, pk_arena_alloc(test, &p[1], 1, GFP_KERNEL), 1);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAIR_ORDER0), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
	pk_check_accounting(test, 0);

	pk_fail_orders = BIT(9) | BIT(1) | BIT(0);
	KUNIT_EXPECT_EQ(test, pamt_pair_alloc(&p[2], GFP_KERNEL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, tdx_pamt_get(pk_slot_pfn(test, 3), NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, pk_word(pk_slot_pfn(test, 3)), 0UL);
	kunit_deactivate_static_stub(test, pamt_pages_alloc);

	pk_arena_free(test, p, 2);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_ALLOC), 4ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PAGE_FREE), 4ULL);
	pk_check_accounting(test, 0);
}

/*
 * A top-up that goes to the arena also fills this CPU's magazine (of 32
 * here, to three quarters) under the same
 * hold of the arena lock, taken with this CPU's lock held (lockdep sees
 * the nesting); the next top-ups find their pairs there.
 */
static void pk_arena_topup_refill(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	struct tdx_pamt_pair p;
	u64 locks;
	int i;

	pk_arena_up(test, 32);
	KUNIT_ASSERT_EQ(test, pk_arena_alloc(test, &p, 1, GFP_KERNEL), 1);
	if (!pk_stat(TDX_PAMT_STAT_CHUNK_ALLOC)) {
		pk_arena_free(test, &p, 1);
		kunit_skip(test, "no free 2M block on this machine");
	}
	migrate_disable();
	locks = pk_stat(TDX_PAMT_STAT_GLOBAL_LOCK);
	KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 24ULL);
	for (i = 0; i < 15; i++) {
		tdx_free_pamt_cache(&res);
		KUNIT_EXPECT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL),
				0);
	}
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GLOBAL_LOCK), locks + 1);
	migrate_enable();
	pk_check_accounting(test, res.nr);
	tdx_free_pamt_cache(&res);
	pk_arena_free(test, &p, 1);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ARENA_CHUNKS), 0ULL);
}

static struct kunit_case pk_arena_cases[] = {
	KUNIT_CASE(pk_arena_chunks),
	KUNIT_CASE(pk_arena_fullest_first),
	KUNIT_CASE(pk_arena_atomic),
	KUNIT_CASE(pk_arena_softirq),
	KUNIT_CASE(pk_arena_rcu_free),
	KUNIT_CASE(pk_arena_fallbacks),
	KUNIT_CASE(pk_arena_topup_refill),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_arena_suite = {
	.name = "tdx_pamt_arena",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_arena_cases,
};

kunit_test_suites(&pk_arena_suite);
