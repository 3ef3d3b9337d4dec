// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: on-demand paging. MRCT_ODP_ADVISE gives ib_advise_mr() on
 * one range of an MR of the context (MRCT_REG with MRCT_ACCESS_ON_DEMAND),
 * MRCT_ODP_STATS reads mrcore's counters of the MR and of its device. The
 * MRs are the context's own ib_mrs; this file keeps no state.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

static int mrct_odp_advise_locked(struct mrct_ctx *ctx,
				  const struct mrct_odp_advise *req)
{
	struct ib_sge sge;
	struct ib_mr *mr;

	if (!ctx->ibdev)
		return -ENODEV;
	mr = xa_load(&ctx->mrs, req->handle);
	if (!mr)
		return -ENOENT;
	sge = (struct ib_sge) {
		.addr = req->addr,
		.length = req->length,
		.lkey = mr->lkey,
	};
	return ib_advise_mr(ctx->pd[req->pd], req->advice, req->flags, &sge,
			    1);
}

static long mrct_odp_advise(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_odp_advise req;
	int err;

	BUILD_BUG_ON(MRCT_ADVISE_PREFETCH !=
		     IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH);
	BUILD_BUG_ON(MRCT_ADVISE_PREFETCH_WRITE !=
		     IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE);
	BUILD_BUG_ON(MRCT_ADVISE_PREFETCH_NO_FAULT !=
		     IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT);
	BUILD_BUG_ON(MRCT_ADVISE_FLUSH != IB_UVERBS_ADVISE_MR_FLAG_FLUSH);

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS || req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	err = mrct_odp_advise_locked(ctx, &req);
	mutex_unlock(&ctx->lock);
	return err;
}

static int mrct_odp_stats_locked(struct mrct_ctx *ctx,
				 struct mrct_odp_stats *req)
{
	struct mrc_odp_dev_stats *d;
	struct mrc_odp_stats st;
	struct mrc_mr *base;
	struct ib_mr *mr;
	int err;

	if (!ctx->ibdev)
		return -ENODEV;
	if (!ctx->is_vhca)
		return -EOPNOTSUPP;
	mr = xa_load(&ctx->mrs, req->handle);
	if (!mr)
		return -ENOENT;
	base = vhca_mr_mrc(mr);
	if (!base)
		return -EINVAL;
	err = mrc_mr_odp_stats(base, &st);
	if (err)
		return err;

	d = &base->mdev->odp;
	req->faults = st.faults;
	req->fault_pages = st.fault_pages;
	req->invalidations = st.invalidations;
	req->invalidated_pages = st.invalidated_pages;
	req->prefetched_pages = st.prefetched_pages;
	req->mapped_pages = st.mapped_pages;
	req->dev_faults = atomic64_read(&d->faults);
	req->dev_fault_errors = atomic64_read(&d->fault_errors);
	req->dev_fault_pages = atomic64_read(&d->fault_pages);
	req->dev_invalidations = atomic64_read(&d->invalidations);
	req->dev_invalidated_pages = atomic64_read(&d->invalidated_pages);
	req->dev_prefetches = atomic64_read(&d->prefetches);
	req->dev_prefetched_pages = atomic64_read(&d->prefetched_pages);
	req->children = st.children;
	req->children_created = st.children_created;
	req->children_reclaimed = st.children_reclaimed;
	req->dev_children_created = atomic64_read(&d->children_created);
	req->dev_children_reclaimed = atomic64_read(&d->children_reclaimed);
	return 0;
}

static long mrct_odp_stats(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_odp_stats req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	return mrct_call_locked(ctx, mrct_odp_stats_locked, &req, uarg);
}

static long mrct_odp_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			   void __user *uarg)
{
	switch (cmd) {
	case MRCT_ODP_ADVISE:
		return mrct_odp_advise(ctx, uarg);
	case MRCT_ODP_STATS:
		return mrct_odp_stats(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/* Nothing of its own to free: the MRs are the context's. */
static void mrct_odp_unbind(struct mrct_ctx *ctx)
{
}

const struct mrct_ext mrct_odp_ext = {
	.ioctl = mrct_odp_ioctl,
	.unbind = mrct_odp_unbind,
};
