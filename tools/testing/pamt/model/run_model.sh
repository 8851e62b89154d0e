#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Model-check pamt_slot.pml: every mode and property of the real model must
# verify with no error, every mutant must give a counterexample, and the
# model must name every PAMT_SLOT_* constant of the C header.
#
# usage: run_model.sh [model|findings]
# Environment: BUILD (scratch dir), SPIN, CC, PAN_MEM (pan -w bits).

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL=$HERE/pamt_slot.pml
HEADER=$HERE/../../../../arch/x86/virt/vmx/tdx/pamt_internal.h
BUILD=${BUILD:-/tmp/pamt-model.$(id -u)}
SPIN=${SPIN:-spin}
CC=${CC:-gcc}
WHAT=${1:-model}
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "PASS  $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

command -v "$SPIN" >/dev/null 2>&1 || {
	echo "spin not found (apt-get install spin)"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$BUILD" || exit 1

# check NAME EXPECT SPIN_FLAGS CC_FLAGS PAN_FLAGS
#   EXPECT is "ok" (no error, full search) or "cex" (a counterexample).
check() {
	name=$1 expect=$2 sflags=$3 cflags=$4 pflags=$5
	dir=$BUILD/$name
	rm -rf "$dir" && mkdir -p "$dir" && cp "$MODEL" "$dir/" || { fail "$name: scratch dir"; return; }
	if ! (cd "$dir" && $SPIN -a $sflags pamt_slot.pml >spin.log 2>&1 &&
	      $CC -O2 -w -DCOLLAPSE $cflags -o pan pan.c >cc.log 2>&1); then
		fail "$name: spin -a or cc failed (see $dir)"; return
	fi
	start=$(date +%s.%N)
	(cd "$dir" && ./pan -m100000 $pflags >pan.log 2>&1)
	secs=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | head -n1)
	stored=$(awk '/states, stored/ {print $1; exit}' "$dir/pan.log")
	what=$(grep -m1 -E '^pan:1:|^pan: (.*violat|acceptance)' "$dir/pan.log" | cut -c1-100)
	info="$stored states, ${secs}s [spin $sflags | cc $cflags | pan $pflags]"
	if [ -z "$errors" ]; then
		fail "$name: pan did not finish (see $dir/pan.log)"
	elif [ "$expect" = ok ]; then
		if [ "$errors" -ne 0 ]; then
			fail "$name: $errors error(s): $what; $info (trail in $dir)"
		elif grep -qE 'max search depth too small|out of memory|hash table is full' "$dir/pan.log"; then
			fail "$name: search incomplete; $info"
		else
			pass "$name: 0 errors, $info"
		fi
	else
		if [ "$errors" -ne 0 ]; then
			pass "$name: counterexample as expected: $what; $info"
		else
			fail "$name: mutant NOT caught; $info"
		fi
	fi
}

SAFE="-DSAFETY -DNOCLAIM"	# assertions and invalid end states
INV="-DSAFETY"			# with "-N inv": the state invariants
LIVE="-a -f"			# acceptance cycles under weak fairness

if [ "$WHAT" = findings ]; then
	# Not part of "make model": without a bound on BUSY answers, a getter
	# can starve against the shrinker (see README, "Findings").
	check finding-get-starves cex "" "" "$LIVE -N get_done"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
fi

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

for mode in magazine eager; do
	m=""; [ $mode = eager ] && m="-DEAGER"
	check "$mode-safety"	ok "$m" "$SAFE" ""
	check "$mode-inv"	ok "$m" "$INV" "-N inv"
	check "$mode-get-done"	ok "$m -DBUSY_MAX=2" "" "$LIVE -N get_done"
	check "$mode-transit-ends" ok "$m" "" "$LIVE -N transit_ends"
done
# The idle cap's sweep from put: magazine mode only (eager put never idles).
check magazine-cap-safety ok "-DCAP_SWEEP" "$SAFE" ""
check magazine-cap-inv	  ok "-DCAP_SWEEP" "$INV" "-N inv"

check mutant-no-transit		cex "-DMUTANT_NO_TRANSIT" "$SAFE" ""
check mutant-put-early-clear	cex "-DEAGER -DMUTANT_PUT_EARLY_CLEAR" "$SAFE" ""
check mutant-evict-no-recheck	cex "-DMUTANT_EVICT_NO_RECHECK" "$SAFE" ""
check mutant-add-fail-loses-pair cex "-DMUTANT_ADD_FAIL_LOSES_PAIR" "$SAFE" ""
check mutant-busy-keeps-transit	cex "-DMUTANT_BUSY_KEEPS_TRANSIT" "" "$LIVE -N transit_ends"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
