// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: what only a kernel has (the userspace harness
 * builds the rest): per-CPU drains, deferred work, shrinker, CPU hotplug.
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
 * Reclaim waits on both, so both have a rescuer (mm_percpu_wq is private
 * to mm/).  Two, as the deferred work flushes drains and must not wait on
 * its own queue's rescuer.
 */
static struct workqueue_struct *pamt_drain_wq;	/* per CPU */
static struct workqueue_struct *pamt_defer_wq;

static DEFINE_MUTEX(pamt_drain_mutex);
static DEFINE_PER_CPU(struct work_struct, pamt_drain_work);
static struct cpumask pamt_drain_queued;
static atomic_long_t pamt_drain_budget;

static void pamt_glue_drain_fn(struct work_struct *work)
{
	pamt_mag_drain_local(&pamt_drain_budget);
}

/*
 * No CPU hotplug lock, so that a caller may hold get_online_mems(): a CPU
 * that comes online meanwhile has empty magazines; one that goes down is
 * drained by the CPU-dead callback.
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

void pamt_platform_defer(void)
{
	queue_work(pamt_defer_wq, &pamt_glue_defer_work);
}

void pamt_platform_defer_sync(void)
{
	cancel_work_sync(&pamt_glue_defer_work);
}

/* Without the workqueues the cache must stay off: nothing could drain. */
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
	if (!pamt_drain_wq)
		return -ENOMEM;
	pamt_defer_wq = alloc_workqueue("tdx_pamt", WQ_MEM_RECLAIM | WQ_UNBOUND, 1);
	if (!pamt_defer_wq) {
		destroy_workqueue(pamt_drain_wq);
		pamt_drain_wq = NULL;
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

static bool pamt_shrinker_registered;
static int pamt_cpuhp_state = -1;

/* For the tests: the shrinker, once registered. */
struct shrinker *pamt_glue_shrinker(void)
{
	return pamt_shrinker_registered ? pamt.shrinker : NULL;
}

/*
 * The cache is in use from tdx_pamt_init() on: CPUs that went offline since
 * are drained under the same CPU hotplug lock hold that installs the hook,
 * so that every CPU that dies is drained once.
 */
int pamt_glue_register(void)
{
	unsigned int cpu;
	int ret;

	if (pamt_shrinker_registered)
		return -EBUSY;
	if (!pamt.enabled)
		return -ENODEV;

	cpus_read_lock();
	ret = cpuhp_setup_state_nocalls_cpuslocked(CPUHP_BP_PREPARE_DYN,
						   "x86/tdx/pamt:dead", NULL,
						   pamt_glue_cpu_dead);
	if (ret >= 0) {
		for_each_cpu_andnot(cpu, cpu_possible_mask, cpu_online_mask)
			tdx_pamt_drain_cpu(cpu);
	}
	cpus_read_unlock();
	if (ret < 0)
		return ret;
	pamt_cpuhp_state = ret;
	/* Once: tdx_pamt_exit() frees it, which unregisters it. */
	if (!(pamt.shrinker->flags & SHRINKER_REGISTERED))
		shrinker_register(pamt.shrinker);
	pamt_shrinker_registered = true;
	return 0;
}

void pamt_glue_unregister(void)
{
	if (!pamt_shrinker_registered)
		return;
	pamt_shrinker_registered = false;
	cpuhp_remove_state_nocalls(pamt_cpuhp_state);
	pamt_cpuhp_state = -1;
}
