// SPDX-License-Identifier: GPL-2.0
/*
 * Memory accounting, as the Documentation states it ("Memory
 * accounting"): which pages are allocated with __GFP_ACCOUNT, as the
 * shim's page allocator records it.  Control pages are charged to the
 * caller either way.  With the arena no pair page is, whatever the caller
 * passes; without it, the pairs a top-up or a control page takes from the
 * page allocator are, and those of a get without a reserve are not.
 */
#include "../harness.h"

/* Pair pages in the module; *@charged of them allocated with __GFP_ACCOUNT. */
static unsigned long module_pair_pages(unsigned long *charged)
{
	unsigned long pfn, n = 0;

	*charged = 0;
	for (pfn = pamt_sim_base_pfn; pfn < pamt_sim_base_pfn + pamt_sim_nr_pages; pfn++) {
		if (!pamt_fake_is_pamt_page(pfn))
			continue;
		n++;
		if (pamt_sim_pfn_accounted(pfn))
			(*charged)++;
	}
	return n;
}

/* Pages of the pairs in @c allocated with __GFP_ACCOUNT. */
static unsigned int cache_charged(const struct tdx_pamt_cache *c)
{
	unsigned int i, k, n = 0;

	for (i = 0; i < c->nr; i++)
		for (k = 0; k < 2; k++)
			n += pamt_sim_pfn_accounted(c->pairs[i].pfn[k]);
	return n;
}

static void memcg_policy(bool arena)
{
	struct pamt_env_opts o = {
		.mode = TDX_PAMT_MODE_MAGAZINE, .idle_cap = 100000, .arena = arena,
	};
	struct tdx_pamt_cache c;
	unsigned long n, charged, pfn;
	struct page *page;

	ASSERT(!pamt_env_up(&o));

	/* A control page, and the pair its range needed. */
	page = tdx_alloc_control_page();
	ASSERT(page);
	env.held_pages++;
	EXPECT(pamt_sim_pfn_accounted(page_to_pfn(page)));
	n = module_pair_pages(&charged);
	EXPECT_EQ(n, 2);
	EXPECT_EQ(charged, arena ? 0 : 2);

	/* A top-up: GFP_KERNEL_ACCOUNT, dropped by the arena. */
	tdx_init_pamt_cache(&c);
	EXPECT_EQ(tdx_topup_pamt_cache(&c, 4), 0);
	EXPECT_EQ(c.nr, 4);
	env.held_pairs += c.nr;
	EXPECT_EQ(cache_charged(&c), arena ? 0 : 8);

	/* A get from the reserve installs one of its pairs, as charged. */
	pfn = slot_pfn(7, 0);
	EXPECT_EQ(tdx_pamt_get(pfn, &c), 0);
	env.held_pairs = c.nr;
	n = module_pair_pages(&charged);
	EXPECT_EQ(n, 4);
	EXPECT_EQ(charged, arena ? 0 : 4);
	tdx_free_pamt_cache(&c);
	env.held_pairs = 0;

	/*
	 * A get without a reserve, the magazines emptied first: GFP_NOWAIT,
	 * charged to nobody.
	 */
	tdx_pamt_drain();
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(9, 0), NULL), 0);
	n = module_pair_pages(&charged);
	EXPECT_EQ(n, 6);
	EXPECT_EQ(charged, arena ? 0 : 4);

	EXPECT_EQ(tdx_pamt_put(slot_pfn(9, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(pfn), 0);
	tdx_free_control_page(page);
	env.held_pages--;
	EXPECT(pamt_accounting_ok());
}

PAMT_TEST(memcg_arena_charges_no_pair)
{
	memcg_policy(true);
}

PAMT_TEST(memcg_without_arena_charges_topup_pairs)
{
	memcg_policy(false);
}
