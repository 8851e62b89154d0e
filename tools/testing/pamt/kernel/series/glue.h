/*
 * pamt_glue.c stand-in: a drain runs a work item on every online CPU; the
 * work put and the shrink layer defer waits for the glue's worker.
 */
#include <linux/workqueue.h>

static atomic_long_t pamt_platform_drain_budget;

static inline void pamt_platform_drain_fn(struct work_struct *work)
{
	pamt_mag_drain_local(&pamt_platform_drain_budget);
}

static inline unsigned long pamt_platform_drain_cpus(unsigned long nr)
{
	long want = min_t(unsigned long, nr, LONG_MAX);

	atomic_long_set(&pamt_platform_drain_budget, want);
	schedule_on_each_cpu(pamt_platform_drain_fn);
	return want - atomic_long_read(&pamt_platform_drain_budget);
}

static inline void pamt_platform_defer(void) { }
static inline void pamt_platform_defer_sync(void) { }
