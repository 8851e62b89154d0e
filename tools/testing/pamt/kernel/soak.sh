#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak: the KUnit stress suite (tdx_pamt_stress: one thread per
# CPU, allocation faults injected by failslab and fail_page_alloc, the
# fake module failing ADDs and REMOVEs) booted again and again for
# SOAK_MIN minutes (default 10), the first half under KASAN, the second
# under KCSAN with kmemleak.  Each boot is a fresh qemu; the configurations
# are run-kunit.sh's, built in the same cache folders (PAMT_CACHE).
# Prints the boots, the operations, the faults injected and every report
# found (a failed case, or a console line run-kunit.sh fails on), then
# "N passed, N failed" over the boots.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
MIN=${SOAK_MIN:-10}
TREE=$("$HERE/graft.sh") || { echo "graft failed"; echo "0 passed, 1 failed"; exit 1; }
KUNITCONFIG=$TREE/arch/x86/virt/vmx/tdx/tests/.kunitconfig
KUNIT=(python3 "$TREE/tools/testing/kunit/kunit.py")
LOGS=$CACHE/logs/soak-$(date +%Y%m%d-%H%M%S)
mkdir -p "$LOGS"
# shellcheck source-path=SCRIPTDIR source=kunit-lib.sh
. "$HERE/kunit-lib.sh"
kunit_tcg_path "$CACHE" || { echo "no qemu-system-x86_64"; echo "0 passed, 1 failed"; exit 1; }

PASSED=0
FAILED=0
for cfg in kasan kcsan; do
	B=$CACHE/build-$cfg
	echo "== $cfg: build ($B)"
	# shellcheck disable=SC2046
	if ! "${KUNIT[@]}" build --arch=x86_64 --kunitconfig="$KUNITCONFIG" \
		--build_dir="$B" --jobs "$(nproc)" $(cfg_args "$cfg") \
		> "$LOGS/build-$cfg.log" 2>&1; then
		echo "   build FAILED, log $LOGS/build-$cfg.log"
		FAILED=$((FAILED + 1))
		continue
	fi
	end=$(( $(date +%s) + MIN * 30 ))
	boots=0 ops=0 slab=0 page=0 add=0 rem=0 reports=0
	while [ "$(date +%s)" -lt "$end" ] || [ "$boots" = 0 ]; do
		boots=$((boots + 1))
		log=$LOGS/$cfg-$boots.log
		kunit_exec "$log" 1200 "${KUNIT[@]}" exec --arch=x86_64 \
			--build_dir="$B" --qemu_args "-smp 4" --raw_output=all \
			'tdx_pamt_stress'
		read -r p f _ <<< "$(kunit_count "$log" "$cfg" | tail -1)"
		n=$(sed -n 's/.* \([0-9]*\) operations$/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
		ops=$((ops + n))
		read -r a b c d <<< "$(sed -n 's/.*faults injected: failslab \([0-9]*\), fail_page_alloc \([0-9]*\), ADD operand errors \([0-9]*\), REMOVE BUSY \([0-9]*\);.*/\1 \2 \3 \4/p' "$log" | tail -1)"
		slab=$((slab + ${a:-0})); page=$((page + ${b:-0}))
		add=$((add + ${c:-0})); rem=$((rem + ${d:-0}))
		if [ "$f" != 0 ] || [ "$p" = 0 ] || ! kunit_scan "$log" > "$log.problems"; then
			reports=$((reports + 1))
			echo "   boot $boots: $p passed, $f failed; log $log"
			sed 's/^/     /' "$log.problems"
			FAILED=$((FAILED + 1))
		else
			PASSED=$((PASSED + 1))
		fi
	done
	echo "   $cfg: $boots boot(s), $ops operations; faults injected: failslab $slab, fail_page_alloc $page, ADD operand errors $add, REMOVE BUSY $rem; boots with a report: $reports"
done
echo "== soak: logs $LOGS"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
