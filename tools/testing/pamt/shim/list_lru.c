// SPDX-License-Identifier: GPL-2.0
/*
 * The memcgs, shrinkers and list_lru of the simulated machine: what
 * shim/include/linux/list_lru.h and custom.h declare.  Its own file, not
 * sim.c's: virtual time builds sim.c with the host's locks, and these
 * locks must be the virtual ones.
 */
#include <pthread.h>
#include <linux/list_lru.h>
#include "shim.h"
#include "sim.h"

unsigned long pamt_sim_node1_pfn = ULONG_MAX;
unsigned long pamt_sim_lru_walked;
static pthread_mutex_t sim_memcg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_cgroup *sim_memcgs[PAMT_SIM_MAX_MEMCGS];
static unsigned short sim_nr_memcgs;
static struct obj_cgroup sim_root_objcg = { .root = true };

unsigned short mem_cgroup_private_id(struct mem_cgroup *memcg)
{
	unsigned short id;

	if (mem_cgroup_is_root(memcg))
		return 0;
	id = __atomic_load_n(&memcg->id, __ATOMIC_ACQUIRE);
	if (id)
		return id;
	pthread_mutex_lock(&sim_memcg_lock);
	id = memcg->id;
	/* A test cleared it: the same memcg, its id again. */
	for (unsigned short i = 0; !id && i < sim_nr_memcgs; i++)
		if (sim_memcgs[i] == memcg) {
			id = i + 1;
			__atomic_store_n(&memcg->id, id, __ATOMIC_RELEASE);
		}
	if (!id) {
		if (sim_nr_memcgs == PAMT_SIM_MAX_MEMCGS)
			pamt_sim_fatal("too many memcgs", __FILE__, __LINE__);
		__atomic_store_n(&sim_memcgs[sim_nr_memcgs], memcg, __ATOMIC_RELAXED);
		id = sim_nr_memcgs + 1;
		/* The entry, then the ids that name it. */
		__atomic_store_n(&sim_nr_memcgs, id, __ATOMIC_RELEASE);
		__atomic_store_n(&memcg->id, id, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sim_memcg_lock);
	return id;
}

struct mem_cgroup *mem_cgroup_from_private_id(unsigned short id)
{
	if (!id || id > __atomic_load_n(&sim_nr_memcgs, __ATOMIC_ACQUIRE))
		return NULL;
	return __atomic_load_n(&sim_memcgs[id - 1], __ATOMIC_RELAXED);
}

struct mem_cgroup *mem_cgroup_iter(struct mem_cgroup *root,
				   struct mem_cgroup *prev, void *reclaim)
{
	unsigned short next = prev ? mem_cgroup_private_id(prev) : 0;

	if (!prev)
		return &sim_root_objcg.memcg;
	return mem_cgroup_from_private_id(next + 1);
}

struct shrinker *shrinker_alloc(unsigned int flags, const char *fmt, ...)
{
	struct shrinker *s = calloc(1, sizeof(*s));

	if (s) {
		s->flags = flags;
		s->seeks = DEFAULT_SEEKS;
	}
	return s;
}

void shrinker_free(struct shrinker *shrinker)
{
	free(shrinker);
}

static struct list_lru_one *sim_lru_one_new(void)
{
	struct list_lru_one *l = calloc(1, sizeof(*l));

	if (!l)
		pamt_sim_fatal("out of memory", __FILE__, __LINE__);
	INIT_LIST_HEAD(&l->list);
	spin_lock_init(&l->lock);
	return l;
}

int __list_lru_init(struct list_lru *lru, bool memcg_aware,
		    struct shrinker *shrinker)
{
	int nid;

	memset(lru, 0, sizeof(*lru));
	lru->memcg_aware = memcg_aware;
	for (nid = 0; nid < PAMT_SIM_MAX_NODES; nid++)
		lru->one[nid][0] = sim_lru_one_new();
	return 0;
}

void list_lru_destroy(struct list_lru *lru)
{
	int nid, id;

	for (nid = 0; nid < PAMT_SIM_MAX_NODES; nid++)
		for (id = 0; id <= PAMT_SIM_MAX_MEMCGS; id++)
			free(lru->one[nid][id]);
	memset(lru, 0, sizeof(*lru));
}

int memcg_list_lru_alloc(struct mem_cgroup *memcg, struct list_lru *lru,
			 gfp_t gfp)
{
	unsigned short id = mem_cgroup_private_id(memcg);
	int nid;

	might_alloc(gfp);
	if (!lru->memcg_aware || !id)
		return 0;
	pthread_mutex_lock(&sim_memcg_lock);
	for (nid = 0; nid < PAMT_SIM_MAX_NODES; nid++)
		if (!lru->one[nid][id])
			__atomic_store_n(&lru->one[nid][id], sim_lru_one_new(),
					 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sim_memcg_lock);
	return 0;
}

/* @memcg's list on @nid, or NULL if it has none. */
static struct list_lru_one *sim_lru_one(struct list_lru *lru, int nid,
					struct mem_cgroup *memcg)
{
	unsigned short id = lru->memcg_aware ? mem_cgroup_private_id(memcg) : 0;

	if (nid < 0 || nid >= PAMT_SIM_MAX_NODES)
		pamt_sim_fatal("list_lru: no such node", __FILE__, __LINE__);
	return __atomic_load_n(&lru->one[nid][id], __ATOMIC_ACQUIRE);
}

struct list_lru_one *list_lru_lock_irqsave(struct list_lru *lru, int nid,
					   struct mem_cgroup **memcg,
					   unsigned long *irq_flags)
{
	struct list_lru_one *l = sim_lru_one(lru, nid, *memcg);

	if (!l)
		pamt_sim_fatal("list_lru: a memcg's list used before memcg_list_lru_alloc()",
			       __FILE__, __LINE__);
	spin_lock_irqsave(&l->lock, *irq_flags);
	return l;
}

void list_lru_unlock_irqrestore(struct list_lru_one *l,
				unsigned long *irq_flags)
{
	spin_unlock_irqrestore(&l->lock, *irq_flags);
}

bool __list_lru_add(struct list_lru *lru, struct list_lru_one *l,
		    struct list_head *item, int nid, struct mem_cgroup *memcg)
{
	lockdep_assert_held(&l->lock);
	if (!list_empty(item))
		return false;
	list_add_tail(item, &l->list);
	WRITE_ONCE(l->nr_items, l->nr_items + 1);
	return true;
}

unsigned long list_lru_count_one(struct list_lru *lru, int nid,
				 struct mem_cgroup *memcg)
{
	struct list_lru_one *l = sim_lru_one(lru, nid, memcg);
	long n = l ? READ_ONCE(l->nr_items) : 0;

	return n > 0 ? n : 0;
}

void list_lru_isolate_move(struct list_lru_one *list, struct list_head *item,
			   struct list_head *head)
{
	list_move(item, head);
	WRITE_ONCE(list->nr_items, list->nr_items - 1);
}

unsigned long list_lru_walk_one_irq(struct list_lru *lru, int nid,
				    struct mem_cgroup *memcg,
				    list_lru_walk_cb isolate, void *cb_arg,
				    unsigned long *nr_to_walk)
{
	struct list_lru_one *l = sim_lru_one(lru, nid, memcg);
	struct list_head *item, *next;
	unsigned long isolated = 0, flags;
	enum lru_status ret;

	if (!l)
		return 0;
	if (irqs_disabled())
		pamt_sim_fatal("spin_lock_irq() with IRQs off", __FILE__, __LINE__);
	spin_lock_irqsave(&l->lock, flags);
	for (item = l->list.next, next = item->next; item != &l->list;
	     item = next, next = item->next) {
		if (!*nr_to_walk)
			break;
		--*nr_to_walk;
		ret = isolate(item, l, cb_arg);
		/* The kernel's contract: the callback dropped the lock. */
		if (ret == LRU_STOP)
			return isolated;
		__atomic_fetch_add(&pamt_sim_lru_walked, 1, __ATOMIC_RELAXED);
		if (ret == LRU_REMOVED)
			isolated++;
		else if (ret == LRU_ROTATE)
			list_move_tail(item, &l->list);
	}
	spin_unlock_irqrestore(&l->lock, flags);
	return isolated;
}
