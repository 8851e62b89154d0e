// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the PAMT cache as KVM TDX calls it (arch/x86/kvm/vmx/tdx.c): a
 * put from a real RCU callback, the per-vCPU cache from vCPU creation to
 * vCPU free, and TD control pages.  Only the exported API is used, as
 * kvm-intel would use it; KVM itself is not run.
 */
#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include "pamt_kunit.h"

/* x86's mmu_lock is an rwlock: faults map under it read-held. */
static DEFINE_RWLOCK(pk_kvm_mmu_lock);

/* As tdx_topup_external_cache() sizes its top-up for one fault. */
static unsigned int pk_kvm_fault_pairs(int ept_levels)
{
	return min(PT64_ROOT_MAX_LEVEL, ept_levels - 1) + 1;
}

struct pk_kvm_rcu {
	struct rcu_head rcu;
	unsigned long pfn;
	int ret;
	bool ran;
	bool bh_off;
	bool softirq;
};

static void pk_kvm_rcu_put_cb(struct rcu_head *head)
{
	struct pk_kvm_rcu *r = container_of(head, struct pk_kvm_rcu, rcu);

	/* Offloaded callbacks run in a kthread, but with bottom halves off. */
	r->bh_off = in_softirq();
	r->softirq = in_serving_softirq();
	r->ret = tdx_pamt_put(r->pfn);
	WRITE_ONCE(r->ran, true);
}

/* Queue one put as an RCU callback and wait for it to have run. */
static void pk_kvm_put_from_rcu(struct kunit *test, struct pk_kvm_rcu *r,
				unsigned long pfn)
{
	r->pfn = pfn;
	call_rcu(&r->rcu, pk_kvm_rcu_put_cb);
	rcu_barrier();
	KUNIT_EXPECT_TRUE(test, READ_ONCE(r->ran));
	KUNIT_EXPECT_EQ(test, r->ret, 0);
	KUNIT_EXPECT_TRUE(test, r->bh_off);
}

/*
 * An S-EPT page and a leaf in one 2M range, both put from RCU callbacks,
 * as they would be if KVM freed S-EPT pages from its RCU callback: first
 * a put that only drops the count, then the last one.  With @lean (an
 * idle cap of 0) that one REMOVEs.
 */
static void pk_kvm_rcu_put(struct kunit *test, bool lean)
{
	struct pk_kvm_rcu *r;
	unsigned long pfn;

	pk_up(test);
	if (lean)
		pk_set_idle_cap(0);
	r = kunit_kcalloc(test, 2, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	pfn = pk_slot_pfn(test, 2);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn, NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn + 1, NULL), 0);

	pk_kvm_put_from_rcu(test, &r[0], pfn);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)), PAMT_SLOT_ACTIVE);
	KUNIT_EXPECT_EQ(test, pamt_slot_refs(pk_word(pfn)), 1UL);

	pk_kvm_put_from_rcu(test, &r[1], pfn + 1);
	KUNIT_EXPECT_EQ(test, pamt_slot_refs(pk_word(pfn)), 0UL);
	if (!lean) {
		KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)),
				PAMT_SLOT_IDLE);
		KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
	} else {
		KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)),
				PAMT_SLOT_EMPTY);
		KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(pfn));
	}
	kunit_info(test, "RCU callbacks ran %s\n",
		   r[1].softirq ? "in softirq" : "offloaded, bottom halves off");
	pk_check_accounting(test, 0);
}

static void pk_kvm_rcu_put_magazine(struct kunit *test)
{
	pk_kvm_rcu_put(test, false);
}

static void pk_kvm_rcu_put_lean(struct kunit *test)
{
	pk_kvm_rcu_put(test, true);
}

/*
 * One fault under the read-held lock: an S-EPT page below the root for
 * each level but the last, then the leaf, each in a range of its own.
 */
static void pk_kvm_fault(struct kunit *test, struct tdx_pamt_cache *c,
			 unsigned long first, unsigned int nr)
{
	int ret[TDX_PAMT_CACHE_MAX];
	unsigned int i;

	read_lock(&pk_kvm_mmu_lock);
	/* On PREEMPT_RT the rwlock sleeps, and KVM runs preemptible. */
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		KUNIT_EXPECT_FALSE(test, preemptible());
	for (i = 0; i < nr; i++)
		ret[i] = tdx_pamt_get(pk_slot_pfn(test, first + i), c);
	read_unlock(&pk_kvm_mmu_lock);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, ret[i], 0);
}

/* The leaf is zapped under the write-held lock, S-EPT pages at teardown. */
static void pk_kvm_unmap(struct kunit *test, unsigned long first,
			 unsigned int nr)
{
	unsigned int i;

	write_lock(&pk_kvm_mmu_lock);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test,
				tdx_pamt_put(pk_slot_pfn(test, first + i)), 0);
	write_unlock(&pk_kvm_mmu_lock);
}

/*
 * The vCPU's cache from tdx_vcpu_create() to tdx_vcpu_free(): topped up
 * before each fault for the S-EPT depth, drawn on under the lock when the
 * magazines are empty, and given back when the vCPU goes.
 */
static void pk_kvm_vcpu_cache(struct kunit *test)
{
	unsigned int four = pk_kvm_fault_pairs(4);
	unsigned int five = pk_kvm_fault_pairs(5);
	struct tdx_pamt_cache c;

	KUNIT_EXPECT_EQ(test, four, 4U);
	KUNIT_EXPECT_EQ(test, five, 5U);
	KUNIT_EXPECT_LE(test, five, TDX_PAMT_CACHE_MAX);
	pk_up(test);
	tdx_init_pamt_cache(&c);

	/* 4-level S-EPT: the magazines are empty, the cache pays for all. */
	KUNIT_ASSERT_EQ(test, tdx_topup_pamt_cache(&c, four), 0);
	KUNIT_EXPECT_EQ(test, c.nr, four);
	pk_check_accounting(test, c.nr);
	pk_kvm_fault(test, &c, 10, four);
	KUNIT_EXPECT_EQ(test, c.nr, 0U);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), (u64)four);

	/* 5-level S-EPT: one more; ranges with a pair take nothing. */
	KUNIT_ASSERT_EQ(test, tdx_topup_pamt_cache(&c, five), 0);
	KUNIT_EXPECT_EQ(test, c.nr, five);
	pk_kvm_fault(test, &c, 10, four);
	KUNIT_EXPECT_EQ(test, c.nr, five);
	pk_kvm_fault(test, &c, 20, five);
	KUNIT_EXPECT_EQ(test, c.nr, 0U);
	pk_check_accounting(test, 0);

	pk_kvm_unmap(test, 10, four);
	pk_kvm_unmap(test, 10, four);
	pk_kvm_unmap(test, 20, five);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS),
			(u64)(four + five));

	/* Freed with pairs in it, as a vCPU that never faulted again. */
	KUNIT_ASSERT_EQ(test, tdx_topup_pamt_cache(&c, five), 0);
	tdx_free_pamt_cache(&c);
	KUNIT_EXPECT_EQ(test, c.nr, 0U);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), (u64)five);
	pk_check_accounting(test, 0);
}

#define PK_KVM_CTRL	10	/* TDR, 4 TDCS, TDVPR, 4 TDCX */

/* A live control page holds a reference on its range; count them. */
static unsigned long pk_kvm_refs_expected(struct page **pages, int nr,
					  unsigned long pfn)
{
	unsigned long refs = 0;
	int i;

	for (i = 0; i < nr; i++)
		if (pages[i] &&
		    page_to_pfn(pages[i]) / TDX_PAMT_PAGES_PER_SLOT ==
		    pfn / TDX_PAMT_PAGES_PER_SLOT)
			refs++;
	return refs;
}

static void pk_kvm_check_refs(struct kunit *test, struct page **pages)
{
	unsigned long pfn;
	int i;

	for (i = 0; i < PK_KVM_CTRL; i++) {
		if (!pages[i])
			continue;
		pfn = page_to_pfn(pages[i]);
		KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(pfn));
		KUNIT_EXPECT_EQ(test, pamt_slot_refs(pk_word(pfn)),
				pk_kvm_refs_expected(pages, PK_KVM_CTRL, pfn));
	}
}

/*
 * TD and vCPU control pages: each allocation takes a reference on its
 * page's range, each free drops it, in any order; NULL frees nothing and
 * a failed PAMT.ADD hands out no page.
 */
static void pk_kvm_control_pages(struct kunit *test)
{
	struct page *pages[PK_KVM_CTRL] = { };
	unsigned long pfn;
	int i;

	pk_up(test);
	for (i = 0; i < PK_KVM_CTRL; i++) {
		pages[i] = tdx_alloc_control_page();
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
	}
	pk_kvm_check_refs(test, pages);

	/* The vCPU goes first (TDCX, then TDVPR), then the TD. */
	for (i = PK_KVM_CTRL - 1; i >= PK_KVM_CTRL / 2; i--) {
		pfn = page_to_pfn(pages[i]);
		tdx_free_control_page(pages[i]);
		pages[i] = NULL;
		if (pk_kvm_refs_expected(pages, PK_KVM_CTRL, pfn))
			KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)),
					PAMT_SLOT_ACTIVE);
		else
			KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(pfn)),
					PAMT_SLOT_IDLE);
	}
	pk_kvm_check_refs(test, pages);
	for (i = 0; i < PK_KVM_CTRL / 2; i++) {
		pfn = page_to_pfn(pages[i]);
		tdx_free_control_page(pages[i]);
		pages[i] = NULL;
		KUNIT_EXPECT_EQ(test, pamt_slot_refs(pk_word(pfn)),
				pk_kvm_refs_expected(pages, PK_KVM_CTRL, pfn));
	}
	tdx_free_control_page(NULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED),
			pk_stat(TDX_PAMT_STAT_IDLE_SLOTS));
	pk_check_accounting(test, 0);

	/* PAMT.ADD failing: no page, so KVM's error path frees nothing. */
	tdx_pamt_drain();
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 1);
	KUNIT_EXPECT_NULL(test, tdx_alloc_control_page());
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_kvm_cases[] = {
	KUNIT_CASE(pk_kvm_rcu_put_magazine),
	KUNIT_CASE(pk_kvm_rcu_put_lean),
	KUNIT_CASE(pk_kvm_vcpu_cache),
	KUNIT_CASE(pk_kvm_control_pages),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_kvm_suite = {
	.name = "tdx_pamt_kvm",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_kvm_cases,
};

kunit_test_suite(pk_kvm_suite);
