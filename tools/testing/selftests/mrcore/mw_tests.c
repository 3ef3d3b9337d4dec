// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows, indirect keys and SG_GAPS fast registration over a
 * loopback RC pair of /dev/mrcore_test on vhca: ANCHORS.md checklist
 * items 24 (an MR with a bound window refuses deregistration and
 * invalidation), 25 (the type 1 / type 2 window lifecycle, type 3
 * refused) and 26 (bind with the same key portion allowed; bind without
 * MW_BIND, beyond the MR or with rights the MR cannot back refused), a
 * type 2 window serving its own QP only, zero-based windows, indirect
 * keys over several MRs, nested to MRC_INDIRECT_MAX_DEPTH and no deeper,
 * refused once the MR they name has lost a right (rereg ACCESS) or its
 * key has been taken by an MR without it (issue 16, item 4), and an
 * SG_GAPS REG_MR that lands in its pieces and nowhere else.
 *
 * The MRs are user memory registered with MRCT_REG, so the program sees
 * every byte the device moved: each buffer has a shadow copy of what it
 * must hold, and after every transfer, allowed or refused, the whole
 * buffer is compared with it. Background bytes have their top bit set and
 * transferred patterns never do, so a byte in the wrong place shows.
 *
 * Statuses are what IBTA asks for and the vhca engine produces
 * (drivers/vhca/engine.c); errnos are mrcore's (windows.rst):
 *  - RDMA through an rkey that is not VALID, outside the window, or from
 *    a QP a type 2 window is not bound to: IB_WC_REM_ACCESS_ERR;
 *  - a refused Bind MW WR: IB_WC_MW_BIND_ERR, QP to ERR;
 *  - a refused LOCAL_INV: IB_WC_LOC_PROT_ERR, QP to ERR; a refused Send
 *    with Invalidate: IB_WC_REM_INV_REQ_ERR.
 * vhca only: rxe in 6.1 has no kernel memory-window path. The device is
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
#define ZB		MRCT_ACCESS_ZERO_BASED
#define QP_ACCESS	(LW | RW | RR | RA)
#define MR_ACCESS	(LW | RW | RR)

/* Every buffer: 16 pages. The iovas are far apart and page aligned. */
#define BUF_LEN		(16 * PAGE)
#define SRC_IOVA	0x100000000ULL
#define TGT_IOVA	0x200000000ULL
#define MR_IOVA(n)	(0x300000000ULL + (uint64_t)(n) * 0x10000000ULL)
#define IND_IOVA	0x700000000ULL

/* mrcore's MRC_INDIRECT_MAX_DEPTH (include/rdma/mrcore.h). */
#define INDIRECT_MAX_DEPTH	3

/* QP A (index 0) binds type 2 windows; QP B (1) is its peer. */
#define QP_A		0
#define QP_B		1

/* Background byte @i of a buffer (top bit set) and pattern byte (clear). */
static uint8_t mw_bg(uint32_t seed, size_t i)
{
	return 0x80 | ((seed + i + 5 * (i >> 7)) & 0x7f);
}

static uint8_t mw_pat(uint32_t seed, size_t i)
{
	return (seed * 13 + i + 3 * (i >> 8) + 5 * (i >> 12)) & 0x7f;
}

/**
 * struct mw_buf - user memory registered with MRCT_REG, and its shadow
 * @p: the memory (mmap)
 * @shadow: what @p must hold
 * @len: bytes
 * @iova: the MR's iova
 * @handle: the MR's handle (0 once deregistered)
 * @key: lkey == rkey
 */
struct mw_buf {
	uint8_t *p;
	uint8_t *shadow;
	size_t len;
	uint64_t iova;
	uint32_t handle;
	uint32_t key;
};

FIXTURE(mw)
{
	int fd;			/* -1: no vhca device, the case is skipped */
	uint32_t pair;		/* PD 0, qp_access_flags QP_ACCESS */
	struct mw_buf src;	/* PD 0, LOCAL_WRITE: WRITE source, READ sink */
	struct mw_buf tgt;	/* PD 0, MR_ACCESS | MW_BIND */
};

/* Map @len bytes for @iova and fill them with background @seed. */
static int mw_map(size_t len, uint64_t iova, uint32_t seed, struct mw_buf *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	b->p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->p == MAP_FAILED)
		return -errno;
	b->shadow = malloc(len);
	if (!b->shadow)
		return -ENOMEM;
	b->len = len;
	b->iova = iova;
	for (i = 0; i < len; i++)
		b->shadow[i] = mw_bg(seed, i);
	memcpy(b->p, b->shadow, len);
	return 0;
}

/* Map @len bytes, fill them with a background, register them. */
static int mw_reg(int fd, uint32_t pd, size_t len, uint64_t iova,
		  uint32_t access, struct mw_buf *b)
{
	struct mrct_reg reg = {};
	int err;

	err = mw_map(len, iova, (uint32_t)(iova >> 28), b);
	if (err)
		return err;
	reg.addr = (uintptr_t)b->p;
	reg.length = len;
	reg.iova = iova;
	reg.access = access;
	reg.pd = pd;
	err = mt_ioctl(fd, MRCT_REG, &reg);
	if (err)
		return err;
	b->handle = reg.handle;
	b->key = reg.info.lkey;
	return 0;
}

static int mw_dereg(int fd, struct mw_buf *b)
{
	struct mrct_dereg d = { .handle = b->handle };
	int err;

	err = mt_ioctl(fd, MRCT_DEREG, &d);
	if (!err)
		b->handle = 0;
	return err;
}

FIXTURE_SETUP(mw)
{
	struct mrct_qp_create qc;
	int err;

	self->fd = mt_fixture_open(_metadata);
	if (self->fd < 0)
		return;
	err = mt_pair(self->fd, 0, QP_ACCESS, 1, 0, &qc);
	if (err)
		TH_LOG("MRCT_QP_CREATE on %s: %s", mt_devname(), strerror(-err));
	ASSERT_EQ(0, err);
	if (!mt_fixture_vhca(_metadata, &self->fd, qc.flags))
		return;
	self->pair = qc.handle;
	ASSERT_EQ(0, mw_reg(self->fd, 0, BUF_LEN, SRC_IOVA, LW, &self->src));
	ASSERT_EQ(0, mw_reg(self->fd, 0, BUF_LEN, TGT_IOVA, MR_ACCESS | MWB,
			    &self->tgt));
}

/* Closing the file frees windows, keys, MRs and pairs. */
FIXTURE_TEARDOWN(mw)
{
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
}

/*
 * TEST_F whose body runs only when the fixture found a vhca device: 6.1's
 * harness runs the body after a SKIP in the setup. (struct _test_data_mw
 * is what FIXTURE_DATA(mw) names, spelled out so checkpatch reads it as a
 * type.)
 */
#define MW_TEST(name)							\
	static void mwt_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_mw *self);		\
	TEST_F(mw, name)						\
	{								\
		if (self->fd >= 0)					\
			mwt_##name(_metadata, self);			\
	}								\
	static void mwt_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_mw *self)

static uint32_t mw_new_pair(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, uint32_t pd)
{
	struct mrct_qp_create qc;

	ASSERT_EQ(0, mt_pair(self->fd, pd, QP_ACCESS, 1, 0, &qc));
	return qc.handle;
}

/* Every byte of @b is what its shadow says. */
static void mw_same(struct __test_metadata *_metadata, const struct mw_buf *b,
		    const char *what)
{
	size_t i;

	for (i = 0; i < b->len; i++)
		if (b->p[i] != b->shadow[i])
			break;
	if (i < b->len)
		TH_LOG("%s: MR at iova 0x%llx: byte 0x%zx is 0x%02x, want 0x%02x",
		       what, (unsigned long long)b->iova, i, b->p[i],
		       b->shadow[i]);
	EXPECT_EQ(b->len, i);
}

static void mw_want(struct __test_metadata *_metadata, const char *what,
		    uint32_t got, uint32_t want)
{
	if (got != want)
		TH_LOG("%s: wc.status %u %s, want %u %s", what, got,
		       mt_wc_name(got), want, mt_wc_name(want));
	EXPECT_EQ(want, got);
}

/* Post an RDMA @opcode of @len bytes at src[0] through @rkey at @raddr. */
static void mw_rdma(struct __test_metadata *_metadata,
		    struct _test_data_mw *self, uint32_t pair, uint32_t qp,
		    uint32_t opcode, uint32_t rkey, uint64_t raddr,
		    uint32_t len, struct mrct_qp_post *p)
{
	memset(p, 0, sizeof(*p));
	p->handle = pair;
	p->qp = qp;
	p->opcode = opcode;
	p->rkey = rkey;
	p->remote_addr = raddr;
	p->num_sge = 1;
	p->sge[0].addr = self->src.iova;
	p->sge[0].length = len;
	p->sge[0].lkey = self->src.key;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, p));
	ASSERT_EQ(0, p->post_err);
}

/* Fill src[0, @len) with pattern @seed. */
static void mw_src_fill(struct _test_data_mw *self, uint32_t seed,
			size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		self->src.shadow[i] = mw_pat(seed, i);
	memcpy(self->src.p, self->src.shadow, len);
}

/*
 * RDMA WRITE of @len pattern bytes through @rkey at @raddr that must land
 * at @b[@off]: success, those bytes new, every other byte of @b as it was.
 */
static void mw_write_ok(struct __test_metadata *_metadata,
			struct _test_data_mw *self, uint32_t pair, uint32_t qp,
			uint32_t rkey, uint64_t raddr, uint32_t len,
			struct mw_buf *b, size_t off, const char *what)
{
	static uint32_t seed = 1;
	struct mrct_qp_post p;

	seed++;
	mw_src_fill(self, seed, len);
	mw_rdma(_metadata, self, pair, qp, MRCT_WR_RDMA_WRITE, rkey, raddr,
		len, &p);
	mw_want(_metadata, what, p.status, MRCT_WC_SUCCESS);
	ASSERT_EQ(MRCT_WC_SUCCESS, p.status);
	memcpy(b->shadow + off, self->src.shadow, len);
	mw_same(_metadata, b, what);
}

/*
 * RDMA READ of @len bytes through @rkey at @raddr that must come from
 * @b[@off]: success, src[0, @len) holds them, the rest of src untouched.
 */
static void mw_read_ok(struct __test_metadata *_metadata,
		       struct _test_data_mw *self, uint32_t pair, uint32_t qp,
		       uint32_t rkey, uint64_t raddr, uint32_t len,
		       const struct mw_buf *b, size_t off, const char *what)
{
	struct mrct_qp_post p;

	mw_src_fill(self, 0x55, self->src.len);
	mw_rdma(_metadata, self, pair, qp, MRCT_WR_RDMA_READ, rkey, raddr,
		len, &p);
	mw_want(_metadata, what, p.status, MRCT_WC_SUCCESS);
	ASSERT_EQ(MRCT_WC_SUCCESS, p.status);
	memcpy(self->src.shadow, b->shadow + off, len);
	mw_same(_metadata, &self->src, what);
}

/*
 * An RDMA @opcode through @rkey that must be refused: REM_ACCESS_ERR, the
 * requester QP to ERR, and not a byte of @b (nor of src) changed.
 */
static void mw_rdma_refused(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, uint32_t pair,
			    uint32_t qp, uint32_t opcode, uint32_t rkey,
			    uint64_t raddr, uint32_t len,
			    const struct mw_buf *b, const char *what)
{
	struct mrct_qp_post p;

	mw_src_fill(self, 0x66, self->src.len);
	mw_rdma(_metadata, self, pair, qp, opcode, rkey, raddr, len, &p);
	mw_want(_metadata, what, p.status, MRCT_WC_REM_ACCESS_ERR);
	EXPECT_EQ(MRCT_QPS_ERR, p.qp_state[0]);
	mw_same(_metadata, b, what);
	mw_same(_metadata, &self->src, what);
}

/* WRITE and READ through @rkey refused, each on a fresh pair. */
static void mw_both_refused(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, uint32_t rkey,
			    uint64_t raddr, uint32_t len,
			    const struct mw_buf *b, const char *what)
{
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0),
			QP_B, MRCT_WR_RDMA_WRITE, rkey, raddr, len, b, what);
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0),
			QP_B, MRCT_WR_RDMA_READ, rkey, raddr, len, b, what);
}

/* Windows: helpers ------------------------------------------------------ */

static int mw_alloc(struct _test_data_mw *self, uint32_t pd, uint32_t type,
		    struct mrct_mw_alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->pd = pd;
	a->type = type;
	return mt_ioctl(self->fd, MRCT_MW_ALLOC, a);
}

static int mw_dealloc(struct _test_data_mw *self, uint32_t handle)
{
	struct mrct_mw_handle h = { .handle = handle };

	return mt_ioctl(self->fd, MRCT_MW_DEALLOC, &h);
}

/* Type 1 bind; *@rkey: the window's rkey afterwards, bound or not. */
static int mw_bind1(struct _test_data_mw *self, uint32_t handle, uint32_t mr,
		    uint64_t addr, uint64_t length, uint32_t access,
		    uint32_t *rkey)
{
	struct mrct_mw_bind b = {
		.handle = handle,
		.mr = mr,
		.addr = addr,
		.length = length,
		.access = access,
	};
	int err;

	err = mt_ioctl(self->fd, MRCT_MW_BIND, &b);
	*rkey = b.rkey;
	return err;
}

/* Type 1 bind that must succeed with a new variant of the same index. */
static uint32_t mw_bind1_ok(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, uint32_t handle,
			    uint32_t old, uint32_t mr, uint64_t addr,
			    uint64_t length, uint32_t access)
{
	uint32_t rkey;

	ASSERT_EQ(0, mw_bind1(self, handle, mr, addr, length, access, &rkey));
	EXPECT_EQ(old >> 8, rkey >> 8);
	EXPECT_NE(old, rkey);
	return rkey;
}

/* Post a Bind MW WR on QP @qp of @pair. */
static int mw_bind2(struct _test_data_mw *self, uint32_t pair, uint32_t qp,
		    uint32_t handle, uint32_t key_mode, uint32_t mr_lkey,
		    uint64_t addr, uint64_t length, uint32_t access,
		    struct mrct_mw_bind_wr *w)
{
	memset(w, 0, sizeof(*w));
	w->pair = pair;
	w->qp = qp;
	w->handle = handle;
	w->key_mode = key_mode;
	w->mr_lkey = mr_lkey;
	w->addr = addr;
	w->length = length;
	w->access = access;
	return mt_ioctl(self->fd, MRCT_MW_BIND_WR, w);
}

/* Type 2 bind that must succeed; returns the new rkey. */
static uint32_t mw_bind2_ok(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, uint32_t pair,
			    uint32_t handle, uint32_t key_mode,
			    uint32_t mr_lkey, uint64_t addr, uint64_t length,
			    uint32_t access)
{
	struct mrct_mw_bind_wr w;

	ASSERT_EQ(0, mw_bind2(self, pair, QP_A, handle, key_mode, mr_lkey,
			      addr, length, access, &w));
	ASSERT_EQ(0, w.post_err);
	mw_want(_metadata, "Bind MW", w.status, MRCT_WC_SUCCESS);
	ASSERT_EQ(MRCT_WC_SUCCESS, w.status);
	EXPECT_EQ(MRCT_QPS_RTS, w.qp_state[0]);
	EXPECT_EQ(w.mw_rkey, w.rkey);
	return w.rkey;
}

/*
 * A Bind MW WR that must be refused: MW_BIND_ERR, QP to ERR, the window's
 * rkey kept. Returns the rkey the refused WR carried.
 */
static uint32_t mw_bind2_refused(struct __test_metadata *_metadata,
				 struct _test_data_mw *self, uint32_t handle,
				 uint32_t old, uint32_t mr_lkey, uint64_t addr,
				 uint64_t length, uint32_t access,
				 const char *what)
{
	struct mrct_mw_bind_wr w;

	ASSERT_EQ(0, mw_bind2(self, mw_new_pair(_metadata, self, 0), QP_A,
			      handle, MRCT_MW_KEY_NEXT, mr_lkey, addr, length,
			      access, &w));
	ASSERT_EQ(0, w.post_err);
	mw_want(_metadata, what, w.status, MRCT_WC_MW_BIND_ERR);
	EXPECT_EQ(MRCT_QPS_ERR, w.qp_state[0]);
	EXPECT_EQ(old, w.rkey);
	return w.mw_rkey;
}

/* LOCAL_INV (on QP A) or Send with Invalidate (from QP B) of @key. */
static int mw_inv(struct _test_data_mw *self, uint32_t pair, uint32_t opcode,
		  uint32_t key, struct mrct_frwr_inv *i)
{
	memset(i, 0, sizeof(*i));
	i->pair = pair;
	i->opcode = opcode;
	i->key = key;
	if (opcode == MRCT_WR_SEND_WITH_INV) {
		i->qp = QP_B;
		i->flags = MRCT_POST_WAIT_RECV;
	}
	return mt_ioctl(self->fd, MRCT_FRWR_INV, i);
}

static void mw_local_inv_ok(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, uint32_t pair,
			    uint32_t key)
{
	struct mrct_frwr_inv i;

	ASSERT_EQ(0, mw_inv(self, pair, MRCT_WR_LOCAL_INV, key, &i));
	ASSERT_EQ(0, i.post_err);
	mw_want(_metadata, "LOCAL_INV", i.status, MRCT_WC_SUCCESS);
	EXPECT_EQ(MRCT_QPS_RTS, i.qp_state[0]);
}

static void mw_local_inv_refused(struct __test_metadata *_metadata,
				 struct _test_data_mw *self, uint32_t key,
				 const char *what)
{
	struct mrct_frwr_inv i;

	ASSERT_EQ(0, mw_inv(self, mw_new_pair(_metadata, self, 0),
			    MRCT_WR_LOCAL_INV, key, &i));
	ASSERT_EQ(0, i.post_err);
	mw_want(_metadata, what, i.status, MRCT_WC_LOC_PROT_ERR);
	EXPECT_EQ(MRCT_QPS_ERR, i.qp_state[0]);
}

/* Item 24 ---------------------------------------------------------------- */

/*
 * Dereg of an MR with a type 1 window bound: -EBUSY, the MR still
 * registered and the window still working; after a zero-length bind
 * (unbind) the dereg succeeds.
 */
MW_TEST(dereg_busy_type1_unbind)
{
	struct mrct_mw_alloc a;
	struct mw_buf m;
	uint32_t rkey;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 4 * PAGE, MR_IOVA(0),
			    MR_ACCESS | MWB, &m));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a));
	rkey = mw_bind1_ok(_metadata, self, a.handle, a.rkey, m.handle,
			   m.iova + PAGE, PAGE, RW | RR);
	EXPECT_EQ(-EBUSY, mw_dereg(self->fd, &m));
	mw_write_ok(_metadata, self, self->pair, QP_B, rkey, m.iova + PAGE,
		    PAGE, &m, PAGE, "WRITE through the window after -EBUSY");
	mw_write_ok(_metadata, self, self->pair, QP_B, m.key, m.iova, 64, &m,
		    0, "WRITE through the MR after -EBUSY");

	mw_bind1_ok(_metadata, self, a.handle, rkey, 0, 0, 0, 0);
	EXPECT_EQ(0, mw_dereg(self->fd, &m));
	EXPECT_EQ(0, mw_dealloc(self, a.handle));
}

/* The same, made free by deallocating the window. */
MW_TEST(dereg_busy_type1_dealloc)
{
	struct mrct_mw_alloc a;
	struct mw_buf m;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 4 * PAGE, MR_IOVA(0),
			    MR_ACCESS | MWB, &m));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a));
	mw_bind1_ok(_metadata, self, a.handle, a.rkey, m.handle, m.iova,
		    4 * PAGE, RR);
	EXPECT_EQ(-EBUSY, mw_dereg(self->fd, &m));
	EXPECT_EQ(0, mw_dealloc(self, a.handle));
	EXPECT_EQ(-ENOENT, mw_dealloc(self, a.handle));
	EXPECT_EQ(0, mw_dereg(self->fd, &m));
}

/* A type 2 window: -EBUSY until a LOCAL_INV frees the window. */
MW_TEST(dereg_busy_type2_inv)
{
	struct mrct_mw_alloc a;
	struct mw_buf m;
	uint32_t rkey;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 4 * PAGE, MR_IOVA(0),
			    MR_ACCESS | MWB, &m));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a));
	rkey = mw_bind2_ok(_metadata, self, self->pair, a.handle,
			   MRCT_MW_KEY_NEXT, m.key, m.iova, 2 * PAGE, RW);
	EXPECT_EQ(-EBUSY, mw_dereg(self->fd, &m));
	mw_local_inv_ok(_metadata, self, self->pair, rkey);
	EXPECT_EQ(0, mw_dereg(self->fd, &m));
}

/*
 * LOCAL_INV and Send with Invalidate of a fast-reg MR with a type 2
 * window bound: refused (the MR stays VALID and usable, through its key
 * and the window); after the window is invalidated they succeed.
 */
MW_TEST(local_inv_frwr_with_window_refused)
{
	uint32_t other, key, rkey;
	struct mrct_frwr_alloc fa = {
		.pd = 0, .max_pages = 4, .nchunks = 4, .chunk_shift = 12,
	};
	struct mrct_frwr_reg r = {};
	struct mrct_frwr_xfer x;
	struct mrct_frwr_free f = {};
	struct mrct_qp_recv rv = {};
	struct mrct_frwr_inv i;
	struct mrct_mw_alloc a;

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_ALLOC, &fa));
	r.handle = fa.handle;
	r.pair = self->pair;
	r.access = MR_ACCESS | MWB;
	r.flags = MRCT_FRWR_KEY_NEXT;
	r.stride = 1;
	r.length = 4 * PAGE;
	r.page_size = PAGE;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_REG, &r));
	ASSERT_EQ(0, r.post_err);
	mw_want(_metadata, "REG_MR", r.status, MRCT_WC_SUCCESS);
	key = r.rkey;

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a));
	rkey = mw_bind2_ok(_metadata, self, self->pair, a.handle,
			   MRCT_MW_KEY_NEXT, key, r.iova, PAGE, RW | RR);
	mw_local_inv_refused(_metadata, self, key,
			     "LOCAL_INV of a fast-reg MR with a window bound");

	other = mw_new_pair(_metadata, self, 0);
	rv.handle = other;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &rv));
	ASSERT_EQ(0, rv.post_err);
	ASSERT_EQ(0, mw_inv(self, other, MRCT_WR_SEND_WITH_INV, key, &i));
	ASSERT_EQ(0, i.post_err);
	mw_want(_metadata, "SEND_WITH_INV of a fast-reg MR with a window bound",
		i.status, MRCT_WC_REM_INV_REQ_ERR);

	/* Still VALID: data through the window (to QP A) and the key. */
	memset(&x, 0, sizeof(x));
	x.handle = fa.handle;
	x.pair = self->pair;
	x.qp = QP_B;
	x.dir = MRCT_FRWR_WRITE;
	x.flags = MRCT_FRWR_XFER_RAW_KEY;
	x.key = rkey;
	x.length = PAGE;
	x.seed = 0x21;
	x.seed_old = 0x21 ^ 0x5a;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_XFER, &x));
	mw_want(_metadata, "WRITE through the window", x.status,
		MRCT_WC_SUCCESS);
	EXPECT_EQ(PAGE, x.eq_new);
	x.key = key;
	x.length = 4 * PAGE;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_XFER, &x));
	mw_want(_metadata, "WRITE through the MR", x.status, MRCT_WC_SUCCESS);
	EXPECT_EQ(4 * PAGE, x.eq_new);

	/* The window goes; then the MR's key invalidates. */
	mw_local_inv_ok(_metadata, self, self->pair, rkey);
	mw_local_inv_ok(_metadata, self, self->pair, key);
	x.key = rkey;
	x.length = PAGE;
	x.seed = 0x22;
	x.seed_old = 0x22 ^ 0x5a;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_XFER, &x));
	mw_want(_metadata, "WRITE through the invalidated window", x.status,
		MRCT_WC_REM_ACCESS_ERR);
	EXPECT_EQ(PAGE, x.eq_old);
	f.handle = fa.handle;
	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_FRWR_FREE, &f));
}

/* Item 25 ---------------------------------------------------------------- */

/*
 * Type 1: a zero-length bind unbinds; the old rkey is refused for WRITE
 * and READ, and so is the new one (the window is Free), the MR untouched.
 */
MW_TEST(type1_zero_length_bind_invalidates)
{
	uint64_t addr = self->tgt.iova + 0x1800;
	uint32_t rkey, unbound;
	struct mrct_mw_alloc a;

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a));
	rkey = mw_bind1_ok(_metadata, self, a.handle, a.rkey, self->tgt.handle,
			   addr, 0x3000, RW | RR);
	mw_write_ok(_metadata, self, self->pair, QP_B, rkey, addr, 0x3000,
		    &self->tgt, 0x1800, "WRITE through the window");
	unbound = mw_bind1_ok(_metadata, self, a.handle, rkey, 0, 0, 0, 0);
	mw_both_refused(_metadata, self, rkey, addr, 0x100, &self->tgt,
			"RDMA through the rkey of an unbound type 1 window");
	mw_both_refused(_metadata, self, unbound, addr, 0x100, &self->tgt,
			"RDMA through an unbound type 1 window's new rkey");
	/* The MR itself is untouched by all this. */
	mw_write_ok(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
		    self->tgt.key, addr, 0x100, &self->tgt, 0x1800,
		    "WRITE through the MR");
}

/* A type 2 window bound on the pair's QP A, with a WRITE through it. */
static uint32_t mw_type2_bound(struct __test_metadata *_metadata,
			       struct _test_data_mw *self, uint32_t *handle)
{
	struct mrct_mw_alloc a;
	uint32_t rkey;

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a));
	*handle = a.handle;
	rkey = mw_bind2_ok(_metadata, self, self->pair, a.handle,
			   MRCT_MW_KEY_NEXT, self->tgt.key,
			   self->tgt.iova + PAGE, 2 * PAGE, RW | RR);
	EXPECT_NE(a.rkey, rkey);
	EXPECT_EQ(a.rkey >> 8, rkey >> 8);
	mw_write_ok(_metadata, self, self->pair, QP_B, rkey,
		    self->tgt.iova + PAGE, 2 * PAGE, &self->tgt, PAGE,
		    "WRITE through the type 2 window");
	return rkey;
}

MW_TEST(type2_local_inv_invalidates)
{
	uint32_t handle, rkey;

	rkey = mw_type2_bound(_metadata, self, &handle);
	mw_local_inv_ok(_metadata, self, self->pair, rkey);
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE,
			rkey, self->tgt.iova + PAGE, PAGE, &self->tgt,
			"WRITE after LOCAL_INV of the window");
}

MW_TEST(type2_send_with_inv_invalidates)
{
	struct mrct_qp_recv rv = { .qp = QP_A };
	struct mrct_frwr_inv i;
	uint32_t handle, rkey;

	rkey = mw_type2_bound(_metadata, self, &handle);
	rv.handle = self->pair;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &rv));
	ASSERT_EQ(0, rv.post_err);
	ASSERT_EQ(0, mw_inv(self, self->pair, MRCT_WR_SEND_WITH_INV, rkey,
			    &i));
	ASSERT_EQ(0, i.post_err);
	mw_want(_metadata, "SEND_WITH_INV of the window", i.status,
		MRCT_WC_SUCCESS);
	mw_want(_metadata, "its receive", i.recv_status, MRCT_WC_SUCCESS);
	EXPECT_TRUE(i.recv_wc_flags & MRCT_WC_WITH_INVALIDATE);
	EXPECT_EQ(rkey, i.recv_inv_rkey);
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_READ,
			rkey, self->tgt.iova + PAGE, PAGE, &self->tgt,
			"READ after Send with Invalidate of the window");
}

MW_TEST(type2_dealloc_invalidates)
{
	uint32_t handle, rkey;

	rkey = mw_type2_bound(_metadata, self, &handle);
	EXPECT_EQ(0, mw_dealloc(self, handle));
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE,
			rkey, self->tgt.iova + PAGE, PAGE, &self->tgt,
			"WRITE after dealloc of the window");
	/* Nothing holds the MR any more. */
	EXPECT_EQ(0, mw_dereg(self->fd, &self->tgt));
}

/* IBA knows types 1 and 2 only. */
MW_TEST(type3_and_0_rejected)
{
	static const uint32_t bad[] = { 0, 3, 4, 0xffffffffU };
	struct mrct_mw_alloc a;
	uint32_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, mw_alloc(self, 0, bad[i], &a)) {
			TH_LOG("window type %u", bad[i]);
		}
	}
	EXPECT_EQ(0, mw_alloc(self, 1, MRCT_MW_TYPE_1, &a));
	EXPECT_EQ(0, mw_alloc(self, 1, MRCT_MW_TYPE_2, &a));
}

/*
 * The type rules around binds and invalidation: a type 2 window is not
 * bound by mrc_bind_mw(), nor with length 0, nor again while bound (the
 * live binding unchanged); a type 1 window is not zero-based and not
 * invalidated by LOCAL_INV (o10-37.2.26).
 */
MW_TEST(type_rules)
{
	uint32_t h1, h2, rkey1, rkey2, k;
	struct mrct_mw_alloc a;

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a));
	h1 = a.handle;
	EXPECT_EQ(-EINVAL, mw_bind1(self, h1, self->tgt.handle, self->tgt.iova,
				    PAGE, RW | ZB, &k));
	EXPECT_EQ(a.rkey, k);
	rkey1 = mw_bind1_ok(_metadata, self, h1, a.rkey, self->tgt.handle,
			    self->tgt.iova, PAGE, RW | RR);
	mw_local_inv_refused(_metadata, self, rkey1,
			     "LOCAL_INV of a type 1 window");
	mw_write_ok(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
		    rkey1, self->tgt.iova, PAGE, &self->tgt, 0,
		    "WRITE through the type 1 window after the LOCAL_INV");

	rkey2 = mw_type2_bound(_metadata, self, &h2);
	EXPECT_EQ(-EINVAL, mw_bind1(self, h2, self->tgt.handle, self->tgt.iova,
				    PAGE, RW, &k));
	EXPECT_EQ(rkey2, k);
	mw_bind2_refused(_metadata, self, h2, rkey2, self->tgt.key,
			 self->tgt.iova, PAGE, RW,
			 "Bind MW of a bound type 2 window");
	mw_write_ok(_metadata, self, self->pair, QP_B, rkey2,
		    self->tgt.iova + PAGE, 2 * PAGE, &self->tgt, PAGE,
		    "WRITE through the type 2 window after the refused bind");
	mw_local_inv_ok(_metadata, self, self->pair, rkey2);
	mw_bind2_refused(_metadata, self, h2, rkey2, self->tgt.key,
			 self->tgt.iova, 0, RW,
			 "zero-length Bind MW of a type 2 window");
}

/* Item 26 ---------------------------------------------------------------- */

/*
 * A Bind MW WR whose rkey has the window's current key portion (the
 * variant it has, not a new one) is allowed, first bind and rebind after
 * an invalidation alike.
 */
MW_TEST(bind_same_key_allowed)
{
	struct mrct_mw_alloc a;
	uint32_t rkey;
	int n;

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a));
	for (n = 0; n < 2; n++) {
		rkey = mw_bind2_ok(_metadata, self, self->pair, a.handle,
				   MRCT_MW_KEY_SAME, self->tgt.key,
				   self->tgt.iova, PAGE, RW | RR);
		EXPECT_EQ(a.rkey, rkey);
		mw_write_ok(_metadata, self, self->pair, QP_B, rkey,
			    self->tgt.iova + 0x10, 0x100, &self->tgt, 0x10,
			    "WRITE through the window bound with its own key");
		mw_read_ok(_metadata, self, self->pair, QP_B, rkey,
			   self->tgt.iova, PAGE, &self->tgt, 0,
			   "READ through the window bound with its own key");
		mw_local_inv_ok(_metadata, self, self->pair, rkey);
	}
}

/* Binds over an MR registered without MW_BIND: refused, both types. */
MW_TEST(bind_without_mw_bind_refused)
{
	struct mrct_mw_alloc a1, a2;
	struct mw_buf m;
	uint32_t k, wr_key;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 2 * PAGE, MR_IOVA(0), MR_ACCESS, &m));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a1));
	EXPECT_EQ(-EPERM, mw_bind1(self, a1.handle, m.handle, m.iova, PAGE,
				   RR, &k));
	EXPECT_EQ(a1.rkey, k);
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a2));
	wr_key = mw_bind2_refused(_metadata, self, a2.handle, a2.rkey, m.key,
				  m.iova, PAGE, RR,
				  "Bind MW over an MR without MW_BIND");
	mw_both_refused(_metadata, self, wr_key, m.iova, 0x40, &m,
			"RDMA through the refused type 2 bind's rkey");
	mw_both_refused(_metadata, self, a2.rkey, m.iova, 0x40, &m,
			"RDMA through the Free type 2 window");
	mw_both_refused(_metadata, self, a1.rkey, m.iova, 0x40, &m,
			"RDMA through the refused type 1 window");
}

/*
 * C10-72: the window, the MR and (type 2) the binding QP are of one PD. A
 * type 1 window of PD 1 does not bind to an MR of PD 0; a Bind MW WR of a
 * PD 0 window posted on a PD 1 QP is refused.
 */
MW_TEST(bind_other_pd_refused)
{
	struct mrct_mw_bind_wr w;
	struct mrct_mw_alloc a1, a2;
	uint32_t k;

	ASSERT_EQ(0, mw_alloc(self, 1, MRCT_MW_TYPE_1, &a1));
	EXPECT_EQ(-EPERM, mw_bind1(self, a1.handle, self->tgt.handle,
				   self->tgt.iova, PAGE, RW, &k));
	EXPECT_EQ(a1.rkey, k);
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a2));
	ASSERT_EQ(0, mw_bind2(self, mw_new_pair(_metadata, self, 1), QP_A,
			      a2.handle, MRCT_MW_KEY_NEXT, self->tgt.key,
			      self->tgt.iova, PAGE, RW, &w));
	ASSERT_EQ(0, w.post_err);
	mw_want(_metadata, "Bind MW on a QP of another PD", w.status,
		MRCT_WC_MW_BIND_ERR);
	EXPECT_EQ(MRCT_QPS_ERR, w.qp_state[0]);
	EXPECT_EQ(a2.rkey, w.rkey);
	mw_both_refused(_metadata, self, w.mw_rkey, self->tgt.iova, 0x40,
			&self->tgt, "RDMA through the refused bind's rkey");
}

/* Binds that do not lie inside the MR: refused, both types. */
MW_TEST(bind_beyond_mr_refused)
{
	const struct {
		uint64_t addr, length;
	} bad[] = {
		{ MR_IOVA(0) + 2 * PAGE - 0x100, 0x200 },	/* past the end */
		{ MR_IOVA(0) - 0x100, 0x200 },			/* before it */
		{ MR_IOVA(0), 2 * PAGE + 1 },			/* one too long */
		{ MR_IOVA(0) + 2 * PAGE, 1 },			/* just after */
		{ ~0ULL - 0xff, 0x200 },			/* wraps */
	};
	struct mrct_mw_alloc a1, a2;
	struct mw_buf m;
	uint32_t i, k;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 2 * PAGE, MR_IOVA(0),
			    MR_ACCESS | MWB, &m));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a1));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a2));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-ERANGE, mw_bind1(self, a1.handle, m.handle,
					    bad[i].addr, bad[i].length, RW,
					    &k)) {
			TH_LOG("type 1 bind [0x%llx, +0x%llx)",
			       (unsigned long long)bad[i].addr,
			       (unsigned long long)bad[i].length);
		}
		EXPECT_EQ(a1.rkey, k);
		mw_bind2_refused(_metadata, self, a2.handle, a2.rkey, m.key,
				 bad[i].addr, bad[i].length, RW,
				 "Bind MW beyond the MR");
	}
	/* The whole MR is inside. */
	k = mw_bind1_ok(_metadata, self, a1.handle, a1.rkey, m.handle, m.iova,
			2 * PAGE, RW);
	mw_write_ok(_metadata, self, self->pair, QP_B, k, m.iova, 2 * PAGE,
		    &m, 0, "WRITE over a window of the whole MR");
}

/*
 * C10-74: a window granting REMOTE_WRITE or REMOTE_ATOMIC needs an MR
 * with LOCAL_WRITE. A REMOTE_READ window over the same MR is fine, and
 * grants its own right: the MR has no REMOTE_READ of its own.
 */
MW_TEST(bind_rights_beyond_mr_refused)
{
	static const uint32_t bad[] = { RW, RA, RR | RW };
	struct mrct_mw_alloc a1, a2;
	struct mw_buf m;
	uint32_t i, k;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 2 * PAGE, MR_IOVA(0), MWB, &m));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a1));
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a2));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EPERM, mw_bind1(self, a1.handle, m.handle, m.iova,
					   PAGE, bad[i], &k)) {
			TH_LOG("type 1 bind with access 0x%x", bad[i]);
		}
		EXPECT_EQ(a1.rkey, k);
		mw_bind2_refused(_metadata, self, a2.handle, a2.rkey, m.key,
				 m.iova, PAGE, bad[i],
				 "Bind MW with rights the MR cannot back");
	}

	k = mw_bind1_ok(_metadata, self, a1.handle, a1.rkey, m.handle,
			m.iova + 0x100, 0x800, RR);
	mw_read_ok(_metadata, self, self->pair, QP_B, k, m.iova + 0x100,
		   0x800, &m, 0x100, "READ through a REMOTE_READ window");
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE,
			k, m.iova + 0x100, 0x10, &m,
			"WRITE through a REMOTE_READ window");
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
			MRCT_WR_RDMA_READ, m.key, m.iova + 0x100, 0x10, &m,
			"READ through the MR's own key (no REMOTE_READ)");
}

/* Type 2 windows and their QP ------------------------------------------- */

/*
 * A type 2 window serves remote accesses on the QP that bound it only:
 * from its peer (responder: that QP) it works; to the other QP of the
 * pair, or on another pair, REM_ACCESS_ERR; a device access on no QP is
 * refused too.
 */
MW_TEST(type2_other_qp_refused)
{
	uint32_t handle, rkey, other;
	struct mrct_xfer x = {};
	uint8_t byte = 0;

	rkey = mw_type2_bound(_metadata, self, &handle);
	mw_read_ok(_metadata, self, self->pair, QP_B, rkey,
		   self->tgt.iova + PAGE, 2 * PAGE, &self->tgt, PAGE,
		   "READ through the window on its QP");
	other = mw_new_pair(_metadata, self, 0);
	mw_rdma_refused(_metadata, self, other, QP_B, MRCT_WR_RDMA_WRITE, rkey,
			self->tgt.iova + PAGE, PAGE, &self->tgt,
			"WRITE through the window on another pair's QP");
	mw_rdma_refused(_metadata, self, self->pair, QP_A, MRCT_WR_RDMA_WRITE,
			rkey, self->tgt.iova + PAGE, PAGE, &self->tgt,
			"WRITE through the window to the other QP of its pair");

	x.iova = self->tgt.iova + PAGE;
	x.length = 1;
	x.ptr = (uintptr_t)&byte;
	x.key = rkey;
	x.flags = MRCT_XFER_REMOTE | MRCT_XFER_RAW_KEY;
	EXPECT_EQ(-EPERM, mt_ioctl(self->fd, MRCT_DEV_WRITE, &x));
	mw_same(_metadata, &self->tgt, "device write on no QP");
}

/*
 * A zero-based type 2 window: its addresses start at 0 whatever the MR's
 * iova; the MR's own addresses are outside it.
 */
MW_TEST(type2_zero_based)
{
	uint64_t base = self->tgt.iova + 0x1000;
	struct mrct_mw_alloc a;
	uint32_t rkey;

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a));
	rkey = mw_bind2_ok(_metadata, self, self->pair, a.handle,
			   MRCT_MW_KEY_NEXT, self->tgt.key, base, 0x2000,
			   RW | RR | ZB);
	mw_write_ok(_metadata, self, self->pair, QP_B, rkey, 0x100, 0x300,
		    &self->tgt, 0x1100, "WRITE at window offset 0x100");
	mw_write_ok(_metadata, self, self->pair, QP_B, rkey, 0x1f00, 0x100,
		    &self->tgt, 0x2f00, "WRITE at the window's last bytes");
	mw_read_ok(_metadata, self, self->pair, QP_B, rkey, 0, 0x2000,
		   &self->tgt, 0x1000, "READ of the whole window");
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE,
			rkey, base, 0x10, &self->tgt,
			"WRITE at the MR's address through a zero-based window");
}

/* Data through windows ---------------------------------------------------- */

/*
 * A type 1 window over an unaligned, multi-page piece of the MR moves the
 * MR's bytes at the right place both ways; accesses that leave it are
 * refused untouched; a rebind elsewhere retires the old rkey.
 */
MW_TEST(type1_window_data)
{
	uint64_t addr = self->tgt.iova + 0x1810;
	struct mrct_mw_alloc a;
	uint32_t rkey, moved;

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a));
	rkey = mw_bind1_ok(_metadata, self, a.handle, a.rkey, self->tgt.handle,
			   addr, 0x3000, RW | RR);
	mw_write_ok(_metadata, self, self->pair, QP_B, rkey, addr + 0x10,
		    0x2000, &self->tgt, 0x1820, "WRITE through the window");
	mw_write_ok(_metadata, self, self->pair, QP_A, rkey, addr + 0x2ff0,
		    0x10, &self->tgt, 0x1810 + 0x2ff0,
		    "WRITE of the window's last bytes, from QP A");
	mw_read_ok(_metadata, self, self->pair, QP_B, rkey, addr, 0x3000,
		   &self->tgt, 0x1810, "READ of the whole window");
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE,
			rkey, addr + 0x2f00, 0x101, &self->tgt,
			"WRITE one byte past the window");
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
			MRCT_WR_RDMA_READ, rkey, addr - 1, 0x10, &self->tgt,
			"READ from one byte before the window");

	moved = mw_bind1_ok(_metadata, self, a.handle, rkey, self->tgt.handle,
			    self->tgt.iova + 8 * PAGE, PAGE, RW);
	mw_both_refused(_metadata, self, rkey, addr, 0x10, &self->tgt,
			"RDMA through the rkey before the rebind");
	mw_write_ok(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
		    moved, self->tgt.iova + 8 * PAGE, PAGE, &self->tgt,
		    8 * PAGE, "WRITE through the rebound window");
}

/* A type 2 window over an SG_GAPS MR: window, KLM MR, local DMA key. */
static void mw_gaps_fill(struct __test_metadata *_metadata,
			 struct _test_data_mw *self, uint32_t handle,
			 uint8_t *shadow)
{
	struct mrct_gaps_buf gb = {
		.handle = handle,
		.length = MRCT_GAPS_BUF_SIZE,
	};
	size_t i;

	for (i = 0; i < MRCT_GAPS_BUF_SIZE; i++)
		shadow[i] = mw_bg(0x33, i);
	gb.ptr = (uintptr_t)shadow;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_GAPS_BUF_WRITE, &gb));
}

/* The SG_GAPS buffer holds what @shadow says. */
static void mw_gaps_same(struct __test_metadata *_metadata,
			 struct _test_data_mw *self, uint32_t handle,
			 const uint8_t *shadow, const char *what)
{
	static uint8_t got[MRCT_GAPS_BUF_SIZE];
	struct mrct_gaps_buf gb = {
		.handle = handle,
		.length = MRCT_GAPS_BUF_SIZE,
		.ptr = (uintptr_t)got,
	};
	size_t i;

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_GAPS_BUF_READ, &gb));
	for (i = 0; i < MRCT_GAPS_BUF_SIZE; i++)
		if (got[i] != shadow[i])
			break;
	if (i < MRCT_GAPS_BUF_SIZE)
		TH_LOG("%s: SG_GAPS buffer byte 0x%zx is 0x%02x, want 0x%02x",
		       what, i, got[i], shadow[i]);
	EXPECT_EQ(MRCT_GAPS_BUF_SIZE, i);
}

static int mw_gaps_reg(struct _test_data_mw *self, uint32_t handle,
		       uint32_t pair, uint32_t access,
		       const struct mrct_gaps_piece *pieces, uint32_t n,
		       struct mrct_gaps_reg *r)
{
	memset(r, 0, sizeof(*r));
	r->handle = handle;
	r->pair = pair;
	r->access = access;
	r->npieces = n;
	memcpy(r->pieces, pieces, n * sizeof(*pieces));
	return mt_ioctl(self->fd, MRCT_GAPS_REG, r);
}

/*
 * @len pattern bytes written at key offset @off of a registration of
 * @pieces: where they belong in the buffer, in @shadow.
 */
static void mw_gaps_expect(const struct mrct_gaps_piece *pieces, uint32_t n,
			   uint64_t off, const uint8_t *src, uint64_t len,
			   uint8_t *shadow)
{
	uint64_t pos = 0, take, at;
	uint32_t i;

	for (i = 0; i < n && len; i++) {
		if (off >= pos + pieces[i].length) {
			pos += pieces[i].length;
			continue;
		}
		at = off - pos;
		take = pieces[i].length - at;
		if (take > len)
			take = len;
		memcpy(shadow + pieces[i].offset + at, src, take);
		src += take;
		len -= take;
		off += take;
		pos += pieces[i].length;
	}
}

/* SG_GAPS ---------------------------------------------------------------- */

static const struct mrct_gaps_piece gaps_a[] = {
	{ 0x10, 0x100 },	/* unaligned */
	{ 0x300, 0x1234 },	/* crosses a page */
	{ 0x2000, 0x1 },	/* one byte */
	{ 0x2100, 0x2f00 },	/* several pages, ends on a boundary */
	{ 0x9003, 0x7 },
	{ 0x5000, 0x800 },	/* before the previous one in the buffer */
};

static const struct mrct_gaps_piece gaps_b[] = {
	{ 0xe000, 0x1000 },
	{ 0x100, 0x10 },
	{ 0x7ff0, 0x20 },	/* across a page boundary */
};

static uint32_t mw_gaps_total(const struct mrct_gaps_piece *p, uint32_t n)
{
	uint32_t i, total = 0;

	for (i = 0; i < n; i++)
		total += p[i].length;
	return total;
}

/*
 * REG_MR of @n pieces on @handle; a WRITE of the whole registration
 * through the rkey lands exactly in the pieces, in order; a READ gives the
 * same bytes back; after LOCAL_INV the key is refused, the buffer
 * untouched.
 */
static void mw_gaps_cycle(struct __test_metadata *_metadata,
			  struct _test_data_mw *self, uint32_t handle,
			  const struct mrct_gaps_piece *pieces, uint32_t n,
			  uint8_t *shadow)
{
	uint32_t total = mw_gaps_total(pieces, n);
	struct mrct_qp_post p;
	struct mrct_gaps_reg r;
	size_t i, off;

	ASSERT_EQ(0, mw_gaps_reg(self, handle, self->pair, MR_ACCESS, pieces,
				 n, &r));
	EXPECT_EQ(n, r.map_ret);
	ASSERT_EQ(0, r.post_err);
	mw_want(_metadata, "SG_GAPS REG_MR", r.status, MRCT_WC_SUCCESS);
	ASSERT_EQ(MRCT_WC_SUCCESS, r.status);
	EXPECT_EQ(total, r.length);

	mw_src_fill(self, 0x44 + n, total);
	mw_rdma(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE, r.rkey,
		r.iova, total, &p);
	mw_want(_metadata, "WRITE through the SG_GAPS key", p.status,
		MRCT_WC_SUCCESS);
	mw_gaps_expect(pieces, n, 0, self->src.shadow, total, shadow);
	mw_gaps_same(_metadata, self, handle, shadow, "WRITE of every piece");

	/* A piece of the middle, across piece boundaries. */
	mw_src_fill(self, 0x50 + n, total / 2);
	mw_rdma(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE, r.rkey,
		r.iova + total / 4, total / 2, &p);
	mw_want(_metadata, "WRITE into the middle", p.status, MRCT_WC_SUCCESS);
	mw_gaps_expect(pieces, n, total / 4, self->src.shadow, total / 2,
		       shadow);
	mw_gaps_same(_metadata, self, handle, shadow, "WRITE into the middle");

	mw_src_fill(self, 0x11, self->src.len);
	mw_rdma(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_READ, r.rkey,
		r.iova, total, &p);
	mw_want(_metadata, "READ through the SG_GAPS key", p.status,
		MRCT_WC_SUCCESS);
	for (i = 0, off = 0; i < n; off += pieces[i].length, i++)
		memcpy(self->src.shadow + off, shadow + pieces[i].offset,
		       pieces[i].length);
	mw_same(_metadata, &self->src, "READ of every piece");

	mw_local_inv_ok(_metadata, self, self->pair, r.rkey);
	mw_src_fill(self, 0x12, total);
	mw_rdma(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE, r.rkey,
		r.iova, total, &p);
	mw_want(_metadata, "WRITE after LOCAL_INV", p.status,
		MRCT_WC_REM_ACCESS_ERR);
	mw_gaps_same(_metadata, self, handle, shadow, "WRITE after LOCAL_INV");
	self->pair = mw_new_pair(_metadata, self, 0);
}

MW_TEST(sg_gaps_reg_write)
{
	static uint8_t shadow[MRCT_GAPS_BUF_SIZE];
	struct mrct_gaps_alloc ga = { .pd = 0, .max_sg = 8 };
	struct mrct_mw_handle h = {};

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_GAPS_ALLOC, &ga));
	EXPECT_EQ(1, ga.sg_gaps_cap);
	EXPECT_EQ(ga.lkey, ga.rkey);
	mw_gaps_fill(_metadata, self, ga.handle, shadow);
	mw_gaps_cycle(_metadata, self, ga.handle, gaps_a, ARRAY_SIZE(gaps_a),
		      shadow);
	mw_gaps_cycle(_metadata, self, ga.handle, gaps_b, ARRAY_SIZE(gaps_b),
		      shadow);
	h.handle = ga.handle;
	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_GAPS_FREE, &h));
}

/*
 * A type 2 window over part of an SG_GAPS registration: the walk goes
 * window, KLM MR, local DMA key; the bytes land in the right pieces.
 */
MW_TEST(sg_gaps_window)
{
	static uint8_t shadow[MRCT_GAPS_BUF_SIZE];
	struct mrct_gaps_alloc ga = { .pd = 0, .max_sg = 8 };
	struct mrct_mw_alloc a;
	struct mrct_gaps_reg r;
	struct mrct_qp_post p;
	uint32_t total, rkey;

	total = mw_gaps_total(gaps_a, ARRAY_SIZE(gaps_a));
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_GAPS_ALLOC, &ga));
	mw_gaps_fill(_metadata, self, ga.handle, shadow);
	ASSERT_EQ(0, mw_gaps_reg(self, ga.handle, self->pair, MR_ACCESS | MWB,
				 gaps_a, ARRAY_SIZE(gaps_a), &r));
	mw_want(_metadata, "SG_GAPS REG_MR", r.status, MRCT_WC_SUCCESS);
	ASSERT_EQ(MRCT_WC_SUCCESS, r.status);
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a));
	rkey = mw_bind2_ok(_metadata, self, self->pair, a.handle,
			   MRCT_MW_KEY_NEXT, r.rkey, r.iova + 0x80, total - 0x100,
			   RW | ZB);
	mw_src_fill(self, 0x71, total - 0x100);
	mw_rdma(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE, rkey, 0,
		total - 0x100, &p);
	mw_want(_metadata, "WRITE through the window", p.status,
		MRCT_WC_SUCCESS);
	mw_gaps_expect(gaps_a, ARRAY_SIZE(gaps_a), 0x80, self->src.shadow,
		       total - 0x100, shadow);
	mw_gaps_same(_metadata, self, ga.handle, shadow,
		     "WRITE through a window over an SG_GAPS MR");
	/* The window holds the MR: no LOCAL_INV until it goes. */
	mw_local_inv_refused(_metadata, self, r.rkey,
			     "LOCAL_INV of an SG_GAPS MR with a window bound");
	EXPECT_EQ(0, mw_dealloc(self, a.handle));
	mw_local_inv_ok(_metadata, self, self->pair, r.rkey);
}

/* Indirect keys ---------------------------------------------------------- */

static int mw_ind(struct _test_data_mw *self, uint32_t pd, uint64_t iova,
		  uint32_t access, const struct mrct_ind_range *ranges,
		  uint32_t n, struct mrct_ind_reg *r)
{
	memset(r, 0, sizeof(*r));
	r->pd = pd;
	r->iova = iova;
	r->access = access;
	r->nranges = n;
	memcpy(r->ranges, ranges, n * sizeof(*ranges));
	return mt_ioctl(self->fd, MRCT_IND_REG, r);
}

static int mw_ind_dereg(struct _test_data_mw *self, uint32_t handle)
{
	struct mrct_mw_handle h = { .handle = handle };

	return mt_ioctl(self->fd, MRCT_IND_DEREG, &h);
}

/*
 * WRITE @len bytes at indirect offset @off, split over @n ranges naming
 * @bufs[i] (range i of buffer i, at @ranges[i].addr): success and every
 * buffer exactly as expected.
 */
static void mw_ind_write_ok(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, uint32_t pair,
			    uint32_t key, uint64_t iova,
			    const struct mrct_ind_range *ranges,
			    struct mw_buf **bufs, uint32_t n, uint64_t off,
			    uint32_t len, const char *what)
{
	static uint32_t seed = 0x30;
	uint64_t pos = 0, at, take, done = 0;
	struct mrct_qp_post p;
	uint32_t i;

	mw_src_fill(self, ++seed, len);
	mw_rdma(_metadata, self, pair, QP_B, MRCT_WR_RDMA_WRITE, key,
		iova + off, len, &p);
	mw_want(_metadata, what, p.status, MRCT_WC_SUCCESS);
	for (i = 0; i < n; pos += ranges[i].length, i++) {
		if (off + done >= pos + ranges[i].length || done == len)
			continue;
		at = off + done - pos;
		take = ranges[i].length - at;
		if (take > len - done)
			take = len - done;
		memcpy(bufs[i]->shadow + (ranges[i].addr - bufs[i]->iova) + at,
		       self->src.shadow + done, take);
		done += take;
	}
	for (i = 0; i < n; i++)
		mw_same(_metadata, bufs[i], what);
}

/*
 * An indirect key over three MRs: a WRITE of the whole key lands in the
 * three pieces, pieces of it across the joins too; a READ gives them back
 * in order; the device's local path (MRCT_DEV_READ) agrees; a zero-based
 * key over the same pieces works at address 0.
 */
MW_TEST(indirect_three_mrs)
{
	struct mrct_ind_range ranges[3];
	struct mw_buf m[3], *bufs[3];
	struct mrct_ind_reg r, z;
	struct mrct_xfer x = {};
	struct mrct_qp_post p;
	uint8_t got[0x100];
	uint32_t i, total;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, mw_reg(self->fd, 0, 4 * PAGE, MR_IOVA(i),
				    MR_ACCESS, &m[i]));
		bufs[i] = &m[i];
	}
	ranges[0] = (struct mrct_ind_range){ m[0].iova + 0x100, 0x1000,
					     m[0].key };
	ranges[1] = (struct mrct_ind_range){ m[1].iova + 0x2000, 0x800,
					     m[1].key };
	ranges[2] = (struct mrct_ind_range){ m[2].iova + 0x10, 0x1801,
					     m[2].key };
	total = 0x1000 + 0x800 + 0x1801;
	ASSERT_EQ(0, mw_ind(self, 0, IND_IOVA, MR_ACCESS, ranges, 3, &r));

	mw_ind_write_ok(_metadata, self, self->pair, r.key, IND_IOVA, ranges,
			bufs, 3, 0, total, "WRITE of the whole indirect key");
	mw_ind_write_ok(_metadata, self, self->pair, r.key, IND_IOVA, ranges,
			bufs, 3, 0xf00, 0xa00, "WRITE across both joins");
	mw_ind_write_ok(_metadata, self, self->pair, r.key, IND_IOVA, ranges,
			bufs, 3, total - 1, 1, "WRITE of the last byte");

	mw_src_fill(self, 0x7e, self->src.len);
	mw_rdma(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_READ, r.key,
		IND_IOVA, total, &p);
	mw_want(_metadata, "READ of the whole key", p.status, MRCT_WC_SUCCESS);
	memcpy(self->src.shadow, m[0].shadow + 0x100, 0x1000);
	memcpy(self->src.shadow + 0x1000, m[1].shadow + 0x2000, 0x800);
	memcpy(self->src.shadow + 0x1800, m[2].shadow + 0x10, 0x1801);
	mw_same(_metadata, &self->src, "READ of the whole indirect key");

	x.iova = IND_IOVA + 0xf80;
	x.length = sizeof(got);
	x.ptr = (uintptr_t)got;
	x.key = r.key;
	x.flags = MRCT_XFER_RAW_KEY;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_DEV_READ, &x));
	EXPECT_EQ(0, memcmp(got, self->src.shadow + 0xf80, sizeof(got)));

	ASSERT_EQ(0, mw_ind(self, 0, 0, MR_ACCESS | ZB, ranges, 3, &z));
	mw_ind_write_ok(_metadata, self, self->pair, z.key, 0, ranges, bufs, 3,
			0x17f0, 0x20, "WRITE at 0x17f0 of a zero-based key");
	/* Past the end of the key: refused, nothing moves. */
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE,
			r.key, IND_IOVA + total - 0x10, 0x11, &m[2],
			"WRITE past the indirect key's end");
	mw_same(_metadata, &m[0], "WRITE past the indirect key's end");
	mw_same(_metadata, &m[1], "WRITE past the indirect key's end");
	EXPECT_EQ(0, mw_ind_dereg(self, z.handle));
	EXPECT_EQ(0, mw_ind_dereg(self, r.handle));
}

/*
 * Nesting: an indirect key over an indirect key over ... to the
 * documented depth works and moves the bytes to the MR at the bottom; one
 * more level is refused -ELOOP. A level may mix an indirect key and an MR.
 */
MW_TEST(indirect_nesting_depth)
{
	struct mrct_ind_range rg[2];
	struct mrct_ind_reg r[INDIRECT_MAX_DEPTH + 1], mix;
	struct mw_buf m2, *bufs[2];
	uint32_t d, key;

	rg[0] = (struct mrct_ind_range){ self->tgt.iova + 0x2000, 0x3000,
					 self->tgt.key };
	key = self->tgt.key;
	for (d = 0; d < INDIRECT_MAX_DEPTH; d++) {
		ASSERT_EQ(0, mw_ind(self, 0, IND_IOVA + d * 0x100000ULL,
				    MR_ACCESS, rg, 1, &r[d])) {
			TH_LOG("indirect key of depth %u", d + 1);
		}
		key = r[d].key;
		rg[0] = (struct mrct_ind_range){
			IND_IOVA + d * 0x100000ULL, 0x3000, key };
	}
	EXPECT_EQ(-ELOOP, mw_ind(self, 0, IND_IOVA + d * 0x100000ULL,
				 MR_ACCESS, rg, 1, &r[d]));

	/* The deepest key reaches tgt[0x2000, 0x5000). */
	bufs[0] = &self->tgt;
	rg[0] = (struct mrct_ind_range){ self->tgt.iova + 0x2000, 0x3000,
					 self->tgt.key };
	mw_ind_write_ok(_metadata, self, self->pair, key,
			IND_IOVA + (d - 1) * 0x100000ULL, rg, bufs, 1, 0x10,
			0x2800, "WRITE through the deepest indirect key");
	mw_read_ok(_metadata, self, self->pair, QP_B, key,
		   IND_IOVA + (d - 1) * 0x100000ULL, 0x3000, &self->tgt,
		   0x2000, "READ through the deepest indirect key");

	/* Depth 2 key of an indirect key and a plain MR. */
	ASSERT_EQ(0, mw_reg(self->fd, 0, 2 * PAGE, MR_IOVA(0), MR_ACCESS, &m2));
	rg[0] = (struct mrct_ind_range){ IND_IOVA, 0x3000, r[0].key };
	rg[1] = (struct mrct_ind_range){ m2.iova + 0x40, 0x100, m2.key };
	ASSERT_EQ(0, mw_ind(self, 0, 0x4000000, MR_ACCESS, rg, 2, &mix));
	bufs[1] = &m2;
	rg[0] = (struct mrct_ind_range){ self->tgt.iova + 0x2000, 0x3000,
					 self->tgt.key };
	mw_ind_write_ok(_metadata, self, self->pair, mix.key, 0x4000000, rg,
			bufs, 2, 0x2f00, 0x200,
			"WRITE through a key of an indirect key and an MR");
	/* Deregistered from the top down, so nothing names a freed key. */
	EXPECT_EQ(0, mw_ind_dereg(self, mix.handle));
	for (d = INDIRECT_MAX_DEPTH; d-- > 0;)
		EXPECT_EQ(0, mw_ind_dereg(self, r[d].handle));
}

/*
 * An MR named by an indirect key may be deregistered (nothing holds it);
 * afterwards every access that reaches its piece fails without moving a
 * byte anywhere, while the other piece still works.
 */
MW_TEST(indirect_named_mr_deregistered)
{
	struct mrct_ind_range rg[2];
	struct mw_buf m[2], *bufs[2];
	struct mrct_ind_reg r;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 2 * PAGE, MR_IOVA(0), MR_ACCESS,
			    &m[0]));
	ASSERT_EQ(0, mw_reg(self->fd, 0, 2 * PAGE, MR_IOVA(1), MR_ACCESS,
			    &m[1]));
	rg[0] = (struct mrct_ind_range){ m[0].iova, 0x1000, m[0].key };
	rg[1] = (struct mrct_ind_range){ m[1].iova + 0x800, 0x1000, m[1].key };
	ASSERT_EQ(0, mw_ind(self, 0, IND_IOVA, MR_ACCESS, rg, 2, &r));
	bufs[0] = &m[0];
	bufs[1] = &m[1];
	mw_ind_write_ok(_metadata, self, self->pair, r.key, IND_IOVA, rg, bufs,
			2, 0, 0x2000, "WRITE before the dereg");

	ASSERT_EQ(0, mw_dereg(self->fd, &m[0]));
	mw_rdma_refused(_metadata, self, self->pair, QP_B, MRCT_WR_RDMA_WRITE,
			r.key, IND_IOVA, 0x2000, &m[1],
			"WRITE over both pieces after the dereg");
	mw_same(_metadata, &m[0], "WRITE over both pieces after the dereg");
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
			MRCT_WR_RDMA_READ, r.key, IND_IOVA + 0xff0, 0x20,
			&m[1], "READ across the join after the dereg");
	mw_ind_write_ok(_metadata, self, mw_new_pair(_metadata, self, 0),
			r.key, IND_IOVA, rg, bufs, 2, 0x1000, 0x1000,
			"WRITE of the surviving piece");
	mw_same(_metadata, &m[0], "WRITE of the surviving piece");
	EXPECT_EQ(0, mw_ind_dereg(self, r.handle));
}

/*
 * mrc_reg_indirect()'s refusals: another PD's MR (-EPERM), a right the
 * named MR lacks (-EPERM), a piece outside its MR (-ERANGE), a key not
 * live (-ENOKEY), a window's key or an empty piece (-EINVAL), MW_BIND
 * asked for (-EINVAL), no ranges (-EINVAL). And no window binds to an
 * indirect key.
 */
MW_TEST(indirect_refused)
{
	struct mrct_ind_range rg = { self->tgt.iova, PAGE, self->tgt.key };
	struct mrct_mw_bind b = {};
	struct mrct_mw_alloc a1, a2;
	struct mrct_ind_reg r;
	struct mw_buf other, ro;
	uint32_t k;

	ASSERT_EQ(0, mw_reg(self->fd, 1, PAGE, MR_IOVA(0), MR_ACCESS, &other));
	ASSERT_EQ(0, mw_reg(self->fd, 0, PAGE, MR_IOVA(1), LW | RR, &ro));

	rg.key = other.key;
	rg.addr = other.iova;
	EXPECT_EQ(-EPERM, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	/* On its own PD it is fine. */
	EXPECT_EQ(0, mw_ind(self, 1, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	rg.key = ro.key;
	rg.addr = ro.iova;
	EXPECT_EQ(-EPERM, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	EXPECT_EQ(0, mw_ind(self, 0, IND_IOVA, LW | RR, &rg, 1, &r));
	rg.addr = ro.iova + 1;
	EXPECT_EQ(-ERANGE, mw_ind(self, 0, IND_IOVA, LW | RR, &rg, 1, &r));
	rg = (struct mrct_ind_range){ self->tgt.iova, PAGE, self->tgt.key + 1 };
	EXPECT_EQ(-ENOKEY, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	rg.key = self->tgt.key;
	rg.length = 0;
	EXPECT_EQ(-EINVAL, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	rg.length = PAGE;
	EXPECT_EQ(-EINVAL, mw_ind(self, 0, IND_IOVA, MR_ACCESS | MWB, &rg, 1,
				  &r));
	EXPECT_EQ(-EINVAL, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 0, &r));

	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_1, &a1));
	k = mw_bind1_ok(_metadata, self, a1.handle, a1.rkey, self->tgt.handle,
			self->tgt.iova, PAGE, RR);
	rg.key = k;
	EXPECT_EQ(-EINVAL, mw_ind(self, 0, IND_IOVA, LW | RR, &rg, 1, &r));

	/* A window over an indirect key: refused, both types. */
	rg.key = self->tgt.key;
	ASSERT_EQ(0, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	b.handle = a1.handle;
	b.mr = r.handle;
	b.flags = MRCT_MW_BIND_INDIRECT;
	b.addr = IND_IOVA;
	b.length = PAGE;
	b.access = RR;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_MW_BIND, &b));
	EXPECT_EQ(k, b.rkey);
	ASSERT_EQ(0, mw_alloc(self, 0, MRCT_MW_TYPE_2, &a2));
	mw_bind2_refused(_metadata, self, a2.handle, a2.rkey, r.key, IND_IOVA,
			 PAGE, RR, "Bind MW over an indirect key");
}

/*
 * Rights are checked at every access, not only when an indirect key is
 * registered: the device checks the access's right against every key an
 * indirect key names (MRC_MKEY_F_NESTED_RIGHTS, windows.rst). So an
 * indirect key never grants a right that the MR it names has lost since.
 */

/* The rights of MR @b narrowed (or restored) in place: same key. */
static void mw_rereg_access(struct __test_metadata *_metadata,
			    struct _test_data_mw *self, const struct mw_buf *b,
			    uint32_t access)
{
	struct mrct_rereg rr = {
		.handle = b->handle,
		.flags = MRCT_REREG_ACCESS,
		.access = access,
	};

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_REREG, &rr));
	/* The named key must be the same, or a refusal proves nothing. */
	ASSERT_EQ(b->key, rr.info.lkey);
}

/*
 * (a) X with LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ; indirect key I over
 * X with REMOTE_WRITE, REMOTE_READ (and LOCAL_WRITE, which REMOTE_WRITE
 * requires). Before: WRITE and READ through I work.
 * X re-registered with LOCAL_WRITE only (same key): WRITE and READ through
 * I complete with REM_ACCESS_ERR, X's bytes and the READ's sink untouched.
 * X's rights restored: I works again (the check is made per access; I was
 * not torn down).
 */
MW_TEST(indirect_named_mr_rights_narrowed)
{
	struct mrct_ind_range rg;
	struct mw_buf x, *bufs[1] = { &x };
	struct mrct_ind_reg r;

	ASSERT_EQ(0, mw_reg(self->fd, 0, 2 * PAGE, MR_IOVA(0), MR_ACCESS, &x));
	rg = (struct mrct_ind_range){ x.iova + 0x100, 0x1000, x.key };
	ASSERT_EQ(0, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	mw_ind_write_ok(_metadata, self, self->pair, r.key, IND_IOVA, &rg,
			bufs, 1, 0x10, 0x800, "WRITE through I before the rereg");
	mw_read_ok(_metadata, self, self->pair, QP_B, r.key, IND_IOVA, 0x1000,
		   &x, 0x100, "READ through I before the rereg");

	/*
	 * READ first: X holds other bytes than the sink's fill, so a READ
	 * that went through shows in the sink (after a WRITE that went
	 * through, X would hold the very bytes of that fill).
	 */
	mw_rereg_access(_metadata, self, &x, LW);
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
			MRCT_WR_RDMA_READ, r.key, IND_IOVA, 0x800, &x,
			"READ through I after X lost REMOTE_READ");
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
			MRCT_WR_RDMA_WRITE, r.key, IND_IOVA, 0x800, &x,
			"WRITE through I after X lost REMOTE_WRITE");

	mw_rereg_access(_metadata, self, &x, MR_ACCESS);
	mw_ind_write_ok(_metadata, self, mw_new_pair(_metadata, self, 0),
			r.key, IND_IOVA, &rg, bufs, 1, 0x400, 0x400,
			"WRITE through I once X's rights are back");
	EXPECT_EQ(0, mw_ind_dereg(self, r.handle));
}

/* Requested keys: an index the cyclic allocator has not reached. */
#define MW_KEY(v)	(0xe800U << 8 | (v))

/*
 * Map and fill @b as mw_reg() does, with another background than an MR of
 * mw_reg() at the same @iova; register it at @key with MRCT_KEYS_REG.
 */
static int mw_keys_reg(int fd, size_t len, uint64_t iova, uint32_t access,
		       uint32_t key, struct mw_buf *b)
{
	struct mrct_keys_reg kr = {};
	int err;

	err = mw_map(len, iova, (uint32_t)(iova >> 28) + 1, b);
	if (err)
		return err;
	kr.addr = (uintptr_t)b->p;
	kr.length = len;
	kr.iova = iova;
	kr.access = access;
	kr.key = key;
	err = mt_ioctl(fd, MRCT_KEYS_REG, &kr);
	if (err)
		return err;
	b->handle = kr.handle;
	b->key = kr.key;
	return 0;
}

static int mw_keys_dereg(int fd, struct mw_buf *b)
{
	struct mrct_keys_handle h = { .handle = b->handle };

	return mt_ioctl(fd, MRCT_KEYS_DEREG, &h);
}

/*
 * (b) X registered at requested key K with LOCAL_WRITE, REMOTE_WRITE,
 * REMOTE_READ; indirect key I over K; X deregistered; Y registered at the
 * same K (variant included) with LOCAL_WRITE only. WRITE and READ through
 * I complete with REM_ACCESS_ERR: I's entry names a live key of its PD,
 * but Y grants neither right. Y's bytes, X's and the READ's sink are
 * untouched.
 */
MW_TEST(indirect_named_key_reused_without_rights)
{
	const uint32_t k = MW_KEY(0x3c);
	struct mrct_ind_range rg;
	struct mw_buf x, y, *bufs[1] = { &x };
	struct mrct_ind_reg r;

	ASSERT_EQ(0, mw_keys_reg(self->fd, 2 * PAGE, MR_IOVA(0), MR_ACCESS, k,
				 &x));
	ASSERT_EQ(k, x.key);
	rg = (struct mrct_ind_range){ x.iova + 0x200, 0x1000, k };
	ASSERT_EQ(0, mw_ind(self, 0, IND_IOVA, MR_ACCESS, &rg, 1, &r));
	mw_ind_write_ok(_metadata, self, self->pair, r.key, IND_IOVA, &rg,
			bufs, 1, 0, 0x1000, "WRITE through I over X");

	ASSERT_EQ(0, mw_keys_dereg(self->fd, &x));
	/* Same key and iova, so I's entry reaches Y's first bytes. */
	ASSERT_EQ(0, mw_keys_reg(self->fd, 2 * PAGE, MR_IOVA(0), LW, k, &y));
	ASSERT_EQ(k, y.key);
	/* READ first, as in indirect_named_mr_rights_narrowed. */
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
			MRCT_WR_RDMA_READ, r.key, IND_IOVA, 0x1000, &y,
			"READ through I from Y (LOCAL_WRITE only) at X's key");
	mw_rdma_refused(_metadata, self, mw_new_pair(_metadata, self, 0), QP_B,
			MRCT_WR_RDMA_WRITE, r.key, IND_IOVA, 0x1000, &y,
			"WRITE through I into Y (LOCAL_WRITE only) at X's key");
	mw_same(_metadata, &x, "X after its dereg");
	EXPECT_EQ(0, mw_ind_dereg(self, r.handle));
	EXPECT_EQ(0, mw_keys_dereg(self->fd, &y));
}

TEST_HARNESS_MAIN
