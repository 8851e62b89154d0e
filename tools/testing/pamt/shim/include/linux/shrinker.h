/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in: struct shrinker and shrink_control are in dup.h. */
#include "../../shim.h"
