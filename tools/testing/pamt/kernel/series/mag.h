/*
 * pamt_mag.c stand-in: no magazine; a pair is two order-0 pages, which a
 * get allocates and a REMOVE hands back to the page allocator at once.
 */
#include <linux/bug.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>

static inline int pamt_mag_init(void)
{
	pamt.pcpu = alloc_percpu(struct pamt_pcpu);
	return pamt.pcpu ? 0 : -ENOMEM;
}

static inline void pamt_mag_exit(void)
{
	free_percpu(pamt.pcpu);
	pamt.pcpu = NULL;
}

static inline int pamt_pair_alloc_pages(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	struct page *p0, *p1 = NULL;

	p0 = alloc_page(gfp);
	if (p0)
		p1 = alloc_page(gfp);
	if (!p1) {
		if (p0)
			__free_page(p0);
		return -ENOMEM;
	}
	pamt_stat_add(PAGE_ALLOC, 2);
	pair->pfn[0] = page_to_pfn(p0);
	pair->pfn[1] = page_to_pfn(p1);
	return 0;
}

static inline void pamt_pair_free(const struct tdx_pamt_pair *pairs,
				  unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < 2; j++) {
			pamt.ops->reset_page(pairs[i].pfn[j]);
			__free_page(pfn_to_page(pairs[i].pfn[j]));
		}
	}
	pamt_stat_add(PAGE_FREE, 2 * n);
}

static inline bool pamt_mag_pop(struct tdx_pamt_pair *pair)
{
	pamt_stat_inc(MAG_MISS);
	return false;
}

static inline void pamt_mag_push(const struct tdx_pamt_pair *pair)
{
	pamt_pair_free(pair, 1);
}

static inline unsigned long pamt_mag_drain(unsigned long nr, bool resched)
{
	return 0;
}

static inline long pamt_cached_pairs(void) { return 0; }

static inline int __tdx_topup_pamt_cache(struct tdx_pamt_cache *res,
					 unsigned int nr, gfp_t gfp)
{
	might_alloc(gfp);
	if (nr > TDX_PAMT_CACHE_MAX)
		return -EINVAL;
	for (; pamt.enabled && res->nr < nr; res->nr++)
		if (pamt_pair_alloc_pages(&res->pairs[res->nr], gfp))
			return -ENOMEM;
	return 0;
}

static inline void tdx_free_pamt_cache(struct tdx_pamt_cache *res)
{
	if (WARN_ON_ONCE(!pamt.enabled && res->nr))
		return;
	pamt_pair_free(res->pairs, res->nr);
	res->nr = 0;
}

static inline void pamt_pair_uncharge(const struct tdx_pamt_pair *pair) { }
