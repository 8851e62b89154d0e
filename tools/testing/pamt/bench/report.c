// SPDX-License-Identifier: GPL-2.0
/*
 * Reporting: the seed's table with one sub-column per strategy, the
 * counters table, per-cycle splits, the targets, JSON and a
 * gnuplot latency CDF.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include "report.h"
#include "plot.h"

#define W	9	/* sub-column width */

static int nr_ran(const struct bench_result *br)
{
	int s, n = 0;

	for (s = 0; s < S_NR; s++)
		n += br->s[s].ran;
	return n;
}

/* 705k, 3.43M: the seed's count style. */
static void fmt_count(char *b, size_t n, double v)
{
	if (v >= 1e6)
		snprintf(b, n, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(b, n, "%.0fk", v / 1e3);
	else
		snprintf(b, n, "%.0f", v);
}

/* Microseconds, as the seed prints totals: 2025k, 51k. */
static void fmt_us_total(char *b, size_t n, double ns)
{
	double us = ns / 1e3;

	if (us >= 1e4)
		snprintf(b, n, "%.0fk", us / 1e3);
	else if (us >= 1e3)
		snprintf(b, n, "%.1fk", us / 1e3);
	else
		snprintf(b, n, "%.0f", us);
}

static void fmt_us(char *b, size_t n, double ns)
{
	double us = ns / 1e3;

	if (us >= 100)
		snprintf(b, n, "%.0f", us);
	else if (us >= 10)
		snprintf(b, n, "%.1f", us);
	else
		snprintf(b, n, "%.2f", us);
}

static const char *scenario_title(const struct bench_result *br, char *b,
				  size_t n)
{
	const char *sc = bo.scenario;

	if (!strcmp(sc, "convert"))
		snprintf(b, n, "Bystander TD boot+teardown (%u vCPUs/%u GiB) beside a shared<->private conversion storm on %u pages",
			 bo.vcpus, bo.mem_gib, bo.conv_pages);
	else
		snprintf(b, n, "Bootup+teardown of %u TD%s (each TD: %u vcpus/%u GiB memory)%s%s, %u cycle%s%s",
			 br->nr_tds, br->nr_tds > 1 ? "s" : "", bo.vcpus,
			 bo.mem_gib, br->nr_tds > 1 ? " concurrently" : "",
			 !strcmp(sc, "pressure") ? " under a reclaimer" : "",
			 br->ncycles, br->ncycles > 1 ? "s" : "",
			 bo.frag_pct ? " (fragmented memory)" : "");
	return b;
}

static void print_group_header(const struct bench_result *br, const char *name)
{
	int width = nr_ran(br) * W, pad = (width - (int)strlen(name)) / 2;

	printf("%*s%s%*s|", pad, "", name, width - pad - (int)strlen(name), "");
}

static void print_seed_table(const struct bench_result *br)
{
	static const char * const groups[] = {
		"avg (us)", "max (us)", "min (us)", "#cnt", "total (us)",
	};
	static const char * const rows[OP_NR] = {
		"__tdx_pamt_get()", "__tdx_pamt_put()",
	};
	char b[64];
	int g, s, o, i, width = 16 + 5 * (nr_ran(br) * W + 1);

	printf("%-16s|", "");
	for (g = 0; g < 5; g++)
		print_group_header(br, groups[g]);
	printf("\n%-16s|", "");
	for (g = 0; g < 5; g++) {
		for (s = 0; s < S_NR; s++)
			if (br->s[s].ran)
				printf("%*s", W, s == S_MAG ? "magazin" :
				       strat_names[s]);
		printf("|");
	}
	printf("\n");
	for (i = 0; i < width; i++)
		putchar(i == 16 ? '|' : '-');
	printf("\n");
	for (o = 0; o < OP_NR; o++) {
		printf("%-16s|", rows[o]);
		for (g = 0; g < 5; g++) {
			for (s = 0; s < S_NR; s++) {
				const struct lat *l = &br->s[s].tot[o];

				if (!br->s[s].ran)
					continue;
				switch (g) {
				case 0: fmt_us(b, sizeof(b), lat_avg(l)); break;
				case 1: fmt_us(b, sizeof(b), l->max); break;
				case 2: fmt_us(b, sizeof(b), l->min); break;
				case 3: fmt_count(b, sizeof(b), l->count); break;
				default: fmt_us_total(b, sizeof(b), l->total); break;
				}
				printf("%*s", W, b);
			}
			printf("|");
		}
		printf("\n");
	}
	for (i = 0; i < width; i++)
		putchar(i == 16 ? '|' : '-');
	printf("\n");
}

static double per_million(u64 n, u64 ops)
{
	return ops ? (double)n * 1e6 / (double)ops : 0;
}

static double pct(u64 n, u64 of)
{
	return of ? 100.0 * (double)n / (double)of : 0;
}

static void print_counters(const struct bench_result *br)
{
	int s;

	printf("\n%-14s %10s %9s %9s %6s %10s %10s %9s %16s %10s %10s %9s %6s\n",
	       "strategy", "locks/1Mop", "ADD", "REMOVE", "BUSY",
	       "pg allocs", "pg frees", "idle end", "peak PAMT", "slow gets",
	       "slow ms", "p99.9 get", "check");
	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br->s[s];
		/* The storm's own gets and puts count for convert's locks. */
		u64 ops = r->tot[OP_GET].count + r->tot[OP_PUT].count +
			  r->storm_lat[OP_GET].count + r->storm_lat[OP_PUT].count;
		char peak[32];

		if (!r->ran)
			continue;
		snprintf(peak, sizeof(peak), "%llu (%.1fM)",
			 (unsigned long long)r->peak_pamt_pages,
			 r->peak_pamt_pages * 4096.0 / (1 << 20));
		printf("%-14s %10.1f %9llu %9llu %6llu %10llu %10llu %9llu %16s %10llu %10.2f %8.2fu %6s\n",
		       strat_names[s], per_million(r->ctot.lock, ops),
		       (unsigned long long)r->ctot.add,
		       (unsigned long long)r->ctot.remove,
		       (unsigned long long)r->ctot.busy,
		       (unsigned long long)r->ctot.palloc,
		       (unsigned long long)r->ctot.pfree,
		       (unsigned long long)r->idle_pairs_end, peak,
		       (unsigned long long)r->tot[OP_GET].slow_count,
		       (r->tot[OP_GET].slow_ns + r->tot[OP_PUT].slow_ns) / 1e6,
		       lat_quantile(&r->tot[OP_GET], 0.999) / 1e3,
		       r->ok ? "ok" : "FAIL");
	}
	printf("  (idle end: pairs held but not mapping a TD page after the last teardown, before tdx_pamt_exit;\n"
	       "   peak PAMT: pair pages held at once, sampled every 1 ms; slow: ops that took a 0<->1 refcount step)\n");
	for (s = S_LEAN; s < S_NR; s++) {
		const struct sresult *r = &br->s[s];

		if (!r->ran || !r->adds_memcg)
			continue;
		printf("  %s: of %llu ADDs, %llu (%.1f%%) installed a pair another TD's task allocated:\n"
		       "    what charging pair pages at allocation (__GFP_ACCOUNT) would bill to the wrong VM\n",
		       strat_names[s], (unsigned long long)r->adds_memcg,
		       (unsigned long long)r->adds_other_memcg,
		       pct(r->adds_other_memcg, r->adds_memcg));
	}
}

static void print_memory(const struct bench_result *br)
{
	int s;

	printf("\nmemory (%s; blocks at the end of boot, worst cycle):\n",
	       bo.split_pool ? "split pool: TD pages apart from pair pages" :
	       "shared: TD, control and pair pages from one buddy allocator");
	printf("%-14s %9s %9s %10s %10s %10s %16s",
	       "strategy", "BUSY", "TD BUSY", "pair pgs", "2M w/pair",
	       "TD-usable", "poisoned");
	printf("\n");
	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br->s[s];
		const struct bench_mem *m = &r->mem;
		char poi[32];

		if (!r->ran)
			continue;
		snprintf(poi, sizeof(poi), "%llu (%.1f%%)",
			 (unsigned long long)m->poisoned,
			 pct(m->poisoned, m->td_usable));
		printf("%-14s %9llu %9llu %10llu %10llu %10llu %16s",
		       strat_names[s],
		       (unsigned long long)(r->ctot.busy + m->busy_td),
		       (unsigned long long)m->busy_td,
		       (unsigned long long)m->pair_pages,
		       (unsigned long long)m->pair_blocks,
		       (unsigned long long)m->td_usable, poi);
		printf("\n");
	}
	printf("  (BUSY: every TDX_OPERAND_BUSY the fake module answered, PAMT.ADD/REMOVE and the TD's own calls;\n"
	       "   TD BUSY: of them, PAGE.AUG/REMOVE and control pages;\n"
	       "   pair pgs: pages held as pair pages, installed, cached or reserved; 2M w/pair: distinct 2M blocks\n"
	       "   holding one; TD-usable: blocks not wholly pair pages (split pool: the pool's); poisoned: TD-usable\n"
	       "   blocks holding a pair page, which no TD can map at 2M)\n");
}

static void print_cycles(const struct bench_result *br)
{
	unsigned int c;
	int s;

	printf("\nper cycle:\n%-14s %5s %11s %11s %10s %9s %9s %6s %9s %9s %9s\n",
	       "strategy", "cycle", "get tot ms", "put tot ms", "slow ms",
	       "ADD", "REMOVE", "BUSY", "locks", "get max", "p99.9 get");
	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br->s[s];

		if (!r->ran)
			continue;
		for (c = 0; c < r->ncycles; c++) {
			const struct lat *g = &r->cyc[c][OP_GET], *p = &r->cyc[c][OP_PUT];

			printf("%-14s %5u %11.2f %11.2f %10.3f %9llu %9llu %6llu %9llu %8.1fu %8.2fu\n",
			       strat_names[s], c + 1, g->total / 1e6,
			       p->total / 1e6, (g->slow_ns + p->slow_ns) / 1e6,
			       (unsigned long long)r->ccyc[c].add,
			       (unsigned long long)r->ccyc[c].remove,
			       (unsigned long long)r->ccyc[c].busy,
			       (unsigned long long)r->ccyc[c].lock,
			       g->max / 1e3, lat_quantile(g, 0.999) / 1e3);
		}
	}
}

static void print_convert(const struct bench_result *br)
{
	int s;

	printf("\nconvert: bystander gets that took the slow path (0->1), latency without and with the storm:\n");
	printf("%-14s %10s %10s %8s %10s %10s %8s %12s %12s\n", "strategy",
	       "quiet avg", "storm avg", "ratio", "quiet p50", "storm p50",
	       "ratio", "storm convs", "storm get us");
	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br->s[s];
		double q, st, qm, sm;

		if (!r->ran)
			continue;
		q = lat_avg(&r->quiet_slow_get);
		st = lat_avg(&r->slow_get);
		qm = lat_quantile(&r->quiet_slow_get, 0.5);
		sm = lat_quantile(&r->slow_get, 0.5);
		printf("%-14s %9.2fu %9.2fu %8.2f %9.2fu %9.2fu %8.2f %12llu %12.2f\n",
		       strat_names[s], q / 1e3, st / 1e3, q ? st / q : 0,
		       qm / 1e3, sm / 1e3, qm ? sm / qm : 0,
		       (unsigned long long)r->storm_lat[OP_GET].count,
		       lat_avg(&r->storm_lat[OP_GET]) / 1e3);
	}
	printf("  (p50 is the upper edge of a 1/16-octave histogram bucket)\n");
}

static void print_pressure(const struct bench_result *br)
{
	unsigned int i, step;
	int s;

	printf("\npressure: reclaimer every %u ms scanning count>>%u\n",
	       bo.reclaim_ms, bo.reclaim_shift);
	printf("%-14s %8s %12s %14s %14s %13s %8s\n", "strategy", "scans",
	       "pairs freed", "reclaim REMOVE", "idle before", "idle after",
	       "leaked");
	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br->s[s];

		if (!r->ran || !strat_ops[s].has_shrinker)
			continue;
		printf("%-14s %8llu %12llu %14llu %14llu %13llu %8llu\n",
		       strat_names[s], (unsigned long long)r->reclaim_scans,
		       (unsigned long long)r->reclaim_freed,
		       (unsigned long long)r->reclaim_removes,
		       (unsigned long long)r->full_before,
		       (unsigned long long)r->full_after,
		       (unsigned long long)r->leaked_slots);
		step = r->nr_samples / 12 ? r->nr_samples / 12 : 1;
		printf("  idle pairs over time (ms:pairs):");
		for (i = 0; i < r->nr_samples; i += step)
			printf(" %.0f:%llu", r->samples[i].t_ms,
			       (unsigned long long)r->samples[i].idle_pairs);
		printf("\n");
	}
}

/*
 * ---- targets ----
 *
 * Every target prints one row, "met", "MISSED: <why>" or, for a
 * wall-clock target on a busy machine (load.c), "not judged"; a figure
 * that is reported but not a target says why it is not judged.  A
 * heading is printed with its first row, and report_print() ends with
 * the tally.
 */
enum tgt_kind { TGT_COUNT, TGT_WALL };

static struct tally *tl;
static const char *heading;
static bool busy;

/* A row's text, after its heading if it is the first row. */
static void row_text(const char *fmt, va_list ap)
{
	if (heading) {
		printf("\n%s\n", heading);
		heading = NULL;
	}
	printf("  ");
	vprintf(fmt, ap);
}

static void target(enum tgt_kind kind, bool met, const char *why,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	row_text(fmt, ap);
	va_end(ap);
	if (kind == TGT_WALL && busy) {
		tl->unjudged++;
		printf(": not judged (wall clock on a busy machine)\n");
	} else if (met) {
		tl->met++;
		printf(": met\n");
	} else {
		tl->missed++;
		printf(": MISSED: %s\n", why);
	}
}

/* A figure shown beside the targets, with why it is not one. */
static void report_only(const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	row_text(fmt, ap);
	va_end(ap);
	printf(" (reported, not judged: %s)\n", why);
}

/* Where a strategy's get+put time went: fast path and slow steps. */
static const char *split_time(char *b, size_t n, const char *name,
			      const struct lat *g, const struct lat *p)
{
	snprintf(b, n, "%s spent %.1f ms in %llu slow steps and %.1f ms on the fast path",
		 name, (g->slow_ns + p->slow_ns) / 1e6,
		 (unsigned long long)(g->slow_count + p->slow_count),
		 (g->total + p->total - g->slow_ns - p->slow_ns) / 1e6);
	return b;
}

/* The targets: magazine against atomic, same run. */
static void print_targets(const struct bench_result *br)
{
	const struct sresult *m = &br->s[S_MAG], *a = &br->s[S_ATOMIC];
	const char *sc = bo.scenario;
	bool cyc = !strcmp(sc, "churn") || !strcmp(sc, "frag") ||
		   !strcmp(sc, "pressure");
	bool churn = !strcmp(sc, "churn");
	char w1[160], w2[160], why[400];
	unsigned int c;

	if (!m->ran)
		return;
	heading = "targets (magazine vs atomic):";
	if (cyc) {
		u64 ops = m->tot[OP_GET].count + m->tot[OP_PUT].count;
		double lpm = per_million(m->ctot.lock, ops);

		if (churn)
			target(TGT_COUNT, lpm <= 10,
			       "the magazines went to the shared lists more often than the cap allows; see 'locks' per cycle",
			       "global-lock acquisitions per 1M get+put, whole run: %.2f (<= 10)",
			       lpm);
		else
			report_only("a churn target", "global-lock acquisitions per 1M get+put, whole run: %.2f",
				    lpm);
	}
	if (!a->ran)
		return;
	if (cyc && m->ncycles > 1) {
		u64 ms = 0, as = 0, mn = 0, an = 0, mr = 0;

		for (c = 1; c < m->ncycles; c++) {
			ms += m->ccyc[c].add + m->ccyc[c].remove;
			as += a->ccyc[c].add + a->ccyc[c].remove;
			mr += m->ccyc[c].remove;
			mn += m->cyc[c][OP_GET].slow_ns + m->cyc[c][OP_PUT].slow_ns;
			an += a->cyc[c][OP_GET].slow_ns + a->cyc[c][OP_PUT].slow_ns;
		}
		snprintf(why, sizeof(why), "%llu REMOVEs in cycles 2..%u: idle slots were reclaimed between cycles (idle cap, worker or shrinker)",
			 (unsigned long long)mr, m->ncycles);
		if (churn)
			target(TGT_COUNT, ms * 100 <= as, why,
			       "cycles 2..%u SEAMCALLs: %llu vs %llu = %.3f%% (<= 1%%)",
			       m->ncycles, (unsigned long long)ms,
			       (unsigned long long)as, as ? 100.0 * ms / as : 0);
		else
			report_only("a churn target", "cycles 2..%u SEAMCALLs: %llu vs %llu",
				    m->ncycles, (unsigned long long)ms,
				    (unsigned long long)as);
		if (churn)
			target(TGT_WALL, mn * 10 <= an,
			       "the slow steps of cycles 2..n are the ones counted in the SEAMCALL row above",
			       "cycles 2..%u slow time (get+put): %.2f ms vs %.2f ms = %.3f (<= 0.1)",
			       m->ncycles, mn / 1e6, an / 1e6,
			       an ? (double)mn / an : 0);
	}
	if (!strcmp(sc, "5td")) {
		const struct lat *mg = &m->tot[OP_GET], *ag = &a->tot[OP_GET];
		u64 mt = mg->total + m->tot[OP_PUT].total;
		u64 at = ag->total + a->tot[OP_PUT].total;
		u64 mp = lat_quantile(mg, 0.999);
		u64 ap = lat_quantile(ag, 0.999);

		snprintf(why, sizeof(why), "%s; %s",
			 split_time(w1, sizeof(w1), "magazine", mg, &m->tot[OP_PUT]),
			 split_time(w2, sizeof(w2), "atomic", ag, &a->tot[OP_PUT]));
		target(TGT_WALL, mt <= at, why,
		       "total get+put: %.1f ms vs %.1f ms (<=)", mt / 1e6,
		       at / 1e6);
		snprintf(why, sizeof(why), "the 0.1%% slowest gets are slow steps (%llu of %llu gets, %.2f%%), which cost a SEAMCALL in both",
			 (unsigned long long)mg->slow_count,
			 (unsigned long long)mg->count,
			 pct(mg->slow_count, mg->count));
		target(TGT_WALL, mp <= ap, why,
		       "p99.9 get: %.2f us vs %.2f us (<=)", mp / 1e3, ap / 1e3);
		snprintf(why, sizeof(why), "one sample, set by whichever thread the host descheduled; %u threads on %u CPUs",
			 br->nworkers + 1, br->ncpu);
		report_only(why, "max get: %.1f us vs %.1f us", mg->max / 1e3,
			    ag->max / 1e3);
	}
	if (!strcmp(sc, "frag")) {
		u64 mt = m->tot[OP_GET].total + m->tot[OP_PUT].total;
		u64 at = a->tot[OP_GET].total + a->tot[OP_PUT].total;
		u64 ms = m->ctot.add + m->ctot.remove;
		u64 as = a->ctot.add + a->ctot.remove;

		snprintf(why, sizeof(why), "%s; %s",
			 split_time(w1, sizeof(w1), "magazine", &m->tot[OP_GET], &m->tot[OP_PUT]),
			 split_time(w2, sizeof(w2), "atomic", &a->tot[OP_GET], &a->tot[OP_PUT]));
		target(TGT_WALL, mt * 100 <= at * 105, why,
		       "total get+put: %.1f ms vs %.1f ms = %.3fx (<= 1.05x)",
		       mt / 1e6, at / 1e6, at ? (double)mt / at : 0);
		target(TGT_COUNT, ms <= as,
		       "the idle cap REMOVEd slots that were used again",
		       "SEAMCALLs (whole run, exit excluded): %llu vs %llu (<=)",
		       (unsigned long long)ms, (unsigned long long)as);
	}
	if (!strcmp(sc, "convert")) {
		double rm = lat_avg(&m->quiet_slow_get) ?
			    lat_avg(&m->slow_get) / lat_avg(&m->quiet_slow_get) : 0;
		double ra = lat_avg(&a->quiet_slow_get) ?
			    lat_avg(&a->slow_get) / lat_avg(&a->quiet_slow_get) : 0;

		target(TGT_WALL, rm <= 1.2,
		       "the storm's slow steps queued the bystander's behind them",
		       "bystander slow-get mean, storm/quiet: %.2fx (atomic %.2fx) (<= 1.2x)",
		       rm, ra);
	}
	if (!strcmp(sc, "pressure"))
		target(TGT_COUNT, m->full_after * 100 <= m->full_before &&
		       !m->leaked_slots && m->ok,
		       m->leaked_slots ? "REMOVE failed for good on some slots (leaked)" :
		       "the shrinker left idle pairs it counted; see the pressure table",
		       "after one direct-reclaim attempt (do_shrink_slab, priorities 12..0; a second if the worker left any): idle %llu -> %llu (<= 1%%), leaked %llu",
		       (unsigned long long)m->full_before,
		       (unsigned long long)m->full_after,
		       (unsigned long long)m->leaked_slots);
}

/* The reclaim bound in MiB: 1.2 x kept pair memory + 2 MiB per CPU. */
static double reclaim_bound(const struct bench_result *br, u64 kept_ranges)
{
	return 1.2 * kept_ranges * 8.0 / 1024 + 2.0 * (br->nworkers + 1);
}

/*
 * The reclaim targets: after the shrinker ran to exhaustion,
 * what the cache holds against the kept ranges' pair memory (8 KiB each);
 * the bound is 1.2 times that plus 2 MiB per CPU.
 */
static void print_reclaim(const struct bench_result *br)
{
	static const char * const what[2] = {
		"(a) 4 of 5 TDs torn down (TD 0's ranges kept)",
		"(b) 1% of all ranges kept at random",
	};
	unsigned int ncpu = br->nworkers + 1, m;
	int s;

	printf("\nreclaim: the shrinker run to exhaustion in batches of 128, %s\n",
	       bo.split_pool ? "split pool" : "shared memory");
	printf("  bound: 1.2 x kept pair memory + 2 MiB per CPU (%u CPUs)\n",
	       ncpu);
	for (m = 0; m < 2; m++) {
		printf("  %s\n", what[m]);
		printf("    %-14s %8s %11s %10s %10s %9s %9s\n", "strategy", "kept",
		       "kept MiB", "held MiB", "bound MiB", "held/kept",
		       "shrinks");
		for (s = 0; s < S_NR; s++) {
			const struct sresult *r = &br->s[s];
			double kept = r->keep_ranges[m] * 8.0 / 1024;
			double held = r->keep_held_pages[m] * 4.0 / 1024;

			if (!r->ran)
				continue;
			printf("    %-14s %8llu %11.1f %10.1f %10.1f %8.2fx %9u\n",
			       strat_names[s],
			       (unsigned long long)r->keep_ranges[m], kept,
			       held, reclaim_bound(br, r->keep_ranges[m]),
			       kept ? held / kept : 0, r->nr_shrink[m]);
		}
	}
}

static void print_reclaim_targets(const struct bench_result *br)
{
	unsigned int m;
	int s;

	heading = "targets (reclaim: held after the shrinker, within the bound):";
	for (m = 0; m < 2; m++)
		for (s = 0; s < S_NR; s++) {
			const struct sresult *r = &br->s[s];
			double held = r->keep_held_pages[m] * 4.0 / 1024;
			double bound = reclaim_bound(br, r->keep_ranges[m]);

			if (!r->ran)
				continue;
			if (m == 0)
				target(TGT_COUNT, held <= bound,
				       "the shrinker left pairs that no kept range holds",
				       "(a) %s: %.1f MiB held, bound %.1f MiB",
				       strat_names[s], held, bound);
			else
				report_only("kept ranges scattered at random; (a) is the target",
					    "(b) %s: %.1f MiB held, bound %.1f MiB",
					    strat_names[s], held, bound);
		}
}

void report_print(struct bench_result *br)
{
	char title[256];

	busy = br->probed && (br->load[0].busy || br->load[1].busy);
	if (busy)
		printf("WARNING: the machine was busy during this run (see below): wall-clock figures measure the competition too, and their targets are not judged\n");
	printf("\n== pamt_bench scenario %s: %s\n", bo.scenario,
	       scenario_title(br, title, sizeof(title)));
	printf("   SEAMCALL costs %s\n", BENCH_MODEL_SOURCE);
	if (br->probed) {
		load_print(stdout, "before", &br->load[0]);
		load_print(stdout, "after", &br->load[1]);
	}
	if (bo.split_pool)
		printf("   host: %u GiB covered (%lu 2M slots, core idle cap %lu = a quarter), split TD pool %lu GiB, run %u pages, frag %u%%, seed %llu\n",
		       bo.host_gib, br->host_slots, br->idle_cap,
		       (unsigned long)(br->nr_tds < 2 ? 2 : br->nr_tds) *
		       bo.mem_gib, bo.run_pages, bo.frag_pct,
		       (unsigned long long)bo.seed);
	else
		printf("   host: %u GiB covered (%lu 2M slots, core idle cap %lu = a quarter), shared memory (one buddy allocator), frag %u%%, seed %llu\n",
		       bo.host_gib, br->host_slots, br->idle_cap, bo.frag_pct,
		       (unsigned long long)bo.seed);
	printf("   %lu gets per TD boot, %u workers on %u CPUs (%u per CPU), softirq share of S-EPT puts %u%%, timer step %.0f ns, wall %.1fs\n\n",
	       br->gets_per_td, br->nworkers, br->ncpu, bo.threads_per_cpu,
	       bo.softirq_pct, br->timer_res_ns, br->total_s);
	print_seed_table(br);
	print_counters(br);
	if (strcmp(bo.scenario, "convert"))
		print_memory(br);
	if (br->ncycles > 1)
		print_cycles(br);
	if (!strcmp(bo.scenario, "convert"))
		print_convert(br);
	if (!strcmp(bo.scenario, "pressure"))
		print_pressure(br);
	if (!strcmp(bo.scenario, "reclaim"))
		print_reclaim(br);
	memset(&br->tally, 0, sizeof(br->tally));
	tl = &br->tally;
	print_targets(br);
	if (!strcmp(bo.scenario, "reclaim"))
		print_reclaim_targets(br);
	heading = NULL;
	printf("\ntargets: %u met, %u missed", tl->met, tl->missed);
	if (tl->unjudged)
		printf(" (%u wall-clock target%s not judged: machine busy)",
		       tl->unjudged, tl->unjudged > 1 ? "s" : "");
	printf("\n");
	fflush(stdout);
}

/* ---- JSON ---- */
static void json_lat(FILE *f, const char *name, const struct lat *l)
{
	fprintf(f, "\"%s\":{\"count\":%llu,\"total_ns\":%llu,\"avg_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu,\"p99_ns\":%llu,\"p999_ns\":%llu,\"slow_count\":%llu,\"slow_ns\":%llu}",
		name, (unsigned long long)l->count,
		(unsigned long long)l->total, lat_avg(l),
		(unsigned long long)l->min, (unsigned long long)l->max,
		(unsigned long long)lat_quantile(l, 0.99),
		(unsigned long long)lat_quantile(l, 0.999),
		(unsigned long long)l->slow_count,
		(unsigned long long)l->slow_ns);
}

static void json_sc(FILE *f, const struct strat_ctrs *c)
{
	fprintf(f, "\"seamcall\":{\"add\":%llu,\"remove\":%llu,\"busy\":%llu}",
		(unsigned long long)c->add, (unsigned long long)c->remove,
		(unsigned long long)c->busy);
}

int report_json(const struct bench_result *br, const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned int c, i;
	int s, first = 1;
	char date[64];
	time_t now = time(NULL);

	if (!f) {
		perror(path);
		return -1;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "{\"scenario\":\"%s\",\"date\":\"%s\",", bo.scenario, date);
	fprintf(f, "\"params\":{\"tds\":%u,\"vcpus\":%u,\"mem_gib\":%u,\"host_gib\":%u,\"pages_per_td\":%lu,\"gets_per_td\":%lu,\"cycles\":%u,\"threads_per_cpu\":%u,\"workers\":%u,\"cpus\":%u,\"run_pages\":%u,\"frag_pct\":%u,\"softirq_pct\":%u,\"seed\":%llu,\"host_slots\":%lu,\"idle_cap\":%lu,\"reclaim_ms\":%u,\"reclaim_shift\":%u,\"conv_pages\":%u,\"memory\":\"%s\",\"wall_s\":%.2f},",
		br->nr_tds, bo.vcpus, bo.mem_gib, bo.host_gib, bo.pages_per_td,
		br->gets_per_td, br->ncycles, bo.threads_per_cpu, br->nworkers,
		br->ncpu, bo.run_pages, bo.frag_pct, bo.softirq_pct,
		(unsigned long long)bo.seed, br->host_slots, br->idle_cap,
		bo.reclaim_ms, bo.reclaim_shift, bo.conv_pages,
		bo.split_pool ? "split" : "shared", br->total_s);
	fprintf(f, "\"modelled\":{\"add_ns\":%llu,\"remove_ns\":%llu,\"add_range_ns\":[%llu,%llu],\"remove_range_ns\":[%llu,%llu],\"source\":\"%s\"},",
		(unsigned long long)bo.add_ns, (unsigned long long)bo.remove_ns,
		(unsigned long long)bo.add_ns / 2,
		(unsigned long long)bo.add_ns * 18 / 4,
		(unsigned long long)bo.remove_ns / 2,
		(unsigned long long)bo.remove_ns * 11 / 2, BENCH_MODEL_SOURCE);
	fprintf(f, "\"machine\":{\"busy\":%s,\"timer_step_ns\":%.1f,\"probes\":[",
		busy ? "true" : "false", br->timer_res_ns);
	for (i = 0; br->probed && i < 2; i++)
		fprintf(f, "%s{\"when\":\"%s\",\"loadavg\":%.2f,\"cpus\":%u,\"others_runnable\":%.2f,\"cpu_share\":%.3f,\"busy\":%s}",
			i ? "," : "", i ? "after" : "before", br->load[i].loadavg,
			br->load[i].ncpu, br->load[i].others,
			br->load[i].cpu_share, br->load[i].busy ? "true" : "false");
	fprintf(f, "]},\"targets\":{\"met\":%u,\"missed\":%u,\"not_judged\":%u},",
		br->tally.met, br->tally.missed, br->tally.unjudged);
	fprintf(f, "\"strategies\":{");
	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br->s[s];

		if (!r->ran)
			continue;
		fprintf(f, "%s\"%s\":{", first ? "" : ",", strat_names[s]);
		first = 0;
		json_lat(f, "get", &r->tot[OP_GET]);
		fputc(',', f);
		json_lat(f, "put", &r->tot[OP_PUT]);
		fputc(',', f);
		json_sc(f, &r->ctot);
		fprintf(f, ",\"memory\":{\"busy\":%llu,\"busy_td\":%llu,\"blocks_2m\":%llu,\"td_usable_2m\":%llu,\"pair_pages\":%llu,\"pair_blocks_2m\":%llu,\"poisoned_2m\":%llu}",
			(unsigned long long)(r->ctot.busy + r->mem.busy_td),
			(unsigned long long)r->mem.busy_td,
			(unsigned long long)r->mem.blocks,
			(unsigned long long)r->mem.td_usable,
			(unsigned long long)r->mem.pair_pages,
			(unsigned long long)r->mem.pair_blocks,
			(unsigned long long)r->mem.poisoned);
		fprintf(f, ",\"global_lock_acquisitions\":%llu,\"page_allocs\":%llu,\"page_frees\":%llu,\"idle_pairs_end\":%llu,\"peak_pamt_pages\":%llu,\"checks_ok\":%s,\"violations\":%llu,\"gets\":%llu,\"puts\":%llu,\"wall_s\":%.3f",
			(unsigned long long)r->ctot.lock,
			(unsigned long long)r->ctot.palloc,
			(unsigned long long)r->ctot.pfree,
			(unsigned long long)r->idle_pairs_end,
			(unsigned long long)r->peak_pamt_pages,
			r->ok ? "true" : "false",
			(unsigned long long)r->violations,
			(unsigned long long)r->gets,
			(unsigned long long)r->puts, r->wall_s);
		fprintf(f, ",\"cycles\":[");
		for (c = 0; c < r->ncycles; c++) {
			fprintf(f, "%s{", c ? "," : "");
			json_lat(f, "get", &r->cyc[c][OP_GET]);
			fputc(',', f);
			json_lat(f, "put", &r->cyc[c][OP_PUT]);
			fputc(',', f);
			json_sc(f, &r->ccyc[c]);
			fprintf(f, ",\"global_lock_acquisitions\":%llu,\"page_allocs\":%llu,\"page_frees\":%llu}",
				(unsigned long long)r->ccyc[c].lock,
				(unsigned long long)r->ccyc[c].palloc,
				(unsigned long long)r->ccyc[c].pfree);
		}
		fprintf(f, "]");
		if (!strcmp(bo.scenario, "convert")) {
			fprintf(f, ",\"convert\":{");
			json_lat(f, "bystander_get_quiet", &r->quiet_get);
			fputc(',', f);
			json_lat(f, "bystander_get_storm", &r->tot[OP_GET]);
			fputc(',', f);
			json_lat(f, "bystander_slow_get_quiet", &r->quiet_slow_get);
			fputc(',', f);
			json_lat(f, "bystander_slow_get_storm", &r->slow_get);
			fputc(',', f);
			json_lat(f, "storm_get", &r->storm_lat[OP_GET]);
			fputc(',', f);
			json_lat(f, "storm_put", &r->storm_lat[OP_PUT]);
			fprintf(f, "}");
		}
		if (!strcmp(bo.scenario, "reclaim")) {
			fprintf(f, ",\"reclaim\":[");
			for (c = 0; c < 2; c++) {
				fprintf(f, "%s{\"kept\":\"%s\",\"kept_ranges\":%llu,\"kept_mib\":%.3f,\"held_pages\":%llu,\"held_mib\":%.3f,\"bound_mib\":%.3f,\"shrinker_calls\":%u,\"held_pages_per_call\":[",
					c ? "," : "", c ? "1pct" : "td0",
					(unsigned long long)r->keep_ranges[c],
					r->keep_ranges[c] * 8.0 / 1024,
					(unsigned long long)r->keep_held_pages[c],
					r->keep_held_pages[c] * 4.0 / 1024,
					reclaim_bound(br, r->keep_ranges[c]),
					r->nr_shrink[c]);
				for (i = 0; r->shrink_held[c] && i <= r->nr_shrink[c]; i++)
					fprintf(f, "%s%llu", i ? "," : "",
						(unsigned long long)r->shrink_held[c][i]);
				fprintf(f, "]}");
			}
			fprintf(f, "]");
		}
		if (!strcmp(bo.scenario, "pressure") && strat_ops[s].has_shrinker) {
			fprintf(f, ",\"pressure\":{\"scans\":%llu,\"pairs_freed\":%llu,\"reclaim_removes\":%llu,\"full_pass_before\":%llu,\"full_pass_after\":%llu,\"leaked_slots\":%llu,\"idle_timeline\":[",
				(unsigned long long)r->reclaim_scans,
				(unsigned long long)r->reclaim_freed,
				(unsigned long long)r->reclaim_removes,
				(unsigned long long)r->full_before,
				(unsigned long long)r->full_after,
				(unsigned long long)r->leaked_slots);
			for (i = 0; i < r->nr_samples; i++)
				fprintf(f, "%s[%.1f,%llu,%llu]", i ? "," : "",
					r->samples[i].t_ms,
					(unsigned long long)r->samples[i].idle_pairs,
					(unsigned long long)r->samples[i].pamt_pages);
			fprintf(f, "]}");
		}
		fprintf(f, "}");
	}
	fprintf(f, "}}\n");
	fclose(f);
	return 0;
}

/*
 * ---- gnuplot ----
 * Latency: the tail per strategy, get and put apart, as 1 - CDF on log-log
 * axes from the timer's step; churn draws its cold cycle apart from its
 * steady ones.  Reclaim: pair memory held against shrinker calls, with
 * the bound.  Each strategy in its style of styles.def.
 */
static FILE *plot_open(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		perror(path);
	return f;
}

static void plot_run(const char *gp, const char *png)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "gnuplot '%s'", gp);
	if (system(cmd))
		fprintf(stderr, "pamt_bench: gnuplot failed on %s\n", gp);
	else if (!bo.quiet)
		fprintf(stderr, "pamt_bench: wrote %s\n", png);
}

/* Pair memory held after each shrinker call, (a) and (b) side by side. */
static void plot_reclaim(const struct bench_result *br, const char *png,
			 const char *dat, const char *gp)
{
	static const char * const what[2] = {
		"(a) TD 0 kept, 4 of 5 torn down", "(b) 1% of ranges kept",
	};
	char st[96];
	unsigned int m, i;
	int s, idx = 0, blk[2][S_NR];
	FILE *f = plot_open(dat);

	if (!f)
		return;
	for (m = 0; m < 2; m++)
		for (s = 0; s < S_NR; s++) {
			const struct sresult *r = &br->s[s];

			blk[m][s] = -1;
			if (!r->ran || !r->shrink_held[m])
				continue;
			blk[m][s] = idx++;
			fprintf(f, "# %s %s: shrinker calls, pair MiB held\n",
				strat_names[s], what[m]);
			for (i = 0; i <= r->nr_shrink[m]; i++)
				fprintf(f, "%u %.3f\n", i,
					r->shrink_held[m][i] * 4.0 / 1024);
			fprintf(f, "\n\n");
		}
	fclose(f);
	f = plot_open(gp);
	if (!f)
		return;
	fprintf(f, "set terminal pngcairo size 1400,600 noenhanced\nset output '%s'\n", png);
	fprintf(f, "set multiplot layout 1,2 title \"pamt_bench reclaim: pair memory held while the shrinker runs (batches of 128; SEAMCALL costs modelled)\"\n");
	fprintf(f, "set xlabel 'shrinker calls'\nset ylabel 'pair memory held (MiB)'\n"
		   "set yrange [0:*]\nset xrange [0:*]\n" PLOT_KEY "set grid\n");
	for (m = 0; m < 2; m++) {
		const char *sep = "";

		fprintf(f, "set title '%s'\nplot ", what[m]);
		for (i = 0; i < 2 * S_NR; i++) {
			s = i % S_NR;
			if (blk[m][s] < 0 || !strat_in_pass(strat_names[s], i / S_NR))
				continue;
			fprintf(f, "%s'%s' index %d using 1:2 with linespoints %s title '%s'",
				sep, dat, blk[m][s],
				strat_gp(st, sizeof(st), strat_names[s], true),
				strat_names[s]);
			sep = ", \\\n     ";
			fprintf(f, "%s%.3f with lines lw 1 dt 2 lc rgb '%s' title 'bound, %s'",
				sep, reclaim_bound(br, br->s[s].keep_ranges[m]),
				strat_color(strat_names[s]), strat_names[s]);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
	fclose(f);
}

/* The cycles a panel pools: all, the cold first, or the steady rest. */
enum { CYC_ALL, CYC_COLD, CYC_STEADY };

static void cycles_lat(const struct sresult *r, int which, int o,
		       struct lat *out)
{
	unsigned int c;

	memset(out, 0, sizeof(*out));
	for (c = 0; c < r->ncycles; c++)
		if (which == CYC_ALL || (which == CYC_COLD) == !c)
			lat_merge(out, &r->cyc[c][o]);
}

void report_plot(const struct bench_result *br, const char *png)
{
	static const char * const pname[3] = {
		"all cycles", "cycle 1 (cold)", "cycles 2.. (steady)",
	};
	char dat[4096], gp[4096], st[96];
	static struct lat l;
	bool split = br->ncycles > 1;
	int s, o, w, i, blk = 0, idx[S_NR][3][OP_NR];
	FILE *f;

	if (system("command -v gnuplot >/dev/null 2>&1")) {
		fprintf(stderr, "pamt_bench: gnuplot not found; no plot written (apt-get install gnuplot-nox)\n");
		return;
	}
	snprintf(dat, sizeof(dat), "%s.dat", png);
	snprintf(gp, sizeof(gp), "%s.gp", png);
	if (!strcmp(bo.scenario, "reclaim")) {
		plot_reclaim(br, png, dat, gp);
		plot_run(gp, png);
		return;
	}
	f = plot_open(dat);
	if (!f)
		return;
	for (s = 0; s < S_NR; s++)
		for (w = 0; w < 3; w++)
			for (o = 0; o < OP_NR; o++) {
				idx[s][w][o] = -1;
				if (!br->s[s].ran || (w == CYC_ALL) == split)
					continue;
				idx[s][w][o] = blk++;
				fprintf(f, "# %s %s, %s\n", strat_names[s],
					o == OP_GET ? "get" : "put", pname[w]);
				cycles_lat(&br->s[s], w, o, &l);
				plot_write_tail(f, &l, br->timer_res_ns);
			}
	fclose(f);
	f = plot_open(gp);
	if (!f)
		return;
	fprintf(f, "set terminal pngcairo size 1400,%d noenhanced\nset output '%s'\n",
		split ? 1100 : 600, png);
	fprintf(f, "set multiplot layout %d,2 title \"pamt_bench %s: latency tail (SEAMCALL costs modelled; x from the timer's step, %.0f ns)\"\n",
		split ? 2 : 1, bo.scenario, br->timer_res_ns);
	fprintf(f, "set logscale xy\nset format y '%%g'\nset xlabel 'latency x (us)'\n"
		   "set ylabel 'fraction of calls slower than x'\nset yrange [:1.5]\n" PLOT_KEY "set grid\n"
		   "set xrange [%g:*]\n", br->timer_res_ns / 1e3);
	for (w = split ? CYC_COLD : CYC_ALL; w <= (split ? CYC_STEADY : CYC_ALL); w++)
		for (o = 0; o < OP_NR; o++) {
			const char *sep = "";

			fprintf(f, "set title '%s, %s'\nplot ",
				o == OP_GET ? "tdx_pamt_get()" : "tdx_pamt_put()",
				pname[w]);
			for (i = 0; i < 2 * S_NR; i++) {
				s = i % S_NR;
				if (idx[s][w][o] < 0 ||
				    !strat_in_pass(strat_names[s], i / S_NR))
					continue;
				fprintf(f, "%s'%s' index %d using 1:2 with steps %s title '%s'",
					sep, dat, idx[s][w][o],
					strat_gp(st, sizeof(st), strat_names[s], false),
					strat_names[s]);
				sep = ", \\\n     ";
			}
			fprintf(f, "\n");
		}
	fprintf(f, "unset multiplot\n");
	fclose(f);
	plot_run(gp, png);
}
