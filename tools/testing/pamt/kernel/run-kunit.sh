#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the grafted 7.3 tree and run every PAMT KUnit suite under qemu in
# three configurations, then prove each checker fires with the canaries:
#   lockdep  PROVE_LOCKING + DEBUG_ATOMIC_SLEEP + PREEMPT
#   kasan    the same + KASAN (inline)
#   rt       the same + PREEMPT_RT (+ PROVE_RAW_LOCK_NESTING)
#
# Usage: run-kunit.sh [-c "lockdep kasan rt"] [-s SUITE_GLOB] [-n]
#   -c  only these configurations (default: all three)
#   -s  only the suites matching this glob, e.g. tdx_pamt_func or
#       'tdx_pamt_func.pk_evict*' (default: tdx_pamt_*)
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
CONFIGS="lockdep kasan rt"
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
KUNITCONFIG=$TREE/arch/x86/virt/vmx/tdx/.kunitconfig

# 7.3's kunit.py asks qemu for "-accel kvm -accel hvf -accel tcg".  Where
# /dev/kvm opens but cannot run this guest (nested, or no VMX), the guest
# dies at once and kunit.py waits out its timeout.  Keep TCG only: a
# wrapper first in PATH drops every other -accel, then runs the real qemu.
QEMU_REAL=$(command -v qemu-system-x86_64) ||
	{ echo "no qemu-system-x86_64"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$CACHE/qemu-tcg"
cat > "$CACHE/qemu-tcg/qemu-system-x86_64" <<EOF
#!/bin/bash
args=()
while [ \$# -gt 0 ]; do
	if [ "\$1" = -accel ] && [ \$# -ge 2 ]; then
		[ "\$2" = tcg ] && args+=(-accel tcg)
		shift 2
		continue
	fi
	args+=("\$1")
	shift
done
exec $QEMU_REAL "\${args[@]}"
EOF
chmod +x "$CACHE/qemu-tcg/qemu-system-x86_64"
export PATH=$CACHE/qemu-tcg:$PATH
KUNIT="python3 $TREE/tools/testing/kunit/kunit.py"
QEMU_ARGS="-smp 4"

PASSED=0
FAILED=0
SKIPPED=0

cfg_args() {
	case $1 in
	lockdep) ;;
	kasan) echo "--kconfig_add CONFIG_KASAN=y --kconfig_add CONFIG_KASAN_INLINE=y" ;;
	rt) echo "--kconfig_add CONFIG_EXPERT=y --kconfig_add CONFIG_PREEMPT_RT=y" \
		 "--kconfig_add CONFIG_PROVE_RAW_LOCK_NESTING=y" ;;
	*) echo "unknown configuration $1" >&2; exit 2 ;;
	esac
}

# Per-suite counts from a KTAP console log; prints "pass fail skip" last.
count_cases() {
	python3 - "$1" "$2" <<'PY'
import re, sys
log, cfg = sys.argv[1], sys.argv[2]
# suite -> [plan, {number: (status, name)}]; a result line that the
# console cut and printk replayed ("** replaying previous printk
# message **") appears twice under one number: the last one wins.
suites, cur = {}, None
for line in open(log, errors="replace"):
    line = re.sub(r"^\[[^\]]*\]\s?", "", line.rstrip("\n"))
    m = re.match(r"^\s*# Subtest: (\S+)", line)
    if m and not line.startswith(" " * 8):
        cur = m.group(1)
        suites.setdefault(cur, [None, {}])
        continue
    m = re.match(r"^    1\.\.(\d+)$", line)
    if m and cur and suites[cur][0] is None:
        suites[cur][0] = int(m.group(1))
        continue
    m = re.match(r"^    (not ok|ok) (\d+) (\S+)(.*)$", line)
    if m and cur:
        st = "skip" if "# SKIP" in m.group(4) else ("pass" if m.group(1) == "ok" else "fail")
        suites[cur][1][int(m.group(2))] = (st, m.group(3))
tp = tf = ts = 0
for name, (plan, res) in suites.items():
    p = sum(1 for st, _ in res.values() if st == "pass")
    f = sum(1 for st, _ in res.values() if st == "fail")
    sk = sum(1 for st, _ in res.values() if st == "skip")
    bad = [n for st, n in res.values() if st == "fail"]
    missing = (plan or 0) - len(res)
    if missing > 0:
        f += missing
        bad.append(f"{missing} without a result")
    print(f"  [{cfg}] {name}: {p} passed, {f} failed, {sk} skipped"
          + (f"  FAILED: {' '.join(bad)}" if bad else ""))
    tp, tf, ts = tp + p, tf + f, ts + sk
if not suites:
    print(f"  [{cfg}] no KUnit results in {log}")
    tf += 1
print(tp, tf, ts)
PY
}

# Console problems outside the expected-WARNING markers.
scan_log() {
	awk '
		/pamt_kunit: BEGIN expected WARNING/ { skip = 1; next }
		/pamt_kunit: END expected WARNING/ { skip = 0; next }
		skip { next }
		/WARNING:|BUG:|possible circular locking|sleeping function called from invalid context|inconsistent lock state|Kernel panic|general protection fault/ { print; n++ }
		END { exit n > 0 }
	' "$1"
}

for cfg in $CONFIGS; do
	B=$CACHE/build-$cfg
	LOG=$LOGS/kunit-$cfg.log
	t=$(date +%s)
	echo "== $cfg: build ($B)"
	# shellcheck disable=SC2046
	if ! $KUNIT build --arch=x86_64 --kunitconfig="$KUNITCONFIG" \
		--build_dir="$B" --jobs "$JOBS" $(cfg_args "$cfg") \
		> "$LOGS/build-$cfg.log" 2>&1; then
		echo "   build FAILED, $(( $(date +%s) - t ))s, log $LOGS/build-$cfg.log"
		tail -30 "$LOGS/build-$cfg.log" | sed 's/^/     /'
		FAILED=$((FAILED + 1))
		continue
	fi
	echo "   built in $(( $(date +%s) - t ))s"
	t=$(date +%s)
	$KUNIT exec --arch=x86_64 --build_dir="$B" --qemu_args "$QEMU_ARGS" \
		--timeout "$EXEC_TIMEOUT" --raw_output=all "$GLOB" > "$LOG" 2>&1
	rc=$?
	el=$(( $(date +%s) - t ))
	echo "   run: kunit.py exit $rc, ${el}s, log $LOG"
	res=$(count_cases "$LOG" "$cfg")
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
	if ! scan_log "$LOG" > "$LOGS/problems-$cfg.txt"; then
		echo "   console problems in $cfg:"; sed 's/^/     /' "$LOGS/problems-$cfg.txt"
		FAILED=$((FAILED + 1))
	fi
done

# Each canary in its own boot: lockdep and the sleep check turn themselves
# off after one report.  Each must fail, with its checker's report.
canary() {
	local cfg=$1 test=$2 pattern=$3 log=$LOGS/canary-$1-$2.log

	$KUNIT exec --arch=x86_64 --build_dir="$CACHE/build-$cfg" \
		--qemu_args "$QEMU_ARGS" --timeout 600 --raw_output=all \
		--kernel_args pamt_kunit.canary=1 \
		"tdx_pamt_canary.$test" > "$log" 2>&1
	if grep -qE "^(\[[^]]*\] *)? *not ok [0-9]+ $test" "$log" && grep -q "$pattern" "$log"; then
		echo "  [$cfg] canary $test: caught ($pattern)"
		PASSED=$((PASSED + 1))
	else
		echo "  [$cfg] canary $test: NOT CAUGHT (log $log)"
		FAILED=$((FAILED + 1))
	fi
}

if [ "$CANARY" = 1 ]; then
	echo "== canaries"
	for cfg in $CONFIGS; do
		[ -f "$CACHE/build-$cfg/arch/x86/boot/bzImage" ] || continue
		case $cfg in
		lockdep)
			canary lockdep pk_canary_lock_inversion "possible circular locking dependency detected"
			canary lockdep pk_canary_sleep_in_atomic "BUG: sleeping function called from invalid context"
			canary lockdep pk_canary_raw_nesting "BUG: Invalid wait context"
			canary lockdep pk_canary_transit_sleeping_lock "BUG: Invalid wait context"
			;;
		kasan)
			canary kasan pk_canary_use_after_free "BUG: KASAN: slab-use-after-free"
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
