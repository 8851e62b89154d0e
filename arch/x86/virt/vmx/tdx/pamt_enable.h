/* SPDX-License-Identifier: GPL-2.0 */
/* TDX Dynamic PAMT cache: what tdx.c calls (pamt_enable.c). */
#ifndef _X86_VIRT_TDX_PAMT_ENABLE_H
#define _X86_VIRT_TDX_PAMT_ENABLE_H

#include <linux/types.h>

struct tdmr_info_list;
struct tdx_pamt_ops;
struct tdx_pamt_range;

bool tdx_pamt_wanted(u64 features0);
unsigned long tdx_dpamt_bitmap_size(u64 tdmr_size, unsigned int bits_per_4k_page);
int tdx_pamt_module_prepare(struct tdmr_info_list *tdmr_list);
void tdx_pamt_module_ready(void);
void tdx_pamt_module_down(void);
int pamt_enable(struct tdmr_info_list *tdmr_list,
		const struct tdx_pamt_ops *ops);
int pamt_enable_ranges(struct tdmr_info_list *tdmr_list,
		       struct tdx_pamt_range *ranges);
extern bool pamt_param_enable;

#endif /* _X86_VIRT_TDX_PAMT_ENABLE_H */
