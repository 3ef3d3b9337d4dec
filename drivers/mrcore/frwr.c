// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: fast registration (FRWR, IBTA "Fast Register Physical MR").
 *
 * mrc_alloc_frmr() gives an MR a key whose context is FREE, in MTT mode,
 * with translation space reserved for up to max_pages entries. From then
 * on the device side of the backend (the engine executing work requests
 * in QP order) moves the context between FREE and VALID:
 *
 *   FREE  --mrc_frmr_exec_reg()-->  VALID   (IB_WR_REG_MR)
 *   VALID --mrc_frmr_exec_inv()-->  FREE    (LOCAL_INV, Send with Invalidate)
 *
 * A REG_MR writes the page list as MTT entries over the reserved space,
 * fences once and writes the VALID context last, as every registration
 * does; it may change the key's variant (ib_update_fast_reg_key()), and
 * mrcore's record of the index's variant follows, so mrc_mkey_owner() and
 * mrc_mkey_free() know the key the context holds. An invalidation writes
 * a FREE context over the VALID one; the backend's write_mkey returns only
 * once no access through the VALID context is still running.
 *
 * Both transitions run under the MR's mutex (mrc_mr.lock), so REG_MR and
 * invalidations from several QPs, and deregistration, are serialised. An
 * invalidation finds its MR by key, which a peer chooses, so the MR may be
 * torn down at the same time: lookups hold the MR through frmr->users, and
 * mrc_dealloc_frmr() turns new lookups away and waits for the others
 * before the ordinary mrc_dereg_mr() path invalidates, drains and frees.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/wait_bit.h>

#include "mrcore_loc.h"

/* Debug messages name the MR's key and the function. */
#define mrc_dbg_mr(mr, fmt, ...)					\
	do {								\
		const struct mrc_mr *__mr = (mr);			\
									\
		mrc_dbg(__mr->mdev, "MR[0x%08x] %s: " fmt, __mr->key,	\
			__func__, ##__VA_ARGS__);			\
	} while (0)

/* MTT entries a REG_MR encodes per write_xlt, in a buffer on the stack. */
#define MRC_FRMR_CHUNK		32

/**
 * struct mrc_frmr - a fast-registration MR
 * @mr: the MR; first, because mrc_dereg_mr() frees it as a struct mrc_mr
 *	(kfree_rcu() of its address), which is then the address of this
 * @max_pages: MTT entries reserved in @mr.xlt
 * @state: enum mrc_mkey_state of the context as mrcore last wrote it:
 *	INVALID until alloc wrote it FREE, then FREE or VALID; under @mr.lock
 * @dying: mrc_dealloc_frmr() (or a failed alloc) is tearing the MR down:
 *	lookups by key fail
 * @users: lookups by key (mrc_frmr_exec_inv()) still using the MR;
 *	teardown waits for zero
 */
struct mrc_frmr {
	struct mrc_mr mr;
	u32 max_pages;
	u8 state;
	bool dying;
	atomic_t users;
};

static_assert(offsetof(struct mrc_frmr, mr) == 0);

/* Only for an MR whose type is MRC_MR_FAST_REG. */
static struct mrc_frmr *to_mrc_frmr(struct mrc_mr *mr)
{
	return container_of(mr, struct mrc_frmr, mr);
}

/**
 * mrc_frmr_max_pages - the largest page list a fast-reg MR may have
 * @mdev: registered device
 *
 * The MTT entries of the largest block the translation-area allocator
 * hands out. Whether that much space is free when mrc_alloc_frmr() asks
 * is another matter (-ENOSPC).
 *
 * Context: any context.
 * Return: the limit, at least 8.
 */
u32 mrc_frmr_max_pages(const struct mrc_device *mdev)
{
	u64 bytes = BIT_ULL(mdev->xlt.max_order) << MRC_XLT_SEG_SHIFT;

	return min_t(u64, bytes / MRC_MTT_ENTRY_SIZE, U32_MAX);
}
EXPORT_SYMBOL_GPL(mrc_frmr_max_pages);

/* The context of a FREE fast-reg MR: its key and PD, no translation. */
static void mrc_frmr_free_ctx(const struct mrc_frmr *frmr,
			      struct mrc_mkey_ctx *ctx)
{
	*ctx = (struct mrc_mkey_ctx) {
		.key = frmr->mr.key,
		.state = MRC_MKEY_FREE,
		.access_mode = MRC_ACCESS_MODE_MTT,
		.pdn = frmr->mr.pd->pdn,
		.xlt_offset = frmr->mr.xlt.offset,
	};
}

static void mrc_frmr_put(struct mrc_frmr *frmr)
{
	/* Fully ordered: the caller is done with the MR before it drops. */
	if (atomic_dec_and_test(&frmr->users))
		wake_up_var(&frmr->users);
}

/*
 * The fast-reg MR that owns @key, held against teardown until
 * mrc_frmr_put(). Every key owner mrcore registers is a struct mrc_mr
 * (the local DMA key has none), so the owner's type tells its kind.
 */
static struct mrc_frmr *mrc_frmr_get(struct mrc_device *mdev, u32 key)
{
	struct mrc_frmr *frmr;
	struct mrc_mr *mr;

	rcu_read_lock();
	mr = mrc_mkey_owner(mdev, key);
	if (!mr) {
		frmr = ERR_PTR(-ENOKEY);
		goto out_unlock;
	}
	/* IBTA: only a fast-registration MR can be invalidated. */
	if (mr->type != MRC_MR_FAST_REG) {
		frmr = ERR_PTR(-EINVAL);
		goto out_unlock;
	}

	frmr = to_mrc_frmr(mr);
	atomic_inc(&frmr->users);
	/* Pairs with smp_mb() in mrc_frmr_quiesce(): users before dying. */
	smp_mb__after_atomic();
	if (READ_ONCE(frmr->dying)) {
		mrc_frmr_put(frmr);
		frmr = ERR_PTR(-ENOKEY);
	}
out_unlock:
	rcu_read_unlock();
	return frmr;
}

/* Turn new lookups by key away and wait for those that got the MR. */
static void mrc_frmr_quiesce(struct mrc_frmr *frmr)
{
	/* Read locklessly by mrc_frmr_get(). */
	WRITE_ONCE(frmr->dying, true);
	/* Pairs with smp_mb__after_atomic() in mrc_frmr_get(). */
	smp_mb();
	wait_var_event(&frmr->users, !atomic_read(&frmr->users));
}

static void mrc_frmr_count(struct mrc_mr *mr)
{
	struct mrc_device *mdev = mr->mdev;

	atomic_inc(&mdev->num_mrs);
	atomic_inc(&mdev->num_mrs_type[MRC_MR_FAST_REG]);
	atomic64_inc(&mdev->stats_mr_regs);
}

/*
 * Key, translation space, then the FREE context. On failure everything is
 * undone; a lookup that found the key meanwhile has left again.
 */
static int mrc_frmr_install(struct mrc_frmr *frmr)
{
	struct mrc_mr *mr = &frmr->mr;
	struct mrc_device *mdev = mr->mdev;
	struct mrc_mkey_ctx ctx;
	int ret;

	if (mrc_inject(mdev, MRC_STAGE_KEY_ALLOC))
		return -ENOSPC;
	ret = mrc_mkey_alloc(mdev, mr, &mr->key);
	if (ret)
		return ret;

	if (mrc_inject(mdev, MRC_STAGE_XLT_ALLOC)) {
		ret = -ENOSPC;
		goto out_free_key;
	}
	ret = mrc_xlt_alloc(mdev, (u64)frmr->max_pages * MRC_MTT_ENTRY_SIZE,
			    &mr->xlt);
	if (ret)
		goto out_free_key;

	/* No entries yet, so no fence: the context is the only write. */
	mrc_frmr_free_ctx(frmr, &ctx);
	if (mrc_inject(mdev, MRC_STAGE_WRITE_MKEY))
		ret = -EIO;
	else
		ret = mdev->ops->write_mkey(mdev, mrc_key_index(mr->key), &ctx);
	if (ret)
		goto out_free_xlt;

	mutex_lock(&mr->lock);
	frmr->state = MRC_MKEY_FREE;
	mutex_unlock(&mr->lock);
	mrc_frmr_count(mr);
	return 0;

out_free_xlt:
	mrc_xlt_free(mdev, &mr->xlt);
out_free_key:
	mrc_frmr_quiesce(frmr);
	mrc_mkey_free(mdev, mr->key);
	mr->key = 0;
	return ret;
}

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
	struct mrc_frmr *frmr;
	int ret;

	if (!pd || !pd->mdev || !pd->pdn)
		return ERR_PTR(-EINVAL);
	if (!max_pages || max_pages > mrc_frmr_max_pages(pd->mdev))
		return ERR_PTR(-EINVAL);

	frmr = kzalloc(sizeof(*frmr), GFP_KERNEL);
	if (!frmr)
		return ERR_PTR(-ENOMEM);
	frmr->mr.mdev = pd->mdev;
	frmr->mr.pd = pd;
	frmr->mr.type = MRC_MR_FAST_REG;
	frmr->mr.mode = MRC_ACCESS_MODE_MTT;
	atomic_set(&frmr->mr.num_mw, 0);
	mutex_init(&frmr->mr.lock);
	frmr->max_pages = max_pages;
	frmr->state = MRC_MKEY_INVALID;
	atomic_set(&frmr->users, 0);

	ret = mrc_frmr_install(frmr);
	if (ret)
		goto out_free_frmr;
	mrc_dbg_mr(&frmr->mr, "max_pages %u xlt 0x%llx\n", max_pages,
		   frmr->mr.xlt.offset);
	return &frmr->mr;

out_free_frmr:
	mutex_destroy(&frmr->mr.lock);
	/* Lookups that found the key ran under RCU: free after a grace. */
	kfree_rcu(frmr, mr.rcu);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(mrc_alloc_frmr);

/**
 * mrc_dealloc_frmr - deregister a fast-registration MR and free it
 * @mr: from mrc_alloc_frmr(), FREE or VALID
 *
 * Invalidations by key (mrc_frmr_exec_inv(), which a peer can trigger at
 * any time) are turned away and those already running waited for; then
 * mrc_dereg_mr() invalidates the key, drains the device, and frees the
 * translation space, the key and the MR. Fast-reg MRs must be freed here,
 * not with mrc_dereg_mr() directly.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL (counted as misuse) if @mr is not a fast-reg MR; or
 * the error of mrc_dereg_mr(), after which the MR is still usable.
 */
int mrc_dealloc_frmr(struct mrc_mr *mr)
{
	struct mrc_frmr *frmr;
	int ret;

	if (mrc_misuse(mr->mdev, mr->type != MRC_MR_FAST_REG))
		return -EINVAL;
	frmr = to_mrc_frmr(mr);

	mrc_frmr_quiesce(frmr);
	ret = mrc_dereg_mr(mr);
	/* Still registered after a failure: lookups may find it again. */
	if (ret)
		WRITE_ONCE(frmr->dying, false);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_dealloc_frmr);

/* The checks of a REG_MR, against the MR's state under its lock. */
static int mrc_frmr_check_reg(const struct mrc_frmr *frmr, u32 key, u64 iova,
			      u64 length, unsigned int page_shift,
			      const u64 *pages, u32 npages, u32 access)
{
	const struct mrc_mr *mr = &frmr->mr;
	u64 mask;
	u32 i, need;
	int ret;

	lockdep_assert_held(&mr->lock);

	/* IBTA: only an MR in the Free state may be fast-registered. */
	if (frmr->state != MRC_MKEY_FREE)
		return -EINVAL;
	/* The WR may change the key's variant only, not its index. */
	if (mrc_key_index(key) != mrc_key_index(mr->key))
		return -EINVAL;
	/* The page list fits the space alloc reserved. */
	if (!pages || !npages || npages > frmr->max_pages)
		return -EINVAL;
	/* Rights as for any registration; a WR's iova is never zero-based. */
	ret = mrc_check_access(access);
	if (ret)
		return ret;
	if (access & MRC_ACCESS_ZERO_BASED)
		return -EINVAL;
	/* A page size the device's MTT takes. */
	if (page_shift >= BITS_PER_LONG ||
	    !(mr->mdev->caps.page_size_bitmap & BIT(page_shift)))
		return -EINVAL;
	/* The pages cover [iova, iova + length), which does not wrap. */
	ret = mrc_mtt_count(iova, length, page_shift, &need);
	if (ret)
		return ret;
	if (need > npages)
		return -EINVAL;
	/* Every page starts on a page boundary. */
	mask = BIT_ULL(page_shift) - 1;
	for (i = 0; i < npages; i++)
		if (pages[i] & mask)
			return -EINVAL;
	return 0;
}

/*
 * Encode @npages entries over the reserved space, a stack chunk at a time.
 * A failure part-way leaves entries that only a VALID context would reach,
 * and the context stays FREE.
 */
static int mrc_frmr_write_mtt(struct mrc_frmr *frmr, const u64 *pages,
			      u32 npages, bool writable)
{
	struct mrc_device *mdev = frmr->mr.mdev;
	u64 flags = MRC_MTT_READ | (writable ? MRC_MTT_WRITE : 0);
	u64 offset = frmr->mr.xlt.offset;
	__le64 buf[MRC_FRMR_CHUNK];
	u32 i, j, n;
	int ret;

	for (i = 0; i < npages; i += n) {
		n = min_t(u32, npages - i, MRC_FRMR_CHUNK);
		for (j = 0; j < n; j++)
			buf[j] = cpu_to_le64((pages[i + j] &
					      MRC_MTT_ADDR_MASK) | flags);
		ret = mdev->ops->write_xlt(mdev, offset, buf,
					   n * sizeof(*buf));
		if (ret)
			return ret;
		offset += n * sizeof(*buf);
	}
	return 0;
}

/* Record @key's variant as its index's, under the mkeys lock (mkey.c). */
static void mrc_frmr_set_variant(struct mrc_device *mdev, u32 key)
{
	xa_lock(&mdev->mkeys);
	/* Read locklessly by mrc_mkey_owner(); the owner does not change. */
	WRITE_ONCE(mdev->mkey_variant[mrc_key_index(key)],
		   mrc_key_variant(key));
	xa_unlock(&mdev->mkeys);
}

/* The checked REG_MR: entries, one fence, the VALID context last. */
static int mrc_frmr_reg_locked(struct mrc_frmr *frmr, u32 key, u64 iova,
			       u64 length, unsigned int page_shift,
			       const u64 *pages, u32 npages, u32 access)
{
	struct mrc_mr *mr = &frmr->mr;
	struct mrc_device *mdev = mr->mdev;
	struct mrc_mkey_ctx ctx;
	int ret;

	lockdep_assert_held(&mr->lock);

	ret = mrc_frmr_write_mtt(frmr, pages, npages,
				 mrc_access_writable(access));
	if (ret)
		return ret;
	mdev->ops->fence(mdev);

	ctx = (struct mrc_mkey_ctx) {
		.key = key,
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_MTT,
		.page_shift = page_shift,
		.pdn = mr->pd->pdn,
		.access = access & MRC_ACCESS_HW_MASK,
		.iova = iova,
		.length = length,
		.xlt_offset = mr->xlt.offset,
		.xlt_entries = npages,
	};
	/* A FREE slot has no walkers: this does not wait. */
	ret = mdev->ops->write_mkey(mdev, mrc_key_index(key), &ctx);
	if (ret)
		return ret;

	if (key != mr->key)
		mrc_frmr_set_variant(mdev, key);
	mr->key = key;
	mr->access = access;
	mr->iova = iova;
	mr->length = length;
	mr->page_shift = page_shift;
	mr->nentries = npages;
	frmr->state = MRC_MKEY_VALID;
	return 0;
}

/**
 * mrc_frmr_exec_reg - execute a REG_MR work request, as the device
 * @mr: a fast-reg MR from mrc_alloc_frmr()
 * @key: the WR's key: @mr's index, any variant (ib_update_fast_reg_key())
 * @iova: address of the first byte
 * @length: bytes, not 0
 * @page_shift: log2 of the page size of @dma_pages; a size of the
 *	device's caps.page_size_bitmap
 * @dma_pages: DMA addresses of the pages, each aligned to the page size;
 *	page 0 holds byte @iova at offset @iova & (page size - 1)
 * @npages: entries of @dma_pages, in [1, max_pages]; they must cover
 *	[@iova, @iova + @length)
 * @access: MRC_ACCESS_* rights, with the rules of mrc_check_access();
 *	ZERO_BASED is refused
 *
 * The backend's engine calls this when it executes the WR, in QP order.
 * Writes @npages MTT entries (the DMA address | MRC_MTT_READ, and
 * MRC_MTT_WRITE for writable rights) over the MR's translation space,
 * fences once, then writes the context VALID with @key, @iova, @length,
 * @access and @page_shift. From then on @key is the MR's key:
 * mrc_mkey_owner() finds the MR by it and no longer by the previous one.
 * Allocates nothing.
 *
 * Context: process context; may sleep briefly (the MR's mutex). Takes no
 * lock a caller of other mrcore calls holds.
 * Return: 0; -EINVAL if @mr is not a fast-reg MR, is not FREE (IBTA:
 * REG_MR on a VALID MR fails), @key names another index, @npages is 0 or
 * above max_pages, @access is refused or ZERO_BASED, @page_shift is not a
 * device page size, the pages do not cover the range or are misaligned,
 * or the range is empty or wraps; -EOPNOTSUPP for ON_DEMAND; or the error
 * of a backend op, after which the MR is still FREE.
 */
int mrc_frmr_exec_reg(struct mrc_mr *mr, u32 key, u64 iova, u64 length,
		      unsigned int page_shift, const u64 *dma_pages,
		      u32 npages, u32 access)
{
	struct mrc_frmr *frmr;
	int ret;

	/* Only a fast-registration MR takes a REG_MR. */
	if (!mr || mr->type != MRC_MR_FAST_REG)
		return -EINVAL;
	frmr = to_mrc_frmr(mr);

	mutex_lock(&mr->lock);
	ret = mrc_frmr_check_reg(frmr, key, iova, length, page_shift,
				 dma_pages, npages, access);
	if (!ret)
		ret = mrc_frmr_reg_locked(frmr, key, iova, length, page_shift,
					  dma_pages, npages, access);
	mrc_dbg_mr(mr, "key 0x%08x iova 0x%llx length 0x%llx shift %u pages %u access 0x%x: %d\n",
		   key, iova, length, page_shift, npages, access, ret);
	mutex_unlock(&mr->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_frmr_exec_reg);

/* The checked invalidation of a held MR. */
static int mrc_frmr_inv_locked(struct mrc_frmr *frmr, u32 pdn, u32 key)
{
	struct mrc_mr *mr = &frmr->mr;
	struct mrc_device *mdev = mr->mdev;
	struct mrc_mkey_ctx ctx;
	int ret;

	lockdep_assert_held(&mr->lock);

	/* The context holds this very key (a REG_MR may have changed it). */
	if (frmr->state == MRC_MKEY_INVALID || key != mr->key)
		return -ENOKEY;
	/* Only a QP of the MR's own PD may invalidate it. */
	if (pdn != mr->pd->pdn)
		return -EPERM;
	/* IBTA: an MR with memory windows bound cannot be invalidated. */
	if (atomic_read(&mr->num_mw))
		return -EBUSY;
	/* Invalidating a Free MR is allowed and changes nothing. */
	if (frmr->state == MRC_MKEY_FREE)
		return 0;

	mrc_frmr_free_ctx(frmr, &ctx);
	/* Returns once no access through the VALID context is running. */
	ret = mdev->ops->write_mkey(mdev, mrc_key_index(key), &ctx);
	if (ret)
		return ret;

	mr->nentries = 0;
	frmr->state = MRC_MKEY_FREE;
	return 0;
}

/**
 * mrc_frmr_exec_inv - execute an invalidation, as the device
 * @mdev: registered device
 * @pdn: PD number of the executing QP
 * @key: the key to invalidate (LOCAL_INV's invalidate_rkey, or the rkey a
 *	Send with Invalidate carries), any 32-bit value
 *
 * The backend's engine calls this when it executes a LOCAL_INV or
 * receives a Send with Invalidate. The key must be live with exactly this
 * variant, belong to a fast-reg MR of PD @pdn with no bound windows. A
 * VALID context becomes FREE (same key, no translation): the backend's
 * write_mkey returns only once no device access through the VALID context
 * is still running, so on return the pages the MR named may be reused.
 * Invalidating a FREE MR succeeds and writes nothing. Allocates nothing.
 *
 * Every non-NULL key owner on @mdev must be a struct mrc_mr, as it is
 * while mrcore is the only one to give keys an owner.
 *
 * Context: process context; may sleep (the MR's mutex, the drain). Takes
 * no lock a caller of other mrcore calls holds.
 * Return: 0; -ENOKEY if @key is not live (unknown index, stale variant,
 * MR being freed); -EINVAL if its owner is not a fast-reg MR (or it has
 * none: the local DMA key); -EPERM for another PD; -EBUSY while memory
 * windows are bound; or the error of ops->write_mkey, after which the MR
 * is still VALID.
 */
int mrc_frmr_exec_inv(struct mrc_device *mdev, u32 pdn, u32 key)
{
	struct mrc_frmr *frmr;
	int ret;

	/* The local DMA key has no owner, but is no fast-reg MR either. */
	if (key == mdev->local_dma_lkey)
		return -EINVAL;

	frmr = mrc_frmr_get(mdev, key);
	if (IS_ERR(frmr)) {
		mrc_dbg(mdev, "key 0x%08x: %ld\n", key, PTR_ERR(frmr));
		return PTR_ERR(frmr);
	}

	mutex_lock(&frmr->mr.lock);
	ret = mrc_frmr_inv_locked(frmr, pdn, key);
	mrc_dbg_mr(&frmr->mr, "key 0x%08x pdn %u: %d\n", key, pdn, ret);
	mutex_unlock(&frmr->mr.lock);
	mrc_frmr_put(frmr);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_frmr_exec_inv);
