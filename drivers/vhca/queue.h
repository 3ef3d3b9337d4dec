/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca queue interface: how the engine reaches a QP's queues.
 *
 * The engine (engine.c, resp.c) takes the next send WQE of a QP, takes a
 * receive for a QP (its RQ or its SRQ), posts completions and moves a QP
 * to ERR only through the ops table the QP points to (qp->qops), never
 * through the queues' own fields or locks. Two implementations exist:
 * the kernel queues create_qp builds (queue_kern.c, over qp.c, srq.c and
 * cq.c), and a user QP's mmapped rings of rxe's user ABI (queue_user.c),
 * set by create_qp, with no change to the engine.
 *
 * Every op is called from the engine's worker, holding no QP, queue or CQ
 * lock, and never sleeps. A send WQE and a receive are handed over as
 * struct vhca_send_wqe and struct vhca_recv_wqe, whatever the ring holds.
 */
#ifndef _VHCA_QUEUE_H
#define _VHCA_QUEUE_H

#include "vhca.h"

/* What taking a receive of a responder came to. */
enum vhca_take {
	VHCA_TAKEN,	/* a receive is in hand: ->rq_done() when finished */
	VHCA_EMPTY,	/* none posted: receiver not ready */
	VHCA_GONE,	/* the responder left the receiving states meanwhile */
	VHCA_LATER,	/* not for a run that cannot sleep: none taken */
};

/**
 * struct vhca_queue_ops - a QP's queues, as the engine sees them
 * @sq_peek: the WQE at the send queue's tail, or NULL if the queue is
 *	empty; it stays there, valid, until @sq_advance
 * @sq_pending: lockless: is a WQE posted past the tail? (the linger poll)
 * @sq_advance: release the WQE at the tail: its slot is free again
 * @rq_take: take the oldest receive of the QP (its RQ, or its SRQ) into
 *	@out, with room for VHCA_MAX_SGE SGEs, if the QP can receive (RTR or
 *	later, not in ERR, not being destroyed); it counts as busy until
 *	@rq_done, so a flush or reset waits for it. Dispatches
 *	IB_EVENT_SRQ_LIMIT_REACHED when the SRQ's armed limit is crossed.
 *	With @nosleep (a run that cannot sleep), takes none, VHCA_LATER,
 *	unless the copy into the receive surely meets no page fault, and
 *	leaves the one it takes on the queue (@out->peeked) until
 *	vhca_queue_recv_used() as it completes
 * @rq_done: a receive @rq_take took is completed, or (peeked and not
 *	used) given back
 * @rq_flush: complete every receive of the QP's own RQ as flushed
 *	(nothing for an SRQ QP); the QP is in ERR with none busy
 * @send_cqe: post a completion to the QP's send CQ
 * @recv_cqe: post a completion to the QP's receive CQ; @solicited: the
 *	message was sent with IB_SEND_SOLICITED
 * @error: move the QP to ERR on a fatal completion (see vhca_qp_error())
 */
struct vhca_queue_ops {
	struct vhca_send_wqe *(*sq_peek)(struct vhca_qp *qp);
	bool (*sq_pending)(struct vhca_qp *qp);
	void (*sq_advance)(struct vhca_qp *qp);
	enum vhca_take (*rq_take)(struct vhca_qp *qp,
				  struct vhca_recv_wqe *out, bool nosleep);
	void (*rq_done)(struct vhca_qp *qp);
	void (*rq_flush)(struct vhca_qp *qp);
	int (*send_cqe)(struct vhca_qp *qp, const struct ib_wc *wc);
	int (*recv_cqe)(struct vhca_qp *qp, const struct ib_wc *wc,
			bool solicited);
	void (*error)(struct vhca_qp *qp);
};

/* queue_kern.c: the kernel queues of qp.c, srq.c and cq.c */
extern const struct vhca_queue_ops vhca_kern_queue_ops;
/* queue_user.c: a user QP's rings (rxe's user ABI) */
extern const struct vhca_queue_ops vhca_user_queue_ops;

/* The receive and completion ops both tables use (queue_kern.c). */
enum vhca_take vhca_queue_take_recv(struct vhca_qp *rqp,
				    struct vhca_recv_wqe *rwqe, bool nosleep);
void vhca_queue_rx_done(struct vhca_qp *rqp);
void vhca_queue_recv_used(struct vhca_qp *rqp,
			  const struct vhca_recv_wqe *rwqe);
void vhca_queue_recv_give_back(struct vhca_qp *rqp,
			       const struct vhca_recv_wqe *rwqe);
void vhca_queue_flush_rq(struct vhca_qp *qp);
int vhca_qp_send_cqe(struct vhca_qp *qp, const struct ib_wc *wc);
int vhca_qp_recv_cqe(struct vhca_qp *qp, const struct ib_wc *wc,
		     bool solicited);

static inline struct vhca_send_wqe *vhca_queue_sq_peek(struct vhca_qp *qp)
{
	return qp->qops->sq_peek(qp);
}

static inline bool vhca_queue_sq_pending(struct vhca_qp *qp)
{
	return qp->qops->sq_pending(qp);
}

static inline void vhca_queue_sq_advance(struct vhca_qp *qp)
{
	qp->qops->sq_advance(qp);
}

static inline enum vhca_take vhca_queue_rq_take(struct vhca_qp *qp,
						struct vhca_recv_wqe *out,
						bool nosleep)
{
	return qp->qops->rq_take(qp, out, nosleep);
}

static inline void vhca_queue_rq_done(struct vhca_qp *qp)
{
	qp->qops->rq_done(qp);
}

static inline void vhca_queue_rq_flush(struct vhca_qp *qp)
{
	qp->qops->rq_flush(qp);
}

static inline int vhca_queue_send_cqe(struct vhca_qp *qp,
				      const struct ib_wc *wc)
{
	return qp->qops->send_cqe(qp, wc);
}

static inline int vhca_queue_recv_cqe(struct vhca_qp *qp,
				      const struct ib_wc *wc, bool solicited)
{
	return qp->qops->recv_cqe(qp, wc, solicited);
}

static inline void vhca_queue_error(struct vhca_qp *qp)
{
	qp->qops->error(qp);
}

#endif /* _VHCA_QUEUE_H */
