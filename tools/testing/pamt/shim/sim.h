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
 * @failed: failures injected so far
 */
struct pamt_sim_fail {
	long after;
	unsigned int rate_ppm;
	bool nonblocking_only;
	unsigned long failed;
};

extern struct pamt_sim_fail pamt_sim_fail_page;
extern struct pamt_sim_fail pamt_sim_fail_kmalloc;

void pamt_sim_fail_set(struct pamt_sim_fail *f, long after, unsigned int rate_ppm);
bool pamt_sim_should_fail(struct pamt_sim_fail *f, gfp_t gfp);

void pamt_sim_set_nr_cpus(unsigned int nr);
int pamt_sim_locks_held(void);
int pamt_sim_mem_init(unsigned long base_pfn, unsigned long nr_pages);
void pamt_sim_mem_exit(void);
unsigned long pamt_sim_pages_in_use(void);
struct page *pamt_sim_alloc_pfn(unsigned long pfn);
void pamt_sim_seed(u64 seed);

/* Provided by the core (pamt_mag.c) */
void pamt_mag_drain_local(void);

#endif /* _PAMT_SIM_H */
