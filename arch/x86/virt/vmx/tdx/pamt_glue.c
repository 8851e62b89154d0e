// SPDX-License-Identifier: GPL-2.0
/*
 * TDX Dynamic PAMT cache: what only a kernel has (the userspace harness
 * builds the rest): the deferred work and the shrinker's registration.
 */
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/shrinker.h>
#include <linux/workqueue.h>
#include "pamt_internal.h"
#include "pamt_glue.h"

/* The idle cap's worker gives memory back: it must run under pressure. */
static struct workqueue_struct *pamt_defer_wq;

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

/* Without the workqueue the cache must stay off: nothing could trim it. */
bool pamt_glue_ready(void)
{
	return pamt_defer_wq;
}

/* Before tdx_enable() (a subsys_initcall) can turn the cache on. */
static int __init pamt_glue_init(void)
{
	pamt_defer_wq = alloc_workqueue("tdx_pamt", WQ_MEM_RECLAIM | WQ_UNBOUND, 1);
	return pamt_defer_wq ? 0 : -ENOMEM;
}
arch_initcall(pamt_glue_init);

static bool pamt_shrinker_registered;

/* For the tests: the shrinker, once registered. */
struct shrinker *pamt_glue_shrinker(void)
{
	return pamt_shrinker_registered ? pamt.shrinker : NULL;
}

int pamt_glue_register(void)
{
	if (pamt_shrinker_registered)
		return -EBUSY;
	if (!pamt.enabled)
		return -ENODEV;
	/* Once: tdx_pamt_exit() frees it, which unregisters it. */
	if (!(pamt.shrinker->flags & SHRINKER_REGISTERED))
		shrinker_register(pamt.shrinker);
	pamt_shrinker_registered = true;
	return 0;
}

void pamt_glue_unregister(void)
{
	pamt_shrinker_registered = false;
}
