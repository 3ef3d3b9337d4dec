// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: FMRs (alloc, map, unmap, dealloc); their pools are in fmr_pool.c.
 *
 * An FMR is a key the CPU maps onto a list of pages and unmaps again, as
 * the kernel memory-regions document describes ib_alloc_fmr() and its
 * calls. mrc_alloc_fmr() gives it a key whose context is FREE (no access)
 * and translation space for two tables of max_pages MTT entries each.
 *
 *   FREE  --mrc_map_phys_fmr()-->  VALID  --mrc_map_phys_fmr()--> VALID
 *   VALID --mrc_unmap_fmr()----->  FREE
 *
 * Every map writes its entries into the table the live context does not
 * use, fences, and writes a VALID context with a new variant of the key:
 * an access through the previous mapping's key fails from then on, and
 * one still running when the context switches (write_mkey waits for it)
 * only ever saw its own table. So an FMR may be mapped again without an
 * unmap, up to max_maps times; an unmap writes the FREE context, and a
 * list of FMRs is unmapped with one fence for the whole batch.
 *
 * Locking: the FMR's mutex (mrc_mr.lock) serialises its maps, unmaps and
 * deallocation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/export.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "fmr.h"

/* MTT entries a map encodes per write_xlt, in a buffer on the stack. */
#define MRC_FMR_CHUNK		32
/**
 * mrc_fmr_max_pages - the longest page list an FMR may take
 * @mdev: registered device
 *
 * Half the MTT entries of the largest block the translation-area
 * allocator hands out, since an FMR reserves two tables. Whether that
 * much space is free when mrc_alloc_fmr() asks is another matter
 * (-ENOSPC).
 *
 * Context: any context.
 * Return: the limit, at least 4.
 */
u32 mrc_fmr_max_pages(const struct mrc_device *mdev)
{
	u64 bytes = BIT_ULL(mdev->xlt.max_order) << MRC_XLT_SEG_SHIFT;

	return min_t(u64, bytes / MRC_MTT_ENTRY_SIZE / 2, U32_MAX);
}
EXPORT_SYMBOL_GPL(mrc_fmr_max_pages);

/**
 * mrc_fmr_check_attr - the checks of an FMR allocation
 * @pd: protection domain
 * @access: MRC_ACCESS_* rights of every mapping
 * @attr: the FMR shape
 *
 * Everything checked before anything is allocated.
 *
 * Context: any context.
 * Return: 0 or -EINVAL (or the error of mrc_check_access()).
 */
int mrc_fmr_check_attr(const struct mrc_pd *pd, u32 access,
		       const struct mrc_fmr_attr *attr)
{
	int ret;

	if (!pd || !pd->mdev || !pd->pdn || !attr)
		return -EINVAL;
	if (!attr->max_pages || attr->max_pages > mrc_fmr_max_pages(pd->mdev))
		return -EINVAL;
	if (!attr->max_maps || attr->max_maps > MRC_FMR_MAX_MAPS)
		return -EINVAL;
	/* A page size the device's MTT takes. */
	if (attr->page_shift < MRC_MTT_MIN_PAGE_SHIFT ||
	    attr->page_shift >= BITS_PER_LONG ||
	    !(pd->mdev->caps.page_size_bitmap & BIT(attr->page_shift)))
		return -EINVAL;
	ret = mrc_check_access(access);
	if (ret)
		return ret;
	/*
	 * The iova comes with every map, and a window bound to an FMR would
	 * outlive the mapping it was bound to.
	 */
	if (access & (MRC_ACCESS_ZERO_BASED | MRC_ACCESS_MW_BIND))
		return -EINVAL;
	return 0;
}

/* The context of an unmapped FMR: its key and PD, no access. */
static void mrc_fmr_free_ctx(const struct mrc_fmr *fmr,
			     struct mrc_mkey_ctx *ctx)
{
	*ctx = (struct mrc_mkey_ctx) {
		.key = fmr->mr.key,
		.state = MRC_MKEY_FREE,
		.access_mode = MRC_ACCESS_MODE_MTT,
		.pdn = fmr->mr.pd->pdn,
		.xlt_offset = fmr->mr.xlt.offset,
		.counter = mrc_mr_counter_index(&fmr->mr),
	};
}

/* The FREE context of an FMR being installed: no entries yet. */
static void mrc_fmr_install_ctx(const struct mrc_mr *mr,
				struct mrc_mkey_ctx *ctx)
{
	mrc_fmr_free_ctx(container_of(mr, struct mrc_fmr, mr), ctx);
}

/**
 * mrc_fmr_create - a checked allocation: an FMR of no pool
 * @pd: protection domain
 * @access: checked rights
 * @attr: checked shape
 * @key: the key to take, or 0 for any
 *
 * Context: process context; may sleep.
 * Return: the FMR, unmapped, or an ERR_PTR().
 */
struct mrc_fmr *mrc_fmr_create(struct mrc_pd *pd, u32 access,
			       const struct mrc_fmr_attr *attr, u32 key)
{
	struct mrc_install in = {
		/* Two tables: a map writes the one the live context does not use. */
		.xlt_bytes = 2ULL * attr->max_pages * MRC_MTT_ENTRY_SIZE,
		.ctx = mrc_fmr_install_ctx,
	};
	struct mrc_fmr *fmr;
	struct mrc_mr *mr;
	int ret;

	mr = mrc_mr_zalloc(pd, MRC_MR_FMR, access, key, sizeof(*fmr));
	if (!mr)
		return ERR_PTR(-ENOMEM);
	fmr = to_mrc_fmr(mr);
	mr->mode = MRC_ACCESS_MODE_MTT;
	fmr->max_pages = attr->max_pages;
	fmr->max_maps = attr->max_maps;
	fmr->page_shift = attr->page_shift;
	fmr->state = MRC_MKEY_FREE;
	INIT_LIST_HEAD(&fmr->list);

	ret = mrc_mr_install(mr, &in);
	if (ret) {
		mrc_mr_free(mr);
		return ERR_PTR(ret);
	}
	mrc_dbg_mr(mr, "max_pages %u max_maps %u shift %u xlt 0x%llx\n",
		   fmr->max_pages, fmr->max_maps, fmr->page_shift,
		   mr->xlt.offset);
	return fmr;
}

/**
 * mrc_fmr_check_reg_attr - the checks of an FMR before allocating
 * @pd: a checked protection domain
 * @attr: type MRC_MR_FMR; its key is checked by the caller
 *
 * Context: any context.
 * Return: 0, or the errno mrc_alloc_fmr() fails with for @attr->fmr and
 * @attr->access.
 */
int mrc_fmr_check_reg_attr(const struct mrc_pd *pd,
			   const struct mrc_reg_attr *attr)
{
	return mrc_fmr_check_attr(pd, attr->access, attr->fmr);
}

/**
 * mrc_fmr_reg_attr - allocate an FMR
 * @pd: a checked protection domain
 * @attr: type MRC_MR_FMR; a requested key is checked by the caller
 * @umem: NULL (only a user MR takes prepared memory)
 *
 * The body of mrc_alloc_fmr(), which is mrc_reg_mr() with key 0. A
 * requested key is the FMR's key while it is unmapped after allocation;
 * the first map moves it to the next variant, as every map does.
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of mrc_alloc_fmr().
 */
struct mrc_mr *mrc_fmr_reg_attr(struct mrc_pd *pd,
				const struct mrc_reg_attr *attr,
				struct mrc_umem *umem)
{
	struct mrc_fmr *fmr;
	int ret;

	ret = mrc_fmr_check_reg_attr(pd, attr);
	if (ret)
		return ERR_PTR(ret);
	fmr = mrc_fmr_create(pd, attr->access, attr->fmr, attr->key);
	if (IS_ERR(fmr))
		return ERR_CAST(fmr);
	return &fmr->mr;
}

/*
 * The checks of a map, against the FMR's state under its lock; the
 * mapping's length on success.
 */
static int mrc_fmr_check_map(const struct mrc_fmr *fmr, const u64 *pages,
			     u32 npages, u64 iova, u64 *length)
{
	u64 mask = BIT_ULL(fmr->page_shift) - 1;
	u64 size, end;
	u32 i;

	lockdep_assert_held(&fmr->mr.lock);

	/* The page list fits the tables alloc reserved. */
	if (!pages || !npages || npages > fmr->max_pages)
		return -EINVAL;
	/* No more maps than the key's variants keep apart. */
	if (fmr->maps >= fmr->max_maps)
		return -EINVAL;
	/* Every page starts on a page boundary. */
	for (i = 0; i < npages; i++)
		if (pages[i] & mask)
			return -EINVAL;
	/*
	 * Page 0 holds byte @iova at @iova's offset in a page: the mapping
	 * runs from there to the end of the last page, and does not wrap.
	 */
	if (check_shl_overflow((u64)npages, fmr->page_shift, &size))
		return -EINVAL;
	*length = size - (iova & mask);
	if (check_add_overflow(iova, *length, &end))
		return -EINVAL;
	return 0;
}

/*
 * Encode @npages entries at byte @offset of the translation area, a stack
 * chunk at a time.
 */
static int mrc_fmr_write_mtt(struct mrc_device *mdev, u64 offset,
			     const u64 *pages, u32 npages, bool writable)
{
	u64 flags = MRC_MTT_READ | (writable ? MRC_MTT_WRITE : 0);
	__le64 buf[MRC_FMR_CHUNK];
	u32 i, j, n;
	int ret;

	for (i = 0; i < npages; i += n) {
		n = min_t(u32, npages - i, MRC_FMR_CHUNK);
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
static void mrc_fmr_set_variant(struct mrc_device *mdev, u32 key)
{
	xa_lock(&mdev->mkeys);
	/* Read locklessly by mrc_mkey_owner(); the owner does not change. */
	WRITE_ONCE(mdev->mkey_variant[mrc_key_index(key)],
		   mrc_key_variant(key));
	xa_unlock(&mdev->mkeys);
}

/*
 * The checked map: entries into the table the live context does not use,
 * one fence, then the VALID context with the next variant of the key. A
 * failure leaves the device and the FMR as they were.
 */
static int mrc_fmr_map_locked(struct mrc_fmr *fmr, const u64 *pages,
			      u32 npages, u64 iova, u64 length)
{
	struct mrc_mr *mr = &fmr->mr;
	struct mrc_device *mdev = mr->mdev;
	u8 table = fmr->table ^ 1;
	u64 offset = mr->xlt.offset +
		     (u64)table * fmr->max_pages * MRC_MTT_ENTRY_SIZE;
	u32 key = mrc_make_key(mrc_key_index(mr->key),
			       mrc_key_variant(mr->key) + 1);
	struct mrc_mkey_ctx ctx;
	int ret;

	lockdep_assert_held(&mr->lock);

	ret = mrc_fmr_write_mtt(mdev, offset, pages, npages,
				mrc_access_writable(mr->access));
	if (ret)
		return ret;
	mdev->ops->fence(mdev);

	ctx = (struct mrc_mkey_ctx) {
		.key = key,
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_MTT,
		.page_shift = fmr->page_shift,
		.pdn = mr->pd->pdn,
		.access = mr->access & MRC_ACCESS_HW_MASK,
		.iova = iova,
		.length = length,
		.xlt_offset = offset,
		.xlt_entries = npages,
		.counter = mrc_mr_counter_index(mr),
	};
	/* Returns once no access through the previous context is running. */
	ret = mdev->ops->write_mkey(mdev, mrc_key_index(key), &ctx);
	if (ret)
		return ret;

	mrc_fmr_set_variant(mdev, key);
	mr->key = key;
	mr->iova = iova;
	mr->length = length;
	mr->page_shift = fmr->page_shift;
	mr->nentries = npages;
	fmr->table = table;
	fmr->state = MRC_MKEY_VALID;
	fmr->maps++;
	return 0;
}

/**
 * mrc_fmr_map - map a held FMR (of a pool or not)
 * @fmr: the FMR
 * @pages: page addresses
 * @npages: entries of @pages
 * @iova: address of the first byte
 *
 * Context: process context; may sleep.
 * Return: 0 or the errors of mrc_map_phys_fmr().
 */
int mrc_fmr_map(struct mrc_fmr *fmr, const u64 *pages, u32 npages, u64 iova)
{
	u64 length;
	int ret;

	mutex_lock(&fmr->mr.lock);
	ret = mrc_fmr_check_map(fmr, pages, npages, iova, &length);
	if (!ret)
		ret = mrc_fmr_map_locked(fmr, pages, npages, iova, length);
	mrc_dbg_mr(&fmr->mr, "iova 0x%llx pages %u maps %u: %d\n", iova,
		   npages, fmr->maps, ret);
	mutex_unlock(&fmr->mr.lock);
	return ret;
}

/**
 * mrc_map_phys_fmr - map a page list onto an FMR
 * @mr: an FMR from mrc_alloc_fmr() (not one of a pool)
 * @pages: DMA addresses of the pages, each aligned to the FMR's page
 *	size; page 0 holds byte @iova at @iova & (page size - 1)
 * @npages: entries of @pages, in [1, max_pages]
 * @iova: address of the first byte through the key
 *
 * The mapping covers (@npages << page_shift) - (@iova & (page size - 1))
 * bytes from @iova. Writes @npages MTT entries (the DMA address |
 * MRC_MTT_READ, and MRC_MTT_WRITE for writable rights) into the table the
 * live context does not use, fences once, then writes the context VALID
 * with the next variant of the key: @mr->key is the new key from then on,
 * and the key of every earlier mapping finds nothing on the device or in
 * mrc_mkey_owner(). An FMR that is mapped already may be mapped again
 * (the previous mapping is replaced), max_maps times in all between two
 * unmaps. Allocates nothing.
 *
 * Context: process context; may sleep (the FMR's mutex, the drain of the
 * previous mapping's accesses).
 * Return: 0; -EINVAL if @mr is not an FMR of no pool (counted as misuse
 * for a pool FMR), @npages is 0 or above max_pages, the FMR has been
 * mapped max_maps times since its last unmap, a page is misaligned, or
 * the mapping would run past U64_MAX; or the error of a backend op, after
 * which the previous mapping (or none) is still the FMR's.
 */
int mrc_map_phys_fmr(struct mrc_mr *mr, const u64 *pages, u32 npages,
		     u64 iova)
{
	if (!mr || mr->type != MRC_MR_FMR)
		return -EINVAL;
	/* A pool's FMRs are mapped by the pool only. */
	if (mrc_misuse(mr->mdev, to_mrc_fmr(mr)->pool))
		return -EINVAL;
	return mrc_fmr_map(to_mrc_fmr(mr), pages, npages, iova);
}
EXPORT_SYMBOL_GPL(mrc_map_phys_fmr);

/* Unmap one FMR: its FREE context, if it is mapped; *@wrote if written. */
static int mrc_fmr_unmap_one(struct mrc_fmr *fmr, bool *wrote)
{
	struct mrc_mr *mr = &fmr->mr;
	struct mrc_device *mdev = mr->mdev;
	struct mrc_mkey_ctx ctx;
	int ret = 0;

	mutex_lock(&mr->lock);
	if (fmr->state != MRC_MKEY_VALID)
		goto out_unlock;

	mrc_fmr_free_ctx(fmr, &ctx);
	/* Returns once no access through the VALID context is running. */
	ret = mdev->ops->write_mkey(mdev, mrc_key_index(mr->key), &ctx);
	if (ret)
		goto out_unlock;
	*wrote = true;
	fmr->state = MRC_MKEY_FREE;
	fmr->maps = 0;
	mr->nentries = 0;
out_unlock:
	mrc_dbg_mr(mr, "%d\n", ret);
	mutex_unlock(&mr->lock);
	return ret;
}

/**
 * mrc_fmr_unmap_batch - unmap checked FMRs of one device
 * @mdev: their device
 * @mrs: the FMRs
 * @nmrs: entries of @mrs
 *
 * Each context FREE, then one fence for the batch. Every FMR is tried.
 *
 * Context: process context; may sleep.
 * Return: 0 or the first error.
 */
int mrc_fmr_unmap_batch(struct mrc_device *mdev, struct mrc_mr *const *mrs,
			unsigned int nmrs)
{
	bool wrote = false;
	unsigned int i;
	int ret = 0, err;

	for (i = 0; i < nmrs; i++) {
		err = mrc_fmr_unmap_one(to_mrc_fmr(mrs[i]), &wrote);
		if (err && !ret)
			ret = err;
	}
	/* The FREE contexts before any later table write, for the batch. */
	if (wrote)
		mdev->ops->fence(mdev);
	return ret;
}

/**
 * mrc_unmap_fmr - unmap a list of FMRs
 * @mrs: FMRs from mrc_alloc_fmr() of one device (none of a pool), mapped
 *	or not
 * @nmrs: entries of @mrs, at least 1
 *
 * Writes the context of every mapped FMR FREE (same key, no access): the
 * backend's write_mkey returns only once no device access through the
 * mapping is still running, so on return the pages it named may be
 * reused. Then one fence for the whole list. An FMR that is not mapped is
 * skipped; if no FMR was mapped nothing is written at all. The next map
 * of each FMR gives it a new key. Allocates nothing.
 *
 * Context: process context; may sleep (the FMRs' mutexes, the drain).
 * Return: 0; -EINVAL (nothing is done) if @mrs is NULL, @nmrs is 0, or an
 * entry is NULL, not an FMR, of a pool (counted as misuse) or of another
 * device than the first; or the first error of ops->write_mkey: the other
 * FMRs are still unmapped, that one stays mapped.
 */
int mrc_unmap_fmr(struct mrc_mr *const *mrs, unsigned int nmrs)
{
	unsigned int i;

	if (!mrs || !nmrs)
		return -EINVAL;
	for (i = 0; i < nmrs; i++) {
		if (!mrs[i] || mrs[i]->type != MRC_MR_FMR ||
		    mrs[i]->mdev != mrs[0]->mdev)
			return -EINVAL;
		if (mrc_misuse(mrs[i]->mdev, to_mrc_fmr(mrs[i])->pool))
			return -EINVAL;
	}
	return mrc_fmr_unmap_batch(mrs[0]->mdev, mrs, nmrs);
}
EXPORT_SYMBOL_GPL(mrc_unmap_fmr);

/**
 * mrc_fmr_destroy - deregister an FMR of a pool or not, whatever its state
 * @fmr: the FMR
 *
 * Context: process context; may sleep.
 * Return: 0 or the error of mrc_dereg_mr() (the FMR is then still usable).
 */
int mrc_fmr_destroy(struct mrc_fmr *fmr)
{
	u64 *pages = fmr->pages;
	int ret;

	/* Invalidates the context (draining its accesses) and frees @fmr. */
	ret = mrc_dereg_mr(&fmr->mr);
	if (!ret)
		kfree(pages);
	return ret;
}

/**
 * mrc_dealloc_fmr - free an unmapped FMR
 * @mr: an FMR from mrc_alloc_fmr() (not one of a pool), not mapped
 *
 * As with ib_dealloc_fmr(), the FMR must be unmapped first. Its key is
 * invalidated (ops->invalidate_mkey), then its translation space, its key
 * and the FMR are freed. No other call on @mr may be running.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBUSY while the FMR is mapped (nothing changes); -EINVAL
 * (counted as misuse) if @mr is not an FMR or is one of a pool; or the
 * error of ops->invalidate_mkey, after which the FMR is still usable.
 */
int mrc_dealloc_fmr(struct mrc_mr *mr)
{
	struct mrc_fmr *fmr;
	bool mapped;

	if (mrc_misuse(mr->mdev, mr->type != MRC_MR_FMR))
		return -EINVAL;
	fmr = to_mrc_fmr(mr);
	if (mrc_misuse(mr->mdev, fmr->pool))
		return -EINVAL;

	mutex_lock(&mr->lock);
	mapped = fmr->state == MRC_MKEY_VALID;
	mutex_unlock(&mr->lock);
	if (mapped)
		return -EBUSY;
	return mrc_fmr_destroy(fmr);
}
EXPORT_SYMBOL_GPL(mrc_dealloc_fmr);
