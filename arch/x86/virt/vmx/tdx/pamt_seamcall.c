// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: the backend that issues TDH.PHYMEM.PAMT.ADD and
 * TDH.PHYMEM.PAMT.REMOVE, and resets pages the module wrote.
 *
 * Registers, for both leaves: RCX is the 2M-aligned physical address of
 * the target range with the 2M page size in bits 2:0.  ADD takes the two
 * pair pages in RDX and R8; REMOVE hands them back in the same registers.
 *
 * The raw status goes back to the core untouched: the core's
 * pamt_status_errno() is the one place where statuses become errnos, and
 * the core retries TDX_OPERAND_BUSY.  The register packing and unpacking
 * are separate functions, and the SEAMCALL a parameter of ADD and REMOVE,
 * so that KUnit can feed them made-up results.
 */
#include <linux/bug.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/pfn.h>
#include <asm/special_insns.h>
#include <kunit/visibility.h>
#include "seamcall_internal.h"
#include "pamt_internal.h"
#include "pamt_seamcall.h"

/**
 * pamt_sc_call() - issue one PAMT SEAMCALL
 * @fn: TDH_PHYMEM_PAMT_ADD or TDH_PHYMEM_PAMT_REMOVE
 * @args: input registers; for REMOVE also the output registers
 *
 * ADD has no outputs the core needs, so it does not pay for saving them.
 *
 * Context: preemption disabled, in VMX operation on this CPU.
 *
 * Return: the TDX status in RAX.
 */
static u64 pamt_sc_call(u64 fn, struct tdx_module_args *args)
{
	if (fn == TDH_PHYMEM_PAMT_REMOVE)
		return sc_retry(__seamcall_ret, fn, args);
	return sc_retry(__seamcall, fn, args);
}

static u64 pamt_sc_target(unsigned long base_pfn)
{
	return PFN_PHYS(base_pfn) | PAMT_SC_PS_2M;
}

/**
 * pamt_sc_add_args() - fill the input registers of PAMT.ADD
 * @args: the registers, zeroed first
 * @base_pfn: first pfn of the 2M range
 * @pair: the two pages to give to the module
 */
void pamt_sc_add_args(struct tdx_module_args *args, unsigned long base_pfn,
		      const struct tdx_pamt_pair *pair)
{
	*args = (struct tdx_module_args) {
		.rcx = pamt_sc_target(base_pfn),
		.rdx = PFN_PHYS(pair->pfn[0]),
		.r8  = PFN_PHYS(pair->pfn[1]),
	};
}

/**
 * pamt_sc_remove_args() - fill the input registers of PAMT.REMOVE
 * @args: the registers, zeroed first
 * @base_pfn: first pfn of the 2M range
 */
void pamt_sc_remove_args(struct tdx_module_args *args, unsigned long base_pfn)
{
	*args = (struct tdx_module_args) {
		.rcx = pamt_sc_target(base_pfn),
	};
}

/**
 * pamt_sc_remove_result() - decode the outputs of PAMT.REMOVE
 * @status: what the SEAMCALL returned
 * @args: the registers after the SEAMCALL
 * @pair: filled with the pages handed back when @status is success
 *
 * Return: @status, or PAMT_SC_BAD_OUTPUT when a successful REMOVE handed
 * back something that is not two page addresses.  Those pages are then
 * never touched again: leaking them beats freeing memory we cannot name.
 */
u64 pamt_sc_remove_result(u64 status, const struct tdx_module_args *args,
			  struct tdx_pamt_pair *pair)
{
	u64 pa[2] = { args->rdx, args->r8 };
	int i;

	/* The core's test of success: the status bits, not the operand id. */
	if ((status & TDX_PAMT_STATUS_MASK) != TDX_PAMT_SUCCESS)
		return status;
	for (i = 0; i < 2; i++) {
		if (WARN_ONCE(!pa[i] || !PAGE_ALIGNED(pa[i]) ||
			      !pfn_valid(PHYS_PFN(pa[i])),
			      "tdx-pamt: PAMT.REMOVE handed back %#llx\n",
			      pa[i]))
			return PAMT_SC_BAD_OUTPUT;
		pair->pfn[i] = PHYS_PFN(pa[i]);
	}
	return status;
}

/**
 * pamt_sc_do_add() - PAMT.ADD through @call
 * @call: issues the SEAMCALL: pamt_sc_call(), or a made-up module in KUnit
 * @base_pfn: first pfn of the 2M range
 * @pair: the two pages to give to the module
 *
 * Context: preemption disabled.
 *
 * Return: the TDX status.
 */
VISIBLE_IF_KUNIT u64 pamt_sc_do_add(pamt_sc_call_fn call, unsigned long base_pfn,
				    const struct tdx_pamt_pair *pair)
{
	struct tdx_module_args args;

	lockdep_assert_preemption_disabled();
	pamt_sc_add_args(&args, base_pfn, pair);
	return call(TDH_PHYMEM_PAMT_ADD, &args);
}

/**
 * pamt_sc_do_remove() - PAMT.REMOVE through @call
 * @call: issues the SEAMCALL: pamt_sc_call(), or a made-up module in KUnit
 * @base_pfn: first pfn of the 2M range
 * @pair: filled with the pages the module hands back
 *
 * Context: preemption disabled.
 *
 * Return: the TDX status, as pamt_sc_remove_result() returns it.
 */
VISIBLE_IF_KUNIT u64 pamt_sc_do_remove(pamt_sc_call_fn call, unsigned long base_pfn,
				       struct tdx_pamt_pair *pair)
{
	struct tdx_module_args args;
	u64 status;

	lockdep_assert_preemption_disabled();
	pamt_sc_remove_args(&args, base_pfn);
	status = call(TDH_PHYMEM_PAMT_REMOVE, &args);
	return pamt_sc_remove_result(status, &args, pair);
}

/* The SEAMCALL is a direct call: without KUnit the above are inlined here. */
static u64 pamt_sc_add(unsigned long base_pfn, const struct tdx_pamt_pair *pair)
{
	return pamt_sc_do_add(pamt_sc_call, base_pfn, pair);
}

static u64 pamt_sc_remove(unsigned long base_pfn, struct tdx_pamt_pair *pair)
{
	return pamt_sc_do_remove(pamt_sc_call, base_pfn, pair);
}

/*
 * The module may have written the page with the TDX private KeyID.  Clear
 * it with MOVDIR64B, which writes whole cache lines with the host KeyID
 * and so also resets the integrity state, as tdx.c does for static PAMT.
 * A plain memset() could #MC on CPUs with the partial-write erratum.
 */
static void pamt_sc_reset_page(unsigned long pfn)
{
	const void *zero = page_address(ZERO_PAGE(0));
	void *va = pfn_to_kaddr(pfn);
	unsigned long off;

	for (off = 0; off < PAGE_SIZE; off += 64)
		movdir64b(va + off, zero);
	/* MOVDIR64B is weakly ordered: make the zeroes visible to the next owner. */
	mb();
}

/* The backend tdx_pamt_init() gets on a host whose module has Dynamic PAMT. */
const struct tdx_pamt_ops tdx_pamt_seamcall_ops = {
	.add		= pamt_sc_add,
	.remove		= pamt_sc_remove,
	.reset_page	= pamt_sc_reset_page,
};
