/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in: no modules, so nothing to export. */
#define EXPORT_SYMBOL_FOR_KVM(sym)
