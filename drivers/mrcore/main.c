// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: module entry points. Devices come and go through
 * mrc_register_device(); the module itself owns the debugfs root and
 * the workqueue of asynchronous registrations (reg.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>

#include "mrcore_loc.h"

/* /sys/kernel/debug/mrcore; an error pointer if debugfs is unavailable. */
struct dentry *mrc_debugfs_root;

static int __init mrc_init(void)
{
	int ret;

	ret = mrc_reg_init();
	if (ret)
		return ret;
	mrc_debugfs_root = debugfs_create_dir("mrcore", NULL);
	return 0;
}

/*
 * Backends link against our symbols, so no device can still be registered
 * when the module goes away.
 */
static void __exit mrc_exit(void)
{
	debugfs_remove(mrc_debugfs_root);
	mrc_reg_exit();
}

module_init(mrc_init);
module_exit(mrc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Hardware-independent RDMA memory-region core");
MODULE_AUTHOR("mrcore developers");
