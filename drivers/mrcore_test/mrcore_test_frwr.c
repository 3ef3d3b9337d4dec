// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: FRWR: REG_MR / LOCAL_INV through a QP pair.
 *
 * Fast-registration MRs are driven the way a kernel ULP drives them, with
 * standard verbs only (ib_alloc_mr, ib_update_fast_reg_key, ib_map_mr_sg,
 * IB_WR_REG_MR, IB_WR_LOCAL_INV, IB_WR_SEND_WITH_INV, ib_dereg_mr), so the
 * same ioctls run on vhca and on rxe.
 *
 * Each FRWR MR of a context comes with a buffer of its own: @nchunks
 * chunks of 2^chunk_shift bytes (a page, or a naturally aligned block of
 * pages for larger page sizes), each DMA-mapped on the device once. A
 * REG_MR names a page list by the chunks it takes from that buffer, in
 * the order first, first + stride, ... (modulo nchunks), so a test can
 * change the page list between registrations without allocating. The
 * scatterlist handed to ib_map_mr_sg() carries the DMA addresses of those
 * mappings; nothing is mapped per registration.
 *
 * The module keeps a record of the mapping of the last REG_MR that
 * completed successfully, so that it can compare what arrived through the
 * key with what the CPU sees at the same place in the buffer: a device
 * that used a stale or wrong page list writes bytes into the wrong pages.
 * Data moves over the pair between the FRWR MR (through its rkey, on the
 * responder side) and a staging buffer of the context (through the PD's
 * local_dma_lkey, on the requester side).
 *
 * Every call that posts waits for its completions (mrct_wait_wc(), with
 * the pair's deadline); a wait that times out wedges the pair, as in the
 * main file.
 *
 * In the order of an MR's life: the buffer and the MR (MRCT_FRWR_ALLOC,
 * MRCT_FRWR_FREE), the mapping, CPU and staging helpers, REG_MR
 * (MRCT_FRWR_REG), LOCAL_INV and Send with Invalidate (MRCT_FRWR_INV),
 * data through the key (MRCT_FRWR_XFER), then the hooks. The loops of
 * many registrations, MRCT_FRWR_CYCLE and MRCT_FRWR_BENCH, are in
 * mrcore_test_frwr_cycle.c, built of this file's calls; the ioctl hook
 * here hands them their commands.
 */
#include <linux/dma-direction.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/* Largest chunk of an FRWR MR's buffer: 2 MiB, the next vhca page size. */
#define MRCT_FRWR_MAX_CHUNK_SHIFT	21

/**
 * struct mrct_frwr - the FRWR state of a context on its bound device
 * @mrs: handle -> struct mrct_frwr_mr
 * @next_handle: allocation cursor for @mrs
 * @nr_mrs: entries in @mrs
 * @stage: staging buffer, MRCT_FRWR_STAGING_SIZE bytes
 * @stage_dma: its DMA address on the device
 *
 * Created by the first FRWR call after MRCT_SET_DEVICE and freed on
 * unbind; used under the context's lock.
 */
struct mrct_frwr {
	struct xarray mrs;
	u32 next_handle;
	u32 nr_mrs;
	void *stage;
	u64 stage_dma;
};

/*
 * The byte the pattern @seed puts at registration offset @pos. Two seeds
 * that differ in their low byte differ at every position, and so do two
 * pages fewer than 256 apart (149 * pages apart, mod 256).
 */
static u8 mrct_frwr_pat(u32 seed, u64 pos)
{
	return (u8)(seed + pos + 7 * (pos >> 8) + 37 * (pos >> 12));
}

static u32 mrct_frwr_chunk(const struct mrct_frwr_mr *fm,
			   const struct mrct_frwr_map *map, u32 ent)
{
	return (u32)(((u64)map->first + (u64)ent * map->stride) % fm->nchunks);
}

/* Buffer and MR ------------------------------------------------------- */

/**
 * mrct_frwr_buf_free - free an FRWR buffer's chunks
 * @ibdev: the device they are mapped on
 * @fm: whose @pages and @dma to unmap and free; chunks never allocated
 *	(NULL) or never mapped (0) are skipped. The arrays stay.
 */
void mrct_frwr_buf_free(struct ib_device *ibdev, struct mrct_frwr_mr *fm)
{
	u32 order = fm->chunk_shift - PAGE_SHIFT;
	u32 i;

	for (i = 0; i < fm->nchunks; i++) {
		if (!fm->pages[i])
			continue;
		if (fm->dma[i])
			ib_dma_unmap_page(ibdev, fm->dma[i],
					  mrct_chunk_bytes(fm),
					  DMA_BIDIRECTIONAL);
		__free_pages(fm->pages[i], order);
	}
}

/**
 * mrct_frwr_buf_alloc - allocate and map every chunk of an FRWR buffer
 * @ibdev: the device to map them on
 * @fm: @chunk_shift, @nchunks and the zeroed arrays @pages and @dma set
 *
 * On failure the caller frees what is, with mrct_frwr_buf_free().
 *
 * Return: 0, or -ENOMEM.
 */
int mrct_frwr_buf_alloc(struct ib_device *ibdev, struct mrct_frwr_mr *fm)
{
	u32 order = fm->chunk_shift - PAGE_SHIFT;
	struct page *page;
	u64 dma;
	u32 i;

	for (i = 0; i < fm->nchunks; i++) {
		page = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				   order);
		if (!page)
			return -ENOMEM;
		fm->pages[i] = page;
		dma = ib_dma_map_page(ibdev, page, 0, mrct_chunk_bytes(fm),
				      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ibdev, dma))
			return -ENOMEM;
		fm->dma[i] = dma;
	}
	return 0;
}

static void mrct_frwr_mr_free(struct ib_device *ibdev,
			      struct mrct_frwr_mr *fm)
{
	int err;

	if (fm->mr) {
		err = ib_dereg_mr(fm->mr);
		if (err)
			ibdev_warn(ibdev, "FRWR MR[0x%08x]: dereg failed: %d\n",
				   fm->mr->lkey, err);
	}
	if (fm->pages)
		mrct_frwr_buf_free(ibdev, fm);
	kfree(fm->sgl);
	kfree(fm->dma);
	kfree(fm->pages);
	kfree(fm);
}

static struct mrct_frwr_mr *mrct_frwr_mr_alloc(struct mrct_ctx *ctx,
					       const struct mrct_frwr_alloc *req)
{
	struct mrct_frwr_mr *fm;
	struct ib_mr *mr;
	int err;

	fm = kzalloc(sizeof(*fm), GFP_KERNEL);
	if (!fm)
		return ERR_PTR(-ENOMEM);
	fm->chunk_shift = req->chunk_shift;
	fm->nchunks = req->nchunks;
	fm->pages = kcalloc(fm->nchunks, sizeof(*fm->pages), GFP_KERNEL);
	fm->dma = kcalloc(fm->nchunks, sizeof(*fm->dma), GFP_KERNEL);
	fm->sgl = kcalloc(fm->nchunks, sizeof(*fm->sgl), GFP_KERNEL);
	if (!fm->pages || !fm->dma || !fm->sgl) {
		err = -ENOMEM;
		goto out_free;
	}
	err = mrct_frwr_buf_alloc(ctx->ibdev, fm);
	if (err)
		goto out_free;

	mr = ib_alloc_mr(ctx->pd[req->pd], IB_MR_TYPE_MEM_REG, req->max_pages);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto out_free;
	}
	fm->mr = mr;
	return fm;

out_free:
	mrct_frwr_mr_free(ctx->ibdev, fm);
	return ERR_PTR(err);
}

/**
 * mrct_frwr_get - the context's FRWR state, created on first use
 * @ctx: the context, locked
 *
 * Return: the state, or ERR_PTR(-ENODEV) with no device bound, or
 * ERR_PTR(-ENOMEM).
 */
struct mrct_frwr *mrct_frwr_get(struct mrct_ctx *ctx)
{
	struct mrct_frwr *fr = ctx->ext[MRCT_EXT_FRWR];
	u64 dma;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return ERR_PTR(-ENODEV);
	if (fr)
		return fr;

	fr = kzalloc(sizeof(*fr), GFP_KERNEL);
	if (!fr)
		return ERR_PTR(-ENOMEM);
	fr->stage = kzalloc(MRCT_FRWR_STAGING_SIZE, GFP_KERNEL);
	if (!fr->stage)
		goto out_free_fr;
	dma = ib_dma_map_single(ctx->ibdev, fr->stage, MRCT_FRWR_STAGING_SIZE,
				DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ctx->ibdev, dma))
		goto out_free_stage;
	fr->stage_dma = dma;
	xa_init_flags(&fr->mrs, XA_FLAGS_ALLOC1);
	ctx->ext[MRCT_EXT_FRWR] = fr;
	return fr;

out_free_stage:
	kfree(fr->stage);
out_free_fr:
	kfree(fr);
	return ERR_PTR(-ENOMEM);
}

/**
 * mrct_frwr_mr_get - an FRWR MR of the context by its handle
 * @fr: the context's FRWR state
 * @handle: from MRCT_FRWR_ALLOC
 *
 * Return: the MR, or ERR_PTR(-ENOENT).
 */
struct mrct_frwr_mr *mrct_frwr_mr_get(struct mrct_frwr *fr, u32 handle)
{
	struct mrct_frwr_mr *fm = xa_load(&fr->mrs, handle);

	return fm ? fm : ERR_PTR(-ENOENT);
}

static int mrct_frwr_alloc_locked(struct mrct_ctx *ctx,
				  struct mrct_frwr_alloc *req)
{
	struct mrct_frwr_mr *fm;
	struct mrct_frwr *fr;
	int err;

	lockdep_assert_held(&ctx->lock);
	fr = mrct_frwr_get(ctx);
	if (IS_ERR(fr))
		return PTR_ERR(fr);
	if (fr->nr_mrs >= MRCT_FRWR_MAX_MRS)
		return -EMFILE;

	fm = mrct_frwr_mr_alloc(ctx, req);
	if (IS_ERR(fm))
		return PTR_ERR(fm);
	err = xa_alloc_cyclic(&fr->mrs, &req->handle, fm, XA_LIMIT(1, U32_MAX),
			      &fr->next_handle, GFP_KERNEL);
	if (err < 0) {
		mrct_frwr_mr_free(ctx->ibdev, fm);
		return err;
	}
	fr->nr_mrs++;
	req->lkey = fm->mr->lkey;
	req->rkey = fm->mr->rkey;
	req->dev_max_pages = ctx->ibdev->attrs.max_fast_reg_page_list_len;
	req->page_size_cap = ctx->ibdev->attrs.page_size_cap;
	return 0;
}

static int mrct_frwr_alloc(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_frwr_alloc req;
	u64 bytes;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS ||
	    !req.nchunks || req.nchunks > MRCT_FRWR_MAX_CHUNKS ||
	    req.chunk_shift < PAGE_SHIFT ||
	    req.chunk_shift > MRCT_FRWR_MAX_CHUNK_SHIFT)
		return -EINVAL;
	bytes = (u64)req.nchunks << req.chunk_shift;
	if (bytes > MRCT_FRWR_MAX_BUF)
		return -EINVAL;

	/* On a fault the MR stays until the file is closed. */
	return mrct_call_locked(ctx, mrct_frwr_alloc_locked, &req, uarg);
}

static int mrct_frwr_free(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_frwr_free req;
	struct mrct_frwr_mr *fm;
	struct mrct_frwr *fr;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	fr = mrct_frwr_get(ctx);
	if (IS_ERR(fr)) {
		err = PTR_ERR(fr);
		goto out_unlock;
	}
	fm = xa_erase(&fr->mrs, req.handle);
	if (!fm) {
		err = -ENOENT;
		goto out_unlock;
	}
	fr->nr_mrs--;
	mrct_frwr_mr_free(ctx->ibdev, fm);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/* Posting ------------------------------------------------------------- */

/**
 * mrct_frwr_map_sg - ib_map_mr_sg() over the chunks of a mapping
 * @fm: the MR and its buffer
 * @map: the chunks; its @iova is set to the MR's after the call
 * @page_size: the page size to map at
 *
 * Return: what ib_map_mr_sg() returned: @map->nents when every entry was
 * mapped.
 */
int mrct_frwr_map_sg(struct mrct_frwr_mr *fm, struct mrct_frwr_map *map,
		     u32 page_size)
{
	u64 chunk = mrct_chunk_bytes(fm);
	u64 end = map->offset + map->length;
	struct scatterlist *sg;
	unsigned int off = map->offset;
	u32 i, c;
	int n;

	sg_init_table(fm->sgl, map->nents);
	for_each_sg(fm->sgl, sg, map->nents, i) {
		c = mrct_frwr_chunk(fm, map, i);
		/* The last entry ends where the registration does. */
		sg_set_page(sg, fm->pages[c],
			    i + 1 < map->nents ? chunk : end - i * chunk, 0);
		sg_dma_address(sg) = fm->dma[c];
		sg_dma_len(sg) = sg->length;
	}
	n = ib_map_mr_sg(fm->mr, fm->sgl, map->nents, &off, page_size);
	map->iova = fm->mr->iova;
	return n;
}

/**
 * mrct_frwr_sync - sync a registration's chunks
 * @ibdev: the device they are mapped on
 * @fm: the MR and its buffer
 * @map: the chunks of the registration
 * @for_cpu: for the CPU to see them, else for the device
 */
void mrct_frwr_sync(struct ib_device *ibdev, struct mrct_frwr_mr *fm,
		    const struct mrct_frwr_map *map, bool for_cpu)
{
	u64 chunk = mrct_chunk_bytes(fm);
	u32 i, c;

	for (i = 0; i < map->nents; i++) {
		c = mrct_frwr_chunk(fm, map, i);
		if (for_cpu)
			ib_dma_sync_single_for_cpu(ibdev, fm->dma[c], chunk,
						   DMA_BIDIRECTIONAL);
		else
			ib_dma_sync_single_for_device(ibdev, fm->dma[c], chunk,
						      DMA_BIDIRECTIONAL);
	}
}

/**
 * mrct_frwr_cpu - fill or count a pattern in a registration, by the CPU
 * @fm: the MR and its buffer
 * @map: the registration
 * @pos: first registration byte
 * @len: bytes from @pos
 * @seed: the pattern
 * @count: count the bytes of @seed's pattern, else write it
 *
 * Fill (@count false) or count the bytes of pattern @seed in (@count
 * true) registration bytes [@pos, @pos + @len) of @map, through the CPU.
 *
 * Return: the bytes that hold the pattern when counting, else 0.
 */
u64 mrct_frwr_cpu(struct mrct_frwr_mr *fm, const struct mrct_frwr_map *map,
		  u64 pos, u64 len, u32 seed, bool count)
{
	u64 chunk = mrct_chunk_bytes(fm);
	u64 at, n, i, hits = 0;
	u8 *va;
	u32 c;

	while (len) {
		at = map->offset + pos;
		c = mrct_frwr_chunk(fm, map, at >> fm->chunk_shift);
		va = (u8 *)page_address(fm->pages[c]) + (at & (chunk - 1));
		n = min(len, chunk - (at & (chunk - 1)));
		for (i = 0; i < n; i++) {
			if (!count)
				va[i] = mrct_frwr_pat(seed, pos + i);
			else if (va[i] == mrct_frwr_pat(seed, pos + i))
				hits++;
		}
		pos += n;
		len -= n;
		cond_resched();
	}
	return hits;
}

/* The staging buffer: fill @len bytes for registration offset @pos. */
static void mrct_frwr_stage_fill(struct mrct_frwr *fr, u64 pos, u32 len,
				 u32 seed)
{
	u8 *b = fr->stage;
	u32 i;

	for (i = 0; i < len; i++)
		b[i] = mrct_frwr_pat(seed, pos + i);
}

static u64 mrct_frwr_stage_count(struct mrct_frwr *fr, u64 pos, u32 len,
				 u32 seed)
{
	const u8 *b = fr->stage;
	u64 hits = 0;
	u32 i;

	for (i = 0; i < len; i++)
		hits += b[i] == mrct_frwr_pat(seed, pos + i);
	return hits;
}

/* REG_MR ------------------------------------------------------------- */

/**
 * mrct_frwr_wr_key - the key of a REG_MR WR
 * @mr: the FRWR MR
 * @flags: MRCT_FRWR_KEY_NEXT, MRCT_FRWR_KEY_SET, MRCT_FRWR_RAW_KEY or 0
 * @key: the variant for MRCT_FRWR_KEY_SET, the whole key for
 *	MRCT_FRWR_RAW_KEY
 *
 * Return: the key, after the variant update the caller asked.
 */
u32 mrct_frwr_wr_key(struct ib_mr *mr, u32 flags, u32 key)
{
	if (flags & MRCT_FRWR_RAW_KEY)
		return key;
	if (flags & MRCT_FRWR_KEY_NEXT)
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	else if (flags & MRCT_FRWR_KEY_SET)
		ib_update_fast_reg_key(mr, key & 0xff);
	return mr->rkey;
}

/* Check @req's page list against @fm's buffer; fills @map. */
static int mrct_frwr_check_map(const struct mrct_frwr_mr *fm,
			       const struct mrct_frwr_reg *req,
			       struct mrct_frwr_map *map)
{
	u64 chunk = mrct_chunk_bytes(fm), end, nents;

	if (req->first >= fm->nchunks || req->stride >= fm->nchunks ||
	    req->offset >= chunk || !req->length)
		return -EINVAL;
	/*
	 * Bounded before it is rounded up: near U64_MAX the rounding would
	 * wrap to 0 entries.
	 */
	if (check_add_overflow((u64)req->offset, req->length, &end) ||
	    end > fm->nchunks * chunk)
		return -EINVAL;
	nents = DIV_ROUND_UP_ULL(end, chunk);
	*map = (struct mrct_frwr_map) {
		.first = req->first,
		.stride = req->stride,
		.offset = req->offset,
		.nents = nents,
		.length = req->length,
	};
	return 0;
}

static int mrct_frwr_reg_locked(struct mrct_ctx *ctx, struct mrct_frwr_reg *req)
{
	struct ib_reg_wr wr = { .wr.opcode = IB_WR_REG_MR };
	struct mrct_frwr_map map;
	struct mrct_frwr_mr *fm;
	struct mrct_pair *pair;
	struct mrct_frwr *fr;
	int err;

	lockdep_assert_held(&ctx->lock);
	fr = mrct_frwr_get(ctx);
	if (IS_ERR(fr))
		return PTR_ERR(fr);
	fm = mrct_frwr_mr_get(fr, req->handle);
	if (IS_ERR(fm))
		return PTR_ERR(fm);
	pair = mrct_pair_get(ctx, req->pair);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	err = mrct_frwr_check_map(fm, req, &map);
	if (err)
		return err;

	req->nents = map.nents;
	req->map_ret = mrct_frwr_map_sg(fm, &map, req->page_size);
	req->iova = map.iova;
	req->lkey = fm->mr->lkey;
	req->rkey = fm->mr->rkey;
	if (req->map_ret != map.nents)
		return 0;

	wr.key = mrct_frwr_wr_key(fm->mr, req->flags, req->key);
	req->lkey = fm->mr->lkey;
	req->rkey = fm->mr->rkey;
	wr.mr = fm->mr;
	wr.access = req->access;
	mrct_frwr_sync(ctx->ibdev, fm, &map, false);
	err = mrct_post_wait(ctx, pair, req->qp, &wr.wr, &req->post_err,
			     &req->bad_wr, &req->status);
	if (err)
		return err;
	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	if (req->status == IB_WC_SUCCESS) {
		fm->cur = map;
		fm->has_cur = true;
	}
	return 0;
}

#define MRCT_FRWR_REG_FLAGS	(MRCT_FRWR_KEY_NEXT | MRCT_FRWR_KEY_SET | \
				 MRCT_FRWR_RAW_KEY)

static int mrct_frwr_reg(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_frwr_reg req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.qp > 1 || req.flags & ~MRCT_FRWR_REG_FLAGS ||
	    hweight32(req.flags) > 1 || req.reserved)
		return -EINVAL;
	req.map_ret = 0;
	req.nents = 0;
	req.iova = 0;
	req.post_err = 0;
	req.bad_wr = MRCT_BAD_WR_NULL;
	req.status = MRCT_WC_NONE;
	req.qp_state[0] = MRCT_QPS_UNKNOWN;
	req.qp_state[1] = MRCT_QPS_UNKNOWN;

	return mrct_call_locked(ctx, mrct_frwr_reg_locked, &req, uarg);
}

/* LOCAL_INV and Send with Invalidate ------------------------------- */

/*
 * The peer's receive for a Send with Invalidate that reached it: the send
 * succeeded, or the responder refused the invalidation (its receive then
 * completes in error too). Other failures may leave the receive posted.
 */
static int mrct_frwr_inv_recv(struct mrct_ctx *ctx, struct mrct_pair *pair,
			      struct mrct_frwr_inv *req)
{
	struct ib_wc wc;
	int err;

	if (!(req->flags & MRCT_POST_WAIT_RECV) ||
	    (req->status != IB_WC_SUCCESS &&
	     req->status != IB_WC_REM_INV_REQ_ERR))
		return 0;
	err = mrct_wait_wc(ctx, pair->cq[1 - req->qp], 0, true, &wc);
	if (err) {
		pair->wedged = true;
		return err;
	}
	req->recv_status = wc.status;
	req->recv_wc_flags = wc.wc_flags;
	if (wc.wc_flags & IB_WC_WITH_INVALIDATE)
		req->recv_inv_rkey = wc.ex.invalidate_rkey;
	return 0;
}

static int mrct_frwr_inv_locked(struct mrct_ctx *ctx, struct mrct_frwr_inv *req)
{
	struct ib_send_wr wr = {
		.opcode = req->opcode,
		.ex.invalidate_rkey = req->key,
	};
	struct mrct_pair *pair;
	int err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, req->pair);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	err = mrct_post_wait(ctx, pair, req->qp, &wr, &req->post_err,
			     &req->bad_wr, &req->status);
	if (err)
		return err;
	err = mrct_frwr_inv_recv(ctx, pair, req);
	if (err)
		return err;
	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	return 0;
}

static int mrct_frwr_inv(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_frwr_inv req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.qp > 1 || req.reserved || req.flags & ~MRCT_POST_WAIT_RECV ||
	    (req.opcode != IB_WR_LOCAL_INV &&
	     req.opcode != IB_WR_SEND_WITH_INV) ||
	    (req.flags && req.opcode != IB_WR_SEND_WITH_INV))
		return -EINVAL;
	req.post_err = 0;
	req.bad_wr = MRCT_BAD_WR_NULL;
	req.status = MRCT_WC_NONE;
	req.recv_status = MRCT_WC_NONE;
	req.recv_wc_flags = 0;
	req.recv_inv_rkey = 0;
	req.qp_state[0] = MRCT_QPS_UNKNOWN;
	req.qp_state[1] = MRCT_QPS_UNKNOWN;

	return mrct_call_locked(ctx, mrct_frwr_inv_locked, &req, uarg);
}

/* Data through the key ------------------------------------------------ */

/**
 * mrct_frwr_rdma - RDMA WRITE or READ through an FRWR MR's key
 * @ctx: the context, locked
 * @fr: its FRWR state, for the staging buffer
 * @pair: the pair to post on
 * @qpi: the QP of @pair that posts
 * @map: the registration
 * @write: WRITE, else READ
 * @rkey: the key to use
 * @pos: first registration byte
 * @len: bytes from @pos
 * @seed: the pattern a WRITE sends, and a READ counts
 * @seed_old: the pattern the staging side holds before a READ
 * @out: the counts and the results
 *
 * RDMA WRITE (staging -> MR) or READ (MR -> staging) of registration
 * bytes [@pos, @pos + @len) through @rkey, a staging buffer's worth per
 * WR, stopping at the first WR that fails. The staging side holds @seed's
 * pattern for a WRITE and @seed_old's for a READ; for a READ, the bytes of
 * @seed that arrived are added to @out->eq_new and those still @seed_old
 * to @out->eq_old. @out->wrs counts the WRs that completed, @out->post_err
 * is the post's error, @out->status the last completion's.
 *
 * Return: 0, or mrct_post_wait()'s error (the pair is then wedged).
 */
int mrct_frwr_rdma(struct mrct_ctx *ctx, struct mrct_frwr *fr,
		   struct mrct_pair *pair, u32 qpi,
		   const struct mrct_frwr_map *map, bool write,
		   u32 rkey, u64 pos, u64 len, u32 seed, u32 seed_old,
		   struct mrct_frwr_xfer *out)
{
	struct ib_sge sge = {
		.addr = fr->stage_dma,
		.lkey = pair->qp[qpi]->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.rkey = rkey,
	};
	u32 n;
	int err;

	out->status = IB_WC_SUCCESS;
	while (len && out->status == IB_WC_SUCCESS) {
		n = min_t(u64, len, MRCT_FRWR_STAGING_SIZE);
		mrct_frwr_stage_fill(fr, pos, n, write ? seed : seed_old);
		ib_dma_sync_single_for_device(ctx->ibdev, fr->stage_dma, n,
					      DMA_BIDIRECTIONAL);
		sge.length = n;
		wr.remote_addr = map->iova + pos;
		wr.wr.send_flags = 0;
		err = mrct_post_wait(ctx, pair, qpi, &wr.wr,
				     &out->post_err, NULL, &out->status);
		if (err)
			return err;
		if (out->post_err)
			break;
		out->wrs++;
		if (!write) {
			ib_dma_sync_single_for_cpu(ctx->ibdev, fr->stage_dma,
						   n, DMA_BIDIRECTIONAL);
			out->eq_new += mrct_frwr_stage_count(fr, pos, n, seed);
			out->eq_old += mrct_frwr_stage_count(fr, pos, n,
							     seed_old);
		}
		pos += n;
		len -= n;
	}
	return 0;
}

/*
 * MRCT_FRWR_XFER: the CPU prepares the MR side (@seed_old for a WRITE's
 * target, @seed for a READ's source), the pair moves the bytes, and the
 * side written is counted.
 */
static int mrct_frwr_xfer_locked(struct mrct_ctx *ctx,
				 struct mrct_frwr_xfer *req)
{
	bool write = req->dir == MRCT_FRWR_WRITE;
	const struct mrct_frwr_map *map;
	struct mrct_frwr_mr *fm;
	struct mrct_pair *pair;
	struct mrct_frwr *fr;
	u64 end;
	u32 key;
	int err;

	lockdep_assert_held(&ctx->lock);
	fr = mrct_frwr_get(ctx);
	if (IS_ERR(fr))
		return PTR_ERR(fr);
	fm = mrct_frwr_mr_get(fr, req->handle);
	if (IS_ERR(fm))
		return PTR_ERR(fm);
	pair = mrct_pair_get(ctx, req->pair);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	/* Only the bytes of a registration the device took are known. */
	if (!fm->has_cur)
		return -ENODATA;
	map = &fm->cur;
	if (check_add_overflow(req->offset, req->length, &end) ||
	    end > map->length)
		return -EINVAL;

	key = req->flags & MRCT_FRWR_XFER_RAW_KEY ? req->key : fm->mr->rkey;
	mrct_frwr_cpu(fm, map, req->offset, req->length,
		      write ? req->seed_old : req->seed, false);
	mrct_frwr_sync(ctx->ibdev, fm, map, false);
	err = mrct_frwr_rdma(ctx, fr, pair, req->qp, map, write, key,
			     req->offset, req->length, req->seed,
			     req->seed_old, req);
	if (err)
		return err;
	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	if (!write)
		return 0;
	mrct_frwr_sync(ctx->ibdev, fm, map, true);
	req->eq_new = mrct_frwr_cpu(fm, map, req->offset, req->length,
				    req->seed, true);
	req->eq_old = mrct_frwr_cpu(fm, map, req->offset, req->length,
				    req->seed_old, true);
	return 0;
}

static int mrct_frwr_xfer(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_frwr_xfer req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.qp > 1 || req.dir > MRCT_FRWR_READ || req.reserved ||
	    req.flags & ~MRCT_FRWR_XFER_RAW_KEY ||
	    (!(req.flags & MRCT_FRWR_XFER_RAW_KEY) && req.key) ||
	    (u8)req.seed == (u8)req.seed_old)
		return -EINVAL;
	req.eq_new = 0;
	req.eq_old = 0;
	req.wrs = 0;
	req.post_err = 0;
	req.status = MRCT_WC_NONE;
	req.qp_state[0] = MRCT_QPS_UNKNOWN;
	req.qp_state[1] = MRCT_QPS_UNKNOWN;

	return mrct_call_locked(ctx, mrct_frwr_xfer_locked, &req, uarg);
}

/* Hooks --------------------------------------------------------------- */

/* The UAPI spells ib_verbs.h's values; keep them equal. */
static void mrct_frwr_check_uapi(void)
{
	BUILD_BUG_ON(MRCT_WR_LOCAL_INV != IB_WR_LOCAL_INV);
	BUILD_BUG_ON(MRCT_WR_SEND_WITH_INV != IB_WR_SEND_WITH_INV);
	BUILD_BUG_ON(MRCT_WC_MW_BIND_ERR != IB_WC_MW_BIND_ERR);
	BUILD_BUG_ON(MRCT_WC_WITH_INVALIDATE != IB_WC_WITH_INVALIDATE);
	BUILD_BUG_ON(MRCT_FRWR_STAGING_SIZE > SZ_1M);
	BUILD_BUG_ON(sizeof(struct mrct_frwr_alloc) != 40);
	BUILD_BUG_ON(sizeof(struct mrct_frwr_free) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_frwr_reg) != 96);
	BUILD_BUG_ON(sizeof(struct mrct_frwr_inv) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_frwr_xfer) != 88);
	BUILD_BUG_ON(sizeof(struct mrct_frwr_cycle) != 52);
	BUILD_BUG_ON(sizeof(struct mrct_frwr_bench) != 48);
}

static long mrct_frwr_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			    void __user *uarg)
{
	mrct_frwr_check_uapi();
	switch (cmd) {
	case MRCT_FRWR_ALLOC:
		return mrct_frwr_alloc(ctx, uarg);
	case MRCT_FRWR_FREE:
		return mrct_frwr_free(ctx, uarg);
	case MRCT_FRWR_REG:
		return mrct_frwr_reg(ctx, uarg);
	case MRCT_FRWR_INV:
		return mrct_frwr_inv(ctx, uarg);
	case MRCT_FRWR_XFER:
		return mrct_frwr_xfer(ctx, uarg);
	case MRCT_FRWR_CYCLE:
		return mrct_frwr_cycle(ctx, uarg);
	case MRCT_FRWR_BENCH:
		return mrct_frwr_bench(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/* Free every FRWR MR, their buffers and the staging buffer. */
static void mrct_frwr_unbind(struct mrct_ctx *ctx)
{
	struct mrct_frwr *fr = ctx->ext[MRCT_EXT_FRWR];
	struct mrct_frwr_mr *fm;
	unsigned long handle;

	lockdep_assert_held(&ctx->lock);
	if (!fr)
		return;
	xa_for_each(&fr->mrs, handle, fm) {
		xa_erase(&fr->mrs, handle);
		mrct_frwr_mr_free(ctx->ibdev, fm);
	}
	xa_destroy(&fr->mrs);
	ib_dma_unmap_single(ctx->ibdev, fr->stage_dma, MRCT_FRWR_STAGING_SIZE,
			    DMA_BIDIRECTIONAL);
	kfree(fr->stage);
	kfree(fr);
	ctx->ext[MRCT_EXT_FRWR] = NULL;
}

const struct mrct_ext mrct_frwr_ext = {
	.ioctl = mrct_frwr_ioctl,
	.unbind = mrct_frwr_unbind,
};
