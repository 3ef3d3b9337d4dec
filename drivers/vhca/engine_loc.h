/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca engine: prototypes shared by the engine's files only (engine.c,
 * xfer.c, fault.c). The rest of the driver calls the engine through engine.h.
 */
#ifndef _VHCA_ENGINE_LOC_H
#define _VHCA_ENGINE_LOC_H

#include <rdma/vhca.h>

#include "vhca.h"

/* Where @qp's walks record a fault: nowhere once one failed. */
static inline struct vhca_fault *vhca_qp_fault(struct vhca_qp *qp)
{
	return qp->fault_failed ? NULL : &qp->fault;
}

/* xfer.c: transfers between two cursors */

/* What a cursor runs over. */
enum vhca_cursor_kind {
	VHCA_CURSOR_SGL,	/* a local list, through lkeys, or inline data */
	VHCA_CURSOR_RANGE,	/* a remote (rkey, address) range */
};

/**
 * struct vhca_cursor - one side of a transfer, and how far it has got
 * @kind: what it runs over
 * @dir: the access its walks make
 * @vdev: device the keys belong to (the responder's for a remote range)
 * @pdn: PD the keys are checked against
 * @qpn: number of the QP whose keys they are (a type 2 window's QP must
 *	match it)
 * @fault: where a page fault of its walks is recorded, or NULL
 * @counters: the operation's counter set (a remote write's), or NULL
 * @sge: SGL: the list, or NULL for inline data
 * @inline_data: SGL: inline bytes (gather only), when @sge is NULL
 * @num: SGL: entries of @sge, or bytes of @inline_data
 * @idx: SGL: current entry
 * @off: SGL: bytes already moved in the current entry
 * @rkey: RANGE: the rkey
 * @addr: RANGE: next address
 */
struct vhca_cursor {
	enum vhca_cursor_kind kind;
	enum vhca_access_dir dir;
	struct vhca_dev *vdev;
	u32 pdn;
	u32 qpn;
	struct vhca_fault *fault;
	unsigned long *counters;
	union {
		struct {
			const struct ib_sge *sge;
			const u8 *inline_data;
			u32 num;
			u32 idx;
			u64 off;
		};
		struct {
			u32 rkey;
			u64 addr;
		};
	};
};

/* Which side of a transfer failed. */
enum vhca_side {
	VHCA_SRC,
	VHCA_DST,
};

void vhca_cursor_sgl(struct vhca_cursor *cur, struct vhca_qp *qp,
		     const struct ib_sge *sge, u32 num,
		     enum vhca_access_dir dir);
u64 vhca_sge_bytes(const struct ib_sge *sge, u32 num);
int vhca_cursor_probe(const struct vhca_cursor *cur, u64 len);
int vhca_xfer(struct vhca_dev *vdev, struct vhca_cursor *src,
	      struct vhca_cursor *dst, u64 len, bool src_probed,
	      enum vhca_side *side);
int vhca_cursor_move_sync(struct vhca_cursor *cur, u8 *buf, u64 len);
int vhca_xfer_sync(struct vhca_dev *vdev, struct vhca_cursor *src,
		   struct vhca_cursor *dst, u64 len, enum vhca_side *side);

/* fault.c: the ODP fault queue */
bool vhca_fault_resolve_sync(struct vhca_fault *f);
void vhca_fault_raise(struct vhca_qp *qp);
void vhca_fault_work(struct work_struct *work);

#endif /* _VHCA_ENGINE_LOC_H */
