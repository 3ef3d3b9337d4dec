// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: user MRs of a context, and the device's reads and writes
 * through their keys.
 *
 * MRCT_REG registers the caller's memory with ib_reg_user_mr() on a PD of
 * the context and gives the MR a handle; MRCT_REREG and MRCT_DEREG take
 * the handle. Registration arguments reach mrcore exactly as userspace
 * gave them: the module validates only its own fields (handles, PD index,
 * reserved words, transfer size), so the errnos a test sees are mrcore's
 * and vhca's. Rereg adds the checks uverbs makes before calling the
 * driver, and does to the MR what uverbs does after it.
 *
 * MRCT_DEV_READ and MRCT_DEV_WRITE have the *device* read or write the
 * memory through a key: vhca_dev_access() resolves it through the mkey
 * context and translation entries in device memory, so a wrong table gives
 * wrong bytes and a missing check gives a wrong errno. They, and the
 * translation read back from the mkey context, need a vhca device:
 * -EOPNOTSUPP, or reported as zero, on the others.
 *
 * The feature files store their MRs here too (mrct_mr_store(),
 * mrct_mr_adopt()) and reach mrcore's MR behind one (mrct_vhca_mr()).
 */
#include <linux/atomic.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

/* Bytes handed to the walker per call; it does not yield within one. */
#define MRCT_XFER_CHUNK		SZ_1M

/**
 * mrct_fill_info - what the UAPI reports of an MR
 * @ctx: the context, bound and locked
 * @mr: the MR
 * @info: out: the keys, and on a vhca device what its mkey context holds
 *	(zero on the others)
 *
 * Return: 0, or vhca_mkey_info()'s error (warned of) with the keys filled.
 */
int mrct_fill_info(struct mrct_ctx *ctx, struct ib_mr *mr,
		   struct mrct_mr_info *info)
{
	int err;

	memset(info, 0, sizeof(*info));
	info->lkey = mr->lkey;
	info->rkey = mr->rkey;
	if (!ctx->is_vhca)
		return 0;
	err = vhca_mkey_info(ctx->ibdev, mr->lkey, &info->page_shift,
			     &info->entries, &info->mode);
	if (err)
		ibdev_warn(ctx->ibdev, "MR[0x%08x]: no context: %d\n",
			   mr->lkey, err);
	return err;
}

/**
 * mrct_mr_store - give a registered MR a handle of @ctx
 * @ctx: the context, locked
 * @mr: the MR; MRCT_DEREG and closing the file deregister it from now on
 * @handle: out: its handle, never 0
 *
 * Return: 0 or -ENOMEM/-EBUSY (the MR is the caller's to deregister).
 */
int mrct_mr_store(struct mrct_ctx *ctx, struct ib_mr *mr, u32 *handle)
{
	int err;

	lockdep_assert_held(&ctx->lock);
	err = xa_alloc_cyclic(&ctx->mrs, handle, mr, XA_LIMIT(1, U32_MAX),
			      &ctx->next_handle, GFP_KERNEL);
	if (err < 0)
		return err;
	ctx->nr_mrs++;
	return 0;
}

/**
 * mrct_vhca_mr - mrcore's MR behind an MR of a context bound to vhca
 * @ctx: the context, locked
 * @handle: the MR's handle
 *
 * Return: the MR; ERR_PTR(-ENODEV) no device, -EOPNOTSUPP not a vhca
 * device, -ENOENT no such MR, -EINVAL not a vhca MR.
 */
struct mrc_mr *mrct_vhca_mr(struct mrct_ctx *ctx, u32 handle)
{
	struct mrc_mr *base;
	struct ib_mr *mr;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return ERR_PTR(-ENODEV);
	if (!ctx->is_vhca)
		return ERR_PTR(-EOPNOTSUPP);
	mr = xa_load(&ctx->mrs, handle);
	if (!mr)
		return ERR_PTR(-ENOENT);
	base = vhca_mr_mrc(mr);
	return base ? base : ERR_PTR(-EINVAL);
}

/**
 * mrct_reg - MRCT_REG
 * @ctx: the file's context
 * @uarg: struct mrct_reg
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_reg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_reg req;
	struct ib_mr *mr;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS || req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	if (!ctx->ibdev) {
		err = -ENODEV;
		goto out_unlock;
	}
	mr = ib_reg_user_mr(ctx->pd[req.pd], req.addr, req.length, req.iova,
			    req.access);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto out_unlock;
	}
	err = mrct_mr_store(ctx, mr, &req.handle);
	if (err)
		goto out_dereg;
	err = mrct_fill_info(ctx, mr, &req.info);
	mutex_unlock(&ctx->lock);

	/* On a fault the MR stays registered until the file is closed. */
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return err;

out_dereg:
	ib_dereg_mr(mr);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

static enum vhca_access_dir mrct_dir(bool write, bool remote)
{
	if (write)
		return remote ? VHCA_ACCESS_REMOTE_WRITE : VHCA_ACCESS_LOCAL_WRITE;
	return remote ? VHCA_ACCESS_REMOTE_READ : VHCA_ACCESS_LOCAL_READ;
}

/*
 * vhca_dev_access() does not yield, so a long transfer goes to it a piece
 * at a time. A range that wraps goes in one call: the walker reports it.
 */
static int mrct_dev_access(struct mrct_ctx *ctx, u32 pdn, u32 key, u64 iova,
			   u8 *buf, u64 len, enum vhca_access_dir dir)
{
	u64 done = 0, end, n;
	int err;

	if (check_add_overflow(iova, len, &end))
		return vhca_dev_access(ctx->ibdev, pdn, key, iova, buf, len, dir);
	do {
		n = min_t(u64, len - done, MRCT_XFER_CHUNK);
		err = vhca_dev_access(ctx->ibdev, pdn, key, iova + done,
				      buf + done, n, dir);
		if (err)
			return err;
		done += n;
		cond_resched();
	} while (done < len);
	return 0;
}

/* The device moves the bytes, with the context's lock held. */
static int mrct_xfer_locked(struct mrct_ctx *ctx, const struct mrct_xfer *req,
			    void *buf, bool write)
{
	bool remote = req->flags & MRCT_XFER_REMOTE;
	struct ib_mr *mr;
	u32 key;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return -ENODEV;
	if (!ctx->is_vhca)
		return -EOPNOTSUPP;
	if (req->flags & MRCT_XFER_RAW_KEY) {
		key = req->key;
		if (!mrct_user_lkey_ok(ctx->ibdev, key))
			return -EPERM;
	} else {
		mr = xa_load(&ctx->mrs, req->handle);
		if (!mr)
			return -ENOENT;
		key = remote ? mr->rkey : mr->lkey;
	}
	return mrct_dev_access(ctx, vhca_pd_pdn(ctx->pd[req->pd]), key,
			       req->iova, buf, req->length,
			       mrct_dir(write, remote));
}

static int mrct_xfer(struct mrct_ctx *ctx, void __user *uarg, bool write)
{
	struct mrct_xfer req;
	void __user *ubuf;
	void *buf = NULL;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~MRCT_XFER_FLAGS || req.pd >= MRCT_NUM_PDS ||
	    req.length > MRCT_MAX_XFER)
		return -EINVAL;
	/* The field not used must be zero. */
	if (req.flags & MRCT_XFER_RAW_KEY ? req.handle : req.key)
		return -EINVAL;
	ubuf = u64_to_user_ptr(req.ptr);
	if (!access_ok(ubuf, req.length))
		return -EFAULT;

	if (req.length) {
		buf = kvmalloc(req.length, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	if (write && copy_from_user(buf, ubuf, req.length)) {
		err = -EFAULT;
		goto out_free;
	}

	mutex_lock(&ctx->lock);
	err = mrct_xfer_locked(ctx, &req, buf, write);
	mutex_unlock(&ctx->lock);

	if (!err && !write && copy_to_user(ubuf, buf, req.length))
		err = -EFAULT;
out_free:
	kvfree(buf);
	return err;
}

/**
 * mrct_xfer_read - MRCT_DEV_READ, the device reads
 * @ctx: the file's context
 * @uarg: struct mrct_xfer
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_xfer_read(struct mrct_ctx *ctx, void __user *uarg)
{
	return mrct_xfer(ctx, uarg, false);
}

/**
 * mrct_xfer_write - MRCT_DEV_WRITE, the device writes
 * @ctx: the file's context
 * @uarg: struct mrct_xfer
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_xfer_write(struct mrct_ctx *ctx, void __user *uarg)
{
	return mrct_xfer(ctx, uarg, true);
}

/**
 * mrct_mr_adopt - what ib_core fills in an MR a driver op returned
 * @ctx: the context, bound
 * @mr: from the driver's reg_user_mr_dmabuf or rereg_user_mr
 * @pd: the MR's PD
 *
 * ib_core's restrack entry points for a new MR are not in its public
 * headers, so the MR stays out of restrack, which ib_dereg_mr() tolerates.
 */
void mrct_mr_adopt(struct mrct_ctx *ctx, struct ib_mr *mr, struct ib_pd *pd)
{
	mr->device = ctx->ibdev;
	mr->pd = pd;
	mr->type = IB_MR_TYPE_USER;
	mr->dm = NULL;
	atomic_inc(&pd->usecnt);
}

/*
 * The driver built a new MR in place of @old (uverbs' "new HW object"
 * case): it takes over @old's handle and @old is deregistered.
 */
static void mrct_rereg_swap(struct mrct_ctx *ctx, u32 handle,
			    struct ib_mr *old, struct ib_mr *new,
			    struct ib_pd *pd)
{
	int err;

	mrct_mr_adopt(ctx, new, pd);
	/* Replaces a present entry, so it allocates nothing and cannot fail. */
	xa_store(&ctx->mrs, handle, new, GFP_KERNEL);
	err = ib_dereg_mr(old);
	if (err)
		ibdev_warn(ctx->ibdev, "MR[0x%08x]: dereg after rereg: %d\n",
			   old->lkey, err);
}

/* What uverbs does to the MR when the driver re-registered in place. */
static void mrct_rereg_in_place(struct ib_mr *mr, const struct mrct_rereg *req,
				struct ib_pd *pd)
{
	struct ib_pd *old_pd = mr->pd;

	if (req->flags & MRCT_REREG_PD) {
		atomic_inc(&pd->usecnt);
		/* nldev reads mr->pd without our lock. */
		WRITE_ONCE(mr->pd, pd);
		atomic_dec(&old_pd->usecnt);
	}
	if (req->flags & MRCT_REREG_TRANS) {
		mr->iova = req->iova;
		mr->length = req->length;
	}
}

static int mrct_rereg_locked(struct mrct_ctx *ctx, struct mrct_rereg *req)
{
	struct ib_mr *mr, *new;
	struct ib_pd *pd;
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return -ENODEV;
	mr = xa_load(&ctx->mrs, req->handle);
	if (!mr)
		return -ENOENT;
	if (req->flags & MRCT_REREG_ACCESS) {
		err = ib_check_mr_access(ctx->ibdev, req->access);
		if (err)
			return err;
	}
	if (!ctx->ibdev->ops.rereg_user_mr)
		return -EOPNOTSUPP;

	pd = req->flags & MRCT_REREG_PD ? ctx->pd[req->pd] : mr->pd;
	if (pd == mr->pd)
		req->flags &= ~MRCT_REREG_PD;

	new = ctx->ibdev->ops.rereg_user_mr(mr, req->flags, req->addr,
					    req->length, req->iova,
					    req->access, pd, NULL);
	if (IS_ERR(new))
		return PTR_ERR(new);
	if (new) {
		mrct_rereg_swap(ctx, req->handle, mr, new, pd);
		mr = new;
	} else {
		mrct_rereg_in_place(mr, req, pd);
	}
	return mrct_fill_info(ctx, mr, &req->info);
}

/**
 * mrct_rereg - MRCT_REREG
 * @ctx: the file's context
 * @uarg: struct mrct_rereg
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_rereg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_rereg req;
	u32 flags;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS)
		return -EINVAL;
	/* The checks ib_uverbs_rereg_mr() makes before the driver's. */
	if (!req.flags)
		return -EINVAL;
	if (req.flags & ~IB_MR_REREG_SUPPORTED)
		return -EOPNOTSUPP;
	if (req.flags & MRCT_REREG_TRANS &&
	    (req.addr & ~PAGE_MASK) != (req.iova & ~PAGE_MASK))
		return -EINVAL;

	flags = req.flags;
	mutex_lock(&ctx->lock);
	err = mrct_rereg_locked(ctx, &req);
	mutex_unlock(&ctx->lock);
	if (err)
		return err;

	req.flags = flags;
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/**
 * mrct_dereg - MRCT_DEREG
 * @ctx: the file's context
 * @uarg: struct mrct_dereg
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_dereg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_dereg req;
	struct ib_mr *mr;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	if (!ctx->ibdev) {
		err = -ENODEV;
		goto out_unlock;
	}
	mr = xa_load(&ctx->mrs, req.handle);
	if (!mr) {
		err = -ENOENT;
		goto out_unlock;
	}
	err = ib_dereg_mr(mr);
	if (!err) {
		xa_erase(&ctx->mrs, req.handle);
		ctx->nr_mrs--;
	}
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/**
 * mrct_counters - MRCT_COUNTERS
 * @ctx: the file's context
 * @uarg: struct mrct_counters
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_counters(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_counters resp = {};

	mutex_lock(&ctx->lock);
	resp.mrs = ctx->nr_mrs;
	mutex_unlock(&ctx->lock);
	if (current->mm)
		resp.pinned_vm = atomic64_read(&current->mm->pinned_vm);

	if (copy_to_user(uarg, &resp, sizeof(resp)))
		return -EFAULT;
	return 0;
}
