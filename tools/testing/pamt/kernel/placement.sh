#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The pair-page placement experiment (issue 29, item 3): does the page
# allocator, with pair pages allocated __GFP_RECLAIMABLE, keep them out of
# the 2M blocks that TD memory uses as well as the pair arena does?
#
# Grafts the cache into a 7.3 tree of its own, adds the experiment's suite
# (placement/placement_kunit.c, option INTEL_TDX_PAMT_PLACEMENT_TEST, which
# no other configuration enables), builds it without lockdep, boots it
# once per point of the table and seed under qemu (TCG), and prints the
# table and the issue's verdict.  A measurement: it fails only when a
# boot or a sanity check fails, never on the figures.
#
# Usage: placement.sh [-r N] [-m MIB] [-c PCT] [-p "POINT..."]
#   -r  boots per point, each with its own seed (default 5): the table
#       gives the means, and the spread of the poisoned share
#   -m  guest memory in MiB (default 4096)
#   -c  fragmented start: the tmpfs file's share of free memory, in
#       percent, before half its pages are punched out (default 80)
#   -p  only these points, 0 to 11 (default: all)
# Env: PAMT_CACHE (default /var/cache/tdx-pamt) holds the tree
# (linux-7.3-placement: never the tree that make kunit builds), the build
# folder build-placement and the logs, placement-logs/run-<time>/.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
TREE=${PAMT_PLACEMENT_TREE:-$CACHE/linux-7.3-placement}
B=$CACHE/build-placement
REPS=5
MEM=4096
CACHE_PCT=80
POINTS="0 1 2 3 4 5 6 7 8 9 10 11"
TDX=arch/x86/virt/vmx/tdx

while getopts "r:m:c:p:" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	m) MEM=$OPTARG ;;
	c) CACHE_PCT=$OPTARG ;;
	p) POINTS=$OPTARG ;;
	*) sed -n '4,24p' "$0"; exit 2 ;;
	esac
done

T0=$(date +%s)
PAMT_TREE=$TREE "$HERE/graft.sh" > /dev/null || { echo "graft failed"; exit 1; }

# The suite joins the KUnit object only under its own option.
if ! cmp -s "$HERE/placement/placement_kunit.c" "$TREE/$TDX/tests/placement_kunit.c"; then
	cp "$HERE/placement/placement_kunit.c" "$TREE/$TDX/tests/placement_kunit.c"
fi
# shellcheck disable=SC2016 # make's $(...), not the shell's
LINE='pamt_kunit-$(CONFIG_INTEL_TDX_PAMT_PLACEMENT_TEST) += placement_kunit.o'
grep -qxF "$LINE" "$TREE/$TDX/tests/Makefile" ||
	printf '%s\n' "$LINE" >> "$TREE/$TDX/tests/Makefile"
grep -q '^config INTEL_TDX_PAMT_PLACEMENT_TEST$' "$TREE/$TDX/Kconfig" ||
	cat >> "$TREE/$TDX/Kconfig" <<'KCONFIG'

config INTEL_TDX_PAMT_PLACEMENT_TEST
	bool "Pair-page placement experiment (KUnit)"
	depends on INTEL_TDX_PAMT_KUNIT_TEST && TRANSPARENT_HUGEPAGE && SHMEM
	help
	  Measures which 2M blocks pair pages land in, with the page
	  allocator and with the pair arena.  Enabled only by
	  tools/testing/pamt/kernel/placement.sh.
KCONFIG

STAMP=$(date +%Y%m%d-%H%M%S)
LOGS=$CACHE/placement-logs/run-$STAMP
mkdir -p "$LOGS"
# The suites' configuration without the lock and sleep checkers (they slow
# the page allocator, not move its pages), with THP: 2M pageblocks, as on
# a distribution kernel.
KCFG=$LOGS/placement.kunitconfig
grep -vE '^CONFIG_(PROVE_LOCKING|DEBUG_ATOMIC_SLEEP|DEBUG_PREEMPT)=' \
	"$TREE/$TDX/tests/.kunitconfig" > "$KCFG"
printf '%s\n' CONFIG_TRANSPARENT_HUGEPAGE=y CONFIG_COMPACTION=y CONFIG_SHMEM=y \
	CONFIG_INTEL_TDX_PAMT_PLACEMENT_TEST=y CONFIG_INTEL_TDX_PAMT_ARENA=y >> "$KCFG"

# shellcheck source-path=SCRIPTDIR source=kunit-lib.sh
. "$HERE/kunit-lib.sh"
kunit_tcg_path "$CACHE" || { echo "no qemu-system-x86_64"; exit 1; }
KUNIT=(python3 "$TREE/tools/testing/kunit/kunit.py")

t=$(date +%s)
echo "== build ($B)"
if ! "${KUNIT[@]}" build --arch=x86_64 --kunitconfig="$KCFG" \
	--build_dir="$B" --jobs "$(nproc)" > "$LOGS/build.log" 2>&1; then
	echo "   build FAILED, log $LOGS/build.log"
	tail -30 "$LOGS/build.log" | sed 's/^/     /'
	exit 1
fi
echo "   built in $(( $(date +%s) - t ))s"

BAD=0
for rep in $(seq 1 "$REPS"); do
	for p in $POINTS; do
		LOG=$LOGS/point-$p-r$rep.log
		t=$(date +%s)
		kunit_exec "$LOG" "${PAMT_KUNIT_TIMEOUT:-1200}" "${KUNIT[@]}" exec \
			--arch=x86_64 --build_dir="$B" --raw_output=all \
			--qemu_args "-m $MEM -smp 2" \
			--kernel_args "pamt_kunit.placement=$p pamt_kunit.placement_cache=$CACHE_PCT pamt_kunit.placement_seed=$((28 + rep)) kunit.timeout=1200" \
			'tdx_dpamt_placement'
		res=$(kunit_count "$LOG" "point $p")
		read -r np nf _ <<< "$(echo "$res" | tail -1)"
		echo "== point $p, boot $rep: $(( $(date +%s) - t ))s, $np passed, $nf failed"
		if [ "$nf" != 0 ] || [ "$np" = 0 ] ||
		   ! grep -q 'placement: start=' "$LOG" || ! kunit_scan "$LOG"; then
			echo "   FAILED, log $LOG"
			echo "$res" | sed '$d'
			BAD=$((BAD + 1))
		fi
	done
done

# The table (means over the boots; the poisoned share also as min-max),
# then the issue's rule on the means: (b) within 1 percentage point of
# (c) at every point: the arena goes ((a) if it does as well); else it
# stays.  How many single boots' tables pass the rule is printed too.
for f in "$LOGS"/point-*-r*.log; do
	r=${f##*-r}
	sed -n "s/.*placement: \(start=.*\)$/rep=${r%.log} \1/p" "$f"
done > "$LOGS/table.txt"
python3 - "$LOGS/table.txt" <<'PY'
import sys
from collections import defaultdict
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[1])]
order = {"clean": 0, "frag": 1}
cells = defaultdict(list)
for r in rows:
    cells[(r["start"], r["fill"], r["strategy"])].append(r)
keys = sorted(cells, key=lambda k: (order[k[0]], int(k[1]), k[2]))
hdr = ("start", "fill", "strat", "boots", "free MiB", "guest pages",
       "TD 2M", "poisoned", "%", "% min-max", "pair pages", "pair 2M",
       "chunks", "order-1", "order-0")
fmt = "%-5s %4s %5s %5s %8s %11s %6s %8s %6s %11s %10s %7s %6s %7s %7s"
print(fmt % hdr)
def mean(rs, f):
    if f not in rs[0]:
        return "-"
    return "%.0f" % (sum(float(r[f]) for r in rs) / len(rs))
pct = {}
for k in keys:
    rs = cells[k]
    p = [float(r["pct"]) for r in rs]
    pct[k] = sum(p) / len(p)
    print(fmt % (k[0], k[1] + "%", k[2], len(rs), mean(rs, "free_mib"),
                 mean(rs, "guest"), mean(rs, "td_blocks"),
                 mean(rs, "poisoned"), "%.1f" % pct[k],
                 "%.1f-%.1f" % (min(p), max(p)), mean(rs, "pair_pages"),
                 mean(rs, "pair_blocks"), mean(rs, "chunks"),
                 mean(rs, "order1"), mean(rs, "order0")))
points = sorted({k[:2] for k in pct}, key=lambda k: (order[k[0]], int(k[1])))
if not points or not all((p + (s,)) in pct for p in points for s in "abc"):
    print("verdict: incomplete table, no verdict")
    sys.exit(0)
def rule(get, s):
    return all(get(p + (s,)) - get(p + ("c",)) <= 1.0 for p in points)
b_ok, a_ok = rule(pct.get, "b"), rule(pct.get, "a")
worst = max(pct[p + ("b",)] - pct[p + ("c",)] for p in points)
print("(b) - (c) on the means, worst point: %+.1f percentage points" % worst)
reps = sorted({r["rep"] for r in rows})
single = 0
for rep in reps:
    one = {(r["start"], r["fill"], r["strategy"]): float(r["pct"])
           for r in rows if r["rep"] == rep}
    if all(k in one for k in pct) and rule(one.get, "b"):
        single += 1
print("single boots' tables that pass the rule for (b): %d of %d" %
      (single, len(reps)))
if not b_ok:
    print("verdict: the arena stays ((b) poisons more than 1 point more than (c))")
elif a_ok:
    print("verdict: the arena leaves the product; (a) is the placement")
else:
    print("verdict: the arena leaves the product; (b) is the placement")
PY
echo "== placement: $(( $(date +%s) - T0 ))s in all, logs $LOGS"
[ "$BAD" = 0 ]
