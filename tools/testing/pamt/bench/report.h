/* SPDX-License-Identifier: GPL-2.0 */
/* Options, results and their reporting: tables, JSON, gnuplot. */
#ifndef _PAMT_BENCH_REPORT_H
#define _PAMT_BENCH_REPORT_H

#include <stdarg.h>
#include <stdio.h>
#include "bench.h"
#include "lat.h"

#define BENCH_MAX_CYCLES	16
#define BENCH_MAX_WORKERS	56
/* Guest pages a TD faults in at boot; with S-EPT and control pages, the
 * seed's ~705k gets per TD (see BENCHMARKS.md). */
#define BENCH_DEFAULT_PAGES	703572UL

/* The modelled SEAMCALL costs and where they come from. */
#define BENCH_MODEL_SOURCE \
	"modelled, not measured: the public DPAMT (v6) review thread, BENCHMARKS.md, 'What is measured and what is modelled' " \
	"(PAMT.ADD avg 4 us, 2..18; PAMT.REMOVE avg 2 us, 1..11)"

enum { OP_GET, OP_PUT, OP_NR };

struct bench_opts {
	const char *scenario;
	unsigned int tds, vcpus, mem_gib, host_gib;
	unsigned long pages_per_td;
	unsigned int cycles, threads_per_cpu, run_pages, frag_pct, softirq_pct;
	int frag_set, timeline, quiet;
	u64 seed, add_ns, remove_ns;
	unsigned int strat_mask;
	unsigned int reclaim_ms, reclaim_shift, conv_pages;
	int split_pool;		/* TD pages from a separate pool */
	const char *json, *plot;
};

/**
 * struct bench_mem - what pair pages do to host memory, per strategy
 * @busy_td: TDX_OPERAND_BUSY answers to the TD's own calls (PAGE.AUG and
 *	PAGE.REMOVE, control pages), each retried
 * @blocks: 2M blocks of host memory
 * @td_usable: of them, blocks a TD could use: in shared mode every block
 *	not wholly made of pair pages, with --split-pool the pool's blocks
 * @pair_pages: pages held as pair pages (installed, cached or reserved)
 * @pair_blocks: distinct 2M blocks holding at least one pair page
 * @poisoned: TD-usable blocks holding a pair page: no 2M mapping there
 *
 * The block figures are taken at the end of each boot, with every TD
 * booted, and the worst (most poisoned) cycle is kept.
 */
struct bench_mem {
	u64 busy_td;
	u64 blocks, td_usable, pair_pages, pair_blocks, poisoned;
};

void bench_mem_scan(struct bench_mem *m);

extern struct bench_opts bo;

struct sample {
	double t_ms;
	u64 idle_pairs, pamt_pages, installed;
};

struct sresult {
	bool ran, ok;
	unsigned int ncycles;
	struct lat tot[OP_NR];
	struct lat cyc[BENCH_MAX_CYCLES][OP_NR];
	struct strat_ctrs ctot;
	struct strat_ctrs ccyc[BENCH_MAX_CYCLES];
	u64 peak_pamt_pages, idle_pairs_end, pamt_pages_end;
	u64 gets, puts, errors, violations, check_bad, warnings, leaked_slots;
	long leaked_pages, pool_lost;
	double wall_s;
	struct bench_mem mem;
	/* ADDs in a TD's memcg; of those, with a pair another TD allocated */
	u64 adds_memcg, adds_other_memcg;
	/* convert */
	struct lat slow_get;
	struct lat quiet_get, quiet_slow_get;
	bool quiet_ok;
	struct lat storm_lat[OP_NR];
	u64 storm_iters, storm_gets, storm_puts;
	/* pressure */
	u64 reclaim_scans, reclaim_freed, reclaim_removes;
	u64 full_before, full_after, full_installed_after;
	/* reclaim: (a) TD 0's ranges kept, (b) 1% kept; after the shrinker */
	u64 keep_ranges[2], keep_held_pages[2];
	u64 *shrink_held[2];	/* pair pages held after each shrinker call */
	unsigned int nr_shrink[2];
	struct sample *samples;
	unsigned int nr_samples;
};

/* What load.c saw of the machine before or after a run. */
struct load_probe {
	unsigned int ncpu;
	double loadavg;		/* 1-minute load average */
	double others;		/* other runnable tasks, on average */
	double cpu_share;	/* calibration loop: CPU time / wall time */
	bool busy;
};

bool load_busy(const struct load_probe *p);
void load_probe(struct load_probe *p);
void load_print(FILE *f, const char *when, const struct load_probe *p);

/* Targets judged in one report: wall-clock ones only on a quiet machine. */
struct tally {
	unsigned int met, missed, unjudged;
};

struct bench_result {
	unsigned int nr_tds, ncycles, nworkers, ncpu;
	unsigned long host_slots, idle_cap, gets_per_td;
	double total_s;
	double timer_res_ns;	/* the smallest step the timer takes */
	struct load_probe load[2];	/* before and after the run */
	bool probed;
	struct tally tally;	/* filled by report_print() */
	struct sresult s[S_NR];
};

static inline struct strat_ctrs ctrs_delta(const struct strat_ctrs *a,
					   const struct strat_ctrs *b)
{
	struct strat_ctrs d = {
		.lock = a->lock - b->lock,
		.add = a->add - b->add,
		.remove = a->remove - b->remove,
		.busy = a->busy - b->busy,
		.palloc = a->palloc - b->palloc,
		.pfree = a->pfree - b->pfree,
		.idle_pairs = a->idle_pairs,
		.pamt_pages = a->pamt_pages,
	};
	return d;
}

unsigned long pool_nr_pages(void);
double bench_now(void);
int bench_main(int argc, char **argv, struct bench_result *out);
void report_print(struct bench_result *br);
int report_json(const struct bench_result *br, const char *path);
void report_plot(const struct bench_result *br, const char *png);

#endif /* _PAMT_BENCH_REPORT_H */
