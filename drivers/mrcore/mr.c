// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: memory regions.
 *
 * Every registration runs the same sequence: validate everything that can
 * be validated without allocating; allocate the key (its owner is the MR);
 * plan the translation and write its entries, built chunk by chunk in a
 * CPU buffer, to fresh translation space with write_xlt (xlt.c); fence once; write
 * the mkey context last. A failure at any step undoes the earlier ones in
 * reverse order, so a failed registration leaves no key, no translation
 * space, no pin and no context behind. Tests fail each step on purpose
 * through mrc_inject() (the stages of enum mrc_stage).
 *
 * Rereg (rereg.c) swaps a registration in place.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mrcore_loc.h"

/**
 * mrc_write_mkey - ops->write_mkey as a failure-injection stage
 * @mdev: device
 * @key: the key whose slot is written
 * @ctx: the context
 *
 * As mrc_xlt_write() (xlt.c).
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int mrc_write_mkey(struct mrc_device *mdev, u32 key,
		   const struct mrc_mkey_ctx *ctx)
{
	if (mrc_inject(mdev, MRC_STAGE_WRITE_MKEY))
		return -EIO;
	return mdev->ops->write_mkey(mdev, mrc_key_index(key), ctx);
}

/**
 * mrc_ctx_fill - the VALID context of a key over a translation
 * @ctx: filled
 * @key: the key
 * @pd: its protection domain
 * @access: MRC_ACCESS_* rights
 * @t: the translation, written
 *
 * Context: any context.
 */
void mrc_ctx_fill(struct mrc_mkey_ctx *ctx, u32 key, const struct mrc_pd *pd,
		  u32 access, const struct mrc_xlt_table *t)
{
	*ctx = (struct mrc_mkey_ctx) {
		.key = key,
		.state = MRC_MKEY_VALID,
		.access_mode = t->mode,
		.page_shift = t->page_shift,
		.pdn = pd->pdn,
		.access = access & MRC_ACCESS_HW_MASK,
		.iova = t->iova,
		.length = t->length,
		.xlt_offset = t->xlt.offset,
		.xlt_entries = t->nentries,
		.flags = t->odp ? MRC_MKEY_F_ODP : 0,
	};
}

/**
 * mrc_mr_set_xlt - record a live translation in its MR
 * @mr: the MR
 * @t: the translation its context now reaches
 *
 * Context: under @mr->lock, or before the MR is findable.
 */
void mrc_mr_set_xlt(struct mrc_mr *mr, const struct mrc_xlt_table *t)
{
	mr->iova = t->iova;
	mr->length = t->length;
	mr->page_shift = t->page_shift;
	mr->mode = t->mode;
	mr->nentries = t->nentries;
	mr->xlt = t->xlt;
}

/**
 * mrc_mr_get_xlt - the live translation of an MR
 * @mr: the MR
 * @t: filled, as a translation with nothing to write
 *
 * Context: under @mr->lock.
 */
void mrc_mr_get_xlt(const struct mrc_mr *mr, struct mrc_xlt_table *t)
{
	*t = (struct mrc_xlt_table) {
		.iova = mr->iova,
		.length = mr->length,
		.writable = mrc_access_writable(mr->access),
		.mode = mr->mode,
		.page_shift = mr->page_shift,
		.nentries = mr->nentries,
		.xlt = mr->xlt,
	};
}

/**
 * mrc_mr_segs - the memory behind an MR, to rebuild its entries
 * @mr: a DMA, physical, sg or user MR
 * @it: set to iterate over its DMA segments
 *
 * Context: under @mr->lock.
 */
void mrc_mr_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it)
{
	switch (mr->type) {
	case MRC_MR_PHYS:
		mrc_seg_iter_phys(it, mr->bufs, mr->nbufs);
		break;
	case MRC_MR_SG:
		mrc_seg_iter_sg(it, mr->sgt->sgl, mr->sgt->nents, 0,
				mr->length);
		break;
	case MRC_MR_USER:
		mrc_umem_segs(mr->umem, it);
		break;
	default:
		mrc_seg_iter_phys(it, NULL, 0);
		break;
	}
}

/**
 * mrc_mr_init - set up the core fields of a zeroed MR
 * @mr: zeroed, possibly embedded first in a bigger object (freed with
 *	kfree_rcu() of @mr)
 * @pd: protection domain
 * @type: enum mrc_mr_type
 * @access: MRC_ACCESS_* as registered
 *
 * Lookups by key (mrc_mr_lookup()) fail until the registration is complete
 * and calls mrc_key_users_revive(): the key is findable as soon as it is
 * allocated, before its context is written.
 *
 * Context: any context.
 */
void mrc_mr_init(struct mrc_mr *mr, struct mrc_pd *pd, enum mrc_mr_type type,
		 u32 access)
{
	mr->mdev = pd->mdev;
	mr->pd = pd;
	mr->type = type;
	mr->access = access;
	atomic_set(&mr->num_mw, 0);
	mrc_key_users_init(&mr->users);
	/* Not findable yet: nothing may bind to a half-built MR. */
	mr->users.dying = true;
	mutex_init(&mr->lock);
}

/* An MR of @attr's type and rights, to take @attr's key (0: any). */
struct mrc_mr *mrc_mr_alloc(struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	struct mrc_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return NULL;
	mrc_mr_init(mr, pd, attr->type, attr->access);
	mr->key = attr->key;
	return mr;
}

/* Key lookups run under RCU and may still hold @mr: free after a grace. */
void mrc_mr_free(struct mrc_mr *mr)
{
	mutex_destroy(&mr->lock);
	kfree_rcu(mr, rcu);
}

/**
 * mrc_mr_count - count a registration that succeeded
 * @mr: the MR, now live
 *
 * Context: any context.
 */
void mrc_mr_count(struct mrc_mr *mr)
{
	struct mrc_device *mdev = mr->mdev;

	atomic_inc(&mdev->num_mrs);
	atomic_inc(&mdev->num_mrs_type[mr->type]);
	atomic64_inc(&mdev->stats_mr_regs);
}

static void mrc_mr_uncount(struct mrc_mr *mr)
{
	atomic_dec(&mr->mdev->num_mrs_type[mr->type]);
	atomic_dec(&mr->mdev->num_mrs);
}

/*
 * Give @mr a key (the one in @mr->key if not 0: a requested key), write
 * @t and then the context that makes both live. On failure everything
 * this did is undone, the key given back, and @mr->key is 0.
 */
int mrc_mr_install(struct mrc_mr *mr, struct mrc_xlt_table *t)
{
	struct mrc_device *mdev = mr->mdev;
	struct mrc_mkey_ctx ctx;
	int ret;

	if (mrc_inject(mdev, MRC_STAGE_KEY_ALLOC)) {
		mr->key = 0;
		return -ENOSPC;
	}
	ret = mrc_mkey_take(mdev, mr, MRC_MKEY_KIND_MR, mr->key, &mr->key);
	if (ret) {
		mr->key = 0;
		return ret;
	}

	ret = mrc_xlt_table_write(mdev, t);
	if (ret)
		goto out_free_key;

	mrc_ctx_fill(&ctx, mr->key, mr->pd, mr->access, t);
	/* A failed write leaves the slot as it was: INVALID. */
	ret = mrc_write_mkey(mdev, mr->key, &ctx);
	if (ret)
		goto out_free_table;

	mrc_mr_set_xlt(mr, t);
	mrc_mr_count(mr);
	mrc_key_users_revive(&mr->users);
	mrc_dbg_mr(mr, "type %u mode %u shift %u entries %u\n", mr->type,
		   mr->mode, mr->page_shift, mr->nentries);
	return 0;

out_free_table:
	mrc_xlt_table_free(mdev, t);
out_free_key:
	mrc_mkey_free(mdev, mr->key);
	mr->key = 0;
	return ret;
}

/**
 * mrc_check_pd - a PD argument is an initialised PD
 * @pd: the argument
 *
 * Context: any context.
 * Return: 0 or -EINVAL.
 */
int mrc_check_pd(const struct mrc_pd *pd)
{
	return pd && pd->mdev && pd->pdn ? 0 : -EINVAL;
}

/**
 * mrc_mr_lookup - find the MR that owns a live key and hold it
 * @mdev: registered device
 * @key: any 32-bit value
 *
 * The MR stays allocated and registered until mrc_mr_put():
 * mrc_dereg_mr() waits for the hold. The holder may take the MR's mutex;
 * its fields that rereg or a REG_MR change are only stable under it.
 *
 * Context: any context; does not sleep.
 * Return: the MR; ERR_PTR(-ENOKEY) if @key is not live (unknown index,
 * stale variant, MR being deregistered); -EINVAL if it is live but owned
 * by no MR (the local DMA key, a memory window).
 */
struct mrc_mr *mrc_mr_lookup(struct mrc_device *mdev, u32 key)
{
	enum mrc_mkey_kind kind;
	struct mrc_mr *mr;

	if (key == mdev->local_dma_lkey)
		return ERR_PTR(-EINVAL);

	rcu_read_lock();
	mr = mrc_mkey_find(mdev, key, &kind);
	if (!mr)
		mr = ERR_PTR(-ENOKEY);
	else if (kind != MRC_MKEY_KIND_MR)
		mr = ERR_PTR(-EINVAL);
	else if (!mrc_key_users_tryget(&mr->users))
		mr = ERR_PTR(-ENOKEY);
	rcu_read_unlock();
	return mr;
}

/**
 * mrc_mr_put - drop a hold from mrc_mr_lookup()
 * @mr: the MR
 *
 * Context: any context.
 */
void mrc_mr_put(struct mrc_mr *mr)
{
	mrc_key_users_put(&mr->users);
}

/**
 * mrc_mr_state - the state of a registered MR's context
 * @mr: a live MR, held or found under RCU
 *
 * Every registration is VALID while registered, except a fast-reg MR,
 * which is FREE between an invalidation and the next REG_MR. Read without
 * the MR's mutex, the answer is a snapshot.
 *
 * Context: any context.
 * Return: enum mrc_mkey_state.
 */
enum mrc_mkey_state mrc_mr_state(const struct mrc_mr *mr)
{
	if (mr->type == MRC_MR_FAST_REG)
		return mrc_frmr_state(mr);
	return MRC_MKEY_VALID;
}

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

/* mrc_reg_dma_mr() with @attr's key; @pd and the key are checked. */
static struct mrc_mr *mrc_reg_dma(struct mrc_pd *pd,
				  const struct mrc_reg_attr *attr)
{
	struct mrc_xlt_table t = {
		.iova = 0,
		.length = U64_MAX,
		.writable = mrc_access_writable(attr->access),
		.mode = MRC_ACCESS_MODE_PA,
	};
	struct mrc_mr *mr;
	int ret;

	ret = mrc_check_access(attr->access);
	if (ret)
		return ERR_PTR(ret);

	mr = mrc_mr_alloc(pd, attr);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	ret = mrc_mr_install(mr, &t);
	if (ret)
		goto out_free_mr;
	return mr;

out_free_mr:
	mrc_mr_free(mr);
	return ERR_PTR(ret);
}

/* Every range non-empty and not wrapping; the total does not wrap either. */
static int mrc_check_phys(const struct mrc_phys_buf *bufs, unsigned int nbufs,
			  u64 *length)
{
	u64 end, total = 0;
	unsigned int i;

	if (!bufs || !nbufs)
		return -EINVAL;
	for (i = 0; i < nbufs; i++) {
		if (!bufs[i].size ||
		    check_add_overflow(bufs[i].addr, bufs[i].size, &end) ||
		    check_add_overflow(total, bufs[i].size, &total))
			return -EINVAL;
	}
	*length = total;
	return 0;
}

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

/*
 * The checks of a physical MR and its plan, on the caller's array, so
 * that it fails before allocating.
 */
static int mrc_phys_prepare(const struct mrc_pd *pd,
			    const struct mrc_reg_attr *attr,
			    struct mrc_xlt_table *t)
{
	int ret;

	*t = (struct mrc_xlt_table) {
		.writable = mrc_access_writable(attr->access),
		.iova = mrc_effective_iova(attr->iova, attr->access),
	};
	ret = mrc_check_access(attr->access) ?:
	      mrc_check_phys(attr->phys.bufs, attr->phys.nbufs, &t->length);
	if (ret)
		return ret;
	mrc_seg_iter_phys(&t->segs, attr->phys.bufs, attr->phys.nbufs);
	return mrc_xlt_plan(pd->mdev, t);
}

/* mrc_reg_phys_mr() with @attr's key; @pd and the key are checked. */
static struct mrc_mr *mrc_reg_phys(struct mrc_pd *pd,
				   const struct mrc_reg_attr *attr)
{
	unsigned int nbufs = attr->phys.nbufs;
	struct mrc_xlt_table t;
	struct mrc_mr *mr;
	int ret;

	ret = mrc_phys_prepare(pd, attr, &t);
	if (ret)
		return ERR_PTR(ret);

	mr = mrc_mr_alloc(pd, attr);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->bufs = kvmalloc_array(nbufs, sizeof(*mr->bufs), GFP_KERNEL);
	if (!mr->bufs) {
		ret = -ENOMEM;
		goto out_free_mr;
	}
	memcpy(mr->bufs, attr->phys.bufs, nbufs * sizeof(*mr->bufs));
	mr->nbufs = nbufs;
	mrc_seg_iter_phys(&t.segs, mr->bufs, nbufs);

	ret = mrc_mr_install(mr, &t);
	if (ret)
		goto out_free_bufs;
	return mr;

out_free_bufs:
	kvfree(mr->bufs);
out_free_mr:
	mrc_mr_free(mr);
	return ERR_PTR(ret);
}

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

/* The checks of an sg MR and its plan, before allocating. */
static int mrc_sg_prepare(const struct mrc_pd *pd,
			  const struct mrc_reg_attr *attr, struct mrc_xlt_table *t)
{
	struct sg_table *sgt = attr->sgt;
	int ret;

	*t = (struct mrc_xlt_table) {
		.writable = mrc_access_writable(attr->access),
		.iova = mrc_effective_iova(attr->iova, attr->access),
		.length = attr->length,
	};
	ret = mrc_check_access(attr->access);
	if (ret)
		return ret;
	if (!sgt || !sgt->sgl)
		return -EINVAL;
	mrc_seg_iter_sg(&t->segs, sgt->sgl, sgt->nents, 0, attr->length);
	return mrc_xlt_plan(pd->mdev, t);
}

/* mrc_reg_sg_mr() with @attr's key; @pd and the key are checked. */
static struct mrc_mr *mrc_reg_sg(struct mrc_pd *pd,
				 const struct mrc_reg_attr *attr)
{
	struct mrc_xlt_table t;
	struct mrc_mr *mr;
	int ret;

	ret = mrc_sg_prepare(pd, attr, &t);
	if (ret)
		return ERR_PTR(ret);

	mr = mrc_mr_alloc(pd, attr);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->sgt = attr->sgt;

	ret = mrc_mr_install(mr, &t);
	if (ret)
		goto out_free_mr;
	return mr;

out_free_mr:
	mrc_mr_free(mr);
	return ERR_PTR(ret);
}

/*
 * The checks of a user range that need no allocation: the range itself,
 * the key's range, and the page offset rule (an MTT entry maps a whole
 * page, so the key's address must sit at the same offset in its page as
 * the user address does).
 */
int mrc_check_user_range(u64 start, u64 length, u64 iova)
{
	u64 end;
	int ret;

	ret = mrc_umem_check_range(start, length);
	if (ret)
		return ret;
	if ((start ^ iova) & ~PAGE_MASK)
		return -EINVAL;
	if (check_add_overflow(iova, length, &end))
		return -EINVAL;
	return 0;
}

/**
 * mrc_user_xlt - plan the MTT of freshly pinned memory
 * @mdev: device
 * @umem: the memory
 * @iova: key address of its first byte
 * @length: bytes
 * @access: MRC_ACCESS_* rights (writable ones give MTT entries the W bit)
 * @t: planned
 *
 * Context: process context.
 * Return: 0 or the error of mrc_xlt_plan().
 */
int mrc_user_xlt(struct mrc_device *mdev, struct mrc_umem *umem, u64 iova,
		 u64 length, u32 access, struct mrc_xlt_table *t)
{
	*t = (struct mrc_xlt_table) {
		.iova = iova,
		.length = length,
		.writable = mrc_access_writable(access),
	};
	mrc_umem_segs(umem, &t->segs);
	return mrc_xlt_plan(mdev, t);
}

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

/* The checks of a user MR that need no allocation. */
static int mrc_user_check(const struct mrc_reg_attr *attr)
{
	return mrc_check_access(attr->access) ?:
	       mrc_check_user_range(attr->start, attr->length,
				    mrc_effective_iova(attr->iova,
						       attr->access));
}

/*
 * The pinned memory of a user MR: pinned here, or from @umem, which the
 * registering process prepared (mrc_umem_prepare()) for a worker.
 */
static struct mrc_umem *mrc_user_pin(const struct mrc_pd *pd,
				     const struct mrc_reg_attr *attr,
				     struct mrc_umem *umem)
{
	int ret;

	if (!umem)
		return mrc_umem_get(pd->mdev, attr->start, attr->length,
				    attr->access);
	ret = mrc_umem_populate(umem);
	return ret ? ERR_PTR(ret) : umem;
}

/*
 * mrc_reg_user_mr() with @attr's key; @pd and the key are checked. A
 * prepared @umem is consumed, on failure too.
 */
static struct mrc_mr *mrc_reg_user(struct mrc_pd *pd,
				   const struct mrc_reg_attr *attr,
				   struct mrc_umem *umem)
{
	u64 iova = mrc_effective_iova(attr->iova, attr->access);
	struct mrc_xlt_table t;
	struct mrc_mr *mr;
	int ret;

	/* A worker's prepared memory is pinned: asynchronous ODP is refused. */
	if ((attr->access & MRC_ACCESS_ON_DEMAND) && !umem) {
		ret = mrc_odp_check(pd, attr);
		return ret ? ERR_PTR(ret) : mrc_odp_reg(pd, attr);
	}

	ret = mrc_user_check(attr);
	if (ret) {
		if (umem)
			mrc_umem_abandon(umem);
		return ERR_PTR(ret);
	}

	umem = mrc_user_pin(pd, attr, umem);
	if (IS_ERR(umem))
		return ERR_CAST(umem);

	mr = mrc_mr_alloc(pd, attr);
	if (!mr) {
		ret = -ENOMEM;
		goto out_release_umem;
	}
	mr->umem = umem;

	ret = mrc_user_xlt(pd->mdev, umem, iova, attr->length, attr->access,
			   &t);
	if (ret)
		goto out_free_mr;

	ret = mrc_mr_install(mr, &t);
	if (ret)
		goto out_free_mr;
	return mr;

out_free_mr:
	mrc_mr_free(mr);
out_release_umem:
	mrc_umem_release(umem);
	return ERR_PTR(ret);
}

/**
 * mrc_mr_check_attr - the checks of a DMA, physical, sg or user MR
 * @pd: a checked protection domain
 * @attr: the registration; its key is checked by the caller
 *
 * Everything mrc_mr_reg_attr() checks before it allocates, for an
 * asynchronous registration to refuse synchronously.
 *
 * Context: process context.
 * Return: 0 or the errno mrc_mr_reg_attr() would fail with first.
 */
int mrc_mr_check_attr(const struct mrc_pd *pd,
		      const struct mrc_reg_attr *attr)
{
	struct mrc_xlt_table t;

	switch (attr->type) {
	case MRC_MR_DMA:
		return mrc_check_access(attr->access);
	case MRC_MR_PHYS:
		return mrc_phys_prepare(pd, attr, &t);
	case MRC_MR_SG:
		return mrc_sg_prepare(pd, attr, &t);
	case MRC_MR_USER:
		return mrc_user_check(attr);
	default:
		return -EINVAL;
	}
}

/**
 * mrc_mr_reg_attr - register a DMA, physical, sg or user MR
 * @pd: a checked protection domain
 * @attr: the registration; a requested key is checked by the caller
 * @umem: for a user MR, memory the registering process prepared with
 *	mrc_umem_prepare() (consumed, on failure too), or NULL to pin from
 *	the calling process; NULL for the other types
 *
 * The body of mrc_reg_dma_mr(), mrc_reg_phys_mr(), mrc_reg_sg_mr() and
 * mrc_reg_user_mr(), which are mrc_reg_mr() with key 0.
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of those functions.
 */
struct mrc_mr *mrc_mr_reg_attr(struct mrc_pd *pd,
			       const struct mrc_reg_attr *attr,
			       struct mrc_umem *umem)
{
	switch (attr->type) {
	case MRC_MR_DMA:
		return mrc_reg_dma(pd, attr);
	case MRC_MR_PHYS:
		return mrc_reg_phys(pd, attr);
	case MRC_MR_SG:
		return mrc_reg_sg(pd, attr);
	case MRC_MR_USER:
		return mrc_reg_user(pd, attr, umem);
	default:
		return ERR_PTR(-EINVAL);
	}
}

/**
 * mrc_dereg_mr - deregister a memory region and free it
 * @mr: a registered MR; not used by the caller after success
 *
 * Lookups by key (a window bind, an invalidation) are turned away and
 * those still holding the MR waited for. The key is then invalidated in
 * the device (ops->invalidate_mkey returns only once no device access
 * through it is still running); then the translation space is freed, user
 * memory unmapped, unpinned and uncharged, the key freed and @mr freed
 * after an RCU grace period. Indirect keys naming @mr are not tracked:
 * their entries name a key that is no longer live, so the device's walks
 * through them fail from now on.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBUSY while memory windows are bound (nothing changes); or
 * the error of ops->invalidate_mkey, after which the MR is still
 * registered and usable and the call may be repeated.
 */
int mrc_dereg_mr(struct mrc_mr *mr)
{
	return mrc_dereg_mr_nested(mr, 0);
}
EXPORT_SYMBOL_GPL(mrc_dereg_mr);

/**
 * mrc_dereg_mr_nested - mrc_dereg_mr() of an MR owned by another MR
 * @mr: as for mrc_dereg_mr()
 * @subclass: lockdep subclass of @mr->lock: SINGLE_DEPTH_NESTING for an
 *	implicit ODP child deregistered under its parent's lock, else 0
 *
 * Context: process context; may sleep.
 * Return: as mrc_dereg_mr().
 */
int mrc_dereg_mr_nested(struct mrc_mr *mr, unsigned int subclass)
{
	struct mrc_device *mdev = mr->mdev;
	int ret;

	mrc_key_users_quiesce(&mr->users);
	mutex_lock_nested(&mr->lock, subclass);
	if (atomic_read(&mr->num_mw)) {
		ret = -EBUSY;
		goto out_unlock;
	}

	ret = mdev->ops->invalidate_mkey(mdev, mrc_key_index(mr->key));
	if (ret)
		goto out_unlock;

	mrc_mr_drop_counter(mr);
	if (mr->odp)
		mrc_odp_release(mr);
	if (mr->dmabuf)
		mrc_dmabuf_release(mr);
	if (mr->xlt.size)
		mrc_xlt_free(mdev, &mr->xlt);
	mrc_umem_release(mr->umem);
	kvfree(mr->bufs);
	mrc_mkey_free(mdev, mr->key);
	mrc_mr_uncount(mr);
	mrc_dbg_mr(mr, "deregistered\n");
	mutex_unlock(&mr->lock);

	mrc_mr_free(mr);
	return 0;

out_unlock:
	mutex_unlock(&mr->lock);
	/* Still registered: lookups by key may find it again. */
	mrc_key_users_revive(&mr->users);
	return ret;
}
