// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: pamt_huge.c, for a future huge-page series: the pair API, and
 * DEMOTE/PROMOTE around a split and a merge as KVM would call them.
 */
#include <linux/mm.h>
#include <linux/spinlock.h>
#include "pamt_kunit.h"

/* x86's mmu_lock is an rwlock: splits and merges hold it for write. */
static DEFINE_RWLOCK(pk_kvm_mmu_lock);

/* DEMOTE takes a pair, PROMOTE gives one back; LIFO on one CPU. */
static void pk_pair_take_give(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	struct tdx_pamt_pair p, q;

	pk_up(test);
	migrate_disable();
	KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&p, NULL, GFP_NOWAIT), 0);
	KUNIT_EXPECT_NE(test, p.pfn[0], p.pfn[1]);
	KUNIT_EXPECT_LT(test, p.pfn[0], pk(test)->end_pfn);
	pk_check_accounting(test, 1);
	tdx_pamt_pair_give(&p);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&q, NULL, GFP_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, q.pfn[0], p.pfn[0]);
	KUNIT_EXPECT_EQ(test, q.pfn[1], p.pfn[1]);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_MAG_HIT), 1ULL);
	migrate_enable();

	/* Empty magazines: the reserve is next, then the allocator. */
	KUNIT_ASSERT_EQ(test, __tdx_topup_pamt_cache(&res, 1, GFP_KERNEL), 0);
	p = res.pairs[0];
	KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&q, &res, GFP_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, q.pfn[0], p.pfn[0]);
	KUNIT_EXPECT_EQ(test, res.nr, 0U);
	pk_check_accounting(test, 2);
	tdx_pamt_pair_give(&q);
	tdx_pamt_pair_give(&p);
	pk_check_accounting(test, 0);
}

/*
 * KVM's split and merge hooks, under the write-held mmu_lock: DEMOTE and
 * PROMOTE run inside the slot's transition, with preemption off (also on
 * PREEMPT_RT, where the rwlock itself sleeps).
 */
struct pk_kvm_split {
	unsigned long base;
	bool atomic;
	u64 status;
};

static u64 pk_kvm_demote_cb(const struct tdx_pamt_pair *pair, void *arg)
{
	struct pk_kvm_split *s = arg;

	s->atomic = !preemptible();
	s->status = pamt_fake_page_demote(s->base, pair);
	return s->status;
}

static u64 pk_kvm_promote_cb(struct tdx_pamt_pair *pair, void *arg)
{
	struct pk_kvm_split *s = arg;

	s->atomic = !preemptible();
	s->status = pamt_fake_page_promote(s->base, pair);
	return s->status;
}

static int pk_kvm_demote(struct pk_kvm_split *s, struct tdx_pamt_cache *c)
{
	int ret;

	s->atomic = false;
	write_lock(&pk_kvm_mmu_lock);
	ret = tdx_pamt_demote(s->base, c, pk_kvm_demote_cb, s);
	write_unlock(&pk_kvm_mmu_lock);
	return ret;
}

static void pk_kvm_free_2m(void *page)
{
	__free_pages(page, PMD_SHIFT - PAGE_SHIFT);
}

static void pk_huge_split_merge(struct kunit *test)
{
	const unsigned long split = PAMT_SLOT_INSTALLED | TDX_PAMT_PAGES_PER_SLOT;
	struct pk_kvm_split s = { };
	struct tdx_pamt_cache c;
	unsigned long i, bad = 0;
	struct page *td;
	int ret;

	pk_up(test);
	tdx_init_pamt_cache(&c);
	/*
	 * The TD's 2M page comes from the page allocator, as guest_memfd's
	 * would: no pair page can land in it while the test runs.  A range
	 * merely picked from covered memory could be handed out as a pair
	 * page by the top-up below, and the fake module rightly refuses that.
	 */
	td = alloc_pages(GFP_KERNEL | __GFP_NOWARN, PMD_SHIFT - PAGE_SHIFT);
	if (!td)
		kunit_skip(test, "no free 2M block for the TD page");
	ret = kunit_add_action_or_reset(test, pk_kvm_free_2m, td);
	KUNIT_ASSERT_EQ(test, ret, 0);
	s.base = page_to_pfn(td);
	KUNIT_ASSERT_LT(test, s.base, pk(test)->end_pfn);
	KUNIT_ASSERT_EQ(test, pamt_fake_page_aug_2m(s.base), TDX_PAMT_SUCCESS);
	/* As the per-VM split cache, topped up before mmu_lock. */
	KUNIT_ASSERT_EQ(test, tdx_topup_pamt_cache(&c, 1), 0);
	atomic_long_add(c.nr, &pk(test)->held_pairs);

	KUNIT_EXPECT_EQ(test, pk_kvm_demote(&s, &c), 0);
	KUNIT_EXPECT_TRUE(test, s.atomic);
	KUNIT_EXPECT_EQ(test, s.status, TDX_PAMT_SUCCESS);
	KUNIT_EXPECT_EQ(test, pk_word(s.base), split);
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_has_pair(s.base));
	atomic_long_sub(1 - c.nr, &pk(test)->held_pairs);
	pk_check_accounting(test, 0);

	s.atomic = false;
	write_lock(&pk_kvm_mmu_lock);
	ret = tdx_pamt_promote(s.base + 3, pk_kvm_promote_cb, &s);
	write_unlock(&pk_kvm_mmu_lock);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, s.atomic);
	KUNIT_EXPECT_EQ(test, pk_word(s.base), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(s.base));
	KUNIT_EXPECT_TRUE(test, pamt_fake_range_mapped_2m(s.base));
	pk_check_accounting(test, 0);

	/* Split again, then zap every 4K leaf: the range ends up IDLE. */
	KUNIT_EXPECT_EQ(test, pk_kvm_demote(&s, &c), 0);
	write_lock(&pk_kvm_mmu_lock);
	for (i = 0; i < TDX_PAMT_PAGES_PER_SLOT; i++) {
		bad += pamt_fake_page_remove(s.base + i) != TDX_PAMT_SUCCESS;
		bad += tdx_pamt_put(s.base + i) != 0;
	}
	write_unlock(&pk_kvm_mmu_lock);
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_EQ(test, pamt_slot_state(pk_word(s.base)), PAMT_SLOT_IDLE);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_DEMOTE), 2ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PROMOTE), 1ULL);
	atomic_long_sub(c.nr, &pk(test)->held_pairs);
	tdx_free_pamt_cache(&c);
	pk_check_accounting(test, 0);
}

/* Evict empties an idle range only, keeping its pair for the next ADD. */
static void pk_huge_evict(struct kunit *test)
{
	unsigned long pfn, end = round_up(max_pfn, TDX_PAMT_PAGES_PER_SLOT);

	pk_up(test);
	pfn = pk_slot_pfn(test, 7);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(end), -EINVAL);
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | 1);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, PAMT_BUSY_CALLS_MAX);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_IDLE);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_FALSE(test, pamt_fake_range_has_pair(pfn));
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_EVICT), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	/* Already EMPTY: nothing to do, nothing counted. */
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_EVICT), 1ULL);
	/* A LEAKED range is never touched again. */
	KUNIT_ASSERT_EQ(test, pk_get(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	PK_INJECT(PAMT_FAKE_REMOVE, TDX_PAMT_PAGE_NOT_EMPTY, 1);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EIO);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(pfn), -EIO);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), W_INST | PAMT_SLOT_LEAKED);
	pk_check_accounting(test, 0);
	pk_unleak(test, pfn);
	pk_check_accounting(test, 0);
}

/* Without Dynamic PAMT, DEMOTE takes no pair and evict does nothing. */
static void pk_huge_disabled(struct kunit *test)
{
	struct tdx_pamt_cache res = { .nr = 0 };
	struct tdx_pamt_pair p;

	KUNIT_ASSERT_FALSE(test, tdx_pamt_enabled());
	KUNIT_EXPECT_EQ(test, tdx_pamt_pair_take(&p, &res, GFP_KERNEL),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, tdx_pamt_evict(1234), 0);
}

static struct kunit_case pk_huge_cases[] = {
	KUNIT_CASE(pk_pair_take_give),
	KUNIT_CASE(pk_huge_split_merge),
	KUNIT_CASE(pk_huge_evict),
	KUNIT_CASE(pk_huge_disabled),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_huge_suite = {
	.name = "tdx_pamt_huge",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_huge_cases,
};

kunit_test_suite(pk_huge_suite);
