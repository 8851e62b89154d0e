/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TDX Dynamic PAMT cache: what its layers share.  State machine and lock
 * order: Documentation/arch/x86/tdx-dpamt.rst.
 */
#ifndef _X86_VIRT_TDX_PAMT_INTERNAL_H
#define _X86_VIRT_TDX_PAMT_INTERNAL_H

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/cache.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/list_lru.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/time64.h>
#include <linux/xarray.h>
#include <asm/tdx_pamt.h>

/* Counters, folded across CPUs by tdx_pamt_read_stats(). */
enum tdx_pamt_stat {
	TDX_PAMT_STAT_GET_FAST,		/* get on an installed slot */
	TDX_PAMT_STAT_GET_SLOW,		/* get whose PAMT.ADD installed a pair */
	TDX_PAMT_STAT_GET_WAIT,		/* get that waited on a transition */
	TDX_PAMT_STAT_PUT_FAST,		/* put that issued no SEAMCALL */
	TDX_PAMT_STAT_PUT_SLOW,		/* put that issued PAMT.REMOVE itself */
	TDX_PAMT_STAT_REVIVE,		/* idle slot made active, no SEAMCALL */
	TDX_PAMT_STAT_ADD,		/* PAMT.ADD calls, retries included */
	TDX_PAMT_STAT_REMOVE,		/* PAMT.REMOVE calls, retries included */
	TDX_PAMT_STAT_BUSY,		/* TDX_OPERAND_BUSY answers */
	TDX_PAMT_STAT_GLOBAL_LOCK,	/* acquisitions of any all-CPU lock */
	TDX_PAMT_STAT_PAGE_ALLOC,	/* page-allocator allocations */
	TDX_PAMT_STAT_PAGE_FREE,	/* pages returned to the allocator */
	TDX_PAMT_STAT_MAG_HIT,		/* pair taken from a per-CPU magazine */
	TDX_PAMT_STAT_MAG_MISS,		/* magazine empty: page allocator */
	TDX_PAMT_STAT_SHRINK,		/* idle slots removed by the shrinker */
	TDX_PAMT_STAT_CAP,		/* idle slots removed by the idle cap */
	TDX_PAMT_STAT_LEAKED,		/* pairs lost: REMOVE failed, ADD refused */
	TDX_PAMT_STAT_ADD_FAILED,	/* get whose PAMT.ADD failed */
	TDX_PAMT_STAT_NR_COUNTERS,
	/* Gauges, not per-CPU counters: */
	TDX_PAMT_STAT_IDLE_SLOTS = TDX_PAMT_STAT_NR_COUNTERS,
	TDX_PAMT_STAT_CACHED_PAIRS,	/* free pairs in the magazines */
	TDX_PAMT_STAT_INSTALLED,	/* slots with a pair in the module */
	TDX_PAMT_STAT_NR,
};

void tdx_pamt_read_stats(u64 *vals);

/* TDX module statuses (bits 63:32; the low bits name an operand). */
#define TDX_PAMT_STATUS_MASK		0xFFFFFFFF00000000ULL
#define TDX_PAMT_SUCCESS		0x0000000000000000ULL
#define TDX_PAMT_OPERAND_BUSY		0x8000020000000000ULL
#define TDX_PAMT_PAGE_NOT_FREE		0xC000030300000000ULL
#define TDX_PAMT_HPA_RANGE_NOT_FREE	0xC000030400000000ULL
#define TDX_PAMT_NO_PAGE_PAIR		0xC000030500000000ULL

/* Kernel statuses (class 0xFF): the SEAMCALL did not run, or lost its output. */
#define TDX_PAMT_SW_ERROR		0x8000FF0000000000ULL
#define TDX_PAMT_SW_PAIR_LOST		(TDX_PAMT_SW_ERROR | 0xBADULL)

#define TDH_PHYMEM_PAMT_ADD		58
#define TDH_PHYMEM_PAMT_REMOVE		59

#define TDX_PAMT_PAGES_PER_SLOT		512	/* 4K pages per 2M range */

/* A covered physical range, in pfns, both ends 2M aligned. */
struct tdx_pamt_range {
	unsigned long start_pfn;
	unsigned long end_pfn;		/* one past the last */
};

/* The platform backend; every op may be called in atomic context. */
struct tdx_pamt_ops {
	u64 (*add)(unsigned long base_pfn, const struct tdx_pamt_pair *pair);
	/* On success fills @pair with the pages the module handed back. */
	u64 (*remove)(unsigned long base_pfn, struct tdx_pamt_pair *pair);
	/* Make a page the module wrote safe for the page allocator. */
	void (*reset_page)(unsigned long pfn);
};

/* Parameters fixed at tdx_pamt_init(); 0 picks the default. */
struct tdx_pamt_config {
	unsigned int mag_size;		/* pairs per magazine */
	unsigned long idle_cap;		/* most idle memory, in pairs */
	const struct tdx_pamt_ops *ops;	/* must outlive the cache */
};

/*
 * The slot word: the count, then the flags.  A count in a word INSTALLED
 * and not TRANSIT is a reference; any other is a get's pending count.  A
 * count above PAMT_SLOT_REF_MAX is a caller bug.
 */
#define PAMT_SLOT_REF_MASK	GENMASK(22, 0)
#define PAMT_SLOT_REF_MAX	(2 * TDX_PAMT_PAGES_PER_SLOT - 1)
#define PAMT_SLOT_INSTALLED	BIT(23)	/* the module holds a pair */
#define PAMT_SLOT_TRANSIT	BIT(24)	/* one CPU owns an ADD or REMOVE */
#define PAMT_SLOT_LEAKED	BIT(25)	/* REMOVE failed; never reclaimed */
#define PAMT_SLOT_HOLE		BIT(26)	/* not covered; every call -EINVAL */

enum pamt_slot_state {
	PAMT_SLOT_EMPTY,	/* no pair, refcount 0 */
	PAMT_SLOT_ADDING,	/* TRANSIT, no pair: the owner issues ADD */
	PAMT_SLOT_ACTIVE,	/* INSTALLED, refcount > 0 */
	PAMT_SLOT_IDLE,		/* INSTALLED, refcount 0 */
	PAMT_SLOT_REMOVING,	/* INSTALLED and TRANSIT: owner issues REMOVE */
	PAMT_SLOT_NOT_COVERED,	/* HOLE */
};

static inline unsigned long pamt_slot_refs(unsigned long word)
{
	return word & PAMT_SLOT_REF_MASK;
}

static inline enum pamt_slot_state pamt_slot_state(unsigned long word)
{
	if (word & PAMT_SLOT_HOLE)
		return PAMT_SLOT_NOT_COVERED;
	if (word & PAMT_SLOT_TRANSIT)
		return (word & PAMT_SLOT_INSTALLED) ? PAMT_SLOT_REMOVING :
						      PAMT_SLOT_ADDING;
	if (!(word & PAMT_SLOT_INSTALLED))
		return PAMT_SLOT_EMPTY;
	return pamt_slot_refs(word) ? PAMT_SLOT_ACTIVE : PAMT_SLOT_IDLE;
}

/* Bounds on waiting and retrying: see "Bounds" in the Documentation. */
#define PAMT_BUSY_RETRIES	10	/* retries of OPERAND_BUSY per call */
#define PAMT_BUSY_BACKOFF_NS	256	/* first backoff; doubles per retry */
/* BUSY answers before -EBUSY: backed off, then as many serialised. */
#define PAMT_BUSY_CALLS_MAX	(2 * (PAMT_BUSY_RETRIES + 1))
/* A get's wait for other CPUs' transitions, in all: about five SEAMCALLs. */
#define PAMT_WAIT_NS_DEFAULT	(100 * NSEC_PER_USEC)
#define PAMT_WAIT_NS		READ_ONCE(pamt.wait_ns)
#define PAMT_MAG_SIZE		128	/* pairs per magazine */
#define PAMT_MAG_SIZE_MAX	1024

/* A magazine of free pairs. */
struct pamt_mag {
	unsigned int nr;
	struct tdx_pamt_pair pairs[];	/* pamt.mag_size of them */
};

/* Per-CPU: the counters, the gauges' deltas, then unfolded pamt.held. */
#define PAMT_PCPU_CACHED	TDX_PAMT_STAT_CACHED_PAIRS
#define PAMT_PCPU_HELD		TDX_PAMT_STAT_NR
#define PAMT_PCPU_NR_STATS	(PAMT_PCPU_HELD + 1)

struct pamt_pcpu {
	spinlock_t lock;		/* @mag, from any CPU; a leaf */
	struct pamt_mag *mag;		/* never NULL */
	/* This CPU writes them; others sum them racily, with READ_ONCE(). */
	u64 stat[PAMT_PCPU_NR_STATS];
	/*
	 * SEAMCALLs not serialised.  This CPU writes it; a CPU about to
	 * serialise polls it with READ_ONCE() until it drops to 0, after a
	 * full barrier (pamt_slot_backoff()).
	 */
	unsigned int in_flight;
};

/* A slot: its word and its place on the idle LRU; 32 bytes. */
struct pamt_slot {
	atomic_t word;
	/* @lru's list, set at install; a stale read is corrected by a walk. */
	u16 nid;
	u16 memcg_id;
	unsigned long bits;
	struct list_head lru;		/* on pamt.lru: PAMT_QUEUED_BIT */
};

#define PAMT_QUEUED_BIT	0	/* on a list, or taken off by a walk */

/* The host's PAMT cache: what get and put read, then written groups. */
struct pamt_cache {
	struct pamt_slot *slots;	/* the flat window, then far blocks */
	unsigned long base_idx;		/* pfn / 512 of slots[0] */
	unsigned long nr_flat;		/* slots in the flat window */
	unsigned long nr_slots;
	unsigned long meta_bytes;	/* slot metadata, for the statistics */
	const struct tdx_pamt_ops *ops;
	unsigned int mag_size;
	struct pamt_pcpu __percpu *pcpu;
	/* Set at init; tests change them live: READ_ONCE(). */
	unsigned long idle_cap;
	u64 wait_ns;			/* PAMT_WAIT_NS */
	bool enabled;
	atomic_long_t held ____cacheline_aligned_in_smp; /* less unfolded deltas */
	struct list_lru lru;		/* installed slots: see pamt_shrink.c */
	struct shrinker *shrinker;	/* registered by pamt_glue_register() */
	atomic_t deferred ____cacheline_aligned_in_smp; /* the cap's work queued */
	atomic_t serializing;		/* CPUs retrying BUSY serialised */
	raw_spinlock_t seamcall_lock;	/* the BUSY fallback, one SEAMCALL */
};

extern struct pamt_cache pamt;

#define pamt_stat_inc(item)	this_cpu_inc(pamt.pcpu->stat[TDX_PAMT_STAT_##item])
#define pamt_stat_add(item, n)	this_cpu_add(pamt.pcpu->stat[TDX_PAMT_STAT_##item], n)
#define pamt_cached_add(n)	this_cpu_add(pamt.pcpu->stat[PAMT_PCPU_CACHED], n)

/*
 * Per-CPU deltas folded by one atomic add: percpu_counter's fold takes a
 * raw spinlock, 205 all-CPU locks per 1M gets and puts in make bench's
 * churn at this batch.  The cap's slack is this batch per other CPU.
 */
#define PAMT_HELD_BATCH		8

/* Idle memory changed by @n pairs; exchange, as softirq may fold too. */
static inline void pamt_held_add(long n)
{
	long d;

	preempt_disable();
	d = this_cpu_add_return(pamt.pcpu->stat[PAMT_PCPU_HELD], n);
	if (d >= PAMT_HELD_BATCH || d <= -PAMT_HELD_BATCH) {
		d = this_cpu_xchg(pamt.pcpu->stat[PAMT_PCPU_HELD], 0);
		atomic_long_add(d, &pamt.held);
	}
	preempt_enable();
}

/* Idle pairs on node @nid, in meminfo's KReclaimable; irq-safe. */
static inline void pamt_meminfo_add(int nid, long pairs)
{
	mod_node_page_state(NODE_DATA(nid), NR_KERNEL_MISC_RECLAIMABLE,
			    2 * pairs);
}

static inline int pamt_pair_nid(const struct tdx_pamt_pair *pair)
{
	return page_to_nid(pfn_to_page(pair->pfn[0]));
}

/* Slot @idx went IDLE (@n = 1) or left IDLE (@n = -1). */
static inline void pamt_idle_count(unsigned long idx, long n)
{
	pamt_stat_add(IDLE_SLOTS, n);
	pamt_held_add(n);
	pamt_meminfo_add(READ_ONCE(pamt.slots[idx].nid), n);
}

/* A transition: preemption off, on RT too, so getters spin on a running CPU. */
#ifdef CONFIG_LOCKDEP
extern struct lockdep_map pamt_transit_map;
#define pamt_transit_begin()						\
	do {								\
		preempt_disable();					\
		lock_acquire(&pamt_transit_map, 0, 0, 2, 0, NULL, _THIS_IP_); \
	} while (0)
#define pamt_transit_end()						\
	do {								\
		lock_release(&pamt_transit_map, _THIS_IP_);		\
		preempt_enable();					\
	} while (0)
#else
#define pamt_transit_begin()	preempt_disable()
#define pamt_transit_end()	preempt_enable()
#endif

/* pamt_core.c */
int tdx_pamt_init(const struct tdx_pamt_range *ranges, unsigned int nr,
		  const struct tdx_pamt_config *cfg);
void tdx_pamt_exit(void);
struct page *__tdx_alloc_control_page(gfp_t gfp);

/* pamt_sparse.c: see "Slot words and sparse memory" in the Documentation */
/*
 * Slots outside the flat window live in blocks of PAMT_BLOCK_SLOTS, one
 * block per 1G-aligned 1G of covered memory, found in pamt_far.
 */
#define PAMT_BLOCK_SLOTS	512
#define PAMT_BLOCK_PFN_SHIFT	(9 + 9)	/* pfn -> block key */

struct pamt_far {
	struct xarray blocks;		/* block key -> its number */
	unsigned long *keys;		/* block number -> key */
};

extern struct pamt_far pamt_far;

long pamt_sparse_init(const struct tdx_pamt_range *ranges, unsigned int nr,
		      unsigned int *first, unsigned int *last);
void pamt_sparse_free(void);

/*
 * The word of the 2M range @nr (pfn / TDX_PAMT_PAGES_PER_SLOT) in a far
 * block, or NULL if it is in no far block.
 */
static inline atomic_t *pamt_slot_far(unsigned long nr)
{
	void *block = xa_load(&pamt_far.blocks, nr / PAMT_BLOCK_SLOTS);

	if (!block)
		return NULL;
	return &pamt.slots[pamt.nr_flat + xa_to_value(block) * PAMT_BLOCK_SLOTS +
			   nr % PAMT_BLOCK_SLOTS].word;
}

/* The first pfn of far slot @far (an index past the flat window). */
static inline unsigned long pamt_far_base_pfn(unsigned long far)
{
	return (pamt_far.keys[far / PAMT_BLOCK_SLOTS] << PAMT_BLOCK_PFN_SHIFT) +
	       far % PAMT_BLOCK_SLOTS * TDX_PAMT_PAGES_PER_SLOT;
}

/* pamt_slot.c */
static inline unsigned long pamt_slot_base_pfn(unsigned long idx)
{
	if (idx < pamt.nr_flat)
		return (pamt.base_idx + idx) * TDX_PAMT_PAGES_PER_SLOT;
	return pamt_far_base_pfn(idx - pamt.nr_flat);
}

static inline unsigned long pamt_slot_idx(const atomic_t *slot)
{
	return container_of(slot, struct pamt_slot, word) - pamt.slots;
}

/* The word of @pfn's 2M range, or NULL if it is not covered. */
static inline atomic_t *pamt_slot_lookup(unsigned long pfn)
{
	unsigned long idx = pfn / TDX_PAMT_PAGES_PER_SLOT - pamt.base_idx;

	if (idx < pamt.nr_flat)
		return &pamt.slots[idx].word;
	return pamt_slot_far(pfn / TDX_PAMT_PAGES_PER_SLOT);
}

int pamt_slot_remove(atomic_t *slot, unsigned long idx, int *word,
		     struct tdx_pamt_pair *pair);
int pamt_status_errno(u64 status);

/* pamt_mag.c */
int __tdx_topup_pamt_cache(struct tdx_pamt_cache *cache, unsigned int nr,
			   gfp_t gfp);

int pamt_mag_init(void);
void pamt_mag_exit(void);
bool pamt_mag_pop(struct tdx_pamt_pair *pair);
void pamt_mag_push(const struct tdx_pamt_pair *pair);
bool pamt_mag_free_one(void);
unsigned long pamt_mag_drain(unsigned long nr, bool resched);
long pamt_cached_pairs(void);
int pamt_pair_alloc_pages(struct tdx_pamt_pair *pair, gfp_t gfp);
void pamt_pair_free(const struct tdx_pamt_pair *pairs, unsigned int n);
#ifdef CONFIG_MEMCG
void pamt_pair_uncharge(const struct tdx_pamt_pair *pair);
#else
static inline void pamt_pair_uncharge(const struct tdx_pamt_pair *pair) { }
#endif

/* pamt_shrink.c */
unsigned long tdx_pamt_drain(void);
int pamt_shrink_init(void);
void pamt_shrink_exit(void);
void pamt_shrink_installed(unsigned long idx, const struct tdx_pamt_pair *pair);
int pamt_shrink_prepare(struct page *page, gfp_t gfp);
bool pamt_shrink_idle_inc(unsigned long idx);
bool pamt_shrink_over_cap(unsigned long more);
void pamt_shrink_deferred(void);

/* pamt_glue.c: in the kernel; the harness's shims in userspace */

/* Run pamt_shrink_deferred() in process context soon; _sync() waits for it. */
void pamt_platform_defer(void);
void pamt_platform_defer_sync(void);
int pamt_glue_register(void);
struct shrinker *pamt_glue_shrinker(void);	/* NULL until registered */

#endif /* _X86_VIRT_TDX_PAMT_INTERNAL_H */
