// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: set-up, teardown, statistics and control pages.
 *
 * Design: Documentation/arch/x86/tdx-dpamt.rst.
 */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kvm_types.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include "pamt_internal.h"

const char * const tdx_pamt_stat_names[TDX_PAMT_STAT_NR] = {
	[TDX_PAMT_STAT_GET_FAST]	= "get_fast",
	[TDX_PAMT_STAT_GET_SLOW]	= "get_slow",
	[TDX_PAMT_STAT_GET_WAIT]	= "get_wait",
	[TDX_PAMT_STAT_PUT_FAST]	= "put_fast",
	[TDX_PAMT_STAT_PUT_SLOW]	= "put_slow",
	[TDX_PAMT_STAT_REVIVE]		= "revive",
	[TDX_PAMT_STAT_ADD]		= "seamcall_add",
	[TDX_PAMT_STAT_REMOVE]		= "seamcall_remove",
	[TDX_PAMT_STAT_BUSY]		= "busy_retry",
	[TDX_PAMT_STAT_GLOBAL_LOCK]	= "global_lock",
	[TDX_PAMT_STAT_PAGE_ALLOC]	= "page_alloc",
	[TDX_PAMT_STAT_PAGE_FREE]	= "page_free",
	[TDX_PAMT_STAT_MAG_HIT]		= "mag_hit",
	[TDX_PAMT_STAT_MAG_MISS]	= "mag_miss",
	[TDX_PAMT_STAT_EVICT]		= "evict",
	[TDX_PAMT_STAT_SHRINK]		= "shrink",
	[TDX_PAMT_STAT_CAP]		= "cap",
	[TDX_PAMT_STAT_LEAKED]		= "leaked",
	[TDX_PAMT_STAT_ADD_FAILED]	= "add_failed",
	[TDX_PAMT_STAT_DEMOTE]		= "demote",
	[TDX_PAMT_STAT_PROMOTE]		= "promote",
	[TDX_PAMT_STAT_CHUNK_ALLOC]	= "arena_chunk_alloc",
	[TDX_PAMT_STAT_CHUNK_FREE]	= "arena_chunk_free",
	[TDX_PAMT_STAT_CHUNK_FAIL]	= "arena_chunk_fail",
	[TDX_PAMT_STAT_PAIR_ORDER1]	= "arena_fallback_order1",
	[TDX_PAMT_STAT_PAIR_ORDER0]	= "arena_fallback_order0",
	[TDX_PAMT_STAT_IDLE_SLOTS]	= "idle_slots",
	[TDX_PAMT_STAT_CACHED_PAIRS]	= "cached_pairs",
	[TDX_PAMT_STAT_INSTALLED]	= "installed_slots",
	[TDX_PAMT_STAT_ARENA_CHUNKS]	= "arena_chunks",
	[TDX_PAMT_STAT_ARENA_FREE]	= "arena_free_pairs",
};

/*
 * Ranges whose pair stayed in the module at the last tdx_pamt_exit() (a
 * LEAKED slot, or a REMOVE that stayed BUSY), by base pfn.  The next
 * tdx_pamt_init() marks them, so that it does not issue a PAMT.ADD the
 * module must refuse for good (HPA_RANGE_NOT_FREE).  Process context only:
 * init and exit do not race.
 */
static unsigned long *pamt_stuck;
static unsigned long pamt_nr_stuck;

/**
 * pamt_forget_module_pairs() - forget the ranges exit left in the module
 *
 * For when the module that held them is gone (a new fake module in the
 * tests): the next init starts from a module holding nothing.
 */
void pamt_forget_module_pairs(void)
{
	kfree(pamt_stuck);
	pamt_stuck = NULL;
	pamt_nr_stuck = 0;
}

/*
 * Mark the ranges exit left in the module INSTALLED and LEAKED: the module
 * holds their pairs, so a get revives them with no ADD, and nobody ever
 * REMOVEs them, since this instance did not allocate their pages.
 */
static void pamt_mark_module_pairs(atomic_long_t *slots, unsigned long first,
				   unsigned long nr_slots)
{
	unsigned long i, idx, lost = 0;

	for (i = 0; i < pamt_nr_stuck; i++) {
		idx = pamt_stuck[i] / TDX_PAMT_PAGES_PER_SLOT - first;
		if (idx < nr_slots && !atomic_long_read(&slots[idx])) {
			atomic_long_set(&slots[idx], PAMT_SLOT_INSTALLED |
						     PAMT_SLOT_LEAKED);
			atomic_long_inc(&pamt.installed);
		} else {
			lost++;
		}
	}
	if (pamt_nr_stuck)
		pr_info("tdx-pamt: %lu ranges keep the pair the module held at the last exit%s\n",
			pamt_nr_stuck - lost, lost ? ", some now uncovered" : "");
	pamt_forget_module_pairs();
}

static int pamt_check_config(const struct tdx_pamt_range *ranges,
			     unsigned int nr, const struct tdx_pamt_config *cfg)
{
	const unsigned long align = TDX_PAMT_PAGES_PER_SLOT;
	unsigned int i;

	if (!nr || !ranges || !cfg || !cfg->ops || !cfg->ops->add ||
	    !cfg->ops->remove || !cfg->ops->reset_page)
		return -EINVAL;
	if (cfg->mode != TDX_PAMT_MODE_MAGAZINE &&
	    cfg->mode != TDX_PAMT_MODE_EAGER)
		return -EINVAL;
	if (cfg->mag_size > PAMT_MAG_SIZE_MAX)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!IS_ALIGNED(ranges[i].start_pfn, align) ||
		    !IS_ALIGNED(ranges[i].end_pfn, align) ||
		    ranges[i].start_pfn >= ranges[i].end_pfn)
			return -EINVAL;
		if (i && ranges[i].start_pfn < ranges[i - 1].end_pfn)
			return -EINVAL;
	}
	return 0;
}

/**
 * tdx_pamt_init() - set up the PAMT cache over the covered memory
 * @ranges: covered ranges, sorted, 2M aligned, not overlapping
 * @nr: entries in @ranges
 * @cfg: mode, magazine size, idle cap and backend
 *
 * Context: process context; may sleep.
 *
 * Return: 0; -EINVAL for a bad argument; -EBUSY if already set up;
 * -ENOMEM, with nothing left allocated.
 */
int tdx_pamt_init(const struct tdx_pamt_range *ranges, unsigned int nr,
		  const struct tdx_pamt_config *cfg)
{
	unsigned long first, idx, nr_slots, covered = 0;
	atomic_long_t *slots;
	unsigned int i;
	int ret;

	might_sleep();
	if (pamt.enabled)
		return -EBUSY;
	ret = pamt_check_config(ranges, nr, cfg);
	if (ret)
		return ret;

	first = ranges[0].start_pfn / TDX_PAMT_PAGES_PER_SLOT;
	nr_slots = ranges[nr - 1].end_pfn / TDX_PAMT_PAGES_PER_SLOT - first;
	slots = kvcalloc(nr_slots, sizeof(*slots), GFP_KERNEL);
	if (!slots)
		return -ENOMEM;

	/* Everything is a hole until a range says otherwise. */
	for (idx = 0; idx < nr_slots; idx++)
		atomic_long_set(&slots[idx], PAMT_SLOT_HOLE);
	for (i = 0; i < nr; i++) {
		for (idx = ranges[i].start_pfn / TDX_PAMT_PAGES_PER_SLOT - first;
		     idx < ranges[i].end_pfn / TDX_PAMT_PAGES_PER_SLOT - first;
		     idx++) {
			atomic_long_set(&slots[idx], 0);
			covered++;
		}
	}

	pamt.base_idx = first;
	pamt.mode = cfg->mode;
	pamt.ops = cfg->ops;
	pamt.arena = cfg->arena;
	pamt.mag_size = cfg->mag_size ?: PAMT_MAG_SIZE_DEFAULT;
	pamt.idle_cap = cfg->idle_cap ?: max(covered / 4, 1UL);
	atomic_long_set(&pamt.idle, 0);
	atomic_long_set(&pamt.installed, 0);
	pamt_mark_module_pairs(slots, first, nr_slots);
	atomic_set(&pamt.serializing, 0);
	raw_spin_lock_init(&pamt.seamcall_lock);
	pamt.wait_ns = PAMT_WAIT_NS_DEFAULT;

	ret = pamt_shrink_init(nr_slots);
	if (ret) {
		kvfree(slots);
		return ret;
	}
	ret = pamt_mag_init();
	if (ret) {
		pamt_shrink_exit();
		kvfree(slots);
		return ret;
	}
	/*
	 * Until nr_slots is set every call is the no-op of a host without
	 * Dynamic PAMT.  Callers must not race init or exit.
	 */
	pamt.slots = slots;
	pamt.nr_slots = nr_slots;
	pamt.enabled = true;
	return 0;
}

/**
 * tdx_pamt_exit() - REMOVE every idle slot, free every cached pair
 *
 * Context: process context, once nothing uses the cache any more.  Slots
 * still in use, or whose REMOVE failed, keep their pairs in the module;
 * they are reported and left alone.
 */
void tdx_pamt_exit(void)
{
	unsigned long idx, word, in_use = 0, stuck = 0;
	unsigned int cpu;

	might_sleep();
	if (!pamt.enabled)
		return;

	/* No user is left to defer more work, nor to queue idle slots. */
	pamt_platform_defer_sync();
	for_each_possible_cpu(cpu)
		pamt_shrink_flush_cpu(cpu);
	pamt_shrink_remove_all_idle();
	for (idx = 0; idx < pamt.nr_slots; idx++) {
		word = atomic_long_read(&pamt.slots[idx]);
		if (pamt_slot_refs(word))
			in_use++;
		else if (word & PAMT_SLOT_INSTALLED)
			stuck++;	/* LEAKED, or REMOVE stayed BUSY */
	}
	WARN(in_use, "tdx-pamt: %lu ranges still in use at exit\n", in_use);
	if (stuck)
		pr_warn("tdx-pamt: %lu PAMT pairs stay in the module\n", stuck);

	/* Remember every range whose pair the module keeps, for the next init. */
	pamt_forget_module_pairs();
	/* Without memory for the list, a new cache would ADD on them. */
	if (stuck + in_use)
		pamt_stuck = kmalloc_array(stuck + in_use, sizeof(*pamt_stuck),
					   GFP_KERNEL);
	for (idx = 0; pamt_stuck && idx < pamt.nr_slots; idx++) {
		if (atomic_long_read(&pamt.slots[idx]) & PAMT_SLOT_INSTALLED)
			pamt_stuck[pamt_nr_stuck++] = pamt_slot_base_pfn(idx);
	}

	pamt.enabled = false;
	pamt.nr_slots = 0;
	pamt_mag_exit();
	pamt_shrink_exit();
	kvfree(pamt.slots);
	pamt.slots = NULL;
}

/**
 * tdx_pamt_enabled() - whether the cache is set up
 *
 * Return: true between tdx_pamt_init() and tdx_pamt_exit().
 */
bool tdx_pamt_enabled(void)
{
	return pamt.enabled;
}
EXPORT_SYMBOL_FOR_KVM(tdx_pamt_enabled);

/**
 * tdx_pamt_read_stats() - fold the counters of every CPU
 * @vals: TDX_PAMT_STAT_NR values, in the order of enum tdx_pamt_stat
 *
 * Racy by nature: counters move while they are read.
 */
void tdx_pamt_read_stats(u64 *vals)
{
	u64 cached = 0;
	unsigned int cpu;
	int i;

	memset(vals, 0, TDX_PAMT_STAT_NR * sizeof(*vals));
	if (!pamt.enabled)
		return;
	for_each_possible_cpu(cpu) {
		struct pamt_pcpu *pc = per_cpu_ptr(pamt.pcpu, cpu);

		for (i = 0; i < TDX_PAMT_STAT_NR_COUNTERS; i++)
			vals[i] += READ_ONCE(pc->stat[i]);
		cached += READ_ONCE(pc->stat[PAMT_PCPU_CACHED]);
	}
	vals[TDX_PAMT_STAT_IDLE_SLOTS] = max(atomic_long_read(&pamt.idle), 0L);
	/*
	 * A pair pushed on one CPU and popped on another may be read as
	 * popped only: the sum of the deltas is then briefly negative.
	 */
	vals[TDX_PAMT_STAT_CACHED_PAIRS] = max_t(s64, cached, 0);
	vals[TDX_PAMT_STAT_INSTALLED] = atomic_long_read(&pamt.installed);
	pamt_arena_read_stats(vals);
}

/**
 * __tdx_alloc_control_page() - allocate a TD control page with its PAMT
 * @gfp: allocation flags, for the page and, if needed, for a pair
 *
 * For TDR, TDCS, TDVPR and TDCX pages, allocated in ioctl context.
 *
 * Return: the page, with a reference on its range's pair, or NULL.
 */
struct page *__tdx_alloc_control_page(gfp_t gfp)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	struct page *page;
	int ret;

	page = alloc_page(gfp);
	if (!page)
		return NULL;

	ret = tdx_pamt_get(page_to_pfn(page), NULL);
	if (ret == -ENOMEM) {
		/* The magazines and GFP_NOWAIT failed; @gfp may do better. */
		ret = __tdx_topup_pamt_cache(&res, 1, gfp);
		if (!ret)
			ret = tdx_pamt_get(page_to_pfn(page), &res);
		tdx_free_pamt_cache(&res);
	}
	if (ret) {
		__free_page(page);
		return NULL;
	}
	return page;
}

/**
 * tdx_alloc_control_page() - allocate a TD control page, for KVM
 *
 * As __tdx_alloc_control_page() with GFP_KERNEL_ACCOUNT, as the upstream
 * DPAMT series does: TD control pages are charged to the VM's memcg.
 *
 * Context: process context; may sleep.
 *
 * Return: the page, with a reference on its range's pair, or NULL.
 */
struct page *tdx_alloc_control_page(void)
{
	return __tdx_alloc_control_page(GFP_KERNEL_ACCOUNT);
}
EXPORT_SYMBOL_FOR_KVM(tdx_alloc_control_page);

/**
 * tdx_free_control_page() - undo __tdx_alloc_control_page()
 * @page: the page, already reclaimed from the TD; NULL is ignored
 */
void tdx_free_control_page(struct page *page)
{
	if (!page)
		return;
	tdx_pamt_put(page_to_pfn(page));
	__free_page(page);
}
EXPORT_SYMBOL_FOR_KVM(tdx_free_control_page);
