// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: SG_GAPS fast registration on a vhca device.
 *
 * An SG_GAPS MR is driven with standard verbs
 * (ib_alloc_mr(IB_MR_TYPE_SG_GAPS), ib_map_mr_sg(), IB_WR_REG_MR) over
 * pieces of a physically contiguous kernel buffer of its own, DMA-mapped
 * once, so the pieces may start and end anywhere and leave gaps between
 * them that the test program checks through the CPU.
 *
 * In the order of an MR's life: MRCT_GAPS_ALLOC and MRCT_GAPS_FREE,
 * MRCT_GAPS_REG (map the pieces, post the REG_MR on a pair and wait), and
 * MRCT_GAPS_BUF_READ / MRCT_GAPS_BUF_WRITE for the CPU's view of the
 * buffer. The MRs live in the MW state of mrcore_test_mw.c (struct
 * mrct_mw), which hands this file its ioctls and, on unbind, frees what
 * is left here through mrct_gaps_free_one() after the windows that may be
 * bound to them. Everything runs under the context's lock.
 */
#include <linux/dma-direction.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/**
 * struct mrct_gaps_mr - an SG_GAPS MR of a context and its buffer
 * @mr: from ib_alloc_mr(IB_MR_TYPE_SG_GAPS)
 * @pages: MRCT_GAPS_BUF_SIZE bytes, physically contiguous
 * @dma: their DMA address on the device
 * @sgl: the scatterlist of the last MRCT_GAPS_REG
 */
struct mrct_gaps_mr {
	struct ib_mr *mr;
	struct page *pages;
	u64 dma;
	struct scatterlist sgl[MRCT_GAPS_MAX_PIECES];
};

/**
 * mrct_gaps_free_one - free an SG_GAPS MR and its buffer
 * @ibdev: the device its buffer is mapped on
 * @g: the MR, out of its xarray
 *
 * The buffer is kept, and @g, if the MR stays.
 *
 * Return: 0, or ib_dereg_mr()'s error.
 */
int mrct_gaps_free_one(struct ib_device *ibdev, struct mrct_gaps_mr *g)
{
	int err;

	if (g->mr) {
		err = ib_dereg_mr(g->mr);
		if (err)
			return err;
	}
	if (g->dma)
		ib_dma_unmap_page(ibdev, g->dma, MRCT_GAPS_BUF_SIZE,
				  DMA_BIDIRECTIONAL);
	if (g->pages)
		__free_pages(g->pages, get_order(MRCT_GAPS_BUF_SIZE));
	kfree(g);
	return 0;
}

static struct mrct_gaps_mr *mrct_gaps_new(struct mrct_ctx *ctx,
					  const struct mrct_gaps_alloc *req)
{
	struct mrct_gaps_mr *g;
	struct ib_mr *mr;
	u64 dma;
	int err;

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return ERR_PTR(-ENOMEM);
	g->pages = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
			       get_order(MRCT_GAPS_BUF_SIZE));
	if (!g->pages) {
		err = -ENOMEM;
		goto out_free;
	}
	dma = ib_dma_map_page(ctx->ibdev, g->pages, 0, MRCT_GAPS_BUF_SIZE,
			      DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ctx->ibdev, dma)) {
		err = -ENOMEM;
		goto out_free;
	}
	g->dma = dma;

	mr = ib_alloc_mr(ctx->pd[req->pd], IB_MR_TYPE_SG_GAPS, req->max_sg);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto out_free;
	}
	g->mr = mr;
	return g;

out_free:
	/* No MR yet: this cannot fail. */
	mrct_gaps_free_one(ctx->ibdev, g);
	return ERR_PTR(err);
}

static int mrct_gaps_alloc_locked(struct mrct_ctx *ctx,
				  struct mrct_gaps_alloc *req)
{
	struct mrct_gaps_mr *g;
	struct mrct_mw *st;
	int err;

	lockdep_assert_held(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st->nr_gaps >= MRCT_GAPS_MAX)
		return -EMFILE;

	g = mrct_gaps_new(ctx, req);
	if (IS_ERR(g))
		return PTR_ERR(g);
	err = mrct_mw_store(&st->gaps, &st->next_gaps, g, &req->handle);
	if (err) {
		WARN_ON(mrct_gaps_free_one(ctx->ibdev, g));
		return err;
	}
	st->nr_gaps++;
	req->lkey = g->mr->lkey;
	req->rkey = g->mr->rkey;
	req->sg_gaps_cap = !!(ctx->ibdev->attrs.kernel_cap_flags &
			      IBK_SG_GAPS_REG);
	return 0;
}

/**
 * mrct_gaps_alloc - MRCT_GAPS_ALLOC
 * @ctx: the file's context
 * @uarg: struct mrct_gaps_alloc
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_gaps_alloc(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_gaps_alloc req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS)
		return -EINVAL;

	/* On a fault the MR stays until the file is closed. */
	return mrct_call_locked(ctx, mrct_gaps_alloc_locked, &req, uarg);
}

/**
 * mrct_gaps_free - MRCT_GAPS_FREE
 * @ctx: the file's context
 * @uarg: struct mrct_mw_handle
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_gaps_free(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_mw_handle req;
	struct mrct_gaps_mr *g;
	struct mrct_mw *st;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st)) {
		err = PTR_ERR(st);
		goto out_unlock;
	}
	g = xa_load(&st->gaps, req.handle);
	if (!g) {
		err = -ENOENT;
		goto out_unlock;
	}
	err = mrct_gaps_free_one(ctx->ibdev, g);
	if (!err) {
		xa_erase(&st->gaps, req.handle);
		st->nr_gaps--;
	}
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/* ib_map_mr_sg() of @req's pieces of @g's buffer; returns its result. */
static int mrct_gaps_map(struct mrct_gaps_mr *g,
			 const struct mrct_gaps_reg *req)
{
	const struct mrct_gaps_piece *p;
	struct scatterlist *sg;
	u32 i;

	sg_init_table(g->sgl, req->npieces);
	for_each_sg(g->sgl, sg, req->npieces, i) {
		p = &req->pieces[i];
		/* The buffer is contiguous: an entry may span its pages. */
		sg_set_page(sg, nth_page(g->pages, p->offset >> PAGE_SHIFT),
			    p->length, offset_in_page(p->offset));
		sg_dma_address(sg) = g->dma + p->offset;
		sg_dma_len(sg) = p->length;
	}
	return ib_map_mr_sg(g->mr, g->sgl, req->npieces, NULL, PAGE_SIZE);
}

static int mrct_gaps_reg_locked(struct mrct_ctx *ctx,
				struct mrct_gaps_reg *req)
{
	struct ib_reg_wr wr = { .wr.opcode = IB_WR_REG_MR };
	struct mrct_gaps_mr *g;
	struct mrct_pair *pair;
	struct mrct_mw *st;
	int err;

	lockdep_assert_held(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	g = xa_load(&st->gaps, req->handle);
	if (!g)
		return -ENOENT;
	pair = mrct_pair_get(ctx, req->pair);
	if (IS_ERR(pair))
		return PTR_ERR(pair);

	req->map_ret = mrct_gaps_map(g, req);
	req->iova = g->mr->iova;
	req->length = g->mr->length;
	req->lkey = g->mr->lkey;
	req->rkey = g->mr->rkey;
	if (req->map_ret != req->npieces)
		return 0;

	ib_update_fast_reg_key(g->mr, ib_inc_rkey(g->mr->rkey) & 0xff);
	req->lkey = g->mr->lkey;
	req->rkey = g->mr->rkey;
	wr.mr = g->mr;
	wr.key = g->mr->rkey;
	wr.access = req->access;
	ib_dma_sync_single_for_device(ctx->ibdev, g->dma, MRCT_GAPS_BUF_SIZE,
				      DMA_BIDIRECTIONAL);
	err = mrct_post_wait(ctx, pair, req->qp, &wr.wr, &req->post_err,
			     &req->bad_wr, &req->status);
	if (err)
		return err;
	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	return 0;
}

/**
 * mrct_gaps_reg - MRCT_GAPS_REG
 * @ctx: the file's context
 * @uarg: struct mrct_gaps_reg
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_gaps_reg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_gaps_reg *req;
	u32 i;
	int err;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		err = -EFAULT;
		goto out_free;
	}
	err = -EINVAL;
	if (req->qp > 1 || !req->npieces ||
	    req->npieces > MRCT_GAPS_MAX_PIECES || req->reserved)
		goto out_free;
	for (i = 0; i < req->npieces; i++)
		if ((u64)req->pieces[i].offset + req->pieces[i].length >
		    MRCT_GAPS_BUF_SIZE)
			goto out_free;
	req->iova = 0;
	req->length = 0;
	req->map_ret = 0;
	req->post_err = 0;
	req->bad_wr = MRCT_BAD_WR_NULL;
	req->status = MRCT_WC_NONE;
	req->qp_state[0] = MRCT_QPS_UNKNOWN;
	req->qp_state[1] = MRCT_QPS_UNKNOWN;

	mutex_lock(&ctx->lock);
	err = mrct_gaps_reg_locked(ctx, req);
	mutex_unlock(&ctx->lock);
	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free:
	kfree(req);
	return err;
}

static int mrct_gaps_buf_locked(struct mrct_ctx *ctx,
				const struct mrct_gaps_buf *req, bool write)
{
	void __user *ptr = u64_to_user_ptr(req->ptr);
	struct mrct_gaps_mr *g;
	struct mrct_mw *st;
	u8 *va;

	lockdep_assert_held(&ctx->lock);
	st = mrct_mw_get(ctx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	g = xa_load(&st->gaps, req->handle);
	if (!g)
		return -ENOENT;

	va = (u8 *)page_address(g->pages) + req->offset;
	ib_dma_sync_single_for_cpu(ctx->ibdev, g->dma, MRCT_GAPS_BUF_SIZE,
				   DMA_BIDIRECTIONAL);
	if (!write)
		return copy_to_user(ptr, va, req->length) ? -EFAULT : 0;
	if (copy_from_user(va, ptr, req->length))
		return -EFAULT;
	ib_dma_sync_single_for_device(ctx->ibdev, g->dma, MRCT_GAPS_BUF_SIZE,
				      DMA_BIDIRECTIONAL);
	return 0;
}

/**
 * mrct_gaps_buf - MRCT_GAPS_BUF_READ and MRCT_GAPS_BUF_WRITE
 * @ctx: the file's context
 * @uarg: struct mrct_gaps_buf
 * @write: MRCT_GAPS_BUF_WRITE, else MRCT_GAPS_BUF_READ
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_gaps_buf(struct mrct_ctx *ctx, void __user *uarg, bool write)
{
	struct mrct_gaps_buf req;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved ||
	    (u64)req.offset + req.length > MRCT_GAPS_BUF_SIZE)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	err = mrct_gaps_buf_locked(ctx, &req, write);
	mutex_unlock(&ctx->lock);
	return err;
}
