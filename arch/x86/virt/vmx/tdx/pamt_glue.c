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
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/shrinker.h>
#include <linux/workqueue.h>
#include "pamt_internal.h"
#include "pamt_glue.h"

/*
 * Reclaim waits for both kinds of work (the shrinker defers to one, the
 * cap and the worker drain with the other), so both queues have a rescuer.
 * mm's own mm_percpu_wq is private to mm/ (mm/internal.h).  Two queues,
 * not one: the deferred work flushes the drains, and flushing work of the
 * queue one runs on would wait on one's own rescuer.
 */
static struct workqueue_struct *pamt_drain_wq;	/* per CPU */
static struct workqueue_struct *pamt_defer_wq;

/* The drains, one work per CPU; pamt_drain_mutex serialises their use. */
static DEFINE_MUTEX(pamt_drain_mutex);
static DEFINE_PER_CPU(struct work_struct, pamt_drain_work);
static struct cpumask pamt_drain_queued;
static atomic_long_t pamt_drain_budget;

static void pamt_glue_drain_fn(struct work_struct *work)
{
	pamt_mag_drain_local(&pamt_drain_budget);
}

/**
 * pamt_platform_drain_cpus() - free pairs from the magazines of every online CPU
 * @nr: most pairs to free
 *
 * Runs pamt_mag_drain_local() in process context on each online CPU and
 * waits for all of them, with work items allocated once, at boot: reclaim
 * runs it.  No CPU hotplug lock, so that a caller may hold
 * get_online_mems(), which nests inside it: a CPU that comes online
 * meanwhile has empty magazines, and one that goes down is drained by the
 * CPU hotplug callback (its work, if queued, runs on another CPU and
 * drains that one).  The magazines of a CPU that went down before the
 * callback was registered were drained by pamt_glue_register().
 *
 * Context: process context; sleeps.
 *
 * Return: pairs freed.
 */
unsigned long pamt_platform_drain_cpus(unsigned long nr)
{
	long want = min_t(unsigned long, nr, LONG_MAX);
	unsigned int cpu;
	long left;

	mutex_lock(&pamt_drain_mutex);
	atomic_long_set(&pamt_drain_budget, want);
	cpumask_clear(&pamt_drain_queued);
	for_each_online_cpu(cpu) {
		queue_work_on(cpu, pamt_drain_wq, per_cpu_ptr(&pamt_drain_work, cpu));
		__cpumask_set_cpu(cpu, &pamt_drain_queued);
	}
	for_each_cpu(cpu, &pamt_drain_queued)
		flush_work(per_cpu_ptr(&pamt_drain_work, cpu));
	left = atomic_long_read(&pamt_drain_budget);
	mutex_unlock(&pamt_drain_mutex);
	return want - left;
}

static void pamt_glue_defer_fn(struct work_struct *work)
{
	pamt_shrink_deferred();
}

static DECLARE_WORK(pamt_glue_defer_work, pamt_glue_defer_fn);

static void pamt_glue_lazy_fn(struct work_struct *work)
{
	queue_work(pamt_defer_wq, &pamt_glue_defer_work);
}

static DECLARE_DELAYED_WORK(pamt_glue_lazy_work, pamt_glue_lazy_fn);

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
	queue_work(pamt_defer_wq, &pamt_glue_defer_work);
}

/**
 * pamt_platform_defer_lazy() - run pamt_shrink_deferred() within a second
 *
 * For work that may wait: a timer armed once, however many ask meanwhile.
 *
 * Context: any but hardirq; never sleeps.
 */
void pamt_platform_defer_lazy(void)
{
	/* A read first: every idle put over the cap may call this. */
	if (!delayed_work_pending(&pamt_glue_lazy_work))
		queue_delayed_work(pamt_defer_wq, &pamt_glue_lazy_work,
				   msecs_to_jiffies(PAMT_DEFER_LAZY_MS));
}

/**
 * pamt_platform_defer_sync() - wait for the deferred work, cancel the rest
 *
 * Context: process context; sleeps.
 */
void pamt_platform_defer_sync(void)
{
	cancel_delayed_work_sync(&pamt_glue_lazy_work);
	cancel_work_sync(&pamt_glue_defer_work);
}

/**
 * pamt_glue_ready() - whether the glue's workqueues exist
 *
 * Return: false if they could not be allocated at boot: the cache must
 * then stay off.
 */
bool pamt_glue_ready(void)
{
	return pamt_drain_wq && pamt_defer_wq;
}

/* Before tdx_enable() (a subsys_initcall) can turn the cache on. */
static int __init pamt_glue_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		INIT_WORK(per_cpu_ptr(&pamt_drain_work, cpu), pamt_glue_drain_fn);
	pamt_drain_wq = alloc_workqueue("tdx_pamt_drain",
					WQ_MEM_RECLAIM | WQ_PERCPU, 0);
	pamt_defer_wq = alloc_workqueue("tdx_pamt", WQ_MEM_RECLAIM | WQ_UNBOUND, 1);
	if (!pamt_glue_ready()) {
		if (pamt_drain_wq)
			destroy_workqueue(pamt_drain_wq);
		if (pamt_defer_wq)
			destroy_workqueue(pamt_defer_wq);
		pamt_drain_wq = NULL;
		pamt_defer_wq = NULL;
		return -ENOMEM;
	}
	return 0;
}
arch_initcall(pamt_glue_init);

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
