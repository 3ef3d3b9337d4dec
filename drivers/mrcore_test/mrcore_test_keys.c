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
 * MRCT_KEYS_HOLD makes a request's pending state certain, for the tests
 * of what a pending request refuses and what waits for it: its completion
 * waits in mrcore's worker until MRCT_KEYS_RELEASE names its token (from
 * any file: the request's own may be closing and waiting for it), or
 * until MRCT_KEYS_HOLD_MAX_MS have passed.
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
 * @token: with MRCT_KEYS_HOLD, its index in mrct_keys_held; else 0
 * @release: completed by MRCT_KEYS_RELEASE, when it takes the request out
 *	of mrct_keys_held
 * @waiting: the held completion has been called and waits for @release
 * @closing: the context's unbind waits for the request
 */
struct mrct_keys_req {
	struct mrc_mr *mr;
	int err;
	atomic_t calls;
	struct completion done;
	u32 token;
	struct completion release;
	bool waiting;
	bool closing;
};

/*
 * Held requests, every context's: token -> struct mrct_keys_req. A
 * request leaves it once, under its lock: taken out by MRCT_KEYS_RELEASE,
 * which completes @release before it lets go of the lock, or by its own
 * completion when the hold times out. The completion does not return (so
 * the request is not freed) before the request is out, and a failed
 * MRCT_KEYS_REG takes its request out before freeing it: what is found
 * under the lock is alive.
 */
static DEFINE_XARRAY_ALLOC1(mrct_keys_held);
static u32 mrct_keys_held_next;	/* allocation cursor, under its lock */

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
	BUILD_BUG_ON(sizeof(struct mrct_keys_hold) != 8);
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

/*
 * A held request's completion waits here until MRCT_KEYS_RELEASE takes the
 * request out of mrct_keys_held. After MRCT_KEYS_HOLD_MAX_MS it takes
 * itself out, unless a release just did (then that release's complete()
 * is a moment away): a program that died holding it must not keep its
 * close(), which waits for this completion, from returning.
 */
static void mrct_keys_hold_wait(struct mrct_keys_req *r)
{
	unsigned long max = msecs_to_jiffies(MRCT_KEYS_HOLD_MAX_MS);

	/* Read by MRCT_KEYS_HOLD_STATE, under the xarray's lock. */
	WRITE_ONCE(r->waiting, true);
	if (wait_for_completion_timeout(&r->release, max))
		return;
	if (xa_erase(&mrct_keys_held, r->token) != r)
		wait_for_completion(&r->release);
}

/* mrc_reg_mr_async()'s completion: runs once, in mrcore's worker. */
static void mrct_keys_done(void *arg, struct mrc_mr *mr, int err)
{
	struct mrct_keys_req *r = arg;

	if (r->token)
		mrct_keys_hold_wait(r);
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
	struct mrc_reg_attr attr;
	struct mrc_pd *pd;
	struct mrct_keys_req *r;
	struct mrct_keys *st;
	struct mrc_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	/* First: a file bound to no device (any more) has no PDs. */
	st = mrct_keys_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st->nr >= MRCT_KEYS_MAX)
		return -EMFILE;
	pd = vhca_pd_mrc(ctx->pd[req->pd]);

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	init_completion(&r->done);
	init_completion(&r->release);
	/* The handle first: a request accepted by mrcore cannot be undone. */
	err = xa_alloc_cyclic(&st->reqs, &req->handle, r, XA_LIMIT(1, U32_MAX),
			      &st->next, GFP_KERNEL);
	if (err < 0)
		goto out_free;
	/* So is the token: the completion may run before this returns. */
	if (req->flags & MRCT_KEYS_HOLD) {
		err = xa_alloc_cyclic(&mrct_keys_held, &r->token, r,
				      XA_LIMIT(1, U32_MAX), &mrct_keys_held_next,
				      GFP_KERNEL);
		if (err < 0)
			goto out_erase;
		req->token = r->token;
	}

	mrct_keys_attr(req, &attr);
	if (req->flags & MRCT_KEYS_ASYNC) {
		err = mrc_reg_mr_async(pd, &attr, mrct_keys_done, r);
		if (err)
			goto out_unhold;
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

out_unhold:
	/* A release that found it is done with it once this returns. */
	if (r->token)
		xa_erase(&mrct_keys_held, r->token);
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
	    req.token)
		return -EINVAL;
	/* Only a completion that runs later can be held. */
	if ((req.flags & MRCT_KEYS_HOLD) && !(req.flags & MRCT_KEYS_ASYNC))
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

/* What MRCT_KEYS_HOLD_STATE reports of @r; under mrct_keys_held's lock. */
static u32 mrct_keys_hold_state(const struct mrct_keys_req *r)
{
	/* Written by the completion and by unbind without this lock. */
	return (READ_ONCE(r->waiting) ? MRCT_KEYS_HOLD_WAITING : 0) |
	       (READ_ONCE(r->closing) ? MRCT_KEYS_HOLD_CLOSING : 0);
}

/*
 * MRCT_KEYS_HOLD_STATE and MRCT_KEYS_RELEASE: no context lock, since the
 * held request's own context may be closing, its lock held while it
 * waits for the request.
 */
static int mrct_keys_hold_ioctl(unsigned int cmd, void __user *uarg)
{
	struct mrct_keys_hold req;
	struct mrct_keys_req *r;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;

	xa_lock(&mrct_keys_held);
	if (cmd == MRCT_KEYS_RELEASE)
		r = __xa_erase(&mrct_keys_held, req.token);
	else
		r = xa_load(&mrct_keys_held, req.token);
	if (r) {
		req.state = mrct_keys_hold_state(r);
		if (cmd == MRCT_KEYS_RELEASE)
			complete(&r->release);
	}
	xa_unlock(&mrct_keys_held);
	if (!r)
		return -ENOENT;

	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
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
	case MRCT_KEYS_HOLD_STATE:
	case MRCT_KEYS_RELEASE:
		return mrct_keys_hold_ioctl(cmd, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * Pending requests first: their completions write into the requests, so
 * both PDs are flushed before any request is freed (a held one's
 * completion returns only once it is out of mrct_keys_held). Then every
 * MR goes; what fails to go is reported and left registered.
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
	/* Read by MRCT_KEYS_HOLD_STATE: the flush below waits for them. */
	xa_for_each(&st->reqs, handle, r)
		WRITE_ONCE(r->closing, true);
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
