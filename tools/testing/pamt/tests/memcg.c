// SPDX-License-Identifier: GPL-2.0
/*
 * Memory accounting, as the Documentation states it ("Memory
 * accounting"): a VM's memcg pays for the pairs of its reserve and for
 * each range whose pair a get with that reserve installed, until the
 * module hands the pair back.  Pair pages are charged as kmem pages when
 * they enter a reserve (memcg_kmem_charge_page()), never allocated with
 * __GFP_ACCOUNT; the shim keeps a byte counter per cgroup and the objcg
 * in the page (pamt_sim_objcg is the current task's).
 */
#include "../harness.h"

#define PAIR_BYTES	(2 * PAGE_SIZE)

static struct obj_cgroup cg_a, cg_b;

/* Pairs' worth of memory charged to @cg. */
static long charged(struct obj_cgroup *cg)
{
	long bytes = atomic_long_read(&cg->charged);

	EXPECT_EQ(bytes % PAIR_BYTES, 0);
	return bytes / PAIR_BYTES;
}

static long refs(struct obj_cgroup *cg)
{
	return atomic_long_read(&cg->refs);
}

/* Pair pages in the module, or anywhere: none allocated __GFP_ACCOUNT. */
static unsigned long pages_accounted(void)
{
	unsigned long pfn, n = 0;

	for (pfn = pamt_sim_base_pfn; pfn < pamt_sim_base_pfn + pamt_sim_nr_pages; pfn++)
		if (pamt_fake_is_pamt_page(pfn) && pamt_sim_pfn_accounted(pfn))
			n++;
	return n;
}

static void memcg_up(void)
{
	struct pamt_env_opts o = {
		.idle_cap = 100000,
	};

	memset(&cg_a, 0, sizeof(cg_a));
	memset(&cg_b, 0, sizeof(cg_b));
	if (pamt_env_up(&o))
		pamt_sim_fatal("environment", __FILE__, __LINE__);
}

/* A fault of the VM in @cg: top up (task context), then get under a lock. */
static int fault(struct obj_cgroup *cg, struct tdx_pamt_cache *c,
		 unsigned long pfn)
{
	int ret;

	pamt_sim_objcg = cg;
	ret = tdx_topup_pamt_cache(c, 4);
	env.held_pairs = c->nr;
	if (ret)
		return ret;
	/* mmu_lock held for read: atomic, but a sleeping lock on RT. */
	pamt_sim_enter_atomic();
	ret = tdx_pamt_get(pfn, c);
	pamt_sim_exit_atomic();
	env.held_pairs = c->nr;
	return ret;
}

static void vm_teardown(struct tdx_pamt_cache *c)
{
	tdx_free_pamt_cache(c);
	env.held_pairs = 0;
}

/*
 * The charge follows the range: a top-up charges the reserve, a get that
 * installs a pair moves one charge to the range, a get on an installed
 * or idle range charges nothing, a put leaves the idle range charged, and
 * reclaim drops the charge when the pair leaves.
 */
PAMT_TEST(memcg_charge_follows_range)
{
	struct tdx_pamt_cache c;

	memcg_up();
	tdx_init_pamt_cache(&c);

	EXPECT_EQ(fault(&cg_a, &c, slot_pfn(7, 0)), 0);
	/* Four charged by the top-up: one moved to the range. */
	EXPECT_EQ(charged(&cg_a), 3 + 1);
	EXPECT_EQ(refs(&cg_a), 2 * 4);	/* one per page charged */

	/* The next top-up charges the reserve again; a fast get nothing. */
	EXPECT_EQ(fault(&cg_a, &c, slot_pfn(7, 1)), 0);
	EXPECT_EQ(charged(&cg_a), 4 + 1);
	EXPECT_EQ(fault(&cg_a, &c, slot_pfn(8, 0)), 0);
	EXPECT_EQ(charged(&cg_a), 3 + 2);
	EXPECT_EQ(refs(&cg_a), 2 * 5);

	/* VM teardown: the reserve's charges go at once, the ranges' stay. */
	vm_teardown(&c);
	EXPECT_EQ(charged(&cg_a), 2);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(7, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(7, 1)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(8, 0)), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 2);
	EXPECT_EQ(charged(&cg_a), 2);

	/* Another VM revives an idle range: no SEAMCALL, no new charge. */
	EXPECT_EQ(fault(&cg_b, &c, slot_pfn(7, 3)), 0);
	EXPECT_EQ(charged(&cg_b), 4);
	EXPECT_EQ(charged(&cg_a), 2);
	vm_teardown(&c);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(7, 3)), 0);
	EXPECT_EQ(charged(&cg_b), 0);

	EXPECT_EQ(pages_accounted(), 0);
	/* Reclaim: every pair leaves its range, every charge goes. */
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(charged(&cg_a), 0);
	EXPECT_EQ(refs(&cg_a), 0);
	EXPECT_EQ(refs(&cg_b), 0);
}

/* Install @n ranges from slot @first for @cg, leave them idle. */
static void idle_ranges(struct obj_cgroup *cg, unsigned long first,
			unsigned long n)
{
	struct tdx_pamt_cache c;
	unsigned long s;

	tdx_init_pamt_cache(&c);
	for (s = first; s < first + n; s++)
		EXPECT_EQ(fault(cg, &c, slot_pfn(s, 0)), 0);
	vm_teardown(&c);
	for (s = first; s < first + n; s++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(s, 0)), 0);
	EXPECT_EQ(charged(cg), n);
}

/* Each way a pair leaves its range drops the charge. */
PAMT_TEST(memcg_uncharge_on_evict_shrink_cap_drain)
{
	unsigned long scanned, tries;

	memcg_up();
	idle_ranges(&cg_a, 0, 3);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(1, 0)), 0);
	EXPECT_EQ(charged(&cg_a), 2);

	/* The shrinker, in the kernel's batches, until nothing is idle. */
	for (tries = 0; stat(TDX_PAMT_STAT_IDLE_SLOTS) && tries < 16; tries++)
		pamt_fake_shrink_scan(128, &scanned);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(charged(&cg_a), 0);

	/* The idle cap. */
	idle_ranges(&cg_a, 4, 4);
	set_idle_cap(1);
	run_deferred();
	EXPECT(stat(TDX_PAMT_STAT_IDLE_SLOTS) <= 1);
	EXPECT_EQ(charged(&cg_a), stat(TDX_PAMT_STAT_IDLE_SLOTS));
	set_idle_cap(100000);

	/* A full drain, as at exit. */
	tdx_pamt_drain();
	EXPECT_EQ(charged(&cg_a), 0);
	EXPECT_EQ(refs(&cg_a), 0);
}

/*
 * A memcg's own reclaim (shrink_control.memcg, as shrink_slab() calls a
 * SHRINKER_MEMCG_AWARE shrinker) reaches its idle ranges and only them:
 * their charges go, another VM's stay.
 */
PAMT_TEST(memcg_reclaim_takes_its_own_idle_ranges)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct shrinker *s;

	memcg_up();
	s = pamt.shrinker;
	idle_ranges(&cg_a, 0, 6);
	idle_ranges(&cg_b, 10, 4);
	sc.memcg = obj_cgroup_memcg(&cg_a);
	EXPECT_EQ(s->count_objects(s, &sc), 6);
	sc.memcg = obj_cgroup_memcg(&cg_b);
	EXPECT_EQ(s->count_objects(s, &sc), 4);
	/* The root's lists hold neither VM's ranges: only free pairs. */
	sc.memcg = NULL;
	EXPECT_EQ(s->count_objects(s, &sc),
		  stat(TDX_PAMT_STAT_CACHED_PAIRS) ?: SHRINK_EMPTY);

	sc.memcg = obj_cgroup_memcg(&cg_a);
	sc.nr_to_scan = 4;
	EXPECT_EQ(s->scan_objects(s, &sc), 4);
	EXPECT_EQ(charged(&cg_a), 2);
	EXPECT_EQ(charged(&cg_b), 4);
	sc.nr_to_scan = 128;
	EXPECT_EQ(s->scan_objects(s, &sc), 2);
	EXPECT_EQ(charged(&cg_a), 0);
	EXPECT_EQ(refs(&cg_a), 0);
	EXPECT_EQ(s->count_objects(s, &sc), SHRINK_EMPTY);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 4);
	EXPECT_EQ(charged(&cg_b), 4);
	tdx_pamt_drain();
	EXPECT_EQ(charged(&cg_b), 0);
}

/*
 * A pair the module lost (REMOVE answers NO_PAMT_PAGE_PAIR) keeps its
 * charge in its pages, which the cache can no longer name; whoever frees
 * them drops it, as for any kmem page.
 */
PAMT_TEST(memcg_lost_pair_charge_leaves_with_its_pages)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nr_to_scan = 1 };
	struct tdx_pamt_pair p;

	memcg_up();
	idle_ranges(&cg_a, 4, 1);
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_NO_PAGE_PAIR, 1, 0);
	/* cg_a's own reclaim: the root's would free a free pair first. */
	sc.memcg = obj_cgroup_memcg(&cg_a);
	pamt.shrinker->scan_objects(pamt.shrinker, &sc);
	EXPECT_EQ(slot_word(4), 0);
	EXPECT_EQ(charged(&cg_a), 1);
	/* The injection left the fake holding the pair: free its pages. */
	EXPECT_EQ(pamt_fake_ops.remove(slot_pfn(4, 0), &p), 0);
	__free_page(pfn_to_page(p.pfn[0]));
	__free_page(pfn_to_page(p.pfn[1]));
	pamt_stat_add(PAGE_FREE, 2);
	EXPECT_EQ(charged(&cg_a), 0);
	EXPECT_EQ(refs(&cg_a), 0);
}

/*
 * What is not charged: a get without a reserve, a reserve topped up
 * without __GFP_ACCOUNT, the root memcg.  When the task moves, the pairs
 * its reserve holds keep their charge, as any kmem page does, and new
 * ones are charged to the new memcg.  Over a memcg's limit the top-up
 * fails, keeping the pairs it could charge.
 */
PAMT_TEST(memcg_what_is_not_charged_and_limits)
{
	struct tdx_pamt_cache c;
	struct obj_cgroup root = { .root = true };

	memcg_up();
	tdx_init_pamt_cache(&c);
	pamt_sim_objcg = &cg_a;
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 0), NULL), 0);
	EXPECT_EQ(__tdx_topup_pamt_cache(&c, 2, GFP_KERNEL), 0);
	env.held_pairs = c.nr;
	EXPECT_EQ(tdx_pamt_get(slot_pfn(2, 0), &c), 0);
	EXPECT_EQ(charged(&cg_a), 0);
	EXPECT_EQ(fault(&root, &c, slot_pfn(3, 0)), 0);
	EXPECT_EQ(refs(&root), 0);
	vm_teardown(&c);

	/* The task moves from A to B: the get takes B's pair, last in. */
	EXPECT_EQ(fault(&cg_a, &c, slot_pfn(4, 0)), 0);
	EXPECT_EQ(charged(&cg_a), 3 + 1);
	EXPECT_EQ(fault(&cg_b, &c, slot_pfn(5, 0)), 0);
	EXPECT_EQ(charged(&cg_a), 3 + 1);
	EXPECT_EQ(charged(&cg_b), 1);
	vm_teardown(&c);
	EXPECT_EQ(charged(&cg_a), 1);
	EXPECT_EQ(refs(&cg_a), 2);

	/* At B's limit: -ENOMEM; the reserve keeps the two pairs charged. */
	cg_b.limit = 3 * PAIR_BYTES;
	EXPECT_EQ(fault(&cg_b, &c, slot_pfn(6, 0)), -ENOMEM);
	EXPECT_EQ(c.nr, 2);
	EXPECT_EQ(charged(&cg_b), 1 + 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 5);
	vm_teardown(&c);
	EXPECT_EQ(charged(&cg_b), 1);

	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(2, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 0)), 0);
	tdx_pamt_drain();
	EXPECT_EQ(refs(&cg_a), 0);
	EXPECT_EQ(refs(&cg_b), 0);
}

/*
 * TD control pages are charged as pages; their range as a fault's is.
 * Over the memcg's limit none is handed out, and no pair goes in.
 */
PAMT_TEST(memcg_control_page_charges_page_and_range)
{
	struct page *page;

	memcg_up();
	pamt_sim_objcg = &cg_a;
	cg_a.limit = PAIR_BYTES - 1;
	EXPECT(!tdx_alloc_control_page());
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);
	EXPECT_EQ(charged(&cg_a), 0);
	cg_a.limit = 0;
	page = tdx_alloc_control_page();
	ASSERT(page);
	env.held_pages++;
	EXPECT(pamt_sim_pfn_accounted(page_to_pfn(page)));
	EXPECT_EQ(pages_accounted(), 0);
	EXPECT_EQ(charged(&cg_a), 1);
	EXPECT_EQ(refs(&cg_a), 2);
	tdx_free_control_page(page);
	env.held_pages--;
	EXPECT_EQ(charged(&cg_a), 1);
	tdx_pamt_drain();
	EXPECT_EQ(charged(&cg_a), 0);
	EXPECT_EQ(refs(&cg_a), 0);
}
