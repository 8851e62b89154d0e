// SPDX-License-Identifier: GPL-2.0
/* The fake TDX module: its locking, error codes, injection and latency. */
#include <pthread.h>
#include <sched.h>
#include "../harness.h"

static struct tdx_pamt_pair pair_at(unsigned long slot)
{
	struct tdx_pamt_pair p = { { slot_pfn(slot, 0), slot_pfn(slot, 1) } };

	if (!pamt_sim_alloc_pfn(p.pfn[0]) || !pamt_sim_alloc_pfn(p.pfn[1]))
		pamt_sim_fatal("pair_at", __FILE__, __LINE__);
	return p;
}

/* These tests drive the fake directly, beside an idle cache. */
static void env_raw(void)
{
	pamt_env_up_default();
	env.held_pages = 2;
}

static void drop_raw(unsigned long slot, struct tdx_pamt_pair *p)
{
	struct tdx_pamt_pair back;

	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(slot, 0), &back), 0);
	__free_page(pfn_to_page(p->pfn[0]));
	__free_page(pfn_to_page(p->pfn[1]));
	env.held_pages = 0;
}

PAMT_TEST(fake_add_then_remove_hands_pair_back)
{
	struct tdx_pamt_pair p, back;

	env_raw();
	p = pair_at(10);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(3, 77)));
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(3, 0), &back), TDX_PAMT_SUCCESS);
	EXPECT_EQ(back.pfn[0], p.pfn[0]);
	EXPECT_EQ(back.pfn[1], p.pfn[1]);
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(3, 0), &back),
		  TDX_PAMT_NO_PAGE_PAIR);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	env.expect_violations = 1;
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	env.held_pages = 0;
}

PAMT_TEST(fake_add_twice_is_hpa_range_not_free)
{
	struct tdx_pamt_pair p, q;

	env_raw();
	p = pair_at(10);
	q = pair_at(11);
	env.held_pages = 4;
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &q),
		  TDX_PAMT_HPA_RANGE_NOT_FREE);
	env.expect_violations = 1;
	__free_page(pfn_to_page(q.pfn[0]));
	__free_page(pfn_to_page(q.pfn[1]));
	drop_raw(3, &p);
}

PAMT_TEST(fake_pair_page_must_be_free)
{
	struct tdx_pamt_pair p, td;

	env_raw();
	p = pair_at(10);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	/* A pair page already holding a PAMT. */
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(4, 0), &p), TDX_PAMT_PAGE_NOT_FREE);
	/* A pair page used by a TD. */
	ASSERT(pamt_sim_alloc_pfn(slot_pfn(3, 5)));
	env.held_pages = 3;
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 5)), TDX_PAMT_SUCCESS);
	td.pfn[0] = slot_pfn(3, 5);
	td.pfn[1] = slot_pfn(3, 6);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(5, 0), &td), TDX_PAMT_PAGE_NOT_FREE);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(3, 5)), TDX_PAMT_SUCCESS);
	__free_page(pfn_to_page(slot_pfn(3, 5)));
	env.expect_violations = 2;
	drop_raw(3, &p);
}

PAMT_TEST(fake_outside_covered_memory)
{
	struct tdx_pamt_pair p, out = { { 1, 2 } };

	env_raw();
	p = pair_at(10);
	EXPECT_EQ(pamt_fake_ops.add(env.base_pfn - 512, &p),
		  TDX_PAMT_OPERAND_ADDR_RANGE);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &out),
		  TDX_PAMT_OPERAND_ADDR_RANGE);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 1), &p),
		  TDX_PAMT_OPERAND_ADDR_RANGE);
	EXPECT_EQ(pamt_fake_page_aug(env.base_pfn - 1),
		  TDX_PAMT_OPERAND_ADDR_RANGE);
	EXPECT_EQ(atomic64_read(&pamt_fake.pairs), 0);
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	env.held_pages = 0;
}

PAMT_TEST(fake_remove_in_use_is_not_empty)
{
	struct tdx_pamt_pair p, back;

	env_raw();
	p = pair_at(10);
	ASSERT(pamt_sim_alloc_pfn(slot_pfn(3, 9)));
	env.held_pages = 3;
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 9)), TDX_PAMT_MISSING_PAGE_PAIR);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 9)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 9)), TDX_PAMT_PAGE_NOT_FREE);
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(3, 0), &back),
		  TDX_PAMT_PAGE_NOT_EMPTY);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(3, 9)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(3, 9)), TDX_PAMT_PAGE_NOT_FREE);
	__free_page(pfn_to_page(slot_pfn(3, 9)));
	env.held_pages = 2;
	env.expect_violations = 2;
	drop_raw(3, &p);
}

/* ADD holds the pair pages' ranges shared: an ADD there is BUSY. */
PAMT_TEST(fake_busy_on_range_lock_conflict)
{
	struct tdx_pamt_pair p, back;
	struct pamt_fake_range *r10;

	env_raw();
	p = pair_at(10);
	r10 = &pamt_fake.ranges[10];
	atomic_set(&r10->lock, 1);		/* as during an ADD using slot 10 */
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(10, 0), &p), TDX_PAMT_OPERAND_BUSY);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	atomic_set(&r10->lock, -1);		/* an ADD on slot 10 runs */
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(3, 0), &back),
		  TDX_PAMT_OPERAND_BUSY);
	/* A second ADD on a range being added is a slot-layer bug. */
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(10, 0), &p), TDX_PAMT_OPERAND_BUSY);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	env.expect_violations = 1;
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(10, 3)), TDX_PAMT_OPERAND_BUSY);
	atomic_set(&r10->lock, 0);
	EXPECT_EQ(atomic64_read(&pamt_fake.busy[PAMT_FAKE_ADD]), 2);
	drop_raw(3, &p);
}

PAMT_TEST(fake_injection_by_count_and_rate)
{
	int i, failed = 0;

	pamt_env_up_default();
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 2, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), -EIO);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), -EIO);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), 0);
	EXPECT_EQ(atomic64_read(&pamt_fake.injected[PAMT_FAKE_ADD]), 2);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 0, 500000);
	for (i = 0; i < 40; i++) {
		if (tdx_pamt_get(slot_pfn(2 + i, 0), NULL))
			failed++;
		else
			EXPECT_EQ(tdx_pamt_put(slot_pfn(2 + i, 0)), 0);
	}
	pamt_fake_inject(PAMT_FAKE_ADD, 0, 0, 0);
	EXPECT(failed > 5 && failed < 35);
}

PAMT_TEST(fake_latency_is_modelled)
{
	struct tdx_pamt_pair p, back;
	u64 t0, dt;
	int i;

	env_raw();
	p = pair_at(10);
	pamt_fake_set_latency(PAMT_FAKE_ADD, 20000, 40000, 180000);
	pamt_fake_set_latency(PAMT_FAKE_REMOVE, 0, 0, 0);
	t0 = ktime_get_ns();
	for (i = 0; i < 50; i++) {
		EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), 0);
		EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(3, 0), &back), 0);
	}
	dt = (ktime_get_ns() - t0) / 50;
	/* Mean 20 + ~20 us; the upper bound only catches a runaway delay. */
	EXPECT(dt >= 30000 && dt < 1000000);
	pamt_fake_set_latency(PAMT_FAKE_ADD, 0, 0, 0);
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	env.held_pages = 0;
}

PAMT_TEST(fake_reset_of_live_pamt_page_is_a_violation)
{
	struct tdx_pamt_pair p;

	env_raw();
	p = pair_at(10);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), 0);
	pamt_fake_ops.reset_page(p.pfn[1]);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	env.expect_violations = 1;
	drop_raw(3, &p);
}

/*
 * The PAMT page bitmap: a pair page handed to a TD, by PAGE.AUG, PAGE.ADD
 * or as a control page, is PAGE_METADATA_INCORRECT.
 */
PAMT_TEST(fake_pair_page_to_a_td_is_metadata_incorrect)
{
	struct tdx_pamt_pair p, q;

	env_raw();
	p = pair_at(10);	/* slot 10's pages 0 and 1 */
	q = pair_at(11);
	env.held_pages = 4;
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	/* The page's bitmap bit is checked before its range's pair. */
	EXPECT_EQ(pamt_fake_page_aug(p.pfn[1]), TDX_PAMT_PAGE_METADATA_INCORRECT);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	atomic64_set(&pamt_fake.violations, 0);
	/* Slot 10 gets a pair of its own, so its pages may go to a TD. */
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(10, 0), &q), TDX_PAMT_SUCCESS);
	EXPECT(pamt_fake_is_pamt_page(p.pfn[0]));
	EXPECT(!pamt_fake_is_pamt_page(slot_pfn(10, 2)));
	EXPECT_EQ(pamt_fake_page_aug(p.pfn[0]), TDX_PAMT_PAGE_METADATA_INCORRECT);
	EXPECT_EQ(pamt_fake_page_add(p.pfn[1]), TDX_PAMT_PAGE_METADATA_INCORRECT);
	EXPECT_EQ(pamt_fake_control_add(p.pfn[0]),
		  TDX_PAMT_PAGE_METADATA_INCORRECT);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 3);
	env.expect_violations = 3;
	/* Nothing changed: no TD page, the bits still set. */
	EXPECT_EQ(atomic_read(&pamt_fake.ranges[10].td_pages), 0);
	EXPECT(pamt_fake_is_pamt_page(p.pfn[1]));
	/* Its neighbour is an ordinary page. */
	ASSERT(pamt_sim_alloc_pfn(slot_pfn(10, 2)));
	env.held_pages++;
	EXPECT_EQ(pamt_fake_page_add(slot_pfn(10, 2)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(10, 2)), TDX_PAMT_SUCCESS);
	__free_page(pfn_to_page(slot_pfn(10, 2)));
	env.held_pages--;

	drop_raw(10, &q);
	env.held_pages = 2;
	drop_raw(3, &p);
}

/* REMOVE clears the pair's bits: the pages are ordinary pages again. */
PAMT_TEST(fake_remove_clears_the_pamt_bits)
{
	struct tdx_pamt_pair p, q, back;

	env_raw();
	p = pair_at(10);
	q = pair_at(11);
	env.held_pages = 4;
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(10, 0), &q), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	/* Already a pair page: a second ADD with it is PAGE_NOT_FREE. */
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(4, 0), &p), TDX_PAMT_PAGE_NOT_FREE);
	env.expect_violations = 1;
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(3, 0), &back), TDX_PAMT_SUCCESS);
	EXPECT(!pamt_fake_is_pamt_page(p.pfn[0]));
	EXPECT(!pamt_fake_is_pamt_page(p.pfn[1]));
	/* The same pages serve another range... */
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(4, 0), &p), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(4, 0), &back), TDX_PAMT_SUCCESS);
	/* ...or a TD. */
	EXPECT_EQ(pamt_fake_page_aug(p.pfn[0]), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_remove(p.pfn[0]), TDX_PAMT_SUCCESS);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	/* Slot 11's pages are ordinary once slot 10 lets its pair go. */
	EXPECT(pamt_fake_is_pamt_page(q.pfn[0]));
	drop_raw(10, &q);
	EXPECT(!pamt_fake_is_pamt_page(q.pfn[0]));
	EXPECT(!pamt_fake_is_pamt_page(q.pfn[1]));
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	env.held_pages = 0;
}

struct stalled_add {
	pthread_t thread;
	unsigned long base;
	struct tdx_pamt_pair pair;
	u64 status;
};

static void *stalled_add_fn(void *arg)
{
	struct stalled_add *a = arg;

	a->status = pamt_fake_ops.add(a->base, &a->pair);
	return NULL;
}

/*
 * An ADD holds its pair pages' 2M ranges shared for as long as it runs:
 * every exclusive user of those ranges meets BUSY meanwhile -- an ADD or
 * a REMOVE targeting one -- while a 4K AUG there (shared) goes through.
 */
PAMT_TEST(fake_add_holds_pair_ranges_shared)
{
	struct stalled_add a = { .base = 0 };
	struct tdx_pamt_pair q, r, back;

	env_raw();
	a.pair = pair_at(10);
	q = pair_at(11);
	r = pair_at(12);
	env.held_pages = 6;
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(10, 0), &q), TDX_PAMT_SUCCESS);
	ASSERT(pamt_sim_alloc_pfn(slot_pfn(10, 7)));
	env.held_pages++;

	a.base = slot_pfn(3, 0);
	pamt_fake_stall(PAMT_FAKE_ADD, true);
	ASSERT(!pthread_create(&a.thread, NULL, stalled_add_fn, &a));
	/* Both pair pages lie in slot 10: two shared holds. */
	while (atomic_read(&pamt_fake.ranges[10].lock) != 2)
		sched_yield();

	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(10, 0), &back),
		  TDX_PAMT_OPERAND_BUSY);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(10, 0), &r), TDX_PAMT_OPERAND_BUSY);
	/* The target itself is held exclusively: a 4K AUG there is BUSY. */
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 9)), TDX_PAMT_OPERAND_BUSY);
	/* A 4K AUG in a pair page's range shares the lock. */
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(10, 7)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(atomic64_read(&pamt_fake.busy[PAMT_FAKE_REMOVE]), 1);
	EXPECT_EQ(atomic64_read(&pamt_fake.busy[PAMT_FAKE_ADD]), 1);

	pamt_fake_stall(PAMT_FAKE_ADD, false);
	pthread_join(a.thread, NULL);
	EXPECT_EQ(a.status, TDX_PAMT_SUCCESS);
	EXPECT_EQ(atomic_read(&pamt_fake.ranges[10].lock), 0);
	/* Released: an exclusive user gets through now. */
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(10, 7)), TDX_PAMT_SUCCESS);
	__free_page(pfn_to_page(slot_pfn(10, 7)));
	env.held_pages--;
	__free_page(pfn_to_page(r.pfn[0]));
	__free_page(pfn_to_page(r.pfn[1]));
	env.held_pages -= 2;
	drop_raw(3, &a.pair);
	env.held_pages = 2;
	drop_raw(10, &q);
}

/*
 * PAGE.AUG holds its range shared and its 4K entry exclusively: a locked
 * 4K entry is BUSY for that page only, and an AUG in flight (range shared)
 * keeps ADD and REMOVE on the range out.
 */
PAMT_TEST(fake_aug_locks_2m_shared_4k_exclusive)
{
	struct tdx_pamt_pair p, back;
	unsigned long bit;

	env_raw();
	p = pair_at(10);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_SUCCESS);
	ASSERT(pamt_sim_alloc_pfn(slot_pfn(3, 5)));
	ASSERT(pamt_sim_alloc_pfn(slot_pfn(3, 6)));
	env.held_pages = 4;

	bit = slot_pfn(3, 5) - pamt_fake.start_pfn;
	set_bit(bit, pamt_fake.lock_map);	/* as during an AUG of the page */
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 5)), TDX_PAMT_OPERAND_BUSY);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(3, 5)), TDX_PAMT_OPERAND_BUSY);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 6)), TDX_PAMT_SUCCESS);
	clear_bit(bit, pamt_fake.lock_map);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(3, 5)), TDX_PAMT_SUCCESS);
	EXPECT(!test_bit(bit, pamt_fake.lock_map));

	atomic_set(&pamt_fake.ranges[3].lock, 1);	/* an AUG in slot 3 */
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(3, 6)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(3, 0), &back),
		  TDX_PAMT_OPERAND_BUSY);
	EXPECT_EQ(pamt_fake_ops.add(slot_pfn(3, 0), &p), TDX_PAMT_OPERAND_BUSY);
	atomic_set(&pamt_fake.ranges[3].lock, 0);

	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(3, 5)), TDX_PAMT_SUCCESS);
	__free_page(pfn_to_page(slot_pfn(3, 5)));
	__free_page(pfn_to_page(slot_pfn(3, 6)));
	env.held_pages = 2;
	drop_raw(3, &p);
}
