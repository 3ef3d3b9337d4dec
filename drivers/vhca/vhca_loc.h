/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca: prototypes shared between the driver's files.
 */
#ifndef _VHCA_LOC_H
#define _VHCA_LOC_H

#include <linux/atomic.h>
#include <linux/io.h>
#include <linux/wait_bit.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/vhca.h>

#include "vhca.h"

/* Context slot @index of the mkey context table; @index is checked. */
static inline void __iomem *vhca_mkc_slot(struct vhca_dev *vdev, u32 index)
{
	return vdev->mem.mkc + (size_t)index * VHCA_MKC_SIZE;
}

/* Can a QP in @state receive (RTR or later, not in error)? */
static inline bool vhca_state_receives(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD || state == IB_QPS_SQE;
}

/* ah.c */
void vhca_ah_table_init(struct vhca_dev *vdev);
void vhca_ah_table_fini(struct vhca_dev *vdev);
int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int vhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr);
int vhca_destroy_ah(struct ib_ah *ibah, u32 flags);
/*
 * The destination of a user UD WQE: the AH numbered @ah_num (create_ah's
 * struct rxe_create_ah_resp), if it is in the PD numbered @pdn. Any
 * context. Return: 0, or -EINVAL for no such AH.
 */
int vhca_ah_lookup(struct vhca_dev *vdev, u32 ah_num, u32 pdn,
		   union ib_gid *dgid, u8 *sgid_index);

/* cq.c */
int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int vhca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
/*
 * Add a completion; never sleeps. Calls the completion handler, with no
 * lock held, if the CQ is armed for it (IB_CQ_NEXT_COMP, or
 * IB_CQ_SOLICITED and @solicited or an error status): call it holding no
 * QP lock, and not from inside a verb the consumer called.
 * Return: 0, or -ENOSPC if the ring is full: the completion is lost, the
 * CQ is in error and IB_EVENT_CQ_ERR has been dispatched (on the first
 * loss only).
 */
int vhca_cq_post(struct vhca_cq *cq, const struct ib_wc *wc, bool solicited);
void vhca_cq_raise_owed(void);
void vhca_cq_sync_owed(struct ib_cq *send_cq, struct ib_cq *recv_cq);

/* debugfs.c */
void vhca_debugfs_init(struct vhca_dev *vdev, struct dentry *root);
void vhca_debugfs_fini(struct vhca_dev *vdev);

/* devmem.c */

/**
 * struct vhca_counted - the counters one remote write passes through
 * @ids: counter slots of the contexts its walks resolved
 * @srcu: read-side index of the counters' SRCU, held from
 *	vhca_counted_begin() to vhca_counted_end()
 */
struct vhca_counted {
	DECLARE_BITMAP(ids, VHCA_MAX_COUNTERS);
	int srcu;
};

extern const struct mrc_hw_ops vhca_hw_ops;
void vhca_counted_begin(struct vhca_counted *cnt);
void vhca_counted_end(struct vhca_dev *vdev, struct vhca_counted *cnt,
		      bool success);
int vhca_devmem_init(struct vhca_dev *vdev);
void vhca_devmem_fini(struct vhca_dev *vdev);
int vhca_mkey_users_init(struct vhca_dev *vdev);
void vhca_mkey_users_fini(struct vhca_dev *vdev);
void vhca_mkey_drain(struct vhca_dev *vdev, u32 index);
bool vhca_mkey_drained(struct vhca_dev *vdev, u32 index);
int vhca_read_mkey(struct vhca_dev *vdev, u32 index, struct mrc_mkey_ctx *out);
int vhca_mkey_xlt_check(struct vhca_dev *vdev, const struct mrc_mkey_ctx *ctx);
const char *vhca_mkey_state_name(u8 state);
const char *vhca_access_mode_name(u8 mode);

/**
 * vhca_mkey_put - release a slot held by vhca_mkey_get()
 * @vdev: the device
 * @key: the key that was got
 *
 * Context: any context; does not sleep.
 */
static inline void vhca_mkey_put(struct vhca_dev *vdev, u32 key)
{
	atomic_t *users = &vdev->mkey_users[mrc_key_index(key)];

	/* Fully ordered: every byte is copied before the count drops. */
	if (atomic_dec_and_test(users))
		wake_up_var(users);
}

/**
 * vhca_mkey_get - look a key up and hold its slot against invalidation
 * @vdev: the device
 * @key: any 32-bit value
 * @ctx: out: the slot's context, stable until vhca_mkey_put()
 *
 * Context: any context; does not sleep.
 * Return: 0 with the slot held, or -ENOKEY if the slot does not exist, is
 * not VALID or holds another key (another variant); nothing is held then.
 */
static inline int vhca_mkey_get(struct vhca_dev *vdev, u32 key,
				struct mrc_mkey_ctx *ctx)
{
	u32 index = mrc_key_index(key);
	atomic_t *users;

	if (!index || index >= vdev->mdev.caps.max_mkeys)
		return -ENOKEY;

	/* Leave the count of a revoked slot alone, so its drain finishes. */
	if (readb(vhca_mkc_slot(vdev, index) + VHCA_MKC_STATE) !=
	    MRC_MKEY_VALID)
		return -ENOKEY;

	users = &vdev->mkey_users[index];
	atomic_inc(users);
	/* Pairs with smp_mb() in vhca_mkey_drain(): count before state. */
	smp_mb__after_atomic();
	vhca_read_mkey(vdev, index, ctx);
	if (ctx->state != MRC_MKEY_VALID || ctx->key != key) {
		vhca_mkey_put(vdev, key);
		return -ENOKEY;
	}
	return 0;
}

/* fabric.c: the in-kernel loopback fabric joining every vhca port */
void vhca_fabric_add(struct vhca_dev *vdev);
void vhca_fabric_del(struct vhca_dev *vdev);
/*
 * The registered vhca whose port holds @dgid (RoCE v2), with
 * ib_device_try_get() taken (ib_device_put() it), or NULL.
 */
struct vhca_dev *vhca_fabric_route(const union ib_gid *dgid);
/**
 * struct vhca_peer - the responder of one message
 * @vdev: its device, with a registration reference
 * @qp: its QP, with a reference
 * @access: the responder QP's qp_access_flags
 * @qkey: the responder QP's Q_Key (UD)
 * @min_rnr_timer: the responder QP's RNR timer encoding
 */
struct vhca_peer {
	struct vhca_dev *vdev;
	struct vhca_qp *qp;
	int access;
	u32 qkey;
	u8 min_rnr_timer;
};

int vhca_fabric_resolve(struct vhca_qp *qp, const union ib_gid *sgid,
			const union ib_gid *dgid, u32 dqpn, bool nosleep,
			struct vhca_peer *peer);
void vhca_fabric_release(struct vhca_peer *peer);

/* frwr.c: fast registration */
/*
 * The longest page list of a fast-reg MR (max_fast_reg_page_list_len):
 * 4 KiB of MTT per MR, as rxe's limit; ULPs ask for at most 256 or so.
 */
#define VHCA_MAX_FRWR_PAGES	512
u32 vhca_frwr_max_sg(struct vhca_dev *vdev, enum ib_mr_type type);
struct ib_mr *vhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int vhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
/*
 * Executed by the engine in QP order, as the device: IB_WR_REG_MR writes
 * @ibmr's page list (or SG_GAPS range list) into its translation entries
 * and then its context (key @key, @access, VALID) into device memory;
 * LOCAL_INV and remote invalidation move the context of @key (a fast-reg
 * MR's or a type 2 window's, the latter on the window's own QP @qpn only)
 * to FREE; IB_WR_BIND_MW binds a type 2 window to an MR and to the QP
 * @qpn. @pdn and @qpn are the executing QP's (the responder's for a Send
 * with Invalidate).
 * Return: 0 or a negative errno the engine turns into a completion
 * status (IB_WC_MW_BIND_ERR for REG_MR and BIND_MW, IB_WC_LOC_PROT_ERR or
 * IB_WC_REM_INV_REQ_ERR for invalidation).
 */
int vhca_exec_reg_mr(struct vhca_dev *vdev, u32 pdn, struct ib_mr *ibmr,
		     u32 key, int access, bool nosleep);
int vhca_exec_inv(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
		  bool nosleep);
int vhca_exec_bind_mw(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 mw_key,
		      u32 mr_key, u64 addr, u64 length, u32 access);
int vhca_exec_user_bind_mw(struct vhca_dev *vdev, u32 pdn, u32 qpn,
			   u32 cur_rkey, u32 new_rkey, u32 mr_key, u64 addr,
			   u64 length, u32 access);

/* main.c */
bool vhca_is_vhca(struct ib_device *ibdev);
void vhca_dev_retire(struct vhca_dev *vdev);

/* mr.c */
int vhca_mr_access(int access, u32 *mrc_access);
struct ib_mr *vhca_mr_attach(struct vhca_mr *mr, struct mrc_mr *base_mr);
struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
struct ib_mr *vhca_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 iova, int fd, int access,
				      struct ib_udata *udata);
struct ib_mr *vhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *new_pd, struct ib_udata *udata);
int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int vhca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int vhca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs);

/* alloc.c */
struct mrc_mr *vhca_amr_register(struct vhca_mr *mr, struct vhca_pd *pd,
				 struct ib_ucontext *ibuc,
				 struct mrc_reg_attr *attr, u64 length,
				 u64 *offset);
void vhca_amr_free(struct vhca_mr *mr);
u32 vhca_amr_blocks(const struct vhca_mr *mr);

/* uapi.c */
/*
 * ib_core exports these three (EXPORT_SYMBOL in 6.1's restrack.c) but
 * declares them in its private drivers/infiniband/core/restrack.h, which
 * no headers package ships. uapi.c's methods that make an MR object add
 * it to restrack as ib_uverbs' own MR methods do, so `rdma res show mr`
 * lists it; the declarations are 6.1's.
 */
void rdma_restrack_new(struct rdma_restrack_entry *res,
		       enum rdma_restrack_type type);
void rdma_restrack_set_name(struct rdma_restrack_entry *res,
			    const char *caller);
void rdma_restrack_add(struct rdma_restrack_entry *res);
extern const struct uapi_definition vhca_uapi_defs[];
void vhca_uapi_mr_free_parts(struct vhca_mr *mr);

/* mw.c */
int vhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int vhca_dealloc_mw(struct ib_mw *ibmw);

/* stats.c */
struct rdma_hw_stats *vhca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num);
int vhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

/* qp.c */
int vhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		   struct ib_udata *udata);
int vhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		   struct ib_udata *udata);
int vhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		  struct ib_qp_init_attr *init_attr);
int vhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int vhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
/* The QP numbered @qpn on @vdev with a reference taken, or NULL. */
struct vhca_qp *vhca_qp_get(struct vhca_dev *vdev, u32 qpn);
void vhca_qp_put(struct vhca_qp *qp);
/*
 * Move @qp to ERR (the engine, on a fatal completion; no async event, the
 * completion reports it) and kick the engine to flush both queues. Never
 * sleeps.
 */
void vhca_qp_error(struct vhca_qp *qp);

/* srq.c: receive queues, shared or not */
int vhca_rq_init(struct vhca_rq *rq, u32 max_wr, u32 max_sge);
/* A user RQ: a ring in the context of @udata; *@mi says where to map it. */
int vhca_rq_init_user(struct vhca_rq *rq, u32 max_wr, u32 max_sge,
		      struct ib_udata *udata, struct mminfo *mi);
void vhca_rq_fini(struct vhca_rq *rq);
/* Validate and queue; -EINVAL (too many SGEs) or -ENOMEM (full), *bad_wr set. */
int vhca_rq_post(struct vhca_rq *rq, const struct ib_recv_wr *wr,
		 const struct ib_recv_wr **bad_wr);
/* Take the oldest receive into @out (room for max_sge SGEs); false if empty. */
bool vhca_rq_pop(struct vhca_rq *rq, struct vhca_recv_wqe *out);
bool vhca_rq_peek(struct vhca_rq *rq, struct vhca_recv_wqe *out);
void vhca_rq_drop(struct vhca_rq *rq);
void vhca_rq_unpeek(struct vhca_rq *rq);
/*
 * As vhca_rq_pop(); *@limit_reached says the armed limit was crossed (and
 * disarmed): the caller then calls vhca_srq_limit_event() holding no lock.
 */
bool vhca_srq_pop(struct vhca_srq *srq, struct vhca_recv_wqe *out,
		  bool *limit_reached);
void vhca_srq_limit_event(struct vhca_srq *srq);
int vhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init_attr,
		    struct ib_udata *udata);
int vhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask attr_mask, struct ib_udata *udata);
int vhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int vhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int vhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);

/* uring.c: user contexts and the rings they share (rxe's user ABI) */
int vhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void vhca_dealloc_ucontext(struct ib_ucontext *ibuc);
void vhca_disassociate_ucontext(struct ib_ucontext *ibuc);
int vhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
struct rdma_user_mmap_entry *vhca_mmap_pages_insert(struct ib_ucontext *ibuc,
						    struct page **pages,
						    unsigned long npages,
						    u64 *offset);
void vhca_mmap_free(struct rdma_user_mmap_entry *rdma);
int vhca_uring_init(struct vhca_uring *r, struct ib_udata *udata, u32 nelem,
		    size_t elem_size, struct mminfo *mi);
void vhca_uring_fini(struct vhca_uring *r);
void vhca_uring_reset(struct vhca_uring *r);
int vhca_udata_in_check(struct ib_udata *udata, size_t known);
/*
 * Write @resp (@len bytes) to the driver output of @udata, which must have
 * room for it: -EINVAL if it is shorter, -EFAULT if the copy fails.
 */
int vhca_udata_out(struct ib_udata *udata, void *resp, size_t len);

/* xfer.c: does one of the @num SGEs of @sge name @key? */
bool vhca_sge_names(const struct ib_sge *sge, u32 num, u32 key);

/* queue_user.c: the rings as the engine, srq.c and cq.c see them */
size_t vhca_user_sq_elem(u32 max_sge, u32 max_inline);
size_t vhca_user_rq_elem(u32 max_sge);
void vhca_usq_reset(struct vhca_sq *sq);
bool vhca_urq_pop(struct vhca_rq *rq, struct vhca_recv_wqe *out);
u32 vhca_urq_count(struct vhca_rq *rq);
void vhca_urq_reset(struct vhca_rq *rq);
bool vhca_ucq_push(struct vhca_cq *cq, const struct ib_wc *wc);
bool vhca_ucq_empty(struct vhca_cq *cq);
int vhca_ucq_move(struct vhca_cq *cq, struct vhca_uring *r, u32 cqe);

/* verbs.c */
struct vhca_dev *vhca_dev_alloc(const char *name, struct net_device *ndev,
				u32 max_mkeys, u64 xlt_size);
void vhca_dev_free(struct vhca_dev *vdev);
int vhca_hw_init(struct vhca_dev *vdev, struct dentry *debugfs_root);
int vhca_ib_register(struct vhca_dev *vdev);
enum ib_port_state vhca_port_state(struct net_device *ndev);
void vhca_dealloc_driver(struct ib_device *ibdev);

/* walker.c */

/* Spans and keys a pipe holds: 128 KiB of 4 KiB pages fit unmerged. */
#define VHCA_PIPE_SPANS		64
#define VHCA_PIPE_KEYS		16
static_assert(VHCA_PIPE_KEYS >= VHCA_WALK_MAX_DEPTH,
	      "the first walk of an empty pipe must fit");

/**
 * struct vhca_span - physically contiguous bytes a gathering walk found
 * @phys: physical address of the first
 * @len: how many
 */
struct vhca_span {
	phys_addr_t phys;
	u32 len;
};

/**
 * struct vhca_pipe - what gathering walks found, held for one copy
 * @nr_spans: entries of @span in use
 * @nr_keys: entries of @key in use: the slots held (vhca_mkey_get())
 * @bytes: bytes of the spans, in the order the walks met them
 * @span: the spans
 * @key: the keys entered, each slot held until vhca_pipe_release()
 */
struct vhca_pipe {
	u32 nr_spans;
	u32 nr_keys;
	u64 bytes;
	struct vhca_span span[VHCA_PIPE_SPANS];
	u32 key[VHCA_PIPE_KEYS];
};

int vhca_access(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key, u64 iova,
		void *buf, size_t len, enum vhca_access_dir dir);
int vhca_access_counted(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
			u64 iova, void *buf, size_t len,
			enum vhca_access_dir dir, unsigned long *counters);
int vhca_access_fault(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
		      u64 iova, void *buf, size_t len,
		      enum vhca_access_dir dir, unsigned long *counters,
		      struct vhca_fault *fault);
int vhca_access_gather(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
		       u64 iova, u64 len, enum vhca_access_dir dir,
		       unsigned long *counters, struct vhca_fault *fault,
		       struct vhca_pipe *p);
void vhca_pipe_release(struct vhca_dev *vdev, struct vhca_pipe *p);

#endif /* _VHCA_LOC_H */
