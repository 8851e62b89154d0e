/* SPDX-License-Identifier: GPL-2.0 */
/* TDX Dynamic PAMT cache: in-kernel glue (pamt_glue.c). */
#ifndef _X86_VIRT_TDX_PAMT_GLUE_H
#define _X86_VIRT_TDX_PAMT_GLUE_H

struct shrinker;

int pamt_glue_register(void);
struct shrinker *pamt_glue_shrinker(void);

#endif /* _X86_VIRT_TDX_PAMT_GLUE_H */
