// SPDX-License-Identifier: GPL-2.0
/*
 * TD workloads in virtual time, against the four strategies of
 * bench/strat.c (lock, atomic: the seed's "w/o" and "w/"; lean and
 * magazine: the kernel's pamt_*.c), on N virtual CPUs.
 *
 * A TD's vCPUs each run on their own virtual CPU (vCPU v of TD t on CPU
 * t * vcpus + v).  A vCPU faults its share of the TD's pages: between two
 * faults it works for work_ns (TD exit, KVM's fault handling, PAGE.AUG,
 * TD entry: modelled), tops up its reserve of pairs (GFP_KERNEL), then
 * gets the page in atomic context and marks it in the fake module as
 * PAGE.AUG would.  Every 512 faults it first maps an S-EPT page, taken
 * from the page allocator.
 *
 * Memory is shared by default, as on a host: guest pages (guest_memfd's),
 * S-EPT pages and every strategy's pair pages come from the one buddy
 * allocator of shim/sim.c, a vCPU taking td_batch guest pages at a time
 * (one 2M block's worth by default: guest memory faulted in 2M runs).  A pair page then lands inside a TD's 2M range, so an ADD
 * holding it shared meets the TD's ADDs and REMOVEs on that range, BUSY
 * when their virtual intervals overlap.  --shared 0 restores the split
 * pool: guest pages in 2M runs from a pool the allocator never hands out.
 *
 *   boot   all TDs boot at once, then each TD is torn down by one thread
 *          (KVM releases a TD's memory from the VM's destroy path): the
 *          seed's experiment.  Everything is measured.
 *   churn  after boot, each vCPU again and again releases its oldest 2M
 *          run (puts) and faults in a new one from the pool (gets): a
 *          steady state.  Only the churn is measured.
 *   storm  after boot, every vCPU of every TD converts all its pages to
 *          shared and back (puts, then gets) at once.  Only the storm is
 *          measured.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "vbench.h"

const char * const vb_scen_names[VB_NR_SCEN] = {
	[VB_BOOT] = "boot", [VB_CHURN] = "churn", [VB_STORM] = "storm",
};

struct vb_params vb_default_params(void)
{
	struct vb_params p = {
		.strat = S_MAG,
		.scenario = VB_BOOT,
		.tds = 1,
		.vcpus = 8,
		.cpus = 8,
		.pages_per_td = 704000,
		.work_ns = 1000,
		.put_work_ns = 300,
		.storm_work_ns = 200,
		.churn_runs = 4,
		.teardown_threads = 1,
		.call_ns = 50,
		.pool_shuffle = true,
		.pool_spread = 8,
		.add_ns = 4000,
		.remove_ns = 2000,
		.seed = 1,
		.shared = false,
		.td_batch = TDX_PAMT_PAGES_PER_SLOT,
	};
	return p;
}

/* ---- state of one run ---- */
#define SEPT_FLAG	(1UL << 63)
#define RUN_PAGES	TDX_PAMT_PAGES_PER_SLOT

struct vb_vcpu {
	unsigned int td, v, cpu;
	struct tdx_pamt_cache res;
	unsigned long *pages;	/* mapped pages, in order; SEPT_FLAG marks S-EPT */
	unsigned long nr_pages, cap_pages;
	unsigned long nguest;
	unsigned long run;	/* current run's first pfn */
	unsigned int run_used;
	unsigned long *bat;	/* shared: guest pages taken, not yet faulted */
	unsigned int nbat, ibat;
	struct lat get, put;
	u64 slow_ps, slow_seam_ps, errors, td_busy;
	u64 rng;
};

static struct {
	const struct vb_params *p;
	const struct strat_ops *ops;
	struct vb_vcpu *vc;
	unsigned int nvc;
	struct vt_barrier all;
	struct vt_barrier *td_bar;
	/* the guest memory pool: free 2M runs, LIFO */
	unsigned long *runs;
	unsigned long nr_runs, nfree_runs;
	unsigned long pool_pages, alloc_pages;
	bool measuring;
	struct strat_ctrs c0, c1;
	u64 t0_ps, t1_ps, add_max_ns;
	/* shared memory: which pages the TDs hold, and the scans */
	unsigned char *guest_map;
	unsigned long mem_pages;
	unsigned int nfaulted;
	unsigned long blocks, poisoned, pair_blocks;
} vb;


static unsigned long pool_take_run(void)
{
	if (!vb.nfree_runs)
		pamt_sim_fatal("guest pool exhausted", __FILE__, __LINE__);
	return vb.runs[--vb.nfree_runs];
}

static void pool_give_run(unsigned long base)
{
	vb.runs[vb.nfree_runs++] = base;
}

static void guest_free(unsigned long pfn)
{
	vb.guest_map[pfn - VB_BASE_PFN] = 0;
	vt_guest_free_pfn(pfn);
}

/*
 * Shared memory, quiescent or not (no virtual time passes): count the 2M
 * blocks holding pair pages -- allocated pages that are neither a TD's
 * (in the fake module's td_map, or taken by a vCPU for its next faults,
 * or an S-EPT page, also between its PAGE.REMOVE and its free) nor free: installed pairs, pairs in magazines and reserves.
 * Keep the worst scan.
 */
static void mem_scan(void)
{
	unsigned long b, i, nb = vb.mem_pages / RUN_PAGES;
	unsigned long poisoned = 0, pair_blocks = 0, *pcp;

	if (!vb.p->shared)
		return;
	/* Pages on the per-CPU lists are free. */
	pcp = calloc(BITS_TO_LONGS(vb.mem_pages), sizeof(long));
	if (!pcp)
		pamt_sim_fatal("out of memory", __FILE__, __LINE__);
	vt_pcp_mark(pcp, VB_BASE_PFN, vb.mem_pages);
	vt_untracked(true);
	for (b = 0; b < nb; b++) {
		unsigned long n = 0;

		for (i = 0; i < RUN_PAGES; i++) {
			unsigned long off = b * RUN_PAGES + i;

			if (pamt_sim_pfn_allocated(VB_BASE_PFN + off) &&
			    !test_bit(off, pcp) && !vb.guest_map[off] &&
			    !test_bit(VB_BASE_PFN + off - pamt_fake.start_pfn,
				      pamt_fake.td_map))
				n++;
		}
		pair_blocks += n > 0;
		poisoned += n > 0 && n < RUN_PAGES;
	}
	vt_untracked(false);
	free(pcp);
	vb.blocks = nb;
	if (poisoned >= vb.poisoned) {
		vb.poisoned = poisoned;
		vb.pair_blocks = pair_blocks;
	}
}

static void vc_push(struct vb_vcpu *vc, unsigned long e)
{
	if (vc->nr_pages == vc->cap_pages) {
		vc->cap_pages = vc->cap_pages ? 2 * vc->cap_pages : 1024;
		vc->pages = realloc(vc->pages, vc->cap_pages * sizeof(*vc->pages));
		if (!vc->pages)
			pamt_sim_fatal("out of memory", __FILE__, __LINE__);
	}
	vc->pages[vc->nr_pages++] = e;
}

static unsigned long guest_page(struct vb_vcpu *vc)
{
	if (vb.p->shared) {
		unsigned long pfn;

		if (vc->ibat == vc->nbat) {
			for (vc->nbat = 0; vc->nbat < vb.p->td_batch; vc->nbat++) {
				pfn = vt_guest_alloc_pfn();
				if (!pfn)
					pamt_sim_fatal("host memory exhausted",
						       __FILE__, __LINE__);
				vb.guest_map[pfn - VB_BASE_PFN] = 1;
				vc->bat[vc->nbat] = pfn;
			}
			vc->ibat = 0;
		}
		return vc->bat[vc->ibat++];
	}
	if (!vc->run || vc->run_used == RUN_PAGES) {
		vc->run = pool_take_run();
		vc->run_used = 0;
	}
	return vc->run + vc->run_used++;
}

/* Whether the next get or put of @pfn takes a slow path: not modelled. */
static unsigned long probe_refs(unsigned long pfn)
{
	unsigned long refs;

	vt_untracked(true);
	refs = vb.ops->refs(pfn);
	vt_untracked(false);
	return refs;
}

/* VT_SLOW_NS=n in the environment: what each get or put above n ns did. */
static u64 debug_slow_ns;

static void debug_op(const char *op, struct vb_vcpu *vc, u64 ns,
		     const struct vt_stats *s0)
{
	const struct vt_stats *s = &vt_stats[vc->cpu];

	if (!debug_slow_ns || ns < debug_slow_ns)
		return;
	fprintf(stderr, "slow %s cpu %u at %.1f us: %llu ns: seamcall %.1f us, lock wait %.1f us, %llu xfers, %llu relax, %llu parks, %llu page allocs/frees\n",
		op, vc->cpu, vt_now_ps() / 1e6, (unsigned long long)ns,
		(s->seam_ps - s0->seam_ps) / 1e6,
		(s->lock_wait_ps - s0->lock_wait_ps) / 1e6,
		(unsigned long long)(s->xfers - s0->xfers),
		(unsigned long long)(s->relax - s0->relax),
		(unsigned long long)(s->parks - s0->parks),
		(unsigned long long)(s->palloc - s0->palloc));
}

/*
 * The work the cache queued (the cap's worker, the shrinker's drains):
 * the kernel runs it soon on a kworker; here on this CPU, after the call
 * that queued it, outside its latency.  The queueing itself was charged.
 */
static void run_queued_work(void)
{
	if (__atomic_exchange_n(&pamt_sim_deferred.counter, 0, __ATOMIC_RELAXED))
		pamt_shrink_deferred();
}

static void timed_get(struct vb_vcpu *vc, unsigned long pfn)
{
	int slow = probe_refs(pfn) == 0;
	u64 t0, s0 = vt_stats[vc->cpu].seam_ps, ns;
	struct vt_stats st0 = vt_stats[vc->cpu];
	int ret;

	pamt_sim_enter_atomic();
	t0 = vt_now_ps();
	vt_advance_ns(vb.p->call_ns);
	ret = vb.ops->get(pfn, &vc->res);
	ns = (vt_now_ps() - t0 + 500) / 1000;
	debug_op("get", vc, ns, &st0);
	if (!ret) {
		u64 st;

		while ((st = pamt_fake_page_aug(pfn)) == TDX_PAMT_OPERAND_BUSY) {
			vc->td_busy += vb.measuring;
			cpu_relax();
		}
		if (st)
			vc->errors++;
	}
	pamt_sim_exit_atomic();
	run_queued_work();
	if (ret) {
		vc->errors++;
		return;
	}
	if (vb.measuring) {
		lat_add(&vc->get, ns, slow);
		if (slow) {
			vc->slow_ps += ns * 1000;
			vc->slow_seam_ps += vt_stats[vc->cpu].seam_ps - s0;
		}
	}
}

static void timed_put(struct vb_vcpu *vc, unsigned long pfn)
{
	int slow = probe_refs(pfn) <= 1;
	struct vt_stats st0;
	u64 t0, s0, ns;
	int ret;

	while (pamt_fake_page_remove(pfn) == TDX_PAMT_OPERAND_BUSY) {
		vc->td_busy += vb.measuring;
		cpu_relax();
	}
	s0 = vt_stats[vc->cpu].seam_ps;
	st0 = vt_stats[vc->cpu];
	pamt_sim_enter_atomic();
	t0 = vt_now_ps();
	vt_advance_ns(vb.p->call_ns);
	ret = vb.ops->put(pfn);
	ns = (vt_now_ps() - t0 + 500) / 1000;
	debug_op("put", vc, ns, &st0);
	pamt_sim_exit_atomic();
	run_queued_work();
	if (ret) {
		vc->errors++;
		return;
	}
	if (vb.measuring) {
		lat_add(&vc->put, ns, slow);
		if (slow) {
			vc->slow_ps += ns * 1000;
			vc->slow_seam_ps += vt_stats[vc->cpu].seam_ps - s0;
		}
	}
}

/* The work between two faults, jittered when asked. */
static void fault_work(struct vb_vcpu *vc)
{
	double j = vb.p->work_jitter_ns;

	if (j < 1) {
		vt_advance_ns(vb.p->work_ns);
		return;
	}
	vt_advance_ns(vb.p->work_ns - j / 2 + bench_rng(&vc->rng) % (u64)j);
}

static void fault_one(struct vb_vcpu *vc, unsigned long i)
{
	unsigned long pfn;

	fault_work(vc);
	strat_enter_td(vc->td);
	if (vb.ops->topup(&vc->res))
		vc->errors++;
	if (i % 512 == 0) {
		struct page *pg = alloc_page(GFP_KERNEL);

		if (!pg) {
			vc->errors++;
		} else {
			/* A TD page for the scan, not a pair page. */
			if (vb.p->shared)
				vb.guest_map[page_to_pfn(pg) - VB_BASE_PFN] = 1;
			timed_get(vc, page_to_pfn(pg));
			vc_push(vc, page_to_pfn(pg) | SEPT_FLAG);
		}
	}
	pfn = guest_page(vc);
	timed_get(vc, pfn);
	vc_push(vc, pfn);
}

/* Unmap one page at teardown. */
static void unmap_one(struct vb_vcpu *vc, unsigned long e, double work)
{
	unsigned long pfn = e & ~SEPT_FLAG;

	vt_advance_ns(work);
	timed_put(vc, pfn);
	/*
	 * Split pool: guest runs do not go back, other TDs may still be
	 * booting.  Shared: the page goes back to the allocator, as
	 * guest_memfd's would.
	 */
	if (e & SEPT_FLAG) {
		if (vb.p->shared)
			vb.guest_map[pfn - VB_BASE_PFN] = 0;
		__free_page(pfn_to_page(pfn));
	} else if (vb.p->shared) {
		guest_free(pfn);
	}
}

/*
 * All CPUs meet; CPU 0 takes the counters, untracked: reading every CPU's
 * counter lines would make each CPU's next store to them a transfer, a
 * cost of the instrument, not of the strategy.  All go on together.
 */
static void phase_mark(struct vb_vcpu *vc, bool start)
{
	vt_barrier_wait(&vb.all);
	if (vc->cpu == 0) {
		if (!start && vb.p->scenario != VB_BOOT)
			mem_scan();
		vt_untracked(true);
		vb.ops->ctrs(start ? &vb.c0 : &vb.c1);
		vt_untracked(false);
		if (start) {
			vb.t0_ps = vt_now_ps();
			vt_fake_add_max_ns = 0;
		} else {
			vb.t1_ps = vt_now_ps();
			vb.add_max_ns = vt_fake_add_max_ns;
		}
		vb.measuring = start;
	}
	vt_barrier_wait(&vb.all);
}

/* The TD's teardown: its first @teardown_threads vCPUs share its pages. */
static void teardown(struct vb_vcpu *vc)
{
	struct vb_vcpu *td0 = &vb.vc[vc->td * vb.p->vcpus];
	unsigned int nt = vb.p->teardown_threads, v, i;

	vt_barrier_wait(&vb.td_bar[vc->td]);
	if (vc->v >= nt)
		return;
	for (v = vc->v; v < vb.p->vcpus; v += nt) {
		struct vb_vcpu *o = &td0[v];

		for (i = 0; i < o->nr_pages; i++)
			unmap_one(vc, o->pages[i], vb.p->put_work_ns);
		o->nr_pages = 0;
	}
}

static void refault(struct vb_vcpu *vc, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		unsigned long pfn;

		fault_work(vc);
		strat_enter_td(vc->td);
		if (vb.ops->topup(&vc->res))
			vc->errors++;
		pfn = guest_page(vc);
		timed_get(vc, pfn);
		vc_push(vc, pfn);
	}
}

/*
 * Shared memory: release the oldest td_batch guest pages (pages a vCPU
 * took together, so one 2M block's worth by default, not necessarily one
 * aligned range) back to the allocator, then fault as many new ones.
 */
static void churn_shared(struct vb_vcpu *vc)
{
	unsigned long i, w, n;
	unsigned int k;

	for (k = 0; k < vb.p->churn_runs; k++) {
		for (i = 0, w = 0, n = 0; i < vc->nr_pages; i++) {
			unsigned long e = vc->pages[i];

			if (!(e & SEPT_FLAG) && n < vb.p->td_batch) {
				vt_advance_ns(vb.p->work_ns);
				timed_put(vc, e);
				guest_free(e);
				n++;
				continue;
			}
			vc->pages[w++] = e;
		}
		vc->nr_pages = w;
		refault(vc, n);
	}
}

/* Release the oldest 2M run this vCPU holds, then fault a new one in. */
static void churn(struct vb_vcpu *vc)
{
	unsigned int k;
	unsigned long i, w, n;

	if (vb.p->shared) {
		churn_shared(vc);
		return;
	}
	for (k = 0; k < vb.p->churn_runs; k++) {
		unsigned long first = ~0UL;

		/* The oldest guest run: the run of the first guest page held. */
		for (i = 0; i < vc->nr_pages; i++)
			if (!(vc->pages[i] & SEPT_FLAG)) {
				first = vc->pages[i] & ~(RUN_PAGES - 1);
				break;
			}
		if (first == ~0UL)
			return;
		for (i = 0, w = 0; i < vc->nr_pages; i++) {
			unsigned long e = vc->pages[i];

			if (!(e & SEPT_FLAG) &&
			    (e & ~(RUN_PAGES - 1)) == first) {
				vt_advance_ns(vb.p->work_ns);
				timed_put(vc, e);
				continue;
			}
			vc->pages[w++] = e;
		}
		n = vc->nr_pages - w;
		vc->nr_pages = w;
		/* A run in use by this vCPU goes back whole; its tail is unused. */
		if (vc->run == first)
			vc->run = 0;
		pool_give_run(first);
		refault(vc, n);
	}
}

/* Every guest page to shared (puts), then all back to private (gets). */
static void storm(struct vb_vcpu *vc)
{
	unsigned long i;

	for (i = 0; i < vc->nr_pages; i++)
		if (!(vc->pages[i] & SEPT_FLAG)) {
			vt_advance_ns(vb.p->storm_work_ns);
			timed_put(vc, vc->pages[i]);
		}
	for (i = 0; i < vc->nr_pages; i++)
		if (!(vc->pages[i] & SEPT_FLAG)) {
			vt_advance_ns(vb.p->storm_work_ns);
			strat_enter_td(vc->td);
			if (vb.ops->topup(&vc->res))
				vc->errors++;
			timed_get(vc, vc->pages[i]);
		}
}

static void vcpu_fn(void *arg)
{
	struct vb_vcpu *vc = arg;
	unsigned long i;

	pamt_sim_set_cpu(vc->cpu);
	if (vb.p->scenario == VB_BOOT)
		phase_mark(vc, true);
	/* After the start line: the barrier would undo it. */
	if (vb.p->start_jitter_ns >= 1)
		vt_advance_ns(bench_rng(&vc->rng) % (u64)vb.p->start_jitter_ns);
	for (i = 0; i < vc->nguest; i++)
		fault_one(vc, i);
	/* The last vCPU to finish its boot scans: every TD is up (or was). */
	if (++vb.nfaulted == vb.nvc)
		mem_scan();
	if (vb.p->scenario == VB_CHURN) {
		phase_mark(vc, true);
		churn(vc);
		phase_mark(vc, false);
	} else if (vb.p->scenario == VB_STORM) {
		phase_mark(vc, true);
		storm(vc);
		phase_mark(vc, false);
	}
	teardown(vc);
	if (vb.p->scenario == VB_BOOT)
		phase_mark(vc, false);
	vt_barrier_wait(&vb.all);
	vb.ops->drain(&vc->res);
}

/* ---- environment ---- */
static unsigned long roundup_run(unsigned long n)
{
	return (n + RUN_PAGES - 1) / RUN_PAGES * RUN_PAGES;
}

void vb_fake_env_up(unsigned long nr_pages)
{
	vt_sim_reseed(1);
	atomic_long_set(&pamt_sim_warnings, 0);
	if (pamt_sim_mem_init(VB_BASE_PFN, nr_pages) ||
	    pamt_fake_init(VB_BASE_PFN, VB_BASE_PFN + nr_pages))
		pamt_sim_fatal("out of memory", __FILE__, __LINE__);
}

void vb_fake_env_down(void)
{
	pamt_fake_exit();
	pamt_sim_mem_exit();
}

static double host_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool accounting(const struct vb_params *p, struct vb_result *r)
{
	struct strat_ctrs c;
	unsigned long base;
	bool ok = true;

	vb.ops->ctrs(&c);
	if (p->strat >= S_LEAN) {
		u64 v[TDX_PAMT_STAT_NR];
		long in_pairs;

		tdx_pamt_read_stats(v);
		in_pairs = (long)(v[TDX_PAMT_STAT_PAGE_ALLOC] -
				  v[TDX_PAMT_STAT_PAGE_FREE]);
		if (in_pairs != 2 * (long)(v[TDX_PAMT_STAT_INSTALLED] +
					   v[TDX_PAMT_STAT_CACHED_PAIRS]))
			ok = false;
		if (v[TDX_PAMT_STAT_INSTALLED] !=
		    (u64)atomic64_read(&pamt_fake.pairs))
			ok = false;
		if ((long)pamt_sim_pages_in_use() != in_pairs)
			ok = false;
		if (v[TDX_PAMT_STAT_LEAKED])
			ok = false;
	} else {
		if (c.pamt_pages != 2 * (u64)atomic64_read(&pamt_fake.pairs))
			ok = false;
		if (pamt_sim_pages_in_use() != c.pamt_pages)
			ok = false;
	}
	for (base = VB_BASE_PFN; base < pamt_fake.end_pfn; base += RUN_PAGES)
		if (vb.ops->refs(base))
			ok = false;
	r->check_bad += pamt_fake_check_all();
	return ok;
}

void vb_run(const struct vb_params *p, struct vb_result *r, FILE *log)
{
	unsigned long guest = roundup_run(p->pages_per_td + p->vcpus * RUN_PAGES);
	unsigned long pool = guest * p->tds * (p->pool_spread ? p->pool_spread : 1);
	unsigned long extra, total, i;
	struct tdx_pamt_range range;
	unsigned int v;
	double t = host_now();

	memset(r, 0, sizeof(*r));
	memset(&vb, 0, sizeof(vb));
	if (getenv("VT_SLOW_NS"))
		debug_slow_ns = strtoull(getenv("VT_SLOW_NS"), NULL, 0);
	if (p->tds * p->vcpus > p->cpus || p->cpus > VT_MAX_CPUS ||
	    !p->teardown_threads || p->teardown_threads > p->vcpus)
		pamt_sim_fatal("bad virtual-time parameters", __FILE__, __LINE__);
	vb.p = p;
	vb.ops = &strat_ops[p->strat];
	/* Pairs, S-EPT pages and reserves come from the page allocator. */
	extra = roundup_run(guest * p->tds / 64 + p->cpus * 512UL + 16384);
	total = pool + extra;
	range.start_pfn = VB_BASE_PFN;
	range.end_pfn = VB_BASE_PFN + total;

	pamt_sim_set_nr_cpus(p->cpus);
	pamt_sim_set_cpu(0);
	vt_sim_reseed(p->seed);
	atomic_long_set(&pamt_sim_warnings, 0);
	/* Shared: one allocator over all of it; split: the pool kept out. */
	if (pamt_sim_mem_init(p->shared ? VB_BASE_PFN : VB_BASE_PFN + pool,
			      p->shared ? total : extra) ||
	    pamt_fake_init(range.start_pfn, range.end_pfn))
		pamt_sim_fatal("out of memory", __FILE__, __LINE__);
	vb.mem_pages = total;
	if (p->shared) {
		vb.guest_map = calloc(total, 1);
		if (!vb.guest_map || !p->td_batch)
			pamt_sim_fatal("bad shared memory", __FILE__, __LINE__);
	}
	pamt_fake_set_latency(PAMT_FAKE_ADD, p->add_ns / 2, p->add_ns,
			      p->add_ns * 18 / 4);
	pamt_fake_set_latency(PAMT_FAKE_REMOVE, p->remove_ns / 2, p->remove_ns,
			      p->remove_ns * 11 / 2);
	if (vb.ops->init(&range))
		pamt_sim_fatal("strategy init failed", __FILE__, __LINE__);

	vb.nr_runs = pool / RUN_PAGES;
	vb.runs = malloc(vb.nr_runs * sizeof(*vb.runs));
	for (i = 0; i < vb.nr_runs; i++)
		vb.runs[i] = VB_BASE_PFN + (vb.nr_runs - 1 - i) * RUN_PAGES;
	vb.nfree_runs = vb.nr_runs;
	if (p->pool_shuffle) {
		u64 rng = bench_mix(p->seed, 0x5eed);

		for (i = vb.nr_runs - 1; i > 0; i--) {
			unsigned long j = bench_rng(&rng) % (i + 1), t = vb.runs[i];

			vb.runs[i] = vb.runs[j];
			vb.runs[j] = t;
		}
	}

	vb.nvc = p->tds * p->vcpus;
	vb.vc = calloc(vb.nvc, sizeof(*vb.vc));
	vb.td_bar = calloc(p->tds, sizeof(*vb.td_bar));
	vb.all.n = vb.nvc;
	for (i = 0; i < p->tds; i++)
		vb.td_bar[i].n = p->vcpus;

	vt_init(p->cpus);
	vt_fake_regions();
	for (v = 0; v < vb.nvc; v++) {
		struct vb_vcpu *vc = &vb.vc[v];

		vc->td = v / p->vcpus;
		vc->v = v % p->vcpus;
		vc->cpu = v;
		vc->nguest = p->pages_per_td / p->vcpus +
			     (vc->v < p->pages_per_td % p->vcpus);
		vc->rng = bench_mix(p->seed, v);
		if (p->shared && !(vc->bat = malloc(p->td_batch * sizeof(*vc->bat))))
			pamt_sim_fatal("out of memory", __FILE__, __LINE__);
		vt_spawn(v, vcpu_fn, vc);
	}
	vt_run();

	for (v = 0; v < p->cpus; v++) {
		r->xfers += vt_stats[v].xfers;
		r->accesses += vt_stats[v].accesses;
		r->relax += vt_stats[v].relax;
		r->parks += vt_stats[v].parks;
	}
	for (v = 0; v < vb.nvc; v++) {
		struct vb_vcpu *vc = &vb.vc[v];

		lat_merge(&r->get, &vc->get);
		lat_merge(&r->put, &vc->put);
		r->slow_ps += vc->slow_ps;
		r->slow_seam_ps += vc->slow_seam_ps;
		r->errors += vc->errors;
		r->td_busy += vc->td_busy;
		/* Guest pages taken but never faulted go back. */
		while (vc->ibat < vc->nbat)
			guest_free(vc->bat[vc->ibat++]);
		free(vc->bat);
		free(vc->pages);
	}
	r->c.lock = vb.c1.lock - vb.c0.lock;
	r->c.add = vb.c1.add - vb.c0.add;
	r->c.remove = vb.c1.remove - vb.c0.remove;
	r->c.busy = vb.c1.busy - vb.c0.busy;
	r->c.palloc = vb.c1.palloc - vb.c0.palloc;
	r->c.pfree = vb.c1.pfree - vb.c0.pfree;
	r->elapsed_ns = (vb.t1_ps - vb.t0_ps) / 1000;
	r->add_max_ns = vb.add_max_ns;
	r->blocks = vb.blocks;
	r->poisoned = vb.poisoned;
	r->pair_blocks = vb.pair_blocks;

	r->accounting_bad = !accounting(p, r);
	vt_clear_regions();
	vb.ops->exit();
	if (atomic64_read(&pamt_fake.pairs))
		r->check_bad++;
	r->violations = atomic64_read(&pamt_fake.violations);
	r->warnings = atomic_long_read(&pamt_sim_warnings);
	r->leaked_pages = (long)pamt_sim_pages_in_use();
	r->ok = !r->accounting_bad && !r->check_bad && !r->violations &&
		!r->warnings && !r->errors && !r->leaked_pages &&
		r->get.count == r->put.count;
	pamt_fake_exit();
	pamt_sim_mem_exit();
	vt_fini();
	free(vb.vc);
	free(vb.td_bar);
	free(vb.runs);
	free(vb.guest_map);
	r->wall_s = host_now() - t;
	if (log)
		fprintf(log, "  [%s %s %u TDs x %u on %u CPUs: %.1f s host]\n",
			vb_scen_names[p->scenario], strat_names[p->strat],
			p->tds, p->vcpus, p->cpus, r->wall_s);
}

const char *vb_check_text(const struct vb_result *r, char *buf, size_t n)
{
	snprintf(buf, n, "%s: accounting %s, violations %llu, warnings %llu, errors %llu, checks %llu, leaked pages %ld",
		 r->ok ? "ok" : "BAD", r->accounting_bad ? "BAD" : "exact",
		 (unsigned long long)r->violations,
		 (unsigned long long)r->warnings,
		 (unsigned long long)r->errors,
		 (unsigned long long)r->check_bad, r->leaked_pages);
	return buf;
}

void vb_print_header(FILE *f, const struct vb_params *p)
{
	fprintf(f, "# virtual time: MODELLED, not measured on this machine\n");
	vt_print_model(f);
	fprintf(f, "#   --work %g        a vCPU's work between two faults (TD exit, KVM fault\n"
		   "#                      handling, PAGE.AUG, TD entry); not in the seed: swept\n"
		   "#   --put-work %g     teardown work between two puts (PAGE.REMOVE etc.)\n"
		   "#   --storm-work %g    work per page converted in a storm\n"
		   "#   --add %g --remove %g  mean PAMT.ADD / PAMT.REMOVE (min mean/2, max\n"
		   "#                      4.5x / 5.5x mean: the public DPAMT review thread, BENCHMARKS.md)\n"
		   "#   --call-ns %g       floor per get/put (instructions, timestamps)\n"
		   "#   --start-jitter %g   each vCPU starts after a random delay below this\n"
		   "#   --work-jitter %g    the work between faults drawn from work +- this / 2\n"
		   "#   teardown: %u thread(s) per TD; host memory: %ux the TDs'; seed %llu\n",
		p->work_ns, p->put_work_ns, p->storm_work_ns, p->add_ns,
		p->remove_ns, p->call_ns, p->start_jitter_ns, p->work_jitter_ns,
		p->teardown_threads,
		p->pool_spread, (unsigned long long)p->seed);
	if (p->shared)
		fprintf(f, "#   --shared 1: guest, S-EPT and pair pages from one buddy allocator;\n"
			   "#                      a vCPU takes --td-batch %u guest pages at a time\n",
			p->td_batch);
	else
		fprintf(f, "#   --shared 0: guest pages in 2M runs from a split pool, %s\n",
			p->pool_shuffle ? "shuffled" : "in address order");
}

void vb_print_result(FILE *f, const struct vb_params *p,
		     const struct vb_result *r)
{
	char buf[256];

	fprintf(f, "%-8s %-5s %3u CPUs %2u TDs: get n=%llu avg=%.3f us p99.9=%.1f max=%.1f total=%.1f ms;"
		" put n=%llu avg=%.3f max=%.1f total=%.1f ms; lock=%llu add=%llu remove=%llu busy=%llu"
		" td-busy=%llu"
		" slow=%.1f ms seam-in-slow=%.1f ms max-add=%.1f us elapsed=%.1f ms xfers=%llu accesses=%llu parks=%llu"
		" poisoned=%lu/%lu pair-blocks=%lu %s\n",
		strat_names[p->strat], vb_scen_names[p->scenario], p->cpus,
		p->tds, (unsigned long long)r->get.count,
		lat_avg(&r->get) / 1000, lat_quantile(&r->get, 0.999) / 1000.0,
		r->get.max / 1000.0, r->get.total / 1e6,
		(unsigned long long)r->put.count, lat_avg(&r->put) / 1000,
		r->put.max / 1000.0, r->put.total / 1e6,
		(unsigned long long)r->c.lock, (unsigned long long)r->c.add,
		(unsigned long long)r->c.remove, (unsigned long long)r->c.busy,
		(unsigned long long)r->td_busy, r->slow_ps / 1e9, r->slow_seam_ps / 1e9, r->add_max_ns / 1e3, r->elapsed_ns / 1e6,
		(unsigned long long)r->xfers, (unsigned long long)r->accesses,
		(unsigned long long)r->parks, r->poisoned, r->blocks,
		r->pair_blocks, r->ok ? "ok" : vb_check_text(r, buf, sizeof(buf)));
}
