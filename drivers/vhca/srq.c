// SPDX-License-Identifier: GPL-2.0
/*
 * vhca receive queues, a QP's own or shared (SRQ), and the SRQ verbs.
 *
 * A receive queue is a ring of power-of-two size with free-running u32
 * indices: post_recv fills at head, the engine consumes at tail, both
 * under rq->lock taken irqsave, so posting and consuming never sleep and
 * may run in any context. A slot holds the caller's wr_id and a copy of
 * its scatter list; the keys in it are checked by the engine when it
 * uses them, as a device does.
 *
 * SRQ limit: modify_srq(IB_SRQ_LIMIT) arms it; when the engine takes a
 * receive and fewer than the limit remain, the SRQ is disarmed and
 * IB_EVENT_SRQ_LIMIT_REACHED is dispatched, after the lock is dropped.
 * Arming with fewer receives already queued fires at the next receive
 * taken, not at once. Resizing an SRQ (IB_SRQ_MAX_WR) is not supported.
 *
 * A user RQ or SRQ (rxe's user ABI) is a ring shared with the process
 * instead (struct vhca_rq's uring): librxe posts into it with no verb,
 * the engine takes from it through vhca_urq_pop() (queue_user.c), under
 * the same lock, with the same limit rule.
 */
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "vhca_loc.h"

static struct vhca_recv_wqe *vhca_rq_slot(struct vhca_rq *rq, u32 index)
{
	return rq->wqe + (size_t)(index & (rq->size - 1)) * rq->stride;
}

/**
 * vhca_rq_init - set up an empty receive queue
 * @rq: the queue
 * @max_wr: receives the caller may have outstanding, 1 to VHCA_MAX_QP_WR
 * @max_sge: SGEs per receive, 0 to VHCA_MAX_SGE
 *
 * Sleeps (GFP_KERNEL).
 *
 * Return: 0, -EINVAL for a limit out of range, or -ENOMEM.
 */
int vhca_rq_init(struct vhca_rq *rq, u32 max_wr, u32 max_sge)
{
	BUILD_BUG_ON(VHCA_MAX_SRQ_WR > VHCA_MAX_QP_WR);

	if (max_wr < 1 || max_wr > VHCA_MAX_QP_WR || max_sge > VHCA_MAX_SGE)
		return -EINVAL;

	rq->size = roundup_pow_of_two(max_wr);
	rq->stride = struct_size((struct vhca_recv_wqe *)NULL, sge, max_sge);
	rq->wqe = kvcalloc(rq->size, rq->stride, GFP_KERNEL);
	if (!rq->wqe)
		return -ENOMEM;

	spin_lock_init(&rq->lock);
	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	rq->head = 0;
	rq->tail = 0;
	rq->peeked = false;
	return 0;
}

/**
 * vhca_rq_init_user - build a user receive queue or SRQ: a shared ring
 * @rq: the queue
 * @max_wr: receives it must hold, 1 to VHCA_MAX_QP_WR
 * @max_sge: SGEs per receive, up to VHCA_MAX_SGE
 * @udata: the create verb's udata (the user context)
 * @mi: out, where the process maps the ring
 *
 * librxe writes struct rxe_recv_wqe elements into the ring and moves its
 * producer index; the engine takes them (vhca_urq_pop()).
 *
 * Return: 0, -EINVAL for bad sizes, or -ENOMEM.
 */
int vhca_rq_init_user(struct vhca_rq *rq, u32 max_wr, u32 max_sge,
		      struct ib_udata *udata, struct mminfo *mi)
{
	int n;

	if (max_wr < 1 || max_wr > VHCA_MAX_QP_WR || max_sge > VHCA_MAX_SGE)
		return -EINVAL;

	n = vhca_uring_init(&rq->uring, udata, max_wr,
			    vhca_user_rq_elem(max_sge), mi);
	if (n < 0)
		return n;
	spin_lock_init(&rq->lock);
	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	rq->head = 0;
	rq->tail = 0;
	return 0;
}

/**
 * vhca_rq_fini - free a receive queue
 * @rq: the queue; nothing posts to or consumes from it any more
 */
void vhca_rq_fini(struct vhca_rq *rq)
{
	vhca_uring_fini(&rq->uring);
	kvfree(rq->wqe);
	rq->wqe = NULL;
}

/**
 * vhca_rq_post - queue a list of receives
 * @rq: the queue
 * @wr: the first receive of the list
 * @bad_wr: set to the receive that failed
 *
 * The receives before the one that failed stay queued. Never sleeps.
 *
 * Return: 0, -EINVAL if a receive has more SGEs than @rq allows,
 * -ENOMEM if the queue holds max_wr receives already, or -EOPNOTSUPP for
 * a user queue (a ring: a raw POST_RECV command has no place there).
 */
int vhca_rq_post(struct vhca_rq *rq, const struct ib_recv_wr *wr,
		 const struct ib_recv_wr **bad_wr)
{
	struct vhca_recv_wqe *wqe;
	unsigned long flags;
	int err = 0;

	/* A user queue's receives are posted to its ring, by librxe. */
	if (rq->uring.buf) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}

	spin_lock_irqsave(&rq->lock, flags);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (u32)wr->num_sge > rq->max_sge) {
			err = -EINVAL;
			break;
		}
		if (rq->head - rq->tail >= rq->max_wr) {
			err = -ENOMEM;
			break;
		}

		wqe = vhca_rq_slot(rq, rq->head);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list, flex_array_size(wqe, sge,
							      wr->num_sge));
		rq->head++;
	}
	spin_unlock_irqrestore(&rq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

/* Receives queued; the queue's lock held. */
static u32 vhca_rq_count(struct vhca_rq *rq)
{
	lockdep_assert_held(&rq->lock);

	if (rq->uring.buf)
		return vhca_urq_count(rq);
	return rq->head - rq->tail;
}

/* Copy the receive at a kernel queue's tail into @out; false if none. */
static bool vhca_rq_copy_tail(struct vhca_rq *rq, struct vhca_recv_wqe *out)
{
	const struct vhca_recv_wqe *wqe;

	lockdep_assert_held(&rq->lock);

	if (rq->head == rq->tail)
		return false;

	wqe = vhca_rq_slot(rq, rq->tail);
	out->wr_id = wqe->wr_id;
	out->bad = false;
	out->num_sge = wqe->num_sge;
	memcpy(out->sge, wqe->sge, flex_array_size(wqe, sge, wqe->num_sge));
	return true;
}

static bool __vhca_rq_pop(struct vhca_rq *rq, struct vhca_recv_wqe *out)
{
	lockdep_assert_held(&rq->lock);

	if (rq->uring.buf)
		return vhca_urq_pop(rq, out);
	/* The receive at the tail is another taker's for now. */
	if (rq->peeked || !vhca_rq_copy_tail(rq, out))
		return false;
	rq->tail++;
	return true;
}

/**
 * vhca_rq_pop - take the oldest receive off a queue
 * @rq: the queue
 * @out: where it goes, with room for the queue's max_sge SGEs
 *
 * Never sleeps.
 *
 * Return: true, or false if the queue is empty.
 */
bool vhca_rq_pop(struct vhca_rq *rq, struct vhca_recv_wqe *out)
{
	unsigned long flags;
	bool found;

	spin_lock_irqsave(&rq->lock, flags);
	found = __vhca_rq_pop(rq, out);
	spin_unlock_irqrestore(&rq->lock, flags);
	return found;
}

/**
 * vhca_rq_peek - copy the oldest receive of a kernel queue, leaving it there
 * @rq: a kernel QP's own queue (not a user ring)
 * @out: where it goes, with room for the queue's max_sge SGEs
 *
 * The receive stays at the tail, counted against max_wr, until
 * vhca_rq_drop() takes it off or vhca_rq_unpeek() gives it back; no other
 * taker (vhca_rq_pop(), vhca_rq_peek()) gets it or any receive behind it
 * meanwhile: they find the queue empty. Never sleeps.
 *
 * Return: true, or false if the queue is empty or peeked at already.
 */
bool vhca_rq_peek(struct vhca_rq *rq, struct vhca_recv_wqe *out)
{
	unsigned long flags;
	bool found = false;

	if (WARN_ON_ONCE(rq->uring.buf))
		return false;
	spin_lock_irqsave(&rq->lock, flags);
	if (!rq->peeked) {
		found = vhca_rq_copy_tail(rq, out);
		rq->peeked = found;
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	return found;
}

/* End a peek: the receive leaves the queue if @used, else stays first. */
static void vhca_rq_end_peek(struct vhca_rq *rq, bool used)
{
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	if (!WARN_ON_ONCE(!rq->peeked || rq->head == rq->tail)) {
		rq->peeked = false;
		if (used)
			rq->tail++;
	}
	spin_unlock_irqrestore(&rq->lock, flags);
}

/**
 * vhca_rq_drop - take the receive vhca_rq_peek() copied off its queue
 * @rq: the queue
 *
 * Never sleeps.
 */
void vhca_rq_drop(struct vhca_rq *rq)
{
	vhca_rq_end_peek(rq, true);
}

/**
 * vhca_rq_unpeek - give back the receive vhca_rq_peek() copied
 * @rq: the queue
 *
 * It stays the queue's oldest, for the next taker. Never sleeps.
 */
void vhca_rq_unpeek(struct vhca_rq *rq)
{
	vhca_rq_end_peek(rq, false);
}

/**
 * vhca_srq_pop - take the oldest receive off an SRQ
 * @srq: the SRQ
 * @out: where it goes, with room for the SRQ's max_sge SGEs
 * @limit_reached: out: the armed limit was crossed
 *
 * As vhca_rq_pop(); if the SRQ limit is armed and fewer receives than
 * the limit remain, disarms it and says so in *@limit_reached: the caller
 * reports it with vhca_srq_limit_event() once it holds no lock (the
 * engine pops under the receiving QP's state lock). Never sleeps.
 *
 * Return: true, or false if the SRQ is empty.
 */
bool vhca_srq_pop(struct vhca_srq *srq, struct vhca_recv_wqe *out,
		  bool *limit_reached)
{
	struct vhca_rq *rq = &srq->rq;
	unsigned long flags;
	bool found;

	*limit_reached = false;
	spin_lock_irqsave(&rq->lock, flags);
	found = __vhca_rq_pop(rq, out);
	if (found && srq->limit && vhca_rq_count(rq) < srq->limit) {
		srq->limit = 0;
		*limit_reached = true;
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	return found;
}

/**
 * vhca_srq_limit_event - report that an SRQ fell below its armed limit
 * @srq: the SRQ vhca_srq_pop() said so of
 *
 * Called with no lock held, as the handler may call verbs.
 */
void vhca_srq_limit_event(struct vhca_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * vhca_create_srq - create a shared receive queue
 * @ibsrq: the SRQ ib_core allocated
 * @init_attr: type and limits; attr.max_wr and attr.max_sge are set to
 *	what the SRQ holds
 * @udata: NULL for a kernel SRQ; for a user SRQ, librxe's: no input, a
 *	struct rxe_create_srq_resp out (the ring's mminfo; srq_num 0: vhca
 *	has no XRC)
 *
 * A user SRQ's receives are a ring the process maps (vhca_rq_init_user()).
 *
 * Return: 0, -EOPNOTSUPP for a type other than IB_SRQT_BASIC or unknown
 * driver input, -EINVAL for max_wr outside [1, VHCA_MAX_SRQ_WR], max_sge
 * above VHCA_MAX_SGE, srq_limit above max_wr or a short response buffer,
 * -EFAULT, or -ENOMEM.
 */
int vhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct vhca_srq *srq = to_vhca_srq(ibsrq);
	struct ib_srq_attr *attr = &init_attr->attr;
	struct rxe_create_srq_resp resp = {};
	int err;

	if (init_attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	err = vhca_udata_in_check(udata, 0);
	if (err)
		return err;
	if (attr->max_wr < 1 || attr->max_wr > VHCA_MAX_SRQ_WR ||
	    attr->max_sge > VHCA_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	if (udata)
		err = vhca_rq_init_user(&srq->rq, attr->max_wr, attr->max_sge,
					udata, &resp.mi);
	else
		err = vhca_rq_init(&srq->rq, attr->max_wr, attr->max_sge);
	if (err)
		return err;
	if (udata) {
		err = vhca_udata_out(udata, &resp, sizeof(resp));
		if (err) {
			vhca_rq_fini(&srq->rq);
			return err;
		}
	}

	srq->limit = attr->srq_limit;
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	return 0;
}

/**
 * vhca_modify_srq - arm or disarm the SRQ limit
 * @ibsrq: the SRQ
 * @attr: the new srq_limit
 * @attr_mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (resizing) is not supported
 * @udata: NULL, or librxe's struct rxe_modify_srq_cmd, whose address for
 *	a resized ring's mminfo is unused: vhca does not resize SRQs
 *
 * A limit of 0 disarms.
 *
 * Return: 0, -EOPNOTSUPP for IB_SRQ_MAX_WR or unknown driver input, or
 * -EINVAL for an unknown mask bit or a limit above max_wr.
 */
int vhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask attr_mask, struct ib_udata *udata)
{
	struct vhca_srq *srq = to_vhca_srq(ibsrq);
	unsigned long flags;

	if (attr_mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (attr_mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (vhca_udata_in_check(udata, sizeof(struct rxe_modify_srq_cmd)))
		return -EOPNOTSUPP;
	if (!(attr_mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->rq.max_wr)
		return -EINVAL;

	spin_lock_irqsave(&srq->rq.lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return 0;
}

/**
 * vhca_query_srq - report an SRQ's limits
 * @ibsrq: the SRQ
 * @attr: filled with max_wr, max_sge and the armed limit (0 if none)
 *
 * Return: 0.
 */
int vhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct vhca_srq *srq = to_vhca_srq(ibsrq);
	unsigned long flags;

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	spin_lock_irqsave(&srq->rq.lock, flags);
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return 0;
}

/**
 * vhca_destroy_srq - destroy a shared receive queue
 * @ibsrq: the SRQ; ib_core guarantees that no QP uses it any more
 * @udata: unused
 *
 * Receives still queued are dropped without completions, as IBTA allows.
 *
 * Return: 0.
 */
int vhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	vhca_rq_fini(&to_vhca_srq(ibsrq)->rq);
	return 0;
}

/**
 * vhca_post_srq_recv - queue receives on a shared receive queue
 * @ibsrq: the SRQ
 * @wr: the first receive of the list
 * @bad_wr: set to the receive that failed
 *
 * Never sleeps.
 *
 * Return: as vhca_rq_post().
 */
int vhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	return vhca_rq_post(&to_vhca_srq(ibsrq)->rq, wr, bad_wr);
}
