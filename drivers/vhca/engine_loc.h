/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca engine: prototypes shared by the engine's files only (engine.c,
 * resp.c, xfer.c, fault.c). The rest of the driver calls the engine
 * through engine.h.
 */
#ifndef _VHCA_ENGINE_LOC_H
#define _VHCA_ENGINE_LOC_H

#include <rdma/vhca.h>

#include "vhca.h"
#include "vhca_loc.h"

struct vhca_peer;

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

/**
 * struct vhca_xbuf - a CPU's pipes for the two sides of a transfer
 * @src: what the source's walks gathered
 * @dst: what the destination's walks gathered
 */
struct vhca_xbuf {
	struct vhca_pipe src;
	struct vhca_pipe dst;
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

/* What delivering a message to the responder came to. */
enum vhca_verdict {
	VHCA_DONE,	/* completed, with the status in the completion */
	VHCA_RNR,	/* receiver not ready: retry after its RNR timer */
	VHCA_LOST,	/* no responder answered: retry after the timeout */
	VHCA_DEFER,	/* not for a run that cannot sleep: nothing was done */
};

/**
 * struct vhca_req - a request message, as it reaches the responder
 * @opcode: what it asks: IB_WR_SEND, _WITH_IMM or _WITH_INV,
 *	IB_WR_RDMA_WRITE or _WITH_IMM, IB_WR_RDMA_READ, or an atomic
 * @ud: a datagram (UD or GSI QPs): a receive too short or refused loses it
 * @solicited: sent with IB_SEND_SOLICITED
 * @src_qpn: the requester QP's number
 * @len: bytes it carries (SEND, WRITE) or asks for (READ)
 * @remote_addr: RDMA and atomics: the target address
 * @rkey: RDMA and atomics: the target's rkey
 * @compare_add: atomics: the compare (CMP_AND_SWP) or add operand
 * @swap: CMP_AND_SWP: the swap operand; ATOMIC WRITE: the value stored
 * @imm_data: _WITH_IMM only: the immediate data
 * @invalidate_rkey: SEND_WITH_INV only: the key to invalidate
 * @grh: UD: the network header the receive starts with; else NULL
 * @net_type: UD: the type of @grh
 * @local: the requester's side: the source of a SEND or WRITE, where a
 *	READ's data or an atomic's original value lands
 * @vdev: the requester's device, whose transfer pipes carry the bytes
 * @fault: where a page fault on the responder's memory is recorded for
 *	the requester, or NULL
 * @nosleep: the requester's run cannot sleep (vhca_engine_post()): a
 *	receive that could fault in place is left (VHCA_DEFER)
 */
struct vhca_req {
	u32 opcode;
	bool ud;
	bool solicited;
	u32 src_qpn;
	u64 len;
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	__be32 imm_data;
	u32 invalidate_rkey;
	union rdma_network_hdr *grh;
	enum rdma_network_type net_type;
	struct vhca_cursor *local;
	struct vhca_dev *vdev;
	struct vhca_fault *fault;
	bool nosleep;
};

/* resp.c: the responder */
enum vhca_verdict vhca_respond(struct vhca_peer *peer, struct vhca_req *req,
			       enum ib_wc_status *status);

/* fault.c: the ODP fault queue */
bool vhca_fault_resolve_sync(struct vhca_fault *f);
void vhca_fault_raise(struct vhca_qp *qp);
void vhca_fault_work(struct work_struct *work);

#endif /* _VHCA_ENGINE_LOC_H */
