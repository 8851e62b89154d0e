// SPDX-License-Identifier: GPL-2.0
/*
 * The cache as KVM TDX drives it (arch/x86/kvm/vmx/tdx.c, via
 * edits/20-kvm-tdx-pamt.patch): a per-vCPU struct tdx_pamt_cache topped up
 * before mmu_lock, tdx_pamt_get() under it, and the control-page helpers.
 */
#include "../harness.h"

/*
 * Pairs tdx_topup_external_cache() asks for: one per S-EPT page below the
 * root a fault may add, plus the leaf.  mmu.c passes PT64_ROOT_MAX_LEVEL.
 */
static unsigned int kvm_fault_pairs(int ept_levels)
{
	int spts = ept_levels - 1 < 5 ? ept_levels - 1 : 5;

	return spts + 1;
}

PAMT_TEST(kvm_topup_sized_for_one_fault)
{
	struct tdx_pamt_cache c;

	tdx_init_pamt_cache(&c);
	pamt_env_up_default();
	EXPECT_EQ(kvm_fault_pairs(4), 4);
	EXPECT_EQ(kvm_fault_pairs(5), 5);
	EXPECT_EQ(tdx_topup_pamt_cache(&c, kvm_fault_pairs(4)), 0);
	EXPECT_EQ(c.nr, 4);
	EXPECT_EQ(tdx_topup_pamt_cache(&c, kvm_fault_pairs(5)), 0);
	EXPECT_EQ(c.nr, 5);
	/* A full cache costs nothing to top up again. */
	EXPECT_EQ(tdx_topup_pamt_cache(&c, kvm_fault_pairs(4)), 0);
	EXPECT_EQ(c.nr, 5);
	EXPECT_EQ(tdx_topup_pamt_cache(&c, TDX_PAMT_CACHE_MAX + 1), -EINVAL);
	tdx_free_pamt_cache(&c);
	EXPECT_EQ(c.nr, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 5);
}

/*
 * A fault that adds three S-EPT pages and a leaf, each in a new 2M range,
 * with the page allocator failing and the lock held: the vCPU's cache
 * carries it, and the next fault without a top-up gets -ENOMEM (KVM
 * retries the fault, topping up first), not a sleep.
 */
PAMT_TEST(kvm_fault_under_lock_uses_cache)
{
	unsigned int n = kvm_fault_pairs(4), i;
	struct tdx_pamt_cache c;

	tdx_init_pamt_cache(&c);
	pamt_env_up_default();
	ASSERT(!tdx_topup_pamt_cache(&c, n));
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);

	/* mmu_lock held for read: an rwlock_t, which sleeps on PREEMPT_RT. */
	pamt_sim_enter_atomic();
	for (i = 0; i < n; i++)
		EXPECT_EQ(tdx_pamt_get(slot_pfn(i, 7), &c), 0);
	EXPECT_EQ(c.nr, 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(i, 7), &c), -ENOMEM);
	/* Another page of a range that has its pair needs nothing. */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(0, 8), &c), 0);
	/* Outside a vCPU KVM passes no cache. */
	EXPECT_EQ(tdx_pamt_get(slot_pfn(1, 8), NULL), 0);
	pamt_sim_exit_atomic();

	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 4);
	for (i = 0; i < n; i++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(i, 7)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(0, 8)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(1, 8)), 0);
	tdx_free_pamt_cache(&c);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 4);
}

/* TDR, TDCS, TDVPR and TDCX pages hold their range while they live. */
PAMT_TEST(kvm_control_pages_hold_their_range)
{
	struct page *p;
	unsigned long pfn;

	pamt_env_up_default();
	p = tdx_alloc_control_page();
	ASSERT(p);
	env.held_pages++;
	pfn = page_to_pfn(p);
	EXPECT(pamt_fake_range_has_pair(pfn));
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 1);
	EXPECT_EQ(pamt_fake_evict(pfn), -EBUSY);
	tdx_free_control_page(p);
	env.held_pages--;
	tdx_free_control_page(NULL);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
}
