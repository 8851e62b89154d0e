/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in: the libc header first, then shim.h. */
#include_next <linux/sched.h>
#include "../../shim.h"
