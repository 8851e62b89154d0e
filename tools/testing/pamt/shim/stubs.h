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

#endif /* _PAMT_SHIM_STUBS_H */
