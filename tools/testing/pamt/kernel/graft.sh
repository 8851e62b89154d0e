#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Graft the TDX PAMT cache into a Linux 7.3 tree outside this repo.
#
# Idempotent: installs what is missing, unpacks the tree once, copies our
# files only when they changed (so kernel rebuilds stay incremental) and
# appends the Kconfig/Makefile hooks only when they are not there yet.
# Never writes to this repo.
#
# Usage: graft.sh            (tree: $PAMT_TREE, default below)
# Prints the tree's path on its last line.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../../../.." && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
TREE=${PAMT_TREE:-$CACHE/linux-7.3}
PKGS="build-essential flex bison bc libelf-dev libssl-dev
python3 qemu-system-x86 xz-utils cpio kmod dwarves rsync sparse"

log() { echo "graft: $*" >&2; }

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	log "installing:$missing"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		--no-install-recommends $missing >&2
fi

mkdir -p "$CACHE"
TARBALL=$("$(dirname "$0")/get-source.sh" kernel)
if [ ! -f "$TREE/Makefile" ] || [ ! -f "$TREE/arch/x86/virt/vmx/tdx/tdx.c" ]; then
	log "unpacking $TARBALL into $TREE"
	rm -rf "$TREE.tmp"
	mkdir -p "$TREE.tmp"
	tar -xf "$TARBALL" -C "$TREE.tmp" --strip-components=1
	rm -rf "$TREE"
	mv "$TREE.tmp" "$TREE"
fi
if [ -f "$TREE/.config" ] || [ -f "$TREE/include/config/auto.conf" ]; then
	log "error: $TREE was built in place; out-of-tree builds refuse it"
	log "run 'make -C $TREE mrproper' or delete it"
	exit 1
fi

# Copy one file; keeps the timestamp so make sees no change when there is none.
put() {
	local src=$REPO/$1 dst=$TREE/${2:-$1}

	mkdir -p "$(dirname "$dst")"
	if ! cmp -s "$src" "$dst"; then
		cp "$src" "$dst"
		log "copied $1"
	fi
}

TDX=arch/x86/virt/vmx/tdx
put arch/x86/include/asm/tdx_pamt.h
for f in "$REPO"/$TDX/pamt_*.[ch] "$REPO"/$TDX/Kconfig \
	 "$REPO"/$TDX/tests/pamt_*.[ch] "$REPO"/$TDX/tests/.kunitconfig; do
	[ -f "$f" ] && put "${f#"$REPO"/}"
done
# Files removed from the repo must not linger in the tree, nor those of
# the other layout (tests beside the core), which other checkouts graft.
for f in "$TREE"/$TDX/pamt_*.[ch] "$TREE"/$TDX/.kunitconfig \
	 "$TREE"/$TDX/tests/pamt_*.[ch] "$TREE"/$TDX/tests/.kunitconfig; do
	[ -f "$f" ] || continue
	[ -f "$REPO/${f#"$TREE"/}" ] || { rm -f "$f"; log "removed ${f#"$TREE"/$TDX/}"; }
done
if [ -d "$REPO/Documentation/arch/x86" ]; then
	for f in "$REPO"/Documentation/arch/x86/tdx-dpamt*.rst; do
		[ -f "$f" ] && put "${f#"$REPO"/}"
	done
fi

# Every edit to existing files, each applied once by hooks.sh (Kconfig and
# Makefile lines, the KUnit object list, the x86 doc index).
# The hooks run on pristine copies of the files they edit, and a file is
# written only when the result differs: a tree grafted by an older version
# of the hooks is brought up to date, and make sees no change otherwise.
HOOKED="arch/x86/Kconfig $TDX/Makefile arch/x86/kvm/Makefile Documentation/arch/x86/index.rst"
# shellcheck disable=SC2086
ORIG=$("$REPO/tools/testing/pamt/kernel/edits.sh" orig $HOOKED)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in $HOOKED; do
	mkdir -p "$tmp/$(dirname "$f")"
	cp "$ORIG/$f" "$tmp/$f"
done
mkdir -p "$tmp/$TDX/tests"
cp "$TREE"/$TDX/tests/pamt_fake*.c "$TREE"/$TDX/tests/pamt_kunit_*.c \
	"$tmp/$TDX/tests/" 2>/dev/null || true
"$REPO/tools/testing/pamt/kernel/hooks.sh" "$tmp" \
	kconfig trace slots core sparse mag shrink glue backend enable debugfs kunit docs 2>/dev/null
for f in $HOOKED $TDX/tests/Makefile; do
	cmp -s "$tmp/$f" "$TREE/$f" || { cp "$tmp/$f" "$TREE/$f"; log "hooked $f"; }
done
# Our hunks in existing C files (tdx.c, KVM): edits/*.patch.
"$REPO/tools/testing/pamt/kernel/edits.sh" apply "$TREE"

echo "$TREE"
