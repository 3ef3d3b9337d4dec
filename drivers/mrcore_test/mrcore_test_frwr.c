// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: FRWR: REG_MR / LOCAL_INV through a QP pair, cycle benchmark.
 */
#include <linux/errno.h>

#include "mrcore_test.h"

static long mrct_frwr_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			    void __user *uarg)
{
	return -ENOTTY;
}

static void mrct_frwr_unbind(struct mrct_ctx *ctx)
{
}

const struct mrct_ext mrct_frwr_ext = {
	.ioctl = mrct_frwr_ioctl,
	.unbind = mrct_frwr_unbind,
};
