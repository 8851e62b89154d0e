#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fail unless every PAMT_SLOT_* constant of the C header is in the model,
and the slot word's layout holds in both.

Constants are the PAMT_SLOT_* macros #defined in the header and the
PAMT_SLOT_* members of its enums.  A name counts as present in the model
only where it is used outside comments.

The layout, in the C header and in the model alike: the refcount field
PAMT_SLOT_REF_MASK is the low bits, PAMT_SLOT_REF_MAX fits in it, and the
flags PAMT_SLOT_INSTALLED, TRANSIT, LEAKED and HOLE are distinct
single bits above it; in C the word fits in 32 bits (an atomic_t).

usage: check_names.py pamt_internal.h pamt_slot.pml
"""
import re
import sys


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def header_constants(text):
    text = strip_comments(text)
    names = set(re.findall(r'^\s*#\s*define\s+(PAMT_SLOT_\w+)', text, re.M))
    for body in re.findall(r'\benum\b[^{;]*\{(.*?)\}', text, re.S):
        for member in body.split(','):
            m = re.match(r'\s*(PAMT_SLOT_\w+)', member)
            if m:
                names.add(m.group(1))
    return names


FLAGS = ('INSTALLED', 'TRANSIT', 'LEAKED', 'HOLE')


def values(text, extra):
    """Numeric values of the #defines of @text, macros of @extra first."""
    defs = dict(extra)
    for name, body in re.findall(r'^\s*#\s*define\s+(\w+)[ \t]+([^\n]*)',
                                 strip_comments(text), re.M):
        defs[name] = body.strip()
    env = {'GENMASK': lambda h, l: (1 << (h + 1)) - (1 << l),
           'BIT': lambda n: 1 << n}
    out = {}

    def ev(name, depth=0):
        if name in out:
            return out[name]
        if depth > 20 or name not in defs:
            raise ValueError(name)
        expr = defs[name]
        for ref in set(re.findall(r'\b[A-Z_][A-Z0-9_]*\b', expr)):
            if ref not in ('GENMASK', 'BIT'):
                expr = re.sub(r'\b%s\b' % ref, str(ev(ref, depth + 1)), expr)
        expr = re.sub(r'(\d+)U?L*\b', r'\1', expr)
        out[name] = eval(expr, env)
        return out[name]
    return ev


def layout_errors(where, ev, word_bits):
    try:
        mask = ev('PAMT_SLOT_REF_MASK')
        ref_max = ev('PAMT_SLOT_REF_MAX')
        flags = {f: ev('PAMT_SLOT_' + f) for f in FLAGS}
    except (ValueError, SyntaxError, NameError) as e:
        return [f'{where}: cannot evaluate {e}']
    errs = []
    if mask & (mask + 1):
        errs.append(f'{where}: PAMT_SLOT_REF_MASK {mask:#x} is not the low bits')
    if not 0 < ref_max <= mask:
        errs.append(f'{where}: PAMT_SLOT_REF_MAX {ref_max} does not fit PAMT_SLOT_REF_MASK {mask:#x}')
    seen = 0
    for f, v in flags.items():
        if v <= 0 or v & (v - 1):
            errs.append(f'{where}: PAMT_SLOT_{f} {v:#x} is not one bit')
        if v & mask:
            errs.append(f'{where}: PAMT_SLOT_{f} {v:#x} is inside the refcount field')
        if v & seen:
            errs.append(f'{where}: PAMT_SLOT_{f} {v:#x} shares a bit with another flag')
        if word_bits and v >> word_bits:
            errs.append(f'{where}: PAMT_SLOT_{f} {v:#x} is beyond {word_bits} bits')
        seen |= v
    return errs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        names = header_constants(f.read())
    with open(sys.argv[2]) as f:
        model = set(re.findall(r'\b\w+\b', strip_comments(f.read())))
    if len(names) < 5:
        sys.exit(f'check_names: found only {len(names)} PAMT_SLOT_* constants in {sys.argv[1]}; parser broken?')
    with open(sys.argv[1]) as f:
        hdr = f.read()
    with open(sys.argv[2]) as f:
        pml = f.read()
    errs = layout_errors(sys.argv[1],
                         values(hdr, {'TDX_PAMT_PAGES_PER_SLOT': '512'}), 32)
    errs += layout_errors(sys.argv[2], values(pml, {}), 0)
    for e in errs:
        print(f'check_names: layout: {e}')
    missing = sorted(names - model)
    for name in missing:
        print(f'check_names: {name} is in {sys.argv[1]} but not in {sys.argv[2]}')
    print(f'check_names: {len(names) - len(missing)}/{len(names)} PAMT_SLOT_* constants found in the model; layout {"broken" if errs else "ok in both"}')
    sys.exit(1 if missing or errs else 0)


if __name__ == '__main__':
    main()
