// SPDX-License-Identifier: GPL-2.0
/*
 * vhca responder: the target side of a message, as the responder's HCA
 * executes it.
 *
 * The responder is entered with a resolved peer (struct vhca_peer, from
 * vhca_fabric_resolve(): its device and QP, held, and the QP's access
 * flags, Q_Key and RNR timer) and a request (struct vhca_req: what
 * arrived: the opcode, the remote address and rkey, the length, the
 * immediate data or the key to invalidate, a UD message's network header,
 * and the requester's side of the transfer as a cursor). Today the
 * requester's engine builds both and calls vhca_respond() in its run of
 * the send queue; a received packet could enter the same way.
 *
 * Flow, by opcode:
 *  - SEND (with immediate or invalidate): take a receive of the
 *    responder's QP (queue.h), copy the message into it, resolving page
 *    faults in place (the receive cannot be given back), invalidate the
 *    key of a Send with Invalidate, complete the receive. A run that
 *    cannot sleep meets no page fault (the queue lets it take no
 *    receive that could) and only peeks at the receive, which it gives
 *    back if the invalidation would wait.
 *  - RDMA WRITE: check the QP allows it, copy into the remote range; with
 *    immediate, then consume a receive as a SEND of no bytes does.
 *  - RDMA READ: check the QP allows it, copy from the remote range into
 *    the requester's list.
 *  - Atomics: check the QP allows it and the address is aligned, probe the
 *    requester's result SGE, read-modify-write the target under the
 *    device's atomic lock, land the original value in place.
 * The result is a verdict (done, with the requester's status; receiver
 * not ready; lost) the requester's engine acts on.
 *
 * Counters: an incoming RDMA WRITE (with or without immediate) or atomic
 * collects the counter slots of the contexts its remote walks resolve
 * (vhca_counted_begin()), and once it has succeeded at the responder the
 * engine adds one to each distinct one (vhca_counted_end()) before the
 * requester's completion is posted. A failed operation, a READ and the
 * local side of any operation (a receive's scatter, a READ response
 * landing locally) add nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#include "engine_loc.h"
#include "queue.h"
#include "vhca_loc.h"

/* Complete the receive @rwqe of @rqp. */
static void vhca_rq_complete(struct vhca_qp *rqp,
			     const struct vhca_recv_wqe *rwqe,
			     enum ib_wc_status status, struct ib_wc *tmpl,
			     bool solicited)
{
	struct ib_wc wc = *tmpl;

	ibdev_dbg(&rqp->vdev->ibdev, "QP[%u] receive 0x%llx: %s, %u bytes\n",
		  rqp->ibqp.qp_num, rwqe->wr_id, ib_wc_status_msg(status),
		  tmpl->byte_len);
	vhca_queue_recv_used(rqp, rwqe);
	wc.wr_id = rwqe->wr_id;
	wc.status = status;
	wc.qp = &rqp->ibqp;
	wc.port_num = VHCA_PORT_NUM;
	vhca_queue_recv_cqe(rqp, &wc, solicited);
}

/*
 * Fill the receive @rwqe of @peer's QP with the message @req and complete
 * it. A UD message's receive starts with @req->grh.
 *
 * Return: VHCA_DONE, with *@status set; or VHCA_DEFER when a receive
 * only peeked at (a run that cannot sleep) is given back instead: the
 * Send with Invalidate's invalidation would have to wait. Its bytes may
 * have been written; it is still posted, and the worker's execution of
 * the message fills it again.
 */
static enum vhca_verdict vhca_fill_recv(struct vhca_peer *peer,
					struct vhca_req *req,
					struct vhca_recv_wqe *rwqe,
					struct vhca_cursor *src, u64 len,
					u64 report_len,
					enum ib_wc_status *status)
{
	struct vhca_qp *rqp = peer->qp;
	union rdma_network_hdr *hdr = req->grh;
	bool ud = req->ud;
	bool solicited = req->solicited;
	struct vhca_cursor dst;
	struct ib_wc wc = { .opcode = IB_WC_RECV, .src_qp = req->src_qpn };
	enum vhca_side side;
	u64 room;
	int err;

	/*
	 * A user ring's receive that failed its checks (queue_user.c), or
	 * named the local DMA key (vhca_queue_take_recv()).
	 */
	if (unlikely(rwqe->bad)) {
		vhca_rq_complete(rqp, rwqe, IB_WC_LOC_QP_OP_ERR, &wc,
				 solicited);
		if (ud) {
			*status = IB_WC_SUCCESS;
			return VHCA_DONE;
		}
		vhca_queue_error(rqp);
		*status = IB_WC_REM_OP_ERR;
		return VHCA_DONE;
	}

	vhca_cursor_sgl(&dst, rqp, rwqe->sge, rwqe->num_sge,
			VHCA_ACCESS_LOCAL_WRITE);
	room = vhca_sge_bytes(rwqe->sge, rwqe->num_sge);

	if (ud) {
		/* UD: a receive too short or refused loses the message. */
		*status = IB_WC_SUCCESS;
		if (room < sizeof(*hdr) + len) {
			vhca_rq_complete(rqp, rwqe, IB_WC_LOC_LEN_ERR,
					 &wc, solicited);
			return VHCA_DONE;
		}
		err = vhca_cursor_move_sync(&dst, (u8 *)hdr, sizeof(*hdr));
		if (err) {
			vhca_rq_complete(rqp, rwqe, IB_WC_LOC_PROT_ERR,
					 &wc, solicited);
			return VHCA_DONE;
		}
		wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc.network_hdr_type = req->net_type;
		wc.byte_len = sizeof(*hdr) + len;
	} else {
		if (room < len) {
			vhca_rq_complete(rqp, rwqe, IB_WC_LOC_LEN_ERR,
					 &wc, solicited);
			vhca_queue_error(rqp);
			*status = IB_WC_REM_INV_REQ_ERR;
			return VHCA_DONE;
		}
		wc.byte_len = report_len;
	}

	err = vhca_xfer_sync(req->vdev, src, &dst, len, &side);
	if (err) {
		/*
		 * The gather list was probed, so a source error means its
		 * MR changed meanwhile: the message is cut short.
		 */
		vhca_rq_complete(rqp, rwqe, side == VHCA_SRC ?
				 IB_WC_REM_ABORT_ERR : IB_WC_LOC_PROT_ERR,
				 &wc, solicited);
		if (!ud)
			vhca_queue_error(rqp);
		if (side == VHCA_SRC)
			*status = IB_WC_LOC_PROT_ERR;
		else
			*status = ud ? IB_WC_SUCCESS : IB_WC_REM_OP_ERR;
		return VHCA_DONE;
	}

	switch (req->opcode) {
	case IB_WR_SEND_WITH_IMM:
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = req->imm_data;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = req->imm_data;
		wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		break;
	case IB_WR_SEND_WITH_INV:
		/*
		 * After the copy, as IBTA orders it. A run that cannot sleep
		 * only peeked at the receive (vhca_queue_take_recv()), so the
		 * invalidation may give up where it would wait, and the
		 * receive go back.
		 */
		err = vhca_exec_inv(peer->vdev, rqp->pdn, rqp->ibqp.qp_num,
				    req->invalidate_rkey, req->nosleep);
		if (err == -EAGAIN && req->nosleep &&
		    !WARN_ON_ONCE(!rwqe->peeked))
			return VHCA_DEFER;
		if (err) {
			vhca_rq_complete(rqp, rwqe,
					 IB_WC_REM_INV_REQ_ERR, &wc, false);
			vhca_queue_error(rqp);
			*status = IB_WC_REM_INV_REQ_ERR;
			return VHCA_DONE;
		}
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = req->invalidate_rkey;
		break;
	default:
		break;
	}

	vhca_rq_complete(rqp, rwqe, IB_WC_SUCCESS, &wc, solicited);
	*status = IB_WC_SUCCESS;
	return VHCA_DONE;
}

/*
 * Deliver a SEND (or the receive half of RDMA WRITE with immediate) to
 * @peer: take a receive, fill and complete it. @src is the gather cursor,
 * probed already, @len the bytes to move into the receive, @report_len
 * the byte count its completion reports.
 */
static enum vhca_verdict vhca_deliver_send(struct vhca_peer *peer,
					   struct vhca_req *req,
					   struct vhca_cursor *src, u64 len,
					   u64 report_len,
					   enum ib_wc_status *status)
{
	struct vhca_recv_buf rbuf;
	enum vhca_verdict v;

	switch (vhca_queue_rq_take(peer->qp, &rbuf.wqe, req->nosleep)) {
	case VHCA_TAKEN:
		break;
	case VHCA_LATER:
		return VHCA_DEFER;
	case VHCA_EMPTY:
		if (!req->ud)
			return VHCA_RNR;
		*status = IB_WC_SUCCESS;	/* UD: dropped */
		return VHCA_DONE;
	case VHCA_GONE:
		if (!req->ud)
			return VHCA_LOST;
		*status = IB_WC_SUCCESS;
		return VHCA_DONE;
	}

	v = vhca_fill_recv(peer, req, &rbuf.wqe, src, len, report_len,
			   status);
	if (v == VHCA_DEFER)
		vhca_queue_recv_give_back(peer->qp, &rbuf.wqe);
	vhca_queue_rq_done(peer->qp);
	return v;
}

/*
 * Is the responder QP enabled for the operation (IB_ACCESS_* @right)?
 * If not, the request is invalid for it: IB_WC_REM_INV_REQ_ERR, as
 * ibv_poll_cq(3) and rxe have it; the MR's own rights are the rkey's
 * business (IB_WC_REM_ACCESS_ERR).
 */
static bool vhca_peer_allows(const struct vhca_peer *peer, int right)
{
	return (peer->access & right) == right;
}

/* Map a walker error on the remote range to the requester's status. */
static enum ib_wc_status vhca_remote_status(int err)
{
	return err == -EINVAL ? IB_WC_REM_OP_ERR : IB_WC_REM_ACCESS_ERR;
}

/*
 * Move the bytes of an RDMA WRITE (@write) or READ between the
 * requester's SGEs (@req->local) and the request's remote range on @peer.
 * Zero bytes check only that the responder QP allows the operation, not
 * the rkey (IBTA). A WRITE's remote walks record their counters in
 * @counters.
 */
static enum ib_wc_status vhca_rdma_move(struct vhca_peer *peer,
					struct vhca_req *req, bool write,
					unsigned long *counters)
{
	struct vhca_cursor *local = req->local;
	u64 len = req->len;
	struct vhca_cursor remote = {
		.kind = VHCA_CURSOR_RANGE,
		.dir = write ? VHCA_ACCESS_REMOTE_WRITE : VHCA_ACCESS_REMOTE_READ,
		.vdev = peer->vdev,
		.pdn = peer->qp->pdn,
		.qpn = peer->qp->ibqp.qp_num,
		.rkey = req->rkey,
		.addr = req->remote_addr,
		.counters = counters,
		.fault = req->fault,
	};
	enum vhca_side side;
	int err;

	if (!vhca_peer_allows(peer, write ? IB_ACCESS_REMOTE_WRITE :
					    IB_ACCESS_REMOTE_READ))
		return IB_WC_REM_INV_REQ_ERR;
	if (!len)
		return IB_WC_SUCCESS;

	if (write)
		err = vhca_xfer(req->vdev, local, &remote, len, false, &side);
	else
		err = vhca_xfer(req->vdev, &remote, local, len, false, &side);
	if (!err)
		return IB_WC_SUCCESS;
	/* The local end is a WRITE's source and a READ's sink. */
	if (side == (write ? VHCA_SRC : VHCA_DST))
		return IB_WC_LOC_PROT_ERR;
	return vhca_remote_status(err);
}

/*
 * An atomic on @peer, its original value landing in the requester's
 * @req->local. Both walks of the target record their counters in
 * @counters: a successful atomic counts as a remote write whether or not
 * a compare-and-swap swapped.
 */
static enum vhca_verdict vhca_do_atomic(struct vhca_peer *peer,
					struct vhca_req *req,
					enum ib_wc_status *status,
					unsigned long *counters)
{
	struct vhca_cursor *dst = req->local;
	struct vhca_dev *rdev = peer->vdev;
	u32 rpdn = peer->qp->pdn;
	u32 rqpn = peer->qp->ibqp.qp_num;
	u64 addr = req->remote_addr;
	u32 rkey = req->rkey;
	u64 orig, val;
	int err;

	if (!vhca_peer_allows(peer, IB_ACCESS_REMOTE_ATOMIC)) {
		*status = IB_WC_REM_INV_REQ_ERR;
		return VHCA_DONE;
	}
	if (!IS_ALIGNED(addr, sizeof(u64))) {
		*status = IB_WC_REM_INV_REQ_ERR;
		return VHCA_DONE;
	}
	/* The local result SGE is checked before the target changes. */
	err = vhca_cursor_probe(dst, sizeof(u64));
	if (err) {
		*status = IB_WC_LOC_PROT_ERR;
		return VHCA_DONE;
	}

	/* A fault on the target leaves it unchanged: the WQE restarts. */
	spin_lock_bh(&rdev->atomic_lock);
	err = vhca_access_fault(rdev, rpdn, rqpn, rkey, addr, &orig,
				sizeof(orig), VHCA_ACCESS_ATOMIC_READ,
				counters, req->fault);
	if (!err) {
		if (req->opcode == IB_WR_ATOMIC_CMP_AND_SWP)
			val = orig == req->compare_add ? req->swap : orig;
		else
			val = orig + req->compare_add;
		if (val != orig || req->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
			err = vhca_access_fault(rdev, rpdn, rqpn, rkey,
						addr, &val, sizeof(val),
						VHCA_ACCESS_ATOMIC_WRITE,
						counters, req->fault);
	}
	spin_unlock_bh(&rdev->atomic_lock);
	if (err) {
		*status = vhca_remote_status(err);
		return VHCA_DONE;
	}

	/* The target changed: the result lands now or the WQE fails. */
	err = vhca_cursor_move_sync(dst, (u8 *)&orig, sizeof(orig));
	*status = err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	return VHCA_DONE;
}

/*
 * An ATOMIC WRITE on @peer: @req->swap stored at once at an aligned
 * address, with the rights of an RDMA WRITE (IBTA 9.4.7: the responder
 * checks remote write access; a misaligned address is an invalid
 * request). The store is one access (walker.c); atomic_lock orders it
 * with the device's other atomics, so a compare-and-swap's read and
 * write never straddle it.
 */
static enum vhca_verdict vhca_do_atomic_write(struct vhca_peer *peer,
					      struct vhca_req *req,
					      enum ib_wc_status *status,
					      unsigned long *counters)
{
	u64 val = req->swap;
	int err;

	if (!vhca_peer_allows(peer, IB_ACCESS_REMOTE_WRITE) ||
	    !IS_ALIGNED(req->remote_addr, sizeof(u64))) {
		*status = IB_WC_REM_INV_REQ_ERR;
		return VHCA_DONE;
	}
	spin_lock_bh(&peer->vdev->atomic_lock);
	err = vhca_access_fault(peer->vdev, peer->qp->pdn,
				peer->qp->ibqp.qp_num, req->rkey,
				req->remote_addr, &val, sizeof(val),
				VHCA_ACCESS_ATOMIC_STORE, counters, req->fault);
	spin_unlock_bh(&peer->vdev->atomic_lock);
	*status = err ? vhca_remote_status(err) : IB_WC_SUCCESS;
	return VHCA_DONE;
}

/*
 * An RDMA WRITE, with or without immediate, to @peer. With immediate
 * data a receive is consumed after the data lands; without one the
 * responder NAKs (RNR) and the retry writes the same bytes again, as a
 * retransmission would. The counters of the target count only the
 * attempt that completes successfully.
 */
static enum vhca_verdict vhca_do_write(struct vhca_peer *peer,
				       struct vhca_req *req,
				       enum ib_wc_status *status)
{
	enum vhca_verdict v = VHCA_DONE;
	struct vhca_counted cnt;

	vhca_counted_begin(&cnt);
	*status = vhca_rdma_move(peer, req, true, cnt.ids);
	if (*status == IB_WC_SUCCESS &&
	    req->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		/* The receive gets no bytes, only the immediate. */
		struct vhca_cursor none = {
			.kind = VHCA_CURSOR_SGL,
			.dir = VHCA_ACCESS_LOCAL_READ,
		};

		v = vhca_deliver_send(peer, req, &none, 0, req->len, status);
	}
	vhca_counted_end(peer->vdev, &cnt,
			 v == VHCA_DONE && *status == IB_WC_SUCCESS);
	return v;
}

/* An atomic or ATOMIC WRITE to @peer; the target's counters count if it succeeds. */
static enum vhca_verdict vhca_exec_atomic(struct vhca_peer *peer,
					  struct vhca_req *req,
					  enum ib_wc_status *status)
{
	struct vhca_counted cnt;
	enum vhca_verdict v;

	vhca_counted_begin(&cnt);
	if (req->opcode == VHCA_WR_ATOMIC_WRITE)
		v = vhca_do_atomic_write(peer, req, status, cnt.ids);
	else
		v = vhca_do_atomic(peer, req, status, cnt.ids);
	vhca_counted_end(peer->vdev, &cnt,
			 v == VHCA_DONE && *status == IB_WC_SUCCESS);
	return v;
}

/**
 * vhca_respond - execute a request at its responder
 * @peer: the responder, resolved and held by the caller
 * @req: the request; its requester-side cursor moves
 * @status: out, with VHCA_DONE: the status the requester completes with
 *
 * A SEND's source must have been probed and a UD message's network header
 * built (@req->grh) by the caller, the requester's side, so that a local
 * error fails the send before the responder's receive is touched, as on a
 * wire. Page faults on the responder's memory are recorded in
 * @req->fault for the requester to park on.
 *
 * Context: a run of the requester's engine, holding no lock; sleeps only
 * to resolve a page fault in place, never with @req->nosleep.
 * Return: VHCA_DONE, VHCA_RNR (no receive posted), VHCA_LOST (the
 * responder left the receiving states) or, with @req->nosleep, VHCA_DEFER
 * (a receive that could fault in place, nothing done; or a Send with
 * Invalidate whose invalidation would wait, its receive given back).
 * The worker executes a deferred WQE again from the start.
 */
enum vhca_verdict vhca_respond(struct vhca_peer *peer, struct vhca_req *req,
			       enum ib_wc_status *status)
{
	switch (req->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return vhca_do_write(peer, req, status);
	case IB_WR_RDMA_READ:
		*status = vhca_rdma_move(peer, req, false, NULL);
		return VHCA_DONE;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case VHCA_WR_ATOMIC_WRITE:
		return vhca_exec_atomic(peer, req, status);
	default:	/* SEND, with immediate or invalidate */
		return vhca_deliver_send(peer, req, req->local, req->len,
					 req->len, status);
	}
}
