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
				       s == S_MAG_ARENA ? "+arena" :
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
}

static double pct(u64 n, u64 of)
{
	return of ? 100.0 * (double)n / (double)of : 0;
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
	if (bo.huge_pct)
		printf(" %8s %8s %8s %8s %8s", "2M req", "2M ok",
		       "fb:alloc", "fb:evict", "fb:aug");
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
		if (bo.huge_pct)
			printf(" %8llu %8llu %8llu %8llu %8llu",
			       (unsigned long long)m->huge_req,
			       (unsigned long long)m->huge_ok,
			       (unsigned long long)m->fb_alloc,
			       (unsigned long long)m->fb_evict,
			       (unsigned long long)m->fb_aug);
		printf("\n");
	}
	printf("  (BUSY: every TDX_OPERAND_BUSY the fake module answered, PAMT.ADD/REMOVE and the TD's own calls;\n"
	       "   TD BUSY: of them, PAGE.AUG/REMOVE at 4K and 2M and control pages;\n"
	       "   pair pgs: pages held as pair pages, installed, cached or reserved; 2M w/pair: distinct 2M blocks\n"
	       "   holding one; TD-usable: blocks not wholly pair pages (split pool: the pool's); poisoned: TD-usable\n"
	       "   blocks holding a pair page, which no TD can map at 2M%s)\n",
	       bo.huge_pct ? ";\n   2M req/ok: 2M mappings asked for and made; fb: fell back to 4K because no 2M block was\n"
	       "   wholly free (alloc), the range's pair could not be evicted (evict), the module refused (aug)" : "");
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

static const char *verdict(bool met)
{
	return met ? "met" : "MISSED";
}

/* The targets: magazine against atomic, same run. */
static void print_targets(const struct bench_result *br)
{
	const struct sresult *m = &br->s[S_MAG], *a = &br->s[S_ATOMIC];
	const char *sc = bo.scenario;
	bool cyc = !strcmp(sc, "churn") || !strcmp(sc, "frag") ||
		   !strcmp(sc, "pressure");
	unsigned int c;

	if (!m->ran)
		return;
	printf("\ntargets (magazine vs atomic):\n");
	if (cyc) {
		u64 ops = m->tot[OP_GET].count + m->tot[OP_PUT].count;
		double lpm = per_million(m->ctot.lock, ops);

		printf("  global-lock acquisitions per 1M get+put, whole run: %.2f (churn target <= 10): %s\n",
		       lpm, !strcmp(sc, "churn") ? verdict(lpm <= 10) :
		       "info, not a target here");
	}
	if (!a->ran)
		return;
	if (cyc && m->ncycles > 1) {
		bool tgt = !strcmp(sc, "churn");
		u64 ms = 0, as = 0, mn = 0, an = 0;

		for (c = 1; c < m->ncycles; c++) {
			ms += m->ccyc[c].add + m->ccyc[c].remove;
			as += a->ccyc[c].add + a->ccyc[c].remove;
			mn += m->cyc[c][OP_GET].slow_ns + m->cyc[c][OP_PUT].slow_ns;
			an += a->cyc[c][OP_GET].slow_ns + a->cyc[c][OP_PUT].slow_ns;
		}
		printf("  cycles 2..%u SEAMCALLs: %llu vs %llu = %.3f%% (churn target <= 1%%): %s\n",
		       m->ncycles, (unsigned long long)ms, (unsigned long long)as,
		       as ? 100.0 * ms / as : 0,
		       tgt ? verdict(ms * 100 <= as) : "info, not a target here");
		printf("  cycles 2..%u slow_ns (get+put): %.2f ms vs %.2f ms = %.3f (churn target <= 0.1): %s\n",
		       m->ncycles, mn / 1e6, an / 1e6, an ? (double)mn / an : 0,
		       tgt ? verdict(mn * 10 <= an) : "info, not a target here");
	}
	if (!strcmp(sc, "5td")) {
		u64 mt = m->tot[OP_GET].total + m->tot[OP_PUT].total;
		u64 at = a->tot[OP_GET].total + a->tot[OP_PUT].total;
		u64 mp = lat_quantile(&m->tot[OP_GET], 0.999);
		u64 ap = lat_quantile(&a->tot[OP_GET], 0.999);

		printf("  total get+put: %.1f ms vs %.1f ms (<=): %s\n",
		       mt / 1e6, at / 1e6, verdict(mt <= at));
		printf("  max get: %.1f us vs %.1f us (<=): %s\n",
		       m->tot[OP_GET].max / 1e3, a->tot[OP_GET].max / 1e3,
		       verdict(m->tot[OP_GET].max <= a->tot[OP_GET].max));
		printf("  p99.9 get: %.2f us vs %.2f us (<=): %s\n", mp / 1e3,
		       ap / 1e3, verdict(mp <= ap));
	}
	if (!strcmp(sc, "frag")) {
		u64 mt = m->tot[OP_GET].total + m->tot[OP_PUT].total;
		u64 at = a->tot[OP_GET].total + a->tot[OP_PUT].total;
		u64 ms = m->ctot.add + m->ctot.remove;
		u64 as = a->ctot.add + a->ctot.remove;

		printf("  total get+put: %.1f ms vs %.1f ms = %.3fx (<= 1.05x): %s\n",
		       mt / 1e6, at / 1e6, at ? (double)mt / at : 0,
		       verdict(mt * 100 <= at * 105));
		printf("  SEAMCALLs (whole run, exit excluded): %llu vs %llu (<=): %s\n",
		       (unsigned long long)ms, (unsigned long long)as,
		       verdict(ms <= as));
	}
	if (!strcmp(sc, "convert")) {
		double rm = lat_avg(&m->quiet_slow_get) ?
			    lat_avg(&m->slow_get) / lat_avg(&m->quiet_slow_get) : 0;
		double ra = lat_avg(&a->quiet_slow_get) ?
			    lat_avg(&a->slow_get) / lat_avg(&a->quiet_slow_get) : 0;

		printf("  bystander slow-get mean, storm/quiet: %.2fx (atomic %.2fx) (<= 1.2x): %s\n",
		       rm, ra, verdict(rm <= 1.2));
	}
	if (!strcmp(sc, "pressure")) {
		printf("  after one direct-reclaim attempt (do_shrink_slab, priorities 12..0; a second if the worker freed chunks): idle %llu -> %llu (<= 1%%), leaked %llu: %s\n",
		       (unsigned long long)m->full_before,
		       (unsigned long long)m->full_after,
		       (unsigned long long)m->leaked_slots,
		       verdict(m->full_after * 100 <= m->full_before &&
			       !m->leaked_slots && m->ok));
	}
}

/*
 * The arena's targets, shared memory, same run: against atomic
 * for poisoned blocks and times, against magazine for BUSY.
 */
static void print_arena_targets(const struct bench_result *br)
{
	const struct sresult *x = &br->s[S_MAG_ARENA], *a = &br->s[S_ATOMIC];
	const struct sresult *m = &br->s[S_MAG];
	u64 xb, mb, xt = 0, at = 0;
	unsigned int c;

	if (!x->ran || !a->ran || bo.split_pool ||
	    !strcmp(bo.scenario, "convert"))
		return;
	printf("\ntargets (magazine+arena vs atomic, shared memory):\n");
	printf("  poisoned 2M blocks: %llu vs %llu (<= 1%%): %s\n",
	       (unsigned long long)x->mem.poisoned,
	       (unsigned long long)a->mem.poisoned,
	       verdict(x->mem.poisoned * 100 <= a->mem.poisoned));
	if (m->ran) {
		xb = x->ctot.busy + x->mem.busy_td;
		mb = m->ctot.busy + m->mem.busy_td;
		printf("  BUSY: %llu vs magazine's %llu (<= 10%%): %s%s\n",
		       (unsigned long long)xb, (unsigned long long)mb,
		       verdict(xb * 10 <= mb),
		       mb ? "" : " (magazine saw no BUSY: nothing to compare)");
	}
	xt = x->cyc[0][OP_GET].total + x->cyc[0][OP_PUT].total;
	at = a->cyc[0][OP_GET].total + a->cyc[0][OP_PUT].total;
	printf("  cold boot (cycle 1) get+put: %.1f ms vs %.1f ms = %.3fx (<= 1.05x): %s\n",
	       xt / 1e6, at / 1e6, at ? (double)xt / at : 0,
	       verdict(xt * 100 <= at * 105));
	if (x->ncycles > 1) {
		xt = at = 0;
		for (c = 1; c < x->ncycles; c++) {
			xt += x->cyc[c][OP_GET].total + x->cyc[c][OP_PUT].total;
			at += a->cyc[c][OP_GET].total + a->cyc[c][OP_PUT].total;
		}
		printf("  churn (cycles 2..%u) get+put: %.1f ms vs %.1f ms = %.3fx (<= 1.05x): %s\n",
		       x->ncycles, xt / 1e6, at / 1e6, at ? (double)xt / at : 0,
		       verdict(xt * 100 <= at * 105));
	}
	printf("  wall (info): %.2f s vs %.2f s\n", x->wall_s, a->wall_s);
	printf("  chunks held after a full drain of idle slots: %llu (%llu pages) (= 0): %s\n",
	       (unsigned long long)x->chunks_after_drain,
	       (unsigned long long)x->chunks_after_drain * 512,
	       verdict(!x->chunks_after_drain));
}

/*
 * The reclaim targets: after the shrinker ran to exhaustion,
 * what the cache holds against the kept ranges' pair memory (8 KiB each);
 * the bound is 1.2 times that plus one chunk (2 MiB) per CPU.
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
	printf("  bound: 1.2 x kept pair memory + one 2 MiB chunk per CPU (%u CPUs)\n",
	       ncpu);
	for (m = 0; m < 2; m++) {
		printf("  %s\n", what[m]);
		printf("    %-14s %8s %11s %10s %10s %7s\n", "strategy", "kept",
		       "kept MiB", "held MiB", "bound MiB", "held/kept");
		for (s = 0; s < S_NR; s++) {
			const struct sresult *r = &br->s[s];
			double kept = r->keep_ranges[m] * 8.0 / 1024;
			double held = r->keep_held_pages[m] * 4.0 / 1024;
			double bound = 1.2 * kept + 2.0 * ncpu;

			if (!r->ran)
				continue;
			printf("    %-14s %8llu %11.1f %10.1f %10.1f %6.2fx",
			       strat_names[s],
			       (unsigned long long)r->keep_ranges[m], kept,
			       held, bound, kept ? held / kept : 0);
			if (s == S_MAG_ARENA)
				printf("  %s", m ? (held <= bound ? "(within)" : "(over)") :
				       verdict(held <= bound));
			printf("\n");
		}
	}
}

void report_print(const struct bench_result *br)
{
	char title[256];

	printf("\n== pamt_bench scenario %s: %s\n", bo.scenario,
	       scenario_title(br, title, sizeof(title)));
	printf("   SEAMCALL costs %s\n", BENCH_MODEL_SOURCE);
	if (bo.split_pool)
		printf("   host: %u GiB covered (%lu 2M slots, core idle cap %lu = a quarter), split TD pool %lu GiB, run %u pages, frag %u%%, seed %llu\n",
		       bo.host_gib, br->host_slots, br->idle_cap,
		       (unsigned long)(br->nr_tds < 2 ? 2 : br->nr_tds) *
		       bo.mem_gib, bo.run_pages, bo.frag_pct,
		       (unsigned long long)bo.seed);
	else
		printf("   host: %u GiB covered (%lu 2M slots, core idle cap %lu = a quarter), shared memory (one buddy allocator), frag %u%%, 2M share %u%%, seed %llu\n",
		       bo.host_gib, br->host_slots, br->idle_cap, bo.frag_pct,
		       bo.huge_pct, (unsigned long long)bo.seed);
	printf("   %lu gets per TD boot, %u workers on %u CPUs (%u per CPU), softirq share of S-EPT puts %u%%, wall %.1fs\n\n",
	       br->gets_per_td, br->nworkers, br->ncpu, bo.threads_per_cpu,
	       bo.softirq_pct, br->total_s);
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
	print_targets(br);
	print_arena_targets(br);
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
	fprintf(f, "\"params\":{\"tds\":%u,\"vcpus\":%u,\"mem_gib\":%u,\"host_gib\":%u,\"pages_per_td\":%lu,\"gets_per_td\":%lu,\"cycles\":%u,\"threads_per_cpu\":%u,\"workers\":%u,\"cpus\":%u,\"run_pages\":%u,\"frag_pct\":%u,\"softirq_pct\":%u,\"seed\":%llu,\"host_slots\":%lu,\"idle_cap\":%lu,\"reclaim_ms\":%u,\"reclaim_shift\":%u,\"conv_pages\":%u,\"memory\":\"%s\",\"huge_pct\":%u,\"wall_s\":%.2f},",
		br->nr_tds, bo.vcpus, bo.mem_gib, bo.host_gib, bo.pages_per_td,
		br->gets_per_td, br->ncycles, bo.threads_per_cpu, br->nworkers,
		br->ncpu, bo.run_pages, bo.frag_pct, bo.softirq_pct,
		(unsigned long long)bo.seed, br->host_slots, br->idle_cap,
		bo.reclaim_ms, bo.reclaim_shift, bo.conv_pages,
		bo.split_pool ? "split" : "shared", bo.huge_pct, br->total_s);
	fprintf(f, "\"modelled\":{\"add_ns\":%llu,\"remove_ns\":%llu,\"add_range_ns\":[%llu,%llu],\"remove_range_ns\":[%llu,%llu],\"source\":\"%s\"},",
		(unsigned long long)bo.add_ns, (unsigned long long)bo.remove_ns,
		(unsigned long long)bo.add_ns / 2,
		(unsigned long long)bo.add_ns * 18 / 4,
		(unsigned long long)bo.remove_ns / 2,
		(unsigned long long)bo.remove_ns * 11 / 2, BENCH_MODEL_SOURCE);
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
		fprintf(f, ",\"memory\":{\"busy\":%llu,\"busy_td\":%llu,\"blocks_2m\":%llu,\"td_usable_2m\":%llu,\"pair_pages\":%llu,\"pair_blocks_2m\":%llu,\"poisoned_2m\":%llu,\"huge_requested\":%llu,\"huge_mapped\":%llu,\"huge_fallback_alloc\":%llu,\"huge_fallback_evict\":%llu,\"huge_fallback_aug\":%llu,\"arena_chunks_after_drain\":%llu}",
			(unsigned long long)(r->ctot.busy + r->mem.busy_td),
			(unsigned long long)r->mem.busy_td,
			(unsigned long long)r->mem.blocks,
			(unsigned long long)r->mem.td_usable,
			(unsigned long long)r->mem.pair_pages,
			(unsigned long long)r->mem.pair_blocks,
			(unsigned long long)r->mem.poisoned,
			(unsigned long long)r->mem.huge_req,
			(unsigned long long)r->mem.huge_ok,
			(unsigned long long)r->mem.fb_alloc,
			(unsigned long long)r->mem.fb_evict,
			(unsigned long long)r->mem.fb_aug,
			(unsigned long long)r->chunks_after_drain);
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
 * ---- gnuplot: the latency tail per strategy, get and put apart ----
 * 1 - CDF on log-log axes, where the strategies differ; one colour per
 * strategy (plot.h), the same in every picture.
 */
void report_plot(const struct bench_result *br, const char *png)
{
	char dat[4096], gp[4096], cmd[8300];
	FILE *f;
	int s, o, idx[S_NR];

	if (system("command -v gnuplot >/dev/null 2>&1")) {
		fprintf(stderr, "pamt_bench: gnuplot not found; no plot written (apt-get install gnuplot-nox)\n");
		return;
	}
	snprintf(dat, sizeof(dat), "%s.dat", png);
	snprintf(gp, sizeof(gp), "%s.gp", png);
	f = fopen(dat, "w");
	if (!f) {
		perror(dat);
		return;
	}
	/* Block 2 * idx[s] + o: strategy s, op o. */
	for (s = 0, o = 0; s < S_NR; s++) {
		idx[s] = -1;
		if (!br->s[s].ran)
			continue;
		idx[s] = o++;
		fprintf(f, "# %s get\n", strat_names[s]);
		plot_write_tail(f, &br->s[s].tot[OP_GET]);
		fprintf(f, "# %s put\n", strat_names[s]);
		plot_write_tail(f, &br->s[s].tot[OP_PUT]);
	}
	fclose(f);
	f = fopen(gp, "w");
	if (!f) {
		perror(gp);
		return;
	}
	fprintf(f, "set terminal pngcairo size 1400,560 noenhanced\nset output '%s'\n", png);
	fprintf(f, "set multiplot layout 1,2 title \"pamt_bench %s: latency tail, all cycles (SEAMCALL costs modelled)\"\n",
		bo.scenario);
	fprintf(f, "set logscale xy\nset format y '%%g'\nset xlabel 'latency x (us)'\n"
		   "set ylabel 'fraction of calls slower than x'\nset key top right\nset grid\n");
	for (o = 0; o < OP_NR; o++) {
		int first = 1;

		fprintf(f, "set title '%s'\nplot ", o == OP_GET ? "tdx_pamt_get()" : "tdx_pamt_put()");
		for (s = 0; s < S_NR; s++) {
			if (idx[s] < 0)
				continue;
			fprintf(f, "%s'%s' index %d using 1:2 with steps lw 2 lc rgb '%s' title '%s'",
				first ? "" : ", \\\n     ", dat, 2 * idx[s] + o,
				strat_color(strat_names[s]), strat_names[s]);
			first = 0;
		}
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gnuplot '%s'", gp);
	if (system(cmd))
		fprintf(stderr, "pamt_bench: gnuplot failed on %s\n", gp);
	else if (!bo.quiet)
		fprintf(stderr, "pamt_bench: wrote %s\n", png);
}
