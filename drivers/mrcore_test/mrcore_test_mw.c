// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: memory windows and indirect keys on a vhca device.
 */
#include <linux/errno.h>

#include "mrcore_test.h"

static long mrct_mw_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			    void __user *uarg)
{
	return -ENOTTY;
}

static void mrct_mw_unbind(struct mrct_ctx *ctx)
{
}

const struct mrct_ext mrct_mw_ext = {
	.ioctl = mrct_mw_ioctl,
	.unbind = mrct_mw_unbind,
};
