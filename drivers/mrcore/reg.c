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
 *
 * mrc_reg_mr_async() checks the same way, synchronously, copies what the
 * caller may free on return (physical ranges, indirect ranges, the FMR
 * shape), and for user memory takes the caller's mm and RLIMIT_MEMLOCK
 * charge in the caller (mrc_umem_prepare()); a work item on mrcore's
 * own unbound workqueue then runs the registration (pinning from the
 * caller's mm with kthread_use_mm()) and calls the completion once. The
 * PD and the device count their pending requests: mrc_pd_fini() and
 * mrc_unregister_device() wait for them (mrc_reg_async_flush(),
 * mrc_reg_async_flush_dev()), so neither goes away under a request.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
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

/**
 * struct mrc_reg_req - an asynchronous registration in flight
 * @work: runs the registration on mrc_reg_wq
 * @pd: protection domain; mrc_pd_fini() waits for the request
 * @attr: the caller's attr, its pointers moved to @copy and @fmr
 * @fmr: copy of the caller's FMR shape
 * @copy: copy of the caller's physical or indirect ranges, or NULL
 * @umem: user memory charged in the caller (MRC_MR_USER), or NULL
 * @done: the completion
 * @ctx: its argument
 */
struct mrc_reg_req {
	struct work_struct work;
	struct mrc_pd *pd;
	struct mrc_reg_attr attr;
	struct mrc_fmr_attr fmr;
	void *copy;
	struct mrc_umem *umem;
	void (*done)(void *ctx, struct mrc_mr *mr, int err);
	void *ctx;
};

/*
 * Runs every asynchronous registration. mrcore's own, so that module
 * exit (destroy_workqueue()) waits out the last lines of a work item that
 * has already dropped its PD's and device's pending counts.
 */
static struct workqueue_struct *mrc_reg_wq;

/**
 * mrc_reg_init - create the asynchronous registrations' workqueue
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int mrc_reg_init(void)
{
	mrc_reg_wq = alloc_workqueue("mrcore_reg", WQ_UNBOUND, 0);
	return mrc_reg_wq ? 0 : -ENOMEM;
}

/**
 * mrc_reg_exit - destroy it, once every work item has returned
 *
 * Context: module exit; no device is registered any more.
 */
void mrc_reg_exit(void)
{
	destroy_workqueue(mrc_reg_wq);
}

/* The checks of a kind, as its registration makes them first. */
static int mrc_reg_check_kind(const struct mrc_pd *pd,
			      const struct mrc_reg_attr *attr)
{
	switch (attr->type) {
	case MRC_MR_FAST_REG:
		return mrc_frmr_check_attr(pd, attr);
	case MRC_MR_FMR:
		return mrc_fmr_check_reg_attr(pd, attr);
	case MRC_MR_INDIRECT:
		return mrc_indirect_check_attr(pd, attr);
	default:
		return mrc_mr_check_attr(pd, attr);
	}
}

/* Copy the arrays @req->attr points to; the caller may free them. */
static int mrc_reg_req_copy(struct mrc_reg_req *req)
{
	struct mrc_reg_attr *a = &req->attr;
	const void *src;
	size_t size;

	switch (a->type) {
	case MRC_MR_PHYS:
		src = a->phys.bufs;
		size = array_size(a->phys.nbufs, sizeof(*a->phys.bufs));
		break;
	case MRC_MR_INDIRECT:
		src = a->indirect.ranges;
		size = array_size(a->indirect.nranges,
				  sizeof(*a->indirect.ranges));
		break;
	case MRC_MR_FMR:
		req->fmr = *a->fmr;
		a->fmr = &req->fmr;
		return 0;
	default:
		return 0;
	}

	req->copy = kvmalloc(size, GFP_KERNEL);
	if (!req->copy)
		return -ENOMEM;
	memcpy(req->copy, src, size);
	if (a->type == MRC_MR_PHYS)
		a->phys.bufs = req->copy;
	else
		a->indirect.ranges = req->copy;
	return 0;
}

/* One pending request fewer; wakes a flush waiting for the last. */
static void mrc_reg_pending_put(atomic_t *pending)
{
	/* Fully ordered: the completion is done before a flush returns. */
	if (atomic_dec_and_test(pending))
		wake_up_var(pending);
}

static void mrc_reg_work(struct work_struct *work)
{
	struct mrc_reg_req *req = container_of(work, struct mrc_reg_req,
					       work);
	struct mrc_pd *pd = req->pd;
	struct mrc_device *mdev = pd->mdev;
	struct mrc_mr *mr;

	mr = mrc_reg_kind(pd, &req->attr, req->umem);
	req->done(req->ctx, IS_ERR(mr) ? NULL : mr, PTR_ERR_OR_ZERO(mr));
	kvfree(req->copy);
	kfree(req);
	/* Neither the PD nor the device is touched after its count drops. */
	mrc_reg_pending_put(&pd->reg_pending);
	mrc_reg_pending_put(&mdev->reg_pending);
}

/**
 * mrc_reg_mr_async - register a memory region in the background
 * @pd: protection domain
 * @attr: what to register, as for mrc_reg_mr(); physical and indirect
 *	ranges and the FMR shape are copied, so the caller may free them on
 *	return; an sg_table (MRC_MR_SG) is not, and must stay mapped and
 *	unchanged until @done is called (and, as for mrc_reg_sg_mr(), until
 *	the MR is deregistered)
 * @done: called exactly once if this returns 0, from a workqueue
 *	(process context, no mrcore lock held), with the new MR and 0, or
 *	NULL and the negative errno mrc_reg_mr() would have returned. It
 *	may deregister the MR and register more, but must not flush the
 *	PD or the device it runs for.
 * @ctx: passed to @done
 *
 * The fi_mr_reg() event-queue model for registrations that take long
 * (pinning gigabytes of user memory). Everything mrc_reg_mr() checks
 * before allocating, the requested key included, is checked here and its
 * error returned without @done ever being called. For user memory
 * (MRC_MR_USER) the calling process's mm is taken, and its pages charged
 * to RLIMIT_MEMLOCK by its own limit and CAP_IPC_LOCK, before this
 * returns; the pages are pinned from that mm later, by the worker. A
 * requested key is checked here but taken only by the worker: another
 * registration that takes its index in between makes @done report
 * -ENOKEY.
 *
 * The request holds back mrc_pd_fini() of @pd and
 * mrc_unregister_device() of its device until @done has returned;
 * mrc_reg_async_flush() waits for a PD's requests.
 *
 * Context: process context (of the process that owns the memory, for a
 * user MR); may sleep.
 * Return: 0 (@done will be called); -EINVAL for no @done; or the
 * synchronous errors of mrc_reg_mr() (a bad @pd, @attr or key, -ENOKEY,
 * the kind's argument checks, and for user memory -EFAULT without an mm,
 * -EPERM, -ENOMEM over RLIMIT_MEMLOCK) and -ENOMEM.
 */
int mrc_reg_mr_async(struct mrc_pd *pd, const struct mrc_reg_attr *attr,
		     void (*done)(void *ctx, struct mrc_mr *mr, int err),
		     void *ctx)
{
	struct mrc_reg_req *req;
	int ret;

	if (!done)
		return -EINVAL;
	ret = mrc_reg_check_common(pd, attr) ?: mrc_reg_check_kind(pd, attr);
	if (ret)
		return ret;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	INIT_WORK(&req->work, mrc_reg_work);
	req->pd = pd;
	req->attr = *attr;
	req->done = done;
	req->ctx = ctx;
	ret = mrc_reg_req_copy(req);
	if (ret)
		goto out_free_req;

	if (attr->type == MRC_MR_USER) {
		req->umem = mrc_umem_prepare(pd->mdev, attr->start,
					     attr->length, attr->access);
		if (IS_ERR(req->umem)) {
			ret = PTR_ERR(req->umem);
			goto out_free_copy;
		}
	}

	atomic_inc(&pd->reg_pending);
	atomic_inc(&pd->mdev->reg_pending);
	queue_work(mrc_reg_wq, &req->work);
	return 0;

out_free_copy:
	kvfree(req->copy);
out_free_req:
	kfree(req);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_reg_mr_async);

/* Wait until @pending is 0; no sleep when it already is. */
static void mrc_reg_pending_wait(atomic_t *pending)
{
	/* Pairs with the fully ordered decrement in mrc_reg_pending_put(). */
	if (!atomic_read_acquire(pending))
		return;
	wait_var_event(pending, !atomic_read_acquire(pending));
}

/**
 * mrc_reg_async_flush - wait for every asynchronous registration of a PD
 * @pd: protection domain
 *
 * Returns once the completion of every request mrc_reg_mr_async() had
 * accepted for @pd when this was called has returned (requests started
 * meanwhile are waited for too). Not from a completion of @pd: it would
 * wait for itself.
 *
 * Context: process context; sleeps only while requests are pending.
 */
void mrc_reg_async_flush(struct mrc_pd *pd)
{
	mrc_reg_pending_wait(&pd->reg_pending);
}
EXPORT_SYMBOL_GPL(mrc_reg_async_flush);

/**
 * mrc_reg_async_flush_dev - wait for every asynchronous registration of
 *	a device
 * @mdev: registered device
 *
 * As mrc_reg_async_flush(), for the requests of every PD of @mdev.
 *
 * Context: process context; sleeps only while requests are pending.
 */
void mrc_reg_async_flush_dev(struct mrc_device *mdev)
{
	mrc_reg_pending_wait(&mdev->reg_pending);
}
EXPORT_SYMBOL_GPL(mrc_reg_async_flush_dev);
