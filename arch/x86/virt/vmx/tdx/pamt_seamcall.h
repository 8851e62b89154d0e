/* SPDX-License-Identifier: GPL-2.0 */
/* TDX Dynamic PAMT cache: the SEAMCALL backend (pamt_seamcall.c). */
#ifndef _X86_VIRT_TDX_PAMT_SEAMCALL_H
#define _X86_VIRT_TDX_PAMT_SEAMCALL_H

#include <linux/types.h>
#include <asm/tdx.h>
#include <asm/tdx_pamt.h>

/* TDX page-size encoding in bits 2:0 of a PAMT SEAMCALL's RCX. */
#define PAMT_SC_PS_2M		1ULL

extern const struct tdx_pamt_ops tdx_pamt_seamcall_ops;

typedef u64 (*pamt_sc_call_fn)(u64 fn, struct tdx_module_args *args);
#if IS_ENABLED(CONFIG_KUNIT)
u64 pamt_sc_do_add(pamt_sc_call_fn call, unsigned long base_pfn,
		   const struct tdx_pamt_pair *pair);
u64 pamt_sc_do_remove(pamt_sc_call_fn call, unsigned long base_pfn,
		      struct tdx_pamt_pair *pair);
#endif

#endif /* _X86_VIRT_TDX_PAMT_SEAMCALL_H */
