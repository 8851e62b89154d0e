// SPDX-License-Identifier: GPL-2.0
/*
 * The shim's simulated machine (shim/sim.c, included unchanged) in virtual
 * time.  The vt build compiles everything with -D__thread= (one OS thread
 * runs every virtual CPU), so sim.c's per-thread state is plain globals
 * here, saved and restored with each virtual CPU by vt_tls_save/restore().
 * The primitives that wait or take time are renamed on the way in and
 * replaced below by virtual-time versions: locks, cpu_relax(), ndelay(),
 * ktime_get_ns(), and the page allocator (charged per call).
 */
#include <pthread.h>
#include "shim.h"
#include "sim.h"
#include "vt.h"

#ifndef PAMT_VTIME
#error "vt/vsim.c is the virtual-time build of shim/sim.c"
#endif

/* A lock's owner is the virtual CPU, not the (single) OS thread. */
static inline pthread_t vt_pthread_self(void)
{
	return (pthread_t)(vt_self() + 1);
}

#define pthread_self			vt_pthread_self
#define pamt_sim_lock_acquire		host_pamt_sim_lock_acquire
#define pamt_sim_lock_try		host_pamt_sim_lock_try
#define pamt_sim_lock_release		host_pamt_sim_lock_release
#define pamt_sim_lock_is_locked		host_pamt_sim_lock_is_locked
#define pamt_sim_cpu_relax		host_pamt_sim_cpu_relax
#define ktime_get_ns			host_ktime_get_ns
#define ndelay				host_ndelay
#define pamt_sim_alloc_page		host_pamt_sim_alloc_page
#define pamt_sim_free_page		host_pamt_sim_free_page
#define pamt_sim_alloc_pages		host_pamt_sim_alloc_pages
#define pamt_sim_free_pages		host_pamt_sim_free_pages
#define pamt_sim_kmalloc		host_pamt_sim_kmalloc

#include "../shim/sim.c"

#undef pthread_self
#undef pamt_sim_lock_acquire
#undef pamt_sim_lock_try
#undef pamt_sim_lock_release
#undef pamt_sim_lock_is_locked
#undef pamt_sim_cpu_relax
#undef ktime_get_ns
#undef ndelay
#undef pamt_sim_alloc_page
#undef pamt_sim_free_page
#undef pamt_sim_alloc_pages
#undef pamt_sim_free_pages
#undef pamt_sim_kmalloc

/* ---- per-CPU state of the shims ---- */
struct vt_tls {
	unsigned int cpu;
	unsigned long pcpu_off;
	int atomic_depth, raw_depth, irq_depth, irqoff_seamcalls, in_seamcall;
	struct pamt_sim_lock *held[PAMT_SIM_MAX_HELD];
	int nr_held;
	u64 rng_state;
	int softirq;
	struct pamt_sim_span irqoff_span, preemptoff_span;
	struct obj_cgroup *objcg;
};

_Static_assert(sizeof(struct vt_tls) <= VT_TLS_BYTES, "VT_TLS_BYTES");

void vt_tls_save(void *buf)
{
	struct vt_tls *t = buf;

	t->cpu = pamt_sim_cpu;
	t->pcpu_off = pamt_sim_pcpu_off;
	t->atomic_depth = pamt_sim_atomic_depth;
	t->raw_depth = pamt_sim_raw_depth;
	t->irq_depth = pamt_sim_irq_depth;
	t->irqoff_seamcalls = pamt_sim_irqoff_seamcalls;
	t->in_seamcall = pamt_sim_in_seamcall;
	t->objcg = pamt_sim_objcg;
	memcpy(t->held, held, sizeof(held));
	t->nr_held = nr_held;
	t->rng_state = rng_state;
	t->softirq = pamt_sim_softirq;
	t->irqoff_span = irqoff_span;
	t->preemptoff_span = preemptoff_span;
}

void vt_tls_restore(const void *buf)
{
	const struct vt_tls *t = buf;

	pamt_sim_cpu = t->cpu;
	pamt_sim_pcpu_off = t->pcpu_off;
	pamt_sim_atomic_depth = t->atomic_depth;
	pamt_sim_raw_depth = t->raw_depth;
	pamt_sim_irq_depth = t->irq_depth;
	pamt_sim_irqoff_seamcalls = t->irqoff_seamcalls;
	pamt_sim_in_seamcall = t->in_seamcall;
	pamt_sim_objcg = t->objcg;
	memcpy(held, t->held, sizeof(held));
	nr_held = t->nr_held;
	rng_state = t->rng_state;
	pamt_sim_softirq = t->softirq;
	irqoff_span = t->irqoff_span;
	preemptoff_span = t->preemptoff_span;
}

void vt_tls_init(void *buf, unsigned int cpu)
{
	struct vt_tls *t = buf;

	memset(t, 0, sizeof(*t));
	t->cpu = cpu;
	t->pcpu_off = (unsigned long)cpu * PAMT_SIM_PCPU_UNIT;
	/* Each CPU its own random stream, fixed by the seed and the CPU. */
	t->rng_state = rng_seed ^ (0x2545F4914F6CDD1DULL * (cpu + 1));
	if (!t->rng_state)
		t->rng_state = 1;
}

/*
 * Seed the calling context's random stream from @seed alone: sim.c seeds
 * a fresh stream from a count of the streams seeded so far, so a run's
 * draws outside the virtual CPUs (the fake module's seed, at init) would
 * depend on the runs before it in the same process.
 */
void vt_sim_reseed(uint64_t seed)
{
	pamt_sim_seed(seed);
	rng_state = seed * 0x9e3779b97f4a7c15ULL ^ 0x2545F4914F6CDD1DULL;
	if (!rng_state)
		rng_state = 1;
}

/* ---- locks: queued and FIFO in virtual time ---- */

void pamt_sim_lock_acquire(struct pamt_sim_lock *l, const char *file, int line)
{
	pamt_sim_lock_check(l, file, line);
	vt_qlock(&l->locked);
	l->owner = pamt_sim_self();
	held[nr_held++] = l;
}

bool pamt_sim_lock_try(struct pamt_sim_lock *l, const char *file, int line)
{
	pamt_sim_lock_check(l, file, line);
	if (!vt_qtrylock(&l->locked))
		return false;
	l->owner = pamt_sim_self();
	held[nr_held++] = l;
	return true;
}

void pamt_sim_lock_release(struct pamt_sim_lock *l, const char *file, int line)
{
	if (!nr_held || held[nr_held - 1] != l)
		pamt_sim_fatal("unlock of a lock not last taken", file, line);
	nr_held--;
	l->owner = 0;
	vt_qunlock(&l->locked);
}

bool pamt_sim_lock_is_locked(struct pamt_sim_lock *l)
{
	vt_access(&l->locked, VT_LD);
	return l->locked;
}

/* ---- time ---- */
void pamt_sim_cpu_relax(const char *file, int line)
{
	if (pamt_sim_irq_depth)
		pamt_sim_fatal("spinning with IRQs off", file, line);
	if (vt_active())
		vt_relax();
	else
		__builtin_ia32_pause();
}

u64 ktime_get_ns(void)
{
	if (!vt_active())
		return vt_max_clock_ps() / 1000;
	vt_clock_read();
	return vt_now_ps() / 1000;
}

void ndelay(unsigned long ns)
{
	if (pamt_sim_irq_depth && !pamt_sim_in_seamcall)
		pamt_sim_fatal("delay with IRQs off", __FILE__, __LINE__);
	vt_advance_ns(ns);
}

/* ---- the page allocator: a modelled cost per call ---- */

/*
 * Order-0 pages go through per-CPU lists, as the kernel's do (pcp lists,
 * refilled and drained pcp->batch pages at a time, 63 on a large zone):
 * CPUs that allocate at once get pages from different places.  One list per
 * migratetype, as the kernel keeps; each list has its own high mark.
 */
#define VT_PCP_BATCH	63
#define VT_PCP_HIGH	(4 * VT_PCP_BATCH)

static struct vt_pcp {
	unsigned int nr;
	struct page *p[VT_PCP_HIGH + 1];
} vt_pcp[VT_MAX_CPUS][PAMT_SIM_NR_MT];

/* Every CPU's list back to the allocator: after a run, or when it is dry. */
void vt_pcp_drain_all(void)
{
	struct vt_pcp *c = &vt_pcp[0][0];

	for (; c < &vt_pcp[0][0] + VT_MAX_CPUS * PAMT_SIM_NR_MT; c++)
		while (c->nr)
			host_pamt_sim_free_pages(c->p[--c->nr], 0, __FILE__,
						 __LINE__);
}

/* Set the bits of @map (pfns from @base, @nr of them) of pages on a list. */
void vt_pcp_mark(unsigned long *map, unsigned long base, unsigned long nr)
{
	const struct vt_pcp *c = &vt_pcp[0][0];
	unsigned long pfn;
	unsigned int i;

	for (; c < &vt_pcp[0][0] + VT_MAX_CPUS * PAMT_SIM_NR_MT; c++)
		for (i = 0; i < c->nr; i++) {
			pfn = page_to_pfn(c->p[i]) - base;
			if (pfn < nr)
				__set_bit(pfn, map);
		}
}

static struct page *vt_pcp_alloc(gfp_t gfp, const char *file, int line)
{
	struct vt_pcp *c = &vt_pcp[vt_self()][gfp_migratetype(gfp)];
	struct page *page;
	unsigned int i;

	if (!c->nr) {
		while (c->nr < VT_PCP_BATCH &&
		       (page = host_pamt_sim_alloc_pages(gfp, 0, file, line)))
			c->p[c->nr++] = page;
		if (!c->nr) {
			vt_pcp_drain_all();
			return host_pamt_sim_alloc_pages(gfp, 0, file, line);
		}
		/* The lowest pfn first, as rmqueue_bulk() lists them. */
		for (i = 0; i < c->nr / 2; i++) {
			page = c->p[i];
			c->p[i] = c->p[c->nr - 1 - i];
			c->p[c->nr - 1 - i] = page;
		}
	}
	page = c->p[--c->nr];
	page->accounted = !!(gfp & __GFP_ACCOUNT);
	return page;
}

static void vt_pcp_free(struct page *page, const char *file, int line)
{
	struct vt_pcp *c = &vt_pcp[vt_self()][pamt_sim_page_mt(page)];
	unsigned int i;

	c->p[c->nr++] = page;
	if (c->nr <= VT_PCP_HIGH)
		return;
	/* The coldest batch goes back. */
	for (i = 0; i < VT_PCP_BATCH; i++)
		host_pamt_sim_free_pages(c->p[i], 0, file, line);
	c->nr -= VT_PCP_BATCH;
	memmove(c->p, c->p + VT_PCP_BATCH, c->nr * sizeof(*c->p));
}

struct page *pamt_sim_alloc_page(gfp_t gfp, const char *file, int line)
{
	return pamt_sim_alloc_pages(gfp, 0, file, line);
}

void pamt_sim_free_page(struct page *page, const char *file, int line)
{
	pamt_sim_free_pages(page, 0, file, line);
}

/* Any order costs one call: the buddy allocator's work is per call. */
struct page *pamt_sim_alloc_pages(gfp_t gfp, unsigned int order,
				  const char *file, int line)
{
	if (!vt_active())
		return host_pamt_sim_alloc_pages(gfp, order, file, line);
	vt_stats[vt_self()].palloc++;
	vt_advance_ns(vt_cost.palloc);
	if (order)
		return host_pamt_sim_alloc_pages(gfp, order, file, line);
	return vt_pcp_alloc(gfp, file, line);
}

void pamt_sim_free_pages(struct page *page, unsigned int order,
			 const char *file, int line)
{
	if (!vt_active()) {
		host_pamt_sim_free_pages(page, order, file, line);
		return;
	}
	vt_stats[vt_self()].palloc++;
	vt_advance_ns(vt_cost.pfree);
	if (order)
		host_pamt_sim_free_pages(page, order, file, line);
	else
		vt_pcp_free(page, file, line);
}

/*
 * kmalloc() and friends 64-byte aligned: which slots share a cache line
 * then depends on the code, not on the C library's allocator, and the
 * output is the same on every machine.
 */
void *pamt_sim_kmalloc(size_t size, gfp_t gfp, bool zero)
{
	size_t bytes = (size + 63) & ~(size_t)63;
	void *p;

	might_alloc(gfp);
	pamt_sim_rt_sleeps("kmalloc()", __FILE__, __LINE__);
	if (pamt_sim_should_fail(&pamt_sim_fail_kmalloc, gfp))
		return NULL;
	p = aligned_alloc(64, bytes ? bytes : 64);
	if (p && zero)
		memset(p, 0, bytes ? bytes : 64);
	return p;
}

/*
 * Guest memory in shared mode: guest_memfd's pages come from the same
 * allocator as pair pages, but their allocation is part of the modelled
 * work between faults (--work), so it costs nothing here.
 */
unsigned long vt_guest_alloc_pfn(void)
{
	struct page *pg = host_pamt_sim_alloc_page(GFP_KERNEL, __FILE__,
						   __LINE__);

	return pg ? page_to_pfn(pg) : 0;
}

void vt_guest_free_pfn(unsigned long pfn)
{
	host_pamt_sim_free_page(pfn_to_page(pfn), __FILE__, __LINE__);
}
