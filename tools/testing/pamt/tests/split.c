// SPDX-License-Identifier: GPL-2.0
/*
 * DEMOTE and PROMOTE through the slot layer: tdx_pamt_demote() and
 * tdx_pamt_promote() around the fake module's TDH.MEM.PAGE.DEMOTE and
 * TDH.MEM.PAGE.PROMOTE, as KVM's split and merge hooks will call them.
 */
#include <pthread.h>
#include "../harness.h"

/* KVM's side: the range's base pfn, and the status the SEAMCALL gave. */
struct split_arg {
	unsigned long base;
	u64 status;
};

static u64 split_demote(const struct tdx_pamt_pair *pair, void *arg)
{
	struct split_arg *a = arg;

	/* Inside the transition: preemption off, as on every kernel. */
	if (!pamt_sim_raw_depth)
		pamt_sim_fatal("DEMOTE outside the transition", __FILE__, __LINE__);
	a->status = pamt_fake_page_demote(a->base, pair);
	return a->status;
}

static u64 split_promote(struct tdx_pamt_pair *pair, void *arg)
{
	struct split_arg *a = arg;

	if (!pamt_sim_raw_depth)
		pamt_sim_fatal("PROMOTE outside the transition", __FILE__, __LINE__);
	a->status = pamt_fake_page_promote(a->base, pair);
	return a->status;
}

#define W_SPLIT		(PAMT_SLOT_INSTALLED | TDX_PAMT_PAGES_PER_SLOT)

/* A TD maps slot @s at 2M, as KVM does after tdx_pamt_evict() said 0. */
static void map_2m(unsigned long s)
{
	EXPECT_EQ(tdx_pamt_evict(slot_pfn(s, 0)), 0);
	EXPECT_EQ(pamt_fake_page_aug_2m(slot_pfn(s, 0)), TDX_PAMT_SUCCESS);
}

/* KVM removes every 4K page of a split range, a put after each. */
static void unmap_4k_all(unsigned long s)
{
	unsigned long i, bad = 0;

	for (i = 0; i < TDX_PAMT_PAGES_PER_SLOT; i++) {
		bad += pamt_fake_page_remove(slot_pfn(s, i)) != TDX_PAMT_SUCCESS;
		bad += tdx_pamt_put(slot_pfn(s, i)) != 0;
	}
	EXPECT_EQ(bad, 0);
}

/*
 * The DEMOTE case: after a 2M map (evict gave 0), DEMOTE installs
 * a pair and maps 512 4K pages.  The slot must learn both, or each 4K put
 * warns "no reference" and a later get issues an ADD that fails for good.
 */
PAMT_TEST(split_demote_then_unmap_4k)
{
	struct split_arg a;
	long adds;

	pamt_env_up_default();
	a.base = slot_pfn(5, 0);
	ASSERT(!tdx_pamt_get(slot_pfn(5, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(5, 0)));
	map_2m(5);
	adds = fake_calls(PAMT_FAKE_ADD);

	EXPECT_EQ(tdx_pamt_demote(slot_pfn(5, 7), NULL, split_demote, &a), 0);
	EXPECT_EQ(a.status, TDX_PAMT_SUCCESS);
	EXPECT_EQ(slot_word(5), W_SPLIT);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(5, 0)));
	EXPECT(!pamt_fake_range_mapped_2m(slot_pfn(5, 0)));
	EXPECT_EQ(stat(TDX_PAMT_STAT_DEMOTE), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 1);
	/* The pair came from the magazine the first REMOVE filled. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);

	/* A 4K get on a split range is a fast one; its put too. */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(5, 3), NULL), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 3)), 0);
	unmap_4k_all(5);
	EXPECT_EQ(slot_word(5), PAMT_SLOT_INSTALLED);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);

	/* The range is an ordinary idle one: revived without an ADD ... */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(5, 9), NULL), 0);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(5, 9)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), adds);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(5, 9)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 9)), 0);
	/* ... and evicted with a REMOVE that hands the pair back. */
	EXPECT_EQ(tdx_pamt_evict(slot_pfn(5, 0)), 0);
	EXPECT(!pamt_fake_range_has_pair(slot_pfn(5, 0)));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
}

/*
 * The PROMOTE case: PROMOTE hands the pair back; the slot must be
 * EMPTY after it, or a revive issues no ADD and PAGE.AUG fails with
 * MISSING_PAMT_PAGE_PAIR.
 */
PAMT_TEST(split_promote_gives_pair_back)
{
	struct split_arg a;
	long adds;

	pamt_env_up_default();
	a.base = slot_pfn(6, 0);
	map_2m(6);
	ASSERT(!tdx_pamt_demote(slot_pfn(6, 0), NULL, split_demote, &a));
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);

	EXPECT_EQ(tdx_pamt_promote(slot_pfn(6, 511), split_promote, &a), 0);
	EXPECT_EQ(a.status, TDX_PAMT_SUCCESS);
	EXPECT_EQ(slot_word(6), 0);
	EXPECT(!pamt_fake_range_has_pair(slot_pfn(6, 0)));
	EXPECT(pamt_fake_range_mapped_2m(slot_pfn(6, 0)));
	EXPECT_EQ(stat(TDX_PAMT_STAT_PROMOTE), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);

	/* The TD unmaps the 2M page; a 4K use later ADDs a pair first. */
	EXPECT_EQ(pamt_fake_page_remove_2m(slot_pfn(6, 0)), TDX_PAMT_SUCCESS);
	adds = fake_calls(PAMT_FAKE_ADD);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 4), NULL), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), adds + 1);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(6, 4)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(6, 4)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(6, 4)), 0);
}

/*
 * A DEMOTE that cannot or does not happen changes nothing, loses nothing
 * but a pair the module refused.
 */
PAMT_TEST(split_demote_refusals_change_nothing)
{
	struct split_arg a;
	struct tdx_pamt_cache res = { 0 };
	struct tdx_pamt_pair lost;
	struct pamt_env_opts o = { .hole = true };
	unsigned long hole;
	long demotes;

	ASSERT(!pamt_env_up(&o));
	a.base = slot_pfn(3, 0);
	hole = slot_pfn(env.nr_slots / 2, 0);
	EXPECT_EQ(tdx_pamt_demote(hole, NULL, split_demote, &a), -EINVAL);

	/* IDLE or ACTIVE: the range has a pair; no DEMOTE is issued. */
	ASSERT(!tdx_pamt_get(slot_pfn(3, 0), NULL));
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(3, 0), NULL, split_demote, &a), -EBUSY);
	EXPECT_EQ(slot_word(3), PAMT_SLOT_INSTALLED | 1);
	ASSERT(!tdx_pamt_put(slot_pfn(3, 0)));
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(3, 0), NULL, split_demote, &a), -EBUSY);
	EXPECT_EQ(slot_word(3), PAMT_SLOT_INSTALLED);
	EXPECT_EQ(fake_calls(PAMT_FAKE_DEMOTE), 0);
	map_2m(3);

	/* The pair evict handed back goes to a reserve: no pair anywhere. */
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 1);
	ASSERT(!__tdx_topup_pamt_cache(&res, 1, GFP_KERNEL));
	env.held_pairs = 1;
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);
	demotes = fake_calls(PAMT_FAKE_DEMOTE);
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(3, 0), NULL, split_demote, &a), -ENOMEM);
	EXPECT_EQ(slot_word(3), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_DEMOTE), demotes);

	/* The module answers BUSY, then an error: the pair goes back to @res. */
	pamt_fake_inject(PAMT_FAKE_DEMOTE, TDX_PAMT_OPERAND_BUSY, 1, 0);
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(3, 0), &res, split_demote, &a), -EBUSY);
	EXPECT_EQ(res.nr, 1);
	EXPECT_EQ(slot_word(3), 0);
	pamt_fake_inject(PAMT_FAKE_DEMOTE, PAMT_FAKE_NOT_MAPPED_2M, 1, 0);
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(3, 0), &res, split_demote, &a), -EIO);
	EXPECT_EQ(res.nr, 1);
	EXPECT_EQ(slot_word(3), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_DEMOTE), 0);
	EXPECT(pamt_fake_range_mapped_2m(slot_pfn(3, 0)));
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);

	/* A pair page the module says is in use: that pair is leaked. */
	lost = res.pairs[0];
	pamt_fake_inject(PAMT_FAKE_DEMOTE, TDX_PAMT_PAGE_NOT_FREE, 1, 0);
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(3, 0), &res, split_demote, &a), -EIO);
	EXPECT_EQ(res.nr, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_LEAKED), 1);
	EXPECT(pamt_accounting_ok());

	/* And it works with a new reserve's pair. */
	ASSERT(!__tdx_topup_pamt_cache(&res, 1, GFP_KERNEL));
	EXPECT(memcmp(&res.pairs[0], &lost, sizeof(lost)));
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(3, 0), &res, split_demote, &a), 0);
	EXPECT_EQ(res.nr, 0);
	unmap_4k_all(3);
	pamt_pair_free(&lost);
	env.held_pairs = 0;
}

/* A PROMOTE that cannot or does not happen leaves the slot as it was. */
PAMT_TEST(split_promote_refusals_change_nothing)
{
	struct split_arg a;

	pamt_env_up_default();
	a.base = slot_pfn(4, 0);
	EXPECT_EQ(tdx_pamt_promote(slot_pfn(4, 0), split_promote, &a), -EBUSY);
	EXPECT_EQ(slot_word(4), 0);
	map_2m(4);
	ASSERT(!tdx_pamt_demote(slot_pfn(4, 0), NULL, split_demote, &a));

	/* One page unmapped (511 references), or one more user (513). */
	EXPECT_EQ(pamt_fake_page_remove(slot_pfn(4, 0)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 0)), 0);
	EXPECT_EQ(tdx_pamt_promote(slot_pfn(4, 0), split_promote, &a), -EBUSY);
	EXPECT_EQ(slot_word(4), W_SPLIT - 1);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 0), NULL), 0);
	EXPECT_EQ(pamt_fake_page_aug(slot_pfn(4, 0)), TDX_PAMT_SUCCESS);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 0), NULL), 0);
	EXPECT_EQ(tdx_pamt_promote(slot_pfn(4, 0), split_promote, &a), -EBUSY);
	EXPECT_EQ(slot_word(4), W_SPLIT + 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 0)), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_PROMOTE), 0);

	/* The module answers BUSY, then refuses: the word is put back. */
	pamt_fake_inject(PAMT_FAKE_PROMOTE, TDX_PAMT_OPERAND_BUSY, 1, 0);
	EXPECT_EQ(tdx_pamt_promote(slot_pfn(4, 0), split_promote, &a), -EBUSY);
	EXPECT_EQ(slot_word(4), W_SPLIT);
	pamt_fake_inject(PAMT_FAKE_PROMOTE, PAMT_FAKE_PROMOTE_REFUSED, 1, 0);
	EXPECT_EQ(tdx_pamt_promote(slot_pfn(4, 0), split_promote, &a), -EIO);
	EXPECT_EQ(slot_word(4), W_SPLIT);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(4, 0)));
	EXPECT_EQ(stat(TDX_PAMT_STAT_PROMOTE), 0);
	unmap_4k_all(4);
}

/* A PROMOTE that merges, then hands the cache @bad instead of its pair. */
struct split_bad {
	struct split_arg a;
	struct tdx_pamt_pair real;
	struct tdx_pamt_pair bad;
	bool dup;
};

static u64 split_promote_bad(struct tdx_pamt_pair *pair, void *arg)
{
	struct split_bad *b = arg;
	u64 status = split_promote(&b->real, &b->a);

	*pair = b->bad;
	if (b->dup) {
		pair->pfn[0] = b->real.pfn[0];
		pair->pfn[1] = b->real.pfn[0];
	}
	return status;
}

/*
 * PROMOTE's output is checked as REMOVE's is: a pair that is not two
 * distinct valid pages is never cached nor freed.  The merge happened,
 * so the slot is EMPTY and the call answers 0; the pages are counted
 * as leaked.
 */
PAMT_TEST(split_promote_bad_pair_is_not_trusted)
{
	const unsigned long far = PAMT_ENV_BASE_PFN + (1UL << 30);
	struct split_bad b;
	unsigned long s = 4, bad_pfns[][2] = {
		{ 0, 0 },			/* nothing filled in */
		{ far, far + 1 },		/* no such memory */
		{ PAMT_ENV_BASE_PFN, 0 },	/* one page only */
		{ 0, 0 },			/* one page twice: dup */
	};
	unsigned int i;
	long cached;

	pamt_env_up_default();
	b.a.base = slot_pfn(s, 0);
	map_2m(s);
	for (i = 0; i < ARRAY_SIZE(bad_pfns); i++) {
		ASSERT(!tdx_pamt_demote(slot_pfn(s, 0), NULL, split_demote,
					&b.a));
		cached = stat(TDX_PAMT_STAT_CACHED_PAIRS);
		b.bad.pfn[0] = bad_pfns[i][0];
		b.bad.pfn[1] = bad_pfns[i][1];
		b.dup = i == 3;
		EXPECT_EQ(tdx_pamt_promote(slot_pfn(s, 0), split_promote_bad,
					   &b), 0);
		EXPECT_EQ(b.a.status, TDX_PAMT_SUCCESS);
		EXPECT_EQ(slot_word(s), 0);
		EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);
		EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), cached);
		EXPECT_EQ(stat(TDX_PAMT_STAT_LEAKED), i + 1);
		EXPECT(pamt_fake_range_mapped_2m(slot_pfn(s, 0)));
		/* The test knows the real pages: give them back. */
		__free_page(pfn_to_page(b.real.pfn[0]));
		__free_page(pfn_to_page(b.real.pfn[1]));
		pamt_stat_add(PAGE_FREE, 2);
	}
	env.expect_warnings = i;
}

/* With the cache off (no Dynamic PAMT) the SEAMCALL runs without a pair. */
static u64 nopair_seen;

static u64 split_nopair(const struct tdx_pamt_pair *pair, void *arg)
{
	nopair_seen = pair ? 1 : 2;
	return TDX_PAMT_SUCCESS;
}

static u64 merge_nopair(struct tdx_pamt_pair *pair, void *arg)
{
	nopair_seen = pair ? 1 : 3;
	return TDX_PAMT_OPERAND_BUSY;
}

PAMT_TEST(split_cache_off_calls_without_pair)
{
	EXPECT(!tdx_pamt_enabled());
	EXPECT_EQ(tdx_pamt_demote(0x12345, NULL, split_nopair, NULL), 0);
	EXPECT_EQ(nopair_seen, 2);
	EXPECT_EQ(tdx_pamt_promote(0x12345, merge_nopair, NULL), -EBUSY);
	EXPECT_EQ(nopair_seen, 3);
}

/*
 * DEMOTE owns the slot: while the module holds the DEMOTE open, evict and
 * the shrinker back off, and a get waits for it, then takes one more
 * reference with no ADD of its own.
 */
struct split_race {
	struct split_arg a;
	int ret;
};

static void *split_race_demote(void *arg)
{
	struct split_race *r = arg;

	pamt_sim_set_cpu(1);
	r->ret = tdx_pamt_demote(r->a.base, NULL, split_demote, &r->a);
	return NULL;
}

static void *split_race_get(void *arg)
{
	struct split_race *r = arg;

	pamt_sim_set_cpu(2);
	r->ret = tdx_pamt_get(r->a.base + 1, NULL);
	return NULL;
}

PAMT_TEST(split_demote_owns_the_slot)
{
	struct split_race d = { }, g = { };
	pthread_t td, tg;

	pamt_env_up_default();
	d.a.base = slot_pfn(7, 0);
	g.a.base = d.a.base;
	pamt.wait_ns = 60ULL * NSEC_PER_SEC;
	map_2m(7);
	pamt_fake_stall(PAMT_FAKE_DEMOTE, true);
	pthread_create(&td, NULL, split_race_demote, &d);
	while (slot_word(7) != PAMT_SLOT_TRANSIT)
		sched_yield();
	EXPECT_EQ(tdx_pamt_evict(slot_pfn(7, 0)), -EBUSY);
	EXPECT_EQ(tdx_pamt_shrink_scan(8, NULL), 0);
	EXPECT_EQ(tdx_pamt_demote(slot_pfn(7, 0), NULL, split_demote, &g.a),
		  -EBUSY);
	pthread_create(&tg, NULL, split_race_get, &g);
	while (!stat(TDX_PAMT_STAT_GET_WAIT))
		sched_yield();
	pamt_fake_stall(PAMT_FAKE_DEMOTE, false);
	pthread_join(td, NULL);
	pthread_join(tg, NULL);
	EXPECT_EQ(d.ret, 0);
	EXPECT_EQ(g.ret, 0);
	EXPECT_EQ(slot_word(7), W_SPLIT + 1);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_DEMOTE), 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(7, 1)), 0);
	unmap_4k_all(7);
}
