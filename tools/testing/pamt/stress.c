// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: threads on simulated CPUs hammer shared and private slots with a
 * random mix of get, get through a reserve in atomic context, put, evict,
 * shrinker scans, full drains and the deferred worker, which take pairs
 * from every CPU's magazine while its CPU uses it, while the fake module
 * injects BUSY and failures and the page allocator fails now and then.
 * Every get is followed, sometimes, by PAGE.AUG of the page, so the fake
 * module sees any REMOVE of a range in use.
 *
 * Some CPUs carry two threads: the second plays the softirq that
 * interrupts the first.
 *
 * At the end the accounting must balance exactly: pair pages allocated
 * = 2 * (installed + cached + reserved) + pages freed, and after exit
 * every page is back.  The threads' top-ups charge two memcgs, which must have been
 * charged and, after a drain, hold only installed ranges' charges, one
 * objcg reference each.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

#define STRESS_SLOTS		128
#define STRESS_SHARED		64	/* slots 0..63 are shared by all */
#define STRESS_PRIV_PER_THREAD	4
#define STRESS_PAGES_PER_THREAD	16	/* per slot, disjoint by thread */
#define STRESS_MAX_THREADS	16
#define STRESS_HELD		64

enum stress_res {
	R_GET, R_GET_RES, R_PUT, R_EVICT, R_SHRINK, R_DRAIN,
	R_ENOMEM, R_EIO, R_EBUSY, R_AUG, R_NR,
};

static const char * const stress_res_names[R_NR] = {
	"get", "get_reserve", "put", "evict", "shrink", "drain",
	"enomem", "eio", "ebusy", "aug",
};

struct stress_thread {
	pthread_t tid;
	unsigned int id;
	unsigned int cpu;
	unsigned long nr_ops;
	unsigned long held[STRESS_HELD];
	bool augged[STRESS_HELD];
	unsigned int nr_held;
	struct tdx_pamt_cache res;
	unsigned long counts[R_NR];
};

static pthread_mutex_t mmu_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Sparse: the shared slots in the flat window (the simulated memory), the
 * private ones in far blocks at pfn 2^46, found through the far table.
 */
static bool stress_sparse;
#define STRESS_FAR_PFN		BIT(46)

static unsigned long stress_slot_pfn(unsigned long slot, unsigned long page)
{
	if (!stress_sparse || slot < STRESS_SHARED)
		return slot_pfn(slot, page);
	return STRESS_FAR_PFN + (slot - STRESS_SHARED) * TDX_PAMT_PAGES_PER_SLOT +
	       page;
}

static unsigned long stress_pfn(struct stress_thread *t, unsigned long slot)
{
	return stress_slot_pfn(slot, t->id * STRESS_PAGES_PER_THREAD +
				     get_random_u32_below(STRESS_PAGES_PER_THREAD));
}

static unsigned long stress_pick_slot(struct stress_thread *t)
{
	if (get_random_u32_below(4))
		return get_random_u32_below(STRESS_SHARED);
	return STRESS_SHARED + t->id * STRESS_PRIV_PER_THREAD +
	       get_random_u32_below(STRESS_PRIV_PER_THREAD);
}

static void stress_count_err(struct stress_thread *t, int ret)
{
	if (ret == -ENOMEM)
		t->counts[R_ENOMEM]++;
	else if (ret == -EIO)
		t->counts[R_EIO]++;
	else if (ret == -EBUSY)
		t->counts[R_EBUSY]++;
	else if (ret)
		pamt_sim_fatal("unexpected error from get", __FILE__, __LINE__);
}

static void stress_hold(struct stress_thread *t, unsigned long pfn)
{
	bool aug = false;
	u64 st;

	/* A TD maps the page, as PAGE.AUG would; skip pages already mapped. */
	if (get_random_u32_below(2)) {
		unsigned int i;

		aug = true;
		for (i = 0; i < t->nr_held; i++)
			if (t->held[i] == pfn && t->augged[i])
				aug = false;
		if (aug) {
			st = pamt_fake_page_aug(pfn);
			if (st == TDX_PAMT_OPERAND_BUSY)
				aug = false;
			else if (st)
				pamt_sim_fatal("PAGE.AUG on a held range failed",
					       __FILE__, __LINE__);
			else
				t->counts[R_AUG]++;
		}
	}
	t->augged[t->nr_held] = aug;
	t->held[t->nr_held++] = pfn;
}

static void stress_release(struct stress_thread *t, unsigned int i)
{
	if (t->augged[i]) {
		while (pamt_fake_page_remove(t->held[i]) == TDX_PAMT_OPERAND_BUSY)
			cpu_relax();
	}
	if (tdx_pamt_put(t->held[i]))
		pamt_sim_fatal("put of a held reference failed", __FILE__, __LINE__);
	t->counts[R_PUT]++;
	t->nr_held--;
	t->held[i] = t->held[t->nr_held];
	t->augged[i] = t->augged[t->nr_held];
}

static void stress_one(struct stress_thread *t)
{
	unsigned int r = get_random_u32_below(1000);
	unsigned long pfn, scanned;
	int ret;

	if (r < 350) {
		if (t->nr_held == STRESS_HELD)
			return stress_release(t, get_random_u32_below(t->nr_held));
		pfn = stress_pfn(t, stress_pick_slot(t));
		ret = tdx_pamt_get(pfn, NULL);
		t->counts[R_GET]++;
		stress_count_err(t, ret);
		if (!ret)
			stress_hold(t, pfn);
	} else if (r < 550) {
		/* KVM's fault path: top up, then get under mmu_lock. */
		if (t->nr_held == STRESS_HELD)
			return stress_release(t, get_random_u32_below(t->nr_held));
		ret = tdx_topup_pamt_cache(&t->res, 2);
		if (ret && ret != -ENOMEM)
			pamt_sim_fatal("topup", __FILE__, __LINE__);
		pfn = stress_pfn(t, stress_pick_slot(t));
		pthread_mutex_lock(&mmu_lock);
		pamt_sim_enter_atomic();
		ret = tdx_pamt_get(pfn, &t->res);
		pamt_sim_exit_atomic();
		pthread_mutex_unlock(&mmu_lock);
		t->counts[R_GET_RES]++;
		stress_count_err(t, ret);
		if (!ret)
			stress_hold(t, pfn);
	} else if (r < 900) {
		if (t->nr_held)
			stress_release(t, get_random_u32_below(t->nr_held));
	} else if (r < 960) {
		ret = pamt_fake_evict(stress_slot_pfn(stress_pick_slot(t), 0));
		if (ret && ret != -EBUSY && ret != -EIO)
			pamt_sim_fatal("evict", __FILE__, __LINE__);
		t->counts[R_EVICT]++;
	} else if (r < 995) {
		if (pamt_fake_shrink_count())
			pamt_fake_shrink_scan(1 + get_random_u32_below(8), &scanned);
		t->counts[R_SHRINK]++;
	} else {
		/* A drain, or the worker that a put over the cap kicks. */
		if (get_random_u32_below(2))
			tdx_pamt_drain();
		else
			pamt_shrink_deferred();
		t->counts[R_DRAIN]++;
	}
}

static struct obj_cgroup stress_cg[2];

static void *stress_thread_fn(void *arg)
{
	struct stress_thread *t = arg;
	unsigned long i;

	pamt_sim_set_cpu(t->cpu);
	/* Two VMs' memcgs: their charges move between threads' ranges. */
	pamt_sim_objcg = &stress_cg[t->id % 2];
	for (i = 0; i < t->nr_ops; i++)
		stress_one(t);
	while (t->nr_held)
		stress_release(t, t->nr_held - 1);
	tdx_free_pamt_cache(&t->res);
	return NULL;
}

static int stress_run(bool lean, unsigned int nr_threads, unsigned long nr_ops)
{
	const struct tdx_pamt_range sparse[] = {
		{ .start_pfn = PAMT_ENV_BASE_PFN,
		  .end_pfn = PAMT_ENV_BASE_PFN +
			     STRESS_SHARED * TDX_PAMT_PAGES_PER_SLOT },
		{ .start_pfn = STRESS_FAR_PFN,
		  .end_pfn = stress_slot_pfn(STRESS_SLOTS, 0) },
	};
	struct pamt_env_opts o = {
		.mag_size = 16,
		/* lean: nearly every last put REMOVEs, as upstream does. */
		.idle_cap = lean ? 1 : STRESS_SLOTS / 8,
		.nr_slots = STRESS_SLOTS,
		.nr_cpus = nr_threads - nr_threads / 4,
	};
	static struct stress_thread th[STRESS_MAX_THREADS];
	unsigned long totals[R_NR] = { 0 }, slot, p;
	unsigned int i, j, softirq = nr_threads / 4;
	int failed = 0;
	long c;
	u64 v[TDX_PAMT_STAT_NR];

	if (stress_sparse) {
		o.ranges = sparse;
		o.nr_ranges = 2;
		o.mem_slots = STRESS_SHARED;
	}
	if (pamt_env_up(&o))
		return 1;
	/* Reserve the pages threads may map, so pairs never land on them. */
	for (slot = 0; slot < (stress_sparse ? STRESS_SHARED : STRESS_SLOTS); slot++)
		for (p = 0; p < nr_threads * STRESS_PAGES_PER_THREAD; p++)
			if (pamt_sim_alloc_pfn(slot_pfn(slot, p)))
				env.held_pages++;
	/*
	 * Latency makes ADDs meet each other's range locks (real BUSY);
	 * injected: ADD errors (-EIO paths) and REMOVE BUSY.
	 */
	pamt_fake_set_latency(PAMT_FAKE_ADD, 200, 1000, 4000);
	pamt_fake_set_latency(PAMT_FAKE_REMOVE, 100, 500, 2000);
	pamt_fake_inject(PAMT_FAKE_ADD, TDX_PAMT_OPERAND_ADDR_RANGE, 0, 2000);
	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_OPERAND_BUSY, 0, 20000);
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 1000);

	memset(th, 0, sizeof(th));
	memset(stress_cg, 0, sizeof(stress_cg));
	for (i = 0; i < nr_threads; i++) {
		th[i].id = i;
		/* The last @softirq threads share CPUs 0.. with the first. */
		th[i].cpu = i < nr_threads - softirq ? i : i - (nr_threads - softirq);
		th[i].nr_ops = nr_ops / nr_threads;
		pthread_create(&th[i].tid, NULL, stress_thread_fn, &th[i]);
	}
	for (i = 0; i < nr_threads; i++) {
		pthread_join(th[i].tid, NULL);
		for (j = 0; j < R_NR; j++)
			totals[j] += th[i].counts[j];
	}
	pamt_fake_inject(PAMT_FAKE_ADD, 0, 0, 0);
	pamt_fake_inject(PAMT_FAKE_REMOVE, 0, 0, 0);
	pamt_sim_fail_set(&pamt_sim_fail_page, -1, 0);

	tdx_pamt_read_stats(v);
	printf("stress: cap=%s%s threads=%u (%u softirq) ops=%lu\n",
	       lean ? "lean" : "magazine", stress_sparse ? " sparse" : "",
	       nr_threads, softirq, nr_ops);
	printf("  ops:");
	for (j = 0; j < R_NR; j++)
		printf(" %s=%lu", stress_res_names[j], totals[j]);
	printf("\n  core:");
	for (j = 0; j < TDX_PAMT_STAT_NR; j++)
		printf(" %d=%llu", j, (unsigned long long)v[j]);
	printf("\n  fake: add=%lld remove=%lld busy=%lld injected=%lld violations=%lld\n",
	       (long long)atomic64_read(&pamt_fake.calls[PAMT_FAKE_ADD]),
	       (long long)atomic64_read(&pamt_fake.calls[PAMT_FAKE_REMOVE]),
	       (long long)(atomic64_read(&pamt_fake.busy[PAMT_FAKE_ADD]) +
			   atomic64_read(&pamt_fake.busy[PAMT_FAKE_REMOVE])),
	       (long long)(atomic64_read(&pamt_fake.injected[PAMT_FAKE_ADD]) +
			   atomic64_read(&pamt_fake.injected[PAMT_FAKE_REMOVE])),
	       (long long)atomic64_read(&pamt_fake.violations));

	if (totals[R_GET] + totals[R_GET_RES] + totals[R_PUT] + totals[R_EVICT] +
	    totals[R_SHRINK] + totals[R_DRAIN] == 0)
		failed = 1;
	if (!pamt_accounting_ok()) {
		printf("  FAIL: accounting\n");
		failed = 1;
	}
	if (v[TDX_PAMT_STAT_INSTALLED] != (u64)atomic64_read(&pamt_fake.pairs)) {
		printf("  FAIL: installed %llu != module pairs %lld\n",
		       (unsigned long long)v[TDX_PAMT_STAT_INSTALLED],
		       (long long)atomic64_read(&pamt_fake.pairs));
		failed = 1;
	}
	tdx_pamt_drain();
	if (!pamt_accounting_ok()) {
		printf("  FAIL: accounting after a drain\n");
		failed = 1;
	}
	tdx_pamt_read_stats(v);
	/* Reserves freed: each charge is an installed range's, with its ref. */
	for (i = 0; i < 2; i++) {
		c = atomic_long_read(&stress_cg[i].charged) / (2 * PAGE_SIZE);
		if (c > (long)v[TDX_PAMT_STAT_INSTALLED] ||
		    c != atomic_long_read(&stress_cg[i].refs) ||
		    !atomic_long_read(&stress_cg[i].total)) {
			printf("  FAIL: memcg %u: %ld pairs charged, %ld refs, %llu installed\n",
			       i, c, atomic_long_read(&stress_cg[i].refs),
			       (unsigned long long)v[TDX_PAMT_STAT_INSTALLED]);
			failed = 1;
		}
	}
	for (slot = 0; slot < STRESS_SLOTS; slot++) {
		if (pamt_slot_refs(pfn_word(stress_slot_pfn(slot, 0)))) {
			printf("  FAIL: slot %lu still has references\n", slot);
			failed = 1;
		}
	}
	/* The teardown checks violations, warnings (none) and leaks. */
	return failed;
}

static int stress_failed;

int pamt_stress_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int threads = 8, passed = 0, failed = 0;
	unsigned long ops = 2000000;
	int c, m;

	while ((c = getopt_long(argc, argv, "t:o:s:", opts, NULL)) != -1) {
		if (c == 't')
			threads = strtoul(optarg, NULL, 0);
		else if (c == 'o')
			ops = strtoul(optarg, NULL, 0);
		else if (c == 's')
			pamt_sim_seed(strtoull(optarg, NULL, 0));
		else
			return 2;
	}
	if (threads < 4 || threads > STRESS_MAX_THREADS) {
		fprintf(stderr, "--threads must be 4..%d\n", STRESS_MAX_THREADS);
		return 2;
	}
	pamt_sim_quiet = 1;
	/*
	 * The default idle cap and a cap of one pair, then the default over
	 * a sparse table.
	 */
	for (m = 0; m < 3; m++) {
		static const char * const names[] = {
			"magazine", "lean", "magazine_sparse",
		};

		stress_sparse = m == 2;
		stress_failed = stress_run(m == 1, threads, ops);
		pamt_env_down();
		if (stress_failed || pamt_test_take_failed()) {
			printf("not ok stress_%s\n", names[m]);
			failed++;
		} else {
			printf("ok stress_%s\n", names[m]);
			passed++;
		}
	}
	stress_sparse = false;
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
