// SPDX-License-Identifier: GPL-2.0
/* TDX Dynamic PAMT cache: turned on from tdx.c if the module has DPAMT. */
#define pr_fmt(fmt)	"tdx-pamt: " fmt

#include <linux/math.h>
#include <linux/moduleparam.h>
#include <linux/pfn.h>
#include <linux/printk.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <asm/tdx.h>
#include "tdx.h"
#include "pamt_internal.h"
#include "pamt_enable.h"
#include "pamt_seamcall.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "tdx_pamt."

bool pamt_param_enable = true;
module_param_named(enable, pamt_param_enable, bool, 0444);
MODULE_PARM_DESC(enable, "Use Dynamic PAMT, with the cache, if the TDX module has it (default Y; N: static PAMT)");

static unsigned long pamt_param_idle_cap;
module_param_named(idle_cap, pamt_param_idle_cap, ulong, 0444);
MODULE_PARM_DESC(idle_cap, "Initial cap on idle pairs (0: a quarter of the covered 2M ranges)");

/* Whether to size the 4K PAMT as a bitmap and opt in at TDH.SYS.CONFIG. */
bool tdx_pamt_wanted(u64 features0)
{
	return pamt_param_enable && (features0 & TDX_FEATURES0_DYNAMIC_PAMT);
}

/* Bytes of a TDMR's PAMT page bitmap, rounded up to 4K as every PAMT is. */
unsigned long tdx_dpamt_bitmap_size(u64 tdmr_size, unsigned int bits_per_4k_page)
{
	u64 bits = DIV_ROUND_UP_ULL(tdmr_size, SZ_4K) * bits_per_4k_page;

	return ALIGN(DIV_ROUND_UP_ULL(bits, BITS_PER_BYTE), SZ_4K);
}

/* The ranges the TDMRs cover; tdx_pamt_init() checks them. */
int pamt_enable_ranges(struct tdmr_info_list *tdmr_list,
		       struct tdx_pamt_range *ranges)
{
	int i;

	for (i = 0; i < tdmr_list->nr_consumed_tdmrs; i++) {
		struct tdmr_info *tdmr = tdmr_list->tdmrs +
					 i * tdmr_list->tdmr_sz;

		ranges[i].start_pfn = PHYS_PFN(tdmr->base);
		ranges[i].end_pfn = PHYS_PFN(tdmr->base + tdmr->size);
	}
	return i;
}

/* Set the cache up over the memory the TDMRs cover, with backend @ops. */
int pamt_enable(struct tdmr_info_list *tdmr_list,
		const struct tdx_pamt_ops *ops)
{
	struct tdx_pamt_config cfg = {
		.idle_cap	= pamt_param_idle_cap,
		.ops		= ops,
	};
	struct tdx_pamt_range *ranges;
	int ret;

	ranges = kcalloc(tdmr_list->nr_consumed_tdmrs, sizeof(*ranges),
			 GFP_KERNEL);
	if (!ranges)
		return -ENOMEM;
	ret = tdx_pamt_init(ranges, pamt_enable_ranges(tdmr_list, ranges), &cfg);
	kfree(ranges);
	return ret;
}

/*
 * Set the cache up before the module opts in: all that can fail happens
 * here, while tdx.c can still give up cleanly.
 */
int tdx_pamt_module_prepare(struct tdmr_info_list *tdmr_list)
{
	int ret = pamt_enable(tdmr_list, &tdx_pamt_seamcall_ops);

	if (ret)
		pr_err("set-up failed (%d); tdx_pamt.enable=0 keeps static PAMT\n",
		       ret);
	return ret;
}

/* Register the shrinker, once the module runs with Dynamic PAMT. */
void tdx_pamt_module_ready(void)
{
	if (!tdx_pamt_enabled()) {
		pr_info("off: %s\n", pamt_param_enable ?
			"the TDX module has no Dynamic PAMT" : "tdx_pamt.enable=0");
		return;
	}
	pamt_glue_register();
	pr_info("on: idle cap %lu pairs\n", pamt.idle_cap);
}

/*
 * Turn the cache off on tdx.c's error path, no TD holding a reference; no
 * CPU hotplug lock, as the caller may hold get_online_mems() (nested in it).
 */
void tdx_pamt_module_down(void)
{
	if (!tdx_pamt_enabled())
		return;
	tdx_pamt_drain();
	tdx_pamt_exit();
}
