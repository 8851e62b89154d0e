// SPDX-License-Identifier: GPL-2.0
/* KUnit suite for the Dynamic PAMT cache's debugfs files. */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "pamt_debugfs.h"
#include "pamt_kunit.h"

static char *pk_dbg_show_stats(struct kunit *test)
{
	struct seq_file m = { };

	m.size = PAGE_SIZE;
	m.buf = kunit_kzalloc(test, m.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.buf);
	KUNIT_ASSERT_EQ(test, pamt_stats_show(&m, NULL), 0);
	KUNIT_ASSERT_LT(test, m.count, m.size);
	return m.buf;
}

/* /sys/kernel/debug/tdx/pamt/@name, or NULL; dput() it. */
static struct dentry *pk_dbg_lookup(const char *name)
{
	struct dentry *tdx = debugfs_lookup("tdx", NULL), *dir, *d = NULL;

	dir = tdx ? debugfs_lookup("pamt", tdx) : NULL;
	if (dir)
		d = debugfs_lookup(name, dir);
	dput(dir);
	dput(tdx);
	return d;
}

/* The value of @name in the stats file, or -1 if it is not there. */
static long long pk_dbg_stat_value(const char *buf, const char *name)
{
	size_t len = strlen(name);
	const char *p = buf;
	long long val;

	while (p && *p) {
		if (!strncmp(p, name, len) && p[len] == ' ' &&
		    sscanf(p + len + 1, "%lld", &val) == 1)
			return val;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static void pk_dbg_stats(struct kunit *test)
{
	unsigned long pfn;
	char *buf;
	int i, lines = 0;

	pk_up(test);
	pfn = pk_slot_pfn(test, 3);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn, NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn, NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_put(pfn), 0);

	buf = pk_dbg_show_stats(test);
	for (i = 0; buf[i]; i++)
		lines += buf[i] == '\n';
	KUNIT_EXPECT_EQ(test, lines, TDX_PAMT_STAT_NR);
	for (i = 0; i < TDX_PAMT_STAT_NR; i++)
		KUNIT_EXPECT_GE_MSG(test,
				    pk_dbg_stat_value(buf, tdx_pamt_stat_names[i]),
				    0LL, "%s", tdx_pamt_stat_names[i]);
	KUNIT_EXPECT_EQ(test, pk_dbg_stat_value(buf, "get_slow"), 1LL);
	KUNIT_EXPECT_EQ(test, pk_dbg_stat_value(buf, "get_fast"), 1LL);
	KUNIT_EXPECT_EQ(test, pk_dbg_stat_value(buf, "installed_slots"), 1LL);
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), 0);

	if (IS_ENABLED(CONFIG_DEBUG_FS)) {
		struct dentry *d;

		d = pk_dbg_lookup("stats");
		KUNIT_EXPECT_NOT_NULL(test, d);
		dput(d);
	}
}

static void pk_dbg_drain_cap(struct kunit *test)
{
	u64 cap;
	int i;

	pk_up(test);
	for (i = 0; i < 6; i++) {
		KUNIT_ASSERT_EQ(test, tdx_pamt_get(pk_slot_pfn(test, i), NULL), 0);
		KUNIT_ASSERT_EQ(test, tdx_pamt_put(pk_slot_pfn(test, i)), 0);
	}
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 6ULL);

	pk_set_idle_cap(4);
	KUNIT_EXPECT_EQ(test, pamt_debugfs_idle_cap_get(NULL, &cap), 0);
	KUNIT_EXPECT_EQ(test, cap, 4ULL);
	KUNIT_EXPECT_LE(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 4ULL);
	if (IS_ENABLED(CONFIG_DEBUG_FS)) {
		struct dentry *d = pk_dbg_lookup("idle_cap");

		KUNIT_ASSERT_NOT_NULL(test, d);
		KUNIT_EXPECT_EQ(test, d_inode(d)->i_mode & 0777, 0444);
		dput(d);
	}

	KUNIT_EXPECT_EQ(test, pamt_debugfs_drain_set(NULL, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, pamt_debugfs_drain_set(NULL, 1), 0);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	pk_check_accounting(test, 0);
}

/* Every counter has a name. */
static void pk_stat_names(struct kunit *test)
{
	int i;

	for (i = 0; i < TDX_PAMT_STAT_NR; i++)
		KUNIT_EXPECT_NOT_NULL_MSG(test, tdx_pamt_stat_names[i],
					  "counter %d", i);
}

static struct kunit_case pk_dbg_cases[] = {
	KUNIT_CASE(pk_stat_names),
	KUNIT_CASE(pk_dbg_stats),
	KUNIT_CASE(pk_dbg_drain_cap),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_dbg_suite = {
	.name = "tdx_pamt_debugfs",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_dbg_cases,
};

kunit_test_suite(pk_dbg_suite);
