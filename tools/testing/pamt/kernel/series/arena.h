/* pamt_arena.c stand-in: a pair is two order-0 pages; no chunk. */
#include <linux/mm.h>
#include <linux/sched/mm.h>

struct pamt_arena_chunk;

struct pamt_pair_run {
	struct tdx_pamt_pair *pairs;
	unsigned int n;
};

static inline unsigned int pamt_arena_take_runs(struct pamt_pair_run *v,
						unsigned int nv,
						struct pamt_arena_chunk **fresh)
{
	while (nv--)
		v[nv].n = 0;
	return 0;
}

static inline unsigned long pamt_pair_free(const struct tdx_pamt_pair *pair)
{
	int i;

	for (i = 0; i < 2; i++) {
		pamt.ops->reset_page(pair->pfn[i]);
		__free_page(pfn_to_page(pair->pfn[i]));
	}
	pamt_stat_add(PAGE_FREE, 2);
	return 2;
}

static inline unsigned int pamt_pair_alloc_bulk(struct tdx_pamt_pair *pairs,
						unsigned int n, gfp_t gfp)
{
	struct page *p0, *p1 = NULL;

	might_alloc(gfp);
	if (!n)
		return 0;
	p0 = alloc_page(gfp);
	if (p0)
		p1 = alloc_page(gfp);
	if (!p1) {
		if (p0) {
			__free_page(p0);
			pamt_stat_inc(PAGE_ALLOC);
			pamt_stat_inc(PAGE_FREE);
		}
		return 0;
	}
	pamt_stat_add(PAGE_ALLOC, 2);
	pairs->pfn[0] = page_to_pfn(p0);
	pairs->pfn[1] = page_to_pfn(p1);
	return 1;
}

static inline int pamt_pair_alloc(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	return pamt_pair_alloc_bulk(pair, 1, gfp) ? 0 : -ENOMEM;
}

static inline unsigned long pamt_pair_free_bulk(const struct tdx_pamt_pair *pairs,
						unsigned int n)
{
	unsigned long pages = 0;

	while (n--)
		pages += pamt_pair_free(pairs++);
	return pages;
}

static inline unsigned int pamt_arena_take_home(struct tdx_pamt_pair *pairs,
						unsigned int n, gfp_t gfp)
{
	return 0;
}

static inline void pamt_arena_note_owner(const struct tdx_pamt_pair *pair,
					 long idx) { }
static inline void pamt_arena_init(void) { }
static inline void pamt_arena_exit(void) { }
static inline void pamt_arena_read_stats(u64 *vals) { }
static inline unsigned long pamt_arena_check(void) { return 0; }
