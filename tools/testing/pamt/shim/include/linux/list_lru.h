/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the list_lru API the PAMT cache uses (sim.c): a
 * list per node and memcg, each with its own spinlock_t, so that lock
 * order, PREEMPT_RT and, in virtual time, contention are checked as for
 * any other lock.  A memcg's lists must exist (memcg_list_lru_alloc())
 * before anything goes on them, or the harness aborts: the kernel warns
 * and files the item on the parent's.
 */
#ifndef _PAMT_SHIM_LIST_LRU_H
#define _PAMT_SHIM_LIST_LRU_H

#include "../../shim.h"

/* ---- memcgs: what the tests name, numbered (custom.h: struct mem_cgroup) */
unsigned short mem_cgroup_private_id(struct mem_cgroup *memcg);
struct mem_cgroup *mem_cgroup_from_private_id(unsigned short id);
/* NULL first: the root; then every memcg named so far. */
struct mem_cgroup *mem_cgroup_iter(struct mem_cgroup *root,
				   struct mem_cgroup *prev, void *reclaim);
#define mem_cgroup_iter_break(root, prev)	do { } while (0)
#define mem_cgroup_is_root(memcg)					\
	(!(memcg) || container_of(memcg, struct obj_cgroup, memcg)->root)
#define mem_cgroup_tryget(memcg)	true
#define mem_cgroup_put(memcg)		do { } while (0)

#define obj_cgroup_memcg(objcg)		(&(objcg)->memcg)
#define get_mem_cgroup_from_objcg(objcg)	obj_cgroup_memcg(objcg)

/* ---- NUMA: node 1 from pamt_sim_node1_pfn on (none by default) ---- */
extern unsigned long pamt_sim_node1_pfn;
#define first_online_node	0
#define page_to_nid(page)	(page_to_pfn(page) >= pamt_sim_node1_pfn)
#define for_each_node_state(nid, state)					\
	for ((nid) = 0; (nid) < (pamt_sim_node1_pfn == ULONG_MAX ? 1 :	\
				 PAMT_SIM_MAX_NODES); (nid)++)

/* ---- shrinkers (the harness calls the callbacks itself) ---- */
struct shrinker *shrinker_alloc(unsigned int flags, const char *fmt, ...);
void shrinker_free(struct shrinker *shrinker);

/* ---- list_lru ---- */
enum lru_status {
	LRU_REMOVED,
	LRU_REMOVED_RETRY,
	LRU_ROTATE,
	LRU_SKIP,
	LRU_RETRY,
	LRU_STOP,
};

struct list_lru_one {
	struct list_head list;
	long nr_items;
	spinlock_t lock;		/* @list and @nr_items */
};

#define PAMT_SIM_MAX_MEMCGS	64
/* Entries the walks have passed (all but where one stopped), for tests. */
extern unsigned long pamt_sim_lru_walked;

struct list_lru {
	/* [node][memcg id], id 0 the root's; NULL until allocated */
	struct list_lru_one *one[PAMT_SIM_MAX_NODES][PAMT_SIM_MAX_MEMCGS + 1];
	bool memcg_aware;
};

typedef enum lru_status (*list_lru_walk_cb)(struct list_head *item,
					    struct list_lru_one *list,
					    void *cb_arg);

int __list_lru_init(struct list_lru *lru, bool memcg_aware,
		    struct shrinker *shrinker);
#define list_lru_init(lru)			__list_lru_init(lru, false, NULL)
#define list_lru_init_memcg(lru, shrinker)	__list_lru_init(lru, true, shrinker)
struct lock_class_key { int unused; };
#define list_lru_init_memcg_key(lru, shrinker, key)			\
	((void)(key), __list_lru_init(lru, true, shrinker))
void list_lru_destroy(struct list_lru *lru);
int memcg_list_lru_alloc(struct mem_cgroup *memcg, struct list_lru *lru,
			 gfp_t gfp);
/* The lists of the memcg @folio is charged to; the kernel's oopses if none. */
#define folio_memcg_list_lru_alloc(folio, lru, gfp)			\
	({								\
		if (!page_memcg_check(folio))				\
			pamt_sim_fatal("list_lru heads for an uncharged folio", \
				       __FILE__, __LINE__);		\
		memcg_list_lru_alloc(page_memcg_check(folio), lru, gfp); \
	})
struct list_lru_one *list_lru_lock_irqsave(struct list_lru *lru, int nid,
					   struct mem_cgroup **memcg,
					   unsigned long *irq_flags);
void list_lru_unlock_irqrestore(struct list_lru_one *l,
				unsigned long *irq_flags);
bool __list_lru_add(struct list_lru *lru, struct list_lru_one *l,
		    struct list_head *item, int nid, struct mem_cgroup *memcg);
unsigned long list_lru_count_one(struct list_lru *lru, int nid,
				 struct mem_cgroup *memcg);
void list_lru_isolate_move(struct list_lru_one *list, struct list_head *item,
			   struct list_head *head);
unsigned long list_lru_walk_one_irq(struct list_lru *lru, int nid,
				    struct mem_cgroup *memcg,
				    list_lru_walk_cb isolate, void *cb_arg,
				    unsigned long *nr_to_walk);

static inline unsigned long list_lru_shrink_count(struct list_lru *lru,
						  struct shrink_control *sc)
{
	return list_lru_count_one(lru, sc->nid, sc->memcg);
}

#endif /* _PAMT_SHIM_LIST_LRU_H */
