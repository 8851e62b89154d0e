// SPDX-License-Identifier: GPL-2.0
/*
 * pamt_insn: the fast path in instructions, for callgrind.
 *
 *   valgrind --tool=callgrind --toggle-collect=insn_pair pamt_insn STRAT N
 *
 * Sets up STRAT over a small simulated host, takes one reference on a page
 * so its 2M slot is installed and active, then calls insn_pair() N times:
 * one get and one put on another page of the same slot, the fast path of
 * every strategy.  Only insn_pair() is collected; instructions per pair =
 * collected total / N.  The calls go through the same function pointers
 * for every strategy.
 *
 * magazine-far: magazine, on a slot of a far block (a second range at pfn
 * 2^40, outside the flat window): the cost of a sparse table's far path.
 *
 * slow, slow-memcg: magazine, the slow path instead, collected in
 * insn_slow(): a vCPU's top-up of its reserve (GFP_KERNEL_ACCOUNT), a get
 * that ADDs (its pair from the magazines), the put that leaves the range
 * idle and the REMOVE of that idle slot, as the shrinker does it (the
 * slot layer's pamt_slot_remove()); slow-memcg with the task in a memcg,
 * so that the top-up charges, the get moves a charge to the range and the
 * REMOVE drops it (the shim's objcg calls, not the kernel's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define INSN_BASE_PFN	0x100000UL
#define INSN_PAGES	(1UL << 18)	/* 1 GiB */
#define INSN_FAR_PFN	(1UL << 40)

__attribute__((__noinline__)) void insn_pair(const struct strat_ops *ops,
					 unsigned long pfn)
{
	ops->get(pfn, NULL);
	ops->put(pfn);
}

/* The REMOVE of an idle slot, as the shrinker and the idle cap do it. */
static void insn_remove(unsigned long pfn)
{
	atomic_t *slot = pamt_slot_lookup(pfn);
	struct tdx_pamt_pair pair;
	int old = atomic_read(slot);

	if (pamt_slot_state(old) == PAMT_SLOT_IDLE &&
	    !pamt_slot_remove(slot, pamt_slot_idx(slot), &old, &pair)) {
		pamt_pair_uncharge(&pair);
		pamt_mag_push(&pair);
	}
}

__attribute__((__noinline__)) void insn_slow(unsigned long pfn,
					 struct tdx_pamt_cache *res)
{
	__tdx_topup_pamt_cache(res, 1, GFP_KERNEL_ACCOUNT);
	tdx_pamt_get(pfn, res);
	tdx_pamt_put(pfn);
	insn_remove(pfn);
}

/* The slow path N times on one slot; 0, or 1 if it did not go the slow way. */
static int insn_slow_run(unsigned long n, bool memcg)
{
	static struct obj_cgroup cg;
	struct tdx_pamt_cache res;
	unsigned long i, pfn = INSN_BASE_PFN + 5 * TDX_PAMT_PAGES_PER_SLOT;

	tdx_init_pamt_cache(&res);
	if (memcg)
		pamt_sim_objcg = &cg;
	for (i = 0; i < n; i++)
		insn_slow(pfn, &res);
	tdx_free_pamt_cache(&res);
	pamt_sim_objcg = NULL;
	if (atomic_long_read(&cg.charged) || atomic_long_read(&cg.refs) ||
	    atomic64_read(&pamt_fake.pairs)) {
		fprintf(stderr, "pamt_insn: the slow path left a charge or a pair\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tdx_pamt_range range = {
		.start_pfn = INSN_BASE_PFN,
		.end_pfn = INSN_BASE_PFN + INSN_PAGES,
	};
	struct tdx_pamt_range two[2] = {
		range, { INSN_FAR_PFN, INSN_FAR_PFN + 16 * TDX_PAMT_PAGES_PER_SLOT },
	};
	struct tdx_pamt_config cfg = {
		.ops = &pamt_env_ops,
	};
	const struct strat_ops *ops = NULL;
	unsigned long n, i, pfn;
	struct page *held;
	bool far, slow;
	int s;

	if (argc != 3) {
		fprintf(stderr, "usage: pamt_insn lock|atomic|lean|magazine|magazine-far N\n"
			"       pamt_insn slow|slow-memcg N\n");
		return 2;
	}
	for (s = 0; s < S_NR; s++)
		if (!strcmp(argv[1], strat_names[s]))
			ops = &strat_ops[s];
	far = !strcmp(argv[1], "magazine-far");
	slow = !strncmp(argv[1], "slow", 4);
	if (far || slow)
		ops = &strat_ops[S_MAG];
	n = strtoul(argv[2], NULL, 0);
	if (!ops || !n)
		return 2;

	pamt_sim_quiet = 1;
	pamt_sim_set_nr_cpus(2);
	pamt_sim_set_cpu(0);
	if (pamt_sim_mem_init(INSN_BASE_PFN, INSN_PAGES) ||
	    (far ? pamt_fake_init_ranges(two, 2) :
		   pamt_fake_init(range.start_pfn, range.end_pfn)) ||
	    ops->init(&range))
		return 1;
	if (far) {
		tdx_pamt_exit();
		if (tdx_pamt_init(two, 2, &cfg) || pamt.nr_flat != INSN_PAGES / 512)
			return 1;
	}
	if (slow) {
		if (insn_slow_run(n, !strcmp(argv[1], "slow-memcg")))
			return 1;
		ops->exit();
		pamt_fake_exit();
		pamt_sim_mem_exit();
		printf("%s %lu\n", argv[1], n);
		return 0;
	}
	/* A TD page in the allocator's first slot, installed and active. */
	held = alloc_page(GFP_KERNEL);
	pfn = far ? INSN_FAR_PFN + 3 * TDX_PAMT_PAGES_PER_SLOT + 5 :
		    page_to_pfn(held);
	if (ops->get(pfn, NULL))
		return 1;
	for (i = 0; i < n; i++)
		insn_pair(ops, pfn);
	if (ops->refs(pfn) != 1) {
		fprintf(stderr, "pamt_insn: refcount moved\n");
		return 1;
	}
	ops->put(pfn);
	__free_page(held);
	ops->exit();
	pamt_fake_exit();
	pamt_sim_mem_exit();
	printf("%s %lu\n", ops->name, n);
	return 0;
}
