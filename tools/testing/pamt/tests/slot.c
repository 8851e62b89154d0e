// SPDX-License-Identifier: GPL-2.0
/* Slot layer: every transition of the state machine. */
#include <pthread.h>
#include "../harness.h"

PAMT_TEST(slot_state_decode)
{
	EXPECT_EQ(pamt_slot_state(0), PAMT_SLOT_EMPTY);
	EXPECT_EQ(pamt_slot_state(PAMT_SLOT_TRANSIT), PAMT_SLOT_ADDING);
	EXPECT_EQ(pamt_slot_state(PAMT_SLOT_INSTALLED | 3), PAMT_SLOT_ACTIVE);
	EXPECT_EQ(pamt_slot_state(PAMT_SLOT_INSTALLED), PAMT_SLOT_IDLE);
	EXPECT_EQ(pamt_slot_state(PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT),
		  PAMT_SLOT_REMOVING);
	EXPECT_EQ(pamt_slot_state(PAMT_SLOT_HOLE), PAMT_SLOT_NOT_COVERED);
	EXPECT_EQ(pamt_slot_refs(PAMT_SLOT_INSTALLED | 7), 7);
}

PAMT_TEST(slot_get_empty_adds_once)
{
	pamt_env_up_default();
	EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 10), NULL), 0);
	EXPECT_EQ(slot_word(3), PAMT_SLOT_INSTALLED | 1);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 1);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(3, 0)));
	EXPECT_EQ(stat(TDX_PAMT_STAT_GET_SLOW), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_INSTALLED), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PAGE_ALLOC), 2);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 10)), 0);
}

PAMT_TEST(slot_get_installed_is_fast)
{
	pamt_env_up_default();
	EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 0), NULL), 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 511), NULL), 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(3, 1), NULL), 0);
	EXPECT_EQ(slot_word(3), PAMT_SLOT_INSTALLED | 3);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GET_FAST), 2);
	EXPECT_EQ(stat(TDX_PAMT_STAT_GLOBAL_LOCK), 1);	/* the root's list */
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 1)), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_PUT_FAST), 2);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(3, 511)), 0);
}

PAMT_TEST(slot_last_put_goes_idle_in_magazine_mode)
{
	pamt_env_up_default();
	EXPECT_EQ(tdx_pamt_get(slot_pfn(5, 0), NULL), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 0)), 0);
	EXPECT_EQ(pamt_slot_state(slot_word(5)), PAMT_SLOT_IDLE);
	EXPECT(pamt_fake_range_has_pair(slot_pfn(5, 0)));
	EXPECT_EQ(fake_calls(PAMT_FAKE_REMOVE), 0);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
}

/*
 * A slot revived and released again while its index entry is queued is
 * not queued twice: reclaim looks at one entry and removes it.
 */
PAMT_TEST(slot_idle_again_while_queued_has_one_entry)
{
	unsigned long before;
	int i;

	pamt_env_up_default();
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(tdx_pamt_get(slot_pfn(5, 0), NULL), 0);
		EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 0)), 0);
		EXPECT_EQ(slot_word(5), PAMT_SLOT_INSTALLED);
	}
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 1);
	before = reclaim_work();
	EXPECT_EQ(pamt_fake_shrink_scan(8, NULL), 1);
	EXPECT_EQ(reclaim_work() - before, 1);
	EXPECT_EQ(slot_word(5), 0);
}

PAMT_TEST(slot_revive_idle_without_seamcall)
{
	pamt_env_up_default();
	EXPECT_EQ(tdx_pamt_get(slot_pfn(5, 0), NULL), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 0)), 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(5, 9), NULL), 0);
	EXPECT_EQ(slot_word(5), PAMT_SLOT_INSTALLED | 1);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_REVIVE), 1);
	EXPECT_EQ(stat(TDX_PAMT_STAT_IDLE_SLOTS), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(5, 9)), 0);
}

PAMT_TEST(slot_ranges_are_independent)
{
	unsigned long s;

	pamt_env_up_default();
	for (s = 0; s < 8; s++)
		EXPECT_EQ(tdx_pamt_get(slot_pfn(s, s), NULL), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 8);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(2, 2)), 0);
	EXPECT_EQ(pamt_slot_state(slot_word(2)), PAMT_SLOT_IDLE);
	EXPECT_EQ(pamt_slot_state(slot_word(3)), PAMT_SLOT_ACTIVE);
	for (s = 0; s < 8; s++)
		if (s != 2)
			EXPECT_EQ(tdx_pamt_put(slot_pfn(s, s)), 0);
}

PAMT_TEST(slot_off_is_a_noop)
{
	/* No tdx_pamt_init(): a host without Dynamic PAMT. */
	EXPECT(!tdx_pamt_enabled());
	EXPECT_EQ(tdx_pamt_get(0x1234, NULL), 0);
	EXPECT_EQ(tdx_pamt_put(0x1234), 0);
	EXPECT_EQ(pamt_fake_evict(0x1234), 0);
	EXPECT_EQ(pamt_fake_idle_pairs(), 0);
	{
		struct tdx_pamt_cache res = { 0 };

		EXPECT_EQ(__tdx_topup_pamt_cache(&res, 2, GFP_KERNEL), 0);
		EXPECT_EQ(res.nr, 0);
		tdx_free_pamt_cache(&res);
		EXPECT_EQ(tdx_pamt_drain(), 0);
	}
}

PAMT_TEST(slot_hole_is_not_covered)
{
	struct pamt_env_opts o = { .hole = true, .nr_slots = 16 };

	ASSERT(!pamt_env_up(&o));
	EXPECT_EQ(tdx_pamt_get(slot_pfn(7, 0), NULL), -EINVAL);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(8, 3), NULL), -EINVAL);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(7, 0)), -EINVAL);
	EXPECT_EQ(pamt_fake_evict(slot_pfn(8, 0)), -EINVAL);
	EXPECT_EQ(slot_word(7), PAMT_SLOT_HOLE);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(6, 0), NULL), 0);
	EXPECT_EQ(tdx_pamt_get(slot_pfn(9, 0), NULL), 0);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 2);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(6, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(9, 0)), 0);
}

PAMT_TEST(slot_init_rejects_bad_config)
{
	struct tdx_pamt_range r = { 0x200, 0x400 }, bad = { 0x201, 0x400 };
	struct tdx_pamt_range two[2] = { { 0x200, 0x600 }, { 0x400, 0x800 } };
	struct tdx_pamt_config cfg = { .ops = &pamt_fake_ops };
	struct tdx_pamt_ops no_reset = { pamt_fake_ops.add, pamt_fake_ops.remove, NULL };

	EXPECT_EQ(tdx_pamt_init(&bad, 1, &cfg), -EINVAL);
	EXPECT_EQ(tdx_pamt_init(two, 2, &cfg), -EINVAL);
	EXPECT_EQ(tdx_pamt_init(&r, 0, &cfg), -EINVAL);
	cfg.ops = &no_reset;
	EXPECT_EQ(tdx_pamt_init(&r, 1, &cfg), -EINVAL);
	cfg.ops = &pamt_fake_ops;
	cfg.mag_size = PAMT_MAG_SIZE_MAX + 1;
	EXPECT_EQ(tdx_pamt_init(&r, 1, &cfg), -EINVAL);
	EXPECT(!tdx_pamt_enabled());

	pamt_env_up_default();
	cfg.mag_size = 0;
	EXPECT_EQ(tdx_pamt_init(&r, 1, &cfg), -EBUSY);
}

struct waiter {
	unsigned long pfn;
	int ret;
	unsigned int cpu;
};

static void *getter(void *arg)
{
	struct waiter *w = arg;

	pamt_sim_set_cpu(w->cpu);
	w->ret = tdx_pamt_get(w->pfn, NULL);
	return NULL;
}

/* A getter that finds a transition waits for it and never adds itself. */
PAMT_TEST(slot_waiter_takes_published_result)
{
	struct waiter w = { .cpu = 1 };
	pthread_t t;
	u64 t0;

	pamt_env_up_default();
	/* After set-up: slot_pfn() needs the environment's base. */
	w.pfn = slot_pfn(4, 2);
	/* Play the owner of an ADD: install the pair in the module by hand. */
	ASSERT(!tdx_pamt_get(slot_pfn(4, 0), NULL));
	slot_set_word(4, PAMT_SLOT_TRANSIT);
	pthread_create(&t, NULL, getter, &w);
	/* Publish once the getter waits, however loaded the machine. */
	t0 = ktime_get_ns();
	while (!stat(TDX_PAMT_STAT_GET_WAIT) &&
	       ktime_get_ns() - t0 < 10 * NSEC_PER_SEC)
		sched_yield();
	EXPECT(stat(TDX_PAMT_STAT_GET_WAIT) >= 1);
	/* The waiter's count is in the word; the owner publishes by adding. */
	EXPECT_EQ(slot_word(4), PAMT_SLOT_TRANSIT | 1);
	atomic_add_return_release((int)PAMT_SLOT_INSTALLED + 1 -
				  (int)PAMT_SLOT_TRANSIT,
				  &pamt.slots[4].word);
	pthread_join(t, NULL);
	EXPECT_EQ(w.ret, 0);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_INSTALLED | 2);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 1);
	EXPECT(stat(TDX_PAMT_STAT_GET_WAIT) >= 1);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 0)), 0);
	EXPECT_EQ(tdx_pamt_put(slot_pfn(4, 2)), 0);
}

/*
 * A transition that never ends: the get gives up after PAMT_WAIT_NS.  By
 * default that is a few SEAMCALLs (18 us at most, modelled), since an
 * owner holds the slot for one at a time, not the 100 ms a get once spun
 * under the caller's mmu_lock.  Timed with 10 ms, so that a loaded host
 * does not stretch the spin past the upper bound.
 */
PAMT_TEST(slot_wait_is_bounded)
{
	u64 t0, dt;

	EXPECT(PAMT_WAIT_NS_DEFAULT <= 6 * 18 * NSEC_PER_USEC);
	pamt_env_up_default();
	pamt.wait_ns = 10 * NSEC_PER_MSEC;
	slot_set_word(4, PAMT_SLOT_TRANSIT);
	t0 = ktime_get_ns();
	EXPECT_EQ(tdx_pamt_get(slot_pfn(4, 0), NULL), -EBUSY);
	dt = ktime_get_ns() - t0;
	EXPECT(dt >= PAMT_WAIT_NS && dt < 100 * PAMT_WAIT_NS);
	EXPECT_EQ(slot_word(4), PAMT_SLOT_TRANSIT);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 0);
	slot_set_word(4, 0);
}

/*
 * Many CPUs reach the 0->1 step of one cold slot while its ADD is in
 * flight: one ADD, N references.  The latecomers start only once the
 * first CPU owns the transition, so this holds on any number of cores.
 */
PAMT_TEST(slot_concurrent_first_gets_add_once)
{
	struct waiter w[4];
	pthread_t t[4];
	int i;

	pamt_env_up_default();
	pamt_fake_set_latency(PAMT_FAKE_ADD, 20 * NSEC_PER_MSEC,
			      20 * NSEC_PER_MSEC, 20 * NSEC_PER_MSEC);
	for (i = 0; i < 4; i++) {
		w[i].pfn = slot_pfn(9, i);
		w[i].cpu = i;
	}
	pthread_create(&t[0], NULL, getter, &w[0]);
	while (!(slot_word(9) & PAMT_SLOT_TRANSIT))
		cpu_relax();
	for (i = 1; i < 4; i++)
		pthread_create(&t[i], NULL, getter, &w[i]);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(w[i].ret, 0);
	}
	EXPECT_EQ(slot_word(9), PAMT_SLOT_INSTALLED | 4);
	EXPECT_EQ(fake_calls(PAMT_FAKE_ADD), 1);
	EXPECT(stat(TDX_PAMT_STAT_GET_WAIT) >= 1);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(9, i)), 0);
}

struct hog {
	unsigned long slot;
	bool stop;
};

/*
 * A shrinker whose REMOVE always ends BUSY: it keeps the slot in REMOVING,
 * and counts idle memory as pamt_slot_remove() does, so that a get that
 * came in meanwhile leaves the slot revived, not IDLE.
 */
static void *busy_shrinker(void *arg)
{
	struct hog *h = arg;
	int idle = PAMT_SLOT_INSTALLED, old;

	pamt_sim_set_cpu(2);
	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		old = idle;
		if (!atomic_try_cmpxchg_acquire(&pamt.slots[h->slot].word, &old,
						PAMT_SLOT_INSTALLED |
						PAMT_SLOT_TRANSIT))
			continue;
		pamt_idle_count(h->slot, -1);
		ndelay(NSEC_PER_MSEC);
		pamt_idle_count(h->slot, 1);
		old = atomic_add_return_release(-(int)PAMT_SLOT_TRANSIT,
						&pamt.slots[h->slot].word);
		if (pamt_slot_refs(old))
			pamt_idle_count(h->slot, -1);
	}
	return NULL;
}

/*
 * A get against a shrinker that keeps failing REMOVE with BUSY gets in
 * when the shrinker's transition ends: its count in the word keeps the
 * shrinker from taking the slot again.  The proof that no schedule
 * starves the get is the model (make model).
 */
PAMT_TEST(slot_get_bounded_under_busy_shrinker)
{
	struct hog h = { .slot = 6 };
	pthread_t t;
	u64 t0, dt;
	int ret;

	pamt_env_up_default();
	/* Long against the hog's 1 ms transitions, as a slow SEAMCALL's. */
	pamt.wait_ns = 100 * NSEC_PER_MSEC;
	ASSERT(!tdx_pamt_get(slot_pfn(6, 0), NULL));
	ASSERT(!tdx_pamt_put(slot_pfn(6, 0)));
	slot_set_word(6, PAMT_SLOT_INSTALLED);
	pthread_create(&t, NULL, busy_shrinker, &h);
	while (!(slot_word(6) & PAMT_SLOT_TRANSIT))
		cpu_relax();
	t0 = ktime_get_ns();
	ret = tdx_pamt_get(slot_pfn(6, 0), NULL);
	dt = ktime_get_ns() - t0;
	/* 5 waits of a full PAMT_WAIT_NS each would be starvation. */
	EXPECT(dt < 5 * PAMT_WAIT_NS);
	EXPECT_EQ(ret, 0);
	ndelay(5 * PAMT_WAIT_NS - dt);
	__atomic_store_n(&h.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	if (!ret)
		EXPECT_EQ(tdx_pamt_put(slot_pfn(6, 0)), 0);
}
