// SPDX-License-Identifier: GPL-2.0
/*
 * vhca address handles: where a UD send goes.
 *
 * The port is RoCE v2, so an AH is its GRH: the destination GID, which the
 * loopback fabric routes on, and the source GID index. ib_core allocates
 * the AH (GFP_ATOMIC unless RDMA_CREATE_AH_SLEEPABLE) and holds the
 * reference on its source GID attribute; vhca keeps a copy of the
 * attributes with no reference of its own, so a kernel create_ah
 * allocates nothing and never sleeps, and destroy_ah frees nothing.
 *
 * A user AH (create_user_ah, from ib_uverbs, sleepable) also gets a
 * number in the device's AH table, returned as rxe's
 * struct rxe_create_ah_resp: librxe writes it into each UD send WQE
 * (rxe_send_wr.wr.ud.ah_num) instead of the address vector, and the
 * engine resolves it with vhca_ah_lookup(). Numbers start at 1 and are
 * handed out cyclically, so a number is not soon reused after its AH is
 * destroyed; a WQE naming a destroyed AH fails, one naming an AH of
 * another PD too.
 */
#include <rdma/rdma_user_rxe.h>

#include "vhca_loc.h"

/**
 * vhca_ah_table_init - set up a device's table of user AH numbers
 * @vdev: the device being allocated
 */
void vhca_ah_table_init(struct vhca_dev *vdev)
{
	xa_init_flags(&vdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	vdev->ah_next = 1;
}

/**
 * vhca_ah_table_fini - tear the table down
 * @vdev: the device, unregistered: ib_core has destroyed every AH
 */
void vhca_ah_table_fini(struct vhca_dev *vdev)
{
	WARN_ON(!xa_empty(&vdev->ahs));
	xa_destroy(&vdev->ahs);
}

/*
 * A user AH: driver data in must be none (or zeros), out must have room
 * for the response. The number is given only once the AH is complete,
 * and taken back if the response cannot be written.
 */
static int vhca_create_user_ah(struct vhca_dev *vdev, struct vhca_ah *ah,
			       struct ib_udata *udata)
{
	struct rxe_create_ah_resp resp = {};
	int err;

	err = vhca_udata_in_check(udata, 0);
	if (err)
		return err;
	if (udata->outlen < sizeof(resp))
		return -EINVAL;

	err = xa_alloc_cyclic_irq(&vdev->ahs, &ah->ah_num, ah,
				  XA_LIMIT(1, VHCA_MAX_AH), &vdev->ah_next,
				  GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;

	resp.ah_num = ah->ah_num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		xa_erase_irq(&vdev->ahs, ah->ah_num);
		ah->ah_num = 0;
		return err;
	}
	return 0;
}

/**
 * vhca_create_ah - create an address handle
 * @ibah: the AH ib_core allocated
 * @init_attr: the attributes; flags may lack RDMA_CREATE_AH_SLEEPABLE
 *	(kernel AHs only: a user AH is sleepable)
 * @udata: NULL for a kernel AH; for a user AH (create_user_ah), ib_uverbs'
 *	driver data: input none or zeros, output room for a
 *	struct rxe_create_ah_resp, which gets the AH's number
 *
 * Context: a kernel AH never sleeps; a user AH may.
 * Return: 0; -EINVAL for attributes that are not RoCE or lack a GRH, or a
 * user AH whose output cannot hold the response; -EOPNOTSUPP for input
 * driver data that is not zero; -ENOMEM when every AH number is taken or
 * memory is short; -EFAULT if the response cannot be written.
 */
int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	const struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct vhca_ah *ah = to_vhca_ah(ibah);

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH)) {
		ibdev_dbg(ibah->device, "AH type %d flags 0x%x: no RoCE GRH\n",
			  attr->type, rdma_ah_get_ah_flags(attr));
		return -EINVAL;
	}

	ah->attr = *attr;
	/* ib_core holds ibah->sgid_attr; the copy must not look like a ref. */
	ah->attr.grh.sgid_attr = NULL;
	ah->ah_num = 0;
	if (udata)
		return vhca_create_user_ah(to_vhca_dev(ibah->device), ah, udata);
	return 0;
}

/**
 * vhca_query_ah - report an address handle's attributes
 * @ibah: the AH
 * @ah_attr: filled with the attributes it was created with, without a
 *	source GID attribute (rdma_query_ah() has cleared it)
 *
 * Return: 0.
 */
int vhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr)
{
	*ah_attr = to_vhca_ah(ibah)->attr;
	return 0;
}

/**
 * vhca_destroy_ah - destroy an address handle
 * @ibah: the AH; ib_core frees it and drops its source GID attribute
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0; nothing here sleeps
 *
 * A user AH's number leaves the table first: a lookup that found it has
 * finished copying, and none finds it later.
 *
 * Return: 0.
 */
int vhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct vhca_ah *ah = to_vhca_ah(ibah);

	if (ah->ah_num)
		xa_erase_irq(&to_vhca_dev(ibah->device)->ahs, ah->ah_num);
	return 0;
}

/**
 * vhca_ah_lookup - what a UD send needs from a user AH, by number
 * @vdev: the device
 * @ah_num: the number a user UD WQE names (any 32-bit value)
 * @pdn: PD number of the QP the WQE was posted on
 * @dgid: out: the AH's destination GID
 * @sgid_index: out: its source GID index
 *
 * Copies under the table's lock, so an AH being destroyed at the same
 * time is either copied whole or not found.
 *
 * Context: any context; does not sleep.
 * Return: 0, or -EINVAL if no user AH has @ah_num or it is of another PD.
 */
int vhca_ah_lookup(struct vhca_dev *vdev, u32 ah_num, u32 pdn,
		   union ib_gid *dgid, u8 *sgid_index)
{
	const struct vhca_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&vdev->ahs, flags);
	ah = xa_load(&vdev->ahs, ah_num);
	if (ah && to_vhca_pd(ah->ibah.pd)->base_pd.pdn == pdn) {
		*dgid = ah->attr.grh.dgid;
		*sgid_index = ah->attr.grh.sgid_index;
		err = 0;
	}
	xa_unlock_irqrestore(&vdev->ahs, flags);
	return err;
}
