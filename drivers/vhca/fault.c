// SPDX-License-Identifier: GPL-2.0
/*
 * vhca engine, page faults (ODP): the device's fault queue and the
 * fault-to-resume histogram.
 *
 * A walk that meets a non-present or read-only MTT entry of an ODP
 * context fails -EAGAIN and records the fault in the requester QP's
 * struct vhca_fault, whether the key is local (an SGE) or
 * the responder's (an RDMA or atomic target, or a send's source probed
 * before the receive is taken). The engine then parks the QP: the WQE
 * stays at the tail uncompleted, the fault goes on the device's fault
 * queue (fault_wq) and the worker returns, so other QPs run on. The
 * fault work has mrcore map the pages (mrc_odp_fault()) and queues the
 * send queue again, which executes the WQE from its start; every
 * operation is idempotent up to the point a fault can stop it (an atomic
 * faults before it changes the target, a receive is not taken before
 * the source is probed). A fault that cannot be resolved (no VMA, a
 * write to read-only memory, a key gone) lets the WQE run once more
 * without faulting, so it fails with the walker's access error. Once
 * the responder has taken a receive, or an atomic has changed its
 * target, the requester can no longer be parked: a fault on the receive's
 * scatter list or the atomic's result SGE is resolved in place, in the
 * worker (or a doorbell's run), and the copy retried; a kernel
 * post_send's run, which cannot sleep, takes no such receive and runs no
 * atomic (engine.c).
 *
 * Flow: vhca_exec_wqe() (engine.c) returns with qp->fault pending; the
 * send queue's run calls vhca_fault_raise(), which parks the QP and queues
 * vhca_fault_work() on vdev->fault_wq; that work maps the pages, counts
 * the time in the histogram (debugfs "odp") and queues the send queue
 * again. A copy that cannot restart resolves its fault in place instead,
 * vhca_fault_resolve_sync().
 */
#include <linux/log2.h>
#include <linux/sched/clock.h>

#include "engine.h"
#include "engine_loc.h"
#include "vhca_loc.h"

/**
 * vhca_fault_resolve_sync - resolve a page fault in place
 * @f: the fault a walk recorded
 *
 * In the engine's worker or a doorbell's run, for a copy that cannot be
 * restarted as a whole (its key's device is held by the running
 * operation).
 *
 * Context: sleeps, except in a run that cannot (vhca_engine_nosleep()).
 * Return: true when the pages are mapped; false when they could not be,
 * or in a run that cannot sleep.
 */
bool vhca_fault_resolve_sync(struct vhca_fault *f)
{
	int err;

	f->pending = false;
	/*
	 * A run that cannot sleep takes no receive that could fault; one
	 * whose key became an ODP MR after it was posted fails instead.
	 */
	if (vhca_engine_nosleep()) {
		atomic64_inc(&f->vdev->odp.fault_errors);
		return false;
	}
	atomic64_inc(&f->vdev->odp.sync_faults);
	err = mrc_odp_fault(&f->vdev->mdev, f->key, f->iova, f->len,
			    f->write ? MRC_ODP_WRITE : 0);
	if (err)
		atomic64_inc(&f->vdev->odp.fault_errors);
	return !err;
}

/* Bucket of the fault-to-resume histogram for @ns. */
static unsigned int vhca_odp_hist_bucket(u64 ns)
{
	u64 us = div_u64(ns, NSEC_PER_USEC);

	if (!us)
		return 0;
	return min_t(unsigned int, ilog2(us), VHCA_ODP_HIST_BUCKETS - 1);
}

/**
 * vhca_fault_raise - park a QP on the device's fault queue
 * @qp: the QP whose WQE at the tail met a page fault (qp->fault)
 *
 * The fault's device (the responder's for a remote key) was held by
 * vhca_exec_wqe() until the fault work is done with it; one that was
 * going away cannot resolve anything, and the WQE runs again to fail.
 */
void vhca_fault_raise(struct vhca_qp *qp)
{
	struct vhca_fault *f = &qp->fault;
	struct vhca_dev *vdev = qp->vdev;

	f->pending = false;
	atomic64_inc(&vdev->odp.faults);
	if (!f->held) {
		atomic64_inc(&vdev->odp.fault_errors);
		qp->fault_failed = true;
		queue_work(vdev->wq, &qp->sq_work);
		return;
	}
	f->raised_ns = local_clock();
	/* sq_work reads it before looking at the queue. */
	WRITE_ONCE(qp->parked, true);
	queue_work(vdev->fault_wq, &qp->fault_work);
}

/**
 * vhca_fault_work - the fault queue's work for one parked QP
 * @work: the QP's fault_work
 *
 * Has mrcore map the pages, then resumes the QP, whose send queue
 * executes the WQE again.
 */
void vhca_fault_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(work, struct vhca_qp, fault_work);
	struct vhca_fault *f = &qp->fault;
	struct vhca_dev *vdev = qp->vdev;
	int err;

	err = mrc_odp_fault(&f->vdev->mdev, f->key, f->iova, f->len,
			    f->write ? MRC_ODP_WRITE : 0);
	ib_device_put(&f->vdev->ibdev);
	f->held = false;
	if (err) {
		atomic64_inc(&vdev->odp.fault_errors);
		vhca_dbg_qp(qp, "fault key 0x%08x iova 0x%llx: %d\n", f->key,
			    f->iova, err);
	}
	qp->fault_failed = err != 0;
	atomic64_inc(&vdev->odp.resume_hist[vhca_odp_hist_bucket(local_clock() -
								  f->raised_ns)]);
	/* Pairs with the READ_ONCE() in vhca_sq_run(): unparked last. */
	smp_store_release(&qp->parked, false);
	queue_work(vdev->wq, &qp->sq_work);
}
