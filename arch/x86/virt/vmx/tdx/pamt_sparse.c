// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, sparse memory: slots for covered ranges far
 * from the flat window, in 1G blocks found in an xarray, so that a host
 * with memory far apart pays a slot per covered 2M range, not per 2M of
 * the span.  See "Slot words and sparse memory" in
 * Documentation/arch/x86/tdx-dpamt.rst.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "pamt_internal.h"

struct pamt_far pamt_far;

/* The flat window: the run of ranges covering most, at most half holes. */
static void pamt_pick_window(const struct tdx_pamt_range *ranges,
			     unsigned int nr, unsigned int *first,
			     unsigned int *last)
{
	unsigned long best = 0, covered, span, total = 0;
	unsigned int i, j;

	for (i = 0; i < nr; i++)
		total += ranges[i].end_pfn - ranges[i].start_pfn;
	*first = *last = 0;
	for (i = 0; i < nr; i++) {
		covered = 0;
		for (j = i; j < nr; j++) {
			covered += ranges[j].end_pfn - ranges[j].start_pfn;
			span = ranges[j].end_pfn - ranges[i].start_pfn;
			/* Longer runs only add holes it cannot pay for. */
			if (span > 2 * total)
				break;
			if (span <= 2 * covered && covered > best) {
				best = covered;
				*first = i;
				*last = j;
			}
		}
	}
}

/* The far blocks: distinct 1G blocks of the ranges outside the window. */
static unsigned long pamt_far_blocks(const struct tdx_pamt_range *ranges,
				     unsigned int nr, unsigned int first,
				     unsigned int last, unsigned long *keys)
{
	unsigned long key, end, prev = ULONG_MAX, n = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (i >= first && i <= last)
			continue;
		key = ranges[i].start_pfn >> PAMT_BLOCK_PFN_SHIFT;
		end = (ranges[i].end_pfn - 1) >> PAMT_BLOCK_PFN_SHIFT;
		for (; key <= end; key++) {
			/* Sorted ranges: a shared block is the last one. */
			if (key == prev)
				continue;
			if (keys)
				keys[n] = key;
			prev = key;
			n++;
		}
	}
	return n;
}

/**
 * pamt_sparse_init() - pick the flat window and set up the far blocks
 * @ranges: covered ranges, sorted, 2M aligned, not overlapping
 * @nr: entries in @ranges, at least one
 * @first: set to the window's first range
 * @last: set to the window's last range
 *
 * Adds the far blocks' key array to pamt.meta_bytes.
 *
 * Return: the far slots, or -ENOMEM with nothing allocated.
 */
long pamt_sparse_init(const struct tdx_pamt_range *ranges, unsigned int nr,
		      unsigned int *first, unsigned int *last)
{
	unsigned long n_far, idx;

	xa_init(&pamt_far.blocks);
	pamt_pick_window(ranges, nr, first, last);
	n_far = pamt_far_blocks(ranges, nr, *first, *last, NULL);
	if (!n_far)
		return 0;
	pamt_far.keys = kvcalloc(n_far, sizeof(*pamt_far.keys), GFP_KERNEL);
	if (!pamt_far.keys)
		return -ENOMEM;
	pamt_far_blocks(ranges, nr, *first, *last, pamt_far.keys);
	for (idx = 0; idx < n_far; idx++) {
		if (xa_is_err(xa_store(&pamt_far.blocks, pamt_far.keys[idx],
				       xa_mk_value(idx), GFP_KERNEL))) {
			pamt_sparse_free();
			return -ENOMEM;
		}
	}
	pamt.meta_bytes += n_far * sizeof(*pamt_far.keys);
	return n_far * PAMT_BLOCK_SLOTS;
}

void pamt_sparse_free(void)
{
	xa_destroy(&pamt_far.blocks);
	kvfree(pamt_far.keys);
	pamt_far.keys = NULL;
}
