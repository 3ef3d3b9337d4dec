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
 * context on it destroys its QP pairs, deregisters its MRs, frees its PDs
 * and drops its reference, so "rdma link del" never waits for a test to
 * close its file (at most for one completion wait, which notices the
 * removal and stops).
 *
 * The data path is driven through loopback RC pairs: two QPs on one PD of
 * the context, connected to each other by hand over the port's RoCE v2
 * GID, with CQs the module polls itself. One WR is posted and waited for
 * at a time, with a bounded wait, so a stuck engine fails a test instead
 * of hanging the VM. Only standard kernel verbs are used: vhca and rxe run
 * the same cases.
 *
 * Two benchmark calls measure the data path's copy rate beside a plain
 * memcpy() in the same kernel: one copies between kernel buffers in a
 * loop, the other keeps a pair's send queue full of RDMA WRITEs between
 * MRs for a set time, busy-polling the CQ. They report counts and times;
 * rates and ratios are the caller's.
 */
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
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
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

/* Bytes handed to the walker per call; it does not yield within one. */
#define MRCT_XFER_CHUNK		SZ_1M

/* Loopback RC pairs: both directions use these. */
#define MRCT_QP_PSN		0
#define MRCT_QP_RD_ATOM		4
#define MRCT_QP_MIN_RNR_TIMER	12	/* 0.64 ms */
#define MRCT_QP_TIMEOUT		14	/* 4.096 us * 2^14 = 67 ms */
#define MRCT_QP_RETRY		7
#define MRCT_QP_RNR_RETRY	7	/* infinite: bounded by our wait */
#define MRCT_QP_HOP_LIMIT	64
/* CQ slots: every send and receive of the QP, plus flushes. */
#define MRCT_CQ_DEPTH		(4 * MRCT_QP_DEPTH)
/* Receive wr_ids have this bit, send wr_ids do not. */
#define MRCT_RECV_WRID		BIT_ULL(63)
/*
 * After an error completion: how long to wait for the QP to reach ERR. It
 * bounds a failure only: vhca is in ERR before the completion can be
 * polled, rxe moves the QP right after posting it (rxe_completer()).
 */
#define MRCT_QP_ERR_WAIT_MS	60000

/* Where a pair's QPs send to: their own port's RoCE v2 IPv4 GID. */
struct mrct_path {
	u32 port;
	u32 gid_index;
	union ib_gid gid;
	u8 dmac[ETH_ALEN];
};

/* Taken before any context's lock. */
static DEFINE_MUTEX(mrct_lock);	/* protects mrct_ctxs, our client data */
static LIST_HEAD(mrct_ctxs);

static struct ib_client mrct_client;

static const struct mrct_ext *const mrct_exts[MRCT_NUM_EXTS] = {
	[MRCT_EXT_COUNTER] = &mrct_counter_ext,
	[MRCT_EXT_FRWR] = &mrct_frwr_ext,
	[MRCT_EXT_FMR] = &mrct_fmr_ext,
	[MRCT_EXT_MW] = &mrct_mw_ext,
	[MRCT_EXT_KEYS] = &mrct_keys_ext,
	[MRCT_EXT_ODP] = &mrct_odp_ext,
	[MRCT_EXT_DMABUF] = &mrct_dmabuf_ext,
};

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

static void mrct_pair_free(struct mrct_ctx *ctx, struct mrct_pair *pair);

/* Destroy the pairs, deregister everything and let go of the device. */
static void mrct_unbind(struct mrct_ctx *ctx)
{
	struct mrct_pair *pair;
	unsigned long handle;
	struct ib_mr *mr;
	int i, err;

	lockdep_assert_held(&ctx->lock);
	/* QPs first: they hold their PD, and WRs may name the MRs. */
	xa_for_each(&ctx->pairs, handle, pair) {
		xa_erase(&ctx->pairs, handle);
		mrct_pair_free(ctx, pair);
	}
	ctx->nr_pairs = 0;
	/*
	 * The feature files' objects name MRs and PDs; in reverse order, so
	 * windows (bound to FRWR MRs too) go before the MRs they hold.
	 */
	for (i = MRCT_NUM_EXTS - 1; i >= 0; i--)
		mrct_exts[i]->unbind(ctx);
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

/* Loopback RC pairs ------------------------------------------------------ */

/* QP events change nothing here: the tests read completions and states. */
static void mrct_qp_event(struct ib_event *event, void *context)
{
	ibdev_dbg(event->device, "QP 0x%x: %s\n", event->element.qp->qp_num,
		  ib_event_msg(event->event));
}

/*
 * The first RoCE v2 GID of the first port that maps an IPv4 address, and
 * the MAC of its netdev: a kernel caller of modify_qp passes a resolved
 * destination MAC, and a loopback pair sends to its own port.
 */
static int mrct_find_path(struct ib_device *ibdev, struct mrct_path *path)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int i, err;

	path->port = rdma_start_port(ibdev);
	if (!rdma_protocol_roce(ibdev, path->port))
		return -EOPNOTSUPP;
	err = ib_query_port(ibdev, path->port, &pattr);
	if (err)
		return err;
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(ibdev, path->port, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw)) {
			path->gid_index = i;
			path->gid = attr->gid;
			err = rdma_read_gid_l2_fields(attr, NULL, path->dmac);
			rdma_put_gid_attr(attr);
			return err;
		}
		rdma_put_gid_attr(attr);
	}
	return -EADDRNOTAVAIL;
}

/* An RC QP on @cq; @cap in: what to ask for, out: what was granted. */
static struct ib_qp *mrct_create_qp(struct ib_pd *pd, struct ib_cq *cq,
				    struct ib_qp_cap *cap)
{
	struct ib_qp_init_attr init = {
		.event_handler = mrct_qp_event,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = *cap,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp;

	qp = ib_create_qp(pd, &init);
	if (!IS_ERR(qp))
		*cap = init.cap;
	return qp;
}

/* RESET -> INIT -> RTR -> RTS, sending to @peer over @path. */
static int mrct_connect_qp(struct ib_qp *qp, struct ib_qp *peer,
			   struct mrct_path *path, int access)
{
	struct ib_device *ibdev = qp->device;
	struct ib_qp_attr attr = {};
	int err;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = path->port;
	attr.qp_access_flags = access;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = peer->qp_num;
	attr.rq_psn = MRCT_QP_PSN;
	attr.max_dest_rd_atomic = min_t(int, ibdev->attrs.max_qp_rd_atom,
					MRCT_QP_RD_ATOM);
	attr.min_rnr_timer = MRCT_QP_MIN_RNR_TIMER;
	attr.ah_attr.type = rdma_ah_find_type(ibdev, path->port);
	rdma_ah_set_port_num(&attr.ah_attr, path->port);
	rdma_ah_set_grh(&attr.ah_attr, &path->gid, 0, path->gid_index,
			MRCT_QP_HOP_LIMIT, 0);
	memcpy(attr.ah_attr.roce.dmac, path->dmac, ETH_ALEN);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = MRCT_QP_TIMEOUT;
	attr.retry_cnt = MRCT_QP_RETRY;
	attr.rnr_retry = MRCT_QP_RNR_RETRY;
	attr.sq_psn = MRCT_QP_PSN;
	attr.max_rd_atomic = min_t(int, ibdev->attrs.max_qp_init_rd_atom,
				   MRCT_QP_RD_ATOM);
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/*
 * Destroy what there is of @pair, in any QP state: a QP still holding
 * WRs is destroyed as it is (draining could wait for an engine that is
 * stuck), then the CQs.
 */
static void mrct_pair_free(struct mrct_ctx *ctx, struct mrct_pair *pair)
{
	int i, err;

	for (i = 0; i < 2; i++) {
		if (!pair->qp[i])
			continue;
		err = ib_destroy_qp(pair->qp[i]);
		if (err)
			ibdev_warn(ctx->ibdev, "QP 0x%x: destroy failed: %d\n",
				   pair->qp[i]->qp_num, err);
	}
	for (i = 0; i < 2; i++)
		if (pair->cq[i])
			ib_free_cq(pair->cq[i]);
	kfree(pair);
}

/* Two CQs, two QPs, connected; on failure the caller frees what is built. */
static int mrct_pair_build(struct mrct_ctx *ctx, struct mrct_pair *pair,
			   struct mrct_qp_create *req, struct mrct_path *path)
{
	struct ib_qp_cap cap;
	struct ib_qp *qp;
	struct ib_cq *cq;
	int i, err;

	for (i = 0; i < 2; i++) {
		cq = ib_alloc_cq(ctx->ibdev, pair, MRCT_CQ_DEPTH, 0,
				 IB_POLL_DIRECT);
		if (IS_ERR(cq))
			return PTR_ERR(cq);
		pair->cq[i] = cq;
	}
	for (i = 0; i < 2; i++) {
		cap = (struct ib_qp_cap) {
			.max_send_wr = MRCT_QP_DEPTH,
			.max_recv_wr = MRCT_QP_DEPTH,
			.max_send_sge = req->max_send_sge,
			.max_recv_sge = req->max_recv_sge,
			.max_inline_data = req->max_inline,
		};
		qp = mrct_create_qp(ctx->pd[req->pd], pair->cq[i], &cap);
		if (IS_ERR(qp))
			return PTR_ERR(qp);
		pair->qp[i] = qp;
		if (i)
			continue;
		req->max_send_sge = cap.max_send_sge;
		req->max_recv_sge = cap.max_recv_sge;
		req->max_inline = cap.max_inline_data;
	}
	for (i = 0; i < 2; i++) {
		err = mrct_connect_qp(pair->qp[i], pair->qp[1 - i], path,
				      req->access);
		if (err)
			return err;
	}
	return 0;
}

static int mrct_qp_create_locked(struct mrct_ctx *ctx,
				 struct mrct_qp_create *req)
{
	struct ib_pd *pd = ctx->pd[req->pd];
	struct mrct_pair *pair;
	struct mrct_path path;
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return -ENODEV;
	if (ctx->nr_pairs >= MRCT_MAX_PAIRS)
		return -EMFILE;
	err = mrct_find_path(ctx->ibdev, &path);
	if (err)
		return err;

	pair = kzalloc(sizeof(*pair), GFP_KERNEL);
	if (!pair)
		return -ENOMEM;
	err = mrct_pair_build(ctx, pair, req, &path);
	if (err)
		goto out_free_pair;
	err = xa_alloc_cyclic(&ctx->pairs, &req->handle, pair,
			      XA_LIMIT(1, U32_MAX), &ctx->next_pair,
			      GFP_KERNEL);
	if (err < 0)
		goto out_free_pair;
	ctx->nr_pairs++;

	req->qpn[0] = pair->qp[0]->qp_num;
	req->qpn[1] = pair->qp[1]->qp_num;
	req->local_dma_lkey = pd->local_dma_lkey;
	req->gid_index = path.gid_index;
	BUILD_BUG_ON(sizeof(req->gid) != sizeof(path.gid.raw));
	memcpy(req->gid, path.gid.raw, sizeof(req->gid));
	req->flags = 0;
	if (ctx->is_vhca)
		req->flags |= MRCT_QP_F_VHCA;
	if (ctx->ibdev->attrs.atomic_cap != IB_ATOMIC_NONE)
		req->flags |= MRCT_QP_F_ATOMIC;
	return 0;

out_free_pair:
	mrct_pair_free(ctx, pair);
	return err;
}

#define MRCT_QP_ACCESS	(MRCT_ACCESS_LOCAL_WRITE | MRCT_ACCESS_REMOTE_WRITE | \
			 MRCT_ACCESS_REMOTE_READ | MRCT_ACCESS_REMOTE_ATOMIC)

static int mrct_qp_create(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_qp_create req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS || req.reserved ||
	    req.access & ~MRCT_QP_ACCESS ||
	    req.max_send_sge > MRCT_QP_MAX_SGE ||
	    req.max_recv_sge > MRCT_QP_MAX_SGE ||
	    req.max_inline > MRCT_QP_MAX_INLINE)
		return -EINVAL;

	/* On a fault the pair stays until the file is closed. */
	return mrct_call_locked(ctx, mrct_qp_create_locked, &req, uarg);
}

static int mrct_qp_destroy(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_qp_destroy req;
	struct mrct_pair *pair;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	if (!ctx->ibdev) {
		err = -ENODEV;
		goto out_unlock;
	}
	pair = xa_erase(&ctx->pairs, req.handle);
	if (!pair) {
		err = -ENOENT;
		goto out_unlock;
	}
	ctx->nr_pairs--;
	mrct_pair_free(ctx, pair);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/* A pair of the context, ready for work, or an ERR_PTR. */
struct mrct_pair *mrct_pair_get(struct mrct_ctx *ctx, u32 handle)
{
	struct mrct_pair *pair;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return ERR_PTR(-ENODEV);
	pair = xa_load(&ctx->pairs, handle);
	if (!pair)
		return ERR_PTR(-ENOENT);
	if (pair->wedged)
		return ERR_PTR(-EIO);
	return pair;
}

u32 mrct_bad_wr(const void *bad, const void *wr)
{
	if (!bad)
		return MRCT_BAD_WR_NULL;
	return bad == wr ? MRCT_BAD_WR_SELF : MRCT_BAD_WR_OTHER;
}

/*
 * Poll @cq until the completion wanted arrives: the send numbered @wr_id,
 * or with @recv the oldest receive. Others (late flushes of earlier work)
 * are dropped. The wait ends after MRCT_QP_WAIT_MS, on a fatal signal, or
 * when the device's removal has begun (it waits for our lock).
 */
int mrct_wait_wc(struct mrct_ctx *ctx, struct ib_cq *cq, u64 wr_id,
		 bool recv, struct ib_wc *wc)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(MRCT_QP_WAIT_MS);
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n < 0)
			return n;
		if (n) {
			if (recv ? wc->wr_id & MRCT_RECV_WRID :
				   wc->wr_id == wr_id)
				return 0;
			continue;
		}
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		if (fatal_signal_pending(current))
			return -EINTR;
		if (ib_get_client_data(ctx->ibdev, &mrct_client) != ctx->ibdev)
			return -ENODEV;
		usleep_range(20, 100);
	}
}

u32 mrct_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return MRCT_QPS_UNKNOWN;
	return attr.qp_state;
}

/*
 * After an error completion the QP is in ERR (IBTA 10.3.1); a driver may
 * post the completion just before it moves the QP, so wait for it. The
 * state seen last is the answer when the wait ends without ERR (its
 * deadline, or a fatal signal).
 */
u32 mrct_qp_state_after_error(struct ib_qp *qp)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(MRCT_QP_ERR_WAIT_MS);
	u32 state;

	for (;;) {
		state = mrct_qp_state(qp);
		if (state == IB_QPS_ERR || state == MRCT_QPS_UNKNOWN ||
		    time_after(jiffies, deadline) ||
		    fatal_signal_pending(current))
			return state;
		usleep_range(100, 200);
	}
}

/*
 * Post @wr (signaled) on QP @qpi of @pair and wait for its completion.
 * A post error is a result (*@post_err, *@bad_wr; *@status stays NONE);
 * only a failed wait is an error, and it wedges the pair. @bad_wr may be
 * NULL.
 */
int mrct_post_wait(struct mrct_ctx *ctx, struct mrct_pair *pair, u32 qpi,
		   struct ib_send_wr *wr, s32 *post_err, u32 *bad_wr,
		   u32 *status)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_wc wc;
	int err;

	wr->wr_id = pair->next_wr_id++;
	wr->send_flags |= IB_SEND_SIGNALED;
	wr->next = NULL;
	*status = MRCT_WC_NONE;
	*post_err = ib_post_send(pair->qp[qpi], wr, &bad);
	if (bad_wr)
		*bad_wr = mrct_bad_wr(bad, wr);
	if (*post_err)
		return 0;

	err = mrct_wait_wc(ctx, pair->cq[qpi], wr->wr_id, false, &wc);
	if (err) {
		/* The WR may still complete: keep it from later work. */
		pair->wedged = true;
		return err;
	}
	*status = wc.status;
	return 0;
}

/* Both QPs' states after a completion of @qpi's with @status. */
void mrct_qp_states(struct mrct_pair *pair, u32 qpi, u32 status, u32 *state)
{
	struct ib_qp *qp = pair->qp[qpi];

	if (status == MRCT_WC_NONE || status == IB_WC_SUCCESS)
		state[0] = mrct_qp_state(qp);
	else
		state[0] = mrct_qp_state_after_error(qp);
	state[1] = mrct_qp_state(pair->qp[1 - qpi]);
}

/* The WR, in the largest of the containers a driver may take it from. */
union mrct_send_wr {
	struct ib_send_wr wr;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
	struct ib_ud_wr ud;
	struct ib_reg_wr reg;
};

/**
 * struct mrct_post_work - what one MRCT_QP_POST builds
 * @req: the request, copied in and out
 * @wr: the WR
 * @sge: its gather list
 * @wc: the completion polled
 * @inline_buf: kernel copy of inline data, or NULL
 */
struct mrct_post_work {
	struct mrct_qp_post req;
	union mrct_send_wr wr;
	struct ib_sge sge[MRCT_QP_MAX_SGE];
	struct ib_wc wc;
	u8 *inline_buf;
};

/*
 * IB_SEND_INLINE: the SGEs name the caller's memory; the driver copies
 * the bytes at post time from kernel addresses, so bounce them.
 */
static int mrct_inline_copy(struct mrct_post_work *w)
{
	const struct mrct_sge *usge = w->req.sge;
	u64 total = 0, off = 0;
	u32 i;

	for (i = 0; i < w->req.num_sge; i++)
		total += usge[i].length;
	if (total > MRCT_QP_MAX_INLINE)
		return -EINVAL;
	w->inline_buf = kmalloc(max_t(u64, total, 1), GFP_KERNEL);
	if (!w->inline_buf)
		return -ENOMEM;
	for (i = 0; i < w->req.num_sge; i++) {
		if (copy_from_user(w->inline_buf + off,
				   u64_to_user_ptr(usge[i].addr),
				   usge[i].length))
			return -EFAULT;
		w->sge[i].addr = (uintptr_t)(w->inline_buf + off);
		w->sge[i].length = usge[i].length;
		w->sge[i].lkey = usge[i].lkey;
		off += usge[i].length;
	}
	return 0;
}

static bool mrct_opcode_is_atomic(u32 opcode)
{
	switch (opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return true;
	default:
		return false;
	}
}

/* Build the WR of @w->req, opcode and all, as the caller gave it. */
static int mrct_build_send_wr(struct mrct_post_work *w)
{
	struct mrct_qp_post *req = &w->req;
	struct ib_send_wr *wr = &w->wr.wr;
	u32 i;
	int err;

	if (req->send_flags & MRCT_SEND_INLINE) {
		err = mrct_inline_copy(w);
		if (err)
			return err;
	} else {
		for (i = 0; i < req->num_sge; i++) {
			w->sge[i].addr = req->sge[i].addr;
			w->sge[i].length = req->sge[i].length;
			w->sge[i].lkey = req->sge[i].lkey;
		}
	}
	wr->opcode = req->opcode;
	wr->send_flags = req->send_flags | IB_SEND_SIGNALED;
	wr->sg_list = w->sge;
	wr->num_sge = req->num_sge;
	if (mrct_opcode_is_atomic(req->opcode)) {
		w->wr.atomic.remote_addr = req->remote_addr;
		w->wr.atomic.compare_add = req->compare_add;
		w->wr.atomic.swap = req->swap;
		w->wr.atomic.compare_add_mask = ~0ULL;
		w->wr.atomic.swap_mask = ~0ULL;
		w->wr.atomic.rkey = req->rkey;
	} else {
		w->wr.rdma.remote_addr = req->remote_addr;
		w->wr.rdma.rkey = req->rkey;
	}
	return 0;
}

/* Collect the peer's receive for a SEND that completed well. */
static int mrct_wait_recv(struct mrct_ctx *ctx, struct mrct_pair *pair,
			  struct mrct_post_work *w)
{
	struct mrct_qp_post *req = &w->req;
	int err;

	if (!(req->flags & MRCT_POST_WAIT_RECV) ||
	    req->status != IB_WC_SUCCESS)
		return 0;
	err = mrct_wait_wc(ctx, pair->cq[1 - req->qp], 0, true, &w->wc);
	if (err)
		return err;
	req->recv_status = w->wc.status;
	req->recv_opcode = w->wc.opcode;
	req->recv_byte_len = w->wc.byte_len;
	return 0;
}

static int mrct_qp_post_locked(struct mrct_ctx *ctx, struct mrct_post_work *w)
{
	struct mrct_qp_post *req = &w->req;
	const struct ib_send_wr *bad = NULL;
	struct mrct_pair *pair;
	struct ib_qp *qp;
	int err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, req->handle);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	qp = pair->qp[req->qp];

	w->wr.wr.wr_id = pair->next_wr_id++ & ~MRCT_RECV_WRID;
	req->post_err = ib_post_send(qp, &w->wr.wr, &bad);
	req->bad_wr = mrct_bad_wr(bad, &w->wr.wr);
	if (req->post_err) {
		mrct_qp_states(pair, req->qp, req->status, req->qp_state);
		return 0;
	}

	err = mrct_wait_wc(ctx, pair->cq[req->qp], w->wr.wr.wr_id, false,
			   &w->wc);
	if (err)
		goto out_wedged;
	req->status = w->wc.status;
	req->wc_opcode = w->wc.opcode;
	req->byte_len = w->wc.byte_len;
	req->vendor_err = w->wc.vendor_err;
	err = mrct_wait_recv(ctx, pair, w);
	if (err)
		goto out_wedged;

	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	return 0;

out_wedged:
	/* The WR may still complete: keep its late completion from others. */
	pair->wedged = true;
	return err;
}

static int mrct_qp_post(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_post_work *w;
	struct mrct_qp_post *req;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	req = &w->req;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		err = -EFAULT;
		goto out_free;
	}
	if (req->qp > 1 || req->num_sge > MRCT_QP_MAX_SGE ||
	    req->send_flags & ~MRCT_SEND_FLAGS ||
	    req->flags & ~MRCT_POST_FLAGS ||
	    req->reserved[0] || req->reserved[1]) {
		err = -EINVAL;
		goto out_free;
	}
	req->post_err = 0;
	req->bad_wr = MRCT_BAD_WR_NULL;
	req->status = MRCT_WC_NONE;
	req->recv_status = MRCT_WC_NONE;
	req->wc_opcode = 0;
	req->byte_len = 0;
	req->vendor_err = 0;
	req->recv_opcode = 0;
	req->recv_byte_len = 0;
	req->qp_state[0] = MRCT_QPS_UNKNOWN;
	req->qp_state[1] = MRCT_QPS_UNKNOWN;
	err = mrct_build_send_wr(w);
	if (err)
		goto out_free;

	mutex_lock(&ctx->lock);
	err = mrct_qp_post_locked(ctx, w);
	mutex_unlock(&ctx->lock);

	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free:
	kfree(w->inline_buf);
	kfree(w);
	return err;
}

static int mrct_qp_post_recv(struct mrct_ctx *ctx, void __user *uarg)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr wr = {};
	struct mrct_qp_recv *req;
	struct mrct_pair *pair;
	struct ib_sge *sge;
	u32 i;
	int err;

	req = memdup_user(uarg, sizeof(*req));
	if (IS_ERR(req))
		return PTR_ERR(req);
	if (req->qp > 1 || req->num_sge > MRCT_QP_MAX_SGE || req->reserved) {
		err = -EINVAL;
		goto out_free_req;
	}
	sge = kcalloc(MRCT_QP_MAX_SGE, sizeof(*sge), GFP_KERNEL);
	if (!sge) {
		err = -ENOMEM;
		goto out_free_req;
	}
	for (i = 0; i < req->num_sge; i++) {
		sge[i].addr = req->sge[i].addr;
		sge[i].length = req->sge[i].length;
		sge[i].lkey = req->sge[i].lkey;
	}

	mutex_lock(&ctx->lock);
	pair = mrct_pair_get(ctx, req->handle);
	if (IS_ERR(pair)) {
		err = PTR_ERR(pair);
		goto out_unlock;
	}
	wr.wr_id = MRCT_RECV_WRID | pair->next_wr_id++;
	wr.sg_list = sge;
	wr.num_sge = req->num_sge;
	req->post_err = ib_post_recv(pair->qp[req->qp], &wr, &bad);
	req->bad_wr = mrct_bad_wr(bad, &wr);
	err = 0;
out_unlock:
	mutex_unlock(&ctx->lock);
	kfree(sge);
	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free_req:
	kfree(req);
	return err;
}

/* Benchmarks ------------------------------------------------------------- */

static int mrct_bench_memcpy(void __user *uarg)
{
	struct mrct_bench_memcpy req;
	u64 start, now, copies = 0;
	void *src, *dst;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!req.length || req.length > MRCT_BENCH_MAX_LEN ||
	    req.min_ns > MRCT_BENCH_MAX_NS)
		return -EINVAL;

	src = kvmalloc(req.length, GFP_KERNEL);
	dst = kvmalloc(req.length, GFP_KERNEL);
	if (!src || !dst) {
		err = -ENOMEM;
		goto out_free;
	}
	memset(src, 0x5a, req.length);
	memset(dst, 0, req.length);

	start = ktime_get_ns();
	do {
		memcpy(dst, src, req.length);
		/* Each copy is a real one: the compiler may not merge them. */
		barrier_data(dst);
		copies++;
		now = ktime_get_ns();
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out_free;
		}
		cond_resched();
	} while (now - start < req.min_ns);

	req.copies = copies;
	req.elapsed_ns = now - start;
	if (copy_to_user(uarg, &req, sizeof(req)))
		err = -EFAULT;
out_free:
	kvfree(dst);
	kvfree(src);
	return err;
}

/**
 * struct mrct_bench_work - what one MRCT_BENCH_WRITE works with
 * @req: the request, copied in and out
 * @sge: the gather entry every WR shares
 * @wr: WRs, chained afresh for each post (the driver copies them)
 * @wc: completions polled at once
 */
struct mrct_bench_work {
	struct mrct_bench_write req;
	struct ib_sge sge;
	struct ib_rdma_wr wr[MRCT_QP_DEPTH];
	struct ib_wc wc[MRCT_QP_DEPTH];
};

/*
 * Post up to @n WRs, chained; returns how many the driver took. A post
 * error stops the benchmark: it is recorded in @w->req.post_err.
 */
static u32 mrct_bench_post(struct mrct_pair *pair, struct ib_qp *qp,
			   struct mrct_bench_work *w, u32 n)
{
	const struct ib_send_wr *bad = NULL;
	u32 i;
	int err;

	for (i = 0; i < n; i++) {
		w->wr[i].wr.wr_id = pair->next_wr_id++ & ~MRCT_RECV_WRID;
		w->wr[i].wr.next = i + 1 < n ? &w->wr[i + 1].wr : NULL;
	}
	err = ib_post_send(qp, &w->wr[0].wr, &bad);
	if (!err)
		return n;
	w->req.post_err = err;
	for (i = 0; i < n; i++)
		if (bad == &w->wr[i].wr)
			return i;
	return 0;
}

/* Why a wait for completions must end, or 0. */
static int mrct_bench_stop(struct mrct_ctx *ctx, unsigned long progress)
{
	if (time_after(jiffies, progress + msecs_to_jiffies(MRCT_QP_WAIT_MS)))
		return -ETIMEDOUT;
	if (fatal_signal_pending(current))
		return -EINTR;
	if (ib_get_client_data(ctx->ibdev, &mrct_client) != ctx->ibdev)
		return -ENODEV;
	return 0;
}

/*
 * Keep @depth WRs in flight until min_ns has passed, then collect those
 * still in flight. The CQ is busy-polled, yielding when the scheduler
 * asks, as a user-space bandwidth test would.
 */
static int mrct_bench_write_locked(struct mrct_ctx *ctx,
				   struct mrct_bench_work *w)
{
	struct mrct_bench_write *req = &w->req;
	unsigned long progress = jiffies;
	u64 first_id, start, end;
	u32 inflight = 0, i;
	struct mrct_pair *pair;
	bool posting = true;
	struct ib_qp *qp;
	struct ib_cq *cq;
	int n, err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, req->handle);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	qp = pair->qp[req->qp];
	cq = pair->cq[req->qp];

	w->sge.addr = req->local_addr;
	w->sge.length = req->length;
	w->sge.lkey = req->lkey;
	for (i = 0; i < req->depth; i++) {
		w->wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		w->wr[i].wr.send_flags = IB_SEND_SIGNALED;
		w->wr[i].wr.sg_list = &w->sge;
		w->wr[i].wr.num_sge = 1;
		w->wr[i].remote_addr = req->remote_addr;
		w->wr[i].rkey = req->rkey;
	}
	first_id = pair->next_wr_id;

	start = ktime_get_ns();
	end = start;
	for (;;) {
		if (posting && ktime_get_ns() - start >= req->min_ns)
			posting = false;
		if (posting && inflight < req->depth) {
			inflight += mrct_bench_post(pair, qp, w,
						    req->depth - inflight);
			if (req->post_err)
				posting = false;
		}
		if (!inflight && !posting)
			break;

		n = ib_poll_cq(cq, req->depth, w->wc);
		if (n < 0) {
			err = n;
			goto out_wedged;
		}
		for (i = 0; i < n; i++) {
			/* Not ours: a receive, or late work of before. */
			if (w->wc[i].wr_id & MRCT_RECV_WRID ||
			    w->wc[i].wr_id < first_id)
				continue;
			inflight--;
			if (w->wc[i].status == IB_WC_SUCCESS) {
				req->wrs++;
				continue;
			}
			if (req->status == IB_WC_SUCCESS)
				req->status = w->wc[i].status;
			posting = false;
		}
		if (n) {
			end = ktime_get_ns();
			progress = jiffies;
		} else {
			err = mrct_bench_stop(ctx, progress);
			if (err)
				goto out_wedged;
		}
		cond_resched();
	}
	req->elapsed_ns = end - start;
	return 0;

out_wedged:
	/* WRs are still in flight: keep their completions from others. */
	pair->wedged = true;
	return err;
}

static int mrct_bench_write(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_bench_work *w;
	struct mrct_bench_write *req;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	req = &w->req;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		err = -EFAULT;
		goto out_free;
	}
	if (req->qp > 1 || !req->length || !req->depth ||
	    req->depth > MRCT_QP_DEPTH || req->min_ns > MRCT_BENCH_MAX_NS) {
		err = -EINVAL;
		goto out_free;
	}
	req->wrs = 0;
	req->elapsed_ns = 0;
	req->status = IB_WC_SUCCESS;
	req->post_err = 0;

	mutex_lock(&ctx->lock);
	err = mrct_bench_write_locked(ctx, w);
	mutex_unlock(&ctx->lock);

	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free:
	kfree(w);
	return err;
}

static long mrct_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct mrct_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;
	int i;

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
	case MRCT_QP_CREATE:
		return mrct_qp_create(ctx, uarg);
	case MRCT_QP_DESTROY:
		return mrct_qp_destroy(ctx, uarg);
	case MRCT_QP_POST:
		return mrct_qp_post(ctx, uarg);
	case MRCT_QP_POST_RECV:
		return mrct_qp_post_recv(ctx, uarg);
	case MRCT_BENCH_MEMCPY:
		return mrct_bench_memcpy(uarg);
	case MRCT_BENCH_WRITE:
		return mrct_bench_write(ctx, uarg);
	case MRCT_STAMP_WRITES:
		return mrct_stamp_writes(ctx, uarg);
	case MRCT_QP_WAIT_RECV:
		return mrct_qp_wait_recv(ctx, uarg);
	default:
		break;
	}

	for (i = 0; i < MRCT_NUM_EXTS; i++) {
		ret = mrct_exts[i]->ioctl(ctx, cmd, uarg);
		if (ret != -ENOTTY)
			return ret;
	}
	return -ENOTTY;
}

static int mrct_open(struct inode *inode, struct file *filp)
{
	struct mrct_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->mrs, XA_FLAGS_ALLOC);
	xa_init_flags(&ctx->pairs, XA_FLAGS_ALLOC);

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
	xa_destroy(&ctx->pairs);
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
	BUILD_BUG_ON(MRCT_MODE_KSM != MRC_ACCESS_MODE_KSM);
	BUILD_BUG_ON(sizeof(struct mrct_mr_info) != 16);
	BUILD_BUG_ON(sizeof(struct mrct_reg) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_xfer) != 40);
	BUILD_BUG_ON(sizeof(struct mrct_rereg) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_dereg) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_counters) != 16);
}

/* The data-path UAPI spells ib_verbs.h's values too. */
static void mrct_check_qp_uapi(void)
{
	BUILD_BUG_ON(MRCT_WR_RDMA_WRITE != IB_WR_RDMA_WRITE);
	BUILD_BUG_ON(MRCT_WR_SEND != IB_WR_SEND);
	BUILD_BUG_ON(MRCT_WR_RDMA_READ != IB_WR_RDMA_READ);
	BUILD_BUG_ON(MRCT_WR_ATOMIC_CMP_AND_SWP != IB_WR_ATOMIC_CMP_AND_SWP);
	BUILD_BUG_ON(MRCT_WR_ATOMIC_FETCH_AND_ADD !=
		     IB_WR_ATOMIC_FETCH_AND_ADD);
	BUILD_BUG_ON(MRCT_WR_LSO != IB_WR_LSO);
	BUILD_BUG_ON(MRCT_SEND_FENCE != IB_SEND_FENCE);
	BUILD_BUG_ON(MRCT_SEND_SOLICITED != IB_SEND_SOLICITED);
	BUILD_BUG_ON(MRCT_SEND_INLINE != IB_SEND_INLINE);
	BUILD_BUG_ON(MRCT_WC_SUCCESS != IB_WC_SUCCESS);
	BUILD_BUG_ON(MRCT_WC_LOC_LEN_ERR != IB_WC_LOC_LEN_ERR);
	BUILD_BUG_ON(MRCT_WC_LOC_QP_OP_ERR != IB_WC_LOC_QP_OP_ERR);
	BUILD_BUG_ON(MRCT_WC_LOC_PROT_ERR != IB_WC_LOC_PROT_ERR);
	BUILD_BUG_ON(MRCT_WC_WR_FLUSH_ERR != IB_WC_WR_FLUSH_ERR);
	BUILD_BUG_ON(MRCT_WC_LOC_ACCESS_ERR != IB_WC_LOC_ACCESS_ERR);
	BUILD_BUG_ON(MRCT_WC_REM_INV_REQ_ERR != IB_WC_REM_INV_REQ_ERR);
	BUILD_BUG_ON(MRCT_WC_REM_ACCESS_ERR != IB_WC_REM_ACCESS_ERR);
	BUILD_BUG_ON(MRCT_WC_REM_OP_ERR != IB_WC_REM_OP_ERR);
	BUILD_BUG_ON(MRCT_WC_RETRY_EXC_ERR != IB_WC_RETRY_EXC_ERR);
	BUILD_BUG_ON(MRCT_WC_RNR_RETRY_EXC_ERR != IB_WC_RNR_RETRY_EXC_ERR);
	BUILD_BUG_ON(MRCT_WC_SEND != IB_WC_SEND);
	BUILD_BUG_ON(MRCT_WC_RDMA_WRITE != IB_WC_RDMA_WRITE);
	BUILD_BUG_ON(MRCT_WC_RDMA_READ != IB_WC_RDMA_READ);
	BUILD_BUG_ON(MRCT_WC_COMP_SWAP != IB_WC_COMP_SWAP);
	BUILD_BUG_ON(MRCT_WC_FETCH_ADD != IB_WC_FETCH_ADD);
	BUILD_BUG_ON(MRCT_WC_RECV != IB_WC_RECV);
	BUILD_BUG_ON(MRCT_QPS_RESET != IB_QPS_RESET);
	BUILD_BUG_ON(MRCT_QPS_INIT != IB_QPS_INIT);
	BUILD_BUG_ON(MRCT_QPS_RTR != IB_QPS_RTR);
	BUILD_BUG_ON(MRCT_QPS_RTS != IB_QPS_RTS);
	BUILD_BUG_ON(MRCT_QPS_ERR != IB_QPS_ERR);
	BUILD_BUG_ON(sizeof(struct mrct_sge) != sizeof(struct ib_sge));
	BUILD_BUG_ON(sizeof(struct mrct_qp_create) != 64);
	BUILD_BUG_ON(sizeof(struct mrct_qp_destroy) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_qp_post) !=
		     104 + MRCT_QP_MAX_SGE * sizeof(struct mrct_sge));
	BUILD_BUG_ON(sizeof(struct mrct_qp_recv) !=
		     24 + MRCT_QP_MAX_SGE * sizeof(struct mrct_sge));
	BUILD_BUG_ON(sizeof(struct mrct_bench_memcpy) != 32);
	BUILD_BUG_ON(sizeof(struct mrct_bench_write) != 72);
}

static int __init mrct_init(void)
{
	int err;

	mrct_check_uapi();
	mrct_check_qp_uapi();
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
