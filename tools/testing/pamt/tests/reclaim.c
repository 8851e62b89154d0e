// SPDX-License-Identifier: GPL-2.0
/*
 * The shrinker under the kernel's own reclaim arithmetic: the registered
 * callbacks, driven by a replay of do_shrink_slab() (shim/shrink_slab.c)
 * through direct-reclaim attempts of 13 priorities each, at the default
 * idle cap, filled with fresh idle slots.
 */
#include <stdio.h>
#include "../harness.h"
#include "shrink_slab.h"

/* The page allocator gives up after this many attempts (MAX_RECLAIM_RETRIES). */
#define RECLAIM_ATTEMPTS	16

/* Index entries looked at per pair freed, at most. */
#define LOOKS_PER_PAIR		1

struct reclaim_run {
	unsigned long idle;		/* idle pairs before the first attempt */
	unsigned long left;		/* count_objects after the last */
	unsigned long attempts;		/* attempts made, at most 16 */
	unsigned long first;		/* first attempt that freed, 0: none */
	unsigned long freed, looks;	/* over all attempts */
	unsigned long over;		/* calls that freed over 2x their ask */
	unsigned long empty;		/* calls that scanned and freed none */
};

/*
 * One direct-reclaim attempt, as pamt_direct_reclaim(), one priority at a
 * time: each do_shrink_slab() frees at most twice what it asked, and one
 * that asked for a batch or more frees something.
 */
static unsigned long attempt(struct pamt_reclaim *r, struct reclaim_run *run)
{
	unsigned long freed = 0, asked, calls, n;
	int prio;

	printf("      freed at priority 12..0:");
	for (prio = DEF_PRIORITY; prio >= 0; prio--) {
		asked = r->asked;
		calls = r->calls;
		n = pamt_do_shrink_slab(r, prio);
		asked = r->asked - asked;
		printf(" %lu", n);
		if (n > 2 * asked)
			run->over++;
		if (r->calls > calls && !n)
			run->empty++;
		freed += n;
	}
	printf("\n");
	return freed;
}

/*
 * Cover @nr_slots 2M ranges with the default cap (a quarter of them),
 * make as many slots idle as the cap keeps, then reclaim until the cache
 * is empty or the page allocator would give up.
 */
static void reclaim_at(unsigned long nr_slots, struct reclaim_run *run)
{
	struct pamt_env_opts o = {
		.nr_slots = nr_slots,
		/* Room for a pair per idle slot, and then some. */
		.mem_slots = nr_slots / 1024 + 64,
	};
	struct pamt_reclaim r;
	unsigned long s, looks, freed, asked;

	*run = (struct reclaim_run) { 0 };
	ASSERT(!pamt_env_up(&o));
	for (s = 0; s < READ_ONCE(pamt.idle_cap); s++) {
		ASSERT(!tdx_pamt_get(slot_pfn(s, 0), NULL));
		ASSERT(!tdx_pamt_put(slot_pfn(s, 0)));
	}
	run->idle = pamt_fake_idle_pairs();
	pamt_reclaim_init(&r, pamt.shrinker);
	printf("    %lu GiB covered, %lu idle pairs (%lu in magazines):\n",
	       nr_slots * 2 / 1024, run->idle,
	       (unsigned long)stat(TDX_PAMT_STAT_CACHED_PAIRS));
	while (run->attempts < RECLAIM_ATTEMPTS && pamt_fake_idle_pairs()) {
		looks = reclaim_work();
		asked = r.asked;
		freed = attempt(&r, run);
		looks = reclaim_work() - looks;
		asked = r.asked - asked;
		run->attempts++;
		/* The worker, had the scan left it other CPUs' pairs. */
		if (atomic_long_xchg(&pamt_sim_deferred, 0))
			run_deferred();
		printf("      attempt %lu: asked %lu, freed %lu, %lu entries looked at\n",
		       run->attempts, asked, freed, looks);
		if (freed && !run->first)
			run->first = run->attempts;
		run->freed += freed;
		run->looks += looks;
	}
	run->left = pamt_fake_idle_pairs();
	printf("      first freed in attempt %lu; %lu in %lu attempts; %lu.%02lu entries/pair\n",
	       run->first, run->freed, run->attempts,
	       run->freed ? run->looks / run->freed : 0,
	       run->freed ? run->looks * 100 / run->freed % 100 : 0);
	EXPECT(pamt_accounting_ok());
	pamt_env_down();
}

static void expect_reclaim_in_proportion(const struct reclaim_run *run)
{
	EXPECT(run->idle > 0);
	/* The first attempt frees pairs; no call that scans comes back empty. */
	EXPECT_EQ(run->first, 1);
	EXPECT_EQ(run->empty, 0);
	/* No call, so no attempt, frees more than twice what it asked. */
	EXPECT_EQ(run->over, 0);
	/* O(1) work per pair: index entries looked at per pair freed. */
	EXPECT(run->freed > 0);
	EXPECT(run->looks <= LOOKS_PER_PAIR * run->freed);
	EXPECT_EQ(run->left, 0);
}

PAMT_TEST(reclaim_do_shrink_slab_128g)
{
	struct reclaim_run run;

	reclaim_at(64UL * 1024, &run);		/* 128 GiB */
	expect_reclaim_in_proportion(&run);
}

PAMT_TEST(reclaim_do_shrink_slab_1t)
{
	struct reclaim_run run;

	reclaim_at(512UL * 1024, &run);		/* 1 TiB */
	expect_reclaim_in_proportion(&run);
}
