// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PAMT cache over sparse memory: RAM as the flat window and a
 * covered GiB far above it in a far block.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include "pamt_kunit.h"

#define PK_FAR_PFN	BIT(46)
#define PK_GIB_PFNS	BIT(18)

/*
 * RAM, and 1 GiB at pfn 2^46: get, put, evict, the idle cap and the
 * shrinker at both ends of both; holes between, below and above are
 * -EINVAL and change no word; -EOVERFLOW on a far slot changes nothing;
 * and the slot metadata is what the covered memory needs, not the span.
 */
static void pk_sparse_far(struct kunit *test)
{
	const unsigned long far = PK_FAR_PFN, gib = PK_GIB_PFNS;
	unsigned long end, pfn, idx, i, nr, meta, *words;
	struct tdx_pamt_range r[2];
	unsigned long ends[4], holes[7];
	u64 adds, fast;

	end = round_up(max_pfn, TDX_PAMT_PAGES_PER_SLOT);
	KUNIT_ASSERT_LT(test, end, far - gib);
	r[0].start_pfn = 0;
	r[0].end_pfn = end;
	r[1].start_pfn = far;
	r[1].end_pfn = far + gib;
	KUNIT_ASSERT_EQ(test, pk_setup_ranges(test, r, 2, 0, PK_NO_CAP), 0);

	/* RAM is the flat window, the far GiB one block: no hole at all. */
	nr = end / TDX_PAMT_PAGES_PER_SLOT + PAMT_BLOCK_SLOTS;
	KUNIT_EXPECT_EQ(test, pamt.nr_flat, end / TDX_PAMT_PAGES_PER_SLOT);
	KUNIT_ASSERT_EQ(test, pamt.nr_slots, nr);
	meta = nr * sizeof(struct pamt_slot) + sizeof(unsigned long);
	KUNIT_EXPECT_EQ(test, pamt.meta_bytes, meta);
	kunit_info(test, "slot metadata: %lu bytes for %lu covered 2M ranges, 2^46 pfns apart\n",
		   pamt.meta_bytes, nr);

	ends[0] = pk_slot_pfn(test, 0);
	ends[1] = end - 1;
	ends[2] = far;
	ends[3] = far + gib - 1;
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		pfn = ends[i];
		KUNIT_EXPECT_EQ(test, pk_get(pfn), 0);
		KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
		KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
		idx = pamt_slot_idx(pamt_slot_lookup(pfn));
		KUNIT_EXPECT_EQ(test, pamt_slot_base_pfn(idx),
				round_down(pfn, TDX_PAMT_PAGES_PER_SLOT));
	}

	/* -EOVERFLOW at the most references, on the far slot. */
	pk_set_word(far, W_INST | (PAMT_SLOT_REF_MAX - 1));
	KUNIT_EXPECT_EQ(test, pk_get(far + 1), 0);
	fast = pk_stat(TDX_PAMT_STAT_GET_FAST);
	KUNIT_EXPECT_EQ(test, pk_get(far + 2), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, pk_word(far), W_INST | PAMT_SLOT_REF_MAX);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_GET_FAST), fast);
	pk_set_word(far, W_INST | 1);

	/* Holes: nothing changes, not a word, not a counter. */
	holes[0] = end;
	holes[1] = end + 100 * TDX_PAMT_PAGES_PER_SLOT;
	holes[2] = far - 1;
	holes[3] = far - gib;
	holes[4] = far + gib;
	holes[5] = 2 * far;
	holes[6] = ULONG_MAX;
	words = kcalloc(nr, sizeof(*words), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, words);
	for (i = 0; i < nr; i++)
		words[i] = atomic_read(&pamt.slots[i].word);
	adds = pk_stat(TDX_PAMT_STAT_ADD);
	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		KUNIT_EXPECT_NULL(test, pamt_slot_lookup(holes[i]));
		KUNIT_EXPECT_EQ(test, pk_get(holes[i]), -EINVAL);
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(holes[i]), -EINVAL);
		KUNIT_EXPECT_EQ(test, pamt_fake_evict(holes[i]), -EINVAL);
	}
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, (unsigned long)atomic_read(&pamt.slots[i].word),
				words[i]);
	kfree(words);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_ADD), adds);

	/* Idle at both ends; the cap, evict and the shrinker empty them. */
	for (i = 0; i < ARRAY_SIZE(ends); i++)
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(ends[i]), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 4ULL);
	KUNIT_EXPECT_EQ(test, pamt_fake_evict(far + gib - 1), 0);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(far + gib - 1));
	pk_set_idle_cap(1);
	KUNIT_EXPECT_LE(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS) +
			pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	pamt_fake_shrink_scan(16, NULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		KUNIT_EXPECT_EQ(test, pk_word(ends[i]), 0UL);
		KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(ends[i]));
	}
	pk_set_idle_cap(PK_NO_CAP);
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_sparse_cases[] = {
	KUNIT_CASE(pk_sparse_far),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_sparse_suite = {
	.name = "tdx_pamt_sparse",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_sparse_cases,
};

kunit_test_suite(pk_sparse_suite);
