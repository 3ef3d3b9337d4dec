/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca: prototypes shared between the driver's files.
 */
#ifndef _VHCA_LOC_H
#define _VHCA_LOC_H

#include <rdma/vhca.h>

#include "vhca.h"

/* Context slot @index of the mkey context table; @index is checked. */
static inline void __iomem *vhca_mkc_slot(struct vhca_dev *vdev, u32 index)
{
	return vdev->mem.mkc + (size_t)index * VHCA_MKC_SIZE;
}

/* debugfs.c */
void vhca_debugfs_init(struct vhca_dev *vdev, struct dentry *root);
void vhca_debugfs_fini(struct vhca_dev *vdev);

/* devmem.c */
extern const struct mrc_hw_ops vhca_hw_ops;
int vhca_devmem_init(struct vhca_dev *vdev);
void vhca_devmem_fini(struct vhca_dev *vdev);
int vhca_read_mkey(struct vhca_dev *vdev, u32 index, struct mrc_mkey_ctx *out);
int vhca_mkey_xlt_check(struct vhca_dev *vdev, const struct mrc_mkey_ctx *ctx);
const char *vhca_mkey_state_name(u8 state);
const char *vhca_access_mode_name(u8 mode);

/* main.c */
void vhca_dev_retire(struct vhca_dev *vdev);

/* mr.c */
struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
struct ib_mr *vhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *new_pd, struct ib_udata *udata);
int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int vhca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* verbs.c */
struct vhca_dev *vhca_dev_alloc(const char *name, struct net_device *ndev,
				u32 max_mkeys, u64 xlt_size);
void vhca_dev_free(struct vhca_dev *vdev);
int vhca_hw_init(struct vhca_dev *vdev, struct dentry *debugfs_root);
int vhca_ib_register(struct vhca_dev *vdev);
enum ib_port_state vhca_port_state(struct net_device *ndev);
bool vhca_is_vhca(struct ib_device *ibdev);

/* walker.c */
int vhca_walker_init(struct vhca_dev *vdev);
void vhca_walker_fini(struct vhca_dev *vdev);
int vhca_mkey_get(struct vhca_dev *vdev, u32 key, struct mrc_mkey_ctx *ctx);
void vhca_mkey_put(struct vhca_dev *vdev, u32 key);
void vhca_mkey_drain(struct vhca_dev *vdev, u32 index);

#endif /* _VHCA_LOC_H */
