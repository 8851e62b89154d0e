// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's strategies (bench/strat.c, included unchanged) in virtual
 * time.  Their refcount array comes from calloc(): here 64-byte aligned,
 * so which refcounts share a cache line does not depend on the C
 * library's allocator, and the output is the same on every machine.
 */
#include <stdlib.h>
#include <string.h>

static void *vt_calloc64(size_t n, size_t size)
{
	size_t bytes = (n * size + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, bytes ? bytes : 64);

	if (p)
		memset(p, 0, bytes ? bytes : 64);
	return p;
}

#define calloc	vt_calloc64
#include "../bench/strat.c"
#undef calloc
