// SPDX-License-Identifier: GPL-2.0
/*
 * The harness's own checkers must fire: each case runs a deliberate bug in
 * a child process and expects it to abort.
 */
#include <signal.h>
#include "../harness.h"

static void sleep_in_atomic(void)
{
	struct tdx_pamt_cache res = { 0 };

	pamt_env_up_default();
	pamt_sim_enter_atomic();
	/* GFP_KERNEL may sleep: forbidden under a spinlock. */
	__tdx_topup_pamt_cache(&res, 1, GFP_KERNEL);
}

PAMT_TEST(checker_sleep_in_atomic_aborts)
{
	EXPECT_EQ(run_in_child(sleep_in_atomic), SIGABRT);
}

/* A spinlock_t as the cache's own are: list_lru's. */
static spinlock_t test_lock;

/* The magazines' locks and list_lru's are leaves: none nests in another. */
static void inverted_lock_order(void)
{
	struct tdx_pamt_pair pair;
	unsigned long flags;

	pamt_env_up_default();
	spin_lock_init(&test_lock);
	spin_lock_irqsave(&test_lock, flags);
	pamt_mag_pop(&pair);	/* takes this CPU's magazine lock */
	spin_unlock_irqrestore(&test_lock, flags);
}

PAMT_TEST(checker_lock_order_inversion_aborts)
{
	EXPECT_EQ(run_in_child(inverted_lock_order), SIGABRT);
}

/* A caller's lock (mmu_lock), then the cache's. */
static void right_lock_order(void)
{
	struct pamt_sim_lock outer;
	struct tdx_pamt_pair pair;

	pamt_env_up_default();
	pamt_sim_lock_init(&outer, PAMT_SIM_RANK_OUTER, "mmu_lock");
	pamt_sim_lock_acquire(&outer, __FILE__, __LINE__);
	pamt_sim_enter_atomic();
	pamt_mag_pop(&pair);
	pamt_sim_exit_atomic();
	pamt_sim_lock_release(&outer, __FILE__, __LINE__);
}

PAMT_TEST(checker_documented_lock_order_passes)
{
	EXPECT_EQ(run_in_child(right_lock_order), 0);
}

static void assert_held_unlocked(void)
{
	pamt_env_up_default();
	spin_lock_init(&test_lock);
	lockdep_assert_held(&test_lock);
}

PAMT_TEST(checker_assert_held_aborts)
{
	EXPECT_EQ(run_in_child(assert_held_unlocked), SIGABRT);
}

static void double_free_page(void)
{
	struct page *p;

	pamt_env_up_default();
	p = alloc_page(GFP_KERNEL);
	__free_page(p);
	__free_page(p);
}

PAMT_TEST(checker_double_free_aborts)
{
	EXPECT_EQ(run_in_child(double_free_page), SIGABRT);
}

/*
 * PREEMPT_RT: spinlock_t and the allocators sleep there, so
 * none may be used with preemption or IRQs off or under a raw spinlock.
 * The shim enforces it in every test; these show that it fires.
 */
static void rt_spinlock_preempt_off(void)
{
	unsigned long flags;

	pamt_env_up_default();
	spin_lock_init(&test_lock);
	preempt_disable();
	spin_lock_irqsave(&test_lock, flags);
	spin_unlock_irqrestore(&test_lock, flags);
	preempt_enable();
}

PAMT_TEST(checker_rt_spinlock_preempt_off_aborts)
{
	EXPECT_EQ(run_in_child(rt_spinlock_preempt_off), SIGABRT);
}

static void rt_mag_lock_irqs_off(void)
{
	unsigned long flags;
	struct tdx_pamt_pair pair;

	pamt_env_up_default();
	local_irq_save(flags);
	pamt_mag_pop(&pair);	/* takes the magazine's spinlock_t */
	local_irq_restore(flags);
}

PAMT_TEST(checker_rt_mag_lock_irqs_off_aborts)
{
	EXPECT_EQ(run_in_child(rt_mag_lock_irqs_off), SIGABRT);
}

static void rt_alloc_under_raw_lock(void)
{
	struct tdx_pamt_pair pair;
	unsigned long flags;

	pamt_env_up_default();
	raw_spin_lock_irqsave(&pamt.seamcall_lock, flags);
	pamt_pair_alloc(&pair, GFP_NOWAIT);
	raw_spin_unlock_irqrestore(&pamt.seamcall_lock, flags);
}

PAMT_TEST(checker_rt_alloc_under_raw_lock_aborts)
{
	EXPECT_EQ(run_in_child(rt_alloc_under_raw_lock), SIGABRT);
}

static void rt_free_preempt_off(void)
{
	struct tdx_pamt_pair pair;

	pamt_env_up_default();
	if (pamt_pair_alloc(&pair, GFP_KERNEL))
		return;
	preempt_disable();
	pamt_pair_free(&pair, 1);
	preempt_enable();
}

PAMT_TEST(checker_rt_page_free_preempt_off_aborts)
{
	EXPECT_EQ(run_in_child(rt_free_preempt_off), SIGABRT);
}

static void rt_spinlock_outside_raw(void)
{
	struct tdx_pamt_pair pair;
	unsigned long flags;

	pamt_env_up_default();
	/* Under a spinlock_t (mmu_lock): allowed on RT, where it sleeps. */
	spin_lock_init(&test_lock);
	spin_lock_irqsave(&test_lock, flags);
	spin_unlock_irqrestore(&test_lock, flags);
	if (!pamt_pair_alloc(&pair, GFP_NOWAIT))
		pamt_mag_push(&pair);
}

PAMT_TEST(checker_rt_sleeping_locks_outside_raw_pass)
{
	EXPECT_EQ(run_in_child(rt_spinlock_outside_raw), 0);
}

/*
 * IRQs are off around each PAMT SEAMCALL and never across two; nothing
 * delays or spins with them off.
 */
static void two_seamcalls_irqs_off(void)
{
	struct tdx_pamt_pair pair = { };
	unsigned long flags;

	pamt_env_up_default();
	local_irq_save(flags);
	pamt.ops->remove(slot_pfn(3, 0), &pair);
	pamt.ops->remove(slot_pfn(4, 0), &pair);
	local_irq_restore(flags);
}

PAMT_TEST(checker_two_seamcalls_irqs_off_aborts)
{
	EXPECT_EQ(run_in_child(two_seamcalls_irqs_off), SIGABRT);
}

static void one_seamcall_irqs_off(void)
{
	struct tdx_pamt_pair pair = { };
	unsigned long flags;
	int i;

	pamt_env_up_default();
	for (i = 0; i < 2; i++) {
		local_irq_save(flags);
		pamt.ops->remove(slot_pfn(3 + i, 0), &pair);
		local_irq_restore(flags);
	}
}

PAMT_TEST(checker_one_seamcall_per_irqs_off_passes)
{
	EXPECT_EQ(run_in_child(one_seamcall_irqs_off), 0);
}

static void seamcall_irqs_on(void)
{
	struct tdx_pamt_pair pair = { };

	pamt_env_up_default();
	pamt.ops->remove(slot_pfn(3, 0), &pair);
}

PAMT_TEST(checker_seamcall_irqs_on_aborts)
{
	EXPECT_EQ(run_in_child(seamcall_irqs_on), SIGABRT);
}

static void delay_irqs_off(void)
{
	unsigned long flags;

	pamt_env_up_default();
	raw_spin_lock_irqsave(&pamt.seamcall_lock, flags);
	ndelay(256);		/* a backoff inside the fallback lock */
	raw_spin_unlock_irqrestore(&pamt.seamcall_lock, flags);
}

PAMT_TEST(checker_delay_irqs_off_aborts)
{
	EXPECT_EQ(run_in_child(delay_irqs_off), SIGABRT);
}

static void spin_irqs_off(void)
{
	unsigned long flags;

	pamt_env_up_default();
	local_irq_save(flags);
	cpu_relax();		/* a waiter spinning with IRQs off */
	local_irq_restore(flags);
}

PAMT_TEST(checker_spin_irqs_off_aborts)
{
	EXPECT_EQ(run_in_child(spin_irqs_off), SIGABRT);
}
