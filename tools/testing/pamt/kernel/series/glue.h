/*
 * pamt_glue.c stand-in: no worker; what a put over the idle cap defers
 * waits for the glue's.
 */
static inline void pamt_platform_defer(void) { }
static inline void pamt_platform_defer_sync(void) { }
