// SPDX-License-Identifier: GPL-2.0
/* The fake TDX module: its locking, error codes, injection and latency. */
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
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_PAGE_NOT_FREE, 2, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), -EIO);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), -EIO);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), 0);
	EXPECT_EQ(atomic64_read(&pamt_fake.injected[PAMT_FAKE_ADD]), 2);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_PAGE_NOT_FREE, 0, 500000);
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
