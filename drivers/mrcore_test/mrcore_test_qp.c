// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: loopback RC pairs, the harness of the data-path tests.
 *
 * A pair is two QPs on one PD of the context, connected to each other by
 * hand over the port's RoCE v2 GID, with CQs the module polls itself
 * (MRCT_QP_CREATE, MRCT_QP_DESTROY). One WR is posted and waited for at a
 * time, with a bounded wait (MRCT_QP_WAIT_MS), so a stuck engine fails a
 * test instead of hanging the VM; a wait that times out wedges the pair.
 * Only standard kernel verbs are used: vhca and rxe run the same cases.
 *
 * In reading order: building a pair (path, QPs, connection), the create
 * and destroy calls, then what the posting files share: the pair lookup,
 * the completion wait, the QP states after a completion.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/* Loopback RC pairs: both directions use these. */
#define MRCT_QP_PSN		0
#define MRCT_QP_RD_ATOM		4
#define MRCT_QP_MIN_RNR_TIMER	12	/* 0.64 ms */
#define MRCT_QP_TIMEOUT		14	/* 4.096 us * 2^14 = 67 ms */
#define MRCT_QP_RETRY		7
#define MRCT_QP_RNR_RETRY	7	/* infinite: bounded by our wait */
#define MRCT_QP_HOP_LIMIT	64
/* CQ slots: every send and receive of the QP, plus flushes. */
#define MRCT_CQ_DEPTH		(4 * MRCT_QP_DEPTH)
/*
 * After an error completion: how long to wait for the QP to reach ERR. It
 * bounds a failure only: vhca is in ERR before the completion can be
 * polled, rxe moves the QP right after posting it (rxe_completer()).
 */
#define MRCT_QP_ERR_WAIT_MS	60000

/* Where a pair's QPs send to: their own port's RoCE v2 IPv4 GID. */
struct mrct_path {
	u32 port;
	u32 gid_index;
	union ib_gid gid;
	u8 dmac[ETH_ALEN];
};

/* Building a pair ------------------------------------------------------- */

/* QP events change nothing here: the tests read completions and states. */
static void mrct_qp_event(struct ib_event *event, void *context)
{
	ibdev_dbg(event->device, "QP 0x%x: %s\n", event->element.qp->qp_num,
		  ib_event_msg(event->event));
}

/*
 * The first RoCE v2 GID of the first port that maps an IPv4 address, and
 * the MAC of its netdev: a kernel caller of modify_qp passes a resolved
 * destination MAC, and a loopback pair sends to its own port.
 */
static int mrct_find_path(struct ib_device *ibdev, struct mrct_path *path)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int i, err;

	path->port = rdma_start_port(ibdev);
	if (!rdma_protocol_roce(ibdev, path->port))
		return -EOPNOTSUPP;
	err = ib_query_port(ibdev, path->port, &pattr);
	if (err)
		return err;
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(ibdev, path->port, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw)) {
			path->gid_index = i;
			path->gid = attr->gid;
			err = rdma_read_gid_l2_fields(attr, NULL, path->dmac);
			rdma_put_gid_attr(attr);
			return err;
		}
		rdma_put_gid_attr(attr);
	}
	return -EADDRNOTAVAIL;
}

/* An RC QP on @cq; @cap in: what to ask for, out: what was granted. */
static struct ib_qp *mrct_create_qp(struct ib_pd *pd, struct ib_cq *cq,
				    struct ib_qp_cap *cap)
{
	struct ib_qp_init_attr init = {
		.event_handler = mrct_qp_event,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = *cap,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp;

	qp = ib_create_qp(pd, &init);
	if (!IS_ERR(qp))
		*cap = init.cap;
	return qp;
}

/* RESET -> INIT -> RTR -> RTS, sending to @peer over @path. */
static int mrct_connect_qp(struct ib_qp *qp, struct ib_qp *peer,
			   struct mrct_path *path, int access)
{
	struct ib_device *ibdev = qp->device;
	struct ib_qp_attr attr = {};
	int err;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = path->port;
	attr.qp_access_flags = access;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = peer->qp_num;
	attr.rq_psn = MRCT_QP_PSN;
	attr.max_dest_rd_atomic = min_t(int, ibdev->attrs.max_qp_rd_atom,
					MRCT_QP_RD_ATOM);
	attr.min_rnr_timer = MRCT_QP_MIN_RNR_TIMER;
	attr.ah_attr.type = rdma_ah_find_type(ibdev, path->port);
	rdma_ah_set_port_num(&attr.ah_attr, path->port);
	rdma_ah_set_grh(&attr.ah_attr, &path->gid, 0, path->gid_index,
			MRCT_QP_HOP_LIMIT, 0);
	memcpy(attr.ah_attr.roce.dmac, path->dmac, ETH_ALEN);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = MRCT_QP_TIMEOUT;
	attr.retry_cnt = MRCT_QP_RETRY;
	attr.rnr_retry = MRCT_QP_RNR_RETRY;
	attr.sq_psn = MRCT_QP_PSN;
	attr.max_rd_atomic = min_t(int, ibdev->attrs.max_qp_init_rd_atom,
				   MRCT_QP_RD_ATOM);
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/**
 * mrct_pair_free - destroy what there is of a pair, and free it
 * @ctx: the pair's context, bound and locked
 * @pair: the pair, out of @ctx->pairs
 *
 * In any QP state: a QP still holding WRs is destroyed as it is
 * (draining could wait for an engine that is stuck), then the CQs.
 */
void mrct_pair_free(struct mrct_ctx *ctx, struct mrct_pair *pair)
{
	int i, err;

	for (i = 0; i < 2; i++) {
		if (!pair->qp[i])
			continue;
		err = ib_destroy_qp(pair->qp[i]);
		if (err)
			ibdev_warn(ctx->ibdev, "QP 0x%x: destroy failed: %d\n",
				   pair->qp[i]->qp_num, err);
	}
	for (i = 0; i < 2; i++)
		if (pair->cq[i])
			ib_free_cq(pair->cq[i]);
	kfree(pair);
}

/* Two CQs, two QPs, connected; on failure the caller frees what is built. */
static int mrct_pair_build(struct mrct_ctx *ctx, struct mrct_pair *pair,
			   struct mrct_qp_create *req, struct mrct_path *path)
{
	struct ib_qp_cap cap;
	struct ib_qp *qp;
	struct ib_cq *cq;
	int i, err;

	for (i = 0; i < 2; i++) {
		cq = ib_alloc_cq(ctx->ibdev, pair, MRCT_CQ_DEPTH, 0,
				 IB_POLL_DIRECT);
		if (IS_ERR(cq))
			return PTR_ERR(cq);
		pair->cq[i] = cq;
	}
	for (i = 0; i < 2; i++) {
		cap = (struct ib_qp_cap) {
			.max_send_wr = MRCT_QP_DEPTH,
			.max_recv_wr = MRCT_QP_DEPTH,
			.max_send_sge = req->max_send_sge,
			.max_recv_sge = req->max_recv_sge,
			.max_inline_data = req->max_inline,
		};
		qp = mrct_create_qp(ctx->pd[req->pd], pair->cq[i], &cap);
		if (IS_ERR(qp))
			return PTR_ERR(qp);
		pair->qp[i] = qp;
		if (i)
			continue;
		req->max_send_sge = cap.max_send_sge;
		req->max_recv_sge = cap.max_recv_sge;
		req->max_inline = cap.max_inline_data;
	}
	for (i = 0; i < 2; i++) {
		err = mrct_connect_qp(pair->qp[i], pair->qp[1 - i], path,
				      req->access);
		if (err)
			return err;
	}
	return 0;
}

static int mrct_qp_create_locked(struct mrct_ctx *ctx,
				 struct mrct_qp_create *req)
{
	struct ib_pd *pd = ctx->pd[req->pd];
	struct mrct_pair *pair;
	struct mrct_path path;
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return -ENODEV;
	if (ctx->nr_pairs >= MRCT_MAX_PAIRS)
		return -EMFILE;
	err = mrct_find_path(ctx->ibdev, &path);
	if (err)
		return err;

	pair = kzalloc(sizeof(*pair), GFP_KERNEL);
	if (!pair)
		return -ENOMEM;
	err = mrct_pair_build(ctx, pair, req, &path);
	if (err)
		goto out_free_pair;
	err = xa_alloc_cyclic(&ctx->pairs, &req->handle, pair,
			      XA_LIMIT(1, U32_MAX), &ctx->next_pair,
			      GFP_KERNEL);
	if (err < 0)
		goto out_free_pair;
	ctx->nr_pairs++;

	req->qpn[0] = pair->qp[0]->qp_num;
	req->qpn[1] = pair->qp[1]->qp_num;
	req->local_dma_lkey = pd->local_dma_lkey;
	req->gid_index = path.gid_index;
	BUILD_BUG_ON(sizeof(req->gid) != sizeof(path.gid.raw));
	memcpy(req->gid, path.gid.raw, sizeof(req->gid));
	req->flags = 0;
	if (ctx->is_vhca)
		req->flags |= MRCT_QP_F_VHCA;
	if (ctx->ibdev->attrs.atomic_cap != IB_ATOMIC_NONE)
		req->flags |= MRCT_QP_F_ATOMIC;
	return 0;

out_free_pair:
	mrct_pair_free(ctx, pair);
	return err;
}

#define MRCT_QP_ACCESS	(MRCT_ACCESS_LOCAL_WRITE | MRCT_ACCESS_REMOTE_WRITE | \
			 MRCT_ACCESS_REMOTE_READ | MRCT_ACCESS_REMOTE_ATOMIC)

/**
 * mrct_qp_create - MRCT_QP_CREATE
 * @ctx: the file's context
 * @uarg: struct mrct_qp_create
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_qp_create(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_qp_create req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS || req.reserved ||
	    req.access & ~MRCT_QP_ACCESS ||
	    req.max_send_sge > MRCT_QP_MAX_SGE ||
	    req.max_recv_sge > MRCT_QP_MAX_SGE ||
	    req.max_inline > MRCT_QP_MAX_INLINE)
		return -EINVAL;

	/* On a fault the pair stays until the file is closed. */
	return mrct_call_locked(ctx, mrct_qp_create_locked, &req, uarg);
}

/**
 * mrct_qp_destroy - MRCT_QP_DESTROY
 * @ctx: the file's context
 * @uarg: struct mrct_qp_destroy
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_qp_destroy(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_qp_destroy req;
	struct mrct_pair *pair;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	if (!ctx->ibdev) {
		err = -ENODEV;
		goto out_unlock;
	}
	pair = xa_erase(&ctx->pairs, req.handle);
	if (!pair) {
		err = -ENOENT;
		goto out_unlock;
	}
	ctx->nr_pairs--;
	mrct_pair_free(ctx, pair);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/**
 * mrct_pair_get - a pair of the context, ready for work
 * @ctx: the context, locked
 * @handle: the pair's handle
 *
 * Return: the pair; ERR_PTR(-ENODEV) no device, -ENOENT no such pair,
 * -EIO the pair is wedged.
 */
struct mrct_pair *mrct_pair_get(struct mrct_ctx *ctx, u32 handle)
{
	struct mrct_pair *pair;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return ERR_PTR(-ENODEV);
	pair = xa_load(&ctx->pairs, handle);
	if (!pair)
		return ERR_PTR(-ENOENT);
	if (pair->wedged)
		return ERR_PTR(-EIO);
	return pair;
}

/**
 * mrct_bad_wr - what a post left in its bad_wr, for the UAPI
 * @bad: the bad_wr the post returned
 * @wr: the first WR posted
 *
 * Return: MRCT_BAD_WR_NULL, MRCT_BAD_WR_SELF or MRCT_BAD_WR_OTHER.
 */
u32 mrct_bad_wr(const void *bad, const void *wr)
{
	if (!bad)
		return MRCT_BAD_WR_NULL;
	return bad == wr ? MRCT_BAD_WR_SELF : MRCT_BAD_WR_OTHER;
}

/**
 * mrct_wait_wc - poll a CQ for one completion, for a bounded time
 * @ctx: the context, bound and locked
 * @cq: the CQ
 * @wr_id: the send wanted (not used with @recv)
 * @recv: want the oldest receive instead
 * @wc: out: the completion
 *
 * Poll @cq until the completion wanted arrives: the send numbered @wr_id,
 * or with @recv the oldest receive. Others (late flushes of earlier work)
 * are dropped. The wait ends after MRCT_QP_WAIT_MS, on a fatal signal, or
 * when the device's removal has begun (it waits for our lock).
 *
 * Return: 0, the poll's error, -ETIMEDOUT, -EINTR or -ENODEV.
 */
int mrct_wait_wc(struct mrct_ctx *ctx, struct ib_cq *cq, u64 wr_id,
		 bool recv, struct ib_wc *wc)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(MRCT_QP_WAIT_MS);
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n < 0)
			return n;
		if (n) {
			if (recv ? wc->wr_id & MRCT_RECV_WRID :
				   wc->wr_id == wr_id)
				return 0;
			continue;
		}
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		if (fatal_signal_pending(current))
			return -EINTR;
		if (mrct_dev_removing(ctx))
			return -ENODEV;
		usleep_range(20, 100);
	}
}

/**
 * mrct_qp_state - a QP's state, as the UAPI reports it
 * @qp: the QP
 *
 * Return: the IB_QPS_* state, or MRCT_QPS_UNKNOWN if the query failed.
 */
u32 mrct_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return MRCT_QPS_UNKNOWN;
	return attr.qp_state;
}

/**
 * mrct_qp_state_after_error - a QP's state after an error completion
 * @qp: the QP
 *
 * After an error completion the QP is in ERR (IBTA 10.3.1); a driver may
 * post the completion just before it moves the QP, so wait for it. The
 * state seen last is the answer when the wait ends without ERR (its
 * deadline, or a fatal signal).
 *
 * Return: as mrct_qp_state().
 */
u32 mrct_qp_state_after_error(struct ib_qp *qp)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(MRCT_QP_ERR_WAIT_MS);
	u32 state;

	for (;;) {
		state = mrct_qp_state(qp);
		if (state == IB_QPS_ERR || state == MRCT_QPS_UNKNOWN ||
		    time_after(jiffies, deadline) ||
		    fatal_signal_pending(current))
			return state;
		usleep_range(100, 200);
	}
}

/**
 * mrct_post_wait - post one send WR and wait for its completion
 * @ctx: the context, bound and locked
 * @pair: a pair of @ctx, from mrct_pair_get()
 * @qpi: which QP of @pair posts (0 or 1)
 * @wr: the WR; its wr_id, next and IB_SEND_SIGNALED are set here
 * @post_err: out: ib_post_send()'s return
 * @bad_wr: out: mrct_bad_wr() of the post, or NULL
 * @status: out: the completion's status, or MRCT_WC_NONE
 *
 * Post @wr (signaled) on QP @qpi of @pair and wait for its completion.
 * A post error is a result (*@post_err, *@bad_wr; *@status stays NONE);
 * only a failed wait is an error, and it wedges the pair.
 *
 * Return: 0, or mrct_wait_wc()'s error.
 */
int mrct_post_wait(struct mrct_ctx *ctx, struct mrct_pair *pair, u32 qpi,
		   struct ib_send_wr *wr, s32 *post_err, u32 *bad_wr,
		   u32 *status)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_wc wc;
	int err;

	wr->wr_id = pair->next_wr_id++;
	wr->send_flags |= IB_SEND_SIGNALED;
	wr->next = NULL;
	*status = MRCT_WC_NONE;
	*post_err = ib_post_send(pair->qp[qpi], wr, &bad);
	if (bad_wr)
		*bad_wr = mrct_bad_wr(bad, wr);
	if (*post_err)
		return 0;

	err = mrct_wait_wc(ctx, pair->cq[qpi], wr->wr_id, false, &wc);
	if (err) {
		/* The WR may still complete: keep it from later work. */
		pair->wedged = true;
		return err;
	}
	*status = wc.status;
	return 0;
}

/**
 * mrct_qp_states - both QPs' states after a completion
 * @pair: the pair
 * @qpi: the QP whose completion it was
 * @status: its status, or MRCT_WC_NONE if nothing was posted
 * @state: out: [0] @qpi's state (waited for ERR after an error), [1] its
 *	peer's
 */
void mrct_qp_states(struct mrct_pair *pair, u32 qpi, u32 status, u32 *state)
{
	struct ib_qp *qp = pair->qp[qpi];

	if (status == MRCT_WC_NONE || status == IB_WC_SUCCESS)
		state[0] = mrct_qp_state(qp);
	else
		state[0] = mrct_qp_state_after_error(qp);
	state[1] = mrct_qp_state(pair->qp[1 - qpi]);
}
