// SPDX-License-Identifier: GPL-2.0
/*
 * vhca queue pairs: RC, UD and the GSI QP, kernel users only.
 *
 * create_qp builds the send ring (struct vhca_send_wqe slots, each with
 * room for max_send_sge SGEs or max_inline_data bytes), the receive ring
 * (srq.c) unless the QP uses an SRQ, and publishes the QP in vdev->qps
 * last, so the engine never finds a half-built one. post_send validates
 * and encodes each WR into a slot and runs the engine itself or kicks it
 * (engine.c), which executes the ring in order and completes every slot.
 *
 * Locking. qp->state_lock (irqsave) protects the state and qp->attr; it is
 * the outer lock: under it this file takes the RQ's lock (post_recv). The
 * SQ lock and CQ locks are never taken under it. The engine and post paths never sleep;
 * create, modify and destroy may.
 *
 * State rules the engine relies on:
 *  - RTS: execute; SQD, and everything before RTS: execute nothing;
 *    ERR: complete every slot with IB_WC_WR_FLUSH_ERR.
 *  - A move to RESET or SQD returns only after vhca_engine_qp_stop(), so
 *    once it returns the engine is not inside a WQE: RESET then empties
 *    the queues without completions, SQD reports IB_EVENT_SQ_DRAINED.
 *  - A move to ERR kicks the engine, which flushes the QP's own RQ and
 *    its SQ (queue.h's ->rq_flush()). Receives posted in ERR kick it again,
 *    so that ib_drain_qp() sees its marker WRs complete. Completion
 *    handlers therefore never run inside post_recv or modify_qp, nor
 *    inside post_send, whose own runs leave them to an interrupt they
 *    raise as they end (cq.c, vhca_cq_raise_owed()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>

#include "engine.h"
#include "qp_rules.h"
#include "queue.h"
#include "vhca_loc.h"

/*
 * QP numbers 2 .. VHCA_MAX_QP + 1: the range itself caps the live QPs.
 * The cyclic hint is module-wide, not per device: it only delays the
 * reuse of a number, and a hint two devices race on still does that.
 */
static atomic_t vhca_qpn_hint = ATOMIC_INIT(VHCA_QPN_GSI + 1);

/* Opcodes each QP type accepts, as BIT_ULL(enum ib_wr_opcode). */
#define VHCA_UD_WR_OPS	(BIT_ULL(IB_WR_SEND) | BIT_ULL(IB_WR_SEND_WITH_IMM))
#define VHCA_RC_WR_OPS	(VHCA_UD_WR_OPS |				\
			 BIT_ULL(IB_WR_SEND_WITH_INV) |			\
			 BIT_ULL(IB_WR_RDMA_WRITE) |			\
			 BIT_ULL(IB_WR_RDMA_WRITE_WITH_IMM) |		\
			 BIT_ULL(IB_WR_RDMA_READ) |			\
			 BIT_ULL(IB_WR_ATOMIC_CMP_AND_SWP) |		\
			 BIT_ULL(IB_WR_ATOMIC_FETCH_AND_ADD) |		\
			 BIT_ULL(IB_WR_LOCAL_INV) |			\
			 BIT_ULL(IB_WR_REG_MR) |			\
			 BIT_ULL(IB_WR_BIND_MW))

static const u64 vhca_wr_opcodes[] = {
	[IB_QPT_GSI] = VHCA_UD_WR_OPS,
	[IB_QPT_RC] = VHCA_RC_WR_OPS,
	[IB_QPT_UD] = VHCA_UD_WR_OPS,
};

/**
 * vhca_qp_check_init - check a create_qp request, its caps aside
 * @init: the caller's attributes
 *
 * Return: 0; -EOPNOTSUPP for a QP type other than RC, UD and GSI, any
 * creation flag, XRC or RSS; -EINVAL without both CQs, or for a GSI QP on
 * a port other than VHCA_PORT_NUM.
 */
int vhca_qp_check_init(const struct ib_qp_init_attr *init)
{
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	default:
		return -EOPNOTSUPP;
	}

	if (init->create_flags || init->xrcd || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (init->qp_type == IB_QPT_GSI && init->port_num != VHCA_PORT_NUM)
		return -EINVAL;
	return 0;
}

/**
 * vhca_sq_stride - bytes per send-queue slot
 * @max_sge: SGEs a send may carry
 * @max_inline: inline bytes a send may carry
 *
 * The gather list and the inline data share the slot's tail, so the tail
 * is the larger of the two, in whole SGEs to keep every slot aligned.
 *
 * Return: the slot size.
 */
u32 vhca_sq_stride(u32 max_sge, u32 max_inline)
{
	u32 room = max_t(u32, max_sge * sizeof(struct ib_sge), max_inline);

	return sizeof(struct vhca_send_wqe) + ALIGN(room, sizeof(struct ib_sge));
}

/**
 * vhca_qp_caps - check the capacities asked for and grant the real ones
 * @cap: in, what create_qp was asked for; out, what the QP has
 * @has_srq: receives come from an SRQ: the receive caps are ignored
 *
 * A queue holds at least one WR. Inline data gets the whole slot tail,
 * which may be more than asked for. With an SRQ the receive caps are 0.
 *
 * Return: 0, or -EINVAL if a capacity exceeds the device's.
 */
int vhca_qp_caps(struct ib_qp_cap *cap, bool has_srq)
{
	u32 room;

	if (cap->max_send_wr > VHCA_MAX_QP_WR ||
	    cap->max_send_sge > VHCA_MAX_SGE ||
	    cap->max_inline_data > VHCA_MAX_INLINE)
		return -EINVAL;
	if (!has_srq && (cap->max_recv_wr > VHCA_MAX_QP_WR ||
			 cap->max_recv_sge > VHCA_MAX_SGE))
		return -EINVAL;

	room = vhca_sq_stride(cap->max_send_sge, cap->max_inline_data) -
	       sizeof(struct vhca_send_wqe);
	cap->max_inline_data = min_t(u32, room, VHCA_MAX_INLINE);
	cap->max_send_wr = max(cap->max_send_wr, 1U);
	if (has_srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		cap->max_recv_wr = max(cap->max_recv_wr, 1U);
	}
	return 0;
}

/* Path attributes: RoCE needs a GRH, and there is no alternate path. */
static int vhca_qp_check_path(const struct ib_qp_attr *attr, int mask,
			      enum ib_qp_type type)
{
	if (mask & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_AV) && type == IB_QPT_RC &&
	    !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state > IB_MIG_ARMED)
		return -EINVAL;
	return 0;
}

/**
 * vhca_qp_check_attr - check the values modify_qp is given
 * @attr: the new attributes
 * @mask: which of them are given (enum ib_qp_attr_mask)
 * @type: the QP's type
 *
 * Only the values: whether @mask suits the transition is
 * vhca_qp_next_state()'s business. The wire limits are IBTA's (5-bit
 * timers, 3-bit retry counts, 24-bit QP numbers), the others vhca's.
 *
 * Return: 0; -EOPNOTSUPP for an alternate path; -EINVAL for a value out
 * of range, an access right vhca does not grant or an AV without a GRH.
 */
int vhca_qp_check_attr(const struct ib_qp_attr *attr, int mask,
		       enum ib_qp_type type)
{
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= VHCA_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != VHCA_PORT_NUM)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~VHCA_QP_ACCESS_SUPPORTED))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > VHCA_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > VHCA_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > VHCA_QPN_MAX)
		return -EINVAL;
	return vhca_qp_check_path(attr, mask, type);
}

/**
 * vhca_qp_next_state - the state a modify_qp moves to, if it may
 * @cur: the QP's state now
 * @attr: the new attributes
 * @mask: which of them are given
 * @type: the QP's type
 * @next: out, the state after the modify (@cur without IB_QP_STATE)
 *
 * ib_core's IBTA table decides which transitions exist and which
 * attributes each requires and allows; IB_QP_CUR_STATE, when given, must
 * name the state the QP is in.
 *
 * Return: 0, or -EINVAL.
 */
int vhca_qp_next_state(enum ib_qp_state cur, const struct ib_qp_attr *attr,
		       int mask, enum ib_qp_type type,
		       enum ib_qp_state *next)
{
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;

	*next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/* ib_modify_qp_is_ok() indexes its table with both states. */
	if (cur > IB_QPS_ERR || *next > IB_QPS_ERR)
		return -EINVAL;
	if (!ib_modify_qp_is_ok(cur, *next, type, mask))
		return -EINVAL;
	return 0;
}

static bool vhca_wr_opcode_ok(enum ib_qp_type type, enum ib_wr_opcode op)
{
	if (type >= ARRAY_SIZE(vhca_wr_opcodes) || op >= BITS_PER_LONG_LONG)
		return false;
	return vhca_wr_opcodes[type] & BIT_ULL(op);
}

/*
 * An atomic returns the old u64 into one 8-byte SGE. The remote address
 * is the responder's to judge: a misaligned one completes with
 * IB_WC_REM_INV_REQ_ERR (resp.c), as IBTA's invalid request NAK.
 */
static int vhca_atomic_wr_check(const struct ib_send_wr *wr)
{
	if (wr->send_flags & IB_SEND_INLINE)
		return -EINVAL;
	if (wr->num_sge != 1 || wr->sg_list[0].length != sizeof(u64))
		return -EINVAL;
	return 0;
}

/* A send, write or read: its SGEs, or for sends and writes inline data. */
static int vhca_data_wr_check(const struct vhca_sq *sq,
			      const struct ib_send_wr *wr)
{
	u32 len = 0;
	int i;

	if (!(wr->send_flags & IB_SEND_INLINE))
		return 0;
	if (wr->opcode == IB_WR_RDMA_READ)
		return -EINVAL;

	for (i = 0; i < wr->num_sge; i++)
		if (check_add_overflow(len, wr->sg_list[i].length, &len))
			return -EINVAL;
	return len > sq->max_inline ? -EINVAL : 0;
}

/**
 * vhca_send_wr_check - may this WR be queued on this send queue?
 * @sq: the send queue; its lock held by the caller (head and tail)
 * @type: the QP's type
 * @wr: one WR, not its successors
 *
 * Return: 0; -EINVAL for an opcode the QP type lacks, too many SGEs,
 * inline data larger than the slot or with a read or an atomic, an atomic
 * that is not one aligned u64 with one 8-byte SGE, or a UD send without
 * an AH; -ENOMEM if the queue holds max_wr WRs already.
 */
int vhca_send_wr_check(const struct vhca_sq *sq, enum ib_qp_type type,
		       const struct ib_send_wr *wr)
{
	int err;

	if (!vhca_wr_opcode_ok(type, wr->opcode))
		return -EINVAL;

	switch (wr->opcode) {
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		err = 0;
		break;
	case IB_WR_REG_MR:
		err = reg_wr(wr)->mr ? 0 : -EINVAL;
		break;
	default:
		if (wr->num_sge < 0 || wr->num_sge > sq->max_sge)
			return -EINVAL;
		if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
			err = vhca_atomic_wr_check(wr);
		else
			err = vhca_data_wr_check(sq, wr);
		break;
	}
	if (err)
		return err;

	if (type != IB_QPT_RC && !ud_wr(wr)->ah)
		return -EINVAL;
	if (sq->head - sq->tail >= sq->max_wr)
		return -ENOMEM;
	return 0;
}

/* The destination of a UD or GSI send, taken from its AH now. */
static void vhca_send_wqe_ud(struct vhca_send_wqe *wqe, enum ib_qp_type type,
			     u32 qp_qkey, const struct ib_ud_wr *ud)
{
	const struct ib_global_route *grh =
		rdma_ah_read_grh(&to_vhca_ah(ud->ah)->attr);

	wqe->ud.dgid = grh->dgid;
	wqe->ud.sgid_index = grh->sgid_index;
	wqe->ud.remote_qpn = ud->remote_qpn;
	/*
	 * A Q_Key with the high bit set stands for the QP's own (IBTA
	 * 10.2.5); ib_mad sends IB_QP_SET_QKEY on QP1, whose Q_Key is
	 * IB_QP1_QKEY.
	 */
	if (ud->remote_qkey & VHCA_QKEY_USE_QP)
		wqe->ud.remote_qkey = qp_qkey;
	else
		wqe->ud.remote_qkey = ud->remote_qkey;
}

/* A Bind MW WR: the window, the MR and the range, copied now. */
static void vhca_send_wqe_bind(struct vhca_send_wqe *wqe,
			       const struct vhca_bind_mw_wr *bind)
{
	wqe->bind.mw_rkey = bind->mw_rkey;
	wqe->bind.mr_lkey = bind->mr_lkey;
	wqe->bind.addr = bind->addr;
	wqe->bind.length = bind->length;
	wqe->bind.access = bind->access;
}

/* Inline data: the SGEs name kernel virtual addresses, copied now. */
static void vhca_send_wqe_inline(struct vhca_send_wqe *wqe,
				 const struct ib_send_wr *wr)
{
	const struct ib_sge *sge;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		sge = &wr->sg_list[i];
		memcpy(wqe->inline_data + wqe->inline_len,
		       (void *)(uintptr_t)sge->addr, sge->length);
		wqe->inline_len += sge->length;
	}
}

/**
 * vhca_send_wqe_build - encode a checked WR into a send-queue slot
 * @wqe: the slot, with room for the queue's SGEs and inline data
 * @type: the QP's type
 * @qp_qkey: the QP's Q_Key, for a UD send whose Q_Key asks for it
 * @wr: a WR vhca_send_wr_check() accepted
 *
 * Everything the engine needs is copied: the WR, its SGE array and its
 * inline data may be gone once post_send returns. The AH must outlive
 * the call only.
 */
void vhca_send_wqe_build(struct vhca_send_wqe *wqe, enum ib_qp_type type,
			 u32 qp_qkey, const struct ib_send_wr *wr)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
		wqe->ex.imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex.imm_data = wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		wqe->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->atomic.swap = atomic_wr(wr)->swap;
		wqe->atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		wqe->reg.mr = reg_wr(wr)->mr;
		wqe->reg.key = reg_wr(wr)->key;
		wqe->reg.access = reg_wr(wr)->access;
		return;
	case IB_WR_BIND_MW:
		vhca_send_wqe_bind(wqe, vhca_bind_mw_wr(wr));
		return;
	default:
		break;
	}
	if (wr->opcode == IB_WR_LOCAL_INV)
		return;

	if (type != IB_QPT_RC)
		vhca_send_wqe_ud(wqe, type, qp_qkey, ud_wr(wr));

	if (wr->send_flags & IB_SEND_INLINE) {
		vhca_send_wqe_inline(wqe, wr);
		return;
	}
	wqe->num_sge = wr->num_sge;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
}

static void vhca_qp_event(struct vhca_qp *qp, enum ib_event_type type)
{
	struct ib_qp *ibqp = &qp->ibqp;
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = type,
	};

	vhca_dbg_qp(qp, "event %s\n", ib_event_msg(type));
	if (ibqp->event_handler)
		ibqp->event_handler(&ev, ibqp->qp_context);
}

/* Enter @next; the engine flushes both queues of a QP in ERR. */
static void vhca_qp_set_state(struct vhca_qp *qp, enum ib_qp_state next)
{
	lockdep_assert_held(&qp->state_lock);

	qp->state = next;
	/* A QP back from RESET is established anew. */
	if (next == IB_QPS_RESET)
		qp->comm_est = false;
}

/* Receives taken by other QPs' engines and not yet completed. */
static unsigned int vhca_qp_rx_busy(struct vhca_qp *qp)
{
	unsigned long flags;
	unsigned int busy;

	spin_lock_irqsave(&qp->state_lock, flags);
	busy = qp->rx_busy;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return busy;
}

/* Drop every queued WQE, without completions (IBTA 10.3.1, Reset). */
static void vhca_qp_reset_queues(struct vhca_qp *qp)
{
	unsigned long flags;

	if (qp->sq.uring.buf) {
		vhca_usq_reset(&qp->sq);
		if (qp->srq)
			return;
		spin_lock_irqsave(&qp->rq.lock, flags);
		vhca_urq_reset(&qp->rq);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		return;
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq.head = 0;
	qp->sq.tail = 0;
	spin_unlock_irqrestore(&qp->sq.lock, flags);

	if (qp->srq)
		return;
	spin_lock_irqsave(&qp->rq.lock, flags);
	qp->rq.head = 0;
	qp->rq.tail = 0;
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}

/*
 * What entering @next asks of the engine, after state_lock is dropped.
 * RESET and SQD (process context only) wait for the engine to leave the
 * QP; ERR and RTS (any context) only kick it.
 */
static void vhca_qp_entered(struct vhca_qp *qp, enum ib_qp_state next,
			    bool sqd_notify)
{
	switch (next) {
	case IB_QPS_RESET:
		vhca_engine_qp_stop(qp);
		/* Receives another QP's engine took complete first. */
		wait_var_event(&qp->rx_busy, !vhca_qp_rx_busy(qp));
		vhca_qp_reset_queues(qp);
		break;
	case IB_QPS_SQD:
		vhca_engine_qp_stop(qp);
		if (sqd_notify)
			vhca_qp_event(qp, IB_EVENT_SQ_DRAINED);
		break;
	case IB_QPS_ERR:
		/* IBTA 11.5.5.4: no more WQEs will come from the SRQ. */
		if (qp->srq)
			vhca_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
		vhca_engine_kick(qp);
		break;
	case IB_QPS_RTS:
		vhca_engine_kick(qp);
		break;
	default:
		break;
	}
}

/* Copy the attributes @mask names into qp->attr. */
static void vhca_qp_apply(struct vhca_qp *qp, const struct ib_qp_attr *attr,
			  int mask)
{
	struct ib_qp_attr *cur = &qp->attr;

	lockdep_assert_held(&qp->state_lock);

	if (mask & IB_QP_ACCESS_FLAGS)
		cur->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		cur->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		cur->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		cur->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		const struct ib_gid_attr *sgid = attr->ah_attr.grh.sgid_attr;

		cur->ah_attr = attr->ah_attr;
		/*
		 * ib_core owns the reference; the engine routes by dgid, and
		 * the responder checks the source GID, as a GRH carries it
		 * (vhca_fabric_resolve()). ib_modify_qp() always resolves
		 * it; only a KUnit case calling in directly may leave it
		 * out, and that QP then matches no peer.
		 */
		cur->ah_attr.grh.sgid_attr = NULL;
		if (sgid)
			qp->sgid = sgid->gid;
		else
			memset(&qp->sgid, 0, sizeof(qp->sgid));
	}
	if (mask & IB_QP_PATH_MTU)
		cur->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		cur->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		cur->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		cur->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		cur->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		cur->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		cur->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		cur->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		cur->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MIG_STATE)
		cur->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_DEST_QPN)
		cur->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		cur->en_sqd_async_notify = attr->en_sqd_async_notify;
}

/**
 * vhca_modify_qp - change a QP's state and attributes
 * @ibqp: the QP
 * @attr: the new attributes
 * @mask: which of them to apply
 * @udata: NULL, or a user QP's: librxe sends no driver data
 *
 * The values are checked, then the transition, and both applied under
 * state_lock, where the engine reads them. What the new state asks of the
 * engine happens after: RESET and SQD wait for it to leave the QP (so
 * this may sleep), ERR and RTS kick it.
 *
 * Return: 0; -EOPNOTSUPP for unknown driver input or an alternate path;
 * -EINVAL for a bad value or a transition IBTA does not allow with this
 * @mask.
 */
int vhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct vhca_qp *qp = to_vhca_qp(ibqp);
	enum ib_qp_state prev, next;
	unsigned long flags;
	int err;

	if (vhca_udata_in_check(udata, 0))
		return -EOPNOTSUPP;

	err = vhca_qp_check_attr(attr, mask, ibqp->qp_type);
	if (err)
		return err;

	spin_lock_irqsave(&qp->state_lock, flags);
	prev = qp->state;
	err = vhca_qp_next_state(prev, attr, mask, ibqp->qp_type, &next);
	if (!err) {
		vhca_qp_apply(qp, attr, mask);
		vhca_qp_set_state(qp, next);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (err) {
		vhca_dbg_qp(qp, "state %d -> %d mask %#x refused\n", prev,
			    (mask & IB_QP_STATE) ? attr->qp_state : prev, mask);
		return err;
	}

	vhca_dbg_qp(qp, "state %d -> %d mask %#x\n", prev, next, mask);
	if (next != prev)
		vhca_qp_entered(qp, next,
				(mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
				attr->en_sqd_async_notify);
	return 0;
}

static void vhca_qp_caps_of(const struct vhca_qp *qp, struct ib_qp_cap *cap)
{
	memset(cap, 0, sizeof(*cap));
	cap->max_send_wr = qp->sq.max_wr;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	if (!qp->srq) {
		cap->max_recv_wr = qp->rq.max_wr;
		cap->max_recv_sge = qp->rq.max_sge;
	}
}

/**
 * vhca_query_qp - report a QP's attributes
 * @ibqp: the QP
 * @attr: out, every attribute, whatever @mask asks for
 * @mask: ignored: all of @attr is filled
 * @init: out, the creation attributes with the granted caps
 *
 * Return: 0.
 */
int vhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct vhca_qp *qp = to_vhca_qp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	/* A move to SQD returns once the engine has left the QP. */
	attr->sq_draining = 0;
	vhca_qp_caps_of(qp, &attr->cap);

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = VHCA_PORT_NUM;
	return 0;
}

static int vhca_sq_init(struct vhca_sq *sq, const struct ib_qp_cap *cap)
{
	spin_lock_init(&sq->lock);
	sq->max_wr = cap->max_send_wr;
	sq->max_sge = cap->max_send_sge;
	sq->max_inline = cap->max_inline_data;
	sq->stride = vhca_sq_stride(sq->max_sge, sq->max_inline);
	sq->size = roundup_pow_of_two(sq->max_wr);
	sq->head = 0;
	sq->tail = 0;
	sq->wqe = kvcalloc(sq->size, sq->stride, GFP_KERNEL);
	return sq->wqe ? 0 : -ENOMEM;
}

/*
 * A user send queue: the ring librxe writes, and one slot of @sq->wqe,
 * where the engine stages the element it executes (queue_user.c).
 */
static int vhca_sq_init_user(struct vhca_sq *sq, const struct ib_qp_cap *cap,
			     struct ib_udata *udata, struct mminfo *mi)
{
	int n;

	spin_lock_init(&sq->lock);
	sq->max_wr = cap->max_send_wr;
	sq->max_sge = cap->max_send_sge;
	sq->max_inline = cap->max_inline_data;
	sq->stride = vhca_sq_stride(sq->max_sge, sq->max_inline);
	sq->size = 1;
	sq->head = 0;
	sq->tail = 0;
	sq->staged = false;
	sq->wqe = kzalloc(sq->stride, GFP_KERNEL);
	if (!sq->wqe)
		return -ENOMEM;
	n = vhca_uring_init(&sq->uring, udata, sq->max_wr,
			    vhca_user_sq_elem(sq->max_sge, sq->max_inline), mi);
	if (n < 0) {
		kfree(sq->wqe);
		sq->wqe = NULL;
		return n;
	}
	return 0;
}

static void vhca_sq_fini(struct vhca_sq *sq)
{
	vhca_uring_fini(&sq->uring);
	kvfree(sq->wqe);
	sq->wqe = NULL;
}

/*
 * Reserve the QP's number: 1 for the GSI QP, else the next free one of
 * 2 .. VHCA_MAX_QP + 1. The slot holds no pointer yet (xa_load() sees
 * NULL) until vhca_create_qp() stores the finished QP.
 */
static int vhca_qpn_reserve(struct vhca_dev *vdev, enum ib_qp_type type,
			    u32 *qpn)
{
	u32 next;
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = VHCA_QPN_GSI;
		return xa_insert(&vdev->qps, VHCA_QPN_GSI, NULL, GFP_KERNEL);
	}

	next = atomic_read(&vhca_qpn_hint);
	err = xa_alloc_cyclic(&vdev->qps, qpn, NULL,
			      XA_LIMIT(VHCA_QPN_GSI + 1,
				       VHCA_QPN_GSI + VHCA_MAX_QP),
			      &next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	atomic_set(&vhca_qpn_hint, next);
	return 0;
}

/* Everything but the queues, from the creation attributes. */
static void vhca_qp_setup(struct vhca_qp *qp, struct vhca_dev *vdev,
			  const struct ib_qp_init_attr *init)
{
	qp->vdev = vdev;
	refcount_set(&qp->refs, 1);
	init_completion(&qp->released);
	spin_lock_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->attr.port_num = VHCA_PORT_NUM;
	qp->pdn = to_vhca_pd(qp->ibqp.pd)->base_pd.pdn;
	qp->srq = init->srq ? to_vhca_srq(init->srq) : NULL;
	qp->qops = &vhca_kern_queue_ops;	/* a user QP's: create_qp */
	qp->scq = to_vhca_cq(init->send_cq);
	qp->rcq = to_vhca_cq(init->recv_cq);
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
}

/**
 * vhca_create_qp - create an RC, UD or GSI queue pair
 * @ibqp: the QP ib_core allocated (INIT_RDMA_OBJ_SIZE), its pd set
 * @init: the creation attributes; @init->cap is rewritten with the caps
 *	granted
 * @udata: NULL for a kernel QP; for a user QP (RC or UD), librxe's: no
 *	input, a struct rxe_create_qp_resp out (where to map the rings)
 *
 * Checks everything first, reserves the QP number, builds the queues and
 * the engine's work items, and stores the QP in vdev->qps last: a lookup
 * finds a complete QP or none. A user QP's send queue and (without an
 * SRQ) receive queue are rings the process maps; its queue ops are
 * vhca_user_queue_ops.
 *
 * Return: 0; -EOPNOTSUPP for what vhca_qp_check_init() refuses, a user
 * GSI QP or unknown driver input; -EINVAL for bad caps or a short
 * response buffer; -EBUSY if the GSI QP exists; -EFAULT; -ENOMEM without
 * memory or with VHCA_MAX_QP QPs live.
 */
int vhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vhca_dev(ibqp->device);
	struct vhca_qp *qp = to_vhca_qp(ibqp);
	struct rxe_create_qp_resp resp = {};
	struct ib_qp_cap cap;
	u32 qpn;
	int err;

	err = vhca_qp_check_init(init);
	if (err)
		return err;
	if (udata && (init->qp_type == IB_QPT_GSI ||
		      vhca_udata_in_check(udata, 0)))
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	cap = init->cap;
	err = vhca_qp_caps(&cap, !!init->srq);
	if (err)
		return err;

	err = vhca_qpn_reserve(vdev, init->qp_type, &qpn);
	if (err)
		return err;

	vhca_qp_setup(qp, vdev, init);
	if (udata) {
		qp->qops = &vhca_user_queue_ops;
		err = vhca_sq_init_user(&qp->sq, &cap, udata, &resp.sq_mi);
	} else {
		err = vhca_sq_init(&qp->sq, &cap);
	}
	if (err)
		goto out_release_qpn;
	if (!qp->srq) {
		if (udata)
			err = vhca_rq_init_user(&qp->rq, cap.max_recv_wr,
						cap.max_recv_sge, udata,
						&resp.rq_mi);
		else
			err = vhca_rq_init(&qp->rq, cap.max_recv_wr,
					   cap.max_recv_sge);
		if (err)
			goto out_free_sq;
	}
	if (udata) {
		err = vhca_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto out_free_rq;
	}
	vhca_engine_qp_init(qp);
	ibqp->qp_num = qpn;
	init->cap = cap;

	/* The slot is reserved: this store allocates nothing, cannot fail. */
	WARN_ON(xa_is_err(xa_store(&vdev->qps, qpn, qp, GFP_KERNEL)));
	vhca_dbg_qp(qp, "type %d sq %u x %u B, rq %u, srq %s\n",
		    ibqp->qp_type, qp->sq.size, qp->sq.stride, cap.max_recv_wr,
		    qp->srq ? "yes" : "no");
	return 0;

out_free_rq:
	if (!qp->srq)
		vhca_rq_fini(&qp->rq);
out_free_sq:
	vhca_sq_fini(&qp->sq);
out_release_qpn:
	xa_release(&vdev->qps, qpn);
	return err;
}

/*
 * The QP is gone from the engine's sight: free the type 2 memory windows
 * bound to its number, then release the number.
 *
 * A window's context names its QP by number (xa_alloc_cyclic() hands
 * numbers out again), so a later QP with this number would inherit them.
 * vhca_destroy_qp() unpublished the QP by turning its slot into a
 * reservation, not by erasing it: from then on no lookup routes to the QP
 * (no access through a window can arrive on it) and no create_qp can get
 * the number. Once its engine is stopped for the last time, no Bind MW of
 * this QP runs or starts either, so mrc_mw_unbind_qp() misses no window,
 * and only after it has freed them all is the number free for reuse. The
 * caller holds no lock here (mrcore takes the windows' mutexes and waits
 * for the walkers inside their slots). Should a window's context write
 * fail, the window is still bound to the number: keep the number
 * reserved for the device's lifetime rather than hand it to a new QP.
 */
static void vhca_qpn_retire(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = qp->vdev;
	u32 qpn = qp->ibqp.qp_num;
	int err;

	err = mrc_mw_unbind_qp(&vdev->mdev, qpn);
	if (err) {
		ibdev_err(&vdev->ibdev,
			  "QP %u: memory windows still bound (%d): number not reused\n",
			  qpn, err);
		return;
	}
	xa_release(&vdev->qps, qpn);
}

/**
 * vhca_destroy_qp - destroy a queue pair
 * @ibqp: the QP
 * @udata: unused: kernel QPs only
 *
 * Unpublishes the QP (its number stays reserved), stops its engine work,
 * then waits for every reference the engine took through vhca_qp_get()
 * (requesters executing against this QP as responder) before freeing the
 * queues. WQEs still queued are dropped without completions. Type 2
 * memory windows bound to the QP go FREE (mrc_mw_unbind_qp()) before its
 * number can be reused. May sleep. ib_core frees the QP itself when this
 * returns.
 *
 * Return: 0.
 */
int vhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vhca_qp *qp = to_vhca_qp(ibqp);
	struct vhca_qp *found;
	unsigned long flags;

	/*
	 * In an allocating xarray a NULL store leaves the slot reserved:
	 * lookups see no QP, allocations skip the number. The slot exists,
	 * so nothing is allocated and the store cannot fail.
	 */
	found = xa_store(&qp->vdev->qps, ibqp->qp_num, NULL, GFP_KERNEL);
	WARN_ON(found != qp);
	/*
	 * A lookup that loaded @qp before the store is inside an RCU read
	 * section until its refcount_inc_not_zero(), which cannot fail
	 * while the table's reference stands. Past this grace period every
	 * such lookup holds its reference, which the wait below covers, and
	 * none touches @qp after ib_core frees it.
	 */
	synchronize_rcu();

	spin_lock_irqsave(&qp->state_lock, flags);
	qp->stopped = true;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	vhca_engine_qp_stop(qp);

	vhca_qp_put(qp);
	wait_for_completion(&qp->released);
	/*
	 * A requester that held @qp as its responder may have kicked it
	 * (vhca_qp_error()) after the stop above. No one holds @qp now, so
	 * this stop is the last.
	 */
	vhca_engine_qp_stop(qp);
	vhca_cq_sync_owed(ibqp->send_cq, ibqp->recv_cq);
	vhca_qpn_retire(qp);

	if (!qp->srq)
		vhca_rq_fini(&qp->rq);
	vhca_sq_fini(&qp->sq);
	vhca_dbg_qp(qp, "destroyed\n");
	return 0;
}

/* The state and Q_Key post_send works with; they may change right after. */
static enum ib_qp_state vhca_qp_snapshot(struct vhca_qp *qp, u32 *qkey)
{
	enum ib_qp_state state;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	state = qp->state;
	*qkey = qp->attr.qkey;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return state;
}

/**
 * vhca_post_send - queue send WRs
 * @ibqp: the QP
 * @wr: the first of a list of WRs
 * @bad_wr: out, on failure, the first WR not queued
 *
 * Each WR is checked and encoded in turn; on the first bad one the WRs
 * before it stay queued. In ERR the WRs are queued for the engine to
 * flush (ib_drain_sq() waits for such a flush). The WRs queued run in
 * this call when they may (vhca_engine_post()), else in the engine's
 * worker. Never sleeps.
 *
 * For a user QP this is the doorbell: librxe has written the WQEs into the
 * ring and posts no WR (ib_uverbs' POST_SEND with wr_count 0); the engine
 * takes them from the ring, short ones in this call
 * (vhca_engine_doorbell()).
 *
 * Return: 0; -EINVAL before RTS, for a bad WR, or for any WR on a user QP;
 * -ENOMEM if the queue is full.
 */
int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct vhca_qp *qp = to_vhca_qp(ibqp);
	struct vhca_sq *sq = &qp->sq;
	enum ib_qp_state state;
	unsigned long flags;
	bool queued = false;
	u32 qkey;
	int err = 0;

	state = vhca_qp_snapshot(qp, &qkey);
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR || (sq->uring.buf && wr)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (sq->uring.buf) {
		vhca_engine_doorbell(qp);
		return 0;
	}

	spin_lock_irqsave(&sq->lock, flags);
	for (; wr; wr = wr->next) {
		err = vhca_send_wr_check(sq, ibqp->qp_type, wr);
		if (err)
			break;
		vhca_send_wqe_build(vhca_sq_slot(sq, sq->head), ibqp->qp_type,
				    qkey, wr);
		/* The engine reads head under sq->lock: no barrier needed. */
		sq->head++;
		queued = true;
	}
	spin_unlock_irqrestore(&sq->lock, flags);

	if (err) {
		vhca_dbg_qp(qp, "wr_id %llu opcode %d: %d\n", wr->wr_id,
			    wr->opcode, err);
		*bad_wr = wr;
	}
	if (queued)
		vhca_engine_post(qp);
	return err;
}

/**
 * vhca_post_recv - queue receive WRs on the QP's own receive queue
 * @ibqp: the QP
 * @wr: the first of a list of WRs
 * @bad_wr: out, on failure, the first WR not queued
 *
 * In ERR the WRs are queued and flushed at once, in order, as IBTA allows
 * and ib_drain_rq() needs. Never sleeps.
 *
 * Return: 0; -EINVAL with an SRQ, in RESET, or for too many SGEs; -ENOMEM
 * if the queue is full.
 */
int vhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct vhca_qp *qp = to_vhca_qp(ibqp);
	bool flush = false;
	unsigned long flags;
	int err;

	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}

	/* Held across the post, so a move to ERR cannot miss these WRs. */
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == IB_QPS_RESET) {
		*bad_wr = wr;
		err = -EINVAL;
	} else {
		err = vhca_rq_post(&qp->rq, wr, bad_wr);
		flush = qp->state == IB_QPS_ERR;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	/* The engine flushes them, as it flushed the ones before. */
	if (flush)
		vhca_engine_kick(qp);
	return err;
}

/**
 * vhca_qp_get - look a QP up by number and take a reference
 * @vdev: the device
 * @qpn: the QP number
 *
 * Any context. A QP being destroyed is not found.
 *
 * Return: the QP, to be released with vhca_qp_put(), or NULL.
 */
struct vhca_qp *vhca_qp_get(struct vhca_dev *vdev, u32 qpn)
{
	struct vhca_qp *qp;

	rcu_read_lock();
	qp = xa_load(&vdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->refs))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

/**
 * vhca_qp_put - drop a reference vhca_qp_get() took
 * @qp: the QP
 */
void vhca_qp_put(struct vhca_qp *qp)
{
	if (refcount_dec_and_test(&qp->refs))
		complete(&qp->released);
}

/**
 * vhca_qp_error - move a QP to ERR on a fatal completion
 * @qp: the QP, referenced by the caller
 *
 * For the engine, holding no QP, RQ or CQ lock. A QP in RESET (moved
 * there meanwhile) or already in ERR is left alone. Otherwise the QP's
 * own RQ is flushed and the engine kicked to flush the SQ. No
 * IB_EVENT_QP_FATAL: for a requester-side error IBTA reports through the
 * completion; only an SRQ QP gets IB_EVENT_QP_LAST_WQE_REACHED. Never
 * sleeps.
 */
void vhca_qp_error(struct vhca_qp *qp)
{
	unsigned long flags;
	bool entered = false;

	spin_lock_irqsave(&qp->state_lock, flags);
	/* A QP being destroyed gets no more events. */
	if (!qp->stopped && qp->state != IB_QPS_RESET &&
	    qp->state != IB_QPS_ERR) {
		vhca_qp_set_state(qp, IB_QPS_ERR);
		entered = true;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (entered) {
		vhca_dbg_qp(qp, "error\n");
		vhca_qp_entered(qp, IB_QPS_ERR, false);
	}
}

