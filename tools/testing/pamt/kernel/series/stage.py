#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the cache's headers as they are before some layers join the series.

Usage: stage.py SRC DST LAYER...

SRC holds the final files (arch/x86/virt/vmx/tdx/pamt_internal.h, the
layers' pamt_<layer>.c, arch/x86/include/asm/tdx_pamt.h) and this folder
(tools/testing/pamt/kernel/series/).  For each LAYER not in the series yet
(mag, shrink, glue):

  - its block of pamt_internal.h, from its "/* pamt_<layer>.c" line to
    the next such line, is replaced by the stand-ins in series/<layer>.h;
  - the prototypes in asm/tdx_pamt.h of the functions its .c file defines
    (tdx_* and __tdx_*) are left out.

The results go to DST at the same paths.  With no LAYER, the files are
the final ones.
"""
import os
import re
import sys

TDX = "arch/x86/virt/vmx/tdx"
SERIES = "tools/testing/pamt/kernel/series"
PUB = "arch/x86/include/asm/tdx_pamt.h"
MARK = re.compile(r"^/\* pamt_(\w+)\.c\b")
END = "#endif /* _X86_VIRT_TDX_PAMT_INTERNAL_H */"


def die(msg):
    sys.exit("stage.py: " + msg)


def read(root, path):
    try:
        with open(os.path.join(root, path)) as f:
            return f.read()
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")


def write(root, path, text):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
        f.write(text)


def swap_block(lines, layer, stub):
    starts = [i for i, l in enumerate(lines)
              if MARK.match(l) and MARK.match(l).group(1) == layer]
    if len(starts) != 1:
        die(f'pamt_internal.h has {len(starts)} "/* pamt_{layer}.c" lines, not 1')
    start = starts[0]
    end = next((i for i in range(start + 1, len(lines))
                if MARK.match(lines[i]) or lines[i] == END), None)
    if end is None:
        die(f"no end to the pamt_{layer}.c block of pamt_internal.h")
    return lines[:start] + stub.rstrip("\n").split("\n") + [""] + lines[end:]


def public_names(src, layer):
    text = read(src, f"{TDX}/pamt_{layer}.c")
    return set(re.findall(r"^(?!static\b)[a-z][^\n(;]*?\b((?:__)?tdx_\w+)\(",
                          text, re.M))


def drop_prototypes(text, names):
    if not names:
        return text
    decl = re.compile(r"\b(%s)\(" % "|".join(sorted(names)))
    out, skip = [], False
    for line in text.split("\n"):
        if not skip and line[:1].isalpha() and not line.startswith("static") \
           and decl.search(line):
            skip = True
        if skip:
            skip = not line.rstrip().endswith(";")
            continue
        out.append(line)
    text = "\n".join(out)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


def main():
    if len(sys.argv) < 3:
        die("usage: stage.py SRC DST LAYER...")
    src, dst, layers = sys.argv[1], sys.argv[2], sys.argv[3:]
    lines = read(src, f"{TDX}/pamt_internal.h").split("\n")
    pub = read(src, PUB)
    for layer in layers:
        lines = swap_block(lines, layer, read(src, f"{SERIES}/{layer}.h"))
        pub = drop_prototypes(pub, public_names(src, layer))
    write(dst, f"{TDX}/pamt_internal.h", "\n".join(lines))
    write(dst, PUB, pub)


main()
