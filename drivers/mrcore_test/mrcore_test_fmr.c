// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: FMRs and FMR pools on a vhca device (mrcore's API).
 */
#include <linux/errno.h>

#include "mrcore_test.h"

static long mrct_fmr_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			    void __user *uarg)
{
	return -ENOTTY;
}

static void mrct_fmr_unbind(struct mrct_ctx *ctx)
{
}

const struct mrct_ext mrct_fmr_ext = {
	.ioctl = mrct_fmr_ioctl,
	.unbind = mrct_fmr_unbind,
};
