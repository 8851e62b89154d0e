/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel annotations that mean nothing in userspace. */
#ifndef _PAMT_SHIM_STUBS_H
#define _PAMT_SHIM_STUBS_H

#define __percpu
#define __rcu
#define __init
#define __exit
#define __must_check
#define noinline		__attribute__((noinline))
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
/* Nothing here frees memory under a reader: RCU is a no-op. */
#define rcu_read_lock()		do { } while (0)
#define rcu_read_unlock()	do { } while (0)

#endif /* _PAMT_SHIM_STUBS_H */
