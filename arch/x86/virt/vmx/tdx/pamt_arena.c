// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: the pair arena.  Pairs are carved out of 2M
 * chunks of pair pages, fullest chunk first, with order-1 and order-0
 * fallbacks.  Design, lock order and memcg policy: tdx-dpamt.rst.
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include "pamt_internal.h"

/* page_private() of a pair's first page: its chunk, this, or 0 (order 0). */
#define PAMT_ARENA_ORDER1	1UL

struct pamt_arena_chunk {
	struct list_head list;		/* on bucket[nr_free], or on off */
	unsigned long base_pfn;		/* pair i: base_pfn + 2i and + 2i + 1 */
	unsigned int nr_free;
	unsigned long gen;		/* pamt_arena.gen when asked for */
	bool off;			/* a home, or being emptied: owner only */
	unsigned long seen;		/* the last walk that looked at it */
	DECLARE_BITMAP(free, PAMT_ARENA_PAIRS);
	/*
	 * 1 + slot index while installed.  Written with WRITE_ONCE() by the
	 * CPU that installs or removes the pair, without the arena lock;
	 * the walks read it with READ_ONCE().  A stale owner only points a
	 * walk at a slot whose own word it then checks with a
	 * compare-and-exchange.
	 */
	u32 owner[PAMT_ARENA_PAIRS];
};

/* Processes with a home chunk at once, at most. */
#define PAMT_ARENA_HOME_BITS	6
#define PAMT_ARENA_HOMES	BIT(PAMT_ARENA_HOME_BITS)

struct pamt_arena_home {
	const void *key;		/* the process's mm */
	struct pamt_arena_chunk *chunk;
};

static struct pamt_arena {
	spinlock_t lock;		/* irqsave: pairs come back from softirq */
	struct list_head bucket[PAMT_ARENA_PAIRS];	/* by free pairs */
	DECLARE_BITMAP(nonempty, PAMT_ARENA_PAIRS);
	/*
	 * Changed under @lock with WRITE_ONCE(), read without it with
	 * READ_ONCE(): by the statistics and the shrinker's count; by a
	 * refill, which skips the lock when no chunk has a free pair; and
	 * by a new chunk's allocation, which compares @gen before and after
	 * to see whether another CPU linked one meanwhile.  A stale value
	 * costs one lock hold, or one chunk freed again, no more.
	 */
	unsigned long nr_chunks;
	unsigned long nr_free;
	unsigned long gen;		/* chunks ever linked */
	unsigned long scan;		/* walks, to mark the chunks looked at */
	struct list_head off;
	struct pamt_arena_home home[PAMT_ARENA_HOMES];
} pamt_arena;

static inline void pamt_arena_lock(unsigned long *flags)
{
	spin_lock_irqsave(&pamt_arena.lock, *flags);
	pamt_stat_inc(GLOBAL_LOCK);
}

/*
 * At the head, unmarked: a walk's looked-at chunks wait at the tails, so a
 * marked one here would hide those behind it; this one may be seen twice.
 */
static void pamt_arena_link(struct pamt_arena_chunk *c)
{
	lockdep_assert_held(&pamt_arena.lock);
	c->seen = 0;
	list_add(&c->list, &pamt_arena.bucket[c->nr_free]);
	__set_bit(c->nr_free, pamt_arena.nonempty);
}

static void pamt_arena_unlink(struct pamt_arena_chunk *c)
{
	lockdep_assert_held(&pamt_arena.lock);
	list_del_init(&c->list);
	if (list_empty(&pamt_arena.bucket[c->nr_free]))
		__clear_bit(c->nr_free, pamt_arena.nonempty);
}

/* Back on the buckets; true if every pair is free: release it after the lock. */
static bool pamt_arena_put_on(struct pamt_arena_chunk *c)
{
	lockdep_assert_held(&pamt_arena.lock);
	list_del_init(&c->list);
	c->off = false;
	if (c->nr_free < PAMT_ARENA_PAIRS) {
		/* At the tail: a reclaim pass that looked at it goes past it. */
		list_add_tail(&c->list, &pamt_arena.bucket[c->nr_free]);
		__set_bit(c->nr_free, pamt_arena.nonempty);
		return false;
	}
	WRITE_ONCE(pamt_arena.nr_chunks, pamt_arena.nr_chunks - 1);
	WRITE_ONCE(pamt_arena.nr_free, pamt_arena.nr_free - PAMT_ARENA_PAIRS);
	return true;
}

static unsigned int pamt_arena_carve(struct pamt_arena_chunk *c,
				     struct tdx_pamt_pair *pairs, unsigned int n)
{
	unsigned int i = 0, got = 0;

	while (got < n && c->nr_free) {
		i = find_next_bit(c->free, PAMT_ARENA_PAIRS, i);
		__clear_bit(i, c->free);
		c->nr_free--;
		WRITE_ONCE(c->owner[i], 0);
		pairs[got].pfn[0] = c->base_pfn + 2 * i;
		pairs[got++].pfn[1] = c->base_pfn + 2 * i + 1;
	}
	return got;
}

/* Serve @run past its first @got pairs from the fullest linked chunks. */
static unsigned int pamt_arena_take_linked(struct pamt_pair_run *run,
					   unsigned int got)
{
	struct pamt_arena_chunk *c;
	unsigned int k, taken = 0;
	unsigned long b;

	while (got + taken < run->n) {
		b = find_next_bit(pamt_arena.nonempty, PAMT_ARENA_PAIRS, 1);
		if (b >= PAMT_ARENA_PAIRS)
			break;
		c = list_first_entry(&pamt_arena.bucket[b],
				     struct pamt_arena_chunk, list);
		pamt_arena_unlink(c);
		k = pamt_arena_carve(c, run->pairs + got + taken,
				     run->n - got - taken);
		pamt_arena_link(c);
		taken += k;
	}
	return taken;
}

/**
 * pamt_arena_take_runs() - free pairs for several runs in one lock hold
 * @v: the runs, filled in order; each @n becomes the pairs it got
 * @nv: how many runs
 * @fresh: a new chunk, or NULL; set to NULL once it served and was linked
 *
 * If another CPU linked a chunk while this one allocated @fresh, the
 * linked chunks serve first and @fresh only what @v[0] still lacks: one
 * new chunk per wave of misses.  Called with this CPU's magazine lock
 * held (see "Lock order and contexts").
 *
 * Return: the pairs taken in all.
 */
unsigned int pamt_arena_take_runs(struct pamt_pair_run *v, unsigned int nv,
				  struct pamt_arena_chunk **fresh)
{
	struct pamt_arena_chunk *f = fresh ? *fresh : NULL;
	unsigned int r, k, got, total = 0, from_linked = 0;
	unsigned long flags;
	bool stale;

	if (!f && !READ_ONCE(pamt_arena.nr_free)) {
		for (r = 0; r < nv; r++)
			v[r].n = 0;
		return 0;
	}
	pamt_arena_lock(&flags);
	stale = f && f->gen != pamt_arena.gen;
	for (r = 0; r < nv; r++) {
		got = 0;
		if (f && !stale)
			got = pamt_arena_carve(f, v[r].pairs, v[r].n);
		k = pamt_arena_take_linked(&v[r], got);
		from_linked += k;
		got += k;
		if (f && stale && !r)
			got += pamt_arena_carve(f, v[r].pairs + got,
						v[r].n - got);
		v[r].n = got;
		total += got;
	}
	if (f && f->nr_free < PAMT_ARENA_PAIRS) {
		pamt_arena_link(f);
		WRITE_ONCE(pamt_arena.gen, pamt_arena.gen + 1);
		WRITE_ONCE(pamt_arena.nr_chunks, pamt_arena.nr_chunks + 1);
		WRITE_ONCE(pamt_arena.nr_free, pamt_arena.nr_free +
			   f->nr_free - from_linked);
		*fresh = NULL;
	} else {
		WRITE_ONCE(pamt_arena.nr_free,
			   pamt_arena.nr_free - from_linked);
	}
	spin_unlock_irqrestore(&pamt_arena.lock, flags);
	return total;
}

/*
 * A chunk for pamt_arena_take_runs().  Without reclaim in @gfp only a free
 * 2M block is taken (a fallback pair would keep a 2M block from merging
 * as long); with it, one compaction at most: an order-1 pair is fine too.
 */
static struct pamt_arena_chunk *pamt_arena_new_chunk(gfp_t gfp)
{
	struct pamt_arena_chunk *c;
	gfp_t chunk_gfp = gfp;
	unsigned long i, gen = READ_ONCE(pamt_arena.gen);
	struct page *page;

	if (!gfpflags_allow_blocking(gfp))
		chunk_gfp &= ~(__GFP_KSWAPD_RECLAIM | __GFP_HIGH);
	page = pamt_pages_alloc(chunk_gfp | __GFP_NORETRY | __GFP_NOWARN |
				__GFP_NOMEMALLOC, PAMT_ARENA_ORDER);
	if (!page) {
		pamt_stat_inc(CHUNK_FAIL);
		return NULL;
	}
	c = kzalloc(sizeof(*c), gfp | __GFP_NOWARN);
	if (!c) {
		__free_pages(page, PAMT_ARENA_ORDER);
		pamt_stat_inc(CHUNK_FAIL);
		return NULL;
	}
	c->base_pfn = page_to_pfn(page);
	c->gen = gen;
	bitmap_fill(c->free, PAMT_ARENA_PAIRS);
	for (i = 0; i < PAMT_ARENA_PAGES; i += 2)
		set_page_private(pfn_to_page(c->base_pfn + i), (unsigned long)c);
	c->nr_free = PAMT_ARENA_PAIRS;
	pamt_stat_add(PAGE_ALLOC, PAMT_ARENA_PAGES);
	pamt_stat_inc(CHUNK_ALLOC);
	return c;
}

/* Free a chunk whose pairs are all free; each was reset as it came back. */
static void pamt_arena_release(struct pamt_arena_chunk *c)
{
	unsigned long i;

	if (!c)
		return;
	for (i = 0; i < PAMT_ARENA_PAGES; i += 2)
		set_page_private(pfn_to_page(c->base_pfn + i), 0);
	__free_pages(pfn_to_page(c->base_pfn), PAMT_ARENA_ORDER);
	kfree(c);
	pamt_stat_add(PAGE_FREE, PAMT_ARENA_PAGES);
	mm_account_reclaimed_pages(PAMT_ARENA_PAGES);
	pamt_stat_inc(CHUNK_FREE);
}

/**
 * pamt_arena_take_home() - pairs from the calling process's home chunk
 * @pairs: filled with the pairs taken
 * @n: most pairs to take
 * @gfp: allocation flags for a new home chunk
 *
 * A process's top-ups carve from a chunk of its own, off the buckets, so
 * that VMs that die at different times do not pin each other's chunks.
 * A home another process holds with pairs left is not taken from it.
 *
 * Return: pairs taken; 0 for a kernel thread or when no home can be had.
 */
unsigned int pamt_arena_take_home(struct tdx_pamt_pair *pairs, unsigned int n,
				  gfp_t gfp)
{
	struct pamt_arena_chunk *fresh = NULL, *old = NULL;
	const void *key = current->mm;
	struct pamt_arena_home *h;
	unsigned int got = 0;
	unsigned long flags;

	if (!pamt.arena || !key || !n)
		return 0;
	h = &pamt_arena.home[hash_ptr(key, PAMT_ARENA_HOME_BITS)];
	for (;;) {
		pamt_arena_lock(&flags);
		/* Maybe a home another thread installed while this one allocated. */
		if (h->chunk && h->chunk->nr_free) {
			if (h->key == key) {
				got = pamt_arena_carve(h->chunk, pairs, n);
				WRITE_ONCE(pamt_arena.nr_free,
					   pamt_arena.nr_free - got);
			}
			break;
		}
		if (fresh) {
			if (h->chunk && pamt_arena_put_on(h->chunk))
				old = h->chunk;
			h->key = key;
			h->chunk = fresh;
			list_add(&fresh->list, &pamt_arena.off);
			fresh->off = true;
			got = pamt_arena_carve(fresh, pairs, n);
			WRITE_ONCE(pamt_arena.gen, pamt_arena.gen + 1);
			WRITE_ONCE(pamt_arena.nr_chunks, pamt_arena.nr_chunks + 1);
			WRITE_ONCE(pamt_arena.nr_free,
				   pamt_arena.nr_free + fresh->nr_free);
			fresh = NULL;
			break;
		}
		spin_unlock_irqrestore(&pamt_arena.lock, flags);
		fresh = pamt_arena_new_chunk(gfp & ~__GFP_ACCOUNT);
		if (!fresh)
			return 0;
	}
	spin_unlock_irqrestore(&pamt_arena.lock, flags);
	pamt_arena_release(fresh);
	pamt_arena_release(old);
	return got;
}

/* Return a reset pair to chunk @c; true if it emptied @c, now unlinked. */
static bool pamt_arena_put(struct pamt_arena_chunk *c, unsigned long lo,
			   unsigned long hi)
{
	unsigned long off = lo - c->base_pfn;

	lockdep_assert_held(&pamt_arena.lock);
	if (WARN_ONCE(off >= PAMT_ARENA_PAGES || off % 2 || hi != lo + 1,
		      "tdx-pamt: pair %#lx/%#lx is not a pair of its chunk\n",
		      lo, hi))
		return false;
	if (WARN_ONCE(test_bit(off / 2, c->free),
		      "tdx-pamt: pair %#lx freed twice\n", lo))
		return false;
	if (!c->off)
		pamt_arena_unlink(c);
	__set_bit(off / 2, c->free);
	c->nr_free++;
	WRITE_ONCE(pamt_arena.nr_free, pamt_arena.nr_free + 1);
	/* An off chunk: its owner puts it back, or releases it. */
	if (c->off)
		return false;
	if (c->nr_free < PAMT_ARENA_PAIRS) {
		pamt_arena_link(c);
		return false;
	}
	WRITE_ONCE(pamt_arena.nr_chunks, pamt_arena.nr_chunks - 1);
	WRITE_ONCE(pamt_arena.nr_free, pamt_arena.nr_free - PAMT_ARENA_PAIRS);
	return true;
}

static int pamt_arena_fallback(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	struct page *page;

	page = pamt_pages_alloc(gfp | __GFP_NORETRY | __GFP_NOWARN, 1);
	if (page) {
		set_page_private(page, PAMT_ARENA_ORDER1);
		pair->pfn[0] = page_to_pfn(page);
		pair->pfn[1] = pair->pfn[0] + 1;
		pamt_stat_add(PAGE_ALLOC, 2);
		pamt_stat_inc(PAIR_ORDER1);
		return 0;
	}
	if (pamt_pair_alloc_pages(pair, gfp))
		return -ENOMEM;
	set_page_private(pfn_to_page(pair->pfn[0]), 0);
	set_page_private(pfn_to_page(pair->pfn[1]), 0);
	pamt_stat_inc(PAIR_ORDER0);
	return 0;
}

/**
 * pamt_arena_alloc() - up to @n pairs from the arena, or one fallback pair
 * @pairs: filled with the pairs allocated
 * @n: pairs wanted, 1 to TDX_PAMT_CACHE_MAX
 * @gfp: allocation flags; __GFP_ACCOUNT is ignored
 * @refill: also fill this CPU's magazine, in the same lock hold
 *	(pamt_mag_refill())
 *
 * Return: pairs allocated, 0 if none.
 */
unsigned int pamt_arena_alloc(struct tdx_pamt_pair *pairs, unsigned int n,
			      gfp_t gfp, bool refill)
{
	struct pamt_arena_chunk *fresh = NULL;
	struct pamt_pair_run run;
	unsigned int got, i;

	gfp &= ~__GFP_ACCOUNT;
	for (i = 0; i < 2; i++) {
		run.pairs = pairs;
		run.n = n;
		got = refill ? pamt_mag_refill(pairs, n, &fresh) :
			       pamt_arena_take_runs(&run, 1, &fresh);
		if (got || i)
			break;
		fresh = pamt_arena_new_chunk(gfp);
		if (!fresh)
			break;
	}
	pamt_arena_release(fresh);
	if (got)
		return got;
	return pamt_arena_fallback(pairs, gfp) ? 0 : 1;
}

static void pamt_arena_free_pages(const struct tdx_pamt_pair *pair,
				  unsigned long tag)
{
	unsigned long lo = min(pair->pfn[0], pair->pfn[1]);
	unsigned long hi = max(pair->pfn[0], pair->pfn[1]);

	if (tag != PAMT_ARENA_ORDER1) {
		pamt_pair_free_pages(pair);
		return;
	}
	if (WARN_ONCE(hi != lo + 1,
		      "tdx-pamt: pair %#lx/%#lx is not an order-1 page\n",
		      lo, hi))
		return;
	set_page_private(pfn_to_page(lo), 0);
	__free_pages(pfn_to_page(lo), 1);
	pamt_stat_add(PAGE_FREE, 2);
	/* Else direct reclaim sees no progress and fails __GFP_NORETRY. */
	mm_account_reclaimed_pages(2);
}

static unsigned long pamt_pair_tag(const struct tdx_pamt_pair *pair)
{
	if (!pamt.arena)
		return 0;
	return page_private(pfn_to_page(min(pair->pfn[0], pair->pfn[1])));
}

/* Pairs returned per hold of the arena lock by pamt_arena_free_bulk(). */
#define PAMT_ARENA_BULK		64

static unsigned long pamt_pair_free_some(const struct tdx_pamt_pair *pairs,
					 unsigned int n)
{
	unsigned long tag, flags, pages = 0;
	struct pamt_arena_chunk *c, *tmp;
	LIST_HEAD(released);
	u64 chunked = 0;
	unsigned int k;

	/* A tag is read while the pages are still ours: before any free. */
	for (k = 0; k < n; k++) {
		pamt.ops->reset_page(pairs[k].pfn[0]);
		pamt.ops->reset_page(pairs[k].pfn[1]);
		tag = pamt_pair_tag(&pairs[k]);
		if (tag && tag != PAMT_ARENA_ORDER1) {
			chunked |= BIT_ULL(k);
			continue;
		}
		pamt_arena_free_pages(&pairs[k], tag);
		pages += 2;
	}
	if (!chunked)
		return pages;
	pamt_arena_lock(&flags);
	for (k = 0; k < n; k++) {
		if (!(chunked & BIT_ULL(k)))
			continue;
		c = (struct pamt_arena_chunk *)pamt_pair_tag(&pairs[k]);
		if (pamt_arena_put(c, min(pairs[k].pfn[0], pairs[k].pfn[1]),
				   max(pairs[k].pfn[0], pairs[k].pfn[1])))
			list_add(&c->list, &released);
	}
	spin_unlock_irqrestore(&pamt_arena.lock, flags);
	list_for_each_entry_safe(c, tmp, &released, list) {
		pamt_arena_release(c);
		pages += PAMT_ARENA_PAGES;
	}
	return pages;
}

/**
 * pamt_arena_free_bulk() - reset pairs and give them back, chunks first
 * @pairs: the pairs; none may be in the module
 * @n: how many
 *
 * Return: pages that went back to the page allocator.
 */
unsigned long pamt_arena_free_bulk(const struct tdx_pamt_pair *pairs,
				   unsigned int n)
{
	unsigned long pages = 0;
	unsigned int m;

	while (n) {
		m = min(n, PAMT_ARENA_BULK);
		pages += pamt_pair_free_some(pairs, m);
		pairs += m;
		n -= m;
	}
	return pages;
}

/**
 * pamt_arena_note_owner() - record which slot holds a pair, for reclaim
 * @pair: a pair of the cache
 * @idx: the slot it was installed in, or -1 once the module handed it back
 *
 * At install, the slot's LOOSE bit says whether @pair is a fallback pair.
 *
 * Context: anywhere, inside a transition too.
 */
void pamt_arena_note_owner(const struct tdx_pamt_pair *pair, long idx)
{
	struct pamt_arena_chunk *c = (void *)pamt_pair_tag(pair);
	bool loose = !c || (unsigned long)c == PAMT_ARENA_ORDER1;
	unsigned long off;

	if (pamt.arena && idx >= 0 &&
	    loose != test_bit(PAMT_LOOSE_BIT, &pamt.slots[idx].bits))
		change_bit(PAMT_LOOSE_BIT, &pamt.slots[idx].bits);
	if (loose)
		return;
	off = min(pair->pfn[0], pair->pfn[1]) - c->base_pfn;
	if (off < PAMT_ARENA_PAGES)
		WRITE_ONCE(c->owner[off / 2], idx + 1);
}

/* Whether reclaim may REMOVE slot @owner - 1; a hint, the REMOVE checks. */
static bool pamt_arena_owner_idle(u32 owner)
{
	int word;

	if (!owner || owner > pamt.nr_slots)
		return false;
	word = atomic_read(&pamt.slots[owner - 1].word);
	return pamt_slot_state(word) == PAMT_SLOT_IDLE &&
	       !(word & PAMT_SLOT_LEAKED);
}

/*
 * Whether every pair of @c that is out is in an IDLE slot or, up to
 * *@cached, in no slot (most likely a magazine).
 */
static bool pamt_arena_chunk_idle(const struct pamt_arena_chunk *c,
				  long *cached)
{
	long unowned = 0;
	unsigned int i;
	u32 owner;

	for_each_clear_bit(i, c->free, PAMT_ARENA_PAIRS) {
		owner = READ_ONCE(c->owner[i]);
		if (!owner)
			unowned++;
		else if (!pamt_arena_owner_idle(owner))
			return false;
	}
	if (unowned > *cached)
		return false;
	*cached -= unowned;
	return true;
}

/**
 * pamt_arena_unhome() - put home chunks back on the buckets
 * @all: every one; else those whose pairs out are all idle
 *
 * Return: pages given back: home chunks with every pair free.
 */
unsigned long pamt_arena_unhome(bool all)
{
	struct pamt_arena_chunk *c, *tmp;
	struct pamt_arena_home *h;
	unsigned long flags;
	LIST_HEAD(released);
	long cached = 0;
	unsigned long pages = 0;

	for (h = pamt_arena.home; h < pamt_arena.home + PAMT_ARENA_HOMES; h++) {
		pamt_arena_lock(&flags);
		c = h->chunk;
		if (c && (all || pamt_arena_chunk_idle(c, &cached))) {
			h->chunk = NULL;
			h->key = NULL;
			if (pamt_arena_put_on(c))
				list_add(&c->list, &released);
		}
		spin_unlock_irqrestore(&pamt_arena.lock, flags);
	}
	list_for_each_entry_safe(c, tmp, &released, list) {
		pamt_arena_release(c);
		pages += PAMT_ARENA_PAGES;
	}
	return pages;
}

/* Chunks a reclaim pass looks at, at most. */
#define PAMT_ARENA_SCAN_CHUNKS	64
/* Failed REMOVE sequences before a reclaim pass stops. */
#define PAMT_ARENA_MAX_FAILS	8

/* A new walk over the chunks: its stamp, and in *@budget its length. */
static unsigned long pamt_arena_walk_start(bool all, unsigned long *budget)
{
	unsigned long flags, stamp;

	pamt_arena_lock(&flags);
	stamp = ++pamt_arena.scan;
	*budget = all ? pamt_arena.nr_chunks : PAMT_ARENA_SCAN_CHUNKS;
	spin_unlock_irqrestore(&pamt_arena.lock, flags);
	return stamp;
}

/* The sparsest chunk walk @stamp has not looked at yet, now marked. */
static struct pamt_arena_chunk *pamt_arena_next_sparse(unsigned long stamp)
{
	struct pamt_arena_chunk *c;
	int b;

	lockdep_assert_held(&pamt_arena.lock);
	for (b = PAMT_ARENA_PAIRS - 1; b >= 0; b--) {
		if (!test_bit(b, pamt_arena.nonempty))
			continue;
		/*
		 * Looked-at chunks go to the tail: a marked head ends the list.
		 * A concurrent walk moves and marks chunks too, so this one may
		 * look at some twice or miss some, within its budget; the cap's
		 * worker runs again within PAMT_DEFER_LAZY_MS while over the cap.
		 */
		c = list_first_entry(&pamt_arena.bucket[b],
				     struct pamt_arena_chunk, list);
		if (c->seen != stamp) {
			c->seen = stamp;
			list_move_tail(&c->list, &pamt_arena.bucket[b]);
			return c;
		}
	}
	return NULL;
}

/*
 * The next chunk of walk @stamp whose pairs out are all idle, taken off
 * the buckets if @take; one lock hold per chunk looked at.
 */
static struct pamt_arena_chunk *pamt_arena_walk(unsigned long stamp,
						unsigned long *budget,
						long *cached, bool resched,
						bool take)
{
	struct pamt_arena_chunk *c;
	unsigned long flags;
	bool idle;

	while (*budget) {
		(*budget)--;
		if (resched)
			cond_resched();
		pamt_arena_lock(&flags);
		c = pamt_arena_next_sparse(stamp);
		idle = c && pamt_arena_chunk_idle(c, cached);
		if (idle && take) {
			pamt_arena_unlink(c);
			list_add(&c->list, &pamt_arena.off);
			c->off = true;
		}
		spin_unlock_irqrestore(&pamt_arena.lock, flags);
		if (!c || idle)
			return c;
	}
	return NULL;
}

/* REMOVE the slots of isolated chunk @c; returns the pages given back. */
static unsigned long pamt_arena_empty(struct pamt_arena_chunk *c,
				      unsigned int *fails, bool cap)
{
	unsigned int i = 0;
	unsigned long flags;
	bool release;
	u32 owner;
	int ret;

	for (;; i++) {
		pamt_arena_lock(&flags);
		i = find_next_zero_bit(c->free, PAMT_ARENA_PAIRS, i);
		owner = i < PAMT_ARENA_PAIRS ? READ_ONCE(c->owner[i]) : 0;
		spin_unlock_irqrestore(&pamt_arena.lock, flags);
		/* Done, or a pair not in a slot: it stays out. */
		if (!owner)
			break;
		ret = pamt_shrink_reclaim_slot(owner - 1);
		if (ret == 1 && cap) {
			pamt_stat_inc(CAP);
		} else if (ret == 1) {
			pamt_stat_inc(SHRINK);
		} else {
			/* In use again, or BUSY: the chunk stays. */
			*fails += ret != -EAGAIN;
			break;
		}
	}
	pamt_arena_lock(&flags);
	release = pamt_arena_put_on(c);
	spin_unlock_irqrestore(&pamt_arena.lock, flags);
	if (!release)
		return 0;
	pamt_arena_release(c);
	return PAMT_ARENA_PAGES;
}

/**
 * pamt_arena_shrink() - give memory back chunk by chunk, sparsest first
 * @nr: pairs' worth of memory wanted
 * @cap: for the idle cap's worker: magazines kept, every chunk looked at,
 *	cond_resched() between them, REMOVEs counted as the cap's
 *
 * Context: never sleeps, but with @cap (process context).
 *
 * Return: pairs' worth of memory that went back to the page allocator.
 */
unsigned long pamt_arena_shrink(unsigned long nr, bool cap)
{
	unsigned long pages = 0, pass, budget;
	unsigned int n, fails = 0;
	struct tdx_pamt_pair batch[16];
	struct pamt_arena_chunk *c;
	long cached = 0;

	/* A free pair out of its chunk keeps the chunk: bring them home. */
	while (!cap && (n = pamt_mag_take_free(batch, ARRAY_SIZE(batch))))
		pages += pamt_pair_free_bulk(batch, n);
	pages += pamt_arena_unhome(false);
	pass = pamt_arena_walk_start(cap, &budget);
	while (pages / 2 < nr && fails < PAMT_ARENA_MAX_FAILS) {
		c = pamt_arena_walk(pass, &budget, &cached, cap, true);
		if (!c)
			break;
		pages += pamt_arena_empty(c, &fails, cap);
	}
	return pages / 2;
}

/**
 * pamt_arena_reclaimable() - whether pamt_arena_shrink() could give a
 *	chunk back, every chunk looked at
 *
 * For the idle cap's worker, which drains the magazines only if so.  The
 * shrinker's count does not call this: it takes the arena lock per chunk.
 *
 * Context: process context; sleeps.
 */
bool pamt_arena_reclaimable(void)
{
	long cached = pamt_cached_pairs();
	unsigned long flags, stamp, budget;
	struct pamt_arena_home *h;
	bool found = false;

	might_sleep();
	stamp = pamt_arena_walk_start(true, &budget);
	for (h = pamt_arena.home; h < pamt_arena.home + PAMT_ARENA_HOMES; h++) {
		pamt_arena_lock(&flags);
		found = h->chunk && pamt_arena_chunk_idle(h->chunk, &cached);
		spin_unlock_irqrestore(&pamt_arena.lock, flags);
		if (found)
			return true;
	}
	return !!pamt_arena_walk(stamp, &budget, &cached, true, false);
}

/* Free pairs in chunks; racy. */
unsigned long pamt_arena_free_pairs(void)
{
	return READ_ONCE(pamt_arena.nr_free);
}

/* Fills in the arena's gauges of @vals. */
void pamt_arena_read_stats(u64 *vals)
{
	vals[TDX_PAMT_STAT_ARENA_CHUNKS] = READ_ONCE(pamt_arena.nr_chunks);
	vals[TDX_PAMT_STAT_ARENA_FREE] = READ_ONCE(pamt_arena.nr_free);
}

/* An arena with no chunk. */
void pamt_arena_init(void)
{
	unsigned int n;

	memset(&pamt_arena, 0, sizeof(pamt_arena));
	spin_lock_init(&pamt_arena.lock);
	for (n = 0; n < PAMT_ARENA_PAIRS; n++)
		INIT_LIST_HEAD(&pamt_arena.bucket[n]);
	INIT_LIST_HEAD(&pamt_arena.off);
}

/* Pairs still out at exit stay, as pairs of two order-0 pages. */
static void pamt_arena_split(struct pamt_arena_chunk *c)
{
	struct page *page = pfn_to_page(c->base_pfn);
	unsigned long i;

	split_page(page, PAMT_ARENA_ORDER);
	for (i = 0; i < PAMT_ARENA_PAIRS; i++) {
		set_page_private(pfn_to_page(c->base_pfn + 2 * i), 0);
		if (!test_bit(i, c->free))
			continue;
		__free_page(pfn_to_page(c->base_pfn + 2 * i));
		__free_page(pfn_to_page(c->base_pfn + 2 * i + 1));
		pamt_stat_add(PAGE_FREE, 2);
	}
	kfree(c);
}

/**
 * pamt_arena_exit() - give back every chunk; split those with pairs out
 *
 * Context: process context, with no other user of the cache left.
 */
void pamt_arena_exit(void)
{
	struct pamt_arena_chunk *c, *tmp;
	unsigned long flags, split = 0;
	unsigned int n;
	LIST_HEAD(victims);

	might_sleep();
	pamt_arena_lock(&flags);
	for (n = 0; n < PAMT_ARENA_PAIRS; n++)
		list_splice_init(&pamt_arena.bucket[n], &victims);
	list_splice_init(&pamt_arena.off, &victims);
	memset(pamt_arena.home, 0, sizeof(pamt_arena.home));
	bitmap_zero(pamt_arena.nonempty, PAMT_ARENA_PAIRS);
	WRITE_ONCE(pamt_arena.nr_chunks, 0);
	WRITE_ONCE(pamt_arena.nr_free, 0);
	spin_unlock_irqrestore(&pamt_arena.lock, flags);
	list_for_each_entry_safe(c, tmp, &victims, list) {
		/* A home whose pairs all came back. */
		if (c->nr_free == PAMT_ARENA_PAIRS) {
			pamt_arena_release(c);
			continue;
		}
		pamt_arena_split(c);
		split++;
	}
	if (split)
		pr_warn("tdx-pamt: %lu arena chunks split at exit: pairs still out\n",
			split);
}

#if IS_ENABLED(CONFIG_INTEL_TDX_PAMT_KUNIT_TEST)
#include "tests/pamt_arena_check.c"
#endif
