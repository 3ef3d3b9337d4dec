// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: fast registration (FRWR, IBTA "Fast Register Physical MR").
 *
 * mrc_alloc_frmr() gives an MR a key whose context is FREE, in MTT mode,
 * with translation space reserved for up to max_pages entries;
 * mrc_alloc_frmr_sg_gaps() does the same in KLM mode, for max_entries KLM
 * entries (IB_MR_TYPE_SG_GAPS). From then on the device side of the
 * backend (the engine executing work requests in QP order) moves the
 * context between FREE and VALID:
 *
 *   FREE  --mrc_frmr_exec_reg()-->      VALID   (IB_WR_REG_MR, MTT mode)
 *   FREE  --mrc_frmr_exec_reg_klm()-->  VALID   (IB_WR_REG_MR, KLM mode)
 *   VALID --mrc_frmr_exec_inv()-->      FREE    (LOCAL_INV, Send with Invalidate)
 *
 * A REG_MR writes the page list as MTT entries (or the DMA ranges as KLM
 * entries over the local DMA key) over the reserved space, fences once
 * and writes the VALID context last, as every registration does; it may
 * change the key's variant (ib_update_fast_reg_key()), and mrcore's record
 * of the index's variant follows, so mrc_mkey_owner() and mrc_mkey_free()
 * know the key the context holds. An invalidation writes a FREE context
 * over the VALID one; the backend's write_mkey returns only once no access
 * through the VALID context is still running.
 *
 * Both transitions run under the MR's mutex (mrc_mr.lock), so REG_MR and
 * invalidations from several QPs, window binds and deregistration are
 * serialised. An engine that executes where it cannot sleep (a kernel
 * post_send's own run) calls the _nowait forms: they take the mutex only
 * if it is free and let the backend refuse to wait for a drain, and
 * return -EAGAIN where the others would sleep, so the engine leaves the
 * work request to a context that can. An invalidation finds its MR by key, which a peer chooses,
 * so the MR may be torn down at the same time: lookups hold the MR through
 * mr->users (mrc_mr_lookup()), and mrc_dereg_mr() turns new lookups away
 * and waits for the others before it invalidates, drains and frees.
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

/* Entries a REG_MR encodes per write_xlt, in a 256-byte stack buffer. */
#define MRC_FRMR_CHUNK		32
#define MRC_FRMR_KLM_CHUNK	16

/**
 * struct mrc_frmr - a fast-registration MR
 * @mr: the MR; first, because mrc_dereg_mr() frees it as a struct mrc_mr
 *	(kfree_rcu() of its address), which is then the address of this
 * @max_pages: entries reserved in @mr.xlt: MTT entries, or KLM entries for
 *	an SG_GAPS MR (@mr.mode MRC_ACCESS_MODE_KLM)
 * @state: enum mrc_mkey_state of the context as mrcore last wrote it:
 *	FREE from allocation (the context alloc writes; nothing finds the
 *	MR before that write), then FREE or VALID; written under @mr.lock
 *	once the MR is findable, read locklessly by mrc_frmr_state()
 */
struct mrc_frmr {
	struct mrc_mr mr;
	u32 max_pages;
	u8 state;
};

static_assert(offsetof(struct mrc_frmr, mr) == 0);

/* Only for an MR whose type is MRC_MR_FAST_REG. */
static struct mrc_frmr *to_mrc_frmr(struct mrc_mr *mr)
{
	return container_of(mr, struct mrc_frmr, mr);
}

static void mrc_frmr_set_state(struct mrc_frmr *frmr, u8 state)
{
	lockdep_assert_held(&frmr->mr.lock);
	/* Read locklessly by mrc_frmr_state(). */
	WRITE_ONCE(frmr->state, state);
}

/**
 * mrc_frmr_state - the state of a fast-reg MR's context
 * @mr: a fast-reg MR, held or found under RCU
 *
 * Exact under the MR's mutex, a snapshot without it.
 *
 * Context: any context.
 * Return: enum mrc_mkey_state as mrcore last wrote it.
 */
enum mrc_mkey_state mrc_frmr_state(const struct mrc_mr *mr)
{
	const struct mrc_frmr *frmr = container_of(mr, struct mrc_frmr, mr);

	/* Written under the MR's mutex by mrc_frmr_set_state(). */
	return READ_ONCE(frmr->state);
}

/*
 * Take the MR's mutex for an exec call. With @nowait (a caller that cannot
 * sleep) only if it is free: -EAGAIN otherwise, or where failure
 * injection's "nowait" stage says so, so tests reach the engine's path
 * for it.
 */
static int mrc_frmr_lock(struct mrc_mr *mr, bool nowait)
{
	if (!nowait) {
		mutex_lock(&mr->lock);
		return 0;
	}
	if (mrc_inject(mr->mdev, MRC_STAGE_NOWAIT))
		return -EAGAIN;
	return mutex_trylock(&mr->lock) ? 0 : -EAGAIN;
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

/* The largest KLM list an SG_GAPS MR may have: as mrc_frmr_max_pages(). */
static u32 mrc_frmr_max_klm(const struct mrc_device *mdev)
{
	u64 bytes = BIT_ULL(mdev->xlt.max_order) << MRC_XLT_SEG_SHIFT;

	return min_t(u64, bytes / MRC_KLM_ENTRY_SIZE, U32_MAX);
}

/* Bytes of translation space @frmr reserves. */
static u64 mrc_frmr_xlt_bytes(const struct mrc_frmr *frmr)
{
	unsigned int esize = frmr->mr.mode == MRC_ACCESS_MODE_KLM ?
			     MRC_KLM_ENTRY_SIZE : MRC_MTT_ENTRY_SIZE;

	return (u64)frmr->max_pages * esize;
}

/* The context of a FREE fast-reg MR: its key and PD, no translation. */
static void mrc_frmr_free_ctx(const struct mrc_frmr *frmr,
			      struct mrc_mkey_ctx *ctx)
{
	*ctx = (struct mrc_mkey_ctx) {
		.key = frmr->mr.key,
		.state = MRC_MKEY_FREE,
		.access_mode = frmr->mr.mode,
		.pdn = frmr->mr.pd->pdn,
		.xlt_offset = frmr->mr.xlt.offset,
		.counter = mrc_mr_counter_index(&frmr->mr),
	};
}

/*
 * The fast-reg MR that owns @key, held against teardown until
 * mrc_mr_put().
 */
static struct mrc_frmr *mrc_frmr_get(struct mrc_device *mdev, u32 key)
{
	struct mrc_mr *mr;

	mr = mrc_mr_lookup(mdev, key);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* IBTA: only a fast-registration MR can be invalidated. */
	if (mr->type != MRC_MR_FAST_REG) {
		mrc_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	return to_mrc_frmr(mr);
}

/* The FREE context of a fast-reg MR being installed. */
static void mrc_frmr_install_ctx(const struct mrc_mr *mr,
				 struct mrc_mkey_ctx *ctx)
{
	mrc_frmr_free_ctx(container_of(mr, struct mrc_frmr, mr), ctx);
}

/*
 * Allocate and install a fast-reg MR of either mode, with @key (0: any);
 * arguments checked. The key, translation space for its entries (none
 * written yet) and the FREE context.
 */
static struct mrc_mr *mrc_frmr_create(struct mrc_pd *pd, u8 mode,
				      u32 max_entries, u32 key)
{
	struct mrc_install in = { .ctx = mrc_frmr_install_ctx };
	struct mrc_frmr *frmr;
	struct mrc_mr *mr;
	int ret;

	mr = mrc_mr_zalloc(pd, MRC_MR_FAST_REG, 0, key, sizeof(*frmr));
	if (!mr)
		return ERR_PTR(-ENOMEM);
	frmr = to_mrc_frmr(mr);
	mr->mode = mode;
	frmr->max_pages = max_entries;
	/* The state of the context mrc_mr_install() writes. */
	frmr->state = MRC_MKEY_FREE;
	in.xlt_bytes = mrc_frmr_xlt_bytes(frmr);

	ret = mrc_mr_install(mr, &in);
	if (ret)
		goto out_free_mr;
	mrc_dbg_mr(mr, "mode %u max entries %u xlt 0x%llx\n", mode,
		   max_entries, mr->xlt.offset);
	return mr;

out_free_mr:
	mrc_mr_free(mr);
	return ERR_PTR(ret);
}

/**
 * mrc_frmr_check_attr - the checks of a fast-reg MR before allocating
 * @pd: a checked protection domain
 * @attr: type MRC_MR_FAST_REG; its key is checked by the caller
 *
 * Context: any context.
 * Return: 0; -EINVAL for access rights (a REG_MR brings them) or a bad
 * max_entries; -EOPNOTSUPP for SG_GAPS on a device without MRC_CAP_KLM.
 */
int mrc_frmr_check_attr(const struct mrc_pd *pd,
			const struct mrc_reg_attr *attr)
{
	u32 n = attr->frmr.max_entries;

	if (attr->access)
		return -EINVAL;
	if (!attr->frmr.sg_gaps)
		return n && n <= mrc_frmr_max_pages(pd->mdev) ? 0 : -EINVAL;
	if (!n || n > mrc_frmr_max_klm(pd->mdev))
		return -EINVAL;
	if (!(pd->mdev->caps.flags & MRC_CAP_KLM))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * mrc_frmr_reg_attr - allocate a fast-reg MR of either mode
 * @pd: a checked protection domain
 * @attr: type MRC_MR_FAST_REG; a requested key is checked by the caller
 * @umem: NULL (only a user MR takes prepared memory)
 *
 * The body of mrc_alloc_frmr() and mrc_alloc_frmr_sg_gaps(), which are
 * mrc_reg_mr() with key 0. A requested key is the MR's key in its FREE
 * context, and the key the first REG_MR moves on from.
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of those functions.
 */
struct mrc_mr *mrc_frmr_reg_attr(struct mrc_pd *pd,
				 const struct mrc_reg_attr *attr,
				 struct mrc_umem *umem)
{
	int ret;

	ret = mrc_frmr_check_attr(pd, attr);
	if (ret)
		return ERR_PTR(ret);
	return mrc_frmr_create(pd, attr->frmr.sg_gaps ? MRC_ACCESS_MODE_KLM :
				   MRC_ACCESS_MODE_MTT,
			       attr->frmr.max_entries, attr->key);
}

/**
 * mrc_dealloc_frmr - deregister a fast-registration MR and free it
 * @mr: from mrc_alloc_frmr() or mrc_alloc_frmr_sg_gaps(), FREE or VALID
 *
 * mrc_dereg_mr() on a fast-reg MR: invalidations by key
 * (mrc_frmr_exec_inv(), which a peer can trigger at any time) are turned
 * away and those already running waited for; then the key is invalidated,
 * the device drained, and the translation space, the key and the MR
 * freed. Fast-reg MRs are freed here, which checks the type.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL (counted as misuse) if @mr is not a fast-reg MR;
 * -EBUSY while windows are bound; or the error of mrc_dereg_mr(), after
 * which the MR is still usable.
 */
int mrc_dealloc_frmr(struct mrc_mr *mr)
{
	if (mrc_misuse(mr->mdev, mr->type != MRC_MR_FAST_REG))
		return -EINVAL;
	return mrc_dereg_mr(mr);
}
EXPORT_SYMBOL_GPL(mrc_dealloc_frmr);

/* The checks a REG_MR of either mode shares, under the MR's lock. */
static int mrc_frmr_check_common(const struct mrc_frmr *frmr, u32 key,
				 u32 access)
{
	int ret;

	lockdep_assert_held(&frmr->mr.lock);

	/* IBTA: only an MR in the Free state may be fast-registered. */
	if (frmr->state != MRC_MKEY_FREE)
		return -EINVAL;
	/* The WR may change the key's variant only, not its index. */
	if (mrc_key_index(key) != mrc_key_index(frmr->mr.key))
		return -EINVAL;
	/* Rights as for any registration; a WR's iova is never zero-based. */
	ret = mrc_check_access(access);
	if (ret)
		return ret;
	if (access & MRC_ACCESS_ZERO_BASED)
		return -EINVAL;
	return 0;
}

/* The checks of a REG_MR, against the MR's state under its lock. */
static int mrc_frmr_check_reg(const struct mrc_frmr *frmr, u32 key, u64 iova,
			      u64 length, unsigned int page_shift,
			      const u64 *pages, u32 npages, u32 access)
{
	const struct mrc_mr *mr = &frmr->mr;
	u64 mask;
	u32 i, need;
	int ret;

	ret = mrc_frmr_check_common(frmr, key, access);
	if (ret)
		return ret;
	/* The page list fits the space alloc reserved. */
	if (!pages || !npages || npages > frmr->max_pages)
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

/*
 * The entries of a REG_MR are written: one fence, then the VALID context
 * (@ctx: key, iova, length, mode, page shift, entries) and the MR's record
 * of it. @access is the WR's, registration-only bits included.
 */
static int mrc_frmr_go_valid(struct mrc_frmr *frmr, struct mrc_mkey_ctx *ctx,
			     u32 access)
{
	struct mrc_mr *mr = &frmr->mr;
	struct mrc_device *mdev = mr->mdev;
	int ret;

	lockdep_assert_held(&mr->lock);

	mdev->ops->fence(mdev);
	ctx->state = MRC_MKEY_VALID;
	ctx->pdn = mr->pd->pdn;
	ctx->access = access & MRC_ACCESS_HW_MASK;
	ctx->xlt_offset = mr->xlt.offset;
	/* A REG_MR after a bind keeps counting. */
	ctx->counter = mrc_mr_counter_index(mr);
	/* A FREE slot has no walkers: this does not wait. */
	ret = mdev->ops->write_mkey(mdev, mrc_key_index(ctx->key), ctx);
	if (ret)
		return ret;

	if (ctx->key != mr->key)
		mrc_mkey_set_variant(mdev, ctx->key);
	mr->key = ctx->key;
	mr->access = access;
	mr->iova = ctx->iova;
	mr->length = ctx->length;
	mr->page_shift = ctx->page_shift;
	mr->nentries = ctx->xlt_entries;
	mrc_frmr_set_state(frmr, MRC_MKEY_VALID);
	atomic64_inc(&mdev->stats_fr_regs);
	return 0;
}

/* The checked REG_MR: entries, one fence, the VALID context last. */
static int mrc_frmr_reg_locked(struct mrc_frmr *frmr, u32 key, u64 iova,
			       u64 length, unsigned int page_shift,
			       const u64 *pages, u32 npages, u32 access)
{
	struct mrc_mkey_ctx ctx = {
		.key = key,
		.access_mode = MRC_ACCESS_MODE_MTT,
		.page_shift = page_shift,
		.iova = iova,
		.length = length,
		.xlt_entries = npages,
	};
	int ret;

	ret = mrc_frmr_write_mtt(frmr, pages, npages,
				 mrc_access_writable(access));
	if (ret)
		return ret;
	return mrc_frmr_go_valid(frmr, &ctx, access);
}

/* mrc_frmr_exec_reg(), and with @nowait its _nowait form. */
static int mrc_frmr_do_reg(struct mrc_mr *mr, u32 key, u64 iova, u64 length,
			   unsigned int page_shift, const u64 *dma_pages,
			   u32 npages, u32 access, bool nowait)
{
	struct mrc_frmr *frmr;
	int ret;

	/* Only an MTT-mode fast-registration MR takes a page list. */
	if (!mr || mr->type != MRC_MR_FAST_REG ||
	    mr->mode != MRC_ACCESS_MODE_MTT)
		return -EINVAL;
	frmr = to_mrc_frmr(mr);

	ret = mrc_frmr_lock(mr, nowait);
	if (ret)
		return ret;
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
 * Return: 0; -EINVAL if @mr is not an MTT-mode fast-reg MR (an SG_GAPS
 * MR takes mrc_frmr_exec_reg_klm()), is not FREE (IBTA:
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
	return mrc_frmr_do_reg(mr, key, iova, length, page_shift, dma_pages,
			       npages, access, false);
}
EXPORT_SYMBOL_GPL(mrc_frmr_exec_reg);

/**
 * mrc_frmr_exec_reg_nowait - mrc_frmr_exec_reg() where the caller cannot sleep
 * @mr: as for mrc_frmr_exec_reg()
 * @key: as for mrc_frmr_exec_reg()
 * @iova: as for mrc_frmr_exec_reg()
 * @length: as for mrc_frmr_exec_reg()
 * @page_shift: as for mrc_frmr_exec_reg()
 * @dma_pages: as for mrc_frmr_exec_reg()
 * @npages: as for mrc_frmr_exec_reg()
 * @access: as for mrc_frmr_exec_reg()
 *
 * The same REG_MR, for an engine that executes it where it cannot sleep,
 * such as a kernel post_send's own run. A FREE context has no walkers to
 * drain, so only the MR's mutex could make it wait: it is taken only if
 * it is free.
 *
 * Context: any context but hard interrupt; does not sleep. The backend's
 * write_xlt, fence and write_mkey of a FREE slot must not sleep there.
 * Return: as mrc_frmr_exec_reg(); -EAGAIN, with nothing checked or
 * written, when the MR's mutex is held.
 */
int mrc_frmr_exec_reg_nowait(struct mrc_mr *mr, u32 key, u64 iova,
			     u64 length, unsigned int page_shift,
			     const u64 *dma_pages, u32 npages, u32 access)
{
	return mrc_frmr_do_reg(mr, key, iova, length, page_shift, dma_pages,
			       npages, access, true);
}
EXPORT_SYMBOL_GPL(mrc_frmr_exec_reg_nowait);

/*
 * The checks of an SG_GAPS REG_MR: every range 1 .. MRC_KLM_MAX_BCOUNT
 * bytes (one KLM entry each) and not wrapping, the total and the key's
 * range not wrapping either. The total is returned in @length.
 */
static int mrc_frmr_check_klm(const struct mrc_frmr *frmr, u32 key, u64 iova,
			      const struct mrc_phys_buf *bufs, u32 nbufs,
			      u32 access, u64 *length)
{
	u64 end, total = 0;
	u32 i;
	int ret;

	ret = mrc_frmr_check_common(frmr, key, access);
	if (ret)
		return ret;
	/* The list fits the space alloc reserved. */
	if (!bufs || !nbufs || nbufs > frmr->max_pages)
		return -EINVAL;
	for (i = 0; i < nbufs; i++) {
		if (!bufs[i].size || bufs[i].size > MRC_KLM_MAX_BCOUNT ||
		    check_add_overflow(bufs[i].addr, bufs[i].size - 1, &end) ||
		    check_add_overflow(total, bufs[i].size, &total))
			return -EINVAL;
	}
	if (check_add_overflow(iova, total - 1, &end))
		return -EINVAL;
	*length = total;
	return 0;
}

/* One KLM entry {bcount, local DMA key, addr} per range, a chunk at a time. */
static int mrc_frmr_write_klm(struct mrc_frmr *frmr,
			      const struct mrc_phys_buf *bufs, u32 nbufs)
{
	struct mrc_device *mdev = frmr->mr.mdev;
	struct mrc_klm buf[MRC_FRMR_KLM_CHUNK];
	u64 offset = frmr->mr.xlt.offset;
	u32 i, j, n;
	int ret;

	BUILD_BUG_ON(sizeof(struct mrc_klm) != MRC_KLM_ENTRY_SIZE);

	for (i = 0; i < nbufs; i += n) {
		n = min_t(u32, nbufs - i, MRC_FRMR_KLM_CHUNK);
		for (j = 0; j < n; j++)
			buf[j] = (struct mrc_klm) {
				.bcount = cpu_to_le32(bufs[i + j].size),
				.key = cpu_to_le32(mdev->local_dma_lkey),
				.addr = cpu_to_le64(bufs[i + j].addr),
			};
		ret = mdev->ops->write_xlt(mdev, offset, buf,
					   n * sizeof(*buf));
		if (ret)
			return ret;
		offset += n * sizeof(*buf);
	}
	return 0;
}

/* mrc_frmr_exec_reg_klm(), and with @nowait its _nowait form. */
static int mrc_frmr_do_reg_klm(struct mrc_mr *mr, u32 key, u64 iova,
			       const struct mrc_phys_buf *bufs, u32 nbufs,
			       u32 access, bool nowait)
{
	struct mrc_mkey_ctx ctx = {
		.key = key,
		.access_mode = MRC_ACCESS_MODE_KLM,
		.iova = iova,
		.xlt_entries = nbufs,
	};
	struct mrc_frmr *frmr;
	int ret;

	/* Only an SG_GAPS (KLM-mode) fast-registration MR takes ranges. */
	if (!mr || mr->type != MRC_MR_FAST_REG ||
	    mr->mode != MRC_ACCESS_MODE_KLM)
		return -EINVAL;
	frmr = to_mrc_frmr(mr);

	ret = mrc_frmr_lock(mr, nowait);
	if (ret)
		return ret;
	ret = mrc_frmr_check_klm(frmr, key, iova, bufs, nbufs, access,
				 &ctx.length) ?:
	      mrc_frmr_write_klm(frmr, bufs, nbufs) ?:
	      mrc_frmr_go_valid(frmr, &ctx, access);
	mrc_dbg_mr(mr, "key 0x%08x iova 0x%llx ranges %u access 0x%x: %d\n",
		   key, iova, nbufs, access, ret);
	mutex_unlock(&mr->lock);
	return ret;
}

/**
 * mrc_frmr_exec_reg_klm - execute a REG_MR on an SG_GAPS MR, as the device
 * @mr: a fast-reg MR from mrc_alloc_frmr_sg_gaps()
 * @key: the WR's key: @mr's index, any variant (ib_update_fast_reg_key())
 * @iova: address of the first byte
 * @bufs: the DMA ranges, in the order the key's addresses run through
 *	them; any address and length, each 1 .. MRC_KLM_MAX_BCOUNT bytes
 * @nbufs: entries of @bufs, in [1, max_entries]
 * @access: MRC_ACCESS_* rights, with the rules of mrc_check_access();
 *	ZERO_BASED is refused
 *
 * The backend's engine calls this when it executes the WR, in QP order.
 * Writes one KLM entry {bcount = size, key = the local DMA key, addr} per
 * range over the MR's translation space, fences once, then writes the
 * context VALID in KLM mode with @key, @iova, the sum of the sizes as
 * length, @access, and @nbufs entries. From then on @key is the MR's key.
 * Allocates nothing.
 *
 * Context: process context; may sleep briefly (the MR's mutex).
 * Return: 0; -EINVAL if @mr is not an SG_GAPS fast-reg MR, is not FREE,
 * @key names another index, @nbufs is 0 or above max_entries, a range is
 * empty, longer than MRC_KLM_MAX_BCOUNT or wraps, the total or the key's
 * range wraps, or @access is refused or ZERO_BASED; -EOPNOTSUPP for
 * ON_DEMAND; or the error of a backend op, after which the MR is still
 * FREE.
 */
int mrc_frmr_exec_reg_klm(struct mrc_mr *mr, u32 key, u64 iova,
			  const struct mrc_phys_buf *bufs, u32 nbufs,
			  u32 access)
{
	return mrc_frmr_do_reg_klm(mr, key, iova, bufs, nbufs, access, false);
}
EXPORT_SYMBOL_GPL(mrc_frmr_exec_reg_klm);

/**
 * mrc_frmr_exec_reg_klm_nowait - mrc_frmr_exec_reg_klm() where the caller
 *	cannot sleep
 * @mr: as for mrc_frmr_exec_reg_klm()
 * @key: as for mrc_frmr_exec_reg_klm()
 * @iova: as for mrc_frmr_exec_reg_klm()
 * @bufs: as for mrc_frmr_exec_reg_klm()
 * @nbufs: as for mrc_frmr_exec_reg_klm()
 * @access: as for mrc_frmr_exec_reg_klm()
 *
 * As mrc_frmr_exec_reg_nowait() is to mrc_frmr_exec_reg().
 *
 * Context: any context but hard interrupt; does not sleep.
 * Return: as mrc_frmr_exec_reg_klm(); -EAGAIN, with nothing checked or
 * written, when the MR's mutex is held.
 */
int mrc_frmr_exec_reg_klm_nowait(struct mrc_mr *mr, u32 key, u64 iova,
				 const struct mrc_phys_buf *bufs, u32 nbufs,
				 u32 access)
{
	return mrc_frmr_do_reg_klm(mr, key, iova, bufs, nbufs, access, true);
}
EXPORT_SYMBOL_GPL(mrc_frmr_exec_reg_klm_nowait);

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
	mrc_frmr_set_state(frmr, MRC_MKEY_FREE);
	return 0;
}

/**
 * mrc_frmr_do_inv - mrc_frmr_exec_inv(), and its form that does not sleep
 * @mdev: registered device
 * @pdn: PD number of the executing QP
 * @key: the key to invalidate
 * @nowait: the caller cannot sleep: the MR's mutex is taken only if it is
 *	free, and the backend's write_mkey, which then may not wait for the
 *	drain, returns -EAGAIN while accesses run through the VALID context
 *	(struct mrc_hw_ops)
 *
 * Context: with @nowait any context but hard interrupt, else process
 * context.
 * Return: as mrc_frmr_exec_inv(); with @nowait also -EAGAIN, the MR still
 * VALID.
 */
int mrc_frmr_do_inv(struct mrc_device *mdev, u32 pdn, u32 key, bool nowait)
{
	struct mrc_frmr *frmr;
	int ret;

	frmr = mrc_frmr_get(mdev, key);
	if (IS_ERR(frmr)) {
		mrc_dbg(mdev, "key 0x%08x: %ld\n", key, PTR_ERR(frmr));
		return PTR_ERR(frmr);
	}

	ret = mrc_frmr_lock(&frmr->mr, nowait);
	if (!ret) {
		ret = mrc_frmr_inv_locked(frmr, pdn, key);
		mrc_dbg_mr(&frmr->mr, "key 0x%08x pdn %u: %d\n", key, pdn,
			   ret);
		mutex_unlock(&frmr->mr.lock);
	}
	mrc_mr_put(&frmr->mr);
	return ret;
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
 * mrc_exec_inv() is the same for fast-reg MRs and also invalidates type 2
 * memory windows: the engine calls that one.
 *
 * Context: process context; may sleep (the MR's mutex, the drain). Takes
 * no lock a caller of other mrcore calls holds.
 * Return: 0; -ENOKEY if @key is not live (unknown index, stale variant,
 * MR being freed); -EINVAL if its owner is not a fast-reg MR (a window, or
 * none: the local DMA key); -EPERM for another PD; -EBUSY while memory
 * windows are bound; or the error of ops->write_mkey, after which the MR
 * is still VALID.
 */
int mrc_frmr_exec_inv(struct mrc_device *mdev, u32 pdn, u32 key)
{
	return mrc_frmr_do_inv(mdev, pdn, key, false);
}
EXPORT_SYMBOL_GPL(mrc_frmr_exec_inv);
