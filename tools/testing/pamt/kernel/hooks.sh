#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The edits the PAMT cache makes to existing 7.3 files, each applied at
# most once, so that a tree can be hooked again and again.  Used by
# graft.sh and by make-patches.sh, which applies them one logical commit
# at a time.
#
# Usage: hooks.sh TREE HOOK...
#   kconfig   source our Kconfig from arch/x86/Kconfig
#   trace     build the tracepoints, with the include path define_trace.h needs
#   slots     build the slot layer
#   core      build the core (init, exit, slot table, statistics)
#   sparse    build the far blocks for sparse memory
#   mag       build the magazine layer
#   shrink    build the shrink layer
#   glue      build the in-kernel glue (shrinker, worker)
#   backend   build the SEAMCALL backend
#   enable    build the enabling code and call it from tdx.c
#   debugfs   build the debugfs files
#   kunit     build the KUnit suites, every tests/pamt_kunit_*.c of the tree
#   docs      link Documentation/arch/x86/tdx-dpamt.rst from the x86 index
set -euo pipefail

TREE=$1
shift
TDX=arch/x86/virt/vmx/tdx

log() { echo "hooks: $*" >&2; }

append_once() {
	local file=$TREE/$1 line=$2

	grep -qxF "$line" "$file" || { printf '%s\n' "$line" >> "$file"; log "hooked $1"; }
}

# Insert @line after the first line matching the regex @after, once.
insert_once() {
	local file=$TREE/$1 after=$2 line=$3

	grep -qxF "$line" "$file" && return 0
	grep -q "$after" "$file" || { log "error: no '$after' in $1"; exit 1; }
	awk -v after="$after" -v line="$line" \
		'{ print } !done && $0 ~ after { print line; done = 1 }' \
		"$file" > "$file.hooks" && mv "$file.hooks" "$file"
	log "hooked $1"
}

for hook in "$@"; do
	case $hook in
	kconfig)
		append_once arch/x86/Kconfig 'source "arch/x86/virt/vmx/tdx/Kconfig"' ;;
	trace)
		append_once $TDX/Makefile 'CFLAGS_pamt_trace.o := -I$(src)'
		append_once $TDX/Makefile 'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_trace.o' ;;
	slots)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_slot.o' ;;
	core)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_core.o' ;;
	sparse)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_sparse.o' ;;
	mag)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_mag.o' ;;
	shrink)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_shrink.o' ;;
	glue)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_glue.o' ;;
	backend)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_seamcall.o' ;;
	enable)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_enable.o'
		# tdx.c itself: edits/10-*.patch, applied by edits.sh.
		;;
	debugfs)
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_HOST) += pamt_debugfs.o' ;;
	kunit)
		# The suites use the core's internals, which are not exported:
		# the option is a bool, built in only.
		append_once $TDX/Makefile \
			'obj-$(CONFIG_INTEL_TDX_PAMT_KUNIT_TEST) += tests/'
		# tests/Makefile is ours, written whole: the fake, main, then
		# every other suite, canary last (its WARN tests must run after
		# the others).  Run again when suites are added.
		objs="pamt_fake.o"
		[ -f "$TREE/$TDX/tests/pamt_fake_td.c" ] && objs="$objs pamt_fake_td.o"
		[ -f "$TREE/$TDX/tests/pamt_kunit_main.c" ] && objs="$objs pamt_kunit_main.o"
		for f in "$TREE"/$TDX/tests/pamt_kunit_*.c; do
			[ -e "$f" ] || continue	# none yet: the fake alone
			o=$(basename "${f%.c}").o
			case $o in pamt_kunit_main.o|pamt_kunit_canary.o) continue ;; esac
			objs="$objs $o"
		done
		[ -f "$TREE/$TDX/tests/pamt_kunit_canary.c" ] && objs="$objs pamt_kunit_canary.o"
		mkdir -p "$TREE/$TDX/tests"
		printf '%s\n' '# SPDX-License-Identifier: GPL-2.0-only' \
			'# KUnit suites of the TDX Dynamic PAMT cache, run against a fake TDX module' \
			'ccflags-y += -I$(src)/..' \
			'obj-y += pamt_kunit.o' \
			"pamt_kunit-y := $objs" > "$TREE/$TDX/tests/Makefile.hooks"
		if cmp -s "$TREE/$TDX/tests/Makefile.hooks" "$TREE/$TDX/tests/Makefile"; then
			rm -f "$TREE/$TDX/tests/Makefile.hooks"
		else
			mv "$TREE/$TDX/tests/Makefile.hooks" "$TREE/$TDX/tests/Makefile"
			log "wrote $TDX/tests/Makefile"
		fi ;;
	docs)
		insert_once Documentation/arch/x86/index.rst '^   tdx$' '   tdx-dpamt' ;;
	*)
		log "unknown hook $hook"; exit 2 ;;
	esac
done
