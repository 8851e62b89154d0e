#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what the kernel side of the tests needs that Debian 12 itself
# does not carry:
#   kernel  Debian's linux-source-7.3 from trixie-backports, pinned to the
#           version these scripts were tested with; if the archive no
#           longer has it, the newest 7.3.x on offer, with a message;
#   sparse  a sparse that parses 7.3 (Debian 12's 0.6.4 cannot: it does not
#           know __typeof_unqual__), built from Debian sid's source
#           package into $PAMT_CACHE/sparse.
#
# Both come through a private apt configuration under $PAMT_CACHE/apt: the
# system's sources and preferences stay untouched, so nothing else on the
# machine is upgraded (apt's -t trixie-backports would pull linux-libc-dev
# 7.3 in, and the userspace harness builds against those headers).
#
# Usage: get-source.sh kernel|sparse|version
#   kernel   prints the tarball's path on its last line
#   sparse   prints the sparse binary's path on its last line
#   version  prints the version "kernel" would install (lint.sh tests the
#            fallback with PAMT_KERNEL_VERSION set to one that is gone)
# Idempotent: does nothing when what is asked for is already there.
set -euo pipefail

CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
KPKG=linux-source-7.3
KVER=${PAMT_KERNEL_VERSION:-7.3.4-1~bpo13+1}
TARBALL=/usr/src/linux-source-7.3.tar.xz
SPARSE=$CACHE/sparse/sparse
D=$CACHE/apt

log() { echo "get-source: $*" >&2; }

# apt-get (apt-cache with -c) with only our sources: trixie-backports
# binaries, sid sources.
aptp() {
	local tool=apt-get

	[ "$1" = -c ] && { tool=apt-cache; shift; }
	$tool -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$D/s" \
		-o Dir::State::Lists="$D/lists" -o Dir::Cache="$D/cache" \
		-o Dir::Etc::Preferences=/dev/null \
		-o Dir::Etc::PreferencesParts=/dev/null \
		-o APT::Sandbox::User=root "$@"
}

apt_setup() {
	local uri

	[ -f "$D/.updated" ] && return 0
	# The mirror the system already uses for bookworm, whatever the
	# format of its sources.
	uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' |
		awk '$2 == "bookworm" { print $1; exit }')
	[ -n "$uri" ] || uri=http://deb.debian.org/debian/
	mkdir -p "$D/s" "$D/lists/partial" "$D/cache/archives/partial"
	cat > "$D/s/pamt.sources" <<-EOF
	Types: deb
	URIs: $uri
	Suites: trixie-backports
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

	Types: deb-src
	URIs: $uri
	Suites: sid
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	log "apt update (private sources: trixie-backports, sid sources)"
	aptp update -qq >&2 || { log "error: apt update failed"; exit 1; }
	touch "$D/.updated"
}

# The version of $KPKG to install: $KVER if the archive still has it,
# else the newest one it has, with a warning.  Reads apt's lists only.
version() {
	local v newest=

	apt_setup
	for v in $(aptp -c madison "$KPKG" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }'); do
		if [ "$v" = "$KVER" ]; then
			echo "$v"
			return 0
		fi
		if [ -z "$newest" ] || dpkg --compare-versions "$v" gt "$newest"; then
			newest=$v
		fi
	done
	[ -n "$newest" ] || { log "error: no $KPKG in trixie-backports"; exit 1; }
	log "WARNING: $KPKG $KVER (the tested version) is gone from the archive;"
	log "WARNING: falling back to the newest 7.3.x on offer, $newest"
	echo "$newest"
}

kernel() {
	local have ver

	have=$(dpkg-query -W -f='${Version}' "$KPKG" 2>/dev/null || true)
	if [ -n "$have" ] && [ -f "$TARBALL" ]; then
		[ "$have" = "$KVER" ] || log "note: $KPKG $have installed, tested with $KVER"
		echo "$TARBALL"
		return 0
	fi
	for p in binutils xz-utils; do
		dpkg-query -W -f='${Status}' $p 2>/dev/null | grep -q "ok installed" ||
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $p >&2
	done
	ver=$(version)
	rm -f "$D"/cache/archives/"$KPKG"_*.deb "$D"/"$KPKG"_*.deb
	(cd "$D" && aptp download -qq "$KPKG=$ver" >&2) ||
		{ log "error: cannot download $KPKG $ver"; exit 1; }
	DEBIAN_FRONTEND=noninteractive dpkg -i "$D"/"$KPKG"_*.deb >&2
	[ -f "$TARBALL" ] || { log "error: no $TARBALL after install"; exit 1; }
	echo "$TARBALL"
}

sparse() {
	local src

	if [ -x "$SPARSE" ]; then
		echo "$SPARSE"
		return 0
	fi
	for p in build-essential dpkg-dev; do
		dpkg-query -W -f='${Status}' $p 2>/dev/null | grep -q "ok installed" ||
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $p >&2
	done
	apt_setup
	rm -rf "$CACHE/sparse.tmp"
	mkdir -p "$CACHE/sparse.tmp"
	(cd "$CACHE/sparse.tmp" && aptp source -qq --download-only sparse >&2) ||
		{ log "error: cannot download sparse's source"; exit 1; }
	src=$(ls "$CACHE"/sparse.tmp/sparse_*.orig.tar.* | head -1)
	mkdir -p "$CACHE/sparse.tmp/src"
	tar -xf "$src" -C "$CACHE/sparse.tmp/src" --strip-components=1
	log "building sparse from $(basename "$src")"
	make -s -C "$CACHE/sparse.tmp/src" -j"$(nproc)" sparse >&2
	rm -rf "$CACHE/sparse"
	mkdir -p "$CACHE/sparse"
	cp "$CACHE/sparse.tmp/src/sparse" "$SPARSE"
	rm -rf "$CACHE/sparse.tmp"
	echo "$SPARSE"
}

case ${1:-} in
kernel) kernel ;;
sparse) sparse ;;
version) version ;;
*) sed -n '4,23p' "$0"; exit 2 ;;
esac
