// SPDX-License-Identifier: GPL-2.0
/*
 * pamt_bench: TD creation, boot and teardown driven against four PAMT
 * strategies on identical inputs, the way KVM drives the PAMT API.
 *
 * A TD: control pages (TDR, TDCS, and per vCPU a TDVPR and TDCX pages)
 * through the control-page API; then each vCPU faults in its share of the
 * guest pages, an S-EPT page before every 512 faults: top up the reserve
 * (may sleep), take the TD's mmu_lock for read, get in atomic context,
 * mark the page in the fake module as PAGE.AUG would.  Teardown unmarks
 * and puts every page, a share of the S-EPT puts from a "softirq" thread
 * as RCU callbacks would, then frees the control pages.
 *
 * vCPUs are fault streams multiplexed onto worker threads, by default one
 * per CPU: a userspace lock holder can be preempted, a kernel spinlock
 * holder cannot, so oversubscribing would distort every lock figure.
 *
 * SEAMCALL latencies are modelled by the fake module, from the public
 * DPAMT review thread (BENCHMARKS.md, "What is measured and what is
 * modelled"): ADD 4 us average (2..18), REMOVE 2 us average (1..11).
 *
 * Memory is shared by default: TD pages, control pages and pair pages all
 * come from the shim's buddy allocator, and the run measures what pair
 * pages do to it (struct bench_mem); --split-pool keeps TD pages apart
 * (pool.c).
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "lat.h"
#include "report.h"
#include "shrink_slab.h"

struct bench_opts bo = {
	.scenario = "1td",
	.tds = 0,
	.vcpus = 8,
	.mem_gib = 8,
	.host_gib = 64,
	.pages_per_td = BENCH_DEFAULT_PAGES,
	.cycles = 3,
	.threads_per_cpu = 1,
	.run_pages = 512,
	.frag_pct = 0,
	.softirq_pct = 50,
	.seed = 1,
	.add_ns = 4000,
	.remove_ns = 2000,
	.strat_mask = (1u << S_NR) - 1,
	.reclaim_ms = 5,
	.reclaim_shift = 2,
	.conv_pages = 4,
};

/* ---- time ---- */
static double tsc_ns_per_tick;

static inline u64 tsc(void)
{
	return __builtin_ia32_rdtsc();
}

static inline u64 tsc_ns(u64 ticks)
{
	return (u64)((double)ticks * tsc_ns_per_tick);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Returns the timer's step: the median gap between two back-to-back
 * readings that differ (in a VM about 10 ns: below it, a call reads 0).
 */
static double tsc_calibrate(void)
{
	u64 t0 = ktime_get_ns(), c0 = tsc(), t1, c1, a, b, gap[1024];
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	unsigned int i, n = 0;

	nanosleep(&ts, NULL);
	t1 = ktime_get_ns();
	c1 = tsc();
	tsc_ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
	for (i = 0; i < 4 * ARRAY_SIZE(gap) && n < ARRAY_SIZE(gap); i++) {
		a = tsc();
		b = tsc();
		if (b > a)
			gap[n++] = b - a;
	}
	if (!n)
		return 1;
	qsort(gap, n, sizeof(gap[0]), cmp_u64);
	return (double)gap[n / 2] * tsc_ns_per_tick;
}

double bench_now(void)
{
	return ktime_get_ns() / 1e9;
}

/* ---- per-thread recording ---- */
struct rec {
	struct lat l[BENCH_MAX_CYCLES][OP_NR];
	struct lat slow_get;	/* the slow-path gets alone, all cycles */
	u64 gets, puts, errors;
};

/* Pair pages and host memory, for the strategy running now. */
static struct bench_mem cur_mem;

#define mem_count(field, n) \
	((void)__atomic_fetch_add(&cur_mem.field, (n), __ATOMIC_RELAXED))

/*
 * Walk host memory, quiescent: a page allocated but neither a TD page nor
 * a control page (the fake module's td_map) nor, with --split-pool, a pool
 * page, is a pair page -- installed, in a magazine or in a vCPU's reserve.
 */
void bench_mem_scan(struct bench_mem *m)
{
	unsigned long td_start, td_end, nb, b, i;
	bool shared = pool_is_shared();

	pool_td_region(&td_start, &td_end);
	nb = pamt_sim_nr_pages / TDX_PAMT_PAGES_PER_SLOT;
	m->blocks = nb;
	m->td_usable = m->pair_pages = m->pair_blocks = m->poisoned = 0;
	for (b = 0; b < nb; b++) {
		unsigned long base = pamt_sim_base_pfn +
				     b * TDX_PAMT_PAGES_PER_SLOT, n = 0;
		bool in_pool = base >= td_start &&
			       base + TDX_PAMT_PAGES_PER_SLOT <= td_end;
		bool usable;

		if (!shared && in_pool) {
			m->td_usable++;
			continue;
		}
		for (i = 0; i < TDX_PAMT_PAGES_PER_SLOT; i++) {
			unsigned long pfn = base + i;

			if (pamt_sim_pfn_allocated(pfn) &&
			    !test_bit(pfn - pamt_fake.start_pfn, pamt_fake.td_map))
				n++;
		}
		usable = shared && n < TDX_PAMT_PAGES_PER_SLOT;
		m->pair_pages += n;
		m->pair_blocks += n > 0;
		m->td_usable += usable;
		m->poisoned += usable && n;
	}
}

/* Keep the most poisoned of the boots. */
static void mem_snapshot(void)
{
	struct bench_mem m;

	bench_mem_scan(&m);
	if (!cur_mem.blocks || m.poisoned >= cur_mem.poisoned) {
		cur_mem.blocks = m.blocks;
		cur_mem.td_usable = m.td_usable;
		cur_mem.pair_pages = m.pair_pages;
		cur_mem.pair_blocks = m.pair_blocks;
		cur_mem.poisoned = m.poisoned;
	}
}

struct td;

/* Workers, then the softirq thread, then the storm. */
#define REC_SOFTIRQ(w)	(w)
#define REC_STORM(w)	((w) + 1)

static struct {
	const struct strat_ops *ops;
	unsigned int cycle;
	unsigned int nworkers;
	struct rec *recs;		/* nworkers + 2 */
	volatile int stop_aux;
	bool scan;			/* take mem_snapshot() after each boot */
	void (*after_boot)(struct td *tds, unsigned int nr);
	/* softirq queue */
	pthread_mutex_t sq_lock;
	unsigned long *sq;
	unsigned long sq_nr, sq_cap;
	volatile int sq_done;
	/* sampler */
	volatile int sampler_stop;
	u64 peak_pages;
	struct sample *samples;
	unsigned int nr_samples, cap_samples;
	double t0;
} run;

static inline void rec_get_done(struct rec *r, u64 ns, int slow)
{
	lat_add(&r->l[run.cycle][OP_GET], ns, slow);
}

static int timed_get(struct rec *r, unsigned long pfn,
		     struct tdx_pamt_cache *res)
{
	int slow = run.ops->refs(pfn) == 0;
	u64 t0, t1;
	int ret;

	t0 = tsc();
	ret = run.ops->get(pfn, res);
	t1 = tsc();
	if (ret) {
		r->errors++;
		return ret;
	}
	lat_add(&r->l[run.cycle][OP_GET], tsc_ns(t1 - t0), slow);
	if (slow)
		lat_add(&r->slow_get, tsc_ns(t1 - t0), 1);
	r->gets++;
	return 0;
}

static void timed_put(struct rec *r, unsigned long pfn)
{
	int slow = run.ops->refs(pfn) <= 1;
	u64 t0, t1;
	int ret;

	t0 = tsc();
	ret = run.ops->put(pfn);
	t1 = tsc();
	if (ret) {
		r->errors++;
		return;
	}
	lat_add(&r->l[run.cycle][OP_PUT], tsc_ns(t1 - t0), slow);
	r->puts++;
}

/* ---- TDs ---- */
#define SEPT_FLAG	(1UL << 63)
#define CTL_TDCS	4
#define CTL_TDCX	5

struct td;

struct vcpu {
	struct td *td;
	unsigned int id;
	struct tdx_pamt_cache res;
	struct pool_cursor cur;
	u64 rng;
	unsigned long nguest;	/* guest pages to fault */
	unsigned long *pages;	/* faulted pages in order; SEPT_FLAG marks S-EPT */
	unsigned long nr_pages;
	unsigned long pos;
	unsigned long fbuf[64];	/* pages to give back to the pool */
	unsigned int nfbuf;
};

struct td {
	unsigned int id;
	unsigned int nr_vcpus;
	struct vcpu *vcpus;
	pthread_rwlock_t mmu_lock;
	struct page **ctl;
	unsigned int nr_ctl;
};

static unsigned int td_nr_ctl(unsigned int vcpus)
{
	return 1 + CTL_TDCS + vcpus * (1 + CTL_TDCX);
}

static void td_setup(struct td *td, unsigned int id, unsigned long guest_pages,
		     unsigned int cycle)
{
	unsigned int v;

	memset(td, 0, sizeof(*td));
	td->id = id;
	td->nr_vcpus = bo.vcpus;
	td->vcpus = calloc(bo.vcpus, sizeof(*td->vcpus));
	td->nr_ctl = td_nr_ctl(bo.vcpus);
	td->ctl = calloc(td->nr_ctl, sizeof(*td->ctl));
	pthread_rwlock_init(&td->mmu_lock, NULL);
	for (v = 0; v < bo.vcpus; v++) {
		struct vcpu *vc = &td->vcpus[v];

		vc->td = td;
		vc->id = v;
		vc->nguest = guest_pages / bo.vcpus +
			     (v < guest_pages % bo.vcpus);
		vc->pages = malloc((vc->nguest + vc->nguest / 512 + 2) *
				   sizeof(*vc->pages));
		vc->rng = bench_mix(bench_mix(bo.seed, id * 1000 + v), cycle);
		if (pool_cursor_init(&vc->cur) || !vc->pages)
			pamt_sim_fatal("out of memory", __FILE__, __LINE__);
	}
}

static void td_free(struct td *td)
{
	unsigned int v;

	for (v = 0; v < td->nr_vcpus; v++)
		free(td->vcpus[v].pages);
	free(td->vcpus);
	free(td->ctl);
	pthread_rwlock_destroy(&td->mmu_lock);
}

static void td_create(struct td *td, struct rec *r)
{
	unsigned int i;
	u64 t0, t1;

	strat_enter_td(td->id);
	for (i = 0; i < td->nr_ctl; i++) {
		t0 = tsc();
		td->ctl[i] = run.ops->ctl_alloc();
		t1 = tsc();
		if (!td->ctl[i]) {
			r->errors++;
			continue;
		}
		/* The module takes it as a control page (TDH.MNG.ADDCX etc.). */
		while (pamt_fake_control_add(page_to_pfn(td->ctl[i])) ==
		       TDX_PAMT_OPERAND_BUSY) {
			mem_count(busy_td, 1);
			cpu_relax();
		}
		rec_get_done(r, tsc_ns(t1 - t0),
			     run.ops->refs(page_to_pfn(td->ctl[i])) == 1);
		r->gets++;
	}
}

static void td_destroy(struct td *td, struct rec *r)
{
	unsigned int i, v;
	int slow;
	u64 t0, t1;

	for (i = 0; i < td->nr_ctl; i++) {
		if (!td->ctl[i])
			continue;
		while (pamt_fake_page_remove(page_to_pfn(td->ctl[i])) ==
		       TDX_PAMT_OPERAND_BUSY) {
			mem_count(busy_td, 1);
			cpu_relax();
		}
		slow = run.ops->refs(page_to_pfn(td->ctl[i])) <= 1;
		t0 = tsc();
		run.ops->ctl_free(td->ctl[i]);
		t1 = tsc();
		lat_add(&r->l[run.cycle][OP_PUT], tsc_ns(t1 - t0), slow);
		r->puts++;
	}
	for (v = 0; v < td->nr_vcpus; v++) {
		run.ops->drain(&td->vcpus[v].res);
		pool_cursor_release(&td->vcpus[v].cur);
	}
}

/* One page mapped in the fault path. */
static void vcpu_map(struct vcpu *vc, struct rec *r, unsigned long pfn,
		     bool sept)
{
	u64 st;

	pthread_rwlock_rdlock(&vc->td->mmu_lock);
	pamt_sim_enter_atomic();
	if (timed_get(r, pfn, &vc->res)) {
		pamt_sim_exit_atomic();
		pthread_rwlock_unlock(&vc->td->mmu_lock);
		pool_free_batch(&pfn, 1);
		return;
	}
	/* PAGE.AUG, or the S-EPT add: the module wants the range's pair. */
	while ((st = pamt_fake_page_aug(pfn)) == TDX_PAMT_OPERAND_BUSY) {
		mem_count(busy_td, 1);
		cpu_relax();
	}
	pamt_sim_exit_atomic();
	pthread_rwlock_unlock(&vc->td->mmu_lock);
	if (st)
		r->errors++;
	vc->pages[vc->nr_pages++] = pfn | (sept ? SEPT_FLAG : 0);
}

/* One fault: returns false when the vCPU has faulted everything in. */
static bool vcpu_fault(struct vcpu *vc, struct rec *r)
{
	unsigned long f = vc->pos;

	if (f >= vc->nguest)
		return false;
	strat_enter_td(vc->td->id);
	if (run.ops->topup(&vc->res))
		r->errors++;
	if (f % 512 == 0)
		vcpu_map(vc, r, pool_alloc(&vc->cur, &vc->rng), true);
	vcpu_map(vc, r, pool_alloc(&vc->cur, &vc->rng), false);
	vc->pos++;
	return vc->pos < vc->nguest;
}

static void vcpu_flush(struct vcpu *vc)
{
	pool_free_batch(vc->fbuf, vc->nfbuf);
	vc->nfbuf = 0;
}

static void softirq_queue(unsigned long pfn)
{
	pthread_mutex_lock(&run.sq_lock);
	if (run.sq_nr == run.sq_cap) {
		run.sq_cap = run.sq_cap ? 2 * run.sq_cap : 4096;
		run.sq = realloc(run.sq, run.sq_cap * sizeof(*run.sq));
	}
	run.sq[run.sq_nr++] = pfn;
	pthread_mutex_unlock(&run.sq_lock);
}

/* One page unmapped at teardown. */
static bool vcpu_unmap(struct vcpu *vc, struct rec *r)
{
	unsigned long e, pfn;
	bool sept;

	if (vc->pos >= vc->nr_pages) {
		vcpu_flush(vc);
		return false;
	}
	e = vc->pages[vc->pos++];
	pfn = e & ~SEPT_FLAG;
	sept = e & SEPT_FLAG;
	while (pamt_fake_page_remove(pfn) == TDX_PAMT_OPERAND_BUSY) {
		mem_count(busy_td, 1);
		cpu_relax();
	}
	if (sept && bench_rng(&vc->rng) % 100 < bo.softirq_pct) {
		softirq_queue(pfn);
	} else {
		pthread_rwlock_rdlock(&vc->td->mmu_lock);
		pamt_sim_enter_atomic();
		timed_put(r, pfn);
		pamt_sim_exit_atomic();
		pthread_rwlock_unlock(&vc->td->mmu_lock);
		vc->fbuf[vc->nfbuf++] = pfn;
		if (vc->nfbuf == ARRAY_SIZE(vc->fbuf))
			vcpu_flush(vc);
	}
	if (vc->pos < vc->nr_pages)
		return true;
	vcpu_flush(vc);
	return false;
}

static void *softirq_fn(void *arg)
{
	struct rec *r = &run.recs[REC_SOFTIRQ(run.nworkers)];
	unsigned long *batch = NULL, n, i, cap = 0;

	/* It interrupts worker 0: same simulated CPU. */
	pamt_sim_set_cpu(0);
	for (;;) {
		pthread_mutex_lock(&run.sq_lock);
		n = run.sq_nr;
		if (n > cap) {
			cap = n;
			batch = realloc(batch, cap * sizeof(*batch));
		}
		memcpy(batch, run.sq, n * sizeof(*batch));
		run.sq_nr = 0;
		pthread_mutex_unlock(&run.sq_lock);
		if (!n) {
			if (run.sq_done)
				break;
			usleep(200);
			continue;
		}
		for (i = 0; i < n; i++) {
			pamt_sim_enter_atomic();
			timed_put(r, batch[i]);
			pamt_sim_exit_atomic();
		}
		pool_free_batch(batch, n);
	}
	free(batch);
	return NULL;
}

/* ---- phases: streams multiplexed onto workers ---- */
enum stream_kind { ST_CREATE, ST_BOOT, ST_TEARDOWN, ST_DESTROY };

struct stream {
	enum stream_kind kind;
	struct td *td;
	struct vcpu *vc;
	bool done;
};

struct phase {
	struct stream *s;
	unsigned int nr;
	unsigned int nworkers;
};

struct worker_arg {
	struct phase *ph;
	unsigned int w;
};

#define STEPS_PER_TURN	8

static bool stream_step(struct stream *st, struct rec *r)
{
	switch (st->kind) {
	case ST_CREATE:
		td_create(st->td, r);
		return false;
	case ST_BOOT:
		return vcpu_fault(st->vc, r);
	case ST_TEARDOWN:
		return vcpu_unmap(st->vc, r);
	case ST_DESTROY:
		td_destroy(st->td, r);
		return false;
	}
	return false;
}

static void *worker_fn(void *arg)
{
	struct worker_arg *wa = arg;
	struct phase *ph = wa->ph;
	struct rec *r = &run.recs[wa->w];
	unsigned int i, k, left;

	pamt_sim_set_cpu(wa->w);
	do {
		left = 0;
		for (i = wa->w; i < ph->nr; i += ph->nworkers) {
			struct stream *st = &ph->s[i];

			/* A TD is a process: its threads share one mm. */
			current->mm = (struct mm_struct *)st->td;
			for (k = 0; k < STEPS_PER_TURN && !st->done; k++)
				st->done = !stream_step(st, r);
			left += !st->done;
		}
	} while (left);
	return NULL;
}

static void phase_run(struct stream *s, unsigned int nr, unsigned int nworkers)
{
	pthread_t tids[BENCH_MAX_WORKERS];
	struct worker_arg wa[BENCH_MAX_WORKERS];
	struct phase ph = { .s = s, .nr = nr, .nworkers = nworkers };
	unsigned int w;

	for (w = 0; w < nworkers; w++) {
		wa[w].ph = &ph;
		wa[w].w = w;
		pthread_create(&tids[w], NULL, worker_fn, &wa[w]);
	}
	for (w = 0; w < nworkers; w++)
		pthread_join(tids[w], NULL);
}

static void progress(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void progress(const char *fmt, ...)
{
	va_list ap;

	if (bo.quiet)
		return;
	fprintf(stderr, "[pamt_bench %7.2fs] ", bench_now() - run.t0);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Create, boot, tear down and destroy @nr TDs at once, on @nworkers. */
static void tds_cycle(struct td *tds, unsigned int nr, unsigned int nworkers,
		      const char *what)
{
	unsigned int nv = nr * bo.vcpus, i, v;
	struct stream *s = calloc(nv > nr ? nv : nr, sizeof(*s));
	pthread_t sirq;
	double t;

	for (i = 0; i < nr; i++)
		s[i] = (struct stream){ .kind = ST_CREATE, .td = &tds[i] };
	t = bench_now();
	phase_run(s, nr, nworkers);
	progress("%s: create %u TD(s): %.2fs", what, nr, bench_now() - t);

	/* Interleave the TDs' vCPUs so each worker serves every TD. */
	for (v = 0; v < bo.vcpus; v++)
		for (i = 0; i < nr; i++)
			s[v * nr + i] = (struct stream){ .kind = ST_BOOT,
				.td = &tds[i], .vc = &tds[i].vcpus[v] };
	t = bench_now();
	phase_run(s, nv, nworkers);
	progress("%s: boot: %.2fs", what, bench_now() - t);
	if (run.scan)
		mem_snapshot();
	if (run.after_boot)
		run.after_boot(tds, nr);

	for (i = 0; i < nv; i++) {
		s[i].kind = ST_TEARDOWN;
		s[i].done = false;
		s[i].vc->pos = 0;
	}
	run.sq_done = 0;
	pthread_create(&sirq, NULL, softirq_fn, NULL);
	t = bench_now();
	phase_run(s, nv, nworkers);
	run.sq_done = 1;
	pthread_join(sirq, NULL);
	progress("%s: teardown: %.2fs", what, bench_now() - t);

	for (i = 0; i < nr; i++)
		s[i] = (struct stream){ .kind = ST_DESTROY, .td = &tds[i] };
	phase_run(s, nr, nworkers);
	free(s);
}

/* ---- sampler: peak PAMT memory, and idle memory over time ---- */
static void *sampler_fn(void *arg)
{
	struct strat_ctrs c;
	struct timespec ts = { 0, 1000 * 1000 };
	unsigned int tick = 0;

	/* Also the kernel's worker for the core's deferred work: its CPU. */
	pamt_sim_set_cpu(run.nworkers);
	while (!run.sampler_stop) {
		if (tdx_pamt_enabled() && atomic_long_xchg(&pamt_sim_deferred, 0))
			pamt_shrink_deferred();
		run.ops->ctrs(&c);
		if (c.pamt_pages > run.peak_pages)
			run.peak_pages = c.pamt_pages;
		if (bo.timeline && !(tick++ % 10) &&
		    run.nr_samples < run.cap_samples) {
			struct sample *sm = &run.samples[run.nr_samples++];

			sm->t_ms = (bench_now() - run.t0) * 1e3;
			sm->idle_pairs = c.idle_pairs;
			sm->pamt_pages = c.pamt_pages;
			sm->installed = atomic64_read(&pamt_fake.pairs);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* ---- reclaimer (pressure) ---- */
static struct {
	u64 scans, freed, removes;
} reclaim;

static void *reclaimer_fn(void *arg)
{
	struct timespec ts = { 0, (long)bo.reclaim_ms * 1000 * 1000 };
	unsigned long cnt, scanned, nr;
	u64 v0[TDX_PAMT_STAT_NR], v1[TDX_PAMT_STAT_NR];

	/* kswapd: its own CPU. */
	pamt_sim_set_cpu(run.nworkers);
	tdx_pamt_read_stats(v0);
	while (!run.stop_aux) {
		cnt = pamt_fake_idle_pairs();
		if (cnt) {
			nr = cnt >> bo.reclaim_shift;
			reclaim.freed += pamt_fake_shrink_scan(nr ? nr : 1,
							      &scanned);
			reclaim.scans++;
		}
		nanosleep(&ts, NULL);
	}
	tdx_pamt_read_stats(v1);
	reclaim.removes = v1[TDX_PAMT_STAT_SHRINK] - v0[TDX_PAMT_STAT_SHRINK];
	return NULL;
}

/* ---- convert: a conversion storm next to a booting bystander ---- */
static struct lat storm_lat[OP_NR];
static u64 storm_iters;
static int storm_ready;

static void *storm_fn(void *arg)
{
	struct rec *r = &run.recs[REC_STORM(run.nworkers)];
	struct tdx_pamt_cache res = { .nr = 0 };
	struct td *td = arg;
	unsigned long *pfn = calloc(bo.conv_pages, sizeof(*pfn));
	unsigned long *rej = calloc(bo.conv_pages * 512 + 1, sizeof(*rej));
	unsigned long nrej = 0;
	struct pool_cursor cur;
	unsigned int i;
	u64 rng = bench_mix(bo.seed, 0x5707);

	/* Its own CPU: the bystander runs on the other workers. */
	pamt_sim_set_cpu(run.nworkers);
	pool_cursor_init(&cur);
	/* Pages in distinct 2M ranges: every conversion is a 0<->1 step. */
	for (i = 0; i < bo.conv_pages; i++) {
		unsigned long p;

		for (;;) {
			p = pool_alloc(&cur, &rng);
			if (!i || p / 512 != pfn[i - 1] / 512)
				break;
			rej[nrej++] = p;
		}
		pfn[i] = p;
	}
	pool_free_batch(rej, nrej);
	free(rej);
	__atomic_store_n(&storm_ready, 1, __ATOMIC_RELEASE);
	while (!run.stop_aux) {
		for (i = 0; i < bo.conv_pages; i++) {
			run.ops->topup(&res);
			pthread_rwlock_rdlock(&td->mmu_lock);
			pamt_sim_enter_atomic();
			if (!timed_get(r, pfn[i], &res)) {
				pamt_fake_page_aug(pfn[i]);
				pamt_fake_page_remove(pfn[i]);
				timed_put(r, pfn[i]);
			}
			pamt_sim_exit_atomic();
			pthread_rwlock_unlock(&td->mmu_lock);
		}
		__atomic_add_fetch(&storm_iters, 1, __ATOMIC_RELEASE);
	}
	run.ops->drain(&res);
	pool_free_batch(pfn, bo.conv_pages);
	pool_cursor_release(&cur);
	free(pfn);
	return NULL;
}

/* ---- one strategy through one scenario ---- */
#define HOST_BASE_PFN	0x100000UL	/* 4 GiB */

static unsigned long host_pages(void)
{
	return (unsigned long)bo.host_gib << (30 - 12);
}

static unsigned long pool_pages(unsigned int nr_tds)
{
	return ((unsigned long)nr_tds * bo.mem_gib) << (30 - 12);
}

static void env_up(int s, unsigned int nr_tds)
{
	struct tdx_pamt_range range = {
		.start_pfn = HOST_BASE_PFN,
		.end_pfn = HOST_BASE_PFN + host_pages(),
	};

	pamt_sim_set_nr_cpus(run.nworkers + 1);
	pamt_sim_set_cpu(0);
	pamt_sim_seed(bo.seed);
	atomic_long_set(&pamt_sim_warnings, 0);
	pamt_sim_adds_in_memcg = 0;
	pamt_sim_adds_other_memcg = 0;
	if (pamt_sim_mem_init(HOST_BASE_PFN, host_pages()) ||
	    pamt_fake_init(range.start_pfn, range.end_pfn))
		pamt_sim_fatal("out of memory", __FILE__, __LINE__);
	pamt_fake_set_latency(PAMT_FAKE_ADD, bo.add_ns / 2, bo.add_ns,
			      bo.add_ns * 18 / 4);
	pamt_fake_set_latency(PAMT_FAKE_REMOVE, bo.remove_ns / 2, bo.remove_ns,
			      bo.remove_ns * 11 / 2);
	if (bo.split_pool ?
	    pool_init(HOST_BASE_PFN, pool_pages(nr_tds), bo.run_pages,
		      bo.frag_pct) :
	    pool_init_shared(HOST_BASE_PFN, host_pages(), bo.frag_pct))
		exit(3);
	memset(&cur_mem, 0, sizeof(cur_mem));
	run.ops = &strat_ops[s];
	if (run.ops->init(&range))
		pamt_sim_fatal("strategy init failed", __FILE__, __LINE__);
	run.recs = calloc(run.nworkers + 2, sizeof(*run.recs));
	run.cycle = 0;
	run.peak_pages = 0;
	run.stop_aux = 0;
	run.sampler_stop = 0;
}

static void collect(struct sresult *sr, unsigned int ncycles, bool storm_rec)
{
	unsigned int i, c, o, nrec = run.nworkers + 1;

	for (i = 0; i < nrec; i++) {
		for (c = 0; c < ncycles; c++)
			for (o = 0; o < OP_NR; o++) {
				lat_merge(&sr->cyc[c][o], &run.recs[i].l[c][o]);
				lat_merge(&sr->tot[o], &run.recs[i].l[c][o]);
			}
		lat_merge(&sr->slow_get, &run.recs[i].slow_get);
		sr->gets += run.recs[i].gets;
		sr->puts += run.recs[i].puts;
		sr->errors += run.recs[i].errors;
	}
	if (storm_rec) {
		struct rec *r = &run.recs[REC_STORM(run.nworkers)];

		for (o = 0; o < OP_NR; o++)
			lat_merge(&storm_lat[o], &r->l[0][o]);
		sr->storm_gets += r->gets;
		sr->storm_puts += r->puts;
		sr->errors += r->errors;
	}
}

/* Checks at the end of a run, then tear everything down. */
static void env_down(struct sresult *sr, int s)
{
	struct strat_ctrs c;
	u64 v[TDX_PAMT_STAT_NR];
	long in_use;

	run.ops->ctrs(&c);
	sr->mem = cur_mem;
	sr->idle_pairs_end = c.idle_pairs;
	sr->pamt_pages_end = c.pamt_pages;
	sr->check_bad += pamt_fake_check_all();
	if (s >= S_LEAN) {
		tdx_pamt_read_stats(v);
		if (v[TDX_PAMT_STAT_INSTALLED] != (u64)atomic64_read(&pamt_fake.pairs))
			sr->check_bad++;
		sr->leaked_slots = v[TDX_PAMT_STAT_LEAKED];
		/* A full drain of idle slots, and the worker it asked for. */
		pamt_sim_set_cpu(0);
		tdx_pamt_drain();
		if (atomic_long_xchg(&pamt_sim_deferred, 0))
			pamt_shrink_deferred();
	}
	run.ops->exit();
	if (atomic64_read(&pamt_fake.pairs))
		sr->check_bad++;
	sr->violations = atomic64_read(&pamt_fake.violations);
	sr->warnings = atomic_long_read(&pamt_sim_warnings);
	sr->adds_memcg = __atomic_load_n(&pamt_sim_adds_in_memcg, __ATOMIC_RELAXED);
	sr->adds_other_memcg = __atomic_load_n(&pamt_sim_adds_other_memcg,
					       __ATOMIC_RELAXED);
	/* Every page but the pool's is back in the allocator. */
	in_use = (long)pamt_sim_pages_in_use() - (long)pool_nr_pages();
	sr->leaked_pages = in_use;
	sr->pool_lost = (long)pool_nr_pages() - (long)pool_free_pages();
	sr->ok = !sr->violations && !sr->check_bad && !sr->warnings &&
		 !sr->errors && !in_use && sr->gets == sr->puts &&
		 !sr->pool_lost;
	pool_exit();
	pamt_fake_exit();
	pamt_sim_mem_exit();
	free(run.recs);
	run.recs = NULL;
}

static void run_tds(int s, struct sresult *sr, unsigned int nr_tds,
		    unsigned int ncycles)
{
	struct strat_ctrs c0, c1;
	pthread_t samp, recl;
	struct td *tds = calloc(nr_tds, sizeof(*tds));
	unsigned int c, i;
	bool pressure = !strcmp(bo.scenario, "pressure") &&
			strat_ops[s].has_shrinker;
	char what[64];
	double t;

	env_up(s, nr_tds);
	run.scan = true;
	memset(&reclaim, 0, sizeof(reclaim));
	run.nr_samples = 0;
	pthread_create(&samp, NULL, sampler_fn, NULL);
	if (pressure)
		pthread_create(&recl, NULL, reclaimer_fn, NULL);
	t = bench_now();
	for (c = 0; c < ncycles; c++) {
		run.cycle = c;
		for (i = 0; i < nr_tds; i++)
			td_setup(&tds[i], i, bo.pages_per_td, c);
		run.ops->ctrs(&c0);
		snprintf(what, sizeof(what), "%s %s cycle %u/%u", bo.scenario,
			 strat_names[s], c + 1, ncycles);
		tds_cycle(tds, nr_tds, run.nworkers, what);
		run.ops->ctrs(&c1);
		sr->ccyc[c] = ctrs_delta(&c1, &c0);
		for (i = 0; i < nr_tds; i++)
			td_free(&tds[i]);
	}
	sr->wall_s = bench_now() - t;
	run.stop_aux = 1;
	if (pressure)
		pthread_join(recl, NULL);
	run.sampler_stop = 1;
	pthread_join(samp, NULL);
	run.scan = false;
	run.ops->ctrs(&c1);
	sr->ctot = c1;
	sr->peak_pamt_pages = run.peak_pages > c1.pamt_pages ?
			      run.peak_pages : c1.pamt_pages;
	collect(sr, ncycles, false);
	sr->ncycles = ncycles;

	if (pressure) {
		struct pamt_reclaim r;
		u64 v[TDX_PAMT_STAT_NR];

		sr->reclaim_scans = reclaim.scans;
		sr->reclaim_freed = reclaim.freed;
		sr->reclaim_removes = reclaim.removes;
		pamt_sim_set_cpu(0);
		sr->full_before = pamt_fake_idle_pairs();
		/* As the kernel asks: do_shrink_slab(), priorities 12 to 0. */
		pamt_reclaim_init(&r, pamt.shrinker);
		pamt_direct_reclaim(&r);
		/* The cap's worker, if a put kicked it. */
		if (atomic_long_xchg(&pamt_sim_deferred, 0))
			pamt_shrink_deferred();
		/*
		 * What is still counted after the worker ran comes back in
		 * reclaim's next attempt, as the page allocator retries.
		 */
		if (pamt_fake_idle_pairs())
			pamt_direct_reclaim(&r);
		sr->full_after = pamt_fake_idle_pairs();
		tdx_pamt_read_stats(v);
		sr->full_installed_after = v[TDX_PAMT_STAT_INSTALLED];
		sr->nr_samples = run.nr_samples;
		sr->samples = malloc(run.nr_samples * sizeof(*sr->samples));
		memcpy(sr->samples, run.samples,
		       run.nr_samples * sizeof(*sr->samples));
	}
	env_down(sr, s);
	free(tds);
}

static void run_convert(int s, struct sresult *sr)
{
	unsigned int storm, bw = run.nworkers > 1 ? run.nworkers - 1 : 1;
	pthread_t st, samp;
	struct td td, conv;
	unsigned int i;
	struct sresult tmp;

	for (storm = 0; storm < 2; storm++) {
		struct sresult *d = storm ? sr : &tmp;

		memset(&tmp, 0, sizeof(tmp));
		memset(storm_lat, 0, sizeof(storm_lat));
		storm_iters = 0;
		storm_ready = 0;
		env_up(s, 2);
		pthread_create(&samp, NULL, sampler_fn, NULL);
		td_setup(&conv, 1, 0, 0);
		/*
		 * On a loaded host the storm thread may still be picking its
		 * pages when the bystander is done: start the bystander once
		 * the storm runs, and stop the storm after one pass at least.
		 */
		if (storm) {
			pthread_create(&st, NULL, storm_fn, &conv);
			while (!__atomic_load_n(&storm_ready, __ATOMIC_ACQUIRE))
				sched_yield();
		}
		td_setup(&td, 0, bo.pages_per_td, 0);
		tds_cycle(&td, 1, bw, storm ? "convert (storm)" :
					      "convert (quiet)");
		while (storm && !__atomic_load_n(&storm_iters, __ATOMIC_ACQUIRE))
			sched_yield();
		run.stop_aux = 1;
		if (storm)
			pthread_join(st, NULL);
		run.sampler_stop = 1;
		pthread_join(samp, NULL);
		for (i = 0; i < conv.nr_vcpus; i++)
			pool_cursor_release(&conv.vcpus[i].cur);
		td_free(&td);
		td_free(&conv);
		run.ops->ctrs(&d->ctot);
		d->ccyc[0] = d->ctot;
		d->peak_pamt_pages = run.peak_pages;
		collect(d, 1, storm);
		d->ncycles = 1;
		env_down(d, s);
		if (!storm) {
			sr->quiet_get = tmp.tot[OP_GET];
			sr->quiet_slow_get = tmp.slow_get;
			sr->quiet_ok = tmp.ok;
		} else {
			sr->storm_lat[OP_GET] = storm_lat[OP_GET];
			sr->storm_lat[OP_PUT] = storm_lat[OP_PUT];
			sr->storm_iters = storm_iters;
			sr->ok = sr->ok && sr->quiet_ok;
		}
	}
}

/*
 * ---- reclaim: what the shrinker gives back once TDs are gone ----
 *
 * Five TDs boot at once; then a set of ranges keeps one reference each
 * (KEEP_TD0: every range of TD 0, the survivor of four teardowns;
 * KEEP_1PCT: 1% of all the TDs' ranges, at random), every TD is torn
 * down, and the shrinker runs to exhaustion in the kernel's batches of
 * 128.  What the cache still holds is then set against the kept ranges'
 * pair memory.
 */
enum { KEEP_TD0, KEEP_1PCT, KEEP_NR };

static struct {
	unsigned int mode;
	unsigned long *pfn, nr, cap;
	unsigned long *seen;
	u64 rng;
} keep;

static void keep_range(unsigned long pfn)
{
	unsigned long slot = (pfn - HOST_BASE_PFN) / TDX_PAMT_PAGES_PER_SLOT;

	if (test_bit(slot, keep.seen))
		return;
	__set_bit(slot, keep.seen);
	if (keep.mode == KEEP_1PCT && bench_rng(&keep.rng) % 100)
		return;
	if (keep.nr == keep.cap) {
		keep.cap = keep.cap ? 2 * keep.cap : 4096;
		keep.pfn = realloc(keep.pfn, keep.cap * sizeof(*keep.pfn));
	}
	pfn -= (pfn - HOST_BASE_PFN) % TDX_PAMT_PAGES_PER_SLOT;
	keep.pfn[keep.nr++] = pfn;
	if (run.ops->get(pfn, NULL))
		pamt_sim_fatal("keeping a range", __FILE__, __LINE__);
}

static void keep_after_boot(struct td *tds, unsigned int nr)
{
	unsigned int t, v, i;
	unsigned long p;

	keep.seen = calloc(BITS_TO_LONGS(host_pages() / TDX_PAMT_PAGES_PER_SLOT),
			   sizeof(long));
	keep.rng = bench_mix(bo.seed, 0x4ee9);
	keep.nr = 0;
	for (t = 0; t < nr; t++) {
		if (keep.mode == KEEP_TD0 && t)
			break;
		for (i = 0; i < tds[t].nr_ctl; i++)
			if (tds[t].ctl[i])
				keep_range(page_to_pfn(tds[t].ctl[i]));
		for (v = 0; v < tds[t].nr_vcpus; v++)
			for (p = 0; p < tds[t].vcpus[v].nr_pages; p++)
				keep_range(tds[t].vcpus[v].pages[p] &
					   ~SEPT_FLAG);
	}
	free(keep.seen);
	keep.seen = NULL;
}

static void run_reclaim(int s, struct sresult *sr)
{
	unsigned long scanned, got, i;
	struct strat_ctrs c;
	unsigned int m, nr = 5, idle;
	struct td tds[5];
	pthread_t samp;

	for (m = 0; m < KEEP_NR; m++) {
		struct sresult tmp;
		struct sresult *d = m ? &tmp : sr;
		unsigned int n, cap = 256;
		u64 *held = malloc(cap * sizeof(*held));

		memset(&tmp, 0, sizeof(tmp));
		env_up(s, nr);
		run.nr_samples = 0;
		pthread_create(&samp, NULL, sampler_fn, NULL);
		for (i = 0; i < nr; i++)
			td_setup(&tds[i], i, bo.pages_per_td, 0);
		keep.mode = m;
		run.after_boot = keep_after_boot;
		run.scan = true;
		tds_cycle(tds, nr, run.nworkers, m ? "reclaim (1%)" :
						     "reclaim (4 of 5)");
		run.scan = false;
		run.after_boot = NULL;
		run.sampler_stop = 1;
		pthread_join(samp, NULL);
		/*
		 * Batches of 128 until 64 in a row free nothing; the pair
		 * pages held before the first call and after each.
		 */
		pamt_sim_set_cpu(0);
		run.ops->ctrs(&c);
		held[0] = c.pamt_pages;
		n = 1;
		for (idle = 0; idle < 64 && pamt_fake_idle_pairs(); ) {
			got = pamt_fake_shrink_scan(128, &scanned);
			if (atomic_long_xchg(&pamt_sim_deferred, 0))
				pamt_shrink_deferred();
			idle = got ? 0 : idle + 1;
			run.ops->ctrs(&c);
			if (n == cap) {
				cap *= 2;
				held = realloc(held, cap * sizeof(*held));
			}
			held[n++] = c.pamt_pages;
		}
		sr->shrink_held[m] = held;
		sr->nr_shrink[m] = n - 1;
		d->ctot = c;
		d->peak_pamt_pages = run.peak_pages > held[0] ?
				     run.peak_pages : held[0];
		sr->keep_ranges[m] = keep.nr;
		sr->keep_held_pages[m] = c.pamt_pages;
		for (i = 0; i < keep.nr; i++)
			run.ops->put(keep.pfn[i]);
		for (i = 0; i < nr; i++)
			td_free(&tds[i]);
		collect(d, 1, false);
		d->ncycles = 1;
		env_down(d, s);
		if (m)
			sr->ok = sr->ok && tmp.ok;
	}
	free(keep.pfn);
	keep.pfn = NULL;
	keep.cap = 0;
}

/* ---- options ---- */
static void usage(void)
{
	fprintf(stderr,
"usage: pamt_bench [options]\n"
"  --scenario 1td|5td|churn|convert|pressure|frag|reclaim\n"
"  --strategy lock|atomic|lean|magazine|all   (comma-separated list allowed)\n"
"  --tds N --vcpus N --mem-gib N --pages-per-td N --cycles N\n"
"  --threads-per-cpu N --run-pages N --frag PCT --seed S\n"
"  --add-ns NS --remove-ns NS (modelled SEAMCALL averages)\n"
"  --host-gib N --softirq-pct PCT --reclaim-ms N --reclaim-shift N\n"
"  --split-pool (TD pages from a pool apart from pair pages; default: one\n"
"                shared buddy allocator)\n"
"  --json FILE --plot FILE.png --quiet --selftest\n");
	exit(2);
}

static unsigned int parse_strats(const char *arg)
{
	char *s = strdup(arg), *tok, *save = NULL;
	unsigned int mask = 0;
	int i;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			mask = (1u << S_NR) - 1;
			continue;
		}
		for (i = 0; i < S_NR; i++)
			if (!strcmp(tok, strat_names[i]))
				break;
		if (i == S_NR)
			usage();
		mask |= 1u << i;
	}
	free(s);
	return mask;
}

int bench_selftest(void);

int bench_main(int argc, char **argv, struct bench_result *out)
{
	static const struct option opts[] = {
		{ "scenario", required_argument, NULL, 'S' },
		{ "strategy", required_argument, NULL, 'y' },
		{ "tds", required_argument, NULL, 't' },
		{ "vcpus", required_argument, NULL, 'v' },
		{ "mem-gib", required_argument, NULL, 'm' },
		{ "host-gib", required_argument, NULL, 'H' },
		{ "pages-per-td", required_argument, NULL, 'p' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "threads-per-cpu", required_argument, NULL, 'T' },
		{ "run-pages", required_argument, NULL, 'r' },
		{ "frag", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "add-ns", required_argument, NULL, 'a' },
		{ "remove-ns", required_argument, NULL, 'R' },
		{ "softirq-pct", required_argument, NULL, 'q' },
		{ "reclaim-ms", required_argument, NULL, 'k' },
		{ "reclaim-shift", required_argument, NULL, 'K' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "split-pool", no_argument, NULL, 'X' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_result *br = out;
	unsigned int ncpu, nr_tds, ncycles;
	int c, s;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'S': bo.scenario = optarg; break;
		case 'y': bo.strat_mask = parse_strats(optarg); break;
		case 't': bo.tds = strtoul(optarg, NULL, 0); break;
		case 'v': bo.vcpus = strtoul(optarg, NULL, 0); break;
		case 'm': bo.mem_gib = strtoul(optarg, NULL, 0); break;
		case 'H': bo.host_gib = strtoul(optarg, NULL, 0); break;
		case 'p': bo.pages_per_td = strtoul(optarg, NULL, 0); break;
		case 'c': bo.cycles = strtoul(optarg, NULL, 0); break;
		case 'T': bo.threads_per_cpu = strtoul(optarg, NULL, 0); break;
		case 'r': bo.run_pages = strtoul(optarg, NULL, 0); break;
		case 'f': bo.frag_pct = strtoul(optarg, NULL, 0); bo.frag_set = 1; break;
		case 's': bo.seed = strtoull(optarg, NULL, 0); break;
		case 'a': bo.add_ns = strtoull(optarg, NULL, 0); break;
		case 'R': bo.remove_ns = strtoull(optarg, NULL, 0); break;
		case 'q': bo.softirq_pct = strtoul(optarg, NULL, 0); break;
		case 'k': bo.reclaim_ms = strtoul(optarg, NULL, 0); break;
		case 'K': bo.reclaim_shift = strtoul(optarg, NULL, 0); break;
		case 'j': bo.json = optarg; break;
		case 'P': bo.plot = optarg; break;
		case 'Q': bo.quiet = 1; break;
		case 'X': bo.split_pool = 1; break;
		default: usage();
		}
	}
	if (optind < argc)
		usage();

	if (!strcmp(bo.scenario, "1td")) {
		nr_tds = bo.tds ? bo.tds : 1;
		ncycles = 1;
	} else if (!strcmp(bo.scenario, "5td")) {
		nr_tds = bo.tds ? bo.tds : 5;
		ncycles = 1;
	} else if (!strcmp(bo.scenario, "churn") ||
		   !strcmp(bo.scenario, "pressure") ||
		   !strcmp(bo.scenario, "frag")) {
		nr_tds = bo.tds ? bo.tds : 5;
		ncycles = bo.cycles;
		if (!strcmp(bo.scenario, "frag") && !bo.frag_set)
			bo.frag_pct = 50;
		bo.timeline = !strcmp(bo.scenario, "pressure");
	} else if (!strcmp(bo.scenario, "convert")) {
		nr_tds = 1;
		ncycles = 1;
	} else if (!strcmp(bo.scenario, "reclaim")) {
		/* Five TDs; magazine. */
		nr_tds = 5;
		ncycles = 1;
		if (bo.strat_mask == (1u << S_NR) - 1)
			bo.strat_mask = 1u << S_MAG;
	} else {
		usage();
	}
	if (!bo.vcpus || !ncycles || ncycles > BENCH_MAX_CYCLES ||
	    bo.frag_pct > 100 || !bo.threads_per_cpu || bo.softirq_pct > 100 ||
	    bo.pages_per_td > pool_pages(1) / 2) {
		fprintf(stderr, "pamt_bench: bad parameters\n");
		return 2;
	}

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	run.nworkers = ncpu * bo.threads_per_cpu;
	if (run.nworkers > BENCH_MAX_WORKERS)
		run.nworkers = BENCH_MAX_WORKERS;
	if (pool_pages(nr_tds > 2 ? nr_tds : 2) + (1UL << 18) > host_pages()) {
		fprintf(stderr, "pamt_bench: --host-gib too small for %u TDs of %u GiB\n",
			nr_tds, bo.mem_gib);
		return 2;
	}
	pamt_sim_quiet = 1;
	run.t0 = bench_now();
	run.cap_samples = 100000;
	run.samples = calloc(run.cap_samples, sizeof(*run.samples));
	pthread_mutex_init(&run.sq_lock, NULL);

	memset(br, 0, sizeof(*br));
	br->timer_res_ns = tsc_calibrate();
	br->nr_tds = nr_tds;
	br->ncycles = ncycles;
	br->nworkers = run.nworkers;
	br->ncpu = ncpu;
	br->host_slots = host_pages() / TDX_PAMT_PAGES_PER_SLOT;
	br->idle_cap = br->host_slots / 4 ? br->host_slots / 4 : 1;
	br->gets_per_td = td_nr_ctl(bo.vcpus) + bo.pages_per_td;
	{
		unsigned long g = bo.pages_per_td, v, n;

		for (v = 0; v < bo.vcpus; v++) {
			n = g / bo.vcpus + (v < g % bo.vcpus);
			br->gets_per_td += (n + 511) / 512;
		}
	}
	progress("scenario %s: %u TD(s) x %u vCPUs x %u GiB, %lu gets per TD boot, %u cycle(s), %u workers on %u CPUs, host %u GiB",
		 bo.scenario, nr_tds, bo.vcpus, bo.mem_gib, br->gets_per_td,
		 ncycles, run.nworkers, ncpu, bo.host_gib);

	for (s = 0; s < S_NR; s++) {
		struct sresult *sr = &br->s[s];

		if (!(bo.strat_mask & (1u << s)))
			continue;
		sr->ran = true;
		progress("strategy %s", strat_names[s]);
		if (!strcmp(bo.scenario, "convert"))
			run_convert(s, sr);
		else if (!strcmp(bo.scenario, "reclaim"))
			run_reclaim(s, sr);
		else
			run_tds(s, sr, nr_tds, ncycles);
		if (!sr->ok)
			fprintf(stderr, "pamt_bench: %s: CHECK FAILED (violations %llu, check %llu, warnings %llu, errors %llu, gets %llu puts %llu, leaked pages %ld, pool pages lost %ld)\n",
				strat_names[s],
				(unsigned long long)sr->violations,
				(unsigned long long)sr->check_bad,
				(unsigned long long)sr->warnings,
				(unsigned long long)sr->errors,
				(unsigned long long)sr->gets,
				(unsigned long long)sr->puts, sr->leaked_pages,
				sr->pool_lost);
	}
	br->total_s = bench_now() - run.t0;
	free(run.samples);
	run.samples = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	static struct bench_result br;
	struct load_probe probe[2];
	int i, ret;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--selftest"))
			return bench_selftest();
	load_probe(&probe[0]);
	if (probe[0].busy)
		printf("WARNING: the machine is busy before the run (load average %.2f on %u CPUs, calibration loop got %.0f%% of a CPU): wall-clock figures will not be judged\n",
		       probe[0].loadavg, probe[0].ncpu, 100 * probe[0].cpu_share);
	fflush(stdout);
	ret = bench_main(argc, argv, &br);
	if (ret)
		return ret;
	load_probe(&probe[1]);
	br.load[0] = probe[0];
	br.load[1] = probe[1];
	br.probed = true;
	report_print(&br);
	if (bo.json && report_json(&br, bo.json))
		return 1;
	if (bo.plot)
		report_plot(&br, bo.plot);
	for (i = 0; i < S_NR; i++)
		if (br.s[i].ran && !br.s[i].ok)
			return 1;
	return 0;
}
