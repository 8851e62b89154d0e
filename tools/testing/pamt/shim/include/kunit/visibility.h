/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: no KUnit in the harness. */
#ifndef _SHIM_KUNIT_VISIBILITY_H
#define _SHIM_KUNIT_VISIBILITY_H
#define VISIBLE_IF_KUNIT static
#endif
