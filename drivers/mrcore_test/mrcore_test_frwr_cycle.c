// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: FRWR cycles: many REG_MR + LOCAL_INV on FRWR MRs in a row.
 *
 * MRCT_FRWR_CYCLE (item 27) runs REG_MR, an RDMA WRITE through the new
 * key, a check of the bytes through the CPU and LOCAL_INV on one FRWR MR
 * of mrcore_test_frwr.c, again and again, with a page list that changes
 * every cycle; it stops at the first step that fails and says which.
 *
 * MRCT_FRWR_BENCH measures what a ULP pays per I/O: it keeps a window of
 * REG_MR + LOCAL_INV cycles in flight on MRs and pages of its own, made
 * and freed within the call, and busy-polls the CQ.
 *
 * Both post on a pair of the context and wait for their completions;
 * a wait that times out wedges the pair, as in the main file. Their
 * buffers, mappings and posting helpers are mrcore_test_frwr.c's, which
 * also hands them their ioctls.
 */
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/* WRs of one benchmark cycle: REG_MR and LOCAL_INV. */
#define MRCT_FRWR_CYCLE_WRS		2

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

/**
 * mrct_frwr_cycle - MRCT_FRWR_CYCLE: REG_MR, WRITE, check, LOCAL_INV
 * @ctx: the context
 * @uarg: a struct mrct_frwr_cycle, copied in and back
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_frwr_cycle(struct mrct_ctx *ctx, void __user *uarg)
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
		if (posting && mrct_bench_time_up(&polls, start, req->min_ns))
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
		/* Stop the clock at the reap of the last completion. */
		if (!inflight && !posting)
			break;
		if (n) {
			progress = jiffies;
		} else {
			err = mrct_frwr_bench_stop(progress);
			if (err)
				goto out_wedged;
		}
		cond_resched();
	}
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

/**
 * mrct_frwr_bench - MRCT_FRWR_BENCH: REG_MR + LOCAL_INV cycles per second
 * @ctx: the context
 * @uarg: a struct mrct_frwr_bench, copied in and back
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_frwr_bench(struct mrct_ctx *ctx, void __user *uarg)
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
