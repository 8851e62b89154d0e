/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM: TDX: what the TD fault path and the TD lifecycle call to keep the
 * Dynamic PAMT of TD memory (tdx_pamt.c).  Free of KVM types, so that the
 * userspace PAMT harness and its benchmark build it too.
 */
#ifndef __KVM_X86_VMX_TDX_PAMT_H
#define __KVM_X86_VMX_TDX_PAMT_H

#include <linux/types.h>
#include <asm/tdx_pamt.h>

struct page;

/*
 * Pairs one fault may need: one per S-EPT page it may add below the root
 * (levels - 1; the root comes with the TD's control pages) plus the leaf.
 */
#define TDX_PAMT_FAULT_PAIRS(ept_levels)	((ept_levels) - 1 + 1)

/**
 * struct tdx_pamt_vcpu - the PAMT state of one TD vCPU
 * @reserve: pairs topped up before mmu_lock, consumed under it; touched
 *	only by the vCPU's own thread
 */
struct tdx_pamt_vcpu {
	struct tdx_pamt_cache reserve;
};

int tdx_pamt_vcpu_topup(struct tdx_pamt_vcpu *pv, int ept_levels);
int tdx_pamt_vcpu_map(struct tdx_pamt_vcpu *pv, unsigned long pfn, bool huge);
void tdx_pamt_vcpu_unmap(unsigned long pfn, bool huge);
void tdx_pamt_vcpu_free(struct tdx_pamt_vcpu *pv);
struct page *tdx_pamt_td_alloc_control(void);
void tdx_pamt_td_free_control(struct page *page);

#endif /* __KVM_X86_VMX_TDX_PAMT_H */
