// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: failure injection, for tests. /sys/kernel/debug/mrcore/<dev>/
 * fail_stage arms one failure at one stage of the registrations on that
 * device: writing "<stage> <n>" makes the n-th following pass through the
 * stage fail with the stage's errno; "none" disarms. The stages, where
 * each one's pass is and the errno it fails with are in
 * Documentation/mrcore/testing.rst.
 *
 * Works without CONFIG_FAULT_INJECTION, which Debian's stock kernel (the
 * VM tier's) does not have. Lock-free: the armed stage and its countdown
 * are one atomic_t, so a pass is one cmpxchg and a disarmed device pays
 * one READ_ONCE per stage (mrc_inject()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mrcore_loc.h"

/* What "fail_stage" reads and accepts, per enum mrc_stage. */
static const char * const mrc_stage_names[MRC_NUM_STAGES] = {
	[MRC_STAGE_PIN] = "pin",
	[MRC_STAGE_SG_ALLOC] = "sg_alloc",
	[MRC_STAGE_DMA_MAP] = "dma_map",
	[MRC_STAGE_KEY_ALLOC] = "key_alloc",
	[MRC_STAGE_XLT_ALLOC] = "xlt_alloc",
	[MRC_STAGE_WRITE_XLT] = "write_xlt",
	[MRC_STAGE_WRITE_MKEY] = "write_mkey",
	[MRC_STAGE_NOWAIT] = "nowait",
};

/* The armed stage + 1 of an mdev->inject value; 0 when disarmed. */
static unsigned int mrc_inject_stage(int armed)
{
	return armed & MRC_INJECT_STAGE_MASK;
}

/* Passes left until the armed one, that one included. */
static unsigned int mrc_inject_left(int armed)
{
	return (unsigned int)armed >> MRC_INJECT_LEFT_SHIFT;
}

/**
 * __mrc_inject - count a pass through an armed stage
 * @mdev: device, with failure injection armed
 * @stage: the stage being passed
 *
 * The slow path of mrc_inject(). A pass through another stage than the
 * armed one changes nothing. The armed pass disarms, counts the failure
 * in @mdev->stats_injected and logs one ratelimited line.
 *
 * Context: any context.
 * Return: true on the armed pass.
 */
bool __mrc_inject(struct mrc_device *mdev, enum mrc_stage stage)
{
	int armed = atomic_read(&mdev->inject);
	int next;

	do {
		if (mrc_inject_stage(armed) != stage + 1)
			return false;
		next = mrc_inject_left(armed) > 1 ?
		       armed - (1 << MRC_INJECT_LEFT_SHIFT) : 0;
	} while (!atomic_try_cmpxchg(&mdev->inject, &armed, next));

	if (next)
		return false;

	atomic64_inc(&mdev->stats_injected[stage]);
	pr_info_ratelimited("%s: failure injected at stage %s\n", mdev->name,
			    mrc_stage_names[stage]);
	return true;
}

/**
 * mrc_inject_total - failures injected on a device so far, every stage
 * @mdev: device
 *
 * Return: the sum of @mdev->stats_injected.
 */
u64 mrc_inject_total(struct mrc_device *mdev)
{
	unsigned int stage;
	u64 total = 0;

	for (stage = 0; stage < MRC_NUM_STAGES; stage++)
		total += atomic64_read(&mdev->stats_injected[stage]);
	return total;
}

static int mrc_fail_stage_show(struct seq_file *s, void *unused)
{
	struct mrc_device *mdev = s->private;
	int armed = atomic_read(&mdev->inject);
	unsigned int stage = mrc_inject_stage(armed);

	seq_printf(s, "stage %s\n",
		   stage ? mrc_stage_names[stage - 1] : "none");
	seq_printf(s, "left %u\n", mrc_inject_left(armed));
	for (stage = 0; stage < MRC_NUM_STAGES; stage++)
		seq_printf(s, "fired_%s %lld\n", mrc_stage_names[stage],
			   (long long)atomic64_read(&mdev->stats_injected[stage]));
	return 0;
}

/*
 * "none", "<stage>" (the next pass) or "<stage> <n>", n in [1,
 * MRC_INJECT_MAX_LEFT], as the mdev->inject value it arms.
 */
static int mrc_inject_parse(char *s, int *armed)
{
	char *name = strsep(&s, " \t");
	unsigned int n = 1;
	int stage;

	if (s && kstrtouint(skip_spaces(s), 10, &n))
		return -EINVAL;

	if (!strcmp(name, "none")) {
		if (s)
			return -EINVAL;
		*armed = 0;
		return 0;
	}

	stage = match_string(mrc_stage_names, MRC_NUM_STAGES, name);
	if (stage < 0 || !n || n > MRC_INJECT_MAX_LEFT)
		return -EINVAL;
	*armed = n << MRC_INJECT_LEFT_SHIFT | (stage + 1);
	return 0;
}

/* Arming replaces whatever was armed; the fired counts are kept. */
static ssize_t mrc_fail_stage_write(struct file *file, const char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	struct seq_file *s = file->private_data;
	struct mrc_device *mdev = s->private;
	char buf[32];
	int armed, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';

	ret = mrc_inject_parse(strim(buf), &armed);
	if (ret)
		return ret;

	atomic_set(&mdev->inject, armed);
	mrc_dbg(mdev, "fail_stage armed %#x\n", armed);
	return len;
}

static int mrc_fail_stage_open(struct inode *inode, struct file *file)
{
	return single_open(file, mrc_fail_stage_show, inode->i_private);
}

static const struct file_operations mrc_fail_stage_fops = {
	.owner = THIS_MODULE,
	.open = mrc_fail_stage_open,
	.read = seq_read,
	.write = mrc_fail_stage_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * mrc_inject_debugfs_add - add "fail_stage" to a device's debugfs directory
 * @mdev: device whose directory exists (or is an error pointer, in which
 *	case nothing is created and injection cannot be armed)
 *
 * Root only (0600): an armed failure breaks the device's next
 * registrations, whoever makes them.
 */
void mrc_inject_debugfs_add(struct mrc_device *mdev)
{
	debugfs_create_file("fail_stage", 0600, mdev->debugfs, mdev,
			    &mrc_fail_stage_fops);
}
