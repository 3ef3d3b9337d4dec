// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: access-flag rules for memory registration, as ibv_reg_mr(3)
 * states them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>

#include "mrcore_loc.h"

/* Rights that let a peer or the device modify memory through the key. */
#define MRC_ACCESS_NEEDS_LOCAL_WRITE	(MRC_ACCESS_REMOTE_WRITE |	\
					 MRC_ACCESS_REMOTE_ATOMIC)

/**
 * mrc_check_access - validate the access flags of a registration
 * @access: MRC_ACCESS_* bits
 *
 * Unknown bits are refused first, then REMOTE_WRITE or REMOTE_ATOMIC
 * without LOCAL_WRITE (a peer must not be able to write what the local
 * side may not), then ON_DEMAND, which only user MRs offer. No
 * device state is looked at, so the result depends on @access alone.
 *
 * Context: any context.
 * Return: 0; -EINVAL for an unknown bit or a remote write right without
 * LOCAL_WRITE; -EOPNOTSUPP for MRC_ACCESS_ON_DEMAND (user MRs check it
 * themselves: mrc_odp_check()).
 */
int mrc_check_access(u32 access)
{
	if (access & ~(MRC_ACCESS_SUPPORTED | MRC_ACCESS_ON_DEMAND))
		return -EINVAL;
	if ((access & MRC_ACCESS_NEEDS_LOCAL_WRITE) &&
	    !(access & MRC_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & MRC_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_check_access);
