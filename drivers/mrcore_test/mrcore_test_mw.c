// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: memory windows and indirect keys on a vhca device.
 *
 * Windows and indirect keys are made with mrcore's API on the PD and MR
 * behind the context's ib_pd and ib_mr (vhca_pd_mrc(), vhca_mr_mrc()):
 * ib_core 6.1 has no kernel verb for either. A type 1 window is bound by
 * mrc_bind_mw(); a type 2 window by a struct vhca_bind_mw_wr posted on a
 * loopback pair's QP, which the vhca engine executes in QP order and
 * which binds the window to that QP.
 *
 * This file owns the context's MW state (struct mrct_mw), which holds the
 * SG_GAPS MRs of mrcore_test_gaps.c too, and hands that file its ioctls.
 *
 * Invalidation and data movement need nothing of this file: MRCT_FRWR_INV
 * posts LOCAL_INV or Send with Invalidate with any key, and MRCT_QP_POST
 * moves bytes through any rkey.
 *
 * Everything runs under the context's lock. Unbinding frees the windows
 * first (a bound window holds its MR: the MR could not be deregistered),
 * then the indirect keys, then the SG_GAPS MRs and their buffers; the
 * context's own MRs and PDs go after that, in the main file.
 */
#include <linux/dma-direction.h>
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

/**
 * mrct_mw_get - the context's MW state, made on first use
 * @ctx: the context, locked
 *
 * Return: the state, or an ERR_PTR if it cannot be: -ENODEV with no
 * device bound, -EOPNOTSUPP on a device other than vhca, -ENOMEM.
 */
struct mrct_mw *mrct_mw_get(struct mrct_ctx *ctx)
{
	struct mrct_mw *st = ctx->ext[MRCT_EXT_MW];

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return ERR_PTR(-ENODEV);
	if (!ctx->is_vhca)
		return ERR_PTR(-EOPNOTSUPP);
	if (st)
		return st;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return ERR_PTR(-ENOMEM);
	xa_init_flags(&st->mws, XA_FLAGS_ALLOC1);
	xa_init_flags(&st->inds, XA_FLAGS_ALLOC1);
	xa_init_flags(&st->gaps, XA_FLAGS_ALLOC1);
	ctx->ext[MRCT_EXT_MW] = st;
	return st;
}

/**
 * mrct_mw_store - store an object under a new handle (never 0)
 * @xa: one of the xarrays of struct mrct_mw
 * @next: its allocation cursor
 * @obj: the object
 * @handle: out: its handle
 *
 * Return: 0, or xa_alloc_cyclic()'s error.
 */
int mrct_mw_store(struct xarray *xa, u32 *next, void *obj, u32 *handle)
{
	int err;

	err = xa_alloc_cyclic(xa, handle, obj, XA_LIMIT(1, U32_MAX), next,
			      GFP_KERNEL);
	return err < 0 ? err : 0;
}

/* Posting ------------------------------------------------------------- */

/* Windows ------------------------------------------------------------- */

static int mrct_mw_alloc_locked(struct mrct_ctx *ctx,
				struct mrct_mw_alloc *req)
{
	struct mrct_mw *st;
	struct mrc_mw *mw;
	int err;

	lockdep_assert_held(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st->nr_mws >= MRCT_MW_MAX)
		return -EMFILE;

	mw = mrc_alloc_mw(vhca_pd_mrc(ctx->pd[req->pd]), req->type);
	if (IS_ERR(mw))
		return PTR_ERR(mw);
	err = mrct_mw_store(&st->mws, &st->next_mw, mw, &req->handle);
	if (err) {
		/* Unbound and never handed out: nothing can hold it. */
		WARN_ON(mrc_dealloc_mw(mw));
		return err;
	}
	st->nr_mws++;
	req->rkey = mrc_mw_rkey(mw);
	return 0;
}

static int mrct_mw_alloc(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_mw_alloc req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS)
		return -EINVAL;

	/* On a fault the window stays until the file is closed. */
	return mrct_call_locked(ctx, mrct_mw_alloc_locked, &req, uarg);
}

static int mrct_mw_dealloc(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_mw_handle req;
	struct mrct_mw *st;
	struct mrc_mw *mw;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st)) {
		err = PTR_ERR(st);
		goto out_unlock;
	}
	mw = xa_load(&st->mws, req.handle);
	if (!mw) {
		err = -ENOENT;
		goto out_unlock;
	}
	err = mrc_dealloc_mw(mw);
	if (!err) {
		xa_erase(&st->mws, req.handle);
		st->nr_mws--;
	}
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/* The MR a type 1 bind names: an MR of MRCT_REG, an indirect key, or NULL. */
static int mrct_mw_bind_mr(struct mrct_ctx *ctx, struct mrct_mw *st,
			   const struct mrct_mw_bind *req, struct mrc_mr **mr)
{
	struct ib_mr *ibmr;

	lockdep_assert_held(&ctx->lock);
	*mr = NULL;
	if (!req->mr)
		return 0;
	if (req->flags & MRCT_MW_BIND_INDIRECT) {
		*mr = xa_load(&st->inds, req->mr);
		return *mr ? 0 : -ENOENT;
	}
	ibmr = xa_load(&ctx->mrs, req->mr);
	if (!ibmr)
		return -ENOENT;
	*mr = vhca_mr_mrc(ibmr);
	return *mr ? 0 : -EINVAL;
}

static int mrct_mw_bind_locked(struct mrct_ctx *ctx, struct mrct_mw_bind *req)
{
	struct mrct_mw *st;
	struct mrc_mw *mw;
	struct mrc_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	mw = xa_load(&st->mws, req->handle);
	if (!mw)
		return -ENOENT;
	err = mrct_mw_bind_mr(ctx, st, req, &mr);
	if (err)
		return err;

	/* The MR stays registered: MRCT_DEREG waits for the context's lock. */
	err = mrc_bind_mw(mw, mr, req->addr, req->length, req->access);
	req->rkey = mrc_mw_rkey(mw);
	return err;
}

static int mrct_mw_bind(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_mw_bind req;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~MRCT_MW_BIND_INDIRECT || req.reserved)
		return -EINVAL;
	req.rkey = 0;

	mutex_lock(&ctx->lock);
	err = mrct_mw_bind_locked(ctx, &req);
	mutex_unlock(&ctx->lock);

	/* The rkey goes back after a refused bind too: it must not move. */
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return err;
}

/* The mw_rkey of a Bind MW WR, as @req asks. */
static u32 mrct_mw_wr_key(const struct mrc_mw *mw,
			  const struct mrct_mw_bind_wr *req)
{
	switch (req->key_mode) {
	case MRCT_MW_KEY_SAME:
		return mrc_mw_rkey(mw);
	case MRCT_MW_KEY_RAW:
		return req->mw_rkey;
	default:
		return ib_inc_rkey(mrc_mw_rkey(mw));
	}
}

static int mrct_mw_bind_wr_locked(struct mrct_ctx *ctx,
				  struct mrct_mw_bind_wr *req)
{
	struct vhca_bind_mw_wr bind = {
		.wr.opcode = IB_WR_BIND_MW,
		.mr_lkey = req->mr_lkey,
		.addr = req->addr,
		.length = req->length,
		.access = req->access,
	};
	struct mrc_mw *mw = NULL;
	struct mrct_pair *pair;
	struct mrct_mw *st;
	int err;

	lockdep_assert_held(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (req->handle) {
		mw = xa_load(&st->mws, req->handle);
		if (!mw)
			return -ENOENT;
	}
	pair = mrct_pair_get(ctx, req->pair);
	if (IS_ERR(pair))
		return PTR_ERR(pair);

	bind.mw_rkey = mw ? mrct_mw_wr_key(mw, req) : req->mw_rkey;
	req->mw_rkey = bind.mw_rkey;
	err = mrct_post_wait(ctx, pair, req->qp, &bind.wr, &req->post_err,
			     &req->bad_wr, &req->status);
	if (err)
		return err;
	req->rkey = mw ? mrc_mw_rkey(mw) : 0;
	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	return 0;
}

static int mrct_mw_bind_wr(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_mw_bind_wr req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.qp > 1 || req.key_mode > MRCT_MW_KEY_RAW || req.reserved ||
	    (!req.handle && req.key_mode != MRCT_MW_KEY_RAW))
		return -EINVAL;
	req.post_err = 0;
	req.bad_wr = MRCT_BAD_WR_NULL;
	req.status = MRCT_WC_NONE;
	req.rkey = 0;
	req.qp_state[0] = MRCT_QPS_UNKNOWN;
	req.qp_state[1] = MRCT_QPS_UNKNOWN;

	return mrct_call_locked(ctx, mrct_mw_bind_wr_locked, &req, uarg);
}

/* Indirect keys ------------------------------------------------------- */

static int mrct_ind_reg_locked(struct mrct_ctx *ctx, struct mrct_ind_reg *req,
			       const struct mrc_key_range *ranges)
{
	struct mrct_mw *st;
	struct mrc_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st->nr_inds >= MRCT_IND_MAX)
		return -EMFILE;

	mr = mrc_reg_indirect(vhca_pd_mrc(ctx->pd[req->pd]), ranges,
			      req->nranges, req->iova, req->access);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	err = mrct_mw_store(&st->inds, &st->next_ind, mr, &req->handle);
	if (err) {
		/* Never handed out: no window can be bound to it. */
		WARN_ON(mrc_dereg_mr(mr));
		return err;
	}
	st->nr_inds++;
	req->key = mr->key;
	return 0;
}

static int mrct_ind_reg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrc_key_range ranges[MRCT_IND_MAX_RANGES];
	struct mrct_ind_reg req;
	u32 i;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS || req.nranges > MRCT_IND_MAX_RANGES ||
	    req.reserved)
		return -EINVAL;
	for (i = 0; i < req.nranges; i++) {
		if (req.ranges[i].reserved)
			return -EINVAL;
		ranges[i] = (struct mrc_key_range) {
			.key = req.ranges[i].key,
			.addr = req.ranges[i].addr,
			.length = req.ranges[i].length,
		};
	}

	mutex_lock(&ctx->lock);
	err = mrct_ind_reg_locked(ctx, &req, ranges);
	mutex_unlock(&ctx->lock);
	if (err)
		return err;

	/* On a fault the key stays until the file is closed. */
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

static int mrct_ind_dereg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_mw_handle req;
	struct mrct_mw *st;
	struct mrc_mr *mr;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st)) {
		err = PTR_ERR(st);
		goto out_unlock;
	}
	mr = xa_load(&st->inds, req.handle);
	if (!mr) {
		err = -ENOENT;
		goto out_unlock;
	}
	err = mrc_dereg_mr(mr);
	if (!err) {
		xa_erase(&st->inds, req.handle);
		st->nr_inds--;
	}
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/* Hooks --------------------------------------------------------------- */

/* The UAPI spells ib_verbs.h's and mrcore's values; keep them equal. */
static void mrct_mw_check_uapi(void)
{
	BUILD_BUG_ON(MRCT_MW_TYPE_1 != IB_MW_TYPE_1);
	BUILD_BUG_ON(MRCT_MW_TYPE_2 != IB_MW_TYPE_2);
	BUILD_BUG_ON(MRCT_MW_TYPE_1 != MRC_MW_TYPE_1);
	BUILD_BUG_ON(MRCT_MW_TYPE_2 != MRC_MW_TYPE_2);
	BUILD_BUG_ON(MRCT_WC_BIND_MW != IB_WC_BIND_MW);
	BUILD_BUG_ON(MRCT_ACCESS_ZERO_BASED != MRC_ACCESS_ZERO_BASED);
	BUILD_BUG_ON(!is_power_of_2(MRCT_GAPS_BUF_SIZE) ||
		     MRCT_GAPS_BUF_SIZE < PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct mrct_mw_alloc) != 16);
	BUILD_BUG_ON(sizeof(struct mrct_mw_handle) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_mw_bind) != 40);
	BUILD_BUG_ON(sizeof(struct mrct_mw_bind_wr) != 72);
	BUILD_BUG_ON(sizeof(struct mrct_ind_range) != 24);
	BUILD_BUG_ON(sizeof(struct mrct_ind_reg) !=
		     32 + MRCT_IND_MAX_RANGES * sizeof(struct mrct_ind_range));
	BUILD_BUG_ON(sizeof(struct mrct_gaps_alloc) != 24);
	BUILD_BUG_ON(sizeof(struct mrct_gaps_piece) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_gaps_reg) !=
		     72 + MRCT_GAPS_MAX_PIECES * sizeof(struct mrct_gaps_piece));
	BUILD_BUG_ON(sizeof(struct mrct_gaps_buf) != 24);
}

static long mrct_mw_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			  void __user *uarg)
{
	mrct_mw_check_uapi();
	switch (cmd) {
	case MRCT_MW_ALLOC:
		return mrct_mw_alloc(ctx, uarg);
	case MRCT_MW_DEALLOC:
		return mrct_mw_dealloc(ctx, uarg);
	case MRCT_MW_BIND:
		return mrct_mw_bind(ctx, uarg);
	case MRCT_MW_BIND_WR:
		return mrct_mw_bind_wr(ctx, uarg);
	case MRCT_IND_REG:
		return mrct_ind_reg(ctx, uarg);
	case MRCT_IND_DEREG:
		return mrct_ind_dereg(ctx, uarg);
	case MRCT_GAPS_ALLOC:
		return mrct_gaps_alloc(ctx, uarg);
	case MRCT_GAPS_FREE:
		return mrct_gaps_free(ctx, uarg);
	case MRCT_GAPS_REG:
		return mrct_gaps_reg(ctx, uarg);
	case MRCT_GAPS_BUF_READ:
		return mrct_gaps_buf(ctx, uarg, false);
	case MRCT_GAPS_BUF_WRITE:
		return mrct_gaps_buf(ctx, uarg, true);
	default:
		return -ENOTTY;
	}
}

/*
 * Windows first: a bound one keeps its MR (an MR of the context, an
 * SG_GAPS MR here, or an FRWR MR) from being deregistered. Then the
 * indirect keys, which name MRs without holding them, then the SG_GAPS
 * MRs. What fails to go is reported and left allocated.
 */
static void mrct_mw_unbind(struct mrct_ctx *ctx)
{
	struct mrct_mw *st = ctx->ext[MRCT_EXT_MW];
	struct mrct_gaps_mr *g;
	unsigned long handle;
	struct mrc_mw *mw;
	struct mrc_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!st)
		return;
	xa_for_each(&st->mws, handle, mw) {
		xa_erase(&st->mws, handle);
		err = mrc_dealloc_mw(mw);
		if (err)
			ibdev_warn(ctx->ibdev, "MW handle %lu: dealloc failed: %d\n",
				   handle, err);
	}
	xa_for_each(&st->inds, handle, mr) {
		xa_erase(&st->inds, handle);
		err = mrc_dereg_mr(mr);
		if (err)
			ibdev_warn(ctx->ibdev, "indirect key handle %lu: dereg failed: %d\n",
				   handle, err);
	}
	xa_for_each(&st->gaps, handle, g) {
		xa_erase(&st->gaps, handle);
		err = mrct_gaps_free_one(ctx->ibdev, g);
		if (err)
			ibdev_warn(ctx->ibdev, "SG_GAPS MR handle %lu: dereg failed: %d\n",
				   handle, err);
	}
	xa_destroy(&st->mws);
	xa_destroy(&st->inds);
	xa_destroy(&st->gaps);
	kfree(st);
	ctx->ext[MRCT_EXT_MW] = NULL;
}

const struct mrct_ext mrct_mw_ext = {
	.ioctl = mrct_mw_ioctl,
	.unbind = mrct_mw_unbind,
};
