/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TDX Dynamic PAMT cache: the hook tdx.c calls once the TDX module is
 * initialised (pamt_enable.c).
 */
#ifndef _X86_VIRT_TDX_PAMT_ENABLE_H
#define _X86_VIRT_TDX_PAMT_ENABLE_H

#include <linux/bits.h>
#include <linux/types.h>

struct tdmr_info_list;
struct tdx_pamt_ops;
struct tdx_pamt_range;

typedef int (*pamt_read_field_t)(u64 field_id, u64 *data);

/* TDX_FEATURES0 global metadata field and its Dynamic PAMT bit. */
#define PAMT_MD_FIELD_ID_FEATURES0	0x0A00000300000008ULL
#define PAMT_FEATURES0_DYNAMIC_PAMT	BIT_ULL(36)

#ifdef CONFIG_INTEL_TDX_PAMT_CACHE
void tdx_pamt_module_ready(struct tdmr_info_list *tdmr_list,
			   pamt_read_field_t read_field);
void tdx_pamt_module_down(void);
int pamt_enable(struct tdmr_info_list *tdmr_list,
		pamt_read_field_t read_field, const struct tdx_pamt_ops *ops);
int pamt_enable_ranges(struct tdmr_info_list *tdmr_list,
		       struct tdx_pamt_range *ranges);
#else
static inline void tdx_pamt_module_ready(struct tdmr_info_list *tdmr_list,
					 pamt_read_field_t read_field) { }
static inline void tdx_pamt_module_down(void) { }
#endif

#endif /* _X86_VIRT_TDX_PAMT_ENABLE_H */
