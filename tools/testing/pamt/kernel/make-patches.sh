#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn this repo into git format-patch series against a pristine Linux
# 7.3 tree, the way a TDX maintainer would apply them: out/patches/base/,
# then the follow-ups out/patches/01-sparse/, 02-busy/ and 03-observe/, then
# out/patches/harness/ (not posted).
#
# Usage: make-patches.sh [--check] [--each]
#   (none)   write the series and checkpatch --strict every patch
#   --check  also git am the series, one patch at a time, onto a fresh
#            checkout of the pristine tree, build after each patch the
#            folders it touches (W=1, warnings in our files fail); after
#            each patch of the cache's layers, link a kernel and run the
#            KUnit suites it has so far under qemu; then vmlinux and the
#            userspace harness at the end
#   --each   with --check: build all of vmlinux after every patch
# Last line: "N passed, N failed".
#
# Env: PAMT_CACHE (default /var/cache/tdx-pamt) holds pristine-7.3 (a git
# repo of the Debian linux-source-7.3 tarball, made on first use), the
# worktrees patches-work and patches-check, and the build folder
# build-patches, reused across runs so that a rerun builds little.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../../.." && pwd)
CACHE=${PAMT_CACHE:-/var/cache/tdx-pamt}
PRISTINE=$CACHE/pristine-7.3
WORK=$CACHE/patches-work
CHECKT=$CACHE/patches-check
B=$CACHE/build-patches
OUT=$REPO/out/patches
BASE=v7.3-debian
JOBS=$(nproc)
CHECK=0
EACH=0
for a in "$@"; do
	case $a in
	--check) CHECK=1 ;;
	--each) EACH=1 ;;
	*) sed -n '4,22p' "$0"; exit 2 ;;
	esac
done

PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "  ok: $*"; }
bad() { FAILED=$((FAILED + 1)); echo "  FAIL: $*"; }
die() { echo "make-patches: $*" >&2; echo "$PASSED passed, $((FAILED + 1)) failed"; exit 1; }
GIT() { git -c user.name="$NAME" -c user.email="$EMAIL" -c core.hooksPath=/dev/null "$@"; }

NAME=$(git -C "$REPO" config user.name || echo "TDX PAMT")
EMAIL=$(git -C "$REPO" config user.email || echo "tdx-pamt@localhost")
T0=$(date +%s)

# ---- the pristine tree, as a git repo with one commit ----
if ! git -C "$PRISTINE" rev-parse -q --verify "$BASE" >/dev/null 2>&1; then
	TARBALL=$("$HERE/get-source.sh" kernel) || die "no linux-source-7.3"
	echo "== unpacking $TARBALL into $PRISTINE"
	rm -rf "$PRISTINE.tmp"
	mkdir -p "$PRISTINE.tmp"
	tar -xf "$TARBALL" -C "$PRISTINE.tmp" --strip-components=1 || die "tar"
	# Debian's .gitignore ignores the whole top level: add with -f.
	(cd "$PRISTINE.tmp" && git init -q -b base && git add -A -f &&
	 GIT commit -q -m "Linux 7.3 (Debian linux-source-7.3)" &&
	 git tag "$BASE") || die "git init of the pristine tree"
	rm -rf "$PRISTINE"
	mv "$PRISTINE.tmp" "$PRISTINE"
fi

# A worktree of the pristine repo at $BASE, with nothing else in it.
fresh_tree() {
	local dir=$1

	if [ ! -e "$dir/.git" ]; then
		rm -rf "$dir"
		git -C "$PRISTINE" worktree prune
		git -C "$PRISTINE" worktree add -q --detach "$dir" "$BASE" || die "worktree $dir"
	fi
	# Unchanged files keep their mtimes: the build folder stays valid.
	git -C "$dir" am --abort >/dev/null 2>&1
	git -C "$dir" checkout -q -f --detach "$BASE" && git -C "$dir" clean -q -fdx ||
		die "reset of $dir"
}

# ---- the logical commits ----
TDX=arch/x86/virt/vmx/tdx
KVMG=arch/x86/kvm/vmx

# The series is made from the committed state (REV, default HEAD), never
# from files colleagues are still editing.
REV=${PAMT_REV:-HEAD}
git -C "$REPO" rev-parse -q --verify "$REV^{commit}" >/dev/null || die "no commit $REV"
tracked() { git -C "$REPO" ls-tree -r --name-only "$REV" -- "$@"; }

# Follow-ups that change files of the base: until they come, the files
# they touch are written without them, as series/NAME-revert.patch makes
# them, for each NAME in REVERTS, in order.  observe-revert.patch takes
# the tracepoints out of the final files (03-observe); busy-revert.patch
# then takes out the BUSY retries, their serialised fallback and the ADD
# turns (02-busy), and sparse-revert.patch the far blocks (01-sparse);
# turns-revert.patch takes the ADD turns alone.  After a
# change near their hunks, series/mkreverts.py makes them again.
REVERTS="observe busy sparse"
unbusy() {
	local r

	case $1 in
	*/pamt_slot.c|*/pamt_core.c|*/pamt_internal.h|*/pamt_shrink.c) ;;
	*) return 0 ;;
	esac
	for r in $REVERTS; do
		git -C "$REPO" show "$REV:tools/testing/pamt/kernel/series/$r-revert.patch" |
			git -C "$WORK" apply --include="$1" - || die "$r-revert.patch on $1"
	done
}

# copy PATH...: put committed files into the work tree
copy() {
	local f

	for f in "$@"; do
		mkdir -p "$WORK/$(dirname "$f")"
		git -C "$REPO" show "$REV:$f" > "$WORK/$f" 2>/dev/null || die "$f is not in $REV"
		[ -x "$REPO/$f" ] && chmod +x "$WORK/$f"
		unbusy "$f"
	done
}

# commit SUBJECT BODY: commit everything changed or new in the work tree
commit() {
	(cd "$WORK" && git add -A -f . && GIT commit -q -s -F - <<-MSG
	$1

	$2
	MSG
	) || die "commit '$1'"
}

echo "== writing the series"
fresh_tree "$WORK"

# apply_edits PREFIX: our hunks in existing kernel files, edits/PREFIX*.patch
apply_edits() {
	local p

	for p in $(tracked tools/testing/pamt/kernel/edits | grep "/$1[^/]*\.patch$"); do
		git -C "$REPO" show "$REV:$p" | git -C "$WORK" apply --whitespace=nowarn - ||
			die "$p does not apply"
	done
}

# Files of ours that exist in $REV (a layer may not have all of them).
ours() {
	local f

	for f in "$@"; do
		tracked "$f" | grep -qxF "$f" && echo "$f"
	done
}

# The cache, one layer per patch: slots (with the core and the KUnit
# scaffolding), the magazines, the shrink layer, the glue (shrinker and
# worker).  The layers call each other, so a layer
# not in the series yet is stood in for: series/stage.py writes
# pamt_internal.h with its block of prototypes replaced by the minimal
# static inline implementations in series/<layer>.h and leaves its
# functions out of asm/tdx_pamt.h.  Its own patch then replaces the stand-ins with the real prototypes.  So
# each layer's patch links into vmlinux and brings the KUnit suite of what
# it adds; --check runs the suites present after each of them.
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
git -C "$REPO" archive "$REV" $TDX arch/x86/include/asm/tdx_pamt.h \
	tools/testing/pamt/kernel/series | tar -x -C "$STAGE" ||
	die "no $TDX or tools/testing/pamt/kernel/series in $REV"
# headers LAYER...: the headers with LAYER... not in the series yet
headers() {
	python3 "$STAGE/tools/testing/pamt/kernel/series/stage.py" "$STAGE" "$WORK" "$@" ||
		die "stage.py $*"
	unbusy $TDX/pamt_internal.h
}
# Patches after which --check runs KUnit: their numbers in the series.
KUNIT_AT=""
kunit_here() { KUNIT_AT="$KUNIT_AT $(git -C "$WORK" rev-list --count "$BASE"..HEAD)"; }

headers mag shrink glue
commit "x86/virt/tdx: Add the Dynamic PAMT cache's API and shared definitions" \
"asm/tdx_pamt.h declares what KVM calls, with the names of the DPAMT
series (tdx_pamt_get(), tdx_pamt_put(), struct tdx_pamt_cache and its
top-up, the control-page helpers), and tdx_pamt_enabled().
pamt_internal.h holds what the cache's layers share: the slot word and
its states, the per-CPU state and statistics, the idle LRU and the one
struct pamt_cache.  The layers come in the next patches; until each is
in, pamt_internal.h stands in for it with a minimal static inline
version, which its own patch replaces.

The slot state machine and the lock order are documented at the end of
the series, in Documentation/arch/x86/tdx-dpamt.rst."

copy $TDX/pamt_slot.c
"$HERE/hooks.sh" "$WORK" slots 2>/dev/null
commit "x86/virt/tdx: Add refcounted 2M slots for Dynamic PAMT" \
"With Dynamic PAMT the TDX module needs a pair of 4K pages for every 2M
range that holds a 4K TD page.  The DPAMT series keeps a refcount per 2M
range and takes one global spinlock, issues PAMT.ADD or PAMT.REMOVE and
allocates or frees a pair on every 0->1 and 1->0 step.  Booting and
tearing down five 8 GB TDs at once spends 55 s in tdx_pamt_get() without
its optimisation and 334 ms with it, and the worst case stays above 1 ms.

Keep one word per 2M range instead: a refcount plus state bits, so that
a get or put on an installed range is one atomic operation and only one
CPU owns an ADD or REMOVE of a range at a time.  The last put leaves the
pair installed and the range idle: the next get revives it with no
SEAMCALL.  A SEAMCALL that meets TDX_OPERAND_BUSY fails the get or the
REMOVE with -EBUSY, which KVM's fault path, the control-page helper and
reclaim each retry.

Until their patches, the other layers' stand-ins behave so: a pair is two
order-0 pages taken at ADD and freed at REMOVE (no magazine);
an idle slot keeps its pair until tdx_pamt_drain() or tdx_pamt_exit()
walk every slot (no idle LRU, cap or shrinker); no shrinker is
registered.  Until the next patch sets the cache up,
every call succeeds at once."

copy $TDX/pamt_core.c
"$HERE/hooks.sh" "$WORK" core 2>/dev/null
commit "x86/virt/tdx: Set the PAMT cache up over the covered memory" \
"tdx_pamt_init() takes the 2M-aligned ranges the TDMRs cover and a
platform backend, and allocates a flat window of slots from the first
covered range to the last, which a get reaches with one subtraction and
one compare; 2M ranges in no covered range are holes, where every call
fails with -EINVAL.  A slot is 32 bytes: the word, the node and memcg
of its idle list, and its list_head.  tdx_pamt_exit() gives everything
back but the pairs the module still holds (a REMOVE that failed): their
pages are not ours to free.

Also here: the statistics (summed per-CPU counters) and the control-page
helpers, which take a reference on the page's range."

copy $TDX/Kconfig $TDX/tests/pamt_fake.c $TDX/tests/pamt_fake.h
"$HERE/hooks.sh" "$WORK" kconfig kunit 2>/dev/null
commit "x86/virt/tdx: Add a fake TDX module for the PAMT cache's KUnit tests" \
"No TDX module runs under qemu.  Add a fake one for KUnit, behind the
cache's platform backend: it models PAMT.ADD and PAMT.REMOVE as the TDX
module specifies them, with the 2M range locks that make them answer
TDX_OPERAND_BUSY, their error codes, and checks that every pair page is
covered, free and not handed out twice.  Faults can be injected per
call.  Built only with CONFIG_INTEL_TDX_PAMT_KUNIT_TEST, which needs
KUnit built in: the tests use the cache's internals."

copy $TDX/tests/pamt_fake_td.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Give TD pages to the fake TDX module" \
"The cache's tests hand the fake module's ranges to a TD as well:
PAGE.AUG, PAGE.ADD and control pages take a 4K page, PAGE.REMOVE gives it
back, and PAMT.REMOVE must fail while the range holds one.  Model them
with the module's locking (the range's 2M entry shared), and 2M
mappings with DEMOTE and PROMOTE, which hand the module a range's pair
and take it back.  A page the module holds as a PAMT page is refused as
a TD page, and counted as a violation."

copy $TDX/tests/.kunitconfig $TDX/tests/pamt_kunit.h $TDX/tests/pamt_kunit_main.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add the PAMT cache's KUnit scaffolding" \
"What every PAMT KUnit suite shares: a setup that brings the cache up
over the fake TDX module with a given magazine size and idle cap, and a
teardown that fails the test if lockdep switched itself off or a WARN
fired, drains the cache and checks that every page went back, every
counter is 0 and KReclaimable is where it was; and .kunitconfig, the
configuration they run in.  No suite yet: each comes with what it
tests."

copy $TDX/tests/pamt_kunit_slot.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit tests for the PAMT slots" \
"Test every slot transition against the fake TDX module.  Run with:
  tools/testing/kunit/kunit.py run --arch=x86_64 \\
	--kunitconfig=arch/x86/virt/vmx/tdx/tests/.kunitconfig \\
	--qemu_args '-smp 4'"
kunit_here

copy $TDX/pamt_mag.c $TDX/tests/pamt_kunit_mag.c
headers shrink glue
"$HERE/hooks.sh" "$WORK" mag kunit 2>/dev/null
commit "x86/virt/tdx: Add per-CPU magazines of ready PAMT pairs" \
"Keep free pairs in a magazine per CPU (Bonwick and Adams), under a
spinlock of its own that any CPU may take to drain it, so that a pair
REMOVE hands back, or that a failed ADD did not use, waits there for the
next ADD.  A pair with no
room in the magazine goes back to the page allocator.  There is no
depot of full magazines, nor a second magazine per CPU to trade with
one.  A caller that cannot sleep (KVM under
mmu_lock) fills a struct tdx_pamt_cache beforehand with
tdx_topup_pamt_cache(), which charges the pages of the reserve's pairs
to the caller's memcg as kmem pages (memcg_kmem_charge_page()).  A get
takes the reserve's pairs before the magazine's, so the pair it
installs keeps that charge until the module hands it back.  Control
pages are allocated with GFP_KERNEL_ACCOUNT.

This replaces the magazine stand-ins of the first patch.  Until the
shrink layer, no cap bounds the magazines and tdx_pamt_drain() empties
them."
kunit_here

copy $TDX/pamt_shrink.c
headers glue
"$HERE/hooks.sh" "$WORK" shrink 2>/dev/null
commit "x86/virt/tdx: Give idle PAMT memory back: idle LRU, cap, shrinker and drains" \
"An idle range keeps its pair installed, and the magazines keep free
pairs.  Keep installed ranges on a list_lru, a list per node and memcg,
filed when their pair is installed, so that the put that makes a range
idle takes no lock: modelled, a lock per idle put (the dcache's way)
made churn's 0<->1 steps miss their targets at every CPU count, 23.1 ms
against 13.4 at 256 virtual CPUs (pamt_vt --scale; BENCHMARKS.md).
Bound idle memory with an idle cap enforced at put, give it back under
memory pressure with a memcg- and NUMA-aware shrinker, which the next
patch registers, and let tdx_pamt_drain() give everything back.

This replaces the stand-ins of the first patch that walked every slot.
What a put defers (trimming to the cap past one REMOVE) waits for the
worker the patch after next adds."

copy $TDX/tests/pamt_kunit_shrink.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit tests for giving idle PAMT memory back" \
"Test the idle LRU's order, a revived slot skipped, the idle cap at put
and when it is lowered, the shrinker's count and scan called directly,
a REMOVE that fails, the drains, the cache switched off, and
that idle memory is in KReclaimable to the page."
kunit_here

copy $TDX/pamt_glue.c $TDX/tests/pamt_kunit_hotplug.c
headers
"$HERE/hooks.sh" "$WORK" glue kunit 2>/dev/null
commit "x86/virt/tdx: Register the PAMT shrinker and its worker" \
"Register the shrink layer's shrinker, and run what a put over the idle
cap defers on system_dfl_wq: nothing in reclaim waits for that work,
and under pressure the shrinker gives memory back.  A CPU that goes
offline needs no callback: its magazine stays reachable by every drain
and by the shrinker.

The cache stays off, and every call succeeds without doing anything,
until a backend is registered with tdx_pamt_init().  KUnit takes CPUs
down and up: a dead CPU's pairs stay counted until a drain or the
shrinker frees them, and nothing is lost under load."
kunit_here

copy $TDX/tests/pamt_kunit_ctx.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit tests for the PAMT cache's calling contexts" \
"Run get and put under a spinlock and a read-held rwlock, with preemption
off, from softirq while the same CPU is inside a get, and from an RCU
callback; call the registered shrinker as reclaim does, and check that
reclaim frees other CPUs' free pairs without allocating anything."
kunit_here

copy $TDX/tests/pamt_kunit_release.c $TDX/tests/pamt_kunit_pressure.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit tests for giving PAMT memory back" \
"Call the registered shrinker as reclaim does, in steps, and lower the
idle cap to 0: what it counts and frees is pairs, and every page comes
back.  Then let the kernel's own reclaim call it under real memory
pressure: reclaim must get at least half of what it asked for, and every
page of every pair a REMOVE hands back must reach the page allocator's
free path."
kunit_here

copy $(ours $TDX/pamt_seamcall.c $TDX/pamt_seamcall.h)
"$HERE/hooks.sh" "$WORK" backend 2>/dev/null
commit "x86/virt/tdx: Add the SEAMCALL backend for PAMT.ADD and PAMT.REMOVE" \
"Issue TDH.PHYMEM.PAMT.ADD (leaf 58) and TDH.PHYMEM.PAMT.REMOVE (leaf 59)
through __seamcall() and __seamcall_ret(): RCX holds the 2M range with
the 2M page size, RDX and R8 the two pair pages.  The raw status goes to
the cache, whose pamt_status_errno() is the one place statuses become
errnos.  Pages going back to the page allocator first go through
tdx_quirk_reset_paddr(), as KVM's do: MOVDIR64B on CPUs with the
partial-write erratum, nothing elsewhere.

The register packing and unpacking are separate functions so that they
can be tested without a TDX module."

apply_edits 2
commit "KVM: TDX: Get and put Dynamic PAMT where TD memory is mapped" \
"Allocate TDR, TDCS, TDVPR and TDCX with tdx_alloc_control_page() and
free them with tdx_free_control_page().  Take a reference on a page's
2M range before TDH.MEM.SEPT.ADD, PAGE.AUG and PAGE.ADD, drop it when
they fail, after a successful PAGE.REMOVE and when an S-EPT page is
freed.  Top up a per-vCPU struct tdx_pamt_cache before mmu_lock through
a new optional x86 op, topup_external_cache(), called from
mmu_topup_memory_caches() and installed only when Dynamic PAMT is on.

The put is safe in softirq context, so freeing S-EPT pages from the RCU
callback later would need no change here.

Nothing calls into the cache yet with any effect: until the next patch
enables Dynamic PAMT, tdx_pamt_enabled() is false, the x86 op is not
installed, and get and put return 0 at once."

copy $(ours $TDX/pamt_enable.c $TDX/pamt_enable.h)
"$HERE/hooks.sh" "$WORK" enable 2>/dev/null
apply_edits 1
commit "x86/virt/tdx: Enable Dynamic PAMT" \
"When TDX_FEATURES0 bit 36 says the module supports Dynamic PAMT (and
tdx_pamt.enable=0 does not keep the static PAMT), read the size of the
PAMT page bitmap's entries, size each TDMR's 4K PAMT as that bitmap
instead of the static 4K level, and opt in with bit 16 of R8 at
TDH.SYS.CONFIG.  Once the module is initialised, set the cache up over
the memory the TDMRs cover, with the SEAMCALL backend, and register its
shrinker.

KVM takes its references since the previous patch, so a TD can be
created at every point of the series.  The bitmap arithmetic is a pure
function, tested by KUnit on TDMRs of several sizes."

copy $TDX/tests/pamt_kunit_integ.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit tests for the PAMT SEAMCALL backend" \
"The cache's layers brought their own suites.  Test the SEAMCALL
backend's register packing and unpacking with made-up results and its
status-to-errno mapping."
kunit_here

copy $TDX/tests/pamt_kunit_enable.c $TDX/tests/pamt_kunit_kvm.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit tests for enabling Dynamic PAMT and for KVM" \
"Test the PAMT bitmap arithmetic on TDMRs of several sizes, enabling,
and the per-vCPU cache as KVM's call sites use it."
kunit_here

copy $TDX/tests/pamt_kunit_memcg.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit tests for PAMT memory accounting" \
"With a real cgroup-v2 memcg: a top-up charges its reserve's pages, a
get under a spinlock installs one of them, freeing the reserve and
reclaim uncharge, a memcg at memory.max gets its own idle pairs back
through its own reclaim, and a pair the module lost is uncharged when
its pages are freed."
kunit_here

copy $TDX/tests/pamt_kunit_canary.c
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add KUnit canaries and WARN tests for the PAMT cache" \
"Check that caller bugs WARN.  Canaries prove that lockdep, the
sleep-in-atomic check and KASAN fire in this configuration; they run
only with pamt_kunit.canary=1.  Also the helpers that read and write
debugfs files from a test, which the stress test's fault injection uses
next."
kunit_here

# What is left: the stress test (it uses the canaries' debugfs helpers).
for f in $(tracked $TDX/tests | grep "/pamt_kunit[^/]*\.[ch]$" |
	   grep -v "/pamt_kunit_\(sparse\|busy\|debugfs\)\.c$"); do
	[ -e "$WORK/$f" ] || copy "$f"
done
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Add a KUnit stress test for the PAMT cache" \
"Run gets, puts, evicts, shrinks and reserves on every CPU over a few
shared slots, with the kernel's fault injection failing the workers'
allocations and the fake module failing ADDs and REMOVEs, then account
for every pair exactly."
kunit_here
MAIN_END=$(git -C "$WORK" rev-parse HEAD)

copy Documentation/arch/x86/tdx-dpamt.rst
"$HERE/hooks.sh" "$WORK" docs 2>/dev/null
commit "Documentation/x86: Document the TDX Dynamic PAMT cache" \
"Describe the problem, the design, the slot state machine, the lock order
(PREEMPT_RT included), memory and its accounting, the knobs, enabling,
the KVM call sites, and how to validate the series on a TDX host."
# The base series ends here; what follows is posted apart.
DOC_END=$(git -C "$WORK" rev-parse HEAD)

# Sparse memory: far blocks.
REVERTS="observe busy"
copy $TDX/pamt_core.c $TDX/pamt_slot.c $TDX/pamt_sparse.c $TDX/tests/pamt_kunit_sparse.c
headers
"$HERE/hooks.sh" "$WORK" sparse kunit 2>/dev/null
commit "x86/virt/tdx: Give PAMT slots to covered memory only, not to the span" \
"2 GiB of covered memory in two ranges 4 TiB apart needs 64 MiB of slots
in a flat window over the span, and 32 KiB plus 8 bytes with this patch
(sparse_metadata_is_proportional_to_covered in tools/testing/pamt; 1
GiB at pfn 0 and 1 GiB at pfn 2^46 would need 4 TiB).  A get or put on
the flat window is unchanged, 50 instructions per get+put; one in a far
block costs 119 (make bench-insn).

Keep the flat window for the run of consecutive ranges that covers the
most 2M ranges with no more holes than covered ranges, the whole table
on a dense host, and cut every other range into 1G-aligned blocks of 512
slots, found in an xarray keyed by pfn >> 18 and written once at init.
KUnit covers RAM and a GiB at pfn 2^46: both ends of both, the holes
between, below and above them, and the slot metadata."
kunit_here
SPARSE_END=$(git -C "$WORK" rev-parse HEAD)

# The serialised fallback for TDX_OPERAND_BUSY, then the ADD turns.
REVERTS="observe turns"
copy $TDX/pamt_slot.c $TDX/pamt_core.c $TDX/tests/pamt_kunit_busy.c
headers
"$HERE/hooks.sh" "$WORK" kunit 2>/dev/null
commit "x86/virt/tdx: Retry PAMT SEAMCALLs that meet BUSY, then serialise them" \
"With an idle cap of 0, a guest converting one page between shared and
private in a loop ADDs and REMOVEs one pair back to back; when that
pair's pages share a 2M range with a range a bystander must ADD, the
module answers the bystander BUSY almost every time.  In the userspace
harness's conversion storm (busy_fallback_beats_a_conversion_storm in
tools/testing/pamt, module latencies modelled on the public figures),
the bystander's get, tried up to 20 times 1 ms apart, failed with
-EBUSY 1, 8, 12, 11 and 9 times in five runs alone and 8, 20 (it gave
up) and 6 times in three full runs of the suite.  With this patch it
got in at its first try in all eight.

Retry a call that meets BUSY 10 times with a doubling backoff from 256
ns, with preemption on between tries; then set pamt.serializing, take a
raw spinlock that every new PAMT call then takes too, wait for the calls
already in flight (counted per CPU, with interrupts off around each
SEAMCALL) and retry alone, as many times again.  A put in softirq never
takes the lock nor backs off.  The lock is the upstream global lock,
kept for this one case."
kunit_here

REVERTS=observe
copy $TDX/pamt_slot.c
commit "x86/virt/tdx: Let gets on an EMPTY PAMT slot take the ADD in turns" \
"When many CPUs fault on one EMPTY range at once, each takes a pair and
tries to own the ADD; the losers wait for the winner's SEAMCALL, and a
failed or BUSY ADD sets them all on the slot's word again.  In virtual
time with 64 CPUs on one EMPTY slot and a 4 us ADD (herd_empty_* in
make vt-test; the costs are modelled), that is 189 writes on the word
and a longest get of 28.2 us; with this patch, 67 writes and 14.5 us.

A get's pending count already says how many gets came before it: let
each wait that many turns of 1 us (at most 32) before it tries, so that
they try the ADD in their order and the first one usually wins alone."
kunit_here
BUSY_END=$(git -C "$WORK" rev-parse HEAD)

# debugfs.
copy $TDX/pamt_debugfs.c $TDX/pamt_debugfs.h $TDX/tests/pamt_kunit_debugfs.c
"$HERE/hooks.sh" "$WORK" debugfs kunit 2>/dev/null
commit "x86/virt/tdx: Add debugfs files for the PAMT cache" \
"After five 8 GB TDs are torn down, the cache keeps 6,965 pairs, 54 MiB,
installed and idle until reclaim or the idle cap takes them (make bench,
\"idle end\" in bench-results/5td.txt).  A memory-pressure or leak test
that must start from an empty cache, and anyone asking where that memory
is, has no way to see it or free it short of memory pressure.

Add /sys/kernel/debug/tdx/pamt/ with \"stats\" (every counter, one
\"name value\" per line, idle_slots and cached_pairs among them),
\"idle_cap\" (the cap in force), both read-only, and \"drain\" (write 1
to give back every idle and cached pair).  KUnit checks each file."
kunit_here

REVERTS=""
copy $TDX/pamt_slot.c $TDX/pamt_shrink.c $TDX/pamt_trace.h $TDX/pamt_trace.c
"$HERE/hooks.sh" "$WORK" trace 2>/dev/null
commit "x86/virt/tdx: Add tracepoints for the PAMT cache's slow events" \
"A 5-TD boot and teardown makes 3.53M gets and as many puts, of which
6,885 ADD a pair (make bench, 5td); the seed's latency table was taken
on hardware by probing tdx_pamt_get/put as a whole.  To see which calls
reached the module, with which status and pair, and how reclaim asked
the shrinker, there is nothing short of a kprobe on static functions.

Add the tdx_pamt tracepoints on the slow events only: tdx_pamt_add and
tdx_pamt_remove (range, pair, status), tdx_pamt_busy (a retry) and
tdx_pamt_shrink (asked, freed).  The fast path has none: a get and a
put on an installed range stay at 50 instructions (make bench-insn)."
kunit_here
OBSERVE_END=$(git -C "$WORK" rev-parse HEAD)

# The harness, without our CI scripts, the benchmark, the spin model and
# virtual time, which are this project's tooling rather than something to
# merge; in pieces a reviewer can read, the Makefile last so that every
# step builds what it has.
PT=tools/testing/pamt
harness_part() {
	local f subject=$1 body=$2

	shift 2
	for f in "$@"; do
		copy "$f"
	done
	commit "$subject" "$body"
}
harness_part "tools/testing/pamt: Add kernel shims for a userspace build of the PAMT cache" \
"Build the cache's own .c files in userspace, as tools/testing/vma does:
shim headers map the kernel APIs the cache uses onto C11 atomics and
pthreads, one header per kernel header." \
	$PT/shim/shim.h $PT/shim/custom.h $PT/shim/stubs.h \
	$(tracked $PT/shim/include | grep -v '/list_lru\.h$\|/nodemask\.h$\|/xarray\.h$')
harness_part "tools/testing/pamt: Restate kernel definitions for the PAMT shims" \
"The kernel definitions the shims take as they are (types, list and
bit helpers), and the part of the xarray API the slot table uses, a
sorted array behind the same calls." \
	$PT/shim/dup.h $PT/shim/include/linux/xarray.h
harness_part "tools/testing/pamt: Simulate pages and CPUs for the PAMT harness" \
"A page allocator with failure injection and leak accounting, per-thread
CPUs with preemption and interrupt state, spinlocks and work items,
and the fake TDX module behind the shim's SEAMCALL checks." \
	$PT/shim/sim.c $PT/shim/sim.h $PT/shim/fake_ops.c
harness_part "tools/testing/pamt: Simulate memcgs, list_lru and reclaim for the PAMT harness" \
"Memcgs with ids, nodes, a list_lru with a list and a lock per node and
memcg, and the kernel's shrink_slab() loop, node by node and memcg by
memcg, so that the shrinker is called as the kernel calls it." \
	$PT/shim/include/linux/list_lru.h $PT/shim/include/linux/nodemask.h \
	$PT/shim/list_lru.c $PT/shim/shrink_slab.c $PT/shim/shrink_slab.h
for f in $(tracked $PT | grep -v '^tools/testing/pamt/\(kernel\|bench\|model\|vt\|tests\)/'); do
	[ -e "$WORK/$f" ] || copy "$f"
done
commit "tools/testing/pamt: Build and run the PAMT harness" \
"Build the unit tests in three builds (plain, ASan+UBSan+LSan, TSan) and
run them, a stress test of eight threads with failure injection, and a
mutant of the slot layer that the fake module must catch.  The tests
come in the next patches.  Run with: make -C tools/testing/pamt check"
harness_part "tools/testing/pamt: Test the PAMT slots and their error paths" \
"Slot transitions, every error a SEAMCALL or an allocation can return,
and the counters." \
	$PT/tests/slot.c $PT/tests/errors.c $PT/tests/counters.c
harness_part "tools/testing/pamt: Test the fake TDX module and the PAMT contexts" \
"The fake module's locking, error codes, injection and latency; the
harness's own checkers, each made to fire; and how long preemption and
interrupts stay off, PREEMPT_RT included." \
	$PT/tests/fake.c $PT/tests/checkers.c $PT/tests/irqoff.c $PT/tests/preempt.c
harness_part "tools/testing/pamt: Test the PAMT magazines and allocation" \
"The magazines, and the shim's page allocator that the benchmark relies
on." \
	$PT/tests/mag.c $PT/tests/alloc.c
harness_part "tools/testing/pamt: Test PAMT memory accounting and the KVM call pattern" \
"The memcg charges of reserves and ranges, each way a pair leaves its
range, a memcg's own reclaim, and the per-vCPU cache as KVM uses it." \
	$PT/tests/memcg.c $PT/tests/kvm.c
harness_part "tools/testing/pamt: Test giving PAMT memory back" \
"The shrinker, the drains and the idle cap, and the memory bounds the
documentation states." \
	$PT/tests/shrink.c $PT/tests/reclaim.c $PT/tests/bounds.c
harness_part "tools/testing/pamt: Test PAMT slots over memory with holes" \
"Slots over covered ranges far apart and the holes between them." \
	$PT/tests/sparse.c
for f in $(tracked $PT | grep -v '^tools/testing/pamt/\(kernel\|bench\|model\|vt\)/'); do
	[ -e "$WORK/$f" ] || bad "$f is in no commit of the series"
done

# Nothing of ours may be left out of the series.
for f in arch/x86/include/asm/tdx_pamt.h $(tracked $TDX) Documentation/arch/x86/tdx-dpamt.rst; do
	git -C "$REPO" show "$REV:$f" | cmp -s - "$WORK/$f" ||
		bad "$f of $REV is not in the series as it is"
done
for p in $(tracked tools/testing/pamt/kernel/edits); do
	case $(basename "$p") in
	1*|2*) ;;
	*) bad "$p is in no commit of the series" ;;
	esac
done

# ---- format-patch and the cover letters ----
# base/: the cache, its KUnit suites and the documentation, to post;
# 01-sparse/: far blocks for sparse memory; 02-busy/: the serialised BUSY
# fallback and the ADD turns; 03-observe/: debugfs; harness/: the
# userspace harness, a series of its own that is not posted.
rm -rf "$OUT"
mkdir -p "$OUT"
SERIES="base:$BASE..$DOC_END 01-sparse:$DOC_END..$SPARSE_END 02-busy:$SPARSE_END..$BUSY_END 03-observe:$BUSY_END..$OBSERVE_END harness:$OBSERVE_END..HEAD"
for sr in $SERIES; do
	dir=$OUT/${sr%%:*}
	git -C "$WORK" format-patch -q --cover-letter --thread=shallow -o "$dir" \
		--subject-prefix="RFC PATCH" "${sr#*:}" || die "format-patch ${sr%%:*}"
	# The subject on the first line of cover-<name>.txt, the blurb below
	# it; format-patch adds the shortlog and the diffstat.
	git -C "$REPO" show "$REV:tools/testing/pamt/kernel/cover-${sr%%:*}.txt" > "$dir/.cover" ||
		die "no cover-${sr%%:*}.txt in $REV"
	python3 - "$dir/0000-cover-letter.patch" "$dir/.cover" <<'PY'
import sys
path, cover = sys.argv[1], sys.argv[2]
lines = open(cover).read().split("\n")
subject, blurb = lines[0], "\n".join(lines[1:]).strip("\n")
text = open(path).read()
text = text.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", blurb)
open(path, "w").write(text)
PY
	rm -f "$dir/.cover"
	echo "   $(git -C "$WORK" rev-list --count "${sr#*:}") patches and a cover letter in $dir"
done
# Every patch, in the order they apply.
PATCHES=$(for sr in $SERIES; do ls "$OUT/${sr%%:*}"/0*.patch; done | grep -v '/0000-cover-letter\.patch$')

# Posted patches: at most 800 added lines.  The harness, not posted, at
# most 1,200.
echo "== size: no posted patch over 800 added lines (the harness's: 1,200)"
for p in $PATCHES; do
	n=$(grep -c '^+' "$p")
	n=$((n - $(grep -c '^+++ ' "$p")))
	case $p in
	*/harness/*) max=1200 ;;
	*) max=800 ;;
	esac
	if [ "$n" -le "$max" ]; then
		ok "$n added lines: ${p#"$OUT"/}"
	else
		bad "$n added lines, over $max: ${p#"$OUT"/}"
	fi
done
# The main series' kernel code: every patch before the optional one, less
# the tests, the fake module and tools/.
core=$(git -C "$WORK" diff --numstat "$BASE" "$MAIN_END" -- . \
	":(exclude)$TDX/tests" ':(exclude)tools' | awk '{ s += $1 } END { print s + 0 }')
echo "  core kernel code of the main series: $core lines"
# The cache's own files, tests excluded: the base's budget (2,000 lines).
for sr in "base:$BASE..$DOC_END" "all series:$BASE..$OBSERVE_END"; do
	n=$(git -C "$WORK" diff --numstat "${sr#*:}" -- "$TDX/pamt_*.[ch]" \
		arch/x86/include/asm/tdx_pamt.h | awk '{ s += $1 - $2 } END { print s + 0 }')
	echo "  pamt_*.[ch] and asm/tdx_pamt.h, ${sr%%:*}: $n lines"
done

echo "== checkpatch"
for p in $PATCHES; do
	# A real posting would add a MAINTAINERS entry; that is not ours to pick.
	ign=FILE_PATH_CHANGES
	# The harness's shims restate kernel definitions (typedefs, volatile
	# bitops, barriers, BUG, EXPORT_SYMBOL, IS_ENABLED, attribute macros,
	# macro arguments used as the kernel's own use them), and its EXPECT
	# macros return from the test as KUnit's ASSERTs do.
	grep -q "^Subject: .*tools/testing/pamt:" "$p" &&
		ign=$ign,NEW_TYPEDEFS,VOLATILE,MEMORY_BARRIER,AVOID_BUG,EXPORT_SYMBOL,IS_ENABLED_CONFIG,PREFER_DEFINED_ATTRIBUTE_MACRO,MACRO_ARG_REUSE,MACRO_ARG_UNUSED,MACRO_ARG_PRECEDENCE,MACRO_WITH_FLOW_CONTROL
	if out=$("$PRISTINE/scripts/checkpatch.pl" --strict --no-tree --terse \
		--ignore "$ign" "$p" 2>&1); then
		ok "checkpatch ${p#"$OUT"/}"
	else
		bad "checkpatch ${p#"$OUT"/}"
		echo "$out" | grep -v "^total:\|^$" | head -20 | sed 's/^/      /'
	fi
done

if [ "$CHECK" = 1 ]; then
	echo "== git am onto a fresh $BASE and build ($B)"
	fresh_tree "$CHECKT"
	mkdir -p "$B"
	SEED=$B/seed.config
	# The KUnit configuration, as kunit.py makes it for x86_64 qemu, so
	# that the same build folder serves W=1, KUnit and vmlinux.
	{ cat "$REPO/$TDX/tests/.kunitconfig"; echo "CONFIG_DEBUG_FS=y"
	  echo "CONFIG_SERIAL_8250=y"; echo "CONFIG_SERIAL_8250_CONSOLE=y"; } > "$SEED"
	# shellcheck source-path=SCRIPTDIR source=kunit-lib.sh
	. "$HERE/kunit-lib.sh"
	kunit_tcg_path "$CACHE" || die "no qemu-system-x86_64"
	EXEC_TIMEOUT=${PAMT_KUNIT_TIMEOUT:-1200}
	# kunit_layer NAME: boot what the series has so far, run its suites
	kunit_layer() {
		local name=$1 t=$(date +%s) log=$B/kunit-$1.log res p f sk

		if ! make -C "$CHECKT" O="$B" ARCH=x86_64 -j"$JOBS" bzImage \
			> "$B/build-bzImage-$name.log" 2>&1; then
			bad "KUnit after $name: no bzImage (log $B/build-bzImage-$name.log)"
			tail -20 "$B/build-bzImage-$name.log" | sed 's/^/      /'
			return
		fi
		kunit_exec "$log" "$EXEC_TIMEOUT" \
			python3 "$CHECKT/tools/testing/kunit/kunit.py" exec \
			--arch=x86_64 --build_dir="$B" --qemu_args "-smp 4" \
			--raw_output=all 'tdx_pamt_*'
		res=$(kunit_count "$log" "${name%%-*}")
		read -r p f sk <<< "$(echo "$res" | tail -1)"
		if ! grep -q "KTAP version" "$log"; then
			f=$((f + 1)); res="$res
  no kernel output: boot failed"
		fi
		if ! kunit_scan "$log" > "$B/kunit-problems-$name.txt"; then
			f=$((f + 1)); res="$res
  console problems: $(head -3 "$B/kunit-problems-$name.txt")"
		fi
		if [ "$f" = 0 ] && [ "$p" -gt 0 ]; then
			ok "KUnit after $name: $p cases passed, $sk skipped ($(( $(date +%s) - t ))s)"
		else
			bad "KUnit after $name: $p passed, $f failed (log $log)"
		fi
		echo "$res" | sed '$d' | sed 's/^/    /'
	}
	configure() {
		cp "$SEED" "$B/.config" &&
		make -s -C "$CHECKT" O="$B" ARCH=x86_64 olddefconfig >/dev/null 2>&1
	}
	# Warnings from a W=1 build, in files this series adds or touches.
	our_warnings() {
		grep -E "warning:|error:" "$1" | grep -E "pamt|tdx\.c|tdx_pamt" || true
	}
	idx=0
	for p in $PATCHES; do
		# Its folder and name; idx counts across the folders.
		name=$(basename "$(dirname "$p")")-$(basename "$p")
		idx=$((idx + 1))
		t=$(date +%s)
		if ! GIT -C "$CHECKT" am -q "$p" >/dev/null 2>&1; then
			bad "git am $name"
			git -C "$CHECKT" am --abort >/dev/null 2>&1
			break
		fi
		configure || { bad "configure after $name"; continue; }
		# The objects of the .c files it touches, and the folders of
		# our code (which builds their Makefile changes too).
		files=$(git -C "$CHECKT" show --name-only --format= HEAD | grep -v '^tools/')
		# (tdx_global_metadata.c is #included by tdx.c: not built on
		# its own.)
		dirs=$( (echo "$files" | grep '\.c$' |
			 grep -v '/tdx_global_metadata\.c$' |
			 sed 's|\.c$|.o|'
			 echo "$files" | grep '^arch/x86/virt/vmx/tdx/' | sed 's|[^/]*$||') |
			sort -u | tr '\n' ' ')
		log=$B/build-$name.log
		if [ "$EACH" = 1 ]; then
			make -C "$CHECKT" O="$B" ARCH=x86_64 -j"$JOBS" W=1 vmlinux > "$log" 2>&1
		elif [ -n "$dirs" ]; then
			# shellcheck disable=SC2086
			make -C "$CHECKT" O="$B" ARCH=x86_64 -j"$JOBS" W=1 $dirs > "$log" 2>&1
		else
			: > "$log"
		fi
		rc=$?
		w=$(our_warnings "$log")
		if [ $rc = 0 ] && [ -z "$w" ]; then
			ok "git am + build $name (${dirs:-nothing to build}, $(( $(date +%s) - t ))s)"
		else
			bad "build after $name (rc $rc, log $log)"
			echo "${w:-$(tail -20 "$log")}" | head -20 | sed 's/^/      /'
		fi
		case " $KUNIT_AT " in
		*" $idx "*) kunit_layer "${name%.patch}" ;;
		esac
	done
	t=$(date +%s)
	if make -C "$CHECKT" O="$B" ARCH=x86_64 -j"$JOBS" vmlinux > "$B/build-vmlinux.log" 2>&1; then
		ok "vmlinux of the whole series ($(( $(date +%s) - t ))s)"
	else
		bad "vmlinux of the whole series (log $B/build-vmlinux.log)"
		tail -20 "$B/build-vmlinux.log" | sed 's/^/      /'
	fi
	t=$(date +%s)
	if make -C "$CHECKT/tools/testing/pamt" build/plain/pamt_test > "$B/build-harness.log" 2>&1 &&
	   "$CHECKT/tools/testing/pamt/build/plain/pamt_test" > "$B/run-harness.log" 2>&1; then
		ok "userspace harness builds and passes in the patched tree ($(( $(date +%s) - t ))s)"
	else
		bad "userspace harness in the patched tree (logs $B/*-harness.log)"
		tail -5 "$B/run-harness.log" "$B/build-harness.log" 2>/dev/null | sed 's/^/      /'
	fi
fi

echo "== make-patches: $(( $(date +%s) - T0 ))s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
