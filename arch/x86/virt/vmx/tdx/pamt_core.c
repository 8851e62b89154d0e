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
#include <linux/minmax.h>
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
 * REMOVEs them, since this instance did not allocate their pages.  The
 * list stays until init has succeeded: a failed init may be retried.
 */
static void pamt_mark_module_pairs(void)
{
	unsigned long i, lost = 0;
	atomic_t *slot;

	for (i = 0; i < pamt_nr_stuck; i++) {
		slot = pamt_slot_lookup(pamt_stuck[i]);
		if (slot && !atomic_read(slot)) {
			atomic_set(slot, PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED);
			pamt_stat_inc(INSTALLED);
		} else {
			lost++;
		}
	}
	if (pamt_nr_stuck)
		pr_info("tdx-pamt: %lu ranges keep the pair the module held at the last exit%s\n",
			pamt_nr_stuck - lost, lost ? ", some now uncovered" : "");
}

static int pamt_check_config(const struct tdx_pamt_range *ranges,
			     unsigned int nr, const struct tdx_pamt_config *cfg)
{
	const unsigned long align = TDX_PAMT_PAGES_PER_SLOT;
	unsigned int i;

	if (!nr || !ranges || !cfg || !cfg->ops || !cfg->ops->add ||
	    !cfg->ops->remove || !cfg->ops->reset_page)
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

/* Slots (2M ranges) of a covered range. */
static unsigned long pamt_range_slots(const struct tdx_pamt_range *r)
{
	return (r->end_pfn - r->start_pfn) / TDX_PAMT_PAGES_PER_SLOT;
}

/*
 * The flat window: the run of ranges @ranges[*@first .. *@last] that covers
 * the most slots with at most as many uncovered slots between them as
 * covered ones.  Its words are one array indexed by pfn, holes included,
 * so a host whose covered memory is dense has no far block at all.
 */
static void pamt_pick_window(const struct tdx_pamt_range *ranges,
			     unsigned int nr, unsigned int *first,
			     unsigned int *last)
{
	unsigned long best = 0, covered, span, total = 0;
	unsigned int i, j;

	for (i = 0; i < nr; i++)
		total += pamt_range_slots(&ranges[i]);
	*first = *last = 0;
	for (i = 0; i < nr; i++) {
		covered = 0;
		for (j = i; j < nr; j++) {
			covered += pamt_range_slots(&ranges[j]);
			span = (ranges[j].end_pfn - ranges[i].start_pfn) /
			       TDX_PAMT_PAGES_PER_SLOT;
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
	unsigned long key, end, prev = PAMT_FAR_EMPTY, n = 0;
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

/* The far block of @key in the sorted @keys; @key is there. */
static unsigned long pamt_far_find(const unsigned long *keys,
				   unsigned long n, unsigned long key)
{
	unsigned long lo = 0, hi = n, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (keys[mid] <= key)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Multipliers the far table's hash tries, the golden ratio first. */
static unsigned long pamt_far_mul(unsigned int i)
{
	u64 z = 0x9e3779b97f4a7c15ULL * (i + 1);

	if (!i)
		return 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) | 1;
}

#define PAMT_FAR_TRIES		16	/* multipliers per table size */
#define PAMT_FAR_GROW		2	/* table sizes tried: 2n, 4n, 8n */

/*
 * Insert @n keys into @tbl (@mask + 1 entries) by linear probing with
 * hash @mul; returns the longest probe sequence, beyond the first entry.
 */
static unsigned int pamt_far_fill(struct pamt_far *tbl, unsigned long mask,
				  unsigned int shift, unsigned long mul,
				  const unsigned long *keys, unsigned long n,
				  unsigned long first)
{
	unsigned long i, h, d, worst = 0;

	for (i = 0; i <= mask; i++)
		tbl[i].key = PAMT_FAR_EMPTY;
	for (i = 0; i < n; i++) {
		h = (keys[i] * mul) >> shift;
		for (d = 0; tbl[(h + d) & mask].key != PAMT_FAR_EMPTY; d++)
			;
		tbl[(h + d) & mask].key = keys[i];
		tbl[(h + d) & mask].first = first + i * PAMT_BLOCK_SLOTS;
		worst = max(worst, d);
	}
	return worst;
}

/*
 * The far table: at least twice as many entries as far blocks, a hash
 * that puts every block in its first entry if one of the multipliers
 * and sizes tried does, else the one with the shortest longest probe.
 * Return: its size in bytes, or 0 with nothing allocated.
 */
static unsigned long pamt_far_build(const unsigned long *keys,
				    unsigned long n, unsigned long first)
{
	unsigned int order = 1, grow, i, d, best = UINT_MAX;
	unsigned long mask, best_mul = 0, best_order = order;
	struct pamt_far *tbl;

	while ((1UL << order) < 2 * n)
		order++;
	tbl = kvcalloc(1UL << (order + PAMT_FAR_GROW), sizeof(*tbl),
		       GFP_KERNEL);
	if (!tbl)
		return 0;
	for (grow = 0; grow <= PAMT_FAR_GROW && best; grow++) {
		mask = (1UL << (order + grow)) - 1;
		for (i = 0; i < PAMT_FAR_TRIES && best; i++) {
			d = pamt_far_fill(tbl, mask, 64 - (order + grow),
					  pamt_far_mul(i), keys, n, first);
			if (d < best) {
				best = d;
				best_mul = pamt_far_mul(i);
				best_order = order + grow;
			}
		}
	}
	kvfree(tbl);
	tbl = kvcalloc(1UL << best_order, sizeof(*tbl), GFP_KERNEL);
	if (!tbl)
		return 0;
	mask = (1UL << best_order) - 1;
	pamt_far_fill(tbl, mask, 64 - best_order, best_mul, keys, n, first);
	if (best)
		pr_info("tdx-pamt: %lu far blocks, up to %u extra probes\n",
			n, best);
	pamt.far = tbl;
	pamt.far_mask = mask;
	pamt.far_mul = best_mul;
	pamt.far_shift = 64 - best_order;
	pamt.far_probes = best;
	return (mask + 1) * sizeof(*tbl);
}

/* Free what pamt_slots_init() allocated. */
static void pamt_slots_free(void)
{
	pamt_far_reset();
	kvfree(pamt.far_keys);
	kvfree(pamt.slots);
	pamt.far_keys = NULL;
	pamt.slots = NULL;
	pamt.nr_flat = 0;
	pamt.nr_slots = 0;
	pamt.meta_bytes = 0;
}

/*
 * Lay the slot words out: the flat window, then one block of
 * PAMT_BLOCK_SLOTS words per far 1G block, every uncovered word a HOLE.
 * Return: the covered slots, or 0 with nothing allocated (-ENOMEM).
 */
static unsigned long pamt_slots_init(const struct tdx_pamt_range *ranges,
				     unsigned int nr)
{
	unsigned long n_far, idx, s, key, covered = 0;
	unsigned int first, last, i;

	pamt_pick_window(ranges, nr, &first, &last);
	n_far = pamt_far_blocks(ranges, nr, first, last, NULL);
	if (n_far) {
		pamt.far_keys = kvcalloc(n_far, sizeof(*pamt.far_keys),
					 GFP_KERNEL);
		if (!pamt.far_keys)
			return 0;
		pamt_far_blocks(ranges, nr, first, last, pamt.far_keys);
	}
	pamt.base_idx = ranges[first].start_pfn / TDX_PAMT_PAGES_PER_SLOT;
	pamt.nr_flat = ranges[last].end_pfn / TDX_PAMT_PAGES_PER_SLOT -
		       pamt.base_idx;
	pamt.nr_slots = pamt.nr_flat + n_far * PAMT_BLOCK_SLOTS;
	pamt.slots = kvcalloc(pamt.nr_slots, sizeof(*pamt.slots), GFP_KERNEL);
	if (!pamt.slots)
		goto fail;
	pamt.meta_bytes = pamt.nr_slots * sizeof(*pamt.slots) +
			  n_far * sizeof(*pamt.far_keys);
	if (n_far) {
		s = pamt_far_build(pamt.far_keys, n_far, pamt.nr_flat);
		if (!s)
			goto fail;
		pamt.meta_bytes += s;
	}

	/* Everything is a hole until a range says otherwise. */
	for (idx = 0; idx < pamt.nr_slots; idx++)
		atomic_set(&pamt.slots[idx], PAMT_SLOT_HOLE);
	for (i = 0; i < nr; i++) {
		for (s = ranges[i].start_pfn / TDX_PAMT_PAGES_PER_SLOT;
		     s < ranges[i].end_pfn / TDX_PAMT_PAGES_PER_SLOT; s++) {
			if (i >= first && i <= last) {
				idx = s - pamt.base_idx;
			} else {
				key = s / PAMT_BLOCK_SLOTS;
				idx = pamt.nr_flat + PAMT_BLOCK_SLOTS *
				      pamt_far_find(pamt.far_keys, n_far, key) +
				      s % PAMT_BLOCK_SLOTS;
			}
			atomic_set(&pamt.slots[idx], 0);
			covered++;
		}
	}
	return covered;
fail:
	pamt_slots_free();
	return 0;
}

/**
 * tdx_pamt_init() - set up the PAMT cache over the covered memory
 * @ranges: covered ranges, sorted, 2M aligned, not overlapping
 * @nr: entries in @ranges
 * @cfg: magazine size, idle cap, backend and arena
 *
 * Context: process context; may sleep.
 *
 * Return: 0; -EINVAL for a bad argument; -EBUSY if already set up;
 * -ENOMEM, with nothing left allocated.
 */
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

	/*
	 * The words are in place from here on, but every call stays the
	 * no-op of a host without Dynamic PAMT until pamt.enabled is set:
	 * callers must not race init or exit.
	 */
	covered = pamt_slots_init(ranges, nr);
	if (!covered)
		return -ENOMEM;

	pamt.ops = cfg->ops;
	pamt.arena = cfg->arena;
	pamt.mag_size = cfg->mag_size ?: PAMT_MAG_SIZE;
	pamt.idle_cap = cfg->idle_cap ?: max(covered / 4, 1UL);
	atomic_long_set(&pamt.held, 0);
	atomic_set(&pamt.serializing, 0);
	raw_spin_lock_init(&pamt.seamcall_lock);
	pamt.wait_ns = PAMT_WAIT_NS_DEFAULT;

	ret = pamt_shrink_init(pamt.nr_slots);
	if (ret) {
		pamt_slots_free();
		return ret;
	}
	pamt.meta_bytes += pamt.nr_slots * sizeof(*pamt.idle_index.ring) +
			   BITS_TO_LONGS(pamt.nr_slots) * sizeof(long);
	ret = pamt_mag_init();
	if (ret) {
		pamt_shrink_exit();
		pamt_slots_free();
		return ret;
	}
	pamt_mark_module_pairs();
	pamt_forget_module_pairs();
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
		word = atomic_read(&pamt.slots[idx]);
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
		if (atomic_read(&pamt.slots[idx]) & PAMT_SLOT_INSTALLED)
			pamt_stuck[pamt_nr_stuck++] = pamt_slot_base_pfn(idx);
	}

	pamt.enabled = false;
	pamt_mag_exit();
	pamt_shrink_exit();
	pamt_slots_free();
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
	unsigned int cpu;
	int i;

	memset(vals, 0, TDX_PAMT_STAT_NR * sizeof(*vals));
	if (!pamt.enabled)
		return;
	for_each_possible_cpu(cpu) {
		struct pamt_pcpu *pc = per_cpu_ptr(pamt.pcpu, cpu);

		for (i = 0; i < PAMT_PCPU_HELD; i++)
			vals[i] += READ_ONCE(pc->stat[i]);
	}
	/*
	 * A pair pushed on one CPU and popped on another may be read as
	 * popped only: the sum of a gauge's deltas is then briefly negative.
	 */
	for (i = TDX_PAMT_STAT_NR_COUNTERS; i < PAMT_PCPU_HELD; i++)
		vals[i] = max_t(s64, vals[i], 0);
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

	/*
	 * The pair the range may need: from the magazines or the page
	 * allocator, with @gfp; with __GFP_ACCOUNT, the memcg that pays for
	 * the page pays for the range if the get installs a pair, and the
	 * unused charge goes back with the reserve.  Should the top-up fail,
	 * the get still tries GFP_NOWAIT, uncharged.
	 */
	__tdx_topup_pamt_cache(&res, 1, gfp);
	ret = tdx_pamt_get(page_to_pfn(page), &res);
	tdx_free_pamt_cache(&res);
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
