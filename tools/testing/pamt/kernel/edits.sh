#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Our changes to existing Linux 7.3 C files, kept as small unified diffs in
# tools/testing/pamt/kernel/edits/NN-name.patch (-p1, against pristine 7.3
# plus the patches before them, in name order).  No kernel file is copied
# into this repo: a file's pristine text comes from Debian's tarball.
#
# Usage:
#   edits.sh apply TREE
#       Rebuild every file the patches touch from its pristine text plus
#       the patches, in order, and write it into TREE when it differs (so
#       make sees no change when there is none).  A file a patch no longer
#       touches is put back to its pristine text.  Idempotent.
#   edits.sh save TREE NN-name.patch FILE...
#       Write edits/NN-name.patch: the diff from pristine-plus-the-patches-
#       before-it to TREE's FILEs.  For a developer: edit the files in a
#       grafted tree, then save.
#   edits.sh files
#       The files the patches touch, one per line.
#   edits.sh orig FILE...
#       Print the folder that holds the pristine text of each FILE.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
EDITS=$HERE/edits
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
ORIG=$CACHE/orig-7.3

log() { echo "edits: $*" >&2; }

patch_files() {	# files a patch touches
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1"
}

all_files() {
	local p

	for p in "$EDITS"/*.patch; do
		[ -f "$p" ] && patch_files "$p"
	done | sort -u
}

# Make sure $ORIG holds the pristine text of every file named.
orig() {
	local f want=() tarball top

	for f in "$@"; do
		[ -f "$ORIG/$f" ] || want+=("$f")
	done
	[ ${#want[@]} = 0 ] && return 0
	tarball=$("$HERE/get-source.sh" kernel)
	top=$(basename "$tarball" .tar.xz)	# linux-source-7.3
	mkdir -p "$ORIG"
	tar -xf "$tarball" -C "$ORIG" --strip-components=1 \
		"${want[@]/#/$top/}" || { log "error: cannot extract ${want[*]}"; exit 1; }
}

# build DIR [STOP]: pristine files plus every patch before STOP, in DIR
build() {
	local dir=$1 stop=${2:-} p f

	mapfile -t files < <(all_files)
	[ ${#files[@]} = 0 ] && return 0
	orig "${files[@]}"
	for f in "${files[@]}"; do
		mkdir -p "$dir/$(dirname "$f")"
		cp "$ORIG/$f" "$dir/$f"
	done
	for p in "$EDITS"/*.patch; do
		[ -f "$p" ] || continue
		[ -n "$stop" ] && [[ "$(basename "$p")" > "$stop" || "$(basename "$p")" == "$stop" ]] && break
		patch -d "$dir" -p1 -s -f --no-backup-if-mismatch < "$p" ||
			{ log "error: $(basename "$p") does not apply"; exit 1; }
	done
}

case ${1:-} in
apply)
	TREE=$2
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	build "$tmp"
	mapfile -t files < <(all_files)
	for f in "${files[@]}"; do
		if ! cmp -s "$tmp/$f" "$TREE/$f"; then
			cp "$tmp/$f" "$TREE/$f"
			log "edited $f"
		fi
	done
	# Put back what an earlier set of patches edited and this one does not.
	list=$TREE/.pamt-edited
	if [ -f "$list" ]; then
		while read -r f; do
			# Not a pipe: under pipefail, grep -q exiting at its
			# match can SIGPIPE printf and fail the test at random.
			grep -qxF "$f" <<< "$(printf '%s\n' "${files[@]}")" &&
				continue
			orig "$f"
			cp "$ORIG/$f" "$TREE/$f"
			log "restored $f"
		done < "$list"
	fi
	printf '%s\n' "${files[@]}" > "$list"
	;;
save)
	TREE=$2 NAME=$3
	shift 3
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	orig "$@"
	build "$tmp" "$NAME"
	out=$tmp/out.patch
	: > "$out"
	for f in "$@"; do
		[ -f "$tmp/$f" ] || { mkdir -p "$tmp/$(dirname "$f")"; cp "$ORIG/$f" "$tmp/$f"; }
		diff -u --label "a/$f" --label "b/$f" "$tmp/$f" "$TREE/$f" >> "$out" || true
	done
	mkdir -p "$EDITS"
	cp "$out" "$EDITS/$NAME"
	log "wrote edits/$NAME ($(grep -c '^@@' "$out") hunks)"
	;;
files)
	all_files ;;
orig)
	shift
	orig "$@"
	echo "$ORIG" ;;
*)
	sed -n '4,24p' "$0"; exit 2 ;;
esac
