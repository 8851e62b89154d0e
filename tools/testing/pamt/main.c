// SPDX-License-Identifier: GPL-2.0
/*
 * Test runner for the PAMT cache in userspace.
 *
 *   pamt_test                 run every test
 *   pamt_test NAME...         run the named tests
 *   pamt_test --list          list the tests
 *   pamt_test --stress [--threads N] [--ops N] [--seed S]
 *
 * Ends with "N passed, N failed" and exits non-zero on any failure.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"

struct pamt_env env;

static struct pamt_test *tests, **tests_tail = &tests;
static int cur_failed;

void pamt_test_register(struct pamt_test *t)
{
	*tests_tail = t;
	tests_tail = &t->next;
}

void pamt_test_failed(const char *file, int line, const char *what)
{
	fprintf(stderr, "    FAIL %s:%d: %s\n", file, line, what);
	cur_failed = 1;
}

bool pamt_test_take_failed(void)
{
	bool f = cur_failed;

	cur_failed = 0;
	return f;
}

/* ---- the environment ---- */

/*
 * Sparse: the cache covers @o->ranges; the fake module covers them and the
 * simulated memory, whose pages the pairs are.
 */
static int pamt_env_up_ranges(const struct pamt_env_opts *o,
			      const struct tdx_pamt_config *cfg)
{
	struct tdx_pamt_range pieces[PAMT_FAKE_MAX_PIECES];
	struct tdx_pamt_range mem = {
		.start_pfn = PAMT_ENV_BASE_PFN,
		.end_pfn = PAMT_ENV_BASE_PFN + o->mem_slots * TDX_PAMT_PAGES_PER_SLOT,
	};
	unsigned int i, n = 0;
	int ret;

	if (!o->mem_slots || o->nr_ranges >= PAMT_FAKE_MAX_PIECES)
		return -EINVAL;
	/* A range that is the simulated memory covers it already. */
	for (i = 0; i < o->nr_ranges; i++) {
		if (o->ranges[i].start_pfn == mem.start_pfn &&
		    o->ranges[i].end_pfn == mem.end_pfn)
			mem.start_pfn = 0;
	}
	for (i = 0; i < o->nr_ranges; i++) {
		if (mem.start_pfn && o->ranges[i].start_pfn >= mem.end_pfn) {
			pieces[n++] = mem;
			mem.start_pfn = 0;
		}
		pieces[n++] = o->ranges[i];
	}
	if (mem.start_pfn)
		pieces[n++] = mem;
	if (pamt_fake_init_ranges(pieces, n))
		return -ENOMEM;
	ret = tdx_pamt_init(o->ranges, o->nr_ranges, cfg);
	if (ret) {
		pamt_fake_exit();
		return ret;
	}
	env.base_pfn = PAMT_ENV_BASE_PFN;
	env.nr_slots = 0;
	env.up = true;
	pamt.wait_ns = PAMT_ENV_WAIT_NS;
	return 0;
}

int pamt_env_up(const struct pamt_env_opts *o)
{
	struct tdx_pamt_range ranges[2];
	struct tdx_pamt_config cfg = {
		.mag_size = o->mag_size,
		.idle_cap = o->idle_cap,
		.ops = &pamt_env_ops,
	};
	unsigned long nr_slots = o->nr_slots ? o->nr_slots : 64;
	unsigned long pages = nr_slots * TDX_PAMT_PAGES_PER_SLOT;
	unsigned int nr = 1;
	int ret;

	memset(&env, 0, sizeof(env));
	memset(pamt_sim_node_stats, 0, sizeof(pamt_sim_node_stats));
	pamt_sim_set_nr_cpus(o->nr_cpus ? o->nr_cpus : 4);
	pamt_sim_set_cpu(0);
	atomic_long_set(&pamt_sim_warnings, 0);
	if (pamt_sim_mem_init(PAMT_ENV_BASE_PFN,
			      o->mem_slots ? o->mem_slots * TDX_PAMT_PAGES_PER_SLOT :
					     pages))
		return -ENOMEM;
	if (o->ranges)
		return pamt_env_up_ranges(o, &cfg);
	if (pamt_fake_init(PAMT_ENV_BASE_PFN, PAMT_ENV_BASE_PFN + pages))
		return -ENOMEM;

	ranges[0].start_pfn = PAMT_ENV_BASE_PFN;
	ranges[0].end_pfn = PAMT_ENV_BASE_PFN + pages;
	if (o->hole) {
		unsigned long mid = nr_slots / 2 - 1;

		ranges[0].end_pfn = PAMT_ENV_BASE_PFN +
				    mid * TDX_PAMT_PAGES_PER_SLOT;
		ranges[1].start_pfn = PAMT_ENV_BASE_PFN +
				      (mid + 2) * TDX_PAMT_PAGES_PER_SLOT;
		ranges[1].end_pfn = PAMT_ENV_BASE_PFN + pages;
		nr = 2;
	}
	ret = tdx_pamt_init(ranges, nr, &cfg);
	if (ret)
		return ret;
	env.base_pfn = PAMT_ENV_BASE_PFN;
	env.nr_slots = nr_slots;
	env.up = true;
	pamt.wait_ns = PAMT_ENV_WAIT_NS;
	return 0;
}

void pamt_env_up_default(void)
{
	struct pamt_env_opts o = { };

	if (pamt_env_up(&o))
		pamt_sim_fatal("environment set-up failed", __FILE__, __LINE__);
}

/*
 * Every test ends here: the accounting balances, the fake module saw no
 * more violations than the test provoked, no lock or atomic section leaks,
 * and after exit every page is back in the allocator and meminfo's
 * reclaimable count where it started.
 */
void pamt_env_down(void)
{
	u64 v[TDX_PAMT_STAT_NR];
	long violations, pages;
	int nid;

	pamt_sim_objcg = NULL;
	if (!env.up)
		return;
	if (pamt_sim_atomic_depth || pamt_sim_raw_depth || pamt_sim_irq_depth ||
	    pamt_sim_locks_held())
		pamt_test_failed(__FILE__, __LINE__, "test left a lock or atomic section");
	if (!pamt_accounting_ok())
		pamt_test_failed(__FILE__, __LINE__, "pair accounting does not balance");
	if (pamt_fake_check_all())
		pamt_test_failed(__FILE__, __LINE__, "fake module invariants");
	tdx_pamt_read_stats(v);
	if ((long)atomic64_read(&pamt_fake.pairs) != (long)v[TDX_PAMT_STAT_INSTALLED])
		pamt_test_failed(__FILE__, __LINE__, "module pairs != installed slots");

	tdx_pamt_exit();
	for (nid = 0; nid < PAMT_SIM_MAX_NODES; nid++) {
		pages = pamt_sim_node_stat(nid, NR_KERNEL_MISC_RECLAIMABLE);
		if (!pages)
			continue;
		fprintf(stderr, "    KReclaimable %ld pages on node %d after exit\n",
			pages, nid);
		pamt_test_failed(__FILE__, __LINE__, "meminfo not back to 0");
	}
	violations = atomic64_read(&pamt_fake.violations);
	if (violations != env.expect_violations) {
		fprintf(stderr, "    %ld fake-module violations, %ld expected\n",
			violations, env.expect_violations);
		pamt_test_failed(__FILE__, __LINE__, "unexpected violations");
	}
	if (atomic_long_read(&pamt_sim_warnings) != env.expect_warnings) {
		fprintf(stderr, "    %ld warnings, %ld expected\n",
			atomic_long_read(&pamt_sim_warnings), env.expect_warnings);
		pamt_test_failed(__FILE__, __LINE__, "unexpected warnings");
	}
	/* Leaked slots keep their pair in the module, by design. */
	if (pamt_sim_pages_in_use() !=
	    (unsigned long)(env.held_pages + 2 * atomic64_read(&pamt_fake.pairs))) {
		fprintf(stderr, "    %lu pages in use, %ld held by the test, ",
			pamt_sim_pages_in_use(), env.held_pages);
		fprintf(stderr, "%lld pairs in the module\n",
			(long long)atomic64_read(&pamt_fake.pairs));
		pamt_test_failed(__FILE__, __LINE__, "pages leaked");
	}
	pamt_fake_exit();
	pamt_sim_mem_exit();
	env.up = false;
}

/* ---- helpers ---- */
unsigned long slot_pfn(unsigned long slot, unsigned long page)
{
	return env.base_pfn + slot * TDX_PAMT_PAGES_PER_SLOT + page;
}

unsigned long slot_word(unsigned long slot)
{
	return (u32)atomic_read(&pamt.slots[slot].word);
}

void slot_set_word(unsigned long slot, unsigned long word)
{
	atomic_set(&pamt.slots[slot].word, word);
}

/* The word of @pfn's range, wherever it is; @pfn must be covered. */
unsigned long pfn_word(unsigned long pfn)
{
	return (u32)atomic_read(pamt_slot_lookup(pfn));
}

void pfn_set_word(unsigned long pfn, unsigned long word)
{
	atomic_set(pamt_slot_lookup(pfn), word);
}

u64 stat(enum tdx_pamt_stat s)
{
	u64 vals[TDX_PAMT_STAT_NR];

	tdx_pamt_read_stats(vals);
	return vals[s];
}

void stats_snapshot(u64 *vals)
{
	tdx_pamt_read_stats(vals);
}

long fake_calls(enum pamt_fake_op op)
{
	return atomic64_read(&pamt_fake.calls[op]);
}

/*
 * Pages taken from the allocator for pairs, less pages given back, equal
 * two per pair in the module, in a magazine, or held by the test.
 */
bool pamt_accounting_ok(void)
{
	u64 v[TDX_PAMT_STAT_NR];
	long in_pairs;

	tdx_pamt_read_stats(v);
	in_pairs = (long)(v[TDX_PAMT_STAT_PAGE_ALLOC] - v[TDX_PAMT_STAT_PAGE_FREE]);
	if (in_pairs != 2 * ((long)v[TDX_PAMT_STAT_INSTALLED] +
			     (long)v[TDX_PAMT_STAT_CACHED_PAIRS] + env.held_pairs)) {
		fprintf(stderr, "    accounting: %ld pair pages = 2 * (%llu installed + ",
			in_pairs, (unsigned long long)v[TDX_PAMT_STAT_INSTALLED]);
		fprintf(stderr, "%llu cached + %ld held)\n",
			(unsigned long long)v[TDX_PAMT_STAT_CACHED_PAIRS],
			env.held_pairs);
		return false;
	}
	if (pamt_sim_pages_in_use() != (unsigned long)(in_pairs + env.held_pages)) {
		fprintf(stderr, "    accounting: %lu pages in use, %ld in pairs, %ld held\n",
			pamt_sim_pages_in_use(), in_pairs, env.held_pages);
		return false;
	}
	return true;
}

/*
 * Idle memory as the cap counts it: idle slots plus free pairs in every
 * CPU's magazines.
 */
u64 idle_memory(void)
{
	u64 v[TDX_PAMT_STAT_NR];

	tdx_pamt_read_stats(v);
	return v[TDX_PAMT_STAT_IDLE_SLOTS] + v[TDX_PAMT_STAT_CACHED_PAIRS];
}

/* List entries reclaim has walked so far: its work, as a count. */
unsigned long reclaim_work(void)
{
	return READ_ONCE(pamt_sim_lru_walked);
}

/*
 * A free pair outside any slot, for a test to hold: from this CPU's
 * magazine, else from the page allocator.  Return: 0 or -ENOMEM.
 * pamt_mag_push() gives it back.
 */
int take_pair(struct tdx_pamt_pair *pair)
{
	if (pamt_mag_pop(pair))
		return 0;
	return pamt_pair_alloc(pair, GFP_KERNEL);
}

/* What the kernel's worker does once put or the shrinker deferred work. */
void run_deferred(void)
{
	pamt_shrink_deferred();
}

/* A new idle cap, and the worker's trim down to it. */
void set_idle_cap(unsigned long cap)
{
	WRITE_ONCE(pamt.idle_cap, cap);
	pamt_shrink_deferred();
}

/*
 * Run @fn in a child process; returns the signal that killed it, or 0.
 * For tests that a checker must abort.
 */
int run_in_child(void (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* The abort message is the expected outcome; keep it short. */
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int pamt_stress_main(int argc, char **argv);

static bool test_selected(const struct pamt_test *t, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], t->name))
			return true;
	return argc == 1;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, n;
	struct pamt_test *t;

	if (argc > 1 && !strcmp(argv[1], "--stress"))
		return pamt_stress_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (t = tests; t; t = t->next)
			printf("%s\n", t->name);
		return 0;
	}

	pamt_sim_quiet = !getenv("PAMT_VERBOSE");
	/* KTAP (Documentation/dev-tools/ktap.rst), as KUnit prints it. */
	for (t = tests, n = 0; t; t = t->next)
		n += test_selected(t, argc, argv);
	printf("KTAP version 1\n1..%d\n", n);
	for (t = tests; t; t = t->next) {
		if (!test_selected(t, argc, argv))
			continue;
		cur_failed = 0;
		t->fn();
		pamt_env_down();
		printf("%s %d %s\n", cur_failed ? "not ok" : "ok",
		       passed + failed + 1, t->name);
		fflush(stdout);
		if (cur_failed)
			failed++;
		else
			passed++;
	}
	/* The line make test adds up across its parts. */
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
