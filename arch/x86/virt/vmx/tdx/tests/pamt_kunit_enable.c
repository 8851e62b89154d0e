// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for enabling Dynamic PAMT: the decision tdx.c takes once,
 * the size of the PAMT page bitmap that replaces the static 4K PAMT, and
 * setting the cache up over a TDMR list and turning it off again.
 *
 * No TDX module is involved: the cache is set up with the SEAMCALL
 * backend, and no test makes it issue a SEAMCALL.  The tests that set the
 * cache up skip themselves if tdx_enable() already turned it on.
 */
#include <linux/cpu.h>
#include <linux/percpu-rwsem.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <asm/tdx.h>
#include "tdx.h"
#include "pamt_enable.h"
#include "pamt_kunit.h"
#include "pamt_seamcall.h"

/*
 * Bitmap sizes worked out by hand: pages = TDMR size / 4K, rounded up;
 * bytes = pages * bits / 8, rounded up, then rounded up to 4K.
 */
static const struct {
	u64 tdmr_size;
	unsigned int bits;
	unsigned long bytes;
} pk_enable_sizes[] = {
	/* 1G: 262144 pages.  1 bit each: 32 KiB, 8 pages exactly. */
	{ SZ_1G,				1,	32768 },
	{ SZ_1G,				2,	65536 },
	{ SZ_1G,				4,	131072 },
	{ SZ_1G,				16,	524288 },
	/* 2G at 1 bit: 524288 bits, 64 KiB. */
	{ 2ULL * SZ_1G,				1,	65536 },
	/* 3G at 2 bits: 786432 pages, 1572864 bits, 192 KiB. */
	{ 3ULL * SZ_1G,				2,	196608 },
	/* 1T at 1 bit: 2^28 pages, 2^28 bits, 32 MiB. */
	{ SZ_1T,				1,	33554432 },
	/* No entry size: no bitmap. */
	{ SZ_1G,				0,	0 },
	{ 0,					1,	0 },
	/* 1G + 4K at 1 bit: 262145 bits, 32769 bytes: 9 pages. */
	{ SZ_1G + SZ_4K,			1,	36864 },
	/* 1G + 4K at 4 bits: 1048580 bits, 131073 bytes: 33 pages. */
	{ SZ_1G + SZ_4K,			4,	135168 },
	/* One page at 1 bit: 1 byte, which takes a whole page. */
	{ SZ_4K,				1,	4096 },
	/* One byte is a partial page, which counts as a page. */
	{ 1,					1,	4096 },
	/* 128M at 1 bit: 32768 bits, exactly one page... */
	{ SZ_128M,				1,	4096 },
	/* ...and one byte more is one bit more: a second page. */
	{ SZ_128M + 1,				1,	8192 },
	/* 4T + 2M at 2 bits: 2^30 + 512 pages, 2^28 + 128 bytes: 65537 pages. */
	{ 4 * SZ_1T + SZ_2M,			2,	268439552 },
	/*
	 * 5G + 12K + 5 bytes at 4 bits: 1310724 pages (the 5 bytes are a
	 * page), 5242896 bits, 655362 bytes: two bytes over 160 pages.
	 */
	{ 5ULL * SZ_1G + 3 * SZ_4K + 5,		4,	659456 },
	/*
	 * The largest TDMR below 2^52 at the largest entry a 16-bit field
	 * holds: (2^40 - 2^18) pages * 65535 bits / 8 =
	 * (2^37 - 2^15) * 65535 bytes, a multiple of 4K; no overflow.
	 */
	{ (1ULL << 52) - SZ_1G,			65535,	9007059668336640UL },
};

static void pk_enable_bitmap_size(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pk_enable_sizes); i++) {
		unsigned long got = tdx_dpamt_bitmap_size(pk_enable_sizes[i].tdmr_size,
							  pk_enable_sizes[i].bits);

		KUNIT_EXPECT_EQ_MSG(test, got, pk_enable_sizes[i].bytes,
				    "TDMR size %#llx, %u bits per 4K page",
				    pk_enable_sizes[i].tdmr_size,
				    pk_enable_sizes[i].bits);
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(got, SZ_4K));
	}
}

/* Against the static 4K PAMT (16-byte entries): 1/128 of it at 1 bit. */
static void pk_enable_bitmap_vs_static(struct kunit *test)
{
	u64 size = 64ULL * SZ_1G;
	unsigned long static_4k = (size / SZ_4K) * 16;

	KUNIT_EXPECT_EQ(test, tdx_dpamt_bitmap_size(size, 1) * 128, static_4k);
	KUNIT_EXPECT_EQ(test, tdx_dpamt_bitmap_size(size, 2) * 64, static_4k);
}

static void pk_enable_restore_param(void *old)
{
	pamt_param_enable = (bool)(unsigned long)old;
}

/* Dynamic PAMT needs TDX_FEATURES0 bit 36 and tdx_pamt.enable. */
static void pk_enable_wanted(struct kunit *test)
{
	void *old = (void *)(unsigned long)pamt_param_enable;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pk_enable_restore_param, old), 0);
	KUNIT_EXPECT_EQ(test, TDX_FEATURES0_DYNAMIC_PAMT, 1ULL << 36);

	/* tdx_pamt.enable=1: the feature bit decides, alone. */
	pamt_param_enable = true;
	KUNIT_EXPECT_FALSE(test, tdx_pamt_wanted(0));
	KUNIT_EXPECT_FALSE(test, tdx_pamt_wanted(~TDX_FEATURES0_DYNAMIC_PAMT));
	KUNIT_EXPECT_FALSE(test, tdx_pamt_wanted(TDX_FEATURES0_NO_RBP_MOD));
	KUNIT_EXPECT_TRUE(test, tdx_pamt_wanted(TDX_FEATURES0_DYNAMIC_PAMT));
	KUNIT_EXPECT_TRUE(test, tdx_pamt_wanted(TDX_FEATURES0_DYNAMIC_PAMT |
						TDX_FEATURES0_NO_RBP_MOD));
	KUNIT_EXPECT_TRUE(test, tdx_pamt_wanted(~0ULL));

	/* tdx_pamt.enable=0: static PAMT whatever the module supports. */
	pamt_param_enable = false;
	KUNIT_EXPECT_FALSE(test, tdx_pamt_wanted(0));
	KUNIT_EXPECT_FALSE(test, tdx_pamt_wanted(TDX_FEATURES0_DYNAMIC_PAMT));
	KUNIT_EXPECT_FALSE(test, tdx_pamt_wanted(~0ULL));
}

/* Two TDMRs, [1G, 1G + @size0) and [4G, 5G), laid out as tdx.c does. */
static struct tdmr_info_list *pk_enable_tdmrs(struct kunit *test, u64 size0)
{
	struct tdmr_info_list *list;
	struct tdmr_info *t;

	list = kunit_kzalloc(test, sizeof(*list), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, list);
	list->tdmr_sz = sizeof(struct tdmr_info);
	list->max_tdmrs = 2;
	list->nr_consumed_tdmrs = 2;
	list->tdmrs = kunit_kcalloc(test, 2, list->tdmr_sz, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, list->tdmrs);
	t = list->tdmrs;
	t[0].base = SZ_1G;
	t[0].size = size0;
	t[1].base = 4ULL * SZ_1G;
	t[1].size = SZ_1G;
	return list;
}

static void pk_enable_down(void *unused)
{
	tdx_pamt_module_down();
}

/* Leave a cache that tdx_enable() turned on alone: only on TDX hardware. */
static void pk_enable_need_off(struct kunit *test)
{
	if (tdx_pamt_enabled())
		kunit_skip(test, "the cache is on: the TDX module has Dynamic PAMT");
}

/* Off (static PAMT): every call is a no-op that succeeds. */
static void pk_enable_off(struct kunit *test)
{
	unsigned long pfn = SZ_1G >> PAGE_SHIFT;

	pk_enable_need_off(test);
	/* tdx_enable() with the cache off: nothing to register. */
	tdx_pamt_module_ready();
	KUNIT_EXPECT_NULL(test, pamt_glue_shrinker());
	KUNIT_EXPECT_EQ(test, tdx_pamt_get(pfn, NULL), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, pamt_fake_idle_pairs(), 0UL);
	/* Turning off what is off does nothing. */
	tdx_pamt_module_down();
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());
}

/* The slots follow the TDMRs; the TDMRs' holes stay holes. */
static void pk_enable_over_tdmrs(struct kunit *test)
{
	struct tdmr_info_list *list = pk_enable_tdmrs(test, 2ULL * SZ_1G);
	struct tdx_pamt_range r[2];

	pk_enable_need_off(test);
	KUNIT_ASSERT_EQ(test, pamt_enable_ranges(list, r), 2);
	KUNIT_EXPECT_EQ(test, r[0].start_pfn, SZ_1G >> PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, r[0].end_pfn, (3ULL * SZ_1G) >> PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, r[1].start_pfn, (4ULL * SZ_1G) >> PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, r[1].end_pfn, (5ULL * SZ_1G) >> PAGE_SHIFT);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pk_enable_down, NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_module_prepare(list), 0);
	KUNIT_EXPECT_TRUE(test, tdx_pamt_enabled());
	/* From 1G to 5G, 2M a slot; [3G, 4G) is a hole. */
	KUNIT_EXPECT_EQ(test, pamt.nr_slots, 2048UL);
	KUNIT_EXPECT_EQ(test, pamt.base_idx, 512UL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_get((3ULL * SZ_1G) >> PAGE_SHIFT, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pamt.mag_size, PAMT_MAG_SIZE);
	/* A second set-up is refused and changes nothing. */
	KUNIT_EXPECT_EQ(test, pamt_enable(list, &tdx_pamt_seamcall_ops), -EBUSY);
	KUNIT_EXPECT_EQ(test, pamt.nr_slots, 2048UL);

	/* Once the module is initialised: registered directly, no worker. */
	tdx_pamt_module_ready();
	KUNIT_EXPECT_NOT_NULL(test, pamt_glue_shrinker());
	KUNIT_EXPECT_TRUE(test, tdx_pamt_enabled());

	tdx_pamt_module_down();
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());
	KUNIT_EXPECT_NULL(test, pamt_glue_shrinker());
}

/* What the core cannot slice into 2M slots is refused, and stays off. */
static void pk_enable_refused(struct kunit *test)
{
	struct tdmr_info_list *list;

	pk_enable_need_off(test);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pk_enable_down, NULL), 0);
	list = pk_enable_tdmrs(test, SZ_1G + SZ_4K);
	KUNIT_EXPECT_EQ(test, tdx_pamt_module_prepare(list), -EINVAL);
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());

	/* Overlapping TDMRs. */
	list = pk_enable_tdmrs(test, 4ULL * SZ_1G);
	KUNIT_EXPECT_EQ(test, pamt_enable(list, &tdx_pamt_seamcall_ops), -EINVAL);
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());

	/* No TDMR at all. */
	list->nr_consumed_tdmrs = 0;
	KUNIT_EXPECT_EQ(test, pamt_enable(list, &tdx_pamt_seamcall_ops), -EINVAL);
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());
}

/*
 * Stands in for mem_hotplug_lock, which the KUnit kernel lacks (no
 * MEMORY_HOTPLUG: get_online_mems() is empty there): a percpu_rwsem that
 * mem_hotplug_begin() takes for write inside the CPU hotplug lock.
 */
DEFINE_STATIC_PERCPU_RWSEM(pk_mem_hotplug_lock);

/*
 * tdx.c's error path: init_tdx_module() holds get_online_mems() from
 * before tdx_pamt_module_prepare() to after tdx_pamt_module_down().
 * Nothing in between may take the CPU hotplug lock: lockdep, taught
 * mem_hotplug_begin()'s order first, reports the inversion if it does.
 */
static void pk_enable_down_under_online_mems(struct kunit *test)
{
	struct tdmr_info_list *list = pk_enable_tdmrs(test, SZ_1G);
	int ret;

	pk_enable_need_off(test);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pk_enable_down, NULL), 0);
	/* mem_hotplug_begin() and mem_hotplug_done(). */
	cpus_read_lock();
	percpu_down_write(&pk_mem_hotplug_lock);
	percpu_up_write(&pk_mem_hotplug_lock);
	cpus_read_unlock();

	/*
	 * No pair goes through the cache: freeing one may reset it with
	 * MOVDIR64B (on a CPU with the erratum), which QEMU's TCG lacks.
	 * The drain runs on every CPU all the same.
	 */
	percpu_down_read(&pk_mem_hotplug_lock);
	ret = tdx_pamt_module_prepare(list);
	tdx_pamt_module_down();
	percpu_up_read(&pk_mem_hotplug_lock);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_FALSE(test, tdx_pamt_enabled());
}

static struct kunit_case pk_enable_cases[] = {
	KUNIT_CASE(pk_enable_bitmap_size),
	KUNIT_CASE(pk_enable_bitmap_vs_static),
	KUNIT_CASE(pk_enable_wanted),
	KUNIT_CASE(pk_enable_off),
	KUNIT_CASE(pk_enable_over_tdmrs),
	KUNIT_CASE(pk_enable_refused),
	KUNIT_CASE(pk_enable_down_under_online_mems),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_enable_suite = {
	.name = "tdx_pamt_enable",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_enable_cases,
};

kunit_test_suite(pk_enable_suite);
