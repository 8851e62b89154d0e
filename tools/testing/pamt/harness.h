/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The userspace test harness: registration, expectations, and the test
 * environment (simulated memory + fake TDX module + the PAMT cache).
 */
#ifndef _PAMT_HARNESS_H
#define _PAMT_HARNESS_H

#include "shim/sim.h"
#include "pamt_internal.h"
#include "pamt_fake.h"

struct pamt_test {
	const char *name;
	void (*fn)(void);
	struct pamt_test *next;
};

void pamt_test_register(struct pamt_test *t);
void pamt_test_failed(const char *file, int line, const char *what);
bool pamt_test_take_failed(void);

#define PAMT_TEST(tname)						\
	static void tname(void);					\
	static struct pamt_test __pamt_test_##tname = {			\
		.name = #tname, .fn = tname,				\
	};								\
	__attribute__((constructor)) static void __pamt_reg_##tname(void) \
	{								\
		pamt_test_register(&__pamt_test_##tname);		\
	}								\
	static void tname(void)

#define EXPECT(cond)							\
	do {								\
		if (!(cond))						\
			pamt_test_failed(__FILE__, __LINE__, #cond);	\
	} while (0)

#define EXPECT_EQ(a, b)							\
	do {								\
		long long __a = (long long)(a), __b = (long long)(b);	\
		if (__a != __b) {					\
			char __m[256];					\
			snprintf(__m, sizeof(__m), "%s == %s (%lld != %lld)", \
				 #a, #b, __a, __b);			\
			pamt_test_failed(__FILE__, __LINE__, __m);	\
		}							\
	} while (0)

/* Stop the test on failure; the runner tears the environment down. */
#define ASSERT(cond)							\
	do {								\
		if (!(cond)) {						\
			pamt_test_failed(__FILE__, __LINE__, #cond);	\
			return;						\
		}							\
	} while (0)

/**
 * struct pamt_env_opts - what a test wants from its environment
 * @mag_size: pairs per magazine, 0 for the default
 * @idle_cap: idle cap, 0 for the default
 * @nr_cpus: simulated CPUs
 * @nr_slots: covered 2M ranges
 * @hole: leave the middle two slots uncovered
 * @mem_slots: 2M ranges of simulated memory from the first covered pfn,
 *	0 for all of them; pairs come from there, so a large sparse table
 *	needs little memory
 * @ranges: covered ranges instead of @nr_slots from PAMT_ENV_BASE_PFN,
 *	as far apart as they like; the simulated memory (@mem_slots, at
 *	PAMT_ENV_BASE_PFN) is then covered by the fake module only, unless
 *	one of @ranges is exactly it
 * @nr_ranges: entries in @ranges, at most PAMT_FAKE_MAX_PIECES - 1
 */
struct pamt_env_opts {
	unsigned int mag_size;
	unsigned long idle_cap;
	unsigned int nr_cpus;
	unsigned long nr_slots;
	bool hole;
	unsigned long mem_slots;
	const struct tdx_pamt_range *ranges;
	unsigned int nr_ranges;
};

/**
 * struct pamt_env - the environment of the running test
 * @up: set between pamt_env_up() and pamt_env_down()
 * @base_pfn: first covered pfn
 * @nr_slots: covered 2M ranges, holes included
 * @expect_violations: fake-module violations the test provokes on purpose
 * @expect_warnings: WARNs the test provokes on purpose
 * @held_pairs: pairs the test holds outside the cache (reserves, takes)
 * @held_pages: pages the test holds (TD pages, control pages)
 */
struct pamt_env {
	bool up;
	unsigned long base_pfn;
	unsigned long nr_slots;
	long expect_violations;
	long expect_warnings;
	long held_pairs;
	long held_pages;
};

extern struct pamt_env env;

#define PAMT_ENV_BASE_PFN	0x100000UL	/* 4 GiB */
/*
 * pamt.wait_ns after set-up: the host preempts a thread inside a
 * transition, which the kernel never does, so a get waits for it as long
 * as KUnit's do.  Tests of the wait itself set PAMT_WAIT_NS_DEFAULT.
 */
#define PAMT_ENV_WAIT_NS	(60ULL * NSEC_PER_SEC)

int pamt_env_up(const struct pamt_env_opts *o);
void pamt_env_up_default(void);
void pamt_env_down(void);

/* Helpers */
unsigned long slot_pfn(unsigned long slot, unsigned long page);
unsigned long slot_word(unsigned long slot);
void slot_set_word(unsigned long slot, unsigned long word);
unsigned long pfn_word(unsigned long pfn);
void pfn_set_word(unsigned long pfn, unsigned long word);
u64 stat(enum tdx_pamt_stat s);
void stats_snapshot(u64 *vals);
bool pamt_accounting_ok(void);
long fake_calls(enum pamt_fake_op op);
int run_in_child(void (*fn)(void));
unsigned long reclaim_work(void);
void run_deferred(void);
void set_idle_cap(unsigned long cap);
int take_pair(struct tdx_pamt_pair *pair);

/* The fake module behind the shim's SEAMCALL checks (shim/fake_ops.c). */
extern const struct tdx_pamt_ops pamt_env_ops;
u64 idle_memory(void);

#endif /* _PAMT_HARNESS_H */
