/* SPDX-License-Identifier: GPL-2.0 */
/* Controls of the simulated machine, for tests and the benchmark. */
#ifndef _PAMT_SIM_H
#define _PAMT_SIM_H

#include "shim.h"

/**
 * struct pamt_sim_fail - make an allocator fail
 * @after: after this many more successes, fail every call; -1 for never
 * @rate_ppm: also fail this share of calls, in parts per million
 * @nonblocking_only: spare allocations that may sleep (GFP_KERNEL)
 * @noretry_only: spare allocations that may sleep and lack __GFP_NORETRY
 *	(fail only the opportunistic ones, as a fragmented host does)
 * @failed: failures injected so far
 *
 * Set the flags after pamt_sim_fail_set(), which clears them.
 */
struct pamt_sim_fail {
	long after;
	unsigned int rate_ppm;
	bool nonblocking_only;
	bool noretry_only;
	unsigned long failed;
};

/* Page allocations of every order, and of one order only. */
extern struct pamt_sim_fail pamt_sim_fail_page;
extern struct pamt_sim_fail pamt_sim_fail_order[PAMT_SIM_MAX_ORDER + 1];
extern struct pamt_sim_fail pamt_sim_fail_kmalloc;
/* Called first by every page allocation, for tests that stage races. */
extern void (*pamt_sim_alloc_hook)(unsigned int order);
extern unsigned long pamt_sim_kmalloc_bytes;

void pamt_sim_fail_set(struct pamt_sim_fail *f, long after, unsigned int rate_ppm);
bool pamt_sim_should_fail(struct pamt_sim_fail *f, gfp_t gfp);

void pamt_sim_set_nr_cpus(unsigned int nr);
int pamt_sim_locks_held(void);
int pamt_sim_mem_init(unsigned long base_pfn, unsigned long nr_pages);
void pamt_sim_mem_exit(void);
unsigned long pamt_sim_pages_in_use(void);
struct page *pamt_sim_alloc_pfn(unsigned long pfn);
unsigned long pamt_sim_free_blocks(unsigned int order);
bool pamt_sim_pfn_allocated(unsigned long pfn);
bool pamt_sim_pfn_accounted(unsigned long pfn);
extern long pamt_sim_adds_in_memcg, pamt_sim_adds_other_memcg;
void pamt_sim_seed(u64 seed);
/*
 * Called by ndelay() outside a SEAMCALL (a backoff), on the delaying
 * thread: what other CPUs do meanwhile.  NULL for none.
 */
extern void (*pamt_sim_delay_hook)(void);

/**
 * struct pamt_sim_irqoff - IRQs-off (or preemption-off) sections timed
 *	since the last reset
 * @sections: sections timed
 * @multi_seamcall: sections that issued more than one SEAMCALL (an
 *	IRQs-off one aborts instead)
 * @max_lockwait_ns: longest time a preemption-off section spent waiting
 *	for a lock; unbounded here, since the host preempts its holder
 * @max_ns: longest section, thread CPU time
 * @max_seamcall_ns: longest SEAMCALL inside a section
 * @max_other_ns: longest part of a section spent outside its SEAMCALL
 * @max_span_seamcall_ns: the SEAMCALL time inside the longest section
 * @span_us: histogram of sections, in 1 us buckets, the last one open
 * @other_us: histogram of the time outside the SEAMCALL, likewise
 * @nowait_us: histogram of sections less their lock waits, likewise
 *
 * Userspace threads are preempted, and the host steals time from them, so
 * the maximum can include time that no kernel would spend with interrupts
 * off; the histograms let a test bound a high percentile instead.
 */
#define PAMT_SIM_IRQOFF_BUCKETS	256
struct pamt_sim_irqoff {
	unsigned long sections;
	unsigned long multi_seamcall;
	u64 max_ns;
	u64 max_seamcall_ns;
	u64 max_other_ns;
	u64 max_span_seamcall_ns;
	u64 max_lockwait_ns;
	unsigned long span_us[PAMT_SIM_IRQOFF_BUCKETS];
	unsigned long other_us[PAMT_SIM_IRQOFF_BUCKETS];
	unsigned long nowait_us[PAMT_SIM_IRQOFF_BUCKETS];
};

u64 pamt_sim_irqoff_percentile(const unsigned long *hist, unsigned long n,
			       unsigned int per_mille_tenths);

void pamt_sim_irqoff_timing_start(void);
void pamt_sim_irqoff_timing_stop(struct pamt_sim_irqoff *out);
/* The same for sections atomic on PREEMPT_RT: preemption or IRQs off. */
void pamt_sim_preemptoff_timing_start(void);
void pamt_sim_preemptoff_timing_stop(struct pamt_sim_irqoff *out);

#endif /* _PAMT_SIM_H */
