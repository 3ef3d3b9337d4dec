// SPDX-License-Identifier: GPL-2.0
/*
 * librdmacm's endpoint calls (rdma_verbs.h) over one device: user_cm.sh
 * runs this in the host root's chroot (user_lib.sh), over vhca0 and then
 * over rxe0, with Debian's librdmacm and librxe unchanged.
 *
 * Each case connects a server and a client endpoint of this one process
 * on the device's IPv4 address: rdma_getaddrinfo() and rdma_create_ep()
 * for both, rdma_listen() and rdma_get_request() and rdma_accept() on the
 * server, rdma_connect() on the client in a second thread (in librdmacm's
 * synchronous mode both rdma_connect() and rdma_accept() wait for the
 * connection). Both endpoints are in librdmacm's default PD of the
 * device. Then every transfer call of rdma_verbs.h moves a pattern whose
 * bytes are checked where they must land and where they must not (the
 * rest of each buffer keeps its old bytes), and completions are taken
 * with rdma_get_send_comp() and rdma_get_recv_comp().
 *
 * Refusals: an RDMA READ or WRITE through a key whose MR lacks the remote
 * right the operation needs (rdma_reg_msgs() gives local write only,
 * rdma_reg_read() adds remote read, rdma_reg_write() remote write), or
 * through the key of an MR rdma_dereg_mr() has freed, completes with
 * IBV_WC_REM_ACCESS_ERR at the requester (IBTA 9.7.5.2.4 / o9-31: an
 * invalid R_Key or access right is a remote access error NAK), and the
 * target bytes stay as they were.
 *
 * Out of order, what the seed forbids or orders: an MR deregistered
 * before its endpoint, a post with no QP, a send before the connection,
 * a second SRQ on an id; and the SRQ's own end (rdma_destroy_srq) and its
 * XRC kind, which librxe does not have. Where the seed allows more than
 * one outcome, the one seen is logged and must be one of them.
 *
 * Facts that may differ between devices without either being wrong are
 * logged as "observed: NAME=VALUE" lines: user_cm.sh compares them across
 * vhca0 and rxe0 and prints any difference.
 *
 * Environment: MRC_UDEV (device, default vhca0), MRC_UADDR (its IPv4
 * address, required), MRC_UPORT (the RDMA CM port, default 20886).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "user_util.h"

#define PAGE		4096UL
#define BUF_LEN		(16 * PAGE)
#define T_S		120	/* per test: TCG, a debug kernel */
#define UD_GRH		40	/* the GRH ahead of every UD receive */
#define UD_LEN		512	/* fits the 1024-byte path MTU */
#define INLINE_LEN	64
#define DEADLINE_MS	30000	/* for a completion polled for */

enum cm_mode {
	CM_RC,		/* QPs made by rdma_create_ep() / rdma_get_request() */
	CM_RC_SRQ,	/* the client's QP receives through its SRQ */
	CM_UD,		/* RDMA_PS_UDP: SIDR, then UD sends */
};

struct rig {
	const char *dev;
	const char *addr;
	const char *port;
	struct rdma_addrinfo *lres, *cres;
	struct rdma_cm_id *listen, *srv, *cli;
	__u8 *sbuf, *cbuf;	/* the server's and the client's, BUF_LEN */
	struct ibv_ah *ah;	/* CM_UD: the client's to the server */
	__u32 remote_qpn;	/* CM_UD: the server's QP */
};

FIXTURE(cm) {
	struct rig r;
};

FIXTURE_SETUP(cm)
{
	struct rig *r = &self->r;

	r->dev = getenv("MRC_UDEV") ?: "vhca0";
	r->addr = getenv("MRC_UADDR");
	r->port = getenv("MRC_UPORT") ?: "20886";
	/* The runner gives the address: without it nothing can be tested. */
	ASSERT_NE(NULL, r->addr) TH_LOG("MRC_UADDR is not set");
}

/* Best effort: a failed test leaves the rest to its process's exit. */
FIXTURE_TEARDOWN(cm)
{
	struct rig *r = &self->r;

	if (r->ah)
		ibv_destroy_ah(r->ah);
	if (r->cli)
		rdma_destroy_ep(r->cli);
	if (r->srv)
		rdma_destroy_ep(r->srv);
	if (r->listen)
		rdma_destroy_ep(r->listen);
	if (r->lres)
		rdma_freeaddrinfo(r->lres);
	if (r->cres)
		rdma_freeaddrinfo(r->cres);
	if (r->sbuf)
		munmap(r->sbuf, BUF_LEN);
	if (r->cbuf)
		munmap(r->cbuf, BUF_LEN);
}

/* ---------------------------------------------------------------- */
/* Connection                                                       */

struct connector {
	struct rdma_cm_id *cli;
	int err;		/* rdma_connect()'s errno, or 0 */
};

static void *connect_thread(void *arg)
{
	struct connector *c = arg;

	c->err = rdma_connect(c->cli, NULL) ? errno : 0;
	return NULL;
}

static struct rdma_addrinfo *cm_addrinfo(struct __test_metadata *_metadata,
					 struct rig *r, bool passive,
					 enum cm_mode mode)
{
	struct rdma_addrinfo hints = {
		.ai_flags = passive ? RAI_PASSIVE : 0,
		.ai_port_space = mode == CM_UD ? RDMA_PS_UDP : RDMA_PS_TCP,
		.ai_qp_type = mode == CM_UD ? IBV_QPT_UD : IBV_QPT_RC,
	}, *res = NULL;
	int ret;

	ret = rdma_getaddrinfo(r->addr, r->port, &hints, &res);
	ASSERT_EQ(0, ret) TH_LOG("rdma_getaddrinfo(%s, %s%s): %s", r->addr,
				 r->port, passive ? ", passive" : "",
				 strerror(errno));
	ASSERT_NE(NULL, res);
	/* What the hints asked for, and an IPv4 address on the right side. */
	ASSERT_EQ(AF_INET, res->ai_family);
	ASSERT_EQ(hints.ai_port_space, res->ai_port_space);
	ASSERT_EQ(hints.ai_qp_type, res->ai_qp_type);
	ASSERT_NE(NULL, passive ? res->ai_src_addr : res->ai_dst_addr);
	return res;
}

/* The QP attributes of every endpoint of @mode (its address info gives the type). */
static struct ibv_qp_init_attr cm_qp_attr(enum cm_mode mode)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = mode == CM_UD ? 0 : INLINE_LEN },
		.sq_sig_all = 0,
	};

	return qa;
}

/*
 * The client's endpoint of @mode, bound to the device and resolved to the
 * server's address (no listener needed for that), with a QP of @qa or,
 * for NULL, none.
 */
static void cm_client(struct __test_metadata *_metadata, struct rig *r,
		      enum cm_mode mode, struct ibv_qp_init_attr *qa)
{
	int ret;

	r->cres = cm_addrinfo(_metadata, r, false, mode);
	ret = rdma_create_ep(&r->cli, r->cres, NULL, qa);
	ASSERT_EQ(0, ret) TH_LOG("rdma_create_ep (active): %s", strerror(errno));
	ASSERT_STREQ(r->dev, ibv_get_device_name(r->cli->verbs->device));
	ASSERT_EQ(!!qa, !!r->cli->qp);
}

/*
 * A server and a client endpoint of @mode, connected; the buffers mapped
 * (server 0xa5, client 0x5a). In CM_RC_SRQ the client's endpoint is made
 * without a QP; rdma_create_srq() gives it an SRQ and rdma_create_qp() a
 * QP that receives through it.
 */
static void cm_up(struct __test_metadata *_metadata, struct rig *r,
		  enum cm_mode mode)
{
	struct ibv_qp_init_attr qa = cm_qp_attr(mode);
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 16, .max_sge = 4 },
	};
	struct ibv_qp_init_attr lqa = qa;
	struct connector c = { 0 };
	pthread_t thr;
	int ret;

	r->sbuf = uu_map_buf(_metadata, BUF_LEN, 0xa5);
	r->cbuf = uu_map_buf(_metadata, BUF_LEN, 0x5a);

	r->lres = cm_addrinfo(_metadata, r, true, mode);
	ret = rdma_create_ep(&r->listen, r->lres, NULL, &lqa);
	ASSERT_EQ(0, ret) TH_LOG("rdma_create_ep (passive): %s", strerror(errno));
	/* Bound to the address: the listener is on the device under test. */
	ASSERT_NE(NULL, r->listen->verbs)
		TH_LOG("the listener bound to %s has no device", r->addr);
	ASSERT_STREQ(r->dev, ibv_get_device_name(r->listen->verbs->device));
	ret = rdma_listen(r->listen, 4);
	ASSERT_EQ(0, ret) TH_LOG("rdma_listen: %s", strerror(errno));

	cm_client(_metadata, r, mode, mode == CM_RC_SRQ ? NULL : &qa);
	if (mode == CM_RC_SRQ) {
		ret = rdma_create_srq(r->cli, NULL, &sa);
		ASSERT_EQ(0, ret) TH_LOG("rdma_create_srq: %s", strerror(errno));
		ASSERT_NE(NULL, r->cli->srq);
		ASSERT_EQ(r->cli->pd, r->cli->srq->pd);
		qa.qp_type = IBV_QPT_RC;
		ret = rdma_create_qp(r->cli, NULL, &qa);
		ASSERT_EQ(0, ret) TH_LOG("rdma_create_qp with the SRQ: %s",
					 strerror(errno));
		ASSERT_EQ(r->cli->srq, r->cli->qp->srq);
	}
	ASSERT_NE(NULL, r->cli->qp);
	ASSERT_NE(NULL, r->cli->send_cq);
	ASSERT_NE(NULL, r->cli->recv_cq);

	c.cli = r->cli;
	ret = pthread_create(&thr, NULL, connect_thread, &c);
	ASSERT_EQ(0, ret) TH_LOG("pthread_create: %s", strerror(ret));
	ret = rdma_get_request(r->listen, &r->srv);
	if (ret) {
		/* The connector may wait forever: the test's timeout ends it. */
		ASSERT_EQ(0, ret) TH_LOG("rdma_get_request: %s", strerror(errno));
	}
	/*
	 * rdma_get_request() made the QP from the listener's attributes, its
	 * type the address info's (rdma_create_ep() keeps its own copy of
	 * them and fills the type there, not in lqa).
	 */
	ASSERT_NE(NULL, r->srv->qp);
	ASSERT_EQ(r->lres->ai_qp_type, r->srv->qp->qp_type);
	ret = rdma_accept(r->srv, NULL);
	ASSERT_EQ(0, ret) TH_LOG("rdma_accept: %s", strerror(errno));
	pthread_join(thr, NULL);
	ASSERT_EQ(0, c.err) TH_LOG("rdma_connect: %s", strerror(c.err));
	/* Both endpoints are in librdmacm's one PD of the device. */
	ASSERT_EQ(r->cli->pd, r->srv->pd);

	if (mode == CM_UD) {
		struct rdma_ud_param *ud;

		/* The SIDR reply, kept in the id by synchronous mode. */
		ASSERT_NE(NULL, r->cli->event);
		ASSERT_EQ(RDMA_CM_EVENT_ESTABLISHED, r->cli->event->event);
		ud = &r->cli->event->param.ud;
		ASSERT_EQ(r->srv->qp->qp_num, ud->qp_num);
		ASSERT_EQ(RDMA_UDP_QKEY, ud->qkey);
		r->ah = ibv_create_ah(r->cli->pd, &ud->ah_attr);
		ASSERT_NE(NULL, r->ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
		r->remote_qpn = ud->qp_num;
	} else {
		struct ibv_qp_init_attr ia;
		struct ibv_qp_attr a;

		ret = ibv_query_qp(r->cli->qp, &a, IBV_QP_STATE, &ia);
		ASSERT_EQ(0, ret);
		ASSERT_EQ(IBV_QPS_RTS, a.qp_state);
		ret = ibv_query_qp(r->srv->qp, &a, IBV_QP_STATE, &ia);
		ASSERT_EQ(0, ret);
		ASSERT_EQ(IBV_QPS_RTS, a.qp_state);
	}
}

/* ---------------------------------------------------------------- */
/* Completions                                                      */

/* One send-queue completion of @id: @ctx, @status, @opcode on success. */
static void send_comp(struct __test_metadata *_metadata, struct rdma_cm_id *id,
		      void *ctx, enum ibv_wc_status status,
		      enum ibv_wc_opcode opcode, const char *what)
{
	struct ibv_wc wc;
	int n;

	n = rdma_get_send_comp(id, &wc);
	ASSERT_EQ(1, n) TH_LOG("%s: rdma_get_send_comp: %d (%s)", what, n,
			       strerror(errno));
	ASSERT_EQ(status, wc.status) TH_LOG("%s: %s, want %s", what,
					    ibv_wc_status_str(wc.status),
					    ibv_wc_status_str(status));
	ASSERT_EQ((uintptr_t)ctx, wc.wr_id);
	if (status == IBV_WC_SUCCESS)
		ASSERT_EQ(opcode, wc.opcode);
}

/* One receive completion of @id: @ctx, success, @len bytes. */
static void recv_comp(struct __test_metadata *_metadata, struct rdma_cm_id *id,
		      void *ctx, __u32 len, const char *what)
{
	struct ibv_wc wc;
	int n;

	n = rdma_get_recv_comp(id, &wc);
	ASSERT_EQ(1, n) TH_LOG("%s: rdma_get_recv_comp: %d (%s)", what, n,
			       strerror(errno));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s: %s", what,
						    ibv_wc_status_str(wc.status));
	ASSERT_EQ((uintptr_t)ctx, wc.wr_id);
	ASSERT_EQ(IBV_WC_RECV, wc.opcode);
	ASSERT_EQ(len, wc.byte_len);
}

/*
 * The next completion of @cq into @wc, polled for up to DEADLINE_MS: 1,
 * or 0 when none came (rdma_get_send_comp would wait for ever).
 */
static int comp_within(struct __test_metadata *_metadata, struct ibv_cq *cq,
		       struct ibv_wc *wc)
{
	int i, n = 0;

	for (i = 0; i < DEADLINE_MS && !n; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		ASSERT_LE(0, n) TH_LOG("ibv_poll_cq: %d", n);
		if (!n)
			usleep(1000);
	}
	return n;
}

/* ---------------------------------------------------------------- */
/* MRs                                                              */

/* The public fields librdmacm's registration calls must fill. */
static void mr_is(struct __test_metadata *_metadata, struct ibv_mr *mr,
		  struct rdma_cm_id *id, void *addr, size_t len,
		  const char *what)
{
	ASSERT_NE(NULL, mr) TH_LOG("%s: %s", what, strerror(errno));
	ASSERT_EQ(id->pd, mr->pd);
	ASSERT_EQ(id->verbs, mr->context);
	ASSERT_EQ(addr, mr->addr);
	ASSERT_EQ(len, mr->length);
}

/* ---------------------------------------------------------------- */
/* Endpoints                                                        */

/* rdma_create_ep() and the rest of the set-up: ids, QPs, CQs, state. */
TEST_F_TIMEOUT(cm, create_ep, T_S)
{
	struct rig *r = &self->r;

	cm_up(_metadata, r, CM_RC);
	ASSERT_EQ(RDMA_PS_TCP, r->cli->ps);
	ASSERT_EQ(IBV_QPT_RC, r->cli->qp_type);
	ASSERT_EQ(IBV_QPT_RC, r->cli->qp->qp_type);
	ASSERT_EQ(r->cli->pd, r->cli->qp->pd);
	ASSERT_NE(NULL, r->srv->send_cq);
	ASSERT_NE(NULL, r->srv->recv_cq);
	/* The listener's address is where the client went. */
	ASSERT_EQ(((struct sockaddr_in *)rdma_get_local_addr(r->listen))->sin_port,
		  ((struct sockaddr_in *)rdma_get_peer_addr(r->cli))->sin_port);
	ASSERT_EQ(((struct sockaddr_in *)rdma_get_local_addr(r->srv))->sin_addr.s_addr,
		  ((struct sockaddr_in *)rdma_get_peer_addr(r->cli))->sin_addr.s_addr);
}

/* ---------------------------------------------------------------- */
/* Registration                                                     */

/* rdma_reg_msgs/read/write and rdma_dereg_mr: fields and the kernel's list. */
TEST_F_TIMEOUT(cm, reg_dereg, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *m, *rmr, *w;
	int before, ret;

	cm_up(_metadata, r, CM_RC);
	before = uu_res_count(_metadata, r->dev, "mr");
	m = rdma_reg_msgs(r->srv, r->sbuf, PAGE);
	mr_is(_metadata, m, r->srv, r->sbuf, PAGE, "rdma_reg_msgs");
	rmr = rdma_reg_read(r->srv, r->sbuf + PAGE, 2 * PAGE);
	mr_is(_metadata, rmr, r->srv, r->sbuf + PAGE, 2 * PAGE, "rdma_reg_read");
	w = rdma_reg_write(r->srv, r->sbuf + 3 * PAGE, 3 * PAGE);
	mr_is(_metadata, w, r->srv, r->sbuf + 3 * PAGE, 3 * PAGE,
	      "rdma_reg_write");
	ASSERT_EQ(before + 3, uu_res_count(_metadata, r->dev, "mr"));
	/* Remote rights give an rkey; local write alone may give 0 or lkey. */
	ASSERT_NE(0, rmr->rkey);
	ASSERT_NE(0, w->rkey);
	TH_LOG("observed: msgs_rkey_is_lkey=%d", m->rkey == m->lkey);
	TH_LOG("observed: msgs_rkey_zero=%d", m->rkey == 0);
	ret = rdma_dereg_mr(m);
	ASSERT_EQ(0, ret) TH_LOG("rdma_dereg_mr: %s", strerror(errno));
	ret = rdma_dereg_mr(rmr);
	ASSERT_EQ(0, ret) TH_LOG("rdma_dereg_mr: %s", strerror(errno));
	ret = rdma_dereg_mr(w);
	ASSERT_EQ(0, ret) TH_LOG("rdma_dereg_mr: %s", strerror(errno));
	ASSERT_EQ(before, uu_res_count(_metadata, r->dev, "mr"));
}

/* ---------------------------------------------------------------- */
/* Sends and receives                                               */

/* rdma_post_send / rdma_post_recv: one SGE each side. */
TEST_F_TIMEOUT(cm, send_recv, T_S)
{
	struct rig *r = &self->r;
	size_t len = 3000, off = 100;
	struct ibv_mr *sm, *cm;
	int ret;

	cm_up(_metadata, r, CM_RC);
	sm = rdma_reg_msgs(r->srv, r->sbuf, BUF_LEN);
	ASSERT_NE(NULL, sm) TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_NE(NULL, cm) TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	uu_fill(r->cbuf, len, 1);
	ret = rdma_post_recv(r->srv, r->sbuf, r->sbuf + off, PAGE, sm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recv: %s", strerror(errno));
	ret = rdma_post_send(r->cli, r->cbuf, r->cbuf, len, cm,
			     IBV_SEND_SIGNALED);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_send: %s", strerror(errno));
	send_comp(_metadata, r->cli, r->cbuf, IBV_WC_SUCCESS, IBV_WC_SEND,
		  "send");
	recv_comp(_metadata, r->srv, r->sbuf, len, "receive");
	uu_is_pattern(_metadata, "received", r->sbuf + off, len, 1, 0);
	uu_is_fill(_metadata, "before the receive", r->sbuf, off, 0xa5);
	uu_is_fill(_metadata, "after the message", r->sbuf + off + len,
		   BUF_LEN - off - len, 0xa5);
	ASSERT_EQ(0, rdma_dereg_mr(sm));
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/* rdma_post_send of inline data: no MR at all on the sender. */
TEST_F_TIMEOUT(cm, send_inline, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *sm;
	int ret;

	cm_up(_metadata, r, CM_RC);
	sm = rdma_reg_msgs(r->srv, r->sbuf, BUF_LEN);
	ASSERT_NE(NULL, sm) TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	uu_fill(r->cbuf, INLINE_LEN, 2);
	ret = rdma_post_recv(r->srv, NULL, r->sbuf, PAGE, sm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recv: %s", strerror(errno));
	ret = rdma_post_send(r->cli, NULL, r->cbuf, INLINE_LEN, NULL,
			     IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_send inline: %s", strerror(errno));
	send_comp(_metadata, r->cli, NULL, IBV_WC_SUCCESS, IBV_WC_SEND,
		  "inline send");
	recv_comp(_metadata, r->srv, NULL, INLINE_LEN, "receive");
	uu_is_pattern(_metadata, "received", r->sbuf, INLINE_LEN, 2, 0);
	uu_is_fill(_metadata, "after the message", r->sbuf + INLINE_LEN,
		   BUF_LEN - INLINE_LEN, 0xa5);
	ASSERT_EQ(0, rdma_dereg_mr(sm));
}

/*
 * rdma_post_sendv / rdma_post_recvv: the message gathered from two MRs
 * and scattered into three pieces of two others, split elsewhere.
 */
TEST_F_TIMEOUT(cm, sendv_recvv, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *cm[2], *sm[2];
	struct ibv_sge ss[2], rs[3];
	size_t len = 5000;
	int ret;

	cm_up(_metadata, r, CM_RC);
	cm[0] = rdma_reg_msgs(r->cli, r->cbuf, 2 * PAGE);
	cm[1] = rdma_reg_msgs(r->cli, r->cbuf + 8 * PAGE, 2 * PAGE);
	sm[0] = rdma_reg_msgs(r->srv, r->sbuf, 4 * PAGE);
	sm[1] = rdma_reg_msgs(r->srv, r->sbuf + 8 * PAGE, 4 * PAGE);
	ASSERT_TRUE(cm[0] && cm[1] && sm[0] && sm[1])
		TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	/* The message: 1000 bytes at cbuf + 10, 4000 at cbuf + 8 pages. */
	uu_fill(r->cbuf, BUF_LEN, 3);
	ss[0] = (struct ibv_sge){ (uintptr_t)r->cbuf + 10, 1000, cm[0]->lkey };
	ss[1] = (struct ibv_sge){ (uintptr_t)r->cbuf + 8 * PAGE, 4000, cm[1]->lkey };
	/* Scattered: 300 at sbuf + 20, 2700 at sbuf + 1 page, rest at 8 pages. */
	rs[0] = (struct ibv_sge){ (uintptr_t)r->sbuf + 20, 300, sm[0]->lkey };
	rs[1] = (struct ibv_sge){ (uintptr_t)r->sbuf + PAGE, 2700, sm[0]->lkey };
	rs[2] = (struct ibv_sge){ (uintptr_t)r->sbuf + 8 * PAGE, PAGE, sm[1]->lkey };
	ret = rdma_post_recvv(r->srv, r, rs, 3);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recvv: %s", strerror(errno));
	ret = rdma_post_sendv(r->cli, r, ss, 2, IBV_SEND_SIGNALED);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_sendv: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_SUCCESS, IBV_WC_SEND, "sendv");
	recv_comp(_metadata, r->srv, r, len, "recvv");
	/* Message byte k: < 1000 from cbuf + 10 + k, else cbuf + 8p + k - 1000. */
	uu_is_pattern(_metadata, "piece 0", r->sbuf + 20, 300, 3, 10);
	uu_is_pattern(_metadata, "piece 1 (head)", r->sbuf + PAGE, 700, 3, 310);
	uu_is_pattern(_metadata, "piece 1 (tail)", r->sbuf + PAGE + 700, 2000, 3,
		      8 * PAGE);
	uu_is_pattern(_metadata, "piece 2", r->sbuf + 8 * PAGE, 2000, 3,
		      8 * PAGE + 2000);
	uu_is_fill(_metadata, "before piece 0", r->sbuf, 20, 0xa5);
	uu_is_fill(_metadata, "between pieces 0 and 1", r->sbuf + 320,
		   PAGE - 320, 0xa5);
	uu_is_fill(_metadata, "after piece 1", r->sbuf + PAGE + 2700,
		   7 * PAGE - 2700, 0xa5);
	uu_is_fill(_metadata, "after piece 2", r->sbuf + 8 * PAGE + 2000,
		   8 * PAGE - 2000, 0xa5);
	ASSERT_EQ(0, rdma_dereg_mr(cm[0]));
	ASSERT_EQ(0, rdma_dereg_mr(cm[1]));
	ASSERT_EQ(0, rdma_dereg_mr(sm[0]));
	ASSERT_EQ(0, rdma_dereg_mr(sm[1]));
}

/*
 * rdma_create_srq: the client's receives go to its SRQ (rdma_post_recv
 * and rdma_post_recvv on an id with an SRQ post there) and complete on
 * its receive CQ in order.
 */
TEST_F_TIMEOUT(cm, srq, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *sm, *cm;
	struct ibv_sge rs[2];
	int ret, i;

	cm_up(_metadata, r, CM_RC_SRQ);
	sm = rdma_reg_msgs(r->srv, r->sbuf, BUF_LEN);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(sm && cm) TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	uu_fill(r->sbuf, BUF_LEN, 4);
	ret = rdma_post_recv(r->cli, &rs[0], r->cbuf, PAGE, cm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recv to the SRQ: %s", strerror(errno));
	rs[0] = (struct ibv_sge){ (uintptr_t)r->cbuf + 4 * PAGE, 100, cm->lkey };
	rs[1] = (struct ibv_sge){ (uintptr_t)r->cbuf + 6 * PAGE, PAGE, cm->lkey };
	ret = rdma_post_recvv(r->cli, &rs[1], rs, 2);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recvv to the SRQ: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		ret = rdma_post_send(r->srv, NULL, r->sbuf + i * PAGE,
				     1000 + i, sm, IBV_SEND_SIGNALED);
		ASSERT_EQ(0, ret) TH_LOG("rdma_post_send %d: %s", i, strerror(errno));
		send_comp(_metadata, r->srv, NULL, IBV_WC_SUCCESS, IBV_WC_SEND,
			  "send");
	}
	recv_comp(_metadata, r->cli, &rs[0], 1000, "SRQ receive 0");
	recv_comp(_metadata, r->cli, &rs[1], 1001, "SRQ receive 1");
	uu_is_pattern(_metadata, "message 0", r->cbuf, 1000, 4, 0);
	uu_is_fill(_metadata, "after message 0", r->cbuf + 1000, 4 * PAGE - 1000,
		   0x5a);
	uu_is_pattern(_metadata, "message 1 (sge 0)", r->cbuf + 4 * PAGE, 100, 4,
		      PAGE);
	uu_is_fill(_metadata, "after sge 0", r->cbuf + 4 * PAGE + 100,
		   2 * PAGE - 100, 0x5a);
	uu_is_pattern(_metadata, "message 1 (sge 1)", r->cbuf + 6 * PAGE, 901, 4,
		      PAGE + 100);
	uu_is_fill(_metadata, "after message 1", r->cbuf + 6 * PAGE + 901,
		   10 * PAGE - 901, 0x5a);
	ASSERT_EQ(0, rdma_dereg_mr(sm));
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/*
 * rdma_destroy_srq, called by the test: it returns nothing and ignores
 * ibv_destroy_srq's answer (librdmacm 44), so the kernel's list is its
 * result. The client's SRQ, live (a message taken through it), is gone
 * from "rdma res show srq" and the id's srq is NULL. The QP that receives
 * through it goes first (rdma_destroy_qp: an SRQ a QP uses cannot be
 * destroyed); rdma_destroy_qp takes the id's CQs with it, and the SRQ,
 * made without an XRC CQ, takes none.
 */
TEST_F_TIMEOUT(cm, destroy_srq, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *sm, *cm;
	int cqs, srqs, ret;

	cm_up(_metadata, r, CM_RC_SRQ);
	sm = rdma_reg_msgs(r->srv, r->sbuf, BUF_LEN);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(sm && cm) TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	uu_fill(r->sbuf, PAGE, 12);
	ret = rdma_post_recv(r->cli, r, r->cbuf, PAGE, cm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recv to the SRQ: %s", strerror(errno));
	ret = rdma_post_send(r->srv, NULL, r->sbuf, 700, sm, IBV_SEND_SIGNALED);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_send: %s", strerror(errno));
	send_comp(_metadata, r->srv, NULL, IBV_WC_SUCCESS, IBV_WC_SEND, "send");
	recv_comp(_metadata, r->cli, r, 700, "SRQ receive");
	uu_is_pattern(_metadata, "received", r->cbuf, 700, 12, 0);

	srqs = uu_res_count(_metadata, r->dev, "srq");
	ASSERT_LE(1, srqs);
	rdma_destroy_qp(r->cli);
	ASSERT_EQ(NULL, r->cli->qp);
	ASSERT_NE(NULL, r->cli->srq);
	ASSERT_EQ(srqs, uu_res_count(_metadata, r->dev, "srq"));
	cqs = uu_res_count(_metadata, r->dev, "cq");
	rdma_destroy_srq(r->cli);
	ASSERT_EQ(NULL, r->cli->srq);
	ASSERT_EQ(srqs - 1, uu_res_count(_metadata, r->dev, "srq"));
	ASSERT_EQ(cqs, uu_res_count(_metadata, r->dev, "cq"));
	ASSERT_EQ(0, rdma_dereg_mr(sm));
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/*
 * "An rdma_cm_id may only be associated with a single SRQ": a second
 * rdma_create_srq on an id that has one. librdmacm 44 does not look
 * (rdma_create_srq_ex): it makes another SRQ and the id keeps the new
 * one, the first left to the caller. The answer is logged; either way the
 * id holds one SRQ: refused, errno set and the first kept; or made, the
 * id's srq the new one and the first, still in the kernel's list,
 * destroyed by the test. rdma_destroy_srq then frees the id's, and the
 * list is back where it was.
 */
TEST_F_TIMEOUT(cm, srq_second, T_S)
{
	const struct ibv_srq_init_attr a = {
		.attr = { .max_wr = 16, .max_sge = 4 },
	};
	struct rig *r = &self->r;
	struct ibv_srq_init_attr sa = a;
	struct ibv_srq *first;
	int err, ret, srqs;

	cm_client(_metadata, r, CM_RC, NULL);
	srqs = uu_res_count(_metadata, r->dev, "srq");
	ret = rdma_create_srq(r->cli, NULL, &sa);
	ASSERT_EQ(0, ret) TH_LOG("rdma_create_srq: %s", strerror(errno));
	first = r->cli->srq;
	ASSERT_NE(NULL, first);
	ASSERT_EQ(srqs + 1, uu_res_count(_metadata, r->dev, "srq"));

	sa = a;
	ret = rdma_create_srq(r->cli, NULL, &sa);
	err = ret ? errno : 0;
	TH_LOG("observed: second_srq=%s", ret ? strerror(err) : "made");
	if (ret) {
		ASSERT_EQ(-1, ret);
		ASSERT_NE(0, err);
		ASSERT_EQ(first, r->cli->srq);
		ASSERT_EQ(srqs + 1, uu_res_count(_metadata, r->dev, "srq"));
	} else {
		ASSERT_NE(NULL, r->cli->srq);
		ASSERT_NE(first, r->cli->srq);
		ASSERT_EQ(srqs + 2, uu_res_count(_metadata, r->dev, "srq"));
		ret = ibv_destroy_srq(first);
		ASSERT_EQ(0, ret) TH_LOG("ibv_destroy_srq of the first: %s",
					 strerror(ret));
		ASSERT_EQ(srqs + 1, uu_res_count(_metadata, r->dev, "srq"));
	}
	rdma_destroy_srq(r->cli);
	ASSERT_EQ(NULL, r->cli->srq);
	ASSERT_EQ(srqs, uu_res_count(_metadata, r->dev, "srq"));
}

/*
 * The CQ rdma_create_srq makes for an XRC SRQ given none: librxe has no
 * XRC (no open_xrcd), on either device, so there is no such CQ to see.
 * What librdmacm does instead: rdma_create_srq_ex of type IBV_SRQT_XRC
 * (rdma_create_srq picks XRC only for an id of IBV_QPT_XRC_RECV) opens the
 * device's XRC domain first, which fails with EOPNOTSUPP before any CQ is
 * made: the id has no SRQ and no CQ, and the kernel's lists are as they
 * were. Whether the device claims XRC is logged.
 */
TEST_F_TIMEOUT(cm, srq_xrc_refused, T_S)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_XRC,
	};
	struct rig *r = &self->r;
	struct ibv_device_attr da;
	int cqs, err, ret, srqs;

	cm_client(_metadata, r, CM_RC, NULL);
	ret = ibv_query_device(r->cli->verbs, &da);
	ASSERT_EQ(0, ret) TH_LOG("ibv_query_device: %s", strerror(ret));
	TH_LOG("observed: dev_cap_xrc=%d", !!(da.device_cap_flags & IBV_DEVICE_XRC));
	srqs = uu_res_count(_metadata, r->dev, "srq");
	cqs = uu_res_count(_metadata, r->dev, "cq");
	ret = rdma_create_srq_ex(r->cli, &sa);
	err = ret ? errno : 0;
	TH_LOG("observed: xrc_srq=%s", ret ? strerror(err) : "made");
	ASSERT_EQ(-1, ret);
	ASSERT_EQ(EOPNOTSUPP, err) TH_LOG("rdma_create_srq_ex (XRC): %s",
					  strerror(err));
	ASSERT_EQ(NULL, r->cli->srq);
	ASSERT_EQ(NULL, r->cli->recv_cq);
	ASSERT_EQ(NULL, r->cli->recv_cq_channel);
	ASSERT_EQ(srqs, uu_res_count(_metadata, r->dev, "srq"));
	ASSERT_EQ(cqs, uu_res_count(_metadata, r->dev, "cq"));
}

/*
 * rdma_post_ud_send over RDMA_PS_UDP: the address handle from the SIDR
 * reply; the receive holds the GRH's 40 bytes ahead of the message.
 */
TEST_F_TIMEOUT(cm, ud_send, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *sm, *cm;
	int ret;

	cm_up(_metadata, r, CM_UD);
	sm = rdma_reg_msgs(r->srv, r->sbuf, BUF_LEN);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(sm && cm) TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	uu_fill(r->cbuf, UD_LEN, 5);
	ret = rdma_post_recv(r->srv, NULL, r->sbuf, UD_GRH + UD_LEN + 100, sm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recv: %s", strerror(errno));
	ret = rdma_post_ud_send(r->cli, NULL, r->cbuf, UD_LEN, cm,
				IBV_SEND_SIGNALED, r->ah, r->remote_qpn);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_ud_send: %s", strerror(errno));
	send_comp(_metadata, r->cli, NULL, IBV_WC_SUCCESS, IBV_WC_SEND, "UD send");
	recv_comp(_metadata, r->srv, NULL, UD_GRH + UD_LEN, "UD receive");
	uu_is_pattern(_metadata, "UD message", r->sbuf + UD_GRH, UD_LEN, 5, 0);
	uu_is_fill(_metadata, "after the UD message", r->sbuf + UD_GRH + UD_LEN,
		   BUF_LEN - UD_GRH - UD_LEN, 0xa5);
	ASSERT_EQ(0, rdma_dereg_mr(sm));
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/* ---------------------------------------------------------------- */
/* RDMA                                                             */

/* rdma_post_write into an MR of rdma_reg_write. */
TEST_F_TIMEOUT(cm, write, T_S)
{
	struct rig *r = &self->r;
	size_t off = 3 * PAGE + 16, len = 2 * PAGE + 5;
	struct ibv_mr *w, *cm;
	int ret;

	cm_up(_metadata, r, CM_RC);
	w = rdma_reg_write(r->srv, r->sbuf, BUF_LEN);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(w && cm) TH_LOG("registration: %s", strerror(errno));
	uu_fill(r->cbuf, BUF_LEN, 6);
	ret = rdma_post_write(r->cli, r, r->cbuf + 8, len, cm,
			      IBV_SEND_SIGNALED, (uintptr_t)r->sbuf + off,
			      w->rkey);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_write: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  "write");
	uu_is_pattern(_metadata, "written", r->sbuf + off, len, 6, 8);
	uu_is_fill(_metadata, "before", r->sbuf, off, 0xa5);
	uu_is_fill(_metadata, "after", r->sbuf + off + len, BUF_LEN - off - len,
		   0xa5);
	ASSERT_EQ(0, rdma_dereg_mr(w));
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/* rdma_post_writev: two local MRs gathered into one remote range. */
TEST_F_TIMEOUT(cm, writev, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *w, *cm[2];
	struct ibv_sge sg[2];
	int ret;

	cm_up(_metadata, r, CM_RC);
	w = rdma_reg_write(r->srv, r->sbuf, BUF_LEN);
	cm[0] = rdma_reg_msgs(r->cli, r->cbuf, PAGE);
	cm[1] = rdma_reg_msgs(r->cli, r->cbuf + 4 * PAGE, 4 * PAGE);
	ASSERT_TRUE(w && cm[0] && cm[1]) TH_LOG("registration: %s", strerror(errno));
	uu_fill(r->cbuf, BUF_LEN, 7);
	sg[0] = (struct ibv_sge){ (uintptr_t)r->cbuf + 96, 1000, cm[0]->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)r->cbuf + 5 * PAGE, 3 * PAGE, cm[1]->lkey };
	ret = rdma_post_writev(r->cli, r, sg, 2, IBV_SEND_SIGNALED,
			       (uintptr_t)r->sbuf + PAGE, w->rkey);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_writev: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  "writev");
	uu_is_pattern(_metadata, "sge 0", r->sbuf + PAGE, 1000, 7, 96);
	uu_is_pattern(_metadata, "sge 1", r->sbuf + PAGE + 1000, 3 * PAGE, 7,
		      5 * PAGE);
	uu_is_fill(_metadata, "before", r->sbuf, PAGE, 0xa5);
	uu_is_fill(_metadata, "after", r->sbuf + 4 * PAGE + 1000,
		   BUF_LEN - 4 * PAGE - 1000, 0xa5);
	ASSERT_EQ(0, rdma_dereg_mr(w));
	ASSERT_EQ(0, rdma_dereg_mr(cm[0]));
	ASSERT_EQ(0, rdma_dereg_mr(cm[1]));
}

/* rdma_post_read of an MR of rdma_reg_read, into one of rdma_reg_msgs. */
TEST_F_TIMEOUT(cm, read, T_S)
{
	struct rig *r = &self->r;
	size_t off = 2 * PAGE + 40, len = 3 * PAGE + 1;
	struct ibv_mr *rmr, *cm;
	int ret;

	cm_up(_metadata, r, CM_RC);
	rmr = rdma_reg_read(r->srv, r->sbuf, BUF_LEN);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(rmr && cm) TH_LOG("registration: %s", strerror(errno));
	uu_fill(r->sbuf, BUF_LEN, 8);
	ret = rdma_post_read(r->cli, r, r->cbuf + PAGE, len, cm,
			     IBV_SEND_SIGNALED, (uintptr_t)r->sbuf + off,
			     rmr->rkey);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_read: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  "read");
	uu_is_pattern(_metadata, "read", r->cbuf + PAGE, len, 8, off);
	uu_is_fill(_metadata, "before", r->cbuf, PAGE, 0x5a);
	uu_is_fill(_metadata, "after", r->cbuf + PAGE + len,
		   BUF_LEN - PAGE - len, 0x5a);
	ASSERT_EQ(0, rdma_dereg_mr(rmr));
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/* rdma_post_readv: one remote range scattered into two local MRs. */
TEST_F_TIMEOUT(cm, readv, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *rmr, *cm[2];
	struct ibv_sge sg[2];
	int ret;

	cm_up(_metadata, r, CM_RC);
	rmr = rdma_reg_read(r->srv, r->sbuf, BUF_LEN);
	cm[0] = rdma_reg_msgs(r->cli, r->cbuf + 2 * PAGE, PAGE);
	cm[1] = rdma_reg_read(r->cli, r->cbuf + 8 * PAGE, 4 * PAGE);
	ASSERT_TRUE(rmr && cm[0] && cm[1]) TH_LOG("registration: %s", strerror(errno));
	uu_fill(r->sbuf, BUF_LEN, 9);
	sg[0] = (struct ibv_sge){ (uintptr_t)r->cbuf + 2 * PAGE + 50, 2000,
				  cm[0]->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)r->cbuf + 9 * PAGE, 2 * PAGE,
				  cm[1]->lkey };
	ret = rdma_post_readv(r->cli, r, sg, 2, IBV_SEND_SIGNALED,
			      (uintptr_t)r->sbuf + 5 * PAGE, rmr->rkey);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_readv: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  "readv");
	uu_is_pattern(_metadata, "sge 0", r->cbuf + 2 * PAGE + 50, 2000, 9,
		      5 * PAGE);
	uu_is_pattern(_metadata, "sge 1", r->cbuf + 9 * PAGE, 2 * PAGE, 9,
		      5 * PAGE + 2000);
	uu_is_fill(_metadata, "before sge 0", r->cbuf, 2 * PAGE + 50, 0x5a);
	uu_is_fill(_metadata, "between", r->cbuf + 2 * PAGE + 2050,
		   7 * PAGE - 2050, 0x5a);
	uu_is_fill(_metadata, "after sge 1", r->cbuf + 11 * PAGE, 5 * PAGE, 0x5a);
	ASSERT_EQ(0, rdma_dereg_mr(rmr));
	ASSERT_EQ(0, rdma_dereg_mr(cm[0]));
	ASSERT_EQ(0, rdma_dereg_mr(cm[1]));
}

/* ---------------------------------------------------------------- */
/* Out of order                                                     */

/*
 * rdma_dereg_mr before rdma_destroy_ep, the order the seed asks for. The
 * client's MR carries a message, then rdma_dereg_mr takes it out of the
 * kernel's list, and a send through its lkey (kept from before: the
 * ibv_mr is freed) fails: refused at the post or completed in error, and
 * nothing reaches the server's posted receive. Then rdma_destroy_ep of the
 * client takes its QP; the server's MR is still there.
 */
TEST_F_TIMEOUT(cm, dereg_before_destroy, T_S)
{
	struct rig *r = &self->r;
	const size_t len = 3000;
	struct ibv_mr *sm, *cm;
	struct ibv_sge sge;
	int err, mrs, qps, ret;
	struct ibv_wc wc;

	cm_up(_metadata, r, CM_RC);
	sm = rdma_reg_msgs(r->srv, r->sbuf, BUF_LEN);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(sm && cm) TH_LOG("rdma_reg_msgs: %s", strerror(errno));
	mrs = uu_res_count(_metadata, r->dev, "mr");
	uu_fill(r->cbuf, len, 14);
	ret = rdma_post_recv(r->srv, r->sbuf, r->sbuf, PAGE, sm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recv: %s", strerror(errno));
	ret = rdma_post_send(r->cli, r->cbuf, r->cbuf, len, cm, IBV_SEND_SIGNALED);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_send: %s", strerror(errno));
	send_comp(_metadata, r->cli, r->cbuf, IBV_WC_SUCCESS, IBV_WC_SEND,
		  "send while registered");
	recv_comp(_metadata, r->srv, r->sbuf, len, "receive");
	uu_is_pattern(_metadata, "received", r->sbuf, len, 14, 0);

	sge = (struct ibv_sge){ (uintptr_t)r->cbuf, len, cm->lkey };
	ret = rdma_dereg_mr(cm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_dereg_mr: %s", strerror(errno));
	ASSERT_EQ(mrs - 1, uu_res_count(_metadata, r->dev, "mr"));
	memset(r->sbuf, 0xa5, BUF_LEN);
	ret = rdma_post_recv(r->srv, r->sbuf, r->sbuf, PAGE, sm);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_recv: %s", strerror(errno));
	ret = rdma_post_sendv(r->cli, r, &sge, 1, IBV_SEND_SIGNALED);
	err = ret ? errno : 0;
	if (ret) {
		TH_LOG("observed: dereg_lkey_send=%s", strerror(err));
		ASSERT_EQ(-1, ret);
		ASSERT_NE(0, err);
	} else {
		ASSERT_EQ(1, comp_within(_metadata, r->cli->send_cq, &wc))
			TH_LOG("no completion of the send through the freed lkey");
		TH_LOG("observed: dereg_lkey_send=%s", ibv_wc_status_str(wc.status));
		ASSERT_EQ((uintptr_t)r, wc.wr_id);
		ASSERT_NE(IBV_WC_SUCCESS, wc.status);
	}
	uu_is_fill(_metadata, "the server's buffer", r->sbuf, BUF_LEN, 0xa5);

	qps = uu_res_count(_metadata, r->dev, "qp");
	rdma_destroy_ep(r->cli);
	r->cli = NULL;
	ASSERT_EQ(qps - 1, uu_res_count(_metadata, r->dev, "qp"));
	ASSERT_EQ(mrs - 1, uu_res_count(_metadata, r->dev, "mr"));
	ASSERT_EQ(0, rdma_dereg_mr(sm));
}

#define CHILD_POSTED	100	/* the post returned 0 */
#define CHILD_FAULTED	101	/* it faulted (SIGSEGV) */
#define CHILD_ERRNO	102	/* refused, errno 0 or above 99 */

static void child_fault(int sig)
{
	_exit(CHILD_FAULTED);
}

/*
 * rdma_post_send (@recv: rdma_post_recv) of a page of @mr on @id in a
 * child process, where the call may fault: CHILD_POSTED, CHILD_FAULTED
 * (the signal caught, so that the kernel logs no fault), CHILD_ERRNO, or
 * the errno of a refusal.
 */
static int post_in_child(struct __test_metadata *_metadata,
			 struct rdma_cm_id *id, struct ibv_mr *mr, bool recv)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
	if (!pid) {
		struct sigaction sa = { .sa_handler = child_fault };
		int ret;

		sigaction(SIGSEGV, &sa, NULL);
		ret = recv ? rdma_post_recv(id, NULL, mr->addr, PAGE, mr) :
			     rdma_post_send(id, NULL, mr->addr, PAGE, mr,
					    IBV_SEND_SIGNALED);
		if (!ret)
			_exit(CHILD_POSTED);
		_exit(errno > 0 && errno < CHILD_POSTED ? errno : CHILD_ERRNO);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("the child's status 0x%x", st);
	return WEXITSTATUS(st);
}

static const char *child_said(int st)
{
	switch (st) {
	case CHILD_POSTED:
		return "posted";
	case CHILD_FAULTED:
		return "SIGSEGV";
	case CHILD_ERRNO:
		return "refused_odd_errno";
	default:
		return strerror(st);
	}
}

/*
 * Posting before a QP exists: "Messages may be posted to an rdma_cm_id
 * only after a queue pair has been associated with it." The client's
 * endpoint without a QP (or SRQ) but with an MR in the id's PD:
 * rdma_post_send and rdma_post_recv must not post. librdmacm 44's
 * rdma_verbs.h passes the id's NULL qp to ibv_post_send/ibv_post_recv
 * unchecked, which fault rather than refuse, so each call runs in a child
 * process; its answer is logged.
 */
TEST_F_TIMEOUT(cm, post_without_qp, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *cm;
	int st;

	r->cbuf = uu_map_buf(_metadata, BUF_LEN, 0x5a);
	cm_client(_metadata, r, CM_RC, NULL);
	ASSERT_EQ(NULL, r->cli->srq);
	cm = rdma_reg_msgs(r->cli, r->cbuf, PAGE);
	mr_is(_metadata, cm, r->cli, r->cbuf, PAGE, "rdma_reg_msgs");
	st = post_in_child(_metadata, r->cli, cm, false);
	TH_LOG("observed: noqp_post_send=%s", child_said(st));
	ASSERT_NE(CHILD_POSTED, st) TH_LOG("rdma_post_send without a QP posted");
	st = post_in_child(_metadata, r->cli, cm, true);
	TH_LOG("observed: noqp_post_recv=%s", child_said(st));
	ASSERT_NE(CHILD_POSTED, st) TH_LOG("rdma_post_recv without a QP posted");
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/*
 * Posting before the connection is established: "Send operations may not
 * be posted to an rdma_cm_id or the corresponding queue pair until a
 * connection has been established." The client's endpoint with its QP,
 * which rdma_create_ep leaves in INIT (RTR lasts only inside
 * rdma_connect, out of the test's reach): rdma_post_send must be refused
 * (-1 and an errno) or the send flushed (completed in error), not left
 * pending or sent. Which of the two is logged.
 */
TEST_F_TIMEOUT(cm, post_before_established, T_S)
{
	struct ibv_qp_init_attr qa = cm_qp_attr(CM_RC), ia;
	struct rig *r = &self->r;
	struct ibv_qp_attr a;
	struct ibv_mr *cm;
	struct ibv_wc wc;
	int err, ret;

	r->cbuf = uu_map_buf(_metadata, BUF_LEN, 0x5a);
	cm_client(_metadata, r, CM_RC, &qa);
	ret = ibv_query_qp(r->cli->qp, &a, IBV_QP_STATE, &ia);
	ASSERT_EQ(0, ret) TH_LOG("ibv_query_qp: %s", strerror(ret));
	ASSERT_EQ(IBV_QPS_INIT, a.qp_state);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	mr_is(_metadata, cm, r->cli, r->cbuf, BUF_LEN, "rdma_reg_msgs");
	uu_fill(r->cbuf, PAGE, 15);
	ret = rdma_post_send(r->cli, r, r->cbuf, PAGE, cm, IBV_SEND_SIGNALED);
	err = ret ? errno : 0;
	TH_LOG("observed: init_post_send=%s", ret ? strerror(err) : "posted");
	if (ret) {
		ASSERT_EQ(-1, ret);
		ASSERT_NE(0, err);
	} else {
		ASSERT_EQ(1, comp_within(_metadata, r->cli->send_cq, &wc))
			TH_LOG("a send posted in INIT neither refused nor completed");
		TH_LOG("observed: init_post_send_comp=%s",
		       ibv_wc_status_str(wc.status));
		ASSERT_EQ((uintptr_t)r, wc.wr_id);
		ASSERT_NE(IBV_WC_SUCCESS, wc.status);
	}
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

/* ---------------------------------------------------------------- */
/* Refusals                                                         */

enum reg_kind { REG_MSGS, REG_READ, REG_WRITE };

static struct ibv_mr *reg_kind(struct rdma_cm_id *id, void *addr, size_t len,
			       enum reg_kind k)
{
	switch (k) {
	case REG_MSGS:
		return rdma_reg_msgs(id, addr, len);
	case REG_READ:
		return rdma_reg_read(id, addr, len);
	default:
		return rdma_reg_write(id, addr, len);
	}
}

/*
 * An RDMA @opcode (READ or WRITE) through @target's key, which lacks the
 * right: IBV_WC_REM_ACCESS_ERR at the requester, the target's bytes and
 * (for a READ) the local ones unchanged. The MR's own key is used: its
 * rkey when it has one, else its lkey (rxe gives a local-only MR rkey 0,
 * which is refused as an invalid key; the lkey is a valid key without the
 * right, the sharper case).
 */
static void refused(struct __test_metadata *_metadata, struct rig *r,
		    enum reg_kind target, bool read)
{
	struct ibv_mr *t, *cm;
	__u32 key;
	int ret;

	cm_up(_metadata, r, CM_RC);
	t = reg_kind(r->srv, r->sbuf, BUF_LEN, target);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(t && cm) TH_LOG("registration: %s", strerror(errno));
	key = t->rkey ?: t->lkey;
	if (read)
		ret = rdma_post_read(r->cli, r, r->cbuf, PAGE, cm,
				     IBV_SEND_SIGNALED, (uintptr_t)r->sbuf,
				     key);
	else
		ret = rdma_post_write(r->cli, r, r->cbuf, PAGE, cm,
				      IBV_SEND_SIGNALED, (uintptr_t)r->sbuf,
				      key);
	ASSERT_EQ(0, ret) TH_LOG("post: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_REM_ACCESS_ERR, 0,
		  read ? "read without remote read" : "write without remote write");
	uu_is_fill(_metadata, "the target", r->sbuf, BUF_LEN, 0xa5);
	uu_is_fill(_metadata, "the local buffer", r->cbuf, BUF_LEN, 0x5a);
	ASSERT_EQ(0, rdma_dereg_mr(t));
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

TEST_F_TIMEOUT(cm, refused_read_of_msgs_mr, T_S)
{
	refused(_metadata, &self->r, REG_MSGS, true);
}

TEST_F_TIMEOUT(cm, refused_write_to_msgs_mr, T_S)
{
	refused(_metadata, &self->r, REG_MSGS, false);
}

TEST_F_TIMEOUT(cm, refused_write_to_read_mr, T_S)
{
	refused(_metadata, &self->r, REG_READ, false);
}

TEST_F_TIMEOUT(cm, refused_read_of_write_mr, T_S)
{
	refused(_metadata, &self->r, REG_WRITE, true);
}

/*
 * After rdma_dereg_mr the key is gone: a WRITE that worked through it
 * before is refused, and nothing lands.
 */
TEST_F_TIMEOUT(cm, refused_after_dereg, T_S)
{
	struct rig *r = &self->r;
	struct ibv_mr *w, *cm;
	__u32 rkey;
	int ret;

	cm_up(_metadata, r, CM_RC);
	w = rdma_reg_write(r->srv, r->sbuf, BUF_LEN);
	cm = rdma_reg_msgs(r->cli, r->cbuf, BUF_LEN);
	ASSERT_TRUE(w && cm) TH_LOG("registration: %s", strerror(errno));
	uu_fill(r->cbuf, BUF_LEN, 10);
	rkey = w->rkey;
	ret = rdma_post_write(r->cli, r, r->cbuf, PAGE, cm,
			      IBV_SEND_SIGNALED, (uintptr_t)r->sbuf, rkey);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_write: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  "write while registered");
	uu_is_pattern(_metadata, "written", r->sbuf, PAGE, 10, 0);
	ASSERT_EQ(0, rdma_dereg_mr(w));
	ret = rdma_post_write(r->cli, r, r->cbuf + PAGE, PAGE, cm,
			      IBV_SEND_SIGNALED, (uintptr_t)r->sbuf + PAGE,
			      rkey);
	ASSERT_EQ(0, ret) TH_LOG("rdma_post_write: %s", strerror(errno));
	send_comp(_metadata, r->cli, r, IBV_WC_REM_ACCESS_ERR, 0,
		  "write through the freed key");
	uu_is_fill(_metadata, "after the freed key's write", r->sbuf + PAGE,
		   BUF_LEN - PAGE, 0xa5);
	ASSERT_EQ(0, rdma_dereg_mr(cm));
}

TEST_HARNESS_MAIN
