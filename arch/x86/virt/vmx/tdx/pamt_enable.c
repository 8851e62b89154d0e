// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: turning it on when the TDX module can use it.
 *
 * tdx.c calls tdx_pamt_module_ready() once the module is initialised.  If
 * TDX_FEATURES0 says the module supports Dynamic PAMT, the cache is set up
 * over the memory the TDMRs cover, with the SEAMCALL backend.  Otherwise
 * it stays off and every get/put is a no-op that succeeds.  What of
 * enabling is done and what is not: Documentation/arch/x86/tdx-dpamt.rst.
 *
 * Boot parameters (the cache is built in): tdx_pamt.enable,
 * tdx_pamt.mode=magazine|eager, tdx_pamt.mag_size, tdx_pamt.idle_cap.
 */
#define pr_fmt(fmt)	"tdx-pamt: " fmt

#include <linux/moduleparam.h>
#include <linux/pfn.h>
#include <linux/printk.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>
#include <asm/tdx.h>
#include "tdx.h"
#include "pamt_internal.h"
#include "pamt_enable.h"
#include "pamt_glue.h"
#include "pamt_seamcall.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "tdx_pamt."

static bool pamt_param_enable = true;
module_param_named(enable, pamt_param_enable, bool, 0444);
MODULE_PARM_DESC(enable, "Use the PAMT cache when the TDX module has Dynamic PAMT (default Y)");

static enum tdx_pamt_mode pamt_param_mode = TDX_PAMT_MODE_MAGAZINE;

static const char * const pamt_mode_names[] = {
	[TDX_PAMT_MODE_MAGAZINE]	= "magazine",
	[TDX_PAMT_MODE_EAGER]		= "eager",
};

static int pamt_param_mode_set(const char *val, const struct kernel_param *kp)
{
	int mode = sysfs_match_string(pamt_mode_names, val);

	if (mode < 0)
		return mode;
	pamt_param_mode = mode;
	return 0;
}

static int pamt_param_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", pamt_mode_names[pamt_param_mode]);
}

static const struct kernel_param_ops pamt_param_mode_ops = {
	.set = pamt_param_mode_set,
	.get = pamt_param_mode_get,
};
module_param_cb(mode, &pamt_param_mode_ops, NULL, 0444);
MODULE_PARM_DESC(mode, "What the last put does: magazine (keep the pair, default) or eager (PAMT.REMOVE)");

static unsigned int pamt_param_mag_size;
module_param_named(mag_size, pamt_param_mag_size, uint, 0444);
MODULE_PARM_DESC(mag_size, "Pairs per per-CPU magazine (0: default 64, at most 1024)");

static unsigned long pamt_param_idle_cap;
module_param_named(idle_cap, pamt_param_idle_cap, ulong, 0444);
MODULE_PARM_DESC(idle_cap, "Initial cap on idle pairs (0: a quarter of the covered 2M ranges)");

static void pamt_enable_glue_fn(struct work_struct *work)
{
	int ret = pamt_glue_register();

	if (ret && ret != -EBUSY)
		pr_warn("no shrinker or CPU hotplug hook (%d); idle memory is bounded by the cap only\n",
			ret);
}

/* tdx_enable() runs with the CPU hotplug lock held: register from a worker. */
static DECLARE_WORK(pamt_enable_glue_work, pamt_enable_glue_fn);

/**
 * pamt_enable_ranges() - the 2M-aligned ranges the TDMRs cover
 * @tdmr_list: the TDMRs the module was configured with
 * @ranges: nr_consumed_tdmrs entries, filled in
 *
 * TDMRs are 1G aligned, sorted and disjoint, so each one is a range.
 *
 * Return: the number of ranges, or -EINVAL for a list the core would
 * refuse.
 */
int pamt_enable_ranges(struct tdmr_info_list *tdmr_list,
		       struct tdx_pamt_range *ranges)
{
	int i;

	for (i = 0; i < tdmr_list->nr_consumed_tdmrs; i++) {
		struct tdmr_info *tdmr = tdmr_list->tdmrs +
					 i * tdmr_list->tdmr_sz;

		ranges[i].start_pfn = PHYS_PFN(tdmr->base);
		ranges[i].end_pfn = PHYS_PFN(tdmr->base + tdmr->size);
		if (!IS_ALIGNED(tdmr->base | tdmr->size, SZ_2M) ||
		    (i && ranges[i].start_pfn < ranges[i - 1].end_pfn))
			return -EINVAL;
	}
	return i;
}

/**
 * pamt_enable() - set up the cache if the module supports Dynamic PAMT
 * @tdmr_list: the TDMRs the module was configured with
 * @read_field: reads one global metadata field of the module
 * @ops: the backend
 *
 * Context: process context; may sleep.
 *
 * Return: 0 with the cache on; -EOPNOTSUPP with the cache off because the
 * module lacks Dynamic PAMT or tdx_pamt.enable=0; another errno with the
 * cache off because something failed.
 */
int pamt_enable(struct tdmr_info_list *tdmr_list,
		pamt_read_field_t read_field, const struct tdx_pamt_ops *ops)
{
	struct tdx_pamt_config cfg = {
		.mode		= pamt_param_mode,
		.mag_size	= pamt_param_mag_size,
		.idle_cap	= pamt_param_idle_cap,
		.ops		= ops,
	};
	struct tdx_pamt_range *ranges;
	u64 features0;
	int nr, ret;

	if (!pamt_param_enable)
		return -EOPNOTSUPP;
	ret = read_field(PAMT_MD_FIELD_ID_FEATURES0, &features0);
	if (ret)
		return ret;
	if (!(features0 & PAMT_FEATURES0_DYNAMIC_PAMT))
		return -EOPNOTSUPP;
	if (!tdmr_list->nr_consumed_tdmrs)
		return -EINVAL;

	ranges = kcalloc(tdmr_list->nr_consumed_tdmrs, sizeof(*ranges),
			 GFP_KERNEL);
	if (!ranges)
		return -ENOMEM;
	nr = pamt_enable_ranges(tdmr_list, ranges);
	ret = nr < 0 ? nr : tdx_pamt_init(ranges, nr, &cfg);
	kfree(ranges);
	return ret;
}

/**
 * tdx_pamt_module_ready() - the TDX module is initialised: maybe turn on
 * @tdmr_list: the TDMRs the module was configured with
 * @read_field: reads one global metadata field of the module
 *
 * Called by tdx.c.  Failing here only leaves the cache off.
 *
 * Context: process context, with the CPU hotplug lock held.
 */
void tdx_pamt_module_ready(struct tdmr_info_list *tdmr_list,
			   pamt_read_field_t read_field)
{
	int ret = pamt_enable(tdmr_list, read_field, &tdx_pamt_seamcall_ops);

	if (ret == -EOPNOTSUPP) {
		pr_info("off: no Dynamic PAMT\n");
		return;
	}
	if (ret) {
		pr_err("off: set-up failed (%d)\n", ret);
		return;
	}
	pr_info("on: %s mode, %u pairs per magazine\n",
		pamt_mode_names[pamt.mode], pamt.mag_size);
	schedule_work(&pamt_enable_glue_work);
}

/**
 * tdx_pamt_module_down() - drain the cache and turn it off
 *
 * For a TDX shutdown path; 6.12 has none, so nothing calls it yet.
 *
 * Context: process context, without the CPU hotplug lock, once no TD
 * holds a PAMT reference.
 */
void tdx_pamt_module_down(void)
{
	if (!tdx_pamt_enabled())
		return;
	flush_work(&pamt_enable_glue_work);
	pamt_glue_unregister();
	tdx_pamt_drain();
	tdx_pamt_exit();
}
