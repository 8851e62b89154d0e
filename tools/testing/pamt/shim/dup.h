/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel definitions restated for userspace.  Their meaning must match the
 * kernel's; the implementations are our own.
 */
#ifndef _PAMT_SHIM_DUP_H
#define _PAMT_SHIM_DUP_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int gfp_t;

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)

#define BITS_PER_LONG		64
#define SMP_CACHE_BYTES		64
#define ____cacheline_aligned_in_smp	__attribute__((__aligned__(SMP_CACHE_BYTES)))
#define BIT(n)			(1UL << (n))
#define BIT_ULL(n)		(1ULL << (n))
#define GENMASK(h, l)		((~0UL >> (BITS_PER_LONG - 1 - (h))) & (~0UL << (l)))
#define BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_USEC		1000L
#define NSEC_PER_MSEC		1000000L
#define NSEC_PER_SEC		1000000000L

#define min(a, b)	({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)	({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })
#define max_t(type, a, b)	max((type)(a), (type)(b))
#define min3(a, b, c)	min(min(a, b), c)
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define swap(a, b)	do { typeof(a) _t = (a); (a) = (b); (b) = _t; } while (0)

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define struct_size(p, member, n) \
	(sizeof(*(p)) + sizeof((p)->member[0]) * (size_t)(n))

/* Doubly linked lists, same semantics as <linux/list.h>. */
struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)	{ &(name), &(name) }
#define LIST_HEAD(name)		struct list_head name = LIST_HEAD_INIT(name)

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline void __pamt_list_link(struct list_head *n, struct list_head *p,
				    struct list_head *nx)
{
	nx->prev = n;
	n->next = nx;
	n->prev = p;
	p->next = n;
}

static inline void list_add(struct list_head *n, struct list_head *h)
{
	__pamt_list_link(n, h, h->next);
}

static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	__pamt_list_link(n, h->prev, h);
}

static inline void list_del_init(struct list_head *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	INIT_LIST_HEAD(e);
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void list_move(struct list_head *e, struct list_head *h)
{
	list_del_init(e);
	list_add(e, h);
}

static inline void list_move_tail(struct list_head *e, struct list_head *h)
{
	list_del_init(e);
	list_add_tail(e, h);
}

static inline void list_splice_init(struct list_head *from,
				    struct list_head *to)
{
	if (list_empty(from))
		return;
	from->next->prev = to;
	from->prev->next = to->next;
	to->next->prev = from->prev;
	to->next = from->next;
	INIT_LIST_HEAD(from);
}

#define list_entry(p, type, member)	container_of(p, type, member)
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)
#define list_first_entry_or_null(h, type, member) \
	(list_empty(h) ? NULL : list_entry((h)->next, type, member))
#define list_for_each_entry(pos, head, member)				     \
	for (pos = list_entry((head)->next, typeof(*pos), member);	     \
	     &pos->member != (head);					     \
	     pos = list_entry(pos->member.next, typeof(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member)			     \
	for (pos = list_entry((head)->next, typeof(*pos), member),	     \
	     n = list_entry(pos->member.next, typeof(*pos), member);	     \
	     &pos->member != (head);					     \
	     pos = n, n = list_entry(n->member.next, typeof(*n), member))

/* IS_ENABLED(CONFIG_X): 1 if CONFIG_X or CONFIG_X_MODULE is defined to 1. */
#define __PAMT_PLACEHOLDER_1			0,
#define __pamt_second(ignored, val, ...)	val
#define __pamt_defined(x)			___pamt_defined(x)
#define ___pamt_defined(val)	____pamt_defined(__PAMT_PLACEHOLDER_##val)
#define ____pamt_defined(junk)			__pamt_second(junk 1, 0, 0)
#define IS_ENABLED(option)						\
	(__pamt_defined(option) || __pamt_defined(option##_MODULE))

/* Bitmaps: the non-atomic operations and the searches the cache uses. */
#define DECLARE_BITMAP(name, bits)	unsigned long name[BITS_TO_LONGS(bits)]
static inline void __set_bit(unsigned long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}

static inline void __clear_bit(unsigned long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] &= ~(1UL << (nr % BITS_PER_LONG));
}

static inline unsigned long find_next_bit(const unsigned long *addr,
					  unsigned long size,
					  unsigned long offset)
{
	unsigned long w;

	while (offset < size) {
		w = addr[offset / BITS_PER_LONG] >> (offset % BITS_PER_LONG);
		if (w) {
			offset += __builtin_ctzl(w);
			return offset < size ? offset : size;
		}
		offset = (offset / BITS_PER_LONG + 1) * BITS_PER_LONG;
	}
	return size;
}

#define find_first_bit(addr, size)	find_next_bit(addr, size, 0)

/* A multiplicative hash of a pointer, in @bits bits. */
static inline u32 hash_ptr(const void *ptr, unsigned int bits)
{
	return (u32)(((u64)(uintptr_t)ptr * 0x61C8864680B583EBULL) >> (64 - bits));
}

static inline unsigned long find_next_zero_bit(const unsigned long *addr,
					       unsigned long size,
					       unsigned long offset)
{
	unsigned long w;

	while (offset < size) {
		w = ~addr[offset / BITS_PER_LONG] >> (offset % BITS_PER_LONG);
		if (w) {
			offset += __builtin_ctzl(w);
			return offset < size ? offset : size;
		}
		offset = (offset / BITS_PER_LONG + 1) * BITS_PER_LONG;
	}
	return size;
}

#define for_each_clear_bit(bit, addr, size)				\
	for ((bit) = find_next_zero_bit((addr), (size), 0);		\
	     (bit) < (size);						\
	     (bit) = find_next_zero_bit((addr), (size), (bit) + 1))

static inline unsigned long bitmap_weight(const unsigned long *src,
					  unsigned long nbits)
{
	unsigned long i, w = 0;

	for (i = 0; i < nbits; i++)
		w += (src[i / BITS_PER_LONG] >> (i % BITS_PER_LONG)) & 1;
	return w;
}

static inline void bitmap_zero(unsigned long *dst, unsigned long nbits)
{
	memset(dst, 0, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}

static inline void bitmap_fill(unsigned long *dst, unsigned long nbits)
{
	unsigned long i;

	bitmap_zero(dst, nbits);
	for (i = 0; i < nbits; i++)
		__set_bit(i, dst);
}

#define PAGE_SHIFT		12
#define PAGE_SIZE		BIT(PAGE_SHIFT)

/* Allocation flags: only what the cache looks at. */
#define __GFP_MOVABLE		0x08u
#define __GFP_RECLAIMABLE	0x10u
#define __GFP_HIGH		0x20u
#define __GFP_IO		0x40u
#define __GFP_FS		0x80u
#define __GFP_DIRECT_RECLAIM	0x400u
#define __GFP_KSWAPD_RECLAIM	0x800u
#define __GFP_NOWARN		0x2000u
#define __GFP_RETRY_MAYFAIL	0x4000u
#define __GFP_NORETRY		0x10000u
#define __GFP_COMP		0x40000u
#define __GFP_NOMEMALLOC	0x80000u
#define __GFP_ZERO		0x100u
#define __GFP_ACCOUNT		0x400000u
#define GFP_NOWAIT		(__GFP_KSWAPD_RECLAIM)
#define GFP_ATOMIC		(__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM | \
				 __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)

enum migratetype { MIGRATE_UNMOVABLE, MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE };
#define gfp_migratetype(gfp)	(((gfp) & (__GFP_MOVABLE | __GFP_RECLAIMABLE)) >> 3)

static inline bool gfpflags_allow_blocking(gfp_t gfp)
{
	return gfp & __GFP_DIRECT_RECLAIM;
}

/* The shrinker callbacks' side of include/linux/shrinker.h. */
struct mem_cgroup;
struct shrink_control {
	gfp_t gfp_mask;
	int nid;
	unsigned long nr_to_scan;	/* objects to scan */
	unsigned long nr_scanned;	/* objects processed; nr_to_scan on entry */
	struct mem_cgroup *memcg;
};

#define SHRINK_STOP	(~0UL)
#define SHRINK_EMPTY	(~0UL - 1)
#define DEFAULT_SEEKS	2

struct shrinker {
	unsigned long (*count_objects)(struct shrinker *s,
				       struct shrink_control *sc);
	unsigned long (*scan_objects)(struct shrinker *s,
				      struct shrink_control *sc);
	long batch;
	int seeks;
	unsigned int flags;
};

#define SHRINKER_REGISTERED	BIT(0)
#define SHRINKER_NUMA_AWARE	BIT(2)
#define SHRINKER_MEMCG_AWARE	BIT(3)

#endif /* _PAMT_SHIM_DUP_H */
