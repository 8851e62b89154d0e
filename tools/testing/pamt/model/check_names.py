#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fail unless every PAMT_SLOT_* constant of the C header is in the model.

Constants are the PAMT_SLOT_* macros #defined in the header and the
PAMT_SLOT_* members of its enums.  A name counts as present in the model
only where it is used outside comments.

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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        names = header_constants(f.read())
    with open(sys.argv[2]) as f:
        model = set(re.findall(r'\b\w+\b', strip_comments(f.read())))
    if len(names) < 5:
        sys.exit(f'check_names: found only {len(names)} PAMT_SLOT_* constants in {sys.argv[1]}; parser broken?')
    missing = sorted(names - model)
    for name in missing:
        print(f'check_names: {name} is in {sys.argv[1]} but not in {sys.argv[2]}')
    print(f'check_names: {len(names) - len(missing)}/{len(names)} PAMT_SLOT_* constants found in the model')
    sys.exit(1 if missing else 0)


if __name__ == '__main__':
    main()
