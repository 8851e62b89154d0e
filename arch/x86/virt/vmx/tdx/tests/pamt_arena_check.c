// SPDX-License-Identifier: GPL-2.0
/*
 * The pair arena's invariants, for the KUnit suites and the userspace
 * harness; included at the end of pamt_arena.c only when they are built.
 */

/**
 * pamt_arena_check() - check the arena's invariants
 *
 * Every chunk is on the bucket of its free count or off the buckets, its
 * count matches its bitmap, the buckets' bits match their lists, the
 * gauges match the chunks and every pair page names its chunk.
 *
 * Return: the number of broken invariants; 0 for a sound arena.
 */
unsigned long pamt_arena_check(void)
{
	unsigned long flags, bad = 0, chunks = 0, nr_free = 0, i;
	struct pamt_arena_chunk *c;
	unsigned int n;

	pamt_arena_lock(&flags);
	for (n = 0; n < PAMT_ARENA_PAIRS; n++) {
		if (list_empty(&pamt_arena.bucket[n]) ==
		    test_bit(n, pamt_arena.nonempty))
			bad++;
		list_for_each_entry(c, &pamt_arena.bucket[n], list) {
			chunks++;
			nr_free += c->nr_free;
			if (c->nr_free != n ||
			    bitmap_weight(c->free, PAMT_ARENA_PAIRS) != n ||
			    !IS_ALIGNED(c->base_pfn, PAMT_ARENA_PAGES))
				bad++;
			for (i = 0; i < PAMT_ARENA_PAGES; i += 2)
				if (page_private(pfn_to_page(c->base_pfn + i)) !=
				    (unsigned long)c)
					bad++;
		}
	}
	list_for_each_entry(c, &pamt_arena.off, list) {
		chunks++;
		nr_free += c->nr_free;
		if (!c->off || c->nr_free > PAMT_ARENA_PAIRS ||
		    bitmap_weight(c->free, PAMT_ARENA_PAIRS) != c->nr_free)
			bad++;
	}
	if (chunks != pamt_arena.nr_chunks || nr_free != pamt_arena.nr_free)
		bad++;
	spin_unlock_irqrestore(&pamt_arena.lock, flags);
	return bad;
}
