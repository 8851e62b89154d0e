/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the part of the xarray API the PAMT cache uses:
 * value entries in a sorted array of indices, found by a binary search.
 * Stores are not safe against concurrent loads, as the cache stores only
 * before any get or put may run.  Allocations go through the shim's
 * kmalloc(), so failure injection reaches xa_store().
 */
#ifndef _PAMT_SHIM_XARRAY_H
#define _PAMT_SHIM_XARRAY_H

#include "../../shim.h"

struct xarray {
	unsigned long *index;
	void **entry;
	unsigned long nr, room;
};

#define XA_SHIM_ENOMEM	((void *)-ENOMEM)

static inline void xa_init(struct xarray *xa)
{
	*xa = (struct xarray){ };
}

static inline void *xa_mk_value(unsigned long v)
{
	return (void *)((v << 1) | 1);
}

static inline unsigned long xa_to_value(const void *entry)
{
	return (unsigned long)entry >> 1;
}

static inline bool xa_is_err(const void *entry)
{
	return entry == XA_SHIM_ENOMEM;
}

/* The first position whose index is at least @index. */
static inline unsigned long xa_shim_pos(const struct xarray *xa,
					unsigned long index)
{
	unsigned long lo = 0, hi = xa->nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (xa->index[mid] < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline void *xa_load(struct xarray *xa, unsigned long index)
{
	unsigned long pos = xa_shim_pos(xa, index);

	return pos < xa->nr && xa->index[pos] == index ? xa->entry[pos] : NULL;
}

/* Return: the old entry, NULL, or an error entry with @xa unchanged. */
static inline void *xa_store(struct xarray *xa, unsigned long index,
			     void *entry, gfp_t gfp)
{
	unsigned long pos = xa_shim_pos(xa, index), room;
	unsigned long *ni;
	void **ne, *old;

	if (pos < xa->nr && xa->index[pos] == index) {
		old = xa->entry[pos];
		xa->entry[pos] = entry;
		return old;
	}
	if (xa->nr == xa->room) {
		room = xa->room ? 2 * xa->room : 8;
		ni = kmalloc_array(room, sizeof(*ni), gfp);
		ne = kmalloc_array(room, sizeof(*ne), gfp);
		if (!ni || !ne) {
			kfree(ni);
			kfree(ne);
			return XA_SHIM_ENOMEM;
		}
		if (xa->nr) {
			memcpy(ni, xa->index, xa->nr * sizeof(*ni));
			memcpy(ne, xa->entry, xa->nr * sizeof(*ne));
		}
		kfree(xa->index);
		kfree(xa->entry);
		xa->index = ni;
		xa->entry = ne;
		xa->room = room;
	}
	memmove(&xa->index[pos + 1], &xa->index[pos],
		(xa->nr - pos) * sizeof(*xa->index));
	memmove(&xa->entry[pos + 1], &xa->entry[pos],
		(xa->nr - pos) * sizeof(*xa->entry));
	xa->index[pos] = index;
	xa->entry[pos] = entry;
	xa->nr++;
	return NULL;
}

static inline void xa_destroy(struct xarray *xa)
{
	kfree(xa->index);
	kfree(xa->entry);
	xa_init(xa);
}

#endif
