// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated machine behind custom.h: CPUs, locks with an order check,
 * physical pages with pfns, and allocators that fail on demand.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "shim.h"
#include "sim.h"

unsigned int nr_cpu_ids = 4;
__thread unsigned int pamt_sim_cpu;
__thread struct task_struct pamt_sim_task;
__thread unsigned long pamt_sim_pcpu_off;
__thread int pamt_sim_atomic_depth;
__thread int pamt_sim_raw_depth;
__thread int pamt_sim_irq_depth;
__thread int pamt_sim_irqoff_seamcalls;
__thread int pamt_sim_in_seamcall;
__thread struct obj_cgroup *pamt_sim_objcg;
int pamt_sim_quiet;
long pamt_sim_mb_word;
atomic_long_t pamt_sim_warnings;

#define PAMT_SIM_MAX_HELD	8
static __thread struct pamt_sim_lock *held[PAMT_SIM_MAX_HELD];
static __thread int nr_held;

void pamt_sim_fatal(const char *what, const char *file, int line)
{
	fprintf(stderr, "pamt-sim: FATAL: %s at %s:%d (cpu %u, depth %d)\n",
		what, file, line, pamt_sim_cpu, pamt_sim_atomic_depth);
	abort();
}

void pamt_sim_set_cpu(unsigned int cpu)
{
	if (cpu >= nr_cpu_ids)
		pamt_sim_fatal("cpu out of range", __FILE__, __LINE__);
	pamt_sim_cpu = cpu;
	pamt_sim_pcpu_off = (unsigned long)cpu * PAMT_SIM_PCPU_UNIT;
}

void pamt_sim_set_nr_cpus(unsigned int nr)
{
	if (!nr || nr > PAMT_SIM_MAX_CPUS)
		pamt_sim_fatal("bad number of cpus", __FILE__, __LINE__);
	nr_cpu_ids = nr;
}

static void pamt_sim_relax(void);

void pamt_sim_cpu_relax(const char *file, int line)
{
	if (pamt_sim_irq_depth)
		pamt_sim_fatal("spinning with IRQs off", file, line);
	pamt_sim_relax();
}

/*
 * ---- IRQs-off and preemption-off spans ----
 *
 * One timer per kind and thread: the section's start, and the SEAMCALLs
 * inside it, in thread CPU time.
 */
struct pamt_sim_span {
	u64 start, seamcall_start, seamcall_ns, lockwait_ns;
	int seamcalls;
};

struct pamt_sim_spans {
	pthread_mutex_t lock;
	struct pamt_sim_irqoff stats;
};

int pamt_sim_irqoff_timing;
int pamt_sim_preemptoff_timing;
__thread int pamt_sim_softirq;
static __thread struct pamt_sim_span irqoff_span, preemptoff_span;
static struct pamt_sim_spans irqoff_spans = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static struct pamt_sim_spans preemptoff_spans = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static u64 pamt_sim_thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void pamt_sim_span_begin(struct pamt_sim_span *t)
{
	t->seamcall_ns = 0;
	t->seamcall_start = 0;
	t->lockwait_ns = 0;
	t->seamcalls = 0;
	t->start = pamt_sim_thread_ns();
}

static void pamt_sim_span_end(struct pamt_sim_span *t,
			      struct pamt_sim_spans *all)
{
	struct pamt_sim_irqoff *st = &all->stats;
	u64 span, other;

	/* Timing was switched on inside this section: nothing to report. */
	if (!t->start)
		return;
	span = pamt_sim_thread_ns() - t->start;
	t->start = 0;
	other = span > t->seamcall_ns ? span - t->seamcall_ns : 0;
	pthread_mutex_lock(&all->lock);
	st->sections++;
	if (t->seamcalls > 1)
		st->multi_seamcall++;
	if (span > st->max_ns) {
		st->max_ns = span;
		st->max_span_seamcall_ns = t->seamcall_ns;
	}
	if (t->seamcall_ns > st->max_seamcall_ns)
		st->max_seamcall_ns = t->seamcall_ns;
	if (other > st->max_other_ns)
		st->max_other_ns = other;
	if (t->lockwait_ns > st->max_lockwait_ns)
		st->max_lockwait_ns = t->lockwait_ns;
	st->nowait_us[min((span - min(span, t->lockwait_ns)) / NSEC_PER_USEC,
			  (u64)PAMT_SIM_IRQOFF_BUCKETS - 1)]++;
	st->span_us[min(span / NSEC_PER_USEC,
			(u64)PAMT_SIM_IRQOFF_BUCKETS - 1)]++;
	st->other_us[min(other / NSEC_PER_USEC,
			 (u64)PAMT_SIM_IRQOFF_BUCKETS - 1)]++;
	pthread_mutex_unlock(&all->lock);
}

static void pamt_sim_span_seamcall(struct pamt_sim_span *t, bool enter)
{
	if (!t->start)
		return;
	if (enter) {
		t->seamcalls++;
		t->seamcall_start = pamt_sim_thread_ns();
	} else if (t->seamcall_start) {
		t->seamcall_ns += pamt_sim_thread_ns() - t->seamcall_start;
		t->seamcall_start = 0;
	}
}

void pamt_sim_irqoff_begin(void)
{
	pamt_sim_span_begin(&irqoff_span);
}

void pamt_sim_irqoff_end(void)
{
	pamt_sim_span_end(&irqoff_span, &irqoff_spans);
}

void pamt_sim_preemptoff_begin(void)
{
	pamt_sim_span_begin(&preemptoff_span);
}

void pamt_sim_preemptoff_end(void)
{
	pamt_sim_span_end(&preemptoff_span, &preemptoff_spans);
}

/*
 * The upper edge, in ns, of the 1 us bucket that holds the given
 * percentile (in tenths of a per mille: 9990 is p99.9) of @n sections.
 */
u64 pamt_sim_irqoff_percentile(const unsigned long *hist, unsigned long n,
			       unsigned int tenths)
{
	unsigned long want = (n * tenths + 9999) / 10000, seen = 0;
	unsigned int i;

	for (i = 0; i < PAMT_SIM_IRQOFF_BUCKETS; i++) {
		seen += hist[i];
		if (seen >= want)
			return (u64)(i + 1) * NSEC_PER_USEC;
	}
	return ~0ULL;
}

static void pamt_sim_spans_start(struct pamt_sim_spans *all, int *on)
{
	pthread_mutex_lock(&all->lock);
	memset(&all->stats, 0, sizeof(all->stats));
	pthread_mutex_unlock(&all->lock);
	__atomic_store_n(on, 1, __ATOMIC_SEQ_CST);
}

static void pamt_sim_spans_stop(struct pamt_sim_spans *all, int *on,
				struct pamt_sim_irqoff *out)
{
	__atomic_store_n(on, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&all->lock);
	*out = all->stats;
	pthread_mutex_unlock(&all->lock);
}

void pamt_sim_irqoff_timing_start(void)
{
	pamt_sim_spans_start(&irqoff_spans, &pamt_sim_irqoff_timing);
}

void pamt_sim_irqoff_timing_stop(struct pamt_sim_irqoff *out)
{
	pamt_sim_spans_stop(&irqoff_spans, &pamt_sim_irqoff_timing, out);
}

void pamt_sim_preemptoff_timing_start(void)
{
	pamt_sim_spans_start(&preemptoff_spans, &pamt_sim_preemptoff_timing);
}

void pamt_sim_preemptoff_timing_stop(struct pamt_sim_irqoff *out)
{
	pamt_sim_spans_stop(&preemptoff_spans, &pamt_sim_preemptoff_timing,
			    out);
}

/* One SEAMCALL: IRQs off around it, and no other in the same section. */
void pamt_sim_seamcall_enter(void)
{
	if (!pamt_sim_irq_depth)
		pamt_sim_fatal("SEAMCALL with IRQs on", __FILE__, __LINE__);
	if (++pamt_sim_irqoff_seamcalls > 1)
		pamt_sim_fatal("IRQs off across more than one SEAMCALL",
			       __FILE__, __LINE__);
	pamt_sim_in_seamcall = 1;
	pamt_sim_span_seamcall(&irqoff_span, true);
	pamt_sim_span_seamcall(&preemptoff_span, true);
}

void pamt_sim_seamcall_exit(void)
{
	pamt_sim_in_seamcall = 0;
	pamt_sim_span_seamcall(&irqoff_span, false);
	pamt_sim_span_seamcall(&preemptoff_span, false);
}

static void pamt_sim_relax(void)
{
	static __thread unsigned int spins;

	__builtin_ia32_pause();
	/* A userspace lock holder can be preempted; let it run. */
	if (!(++spins % 64))
		sched_yield();
}

/* ---- locks ---- */
static unsigned long pamt_sim_self(void)
{
	return (unsigned long)pthread_self();
}

void pamt_sim_lock_init(struct pamt_sim_lock *l, int rank, const char *name)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
	l->rank = rank;
	l->owner = 0;
	l->name = name;
}

/* Lockdep in miniature: locks nest in rising rank, and not too deep. */
static void pamt_sim_lock_check(struct pamt_sim_lock *l, const char *file,
				int line)
{
	if (nr_held && held[nr_held - 1]->rank >= l->rank) {
		fprintf(stderr, "pamt-sim: lock order: %s (rank %d) taken while holding ",
			l->name, l->rank);
		fprintf(stderr, "%s (rank %d)\n", held[nr_held - 1]->name,
			held[nr_held - 1]->rank);
		pamt_sim_fatal("possible circular locking dependency", file, line);
	}
	if (nr_held == PAMT_SIM_MAX_HELD)
		pamt_sim_fatal("too many locks held", file, line);
}

void pamt_sim_lock_acquire(struct pamt_sim_lock *l, const char *file, int line)
{
	u64 t0 = preemptoff_span.start ? pamt_sim_thread_ns() : 0;

	pamt_sim_lock_check(l, file, line);
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		pamt_sim_relax();
	/* A wait inside a timed preemption-off section, counted apart. */
	if (t0 && preemptoff_span.start)
		preemptoff_span.lockwait_ns += pamt_sim_thread_ns() - t0;
	__atomic_store_n(&l->owner, pamt_sim_self(), __ATOMIC_RELAXED);
	held[nr_held++] = l;
}

bool pamt_sim_lock_try(struct pamt_sim_lock *l, const char *file, int line)
{
	if (nr_held && held[nr_held - 1]->rank >= l->rank)
		pamt_sim_fatal("trylock out of order", file, line);
	if (nr_held == PAMT_SIM_MAX_HELD)
		pamt_sim_fatal("too many locks held", file, line);
	if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&l->owner, pamt_sim_self(), __ATOMIC_RELAXED);
	held[nr_held++] = l;
	return true;
}

bool pamt_sim_lock_is_locked(struct pamt_sim_lock *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED);
}

void pamt_sim_lock_release(struct pamt_sim_lock *l, const char *file, int line)
{
	if (!nr_held || held[nr_held - 1] != l)
		pamt_sim_fatal("unlock of a lock not last taken", file, line);
	nr_held--;
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

bool pamt_sim_lock_held(struct pamt_sim_lock *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&l->owner, __ATOMIC_RELAXED) == pamt_sim_self();
}

int pamt_sim_locks_held(void)
{
	return nr_held;
}

/* ---- per-CPU ---- */
void *pamt_sim_alloc_percpu(size_t size)
{
	void *p;

	if (size > PAMT_SIM_PCPU_UNIT)
		pamt_sim_fatal("per-CPU object too large", __FILE__, __LINE__);
	if (pamt_sim_should_fail(&pamt_sim_fail_kmalloc, GFP_KERNEL))
		return NULL;
	p = aligned_alloc(64, (size_t)PAMT_SIM_MAX_CPUS * PAMT_SIM_PCPU_UNIT);
	if (p)
		memset(p, 0, (size_t)PAMT_SIM_MAX_CPUS * PAMT_SIM_PCPU_UNIT);
	return p;
}

/* ---- failure injection ---- */
struct pamt_sim_fail pamt_sim_fail_page;
struct pamt_sim_fail pamt_sim_fail_order[PAMT_SIM_MAX_ORDER + 1];
struct pamt_sim_fail pamt_sim_fail_kmalloc;

void pamt_sim_fail_set(struct pamt_sim_fail *f, long after, unsigned int rate_ppm)
{
	__atomic_store_n(&f->after, after, __ATOMIC_RELAXED);
	__atomic_store_n(&f->rate_ppm, rate_ppm, __ATOMIC_RELAXED);
	__atomic_store_n(&f->nonblocking_only, false, __ATOMIC_RELAXED);
	__atomic_store_n(&f->noretry_only, false, __ATOMIC_RELAXED);
}

bool pamt_sim_should_fail(struct pamt_sim_fail *f, gfp_t gfp)
{
	long after = __atomic_load_n(&f->after, __ATOMIC_RELAXED);
	unsigned int rate = __atomic_load_n(&f->rate_ppm, __ATOMIC_RELAXED);

	if (__atomic_load_n(&f->nonblocking_only, __ATOMIC_RELAXED) &&
	    gfpflags_allow_blocking(gfp))
		return false;
	if (__atomic_load_n(&f->noretry_only, __ATOMIC_RELAXED) &&
	    !(gfp & __GFP_NORETRY) && gfpflags_allow_blocking(gfp))
		return false;
	if (after >= 0) {
		/* Count down to 0, then stay there: every call fails. */
		while (after > 0 &&
		       !__atomic_compare_exchange_n(&f->after, &after, after - 1,
						    false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
			;
		if (after == 0) {
			__atomic_fetch_add(&f->failed, 1, __ATOMIC_RELAXED);
			return true;
		}
	}
	if (rate && get_random_u32_below(1000000) < rate) {
		__atomic_fetch_add(&f->failed, 1, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/* Bytes kmalloc() was asked for, ever: tests measure a call's by difference. */
unsigned long pamt_sim_kmalloc_bytes;

void *pamt_sim_kmalloc(size_t size, gfp_t gfp, bool zero)
{
	might_alloc(gfp);
	pamt_sim_rt_sleeps("kmalloc()", __FILE__, __LINE__);
	if (pamt_sim_should_fail(&pamt_sim_fail_kmalloc, gfp))
		return NULL;
	__atomic_fetch_add(&pamt_sim_kmalloc_bytes, size, __ATOMIC_RELAXED);
	return zero ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
}

struct pamt_sim_node_stats pamt_sim_node_stats[PAMT_SIM_MAX_CPUS];

long pamt_sim_node_stat(int nid, enum node_stat_item item)
{
	long sum = 0;
	int cpu;

	for (cpu = 0; cpu < PAMT_SIM_MAX_CPUS; cpu++)
		sum += __atomic_load_n(&pamt_sim_node_stats[cpu].v[nid][item],
				       __ATOMIC_RELAXED);
	return sum;
}

/* ---- simulated physical memory ---- */
/*
 * A buddy allocator over the simulated physical memory, as the kernel's
 * is seen from outside: blocks of 2^order pages (order 0 to
 * PAMT_SIM_MAX_ORDER, 2M), naturally aligned in pfn space, split on demand
 * (the low half is handed out, the high half goes back on its free list),
 * merged with their buddy on free up to 2M.  Free lists are LIFO: the block
 * freed last is handed out first.  A fresh allocator hands out ascending
 * pfns.  Every page of an allocated block is marked allocated; the block's
 * order is kept on its first page, so a free with the wrong order or of a
 * tail page is caught.  Free blocks are grouped by the migratetype of their
 * 2M block, as the kernel's are by pageblock: see take_free().
 */
struct page *pamt_sim_pages;
unsigned long pamt_sim_base_pfn;
unsigned long pamt_sim_nr_pages;

#define NO_ORDER	((signed char)-1)
#define NO_PAGE		(~0UL)

static struct sim_block {
	unsigned long next, prev;	/* free list links, page indices */
	signed char free_order;		/* order if a free block starts here */
	signed char alloc_order;	/* order if an allocated block starts here */
	signed char list_mt;		/* the free list it is on, if free */
} *blocks;
static unsigned char *block_mt;		/* migratetype of each 2M block */
static unsigned long free_head[PAMT_SIM_MAX_ORDER + 1][PAMT_SIM_NR_MT];
static unsigned long nr_free_blocks[PAMT_SIM_MAX_ORDER + 1];
static unsigned long nr_free;		/* pages */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long idx_pfn(unsigned long idx)
{
	return pamt_sim_base_pfn + idx;
}

/* The 2M block of page @idx, counted from the first (partial) one. */
static unsigned long block_of(unsigned long idx)
{
	return (idx_pfn(idx) >> PAMT_SIM_MAX_ORDER) -
	       (pamt_sim_base_pfn >> PAMT_SIM_MAX_ORDER);
}

static void free_list_add(unsigned long idx, int order)
{
	int mt = block_mt[block_of(idx)];
	unsigned long head = free_head[order][mt];

	blocks[idx].free_order = order;
	blocks[idx].list_mt = mt;
	blocks[idx].prev = NO_PAGE;
	blocks[idx].next = head;
	if (head != NO_PAGE)
		blocks[head].prev = idx;
	free_head[order][mt] = idx;
	nr_free_blocks[order]++;
	nr_free += 1UL << order;
}

static void free_list_del(unsigned long idx)
{
	struct sim_block *b = &blocks[idx];
	int order = b->free_order;

	if (b->prev != NO_PAGE)
		blocks[b->prev].next = b->next;
	else
		free_head[order][b->list_mt] = b->next;
	if (b->next != NO_PAGE)
		blocks[b->next].prev = b->prev;
	b->free_order = NO_ORDER;
	nr_free_blocks[order]--;
	nr_free -= 1UL << order;
}

/* The index of @idx's buddy at @order, or NO_PAGE outside the memory. */
static unsigned long buddy_of(unsigned long idx, int order)
{
	unsigned long pfn = idx_pfn(idx) ^ (1UL << order);

	if (pfn < pamt_sim_base_pfn ||
	    pfn + (1UL << order) > pamt_sim_base_pfn + pamt_sim_nr_pages)
		return NO_PAGE;
	return pfn - pamt_sim_base_pfn;
}

/* Mark the 2^@order pages at @idx allocated, as one block. */
static void mark_allocated(unsigned long idx, int order, const char *file,
			   int line)
{
	unsigned long i;

	for (i = idx; i < idx + (1UL << order); i++) {
		if (pamt_sim_pages[i].allocated)
			pamt_sim_fatal("free list holds an allocated page",
				       file, line);
		pamt_sim_pages[i].allocated = 1;
		blocks[i].alloc_order = NO_ORDER;
	}
	blocks[idx].alloc_order = order;
}

/* Give back the 2^@order pages at @idx, merging with free buddies. */
static void free_block(unsigned long idx, int order)
{
	unsigned long i, buddy;

	for (i = idx; i < idx + (1UL << order); i++) {
		pamt_sim_pages[i].allocated = 0;
		blocks[i].alloc_order = NO_ORDER;
	}
	while (order < PAMT_SIM_MAX_ORDER) {
		buddy = buddy_of(idx, order);
		if (buddy == NO_PAGE || blocks[buddy].free_order != order)
			break;
		free_list_del(buddy);
		idx = min(idx, buddy);
		order++;
	}
	free_list_add(idx, order);
}

int pamt_sim_mem_init(unsigned long base_pfn, unsigned long nr_pages)
{
	unsigned long i, pfn;
	int order, mt;

	pamt_sim_pages = calloc(nr_pages, sizeof(*pamt_sim_pages));
	blocks = malloc(nr_pages * sizeof(*blocks));
	/* Every 2M block starts MIGRATE_UNMOVABLE (0). */
	block_mt = calloc((nr_pages >> PAMT_SIM_MAX_ORDER) + 2, 1);
	if (!pamt_sim_pages || !blocks || !block_mt)
		return -ENOMEM;
	pamt_sim_base_pfn = base_pfn;
	pamt_sim_nr_pages = nr_pages;
	nr_free = 0;
	for (order = 0; order <= PAMT_SIM_MAX_ORDER; order++) {
		for (mt = 0; mt < PAMT_SIM_NR_MT; mt++)
			free_head[order][mt] = NO_PAGE;
		nr_free_blocks[order] = 0;
	}
	for (i = 0; i < nr_pages; i++) {
		blocks[i].free_order = NO_ORDER;
		blocks[i].alloc_order = NO_ORDER;
	}
	/*
	 * Largest aligned blocks that fit, added from the top down so that
	 * the lowest pfn sits first on every list.
	 */
	for (i = nr_pages; i > 0; ) {
		pfn = base_pfn + i;
		for (order = PAMT_SIM_MAX_ORDER; order > 0; order--)
			if (IS_ALIGNED(pfn, 1UL << order) && (1UL << order) <= i)
				break;
		i -= 1UL << order;
		free_list_add(i, order);
	}
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);
	pamt_sim_fail_set(&pamt_sim_fail_kmalloc, -1, 0);
	pamt_sim_fail_page.failed = 0;
	pamt_sim_fail_kmalloc.failed = 0;
	for (order = 0; order <= PAMT_SIM_MAX_ORDER; order++) {
		pamt_sim_fail_set(&pamt_sim_fail_order[order], -1, 0);
		pamt_sim_fail_order[order].failed = 0;
	}
	return 0;
}

void pamt_sim_mem_exit(void)
{
	pamt_sim_alloc_hook = NULL;
	free(pamt_sim_pages);
	free(blocks);
	free(block_mt);
	pamt_sim_pages = NULL;
	blocks = NULL;
	block_mt = NULL;
	pamt_sim_nr_pages = 0;
	nr_free = 0;
}

/* The migratetype of @page's 2M block, where the kernel would free it. */
int pamt_sim_page_mt(const struct page *page)
{
	return __atomic_load_n(&block_mt[block_of(page - pamt_sim_pages)],
			       __ATOMIC_RELAXED);
}

unsigned long pamt_sim_pages_in_use(void)
{
	unsigned long n;

	pthread_mutex_lock(&mem_lock);
	n = pamt_sim_nr_pages - nr_free;
	pthread_mutex_unlock(&mem_lock);
	return n;
}

unsigned long pamt_sim_free_blocks(unsigned int order)
{
	unsigned long n;

	if (order > PAMT_SIM_MAX_ORDER)
		return 0;
	pthread_mutex_lock(&mem_lock);
	n = nr_free_blocks[order];
	pthread_mutex_unlock(&mem_lock);
	return n;
}

bool pamt_sim_pfn_allocated(unsigned long pfn)
{
	if (pfn < pamt_sim_base_pfn || pfn - pamt_sim_base_pfn >= pamt_sim_nr_pages)
		return false;
	return __atomic_load_n(&pfn_to_page(pfn)->allocated, __ATOMIC_RELAXED);
}

/*
 * Whether the allocated page at @pfn was allocated with __GFP_ACCOUNT,
 * that is, charged to the allocating task's memcg in a kernel.
 */
bool pamt_sim_pfn_accounted(unsigned long pfn)
{
	if (!pamt_sim_pfn_allocated(pfn))
		return false;
	return __atomic_load_n(&pfn_to_page(pfn)->accounted, __ATOMIC_RELAXED);
}

void (*pamt_sim_alloc_hook)(unsigned int order);

/* page_alloc.c's fallbacks[]: the types to steal from, in order. */
static const int fallback_mt[PAMT_SIM_NR_MT][PAMT_SIM_NR_MT - 1] = {
	[MIGRATE_UNMOVABLE]   = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE },
	[MIGRATE_MOVABLE]     = { MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
	[MIGRATE_RECLAIMABLE] = { MIGRATE_UNMOVABLE,   MIGRATE_MOVABLE },
};

/* The free pages of 2M block @b; with @mt >= 0, moved to @mt's lists. */
static unsigned long block_free(unsigned long b, int mt)
{
	unsigned long first = (b + (pamt_sim_base_pfn >> PAMT_SIM_MAX_ORDER)) <<
			      PAMT_SIM_MAX_ORDER;
	unsigned long i = first < pamt_sim_base_pfn ? 0 : first - pamt_sim_base_pfn;
	unsigned long end = first + (1UL << PAMT_SIM_MAX_ORDER) - pamt_sim_base_pfn;
	unsigned long n = 0;
	int fo;

	for (end = min(end, pamt_sim_nr_pages); i < end; i++) {
		fo = blocks[i].free_order;
		if (fo == NO_ORDER)
			continue;
		n += 1UL << fo;
		if (mt >= 0) {
			free_list_del(i);
			free_list_add(i, fo);
		}
		i += (1UL << fo) - 1;
	}
	return n;
}

/*
 * A free block for 2^@order pages of type @mt at *@idx (NO_PAGE: none), and
 * its order.  As __rmqueue_fallback() less its count of pages already of
 * the type: @mt's lists, else another type's largest block whose 2M block
 * is half free, claiming it for @mt, else its smallest, not claimed.
 */
static unsigned int take_free(unsigned int order, int mt, unsigned long *idx)
{
	unsigned long steal = NO_PAGE, b;
	unsigned int o, so = 0;
	int f;

	for (o = order; o <= PAMT_SIM_MAX_ORDER; o++) {
		*idx = free_head[o][mt];
		if (*idx != NO_PAGE)
			return o;
	}
	for (o = PAMT_SIM_MAX_ORDER + 1; o-- > order; ) {
		for (f = 0; f < PAMT_SIM_NR_MT - 1; f++) {
			*idx = free_head[o][fallback_mt[mt][f]];
			if (*idx == NO_PAGE)
				continue;
			b = block_of(*idx);
			if (block_free(b, -1) >= 1UL << (PAMT_SIM_MAX_ORDER - 1)) {
				__atomic_store_n(&block_mt[b], mt, __ATOMIC_RELAXED);
				block_free(b, mt);
				return o;
			}
			steal = *idx;
			so = o;
		}
	}
	*idx = steal;
	return so;
}

struct page *pamt_sim_alloc_pages(gfp_t gfp, unsigned int order,
				  const char *file, int line)
{
	void (*hook)(unsigned int order);
	unsigned long idx = NO_PAGE;
	unsigned int o;

	hook = __atomic_load_n(&pamt_sim_alloc_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook(order);
	if (order > PAMT_SIM_MAX_ORDER)
		pamt_sim_fatal("page allocation above the largest order",
			       file, line);
	if (gfpflags_allow_blocking(gfp) && pamt_sim_atomic_depth)
		pamt_sim_fatal("sleeping allocation in atomic context", file, line);
	pamt_sim_rt_sleeps("page allocation", file, line);
	if (pamt_sim_should_fail(&pamt_sim_fail_page, gfp) ||
	    pamt_sim_should_fail(&pamt_sim_fail_order[order], gfp))
		return NULL;
	pthread_mutex_lock(&mem_lock);
	o = take_free(order, gfp_migratetype(gfp), &idx);
	if (idx != NO_PAGE) {
		free_list_del(idx);
		/* Split: keep the low half, give back the high half. */
		while (o > order) {
			o--;
			free_list_add(idx + (1UL << o), o);
		}
		mark_allocated(idx, order, file, line);
		for (o = 0; o < 1U << order; o++) {
			pamt_sim_pages[idx + o].accounted = !!(gfp & __GFP_ACCOUNT);
			pamt_sim_pages[idx + o].alloc_objcg = pamt_sim_objcg;
		}
	}
	pthread_mutex_unlock(&mem_lock);
	return idx == NO_PAGE ? NULL : &pamt_sim_pages[idx];
}

struct page *pamt_sim_alloc_page(gfp_t gfp, const char *file, int line)
{
	return pamt_sim_alloc_pages(gfp, 0, file, line);
}

/*
 * Take a specific page, if free; for tests and the benchmark's pool.  The
 * free block that holds it is split down to the page.
 */
struct page *pamt_sim_alloc_pfn(unsigned long pfn)
{
	unsigned long idx = pfn - pamt_sim_base_pfn, head = NO_PAGE;
	int order;

	if (pfn < pamt_sim_base_pfn || idx >= pamt_sim_nr_pages)
		pamt_sim_fatal("pfn outside simulated memory", __FILE__, __LINE__);
	pthread_mutex_lock(&mem_lock);
	if (pamt_sim_pages[idx].allocated) {
		pthread_mutex_unlock(&mem_lock);
		return NULL;
	}
	for (order = 0; order <= PAMT_SIM_MAX_ORDER; order++) {
		unsigned long hpfn = pfn & ~((1UL << order) - 1);

		if (hpfn < pamt_sim_base_pfn) {
			order = PAMT_SIM_MAX_ORDER + 1;
			break;
		}
		head = hpfn - pamt_sim_base_pfn;
		if (blocks[head].free_order == order)
			break;
	}
	if (order > PAMT_SIM_MAX_ORDER)
		pamt_sim_fatal("free page in no free block", __FILE__, __LINE__);
	free_list_del(head);
	while (order > 0) {
		order--;
		/* Give back the half that does not hold @pfn. */
		if (idx >= head + (1UL << order)) {
			free_list_add(head, order);
			head += 1UL << order;
		} else {
			free_list_add(head + (1UL << order), order);
		}
	}
	mark_allocated(idx, 0, __FILE__, __LINE__);
	pamt_sim_pages[idx].accounted = 0;
	pamt_sim_pages[idx].alloc_objcg = NULL;
	pthread_mutex_unlock(&mem_lock);
	return &pamt_sim_pages[idx];
}

void pamt_sim_free_pages(struct page *page, unsigned int order,
			 const char *file, int line)
{
	unsigned long idx = page - pamt_sim_pages, i;

	pamt_sim_rt_sleeps("page free", file, line);
	if (page < pamt_sim_pages || page >= pamt_sim_pages + pamt_sim_nr_pages)
		pamt_sim_fatal("free of a page outside simulated memory", file, line);
	pthread_mutex_lock(&mem_lock);
	if (!page->allocated) {
		pthread_mutex_unlock(&mem_lock);
		pamt_sim_fatal("double free of a page", file, line);
	}
	if (order > PAMT_SIM_MAX_ORDER || blocks[idx].alloc_order != (int)order) {
		pthread_mutex_unlock(&mem_lock);
		pamt_sim_fatal("free with an order the block was not allocated with",
			       file, line);
	}
	/* As the kernel's check of tail pages; here of every page. */
	for (i = idx; i < idx + (1UL << order); i++) {
		if (pamt_sim_pages[i].private) {
			pthread_mutex_unlock(&mem_lock);
			pamt_sim_fatal("free of a page with page_private() set",
				       file, line);
		}
		if (i > idx && pamt_sim_pages[i].objcg) {
			pthread_mutex_unlock(&mem_lock);
			pamt_sim_fatal("free of a tail page still charged",
				       file, line);
		}
	}
	/* The allocator uncharges the first page, for the whole block. */
	memcg_kmem_uncharge_page(page, order);
	free_block(idx, order);
	pthread_mutex_unlock(&mem_lock);
}

void pamt_sim_free_page(struct page *page, const char *file, int line)
{
	pamt_sim_free_pages(page, 0, file, line);
}

/* split_page(): a block of 2^@order pages becomes 2^@order single pages. */
void pamt_sim_split_page(struct page *page, unsigned int order,
			 const char *file, int line)
{
	unsigned long idx = page - pamt_sim_pages, i;

	pthread_mutex_lock(&mem_lock);
	if (page < pamt_sim_pages || page >= pamt_sim_pages + pamt_sim_nr_pages ||
	    !page->allocated || blocks[idx].alloc_order != (int)order) {
		pthread_mutex_unlock(&mem_lock);
		pamt_sim_fatal("split_page() of a block not allocated with that order",
			       file, line);
	}
	for (i = idx; i < idx + (1UL << order); i++)
		blocks[i].alloc_order = 0;
	pthread_mutex_unlock(&mem_lock);
}

/* ---- time and randomness ---- */
u64 ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

void (*pamt_sim_delay_hook)(void);
void (*pamt_sim_add_return_hook)(void);

/* The hook is cleared before it runs: the interrupt's work adds too. */
long pamt_sim_add_return(long *p, long n)
{
	long r = __atomic_add_fetch(p, n, __ATOMIC_RELAXED);
	void (*hook)(void) = pamt_sim_add_return_hook;

	if (hook) {
		pamt_sim_add_return_hook = NULL;
		hook();
	}
	return r;
}

void ndelay(unsigned long ns)
{
	void (*hook)(void) = pamt_sim_delay_hook;
	u64 end = ktime_get_ns() + ns;

	/* Only a SEAMCALL (the fake module's latency) may take time there. */
	if (pamt_sim_irq_depth && !pamt_sim_in_seamcall)
		pamt_sim_fatal("delay with IRQs off", __FILE__, __LINE__);
	if (hook && !pamt_sim_in_seamcall)
		hook();

	while (ktime_get_ns() < end)
		__builtin_ia32_pause();
}

static u64 rng_seed = 0x9e3779b97f4a7c15ULL;
static __thread u64 rng_state;

void pamt_sim_seed(u64 seed)
{
	rng_seed = seed ? seed : 1;
	rng_state = 0;
}

u32 get_random_u32(void)
{
	u64 x = rng_state;

	/* A local lock and base_crng's spinlock_t in the kernel. */
	pamt_sim_rt_sleeps("the random number generator", __FILE__, __LINE__);

	if (!x) {
		static unsigned long threads;

		x = rng_seed ^ (0x2545F4914F6CDD1DULL *
				(__atomic_add_fetch(&threads, 1, __ATOMIC_RELAXED)));
		if (!x)
			x = 1;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return (u32)(x >> 32);
}

/* ---- the platform glue of pamt_internal.h ---- */
/*
 * The kernel queues a work item; here the test runs pamt_shrink_deferred()
 * itself when it wants the worker to have run (run_deferred()).
 */
atomic_long_t pamt_sim_deferred;

void pamt_platform_defer(void)
{
	atomic_long_inc(&pamt_sim_deferred);
}

void pamt_platform_defer_sync(void)
{
	might_sleep();
}
