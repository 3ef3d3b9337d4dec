// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: a test device for user memory regions on vhca, in the
 * pattern of lib/test_hmm.c.
 *
 * /dev/mrcore_test lets a test program register its own memory on a vhca
 * device through ib_reg_user_mr(), then have the *device* read or write
 * that memory through a key. The device side is vhca_dev_access(), which
 * resolves the key through the mkey context and translation entries in
 * device memory, so a wrong table gives wrong bytes and a missing check
 * gives a wrong errno. The private UAPI is in mrcore_test_uapi.h.
 *
 * Registration arguments reach mrcore exactly as userspace gave them:
 * the module validates only its own fields (handles, PD index, reserved
 * words, transfer size), so the errnos a test sees are mrcore's and
 * vhca's. Rereg adds the checks uverbs makes before calling the driver.
 *
 * Registration, rereg and dereg work on any RDMA device (the benchmark
 * registers the same buffers on rxe through the same path); what needs the
 * vhca device itself - device reads and writes, and the translation read
 * back from its mkey context - is -EOPNOTSUPP, or reported as zero, on the
 * others.
 *
 * An ib_client tracks device removal: when a bound device goes away, every
 * context on it deregisters its MRs, frees its PDs and drops its
 * reference, so "rdma link del" never waits for a test to close its file.
 */
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test_uapi.h"

/* Bytes handed to the walker per call; it does not yield within one. */
#define MRCT_XFER_CHUNK		SZ_1M

/**
 * struct mrct_ctx - the state of one open file
 * @node: entry in mrct_ctxs
 * @lock: serialises the calls on this context and device removal
 * @ibdev: bound device with a reference held, or NULL
 * @is_vhca: @ibdev is a vhca device: the device-side calls may be used
 * @pd: PDs allocated on @ibdev, indexed by the UAPI's PD index
 * @mrs: handle -> struct ib_mr
 * @next_handle: allocation cursor for @mrs
 * @nr_mrs: entries in @mrs
 */
struct mrct_ctx {
	struct list_head node;
	struct mutex lock;	/* protects the fields below */
	struct ib_device *ibdev;
	bool is_vhca;
	struct ib_pd *pd[MRCT_NUM_PDS];
	struct xarray mrs;
	u32 next_handle;
	u32 nr_mrs;
};

/* Taken before any context's lock. */
static DEFINE_MUTEX(mrct_lock);	/* protects mrct_ctxs, our client data */
static LIST_HEAD(mrct_ctxs);

static struct ib_client mrct_client;

/*
 * vhca registers its ib_device on a platform device of its own name. The
 * vhca_*() calls are made only on such a device; any other one (rxe, for
 * the benchmark) is good for registration only.
 */
static bool mrct_is_vhca(struct ib_device *ibdev)
{
	struct device *dma = ibdev->dma_device;

	return dma && dev_is_platform(dma) &&
	       !strcmp(to_platform_device(dma)->name, "vhca");
}

/*
 * Our client data on a device is the device itself while it may be bound
 * and NULL once its removal has begun.
 */
static int mrct_add_one(struct ib_device *ibdev)
{
	ib_set_client_data(ibdev, &mrct_client, ibdev);
	return 0;
}

/* Deregister everything and let go of the device. */
static void mrct_unbind(struct mrct_ctx *ctx)
{
	unsigned long handle;
	struct ib_mr *mr;
	int i, err;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->mrs, handle, mr) {
		err = ib_dereg_mr(mr);
		if (err)
			ibdev_warn(ctx->ibdev, "MR handle %lu: dereg failed: %d\n",
				   handle, err);
		xa_erase(&ctx->mrs, handle);
	}
	ctx->nr_mrs = 0;
	for (i = 0; i < MRCT_NUM_PDS; i++) {
		if (ctx->pd[i])
			ib_dealloc_pd(ctx->pd[i]);
		ctx->pd[i] = NULL;
	}
	ib_device_put(ctx->ibdev);
	ctx->ibdev = NULL;
	ctx->is_vhca = false;
}

static void mrct_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct mrct_ctx *ctx;

	mutex_lock(&mrct_lock);
	ib_set_client_data(ibdev, &mrct_client, NULL);
	list_for_each_entry(ctx, &mrct_ctxs, node) {
		mutex_lock(&ctx->lock);
		if (ctx->ibdev == ibdev)
			mrct_unbind(ctx);
		mutex_unlock(&ctx->lock);
	}
	mutex_unlock(&mrct_lock);
}

static struct ib_client mrct_client = {
	.name = "mrcore_test",
	.add = mrct_add_one,
	.remove = mrct_remove_one,
	.no_kverbs_req = 1,
};

static int mrct_bind(struct mrct_ctx *ctx, struct ib_device *ibdev)
{
	struct ib_pd *pd;
	int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < MRCT_NUM_PDS; i++) {
		pd = ib_alloc_pd(ibdev, 0);
		if (IS_ERR(pd))
			goto out_dealloc_pds;
		ctx->pd[i] = pd;
	}
	ctx->ibdev = ibdev;
	ctx->is_vhca = mrct_is_vhca(ibdev);
	return 0;

out_dealloc_pds:
	while (i--) {
		ib_dealloc_pd(ctx->pd[i]);
		ctx->pd[i] = NULL;
	}
	return PTR_ERR(pd);
}

static int mrct_set_device(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_set_device req;
	struct ib_device *ibdev;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (strnlen(req.name, sizeof(req.name)) == sizeof(req.name))
		return -EINVAL;

	ibdev = ib_device_get_by_name(req.name, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return -ENODEV;

	mutex_lock(&mrct_lock);
	mutex_lock(&ctx->lock);
	if (ctx->ibdev)
		err = -EBUSY;
	else if (ib_get_client_data(ibdev, &mrct_client) != ibdev)
		err = -ENODEV;	/* being removed: we would never be told */
	else
		err = mrct_bind(ctx, ibdev);
	mutex_unlock(&ctx->lock);
	mutex_unlock(&mrct_lock);
	if (err)
		ib_device_put(ibdev);
	return err;
}

/* The keys, and on a vhca device what its mkey context holds. */
static int mrct_fill_info(struct mrct_ctx *ctx, struct ib_mr *mr,
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

static int mrct_reg(struct mrct_ctx *ctx, void __user *uarg)
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
	err = xa_alloc_cyclic(&ctx->mrs, &req.handle, mr, XA_LIMIT(1, U32_MAX),
			      &ctx->next_handle, GFP_KERNEL);
	if (err < 0)
		goto out_dereg;
	ctx->nr_mrs++;
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

/*
 * The driver built a new MR in place of @old (uverbs' "new HW object"
 * case): it takes over @old's handle and @old is deregistered. ib_core's
 * restrack entry points for a new MR are not exported, so it stays out of
 * restrack, which ib_dereg_mr() tolerates.
 */
static void mrct_rereg_swap(struct mrct_ctx *ctx, u32 handle,
			    struct ib_mr *old, struct ib_mr *new,
			    struct ib_pd *pd)
{
	int err;

	new->device = ctx->ibdev;
	new->pd = pd;
	new->type = IB_MR_TYPE_USER;
	atomic_inc(&pd->usecnt);
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

static int mrct_rereg(struct mrct_ctx *ctx, void __user *uarg)
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

static int mrct_dereg(struct mrct_ctx *ctx, void __user *uarg)
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

static int mrct_counters(struct mrct_ctx *ctx, void __user *uarg)
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

static long mrct_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct mrct_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case MRCT_SET_DEVICE:
		return mrct_set_device(ctx, uarg);
	case MRCT_REG:
		return mrct_reg(ctx, uarg);
	case MRCT_DEV_READ:
		return mrct_xfer(ctx, uarg, false);
	case MRCT_DEV_WRITE:
		return mrct_xfer(ctx, uarg, true);
	case MRCT_REREG:
		return mrct_rereg(ctx, uarg);
	case MRCT_DEREG:
		return mrct_dereg(ctx, uarg);
	case MRCT_COUNTERS:
		return mrct_counters(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

static int mrct_open(struct inode *inode, struct file *filp)
{
	struct mrct_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->mrs, XA_FLAGS_ALLOC);

	mutex_lock(&mrct_lock);
	list_add(&ctx->node, &mrct_ctxs);
	mutex_unlock(&mrct_lock);
	filp->private_data = ctx;
	return 0;
}

static int mrct_release(struct inode *inode, struct file *filp)
{
	struct mrct_ctx *ctx = filp->private_data;

	/* Off the list first: device removal no longer sees the context. */
	mutex_lock(&mrct_lock);
	list_del(&ctx->node);
	mutex_unlock(&mrct_lock);

	mutex_lock(&ctx->lock);
	if (ctx->ibdev)
		mrct_unbind(ctx);
	mutex_unlock(&ctx->lock);

	xa_destroy(&ctx->mrs);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	return 0;
}

static const struct file_operations mrct_fops = {
	.owner = THIS_MODULE,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
	.open = mrct_open,
	.release = mrct_release,
	.unlocked_ioctl = mrct_ioctl,
};

static struct miscdevice mrct_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = MRCT_DEV_NAME,
	.fops = &mrct_fops,
	.mode = 0600,
};

/* The UAPI spells ib_core's and mrcore's values; keep them equal. */
static void mrct_check_uapi(void)
{
	BUILD_BUG_ON(MRCT_NAME_MAX != IB_DEVICE_NAME_MAX);
	BUILD_BUG_ON(MRCT_ACCESS_LOCAL_WRITE != IB_ACCESS_LOCAL_WRITE);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_WRITE != IB_ACCESS_REMOTE_WRITE);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_READ != IB_ACCESS_REMOTE_READ);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_ATOMIC != IB_ACCESS_REMOTE_ATOMIC);
	BUILD_BUG_ON(MRCT_ACCESS_MW_BIND != IB_ACCESS_MW_BIND);
	BUILD_BUG_ON(MRCT_ACCESS_ZERO_BASED != IB_ZERO_BASED);
	BUILD_BUG_ON(MRCT_ACCESS_ON_DEMAND != IB_ACCESS_ON_DEMAND);
	BUILD_BUG_ON(MRCT_ACCESS_HUGETLB != IB_ACCESS_HUGETLB);
	BUILD_BUG_ON(MRCT_ACCESS_RELAXED_ORDERING !=
		     IB_ACCESS_RELAXED_ORDERING);
	BUILD_BUG_ON(MRCT_REREG_TRANS != IB_MR_REREG_TRANS);
	BUILD_BUG_ON(MRCT_REREG_PD != IB_MR_REREG_PD);
	BUILD_BUG_ON(MRCT_REREG_ACCESS != IB_MR_REREG_ACCESS);
	BUILD_BUG_ON(MRCT_MODE_PA != MRC_ACCESS_MODE_PA);
	BUILD_BUG_ON(MRCT_MODE_MTT != MRC_ACCESS_MODE_MTT);
	BUILD_BUG_ON(MRCT_MODE_KLM != MRC_ACCESS_MODE_KLM);
	BUILD_BUG_ON(sizeof(struct mrct_mr_info) != 16);
	BUILD_BUG_ON(sizeof(struct mrct_reg) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_xfer) != 40);
	BUILD_BUG_ON(sizeof(struct mrct_rereg) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_dereg) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_counters) != 16);
}

static int __init mrct_init(void)
{
	int err;

	mrct_check_uapi();
	err = ib_register_client(&mrct_client);
	if (err)
		return err;
	err = misc_register(&mrct_misc);
	if (err)
		goto out_unregister_client;
	return 0;

out_unregister_client:
	ib_unregister_client(&mrct_client);
	return err;
}

static void __exit mrct_exit(void)
{
	misc_deregister(&mrct_misc);
	ib_unregister_client(&mrct_client);
}

module_init(mrct_init);
module_exit(mrct_exit);

MODULE_DESCRIPTION("Test device for user memory regions on vhca and other RDMA devices");
MODULE_LICENSE("GPL");
