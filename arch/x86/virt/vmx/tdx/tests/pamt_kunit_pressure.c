// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the shrinker under real memory pressure.  With the idle cap
 * full, the test allocates pages until the page allocator reclaims; the
 * kernel's own reclaim (kswapd, direct reclaim, shrink_slab()) must take
 * idle pairs back through the shrinker pamt_glue_register() registered,
 * in proportion to what it asks, and the pages of every pair it REMOVEs
 * must reach the page allocator.
 */
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/swap.h>
#include <linux/tracepoint.h>
#include <trace/events/kmem.h>
#include "pamt_kunit.h"

/* 128 GiB of covered memory far above the guest's RAM, as in issue 16. */
#define PK_PRESS_PFN	BIT(46)
#define PK_PRESS_PFNS	(128UL << (30 - PAGE_SHIFT))
#define PK_PRESS_RECS	64

/**
 * struct pk_press - what the shrinker did while the test allocated
 * @task: the allocating test thread: its calls come from direct reclaim
 * @calls: scans seen
 * @kswapd: scans kswapd made
 * @direct: scans the test thread made, in direct reclaim
 * @outside: scans made outside reclaim (without PF_MEMALLOC)
 * @over: scans that freed more than twice what they were asked
 * @asked: nr_to_scan, summed
 * @freed: pairs freed, summed
 * @direct_freed: pairs freed by the test thread's scans
 * @ask: nr_to_scan of the first PK_PRESS_RECS scans
 * @got: pairs the first PK_PRESS_RECS scans freed
 * @page_freed: bitmap of the pfns below max_pfn the page allocator took
 *	back (the mm_page_free tracepoint)
 * @removed: the pairs successful REMOVEs handed back
 * @max_removed: room in @removed
 * @nr_removed: successful REMOVEs
 */
struct pk_press {
	struct task_struct *task;
	atomic_t calls;
	atomic_t kswapd;
	atomic_t direct;
	atomic_t outside;
	atomic_t over;
	atomic_long_t asked;
	atomic_long_t freed;
	atomic_long_t direct_freed;
	unsigned long ask[PK_PRESS_RECS];
	unsigned long got[PK_PRESS_RECS];
	unsigned long *page_freed;
	struct tdx_pamt_pair *removed;
	unsigned long max_removed;
	atomic_long_t nr_removed;
};

/*
 * The shrinker's scan and the backend's REMOVE are wrapped while the test
 * runs: pk_press_now is the record, pk_press_busy counts the wrappers
 * using it.
 */
static struct pk_press *pk_press_now;
static atomic_t pk_press_busy;
static unsigned long (*pk_press_scan_orig)(struct shrinker *s,
					   struct shrink_control *sc);
static struct tdx_pamt_ops pk_press_ops;

static struct pk_press *pk_press_enter(void)
{
	atomic_inc(&pk_press_busy);
	smp_mb__after_atomic();	/* pairs with pk_press_unprobe() */
	return READ_ONCE(pk_press_now);
}

/* Every scan reclaim makes: record who asked what, and what it freed. */
static unsigned long pk_press_scan(struct shrinker *s,
				   struct shrink_control *sc)
{
	struct pk_press *p = pk_press_enter();
	unsigned long nr_to_scan = sc->nr_to_scan, ret, freed;
	int i;

	ret = pk_press_scan_orig(s, sc);
	if (!p)
		goto out;
	i = atomic_inc_return(&p->calls) - 1;
	freed = ret == SHRINK_STOP ? 0 : ret;
	if (i < PK_PRESS_RECS) {
		p->ask[i] = nr_to_scan;
		p->got[i] = freed;
	}
	if (current_is_kswapd()) {
		atomic_inc(&p->kswapd);
	} else if (current == p->task) {
		atomic_inc(&p->direct);
		atomic_long_add(freed, &p->direct_freed);
	}
	if (!(current->flags & PF_MEMALLOC))
		atomic_inc(&p->outside);
	if (freed > 2 * nr_to_scan)
		atomic_inc(&p->over);
	atomic_long_add(nr_to_scan, &p->asked);
	atomic_long_add(freed, &p->freed);
out:
	atomic_dec(&pk_press_busy);
	return ret;
}

/* Any page freed, in any context: mark it. */
static void pk_press_page_free(void *data, struct page *page,
			       unsigned int order)
{
	struct pk_press *p = data;
	unsigned long pfn = page_to_pfn(page), i;

	for (i = 0; i < BIT(order) && pfn + i < max_pfn; i++)
		set_bit(pfn + i, p->page_freed);
}

/* Inside a transition, preemption off: keep the pair REMOVE handed back. */
static u64 pk_press_remove(unsigned long base_pfn, struct tdx_pamt_pair *pair)
{
	struct pk_press *p = pk_press_enter();
	u64 status = pamt_fake_ops.remove(base_pfn, pair);
	long i;

	if (p && (status & TDX_PAMT_STATUS_MASK) == TDX_PAMT_SUCCESS) {
		i = atomic_long_inc_return(&p->nr_removed) - 1;
		if (i < p->max_removed)
			p->removed[i] = *pair;
	}
	atomic_dec(&pk_press_busy);
	return status;
}

static void pk_press_probe(struct pk_press *p)
{
	pk_press_ops = pamt_fake_ops;
	pk_press_ops.remove = pk_press_remove;
	pk_press_scan_orig = pamt.shrinker->scan_objects;
	WRITE_ONCE(pk_press_now, p);
	WRITE_ONCE(pamt.ops, &pk_press_ops);
	WRITE_ONCE(pamt.shrinker->scan_objects, pk_press_scan);
}

static void pk_press_unprobe(void *data)
{
	WRITE_ONCE(pamt.shrinker->scan_objects, pk_press_scan_orig);
	WRITE_ONCE(pamt.ops, &pamt_fake_ops);
	WRITE_ONCE(pk_press_now, NULL);
	smp_mb();	/* pairs with pk_press_enter() */
	while (atomic_read(&pk_press_busy))
		usleep_range(1000, 2000);
	/*
	 * kswapd may still be reclaiming: a pair REMOVEd just before is
	 * freed right after its transition, which may be preempted on RT.
	 */
	msleep(100);
	unregister_trace_mm_page_free(pk_press_page_free, data);
	tracepoint_synchronize_unregister();
}

/*
 * Every PK_PRESS_HOLD-th slot of the fill stays in use: reclaim must pass
 * over those slots, and leave their pairs installed, to empty the others.
 */
#define PK_PRESS_HOLD	1024

/*
 * Fill the idle cap: @cap slots got, then put but for those held, then
 * trimmed to the cap.  Returns the idle pairs.
 */
static unsigned long pk_press_fill(struct kunit *test, unsigned long cap)
{
	unsigned long i;

	for (i = 0; i < cap; i++) {
		KUNIT_ASSERT_EQ(test, pk_get(PK_PRESS_PFN + i * 512), 0);
		cond_resched();
	}
	for (i = 0; i < cap; i++) {
		if (i % PK_PRESS_HOLD)
			KUNIT_ASSERT_EQ(test, tdx_pamt_put(PK_PRESS_PFN + i * 512), 0);
		cond_resched();
	}
	/* The worker trims too: let it finish, so that this trim is exact. */
	pamt_platform_defer_sync();
	pk_set_idle_cap(cap);
	return pamt_fake_idle_pairs();
}

/*
 * Allocate order-0 pages until idle memory falls to @target.
 * __GFP_RETRY_MAYFAIL retries reclaim while it makes progress and never
 * calls the OOM killer.  (__GFP_NORETRY would fail after a single reclaim
 * attempt that simply did not reach the watermark, whatever the shrinker
 * gave.)  It may still fail while idle pairs go back: should_reclaim_retry()
 * weighs free and LRU pages against the watermark, not what shrinkers
 * hold, and with the guest's memory held here the LRU is small.  So a
 * failure is retried if reclaim gave idle pairs back since the previous
 * one, counted in *@fails; one with no pair given back in between means
 * reclaim stopped reaching the cache, and ends the loop with *@stuck set.
 * Returns the pages held.
 */
static unsigned long pk_press_alloc(struct list_head *pages,
				    unsigned long target, unsigned int *fails,
				    bool *stuck)
{
	unsigned long n = 0, limit = totalram_pages(), now;
	unsigned long last = pamt_fake_idle_pairs();
	struct page *page;

	*fails = 0;
	*stuck = false;
	while ((now = pamt_fake_idle_pairs()) > target && n < limit) {
		page = alloc_page(GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		if (!page) {
			if (now >= last) {
				*stuck = true;
				break;
			}
			last = now;
			(*fails)++;
			continue;
		}
		list_add(&page->lru, pages);
		n++;
		cond_resched();
	}
	return n;
}

/* Direct-reclaim attempts so far, all zones. */
static unsigned long pk_press_stalls(unsigned long *ev)
{
	unsigned long n = 0;
	int z;

	all_vm_events(ev);
	for (z = 0; z < MAX_NR_ZONES; z++)
		n += ev[ALLOCSTALL_NORMAL - ZONE_NORMAL + z];
	return n;
}

static void pk_press_free(struct list_head *pages)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, pages, lru) {
		list_del(&page->lru);
		__free_page(page);
		cond_resched();
	}
}

/*
 * The idle cap full (its default, a quarter of 128 GiB of slots), but
 * for one slot in PK_PRESS_HOLD kept in use, pages allocated until
 * reclaim has taken a quarter of the idle pairs back.
 * Every scan must come from reclaim, the first must free pairs, none may
 * free more than twice what it was asked, no allocation may fail without
 * reclaim having given pairs back since the last failure, and reclaim
 * must stop well short of emptying the cache.  Both pages of every pair
 * a REMOVE hands back must pass the page allocator's free path
 * (mm_page_free) before the test ends, each seen by pfn.
 */
static void pk_pressure_reclaims(struct kunit *test)
{
	const struct tdx_pamt_range r = {
		.start_pfn = PK_PRESS_PFN,
		.end_pfn = PK_PRESS_PFN + PK_PRESS_PFNS,
	};
	unsigned long cap, held, filled, target, nr, idle0, stalls, *ev;
	unsigned long removed, missing = 0, i;
	struct pk_press *p;
	LIST_HEAD(pages);
	unsigned int fails;
	bool stuck;
	int calls, j;

	KUNIT_ASSERT_LT(test, round_up(max_pfn, TDX_PAMT_PAGES_PER_SLOT),
			PK_PRESS_PFN);
	KUNIT_ASSERT_EQ(test, pk_setup_ranges(test, &r, 1, 0, 0), 0);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	cap = READ_ONCE(pamt.idle_cap);
	KUNIT_ASSERT_EQ(test, cap, pamt.nr_slots / 4);
	held = DIV_ROUND_UP(cap, PK_PRESS_HOLD);
	filled = pk_press_fill(test, cap);
	idle0 = pk_stat(TDX_PAMT_STAT_IDLE_SLOTS);
	KUNIT_ASSERT_EQ(test, filled, cap - held);
	KUNIT_ASSERT_EQ(test, pk_stat(TDX_PAMT_STAT_SHRINK), 0ULL);

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->task = current;
	ev = kunit_kcalloc(test, NR_VM_EVENT_ITEMS, sizeof(*ev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ev);
	p->page_freed = kunit_kcalloc(test, BITS_TO_LONGS(max_pfn),
				      sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->page_freed);
	p->max_removed = filled;
	p->removed = kunit_kcalloc(test, filled, sizeof(*p->removed),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->removed);
	KUNIT_ASSERT_EQ_MSG(test, register_trace_mm_page_free(pk_press_page_free, p),
			    0, "no tracepoints (CONFIG_TRACEPOINTS)");
	pk_press_probe(p);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pk_press_unprobe,
							p), 0);

	target = filled - filled / 4;
	stalls = pk_press_stalls(ev);
	nr = pk_press_alloc(&pages, target, &fails, &stuck);
	kunit_release_action(test, pk_press_unprobe, p);
	stalls = pk_press_stalls(ev) - stalls;
	pk_press_free(&pages);
	removed = min_t(unsigned long, atomic_long_read(&p->nr_removed),
			p->max_removed);
	for (i = 0; i < removed; i++)
		for (j = 0; j < 2; j++)
			missing += p->removed[i].pfn[j] >= max_pfn ||
				   !test_bit(p->removed[i].pfn[j], p->page_freed);

	calls = atomic_read(&p->calls);
	kunit_info(test, "idle cap %lu: %lu idle pairs, %lu idle slots, %lu in use; %lu pages allocated, %u failed%s; %lu pairs left\n",
		   cap, filled, idle0, held, nr,
		   fails, stuck ? ", then one with no pair given back" : "",
		   pamt_fake_idle_pairs());
	kunit_info(test, "%d scans (%d kswapd, %d direct): asked %ld, freed %ld; shrink %llu\n",
		   calls, atomic_read(&p->kswapd), atomic_read(&p->direct),
		   atomic_long_read(&p->asked), atomic_long_read(&p->freed),
		   pk_stat(TDX_PAMT_STAT_SHRINK));
	kunit_info(test, "%lu direct-reclaim attempts, their scans freed %ld pairs; %ld REMOVEs, %lu of their pages not freed\n",
		   stalls, atomic_long_read(&p->direct_freed),
		   atomic_long_read(&p->nr_removed), missing);
	for (j = 0; j < min(calls, 8); j++)
		kunit_info(test, "scan %d: nr_to_scan %lu freed %lu\n",
			   j + 1, p->ask[j], p->got[j]);

	KUNIT_EXPECT_FALSE_MSG(test, stuck,
			       "an allocation failed, no pair given back since the last, with %lu of %lu idle pairs still held",
			       pamt_fake_idle_pairs(), filled);
	KUNIT_EXPECT_LE(test, pamt_fake_idle_pairs(), target);
	/*
	 * In proportion: reclaim that counts no progress for what the
	 * shrinker gave runs on to priority 0 and empties the cache.
	 */
	KUNIT_EXPECT_GE_MSG(test, pamt_fake_idle_pairs(), target / 2,
			    "reclaim took %lu of %lu idle pairs to free a quarter",
			    filled - pamt_fake_idle_pairs(), filled);
	KUNIT_ASSERT_GT_MSG(test, calls, 0, "reclaim never called the shrinker");
	KUNIT_EXPECT_GT_MSG(test, p->got[0], 0UL,
			    "the first scan, asked for %lu, freed nothing",
			    p->ask[0]);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->over), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->outside), 0);
	/* Idle slots came back, not only magazine pairs. */
	KUNIT_EXPECT_GT(test, pk_stat(TDX_PAMT_STAT_SHRINK), 0ULL);
	/*
	 * Every REMOVE was reclaim's (kswapd may add more after the probes
	 * went), and its two pages reached the allocator.
	 */
	KUNIT_EXPECT_GT(test, removed, 0UL);
	KUNIT_EXPECT_LE(test, (u64)atomic_long_read(&p->nr_removed),
			pk_stat(TDX_PAMT_STAT_SHRINK));
	KUNIT_EXPECT_EQ_MSG(test, missing, 0UL,
			    "%lu pages of %lu REMOVEd pairs never freed", missing,
			    removed);
	/* The held slots kept their pairs. */
	for (i = 0; i < cap; i += PK_PRESS_HOLD) {
		KUNIT_EXPECT_EQ(test, pk_word(PK_PRESS_PFN + i * 512),
				W_INST | 1);
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(PK_PRESS_PFN + i * 512), 0);
	}
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_pressure_cases[] = {
	KUNIT_CASE_SLOW(pk_pressure_reclaims),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_pressure_suite = {
	.name = "tdx_pamt_pressure",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_pressure_cases,
};

kunit_test_suite(pk_pressure_suite);
