#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-json.py TXT JSON: read a pamt_bench (or pamt_vt --replay) JSON
back and check it against the table its run printed: every figure the
table shows must be the JSON's.  Exit 1 and say which figure differs."""
import json
import re
import sys

txt_path, json_path = sys.argv[1], sys.argv[2]
txt = open(txt_path).read().splitlines()
data = json.load(open(json_path))
bad = []


def same(what, printed, stored, tol=0.0):
    if abs(float(printed) - float(stored)) > tol:
        bad.append(f"{what}: printed {printed}, JSON {stored}")


def tally_line():
    for line in txt:
        m = re.match(r"targets: (\d+) met, (\d+) missed", line)
        if m:
            return int(m.group(1)), int(m.group(2)), line
    bad.append("no 'targets:' line")
    return None


if "scenarios" in data:  # pamt_vt --replay
    t = tally_line()
    if t:
        same("targets met", t[0], data["targets"]["met"])
        same("targets missed", t[1], data["targets"]["missed"])
    names = ["lock", "atomic", "lean", "magazine"]
    blocks = [i for i, l in enumerate(txt) if l.startswith("Bootup+teardown")]
    for sc, start in zip(data["scenarios"], blocks):
        for line in txt[start:start + 20]:
            for row, key in (("global lock", "global_lock"),
                             ("SEAMCALLs", "seamcalls"), ("BUSY", "busy")):
                if line.startswith(row + " "):
                    nums = re.findall(r"\d+", line.split("|", 1)[1])
                    for name, v in zip(names, nums):
                        same(f"{sc['tds']}TD {name} {row}", v,
                             sc["strategies"][name][key])
            m = re.match(r"get count\s+\|\s+(\d+)k\s+(\d+)k", line)
            if m:
                same(f"{sc['tds']}TD seed w/o get count (k)", m.group(1),
                     sc["seed_published"]["w/o"]["get"]["count"] / 1e3, 0.5)
else:  # pamt_bench
    strats = data["strategies"]
    rows = 0
    it = iter(txt)
    for line in it:
        if line.startswith("strategy") and "locks/1Mop" in line:
            for row in it:
                f = row.split()
                if not f or f[0] not in strats:
                    break
                s = strats[f[0]]
                rows += 1
                same(f"{f[0]} ADD", f[2], s["seamcall"]["add"])
                same(f"{f[0]} REMOVE", f[3], s["seamcall"]["remove"])
                same(f"{f[0]} BUSY", f[4], s["seamcall"]["busy"])
                same(f"{f[0]} page allocs", f[5], s["page_allocs"])
                same(f"{f[0]} page frees", f[6], s["page_frees"])
                same(f"{f[0]} idle end", f[7], s["idle_pairs_end"])
                same(f"{f[0]} peak PAMT", f[8], s["peak_pamt_pages"])
                same(f"{f[0]} slow gets", f[10], s["get"]["slow_count"])
                same(f"{f[0]} check", f[-1] == "ok", s["checks_ok"])
            break
    if rows != len(strats):
        bad.append(f"{rows} counter rows printed for {len(strats)} strategies")
    t = tally_line()
    if t:
        same("targets met", t[0], data["targets"]["met"])
        same("targets missed", t[1], data["targets"]["missed"])
        nj = re.search(r"\((\d+) wall-clock", t[2])
        same("targets not judged", nj.group(1) if nj else 0,
             data["targets"]["not_judged"])
    busy = any(l.startswith("WARNING: the machine") for l in txt)
    same("machine busy", busy, data["machine"]["busy"])
    if data["scenario"] == "reclaim":
        mode = -1
        for line in txt:
            if line.strip().startswith("(a) 4 of 5"):
                mode = 0
            elif line.strip().startswith("(b) 1%"):
                mode = 1
            f = line.split()
            if mode >= 0 and len(f) == 7 and f[0] in strats:
                r = strats[f[0]]["reclaim"][mode]
                same(f"reclaim {mode} {f[0]} kept", f[1], r["kept_ranges"])
                same(f"reclaim {mode} {f[0]} held MiB", f[3], r["held_mib"], 0.05)
                same(f"reclaim {mode} {f[0]} bound MiB", f[4], r["bound_mib"], 0.05)
                same(f"reclaim {mode} {f[0]} shrinks", f[6], r["shrinker_calls"])
                same(f"reclaim {mode} {f[0]} samples", len(r["held_pages_per_call"]),
                     r["shrinker_calls"] + 1)
                rows += 1
        if rows != 3 * len(strats):
            bad.append("reclaim: the held/kept/bound table and the JSON differ in rows")

for b in bad:
    print(f"{txt_path}: {b}")
sys.exit(1 if bad else 0)
