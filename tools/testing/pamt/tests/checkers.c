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

static void inverted_lock_order(void)
{
	unsigned long flags, lflags;

	pamt_env_up_default();
	spin_lock_irqsave(&pamt.depot.lock, flags);
	/* The documented order is the per-CPU lock, then the depot lock. */
	local_lock_irqsave(&pamt.pcpu->lock, lflags);
	local_unlock_irqrestore(&pamt.pcpu->lock, lflags);
	spin_unlock_irqrestore(&pamt.depot.lock, flags);
}

PAMT_TEST(checker_lock_order_inversion_aborts)
{
	EXPECT_EQ(run_in_child(inverted_lock_order), SIGABRT);
}

static void right_lock_order(void)
{
	unsigned long flags, lflags;

	pamt_env_up_default();
	local_lock_irqsave(&pamt.pcpu->lock, lflags);
	spin_lock_irqsave(&pamt.depot.lock, flags);
	spin_unlock_irqrestore(&pamt.depot.lock, flags);
	local_unlock_irqrestore(&pamt.pcpu->lock, lflags);
}

PAMT_TEST(checker_documented_lock_order_passes)
{
	EXPECT_EQ(run_in_child(right_lock_order), 0);
}

static void assert_held_unlocked(void)
{
	pamt_env_up_default();
	lockdep_assert_held(&pamt.depot.lock);
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
