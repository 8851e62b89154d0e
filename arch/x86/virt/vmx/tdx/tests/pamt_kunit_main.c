// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the TDX Dynamic PAMT cache: set-up, teardown and the
 * checks every test shares.
 *
 * Every test runs against a fresh fake TDX module (pamt_fake.c) and a fresh
 * cache, both covering all of RAM, [0, max_pfn rounded up to 2M): the
 * pairs the cache allocates are real pages, and the fake checks that they
 * are covered and free.  The slots the tests get and put are picked by
 * number; no real TD page is behind them.
 *
 * A test fails when lockdep switched itself off (debug_locks dropped) or
 * a WARN tainted the kernel while it ran, unless it declared that it
 * triggers one; when the fake module saw a broken invariant; and when,
 * after a drain, any page the cache allocated is not back in the page
 * allocator.
 */
#include <linux/debug_locks.h>
#include <linux/memblock.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/panic.h>
#include "pamt_kunit.h"

bool pk_canary;
module_param_named(canary, pk_canary, bool, 0444);
MODULE_PARM_DESC(canary, "run the canaries that trip lockdep, the sleep-in-atomic check and KASAN");

/* Across all tests: pages not given back, set-ups and teardowns. */
static atomic_long_t pk_residual_pages = ATOMIC_LONG_INIT(0);
static atomic_t pk_setups = ATOMIC_INIT(0);
static atomic_t pk_teardowns = ATOMIC_INIT(0);

void pk_stats(u64 *vals)
{
	tdx_pamt_read_stats(vals);
}

u64 pk_stat(enum tdx_pamt_stat item)
{
	u64 vals[TDX_PAMT_STAT_NR];

	tdx_pamt_read_stats(vals);
	return vals[item];
}

unsigned long pk_slot_pfn(struct kunit *test, unsigned long nth)
{
	/* Slot 0 is left alone; an odd offset checks the rounding. */
	unsigned long pfn = (nth + 1) * TDX_PAMT_PAGES_PER_SLOT + 7;

	KUNIT_ASSERT_LT(test, pfn, pk(test)->end_pfn);
	return pfn;
}

static atomic_t *pk_slot(unsigned long pfn)
{
	return pamt_slot_lookup(pfn);
}

unsigned long pk_word(unsigned long pfn)
{
	return (u32)atomic_read(pk_slot(pfn));
}

void pk_set_word(unsigned long pfn, unsigned long word)
{
	atomic_set(pk_slot(pfn), word);
}

void pk_expect_warn(struct kunit *test)
{
	pk(test)->expect_warn = true;
}

/*
 * Take a pair out of the fake module behind the cache's back and free it:
 * for slots the test deliberately LEAKED, and to clean up after a failed
 * test so that the next one starts clean.
 */
static void pk_scrub_slot(unsigned long idx)
{
	unsigned long base = pamt_slot_base_pfn(idx);
	struct tdx_pamt_pair pair;
	u64 status;

	status = pamt_fake_ops.remove(base, &pair);
	if (!status)
		pamt_pair_free(&pair, 1);
	atomic_set(&pamt.slots[idx].word, 0);
	pamt_stat_add(INSTALLED, -1);
}

void pk_unleak(struct kunit *test, unsigned long pfn)
{
	unsigned long idx = pamt_slot_idx(pk_slot(pfn));

	KUNIT_EXPECT_TRUE(test, pk_word(pfn) & PAMT_SLOT_LEAKED);
	KUNIT_EXPECT_EQ(test, pamt_slot_refs(pk_word(pfn)), 0UL);
	pk_scrub_slot(idx);
}

void pk_check_accounting(struct kunit *test, long extra_pairs)
{
	u64 v[TDX_PAMT_STAT_NR];
	long pages;

	/* The worker frees pairs too: let it finish, cancel what is queued. */
	pamt_platform_defer_sync();
	pk_stats(v);
	pages = (long)(v[TDX_PAMT_STAT_PAGE_ALLOC] - v[TDX_PAMT_STAT_PAGE_FREE]);
	KUNIT_EXPECT_EQ_MSG(test, pages,
			    2 * (long)(v[TDX_PAMT_STAT_INSTALLED] +
				       v[TDX_PAMT_STAT_CACHED_PAIRS] +
				       atomic_long_read(&pk(test)->held_pairs) +
				       extra_pairs),
			    "installed %llu cached %llu held %ld extra %ld",
			    v[TDX_PAMT_STAT_INSTALLED],
			    v[TDX_PAMT_STAT_CACHED_PAIRS],
			    atomic_long_read(&pk(test)->held_pairs), extra_pairs);
	KUNIT_EXPECT_EQ(test, (s64)v[TDX_PAMT_STAT_INSTALLED],
			atomic64_read(&pamt_fake.pairs));
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.violations), 0LL);
}

int pk_setup_ranges(struct kunit *test, const struct tdx_pamt_range *ranges,
		    unsigned int nr, unsigned int mag_size,
		    unsigned long idle_cap)
{
	struct tdx_pamt_range all, fake[PAMT_FAKE_MAX_PIECES];
	struct tdx_pamt_config cfg = {
		.mag_size = mag_size,
		.idle_cap = idle_cap,
		.ops = &pamt_fake_ops,
	};
	struct pk_ctx *ctx = pk(test);
	unsigned int i, nr_fake = 1;
	int ret;

	ctx->end_pfn = round_up(max_pfn, TDX_PAMT_PAGES_PER_SLOT);
	ctx->nr_slots = ctx->end_pfn / TDX_PAMT_PAGES_PER_SLOT;
	if (!ranges) {
		all.start_pfn = 0;
		all.end_pfn = ctx->end_pfn;
		ranges = &all;
		nr = 1;
	}
	/* The fake module covers RAM, and any range far above it. */
	fake[0].start_pfn = 0;
	fake[0].end_pfn = ctx->end_pfn;
	for (i = 0; i < nr; i++) {
		if (ranges[i].start_pfn < ctx->end_pfn)
			continue;
		if (nr_fake == PAMT_FAKE_MAX_PIECES)
			return -EINVAL;
		fake[nr_fake++] = ranges[i];
	}
	ret = pamt_fake_init_ranges(fake, nr_fake);
	if (ret)
		return ret;
	ctx->misc_reclaimable = pk_misc_reclaimable();
	ret = tdx_pamt_init(ranges, nr, &cfg);
	if (ret) {
		pamt_fake_exit();
		return ret;
	}
	/*
	 * No test may depend on how fast a loaded machine runs it: a get
	 * waiting for another CPU's transition waits as long as it takes.
	 * pk_transit_wait_bounded() shortens it to test the bound itself.
	 */
	WRITE_ONCE(pamt.wait_ns, PK_WAIT_NS);
	ctx->up = true;
	atomic_inc(&pk_setups);
	return 0;
}

/*
 * NR_KERNEL_MISC_RECLAIMABLE to the page: every node's count and every
 * CPU's unfolded part, read until two sums agree, as vmstat's worker may
 * move a part between them.  Nothing else in 7.3 changes it.
 */
long pk_misc_reclaimable(void)
{
	long sum, last = LONG_MIN;
	struct pglist_data *pgdat;
	int cpu;

	for (;;) {
		sum = 0;
		for_each_online_pgdat(pgdat) {
			sum += atomic_long_read(&pgdat->vm_stat[NR_KERNEL_MISC_RECLAIMABLE]);
			for_each_possible_cpu(cpu)
				sum += per_cpu_ptr(pgdat->per_cpu_nodestats, cpu)->
				       vm_node_stat_diff[NR_KERNEL_MISC_RECLAIMABLE];
		}
		if (sum == last)
			return sum;
		last = sum;
	}
}

int pk_setup(struct kunit *test, unsigned int mag_size,
	     unsigned long idle_cap)
{
	return pk_setup_ranges(test, NULL, 0, mag_size, idle_cap);
}

int pk_glue(struct kunit *test)
{
	return pamt_glue_register();
}

static void pk_teardown(struct kunit *test)
{
	struct pk_ctx *ctx = pk(test);
	unsigned long idx, word, dirty = 0;
	u64 v[TDX_PAMT_STAT_NR];
	long pages;

	if (!ctx->up)
		return;
	ctx->up = false;

	pamt_fake_inject(PAMT_FAKE_ADD, 0, 0, 0);
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
	pamt_fake_set_latency(PAMT_FAKE_ADD, 0, 0, 0);
	pamt_fake_set_latency(PAMT_FAKE_REMOVE, 0, 0, 0);
	pamt_fake_stall(PAMT_FAKE_ADD, false);
	pamt_fake_stall(PAMT_FAKE_REMOVE, false);

	tdx_pamt_drain();

	/* Whatever a failed test left behind, so that exit does not WARN. */
	for (idx = 0; idx < pamt.nr_slots; idx++) {
		word = atomic_read(&pamt.slots[idx].word);
		if (word & PAMT_SLOT_HOLE || !(word & PAMT_SLOT_INSTALLED))
			continue;
		dirty++;
		if (!(word & PAMT_SLOT_LEAKED) && !pamt_slot_refs(word))
			pamt_idle_count(idx, -1);
		pk_scrub_slot(idx);
	}
	KUNIT_EXPECT_EQ_MSG(test, dirty, 0UL,
			    "slots still installed after drain");

	pk_stats(v);
	pages = (long)(v[TDX_PAMT_STAT_PAGE_ALLOC] - v[TDX_PAMT_STAT_PAGE_FREE]);
	KUNIT_EXPECT_EQ_MSG(test, pages, 0L, "pages not given back");
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_CACHED_PAIRS], 0ULL);
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_IDLE_SLOTS], 0ULL);
	KUNIT_EXPECT_EQ(test, v[TDX_PAMT_STAT_INSTALLED], 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.pairs), 0LL);
	atomic_long_add(pages, &pk_residual_pages);

	tdx_pamt_exit();
	KUNIT_EXPECT_EQ_MSG(test, pk_misc_reclaimable(), ctx->misc_reclaimable,
			    "KReclaimable not back where it was");
	KUNIT_EXPECT_EQ(test, pamt_fake_check_all(), 0UL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pamt_fake.violations), 0LL);
	pamt_fake_exit();
	atomic_inc(&pk_teardowns);
}

int pk_test_init(struct kunit *test)
{
	struct pk_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->debug_locks = READ_ONCE(debug_locks);
	ctx->tainted = test_taint(TAINT_WARN);
	atomic_long_set(&ctx->held_pairs, 0);
	test->priv = ctx;
	return 0;
}

void pk_test_exit(struct kunit *test)
{
	struct pk_ctx *ctx = pk(test);

	pk_teardown(test);

	KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(debug_locks), ctx->debug_locks,
			    "lockdep reported a problem and switched itself off");
	if (ctx->expect_warn) {
		KUNIT_EXPECT_TRUE_MSG(test, test_taint(TAINT_WARN),
				      "the expected WARN did not fire");
	} else if (!ctx->tainted) {
		KUNIT_EXPECT_FALSE_MSG(test, test_taint(TAINT_WARN),
				       "a WARN fired during the test");
	}
}

/* Last case of every suite: nothing leaked across the suite's tests. */
void pk_suite_leak_check(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, atomic_read(&pk_setups),
			atomic_read(&pk_teardowns));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&pk_residual_pages), 0L);
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());
	KUNIT_EXPECT_NULL(test, pamt_glue_shrinker());
}
