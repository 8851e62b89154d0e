/*
 * pamt_shrink.c stand-in: no idle LRU, cap or shrinker; an idle slot
 * keeps its pair until tdx_pamt_drain() or tdx_pamt_exit() walk the slots.
 */
#include <linux/cpumask.h>
#include <linux/sched.h>

static inline int pamt_shrink_init(void) { return 0; }
static inline void pamt_shrink_exit(void) { }
static inline void pamt_shrink_installed(unsigned long idx,
					 const struct tdx_pamt_pair *pair) { }
static inline int pamt_shrink_prepare(struct page *page, gfp_t gfp)
{
	return 0;
}

static inline bool pamt_shrink_idle_inc(unsigned long idx)
{
	pamt_idle_count(idx, 1);
	return false;
}

static inline bool pamt_shrink_over_cap(unsigned long more) { return false; }
static inline void pamt_shrink_deferred(void) { }

static inline unsigned long tdx_pamt_drain(void)
{
	struct tdx_pamt_pair pair;
	unsigned long idx, freed = 0;
	int old;

	might_sleep();
	if (!pamt.enabled)
		return 0;
	for (idx = 0; idx < pamt.nr_slots; idx++) {
		cond_resched();
		old = atomic_read(&pamt.slots[idx].word);
		if (pamt_slot_state(old) != PAMT_SLOT_IDLE ||
		    (old & PAMT_SLOT_LEAKED) ||
		    pamt_slot_remove(&pamt.slots[idx].word, idx, &old, &pair))
			continue;
		pamt_pair_free(&pair, 1);
		pamt_stat_inc(SHRINK);
		freed++;
	}
	return freed + pamt_mag_drain(ULONG_MAX, true);
}
