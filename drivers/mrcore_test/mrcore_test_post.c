// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: MRCT_QP_POST and MRCT_QP_POST_RECV, one WR on a pair.
 *
 * MRCT_QP_POST builds a send WR as the caller gave it (opcode, flags,
 * SGEs, remote address and key; inline data bounced through a kernel
 * buffer), posts it signaled, waits for its completion and, if asked, for
 * the peer's receive, and reports the post error, the completions and both
 * QPs' states. MRCT_QP_POST_RECV posts one receive and does not wait.
 */
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/* The WR, in the largest of the containers a driver may take it from. */
union mrct_send_wr {
	struct ib_send_wr wr;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
	struct ib_ud_wr ud;
	struct ib_reg_wr reg;
};

/**
 * struct mrct_post_work - what one MRCT_QP_POST builds
 * @req: the request, copied in and out
 * @wr: the WR
 * @sge: its gather list
 * @wc: the completion polled
 * @inline_buf: kernel copy of inline data, or NULL
 */
struct mrct_post_work {
	struct mrct_qp_post req;
	union mrct_send_wr wr;
	struct ib_sge sge[MRCT_QP_MAX_SGE];
	struct ib_wc wc;
	u8 *inline_buf;
};

/*
 * IB_SEND_INLINE: the SGEs name the caller's memory; the driver copies
 * the bytes at post time from kernel addresses, so bounce them.
 */
static int mrct_inline_copy(struct mrct_post_work *w)
{
	const struct mrct_sge *usge = w->req.sge;
	u64 total = 0, off = 0;
	u32 i;

	for (i = 0; i < w->req.num_sge; i++)
		total += usge[i].length;
	if (total > MRCT_QP_MAX_INLINE)
		return -EINVAL;
	w->inline_buf = kmalloc(max_t(u64, total, 1), GFP_KERNEL);
	if (!w->inline_buf)
		return -ENOMEM;
	for (i = 0; i < w->req.num_sge; i++) {
		if (copy_from_user(w->inline_buf + off,
				   u64_to_user_ptr(usge[i].addr),
				   usge[i].length))
			return -EFAULT;
		w->sge[i].addr = (uintptr_t)(w->inline_buf + off);
		w->sge[i].length = usge[i].length;
		w->sge[i].lkey = usge[i].lkey;
		off += usge[i].length;
	}
	return 0;
}

static bool mrct_opcode_is_atomic(u32 opcode)
{
	switch (opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return true;
	default:
		return false;
	}
}

/* Build the WR of @w->req, opcode and all, as the caller gave it. */
static int mrct_build_send_wr(struct mrct_post_work *w)
{
	struct mrct_qp_post *req = &w->req;
	struct ib_send_wr *wr = &w->wr.wr;
	u32 i;
	int err;

	/*
	 * Any opcode goes to the driver as given, unknown ones included (the
	 * tests check the driver refuses them), except those whose WR is a
	 * container this module does not build: a driver reads an ib_reg_wr
	 * (its MR) or its own bind WR behind them. They have their own
	 * ioctls (MRCT_FRWR_*, MRCT_MW_*).
	 */
	if (req->opcode == IB_WR_REG_MR || req->opcode == IB_WR_REG_MR_INTEGRITY ||
	    req->opcode == IB_WR_BIND_MW)
		return -EINVAL;

	if (req->send_flags & MRCT_SEND_INLINE) {
		err = mrct_inline_copy(w);
		if (err)
			return err;
	} else {
		for (i = 0; i < req->num_sge; i++) {
			w->sge[i].addr = req->sge[i].addr;
			w->sge[i].length = req->sge[i].length;
			w->sge[i].lkey = req->sge[i].lkey;
		}
	}
	wr->opcode = req->opcode;
	wr->send_flags = req->send_flags | IB_SEND_SIGNALED;
	wr->sg_list = w->sge;
	wr->num_sge = req->num_sge;
	if (mrct_opcode_is_atomic(req->opcode)) {
		w->wr.atomic.remote_addr = req->remote_addr;
		w->wr.atomic.compare_add = req->compare_add;
		w->wr.atomic.swap = req->swap;
		w->wr.atomic.compare_add_mask = ~0ULL;
		w->wr.atomic.swap_mask = ~0ULL;
		w->wr.atomic.rkey = req->rkey;
	} else {
		w->wr.rdma.remote_addr = req->remote_addr;
		w->wr.rdma.rkey = req->rkey;
	}
	return 0;
}

/* Collect the peer's receive for a SEND that completed well. */
static int mrct_wait_recv(struct mrct_ctx *ctx, struct mrct_pair *pair,
			  struct mrct_post_work *w)
{
	struct mrct_qp_post *req = &w->req;
	int err;

	if (!(req->flags & MRCT_POST_WAIT_RECV) ||
	    req->status != IB_WC_SUCCESS)
		return 0;
	err = mrct_wait_wc(ctx, pair->cq[1 - req->qp], 0, true, &w->wc);
	if (err)
		return err;
	req->recv_status = w->wc.status;
	req->recv_opcode = w->wc.opcode;
	req->recv_byte_len = w->wc.byte_len;
	return 0;
}

static int mrct_qp_post_locked(struct mrct_ctx *ctx, struct mrct_post_work *w)
{
	struct mrct_qp_post *req = &w->req;
	const struct ib_send_wr *bad = NULL;
	struct mrct_pair *pair;
	struct ib_qp *qp;
	int err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, req->handle);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	qp = pair->qp[req->qp];
	/* Inline data names no key. */
	if (!(req->send_flags & MRCT_SEND_INLINE) &&
	    !mrct_user_sges_ok(ctx->ibdev, w->sge, req->num_sge))
		return -EPERM;

	w->wr.wr.wr_id = pair->next_wr_id++ & ~MRCT_RECV_WRID;
	req->post_err = ib_post_send(qp, &w->wr.wr, &bad);
	req->bad_wr = mrct_bad_wr(bad, &w->wr.wr);
	if (req->post_err) {
		mrct_qp_states(pair, req->qp, req->status, req->qp_state);
		return 0;
	}

	err = mrct_wait_wc(ctx, pair->cq[req->qp], w->wr.wr.wr_id, false,
			   &w->wc);
	if (err)
		goto out_wedged;
	req->status = w->wc.status;
	req->wc_opcode = w->wc.opcode;
	req->byte_len = w->wc.byte_len;
	req->vendor_err = w->wc.vendor_err;
	err = mrct_wait_recv(ctx, pair, w);
	if (err)
		goto out_wedged;

	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	return 0;

out_wedged:
	/* The WR may still complete: keep its late completion from others. */
	pair->wedged = true;
	return err;
}

/**
 * mrct_qp_post - MRCT_QP_POST
 * @ctx: the file's context
 * @uarg: struct mrct_qp_post
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_qp_post(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_post_work *w;
	struct mrct_qp_post *req;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	req = &w->req;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		err = -EFAULT;
		goto out_free;
	}
	if (req->qp > 1 || req->num_sge > MRCT_QP_MAX_SGE ||
	    req->send_flags & ~MRCT_SEND_FLAGS ||
	    req->flags & ~MRCT_POST_FLAGS ||
	    req->reserved[0] || req->reserved[1]) {
		err = -EINVAL;
		goto out_free;
	}
	req->post_err = 0;
	req->bad_wr = MRCT_BAD_WR_NULL;
	req->status = MRCT_WC_NONE;
	req->recv_status = MRCT_WC_NONE;
	req->wc_opcode = 0;
	req->byte_len = 0;
	req->vendor_err = 0;
	req->recv_opcode = 0;
	req->recv_byte_len = 0;
	req->qp_state[0] = MRCT_QPS_UNKNOWN;
	req->qp_state[1] = MRCT_QPS_UNKNOWN;
	err = mrct_build_send_wr(w);
	if (err)
		goto out_free;

	mutex_lock(&ctx->lock);
	err = mrct_qp_post_locked(ctx, w);
	mutex_unlock(&ctx->lock);

	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free:
	kfree(w->inline_buf);
	kfree(w);
	return err;
}

/**
 * mrct_qp_post_recv - MRCT_QP_POST_RECV
 * @ctx: the file's context
 * @uarg: struct mrct_qp_recv
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_qp_post_recv(struct mrct_ctx *ctx, void __user *uarg)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr wr = {};
	struct mrct_qp_recv *req;
	struct mrct_pair *pair;
	struct ib_sge *sge;
	u32 i;
	int err;

	req = memdup_user(uarg, sizeof(*req));
	if (IS_ERR(req))
		return PTR_ERR(req);
	if (req->qp > 1 || req->num_sge > MRCT_QP_MAX_SGE || req->reserved) {
		err = -EINVAL;
		goto out_free_req;
	}
	sge = kcalloc(MRCT_QP_MAX_SGE, sizeof(*sge), GFP_KERNEL);
	if (!sge) {
		err = -ENOMEM;
		goto out_free_req;
	}
	for (i = 0; i < req->num_sge; i++) {
		sge[i].addr = req->sge[i].addr;
		sge[i].length = req->sge[i].length;
		sge[i].lkey = req->sge[i].lkey;
	}

	mutex_lock(&ctx->lock);
	pair = mrct_pair_get(ctx, req->handle);
	if (IS_ERR(pair)) {
		err = PTR_ERR(pair);
		goto out_unlock;
	}
	if (!mrct_user_sges_ok(ctx->ibdev, sge, req->num_sge)) {
		err = -EPERM;
		goto out_unlock;
	}
	wr.wr_id = MRCT_RECV_WRID | pair->next_wr_id++;
	wr.sg_list = sge;
	wr.num_sge = req->num_sge;
	req->post_err = ib_post_recv(pair->qp[req->qp], &wr, &bad);
	req->bad_wr = mrct_bad_wr(bad, &wr);
	err = 0;
out_unlock:
	mutex_unlock(&ctx->lock);
	kfree(sge);
	if (!err && copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out_free_req:
	kfree(req);
	return err;
}
