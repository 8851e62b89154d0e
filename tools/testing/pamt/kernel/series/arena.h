/*
 * pamt_arena.c: not in the series yet.  Until then a pair is two order-0
 * pages from the page allocator, as with tdx_pamt_config.arena off, and
 * there is no chunk to take pairs from.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>

struct pamt_arena_chunk;

/**
 * struct pamt_pair_run - room for pairs, for pamt_arena_take_runs()
 * @pairs: where the pairs go
 * @n: pairs wanted; on return, pairs put there
 */
struct pamt_pair_run {
	struct tdx_pamt_pair *pairs;
	unsigned int n;
};

/* No chunk: no run gets a pair. */
static inline unsigned int pamt_arena_take_runs(struct pamt_pair_run *v,
						unsigned int nv,
						struct pamt_arena_chunk **fresh)
{
	while (nv--)
		v[nv].n = 0;
	return 0;
}

static inline int pamt_pair_alloc(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	struct page *p0, *p1;

	might_alloc(gfp);
	p0 = alloc_page(gfp);
	if (!p0)
		return -ENOMEM;
	p1 = alloc_page(gfp);
	if (!p1) {
		__free_page(p0);
		pamt_stat_inc(PAGE_ALLOC);
		pamt_stat_inc(PAGE_FREE);
		return -ENOMEM;
	}
	pamt_stat_add(PAGE_ALLOC, 2);
	pair->pfn[0] = page_to_pfn(p0);
	pair->pfn[1] = page_to_pfn(p1);
	return 0;
}

/* One pair at a time: there is no refill to share a lock hold with. */
static inline unsigned int pamt_pair_alloc_bulk(struct tdx_pamt_pair *pairs,
						unsigned int n, gfp_t gfp)
{
	return n && !pamt_pair_alloc(pairs, gfp);
}

static inline unsigned long pamt_pair_free(const struct tdx_pamt_pair *pair)
{
	pamt.ops->reset_page(pair->pfn[0]);
	pamt.ops->reset_page(pair->pfn[1]);
	__free_page(pfn_to_page(pair->pfn[0]));
	__free_page(pfn_to_page(pair->pfn[1]));
	pamt_stat_add(PAGE_FREE, 2);
	return 2;
}

static inline unsigned long pamt_pair_free_bulk(const struct tdx_pamt_pair *pairs,
						unsigned int n)
{
	unsigned long pages = 0;

	while (n--)
		pages += pamt_pair_free(pairs++);
	return pages;
}

/* No chunk: no process has a home. */
static inline unsigned int pamt_arena_take_home(struct tdx_pamt_pair *pairs,
						unsigned int n, gfp_t gfp)
{
	return 0;
}

/* No chunk: nothing to record. */
static inline void pamt_arena_note_owner(const struct tdx_pamt_pair *pair,
					 long idx) { }

static inline void pamt_arena_init(void) { }
static inline unsigned long pamt_arena_exit(void) { return 0; }
/* The arena's gauges stay 0, as tdx_pamt_read_stats() set them. */
static inline void pamt_arena_read_stats(u64 *vals) { }
static inline unsigned long pamt_arena_check(void) { return 0; }

