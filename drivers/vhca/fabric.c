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
