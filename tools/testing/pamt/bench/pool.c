// SPDX-License-Identifier: GPL-2.0
/*
 * The host memory that TDs fault in, in one of two modes.
 *
 * Shared (the default): TD pages come from the shim's buddy allocator, the
 * same one that hands out control pages and every strategy's pair pages,
 * one page at a time, as guest_memfd takes order-0 pages on a real host.
 * Pair pages then land among TD pages, split 2M blocks and stop the TD
 * from mapping those blocks at 2M (BENCHMARKS.md, "Shared memory").  A
 * share @frag_pct of the pages is instead taken at a random free pfn:
 * scattered memory.
 *
 * Split (--split-pool): at start-up the pool takes a region of the
 * simulated memory out of the allocator (a fresh allocator hands out
 * ascending pfns, so the first nr_pages allocations are exactly the
 * region), so that pair pages, which come from alloc_page(), never land on
 * a TD page.  Free pages sit on a LIFO stack, lowest pfn on top when
 * fresh.  A vCPU grabs @run_pages pages from the top at once and hands
 * them out one by one; on a fresh pool a grab is a physically contiguous,
 * 2M-aligned run when @run_pages is 512.  A share @frag_pct of the pages
 * is instead taken from a random place in the stack.  Freed pages go back
 * on top, so a TD booted after a teardown reuses the most recently freed
 * pages first, as a real host's allocator tends to.
 */
#include "bench.h"
#include "report.h"

static struct {
	bool shared;
	unsigned long base_pfn;
	unsigned long nr_pages;
	u32 *stack;
	unsigned long nr_free;
	unsigned int run_pages;
	unsigned int frag_pct;
	struct bench_spin lock;
} pool;

int pool_init(unsigned long base_pfn, unsigned long nr_pages,
	      unsigned int run_pages, unsigned int frag_pct)
{
	unsigned long i;
	struct page *p;

	pool.stack = malloc(nr_pages * sizeof(*pool.stack));
	if (!pool.stack)
		return -ENOMEM;
	for (i = 0; i < nr_pages; i++) {
		p = alloc_page(GFP_KERNEL);
		if (!p || page_to_pfn(p) != base_pfn + i) {
			fprintf(stderr, "pool: simulated memory is not fresh\n");
			return -EINVAL;
		}
		pool.stack[i] = nr_pages - 1 - i;
	}
	pool.base_pfn = base_pfn;
	pool.nr_pages = nr_pages;
	pool.nr_free = nr_pages;
	pool.run_pages = run_pages ? run_pages : 1;
	pool.frag_pct = frag_pct;
	bench_spin_init(&pool.lock);
	return 0;
}

/* Shared mode: TD pages straight from the allocator over [base, +nr). */
int pool_init_shared(unsigned long base_pfn, unsigned long nr_pages,
		     unsigned int frag_pct)
{
	pool.shared = true;
	pool.stack = NULL;
	pool.base_pfn = base_pfn;
	pool.nr_pages = nr_pages;
	pool.nr_free = 0;
	pool.run_pages = 1;
	pool.frag_pct = frag_pct;
	bench_spin_init(&pool.lock);
	return 0;
}

bool pool_is_shared(void)
{
	return pool.shared;
}

/* The pfns TD pages may come from: the pool, or all of host memory. */
void pool_td_region(unsigned long *start, unsigned long *end)
{
	*start = pool.base_pfn;
	*end = pool.base_pfn + pool.nr_pages;
}

/* The pages stay allocated in the shim; its memory is torn down whole. */
void pool_exit(void)
{
	free(pool.stack);
	pool.stack = NULL;
	pool.nr_free = 0;
	pool.shared = false;
}

/* Pages the pool holds out of the allocator (none when shared). */
unsigned long pool_nr_pages(void)
{
	return pool.shared ? 0 : pool.nr_pages;
}

unsigned long pool_free_pages(void)
{
	return pool.nr_free;
}

int pool_cursor_init(struct pool_cursor *c)
{
	c->nr = 0;
	c->cap = pool.run_pages;
	c->run = malloc(c->cap * sizeof(*c->run));
	return c->run ? 0 : -ENOMEM;
}

void pool_cursor_release(struct pool_cursor *c)
{
	if (pool.shared) {
		free(c->run);
		c->run = NULL;
		return;
	}
	bench_spin_lock(&pool.lock);
	/* Back in the order they came out. */
	while (c->nr)
		pool.stack[pool.nr_free++] = c->run[--c->nr];
	bench_spin_unlock(&pool.lock);
	free(c->run);
	c->run = NULL;
}

static void pool_oom(void)
{
	fprintf(stderr, "pool: out of TD memory; raise --host-gib\n");
	exit(3);
}

/* Shared mode: a random free page now and then, else the allocator's. */
static unsigned long pool_alloc_shared(u64 *rng)
{
	struct page *p = NULL;
	int tries;

	if (pool.frag_pct && bench_rng(rng) % 100 < pool.frag_pct)
		for (tries = 0; tries < 8 && !p; tries++)
			p = pamt_sim_alloc_pfn(pool.base_pfn +
					       bench_rng(rng) % pool.nr_pages);
	if (!p)
		p = alloc_page(GFP_KERNEL);
	if (!p)
		pool_oom();
	return page_to_pfn(p);
}

unsigned long pool_alloc(struct pool_cursor *c, u64 *rng)
{
	unsigned long i, n;
	u32 off;

	if (pool.shared)
		return pool_alloc_shared(rng);

	if (pool.frag_pct && bench_rng(rng) % 100 < pool.frag_pct) {
		bench_spin_lock(&pool.lock);
		if (!pool.nr_free)
			pool_oom();
		i = bench_rng(rng) % pool.nr_free;
		off = pool.stack[i];
		pool.stack[i] = pool.stack[--pool.nr_free];
		bench_spin_unlock(&pool.lock);
		return pool.base_pfn + off;
	}
	if (!c->nr) {
		bench_spin_lock(&pool.lock);
		n = pool.nr_free < c->cap ? pool.nr_free : c->cap;
		if (!n)
			pool_oom();
		/* run[n-1] is the top of the stack: it goes out first. */
		for (i = 0; i < n; i++)
			c->run[i] = pool.stack[pool.nr_free - n + i];
		pool.nr_free -= n;
		bench_spin_unlock(&pool.lock);
		c->nr = n;
	}
	return pool.base_pfn + c->run[--c->nr];
}

void pool_free_batch(const unsigned long *pfns, unsigned int nr)
{
	unsigned int i;

	if (pool.shared) {
		for (i = 0; i < nr; i++)
			__free_page(pfn_to_page(pfns[i]));
		return;
	}

	bench_spin_lock(&pool.lock);
	for (i = 0; i < nr; i++)
		pool.stack[pool.nr_free++] = pfns[i] - pool.base_pfn;
	bench_spin_unlock(&pool.lock);
}
