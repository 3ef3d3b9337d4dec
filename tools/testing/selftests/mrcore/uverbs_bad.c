// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input from user space through rxe's user ABI (issue 18, item 5):
 * the program opens a device with libibverbs only to get its command
 * file (context->cmd_fd) and its GID, and from there talks to the kernel
 * the raw way: uverbs write() commands built here from
 * <rdma/ib_user_verbs.h>, rxe's driver responses from
 * <rdma/rdma_user_rxe.h>, the SQ, RQ, SRQ and CQ rings (struct
 * rxe_queue_buf) mmapped at the offsets those responses give.
 *
 *  - udata: every create verb with a short core response (ENOSPC, the
 *    core's), a driver response one word short (EINVAL), a nonzero tail
 *    after the command and a block of garbage as driver input (EINVAL or
 *    EOPNOTSUPP); after each, a good create of the same object works.
 *  - rings: two RC QPs connected to each other on the device's own GID
 *    (one with an RQ, one on an SRQ) get seeded garbage in their send,
 *    receive and SRQ rings, producer indices moved forwards, backwards and
 *    past index_mask, garbage CQ consumer indices and ring headers, each
 *    round rung with a POST_SEND of no WR (as librxe rings). Each round
 *    must end: the kernel consumes what was posted or moves the QP to ERR
 *    within a deadline. Canaries (unregistered guards around an MR, a
 *    read-only MR, a buffer never registered) must be unchanged after;
 *    then a fresh pair does an RDMA WRITE through the rings, bytes checked.
 *  - path: RC QPs made with libibverbs' verbs over the port's two IPv4
 *    RoCE v2 GIDs: a SEND arrives only where the responder's path names
 *    the sender's GID as its destination and the GID it was sent to as
 *    its source (a QP of the right number elsewhere gets nothing).
 *
 * Environment: MRC_UDEV (device, default vhca0), MRC_UBAD_SEED,
 * MRC_UBAD_ROUNDS (default 2000), MRC_UBAD_CLASSES (the garbage classes,
 * comma separated, default all: see class_names), MRC_UBAD_RXE=1 (the
 * device is the rxe reference: its known deviations from what vhca must
 * do are reported as SKIP with the errno it gave, not as passes).
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <stdbool.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "user_util.h"

#define PAGE		4096UL
#define DEADLINE_S	60
#define PORT		1

#define ACC_LW		IBV_ACCESS_LOCAL_WRITE
#define ACC_RW		IBV_ACCESS_REMOTE_WRITE
#define ACC_RR		IBV_ACCESS_REMOTE_READ
#define ACC_RA		IBV_ACCESS_REMOTE_ATOMIC
#define ACC_MWB		IBV_ACCESS_MW_BIND

struct udev {
	struct ibv_context *ctx;
	int fd;
	union ibv_gid gid;
	int gid_index;
	bool rxe;		/* the reference: known deviations are SKIPs */
};

/* A mapped ring and our own copies of its geometry and our index. */
struct ring {
	struct rxe_queue_buf *buf;
	size_t size;
	uint32_t mask;
	uint32_t log2;
	uint32_t idx;		/* producer (SQ, RQ, SRQ) or consumer (CQ) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* xorshift64*: the rounds are a function of the printed seed. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static void rnd_fill(void *p, size_t len)
{
	uint8_t *b = p;

	while (len--)
		*b++ = rnd() | 1;	/* nonzero: "garbage" is never "cleared" */
}

/* ---------------------------------------------------------------- */
/* Device and raw commands                                          */

static int udev_open(struct udev *d)
{
	const char *name = getenv("MRC_UDEV") ?: "vhca0";
	struct ibv_device **list;
	int i, n;

	memset(d, 0, sizeof(*d));
	d->rxe = getenv("MRC_UBAD_RXE") && atoi(getenv("MRC_UBAD_RXE"));
	list = ibv_get_device_list(&n);
	if (!list)
		return -errno;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d->ctx)
		return -ENODEV;
	d->fd = d->ctx->cmd_fd;
	/*
	 * A GID of port 1: the netdev's IPv4 address (::ffff:a.b.c.d) if
	 * it has one, else the first that is set.
	 */
	d->gid_index = -1;
	for (i = 0; i < 16; i++) {
		union ibv_gid g;
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		if (ibv_query_gid(d->ctx, PORT, i, &g))
			break;
		if (!g.global.subnet_prefix && !g.global.interface_id)
			continue;
		if (d->gid_index < 0 || !memcmp(g.raw, v4, sizeof(v4))) {
			d->gid = g;
			d->gid_index = i;
		}
		if (!memcmp(g.raw, v4, sizeof(v4)))
			break;
	}
	if (d->gid_index >= 0)
		return 0;
	ibv_close_device(d->ctx);
	d->ctx = NULL;
	return -ENOENT;
}

static void udev_close(struct udev *d)
{
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->ctx = NULL;
}

/*
 * One write() command: header, @core (@core_len bytes; when @resp, its
 * first u64 is set to the response address), then @drv_len bytes of
 * driver input; @resp_len bytes of response. 0 or -errno.
 */
static int uv_cmd(int fd, uint32_t op, void *core, size_t core_len,
		  const void *drv, size_t drv_len, void *resp, size_t resp_len)
{
	alignas(8) uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	size_t len = sizeof(*h) + core_len + drv_len;
	ssize_t n;

	if (len > sizeof(buf) || len % 4 || resp_len % 4)
		return -E2BIG;
	if (resp)
		*(uint64_t *)core = (uintptr_t)resp;
	h->command = op;
	h->in_words = len / 4;
	h->out_words = resp_len / 4;
	memcpy(buf + sizeof(*h), core, core_len);
	if (drv_len)
		memcpy(buf + sizeof(*h) + core_len, drv, drv_len);
	n = write(fd, buf, len);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

static int destroy_handle(int fd, uint32_t op, uint32_t handle)
{
	struct { uint64_t response; uint32_t handle, reserved; } c = {
		.handle = handle };
	uint64_t resp[2];

	switch (op) {
	case IB_USER_VERBS_CMD_DESTROY_QP:
	case IB_USER_VERBS_CMD_DESTROY_CQ:
	case IB_USER_VERBS_CMD_DESTROY_SRQ:
		return uv_cmd(fd, op, &c, sizeof(c), NULL, 0, resp,
			      op == IB_USER_VERBS_CMD_DESTROY_CQ ? 8 : 4);
	default:	/* dealloc_pd, dereg_mr, dealloc_mw, destroy_ah */
		return uv_cmd(fd, op, &c.handle, 4, NULL, 0, NULL, 0);
	}
}

static int pd_alloc(struct udev *d, uint32_t *pd)
{
	struct ib_uverbs_alloc_pd c = {};
	struct ib_uverbs_alloc_pd_resp r;
	int ret = uv_cmd(d->fd, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c),
			 NULL, 0, &r, sizeof(r));

	*pd = r.pd_handle;
	return ret;
}

static int ring_map(struct udev *d, struct ring *q, const struct mminfo *mi)
{
	void *p;

	memset(q, 0, sizeof(*q));
	if (!mi->size)
		return 0;	/* no ring (an SRQ QP's RQ) */
	p = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd,
		 mi->offset);
	if (p == MAP_FAILED)
		return -errno;
	q->buf = p;
	q->size = mi->size;
	q->mask = q->buf->index_mask;
	q->log2 = q->buf->log2_elem_size;
	if (q->log2 > 16 || q->log2 < 5 ||
	    sizeof(*q->buf) + (((size_t)q->mask + 1) << q->log2) > q->size)
		return -EPROTO;
	q->idx = q->buf->producer_index & q->mask;
	return 0;
}

static void ring_unmap(struct ring *q)
{
	if (q->buf)
		munmap(q->buf, q->size);
	q->buf = NULL;
}

static void *ring_elem(struct ring *q, uint32_t idx)
{
	return q->buf->data + ((size_t)(idx & q->mask) << q->log2);
}

struct ucq {
	uint32_t handle;
	struct ring r;
};

static int cq_create(struct udev *d, int cqe, struct ucq *cq)
{
	struct ib_uverbs_create_cq c = { .cqe = cqe, .comp_channel = -1 };
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct rxe_create_cq_resp drv;
	} r;
	int ret;

	ret = uv_cmd(d->fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), NULL, 0,
		     &r, sizeof(r));
	if (ret)
		return ret;
	cq->handle = r.core.cq_handle;
	ret = ring_map(d, &cq->r, &r.drv.mi);
	cq->r.idx = cq->r.buf ? cq->r.buf->consumer_index & cq->r.mask : 0;
	return ret;
}

static void cq_destroy(struct udev *d, struct ucq *cq)
{
	ring_unmap(&cq->r);
	destroy_handle(d->fd, IB_USER_VERBS_CMD_DESTROY_CQ, cq->handle);
}

struct usrq {
	uint32_t handle;
	struct ring r;
};

static int srq_create(struct udev *d, uint32_t pd, struct usrq *srq)
{
	struct ib_uverbs_create_srq c = { .pd_handle = pd, .max_wr = 64,
					  .max_sge = 4 };
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct rxe_create_srq_resp drv;
	} r;
	int ret;

	ret = uv_cmd(d->fd, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c), NULL,
		     0, &r, sizeof(r));
	if (ret)
		return ret;
	srq->handle = r.core.srq_handle;
	return ring_map(d, &srq->r, &r.drv.mi);
}

static void srq_destroy(struct udev *d, struct usrq *srq)
{
	ring_unmap(&srq->r);
	destroy_handle(d->fd, IB_USER_VERBS_CMD_DESTROY_SRQ, srq->handle);
}

struct uqp {
	uint32_t handle;
	uint32_t qpn;
	uint32_t max_sge;	/* what the SQ's elements hold */
	struct ring sq, rq;
};

static void qp_cmd(struct ib_uverbs_create_qp *c, uint32_t pd,
		   struct ucq *cq, struct usrq *srq, int type)
{
	memset(c, 0, sizeof(*c));
	c->pd_handle = pd;
	c->send_cq_handle = cq->handle;
	c->recv_cq_handle = cq->handle;
	c->max_send_wr = 32;
	c->max_recv_wr = srq ? 0 : 32;
	c->max_send_sge = 4;
	c->max_recv_sge = srq ? 0 : 4;
	c->max_inline_data = 64;
	c->qp_type = type;
	if (srq) {
		c->is_srq = 1;
		c->srq_handle = srq->handle;
	}
}

static int qp_create(struct udev *d, uint32_t pd, struct ucq *cq,
		     struct usrq *srq, int type, struct uqp *qp)
{
	struct ib_uverbs_create_qp c;
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct rxe_create_qp_resp drv;
	} r;
	size_t room;
	int ret;

	qp_cmd(&c, pd, cq, srq, type);
	memset(qp, 0, sizeof(*qp));
	ret = uv_cmd(d->fd, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), NULL, 0,
		     &r, sizeof(r));
	if (ret)
		return ret;
	qp->handle = r.core.qp_handle;
	qp->qpn = r.core.qpn;
	ret = ring_map(d, &qp->sq, &r.drv.sq_mi);
	if (!ret)
		ret = ring_map(d, &qp->rq, &r.drv.rq_mi);
	if (ret || !qp->sq.buf)
		return ret ?: -EPROTO;
	room = (1UL << qp->sq.log2) - offsetof(struct rxe_send_wqe, dma.sge);
	qp->max_sge = room / sizeof(struct rxe_sge);
	return 0;
}

static void qp_destroy(struct udev *d, struct uqp *qp)
{
	ring_unmap(&qp->sq);
	ring_unmap(&qp->rq);
	destroy_handle(d->fd, IB_USER_VERBS_CMD_DESTROY_QP, qp->handle);
}

static void ah_cmd(struct udev *d, struct ib_uverbs_create_ah *c, uint32_t pd)
{
	memset(c, 0, sizeof(*c));
	c->pd_handle = pd;
	memcpy(c->attr.grh.dgid, d->gid.raw, 16);
	c->attr.grh.sgid_index = d->gid_index;
	c->attr.grh.hop_limit = 64;
	c->attr.is_global = 1;
	c->attr.port_num = PORT;
}

struct umr {
	uint32_t handle, lkey, rkey;
};

static int mr_reg(struct udev *d, uint32_t pd, void *addr, size_t len,
		  int access, struct umr *mr)
{
	struct ib_uverbs_reg_mr c = {
		.start = (uintptr_t)addr, .length = len,
		.hca_va = (uintptr_t)addr, .pd_handle = pd,
		.access_flags = access,
	};
	struct ib_uverbs_reg_mr_resp r;
	int ret;

	ret = uv_cmd(d->fd, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), NULL, 0,
		     &r, sizeof(r));
	mr->handle = r.mr_handle;
	mr->lkey = r.lkey;
	mr->rkey = r.rkey;
	return ret;
}

static int qp_modify(struct udev *d, struct uqp *qp, int state,
		     uint32_t dest_qpn)
{
	struct ib_uverbs_modify_qp c = { .qp_handle = qp->handle,
					 .qp_state = state };

	switch (state) {
	case IBV_QPS_INIT:
		c.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS;
		c.port_num = PORT;
		c.qp_access_flags = ACC_LW | ACC_RW | ACC_RR | ACC_RA;
		break;
	case IBV_QPS_RTR:
		c.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		c.path_mtu = IBV_MTU_1024;
		c.dest_qp_num = dest_qpn;
		c.max_dest_rd_atomic = 1;
		c.min_rnr_timer = 1;
		memcpy(c.dest.dgid, d->gid.raw, 16);
		c.dest.sgid_index = d->gid_index;
		c.dest.hop_limit = 64;
		c.dest.is_global = 1;
		c.dest.port_num = PORT;
		break;
	case IBV_QPS_RTS:
		/* Few retries: a request the peer drops errs out quickly. */
		c.attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			      IBV_QP_MAX_QP_RD_ATOMIC;
		c.timeout = 12;
		c.retry_cnt = 1;
		c.rnr_retry = 0;
		c.max_rd_atomic = 1;
		break;
	default:
		c.attr_mask = IBV_QP_STATE;
		break;
	}
	return uv_cmd(d->fd, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), NULL,
		      0, NULL, 0);
}

/* The QP's state, or -errno. */
static int qp_state(struct udev *d, struct uqp *qp)
{
	struct ib_uverbs_query_qp c = { .qp_handle = qp->handle,
					.attr_mask = IBV_QP_STATE };
	struct ib_uverbs_query_qp_resp r;
	int ret;

	ret = uv_cmd(d->fd, IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c), NULL, 0,
		     &r, sizeof(r));
	return ret ?: r.qp_state;
}

/* RESET, INIT, RTR (towards @dest), RTS; our ring indices follow the kernel's. */
static int qp_connect(struct udev *d, struct uqp *qp, uint32_t dest)
{
	int ret;

	ret = qp_modify(d, qp, IBV_QPS_RESET, 0) ?:
	      qp_modify(d, qp, IBV_QPS_INIT, 0) ?:
	      qp_modify(d, qp, IBV_QPS_RTR, dest) ?:
	      qp_modify(d, qp, IBV_QPS_RTS, 0);
	if (ret)
		return ret;
	qp->sq.idx = qp->sq.buf->consumer_index & qp->sq.mask;
	__atomic_store_n(&qp->sq.buf->producer_index, qp->sq.idx,
			 __ATOMIC_RELEASE);
	if (qp->rq.buf) {
		qp->rq.idx = qp->rq.buf->consumer_index & qp->rq.mask;
		__atomic_store_n(&qp->rq.buf->producer_index, qp->rq.idx,
				 __ATOMIC_RELEASE);
	}
	return 0;
}

/* The doorbell as librxe rings it: POST_SEND with no WR. */
static int doorbell(struct udev *d, struct uqp *qp)
{
	struct ib_uverbs_post_send c = { .qp_handle = qp->handle,
					 .wqe_size = sizeof(struct ibv_send_wr) };
	struct ib_uverbs_post_send_resp r;

	return uv_cmd(d->fd, IB_USER_VERBS_CMD_POST_SEND, &c, sizeof(c), NULL,
		      0, &r, sizeof(r));
}

static void ring_publish(struct ring *q, uint32_t idx)
{
	q->idx = idx;
	__atomic_store_n(&q->buf->producer_index, idx, __ATOMIC_RELEASE);
}

/* Take the CQ's new entries; count those with an error status. */
static unsigned int cq_drain(struct ucq *cq, unsigned int *errors,
			     uint64_t *wr_id, uint32_t *status)
{
	struct ring *q = &cq->r;
	uint32_t prod = __atomic_load_n(&q->buf->producer_index,
					__ATOMIC_ACQUIRE) & q->mask;
	unsigned int n = 0;

	while (q->idx != prod) {
		struct ib_uverbs_wc *wc = ring_elem(q, q->idx);

		if (wc->status && errors)
			(*errors)++;
		if (wr_id)
			*wr_id = wc->wr_id;
		if (status)
			*status = wc->status;
		q->idx = (q->idx + 1) & q->mask;
		n++;
	}
	__atomic_store_n(&q->buf->consumer_index, q->idx, __ATOMIC_RELEASE);
	return n;
}

/* ---------------------------------------------------------------- */
/* a) udata of every create verb                                    */

enum verb { V_PD, V_CQ, V_QP_RC, V_QP_UD, V_SRQ, V_AH, V_MR, V_MW };
enum bad { B_SHORT_CORE, B_SHORT_DRV, B_TAIL, B_GARBAGE, B_GOOD };

static const char *const verb_names[] = {
	"alloc_pd", "create_cq", "create_qp(RC)", "create_qp(UD)",
	"create_srq", "create_ah", "reg_mr", "alloc_mw" };

/* What each verb needs: a PD, a CQ, an SRQ, a registered buffer. */
struct uctx {
	struct udev d;
	uint32_t pd;
	struct ucq cq;
	void *buf;
};

/*
 * Issue @v with @bad; on success destroy what it made. Returns 0 or
 * -errno of the create.
 */
static int create_bad(struct uctx *u, enum verb v, enum bad bad)
{
	alignas(8) uint8_t core[256] = {};
	alignas(8) uint8_t resp[256] = {};
	uint8_t drv[64];
	size_t core_len, core_resp, drv_resp, drv_len = 0, resp_len;
	uint32_t op, destroy, handle_off = 0;
	int ret;

	switch (v) {
	case V_PD:
		op = IB_USER_VERBS_CMD_ALLOC_PD;
		destroy = IB_USER_VERBS_CMD_DEALLOC_PD;
		core_len = sizeof(struct ib_uverbs_alloc_pd);
		core_resp = sizeof(struct ib_uverbs_alloc_pd_resp);
		drv_resp = 0;
		break;
	case V_CQ: {
		struct ib_uverbs_create_cq *c = (void *)core;

		c->cqe = 16;
		c->comp_channel = -1;
		op = IB_USER_VERBS_CMD_CREATE_CQ;
		destroy = IB_USER_VERBS_CMD_DESTROY_CQ;
		core_len = sizeof(*c);
		core_resp = sizeof(struct ib_uverbs_create_cq_resp);
		drv_resp = sizeof(struct rxe_create_cq_resp);
		break;
	}
	case V_QP_RC:
	case V_QP_UD:
		qp_cmd((void *)core, u->pd, &u->cq, NULL,
		       v == V_QP_RC ? IBV_QPT_RC : IBV_QPT_UD);
		op = IB_USER_VERBS_CMD_CREATE_QP;
		destroy = IB_USER_VERBS_CMD_DESTROY_QP;
		core_len = sizeof(struct ib_uverbs_create_qp);
		core_resp = sizeof(struct ib_uverbs_create_qp_resp);
		drv_resp = sizeof(struct rxe_create_qp_resp);
		break;
	case V_SRQ: {
		struct ib_uverbs_create_srq *c = (void *)core;

		c->pd_handle = u->pd;
		c->max_wr = 16;
		c->max_sge = 2;
		op = IB_USER_VERBS_CMD_CREATE_SRQ;
		destroy = IB_USER_VERBS_CMD_DESTROY_SRQ;
		core_len = sizeof(*c);
		core_resp = sizeof(struct ib_uverbs_create_srq_resp);
		drv_resp = sizeof(struct rxe_create_srq_resp);
		break;
	}
	case V_AH:
		ah_cmd(&u->d, (void *)core, u->pd);
		op = IB_USER_VERBS_CMD_CREATE_AH;
		destroy = IB_USER_VERBS_CMD_DESTROY_AH;
		core_len = sizeof(struct ib_uverbs_create_ah);
		core_resp = sizeof(struct ib_uverbs_create_ah_resp);
		drv_resp = sizeof(struct rxe_create_ah_resp);
		break;
	case V_MR: {
		struct ib_uverbs_reg_mr *c = (void *)core;

		c->start = (uintptr_t)u->buf;
		c->hca_va = c->start;
		c->length = PAGE;
		c->pd_handle = u->pd;
		c->access_flags = ACC_LW | ACC_RW;
		op = IB_USER_VERBS_CMD_REG_MR;
		destroy = IB_USER_VERBS_CMD_DEREG_MR;
		core_len = sizeof(*c);
		core_resp = sizeof(struct ib_uverbs_reg_mr_resp);
		drv_resp = 0;
		break;
	}
	case V_MW:
	default: {
		struct ib_uverbs_alloc_mw *c = (void *)core;

		c->pd_handle = u->pd;
		c->mw_type = IBV_MW_TYPE_2;
		op = IB_USER_VERBS_CMD_ALLOC_MW;
		destroy = IB_USER_VERBS_CMD_DEALLOC_MW;
		core_len = sizeof(*c);
		core_resp = sizeof(struct ib_uverbs_alloc_mw_resp);
		drv_resp = 0;
		break;
	}
	}
	resp_len = core_resp + drv_resp;
	switch (bad) {
	case B_SHORT_CORE:
		resp_len = core_resp - 4;
		break;
	case B_SHORT_DRV:
		resp_len = core_resp + drv_resp - 4;
		break;
	case B_TAIL:
		memset(drv, 0, 8);
		drv[5] = 0x5a;
		drv_len = 8;
		break;
	case B_GARBAGE:
		rnd_fill(drv, sizeof(drv));
		drv_len = sizeof(drv);
		break;
	case B_GOOD:
		break;
	}
	ret = uv_cmd(u->d.fd, op, core, core_len, drv, drv_len, resp, resp_len);
	if (!ret) {
		uint32_t h;

		memcpy(&h, resp + handle_off, 4);
		destroy_handle(u->d.fd, destroy, h);
	}
	return ret;
}

FIXTURE(udata) {
	struct uctx u;
};

FIXTURE_SETUP(udata)
{
	int ret = udev_open(&self->u.d);

	/* Named by the runner, which made it: not opening it is a failure. */
	ASSERT_TRUE(!ret || !getenv("MRC_UDEV"))
		TH_LOG("cannot open %s: %s", getenv("MRC_UDEV"), strerror(-ret));
	if (ret)
		SKIP(return, "no device %s (%s): the runner creates it",
		     getenv("MRC_UDEV") ?: "vhca0", strerror(-ret));
	rng_state = 0x9e3779b97f4a7c15ULL;
	ASSERT_EQ(0, pd_alloc(&self->u.d, &self->u.pd));
	ASSERT_EQ(0, cq_create(&self->u.d, 64, &self->u.cq));
	self->u.buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->u.buf);
	memset(self->u.buf, 0, PAGE);
}

FIXTURE_TEARDOWN(udata)
{
	if (!self->u.d.ctx)
		return;
	cq_destroy(&self->u.d, &self->u.cq);
	destroy_handle(self->u.d.fd, IB_USER_VERBS_CMD_DEALLOC_PD, self->u.pd);
	udev_close(&self->u.d);
}

FIXTURE_VARIANT(udata) {
	enum verb verb;
	bool has_drv_resp;
};

FIXTURE_VARIANT_ADD(udata, alloc_pd) {
	.verb = V_PD,
	.has_drv_resp = false,
};

FIXTURE_VARIANT_ADD(udata, create_cq) {
	.verb = V_CQ,
	.has_drv_resp = true,
};

FIXTURE_VARIANT_ADD(udata, create_qp_rc) {
	.verb = V_QP_RC,
	.has_drv_resp = true,
};

FIXTURE_VARIANT_ADD(udata, create_qp_ud) {
	.verb = V_QP_UD,
	.has_drv_resp = true,
};

FIXTURE_VARIANT_ADD(udata, create_srq) {
	.verb = V_SRQ,
	.has_drv_resp = true,
};

FIXTURE_VARIANT_ADD(udata, create_ah) {
	.verb = V_AH,
	.has_drv_resp = true,
};

FIXTURE_VARIANT_ADD(udata, reg_mr) {
	.verb = V_MR,
	.has_drv_resp = false,
};

FIXTURE_VARIANT_ADD(udata, alloc_mw) {
	.verb = V_MW,
	.has_drv_resp = false,
};

/*
 * The device still creates the object properly after the bad call: a
 * good create and destroy, 4 times (so a leaked slot or lock shows).
 */
#define STILL_WORKS() do { \
	for (int _i = 0; _i < 4; _i++) \
		ASSERT_EQ(0, create_bad(&self->u, variant->verb, B_GOOD)) \
			TH_LOG("good %s after the bad one", \
			       verb_names[variant->verb]); \
} while (0)

/*
 * A deviation of the rxe reference from what vhca must do: logged and
 * reported as a SKIP (with what rxe did), never as a pass.
 */
static void rxe_deviation(struct __test_metadata *_metadata,
			  enum verb verb, int ret, const char *what)
{
	TH_LOG("%s: %s returned %d (%s)", verb_names[verb], what, ret,
	       ret ? strerror(-ret) : "success");
}

static const char *rxe_says(int ret)
{
	return ret ? strerror(-ret) : "success";
}

/* 6.1's harness runs the body after a SKIP in the setup: skip again. */
#define NO_DEV_NAME (getenv("MRC_UDEV") ?: "vhca0")

/* A response shorter than the core's part: the core refuses it. */
TEST_F(udata, short_core_resp)
{
	int ret;

	if (!self->u.d.ctx)
		SKIP(return, "no device %s", NO_DEV_NAME);
	ret = create_bad(&self->u, variant->verb, B_SHORT_CORE);

	TH_LOG("%s, core response 4 bytes short: %d", verb_names[variant->verb],
	       ret);
	ASSERT_TRUE(ret == -ENOSPC || ret == -EINVAL) TH_LOG("got %d", ret);
	STILL_WORKS();
}

/* The driver's response (ring offsets, numbers) one word short: EINVAL. */
TEST_F(udata, short_drv_resp)
{
	int ret;

	if (!self->u.d.ctx)
		SKIP(return, "no device %s", NO_DEV_NAME);
	if (!variant->has_drv_resp)
		SKIP(return, "%s has no driver response",
		     verb_names[variant->verb]);
	ret = create_bad(&self->u, variant->verb, B_SHORT_DRV);
	TH_LOG("%s, driver response 4 bytes short: %d",
	       verb_names[variant->verb], ret);
	/* rxe takes a short AH response as an old librxe (no ah_num). */
	if (self->u.d.rxe && variant->verb == V_AH && ret != -EINVAL) {
		rxe_deviation(_metadata, variant->verb, ret, "a short driver response");
		STILL_WORKS();
		SKIP(return, "rxe reference: %s short driver response: %s (vhca refuses)",
		     verb_names[variant->verb], rxe_says(ret));
	}
	ASSERT_EQ(-EINVAL, ret);
	STILL_WORKS();
}

static bool refused_input(int ret)
{
	return ret == -EINVAL || ret == -EOPNOTSUPP;
}

/* A command longer than the verb's with a nonzero tail: refused. */
TEST_F(udata, nonzero_tail)
{
	int ret;

	if (!self->u.d.ctx)
		SKIP(return, "no device %s", NO_DEV_NAME);
	ret = create_bad(&self->u, variant->verb, B_TAIL);

	TH_LOG("%s, 8-byte nonzero tail: %d", verb_names[variant->verb], ret);
	if (self->u.d.rxe && !refused_input(ret)) {
		rxe_deviation(_metadata, variant->verb, ret, "a nonzero input tail");
		STILL_WORKS();
		SKIP(return, "rxe reference: %s nonzero input tail: %s (vhca refuses)",
		     verb_names[variant->verb], rxe_says(ret));
	}
	ASSERT_TRUE(refused_input(ret)) TH_LOG("got %d", ret);
	STILL_WORKS();
}

/* 64 bytes of garbage as driver input: refused (rxe takes none). */
TEST_F(udata, garbage_drv_input)
{
	int ret;

	if (!self->u.d.ctx)
		SKIP(return, "no device %s", NO_DEV_NAME);
	ret = create_bad(&self->u, variant->verb, B_GARBAGE);

	TH_LOG("%s, 64 bytes of garbage driver input: %d",
	       verb_names[variant->verb], ret);
	if (self->u.d.rxe && !refused_input(ret)) {
		rxe_deviation(_metadata, variant->verb, ret, "garbage driver input");
		STILL_WORKS();
		SKIP(return, "rxe reference: %s garbage driver input: %s (vhca refuses)",
		     verb_names[variant->verb], rxe_says(ret));
	}
	ASSERT_TRUE(refused_input(ret)) TH_LOG("got %d", ret);
	STILL_WORKS();
}

/* ---------------------------------------------------------------- */
/* b) garbage in the rings                                          */

enum gclass {
	G_WQE,		/* plausible WQEs with bad fields */
	G_RAND,		/* random bytes as a WQE */
	G_PROD_BACK,	/* SQ producer moved backwards */
	G_PROD_WILD,	/* SQ producer past index_mask */
	G_RQ,		/* garbage receive WQEs (RQ) */
	G_SRQ,		/* garbage receive WQEs (SRQ) */
	G_CQ_CI,	/* garbage CQ consumer index */
	G_HDR,		/* garbage log2_elem_size / index_mask */
	G_NR
};

static const char *const class_names[G_NR] = {
	"wqe", "rand", "prod_back", "prod_wild", "rq", "srq", "cq_ci", "hdr" };

static unsigned int parse_classes(void)
{
	const char *env = getenv("MRC_UBAD_CLASSES");
	unsigned int mask = 0, i;
	char *s, *tok, *save;

	if (!env || !*env || !strcmp(env, "all"))
		return (1U << G_NR) - 1;
	s = strdup(env);
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		for (i = 0; i < G_NR; i++)
			if (!strcmp(tok, class_names[i]))
				mask |= 1U << i;
	free(s);
	return mask;
}

#define CAN_LEN		(16 * PAGE)	/* each canary area */

struct canaries {
	uint8_t *area;		/* guard | MR | guard, CAN_LEN each */
	uint8_t *ro;		/* a remote-read-only MR */
	uint8_t *plain;		/* never registered */
	struct umr mr, ro_mr;
};

static uint8_t pattern(size_t i, unsigned int salt)
{
	return (uint8_t)(i * 131 + (i >> 9) + salt * 29) | 0x80;
}

static void fill(uint8_t *p, size_t len, unsigned int salt)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(i, salt);
}

/* Offset of the first byte not as filled, or -1. */
static long changed(const uint8_t *p, size_t len, unsigned int salt)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern(i, salt))
			return i;
	return -1;
}

struct rig {
	struct udev d;
	uint32_t pd;
	struct ucq cq_a, cq_b;
	struct usrq srq;
	struct uqp a, b;	/* a: own RQ; b: on the SRQ */
	uint32_t mw_rkey, mw_handle;
	struct canaries c;
	unsigned int classes;
	unsigned int err_cqes, qp_errs, cqes;
};

/* An address a garbage WQE may name: valid, near, outside, wild. */
static uint64_t pick_addr(struct rig *r)
{
	struct canaries *c = &r->c;

	switch (rnd_below(9)) {
	case 0: return (uintptr_t)c->area + CAN_LEN + rnd_below(CAN_LEN);
	case 1: return (uintptr_t)c->area + CAN_LEN - rnd_below(64) - 1;
	case 2: return (uintptr_t)c->area + 2 * CAN_LEN - rnd_below(64);
	case 3: return (uintptr_t)c->area + rnd_below(3 * CAN_LEN);
	case 4: return (uintptr_t)c->ro + rnd_below(CAN_LEN);
	case 5: return (uintptr_t)c->plain + rnd_below(CAN_LEN);
	case 6: return 0;
	case 7: return ~0ULL - rnd_below(4096);
	default: return rnd();
	}
}

static uint32_t pick_key(struct rig *r)
{
	switch (rnd_below(8)) {
	case 0: case 1: return r->c.mr.lkey;
	case 2: return r->c.mr.rkey;
	case 3: return r->c.ro_mr.lkey;
	case 4: return r->c.ro_mr.rkey;
	case 5: return r->mw_rkey;
	case 6: return r->c.mr.lkey ^ (1U << rnd_below(32));
	default: return rnd();
	}
}

static uint32_t pick_len(void)
{
	switch (rnd_below(6)) {
	case 0: return 0;
	case 1: return rnd_below(64) + 1;
	case 2: return rnd_below(CAN_LEN) + 1;
	case 3: return 0x80000000U + rnd_below(16);
	case 4: return ~0U - rnd_below(16);
	default: return rnd();
	}
}

static uint32_t pick_count(uint32_t max)
{
	switch (rnd_below(5)) {
	case 0: return max;
	case 1: return max + 1 + rnd_below(4);
	case 2: return rnd();
	default: return rnd_below(max + 1);
	}
}

static void garbage_sges(struct rig *r, struct rxe_dma_info *dma,
			 uint32_t room)
{
	uint32_t n = room < 8 ? room : 8, i, total = 0;

	for (i = 0; i < n; i++) {
		dma->sge[i].addr = pick_addr(r);
		dma->sge[i].length = pick_len();
		dma->sge[i].lkey = pick_key(r);
		total += dma->sge[i].length;
	}
	dma->num_sge = pick_count(room);
	dma->length = rnd_below(2) ? total : pick_len();
	dma->resid = rnd_below(2) ? dma->length : pick_len();
	dma->cur_sge = rnd_below(4) ? 0 : pick_count(room);
	dma->sge_offset = rnd_below(4) ? 0 : pick_len();
}

static void garbage_wqe(struct rig *r, struct uqp *qp, void *elem)
{
	struct rxe_send_wqe *w = elem;
	size_t esize = 1UL << qp->sq.log2;
	static const uint32_t ops[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
					12, 13, 14, 15, 16, 17, 0xff, 0x80000000 };

	if (rnd_below(2) && (r->classes & (1U << G_RAND))) {
		rnd_fill(elem, esize);
		return;
	}
	memset(elem, 0, esize);
	w->wr.wr_id = rnd();
	w->wr.opcode = rnd_below(8) ? ops[rnd_below(16)] :
		       ops[rnd_below(ARRAY_SIZE(ops))];
	w->wr.send_flags = rnd_below(3) ? IBV_SEND_SIGNALED :
			   (uint32_t)rnd();
	if (rnd_below(4) == 0)
		w->wr.send_flags |= IBV_SEND_INLINE;
	w->wr.wr.rdma.remote_addr = pick_addr(r);
	w->wr.wr.rdma.rkey = pick_key(r);
	if (w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    w->wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.wr.atomic.remote_addr = pick_addr(r);
		w->wr.wr.atomic.compare_add = rnd();
		w->wr.wr.atomic.swap = rnd();
		w->wr.wr.atomic.rkey = pick_key(r);
	}
	if (w->wr.opcode == IBV_WR_BIND_MW) {
		w->wr.wr.mw.addr = pick_addr(r);
		w->wr.wr.mw.length = pick_len();
		w->wr.wr.mw.mr_lkey = pick_key(r);
		w->wr.wr.mw.mw_rkey = pick_key(r);
		w->wr.wr.mw.rkey = pick_key(r);
		w->wr.wr.mw.access = rnd();
	}
	w->iova = rnd_below(2) ? w->wr.wr.rdma.remote_addr : pick_addr(r);
	w->state = rnd_below(4) ? 0 : (uint32_t)rnd();
	w->status = rnd_below(4) ? 0 : (uint32_t)rnd();
	w->mask = rnd_below(4) ? 0 : (uint32_t)rnd();
	w->first_psn = rnd_below(4) ? 0 : (uint32_t)rnd();
	w->ssn = rnd();
	garbage_sges(r, &w->dma, qp->max_sge);
	if (w->wr.send_flags & IBV_SEND_INLINE)
		rnd_fill(w->dma.inline_data, rnd_below(esize -
			 offsetof(struct rxe_send_wqe, dma.inline_data)));
}

static void garbage_recv(struct rig *r, struct ring *q)
{
	uint32_t n = rnd_below(4) + 1, room, i;
	size_t esize = 1UL << q->log2;

	room = (esize - offsetof(struct rxe_recv_wqe, dma.sge)) /
	       sizeof(struct rxe_sge);
	for (i = 0; i < n; i++) {
		struct rxe_recv_wqe *w = ring_elem(q, q->idx + i);

		if (rnd_below(4) == 0) {
			rnd_fill(w, esize);
			continue;
		}
		memset(w, 0, esize);
		w->wr_id = rnd();
		garbage_sges(r, &w->dma, room);
	}
	ring_publish(q, rnd_below(8) ? (q->idx + n) & q->mask :
				       (uint32_t)rnd());
}

/* A well-formed RDMA WRITE of @len bytes from @src (lkey) to @dst (rkey). */
static void write_wqe(struct uqp *qp, uint64_t id, void *src, uint32_t lkey,
		      void *dst, uint32_t rkey, uint32_t len)
{
	struct rxe_send_wqe *w = ring_elem(&qp->sq, qp->sq.idx);

	memset(w, 0, 1UL << qp->sq.log2);
	w->wr.wr_id = id;
	w->wr.opcode = IBV_WR_RDMA_WRITE;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->wr.wr.rdma.remote_addr = (uintptr_t)dst;
	w->wr.wr.rdma.rkey = rkey;
	w->iova = (uintptr_t)dst;
	w->dma.length = len;
	w->dma.resid = len;
	w->dma.num_sge = 1;
	w->dma.sge[0].addr = (uintptr_t)src;
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = lkey;
	ring_publish(&qp->sq, (qp->sq.idx + 1) & qp->sq.mask);
}

static int rig_qps(struct rig *r)
{
	return qp_create(&r->d, r->pd, &r->cq_a, NULL, IBV_QPT_RC, &r->a) ?:
	       qp_create(&r->d, r->pd, &r->cq_b, &r->srq, IBV_QPT_RC, &r->b) ?:
	       qp_connect(&r->d, &r->a, r->b.qpn) ?:
	       qp_connect(&r->d, &r->b, r->a.qpn);
}

static void rig_qps_destroy(struct rig *r)
{
	qp_destroy(&r->d, &r->a);
	qp_destroy(&r->d, &r->b);
}

/*
 * Wait until the kernel has taken every WQE up to what we published, or
 * a QP is in ERR. 0, -ETIMEDOUT after the deadline, or another -errno.
 */
static int round_settle(struct rig *r, struct uqp *qp, bool *in_err)
{
	uint64_t end = now_ns() + DEADLINE_S * 1000000000ULL;
	int st;

	*in_err = false;
	for (;;) {
		uint32_t cons = __atomic_load_n(&qp->sq.buf->consumer_index,
						__ATOMIC_ACQUIRE);

		r->cqes += cq_drain(&r->cq_a, &r->err_cqes, NULL, NULL);
		r->cqes += cq_drain(&r->cq_b, &r->err_cqes, NULL, NULL);
		if ((cons & qp->sq.mask) == qp->sq.idx)
			return 0;
		st = qp_state(&r->d, qp);
		if (st < 0)
			return st;
		if (st == IBV_QPS_ERR) {
			*in_err = true;
			return 0;
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
		usleep(200);
	}
}

/* A type 2 window, unbound: its rkey is one more key garbage may name. */
static void mw_alloc(struct rig *r)
{
	struct ib_uverbs_alloc_mw c = { .pd_handle = r->pd,
					.mw_type = IBV_MW_TYPE_2 };
	struct ib_uverbs_alloc_mw_resp resp;

	if (!uv_cmd(r->d.fd, IB_USER_VERBS_CMD_ALLOC_MW, &c, sizeof(c), NULL, 0,
		    &resp, sizeof(resp))) {
		r->mw_handle = resp.mw_handle;
		r->mw_rkey = resp.rkey;
	}
}

FIXTURE(rings) {
	struct rig r;
};

FIXTURE_SETUP(rings)
{
	struct rig *r = &self->r;
	struct canaries *c = &r->c;
	int ret = udev_open(&r->d);

	/* Named by the runner, which made it: not opening it is a failure. */
	ASSERT_TRUE(!ret || !getenv("MRC_UDEV"))
		TH_LOG("cannot open %s: %s", getenv("MRC_UDEV"), strerror(-ret));
	if (ret)
		SKIP(return, "no device %s (%s): the runner creates it",
		     getenv("MRC_UDEV") ?: "vhca0", strerror(-ret));
	ASSERT_EQ(0, pd_alloc(&r->d, &r->pd));
	ASSERT_EQ(0, cq_create(&r->d, 256, &r->cq_a));
	ASSERT_EQ(0, cq_create(&r->d, 256, &r->cq_b));
	ASSERT_EQ(0, srq_create(&r->d, r->pd, &r->srq));
	c->area = mmap(NULL, 3 * CAN_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->ro = mmap(NULL, CAN_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->plain = mmap(NULL, CAN_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c->area);
	ASSERT_NE(MAP_FAILED, c->ro);
	ASSERT_NE(MAP_FAILED, c->plain);
	fill(c->area, 3 * CAN_LEN, 1);
	fill(c->ro, CAN_LEN, 2);
	fill(c->plain, CAN_LEN, 3);
	ASSERT_EQ(0, mr_reg(&r->d, r->pd, c->area + CAN_LEN, CAN_LEN,
			    ACC_LW | ACC_RW | ACC_RR | ACC_RA | ACC_MWB,
			    &c->mr));
	ASSERT_EQ(0, mr_reg(&r->d, r->pd, c->ro, CAN_LEN, ACC_RR, &c->ro_mr));
	mw_alloc(r);
	ASSERT_EQ(0, rig_qps(r));
	r->classes = parse_classes();
}

FIXTURE_TEARDOWN(rings)
{
	/* The test destroys everything itself; a failed one leaves it to exit. */
	udev_close(&self->r.d);
}

/* One round of garbage; returns the QP whose SQ was rung. */
static struct uqp *garbage_round(struct rig *r)
{
	struct uqp *qp = rnd_below(2) ? &r->a : &r->b;
	unsigned int cl = r->classes;
	uint32_t n = rnd_below(4) + 1, i, prod;

	if (cl & ((1U << G_WQE) | (1U << G_RAND))) {
		for (i = 0; i < n; i++)
			garbage_wqe(r, qp, ring_elem(&qp->sq, qp->sq.idx + i));
		prod = (qp->sq.idx + n) & qp->sq.mask;
		if ((cl & (1U << G_PROD_BACK)) && rnd_below(10) == 0)
			prod = (qp->sq.idx - rnd_below(qp->sq.mask + 1)) &
			       qp->sq.mask;
		ring_publish(&qp->sq, prod);
	}
	if ((cl & (1U << G_PROD_WILD)) && rnd_below(20) == 0) {
		/* Past index_mask: the kernel must mask it itself. */
		prod = qp->sq.idx + (qp->sq.mask + 1) * (rnd_below(1000) + 1);
		__atomic_store_n(&qp->sq.buf->producer_index, prod,
				 __ATOMIC_RELEASE);
		qp->sq.idx = prod & qp->sq.mask;
	}
	if ((cl & (1U << G_RQ)) && rnd_below(4) == 0)
		garbage_recv(r, &r->a.rq);
	if ((cl & (1U << G_SRQ)) && rnd_below(4) == 0)
		garbage_recv(r, &r->srq.r);
	/* Our ring indices stay ours: what we published, masked. */
	r->a.rq.idx &= r->a.rq.mask;
	r->srq.r.idx &= r->srq.r.mask;
	if ((cl & (1U << G_CQ_CI)) && rnd_below(20) == 0) {
		struct ucq *cq = rnd_below(2) ? &r->cq_a : &r->cq_b;

		__atomic_store_n(&cq->r.buf->consumer_index, (uint32_t)rnd(),
				 __ATOMIC_RELEASE);
	}
	if ((cl & (1U << G_HDR)) && rnd_below(50) == 0) {
		struct rxe_queue_buf *b[] = { r->a.sq.buf, r->a.rq.buf,
					      r->b.sq.buf, r->srq.r.buf,
					      r->cq_a.r.buf, r->cq_b.r.buf };
		struct rxe_queue_buf *h = b[rnd_below(6)];

		h->log2_elem_size = rnd_below(2) ? (uint32_t)rnd() : 31;
		h->index_mask = rnd_below(2) ? (uint32_t)rnd() : ~0U;
	}
	return qp;
}

TEST_F_TIMEOUT(rings, garbage, 3600)
{
	struct rig *r = &self->r;
	struct canaries *c = &r->c;
	const char *s = getenv("MRC_UBAD_SEED");
	const char *rs = getenv("MRC_UBAD_ROUNDS");
	uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
	unsigned int rounds = rs ? atoi(rs) : 2000, i, resets = 0;
	long off;

	if (!r->d.ctx)
		SKIP(return, "no device %s", NO_DEV_NAME);
	rng_state = seed ?: 1;
	TH_LOG("seed %llu, %u rounds, classes 0x%x, SQ %u x %u B (max_sge %u)",
	       (unsigned long long)seed, rounds, r->classes, r->a.sq.mask + 1,
	       1U << r->a.sq.log2, r->a.max_sge);
	for (i = 0; i < rounds; i++) {
		struct uqp *qp = garbage_round(r);
		bool in_err;
		int ret;

		ret = doorbell(&r->d, qp);
		/* The doorbell itself may refuse (the QP in ERR, say). */
		ASSERT_TRUE(ret == 0 || ret == -EINVAL || ret == -EIO ||
			    ret == -EOPNOTSUPP)
			TH_LOG("round %u: doorbell: %d", i, ret);
		ret = round_settle(r, qp, &in_err);
		ASSERT_EQ(0, ret)
			TH_LOG("round %u (seed %llu): QP %u: SQ not consumed, not in ERR, %d s",
			       i, (unsigned long long)seed, qp->qpn, DEADLINE_S);
		if (in_err || qp_state(&r->d, &r->a) == IBV_QPS_ERR ||
		    qp_state(&r->d, &r->b) == IBV_QPS_ERR) {
			r->qp_errs++;
			/* Back to RTS, both: the pair is one connection. */
			ASSERT_EQ(0, qp_connect(&r->d, &r->a, r->b.qpn));
			ASSERT_EQ(0, qp_connect(&r->d, &r->b, r->a.qpn));
			resets++;
		}
	}
	TH_LOG("%u rounds: %u completions, %u in error, %u QP errors (pair reset %u times)",
	       rounds, r->cqes, r->err_cqes, r->qp_errs, resets);
	ASSERT_NE(0, r->err_cqes + r->qp_errs)
		TH_LOG("no garbage was refused: was any of it executed?");

	/* Everything down, then the canaries. */
	rig_qps_destroy(r);
	srq_destroy(&r->d, &r->srq);
	cq_destroy(&r->d, &r->cq_a);
	cq_destroy(&r->d, &r->cq_b);
	if (r->mw_handle)
		ASSERT_EQ(0, destroy_handle(r->d.fd, IB_USER_VERBS_CMD_DEALLOC_MW,
					    r->mw_handle));
	ASSERT_EQ(0, destroy_handle(r->d.fd, IB_USER_VERBS_CMD_DEREG_MR,
				    c->mr.handle));
	ASSERT_EQ(0, destroy_handle(r->d.fd, IB_USER_VERBS_CMD_DEREG_MR,
				    c->ro_mr.handle));
	off = changed(c->area, CAN_LEN, 1);
	ASSERT_EQ(-1, off) TH_LOG("guard below the MR changed at %ld", off);
	off = changed(c->area + 2 * CAN_LEN, CAN_LEN, 1);
	if (off >= 0)
		off += 2 * CAN_LEN;
	ASSERT_EQ(-1, off) TH_LOG("guard above the MR changed at %ld", off);
	off = changed(c->ro, CAN_LEN, 2);
	ASSERT_EQ(-1, off) TH_LOG("remote-read-only MR changed at %ld", off);
	off = changed(c->plain, CAN_LEN, 3);
	ASSERT_EQ(-1, off) TH_LOG("unregistered buffer changed at %ld", off);

	/* A fresh pair: a correct RDMA WRITE through the rings. */
	{
		uint8_t *src = c->plain, *dst = c->area + CAN_LEN;
		struct umr ms, md;
		uint64_t end, wr_id = 0;
		uint32_t status = ~0U;
		unsigned int errs = 0, got = 0;

		ASSERT_EQ(0, cq_create(&r->d, 16, &r->cq_a));
		ASSERT_EQ(0, cq_create(&r->d, 16, &r->cq_b));
		ASSERT_EQ(0, srq_create(&r->d, r->pd, &r->srq));
		ASSERT_EQ(0, rig_qps(r));
		fill(src, CAN_LEN, 7);
		memset(dst, 0, CAN_LEN);
		ASSERT_EQ(0, mr_reg(&r->d, r->pd, src, CAN_LEN, ACC_LW, &ms));
		ASSERT_EQ(0, mr_reg(&r->d, r->pd, dst, CAN_LEN, ACC_LW | ACC_RW,
				    &md));
		write_wqe(&r->a, 0x5eed, src, ms.lkey, dst, md.rkey, CAN_LEN);
		ASSERT_EQ(0, doorbell(&r->d, &r->a));
		end = now_ns() + DEADLINE_S * 1000000000ULL;
		while (!got && now_ns() < end) {
			got = cq_drain(&r->cq_a, &errs, &wr_id, &status);
			if (!got)
				usleep(200);
		}
		ASSERT_EQ(1, got) TH_LOG("no completion of the RDMA WRITE in %d s",
					 DEADLINE_S);
		ASSERT_EQ(0, status) TH_LOG("RDMA WRITE completed with status %u",
					    status);
		ASSERT_EQ(0x5eed, wr_id);
		off = changed(dst, CAN_LEN, 7);
		ASSERT_EQ(-1, off) TH_LOG("written data differs at %ld", off);
		rig_qps_destroy(r);
		ASSERT_EQ(0, destroy_handle(r->d.fd, IB_USER_VERBS_CMD_DEREG_MR,
					    ms.handle));
		ASSERT_EQ(0, destroy_handle(r->d.fd, IB_USER_VERBS_CMD_DEREG_MR,
					    md.handle));
		srq_destroy(&r->d, &r->srq);
		cq_destroy(&r->d, &r->cq_a);
		cq_destroy(&r->d, &r->cq_b);
		ASSERT_EQ(0, destroy_handle(r->d.fd, IB_USER_VERBS_CMD_DEALLOC_PD,
					    r->pd));
	}
}

/* --- path: an RC responder takes only its connected peer's messages --- */

#define PATH_LEN	64

/*
 * Two RC QPs (libibverbs verbs) of one device whose two IPv4 addresses
 * give its port two RoCE v2 GIDs (uverbs_bad.sh adds the second). A
 * message is accepted only from the source GID and to the destination
 * GID the responder's path names, as a packet's addresses are checked
 * (rxe's check_addr()): the QP number alone would let a QP of that
 * number on another port into the connection.
 */
FIXTURE(path) {
	struct udev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid[2];
	int gid_index[2];
	bool ready;	/* set up: 6.1's harness runs a body after a SKIP */
};

FIXTURE_SETUP(path)
{
	int ret = udev_open(&self->d);

	ASSERT_TRUE(!ret || !getenv("MRC_UDEV"))
		TH_LOG("cannot open %s: %s", getenv("MRC_UDEV"), strerror(-ret));
	if (ret)
		SKIP(return, "no device %s (%s): the runner creates it",
		     getenv("MRC_UDEV") ?: "vhca0", strerror(-ret));
	ret = uu_roce_gids(self->d.ctx, self->gid, self->gid_index, 2);
	ASSERT_LE(0, ret) TH_LOG("ibv_query_gid_table: %s", strerror(-ret));
	if (ret < 2)
		SKIP(return, "fewer than two IPv4 GIDs on port 1: the runner adds an address");
	self->pd = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->d.ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, 2 * PAGE, ACC_LW);
	ASSERT_NE(NULL, self->mr);
	self->ready = true;
}

FIXTURE_TEARDOWN(path)
{
	if (self->mr)
		ibv_dereg_mr(self->mr);
	if (self->cq)
		ibv_destroy_cq(self->cq);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	udev_close(&self->d);
}

/*
 * QP a sends from GID a_src to QP b at GID a_dst; b's path sends from
 * b_src to a at b_dst (indices into the fixture's two GIDs). A SEND
 * from a into b's receive: the status of a's completion, b's receive
 * buffer checked to hold the message exactly when it succeeded. (struct
 * _test_data_path is what FIXTURE_DATA(path) names, spelled out so
 * checkpatch reads it as a type.)
 */
static void path_send(struct __test_metadata *_metadata,
		      struct _test_data_path *self, int a_src, int a_dst,
		      int b_src, int b_dst, enum ibv_wc_status want)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge src = {
		.addr = (uintptr_t)self->buf, .length = PATH_LEN,
		.lkey = self->mr->lkey,
	};
	struct ibv_sge dst = {
		.addr = (uintptr_t)self->buf + PAGE, .length = PATH_LEN,
		.lkey = self->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &src, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &dst, .num_sge = 1 },
		*rbad;
	uint64_t end = now_ns() + DEADLINE_S * 1000000000ULL;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;
	bool sent = false, got = false;
	int n;

	fill(self->buf, PATH_LEN, 7);
	memset(self->buf + PAGE, 0, PATH_LEN);
	a = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, a);
	b = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, uu_qp_to_rts(b, ACC_LW, a->qp_num, self->gid_index[b_src],
				  &self->gid[b_dst]));
	ASSERT_EQ(0, uu_qp_to_rts(a, ACC_LW, b->qp_num, self->gid_index[a_src],
				  &self->gid[a_dst]));
	ASSERT_EQ(0, ibv_post_recv(b, &rwr, &rbad));
	ASSERT_EQ(0, ibv_post_send(a, &wr, &bad));
	/* a's completion, and b's receive when it is to come. */
	while ((!sent || (want == IBV_WC_SUCCESS && !got)) && now_ns() < end) {
		n = ibv_poll_cq(self->cq, 1, &wc);
		ASSERT_LE(0, n);
		if (!n) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id == 1) {
			EXPECT_EQ(want, wc.status)
				TH_LOG("SEND: %s", ibv_wc_status_str(wc.status));
			sent = true;
		} else if (wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS) {
			got = true;
		}
	}
	ASSERT_TRUE(sent) TH_LOG("no completion of the SEND in %d s", DEADLINE_S);
	EXPECT_EQ(want == IBV_WC_SUCCESS, got);
	EXPECT_EQ(want == IBV_WC_SUCCESS, !memcmp(self->buf, self->buf + PAGE, PATH_LEN));
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	/* b's flushed receive, if any, goes with the CQ's next user. */
	while (ibv_poll_cq(self->cq, 1, &wc) > 0)
		;
}

/* The control: the paths name each other, across the two GIDs. */
TEST_F_TIMEOUT(path, peers_across_gids, 120)
{
	if (self->ready)
		path_send(_metadata, self, 1, 0, 0, 1, IBV_WC_SUCCESS);
}

/* b's path names another source than a's: a's messages are lost. */
TEST_F_TIMEOUT(path, other_source_gid, 120)
{
	if (self->ready)
		path_send(_metadata, self, 0, 0, 0, 1, IBV_WC_RETRY_EXC_ERR);
}

/* a sends to b's port at a GID b does not send from: lost. */
TEST_F_TIMEOUT(path, other_destination_gid, 120)
{
	if (self->ready)
		path_send(_metadata, self, 0, 0, 1, 0, IBV_WC_RETRY_EXC_ERR);
}

TEST_HARNESS_MAIN
