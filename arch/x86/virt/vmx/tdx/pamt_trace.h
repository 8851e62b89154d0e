/* SPDX-License-Identifier: GPL-2.0 */
/* TDX Dynamic PAMT cache: tracepoints on the slow events only. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tdx_pamt

#if !defined(_X86_VIRT_TDX_PAMT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _X86_VIRT_TDX_PAMT_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(tdx_pamt_seamcall,
		    TP_PROTO(unsigned long base_pfn,
			     const struct tdx_pamt_pair *pair, u64 status),
		    TP_ARGS(base_pfn, pair, status),
		    TP_STRUCT__entry(__field(unsigned long, base_pfn)
				     __field(unsigned long, pfn0)
				     __field(unsigned long, pfn1)
				     __field(u64, status)),
		    TP_fast_assign(__entry->base_pfn = base_pfn;
				   __entry->pfn0 = pair->pfn[0];
				   __entry->pfn1 = pair->pfn[1];
				   __entry->status = status;),
		    TP_printk("range %#lx pair %#lx %#lx status %#llx",
			      __entry->base_pfn, __entry->pfn0, __entry->pfn1,
			      __entry->status)
);

DEFINE_EVENT(tdx_pamt_seamcall, tdx_pamt_add,
	     TP_PROTO(unsigned long base_pfn, const struct tdx_pamt_pair *pair,
		      u64 status),
	     TP_ARGS(base_pfn, pair, status)
);

/* @pair is what REMOVE handed back, valid on success. */
DEFINE_EVENT(tdx_pamt_seamcall, tdx_pamt_remove,
	     TP_PROTO(unsigned long base_pfn, const struct tdx_pamt_pair *pair,
		      u64 status),
	     TP_ARGS(base_pfn, pair, status)
);

TRACE_EVENT(tdx_pamt_busy,
	    TP_PROTO(unsigned int leaf, unsigned long base_pfn, unsigned int try),
	    TP_ARGS(leaf, base_pfn, try),
	    TP_STRUCT__entry(__field(unsigned int, leaf)
			     __field(unsigned long, base_pfn)
			     __field(unsigned int, try)),
	    TP_fast_assign(__entry->leaf = leaf;
			   __entry->base_pfn = base_pfn;
			   __entry->try = try;),
	    TP_printk("leaf %u range %#lx retry %u",
		      __entry->leaf, __entry->base_pfn, __entry->try)
);

TRACE_EVENT(tdx_pamt_shrink,
	    TP_PROTO(unsigned long nr_to_scan, unsigned long freed),
	    TP_ARGS(nr_to_scan, freed),
	    TP_STRUCT__entry(__field(unsigned long, nr_to_scan)
			     __field(unsigned long, freed)),
	    TP_fast_assign(__entry->nr_to_scan = nr_to_scan;
			   __entry->freed = freed;),
	    TP_printk("nr_to_scan %lu freed %lu",
		      __entry->nr_to_scan, __entry->freed)
);

#endif /* _X86_VIRT_TDX_PAMT_TRACE_H */

/* The Makefile adds -I$(src) for pamt_trace.o, which instantiates them. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pamt_trace
#include <trace/define_trace.h>
