// SPDX-License-Identifier: GPL-2.0
/*
 * vhca engine: the send-queue scheduler and the requester; executes work
 * requests the way an HCA's DMA engine does.
 *
 * Every QP's send queue runs on the device's workqueue, or in the
 * poster's call when the queue is idle: a user doorbell's system call
 * (vhca_engine_doorbell()), or a kernel post_send for what cannot sleep
 * (vhca_engine_post()). The engine takes the WQE at the queue's tail and
 * executes it to the end before the next one, so the queue is executed
 * in order and fences hold trivially. A message to a peer is delivered
 * through the loopback fabric: the engine finds the responder QP and
 * executes the responder's side too (taking a receive, checking the rkey,
 * moving the bytes, completing the receive).
 *
 * Flow of one WQE: vhca_engine_kick() queues the QP's vhca_sq_work(),
 * whose vhca_sq_run() (or a poster's) takes the WQE at the tail (queue.h)
 * and, with the QP in RTS, calls vhca_exec_wqe(). A memory-management WR
 * executes locally (frwr.c); any other gets a cursor over its list
 * (xfer.c), its responder (vhca_fabric_resolve(), fabric.c) and a
 * request, which the responder executes (vhca_respond(), resp.c). The
 * verdict completes the WQE (vhca_sq_complete()), or arms the RNR or
 * transport retry timer (vhca_retry()); a page fault parks the QP instead
 * (vhca_fault_raise(), fault.c). A queue found empty may be polled a
 * while (engine_linger_us) before the worker is given back. The file
 * reads: completions, the requester, retries, the scheduler, then the
 * QP's and the device's engine state.
 *
 * Every byte moves once between two cursors, one per side of the
 * transfer, from the pages the walker found for one side to those it
 * found for the other, a protection error found before the target is
 * touched: xfer.c.
 *
 * Page faults (ODP) park the QP on the device's fault queue: fault.c.
 *
 * Errors, as the requester sees them (Documentation/mrcore/vhca.rst):
 *   local SGE rejected by the walker            IB_WC_LOC_PROT_ERR
 *   message longer than VHCA_MAX_MSG_SIZE       IB_WC_LOC_LEN_ERR
 *   rkey, range, PD or right rejected           IB_WC_REM_ACCESS_ERR
 *   responder QP lacks the REMOTE_* access, a
 *   misaligned atomic, receive too short, bad
 *   invalidation                                IB_WC_REM_INV_REQ_ERR
 *   no receive posted, rnr_retry exhausted      IB_WC_RNR_RETRY_EXC_ERR
 *   no responder QP, retry_cnt exhausted        IB_WC_RETRY_EXC_ERR
 *   a malformed remote context or table, or the
 *   receive's scatter list refused              IB_WC_REM_OP_ERR
 *   REG_MR or BIND_MW refused                   IB_WC_MW_BIND_ERR
 *   LOCAL_INV refused                           IB_WC_LOC_PROT_ERR
 *   UD: the source GID is gone                  IB_WC_LOC_QP_OP_ERR
 *   UD: message longer than 4096 bytes          IB_WC_LOC_LEN_ERR
 *   a user ring's WQE refused by its checks     the status they chose
 *     (queue_user.c): an opcode the QP type lacks: IB_WC_LOC_QP_OP_ERR,
 *     too many SGEs or too much inline data: IB_WC_LOC_LEN_ERR, an
 *     unknown AH: IB_WC_LOC_QP_OP_ERR
 * An error completion moves the requester QP to ERR; the rest of its send
 * queue completes with IB_WC_WR_FLUSH_ERR.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_pack.h>

#include "engine.h"
#include "engine_loc.h"
#include "queue.h"
#include "vhca_loc.h"

/* WQEs one run of a send queue executes before yielding the worker. */
#define VHCA_SQ_BUDGET		64

/*
 * WQEs a user doorbell executes in its system call, each of at most
 * doorbell_bytes; the worker takes over from the first that is longer.
 */
#define VHCA_DOORBELL_BUDGET	16

/* Who runs a send queue (vhca_qp.run_state). */
enum {
	VHCA_SQ_IDLE,	/* nobody: a kick queues the worker */
	VHCA_SQ_BUSY,	/* one runner: the worker, or a poster's call */
	VHCA_SQ_ARMED,	/* BUSY, and someone found it so: go again */
};

/* How much one run of a send queue may do. */
struct vhca_sq_budget {
	unsigned int wqes;
	u64 max_len;		/* longest WQE the run executes, U64_MAX: any */
	bool linger;		/* poll an empty queue (engine_linger_us) */
	bool nosleep;		/* a kernel post_send's run (vhca_engine_post()) */
};

/*
 * True on a CPU while it runs a send queue inside a kernel post_send
 * (vhca_engine_post()), bottom halves off: such a run may not sleep, and
 * owes its completion handlers' calls to an interrupt (cq.c).
 */
static DEFINE_PER_CPU(bool, vhca_in_post);

/* The longest a transport retry waits, whatever the QP's timeout says. */
#define VHCA_MAX_RETRY_DELAY_US	(USEC_PER_SEC / 4)

/* Largest UD message: one packet of the largest path MTU. */
#define VHCA_UD_MAX_MSG		4096

/* IBTA's RNR NAK timer encodings, in microseconds. */
static const u32 vhca_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* --- completions --- */

static enum ib_wc_opcode vhca_wc_opcode(u32 opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case VHCA_WR_ATOMIC_WRITE:
		/* A user QP's, so only a user CQ ring sees the number. */
		return VHCA_WC_ATOMIC_WRITE;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete the WQE at the tail of @qp's send queue and release its slot.
 * The slot is free before the completion can be polled, as on hardware:
 * ULPs that count send credits (nvmet) post again from their handler.
 */
static void vhca_sq_complete(struct vhca_qp *qp, struct vhca_send_wqe *wqe,
			     enum ib_wc_status status, u32 byte_len)
{
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = vhca_wc_opcode(wqe->opcode),
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.port_num = VHCA_PORT_NUM,
	};
	bool signaled = status != IB_WC_SUCCESS || qp->sq_sig_all ||
			(wqe->send_flags & IB_SEND_SIGNALED);

	ibdev_dbg(&qp->vdev->ibdev, "QP[%u] wr_id 0x%llx opcode %u: %s\n",
		  qp->ibqp.qp_num, wqe->wr_id, wqe->opcode,
		  ib_wc_status_msg(status));

	vhca_queue_sq_advance(qp);
	qp->retrying = false;

	if (signaled)
		vhca_queue_send_cqe(qp, &wc);
}

/* --- the requester --- */

/*
 * Where @qp's WQE goes: the connected peer for RC, the AH's for UD; and
 * for RC the GID it comes from (@sgid), which the peer checks.
 */
static void vhca_wqe_dest(struct vhca_qp *qp, struct vhca_send_wqe *wqe,
			  union ib_gid *sgid, union ib_gid *dgid, u32 *dqpn)
{
	unsigned long flags;

	if (qp->ibqp.qp_type == IB_QPT_RC) {
		spin_lock_irqsave(&qp->state_lock, flags);
		*sgid = qp->sgid;
		*dgid = qp->attr.ah_attr.grh.dgid;
		*dqpn = qp->attr.dest_qp_num;
		spin_unlock_irqrestore(&qp->state_lock, flags);
	} else {
		memset(sgid, 0, sizeof(*sgid));
		*dgid = wqe->ud.dgid;
		*dqpn = wqe->ud.remote_qpn;
	}
}

/* Does @opcode need no peer (a memory-management WR)? */
static bool vhca_opcode_local(u32 opcode)
{
	return opcode == IB_WR_LOCAL_INV || opcode == IB_WR_REG_MR ||
	       opcode == IB_WR_BIND_MW;
}

/*
 * Execute a WQE that needs no peer. A Bind MW binds the window to this
 * QP: remote accesses through it are accepted on this QP only. With
 * @nosleep (a run that cannot sleep), -EAGAIN where the WQE would sleep,
 * nothing done: the worker executes it again.
 */
static int vhca_exec_local(struct vhca_qp *qp, struct vhca_send_wqe *wqe,
			   bool nosleep, enum ib_wc_status *status)
{
	int err;

	switch (wqe->opcode) {
	case IB_WR_LOCAL_INV:
		err = vhca_exec_inv(qp->vdev, qp->pdn, qp->ibqp.qp_num,
				    wqe->ex.invalidate_rkey, nosleep);
		if (err == -EAGAIN && nosleep)
			return err;
		*status = err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
		return 0;
	case IB_WR_BIND_MW:
		if (nosleep)
			return -EAGAIN;
		if (wqe->bind.cur_rkey)		/* a user ring's */
			err = vhca_exec_user_bind_mw(qp->vdev, qp->pdn,
						     qp->ibqp.qp_num,
						     wqe->bind.cur_rkey,
						     wqe->bind.mw_rkey,
						     wqe->bind.mr_lkey,
						     wqe->bind.addr,
						     wqe->bind.length,
						     wqe->bind.access);
		else
			err = vhca_exec_bind_mw(qp->vdev, qp->pdn,
						qp->ibqp.qp_num,
						wqe->bind.mw_rkey,
						wqe->bind.mr_lkey,
						wqe->bind.addr, wqe->bind.length,
						wqe->bind.access);
		*status = err ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
		return 0;
	default:
		err = vhca_exec_reg_mr(qp->vdev, qp->pdn, wqe->reg.mr,
				       wqe->reg.key, wqe->reg.access, nosleep);
		if (err == -EAGAIN && nosleep)
			return err;
		*status = err ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
		return 0;
	}
}

/*
 * The network header a UD receive starts with, as RoCE v2 delivers it:
 * an IPv4 header in the last 20 bytes of the 40 for IPv4-mapped GIDs,
 * else an IPv6 header (the GRH).
 */
static void vhca_make_grh(union rdma_network_hdr *hdr, const union ib_gid *sgid,
			  const union ib_gid *dgid, u32 paylen,
			  enum rdma_network_type *type)
{
	memset(hdr, 0, sizeof(*hdr));
	if (ipv6_addr_v4mapped((const struct in6_addr *)sgid)) {
		struct iphdr *ip = &hdr->roce4grh;

		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->tot_len = htons(sizeof(*ip) + paylen);
		memcpy(&ip->saddr, &sgid->raw[12], 4);
		memcpy(&ip->daddr, &dgid->raw[12], 4);
		ip->check = ip_fast_csum((u8 *)ip, ip->ihl);
		*type = RDMA_NETWORK_IPV4;
	} else {
		struct ib_grh *grh = &hdr->ibgrh;

		grh->version_tclass_flow = cpu_to_be32(6 << 28);
		grh->paylen = cpu_to_be16(paylen);
		grh->next_hdr = IPPROTO_UDP;
		grh->hop_limit = 64;
		grh->sgid = *sgid;
		grh->dgid = *dgid;
		*type = RDMA_NETWORK_IPV6;
	}
}

/*
 * The requester's side of a SEND, checked before the responder's receive
 * is touched, as on a wire: the gather list @src is probed for its @len
 * bytes and, for UD, the network header @hdr built from the source GID.
 */
static enum ib_wc_status vhca_send_prepare(struct vhca_qp *qp,
					   struct vhca_send_wqe *wqe,
					   struct vhca_cursor *src, u64 len,
					   union rdma_network_hdr *hdr,
					   enum rdma_network_type *type)
{
	const struct ib_gid_attr *sattr;

	if (vhca_cursor_probe(src, len))
		return IB_WC_LOC_PROT_ERR;
	if (qp->ibqp.qp_type == IB_QPT_RC)
		return IB_WC_SUCCESS;

	sattr = rdma_get_gid_attr(&qp->vdev->ibdev, VHCA_PORT_NUM,
				  wqe->ud.sgid_index);
	if (IS_ERR(sattr)) {
		/* The source GID went away: nothing can be sent. */
		return IB_WC_LOC_QP_OP_ERR;
	}
	vhca_make_grh(hdr, &sattr->gid, &wqe->ud.dgid, len + 8, type);
	rdma_put_gid_attr(sattr);
	return IB_WC_SUCCESS;
}

/* The request @qp's @wqe makes of its responder; @local holds @len bytes. */
static void vhca_req_init(struct vhca_req *req, struct vhca_qp *qp,
			  struct vhca_send_wqe *wqe, struct vhca_cursor *local,
			  u64 len)
{
	*req = (struct vhca_req) {
		.opcode = wqe->opcode,
		.ud = qp->ibqp.qp_type != IB_QPT_RC,
		.solicited = wqe->send_flags & IB_SEND_SOLICITED,
		.src_qpn = qp->ibqp.qp_num,
		.len = len,
		.imm_data = wqe->ex.imm_data,
		.invalidate_rkey = wqe->ex.invalidate_rkey,
		.net_type = RDMA_NETWORK_IB,
		.local = local,
		.vdev = qp->vdev,
		.fault = vhca_qp_fault(qp),
	};
	switch (wqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		req->remote_addr = wqe->rdma.remote_addr;
		req->rkey = wqe->rdma.rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case VHCA_WR_ATOMIC_WRITE:
		req->remote_addr = wqe->atomic.remote_addr;
		req->rkey = wqe->atomic.rkey;
		req->compare_add = wqe->atomic.compare_add;
		req->swap = wqe->atomic.swap;
		break;
	default:
		break;
	}
}

/*
 * Execute @wqe, the WQE at the tail of @qp's send queue.
 * Return: the verdict; with VHCA_DONE, *@status and *@byte_len are set.
 */
static enum vhca_verdict vhca_exec_wqe(struct vhca_qp *qp,
				       struct vhca_send_wqe *wqe, bool nosleep,
				       enum ib_wc_status *status, u32 *byte_len)
{
	union rdma_network_hdr grh;
	struct vhca_peer peer;
	enum vhca_access_dir dir;
	enum vhca_verdict v;
	struct vhca_cursor sgl;
	struct vhca_req req;
	union ib_gid sgid, dgid;
	u32 dqpn;
	u64 len;
	int err;

	*byte_len = 0;
	/* A user WQE that failed its checks (queue_user.c): nothing runs. */
	if (unlikely(wqe->refused != IB_WC_SUCCESS)) {
		*status = wqe->refused;
		return VHCA_DONE;
	}
	if (vhca_opcode_local(wqe->opcode))
		return vhca_exec_local(qp, wqe, nosleep, status) ?
		       VHCA_DEFER : VHCA_DONE;

	/* A READ's and an atomic's list is where the response lands. */
	dir = wqe->opcode == IB_WR_RDMA_READ ||
	      wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	      wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD ?
	      VHCA_ACCESS_LOCAL_WRITE : VHCA_ACCESS_LOCAL_READ;
	if (wqe->send_flags & IB_SEND_INLINE) {
		vhca_cursor_sgl(&sgl, qp, NULL, wqe->inline_len, dir);
		sgl.inline_data = wqe->inline_data;
		len = wqe->inline_len;
	} else {
		vhca_cursor_sgl(&sgl, qp, wqe->sge, wqe->num_sge, dir);
		sgl.fault = vhca_qp_fault(qp);
		len = vhca_sge_bytes(wqe->sge, wqe->num_sge);
	}
	if (len > VHCA_MAX_MSG_SIZE ||
	    (qp->ibqp.qp_type != IB_QPT_RC && len > VHCA_UD_MAX_MSG)) {
		*status = IB_WC_LOC_LEN_ERR;
		return VHCA_DONE;
	}

	vhca_wqe_dest(qp, wqe, &sgid, &dgid, &dqpn);
	err = vhca_fabric_resolve(qp, &sgid, &dgid, dqpn, nosleep, &peer);
	if (err == -EAGAIN)
		return VHCA_DEFER;
	if (err) {
		ibdev_dbg(&qp->vdev->ibdev, "QP[%u] to %pI6 QP[%u]: no peer\n",
			  qp->ibqp.qp_num, &dgid, dqpn);
		if (qp->ibqp.qp_type != IB_QPT_RC) {
			*status = IB_WC_SUCCESS;	/* UD: lost silently */
			return VHCA_DONE;
		}
		return VHCA_LOST;
	}

	if (qp->ibqp.qp_type != IB_QPT_RC) {
		/* post_send resolved a "use the QP's" Q_Key already. */
		u32 qkey = wqe->ud.remote_qkey;

		if (qkey != peer.qkey) {
			ibdev_dbg(&qp->vdev->ibdev,
				  "QP[%u] to QP[%u]: Q_Key 0x%x, want 0x%x\n",
				  qp->ibqp.qp_num, dqpn, qkey, peer.qkey);
			vhca_fabric_release(&peer);
			*status = IB_WC_SUCCESS;	/* dropped by the peer */
			return VHCA_DONE;
		}
	}

	vhca_req_init(&req, qp, wqe, &sgl, len);
	req.nosleep = nosleep;
	switch (wqe->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		*status = vhca_send_prepare(qp, wqe, &sgl, len, &grh,
					    &req.net_type);
		v = VHCA_DONE;
		if (*status == IB_WC_SUCCESS) {
			if (req.ud)
				req.grh = &grh;
			v = vhca_respond(&peer, &req, status);
		}
		*byte_len = len;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		v = vhca_respond(&peer, &req, status);
		*byte_len = len;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case VHCA_WR_ATOMIC_WRITE:
		v = vhca_respond(&peer, &req, status);
		*byte_len = sizeof(u64);
		break;
	default:
		*status = IB_WC_LOC_QP_OP_ERR;
		v = VHCA_DONE;
		break;
	}
	if (v == VHCA_RNR)
		qp->rnr_timer = peer.min_rnr_timer;
	/* Hold a fault's device (the peer's, maybe) before the peer goes. */
	if (qp->fault.pending)
		qp->fault.held = ib_device_try_get(&qp->fault.vdev->ibdev);
	vhca_fabric_release(&peer);
	return v;
}

/* --- retries --- */

/*
 * A retry is due for the WQE at the tail: count it and arm the timer.
 * Return: false when the retries are used up (the WQE then fails).
 */
static bool vhca_retry(struct vhca_qp *qp, enum vhca_verdict v)
{
	unsigned long flags, delay;
	u8 timeout;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (!qp->retrying) {
		qp->rnr_left = qp->attr.rnr_retry;
		qp->retry_left = qp->attr.retry_cnt;
		qp->retrying = true;
	}
	timeout = qp->attr.timeout;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (v == VHCA_RNR) {
		/* rnr_retry 7 means "retry for ever". */
		if (qp->rnr_left != 7) {
			if (!qp->rnr_left)
				return false;
			qp->rnr_left--;
		}
		delay = usecs_to_jiffies(vhca_rnr_usecs[qp->rnr_timer & 31]);
	} else {
		/* timeout 0 means "wait for ever": keep retrying. */
		if (timeout) {
			if (!qp->retry_left)
				return false;
			qp->retry_left--;
		}
		delay = usecs_to_jiffies(timeout ?
					 min_t(u64, 4ULL << timeout,
					       VHCA_MAX_RETRY_DELAY_US) :
					 VHCA_MAX_RETRY_DELAY_US);
	}
	queue_delayed_work(qp->vdev->wq, &qp->retry_work, max(delay, 1UL));
	return true;
}

/* --- the scheduler --- */

/*
 * How long a send queue's engine waits for the next WQE, polling, after
 * the queue ran dry, before it gives its worker back. A post that lands
 * in that time runs at once instead of paying for a worker wake-up (a
 * cross-CPU wake-up is the dearest step of a small WQE under QEMU TCG).
 * 0 (the default): never wait; values above VHCA_ENGINE_LINGER_MAX_US
 * count as that. The poll gives way to anything else runnable on the
 * CPU. It helps a poster that busy-polls its CQ (frwr_tests --bench) and
 * costs ULPs whose completions wake tasks (NVMe-oF 4 KiB reads, 1 job:
 * about 15% fewer IOPS with 20 us), hence off by default. It and the
 * engine's busy time read local_clock(), not ktime_get(): in our QEMU
 * VMs the clocksource may be the HPET, whose every read is an emulated
 * device access.
 */
#define VHCA_ENGINE_LINGER_MAX_US	1000
static unsigned int engine_linger_us;
module_param(engine_linger_us, uint, 0644);
MODULE_PARM_DESC(engine_linger_us,
		 "microseconds a send queue's engine polls for new WQEs before it sleeps (0: never)");

/*
 * The queue ran dry: poll it for up to engine_linger_us, adding the time
 * polled to @idle_ns. True when a WQE arrived; false when the time is
 * up, the CPU is wanted or the QP stops.
 */
static bool vhca_sq_linger(struct vhca_qp *qp, u64 *idle_ns)
{
	unsigned int us = min_t(unsigned int, READ_ONCE(engine_linger_us),
				VHCA_ENGINE_LINGER_MAX_US);
	bool arrived = false;
	u64 start, end;

	if (!us)
		return false;
	start = local_clock();
	end = start + (u64)us * NSEC_PER_USEC;
	do {
		if (need_resched() || !single_task_running() ||
		    READ_ONCE(qp->stopped))
			break;
		cpu_relax();
		if (vhca_queue_sq_pending(qp)) {
			arrived = true;
			break;
		}
	} while (local_clock() < end);
	*idle_ns += local_clock() - start;
	return arrived;
}

/*
 * May a run that cannot sleep (vhca_engine_post()) execute @wqe? REG_MR
 * and LOCAL_INV go to mrcore's _nowait calls, which give up (the WQE then
 * goes to the worker, VHCA_DEFER) where they would wait: for the MR's
 * mutex, or for accesses running through the context an invalidation
 * would revoke. So does a Send with Invalidate's invalidation, after the copy
 * into a receive the run only peeked at and gives back (resp.c). A Bind
 * MW takes the window's mutex and may drain the window bound before; an
 * atomic's result lands with its page faults resolved in place; so does
 * a SEND's copy into the receive it has taken, on the sender's pages or
 * the receiver's, but only when a device involved has ODP keys: this
 * device is checked here, the receiver's as its receive is taken
 * (vhca_queue_take_recv()). RDMA WRITE and READ fault restartably (the
 * QP parks). Read after the WQE was peeked at under the send queue's
 * lock: a key the WQE names was registered before it was posted, so its
 * count is seen.
 */
static bool vhca_wqe_nosleep(struct vhca_qp *qp,
			     const struct vhca_send_wqe *wqe)
{
	switch (wqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
		return true;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		return !atomic_read(&qp->vdev->odp_mkeys);
	default:
		return false;
	}
}

/* Bytes @wqe moves, for a budget's max_len (an atomic's eight count). */
static u64 vhca_wqe_len(const struct vhca_send_wqe *wqe)
{
	if (wqe->send_flags & IB_SEND_INLINE)
		return wqe->inline_len;
	return max_t(u64, vhca_sge_bytes(wqe->sge, wqe->num_sge), sizeof(u64));
}

/*
 * Run @qp's send queue within @b, counting the WQEs executed in *@done.
 * True when the budget ran out with work left (a WQE beyond the count,
 * longer than max_len, or one a run that cannot sleep leaves), so the
 * caller has the worker run the queue again.
 */
static bool vhca_sq_run(struct vhca_qp *qp, const struct vhca_sq_budget *b,
			u64 *idle_ns, unsigned int *done)
{
	unsigned int budget = b->wqes;

	while (budget--) {
		struct vhca_send_wqe *wqe;
		enum ib_wc_status status;
		enum vhca_verdict v;
		enum ib_qp_state state;
		unsigned int rx_busy;
		unsigned long flags;
		bool stopped;
		u32 byte_len;

		spin_lock_irqsave(&qp->state_lock, flags);
		state = qp->state;
		stopped = qp->stopped;
		rx_busy = qp->rx_busy;
		spin_unlock_irqrestore(&qp->state_lock, flags);
		/* A parked QP waits for its fault work, which kicks it. */
		if (stopped || smp_load_acquire(&qp->parked))
			return false;

		/*
		 * Receives another engine holds complete first; the last
		 * of them kicks this work again (->rq_done()).
		 */
		if (state == IB_QPS_ERR && !rx_busy && budget == b->wqes - 1)
			vhca_queue_rq_flush(qp);

		wqe = vhca_queue_sq_peek(qp);
		if (!wqe) {
			if (!b->linger || !vhca_sq_linger(qp, idle_ns))
				return false;
			continue;
		}
		if (b->max_len != U64_MAX && vhca_wqe_len(wqe) > b->max_len)
			return true;

		if (state == IB_QPS_ERR) {
			vhca_sq_complete(qp, wqe, IB_WC_WR_FLUSH_ERR, 0);
			(*done)++;
			continue;
		}
		/* SQD, SQE and the states before RTS execute nothing. */
		if (state != IB_QPS_RTS)
			return false;
		/*
		 * A WQE waiting out an RNR or retry timer waits, however
		 * often post_send kicks: the timer's work runs it.
		 */
		if (qp->retrying && delayed_work_pending(&qp->retry_work))
			return false;

		if (b->nosleep && !vhca_wqe_nosleep(qp, wqe))
			return true;
		v = vhca_exec_wqe(qp, wqe, b->nosleep, &status, &byte_len);
		if (qp->fault.pending) {
			vhca_fault_raise(qp);
			return false;
		}
		/* Nothing happened: the worker executes the WQE. */
		if (v == VHCA_DEFER)
			return true;
		qp->fault_failed = false;
		if (v != VHCA_DONE) {
			if (vhca_retry(qp, v))
				return false;
			status = v == VHCA_RNR ? IB_WC_RNR_RETRY_EXC_ERR :
						 IB_WC_RETRY_EXC_ERR;
		}
		/* In ERR before the error completion can be polled. */
		if (status != IB_WC_SUCCESS)
			vhca_queue_error(qp);
		vhca_sq_complete(qp, wqe, status, byte_len);
		(*done)++;
	}
	return true;
}

/*
 * Take @qp's send queue to run it. False when another runner has it: that
 * one is then armed to have the worker run the queue again when it stops,
 * so nothing posted meanwhile waits for a kick that never comes.
 */
static bool vhca_sq_claim(struct vhca_qp *qp)
{
	unsigned long flags;
	bool claimed;

	spin_lock_irqsave(&qp->run_lock, flags);
	claimed = qp->run_state == VHCA_SQ_IDLE;
	qp->run_state = claimed ? VHCA_SQ_BUSY : VHCA_SQ_ARMED;
	spin_unlock_irqrestore(&qp->run_lock, flags);
	return claimed;
}

/*
 * Give @qp's send queue up; the worker runs it again if @more work is left
 * or the runner was armed. The work is queued before the queue is seen
 * idle, so vhca_engine_qp_stop(), which waits for idle, then cancels it.
 */
static void vhca_sq_unclaim(struct vhca_qp *qp, bool more)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->run_lock, flags);
	if (more || qp->run_state == VHCA_SQ_ARMED)
		queue_work(qp->vdev->wq, &qp->sq_work);
	qp->run_state = VHCA_SQ_IDLE;
	spin_unlock_irqrestore(&qp->run_lock, flags);
	/*
	 * wake_up_var() looks for waiters without a lock: the store of IDLE
	 * must be visible before that look, and an unlock orders nothing
	 * after it. Pairs with the barrier of wait_var_event() between
	 * queueing its waiter and reading run_state: either the stop sees
	 * IDLE or it is found and woken. Without it the stop could sleep
	 * for ever (a QP destroyed as its one run ended).
	 */
	smp_mb();
	/* Hashes the address only: @qp may be gone already. */
	wake_up_var(&qp->run_state);
}

/*
 * One run of @qp's send queue within @b, its busy time accounted. The
 * queue is given up last: a stop may then free @qp.
 */
static void vhca_sq_run_claimed(struct vhca_qp *qp,
				const struct vhca_sq_budget *b, bool inline_run)
{
	u64 start = local_clock(), idle_ns = 0;
	unsigned int done = 0;
	bool more;
	s64 busy;

	more = vhca_sq_run(qp, b, &idle_ns, &done);
	if (done)
		atomic64_add(done, inline_run ? &qp->vdev->engine_inline_wqes :
						&qp->vdev->engine_worker_wqes);
	/*
	 * local_clock() of another CPU if the run slept and moved: it may be
	 * a little behind, so a negative span counts as nothing.
	 */
	busy = (s64)(local_clock() - start) - (s64)idle_ns;
	if (busy > 0)
		atomic64_add(busy, &qp->vdev->engine_busy_ns);
	vhca_sq_unclaim(qp, more);
}

static void vhca_sq_work(struct work_struct *work)
{
	static const struct vhca_sq_budget b = {
		.wqes = VHCA_SQ_BUDGET,
		.max_len = U64_MAX,
		.linger = true,
	};
	struct vhca_qp *qp = container_of(work, struct vhca_qp, sq_work);

	/* Budget used up: the work is queued again, and other QPs run first. */
	if (vhca_sq_claim(qp))
		vhca_sq_run_claimed(qp, &b, false);
}

static void vhca_retry_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(to_delayed_work(work),
					  struct vhca_qp, retry_work);

	queue_work(qp->vdev->wq, &qp->sq_work);
}

/* --- a QP's and a device's engine state --- */

/**
 * vhca_engine_qp_init - prepare a QP's engine state
 * @qp: a QP not yet visible to anyone
 */
void vhca_engine_qp_init(struct vhca_qp *qp)
{
	INIT_WORK(&qp->sq_work, vhca_sq_work);
	spin_lock_init(&qp->run_lock);
	qp->run_state = VHCA_SQ_IDLE;
	INIT_DELAYED_WORK(&qp->retry_work, vhca_retry_work);
	INIT_WORK(&qp->fault_work, vhca_fault_work);
	qp->retrying = false;
	qp->parked = false;
	qp->fault_failed = false;
	qp->fault.pending = false;
	qp->fault.held = false;
}

/**
 * vhca_engine_kick - run a QP's send queue soon
 * @qp: the QP
 *
 * Context: any context; does not sleep.
 */
void vhca_engine_kick(struct vhca_qp *qp)
{
	/* A pending retry timer is overtaken: the queue runs now. */
	queue_work(qp->vdev->wq, &qp->sq_work);
}

/*
 * Run @qp's send queue within @b in the poster's call, if nobody runs it;
 * with a max_len of 0, have the worker run it.
 */
static void vhca_engine_run_here(struct vhca_qp *qp,
				 const struct vhca_sq_budget *b)
{
	if (!b->max_len)
		vhca_engine_kick(qp);
	else if (vhca_sq_claim(qp))
		vhca_sq_run_claimed(qp, b, true);
}

static unsigned int doorbell_bytes = SZ_4K;
module_param(doorbell_bytes, uint, 0644);
MODULE_PARM_DESC(doorbell_bytes,
		 "longest WQE a user doorbell executes in its system call; longer ones, and all when 0, go to the engine's worker");

/**
 * vhca_engine_doorbell - run a user QP's send queue in its doorbell's call
 * @qp: a QP with a user send ring, whose doorbell (a POST_SEND of no WR)
 *	is being rung
 *
 * A process that rings a doorbell waits for its work; a NIC answers at
 * once. So when nobody runs the queue, the caller's system call executes
 * up to VHCA_DOORBELL_BUDGET WQEs of at most doorbell_bytes each itself:
 * no worker wake-up and no context switch between the post and its
 * completion (ib_write_lat's round trip is the two processes' system
 * calls). A longer WQE, or what is left past the budget, goes to the
 * worker, where large transfers overlap with the poster. The rules of a
 * run are the worker's: in order, ODP faults park the QP, retries wait
 * for their timer.
 *
 * Context: process context, no lock held; does not sleep.
 */
void vhca_engine_doorbell(struct vhca_qp *qp)
{
	struct vhca_sq_budget b = {
		.wqes = VHCA_DOORBELL_BUDGET,
		.max_len = READ_ONCE(doorbell_bytes),
	};

	vhca_engine_run_here(qp, &b);
}

/*
 * Off by default, by the numbers (Documentation/mrcore/datapath.rst, "The
 * execution model"): with every NVMe-oF WQE run in post_send, a lone 4 KiB
 * read took 42% less time, but under load each I/O cost 1.3x to 2.1x the CPU
 * time and 4 KiB QD 32 IOPS fell to 0.40x to 0.66x.
 */
static unsigned int post_bytes;
module_param(post_bytes, uint, 0644);
MODULE_PARM_DESC(post_bytes,
		 "longest WQE a kernel post_send executes in its call (at most 128 KiB); longer ones, and all when 0 (the default), go to the engine's worker");

/**
 * vhca_engine_post - run a kernel QP's send queue in its post_send's call
 * @qp: a kernel QP whose post_send has just queued WQEs
 *
 * A NIC starts on a doorbell at once; a worker wake-up costs a context
 * switch on the way there, and another on the way back when the worker's
 * completion wakes a task. So when nobody runs the queue, the poster
 * executes up to VHCA_DOORBELL_BUDGET WQEs of at most post_bytes each
 * itself, the rest going to the worker as from a doorbell.
 *
 * post_send never sleeps, ULPs call it holding spinlocks or RCU, and
 * core_locking.rst forbids calling the consumer back from inside it. So
 * the run happens only in task context with interrupts and bottom halves
 * on (it turns the latter off), and leaves to the worker the first WQE
 * that could sleep or call back directly, untouched or as it found it
 * (vhca_wqe_nosleep(), a receive as vhca_queue_take_recv() allows it, a
 * first message that establishes its responder, vhca_fabric_resolve()).
 * A QP on an SRQ does not run here: its move to ERR dispatches
 * IB_EVENT_QP_LAST_WQE_REACHED. Completion
 * handlers and CQ events are owed until the run ends, which raises an
 * interrupt on this CPU (an irq_work) to make them, as a NIC would
 * (vhca_cq_raise_owed()); a softirq a handler raises (irq_poll) runs at
 * the run's bottom-half enable, or as the interrupt ends if that comes
 * later. (Made from a CQ tasklet instead, the irq_poll a handler raised
 * waited for a second softirq pass, which was ksoftirqd's whenever a
 * task woken meanwhile wanted the CPU: about one switch to it per NVMe-oF
 * I/O, Documentation/mrcore/datapath.rst.) A post from a completion
 * handler never runs here: handlers are called with bottom halves off or
 * in that interrupt, and such a post goes to the worker.
 *
 * Context: any; does not sleep.
 */
void vhca_engine_post(struct vhca_qp *qp)
{
	struct vhca_sq_budget b = {
		.wqes = VHCA_DOORBELL_BUDGET,
		.max_len = min_t(u64, READ_ONCE(post_bytes), VHCA_XFER_CHUNK),
		.nosleep = true,
	};

	/*
	 * Off (the default), or not here: no bottom-half toggle per post.
	 * Not with bottom halves off already (in_softirq(): a lock the
	 * caller holds may be taken in softirqs, and the run takes locks,
	 * mrcore's included, that are not softirq-safe), nor on PREEMPT_RT,
	 * where disabling them leaves the CPU to other tasks, which would
	 * see the run's per-CPU flag.
	 */
	if (!b.max_len || qp->srq || !in_task() || irqs_disabled() ||
	    in_softirq() || IS_ENABLED(CONFIG_PREEMPT_RT)) {
		vhca_engine_kick(qp);
		return;
	}
	vhca_engine_nosleep_begin();
	vhca_engine_run_here(qp, &b);
	vhca_engine_nosleep_end();
}

/**
 * vhca_engine_nosleep_begin - enter a run that may not sleep
 *
 * Bottom halves off, so this CPU is the run's until vhca_engine_nosleep_end()
 * (its per-CPU transfer pipes included), and vhca_engine_nosleep() true on
 * it. vhca_engine_post() runs a send queue so; KUnit cases call what such
 * a run calls so.
 *
 * Context: task context, interrupts on, not already in such a run.
 */
void vhca_engine_nosleep_begin(void)
{
	local_bh_disable();
	WARN_ON_ONCE(__this_cpu_read(vhca_in_post));
	__this_cpu_write(vhca_in_post, true);
}

/**
 * vhca_engine_nosleep_end - leave the run vhca_engine_nosleep_begin() entered
 *
 * Raises the interrupt that makes the completion handlers and CQ events
 * the run owed, then turns bottom halves back on.
 */
void vhca_engine_nosleep_end(void)
{
	__this_cpu_write(vhca_in_post, false);
	vhca_cq_raise_owed();
	local_bh_enable();
}

/**
 * vhca_engine_nosleep - is this CPU in a run that may not sleep?
 *
 * True inside vhca_engine_post()'s run. Its rules keep page faults that
 * would be resolved in place out of it; one met anyway (a receive posted
 * with a key that was registered as an ODP MR only later) fails instead.
 *
 * Context: any.
 */
bool vhca_engine_nosleep(void)
{
	return this_cpu_read(vhca_in_post);
}

/**
 * vhca_engine_qp_stop - stop running a QP's send queue
 * @qp: the QP, with @qp->stopped set or its state moved so nothing runs
 *
 * Waits until the engine has left the QP's send queue and no retry is
 * armed. Other QPs' engines may still hold @qp as their responder: the
 * QP's reference count covers those.
 *
 * Context: process context; sleeps.
 */
void vhca_engine_qp_stop(struct vhca_qp *qp)
{
	/*
	 * The work re-arms the timer and the timer queues the work; it also
	 * parks the QP on the fault queue, whose work queues it again. A
	 * fault cancelled before it ran still holds its device.
	 */
	do {
		cancel_delayed_work_sync(&qp->retry_work);
		if (cancel_work_sync(&qp->fault_work)) {
			ib_device_put(&qp->fault.vdev->ibdev);
			qp->fault.held = false;
		}
		/* A poster's run queues what it leaves before it ends. */
		wait_var_event(&qp->run_state,
			       READ_ONCE(qp->run_state) == VHCA_SQ_IDLE);
		cancel_work_sync(&qp->sq_work);
	} while (delayed_work_pending(&qp->retry_work) ||
		 work_pending(&qp->fault_work));
	qp->retrying = false;
	/* The WQE at the tail runs again, and faults again, when resumed. */
	qp->parked = false;
	qp->fault_failed = false;
	qp->fault.pending = false;
}

/**
 * vhca_engine_init - bring up a device's engine
 * @vdev: the device
 *
 * Return: 0 or -ENOMEM.
 */
int vhca_engine_init(struct vhca_dev *vdev)
{
	unsigned int cpu;

	spin_lock_init(&vdev->atomic_lock);
	atomic64_set(&vdev->engine_busy_ns, 0);
	atomic64_set(&vdev->engine_inline_wqes, 0);
	atomic64_set(&vdev->engine_worker_wqes, 0);
	vdev->xbuf = kcalloc(nr_cpu_ids, sizeof(*vdev->xbuf), GFP_KERNEL);
	if (!vdev->xbuf)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		vdev->xbuf[cpu] = kzalloc_node(sizeof(*vdev->xbuf[cpu]),
					       GFP_KERNEL, cpu_to_node(cpu));
		if (!vdev->xbuf[cpu])
			goto out_free;
	}

	/* Reclaim may wait on I/O that only this engine completes. */
	vdev->wq = alloc_workqueue("vhca-%s", WQ_UNBOUND | WQ_MEM_RECLAIM |
				   WQ_HIGHPRI, 0, vdev->name);
	if (!vdev->wq)
		goto out_free;
	/* Faults allocate and take mmap locks: never from reclaim's I/O. */
	vdev->fault_wq = alloc_workqueue("vhca-%s-pf", WQ_UNBOUND, 0,
					 vdev->name);
	if (!vdev->fault_wq)
		goto out_destroy_wq;
	memset(&vdev->odp, 0, sizeof(vdev->odp));
	return 0;

out_destroy_wq:
	destroy_workqueue(vdev->wq);
out_free:
	for_each_possible_cpu(cpu)
		kfree(vdev->xbuf[cpu]);
	kfree(vdev->xbuf);
	vdev->xbuf = NULL;
	return -ENOMEM;
}

/**
 * vhca_engine_fini - take a device's engine down
 * @vdev: the device; every QP is destroyed
 */
void vhca_engine_fini(struct vhca_dev *vdev)
{
	unsigned int cpu;

	if (!vdev->xbuf)
		return;
	/* Asynchronous prefetches may still be queued: they finish first. */
	destroy_workqueue(vdev->fault_wq);
	destroy_workqueue(vdev->wq);
	for_each_possible_cpu(cpu)
		kfree(vdev->xbuf[cpu]);
	kfree(vdev->xbuf);
	vdev->xbuf = NULL;
}
