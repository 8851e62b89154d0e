/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-ins for the kernel APIs the PAMT cache uses, on the
 * model of tools/testing/vma: the kernel's .c files compile unchanged
 * against these headers.
 *
 *   dup.h     restated kernel definitions that must keep their meaning
 *   stubs.h   no-ops
 *   custom.h  shims that check, count or fail on demand
 */
#ifndef _PAMT_SHIM_H
#define _PAMT_SHIM_H

#include "dup.h"
#include "stubs.h"
#include "custom.h"

#endif /* _PAMT_SHIM_H */
