# SPDX-License-Identifier: GPL-2.0
#
# TDX Dynamic PAMT cache: top-level entry points.
#
#   make bench       the main job: replay the seed's TD boot/teardown
#                    experiment for every strategy (tools/testing/pamt/bench)
#   make test        everything below; ends with "N passed, N failed"
#
#   make check       userspace harness: unit tests (plain, ASan/UBSan, TSan),
#                    stress, mutant
#   make bench-test  the benchmark's own correctness tests
#   make vt-test     the virtual-time engine and model (tools/testing/pamt/vt)
#   make model       spin model of the slot state machine, and its mutants
#   make kunit       KUnit in qemu, lockdep in each: KASAN, PREEMPT_RT, KCSAN
#                    with kmemleak, canaries
#   make soak        the KUnit stress suite, booted again and again for
#                    SOAK_MIN minutes (default 10) under KASAN and fault
#                    injection, then KCSAN (not part of make test)
#   make lint        checkpatch --strict, sparse, kernel-doc on our files
#   make bench-insn  instructions per fast-path get+put (callgrind)
#   make bench-scale virtual time: 8..256 virtual CPUs, every strategy,
#                    tables and plots in bench-results/vt, and in shared
#                    memory (BUSY, poisoned 2M) in bench-results/vt-shared
#   make patches     format-patch series against pristine 7.3: out/patches/
#                    base/, 01-sparse/, 02-busy/ and harness/ (not posted)
#   make patches-check  the series, applied with git am to a fresh 7.3
#                    tree and built; KUnit after each cache layer patch

PAMT	:= tools/testing/pamt
LOGS	:= build/test-logs
# Parts of "make test", in order; each prints "N passed, N failed".
TEST_PARTS ?= check bench-test vt-test model kunit lint patches-check

all: check

check:
	$(MAKE) -C $(PAMT) check

bench:
	$(MAKE) -C $(PAMT)/bench bench

bench-insn:
	$(MAKE) -C $(PAMT)/bench bench-insn

bench-test:
	$(MAKE) -C $(PAMT)/bench test

vt-test:
	$(MAKE) -C $(PAMT)/vt test

bench-scale:
	$(MAKE) -C $(PAMT)/vt scale
	$(MAKE) -C $(PAMT)/vt scale-shared

model:
	$(MAKE) -C $(PAMT)/model model

kunit:
	$(PAMT)/kernel/run-kunit.sh

soak:
	SOAK_MIN=$(or $(SOAK_MIN),10) $(PAMT)/kernel/soak.sh

lint:
	$(PAMT)/kernel/lint.sh

patches:
	$(PAMT)/kernel/make-patches.sh

patches-check:
	$(PAMT)/kernel/make-patches.sh --check

# Run every part even if one fails, then add up their summary lines.
test:
	@mkdir -p $(LOGS); rm -f $(LOGS)/*.log; \
	for part in $(TEST_PARTS); do \
		echo "=== make $$part"; \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$part > $(LOGS)/$$part.log 2>&1; \
		rc=$$?; \
		tail -n 5 $(LOGS)/$$part.log; \
		echo "=== make $$part: exit $$rc, $$(( $$(date +%s) - start ))s"; \
		if [ $$rc -ne 0 ] && ! tail -n 1 $(LOGS)/$$part.log | \
			grep -Eq '^[0-9]+ passed, [1-9][0-9]* failed$$'; then \
			echo "0 passed, 1 failed" >> $(LOGS)/$$part.log; \
		fi; \
	done; \
	$(PAMT)/summary.sh "$(LOGS)/*.log"

clean:
	$(MAKE) -C $(PAMT) clean
	$(MAKE) -C $(PAMT)/vt clean
	rm -rf build out

.PHONY: all check bench bench-insn bench-test vt-test bench-scale model kunit soak lint patches \
	patches-check test clean
