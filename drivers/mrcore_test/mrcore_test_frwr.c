// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: FRWR: REG_MR / LOCAL_INV through a QP pair, cycle benchmark.
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
 * main file. The benchmark keeps a window of REG_MR + LOCAL_INV cycles in
 * flight on MRs of its own and busy-polls the CQ.
 */
#include <linux/dma-direction.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/* Largest chunk of an FRWR MR's buffer: 2 MiB, the next vhca page size. */
#define MRCT_FRWR_MAX_CHUNK_SHIFT	21
/*
 * Polls of the benchmark's CQ between two reads of the clock. The VM's
 * clocksource is the HPET, whose every read is an emulated device access
 * (read_hpet was 23% of a perf -a profile of the benchmark when the loop
 * read it at each poll). The set time is overrun by at most one batch.
 */
#define MRCT_FRWR_CLOCK_POLLS	64
/* WRs of one benchmark cycle: REG_MR and LOCAL_INV. */
#define MRCT_FRWR_CYCLE_WRS		2

/**
 * struct mrct_frwr_map - where the pages of a registration come from
 * @first: buffer chunk of entry 0
 * @stride: entry i is chunk (@first + i * @stride) % nchunks
 * @offset: byte offset into the first chunk
 * @nents: scatterlist entries (chunks) the registration spans
 * @length: bytes from @offset
 * @iova: the MR's iova once mapped
 */
struct mrct_frwr_map {
	u32 first;
	u32 stride;
	u32 offset;
	u32 nents;
	u64 length;
	u64 iova;
};

/**
 * struct mrct_frwr_mr - an FRWR MR of a context and its buffer
 * @mr: from ib_alloc_mr(IB_MR_TYPE_MEM_REG)
 * @chunk_shift: log2 of a chunk's bytes
 * @nchunks: chunks in @pages and @dma
 * @pages: first page of each chunk (order @chunk_shift - PAGE_SHIFT)
 * @dma: each chunk's DMA address on the device
 * @sgl: @nchunks entries, filled for each ib_map_mr_sg()
 * @cur: mapping of the last REG_MR that completed successfully
 * @has_cur: @cur is set
 */
struct mrct_frwr_mr {
	struct ib_mr *mr;
	u32 chunk_shift;
	u32 nchunks;
	struct page **pages;
	u64 *dma;
	struct scatterlist *sgl;
	struct mrct_frwr_map cur;
	bool has_cur;
};

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

static u64 mrct_chunk_bytes(const struct mrct_frwr_mr *fm)
{
	return BIT_ULL(fm->chunk_shift);
}

static u32 mrct_frwr_chunk(const struct mrct_frwr_mr *fm,
			   const struct mrct_frwr_map *map, u32 ent)
{
	return (u32)(((u64)map->first + (u64)ent * map->stride) % fm->nchunks);
}

/* Buffer and MR ------------------------------------------------------- */

static void mrct_frwr_buf_free(struct ib_device *ibdev,
			       struct mrct_frwr_mr *fm)
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

/* Allocate and map every chunk; on failure the caller frees what is. */
static int mrct_frwr_buf_alloc(struct ib_device *ibdev,
			       struct mrct_frwr_mr *fm)
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

/* The context's FRWR state, created on first use. */
static struct mrct_frwr *mrct_frwr_get(struct mrct_ctx *ctx)
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

static struct mrct_frwr_mr *mrct_frwr_mr_get(struct mrct_frwr *fr, u32 handle)
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

/*
 * ib_map_mr_sg() over the chunks of @map, at @page_size. Returns what it
 * returned: @map->nents when every entry was mapped.
 */
static int mrct_frwr_map_sg(struct mrct_frwr_mr *fm, struct mrct_frwr_map *map,
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

/* The registration's chunks, as the device or the CPU is to see them. */
static void mrct_frwr_sync(struct ib_device *ibdev, struct mrct_frwr_mr *fm,
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

/*
 * Fill (@count false) or count the bytes of pattern @seed in (@count
 * true) registration bytes [@pos, @pos + @len) of @map, through the CPU.
 */
static u64 mrct_frwr_cpu(struct mrct_frwr_mr *fm,
			 const struct mrct_frwr_map *map, u64 pos, u64 len,
			 u32 seed, bool count)
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

/* The key of the REG_MR WR, after the variant update the caller asked. */
static u32 mrct_frwr_wr_key(struct ib_mr *mr, u32 flags, u32 key)
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
	if (check_add_overflow((u64)req->offset, req->length, &end))
		return -EINVAL;
	nents = DIV_ROUND_UP_ULL(end, chunk);
	if (nents > fm->nchunks)
		return -EINVAL;
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

/*
 * RDMA WRITE (staging -> MR) or READ (MR -> staging) of registration
 * bytes [@pos, @pos + @len) through @rkey, a staging buffer's worth per
 * WR, stopping at the first WR that fails. The staging side holds @seed's
 * pattern for a WRITE and @seed_old's for a READ; for a READ, the bytes of
 * @seed that arrived are added to *@eq_new and those still @seed_old to
 * *@eq_old. *@status is the last completion's.
 */
static int mrct_frwr_rdma(struct mrct_ctx *ctx, struct mrct_frwr *fr,
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

/* Item 27: REG_MR, use, LOCAL_INV on one MR ------------------------- */

/*
 * The page list of cycle @i: its first chunk, direction and length move
 * every cycle, so no two consecutive cycles map the same pages in the
 * same order. nchunks - 1 is coprime with nchunks: the descending list
 * repeats no chunk either.
 */
static void mrct_frwr_cycle_map(const struct mrct_frwr_mr *fm,
				const struct mrct_frwr_cycle *req, u32 i,
				struct mrct_frwr_map *map)
{
	u32 span = min(fm->nchunks, req->max_nents);
	u64 chunk = mrct_chunk_bytes(fm);
	u64 lo, last_end;

	map->first = (u32)(((u64)i * 7) % fm->nchunks);
	map->stride = (i & 1) && fm->nchunks > 1 ? fm->nchunks - 1 : 1;
	map->nents = 1 + (u32)(((u64)i * 13) % span);
	map->offset = (u32)(((u64)i * 0x1c8) & (chunk - 1) & ~7ULL);
	/* End in the last entry, past the offset when that is the first. */
	lo = map->nents == 1 ? map->offset + 1 : 1;
	last_end = lo + ((u64)i * 0x2f8) % (chunk - lo + 1);
	map->length = (map->nents - 1) * chunk + last_end - map->offset;
}

/* One cycle; on failure req->step, err and status say where and why. */
static int mrct_frwr_one_cycle(struct mrct_ctx *ctx, struct mrct_frwr *fr,
			       struct mrct_frwr_mr *fm, struct mrct_pair *pair,
			       struct mrct_frwr_cycle *req, u32 i)
{
	struct ib_reg_wr reg = { .wr.opcode = IB_WR_REG_MR };
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV };
	struct mrct_frwr_xfer x = {};
	struct mrct_frwr_map map;
	u32 seed = req->seed + i;
	int n, err;

	mrct_frwr_cycle_map(fm, req, i, &map);
	req->step = MRCT_FRWR_STEP_MAP;
	n = mrct_frwr_map_sg(fm, &map, mrct_chunk_bytes(fm));
	if (n != map.nents) {
		req->err = n < 0 ? n : -ERANGE;
		return 0;
	}

	req->step = MRCT_FRWR_STEP_REG;
	reg.mr = fm->mr;
	reg.key = mrct_frwr_wr_key(fm->mr, MRCT_FRWR_KEY_NEXT, 0);
	reg.access = req->access;
	mrct_frwr_sync(ctx->ibdev, fm, &map, false);
	err = mrct_post_wait(ctx, pair, req->qp, &reg.wr, &req->err,
			     NULL, &req->status);
	if (err || req->err || req->status != IB_WC_SUCCESS)
		return err;
	fm->cur = map;
	fm->has_cur = true;

	req->step = MRCT_FRWR_STEP_WRITE;
	mrct_frwr_cpu(fm, &map, 0, map.length, seed + 0x80, false);
	mrct_frwr_sync(ctx->ibdev, fm, &map, false);
	err = mrct_frwr_rdma(ctx, fr, pair, req->qp, &map, true, reg.key, 0,
			     map.length, seed, seed + 0x80, &x);
	req->err = x.post_err;
	req->status = x.status;
	if (err || req->err || req->status != IB_WC_SUCCESS)
		return err;

	req->step = MRCT_FRWR_STEP_VERIFY;
	mrct_frwr_sync(ctx->ibdev, fm, &map, true);
	if (mrct_frwr_cpu(fm, &map, 0, map.length, seed, true) != map.length)
		return 0;

	req->step = MRCT_FRWR_STEP_INV;
	inv.ex.invalidate_rkey = reg.key;
	err = mrct_post_wait(ctx, pair, req->qp, &inv, &req->err, NULL,
			     &req->status);
	if (err || req->err || req->status != IB_WC_SUCCESS)
		return err;
	req->step = MRCT_FRWR_STEP_NONE;
	return 0;
}

static int mrct_frwr_cycle_locked(struct mrct_ctx *ctx,
				  struct mrct_frwr_cycle *req)
{
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

	for (req->done = 0; req->done < req->cycles; req->done++) {
		err = mrct_frwr_one_cycle(ctx, fr, fm, pair, req, req->done);
		if (err)
			return err;
		if (req->step != MRCT_FRWR_STEP_NONE)
			break;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	req->key = fm->mr->rkey;
	return 0;
}

static int mrct_frwr_cycle(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_frwr_cycle req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.qp > 1 || !req.cycles || req.cycles > MRCT_FRWR_MAX_CYCLES ||
	    !req.max_nents || req.reserved)
		return -EINVAL;
	req.done = 0;
	req.step = MRCT_FRWR_STEP_NONE;
	req.err = 0;
	req.status = MRCT_WC_NONE;
	req.key = 0;

	return mrct_call_locked(ctx, mrct_frwr_cycle_locked, &req, uarg);
}

/* Benchmark: REG_MR + LOCAL_INV cycles ----------------------------- */

/**
 * struct mrct_frwr_slot - one MR of the benchmark's window
 * @mr: the MR
 * @reg: its REG_MR
 * @inv: its LOCAL_INV, chained after @reg
 */
struct mrct_frwr_slot {
	struct ib_mr *mr;
	struct ib_reg_wr reg;
	struct ib_send_wr inv;
};

/**
 * struct mrct_frwr_bench_work - what one MRCT_FRWR_BENCH works with
 * @req: the request, copied in and out
 * @buf: @req.npages pages, each mapped, and a scatterlist (@buf.sgl)
 *	with one entry a page, mapped into the MR of each cycle
 * @slot: the window's MRs, used round-robin
 * @wc: completions polled at once
 */
struct mrct_frwr_bench_work {
	struct mrct_frwr_bench req;
	struct mrct_frwr_mr buf;
	struct mrct_frwr_slot slot[MRCT_QP_DEPTH / MRCT_FRWR_CYCLE_WRS];
	struct ib_wc wc[MRCT_QP_DEPTH];
};

static void mrct_frwr_bench_free(struct ib_device *ibdev,
				 struct mrct_frwr_bench_work *w)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(w->slot); i++)
		if (w->slot[i].mr)
			ib_dereg_mr(w->slot[i].mr);
	if (w->buf.pages)
		mrct_frwr_buf_free(ibdev, &w->buf);
	kfree(w->buf.dma);
	kfree(w->buf.pages);
	kfree(w->buf.sgl);
}

/* Pages, their mappings, a scatterlist over them, the window's MRs. */
static int mrct_frwr_bench_setup(struct mrct_ctx *ctx, struct ib_pd *pd,
				 struct mrct_frwr_bench_work *w)
{
	u32 n = w->req.npages, i;
	struct scatterlist *sg;
	struct ib_mr *mr;
	int err;

	w->buf.chunk_shift = PAGE_SHIFT;
	w->buf.nchunks = n;
	w->buf.pages = kcalloc(n, sizeof(*w->buf.pages), GFP_KERNEL);
	w->buf.dma = kcalloc(n, sizeof(*w->buf.dma), GFP_KERNEL);
	w->buf.sgl = kcalloc(n, sizeof(*w->buf.sgl), GFP_KERNEL);
	if (!w->buf.pages || !w->buf.dma || !w->buf.sgl)
		return -ENOMEM;
	err = mrct_frwr_buf_alloc(ctx->ibdev, &w->buf);
	if (err)
		return err;
	sg_init_table(w->buf.sgl, n);
	for_each_sg(w->buf.sgl, sg, n, i) {
		sg_set_page(sg, w->buf.pages[i], PAGE_SIZE, 0);
		sg_dma_address(sg) = w->buf.dma[i];
		sg_dma_len(sg) = PAGE_SIZE;
	}

	for (i = 0; i < w->req.depth; i++) {
		mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, n);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		w->slot[i].mr = mr;
		w->slot[i].reg.wr.opcode = IB_WR_REG_MR;
		w->slot[i].reg.wr.send_flags = IB_SEND_SIGNALED;
		w->slot[i].reg.wr.next = &w->slot[i].inv;
		w->slot[i].reg.mr = mr;
		w->slot[i].reg.access = IB_ACCESS_LOCAL_WRITE |
					IB_ACCESS_REMOTE_READ |
					IB_ACCESS_REMOTE_WRITE;
		w->slot[i].inv.opcode = IB_WR_LOCAL_INV;
		w->slot[i].inv.send_flags = IB_SEND_SIGNALED;
	}
	return 0;
}

/*
 * What a ULP does per I/O: a new key variant, the page list mapped, then
 * REG_MR and LOCAL_INV posted together. Returns 0 or the post's error
 * (the pair is then stopped; nothing of the slot was taken, or all).
 */
static int mrct_frwr_bench_post(struct mrct_pair *pair, struct ib_qp *qp,
				struct mrct_frwr_bench_work *w,
				struct mrct_frwr_slot *s)
{
	const struct ib_send_wr *bad = NULL;
	int n, err;

	ib_update_fast_reg_key(s->mr, ib_inc_rkey(s->mr->rkey) & 0xff);
	n = ib_map_mr_sg(s->mr, w->buf.sgl, w->req.npages, NULL, PAGE_SIZE);
	if (n != w->req.npages)
		return n < 0 ? n : -ERANGE;
	s->reg.key = s->mr->rkey;
	s->inv.ex.invalidate_rkey = s->mr->rkey;
	s->reg.wr.wr_id = pair->next_wr_id++;
	s->inv.wr_id = pair->next_wr_id++;
	err = ib_post_send(qp, &s->reg.wr, &bad);
	/* A chain taken in part: its REG_MR completes, then nothing more. */
	if (err && bad == &s->inv)
		pair->wedged = true;
	return err;
}

/* Why a wait for completions must end, or 0. */
static int mrct_frwr_bench_stop(unsigned long progress)
{
	if (time_after(jiffies, progress + msecs_to_jiffies(MRCT_QP_WAIT_MS)))
		return -ETIMEDOUT;
	if (fatal_signal_pending(current))
		return -EINTR;
	return 0;
}

/*
 * Count the completions polled: a cycle is done when its LOCAL_INV (odd
 * wr_id from @first_id) completes, and counts when all went well. Others'
 * completions (before @first_id, receives) are skipped.
 */
static u32 mrct_frwr_bench_reap(struct mrct_frwr_bench_work *w,
				struct mrct_pair *pair, u64 first_id, int n,
				bool *posting)
{
	struct mrct_frwr_bench *req = &w->req;
	u32 done = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (w->wc[i].wr_id < first_id ||
		    w->wc[i].wr_id >= pair->next_wr_id)
			continue;
		if (w->wc[i].status != IB_WC_SUCCESS) {
			if (req->status == IB_WC_SUCCESS)
				req->status = w->wc[i].status;
			*posting = false;
		}
		if (!((w->wc[i].wr_id - first_id) & 1))
			continue;
		done++;
		if (req->status == IB_WC_SUCCESS)
			req->cycles++;
	}
	return done;
}

/*
 * Keep @depth cycles in flight until min_ns has passed, then collect
 * those still in flight. Slots are reused in posting order, which is the
 * order the send queue completes them in.
 */
static int mrct_frwr_bench_loop(struct mrct_ctx *ctx, struct mrct_pair *pair,
				struct mrct_frwr_bench_work *w)
{
	struct mrct_frwr_bench *req = &w->req;
	struct ib_qp *qp = pair->qp[req->qp];
	struct ib_cq *cq = pair->cq[req->qp];
	u64 first_id = pair->next_wr_id, start;
	unsigned long progress = jiffies;
	u32 inflight = 0, next = 0, polls = 0;
	bool posting = true;
	int n, err;

	start = ktime_get_ns();
	for (;;) {
		/* The clock once a batch of polls: see MRCT_FRWR_CLOCK_POLLS. */
		if (posting && !(++polls % MRCT_FRWR_CLOCK_POLLS) &&
		    ktime_get_ns() - start >= req->min_ns)
			posting = false;
		while (posting && inflight < req->depth) {
			err = mrct_frwr_bench_post(pair, qp, w, &w->slot[next]);
			if (err) {
				req->post_err = err;
				posting = false;
				break;
			}
			next = (next + 1) % req->depth;
			inflight++;
		}
		if (!inflight)
			break;

		n = ib_poll_cq(cq, ARRAY_SIZE(w->wc), w->wc);
		if (n < 0) {
			err = n;
			goto out_wedged;
		}
		inflight -= mrct_frwr_bench_reap(w, pair, first_id, n, &posting);
		if (n) {
			progress = jiffies;
		} else {
			err = mrct_frwr_bench_stop(progress);
			if (err)
				goto out_wedged;
		}
		cond_resched();
	}
	/* The last completion was reaped by the poll before. */
	req->elapsed_ns = ktime_get_ns() - start;
	return 0;

out_wedged:
	/* WRs still name the window's MRs: keep the pair from more work. */
	pair->wedged = true;
	return err;
}

static int mrct_frwr_bench_locked(struct mrct_ctx *ctx,
				  struct mrct_frwr_bench_work *w)
{
	struct mrct_pair *pair;
	int err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, w->req.pair);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	err = mrct_frwr_bench_setup(ctx, pair->qp[w->req.qp]->pd, w);
	if (!err)
		err = mrct_frwr_bench_loop(ctx, pair, w);
	/*
	 * A wedged pair's WRs may still name the MRs; they go anyway, as the
	 * main file's MRs would. A timeout here means a stuck engine.
	 */
	mrct_frwr_bench_free(ctx->ibdev, w);
	return err;
}

static int mrct_frwr_bench(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_frwr_bench_work *w;
	struct mrct_frwr_bench *req;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	req = &w->req;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		err = -EFAULT;
		goto out_free;
	}
	if (req->qp > 1 || !req->npages ||
	    req->npages > MRCT_FRWR_BENCH_MAX_PAGES || !req->depth ||
	    req->depth > ARRAY_SIZE(w->slot) ||
	    req->min_ns > MRCT_BENCH_MAX_NS) {
		err = -EINVAL;
		goto out_free;
	}
	req->cycles = 0;
	req->elapsed_ns = 0;
	req->status = IB_WC_SUCCESS;
	req->post_err = 0;

	mutex_lock(&ctx->lock);
	if (ctx->ibdev)
		err = mrct_frwr_bench_locked(ctx, w);
	else
		err = -ENODEV;
	mutex_unlock(&ctx->lock);

	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free:
	kfree(w);
	return err;
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
