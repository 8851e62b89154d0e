// SPDX-License-Identifier: GPL-2.0
/* TDX Dynamic PAMT cache, kernel only: deferred work, shrinker registration. */
#include <linux/errno.h>
#include <linux/shrinker.h>
#include <linux/workqueue.h>
#include "pamt_internal.h"

static void pamt_glue_defer_fn(struct work_struct *work)
{
	pamt_shrink_deferred();
}

static DECLARE_WORK(pamt_glue_defer_work, pamt_glue_defer_fn);

/* No rescuer: under memory pressure the shrinker, not this, gives back. */
void pamt_platform_defer(void)
{
	queue_work(system_dfl_wq, &pamt_glue_defer_work);
}

void pamt_platform_defer_sync(void)
{
	cancel_work_sync(&pamt_glue_defer_work);
}

/* For the tests: the shrinker, once registered. */
struct shrinker *pamt_glue_shrinker(void)
{
	if (!pamt.shrinker || !(pamt.shrinker->flags & SHRINKER_REGISTERED))
		return NULL;
	return pamt.shrinker;
}

/* Once per cache: tdx_pamt_exit() frees the shrinker, which unregisters it. */
int pamt_glue_register(void)
{
	if (!pamt.enabled)
		return -ENODEV;
	if (pamt_glue_shrinker())
		return -EBUSY;
	shrinker_register(pamt.shrinker);
	return 0;
}
