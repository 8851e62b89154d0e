/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pamt_bench: replays the TD boot/teardown experiment of the "Optimize
 * tdx_pamt_get/put()" review thread against four PAMT strategies.
 *
 *   lock      every get and put under one global lock (the seed's "w/o")
 *   atomic    inc_not_zero / dec_and_lock around one global lock ("w/")
 *   lean      the core with an idle cap of one pair: nearly every last
 *             put REMOVEs, as upstream does
 *   magazine  the core with its default idle cap
 *
 * lock and atomic live in strat.c; lean and magazine are the kernel's own
 * pamt_*.c files built against the harness's shims.
 */
#ifndef _PAMT_BENCH_H
#define _PAMT_BENCH_H

#include <sched.h>
#include "shim/sim.h"
#include "pamt_internal.h"
#include "pamt_fake.h"

/* The fake module behind the shim's SEAMCALL checks (shim/fake_ops.c). */
extern const struct tdx_pamt_ops pamt_env_ops;

/* ---- strategies (strat.c) ---- */
enum bench_strat {
	S_LOCK,
	S_ATOMIC,
	S_LEAN,		/* the core, idle cap 1 */
	S_MAG,
	S_NR,
};

extern const char * const strat_names[S_NR];

/* Cumulative counters of a strategy, read at any time. */
struct strat_ctrs {
	u64 lock;		/* acquisitions of an all-CPU lock */
	u64 add;		/* PAMT.ADD calls (the fake module's count) */
	u64 remove;		/* PAMT.REMOVE calls */
	u64 busy;		/* TDX_OPERAND_BUSY answers */
	u64 palloc;		/* pages taken from the page allocator for pairs */
	u64 pfree;		/* pair pages given back to the page allocator */
	u64 idle_pairs;		/* pairs held but not installed for a TD page */
	u64 pamt_pages;		/* pair pages held right now (palloc - pfree) */
};

struct strat_ops {
	const char *name;
	int (*init)(const struct tdx_pamt_range *range);
	void (*exit)(void);
	int (*topup)(struct tdx_pamt_cache *res);
	int (*get)(unsigned long pfn, struct tdx_pamt_cache *res);
	int (*put)(unsigned long pfn);
	void (*drain)(struct tdx_pamt_cache *res);
	struct page *(*ctl_alloc)(void);
	void (*ctl_free)(struct page *page);
	unsigned long (*refs)(unsigned long pfn);
	void (*ctrs)(struct strat_ctrs *c);
	bool has_shrinker;
};

extern const struct strat_ops strat_ops[S_NR];

/*
 * Each TD in a memcg of its own, as libvirt and systemd place VMs: its
 * vCPUs' top-ups charge it (GFP_KERNEL_ACCOUNT, as KVM's do), and the
 * cache files its ranges on its own idle lists.  Call before a top-up.
 */
#define BENCH_MAX_MEMCGS	48
void strat_enter_td(unsigned int td);

/* Pairs a vCPU keeps topped up before each fault: guest page + S-EPT page. */
#define BENCH_TOPUP	2

/* ---- the TD page pool (pool.c) ---- */
struct pool_cursor {
	unsigned int nr;	/* pages left in @run */
	unsigned int cap;
	u32 *run;		/* pool page offsets, next out at the end */
};

int pool_init(unsigned long base_pfn, unsigned long nr_pages,
	      unsigned int run_pages, unsigned int frag_pct);
void pool_exit(void);
int pool_cursor_init(struct pool_cursor *c);
void pool_cursor_release(struct pool_cursor *c);
unsigned long pool_alloc(struct pool_cursor *c, u64 *rng);
void pool_free_batch(const unsigned long *pfns, unsigned int nr);
unsigned long pool_free_pages(void);
int pool_init_shared(unsigned long base_pfn, unsigned long nr_pages,
		     unsigned int frag_pct);
bool pool_is_shared(void);
void pool_td_region(unsigned long *start, unsigned long *end);

static inline u64 bench_rng(u64 *s)
{
	u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static inline u64 bench_mix(u64 a, u64 b)
{
	u64 x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x ? x : 1;
}

/*
 * A ticket spinlock, FIFO-fair like the kernel's queued spinlock; a waiter
 * yields now and then, since a userspace holder can be preempted.
 */
struct bench_spin {
	unsigned int next;
	unsigned int owner;
} __attribute__((aligned(64)));

#ifdef PAMT_VTIME
/* Virtual time (tools/testing/pamt/vt): the engine's queued FIFO lock. */
static inline void bench_spin_lock(struct bench_spin *l)
{
	vt_qlock((int *)&l->next);
}

static inline void bench_spin_unlock(struct bench_spin *l)
{
	vt_qunlock((int *)&l->next);
}
#else
static inline void bench_spin_lock(struct bench_spin *l)
{
	unsigned int me = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
	unsigned int spins = 0;

	while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != me) {
		__builtin_ia32_pause();
		if (!(++spins % 256))
			sched_yield();
	}
}

static inline void bench_spin_unlock(struct bench_spin *l)
{
	__atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
}

#endif

static inline void bench_spin_init(struct bench_spin *l)
{
	l->next = 0;
	l->owner = 0;
}

#endif /* _PAMT_BENCH_H */
