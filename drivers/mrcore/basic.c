// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: the basic kinds of MR, whose whole translation is planned at
 * registration: DMA (all memory, PA mode), physical (a caller's DMA
 * ranges), sg (a caller's DMA-mapped scatterlist) and user (pinned user
 * memory; ON_DEMAND ones are handed to odp.c).
 *
 * Each kind validates everything that can be validated without
 * allocating, plans its translation (xlt_build.c), allocates its MR and
 * hands both to mrc_mr_install() (mr.c), which takes the key, writes the
 * entries and the context. The kinds table (kinds.c) points here; the
 * exported entry points (mrc_reg_dma_mr(), ...) are in reg.c.
 *
 * Reading order: DMA, physical, sg, user; each kind's checks above its
 * registration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mrcore_loc.h"

/**
 * mrc_dma_check - the checks of a DMA MR
 * @pd: a checked protection domain
 * @attr: type MRC_MR_DMA; its key is checked by the caller
 *
 * Context: any context.
 * Return: 0 or the errno mrc_dma_reg() fails with first.
 */
int mrc_dma_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	return mrc_check_access(attr->access);
}

/**
 * mrc_dma_reg - mrc_reg_dma_mr() with a requested key
 * @pd: a checked protection domain
 * @attr: type MRC_MR_DMA; a requested key is checked by the caller
 * @umem: NULL (only a user MR takes prepared memory)
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of mrc_reg_dma_mr().
 */
struct mrc_mr *mrc_dma_reg(struct mrc_pd *pd, const struct mrc_reg_attr *attr,
			   struct mrc_umem *umem)
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

	ret = mrc_mr_install_table(mr, &t);
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

/**
 * mrc_phys_check - the checks of a physical MR
 * @pd: a checked protection domain
 * @attr: type MRC_MR_PHYS; its key is checked by the caller
 *
 * Context: any context.
 * Return: 0 or the errno mrc_phys_reg() fails with first.
 */
int mrc_phys_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	struct mrc_xlt_table t;

	return mrc_phys_prepare(pd, attr, &t);
}

/**
 * mrc_phys_segs - the ranges of a physical MR, as DMA segments
 * @mr: a physical MR
 * @it: set to iterate over mrcore's copy of its ranges
 *
 * Context: any context.
 */
void mrc_phys_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it)
{
	mrc_seg_iter_phys(it, mr->bufs, mr->nbufs);
}

/**
 * mrc_phys_reg - mrc_reg_phys_mr() with a requested key
 * @pd: a checked protection domain
 * @attr: type MRC_MR_PHYS; a requested key is checked by the caller
 * @umem: NULL (only a user MR takes prepared memory)
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of mrc_reg_phys_mr().
 */
struct mrc_mr *mrc_phys_reg(struct mrc_pd *pd,
			    const struct mrc_reg_attr *attr,
			    struct mrc_umem *umem)
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

	ret = mrc_mr_install_table(mr, &t);
	if (ret)
		goto out_free_bufs;
	return mr;

out_free_bufs:
	kvfree(mr->bufs);
out_free_mr:
	mrc_mr_free(mr);
	return ERR_PTR(ret);
}

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

/**
 * mrc_sg_check - the checks of an sg MR
 * @pd: a checked protection domain
 * @attr: type MRC_MR_SG; its key is checked by the caller
 *
 * Context: any context.
 * Return: 0 or the errno mrc_sg_reg() fails with first.
 */
int mrc_sg_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	struct mrc_xlt_table t;

	return mrc_sg_prepare(pd, attr, &t);
}

/**
 * mrc_sg_segs - the DMA segments of an sg MR
 * @mr: an sg MR
 * @it: set to iterate over the first @mr->length bytes of its table
 *
 * Context: any context.
 */
void mrc_sg_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it)
{
	mrc_seg_iter_sg(it, mr->sgt->sgl, mr->sgt->nents, 0, mr->length);
}

/**
 * mrc_sg_reg - mrc_reg_sg_mr() with a requested key
 * @pd: a checked protection domain
 * @attr: type MRC_MR_SG; a requested key is checked by the caller
 * @umem: NULL (only a user MR takes prepared memory)
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of mrc_reg_sg_mr().
 */
struct mrc_mr *mrc_sg_reg(struct mrc_pd *pd, const struct mrc_reg_attr *attr,
			  struct mrc_umem *umem)
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

	ret = mrc_mr_install_table(mr, &t);
	if (ret)
		goto out_free_mr;
	return mr;

out_free_mr:
	mrc_mr_free(mr);
	return ERR_PTR(ret);
}

/**
 * mrc_user_check - the checks of a user MR that need no allocation
 * @pd: a checked protection domain
 * @attr: type MRC_MR_USER; its key is checked by the caller
 *
 * Context: any context.
 * Return: 0 or the errno of mrc_check_access() or
 * mrc_check_user_range().
 */
int mrc_user_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	return mrc_check_access(attr->access) ?:
	       mrc_check_user_range(attr->start, attr->length,
				    mrc_effective_iova(attr->iova,
						       attr->access));
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

/**
 * mrc_user_reg - mrc_reg_user_mr() with a requested key
 * @pd: a checked protection domain
 * @attr: type MRC_MR_USER; a requested key is checked by the caller
 * @umem: memory the registering process prepared with mrc_umem_prepare()
 *	(consumed, on failure too), or NULL to pin from the calling process
 *
 * With ON_DEMAND and no @umem, the ODP registration (odp.c).
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of mrc_reg_user_mr().
 */
struct mrc_mr *mrc_user_reg(struct mrc_pd *pd,
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

	ret = mrc_user_check(pd, attr);
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

	ret = mrc_mr_install_table(mr, &t);
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
 * mrc_user_segs - the DMA segments of a pinned user MR
 * @mr: a user MR, not ODP
 * @it: set to iterate over its pinned memory
 *
 * Context: any context.
 */
void mrc_user_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it)
{
	mrc_umem_segs(mr->umem, it);
}

/**
 * mrc_user_release - tear down what a user MR has beyond the core's
 * @mr: a user MR whose key the device no longer resolves
 *
 * An ODP MR's state (odp.c); a pinned MR's memory is released by the
 * common dereg.
 *
 * Context: process context; may sleep.
 */
void mrc_user_release(struct mrc_mr *mr)
{
	if (mr->odp)
		mrc_odp_release(mr);
}
