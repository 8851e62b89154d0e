// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's own correctness tests (make test):
 *
 * - a tiny TD whose SEAMCALL counts are known exactly, per strategy and
 *   per cycle;
 * - small runs of every scenario: every strategy ends with gets == puts,
 *   no fake-module violation, the module's invariants intact, no page
 *   leaked and the core's installed count equal to the module's;
 * - the pressure target's shape: one direct-reclaim attempt (do_shrink_slab()
 *   replayed, priorities 12..0; a second if the worker left any) leaves
 *   <= 1%;
 * - the reclaim target: four of five TDs torn down, magazine holds
 *   exactly the survivor's pair memory;
 * - the memory columns: a pair page in a TD block counts as poisoned, a
 *   block wholly of pair pages does not; shared memory poisons the tiny
 *   TD's blocks, a split pool none.
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
 * lock and atomic; lean keeps one range idle (its cap), so 3 of each but
 * the 4 ADDs of cycle 1; magazine ADDs 4 in cycle 1 and nothing after
 * (its REMOVEs come at tdx_pamt_exit(), after the counters are read).
 */
static void test_exact_seamcalls(void)
{
	static const u64 add[S_NR][2] = {
		[S_LOCK] = { 4, 4 }, [S_ATOMIC] = { 4, 4 },
		[S_LEAN] = { 4, 3 }, [S_MAG] = { 4, 0 },
	};
	static const u64 rem[S_NR][2] = {
		[S_LOCK] = { 4, 4 }, [S_ATOMIC] = { 4, 4 },
		[S_LEAN] = { 3, 3 }, [S_MAG] = { 0, 0 },
	};
	int s, c;

	CHECK(!run_args(SMALL "--scenario churn --tds 1 --vcpus 1 --pages-per-td 1024 --cycles 2 --split-pool"),
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

/*
 * bench_mem_scan() on memory laid out by hand (the simulated memory and
 * the fake module alone): block 0 holds a TD page and a page that is no TD
 * page (a pair page), block 1 is wholly such pages, block
 * 2 is wholly TD pages, block 3 is free.
 */
static void test_mem_scan(void)
{
	const unsigned long base = 0x100000, per = TDX_PAMT_PAGES_PER_SLOT;
	struct bench_mem m;
	struct page *pairs, *td;
	unsigned long i;

	CHECK(!pamt_sim_mem_init(base, 4 * per), "mem");
	CHECK(!pamt_fake_init(base, base + 4 * per), "fake");
	pool_init_shared(base, 4 * per, 0);
	CHECK(pamt_sim_alloc_pfn(base + 7), "td page");
	set_bit(7, pamt_fake.td_map);
	pairs = alloc_pages(GFP_KERNEL, PAMT_SIM_MAX_ORDER);
	td = alloc_pages(GFP_KERNEL, PAMT_SIM_MAX_ORDER);
	CHECK(pairs && td, "2M blocks");
	if (!pairs || !td)
		goto out;
	for (i = 0; i < per; i++)
		set_bit(page_to_pfn(td) - base + i, pamt_fake.td_map);

	bench_mem_scan(&m);
	CHECK(m.blocks == 4, "blocks %llu", (unsigned long long)m.blocks);
	CHECK(m.poisoned == 0 && m.pair_blocks == 1 && m.pair_pages == per &&
	      m.td_usable == 3, "no pair page yet: poisoned %llu pair blocks %llu pages %llu usable %llu",
	      (unsigned long long)m.poisoned, (unsigned long long)m.pair_blocks,
	      (unsigned long long)m.pair_pages, (unsigned long long)m.td_usable);

	/* A pair page forced into the TD's block. */
	CHECK(pamt_sim_alloc_pfn(base + 300), "pair page");
	bench_mem_scan(&m);
	CHECK(m.poisoned == 1 && m.pair_blocks == 2 && m.pair_pages == per + 1 &&
	      m.td_usable == 3, "poisoned %llu pair blocks %llu pages %llu usable %llu",
	      (unsigned long long)m.poisoned, (unsigned long long)m.pair_blocks,
	      (unsigned long long)m.pair_pages, (unsigned long long)m.td_usable);
out:
	pool_exit();
	pamt_fake_exit();
	pamt_sim_mem_exit();
}

/*
 * The tiny TD of exact_seamcalls in shared memory: v6's unmovable pair
 * pages share 3 blocks with control and TD pages, so there are 3 ranges,
 * not 4, and every one is poisoned.  Ours are reclaimable: they sit in one
 * block of their own, which counts as poisoned only because its free pages
 * are not pair pages.  A split pool poisons none.
 */
static void test_shared_memory_poisons(void)
{
	unsigned int n;
	int s;

	CHECK(!run_args(SMALL "--scenario churn --tds 1 --vcpus 1 --pages-per-td 1024 --cycles 2"),
	      "run");
	check_all_ok();
	for (s = 0; s < S_NR; s++) {
		const struct bench_mem *m = &br.s[s].mem;

		CHECK(br.s[s].ccyc[0].add == 3, "%s: ADD %llu", strat_names[s],
		      (unsigned long long)br.s[s].ccyc[0].add);
		n = s == S_LEAN || s == S_MAG ? 1 : 3;
		CHECK(m->poisoned == n && m->pair_blocks == n,
		      "%s: poisoned %llu, pair blocks %llu, not %u",
		      strat_names[s], (unsigned long long)m->poisoned,
		      (unsigned long long)m->pair_blocks, n);
		CHECK(m->td_usable == m->blocks && m->blocks == 16 * 512,
		      "%s: usable %llu of %llu", strat_names[s],
		      (unsigned long long)m->td_usable,
		      (unsigned long long)m->blocks);
		CHECK(m->pair_pages >= 6, "%s: pair pages %llu", strat_names[s],
		      (unsigned long long)m->pair_pages);
	}
	CHECK(!run_args(SMALL "--scenario churn --tds 1 --vcpus 1 --pages-per-td 1024 --cycles 2 --split-pool"),
	      "run");
	check_all_ok();
	for (s = 0; s < S_NR; s++) {
		const struct bench_mem *m = &br.s[s].mem;

		CHECK(m->poisoned == 0 && m->pair_blocks >= 1,
		      "%s split: poisoned %llu, pair blocks %llu",
		      strat_names[s], (unsigned long long)m->poisoned,
		      (unsigned long long)m->pair_blocks);
	}
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
	for (s = S_LEAN; s < S_NR; s++) {
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

/*
 * Four of five TDs torn down, each TD's memory in ranges of its own (a
 * split pool), the shrinker run to exhaustion: magazine holds the kept
 * ranges' pairs, two pages each, and nothing else.
 */
static void test_reclaim_4_of_5(void)
{
	CHECK(!run_args(SMALL "--scenario reclaim --pages-per-td 200000 --split-pool"),
	      "run");
	check_all_ok();
	CHECK(br.s[S_MAG].ran, "magazine");
	CHECK(br.s[S_MAG].keep_ranges[0] > 0, "magazine: no range kept");
	CHECK(br.s[S_MAG].keep_held_pages[0] == 2 * br.s[S_MAG].keep_ranges[0],
	      "magazine: held %llu pages for %llu kept ranges",
	      (unsigned long long)br.s[S_MAG].keep_held_pages[0],
	      (unsigned long long)br.s[S_MAG].keep_ranges[0]);
}

/*
 * The busy-machine verdict: the calibration loop's share of a CPU, and
 * other runnable tasks against the CPUs; the load average is not used
 * (make bench's previous scenario raises it).
 */
static void test_load_busy(void)
{
	struct load_probe quiet = { .ncpu = 2, .loadavg = 3.9,
				    .others = 0.2, .cpu_share = 0.97 };
	struct load_probe p;

	CHECK(!load_busy(&quiet), "a quiet machine after a heavy scenario");
	p = quiet;
	p.cpu_share = 0.5;
	CHECK(load_busy(&p), "the calibration loop got half a CPU");
	p = quiet;
	p.others = 1;
	CHECK(load_busy(&p), "one other runnable task on two CPUs");
	p = quiet;
	p.ncpu = 16;
	p.others = 1;
	CHECK(!load_busy(&p), "one other runnable task on sixteen CPUs");
	load_probe(&p);
	CHECK(p.ncpu >= 1 && p.cpu_share > 0 && p.cpu_share <= 1.05,
	      "probe: %u CPUs, share %.2f", p.ncpu, p.cpu_share);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "load_busy", test_load_busy },
	{ "exact_seamcalls", test_exact_seamcalls },
	{ "mem_scan", test_mem_scan },
	{ "shared_memory_poisons", test_shared_memory_poisons },
	{ "churn_small", test_churn_small },
	{ "5td_small_oversubscribed", test_5td_small_oversubscribed },
	{ "frag_small", test_frag_small },
	{ "pressure_small", test_pressure_small },
	{ "convert_small", test_convert_small },
	{ "reclaim_4_of_5", test_reclaim_4_of_5 },
};

int bench_selftest(void)
{
	unsigned int i, passed = 0, failed = 0;

	/* KTAP (Documentation/dev-tools/ktap.rst), as KUnit prints it. */
	printf("KTAP version 1\n1..%zu\n", ARRAY_SIZE(tests));
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		failed_now = 0;
		tests[i].fn();
		printf("%s %u %s\n", failed_now ? "not ok" : "ok", i + 1,
		       tests[i].name);
		fflush(stdout);
		if (failed_now)
			failed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
