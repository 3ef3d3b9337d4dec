/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca: a virtual HCA. Device and object structures and their downcasts.
 */
#ifndef _VHCA_H
#define _VHCA_H

#include <linux/bits.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/platform_device.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>

/* Identity: no IEEE OUI is assigned to vhca, so the vendor ID is none. */
#define VHCA_VENDOR_ID		0xffffff
#define VHCA_VENDOR_PART_ID	0x0001
#define VHCA_HW_VER		1
#define VHCA_FW_VER_MAJOR	0
#define VHCA_FW_VER_MINOR	1
#define VHCA_FW_VER_SUBMINOR	0

/* Port 1 is the only port: RoCE v2 over the bound netdev. */
#define VHCA_PORT_NUM		1
#define VHCA_GID_TBL_LEN	256
#define VHCA_PKEY_TBL_LEN	1
#define VHCA_MAX_MSG_SIZE	BIT(31)

/*
 * Queue limits the engine is designed for. They are reported now so that
 * callers size their requests once; until the engine lands, creating a QP
 * or CQ fails with -EOPNOTSUPP.
 */
#define VHCA_MAX_QP		4096
#define VHCA_MAX_QP_WR		4096
#define VHCA_MAX_SGE		16
#define VHCA_MAX_CQ		4096
#define VHCA_MAX_CQE		((1 << 16) - 1)
#define VHCA_MAX_RD_ATOM	16

/*
 * Device memory is one region, standing for the HCA's BAR:
 *
 *   [0, max_mkeys * VHCA_MKC_SIZE)   mkey context table, slot i at i * 64
 *   [max_mkeys * VHCA_MKC_SIZE, +xlt_size)   translation area (MTT/KLM)
 *
 * An mkey context slot, all fields little-endian. The state byte is
 * written last and read first: it publishes the rest of the slot.
 */
#define VHCA_MKC_SIZE		64
#define VHCA_MKC_KEY		0x00	/* u32: index << 8 | variant */
#define VHCA_MKC_STATE		0x04	/* u8: enum mrc_mkey_state */
#define VHCA_MKC_ACCESS_MODE	0x05	/* u8: enum mrc_access_mode */
#define VHCA_MKC_PAGE_SHIFT	0x06	/* u8: log2 of the MTT page size */
#define VHCA_MKC_RSVD0		0x07	/* u8: zero */
#define VHCA_MKC_PDN		0x08	/* u32: PD number, 0 = any PD */
#define VHCA_MKC_ACCESS		0x0c	/* u32: MRC_ACCESS_* bits */
#define VHCA_MKC_IOVA		0x10	/* u64: first address covered */
#define VHCA_MKC_LENGTH		0x18	/* u64: bytes covered */
#define VHCA_MKC_XLT_OFFSET	0x20	/* u64: byte offset of first entry */
#define VHCA_MKC_XLT_ENTRIES	0x28	/* u32: MTT/KLM entry count */
#define VHCA_MKC_RSVD1		0x2c	/* to the end of the slot: zero */

/*
 * The walker follows a KLM entry into the key it names, and that key's
 * translation into the next one, at most this many levels deep. Today a
 * KLM entry may only name the local DMA key (a PA-mode leaf), so walks
 * are two levels: the MR's key, then the local DMA key.
 */
#define VHCA_WALK_MAX_DEPTH	4

/**
 * struct vhca_devmem - the device memory region
 * @base: start of the region; only ever reached through io accessors
 * @mkc: mkey context table, @base + 0
 * @xlt: translation area, right after the context table
 * @size: bytes in the region
 */
struct vhca_devmem {
	void __iomem *base;
	void __iomem *mkc;
	void __iomem *xlt;
	size_t size;
};

/**
 * struct vhca_dev - one virtual HCA, bound to one netdev
 * @ibdev: the device ib_core sees; first, for ib_alloc_device()
 * @mdev: the device mrcore sees; its caps size @mem
 * @mem: device memory
 * @pdev: the platform device DMA mappings are made on
 * @ndev: the bound netdev, held through @ndev_tracker until dealloc_driver
 * @ndev_tracker: tracks our reference on @ndev
 * @port_state: port state last reported by an event; protected by RTNL
 * @rsvd_lkey: the key the device treats as its local DMA key; latched at
 *	bring-up from mrcore's registration, as a firmware's reserved lkey
 * @mkey_users: per context slot, walkers between looking the slot up and
 *	finishing their copy (walker.c); invalidation waits for zero
 * @debugfs: /sys/kernel/debug/vhca/<name>/, or NULL or an error pointer
 * @list: entry on the live or the dead device list; protected by
 *	vhca_list_lock (main.c)
 * @name: the name the device was created with; names @mdev and @debugfs
 */
struct vhca_dev {
	struct ib_device ibdev;
	struct mrc_device mdev;
	struct vhca_devmem mem;
	struct platform_device *pdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	enum ib_port_state port_state;
	u32 rsvd_lkey;
	atomic_t *mkey_users;
	struct dentry *debugfs;
	struct list_head list;
	char name[IB_DEVICE_NAME_MAX];
};

/**
 * struct vhca_pd - a protection domain
 * @ibpd: ib_core's PD; first, as INIT_RDMA_OBJ_SIZE() requires
 * @base_pd: mrcore's PD, which owns the PD number
 */
struct vhca_pd {
	struct ib_pd ibpd;
	struct mrc_pd base_pd;
};

/**
 * struct vhca_cq - a completion queue; engine state comes with the engine
 * @ibcq: ib_core's CQ
 */
struct vhca_cq {
	struct ib_cq ibcq;
};

/**
 * struct vhca_qp - a queue pair; engine state comes with the engine
 * @ibqp: ib_core's QP
 */
struct vhca_qp {
	struct ib_qp ibqp;
};

/**
 * struct vhca_mr - a memory region
 * @ibmr: ib_core's MR; first, and allocated by the driver in 6.1
 * @base_mr: mrcore's MR, which owns the key, the translation and the pins
 */
struct vhca_mr {
	struct ib_mr ibmr;
	struct mrc_mr *base_mr;
};

static inline struct vhca_dev *to_vhca_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vhca_dev, ibdev);
}

static inline struct vhca_dev *mdev_to_vhca(struct mrc_device *mdev)
{
	return container_of(mdev, struct vhca_dev, mdev);
}

static inline struct vhca_pd *to_vhca_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vhca_pd, ibpd);
}

static inline struct vhca_mr *to_vhca_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vhca_mr, ibmr);
}

#define vhca_dbg(vdev, fmt, ...)					\
	ibdev_dbg(&(vdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

#define vhca_dbg_pd(pd, fmt, ...)					\
do {									\
	const struct vhca_pd *__pd = (pd);				\
									\
	ibdev_dbg(__pd->ibpd.device, "PD[%u] %s: " fmt,			\
		  __pd->base_pd.pdn, __func__, ##__VA_ARGS__);		\
} while (0)

#define vhca_dbg_mr(mr, fmt, ...)					\
do {									\
	const struct vhca_mr *__mr = (mr);				\
									\
	ibdev_dbg(&mdev_to_vhca(__mr->base_mr->mdev)->ibdev,		\
		  "MR[0x%08x] %s: " fmt, __mr->base_mr->key, __func__,	\
		  ##__VA_ARGS__);					\
} while (0)

/*
 * Device-memory writes start before ib_core has named the ib_device, so
 * they are reported against the platform device, the "hardware".
 */
#define vhca_dbg_mkey(vdev, index, fmt, ...)				\
	dev_dbg(&(vdev)->pdev->dev, "MKEY[%u] %s: " fmt, index,		\
		__func__, ##__VA_ARGS__)

#endif /* _VHCA_H */
