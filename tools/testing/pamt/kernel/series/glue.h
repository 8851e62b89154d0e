/*
 * pamt_glue.c stand-in: no worker, so what a put over the idle cap defers
 * waits for the glue's; no shrinker can be registered.
 */
static inline void pamt_platform_defer(void) { }
static inline void pamt_platform_defer_sync(void) { }
static inline int pamt_glue_register(void) { return -EOPNOTSUPP; }
static inline struct shrinker *pamt_glue_shrinker(void) { return NULL; }
