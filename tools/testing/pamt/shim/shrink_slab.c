// SPDX-License-Identifier: GPL-2.0
/*
 * do_shrink_slab() and a direct-reclaim attempt, replayed: see
 * shrink_slab.h.
 */
#include "shrink_slab.h"

/**
 * pamt_reclaim_init() - start replaying reclaim on @s
 * @r: the state to set up
 * @s: the shrinker, as registered
 */
void pamt_reclaim_init(struct pamt_reclaim *r, struct shrinker *s)
{
	*r = (struct pamt_reclaim) { .shrinker = s };
}

/* do_shrink_slab() for one node and memcg, with their deferred work. */
static unsigned long do_shrink_one(struct pamt_reclaim *r, int priority,
				   int nid, struct mem_cgroup *memcg,
				   long *deferred)
{
	struct shrink_control sc = {
		.gfp_mask = GFP_KERNEL, .nid = nid, .memcg = memcg,
	};
	struct shrinker *s = r->shrinker;
	long batch = s->batch ? s->batch : SHRINK_BATCH;
	long freeable, nr, total_scan, scanned = 0, next;
	unsigned long freed = 0, ret;
	unsigned long long delta;

	freeable = s->count_objects(s, &sc);
	if (!freeable || (unsigned long)freeable == SHRINK_EMPTY)
		return 0;

	/* Take the deferred work, so that concurrent callers do not. */
	nr = *deferred;
	*deferred = 0;

	/* New work: freeable / 2^priority, times 4 / seeks. */
	if (s->seeks)
		delta = ((unsigned long long)freeable >> priority) * 4 / s->seeks;
	else
		delta = freeable / 2;
	total_scan = min((long)((nr >> priority) + delta), 2 * freeable);
	r->asked += total_scan;

	/* Whole batches; or everything, once asked for the whole cache. */
	while (total_scan >= batch || total_scan >= freeable) {
		sc.nr_to_scan = min(batch, total_scan);
		sc.nr_scanned = sc.nr_to_scan;
		ret = s->scan_objects(s, &sc);
		r->calls++;
		if (ret == SHRINK_STOP) {
			r->stops++;
			break;
		}
		freed += ret;
		total_scan -= sc.nr_scanned;
		scanned += sc.nr_scanned;
	}
	r->scanned += scanned;
	r->freed += freed;

	/* Work not done carries over, at most twice the cache. */
	next = max((long)(nr + delta - scanned), 0L);
	*deferred += min(next, 2 * freeable);
	return freed;
}

/**
 * pamt_do_shrink_slab() - one call of do_shrink_slab() at @priority
 * @r: the shrinker and its deferred work
 * @priority: DEF_PRIORITY (light pressure) down to 0
 *
 * Return: objects freed, as the scan_objects calls reported them.
 */
unsigned long pamt_do_shrink_slab(struct pamt_reclaim *r, int priority)
{
	struct shrinker *s = r->shrinker;
	struct mem_cgroup *memcg;
	unsigned long freed = 0;
	int nid;

	for_each_node_state(nid, N_NORMAL_MEMORY) {
		if (nid && !(s->flags & SHRINKER_NUMA_AWARE))
			break;
		if (!(s->flags & SHRINKER_MEMCG_AWARE)) {
			freed += do_shrink_one(r, priority, 0, NULL,
					       &r->nr_deferred[0][0]);
			continue;
		}
		memcg = mem_cgroup_iter(NULL, NULL, NULL);
		do {
			long *d = &r->nr_deferred[nid][mem_cgroup_private_id(memcg)];

			freed += do_shrink_one(r, priority, nid, memcg, d);
		} while ((memcg = mem_cgroup_iter(NULL, memcg, NULL)));
	}
	return freed;
}

/**
 * pamt_direct_reclaim() - one direct-reclaim attempt that frees no page
 *	from the LRUs: the shrinkers at every priority, DEF_PRIORITY to 0
 * @r: the shrinker
 *
 * Pairs freed by a shrinker are not slab pages, so they do not count as
 * the attempt's progress (reclaim_state) and the attempt does not stop
 * early.
 *
 * Return: objects freed.
 */
unsigned long pamt_direct_reclaim(struct pamt_reclaim *r)
{
	unsigned long freed = 0;
	int priority;

	for (priority = DEF_PRIORITY; priority >= 0; priority--)
		freed += pamt_do_shrink_slab(r, priority);
	return freed;
}
