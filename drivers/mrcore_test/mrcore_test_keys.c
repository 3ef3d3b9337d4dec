// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: requested keys and asynchronous registration on a vhca
 * device.
 *
 * MRCT_KEYS_REG registers user memory of the caller through mrcore's
 * mrc_reg_mr() (a struct mrc_reg_attr of type MRC_MR_USER) on the PD
 * behind one of the context's ib_pds (vhca_pd_mrc()), with the key the
 * caller asks for. With MRCT_KEYS_ASYNC it calls mrc_reg_mr_async()
 * instead: mrcore checks, takes the caller's mm and charges its memlock
 * in the ioctl, and a worker pins and registers; the completion stores
 * the result in the request, which MRCT_KEYS_WAIT returns. The MR is not
 * an ib_mr: programs reach it by its key (MRCT_QP_POST, MRCT_DEV_READ and
 * MRCT_DEV_WRITE with a raw key), which is what shows that the device
 * resolves the requested key.
 *
 * Everything runs under the context's lock; the completion takes no lock
 * of ours (it runs in mrcore's worker while an ioctl may hold the lock
 * and wait for it). Unbinding waits for pending requests with
 * mrc_reg_async_flush() on both PDs, then deregisters every MR.
 */
#include <linux/build_bug.h>
#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

/**
 * struct mrct_keys_req - one registration of MRCT_KEYS_REG
 * @mr: the MR once registered; written by the completion
 * @err: the registration's errno; written by the completion
 * @calls: completions run (the completion increments it)
 * @done: completed by the completion (a synchronous one: at once)
 */
struct mrct_keys_req {
	struct mrc_mr *mr;
	int err;
	atomic_t calls;
	struct completion done;
};

/**
 * struct mrct_keys - the keys state of a context (ctx->ext[MRCT_EXT_KEYS])
 * @reqs: handle -> struct mrct_keys_req
 * @next: allocation cursor for @reqs
 * @nr: entries in @reqs
 *
 * Created by the first call after MRCT_SET_DEVICE, freed on unbind; used
 * under the context's lock.
 */
struct mrct_keys {
	struct xarray reqs;
	u32 next;
	u32 nr;
};

static void mrct_keys_check_uapi(void)
{
	BUILD_BUG_ON(MRCT_ACCESS_LOCAL_WRITE != MRC_ACCESS_LOCAL_WRITE);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_WRITE != MRC_ACCESS_REMOTE_WRITE);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_READ != MRC_ACCESS_REMOTE_READ);
	BUILD_BUG_ON(MRCT_ACCESS_ZERO_BASED != MRC_ACCESS_ZERO_BASED);
	BUILD_BUG_ON(sizeof(struct mrct_keys_reg) != 48);
	BUILD_BUG_ON(sizeof(struct mrct_keys_wait) != 24);
	BUILD_BUG_ON(sizeof(struct mrct_keys_handle) != 8);
}

/* The context's keys state, made on first use; an ERR_PTR if it cannot be. */
static struct mrct_keys *mrct_keys_get(struct mrct_ctx *ctx)
{
	struct mrct_keys *st = ctx->ext[MRCT_EXT_KEYS];

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
	xa_init_flags(&st->reqs, XA_FLAGS_ALLOC1);
	ctx->ext[MRCT_EXT_KEYS] = st;
	return st;
}

/* mrc_reg_mr_async()'s completion: runs once, in mrcore's worker. */
static void mrct_keys_done(void *arg, struct mrc_mr *mr, int err)
{
	struct mrct_keys_req *r = arg;

	r->mr = mr;
	r->err = err;
	atomic_inc(&r->calls);
	complete_all(&r->done);
}

static void mrct_keys_attr(const struct mrct_keys_reg *req,
			   struct mrc_reg_attr *attr)
{
	*attr = (struct mrc_reg_attr) {
		.type = MRC_MR_USER,
		.access = req->access,
		.key = req->key,
		.iova = req->iova,
		.length = req->length,
		.start = req->addr,
	};
}

/* Register (or start registering) @req; the request stored under a handle. */
static int mrct_keys_reg_locked(struct mrct_ctx *ctx, struct mrct_keys_reg *req)
{
	struct mrc_pd *pd = vhca_pd_mrc(ctx->pd[req->pd]);
	struct mrc_reg_attr attr;
	struct mrct_keys_req *r;
	struct mrct_keys *st;
	struct mrc_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	st = mrct_keys_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st->nr >= MRCT_KEYS_MAX)
		return -EMFILE;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	init_completion(&r->done);
	/* The handle first: a request accepted by mrcore cannot be undone. */
	err = xa_alloc_cyclic(&st->reqs, &req->handle, r, XA_LIMIT(1, U32_MAX),
			      &st->next, GFP_KERNEL);
	if (err < 0)
		goto out_free;

	mrct_keys_attr(req, &attr);
	if (req->flags & MRCT_KEYS_ASYNC) {
		err = mrc_reg_mr_async(pd, &attr, mrct_keys_done, r);
		if (err)
			goto out_erase;
	} else {
		mr = mrc_reg_mr(pd, &attr);
		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto out_erase;
		}
		mrct_keys_done(r, mr, 0);
		req->key = mr->key;
	}
	st->nr++;
	return 0;

out_erase:
	xa_erase(&st->reqs, req->handle);
out_free:
	kfree(r);
	return err;
}

static int mrct_keys_reg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_keys_reg req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS || req.flags & ~MRCT_KEYS_FLAGS ||
	    req.reserved)
		return -EINVAL;

	/* On a fault the MR stays until the file is closed. */
	return mrct_call_locked(ctx, mrct_keys_reg_locked, &req, uarg);
}

/*
 * Wait for a request's completion; a failed registration's handle goes
 * with the answer.
 */
static int mrct_keys_wait_locked(struct mrct_ctx *ctx,
				 struct mrct_keys_wait *req)
{
	struct mrct_keys *st = ctx->ext[MRCT_EXT_KEYS];
	unsigned long timeout = msecs_to_jiffies(req->timeout_ms);
	struct mrct_keys_req *r;
	long left;

	lockdep_assert_held(&ctx->lock);
	r = st ? xa_load(&st->reqs, req->handle) : NULL;
	if (!r)
		return -ENOENT;

	left = wait_for_completion_killable_timeout(&r->done, timeout);
	if (left < 0)
		return -EINTR;
	if (!left && !completion_done(&r->done))
		return -ETIMEDOUT;

	req->err = r->err;
	req->calls = atomic_read(&r->calls);
	req->key = r->mr ? r->mr->key : 0;
	if (r->err) {
		xa_erase(&st->reqs, req->handle);
		st->nr--;
		kfree(r);
	}
	return 0;
}

static int mrct_keys_wait(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_keys_wait req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.timeout_ms > MRCT_QP_WAIT_MS || req.reserved)
		return -EINVAL;

	return mrct_call_locked(ctx, mrct_keys_wait_locked, &req, uarg);
}

static int mrct_keys_dereg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_keys_handle req;
	struct mrct_keys_req *r;
	struct mrct_keys *st;
	int err = -ENOENT;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	st = ctx->ext[MRCT_EXT_KEYS];
	r = st ? xa_load(&st->reqs, req.handle) : NULL;
	if (!r)
		goto out_unlock;
	err = -EBUSY;
	if (!completion_done(&r->done))
		goto out_unlock;
	err = mrc_dereg_mr(r->mr);
	if (err)
		goto out_unlock;
	xa_erase(&st->reqs, req.handle);
	st->nr--;
	kfree(r);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

static long mrct_keys_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			    void __user *uarg)
{
	mrct_keys_check_uapi();
	switch (cmd) {
	case MRCT_KEYS_REG:
		return mrct_keys_reg(ctx, uarg);
	case MRCT_KEYS_WAIT:
		return mrct_keys_wait(ctx, uarg);
	case MRCT_KEYS_DEREG:
		return mrct_keys_dereg(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * Pending requests first: their completions write into the requests, so
 * both PDs are flushed before any request is freed. Then every MR goes;
 * what fails to go is reported and left registered.
 */
static void mrct_keys_unbind(struct mrct_ctx *ctx)
{
	struct mrct_keys *st = ctx->ext[MRCT_EXT_KEYS];
	struct mrct_keys_req *r;
	unsigned long handle;
	int i, err;

	lockdep_assert_held(&ctx->lock);
	if (!st)
		return;
	for (i = 0; i < MRCT_NUM_PDS; i++)
		if (ctx->pd[i])
			mrc_reg_async_flush(vhca_pd_mrc(ctx->pd[i]));
	xa_for_each(&st->reqs, handle, r) {
		xa_erase(&st->reqs, handle);
		err = r->mr ? mrc_dereg_mr(r->mr) : 0;
		if (err)
			ibdev_warn(ctx->ibdev, "keys MR handle %lu: dereg failed: %d\n",
				   handle, err);
		kfree(r);
	}
	xa_destroy(&st->reqs);
	kfree(st);
	ctx->ext[MRCT_EXT_KEYS] = NULL;
}

const struct mrct_ext mrct_keys_ext = {
	.ioctl = mrct_keys_ioctl,
	.unbind = mrct_keys_unbind,
};
