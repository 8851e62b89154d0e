// SPDX-License-Identifier: GPL-2.0
/* Shrink layer and evict: giving idle memory back. */
#include <pthread.h>
#include "../harness.h"

static void env_cap(unsigned long cap, unsigned int mag_size)
{
	struct pamt_env_opts o = { .idle_cap = cap, .mag_size = mag_size };

	if (pamt_env_up(&o))
		pamt_sim_fatal("environment", __FILE__, __LINE__);
}

static void make_idle(unsigned long first, unsigned long n)
{
	unsigned long s;

	for (s = first; s < first + n; s++) {
		EXPECT_EQ(tdx_pamt_get(slot_pfn(s, 0), NULL), 0);
		EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
	}
}

PAMT_TEST(shrink_count_is_idle_plus_free_pairs)
{
	struct tdx_pamt_pair p[12];
	int i;

	env_cap(1000, 8);
	EXPECT_EQ(pamt_fake_idle_pairs(), 0);
	make_idle(0, 5);
	EXPECT_EQ(pamt_fake_idle_pairs(), 5);
	for (i = 0; i < 12; i++)
		ASSERT(!pamt_pair_alloc(&p[i], GFP_KERNEL));
	for (i = 0; i < 12; i++)
		pamt_mag_push(&p[i]);
	/* The pairs in this CPU's magazine count too. */
	EXPECT_EQ(pamt_fake_idle_pairs(), 5 + 8);
}

/*
 * A slot that went idle and was not used since is removed on the first
 * look: reclaim frees the oldest at once, one index entry per pair.
 */
PAMT_TEST(shrink_fresh_idle_removed_at_first_look)
{
	unsigned long before, scanned = 0;

	env_cap(1000, 0);
	make_idle(0, 10);
	before = reclaim_work();
	EXPECT_EQ(pamt_fake_shrink_scan(1, &scanned), 1);
	EXPECT_EQ(scanned, 1);
	EXPECT_EQ(reclaim_work() - before, 1);
	EXPECT_EQ(slot_word(0), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_SHRINK), 1);
	EXPECT_EQ(pamt_fake_shrink_scan(pamt_fake_idle_pairs(), &scanned), 9);
	EXPECT_EQ(scanned, 9);
	EXPECT_EQ(reclaim_work() - before, 10);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 10);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
	EXPECT_EQ(atomic64_read(&pamt_fake.pairs), 0);
}

/*
 * Idle slots go in the order they were first queued: one that went idle
 * again while queued keeps its entry, and its place.
 */
PAMT_TEST(shrink_removes_in_queue_order)
{
	unsigned long scanned = 0, before;

	env_cap(1000, 0);
	make_idle(0, 4);
	make_idle(1, 1);
	before = reclaim_work();
	EXPECT_EQ(pamt_fake_shrink_scan(2, &scanned), 2);
	EXPECT_EQ(scanned, 2);
	EXPECT_EQ(slot_word(0), 0);
	EXPECT_EQ(slot_word(1), 0);
	EXPECT_EQ(slot_word(2), PAMT_SLOT_INSTALLED);
	EXPECT_EQ(pamt_fake_shrink_scan(2, &scanned), 2);
	EXPECT_EQ(slot_word(3), 0);
	EXPECT_EQ(reclaim_work() - before, 4);
	EXPECT_EQ(pamt_fake_idle_pairs(), 0);
}

/*
 * scan_objects as reclaim sees it (include/linux/shrinker.h): nr_scanned
 * is what was looked at, slots in use again included, never more than
 * asked; 0 freed is an answer; SHRINK_STOP only when nothing can be done
 * here.
 */
PAMT_TEST(shrink_scan_objects_keeps_the_contract)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	unsigned long before, s;

	env_cap(1000, 0);
	EXPECT_EQ(pamt.shrinker->count_objects(pamt.shrinker, &sc), SHRINK_EMPTY);
	sc.nr_to_scan = 4;
	sc.nr_scanned = 4;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), SHRINK_STOP);

	make_idle(0, 8);
	/* In use again, their entries queued still: looked at, none freed. */
	for (s = 0; s < 8; s++)
		EXPECT_EQ(tdx_pamt_get(slot_pfn(s, 0), NULL), 0);
	before = reclaim_work();
	sc.nr_to_scan = 8;
	sc.nr_scanned = 8;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), 0);
	EXPECT_EQ(sc.nr_scanned, 8);
	EXPECT_EQ(reclaim_work() - before, 8);
	for (s = 0; s < 8; s++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
	EXPECT_EQ(pamt.shrinker->count_objects(pamt.shrinker, &sc), 8);
	sc.nr_to_scan = 5;
	sc.nr_scanned = 5;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), 5);
	EXPECT_EQ(sc.nr_scanned, 5);
	EXPECT_EQ(reclaim_work() - before, 13);

	/* The module stays busy: stop after a bounded number of tries. */
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 0, 1000000);
	sc.nr_to_scan = 128;
	sc.nr_scanned = 128;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), SHRINK_STOP);
	EXPECT(fake_calls(PAMT_FAKE_REMOVE) <= 5 + 8 * PAMT_BUSY_CALLS_MAX);
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
	EXPECT_EQ(pamt.shrinker->count_objects(pamt.shrinker, &sc), 3);

	/* Fewer left than asked, some freed: the number, not SHRINK_STOP. */
	sc.nr_to_scan = 128;
	sc.nr_scanned = 128;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), 3);
	EXPECT_EQ(sc.nr_scanned, 3);
	EXPECT_EQ(pamt.shrinker->count_objects(pamt.shrinker, &sc), SHRINK_EMPTY);
	EXPECT(pamt_accounting_ok());
}

PAMT_TEST(shrink_respects_nr_to_scan)
{
	unsigned long scanned = 0;

	env_cap(1000, 0);
	make_idle(0, 10);
	EXPECT_EQ(pamt_fake_shrink_scan(3, &scanned), 3);
	EXPECT_EQ(scanned, 3);
	EXPECT_EQ(pamt_fake_idle_pairs(), 7);
}

PAMT_TEST(shrink_skips_active_slots)
{
	env_cap(1000, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), 0);
	make_idle(2, 1);
	EXPECT_EQ(pamt_fake_shrink_scan(10, NULL), 1);
	EXPECT_EQ(slot_word(1), PAMT_SLOT_INSTALLED | 1);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
}

/* The module stays busy: the scan gives up rather than spin. */
/*
 * A scan REMOVEs at most what it is asked, and frees some while idle
 * ranges are on its list: the ranges in use there (filed at install) are
 * taken off on the way, once each, a few at a time under the list's lock.
 */
PAMT_TEST(shrink_scan_is_bounded_by_nr_to_scan)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nr_to_scan = 8 };
	struct pamt_env_opts o = { .idle_cap = 1000, .nr_slots = 256 };
	unsigned long s, before;

	ASSERT(!pamt_env_up(&o));
	for (s = 0; s < 64; s++)	/* in use, on the list */
		ASSERT(!tdx_pamt_get(slot_pfn(s, 0), NULL));
	make_idle(64, 64);
	before = reclaim_work();
	/* Past the 64 in use, taken off on the way, to 8 idle ones. */
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), 8);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 8);
	EXPECT_EQ(reclaim_work() - before, 64 + 8);
	EXPECT_EQ(sc.nr_scanned, 8);
	sc.nr_to_scan = 40;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), 40);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 48);
	EXPECT_EQ(reclaim_work() - before, 64 + 48);
	for (s = 0; s < 64; s++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
	/* Their idle puts filed them again. */
	EXPECT_EQ(pamt.shrinker->count_objects(pamt.shrinker, &sc), 64 + 16);
}

/*
 * Reclaim aimed at one node (shrink_control.nid) takes the idle ranges
 * whose pairs are on that node, and no other.  The pairs come from a
 * reserve the test builds, half of them above the node boundary.
 */
PAMT_TEST(shrink_node_reclaim_takes_that_nodes_pairs)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct tdx_pamt_pair p[16];
	struct tdx_pamt_cache c;
	unsigned long s, on1 = 0;
	int i, j, below;

	env_cap(1000, 1);
	tdx_init_pamt_cache(&c);
	for (i = 0; i < 16; i++)
		ASSERT(!pamt_pair_alloc(&p[i], GFP_KERNEL));
	env.held_pairs = 16;
	/* Node 1 from the 9th pair on, in pfn order. */
	for (i = 0; i < 16; i++) {
		for (below = 0, j = 0; j < 16; j++)
			below += p[j].pfn[0] < p[i].pfn[0];
		if (below == 8)
			pamt_sim_node1_pfn = p[i].pfn[0];
	}
	for (s = 0; s < 16; s++) {
		/* The magazine is empty: the get takes the reserve's pair. */
		c.pairs[0] = p[s];
		c.nr = 1;
		ASSERT(!tdx_pamt_get(slot_pfn(s, 0), &c));
		EXPECT_EQ(c.nr, 0);
		env.held_pairs--;
		EXPECT_EQ(pamt.slots[s].nid, p[s].pfn[0] >= pamt_sim_node1_pfn);
		on1 += pamt.slots[s].nid;
	}
	for (s = 0; s < 16; s++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
	EXPECT_EQ(on1, 8);
	sc.nid = 1;
	EXPECT_EQ(pamt.shrinker->count_objects(pamt.shrinker, &sc), on1);
	sc.nr_to_scan = 64;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), on1);
	for (s = 0; s < 16; s++)
		EXPECT_EQ(pamt_slot_state(slot_word(s)),
			  pamt.slots[s].nid ? PAMT_SLOT_EMPTY : PAMT_SLOT_IDLE);
	sc.nid = 0;
	EXPECT_EQ(pamt.shrinker->scan_objects(pamt.shrinker, &sc), 16 - on1);
	pamt_sim_node1_pfn = ULONG_MAX;
}

PAMT_TEST(shrink_stops_on_busy)
{
	env_cap(1000, 0);
	make_idle(0, 20);
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 0, 1000000);
	EXPECT_EQ(pamt_fake_shrink_scan(20, NULL), 0);
	EXPECT(fake_calls(PAMT_FAKE_REMOVE) <= 8 * PAMT_BUSY_CALLS_MAX);
	EXPECT_EQ(pamt_fake_idle_pairs(), 20);
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
}

/* Two idle slots' pairs go back (magazines full), then three cached. */
PAMT_TEST(shrink_frees_magazine_pairs_after_idle_slots)
{
	struct tdx_pamt_pair p[12];
	int i;

	env_cap(1000, 8);
	make_idle(0, 2);
	for (i = 0; i < 12; i++)
		ASSERT(!pamt_pair_alloc(&p[i], GFP_KERNEL));
	for (i = 0; i < 12; i++)
		pamt_mag_push(&p[i]);
	EXPECT_EQ(pamt_fake_shrink_scan(5, NULL), 5);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 5);
}

/* Over the cap, put removes the oldest idle slot at once. */
PAMT_TEST(shrink_idle_cap_enforced_by_put)
{
	env_cap(4, 0);
	make_idle(0, 12);
	EXPECT(stat(TDX_PAMT_STAT_IDLE_SLOTS) <= 4);
	EXPECT(stat(TDX_PAMT_STAT_CAP) >= 8);
	EXPECT_EQ(slot_word(0), 0);
	EXPECT_EQ(pamt_slot_state(slot_word(11)), PAMT_SLOT_IDLE);
	EXPECT_EQ(stat(TDX_PAMT_STAT_SHRINK), 0);
}

/*
 * A put over the cap whose first 8 index entries are stale does not
 * REMOVE its own slot, the most recently used: the worker removes the
 * oldest idle slot instead.
 */
PAMT_TEST(shrink_cap_put_spares_its_own_slot)
{
	unsigned long s;

	env_cap(1000, 0);
	make_idle(0, 10);
	for (s = 0; s < 8; s++)		/* entries 0-7 go stale: in use */
		ASSERT(!tdx_pamt_get(slot_pfn(s, 0), NULL));
	set_idle_cap(2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	atomic_long_set(&pamt_sim_deferred, 0);
	make_idle(10, 1);
	EXPECT_EQ(pamt_slot_state(slot_word(10)), PAMT_SLOT_IDLE);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 0);
	EXPECT(atomic_long_read(&pamt_sim_deferred) > 0);
	run_deferred();
	EXPECT_EQ(slot_word(8), 0);
	EXPECT_EQ(pamt_slot_state(slot_word(9)), PAMT_SLOT_IDLE);
	EXPECT_EQ(pamt_slot_state(slot_word(10)), PAMT_SLOT_IDLE);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 2);
	for (s = 0; s < 8; s++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
	run_deferred();
	EXPECT(idle_memory() <= 2);
	EXPECT(pamt_accounting_ok());
}

PAMT_TEST(shrink_lowering_the_cap_trims_now)
{
	env_cap(1000, 0);
	make_idle(0, 12);
	EXPECT_EQ(READ_ONCE(pamt.idle_cap), 1000);
	set_idle_cap(3);
	EXPECT_EQ(READ_ONCE(pamt.idle_cap), 3);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 3);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CAP), 9);
}

PAMT_TEST(shrink_default_cap_is_a_quarter_of_slots)
{
	pamt_env_up_default();
	EXPECT_EQ(READ_ONCE(pamt.idle_cap), env.nr_slots / 4);
}

PAMT_TEST(evict_idle_slot)
{
	pamt_env_up_default();
	make_idle(3, 1);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(3, 100)), 0);
	EXPECT_EQ(slot_word(3), 0);
	EXPECT(!pamt_fake_range_has_pair(slot_pfn(3, 0)));
	EXPECT_EQ(stat(TDX_PAMT_STAT_REMOVE), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
	/* EMPTY: nothing to do */
	EXPECT_EQ(pamt_fake_evict(slot_pfn(3, 0)), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 1);
}

PAMT_TEST(evict_refuses_slot_in_use)
{
	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(3, 0), NULL));
	EXPECT_EQ(pamt_fake_evict(slot_pfn(3, 0)), -EBUSY);
	EXPECT_EQ(slot_word(3), PAMT_SLOT_INSTALLED | 1);
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 0);
	slot_set_word(4, PAMT_SLOT_TRANSIT);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(4, 0)), -EBUSY);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_TRANSIT);
	slot_set_word(4, 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), 0);
}

/*
 * Evict leaves the slot's entry on the idle LRU.  A drain must get past
 * more such stale entries than one reschedule budget (32) and still
 * REMOVE the idle slots queued behind them.
 */
PAMT_TEST(shrink_drain_gets_past_evicted_entries)
{
	unsigned long s;

	env_cap(1000, 0);
	make_idle(0, 40);
	for (s = 0; s < 36; s++)
		EXPECT_EQ(pamt_fake_evict(slot_pfn(s, 0)), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 4);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);
	EXPECT_EQ(atomic64_read(&pamt_fake.pairs), 0);
	EXPECT_EQ(pamt_sim_pages_in_use(), 0);
}
