// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, magazine layer: per-CPU magazines of free pairs
 * (Bonwick and Adams, 2001), callers' reserves, pair pages.  See the rst.
 */
#include <linux/export.h>
#include <linux/kvm_types.h>
#include <linux/gfp.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include "pamt_internal.h"

#define PAMT_FREE_BATCH	16	/* pairs a drain takes per lock hold */

/* @pairs[0..@nr) entering (@sign 1) or leaving (-1) a magazine. */
static void pamt_free_pairs_add(const struct tdx_pamt_pair *pairs,
				unsigned int nr, int sign)
{
	unsigned int i;

	pamt_held_add(sign * (long)nr);
	pamt_cached_add(sign * (long)nr);
	for (i = 0; i < nr; i++)
		pamt_meminfo_add(pamt_pair_nid(&pairs[i]), sign);
}

/* Free pairs in every CPU's magazine, racy: for the worker and the shrinker. */
long pamt_cached_pairs(void)
{
	unsigned int cpu;
	long n = 0;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(pamt.pcpu, cpu)->stat[PAMT_PCPU_CACHED]);
	return max(n, 0L);
}

/*
 * Two order-0 pages, __GFP_RECLAIMABLE: see "Where pair pages come from"
 * in the rst.  Return: 0 or -ENOMEM, nothing allocated.
 */
int pamt_pair_alloc_pages(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	struct page *p0, *p1;

	gfp |= __GFP_RECLAIMABLE;
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

/* Reset @n pairs, none in the module, and free them. */
void pamt_pair_free(const struct tdx_pamt_pair *pairs, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		pamt.ops->reset_page(pairs[k].pfn[0]);
		pamt.ops->reset_page(pairs[k].pfn[1]);
		__free_page(pfn_to_page(pairs[k].pfn[0]));
		__free_page(pfn_to_page(pairs[k].pfn[1]));
	}
	pamt_stat_add(PAGE_FREE, 2 * n);
	/* Else direct reclaim sees no progress and fails __GFP_NORETRY. */
	mm_account_reclaimed_pages(2 * n);
}

/* Up to @n pairs of @pc to @pairs: a leaf lock, never taken in a transition. */
static unsigned int pamt_mag_take(struct pamt_pcpu *pc,
				  struct tdx_pamt_pair *pairs, unsigned int n)
{
	unsigned long flags;
	unsigned int got;

	spin_lock_irqsave(&pc->lock, flags);
	got = min(n, pc->mag->nr);
	pc->mag->nr -= got;
	memcpy(pairs, pc->mag->pairs + pc->mag->nr, got * sizeof(*pairs));
	if (got)
		pamt_free_pairs_add(pairs, got, -1);
	spin_unlock_irqrestore(&pc->lock, flags);
	return got;
}

/* This CPU's, or the old one's after a migration: the lock guards it. */
#define pamt_mag_this()	raw_cpu_ptr(pamt.pcpu)

/* A pair from this CPU's magazine; false if none. */
bool pamt_mag_pop(struct tdx_pamt_pair *pair)
{
	bool found = pamt_mag_take(pamt_mag_this(), pair, 1);

	if (found)
		pamt_stat_inc(MAG_HIT);
	else
		pamt_stat_inc(MAG_MISS);
	return found;
}

/* At the idle cap, or with this CPU's magazine full, @pair goes back. */
void pamt_mag_push(const struct tdx_pamt_pair *pair)
{
	struct pamt_pcpu *pc;
	unsigned long flags;
	bool pushed = false;

	if (!pamt_shrink_over_cap(1)) {
		pc = pamt_mag_this();
		spin_lock_irqsave(&pc->lock, flags);
		pushed = pc->mag->nr < pamt.mag_size;
		if (pushed) {
			pc->mag->pairs[pc->mag->nr++] = *pair;
			pamt_free_pairs_add(pair, 1, 1);
		}
		spin_unlock_irqrestore(&pc->lock, flags);
	}
	if (!pushed)
		pamt_pair_free(pair, 1);
}

/* Free one of this CPU's free pairs, for a put over the cap; never sleeps. */
bool pamt_mag_free_one(void)
{
	struct tdx_pamt_pair pair;

	if (!pamt_mag_take(pamt_mag_this(), &pair, 1))
		return false;
	pamt_pair_free(&pair, 1);
	return true;
}

/*
 * Free up to @nr pairs of every CPU's magazine, dead CPUs' too, with no lock
 * held (the allocator sleeps on RT); allocates nothing, no CPU hotplug lock.
 */
unsigned long pamt_mag_drain(unsigned long nr, bool resched)
{
	struct tdx_pamt_pair batch[PAMT_FREE_BATCH];
	unsigned long freed = 0;
	unsigned int cpu, n;

	for_each_possible_cpu(cpu) {
		while (freed < nr) {
			n = pamt_mag_take(per_cpu_ptr(pamt.pcpu, cpu), batch,
					  min_t(unsigned long, nr - freed,
						PAMT_FREE_BATCH));
			if (!n)
				break;
			pamt_pair_free(batch, n);
			freed += n;
			if (resched)
				cond_resched();
		}
	}
	return freed;
}

static void pamt_mag_free_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		kfree(per_cpu_ptr(pamt.pcpu, cpu)->mag);
	free_percpu(pamt.pcpu);
	pamt.pcpu = NULL;
}

int pamt_mag_init(void)
{
	struct pamt_pcpu *pc;
	unsigned int cpu;

	pamt.pcpu = alloc_percpu(struct pamt_pcpu);
	if (!pamt.pcpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(pamt.pcpu, cpu);
		spin_lock_init(&pc->lock);
		pc->mag = kmalloc(struct_size(pc->mag, pairs, pamt.mag_size),
				  GFP_KERNEL);
		if (!pc->mag) {
			pamt_mag_free_all();
			return -ENOMEM;
		}
		pc->mag->nr = 0;
	}
	return 0;
}

/* With no other user of the cache left. */
void pamt_mag_exit(void)
{
	pamt_mag_drain(ULONG_MAX, true);
	pamt_mag_free_all();
}

/* Charge @pair's pages to the current task's memcg; may reclaim. */
static int pamt_pair_charge(const struct tdx_pamt_pair *pair, gfp_t gfp)
{
	struct page *lo = pfn_to_page(pair->pfn[0]);
	int ret;

	ret = memcg_kmem_charge_page(lo, gfp, 0);
	if (ret)
		return ret;
	ret = memcg_kmem_charge_page(pfn_to_page(pair->pfn[1]), gfp, 0);
	if (!ret)
		ret = pamt_shrink_prepare(lo, gfp);
	if (ret)
		pamt_pair_uncharge(pair);
	return ret;
}

#ifdef CONFIG_MEMCG
/* Drop whatever charge @pair's pages carry; never sleeps. */
void pamt_pair_uncharge(const struct tdx_pamt_pair *pair)
{
	memcg_kmem_uncharge_page(pfn_to_page(pair->pfn[0]), 0);
	memcg_kmem_uncharge_page(pfn_to_page(pair->pfn[1]), 0);
}
#endif

/*
 * Fill @res up to @nr pairs, charged to the caller's memcg with __GFP_ACCOUNT.
 * Return: 0; -EINVAL if @nr is too large; -ENOMEM, @res keeping what it got.
 */
int __tdx_topup_pamt_cache(struct tdx_pamt_cache *res, unsigned int nr,
			   gfp_t gfp)
{
	bool charge = (gfp & __GFP_ACCOUNT) && memcg_kmem_online();
	struct tdx_pamt_pair *pair;

	might_alloc(gfp);
	if (nr > TDX_PAMT_CACHE_MAX)
		return -EINVAL;
	if (!pamt.enabled)
		return 0;
	for (; res->nr < nr; res->nr++) {
		pair = &res->pairs[res->nr];
		if (!pamt_mag_pop(pair) &&
		    pamt_pair_alloc_pages(pair, gfp & ~__GFP_ACCOUNT))
			return -ENOMEM;
		if (charge && pamt_pair_charge(pair, gfp)) {
			pamt_mag_push(pair);
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * tdx_topup_pamt_cache() - fill a vCPU's @cache up to @nr pairs; may sleep
 * @cache: the cache; the caller's memcg pays for its pairs
 * @nr: pairs wanted, at most TDX_PAMT_CACHE_MAX
 * Return: as __tdx_topup_pamt_cache().
 */
int tdx_topup_pamt_cache(struct tdx_pamt_cache *cache, unsigned int nr)
{
	return __tdx_topup_pamt_cache(cache, nr, GFP_KERNEL_ACCOUNT);
}
EXPORT_SYMBOL_FOR_KVM(tdx_topup_pamt_cache);

/**
 * tdx_free_pamt_cache() - give every pair of @res back to the cache
 * @res: the reserve; empty on return, its pairs uncharged
 */
void tdx_free_pamt_cache(struct tdx_pamt_cache *res)
{
	/* A reserve stays empty while the cache is off. */
	if (WARN_ON_ONCE(!pamt.enabled && res->nr))
		return;
	while (res->nr) {
		pamt_pair_uncharge(&res->pairs[--res->nr]);
		pamt_mag_push(&res->pairs[res->nr]);
	}
}
EXPORT_SYMBOL_FOR_KVM(tdx_free_pamt_cache);
