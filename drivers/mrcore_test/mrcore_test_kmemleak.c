// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: leaks planted for kmemleak, so the test tier can show that
 * kmemleak reports a leak on the kernel it runs on before it trusts a scan
 * that reports none (leaks.sh). kmemleak-test, the kernel's module for
 * this, cannot serve: on the 6.1 debug kernel the scan after it never
 * returns (Documentation/mrcore/hardening.rst).
 *
 * Writing N (1 .. MRCT_PLANT_MAX) to /sys/kernel/debug/mrcore_test/
 * kmemleak_plant allocates N objects of MRCT_PLANT_SIZE bytes that begin
 * with MRCT_PLANT_MARK and keeps no pointer to any of them: they are lost
 * for good, a few hundred bytes per write. A scan reports each one whose
 * address no stale word (an old stack slot, say) still holds; the test
 * plants several and asks for at least one. Root only (debugfs).
 */
#include <linux/debugfs.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mrcore_test.h"

#define MRCT_PLANT_MAX		64U
#define MRCT_PLANT_SIZE		96
/* The first bytes of a planted object: kmemleak's hex dump shows them. */
#define MRCT_PLANT_MARK		"mrct kmemleak plant"

static struct dentry *mrct_debugfs;

/* One object, lost on return; noinline keeps the pointer in this frame. */
static noinline int mrct_plant_one(void)
{
	char *p = kmalloc(MRCT_PLANT_SIZE, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	/* Else the stores, to memory nothing reads, may be left out. */
	OPTIMIZER_HIDE_VAR(p);
	memset(p, 0, MRCT_PLANT_SIZE);
	memcpy(p, MRCT_PLANT_MARK, sizeof(MRCT_PLANT_MARK));
	return 0;
}

static ssize_t mrct_plant_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	unsigned int n, i;
	int err;

	err = kstrtouint_from_user(ubuf, len, 0, &n);
	if (err)
		return err;
	if (!n || n > MRCT_PLANT_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		err = mrct_plant_one();
		if (err)
			return err;
	}
	return len;
}

static const struct file_operations mrct_plant_fops = {
	.owner = THIS_MODULE,
	.write = mrct_plant_write,
	.llseek = noop_llseek,
};

/* The debugfs files; none when debugfs is absent (nothing to plant). */
void mrct_kmemleak_init(void)
{
	mrct_debugfs = debugfs_create_dir("mrcore_test", NULL);
	debugfs_create_file("kmemleak_plant", 0200, mrct_debugfs, NULL,
			    &mrct_plant_fops);
}

void mrct_kmemleak_exit(void)
{
	debugfs_remove(mrct_debugfs);
}
