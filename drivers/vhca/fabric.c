// SPDX-License-Identifier: GPL-2.0
/*
 * vhca fabric: the in-kernel loopback fabric joining every vhca port on
 * the host.
 *
 * There are no wires, UDP or ICRC: a requester's engine delivers a
 * message by finding the port that owns the destination GID and, on that
 * device, the destination QP, and then executing the responder's side
 * itself. A port joins the fabric once its device is registered and
 * leaves it in dealloc_driver. Routing takes a registration reference
 * (ib_device_try_get()), so a device being unregistered stops receiving
 * and its unregistration waits for deliveries in progress.
 *
 * Flow: the requester's engine calls vhca_fabric_resolve() for each
 * message; it routes the GID (vhca_fabric_route()), takes the QP by
 * number (vhca_qp_get()), checks the QP's state and connection and
 * establishes it; vhca_fabric_release() drops both references. Peer
 * resolution is the seam a wire transport takes over.
 */
#include <linux/list.h>
#include <linux/spinlock.h>
#include <rdma/ib_cache.h>

#include "vhca_loc.h"

/* Protects vhca_fabric_ports. */
static DEFINE_SPINLOCK(vhca_fabric_lock);
static LIST_HEAD(vhca_fabric_ports);

/**
 * vhca_fabric_add - connect a device's port to the fabric
 * @vdev: a registered device
 */
void vhca_fabric_add(struct vhca_dev *vdev)
{
	spin_lock_bh(&vhca_fabric_lock);
	list_add_tail(&vdev->fabric_node, &vhca_fabric_ports);
	spin_unlock_bh(&vhca_fabric_lock);
}

/**
 * vhca_fabric_del - disconnect a device's port
 * @vdev: the device; a no-op if it never joined
 */
void vhca_fabric_del(struct vhca_dev *vdev)
{
	spin_lock_bh(&vhca_fabric_lock);
	list_del_init(&vdev->fabric_node);
	spin_unlock_bh(&vhca_fabric_lock);
}

/**
 * vhca_fabric_route - find the device whose port holds a GID
 * @dgid: destination GID (RoCE v2)
 *
 * Context: any context but hard IRQ; does not sleep.
 * Return: the device with a registration reference held, to be dropped
 * with ib_device_put(), or NULL if no registered vhca port holds @dgid.
 */
struct vhca_dev *vhca_fabric_route(const union ib_gid *dgid)
{
	const struct ib_gid_attr *attr;
	struct vhca_dev *vdev;

	spin_lock_bh(&vhca_fabric_lock);
	list_for_each_entry(vdev, &vhca_fabric_ports, fabric_node) {
		attr = rdma_find_gid_by_port(&vdev->ibdev, dgid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP,
					     VHCA_PORT_NUM, NULL);
		if (IS_ERR(attr))
			continue;
		rdma_put_gid_attr(attr);
		if (ib_device_try_get(&vdev->ibdev)) {
			spin_unlock_bh(&vhca_fabric_lock);
			return vdev;
		}
	}
	spin_unlock_bh(&vhca_fabric_lock);
	return NULL;
}

/**
 * vhca_fabric_release - drop what vhca_fabric_resolve() held
 * @peer: the responder it filled
 */
void vhca_fabric_release(struct vhca_peer *peer)
{
	vhca_qp_put(peer->qp);
	ib_device_put(&peer->vdev->ibdev);
}

/**
 * vhca_fabric_resolve - find the responder of a message
 * @qp: the requester QP
 * @sgid: the source GID of an RC message (@qp's AV's), as its GRH carries
 *	it; unused for UD
 * @dgid: the destination GID (the connected peer's for RC, the AH's for UD)
 * @dqpn: the destination QP number
 * @nosleep: the requester's run may not call back (vhca_engine_post())
 * @peer: out: the responder, held
 *
 * Routes @dgid to a device (vhca_fabric_route()), looks @dqpn up there and
 * checks the QP would accept the message: it can receive, and for RC it is
 * RC and connected to @qp: its destination QP number is @qp's, its
 * destination GID is @sgid and its own source GID is @dgid, as rxe's
 * check_addr() compares a packet's addresses with the QP's path. The QP
 * number alone would let any QP of that number on another port (a user
 * QP on another vhca device) into the connection. A UD message needs a
 * UD or GSI QP. The first
 * message to reach an RC responder in RTR dispatches IB_EVENT_COMM_EST.
 * The responder's attributes the engine needs are copied into @peer.
 *
 * This is the seam a wire transport takes over: with a wire, the
 * requester's engine would hand the message to the transport here, and
 * the receiving side would resolve its own QP and enter the responder
 * (resp.c) with the peer and request it built from the packet.
 *
 * Context: a run of the requester's engine; does not sleep.
 * Return: 0 with @peer filled and held (vhca_fabric_release() it);
 * -ENOENT if the message is lost; with @nosleep, -EAGAIN if it would
 * dispatch IB_EVENT_COMM_EST (nothing done: the consumer's handler is
 * not called from inside its own verb).
 */
int vhca_fabric_resolve(struct vhca_qp *qp, const union ib_gid *sgid,
			const union ib_gid *dgid, u32 dqpn, bool nosleep,
			struct vhca_peer *peer)
{
	struct vhca_qp *rqp;
	unsigned long flags;
	bool ok, comm_est;

	peer->vdev = vhca_fabric_route(dgid);
	if (!peer->vdev)
		return -ENOENT;

	rqp = vhca_qp_get(peer->vdev, dqpn);
	if (!rqp) {
		ib_device_put(&peer->vdev->ibdev);
		return -ENOENT;
	}
	peer->qp = rqp;

	spin_lock_irqsave(&rqp->state_lock, flags);
	ok = !rqp->stopped && vhca_state_receives(rqp->state);
	if (qp->ibqp.qp_type == IB_QPT_RC)
		ok = ok && rqp->ibqp.qp_type == IB_QPT_RC &&
		     rqp->attr.dest_qp_num == qp->ibqp.qp_num &&
		     !memcmp(&rqp->attr.ah_attr.grh.dgid, sgid, sizeof(*sgid)) &&
		     !memcmp(&rqp->sgid, dgid, sizeof(*dgid));
	else
		ok = ok && rqp->ibqp.qp_type != IB_QPT_RC;
	peer->access = rqp->attr.qp_access_flags;
	peer->qkey = rqp->attr.qkey;
	peer->min_rnr_timer = rqp->attr.min_rnr_timer;
	/* IBTA 11.6.3: the first message to arrive in RTR establishes. */
	comm_est = ok && rqp->ibqp.qp_type == IB_QPT_RC &&
		   rqp->state == IB_QPS_RTR && !rqp->comm_est;
	if (comm_est && !nosleep)
		rqp->comm_est = true;
	spin_unlock_irqrestore(&rqp->state_lock, flags);

	if (!ok || (comm_est && nosleep)) {
		vhca_fabric_release(peer);
		return ok ? -EAGAIN : -ENOENT;
	}
	if (comm_est && rqp->ibqp.event_handler) {
		struct ib_event ev = {
			.device = rqp->ibqp.device,
			.element.qp = &rqp->ibqp,
			.event = IB_EVENT_COMM_EST,
		};

		rqp->ibqp.event_handler(&ev, rqp->ibqp.qp_context);
	}
	return 0;
}
