/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: no KUnit in the harness, so no function is ever redirected. */
#ifndef _SHIM_KUNIT_STATIC_STUB_H
#define _SHIM_KUNIT_STATIC_STUB_H
#define KUNIT_STATIC_STUB_REDIRECT(...) do { } while (0)
#endif
