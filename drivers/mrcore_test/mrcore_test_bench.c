// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: the benchmark calls.
 *
 * They measure the data path's copy rate beside a plain memcpy() in the
 * same kernel: MRCT_BENCH_MEMCPY copies between kernel buffers in a loop,
 * MRCT_BENCH_WRITE keeps a pair's send queue full of RDMA WRITEs between
 * MRs for a set time, busy-polling the CQ. They report counts and times;
 * rates and ratios are the caller's.
 */
#include <linux/compiler.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/**
 * mrct_bench_memcpy - MRCT_BENCH_MEMCPY
 * @ctx: the file's context, not used: no device is needed
 * @uarg: struct mrct_bench_memcpy
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_bench_memcpy(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_bench_memcpy req;
	u64 start, copies = 0;
	u32 rounds = 0;
	void *src, *dst;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!req.length || req.length > MRCT_BENCH_MAX_LEN ||
	    req.min_ns > MRCT_BENCH_MAX_NS)
		return -EINVAL;

	src = kvmalloc(req.length, GFP_KERNEL);
	dst = kvmalloc(req.length, GFP_KERNEL);
	if (!src || !dst) {
		err = -ENOMEM;
		goto out_free;
	}
	memset(src, 0x5a, req.length);
	memset(dst, 0, req.length);

	start = ktime_get_ns();
	do {
		memcpy(dst, src, req.length);
		/* Each copy is a real one: the compiler may not merge them. */
		barrier_data(dst);
		copies++;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out_free;
		}
		cond_resched();
	} while (!mrct_bench_time_up(&rounds, start, req.min_ns));

	req.copies = copies;
	req.elapsed_ns = ktime_get_ns() - start;
	if (copy_to_user(uarg, &req, sizeof(req)))
		err = -EFAULT;
out_free:
	kvfree(dst);
	kvfree(src);
	return err;
}

/**
 * struct mrct_bench_work - what one MRCT_BENCH_WRITE works with
 * @req: the request, copied in and out
 * @sge: the gather entry every WR shares
 * @wr: WRs, chained afresh for each post (the driver copies them)
 * @wc: completions polled at once
 */
struct mrct_bench_work {
	struct mrct_bench_write req;
	struct ib_sge sge;
	struct ib_rdma_wr wr[MRCT_QP_DEPTH];
	struct ib_wc wc[MRCT_QP_DEPTH];
};

/*
 * Post up to @n WRs, chained; returns how many the driver took. A post
 * error stops the benchmark: it is recorded in @w->req.post_err.
 */
static u32 mrct_bench_post(struct mrct_pair *pair, struct ib_qp *qp,
			   struct mrct_bench_work *w, u32 n)
{
	const struct ib_send_wr *bad = NULL;
	u32 i;
	int err;

	for (i = 0; i < n; i++) {
		w->wr[i].wr.wr_id = pair->next_wr_id++ & ~MRCT_RECV_WRID;
		w->wr[i].wr.next = i + 1 < n ? &w->wr[i + 1].wr : NULL;
	}
	err = ib_post_send(qp, &w->wr[0].wr, &bad);
	if (!err)
		return n;
	w->req.post_err = err;
	for (i = 0; i < n; i++)
		if (bad == &w->wr[i].wr)
			return i;
	return 0;
}

/* Why a wait for completions must end, or 0. */
static int mrct_bench_stop(struct mrct_ctx *ctx, unsigned long progress)
{
	if (time_after(jiffies, progress + msecs_to_jiffies(MRCT_QP_WAIT_MS)))
		return -ETIMEDOUT;
	if (fatal_signal_pending(current))
		return -EINTR;
	if (mrct_dev_removing(ctx))
		return -ENODEV;
	return 0;
}

/*
 * Keep @depth WRs in flight until min_ns has passed, then collect those
 * still in flight. The CQ is busy-polled, yielding when the scheduler
 * asks, as a user-space bandwidth test would.
 */
static int mrct_bench_write_locked(struct mrct_ctx *ctx,
				   struct mrct_bench_work *w)
{
	struct mrct_bench_write *req = &w->req;
	unsigned long progress = jiffies;
	u32 inflight = 0, polls = 0, i;
	u64 first_id, start;
	struct mrct_pair *pair;
	bool posting = true;
	struct ib_qp *qp;
	struct ib_cq *cq;
	int n, err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, req->handle);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	if (!mrct_user_lkey_ok(ctx->ibdev, req->lkey))
		return -EPERM;
	qp = pair->qp[req->qp];
	cq = pair->cq[req->qp];

	w->sge.addr = req->local_addr;
	w->sge.length = req->length;
	w->sge.lkey = req->lkey;
	for (i = 0; i < req->depth; i++) {
		w->wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		w->wr[i].wr.send_flags = IB_SEND_SIGNALED;
		w->wr[i].wr.sg_list = &w->sge;
		w->wr[i].wr.num_sge = 1;
		w->wr[i].remote_addr = req->remote_addr;
		w->wr[i].rkey = req->rkey;
	}
	first_id = pair->next_wr_id;

	start = ktime_get_ns();
	for (;;) {
		if (posting && mrct_bench_time_up(&polls, start, req->min_ns))
			posting = false;
		if (posting && inflight < req->depth) {
			inflight += mrct_bench_post(pair, qp, w,
						    req->depth - inflight);
			if (req->post_err)
				posting = false;
		}
		if (!inflight && !posting)
			break;

		n = ib_poll_cq(cq, req->depth, w->wc);
		if (n < 0) {
			err = n;
			goto out_wedged;
		}
		for (i = 0; i < n; i++) {
			/* Not ours: a receive, or late work of before. */
			if (w->wc[i].wr_id & MRCT_RECV_WRID ||
			    w->wc[i].wr_id < first_id)
				continue;
			inflight--;
			if (w->wc[i].status == IB_WC_SUCCESS) {
				req->wrs++;
				continue;
			}
			if (req->status == IB_WC_SUCCESS)
				req->status = w->wc[i].status;
			posting = false;
		}
		/* Stop the clock at the reap of the last completion. */
		if (!inflight && !posting)
			break;
		if (n) {
			progress = jiffies;
		} else {
			err = mrct_bench_stop(ctx, progress);
			if (err)
				goto out_wedged;
		}
		cond_resched();
	}
	req->elapsed_ns = ktime_get_ns() - start;
	return 0;

out_wedged:
	/* WRs are still in flight: keep their completions from others. */
	pair->wedged = true;
	return err;
}

/**
 * mrct_bench_write - MRCT_BENCH_WRITE
 * @ctx: the file's context
 * @uarg: struct mrct_bench_write
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_bench_write(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_bench_work *w;
	struct mrct_bench_write *req;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	req = &w->req;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		err = -EFAULT;
		goto out_free;
	}
	if (req->qp > 1 || !req->length || !req->depth ||
	    req->depth > MRCT_QP_DEPTH || req->min_ns > MRCT_BENCH_MAX_NS) {
		err = -EINVAL;
		goto out_free;
	}
	req->wrs = 0;
	req->elapsed_ns = 0;
	req->status = IB_WC_SUCCESS;
	req->post_err = 0;

	mutex_lock(&ctx->lock);
	err = mrct_bench_write_locked(ctx, w);
	mutex_unlock(&ctx->lock);

	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free:
	kfree(w);
	return err;
}
