/* SPDX-License-Identifier: GPL-2.0 */
/* The virtual-time TD workloads (vbench.c) and their tests (vtest.c). */
#ifndef _PAMT_VBENCH_H
#define _PAMT_VBENCH_H

#include <stdio.h>
#include "bench.h"
#include "lat.h"
#include "vt.h"

#define VB_BASE_PFN	0x100000UL	/* 4 GiB */

enum vb_scenario { VB_BOOT, VB_CHURN, VB_STORM, VB_NR_SCEN };
extern const char * const vb_scen_names[VB_NR_SCEN];

/**
 * struct vb_params - one run
 * @strat: enum bench_strat
 * @scenario: enum vb_scenario
 * @tds: TDs, booted at once
 * @vcpus: vCPUs per TD, one per virtual CPU
 * @cpus: virtual CPUs of the host (>= tds * vcpus)
 * @pages_per_td: guest pages each TD faults in
 * @work_ns: a vCPU's work between two faults (TD exit, PAGE.AUG, KVM)
 * @put_work_ns: the teardown thread's work between two puts
 * @storm_work_ns: work per page converted in a conversion storm
 * @churn_runs: 2M runs each vCPU releases and faults again (churn)
 * @teardown_threads: threads per TD that tear its pages down
 * @call_ns: a floor per get and put: instructions and timestamps (modelled)
 * @pool_shuffle: hand out the guest pool's 2M runs in random order
 * @pool_spread: the pool holds this many times the runs the TDs need (a
 *	host's memory is larger than its TDs': fewer neighbours per line)
 * @start_jitter_ns: each vCPU starts after a random delay below this
 * @work_jitter_ns: each work between faults is drawn from work_ns -
 *	work_jitter_ns / 2 up to work_ns + work_jitter_ns / 2
 * @add_ns: mean PAMT.ADD latency; range add/2 .. add*4.5
 * @remove_ns: mean PAMT.REMOVE latency; range remove/2 .. remove*5.5
 * @seed: of every random choice
 * @shared: guest pages, S-EPT pages and pair pages from the one buddy
 *	allocator (the default), rather than guest pages from a pool of
 *	2M runs kept apart from the allocator's memory
 * @td_batch: shared: guest pages a vCPU takes from the allocator at once
 */
struct vb_params {
	unsigned int strat, scenario, tds, vcpus, cpus;
	unsigned long pages_per_td;
	double work_ns, put_work_ns, storm_work_ns;
	unsigned int churn_runs, teardown_threads;
	double call_ns;
	bool pool_shuffle;
	unsigned int pool_spread;
	double start_jitter_ns, work_jitter_ns;
	double add_ns, remove_ns;
	u64 seed;
	bool shared;
	unsigned int td_batch;
};

/**
 * struct vb_result - what one run measured, in virtual time
 * @get: latency of every get of the measured phase
 * @put: of every put
 * @slow_ps: summed latency of slow-path gets and puts
 * @slow_seam_ps: the SEAMCALL time inside them
 * @add_max_ns: the longest single PAMT.ADD of the measured phase (0: none)
 * @xfers: line transfers in the whole run (and @accesses, @relax, @parks)
 * @c: the strategy's counters over the measured phase
 * @elapsed_ns: virtual duration of the measured phase
 * @td_busy: BUSY answers to the TD's own calls (PAGE.AUG, PAGE.REMOVE),
 *	each retried, over the measured phase (@c.busy: PAMT.ADD/REMOVE's)
 * @blocks: 2M blocks of host memory; @poisoned: of them, those holding
 *	a pair page but not only pair pages (no TD can map them 2M);
 *	@pair_blocks: those holding a pair page; the worst of the scans
 *	with every TD up (shared memory only)
 * @wall_s: host seconds the run took
 * @ok: every check held (see vb_check_text())
 */
struct vb_result {
	struct lat get, put;
	u64 slow_ps, slow_seam_ps, add_max_ns;
	u64 xfers, accesses, relax, parks;
	struct strat_ctrs c;
	u64 elapsed_ns;
	u64 td_busy;
	unsigned long blocks, poisoned, pair_blocks;
	double wall_s;
	u64 errors, violations, warnings, check_bad;
	long leaked_pages;
	bool accounting_bad;
	bool ok;
};

struct vb_params vb_default_params(void);
void vb_run(const struct vb_params *p, struct vb_result *r, FILE *log);
void vb_print_header(FILE *f, const struct vb_params *p);
void vb_print_result(FILE *f, const struct vb_params *p,
		     const struct vb_result *r);
const char *vb_check_text(const struct vb_result *r, char *buf, size_t n);

/* A bare fake module over @nr_pages pages from VB_BASE_PFN, for tests. */
void vb_fake_env_up(unsigned long nr_pages);
void vb_fake_env_down(void);

void vt_fake_regions(void);
/* The longest PAMT.ADD latency since the last reset, ns. */
extern u64 vt_fake_add_max_ns;
int vt_selftest(void);
bool vt_fit_met(double h_model, double h_seed);

/* The targets pamt_vt --scale prints (vmain.c). */
enum vt_target { VT_TGT_WAIT, VT_TGT_MAX_GET, VT_TGT_SCALE, VT_TGT_CHURN };
double vt_target_bound(enum vt_target kind, unsigned int n, double ref);
int vt_target_row(FILE *f, enum vt_target kind, const char *what,
		  unsigned int n, double ref, const char *refs, double v);

#endif /* _PAMT_VBENCH_H */
