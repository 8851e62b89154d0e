// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache, shrink layer: the idle LRU, the idle cap, the
 * shrinker, the drains; see "Memory cost and the shrinker" in the rst.
 * A walk clears a slot's PAMT_QUEUED_BIT, then reads its word; a put makes
 * the word IDLE, then tests the bit: the walk sees IDLE or the put files
 * the slot.  The lists are taken with IRQs off: a put may be in softirq.
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include "pamt_internal.h"
#include "pamt_trace.h"

#define PAMT_SHRINK_MAX_BUSY	8	/* failed removals before a scan stops */
#define PAMT_RESCHED_POPS	32	/* entries between two cond_resched() */
#define PAMT_WALK_FACTOR	4	/* entries a walk passes, per pair asked */
#define PAMT_WALK_MAX		256	/* entries passed per hold of a list */

static struct lock_class_key pamt_lru_key;

/* The id a slot records for @memcg: 0 for the root's lists, or none. */
static unsigned short pamt_lru_memcg_id(struct mem_cgroup *memcg)
{
	if (!memcg || mem_cgroup_is_root(memcg))
		return 0;
	return mem_cgroup_private_id(memcg);
}

/* The memcg of @id, NULL for the root's or one gone; under RCU. */
static struct mem_cgroup *pamt_lru_memcg(unsigned short id)
{
	return id ? mem_cgroup_from_private_id(id) : NULL;
}

/* Put slot @idx on its list, unless it is on one or taken off by a walk. */
static void pamt_lru_add(unsigned long idx)
{
	struct pamt_slot *s = &pamt.slots[idx];
	struct mem_cgroup *memcg;
	struct list_lru_one *l;
	unsigned long flags;
	int nid;

	/* Fully ordered: after the word went IDLE or INSTALLED. */
	if (test_and_set_bit(PAMT_QUEUED_BIT, &s->bits))
		return;
	nid = READ_ONCE(s->nid);
	rcu_read_lock();
	memcg = pamt_lru_memcg(READ_ONCE(s->memcg_id));
	l = list_lru_lock_irqsave(&pamt.lru, nid, &memcg, &flags);
	__list_lru_add(&pamt.lru, l, &s->lru, nid, memcg);
	list_lru_unlock_irqrestore(l, &flags);
	if (!pamt_lru_memcg_id(memcg))
		pamt_stat_inc(GLOBAL_LOCK);	/* every VM's list */
	rcu_read_unlock();
}

/* File slot @idx, its @pair just installed; task context, no transition. */
void pamt_shrink_installed(unsigned long idx, const struct tdx_pamt_pair *pair)
{
	struct page *page = pfn_to_page(pair->pfn[0]);
	struct pamt_slot *s = &pamt.slots[idx];

	WRITE_ONCE(s->nid, page_to_nid(page));
	rcu_read_lock();
	WRITE_ONCE(s->memcg_id, pamt_lru_memcg_id(page_memcg_check(page)));
	rcu_read_unlock();
	pamt_lru_add(idx);
}

/* Make the lists of @page's memcg, for its slot (the root's always exist). */
int pamt_shrink_prepare(struct page *page, gfp_t gfp)
{
	if (!PageMemcgKmem(page))
		return 0;
	return folio_memcg_list_lru_alloc(page_folio(page), &pamt.lru, gfp);
}

/* One walk of one list, and what it took off. */
struct pamt_walk {
	struct list_head dispose;	/* the slots taken off */
	int nid;			/* the list's node */
	unsigned short memcg_id;	/* and memcg, as pamt_lru_memcg_id() names it */
	unsigned long budget;		/* IDLE slots still to take off */
	unsigned long passed;		/* entries taken off */
};

/* Under the list's lock, IRQs off, which LRU_STOP drops; the word is a hint. */
static enum lru_status pamt_lru_isolate(struct list_head *item,
					struct list_lru_one *list, void *arg)
{
	struct pamt_slot *s = container_of(item, struct pamt_slot, lru);
	struct pamt_walk *w = arg;
	int word = atomic_read(&s->word);

	if (pamt_slot_state(word) == PAMT_SLOT_IDLE && !(word & PAMT_SLOT_LEAKED)) {
		if (!w->budget) {
			spin_unlock_irq(&list->lock);
			return LRU_STOP;
		}
		w->budget--;
	}
	w->passed++;
	list_lru_isolate_move(list, item, &w->dispose);
	return LRU_REMOVED;
}

/* REMOVE slot @idx if IDLE: 1 if freed, -EAGAIN if not tried, else its error. */
static int pamt_reclaim_slot(unsigned long idx)
{
	atomic_t *slot = &pamt.slots[idx].word;
	int old = atomic_read(slot);
	struct tdx_pamt_pair pair;
	int ret;

	for (;;) {
		/* Another CPU's REMOVE may stay BUSY and leave it IDLE. */
		if (pamt_slot_state(old) == PAMT_SLOT_REMOVING) {
			pamt_lru_add(idx);
			return -EAGAIN;
		}
		/* In use, empty or LEAKED: its next last put files it. */
		if (pamt_slot_state(old) != PAMT_SLOT_IDLE ||
		    (old & PAMT_SLOT_LEAKED))
			return -EAGAIN;
		ret = pamt_slot_remove(slot, idx, &old, &pair);
		if (ret != -EAGAIN)
			break;
	}
	/* The module held no pair: the slot is EMPTY, nothing came back. */
	if (ret == -ENOENT)
		return ret;
	/* Freed with preemption on: the allocator sleeps on RT. */
	if (!ret) {
		pamt_pair_uncharge(&pair);
		pamt_pair_free(&pair, 1);
		return 1;
	}
	/* Whatever the word says now: a BUSY REMOVE left it IDLE. */
	pamt_lru_add(idx);
	return ret;
}

/* REMOVE the IDLE slots walk @w took off, file again those of other lists. */
static unsigned long pamt_lru_dispose(struct pamt_walk *w, bool resched,
				      unsigned long *fails)
{
	struct pamt_slot *s, *next;
	unsigned long idx, freed = 0;
	unsigned short id;
	int ret;

	list_for_each_entry_safe(s, next, &w->dispose, lru) {
		list_del_init(&s->lru);
		idx = s - pamt.slots;
		/* Off the list before the bit: a put may add it right after. */
		clear_bit_unlock(PAMT_QUEUED_BIT, &s->bits);
		/* Clear, then read the word; a put sets IDLE, then tests the bit. */
		smp_mb__after_atomic();
		id = READ_ONCE(s->memcg_id);
		if (id != w->memcg_id) {
			rcu_read_lock();
			/* Its memcg is gone: it is this list's now. */
			if (!pamt_lru_memcg(id))
				WRITE_ONCE(s->memcg_id, w->memcg_id);
			rcu_read_unlock();
		}
		/* Filed elsewhere, or too many REMOVEs failed: file it. */
		if (READ_ONCE(s->nid) != w->nid ||
		    READ_ONCE(s->memcg_id) != w->memcg_id ||
		    *fails >= PAMT_SHRINK_MAX_BUSY) {
			ret = atomic_read(&s->word);
			if (pamt_slot_state(ret) == PAMT_SLOT_IDLE ||
			    pamt_slot_state(ret) == PAMT_SLOT_REMOVING)
				pamt_lru_add(idx);
			continue;
		}
		ret = pamt_reclaim_slot(idx);
		if (ret == 1)
			freed++;
		else if (ret < 0 && ret != -EAGAIN)
			(*fails)++;
		if (resched)
			cond_resched();
	}
	return freed;
}

/*
 * REMOVE up to @nr IDLE slots of the list of @nid and @memcg, walking it
 * once at most ("scan_objects" in the rst); with @once, one hold of it.
 */
static unsigned long pamt_lru_reclaim(int nid, struct mem_cgroup *memcg,
				      unsigned long nr, bool once,
				      bool resched, unsigned long *walked,
				      unsigned long *fails)
{
	unsigned long left = list_lru_count_one(&pamt.lru, nid, memcg);
	struct pamt_walk w = { .nid = nid, .memcg_id = pamt_lru_memcg_id(memcg) };
	unsigned long freed = 0, to_walk;

	while (freed < nr && left && *fails < PAMT_SHRINK_MAX_BUSY) {
		INIT_LIST_HEAD(&w.dispose);
		w.budget = nr - freed;
		w.passed = 0;
		to_walk = min3(left, min(w.budget, left) * PAMT_WALK_FACTOR,
			       (unsigned long)PAMT_WALK_MAX);
		list_lru_walk_one_irq(&pamt.lru, nid, memcg, pamt_lru_isolate,
				      &w, &to_walk);
		*walked += w.passed;
		left -= min(w.passed, left);
		freed += pamt_lru_dispose(&w, resched, fails);
		if (once || !w.passed)
			break;
		if (resched)
			cond_resched();
	}
	return freed;
}

/* pamt_lru_reclaim() on every list, node by node, memcg by memcg; may sleep. */
static unsigned long pamt_lru_reclaim_all(unsigned long nr,
					  unsigned long *fails)
{
	unsigned long freed = 0, walked = 0;
	struct mem_cgroup *memcg;
	int nid;

	for_each_node_state(nid, N_NORMAL_MEMORY) {
		memcg = mem_cgroup_iter(NULL, NULL, NULL);
		do {
			freed += pamt_lru_reclaim(nid, memcg, nr - freed, false,
						  true, &walked, fails);
			if (freed >= nr || *fails >= PAMT_SHRINK_MAX_BUSY) {
				mem_cgroup_iter_break(NULL, memcg);
				return freed;
			}
		} while ((memcg = mem_cgroup_iter(NULL, memcg, NULL)));
	}
	return freed;
}

/*
 * Idle memory: with @all, every CPU's unfolded change read (the worker,
 * the shrinker); else this CPU's only, short by the others': the slack.
 */
static unsigned long pamt_shrink_idle_memory(bool all)
{
	long held = atomic_long_read(&pamt.held);
	unsigned int cpu;

	if (!all)
		held += this_cpu_read(pamt.pcpu->stat[PAMT_PCPU_HELD]);
	else
		for_each_possible_cpu(cpu)
			held += READ_ONCE(per_cpu_ptr(pamt.pcpu, cpu)->stat[PAMT_PCPU_HELD]);
	return held > 0 ? held : 0;
}

bool pamt_shrink_over_cap(unsigned long more)
{
	return pamt_shrink_idle_memory(false) + more > READ_ONCE(pamt.idle_cap);
}

/* A put made slot @idx IDLE: file it.  Return: true if it tried a REMOVE. */
bool pamt_shrink_idle_inc(unsigned long idx)
{
	struct pamt_slot *s = &pamt.slots[idx];
	unsigned long walked = 0, fails = 0;
	struct mem_cgroup *memcg;
	bool removed = false;

	pamt_idle_count(idx, 1);
	pamt_lru_add(idx);
	if (likely(!pamt_shrink_over_cap(0)))
		return false;
	/*
	 * A free pair, else at most one REMOVE from this slot's list; the rest
	 * is the worker's.  Not with IRQs off: the walk takes spin_lock_irq().
	 */
	if (!pamt_mag_free_one() && !irqs_disabled()) {
		rcu_read_lock();
		memcg = pamt_lru_memcg(READ_ONCE(s->memcg_id));
		if (!mem_cgroup_tryget(memcg))
			memcg = NULL;
		rcu_read_unlock();
		removed = pamt_lru_reclaim(READ_ONCE(s->nid), memcg, 1, true,
					   false, &walked, &fails);
		mem_cgroup_put(memcg);
		if (removed)
			pamt_stat_inc(CAP);
		/* A REMOVE was attempted, whatever it did. */
		removed = removed || fails;
	}
	if (pamt_shrink_over_cap(0)) {
		/* Idle memory, then the flag: pairs with the worker's xchg. */
		smp_mb();
		if (!atomic_read(&pamt.deferred) && !atomic_xchg(&pamt.deferred, 1))
			pamt_platform_defer();
	}
	return removed;
}

/* Idle memory over the cap, every CPU's change read. */
static unsigned long pamt_shrink_over_cap_by(void)
{
	unsigned long idle = pamt_shrink_idle_memory(true);
	unsigned long cap = READ_ONCE(pamt.idle_cap);

	return idle > cap ? idle - cap : 0;
}

/* The work item: free pairs (any CPU's, no SEAMCALL), then idle slots. */
void pamt_shrink_deferred(void)
{
	unsigned long fails = 0, n;

	might_sleep();
	/* The flag, then idle memory: see pamt_shrink_idle_inc(). */
	atomic_xchg(&pamt.deferred, 0);
	if (!pamt.enabled)
		return;
	pamt_mag_drain(pamt_shrink_over_cap_by(), true);
	while ((n = pamt_shrink_over_cap_by()) && fails < PAMT_SHRINK_MAX_BUSY) {
		cond_resched();
		n = pamt_lru_reclaim_all(min_t(unsigned long, n, PAMT_RESCHED_POPS),
					 &fails);
		pamt_stat_add(CAP, n);
		if (!n)
			break;		/* nothing IDLE on any list */
	}
}

/* No lock; the root's lists of the first node add the free pairs. */
static unsigned long pamt_shrink_count_objects(struct shrinker *s,
					       struct shrink_control *sc)
{
	unsigned long n;

	if (!pamt.enabled)
		return SHRINK_EMPTY;
	n = list_lru_shrink_count(&pamt.lru, sc);
	if (!pamt_lru_memcg_id(sc->memcg) && sc->nid == first_online_node)
		n += pamt_cached_pairs();
	return n ?: SHRINK_EMPTY;
}

static unsigned long pamt_shrink_scan_objects(struct shrinker *s,
					      struct shrink_control *sc)
{
	bool resched = gfpflags_allow_blocking(sc->gfp_mask);
	unsigned long nr = sc->nr_to_scan, freed, done = 0, fails = 0, n;

	if (!pamt.enabled) {
		sc->nr_scanned = 0;
		return SHRINK_STOP;
	}
	freed = pamt_lru_reclaim(sc->nid, sc->memcg, nr, false, resched,
				 &done, &fails);
	pamt_stat_add(SHRINK, freed);
	if (!pamt_lru_memcg_id(sc->memcg) && sc->nid == first_online_node &&
	    freed < nr) {
		n = pamt_mag_drain(nr - freed, resched);
		freed += n;
		done += n;
	}
	trace_tdx_pamt_shrink(nr, freed);
	sc->nr_scanned = min(done, nr);
	/* Fell short and freed nothing: another call would do the same. */
	if (!freed && sc->nr_scanned < nr)
		return SHRINK_STOP;
	return freed;
}

int pamt_shrink_init(void)
{
	int ret;

	pamt.shrinker = shrinker_alloc(SHRINKER_MEMCG_AWARE |
				       SHRINKER_NUMA_AWARE, "tdx-pamt");
	if (!pamt.shrinker)
		return -ENOMEM;
	pamt.shrinker->count_objects = pamt_shrink_count_objects;
	pamt.shrinker->scan_objects = pamt_shrink_scan_objects;
	/* A lock class of its own: an idle put may take it in softirq. */
	ret = list_lru_init_memcg_key(&pamt.lru, pamt.shrinker, &pamt_lru_key);
	if (ret) {
		shrinker_free(pamt.shrinker);
		pamt.shrinker = NULL;
		return ret;
	}
	atomic_set(&pamt.deferred, 0);
	return 0;
}

/* After the last user: unregisters the shrinker if it was registered. */
void pamt_shrink_exit(void)
{
	shrinker_free(pamt.shrinker);
	pamt.shrinker = NULL;
	list_lru_destroy(&pamt.lru);
}

/* Every idle slot's pair, each list once round, and every cached pair. */
unsigned long tdx_pamt_drain(void)
{
	unsigned long freed, fails = 0;

	might_sleep();
	if (!pamt.enabled)
		return 0;
	freed = pamt_lru_reclaim_all(ULONG_MAX, &fails);
	pamt_stat_add(SHRINK, freed);
	return freed + pamt_mag_drain(ULONG_MAX, true);
}
