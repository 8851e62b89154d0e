// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: the in-kernel glue.
 *
 * The core (pamt_slot.c, pamt_mag.c, pamt_shrink.c, pamt_core.c) is built
 * unchanged by the userspace harness; what only a kernel has lives here:
 * running a drain on every CPU, the deferred work of put and the shrinker,
 * the shrinker and the CPU hotplug hook.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/shrinker.h>
#include <linux/workqueue.h>
#include "pamt_internal.h"
#include "pamt_glue.h"

static void pamt_glue_drain_fn(struct work_struct *work)
{
	pamt_mag_drain_local();
}

/**
 * pamt_platform_drain_cpus() - drain the magazines of every online CPU
 *
 * Runs pamt_mag_drain_local() in process context on each online CPU and
 * waits for all of them.  The magazines of offline CPUs were drained by
 * the CPU hotplug callback when they went down, or, for a CPU that went
 * down before the callback was registered, by pamt_glue_register().
 *
 * Context: process context; sleeps.
 */
void pamt_platform_drain_cpus(void)
{
	schedule_on_each_cpu(pamt_glue_drain_fn);
}

static void pamt_glue_defer_fn(struct work_struct *work)
{
	pamt_shrink_deferred();
}

static DECLARE_WORK(pamt_glue_defer_work, pamt_glue_defer_fn);

/**
 * pamt_platform_defer() - run pamt_shrink_deferred() soon, from a worker
 *
 * What a put or the shrinker may not do itself: more than one REMOVE
 * sequence, or draining other CPUs' magazines.
 *
 * Context: any but hardirq; never sleeps.
 */
void pamt_platform_defer(void)
{
	schedule_work(&pamt_glue_defer_work);
}

/**
 * pamt_platform_defer_sync() - wait for the deferred work, cancel the rest
 *
 * Context: process context; sleeps.
 */
void pamt_platform_defer_sync(void)
{
	cancel_work_sync(&pamt_glue_defer_work);
}

/* Runs on a control CPU once @cpu is dead: nothing can touch its state. */
static int pamt_glue_cpu_dead(unsigned int cpu)
{
	tdx_pamt_drain_cpu(cpu);
	return 0;
}

static struct shrinker *pamt_shrinker;
static int pamt_cpuhp_state = -1;

/**
 * pamt_glue_shrinker() - the registered shrinker, for tests
 *
 * Return: the shrinker, or NULL while none is registered.
 */
struct shrinker *pamt_glue_shrinker(void)
{
	return pamt_shrinker;
}

/**
 * pamt_glue_drain_offline() - free the pairs of every CPU not in @online
 * @online: the CPUs to leave alone; cpu_online_mask but for tests
 *
 * Context: process context, with the CPU hotplug lock held, so that no CPU
 * comes or goes meanwhile.
 */
void pamt_glue_drain_offline(const struct cpumask *online)
{
	unsigned int cpu;

	lockdep_assert_cpus_held();
	for_each_possible_cpu(cpu) {
		if (!cpumask_test_cpu(cpu, online))
			tdx_pamt_drain_cpu(cpu);
	}
}

/**
 * pamt_glue_register() - register the shrinker and the CPU-dead hook
 *
 * Both are harmless while the cache is off: they find nothing to do.
 * The cache is usable from tdx_pamt_init() on, before this runs: a CPU
 * that went offline in between filled magazines that no callback drained.
 * The hook is installed and those CPUs drained under one hold of the CPU
 * hotplug lock, so that every CPU that ever dies is drained once.
 *
 * Context: process context, without the CPU hotplug lock; sleeps.
 *
 * Return: 0 or a negative errno, with nothing registered.
 */
int pamt_glue_register(void)
{
	int ret;

	if (pamt_shrinker)
		return -EBUSY;
	pamt_shrinker = shrinker_alloc(0, "tdx-pamt");
	if (!pamt_shrinker)
		return -ENOMEM;
	/* In the core, so that the harness drives them as reclaim does. */
	pamt_shrinker->count_objects = pamt_shrink_count_objects;
	pamt_shrinker->scan_objects = pamt_shrink_scan_objects;

	cpus_read_lock();
	ret = cpuhp_setup_state_nocalls_cpuslocked(CPUHP_BP_PREPARE_DYN,
						   "x86/tdx/pamt:dead", NULL,
						   pamt_glue_cpu_dead);
	if (ret >= 0)
		pamt_glue_drain_offline(cpu_online_mask);
	cpus_read_unlock();
	if (ret < 0) {
		shrinker_free(pamt_shrinker);
		pamt_shrinker = NULL;
		return ret;
	}
	pamt_cpuhp_state = ret;
	shrinker_register(pamt_shrinker);
	return 0;
}

/**
 * pamt_glue_unregister() - undo pamt_glue_register()
 *
 * Context: process context; sleeps.  Waits for running callbacks.
 */
void pamt_glue_unregister(void)
{
	if (!pamt_shrinker)
		return;
	shrinker_free(pamt_shrinker);
	pamt_shrinker = NULL;
	cpuhp_remove_state_nocalls(pamt_cpuhp_state);
	pamt_cpuhp_state = -1;
}
