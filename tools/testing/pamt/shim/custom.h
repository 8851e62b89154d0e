/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shims that behave like the kernel as far as a test can tell,
 * and check what the kernel's debug options would check:
 *
 * - per-CPU data: one copy per simulated CPU; a thread picks its CPU with
 *   pamt_sim_set_cpu().  Two threads on one CPU model a task and the
 *   softirq that interrupts it: a magazine's spinlock keeps them apart as
 *   disabling interrupts would.
 * - locks: real spinning locks with a rank; taking a lock whose rank is not
 *   above every lock held aborts (lockdep's order check, simplified).
 * - atomic context: spinlocks and preempt_disable() raise a
 *   per-thread depth; might_sleep() with a non-zero depth aborts
 *   (DEBUG_ATOMIC_SLEEP).
 * - PREEMPT_RT: preempt_disable(), local_irq_save() and raw spinlocks
 *   also raise a "raw" depth: sections that stay atomic on RT.  Taking a
 *   spinlock_t, allocating or freeing memory, or
 *   get_random_u32() (a local lock in the kernel) with a
 *   non-zero raw depth aborts, as RT would sleep there (lockdep's
 *   PROVE_RAW_LOCK_NESTING and RT's own sleep check).
 * - interrupts: local_irq_save(), *_irqsave() locks raise an IRQ-off
 *   depth.  A SEAMCALL (pamt_sim_seamcall_enter(), from the harness's
 *   backend) with IRQs on, a second SEAMCALL in one IRQ-off section, and a
 *   delay or a cpu_relax() spin with IRQs off outside a SEAMCALL abort.
 * - memory: simulated physical pages with pfns, and kmalloc, both able to
 *   fail on demand.
 */
#ifndef _PAMT_SHIM_CUSTOM_H
#define _PAMT_SHIM_CUSTOM_H

#include <stdio.h>
#include <stdlib.h>

/*
 * Virtual time (tools/testing/pamt/vt, -DPAMT_VTIME): every shared access
 * below first calls pamt_sim_access(), a scheduling point that charges
 * the access's modelled cost.  Nothing in the other builds.
 */
#ifdef PAMT_VTIME
#include "../vt/vt.h"
#define pamt_sim_access(p, kind)	vt_access((p), (kind))
#define pamt_sim_cas_done(p, ok)	vt_cas_done((p), (ok))
#else
#define VT_LD	0
#define VT_ST	0
#define VT_RMW	0
#define VT_CAS	0
#define pamt_sim_access(p, kind)	((void)0)
#define pamt_sim_cas_done(p, ok)	((void)(ok))
#endif

/* ---- per-thread simulation state ---- */
#ifndef PAMT_SIM_MAX_CPUS
#define PAMT_SIM_MAX_CPUS	64
#endif
#define PAMT_SIM_PCPU_UNIT	4096

extern unsigned int nr_cpu_ids;
#define num_online_cpus()	nr_cpu_ids
extern __thread unsigned int pamt_sim_cpu;
extern __thread unsigned long pamt_sim_pcpu_off;	/* cpu * unit */
extern __thread int pamt_sim_atomic_depth;
extern __thread int pamt_sim_raw_depth;
extern __thread int pamt_sim_irq_depth;
extern __thread int pamt_sim_irqoff_seamcalls;
extern __thread int pamt_sim_in_seamcall;
/* The thread plays a softirq (in_serving_softirq()). */
extern __thread int pamt_sim_softirq;

void pamt_sim_set_cpu(unsigned int cpu);

/*
 * The running task, for its mm only: NULL (a kernel thread) unless a test
 * or the bench sets one per simulated process.
 */
struct mm_struct;
struct task_struct {
	struct mm_struct *mm;
};

extern __thread struct task_struct pamt_sim_task;
#define current	(&pamt_sim_task)
void pamt_sim_fatal(const char *what, const char *file, int line)
	__attribute__((noreturn));

/* ---- atomics, kernel memory-ordering semantics ---- */
typedef struct { int counter; } atomic_t;
typedef struct { long counter; } atomic_long_t;
typedef struct { s64 counter; } atomic64_t;

#define PAMT_SIM_ATOMIC_OPS(pfx, type_t, T)				\
static inline T pfx##_read(const type_t *v)				\
{ pamt_sim_access(&v->counter, VT_LD);					\
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED); }	\
static inline T pfx##_read_acquire(const type_t *v)			\
{ pamt_sim_access(&v->counter, VT_LD);					\
	return __atomic_load_n(&v->counter, __ATOMIC_ACQUIRE); }	\
static inline void pfx##_set(type_t *v, T i)				\
{ pamt_sim_access(&v->counter, VT_ST);					\
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED); }		\
static inline void pfx##_set_release(type_t *v, T i)			\
{ pamt_sim_access(&v->counter, VT_ST);					\
	__atomic_store_n(&v->counter, i, __ATOMIC_RELEASE); }		\
static inline void pfx##_add(T i, type_t *v)				\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED); }		\
static inline void pfx##_inc(type_t *v)					\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	__atomic_fetch_add(&v->counter, 1, __ATOMIC_RELAXED); }		\
static inline void pfx##_dec(type_t *v)					\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	__atomic_fetch_sub(&v->counter, 1, __ATOMIC_RELAXED); }		\
static inline T pfx##_inc_return(type_t *v)				\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	return __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); }	\
static inline T pfx##_dec_return(type_t *v)				\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	return __atomic_sub_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); }	\
static inline T pfx##_dec_return_release(type_t *v)			\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	return __atomic_sub_fetch(&v->counter, 1, __ATOMIC_RELEASE); }	\
static inline T pfx##_xchg(type_t *v, T i)				\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	return __atomic_exchange_n(&v->counter, i, __ATOMIC_SEQ_CST); }	\
static inline void pfx##_or(T i, type_t *v)				\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	__atomic_fetch_or(&v->counter, i, __ATOMIC_RELAXED); }		\
static inline void pfx##_andnot(T i, type_t *v)				\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	__atomic_fetch_and(&v->counter, ~i, __ATOMIC_RELAXED); }	\
static inline T pfx##_fetch_add(T i, type_t *v)				\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	return __atomic_fetch_add(&v->counter, i, __ATOMIC_SEQ_CST); }	\
static inline T pfx##_add_return_release(T i, type_t *v)		\
{ pamt_sim_access(&v->counter, VT_RMW);					\
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_RELEASE); }	\
static inline T pfx##_cmpxchg(type_t *v, T o, T n)			\
{									\
	bool __ok;							\
									\
	pamt_sim_access(&v->counter, VT_CAS);				\
	__ok = __atomic_compare_exchange_n(&v->counter, &o, n, false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);\
	pamt_sim_cas_done(&v->counter, __ok);				\
	return o;							\
}									\
static inline bool pfx##_add_unless(type_t *v, T a, T u)			\
{									\
	T c;								\
									\
	/* As the kernel's: a read, then a cmpxchg (one, in one CPU's turn). */\
	pamt_sim_access(&v->counter, VT_LD);				\
	pamt_sim_access(&v->counter, VT_CAS);				\
	c = __atomic_load_n(&v->counter, __ATOMIC_RELAXED);		\
	do {								\
		if (c == u) {						\
			pamt_sim_cas_done(&v->counter, false);		\
			return false;					\
		}							\
	} while (!__atomic_compare_exchange_n(&v->counter, &c, c + a,	\
			false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));	\
	pamt_sim_cas_done(&v->counter, true);				\
	return true;							\
}

PAMT_SIM_ATOMIC_OPS(atomic, atomic_t, int)
PAMT_SIM_ATOMIC_OPS(atomic_long, atomic_long_t, long)
PAMT_SIM_ATOMIC_OPS(atomic64, atomic64_t, s64)

/* try_cmpxchg takes any pointer to a same-sized old value, as in-kernel. */
#define __pamt_try_cmpxchg(v, oldp, n, succ, fail)			\
	({								\
		bool __ok;						\
									\
		pamt_sim_access(&(v)->counter, VT_CAS);			\
		__ok = __atomic_compare_exchange_n(&(v)->counter,	\
			(typeof(&(v)->counter))(oldp),			\
			(typeof((v)->counter))(n), false, succ, fail);	\
		pamt_sim_cas_done(&(v)->counter, __ok);			\
		__ok;							\
	})
#define atomic_long_try_cmpxchg(v, o, n) \
	__pamt_try_cmpxchg(v, o, n, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)
#define atomic_long_try_cmpxchg_acquire(v, o, n) \
	__pamt_try_cmpxchg(v, o, n, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
#define atomic_long_try_cmpxchg_release(v, o, n) \
	__pamt_try_cmpxchg(v, o, n, __ATOMIC_RELEASE, __ATOMIC_RELAXED)
#define atomic_long_try_cmpxchg_relaxed(v, o, n) \
	__pamt_try_cmpxchg(v, o, n, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define atomic_try_cmpxchg(v, o, n) \
	__pamt_try_cmpxchg(v, o, n, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)
#define atomic_try_cmpxchg_acquire(v, o, n) \
	__pamt_try_cmpxchg(v, o, n, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
#define atomic_try_cmpxchg_release(v, o, n) \
	__pamt_try_cmpxchg(v, o, n, __ATOMIC_RELEASE, __ATOMIC_RELAXED)

#define READ_ONCE(x)							\
	({ pamt_sim_access(&(x), VT_LD);				\
	   __atomic_load_n(&(x), __ATOMIC_RELAXED); })
#define WRITE_ONCE(x, v)						\
	({ pamt_sim_access(&(x), VT_ST);				\
	   __atomic_store_n(&(x), (v), __ATOMIC_RELAXED); })
#define smp_load_acquire(p)						\
	({ pamt_sim_access(p, VT_LD); __atomic_load_n(p, __ATOMIC_ACQUIRE); })
#define smp_store_release(p, v)						\
	({ pamt_sim_access(p, VT_ST); __atomic_store_n(p, v, __ATOMIC_RELEASE); })
/*
 * A full barrier as a seq_cst read-modify-write of one shared word: every
 * smp_mb() is ordered with every other, and ThreadSanitizer (which has no
 * fences) understands it.
 */
extern long pamt_sim_mb_word;
#ifdef PAMT_VTIME
/* A fence costs time; it is not an access to a shared word. */
#define smp_mb()	vt_fence()
#else
#define smp_mb()	((void)__atomic_fetch_add(&pamt_sim_mb_word, 0, __ATOMIC_SEQ_CST))
#endif
#define smp_mb__after_atomic()	smp_mb()

/* ---- bit operations on unsigned long arrays, atomic like the kernel's ---- */
#define __PAMT_BIT_WORD(nr, addr) (&((unsigned long *)(addr))[(nr) / BITS_PER_LONG])
#define __PAMT_BIT_MASK(nr)	(1UL << ((nr) % BITS_PER_LONG))
static inline void set_bit(unsigned long nr, volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_RMW);
	__atomic_fetch_or(__PAMT_BIT_WORD(nr, addr), __PAMT_BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline void clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_RMW);
	__atomic_fetch_and(__PAMT_BIT_WORD(nr, addr), ~__PAMT_BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline void change_bit(unsigned long nr, volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_RMW);
	__atomic_fetch_xor(__PAMT_BIT_WORD(nr, addr), __PAMT_BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline bool test_bit(unsigned long nr, const volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_LD);
	return __atomic_load_n(__PAMT_BIT_WORD(nr, addr), __ATOMIC_RELAXED) & __PAMT_BIT_MASK(nr);
}

static inline bool test_and_set_bit(unsigned long nr, volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_RMW);
	return __atomic_fetch_or(__PAMT_BIT_WORD(nr, addr), __PAMT_BIT_MASK(nr),
				__ATOMIC_SEQ_CST) & __PAMT_BIT_MASK(nr);
}

static inline bool test_and_clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_RMW);
	return __atomic_fetch_and(__PAMT_BIT_WORD(nr, addr), ~__PAMT_BIT_MASK(nr),
				__ATOMIC_SEQ_CST) & __PAMT_BIT_MASK(nr);
}

static inline bool test_and_set_bit_lock(unsigned long nr, volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_RMW);
	return __atomic_fetch_or(__PAMT_BIT_WORD(nr, addr), __PAMT_BIT_MASK(nr),
				__ATOMIC_ACQUIRE) & __PAMT_BIT_MASK(nr);
}

static inline void clear_bit_unlock(unsigned long nr, volatile unsigned long *addr)
{
	pamt_sim_access(__PAMT_BIT_WORD(nr, addr), VT_RMW);
	__atomic_fetch_and(__PAMT_BIT_WORD(nr, addr), ~__PAMT_BIT_MASK(nr), __ATOMIC_RELEASE);
}

/* ---- atomic context and sleeping ---- */
#define pamt_sim_enter_atomic()	(pamt_sim_atomic_depth++)
#define pamt_sim_exit_atomic()						\
	do {								\
		if (--pamt_sim_atomic_depth < 0)			\
			pamt_sim_fatal("atomic depth underflow",	\
				       __FILE__, __LINE__);		\
	} while (0)
/*
 * Sections that are atomic on PREEMPT_RT too (preemption or IRQs off, raw
 * spinlocks), timed as IRQs-off ones are when a test asks
 * (pamt_sim_preemptoff_timing), from the outermost entry to the exit.
 */
extern int pamt_sim_preemptoff_timing;
void pamt_sim_preemptoff_begin(void);
void pamt_sim_preemptoff_end(void);
#define pamt_sim_enter_raw()						\
	do {								\
		pamt_sim_enter_atomic();				\
		if (!pamt_sim_raw_depth++ &&				\
		    __atomic_load_n(&pamt_sim_preemptoff_timing, __ATOMIC_RELAXED)) \
			pamt_sim_preemptoff_begin();			\
	} while (0)
#define pamt_sim_exit_raw()						\
	do {								\
		if (--pamt_sim_raw_depth < 0)				\
			pamt_sim_fatal("raw depth underflow",		\
				       __FILE__, __LINE__);		\
		if (!pamt_sim_raw_depth &&				\
		    __atomic_load_n(&pamt_sim_preemptoff_timing, __ATOMIC_RELAXED)) \
			pamt_sim_preemptoff_end();			\
		pamt_sim_exit_atomic();					\
	} while (0)
/*
 * IRQs-off spans, timed when a test asks (pamt_sim_irqoff_timing): each
 * section from the outermost disable to the matching enable, and the part
 * of it spent inside the one SEAMCALL it may contain, in thread CPU time
 * so that a host preempting the test thread does not count.
 */
extern int pamt_sim_irqoff_timing;
void pamt_sim_irqoff_begin(void);
void pamt_sim_irqoff_end(void);

/* A new IRQ-off section has issued no SEAMCALL yet. */
#define pamt_sim_irq_off()						\
	do {								\
		if (!pamt_sim_irq_depth++) {				\
			pamt_sim_irqoff_seamcalls = 0;			\
			if (__atomic_load_n(&pamt_sim_irqoff_timing, __ATOMIC_RELAXED)) \
				pamt_sim_irqoff_begin();		\
		}							\
	} while (0)
#define pamt_sim_irq_on()						\
	do {								\
		if (--pamt_sim_irq_depth < 0)				\
			pamt_sim_fatal("IRQ depth underflow",		\
				       __FILE__, __LINE__);		\
		if (!pamt_sim_irq_depth &&				\
		    __atomic_load_n(&pamt_sim_irqoff_timing, __ATOMIC_RELAXED)) \
			pamt_sim_irqoff_end();				\
	} while (0)
/* What sleeps on PREEMPT_RT (spinlock_t, the allocators). */
#define pamt_sim_rt_sleeps(what, file, line)				\
	do {								\
		if (pamt_sim_raw_depth)					\
			/* raw: preemption or IRQs off, or a raw lock */	\
			pamt_sim_fatal("PREEMPT_RT: " what " in a raw atomic section", \
				       file, line);			\
	} while (0)
/* Work the core handed to its worker (pamt_platform_defer()), not yet run. */
extern atomic_long_t pamt_sim_deferred;
void pamt_sim_seamcall_enter(void);
void pamt_sim_seamcall_exit(void);

#define preempt_disable()	pamt_sim_enter_raw()
#define preempt_enable()	pamt_sim_exit_raw()
#define migrate_disable()	do { } while (0)
#define migrate_enable()	do { } while (0)
#define local_irq_save(f)	do { (f) = 0; pamt_sim_enter_raw(); pamt_sim_irq_off(); } while (0)
#define local_irq_restore(f)	do { (void)(f); pamt_sim_irq_on(); pamt_sim_exit_raw(); } while (0)
#define irqs_disabled()		(pamt_sim_irq_depth > 0)
#define might_sleep()							\
	do {								\
		if (pamt_sim_atomic_depth)				\
			pamt_sim_fatal("sleeping function called from invalid context", \
				       __FILE__, __LINE__);		\
	} while (0)
#define cond_resched()		might_sleep()
#define might_alloc(gfp)						\
	do {								\
		if (gfpflags_allow_blocking(gfp))			\
			might_sleep();					\
	} while (0)
#define lockdep_assert_preemption_disabled()				\
	do {								\
		if (!pamt_sim_atomic_depth)				\
			pamt_sim_fatal("preemption enabled", __FILE__, __LINE__); \
	} while (0)
void pamt_sim_cpu_relax(const char *file, int line);
/* Spinning: never with IRQs off (waiters wait with IRQs on). */
#define cpu_relax()		pamt_sim_cpu_relax(__FILE__, __LINE__)

/* ---- locks ---- */
enum pamt_sim_rank {
	PAMT_SIM_RANK_OUTER = 1,	/* a caller's lock, e.g. mmu_lock */
	PAMT_SIM_RANK_SPIN = 3,		/* spinlock_t: magazines', list_lru's */
	PAMT_SIM_RANK_RAW = 4,		/* raw_spinlock_t: the BUSY fallback */
};

struct pamt_sim_lock {
	int locked;
	int rank;
	unsigned long owner;
	const char *name;
};

void pamt_sim_lock_init(struct pamt_sim_lock *l, int rank, const char *name);
void pamt_sim_lock_acquire(struct pamt_sim_lock *l, const char *file, int line);
void pamt_sim_lock_release(struct pamt_sim_lock *l, const char *file, int line);
bool pamt_sim_lock_held(struct pamt_sim_lock *l);
bool pamt_sim_lock_try(struct pamt_sim_lock *l, const char *file, int line);
bool pamt_sim_lock_is_locked(struct pamt_sim_lock *l);

typedef struct { struct pamt_sim_lock l; } spinlock_t;
typedef struct { struct pamt_sim_lock l; } raw_spinlock_t;

/* spinlock_t: a sleeping lock on PREEMPT_RT, IRQs off on others. */
#define spin_lock_init(s)	pamt_sim_lock_init(&(s)->l, PAMT_SIM_RANK_SPIN, #s)
#define spin_lock(s)							\
	do {								\
		pamt_sim_rt_sleeps("spinlock_t " #s, __FILE__, __LINE__); \
		pamt_sim_enter_atomic();				\
		pamt_sim_lock_acquire(&(s)->l, __FILE__, __LINE__);	\
	} while (0)
#define spin_unlock(s)							\
	do {								\
		pamt_sim_lock_release(&(s)->l, __FILE__, __LINE__);	\
		pamt_sim_exit_atomic();					\
	} while (0)
#define spin_lock_irqsave(s, f)						\
	do { (f) = 0; spin_lock(s); pamt_sim_irq_off(); } while (0)
#define spin_unlock_irqrestore(s, f)					\
	do { (void)(f); pamt_sim_irq_on(); spin_unlock(s); } while (0)
#define spin_unlock_irq(s)	do { pamt_sim_irq_on(); spin_unlock(s); } while (0)

/* raw_spinlock_t: atomic everywhere, PREEMPT_RT included. */
#define raw_spin_lock_init(s)	pamt_sim_lock_init(&(s)->l, PAMT_SIM_RANK_RAW, #s)
#define raw_spin_lock(s)						\
	do {								\
		pamt_sim_enter_raw();					\
		pamt_sim_lock_acquire(&(s)->l, __FILE__, __LINE__);	\
	} while (0)
#define raw_spin_trylock(s)						\
	({								\
		bool __got;						\
		pamt_sim_enter_raw();					\
		__got = pamt_sim_lock_try(&(s)->l, __FILE__, __LINE__);	\
		if (!__got)						\
			pamt_sim_exit_raw();				\
		__got;							\
	})
#define raw_spin_unlock(s)						\
	do {								\
		pamt_sim_lock_release(&(s)->l, __FILE__, __LINE__);	\
		pamt_sim_exit_raw();					\
	} while (0)
#define raw_spin_is_locked(s)	pamt_sim_lock_is_locked(&(s)->l)
#define raw_spin_lock_irqsave(s, f)					\
	do { local_irq_save(f); raw_spin_lock(s); } while (0)
#define raw_spin_unlock_irqrestore(s, f)				\
	do { raw_spin_unlock(s); local_irq_restore(f); } while (0)
#define lockdep_assert_held(s)						\
	do {								\
		if (!pamt_sim_lock_held(&(s)->l))			\
			pamt_sim_fatal("lock not held: " #s, __FILE__, __LINE__); \
	} while (0)

/* ---- per-CPU data ---- */
void *pamt_sim_alloc_percpu(size_t size);
#define alloc_percpu(type)	((type *)pamt_sim_alloc_percpu(sizeof(type)))
#define free_percpu(p)		free(p)
#define per_cpu_ptr(p, cpu)						\
	((typeof(p))((char *)(p) + (size_t)(cpu) * PAMT_SIM_PCPU_UNIT))
#define this_cpu_ptr(p)		((typeof(p))((char *)(p) + pamt_sim_pcpu_off))
#define raw_cpu_ptr(p)		this_cpu_ptr(p)
#define this_cpu_add(pcp, n)						\
	({ pamt_sim_access(this_cpu_ptr(&(pcp)), VT_ST);		\
	   (void)__atomic_fetch_add(this_cpu_ptr(&(pcp)), (n), __ATOMIC_RELAXED); })
#define this_cpu_inc(pcp)	this_cpu_add(pcp, 1)
#define this_cpu_dec(pcp)	this_cpu_add(pcp, -1)
#define this_cpu_sub(pcp, n)	this_cpu_add(pcp, -(n))
/* After the add, pamt_sim_add_return_hook runs once: an interrupt's work. */
extern void (*pamt_sim_add_return_hook)(void);
long pamt_sim_add_return(long *p, long n);
#define this_cpu_add_return(pcp, n)					\
	({ pamt_sim_access(this_cpu_ptr(&(pcp)), VT_ST);		\
	   pamt_sim_add_return((long *)this_cpu_ptr(&(pcp)), (n)); })
/* No LOCK prefix on x86: a cmpxchg loop on this CPU's own line. */
#define this_cpu_xchg(pcp, v)						\
	({ pamt_sim_access(this_cpu_ptr(&(pcp)), VT_ST);		\
	   __atomic_exchange_n(this_cpu_ptr(&(pcp)), (v), __ATOMIC_RELAXED); })
#define this_cpu_read(pcp)						\
	({ pamt_sim_access(this_cpu_ptr(&(pcp)), VT_LD);		\
	   __atomic_load_n(this_cpu_ptr(&(pcp)), __ATOMIC_RELAXED); })
#define smp_processor_id()	pamt_sim_cpu
#define raw_smp_processor_id()	pamt_sim_cpu
#define in_serving_softirq()	(pamt_sim_softirq != 0)
#define for_each_possible_cpu(cpu) \
	for ((cpu) = 0; (cpu) < nr_cpu_ids; (cpu)++)

/* ---- memory ---- */
struct obj_cgroup;

struct page {
	int allocated;
	int accounted;		/* allocated with __GFP_ACCOUNT */
	unsigned long private;
	struct obj_cgroup *objcg;	/* memcg_kmem_charge_page()'s */
	/* The allocating task's objcg: what __GFP_ACCOUNT would charge. */
	const void *alloc_objcg;
};

#define page_private(p)		((p)->private)
#define set_page_private(p, v)	((p)->private = (v))

extern struct page *pamt_sim_pages;
extern unsigned long pamt_sim_base_pfn;
extern unsigned long pamt_sim_nr_pages;

#define page_to_pfn(p)		(pamt_sim_base_pfn + (unsigned long)((p) - pamt_sim_pages))
#define pfn_to_page(pfn)	(&pamt_sim_pages[(pfn) - pamt_sim_base_pfn])
#define pfn_valid(pfn)		((unsigned long)(pfn) - pamt_sim_base_pfn < pamt_sim_nr_pages)

/*
 * The page allocator (sim.c): a buddy allocator of orders 0 to
 * PAMT_SIM_MAX_ORDER (2M), LIFO free lists.
 */
#define PAMT_SIM_MAX_ORDER	9
#define PAMT_SIM_NR_MT		3	/* the migratetypes of dup.h */
int pamt_sim_page_mt(const struct page *page);
struct page *pamt_sim_alloc_page(gfp_t gfp, const char *file, int line);
struct page *pamt_sim_alloc_pages(gfp_t gfp, unsigned int order,
				  const char *file, int line);
void pamt_sim_free_page(struct page *page, const char *file, int line);
void pamt_sim_free_pages(struct page *page, unsigned int order,
			 const char *file, int line);
void pamt_sim_split_page(struct page *page, unsigned int order,
			 const char *file, int line);
#define alloc_page(gfp)		pamt_sim_alloc_page(gfp, __FILE__, __LINE__)
#define alloc_pages(gfp, order)	pamt_sim_alloc_pages(gfp, order, __FILE__, __LINE__)
#define __free_page(p)		pamt_sim_free_page(p, __FILE__, __LINE__)
#define __free_pages(p, order)	pamt_sim_free_pages(p, order, __FILE__, __LINE__)
#define split_page(p, order)	pamt_sim_split_page(p, order, __FILE__, __LINE__)
#define nth_page(p, n)		((p) + (n))
/* No task here is in reclaim: nothing to credit pages to. */
static inline void mm_account_reclaimed_pages(unsigned long pages) { }

/*
 * Node statistics (vmstat.h), per simulated node (list_lru.h: node 1 from
 * pamt_sim_node1_pfn on) and, as the kernel's per-CPU diffs are, per
 * simulated CPU, each on its own cache line: no line shared between CPUs,
 * and not charged in virtual time.  pamt_sim_node_stat() sums the CPUs.
 * A node's "pgdat" is its number.
 */
#define PAMT_SIM_MAX_NODES	2
enum node_stat_item { NR_KERNEL_MISC_RECLAIMABLE, PAMT_SIM_NR_NODE_STAT };
struct pamt_sim_node_stats {
	long v[PAMT_SIM_MAX_NODES][PAMT_SIM_NR_NODE_STAT];
} __attribute__((aligned(64)));
extern struct pamt_sim_node_stats pamt_sim_node_stats[PAMT_SIM_MAX_CPUS];
long pamt_sim_node_stat(int nid, enum node_stat_item item);
#define NODE_DATA(nid)		(nid)
#define mod_node_page_state(pgdat, item, n)				\
	__atomic_fetch_add(&pamt_sim_node_stats[pamt_sim_cpu].v[pgdat][item], \
			   n, __ATOMIC_RELAXED)

void *pamt_sim_kmalloc(size_t size, gfp_t gfp, bool zero);
#define kmalloc(size, gfp)	pamt_sim_kmalloc(size, gfp, false)
#define kzalloc(size, gfp)	pamt_sim_kmalloc(size, gfp, true)
#define kvcalloc(n, size, gfp)	pamt_sim_kmalloc((n) * (size), gfp, true)
#define kmalloc_array(n, size, gfp)	pamt_sim_kmalloc((n) * (size), gfp, false)
#define kfree(p)							\
	do {								\
		pamt_sim_rt_sleeps("kfree()", __FILE__, __LINE__);	\
		free(p);						\
	} while (0)
#define kvfree(p)		kfree(p)

/*
 * ---- memcg: the objcg API, a byte counter per cgroup ----
 * A test makes a cgroup and sets pamt_sim_objcg, the current task's.
 * Charging may reclaim (it sleeps with a blocking gfp); charging and
 * uncharging take the per-CPU stock's local lock, which sleeps on RT.
 */
/*
 * A memcg: one per obj_cgroup, numbered when first named (its private id);
 * every memcg a test names must outlive the process (static).
 */
struct mem_cgroup {
	unsigned short id;	/* 0 until named */
};

struct obj_cgroup {
	atomic_long_t charged;	/* bytes */
	atomic_long_t total;	/* bytes ever charged */
	atomic_long_t refs;	/* obj_cgroup_get() not yet put */
	long limit;		/* charges past it fail; 0: none */
	bool root;		/* the root memcg: never charged */
	struct mem_cgroup memcg;
};

extern __thread struct obj_cgroup *pamt_sim_objcg;

#define memcg_kmem_online()	true
#define current_obj_cgroup()	pamt_sim_objcg

static inline bool obj_cgroup_is_root(const struct obj_cgroup *objcg)
{
	return objcg->root;
}

static inline void obj_cgroup_get(struct obj_cgroup *objcg)
{
	atomic_long_inc(&objcg->refs);
}

#define obj_cgroup_put(objcg)						\
	do {								\
		if (atomic_long_dec_return(&(objcg)->refs) < 0)		\
			pamt_sim_fatal("obj_cgroup_put() without a reference", \
				       __FILE__, __LINE__);		\
	} while (0)

#define obj_cgroup_charge(objcg, gfp, size)				\
	({								\
		struct obj_cgroup *__o = (objcg);			\
		long __n = (size);					\
		int __ret = 0;						\
									\
		might_alloc(gfp);					\
		pamt_sim_rt_sleeps("memcg charge", __FILE__, __LINE__);	\
		if (__o->root)						\
			pamt_sim_fatal("charge of the root memcg",	\
				       __FILE__, __LINE__);		\
		if (__o->limit &&					\
		    atomic_long_read(&__o->charged) + __n > __o->limit)	\
			__ret = -ENOMEM;				\
		else {							\
			atomic_long_add(__n, &__o->charged);		\
			atomic_long_add(__n, &__o->total);		\
		}							\
		__ret;							\
	})

#define obj_cgroup_uncharge(objcg, size)				\
	do {								\
		pamt_sim_rt_sleeps("memcg uncharge", __FILE__, __LINE__); \
		atomic_long_add(-(long)(size), &(objcg)->charged);	\
		if (atomic_long_read(&(objcg)->charged) < 0)		\
			pamt_sim_fatal("memcg uncharged below zero",	\
				       __FILE__, __LINE__);		\
	} while (0)

/*
 * Pages charged as kmem: the objcg in the page, a reference held, as
 * page->memcg_data.  An uncharge takes no lock that sleeps on RT: the
 * kernel's falls back to the page counter when the stock is busy.
 */
static inline int memcg_kmem_charge_page(struct page *page, gfp_t gfp,
					 int order)
{
	struct obj_cgroup *objcg = current_obj_cgroup();

	if (!objcg || objcg->root)
		return 0;
	if (page->objcg)
		pamt_sim_fatal("page charged twice", __FILE__, __LINE__);
	if (obj_cgroup_charge(objcg, gfp, PAGE_SIZE << order))
		return -ENOMEM;
	obj_cgroup_get(objcg);
	page->objcg = objcg;
	return 0;
}

static inline void memcg_kmem_uncharge_page(struct page *page, int order)
{
	struct obj_cgroup *objcg = page->objcg;

	if (!objcg)
		return;
	page->objcg = NULL;
	if (atomic_long_fetch_add(-(long)(PAGE_SIZE << order), &objcg->charged) <
	    (long)(PAGE_SIZE << order))
		pamt_sim_fatal("memcg uncharged below zero", __FILE__, __LINE__);
	obj_cgroup_put(objcg);
}

#define page_folio(page)	(page)
#define page_memcg_check(page)	((page)->objcg ? &(page)->objcg->memcg : NULL)
#define PageMemcgKmem(page)	(!!(page)->objcg)

/* ---- time ---- */
u64 ktime_get_ns(void);
void ndelay(unsigned long ns);
#define udelay(us)		ndelay((us) * 1000UL)

/* ---- randomness ---- */
u32 get_random_u32(void);
static inline u32 get_random_u32_below(u32 ceil)
{
	return (u32)(((u64)get_random_u32() * ceil) >> 32);
}

/* ---- printing and warnings ---- */
extern int pamt_sim_quiet;
extern atomic_long_t pamt_sim_warnings;

#define pr_err(fmt, ...)	fprintf(stderr, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)						\
	do { if (!pamt_sim_quiet) fprintf(stderr, fmt, ##__VA_ARGS__); } while (0)
#define pr_info(fmt, ...)	pr_warn(fmt, ##__VA_ARGS__)
#define pr_warn_once(fmt, ...)						\
	({								\
		static bool __pamt_once;				\
		if (!__atomic_exchange_n(&__pamt_once, true, __ATOMIC_RELAXED)) \
			pr_warn(fmt, ##__VA_ARGS__);			\
	})

/* Every WARN counts, so tests can see it; only the first prints. */
#define WARN(cond, fmt, ...)						\
	({								\
		bool __c = !!(cond);					\
		if (__c) {						\
			atomic_long_inc(&pamt_sim_warnings);		\
			pr_warn("WARNING: %s:%d: " fmt, __FILE__, __LINE__, \
				##__VA_ARGS__);				\
		}							\
		__c;							\
	})
#define WARN_ONCE(cond, fmt, ...)					\
	({								\
		static bool __pamt_warned;				\
		bool __c = !!(cond);					\
		if (__c) {						\
			atomic_long_inc(&pamt_sim_warnings);		\
			if (!__atomic_exchange_n(&__pamt_warned, true,	\
						 __ATOMIC_RELAXED))	\
				pr_warn("WARNING: %s:%d: " fmt, __FILE__, \
					__LINE__, ##__VA_ARGS__);	\
		}							\
		__c;							\
	})
#define WARN_ON(cond)		WARN(cond, "%s\n", #cond)
#define WARN_ON_ONCE(cond)	WARN_ONCE(cond, "%s\n", #cond)
#define BUG_ON(cond)							\
	do {								\
		if (cond)						\
			pamt_sim_fatal("BUG_ON(" #cond ")", __FILE__, __LINE__); \
	} while (0)

#endif /* _PAMT_SHIM_CUSTOM_H */
