// SPDX-License-Identifier: GPL-2.0
/*
 * vhca verbs: the ib_device, its hardware bring-up (device memory, the
 * platform device DMA is mapped on, the mrcore device) and its ops.
 *
 * Device and port queries and PDs are here; memory regions are in mr.c
 * and frwr.c, memory windows in mw.c, queues in cq.c, srq.c and qp.c,
 * address handles in ah.c, and the engine that executes work requests in
 * engine.c, resp.c, xfer.c, fault.c and fabric.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "engine.h"
#include "vhca_loc.h"

/**
 * vhca_port_state - the port state a netdev implies
 * @ndev: the bound netdev
 *
 * Return: IB_PORT_ACTIVE if @ndev is up with carrier, else IB_PORT_DOWN.
 */
enum ib_port_state vhca_port_state(struct net_device *ndev)
{
	if (netif_running(ndev) && netif_carrier_ok(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

static int vhca_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vhca_dev(ibdev);
	const struct mrc_caps *caps = &vdev->mdev.caps;
	int err;

	/* ib_uverbs_ex_query_device()'s driver data: librxe sends none. */
	err = vhca_udata_in_check(udata, 0);
	if (err)
		return err;

	attr->fw_ver = (u64)VHCA_FW_VER_MAJOR << 32 |
		       VHCA_FW_VER_MINOR << 16 | VHCA_FW_VER_SUBMINOR;
	attr->sys_image_guid = ibdev->node_guid;
	/* Every MTT entry of the translation area at the largest page. */
	attr->max_mr_size = (caps->xlt_size / MRC_MTT_ENTRY_SIZE) <<
			    __fls(caps->page_size_bitmap);
	attr->page_size_cap = caps->page_size_bitmap;
	attr->vendor_id = VHCA_VENDOR_ID;
	attr->vendor_part_id = VHCA_VENDOR_PART_ID;
	attr->hw_ver = VHCA_HW_VER;
	/*
	 * Fast registration of MEM_REG and SG_GAPS MRs (frwr.c); memory
	 * windows of type 1 and 2B (mw.c); explicit and implicit ODP on
	 * every operation of RC and UD QPs, receives from an SRQ included
	 * (odp.c, fault.c: the engine faults on a send's gather list, an
	 * RDMA or atomic target and resolves a receive's scatter list, a
	 * shared queue's as a QP's own, in place). 6.1 spells the SG_GAPS
	 * flag IBK_SG_GAPS_REG, a kernel cap; ib_uverbs refuses ODP access
	 * flags unless IBK_ON_DEMAND_PAGING is set (ib_check_mr_access()).
	 */
	attr->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 VHCA_DEVICE_ATOMIC_WRITE;
	attr->kernel_cap_flags = IBK_LOCAL_DMA_LKEY | IBK_ALLOW_USER_UNREG |
				 IBK_SG_GAPS_REG | IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
	/*
	 * Slot 0 is never used and the local DMA key holds another; MRs and
	 * windows share the rest.
	 */
	attr->max_mr = caps->max_mkeys - 2;
	attr->max_mw = caps->max_mkeys - 2;
	/* PD number 0 is never used. */
	attr->max_pd = caps->max_pds - 1;
	attr->max_qp = VHCA_MAX_QP;
	attr->max_qp_wr = VHCA_MAX_QP_WR;
	attr->max_send_sge = VHCA_MAX_SGE;
	attr->max_recv_sge = VHCA_MAX_SGE;
	attr->max_sge_rd = VHCA_MAX_SGE;
	attr->max_cq = VHCA_MAX_CQ;
	attr->max_cqe = VHCA_MAX_CQE;
	attr->max_qp_rd_atom = VHCA_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = VHCA_MAX_RD_ATOM;
	attr->max_res_rd_atom = VHCA_MAX_QP * VHCA_MAX_RD_ATOM;
	/* Atomics are atomic among this device's own accesses. */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_srq = VHCA_MAX_SRQ;
	attr->max_srq_wr = VHCA_MAX_SRQ_WR;
	attr->max_srq_sge = VHCA_MAX_SGE;
	attr->max_ah = VHCA_MAX_AH;
	attr->max_fast_reg_page_list_len =
		vhca_frwr_max_sg(vdev, IB_MR_TYPE_MEM_REG);
	attr->max_pkeys = VHCA_PKEY_TBL_LEN;
	return 0;
}

/*
 * Port 1's netdev, with a reference, for ib_core (GID table, port speed,
 * rdma link). vhca does not hand it to ib_device_set_netdev(): that would
 * also enter the device in ib_core's netdev hash, where rxe looks devices
 * of its driver id up by netdev, and vhca has rxe's driver id (user ABI)
 * but is not an rxe device. The netdev is held until dealloc_driver.
 */
static struct net_device *vhca_get_netdev(struct ib_device *ibdev,
					  u32 port_num)
{
	struct net_device *ndev = to_vhca_dev(ibdev)->ndev;

	if (port_num != VHCA_PORT_NUM)
		return NULL;
	dev_hold(ndev);
	return ndev;
}

static void vhca_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", VHCA_FW_VER_MAJOR,
		 VHCA_FW_VER_MINOR, VHCA_FW_VER_SUBMINOR);
}

static enum rdma_link_layer vhca_get_link_layer(struct ib_device *ibdev,
						u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int vhca_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				   struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = VHCA_GID_TBL_LEN;
	immutable->pkey_tbl_len = VHCA_PKEY_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/*
 * The port follows the bound netdev: its state from running and carrier,
 * its MTU from the netdev MTU less the RoCE v2 headers. The data path is
 * host memory, so speed and width are nominal: 4X EDR.
 */
static int vhca_query_port(struct ib_device *ibdev, u32 port_num,
			   struct ib_port_attr *attr)
{
	struct net_device *ndev = to_vhca_dev(ibdev)->ndev;
	enum ib_mtu mtu;

	/* ib_query_port() has zeroed @attr. */
	attr->state = vhca_port_state(ndev);
	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (netif_running(ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;

	/* The MTU changes under RTNL, which this op does not take. */
	mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = mtu ? mtu : IB_MTU_256;
	attr->gid_tbl_len = VHCA_GID_TBL_LEN;
	attr->pkey_tbl_len = VHCA_PKEY_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;
	attr->max_msg_sz = VHCA_MAX_MSG_SIZE;
	attr->max_vl_num = 1;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_EDR;
	return 0;
}

static int vhca_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			   u16 *pkey)
{
	if (index >= VHCA_PKEY_TBL_LEN)
		return -EINVAL;

	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int vhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vhca_dev(ibpd->device);
	struct vhca_pd *pd = to_vhca_pd(ibpd);
	int err;

	if (vhca_udata_in_check(udata, 0))
		return -EOPNOTSUPP;
	err = mrc_pd_init(&vdev->mdev, &pd->base_pd);
	if (err)
		return err;

	vhca_dbg_pd(pd, "allocated\n");
	return 0;
}

static int vhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vhca_pd *pd = to_vhca_pd(ibpd);

	vhca_dbg_pd(pd, "freed\n");
	mrc_pd_fini(&pd->base_pd);
	return 0;
}

/**
 * vhca_pd_pdn - the PD number behind a PD of a vhca device
 * @ibpd: a PD
 *
 * The number the device compares with a context's PD, as the engine will
 * for a QP's PD.
 *
 * Return: the PD number, or 0 (which matches no PD's contexts) if @ibpd
 * is not a vhca PD.
 */
u32 vhca_pd_pdn(struct ib_pd *ibpd)
{
	if (!vhca_is_vhca(ibpd->device))
		return 0;
	return to_vhca_pd(ibpd)->base_pd.pdn;
}
EXPORT_SYMBOL_GPL(vhca_pd_pdn);

/**
 * vhca_pd_mrc - mrcore's PD behind a PD of a vhca device
 * @ibpd: a PD
 *
 * For kernel code that calls mrcore on a vhca's PD directly: memory
 * windows (mrc_alloc_mw()), indirect keys (mrc_reg_indirect()), FMRs.
 * The mrcore PD lives as long as @ibpd.
 *
 * Context: any context.
 * Return: the mrcore PD, or NULL if @ibpd is not a vhca PD.
 */
struct mrc_pd *vhca_pd_mrc(struct ib_pd *ibpd)
{
	if (!vhca_is_vhca(ibpd->device))
		return NULL;
	return &to_vhca_pd(ibpd)->base_pd;
}
EXPORT_SYMBOL_GPL(vhca_pd_mrc);

static void vhca_hw_fini(struct vhca_dev *vdev)
{
	vhca_fabric_del(vdev);
	vhca_engine_fini(vdev);
	WARN_ON(!xa_empty(&vdev->qps));
	xa_destroy(&vdev->qps);
	vhca_ah_table_fini(vdev);
	vhca_debugfs_fini(vdev);
	mrc_unregister_device(&vdev->mdev);
	platform_device_unregister(vdev->pdev);
	vhca_mkey_users_fini(vdev);
	vhca_devmem_fini(vdev);
}

/**
 * vhca_dealloc_driver - the last call into the driver for a device
 * @ibdev: the device
 *
 * Called by ib_dealloc_device(), after ib_core has unregistered the
 * device (or never registered it): take the hardware down, retire the
 * device from the live list, and only then drop the netdev, as live
 * entries are compared by netdev. Its address in the ops also tells a
 * vhca apart from other devices (vhca_is_vhca()).
 */
void vhca_dealloc_driver(struct ib_device *ibdev)
{
	struct vhca_dev *vdev = to_vhca_dev(ibdev);

	vhca_dbg(vdev, "removing\n");
	vhca_hw_fini(vdev);
	vhca_dev_retire(vdev);
	put_device(vdev->parent);
	netdev_put(vdev->ndev, &vdev->ndev_tracker);
}

static const struct ib_device_ops vhca_dev_ops = {
	.owner = THIS_MODULE,
	/*
	 * rxe's user ABI: librxe binds to the device by this id (see
	 * "User space" in Documentation/mrcore/vhca.rst), version 2 as rxe's.
	 */
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = VHCA_UVERBS_ABI_VERSION,

	.advise_mr = vhca_advise_mr,
	.alloc_hw_port_stats = vhca_alloc_hw_port_stats,
	.alloc_mr = vhca_alloc_mr,
	.alloc_mw = vhca_alloc_mw,
	.alloc_pd = vhca_alloc_pd,
	.alloc_ucontext = vhca_alloc_ucontext,
	.create_ah = vhca_create_ah,
	.create_cq = vhca_create_cq,
	.create_qp = vhca_create_qp,
	.create_srq = vhca_create_srq,
	.create_user_ah = vhca_create_ah,
	.dealloc_driver = vhca_dealloc_driver,
	.dealloc_mw = vhca_dealloc_mw,
	.dealloc_pd = vhca_dealloc_pd,
	.dealloc_ucontext = vhca_dealloc_ucontext,
	.dereg_mr = vhca_dereg_mr,
	.destroy_ah = vhca_destroy_ah,
	.destroy_cq = vhca_destroy_cq,
	.destroy_qp = vhca_destroy_qp,
	.destroy_srq = vhca_destroy_srq,
	.disassociate_ucontext = vhca_disassociate_ucontext,
	.fill_res_mr_entry = vhca_fill_res_mr_entry,
	.get_dev_fw_str = vhca_get_dev_fw_str,
	.get_dma_mr = vhca_get_dma_mr,
	.get_hw_stats = vhca_get_hw_stats,
	.get_link_layer = vhca_get_link_layer,
	.get_netdev = vhca_get_netdev,
	.get_port_immutable = vhca_get_port_immutable,
	.map_mr_sg = vhca_map_mr_sg,
	.mmap = vhca_mmap,
	.mmap_free = vhca_mmap_free,
	.modify_qp = vhca_modify_qp,
	.modify_srq = vhca_modify_srq,
	.poll_cq = vhca_poll_cq,
	.post_recv = vhca_post_recv,
	.post_send = vhca_post_send,
	.post_srq_recv = vhca_post_srq_recv,
	.query_ah = vhca_query_ah,
	.query_device = vhca_query_device,
	.query_pkey = vhca_query_pkey,
	.query_port = vhca_query_port,
	.query_qp = vhca_query_qp,
	.query_srq = vhca_query_srq,
	.reg_user_mr = vhca_reg_user_mr,
	.reg_user_mr_dmabuf = vhca_reg_user_mr_dmabuf,
	.req_notify_cq = vhca_req_notify_cq,
	.rereg_user_mr = vhca_rereg_user_mr,
	.resize_cq = vhca_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, vhca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, vhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, vhca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, vhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vhca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, vhca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, vhca_ucontext, ibuc),
};

/**
 * vhca_dev_alloc - allocate a device bound to a netdev
 * @name: the ib_device name asked for
 * @ndev: the netdev; a reference is taken, and one on its parent device
 * @max_mkeys: mkey context slots, a power of two
 * @xlt_size: bytes of translation area
 *
 * Nothing is registered: the result is undone by vhca_dev_free() until
 * vhca_ib_register() installs the ops. Takes RTNL.
 *
 * Return: the device, or NULL if out of memory.
 */
struct vhca_dev *vhca_dev_alloc(const char *name, struct net_device *ndev,
				u32 max_mkeys, u64 xlt_size)
{
	struct vhca_dev *vdev;

	vdev = ib_alloc_device(vhca_dev, ibdev);
	if (!vdev)
		return NULL;

	/* As the driver core names the ib_device, so debugfs agrees. */
	strscpy(vdev->name, name, sizeof(vdev->name));
	strreplace(vdev->name, '/', '!');
	INIT_LIST_HEAD(&vdev->list);
	INIT_LIST_HEAD(&vdev->fabric_node);
	xa_init_flags(&vdev->qps, XA_FLAGS_ALLOC);
	vhca_ah_table_init(vdev);
	vdev->ndev = ndev;
	netdev_hold(ndev, &vdev->ndev_tracker, GFP_KERNEL);
	/*
	 * In sysfs the device hangs under its netdev's parent, when it has
	 * one (a PCI or virtio NIC), as a real NIC's RDMA function does:
	 * /sys/class/infiniband/vhca0/device/net/ then lists the netdev,
	 * which is how rdma-core's tests find a device's addresses (rxe has
	 * no parent). A registered netdev's parent outlives it, and the
	 * netdev cannot finish unregistering while RTNL is held.
	 */
	rtnl_lock();
	if (ndev->reg_state == NETREG_REGISTERED)
		vdev->parent = get_device(ndev->dev.parent);
	rtnl_unlock();

	vdev->mdev.name = vdev->name;
	vdev->mdev.ops = &vhca_hw_ops;
	vdev->mdev.priv = vdev;
	vdev->mdev.caps.max_mkeys = max_mkeys;
	vdev->mdev.caps.max_pds = 1U << 16;
	vdev->mdev.caps.xlt_size = xlt_size;
	vdev->mdev.caps.page_size_bitmap = SZ_4K | SZ_2M | SZ_1G;
	/*
	 * Device memory starts zeroed (vhca_devmem_init()). The engine
	 * copies with the CPU at the DMA addresses' direct physical pages
	 * (dma_to_phys()), so user pages need no mapping: with one, swiotlb
	 * would give the engine a bounce buffer the process never sees.
	 */
	vdev->mdev.caps.flags = MRC_CAP_KLM | MRC_CAP_ODP | MRC_CAP_XLT_ZEROED |
				MRC_CAP_KSM | MRC_CAP_USER_DIRECT;
	vdev->mdev.caps.max_counters = VHCA_MAX_COUNTERS;
	return vdev;
}

/**
 * vhca_dev_free - free a device vhca_ib_register() has not seen
 * @vdev: the device, off the device list, its hardware down
 */
void vhca_dev_free(struct vhca_dev *vdev)
{
	put_device(vdev->parent);
	netdev_put(vdev->ndev, &vdev->ndev_tracker);
	ib_dealloc_device(&vdev->ibdev);
}

static struct platform_device *vhca_pdev_create(void)
{
	const struct platform_device_info info = {
		.name = KBUILD_MODNAME,
		.id = PLATFORM_DEVID_AUTO,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct platform_device *pdev;
	int err;

	pdev = platform_device_register_full(&info);
	if (IS_ERR(pdev))
		return pdev;

	/* The engine walks translations; it has no DMA segment limit. */
	err = dma_set_max_seg_size(&pdev->dev, SZ_2G);
	if (err)
		goto out_unregister;

	/*
	 * The walker turns DMA addresses back into pages with dma_to_phys(),
	 * which only holds for dma-direct (swiotlb included). An IOMMU or
	 * another dma_map_ops would give addresses it cannot follow.
	 */
	if (get_dma_ops(&pdev->dev)) {
		pr_err("DMA for %s is not dma-direct; the DMA engine needs it\n",
		       dev_name(&pdev->dev));
		err = -EOPNOTSUPP;
		goto out_unregister;
	}
	return pdev;

out_unregister:
	platform_device_unregister(pdev);
	return ERR_PTR(err);
}

/**
 * vhca_hw_init - bring up a device's hardware
 * @vdev: the device
 * @debugfs_root: where the device's debugfs directory goes
 *
 * Allocates device memory and the walkers' per-slot counts, registers the
 * platform device DMA is mapped on, registers the mrcore device (which
 * writes the local DMA key into device memory), latches that key as the
 * device's reserved lkey and adds the debugfs files. Undone by
 * dealloc_driver once vhca_ib_register() is called; undoes itself on
 * failure.
 *
 * Return: 0 or a negative errno: -ENOMEM, -EOPNOTSUPP when DMA to the
 * platform device is not dma-direct, or mrcore's error.
 */
int vhca_hw_init(struct vhca_dev *vdev, struct dentry *debugfs_root)
{
	struct platform_device *pdev;
	int err;

	err = vhca_devmem_init(vdev);
	if (err)
		return err;

	err = vhca_mkey_users_init(vdev);
	if (err)
		goto out_devmem;

	err = vhca_engine_init(vdev);
	if (err)
		goto out_walker;

	pdev = vhca_pdev_create();
	if (IS_ERR(pdev)) {
		err = PTR_ERR(pdev);
		goto out_engine;
	}
	vdev->pdev = pdev;
	vdev->mdev.dma_dev = &pdev->dev;

	err = mrc_register_device(&vdev->mdev);
	if (err)
		goto out_pdev;
	vdev->rsvd_lkey = vdev->mdev.local_dma_lkey;

	vhca_debugfs_init(vdev, debugfs_root);
	return 0;

out_pdev:
	platform_device_unregister(pdev);
out_engine:
	vhca_engine_fini(vdev);
out_walker:
	vhca_mkey_users_fini(vdev);
out_devmem:
	vhca_devmem_fini(vdev);
	return err;
}

static void vhca_ib_init(struct vhca_dev *vdev)
{
	struct ib_device *ibdev = &vdev->ibdev;

	strscpy(ibdev->node_desc, KBUILD_MODNAME, sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	/* One vector per CPU, as ULPs spread their queues over them. */
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = vdev->mdev.local_dma_lkey;
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, vdev->ndev->dev_addr);
	/* Checked again under RTNL once registered; see vhca_newlink(). */
	vdev->port_state = vhca_port_state(vdev->ndev);
	/*
	 * Of the write commands ib_core leaves to the driver, librxe uses
	 * these two: POST_SEND (of no WR) is the doorbell of a user send
	 * ring, REQ_NOTIFY_CQ arms a user CQ. POST_RECV, POST_SRQ_RECV and
	 * POLL_CQ stay off: the rings carry receives and completions.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &vhca_dev_ops);
	/* The driver methods libvhca calls (uapi.c). */
	ibdev->driver_def = vhca_uapi_defs;
}

/**
 * vhca_ib_register - register a device with ib_core
 * @vdev: the device, its hardware up
 *
 * Installs the ops, whose get_netdev binds port 1 to the netdev (ib_core
 * then fills the GID table from its addresses), and registers the device
 * with its platform device for DMA. From the moment the ops are installed,
 * ib_dealloc_device() tears the whole device down through dealloc_driver,
 * so on failure @vdev is gone, and on success it may go at any time
 * unless the caller holds a reference on @vdev->ibdev.dev.
 *
 * Return: 0 or a negative errno.
 */
int vhca_ib_register(struct vhca_dev *vdev)
{
	struct ib_device *ibdev = &vdev->ibdev;
	int err;

	vhca_ib_init(vdev);
	/* DMA is mapped on the platform device; sysfs has the NIC's parent. */
	ibdev->dev.parent = vdev->parent;

	err = ib_register_device(ibdev, vdev->name, &vdev->pdev->dev);
	if (err)
		goto out_dealloc;
	vhca_fabric_add(vdev);
	return 0;

out_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}
