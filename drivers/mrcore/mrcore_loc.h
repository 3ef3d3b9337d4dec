/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: prototypes shared between the core's own files, grouped by the
 * file that defines them. Nothing here is visible to backends.
 */
#ifndef _MRCORE_LOC_H
#define _MRCORE_LOC_H

#include <linux/printk.h>

#include <rdma/mrcore.h>

/* Debug messages name the device they are about. */
#define mrc_dbg(mdev, fmt, ...) \
	pr_debug("%s: " fmt, (mdev)->name, ##__VA_ARGS__)

/* main.c */
extern struct dentry *mrc_debugfs_root;

/* xlt.c */
int mrc_xlt_init(struct mrc_device *mdev);
void mrc_xlt_fini(struct mrc_device *mdev);

#endif /* _MRCORE_LOC_H */
