// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: counters of remote writes (MRCT_CNT_*), on a vhca device.
 *
 * A context allocates counters with mrc_alloc_counter() on the mrcore
 * device behind its PDs (vhca_pd_mrc()) and binds them to MRs found by
 * lkey: any MR of the context's PDs, whichever file made it, as long as
 * the context holds it (every call runs under the context's lock, which
 * every file's MR teardown also takes). The tests then drive RDMA WRITEs,
 * READs and atomics through the main file's QP pairs and read back what
 * the device counted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

/**
 * struct mrct_cnt - a context's counters (ctx->ext[MRCT_EXT_COUNTER])
 * @cnts: handle -> struct mrc_counter
 * @next: allocation cursor for @cnts
 * @nr: entries of @cnts
 */
struct mrct_cnt {
	struct xarray cnts;
	u32 next;
	u32 nr;
};

/* The context's counter state, made on first use; an ERR_PTR if not. */
static struct mrct_cnt *mrct_cnt_get(struct mrct_ctx *ctx)
{
	struct mrct_cnt *st = ctx->ext[MRCT_EXT_COUNTER];

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
	xa_init_flags(&st->cnts, XA_FLAGS_ALLOC1);
	ctx->ext[MRCT_EXT_COUNTER] = st;
	return st;
}

static struct mrc_device *mrct_cnt_mdev(struct mrct_ctx *ctx)
{
	return vhca_pd_mrc(ctx->pd[0])->mdev;
}

static int mrct_cnt_alloc_locked(struct mrct_ctx *ctx,
				 struct mrct_cnt_alloc *req)
{
	struct mrc_counter *c;
	struct mrct_cnt *st;
	int err;

	st = mrct_cnt_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st->nr >= MRCT_CNT_MAX)
		return -EMFILE;

	c = mrc_alloc_counter(mrct_cnt_mdev(ctx));
	if (IS_ERR(c))
		return PTR_ERR(c);
	err = xa_alloc_cyclic(&st->cnts, &req->handle, c,
			      XA_LIMIT(1, U32_MAX), &st->next, GFP_KERNEL);
	if (err < 0) {
		/* Bound to nothing and never handed out. */
		WARN_ON(mrc_free_counter(c));
		return err;
	}
	st->nr++;
	req->index = c->index;
	return 0;
}

static int mrct_cnt_alloc(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_cnt_alloc req = {};

	/* On a fault the counter stays until the file is closed. */
	return mrct_call_locked(ctx, mrct_cnt_alloc_locked, &req, uarg);
}

/* The counter behind @handle, or an ERR_PTR. */
static struct mrc_counter *mrct_cnt_find(struct mrct_ctx *ctx, u32 handle)
{
	struct mrct_cnt *st = mrct_cnt_get(ctx);
	struct mrc_counter *c;

	if (IS_ERR(st))
		return ERR_CAST(st);
	c = handle ? xa_load(&st->cnts, handle) : NULL;
	return c ?: ERR_PTR(-ENOENT);
}

static int mrct_cnt_free(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_cnt_free req;
	struct mrc_counter *c;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;

	mutex_lock(&ctx->lock);
	c = mrct_cnt_find(ctx, req.handle);
	err = PTR_ERR_OR_ZERO(c);
	if (!err)
		err = mrc_free_counter(c);
	if (!err) {
		struct mrct_cnt *st = ctx->ext[MRCT_EXT_COUNTER];

		xa_erase(&st->cnts, req.handle);
		st->nr--;
	}
	mutex_unlock(&ctx->lock);
	return err;
}

/*
 * The MR owning @key, if it is one of the context's (its PD is): then
 * the context's lock keeps it alive, as every file deregisters under it.
 */
static struct mrc_mr *mrct_cnt_mr(struct mrct_ctx *ctx, u32 key)
{
	struct mrc_mr *mr;
	int i;

	lockdep_assert_held(&ctx->lock);
	rcu_read_lock();
	mr = mrc_mkey_owner(mrct_cnt_mdev(ctx), key);
	for (i = 0; mr && i < MRCT_NUM_PDS; i++)
		if (ctx->pd[i] && mr->pd == vhca_pd_mrc(ctx->pd[i]))
			break;
	rcu_read_unlock();
	return mr && i < MRCT_NUM_PDS ? mr : NULL;
}

static int mrct_cnt_bind(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrc_counter *c = NULL;
	struct mrct_cnt_bind req;
	struct mrc_mr *mr;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;

	mutex_lock(&ctx->lock);
	/* Handle 0 unbinds; the device must still be a vhca. */
	c = req.handle ? mrct_cnt_find(ctx, req.handle) :
			 ERR_CAST(mrct_cnt_get(ctx));
	if (IS_ERR(c)) {
		err = PTR_ERR(c);
		goto out_unlock;
	}
	if (!req.handle)
		c = NULL;
	mr = mrct_cnt_mr(ctx, req.key);
	if (!mr) {
		err = -ENOENT;
		goto out_unlock;
	}
	err = mrc_mr_bind_counter(mr, c, req.flags);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

static int mrct_cnt_read(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_cnt_read req;
	struct mrc_counter *c;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~MRCT_CNT_READ_RESET)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	c = mrct_cnt_find(ctx, req.handle);
	if (IS_ERR(c)) {
		err = PTR_ERR(c);
	} else {
		req.value = mrc_counter_read(c);
		if (req.flags & MRCT_CNT_READ_RESET)
			mrc_counter_reset(c);
	}
	mutex_unlock(&ctx->lock);
	if (err)
		return err;
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

static long mrct_cnt_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			   void __user *uarg)
{
	BUILD_BUG_ON(MRCT_COUNT_REMOTE_WRITE != MRC_COUNT_REMOTE_WRITE);
	BUILD_BUG_ON(sizeof(struct mrct_cnt_alloc) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_cnt_free) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_cnt_bind) != 16);
	BUILD_BUG_ON(sizeof(struct mrct_cnt_read) != 16);

	switch (cmd) {
	case MRCT_CNT_ALLOC:
		return mrct_cnt_alloc(ctx, uarg);
	case MRCT_CNT_FREE:
		return mrct_cnt_free(ctx, uarg);
	case MRCT_CNT_BIND:
		return mrct_cnt_bind(ctx, uarg);
	case MRCT_CNT_READ:
		return mrct_cnt_read(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * Unbound last (first in enum mrct_ext_id), so the other files' MRs are
 * gone and their bindings with them; what is left are the main file's
 * MRs, unbound here before the counters are freed.
 */
static void mrct_cnt_unbind(struct mrct_ctx *ctx)
{
	struct mrct_cnt *st = ctx->ext[MRCT_EXT_COUNTER];
	struct mrc_counter *c;
	unsigned long handle;
	struct ib_mr *ibmr;
	struct mrc_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!st)
		return;
	xa_for_each(&ctx->mrs, handle, ibmr) {
		mr = vhca_mr_mrc(ibmr);
		if (mr && mr->counter)
			WARN_ON(mrc_mr_bind_counter(mr, NULL, 0));
	}
	xa_for_each(&st->cnts, handle, c) {
		xa_erase(&st->cnts, handle);
		err = mrc_free_counter(c);
		if (err)
			ibdev_warn(ctx->ibdev, "counter handle %lu: free failed: %d\n",
				   handle, err);
	}
	xa_destroy(&st->cnts);
	kfree(st);
	ctx->ext[MRCT_EXT_COUNTER] = NULL;
}

const struct mrct_ext mrct_counter_ext = {
	.ioctl = mrct_cnt_ioctl,
	.unbind = mrct_cnt_unbind,
};
