/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit suites for the TDX Dynamic PAMT cache: what the suites share.
 */
#ifndef _X86_VIRT_TDX_PAMT_KUNIT_H
#define _X86_VIRT_TDX_PAMT_KUNIT_H

#include <kunit/test.h>
#include "pamt_internal.h"
#include "pamt_fake.h"

/**
 * struct pk_ctx - per-test state, in test->priv
 * @debug_locks: debug_locks when the test started
 * @tainted: TAINT_WARN was set when the test started
 * @expect_warn: the test deliberately triggers a WARN
 * @up: the fake module and the cache are set up
 * @held_pairs: pairs the test holds outside the cache (reserves, taken
 *	pairs); counted by the accounting check
 * @nr_slots: covered slots
 * @end_pfn: one past the last covered pfn
 * @misc_reclaimable: NR_KERNEL_MISC_RECLAIMABLE, in pages, before
 *	tdx_pamt_init(); the teardown expects it back after exit
 */
struct pk_ctx {
	int debug_locks;
	bool tainted;
	bool expect_warn;
	bool up;
	atomic_long_t held_pairs;
	unsigned long nr_slots;
	unsigned long end_pfn;
	long misc_reclaimable;
};

extern bool pk_canary;

long pk_misc_reclaimable(void);

int pk_debugfs_write(struct kunit *test, const char *name, const char *val);
ssize_t pk_debugfs_read(struct kunit *test, const char *name, char *buf,
			size_t len);

int pk_test_init(struct kunit *test);
void pk_test_exit(struct kunit *test);
void pk_suite_leak_check(struct kunit *test);

int pk_setup_ranges(struct kunit *test, const struct tdx_pamt_range *ranges,
		    unsigned int nr, unsigned int mag_size,
		    unsigned long idle_cap);
int pk_setup(struct kunit *test, unsigned int mag_size,
	     unsigned long idle_cap);
int pk_glue(struct kunit *test);
void pk_stats(u64 *vals);
u64 pk_stat(enum tdx_pamt_stat item);
void pk_check_accounting(struct kunit *test, long extra_pairs);
unsigned long pk_slot_pfn(struct kunit *test, unsigned long nth);
unsigned long pk_word(unsigned long pfn);
void pk_set_word(unsigned long pfn, unsigned long word);
void pk_unleak(struct kunit *test, unsigned long pfn);
void pk_expect_warn(struct kunit *test);

/* A large idle cap, so that only the tests of the cap see it act. */
#define PK_NO_CAP	BIT(30)
/*
 * How long the tests let anything take: a get's wait for a transition
 * (pamt.wait_ns), a poll for a state another thread sets.  Only a broken
 * cache reaches it; a slow or loaded machine does not.
 */
#define PK_WAIT_NS	(60ULL * NSEC_PER_SEC)

/* Fail the next @n calls of @op with @status. */
#define PK_INJECT(op, status, n)	pamt_fake_inject(op, status, n, 0)

/* Before the BUSY follow-up, a call that meets BUSY is not retried. */
#ifndef PAMT_BUSY_CALLS_MAX
#define PAMT_BUSY_CALLS_MAX	1
#endif

/* Slot words: installed and in use (add the refcount), and idle. */
#define W_INST		PAMT_SLOT_INSTALLED
#define W_IDLE		PAMT_SLOT_INSTALLED

static inline struct pk_ctx *pk(struct kunit *test)
{
	return test->priv;
}

/* A get without a reserve. */
static inline int pk_get(unsigned long pfn)
{
	return tdx_pamt_get(pfn, NULL);
}

/* A new idle cap, and the worker's trim down to it. */
static inline void pk_set_idle_cap(unsigned long cap)
{
	WRITE_ONCE(pamt.idle_cap, cap);
	pamt_shrink_deferred();
}

/* Set up the fake module and the cache with defaults, or fail the test. */
static inline void pk_up(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, pk_setup(test, 0, PK_NO_CAP), 0);
}

#endif /* _X86_VIRT_TDX_PAMT_KUNIT_H */
