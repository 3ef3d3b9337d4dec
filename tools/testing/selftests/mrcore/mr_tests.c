// SPDX-License-Identifier: GPL-2.0
/*
 * User memory regions on vhca, end to end, through /dev/mrcore_test.
 *
 * Each test registers memory of this process with mrcore, then has the
 * vhca *device* read or write it through the key: the device resolves the
 * key with the mkey context and translation entries in its own memory, so
 * a wrong table gives wrong bytes. Bad inputs must fail with their exact
 * errno, and every test ends with pinned_vm back at its starting value;
 * the fixture checks VmPin once more after closing the file, and the
 * kernel's own count of pinned pages (nr_foll_pin_acquired - released in
 * /proc/vmstat), which unlike the memlock charge proves pages unpinned.
 * Page sizes are the kernel's: THP size and backing from sysfs and
 * smaps, the page size an MR must get from its frame numbers (pagemap).
 *
 * The device is vhca0 unless MRCT_DEVICE names another; a second one,
 * MRCT_SPARE_DEVICE, is removed by the device removal test. Run as root:
 * the memlock test drops CAP_IPC_LOCK itself, the hugetlb test reserves
 * two huge pages, pagemap shows frame numbers and vm.stat_refresh folds
 * the pin counts only for root. A test skips only when what it needs is
 * missing (THP, hugetlb, a spare device), says why, and decides so before
 * its first check.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"

#define PAGE		4096UL
#define NPAGES		16
#define BUF_SIZE	(NPAGES * PAGE)
/* An iova far from any user address, page aligned. */
#define FAR_IOVA	0x5a5a00000000ULL

#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define RR		MRCT_ACCESS_REMOTE_READ

/* The same through a raw key, as a requester on PD @pd. */
static int mrt_key_xfer(int fd, unsigned long req, uint32_t key, uint32_t pd,
			uint64_t iova, void *buf, uint64_t len, uint32_t flags)
{
	struct mrct_xfer x = {
		.iova = iova,
		.length = len,
		.ptr = (uintptr_t)buf,
		.key = key,
		.flags = flags | MRCT_XFER_RAW_KEY,
		.pd = pd,
	};

	return mt_ioctl(fd, req, &x);
}

static int mrt_read(int fd, uint32_t handle, uint64_t iova, void *buf,
		    uint64_t len)
{
	return mt_xfer(fd, MRCT_DEV_READ, handle, iova, buf, len, 0);
}

static int mrt_rread(int fd, uint32_t handle, uint64_t iova, void *buf,
		     uint64_t len)
{
	return mt_xfer(fd, MRCT_DEV_READ, handle, iova, buf, len,
			MRCT_XFER_REMOTE);
}

static int mrt_write(int fd, uint32_t handle, uint64_t iova, void *buf,
		     uint64_t len)
{
	return mt_xfer(fd, MRCT_DEV_WRITE, handle, iova, buf, len, 0);
}

static int mrt_rereg(int fd, struct mrct_rereg *rr)
{
	return mt_ioctl(fd, MRCT_REREG, rr);
}

static uint64_t mrt_pinned(int fd)
{
	struct mrct_counters c = {};

	if (mt_ioctl(fd, MRCT_COUNTERS, &c))
		return ~0ULL;
	return c.pinned_vm;
}

static uint32_t mrt_live(int fd)
{
	struct mrct_counters c = {};

	if (mt_ioctl(fd, MRCT_COUNTERS, &c))
		return ~0U;
	return c.mrs;
}

/* VmPin of this process in kB, from /proc (independent of the module). */
static long mrt_vmpin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void *mrt_map(size_t len, int prot)
{
	return mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* How long a case waits for the kernel to finish work it does on its own. */
#define MRT_WAIT_MS	60000

static uint64_t mrt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* Drop CAP_IPC_LOCK from this (test child) process. */
static int mrt_drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	uint32_t bit = 1U << (CAP_IPC_LOCK % 32);

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_IPC_LOCK / 32].effective &= ~bit;
	data[CAP_IPC_LOCK / 32].permitted &= ~bit;
	data[CAP_IPC_LOCK / 32].inheritable &= ~bit;
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/*
 * A @len bytes, @hpage aligned, MADV_HUGEPAGE area, filled; NULL if none.
 * Whether the kernel backed it with huge pages is for the caller to read.
 */
static void *mrt_thp_area(size_t len, size_t hpage, uint64_t seed)
{
	uint8_t *raw, *p;

	raw = mrt_map(len + hpage, PROT_READ | PROT_WRITE);
	if (raw == MAP_FAILED)
		return NULL;
	p = (uint8_t *)(((uintptr_t)raw + hpage - 1) & ~(hpage - 1));
	if (madvise(p, len, MADV_HUGEPAGE))
		return NULL;
	mt_fill(p, len, seed);
	return p;
}

/*
 * The device's page_size_cap, read from the kernel (an FRWR MR allocated
 * and freed for it, the one ioctl that reports it). The case fails if it
 * cannot be had.
 */
static uint64_t mrt_page_size_cap(struct __test_metadata *_metadata, int fd)
{
	struct mrct_frwr_alloc fa = {
		.max_pages = 1,
		.nchunks = 1,
		.chunk_shift = 12,
	};
	struct mrct_frwr_free ff = {};

	ASSERT_EQ(0, mt_ioctl(fd, MRCT_FRWR_ALLOC, &fa));
	ff.handle = fa.handle;
	ASSERT_EQ(0, mt_ioctl(fd, MRCT_FRWR_FREE, &ff));
	ASSERT_NE(0, fa.page_size_cap & PAGE);
	return fa.page_size_cap;
}

/*
 * The MTT page shift mrcore must give the pinned [@buf, +@len) at @iova,
 * worked out from the physical pages the kernel gave (/proc/self/pagemap),
 * by the rule of mrc_best_page_size(): the largest size P in @cap (the
 * device's page_size_cap) such that in every P-aligned block of iova the
 * pages are physically contiguous and PA - iova is a multiple of P, and
 * no larger than the smallest size in @cap that covers the MR with one
 * page. Its number of entries in *@entries. 0 when a page shows no PFN
 * (not present, or PFNs hidden without CAP_SYS_ADMIN).
 */
static unsigned int mrt_phys_shift(const uint8_t *buf, size_t len,
				   uint64_t iova, uint64_t cap,
				   uint32_t *entries)
{
	const uintptr_t first = (uintptr_t)buf & ~(PAGE - 1);
	const size_t n = ((uintptr_t)buf + len - first + PAGE - 1) / PAGE;
	const uint64_t piova = iova & ~(PAGE - 1), last = iova + len - 1;
	unsigned int s, best = 0, cover = 63;
	uint64_t *pfn, d, prev = 0, at, mask;
	bool ok;
	size_t i;

	pfn = calloc(n, sizeof(*pfn));
	if (!pfn || mt_pfns((void *)first, n, pfn))
		goto out;
	for (i = 0; i < n; i++)
		if (!pfn[i])
			goto out;
	for (s = 12; s < 63; s++)
		if ((cap >> s & 1) && (iova >> s) == (last >> s)) {
			cover = s;
			break;
		}
	for (s = 12; s <= cover; s++) {
		if (!(cap >> s & 1))
			continue;
		mask = (1ULL << s) - 1;
		for (i = 0, ok = true; i < n && ok; i++) {
			at = piova + i * PAGE;
			d = (pfn[i] << 12) - at;
			/* A block starts: P-aligned; inside it: contiguous. */
			ok = i && (at & mask) ? d == prev : !(d & mask);
			prev = d;
		}
		if (ok)
			best = s;
	}
	if (best)
		*entries = (last >> best) - (iova >> best) + 1;
out:
	free(pfn);
	return best;
}

/*
 * The MR @reg over [@buf, +@len) has the page size and entries its pinned
 * pages allow (mrt_phys_shift()), at least @min_shift.
 */
static void mrt_check_phys_shift(struct __test_metadata *_metadata,
				 const struct mrct_reg *reg, uint8_t *buf,
				 size_t len, uint64_t cap,
				 unsigned int min_shift)
{
	unsigned int shift;
	uint32_t entries;

	shift = mrt_phys_shift(buf, len, reg->iova, cap, &entries);
	ASSERT_NE(0, shift) TH_LOG("no PFNs in /proc/self/pagemap (not root?)");
	EXPECT_LE(min_shift, shift);
	EXPECT_EQ(shift, reg->info.page_shift);
	EXPECT_EQ(entries, reg->info.entries);
}

/*
 * Failure injection (Documentation/mrcore/testing.rst): mrcore's debugfs
 * directory of the test device has "fail_stage", which arms one failure,
 * and "stats", whose counters show what a registration holds.
 */
#define MRT_DEBUGFS	"/sys/kernel/debug/mrcore"

static void mrt_dbg_path(char *path, size_t len, const char *file)
{
	snprintf(path, len, MRT_DEBUGFS "/%s/%s", mt_devname(), file);
}

/* Write @what to fail_stage: 0 or -errno, the knob's own answer. */
static int mrt_arm(const char *what)
{
	char path[256];
	ssize_t n;
	int fd;

	mrt_dbg_path(path, sizeof(path), "fail_stage");
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, what, strlen(what));
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	return n == (ssize_t)strlen(what) ? 0 : -EIO;
}

/* The number after @key on a "key value" line of a debugfs file, or -1. */
static long long mrt_dbg_value(const char *file, const char *key)
{
	char path[256], line[128], k[64];
	long long v, ret = -1;
	FILE *f;

	mrt_dbg_path(path, sizeof(path), file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %lld", k, &v) == 2 && !strcmp(k, key)) {
			ret = v;
			break;
		}
	}
	fclose(f);
	return ret;
}

FIXTURE(mr)
{
	int fd;
	uint64_t pinned0;
	long vmpin0;
	long long pins0;	/* mt_foll_pins() before the case */
};

FIXTURE_SETUP(mr)
{
	self->vmpin0 = mrt_vmpin_kb();
	self->pins0 = mt_foll_pins();
	if (self->pins0 < 0)
		TH_LOG("no nr_foll_pin_* in /proc/vmstat, or vm.stat_refresh refused (not root?)");
	ASSERT_LE(0, self->pins0);
	self->fd = mt_open(mt_devname());
	if (self->fd < 0)
		TH_LOG("cannot open /dev/%s on %s: %s (is mrcore_test loaded?)",
		       MRCT_DEV_NAME, mt_devname(), strerror(-self->fd));
	ASSERT_LE(0, self->fd);
	self->pinned0 = mrt_pinned(self->fd);
	ASSERT_NE(~0ULL, self->pinned0);
}

/*
 * Closing the file deregisters whatever a failed test left behind; then
 * every page the case pinned must have been unpinned, by the kernel's
 * count: VmPin is only the memlock charge.
 */
FIXTURE_TEARDOWN(mr)
{
	/* An injection test that stopped early may have left a stage armed. */
	mrt_arm("none");
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
	EXPECT_EQ(self->vmpin0, mrt_vmpin_kb());
	EXPECT_EQ(self->pins0, mt_foll_pins());
}

/* Nothing registered, nothing pinned beyond the start. */
static void mrt_check_clean(struct __test_metadata *_metadata, int fd,
			    uint64_t pinned0)
{
	EXPECT_EQ(0, mrt_live(fd));
	EXPECT_EQ(pinned0, mrt_pinned(fd));
}

/* Register, device-read it all, check the bytes, deregister. */
static void mrt_reg_read_check(struct __test_metadata *_metadata, int fd,
			       void *buf, size_t len, uint64_t iova,
			       uint32_t access, struct mrct_reg *reg)
{
	uint8_t *out = malloc(len);

	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, mt_reg(fd, buf, len, iova, access, 0, reg));
	memset(out, 0, len);
	EXPECT_EQ(0, mrt_read(fd, reg->handle,
			      access & MRCT_ACCESS_ZERO_BASED ? 0 : iova,
			      out, len));
	EXPECT_EQ(0, memcmp(buf, out, len));
	free(out);
}

/*
 * 4 KiB pages: the device reads exactly what userspace wrote, and the MR
 * has the page size its physical pages allow (4 KiB, unless the kernel
 * happened to hand out contiguous, aligned ones).
 */
TEST_F(mr, read_4k_pages)
{
	const uint64_t cap = mrt_page_size_cap(_metadata, self->fd);
	uint8_t *buf, out[BUF_SIZE];
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 1);

	mrt_reg_read_check(_metadata, self->fd, buf, BUF_SIZE,
			   (uintptr_t)buf, LW | RR, &reg);
	EXPECT_EQ(MRCT_MODE_MTT, reg.info.mode);
	mrt_check_phys_shift(_metadata, &reg, buf, BUF_SIZE, cap, 12);
	EXPECT_NE(0, reg.info.lkey);
	EXPECT_EQ(1, mrt_live(self->fd));
	/* The same bytes as a responder. */
	memset(out, 0, sizeof(out));
	EXPECT_EQ(0, mrt_rread(self->fd, reg.handle, (uintptr_t)buf, out,
			       BUF_SIZE));
	EXPECT_EQ(0, memcmp(buf, out, BUF_SIZE));
	/* A window in the middle, across a page boundary. */
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle,
			      (uintptr_t)buf + 3 * PAGE - 5, out, 10));
	EXPECT_EQ(0, memcmp(buf + 3 * PAGE - 5, out, 10));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * "rdma res show mr -dd" shows the MR with vhca's driver attributes, read
 * back from device memory: kind, state, mode, page size and entries.
 */
TEST_F(mr, restrack_shows_translation)
{
	const char *dev = mt_devname();
	char cmd[128], line[1024], want_key[32], want_tr[64];
	struct mrct_reg reg;
	bool found = false;
	uint8_t *buf;
	FILE *out;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, madvise(buf, BUF_SIZE, MADV_NOHUGEPAGE));
	mt_fill(buf, BUF_SIZE, 9);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf,
			    LW | RR, 0, &reg));

	snprintf(cmd, sizeof(cmd), "rdma res show mr dev %s -dd 2>&1", dev);
	snprintf(want_key, sizeof(want_key), "lkey 0x%x ", reg.info.lkey);
	snprintf(want_tr, sizeof(want_tr), "drv_page_size %u drv_entries %u",
		 1U << reg.info.page_shift, reg.info.entries);
	out = popen(cmd, "r");
	ASSERT_NE(NULL, out);
	while (fgets(line, sizeof(line), out)) {
		if (!strstr(line, want_key))
			continue;
		found = true;
		EXPECT_NE(NULL, strstr(line, "drv_kind user")) TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, "drv_state VALID")) TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, "drv_mode MTT")) TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, want_tr))
			TH_LOG("want '%s' in: %s", want_tr, line);
	}
	EXPECT_EQ(0, pclose(out));
	EXPECT_TRUE(found) TH_LOG("no MR with %sin '%s'", want_key, cmd);

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* An iova unrelated to the address: the device uses only the iova. */
TEST_F(mr, read_iova_ne_va)
{
	uint8_t *buf, out[PAGE];
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 2);

	mrt_reg_read_check(_metadata, self->fd, buf, BUF_SIZE, FAR_IOVA,
			   LW | RR, &reg);
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, FAR_IOVA + 5 * PAGE + 7,
			      out, 100));
	EXPECT_EQ(0, memcmp(buf + 5 * PAGE + 7, out, 100));
	/* The virtual address is not in the key's address space. */
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, (uintptr_t)buf,
				    out, 1));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* A buffer starting mid-page, iova with the same page offset. */
TEST_F(mr, read_unaligned_start_and_end)
{
	const size_t off = 100, len = 3 * PAGE + 50;
	const uint64_t iova = FAR_IOVA + off;
	uint8_t *buf, out[1];
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 3);

	mrt_reg_read_check(_metadata, self->fd, buf + off, len, iova, LW | RR,
			   &reg);
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, iova + len - 1, out, 1));
	EXPECT_EQ(buf[off + len - 1], out[0]);
	/* One byte past either end. */
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, iova + len, out, 1));
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, iova - 1, out, 1));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ZERO_BASED: the device addresses the MR from 0 to length. */
TEST_F(mr, read_zero_based)
{
	uint8_t *buf, out[PAGE];
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 4);

	mrt_reg_read_check(_metadata, self->fd, buf, BUF_SIZE, 0,
			   LW | RR | MRCT_ACCESS_ZERO_BASED, &reg);
	EXPECT_EQ(0, mrt_rread(self->fd, reg.handle, 7 * PAGE + 1, out, PAGE));
	EXPECT_EQ(0, memcmp(buf + 7 * PAGE + 1, out, PAGE));
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, BUF_SIZE, out, 1));
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, (uintptr_t)buf,
				    out, 1));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* The device writes through the key; userspace sees exactly those bytes. */
TEST_F(mr, device_write_seen_by_user)
{
	uint8_t *buf, in[2 * PAGE], zero[BUF_SIZE] = {};
	const size_t at = 2 * PAGE + 300;
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 0, BUF_SIZE);
	mt_fill(in, sizeof(in), 5);

	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, FAR_IOVA, LW | RW | RR, 0,
			    &reg));
	EXPECT_EQ(0, mrt_write(self->fd, reg.handle, FAR_IOVA + at, in, PAGE));
	EXPECT_EQ(0, memcmp(in, buf + at, PAGE));
	/* Not a byte around it. */
	EXPECT_EQ(0, memcmp(zero, buf, at));
	EXPECT_EQ(0, memcmp(zero, buf + at + PAGE, BUF_SIZE - at - PAGE));
	/* As a responder, over the whole MR. */
	mt_fill(buf, BUF_SIZE, 0);
	EXPECT_EQ(0, mt_xfer(self->fd, MRCT_DEV_WRITE, reg.handle,
			     FAR_IOVA + BUF_SIZE - sizeof(in), in, sizeof(in),
			     MRCT_XFER_REMOTE));
	EXPECT_EQ(0, memcmp(in, buf + BUF_SIZE - sizeof(in), sizeof(in)));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * Before a case's first check: deregister @reg and make sure nothing is
 * left pinned, so that the SKIP the caller then takes hides nothing (in
 * 6.1's harness a SKIP turns every failure of the case into a skip).
 */
static void mrt_undo_for_skip(struct __test_metadata *_metadata, int fd,
			      uint64_t pinned0, uint32_t handle)
{
	ASSERT_EQ(0, mt_dereg(fd, handle));
	ASSERT_EQ(0, mrt_live(fd));
	ASSERT_EQ(pinned0, mrt_pinned(fd));
}

/*
 * Register a THP area of @len bytes at @iova (0: at its own address),
 * after making sure the kernel gave huge pages: true, with *@reg live.
 * Otherwise the case is skipped (nothing registered any more) and false.
 */
static bool mrt_reg_thp(struct __test_metadata *_metadata, int fd,
			uint64_t pinned0, uint8_t **bufp, size_t len,
			size_t hpage, uint64_t iova, uint64_t seed,
			struct mrct_reg *reg)
{
	const uint64_t cap = mrt_page_size_cap(_metadata, fd);
	unsigned int huge_shift;
	uint32_t entries;
	uint8_t *buf;
	long kb;

	buf = mrt_thp_area(len, hpage, seed);
	ASSERT_NE(NULL, buf);
	*bufp = buf;
	kb = mt_anon_huge_kb(buf);
	if (kb != (long)(len >> 10))
		SKIP(return false, "the kernel gave %ld kB of THP, not %zu",
		     kb, len >> 10);
	ASSERT_EQ(0, mt_reg(fd, buf, len, iova ? iova : (uintptr_t)buf,
			    LW | RR, 0, reg));
	/*
	 * Pinned: the pages can no longer change. Whether they are still
	 * huge (not split between the smaps read and the pin) is in their
	 * frame numbers.
	 */
	huge_shift = mrt_phys_shift(buf, len, (uintptr_t)buf, cap, &entries);
	ASSERT_NE(0, huge_shift)
		TH_LOG("no PFNs in /proc/self/pagemap (not root?)");
	if (huge_shift < (unsigned int)__builtin_ctzl(hpage)) {
		mrt_undo_for_skip(_metadata, fd, pinned0, reg->handle);
		SKIP(return false, "the THP was split before the pin (its pages allow 2^%u)",
		     huge_shift);
	}
	return true;
}

/*
 * THP memory gets huge-page entries: two THPs (of the kernel's PMD size),
 * two entries; or what their frame numbers allow, if the kernel happened
 * to place them contiguously at an iova-congruent address.
 */
TEST_F_TIMEOUT(mr, read_thp, 120)
{
	const size_t hpage = mt_thp_size(), len = 2 * hpage;
	struct mrct_reg reg;
	uint8_t *buf, *out;

	if (!hpage)
		SKIP(return, "no transparent huge pages (transparent_hugepage/enabled)");
	if (!mrt_reg_thp(_metadata, self->fd, self->pinned0, &buf, len, hpage,
			 0, 6, &reg))
		return;
	out = malloc(len);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, (uintptr_t)buf, out, len));
	EXPECT_EQ(0, memcmp(buf, out, len));
	EXPECT_EQ(MRCT_MODE_MTT, reg.info.mode);
	mrt_check_phys_shift(_metadata, &reg, buf, len,
			     mrt_page_size_cap(_metadata, self->fd),
			     __builtin_ctzl(hpage));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
	free(out);
}

/*
 * THP memory at an iova 4 KiB off a huge-page boundary: a huge entry
 * would cover bytes outside the MR, so the entries must be 4 KiB.
 */
TEST_F_TIMEOUT(mr, read_thp_misaligned_iova, 120)
{
	const uint64_t iova = FAR_IOVA + PAGE;
	const size_t hpage = mt_thp_size(), len = hpage;
	struct mrct_reg reg;
	uint8_t *buf, *out;

	if (!hpage)
		SKIP(return, "no transparent huge pages (transparent_hugepage/enabled)");
	if (!mrt_reg_thp(_metadata, self->fd, self->pinned0, &buf, len, hpage,
			 iova, 7, &reg))
		return;
	out = malloc(len);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, iova, out, len));
	EXPECT_EQ(0, memcmp(buf, out, len));
	EXPECT_EQ(12, reg.info.page_shift);
	EXPECT_EQ(len / PAGE, reg.info.entries);

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
	free(out);
}

/*
 * hugetlb memory gets huge-page entries, with or without the HUGETLB
 * hint: 2 MiB pages (mt_hugetlb_map() has the kernel's word for it), so
 * two entries, or fewer if the kernel placed the pages contiguously
 * (pagemap says).
 */
TEST_F_TIMEOUT(mr, read_hugetlb, 120)
{
	const size_t hpage = 2UL << 20, len = 2 * hpage;
	const uint64_t cap = mrt_page_size_cap(_metadata, self->fd);
	struct mrct_reg reg;
	const char *why;
	uint8_t *buf;
	long old;

	why = mt_hugetlb_map(2, &old, &buf);
	if (why)
		SKIP(return, "%s", why);
	mt_fill(buf, len, 8);

	mrt_reg_read_check(_metadata, self->fd, buf, len, (uintptr_t)buf,
			   LW | RR, &reg);
	mrt_check_phys_shift(_metadata, &reg, buf, len, cap, 21);
	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));

	mrt_reg_read_check(_metadata, self->fd, buf, len, FAR_IOVA,
			   LW | RR | MRCT_ACCESS_HUGETLB, &reg);
	mrt_check_phys_shift(_metadata, &reg, buf, len, cap, 21);
	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));

	mrt_check_clean(_metadata, self->fd, self->pinned0);
	munmap(buf, len);
	mt_hugetlb_restore(old);
}

/* ANCHORS 1: addr + length wraps. */
TEST_F(mr, reg_addr_len_overflow_einval)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, (void *)-PAGE, 2 * PAGE,
				  FAR_IOVA, LW, 0, &reg));
	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, -(uintptr_t)buf + PAGE,
				  (uintptr_t)buf, LW, 0, &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 2: a zero-length user MR. */
TEST_F(mr, reg_zero_length_einval)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, 0, (uintptr_t)buf, LW, 0,
				  &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * ANCHORS 3: more than UINT_MAX pages, in the user address range, so only
 * a page-count check catches it before pinning (which would be -EFAULT).
 */
TEST_F(mr, reg_too_many_pages_einval)
{
	struct mrct_reg reg;

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, (void *)0x10000,
				  (1ULL << 44) + PAGE, 0x10000, 0, 0, &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* iova + length wraps. */
TEST_F(mr, reg_iova_wrap_einval)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, 2 * PAGE, -PAGE, LW, 0, &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* addr and iova must have the same offset in their page. */
TEST_F(mr, reg_page_offset_mismatch_einval)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, PAGE, FAR_IOVA + 8, LW, 0,
				  &reg));
	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf + 8, PAGE, FAR_IOVA, LW, 0,
				  &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* Bits outside the supported set. */
TEST_F(mr, reg_unknown_access_einval)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, PAGE, (uintptr_t)buf,
				  LW | 0x100, 0, &reg));
	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, PAGE, (uintptr_t)buf,
				  LW | 0x40000000, 0, &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 4: REMOTE_WRITE or REMOTE_ATOMIC need LOCAL_WRITE. */
TEST_F(mr, reg_remote_write_needs_local_write_einval)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);

	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, PAGE, (uintptr_t)buf,
				  RW | RR, 0, &reg));
	EXPECT_EQ(-EINVAL, mt_reg(self->fd, buf, PAGE, (uintptr_t)buf,
				  MRCT_ACCESS_REMOTE_ATOMIC, 0, &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * ANCHORS 6: without CAP_IPC_LOCK, RLIMIT_MEMLOCK bounds pinned_vm; going
 * over is -ENOMEM with nothing left charged.
 */
TEST_F(mr, reg_over_memlock_enomem)
{
	const struct rlimit lim = { 16 * PAGE, 16 * PAGE };
	const size_t len = 4 * BUF_SIZE;
	struct mrct_reg small, big;
	uint8_t *buf;

	buf = mrt_map(len, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, len);
	ASSERT_EQ(0, mrt_drop_ipc_lock());
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &lim));

	/* 8 of 16 pages, then 9 more: one page over. */
	ASSERT_EQ(0, mt_reg(self->fd, buf, 8 * PAGE, (uintptr_t)buf, LW, 0,
			    &small));
	EXPECT_EQ(self->pinned0 + 8, mrt_pinned(self->fd));
	EXPECT_EQ(-ENOMEM, mt_reg(self->fd, buf + 8 * PAGE, 9 * PAGE,
				  (uintptr_t)buf + 8 * PAGE, LW, 0, &big));
	EXPECT_EQ(self->pinned0 + 8, mrt_pinned(self->fd));
	EXPECT_EQ(-ENOMEM, mt_reg(self->fd, buf, len, (uintptr_t)buf, LW, 0,
				  &big));
	EXPECT_EQ(self->pinned0 + 8, mrt_pinned(self->fd));

	ASSERT_EQ(0, mt_dereg(self->fd, small.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 7: nothing mapped there. */
TEST_F(mr, reg_unmapped_efault)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, munmap(buf, BUF_SIZE));

	EXPECT_EQ(-EFAULT, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW,
				  0, &reg));
	EXPECT_EQ(-EFAULT, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, 0, 0,
				  &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 7/8: the tail is unmapped; the pinned head must be released. */
TEST_F(mr, reg_partly_unmapped_efault)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	ASSERT_EQ(0, munmap(buf + BUF_SIZE - PAGE, PAGE));

	EXPECT_EQ(-EFAULT, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW,
				  0, &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 7: PROT_NONE cannot be pinned, for reading or writing. */
TEST_F(mr, reg_prot_none_efault)
{
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_NONE);
	ASSERT_NE(MAP_FAILED, buf);

	EXPECT_EQ(-EFAULT, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, 0, 0,
				  &reg));
	EXPECT_EQ(-EFAULT, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW,
				  0, &reg));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * ANCHORS 7: a read-only mapping registers read-only (and the device reads
 * it), but not with LOCAL_WRITE.
 */
TEST_F(mr, reg_write_on_readonly_mapping_efault)
{
	uint8_t *buf, out[BUF_SIZE];
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 9);
	ASSERT_EQ(0, mprotect(buf, BUF_SIZE, PROT_READ));

	EXPECT_EQ(-EFAULT, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW,
				  0, &reg));
	EXPECT_EQ(self->pinned0, mrt_pinned(self->fd));
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, RR, 0,
			    &reg));
	EXPECT_EQ(0, mrt_rread(self->fd, reg.handle, (uintptr_t)buf, out,
			       BUF_SIZE));
	EXPECT_EQ(0, memcmp(buf, out, BUF_SIZE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 21: the handle is gone; so is the key in the device. */
TEST_F(mr, dereg_twice_enoent)
{
	struct mrct_reg reg;
	uint8_t *buf, out[8];

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);

	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW, 0,
			    &reg));
	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	EXPECT_EQ(-ENOENT, mt_dereg(self->fd, reg.handle));
	EXPECT_EQ(-ENOENT, mrt_read(self->fd, reg.handle, (uintptr_t)buf,
				    out, 8));
	EXPECT_EQ(-ENOKEY, mrt_key_xfer(self->fd, MRCT_DEV_READ, reg.info.lkey,
					0, (uintptr_t)buf, out, 8, 0));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 12/16: a key with the wrong variant, with and without bytes. */
TEST_F(mr, xfer_lkey_plus_one_enokey)
{
	struct mrct_reg reg;
	uint8_t *buf, out[8];
	uint32_t bad;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf,
			    LW | RW | RR, 0, &reg));
	bad = reg.info.lkey + 1;

	EXPECT_EQ(-ENOKEY, mrt_key_xfer(self->fd, MRCT_DEV_READ, bad, 0,
					(uintptr_t)buf, out, 8, 0));
	EXPECT_EQ(-ENOKEY, mrt_key_xfer(self->fd, MRCT_DEV_WRITE, bad, 0,
					(uintptr_t)buf, out, 8,
					MRCT_XFER_REMOTE));
	EXPECT_EQ(-ENOKEY, mrt_key_xfer(self->fd, MRCT_DEV_READ, bad, 0,
					(uintptr_t)buf, out, 0, 0));
	/* Zero bytes through the right key check only the key. */
	EXPECT_EQ(0, mrt_key_xfer(self->fd, MRCT_DEV_READ, reg.info.lkey, 0,
				  (uintptr_t)buf, out, 0, 0));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 11: outside [iova, iova + length), including a wrap. */
TEST_F(mr, xfer_beyond_mr_erange)
{
	const uint64_t iova = FAR_IOVA;
	struct mrct_reg reg;
	uint8_t *buf, out[PAGE];

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 10);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, iova, LW | RW | RR, 0,
			    &reg));

	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, iova + BUF_SIZE - 8, out,
			      8));
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, iova + BUF_SIZE - 8,
				    out, 16));
	EXPECT_EQ(-ERANGE, mrt_write(self->fd, reg.handle, iova + BUF_SIZE - 8,
				     out, 16));
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, iova - 1, out, 2));
	EXPECT_EQ(-ERANGE, mrt_rread(self->fd, reg.handle,
				     0xfffffffffffffc00ULL, out, 0x400));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* A read-only MR is never written, and its bytes stay as they were. */
TEST_F(mr, xfer_write_readonly_mr_eperm)
{
	uint8_t *buf, in[PAGE], copy[BUF_SIZE];
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 11);
	memcpy(copy, buf, BUF_SIZE);
	mt_fill(in, PAGE, 12);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, RR, 0,
			    &reg));

	EXPECT_EQ(-EPERM, mrt_write(self->fd, reg.handle, (uintptr_t)buf, in,
				    PAGE));
	EXPECT_EQ(-EPERM, mt_xfer(self->fd, MRCT_DEV_WRITE, reg.handle,
				  (uintptr_t)buf, in, PAGE, MRCT_XFER_REMOTE));
	EXPECT_EQ(0, memcmp(copy, buf, BUF_SIZE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 14: no REMOTE_READ, no remote read; local reads still work. */
TEST_F(mr, xfer_remote_read_without_right_eperm)
{
	struct mrct_reg reg;
	uint8_t *buf, out[8];

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW, 0,
			    &reg));

	EXPECT_EQ(-EPERM, mrt_rread(self->fd, reg.handle, (uintptr_t)buf, out,
				    8));
	EXPECT_EQ(-EPERM, mt_xfer(self->fd, MRCT_DEV_WRITE, reg.handle,
				  (uintptr_t)buf, out, 8, MRCT_XFER_REMOTE));
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, (uintptr_t)buf, out, 8));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 13: the right key from another PD. */
TEST_F(mr, xfer_other_pd_eperm)
{
	struct mrct_reg reg;
	uint8_t *buf, out[8];

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW | RR, 0,
			    &reg));

	EXPECT_EQ(0, mrt_key_xfer(self->fd, MRCT_DEV_READ, reg.info.rkey, 0,
				  (uintptr_t)buf, out, 8, MRCT_XFER_REMOTE));
	EXPECT_EQ(-EPERM, mrt_key_xfer(self->fd, MRCT_DEV_READ, reg.info.rkey,
				       1, (uintptr_t)buf, out, 8,
				       MRCT_XFER_REMOTE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 17: drop REMOTE_READ, remote reads fail; restore it, they work. */
TEST_F(mr, rereg_access_drop_restore)
{
	uint8_t *buf, out[BUF_SIZE];
	struct mrct_rereg rr = {};
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 13);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW | RR, 0,
			    &reg));

	rr.handle = reg.handle;
	rr.flags = MRCT_REREG_ACCESS;
	rr.access = LW;
	ASSERT_EQ(0, mrt_rereg(self->fd, &rr));
	EXPECT_EQ(-EPERM, mrt_rread(self->fd, reg.handle, (uintptr_t)buf, out,
				    8));
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, (uintptr_t)buf, out, 8));

	rr.access = LW | RR;
	ASSERT_EQ(0, mrt_rereg(self->fd, &rr));
	memset(out, 0, sizeof(out));
	EXPECT_EQ(0, mrt_rread(self->fd, reg.handle, (uintptr_t)buf, out,
			       BUF_SIZE));
	EXPECT_EQ(0, memcmp(buf, out, BUF_SIZE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 19: a new translation; the device reads the new buffer only. */
TEST_F(mr, rereg_trans_new_buffer)
{
	uint8_t *a, *b, out[BUF_SIZE];
	const uint64_t iova_b = FAR_IOVA + (1ULL << 32);
	struct mrct_rereg rr = {};
	struct mrct_reg reg;

	a = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	b = mrt_map(2 * BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_NE(MAP_FAILED, b);
	mt_fill(a, BUF_SIZE, 14);
	mt_fill(b, 2 * BUF_SIZE, 15);
	ASSERT_EQ(0, mt_reg(self->fd, a, BUF_SIZE, FAR_IOVA, LW | RR, 0, &reg));

	rr.handle = reg.handle;
	rr.flags = MRCT_REREG_TRANS;
	rr.addr = (uintptr_t)b + PAGE;
	rr.length = BUF_SIZE;
	rr.iova = iova_b;
	ASSERT_EQ(0, mrt_rereg(self->fd, &rr));
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, iova_b, out, BUF_SIZE));
	EXPECT_EQ(0, memcmp(b + PAGE, out, BUF_SIZE));
	EXPECT_EQ(-ERANGE, mrt_read(self->fd, reg.handle, FAR_IOVA, out, 8));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * ANCHORS 20: a rereg that fails leaves the old registration as it was:
 * same key, same bytes, same pinned_vm.
 */
TEST_F(mr, rereg_failure_keeps_old_mr)
{
	uint8_t *buf, *gone, out[BUF_SIZE];
	struct mrct_rereg rr = {};
	struct mrct_reg reg;
	uint64_t pinned;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	gone = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, BUF_SIZE));
	mt_fill(buf, BUF_SIZE, 16);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, FAR_IOVA, LW | RR, 0,
			    &reg));
	pinned = mrt_pinned(self->fd);

	rr.handle = reg.handle;
	rr.flags = MRCT_REREG_TRANS;
	rr.addr = (uintptr_t)gone;
	rr.length = BUF_SIZE;
	rr.iova = FAR_IOVA;
	EXPECT_EQ(-EFAULT, mrt_rereg(self->fd, &rr));
	rr.addr = (uintptr_t)buf;
	rr.length = 0;
	EXPECT_EQ(-EINVAL, mrt_rereg(self->fd, &rr));
	EXPECT_EQ(pinned, mrt_pinned(self->fd));

	memset(out, 0, sizeof(out));
	EXPECT_EQ(0, mrt_key_xfer(self->fd, MRCT_DEV_READ, reg.info.lkey, 0,
				  FAR_IOVA, out, BUF_SIZE, 0));
	EXPECT_EQ(0, memcmp(buf, out, BUF_SIZE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * ANCHORS 18: read-only to read-write on a read-only mapping cannot
 * re-pin writable: -EACCES, and the MR stays read-only.
 */
TEST_F(mr, rereg_ro_to_rw_on_readonly_mapping_eacces)
{
	uint8_t *buf, in[PAGE], copy[BUF_SIZE];
	struct mrct_rereg rr = {};
	struct mrct_reg reg;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	mt_fill(buf, BUF_SIZE, 17);
	memcpy(copy, buf, BUF_SIZE);
	mt_fill(in, PAGE, 18);
	ASSERT_EQ(0, mprotect(buf, BUF_SIZE, PROT_READ));
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, RR, 0,
			    &reg));

	rr.handle = reg.handle;
	rr.flags = MRCT_REREG_ACCESS;
	rr.access = LW | RR;
	EXPECT_EQ(-EACCES, mrt_rereg(self->fd, &rr));
	EXPECT_EQ(-EPERM, mrt_write(self->fd, reg.handle, (uintptr_t)buf, in,
				    PAGE));
	EXPECT_EQ(0, memcmp(copy, buf, BUF_SIZE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 19: after a PD change only the new PD reaches the MR. */
TEST_F(mr, rereg_pd_moves_mr)
{
	struct mrct_rereg rr = {};
	struct mrct_reg reg;
	uint8_t *buf, out[8];

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW | RR, 0,
			    &reg));

	rr.handle = reg.handle;
	rr.flags = MRCT_REREG_PD;
	rr.pd = 1;
	ASSERT_EQ(0, mrt_rereg(self->fd, &rr));
	EXPECT_EQ(0, mrt_key_xfer(self->fd, MRCT_DEV_READ, rr.info.rkey, 1,
				  (uintptr_t)buf, out, 8, MRCT_XFER_REMOTE));
	EXPECT_EQ(-EPERM, mrt_key_xfer(self->fd, MRCT_DEV_READ, rr.info.rkey,
				       0, (uintptr_t)buf, out, 8,
				       MRCT_XFER_REMOTE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* The checks uverbs makes before the driver's rereg. */
TEST_F(mr, rereg_uverbs_checks)
{
	struct mrct_rereg rr = {};
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW, 0,
			    &reg));

	rr.handle = reg.handle;
	EXPECT_EQ(-EINVAL, mrt_rereg(self->fd, &rr));
	rr.flags = 0x8;
	EXPECT_EQ(-EOPNOTSUPP, mrt_rereg(self->fd, &rr));
	rr.flags = MRCT_REREG_TRANS;
	rr.addr = (uintptr_t)buf;
	rr.length = PAGE;
	rr.iova = FAR_IOVA + 8;
	EXPECT_EQ(-EINVAL, mrt_rereg(self->fd, &rr));
	rr.flags = MRCT_REREG_ACCESS;
	rr.access = RW;
	EXPECT_EQ(-EINVAL, mrt_rereg(self->fd, &rr));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	rr.access = LW;
	EXPECT_EQ(-ENOENT, mrt_rereg(self->fd, &rr));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* ANCHORS 22 (small): a key never works again once its MR is gone. */
TEST_F(mr, stale_keys_enokey)
{
	uint32_t prev = 0;
	struct mrct_reg reg;
	uint8_t *buf, out[8];
	int i;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);

	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, mt_reg(self->fd, buf, PAGE, (uintptr_t)buf, LW, 0,
				    &reg));
		ASSERT_NE(prev, reg.info.lkey);
		if (prev)
			ASSERT_EQ(-ENOKEY,
				  mrt_key_xfer(self->fd, MRCT_DEV_READ, prev, 0,
					       (uintptr_t)buf, out, 8, 0));
		ASSERT_EQ(0, mrt_read(self->fd, reg.handle, (uintptr_t)buf,
				      out, 8));
		ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
		prev = reg.info.lkey;
	}
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* The module's own limits: transfer size and unused fields. */
TEST_F(mr, xfer_bad_request_einval)
{
	struct mrct_xfer x = {};
	struct mrct_reg reg;
	uint8_t *buf;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, (uintptr_t)buf, LW, 0,
			    &reg));

	x.handle = reg.handle;
	x.ptr = (uintptr_t)buf;
	x.iova = (uintptr_t)buf;
	x.length = MRCT_MAX_XFER + 1ULL;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DEV_READ, &x));
	x.length = 8;
	x.key = reg.info.lkey;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DEV_READ, &x));
	x.key = 0;
	x.pd = MRCT_NUM_PDS;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DEV_READ, &x));
	x.pd = 0;
	x.flags = 0x80;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_DEV_READ, &x));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * Closing a file with MRs live deregisters them and unpins: the kernel's
 * pin count saw each page pinned, and sees it released by the close.
 */
TEST_F(mr, close_with_live_mrs_unpins)
{
	struct mrct_reg reg;
	long long pins0;
	uint8_t *buf;
	int fd2, i;

	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	fd2 = mt_open(mt_devname());
	ASSERT_LE(0, fd2);

	pins0 = mt_foll_pins();
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, mt_reg(fd2, buf + i * PAGE, PAGE,
				    (uintptr_t)buf + i * PAGE, LW, 0, &reg));
	EXPECT_EQ(4, mrt_live(fd2));
	EXPECT_EQ(pins0 + 4, mt_foll_pins());
	EXPECT_EQ(0, close(fd2));
	EXPECT_EQ(pins0, mt_foll_pins());
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * Issue 3 item 5: a 16 GiB registration must not trip the soft-lockup
 * watchdog. The VM has 3 GiB, so the 16 GiB of address space map one
 * 64 MiB memfd 256 times: mrcore still pins 4 Mi pages, builds a 4 Mi
 * entry scatterlist, gives it DMA addresses (vhca addresses user pages
 * directly, so nothing is DMA-mapped: DMA-API debug, which allows a
 * cacheline in at most 7 live mappings, has none to count) and writes
 * 4 Mi MTT entries, which is the work that must yield. The watchdog threshold is lowered to 1 s (a
 * soft lockup is then reported after 2 s without a schedule), and the
 * VM tier fails on the report. The device reads the last page back.
 */
#define BIG_ALIAS	(64ULL << 20)
#define BIG_LEN		(16ULL << 30)

TEST_F_TIMEOUT(mr, reg_16g_no_soft_lockup, 600)
{
	char old[32] = "";
	struct mrct_reg reg;
	uint8_t *area, out[64];
	long long pins0;
	uint64_t off;
	int mfd;

	if (mt_read_file("/proc/sys/kernel/watchdog_thresh", old,
			 sizeof(old)))
		SKIP(return, "no soft-lockup watchdog in this kernel");
	mfd = memfd_create("mrt16g", 0);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, BIG_ALIAS));

	area = mmap(NULL, BIG_LEN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	for (off = 0; off < BIG_LEN; off += BIG_ALIAS)
		ASSERT_NE(MAP_FAILED, mmap(area + off, BIG_ALIAS,
					   PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_FIXED, mfd, 0));
	/* Populate the memfd once; every alias then maps its pages. */
	mt_fill(area, BIG_ALIAS, 16);

	pins0 = mt_foll_pins();
	ASSERT_EQ(0, mt_write_file("/proc/sys/kernel/watchdog_thresh", "1"));
	EXPECT_EQ(0, mt_reg(self->fd, area, BIG_LEN, (uintptr_t)area, LW, 0,
			    &reg));
	if (!_metadata->passed) {
		mt_write_file("/proc/sys/kernel/watchdog_thresh", old);
		EXPECT_EQ(pins0, mt_foll_pins());
		goto out;
	}
	/* Every page of every alias pinned once, by the kernel's count. */
	EXPECT_EQ(pins0 + (long long)(BIG_LEN / PAGE), mt_foll_pins());
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle,
			      (uintptr_t)area + BIG_LEN - sizeof(out), out,
			      sizeof(out)));
	EXPECT_EQ(0, memcmp(area + BIG_ALIAS - sizeof(out), out,
			    sizeof(out)));
	EXPECT_EQ(0, mt_dereg(self->fd, reg.handle));
	EXPECT_EQ(0, mt_write_file("/proc/sys/kernel/watchdog_thresh", old));
	EXPECT_EQ(pins0, mt_foll_pins());
	mrt_check_clean(_metadata, self->fd, self->pinned0);
out:
	munmap(area, BIG_LEN);
	close(mfd);
}

/* mrcore's debugfs "stats" of the device: user MRs, keys, pins, PDs. */
struct mrt_dev_held {
	long long mrs;
	long long mkeys;
	long long pages_pinned;
	long long pds;
};

static void mrt_dev_held(struct mrt_dev_held *h)
{
	h->mrs = mrt_dbg_value("stats", "mrs_user");
	h->mkeys = mrt_dbg_value("stats", "mkeys");
	h->pages_pinned = mrt_dbg_value("stats", "pages_pinned");
	h->pds = mrt_dbg_value("stats", "pds");
}

/* The child of exit_with_live_mrs: 2 MRs, then wait for @go and exit. */
static int mrt_exit_child(int ready, int go)
{
	uint8_t *buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	int fd = mt_open(mt_devname());
	struct mrct_reg reg;
	char c;

	if (buf == MAP_FAILED || fd < 0)
		return 2;
	memset(buf, 1, BUF_SIZE);
	if (mt_reg(fd, buf, BUF_SIZE, (uintptr_t)buf, LW, 0, &reg) ||
	    mt_reg(fd, buf, PAGE, FAR_IOVA, LW | RR, 0, &reg))
		return 3;
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) < 0)
		return 4;
	/* Neither dereg nor close: exit does both. */
	return 0;
}

/*
 * ANCHORS 33: a process exits with MRs live and its file still open. The
 * device's MRs, keys and pinned pages (mrcore's debugfs) and the kernel's
 * pin count are seen to rise by the child's two MRs while it lives, and
 * must all be back where they were once it is gone: nothing of the
 * parent's is involved, so nothing of the parent's is looked at.
 */
TEST_F_TIMEOUT(mr, exit_with_live_mrs, 120)
{
	/* BUF_SIZE and one page, all written, so none is the zero page. */
	const long long npins = NPAGES + 1;
	struct mrt_dev_held h0, h;
	int ready[2], go[2], status;
	long long pins0;
	uint64_t end;
	pid_t pid;
	char c;

	mrt_dev_held(&h0);
	if (h0.mkeys < 0)
		SKIP(return, "no %s/%s/stats (debugfs not mounted?)",
		     MRT_DEBUGFS, mt_devname());
	ASSERT_LE(0, h0.mrs);
	ASSERT_LE(0, h0.pages_pinned);
	ASSERT_LE(0, h0.pds);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pins0 = mt_foll_pins();

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		_exit(mrt_exit_child(ready[1], go[0]));
	}
	close(ready[1]);
	close(go[0]);
	EXPECT_EQ(1, read(ready[0], &c, 1));
	mrt_dev_held(&h);
	EXPECT_EQ(h0.mrs + 2, h.mrs);
	EXPECT_EQ(h0.mkeys + 2, h.mkeys);
	EXPECT_EQ(h0.pages_pinned + npins, h.pages_pinned);
	EXPECT_EQ(pins0 + npins, mt_foll_pins());

	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The file's release runs in the exit; wait for it, not a time. */
	end = mrt_now_ms() + MRT_WAIT_MS;
	do {
		mrt_dev_held(&h);
		if (!memcmp(&h, &h0, sizeof(h)))
			break;
		usleep(10000);
	} while (mrt_now_ms() < end);
	EXPECT_EQ(h0.mrs, h.mrs);
	EXPECT_EQ(h0.mkeys, h.mkeys);
	EXPECT_EQ(h0.pages_pinned, h.pages_pinned);
	EXPECT_EQ(h0.pds, h.pds);
	EXPECT_EQ(pins0, mt_foll_pins());
	close(ready[0]);
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * ANCHORS 38: the device goes away (rdma link del) while a context holds
 * MRs on it. Everything is deregistered and unpinned at once, and the
 * context answers -ENODEV from then on. Uses a spare device, named by
 * MRCT_SPARE_DEVICE, because it is gone afterwards.
 */
TEST_F(mr, device_removal_with_live_mrs)
{
	const char *spare = getenv("MRCT_SPARE_DEVICE");
	struct mrct_reg reg;
	uint8_t *buf, out[8];
	char cmd[128];
	int fd2;

	if (!spare)
		SKIP(return, "MRCT_SPARE_DEVICE names no device to remove");
	buf = mrt_map(BUF_SIZE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, BUF_SIZE);
	fd2 = mt_open(spare);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, mt_reg(fd2, buf, BUF_SIZE, (uintptr_t)buf, LW | RR, 0,
			    &reg));
	ASSERT_EQ(0, mt_reg(fd2, buf, PAGE, FAR_IOVA, LW, 0, &reg));

	snprintf(cmd, sizeof(cmd), "rdma link del %s", spare);
	ASSERT_EQ(0, system(cmd));
	EXPECT_EQ(0, mrt_live(fd2));
	EXPECT_EQ(self->pinned0, mrt_pinned(fd2));
	EXPECT_EQ(-ENODEV, mrt_read(fd2, reg.handle, FAR_IOVA, out, 8));
	EXPECT_EQ(-ENODEV, mt_dereg(fd2, reg.handle));
	EXPECT_EQ(-ENODEV, mt_reg(fd2, buf, PAGE, FAR_IOVA, LW, 0, &reg));
	EXPECT_EQ(0, close(fd2));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * Failure injection at every stage of a registration, through mrcore's
 * "fail_stage" knob: user MRs cannot be pinned in KUnit, so the stages
 * that only they have (pin, sg_alloc, dma_map) are failed from here, and
 * the others once more with real user memory behind them. Every case
 * checks that the failure unwound completely (pinned_vm, keys,
 * translation space, MRs and pinned pages as before), that the stage
 * fired exactly once and disarmed, and that the device still works.
 *
 * 8 MiB of 4 KiB pages pin in four batches of MRT_PIN_BATCH pages, and
 * pin and sg_alloc fail before their second batch: the first batch is
 * pinned and appended, so the partial unwind is what gets tested.
 */

/* MRC_PIN_BATCH in umem.c: one page of page pointers per GUP call. */
#define MRT_PIN_BATCH	(PAGE / sizeof(void *))
#define INJ_SIZE	(8UL << 20)
/* Entries built per write_xlt call: MRC_XLT_CHUNK_BYTES / MTT entry. */
#define MRT_XLT_CHUNK	(64 * 1024 / 8)
/* The rereg tests' new iova, far from the old one. */
#define INJ_IOVA2	(FAR_IOVA + (1ULL << 32))

/* What registrations hold on the device, and the injection counters. */
struct mrt_snap {
	uint64_t pinned_vm;
	long long mkeys;
	long long xlt_segs;
	long long mrs;
	long long pages_pinned;
	long long injected;
	long long fired;
	long long left;
	long long foll_pins;	/* the kernel's own count, mt_foll_pins() */
};

static void mrt_snap_take(int fd, const char *stage, struct mrt_snap *s)
{
	char fired[64];

	snprintf(fired, sizeof(fired), "fired_%s", stage);
	s->pinned_vm = mrt_pinned(fd);
	s->mkeys = mrt_dbg_value("stats", "mkeys");
	s->xlt_segs = mrt_dbg_value("stats", "xlt_segs_used");
	s->mrs = mrt_dbg_value("stats", "mrs");
	s->pages_pinned = mrt_dbg_value("stats", "pages_pinned");
	s->injected = mrt_dbg_value("stats", "injected");
	s->fired = mrt_dbg_value("fail_stage", fired);
	s->left = mrt_dbg_value("fail_stage", "left");
	s->foll_pins = mt_foll_pins();
}

/* Nothing held beyond @before; the stage fired @fired more times. */
static void mrt_snap_check(struct __test_metadata *_metadata,
			   const struct mrt_snap *before,
			   const struct mrt_snap *after, long long fired)
{
	EXPECT_EQ(before->pinned_vm, after->pinned_vm);
	EXPECT_EQ(before->mkeys, after->mkeys);
	EXPECT_EQ(before->xlt_segs, after->xlt_segs);
	EXPECT_EQ(before->mrs, after->mrs);
	EXPECT_EQ(before->pages_pinned, after->pages_pinned);
	/*
	 * mrcore's pages_pinned counts only what a registration completed;
	 * pages a failed one pinned and did not unpin show only here.
	 */
	EXPECT_EQ(before->foll_pins, after->foll_pins);
	EXPECT_EQ(before->fired + fired, after->fired);
	EXPECT_EQ(before->injected + fired, after->injected);
	/* A failure that fired disarmed the knob. */
	EXPECT_EQ(0, after->left);
}

/*
 * The knob is there: skip (false) without debugfs, fail if mrcore's
 * directory of the device has no fail_stage. Disarmed on return.
 */
static bool mrt_have_inject(struct __test_metadata *_metadata)
{
	char path[256];

	mrt_dbg_path(path, sizeof(path), "stats");
	if (access(path, R_OK))
		SKIP(return false, "no %s (debugfs not mounted?)", path);
	mrt_dbg_path(path, sizeof(path), "fail_stage");
	EXPECT_EQ(0, access(path, W_OK)) {
		TH_LOG("mrcore has no %s", path);
		return false;
	}
	EXPECT_EQ(0, mrt_arm("none")) {
		return false;
	}
	return true;
}

/* @len bytes of 4 KiB pages (no THP), filled from @seed; NULL if none. */
static uint8_t *mrt_inj_buf(size_t len, uint64_t seed)
{
	uint8_t *p = mrt_map(len, PROT_READ | PROT_WRITE);

	if (p == MAP_FAILED)
		return NULL;
	/* Without THP support there is nothing to turn off. */
	madvise(p, len, MADV_NOHUGEPAGE);
	mt_fill(p, len, seed);
	return p;
}

/* Arm "@stage @n". */
static int mrt_arm_nth(const char *stage, unsigned int n)
{
	char what[64];

	snprintf(what, sizeof(what), "%s %u\n", stage, n);
	return mrt_arm(what);
}

/*
 * Arm @stage, register 8 MiB: @err, and everything is as before. Then
 * the same registration works and the device reads the right bytes.
 */
static void mrt_inject_reg(struct __test_metadata *_metadata, int fd,
			   uint64_t pinned0, const char *stage, int err)
{
	struct mrt_snap before, after;
	struct mrct_reg reg;
	uint8_t *buf;

	if (!mrt_have_inject(_metadata))
		return;
	buf = mrt_inj_buf(INJ_SIZE, 40);
	ASSERT_NE(NULL, buf);
	mrt_snap_take(fd, stage, &before);

	ASSERT_EQ(0, mrt_arm_nth(stage, 1));
	EXPECT_EQ(1, mrt_dbg_value("fail_stage", "left"));
	EXPECT_EQ(err, mt_reg(fd, buf, INJ_SIZE, FAR_IOVA, LW | RR, 0, &reg));
	mrt_snap_take(fd, stage, &after);
	mrt_snap_check(_metadata, &before, &after, 1);
	EXPECT_EQ(0, mrt_live(fd));

	/*
	 * The device is still fully usable, and nothing fires again. The
	 * pin count sees the 8 MiB pinned, so it would see them left so.
	 */
	mrt_reg_read_check(_metadata, fd, buf, INJ_SIZE, FAR_IOVA, LW | RR,
			   &reg);
	EXPECT_EQ(before.foll_pins + (long long)(INJ_SIZE / PAGE),
		  mt_foll_pins());
	ASSERT_EQ(0, mt_dereg(fd, reg.handle));
	mrt_snap_take(fd, stage, &after);
	mrt_snap_check(_metadata, &before, &after, 1);
	mrt_check_clean(_metadata, fd, pinned0);
	munmap(buf, INJ_SIZE);
}

TEST_F_TIMEOUT(mr, inject_pin_unwinds, 120)
{
	mrt_inject_reg(_metadata, self->fd, self->pinned0, "pin", -EFAULT);
}

TEST_F_TIMEOUT(mr, inject_sg_alloc_unwinds, 120)
{
	mrt_inject_reg(_metadata, self->fd, self->pinned0, "sg_alloc",
		       -ENOMEM);
}

TEST_F_TIMEOUT(mr, inject_dma_map_unwinds, 120)
{
	mrt_inject_reg(_metadata, self->fd, self->pinned0, "dma_map",
		       -ENOMEM);
}

/* For a user MR the key comes after pinning: all of that must unwind. */
TEST_F_TIMEOUT(mr, inject_key_alloc_unwinds, 120)
{
	mrt_inject_reg(_metadata, self->fd, self->pinned0, "key_alloc",
		       -ENOSPC);
}

TEST_F_TIMEOUT(mr, inject_xlt_alloc_unwinds, 120)
{
	mrt_inject_reg(_metadata, self->fd, self->pinned0, "xlt_alloc",
		       -ENOSPC);
}

TEST_F_TIMEOUT(mr, inject_write_xlt_unwinds, 120)
{
	mrt_inject_reg(_metadata, self->fd, self->pinned0, "write_xlt", -EIO);
}

TEST_F_TIMEOUT(mr, inject_write_mkey_unwinds, 120)
{
	mrt_inject_reg(_metadata, self->fd, self->pinned0, "write_mkey",
		       -EIO);
}

/*
 * write_xlt passes once per chunk of entries: "write_xlt 2" fails the
 * second chunk of one registration, after the first was written. One
 * page more than a chunk of 4 KiB entries takes two chunks, unless the
 * memory happens to allow larger pages (then there is nothing to test).
 */
TEST_F_TIMEOUT(mr, inject_write_xlt_second_chunk_unwinds, 120)
{
	const size_t len = (MRT_XLT_CHUNK + 1) * PAGE;
	struct mrt_snap before, after;
	struct mrct_reg reg;
	uint8_t *buf, out[PAGE];
	uint32_t entries;

	if (!mrt_have_inject(_metadata))
		return;
	buf = mrt_map(len, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, buf);
	madvise(buf, len, MADV_NOHUGEPAGE);
	memset(buf, 0x5a, len);
	mt_fill(buf + len - PAGE, PAGE, 41);

	/* Learn the table; the pages stay put, so later ones get the same. */
	ASSERT_EQ(0, mt_reg(self->fd, buf, len, FAR_IOVA, LW | RR, 0, &reg));
	entries = reg.info.entries;
	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	if (entries <= MRT_XLT_CHUNK)
		SKIP(return, "%u entries of 2^%u bytes fit one write_xlt chunk",
		     entries, reg.info.page_shift);

	mrt_snap_take(self->fd, "write_xlt", &before);
	ASSERT_EQ(0, mrt_arm_nth("write_xlt", 2));
	EXPECT_EQ(-EIO, mt_reg(self->fd, buf, len, FAR_IOVA, LW | RR, 0, &reg));
	mrt_snap_take(self->fd, "write_xlt", &after);
	mrt_snap_check(_metadata, &before, &after, 1);

	/* Both chunks written this time: the last page reads right. */
	ASSERT_EQ(0, mt_reg(self->fd, buf, len, FAR_IOVA, LW | RR, 0, &reg));
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, FAR_IOVA + len - PAGE, out,
			      PAGE));
	EXPECT_EQ(0, memcmp(buf + len - PAGE, out, PAGE));
	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
	munmap(buf, len);
}

/*
 * "<stage> <n>" fails the n-th pass, not the first: two registrations go
 * through, the third fails, the fourth goes through again.
 */
TEST_F(mr, inject_nth_pass_fails)
{
	struct mrt_snap before, after;
	struct mrct_reg reg[3];
	uint8_t *buf;
	int i;

	if (!mrt_have_inject(_metadata))
		return;
	buf = mrt_inj_buf(BUF_SIZE, 42);
	ASSERT_NE(NULL, buf);
	mrt_snap_take(self->fd, "write_mkey", &before);

	ASSERT_EQ(0, mrt_arm_nth("write_mkey", 3));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, FAR_IOVA, LW | RR,
				    0, &reg[i]));
		EXPECT_EQ(2 - i, mrt_dbg_value("fail_stage", "left"));
	}
	EXPECT_EQ(-EIO, mt_reg(self->fd, buf, BUF_SIZE, FAR_IOVA, LW | RR, 0,
			       &reg[2]));
	EXPECT_EQ(0, mrt_dbg_value("fail_stage", "left"));
	EXPECT_EQ(before.fired + 1,
		  mrt_dbg_value("fail_stage", "fired_write_mkey"));
	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, FAR_IOVA, LW | RR, 0,
			    &reg[2]));
	EXPECT_EQ(3, mrt_live(self->fd));

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mt_dereg(self->fd, reg[i].handle));
	mrt_snap_take(self->fd, "write_mkey", &after);
	mrt_snap_check(_metadata, &before, &after, 1);
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/* The knob's input: bad lines are -EINVAL; "none" disarms, firing nothing. */
TEST_F(mr, inject_knob_input)
{
	static const char * const bad[] = {
		"\n", "bogus", "bogus 1", "pin 0", "pin -1", "pin x", "pin 1 2",
		"none 1", "pin 1000001", "PIN 1",
	};
	struct mrt_snap before, after;
	struct mrct_reg reg;
	uint8_t *buf;
	size_t i;

	if (!mrt_have_inject(_metadata))
		return;
	buf = mrt_inj_buf(BUF_SIZE, 43);
	ASSERT_NE(NULL, buf);
	mrt_snap_take(self->fd, "key_alloc", &before);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, mrt_arm(bad[i]))
			TH_LOG("accepted \"%s\"", bad[i]);
	}
	EXPECT_EQ(0, mrt_dbg_value("fail_stage", "left"));
	ASSERT_EQ(0, mrt_arm("key_alloc 1000000"));
	EXPECT_EQ(1000000, mrt_dbg_value("fail_stage", "left"));
	/* Without a count: the next pass. */
	ASSERT_EQ(0, mrt_arm("key_alloc\n"));
	EXPECT_EQ(1, mrt_dbg_value("fail_stage", "left"));
	ASSERT_EQ(0, mrt_arm("none\n"));
	EXPECT_EQ(0, mrt_dbg_value("fail_stage", "left"));

	ASSERT_EQ(0, mt_reg(self->fd, buf, BUF_SIZE, FAR_IOVA, LW, 0, &reg));
	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_snap_take(self->fd, "key_alloc", &after);
	mrt_snap_check(_metadata, &before, &after, 0);
	mrt_check_clean(_metadata, self->fd, self->pinned0);
}

/*
 * Register 8 MiB, arm @stage, rereg TRANS to another 8 MiB at another
 * iova: @err, and the old registration is untouched: the same key still
 * reads the old bytes at the old iova, the new iova is not in it, and
 * nothing more is pinned or held. Then the same rereg works.
 */
static void mrt_inject_rereg(struct __test_metadata *_metadata, int fd,
			     uint64_t pinned0, const char *stage, int err)
{
	struct mrt_snap before, after;
	struct mrct_rereg rr = {};
	uint8_t *a, *b, *out;
	struct mrct_reg reg;

	if (!mrt_have_inject(_metadata))
		return;
	a = mrt_inj_buf(INJ_SIZE, 44);
	b = mrt_inj_buf(INJ_SIZE, 45);
	out = malloc(INJ_SIZE);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, mt_reg(fd, a, INJ_SIZE, FAR_IOVA, LW | RR, 0, &reg));
	mrt_snap_take(fd, stage, &before);

	rr.handle = reg.handle;
	rr.flags = MRCT_REREG_TRANS;
	rr.addr = (uintptr_t)b;
	rr.length = INJ_SIZE;
	rr.iova = INJ_IOVA2;
	ASSERT_EQ(0, mrt_arm_nth(stage, 1));
	EXPECT_EQ(err, mrt_rereg(fd, &rr));
	mrt_snap_take(fd, stage, &after);
	mrt_snap_check(_metadata, &before, &after, 1);

	memset(out, 0, INJ_SIZE);
	EXPECT_EQ(0, mrt_key_xfer(fd, MRCT_DEV_READ, reg.info.lkey, 0,
				  FAR_IOVA, out, INJ_SIZE, 0));
	EXPECT_EQ(0, memcmp(a, out, INJ_SIZE));
	EXPECT_EQ(-ERANGE, mrt_key_xfer(fd, MRCT_DEV_READ, reg.info.lkey, 0,
					INJ_IOVA2, out, 8, 0));

	/* Nothing armed any more: the same rereg now switches to b. */
	ASSERT_EQ(0, mrt_rereg(fd, &rr));
	EXPECT_EQ(reg.info.lkey, rr.info.lkey);
	memset(out, 0, INJ_SIZE);
	EXPECT_EQ(0, mrt_key_xfer(fd, MRCT_DEV_READ, reg.info.lkey, 0,
				  INJ_IOVA2, out, INJ_SIZE, 0));
	EXPECT_EQ(0, memcmp(b, out, INJ_SIZE));
	EXPECT_EQ(before.pinned_vm, mrt_pinned(fd));
	/* b pinned in a's place, a unpinned: as many pins as before. */
	EXPECT_EQ(before.foll_pins, mt_foll_pins());

	ASSERT_EQ(0, mt_dereg(fd, reg.handle));
	mrt_check_clean(_metadata, fd, pinned0);
	free(out);
	munmap(a, INJ_SIZE);
	munmap(b, INJ_SIZE);
}

TEST_F_TIMEOUT(mr, inject_rereg_pin_keeps_old, 120)
{
	mrt_inject_rereg(_metadata, self->fd, self->pinned0, "pin", -EFAULT);
}

TEST_F_TIMEOUT(mr, inject_rereg_sg_alloc_keeps_old, 120)
{
	mrt_inject_rereg(_metadata, self->fd, self->pinned0, "sg_alloc",
			 -ENOMEM);
}

TEST_F_TIMEOUT(mr, inject_rereg_dma_map_keeps_old, 120)
{
	mrt_inject_rereg(_metadata, self->fd, self->pinned0, "dma_map",
			 -ENOMEM);
}

TEST_F_TIMEOUT(mr, inject_rereg_xlt_alloc_keeps_old, 120)
{
	mrt_inject_rereg(_metadata, self->fd, self->pinned0, "xlt_alloc",
			 -ENOSPC);
}

TEST_F_TIMEOUT(mr, inject_rereg_write_xlt_keeps_old, 120)
{
	mrt_inject_rereg(_metadata, self->fd, self->pinned0, "write_xlt",
			 -EIO);
}

/* The switch itself fails: the old context is the live one. */
TEST_F_TIMEOUT(mr, inject_rereg_write_mkey_keeps_old, 120)
{
	mrt_inject_rereg(_metadata, self->fd, self->pinned0, "write_mkey",
			 -EIO);
}

/*
 * Adding write rights to a read-only MR re-pins the same range writable;
 * a pin failure there is -EACCES (the ib_umem rule), and the MR stays
 * read-only and readable.
 */
TEST_F_TIMEOUT(mr, inject_rereg_access_pin_eacces, 120)
{
	uint8_t *buf, *copy, *out, in[PAGE];
	struct mrt_snap before, after;
	struct mrct_rereg rr = {};
	struct mrct_reg reg;

	if (!mrt_have_inject(_metadata))
		return;
	buf = mrt_inj_buf(INJ_SIZE, 46);
	copy = malloc(INJ_SIZE);
	out = malloc(INJ_SIZE);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, copy);
	ASSERT_NE(NULL, out);
	memcpy(copy, buf, INJ_SIZE);
	mt_fill(in, PAGE, 47);
	ASSERT_EQ(0, mt_reg(self->fd, buf, INJ_SIZE, FAR_IOVA, RR, 0, &reg));
	mrt_snap_take(self->fd, "pin", &before);

	rr.handle = reg.handle;
	rr.flags = MRCT_REREG_ACCESS;
	rr.access = LW | RR;
	ASSERT_EQ(0, mrt_arm_nth("pin", 1));
	EXPECT_EQ(-EACCES, mrt_rereg(self->fd, &rr));
	mrt_snap_take(self->fd, "pin", &after);
	mrt_snap_check(_metadata, &before, &after, 1);

	EXPECT_EQ(-EPERM, mrt_write(self->fd, reg.handle, FAR_IOVA, in, PAGE));
	EXPECT_EQ(0, memcmp(copy, buf, INJ_SIZE));
	memset(out, 0, INJ_SIZE);
	EXPECT_EQ(0, mrt_read(self->fd, reg.handle, FAR_IOVA, out, INJ_SIZE));
	EXPECT_EQ(0, memcmp(copy, out, INJ_SIZE));

	ASSERT_EQ(0, mt_dereg(self->fd, reg.handle));
	mrt_check_clean(_metadata, self->fd, self->pinned0);
	free(copy);
	free(out);
	munmap(buf, INJ_SIZE);
}

TEST_HARNESS_MAIN
