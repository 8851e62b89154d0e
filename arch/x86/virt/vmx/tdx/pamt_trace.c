// SPDX-License-Identifier: GPL-2.0
/* TDX Dynamic PAMT cache: instantiates the tracepoints of pamt_trace.h. */
#include <asm/tdx_pamt.h>

#define CREATE_TRACE_POINTS
#include "pamt_trace.h"
