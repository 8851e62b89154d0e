/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for <linux/tracepoint.h>: every event declared with
 * TRACE_EVENT() or DEFINE_EVENT() becomes an empty trace_<name>() that
 * still type-checks its arguments.
 */
#ifndef _PAMT_SHIM_TRACEPOINT_H
#define _PAMT_SHIM_TRACEPOINT_H

#include "../../shim.h"

#define PARAMS(args...)		args
#define TP_PROTO(args...)	args
#define TP_ARGS(args...)	args
#define TP_CONDITION(args...)	args

#define TRACE_EVENT(name, proto, args, tstruct, assign, print)	\
	static inline void trace_##name(proto) { }		\
	static inline bool trace_##name##_enabled(void) { return false; }
#define DECLARE_EVENT_CLASS(name, proto, args, tstruct, assign, print)
#define DEFINE_EVENT(template, name, proto, args)		\
	static inline void trace_##name(proto) { }		\
	static inline bool trace_##name##_enabled(void) { return false; }
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print) \
	TRACE_EVENT(name, PARAMS(proto), PARAMS(args), tstruct, assign, print)

#endif /* _PAMT_SHIM_TRACEPOINT_H */
