// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime of user verbs objects (issue 18, item 3), driven by
 * user_life.sh, which runs this in the host root's chroot (user_lib.sh)
 * and checks the kernel's side: the program makes the objects and
 * reports them, the script kills it, signals it or removes the device,
 * and counts what is left. libibverbs and librxe only, no raw commands.
 *
 *   user_life hold kill|exit|fatal
 *	Open the device, make a PD, one CQ, two RC QPs connected to each
 *	other (loopback over the device's own IPv4 RoCE v2 GID, RTS),
 *	three pinned MRs, an explicit and an implicit ODP MR, a type 1 MW
 *	bound with ibv_bind_mw() and a type 2 MW bound with IBV_WR_BIND_MW;
 *	RDMA WRITE through each MR and window, bytes checked; then post
 *	receives that stay outstanding and print "ready pid N ...". Then:
 *	  kill   wait for SIGKILL;
 *	  exit   wait for SIGUSR1, then exit(0) with everything still live;
 *	  fatal  block in ibv_get_async_event() until IBV_EVENT_DEVICE_FATAL
 *		 (the script removes the device), print "event
 *		 DEVICE_FATAL", destroy everything (errors allowed: the
 *		 context is disassociated), close the device and exit 0; exit 1
 *		 when no such event comes within the deadline.
 *
 *   user_life smoke
 *	Make the same objects, run the same traffic, destroy everything
 *	(every call must succeed) and print "smoke ok": a device that came
 *	back after a removal serves a new process.
 *
 *   user_life fork
 *	The parent registers a buffer holding pattern A and forks (no
 *	ibv_fork_init(): 6.1 pins with FOLL_PIN, and fork copies pinned
 *	pages for the child). The child writes pattern B into its copy;
 *	then it uses the inherited context, and what 6.1 does is asserted:
 *	a write() command on the inherited command file is refused with
 *	EACCES (ib_safe_file_access(): the child's credentials are a copy,
 *	not the opener's), while the commands libibverbs sends through
 *	ioctl() (UVERBS_METHOD_INVOKE_WRITE) have no such check: the child
 *	registers a buffer of its own. Its RDMA READ of the parent's MR
 *	fails with EACCES, as librxe rings the doorbell with a write(); the
 *	WQE stays in the shared send ring and runs at the parent's next
 *	doorbell, into the child's MR (whose pages it pinned). The child
 *	exits without destroying anything. The parent checks its own copy
 *	still holds A, RDMA READs its MR (A, the parent's pages) and RDMA
 *	WRITEs pattern C through it, seen in its own buffer. It destroys its
 *	objects; its PD is refused (EBUSY: the child's MR holds it), and
 *	closing the device frees the PD and the child's leftovers.
 *
 * Lines: "# ..." are information, "FAIL: ..." says what went wrong (exit
 * status 1). Environment: MRC_UDEV (default vhca0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "user_util.h"

#define DEADLINE_S	60
#define BUF_LEN		(64 * 1024)
#define MSG_LEN		4096
#define NRECV		8
#define CHILD_WR_ID	0x10000000000ULL	/* above any wr_id of the parent */

#define ACC_ALL		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

enum { MR_SRC, MR_DST, MR_MW, MR_ODP, MR_IODP, NR_MRS };

struct life {
	struct ibv_context *ctx;
	int gid_index;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[NR_MRS];
	struct ibv_mw *mw[2];
	uint8_t *buf[NR_MRS];	/* MR_IODP: a buffer the implicit MR covers */
	uint64_t next_wr_id;
};

static void fail(const char *what, int err)
{
	printf("FAIL: %s: %s\n", what, err ? strerror(err) : "failed");
	fflush(stdout);
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* The device named by MRC_UDEV and its IPv4-mapped RoCE v2 GID. */
static int life_open(struct life *l)
{
	const char *name = getenv("MRC_UDEV") ?: "vhca0";

	memset(l, 0, sizeof(*l));
	l->ctx = uu_open_device(name);
	if (!l->ctx) {
		printf("FAIL: cannot open %s: %s\n", name, strerror(errno));
		return -1;
	}
	l->gid_index = uu_roce_gid(l->ctx, &l->gid);
	if (l->gid_index < 0) {
		printf("FAIL: %s has no IPv4 RoCE v2 GID: %s\n", name,
		       l->gid_index == -ENOENT ? "none in its GID table" :
		       strerror(-l->gid_index));
		return -1;
	}
	return 0;
}

static int qp_to_rts(struct life *l, struct ibv_qp *qp, uint32_t dest)
{
	return uu_qp_to_rts(qp, ACC_ALL | IBV_ACCESS_REMOTE_ATOMIC, dest,
			    l->gid_index, &l->gid);
}

/* PD, CQ and the connected RC pair. */
static int life_pair(struct life *l)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	int i, ret;

	l->pd = ibv_alloc_pd(l->ctx);
	if (!l->pd) {
		fail("ibv_alloc_pd", errno);
		return -1;
	}
	l->cq = ibv_create_cq(l->ctx, 64, NULL, NULL, 0);
	if (!l->cq) {
		fail("ibv_create_cq", errno);
		return -1;
	}
	ia.send_cq = l->cq;
	ia.recv_cq = l->cq;
	for (i = 0; i < 2; i++) {
		l->qp[i] = ibv_create_qp(l->pd, &ia);
		if (!l->qp[i]) {
			fail("ibv_create_qp", errno);
			return -1;
		}
	}
	for (i = 0; i < 2; i++) {
		ret = qp_to_rts(l, l->qp[i], l->qp[!i]->qp_num);
		if (ret) {
			fail("ibv_modify_qp to RTS", ret);
			return -1;
		}
	}
	return 0;
}

/* Wait for the completion of @wr_id; 0 when it succeeded. */
static int wait_wc(struct life *l, uint64_t wr_id, const char *what)
{
	uint64_t end = now_s() + DEADLINE_S;
	struct ibv_wc wc;
	int n;

	while (now_s() < end) {
		n = ibv_poll_cq(l->cq, 1, &wc);
		if (n < 0) {
			fail("ibv_poll_cq", -n);
			return -1;
		}
		if (!n) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id == CHILD_WR_ID)
			printf("# the child's leftover WQE completed: %s\n",
			       ibv_wc_status_str(wc.status));
		if (wc.wr_id != wr_id)
			continue;
		if (wc.status == IBV_WC_SUCCESS)
			return 0;
		printf("FAIL: %s: completion status %s\n", what,
		       ibv_wc_status_str(wc.status));
		return -1;
	}
	printf("FAIL: %s: no completion in %ds\n", what, DEADLINE_S);
	return -1;
}

/*
 * One signaled RDMA WRITE or READ on @qp of @len bytes between @laddr
 * (@lkey) and @raddr (@rkey), waited for.
 */
static int rdma_op(struct life *l, struct ibv_qp *qp, enum ibv_wr_opcode op,
		   void *laddr, uint32_t lkey, void *raddr, uint32_t rkey,
		   size_t len, const char *what)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = ++l->next_wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)raddr, .rkey = rkey },
	}, *bad;
	int ret;

	ret = ibv_post_send(qp, &wr, &bad);
	if (ret) {
		fail(what, ret);
		return -1;
	}
	return wait_wc(l, wr.wr_id, what);
}

/* RDMA WRITE pattern @seed from the source MR to @dst (@rkey), checked. */
static int write_checked(struct life *l, uint8_t *dst, uint32_t rkey,
			 uint8_t seed, const char *what)
{
	uu_fill(l->buf[MR_SRC], MSG_LEN, seed);
	memset(dst, 0, MSG_LEN);
	if (rdma_op(l, l->qp[0], IBV_WR_RDMA_WRITE, l->buf[MR_SRC],
		    l->mr[MR_SRC]->lkey, dst, rkey, MSG_LEN, what))
		return -1;
	if (!uu_has_pattern(dst, MSG_LEN, seed)) {
		printf("FAIL: %s: the bytes written are not there\n", what);
		return -1;
	}
	return 0;
}

static void *map_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

/* The pinned MRs, the ODP MRs (the device must report both kinds). */
static int life_mrs(struct life *l)
{
	static const int access[NR_MRS] = {
		[MR_SRC] = IBV_ACCESS_LOCAL_WRITE,
		[MR_DST] = ACC_ALL,
		[MR_MW] = ACC_ALL | IBV_ACCESS_MW_BIND,
		[MR_ODP] = ACC_ALL | IBV_ACCESS_ON_DEMAND,
		[MR_IODP] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND,
	};
	struct ibv_device_attr_ex ex;
	uint32_t rc_need = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;
	int i, ret;

	ret = ibv_query_device_ex(l->ctx, NULL, &ex);
	if (ret) {
		fail("ibv_query_device_ex", ret);
		return -1;
	}
	if (!(ex.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
	    !(ex.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT) ||
	    (ex.odp_caps.per_transport_caps.rc_odp_caps & rc_need) != rc_need) {
		printf("FAIL: no explicit and implicit RC ODP (general 0x%llx rc 0x%x)\n",
		       (unsigned long long)ex.odp_caps.general_caps,
		       ex.odp_caps.per_transport_caps.rc_odp_caps);
		return -1;
	}
	for (i = 0; i < NR_MRS; i++) {
		l->buf[i] = map_buf(BUF_LEN);
		if (!l->buf[i]) {
			fail("mmap", errno);
			return -1;
		}
		if (i == MR_IODP)
			l->mr[i] = ibv_reg_mr(l->pd, NULL, SIZE_MAX, access[i]);
		else
			l->mr[i] = ibv_reg_mr(l->pd, l->buf[i], BUF_LEN,
					      access[i]);
		if (!l->mr[i]) {
			printf("FAIL: ibv_reg_mr #%d: %s\n", i, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Type 1 bound with ibv_bind_mw(), type 2 with IBV_WR_BIND_MW on QP 1. */
static int life_mws(struct life *l)
{
	struct ibv_mw_bind_info bi = {
		.mr = l->mr[MR_MW], .addr = (uintptr_t)l->buf[MR_MW],
		.length = BUF_LEN / 2,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_mw_bind b1 = { .wr_id = ++l->next_wr_id,
				  .send_flags = IBV_SEND_SIGNALED,
				  .bind_info = bi };
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int ret;

	l->mw[0] = ibv_alloc_mw(l->pd, IBV_MW_TYPE_1);
	l->mw[1] = ibv_alloc_mw(l->pd, IBV_MW_TYPE_2);
	if (!l->mw[0] || !l->mw[1]) {
		fail("ibv_alloc_mw", errno);
		return -1;
	}
	ret = ibv_bind_mw(l->qp[1], l->mw[0], &b1);
	if (ret) {
		fail("ibv_bind_mw (type 1)", ret);
		return -1;
	}
	if (wait_wc(l, b1.wr_id, "bind of the type 1 window"))
		return -1;

	bi.addr += BUF_LEN / 2;
	wr.wr_id = ++l->next_wr_id;
	wr.bind_mw.mw = l->mw[1];
	wr.bind_mw.rkey = ibv_inc_rkey(l->mw[1]->rkey);
	wr.bind_mw.bind_info = bi;
	ret = ibv_post_send(l->qp[1], &wr, &bad);
	if (ret) {
		fail("IBV_WR_BIND_MW (type 2)", ret);
		return -1;
	}
	if (wait_wc(l, wr.wr_id, "bind of the type 2 window"))
		return -1;
	l->mw[1]->rkey = wr.bind_mw.rkey;
	return 0;
}

/* Receives that no send will ever consume: work left outstanding. */
static int life_recvs(struct life *l)
{
	struct ibv_sge sge = { .length = MSG_LEN,
			       .lkey = l->mr[MR_DST]->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i, q, ret;

	for (q = 0; q < 2; q++) {
		for (i = 0; i < NRECV; i++) {
			sge.addr = (uintptr_t)l->buf[MR_DST] + i * MSG_LEN;
			wr.wr_id = 1000 + q * NRECV + i;
			ret = ibv_post_recv(l->qp[q], &wr, &bad);
			if (ret) {
				fail("ibv_post_recv", ret);
				return -1;
			}
		}
	}
	return 0;
}

static int life_build(struct life *l)
{
	if (life_open(l) || life_pair(l) || life_mrs(l) || life_mws(l))
		return -1;
	/* Traffic through each: the ODP MRs fault their pages in. */
	if (write_checked(l, l->buf[MR_DST], l->mr[MR_DST]->rkey, 0x11,
			  "RDMA WRITE into the pinned MR") ||
	    write_checked(l, l->buf[MR_ODP], l->mr[MR_ODP]->rkey, 0x22,
			  "RDMA WRITE into the explicit ODP MR") ||
	    write_checked(l, l->buf[MR_MW], l->mw[0]->rkey, 0x33,
			  "RDMA WRITE through the type 1 window") ||
	    write_checked(l, l->buf[MR_MW] + BUF_LEN / 2, l->mw[1]->rkey, 0x44,
			  "RDMA WRITE through the type 2 window"))
		return -1;
	uu_fill(l->buf[MR_IODP], MSG_LEN, 0x55);
	memset(l->buf[MR_DST], 0, MSG_LEN);
	if (rdma_op(l, l->qp[0], IBV_WR_RDMA_WRITE, l->buf[MR_IODP],
		    l->mr[MR_IODP]->lkey, l->buf[MR_DST], l->mr[MR_DST]->rkey,
		    MSG_LEN, "RDMA WRITE from the implicit ODP MR"))
		return -1;
	if (!uu_has_pattern(l->buf[MR_DST], MSG_LEN, 0x55)) {
		printf("FAIL: RDMA WRITE from the implicit ODP MR: bytes differ\n");
		return -1;
	}
	return life_recvs(l);
}

/* Destroy everything, newest first; errors only counted. */
static int life_destroy(struct life *l)
{
	int i, errs = 0;

	for (i = 0; i < 2; i++)
		if (l->mw[i] && ibv_dealloc_mw(l->mw[i]))
			errs++;
	for (i = 0; i < 2; i++)
		if (l->qp[i] && ibv_destroy_qp(l->qp[i]))
			errs++;
	for (i = 0; i < NR_MRS; i++)
		if (l->mr[i] && ibv_dereg_mr(l->mr[i]))
			errs++;
	if (l->cq && ibv_destroy_cq(l->cq))
		errs++;
	if (l->pd && ibv_dealloc_pd(l->pd))
		errs++;
	if (l->ctx && ibv_close_device(l->ctx))
		errs++;
	return errs;
}

/* Block in ibv_get_async_event() until DEVICE_FATAL, within a deadline. */
static int wait_fatal(struct life *l)
{
	uint64_t end = now_s() + 2 * DEADLINE_S;
	struct pollfd pfd = { .fd = l->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	enum ibv_event_type type;

	while (now_s() < end) {
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		if (ibv_get_async_event(l->ctx, &ev)) {
			fail("ibv_get_async_event", errno);
			return -1;
		}
		type = ev.event_type;
		ibv_ack_async_event(&ev);
		printf("# event %s\n", ibv_event_type_str(type));
		if (type == IBV_EVENT_DEVICE_FATAL)
			return 0;
	}
	printf("FAIL: no IBV_EVENT_DEVICE_FATAL within %ds\n", 2 * DEADLINE_S);
	return -1;
}

static int do_hold(const char *how)
{
	struct life l;
	sigset_t usr1;
	int errs, sig;

	if (strcmp(how, "kill") && strcmp(how, "exit") && strcmp(how, "fatal")) {
		printf("FAIL: hold kill|exit|fatal, not %s\n", how);
		return 2;
	}
	/* Blocked from the start, taken by sigwait(): never lost. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	if (life_build(&l))
		return 1;
	printf("ready pid %d qps 2 cqs 1 pds 1 mrs %d mws 2 recvs %d\n",
	       (int)getpid(), NR_MRS, 2 * NRECV);
	fflush(stdout);
	if (!strcmp(how, "kill")) {
		for (;;)
			pause();
	}
	if (!strcmp(how, "exit")) {
		while (sigwait(&usr1, &sig) || sig != SIGUSR1)
			;
		printf("# exit(0) with every object live\n");
		exit(0);
	}
	if (wait_fatal(&l))
		return 1;
	printf("event DEVICE_FATAL\n");
	errs = life_destroy(&l);
	printf("# destroyed after the fatal event, %d calls failed\n", errs);
	return 0;
}

/* A raw QUERY_DEVICE write() on @fd: 0 or -errno. */
static int raw_query_device(int fd)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_device cmd;
	} req = {
		.hdr = { .command = IB_USER_VERBS_CMD_QUERY_DEVICE,
			 .in_words = sizeof(req) / 4,
			 .out_words = sizeof(struct ib_uverbs_query_device_resp) / 4 },
	};
	struct ib_uverbs_query_device_resp resp;

	req.cmd.response = (uintptr_t)&resp;
	if (write(fd, &req, sizeof(req)) != sizeof(req))
		return -errno;
	return 0;
}

/* The forked child: see the top of the file. Exit status 0 or 1. */
static int fork_child(struct life *l, uint8_t *pbuf, struct ibv_mr *pmr)
{
	/* A wr_id the parent never uses: the WQE may complete in its time. */
	struct ibv_sge sge = { .length = BUF_LEN };
	struct ibv_send_wr wr = {
		.wr_id = CHILD_WR_ID, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_mr *cmr;
	uint8_t *cbuf;
	int ret;

	uu_fill(pbuf, BUF_LEN, 0xb0);
	if (!uu_has_pattern(pbuf, BUF_LEN, 0xb0)) {
		printf("FAIL: child: its copy of the buffer does not hold B\n");
		return 1;
	}
	ret = raw_query_device(l->ctx->cmd_fd);
	if (ret != -EACCES) {
		printf("FAIL: child: write() on the inherited file: %s, want EACCES\n",
		       ret ? strerror(-ret) : "succeeded");
		return 1;
	}
	printf("# child: raw write() command on the inherited file: EACCES\n");
	cbuf = map_buf(BUF_LEN);
	if (!cbuf) {
		fail("child: mmap", errno);
		return 1;
	}
	cmr = ibv_reg_mr(l->pd, cbuf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!cmr) {
		fail("child: ibv_reg_mr in the inherited context", errno);
		return 1;
	}
	printf("# child: ibv_reg_mr in the inherited context works (ioctl)\n");
	sge.addr = (uintptr_t)cbuf;
	sge.lkey = cmr->lkey;
	wr.wr.rdma.remote_addr = (uintptr_t)pbuf;
	wr.wr.rdma.rkey = pmr->rkey;
	ret = ibv_post_send(l->qp[0], &wr, &bad);
	if (ret != EACCES) {
		printf("FAIL: child: ibv_post_send on the inherited QP: %s, want EACCES\n",
		       ret ? strerror(ret) : "succeeded");
		return 1;
	}
	printf("# child: ibv_post_send on the inherited QP: EACCES (a write() doorbell)\n");
	/* Its MR is left to the context, which the parent closes. */
	return 0;
}

static int do_fork(void)
{
	struct ibv_mr *pmr, *tmr;
	struct life l;
	uint8_t *pbuf, *tbuf;
	pid_t pid;
	int st, ret;

	if (life_open(&l) || life_pair(&l))
		return 1;
	pbuf = map_buf(BUF_LEN);
	tbuf = map_buf(BUF_LEN);
	if (!pbuf || !tbuf) {
		fail("mmap", errno);
		return 1;
	}
	uu_fill(pbuf, BUF_LEN, 0xa0);
	pmr = ibv_reg_mr(l.pd, pbuf, BUF_LEN, ACC_ALL);
	tmr = ibv_reg_mr(l.pd, tbuf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!pmr || !tmr) {
		fail("ibv_reg_mr", errno);
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fail("fork", errno);
		return 1;
	}
	if (!pid) {
		st = fork_child(&l, pbuf, pmr);
		fflush(stdout);
		_exit(st);
	}
	if (waitpid(pid, &st, 0) != pid) {
		fail("waitpid", errno);
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("FAIL: the child %s %d\n",
		       WIFEXITED(st) ? "exited with" : "was killed by signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return 1;
	}
	if (!uu_has_pattern(pbuf, BUF_LEN, 0xa0)) {
		printf("FAIL: the parent's buffer changed in the child's life\n");
		return 1;
	}
	if (rdma_op(&l, l.qp[0], IBV_WR_RDMA_READ, tbuf, tmr->lkey, pbuf,
		    pmr->rkey, BUF_LEN, "parent: RDMA READ of its MR"))
		return 1;
	if (!uu_has_pattern(tbuf, BUF_LEN, 0xa0)) {
		printf("FAIL: parent: its MR does not read its own A\n");
		return 1;
	}
	uu_fill(tbuf, BUF_LEN, 0xc0);
	if (rdma_op(&l, l.qp[0], IBV_WR_RDMA_WRITE, tbuf, tmr->lkey, pbuf,
		    pmr->rkey, BUF_LEN, "parent: RDMA WRITE into its MR"))
		return 1;
	if (!uu_has_pattern(pbuf, BUF_LEN, 0xc0)) {
		printf("FAIL: parent: an RDMA WRITE into its MR did not land in its buffer\n");
		return 1;
	}
	printf("# parent: its MR still maps its own pages (READ sees A, WRITE of C lands)\n");
	/*
	 * The child's MR lives on in the shared context and holds the PD:
	 * the parent's dealloc is refused, its close frees both.
	 */
	ret = ibv_destroy_qp(l.qp[0]) ?: ibv_destroy_qp(l.qp[1]) ?:
	      ibv_dereg_mr(tmr) ?: ibv_dereg_mr(pmr) ?: ibv_destroy_cq(l.cq);
	if (ret) {
		fail("parent: destroying its QPs, MRs and CQ", ret);
		return 1;
	}
	ret = ibv_dealloc_pd(l.pd);
	if (ret != EBUSY) {
		printf("FAIL: parent: ibv_dealloc_pd: %s, want EBUSY (the child's MR)\n",
		       ret ? strerror(ret) : "succeeded");
		return 1;
	}
	printf("# parent: ibv_dealloc_pd: EBUSY, the child's MR holds the PD\n");
	ret = ibv_close_device(l.ctx);
	if (ret) {
		fail("parent: ibv_close_device", errno);
		return 1;
	}
	printf("fork ok\n");
	return 0;
}

static int do_smoke(void)
{
	struct life l;

	if (life_build(&l))
		return 1;
	if (life_destroy(&l)) {
		printf("FAIL: destroying the objects failed\n");
		return 1;
	}
	printf("smoke ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return do_fork();
	if (argc == 2 && !strcmp(argv[1], "smoke"))
		return do_smoke();
	printf("usage: %s hold kill|exit|fatal | fork | smoke\n", argv[0]);
	return 2;
}
