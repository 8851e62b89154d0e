/* SPDX-License-Identifier: GPL-2.0 */
/* TDX Dynamic PAMT: what KVM calls.  Documentation/arch/x86/tdx-dpamt.rst */
#ifndef _ASM_X86_TDX_PAMT_H
#define _ASM_X86_TDX_PAMT_H

#include <linux/types.h>

struct page;

/**
 * struct tdx_pamt_pair - the two 4K pages that hold one 2M range's 4K PAMT
 * @pfn: page frame numbers of the two pages; they need not be contiguous
 */
struct tdx_pamt_pair {
	unsigned long pfn[2];
};

#define TDX_PAMT_CACHE_MAX	8

/**
 * struct tdx_pamt_cache - pairs one owner sets aside for atomic context
 * @nr: pairs held
 * @pairs: @pairs[0..@nr), charged to the owner's memcg by the top-up
 *
 * KVM: one per vCPU, topped up before mmu_lock.
 */
struct tdx_pamt_cache {
	unsigned int nr;
	struct tdx_pamt_pair pairs[TDX_PAMT_CACHE_MAX];
};

static inline void tdx_init_pamt_cache(struct tdx_pamt_cache *cache)
{
	cache->nr = 0;
}

/* What KVM calls (EXPORT_SYMBOL_FOR_KVM). */
bool tdx_pamt_enabled(void);
int tdx_pamt_get(unsigned long pfn, struct tdx_pamt_cache *cache);
int tdx_pamt_put(unsigned long pfn);
int tdx_topup_pamt_cache(struct tdx_pamt_cache *cache, unsigned int nr);
void tdx_free_pamt_cache(struct tdx_pamt_cache *cache);
struct page *tdx_alloc_control_page(void);
void tdx_free_control_page(struct page *page);

#endif /* _ASM_X86_TDX_PAMT_H */
