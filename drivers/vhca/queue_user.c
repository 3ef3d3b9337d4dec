// SPDX-License-Identifier: GPL-2.0
/*
 * vhca user queues: the rings of rxe's user ABI (uring.c), as the engine
 * sees them.
 *
 * A user QP's struct vhca_queue_ops is vhca_user_queue_ops. Its send
 * queue is a ring librxe writes struct rxe_send_wqe elements into and
 * rings the doorbell for with a POST_SEND of no WRs (vhca_post_send()).
 * The engine's peek copies the element at the kernel's consumer index out
 * of the ring, checks the copy and turns it into the QP's one staged
 * struct vhca_send_wqe, which stays the WQE at the tail until the engine
 * advances past it: a retry or a parked fault executes the same checked
 * copy, whatever the process writes meanwhile. An element that fails the
 * checks is staged as refused: the engine completes it with the status
 * the check chose, without executing anything, and the QP goes to ERR.
 *
 * Receives (the QP's RQ or its SRQ) and completions go through the same
 * code as for kernel queues (queue_kern.c, srq.c, cq.c): struct vhca_rq
 * and struct vhca_cq branch to the functions below when they are rings.
 * A receive element is copied and checked the same way; a bad one is
 * handed to the responder marked bad, and completes in error.
 *
 * Nothing here trusts the ring: indices are masked with the kernel's own
 * mask, counts and lengths are bounded by the queue's own limits before
 * anything is copied, and keys and addresses are left to the walker,
 * which checks them against the tables like any others.
 */
#include <linux/overflow.h>

#include "qp_rules.h"
#include "queue.h"
#include "vhca_loc.h"

/* The user opcodes each QP type takes (librxe 44 writes these numbers). */
#define VHCA_USER_UD_OPS	(BIT(IB_UVERBS_WR_SEND) |		\
				 BIT(IB_UVERBS_WR_SEND_WITH_IMM))
#define VHCA_USER_RC_OPS	(VHCA_USER_UD_OPS |			\
				 BIT(IB_UVERBS_WR_SEND_WITH_INV) |	\
				 BIT(IB_UVERBS_WR_RDMA_WRITE) |		\
				 BIT(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM) |	\
				 BIT(IB_UVERBS_WR_RDMA_READ) |		\
				 BIT(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP) |	\
				 BIT(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) |	\
				 BIT(IB_UVERBS_WR_LOCAL_INV) |		\
				 BIT(IB_UVERBS_WR_BIND_MW) |		\
				 BIT(VHCA_WR_ATOMIC_WRITE))

/* The send flags a user WQE may carry; the others are ignored. */
#define VHCA_USER_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED |	\
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/**
 * vhca_user_sq_elem - bytes per element of a user send queue
 * @max_sge: SGEs a WQE may carry
 * @max_inline: inline bytes a WQE may carry
 *
 * Return: the element size before rounding to a power of two.
 */
size_t vhca_user_sq_elem(u32 max_sge, u32 max_inline)
{
	return sizeof(struct rxe_send_wqe) +
	       max_t(size_t, max_sge * sizeof(struct rxe_sge), max_inline);
}

/**
 * vhca_user_rq_elem - bytes per element of a user receive queue or SRQ
 * @max_sge: SGEs a receive may carry
 *
 * Return: the element size before rounding to a power of two.
 */
size_t vhca_user_rq_elem(u32 max_sge)
{
	return sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge);
}

/* --- send queue --- */

static u32 vhca_uring_producer(const struct vhca_uring *r)
{
	/* Pairs with librxe's release store of the producer index. */
	return smp_load_acquire(&r->buf->producer_index) & r->mask;
}

static void *vhca_uring_elem(const struct vhca_uring *r, u32 index)
{
	return r->buf->data + ((size_t)(index & r->mask) << r->log2_elem);
}

/* The SGE list of a data WQE, or its inline data, out of the ring. */
static enum ib_wc_status vhca_usq_data(struct vhca_qp *qp,
				       struct vhca_send_wqe *wqe,
				       const struct rxe_send_wqe *u,
				       const void *elem)
{
	const struct rxe_send_wqe *e = elem;
	struct vhca_sq *sq = &qp->sq;
	u32 num_sge = u->dma.num_sge;
	u32 len = u->dma.length;

	if (wqe->send_flags & IB_SEND_INLINE) {
		if (wqe->opcode == IB_WR_RDMA_READ ||
		    wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
			return IB_WC_LOC_QP_OP_ERR;
		if (len > sq->max_inline)
			return IB_WC_LOC_LEN_ERR;
		memcpy(wqe->inline_data, e->dma.inline_data, len);
		wqe->inline_len = len;
		return IB_WC_SUCCESS;
	}

	if (num_sge > sq->max_sge)
		return IB_WC_LOC_LEN_ERR;
	/* struct rxe_sge and struct ib_sge agree field for field. */
	BUILD_BUG_ON(sizeof(struct rxe_sge) != sizeof(struct ib_sge));
	memcpy(wqe->sge, e->dma.sge, num_sge * sizeof(struct ib_sge));
	wqe->num_sge = num_sge;
	/* The local DMA key reaches all of physical memory: the kernel's. */
	if (vhca_sge_names(wqe->sge, num_sge, qp->vdev->rsvd_lkey))
		return IB_WC_LOC_PROT_ERR;

	/* An atomic's result lands in one 8-byte SGE. */
	if ((wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) &&
	    (num_sge != 1 || wqe->sge[0].length != sizeof(u64)))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/*
 * An ATOMIC WRITE: librxe puts its target in the RDMA fields and its eight
 * bytes where the element's SGEs or inline data start (the later UAPI's
 * dma.atomic_wr), with no SGE.
 */
static enum ib_wc_status vhca_usq_atomic_write(struct vhca_qp *qp,
					       struct vhca_send_wqe *wqe,
					       const struct rxe_send_wqe *u,
					       const void *elem)
{
	const struct rxe_send_wqe *e = elem;

	/* An element too small for the value: it is not the ring's to read. */
	if (sizeof(*e) + sizeof(u64) > BIT(qp->sq.uring.log2_elem))
		return IB_WC_LOC_LEN_ERR;
	wqe->atomic.remote_addr = u->wr.wr.rdma.remote_addr;
	wqe->atomic.rkey = u->wr.wr.rdma.rkey;
	memcpy(&wqe->atomic.swap, e->dma.inline_data, sizeof(u64));
	wqe->send_flags &= ~IB_SEND_INLINE;
	return IB_WC_SUCCESS;
}

/* A UD send's destination: the AH the number names, in the QP's PD. */
static enum ib_wc_status vhca_usq_ud(struct vhca_qp *qp,
				     struct vhca_send_wqe *wqe,
				     const struct rxe_send_wqe *u)
{
	unsigned long flags;
	u32 qkey;

	if (vhca_ah_lookup(qp->vdev, u->wr.wr.ud.ah_num, qp->pdn,
			   &wqe->ud.dgid, &wqe->ud.sgid_index))
		return IB_WC_LOC_QP_OP_ERR;
	wqe->ud.remote_qpn = u->wr.wr.ud.remote_qpn & VHCA_QPN_MAX;
	qkey = u->wr.wr.ud.remote_qkey;
	/* A Q_Key with the high bit set stands for the QP's own (10.2.5). */
	if (qkey & VHCA_QKEY_USE_QP) {
		spin_lock_irqsave(&qp->state_lock, flags);
		qkey = qp->attr.qkey;
		spin_unlock_irqrestore(&qp->state_lock, flags);
	}
	wqe->ud.remote_qkey = qkey;
	return IB_WC_SUCCESS;
}

/* Check the copy @u of the element @elem and stage it as @wqe. */
static enum ib_wc_status vhca_usq_convert(struct vhca_qp *qp,
					  struct vhca_send_wqe *wqe,
					  const struct rxe_send_wqe *u,
					  const void *elem)
{
	unsigned long ops = qp->ibqp.qp_type == IB_QPT_RC ? VHCA_USER_RC_OPS :
							    VHCA_USER_UD_OPS;
	const struct rxe_send_wr *wr = &u->wr;

	if (wr->opcode >= BITS_PER_LONG || !(ops & BIT(wr->opcode)))
		return IB_WC_LOC_QP_OP_ERR;
	/* The numbers are the same in the kernel's enum ib_wr_opcode. */
	wqe->opcode = wr->opcode;

	switch (wr->opcode) {
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_LOCAL_INV:
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex.imm_data = wr->ex.imm_data;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_SUCCESS;
	case IB_UVERBS_WR_BIND_MW:
		/*
		 * librxe: mw_rkey is the window's key, rkey the one to bind;
		 * both are checked when the bind executes (frwr.c).
		 */
		wqe->bind.cur_rkey = wr->wr.mw.mw_rkey;
		wqe->bind.mw_rkey = wr->wr.mw.rkey;
		wqe->bind.mr_lkey = wr->wr.mw.mr_lkey;
		wqe->bind.addr = wr->wr.mw.addr;
		wqe->bind.length = wr->wr.mw.length;
		wqe->bind.access = wr->wr.mw.access;
		return IB_WC_SUCCESS;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
		wqe->rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->atomic.swap = wr->wr.atomic.swap;
		wqe->atomic.rkey = wr->wr.atomic.rkey;
		break;
	case VHCA_WR_ATOMIC_WRITE:
		return vhca_usq_atomic_write(qp, wqe, u, elem);
	default:
		if (qp->ibqp.qp_type != IB_QPT_RC) {
			enum ib_wc_status status = vhca_usq_ud(qp, wqe, u);

			if (status != IB_WC_SUCCESS)
				return status;
		}
		break;
	}
	return vhca_usq_data(qp, wqe, u, elem);
}

/*
 * The WQE at the tail: staged from the ring on the first peek, the same
 * staged copy on every peek until the engine advances.
 */
static struct vhca_send_wqe *vhca_usq_peek(struct vhca_qp *qp)
{
	struct vhca_sq *sq = &qp->sq;
	struct vhca_send_wqe *wqe = sq->wqe;
	struct rxe_send_wqe u;
	unsigned long flags;
	const void *elem;

	spin_lock_irqsave(&sq->lock, flags);
	if (sq->staged)
		goto out;
	if ((sq->tail & sq->uring.mask) == vhca_uring_producer(&sq->uring)) {
		wqe = NULL;
		goto out;
	}

	elem = vhca_uring_elem(&sq->uring, sq->tail);
	memcpy(&u, elem, sizeof(u));
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = u.wr.wr_id;
	wqe->send_flags = u.wr.send_flags & VHCA_USER_SEND_FLAGS;
	wqe->refused = vhca_usq_convert(qp, wqe, &u, elem);
	if (wqe->refused != IB_WC_SUCCESS) {
		/* Reported as the opcode it claimed, or as a send. */
		wqe->opcode = u.wr.opcode;
		vhca_dbg_qp(qp, "user WQE %u refused: opcode %u: %s\n",
			    sq->tail & sq->uring.mask, u.wr.opcode,
			    ib_wc_status_msg(wqe->refused));
	}
	sq->staged = true;
out:
	spin_unlock_irqrestore(&sq->lock, flags);
	return wqe;
}

static bool vhca_usq_pending(struct vhca_qp *qp)
{
	struct vhca_sq *sq = &qp->sq;

	/* A poll: a post seen late is seen at the next one. */
	return READ_ONCE(sq->staged) ||
	       (READ_ONCE(sq->tail) & sq->uring.mask) !=
	       (READ_ONCE(sq->uring.buf->producer_index) & sq->uring.mask);
}

static void vhca_usq_advance(struct vhca_qp *qp)
{
	struct vhca_sq *sq = &qp->sq;
	unsigned long flags;

	spin_lock_irqsave(&sq->lock, flags);
	sq->staged = false;
	sq->tail = (sq->tail + 1) & sq->uring.mask;
	/* The slot is librxe's again once it sees this index. */
	smp_store_release(&sq->uring.buf->consumer_index, sq->tail);
	spin_unlock_irqrestore(&sq->lock, flags);
}

/**
 * vhca_usq_reset - empty a user send queue (the QP moved to RESET)
 * @sq: the send queue; the engine has left the QP
 */
void vhca_usq_reset(struct vhca_sq *sq)
{
	unsigned long flags;

	spin_lock_irqsave(&sq->lock, flags);
	sq->staged = false;
	sq->tail = 0;
	vhca_uring_reset(&sq->uring);
	spin_unlock_irqrestore(&sq->lock, flags);
}

/* --- receive queues --- */

/**
 * vhca_urq_pop - take the oldest receive off a user RQ or SRQ ring
 * @rq: the queue, its lock held
 * @out: where the receive goes, with room for VHCA_MAX_SGE SGEs
 *
 * A receive with more SGEs than the queue was created with is taken all
 * the same, marked bad and with no SGE: the responder completes it in
 * error (resp.c).
 *
 * Return: true if a receive was taken.
 */
bool vhca_urq_pop(struct vhca_rq *rq, struct vhca_recv_wqe *out)
{
	const struct rxe_recv_wqe *e;
	u32 num_sge;

	lockdep_assert_held(&rq->lock);

	if ((rq->tail & rq->uring.mask) == vhca_uring_producer(&rq->uring))
		return false;

	e = vhca_uring_elem(&rq->uring, rq->tail);
	out->wr_id = READ_ONCE(e->wr_id);
	num_sge = READ_ONCE(e->dma.num_sge);
	out->bad = num_sge > rq->max_sge;
	out->num_sge = out->bad ? 0 : num_sge;
	memcpy(out->sge, e->dma.sge, out->num_sge * sizeof(struct ib_sge));

	rq->tail = (rq->tail + 1) & rq->uring.mask;
	/* The element is copied: librxe may reuse its slot (acquire there). */
	smp_store_release(&rq->uring.buf->consumer_index, rq->tail);
	return true;
}

/**
 * vhca_urq_count - receives posted on a user RQ or SRQ ring
 * @rq: the queue, its lock held
 *
 * Return: how many the ring holds now, as far as the kernel can tell.
 */
u32 vhca_urq_count(struct vhca_rq *rq)
{
	lockdep_assert_held(&rq->lock);

	return (vhca_uring_producer(&rq->uring) - rq->tail) & rq->uring.mask;
}

/**
 * vhca_urq_reset - empty a user RQ (the QP moved to RESET)
 * @rq: the queue, its lock held
 */
void vhca_urq_reset(struct vhca_rq *rq)
{
	lockdep_assert_held(&rq->lock);

	rq->tail = 0;
	vhca_uring_reset(&rq->uring);
}

/* --- completion queues --- */

/*
 * The completion flags as libibverbs numbers them (enum ibv_wc_flags):
 * GRH and WITH_IMM agree with the kernel's, WITH_INV is its bit 3 where
 * the kernel's IB_WC_WITH_INVALIDATE is bit 2 (libibverbs' IP_CSUM_OK).
 */
#define VHCA_UWC_WITH_INV	BIT(3)

static u32 vhca_uwc_flags(int flags)
{
	u32 uflags = flags & (IB_WC_GRH | IB_WC_WITH_IMM);

	if (flags & IB_WC_WITH_INVALIDATE)
		uflags |= VHCA_UWC_WITH_INV;
	return uflags;
}

/**
 * vhca_ucq_push - write a completion into a user CQ ring
 * @cq: the CQ, its lock held
 * @wc: the completion
 *
 * The element is a struct ib_uverbs_wc, which librxe reads in place; the
 * producer index moves after it is written.
 *
 * Return: false if the ring is full (the completion is not written).
 */
bool vhca_ucq_push(struct vhca_cq *cq, const struct ib_wc *wc)
{
	struct vhca_uring *r = &cq->uring;
	u32 next = (cq->head + 1) & r->mask;
	struct ib_uverbs_wc *uwc;

	lockdep_assert_held(&cq->lock);

	/* Pairs with librxe's release store of the consumer index. */
	if (next == (smp_load_acquire(&r->buf->consumer_index) & r->mask))
		return false;

	uwc = vhca_uring_elem(r, cq->head);
	*uwc = (struct ib_uverbs_wc) {
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len,
		.ex.imm_data = wc->ex.imm_data,
		.qp_num = wc->qp->qp_num,
		.src_qp = wc->src_qp,
		.wc_flags = vhca_uwc_flags(wc->wc_flags),
		.pkey_index = wc->pkey_index,
		.slid = ib_lid_cpu16(wc->slid),
		.sl = wc->sl,
		.dlid_path_bits = wc->dlid_path_bits,
		.port_num = wc->port_num,
	};
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		uwc->ex.invalidate_rkey = wc->ex.invalidate_rkey;
	cq->head = next;
	/* The element is written before librxe sees it (acquire there). */
	smp_store_release(&r->buf->producer_index, next);
	return true;
}

/**
 * vhca_ucq_empty - has librxe taken every completion of a user CQ?
 * @cq: the CQ, its lock held
 *
 * Return: true if the ring holds none.
 */
bool vhca_ucq_empty(struct vhca_cq *cq)
{
	u32 cons;

	lockdep_assert_held(&cq->lock);

	/* Pairs with librxe's release store of the consumer index. */
	cons = smp_load_acquire(&cq->uring.buf->consumer_index);
	return cq->head == (cons & cq->uring.mask);
}

/**
 * vhca_ucq_move - move a user CQ's completions to a new ring (resize_cq)
 * @cq: the CQ, its lock held
 * @r: in, the new ring, empty; out, the old one, for the caller to free
 * @cqe: completions the new ring holds
 *
 * The completions librxe has not consumed move, in order, to the start of
 * the new ring, whose consumer index is 0: librxe maps it and goes on.
 *
 * Return: 0, or -EINVAL if more than @cqe are queued (nothing moved).
 */
int vhca_ucq_move(struct vhca_cq *cq, struct vhca_uring *r, u32 cqe)
{
	struct vhca_uring old = cq->uring;
	u32 cons, n, i;

	lockdep_assert_held(&cq->lock);

	/* Pairs with librxe's release store of the consumer index. */
	cons = smp_load_acquire(&old.buf->consumer_index) & old.mask;
	n = (cq->head - cons) & old.mask;
	if (n > cqe)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy(vhca_uring_elem(r, i), vhca_uring_elem(&old, cons + i),
		       sizeof(struct ib_uverbs_wc));
	cq->uring = *r;
	cq->head = n;
	/* The moved elements are written before librxe sees them. */
	smp_store_release(&cq->uring.buf->producer_index, n);
	*r = old;
	return 0;
}

const struct vhca_queue_ops vhca_user_queue_ops = {
	.sq_peek = vhca_usq_peek,
	.sq_pending = vhca_usq_pending,
	.sq_advance = vhca_usq_advance,
	.rq_take = vhca_queue_take_recv,
	.rq_done = vhca_queue_rx_done,
	.rq_flush = vhca_queue_flush_rq,
	.send_cqe = vhca_qp_send_cqe,
	.recv_cqe = vhca_qp_recv_cqe,
	.error = vhca_qp_error,
};
