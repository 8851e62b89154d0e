/*
 * pamt_mag.c stand-in: no magazine; a get allocates its pair, and a pair
 * REMOVE hands back is freed at once.
 */
#include <linux/bug.h>
#include <linux/sched/mm.h>

static inline int pamt_mag_init(void)
{
	pamt_arena_init();
	pamt.pcpu = alloc_percpu(struct pamt_pcpu);
	return pamt.pcpu ? 0 : -ENOMEM;
}

static inline void pamt_mag_exit(void)
{
	pamt_arena_exit();
	free_percpu(pamt.pcpu);
	pamt.pcpu = NULL;
}

static inline bool pamt_mag_pop(struct tdx_pamt_pair *pair)
{
	pamt_stat_inc(MAG_MISS);
	return false;
}

static inline void pamt_mag_push(const struct tdx_pamt_pair *pair)
{
	pamt_pair_free(pair);
}

static inline void pamt_mag_drain_local(atomic_long_t *budget) { }
static inline void pamt_mag_drain_dead(unsigned int cpu) { }
static inline long pamt_cached_pairs(void) { return 0; }

static inline int __tdx_topup_pamt_cache(struct tdx_pamt_cache *res,
					 unsigned int nr, gfp_t gfp)
{
	might_alloc(gfp);
	if (nr > TDX_PAMT_CACHE_MAX)
		return -EINVAL;
	for (; pamt.enabled && res->nr < nr; res->nr++)
		if (pamt_pair_alloc(&res->pairs[res->nr], gfp))
			return -ENOMEM;
	return 0;
}

static inline void tdx_free_pamt_cache(struct tdx_pamt_cache *res)
{
	if (WARN_ON_ONCE(!pamt.enabled && res->nr))
		return;
	pamt_pair_free_bulk(res->pairs, res->nr);
	res->nr = 0;
}

static inline void pamt_pair_uncharge(const struct tdx_pamt_pair *pair) { }
