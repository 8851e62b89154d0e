// SPDX-License-Identifier: GPL-2.0
/* TDX Dynamic PAMT cache: PAMT.ADD/REMOVE; KUnit fakes the SEAMCALL. */
#include <linux/bug.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/pfn.h>
#include <asm/tdx.h>
#include <kunit/visibility.h>
#include "seamcall_internal.h"
#include "pamt_internal.h"
#include "pamt_seamcall.h"

static u64 pamt_sc_call(u64 fn, struct tdx_module_args *args)
{
	return sc_retry(__seamcall_ret, fn, args);
}

VISIBLE_IF_KUNIT u64 pamt_sc_do_add(pamt_sc_call_fn call, unsigned long base_pfn,
				    const struct tdx_pamt_pair *pair)
{
	struct tdx_module_args args = {
		.rcx = PFN_PHYS(base_pfn) | PAMT_SC_PS_2M,
		.rdx = PFN_PHYS(pair->pfn[0]),
		.r8  = PFN_PHYS(pair->pfn[1]),
	};

	lockdep_assert_preemption_disabled();
	return call(TDH_PHYMEM_PAMT_ADD, &args);
}

/* The pair comes back in RDX, R8; if not page addresses, it is leaked. */
VISIBLE_IF_KUNIT u64 pamt_sc_do_remove(pamt_sc_call_fn call, unsigned long base_pfn,
				       struct tdx_pamt_pair *pair)
{
	struct tdx_module_args args = { .rcx = PFN_PHYS(base_pfn) | PAMT_SC_PS_2M };
	u64 status, pa;
	int i;

	lockdep_assert_preemption_disabled();
	status = call(TDH_PHYMEM_PAMT_REMOVE, &args);
	if ((status & TDX_PAMT_STATUS_MASK) != TDX_PAMT_SUCCESS)
		return status;
	for (i = 0; i < 2; i++) {
		pa = i ? args.r8 : args.rdx;
		if (WARN_ONCE(!pa || !PAGE_ALIGNED(pa) || !pfn_valid(PHYS_PFN(pa)),
			      "tdx-pamt: PAMT.REMOVE handed back %#llx\n", pa))
			return TDX_PAMT_SW_PAIR_LOST;
		pair->pfn[i] = PHYS_PFN(pa);
	}
	return status;
}

/* Without KUnit the above are static and inlined: a direct SEAMCALL. */
static u64 pamt_sc_add(unsigned long base_pfn, const struct tdx_pamt_pair *pair)
{
	return pamt_sc_do_add(pamt_sc_call, base_pfn, pair);
}

static u64 pamt_sc_remove(unsigned long base_pfn, struct tdx_pamt_pair *pair)
{
	return pamt_sc_do_remove(pamt_sc_call, base_pfn, pair);
}

/* The module wrote the page with a private KeyID: the erratum's reset. */
static void pamt_sc_reset_page(unsigned long pfn)
{
	tdx_quirk_reset_paddr(PFN_PHYS(pfn), PAGE_SIZE);
}

const struct tdx_pamt_ops tdx_pamt_seamcall_ops = {
	.add		= pamt_sc_add,
	.remove		= pamt_sc_remove,
	.reset_page	= pamt_sc_reset_page,
};
