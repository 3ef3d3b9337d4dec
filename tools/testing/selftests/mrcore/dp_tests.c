// SPDX-License-Identifier: GPL-2.0
/*
 * The data path against memory regions: ANCHORS.md checklist items 11-16,
 * over a loopback RC pair of /dev/mrcore_test (two QPs of one PD,
 * connected to each other through the device's own RoCE v2 GID).
 *
 * Every case registers this process's memory with MRCT_REG, has QP A
 * execute one RDMA WRITE, RDMA READ, SEND or atomic against QP B, and
 * checks the exact completion status (enum ib_wc_status values), the
 * state of QP A (RTS after success, ERR after an error completion), and
 * every byte of both buffers: each MR covers the middle two pages of a
 * four-page buffer, so a stray byte anywhere, inside or outside the MR,
 * is found. An error completion moves the QP to ERR, so a case that needs
 * more work after one builds a fresh pair.
 *
 * The statuses asserted, and why:
 *  - R_Key invalid, stale, of another PD, out of the MR's range (also
 *    iova + length wrapping past 2^64), or an MR without the REMOTE_*
 *    right the operation needs: NAK Remote Access Error (IBTA 9.7.5.2.4,
 *    C9-88..C9-91), IB_WC_REM_ACCESS_ERR at the requester.
 *  - L_Key invalid or a local SGE outside its MR, or an RDMA READ or atomic
 *    result landing in an MR without LOCAL_WRITE: IB_WC_LOC_PROT_ERR.
 *  - The responder QP lacks the remote access enable (qp_access_flags) for
 *    the operation: NAK Invalid Request, IB_WC_REM_INV_REQ_ERR. This is
 *    the verbs contract (ibv_poll_cq(3): "operation is not supported by
 *    this receive queue (qp_access_flags in remote QP wasn't configured
 *    to support this operation)") and what rxe's check_op_valid() does;
 *    the MR's own rights are checked later, with the R_Key.
 *  - An atomic at an address not 8-byte aligned: NAK Invalid Request
 *    (IBTA C9-? "misaligned atomic"), IB_WC_REM_INV_REQ_ERR. A requester
 *    may refuse it at post time instead (rxe does: -EINVAL); on vhca the
 *    completion is required, elsewhere either is accepted.
 *  - A zero-length RDMA READ or WRITE: the responder checks neither R_Key
 *    nor address (IBTA C9-88 note; rxe "A zero-byte op is not required to
 *    set an addr or rkey"), so a junk rkey completes with IB_WC_SUCCESS.
 *  - Malformed WRs (too many SGEs, an opcode RC does not have, inline data
 *    beyond max_inline_data) fail ib_post_send() with -EINVAL and bad_wr
 *    pointing at the WR; nothing is queued and the QP stays in RTS.
 *  - A WR posted on a QP in ERR completes with IB_WC_WR_FLUSH_ERR.
 *
 * The device is vhca0 unless MRCT_DEVICE names another (rxe0 for the
 * comparison run). A missing device skips every case and says so; the
 * runner counts that as a failure for vhca.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"

#define PAGE		4096UL
#define BUF_SIZE	(4 * PAGE)
/* Each MR covers pages 1 and 2 of its buffer; 0 and 3 are outside it. */
#define MR_OFF		PAGE
#define MR_LEN		(2 * PAGE)
/* iovas unlike the user addresses, so VA-for-iova confusion shows. */
#define LOC_IOVA	0x3c3c00000000ULL
#define REM_IOVA	0x5a5a00000000ULL
/* Item 11: the last 1 KiB of the 64-bit address space. */
#define WRAP_ADDR	0xfffffffffffffc00ULL
#define JUNK_RKEY	0xdeadbeefU

#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define RR		MRCT_ACCESS_REMOTE_READ
#define RA		MRCT_ACCESS_REMOTE_ATOMIC
#define ALL_ACCESS	(LW | RW | RR | RA)

#define QP_SGE		4
#define QP_INLINE	64

FIXTURE(dp)
{
	int fd;			/* -1: no such device, the case is skipped */
	bool vhca;
	uint8_t *loc;		/* the local buffer, BUF_SIZE */
	uint8_t *rem;		/* the remote buffer, BUF_SIZE */
	uint8_t *loc_want;	/* what each must hold */
	uint8_t *rem_want;
	struct mrct_reg lmr;	/* LW, on loc pages 1-2, iova LOC_IOVA */
	struct mrct_reg rmr;	/* ALL_ACCESS, on rem pages 1-2, REM_IOVA */
	struct mrct_qp_create pair;	/* qp_access_flags ALL_ACCESS */
};

FIXTURE_SETUP(dp)
{
	int err;

	self->fd = mt_fixture_open(_metadata);
	if (self->fd < 0)
		return;

	self->loc = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	self->rem = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->loc);
	ASSERT_NE(MAP_FAILED, self->rem);
	self->loc_want = malloc(BUF_SIZE);
	self->rem_want = malloc(BUF_SIZE);
	ASSERT_NE(NULL, self->loc_want);
	ASSERT_NE(NULL, self->rem_want);
	mt_fill(self->loc, BUF_SIZE, 0x10c);
	mt_fill(self->rem, BUF_SIZE, 0x4e3);
	memcpy(self->loc_want, self->loc, BUF_SIZE);
	memcpy(self->rem_want, self->rem, BUF_SIZE);

	ASSERT_EQ(0, mt_reg(self->fd, self->loc + MR_OFF, MR_LEN, LOC_IOVA,
			    LW, 0, &self->lmr));
	ASSERT_EQ(0, mt_reg(self->fd, self->rem + MR_OFF, MR_LEN, REM_IOVA,
			    ALL_ACCESS, 0, &self->rmr));
	err = mt_pair(self->fd, 0, ALL_ACCESS, QP_SGE, QP_INLINE, &self->pair);
	if (err)
		TH_LOG("MRCT_QP_CREATE on %s: %s", mt_devname(),
		       strerror(-err));
	ASSERT_EQ(0, err);
	self->vhca = self->pair.flags & MRCT_QP_F_VHCA;
}

/* Closing the file destroys the pairs and deregisters the MRs. */
FIXTURE_TEARDOWN(dp)
{
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
	if (self->loc && self->loc != MAP_FAILED)
		munmap(self->loc, BUF_SIZE);
	if (self->rem && self->rem != MAP_FAILED)
		munmap(self->rem, BUF_SIZE);
	free(self->loc_want);
	free(self->rem_want);
}

/*
 * TEST_F whose body runs only when the fixture found the device: 6.1's
 * harness runs the body after a SKIP in the setup. (struct _test_data_dp
 * is what FIXTURE_DATA(dp) names, spelled out so checkpatch reads it as
 * a type.)
 */
#define DP_TEST(name)							\
	static void dpt_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_dp *self);			\
	TEST_F(dp, name)						\
	{								\
		if (self->fd >= 0)					\
			dpt_##name(_metadata, self);			\
	}								\
	static void dpt_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_dp *self)

/* One WR on QP A of @pair: opcode, remote target; no SGE yet. */
static void dp_wr(struct mrct_qp_post *p, const struct mrct_qp_create *pair,
		  uint32_t opcode, uint64_t remote_addr, uint32_t rkey)
{
	memset(p, 0, sizeof(*p));
	p->handle = pair->handle;
	p->opcode = opcode;
	p->remote_addr = remote_addr;
	p->rkey = rkey;
}

static void dp_sge(struct mrct_qp_post *p, uint64_t addr, uint32_t len,
		   uint32_t lkey)
{
	p->sge[p->num_sge].addr = addr;
	p->sge[p->num_sge].length = len;
	p->sge[p->num_sge].lkey = lkey;
	p->num_sge++;
}

/* RDMA @opcode of @len bytes: local MR at @loff, remote MR at @roff. */
static void dp_rdma(struct mrct_qp_post *p, struct _test_data_dp *self,
		    uint32_t opcode, uint64_t loff, uint64_t roff, uint32_t len)
{
	dp_wr(p, &self->pair, opcode, REM_IOVA + roff, self->rmr.info.rkey);
	dp_sge(p, LOC_IOVA + loff, len, self->lmr.info.lkey);
}

/* An atomic on the remote u64 at @roff; the original lands at @loff. */
static void dp_atomic(struct mrct_qp_post *p, struct _test_data_dp *self,
		      uint32_t opcode, uint64_t loff, uint64_t roff,
		      uint64_t compare_add, uint64_t swap)
{
	dp_wr(p, &self->pair, opcode, REM_IOVA + roff, self->rmr.info.rkey);
	dp_sge(p, LOC_IOVA + loff, 8, self->lmr.info.lkey);
	p->compare_add = compare_add;
	p->swap = swap;
}

/* The u64 at MR offset @off of a buffer (and of its wanted image). */
static uint64_t dp_get64(const uint8_t *buf, uint64_t off)
{
	uint64_t v;

	memcpy(&v, buf + MR_OFF + off, sizeof(v));
	return v;
}

static void dp_set64(uint8_t *buf, uint8_t *want, uint64_t off, uint64_t v)
{
	memcpy(buf + MR_OFF + off, &v, sizeof(v));
	memcpy(want + MR_OFF + off, &v, sizeof(v));
}

static void dp_check_buf(struct __test_metadata *_metadata, const char *what,
			 const uint8_t *got, const uint8_t *want)
{
	size_t i;

	for (i = 0; i < BUF_SIZE; i++)
		if (got[i] != want[i])
			break;
	if (i < BUF_SIZE)
		TH_LOG("%s buffer: byte 0x%zx (page %zu, MR offset %lld) is 0x%02x, want 0x%02x",
		       what, i, i / PAGE, (long long)i - (long long)MR_OFF,
		       got[i], want[i]);
	EXPECT_EQ(BUF_SIZE, i);
}

/* Every byte of both buffers, guards included, is what the case wants. */
static void dp_check_bufs(struct __test_metadata *_metadata,
			  struct _test_data_dp *self)
{
	dp_check_buf(_metadata, "local", self->loc, self->loc_want);
	dp_check_buf(_metadata, "remote", self->rem, self->rem_want);
}

/*
 * Post @p and wait: it must be accepted and complete with @status, and
 * QP A must then be in RTS (success) or ERR (an error completion).
 */
static void dp_post(struct __test_metadata *_metadata, struct _test_data_dp *self,
		    struct mrct_qp_post *p)
{
	int err;

	err = mt_ioctl(self->fd, MRCT_QP_POST, p);
	if (err)
		TH_LOG("MRCT_QP_POST: %s%s", strerror(-err),
		       err == -ETIMEDOUT ? " (no completion in 60 s)" : "");
	ASSERT_EQ(0, err);
}

/* The completion of an accepted WR: @status, and QP A's state after it. */
static void dp_check_wc(struct __test_metadata *_metadata,
			struct mrct_qp_post *p, uint32_t status)
{
	if (p->post_err)
		TH_LOG("ib_post_send() refused the WR: %s", strerror(-p->post_err));
	ASSERT_EQ(0, p->post_err);
	if (p->status != status)
		TH_LOG("wc.status %u %s, want %u %s (vendor_err 0x%x)",
		       p->status, mt_wc_name(p->status), status,
		       mt_wc_name(status), p->vendor_err);
	EXPECT_EQ(status, p->status);
	if (status == MRCT_WC_SUCCESS) {
		if (p->qp_state[0] != MRCT_QPS_RTS)
			TH_LOG("QP A is %s after a success", mt_qps_name(p->qp_state[0]));
		EXPECT_EQ(MRCT_QPS_RTS, p->qp_state[0]);
	} else {
		if (p->qp_state[0] != MRCT_QPS_ERR)
			TH_LOG("QP A is %s after an error completion, not ERR",
			       mt_qps_name(p->qp_state[0]));
		EXPECT_EQ(MRCT_QPS_ERR, p->qp_state[0]);
	}
}

static void dp_run(struct __test_metadata *_metadata, struct _test_data_dp *self,
		   struct mrct_qp_post *p, uint32_t status)
{
	dp_post(_metadata, self, p);
	dp_check_wc(_metadata, p, status);
}

/* Post @p: ib_post_send() must refuse it with -EINVAL, bad_wr the WR. */
static void dp_refused(struct __test_metadata *_metadata,
		       struct _test_data_dp *self, struct mrct_qp_post *p)
{
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, p));
	if (p->post_err != -EINVAL)
		TH_LOG("ib_post_send() returned %d (%s), want -EINVAL",
		       p->post_err, p->post_err ? strerror(-p->post_err) : "accepted");
	EXPECT_EQ(-EINVAL, p->post_err);
	EXPECT_EQ(MRCT_BAD_WR_SELF, p->bad_wr);
	EXPECT_EQ(MRCT_WC_NONE, p->status);
	EXPECT_EQ(MRCT_QPS_RTS, p->qp_state[0]);
}

/* A good RDMA WRITE on the pair completes: the QP still works. */
static void dp_still_works(struct __test_metadata *_metadata,
			   struct _test_data_dp *self)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0x800, 0x800, 0x100);
	memcpy(self->rem_want + MR_OFF + 0x800, self->loc + MR_OFF + 0x800,
	       0x100);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	dp_check_bufs(_metadata, self);
}

static void dp_post_recv_b(struct __test_metadata *_metadata,
			   struct _test_data_dp *self, uint64_t roff, uint32_t len)
{
	struct mrct_qp_recv r = {
		.handle = self->pair.handle,
		.qp = 1,
		.num_sge = 1,
	};

	r.sge[0].addr = REM_IOVA + roff;
	r.sge[0].length = len;
	r.sge[0].lkey = self->rmr.info.lkey;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &r));
	ASSERT_EQ(0, r.post_err);
}

/*
 * DP_TEST for an atomic case. Another device without atomics skips it,
 * decided before anything is checked (6.1's harness reports a SKIP after
 * a failed check as a skip); vhca must have them, so on vhca their
 * absence fails the case.
 */
#define DP_ATOMIC_TEST(name)						\
	static void dpa_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_dp *self);			\
	DP_TEST(name)							\
	{								\
		bool has = self->pair.flags & MRCT_QP_F_ATOMIC;		\
									\
		if (!has && !self->vhca)				\
			SKIP(return, "%s has no atomics", mt_devname());	\
		ASSERT_TRUE(has) TH_LOG("vhca reports atomic_cap NONE");	\
		dpa_##name(_metadata, self);				\
	}								\
	static void dpa_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_dp *self)

/* Positive cases: the bytes moved are exactly right --------------------- */

DP_TEST(write)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0x100, 0x200, 0x400);
	memcpy(self->rem_want + MR_OFF + 0x200, self->loc + MR_OFF + 0x100,
	       0x400);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	EXPECT_EQ(MRCT_WC_RDMA_WRITE, p.wc_opcode);
	dp_check_bufs(_metadata, self);
}

/* The whole MR, both ends exact: more than one MTU, both pages. */
DP_TEST(write_whole_mr)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, MR_LEN);
	memcpy(self->rem_want + MR_OFF, self->loc + MR_OFF, MR_LEN);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	dp_check_bufs(_metadata, self);
}

/* Two SGEs gathered into one range that crosses a page of the remote MR. */
DP_TEST(write_two_sges_cross_page)
{
	uint8_t *dst = self->rem_want + MR_OFF + PAGE - 0x400;
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0x10, PAGE - 0x400, 0x300);
	dp_sge(&p, LOC_IOVA + PAGE + 0x800, 0x500, self->lmr.info.lkey);
	memcpy(dst, self->loc + MR_OFF + 0x10, 0x300);
	memcpy(dst + 0x300, self->loc + MR_OFF + PAGE + 0x800, 0x500);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0x80, 0x300, 0x600);
	memcpy(self->loc_want + MR_OFF + 0x80, self->rem + MR_OFF + 0x300,
	       0x600);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	EXPECT_EQ(MRCT_WC_RDMA_READ, p.wc_opcode);
	dp_check_bufs(_metadata, self);
}

/* A read across a remote page scattered into two local SGEs. */
DP_TEST(read_two_sges_cross_page)
{
	uint8_t *src = self->rem + MR_OFF + PAGE - 0x200;
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, PAGE - 0x100, PAGE - 0x200,
		0x180);
	dp_sge(&p, LOC_IOVA + 0x40, 0x680, self->lmr.info.lkey);
	memcpy(self->loc_want + MR_OFF + PAGE - 0x100, src, 0x180);
	memcpy(self->loc_want + MR_OFF + 0x40, src + 0x180, 0x680);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	dp_check_bufs(_metadata, self);
}

/* A SEND lands in B's receive, which is larger than the message. */
DP_TEST(send_recv)
{
	struct mrct_qp_post p;

	dp_post_recv_b(_metadata, self, 0x100, 0x800);
	dp_wr(&p, &self->pair, MRCT_WR_SEND, 0, 0);
	dp_sge(&p, LOC_IOVA + 0x40, 0x300, self->lmr.info.lkey);
	p.flags = MRCT_POST_WAIT_RECV;
	memcpy(self->rem_want + MR_OFF + 0x100, self->loc + MR_OFF + 0x40,
	       0x300);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	EXPECT_EQ(MRCT_WC_SEND, p.wc_opcode);
	EXPECT_EQ(MRCT_WC_SUCCESS, p.recv_status);
	EXPECT_EQ(MRCT_WC_RECV, p.recv_opcode);
	EXPECT_EQ(0x300, p.recv_byte_len);
	dp_check_bufs(_metadata, self);
}

/* Inline data from unregistered memory of this process. */
DP_TEST(send_inline)
{
	uint32_t len = self->pair.max_inline < 48 ? self->pair.max_inline : 48;
	uint8_t msg[48];
	struct mrct_qp_post p;

	if (!len)
		SKIP(return, "%s has no inline data", mt_devname());
	mt_fill(msg, sizeof(msg), 0x1a1);
	dp_post_recv_b(_metadata, self, 0x200, 0x100);
	dp_wr(&p, &self->pair, MRCT_WR_SEND, 0, 0);
	p.send_flags = MRCT_SEND_INLINE;
	p.flags = MRCT_POST_WAIT_RECV;
	dp_sge(&p, (uintptr_t)msg, len, 0);
	memcpy(self->rem_want + MR_OFF + 0x200, msg, len);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	EXPECT_EQ(MRCT_WC_SUCCESS, p.recv_status);
	EXPECT_EQ(len, p.recv_byte_len);
	dp_check_bufs(_metadata, self);
}

DP_ATOMIC_TEST(cmp_swp_match)
{
	const uint64_t old = 0x0123456789abcdefULL, swap = 0xfedcba9876543210ULL;
	struct mrct_qp_post p;

	dp_set64(self->rem, self->rem_want, 0x208, old);
	dp_atomic(&p, self, MRCT_WR_ATOMIC_CMP_AND_SWP, 0x10, 0x208, old, swap);
	dp_set64(self->rem_want, self->rem_want, 0x208, swap);
	dp_set64(self->loc_want, self->loc_want, 0x10, old);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	EXPECT_EQ(MRCT_WC_COMP_SWAP, p.wc_opcode);
	EXPECT_EQ(old, dp_get64(self->loc, 0x10));
	EXPECT_EQ(swap, dp_get64(self->rem, 0x208));
	dp_check_bufs(_metadata, self);
}

/* Compare fails: memory unchanged, the original still returned. */
DP_ATOMIC_TEST(cmp_swp_mismatch)
{
	const uint64_t old = 0x0123456789abcdefULL;
	struct mrct_qp_post p;

	dp_set64(self->rem, self->rem_want, PAGE + 0x18, old);
	dp_atomic(&p, self, MRCT_WR_ATOMIC_CMP_AND_SWP, 0x20, PAGE + 0x18,
		  old + 1, 7);
	dp_set64(self->loc_want, self->loc_want, 0x20, old);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	EXPECT_EQ(old, dp_get64(self->loc, 0x20));
	dp_check_bufs(_metadata, self);
}

/* 64-bit arithmetic: a carry out of the low word, then a wrap. */
DP_ATOMIC_TEST(fetch_add)
{
	struct mrct_qp_post p;

	dp_set64(self->rem, self->rem_want, 0x300, 0xffffffffULL);
	dp_atomic(&p, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0x30, 0x300, 1, 0);
	dp_set64(self->rem_want, self->rem_want, 0x300, 0x100000000ULL);
	dp_set64(self->loc_want, self->loc_want, 0x30, 0xffffffffULL);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	EXPECT_EQ(MRCT_WC_FETCH_ADD, p.wc_opcode);
	dp_check_bufs(_metadata, self);

	dp_set64(self->rem, self->rem_want, 0x300, ~0ULL);
	dp_atomic(&p, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0x30, 0x300, 2, 0);
	dp_set64(self->rem_want, self->rem_want, 0x300, 1);
	dp_set64(self->loc_want, self->loc_want, 0x30, ~0ULL);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	dp_check_bufs(_metadata, self);
}

/* Item 16: zero-length RDMA with a junk rkey and address --------------- */

DP_TEST(write_zero_length_junk_rkey)
{
	struct mrct_qp_post p;

	dp_wr(&p, &self->pair, MRCT_WR_RDMA_WRITE, 0, JUNK_RKEY);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	dp_check_bufs(_metadata, self);
	dp_still_works(_metadata, self);
}

DP_TEST(read_zero_length_junk_rkey)
{
	struct mrct_qp_post p;

	dp_wr(&p, &self->pair, MRCT_WR_RDMA_READ, WRAP_ADDR, JUNK_RKEY);
	dp_run(_metadata, self, &p, MRCT_WC_SUCCESS);
	dp_check_bufs(_metadata, self);
	dp_still_works(_metadata, self);
}

/* Item 11: remote ranges outside the MR, wrapping ones included -------- */

DP_TEST(write_iova_wrap)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.remote_addr = WRAP_ADDR;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read_iova_wrap)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x400);
	p.remote_addr = WRAP_ADDR;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* iova + len wraps past zero, to an end inside the MR's iova range... */
DP_TEST(write_iova_wrap_past_zero)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x800);
	p.remote_addr = WRAP_ADDR;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* ...and an MR starting at iova 0, where a wrapped end lands inside it. */
DP_TEST(write_iova_wrap_into_mr_at_zero)
{
	struct mrct_reg zmr;
	struct mrct_qp_post p;

	ASSERT_EQ(0, mt_reg(self->fd, self->rem + MR_OFF, MR_LEN, 0,
			    LW | RW | RR, 0, &zmr));
	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x800);
	p.remote_addr = WRAP_ADDR;
	p.rkey = zmr.info.rkey;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* One MTU, half of it past the MR's end: nothing may be written. */
DP_TEST(write_past_mr_end)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, MR_LEN - 0x200, 0x400);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read_before_mr_start)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x200);
	p.remote_addr = REM_IOVA - 0x100;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_ATOMIC_TEST(fetch_add_past_mr_end)
{
	struct mrct_qp_post p;

	dp_atomic(&p, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0, MR_LEN, 1, 0);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* Item 12: a bad local key or local range ------------------------------ */

DP_TEST(write_lkey_plus_one)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.sge[0].lkey++;
	dp_run(_metadata, self, &p, MRCT_WC_LOC_PROT_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read_lkey_plus_one)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x400);
	p.sge[0].lkey++;
	dp_run(_metadata, self, &p, MRCT_WC_LOC_PROT_ERR);
	dp_check_bufs(_metadata, self);
}

/*
 * The atomic may have executed at the responder before the requester
 * found it cannot scatter the result: the remote word is the original
 * or the result, nothing else, and the local buffer is untouched. vhca
 * checks the result SGE before it changes the target (vhca_do_atomic()),
 * so there the word must be the original.
 */
static void dp_atomic_bad_lkey(struct __test_metadata *_metadata,
			       struct _test_data_dp *self, uint32_t opcode,
			       uint64_t old, uint64_t compare_add,
			       uint64_t swap, uint64_t result)
{
	struct mrct_qp_post p;
	uint64_t now;

	dp_set64(self->rem, self->rem_want, 0x400, old);
	dp_atomic(&p, self, opcode, 0x40, 0x400, compare_add, swap);
	p.sge[0].lkey++;
	dp_run(_metadata, self, &p, MRCT_WC_LOC_PROT_ERR);
	now = dp_get64(self->rem, 0x400);
	if (now != old && (self->vhca || now != result))
		TH_LOG("remote word 0x%llx: want 0x%llx%s%llx",
		       (unsigned long long)now, (unsigned long long)old,
		       self->vhca ? " (vhca: unchanged), not 0x" : " or 0x",
		       (unsigned long long)result);
	EXPECT_TRUE(now == old || (!self->vhca && now == result));
	dp_set64(self->rem_want, self->rem_want, 0x400, now);
	dp_check_bufs(_metadata, self);
}

DP_ATOMIC_TEST(fetch_add_lkey_plus_one)
{
	dp_atomic_bad_lkey(_metadata, self, MRCT_WR_ATOMIC_FETCH_AND_ADD,
			   100, 5, 0, 105);
}

DP_ATOMIC_TEST(cmp_swp_lkey_plus_one)
{
	dp_atomic_bad_lkey(_metadata, self, MRCT_WR_ATOMIC_CMP_AND_SWP,
			   100, 100, 200, 200);
}

/* The gather list runs past the end of the local MR. */
DP_TEST(write_local_sge_past_mr_end)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, MR_LEN - 0x100, 0, 0x200);
	dp_run(_metadata, self, &p, MRCT_WC_LOC_PROT_ERR);
	dp_check_bufs(_metadata, self);
}

/* An RDMA READ may only land in an MR with LOCAL_WRITE. */
DP_TEST(read_into_mr_without_local_write)
{
	struct mrct_reg ro;
	struct mrct_qp_post p;

	ASSERT_EQ(0, mt_reg(self->fd, self->loc + MR_OFF, MR_LEN,
			    LOC_IOVA + 0x100000, 0, 0, &ro));
	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x400);
	p.sge[0].addr = LOC_IOVA + 0x100000;
	p.sge[0].lkey = ro.info.lkey;
	dp_run(_metadata, self, &p, MRCT_WC_LOC_PROT_ERR);
	dp_check_bufs(_metadata, self);
}

/* Item 13: rkey + 1, a stale rkey, an rkey of another PD --------------- */

DP_TEST(write_rkey_plus_one)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.rkey++;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read_rkey_plus_one)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x400);
	p.rkey++;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_ATOMIC_TEST(fetch_add_rkey_plus_one)
{
	struct mrct_qp_post p;

	dp_atomic(&p, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0, 0x10, 1, 0);
	p.rkey++;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* An MR over the same bytes, deregistered: its rkey must not work. */
static uint32_t dp_stale_rkey(struct __test_metadata *_metadata,
			      struct _test_data_dp *self)
{
	struct mrct_reg mr;

	EXPECT_EQ(0, mt_reg(self->fd, self->rem + MR_OFF, MR_LEN, REM_IOVA,
			    ALL_ACCESS, 0, &mr));
	EXPECT_EQ(0, mt_dereg(self->fd, mr.handle));
	return mr.info.rkey;
}

DP_TEST(write_stale_rkey)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.rkey = dp_stale_rkey(_metadata, self);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read_stale_rkey)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x400);
	p.rkey = dp_stale_rkey(_metadata, self);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* An MR of PD 1 over the same bytes; the QPs are on PD 0. */
static uint32_t dp_other_pd_rkey(struct __test_metadata *_metadata,
				 struct _test_data_dp *self)
{
	struct mrct_reg mr;

	EXPECT_EQ(0, mt_reg(self->fd, self->rem + MR_OFF, MR_LEN, REM_IOVA,
			    ALL_ACCESS, 1, &mr));
	return mr.info.rkey;
}

DP_TEST(write_other_pd_rkey)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.rkey = dp_other_pd_rkey(_metadata, self);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_ATOMIC_TEST(fetch_add_other_pd_rkey)
{
	struct mrct_qp_post p;

	dp_atomic(&p, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0, 0x10, 1, 0);
	p.rkey = dp_other_pd_rkey(_metadata, self);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* Item 14: the MR or the responder QP lacks the right ------------------ */

/* An MR over the remote bytes with @access only. */
static uint32_t dp_rkey_with(struct __test_metadata *_metadata,
			     struct _test_data_dp *self, uint32_t access)
{
	struct mrct_reg mr;

	EXPECT_EQ(0, mt_reg(self->fd, self->rem + MR_OFF, MR_LEN, REM_IOVA,
			    access, 0, &mr));
	return mr.info.rkey;
}

DP_ATOMIC_TEST(fetch_add_mr_without_remote_atomic)
{
	struct mrct_qp_post p;

	dp_atomic(&p, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0, 0x10, 1, 0);
	p.rkey = dp_rkey_with(_metadata, self, LW | RW | RR);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(write_mr_without_remote_write)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.rkey = dp_rkey_with(_metadata, self, LW | RR | RA);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read_mr_without_remote_read)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x400);
	p.rkey = dp_rkey_with(_metadata, self, LW | RW | RA);
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_check_bufs(_metadata, self);
}

/* Replace the fixture's pair by one whose QPs have @access. */
static void dp_repair(struct __test_metadata *_metadata,
		      struct _test_data_dp *self, uint32_t access)
{
	struct mrct_qp_destroy d = { .handle = self->pair.handle };

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_DESTROY, &d));
	ASSERT_EQ(0, mt_pair(self->fd, 0, access, QP_SGE, QP_INLINE,
			     &self->pair));
}

DP_ATOMIC_TEST(fetch_add_qp_without_remote_atomic)
{
	struct mrct_qp_post p;

	dp_repair(_metadata, self, LW | RW | RR);
	dp_atomic(&p, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0, 0x10, 1, 0);
	dp_run(_metadata, self, &p, MRCT_WC_REM_INV_REQ_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(write_qp_without_remote_write)
{
	struct mrct_qp_post p;

	dp_repair(_metadata, self, LW | RR | RA);
	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	dp_run(_metadata, self, &p, MRCT_WC_REM_INV_REQ_ERR);
	dp_check_bufs(_metadata, self);
}

DP_TEST(read_qp_without_remote_read)
{
	struct mrct_qp_post p;

	dp_repair(_metadata, self, LW | RW | RA);
	dp_rdma(&p, self, MRCT_WR_RDMA_READ, 0, 0, 0x400);
	dp_run(_metadata, self, &p, MRCT_WC_REM_INV_REQ_ERR);
	dp_check_bufs(_metadata, self);
}

/* Item 15: misaligned atomics ------------------------------------------ */

/*
 * NAK Invalid Request from the responder; a requester may instead refuse
 * the WR at post time (rxe does), which vhca must not: it leaves the check
 * to the responder, as a peer on the wire would see it. The word is never
 * changed.
 */
static void dp_misaligned(struct __test_metadata *_metadata,
			  struct _test_data_dp *self, uint32_t opcode,
			  uint64_t roff)
{
	struct mrct_qp_post p;

	dp_atomic(&p, self, opcode, 0, roff, dp_get64(self->rem, roff), 1);
	dp_post(_metadata, self, &p);
	if (p.post_err && !self->vhca) {
		TH_LOG("%s refused it at post time: %d", mt_devname(),
		       p.post_err);
		EXPECT_EQ(-EINVAL, p.post_err);
		EXPECT_EQ(MRCT_BAD_WR_SELF, p.bad_wr);
	} else {
		dp_check_wc(_metadata, &p, MRCT_WC_REM_INV_REQ_ERR);
	}
	dp_check_bufs(_metadata, self);
}

DP_ATOMIC_TEST(fetch_add_misaligned)
{
	dp_misaligned(_metadata, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, 0x204);
}

DP_ATOMIC_TEST(cmp_swp_misaligned)
{
	dp_misaligned(_metadata, self, MRCT_WR_ATOMIC_CMP_AND_SWP, 0x201);
}

/* Malformed WRs: refused at post, the QP unharmed ---------------------- */

DP_TEST(post_too_many_sges)
{
	uint32_t n = self->pair.max_send_sge + 1, i;
	struct mrct_qp_post p;

	if (n > MRCT_QP_MAX_SGE)
		SKIP(return, "max_send_sge %u: no room for one more",
		     self->pair.max_send_sge);
	dp_wr(&p, &self->pair, MRCT_WR_RDMA_WRITE, REM_IOVA,
	      self->rmr.info.rkey);
	for (i = 0; i < n; i++)
		dp_sge(&p, LOC_IOVA + i * 0x10, 0x10, self->lmr.info.lkey);
	dp_refused(_metadata, self, &p);
	dp_check_bufs(_metadata, self);
	dp_still_works(_metadata, self);
}

/*
 * IB_WR_LSO is a UD opcode; 0x1f is no opcode at all. (rxe indexes its
 * opcode table up to IB_WR_REG_MR = 0x20, so larger values are tried on
 * vhca only.)
 */
DP_TEST(post_bad_opcode)
{
	const uint32_t bad[] = { MRCT_WR_LSO, 0x1f, 0xff, 0x7fffffff };
	struct mrct_qp_post p;
	unsigned int i, n = self->vhca ? 4 : 2;

	for (i = 0; i < n; i++) {
		dp_rdma(&p, self, bad[i], 0, 0, 0x40);
		dp_refused(_metadata, self, &p);
	}
	dp_check_bufs(_metadata, self);
	dp_still_works(_metadata, self);
}

DP_TEST(post_oversized_inline)
{
	uint32_t len = self->pair.max_inline + 1;
	struct mrct_qp_post p;
	uint8_t *msg;

	if (len > MRCT_QP_MAX_INLINE)
		SKIP(return, "max_inline_data %u is beyond what the module bounces",
		     self->pair.max_inline);
	msg = calloc(1, len);
	ASSERT_NE(NULL, msg);
	dp_post_recv_b(_metadata, self, 0, MR_LEN);
	dp_wr(&p, &self->pair, MRCT_WR_SEND, 0, 0);
	p.send_flags = MRCT_SEND_INLINE;
	dp_sge(&p, (uintptr_t)msg, len, 0);
	dp_refused(_metadata, self, &p);
	free(msg);
	dp_check_bufs(_metadata, self);
	dp_still_works(_metadata, self);
}

DP_TEST(post_recv_too_many_sges)
{
	struct mrct_qp_recv r = {
		.handle = self->pair.handle,
		.qp = 1,
		.num_sge = self->pair.max_recv_sge + 1,
	};
	uint32_t i;

	if (r.num_sge > MRCT_QP_MAX_SGE)
		SKIP(return, "max_recv_sge %u: no room for one more",
		     self->pair.max_recv_sge);
	for (i = 0; i < r.num_sge; i++) {
		r.sge[i].addr = REM_IOVA + i * 0x10;
		r.sge[i].length = 0x10;
		r.sge[i].lkey = self->rmr.info.lkey;
	}
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &r));
	EXPECT_EQ(-EINVAL, r.post_err);
	EXPECT_EQ(MRCT_BAD_WR_SELF, r.bad_wr);
	dp_still_works(_metadata, self);
}

/* After an error, and at teardown ------------------------------------- */

/* A WR posted on a QP in ERR is flushed, promptly. */
DP_TEST(post_after_error_flushed)
{
	struct mrct_qp_post p;

	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.rkey++;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	dp_run(_metadata, self, &p, MRCT_WC_WR_FLUSH_ERR);
	dp_check_bufs(_metadata, self);
}

/* Pairs left in ERR and in RTS are destroyed by close(). */
DP_TEST(close_with_pairs_in_error)
{
	struct mrct_qp_create other;
	struct mrct_qp_post p;

	ASSERT_EQ(0, mt_pair(self->fd, 0, ALL_ACCESS, QP_SGE, QP_INLINE,
			     &other));
	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x400);
	p.rkey = JUNK_RKEY;
	dp_run(_metadata, self, &p, MRCT_WC_REM_ACCESS_ERR);
	ASSERT_EQ(0, close(self->fd));
	self->fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
	ASSERT_LE(0, self->fd);
}

DP_TEST(pair_bad_input)
{
	struct mrct_qp_destroy d = { .handle = self->pair.handle };
	struct mrct_qp_create qc;
	struct mrct_qp_post p;

	memset(&qc, 0, sizeof(qc));
	qc.pd = MRCT_NUM_PDS;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_QP_CREATE, &qc));
	EXPECT_EQ(-EINVAL, mt_pair(self->fd, 0, MRCT_ACCESS_MW_BIND, QP_SGE,
				   QP_INLINE, &qc));
	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x40);
	p.qp = 2;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_QP_POST, &p));
	p.qp = 0;
	p.num_sge = MRCT_QP_MAX_SGE + 1;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_QP_POST, &p));
	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_QP_DESTROY, &d));
	EXPECT_EQ(-ENOENT, mt_ioctl(self->fd, MRCT_QP_DESTROY, &d));
	dp_rdma(&p, self, MRCT_WR_RDMA_WRITE, 0, 0, 0x40);
	EXPECT_EQ(-ENOENT, mt_ioctl(self->fd, MRCT_QP_POST, &p));
}

TEST_HARNESS_MAIN
