// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: one registration entry point for every kind of memory region,
 * with a requested key (the fi_mr_regattr() model).
 *
 * mrc_reg_mr() takes a struct mrc_reg_attr: the kind of MR, its rights,
 * the members of that kind, and the exact key the caller wants (0 lets
 * mrcore choose). The per-kind functions (mrc_reg_dma_mr(),
 * mrc_alloc_frmr(), mrc_alloc_fmr(), mrc_reg_indirect(), ...) are this
 * with key 0, so every path shares one body: the kind's own file checks
 * its arguments, allocates, and takes the key in its install step with
 * mrc_mkey_take(), which gives a failed registration's key back.
 *
 * A requested key is checked here, before the kind's checks and before
 * anything is allocated: index 0, an index past the device's contexts
 * and the local DMA key's index are -EINVAL; an index in use (with any
 * variant) is -ENOKEY. The install step takes the index again under the
 * mkeys lock, so a registration racing for the same index still gets
 * -ENOKEY, never a shared key.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/export.h>
#include <rdma/mrcore_fmr.h>

#include "mrcore_loc.h"

/* The checks every kind shares: the PD, the kind, the requested key. */
static int mrc_reg_check_common(const struct mrc_pd *pd,
				const struct mrc_reg_attr *attr)
{
	if (mrc_check_pd(pd) || !attr)
		return -EINVAL;
	if (attr->type >= MRC_MR_NUM_TYPES)
		return -EINVAL;
	return mrc_mkey_check_req(pd->mdev, attr->key);
}

/* Hand a checked registration to the file of its kind. */
static struct mrc_mr *mrc_reg_kind(struct mrc_pd *pd,
				   const struct mrc_reg_attr *attr,
				   struct mrc_umem *umem)
{
	switch (attr->type) {
	case MRC_MR_FAST_REG:
		return mrc_frmr_reg_attr(pd, attr);
	case MRC_MR_FMR:
		return mrc_fmr_reg_attr(pd, attr);
	case MRC_MR_INDIRECT:
		return mrc_indirect_reg_attr(pd, attr);
	default:
		return mrc_mr_reg_attr(pd, attr, umem);
	}
}

/**
 * mrc_reg_mr - register a memory region of any kind, with a chosen key
 * @pd: protection domain
 * @attr: what to register; @attr->key is the exact key wanted, or 0
 *
 * The registration of @attr->type, with that kind's rules and errors
 * (mrc_reg_dma_mr(), mrc_reg_phys_mr(), mrc_reg_sg_mr(),
 * mrc_reg_user_mr(), mrc_alloc_frmr() or mrc_alloc_frmr_sg_gaps(),
 * mrc_alloc_fmr(), mrc_reg_indirect()). With a non-zero @attr->key the MR
 * gets exactly that key, index and variant: a fast-reg MR is FREE with it
 * until a REG_MR, an FMR holds it until its first map moves it to the
 * next variant. The key is checked before anything is allocated, and a
 * registration that fails after taking it gives it back. Free the MR as
 * its kind is freed, or with mrc_dereg_any().
 *
 * Context: process context (of the process that owns the memory, for a
 * user MR); may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd, no @attr, an unknown
 * @attr->type, or a requested key of index 0, of an index >=
 * caps.max_mkeys or of the local DMA key's index; -ENOKEY if the
 * requested key's index is in use (with any variant); otherwise the
 * errors of the kind's function.
 */
struct mrc_mr *mrc_reg_mr(struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	int ret;

	ret = mrc_reg_check_common(pd, attr);
	if (ret)
		return ERR_PTR(ret);
	return mrc_reg_kind(pd, attr, NULL);
}
EXPORT_SYMBOL_GPL(mrc_reg_mr);

/**
 * mrc_dereg_any - free a memory region of any kind
 * @mr: from mrc_reg_mr() (or a per-kind function), not of an FMR pool
 *
 * mrc_dealloc_frmr() for a fast-reg MR, mrc_dealloc_fmr() for an FMR,
 * mrc_dereg_mr() for every other kind.
 *
 * Context: process context; may sleep.
 * Return: the return value of that function.
 */
int mrc_dereg_any(struct mrc_mr *mr)
{
	switch (mr->type) {
	case MRC_MR_FAST_REG:
		return mrc_dealloc_frmr(mr);
	case MRC_MR_FMR:
		return mrc_dealloc_fmr(mr);
	default:
		return mrc_dereg_mr(mr);
	}
}
EXPORT_SYMBOL_GPL(mrc_dereg_any);
