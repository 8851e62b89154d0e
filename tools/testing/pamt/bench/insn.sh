#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Instructions per fast-path get+put pair, per strategy, under callgrind.
# usage: insn.sh PAMT_INSN N OUTDIR
set -e
bin=$1 n=$2 out=$3
if ! command -v valgrind >/dev/null 2>&1; then
	echo "bench-insn: valgrind not found (apt-get install valgrind)" >&2
	exit 1
fi
echo "instructions per fast-path get+put pair on an installed slot (callgrind Ir, $n pairs;"
echo "includes both calls through a function pointer; shim per-CPU counters cost a few more"
echo "instructions than the kernel's this_cpu_inc)"
printf "%-9s %12s %10s\n" strategy "Ir total" "Ir/pair"
for s in lock atomic lean magazine; do
	valgrind --tool=callgrind --toggle-collect=insn_pair \
		--callgrind-out-file="$out/callgrind.$s" "$bin" $s "$n" \
		>/dev/null 2>"$out/callgrind.$s.log"
	tot=$(awk '/^(summary|totals):/ { print $2; exit }' "$out/callgrind.$s")
	per=$(awk -v t="$tot" -v n="$n" 'BEGIN { printf "%.1f", t / n }')
	printf "%-9s %12s %10s\n" $s "$tot" "$per"
	eval "per_$s=$per"
done
# The far path of a sparse table: not the fast path the targets are for.
valgrind --tool=callgrind --toggle-collect=insn_pair \
	--callgrind-out-file="$out/callgrind.far" "$bin" magazine-far "$n" \
	>/dev/null 2>"$out/callgrind.far.log"
tot=$(awk '/^(summary|totals):/ { print $2; exit }' "$out/callgrind.far")
per=$(awk -v t="$tot" -v n="$n" 'BEGIN { printf "%.1f", t / n }')
printf "%-9s %12s %10s  (a slot in a far block, outside the flat window)\n" \
	magazine "$tot" "$per"
awk -v m="$per_magazine" -v a="$per_atomic" 'BEGIN {
	r = m / a
	printf "target: magazine <= 1.1x atomic: %.2fx: %s\n", r, (r <= 1.1 ? "met" : "MISSED")
	printf "target: magazine <= 60 per pair: %.1f: %s\n", m, (m <= 60 ? "met" : "MISSED")
}'
# The slow path (magazine): a top-up, a get that ADDs, the put, the
# REMOVE of the idle slot (pamt_slot_remove(), as the shrinker does it);
# with the task in a memcg, the charge, its move to the range and the
# uncharge come on top (the shim's objcg calls).
ns=$((n / 100))
for s in slow slow-memcg; do
	valgrind --tool=callgrind --toggle-collect=insn_slow \
		--callgrind-out-file="$out/callgrind.$s" "$bin" $s "$ns" \
		>/dev/null 2>"$out/callgrind.$s.log"
	tot=$(awk '/^(summary|totals):/ { print $2; exit }' "$out/callgrind.$s")
	per=$(awk -v t="$tot" -v n="$ns" 'BEGIN { printf "%.1f", t / n }')
	printf "%-10s %12s %10s  (top-up, ADD, put, REMOVE, per cycle)\n" $s "$tot" "$per"
done
