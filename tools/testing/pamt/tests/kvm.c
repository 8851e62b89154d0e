// SPDX-License-Identifier: GPL-2.0
/* The KVM TDX glue (arch/x86/kvm/vmx/tdx_pamt.c) on top of the cache. */
#include "../harness.h"
#include "tdx_pamt.h"

/* Four-level S-EPT: PDPT, PD and PT pages below the root, plus the leaf. */
#define EPT_LEVELS	4

PAMT_TEST(kvm_topup_sized_for_one_fault)
{
	struct tdx_pamt_vcpu pv = { };

	pamt_env_up_default();
	EXPECT_EQ(TDX_PAMT_FAULT_PAIRS(4), 4);
	EXPECT_EQ(TDX_PAMT_FAULT_PAIRS(5), 5);
	EXPECT_EQ(tdx_pamt_vcpu_topup(&pv, EPT_LEVELS), 0);
	EXPECT_EQ(pv.reserve.nr, 4);
	EXPECT_EQ(tdx_pamt_vcpu_topup(&pv, 5), 0);
	EXPECT_EQ(pv.reserve.nr, 5);
	/* A full reserve costs nothing to top up again. */
	EXPECT_EQ(tdx_pamt_vcpu_topup(&pv, EPT_LEVELS), 0);
	EXPECT_EQ(pv.reserve.nr, 5);
	EXPECT_EQ(tdx_pamt_vcpu_topup(&pv, 1), -EINVAL);
	EXPECT_EQ(tdx_pamt_vcpu_topup(&pv, TDX_PAMT_CACHE_MAX + 1), -EINVAL);
	tdx_pamt_vcpu_free(&pv);
	EXPECT_EQ(pv.reserve.nr, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_CACHED_PAIRS), 5);
}

/*
 * A fault that adds three S-EPT pages and a leaf, each in a new 2M range,
 * with the page allocator failing and the lock held: the reserve carries
 * it, and the next fault without a top-up gets -ENOMEM, not a sleep.
 */
PAMT_TEST(kvm_fault_under_lock_uses_reserve)
{
	struct tdx_pamt_vcpu pv = { };
	int i;

	pamt_env_up_default();
	ASSERT(!tdx_pamt_vcpu_topup(&pv, EPT_LEVELS));
	pamt_sim_fail_set(&pamt_sim_fail_page, 0, 0);

	/* mmu_lock held for read: an rwlock_t, which sleeps on PREEMPT_RT. */
	pamt_sim_enter_atomic();
	for (i = 0; i < TDX_PAMT_FAULT_PAIRS(EPT_LEVELS); i++)
		EXPECT_EQ(tdx_pamt_vcpu_map(&pv, slot_pfn(i, 7), false), 0);
	EXPECT_EQ(pv.reserve.nr, 0);
	EXPECT_EQ(tdx_pamt_vcpu_map(&pv, slot_pfn(i, 7), false), -ENOMEM);
	/* Another page of a range that has its pair needs nothing. */
	EXPECT_EQ(tdx_pamt_vcpu_map(&pv, slot_pfn(0, 8), false), 0);
	pamt_sim_exit_atomic();

	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 4);
	for (i = 0; i < TDX_PAMT_FAULT_PAIRS(EPT_LEVELS); i++)
		tdx_pamt_vcpu_unmap(slot_pfn(i, 7), false);
	tdx_pamt_vcpu_unmap(slot_pfn(0, 8), false);
	tdx_pamt_vcpu_free(&pv);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 4);
}

/* A 2M leaf removes an idle pair, and is refused while 4K pages use it. */
PAMT_TEST(kvm_huge_map_evicts_idle_refuses_busy)
{
	struct tdx_pamt_vcpu pv = { };

	pamt_env_up_default();
	ASSERT(!tdx_pamt_vcpu_topup(&pv, EPT_LEVELS));
	EXPECT_EQ(tdx_pamt_vcpu_map(&pv, slot_pfn(0, 0), false), 0);
	tdx_pamt_vcpu_unmap(slot_pfn(0, 0), false);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(0, 0)));

	EXPECT_EQ(tdx_pamt_vcpu_map(&pv, slot_pfn(0, 0), true), 0);
	EXPECT(!pamt_fake_range_has_pair(slot_pfn(0, 0)));
	tdx_pamt_vcpu_unmap(slot_pfn(0, 0), true);

	EXPECT_EQ(tdx_pamt_vcpu_map(&pv, slot_pfn(1, 3), false), 0);
	EXPECT_EQ(tdx_pamt_vcpu_map(&pv, slot_pfn(1, 0), true), -EBUSY);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(1, 0)));
	tdx_pamt_vcpu_unmap(slot_pfn(1, 3), false);
	tdx_pamt_vcpu_free(&pv);
}

PAMT_TEST(kvm_control_pages_hold_their_range)
{
	struct page *p;
	unsigned long pfn;

	pamt_env_up_default();
	p = tdx_pamt_td_alloc_control();
	ASSERT(p);
	env.held_pages++;
	pfn = page_to_pfn(p);
	EXPECT(pamt_fake_range_has_pair(pfn));
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 1);
	tdx_pamt_td_free_control(p);
	env.held_pages--;
	tdx_pamt_td_free_control(NULL);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
}
