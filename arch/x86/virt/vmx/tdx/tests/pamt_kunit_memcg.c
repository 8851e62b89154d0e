// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: memory accounting with a real memcg.  The test makes a cgroup
 * with the memory controller on, charges as KVM's vCPU thread would
 * (set_active_memcg() in this kthread), and reads the memcg's "kernel"
 * statistic (MEMCG_KMEM): a top-up charges its reserve's pages, a get
 * under a spinlock installs a charged pair, freeing the reserve and
 * reclaim give every charge back, at memory.max the memcg's own reclaim
 * too, and a lost pair's pages when they are freed.
 * Documentation/arch/x86/tdx-dpamt.rst, "Memory accounting".
 */
#include <linux/cgroup.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/page_counter.h>
#include <linux/sched/mm.h>
#include <linux/spinlock.h>
#include "pamt_kunit.h"

#define PK_MEMCG_NAME	"tdx_pamt_kunit"
/* Pages charged per pair. */
#define PK_PAIR_PAGES	2

static DEFINE_SPINLOCK(pk_lock);

/**
 * struct pk_memcg - a cgroup this test made
 * @mnt: a kernel-internal mount of cgroup2
 * @made: the cgroup's directory exists
 * @css: its memory css, with a reference
 * @memcg: its memcg
 */
struct pk_memcg {
	struct vfsmount *mnt;
	bool made;
	struct cgroup_subsys_state *css;
	struct mem_cgroup *memcg;
};

/* Turn the memory controller on for the root's children, make a child. */
static int pk_memcg_make(struct pk_memcg *m)
{
	struct file_system_type *fs = get_fs_type("cgroup2");
	struct dentry *root, *d;
	struct cgroup *cgrp;
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	if (!fs)
		return -ENODEV;
	m->mnt = kern_mount(fs);
	put_filesystem(fs);
	if (IS_ERR(m->mnt))
		return PTR_ERR(m->mnt);
	f = file_open_root_mnt(m->mnt, "cgroup.subtree_control", O_WRONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, "+memory", 7, &pos);
	fput(f);
	if (n != 7)
		return n < 0 ? n : -EIO;

	root = m->mnt->mnt_root;
	d = start_creating_noperm(root, &QSTR(PK_MEMCG_NAME));
	if (IS_ERR(d))
		return PTR_ERR(d);
	d = vfs_mkdir(&nop_mnt_idmap, d_inode(root), d, 0755, NULL);
	if (IS_ERR(d))
		return PTR_ERR(d);
	end_creating(d);
	m->made = true;

	cgrp = cgroup_get_from_path("/" PK_MEMCG_NAME);
	if (IS_ERR(cgrp))
		return PTR_ERR(cgrp);
	m->css = cgroup_get_e_css(cgrp, &memory_cgrp_subsys);
	cgroup_put(cgrp);
	m->memcg = mem_cgroup_from_css(m->css);
	return mem_cgroup_is_root(m->memcg) ? -EINVAL : 0;
}

static void pk_memcg_remove(struct pk_memcg *m)
{
	struct dentry *root, *d;

	if (m->css)
		css_put(m->css);
	if (m->made) {
		root = m->mnt->mnt_root;
		d = start_removing_noperm(root, &QSTR(PK_MEMCG_NAME));
		if (!IS_ERR(d)) {
			vfs_rmdir(&nop_mnt_idmap, d_inode(root), d, NULL);
			end_removing(d);
		}
	}
	if (!IS_ERR_OR_NULL(m->mnt))
		kern_unmount(m->mnt);
}

/* Kernel memory charged to @memcg, in pages, exact: the stats flushed. */
static unsigned long pk_kmem(struct mem_cgroup *memcg)
{
	css_rstat_flush(&memcg->css);
	return memcg_page_state(memcg, MEMCG_KMEM);
}

/*
 * A VM's fault in @memcg: the top-up charges the reserve's pages; a get
 * under a spinlock (KVM's mmu_lock) installs one of its pairs, charge
 * and all; a second fault on the range charges nothing more.  Freeing the
 * reserve (vCPU teardown) drops its charges; the idle range stays
 * charged until reclaim removes its pair.
 */
static void pk_memcg_charge(struct kunit *test)
{
	struct tdx_pamt_cache res;
	struct mem_cgroup *old;
	struct pk_memcg m = { };
	unsigned long base, pfn;
	int ret;

	pk_up(test);
	ret = pk_memcg_make(&m);
	if (ret) {
		pk_memcg_remove(&m);
		KUNIT_FAIL(test, "cannot make a memcg: %d", ret);
		return;
	}
	pfn = pk_slot_pfn(test, 11);
	tdx_init_pamt_cache(&res);
	base = pk_kmem(m.memcg);

	old = set_active_memcg(m.memcg);
	KUNIT_EXPECT_EQ(test, tdx_topup_pamt_cache(&res, 4), 0);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + 4 * PK_PAIR_PAGES);
	spin_lock(&pk_lock);
	ret = tdx_pamt_get(pfn, &res);
	spin_unlock(&pk_lock);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + 4 * PK_PAIR_PAGES);
	KUNIT_EXPECT_EQ(test, tdx_topup_pamt_cache(&res, 4), 0);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + 5 * PK_PAIR_PAGES);
	spin_lock(&pk_lock);
	ret = tdx_pamt_get(pfn + 1, &res);
	spin_unlock(&pk_lock);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + 5 * PK_PAIR_PAGES);
	set_active_memcg(old);
	pk_check_accounting(test, res.nr);

	tdx_free_pamt_cache(&res);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + PK_PAIR_PAGES);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn + 1), 0);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + PK_PAIR_PAGES);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base);
	pk_check_accounting(test, 0);
	pk_memcg_remove(&m);
}

/* Write @val to the file @name under the cgroup2 mount. */
static int pk_memcg_write(struct pk_memcg *m, const char *name,
			  const char *val)
{
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = file_open_root_mnt(m->mnt, name, O_WRONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, val, strlen(val), &pos);
	fput(f);
	return n == strlen(val) ? 0 : n < 0 ? n : -EIO;
}

#define PK_MAX_RANGES	256	/* idle ranges charged: 2 MiB of pairs */
#define PK_MAX_ROOM	16	/* pages below memory.max when it starts */

/*
 * A memcg at memory.max gets its own idle pairs back through its own
 * reclaim: ranges charged to it go idle, memory.max is set just above
 * what it uses, then it allocates pages past the limit.  The kernel's
 * memcg reclaim must reach the cache's shrinker for that memcg: every
 * allocation and a top-up succeed, and the ranges' charge falls.
 */
static void pk_memcg_reclaim_at_max(struct kunit *test)
{
	unsigned long i, kmem, got = 0, usage, shrink;
	struct tdx_pamt_cache res;
	struct mem_cgroup *old;
	struct pk_memcg m = { };
	struct page **pages;
	char buf[32];
	int ret;

	pk_up(test);
	KUNIT_ASSERT_EQ(test, pk_glue(test), 0);
	pages = kunit_kcalloc(test, PK_MAX_RANGES, sizeof(*pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	ret = pk_memcg_make(&m);
	if (ret) {
		pk_memcg_remove(&m);
		KUNIT_FAIL(test, "cannot make a memcg: %d", ret);
		return;
	}
	tdx_init_pamt_cache(&res);
	old = set_active_memcg(m.memcg);
	for (i = 0; i < PK_MAX_RANGES; i++) {
		ret = tdx_topup_pamt_cache(&res, 1);
		if (!ret) {
			spin_lock(&pk_lock);
			ret = tdx_pamt_get(pk_slot_pfn(test, i), &res);
			spin_unlock(&pk_lock);
		}
		KUNIT_EXPECT_EQ(test, ret, 0);
	}
	tdx_free_pamt_cache(&res);
	for (i = 0; i < PK_MAX_RANGES; i++)
		KUNIT_EXPECT_EQ(test, tdx_pamt_put(pk_slot_pfn(test, i)), 0);
	kmem = pk_kmem(m.memcg);
	KUNIT_EXPECT_GE(test, kmem, PK_MAX_RANGES * PK_PAIR_PAGES);

	usage = page_counter_read(&m.memcg->memory);
	snprintf(buf, sizeof(buf), "%lu", (usage + PK_MAX_ROOM) * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, pk_memcg_write(&m, PK_MEMCG_NAME "/memory.max", buf), 0);
	shrink = pk_stat(TDX_PAMT_STAT_SHRINK);
	for (i = 0; i < PK_MAX_RANGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!pages[i])
			break;
		got++;
	}
	ret = tdx_topup_pamt_cache(&res, 4);
	set_active_memcg(old);
	shrink = pk_stat(TDX_PAMT_STAT_SHRINK) - shrink;
	kunit_info(test, "%lu pages allocated past memory.max, %lu idle pairs reclaimed, kmem %lu -> %lu pages\n",
		   got, shrink, kmem, pk_kmem(m.memcg));
	KUNIT_EXPECT_EQ(test, got, (unsigned long)PK_MAX_RANGES);
	KUNIT_EXPECT_EQ(test, ret, 0);
	/* Room for the pages came from the ranges' charges. */
	KUNIT_EXPECT_GE(test, shrink * PK_PAIR_PAGES,
			(unsigned long)PK_MAX_RANGES - PK_MAX_ROOM);

	for (i = 0; i < got; i++)
		__free_page(pages[i]);
	tdx_free_pamt_cache(&res);
	tdx_pamt_drain();
	pk_check_accounting(test, 0);
	pk_memcg_remove(&m);
}

/*
 * A pair the module lost (PAMT.REMOVE answers NO_PAMT_PAGE_PAIR) keeps
 * its charge in its pages, which the cache can no longer name; the page
 * allocator drops it when whoever holds them frees them.
 */
static void pk_memcg_lost_pair(struct kunit *test)
{
	struct tdx_pamt_cache res;
	struct tdx_pamt_pair pair;
	struct mem_cgroup *old;
	struct pk_memcg m = { };
	unsigned long base, pfn;
	int ret;

	pk_up(test);
	ret = pk_memcg_make(&m);
	if (ret) {
		pk_memcg_remove(&m);
		KUNIT_FAIL(test, "cannot make a memcg: %d", ret);
		return;
	}
	pfn = pk_slot_pfn(test, 12);
	tdx_init_pamt_cache(&res);
	base = pk_kmem(m.memcg);
	old = set_active_memcg(m.memcg);
	KUNIT_EXPECT_EQ(test, tdx_topup_pamt_cache(&res, 1), 0);
	KUNIT_EXPECT_EQ(test, tdx_pamt_get(pfn, &res), 0);
	set_active_memcg(old);
	tdx_free_pamt_cache(&res);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + PK_PAIR_PAGES);

	pamt_fake_inject(PAMT_FAKE_REMOVE, TDX_PAMT_NO_PAGE_PAIR, 1, 0);
	tdx_pamt_drain();
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base + PK_PAIR_PAGES);
	/* The injection left the fake module holding the pair. */
	KUNIT_ASSERT_EQ(test, pamt_fake_ops.remove(round_down(pfn, TDX_PAMT_PAGES_PER_SLOT),
						   &pair), 0ULL);
	__free_page(pfn_to_page(pair.pfn[0]));
	__free_page(pfn_to_page(pair.pfn[1]));
	pamt_stat_add(PAGE_FREE, 2);
	KUNIT_EXPECT_EQ(test, pk_kmem(m.memcg), base);
	pk_check_accounting(test, 0);
	pk_memcg_remove(&m);
}

static struct kunit_case pk_memcg_cases[] = {
	KUNIT_CASE(pk_memcg_charge),
	KUNIT_CASE(pk_memcg_reclaim_at_max),
	KUNIT_CASE(pk_memcg_lost_pair),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_memcg_suite = {
	.name = "tdx_pamt_memcg",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_memcg_cases,
};

kunit_test_suite(pk_memcg_suite);
