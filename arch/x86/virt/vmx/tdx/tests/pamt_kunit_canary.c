// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the tests that WARN on purpose, and the canaries.
 *
 * The WARN tests run last, so that the TAINT_WARN they leave behind cannot
 * hide a warning in another test; the console lines between the two
 * markers below are what the runner allows.
 *
 * The canaries run only with pamt_kunit.canary=1.  Each one trips one
 * checker, and is reported as failed when that checker works: lockdep
 * (a lock-order inversion), the sleep-in-atomic check (a GFP_KERNEL
 * allocation under a spinlock), lockdep's wait-type check (a spinlock_t
 * inside a slot transition, which would sleep on PREEMPT_RT), KASAN (a
 * use after free) and kmemleak (an object nothing points to).  KCSAN's
 * canary, an unmarked race, passes: the runner looks for KCSAN's report.
 *
 * With kmemleak, the last suite (tdx_pamt_leaks) asks it for a scan
 * after every other suite ran and fails on any leak our code allocated.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include "pamt_kunit.h"

#define PK_WARN_BEGIN	"pamt_kunit: BEGIN expected WARNING"
#define PK_WARN_END	"pamt_kunit: END expected WARNING"

/*
 * A debugfs file of the checkers' (kmemleak, fault injection), opened
 * from a boot that has no userspace to mount debugfs: the mount is ours,
 * and goes with the file's last reference.
 */
static struct file *pk_debugfs_open(const char *name, int flags)
{
	struct file_system_type *fs = get_fs_type("debugfs");
	struct vfsmount *mnt;
	struct path path;
	struct file *f;
	int err;

	if (!fs)
		return ERR_PTR(-ENODEV);
	mnt = vfs_kern_mount(fs, 0, "debugfs", NULL);
	put_filesystem(fs);
	if (IS_ERR(mnt))
		return ERR_CAST(mnt);
	err = vfs_path_lookup(mnt->mnt_root, mnt, name, 0, &path);
	if (err) {
		mntput(mnt);
		return ERR_PTR(err);
	}
	f = dentry_open(&path, flags, current_cred());
	path_put(&path);
	mntput(mnt);
	return f;
}

/*
 * These files take only user buffers (kernel_read() and kernel_write()
 * refuse them): a mapping in the test's own mm, which KUnit unmaps.
 */
static char __user *pk_user_buf(struct kunit *test, size_t len)
{
	unsigned long addr = kunit_vm_mmap(test, NULL, 0, len,
					   PROT_READ | PROT_WRITE,
					   MAP_ANONYMOUS | MAP_PRIVATE, 0);

	return IS_ERR_VALUE(addr) ? NULL : (char __user *)addr;
}

int pk_debugfs_write(struct kunit *test, const char *name, const char *val)
{
	size_t len = strlen(val);
	char __user *ubuf = pk_user_buf(test, len + 1);
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	if (!ubuf)
		return -ENOMEM;
	if (copy_to_user(ubuf, val, len))
		return -EFAULT;
	f = pk_debugfs_open(name, O_WRONLY);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = vfs_write(f, ubuf, len, &pos);
	fput(f);
	return n < 0 ? n : 0;
}

/* Up to @len - 1 bytes of @name into @buf, NUL-terminated. */
ssize_t pk_debugfs_read(struct kunit *test, const char *name, char *buf,
			size_t len)
{
	char __user *ubuf = pk_user_buf(test, len);
	ssize_t n = 0, got = 0;
	struct file *f;
	loff_t pos = 0;

	if (!ubuf)
		return -ENOMEM;
	f = pk_debugfs_open(name, O_RDONLY);
	if (IS_ERR(f))
		return PTR_ERR(f);
	while (got < len - 1) {
		n = vfs_read(f, ubuf + got, len - 1 - got, &pos);
		if (n <= 0)
			break;
		got += n;
	}
	fput(f);
	if (copy_from_user(buf, ubuf, got))
		return -EFAULT;
	buf[got] = '\0';
	return n < 0 ? n : got;
}

/* A second put on an idle slot warns once and changes nothing. */
static void pk_warn_double_put(struct kunit *test)
{
	unsigned long pfn, word;

	pk_up(test);
	pfn = pk_slot_pfn(test, 30);
	KUNIT_ASSERT_EQ(test, tdx_pamt_get(pfn, NULL), 0);
	KUNIT_ASSERT_EQ(test, tdx_pamt_put(pfn), 0);
	word = pk_word(pfn);

	pk_expect_warn(test);
	pr_info(PK_WARN_BEGIN "\n");
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), -EINVAL);
	pr_info(PK_WARN_END "\n");
	KUNIT_EXPECT_TRUE(test, test_taint(TAINT_WARN));
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pfn), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_word(pfn), word);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_IDLE_SLOTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_PUT_FAST), 1ULL);
	/* On an EMPTY slot too. */
	KUNIT_EXPECT_EQ(test, tdx_pamt_put(pk_slot_pfn(test, 31)), -EINVAL);
	KUNIT_EXPECT_EQ(test, pk_word(pk_slot_pfn(test, 31)), 0UL);
	pk_check_accounting(test, 0);
}

/* ADD says the range already has a pair: -EIO, a WARN, nothing kept. */
static void pk_warn_add_hpa_range_not_free(struct kunit *test)
{
	unsigned long pfn;

	pk_up(test);
	pfn = pk_slot_pfn(test, 32);
	PK_INJECT(PAMT_FAKE_ADD, TDX_PAMT_HPA_RANGE_NOT_FREE, 1);
	pk_expect_warn(test);
	pr_info(PK_WARN_BEGIN "\n");
	KUNIT_EXPECT_EQ(test, tdx_pamt_get(pfn, NULL), -EIO);
	pr_info(PK_WARN_END "\n");
	KUNIT_EXPECT_EQ(test, pk_word(pfn), 0UL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_INSTALLED), 0ULL);
	KUNIT_EXPECT_EQ(test, pk_stat(TDX_PAMT_STAT_CACHED_PAIRS), 1ULL);
	pk_check_accounting(test, 0);
}

static struct kunit_case pk_warn_cases[] = {
	KUNIT_CASE(pk_warn_double_put),
	KUNIT_CASE(pk_warn_add_hpa_range_not_free),
	KUNIT_CASE(pk_suite_leak_check),
	{}
};

static struct kunit_suite pk_warn_suite = {
	.name = "tdx_pamt_warn",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_warn_cases,
};

static DEFINE_MUTEX(pk_canary_a);
static DEFINE_MUTEX(pk_canary_b);
static DEFINE_RAW_SPINLOCK(pk_canary_raw);
static DEFINE_SPINLOCK(pk_canary_lock);

static void pk_canary_check(struct kunit *test)
{
	if (!pk_canary)
		kunit_skip(test, "canaries run with pamt_kunit.canary=1");
}

/* a -> b, then b -> a: lockdep reports a possible circular locking. */
static void pk_canary_lock_inversion(struct kunit *test)
{
	pk_canary_check(test);
	mutex_lock(&pk_canary_a);
	mutex_lock(&pk_canary_b);
	mutex_unlock(&pk_canary_b);
	mutex_unlock(&pk_canary_a);

	mutex_lock(&pk_canary_b);
	mutex_lock(&pk_canary_a);
	mutex_unlock(&pk_canary_a);
	mutex_unlock(&pk_canary_b);
}

/*
 * A GFP_KERNEL allocation under a raw spinlock: sleeping in atomic
 * context, with or without PREEMPT_RT.
 */
static void pk_canary_sleep_in_atomic(struct kunit *test)
{
	void *p;

	pk_canary_check(test);
	raw_spin_lock(&pk_canary_raw);
	p = kmalloc(32, GFP_KERNEL);
	raw_spin_unlock(&pk_canary_raw);
	kfree(p);
}

/*
 * A spinlock_t inside a raw spinlock: on PREEMPT_RT the inner lock
 * sleeps.  Lockdep's wait-type check (PROVE_RAW_LOCK_NESTING) reports it
 * on any kernel that has the check.
 */
static void pk_canary_raw_nesting(struct kunit *test)
{
	pk_canary_check(test);
	if (!IS_ENABLED(CONFIG_PROVE_RAW_LOCK_NESTING))
		kunit_skip(test, "needs CONFIG_PROVE_RAW_LOCK_NESTING");
	raw_spin_lock(&pk_canary_raw);
	spin_lock(&pk_canary_lock);
	spin_unlock(&pk_canary_lock);
	raw_spin_unlock(&pk_canary_raw);
}

/*
 * A spinlock_t inside a slot transition, as the owner of an ADD once took
 * the magazines' locks: it sleeps on PREEMPT_RT.  The transition's lockdep
 * map lets the wait-type check (PROVE_RAW_LOCK_NESTING) report it on any
 * kernel, RT or not.
 */
static void pk_canary_transit_sleeping_lock(struct kunit *test)
{
	pk_canary_check(test);
	pamt_transit_begin();
	spin_lock(&pk_canary_lock);
	spin_unlock(&pk_canary_lock);
	pamt_transit_end();
}

/* A read of freed memory: KASAN reports it and KUnit fails the test. */
static void pk_canary_use_after_free(struct kunit *test)
{
	char *p;

	pk_canary_check(test);
	if (!IS_ENABLED(CONFIG_KASAN))
		kunit_skip(test, "needs CONFIG_KASAN");
	p = kmalloc(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	KUNIT_EXPECT_EQ(test, READ_ONCE(p[8]), READ_ONCE(p[8]));
}

/*
 * Two threads on one plain int, neither access marked: the data race
 * KCSAN exists to report ("BUG: KCSAN: data-race in pk_canary_race_...").
 */
static int pk_racy;

static int pk_canary_race_writer(void *arg)
{
	unsigned long end = jiffies + 2 * HZ;

	while (time_before(jiffies, end)) {
		pk_racy++;
		cpu_relax();
	}
	complete(arg);
	return 0;
}

static void pk_canary_data_race(struct kunit *test)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct task_struct *t;
	unsigned long end = jiffies + 2 * HZ, sum = 0;

	pk_canary_check(test);
	if (!IS_ENABLED(CONFIG_KCSAN))
		kunit_skip(test, "needs CONFIG_KCSAN");
	t = kthread_run(pk_canary_race_writer, &done, "pk_racer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	while (time_before(jiffies, end)) {
		sum += pk_racy;
		cpu_relax();
	}
	wait_for_completion(&done);
	kunit_info(test, "read %lu", sum);
}

/*
 * kmemleak's report, after two scans: an object is reported once it is
 * older than kmemleak's minimum age and unchanged over a scan.  Without
 * @stacks, task stacks are not scanned (a dead stack slot still holding
 * a pointer would count as a reference).  Returns the bytes read into
 * @buf, or -errno.
 */
static ssize_t pk_kmemleak_report(struct kunit *test, char *buf, size_t len,
				  bool stacks)
{
	int err, i;

	err = pk_debugfs_write(test, "kmemleak", stacks ? "stack=on" : "stack=off");
	if (err)
		return err;
	for (i = 0; i < 2; i++) {
		err = pk_debugfs_write(test, "kmemleak", "scan");
		if (err)
			return err;
	}
	return pk_debugfs_read(test, "kmemleak", buf, len);
}

/*
 * The leaks in @report whose text names @who, counted; with @test, each
 * printed too.
 */
static unsigned int pk_leaks_of(struct kunit *test, char *report,
				const char *who)
{
	static const char start[] = "unreferenced object";
	char *p = strstr(report, start), *next;
	unsigned int n = 0;

	while (p) {
		next = strstr(p + 1, start);
		if (next)
			next[-1] = '\0';
		if (strstr(p, who)) {
			if (test)
				kunit_info(test, "%s", p);
			n++;
		}
		if (next)
			next[-1] = '\n';
		p = next;
	}
	return n;
}

#define PK_LEAK_REPORT_LEN	(64 * 1024)

/*
 * Objects whose only pointers are kept scrambled, where kmemleak cannot
 * read them: several, so that a pointer left behind (a register, a dead
 * stack slot, a per-CPU cache of free slab objects) cannot hide them
 * all; small ones from a slab and large ones from the page allocator.
 */
#define PK_LEAKS	8
static unsigned long pk_leak_scrambled[2 * PK_LEAKS];

static noinline void pk_canary_leaker(void)
{
	unsigned int i;

	for (i = 0; i < PK_LEAKS; i++) {
		pk_leak_scrambled[2 * i] = ~(unsigned long)kmalloc(96, GFP_KERNEL);
		pk_leak_scrambled[2 * i + 1] =
			~(unsigned long)kmalloc(4 * PAGE_SIZE, GFP_KERNEL);
	}
}

/* An object nothing points to: kmemleak reports it, and the test fails. */
static void pk_canary_leak(struct kunit *test)
{
	char *report;
	ssize_t n;

	pk_canary_check(test);
	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		kunit_skip(test, "needs CONFIG_DEBUG_KMEMLEAK");
	report = kunit_kzalloc(test, PK_LEAK_REPORT_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, report);
	pk_canary_leaker();
	msleep(6000);
	n = pk_kmemleak_report(test, report, PK_LEAK_REPORT_LEN, false);
	KUNIT_ASSERT_GE(test, n, 0);
	kunit_info(test, "kmemleak: %zd bytes of report, %u leaks in all", n,
		   pk_leaks_of(NULL, report, "unreferenced object"));
	KUNIT_EXPECT_EQ(test, pk_leaks_of(test, report, "pk_canary_leaker"), 0U);
}

static struct kunit_case pk_canary_cases[] = {
	KUNIT_CASE(pk_canary_lock_inversion),
	KUNIT_CASE(pk_canary_sleep_in_atomic),
	KUNIT_CASE(pk_canary_raw_nesting),
	KUNIT_CASE(pk_canary_transit_sleeping_lock),
	KUNIT_CASE(pk_canary_use_after_free),
	KUNIT_CASE_SLOW(pk_canary_data_race),
	KUNIT_CASE_SLOW(pk_canary_leak),
	{}
};

static struct kunit_suite pk_canary_suite = {
	.name = "tdx_pamt_canary",
	.init = pk_test_init,
	.exit = pk_test_exit,
	.test_cases = pk_canary_cases,
};

/*
 * After every other suite: no object our code or its tests allocated is
 * left with nothing pointing to it.  Objects younger than kmemleak's
 * minimum age (5 s) are not reported, so the last suites' get it first.
 */
static void pk_leaks_none(struct kunit *test)
{
	char *report;
	ssize_t n;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		kunit_skip(test, "needs CONFIG_DEBUG_KMEMLEAK");
	report = kunit_kzalloc(test, PK_LEAK_REPORT_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, report);
	msleep(6000);
	n = pk_kmemleak_report(test, report, PK_LEAK_REPORT_LEN, true);
	KUNIT_ASSERT_GE(test, n, 0);
	kunit_info(test, "kmemleak: %zd bytes of report, %u leaks in all",
		   n, pk_leaks_of(NULL, report, "unreferenced object"));
	KUNIT_EXPECT_EQ(test, pk_leaks_of(test, report, "pamt_"), 0U);
	KUNIT_EXPECT_EQ(test, pk_leaks_of(test, report, " pk_"), 0U);
}

static struct kunit_case pk_leaks_cases[] = {
	KUNIT_CASE_SLOW(pk_leaks_none),
	{}
};

static struct kunit_suite pk_leaks_suite = {
	.name = "tdx_pamt_leaks",
	.test_cases = pk_leaks_cases,
};

kunit_test_suites(&pk_warn_suite, &pk_canary_suite, &pk_leaks_suite);
