// SPDX-License-Identifier: GPL-2.0
/*
 * Requested keys and asynchronous registration over a loopback RC pair of
 * /dev/mrcore_test on vhca (issue 5, item 5): user memory registered
 * through mrcore's mrc_reg_mr() with a key this program chooses
 * (MRCT_KEYS_REG), synchronously and with mrc_reg_mr_async() completed
 * through MRCT_KEYS_WAIT, and then used as the rkey of RDMA WRITEs and
 * READs, so the device is seen to resolve exactly that key: the bytes land
 * in the registered buffer, and the same index with another variant is
 * refused with IB_WC_REM_ACCESS_ERR.
 *
 * Also: a taken index is -ENOKEY, index 0, an index past the device's
 * contexts and the local DMA key's index are -EINVAL (both synchronously,
 * for an asynchronous request too), a key is granted again after its MR
 * is gone, a request over unmapped memory is accepted and then completes
 * with -EFAULT, the RLIMIT_MEMLOCK charge is taken in the ioctl (before
 * the worker pins) and given back, and a request held pending
 * (MRCT_KEYS_HOLD) refuses dereg while closing its file waits for it and
 * then leaves nothing behind (keys_chardev.sh compares the device's key
 * count too). vhca only. The device is vhca0 unless MRCT_DEVICE names
 * another vhca device.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
#define QP_ACCESS	(LW | RW | RR)

#define BUF_LEN		(8 * PAGE)
#define SRC_IOVA	0x100000000ULL
#define KEY_IOVA	0x500000000ULL

/*
 * The keys asked for: an index far above what the cyclic allocator has
 * handed out by the time this runs (vhca has 65536 contexts by default),
 * with a variant of our choice. One index per test, so a failed test does
 * not hold the next one's.
 */
#define KEY_INDEX(n)	(0xf000U + (n))
#define KEY(n, v)	(KEY_INDEX(n) << 8 | (v))
#define VARIANT		0xa5

/* How long the close of a held request's file may take to get waiting. */
#define CLOSE_WAIT_S	60

static uint8_t keys_pat(uint32_t seed, size_t i)
{
	return (seed * 29 + i + (i >> 9)) & 0x7f;
}

/**
 * struct keys_buf - anonymous memory and its registration
 * @p: the memory
 * @len: bytes
 * @handle: MRCT_REG or MRCT_KEYS_REG handle; 0 when none
 * @key: lkey == rkey
 * @token: MRCT_KEYS_HOLD's token of the request; 0 when not held
 */
struct keys_buf {
	uint8_t *p;
	size_t len;
	uint32_t handle;
	uint32_t key;
	uint32_t token;
};

FIXTURE(keys)
{
	int fd;			/* -1: no vhca device, the case is skipped */
	uint32_t pair;		/* PD 0, QP_ACCESS */
	uint32_t dma_lkey;	/* the PD's local DMA key */
	struct keys_buf src;	/* MRCT_REG, LW: WRITE source, READ sink */
	struct keys_buf tgt;	/* the memory registered with a chosen key */
};

static int keys_map(size_t len, struct keys_buf *b)
{
	memset(b, 0, sizeof(*b));
	b->p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->p == MAP_FAILED)
		return -errno;
	memset(b->p, 0xff, len);
	b->len = len;
	return 0;
}

/* MRCT_KEYS_REG of @b with @key; the request's handle and key in @b. */
static int keys_reg(int fd, struct keys_buf *b, uint32_t key, uint32_t flags)
{
	struct mrct_keys_reg r = {
		.addr = (uintptr_t)b->p,
		.length = b->len,
		.iova = KEY_IOVA,
		.access = LW | RW | RR,
		.key = key,
		.flags = flags,
	};
	int err;

	err = mt_ioctl(fd, MRCT_KEYS_REG, &r);
	if (err)
		return err;
	b->handle = r.handle;
	b->key = flags & MRCT_KEYS_ASYNC ? 0 : r.key;
	b->token = r.token;
	return 0;
}

/* MRCT_KEYS_WAIT for up to @timeout_ms (0: whether it completed yet). */
static int keys_wait_ms(int fd, uint32_t handle, uint32_t timeout_ms,
			struct mrct_keys_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->handle = handle;
	w->timeout_ms = timeout_ms;
	return mt_ioctl(fd, MRCT_KEYS_WAIT, w);
}

static int keys_wait(int fd, uint32_t handle, struct mrct_keys_wait *w)
{
	return keys_wait_ms(fd, handle, MRCT_QP_WAIT_MS, w);
}

/* MRCT_KEYS_HOLD_STATE or MRCT_KEYS_RELEASE of @token: 0 or -errno. */
static int keys_hold(int fd, unsigned long req, uint32_t token,
		     uint32_t *state)
{
	struct mrct_keys_hold h = { .token = token };
	int err;

	err = mt_ioctl(fd, req, &h);
	*state = err ? 0 : h.state;
	return err;
}

static int keys_dereg(int fd, struct keys_buf *b)
{
	struct mrct_keys_handle h = { .handle = b->handle };
	int err;

	err = mt_ioctl(fd, MRCT_KEYS_DEREG, &h);
	if (!err)
		b->handle = 0;
	return err;
}

static uint64_t keys_pinned(int fd)
{
	struct mrct_counters c = {};

	if (mt_ioctl(fd, MRCT_COUNTERS, &c))
		return UINT64_MAX;
	return c.pinned_vm;
}

FIXTURE_SETUP(keys)
{
	struct mrct_qp_create qc;
	struct mrct_reg reg = {};

	self->fd = mt_fixture_open(_metadata);
	if (self->fd < 0)
		return;
	ASSERT_EQ(0, mt_pair(self->fd, 0, QP_ACCESS, 1, 0, &qc));
	if (!mt_fixture_vhca(_metadata, &self->fd, qc.flags))
		return;
	self->pair = qc.handle;
	self->dma_lkey = qc.local_dma_lkey;

	ASSERT_EQ(0, keys_map(BUF_LEN, &self->src));
	reg.addr = (uintptr_t)self->src.p;
	reg.length = BUF_LEN;
	reg.iova = SRC_IOVA;
	reg.access = LW;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_REG, &reg));
	self->src.handle = reg.handle;
	self->src.key = reg.info.lkey;
	ASSERT_EQ(0, keys_map(BUF_LEN, &self->tgt));
}

/* Closing the file deregisters everything and waits for pending requests. */
FIXTURE_TEARDOWN(keys)
{
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
}

/*
 * TEST_F whose body runs only when the fixture found a vhca device: 6.1's
 * harness runs the body after a SKIP in the setup. (struct _test_data_keys
 * is what FIXTURE_DATA(keys) names, spelled out so checkpatch reads it as
 * a type.)
 */
#define KEYS_TEST_TIMEOUT(name, timeout)				\
	static void kt_##name(struct __test_metadata *_metadata,	\
			      struct _test_data_keys *self);		\
	TEST_F_TIMEOUT(keys, name, timeout)				\
	{								\
		if (self->fd >= 0)					\
			kt_##name(_metadata, self);			\
	}								\
	static void kt_##name(struct __test_metadata *_metadata,	\
			      struct _test_data_keys *self)
#define KEYS_TEST(name)	KEYS_TEST_TIMEOUT(name, TEST_TIMEOUT_DEFAULT)

/* One RDMA @opcode of @len bytes between src[0] and @rkey at @raddr. */
static uint32_t keys_rdma(struct __test_metadata *_metadata,
			  struct _test_data_keys *self, uint32_t opcode,
			  uint32_t rkey, uint64_t raddr, uint32_t len)
{
	struct mrct_qp_post p = {};

	p.handle = self->pair;
	p.opcode = opcode;
	p.rkey = rkey;
	p.remote_addr = raddr;
	p.num_sge = 1;
	p.sge[0].addr = SRC_IOVA;
	p.sge[0].length = len;
	p.sge[0].lkey = self->src.key;
	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
	EXPECT_EQ(0, p.post_err);
	return p.status;
}

/*
 * Data through @key: a WRITE of a pattern that must land at tgt[@off],
 * every other byte of tgt untouched, then a READ of it back into src.
 */
static void keys_data_through(struct __test_metadata *_metadata,
			      struct _test_data_keys *self, uint32_t key,
			      uint32_t seed)
{
	const size_t off = PAGE + 100, len = 2 * PAGE;
	size_t i;

	for (i = 0; i < len; i++)
		self->src.p[i] = keys_pat(seed, i);
	ASSERT_EQ(MRCT_WC_SUCCESS,
		  keys_rdma(_metadata, self, MRCT_WR_RDMA_WRITE, key,
			    KEY_IOVA + off, len));
	for (i = 0; i < self->tgt.len; i++) {
		uint8_t want = i >= off && i < off + len ?
			       keys_pat(seed, i - off) : 0xff;

		if (self->tgt.p[i] != want) {
			TH_LOG("tgt byte 0x%zx is 0x%02x, want 0x%02x", i,
			       self->tgt.p[i], want);
			break;
		}
	}
	EXPECT_EQ(self->tgt.len, i);

	memset(self->src.p, 0, len);
	ASSERT_EQ(MRCT_WC_SUCCESS,
		  keys_rdma(_metadata, self, MRCT_WR_RDMA_READ, key,
			    KEY_IOVA + off, len));
	for (i = 0; i < len; i++)
		if (self->src.p[i] != keys_pat(seed, i))
			break;
	EXPECT_EQ(len, i);
}

/* Sync: the MR gets the key asked for, and the device resolves it. */
KEYS_TEST(sync_key_moves_data)
{
	ASSERT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(0, VARIANT), 0));
	EXPECT_EQ(KEY(0, VARIANT), self->tgt.key);
	keys_data_through(_metadata, self, KEY(0, VARIANT), 1);
	EXPECT_EQ(0, keys_dereg(self->fd, &self->tgt));
}

/* The index with another variant is not the key: refused, nothing moved. */
KEYS_TEST(other_variant_refused)
{
	size_t i;

	ASSERT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(1, VARIANT), 0));
	memset(self->src.p, 0x11, PAGE);
	EXPECT_EQ(MRCT_WC_REM_ACCESS_ERR,
		  keys_rdma(_metadata, self, MRCT_WR_RDMA_WRITE,
			    KEY(1, VARIANT + 1), KEY_IOVA, PAGE));
	for (i = 0; i < self->tgt.len; i++)
		if (self->tgt.p[i] != 0xff)
			break;
	EXPECT_EQ(self->tgt.len, i);
}

/* A taken index is -ENOKEY with any variant; free again after dereg. */
KEYS_TEST(taken_key_then_free)
{
	struct keys_buf other;

	ASSERT_EQ(0, keys_map(PAGE, &other));
	ASSERT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(2, VARIANT), 0));
	EXPECT_EQ(-ENOKEY, keys_reg(self->fd, &other, KEY(2, VARIANT), 0));
	EXPECT_EQ(-ENOKEY, keys_reg(self->fd, &other, KEY(2, 1), 0));
	EXPECT_EQ(-ENOKEY, keys_reg(self->fd, &other, KEY(2, VARIANT),
				    MRCT_KEYS_ASYNC));
	/* The MRCT_REG MR's key too: mrcore chose it, it is in use. */
	EXPECT_EQ(-ENOKEY, keys_reg(self->fd, &other, self->src.key, 0));

	EXPECT_EQ(0, keys_dereg(self->fd, &self->tgt));
	ASSERT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(2, VARIANT), 0));
	keys_data_through(_metadata, self, KEY(2, VARIANT), 2);
}

/* Keys that can never be asked for: refused in the call, sync or async. */
KEYS_TEST(bad_keys)
{
	const uint32_t bad[] = {
		VARIANT,		/* index 0 */
		1U << 24 | VARIANT,	/* far past vhca's contexts */
		0xffffffffU,
		self->dma_lkey,		/* the local DMA key's index */
		self->dma_lkey ^ 1,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, keys_reg(self->fd, &self->tgt, bad[i], 0));
		EXPECT_EQ(-EINVAL, keys_reg(self->fd, &self->tgt, bad[i],
					    MRCT_KEYS_ASYNC));
	}
}

/*
 * The local DMA key reaches every physical address: mrcore_test gives
 * user space none of its uses, as a device access, a send's SGE or a
 * receive's.
 */
KEYS_TEST(dma_lkey_not_for_user)
{
	uint8_t buf[64];
	struct mrct_xfer x = {
		.length = sizeof(buf),
		.ptr = (uintptr_t)buf,
		.key = self->dma_lkey,
		.flags = MRCT_XFER_RAW_KEY,
	};
	struct mrct_qp_recv r = {
		.handle = self->pair,
		.qp = 1,
		.num_sge = 1,
	};
	struct mrct_qp_post p = {
		.handle = self->pair,
		.opcode = MRCT_WR_SEND,
		.num_sge = 1,
	};

	EXPECT_EQ(-EPERM, mt_ioctl(self->fd, MRCT_DEV_READ, &x));
	EXPECT_EQ(-EPERM, mt_ioctl(self->fd, MRCT_DEV_WRITE, &x));
	r.sge[0].length = sizeof(buf);
	r.sge[0].lkey = self->dma_lkey;
	EXPECT_EQ(-EPERM, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &r));
	p.sge[0].length = sizeof(buf);
	p.sge[0].lkey = self->dma_lkey;
	EXPECT_EQ(-EPERM, mt_ioctl(self->fd, MRCT_QP_POST, &p));
}

/* Async: one completion, with the key asked for, which moves data. */
KEYS_TEST(async_key_moves_data)
{
	struct mrct_keys_wait w;

	ASSERT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(3, VARIANT),
			      MRCT_KEYS_ASYNC));
	ASSERT_EQ(0, keys_wait(self->fd, self->tgt.handle, &w));
	EXPECT_EQ(0, w.err);
	EXPECT_EQ(KEY(3, VARIANT), w.key);
	EXPECT_EQ(1, w.calls);
	keys_data_through(_metadata, self, KEY(3, VARIANT), 3);

	/* Asked again: still the one completion. */
	ASSERT_EQ(0, keys_wait(self->fd, self->tgt.handle, &w));
	EXPECT_EQ(1, w.calls);
	EXPECT_EQ(0, keys_dereg(self->fd, &self->tgt));
}

/*
 * Async over memory that is not mapped: the request is accepted (its
 * checks need no pages) and its completion carries -EFAULT; the handle
 * goes with it and the memlock charge is given back.
 */
KEYS_TEST(async_fault_through_completion)
{
	uint64_t pinned0 = keys_pinned(self->fd);
	struct mrct_keys_wait w;
	struct keys_buf hole;

	ASSERT_EQ(0, keys_map(BUF_LEN, &hole));
	ASSERT_EQ(0, munmap(hole.p, BUF_LEN));
	ASSERT_EQ(0, keys_reg(self->fd, &hole, KEY(4, VARIANT),
			      MRCT_KEYS_ASYNC));
	ASSERT_EQ(0, keys_wait(self->fd, hole.handle, &w));
	EXPECT_EQ(-EFAULT, w.err);
	EXPECT_EQ(1, w.calls);
	EXPECT_EQ(-ENOENT, keys_wait(self->fd, hole.handle, &w));
	EXPECT_EQ(pinned0, keys_pinned(self->fd));

	/* The key was never taken for good. */
	ASSERT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(4, VARIANT), 0));
}

/* The memlock charge is the caller's and is taken in the ioctl. */
KEYS_TEST(async_charge_in_caller)
{
	uint64_t pinned0 = keys_pinned(self->fd);
	struct mrct_keys_wait w;

	ASSERT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(5, VARIANT),
			      MRCT_KEYS_ASYNC));
	/* Charged to this process before the worker even pinned. */
	EXPECT_EQ(pinned0 + BUF_LEN / PAGE, keys_pinned(self->fd));
	ASSERT_EQ(0, keys_wait(self->fd, self->tgt.handle, &w));
	EXPECT_EQ(0, w.err);
	EXPECT_EQ(pinned0 + BUF_LEN / PAGE, keys_pinned(self->fd));
	EXPECT_EQ(0, keys_dereg(self->fd, &self->tgt));
	EXPECT_EQ(pinned0, keys_pinned(self->fd));
}

/**
 * struct keys_closer - a thread that closes the held request's file
 * @fd: the file
 * @releasing: __atomic; set by the test just before MRCT_KEYS_RELEASE
 * @closed: __atomic; set here once close() returned
 * @ret: close()'s result, 0 or -errno
 * @after_release: @releasing as read when close() returned
 */
struct keys_closer {
	int fd;
	bool releasing;
	bool closed;
	int ret;
	bool after_release;
};

static void *keys_close_run(void *arg)
{
	struct keys_closer *c = arg;

	c->ret = close(c->fd) ? -errno : 0;
	c->after_release = __atomic_load_n(&c->releasing, __ATOMIC_ACQUIRE);
	__atomic_store_n(&c->closed, true, __ATOMIC_RELEASE);
	return NULL;
}

static double keys_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Poll the held request @token until its state has every bit of @want:
 * 0, or -ETIMEDOUT when CLOSE_WAIT_S pass without it (its state in
 * *@state), or MRCT_KEYS_HOLD_STATE's error.
 */
static int keys_hold_until(int fd, uint32_t token, uint32_t want,
			   uint32_t *state)
{
	double deadline = keys_now() + CLOSE_WAIT_S;
	int err;

	for (;;) {
		err = keys_hold(fd, MRCT_KEYS_HOLD_STATE, token, state);
		if (err || (*state & want) == want)
			return err;
		if (keys_now() > deadline)
			return -ETIMEDOUT;
		usleep(10000);
	}
}

/*
 * A pending request refuses dereg; closing its file waits for it. The
 * request is held (MRCT_KEYS_HOLD: its completion waits in mrcore's
 * worker until released), so it is pending for certain: MRCT_KEYS_DEREG
 * is -EBUSY and MRCT_KEYS_WAIT finds it not completed. A thread closes
 * the request's own file; once the module reports the completion waiting
 * and the close waiting for it, the close must not have returned; the
 * test marks "releasing" and releases the request, and the close must
 * return, 0, having seen that mark. After it the MR the completion
 * delivered during the close is gone with the file: its key can be taken
 * again, and the memlock charge and the kernel's pin count are back.
 */
KEYS_TEST_TIMEOUT(close_with_request_pending,
		  (MRCT_KEYS_HOLD_MAX_MS / 1000 + 2 * CLOSE_WAIT_S))
{
	const uint32_t both = MRCT_KEYS_HOLD_WAITING | MRCT_KEYS_HOLD_CLOSING;
	uint64_t pinned0 = keys_pinned(self->fd);
	long long pins0 = mt_foll_pins();
	struct keys_closer c = {};
	struct mrct_keys_wait w;
	struct keys_buf held;
	pthread_t thread;
	uint32_t state;
	int err;

	ASSERT_LE(0, pins0) TH_LOG("no pin counters in /proc/vmstat (root?)");
	c.fd = mt_open(mt_devname());
	ASSERT_LE(0, c.fd);
	ASSERT_EQ(0, keys_map(BUF_LEN, &held));
	ASSERT_EQ(0, keys_reg(c.fd, &held, KEY(6, VARIANT),
			      MRCT_KEYS_ASYNC | MRCT_KEYS_HOLD));
	ASSERT_NE(0, held.token);

	/* Pending for certain: refused, and not completed. */
	EXPECT_EQ(-EBUSY, keys_dereg(c.fd, &held));
	EXPECT_EQ(-ETIMEDOUT, keys_wait_ms(c.fd, held.handle, 0, &w));
	EXPECT_EQ(pinned0 + BUF_LEN / PAGE, keys_pinned(self->fd));

	ASSERT_EQ(0, pthread_create(&thread, NULL, keys_close_run, &c));
	err = keys_hold_until(self->fd, held.token, both, &state);
	if (err)
		TH_LOG("held request: state 0x%x after %d s, want 0x%x: %s",
		       state, CLOSE_WAIT_S, both, strerror(-err));
	EXPECT_EQ(0, err);
	/* The close waits for the request: it cannot have returned. */
	EXPECT_FALSE(__atomic_load_n(&c.closed, __ATOMIC_ACQUIRE));

	__atomic_store_n(&c.releasing, true, __ATOMIC_RELEASE);
	EXPECT_EQ(0, keys_hold(self->fd, MRCT_KEYS_RELEASE, held.token,
			       &state));
	EXPECT_EQ(both, state);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(0, c.ret);
	EXPECT_TRUE(c.after_release)
		TH_LOG("close() returned before the request was released");
	EXPECT_EQ(-ENOENT, keys_hold(self->fd, MRCT_KEYS_HOLD_STATE,
				     held.token, &state));

	/* What the completion delivered during the close went with it. */
	EXPECT_EQ(pinned0, keys_pinned(self->fd));
	EXPECT_EQ(pins0, mt_foll_pins());
	EXPECT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(6, VARIANT), 0));
	EXPECT_EQ(0, munmap(held.p, held.len));
}

/* A hold needs a completion that runs later: with ASYNC only. */
KEYS_TEST(hold_needs_async)
{
	uint32_t state;

	EXPECT_EQ(-EINVAL, keys_reg(self->fd, &self->tgt, KEY(7, VARIANT),
				    MRCT_KEYS_HOLD));
	EXPECT_EQ(-ENOENT, keys_hold(self->fd, MRCT_KEYS_RELEASE, 0, &state));
	/* Refused: the key was not taken. */
	EXPECT_EQ(0, keys_reg(self->fd, &self->tgt, KEY(7, VARIANT), 0));
}

TEST_HARNESS_MAIN
