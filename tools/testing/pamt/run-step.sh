#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# run-step.sh LOG TITLE CMD...: run one step of "make check" with the
# sanitizers set to fail hard, show its tail, append its summary to LOG.
# A step that exits non-zero without a failing summary line adds one.
log=$1 title=$2
shift 2
echo "== $title"
out=$(mktemp)
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
	"$@" >"$out" 2>&1
rc=$?
bad='^(not ok|  (ops|core|fake):|stress:|mutant|tdx-pamt-fake: VIOLATION: concurrent)'
grep -E "$bad|FAIL|ERROR|WARNING: ThreadSanitizer|Sanitizer" "$out" | head -40
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
if [ -z "$summary" ] || { [ $rc -ne 0 ] && echo "$summary" | grep -q ' 0 failed$'; }; then
	tail -n 30 "$out"
	summary="0 passed, 1 failed"
fi
echo "$summary"
echo "$summary" >>"$log"
rm -f "$out"
exit 0
