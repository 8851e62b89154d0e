#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks on our kernel files, zero findings allowed:
#   - scripts/checkpatch.pl --strict, file by file and on edits/*.patch;
#   - scripts/kernel-doc -none, file by file;
#   - no test hook in the cache's .c files (the KUnit option is not tested there);
#   - a W=1 build with sparse (C=2) of our objects in the grafted tree,
#     and of the KVM objects our edits touch (tdx.o, mmu.o);
#   - the hardware-validation tools of hw/, on made-up inputs;
#   - get-source.sh's choice of version, pinned and with the pin gone;
#   - series/stage.py: identity, stand-ins replace prototypes, bad marker.
#   - series/mkreverts.py: the committed revert patches are not stale.
# Debian 12's sparse (0.6.4) cannot parse 7.3, and the kernel then skips
# it with one line of output: we build a newer one (get-source.sh sparse)
# and fail if the kernel still says it skipped sparse.
# Last line: "N passed, N failed", one check per tool and file.
#
# Env: PAMT_CACHE (default /var/cache/tdx-pamt); the W=1/sparse build
# reuses run-kunit.sh's build-kcsan there (the default configuration), or
# configures it as run-kunit.sh would.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../../.." && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
B=$CACHE/build-kcsan
TREE=$("$HERE/graft.sh") || { echo "graft failed"; echo "0 passed, 1 failed"; exit 1; }
SPARSE=$("$HERE/get-source.sh" sparse) || { echo "no sparse"; echo "0 passed, 1 failed"; exit 1; }
MAKE_CHECK=(C=2 CHECK="$SPARSE")
TDX=arch/x86/virt/vmx/tdx
PASSED=0
FAILED=0

ok() { PASSED=$((PASSED + 1)); }
bad() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }

cd "$REPO" || exit 1
FILES=$(ls arch/x86/include/asm/tdx_pamt.h $TDX/pamt_*.[ch] $TDX/tests/pamt_*.[ch] $TDX/Kconfig)

for f in $FILES; do
	out=$("$TREE/scripts/checkpatch.pl" --strict --no-tree --terse \
		--no-summary --show-types -f "$f" 2>&1)
	if [ -n "$out" ]; then bad "checkpatch $f"; echo "$out"; else ok; fi
done

# Nothing test-only in a production call path: no file of the cache tests
# the KUnit option.
hooks=$(grep -l 'CONFIG_INTEL_TDX_PAMT_KUNIT_TEST' $TDX/pamt_*.c)
if [ -n "$hooks" ]; then bad "KUnit hooks in ${hooks//$'\n'/ }"; else ok; fi

# Our hunks in existing files: checkpatch wants git's "diff --git" lines.
for p in tools/testing/pamt/kernel/edits/*.patch; do
	[ -f "$p" ] || continue
	out=$(awk '/^--- a\//{ f = substr($2, 3); print "diff --git a/" f " b/" f } { print }' "$p" |
	      "$TREE/scripts/checkpatch.pl" --strict --no-tree --terse \
		--no-summary --show-types - 2>&1)
	if [ -n "$out" ]; then bad "checkpatch $p"; echo "$out"; else ok; fi
done

for f in $FILES; do
	case $f in *Kconfig) continue ;; esac
	out=$("$TREE/scripts/kernel-doc" -none "$f" 2>&1)
	if [ -n "$out" ]; then bad "kernel-doc $f"; echo "$out"; else ok; fi
done

# W=1 and sparse on our objects: configure the build folder if needed.
if [ ! -f "$B/.config" ]; then
	# shellcheck source-path=SCRIPTDIR source=kunit-lib.sh
	. "$HERE/kunit-lib.sh"
	# shellcheck disable=SC2046
	python3 "$TREE/tools/testing/kunit/kunit.py" config --arch=x86_64 \
		--kunitconfig="$TREE/$TDX/tests/.kunitconfig" --build_dir="$B" \
		$(cfg_args kcsan) >/dev/null
fi
# The objects the Makefile builds (the issue's later files join when the
# graft script hooks them in); removed first so that they are rebuilt
# with W=1 and checked by sparse.
OBJS=$({ grep -o 'pamt_[a-z0-9_]*\.o' "$TREE/$TDX/Makefile"
	grep -o 'pamt_[a-z0-9_]*\.o' "$TREE/$TDX/tests/Makefile" | sed 's|^|tests/|'; } |
	sort -u | grep -vx 'tests/pamt_kunit.o')
[ -n "$OBJS" ] || OBJS="pamt_core.o pamt_slot.o pamt_mag.o pamt_shrink.o pamt_glue.o"
for o in $OBJS; do rm -f "$B/$TDX/$o"; done
out=$(make -C "$TREE" O="$B" ARCH=x86_64 -j"$(nproc)" W=1 "${MAKE_CHECK[@]}" "$TDX/" 2>&1)
rc=$?
probs=$(echo "$out" | grep -E "warning:|error:|sparse:" | grep -E "pamt_|tdx_pamt")
# Here-strings: under pipefail, echo | grep -q fails when grep quits early.
if grep -q "sparse is not available or not up to date" <<< "$out"; then
	bad "sparse was skipped: $SPARSE does not parse this kernel"
elif ! grep -q "CHECK .*pamt_" <<< "$out"; then
	bad "sparse checked none of our files (no CHECK lines)"
else
	ok
fi
if [ $rc != 0 ] || [ -n "$probs" ]; then
	bad "W=1/sparse build (rc $rc)"
	echo "${probs:-$out}" | tail -40
else
	ok
fi
for o in $OBJS; do
	if [ -f "$B/$TDX/$o" ]; then ok; else bad "no $o"; fi
done

# The KVM objects our edits touch (edits/20-*.patch).  Pristine 7.3 builds
# tdx.o clean with W=1 and sparse, so any finding in it counts.  mmu.o has
# sparse findings of its own ("cast truncates bits from constant value",
# nine of them): those are not ours; anything else is.
KVM_OBJS="arch/x86/kvm/vmx/tdx.o arch/x86/kvm/mmu/mmu.o"
# shellcheck disable=SC2086
for o in $KVM_OBJS; do rm -f "$B/$o"; done
# shellcheck disable=SC2086
out=$(make -C "$TREE" O="$B" ARCH=x86_64 -j"$(nproc)" W=1 "${MAKE_CHECK[@]}" $KVM_OBJS 2>&1)
rc=$?
probs=$(echo "$out" | grep -E "warning:|error:|sparse:" |
	grep -E "kvm/(vmx/tdx|mmu/mmu|mmu/paging_tmpl)\.[ch]|kvm_host\.h|kvm-x86-ops\.h|tdx_pamt\.h" |
	grep -v "cast truncates bits from constant value" || true)
missing=""
for o in $KVM_OBJS; do
	[ -f "$B/$o" ] || missing="$missing $o"
	grep -q "CHECK .*${o%.o}\.c" <<< "$out" || missing="$missing ${o%.o}.c(sparse)"
done
if [ $rc != 0 ] || [ -n "$probs" ] || [ -n "$missing" ]; then
	bad "W=1/sparse build of $KVM_OBJS (rc $rc${missing:+, missing:$missing})"
	echo "${probs:-$out}" | tail -40
else
	ok
fi

# The Documentation parses as reStructuredText, warnings included (the
# kernel's Sphinx build would stop on the same errors).
for f in Documentation/arch/x86/tdx-dpamt*.rst; do
	if out=$(rst2html --halt=warning "$f" 2>&1 >/dev/null); then ok; else bad "rst $f"; echo "$out" | head -10; fi
done

# The hardware-validation tools (Documentation: "Validating on a TDX
# host"): the table formatter on made-up bpftrace outputs.
res=$("$HERE/hw/test-seed-table.sh" 2>&1)
echo "$res" | grep -v '^[0-9]* passed, [0-9]* failed$' || true
read -r p _ f _ <<< "$(echo "$res" | tail -1)"
PASSED=$((PASSED + p)); FAILED=$((FAILED + f))

# series/stage.py, which writes the headers of the series' intermediate
# patches: with every layer in, the final files; with none, no prototype
# of a missing layer left; a missing block marker is an error.
ST=$(mktemp -d)
mkdir -p "$ST/src" "$ST/out"
git -C "$REPO" ls-files -z arch/x86/virt/vmx/tdx arch/x86/include/asm/tdx_pamt.h \
	tools/testing/pamt/kernel/series | (cd "$REPO" && xargs -0 cp --parents -t "$ST/src")
SP=tools/testing/pamt/kernel/series/stage.py
if python3 "$ST/src/$SP" "$ST/src" "$ST/out" &&
   cmp -s "$ST/out/$TDX/pamt_internal.h" "$TDX/pamt_internal.h" &&
   cmp -s "$ST/out/arch/x86/include/asm/tdx_pamt.h" arch/x86/include/asm/tdx_pamt.h; then
	ok
else
	bad "stage.py with every layer in does not give the final headers"
fi
if python3 "$ST/src/$SP" "$ST/src" "$ST/out" mag shrink glue &&
   ! grep -qE "^(int|void|unsigned long|bool) (tdx_topup_pamt_cache|tdx_pamt_drain|pamt_mag_pop)\(" \
	"$ST/out/$TDX/pamt_internal.h" "$ST/out/arch/x86/include/asm/tdx_pamt.h"; then
	ok
else
	bad "stage.py left a missing layer's prototypes in"
fi
sed -i '/^\/\* pamt_mag\.c \*\//d' "$ST/src/$TDX/pamt_internal.h"
if out=$(python3 "$ST/src/$SP" "$ST/src" "$ST/out" mag 2>&1); then
	bad "stage.py accepted a pamt_internal.h with no pamt_mag.c block"
else
	grep -q 'pamt_mag.c' <<< "$out" && ok || bad "stage.py: no clear error ($out)"
fi
rm -rf "$ST"

# series/mkreverts.py, run on these files, makes the revert patches that
# are committed: none is stale.
ST=$(mktemp -d)
git -C "$REPO" ls-files -z arch/x86/virt/vmx/tdx tools/testing/pamt/kernel/series |
	(cd "$REPO" && xargs -0 cp --parents -t "$ST")
if python3 "$ST/tools/testing/pamt/kernel/series/mkreverts.py" "$ST"; then
	for r in observe busy turns; do
		f=tools/testing/pamt/kernel/series/$r-revert.patch
		cmp -s "$ST/$f" "$REPO/$f" && ok || bad "$f is stale: run series/mkreverts.py"
	done
else
	bad "series/mkreverts.py failed"
fi
rm -rf "$ST"

# get-source.sh's pin: the tested version when the archive has it, and
# the newest 7.3.x, with a warning, when it is gone (apt's lists only; the
# first check passes either way, the archive's contents are not ours).
pin=$(sed -n 's/^KVER=${PAMT_KERNEL_VERSION:-\(.*\)}$/\1/p' "$HERE/get-source.sh")
if v=$("$HERE/get-source.sh" version 2>/tmp/pamt-gs.$$) &&
   { { [ "$v" = "$pin" ] && ! grep -q WARNING /tmp/pamt-gs.$$; } ||
     { [[ $v == 7.3.* ]] && grep -q "falling back .* $v$" /tmp/pamt-gs.$$; }; }; then
	ok
else
	bad "get-source.sh version: '$v', pinned $pin"; cat /tmp/pamt-gs.$$
fi
if v=$(PAMT_KERNEL_VERSION=7.3.0-0~gone "$HERE/get-source.sh" version 2>/tmp/pamt-gs.$$) &&
   [[ $v == 7.3.* ]] && grep -q "WARNING: falling back to the newest 7.3.x on offer, $v" /tmp/pamt-gs.$$; then
	ok
else
	bad "get-source.sh version with the pin gone: '$v'"; cat /tmp/pamt-gs.$$
fi
rm -f /tmp/pamt-gs.$$

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
