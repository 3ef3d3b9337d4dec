// SPDX-License-Identifier: GPL-2.0
/*
 * vhca kernel queues, as the engine sees them: vhca_kern_queue_ops, the
 * struct vhca_queue_ops (queue.h) of every kernel QP create_qp builds. A
 * user QP's table (queue_user.c) shares the receive and completion ops.
 *
 * The send queue is qp.c's ring of struct vhca_send_wqe slots: the engine
 * peeks at its tail under sq->lock and advances it once the WQE is
 * complete. A receive is taken from the QP's own RQ or its SRQ (srq.c)
 * under the QP's state lock, so that a QP leaving the receiving states
 * takes none, and counted in rx_busy until done. Completions go to the
 * QP's CQs (cq.c); a fatal one moves the QP to ERR (qp.c).
 */
#include <linux/wait_bit.h>

#include "engine.h"
#include "queue.h"
#include "vhca_loc.h"

/* --- the send queue --- */

static struct vhca_send_wqe *vhca_sq_tail(struct vhca_qp *qp)
{
	struct vhca_send_wqe *wqe = NULL;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->sq.tail != qp->sq.head)
		wqe = qp->sq.wqe + (size_t)(qp->sq.tail & (qp->sq.size - 1)) *
				   qp->sq.stride;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return wqe;
}

static bool vhca_sq_pending(struct vhca_qp *qp)
{
	/* A poll: a post seen late is seen at the next one. */
	return READ_ONCE(qp->sq.tail) != READ_ONCE(qp->sq.head);
}

static void vhca_sq_advance(struct vhca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq.tail++;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* --- receives --- */

/*
 * Take a receive of @rqp into @rwqe, under the state check, and count it
 * in rqp->rx_busy so that a flush or reset of that RQ waits for it. The
 * RQ or SRQ may be a user ring: vhca_rq_pop() and vhca_srq_pop() tell.
 *
 * A receive taken so cannot be given back, so the copy into it resolves
 * page faults in place, which sleeps. With @nosleep, only a receive of a
 * kernel RQ on a device without ODP keys is taken: its keys were
 * registered before it was posted, under this lock, so the count read
 * under the lock sees them. A user ring's or an SRQ's receive is posted
 * outside this lock: VHCA_LATER, as when the device has ODP keys. An RC
 * QP's receive is only peeked at (@rwqe->peeked): it stays on its RQ
 * until it completes (vhca_queue_recv_used()), so a Send with Invalidate
 * whose invalidation would wait can give it back
 * (vhca_queue_recv_give_back()) and leave the message to the worker.
 * Meanwhile other takers find the RQ empty (vhca_rq_peek()), and a flush
 * or reset waits for rx_busy. A UD QP's receives are popped: its many
 * senders would find it empty, and a UD message invalidates nothing.
 */
enum vhca_take vhca_queue_take_recv(struct vhca_qp *rqp,
				    struct vhca_recv_wqe *rwqe, bool nosleep)
{
	/* An RC QP's receive, in a run that cannot sleep, is peeked at. */
	bool peek = nosleep && rqp->ibqp.qp_type == IB_QPT_RC;
	enum vhca_take ret = VHCA_GONE;
	bool taken, limit = false;
	unsigned long flags;

	spin_lock_irqsave(&rqp->state_lock, flags);
	if (nosleep && (rqp->srq || rqp->rq.uring.buf ||
			atomic_read(&rqp->vdev->odp_mkeys))) {
		ret = VHCA_LATER;
	} else if (!rqp->stopped && vhca_state_receives(rqp->state)) {
		if (rqp->srq)
			taken = vhca_srq_pop(rqp->srq, rwqe, &limit);
		else if (peek)
			taken = vhca_rq_peek(&rqp->rq, rwqe);
		else
			taken = vhca_rq_pop(&rqp->rq, rwqe);
		rwqe->peeked = taken && peek;
		ret = taken ? VHCA_TAKEN : VHCA_EMPTY;
		if (taken)
			rqp->rx_busy++;
		/* A user ring may not name the kernel's local DMA key. */
		if (taken && !rdma_is_kernel_res(&rqp->ibqp.res) &&
		    vhca_sge_names(rwqe->sge, rwqe->num_sge,
				   rqp->vdev->rsvd_lkey))
			rwqe->bad = true;
	}
	spin_unlock_irqrestore(&rqp->state_lock, flags);
	/* The handler may call verbs: no lock is held for it. */
	if (limit)
		vhca_srq_limit_event(rqp->srq);
	return ret;
}

/*
 * The receive @rwqe of @rqp is about to complete: one that was only
 * peeked at leaves its RQ now, before its completion can be polled and
 * the ULP posts another in its place.
 */
void vhca_queue_recv_used(struct vhca_qp *rqp,
			  const struct vhca_recv_wqe *rwqe)
{
	if (rwqe->peeked)
		vhca_rq_drop(&rqp->rq);
}

/*
 * The receive @rwqe of @rqp, only peeked at, is not completed: it stays
 * the RQ's oldest, to be filled again. vhca_queue_rx_done() follows.
 */
void vhca_queue_recv_give_back(struct vhca_qp *rqp,
			       const struct vhca_recv_wqe *rwqe)
{
	if (!WARN_ON_ONCE(!rwqe->peeked))
		vhca_rq_unpeek(&rqp->rq);
}

/* A receive vhca_take_recv() took is completed, or given back. */
void vhca_queue_rx_done(struct vhca_qp *rqp)
{
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&rqp->state_lock, flags);
	kick = !--rqp->rx_busy && rqp->state == IB_QPS_ERR;
	spin_unlock_irqrestore(&rqp->state_lock, flags);
	/* A flush or a reset may be waiting for the last one. */
	wake_up_var(&rqp->rx_busy);
	if (kick)
		vhca_engine_kick(rqp);
}

/*
 * Complete every receive on @qp's own RQ as flushed, @qp being in ERR.
 * Each receive completes on the receive CQ with IB_WC_WR_FLUSH_ERR, in
 * order. Nothing for a QP on an SRQ. Only the engine calls this, from a
 * run of the QP's send queue, so flushes never interleave, and completion
 * handlers never run inside a verb the consumer called (post_recv,
 * modify_qp; a kernel post_send's run leaves them to an interrupt).
 * Holds no QP lock while completing. Never sleeps.
 */
void vhca_queue_flush_rq(struct vhca_qp *qp)
{
	struct vhca_recv_buf rbuf;
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};

	/* IBTA 10.8.3.3: WQEs of an SRQ stay there for the other QPs. */
	if (qp->srq)
		return;

	while (vhca_rq_pop(&qp->rq, &rbuf.wqe)) {
		wc.wr_id = rbuf.wqe.wr_id;
		vhca_cq_post(qp->rcq, &wc, false);
	}
}

/* --- completions: vhca_cq_post() writes a user CQ's ring itself --- */

int vhca_qp_send_cqe(struct vhca_qp *qp, const struct ib_wc *wc)
{
	return vhca_cq_post(qp->scq, wc, false);
}

int vhca_qp_recv_cqe(struct vhca_qp *qp, const struct ib_wc *wc,
		     bool solicited)
{
	return vhca_cq_post(qp->rcq, wc, solicited);
}

const struct vhca_queue_ops vhca_kern_queue_ops = {
	.sq_peek = vhca_sq_tail,
	.sq_pending = vhca_sq_pending,
	.sq_advance = vhca_sq_advance,
	.rq_take = vhca_queue_take_recv,
	.rq_done = vhca_queue_rx_done,
	.rq_flush = vhca_queue_flush_rq,
	.send_cqe = vhca_qp_send_cqe,
	.recv_cqe = vhca_qp_recv_cqe,
	.error = vhca_qp_error,
};
