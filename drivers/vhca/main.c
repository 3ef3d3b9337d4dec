// SPDX-License-Identifier: GPL-2.0
/*
 * vhca: module, link management and netdev tracking.
 *
 * "rdma link add <name> type vhca netdev <dev>" creates one vhca per
 * Ethernet netdev; "rdma link del", unregistering the netdev, and module
 * unload remove it. Every device is on one of two lists: the live list
 * from creation until ib_core calls dealloc_driver, then the dead list
 * until the reaper has seen the unregistration that called dealloc_driver
 * return, which is what lets module unload wait for every call into the
 * driver to finish.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <linux/workqueue.h>
#include <rdma/rdma_netlink.h>

#include "vhca_loc.h"

MODULE_AUTHOR("mrcore developers");
MODULE_DESCRIPTION("Virtual HCA: mrcore backend and RDMA provider");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("vhca");

/* The largest translation area mrcore manages, in MiB. */
#define VHCA_MAX_XLT_MB		(MRC_MAX_XLT_SIZE >> 20)

static unsigned int max_mkeys = 1U << 16;
module_param(max_mkeys, uint, 0444);
MODULE_PARM_DESC(max_mkeys,
		 "mkey context slots per device, a power of two in [2, 2^24] (default 65536)");

static unsigned int xlt_mb = 64;
module_param(xlt_mb, uint, 0444);
MODULE_PARM_DESC(xlt_mb,
		 "translation area per device in MiB, in [1, 4096] (default 64)");

/*
 * Read at each `rdma link add`: a device created while it is set maps
 * user pages through the DMA API, as a hardware device's driver has
 * mrcore do, so the tests reach mrcore's mapping paths (pinned and ODP).
 * The engine then copies at those mappings: with swiotlb=force it sees
 * bounce buffers the process does not.
 */
static bool user_dma_map;
module_param(user_dma_map, bool, 0644);
MODULE_PARM_DESC(user_dma_map,
		 "devices created while set DMA-map user pages instead of addressing them directly (default N)");

static struct dentry *vhca_debugfs_root;

/* Protects vhca_dev_list and vhca_dead_list. */
static DEFINE_MUTEX(vhca_list_lock);
/* Devices from creation until dealloc_driver. */
static LIST_HEAD(vhca_dev_list);
/* Devices past dealloc_driver whose unregistration may not have returned. */
static LIST_HEAD(vhca_dead_list);

static void vhca_reap(struct work_struct *work);
static DECLARE_WORK(vhca_reap_work, vhca_reap);

/*
 * Free the dead devices. ib_unregister_device() on an unregistered device
 * returns at once, but only after taking the device's unregistration lock,
 * which whoever called dealloc_driver holds until dealloc_driver has
 * returned: once it returns here, no thread is still in vhca code for
 * that device, and the reference retire took may go.
 */
static void vhca_reap(struct work_struct *work)
{
	struct vhca_dev *vdev;

	for (;;) {
		mutex_lock(&vhca_list_lock);
		vdev = list_first_entry_or_null(&vhca_dead_list,
						struct vhca_dev, list);
		if (vdev)
			list_del_init(&vdev->list);
		mutex_unlock(&vhca_list_lock);
		if (!vdev)
			return;

		ib_unregister_device(&vdev->ibdev);
		put_device(&vdev->ibdev.dev);
	}
}

/**
 * vhca_is_vhca - is this ib_device a vhca?
 * @ibdev: any ib_device
 *
 * Return: true if @ibdev was set up by this driver.
 */
bool vhca_is_vhca(struct ib_device *ibdev)
{
	return ibdev->ops.dealloc_driver == vhca_dealloc_driver;
}

/**
 * vhca_dev_retire - move a device from the live list to the dead list
 * @vdev: the device, in dealloc_driver
 *
 * Holds the device's memory until the reaper has fenced the caller of
 * dealloc_driver. The reaper is queued under the list lock, so a module
 * exit that finds the live list empty also finds the reaper queued.
 */
void vhca_dev_retire(struct vhca_dev *vdev)
{
	get_device(&vdev->ibdev.dev);
	mutex_lock(&vhca_list_lock);
	list_move_tail(&vdev->list, &vhca_dead_list);
	queue_work(system_wq, &vhca_reap_work);
	mutex_unlock(&vhca_list_lock);
}

/* Reserve @vdev's netdev and name; one vhca per netdev, one per name. */
static int vhca_dev_list_add(struct vhca_dev *vdev)
{
	struct vhca_dev *other;
	int err = 0;

	mutex_lock(&vhca_list_lock);
	list_for_each_entry(other, &vhca_dev_list, list) {
		if (other->ndev == vdev->ndev) {
			pr_err("%s: %s is already bound to %s\n", vdev->name,
			       vdev->ndev->name, other->name);
			err = -EEXIST;
			break;
		}
		/* A taken name is the user's mistake: say so with -EEXIST. */
		if (!strcmp(other->name, vdev->name)) {
			pr_err("%s: name already used by the vhca on %s\n",
			       vdev->name, other->ndev->name);
			err = -EEXIST;
			break;
		}
	}
	if (!err)
		list_add_tail(&vdev->list, &vhca_dev_list);
	mutex_unlock(&vhca_list_lock);
	return err;
}

static void vhca_dev_list_del(struct vhca_dev *vdev)
{
	mutex_lock(&vhca_list_lock);
	list_del_init(&vdev->list);
	mutex_unlock(&vhca_list_lock);
}

/*
 * Find the registered vhca bound to @ndev and take a registration lock
 * on it, so it stays registered until ib_device_put().
 */
static struct vhca_dev *vhca_dev_get_by_netdev(struct net_device *ndev)
{
	struct vhca_dev *vdev;

	mutex_lock(&vhca_list_lock);
	list_for_each_entry(vdev, &vhca_dev_list, list) {
		if (vdev->ndev == ndev && ib_device_try_get(&vdev->ibdev)) {
			mutex_unlock(&vhca_list_lock);
			return vdev;
		}
	}
	mutex_unlock(&vhca_list_lock);
	return NULL;
}

/* Report a port state change; @vdev is registered. */
static void vhca_port_update(struct vhca_dev *vdev, struct net_device *ndev)
{
	enum ib_port_state state = vhca_port_state(ndev);
	struct ib_event event = {
		.device = &vdev->ibdev,
		.element.port_num = VHCA_PORT_NUM,
	};

	ASSERT_RTNL();
	if (state == vdev->port_state)
		return;

	vdev->port_state = state;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ib_dispatch_event(&event);
	vhca_dbg(vdev, "port %s\n", state == IB_PORT_ACTIVE ? "active" : "down");
}

static int vhca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct vhca_dev *vdev;

	vdev = vhca_dev_get_by_netdev(ndev);
	if (!vdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Not inline: RTNL is held, and unregistering takes it. */
		ib_unregister_device_queued(&vdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		vhca_port_update(vdev, ndev);
		break;
	default:
		break;
	}

	ib_device_put(&vdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block vhca_netdev_notifier = {
	.notifier_call = vhca_netdev_event,
};

/*
 * The notifier cannot see a device before ib_register_device() has
 * finished, so catch up under RTNL: if the netdev began unregistering in
 * the meantime, the device goes too; otherwise the port state is synced,
 * and from now on the notifier sees every change.
 */
static int vhca_netdev_sync(struct vhca_dev *vdev, struct net_device *ndev)
{
	bool gone;

	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	if (!gone && ib_device_try_get(&vdev->ibdev)) {
		vhca_port_update(vdev, ndev);
		ib_device_put(&vdev->ibdev);
	}
	rtnl_unlock();
	if (!gone)
		return 0;

	pr_err("%s: %s was unregistered while the device was being added\n",
	       vdev->name, ndev->name);
	ib_unregister_device(&vdev->ibdev);
	return -ENODEV;
}

/*
 * Loopback is refused as roce_gid_mgmt only tracks ARPHRD_ETHER netdevs;
 * a VLAN as the real device's port carries its VLANs' GIDs already.
 */
static int vhca_check_netdev(const char *ibdev_name, struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER) {
		pr_err("%s: %s is not an Ethernet device\n", ibdev_name,
		       ndev->name);
		return -EINVAL;
	}
	if (is_vlan_dev(ndev)) {
		pr_err("%s: %s is a VLAN device; bind its real device\n",
		       ibdev_name, ndev->name);
		return -EINVAL;
	}
	return 0;
}

/*
 * rdma_link_ops.newlink: nldev has resolved @ndev (-ENODEV if it does
 * not exist) and holds it; rdma_link_unregister() waits for us.
 */
static int vhca_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct vhca_dev *vdev;
	int err;

	err = vhca_check_netdev(ibdev_name, ndev);
	if (err)
		return err;

	vdev = vhca_dev_alloc(ibdev_name, ndev, max_mkeys,
			      (u64)xlt_mb << 20);
	if (!vdev)
		return -ENOMEM;
	if (READ_ONCE(user_dma_map))
		vdev->mdev.caps.flags &= ~MRC_CAP_USER_DIRECT;

	err = vhca_dev_list_add(vdev);
	if (err)
		goto out_free;

	err = vhca_hw_init(vdev, vhca_debugfs_root);
	if (err) {
		pr_err("%s: cannot bring up the device: %pe\n", vdev->name,
		       ERR_PTR(err));
		goto out_list_del;
	}

	/*
	 * From here on @vdev is torn down through dealloc_driver, maybe
	 * by another thread as soon as it is registered: hold its memory.
	 */
	get_device(&vdev->ibdev.dev);
	err = vhca_ib_register(vdev);
	if (err)
		pr_err("%s: cannot register with ib_core: %pe\n", vdev->name,
		       ERR_PTR(err));
	else
		err = vhca_netdev_sync(vdev, ndev);
	put_device(&vdev->ibdev.dev);
	return err;

out_list_del:
	vhca_dev_list_del(vdev);
out_free:
	vhca_dev_free(vdev);
	return err;
}

static struct rdma_link_ops vhca_link_ops = {
	.type = "vhca",
	.newlink = vhca_newlink,
};

/*
 * Unregister every live device. Each ib_unregister_device() returns once
 * the device is unregistered and dealloc_driver has run, by this thread
 * or by the one that got there first, and so off the live list.
 */
static void vhca_unregister_all(void)
{
	struct vhca_dev *vdev;

	for (;;) {
		mutex_lock(&vhca_list_lock);
		vdev = list_first_entry_or_null(&vhca_dev_list,
						struct vhca_dev, list);
		if (vdev)
			get_device(&vdev->ibdev.dev);
		mutex_unlock(&vhca_list_lock);
		if (!vdev)
			return;

		ib_unregister_device(&vdev->ibdev);
		put_device(&vdev->ibdev.dev);
	}
}

static int __init vhca_check_params(void)
{
	if (max_mkeys < 2 || max_mkeys > MRC_MAX_MKEYS ||
	    !is_power_of_2(max_mkeys)) {
		pr_err("max_mkeys=%u: need a power of two in [2, %lu]\n",
		       max_mkeys, (unsigned long)MRC_MAX_MKEYS);
		return -EINVAL;
	}
	if (!xlt_mb || xlt_mb > VHCA_MAX_XLT_MB) {
		pr_err("xlt_mb=%u: need [1, %lu]\n", xlt_mb,
		       (unsigned long)VHCA_MAX_XLT_MB);
		return -EINVAL;
	}
	return 0;
}

static int __init vhca_init(void)
{
	int err;

	err = vhca_check_params();
	if (err)
		return err;

	vhca_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);

	err = register_netdevice_notifier(&vhca_netdev_notifier);
	if (err) {
		pr_err("cannot register the netdev notifier: %pe\n",
		       ERR_PTR(err));
		debugfs_remove(vhca_debugfs_root);
		return err;
	}

	rdma_link_register(&vhca_link_ops);
	return 0;
}

/*
 * Devices go before the notifier: unregistering the notifier replays
 * NETDEV_DOWN and NETDEV_UNREGISTER for every netdev, which would report
 * ports down and queue unregistrations on the way out.
 */
static void __exit vhca_exit(void)
{
	rdma_link_unregister(&vhca_link_ops);
	vhca_unregister_all();
	unregister_netdevice_notifier(&vhca_netdev_notifier);
	flush_work(&vhca_reap_work);
	debugfs_remove(vhca_debugfs_root);
}

module_init(vhca_init);
module_exit(vhca_exit);
