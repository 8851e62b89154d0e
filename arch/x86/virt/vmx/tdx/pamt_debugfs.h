/* SPDX-License-Identifier: GPL-2.0 */
/* TDX Dynamic PAMT cache: debugfs handlers, for KUnit (pamt_debugfs.c). */
#ifndef _X86_VIRT_TDX_PAMT_DEBUGFS_H
#define _X86_VIRT_TDX_PAMT_DEBUGFS_H

#include <linux/types.h>

struct seq_file;

extern const char * const tdx_pamt_stat_names[];
int pamt_stats_show(struct seq_file *m, void *unused);
int pamt_debugfs_drain_set(void *data, u64 val);
int pamt_debugfs_idle_cap_get(void *data, u64 *val);

#endif /* _X86_VIRT_TDX_PAMT_DEBUGFS_H */
