/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TDX Dynamic PAMT cache: in-kernel glue, not shared with the userspace
 * harness.  pamt_glue.c is not in the series yet: no shrinker can be
 * registered.
 */
#ifndef _X86_VIRT_TDX_PAMT_GLUE_H
#define _X86_VIRT_TDX_PAMT_GLUE_H

struct shrinker;

static inline int pamt_glue_register(void) { return -EOPNOTSUPP; }
static inline struct shrinker *pamt_glue_shrinker(void) { return NULL; }

#endif /* _X86_VIRT_TDX_PAMT_GLUE_H */
