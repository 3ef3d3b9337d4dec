// SPDX-License-Identifier: GPL-2.0
/*
 * Counters of remote writes (issue 5 item 5, the fi_mr_bind() model) over
 * a loopback RC pair of /dev/mrcore_test on vhca: the device adds one to
 * the counter of an MR for every incoming RDMA WRITE (with or without
 * immediate) or atomic that succeeded into it, once per operation, also
 * through a memory window or an indirect key; failed writes, READs and
 * local writes (a READ response or a receive landing in the MR) add
 * nothing; REG_MR cycles of a fast-reg MR keep counting; an unbound MR
 * counts no more. Errnos are mrcore's (Documentation/mrcore/counters.rst).
 *
 * vhca only: the counters live in vhca's device memory. The device is
 * vhca0 unless MRCT_DEVICE names another vhca device.
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

#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define RR		MRCT_ACCESS_REMOTE_READ
#define RA		MRCT_ACCESS_REMOTE_ATOMIC
#define MWB		MRCT_ACCESS_MW_BIND
#define QP_ACCESS	(LW | RW | RR | RA)
#define MR_ACCESS	(LW | RW | RR | RA | MWB)

#define BUF_LEN		(4 * PAGE)
#define SRC_IOVA	0x100000000ULL
#define TGT_IOVA	0x200000000ULL
#define TGT2_IOVA	0x300000000ULL
#define IND_IOVA	0x700000000ULL

/* ib_wr_opcode values the UAPI does not spell. */
#define WR_RDMA_WRITE_WITH_IMM	1

/**
 * struct cnt_buf - user memory registered with MRCT_REG
 * @p: the memory (mmap)
 * @iova: the MR's iova
 * @handle: the MR's handle (0 once deregistered)
 * @key: lkey == rkey
 */
struct cnt_buf {
	uint8_t *p;
	uint64_t iova;
	uint32_t handle;
	uint32_t key;
};

FIXTURE(cnt)
{
	int fd;			/* -1: no vhca device, the case is skipped */
	uint32_t pair;		/* PD 0, qp_access_flags QP_ACCESS */
	struct cnt_buf src;	/* PD 0, LOCAL_WRITE: WRITE source */
	struct cnt_buf tgt;	/* PD 0, MR_ACCESS */
	struct cnt_buf tgt2;	/* PD 0, MR_ACCESS */
};

static int cnt_pair(int fd, uint32_t *handle, uint32_t *flags)
{
	struct mrct_qp_create qc;
	int err;

	err = mt_pair(fd, 0, QP_ACCESS, 1, 0, &qc);
	*handle = qc.handle;
	if (flags)
		*flags = qc.flags;
	return err;
}

static int cnt_reg(int fd, uint64_t iova, uint32_t access, struct cnt_buf *b)
{
	struct mrct_reg reg = {};
	int err;

	memset(b, 0, sizeof(*b));
	b->p = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->p == MAP_FAILED)
		return -errno;
	memset(b->p, 0x5a, BUF_LEN);
	b->iova = iova;
	reg.addr = (uintptr_t)b->p;
	reg.length = BUF_LEN;
	reg.iova = iova;
	reg.access = access;
	err = mt_ioctl(fd, MRCT_REG, &reg);
	if (err)
		return err;
	b->handle = reg.handle;
	b->key = reg.info.lkey;
	return 0;
}

FIXTURE_SETUP(cnt)
{
	uint32_t flags;
	int err;

	self->fd = mt_fixture_open(_metadata);
	if (self->fd < 0)
		return;
	err = cnt_pair(self->fd, &self->pair, &flags);
	if (err)
		TH_LOG("MRCT_QP_CREATE on %s: %s", mt_devname(),
		       strerror(-err));
	ASSERT_EQ(0, err);
	if (!mt_fixture_vhca(_metadata, &self->fd, flags))
		return;
	ASSERT_EQ(0, cnt_reg(self->fd, SRC_IOVA, LW, &self->src));
	ASSERT_EQ(0, cnt_reg(self->fd, TGT_IOVA, MR_ACCESS, &self->tgt));
	ASSERT_EQ(0, cnt_reg(self->fd, TGT2_IOVA, MR_ACCESS, &self->tgt2));
}

/* Closing the file frees counters, windows, keys, MRs and pairs. */
FIXTURE_TEARDOWN(cnt)
{
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
}

/*
 * TEST_F whose body runs only when the fixture found a vhca device: 6.1's
 * harness runs the body after a SKIP in the setup. (struct _test_data_cnt
 * is what FIXTURE_DATA(cnt) names, spelled out so checkpatch reads it as
 * a type.)
 */
#define CNT_TEST(name)							\
	static void cntt_##name(struct __test_metadata *_metadata,	\
				struct _test_data_cnt *self);		\
	TEST_F(cnt, name)						\
	{								\
		if (self->fd >= 0)					\
			cntt_##name(_metadata, self);			\
	}								\
	static void cntt_##name(struct __test_metadata *_metadata,	\
				struct _test_data_cnt *self)

/* A new counter's handle. */
static uint32_t cnt_alloc(struct __test_metadata *_metadata,
			  struct _test_data_cnt *self)
{
	struct mrct_cnt_alloc a = {};

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_CNT_ALLOC, &a));
	EXPECT_NE(0, a.handle);
	EXPECT_NE(0, a.index);
	return a.handle;
}

static int cnt_bind(struct _test_data_cnt *self, uint32_t key, uint32_t c,
		    uint32_t flags)
{
	struct mrct_cnt_bind b = {
		.key = key,
		.handle = c,
		.flags = flags,
	};

	return mt_ioctl(self->fd, MRCT_CNT_BIND, &b);
}

static void cnt_bind_ok(struct __test_metadata *_metadata,
			struct _test_data_cnt *self, uint32_t key, uint32_t c)
{
	ASSERT_EQ(0, cnt_bind(self, key, c, MRCT_COUNT_REMOTE_WRITE));
}

static uint64_t cnt_read(struct __test_metadata *_metadata,
			 struct _test_data_cnt *self, uint32_t c)
{
	struct mrct_cnt_read r = { .handle = c };

	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_CNT_READ, &r));
	return r.value;
}

static int cnt_free(struct _test_data_cnt *self, uint32_t c)
{
	struct mrct_cnt_free f = { .handle = c };

	return mt_ioctl(self->fd, MRCT_CNT_FREE, &f);
}

/*
 * Post @opcode on QP A of @pair, @len bytes at src[0] (or, for a READ,
 * into @local) through @rkey at @raddr; return the completion's status.
 */
static uint32_t cnt_post(struct __test_metadata *_metadata,
			 struct _test_data_cnt *self, uint32_t pair,
			 uint32_t opcode, const struct cnt_buf *local,
			 uint32_t rkey, uint64_t raddr, uint32_t len)
{
	struct mrct_qp_post p = {
		.handle = pair,
		.opcode = opcode,
		.rkey = rkey,
		.remote_addr = raddr,
		.num_sge = 1,
	};

	p.sge[0].addr = local->iova;
	p.sge[0].length = len;
	p.sge[0].lkey = local->key;
	if (opcode == MRCT_WR_ATOMIC_FETCH_AND_ADD)
		p.compare_add = 1;
	if (opcode == MRCT_WR_ATOMIC_CMP_AND_SWP) {
		p.compare_add = 0x1234;	/* never the target's value */
		p.swap = 7;
	}
	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
	EXPECT_EQ(0, p.post_err);
	return p.status;
}

static void cnt_write_ok(struct __test_metadata *_metadata,
			 struct _test_data_cnt *self, uint32_t rkey,
			 uint64_t raddr, uint32_t len)
{
	EXPECT_EQ(MRCT_WC_SUCCESS,
		  cnt_post(_metadata, self, self->pair, MRCT_WR_RDMA_WRITE,
			   &self->src, rkey, raddr, len));
}

/* A fresh pair for an operation that fails (its QP goes to ERR). */
static uint32_t cnt_new_pair(struct __test_metadata *_metadata,
			     struct _test_data_cnt *self)
{
	uint32_t handle;

	EXPECT_EQ(0, cnt_pair(self->fd, &handle, NULL));
	return handle;
}

/* N RDMA WRITEs into an MR with a counter: the device counts N. */
CNT_TEST(writes_counted)
{
	uint32_t c = cnt_alloc(_metadata, self);
	int i;

	EXPECT_EQ(0, cnt_read(_metadata, self, c));
	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	for (i = 0; i < 5; i++)
		cnt_write_ok(_metadata, self, self->tgt.key,
			     TGT_IOVA + i * 100, 64);
	/* A write of a whole page and one of 1 byte count once each. */
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA, PAGE);
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA + PAGE - 1, 1);
	EXPECT_EQ(7, cnt_read(_metadata, self, c));
	/* Another MR of the context, with no counter, changes nothing. */
	cnt_write_ok(_metadata, self, self->tgt2.key, TGT2_IOVA, 64);
	EXPECT_EQ(7, cnt_read(_metadata, self, c));
}

/* RDMA WRITE with immediate data counts once, after its receive. */
CNT_TEST(write_with_imm_counted)
{
	struct mrct_qp_recv r = { .handle = self->pair, .qp = 1 };
	struct mrct_qp_post p = {
		.handle = self->pair,
		.opcode = WR_RDMA_WRITE_WITH_IMM,
		.rkey = self->tgt.key,
		.remote_addr = TGT_IOVA,
		.num_sge = 1,
		.flags = MRCT_POST_WAIT_RECV,
	};
	uint32_t c = cnt_alloc(_metadata, self);

	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &r));
	ASSERT_EQ(0, r.post_err);
	p.sge[0].addr = self->src.iova;
	p.sge[0].length = 128;
	p.sge[0].lkey = self->src.key;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
	EXPECT_EQ(MRCT_WC_SUCCESS, p.status);
	EXPECT_EQ(MRCT_WC_SUCCESS, p.recv_status);
	EXPECT_EQ(1, cnt_read(_metadata, self, c));
}

/* Atomics are remote writes: each counts, a CAS that did not swap too. */
CNT_TEST(atomics_counted)
{
	uint32_t c = cnt_alloc(_metadata, self);

	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	EXPECT_EQ(MRCT_WC_SUCCESS,
		  cnt_post(_metadata, self, self->pair,
			   MRCT_WR_ATOMIC_FETCH_AND_ADD, &self->src,
			   self->tgt.key, TGT_IOVA + 64, 8));
	EXPECT_EQ(MRCT_WC_SUCCESS,
		  cnt_post(_metadata, self, self->pair,
			   MRCT_WR_ATOMIC_CMP_AND_SWP, &self->src,
			   self->tgt.key, TGT_IOVA + 64, 8));
	EXPECT_EQ(2, cnt_read(_metadata, self, c));
}

/* Writes the device refuses do not count. */
CNT_TEST(failed_writes_not_counted)
{
	uint32_t c = cnt_alloc(_metadata, self);
	uint32_t pair;

	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA, 64);

	/* A stale variant of the key. */
	pair = cnt_new_pair(_metadata, self);
	EXPECT_EQ(MRCT_WC_REM_ACCESS_ERR,
		  cnt_post(_metadata, self, pair, MRCT_WR_RDMA_WRITE,
			   &self->src, self->tgt.key + 1, TGT_IOVA, 64));
	/* A range past the MR's end. */
	pair = cnt_new_pair(_metadata, self);
	EXPECT_EQ(MRCT_WC_REM_ACCESS_ERR,
		  cnt_post(_metadata, self, pair, MRCT_WR_RDMA_WRITE,
			   &self->src, self->tgt.key,
			   TGT_IOVA + BUF_LEN - 32, 64));
	/* A misaligned atomic. */
	pair = cnt_new_pair(_metadata, self);
	EXPECT_EQ(MRCT_WC_REM_INV_REQ_ERR,
		  cnt_post(_metadata, self, pair,
			   MRCT_WR_ATOMIC_FETCH_AND_ADD, &self->src,
			   self->tgt.key, TGT_IOVA + 4, 8));
	EXPECT_EQ(1, cnt_read(_metadata, self, c));
}

/* READs of the MR, and local writes into it, do not count. */
CNT_TEST(reads_and_local_writes_not_counted)
{
	struct mrct_qp_recv r = { .handle = self->pair, .qp = 1, .num_sge = 1 };
	struct mrct_qp_post p = {
		.handle = self->pair,
		.opcode = MRCT_WR_SEND,
		.num_sge = 1,
		.flags = MRCT_POST_WAIT_RECV,
	};
	uint32_t c = cnt_alloc(_metadata, self);

	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	/* A READ of the bound MR. */
	EXPECT_EQ(MRCT_WC_SUCCESS,
		  cnt_post(_metadata, self, self->pair, MRCT_WR_RDMA_READ,
			   &self->src, self->tgt.key, TGT_IOVA, 256));
	/* A READ response landing in the bound MR (the local sink). */
	EXPECT_EQ(MRCT_WC_SUCCESS,
		  cnt_post(_metadata, self, self->pair, MRCT_WR_RDMA_READ,
			   &self->tgt, self->tgt2.key, TGT2_IOVA, 256));
	/* A SEND whose receive scatters into the bound MR. */
	r.sge[0].addr = TGT_IOVA;
	r.sge[0].length = 256;
	r.sge[0].lkey = self->tgt.key;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &r));
	ASSERT_EQ(0, r.post_err);
	p.sge[0].addr = self->src.iova;
	p.sge[0].length = 256;
	p.sge[0].lkey = self->src.key;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
	EXPECT_EQ(MRCT_WC_SUCCESS, p.status);
	EXPECT_EQ(MRCT_WC_SUCCESS, p.recv_status);
	/* The bound MR as the source of a WRITE elsewhere. */
	EXPECT_EQ(MRCT_WC_SUCCESS,
		  cnt_post(_metadata, self, self->pair, MRCT_WR_RDMA_WRITE,
			   &self->tgt, self->tgt2.key, TGT2_IOVA, 256));
	EXPECT_EQ(0, cnt_read(_metadata, self, c));
}

/* A WRITE through a type 1 window counts on the window's MR. */
CNT_TEST(window_counts_on_mr)
{
	struct mrct_mw_alloc a = { .pd = 0, .type = MRCT_MW_TYPE_1 };
	struct mrct_mw_bind b = {
		.addr = TGT_IOVA + PAGE,
		.length = PAGE,
		.mr = self->tgt.handle,
		.access = RW,
	};
	uint32_t c = cnt_alloc(_metadata, self);

	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_MW_ALLOC, &a));
	b.handle = a.handle;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_MW_BIND, &b));
	cnt_write_ok(_metadata, self, b.rkey, TGT_IOVA + PAGE + 8, 64);
	cnt_write_ok(_metadata, self, b.rkey, TGT_IOVA + PAGE + 256, 64);
	EXPECT_EQ(2, cnt_read(_metadata, self, c));
	/* A window has no counter of its own to bind. */
	EXPECT_EQ(-ENOENT, cnt_bind(self, b.rkey, c, MRCT_COUNT_REMOTE_WRITE));
}

/*
 * A WRITE through an indirect key counts once on each distinct counter
 * of the MRs it lands in.
 */
CNT_TEST(indirect_counts_on_mrs)
{
	struct mrct_ind_reg r = {
		.iova = IND_IOVA,
		.pd = 0,
		.access = LW | RW | RR,	/* remote write needs local write */
		.nranges = 2,
	};
	uint32_t c1 = cnt_alloc(_metadata, self);
	uint32_t c2 = cnt_alloc(_metadata, self);

	cnt_bind_ok(_metadata, self, self->tgt.key, c1);
	cnt_bind_ok(_metadata, self, self->tgt2.key, c2);
	r.ranges[0].key = self->tgt.key;
	r.ranges[0].addr = TGT_IOVA;
	r.ranges[0].length = PAGE;
	r.ranges[1].key = self->tgt2.key;
	r.ranges[1].addr = TGT2_IOVA;
	r.ranges[1].length = PAGE;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_IND_REG, &r));

	/* Across both pieces: one on each. */
	cnt_write_ok(_metadata, self, r.key, IND_IOVA + PAGE - 32, 64);
	EXPECT_EQ(1, cnt_read(_metadata, self, c1));
	EXPECT_EQ(1, cnt_read(_metadata, self, c2));
	/* Inside the second piece only. */
	cnt_write_ok(_metadata, self, r.key, IND_IOVA + PAGE + 8, 64);
	EXPECT_EQ(1, cnt_read(_metadata, self, c1));
	EXPECT_EQ(2, cnt_read(_metadata, self, c2));
	/* The indirect key's own counter, shared with piece 0: still once. */
	cnt_bind_ok(_metadata, self, r.key, c1);
	cnt_write_ok(_metadata, self, r.key, IND_IOVA + PAGE - 32, 64);
	EXPECT_EQ(2, cnt_read(_metadata, self, c1));
	EXPECT_EQ(3, cnt_read(_metadata, self, c2));
}

/* Two MRs sharing one counter: every write into either counts on it. */
CNT_TEST(shared_counter)
{
	uint32_t c = cnt_alloc(_metadata, self);

	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	cnt_bind_ok(_metadata, self, self->tgt2.key, c);
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA, 64);
	cnt_write_ok(_metadata, self, self->tgt2.key, TGT2_IOVA, 64);
	cnt_write_ok(_metadata, self, self->tgt2.key, TGT2_IOVA + 64, 64);
	EXPECT_EQ(3, cnt_read(_metadata, self, c));
	/* Bound to two MRs: the free is refused until both unbound. */
	EXPECT_EQ(-EBUSY, cnt_free(self, c));
	EXPECT_EQ(0, cnt_bind(self, self->tgt.key, 0, 0));
	EXPECT_EQ(-EBUSY, cnt_free(self, c));
	EXPECT_EQ(0, cnt_bind(self, self->tgt2.key, 0, 0));
	EXPECT_EQ(0, cnt_free(self, c));
}

/* REG_MR / LOCAL_INV cycles on a fast-reg MR keep counting. */
CNT_TEST(frwr_cycles_keep_counting)
{
	struct mrct_frwr_alloc fa = {
		.pd = 0,
		.max_pages = 4,
		.nchunks = 4,
		.chunk_shift = 12,
	};
	uint32_t c = cnt_alloc(_metadata, self);
	uint32_t rkey;
	int i;

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_ALLOC, &fa));
	cnt_bind_ok(_metadata, self, fa.lkey, c);
	rkey = fa.rkey;
	for (i = 0; i < 20; i++) {
		struct mrct_frwr_reg reg = {
			.handle = fa.handle,
			.pair = self->pair,
			.access = LW | RW | RR,
			.flags = MRCT_FRWR_KEY_NEXT,
			.stride = 1,
			.page_size = PAGE,
			.length = 2 * PAGE,
		};
		struct mrct_frwr_xfer x = {
			.length = 2 * PAGE,
			.handle = fa.handle,
			.pair = self->pair,
			.dir = MRCT_FRWR_WRITE,
			.seed = 2 * i + 2,
			.seed_old = 2 * i + 1,
		};
		struct mrct_frwr_inv inv = {
			.pair = self->pair,
			.opcode = MRCT_WR_LOCAL_INV,
		};

		ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_REG, &reg));
		ASSERT_EQ(MRCT_WC_SUCCESS, reg.status);
		rkey = reg.rkey;
		ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_XFER, &x));
		ASSERT_EQ(MRCT_WC_SUCCESS, x.status);
		ASSERT_EQ(1, x.wrs);
		inv.key = rkey;
		ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_INV, &inv));
		ASSERT_EQ(MRCT_WC_SUCCESS, inv.status);
	}
	EXPECT_EQ(20, cnt_read(_metadata, self, c));
}

/* After an unbind the MR's writes count no more; a reset zeroes. */
CNT_TEST(unbind_stops_counting)
{
	struct mrct_cnt_read r = { .flags = MRCT_CNT_READ_RESET };
	uint32_t c = cnt_alloc(_metadata, self);

	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA, 64);
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA, 64);
	EXPECT_EQ(0, cnt_bind(self, self->tgt.key, 0, 0));
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA, 64);
	r.handle = c;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_CNT_READ, &r));
	EXPECT_EQ(2, r.value);
	EXPECT_EQ(0, cnt_read(_metadata, self, c));
	/* Bound again: counting from the reset. */
	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	cnt_write_ok(_metadata, self, self->tgt.key, TGT_IOVA, 64);
	EXPECT_EQ(1, cnt_read(_metadata, self, c));
}

/* The binding rules and their errnos. */
CNT_TEST(bind_errnos)
{
	struct mrct_dereg d = { .handle = self->tgt2.handle };
	uint32_t c = cnt_alloc(_metadata, self);
	uint32_t c2 = cnt_alloc(_metadata, self);

	/* Flags: REMOTE_WRITE to bind, 0 to unbind, nothing else. */
	EXPECT_EQ(-EINVAL, cnt_bind(self, self->tgt.key, c, 0));
	EXPECT_EQ(-EINVAL, cnt_bind(self, self->tgt.key, c, 0x2));
	EXPECT_EQ(-EINVAL, cnt_bind(self, self->tgt.key, 0,
				    MRCT_COUNT_REMOTE_WRITE));
	/* No such key, no such counter, nothing bound to unbind. */
	EXPECT_EQ(-ENOENT, cnt_bind(self, self->tgt.key + 1, c,
				    MRCT_COUNT_REMOTE_WRITE));
	EXPECT_EQ(-ENOENT, cnt_bind(self, self->tgt.key, 0xffff,
				    MRCT_COUNT_REMOTE_WRITE));
	EXPECT_EQ(-ENOENT, cnt_bind(self, self->tgt.key, 0, 0));
	/* One counter per MR. */
	cnt_bind_ok(_metadata, self, self->tgt.key, c);
	EXPECT_EQ(-EBUSY, cnt_bind(self, self->tgt.key, c,
				   MRCT_COUNT_REMOTE_WRITE));
	EXPECT_EQ(-EBUSY, cnt_bind(self, self->tgt.key, c2,
				   MRCT_COUNT_REMOTE_WRITE));
	EXPECT_EQ(-EBUSY, cnt_free(self, c));
	/* Deregistering a bound MR releases its counter. */
	cnt_bind_ok(_metadata, self, self->tgt2.key, c2);
	EXPECT_EQ(-EBUSY, cnt_free(self, c2));
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_DEREG, &d));
	EXPECT_EQ(0, cnt_free(self, c2));
	EXPECT_EQ(-ENOENT, cnt_free(self, c2));
}

TEST_HARNESS_MAIN
