#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the grafted 7.3 tree and run every PAMT KUnit suite under qemu in
# three configurations, then prove each checker fires with the canaries.
# All three have .kunitconfig's PROVE_LOCKING + DEBUG_ATOMIC_SLEEP:
#   kasan    + KASAN (inline) + allocation fault injection; runs the
#            lockdep canaries, the non-RT ones
#   rt       + PREEMPT_RT (+ PROVE_RAW_LOCK_NESTING)
#   kcsan    + KCSAN (the kernel's default rules) + kmemleak, whose scan
#            the last suite asks for, + allocation fault injection
# A fourth, lockdep (.kunitconfig alone), is the quickest to build and
# boot for one's own runs (-c lockdep); make kunit leaves it out, as every
# configuration above has its lockdep.
#
# Usage: run-kunit.sh [-c "kasan rt kcsan lockdep"] [-s SUITE_GLOB] [-n]
#   -c  these configurations (default: kasan rt kcsan)
#   -s  only the suites matching this glob, e.g. tdx_pamt_slot or
#       'tdx_pamt_mag.pk_evict*' (default: tdx_pamt_*)
#   -n  skip the canaries
# Env: PAMT_CACHE (default /var/cache/tdx-pamt) holds the tree, the build
# folders build-<config>, and the logs: every run gets its own folder
# logs/run-<time>/ (build and console logs of each configuration), never
# overwritten; logs/latest and logs/last-failed point at the newest run
# and at the newest run that failed.  The 20 newest runs are kept, and the
# last failed one whatever its age.
#
# Fails on any failed case, on a configuration whose console log does not
# reach the end of the run (a kunit.py/qemu timeout is reported as such),
# and on WARNING:, BUG:, a lockdep report or a sleep-in-atomic report
# anywhere in a console log, except between the markers that the WARN
# tests print around their one expected warning.
# Last line: "N passed, N failed" over KUnit cases (a caught canary
# counts as passed, one that was not caught as failed).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
CONFIGS="kasan rt kcsan"
GLOB='tdx_pamt_*'
CANARY=1
JOBS=$(nproc)

while getopts "c:s:n" opt; do
	case $opt in
	c) CONFIGS=$OPTARG ;;
	s) GLOB=$OPTARG ;;
	n) CANARY=0 ;;
	*) sed -n '4,20p' "$0"; exit 2 ;;
	esac
done

T0=$(date +%s)
TREE=$("$HERE/graft.sh") || { echo "graft failed"; echo "0 passed, 1 failed"; exit 1; }
STAMP=$(date +%Y%m%d-%H%M%S)
LOGS=$CACHE/logs/run-$STAMP
mkdir -p "$LOGS"
ln -sfn "run-$STAMP" "$CACHE/logs/latest"
# qemu's own limit per boot, passed to kunit.py --timeout.
EXEC_TIMEOUT=${PAMT_KUNIT_TIMEOUT:-1200}
KUNITCONFIG=$TREE/arch/x86/virt/vmx/tdx/tests/.kunitconfig

# shellcheck source-path=SCRIPTDIR source=kunit-lib.sh
. "$HERE/kunit-lib.sh"
kunit_tcg_path "$CACHE" ||
	{ echo "no qemu-system-x86_64"; echo "0 passed, 1 failed"; exit 1; }
KUNIT=(python3 "$TREE/tools/testing/kunit/kunit.py")
QEMU_ARGS="-smp 4"

PASSED=0
FAILED=0
SKIPPED=0

for cfg in $CONFIGS; do
	B=$CACHE/build-$cfg
	LOG=$LOGS/kunit-$cfg.log
	t=$(date +%s)
	echo "== $cfg: build ($B)"
	# shellcheck disable=SC2046
	if ! "${KUNIT[@]}" build --arch=x86_64 --kunitconfig="$KUNITCONFIG" \
		--build_dir="$B" --jobs "$JOBS" $(cfg_args "$cfg") \
		> "$LOGS/build-$cfg.log" 2>&1; then
		echo "   build FAILED, $(( $(date +%s) - t ))s, log $LOGS/build-$cfg.log"
		tail -30 "$LOGS/build-$cfg.log" | sed 's/^/     /'
		FAILED=$((FAILED + 1))
		continue
	fi
	echo "   built in $(( $(date +%s) - t ))s"
	t=$(date +%s)
	kunit_exec "$LOG" "$EXEC_TIMEOUT" "${KUNIT[@]}" exec --arch=x86_64 \
		--build_dir="$B" --qemu_args "$QEMU_ARGS" --raw_output=all "$GLOB"
	rc=$?
	el=$(( $(date +%s) - t ))
	echo "   run: kunit.py exit $rc, ${el}s, log $LOG"
	res=$(kunit_count "$LOG" "$cfg")
	echo "$res" | sed '$d'
	read -r p f s <<< "$(echo "$res" | tail -1)"
	PASSED=$((PASSED + p)); FAILED=$((FAILED + f)); SKIPPED=$((SKIPPED + s))
	if ! grep -q "kunit executor\|KTAP version" "$LOG"; then
		echo "   no kernel output; boot failed:"; tail -30 "$LOG"
		FAILED=$((FAILED + 1))
	elif [ "$GLOB" = 'tdx_pamt_*' ] &&
	     ! grep -qE "^(\[[^]]*\] *)?(ok|not ok) [0-9]+ tdx_pamt_canary" "$LOG"; then
		# The canary suite runs last: without its result line, the
		# console log stops early.
		if [ "$el" -ge $((EXEC_TIMEOUT - 5)) ]; then
			echo "   TIMEOUT: qemu ran past kunit.py --timeout $EXEC_TIMEOUT s; results above are partial"
		else
			echo "   INCOMPLETE: the console log stops before the last suite (crash or qemu exit, not a timeout: ${el}s)"
		fi
		tail -5 "$LOG" | sed 's/^/     /'
		FAILED=$((FAILED + 1))
	fi
	if ! kunit_scan "$LOG" > "$LOGS/problems-$cfg.txt"; then
		echo "   console problems in $cfg:"; sed 's/^/     /' "$LOGS/problems-$cfg.txt"
		FAILED=$((FAILED + 1))
	fi
done

# Each canary in its own boot: lockdep and the sleep check turn themselves
# off after one report.  Each must fail, with its checker's report; a
# canary run as canary_report passes as a test, and its checker's report
# is the result (KCSAN does not fail the test it reports in).
canary_boot() {
	local want=$1 cfg=$2 test=$3 pattern=$4 log=$LOGS/canary-$2-$3.log

	kunit_exec "$log" 600 "${KUNIT[@]}" exec --arch=x86_64 \
		--build_dir="$CACHE/build-$cfg" --qemu_args "$QEMU_ARGS" \
		--raw_output=all --kernel_args pamt_kunit.canary=1 \
		"tdx_pamt_canary.$test"
	if grep -qE "^(\[[^]]*\] *)? *$want [0-9]+ $test" "$log" && grep -q "$pattern" "$log"; then
		echo "  [$cfg] canary $test: caught ($pattern)"
		PASSED=$((PASSED + 1))
	else
		echo "  [$cfg] canary $test: NOT CAUGHT (log $log)"
		FAILED=$((FAILED + 1))
	fi
}

canary() { canary_boot "not ok" "$@"; }
canary_report() { canary_boot "ok" "$@"; }

if [ "$CANARY" = 1 ]; then
	echo "== canaries"
	for cfg in $CONFIGS; do
		[ -f "$CACHE/build-$cfg/arch/x86/boot/bzImage" ] || continue
		case $cfg in
		lockdep|kasan)
			canary "$cfg" pk_canary_lock_inversion "possible circular locking dependency detected"
			canary "$cfg" pk_canary_sleep_in_atomic "BUG: sleeping function called from invalid context"
			canary "$cfg" pk_canary_raw_nesting "BUG: Invalid wait context"
			canary "$cfg" pk_canary_transit_sleeping_lock "BUG: Invalid wait context"
			;;&
		kasan)
			canary kasan pk_canary_use_after_free "BUG: KASAN: slab-use-after-free"
			;;
		kcsan)
			canary kcsan pk_canary_leak "unreferenced object"
			canary_report kcsan pk_canary_data_race "BUG: KCSAN: data-race in pk_canary_data_race"
			;;
		rt)
			canary rt pk_canary_lock_inversion "possible circular locking dependency detected"
			canary rt pk_canary_sleep_in_atomic "BUG: sleeping function called from invalid context"
			canary rt pk_canary_raw_nesting "BUG: Invalid wait context"
			canary rt pk_canary_transit_sleeping_lock "BUG: Invalid wait context"
			;;
		esac
	done
fi

if [ "$FAILED" != 0 ]; then
	ln -sfn "run-$STAMP" "$CACHE/logs/last-failed"
fi
# Keep the 20 newest runs and the last failed one.
keep=$(readlink "$CACHE/logs/last-failed" 2>/dev/null || true)
ls -1d "$CACHE"/logs/run-* 2>/dev/null | sort -r | tail -n +21 |
	while read -r d; do
		[ "$(basename "$d")" = "$keep" ] || rm -rf "$d"
	done

echo "== kunit: $SKIPPED skipped, $(( $(date +%s) - T0 ))s in all, logs $LOGS"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
