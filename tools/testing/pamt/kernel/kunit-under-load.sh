#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make kunit while a make -j$(nproc) of an unrelated kernel (pristine 7.3,
# defconfig, its own build folder) runs beside it, from a clean build
# folder so that it keeps the CPUs busy to the end: no KUnit case may
# depend on how fast the machine runs it.  Not part of make test (it takes
# several times as long); README gives the last result.
#
# Usage: kunit-under-load.sh [run-kunit.sh options]
# Env: PAMT_CACHE (default /var/cache/tdx-pamt): the pristine tree comes
# from make-patches.sh's pristine-7.3, the build folder is load-build.
# Last line: run-kunit.sh's "N passed, N failed".
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
SRC=$CACHE/pristine-7.3
L=$CACHE/load-build

[ -f "$SRC/Makefile" ] || "$HERE/make-patches.sh" >/dev/null 2>&1
[ -f "$SRC/Makefile" ] || { echo "no pristine tree in $SRC"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$L"
[ -f "$L/.config" ] || make -s -C "$SRC" O="$L" ARCH=x86_64 defconfig
make -s -C "$L" clean >/dev/null 2>&1

setsid make -C "$SRC" O="$L" ARCH=x86_64 -j"$(nproc)" vmlinux > "$L/load.log" 2>&1 &
bg=$!
trap 'kill -- -$bg 2>/dev/null; wait $bg 2>/dev/null' EXIT
sleep 30
echo "load beside KUnit: $(uptime)"
t=$(date +%s)
"$HERE/run-kunit.sh" "$@" | tee "$L/kunit.out"
rc=${PIPESTATUS[0]}
echo "load beside KUnit: $(uptime)"
if kill -0 $bg 2>/dev/null; then
	echo "the unrelated build ran to the end of KUnit ($(( $(date +%s) - t ))s)"
else
	echo "note: the unrelated build ended before KUnit did ($L/load.log)"
fi
tail -n 1 "$L/kunit.out"
exit $rc
