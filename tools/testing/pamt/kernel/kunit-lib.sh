# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What run-kunit.sh and make-patches.sh --check share to run the PAMT
# KUnit suites under qemu and read their results.  Sourced, not run.

# 7.3's kunit.py asks qemu for "-accel kvm -accel hvf -accel tcg".  Where
# /dev/kvm opens but cannot run this guest (nested, or no VMX), the guest
# dies at once and kunit.py waits out its timeout.  Keep TCG only: a
# wrapper first in PATH drops every other -accel, then runs the real qemu.
# kunit_tcg_path CACHE writes it into CACHE/qemu-tcg and puts it first in
# PATH; it fails without qemu-system-x86_64.
kunit_tcg_path() {
	local CACHE=$1 QEMU_REAL

	QEMU_REAL=$(command -v qemu-system-x86_64) || return 1
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
}

# cfg_args CFG: kunit.py's options for each configuration, beyond
# .kunitconfig (run-kunit.sh's header says what each is for).
# The kernel's allocation fault injection, which pk_stress_faults turns
# on for its own threads (kasan and kcsan).
FAULTS="--kconfig_add CONFIG_FAULT_INJECTION=y --kconfig_add CONFIG_FAILSLAB=y
 --kconfig_add CONFIG_FAIL_PAGE_ALLOC=y --kconfig_add CONFIG_FAULT_INJECTION_DEBUG_FS=y"

cfg_args() {
	case $1 in
	lockdep) ;;
	kasan) echo "--kconfig_add CONFIG_KASAN=y --kconfig_add CONFIG_KASAN_INLINE=y $FAULTS" ;;
	rt) echo "--kconfig_add CONFIG_EXPERT=y --kconfig_add CONFIG_PREEMPT_RT=y" \
		 "--kconfig_add CONFIG_PROVE_RAW_LOCK_NESTING=y" ;;
	kcsan) echo "--kconfig_add CONFIG_KCSAN=y --kconfig_add CONFIG_DEBUG_KMEMLEAK=y $FAULTS" ;;
	*) echo "unknown configuration $1" >&2; exit 2 ;;
	esac
}

# kunit_count LOG LABEL: per-suite counts from a KTAP console log; prints
# "pass fail skip" last.
kunit_count() {
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

# kunit_scan LOG: console problems outside the expected-WARNING markers.
kunit_scan() {
	awk '
		/pamt_kunit: BEGIN expected WARNING/ { skip = 1; next }
		/pamt_kunit: END expected WARNING/ { skip = 0; next }
		skip { next }
		/WARNING:|BUG:|possible circular locking|sleeping function called from invalid context|inconsistent lock state|Kernel panic|general protection fault/ { print; n++ }
		END { exit n > 0 }
	' "$1"
}

# kunit_exec LOG TIMEOUT CMD...: run a kunit.py exec command line (CMD,
# without --timeout) into LOG.  Under TCG a guest now and then hangs in
# early boot, before KUnit starts (an RCU-tasks or timer stall that no
# test code can cause); kunit.py would wait out all of TIMEOUT.  If the
# console shows no "KTAP version" after KUNIT_BOOT_LIMIT seconds, the boot
# is killed and run once more; the hung console stays as LOG.hung.  A
# guest that hangs after KUnit started is never retried: that is a result.
kunit_exec() {
	local log=$1 timeout=$2 pid rc waited try
	shift 2

	for try in 1 2; do
		setsid "$@" --timeout "$timeout" > "$log" 2>&1 &
		pid=$!
		waited=0
		while kill -0 "$pid" 2>/dev/null; do
			sleep 2
			waited=$((waited + 2))
			if [ "$waited" -ge "${KUNIT_BOOT_LIMIT:-180}" ] &&
			   ! grep -q "KTAP version" "$log"; then
				kill -TERM -- "-$pid" 2>/dev/null
				break
			fi
		done
		wait "$pid"
		rc=$?
		grep -q "KTAP version" "$log" && return "$rc"
		[ "$try" = 2 ] && break
		mv "$log" "$log.hung"
		echo "   no KUnit output after ${waited}s: boot hang, booting once more (console: $log.hung)"
	done
	return "$rc"
}
