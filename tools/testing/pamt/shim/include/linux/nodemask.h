/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in: everything lives in shim.h. */
#include "../../shim.h"
