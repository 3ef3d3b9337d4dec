// SPDX-License-Identifier: GPL-2.0
/*
 * dma-buf MRs: a range of a dma-buf registered on vhca through its
 * reg_user_mr_dmabuf (MRCT_REG_DMABUF), used by the data path of a
 * loopback RC pair (MRCT_QP_POST) as the target and source of RDMA WRITE
 * and READ and as a local SGE, with a pinned user MR on the other side.
 *
 * The buffers come from mrcore_test's own exporter (MRCT_DMABUF_CREATE):
 * a static one, which importers map at attach time, and a DYNAMIC one,
 * which has pin/unpin and which MRCT_DMABUF_MOVE moves to new pages
 * under its reservation lock. What mrcore makes of a dynamic buffer
 * depends on the kernel: with CONFIG_DMABUF_MOVE_NOTIFY (the debug
 * kernel) the MR is movable - a move zaps its entries and the next device
 * access faults and maps the buffer again; without it (Debian's stock
 * kernel) the MR pins the buffer and a move fails -EBUSY. Each case reads
 * the MR's mode from MRCT_DMABUF_STATS, checks it is the one the kernel
 * calls for (MRCT_DMABUF_INFO reports CONFIG_DMABUF_MOVE_NOTIFY), and
 * asserts the behaviour of that mode; nothing is skipped for it. With
 * /dev/udmabuf (the debug kernel) a memfd-backed udmabuf is registered
 * too; without it that case skips.
 *
 * Every case checks the bytes (through MRCT_DMABUF_RW, the CPU's view of
 * the exporter's current pages, or the memfd) and the counters: the MR's
 * and the device's (MRCT_DMABUF_STATS), the exporter's (MRCT_DMABUF_INFO:
 * pins, maps, unmaps, moves, attachments, live buffers) and the device's
 * keys (/sys/kernel/debug/mrcore/<dev>/stats).
 *
 * vhca only; the device is vhca0 unless MRCT_DEVICE names another vhca
 * device. Run as root (debugfs).
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

/*
 * include/uapi/linux/udmabuf.h of 6.1, spelled out here: the host's
 * headers need not have it.
 */
struct mt_udmabuf_create {
	__u32 memfd;
	__u32 flags;
	__u64 offset;
	__u64 size;
};

#define MT_UDMABUF_FLAGS_CLOEXEC	0x01
#define MT_UDMABUF_CREATE	_IOW('u', 0x42, struct mt_udmabuf_create)

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"

#define PAGE		4096UL

#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define RR		MRCT_ACCESS_REMOTE_READ
#define QP_ACCESS	(LW | RW | RR)

/* The pinned MR on the other side of every transfer. */
#define SRC_LEN		(256 * PAGE)
#define SRC_IOVA	0x100000000ULL
/* iovas unlike anything else, so an offset mix-up shows. */
#define DB_IOVA		0x0db000000000ULL

/* The buffer most cases register: 1 MiB, 256 pages. */
#define BUF_LEN		(256 * PAGE)

FIXTURE(dmabuf)
{
	int fd;			/* -1: no vhca device, the body returns */
	struct mrct_qp_create pair;	/* PD 0, QP_ACCESS */
	uint8_t *src;		/* SRC_LEN bytes, pinned */
	struct mrct_reg src_mr;	/* QP_ACCESS */
	uint8_t *tmp;		/* SRC_LEN bytes for MRCT_DMABUF_RW */
};

FIXTURE_SETUP(dmabuf)
{
	self->fd = mt_fixture_open(_metadata);
	if (self->fd < 0)
		return;
	ASSERT_EQ(0, mt_pair(self->fd, 0, QP_ACCESS, 1, 0, &self->pair));
	if (!mt_fixture_vhca(_metadata, &self->fd, self->pair.flags))
		return;

	self->src = mt_fixture_pinned(_metadata, self->fd, SRC_LEN, SRC_IOVA,
				      QP_ACCESS, &self->src_mr);
	self->tmp = malloc(SRC_LEN);
	ASSERT_NE(NULL, self->tmp);
}

/* Closing the file destroys the pair and deregisters what is left. */
FIXTURE_TEARDOWN(dmabuf)
{
	if (self->fd < 0)
		return;
	EXPECT_EQ(0, close(self->fd));
	free(self->tmp);
}

/* --- the exporter --- */

/* A buffer of @size bytes (MRCT_DMABUF_DYNAMIC in @flags or 0): its fd. */
static int db_create(struct __test_metadata *_metadata, int fd, uint64_t size,
		     uint32_t flags)
{
	struct mrct_dmabuf_create c = { .size = size, .flags = flags };
	int err = mt_ioctl(fd, MRCT_DMABUF_CREATE, &c);

	if (err)
		TH_LOG("MRCT_DMABUF_CREATE of %llu bytes: %s",
		       (unsigned long long)size, strerror(-err));
	EXPECT_EQ(0, err);
	return err ? -1 : c.fd;
}

/* The CPU reads (@write false) or writes bytes of buffer @bfd. */
static int db_rw(int fd, int bfd, uint64_t off, void *buf, uint64_t len,
		 bool write)
{
	struct mrct_dmabuf_rw rw = {
		.offset = off,
		.length = len,
		.ptr = (uintptr_t)buf,
		.fd = bfd,
		.flags = write ? MRCT_DMABUF_RW_WRITE : 0,
	};

	return mt_ioctl(fd, MRCT_DMABUF_RW, &rw);
}

static int db_move(int fd, int bfd)
{
	struct mrct_dmabuf_fd m = { .fd = bfd };

	return mt_ioctl(fd, MRCT_DMABUF_MOVE, &m);
}

static void db_info(struct __test_metadata *_metadata, int fd, int bfd,
		    struct mrct_dmabuf_info *in)
{
	memset(in, 0, sizeof(*in));
	in->fd = bfd;
	ASSERT_EQ(0, mt_ioctl(fd, MRCT_DMABUF_INFO, in));
}

/* The exporter's counters of @bfd are @pins, @maps, @unmaps, @moves, @att. */
static void db_expect_info(struct __test_metadata *_metadata, int fd, int bfd,
			   const char *when, uint64_t pins, uint64_t maps,
			   uint64_t unmaps, uint64_t moves, uint64_t att)
{
	struct mrct_dmabuf_info in;

	db_info(_metadata, fd, bfd, &in);
	if (in.pins != pins || in.maps != maps || in.unmaps != unmaps ||
	    in.moves != moves || in.attachments != att) {
		TH_LOG("%s: exporter pins %llu maps %llu unmaps %llu moves %llu attachments %llu",
		       when, (unsigned long long)in.pins,
		       (unsigned long long)in.maps,
		       (unsigned long long)in.unmaps,
		       (unsigned long long)in.moves,
		       (unsigned long long)in.attachments);
		TH_LOG("%s: want %llu %llu %llu %llu %llu", when,
		       (unsigned long long)pins, (unsigned long long)maps,
		       (unsigned long long)unmaps, (unsigned long long)moves,
		       (unsigned long long)att);
	}
	EXPECT_EQ(pins, in.pins);
	EXPECT_EQ(maps, in.maps);
	EXPECT_EQ(unmaps, in.unmaps);
	EXPECT_EQ(moves, in.moves);
	EXPECT_EQ(att, in.attachments);
}

/* Buffers of the module alive now, read through a probe buffer of its own. */
static long long db_live(struct __test_metadata *_metadata, int fd)
{
	struct mrct_dmabuf_info in;
	int probe = db_create(_metadata, fd, PAGE, 0);

	if (probe < 0)
		return -1;
	db_info(_metadata, fd, probe, &in);
	close(probe);
	/* The probe itself is one of them. */
	return (long long)in.live - 1;
}

/* --- registration and counters --- */

static int db_reg(int fd, int bfd, uint64_t off, uint64_t len, uint64_t iova,
		  uint32_t access, struct mrct_reg_dmabuf *reg)
{
	*reg = (struct mrct_reg_dmabuf){ .offset = off, .length = len,
					 .iova = iova, .fd = bfd,
					 .access = access };
	return mt_ioctl(fd, MRCT_REG_DMABUF, reg);
}

static void db_stats(struct __test_metadata *_metadata, int fd,
		     uint32_t handle, struct mrct_dmabuf_stats *st)
{
	*st = (struct mrct_dmabuf_stats){ .handle = handle };
	ASSERT_EQ(0, mt_ioctl(fd, MRCT_DMABUF_STATS, st))
		TH_LOG("MRCT_DMABUF_STATS of MR %u", handle);
}

/*
 * The mode of MR @handle over buffer @bfd: pinned (true) or movable, as
 * mrcore reports it; it must be the kernel's. A dynamic buffer on vhca
 * (which has MRC_CAP_ODP) is movable exactly when the kernel has
 * CONFIG_DMABUF_MOVE_NOTIFY, as the exporter reports it; a static one is
 * always pinned. The case then checks the behaviour of that mode.
 */
static bool db_pinned(struct __test_metadata *_metadata, int fd, int bfd,
		      uint32_t handle)
{
	struct mrct_dmabuf_stats st;
	struct mrct_dmabuf_info in;
	bool pinned, want;

	db_stats(_metadata, fd, handle, &st);
	db_info(_metadata, fd, bfd, &in);
	pinned = st.flags & MRCT_DMABUF_MR_PINNED;
	want = !(in.flags & MRCT_DMABUF_DYNAMIC) ||
	       !(in.flags & MRCT_DMABUF_MOVE_NOTIFY);
	TH_LOG("MR %u: %s", handle, pinned ?
	       "pinned fallback (no CONFIG_DMABUF_MOVE_NOTIFY)" : "movable");
	if (pinned != want)
		TH_LOG("MR %u is %s; the buffer is %s, the kernel %s %s",
		       handle, pinned ? "pinned" : "movable",
		       in.flags & MRCT_DMABUF_DYNAMIC ? "dynamic" : "static",
		       in.flags & MRCT_DMABUF_MOVE_NOTIFY ? "has" : "lacks",
		       "CONFIG_DMABUF_MOVE_NOTIFY");
	EXPECT_EQ(want, pinned);
	return pinned;
}

/* The MR's moves, faults, remaps and MRCT_DMABUF_MR_* flags are these. */
static void db_expect_mr(struct __test_metadata *_metadata, int fd,
			 uint32_t handle, const char *when, uint64_t moves,
			 uint64_t faults, uint64_t remaps, uint32_t flags)
{
	struct mrct_dmabuf_stats st;

	db_stats(_metadata, fd, handle, &st);
	if (st.moves != moves || st.faults != faults || st.remaps != remaps ||
	    st.flags != flags) {
		TH_LOG("%s: MR moves %llu faults %llu remaps %llu flags 0x%x",
		       when, (unsigned long long)st.moves,
		       (unsigned long long)st.faults,
		       (unsigned long long)st.remaps, st.flags);
		TH_LOG("%s: want %llu %llu %llu 0x%x", when,
		       (unsigned long long)moves, (unsigned long long)faults,
		       (unsigned long long)remaps, flags);
	}
	EXPECT_EQ(moves, st.moves);
	EXPECT_EQ(faults, st.faults);
	EXPECT_EQ(remaps, st.remaps);
	EXPECT_EQ(flags, st.flags);
}

/* A value of /sys/kernel/debug/mrcore/<dev>/@file ("@key N"), or -1. */
static long long db_dbg(const char *file, const char *key)
{
	char path[256], name[64];
	long long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/mrcore/%s/%s",
		 mt_devname(), file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key))
			found = v;
	fclose(f);
	return found;
}

static void db_dereg(struct __test_metadata *_metadata, int fd,
		     uint32_t handle)
{
	int err = mt_dereg(fd, handle);

	if (err)
		TH_LOG("MRCT_DEREG of dma-buf MR %u: %s", handle,
		       strerror(-err));
	EXPECT_EQ(0, err);
}

/* --- the data path --- */

/*
 * RDMA @opcode of @len bytes on QP A between the pinned MR at @soff and
 * (@rkey, @raddr); it must complete successfully, QP A staying in RTS.
 */
static void db_rdma(struct __test_metadata *_metadata,
		    struct _test_data_dmabuf *self, uint32_t opcode,
		    uint32_t rkey, uint64_t raddr, uint64_t soff, uint32_t len)
{
	struct mrct_qp_post p = {
		.handle = self->pair.handle,
		.opcode = opcode,
		.rkey = rkey,
		.remote_addr = raddr,
		.num_sge = 1,
		.sge[0] = {
			.addr = SRC_IOVA + soff,
			.length = len,
			.lkey = self->src_mr.info.lkey,
		},
	};
	int err = mt_ioctl(self->fd, MRCT_QP_POST, &p);

	if (err || p.post_err || p.status)
		TH_LOG("%s of %u bytes at 0x%llx: ioctl %d, post %d, %s, QP A %s",
		       opcode == MRCT_WR_RDMA_WRITE ? "WRITE" : "READ", len,
		       (unsigned long long)raddr, err, p.post_err,
		       mt_wc_name(p.status), mt_qps_name(p.qp_state[0]));
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, p.post_err);
	ASSERT_EQ(MRCT_WC_SUCCESS, p.status);
	EXPECT_EQ(MRCT_QPS_RTS, p.qp_state[0]);
}

/*
 * The device writes src[@soff, +@len) into @mr at iova + @off (@write),
 * or reads it from there into src[@soff, +@len).
 */
static void db_dev(struct __test_metadata *_metadata,
		   struct _test_data_dmabuf *self, bool write,
		   const struct mrct_reg_dmabuf *mr, uint64_t off,
		   uint64_t soff, uint32_t len)
{
	db_rdma(_metadata, self,
		write ? MRCT_WR_RDMA_WRITE : MRCT_WR_RDMA_READ,
		mr->info.rkey, mr->iova + off, soff, len);
}

/* @len bytes at @got are those at @want; the first that differs is logged. */
static void db_check(struct __test_metadata *_metadata, const char *what,
		     const void *got, const void *want, size_t len)
{
	const uint8_t *g = got, *w = want;
	size_t i;

	for (i = 0; i < len && g[i] == w[i]; i++)
		;
	if (i < len)
		TH_LOG("%s: byte 0x%zx is 0x%02x, want 0x%02x", what, i, g[i],
		       w[i]);
	EXPECT_EQ(len, i);
}

/* The exporter's bytes [@off, +@len) of @bfd are @want. */
static void db_check_buf(struct __test_metadata *_metadata,
			 struct _test_data_dmabuf *self, int bfd, uint64_t off,
			 const void *want, size_t len, const char *what)
{
	ASSERT_EQ(0, db_rw(self->fd, bfd, off, self->tmp, len, false));
	db_check(_metadata, what, self->tmp, want, len);
}

/*
 * Fill the buffer with a pattern from the CPU, have the device write
 * another into [@off, +@len) of the MR and read the whole MR back; the
 * exporter's pages and the pinned side must agree.
 */
static void db_round_trip(struct __test_metadata *_metadata,
			  struct _test_data_dmabuf *self, int bfd,
			  const struct mrct_reg_dmabuf *mr, uint64_t off,
			  uint32_t len, uint64_t seed)
{
	uint8_t *want = malloc(mr->length);

	ASSERT_NE(NULL, want);
	ASSERT_GE(SRC_LEN, mr->length);
	ASSERT_EQ(0, db_rw(self->fd, bfd, mr->offset, want, mr->length, false));
	mt_fill(self->src, len, seed);
	memcpy(want + off, self->src, len);
	db_dev(_metadata, self, true, mr, off, 0, len);
	db_check_buf(_metadata, self, bfd, mr->offset, want, mr->length,
		     "exporter's pages after the device's WRITE");

	memset(self->src, 0, mr->length);
	db_dev(_metadata, self, false, mr, 0, 0, mr->length);
	db_check(_metadata, "pinned MR after the device's READ", self->src,
		 want, mr->length);
	free(want);
}

/* --- 1: a static exporter: the pinned fallback --- */

/*
 * A static exporter maps at attach time and never moves: the MR is
 * pinned and mapped, with one MTT entry per page; the device writes and
 * reads its pages; a move is refused; dereg detaches and unmaps.
 */
TEST_F(dmabuf, static_exporter_pinned)
{
	long long mkeys0, pinned0;
	struct mrct_reg_dmabuf mr;
	int bfd;

	if (self->fd < 0)
		return;
	mkeys0 = db_dbg("stats", "mkeys");
	pinned0 = db_dbg("dmabuf", "regs_pinned");
	ASSERT_LE(0, mkeys0);
	ASSERT_LE(0, pinned0);
	bfd = db_create(_metadata, self->fd, BUF_LEN, 0);
	ASSERT_LE(0, bfd);

	ASSERT_EQ(0, db_reg(self->fd, bfd, 0, BUF_LEN, DB_IOVA, QP_ACCESS,
			    &mr));
	EXPECT_EQ(MRCT_MODE_MTT, mr.info.mode);
	EXPECT_EQ(12, mr.info.page_shift);
	EXPECT_EQ(BUF_LEN / PAGE, mr.info.entries);
	EXPECT_EQ(mkeys0 + 1, db_dbg("stats", "mkeys"));
	EXPECT_EQ(pinned0 + 1, db_dbg("dmabuf", "regs_pinned"));
	db_expect_mr(_metadata, self->fd, mr.handle, "registered", 0, 0, 0,
		     MRCT_DMABUF_MR_PINNED | MRCT_DMABUF_MR_MAPPED);
	/* Mapped once, at attach time; a static exporter has no pins. */
	db_expect_info(_metadata, self->fd, bfd, "registered", 0, 1, 0, 0, 1);

	db_round_trip(_metadata, self, bfd, &mr, 5 * PAGE + 100, 3 * PAGE, 1);
	EXPECT_EQ(-EINVAL, db_move(self->fd, bfd));
	db_expect_mr(_metadata, self->fd, mr.handle, "after the traffic", 0,
		     0, 0, MRCT_DMABUF_MR_PINNED | MRCT_DMABUF_MR_MAPPED);

	db_dereg(_metadata, self->fd, mr.handle);
	db_expect_info(_metadata, self->fd, bfd, "deregistered", 0, 1, 1, 0, 0);
	EXPECT_EQ(mkeys0, db_dbg("stats", "mkeys"));
	close(bfd);
}

/* --- 2, 3: a dynamic exporter: movable or pinned, by the kernel --- */

/*
 * A dynamic exporter: movable with CONFIG_DMABUF_MOVE_NOTIFY (mapped, not
 * pinned), else pinned (vhca has MRC_CAP_ODP, so only the kernel makes it
 * so; dma-buf's core then pins once more per mapping: two pins). Either
 * way the device's bytes land; dereg gives the pins back.
 */
TEST_F(dmabuf, dynamic_exporter_mode)
{
	long long movable0, pinned0;
	struct mrct_reg_dmabuf mr;
	bool pinned;
	int bfd;

	if (self->fd < 0)
		return;
	movable0 = db_dbg("dmabuf", "regs_movable");
	pinned0 = db_dbg("dmabuf", "regs_pinned");
	bfd = db_create(_metadata, self->fd, BUF_LEN, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, db_reg(self->fd, bfd, 0, BUF_LEN, DB_IOVA, QP_ACCESS,
			    &mr));
	pinned = db_pinned(_metadata, self->fd, bfd, mr.handle);
	EXPECT_EQ(BUF_LEN / PAGE, mr.info.entries);
	EXPECT_EQ(movable0 + !pinned, db_dbg("dmabuf", "regs_movable"));
	EXPECT_EQ(pinned0 + pinned, db_dbg("dmabuf", "regs_pinned"));
	db_expect_mr(_metadata, self->fd, mr.handle, "registered", 0, 0, 0,
		     MRCT_DMABUF_MR_MAPPED |
		     (pinned ? MRCT_DMABUF_MR_PINNED : 0));
	db_expect_info(_metadata, self->fd, bfd, "registered",
		       pinned ? 2 : 0, 1, 0, 0, 1);

	/* Mapped at registration: the first accesses do not fault. */
	db_round_trip(_metadata, self, bfd, &mr, 0, BUF_LEN, 2);
	db_expect_mr(_metadata, self->fd, mr.handle, "after the traffic", 0,
		     0, 0, MRCT_DMABUF_MR_MAPPED |
		     (pinned ? MRCT_DMABUF_MR_PINNED : 0));

	db_dereg(_metadata, self->fd, mr.handle);
	db_expect_info(_metadata, self->fd, bfd, "deregistered", 0, 1, 1, 0, 0);
	close(bfd);
}

/*
 * A move. Movable: the exporter's move zaps the MR (a device read that
 * does not fault finds nothing mapped), the next RDMA WRITE faults and
 * maps the buffer again (one remap, a second map), and its bytes land in
 * the new pages next to the old bytes the move copied. Pinned: the move
 * is refused (-EBUSY) and nothing changes.
 */
TEST_F(dmabuf, move_then_access)
{
	const uint32_t len = 8 * PAGE;
	struct mrct_reg_dmabuf mr;
	struct mrct_xfer peek;
	uint8_t *before;
	uint8_t out[8];
	bool pinned;
	int bfd;

	if (self->fd < 0)
		return;
	before = malloc(BUF_LEN);
	ASSERT_NE(NULL, before);
	bfd = db_create(_metadata, self->fd, BUF_LEN, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, bfd);
	mt_fill(before, BUF_LEN, 3);
	ASSERT_EQ(0, db_rw(self->fd, bfd, 0, before, BUF_LEN, true));
	ASSERT_EQ(0, db_reg(self->fd, bfd, 0, BUF_LEN, DB_IOVA, QP_ACCESS,
			    &mr));
	pinned = db_pinned(_metadata, self->fd, bfd, mr.handle);

	if (pinned) {
		EXPECT_EQ(-EBUSY, db_move(self->fd, bfd));
		db_expect_info(_metadata, self->fd, bfd, "refused move", 2, 1,
			       0, 0, 1);
		db_round_trip(_metadata, self, bfd, &mr, 16 * PAGE, len, 4);
		db_expect_mr(_metadata, self->fd, mr.handle, "refused move", 0,
			     0, 0, MRCT_DMABUF_MR_PINNED | MRCT_DMABUF_MR_MAPPED);
		goto out;
	}

	ASSERT_EQ(0, db_move(self->fd, bfd));
	db_expect_mr(_metadata, self->fd, mr.handle, "moved", 1, 0, 0, 0);
	db_expect_info(_metadata, self->fd, bfd, "moved", 0, 1, 1, 1, 1);
	/* Zapped: a device access that does not fault finds no page. */
	peek = (struct mrct_xfer){ .iova = DB_IOVA, .length = sizeof(out),
				   .ptr = (uintptr_t)out, .handle = mr.handle };
	EXPECT_EQ(-EAGAIN, mt_ioctl(self->fd, MRCT_DEV_READ, &peek));
	db_check_buf(_metadata, self, bfd, 0, before, BUF_LEN,
		     "new pages after the move");

	mt_fill(self->src, len, 5);
	memcpy(before + 16 * PAGE, self->src, len);
	db_dev(_metadata, self, true, &mr, 16 * PAGE, 0, len);
	db_expect_mr(_metadata, self->fd, mr.handle, "written after the move",
		     1, 1, 1, MRCT_DMABUF_MR_MAPPED);
	db_expect_info(_metadata, self->fd, bfd, "written after the move", 0,
		       2, 1, 1, 1);
	db_check_buf(_metadata, self, bfd, 0, before, BUF_LEN,
		     "new pages after the WRITE");

out:
	db_dereg(_metadata, self->fd, mr.handle);
	close(bfd);
	free(before);
}

/*
 * A thread that moves a buffer until told to stop, at most once per round
 * of the test's traffic: vhca runs a WQE that faulted again from its start,
 * so moves that always came sooner than a fault's round trip would starve
 * the traffic (seen on 2 CPUs: a READ of 1 MiB not done in a minute).
 */
struct db_mover {
	int fd;
	int bfd;
	bool stop;		/* __atomic: set by the test, read here */
	unsigned int rounds;	/* __atomic: rounds the test finished */
	unsigned int moved;	/* __atomic: counted here, read by the test */
	unsigned int busy;	/* __atomic, as @moved */
	int err;
};

static void *db_mover_run(void *arg)
{
	struct db_mover *m = arg;
	unsigned int round = 0, now;
	int err;

	while (!__atomic_load_n(&m->stop, __ATOMIC_RELAXED)) {
		/* Pacing only: room for the traffic between the moves. */
		usleep(2000);
		now = __atomic_load_n(&m->rounds, __ATOMIC_ACQUIRE);
		if (now == round)
			continue;
		round = now;
		err = db_move(m->fd, m->bfd);
		if (!err)
			__atomic_add_fetch(&m->moved, 1, __ATOMIC_RELEASE);
		else if (err == -EBUSY)
			__atomic_add_fetch(&m->busy, 1, __ATOMIC_RELEASE);
		else if (!m->err)
			m->err = err;
	}
	return NULL;
}

/* The mover's attempts so far, moved or refused. */
static unsigned int db_mover_tries(struct db_mover *m)
{
	return __atomic_load_n(&m->moved, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&m->busy, __ATOMIC_ACQUIRE);
}

static double db_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Attempts of the mover a round must start after; a minute for each. */
#define DB_MIN_MOVES	4
#define DB_MOVE_WAIT_S	60

/*
 * Moves during a stream of device accesses: a thread moves the buffer
 * (every two milliseconds or so, at most once a round) while the device
 * writes a new pattern into a different part of the MR and reads the MR
 * back, 200 times and on until a round has started after DB_MIN_MOVES of
 * the mover's attempts, so what is asserted of the moves rests on moves
 * made, not on how many fit into the rounds' time; a mover that makes no
 * attempt for DB_MOVE_WAIT_S fails the case. Every transfer succeeds and
 * every byte is right. Movable: the MR saw every move (its moves counter
 * is the exporter's), and remapped at least once (that last round's
 * accesses came after a move) and at most once per move. Pinned: every
 * move is refused.
 */
TEST_F_TIMEOUT(dmabuf, moves_during_traffic, 300)
{
	const unsigned int rounds = 200;
	const uint32_t len = 4 * PAGE;
	unsigned int i, tries = 0, last = 0;
	struct db_mover m = {};
	struct mrct_dmabuf_stats st;
	struct mrct_dmabuf_info in;
	struct mrct_reg_dmabuf mr;
	double progress;
	pthread_t thread;
	uint8_t *want;
	uint64_t off;
	bool pinned;

	if (self->fd < 0)
		return;
	want = calloc(1, BUF_LEN);
	ASSERT_NE(NULL, want);
	m.fd = self->fd;
	m.bfd = db_create(_metadata, self->fd, BUF_LEN, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, m.bfd);
	ASSERT_EQ(0, db_reg(self->fd, m.bfd, 0, BUF_LEN, DB_IOVA, QP_ACCESS,
			    &mr));
	pinned = db_pinned(_metadata, self->fd, m.bfd, mr.handle);

	ASSERT_EQ(0, pthread_create(&thread, NULL, db_mover_run, &m));
	progress = db_now();
	for (i = 0; i < rounds || tries < DB_MIN_MOVES; i++) {
		tries = db_mover_tries(&m);
		if (tries != last) {
			last = tries;
			progress = db_now();
		} else if (db_now() - progress > DB_MOVE_WAIT_S) {
			TH_LOG("the mover made no attempt in %d s (%u so far, %u rounds)",
			       DB_MOVE_WAIT_S, tries, i);
			EXPECT_LE(DB_MIN_MOVES, tries);
			break;
		}
		off = (i * 13 % (BUF_LEN / len)) * len;
		mt_fill(self->src, len, 100 + i);
		memcpy(want + off, self->src, len);
		db_dev(_metadata, self, true, &mr, off, 0, len);
		db_dev(_metadata, self, false, &mr, 0, len, BUF_LEN - len);
		db_check(_metadata, "device READ during the moves",
			 self->src + len, want, BUF_LEN - len);
		if (_metadata->passed == 0)
			break;
		__atomic_add_fetch(&m.rounds, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&m.stop, true, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	EXPECT_EQ(0, m.err);
	db_check_buf(_metadata, self, m.bfd, 0, want, BUF_LEN,
		     "exporter's pages after the moves");

	db_stats(_metadata, self->fd, mr.handle, &st);
	db_info(_metadata, self->fd, m.bfd, &in);
	TH_LOG("%u rounds; %u moves, %u refused; MR faults %llu remaps %llu",
	       i, m.moved, m.busy, (unsigned long long)st.faults,
	       (unsigned long long)st.remaps);
	if (pinned) {
		EXPECT_EQ(0, m.moved);
		EXPECT_LT(0, m.busy);
		EXPECT_EQ(0, st.moves);
		EXPECT_EQ(0, st.remaps);
	} else {
		EXPECT_EQ(0, m.busy);
		EXPECT_LT(0, m.moved);
		EXPECT_EQ(m.moved, in.moves);
		EXPECT_EQ(m.moved, st.moves);
		EXPECT_LE(1, st.remaps);
		EXPECT_GE(st.moves, st.remaps);
		EXPECT_LE(st.remaps, st.faults);
		/* Each remap maps once more; the last move may be unmapped. */
		EXPECT_EQ(1 + st.remaps, in.maps);
	}
	db_dereg(_metadata, self->fd, mr.handle);
	close(m.bfd);
	free(want);
}

/* --- 4: the dma-buf MR as the local side --- */

/*
 * The MR as a WRITE's gather list and a READ's scatter list (its lkey),
 * the pinned MR as the remote side; after a move too when movable (the
 * local fault is resolved as the remote one is).
 */
TEST_F(dmabuf, as_local_sge)
{
	const uint32_t len = 6 * PAGE;
	struct mrct_reg_dmabuf mr;
	struct mrct_qp_post p;
	uint8_t *pat;
	bool pinned;
	int bfd, k;

	if (self->fd < 0)
		return;
	pat = malloc(len);
	ASSERT_NE(NULL, pat);
	bfd = db_create(_metadata, self->fd, BUF_LEN, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, db_reg(self->fd, bfd, 0, BUF_LEN, DB_IOVA, QP_ACCESS,
			    &mr));
	pinned = db_pinned(_metadata, self->fd, bfd, mr.handle);

	for (k = 0; k < 2; k++) {
		if (k && !pinned)
			ASSERT_EQ(0, db_move(self->fd, bfd));
		/* WRITE from the dma-buf MR into the pinned MR. */
		mt_fill(pat, len, 20 + k);
		ASSERT_EQ(0, db_rw(self->fd, bfd, 2 * PAGE, pat, len, true));
		memset(self->src, 0, len);
		memset(&p, 0, sizeof(p));
		p.handle = self->pair.handle;
		p.opcode = MRCT_WR_RDMA_WRITE;
		p.rkey = self->src_mr.info.rkey;
		p.remote_addr = SRC_IOVA;
		p.num_sge = 1;
		p.sge[0].addr = DB_IOVA + 2 * PAGE;
		p.sge[0].length = len;
		p.sge[0].lkey = mr.info.lkey;
		ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
		ASSERT_EQ(MRCT_WC_SUCCESS, p.status);
		db_check(_metadata, "pinned MR after a WRITE from the dma-buf",
			 self->src, pat, len);

		/* READ from the pinned MR into the dma-buf MR. */
		mt_fill(self->src, len, 30 + k);
		p.opcode = MRCT_WR_RDMA_READ;
		p.sge[0].addr = DB_IOVA + 40 * PAGE;
		ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
		ASSERT_EQ(MRCT_WC_SUCCESS, p.status);
		db_check_buf(_metadata, self, bfd, 40 * PAGE, self->src, len,
			     "dma-buf after a READ into it");
	}
	if (pinned)
		db_expect_mr(_metadata, self->fd, mr.handle, "local SGE", 0, 0,
			     0, MRCT_DMABUF_MR_PINNED | MRCT_DMABUF_MR_MAPPED);
	else
		db_expect_mr(_metadata, self->fd, mr.handle, "local SGE", 1, 1,
			     1, MRCT_DMABUF_MR_MAPPED);
	db_dereg(_metadata, self->fd, mr.handle);
	close(bfd);
	free(pat);
}

/* --- 5, 6: ranges inside the buffer --- */

/*
 * Pages 3 .. 7 of a 16-page buffer: 5 entries; the MR's first byte is
 * the buffer's byte 3 * PAGE, and the pages around the range stay zero.
 */
TEST_F(dmabuf, offset_inside)
{
	const uint64_t blen = 16 * PAGE, off = 3 * PAGE, len = 5 * PAGE;
	static const uint8_t zeros[8 * PAGE];
	struct mrct_reg_dmabuf mr;
	int bfd;

	if (self->fd < 0)
		return;
	bfd = db_create(_metadata, self->fd, blen, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, db_reg(self->fd, bfd, off, len, DB_IOVA, QP_ACCESS, &mr));
	EXPECT_EQ(5, mr.info.entries);

	mt_fill(self->src, len, 6);
	db_dev(_metadata, self, true, &mr, 0, 0, len);
	db_check_buf(_metadata, self, bfd, off, self->src, len,
		     "pages 3-7 after the WRITE");
	db_check_buf(_metadata, self, bfd, 0, zeros, off, "pages 0-2");
	db_check_buf(_metadata, self, bfd, off + len, zeros, blen - off - len,
		     "pages 8-15");
	db_round_trip(_metadata, self, bfd, &mr, PAGE + 8, 2 * PAGE, 7);

	db_dereg(_metadata, self->fd, mr.handle);
	close(bfd);
}

/*
 * A range that starts and ends inside pages: offset 0x1234, 3 pages and
 * 100 bytes, at an iova with the same page offset. The entries cover
 * every page touched; the bytes land exactly at 0x1234; a byte past the
 * end of the MR is refused.
 */
TEST_F(dmabuf, sub_page_offset)
{
	const uint64_t off = 0x1234, len = 3 * PAGE + 100;
	const uint64_t iova = DB_IOVA + (off & (PAGE - 1));
	struct mrct_reg_dmabuf mr;
	uint8_t before[64], one = 0x5a;
	struct mrct_xfer x = {};
	int bfd;

	if (self->fd < 0)
		return;
	bfd = db_create(_metadata, self->fd, 8 * PAGE, 0);
	ASSERT_LE(0, bfd);
	mt_fill(before, sizeof(before), 8);
	ASSERT_EQ(0, db_rw(self->fd, bfd, off - sizeof(before), before,
			   sizeof(before), true));
	ASSERT_EQ(0, db_reg(self->fd, bfd, off, len, iova, QP_ACCESS, &mr));
	EXPECT_EQ((off + len - 1) / PAGE - off / PAGE + 1, mr.info.entries);

	mt_fill(self->src, len, 9);
	db_dev(_metadata, self, true, &mr, 0, 0, len);
	db_check_buf(_metadata, self, bfd, off, self->src, len,
		     "the range after the WRITE");
	db_check_buf(_metadata, self, bfd, off - sizeof(before), before,
		     sizeof(before), "the bytes before the range");

	/*
	 * One byte past the MR, as a remote write: outside the key's range
	 * (the walker's -ERANGE), though its page is mapped.
	 */
	x.iova = iova + len;
	x.length = 1;
	x.ptr = (uintptr_t)&one;
	x.handle = mr.handle;
	x.flags = MRCT_XFER_REMOTE;
	EXPECT_EQ(-ERANGE, mt_ioctl(self->fd, MRCT_DEV_WRITE, &x));
	/* The last byte of the MR is reachable. */
	x.iova = iova + len - 1;
	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_DEV_WRITE, &x));
	db_check_buf(_metadata, self, bfd, off + len - 1, &one, 1,
		     "the MR's last byte");

	db_dereg(_metadata, self->fd, mr.handle);
	close(bfd);
}

/* --- 7: what is refused --- */

static int db_rereg_access(int fd, uint32_t handle, uint32_t access)
{
	struct mrct_rereg r = {
		.handle = handle,
		.flags = MRCT_REREG_ACCESS,
		.access = access,
	};

	return mt_ioctl(fd, MRCT_REREG, &r);
}

/*
 * Bad descriptors and ranges are refused before anything is attached;
 * ON_DEMAND, ZERO_BASED, MW_BIND and HUGETLB are not offered, nor is rereg; the exporter's
 * own ioctls check their input. Nothing is left behind: no key, no
 * attachment.
 */
TEST_F(dmabuf, bad_inputs)
{
	struct mrct_dmabuf_create c = {};
	struct mrct_dmabuf_stats st = {};
	struct mrct_reg_dmabuf mr;
	long long mkeys0;
	int bfd, pipefd[2];
	uint8_t b = 0;

	if (self->fd < 0)
		return;
	mkeys0 = db_dbg("stats", "mkeys");
	bfd = db_create(_metadata, self->fd, 4 * PAGE, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, pipe(pipefd));

	EXPECT_EQ(-EBADF, db_reg(self->fd, -1, 0, PAGE, DB_IOVA, LW, &mr));
	EXPECT_EQ(-EINVAL, db_reg(self->fd, pipefd[0], 0, PAGE, DB_IOVA, LW,
				  &mr));
	EXPECT_EQ(-EINVAL, db_reg(self->fd, bfd, PAGE, 4 * PAGE, DB_IOVA, LW,
				  &mr));
	EXPECT_EQ(-EINVAL, db_reg(self->fd, bfd, 0, 0, DB_IOVA, LW, &mr));
	EXPECT_EQ(-EINVAL, db_reg(self->fd, bfd, 0x10, PAGE, DB_IOVA + 0x20,
				  LW, &mr));
	EXPECT_EQ(-EINVAL, db_reg(self->fd, bfd, UINT64_MAX - 10, PAGE,
				  DB_IOVA, LW, &mr));
	EXPECT_EQ(-EINVAL, db_reg(self->fd, bfd, 0, PAGE, UINT64_MAX - 10, LW,
				  &mr));
	EXPECT_EQ(-EOPNOTSUPP, db_reg(self->fd, bfd, 0, PAGE, DB_IOVA,
				      LW | MRCT_ACCESS_ON_DEMAND, &mr));
	EXPECT_EQ(-EOPNOTSUPP, db_reg(self->fd, bfd, 0, PAGE, 0,
				      LW | MRCT_ACCESS_ZERO_BASED, &mr));
	/* ibv_reg_dmabuf_mr(3): only the rights and RELAXED_ORDERING. */
	EXPECT_EQ(-EOPNOTSUPP, db_reg(self->fd, bfd, 0, PAGE, DB_IOVA,
				      LW | MRCT_ACCESS_MW_BIND, &mr));
	EXPECT_EQ(-EOPNOTSUPP, db_reg(self->fd, bfd, 0, PAGE, DB_IOVA,
				      LW | MRCT_ACCESS_HUGETLB, &mr));
	/* Remote write without local write: the usual -EINVAL. */
	EXPECT_EQ(-EINVAL, db_reg(self->fd, bfd, 0, PAGE, DB_IOVA, RW, &mr));
	EXPECT_EQ(mkeys0, db_dbg("stats", "mkeys"));
	db_expect_info(_metadata, self->fd, bfd, "refused registrations", 0, 0,
		       0, 0, 0);

	/* Rereg is refused and the MR still works. */
	ASSERT_EQ(0, db_reg(self->fd, bfd, 0, 4 * PAGE, DB_IOVA, QP_ACCESS,
			    &mr));
	EXPECT_EQ(-EOPNOTSUPP, db_rereg_access(self->fd, mr.handle, LW | RR));
	db_round_trip(_metadata, self, bfd, &mr, PAGE, PAGE, 10);
	/* Stats of an MR that is not a dma-buf MR, of none. */
	st.handle = self->src_mr.handle;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DMABUF_STATS, &st));
	st.handle = 0xfffffff0U;
	EXPECT_EQ(-ENOENT, mt_ioctl(self->fd, MRCT_DMABUF_STATS, &st));
	db_dereg(_metadata, self->fd, mr.handle);

	/* The exporter's ioctls. */
	c.size = PAGE + 1;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DMABUF_CREATE, &c));
	c.size = 0;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DMABUF_CREATE, &c));
	c.size = MRCT_DMABUF_MAX_SIZE + PAGE;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DMABUF_CREATE, &c));
	c.size = PAGE;
	c.flags = 0x80;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DMABUF_CREATE, &c));
	EXPECT_EQ(-EINVAL, db_rw(self->fd, pipefd[0], 0, &b, 1, false));
	EXPECT_EQ(-EINVAL, db_rw(self->fd, bfd, 4 * PAGE, &b, 1, false));
	EXPECT_EQ(-EINVAL, db_rw(self->fd, bfd, 0, &b, 0, false));
	EXPECT_EQ(-EINVAL, db_move(self->fd, pipefd[0]));
	EXPECT_EQ(-EBADF, db_move(self->fd, -1));

	EXPECT_EQ(mkeys0, db_dbg("stats", "mkeys"));
	close(pipefd[0]);
	close(pipefd[1]);
	close(bfd);
}

/* --- 8, 9: lifetimes --- */

/*
 * The MR holds the buffer: with its descriptor closed the buffer stays
 * alive and the device still writes and reads it; the dereg frees it.
 */
TEST_F(dmabuf, dereg_after_fd_closed)
{
	const uint32_t len = 4 * PAGE;
	struct mrct_reg_dmabuf mr;
	long long live0;
	int bfd;

	if (self->fd < 0)
		return;
	live0 = db_live(_metadata, self->fd);
	ASSERT_LE(0, live0);
	bfd = db_create(_metadata, self->fd, BUF_LEN, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, db_reg(self->fd, bfd, 0, BUF_LEN, DB_IOVA, QP_ACCESS,
			    &mr));
	ASSERT_EQ(0, close(bfd));
	EXPECT_EQ(live0 + 1, db_live(_metadata, self->fd));

	mt_fill(self->src, len, 11);
	db_dev(_metadata, self, true, &mr, 7 * PAGE, 0, len);
	memset(self->src + len, 0, len);
	db_dev(_metadata, self, false, &mr, 7 * PAGE, len, len);
	db_check(_metadata, "read back with the descriptor closed",
		 self->src + len, self->src, len);

	db_dereg(_metadata, self->fd, mr.handle);
	EXPECT_EQ(live0, db_live(_metadata, self->fd));
}

/*
 * Closing /dev/mrcore_test with two dma-buf MRs of one buffer live
 * deregisters them, which drops the buffer (its descriptor was closed
 * first): no key and no buffer are left.
 */
TEST_F(dmabuf, close_file_with_live_mr)
{
	struct mrct_reg_dmabuf mr, mr2;
	long long live0, mkeys0;
	int fd2, bfd;
	bool pinned;

	if (self->fd < 0)
		return;
	live0 = db_live(_metadata, self->fd);
	mkeys0 = db_dbg("stats", "mkeys");
	fd2 = mt_open(mt_devname());
	ASSERT_LE(0, fd2);
	bfd = db_create(_metadata, fd2, BUF_LEN, MRCT_DMABUF_DYNAMIC);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, db_reg(fd2, bfd, 0, BUF_LEN, DB_IOVA, QP_ACCESS, &mr));
	ASSERT_EQ(0, db_reg(fd2, bfd, PAGE, PAGE, DB_IOVA, LW, &mr2));
	pinned = db_pinned(_metadata, fd2, bfd, mr.handle);
	EXPECT_EQ(mkeys0 + 2, db_dbg("stats", "mkeys"));
	/* Each MR attaches and maps once; pinned, each holds two pins. */
	db_expect_info(_metadata, fd2, bfd, "two MRs", pinned ? 4 : 0, 2, 0, 0,
		       2);
	ASSERT_EQ(0, close(bfd));
	EXPECT_EQ(live0 + 1, db_live(_metadata, self->fd));

	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(live0, db_live(_metadata, self->fd));
	EXPECT_EQ(mkeys0, db_dbg("stats", "mkeys"));
}

/* --- 10: udmabuf, a second exporter --- */

/*
 * A memfd turned into a dma-buf by /dev/udmabuf (CONFIG_UDMABUF, the
 * debug kernel): udmabuf is a static exporter, so the MR is pinned; the
 * device's WRITE shows in the memfd's mapping and its READ returns what
 * the CPU wrote there.
 */
TEST_F(dmabuf, udmabuf)
{
	const size_t len = 64 * PAGE;
	struct mt_udmabuf_create uc = {};
	struct mrct_reg_dmabuf mr;
	int ufd, memfd, bfd;
	uint8_t *map;

	if (self->fd < 0)
		return;
	/*
	 * udmabuf maps the memfd's pages for its importer with the DMA API
	 * and, in 6.1, syncs that mapping with nothing while it stays
	 * mapped: under swiotlb=force the device works on bounce slots the
	 * memfd never sees (mrcore_test's exporter syncs them around CPU
	 * access, so its cases still run).
	 */
	if (mt_swiotlb_forced())
		SKIP(return, "swiotlb=force: 6.1's udmabuf never syncs a bounced import");
	ufd = open("/dev/udmabuf", O_RDWR);
	if (ufd < 0)
		SKIP(return, "no /dev/udmabuf (CONFIG_UDMABUF): %s",
		     strerror(errno));
	memfd = memfd_create("mrct-udmabuf", MFD_ALLOW_SEALING);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, len));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, map);
	mt_fill(map, len, 12);

	uc.memfd = memfd;
	uc.flags = MT_UDMABUF_FLAGS_CLOEXEC;
	uc.size = len;
	bfd = ioctl(ufd, MT_UDMABUF_CREATE, &uc);
	ASSERT_LE(0, bfd) TH_LOG("UDMABUF_CREATE: %s", strerror(errno));
	ASSERT_EQ(0, db_reg(self->fd, bfd, 0, len, DB_IOVA, QP_ACCESS, &mr));
	db_expect_mr(_metadata, self->fd, mr.handle, "udmabuf", 0, 0, 0,
		     MRCT_DMABUF_MR_PINNED | MRCT_DMABUF_MR_MAPPED);

	db_dev(_metadata, self, false, &mr, 0, 0, len);
	db_check(_metadata, "device READ of the memfd", self->src, map, len);
	mt_fill(self->src, 5 * PAGE, 13);
	db_dev(_metadata, self, true, &mr, 10 * PAGE + 16, 0, 5 * PAGE);
	db_check(_metadata, "memfd after the device's WRITE",
		 map + 10 * PAGE + 16, self->src, 5 * PAGE);

	db_dereg(_metadata, self->fd, mr.handle);
	close(bfd);
	munmap(map, len);
	close(memfd);
	close(ufd);
}

TEST_HARNESS_MAIN
