/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: prototypes shared between the core's own files, grouped by the
 * file that defines them. Nothing here is visible to backends.
 */
#ifndef _MRCORE_LOC_H
#define _MRCORE_LOC_H

#include <linux/printk.h>
#include <linux/ratelimit.h>

#include <rdma/mrcore.h>

/* Debug messages name the device they are about. */
#define mrc_dbg(mdev, fmt, ...) \
	pr_debug("%s: " fmt, (mdev)->name, ##__VA_ARGS__)

/*
 * A caller bug that mrcore survives, such as freeing a stale key or freeing
 * twice: the call is rejected without touching live state, counted in
 * stats_misuse and reported on one ratelimited line naming the function.
 * Not a WARN: nothing is inconsistent, and the KUnit suites provoke these
 * on purpose and check the count.
 */
static inline bool __mrc_misuse(struct mrc_device *mdev, bool bad,
				const char *fn)
{
	if (unlikely(bad)) {
		atomic64_inc(&mdev->stats_misuse);
		pr_err_ratelimited("%s: %s: caller bug rejected\n", mdev->name,
				   fn);
	}
	return bad;
}

#define mrc_misuse(mdev, cond) __mrc_misuse(mdev, cond, __func__)

/* main.c */
extern struct dentry *mrc_debugfs_root;

/* xlt.c */
int mrc_xlt_init(struct mrc_device *mdev);
void mrc_xlt_fini(struct mrc_device *mdev);

#endif /* _MRCORE_LOC_H */
