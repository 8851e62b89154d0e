// SPDX-License-Identifier: GPL-2.0
/*
 * The virtual-time engine: N virtual CPUs as coroutines on one OS thread.
 *
 * Exactly one CPU runs at a time.  At every scheduling point (vt_access()
 * and the other hooks) the running CPU yields if another runnable CPU's
 * clock is behind its own by more than the quantum; the next to run is
 * always the lowest clock, ties broken by CPU number.  Nothing depends on
 * the host's timing, so a run is a pure function of its inputs.
 *
 * Cache lines: each 64-byte line has an owner (its last writer) and a set
 * of sharers.  A load by the owner or a sharer costs a hit; any other load
 * costs a transfer from the owner.  A store or RMW by the sole holder costs
 * a hit (an RMW its locked-op cost); otherwise a transfer from the farthest
 * holder, after which the writer is the sole holder.  Transfers to one line
 * queue: the line is busy until the last one completes.
 *
 * Spinning: cpu_relax() advances the clock by one PAUSE.  If the spin's
 * iteration (the accesses since the previous cpu_relax()) read at most
 * VT_READSET lines and wrote none, re-running it cannot see anything new
 * until one of those lines is written, so the CPU parks until then (and,
 * if it read the clock, at most park_timeout).  This is exact for the
 * loops of the kernel code, and lets long waits cost nothing to simulate.
 *
 * Locks (spinlock_t, raw_spinlock_t, local locks and the bench's global
 * lock) are queued and FIFO, as the kernel's qspinlock: a waiter blocks,
 * and a release hands the lock to the first waiter at the release time
 * plus --handoff transfers: the release store reaching the waiter, then
 * the new owner's write to its successor's MCS node (or, with none, its
 * cmpxchg of the lock word) before it enters the critical section, as in
 * queued_spin_lock_slowpath().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "vt.h"

/* ---- costs: see vt_print_model() for the sources ---- */
struct vt_cost vt_cost = {
	.hit = 1,
	.rmw = 8,
	.xfer_local = 60,
	.xfer_remote = 150,
	.dram = 110,
	.relax = 40,
	.fence = 15,
	.palloc = 150,
	.pfree = 100,
	.quantum = 50,
	.park_timeout = 2000,
	.sockets = 2,
	.handoff = 2,
};

struct vt_stats vt_stats[VT_MAX_CPUS];

#define PS(ns)		((uint64_t)((ns) * 1000.0 + 0.5))
#define VT_READSET	8
#define VT_STACK	(256 * 1024)
#define NONE		0xffff

enum { ST_FREE, ST_RUNNABLE, ST_RUNNING, ST_PARKED, ST_PARKED_T,
       ST_BLOCKED, ST_DONE };

struct vt_line;

struct vt_cpu {
	uint64_t clock;
	uint64_t park_clock;
	int state;
	int heap_idx;
	unsigned int id;
	unsigned int socket;
	void *sp;
	void *stack;
	vt_fn fn;
	void *arg;
	/* spin detection */
	struct vt_line *rs[VT_READSET];
	unsigned int nrs;
	bool rs_over, wrote, read_clock;
	uint64_t park_gen;
	/* queued lock */
	int *qaddr;
	int qnext;
	struct vt_barrier *bar;
	unsigned char tls[VT_TLS_BYTES] __attribute__((aligned(16)));
};

struct vt_waiter {
	uint16_t cpu;
	uint64_t gen;
};

struct vt_line {
	uintptr_t tag;
	uint16_t owner;
	uint64_t sharers[VT_MAX_CPUS / 64];
	uint64_t busy_until;
	struct vt_waiter *w;
	unsigned int nw, capw;
	int qhead, qtail;		/* queued lock waiters, cpu ids */
};

static struct {
	unsigned int nr;
	struct vt_cpu cpu[VT_MAX_CPUS];
	struct vt_cpu *cur;
	void *main_sp;
	bool active;
	bool untracked;
	/* heap of runnable (and timed-parked) CPUs */
	int heap[VT_MAX_CPUS];
	unsigned int heap_n;
	/* lines */
	struct vt_line **tab;
	size_t tab_cap, tab_n;
	struct vt_line *pool;
	size_t pool_left;
	struct vt_line **chunks;
	size_t nchunks;
	/* costs in ps */
	uint64_t hit, rmw, xl, xr, dram, relax, fence, quantum, park;
	/* regions */
	struct { uintptr_t lo, hi; int cls; } reg[16];
	unsigned int nreg;
	uint64_t end_clock;
} vt;

/* ---- context switch (x86-64 SysV: callee-saved registers only) ---- */
void vt_switch(void **save_sp, void *to_sp);
__asm__(
	".text\n"
	".globl vt_switch\n"
	".type vt_switch,@function\n"
	"vt_switch:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size vt_switch, .-vt_switch\n");

static void vt_fatal(const char *what)
{
	fprintf(stderr, "vt: FATAL: %s\n", what);
	abort();
}

/* ---- heap keyed by (clock, id) ---- */
static inline bool key_lt(const struct vt_cpu *a, const struct vt_cpu *b)
{
	return a->clock < b->clock || (a->clock == b->clock && a->id < b->id);
}

static void heap_set(unsigned int i, int c)
{
	vt.heap[i] = c;
	vt.cpu[c].heap_idx = i;
}

static void heap_up(unsigned int i)
{
	int c = vt.heap[i];

	while (i) {
		unsigned int p = (i - 1) / 2;

		if (!key_lt(&vt.cpu[c], &vt.cpu[vt.heap[p]]))
			break;
		heap_set(i, vt.heap[p]);
		i = p;
	}
	heap_set(i, c);
}

static void heap_down(unsigned int i)
{
	int c = vt.heap[i];

	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, m = i;
		const struct vt_cpu *best = &vt.cpu[c];

		if (l < vt.heap_n && key_lt(&vt.cpu[vt.heap[l]], best)) {
			m = l;
			best = &vt.cpu[vt.heap[l]];
		}
		if (r < vt.heap_n && key_lt(&vt.cpu[vt.heap[r]], best))
			m = r;
		if (m == i)
			break;
		heap_set(i, vt.heap[m]);
		i = m;
	}
	heap_set(i, c);
}

static void heap_push(struct vt_cpu *c)
{
	heap_set(vt.heap_n, c->id);
	heap_up(vt.heap_n++);
}

static struct vt_cpu *heap_pop(void)
{
	struct vt_cpu *c;

	if (!vt.heap_n)
		return NULL;
	c = &vt.cpu[vt.heap[0]];
	c->heap_idx = -1;
	if (--vt.heap_n) {
		heap_set(0, vt.heap[vt.heap_n]);
		heap_down(0);
	}
	return c;
}

/* @c's clock went down: restore the heap. */
static void heap_decrease(struct vt_cpu *c)
{
	heap_up(c->heap_idx);
}

/* ---- scheduling ---- */
static void vt_switch_to(struct vt_cpu *next)
{
	struct vt_cpu *prev = vt.cur;

	if (next == prev) {
		next->state = ST_RUNNING;
		return;
	}
	vt_tls_save(prev->tls);
	vt_tls_restore(next->tls);
	vt_stats[prev->id].switches++;
	next->state = ST_RUNNING;
	vt.cur = next;
	vt_switch(&prev->sp, next->sp);
	/* Back on prev's stack. */
}

static void vt_deadlock(void)
{
	unsigned int i;

	for (i = 0; i < vt.nr; i++)
		if (vt.cpu[i].state != ST_DONE && vt.cpu[i].state != ST_FREE)
			fprintf(stderr, "vt: cpu %u state %d clock %llu ps\n",
				i, vt.cpu[i].state,
				(unsigned long long)vt.cpu[i].clock);
	vt_fatal("every virtual CPU waits: deadlock");
}

/* The running CPU stops running; the lowest clock runs next. */
static void vt_reschedule(void)
{
	struct vt_cpu *next = heap_pop();

	if (!next)
		vt_deadlock();
	vt_switch_to(next);
}

static inline bool behind(const struct vt_cpu *o, const struct vt_cpu *me)
{
	if (!vt.quantum)
		return key_lt(o, me);
	return o->clock + vt.quantum < me->clock;
}

static inline void vt_sync(void)
{
	struct vt_cpu *me = vt.cur;

	if (vt.heap_n && behind(&vt.cpu[vt.heap[0]], me)) {
		me->state = ST_RUNNABLE;
		heap_push(me);
		vt_reschedule();
	}
}

static void vt_trampoline(void)
{
	struct vt_cpu *me = vt.cur;

	me->fn(me->arg);
	me->state = ST_DONE;
	if (me->clock > vt.end_clock)
		vt.end_clock = me->clock;
	if (vt.heap_n) {
		vt_reschedule();
		vt_fatal("a finished CPU ran again");
	}
	/* Last one out: anything not done is stuck. */
	for (unsigned int i = 0; i < vt.nr; i++)
		if (vt.cpu[i].state != ST_DONE && vt.cpu[i].state != ST_FREE)
			vt_deadlock();
	vt_tls_save(me->tls);
	vt.cur = NULL;
	vt_switch(&me->sp, vt.main_sp);
	vt_fatal("returned to a finished CPU");
}

void vt_init(unsigned int nr_cpus)
{
	unsigned int i;

	if (!nr_cpus || nr_cpus > VT_MAX_CPUS)
		vt_fatal("bad number of virtual CPUs");
	vt_fini();
	vt.nr = nr_cpus;
	vt.hit = PS(vt_cost.hit);
	vt.rmw = PS(vt_cost.rmw);
	vt.xl = PS(vt_cost.xfer_local);
	vt.xr = PS(vt_cost.xfer_remote);
	vt.dram = PS(vt_cost.dram);
	vt.relax = PS(vt_cost.relax);
	vt.fence = PS(vt_cost.fence);
	vt.quantum = PS(vt_cost.quantum);
	vt.park = PS(vt_cost.park_timeout);
	if (!vt_cost.sockets)
		vt_cost.sockets = 1;
	memset(vt_stats, 0, sizeof(vt_stats));
	for (i = 0; i < VT_MAX_CPUS; i++) {
		vt.cpu[i].id = i;
		vt.cpu[i].clock = 0;
		vt.cpu[i].park_clock = 0;
		vt.cpu[i].state = ST_FREE;
		vt.cpu[i].heap_idx = -1;
		vt.cpu[i].socket = i % vt_cost.sockets;
		vt.cpu[i].qnext = -1;
	}
	vt.tab_cap = 1 << 16;
	vt.tab = calloc(vt.tab_cap, sizeof(*vt.tab));
	if (!vt.tab)
		vt_fatal("out of memory");
}

static void *vt_stack_alloc(void)
{
	void *p = mmap(NULL, VT_STACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		vt_fatal("no stack");
	return p;
}

void vt_spawn(unsigned int cpu, vt_fn fn, void *arg)
{
	struct vt_cpu *c = &vt.cpu[cpu];
	uintptr_t top;
	void **sp;

	if (cpu >= vt.nr || (c->state != ST_FREE && c->state != ST_DONE))
		vt_fatal("spawn on a bad or busy CPU");
	if (!c->stack)
		c->stack = vt_stack_alloc();
	top = ((uintptr_t)c->stack + VT_STACK) & ~(uintptr_t)15;
	sp = (void **)top;
	*--sp = NULL;				/* trampoline's return address */
	*--sp = (void *)vt_trampoline;		/* vt_switch's ret */
	for (int i = 0; i < 6; i++)
		*--sp = NULL;			/* rbp rbx r12..r15 */
	c->sp = sp;
	c->fn = fn;
	c->arg = arg;
	c->nrs = 0;
	c->rs_over = c->wrote = c->read_clock = false;
	c->bar = NULL;
	c->qaddr = NULL;
	vt_tls_init(c->tls, cpu);
	c->state = ST_RUNNABLE;
	heap_push(c);
}

void vt_run(void)
{
	struct vt_cpu *first = heap_pop();
	unsigned char main_tls[VT_TLS_BYTES] __attribute__((aligned(16)));

	if (!first)
		return;
	vt_tls_save(main_tls);
	vt_tls_restore(first->tls);
	vt.active = true;
	vt.cur = first;
	first->state = ST_RUNNING;
	vt_switch(&vt.main_sp, first->sp);
	vt.active = false;
	vt_tls_restore(main_tls);
	vt_pcp_drain_all();
}

static void vt_free_lines(void)
{
	size_t i;

	for (i = 0; i < vt.tab_cap; i++)
		if (vt.tab && vt.tab[i])
			free(vt.tab[i]->w);
	for (i = 0; i < vt.nchunks; i++)
		free(vt.chunks[i]);
	free(vt.chunks);
	free(vt.tab);
	vt.chunks = NULL;
	vt.nchunks = 0;
	vt.tab = NULL;
	vt.tab_cap = vt.tab_n = 0;
	vt.pool = NULL;
	vt.pool_left = 0;
}

void vt_fini(void)
{
	unsigned int i;

	for (i = 0; i < VT_MAX_CPUS; i++) {
		if (vt.cpu[i].stack)
			munmap(vt.cpu[i].stack, VT_STACK);
		vt.cpu[i].stack = NULL;
		vt.cpu[i].state = ST_FREE;
	}
	vt_free_lines();
	vt.heap_n = 0;
	vt.end_clock = 0;
}

void vt_untracked(bool on)
{
	vt.untracked = on;
}

bool vt_active(void)
{
	return vt.active;
}

unsigned int vt_self(void)
{
	return vt.cur ? vt.cur->id : 0;
}

uint64_t vt_now_ps(void)
{
	return vt.cur ? vt.cur->clock : vt.end_clock;
}

uint64_t vt_max_clock_ps(void)
{
	return vt.end_clock;
}

void vt_set_region(const void *p, unsigned long len, int cls)
{
	if (vt.nreg == 16)
		vt_fatal("too many regions");
	vt.reg[vt.nreg].lo = (uintptr_t)p;
	vt.reg[vt.nreg].hi = (uintptr_t)p + len;
	vt.reg[vt.nreg].cls = cls;
	vt.nreg++;
}

void vt_clear_regions(void)
{
	vt.nreg = 0;
}

static inline int vt_region(uintptr_t a)
{
	for (unsigned int i = 0; i < vt.nreg; i++)
		if (a >= vt.reg[i].lo && a < vt.reg[i].hi)
			return vt.reg[i].cls;
	return 0;
}

/* ---- lines ---- */
static inline size_t line_hash(uintptr_t tag, size_t cap)
{
	uint64_t x = tag * 0x9e3779b97f4a7c15ULL;

	return (x ^ (x >> 29)) & (cap - 1);
}

static void line_grow(void)
{
	size_t ncap = vt.tab_cap * 2, i;
	struct vt_line **nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		vt_fatal("out of memory");
	for (i = 0; i < vt.tab_cap; i++) {
		struct vt_line *l = vt.tab[i];
		size_t h;

		if (!l)
			continue;
		for (h = line_hash(l->tag, ncap); nt[h]; h = (h + 1) & (ncap - 1))
			;
		nt[h] = l;
	}
	free(vt.tab);
	vt.tab = nt;
	vt.tab_cap = ncap;
}

static struct vt_line *line_get(uintptr_t addr)
{
	uintptr_t tag = (addr >> 6) + 1;
	size_t h = line_hash(tag, vt.tab_cap);
	struct vt_line *l;

	for (; vt.tab[h]; h = (h + 1) & (vt.tab_cap - 1))
		if (vt.tab[h]->tag == tag)
			return vt.tab[h];
	if (!vt.pool_left) {
		vt.chunks = realloc(vt.chunks, (vt.nchunks + 1) * sizeof(*vt.chunks));
		vt.pool = calloc(4096, sizeof(*vt.pool));
		if (!vt.chunks || !vt.pool)
			vt_fatal("out of memory");
		vt.chunks[vt.nchunks++] = vt.pool;
		vt.pool_left = 4096;
	}
	l = vt.pool++;
	vt.pool_left--;
	l->tag = tag;
	l->owner = NONE;
	l->qhead = l->qtail = -1;
	vt.tab[h] = l;
	if (++vt.tab_n * 2 > vt.tab_cap)
		line_grow();
	return l;
}

static inline bool sharer(const struct vt_line *l, unsigned int c)
{
	return l->sharers[c / 64] & (1ULL << (c % 64));
}

static inline uint64_t xfer(const struct vt_cpu *a, unsigned int b)
{
	return a->socket == vt.cpu[b].socket ? vt.xl : vt.xr;
}

static void vt_wake(struct vt_cpu *c, uint64_t t)
{
	uint64_t at = c->park_clock > t ? c->park_clock : t;

	c->park_gen++;
	if (c->state == ST_PARKED_T) {
		/* Its timeout is later than @at: move it earlier. */
		if (at < c->clock) {
			c->clock = at;
			heap_decrease(c);
		}
		c->state = ST_RUNNABLE;
		return;
	}
	c->clock = at;
	c->state = ST_RUNNABLE;
	heap_push(c);
}

/* @l was written at the running CPU's clock: spinners on it look again. */
static void line_written(struct vt_line *l)
{
	uint64_t t = vt.cur->clock;
	unsigned int i;

	for (i = 0; i < l->nw; i++) {
		struct vt_cpu *c = &vt.cpu[l->w[i].cpu];

		if ((c->state == ST_PARKED || c->state == ST_PARKED_T) &&
		    c->park_gen == l->w[i].gen)
			vt_wake(c, t);
	}
	l->nw = 0;
}

static inline void rs_add(struct vt_cpu *me, struct vt_line *l)
{
	unsigned int i;

	for (i = 0; i < me->nrs; i++)
		if (me->rs[i] == l)
			return;
	if (me->nrs == VT_READSET)
		me->rs_over = true;
	else
		me->rs[me->nrs++] = l;
}

/*
 * The cost of an access by @me to @l, and its effect on the line's state.
 * Returns the line so that the caller can tell spinners.
 */
static struct vt_line *vt_charge(uintptr_t a, int kind, bool free_cost)
{
	struct vt_cpu *me = vt.cur;
	struct vt_line *l = line_get(a);
	unsigned int c = me->id, w;
	uint64_t cost, start;
	bool others = false, remote = false;

	vt_stats[c].accesses++;
	if (kind == VT_LD) {
		rs_add(me, l);
		if (l->owner == NONE && !sharer(l, c)) {
			cost = l->tag && !l->sharers[0] && !l->sharers[1] &&
			       !l->sharers[2] && !l->sharers[3] ? vt.dram : vt.hit;
			l->sharers[c / 64] |= 1ULL << (c % 64);
			if (!free_cost)
				me->clock += cost;
			return l;
		}
		if (l->owner == c || sharer(l, c)) {
			if (!free_cost)
				me->clock += vt.hit;
			return l;
		}
		l->sharers[c / 64] |= 1ULL << (c % 64);
		if (free_cost)
			return l;
		vt_stats[c].xfers++;
		start = me->clock > l->busy_until ? me->clock : l->busy_until;
		me->clock = start + xfer(me, l->owner);
		return l;
	}
	/* A store or an RMW needs the line exclusive. */
	if (kind == VT_CAS)
		rs_add(me, l);
	for (w = 0; w < VT_MAX_CPUS / 64; w++) {
		uint64_t m = l->sharers[w];

		if (w == c / 64)
			m &= ~(1ULL << (c % 64));
		while (m) {
			unsigned int o = w * 64 + __builtin_ctzll(m);

			m &= m - 1;
			others = true;
			if (vt.cpu[o].socket != me->socket)
				remote = true;
		}
	}
	if (l->owner != NONE && l->owner != c) {
		others = true;
		if (vt.cpu[l->owner].socket != me->socket)
			remote = true;
	}
	if (!others)
		cost = l->owner == NONE && !sharer(l, c) ? vt.dram :
		       kind == VT_ST ? vt.hit : vt.rmw;
	else
		cost = remote ? vt.xr : vt.xl;
	memset(l->sharers, 0, sizeof(l->sharers));
	l->sharers[c / 64] = 1ULL << (c % 64);
	l->owner = c;
	if (free_cost)
		return l;
	if (others)
		vt_stats[c].xfers++;
	start = me->clock > l->busy_until ? me->clock : l->busy_until;
	me->clock = start + cost;
	if (others || l->busy_until > start)
		l->busy_until = me->clock;
	return l;
}

const volatile void *vt_watch_addr;
unsigned long vt_watch_n[4];

void vt_access(const volatile void *p, int kind)
{
	uintptr_t a = (uintptr_t)p;
	struct vt_line *l;
	int cls;

	if (!vt.active || vt.untracked)
		return;
	if (p == vt_watch_addr)
		vt_watch_n[kind]++;
	cls = vt_region(a);
	if (cls == VT_REGION_FREE)
		return;
	vt_sync();
	l = vt_charge(a, kind, cls == VT_REGION_MODULE);
	if (kind == VT_ST || kind == VT_RMW) {
		vt.cur->wrote = true;
		if (l->nw)
			line_written(l);
	}
}

void vt_cas_done(const volatile void *p, bool wrote)
{
	struct vt_line *l;

	if (!vt.active || vt.untracked || !wrote || vt_region((uintptr_t)p) == VT_REGION_FREE)
		return;
	vt.cur->wrote = true;
	l = line_get((uintptr_t)p);
	if (l->nw)
		line_written(l);
}

void vt_fence(void)
{
	if (!vt.active)
		return;
	vt.cur->clock += vt.fence;
	vt_sync();
}

void vt_advance_ns(double ns)
{
	if (!vt.active)
		return;
	vt.cur->clock += PS(ns);
	vt_sync();
}

void vt_seamcall_ns(double ns)
{
	if (!vt.active)
		return;
	vt_stats[vt.cur->id].seam_ps += PS(ns);
	vt_advance_ns(ns);
}

void vt_clock_read(void)
{
	if (!vt.active)
		return;
	vt_sync();
	vt.cur->read_clock = true;
}

void vt_relax(void)
{
	struct vt_cpu *me = vt.cur;
	unsigned int i;

	if (!vt.active)
		return;
	vt_stats[me->id].relax++;
	me->clock += vt.relax;
	if (!me->wrote && !me->rs_over && me->nrs) {
		uint64_t gen = ++me->park_gen;

		for (i = 0; i < me->nrs; i++) {
			struct vt_line *l = me->rs[i];

			if (l->nw == l->capw) {
				l->capw = l->capw ? 2 * l->capw : 4;
				l->w = realloc(l->w, l->capw * sizeof(*l->w));
				if (!l->w)
					vt_fatal("out of memory");
			}
			l->w[l->nw].cpu = me->id;
			l->w[l->nw].gen = gen;
			l->nw++;
		}
		vt_stats[me->id].parks++;
		me->park_clock = me->clock;
		if (me->read_clock) {
			me->clock += vt.park;
			me->state = ST_PARKED_T;
			heap_push(me);
		} else {
			me->state = ST_PARKED;
		}
		vt_reschedule();
		/* Woken by a write, or timed out. */
		if (me->park_gen == gen)
			me->park_gen++;
	} else {
		vt_sync();
	}
	me->nrs = 0;
	me->rs_over = me->wrote = me->read_clock = false;
}

/* ---- queued locks ---- */
void vt_qlock(int *p)
{
	struct vt_cpu *me;
	struct vt_line *l;

	if (!vt.active) {
		if (*p)
			vt_fatal("lock held outside virtual time");
		*p = 1;
		return;
	}
	me = vt.cur;
	vt_sync();
	l = vt_charge((uintptr_t)p, VT_RMW, false);
	if (l->nw)
		line_written(l);
	if (!*p) {
		*p = 1;
		return;
	}
	me->qaddr = p;
	me->qnext = -1;
	if (l->qtail < 0)
		l->qhead = me->id;
	else
		vt.cpu[l->qtail].qnext = me->id;
	l->qtail = me->id;
	me->state = ST_BLOCKED;
	me->park_clock = me->clock;
	vt_reschedule();
	vt_stats[me->id].lock_wait_ps += me->clock - me->park_clock;
	/* Handed over: the lock is ours. */
	me->qaddr = NULL;
}

bool vt_qtrylock(int *p)
{
	struct vt_line *l;

	if (!vt.active) {
		if (*p)
			return false;
		*p = 1;
		return true;
	}
	vt_sync();
	l = vt_charge((uintptr_t)p, VT_CAS, false);
	if (*p)
		return false;
	*p = 1;
	vt.cur->wrote = true;
	if (l->nw)
		line_written(l);
	return true;
}

void vt_qunlock(int *p)
{
	struct vt_cpu *me, *w;
	struct vt_line *l;
	int prev = -1, i;

	if (!vt.active) {
		*p = 0;
		return;
	}
	me = vt.cur;
	vt_sync();
	l = vt_charge((uintptr_t)p, VT_ST, false);
	me->wrote = true;
	for (i = l->qhead; i >= 0; prev = i, i = vt.cpu[i].qnext)
		if (vt.cpu[i].qaddr == p)
			break;
	if (i < 0) {
		*p = 0;
		if (l->nw)
			line_written(l);
		return;
	}
	w = &vt.cpu[i];
	if (prev < 0)
		l->qhead = w->qnext;
	else
		vt.cpu[prev].qnext = w->qnext;
	if (l->qtail == (int)w->id)
		l->qtail = prev;
	/* The release reaches the waiter; it then hands its MCS node on. */
	w->clock = (w->clock > me->clock ? w->clock : me->clock) + xfer(me, w->id);
	vt_stats[me->id].xfers++;
	for (i = 1; i < (int)vt_cost.handoff; i++) {
		w->clock += xfer(w, w->qnext >= 0 ? (unsigned int)w->qnext : me->id);
		vt_stats[w->id].xfers++;
	}
	w->qnext = -1;
	w->state = ST_RUNNABLE;
	heap_push(w);
}

void vt_barrier_wait(struct vt_barrier *b)
{
	struct vt_cpu *me = vt.cur;
	unsigned int i;

	vt_sync();
	if (me->clock > b->latest)
		b->latest = me->clock;
	if (++b->arrived < b->n) {
		me->bar = b;
		me->state = ST_BLOCKED;
		vt_reschedule();
		return;
	}
	for (i = 0; i < vt.nr; i++) {
		struct vt_cpu *c = &vt.cpu[i];

		if (c->state == ST_BLOCKED && c->bar == b) {
			c->bar = NULL;
			c->clock = b->latest;
			c->state = ST_RUNNABLE;
			heap_push(c);
		}
	}
	me->clock = b->latest;
	b->arrived = 0;
	b->latest = 0;
	b->gen++;
}

void vt_print_model(FILE *f)
{
	fprintf(f,
"# cost model (all MODELLED, ns; one model for every strategy):\n"
"#   --hit %g          L1 hit, load/store of an owned line (~4 cycles at 2-3 GHz;\n"
"#                      Intel optimization manual, Golden Cove L1D latency 5 cycles)\n"
"#   --rmw %g          LOCK'd RMW on an owned line (~18-20 cycles: Agner Fog,\n"
"#                      instruction tables, LOCK XADD/CMPXCHG on Golden Cove)\n"
"#   --xfer-local %g  line transfer within a socket (SPR core-to-core latency,\n"
"#                      ~50-70 ns: published core-to-core measurements of Xeon\n"
"#                      Sapphire Rapids, e.g. Chips and Cheese, AnandTech)\n"
"#   --xfer-remote %g cross-socket transfer (same sources: ~120-200 ns)\n"
"#   --dram %g        first touch of a line (SPR local DRAM ~100-120 ns)\n"
"#   --relax %g        one cpu_relax() (PAUSE ~140 cycles since Skylake: Intel\n"
"#                      optimization manual; taken at ~3.5 GHz turbo)\n"
"#   --fence %g        smp_mb() (MFENCE/LOCK'd op on a private line)\n"
"#   --palloc %g      one page allocation, --pfree %g one page free (per-CPU\n"
"#                      list fast path; order of magnitude of LKML page-allocator\n"
"#                      microbenchmarks; not measured here)\n"
"#   SEAMCALLs: the fake module's distributions (the public DPAMT review\n"
"#   thread's figures, in BENCHMARKS.md), elapsed in virtual time with its range locks held\n"
"#   topology: %u sockets, CPU c on socket c %% %u (the host scheduler spreads\n"
"#   vCPUs over both sockets); SPR-class 2 x 56 cores\n"
"#   --quantum %g      a CPU runs ahead of the slowest by at most this\n"
"#   --park-timeout %g a spinner that reads the clock re-checks this often\n"
"#   --handoff %u       line transfers per queued-lock hand-off: the release\n"
"#                      reaching the next waiter, then its write to its own\n"
"#                      successor's MCS node (kernel/locking/qspinlock.c,\n"
"#                      queued_spin_lock_slowpath(): arch_mcs_spin_unlock_contended()\n"
"#                      before the critical section); fitted to the seed's\n"
"#                      lock hand-off (the replay prints the fit)\n",
		vt_cost.hit, vt_cost.rmw, vt_cost.xfer_local,
		vt_cost.xfer_remote, vt_cost.dram, vt_cost.relax,
		vt_cost.fence, vt_cost.palloc, vt_cost.pfree, vt_cost.sockets,
		vt_cost.sockets, vt_cost.quantum, vt_cost.park_timeout,
		vt_cost.handoff);
}
