// SPDX-License-Identifier: GPL-2.0
/*
 * The fake TDX module as the core sees it in userspace, for the harness
 * and the benchmark alike: each PAMT SEAMCALL goes through the shim's
 * checks (IRQs off around exactly one SEAMCALL; a delay inside it is the
 * module's latency, not a delay with IRQs off).
 */
#include "shim.h"
#include "sim.h"
#include "pamt_fake.h"

/*
 * The fake module behind the shim's SEAMCALL checks: IRQs must be off
 * around each PAMT SEAMCALL, and never across two (custom.h).
 */
/*
 * ADDs made in a memcg, and of those, ADDs whose pair some other memcg's
 * task allocated: what charging pages as they are allocated would bill
 * to the wrong VM.  Plain host atomics: virtual time must not see them.
 */
long pamt_sim_adds_in_memcg, pamt_sim_adds_other_memcg;

static void pamt_env_count_add(const struct tdx_pamt_pair *pair)
{
	const void *cg = pamt_sim_objcg;

	if (!cg)
		return;
	__atomic_fetch_add(&pamt_sim_adds_in_memcg, 1, __ATOMIC_RELAXED);
	if (pfn_to_page(pair->pfn[0])->alloc_objcg != cg ||
	    pfn_to_page(pair->pfn[1])->alloc_objcg != cg)
		__atomic_fetch_add(&pamt_sim_adds_other_memcg, 1,
				   __ATOMIC_RELAXED);
}

static u64 pamt_env_add(unsigned long base, const struct tdx_pamt_pair *pair)
{
	u64 status;

	pamt_sim_seamcall_enter();
	status = pamt_fake_ops.add(base, pair);
	pamt_sim_seamcall_exit();
	if (!status)
		pamt_env_count_add(pair);
	return status;
}

static u64 pamt_env_remove(unsigned long base, struct tdx_pamt_pair *pair)
{
	u64 status;

	pamt_sim_seamcall_enter();
	status = pamt_fake_ops.remove(base, pair);
	pamt_sim_seamcall_exit();
	return status;
}

static void pamt_env_reset_page(unsigned long pfn)
{
	pamt_fake_ops.reset_page(pfn);
}

const struct tdx_pamt_ops pamt_env_ops = {
	.add		= pamt_env_add,
	.remove		= pamt_env_remove,
	.reset_page	= pamt_env_reset_page,
};
