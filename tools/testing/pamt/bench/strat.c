// SPDX-License-Identifier: GPL-2.0
/*
 * The four strategies behind one interface.
 *
 * lock and atomic are reference implementations of the upstream DPAMT v6
 * patches 05 and 06 as the design brief (section 3) describes them: one
 * 4-byte refcount per 2M range and one global lock.
 *
 *   lock:   get and put each take the lock; the 0->1 get issues PAMT.ADD
 *           and the 1->0 put PAMT.REMOVE, both under the lock.
 *   atomic: get tries atomic_inc_not_zero(); failing that it takes a pair
 *           (from the vCPU's pre-allocated reserve, else the page
 *           allocator), takes the lock, re-reads the count and issues
 *           PAMT.ADD only if it is still 0.  put is atomic_dec_and_lock():
 *           only the 1->0 step takes the lock and issues PAMT.REMOVE; the
 *           pair pages are then reset and freed.
 *
 * Both count their own lock acquisitions and page-allocator calls in
 * per-CPU counters; SEAMCALLs are counted by the fake module for every
 * strategy alike.  lean and magazine are thin wrappers over the core.
 */
#include "bench.h"

const char * const strat_names[S_NR] = {
	[S_LOCK]	= "lock",
	[S_ATOMIC]	= "atomic",
	[S_LEAN]	= "lean",
	[S_MAG]		= "magazine",
};

/* ---- lock and atomic ---- */
struct ref_pcpu {
	u64 lock;
	u64 palloc;
	u64 pfree;
} __attribute__((aligned(64)));

static struct {
	atomic_t *refs;
	unsigned long base_idx;
	unsigned long nr_slots;
	struct bench_spin pamt_lock;
	struct ref_pcpu pcpu[PAMT_SIM_MAX_CPUS];
} ref;

#define REF_BUSY_RETRIES	10

#define ref_count(field, n) \
	__atomic_fetch_add(&ref.pcpu[pamt_sim_cpu].field, (n), __ATOMIC_RELAXED)

static int ref_init(const struct tdx_pamt_range *range)
{
	ref.base_idx = range->start_pfn / TDX_PAMT_PAGES_PER_SLOT;
	ref.nr_slots = (range->end_pfn - range->start_pfn) /
		       TDX_PAMT_PAGES_PER_SLOT;
	ref.refs = calloc(ref.nr_slots, sizeof(*ref.refs));
	memset(ref.pcpu, 0, sizeof(ref.pcpu));
	bench_spin_init(&ref.pamt_lock);
	return ref.refs ? 0 : -ENOMEM;
}

static void ref_exit(void)
{
	free(ref.refs);
	ref.refs = NULL;
	ref.nr_slots = 0;
}

static atomic_t *ref_slot(unsigned long pfn)
{
	unsigned long idx = pfn / TDX_PAMT_PAGES_PER_SLOT - ref.base_idx;

	return idx < ref.nr_slots ? &ref.refs[idx] : NULL;
}

static unsigned long ref_base(unsigned long pfn)
{
	return pfn & ~(unsigned long)(TDX_PAMT_PAGES_PER_SLOT - 1);
}

static void ref_lock(void)
{
	bench_spin_lock(&ref.pamt_lock);
	pamt_sim_enter_atomic();
	ref_count(lock, 1);
}

static void ref_unlock(void)
{
	pamt_sim_exit_atomic();
	bench_spin_unlock(&ref.pamt_lock);
}

static int ref_pair_alloc(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	struct page *p0, *p1;

	p0 = alloc_page(gfp);
	if (!p0)
		return -ENOMEM;
	p1 = alloc_page(gfp);
	if (!p1) {
		__free_page(p0);
		ref_count(palloc, 1);
		ref_count(pfree, 1);
		return -ENOMEM;
	}
	ref_count(palloc, 2);
	pair->pfn[0] = page_to_pfn(p0);
	pair->pfn[1] = page_to_pfn(p1);
	return 0;
}

/* A pair that was in the module: reset, then back to the allocator. */
static void ref_pair_free(const struct tdx_pamt_pair *pair, bool reset)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (reset)
			pamt_fake_ops.reset_page(pair->pfn[i]);
		__free_page(pfn_to_page(pair->pfn[i]));
	}
	ref_count(pfree, 2);
}

static int ref_pair_take(struct tdx_pamt_pair *pair,
			 struct tdx_pamt_cache *res)
{
	if (res && res->nr) {
		*pair = res->pairs[--res->nr];
		return 0;
	}
	return ref_pair_alloc(pair, GFP_NOWAIT | __GFP_NOWARN);
}

/* Give an unused pair back to where it came from. */
static void ref_pair_untake(const struct tdx_pamt_pair *pair,
			    struct tdx_pamt_cache *res)
{
	if (res && res->nr < TDX_PAMT_CACHE_MAX)
		res->pairs[res->nr++] = *pair;
	else
		ref_pair_free(pair, false);
}

static u64 ref_add(unsigned long pfn, const struct tdx_pamt_pair *pair)
{
	u64 st;
	int try;

	for (try = 0; ; try++) {
		st = pamt_fake_ops.add(ref_base(pfn), pair);
		if ((st & TDX_PAMT_STATUS_MASK) != TDX_PAMT_OPERAND_BUSY ||
		    try == REF_BUSY_RETRIES)
			return st;
	}
}

static u64 ref_remove(unsigned long pfn, struct tdx_pamt_pair *pair)
{
	u64 st;
	int try;

	for (try = 0; ; try++) {
		st = pamt_fake_ops.remove(ref_base(pfn), pair);
		if ((st & TDX_PAMT_STATUS_MASK) != TDX_PAMT_OPERAND_BUSY ||
		    try == REF_BUSY_RETRIES)
			return st;
	}
}

static int ref_topup(struct tdx_pamt_cache *res)
{
	might_sleep();
	while (res->nr < BENCH_TOPUP) {
		if (ref_pair_alloc(&res->pairs[res->nr], GFP_KERNEL))
			return -ENOMEM;
		res->nr++;
	}
	return 0;
}

static void ref_drain(struct tdx_pamt_cache *res)
{
	while (res->nr)
		ref_pair_free(&res->pairs[--res->nr], false);
}

/* v6 patch 05: everything under pamt_lock. */
static int lock_get(unsigned long pfn, struct tdx_pamt_cache *res)
{
	struct tdx_pamt_pair pair;
	atomic_t *slot = ref_slot(pfn);
	int ret = 0;

	if (!slot)
		return -EINVAL;
	ref_lock();
	if (!atomic_read(slot)) {
		ret = ref_pair_take(&pair, res);
		if (!ret && ref_add(pfn, &pair)) {
			WARN_ONCE(1, "lock: PAMT.ADD failed\n");
			ref_pair_untake(&pair, res);
			ret = -EIO;
		}
	}
	if (!ret)
		atomic_set(slot, atomic_read(slot) + 1);
	ref_unlock();
	return ret;
}

static int lock_put(unsigned long pfn)
{
	struct tdx_pamt_pair pair;
	atomic_t *slot = ref_slot(pfn);
	bool freed = false;

	if (!slot)
		return -EINVAL;
	ref_lock();
	if (atomic_read(slot) == 1) {
		if (ref_remove(pfn, &pair)) {
			WARN_ONCE(1, "lock: PAMT.REMOVE failed, pair leaked\n");
			ref_unlock();
			return 0;
		}
		freed = true;
	}
	atomic_set(slot, atomic_read(slot) - 1);
	ref_unlock();
	if (freed)
		ref_pair_free(&pair, true);
	return 0;
}

/*
 * v6 patch 06, "Optimize tdx_pamt_get/put()".  The slow paths are kept out
 * of line so the fast paths carry no register spills: the reference gets
 * the same care as the core.
 */
static __attribute__((__noinline__)) int
atomic_get_slow(atomic_t *slot, unsigned long pfn, struct tdx_pamt_cache *res)
{
	struct tdx_pamt_pair pair;
	int ret = 0;

	if (ref_pair_take(&pair, res))
		return -ENOMEM;
	ref_lock();
	if (atomic_read(slot)) {
		/* Somebody else installed it meanwhile. */
		atomic_inc(slot);
		ref_unlock();
		ref_pair_untake(&pair, res);
		return 0;
	}
	if (ref_add(pfn, &pair)) {
		WARN_ONCE(1, "atomic: PAMT.ADD failed\n");
		ret = -EIO;
	} else {
		atomic_set(slot, 1);
	}
	ref_unlock();
	if (ret)
		ref_pair_untake(&pair, res);
	return ret;
}

static int atomic_get(unsigned long pfn, struct tdx_pamt_cache *res)
{
	atomic_t *slot = ref_slot(pfn);

	if (unlikely(!slot))
		return -EINVAL;
	if (likely(atomic_add_unless(slot, 1, 0)))
		return 0;
	return atomic_get_slow(slot, pfn, res);
}

static __attribute__((__noinline__)) int
atomic_put_slow(atomic_t *slot, unsigned long pfn)
{
	struct tdx_pamt_pair pair;

	ref_lock();
	if (atomic_dec_return(slot)) {
		ref_unlock();
		return 0;
	}
	if (ref_remove(pfn, &pair)) {
		WARN_ONCE(1, "atomic: PAMT.REMOVE failed, pair leaked\n");
		atomic_set(slot, 1);
		ref_unlock();
		return 0;
	}
	ref_unlock();
	ref_pair_free(&pair, true);
	return 0;
}

static int atomic_put(unsigned long pfn)
{
	atomic_t *slot = ref_slot(pfn);

	if (unlikely(!slot))
		return -EINVAL;
	/* atomic_dec_and_lock(): the lock only for the 1->0 step. */
	if (likely(atomic_add_unless(slot, -1, 1)))
		return 0;
	return atomic_put_slow(slot, pfn);
}

static struct page *ref_ctl_alloc(const struct strat_ops *ops)
{
	struct page *page = alloc_page(GFP_KERNEL);

	/* Ioctl context: a pair, if needed, comes straight from the allocator. */
	if (!page)
		return NULL;
	if (ops->get(page_to_pfn(page), NULL)) {
		__free_page(page);
		return NULL;
	}
	return page;
}

static struct page *lock_ctl_alloc(void)
{
	return ref_ctl_alloc(&strat_ops[S_LOCK]);
}

static struct page *atomic_ctl_alloc(void)
{
	return ref_ctl_alloc(&strat_ops[S_ATOMIC]);
}

static void lock_ctl_free(struct page *page)
{
	lock_put(page_to_pfn(page));
	__free_page(page);
}

static void atomic_ctl_free(struct page *page)
{
	atomic_put(page_to_pfn(page));
	__free_page(page);
}

static unsigned long ref_refs(unsigned long pfn)
{
	atomic_t *slot = ref_slot(pfn);

	return slot ? (unsigned long)atomic_read(slot) : 0;
}

static void ref_ctrs(struct strat_ctrs *c)
{
	unsigned int cpu;

	memset(c, 0, sizeof(*c));
	for (cpu = 0; cpu < PAMT_SIM_MAX_CPUS; cpu++) {
		c->lock += __atomic_load_n(&ref.pcpu[cpu].lock, __ATOMIC_RELAXED);
		c->palloc += __atomic_load_n(&ref.pcpu[cpu].palloc, __ATOMIC_RELAXED);
		c->pfree += __atomic_load_n(&ref.pcpu[cpu].pfree, __ATOMIC_RELAXED);
	}
	c->add = atomic64_read(&pamt_fake.calls[PAMT_FAKE_ADD]);
	c->remove = atomic64_read(&pamt_fake.calls[PAMT_FAKE_REMOVE]);
	c->busy = atomic64_read(&pamt_fake.busy[PAMT_FAKE_ADD]) +
		  atomic64_read(&pamt_fake.busy[PAMT_FAKE_REMOVE]);
	c->pamt_pages = c->palloc - c->pfree;
	/* Pairs held in reserves, not in the module. */
	c->idle_pairs = c->pamt_pages / 2 - atomic64_read(&pamt_fake.pairs);
}

/* ---- the core ---- */

/*
 * The core issues each SEAMCALL with IRQs off and tells the shim so, as in
 * the harness: pamt_env_ops (shim/fake_ops.c).
 */
static int core_init(const struct tdx_pamt_range *range,
		     unsigned long idle_cap)
{
	struct tdx_pamt_config cfg = {
		.idle_cap = idle_cap,
		.ops = &pamt_env_ops,
	};
	int ret;

	ret = tdx_pamt_init(range, 1, &cfg);
	/* The host preempts a thread in a transition; the kernel never. */
	pamt.wait_ns = 60ULL * NSEC_PER_SEC;
	return ret;
}

static int lean_init(const struct tdx_pamt_range *range)
{
	return core_init(range, 1);
}

static int mag_init(const struct tdx_pamt_range *range)
{
	return core_init(range, 0);
}

/* Static: the harness's memcgs must outlive the process. */
static struct obj_cgroup strat_td_cg[BENCH_MAX_MEMCGS];

void strat_enter_td(unsigned int td)
{
	pamt_sim_objcg = &strat_td_cg[td % BENCH_MAX_MEMCGS];
}

static int core_topup(struct tdx_pamt_cache *res)
{
	return __tdx_topup_pamt_cache(res, BENCH_TOPUP, GFP_KERNEL_ACCOUNT);
}

static struct page *core_ctl_alloc(void)
{
	return __tdx_alloc_control_page(GFP_KERNEL_ACCOUNT);
}

static unsigned long core_refs(unsigned long pfn)
{
	atomic_t *slot = pamt_slot_lookup(pfn);

	if (!slot)
		return 0;
	return pamt_slot_refs(atomic_read(slot));
}

static void core_ctrs(struct strat_ctrs *c)
{
	u64 v[TDX_PAMT_STAT_NR];

	tdx_pamt_read_stats(v);
	c->lock = v[TDX_PAMT_STAT_GLOBAL_LOCK];
	c->add = atomic64_read(&pamt_fake.calls[PAMT_FAKE_ADD]);
	c->remove = atomic64_read(&pamt_fake.calls[PAMT_FAKE_REMOVE]);
	c->busy = atomic64_read(&pamt_fake.busy[PAMT_FAKE_ADD]) +
		  atomic64_read(&pamt_fake.busy[PAMT_FAKE_REMOVE]);
	c->palloc = v[TDX_PAMT_STAT_PAGE_ALLOC];
	c->pfree = v[TDX_PAMT_STAT_PAGE_FREE];
	c->pamt_pages = c->palloc - c->pfree;
	c->idle_pairs = v[TDX_PAMT_STAT_IDLE_SLOTS] +
			v[TDX_PAMT_STAT_CACHED_PAIRS];
}

const struct strat_ops strat_ops[S_NR] = {
	[S_LOCK] = {
		.name = "lock", .init = ref_init, .exit = ref_exit,
		.topup = ref_topup, .get = lock_get, .put = lock_put,
		.drain = ref_drain, .ctl_alloc = lock_ctl_alloc,
		.ctl_free = lock_ctl_free, .refs = ref_refs, .ctrs = ref_ctrs,
	},
	[S_ATOMIC] = {
		.name = "atomic", .init = ref_init, .exit = ref_exit,
		.topup = ref_topup, .get = atomic_get, .put = atomic_put,
		.drain = ref_drain, .ctl_alloc = atomic_ctl_alloc,
		.ctl_free = atomic_ctl_free, .refs = ref_refs, .ctrs = ref_ctrs,
	},
	[S_LEAN] = {
		.name = "lean", .init = lean_init, .exit = tdx_pamt_exit,
		.topup = core_topup, .get = tdx_pamt_get, .put = tdx_pamt_put,
		.drain = tdx_free_pamt_cache, .ctl_alloc = core_ctl_alloc,
		.ctl_free = tdx_free_control_page, .refs = core_refs,
		.ctrs = core_ctrs, .has_shrinker = true,
	},
	[S_MAG] = {
		.name = "magazine", .init = mag_init, .exit = tdx_pamt_exit,
		.topup = core_topup, .get = tdx_pamt_get, .put = tdx_pamt_put,
		.drain = tdx_free_pamt_cache, .ctl_alloc = core_ctl_alloc,
		.ctl_free = tdx_free_control_page, .refs = core_refs,
		.ctrs = core_ctrs, .has_shrinker = true,
	},
};
