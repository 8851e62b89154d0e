/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in: min(), max(), min_t() and swap() are in dup.h. */
#include "../../shim.h"
