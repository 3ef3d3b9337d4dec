// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: one registration entry point for every kind of memory region,
 * with a requested key (the fi_mr_regattr() model).
 *
 * mrc_reg_mr() takes a struct mrc_reg_attr: the kind of MR, its rights,
 * the members of that kind, and the exact key the caller wants (0 lets
 * mrcore choose). The per-kind functions here (mrc_reg_dma_mr(),
 * mrc_alloc_frmr(), mrc_alloc_fmr(), mrc_reg_indirect(), ...) are this
 * with key 0, so every path shares one body: the kinds table (kinds.c)
 * hands the registration to the kind's own file, which checks its
 * arguments, allocates, and installs the MR with mrc_mr_install() (mr.c),
 * whose mrc_mkey_take() gives a failed registration's key back.
 * mrc_dereg_any() frees an MR of any kind through the same table.
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

/* Hand a checked registration to its kind (kinds.c). */
static struct mrc_mr *mrc_reg_kind(struct mrc_pd *pd,
				   const struct mrc_reg_attr *attr,
				   struct mrc_umem *umem)
{
	const struct mrc_kind_ops *kind = &mrc_kinds[attr->type];

	if (!kind->reg)
		return ERR_PTR(-EINVAL);
	return kind->reg(pd, attr, umem);
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
 * mrc_reg_dma_mr - register all of the device's DMA address space
 * @pd: protection domain
 * @access: MRC_ACCESS_* rights
 *
 * The key is a PA-mode context with iova 0 and length U64_MAX: an address
 * through it is a DMA address. No translation is written, so no fence is
 * issued; the context is the only write.
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @access;
 * -EOPNOTSUPP for ON_DEMAND; -ENOSPC when no key is free; -ENOMEM; or
 * the error of ops->write_mkey.
 */
struct mrc_mr *mrc_reg_dma_mr(struct mrc_pd *pd, u32 access)
{
	struct mrc_reg_attr attr = { .type = MRC_MR_DMA, .access = access };

	return mrc_reg_mr(pd, &attr);
}
EXPORT_SYMBOL_GPL(mrc_reg_dma_mr);

/**
 * mrc_reg_phys_mr - register a list of DMA address ranges
 * @pd: protection domain
 * @bufs: the ranges, in the order the key's addresses run through them;
 *	mrcore keeps its own copy
 * @nbufs: entries of @bufs, at least 1
 * @iova: address of the first byte (ignored with ZERO_BASED: 0)
 * @access: MRC_ACCESS_* rights
 *
 * A list that some supported page size fits (see mrc_best_page_size()) is
 * registered in MTT mode with the largest such size; any other list in
 * KLM mode, one entry per contiguous run. The caller keeps the ranges
 * mapped until mrc_dereg_mr() returns.
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @access, no ranges,
 * an empty range, a range or total that wraps, or [iova, iova + length)
 * running past U64_MAX; -EOPNOTSUPP for ON_DEMAND, or a list that needs
 * KLM on a device without MRC_CAP_KLM; -ENOSPC when no key or not enough
 * translation space is free; -ENOMEM; or the error of a backend op.
 */
struct mrc_mr *mrc_reg_phys_mr(struct mrc_pd *pd,
			       const struct mrc_phys_buf *bufs,
			       unsigned int nbufs, u64 iova, u32 access)
{
	struct mrc_reg_attr attr = {
		.type = MRC_MR_PHYS,
		.access = access,
		.iova = iova,
		.phys = { .bufs = bufs, .nbufs = nbufs },
	};

	return mrc_reg_mr(pd, &attr);
}
EXPORT_SYMBOL_GPL(mrc_reg_phys_mr);

/**
 * mrc_reg_sg_mr - register a caller's DMA-mapped scatterlist
 * @pd: protection domain
 * @sgt: the table, already DMA-mapped for the device (its DMA segments,
 *	sgt->nents of them, are used); it must stay mapped and unchanged
 *	until mrc_dereg_mr() returns
 * @iova: address of the first byte (ignored with ZERO_BASED: 0)
 * @length: bytes from the start of the table; at most the table's DMA
 *	length
 * @access: MRC_ACCESS_* rights
 *
 * MTT mode when a supported page size fits the first @length bytes,
 * otherwise KLM mode.
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @access, no table, a
 * zero @length or one beyond the table, or [iova, iova + length) running
 * past U64_MAX; the other errors as mrc_reg_phys_mr().
 */
struct mrc_mr *mrc_reg_sg_mr(struct mrc_pd *pd, struct sg_table *sgt,
			     u64 iova, u64 length, u32 access)
{
	struct mrc_reg_attr attr = {
		.type = MRC_MR_SG,
		.access = access,
		.iova = iova,
		.length = length,
		.sgt = sgt,
	};

	return mrc_reg_mr(pd, &attr);
}
EXPORT_SYMBOL_GPL(mrc_reg_sg_mr);

/**
 * mrc_reg_user_mr - pin and register memory of the calling process
 * @pd: protection domain
 * @start: user address of the first byte
 * @length: bytes
 * @iova: address of the first byte in the key's address space; its offset
 *	in the page must equal @start's (ignored with ZERO_BASED, when the
 *	address is 0 and @start must therefore be page aligned)
 * @access: MRC_ACCESS_* rights; writable rights pin for write,
 *	RELAXED_ORDERING maps with DMA_ATTR_WEAK_ORDERING, HUGETLB is
 *	accepted (huge pages get large MTT pages whenever they are
 *	physically contiguous and aligned, flag or not)
 *
 * The pages are charged to the process's pinned_vm against
 * RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK, pinned (in parallel across
 * CPUs from 1 GiB), DMA-mapped on the device's DMA device and registered
 * in MTT mode with the largest page size the memory allows. The caller
 * must not hold the mm's mmap_lock.
 *
 * Context: process context of the process that owns the memory; may
 * sleep for long.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @access, a zero
 * @length, a range or key range running past U64_MAX, more than UINT_MAX
 * pages, or a page offset mismatch; for ON_DEMAND, the errors of
 * mrc_odp_check() and mrc_odp_reg() (Documentation/mrcore/odp.rst: no
 * pinning, -EOPNOTSUPP for ZERO_BASED ODP, a device without MRC_CAP_ODP
 * or implicit ODP on one without MRC_CAP_KSM); -EFAULT in a task without
 * a user mm, or for memory that is not mapped, not
 * readable, or (for a writable registration) not writable; -EPERM if the
 * process may not lock memory; -ENOMEM over RLIMIT_MEMLOCK or out of
 * memory; -EINTR on a fatal signal; -ENOSPC when no key or translation
 * space is free; or the error of a backend op. Nothing stays pinned or
 * charged after a failure.
 */
struct mrc_mr *mrc_reg_user_mr(struct mrc_pd *pd, u64 start, u64 length,
			       u64 iova, u32 access)
{
	struct mrc_reg_attr attr = {
		.type = MRC_MR_USER,
		.access = access,
		.iova = iova,
		.length = length,
		.start = start,
	};

	return mrc_reg_mr(pd, &attr);
}
EXPORT_SYMBOL_GPL(mrc_reg_user_mr);

/**
 * mrc_alloc_frmr - allocate a fast-registration MR
 * @pd: protection domain
 * @max_pages: the longest page list a REG_MR of it may carry, in [1,
 *	mrc_frmr_max_pages()]
 *
 * Allocates a key (owner: the MR), reserves translation space for
 * @max_pages 8-byte MTT entries and writes the key's context FREE, in MTT
 * mode, with @pd. The MR's type is MRC_MR_FAST_REG; its key is lkey and
 * rkey until a REG_MR changes the variant. Free it with
 * mrc_dealloc_frmr().
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @max_pages; -ENOSPC
 * when no key or not enough translation space is free; -ENOMEM; or the
 * error of ops->write_mkey. Nothing is left behind on failure.
 */
struct mrc_mr *mrc_alloc_frmr(struct mrc_pd *pd, u32 max_pages)
{
	struct mrc_reg_attr attr = {
		.type = MRC_MR_FAST_REG,
		.frmr = { .max_entries = max_pages },
	};

	return mrc_reg_mr(pd, &attr);
}
EXPORT_SYMBOL_GPL(mrc_alloc_frmr);

/**
 * mrc_alloc_frmr_sg_gaps - allocate a fast-reg MR for lists with gaps
 * @pd: protection domain
 * @max_entries: the most DMA ranges a REG_MR of it may carry, in [1, the
 *	16-byte KLM entries of the largest translation block]
 *
 * As mrc_alloc_frmr(), in KLM mode (IB_MR_TYPE_SG_GAPS): @max_entries KLM
 * entries of translation space are reserved and the context is written
 * FREE, in KLM mode. A REG_MR then takes any list of DMA ranges, of any
 * length and alignment, with mrc_frmr_exec_reg_klm(). Free it with
 * mrc_dealloc_frmr().
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @max_entries;
 * -EOPNOTSUPP on a device without MRC_CAP_KLM; the other errors of
 * mrc_alloc_frmr(). Nothing is left behind on failure.
 */
struct mrc_mr *mrc_alloc_frmr_sg_gaps(struct mrc_pd *pd, u32 max_entries)
{
	struct mrc_reg_attr attr = {
		.type = MRC_MR_FAST_REG,
		.frmr = { .max_entries = max_entries, .sg_gaps = true },
	};

	return mrc_reg_mr(pd, &attr);
}
EXPORT_SYMBOL_GPL(mrc_alloc_frmr_sg_gaps);

/**
 * mrc_alloc_fmr - allocate an FMR
 * @pd: protection domain
 * @access: MRC_ACCESS_* rights of every mapping, with the rules of
 *	mrc_check_access(); ZERO_BASED and MW_BIND are refused
 * @attr: the page list length, maps between unmaps and page size
 *
 * Allocates a key (owner: the MR), reserves translation space for two
 * tables of @attr->max_pages MTT entries and writes the key's context
 * FREE: nothing is reachable through the key until mrc_map_phys_fmr().
 * The MR's type is MRC_MR_FMR; its @key is lkey and rkey, and changes
 * with every map. Free it with mrc_dealloc_fmr().
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd, @attr or @access;
 * -EOPNOTSUPP for ON_DEMAND; -ENOSPC when no key or not enough
 * translation space is free; -ENOMEM; or the error of ops->write_mkey.
 * Nothing is left behind on failure.
 */
struct mrc_mr *mrc_alloc_fmr(struct mrc_pd *pd, u32 access,
			     const struct mrc_fmr_attr *attr)
{
	struct mrc_reg_attr rattr = {
		.type = MRC_MR_FMR,
		.access = access,
		.fmr = attr,
	};

	return mrc_reg_mr(pd, &rattr);
}
EXPORT_SYMBOL_GPL(mrc_alloc_fmr);

/**
 * mrc_reg_indirect - register a key over ranges of other keys
 * @pd: protection domain
 * @ranges: the pieces, in the order the key's addresses run through them:
 *	each a live memory region's key of @pd (fast-reg MRs while VALID, and
 *	other indirect keys, included; not an FMR, a window or the local DMA
 *	key), a start address in that key's address space and a length
 *	(not 0) that stays inside the region
 * @nranges: entries of @ranges, at least 1
 * @iova: address of the first byte (ignored with ZERO_BASED: 0)
 * @access: MRC_ACCESS_* rights, with the rules of mrc_check_access();
 *	every named region must grant each of them (LOCAL_WRITE, the remote
 *	rights); MRC_ACCESS_MW_BIND is refused (windows bind to memory
 *	regions only)
 *
 * Checks every range first (the key live, VALID, of @pd, the range
 * inside it, the rights granted, the nesting depth), then allocates a key
 * (owner: the new MR, type MRC_MR_INDIRECT), reserves one 16-byte KLM
 * entry per MRC_KLM_MAX_BCOUNT bytes of each range, writes the entries
 * {bcount, named key, address}, fences once and writes the context VALID
 * in KLM mode last. The key is lkey and rkey; free it with
 * mrc_dereg_mr(). The named regions are not held: deregistering one
 * later makes the device's accesses through the entries naming it fail.
 * The device checks each access's right against the named keys too
 * (MRC_MKEY_F_NESTED_RIGHTS), so narrowing a named region's rights later
 * narrows what the indirect key reaches.
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @access, MW_BIND, no
 * ranges, an empty range, a range naming the local DMA key, a window, an
 * FMR or a fast-reg MR that is not VALID, a total length or key range
 * that wraps; -EOPNOTSUPP for ON_DEMAND or a device without MRC_CAP_KLM;
 * -ENOKEY if a named key is not live; -EPERM if a named region is of
 * another PD or lacks a right asked for; -ERANGE if a range is not inside
 * its region; -ELOOP if the key would nest deeper than
 * MRC_INDIRECT_MAX_DEPTH; -ENOSPC when no key or not enough translation
 * space is free; -ENOMEM; or the error of a backend op. Nothing is left
 * behind on failure.
 */
struct mrc_mr *mrc_reg_indirect(struct mrc_pd *pd,
				const struct mrc_key_range *ranges,
				unsigned int nranges, u64 iova, u32 access)
{
	struct mrc_reg_attr attr = {
		.type = MRC_MR_INDIRECT,
		.access = access,
		.iova = iova,
		.indirect = { .ranges = ranges, .nranges = nranges },
	};

	return mrc_reg_mr(pd, &attr);
}
EXPORT_SYMBOL_GPL(mrc_reg_indirect);

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
	return mrc_mr_kind(mr)->dereg(mr);
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
	const struct mrc_kind_ops *kind = &mrc_kinds[attr->type];

	if (!kind->check)
		return -EINVAL;
	return kind->check(pd, attr);
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
