// SPDX-License-Identifier: GPL-2.0
/*
 * The counters mean what asm/tdx_pamt.h says, and the ordering of the
 * transitions that take a slot holds under ThreadSanitizer.
 */
#include "../harness.h"

/* What the test itself saw, to hold the counters against. */
struct counted {
	long gets, puts, add_failed, remove_puts, adds_ok;
};

static void random_ops(unsigned long nr_slots, long ops, struct counted *c)
{
	unsigned int refs[16] = { 0 };
	long i, removes, adds;
	unsigned long s;
	int ret;

	for (i = 0; i < ops; i++) {
		s = get_random_u32_below(nr_slots);
		if (!refs[s] || (refs[s] < 3 && get_random_u32_below(2))) {
			adds = atomic64_read(&pamt_fake.ok[PAMT_FAKE_ADD]);
			ret = tdx_pamt_get(slot_pfn(s, i % 512), NULL);
			c->adds_ok += atomic64_read(&pamt_fake.ok[PAMT_FAKE_ADD]) -
				      adds;
			if (!ret) {
				refs[s]++;
				c->gets++;
			} else {
				EXPECT_EQ(ret, -EIO);
				c->add_failed++;
			}
		} else {
			removes = fake_calls(PAMT_FAKE_REMOVE);
			EXPECT_EQ(tdx_pamt_put(slot_pfn(s, i % 512)), 0);
			refs[s]--;
			c->puts++;
			c->remove_puts += fake_calls(PAMT_FAKE_REMOVE) != removes;
		}
	}
	for (s = 0; s < nr_slots; s++) {
		while (refs[s]--) {
			removes = fake_calls(PAMT_FAKE_REMOVE);
			EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
			c->puts++;
			c->remove_puts += fake_calls(PAMT_FAKE_REMOVE) != removes;
		}
	}
}

/*
 * get_fast + revive + get_slow = successful gets; get_slow = successful
 * PAMT.ADDs; a failed ADD counts in add_failed; put_fast + put_slow =
 * puts, where put_slow is a put that issued a REMOVE itself (the idle
 * cap's sweep).
 */
PAMT_TEST(counters_identities)
{
	struct pamt_env_opts o = {
		.nr_slots = 16, .idle_cap = 2, .mag_size = 8,
	};
	struct counted c = { 0 };
	u64 v[TDX_PAMT_STAT_NR];

	ASSERT(!pamt_env_up(&o));
	pamt_sim_seed(7);
	/* ADD fails now and then, as a module out of pair pages would. */
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 0, 50000);
	random_ops(16, 4000, &c);
	pamt_fake_inject(PAMT_FAKE_ADD, 0, 0, 0);

	stats_snapshot(v);
	EXPECT(c.add_failed > 0);
	EXPECT(c.remove_puts > 0);
	EXPECT_EQ(v[TDX_PAMT_STAT_GET_FAST] + v[TDX_PAMT_STAT_REVIVE] +
		  v[TDX_PAMT_STAT_GET_SLOW], c.gets);
	EXPECT_EQ(v[TDX_PAMT_STAT_GET_SLOW], c.adds_ok);
	EXPECT_EQ(v[TDX_PAMT_STAT_ADD_FAILED], c.add_failed);
	EXPECT_EQ(v[TDX_PAMT_STAT_PUT_FAST] + v[TDX_PAMT_STAT_PUT_SLOW], c.puts);
	EXPECT_EQ(v[TDX_PAMT_STAT_PUT_SLOW], c.remove_puts);
	EXPECT(v[TDX_PAMT_STAT_CAP] > 0);
}

/*
 * cached_pairs sums per-CPU deltas: a pair pushed on CPU 0 and popped on
 * CPU 1, read racily as popped only, sums to -1.  The gauge reads 0, as
 * idle_slots does, not 2^64 - 1.
 */
PAMT_TEST(counters_cached_pairs_never_wraps)
{
	struct tdx_pamt_pair p;
	u64 *cpu0, *cpu1;

	pamt_env_up_default();
	ASSERT(!take_pair(&p));
	pamt_mag_push(&p);			/* CPU 0: +1 */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);

	/*
	 * A reader's view while CPU 1 takes a pair that CPU 0 gave:
	 * CPU 0 read before its push (0), CPU 1 after its pop (-1).
	 */
	cpu0 = &per_cpu_ptr(pamt.pcpu, 0)->stat[PAMT_PCPU_CACHED];
	cpu1 = &per_cpu_ptr(pamt.pcpu, 1)->stat[PAMT_PCPU_CACHED];
	*cpu0 -= 1;
	*cpu1 -= 1;
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	*cpu0 += 1;
	*cpu1 += 1;
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
}

/*
 * The 0<->1 steps write no shared gauge: a slot going idle and reviving,
 * again and again on one CPU, leaves the shared struct pamt_cache as it
 * was but for at most one fold of this CPU's change into pamt.held.
 */
PAMT_TEST(counters_idle_revive_write_no_shared_gauge)
{
	struct pamt_cache seen;
	unsigned int i, moved = 0;

	pamt_env_up_default();
	ASSERT(!tdx_pamt_get(slot_pfn(3, 0), NULL));
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), 0);
	seen = pamt;
	for (i = 0; i < 4 * PAMT_HELD_BATCH; i++) {
		if (i % 2)
			EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), 0);
		else
			EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 0), NULL), 0);
		moved += !!memcmp(&seen, &pamt, sizeof(pamt));
		seen = pamt;
	}
	EXPECT_EQ(stat(TDX_PAMT_STAT_REVIVE), 2 * PAMT_HELD_BATCH);
	EXPECT(moved <= 1);
}

/*
 * Idle memory is in meminfo's KReclaimable (NR_KERNEL_MISC_RECLAIMABLE),
 * 2 pages a pair, to the page, and leaves it with a drain.
 */
PAMT_TEST(counters_meminfo_follows_idle_memory)
{
	long pairs;
	unsigned int i;

	pamt_env_up_default();
	/* Below the default idle cap, a quarter of the 64 slots. */
	for (i = 0; i < 12; i++) {
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
		EXPECT_EQ(tdx_pamt_put(slot_pfn(i, 0)), 0);
	}
	pairs = stat(TDX_PAMT_STAT_IDLE_SLOTS) + stat(TDX_PAMT_STAT_CACHED_PAIRS);
	EXPECT(pairs >= 12);
	EXPECT_EQ(pamt_sim_node_stat(0, NR_KERNEL_MISC_RECLAIMABLE), 2 * pairs);
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS) + stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(pamt_sim_node_stat(0, NR_KERNEL_MISC_RECLAIMABLE), 0);
}

static long node0(void)
{
	return pamt_sim_node_stat(0, NR_KERNEL_MISC_RECLAIMABLE);
}

static long node1(void)
{
	return pamt_sim_node_stat(1, NR_KERNEL_MISC_RECLAIMABLE);
}

/*
 * meminfo counts each idle pair on the node of its pages: in a magazine,
 * and installed in an IDLE slot.  16 pairs, the upper 8 by pfn on node 1;
 * each goes into a magazine, out again into a slot, and idle there.
 */
PAMT_TEST(counters_meminfo_per_node)
{
	struct pamt_env_opts o = { .idle_cap = 1000, .mag_size = 16 };
	struct tdx_pamt_pair p[16], got;
	int i, j, below;

	ASSERT(!pamt_env_up(&o));
	for (i = 0; i < 16; i++)
		ASSERT(!pamt_pair_alloc(&p[i], GFP_KERNEL));
	for (i = 0; i < 16; i++) {
		for (below = 0, j = 0; j < 16; j++)
			below += p[j].pfn[0] < p[i].pfn[0];
		if (below == 8)
			pamt_sim_node1_pfn = p[i].pfn[0];
	}
	for (i = 0; i < 16; i++)
		pamt_mag_push(&p[i]);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 16);
	EXPECT_EQ(node0(), 2 * 8);
	EXPECT_EQ(node1(), 2 * 8);
	/* Popped: out of meminfo, whatever node. */
	ASSERT(pamt_mag_pop(&got));
	EXPECT_EQ(node0() + node1(), 2 * 15);
	EXPECT_EQ(got.pfn[0] >= pamt_sim_node1_pfn ? node1() : node0(), 2 * 7);
	pamt_mag_push(&got);
	/* Each get takes a magazine pair; the puts leave its slot IDLE. */
	for (i = 0; i < 16; i++)
		ASSERT(!tdx_pamt_get(slot_pfn(i, 0), NULL));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(node0() + node1(), 0);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(i, 0)), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 16);
	EXPECT_EQ(node0(), 2 * 8);
	EXPECT_EQ(node1(), 2 * 8);
	tdx_pamt_drain();
	EXPECT_EQ(node0(), 0);
	EXPECT_EQ(node1(), 0);
	pamt_sim_node1_pfn = ULONG_MAX;
}

static void held_softirq_put(void)
{
	pamt_held_add(1);
}

/*
 * A softirq that runs between a task's add to its CPU's idle-memory delta
 * and the fold (IRQ exit on !PREEMPT_RT) folds the task's change too; the
 * task's fold then moves nothing more.  Subtracting what it had read would
 * leave pamt.held 96 over and the delta 96 under, past the stated slack.
 */
PAMT_TEST(counters_held_fold_survives_a_softirq)
{
	long *delta;

	pamt_env_up_default();
	delta = (long *)&this_cpu_ptr(pamt.pcpu)->stat[PAMT_PCPU_HELD];
	atomic_long_set(&pamt.held, 0);
	*delta = 0;
	pamt_sim_add_return_hook = held_softirq_put;
	pamt_held_add(96);		/* a refill's reservation */
	EXPECT(!pamt_sim_add_return_hook);
	EXPECT_EQ(atomic_long_read(&pamt.held), 97);
	EXPECT_EQ(*delta, 0);

	pamt_sim_add_return_hook = held_softirq_put;
	pamt_held_add(-96);		/* given back unused */
	EXPECT_EQ(atomic_long_read(&pamt.held), 2);
	EXPECT_EQ(*delta, 0);
	pamt_held_add(-2);
}
