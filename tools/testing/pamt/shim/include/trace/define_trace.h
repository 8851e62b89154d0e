/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for <trace/define_trace.h>: the harness never creates
 * tracepoints, so there is nothing to instantiate.
 */
