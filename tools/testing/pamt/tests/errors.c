// SPDX-License-Identifier: GPL-2.0
/* Bad input and failures: a clear error, and nothing changes or leaks. */
#include "../harness.h"

PAMT_TEST(err_pfn_outside_covered_memory)
{
	u64 before[TDX_PAMT_STAT_NR], after[TDX_PAMT_STAT_NR];
	unsigned long below = env.base_pfn - 1, above;

	pamt_env_up_default();
	below = env.base_pfn - 1;
	above = slot_pfn(env.nr_slots, 0);
	stats_snapshot(before);
	EXPECT_EQ(tdx_pamt_get(below, NULL), -EINVAL);
	EXPECT_EQ(tdx_pamt_get(above, NULL), -EINVAL);
	EXPECT_EQ(tdx_pamt_get(~0UL, NULL), -EINVAL);
	EXPECT_EQ(tdx_pamt_put(below), -EINVAL);
	EXPECT_EQ(tdx_pamt_put(above), -EINVAL);
	EXPECT_EQ(pamt_fake_evict(above), -EINVAL);
	stats_snapshot(after);
	EXPECT(!memcmp(before, after, sizeof(before)));
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD) + fake_calls(PAMT_FAKE_REMOVE), 0);
}

PAMT_TEST(err_double_put_warns_once_and_changes_nothing)
{
	unsigned long word;

	pamt_env_up_default();
	EXPECT_EQ(tdx_pamt_put(slot_pfn(2, 0)), -EINVAL);	/* EMPTY */
	EXPECT_EQ(slot_word(2), 0);
	ASSERT(!tdx_pamt_get(slot_pfn(3, 0), NULL));
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), 0);
	word = slot_word(3);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), -EINVAL);	/* IDLE */
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), -EINVAL);
	EXPECT_EQ(slot_word(3), word);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 0);
	/* Each bad put is a WARN_ONCE hit; only the first one prints. */
	env.expect_warnings = 3;
}

PAMT_TEST(err_refcount_saturates)
{
	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(1, 0), NULL));
	slot_set_word(1, PAMT_SLOT_INSTALLED | (PAMT_SLOT_REF_MAX - 1));
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), 0);
	EXPECT_EQ(slot_word(1), PAMT_SLOT_INSTALLED | PAMT_SLOT_REF_MAX);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), -EOVERFLOW);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 7), NULL), -EOVERFLOW);
	EXPECT_EQ(slot_word(1), PAMT_SLOT_INSTALLED | PAMT_SLOT_REF_MAX);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
	EXPECT_EQ(slot_word(1), PAMT_SLOT_INSTALLED | (PAMT_SLOT_REF_MAX - 1));
	slot_set_word(1, PAMT_SLOT_INSTALLED | 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
}

static void expect_add_failure(u64 status, int err)
{
	pamt_env_up_default();
	pamt_fake_inject(PAMT_FAKE_ADD, status, 1, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 0), NULL), err);
	EXPECT_EQ(slot_word(6), 0);
	EXPECT(!pamt_fake_range_has_pair(slot_pfn(6, 0)));
	/* The pair went back to a magazine, not to the allocator. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 0);
	/* The next get succeeds with that very pair. */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 0), NULL), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(6, 0)), 0);
}

/*
 * ADD refused a page of the pair as in use: the module may own it, so the
 * pair is leaked, neither reused nor freed; the next get takes another.
 */
PAMT_TEST(err_add_page_not_free_leaks_the_pair)
{
	struct tdx_pamt_pair p;

	pamt_env_up_default();
	ASSERT(!pamt_pair_alloc(&p, GFP_KERNEL));
	pamt_mag_push(&p);
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_PAGE_NOT_FREE, 1, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 0), NULL), -EIO);
	env.held_pairs = 1;
	EXPECT_EQ(slot_word(6), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_LEAKED), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_FREE), 0);
	EXPECT(pamt_accounting_ok());
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 0), NULL), 0);
	EXPECT(!pamt_fake_is_pamt_page(p.pfn[0]) &&
	       !pamt_fake_is_pamt_page(p.pfn[1]));
	EXPECT_EQ(tdx_pamt_put(slot_pfn(6, 0)), 0);
	/* Only the test knows the pair was never the module's. */
	pamt_pair_free(&p, 1);
	env.held_pairs = 0;
}

PAMT_TEST(err_add_addr_range_is_eio)
{
	expect_add_failure(TDX_PAMT_OPERAND_ADDR_RANGE | 2, -EIO);
}

PAMT_TEST(err_add_hpa_range_not_free_is_eio_and_warns)
{
	expect_add_failure(TDX_PAMT_HPA_RANGE_NOT_FREE, -EIO);
	env.expect_warnings = 1;
}

PAMT_TEST(err_add_busy_retried_then_ebusy)
{
	pamt_env_up_default();
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY, 1000, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 0), NULL), -EBUSY);
	/* Backed-off retries, then as many again serialised, then give up. */
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), PAMT_BUSY_CALLS_MAX);
	EXPECT_EQ(stat(TDX_PAMT_STAT_BUSY), PAMT_BUSY_CALLS_MAX);
	/* The fallback's lock is taken for each serialised call alone. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), PAMT_BUSY_RETRIES + 1);
	EXPECT_EQ(atomic_read(&pamt.serializing), 0);
	EXPECT_EQ(slot_word(6), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
	pamt_fake_inject(PAMT_FAKE_ADD, 0, 0, 0);
}

PAMT_TEST(err_add_busy_transient_succeeds)
{
	pamt_env_up_default();
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY, 3, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 0), NULL), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 4);
	EXPECT_EQ(stat(TDX_PAMT_STAT_BUSY), 3);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 1);	/* the root's list */
	/* BUSY past the backoff: the serialised retry succeeds. */
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_BUSY,
			 PAMT_BUSY_RETRIES + 2, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(7, 0), NULL), 0);
	/* One serialised call still BUSY, the next one succeeds; a filing. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 1 + 2 + 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(7, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(6, 0)), 0);
}

/* REMOVE fails for good: the pair stays in the module, never reused. */
PAMT_TEST(err_remove_failure_leaks_in_module)
{
	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 0)), 0);
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EIO);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
	EXPECT_EQ(stat(TDX_PAMT_STAT_LEAKED), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(4, 0)));
	/* Not reclaimable, not evictable ... */
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EIO);
	EXPECT_EQ(pamt_fake_idle_pairs(), 0);
	EXPECT_EQ(tdx_pamt_drain(), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 1);
	/* ... but still usable: the module holds a valid pair. */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 3), NULL), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 3)), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 1);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
}

PAMT_TEST(err_remove_busy_leaves_slot_idle)
{
	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(4, 0)));
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 1000, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EBUSY);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), PAMT_BUSY_CALLS_MAX);
	EXPECT_EQ(pamt_slot_state(slot_word(4)), PAMT_SLOT_IDLE);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_LEAKED), 0);
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), 0);
	EXPECT_EQ(slot_word(4), 0);
}

PAMT_TEST(err_alloc_failure_is_enomem)
{
	pamt_env_up_default();
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(2, 0), NULL), -ENOMEM);
	EXPECT_EQ(slot_word(2), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	/* Second page of the pair fails: the first goes back. */
	pamt_sim_fail_set(&pamt_sim_fail_page, 1, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(2, 0), NULL), -ENOMEM);
	EXPECT_EQ(slot_word(2), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), stat(TDX_PAMT_STAT_PAGE_FREE));
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(2, 0), NULL), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(2, 0)), 0);
}

/*
 * tdx_pamt_init() failing at every allocation leaves nothing behind; a
 * range far from the first brings the far blocks' table in.
 */
PAMT_TEST(err_init_enomem_at_every_step)
{
	unsigned long far = PAMT_ENV_BASE_PFN + (1UL << 30);
	struct tdx_pamt_range r[2] = {
		{ PAMT_ENV_BASE_PFN, PAMT_ENV_BASE_PFN + 16 * 512 },
		{ far, far + 2 * 512 },
	};
	struct tdx_pamt_config cfg = { .ops = &pamt_fake_ops };
	atomic_t *slot;
	long step;
	int ret;

	pamt_sim_set_nr_cpus(4);
	for (step = 0; step < 100; step++) {
		pamt_sim_fail_set(&pamt_sim_fail_kmalloc, step, 0);
		ret = tdx_pamt_init(r, 2, &cfg);
		if (!ret)
			break;
		EXPECT_EQ(ret, -ENOMEM);
		EXPECT(!tdx_pamt_enabled());
		EXPECT(!pamt.pcpu);
	}
	pamt_sim_fail_set(&pamt_sim_fail_kmalloc, -1, 0);
	EXPECT(step > 3);
	EXPECT(tdx_pamt_enabled());
	EXPECT(pamt.nr_slots > pamt.nr_flat);
	slot = pamt_slot_lookup(far + 512);
	EXPECT(slot && pamt_slot_base_pfn(pamt_slot_idx(slot)) == far + 512);
	EXPECT(atomic_read(pamt_slot_lookup(far + 2 * 512)) & PAMT_SLOT_HOLE);
	EXPECT(!pamt_slot_lookup(far + PAMT_BLOCK_SLOTS * 512));
	tdx_pamt_exit();
	/* LeakSanitizer, in the asan build, checks the rest at exit. */
}

/*
 * The fake module catches a slot layer that loses track of the module:
 * here the word is wiped by hand, as a lost TRANSIT bit would, and the
 * next get issues a second ADD on a range that has a pair.
 */
PAMT_TEST(err_fake_catches_double_add)
{
	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(5, 0), NULL));
	slot_set_word(5, 0);
	pamt_stat_add(INSTALLED, -1);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(5, 0), NULL), -EIO);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	EXPECT_EQ(slot_word(5), 0);
	/* Put things back as they really are, for the teardown checks. */
	slot_set_word(5, PAMT_SLOT_INSTALLED);
	pamt_stat_inc(INSTALLED);
	pamt_idle_count(5, 1);
	env.expect_violations = 1;
	env.expect_warnings = 1;
}

PAMT_TEST(err_fake_catches_remove_in_use)
{
	struct page *td;

	pamt_env_up_default();
	td = pamt_sim_alloc_pfn(slot_pfn(5, 100));
	ASSERT(td);
	env.held_pages = 1;
	ASSERT(!tdx_pamt_get(slot_pfn(5, 100), NULL));
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(5, 100)), TDX_PAMT_SUCCESS);
	/* A caller bug: the last put while the TD still maps the page. */
	EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 100)), 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(5, 100)), -EIO);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	EXPECT_EQ(slot_word(5), PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(5, 100)), TDX_PAMT_SUCCESS);
	env.expect_violations = 1;
}

/* Slot @s IDLE, its index entry queued. */
static void make_idle_slot(unsigned long s)
{
	ASSERT(!tdx_pamt_get(slot_pfn(s, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(s, 0)));
}

/*
 * The SEAMCALL did not run (no VMX on this CPU): not a leak, retry later.
 * The REMOVE answers -EBUSY, not -EIO, and the slot stays IDLE.
 */
PAMT_TEST(err_remove_sw_error_is_transient)
{
	pamt_env_up_default();
	make_idle_slot(4);
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_SW_ERROR | 6, 1, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EBUSY);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED);
	EXPECT_EQ(stat(TDX_PAMT_STAT_LEAKED), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), 0);
}

/*
 * The module says the range has no pair, or the backend could not name
 * the pages REMOVE handed back: the range is EMPTY, the pages are lost.
 * evict asked for an empty range and has one: it answers 0.
 */
static void expect_pair_lost(u64 status)
{
	struct tdx_pamt_pair p;

	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(4, 0)));
	pamt_fake_inject(PAMT_FAKE_REMOVE, status, 1, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), 0);
	EXPECT_EQ(slot_word(4), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_LEAKED), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	/* A get now ADDs again rather than trusting a pair that is gone. */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 0), NULL), -EIO);
	EXPECT_EQ(atomic64_read(&pamt_fake.violations), 1);
	env.expect_violations = 1;
	env.expect_warnings = 1;
	/* The injection left the fake holding the pair: take it back. */
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(4, 0), &p), 0);
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	pamt_stat_add(PAGE_FREE, 2);
}

PAMT_TEST(err_remove_no_pair_empties_slot)
{
	expect_pair_lost(TDX_PAMT_NO_PAGE_PAIR);
}

PAMT_TEST(err_remove_pair_lost_empties_slot)
{
	expect_pair_lost(TDX_PAMT_SW_PAIR_LOST);
}

/* Reclaim that meets a lost pair counts nothing freed for it. */
PAMT_TEST(err_remove_no_pair_is_not_freed_memory)
{
	unsigned long scanned, freed, pages;
	struct tdx_pamt_pair p;

	pamt_env_up_default();
	pages = stat(TDX_PAMT_STAT_PAGE_FREE);
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(4, 0)));
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_NO_PAGE_PAIR, 1, 0);
	freed = pamt_fake_shrink_scan(1, &scanned);
	EXPECT_EQ(slot_word(4), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_SHRINK), 0);
	EXPECT_EQ(2 * freed, stat(TDX_PAMT_STAT_PAGE_FREE) - pages);
	/* The injection left the fake holding the pair: take it back. */
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(4, 0), &p), 0);
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	pamt_stat_add(PAGE_FREE, 2);
}

/* A failed ADD gives a reserved pair back to the reserve it came from. */
PAMT_TEST(err_add_failure_keeps_the_reserve)
{
	struct tdx_pamt_cache res = { 0 };

	pamt_env_up_default();
	ASSERT(!__tdx_topup_pamt_cache(&res, 1, GFP_KERNEL));
	env.held_pairs = 1;
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 1, 0);
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);
	pamt_sim_enter_atomic();
	EXPECT_EQ(tdx_pamt_get(slot_pfn(2, 0), &res), -EIO);
	EXPECT_EQ(res.nr, 1);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(2, 0), &res), 0);
	pamt_sim_exit_atomic();
	env.held_pairs = 0;
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);
	EXPECT_EQ(res.nr, 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(2, 0)), 0);
}

/*
 * A REMOVE that stays BUSY changes nothing: evict, a drain and the
 * shrinker all put the IDLE word back, and the slot stays queued.
 */
PAMT_TEST(err_busy_reclaim_restores_exact_word)
{
	unsigned long before;

	pamt_env_up_default();
	make_idle_slot(4);
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 100000, 0);

	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EBUSY);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED);
	EXPECT_EQ(tdx_pamt_drain(), 0);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED);
	EXPECT_EQ(pamt_fake_shrink_scan(1, NULL), 0);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED);
	/* Queued again: the next scan looks at it. */
	before = reclaim_work();
	EXPECT_EQ(pamt_fake_shrink_scan(1, NULL), 0);
	EXPECT_EQ(reclaim_work() - before, 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(4, 0)));

	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), 0);
	EXPECT_EQ(slot_word(4), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
}

/*
 * exit leaves the pairs the module kept -- a LEAKED slot, a REMOVE that
 * stayed BUSY -- in the module: their four pages are never freed.
 */
PAMT_TEST(err_exit_leaves_module_pairs)
{
	struct tdx_pamt_config cfg = { .ops = &pamt_env_ops };
	struct tdx_pamt_range r;
	struct tdx_pamt_pair p;
	unsigned long s;

	pamt_env_up_default();
	r.start_pfn = env.base_pfn;
	r.end_pfn = slot_pfn(env.nr_slots, 0);
	/* Slot 4: REMOVE failed for good (LEAKED). */
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(4, 0)));
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EIO);
	/* Slot 6: IDLE, and the module stays BUSY through exit's REMOVE. */
	ASSERT(!tdx_pamt_get(slot_pfn(6, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(6, 0)));
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 100000, 0);
	tdx_pamt_exit();
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
	EXPECT(!tdx_pamt_enabled());
	EXPECT(pamt_fake_range_has_pair(slot_pfn(4, 0)));
	EXPECT(pamt_fake_range_has_pair(slot_pfn(6, 0)));
	EXPECT_EQ(pamt_sim_pages_in_use(), 4);

	/* Take them back by hand, and a new cache for the teardown. */
	for (s = 4; s <= 6; s += 2) {
		EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(s, 0), &p), 0);
		__free_page(pfn_to_page(p.pfn[0]));
		__free_page(pfn_to_page(p.pfn[1]));
	}
	ASSERT(!tdx_pamt_init(&r, 1, &cfg));
}

/*
 * Status values as the TDX module's public source defines them
 * (intel/tdx-module, include/auto_gen_2_0/tdx_error_codes_defs.h), written
 * out here so that a wrong constant in tdx_pamt.h cannot hide itself.
 */
#define MODULE_NO_PAMT_PAGE_PAIR	0xC000030500000000ULL
#define MODULE_PAMT_PAGE_NOT_EMPTY	0xC000030600000000ULL
#define MODULE_MISSING_PAMT_PAGE_PAIR	0x8000030800000000ULL
#define MODULE_OPERAND_ID_RCX		1ULL

PAMT_TEST(err_status_values_match_the_module)
{
	EXPECT_EQ(TDX_PAMT_NO_PAGE_PAIR, MODULE_NO_PAMT_PAGE_PAIR);
	EXPECT_EQ(TDX_PAMT_PAGE_NOT_EMPTY, MODULE_PAMT_PAGE_NOT_EMPTY);
	EXPECT_EQ(TDX_PAMT_MISSING_PAGE_PAIR, MODULE_MISSING_PAMT_PAGE_PAIR);
	EXPECT_EQ(TDX_PAMT_HPA_RANGE_NOT_FREE, 0xC000030400000000ULL);
	EXPECT_EQ(TDX_PAMT_PAGE_NOT_FREE, 0xC000030300000000ULL);
	EXPECT_EQ(TDX_PAMT_OPERAND_ADDR_RANGE, 0xC000010100000000ULL);
	EXPECT_EQ(TDX_PAMT_OPERAND_BUSY, 0x8000020000000000ULL);
	EXPECT_EQ(TDX_PAMT_PAGE_METADATA_INCORRECT, 0xC000030000000000ULL);
}

/*
 * REMOVE answers the module's NO_PAMT_PAGE_PAIR: the range has no pair.
 * The slot must go EMPTY, so that the next get ADDs one; a slot left
 * INSTALLED would let the next PAGE.AUG fail for want of a pair.
 */
PAMT_TEST(err_remove_module_no_pair_empties_slot)
{
	struct tdx_pamt_pair p;
	long adds;

	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(4, 0)));
	/* The module loses the pair behind the cache's back ... */
	ASSERT(!pamt_fake_ops.remove(slot_pfn(4, 0), &p));
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	pamt_stat_add(PAGE_FREE, 2);
	/* ... and says so, with the operand id in the low bits. */
	pamt_fake_inject(PAMT_FAKE_REMOVE,
			 MODULE_NO_PAMT_PAGE_PAIR | MODULE_OPERAND_ID_RCX, 1, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), 0);
	EXPECT_EQ(slot_word(4), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);

	adds = fake_calls(PAMT_FAKE_ADD);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 2), NULL), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), adds + 1);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(4, 2)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(4, 2)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 2)), 0);
}

/*
 * REMOVE answers the module's PAMT_PAGE_NOT_EMPTY: the pair stays in the
 * module.  The slot must stay INSTALLED (and LEAKED), so that a get uses
 * that pair; an EMPTY slot would ADD on a range with a pair, which the
 * module refuses for good.
 */
PAMT_TEST(err_remove_module_not_empty_keeps_pair)
{
	struct tdx_pamt_pair p;
	long adds;

	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(4, 0)));
	pamt_fake_inject(PAMT_FAKE_REMOVE,
			 MODULE_PAMT_PAGE_NOT_EMPTY | MODULE_OPERAND_ID_RCX, 1, 0);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EIO);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(4, 0)));

	adds = fake_calls(PAMT_FAKE_ADD);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 2), NULL), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), adds);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(4, 2)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(4, 2)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 2)), 0);

	/* The LEAKED pair is never removed by the cache: take it back. */
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(4, 0), &p), 0);
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	pamt_stat_add(PAGE_FREE, 2);
	slot_set_word(4, 0);
	pamt_stat_add(INSTALLED, -1);
}
