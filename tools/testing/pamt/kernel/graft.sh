#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Graft the TDX PAMT cache into a Linux 6.12 tree outside this repo.
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
TREE=${PAMT_TREE:-$CACHE/linux-6.12}
TARBALL=/usr/src/linux-source-6.12.tar.xz
PKGS="linux-source-6.12 build-essential flex bison bc libelf-dev libssl-dev
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
for f in "$REPO"/$TDX/pamt_*.[ch] "$REPO"/$TDX/Kconfig "$REPO"/$TDX/.kunitconfig; do
	[ -f "$f" ] && put "${f#"$REPO"/}"
done
# Files removed from the repo must not linger in the tree.
for f in "$TREE"/$TDX/pamt_*.[ch]; do
	[ -f "$f" ] || continue
	[ -f "$REPO/$TDX/$(basename "$f")" ] || { rm -f "$f"; log "removed $(basename "$f")"; }
done
if [ -d "$REPO/Documentation/arch/x86" ]; then
	for f in "$REPO"/Documentation/arch/x86/tdx-dpamt*.rst; do
		[ -f "$f" ] && put "${f#"$REPO"/}"
	done
fi

# Hooks into existing files, appended once.
append_once() {
	local file=$TREE/$1 line=$2

	grep -qxF "$line" "$file" || { printf '%s\n' "$line" >> "$file"; log "hooked $1"; }
}

append_once arch/x86/Kconfig 'source "arch/x86/virt/vmx/tdx/Kconfig"'
append_once $TDX/Makefile \
	'obj-$(CONFIG_INTEL_TDX_PAMT_CACHE) += pamt_core.o pamt_slot.o pamt_mag.o pamt_shrink.o pamt_glue.o'
# The suites use the core's internals, which are not exported: they are
# linked into vmlinux whether the symbol is y or m.
append_once $TDX/Makefile \
	'obj-$(if $(CONFIG_INTEL_TDX_PAMT_KUNIT_TEST),y) += pamt_kunit.o'
# The suites' composite object: the fake module and every pamt_kunit_*.c
# of the repo, main first (the suites' shared code) and canary last (its
# WARN tests must run after every other suite).  Rewritten when the list
# changes.
kunit_objs="pamt_fake.o pamt_kunit_main.o"
for f in "$REPO"/$TDX/pamt_kunit_*.c; do
	o=$(basename "${f%.c}").o
	case $o in pamt_kunit_main.o|pamt_kunit_canary.o) continue ;; esac
	kunit_objs="$kunit_objs $o"
done
kunit_objs="$kunit_objs pamt_kunit_canary.o"
kline="pamt_kunit-y := $kunit_objs"
if ! grep -qxF "$kline" "$TREE/$TDX/Makefile"; then
	sed -i '/^pamt_kunit-y :=/d' "$TREE/$TDX/Makefile"
	printf '%s\n' "$kline" >> "$TREE/$TDX/Makefile"
	log "hooked $TDX/Makefile: $kline"
fi

# The kernel integration: KVM glue, and the hooks of hooks.sh (tracepoints,
# backend, tdx.c, debugfs, kvm-intel, x86 doc index).
put arch/x86/kvm/vmx/tdx_pamt.c
put arch/x86/kvm/vmx/tdx_pamt.h
"$REPO/tools/testing/pamt/kernel/hooks.sh" "$TREE" \
	core backend enable debugfs kvm docs

echo "$TREE"
