// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: /sys/kernel/debug/tdx/pamt/{stats,drain,idle_cap};
 * drain, the one writable file, empties the cache between memory tests.
 */
#include <linux/debugfs.h>
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/seq_file.h>
#include "pamt_debugfs.h"
#include "pamt_internal.h"

/* In the order of enum tdx_pamt_stat. */
const char * const tdx_pamt_stat_names[TDX_PAMT_STAT_NR] = {
	"get_fast", "get_slow", "get_wait", "put_fast", "put_slow", "revive",
	"seamcall_add", "seamcall_remove", "busy", "global_lock",
	"page_alloc", "page_free", "mag_hit", "mag_miss", "shrink", "cap",
	"leaked", "add_failed",
	"idle_slots", "cached_pairs", "installed_slots",
};

int pamt_stats_show(struct seq_file *m, void *unused)
{
	u64 vals[TDX_PAMT_STAT_NR];
	int i;

	tdx_pamt_read_stats(vals);
	for (i = 0; i < TDX_PAMT_STAT_NR; i++)
		seq_printf(m, "%s %llu\n", tdx_pamt_stat_names[i], vals[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pamt_stats);

int pamt_debugfs_drain_set(void *data, u64 val)
{
	if (val != 1)
		return -EINVAL;
	tdx_pamt_drain();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pamt_drain_fops, NULL, pamt_debugfs_drain_set,
			 "%llu\n");

int pamt_debugfs_idle_cap_get(void *data, u64 *val)
{
	*val = READ_ONCE(pamt.idle_cap);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pamt_idle_cap_fops, pamt_debugfs_idle_cap_get,
			 NULL, "%llu\n");

static int __init pamt_debugfs_init(void)
{
	struct dentry *tdx, *dir;

	/* Other TDX code may own "tdx" one day: share it, never replace it. */
	tdx = debugfs_lookup("tdx", NULL);
	if (!tdx)
		tdx = debugfs_create_dir("tdx", NULL);
	else
		dput(tdx);
	dir = debugfs_create_dir("pamt", tdx);
	debugfs_create_file("stats", 0444, dir, NULL, &pamt_stats_fops);
	debugfs_create_file_unsafe("drain", 0200, dir, NULL, &pamt_drain_fops);
	debugfs_create_file_unsafe("idle_cap", 0444, dir, NULL,
				   &pamt_idle_cap_fops);
	return 0;
}
late_initcall(pamt_debugfs_init);
