// SPDX-License-Identifier: GPL-2.0
/*
 * Sparse slot tables: covered ranges far apart (pfn 0 and pfn 2^46), the
 * holes between them, the memory the slot metadata takes, and the idle
 * index, the shrinker and the cap over far blocks.
 */
#include <string.h>
#include "harness.h"

#define FAR_PFN		BIT(46)
#define GIB_PFNS	BIT(18)
#define SPARSE_MEM	64	/* 2M ranges of pair memory, at 4 GiB */

/* 1 GiB at pfn 0 and 1 GiB at pfn 2^46. */
static const struct tdx_pamt_range far_apart[] = {
	{ .start_pfn = 0, .end_pfn = GIB_PFNS },
	{ .start_pfn = FAR_PFN, .end_pfn = FAR_PFN + GIB_PFNS },
};

static void sparse_up(const struct tdx_pamt_range *r, unsigned int nr,
		      unsigned long cap)
{
	struct pamt_env_opts o = {
		.ranges = r, .nr_ranges = nr,
		.mem_slots = SPARSE_MEM, .idle_cap = cap,
	};

	if (pamt_env_up(&o))
		pamt_sim_fatal("sparse set-up failed", __FILE__, __LINE__);
}

/* The first and last page of both ranges, the far ones included. */
static const unsigned long sparse_ends[] = {
	0, GIB_PFNS - 1, FAR_PFN, FAR_PFN + GIB_PFNS - 1,
};

/*
 * get, put, evict and the shrinker at both ends of both ranges: each range
 * gets its pair at its own base, through the far blocks where it must.
 */
PAMT_TEST(sparse_far_ranges_work_at_both_ends)
{
	unsigned long pfn, base;
	unsigned int i;

	sparse_up(far_apart, 2, 0);
	/* The window is one range; the other is one far block. */
	EXPECT_EQ(pamt.nr_flat, 512);
	EXPECT_EQ(pamt.nr_slots, 1024);
	for (i = 0; i < ARRAY_SIZE(sparse_ends); i++) {
		pfn = sparse_ends[i];
		base = pfn & ~(TDX_PAMT_PAGES_PER_SLOT - 1);
		EXPECT_EQ(tdx_pamt_get(pfn, NULL), 0);
		EXPECT_EQ(pfn_word(pfn), PAMT_SLOT_INSTALLED | 1);
		EXPECT(pamt_fake_range_has_pair(base));
		EXPECT_EQ(pamt_slot_base_pfn(pamt_slot_idx(pamt_slot_lookup(pfn))),
			  base);
		/* The second is a fast one, on the same word. */
		EXPECT_EQ(tdx_pamt_get(base, NULL), 0);
		EXPECT_EQ(pfn_word(pfn), PAMT_SLOT_INSTALLED | 2);
		EXPECT_EQ(tdx_pamt_put(base), 0);
		EXPECT_EQ(tdx_pamt_put(pfn), 0);
		EXPECT_EQ(pamt_slot_state(pfn_word(pfn)), PAMT_SLOT_IDLE);
	}
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 4);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GET_FAST), 4);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 4);

	/* evict at the far end, the shrinker for the rest. */
	EXPECT_EQ(pamt_fake_evict(FAR_PFN + GIB_PFNS - 1), 0);
	EXPECT(!pamt_fake_range_has_pair(FAR_PFN + GIB_PFNS - 512));
	EXPECT_EQ(pfn_word(FAR_PFN + GIB_PFNS - 1), 0);
	/* Three idle slots, and the evicted pair, cached. */
	EXPECT_EQ(pamt_fake_shrink_scan(16, NULL), 4);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	for (i = 0; i < ARRAY_SIZE(sparse_ends); i++) {
		EXPECT_EQ(pfn_word(sparse_ends[i]), 0);
		EXPECT(!pamt_fake_range_has_pair(sparse_ends[i]));
	}
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 0);
}

/* Pfns in no range: before, between and after, near and far. */
static const unsigned long sparse_holes[] = {
	GIB_PFNS, GIB_PFNS + 511, 2 * GIB_PFNS, PAMT_ENV_BASE_PFN,
	1UL << 40, FAR_PFN - GIB_PFNS, FAR_PFN - 1, FAR_PFN + GIB_PFNS,
	FAR_PFN + 2 * GIB_PFNS, 2 * FAR_PFN, (1UL << 40) + FAR_PFN,
	~0UL, ~0UL - GIB_PFNS,
};

/* Every call on a pfn in a hole is -EINVAL and changes no word at all. */
PAMT_TEST(sparse_holes_are_einval_and_change_nothing)
{
	u64 before[TDX_PAMT_STAT_NR], after[TDX_PAMT_STAT_NR];
	unsigned long i, nr;
	u32 *words;

	sparse_up(far_apart, 2, 0);
	/* Some state to keep: one range active at each end. */
	ASSERT(!tdx_pamt_get(0, NULL));
	ASSERT(!tdx_pamt_get(FAR_PFN, NULL));
	nr = pamt.nr_slots;
	words = malloc(nr * sizeof(*words));
	ASSERT(words);
	for (i = 0; i < nr; i++)
		words[i] = atomic_read(&pamt.slots[i].word);
	stats_snapshot(before);

	for (i = 0; i < ARRAY_SIZE(sparse_holes); i++) {
		EXPECT(!pamt_slot_lookup(sparse_holes[i]));
		EXPECT_EQ(tdx_pamt_get(sparse_holes[i], NULL), -EINVAL);
		EXPECT_EQ(tdx_pamt_put(sparse_holes[i]), -EINVAL);
		EXPECT_EQ(pamt_fake_evict(sparse_holes[i]), -EINVAL);
	}

	stats_snapshot(after);
	EXPECT(!memcmp(before, after, sizeof(before)));
	for (i = 0; i < nr; i++)
		EXPECT_EQ(atomic_read(&pamt.slots[i].word), words[i]);
	free(words);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 2);
	EXPECT_EQ(tdx_pamt_put(0), 0);
	EXPECT_EQ(tdx_pamt_put(FAR_PFN), 0);
}

/*
 * What tdx_pamt_init() allocates for the slot metadata, measured by the
 * allocator: for ranges far apart, what the same covered memory costs in
 * one piece, give or take the far table.
 */
static unsigned long sparse_init_bytes(const struct tdx_pamt_range *r,
				       unsigned int nr, unsigned long *meta)
{
	struct pamt_env_opts o = {
		.ranges = r, .nr_ranges = nr, .mem_slots = SPARSE_MEM,
	};
	unsigned long before = pamt_sim_kmalloc_bytes, bytes;

	if (pamt_env_up(&o)) {
		pamt_test_failed(__FILE__, __LINE__, "set-up failed");
		return ~0UL;
	}
	/* The fake module's own state counts too: take it out. */
	bytes = pamt_sim_kmalloc_bytes - before -
		pamt_fake.nr_pages / TDX_PAMT_PAGES_PER_SLOT *
		sizeof(*pamt_fake.ranges) -
		2 * BITS_TO_LONGS(pamt_fake.nr_pages) * sizeof(long);
	*meta = pamt.meta_bytes;
	pamt_env_down();
	return bytes;
}

PAMT_TEST(sparse_metadata_is_proportional_to_covered)
{
	/* The same 2 GiB in one piece, and 2^30 pfns (4 TiB) apart. */
	const struct tdx_pamt_range dense[] = {
		{ .start_pfn = 0, .end_pfn = 2 * GIB_PFNS },
	};
	const struct tdx_pamt_range apart_4t[] = {
		{ .start_pfn = 0, .end_pfn = GIB_PFNS },
		{ .start_pfn = 1UL << 30, .end_pfn = (1UL << 30) + GIB_PFNS },
	};
	unsigned long d, d_meta, a, a_meta, f, f_meta;

	d = sparse_init_bytes(dense, 1, &d_meta);
	a = sparse_init_bytes(apart_4t, 2, &a_meta);
	f = sparse_init_bytes(far_apart, 2, &f_meta);
	printf("    slot metadata for 2 GiB covered: one piece %lu bytes, ", d_meta);
	printf("4 TiB apart %lu, 2^46 pfns apart %lu ", a_meta, f_meta);
	printf("(allocated in all by init: %lu, %lu, %lu)\n", d, a, f);
	/* A word with its list node and bits, 32 bytes; 1024 slots. */
	EXPECT_EQ(sizeof(struct pamt_slot), 32);
	EXPECT_EQ(d_meta, 1024 * sizeof(struct pamt_slot));
	/* Apart: the same, plus a far key. */
	EXPECT_EQ(a_meta, d_meta + 8);
	EXPECT_EQ(f_meta, a_meta);
	/* What init allocates in all moves by as much, whatever the span. */
	EXPECT(a <= d + 4096);
	EXPECT(f <= d + 4096);
	EXPECT(f >= f_meta);
}

/* -EOVERFLOW at the most references, on a far slot: nothing changes. */
PAMT_TEST(sparse_overflow_changes_nothing)
{
	const unsigned long full = PAMT_SLOT_INSTALLED | PAMT_SLOT_REF_MAX;
	unsigned long pfn = FAR_PFN + 3 * TDX_PAMT_PAGES_PER_SLOT;
	u64 before[TDX_PAMT_STAT_NR], after[TDX_PAMT_STAT_NR];

	sparse_up(far_apart, 2, 0);
	ASSERT(!tdx_pamt_get(pfn, NULL));
	pfn_set_word(pfn, PAMT_SLOT_INSTALLED | (PAMT_SLOT_REF_MAX - 1));
	EXPECT_EQ(tdx_pamt_get(pfn + 1, NULL), 0);
	EXPECT_EQ(pfn_word(pfn), full);
	stats_snapshot(before);
	EXPECT_EQ(tdx_pamt_get(pfn + 2, NULL), -EOVERFLOW);
	EXPECT_EQ(tdx_pamt_get(pfn, NULL), -EOVERFLOW);
	stats_snapshot(after);
	EXPECT(!memcmp(before, after, sizeof(before)));
	EXPECT_EQ(pfn_word(pfn), full);
	/* A put makes room again. */
	EXPECT_EQ(tdx_pamt_put(pfn), 0);
	EXPECT_EQ(tdx_pamt_get(pfn, NULL), 0);
	EXPECT_EQ(pfn_word(pfn), full);
	pfn_set_word(pfn, PAMT_SLOT_INSTALLED | 1);
	EXPECT_EQ(tdx_pamt_put(pfn), 0);
}

/*
 * The idle LRU, the cap and the shrinker over a table of three pieces,
 * two of them far blocks: every idle slot is found and removed at its
 * own base.
 */
PAMT_TEST(sparse_idle_lru_cap_and_shrinker)
{
	const struct tdx_pamt_range r[] = {
		{ .start_pfn = 0, .end_pfn = 16 * 512 },
		{ .start_pfn = 1UL << 40, .end_pfn = (1UL << 40) + 16 * 512 },
		{ .start_pfn = FAR_PFN + 100 * 512,
		  .end_pfn = FAR_PFN + 116 * 512 },
	};
	unsigned long pfn, idle;
	unsigned int i, j;

	sparse_up(r, 3, 40);
	EXPECT_EQ(pamt.nr_flat, 16);
	EXPECT_EQ(pamt.nr_slots, 16 + 2 * 512);
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 16; j++) {
			pfn = r[i].start_pfn + j * 512 + j;
			ASSERT(!tdx_pamt_get(pfn, NULL));
		}
	}
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 16; j++)
			EXPECT_EQ(tdx_pamt_put(r[i].start_pfn + j * 512), 0);
	}
	/* The cap holds idle memory at 40; the worker finishes the job. */
	run_deferred();
	idle = idle_memory();
	EXPECT(idle <= 40);
	EXPECT(stat(TDX_PAMT_STAT_CAP) >= 8);
	/* The shrinker finds every idle slot left, oldest first. */
	EXPECT_EQ(pamt_fake_shrink_scan(100, NULL), idle);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 16; j++) {
			pfn = r[i].start_pfn + j * 512;
			EXPECT_EQ(pfn_word(pfn), 0);
			EXPECT(!pamt_fake_range_has_pair(pfn));
		}
	}
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 48);
}

/*
 * Lookups among many far blocks, with gaps between them: each block is
 * found at its own place in the slot words; a pfn below, between or above
 * them is -EINVAL.
 */
PAMT_TEST(sparse_far_blocks_found_among_many)
{
	const struct tdx_pamt_range r[] = {
		{ .start_pfn = 1UL << 22, .end_pfn = (1UL << 22) + GIB_PFNS },
		{ .start_pfn = 1UL << 26, .end_pfn = (1UL << 26) + 2 * GIB_PFNS },
		{ .start_pfn = 1UL << 30, .end_pfn = (1UL << 30) + 6 * GIB_PFNS },
	};
	const unsigned long miss[] = {
		0, (1UL << 22) - 1, (1UL << 22) + GIB_PFNS, (1UL << 26) - 1,
		(1UL << 26) + 2 * GIB_PFNS, (1UL << 30) - 1,
		(1UL << 30) + 6 * GIB_PFNS, 1UL << 40, ~0UL,
	};
	/* The far blocks in pfn order: their range and block within it. */
	const unsigned int rng[] = { 0, 1, 1 };
	const unsigned int off[] = { 0, 0, 1 };
	unsigned long i, pfn;

	sparse_up(r, 3, 0);
	EXPECT_EQ(pamt.nr_flat, 6 * 512);
	EXPECT_EQ(pamt.nr_slots, 9 * 512);
	for (i = 0; i < ARRAY_SIZE(rng); i++) {
		pfn = r[rng[i]].start_pfn + off[i] * GIB_PFNS + 5 * 512 + 1;
		EXPECT_EQ(tdx_pamt_get(pfn, NULL), 0);
		EXPECT_EQ(atomic_read(&pamt.slots[(6 + i) * 512 + 5].word),
			  PAMT_SLOT_INSTALLED | 1);
		EXPECT(pamt_fake_range_has_pair(pfn));
		EXPECT_EQ(pamt_slot_base_pfn((6 + i) * 512 + 5), pfn - 1);
		EXPECT_EQ(tdx_pamt_put(pfn), 0);
	}
	for (i = 0; i < ARRAY_SIZE(miss); i++) {
		EXPECT(!pamt_slot_lookup(miss[i]));
		EXPECT_EQ(tdx_pamt_get(miss[i], NULL), -EINVAL);
	}
	EXPECT_EQ(tdx_pamt_drain(), ARRAY_SIZE(rng));
}
