// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: the kinds of memory region, one table (the rxe_type_info idea).
 *
 * Everything mrcore does differently per kind of MR is one entry of
 * mrc_kinds[], keyed by enum mrc_mr_type: the checks an asynchronous
 * registration makes synchronously, the registration, the function that
 * frees it, the teardown of the kind's own state in the common dereg, the
 * state of its context, the device fault hook, and the memory behind it
 * for rereg. The core (mr.c, reg.c,
 * odp.c's fault entry) calls a kind only through this table; the kinds'
 * files call the core, never the table.
 *
 * ODP is not a kind of its own: it is a user MR with ON_DEMAND, whose
 * registration and release the user kind hands to odp.c, and whose faults
 * are mrc_odp_fault()'s own.
 */
#include <rdma/mrcore_fmr.h>

#include "mrcore_loc.h"

const struct mrc_kind_ops mrc_kinds[MRC_MR_NUM_TYPES] = {
	[MRC_MR_DMA] = {
		.check = mrc_dma_check,
		.reg = mrc_dma_reg,
		.dereg = mrc_dereg_mr,
	},
	[MRC_MR_PHYS] = {
		.check = mrc_phys_check,
		.reg = mrc_phys_reg,
		.dereg = mrc_dereg_mr,
		.segs = mrc_phys_segs,
	},
	[MRC_MR_SG] = {
		.check = mrc_sg_check,
		.reg = mrc_sg_reg,
		.dereg = mrc_dereg_mr,
		.segs = mrc_sg_segs,
	},
	[MRC_MR_USER] = {
		.check = mrc_user_check,
		.reg = mrc_user_reg,
		.dereg = mrc_dereg_mr,
		.release = mrc_user_release,
		.segs = mrc_user_segs,
	},
	[MRC_MR_FAST_REG] = {
		.check = mrc_frmr_check_attr,
		.reg = mrc_frmr_reg_attr,
		.dereg = mrc_dealloc_frmr,
		.state = mrc_frmr_state,
	},
	[MRC_MR_FMR] = {
		.check = mrc_fmr_check_reg_attr,
		.reg = mrc_fmr_reg_attr,
		.dereg = mrc_dealloc_fmr,
	},
	[MRC_MR_INDIRECT] = {
		.check = mrc_indirect_check_attr,
		.reg = mrc_indirect_reg_attr,
		.dereg = mrc_dereg_mr,
	},
	/* Registered by file descriptor only: mrc_reg_dmabuf_mr(). */
	[MRC_MR_DMABUF] = {
		.dereg = mrc_dereg_mr,
		.release = mrc_dmabuf_release,
		.fault = mrc_dmabuf_fault,
	},
};
