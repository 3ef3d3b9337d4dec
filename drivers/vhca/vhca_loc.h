/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca: prototypes shared between the driver's files.
 */
#ifndef _VHCA_LOC_H
#define _VHCA_LOC_H

#include "vhca.h"

/* devmem.c */
extern const struct mrc_hw_ops vhca_hw_ops;
int vhca_devmem_init(struct vhca_dev *vdev);
void vhca_devmem_fini(struct vhca_dev *vdev);
int vhca_read_mkey(struct vhca_dev *vdev, u32 index, struct mrc_mkey_ctx *out);
void vhca_debugfs_init(struct vhca_dev *vdev, struct dentry *root);
void vhca_debugfs_fini(struct vhca_dev *vdev);

/* main.c */
void vhca_dev_retire(struct vhca_dev *vdev);

/* verbs.c */
struct vhca_dev *vhca_dev_alloc(const char *name, struct net_device *ndev,
				u32 max_mkeys, u64 xlt_size);
void vhca_dev_free(struct vhca_dev *vdev);
int vhca_hw_init(struct vhca_dev *vdev, struct dentry *debugfs_root);
int vhca_ib_register(struct vhca_dev *vdev);
enum ib_port_state vhca_port_state(struct net_device *ndev);

#endif /* _VHCA_LOC_H */
