// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging (issue 6), modelled on the kernel's hmm-tests
 * (tools/testing/selftests/vm/hmm-tests.c): this process's memory is
 * registered with MRCT_REG | MRCT_ACCESS_ON_DEMAND over /dev/mrcore_test
 * on vhca, so nothing is pinned and the device maps pages when its
 * accesses fault, and is then used by the data path of a loopback RC pair
 * (MRCT_QP_POST): RDMA WRITE and READ with the ODP MR as target, source
 * or local SGE, SEND into an ODP receive buffer, atomics. Around those
 * accesses the CPU side changes under the device, as hmm-tests does it:
 * munmap and mmap again, mprotect, MADV_DONTNEED before every access,
 * fork with COW, a THP split, hugetlb memory, the process exiting with
 * ODP MRs live and WRs in flight, dereg racing a DONTNEED loop, a range
 * with no VMA; and prefetch (MRCT_ODP_ADVISE) with and without FLUSH and
 * NO_FAULT.
 *
 * Implicit ODP (address 0, length UINT64_MAX, iova 0) registers one KSM
 * key over the whole user address space, its iova the virtual address:
 * the first device fault into each 1 GiB block creates that block's
 * child MR (a key of its own), and a child whose pages are all gone is
 * reclaimed in the background. Its cases write and read several
 * mappings (anonymous, a shared memfd, distinct blocks) through the
 * parent's keys, watch children come and go (MRCT_ODP_STATS children,
 * children_created, children_reclaimed, and mrcore's "mkeys"), race
 * deregistration against MADV_DONTNEED, let a process exit with one
 * live, and prefetch through the parent.
 *
 * Each case checks the bytes the CPU sees and the counters: the MR's
 * (MRCT_ODP_STATS: faults, fault_pages, invalidations, prefetched_pages,
 * mapped_pages), mrcore's device-wide ones (the dev_* fields, and
 * /sys/kernel/debug/mrcore/<dev>/odp) and vhca's fault queue
 * (/sys/kernel/debug/vhca/<dev>/odp: faults, fault_errors, sync_faults,
 * the resume_us_N histogram); and every case ends with its MRs
 * deregistered. MRCT_DEV_READ / MRCT_DEV_WRITE never fault: they fail
 * -EAGAIN on a page the device has not mapped, which the cases use to see
 * what is mapped.
 *
 * Statuses asserted (drivers/vhca/fault.c, its header): a fault
 * that cannot be resolved (no VMA, a write to read-only memory) lets the
 * WQE run once more without faulting, so it fails with the walker's
 * access error: IB_WC_REM_ACCESS_ERR for the remote range,
 * IB_WC_LOC_PROT_ERR for a local SGE; the requester QP is then in ERR and
 * the case builds a new pair.
 *
 * vhca only (the counters are vhca's); the device is vhca0 unless
 * MRCT_DEVICE names another vhca device. Run as root (debugfs, hugetlb).
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"

#define PAGE		4096UL
#define HPAGE		(2UL << 20)

#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define RR		MRCT_ACCESS_REMOTE_READ
#define RA		MRCT_ACCESS_REMOTE_ATOMIC
#define ODP		MRCT_ACCESS_ON_DEMAND
#define QP_ACCESS	(LW | RW | RR | RA)

/* The pinned MR every case moves bytes from and to. */
#define SRC_LEN		HPAGE
#define SRC_IOVA	0x100000000ULL
/* iovas unlike the user addresses, so VA-for-iova confusion shows. */
#define ODP_IOVA	0x0dd000000000ULL
#define ODP2_IOVA	0x0ee000000000ULL

/*
 * How long a case waits for progress it cannot make happen itself (an
 * asynchronous prefetch, the reclaim work, a cleanup, a child's WRITEs)
 * before it fails for the lack of it. Never a verdict by the clock: a
 * slow machine only waits longer.
 */
#define POLL_MS		60000
/*
 * Rounds of the dereg races: they run that many, and on until the race
 * has had a success and a DONTNEED, or POLL_MS passes without them.
 */
#define RACE_ITERS	64
/* WRITE, then MADV_DONTNEED, rounds of implicit_reclaim_races_writes. */
#define RECLAIM_ROUNDS	2000

FIXTURE(odp)
{
	int fd;			/* -1: no vhca device, the case is skipped */
	struct mrct_qp_create pair;	/* PD 0, QP_ACCESS */
	uint8_t *src;		/* SRC_LEN bytes, pinned */
	struct mrct_reg src_mr;	/* QP_ACCESS (local and remote) */
};

FIXTURE_SETUP(odp)
{
	int err;

	self->fd = mt_fixture_open(_metadata);
	if (self->fd < 0)
		return;
	err = mt_pair(self->fd, 0, QP_ACCESS, 1, 0, &self->pair);
	if (err)
		TH_LOG("MRCT_QP_CREATE on %s: %s", mt_devname(), strerror(-err));
	ASSERT_EQ(0, err);
	if (!mt_fixture_vhca(_metadata, &self->fd, self->pair.flags))
		return;

	self->src = mt_fixture_pinned(_metadata, self->fd, SRC_LEN, SRC_IOVA,
				      QP_ACCESS, &self->src_mr);
}

/* Closing the file destroys the pairs and deregisters what is left. */
FIXTURE_TEARDOWN(odp)
{
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
}

/*
 * TEST_F whose body runs only when the fixture found a vhca device: 6.1's
 * harness runs the body after a SKIP in the setup. (struct _test_data_odp
 * is what FIXTURE_DATA(odp) names, spelled out so checkpatch reads it as
 * a type.)
 */
#define ODP_TEST_T(name, timeout)					\
	static void ot_##name(struct __test_metadata *_metadata,	\
			      struct _test_data_odp *self);		\
	TEST_F_TIMEOUT(odp, name, timeout)				\
	{								\
		if (self->fd >= 0)					\
			ot_##name(_metadata, self);			\
	}								\
	static void ot_##name(struct __test_metadata *_metadata,	\
			      struct _test_data_odp *self)

#define ODP_TEST(name)	ODP_TEST_T(name, 60)

/* --- memory, registration, counters --- */

/*
 * Anonymous memory, not touched. MADV_NOHUGEPAGE keeps the page counts
 * exact: one CPU touch must not make 512 pages present (it fails
 * harmlessly on a kernel without THP).
 */
static uint8_t *odp_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

/* An ODP MR of @len bytes at @p, iova @iova, on PD 0. */
static int odp_reg(int fd, void *p, size_t len, uint64_t iova,
		   uint32_t access, struct mrct_reg *reg)
{
	return mt_reg(fd, p, len, iova, access | ODP, 0, reg);
}

static void odp_stats(struct __test_metadata *_metadata, int fd,
		      uint32_t handle, struct mrct_odp_stats *st)
{
	int err;

	memset(st, 0, sizeof(*st));
	st->handle = handle;
	err = mt_ioctl(fd, MRCT_ODP_STATS, st);
	if (err)
		TH_LOG("MRCT_ODP_STATS of MR %u: %s", handle, strerror(-err));
	ASSERT_EQ(0, err);
}

static void odp_log_stats(struct __test_metadata *_metadata, const char *when,
			  const struct mrct_odp_stats *st)
{
	TH_LOG("%s: MR faults %llu fault_pages %llu invalidations %llu (%llu pages)",
	       when, (unsigned long long)st->faults,
	       (unsigned long long)st->fault_pages,
	       (unsigned long long)st->invalidations,
	       (unsigned long long)st->invalidated_pages);
	TH_LOG("%s: MR prefetched_pages %llu mapped_pages %llu; device faults %llu errors %llu",
	       when, (unsigned long long)st->prefetched_pages,
	       (unsigned long long)st->mapped_pages,
	       (unsigned long long)st->dev_faults,
	       (unsigned long long)st->dev_fault_errors);
}

static uint64_t odp_pinned(int fd)
{
	struct mrct_counters c = {};

	if (mt_ioctl(fd, MRCT_COUNTERS, &c))
		return UINT64_MAX;
	return c.pinned_vm;
}

/*
 * A value of /sys/kernel/debug/@dir/<device>/@file: the line "@key N"; or,
 * with @prefix, the sum of every line whose name starts with @key (a
 * histogram). -1 when the file cannot be read or has no such line.
 */
static long long odp_dbg_read(const char *dir, const char *file,
			      const char *key, bool prefix)
{
	char path[256], name[64];
	long long v, sum = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s/%s", dir,
		 mt_devname(), file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (prefix ? !strncmp(name, key, strlen(key)) :
			     !strcmp(name, key)) {
			sum += v;
			found = true;
		}
	}
	fclose(f);
	return found ? sum : -1;
}

/* vhca's fault queue: faults, fault_errors, sync_faults. */
static long long vhca_odp(const char *key)
{
	return odp_dbg_read("vhca", "odp", key, false);
}

/* mrcore's device counters: faults, fault_errors, fault_pages, ... */
static long long mrc_odp(const char *key)
{
	return odp_dbg_read("mrcore", "odp", key, false);
}

/* mrcore's device stats: mkeys, pds, ... */
static long long mrc_stat(const char *key)
{
	return odp_dbg_read("mrcore", "stats", key, false);
}

/* Every debugfs value a case reads must be there. */
static void odp_dbg_present(struct __test_metadata *_metadata)
{
	if (vhca_odp("faults") < 0)
		TH_LOG("no /sys/kernel/debug/vhca/%s/odp (debugfs mounted?)",
		       mt_devname());
	ASSERT_LE(0, vhca_odp("faults"));
	if (mrc_odp("faults") < 0)
		TH_LOG("no /sys/kernel/debug/mrcore/%s/odp", mt_devname());
	ASSERT_LE(0, mrc_odp("faults"));
	ASSERT_LE(0, mrc_stat("mkeys"));
}

/* MRCT_DEV_READ (@write false) or MRCT_DEV_WRITE through @handle's lkey. */
static int odp_dev(int fd, bool write, uint32_t handle, uint64_t iova,
		   void *buf, uint64_t len)
{
	struct mrct_xfer x = {
		.iova = iova,
		.length = len,
		.ptr = (uintptr_t)buf,
		.handle = handle,
	};

	return mt_ioctl(fd, write ? MRCT_DEV_WRITE : MRCT_DEV_READ, &x);
}

static int odp_advise(int fd, uint32_t handle, uint64_t addr, uint32_t len,
		      uint32_t advice, uint32_t flags, uint32_t pd)
{
	struct mrct_odp_advise a = {
		.addr = addr,
		.length = len,
		.handle = handle,
		.advice = advice,
		.flags = flags,
		.pd = pd,
	};

	return mt_ioctl(fd, MRCT_ODP_ADVISE, &a);
}

/* --- the data path --- */

/*
 * Post @p on QP A of the fixture's pair and wait: it must be accepted and
 * complete with @want, QP A then in RTS (success) or ERR.
 */
static void odp_post(struct __test_metadata *_metadata,
		     struct _test_data_odp *self, struct mrct_qp_post *p,
		     uint32_t want, const char *what)
{
	int err;

	p->handle = self->pair.handle;
	err = mt_ioctl(self->fd, MRCT_QP_POST, p);
	if (err)
		TH_LOG("%s: MRCT_QP_POST: %s%s", what, strerror(-err),
		       err == -ETIMEDOUT ?
		       " (no completion in 60 s: a parked QP never resumed?)" :
		       "");
	ASSERT_EQ(0, err);
	if (p->post_err)
		TH_LOG("%s: ib_post_send() refused the WR: %s", what,
		       strerror(-p->post_err));
	ASSERT_EQ(0, p->post_err);
	if (p->status != want)
		TH_LOG("%s: wc.status %u %s, want %u %s (vendor_err 0x%x)",
		       what, p->status, mt_wc_name(p->status), want,
		       mt_wc_name(want), p->vendor_err);
	ASSERT_EQ(want, p->status);
	if (p->qp_state[0] != (want ? MRCT_QPS_ERR : MRCT_QPS_RTS))
		TH_LOG("%s: QP A is %s after %s", what,
		       mt_qps_name(p->qp_state[0]), mt_wc_name(want));
	EXPECT_EQ(want ? MRCT_QPS_ERR : MRCT_QPS_RTS, p->qp_state[0]);
}

/*
 * The work request of an RDMA @opcode of @len bytes on QP A of the
 * fixture's pair: local SGE (@lkey, @laddr), remote @rkey @raddr.
 */
static struct mrct_qp_post odp_rdma_wr(const struct _test_data_odp *self,
				       uint32_t opcode, uint32_t lkey,
				       uint64_t laddr, uint32_t rkey,
				       uint64_t raddr, uint32_t len)
{
	return (struct mrct_qp_post){
		.handle = self->pair.handle,
		.opcode = opcode,
		.rkey = rkey,
		.remote_addr = raddr,
		.num_sge = 1,
		.sge[0] = { .addr = laddr, .length = len, .lkey = lkey },
	};
}

/* RDMA @opcode of @len bytes: local SGE (@lkey, @laddr), remote @rkey @raddr. */
static void odp_rdma(struct __test_metadata *_metadata,
		     struct _test_data_odp *self, uint32_t opcode,
		     uint32_t lkey, uint64_t laddr, uint32_t rkey,
		     uint64_t raddr, uint32_t len, uint32_t want,
		     const char *what)
{
	struct mrct_qp_post p = odp_rdma_wr(self, opcode, lkey, laddr, rkey,
					    raddr, len);

	odp_post(_metadata, self, &p, want, what);
}

/* RDMA WRITE of src[@soff, +@len) to @mr at its iova + @off. */
static void odp_write(struct __test_metadata *_metadata,
		      struct _test_data_odp *self, const struct mrct_reg *mr,
		      uint64_t off, uint64_t soff, uint32_t len, uint32_t want)
{
	odp_rdma(_metadata, self, MRCT_WR_RDMA_WRITE, self->src_mr.info.lkey,
		 SRC_IOVA + soff, mr->info.rkey, mr->iova + off, len, want,
		 "RDMA WRITE into the ODP MR");
}

/* RDMA READ of @mr at its iova + @off into src[@soff, +@len). */
static void odp_read(struct __test_metadata *_metadata,
		     struct _test_data_odp *self, const struct mrct_reg *mr,
		     uint64_t off, uint64_t soff, uint32_t len, uint32_t want)
{
	odp_rdma(_metadata, self, MRCT_WR_RDMA_READ, self->src_mr.info.lkey,
		 SRC_IOVA + soff, mr->info.rkey, mr->iova + off, len, want,
		 "RDMA READ from the ODP MR");
}

/* After an error completion: a new pair, the old one destroyed. */
static void odp_new_pair(struct __test_metadata *_metadata,
			 struct _test_data_odp *self)
{
	struct mrct_qp_destroy d = { .handle = self->pair.handle };

	EXPECT_EQ(0, mt_ioctl(self->fd, MRCT_QP_DESTROY, &d));
	ASSERT_EQ(0, mt_pair(self->fd, 0, QP_ACCESS, 1, 0, &self->pair));
}

/* @len bytes at @got are those at @want; the first that differs is logged. */
static void odp_check(struct __test_metadata *_metadata, const char *what,
		      const void *got, const void *want, size_t len)
{
	const uint8_t *g = got, *w = want;
	size_t i;

	for (i = 0; i < len; i++)
		if (g[i] != w[i])
			break;
	if (i < len)
		TH_LOG("%s: byte 0x%zx (page %zu) is 0x%02x, want 0x%02x", what,
		       i, i / PAGE, g[i], w[i]);
	EXPECT_EQ(len, i);
}

static void odp_check_zero(struct __test_metadata *_metadata,
			   const char *what, const void *got, size_t len)
{
	const uint8_t *g = got;
	size_t i;

	for (i = 0; i < len; i++)
		if (g[i])
			break;
	if (i < len)
		TH_LOG("%s: byte 0x%zx (page %zu) is 0x%02x, want 0", what, i,
		       i / PAGE, g[i]);
	EXPECT_EQ(len, i);
}

static void odp_dereg(struct __test_metadata *_metadata, int fd,
		      uint32_t handle)
{
	int err = mt_dereg(fd, handle);

	if (err)
		TH_LOG("MRCT_DEREG of ODP MR %u: %s", handle, strerror(-err));
	EXPECT_EQ(0, err);
}

static uint64_t odp_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void odp_set64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint64_t odp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* --- 1: registration --- */

/*
 * 1 MiB of ODP: nothing pinned, an MTT of 256 non-present 4 KiB entries,
 * no page mapped (a device read without a fault finds none), one key
 * more on the device and in restrack, and none once deregistered.
 */
ODP_TEST(odp_reg_pins_nothing)
{
	const size_t len = 1UL << 20;
	char cmd[128], line[1024], want_key[32];
	long long mkeys0 = mrc_stat("mkeys");
	uint64_t pinned0 = odp_pinned(self->fd);
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	bool found = false;
	uint8_t *buf, out[8];
	FILE *f;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));

	if (odp_pinned(self->fd) != pinned0)
		TH_LOG("pinned_vm went from %llu to %llu pages",
		       (unsigned long long)pinned0,
		       (unsigned long long)odp_pinned(self->fd));
	EXPECT_EQ(pinned0, odp_pinned(self->fd));
	EXPECT_EQ(MRCT_MODE_MTT, reg.info.mode);
	EXPECT_EQ(12, reg.info.page_shift);
	EXPECT_EQ(len / PAGE, reg.info.entries);
	EXPECT_EQ(mkeys0 + 1, mrc_stat("mkeys"));

	odp_stats(_metadata, self->fd, reg.handle, &st);
	EXPECT_EQ(0, st.mapped_pages);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(0, st.fault_pages);
	EXPECT_EQ(0, st.invalidations);
	EXPECT_EQ(0, st.prefetched_pages);
	/* MRCT_DEV_READ does not fault: nothing is mapped. */
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, false, reg.handle, ODP_IOVA, out,
				   sizeof(out)));
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, false, reg.handle,
				   ODP_IOVA + len - 1, out, 1));

	/* restrack: the MR, in MTT mode, with its ODP counters at 0. */
	snprintf(cmd, sizeof(cmd), "rdma res show mr dev %s -dd 2>&1",
		 mt_devname());
	snprintf(want_key, sizeof(want_key), "lkey 0x%x ", reg.info.lkey);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, want_key))
			continue;
		found = true;
		EXPECT_NE(NULL, strstr(line, "drv_mode MTT")) TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, "drv_odp_faults 0 "))
			TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, "drv_odp_mapped_pages 0"))
			TH_LOG("%s", line);
	}
	EXPECT_EQ(0, pclose(f));
	EXPECT_TRUE(found) TH_LOG("no MR with %sin '%s'", want_key, cmd);

	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	EXPECT_EQ(pinned0, odp_pinned(self->fd));
	munmap(buf, len);
}

/* --- 2, 3: faults on each side of the data path --- */

/*
 * An RDMA WRITE into 16 pages the CPU never touched: the QP parks, the
 * fault work maps the pages (writable), the WQE runs again; the CPU sees
 * the bytes. Counted by the MR, by mrcore and by vhca's fault queue.
 */
ODP_TEST(write_then_cpu_reads)
{
	const size_t npages = 16, len = npages * PAGE;
	long long vf0, vres0, mf0, mfp0, mhist0;
	struct mrct_odp_stats st0, st;
	struct mrct_reg reg;
	uint8_t *buf;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));
	odp_stats(_metadata, self->fd, reg.handle, &st0);
	vf0 = vhca_odp("faults");
	vres0 = odp_dbg_read("vhca", "odp", "resume_us_", true);
	mf0 = mrc_odp("faults");
	mfp0 = mrc_odp("fault_pages");
	mhist0 = odp_dbg_read("mrcore", "odp", "fault_us_", true);

	mt_fill(self->src, len, 21);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "ODP buffer after the WRITE", buf, self->src, len);

	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the WRITE", &st);
	EXPECT_LE(1, st.faults);
	EXPECT_LE(npages, st.fault_pages);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_EQ(0, st.invalidations);
	EXPECT_EQ(st0.dev_fault_errors, st.dev_fault_errors);
	EXPECT_LE(st0.dev_faults + 1, st.dev_faults);
	/* The device-wide counters in debugfs. */
	EXPECT_LE(vf0 + 1, vhca_odp("faults"));
	EXPECT_LE(vres0 + 1, odp_dbg_read("vhca", "odp", "resume_us_", true));
	EXPECT_LE(mf0 + 1, mrc_odp("faults"));
	EXPECT_LE(mfp0 + (long long)npages, mrc_odp("fault_pages"));
	EXPECT_LE(mhist0 + 1, odp_dbg_read("mrcore", "odp", "fault_us_", true));

	/* Mapped now: a device read needs no fault. */
	EXPECT_EQ(0, odp_dev(self->fd, false, reg.handle, ODP_IOVA + PAGE,
			     self->src + SRC_LEN - PAGE, PAGE));
	odp_check(_metadata, "DEV_READ after the WRITE",
		  self->src + SRC_LEN - PAGE, buf + PAGE, PAGE);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/* The ODP MR as an RDMA READ's remote source: read faults, CPU's bytes. */
ODP_TEST(read_from_odp)
{
	const size_t npages = 8, len = npages * PAGE;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	uint8_t *buf;

	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	mt_fill(buf, len, 31);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RR, &reg));

	/* Across every page, from a byte offset. */
	odp_read(_metadata, self, &reg, 100, 0, len - 100, MRCT_WC_SUCCESS);
	odp_check(_metadata, "READ of the ODP MR", self->src, buf + 100,
		  len - 100);

	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the READ", &st);
	EXPECT_LE(1, st.faults);
	EXPECT_LE(npages, st.fault_pages);
	EXPECT_EQ(npages, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/*
 * The ODP MR as the local gather list of an RDMA WRITE into the pinned
 * MR, and as the local scatter list of an RDMA READ from it.
 */
ODP_TEST(odp_as_local_sge)
{
	const size_t npages = 8, len = npages * PAGE, off = 100;
	struct mrct_reg gather, scatter;
	struct mrct_odp_stats st;
	uint8_t *g, *s;

	g = odp_map(len);
	s = odp_map(len);
	ASSERT_NE(NULL, g);
	ASSERT_NE(NULL, s);
	mt_fill(g, len, 32);
	ASSERT_EQ(0, odp_reg(self->fd, g, len, ODP_IOVA, LW, &gather));
	ASSERT_EQ(0, odp_reg(self->fd, s, len, ODP2_IOVA, LW, &scatter));

	/* Gather: the ODP bytes land in the pinned MR, nothing around them. */
	memset(self->src, 0, 2 * len);
	odp_rdma(_metadata, self, MRCT_WR_RDMA_WRITE, gather.info.lkey,
		 ODP_IOVA + off, self->src_mr.info.rkey, SRC_IOVA + off,
		 len - 2 * off, MRCT_WC_SUCCESS, "WRITE gathering from ODP");
	odp_check(_metadata, "pinned MR after the WRITE", self->src + off,
		  g + off, len - 2 * off);
	odp_check_zero(_metadata, "pinned MR before the WRITE's target",
		       self->src, off);
	odp_check_zero(_metadata, "pinned MR after the WRITE's target",
		       self->src + len - off, len + off);
	odp_stats(_metadata, self->fd, gather.handle, &st);
	odp_log_stats(_metadata, "gather MR", &st);
	EXPECT_LE(1, st.faults);
	EXPECT_EQ(npages, st.mapped_pages);

	/* Scatter: a READ landing in pages the CPU never touched. */
	mt_fill(self->src, len, 33);
	odp_rdma(_metadata, self, MRCT_WR_RDMA_READ, scatter.info.lkey,
		 ODP2_IOVA, self->src_mr.info.rkey, SRC_IOVA, len,
		 MRCT_WC_SUCCESS, "READ scattering into ODP");
	odp_check(_metadata, "ODP scatter buffer after the READ", s,
		  self->src, len);
	odp_stats(_metadata, self->fd, scatter.handle, &st);
	odp_log_stats(_metadata, "scatter MR", &st);
	EXPECT_LE(1, st.faults);
	EXPECT_EQ(npages, st.mapped_pages);

	odp_dereg(_metadata, self->fd, gather.handle);
	odp_dereg(_metadata, self->fd, scatter.handle);
}

/*
 * A SEND of @npages into a receive buffer that is ODP and never touched:
 * the receive is taken before its scatter list is walked, so the fault is
 * resolved in place, in the engine's worker (vhca's sync_faults), never
 * in a run that cannot sleep (fault_errors stays).
 */
static void send_into_odp(struct __test_metadata *_metadata,
			  struct _test_data_odp *self, size_t npages)
{
	const size_t len = npages * PAGE;
	struct mrct_qp_recv r = {};
	struct mrct_qp_post p = {};
	struct mrct_odp_stats st;
	long long sync0, err0;
	struct mrct_reg reg;
	uint8_t *buf;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW, &reg));
	sync0 = vhca_odp("sync_faults");
	err0 = vhca_odp("fault_errors");

	r.handle = self->pair.handle;
	r.qp = 1;
	r.num_sge = 1;
	r.sge[0].addr = ODP_IOVA;
	r.sge[0].length = len;
	r.sge[0].lkey = reg.info.lkey;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &r));
	ASSERT_EQ(0, r.post_err);

	mt_fill(self->src, len, 34);
	p.opcode = MRCT_WR_SEND;
	p.flags = MRCT_POST_WAIT_RECV;
	p.num_sge = 1;
	p.sge[0].addr = SRC_IOVA;
	p.sge[0].length = len;
	p.sge[0].lkey = self->src_mr.info.lkey;
	odp_post(_metadata, self, &p, MRCT_WC_SUCCESS, "SEND into ODP");
	if (p.recv_status != MRCT_WC_SUCCESS)
		TH_LOG("receive completion %u %s", p.recv_status,
		       mt_wc_name(p.recv_status));
	EXPECT_EQ(MRCT_WC_SUCCESS, p.recv_status);
	EXPECT_EQ(MRCT_WC_RECV, p.recv_opcode);
	EXPECT_EQ(len, p.recv_byte_len);
	odp_check(_metadata, "ODP receive buffer", buf, self->src, len);

	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "receive MR", &st);
	EXPECT_LE(1, st.faults);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_LE(sync0 + 1, vhca_odp("sync_faults"));
	EXPECT_EQ(err0, vhca_odp("fault_errors"));

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/* Four pages: longer than a kernel post_send runs itself. */
ODP_TEST(send_recv_into_odp)
{
	send_into_odp(_metadata, self, 4);
}

/*
 * One page: short enough for vhca's post_send to run it (post_bytes),
 * which must leave it to the worker, as the receive faults in place.
 */
ODP_TEST(send_page_into_odp)
{
	send_into_odp(_metadata, self, 1);
}

/* A SEND gathering from ODP: the source is probed (and faults) first. */
ODP_TEST(send_from_odp)
{
	const size_t npages = 4, len = npages * PAGE;
	struct mrct_qp_recv r = {};
	struct mrct_qp_post p = {};
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	long long vf0;
	uint8_t *buf;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	mt_fill(buf, len, 35);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW, &reg));
	vf0 = vhca_odp("faults");

	memset(self->src, 0, len);
	r.handle = self->pair.handle;
	r.qp = 1;
	r.num_sge = 1;
	r.sge[0].addr = SRC_IOVA;
	r.sge[0].length = len;
	r.sge[0].lkey = self->src_mr.info.lkey;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST_RECV, &r));
	ASSERT_EQ(0, r.post_err);

	p.opcode = MRCT_WR_SEND;
	p.flags = MRCT_POST_WAIT_RECV;
	p.num_sge = 1;
	p.sge[0].addr = ODP_IOVA;
	p.sge[0].length = len;
	p.sge[0].lkey = reg.info.lkey;
	odp_post(_metadata, self, &p, MRCT_WC_SUCCESS, "SEND from ODP");
	EXPECT_EQ(MRCT_WC_SUCCESS, p.recv_status);
	EXPECT_EQ(len, p.recv_byte_len);
	odp_check(_metadata, "pinned receive buffer", self->src, buf, len);

	odp_stats(_metadata, self->fd, reg.handle, &st);
	EXPECT_LE(1, st.faults);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_LE(vf0 + 1, vhca_odp("faults"));

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/* --- 4-6: the CPU's page tables change under the device --- */

/*
 * munmap of the range invalidates every mapped page; new anonymous
 * memory mapped at the same address is what the next write lands in.
 */
ODP_TEST(munmap_mmap_again)
{
	const size_t npages = 8, len = npages * PAGE;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	uint8_t *buf, *again, out[8];

	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));

	mt_fill(self->src, len, 41);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "first mapping", buf, self->src, len);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	EXPECT_EQ(npages, st.mapped_pages);

	ASSERT_EQ(0, munmap(buf, len));
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after munmap", &st);
	EXPECT_LE(1, st.invalidations);
	EXPECT_EQ(npages, st.invalidated_pages);
	EXPECT_EQ(0, st.mapped_pages);
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, false, reg.handle, ODP_IOVA, out,
				   sizeof(out)));

	again = mmap(buf, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(buf, again);
	mt_fill(self->src, len, 42);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "new mapping at the same address", buf,
		  self->src, len);

	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the second WRITE", &st);
	EXPECT_LE(2, st.faults);
	EXPECT_LE(2 * npages, st.fault_pages);
	EXPECT_EQ(npages, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/*
 * mprotect(PROT_READ): the device may still read, but a write's fault
 * cannot be resolved (-EPERM in mrcore), so the WRITE fails with
 * REM_ACCESS_ERR and not a byte changes.
 */
ODP_TEST(mprotect_read_only)
{
	const size_t npages = 4, len = npages * PAGE;
	long long verr0;
	struct mrct_odp_stats st0, st;
	struct mrct_reg reg;
	uint8_t *buf, *want;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	want = malloc(len);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, want);
	mt_fill(buf, len, 51);
	memcpy(want, buf, len);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));
	ASSERT_EQ(0, mprotect(buf, len, PROT_READ));

	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "READ of read-only memory", self->src, want, len);

	odp_stats(_metadata, self->fd, reg.handle, &st0);
	verr0 = vhca_odp("fault_errors");
	mt_fill(self->src, len, 52);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_REM_ACCESS_ERR);
	odp_check(_metadata, "read-only memory after the refused WRITE", buf,
		  want, len);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the refused WRITE", &st);
	EXPECT_LE(st0.dev_fault_errors + 1, st.dev_fault_errors);
	EXPECT_LE(verr0 + 1, vhca_odp("fault_errors"));

	/* The MR still serves reads, on a new pair. */
	odp_new_pair(_metadata, self);
	memset(self->src, 0, len);
	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "READ after the refused WRITE", self->src, want,
		  len);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
	free(want);
}

/*
 * MADV_DONTNEED before every access: each drops the page (an
 * invalidation once the device had it), so each write faults anew.
 */
ODP_TEST(dontneed_every_access)
{
	const unsigned int n = 32;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	uint8_t *buf, out[8];
	unsigned int i;
	int err;

	buf = odp_map(2 * PAGE);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, 2 * PAGE, ODP_IOVA, LW | RW | RR,
			     &reg));

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, madvise(buf, PAGE, MADV_DONTNEED));
		/* Zapped: the device has no page until it faults. */
		err = odp_dev(self->fd, false, reg.handle, ODP_IOVA, out,
			      sizeof(out));
		if (err != -EAGAIN)
			TH_LOG("access %u: DEV_READ %d after DONTNEED, want -EAGAIN",
			       i, err);
		EXPECT_EQ(-EAGAIN, err);
		mt_fill(self->src, PAGE, 600 + i);
		odp_write(_metadata, self, &reg, 0, 0, PAGE, MRCT_WC_SUCCESS);
		odp_check(_metadata, "page after DONTNEED and WRITE", buf,
			  self->src, PAGE);
	}

	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the loop", &st);
	EXPECT_LE(n, st.faults);
	EXPECT_LE(n - 1, st.invalidations);
	EXPECT_LE(n - 1, st.invalidated_pages);
	EXPECT_EQ(1, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, 2 * PAGE);
}

/* --- 7: fork --- */

/* In a child: @len bytes at @p are those of mt_fill(seed)? 0 if so. */
static int odp_child_check(const uint8_t *p, size_t len, uint64_t seed)
{
	uint8_t *want = malloc(len);
	int bad;

	if (!want)
		return 2;
	mt_fill(want, len, seed);
	bad = memcmp(p, want, len) != 0;
	free(want);
	return bad;
}

static void odp_wait_child(struct __test_metadata *_metadata, pid_t pid,
			   const char *what)
{
	int status;

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		TH_LOG("%s: child status 0x%x (1: its bytes were wrong)", what,
		       status);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * fork write-protects the parent's pages, which invalidates the device's
 * mappings of them; the child's COW copy is its own, the device keeps
 * following the parent's pages. A parent write to a page the child still
 * shares moves the parent to a new page: another invalidation, and the
 * device then reads the new page, not the child's.
 */
ODP_TEST(fork_cow)
{
	const size_t npages = 4, len = npages * PAGE;
	struct mrct_odp_stats st0, st;
	struct mrct_reg reg;
	int pipefd[2];
	uint8_t *buf;
	pid_t pid;
	char c;

	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	mt_fill(buf, len, 71);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));
	mt_fill(self->src, len, 72);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "parent before fork", buf, self->src, len);
	odp_stats(_metadata, self->fd, reg.handle, &st0);
	EXPECT_EQ(npages, st0.mapped_pages);

	/* The child sees the device's bytes, then writes its own. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int bad = odp_child_check(buf, len, 72);

		mt_fill(buf, len, 73);
		_exit(bad);
	}
	odp_wait_child(_metadata, pid, "child after its COW writes");

	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after fork", &st);
	EXPECT_LE(st0.invalidations + 1, st.invalidations);

	/* The device reads the parent's bytes, not the child's. */
	memset(self->src, 0, len);
	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	mt_fill(self->src + len, len, 72);
	odp_check(_metadata, "device READ after the child's COW", self->src,
		  self->src + len, len);
	odp_check(_metadata, "parent's CPU after the child's COW", buf,
		  self->src + len, len);
	/* And writes the parent's pages. */
	mt_fill(self->src, len, 74);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "parent's CPU after the device WRITE", buf,
		  self->src, len);

	/* A child that keeps sharing the pages while the parent writes. */
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[1]);
		if (read(pipefd[0], &c, 1) < 0)
			_exit(3);
		_exit(odp_child_check(buf, len, 74));
	}
	close(pipefd[0]);
	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	mt_fill(self->src + len, len, 74);
	odp_check(_metadata, "device READ of the shared pages", self->src,
		  self->src + len, len);
	odp_stats(_metadata, self->fd, reg.handle, &st0);
	EXPECT_EQ(npages, st0.mapped_pages);

	mt_fill(buf, len, 75);		/* COW: the parent gets new pages */
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the parent's COW writes", &st);
	EXPECT_LE(st0.invalidations + 1, st.invalidations);
	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "device READ after the parent's COW", self->src,
		  buf, len);

	close(pipefd[1]);
	odp_wait_child(_metadata, pid, "child sharing the pages");

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/* --- 8, 9: huge pages --- */

/*
 * A THP-backed 2 MiB region written by the device, then split by a
 * MADV_DONTNEED of one 4 KiB page inside it: the split and the zap
 * invalidate, the next write faults the range in again as 4 KiB pages.
 */
ODP_TEST_T(thp_split, 120)
{
	const size_t hpage = mt_thp_size(), len = 2 * hpage, hole = 5 * PAGE;
	struct mrct_odp_stats st1, st;
	struct mrct_reg reg;
	uint8_t *raw, *p, *want, out[8];
	long kb;

	if (!hpage)
		SKIP(return, "no THP: transparent_hugepage/enabled is never or absent");
	if (hpage > SRC_LEN)
		SKIP(return, "THPs of %zu bytes: more than the %lu-byte source",
		     hpage, SRC_LEN);
	raw = mmap(NULL, len + hpage, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	p = (uint8_t *)(((uintptr_t)raw + hpage - 1) & ~(hpage - 1));
	ASSERT_EQ(0, madvise(p, len, MADV_HUGEPAGE));
	mt_fill(p, len, 81);
	/* Decided before any check: a SKIP after one would hide it. */
	kb = mt_anon_huge_kb(p);
	if (kb != (long)(len >> 10)) {
		munmap(raw, len + hpage);
		SKIP(return, "the kernel gave %ld kB of THP, not %zu", kb,
		     len >> 10);
	}
	/*
	 * The huge pages stay as they are; khugepaged will not collapse the
	 * one split below back while the case looks at it.
	 */
	ASSERT_EQ(0, madvise(p, len, MADV_NOHUGEPAGE));
	want = malloc(len);
	ASSERT_NE(NULL, want);
	memcpy(want, p, len);

	ASSERT_EQ(0, odp_reg(self->fd, p, len, ODP_IOVA, LW | RW | RR, &reg));
	mt_fill(self->src, hpage, 82);
	odp_write(_metadata, self, &reg, 0, 0, hpage, MRCT_WC_SUCCESS);
	memcpy(want, self->src, hpage);
	odp_check(_metadata, "THP region after the huge-page WRITE", p, want,
		  len);
	odp_stats(_metadata, self->fd, reg.handle, &st1);
	odp_log_stats(_metadata, "after the first WRITE", &st1);
	EXPECT_LE(hpage / PAGE, st1.mapped_pages);

	/* Split: 4 KiB dropped inside the first huge page. */
	ASSERT_EQ(0, madvise(p + hole, PAGE, MADV_DONTNEED));
	/* The kernel's word for it: only the second is still PMD-mapped. */
	EXPECT_EQ((long)((len - hpage) >> 10), mt_anon_huge_kb(p));
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the DONTNEED", &st);
	EXPECT_LE(st1.invalidations + 1, st.invalidations);
	EXPECT_LE(st1.invalidated_pages + 1, st.invalidated_pages);
	EXPECT_GT(st1.mapped_pages, st.mapped_pages);
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, false, reg.handle,
				   ODP_IOVA + hole, out, sizeof(out)));
	memset(want + hole, 0, PAGE);
	odp_check(_metadata, "THP region after the split", p, want, len);

	mt_fill(self->src, hpage, 83);
	odp_write(_metadata, self, &reg, 0, 0, hpage, MRCT_WC_SUCCESS);
	memcpy(want, self->src, hpage);
	odp_check(_metadata, "split region after the second WRITE", p, want,
		  len);
	/* The second huge page, which the device never touched, read back. */
	odp_read(_metadata, self, &reg, hpage, 0, hpage, MRCT_WC_SUCCESS);
	odp_check(_metadata, "READ of the second huge page", self->src,
		  want + hpage, hpage);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "at the end", &st);
	EXPECT_LE(st1.faults + 2, st.faults);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(raw, len + hpage);
	free(want);
}

/*
 * hugetlb memory behind an ODP MR: written and read by the device. One
 * 2 MiB page (mt_hugetlb_map() has the kernel's word for the size).
 */
ODP_TEST_T(hugetlb, 120)
{
	const size_t len = HPAGE, half = HPAGE / 2;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	const char *why;
	uint8_t *buf;
	long old;

	why = mt_hugetlb_map(1, &old, &buf);
	if (why)
		SKIP(return, "%s", why);

	/* Not touched by the CPU: the device's fault allocates the page. */
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));
	mt_fill(self->src, half, 91);
	odp_write(_metadata, self, &reg, 0, 0, half, MRCT_WC_SUCCESS);
	odp_check(_metadata, "hugetlb page after the WRITE", buf, self->src,
		  half);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the WRITE", &st);
	EXPECT_LE(1, st.faults);
	EXPECT_LE(half / PAGE, st.fault_pages);
	EXPECT_LE(half / PAGE, st.mapped_pages);

	mt_fill(buf + half, half, 92);
	odp_read(_metadata, self, &reg, half, 0, half, MRCT_WC_SUCCESS);
	odp_check(_metadata, "READ of the hugetlb page", self->src,
		  buf + half, half);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	EXPECT_EQ(len / PAGE, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
	mt_hugetlb_restore(old);
}

/* --- 10, 11: process exit, dereg racing invalidations --- */

/* In a child: RDMA WRITE of @len bytes of the pinned @src to @rkey @raddr. */
static int odp_child_write_at(int fd, uint32_t pair,
			      const struct mrct_reg *src, uint32_t rkey,
			      uint64_t raddr, size_t len)
{
	struct mrct_qp_post p = {};

	p.handle = pair;
	p.opcode = MRCT_WR_RDMA_WRITE;
	p.rkey = rkey;
	p.remote_addr = raddr;
	p.num_sge = 1;
	p.sge[0].addr = src->iova;
	p.sge[0].length = len;
	p.sge[0].lkey = src->info.lkey;
	if (mt_ioctl(fd, MRCT_QP_POST, &p) || p.post_err ||
	    p.status != MRCT_WC_SUCCESS)
		return 15;
	return 0;
}

/* In a child: RDMA WRITE of @len bytes of the pinned @src to @mr. */
static int odp_child_write(int fd, uint32_t pair, const struct mrct_reg *src,
			   const struct mrct_reg *mr, size_t len)
{
	return odp_child_write_at(fd, pair, src, mr->info.rkey, mr->iova, len);
}

/*
 * In a child: a context of its own with a pair, and a pinned source of
 * @len bytes filled from @seed at SRC_IOVA. Return: the file, or minus
 * the step that failed (10-13).
 */
static int odp_child_open(size_t len, unsigned int seed,
			  struct mrct_qp_create *qc, uint8_t **src,
			  struct mrct_reg *src_mr)
{
	int fd;

	fd = mt_open(mt_devname());
	if (fd < 0)
		return -10;
	if (mt_pair(fd, 0, QP_ACCESS, 1, 0, qc))
		return -11;
	*src = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*src == MAP_FAILED)
		return -12;
	mt_fill(*src, len, seed);
	if (mt_reg(fd, *src, len, SRC_IOVA, LW, 0, src_mr))
		return -13;
	return fd;
}

/*
 * In a child: a context of its own, a pair, a pinned source and @nmrs
 * ODP MRs of @mr_len bytes, each written once by RDMA (a fault each);
 * then a byte to @ready. With @forever it goes on writing them, their
 * pages dropped (MADV_DONTNEED) before each pass so that every WRITE
 * faults, until it is killed. It never deregisters and never closes the
 * file: exit does that. Return: 0, or the step that failed (10-17).
 */
static int odp_exit_child(int ready, unsigned int nmrs, size_t mr_len,
			  bool forever)
{
	struct mrct_reg src_mr, *regs;
	struct mrct_qp_create qc;
	uint8_t *src, *buf;
	unsigned int i;
	int fd, err;

	fd = odp_child_open(mr_len, 101, &qc, &src, &src_mr);
	if (fd < 0)
		return -fd;
	buf = odp_map(nmrs * mr_len);
	regs = calloc(nmrs, sizeof(*regs));
	if (!buf || !regs)
		return 12;
	for (i = 0; i < nmrs; i++) {
		if (odp_reg(fd, buf + i * mr_len, mr_len,
			    ODP_IOVA + i * mr_len, LW | RW, &regs[i]))
			return 14;
		err = odp_child_write(fd, qc.handle, &src_mr, &regs[i],
				      mr_len);
		if (err)
			return err;
		if (memcmp(buf + i * mr_len, src, mr_len))
			return 16;
	}
	if (write(ready, "x", 1) != 1)
		return 17;
	while (forever) {
		madvise(buf, nmrs * mr_len, MADV_DONTNEED);
		for (i = 0; i < nmrs; i++) {
			err = odp_child_write(fd, qc.handle, &src_mr,
					      &regs[i], mr_len);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Fork a child running @fn (odp_exit_child() or a sibling, which writes a
 * byte to its @ready after its first pass) and wait until that pass is
 * done. Return: its pid, or -1 (its exit status logged) if it failed
 * before.
 */
static pid_t odp_spawn_fn(struct __test_metadata *_metadata,
			  int (*fn)(int ready, unsigned int n, size_t len,
				    bool forever),
			  unsigned int nmrs, size_t mr_len, bool forever)
{
	int ready[2], status;
	pid_t pid;
	char c;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (!pid) {
		close(ready[0]);
		_exit(fn(ready[1], nmrs, mr_len, forever));
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		TH_LOG("child gone (status 0x%x) before its first pass was done",
		       status);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

/* odp_spawn_fn() of odp_exit_child(). */
static pid_t odp_spawn(struct __test_metadata *_metadata, unsigned int nmrs,
		       size_t mr_len, bool forever)
{
	return odp_spawn_fn(_metadata, odp_exit_child, nmrs, mr_len, forever);
}

/* What a child process held on the device, and the kernel's pins. */
struct odp_held {
	long long mkeys;
	long long pds;
	long long pins;		/* mt_foll_pins() */
};

static void odp_held(struct odp_held *h)
{
	h->mkeys = mrc_stat("mkeys");
	h->pds = mrc_stat("pds");
	h->pins = mt_foll_pins();
}

/*
 * mrcore's mkeys and PDs, and the kernel's pin count (the child's pinned
 * source), back to @h0 once a child is gone: polled, up to POLL_MS.
 */
static void odp_wait_clean(struct __test_metadata *_metadata,
			   const struct odp_held *h0, const char *what)
{
	uint64_t end = odp_now_ms() + POLL_MS;
	struct odp_held h;

	for (;;) {
		odp_held(&h);
		if (!memcmp(&h, h0, sizeof(h)) || odp_now_ms() > end)
			break;
		usleep(10000);
	}
	if (memcmp(&h, h0, sizeof(h)))
		TH_LOG("%s: mkeys %lld pds %lld pins %lld, before %lld %lld %lld",
		       what, h.mkeys, h.pds, h.pins, h0->mkeys, h0->pds,
		       h0->pins);
	EXPECT_EQ(h0->mkeys, h.mkeys);
	EXPECT_EQ(h0->pds, h.pds);
	EXPECT_EQ(h0->pins, h.pins);
}

/*
 * Wait until vhca's fault count passes @from + @n: the child spawned with
 * @forever is in its loop, faulting. Up to POLL_MS, then a failure.
 */
static void odp_wait_faults(struct __test_metadata *_metadata,
			    long long from, long long n)
{
	uint64_t end = odp_now_ms() + POLL_MS;

	while (vhca_odp("faults") < from + n && odp_now_ms() <= end)
		usleep(1000);
	if (vhca_odp("faults") < from + n)
		TH_LOG("the child made %lld faults in %u ms, want %lld",
		       vhca_odp("faults") - from, POLL_MS, n);
	ASSERT_LE(from + n, vhca_odp("faults"));
}

/*
 * A process exits with ODP MRs registered (its address space is torn
 * down first, then its file closed); another is killed with a WRITE
 * parked on a fault or in flight. Neither leaves a key or a PD behind,
 * and the device still works.
 */
ODP_TEST_T(process_exit_with_live_odp, 240)
{
	struct odp_held h0;
	struct mrct_reg reg;
	long long f0;
	uint8_t *buf;
	int status;
	pid_t pid;

	odp_dbg_present(_metadata);
	odp_held(&h0);
	ASSERT_LE(0, h0.pins);

	/* Exits on its own after its writes, without dereg or close. */
	pid = odp_spawn(_metadata, 4, 64 * 1024, false);
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		TH_LOG("child status 0x%x (10-17: odp_exit_child's step)",
		       status);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	odp_wait_clean(_metadata, &h0, "after the child's exit");

	/*
	 * Killed while it writes, each WRITE faulting: once its loop has
	 * faulted all 4 MRs in again, so that it is seen to be in it.
	 */
	pid = odp_spawn(_metadata, 4, 1UL << 20, true);
	ASSERT_LT(0, pid);
	f0 = vhca_odp("faults");
	odp_wait_faults(_metadata, f0, 4);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!WIFSIGNALED(status))
		TH_LOG("child status 0x%x (10-17: odp_exit_child's step)",
		       status);
	EXPECT_TRUE(WIFSIGNALED(status));
	odp_wait_clean(_metadata, &h0, "after the child was killed");

	/* The device still faults and moves bytes for this process. */
	buf = odp_map(4 * PAGE);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, 4 * PAGE, ODP_IOVA, LW | RW, &reg));
	mt_fill(self->src, 4 * PAGE, 102);
	odp_write(_metadata, self, &reg, 0, 0, 4 * PAGE, MRCT_WC_SUCCESS);
	odp_check(_metadata, "WRITE after the children", buf, self->src,
		  4 * PAGE);
	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, 4 * PAGE);
}

struct odp_dontneed {
	uint8_t *buf;
	size_t len;
	bool stop;		/* __atomic_* */
	unsigned long calls;	/* __atomic_* */
	int err;
};

static void *odp_dontneed_loop(void *arg)
{
	struct odp_dontneed *d = arg;

	while (!__atomic_load_n(&d->stop, __ATOMIC_RELAXED)) {
		if (madvise(d->buf, d->len, MADV_DONTNEED)) {
			d->err = errno;
			break;
		}
		__atomic_fetch_add(&d->calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Whether a dereg race goes on after @iters rounds with @ok successes:
 * until RACE_ITERS rounds, a success and a DONTNEED of @d's thread have
 * all been seen, or POLL_MS from @start passed without them (a failure,
 * which the caller's checks report), or a round went wrong (@bad).
 */
static bool odp_race_more(const struct odp_dontneed *d, uint64_t start,
			  unsigned int iters, unsigned int ok,
			  unsigned int bad)
{
	if (bad || odp_now_ms() > start + POLL_MS)
		return false;
	return iters < RACE_ITERS || !ok ||
	       !__atomic_load_n(&d->calls, __ATOMIC_RELAXED);
}

/* The first 8-byte word of @got that is neither @want's nor 0; or @len. */
static size_t odp_word_or_zero(const uint8_t *got, const uint8_t *want,
			       size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t g = odp_get64(got + i);

		if (g && g != odp_get64(want + i))
			break;
	}
	return i < len ? i : len;
}

/*
 * One round of a race with odp_dontneed_loop(): an RDMA WRITE of @d's
 * length of the pinned source, filled from @seed, through @reg at @raddr
 * (@d's buffer). Return: true for a success, after which every 8-byte
 * word of the buffer must be the written one or 0 (dropped since; a
 * word that is neither is logged and counted in @bad); false for a
 * clean REM_ACCESS_ERR, after which the pair is replaced.
 */
static bool odp_race_write(struct __test_metadata *_metadata,
			   struct _test_data_odp *self,
			   const struct mrct_reg *reg, uint64_t raddr,
			   const struct odp_dontneed *d, unsigned int iter,
			   unsigned int seed, unsigned int *bad)
{
	struct mrct_qp_post p = odp_rdma_wr(self, MRCT_WR_RDMA_WRITE,
					    self->src_mr.info.lkey, SRC_IOVA,
					    reg->info.rkey, raddr, d->len);
	size_t i;
	int err;

	mt_fill(self->src, d->len, seed);
	err = mt_ioctl(self->fd, MRCT_QP_POST, &p);
	if (err)
		TH_LOG("iteration %u: MRCT_QP_POST: %s", iter, strerror(-err));
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, p.post_err);
	if (p.status != MRCT_WC_SUCCESS) {
		if (p.status != MRCT_WC_REM_ACCESS_ERR)
			TH_LOG("iteration %u: wc.status %u %s, want SUCCESS or %s",
			       iter, p.status, mt_wc_name(p.status),
			       mt_wc_name(MRCT_WC_REM_ACCESS_ERR));
		ASSERT_EQ(MRCT_WC_REM_ACCESS_ERR, p.status);
		odp_new_pair(_metadata, self);
		return false;
	}
	i = odp_word_or_zero(d->buf, self->src, d->len);
	if (i < d->len) {
		TH_LOG("iteration %u: word 0x%zx is 0x%llx, want 0x%llx or 0",
		       iter, i, (unsigned long long)odp_get64(d->buf + i),
		       (unsigned long long)odp_get64(self->src + i));
		(*bad)++;
	}
	return true;
}

/*
 * One thread drops the buffer's pages in a loop while the main thread
 * registers an ODP MR over it, WRITEs it, checks it and deregisters it,
 * RACE_ITERS times (and on until one WRITE succeeded). No hang (a WR that
 * never completes is -ETIMEDOUT), no failed dereg; every completion is a
 * success or, if invalidations kept the fault from settling, a clean
 * REM_ACCESS_ERR. After a success every 8-byte word is the written one or
 * 0 (dropped since): never stale or foreign bytes.
 */
ODP_TEST_T(dereg_races_dontneed, 180)
{
	const size_t npages = 16, len = npages * PAGE;
	unsigned int iters = 0, ok = 0, errs = 0, bad = 0;
	struct odp_dontneed d = {};
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	pthread_t thread;
	uint64_t start;

	d.buf = odp_map(len);
	d.len = len;
	ASSERT_NE(NULL, d.buf);
	ASSERT_EQ(0, pthread_create(&thread, NULL, odp_dontneed_loop, &d));

	start = odp_now_ms();
	while (odp_race_more(&d, start, iters, ok, bad)) {
		iters++;
		ASSERT_EQ(0, odp_reg(self->fd, d.buf, len, ODP_IOVA, LW | RW,
				     &reg));
		if (odp_race_write(_metadata, self, &reg, ODP_IOVA, &d, iters,
				   1100 + iters, &bad)) {
			ok++;
			odp_stats(_metadata, self->fd, reg.handle, &st);
			if (!st.faults)
				TH_LOG("iteration %u: a WRITE into a new ODP MR without a fault",
				       iters);
			EXPECT_LE(1, st.faults);
		} else {
			errs++;
		}
		odp_dereg(_metadata, self->fd, reg.handle);
	}
	__atomic_store_n(&d.stop, true, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(thread, NULL));

	TH_LOG("%u iterations in %llu ms: %u successes, %u REM_ACCESS_ERR; %lu DONTNEEDs",
	       iters, (unsigned long long)(odp_now_ms() - start), ok, errs,
	       d.calls);
	EXPECT_EQ(0, d.err);
	EXPECT_EQ(0, bad);
	EXPECT_LE(1, ok);
	EXPECT_LE(1, d.calls);
	munmap(d.buf, len);
}

/* --- 12: no VMA --- */

/*
 * The range unmapped after registration: a fault finds no VMA (-EFAULT
 * in mrcore), so the access fails: REM_ACCESS_ERR as an RDMA target or
 * source, LOC_PROT_ERR as a local SGE. Counted as fault errors, never as
 * the MR's faults.
 */
ODP_TEST(no_vma_access_error)
{
	const size_t npages = 4, len = npages * PAGE;
	struct mrct_odp_stats st0, st;
	long long verr0;
	struct mrct_reg reg;
	uint8_t *buf;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));
	ASSERT_EQ(0, munmap(buf, len));
	odp_stats(_metadata, self->fd, reg.handle, &st0);
	verr0 = vhca_odp("fault_errors");

	mt_fill(self->src, len, 121);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_REM_ACCESS_ERR);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the WRITE", &st);
	EXPECT_LE(st0.dev_fault_errors + 1, st.dev_fault_errors);
	EXPECT_LE(verr0 + 1, vhca_odp("fault_errors"));
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(0, st.mapped_pages);

	odp_new_pair(_metadata, self);
	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_REM_ACCESS_ERR);

	odp_new_pair(_metadata, self);
	odp_rdma(_metadata, self, MRCT_WR_RDMA_WRITE, reg.info.lkey, ODP_IOVA,
		 self->src_mr.info.rkey, SRC_IOVA, len, MRCT_WC_LOC_PROT_ERR,
		 "WRITE gathering from an unmapped ODP range");
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "at the end", &st);
	EXPECT_LE(st0.dev_fault_errors + 3, st.dev_fault_errors);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(0, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
}

/* --- 13-15: prefetch --- */

/*
 * PREFETCH_WRITE with FLUSH maps the whole MR writable before it
 * returns: the device then writes without a single fault (a DEV_WRITE,
 * which never faults, succeeds too).
 */
ODP_TEST(prefetch_flush)
{
	const size_t npages = 64, len = npages * PAGE;
	struct mrct_odp_stats st0, st;
	long long vf0, mpf0;
	struct mrct_reg reg;
	uint8_t *buf;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));
	odp_stats(_metadata, self->fd, reg.handle, &st0);
	mpf0 = mrc_odp("prefetches");

	ASSERT_EQ(0, odp_advise(self->fd, reg.handle, ODP_IOVA, len,
				MRCT_ADVISE_PREFETCH_WRITE, MRCT_ADVISE_FLUSH,
				0));
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the prefetch", &st);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_EQ(npages, st.prefetched_pages);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(st0.dev_prefetches + 1, st.dev_prefetches);
	EXPECT_LE(st0.dev_prefetched_pages + npages, st.dev_prefetched_pages);
	EXPECT_LE(mpf0 + 1, mrc_odp("prefetches"));

	/* Mapped writable: a device write that cannot fault succeeds. */
	mt_fill(self->src, PAGE, 131);
	EXPECT_EQ(0, odp_dev(self->fd, true, reg.handle, ODP_IOVA + 3 * PAGE,
			     self->src, PAGE));
	odp_check(_metadata, "DEV_WRITE after the prefetch", buf + 3 * PAGE,
		  self->src, PAGE);

	vf0 = vhca_odp("faults");
	mt_fill(self->src, len, 132);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "prefetched MR after the WRITE", buf, self->src,
		  len);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the WRITE", &st);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(vf0, vhca_odp("faults"));

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/* PREFETCH without FLUSH: queued; the pages are mapped after (polled). */
ODP_TEST_T(prefetch_async, 120)
{
	const size_t npages = 64, len = npages * PAGE;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	uint8_t *buf, *out;
	uint64_t end;

	buf = odp_map(len);
	out = malloc(len);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, out);
	mt_fill(buf, len, 141);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RR, &reg));

	ASSERT_EQ(0, odp_advise(self->fd, reg.handle, ODP_IOVA, len,
				MRCT_ADVISE_PREFETCH, 0, 0));
	end = odp_now_ms() + POLL_MS;
	for (;;) {
		odp_stats(_metadata, self->fd, reg.handle, &st);
		if ((st.mapped_pages == npages &&
		     st.prefetched_pages == npages) || odp_now_ms() > end)
			break;
		usleep(10000);
	}
	odp_log_stats(_metadata, "after waiting for the prefetch", &st);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_EQ(npages, st.prefetched_pages);
	EXPECT_EQ(0, st.faults);

	/* Mapped: a device read that cannot fault sees the CPU's bytes. */
	EXPECT_EQ(0, odp_dev(self->fd, false, reg.handle, ODP_IOVA, out, len));
	odp_check(_metadata, "DEV_READ after the prefetch", out, buf, len);
	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "RDMA READ after the prefetch", self->src, buf,
		  len);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	EXPECT_EQ(0, st.faults);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
	free(out);
}

/*
 * PREFETCH_NO_FAULT maps only the pages present in the CPU's page
 * tables: the CPU wrote every other page, those are mapped, the others
 * are still not (until an RDMA READ faults them in, as zeros).
 */
ODP_TEST(prefetch_no_fault)
{
	const size_t npages = 32, len = npages * PAGE;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	uint8_t *buf, out[PAGE];
	size_t i;

	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < npages; i += 2)
		mt_fill(buf + i * PAGE, PAGE, 150 + i);
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));

	ASSERT_EQ(0, odp_advise(self->fd, reg.handle, ODP_IOVA, len,
				MRCT_ADVISE_PREFETCH_NO_FAULT,
				MRCT_ADVISE_FLUSH, 0));
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the prefetch", &st);
	EXPECT_EQ(npages / 2, st.mapped_pages);
	EXPECT_EQ(npages / 2, st.prefetched_pages);
	EXPECT_EQ(0, st.faults);
	for (i = 0; i < npages; i++) {
		int err = odp_dev(self->fd, false, reg.handle,
				  ODP_IOVA + i * PAGE, out, PAGE);

		if (err != (i & 1 ? -EAGAIN : 0))
			TH_LOG("page %zu (%s by the CPU): DEV_READ %d", i,
			       i & 1 ? "not touched" : "written", err);
		EXPECT_EQ(i & 1 ? -EAGAIN : 0, err);
		if (!err)
			odp_check(_metadata, "DEV_READ of a prefetched page",
				  out, buf + i * PAGE, PAGE);
	}

	/* The rest fault in on an RDMA READ: zeros. */
	odp_read(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	for (i = 0; i < npages; i++) {
		if (i & 1)
			odp_check_zero(_metadata, "untouched page",
				       self->src + i * PAGE, PAGE);
		else
			odp_check(_metadata, "written page",
				  self->src + i * PAGE, buf + i * PAGE, PAGE);
	}
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the READ", &st);
	EXPECT_LE(1, st.faults);
	EXPECT_EQ(npages, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
	munmap(buf, len);
}

/*
 * DMA-API debug's error count (debugfs), -1 without DMA-API debug: a
 * mapping it objects to is counted whether or not its warning is shown.
 */
static long long odp_dma_debug_errors(void)
{
	char buf[32];

	if (mt_read_file("/sys/kernel/debug/dma-api/error_count", buf,
			 sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/*
 * The same pages in a pinned MR and in two ODP MRs, all three mapped for
 * the device at once: RDMA lets a buffer be registered many times over,
 * so the ODP mappings must not be what DMA-API debug calls overlapping
 * mappings (a page mapped for the device twice without
 * DMA_ATTR_SKIP_CPU_SYNC); the fuzzer found ODP's map did that. Bytes
 * written through one ODP MR are read back through the other and seen
 * by the CPU; DMA-API debug's error count (debug kernel) does not move.
 * The mappings are made on a device that DMA-maps user pages
 * (odp_chardev.sh's second pass, vhca's user_dma_map); vhca0 addresses
 * them directly and maps nothing.
 */
ODP_TEST(overlapping_mrs)
{
	const size_t npages = 8, len = npages * PAGE;
	struct mrct_reg pinned, a, b;
	struct mrct_odp_stats st;
	long long err0, err1;
	uint8_t *buf;

	err0 = odp_dma_debug_errors();
	if (err0 < 0)
		TH_LOG("no DMA-API debug error_count: bytes checked only");
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	mt_fill(buf, len, 170);
	ASSERT_EQ(0, mt_reg(self->fd, buf, len, ODP2_IOVA + 16 * len,
			    LW | RW | RR, 0, &pinned));
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &a));
	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP2_IOVA, LW | RW | RR, &b));
	ASSERT_EQ(0, odp_advise(self->fd, a.handle, ODP_IOVA, len,
				MRCT_ADVISE_PREFETCH_WRITE, MRCT_ADVISE_FLUSH,
				0));
	ASSERT_EQ(0, odp_advise(self->fd, b.handle, ODP2_IOVA, len,
				MRCT_ADVISE_PREFETCH_WRITE, MRCT_ADVISE_FLUSH,
				0));
	odp_stats(_metadata, self->fd, b.handle, &st);
	EXPECT_EQ(npages, st.mapped_pages);

	/* Into the pages through A, out of them through B. */
	mt_fill(self->src, len, 171);
	odp_write(_metadata, self, &a, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "buffer after the WRITE through A", buf,
		  self->src, len);
	odp_read(_metadata, self, &b, 0, len, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "READ through B", self->src + len, buf, len);

	odp_dereg(_metadata, self->fd, a.handle);
	/* B still maps the pages after A's unmap. */
	mt_fill(self->src, PAGE, 172);
	EXPECT_EQ(0, odp_dev(self->fd, true, b.handle, ODP2_IOVA + 5 * PAGE,
			     self->src, PAGE));
	odp_check(_metadata, "DEV_WRITE through B after A's dereg",
		  buf + 5 * PAGE, self->src, PAGE);
	odp_dereg(_metadata, self->fd, b.handle);
	EXPECT_EQ(0, mt_dereg(self->fd, pinned.handle));

	err1 = odp_dma_debug_errors();
	if (err0 >= 0 && err1 != err0)
		TH_LOG("DMA-API debug counted %lld errors (see the kernel log)",
		       err1 - err0);
	if (err0 >= 0)
		EXPECT_EQ(err0, err1);
	munmap(buf, len);
}

/* --- 16: what is refused --- */

static int odp_rereg(int fd, uint32_t handle, uint32_t flags, void *addr,
		     uint64_t len, uint64_t iova, uint32_t access, uint32_t pd)
{
	struct mrct_rereg r = {
		.addr = (uintptr_t)addr,
		.length = len,
		.iova = iova,
		.handle = handle,
		.flags = flags,
		.access = access,
		.pd = pd,
	};

	return mt_ioctl(fd, MRCT_REREG, &r);
}

/*
 * Implicit ODP (the whole address space) at an iova other than 0 and
 * ZERO_BASED ODP are not offered, nor is rereg of an ODP MR (which stays
 * usable); advise and stats of an MR that is not ODP are -EINVAL, as are
 * an advice on another PD's MR; unknown advices and flags are
 * -EOPNOTSUPP.
 */
ODP_TEST(bad_inputs)
{
	const size_t len = 4 * PAGE;
	long long mkeys0 = mrc_stat("mkeys");
	struct mrct_odp_stats st = {};
	struct mrct_reg reg;
	uint8_t *buf;

	odp_dbg_present(_metadata);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, NULL, UINT64_MAX, ODP_IOVA,
				  LW | RW | RR | ODP, 0, &reg));
	EXPECT_EQ(-EOPNOTSUPP, mt_reg(self->fd, buf, len, 0,
				      LW | RW | MRCT_ACCESS_ZERO_BASED | ODP,
				      0, &reg));
	/* Remote write without local write: the usual -EINVAL. */
	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, len, ODP_IOVA, RW | ODP, 0,
				  &reg));
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));

	ASSERT_EQ(0, odp_reg(self->fd, buf, len, ODP_IOVA, LW | RW | RR, &reg));
	EXPECT_EQ(-EOPNOTSUPP, odp_rereg(self->fd, reg.handle,
					 MRCT_REREG_ACCESS, NULL, 0, 0,
					 LW | RR, 0));
	EXPECT_EQ(-EOPNOTSUPP, odp_rereg(self->fd, reg.handle,
					 MRCT_REREG_TRANS, buf, 2 * PAGE,
					 ODP_IOVA, 0, 0));
	EXPECT_EQ(-EOPNOTSUPP, odp_rereg(self->fd, reg.handle, MRCT_REREG_PD,
					 NULL, 0, 0, 0, 1));
	/* Untouched by the refused reregs: the MR works. */
	mt_fill(self->src, len, 161);
	odp_write(_metadata, self, &reg, 0, 0, len, MRCT_WC_SUCCESS);
	odp_check(_metadata, "ODP MR after the refused reregs", buf,
		  self->src, len);

	/* Advice: unknown advice or flag, another PD, outside the MR. */
	EXPECT_EQ(-EOPNOTSUPP, odp_advise(self->fd, reg.handle, ODP_IOVA, len,
					  7, MRCT_ADVISE_FLUSH, 0));
	EXPECT_EQ(-EOPNOTSUPP, odp_advise(self->fd, reg.handle, ODP_IOVA, len,
					  MRCT_ADVISE_PREFETCH, 0x2, 0));
	EXPECT_EQ(-EINVAL, odp_advise(self->fd, reg.handle, ODP_IOVA, len,
				      MRCT_ADVISE_PREFETCH, MRCT_ADVISE_FLUSH,
				      1));
	EXPECT_EQ(-ERANGE, odp_advise(self->fd, reg.handle, ODP_IOVA + len,
				      PAGE, MRCT_ADVISE_PREFETCH,
				      MRCT_ADVISE_FLUSH, 0));

	/* Not an ODP MR: the fixture's pinned one. */
	EXPECT_EQ(-EINVAL, odp_advise(self->fd, self->src_mr.handle, SRC_IOVA,
				      PAGE, MRCT_ADVISE_PREFETCH,
				      MRCT_ADVISE_FLUSH, 0));
	st.handle = self->src_mr.handle;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_ODP_STATS, &st));
	st.handle = 0xfffffff0U;
	EXPECT_EQ(-ENOENT, mt_ioctl(self->fd, MRCT_ODP_STATS, &st));

	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	munmap(buf, len);
}

/* --- 17: atomics --- */

/* An atomic on @rkey at @raddr, its original value landing at (@lkey, @laddr). */
static void odp_atomic(struct __test_metadata *_metadata,
		       struct _test_data_odp *self, uint32_t opcode,
		       uint32_t lkey, uint64_t laddr, uint32_t rkey,
		       uint64_t raddr, uint64_t compare_add, uint64_t swap)
{
	struct mrct_qp_post p = {};

	p.opcode = opcode;
	p.rkey = rkey;
	p.remote_addr = raddr;
	p.compare_add = compare_add;
	p.swap = swap;
	p.num_sge = 1;
	p.sge[0].addr = laddr;
	p.sge[0].length = 8;
	p.sge[0].lkey = lkey;
	odp_post(_metadata, self, &p, MRCT_WC_SUCCESS,
		 opcode == MRCT_WR_ATOMIC_FETCH_AND_ADD ? "FETCH_AND_ADD" :
							  "CMP_AND_SWP");
}

/*
 * FETCH_AND_ADD and CMP_AND_SWP on ODP pages the CPU never touched: the
 * atomic faults before it changes the target, so after the fault it is
 * applied exactly once. And an atomic whose result lands in ODP.
 */
ODP_TEST(atomic_on_odp)
{
	const uint64_t swap = 0x0ddc0ffee0ddf00dULL;
	const uint32_t lkey = self->src_mr.info.lkey;
	struct mrct_odp_stats st;
	struct mrct_reg reg, res;
	uint8_t *buf, *rbuf;

	/* vhca has atomics (IB_ATOMIC_HCA): their absence is a failure. */
	if (!(self->pair.flags & MRCT_QP_F_ATOMIC))
		TH_LOG("%s, a vhca device, reports no atomics", mt_devname());
	ASSERT_TRUE(self->pair.flags & MRCT_QP_F_ATOMIC);
	buf = odp_map(2 * PAGE);
	rbuf = odp_map(PAGE);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, rbuf);
	ASSERT_EQ(0, odp_reg(self->fd, buf, 2 * PAGE, ODP_IOVA, QP_ACCESS,
			     &reg));
	memset(self->src, 0xff, 64);

	odp_atomic(_metadata, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, lkey,
		   SRC_IOVA, reg.info.rkey, ODP_IOVA, 5, 0);
	EXPECT_EQ(0, odp_get64(self->src));
	EXPECT_EQ(5, odp_get64(buf));

	odp_atomic(_metadata, self, MRCT_WR_ATOMIC_CMP_AND_SWP, lkey,
		   SRC_IOVA + 8, reg.info.rkey, ODP_IOVA + PAGE + 8, 0, swap);
	EXPECT_EQ(0, odp_get64(self->src + 8));
	EXPECT_EQ(swap, odp_get64(buf + PAGE + 8));

	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the first atomics", &st);
	EXPECT_LE(2, st.faults);

	/* Mapped now; each applied once more, exactly once. */
	odp_atomic(_metadata, self, MRCT_WR_ATOMIC_FETCH_AND_ADD, lkey,
		   SRC_IOVA + 16, reg.info.rkey, ODP_IOVA, 5, 0);
	EXPECT_EQ(5, odp_get64(self->src + 16));
	EXPECT_EQ(10, odp_get64(buf));
	odp_atomic(_metadata, self, MRCT_WR_ATOMIC_CMP_AND_SWP, lkey,
		   SRC_IOVA + 24, reg.info.rkey, ODP_IOVA + PAGE + 8, 1, 2);
	EXPECT_EQ(swap, odp_get64(self->src + 24));
	EXPECT_EQ(swap, odp_get64(buf + PAGE + 8));
	/* Nothing else in the target pages changed. */
	odp_set64(buf, 0);
	odp_set64(buf + PAGE + 8, 0);
	odp_check_zero(_metadata, "ODP atomic target", buf, 2 * PAGE);

	/* The original value landing in an ODP page never touched. */
	ASSERT_EQ(0, odp_reg(self->fd, rbuf, PAGE, ODP2_IOVA, LW, &res));
	odp_set64(self->src + 64, 1000);
	odp_atomic(_metadata, self, MRCT_WR_ATOMIC_FETCH_AND_ADD,
		   res.info.lkey, ODP2_IOVA + 8, self->src_mr.info.rkey,
		   SRC_IOVA + 64, 1, 0);
	EXPECT_EQ(1000, odp_get64(rbuf + 8));
	EXPECT_EQ(1001, odp_get64(self->src + 64));
	odp_stats(_metadata, self->fd, res.handle, &st);
	EXPECT_LE(1, st.faults);
	EXPECT_EQ(1, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
	odp_dereg(_metadata, self->fd, res.handle);
	munmap(buf, 2 * PAGE);
	munmap(rbuf, PAGE);
}

/* --- 18-23: implicit ODP --- */

#define GIB		0x40000000UL
/* The implicit parent's KSM entries: one per 1 GiB block of 2^47 bytes. */
#define IMP_ENTRIES	((1ULL << 47) / GIB)

/* The 1 GiB block of user address @p: the implicit child that covers it. */
static uint64_t odp_block(const void *p)
{
	return (uintptr_t)p / GIB;
}

/* Add @p's block to the @n distinct ones in @blocks (room for one more). */
static void odp_add_block(uint64_t *blocks, unsigned int *n, const void *p)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (blocks[i] == odp_block(p))
			return;
	blocks[(*n)++] = odp_block(p);
}

/* An implicit ODP MR on PD 0: the whole address space, iova 0. */
static int odp_reg_implicit(int fd, uint32_t access, struct mrct_reg *reg)
{
	return odp_reg(fd, NULL, UINT64_MAX, 0, access, reg);
}

/*
 * @len bytes (at most 1 GiB) of anonymous memory, not touched, starting
 * @before bytes below a 1 GiB boundary, in room a 2 GiB PROT_NONE
 * reservation found free: with @before 0 it starts a block in which
 * nothing else was mapped. MADV_NOHUGEPAGE, as odp_map(). NULL on
 * failure.
 */
static uint8_t *odp_map_block(size_t len, size_t before)
{
	uint8_t *resv, *p;
	uintptr_t at;

	resv = mmap(NULL, 2 * GIB, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (resv == MAP_FAILED)
		return NULL;
	at = (((uintptr_t)resv + before + GIB - 1) & ~(GIB - 1)) - before;
	munmap(resv, 2 * GIB);
	p = mmap((void *)at, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* A kernel before 4.17 takes the address as a hint only. */
	if ((uintptr_t)p != at) {
		munmap(p, len);
		return NULL;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

static void odp_log_children(struct __test_metadata *_metadata,
			     const char *when, const struct mrct_odp_stats *st)
{
	TH_LOG("%s: children %llu created %llu reclaimed %llu; device created %llu reclaimed %llu",
	       when, (unsigned long long)st->children,
	       (unsigned long long)st->children_created,
	       (unsigned long long)st->children_reclaimed,
	       (unsigned long long)st->dev_children_created,
	       (unsigned long long)st->dev_children_reclaimed);
}

/*
 * Poll implicit MR @handle until @children are live and @reclaimed were
 * reclaimed (the reclaim work runs asynchronously), at most POLL_MS; the
 * last stats in @st.
 */
static void odp_wait_children(struct __test_metadata *_metadata, int fd,
			      uint32_t handle, uint64_t children,
			      uint64_t reclaimed, struct mrct_odp_stats *st)
{
	uint64_t end = odp_now_ms() + POLL_MS;

	for (;;) {
		odp_stats(_metadata, fd, handle, st);
		if ((st->children == children &&
		     st->children_reclaimed == reclaimed) ||
		    odp_now_ms() > end)
			break;
		usleep(10000);
	}
	if (st->children != children || st->children_reclaimed != reclaimed)
		TH_LOG("after %u ms: want %llu children, %llu reclaimed",
		       POLL_MS, (unsigned long long)children,
		       (unsigned long long)reclaimed);
	odp_log_children(_metadata, "after waiting for reclaim", st);
	EXPECT_EQ(children, st->children);
	EXPECT_EQ(reclaimed, st->children_reclaimed);
}

/*
 * Registration: a KSM key with one entry per 1 GiB block, all naming no
 * child yet. Nothing pinned, one key more (no child), every counter 0; a
 * device read of memory the CPU has present finds no child (it never
 * faults). Implicit at another iova is -EINVAL, ZERO_BASED -EOPNOTSUPP.
 */
ODP_TEST(implicit_reg)
{
	const size_t len = 4 * PAGE;
	long long mkeys0 = mrc_stat("mkeys"), cc0;
	uint64_t pinned0 = odp_pinned(self->fd);
	struct mrct_odp_stats st;
	struct mrct_reg reg, bad;
	uint8_t *buf, out[8], want[8];

	odp_dbg_present(_metadata);
	cc0 = mrc_odp("children_created");
	if (cc0 < 0)
		TH_LOG("no children_created in /sys/kernel/debug/mrcore/%s/odp",
		       mt_devname());
	ASSERT_LE(0, cc0);
	buf = odp_map(len);
	ASSERT_NE(NULL, buf);
	mt_fill(buf, len, 181);		/* present in the CPU's page tables */

	ASSERT_EQ(0, odp_reg_implicit(self->fd, LW | RW | RR, &reg));
	if (odp_pinned(self->fd) != pinned0)
		TH_LOG("pinned_vm went from %llu to %llu pages",
		       (unsigned long long)pinned0,
		       (unsigned long long)odp_pinned(self->fd));
	EXPECT_EQ(pinned0, odp_pinned(self->fd));
	EXPECT_EQ(MRCT_MODE_KSM, reg.info.mode);
	EXPECT_EQ(IMP_ENTRIES, reg.info.entries);
	/* Reported for MTT mode only. */
	EXPECT_EQ(0, reg.info.page_shift);
	EXPECT_EQ(mkeys0 + 1, mrc_stat("mkeys"));

	/* No fault: the block's entry names no child, nothing is mapped. */
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, false, reg.handle,
				   (uintptr_t)buf, out, sizeof(out)));
	memcpy(want, buf + PAGE, sizeof(want));
	memset(out, 0x5a, sizeof(out));
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, true, reg.handle,
				   (uintptr_t)buf + PAGE, out, sizeof(out)));
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "implicit MR", &st);
	odp_log_children(_metadata, "implicit MR", &st);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(0, st.fault_pages);
	EXPECT_EQ(0, st.invalidations);
	EXPECT_EQ(0, st.invalidated_pages);
	EXPECT_EQ(0, st.prefetched_pages);
	EXPECT_EQ(0, st.mapped_pages);
	EXPECT_EQ(0, st.children);
	EXPECT_EQ(0, st.children_created);
	EXPECT_EQ(0, st.children_reclaimed);
	EXPECT_EQ(mkeys0 + 1, mrc_stat("mkeys"));
	EXPECT_EQ(cc0, mrc_odp("children_created"));
	odp_check(_metadata, "CPU page after the refused DEV_WRITE",
		  buf + PAGE, want, sizeof(want));

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, NULL, UINT64_MAX, ODP_IOVA,
				  LW | RW | RR | ODP, 0, &bad));
	EXPECT_EQ(-EOPNOTSUPP, mt_reg(self->fd, NULL, UINT64_MAX, 0,
				      LW | RW | MRCT_ACCESS_ZERO_BASED | ODP,
				      0, &bad));
	EXPECT_EQ(mkeys0 + 1, mrc_stat("mkeys"));

	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	EXPECT_EQ(pinned0, odp_pinned(self->fd));
	munmap(buf, len);
}

/*
 * Three mappings of different kinds behind one implicit MR: private
 * anonymous, a MAP_SHARED memfd, and anonymous memory in a 1 GiB block
 * of its own. The device writes each through the parent's rkey at its
 * virtual address, reads it back (remote side) and gathers from it
 * (the parent's lkey as the local SGE). One child per distinct block,
 * each its own key; exactly the pages touched are mapped. A page with no
 * VMA in a block whose child is live fails the access (REM_ACCESS_ERR,
 * LOC_PROT_ERR) and creates nothing. Dereg takes the children along,
 * synchronously.
 */
ODP_TEST(implicit_several_vmas)
{
	enum { NV = 3 };
	const size_t lens[NV] = { 16 * PAGE, 1UL << 20, 16 * PAGE };
	const char *const names[NV] = { "anonymous", "shared memfd",
					"anonymous, own block" };
	unsigned int nblocks = 0, i;
	uint64_t blocks[2 * NV + 1];
	long long mkeys0, cc0, cr0, verr0;
	struct mrct_odp_stats st0, st;
	size_t soff[NV], pages = 0, off = 0;
	uint8_t *v[NV], *hole;
	struct mrct_reg reg;
	int mfd;

	odp_dbg_present(_metadata);
	mkeys0 = mrc_stat("mkeys");
	cc0 = mrc_odp("children_created");
	cr0 = mrc_odp("children_reclaimed");
	ASSERT_LE(0, cc0);

	v[0] = odp_map(lens[0]);
	ASSERT_NE(NULL, v[0]);
	mfd = memfd_create("odp_implicit", 0);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, lens[1]));
	v[1] = mmap(NULL, lens[1], PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, v[1]);
	madvise(v[1], lens[1], MADV_NOHUGEPAGE);
	/* After the others: its block holds neither of them. */
	v[2] = odp_map_block(lens[2], 0);
	ASSERT_NE(NULL, v[2]);
	/* 3 pages further into v[2]'s block, the middle one unmapped. */
	hole = mmap(v[2] + (1UL << 20), 3 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(v[2] + (1UL << 20), hole);
	ASSERT_EQ(0, munmap(hole + PAGE, PAGE));

	for (i = 0; i < NV; i++) {
		odp_add_block(blocks, &nblocks, v[i]);
		odp_add_block(blocks, &nblocks, v[i] + lens[i] - 1);
		soff[i] = off;
		off += lens[i];
		pages += lens[i] / PAGE;
	}
	ASSERT_GE(SRC_LEN, off);
	ASSERT_LE(2, nblocks);
	TH_LOG("%u distinct 1 GiB blocks: anonymous %p, memfd %p, own block %p",
	       nblocks, v[0], v[1], v[2]);

	ASSERT_EQ(0, odp_reg_implicit(self->fd, LW | RW | RR, &reg));
	odp_stats(_metadata, self->fd, reg.handle, &st0);

	/* WRITE into each through the parent's rkey at its address. */
	for (i = 0; i < NV; i++) {
		mt_fill(self->src + soff[i], lens[i], 190 + i);
		odp_write(_metadata, self, &reg, (uintptr_t)v[i], soff[i],
			  lens[i], MRCT_WC_SUCCESS);
		odp_check(_metadata, names[i], v[i], self->src + soff[i],
			  lens[i]);
	}
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the WRITEs", &st);
	odp_log_children(_metadata, "after the WRITEs", &st);
	EXPECT_EQ(nblocks, st.children);
	EXPECT_EQ(nblocks, st.children_created);
	EXPECT_EQ(0, st.children_reclaimed);
	EXPECT_EQ(st0.dev_children_created + nblocks, st.dev_children_created);
	EXPECT_EQ(cc0 + nblocks, mrc_odp("children_created"));
	EXPECT_EQ(mkeys0 + 1 + nblocks, mrc_stat("mkeys"));
	/* Each block's first fault goes to its own child. */
	EXPECT_LE(nblocks, st.faults);
	EXPECT_LE(pages, st.fault_pages);
	EXPECT_EQ(pages, st.mapped_pages);

	/* The CPU's new bytes, RDMA READ back through the rkey. */
	for (i = 0; i < NV; i++) {
		mt_fill(v[i], lens[i], 195 + i);
		memset(self->src + soff[i], 0, lens[i]);
		odp_read(_metadata, self, &reg, (uintptr_t)v[i], soff[i],
			 lens[i], MRCT_WC_SUCCESS);
		odp_check(_metadata, names[i], self->src + soff[i], v[i],
			  lens[i]);
	}

	/* The parent's lkey as the local SGE of a WRITE into the pinned MR. */
	for (i = 0; i < NV; i++) {
		memset(self->src + soff[i], 0, lens[i]);
		odp_rdma(_metadata, self, MRCT_WR_RDMA_WRITE, reg.info.lkey,
			 (uintptr_t)v[i], self->src_mr.info.rkey,
			 SRC_IOVA + soff[i], lens[i], MRCT_WC_SUCCESS,
			 "WRITE gathering from the implicit MR");
		odp_check(_metadata, names[i], self->src + soff[i], v[i],
			  lens[i]);
	}
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the READs and gathers", &st);
	EXPECT_EQ(nblocks, st.children);
	EXPECT_EQ(nblocks, st.children_created);
	EXPECT_EQ(pages, st.mapped_pages);

	/* No VMA under a live child: an access error, no new child. */
	st0 = st;
	verr0 = vhca_odp("fault_errors");
	mt_fill(self->src, PAGE, 198);
	odp_write(_metadata, self, &reg, (uintptr_t)hole + PAGE, 0, PAGE,
		  MRCT_WC_REM_ACCESS_ERR);
	odp_new_pair(_metadata, self);
	odp_rdma(_metadata, self, MRCT_WR_RDMA_WRITE, reg.info.lkey,
		 (uintptr_t)hole + PAGE, self->src_mr.info.rkey, SRC_IOVA,
		 PAGE, MRCT_WC_LOC_PROT_ERR,
		 "WRITE gathering from no VMA through the implicit MR");
	odp_new_pair(_metadata, self);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after the accesses to no VMA", &st);
	EXPECT_LE(st0.dev_fault_errors + 2, st.dev_fault_errors);
	EXPECT_LE(verr0 + 2, vhca_odp("fault_errors"));
	EXPECT_EQ(st0.faults, st.faults);
	EXPECT_EQ(pages, st.mapped_pages);
	EXPECT_EQ(nblocks, st.children);
	EXPECT_EQ(nblocks, st.children_created);
	EXPECT_EQ(mkeys0 + 1 + nblocks, mrc_stat("mkeys"));

	/* Dereg: the children go with the parent, not counted as reclaimed. */
	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	EXPECT_EQ(cr0, mrc_odp("children_reclaimed"));
	for (i = 0; i < NV; i++)
		munmap(v[i], lens[i]);
	munmap(hole, 3 * PAGE);
	close(mfd);
}

/*
 * A child whose pages are all gone is reclaimed in the background: after
 * munmap, and after MADV_DONTNEED of everything the device mapped. The
 * next access to the block creates a new child, whose bytes are right.
 */
ODP_TEST_T(implicit_reclaim_idle, 180)
{
	const size_t npages = 16, len = npages * PAGE;
	struct mrct_odp_stats st0, st;
	long long mkeys0, cr0;
	struct mrct_reg reg;
	uint8_t *buf, *again, out[8];

	odp_dbg_present(_metadata);
	mkeys0 = mrc_stat("mkeys");
	cr0 = mrc_odp("children_reclaimed");
	ASSERT_LE(0, cr0);
	buf = odp_map_block(len, 0);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg_implicit(self->fd, LW | RW | RR, &reg));
	odp_stats(_metadata, self->fd, reg.handle, &st0);

	mt_fill(self->src, len, 210);
	odp_write(_metadata, self, &reg, (uintptr_t)buf, 0, len,
		  MRCT_WC_SUCCESS);
	odp_check(_metadata, "first child's pages", buf, self->src, len);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_children(_metadata, "after the first WRITE", &st);
	EXPECT_EQ(1, st.children);
	EXPECT_EQ(1, st.children_created);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_EQ(mkeys0 + 2, mrc_stat("mkeys"));

	/* munmap: every page of the child gone. */
	ASSERT_EQ(0, munmap(buf, len));
	odp_wait_children(_metadata, self->fd, reg.handle, 0, 1, &st);
	EXPECT_EQ(1, st.children_created);
	EXPECT_EQ(0, st.mapped_pages);
	EXPECT_EQ(npages, st.invalidated_pages);
	EXPECT_EQ(st0.dev_children_reclaimed + 1, st.dev_children_reclaimed);
	EXPECT_EQ(mkeys0 + 1, mrc_stat("mkeys"));
	EXPECT_EQ(cr0 + 1, mrc_odp("children_reclaimed"));
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, false, reg.handle,
				   (uintptr_t)buf, out, sizeof(out)));

	/* Mapped again at the same place: a second child. */
	again = mmap(buf, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(buf, again);
	madvise(buf, len, MADV_NOHUGEPAGE);
	mt_fill(self->src, len, 211);
	odp_write(_metadata, self, &reg, (uintptr_t)buf, 0, len,
		  MRCT_WC_SUCCESS);
	odp_check(_metadata, "second child's pages", buf, self->src, len);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_children(_metadata, "after the second WRITE", &st);
	EXPECT_EQ(1, st.children);
	EXPECT_EQ(2, st.children_created);
	EXPECT_EQ(1, st.children_reclaimed);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_EQ(mkeys0 + 2, mrc_stat("mkeys"));

	/* MADV_DONTNEED of all of it: idle again, the VMA stays. */
	ASSERT_EQ(0, madvise(buf, len, MADV_DONTNEED));
	odp_wait_children(_metadata, self->fd, reg.handle, 0, 2, &st);
	EXPECT_EQ(2, st.children_created);
	EXPECT_EQ(0, st.mapped_pages);
	EXPECT_EQ(2 * npages, st.invalidated_pages);
	EXPECT_EQ(mkeys0 + 1, mrc_stat("mkeys"));
	EXPECT_EQ(cr0 + 2, mrc_odp("children_reclaimed"));

	mt_fill(self->src, len, 212);
	odp_write(_metadata, self, &reg, (uintptr_t)buf, 0, len,
		  MRCT_WC_SUCCESS);
	odp_check(_metadata, "third child's pages", buf, self->src, len);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "at the end", &st);
	odp_log_children(_metadata, "at the end", &st);
	EXPECT_EQ(1, st.children);
	EXPECT_EQ(3, st.children_created);
	EXPECT_EQ(2, st.children_reclaimed);
	EXPECT_LE(3, st.faults);
	EXPECT_LE(3 * npages, st.fault_pages);
	EXPECT_EQ(npages, st.mapped_pages);

	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	munmap(buf, len);
}

/*
 * The reclaim work unhooks an idle child's KSM entry while walks may be
 * reading it. Each round WRITEs through the implicit MR, checks the bytes
 * and drops the pages with MADV_DONTNEED, which makes the child idle and
 * queues its reclaim; the next round's WRITE is posted at once, so its
 * walk of the parent's entry runs beside the unhooking (or finds the old
 * child and faults through it, or finds no child and creates one).
 * Nothing invalidates the block while a WRITE runs, so every WRITE
 * succeeds with the right bytes: a walk that read the entry half changed
 * (a key without its address, a key read twice) failed REM_ACCESS_ERR.
 */
ODP_TEST_T(implicit_reclaim_races_writes, 600)
{
	const size_t len = 2 * PAGE;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	long long mkeys0;
	unsigned int i;
	uint8_t *buf;

	odp_dbg_present(_metadata);
	mkeys0 = mrc_stat("mkeys");
	buf = odp_map_block(len, 0);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg_implicit(self->fd, LW | RW, &reg));
	for (i = 0; i < RECLAIM_ROUNDS; i++) {
		struct mrct_qp_post p = odp_rdma_wr(self, MRCT_WR_RDMA_WRITE,
						    self->src_mr.info.lkey,
						    SRC_IOVA, reg.info.rkey,
						    reg.iova + (uintptr_t)buf,
						    len);

		mt_fill(self->src, len, 300 + i);
		ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
		ASSERT_EQ(0, p.post_err);
		if (p.status != MRCT_WC_SUCCESS) {
			/* A failed fault (dev_fault_errors) or a failed walk. */
			odp_stats(_metadata, self->fd, reg.handle, &st);
			TH_LOG("round %u: WRITE %s; %llu faults, %llu device fault errors",
			       i, mt_wc_name(p.status),
			       (unsigned long long)st.faults,
			       (unsigned long long)st.dev_fault_errors);
			break;
		}
		if (memcmp(buf, self->src, len)) {
			TH_LOG("round %u:", i);
			odp_check(_metadata, "bytes written", buf, self->src,
				  len);
			break;
		}
		ASSERT_EQ(0, madvise(buf, len, MADV_DONTNEED));
	}
	odp_stats(_metadata, self->fd, reg.handle, &st);
	TH_LOG("%u rounds: %llu faults, children created %llu, reclaimed %llu",
	       i, (unsigned long long)st.faults,
	       (unsigned long long)st.children_created,
	       (unsigned long long)st.children_reclaimed);
	EXPECT_EQ(RECLAIM_ROUNDS, i);
	/* Every round's pages were gone: every WRITE faulted. */
	EXPECT_LE(i, st.faults);
	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	munmap(buf, len);
}

/*
 * One thread drops the pages of a range across a 1 GiB boundary in a
 * loop (so the children's invalidations and the reclaim work run all
 * along) while the main thread registers an implicit MR, WRITEs through
 * it across both blocks and deregisters it, RACE_ITERS times (and on
 * until one WRITE succeeded). No hang, no failed dereg, every completion
 * a success or a clean REM_ACCESS_ERR, never stale bytes; no key left,
 * and no more children reclaimed than created.
 */
ODP_TEST_T(implicit_dereg_with_children_in_flight, 180)
{
	const size_t half = 8 * PAGE, len = 2 * half;
	unsigned int iters = 0, ok = 0, errs = 0, bad = 0;
	struct odp_dontneed d = {};
	long long mkeys0, cc0, cr0, cc, cr;
	struct mrct_odp_stats st;
	struct mrct_reg reg;
	pthread_t thread;
	uint64_t start;

	odp_dbg_present(_metadata);
	mkeys0 = mrc_stat("mkeys");
	cc0 = mrc_odp("children_created");
	cr0 = mrc_odp("children_reclaimed");
	ASSERT_LE(0, cc0);
	/* Half below a 1 GiB boundary, half above: two children a WRITE. */
	d.buf = odp_map_block(len, half);
	d.len = len;
	ASSERT_NE(NULL, d.buf);
	ASSERT_EQ(odp_block(d.buf) + 1, odp_block(d.buf + len - 1));
	ASSERT_EQ(0, pthread_create(&thread, NULL, odp_dontneed_loop, &d));

	start = odp_now_ms();
	while (odp_race_more(&d, start, iters, ok, bad)) {
		iters++;
		ASSERT_EQ(0, odp_reg_implicit(self->fd, LW | RW, &reg));
		if (odp_race_write(_metadata, self, &reg, (uintptr_t)d.buf, &d,
				   iters, 220 + iters, &bad)) {
			ok++;
			/* A new parent: both blocks faulted, a child each. */
			odp_stats(_metadata, self->fd, reg.handle, &st);
			if (st.faults < 2 || st.children_created < 2)
				odp_log_children(_metadata, "after a success",
						 &st);
			EXPECT_LE(2, st.faults);
			EXPECT_LE(2, st.children_created);
		} else {
			errs++;
		}
		odp_dereg(_metadata, self->fd, reg.handle);
	}
	__atomic_store_n(&d.stop, true, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(thread, NULL));

	cc = mrc_odp("children_created") - cc0;
	cr = mrc_odp("children_reclaimed") - cr0;
	TH_LOG("%u iterations in %llu ms: %u successes, %u REM_ACCESS_ERR; %lu DONTNEEDs",
	       iters, (unsigned long long)(odp_now_ms() - start), ok, errs,
	       d.calls);
	TH_LOG("children created %lld, reclaimed idle %lld", cc, cr);
	EXPECT_EQ(0, d.err);
	EXPECT_EQ(0, bad);
	EXPECT_LE(1, ok);
	EXPECT_LE(1, d.calls);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	EXPECT_LE(2 * (long long)ok, cc);
	EXPECT_LE(cr, cc);
	munmap(d.buf, len);
}

/*
 * In a child: like odp_exit_child(), with one implicit ODP MR written
 * through at @nmaps mappings of @map_len bytes, each in a 1 GiB block of
 * its own (a child MR each). It never deregisters and never closes the
 * file. Return: 0, or the step that failed (10-17).
 */
static int odp_implicit_exit_child(int ready, unsigned int nmaps,
				   size_t map_len, bool forever)
{
	struct mrct_reg src_mr, imp;
	struct mrct_qp_create qc;
	uint8_t *src, **bufs;
	unsigned int i;
	int fd, err;

	fd = odp_child_open(map_len, 231, &qc, &src, &src_mr);
	if (fd < 0)
		return -fd;
	bufs = calloc(nmaps, sizeof(*bufs));
	if (!bufs)
		return 12;
	if (odp_reg_implicit(fd, LW | RW, &imp))
		return 14;
	for (i = 0; i < nmaps; i++) {
		bufs[i] = odp_map_block(map_len, 0);
		if (!bufs[i])
			return 12;
		err = odp_child_write_at(fd, qc.handle, &src_mr,
					 imp.info.rkey, (uintptr_t)bufs[i],
					 map_len);
		if (err)
			return err;
		if (memcmp(bufs[i], src, map_len))
			return 16;
	}
	if (write(ready, "x", 1) != 1)
		return 17;
	while (forever) {
		for (i = 0; i < nmaps; i++) {
			madvise(bufs[i], map_len, MADV_DONTNEED);
			err = odp_child_write_at(fd, qc.handle, &src_mr,
						 imp.info.rkey,
						 (uintptr_t)bufs[i], map_len);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * A process exits with an implicit MR and two children live, without
 * dereg or close; another is killed while its WRITEs fault children in
 * (and the reclaim work drops them, each pass's DONTNEED leaving them
 * idle). No key or PD is left, and this process still gets children.
 */
ODP_TEST_T(implicit_process_exit, 240)
{
	struct mrct_odp_stats st;
	struct odp_held h0;
	struct mrct_reg reg;
	long long cc0, f0;
	uint8_t *buf;
	int status;
	pid_t pid;

	odp_dbg_present(_metadata);
	odp_held(&h0);
	ASSERT_LE(0, h0.pins);
	cc0 = mrc_odp("children_created");
	ASSERT_LE(0, cc0);

	pid = odp_spawn_fn(_metadata, odp_implicit_exit_child, 2, 64 * 1024,
			   false);
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		TH_LOG("child status 0x%x (10-17: odp_implicit_exit_child's step)",
		       status);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_LE(cc0 + 2, mrc_odp("children_created"));
	odp_wait_clean(_metadata, &h0, "after the child's exit");

	/* Killed once its loop has faulted both mappings in again. */
	pid = odp_spawn_fn(_metadata, odp_implicit_exit_child, 2, 1UL << 20,
			   true);
	ASSERT_LT(0, pid);
	f0 = vhca_odp("faults");
	odp_wait_faults(_metadata, f0, 2);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!WIFSIGNALED(status))
		TH_LOG("child status 0x%x (10-17: odp_implicit_exit_child's step)",
		       status);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_LE(cc0 + 4, mrc_odp("children_created"));
	odp_wait_clean(_metadata, &h0, "after the child was killed");

	/* This process's own implicit MR still gets a child and its bytes. */
	buf = odp_map(4 * PAGE);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, odp_reg_implicit(self->fd, LW | RW, &reg));
	mt_fill(self->src, 4 * PAGE, 232);
	odp_write(_metadata, self, &reg, (uintptr_t)buf, 0, 4 * PAGE,
		  MRCT_WC_SUCCESS);
	odp_check(_metadata, "WRITE after the children", buf, self->src,
		  4 * PAGE);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	EXPECT_EQ(1, st.children);
	EXPECT_EQ(4, st.mapped_pages);
	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(h0.mkeys, mrc_stat("mkeys"));
	munmap(buf, 4 * PAGE);
}

/*
 * MRCT_ODP_ADVISE through the parent, at virtual addresses.
 * PREFETCH_WRITE with FLUSH creates the block's child and maps every
 * page writable: device reads and writes (which never fault) then
 * succeed, with no fault. PREFETCH_NO_FAULT over memory the CPU never
 * touched maps nothing, and a child it made for that is reclaimed.
 * PREFETCH without FLUSH maps the pages afterwards.
 */
ODP_TEST_T(implicit_prefetch, 180)
{
	const size_t npages = 64, len = npages * PAGE;
	const size_t rpages = 16, rlen = rpages * PAGE;
	struct mrct_odp_stats st0, st;
	long long mkeys0, vf0;
	struct mrct_reg reg;
	uint8_t *buf, *untouched, *r, *out;
	uint64_t end, created;

	odp_dbg_present(_metadata);
	mkeys0 = mrc_stat("mkeys");
	buf = odp_map_block(len, 0);
	untouched = odp_map_block(rlen, 0);
	r = odp_map_block(rlen, 0);
	out = malloc(len);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, untouched);
	ASSERT_NE(NULL, r);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, odp_reg_implicit(self->fd, LW | RW | RR, &reg));
	odp_stats(_metadata, self->fd, reg.handle, &st0);

	ASSERT_EQ(0, odp_advise(self->fd, reg.handle, (uintptr_t)buf, len,
				MRCT_ADVISE_PREFETCH_WRITE, MRCT_ADVISE_FLUSH,
				0));
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_stats(_metadata, "after PREFETCH_WRITE", &st);
	odp_log_children(_metadata, "after PREFETCH_WRITE", &st);
	EXPECT_EQ(1, st.children);
	EXPECT_EQ(1, st.children_created);
	EXPECT_EQ(st0.dev_children_created + 1, st.dev_children_created);
	EXPECT_EQ(npages, st.prefetched_pages);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(st0.dev_prefetches + 1, st.dev_prefetches);
	EXPECT_EQ(mkeys0 + 2, mrc_stat("mkeys"));

	/* Mapped writable: device accesses that cannot fault succeed. */
	vf0 = vhca_odp("faults");
	mt_fill(self->src, len, 240);
	EXPECT_EQ(0, odp_dev(self->fd, true, reg.handle, (uintptr_t)buf,
			     self->src, len));
	odp_check(_metadata, "DEV_WRITE after the prefetch", buf, self->src,
		  len);
	mt_fill(buf + 5 * PAGE, PAGE, 241);
	EXPECT_EQ(0, odp_dev(self->fd, false, reg.handle,
			     (uintptr_t)buf + 5 * PAGE, out, PAGE));
	odp_check(_metadata, "DEV_READ after the prefetch", out,
		  buf + 5 * PAGE, PAGE);
	odp_stats(_metadata, self->fd, reg.handle, &st);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(vf0, vhca_odp("faults"));
	EXPECT_EQ(npages, st.mapped_pages);

	/* NO_FAULT where the CPU has nothing: nothing mapped, no child kept. */
	ASSERT_EQ(0, odp_advise(self->fd, reg.handle, (uintptr_t)untouched,
				rlen, MRCT_ADVISE_PREFETCH_NO_FAULT,
				MRCT_ADVISE_FLUSH, 0));
	odp_stats(_metadata, self->fd, reg.handle, &st);
	odp_log_children(_metadata, "after PREFETCH_NO_FAULT", &st);
	EXPECT_EQ(npages, st.mapped_pages);
	EXPECT_EQ(npages, st.prefetched_pages);
	/*
	 * The block's child is made before its pages are looked for (so the
	 * reclaim of an idle child is what this shows): one created, and
	 * then reclaimed, not two outcomes of which one proves nothing.
	 */
	created = st.children_created;
	EXPECT_EQ(2, created);
	odp_wait_children(_metadata, self->fd, reg.handle, 1, created - 1,
			  &st);
	EXPECT_EQ(created, st.children_created);
	EXPECT_EQ(-EAGAIN, odp_dev(self->fd, false, reg.handle,
				   (uintptr_t)untouched, out, PAGE));
	EXPECT_EQ(mkeys0 + 2, mrc_stat("mkeys"));

	/* Asynchronous: queued, mapped after (polled). */
	mt_fill(r, rlen, 242);
	ASSERT_EQ(0, odp_advise(self->fd, reg.handle, (uintptr_t)r, rlen,
				MRCT_ADVISE_PREFETCH, 0, 0));
	end = odp_now_ms() + POLL_MS;
	for (;;) {
		odp_stats(_metadata, self->fd, reg.handle, &st);
		if ((st.mapped_pages == npages + rpages &&
		     st.prefetched_pages == npages + rpages) ||
		    odp_now_ms() > end)
			break;
		usleep(10000);
	}
	odp_log_stats(_metadata, "after waiting for the prefetch", &st);
	odp_log_children(_metadata, "after waiting for the prefetch", &st);
	EXPECT_EQ(npages + rpages, st.mapped_pages);
	EXPECT_EQ(npages + rpages, st.prefetched_pages);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(2, st.children);
	EXPECT_EQ(created + 1, st.children_created);
	EXPECT_EQ(0, odp_dev(self->fd, false, reg.handle, (uintptr_t)r, out,
			     rlen));
	odp_check(_metadata, "DEV_READ after the asynchronous prefetch", out,
		  r, rlen);
	EXPECT_EQ(mkeys0 + 3, mrc_stat("mkeys"));

	odp_dereg(_metadata, self->fd, reg.handle);
	EXPECT_EQ(mkeys0, mrc_stat("mkeys"));
	munmap(buf, len);
	munmap(untouched, rlen);
	munmap(r, rlen);
	free(out);
}

TEST_HARNESS_MAIN
