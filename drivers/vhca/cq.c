// SPDX-License-Identifier: GPL-2.0
/*
 * vhca completion queues: a ring of struct ib_wc in host memory.
 *
 * The engine adds completions with vhca_cq_post() from process or softirq
 * context; consumers poll and arm from any context. Everything is under
 * cq->lock, taken irqsave. The consumer's callbacks (the completion
 * handler, the CQ error event) run after the lock is dropped, so that a
 * handler may poll and rearm. core_locking.rst forbids running one CQ's
 * completion handler on two CPUs at once: a poster that finds the handler
 * running leaves the call to the poster running it (in_handler and
 * call_again). It also forbids calling back from inside a verb: a kernel
 * post_send that runs the engine itself (vhca_engine_post()) owes its
 * callbacks (deferred) and, as its run ends, raises an interrupt on its
 * CPU (an irq_work) that makes them, as a NIC's completion interrupt
 * would (vhca_cq_raise_owed()).
 *
 * Overflow: a completion that finds the ring full is lost, the CQ is in
 * error and IB_EVENT_CQ_ERR is dispatched, once. The completions queued
 * before it stay valid, and poll_cq returns them: it never fails, because
 * ib_core's pollers and the ULPs read its return as a count (mlx5, rxe and
 * siw never fail it either). Later completions are still queued while
 * there is room, so that a consumer tearing the CQ down still sees its
 * drain completions.
 *
 * A user CQ (rxe's user ABI) is a ring of struct ib_uverbs_wc the
 * process maps and polls itself (struct vhca_cq's uring): vhca_cq_post()
 * writes it through vhca_ucq_push() (queue_user.c) under the same lock,
 * with the same notification and overflow rules; req_notify_cq arms it as
 * any CQ; poll_cq through the kernel has nothing to do with it.
 */
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/slab.h>

#include "engine.h"
#include "vhca_loc.h"

static void vhca_cq_owed_irq(struct irq_work *work);

/*
 * The CQs this CPU's post_send runs owe callbacks, linked by owed_next,
 * and the interrupt that makes them. A run adds a CQ under its lock,
 * interrupts off, and raises the interrupt as it ends; the interrupt
 * takes them off. A work is raised only while its list holds a CQ, and
 * destroying that CQ's QPs waits for it (vhca_cq_sync_owed()), so none is
 * pending when vhca unloads.
 * A work is set up by the first run that raises it: a module's per-CPU
 * initializer gets no relocations, so it cannot hold a function pointer,
 * and KUnit runs vhca's suites before its module init.
 */
static DEFINE_PER_CPU(struct vhca_cq *, vhca_owed_cqs);
static DEFINE_PER_CPU(struct irq_work, vhca_owed_work);

static u32 vhca_cq_next(const struct vhca_cq *cq, u32 slot)
{
	return slot + 1 == cq->size ? 0 : slot + 1;
}

static u32 vhca_cq_count(struct vhca_cq *cq)
{
	lockdep_assert_held(&cq->lock);

	if (cq->head >= cq->tail)
		return cq->head - cq->tail;
	return cq->size - cq->tail + cq->head;
}

/* A user CQ's ring: @cqe completions of struct ib_uverbs_wc. */
static int vhca_ucq_ring(struct vhca_uring *r, struct ib_udata *udata,
			 int cqe, struct mminfo *mi)
{
	if (udata->outlen < sizeof(struct rxe_create_cq_resp))
		return -EINVAL;
	BUILD_BUG_ON(sizeof(struct rxe_create_cq_resp) !=
		     sizeof(struct rxe_resize_cq_resp));
	return vhca_uring_init(r, udata, cqe, sizeof(struct ib_uverbs_wc), mi);
}

/**
 * vhca_create_cq - create a completion queue
 * @ibcq: the CQ ib_core allocated
 * @attr: size, completion vector and flags
 * @udata: NULL for a kernel CQ; for a user CQ, librxe's: no input, a
 *	struct rxe_create_cq_resp out (where to map the ring)
 *
 * Return: 0, -EOPNOTSUPP for any creation flag or unknown driver input,
 * -EINVAL for a size outside [1, VHCA_MAX_CQE], a bad vector or a short
 * response buffer, -EFAULT, or -ENOMEM.
 */
int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct vhca_cq *cq = to_vhca_cq(ibcq);
	struct rxe_create_cq_resp resp = {};
	int n;

	if (attr->flags || vhca_udata_in_check(udata, 0))
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > VHCA_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;

	spin_lock_init(&cq->lock);
	if (udata) {
		n = vhca_ucq_ring(&cq->uring, udata, attr->cqe, &resp.mi);
		if (n < 0)
			return n;
		n = vhca_udata_out(udata, &resp, sizeof(resp));
		if (n) {
			vhca_uring_fini(&cq->uring);
			return n;
		}
		ibcq->cqe = attr->cqe;
		return 0;
	}

	cq->ring = kvcalloc(attr->cqe + 1, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring)
		return -ENOMEM;

	cq->size = attr->cqe + 1;
	ibcq->cqe = attr->cqe;
	return 0;
}

/**
 * vhca_destroy_cq - destroy a completion queue
 * @ibcq: the CQ; ib_core guarantees that no QP or SRQ uses it any more
 * @udata: unused
 *
 * No callback is owed it any more: destroying its QPs waited until the
 * runs that owed it some had them made (vhca_cq_sync_owed()).
 *
 * Return: 0.
 */
int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vhca_cq *cq = to_vhca_cq(ibcq);

	/* Nothing is owed it: its QPs' destruction saw to that. */
	vhca_uring_fini(&cq->uring);
	kvfree(cq->ring);
	return 0;
}

/* Racy: vhca_resize_cq() checks again once it holds the lock. */
static bool vhca_cq_fits(struct vhca_cq *cq, u32 cqe)
{
	unsigned long flags;
	bool fits;

	spin_lock_irqsave(&cq->lock, flags);
	fits = vhca_cq_count(cq) <= cqe;
	spin_unlock_irqrestore(&cq->lock, flags);
	return fits;
}

/*
 * Resize a user CQ: a new ring, whose place the process learns before the
 * CQ moves to it; the old one goes once the completions have moved.
 */
static int vhca_resize_ucq(struct vhca_cq *cq, int cqe, struct ib_udata *udata)
{
	struct rxe_resize_cq_resp resp = {};
	struct vhca_uring r = {};
	unsigned long flags;
	int err;

	err = vhca_ucq_ring(&r, udata, cqe, &resp.mi);
	if (err < 0)
		return err;
	err = vhca_udata_out(udata, &resp, sizeof(resp));
	if (!err) {
		spin_lock_irqsave(&cq->lock, flags);
		err = vhca_ucq_move(cq, &r, cqe);
		if (!err)
			cq->ibcq.cqe = cqe;
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	/* The old ring after a move, else the unused new one. */
	vhca_uring_fini(&r);
	return err;
}

/**
 * vhca_resize_cq - change the number of completions a CQ holds
 * @ibcq: the CQ
 * @cqe: the new size
 * @udata: NULL for a kernel CQ; for a user CQ, librxe's: no input, a
 *	struct rxe_resize_cq_resp out (where to map the new ring)
 *
 * The new ring is allocated without the lock; the queued completions move
 * to it, in order, under the lock. An overflowed CQ stays in error.
 *
 * Return: 0, -EOPNOTSUPP for unknown driver input, -EINVAL if @cqe is
 * above VHCA_MAX_CQE or below the completions queued (or 1) or for a short
 * response buffer, -EFAULT, or -ENOMEM.
 */
int vhca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct vhca_cq *cq = to_vhca_cq(ibcq);
	struct ib_wc *ring, *old;
	unsigned long flags;
	u32 n;

	if (vhca_udata_in_check(udata, 0))
		return -EOPNOTSUPP;
	if (cqe < 1 || cqe > VHCA_MAX_CQE)
		return -EINVAL;
	if (cq->uring.buf)
		return vhca_resize_ucq(cq, cqe, udata);
	if (udata || !vhca_cq_fits(cq, cqe))
		return -EINVAL;

	ring = kvcalloc(cqe + 1, sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return -ENOMEM;

	spin_lock_irqsave(&cq->lock, flags);
	if (vhca_cq_count(cq) > cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kvfree(ring);
		return -EINVAL;
	}
	for (n = 0; cq->tail != cq->head; n++) {
		ring[n] = cq->ring[cq->tail];
		cq->tail = vhca_cq_next(cq, cq->tail);
	}
	old = cq->ring;
	cq->ring = ring;
	cq->size = cqe + 1;
	cq->head = n;
	cq->tail = 0;
	ibcq->cqe = cqe;
	spin_unlock_irqrestore(&cq->lock, flags);

	kvfree(old);
	return 0;
}

/**
 * vhca_poll_cq - take completions off a CQ
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: where the completions go, oldest first
 *
 * Callable from any context, on several CPUs at once.
 *
 * Return: the number of completions taken, 0 if there were none. Never
 * negative, even after an overflow (see the top of this file), but for a
 * user CQ, polled by the process in its ring: -EOPNOTSUPP (a raw POLL_CQ
 * command).
 */
int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct vhca_cq *cq = to_vhca_cq(ibcq);
	unsigned long flags;
	int n = 0;

	if (cq->uring.buf)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && cq->tail != cq->head) {
		wc[n++] = cq->ring[cq->tail];
		cq->tail = vhca_cq_next(cq, cq->tail);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * vhca_req_notify_cq - arm a CQ's completion handler
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * The handler is called once, for the next completion (IB_CQ_NEXT_COMP)
 * or the next solicited or failed one (IB_CQ_SOLICITED), and the CQ is
 * disarmed. An IB_CQ_NEXT_COMP arm is not narrowed by a later
 * IB_CQ_SOLICITED one.
 *
 * Return: 1 if IB_CQ_REPORT_MISSED_EVENTS was given and completions are
 * queued (the caller must poll again), else 0.
 */
int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct vhca_cq *cq = to_vhca_cq(ibcq);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (flags & IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if ((flags & IB_CQ_SOLICITED) && cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_SOLICITED;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (cq->uring.buf ? !vhca_ucq_empty(cq) : cq->head != cq->tail))
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}

/*
 * Is the handler due for a completion just queued? IBTA: a solicited arm
 * fires for solicited completions and for every completion in error.
 */
static bool vhca_cq_due(struct vhca_cq *cq, const struct ib_wc *wc,
			bool solicited)
{
	lockdep_assert_held(&cq->lock);

	if (!cq->ibcq.comp_handler)
		return false;
	if (cq->notify == IB_CQ_NEXT_COMP)
		return true;
	return cq->notify == IB_CQ_SOLICITED &&
	       (solicited || wc->status != IB_WC_SUCCESS);
}

/*
 * Call the handler, then again for every notification that came while it
 * ran: posters on other CPUs left those calls to us.
 */
static void vhca_cq_run_handler(struct vhca_cq *cq, bool owed_irq)
{
	unsigned long flags;
	bool again;

	do {
		/*
		 * As from an interrupt: a handler that raises a softirq
		 * (IB_POLL_SOFTIRQ's irq_poll) has it run at the enable,
		 * not later from ksoftirqd. In the interrupt a post_send's
		 * run raised (vhca_cq_owed_irq()), bottom halves may not be
		 * toggled: the softirq runs at the run's own enable if the
		 * interrupt came before it (as it does on x86, a self-IPI
		 * at the run's end), else as the interrupt ends.
		 */
		if (owed_irq) {
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		} else {
			local_bh_disable();
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
			local_bh_enable();
		}

		spin_lock_irqsave(&cq->lock, flags);
		again = cq->call_again;
		cq->call_again = false;
		cq->in_handler = again;
		spin_unlock_irqrestore(&cq->lock, flags);
	} while (again);
}

static void vhca_cq_error_event(struct vhca_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/* Make callbacks @what; @owed_irq: from vhca_cq_owed_irq(). */
static void vhca_cq_make(struct vhca_cq *cq, u8 what, bool owed_irq)
{
	if (what & VHCA_CQ_DEFER_ERROR)
		vhca_cq_error_event(cq);
	if (what & VHCA_CQ_DEFER_HANDLER)
		vhca_cq_run_handler(cq, owed_irq);
}

/*
 * Make callbacks @what now, or, in a run that may not call back
 * (vhca_engine_post()), owe them on this CPU's list, once per CQ: a CQ
 * owed already, here or on another CPU, gets @what added, and the run
 * that owes it makes both.
 */
static void vhca_cq_callback(struct vhca_cq *cq, u8 what)
{
	unsigned long flags;

	if (!vhca_engine_nosleep()) {
		vhca_cq_make(cq, what, false);
		return;
	}
	spin_lock_irqsave(&cq->lock, flags);
	if (!cq->deferred) {
		cq->owed_next = __this_cpu_read(vhca_owed_cqs);
		__this_cpu_write(vhca_owed_cqs, cq);
	}
	cq->deferred |= what;
	cq->was_owed = true;
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * The interrupt a post_send's run raised as it ended: make the callbacks
 * it owed, in hard interrupt context as a NIC's completion interrupt
 * would. A softirq a handler raises (irq_poll) runs as the interrupt
 * ends, or at the run's enable if it came before that, in one pass with
 * the rest, not from ksoftirqd.
 */
static void vhca_cq_owed_irq(struct irq_work *work)
{
	struct vhca_cq *cq;
	u8 owed;

	while ((cq = __this_cpu_read(vhca_owed_cqs))) {
		spin_lock(&cq->lock);
		__this_cpu_write(vhca_owed_cqs, cq->owed_next);
		owed = cq->deferred;
		cq->deferred = 0;
		spin_unlock(&cq->lock);
		vhca_cq_make(cq, owed, true);
	}
}

static bool vhca_cq_was_owed(struct ib_cq *ibcq)
{
	return ibcq && READ_ONCE(to_vhca_cq(ibcq)->was_owed);
}

/**
 * vhca_cq_sync_owed - wait for the calls runs owed CQs of a dying QP
 * @send_cq: the QP's send CQ, or NULL
 * @recv_cq: its receive CQ, or NULL
 *
 * A run that owed one of the CQs a call may have let the QP go before the
 * call was made, and ib_core may then free the CQ (ib_free_cq() cancels
 * the CQ's own work first, which a late handler call would queue again).
 * A run keeps bottom halves off until it has raised its interrupt, an RCU
 * read-side section: after a grace period every such interrupt is
 * raised, and then waited for. Only CQs that were ever owed pay for it.
 *
 * Context: process context; sleeps. No run may reach the CQs through
 * the QP any more (vhca_destroy_qp() has waited for its references).
 */
void vhca_cq_sync_owed(struct ib_cq *send_cq, struct ib_cq *recv_cq)
{
	int cpu;

	if (!vhca_cq_was_owed(send_cq) && !vhca_cq_was_owed(recv_cq))
		return;
	synchronize_rcu();
	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&vhca_owed_work, cpu));
}

/**
 * vhca_cq_raise_owed - have the callbacks this CPU's run owes made
 *
 * Called as a kernel post_send's run ends (vhca_engine_nosleep_end()),
 * once vhca_engine_nosleep() is false again and before bottom halves come
 * back on: raises the interrupt that makes them, once for the whole run.
 *
 * Context: task context, bottom halves off, in no run.
 */
void vhca_cq_raise_owed(void)
{
	struct irq_work *work;
	unsigned long flags;

	/*
	 * Interrupts off: this CPU's interrupt may not find the work half
	 * set up, nor empty the list between the look and the queue (a work
	 * queued with an empty list would be harmless, but one is queued
	 * only while a CQ whose destruction waits for it is on the list).
	 */
	local_irq_save(flags);
	if (__this_cpu_read(vhca_owed_cqs)) {
		work = this_cpu_ptr(&vhca_owed_work);
		if (unlikely(!work->func))
			*work = IRQ_WORK_INIT_HARD(vhca_cq_owed_irq);
		irq_work_queue(work);
	}
	local_irq_restore(flags);
}

/* A completion found the ring full: report the CQ in error, once. */
static void vhca_cq_lost(struct vhca_cq *cq, const struct ib_wc *wc,
			 bool first)
{
	ibdev_dbg(cq->ibcq.device,
		  "CQ overflow: lost wr_id 0x%llx status %d opcode %d\n",
		  wc->wr_id, wc->status, wc->opcode);
	if (first)
		vhca_cq_callback(cq, VHCA_CQ_DEFER_ERROR);
}

/**
 * vhca_cq_post - add a completion to a CQ
 * @cq: the CQ
 * @wc: the completion; copied
 * @solicited: the completion is for a message sent with IB_SEND_SOLICITED
 *
 * Never sleeps; callable from process and softirq context. Calls the
 * completion handler if the CQ is armed for this completion, after
 * dropping the CQ lock. The caller must therefore hold no lock that the
 * handler could need through a verb (a QP's queue or state lock), and,
 * per core_locking.rst, must not be inside a verb called by the consumer
 * (post_send, post_recv, modify_qp...) when the handler may fire, but
 * for a kernel post_send's run, which owes its callbacks until it ends.
 *
 * Return: 0, or -ENOSPC if the ring is full: the completion is lost, the
 * CQ is in error and IB_EVENT_CQ_ERR has been dispatched (on the first
 * loss).
 */
int vhca_cq_post(struct vhca_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	bool call = false;
	bool first;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->uring.buf) {
		if (unlikely(!vhca_ucq_push(cq, wc)))
			goto lost;
	} else {
		if (unlikely(vhca_cq_next(cq, cq->head) == cq->tail))
			goto lost;
		cq->ring[cq->head] = *wc;
		cq->head = vhca_cq_next(cq, cq->head);
	}
	if (vhca_cq_due(cq, wc, solicited)) {
		cq->notify = 0;
		if (cq->in_handler) {
			cq->call_again = true;
		} else {
			cq->in_handler = true;
			call = true;
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (call)
		vhca_cq_callback(cq, VHCA_CQ_DEFER_HANDLER);
	return 0;

lost:
	first = !cq->overflow;
	cq->overflow = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	vhca_cq_lost(cq, wc, first);
	return -ENOSPC;
}
