#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Model-check pamt_slot.pml: every mode and property of the real model must
# verify with no error, every mutant and every known bug must give a
# counterexample, and the model must name every PAMT_SLOT_* constant of the
# C header.
#
# usage: run_model.sh
# Environment: BUILD (scratch dir), SPIN, CC, JOBS (checks run at once;
# default: the number of CPUs).

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL=$HERE/pamt_slot.pml
HEADER=$HERE/../../../../arch/x86/virt/vmx/tdx/pamt_internal.h
BUILD=${BUILD:-/tmp/pamt-model.$(id -u)}
SPIN=${SPIN:-spin}
CC=${CC:-gcc}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
passed=0
failed=0
names=()

pass() { passed=$((passed + 1)); echo "PASS  $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

command -v "$SPIN" >/dev/null 2>&1 || {
	echo "spin not found (apt-get install spin)"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$BUILD" || exit 1
t_start=$(date +%s)

# run_check NAME EXPECT SPIN_FLAGS CC_FLAGS PAN_FLAGS
#   EXPECT is "ok" (no error, full search) or "cex" (a counterexample).
#   Writes one result line, "PASS ..." or "FAIL ...", to $BUILD/NAME/result.
run_check() {
	local name=$1 expect=$2 sflags=$3 cflags=$4 pflags=$5
	local dir=$BUILD/$name res
	res() { echo "$*" >"$dir/result"; }
	rm -rf "$dir" && mkdir -p "$dir" && cp "$MODEL" "$dir/" ||
		{ mkdir -p "$dir"; res "FAIL  $name: scratch dir"; return; }
	if ! (cd "$dir" && $SPIN -a $sflags pamt_slot.pml >spin.log 2>&1 &&
	      $CC -O2 -w -DCOLLAPSE $cflags -o pan pan.c >cc.log 2>&1); then
		res "FAIL  $name: spin -a or cc failed (see $dir)"; return
	fi
	local TIMEFORMAT='%R %U'
	(cd "$dir" && { time ./pan -m100000 $pflags >pan.log 2>&1; } 2>time.log)
	local secs cpu errors stored what info
	read -r secs cpu <"$dir/time.log"
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n1)
	stored=$(awk '/states, stored/ {print $1; exit}' "$dir/pan.log")
	what=$(grep -m1 -E '^pan:1:|^pan: (.*violat|acceptance)' "$dir/pan.log" | cut -c1-100)
	info="$stored states, ${secs}s (cpu ${cpu}s) [spin $sflags | cc $cflags | pan $pflags]"
	if [ -z "$errors" ]; then
		res "FAIL  $name: pan did not finish (see $dir/pan.log)"
	elif [ "$expect" = ok ]; then
		if [ "$errors" -ne 0 ]; then
			res "FAIL  $name: $errors error(s): $what; $info (trail in $dir)"
		elif grep -qE 'max search depth too small|out of memory|hash table is full' "$dir/pan.log"; then
			res "FAIL  $name: search incomplete; $info"
		else
			res "PASS  $name: 0 errors, $info"
		fi
	elif [ "$errors" -ne 0 ]; then
		res "PASS  $name: counterexample as expected: $what; $info"
	else
		res "FAIL  $name: no counterexample; $info"
	fi
}

# check ...: as run_check, at most $JOBS at once; results print in order.
check() {
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	names+=("$1")
	run_check "$@" &
}

# The model must use every state constant of the C header.
if python3 "$HERE/check_names.py" "$HEADER" "$MODEL"; then
	pass "names: every PAMT_SLOT_* constant of pamt_internal.h is in the model"
else
	fail "names: the model lacks PAMT_SLOT_* constants of pamt_internal.h"
fi
# ... and that check must be able to fail.
sed 's/PAMT_SLOT_LEAKED/PAMT_SLOT_LEAKY/g' "$MODEL" >"$BUILD/renamed.pml"
if python3 "$HERE/check_names.py" "$HEADER" "$BUILD/renamed.pml" >/dev/null; then
	fail "names: the check missed a renamed constant"
else
	pass "names: the check catches a renamed constant"
fi
# ... and a flag that overlaps the refcount field, in the C header.
sed 's/^#define PAMT_SLOT_INSTALLED\tBIT(23)/#define PAMT_SLOT_INSTALLED\tBIT(22)/' \
	"$HEADER" >"$BUILD/overlap.h"
if ! grep -q 'BIT(22)' "$BUILD/overlap.h"; then
	fail "names: could not build the overlapping header"
elif python3 "$HERE/check_names.py" "$BUILD/overlap.h" "$MODEL" >/dev/null; then
	fail "names: the check missed a flag inside the refcount field"
else
	pass "names: the check catches a flag inside the refcount field"
fi

SAFE="-DSAFETY -DNOCLAIM"	# assertions and invalid end states
INV="-DSAFETY"			# with "-N inv": the state invariants
LIVE="-a -f"			# acceptance cycles under weak fairness

# Longest first, so that the two cores finish together.
check magazine-get-done	ok "" "" "$LIVE -N get_done"
# The idle cap's sweep from put.
check magazine-cap-safety ok "-DCAP_SWEEP" "$SAFE" ""
check magazine-cap-inv	  ok "-DCAP_SWEEP" "$INV" "-N inv"
check magazine-transit-ends ok "" "" "$LIVE -N transit_ends"
check magazine-safety	ok "" "$SAFE" ""
check magazine-inv	ok "" "$INV" "-N inv"

# One getter on a range whose other pages a TD uses: its second
# reference meets PAMT_SLOT_REF_MAX.
check magazine-held-get-done	ok "-DHELD" "" "$LIVE -N get_done"
check magazine-held-transit-ends ok "-DHELD" "" "$LIVE -N transit_ends"
check magazine-held-safety	ok "-DHELD" "$SAFE" ""
check magazine-held-inv		ok "-DHELD" "$INV" "-N inv"

check mutant-no-transit		cex "-DMUTANT_NO_TRANSIT" "$SAFE" ""
check mutant-reclaim-no-recheck	cex "-DMUTANT_RECLAIM_NO_RECHECK" "$SAFE" ""
check mutant-add-fail-loses-pair cex "-DMUTANT_ADD_FAIL_LOSES_PAIR" "$SAFE" ""
check mutant-busy-keeps-transit	cex "-DMUTANT_BUSY_KEEPS_TRANSIT" "" "$LIVE -N transit_ends"
# After a BUSY REMOVE's backoff, the remover takes the slot again without
# checking that it still holds the word it published: a get revived it.
check mutant-reown-blind	cex "-DMUTANT_REOWN_BLIND" "$SAFE" ""
# A get past PAMT_SLOT_REF_MAX: the count leaves its field's bound.
check mutant-overflow-no-check	cex "-DHELD -DMUTANT_OVERFLOW_NO_CHECK" "$INV" "-N inv"
# A get that fails leaves its count in the word; owners that publish with
# a store lose the counts of the gets waiting on them.
check mutant-no-uncount		cex "-DMUTANT_NO_UNCOUNT" "$SAFE" ""
check mutant-publish-store	cex "-DMUTANT_PUBLISH_STORE" "$SAFE" ""

wait
for name in "${names[@]}"; do
	if [ -f "$BUILD/$name/result" ]; then
		line=$(cat "$BUILD/$name/result")
	else
		line="FAIL  $name: no result (see $BUILD/$name)"
	fi
	echo "$line"
	case $line in
	PASS*) passed=$((passed + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
done
echo "total: $(( $(date +%s) - t_start ))s wall, $JOBS at once"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
