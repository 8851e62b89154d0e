#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The pair-page placement experiment (issue 29, item 3): does the page
# allocator, with pair pages allocated __GFP_RECLAIMABLE, keep them out of
# the 2M blocks that TD memory uses as well as the pair arena does?
#
# Grafts the cache into a 7.3 tree of its own, adds the experiment's suite
# (placement/placement_kunit.c, option INTEL_TDX_PAMT_PLACEMENT_TEST, which
# no other configuration enables), builds it without lockdep, boots it once
# per point of the table under qemu (TCG) and prints the table and the
# issue's verdict.  A measurement: it fails only when a boot or a sanity
# check fails, never on the figures.
#
# Usage: placement.sh [-m MIB] [-c PCT] [-p "POINT..."]
#   -m  guest memory in MiB (default 4096)
#   -c  fragmented start: the tmpfs file's share of free memory, in
#       percent, before half its pages are punched out (default 80)
#   -p  only these points, 0 to 11 (default: all, one boot each)
# Env: PAMT_CACHE (default /var/cache/tdx-pamt) holds the tree
# (linux-7.3-placement: never the tree that make kunit builds), the build
# folder build-placement and the logs, placement-logs/run-<time>/.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
TREE=${PAMT_PLACEMENT_TREE:-$CACHE/linux-7.3-placement}
B=$CACHE/build-placement
MEM=4096
CACHE_PCT=80
POINTS="0 1 2 3 4 5 6 7 8 9 10 11"
TDX=arch/x86/virt/vmx/tdx

while getopts "m:c:p:" opt; do
	case $opt in
	m) MEM=$OPTARG ;;
	c) CACHE_PCT=$OPTARG ;;
	p) POINTS=$OPTARG ;;
	*) sed -n '4,21p' "$0"; exit 2 ;;
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
	CONFIG_INTEL_TDX_PAMT_PLACEMENT_TEST=y >> "$KCFG"

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
for p in $POINTS; do
	LOG=$LOGS/point-$p.log
	t=$(date +%s)
	kunit_exec "$LOG" "${PAMT_KUNIT_TIMEOUT:-1200}" "${KUNIT[@]}" exec \
		--arch=x86_64 --build_dir="$B" --raw_output=all \
		--qemu_args "-m $MEM -smp 2" \
		--kernel_args "pamt_kunit.placement=$p pamt_kunit.placement_cache=$CACHE_PCT kunit.timeout=1200" \
		'tdx_dpamt_placement'
	res=$(kunit_count "$LOG" "point $p")
	read -r np nf _ <<< "$(echo "$res" | tail -1)"
	echo "== point $p: $(( $(date +%s) - t ))s, $np passed, $nf failed"
	if [ "$nf" != 0 ] || [ "$np" = 0 ] ||
	   ! grep -q 'placement: start=' "$LOG" || ! kunit_scan "$LOG"; then
		echo "   FAILED, log $LOG"
		echo "$res" | sed '$d'
		BAD=$((BAD + 1))
	fi
done

# The table, then the issue's rule: (b) within 1 percentage point of (c)
# at every point: the arena goes ((a) if it does as well); else it stays.
cat "$LOGS"/point-*.log | sed -n 's/.*placement: \(start=.*\)$/\1/p' |
	sort -u > "$LOGS/table.txt"
python3 - "$LOGS/table.txt" <<'PY'
import sys
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[1])]
order = {"clean": 0, "frag": 1}
rows.sort(key=lambda r: (order[r["start"]], int(r["fill"]), r["strategy"]))
hdr = ("start", "fill", "strat", "free MiB", "guest pages", "TD 2M",
       "poisoned", "%", "pair pages", "pair 2M", "chunks", "order-1",
       "order-0")
fmt = "%-5s %4s %5s %8s %11s %6s %8s %6s %10s %7s %6s %7s %7s"
print(fmt % hdr)
pct = {}
for r in rows:
    print(fmt % (r["start"], r["fill"] + "%", r["strategy"], r["free_mib"],
                 r["guest"], r["td_blocks"], r["poisoned"], r["pct"],
                 r["pair_pages"], r["pair_blocks"], r.get("chunks", "-"),
                 r.get("order1", "-"),
                 r.get("order0", "-")))
    pct[(r["start"], r["fill"], r["strategy"])] = float(r["pct"])
points = sorted({k[:2] for k in pct}, key=lambda k: (order[k[0]], int(k[1])))
full = all((p + (s,)) in pct for p in points for s in "abc")
if not points or not full:
    print("verdict: incomplete table, no verdict")
    sys.exit(0)
b_ok = all(pct[p + ("b",)] - pct[p + ("c",)] <= 1.0 for p in points)
a_ok = all(pct[p + ("a",)] - pct[p + ("c",)] <= 1.0 for p in points)
worst = max(pct[p + ("b",)] - pct[p + ("c",)] for p in points)
print("(b) - (c), worst point: %+.1f percentage points" % worst)
if not b_ok:
    print("verdict: the arena stays ((b) poisons more than 1 point more than (c))")
elif a_ok:
    print("verdict: the arena leaves the product; (a) is the placement")
else:
    print("verdict: the arena leaves the product; (b) is the placement")
PY
echo "== placement: $(( $(date +%s) - T0 ))s in all, logs $LOGS"
[ "$BAD" = 0 ]
