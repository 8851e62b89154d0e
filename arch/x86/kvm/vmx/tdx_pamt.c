// SPDX-License-Identifier: GPL-2.0
/*
 * KVM: TDX: Dynamic PAMT glue for the TD fault path and TD lifecycle.
 *
 * A 4K page of a 2M range can be handed to a TD (S-EPT page, PAGE.AUG,
 * PAGE.ADD) only once the range has a PAMT pair.  The fault path maps
 * under mmu_lock, where nothing may sleep, so each vCPU tops up a small
 * reserve of pairs before it takes the lock and the map consumes it.  A
 * 2M mapping needs the opposite: its range must carry no pair.
 *
 * Call order in the fault path:
 *
 *	tdx_pamt_vcpu_topup(pv, levels);	may sleep, before mmu_lock
 *	lock mmu_lock
 *	tdx_pamt_vcpu_map(pv, pfn, huge);	for each S-EPT page and the leaf
 *	unlock mmu_lock
 *
 * and tdx_pamt_vcpu_unmap() when a page leaves the TD (also from an RCU
 * callback).  Control pages (TDR, TDCS, TDVPR, TDCX) come from
 * tdx_pamt_td_alloc_control() in ioctl context.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include "tdx_pamt.h"

/**
 * tdx_pamt_vcpu_topup() - fill the reserve for one fault
 * @pv: the vCPU's PAMT state
 * @ept_levels: levels of the TD's S-EPT (4 or 5)
 *
 * Context: process context, before taking mmu_lock; may sleep.
 *
 * Return: 0, -EINVAL for a bad @ept_levels, or -ENOMEM.
 */
int tdx_pamt_vcpu_topup(struct tdx_pamt_vcpu *pv, int ept_levels)
{
	if (ept_levels < 2 ||
	    TDX_PAMT_FAULT_PAIRS(ept_levels) > TDX_PAMT_CACHE_MAX)
		return -EINVAL;
	return __tdx_topup_pamt_cache(&pv->reserve,
				      TDX_PAMT_FAULT_PAIRS(ept_levels),
				      GFP_KERNEL_ACCOUNT);
}

/**
 * tdx_pamt_vcpu_map() - make a page's range ready to be mapped in a TD
 * @pv: the vCPU's PAMT state, topped up for this fault
 * @pfn: the page: an S-EPT page or the leaf
 * @huge: the leaf is mapped as a 2M page
 *
 * A 4K page takes a reference on its range's pair, from the reserve if
 * the cache has none at hand.  A 2M page needs its range free of any
 * pair: an idle one is removed, one in use refuses the 2M mapping.
 *
 * Context: under mmu_lock; never sleeps.
 *
 * Return: 0; -EBUSY if a 2M mapping must fall back to 4K, or the module
 * stayed busy; -ENOMEM if the reserve ran dry; -EINVAL or -EIO as
 * tdx_pamt_get() and tdx_pamt_evict() return them.
 */
int tdx_pamt_vcpu_map(struct tdx_pamt_vcpu *pv, unsigned long pfn, bool huge)
{
	if (huge)
		return tdx_pamt_evict(pfn);
	return tdx_pamt_get(pfn, &pv->reserve);
}

/**
 * tdx_pamt_vcpu_unmap() - a page left the TD
 * @pfn: the page, as given to tdx_pamt_vcpu_map()
 * @huge: it was mapped as a 2M page
 *
 * Context: any but hardirq; softirq (an RCU callback) included.
 */
void tdx_pamt_vcpu_unmap(unsigned long pfn, bool huge)
{
	if (!huge)
		tdx_pamt_put(pfn);
}

/**
 * tdx_pamt_vcpu_free() - give back what the vCPU's reserve holds
 * @pv: the vCPU's PAMT state; empty on return
 *
 * Context: when the vCPU is freed; any context but hardirq.
 */
void tdx_pamt_vcpu_free(struct tdx_pamt_vcpu *pv)
{
	tdx_free_pamt_cache(&pv->reserve);
}

/**
 * tdx_pamt_td_alloc_control() - allocate a TD control page
 *
 * For TDR, TDCS, TDVPR and TDCX pages; accounted to the VM's memcg.
 *
 * Context: process context; may sleep.
 *
 * Return: the page with its range's pair referenced, or NULL.
 */
struct page *tdx_pamt_td_alloc_control(void)
{
	return __tdx_alloc_control_page(GFP_KERNEL_ACCOUNT);
}

/**
 * tdx_pamt_td_free_control() - free a page from tdx_pamt_td_alloc_control()
 * @page: the page, reclaimed from the TD already; NULL is ignored
 */
void tdx_pamt_td_free_control(struct page *page)
{
	tdx_free_control_page(page);
}
