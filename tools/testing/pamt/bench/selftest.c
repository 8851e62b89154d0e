// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's own correctness tests (make test):
 *
 * - a tiny TD whose SEAMCALL counts are known exactly, per strategy and
 *   per cycle;
 * - small runs of every scenario: every strategy ends with gets == puts,
 *   no fake-module violation, the module's invariants intact, no page
 *   leaked and the core's installed count equal to the module's;
 * - the pressure target's shape: one full shrinker pass leaves <= 1%.
 *
 * Ends with "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

static struct bench_result br;
static int failed_now;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("    FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failed_now = 1;					\
		}							\
	} while (0)

static int run_args(const char *line)
{
	static struct bench_opts defaults;
	static int saved;
	char *copy = strdup(line), *argv[64], *tok, *save = NULL;
	int argc = 0, ret;

	if (!saved) {
		defaults = bo;
		saved = 1;
	}
	bo = defaults;
	argv[argc++] = "pamt_bench";
	for (tok = strtok_r(copy, " ", &save); tok && argc < 63;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	ret = bench_main(argc, argv, &br);
	free(copy);
	return ret;
}

static void check_all_ok(void)
{
	int s;

	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br.s[s];

		if (!r->ran)
			continue;
		CHECK(r->ok, "%s: checks failed", strat_names[s]);
		CHECK(r->gets == r->puts, "%s: gets %llu puts %llu",
		      strat_names[s], (unsigned long long)r->gets,
		      (unsigned long long)r->puts);
		CHECK(r->gets > 0, "%s: no gets", strat_names[s]);
		CHECK(r->violations == 0, "%s: %llu violations", strat_names[s],
		      (unsigned long long)r->violations);
		CHECK(r->check_bad == 0, "%s: invariants", strat_names[s]);
		CHECK(r->leaked_pages == 0, "%s: %ld pages leaked",
		      strat_names[s], r->leaked_pages);
		CHECK(r->tot[OP_GET].count == r->tot[OP_PUT].count,
		      "%s: timed gets %llu != timed puts %llu", strat_names[s],
		      (unsigned long long)r->tot[OP_GET].count,
		      (unsigned long long)r->tot[OP_PUT].count);
	}
}

#define SMALL "--host-gib 16 --mem-gib 2 --quiet "

/*
 * One TD, one vCPU, 1024 guest pages: 2 S-EPT pages, so 1026 pool pages
 * in 3 fresh 2M ranges; 11 control pages, and every pair, in one range of
 * the allocator's region.  4 ranges: 4 ADDs and 4 REMOVEs per cycle for
 * lock, atomic and eager; magazine ADDs 4 in cycle 1 and nothing after
 * (its REMOVEs come at tdx_pamt_exit(), after the counters are read).
 */
static void test_exact_seamcalls(void)
{
	static const u64 add[S_NR][2] = {
		[S_LOCK] = { 4, 4 }, [S_ATOMIC] = { 4, 4 },
		[S_EAGER] = { 4, 4 }, [S_MAG] = { 4, 0 },
	};
	static const u64 rem[S_NR][2] = {
		[S_LOCK] = { 4, 4 }, [S_ATOMIC] = { 4, 4 },
		[S_EAGER] = { 4, 4 }, [S_MAG] = { 0, 0 },
	};
	int s, c;

	CHECK(!run_args(SMALL "--scenario churn --tds 1 --vcpus 1 --pages-per-td 1024 --cycles 2"),
	      "run");
	check_all_ok();
	CHECK(br.gets_per_td == 1024 + 2 + 11, "gets per TD %lu",
	      br.gets_per_td);
	for (s = 0; s < S_NR; s++) {
		const struct sresult *r = &br.s[s];

		CHECK(r->gets == 2 * br.gets_per_td, "%s: gets %llu",
		      strat_names[s], (unsigned long long)r->gets);
		for (c = 0; c < 2; c++) {
			CHECK(r->ccyc[c].add == add[s][c],
			      "%s cycle %d: ADD %llu, want %llu", strat_names[s],
			      c + 1, (unsigned long long)r->ccyc[c].add,
			      (unsigned long long)add[s][c]);
			CHECK(r->ccyc[c].remove == rem[s][c],
			      "%s cycle %d: REMOVE %llu, want %llu",
			      strat_names[s], c + 1,
			      (unsigned long long)r->ccyc[c].remove,
			      (unsigned long long)rem[s][c]);
			CHECK(r->ccyc[c].busy == 0, "%s: BUSY %llu",
			      strat_names[s],
			      (unsigned long long)r->ccyc[c].busy);
		}
		/* 0<->1 steps: one per range and cycle, each way. */
		CHECK(r->tot[OP_GET].slow_count == 8, "%s: slow gets %llu",
		      strat_names[s],
		      (unsigned long long)r->tot[OP_GET].slow_count);
	}
	/* lock takes its lock on every get and put. */
	CHECK(br.s[S_LOCK].ctot.lock == 4 * br.gets_per_td, "lock: %llu",
	      (unsigned long long)br.s[S_LOCK].ctot.lock);
	/* atomic only on the 0->1 and 1->0 steps. */
	CHECK(br.s[S_ATOMIC].ctot.lock == 16, "atomic: %llu",
	      (unsigned long long)br.s[S_ATOMIC].ctot.lock);
	/* magazine keeps its 4 ranges idle at the end, nothing else. */
	CHECK(br.s[S_MAG].idle_pairs_end >= 4, "magazine idle %llu",
	      (unsigned long long)br.s[S_MAG].idle_pairs_end);
}

static void test_churn_small(void)
{
	CHECK(!run_args(SMALL "--scenario churn --tds 3 --pages-per-td 20000 --cycles 2"),
	      "run");
	check_all_ok();
}

static void test_5td_small_oversubscribed(void)
{
	CHECK(!run_args(SMALL "--scenario 5td --tds 3 --pages-per-td 15000 --threads-per-cpu 3 --run-pages 64"),
	      "run");
	check_all_ok();
}

static void test_frag_small(void)
{
	CHECK(!run_args(SMALL "--scenario frag --tds 3 --pages-per-td 20000 --cycles 2"),
	      "run");
	check_all_ok();
}

static void test_pressure_small(void)
{
	int s;

	CHECK(!run_args(SMALL "--scenario pressure --tds 3 --pages-per-td 20000 --cycles 2 --reclaim-ms 2"),
	      "run");
	check_all_ok();
	for (s = S_EAGER; s < S_NR; s++) {
		const struct sresult *r = &br.s[s];

		CHECK(r->full_after * 100 <= r->full_before,
		      "%s: idle %llu -> %llu", strat_names[s],
		      (unsigned long long)r->full_before,
		      (unsigned long long)r->full_after);
		CHECK(r->leaked_slots == 0, "%s: leaked %llu", strat_names[s],
		      (unsigned long long)r->leaked_slots);
	}
}

static void test_convert_small(void)
{
	int s;

	CHECK(!run_args(SMALL "--scenario convert --pages-per-td 20000"),
	      "run");
	check_all_ok();
	for (s = 0; s < S_NR; s++) {
		CHECK(br.s[s].quiet_ok, "%s: quiet pass", strat_names[s]);
		CHECK(br.s[s].storm_lat[OP_GET].count > 0, "%s: no storm",
		      strat_names[s]);
		CHECK(br.s[s].storm_lat[OP_GET].count ==
		      br.s[s].storm_lat[OP_PUT].count, "%s: storm unbalanced",
		      strat_names[s]);
	}
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "exact_seamcalls", test_exact_seamcalls },
	{ "churn_small", test_churn_small },
	{ "5td_small_oversubscribed", test_5td_small_oversubscribed },
	{ "frag_small", test_frag_small },
	{ "pressure_small", test_pressure_small },
	{ "convert_small", test_convert_small },
};

int bench_selftest(void)
{
	unsigned int i, passed = 0, failed = 0;

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		failed_now = 0;
		tests[i].fn();
		printf("%s %s\n", failed_now ? "not ok" : "ok", tests[i].name);
		fflush(stdout);
		if (failed_now)
			failed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
