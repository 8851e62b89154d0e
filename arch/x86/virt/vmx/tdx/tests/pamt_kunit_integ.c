// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the kernel integration of the Dynamic PAMT cache: the
 * SEAMCALL backend fed with made-up register results.  Enabling
 * (pamt_kunit_enable.c), the KVM call sites (pamt_kunit_kvm.c) and the
 * debugfs files (pamt_kunit_debugfs.c) have their own suites.
 */
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <asm/tdx.h>
#include "tdx.h"
#include "pamt_kunit.h"
#include "pamt_seamcall.h"

/* The console scan of run-kunit.sh skips what is between these lines. */
#define PK_INTEG_WARN_BEGIN	"pamt_kunit: BEGIN expected WARNING"
#define PK_INTEG_WARN_END	"pamt_kunit: END expected WARNING"

/* Every status the backend can see, and what the core must make of it. */
static const struct {
	u64 status;
	int err;
} pk_integ_statuses[] = {
	{ TDX_SUCCESS,					0 },
	{ TDX_PAMT_OPERAND_BUSY,			-EBUSY },
	{ TDX_PAMT_OPERAND_BUSY | 0x42,			-EBUSY }, /* operand id */
	{ TDX_PAMT_OPERAND_ADDR_RANGE | 0x2,		-EIO },
	{ TDX_PAMT_PAGE_NOT_FREE,			-EIO },
	{ TDX_PAMT_HPA_RANGE_NOT_FREE,			-EIO },
	{ TDX_PAMT_PAGE_NOT_EMPTY,			-EIO },
	{ TDX_PAMT_NO_PAGE_PAIR,			-EIO },
	{ TDX_PAMT_MISSING_PAGE_PAIR,			-EIO },
	{ TDX_SEAMCALL_VMFAILINVALID,			-EIO },
	{ TDX_SEAMCALL_GP,				-EIO },
	{ TDX_SEAMCALL_UD,				-EIO },
	{ TDX_PAMT_SW_PAIR_LOST,				-EIO },
};

static void pk_integ_status_errno(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(pk_integ_statuses); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    pamt_status_errno(pk_integ_statuses[i].status),
				    pk_integ_statuses[i].err, "status %#llx",
				    pk_integ_statuses[i].status);
}

/* Two real pages, so that the outputs pass pfn_valid(). */
static void pk_integ_two_pfns(struct kunit *test, unsigned long *pfn)
{
	int i;

	for (i = 0; i < 2; i++) {
		void *p = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, p);
		KUNIT_ASSERT_TRUE(test, PAGE_ALIGNED(p));
		pfn[i] = page_to_pfn(virt_to_page(p));
	}
}

/* A made-up module in place of the SEAMCALL: scripted statuses, one pair. */
static struct {
	u64 status[4];
	unsigned int nr, calls;
	u64 last_fn;
	struct tdx_module_args in;
	u64 pa[2];
} pk_sc;

static u64 pk_integ_fake_sc(u64 fn, struct tdx_module_args *args)
{
	u64 st = pk_sc.calls < pk_sc.nr ? pk_sc.status[pk_sc.calls] : 0;

	pk_sc.calls++;
	pk_sc.last_fn = fn;
	pk_sc.in = *args;
	/* Outputs even on failure: the backend must not read them then. */
	if (fn == TDH_PHYMEM_PAMT_REMOVE) {
		args->rdx = pk_sc.pa[0];
		args->r8 = pk_sc.pa[1];
	}
	return st;
}

/* One REMOVE through the made-up module, answering @status and @pa. */
static u64 pk_integ_remove(u64 status, u64 pa0, u64 pa1,
			   struct tdx_pamt_pair *pair)
{
	u64 st;

	memset(&pk_sc, 0, sizeof(pk_sc));
	pk_sc.status[0] = status;
	pk_sc.nr = 1;
	pk_sc.pa[0] = pa0;
	pk_sc.pa[1] = pa1;
	preempt_disable();
	st = pamt_sc_do_remove(pk_integ_fake_sc, 0x40200, pair);
	preempt_enable();
	return st;
}

static void pk_integ_register_layout(struct kunit *test)
{
	struct tdx_pamt_pair pair = { .pfn = { 0x1234, 0x98765 } };

	memset(&pk_sc, 0, sizeof(pk_sc));
	pk_sc.status[0] = TDX_PAMT_OPERAND_BUSY;
	pk_sc.nr = 1;
	preempt_disable();
	pamt_sc_do_add(pk_integ_fake_sc, 0x40200, &pair);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, pk_sc.in.rcx, 0x40200000ULL | 1);
	KUNIT_EXPECT_EQ(test, pk_sc.in.rdx, 0x1234000ULL);
	KUNIT_EXPECT_EQ(test, pk_sc.in.r8, 0x98765000ULL);
	KUNIT_EXPECT_EQ(test, pk_sc.in.r9, 0ULL);

	pk_integ_remove(TDX_PAMT_OPERAND_BUSY, 0, 0, &pair);
	KUNIT_EXPECT_EQ(test, pk_sc.in.rcx, 0x40200000ULL | 1);
	KUNIT_EXPECT_EQ(test, pk_sc.in.rdx, 0ULL);
	KUNIT_EXPECT_EQ(test, pk_sc.in.r8, 0ULL);
}

static void pk_integ_remove_result(struct kunit *test)
{
	struct tdx_pamt_pair pair = { };
	unsigned long pfn[2];
	u64 st;

	pk_integ_two_pfns(test, pfn);
	st = pk_integ_remove(TDX_SUCCESS, PFN_PHYS(pfn[0]), PFN_PHYS(pfn[1]),
			     &pair);
	KUNIT_EXPECT_EQ(test, st, TDX_SUCCESS);
	KUNIT_EXPECT_EQ(test, pair.pfn[0], pfn[0]);
	KUNIT_EXPECT_EQ(test, pair.pfn[1], pfn[1]);

	/* A failure hands nothing back, whatever the registers say. */
	memset(&pair, 0, sizeof(pair));
	st = pk_integ_remove(TDX_PAMT_PAGE_NOT_EMPTY, PFN_PHYS(pfn[0]),
			     PFN_PHYS(pfn[1]), &pair);
	KUNIT_EXPECT_EQ(test, st, TDX_PAMT_PAGE_NOT_EMPTY);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(st), -EIO);
	KUNIT_EXPECT_EQ(test, pair.pfn[0], 0UL);
	st = pk_integ_remove(TDX_PAMT_OPERAND_BUSY, PFN_PHYS(pfn[0]),
			     PFN_PHYS(pfn[1]), &pair);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(st), -EBUSY);
	KUNIT_EXPECT_EQ(test, pair.pfn[0], 0UL);
}

static void pk_integ_remove_bad_output(struct kunit *test)
{
	struct tdx_pamt_pair pair = { };
	u64 st;

	pk_expect_warn(test);
	pr_info(PK_INTEG_WARN_BEGIN "\n");
	st = pk_integ_remove(TDX_SUCCESS, 0x1000, 0x2345, &pair);
	pr_info(PK_INTEG_WARN_END "\n");
	KUNIT_EXPECT_EQ(test, st, TDX_PAMT_SW_PAIR_LOST);
	KUNIT_EXPECT_EQ(test, pamt_status_errno(st), -EIO);
}

static void pk_integ_backend_ops(struct kunit *test)
{
	struct tdx_pamt_pair pair, back = { };
	unsigned long pfn[2];
	u64 st;

	pk_integ_two_pfns(test, pfn);
	pair.pfn[0] = pfn[0];
	pair.pfn[1] = pfn[1];
	memset(&pk_sc, 0, sizeof(pk_sc));
	pk_sc.pa[0] = PFN_PHYS(pfn[0]);
	pk_sc.pa[1] = PFN_PHYS(pfn[1]);
	pk_sc.status[0] = TDX_PAMT_OPERAND_BUSY | 7;
	pk_sc.nr = 1;

	preempt_disable();
	st = pamt_sc_do_add(pk_integ_fake_sc, 0x200, &pair);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, pamt_status_errno(st), -EBUSY);
	KUNIT_EXPECT_EQ(test, pk_sc.last_fn, (u64)TDH_PHYMEM_PAMT_ADD);
	KUNIT_EXPECT_EQ(test, pk_sc.in.rcx, PFN_PHYS(0x200) | 1);
	KUNIT_EXPECT_EQ(test, pk_sc.in.rdx, PFN_PHYS(pfn[0]));
	KUNIT_EXPECT_EQ(test, pk_sc.in.r8, PFN_PHYS(pfn[1]));

	preempt_disable();
	st = pamt_sc_do_remove(pk_integ_fake_sc, 0x200, &back);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, st, TDX_SUCCESS);
	KUNIT_EXPECT_EQ(test, pk_sc.last_fn, (u64)TDH_PHYMEM_PAMT_REMOVE);
	KUNIT_EXPECT_EQ(test, pk_sc.in.rdx, 0ULL);
	KUNIT_EXPECT_EQ(test, back.pfn[0], pfn[0]);
	KUNIT_EXPECT_EQ(test, back.pfn[1], pfn[1]);
	KUNIT_EXPECT_EQ(test, pk_sc.calls, 2U);
}

static struct kunit_case pk_integ_cases[] = {
	KUNIT_CASE(pk_integ_status_errno),
	KUNIT_CASE(pk_integ_register_layout),
	KUNIT_CASE(pk_integ_remove_result),
	KUNIT_CASE(pk_integ_remove_bad_output),
	KUNIT_CASE(pk_integ_backend_ops),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_integ_suite = {
	.name = "tdx_pamt_integ",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_integ_cases,
};

kunit_test_suite(pk_integ_suite);
