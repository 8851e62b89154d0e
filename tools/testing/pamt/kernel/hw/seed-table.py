#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the seed's table (avg/max/#cnt/total of tdx_pamt_get/put) from the
output of seed-table.bt.  With two files, the first is the "w/o" column
(for example tdx_pamt.idle_cap=1, or the upstream series) and the second
the "w/" column, as in the seed.

Usage: seed-table.py RUN.out [RUN2.out]
"""
import re
import sys

KEYS = ("n", "ns", "max_ns")


def parse(path):
    vals = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^@(get|put)_(n|ns|max_ns):\s+(\d+)\s*$", line)
            if m:
                vals[(m.group(1), m.group(2))] = int(m.group(3))
    for op in ("get", "put"):
        missing = [k for k in KEYS if (op, k) not in vals]
        if missing:
            sys.exit(f"{path}: no @{op}_{missing[0]} line: is this the output of seed-table.bt?")
        if vals[(op, "n")] == 0:
            sys.exit(f"{path}: no {op} was timed")
    return vals


def kilo(n):
    return f"{n / 1000:.0f}k" if n >= 10000 else str(n)


def row(runs, op):
    cells = []
    for fmt in (lambda v: f"{v[(op, 'ns')] / v[(op, 'n')] / 1000:.2f}",
                lambda v: f"{v[(op, 'max_ns')] / 1000:.0f}",
                lambda v: kilo(v[(op, "n")]),
                lambda v: kilo(round(v[(op, "ns")] / 1000))):
        cells.append(" |".join(f"{fmt(v):>8}" for v in runs))
    w = max(len(cells[0]), len("total (us)"))
    return f"tdx_pamt_{op}() |" + " |".join(f"{c:>{w}}" for c in cells) + " |"


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__.strip())
    runs = [parse(p) for p in argv[1:]]
    sub = " |".join(f"{h:>8}" for h in (("w/o", "w/") if len(runs) == 2 else ("",)))
    w = max(len(sub), len("total (us)"))
    sub = f"{sub:>{w}}"
    print("               |" + " |".join(f"{t:^{w}}" for t in
                                          ("avg (us)", "max (us)", "#cnt", "total (us)")) + " |")
    print("               |" + " |".join([sub] * 4) + " |")
    for op in ("get", "put"):
        print(row(runs, op))


if __name__ == "__main__":
    main(sys.argv)
