// SPDX-License-Identifier: GPL-2.0
/*
 * The fake TDX module (arch/x86/virt/vmx/tdx/tests/pamt_fake.c and
 * pamt_fake_td.c, included unchanged) in virtual time.
 *
 * - Its latency, an ndelay() inside the call with the range locks held,
 *   elapses in virtual time and is accounted as SEAMCALL time (the longest
 *   ADD kept for the max-get target); so a call
 *   that tries a range lock while another call holds it, in virtual time,
 *   gets TDX_OPERAND_BUSY, exactly when their intervals overlap.
 * - Its range locks and per-range state are ordered in virtual time but
 *   cost nothing (their cost is inside the modelled SEAMCALL latency).
 * - Its bookkeeping (call counters, random state, page bitmaps) is not
 *   the module's real state: not modelled at all, so that the fake's
 *   global counters do not turn into a contended line.
 */
#include "shim.h"
#include "vt.h"
#include "pamt_fake.h"

u64 vt_fake_add_max_ns;

/* The fake's only ndelay() is in pamt_fake_delay(), where @op is its argument. */
static void vt_fake_delay(int op, unsigned long ns)
{
	if (op == PAMT_FAKE_ADD && ns > vt_fake_add_max_ns)
		vt_fake_add_max_ns = ns;
	vt_seamcall_ns(ns);
}

#define ndelay(ns)	vt_fake_delay(op, ns)
#include "pamt_fake.c"
#undef ndelay
#include "pamt_fake_td.c"

/**
 * vt_fake_regions() - classify the fake module's memory for the engine
 *
 * Call after pamt_fake_init().
 */
void vt_fake_regions(void);
void vt_fake_regions(void)
{
	unsigned long bits = pamt_fake.end_pfn - pamt_fake.start_pfn;
	unsigned long nr = bits / TDX_PAMT_PAGES_PER_SLOT;

	vt_set_region(&pamt_fake, sizeof(pamt_fake), VT_REGION_FREE);
	vt_set_region(&pamt_fake_rng, sizeof(pamt_fake_rng), VT_REGION_FREE);
	vt_set_region(pamt_fake.td_map, BITS_TO_LONGS(bits) * sizeof(long),
		      VT_REGION_FREE);
	vt_set_region(pamt_fake.pamt_map, BITS_TO_LONGS(bits) * sizeof(long),
		      VT_REGION_FREE);
	vt_set_region(pamt_fake.ranges, nr * sizeof(*pamt_fake.ranges),
		      VT_REGION_MODULE);
}
