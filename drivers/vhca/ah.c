// SPDX-License-Identifier: GPL-2.0
/*
 * vhca address handles: where a UD send goes.
 *
 * The port is RoCE v2, so an AH is its GRH: the destination GID, which the
 * loopback fabric routes on, and the source GID index. ib_core allocates
 * the AH (GFP_ATOMIC unless RDMA_CREATE_AH_SLEEPABLE) and holds the
 * reference on its source GID attribute; vhca keeps a copy of the
 * attributes with no reference of its own, so create_ah allocates nothing
 * and never sleeps, and destroy_ah frees nothing.
 *
 * Kernel consumers only: create_user_ah is not provided.
 */
#include "vhca_loc.h"

/**
 * vhca_create_ah - create an address handle
 * @ibah: the AH ib_core allocated
 * @init_attr: the attributes; flags may lack RDMA_CREATE_AH_SLEEPABLE
 * @udata: userspace data; user AHs are not supported
 *
 * Never sleeps.
 *
 * Return: 0, -EOPNOTSUPP with @udata, or -EINVAL for attributes that are
 * not RoCE or lack a GRH.
 */
int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	const struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct vhca_ah *ah = to_vhca_ah(ibah);

	if (udata)
		return -EOPNOTSUPP;
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH)) {
		ibdev_dbg(ibah->device, "AH type %d flags 0x%x: no RoCE GRH\n",
			  attr->type, rdma_ah_get_ah_flags(attr));
		return -EINVAL;
	}

	ah->attr = *attr;
	/* ib_core holds ibah->sgid_attr; the copy must not look like a ref. */
	ah->attr.grh.sgid_attr = NULL;
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
 * Return: 0.
 */
int vhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}
