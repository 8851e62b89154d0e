/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory reclaim as a shrinker sees it, replayed in userspace: the
 * arithmetic of do_shrink_slab() in Linux 7.3's mm/shrinker.c (batches of
 * SHRINK_BATCH, the seeks scaling, nr_deferred and the clamps of
 * total_scan) and a direct-reclaim attempt that makes no progress on the
 * LRUs, so that it goes through every priority from DEF_PRIORITY to 0.
 * A NUMA-aware shrinker is called node by node, a memcg-aware one memcg
 * by memcg (shrink_node_memcgs()), each with deferred work of its own.
 */
#ifndef _PAMT_SHIM_SHRINK_SLAB_H
#define _PAMT_SHIM_SHRINK_SLAB_H

#include <linux/list_lru.h>
#include <linux/shrinker.h>

#define SHRINK_BATCH	128
#define DEF_PRIORITY	12

/**
 * struct pamt_reclaim - one shrinker under replayed reclaim
 * @shrinker: its callbacks, batch and seeks (0: the kernel's defaults)
 * @nr_deferred: the shrinker's deferred work, per node and memcg id
 * @asked: objects reclaim asked it to scan: total_scan as do_shrink_slab()
 *	computed it, before its loop, summed over the calls
 * @scanned: nr_scanned, as the shrinker reported it, summed
 * @freed: what scan_objects returned, summed
 * @calls: scan_objects calls
 * @stops: SHRINK_STOP answers
 *
 * The sums run from pamt_reclaim_init() on; callers take differences.
 */
struct pamt_reclaim {
	struct shrinker *shrinker;
	long nr_deferred[PAMT_SIM_MAX_NODES][PAMT_SIM_MAX_MEMCGS + 1];
	unsigned long asked;
	unsigned long scanned;
	unsigned long freed;
	unsigned long calls;
	unsigned long stops;
};

void pamt_reclaim_init(struct pamt_reclaim *r, struct shrinker *s);
unsigned long pamt_do_shrink_slab(struct pamt_reclaim *r, int priority);
unsigned long pamt_direct_reclaim(struct pamt_reclaim *r);

#endif /* _PAMT_SHIM_SHRINK_SLAB_H */
