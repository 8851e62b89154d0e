/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake TDX module for the PAMT cache's tests and benchmark: PAMT.ADD,
 * PAMT.REMOVE, and the 4K TD-page bookkeeping of PAGE.AUG/PAGE.REMOVE,
 * with the module's per-2M-range locking, error codes, injectable
 * failures and a modelled latency.  Shared by the userspace harness and
 * KUnit.
 */
#ifndef _X86_VIRT_TDX_PAMT_FAKE_H
#define _X86_VIRT_TDX_PAMT_FAKE_H

#include <linux/atomic.h>
#include <linux/types.h>
#include "pamt_internal.h"

/* The module's other PAMT statuses; the cache takes them all as -EIO. */
#define TDX_PAMT_OPERAND_ADDR_RANGE	0xC000010100000000ULL
#define TDX_PAMT_PAGE_NOT_EMPTY		0xC000030600000000ULL
#define TDX_PAMT_MISSING_PAGE_PAIR	0x8000030800000000ULL
#define TDX_PAMT_PAGE_METADATA_INCORRECT 0xC000030000000000ULL

enum pamt_fake_op {
	PAMT_FAKE_ADD,
	PAMT_FAKE_REMOVE,
	PAMT_FAKE_NR_OPS,
};

/**
 * struct pamt_fake_inject - failures injected into one SEAMCALL
 * @status: the status to return instead of running the call
 * @count: fail the next @count calls (decremented per failure)
 * @rate_ppm: or fail calls at this rate, in parts per million
 *
 * An injected failure changes no module state and is not a violation.
 */
struct pamt_fake_inject {
	u64 status;
	atomic_t count;
	unsigned int rate_ppm;
};

/**
 * struct pamt_fake_latency - modelled SEAMCALL latency
 * @min_ns: floor
 * @avg_ns: mean; the excess over @min_ns is exponentially distributed
 * @max_ns: ceiling
 *
 * The range locks are held while the latency elapses, as they are in the
 * real module, so concurrent calls can meet TDX_OPERAND_BUSY.
 */
struct pamt_fake_latency {
	u64 min_ns;
	u64 avg_ns;
	u64 max_ns;
};

/**
 * struct pamt_fake_range - the module's view of one 2M range
 * @lock: 0 free, > 0 shared holders, -1 held exclusively
 * @has_pair: PAMT.ADD succeeded and no REMOVE since
 * @pair: the pair, valid with @has_pair
 * @td_pages: 4K pages of the range in use by a TD
 */
struct pamt_fake_range {
	atomic_t lock;
	bool has_pair;
	struct tdx_pamt_pair pair;
	atomic_t td_pages;
};

/* Covered pfn ranges the fake module tracks, far apart or not. */
#define PAMT_FAKE_MAX_PIECES	4

/**
 * struct pamt_fake_piece - one covered pfn range of the fake module
 * @start_pfn: first pfn, 2M aligned
 * @end_pfn: one past the last, 2M aligned
 * @first: the bit of @start_pfn in the bitmaps: the pages of the pieces
 *	before it
 */
struct pamt_fake_piece {
	unsigned long start_pfn;
	unsigned long end_pfn;
	unsigned long first;
};

/**
 * struct pamt_fake - the fake module
 * @start_pfn: first covered pfn
 * @end_pfn: one past the last covered pfn
 * @pieces: the covered ranges, sorted; only their pages have bits and
 *	ranges, so pieces far apart cost what they cover
 * @nr_pieces: entries in @pieces
 * @nr_pages: pages in all pieces: bits in @td_map and @pamt_map
 * @ranges: one per 2M range of the pieces, in their order
 * @td_map: one bit per page: in use by a TD
 * @pamt_map: one bit per page: holds a PAMT (the module's PAMT page bitmap)
 * @lock_map: one bit per page: its 4K entry is locked exclusively
 * @inject: per-op failure injection
 * @lat: per-op latency
 * @stall: per-op: while set, a call of that op waits, its range locks
 *	held, after its latency; lets a test hold a transition open for as
 *	long as it needs, whatever the machine's speed
 * @calls: per-op calls
 * @ok: per-op successes
 * @busy: per-op TDX_OPERAND_BUSY returned (not injected)
 * @errors: per-op other errors returned (not injected)
 * @injected: per-op injected failures
 * @pairs: ranges that hold a pair now
 * @resets: pages reset
 * @violations: invariants broken; every one is also logged
 */
struct pamt_fake {
	unsigned long start_pfn;
	unsigned long end_pfn;
	struct pamt_fake_piece pieces[PAMT_FAKE_MAX_PIECES];
	unsigned int nr_pieces;
	unsigned long nr_pages;
	struct pamt_fake_range *ranges;
	unsigned long *td_map;
	unsigned long *pamt_map;
	unsigned long *lock_map;
	struct pamt_fake_inject inject[PAMT_FAKE_NR_OPS];
	struct pamt_fake_latency lat[PAMT_FAKE_NR_OPS];
	atomic_t stall[PAMT_FAKE_NR_OPS];
	atomic64_t calls[PAMT_FAKE_NR_OPS];
	atomic64_t ok[PAMT_FAKE_NR_OPS];
	atomic64_t busy[PAMT_FAKE_NR_OPS];
	atomic64_t errors[PAMT_FAKE_NR_OPS];
	atomic64_t injected[PAMT_FAKE_NR_OPS];
	atomic64_t pairs;
	atomic64_t resets;
	atomic64_t violations;
};

extern struct pamt_fake pamt_fake;
extern const struct tdx_pamt_ops pamt_fake_ops;

int pamt_fake_init(unsigned long start_pfn, unsigned long end_pfn);
int pamt_fake_init_ranges(const struct tdx_pamt_range *ranges,
			  unsigned int nr);
void pamt_fake_exit(void);
int pamt_fake_evict(unsigned long pfn);
void pamt_fake_inject(enum pamt_fake_op op, u64 status, unsigned int count,
		      unsigned int rate_ppm);
void pamt_fake_set_latency(enum pamt_fake_op op, u64 min_ns, u64 avg_ns,
			   u64 max_ns);
void pamt_fake_stall(enum pamt_fake_op op, bool on);
u64 pamt_fake_page_aug(unsigned long pfn);
u64 pamt_fake_page_remove(unsigned long pfn);
u64 pamt_fake_page_add(unsigned long pfn);
u64 pamt_fake_control_add(unsigned long pfn);
bool pamt_fake_is_pamt_page(unsigned long pfn);
bool pamt_fake_range_has_pair(unsigned long pfn);
unsigned long pamt_fake_check_all(void);
unsigned long pamt_fake_idle_pairs(void);
unsigned long pamt_fake_shrink_count(void);
unsigned long pamt_fake_shrink_scan(unsigned long nr, unsigned long *scanned);

/* Between pamt_fake.c and pamt_fake_td.c: see pamt_fake.c. */
#define pamt_fake_violation(fmt, ...) do {				\
	atomic64_inc(&pamt_fake.violations);				\
	pr_err("tdx-pamt-fake: VIOLATION: " fmt "\n", ##__VA_ARGS__);	\
} while (0)

bool pamt_fake_covered(unsigned long pfn);
unsigned long pamt_fake_bit(unsigned long pfn);
struct pamt_fake_range *pamt_fake_range(unsigned long pfn);
bool pamt_fake_trylock_excl(struct pamt_fake_range *r, unsigned long base);
void pamt_fake_unlock_excl(struct pamt_fake_range *r);
bool pamt_fake_trylock_shared(struct pamt_fake_range *r);
void pamt_fake_unlock_shared(struct pamt_fake_range *r);
void pamt_fake_delay(enum pamt_fake_op op);
u64 pamt_fake_injected(enum pamt_fake_op op);
bool pamt_fake_lock_pair(struct pamt_fake_range *target,
			 const struct tdx_pamt_pair *pair);
void pamt_fake_unlock_pair(struct pamt_fake_range *target,
			   const struct tdx_pamt_pair *pair);
u64 pamt_fake_result(enum pamt_fake_op op, u64 status);
u64 pamt_fake_lock_for_pair(enum pamt_fake_op op, unsigned long base,
			    const struct tdx_pamt_pair *pair,
			    struct pamt_fake_range **rp);
u64 pamt_fake_install_pair(struct pamt_fake_range *r, unsigned long base,
			   const struct tdx_pamt_pair *pair, const char *what);

/*
 * A pair for an ADD, for the tests: from the page allocator, not from the
 * magazines.  Return: 0 or -ENOMEM, with nothing allocated.
 */
static inline int pamt_pair_alloc(struct tdx_pamt_pair *pair, gfp_t gfp)
{
	might_alloc(gfp);
	return pamt_pair_alloc_pages(pair, gfp & ~__GFP_ACCOUNT);
}

#endif /* _X86_VIRT_TDX_PAMT_FAKE_H */
