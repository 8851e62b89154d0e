/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Virtual time: the PAMT code on N virtual CPUs, one at a time, on one OS
 * thread, with modelled costs.  See tools/testing/pamt/vt/README.
 *
 * The shims (shim/custom.h, built with -DPAMT_VTIME) call vt_access()
 * before every atomic, READ_ONCE/WRITE_ONCE, bit operation and per-CPU
 * add; vt_access() makes the caller the CPU with the lowest clock (within
 * a quantum), then charges the access's coherence cost.  Locks, cpu_relax,
 * ndelay, ktime_get_ns, the page allocator and the fake module's latency
 * are routed here by vt/vsim.c and vt/vfake.c.
 */
#ifndef _PAMT_VT_H
#define _PAMT_VT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#define VT_MAX_CPUS	256

enum vt_kind {
	VT_LD,		/* load */
	VT_ST,		/* store */
	VT_RMW,		/* read-modify-write that writes */
	VT_CAS,		/* compare-and-exchange: vt_cas_done() says if it wrote */
};

/**
 * struct vt_cost - the cost model, every value in ns (all modelled)
 * @hit: load or store of a line this CPU owns or shares
 * @rmw: locked read-modify-write of a line this CPU owns
 * @xfer_local: cache-line transfer within a socket
 * @xfer_remote: cache-line transfer across sockets
 * @dram: first touch of a line
 * @relax: one cpu_relax() (PAUSE)
 * @fence: smp_mb() on a line not shared
 * @palloc: one page allocation
 * @pfree: one page free
 * @quantum: a CPU runs ahead of the slowest by at most this
 * @park_timeout: a spinner that reads the clock re-checks at least this often
 * @sockets: sockets of the host; CPU c is on socket c % sockets
 * @handoff: line transfers from a queued lock's release to its next owner
 *	running (the release store, and the new owner's MCS write)
 */
struct vt_cost {
	double hit, rmw, xfer_local, xfer_remote, dram, relax, fence;
	double palloc, pfree, quantum, park_timeout;
	unsigned int sockets, handoff;
};

extern struct vt_cost vt_cost;

/* ---- engine ---- */
typedef void (*vt_fn)(void *arg);

void vt_init(unsigned int nr_cpus);
void vt_spawn(unsigned int cpu, vt_fn fn, void *arg);
/* Run every spawned CPU to completion; the caller is not a virtual CPU. */
void vt_run(void);
void vt_fini(void);
void vt_pcp_drain_all(void);	/* vsim.c, at the end of vt_run() */
void vt_pcp_mark(unsigned long *map, unsigned long base, unsigned long nr);
bool vt_active(void);			/* inside vt_run() */
unsigned int vt_self(void);		/* the running virtual CPU */
uint64_t vt_now_ps(void);		/* its clock, ps */
uint64_t vt_max_clock_ps(void);		/* the latest clock at the end */
void vt_advance_ns(double ns);		/* local work: no shared access */
void vt_set_region(const void *p, unsigned long len, int cls);
void vt_clear_regions(void);
void vt_print_model(FILE *f);
/* While set, the running CPU's accesses are not modelled (probes). */
void vt_untracked(bool on);

/* Address classes of vt_set_region(). */
#define VT_REGION_FREE		1	/* not modelled: no cost, no sync */
#define VT_REGION_MODULE	2	/* ordered, tracked, but costs nothing */

/* ---- hooks from the shims ---- */
void vt_access(const volatile void *p, int kind);
void vt_cas_done(const volatile void *p, bool wrote);
void vt_fence(void);
/* Test probe: accesses to one word (vt_watch_addr) by enum vt_kind. */
extern const volatile void *vt_watch_addr;
extern unsigned long vt_watch_n[4];
/* The clock was read: a spin that reads it may wait for a deadline. */
void vt_clock_read(void);
void vt_relax(void);
void vt_seamcall_ns(double ns);

/* Queued (FIFO, MCS-like) lock on the word at @p: 0 free, 1 held. */
void vt_qlock(int *p);
bool vt_qtrylock(int *p);
void vt_qunlock(int *p);

/* All CPUs in @n arrive, then go on at the latest arrival's clock. */
struct vt_barrier {
	unsigned int n, arrived;
	uint64_t latest;
	uint64_t gen;
};
void vt_barrier_wait(struct vt_barrier *b);

/* Per-CPU accounting of the engine. */
struct vt_stats {
	uint64_t seam_ps;	/* in the fake module's modelled latency */
	uint64_t relax;		/* cpu_relax() calls */
	uint64_t parks;		/* spins parked until a line changed */
	uint64_t xfers;		/* line transfers */
	uint64_t switches;	/* coroutine switches */
	uint64_t accesses;
	uint64_t palloc;		/* page allocations and frees */
	uint64_t lock_wait_ps;	/* blocked on a queued lock */
};
extern struct vt_stats vt_stats[VT_MAX_CPUS];

/* TLS of the shims, swapped with the CPU (vsim.c). */
#define VT_TLS_BYTES	256
void vt_tls_save(void *buf);
void vt_tls_restore(const void *buf);
void vt_tls_init(void *buf, unsigned int cpu);
void vt_sim_reseed(uint64_t seed);
unsigned long vt_guest_alloc_pfn(void);
void vt_guest_free_pfn(unsigned long pfn);

#endif /* _PAMT_VT_H */
