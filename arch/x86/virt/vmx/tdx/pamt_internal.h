/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TDX Dynamic PAMT cache: what the slot, magazine and shrink layers share.
 *
 * The slot state machine and the lock order are written down once, in
 * Documentation/arch/x86/tdx-dpamt.rst.  The state machine is model-checked
 * in tools/testing/pamt/model/pamt_slot.pml, which uses the names below.
 */
#ifndef _X86_VIRT_TDX_PAMT_INTERNAL_H
#define _X86_VIRT_TDX_PAMT_INTERNAL_H

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/local_lock.h>
#include <linux/lockdep.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/time64.h>
#include <asm/tdx_pamt.h>

/*
 * TDX module status codes used by PAMT.ADD/PAMT.REMOVE.  Bits 63:32 carry
 * the status; the low bits carry an operand id and are masked off before
 * comparing.  Every value is the one in the TDX module's public source
 * (include/auto_gen_2_0/tdx_error_codes_defs.h, TDX module 2.0); BUSY and
 * PAGE_METADATA_INCORRECT are also in Linux's tdx_errno.h.  Only BUSY and
 * NO_PAMT_PAGE_PAIR change what the cache does (HPA_RANGE_NOT_FREE also
 * warns); anything else is an ordinary -EIO.
 */
#define TDX_PAMT_STATUS_MASK		0xFFFFFFFF00000000ULL
#define TDX_PAMT_SUCCESS		0x0000000000000000ULL
#define TDX_PAMT_OPERAND_BUSY		0x8000020000000000ULL
#define TDX_PAMT_OPERAND_ADDR_RANGE	0xC000010100000000ULL
#define TDX_PAMT_PAGE_NOT_FREE		0xC000030300000000ULL
#define TDX_PAMT_HPA_RANGE_NOT_FREE	0xC000030400000000ULL
#define TDX_PAMT_NO_PAGE_PAIR		0xC000030500000000ULL
#define TDX_PAMT_PAGE_NOT_EMPTY		0xC000030600000000ULL
#define TDX_PAMT_MISSING_PAGE_PAIR	0x8000030800000000ULL
#define TDX_PAMT_PAGE_METADATA_INCORRECT 0xC000030000000000ULL

/*
 * Kernel-defined statuses (class 0xFF in bits 47:40, never used by the
 * module): the SEAMCALL did not run (no VMX operation on this CPU: #UD,
 * #GP, VMFAILINVALID), or it ran but the backend could not use its output.
 */
#define TDX_PAMT_SW_ERROR		0x8000FF0000000000ULL
#define TDX_PAMT_SW_PAIR_LOST		(TDX_PAMT_SW_ERROR | 0xBADULL)

/* SEAMCALL leaves (BRIEF: TDH.PHYMEM.PAMT.ADD/REMOVE). */
#define TDH_PHYMEM_PAMT_ADD		58
#define TDH_PHYMEM_PAMT_REMOVE		59

#define TDX_PAMT_PAGES_PER_SLOT		512	/* 4K pages per 2M range */

/**
 * struct tdx_pamt_range - a covered physical range, in pfns
 * @start_pfn: first pfn, 2M aligned
 * @end_pfn: one past the last pfn, 2M aligned
 */
struct tdx_pamt_range {
	unsigned long start_pfn;
	unsigned long end_pfn;
};

/**
 * struct tdx_pamt_ops - platform backend
 * @add: issue PAMT.ADD for the 2M range at @base_pfn with @pair; returns a
 *	TDX status
 * @remove: issue PAMT.REMOVE for the 2M range at @base_pfn; on success
 *	fills @pair with the pages the module handed back
 * @reset_page: make a page that the module wrote safe to return to the
 *	page allocator
 *
 * All three may be called from atomic context, with interrupts enabled.
 */
struct tdx_pamt_ops {
	u64 (*add)(unsigned long base_pfn, const struct tdx_pamt_pair *pair);
	u64 (*remove)(unsigned long base_pfn, struct tdx_pamt_pair *pair);
	void (*reset_page)(unsigned long pfn);
};

/**
 * struct tdx_pamt_config - parameters fixed at tdx_pamt_init()
 * @mag_size: pairs per magazine; 0 picks PAMT_MAG_SIZE, as the kernel
 *	does; the tests pick small ones to reach the depot in a few puts
 * @idle_cap: most idle memory (pairs of idle slots, and free pairs in
 *	the depot and magazines); 0 picks the default (a quarter of all
 *	slots)
 * @ops: the platform backend; must outlive the cache
 * @arena: carve pairs out of 2M chunks that hold only pair pages; false:
 *	two order-0 pages per pair.  Either way a pair is charged to a memcg
 *	only through a reserve (struct tdx_pamt_cache)
 */
struct tdx_pamt_config {
	unsigned int mag_size;
	unsigned long idle_cap;
	const struct tdx_pamt_ops *ops;
	bool arena;
};

/*
 * The slot word, an atomic_t: bits 22:0 are the count, bits 27:23 flags,
 * the rest zero.  A get adds one to the count before it looks at the word
 * (one atomic add, whoever else piles onto the slot); on a word that is
 * INSTALLED and not TRANSIT that one is a reference, on any other word a
 * pending one: its getter waits for the word to become INSTALLED, or
 * takes it back with a compare-and-exchange while the word is still not
 * INSTALLED, or TRANSIT.  An owner publishes by adding, so pending counts
 * survive: they become references if it publishes INSTALLED.  A 2M range
 * has TDX_PAMT_PAGES_PER_SLOT 4K pages; each holds one reference while in
 * use and, for a moment, a second one (its next use taken before the put
 * of its last), so a count above PAMT_SLOT_REF_MAX is a caller bug: get
 * refuses it with -EOVERFLOW, changing nothing.  The count field has room
 * for one pending count per task beyond that (PID_MAX_LIMIT is 2^22), so
 * it never carries into the flags.  An IDLE slot has no pending count.
 */
#define PAMT_SLOT_REF_MASK	GENMASK(22, 0)
#define PAMT_SLOT_REF_MAX	(2 * TDX_PAMT_PAGES_PER_SLOT - 1)
#define PAMT_SLOT_INSTALLED	BIT(23)	/* the module holds a pair */
#define PAMT_SLOT_TRANSIT	BIT(24)	/* one CPU owns an ADD or REMOVE */
#define PAMT_SLOT_RECENT	BIT(25)	/* revived since queued: second chance */
#define PAMT_SLOT_LEAKED	BIT(26)	/* REMOVE failed; never reclaimed */
#define PAMT_SLOT_HOLE		BIT(27)	/* not covered; every call -EINVAL */

/* The states of a covered slot, derived from the word. */
enum pamt_slot_state {
	PAMT_SLOT_EMPTY,	/* no pair, refcount 0 */
	PAMT_SLOT_ADDING,	/* TRANSIT, no pair: the owner issues ADD */
	PAMT_SLOT_ACTIVE,	/* INSTALLED, refcount > 0 */
	PAMT_SLOT_IDLE,		/* INSTALLED, refcount 0 */
	PAMT_SLOT_REMOVING,	/* INSTALLED and TRANSIT: owner issues REMOVE */
	PAMT_SLOT_NOT_COVERED,	/* HOLE */
};

/*
 * End this CPU's transition: @slot held @owned, TRANSIT set, plus a count
 * for each get that came meanwhile; publish @new, keeping those counts.
 * Return: the word published.
 */
static inline int pamt_slot_publish(atomic_t *slot, int owned, int new)
{
	return atomic_add_return_release(new - owned, slot);
}

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

/* Bounds on waiting and retrying; see the Documentation for the numbers. */
#define PAMT_BUSY_RETRIES	10	/* retries of OPERAND_BUSY per call */
#define PAMT_BUSY_BACKOFF_NS	256	/* first backoff; doubles per retry */
/* BUSY answers before -EBUSY: backed off, then as many serialised. */
#define PAMT_BUSY_CALLS_MAX	(2 * (PAMT_BUSY_RETRIES + 1))
/*
 * A get's wait for other CPUs' transitions, in all: each holds the slot
 * for one SEAMCALL (at most 18 us modelled, see the Documentation), or
 * while serialising that and the SEAMCALLs queued ahead of it.  About five
 * of them, then -EBUSY.  KUnit lengthens it (pamt.wait_ns).
 */
#define PAMT_WAIT_NS_DEFAULT	(100 * NSEC_PER_USEC)
#define PAMT_WAIT_NS		READ_ONCE(pamt.wait_ns)
#define PAMT_IDLE_BATCH		64	/* idle slots a CPU queues per lock */
#define PAMT_MAG_SIZE		64	/* pairs per magazine; see the Documentation */
#define PAMT_MAG_SIZE_MAX	1024

/**
 * struct pamt_mag - a magazine of free pairs
 * @list: linkage on a depot list; unused while a CPU owns the magazine
 * @nr: pairs held, at most pamt.mag_size
 * @pairs: the pairs
 */
struct pamt_mag {
	struct list_head list;
	unsigned int nr;
	struct tdx_pamt_pair pairs[];
};

/*
 * Per-CPU statistics: the event counters of enum tdx_pamt_stat, then the
 * change in cached pairs made on this CPU.  The sum over all CPUs of the
 * latter, taken modulo 2^64, is the number of pairs in magazines.
 */
#define PAMT_PCPU_CACHED	TDX_PAMT_STAT_NR_COUNTERS
#define PAMT_PCPU_NR_STATS	(TDX_PAMT_STAT_NR_COUNTERS + 1)

/**
 * struct pamt_pcpu - per-CPU state
 * @lock: protects @loaded and @prev against this CPU's other contexts;
 *	never taken inside a transition (it sleeps on PREEMPT_RT)
 * @loaded: magazine pairs are taken from and given to; never NULL
 * @prev: the previous magazine, full or empty; never NULL
 * @idle_lock: protects @idle_buf and @idle_nr; a spinlock_t, not part of
 *	the local lock, so that reclaim on another CPU can empty the buffer
 * @idle_buf: slots this CPU queued for the idle index, not yet moved
 *	there: the index's lock is taken once per PAMT_IDLE_BATCH of them
 * @idle_nr: entries in @idle_buf
 * @stat: event counters, folded by tdx_pamt_read_stats()
 * @in_flight: PAMT SEAMCALLs this CPU is issuing outside the serialised
 *	fallback; read by the CPU that runs it
 */
struct pamt_pcpu {
	local_lock_t lock;
	struct pamt_mag *loaded;
	struct pamt_mag *prev;
	spinlock_t idle_lock;	/* see @idle_lock above */
	u32 idle_buf[PAMT_IDLE_BATCH];
	unsigned int idle_nr;
	u64 stat[PAMT_PCPU_NR_STATS];
	unsigned int in_flight;
};

/**
 * struct pamt_depot - full and empty magazines shared by all CPUs
 * @lock: the only lock shared by all CPUs; spin_lock_irqsave(), inside
 *	a pamt_pcpu lock when both are held; never inside a transition, so
 *	it may sleep on PREEMPT_RT
 * @full: magazines with pamt.mag_size pairs
 * @empty: magazines with no pairs
 * @nr_full: entries on @full; read racily to skip the lock
 * @nr_empty: entries on @empty; read racily
 * @nr_pairs: pairs in the magazines on @full; read racily
 *
 * A magazine on @full holds at least one pair, not necessarily mag_size:
 * reclaim takes pairs out of the depot's magazines one at a time.
 */
struct pamt_depot {
	spinlock_t lock;	/* see @lock above */
	struct list_head full;
	struct list_head empty;
	unsigned long nr_full;
	unsigned long nr_empty;
	unsigned long nr_pairs;
};

/**
 * struct pamt_idle_index - the slots that went IDLE, oldest first
 * @lock: guards @ring, @head, @nr and @pops; spin_lock_irqsave(), a leaf:
 *	no other cache lock is held with it, and never inside a transition
 * @ring: slot indices, a FIFO of @size entries
 * @queued: one bit per slot, set while the slot's index is in @ring or on
 *	its way in or out; so no slot is in @ring twice, and @size =
 *	pamt.nr_slots entries always suffice
 * @size: entries @ring can hold
 * @head: the oldest entry
 * @nr: entries in @ring; read racily to skip the lock
 * @pops: entries ever taken out: the work reclaim did, for tests
 *
 * An entry is a hint, checked with a compare-and-exchange once it is
 * taken out: the slot may have been revived, removed or emptied since.
 * Every IDLE slot that is not LEAKED has its bit set, or is held by the
 * CPU that took its entry out, which puts it back if it stays IDLE.
 */
struct pamt_idle_index {
	spinlock_t lock;	/* see @lock above */
	u32 *ring;
	unsigned long *queued;
	unsigned long size;
	unsigned long head;
	unsigned long nr;
	unsigned long pops;
};

/*
 * Slots outside the flat window live in blocks of PAMT_BLOCK_SLOTS, one
 * block per 1G-aligned 1G of covered memory, found through a hash table;
 * see "Slot words and sparse memory" in the Documentation.
 */
#define PAMT_BLOCK_SLOTS	512
#define PAMT_BLOCK_PFN_SHIFT	(9 + 9)	/* pfn -> block key */
#define PAMT_FAR_EMPTY		ULONG_MAX	/* key of an unused entry */

/**
 * struct pamt_far - one entry of the far table
 * @key: pfn >> PAMT_BLOCK_PFN_SHIFT of the block, or PAMT_FAR_EMPTY
 * @first: index in pamt.slots of the block's first slot
 */
struct pamt_far {
	unsigned long key;
	unsigned long first;
};

/* Deferred to a worker: see pamt_shrink_deferred(). */
#define PAMT_DEFER_CAP		BIT(0)	/* idle memory over the cap */

/**
 * struct pamt_cache - the one PAMT cache of this host
 * @slots: every slot word: the flat window, then the far blocks
 * @base_idx: pfn >> 9 of @slots[0], the flat window's first slot
 * @nr_flat: slots in the flat window, @slots[0 .. @nr_flat - 1]
 * @nr_slots: entries in @slots: @nr_flat plus PAMT_BLOCK_SLOTS per far block
 * @far: the far table, @far_mask + 1 entries, open addressing
 * @far_mask: entries in @far, less one (a power of two, less one)
 * @far_mul: the table's multiplicative hash
 * @far_shift: 64 less the table's order; 0 with @far_mul 0 when empty
 * @far_probes: most entries a lookup probes beyond the first (0: perfect)
 * @far_keys: block key of each far block, in the order of @slots
 * @meta_bytes: bytes of slot metadata: words, far table, far keys, and
 *	the idle index's ring and bitmap
 * @ops: the platform backend
 * @mag_size: pairs per magazine
 * @pcpu: per-CPU magazines and counters
 * @depot: shared magazines
 * @idle: slots in the IDLE state, LEAKED ones excluded
 * @installed: slots whose pair is in the module
 * @free_pairs: pairs in magazines and in the depot, exactly
 * @idle_index: IDLE slots, oldest first, for the shrinker and the cap
 * @deferred: PAMT_DEFER_* work left to pamt_shrink_deferred()
 * @defer_drain: pairs the shrinker wants freed from other CPUs' magazines
 * @idle_cap: most idle memory, @idle plus @free_pairs plus, with the
 *	arena, the free pairs in its chunks; see the Documentation for the
 *	slack
 * @serializing: CPUs retrying a BUSY SEAMCALL through @seamcall_lock
 * @seamcall_lock: while @serializing is non-zero, every PAMT SEAMCALL is
 *	issued under it.  A raw spinlock, FIFO, held around exactly one
 *	SEAMCALL; IRQs are off for that SEAMCALL only (pamt_slot_call()).
 * @wait_ns: how long a get waits for another CPU's transition, and the
 *	BUSY fallback for calls in flight, before giving up: set to
 *	PAMT_WAIT_NS_DEFAULT by init; the KUnit suites lengthen it, so that
 *	no test outcome depends on how fast a loaded machine runs them
 * @enabled: set once init completed; cleared at exit
 * @arena: pairs come from the arena's 2M chunks (pamt_arena.c)
 */
struct pamt_cache {
	atomic_t *slots;
	unsigned long base_idx;
	unsigned long nr_flat;
	unsigned long nr_slots;
	struct pamt_far *far;
	unsigned long far_mask;
	unsigned long far_mul;
	unsigned int far_shift;
	unsigned int far_probes;
	unsigned long *far_keys;
	unsigned long meta_bytes;
	const struct tdx_pamt_ops *ops;
	unsigned int mag_size;
	struct pamt_pcpu __percpu *pcpu;
	struct pamt_depot depot;
	atomic_long_t idle;
	atomic_long_t installed;
	atomic_long_t free_pairs;
	struct pamt_idle_index idle_index;
	atomic_t deferred;
	atomic_long_t defer_drain;
	unsigned long idle_cap;
	atomic_t serializing;
	raw_spinlock_t seamcall_lock;	/* the BUSY fallback; see above */
	u64 wait_ns;
	bool enabled;
	bool arena;
};

extern struct pamt_cache pamt;

#define pamt_stat_inc(item)	this_cpu_inc(pamt.pcpu->stat[TDX_PAMT_STAT_##item])
#define pamt_stat_add(item, n)	this_cpu_add(pamt.pcpu->stat[TDX_PAMT_STAT_##item], n)
#define pamt_cached_add(n)	this_cpu_add(pamt.pcpu->stat[PAMT_PCPU_CACHED], n)

/* The first pfn of the 2M range of slot @idx. */
static inline unsigned long pamt_slot_base_pfn(unsigned long idx)
{
	unsigned long far = idx - pamt.nr_flat;

	if (idx < pamt.nr_flat)
		return (pamt.base_idx + idx) * TDX_PAMT_PAGES_PER_SLOT;
	return (pamt.far_keys[far / PAMT_BLOCK_SLOTS] << PAMT_BLOCK_PFN_SHIFT) +
	       far % PAMT_BLOCK_SLOTS * TDX_PAMT_PAGES_PER_SLOT;
}

/* The index in pamt.slots of @slot. */
static inline unsigned long pamt_slot_idx(const atomic_t *slot)
{
	return slot - pamt.slots;
}

/*
 * The word of the 2M range @nr (pfn / TDX_PAMT_PAGES_PER_SLOT) in a far
 * block: one probe of the far table in the usual case, at most
 * pamt.far_probes more; NULL if it is in no far block.
 */
static inline atomic_t *pamt_slot_far(unsigned long nr)
{
	unsigned long key = nr / PAMT_BLOCK_SLOTS;
	unsigned long h = (key * pamt.far_mul) >> pamt.far_shift;
	const struct pamt_far *e;
	unsigned int i;

	for (i = 0; ; i++) {
		e = &pamt.far[(h + i) & pamt.far_mask];
		if (e->key == key)
			return &pamt.slots[e->first + nr % PAMT_BLOCK_SLOTS];
		if (i == pamt.far_probes || e->key == PAMT_FAR_EMPTY)
			return NULL;
	}
}

/* The word of @pfn's 2M range, or NULL if it is not covered. */
static inline atomic_t *pamt_slot_lookup(unsigned long pfn)
{
	unsigned long idx = pfn / TDX_PAMT_PAGES_PER_SLOT - pamt.base_idx;

	if (idx < pamt.nr_flat)
		return &pamt.slots[idx];
	return pamt_slot_far(pfn / TDX_PAMT_PAGES_PER_SLOT);
}

/* Where a pair goes once PAMT.REMOVE hands it back. */
enum pamt_pair_dest {
	PAMT_PAIR_TO_MAG,	/* keep it for the next ADD */
	PAMT_PAIR_TO_FREE,	/* reset it and give it to the page allocator */
};

/*
 * The owner of a transition (PAMT_SLOT_TRANSIT) runs it with preemption
 * off, also on PREEMPT_RT, so that getters spinning on the slot always
 * wait for a running CPU.  Inside: the SEAMCALL, atomics, counters and
 * tracepoints only; no spinlock_t, no local lock, no page allocation or
 * free.  pamt_transit_begin()/end() tell lockdep, whose wait-type check
 * (CONFIG_PROVE_RAW_LOCK_NESTING) then flags any sleeping-on-RT lock
 * taken inside, on every kernel.
 */
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

void pamt_forget_module_pairs(void);

/* pamt_slot.c */
void pamt_far_reset(void);
int pamt_slot_remove(atomic_t *slot, unsigned long idx, int *word,
		     struct tdx_pamt_pair *pair);
void pamt_pair_release(const struct tdx_pamt_pair *pair,
		       enum pamt_pair_dest dest);
int pamt_status_errno(u64 status);
int tdx_pamt_evict(unsigned long pfn);

/* Where the pair a get holds for an ADD came from. */
enum pamt_pair_src {
	PAMT_PAIR_NONE,
	PAMT_PAIR_POOL,		/* magazines or page allocator: back to a magazine */
	PAMT_PAIR_RES,		/* the caller's reserve: back to it */
};

enum pamt_pair_src pamt_slot_pair_get(struct tdx_pamt_pair *pair,
				      struct tdx_pamt_cache *res);
void pamt_slot_pair_put(const struct tdx_pamt_pair *pair,
			enum pamt_pair_src src, struct tdx_pamt_cache *res);

/* pamt_arena.c */
#define PAMT_ARENA_ORDER	9	/* a chunk is one 2M block */
#define PAMT_ARENA_PAGES	BIT(PAMT_ARENA_ORDER)
#define PAMT_ARENA_PAIRS	(PAMT_ARENA_PAGES / 2)

struct pamt_arena_chunk;

/**
 * struct pamt_pair_run - room for pairs, for pamt_arena_take_runs()
 * @pairs: where the pairs go
 * @n: pairs wanted; on return, pairs put there
 */
struct pamt_pair_run {
	struct tdx_pamt_pair *pairs;
	unsigned int n;
};

unsigned int pamt_arena_take_runs(struct pamt_pair_run *v, unsigned int nv,
				  struct pamt_arena_chunk **fresh);
int pamt_pair_alloc(struct tdx_pamt_pair *pair, gfp_t gfp);
unsigned int pamt_pair_alloc_bulk(struct tdx_pamt_pair *pairs, unsigned int n,
				  gfp_t gfp);
unsigned long pamt_pair_free(const struct tdx_pamt_pair *pair);
unsigned long pamt_pair_free_bulk(const struct tdx_pamt_pair *pairs,
				  unsigned int n);
void pamt_arena_init(void);
unsigned long pamt_arena_exit(void);
void pamt_arena_read_stats(u64 *vals);
void pamt_arena_note_owner(const struct tdx_pamt_pair *pair, long idx);
unsigned long pamt_arena_shrink(unsigned long nr, bool cap);
unsigned long pamt_arena_reclaimable(bool all);
unsigned long pamt_arena_loose(void);
unsigned long pamt_arena_free_pairs(void);
unsigned int pamt_arena_take_home(struct tdx_pamt_pair *pairs, unsigned int n,
				  gfp_t gfp);
unsigned long pamt_arena_unhome(bool all);
#if IS_ENABLED(CONFIG_KUNIT)
struct page *pamt_arena_alloc_pages(gfp_t gfp, unsigned int order);
#endif
#if IS_ENABLED(CONFIG_INTEL_TDX_PAMT_KUNIT_TEST)
unsigned long pamt_arena_check(void);	/* tests/pamt_arena_check.c */
#endif

/* pamt_mag.c */
int __tdx_topup_pamt_cache(struct tdx_pamt_cache *cache, unsigned int nr,
			   gfp_t gfp);

int pamt_mag_init(void);
void pamt_mag_exit(void);
bool pamt_mag_pop(struct tdx_pamt_pair *pair);
void pamt_mag_push(const struct tdx_pamt_pair *pair);
unsigned int pamt_mag_refill(struct tdx_pamt_pair *pairs, unsigned int n,
			     struct pamt_arena_chunk **fresh);
void pamt_mag_drain_local(atomic_long_t *budget);
void pamt_mag_drain_dead(unsigned int cpu);
unsigned long pamt_depot_pairs(void);
unsigned long pamt_depot_shrink(unsigned long nr);
unsigned long pamt_mag_shrink_local(unsigned long nr);
unsigned int pamt_mag_take_free(struct tdx_pamt_pair *batch, unsigned int n);
void pamt_depot_free_empty(void);
#ifdef CONFIG_MEMCG
void pamt_pair_charge(const struct tdx_pamt_pair *pair,
		      struct tdx_pamt_cache *res);
void pamt_pair_uncharge(const struct tdx_pamt_pair *pair);
#else
static inline void pamt_pair_charge(const struct tdx_pamt_pair *pair,
				    struct tdx_pamt_cache *res) { }
static inline void pamt_pair_uncharge(const struct tdx_pamt_pair *pair) { }
#endif

/* pamt_shrink.c */
unsigned long tdx_pamt_shrink_count(void);
unsigned long tdx_pamt_shrink_scan(unsigned long nr_to_scan,
				   unsigned long *nr_scanned);
unsigned long tdx_pamt_drain(void);
void tdx_pamt_drain_cpu(unsigned int cpu);
void tdx_pamt_set_idle_cap(unsigned long cap);
unsigned long tdx_pamt_idle_cap(void);
int pamt_shrink_init(unsigned long nr_slots);
void pamt_shrink_exit(void);
bool pamt_shrink_idle_inc(unsigned long idx);
bool pamt_shrink_over_cap(unsigned long more);
unsigned long pamt_shrink_refill_share(void);
unsigned long pamt_shrink_reserve(unsigned long want);
void pamt_shrink_unreserve(unsigned long nr);
void pamt_shrink_flush_cpu(unsigned int cpu);
unsigned long pamt_shrink_remove_all_idle(void);
void pamt_shrink_deferred(void);
int pamt_shrink_reclaim_slot(unsigned long idx);
struct shrinker;
struct shrink_control;
unsigned long pamt_shrink_count_objects(struct shrinker *s,
					struct shrink_control *sc);
unsigned long pamt_shrink_scan_objects(struct shrinker *s,
				       struct shrink_control *sc);

/*
 * The CLOCK reference bit for slot @idx going IDLE: PAMT_SLOT_RECENT if
 * its entry is still in the idle index, which means a get revived it since
 * it was queued; 0 for a slot this put queues afresh.  Read before the
 * put publishes IDLE; a race with reclaim costs at most one extra look.
 */
static inline int pamt_shrink_recent(unsigned long idx)
{
	return test_bit(idx, pamt.idle_index.queued) ? PAMT_SLOT_RECENT : 0;
}

/* pamt_glue.c: in the kernel; the harness's shims in userspace */

/*
 * Frees up to @nr pairs from the magazines of the online CPUs: calls
 * pamt_mag_drain_local() on each, in process context on that CPU, and
 * waits for all of them.  Allocates nothing; may sleep.  Returns the
 * pairs freed.
 */
unsigned long pamt_platform_drain_cpus(unsigned long nr);

/*
 * Platform glue: have pamt_shrink_deferred() run soon in process context
 * (a work item in the kernel); callable in any context but hardirq, and
 * outside a transition.  pamt_platform_defer_lazy() has it run within
 * PAMT_DEFER_LAZY_MS instead, once however often it is called meanwhile.
 * pamt_platform_defer_sync() waits for it and cancels what is pending;
 * process context, may sleep.
 */
#define PAMT_DEFER_LAZY_MS	1000
void pamt_platform_defer(void);
void pamt_platform_defer_lazy(void);
void pamt_platform_defer_sync(void);

#endif /* _X86_VIRT_TDX_PAMT_INTERNAL_H */
