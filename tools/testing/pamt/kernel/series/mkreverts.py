#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write series/{observe,busy,sparse,turns}-revert.patch from the final files.

Usage: mkreverts.py REPO

Each follow-up that changes files of the base is taken out of them by
editing the final files (REPO's working tree) stage by stage: observe
(the tracepoints, 03-observe), then from there busy (the BUSY retries,
their serialised fallback and the ADD turns, 02-busy) and then sparse
(the far blocks, 01-sparse), or from observe the turns alone.
Each patch is one stage against the next.  An edit that no longer
matches the code stops the script: change the edit with the code.
"""
import os, subprocess, sys, shutil, tempfile
REPO = sys.argv[1]
T = 'arch/x86/virt/vmx/tdx/'
FILES = ['pamt_core.c', 'pamt_internal.h', 'pamt_shrink.c', 'pamt_slot.c']
def ed(d, f, reps):
    p = os.path.join(d, T + f)
    s = open(p).read()
    for a, b in reps:
        if s.count(a) != 1:
            sys.exit(f"{f}: {s.count(a)} matches for:\n{a}")
        s = s.replace(a, b)
    open(p, 'w').write(s)
def cut(d, f, start, end, new=''):
    p = os.path.join(d, T + f)
    s = open(p).read()
    a = s.index(start); b = s.index(end, a)
    s = s[:a] + new + s[b:]
    open(p, 'w').write(s)

def observe(d):
    ed(d, 'pamt_slot.c', [
        ('#include "pamt_trace.h"\n', ''),
        ('\t\tstatus = pamt.ops->add(base, pair);\n\t\ttrace_tdx_pamt_add(base, pair, status);\n',
         '\t\tstatus = pamt.ops->add(base, pair);\n'),
        ('\t\tstatus = pamt.ops->remove(base, pair);\n\t\ttrace_tdx_pamt_remove(base, pair, status);\n',
         '\t\tstatus = pamt.ops->remove(base, pair);\n'),
        ('\ttrace_tdx_pamt_busy(leaf, base, try);\n', ''),
        ('\t\t/* The REMOVE tracepoint reads it even when REMOVE fails. */\n\t\t*pair = (struct tdx_pamt_pair) { };\n', ''),
        ('static void pamt_slot_backoff(unsigned int *tries, unsigned int leaf,\n\t\t\t      unsigned long base)\n',
         'static void pamt_slot_backoff(unsigned int *tries)\n'),
        ('\t\tpamt_slot_backoff(&busy, TDH_PHYMEM_PAMT_REMOVE, base);\n', '\t\tpamt_slot_backoff(&busy);\n'),
        ('\t\t\tpamt_slot_backoff(&busy, TDH_PHYMEM_PAMT_ADD,\n\t\t\t\t\t  pamt_slot_base_pfn(idx));\n',
         '\t\t\tpamt_slot_backoff(&busy);\n'),
    ])
    ed(d, 'pamt_shrink.c', [
        ('#include "pamt_trace.h"\n', ''),
        ('\ttrace_tdx_pamt_shrink(nr, freed);\n', ''),
    ])

def turns(d):
    ed(d, 'pamt_slot.c', [
        ("/* Gets on an EMPTY word try the ADD this far apart, in their order. */\n#define PAMT_ADD_TURN_NS\t1000\n#define PAMT_ADD_TURNS\t\t32UL\t/* the turns after the first */\n\n", ''),
        ('\tunsigned long idx = pamt_slot_idx(slot), pos;\n', '\tunsigned long idx = pamt_slot_idx(slot);\n'),
        ('\tu64 deadline = 0, turn;\n', '\tu64 deadline = 0;\n'),
        ('\tpos = pamt_slot_refs(old);\t/* gets ahead of this one */\n\tw = old + 1;\n\tturn = 0;\n', '\tw = old + 1;\n'),
        ('\t\t\tif (pamt_slot_wait(slot, w, &w, &deadline, &waited)) {\n\t\t\t\tturn = 0;\t/* EMPTY now: turns start again */\n\t\t\t\tcontinue;\n\t\t\t}\n',
         '\t\t\tif (pamt_slot_wait(slot, w, &w, &deadline, &waited))\n\t\t\t\tcontinue;\n'),
        ('\t\t/* EMPTY: gets try the ADD in their order, no herd. */\n\t\tif (pos) {\n\t\t\tif (!turn)\n\t\t\t\tturn = ktime_get_ns() +\n\t\t\t\t       min(pos, PAMT_ADD_TURNS) * PAMT_ADD_TURN_NS;\n\t\t\tif (pamt_slot_wait(slot, w, &w, &turn, &waited))\n\t\t\t\tcontinue;\n\t\t\tpos = 0;\n\t\t\tw = atomic_read(slot);\n\t\t\tcontinue;\n\t\t}\n', ''),
    ])

def busy(d):
    turns(d)
    cut(d, 'pamt_slot.c', '/*\n * While a CPU serialises, every call goes under', '/* Republish IDLE @old',
        '''static u64 pamt_slot_call(unsigned int leaf, unsigned long base,
			  struct tdx_pamt_pair *pair)
{
	u64 status;

	if (leaf == TDH_PHYMEM_PAMT_ADD) {
		pamt_stat_inc(ADD);
		status = pamt.ops->add(base, pair);
	} else {
		pamt_stat_inc(REMOVE);
		status = pamt.ops->remove(base, pair);
	}
	if ((status & TDX_PAMT_STATUS_MASK) == TDX_PAMT_OPERAND_BUSY)
		pamt_stat_inc(BUSY);
	return status;
}

''')
    p = os.path.join(d, T + 'pamt_slot.c'); s = open(p).read()
    a = s.index('\tpamt_idle_count(idx, -1);\n\tfor (;;) {\n\t\tstatus = pamt_slot_call(TDH_PHYMEM_PAMT_REMOVE, base, pair);')
    b = s.index('\tret = pamt_slot_removed(slot, idx, old, status);', a)
    s = s[:a] + '\tpamt_idle_count(idx, -1);\n\tstatus = pamt_slot_call(TDH_PHYMEM_PAMT_REMOVE, pamt_slot_base_pfn(idx),\n\t\t\t\tpair);\n' + s[b:]
    open(p, 'w').write(s)
    ed(d, 'pamt_slot.c', [
        ('\tint old = *word, now;\n\tunsigned long base = pamt_slot_base_pfn(idx);\n\tunsigned int busy = 0;\n', '\tint old = *word;\n'),
        ('\tret = pamt_slot_removed(slot, idx, old, status);\n\tpamt_transit_end();\n\tpamt_slot_busy_end(busy);\n',
         '\tret = pamt_slot_removed(slot, idx, old, status);\n\tpamt_transit_end();\n'),
        ('\tenum pamt_pair_src src = PAMT_PAIR_NONE;\n\tunsigned int busy = 0;\n', '\tenum pamt_pair_src src = PAMT_PAIR_NONE;\n'),
        ('again:\n', ''),
        ('\t\t/* Back off without a count: others may ADD meanwhile. */\n\t\tif (ret == -EBUSY && pamt_slot_retry(busy)) {\n\t\t\tw = atomic_read(slot);\n\t\t\tif (!pamt_slot_uncount(slot, &w)) {\n\t\t\t\tret = 0;\t/* another get\'s ADD made it */\n\t\t\t\tbreak;\n\t\t\t}\n\t\t\tpamt_slot_backoff(&busy);\n\t\t\told = atomic_fetch_add(1, slot);\n\t\t\tgoto again;\n\t\t}\n', ''),
        ('out:\n\tpamt_slot_busy_end(busy);\n', 'out:\n'),
        ('#include <linux/delay.h>\n', ''),
    ])
    ed(d, 'pamt_core.c', [
        ('\tatomic_set(&pamt.serializing, 0);\n\traw_spin_lock_init(&pamt.seamcall_lock);\n', ''),
    ])
    p = os.path.join(d, T + 'pamt_internal.h'); s = open(p).read()
    a = s.index('/* Bounds on waiting and retrying')
    b = s.index("/* A get's wait for other CPUs' transitions", a)
    e = s.index('\n', b) + 1
    s = s[:a] + "/* A get's wait for other CPUs' transitions, in all (\"Bounds\" in the rst). */\n" + s[e:]
    open(p, 'w').write(s)
    p = os.path.join(d, T + 'pamt_internal.h'); s = open(p).read()
    a = s.index('\t/*\n\t * SEAMCALLs not serialised.')
    b = s.index('\tunsigned int in_flight;\n', a) + len('\tunsigned int in_flight;\n')
    s = s[:a] + s[b:]
    open(p, 'w').write(s)
    ed(d, 'pamt_internal.h', [
        ('\tatomic_t serializing;\t\t/* CPUs retrying BUSY serialised */\n\traw_spinlock_t seamcall_lock;\t/* the BUSY fallback, one SEAMCALL */\n', ''),
    ])

def sparse(d):
    ed(d, 'pamt_internal.h', [
        ('#include <linux/xarray.h>\n', ''),
        ('\tstruct pamt_slot *slots;\t/* the flat window, then far blocks */\n',
         '\tstruct pamt_slot *slots;\t/* every 2M of the span */\n'),
        ('\tunsigned long nr_flat;\t\t/* slots in the flat window */\n', ''),
        ('\tunsigned long meta_bytes;\t/* slot metadata, for the statistics */\n', ''),
        ('\tif (idx < pamt.nr_flat)\n\t\treturn (pamt.base_idx + idx) * TDX_PAMT_PAGES_PER_SLOT;\n\treturn pamt_far_base_pfn(idx - pamt.nr_flat);\n',
         '\treturn (pamt.base_idx + idx) * TDX_PAMT_PAGES_PER_SLOT;\n'),
        ('\tif (idx < pamt.nr_flat)\n\t\treturn &pamt.slots[idx].word;\n\treturn pamt_slot_far(pfn / TDX_PAMT_PAGES_PER_SLOT);\n',
         '\treturn idx < pamt.nr_slots ? &pamt.slots[idx].word : NULL;\n'),
    ])
    cut(d, 'pamt_internal.h', '/* pamt_sparse.c: see', '/* pamt_slot.c */')
    ed(d, 'pamt_core.c', [
        ('\tpamt_sparse_free();\n\tkvfree(pamt.slots);\n\tpamt.slots = NULL;\n\tpamt.nr_flat = 0;\n\tpamt.nr_slots = 0;\n\tpamt.meta_bytes = 0;\n',
         '\tkvfree(pamt.slots);\n\tpamt.slots = NULL;\n\tpamt.nr_slots = 0;\n'),
        ('/* The flat window, then the far blocks.  Return: covered slots, or 0. */\n',
         '/* A slot per 2M of the span.  Return: covered slots, or 0. */\n'),
        ('\tunsigned int first, last, i;\n\tlong n_far;\n\n\tn_far = pamt_sparse_init(ranges, nr, &first, &last);\n\tif (n_far < 0)\n\t\treturn 0;\n\tpamt.base_idx = ranges[first].start_pfn / TDX_PAMT_PAGES_PER_SLOT;\n\tpamt.nr_flat = ranges[last].end_pfn / TDX_PAMT_PAGES_PER_SLOT -\n\t\t       pamt.base_idx;\n\tpamt.nr_slots = pamt.nr_flat + n_far;\n',
         '\tunsigned int i;\n\n\tpamt.base_idx = ranges[0].start_pfn / TDX_PAMT_PAGES_PER_SLOT;\n\tpamt.nr_slots = ranges[nr - 1].end_pfn / TDX_PAMT_PAGES_PER_SLOT -\n\t\t\tpamt.base_idx;\n'),
        ('\t/* pamt_sparse_init() counted its own. */\n\tpamt.meta_bytes += pamt.nr_slots * sizeof(*pamt.slots);\n\n', '\n'),
    ])
    cut(d, 'pamt_slot.c', '/* Takes the flat index, not the pfn: one instruction fewer in get. */\n', '/**\n * tdx_pamt_get()')
    cut(d, 'pamt_slot.c', 'static noinline int pamt_slot_put_far(unsigned long idx)\n', '/**\n * tdx_pamt_put()')
    ed(d, 'pamt_slot.c', [
        ('\tif (unlikely(idx >= pamt.nr_flat))\n\t\treturn pamt_slot_get_far(idx, res);\n',
         '\t/* Without Dynamic PAMT every call succeeds. */\n\tif (unlikely(idx >= pamt.nr_slots))\n\t\treturn pamt.enabled ? -EINVAL : 0;\n'),
        ('\tif (unlikely(idx >= pamt.nr_flat))\n\t\treturn pamt_slot_put_far(idx);\n',
         '\tif (unlikely(idx >= pamt.nr_slots))\n\t\treturn pamt.enabled ? -EINVAL : 0;\n'),
    ])

def snapshot(src, dst):
    for f in FILES:
        os.makedirs(os.path.join(dst, T), exist_ok=True)
        shutil.copy(os.path.join(src, T + f), os.path.join(dst, T + f))

def diff(a, b):
    r = subprocess.run(['git', 'diff', '--no-index', '--src-prefix=a/', '--dst-prefix=b/', a, b],
                       capture_output=True, text=True)
    return r.stdout

def patch(d1, d2):
    out = ''
    for f in FILES:
        t = diff(os.path.join(d1, T + f), os.path.join(d2, T + f))
        t = t.replace('a/' + os.path.join(d1, T + f).lstrip('/'), 'a/' + T + f)
        t = t.replace('b/' + os.path.join(d2, T + f).lstrip('/'), 'b/' + T + f)
        out += t
    return out

tmp = tempfile.mkdtemp()
F, O, B, BS, OT = (os.path.join(tmp, x) for x in 'F O B BS OT'.split())
snapshot(REPO, F); snapshot(REPO, O); observe(O)
snapshot(O, B); busy(B)
snapshot(B, BS); sparse(BS)
snapshot(O, OT); turns(OT)
S = os.path.join(REPO, 'tools/testing/pamt/kernel/series/')
open(S + 'observe-revert.patch', 'w').write(patch(F, O))
open(S + 'busy-revert.patch', 'w').write(patch(O, B))
open(S + 'sparse-revert.patch', 'w').write(patch(B, BS))
open(S + 'turns-revert.patch', 'w').write(patch(O, OT))
shutil.rmtree(tmp)
