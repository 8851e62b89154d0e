// SPDX-License-Identifier: GPL-2.0
/* TDX Dynamic PAMT cache: set-up, teardown, statistics, control pages. */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kvm_types.h>
#include <linux/gfp.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include "pamt_internal.h"

static int pamt_check_config(const struct tdx_pamt_range *ranges,
			     unsigned int nr, const struct tdx_pamt_config *cfg)
{
	unsigned int i;

	if (!nr || !ranges || !cfg || !cfg->ops || !cfg->ops->add ||
	    !cfg->ops->remove || !cfg->ops->reset_page ||
	    cfg->mag_size > PAMT_MAG_SIZE_MAX)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!IS_ALIGNED(ranges[i].start_pfn | ranges[i].end_pfn,
				TDX_PAMT_PAGES_PER_SLOT) ||
		    ranges[i].start_pfn >= ranges[i].end_pfn ||
		    (i && ranges[i].start_pfn < ranges[i - 1].end_pfn))
			return -EINVAL;
	}
	return 0;
}

static void pamt_slots_free(void)
{
	pamt_sparse_free();
	kvfree(pamt.slots);
	pamt.slots = NULL;
	pamt.nr_flat = 0;
	pamt.nr_slots = 0;
	pamt.meta_bytes = 0;
}

/* The flat window, then the far blocks.  Return: covered slots, or 0. */
static unsigned long pamt_slots_init(const struct tdx_pamt_range *ranges,
				     unsigned int nr)
{
	unsigned long idx, s, covered = 0;
	unsigned int first, last, i;
	long n_far;

	n_far = pamt_sparse_init(ranges, nr, &first, &last);
	if (n_far < 0)
		return 0;
	pamt.base_idx = ranges[first].start_pfn / TDX_PAMT_PAGES_PER_SLOT;
	pamt.nr_flat = ranges[last].end_pfn / TDX_PAMT_PAGES_PER_SLOT -
		       pamt.base_idx;
	pamt.nr_slots = pamt.nr_flat + n_far;
	pamt.slots = kvcalloc(pamt.nr_slots, sizeof(*pamt.slots), GFP_KERNEL);
	if (!pamt.slots) {
		pamt_slots_free();
		return 0;
	}
	/* pamt_sparse_init() counted its own. */
	pamt.meta_bytes += pamt.nr_slots * sizeof(*pamt.slots);

	for (idx = 0; idx < pamt.nr_slots; idx++) {
		atomic_set(&pamt.slots[idx].word, PAMT_SLOT_HOLE);
		INIT_LIST_HEAD(&pamt.slots[idx].lru);
	}
	for (i = 0; i < nr; i++) {
		for (s = ranges[i].start_pfn; s < ranges[i].end_pfn;
		     s += TDX_PAMT_PAGES_PER_SLOT, covered++)
			atomic_set(pamt_slot_lookup(s), 0);
	}
	return covered;
}

/* Set up over sorted, 2M-aligned, disjoint @ranges; -ENOMEM keeps nothing. */
int tdx_pamt_init(const struct tdx_pamt_range *ranges, unsigned int nr,
		  const struct tdx_pamt_config *cfg)
{
	unsigned long covered;
	int ret;

	might_sleep();
	if (pamt.enabled)
		return -EBUSY;
	ret = pamt_check_config(ranges, nr, cfg);
	if (ret)
		return ret;

	/* Callers must not race init or exit: pamt.enabled comes last. */
	covered = pamt_slots_init(ranges, nr);
	if (!covered)
		return -ENOMEM;

	pamt.ops = cfg->ops;
	pamt.mag_size = cfg->mag_size ?: PAMT_MAG_SIZE;
	pamt.idle_cap = cfg->idle_cap ?: max(covered / 4, 1UL);
	atomic_long_set(&pamt.held, 0);
	atomic_set(&pamt.serializing, 0);
	raw_spin_lock_init(&pamt.seamcall_lock);
	pamt.wait_ns = PAMT_WAIT_NS_DEFAULT;

	ret = pamt_shrink_init();
	if (ret)
		goto free_slots;
	ret = pamt_mag_init();
	if (ret)
		goto exit_shrink;
	pamt.enabled = true;
	return 0;
exit_shrink:
	pamt_shrink_exit();
free_slots:
	pamt_slots_free();
	return ret;
}

/*
 * Once nothing uses the cache: give back all but the pairs still in the
 * module (in use, LEAKED), which are not ours to free.
 */
void tdx_pamt_exit(void)
{
	unsigned long idx, word, in_use = 0, stuck = 0;

	might_sleep();
	if (!pamt.enabled)
		return;

	pamt_platform_defer_sync();
	tdx_pamt_drain();
	for (idx = 0; idx < pamt.nr_slots; idx++) {
		word = atomic_read(&pamt.slots[idx].word);
		if (pamt_slot_refs(word)) {
			in_use++;
		} else if (word & PAMT_SLOT_LEAKED) {
			stuck++;
		} else if (word & PAMT_SLOT_INSTALLED) {
			stuck++;	/* REMOVE stayed BUSY: not reclaimable */
			pamt_idle_count(idx, -1);
		}
	}
	WARN(in_use, "tdx-pamt: %lu ranges still in use at exit\n", in_use);
	if (stuck)
		pr_warn("tdx-pamt: %lu PAMT pairs stay in the module\n", stuck);

	pamt.enabled = false;
	pamt_mag_exit();
	pamt_shrink_exit();
	pamt_slots_free();
}

/* Whether the cache is set up: between tdx_pamt_init() and tdx_pamt_exit(). */
bool tdx_pamt_enabled(void)
{
	return pamt.enabled;
}
EXPORT_SYMBOL_FOR_KVM(tdx_pamt_enabled);

/* Fold every CPU's counters into @vals[TDX_PAMT_STAT_NR], racily. */
void tdx_pamt_read_stats(u64 *vals)
{
	unsigned int cpu;
	int i;

	memset(vals, 0, TDX_PAMT_STAT_NR * sizeof(*vals));
	if (!pamt.enabled)
		return;
	for_each_possible_cpu(cpu) {
		for (i = 0; i < PAMT_PCPU_HELD; i++)
			vals[i] += READ_ONCE(per_cpu_ptr(pamt.pcpu, cpu)->stat[i]);
	}
	/* A pair pushed on one CPU, popped on another, may be read popped only. */
	for (i = TDX_PAMT_STAT_NR_COUNTERS; i < PAMT_PCPU_HELD; i++)
		vals[i] = max_t(s64, vals[i], 0);
}

/* Gets of a control page's range retried after -EBUSY, where it may sleep. */
#define PAMT_CTRL_BUSY_TRIES	3

/* A TD control page with a reference on its range's pair, or NULL. */
struct page *__tdx_alloc_control_page(gfp_t gfp)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	struct page *page = alloc_page(gfp);
	unsigned int tries = 0;
	int ret;

	if (!page)
		return NULL;
	/* With __GFP_ACCOUNT the page's memcg pays for a pair the get installs. */
	ret = __tdx_topup_pamt_cache(&res, 1, gfp);
	if (!ret)
		ret = tdx_pamt_get(page_to_pfn(page), &res);
	/* Another CPU's transition or the module's lock: both pass. */
	while (ret == -EBUSY && gfpflags_allow_blocking(gfp) &&
	       tries++ < PAMT_CTRL_BUSY_TRIES) {
		cond_resched();
		ret = tdx_pamt_get(page_to_pfn(page), &res);
	}
	tdx_free_pamt_cache(&res);
	if (!ret)
		return page;
	__free_page(page);
	return NULL;
}

/**
 * tdx_alloc_control_page() - a TD control page, memcg-charged, with its PAMT
 * Return: the page, with a reference on its range's pair, or NULL.
 */
struct page *tdx_alloc_control_page(void)
{
	return __tdx_alloc_control_page(GFP_KERNEL_ACCOUNT);
}
EXPORT_SYMBOL_FOR_KVM(tdx_alloc_control_page);

/**
 * tdx_free_control_page() - free a page from tdx_alloc_control_page()
 * @page: the page, reclaimed from the TD, or NULL
 */
void tdx_free_control_page(struct page *page)
{
	if (!page)
		return;
	tdx_pamt_put(page_to_pfn(page));
	__free_page(page);
}
EXPORT_SYMBOL_FOR_KVM(tdx_free_control_page);
