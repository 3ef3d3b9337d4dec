// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned user MRs and the CPU's copy-on-write, through /dev/mrcore_test
 * (issue 16, item 4; ANCHORS checklist items 34 and 35).
 *
 * ro_pin: memory is registered read-only (no LOCAL_WRITE) while it is
 * backed by something a later CPU write replaces by COW unless the pin
 * broke COW first: the shared zero page, the huge zero page, the page
 * cache of a private O_TMPFILE mapping; and, where no COW can happen,
 * a shared memfd and private hugetlb. The CPU then writes a pattern and
 * the vhca device, reading through the MR's rkey, must return it. Each
 * again with a fork() between the registration and the write.
 *
 * fork_pin: memory registered LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ
 * (and again read-only); the process forks and the child writes P1; a
 * device write of P2 is what the parent's CPU then reads, and after the
 * parent writes P3 a device read returns P3. Once with the child gone
 * before the device acts, once with it alive (it then checks that its
 * own copy still holds P1).
 *
 * ro_rule: a PROT_READ shared mapping still registers read-only (no
 * write pin of a shared page) and the device sees writes made through the
 * file; a PROT_READ private mapping registers read-only; LOCAL_WRITE
 * over either is -EFAULT (checklist item 7).
 *
 * Every case compares the kernel's own pin counters (nr_foll_pin_acquired
 * - nr_foll_pin_released in /proc/vmstat, mt_foll_pins()) before and
 * after it: a registration pins exactly its pages, deregistration unpins
 * them all.
 * The device reads and writes with MRCT_DEV_READ / MRCT_DEV_WRITE as a
 * responder (MRCT_XFER_REMOTE), walking the MR's translation in vhca's
 * device memory, so it reaches the pinned pages, not the process's
 * current ones. vhca only; run as root (pagemap PFNs, kpageflags,
 * vm.stat_refresh and vm.nr_hugepages need it). A case skips, before it
 * checks anything, only when the kernel cannot give it the backing it
 * names, and says why.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"

#define PAGE		4096UL
#define HPAGE		(2UL << 20)
#define NPAGES		16
#define BUF_SIZE	(NPAGES * PAGE)
/* An iova far from any user address, page aligned. */
#define FAR_IOVA	0x5a5a00000000ULL

#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define RR		MRCT_ACCESS_REMOTE_READ

/* Pattern seeds: before registration, child, device, parent. */
#define P0		0x5030
#define P1		0x5031
#define P2		0x5032
#define P3		0x5033

/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h) */
#define PT_KPF_ANON	12
#define PT_KPF_THP	22
#define PT_KPF_ZERO	24

/*
 * For a FIXTURE_SETUP: /dev/mrcore_test bound to the device under test in
 * *@fd, and the pins held system-wide now in *@pins0.
 */
static void pt_open(struct __test_metadata *_metadata, int *fd,
		    long long *pins0)
{
	*fd = mt_open(mt_devname());
	if (*fd < 0)
		TH_LOG("cannot open /dev/%s on %s: %s (is mrcore_test loaded?)",
		       MRCT_DEV_NAME, mt_devname(), strerror(-*fd));
	ASSERT_LE(0, *fd);
	*pins0 = mt_foll_pins();
	ASSERT_LE(0, *pins0) TH_LOG("no nr_foll_pin_* in /proc/vmstat, or vm.stat_refresh refused");
}

/* Deregister MR @handle: every pin is gone, back to @pins0 system-wide. */
static void pt_dereg_unpinned(struct __test_metadata *_metadata, int fd,
			      long long pins0, uint32_t handle)
{
	ASSERT_EQ(0, mt_dereg(fd, handle));
	EXPECT_EQ(pins0, mt_foll_pins());
}

/* First byte where @got differs from pattern @seed, or -1. */
static long pt_diff(const uint8_t *got, size_t len, uint64_t seed)
{
	uint8_t *want = malloc(len);
	long at = -1;
	size_t i;

	if (!want)
		return 0;
	if (seed)
		mt_fill(want, len, seed);
	else
		memset(want, 0, len);
	for (i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			at = i;
			break;
		}
	}
	free(want);
	return at;
}

/*
 * The device reads all @len bytes of MR @handle: they must be pattern
 * @seed (0: zeroes). @what names the check in the log.
 */
static void pt_expect_device_sees(struct __test_metadata *_metadata, int fd,
				  uint32_t handle, size_t len, uint64_t seed,
				  const char *what)
{
	uint8_t *out = malloc(len);
	long at;

	ASSERT_NE(NULL, out);
	memset(out, 0xa5, len);
	ASSERT_EQ(0, mt_xfer(fd, MRCT_DEV_READ, handle, FAR_IOVA, out, len,
			     MRCT_XFER_REMOTE));
	at = pt_diff(out, len, seed);
	if (at >= 0)
		TH_LOG("%s: the device read differs from byte %ld (page %ld) on",
		       what, at, at / (long)PAGE);
	EXPECT_EQ(-1, at);
	free(out);
}

/*
 * The page-frame flags of each page of [@addr, + @len), which must be
 * present: NULL and the flags in @flags[], or why they cannot be had.
 */
static const char *pt_kpageflags(void *addr, size_t len, uint64_t *flags)
{
	size_t i, n = len / PAGE;
	const char *why = NULL;
	uint64_t *pm;
	int pfd, kfd;

	pm = calloc(n, sizeof(*pm));
	if (!pm)
		return "out of memory";
	pfd = open("/proc/self/pagemap", O_RDONLY);
	kfd = open("/proc/kpageflags", O_RDONLY);
	if (pfd < 0 || kfd < 0) {
		why = "no /proc/self/pagemap or /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR, root)";
		goto out;
	}
	if (pread(pfd, pm, n * sizeof(*pm),
		  (uintptr_t)addr / PAGE * sizeof(*pm)) != (ssize_t)(n * sizeof(*pm))) {
		why = "short read of /proc/self/pagemap";
		goto out;
	}
	for (i = 0; i < n && !why; i++) {
		uint64_t pfn = pm[i] & ((1ULL << 55) - 1);

		if (!(pm[i] >> 63))
			why = "a page of the area is not present after a read";
		else if (!pfn)
			why = "pagemap hides PFNs (needs CAP_SYS_ADMIN)";
		else if (pread(kfd, &flags[i], sizeof(flags[i]),
			       pfn * sizeof(flags[i])) != sizeof(flags[i]))
			why = "cannot read /proc/kpageflags";
	}
out:
	if (pfd >= 0)
		close(pfd);
	if (kfd >= 0)
		close(kfd);
	free(pm);
	return why;
}

/*
 * Whether every page of [@addr, + @len) maps the zero page (@huge: the
 * huge zero page, KPF_ZERO_PAGE and KPF_THP; else the 4 KiB one,
 * KPF_ZERO_PAGE without KPF_THP): NULL, or why not.
 */
static const char *pt_check_zero(void *addr, size_t len, bool huge)
{
	uint64_t *flags = calloc(len / PAGE, sizeof(*flags));
	const char *why;
	size_t i;

	if (!flags)
		return "out of memory";
	why = pt_kpageflags(addr, len, flags);
	for (i = 0; !why && i < len / PAGE; i++) {
		if (!(flags[i] >> PT_KPF_ZERO & 1))
			why = huge ? "the kernel did not map the huge zero page (kpageflags)" :
				     "the kernel did not map the zero page (kpageflags)";
		else if ((flags[i] >> PT_KPF_THP & 1) != huge)
			why = huge ? "the zero page mapped is not the huge one" :
				     "the zero page mapped is the huge one";
	}
	free(flags);
	return why;
}

/* Whether every page of [@addr, + @len) maps a page-cache (not anon) page. */
static const char *pt_check_pagecache(void *addr, size_t len)
{
	uint64_t *flags = calloc(len / PAGE, sizeof(*flags));
	const char *why;
	size_t i;

	if (!flags)
		return "out of memory";
	why = pt_kpageflags(addr, len, flags);
	for (i = 0; !why && i < len / PAGE; i++)
		if (flags[i] >> PT_KPF_ANON & 1)
			why = "a read of the private file mapping mapped an anonymous page";
	free(flags);
	return why;
}

/* Read every page of [@p, + @len): no write, so COW pages stay shared. */
static void pt_touch_read(const uint8_t *p, size_t len)
{
	size_t i;

	/* An atomic load is a load the compiler must make. */
	for (i = 0; i < len; i += PAGE)
		(void)__atomic_load_n(&p[i], __ATOMIC_RELAXED);
}

static bool pt_thp_ready(const char **why)
{
	char buf[128];

	if (mt_read_file("/sys/kernel/mm/transparent_hugepage/enabled",
			 buf, sizeof(buf))) {
		*why = "no transparent hugepages (CONFIG_TRANSPARENT_HUGEPAGE)";
		return false;
	}
	if (strstr(buf, "[never]")) {
		*why = "transparent hugepages are disabled ([never])";
		return false;
	}
	if (mt_read_file("/sys/kernel/mm/transparent_hugepage/use_zero_page",
			 buf, sizeof(buf)) || atoi(buf) != 1) {
		*why = "the huge zero page is off (transparent_hugepage/use_zero_page)";
		return false;
	}
	return true;
}

/*
 * Size file @fd to @len bytes of pattern @seed, written through a shared
 * mapping of its own (shmem without CONFIG_TMPFS, as in the debug kernel,
 * has no write(2)): 0 or -1.
 */
static int pt_file_fill(int fd, size_t len, uint64_t seed)
{
	void *p;

	if (ftruncate(fd, len))
		return -1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	mt_fill(p, len, seed);
	return munmap(p, len);
}

/*
 * An empty O_TMPFILE file in the first directory whose file system takes
 * one: the fd, or -1 when none does.
 */
static int pt_tmpfile(void)
{
	static const char * const dirs[] = { "/tmp", "/dev/shm", "/run", "." };
	int fd = -1;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs) && fd < 0; i++)
		fd = open(dirs[i], O_TMPFILE | O_RDWR, 0600);
	return fd;
}

#define PT_NO_TMPFILE	"no file system here takes O_TMPFILE (/tmp, /dev/shm, /run, .)"

/*
 * fork() a child that waits for the parent: a byte on @go, or its end
 * closed (the parent's test process gone), then exits 0 when its view of
 * [@buf, + @len) is pattern @seed (0: zeroes), else 1.
 */
static pid_t pt_fork_waiter(int go[2], const uint8_t *buf, size_t len,
			    uint64_t seed)
{
	pid_t pid = fork();
	char c;

	if (pid)
		return pid;
	close(go[1]);
	if (read(go[0], &c, 1) < 0)
		_exit(2);
	_exit(pt_diff(buf, len, seed) == -1 ? 0 : 1);
}

/* Let a pt_fork_waiter() child go: it must exit 0. */
static void pt_release_child(struct __test_metadata *_metadata, int go[2],
			     pid_t pid, const char *what)
{
	int status;

	EXPECT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status))
		TH_LOG("%s: status %d", what, WEXITSTATUS(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* ------------------------------------------------------------------ */
/* ro_pin: read-only pins see later CPU writes (checklist item 35)     */

enum pt_backing {
	PT_ZERO_PAGE,
	PT_HUGE_ZERO_PAGE,
	PT_TMPFILE_PRIVATE,
	PT_MEMFD_SHARED,
	PT_HUGETLB_PRIVATE,
};

FIXTURE(ro_pin)
{
	int fd;
	long long pins0;
	void *map;		/* what to munmap */
	size_t map_len;
	uint8_t *buf;		/* what is registered */
	size_t len;
	uint64_t seed0;		/* pattern it holds before the write (0: zeroes) */
	int file;
	long huge_old;
};

FIXTURE_VARIANT(ro_pin)
{
	enum pt_backing backing;
	bool fork;
};

/* Each backing twice: written at once, and with a fork() before the write. */
FIXTURE_VARIANT_ADD(ro_pin, zero_page) { .backing = PT_ZERO_PAGE };
FIXTURE_VARIANT_ADD(ro_pin, zero_page_fork) { .backing = PT_ZERO_PAGE, .fork = true };
FIXTURE_VARIANT_ADD(ro_pin, huge_zero_page) { .backing = PT_HUGE_ZERO_PAGE };
FIXTURE_VARIANT_ADD(ro_pin, huge_zero_page_fork) { .backing = PT_HUGE_ZERO_PAGE, .fork = true };
FIXTURE_VARIANT_ADD(ro_pin, tmpfile_private) { .backing = PT_TMPFILE_PRIVATE };
FIXTURE_VARIANT_ADD(ro_pin, tmpfile_private_fork) { .backing = PT_TMPFILE_PRIVATE, .fork = true };
FIXTURE_VARIANT_ADD(ro_pin, memfd_shared) { .backing = PT_MEMFD_SHARED };
FIXTURE_VARIANT_ADD(ro_pin, memfd_shared_fork) { .backing = PT_MEMFD_SHARED, .fork = true };
FIXTURE_VARIANT_ADD(ro_pin, hugetlb_private) { .backing = PT_HUGETLB_PRIVATE };
FIXTURE_VARIANT_ADD(ro_pin, hugetlb_private_fork) { .backing = PT_HUGETLB_PRIVATE, .fork = true };

FIXTURE_SETUP(ro_pin)
{
	self->file = -1;
	self->huge_old = -1;
	pt_open(_metadata, &self->fd, &self->pins0);
}

/* Closing the file deregisters what a failed case left; nothing stays pinned. */
FIXTURE_TEARDOWN(ro_pin)
{
	EXPECT_EQ(0, close(self->fd));
	if (self->map)
		munmap(self->map, self->map_len);
	if (self->file >= 0)
		close(self->file);
	mt_hugetlb_restore(self->huge_old);
	EXPECT_EQ(self->pins0, mt_foll_pins());
}

/*
 * Map @map_len bytes read-write with @flags (of file @fd, or anonymous)
 * and register @len of them: from the first @align-aligned byte of the
 * mapping. False when mmap() fails.
 */
static bool pt_map(struct _test_data_ro_pin *self, size_t map_len, size_t len,
		   size_t align, int flags, int fd)
{
	void *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, fd, 0);

	if (p == MAP_FAILED)
		return false;
	self->map = p;
	self->map_len = map_len;
	self->buf = (uint8_t *)(((uintptr_t)p + align - 1) & ~(align - 1));
	self->len = len;
	return true;
}

#define PT_ANON		(MAP_PRIVATE | MAP_ANONYMOUS)
#define PT_BACK_ARGS	struct __test_metadata *_metadata, struct _test_data_ro_pin *self

/*
 * Each pt_back_*() sets the case's memory up: NULL, or why the kernel
 * cannot give that backing (the case skips); any other failure fails it.
 */

/* Never-touched anonymous memory, read: the shared zero page. */
static const char *pt_back_zero(PT_BACK_ARGS)
{
	ASSERT_TRUE(pt_map(self, BUF_SIZE, BUF_SIZE, PAGE, PT_ANON, -1));
	madvise(self->buf, self->len, MADV_NOHUGEPAGE);
	pt_touch_read(self->buf, self->len);
	return pt_check_zero(self->buf, self->len, false);
}

/* A never-written 2 MiB THP area, read: the huge zero page. */
static const char *pt_back_huge_zero(PT_BACK_ARGS)
{
	const char *why;

	if (!pt_thp_ready(&why))
		return why;
	ASSERT_TRUE(pt_map(self, 2 * HPAGE, HPAGE, HPAGE, PT_ANON, -1));
	ASSERT_EQ(0, madvise(self->buf, self->len, MADV_HUGEPAGE));
	pt_touch_read(self->buf, PAGE);
	return pt_check_zero(self->buf, self->len, true);
}

/* A private mapping of an O_TMPFILE file, read: its page-cache pages. */
static const char *pt_back_tmpfile(PT_BACK_ARGS)
{
	self->seed0 = P0;
	self->file = pt_tmpfile();
	if (self->file < 0)
		return PT_NO_TMPFILE;
	ASSERT_EQ(0, pt_file_fill(self->file, BUF_SIZE, P0));
	ASSERT_TRUE(pt_map(self, BUF_SIZE, BUF_SIZE, PAGE, MAP_PRIVATE,
			   self->file));
	pt_touch_read(self->buf, self->len);
	return pt_check_pagecache(self->buf, self->len);
}

/* A shared mapping of a memfd, never touched. */
static const char *pt_back_memfd(PT_BACK_ARGS)
{
	self->seed0 = P0;
	/* 6.1 has memfd_create() with TMPFS or HUGETLBFS; both kernels do. */
	self->file = memfd_create("pin_tests", MFD_CLOEXEC);
	ASSERT_LE(0, self->file);
	ASSERT_EQ(0, pt_file_fill(self->file, BUF_SIZE, P0));
	ASSERT_TRUE(pt_map(self, BUF_SIZE, BUF_SIZE, PAGE, MAP_SHARED,
			   self->file));
	return NULL;
}

/*
 * A private anonymous 2 MiB hugetlb page, never touched. Two free huge
 * pages: the fork variant's child gets a copy of the pinned one.
 */
static const char *pt_back_hugetlb(PT_BACK_ARGS)
{
	const char *why = mt_hugetlb_reserve(2, &self->huge_old);

	if (why)
		return why;
	if (!pt_map(self, HPAGE, HPAGE, HPAGE, PT_ANON | MAP_HUGETLB, -1))
		return "no free 2 MiB huge page to map (vm.nr_hugepages)";
	return NULL;
}

static const char *pt_back(PT_BACK_ARGS, enum pt_backing b)
{
	switch (b) {
	case PT_ZERO_PAGE:
		return pt_back_zero(_metadata, self);
	case PT_HUGE_ZERO_PAGE:
		return pt_back_huge_zero(_metadata, self);
	case PT_TMPFILE_PRIVATE:
		return pt_back_tmpfile(_metadata, self);
	case PT_MEMFD_SHARED:
		return pt_back_memfd(_metadata, self);
	case PT_HUGETLB_PRIVATE:
		return pt_back_hugetlb(_metadata, self);
	}
	return "unknown backing";
}

/*
 * Register read-only (REMOTE_READ only), then write with the CPU (with a
 * fork() in between: the child alive meanwhile): the device reads what
 * the CPU wrote. Private backings must leave the child its own bytes;
 * a shared memfd shows the child the parent's write.
 */
TEST_F_TIMEOUT(ro_pin, device_reads_cpu_write, 120)
{
	bool shared = variant->backing == PT_MEMFD_SHARED;
	struct mrct_reg reg;
	const char *why;
	pid_t child = 0;
	int go[2];

	why = pt_back(_metadata, self, variant->backing);
	if (why)
		SKIP(return, "%s", why);

	ASSERT_EQ(0, mt_reg(self->fd, self->buf, self->len, FAR_IOVA, RR, 0,
			    &reg));
	/*
	 * The registration holds one pin per page, the kernel says (6.1.y
	 * takes no pin on the shared zero page: pinning it shows fewer).
	 */
	EXPECT_EQ((long long)(self->len / PAGE), mt_foll_pins() - self->pins0);
	pt_expect_device_sees(_metadata, self->fd, reg.handle, self->len,
			      self->seed0, "before the CPU write");

	if (variant->fork) {
		ASSERT_EQ(0, pipe(go));
		child = pt_fork_waiter(go, self->buf, self->len,
				       shared ? P1 : self->seed0);
		ASSERT_LE(0, child);
		close(go[0]);
	}

	mt_fill(self->buf, self->len, P1);
	pt_expect_device_sees(_metadata, self->fd, reg.handle, self->len, P1,
			      "after the CPU write");

	if (child > 0)
		pt_release_child(_metadata, go, child,
				 "the child's view of the memory is not what it should be");
	pt_dereg_unpinned(_metadata, self->fd, self->pins0, reg.handle);
}

/* ------------------------------------------------------------------ */
/* fork_pin: fork() with pinned MRs (checklist item 34)                */

FIXTURE(fork_pin)
{
	int fd;
	long long pins0;
	uint8_t *buf;
};

FIXTURE_VARIANT(fork_pin)
{
	bool writable;		/* LW | RW | RR, else RR only */
	bool child_alive;	/* while the device and the parent act */
};

FIXTURE_VARIANT_ADD(fork_pin, rw_child_exits) {
	.writable = true,
};

FIXTURE_VARIANT_ADD(fork_pin, rw_child_alive) {
	.writable = true,
	.child_alive = true,
};

FIXTURE_VARIANT_ADD(fork_pin, ro_child_exits) {
	.writable = false,
};

FIXTURE_VARIANT_ADD(fork_pin, ro_child_alive) {
	.writable = false,
	.child_alive = true,
};

FIXTURE_SETUP(fork_pin)
{
	pt_open(_metadata, &self->fd, &self->pins0);
	self->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	mt_fill(self->buf, BUF_SIZE, P0);
}

FIXTURE_TEARDOWN(fork_pin)
{
	EXPECT_EQ(0, close(self->fd));
	munmap(self->buf, BUF_SIZE);
	EXPECT_EQ(self->pins0, mt_foll_pins());
}

/*
 * The child writes P1 to its copy, tells the parent on @done, and either
 * exits or waits on @go and then checks its copy still holds P1.
 */
static pid_t pt_fork_writer(int done[2], int go[2], uint8_t *buf, bool wait)
{
	pid_t pid = fork();
	char c;

	if (pid)
		return pid;
	close(done[0]);
	close(go[1]);
	mt_fill(buf, BUF_SIZE, P1);
	if (write(done[1], "d", 1) != 1)
		_exit(2);
	if (!wait)
		_exit(0);
	if (read(go[0], &c, 1) < 0)
		_exit(2);
	_exit(pt_diff(buf, BUF_SIZE, P1) == -1 ? 0 : 1);
}

TEST_F_TIMEOUT(fork_pin, parent_and_device_agree, 120)
{
	uint32_t access = variant->writable ? LW | RW | RR : RR;
	uint8_t in[BUF_SIZE];
	int done[2], go[2], status;
	struct mrct_reg reg;
	pid_t child;
	char c;

	ASSERT_EQ(0, mt_reg(self->fd, self->buf, BUF_SIZE, FAR_IOVA, access,
			    0, &reg));
	EXPECT_EQ(NPAGES, mt_foll_pins() - self->pins0);

	ASSERT_EQ(0, pipe(done));
	ASSERT_EQ(0, pipe(go));
	child = pt_fork_writer(done, go, self->buf, variant->child_alive);
	ASSERT_LE(0, child);
	close(done[1]);
	close(go[0]);
	/* The child has written P1 (a closed pipe reads 0: it died). */
	ASSERT_EQ(1, read(done[0], &c, 1));
	close(done[0]);
	if (!variant->child_alive) {
		close(go[1]);
		ASSERT_EQ(child, waitpid(child, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}

	if (variant->writable) {
		/* A device WRITE of P2 is what the parent's CPU reads. */
		mt_fill(in, BUF_SIZE, P2);
		ASSERT_EQ(0, mt_xfer(self->fd, MRCT_DEV_WRITE, reg.handle,
				     FAR_IOVA, in, BUF_SIZE, MRCT_XFER_REMOTE));
		EXPECT_EQ(-1, pt_diff(self->buf, BUF_SIZE, P2));
	} else {
		/* The child's P1 never reached the parent's pinned pages. */
		pt_expect_device_sees(_metadata, self->fd, reg.handle, BUF_SIZE,
				      P0, "after the child's write");
	}

	/* The parent writes P3: a device READ returns it. */
	mt_fill(self->buf, BUF_SIZE, P3);
	pt_expect_device_sees(_metadata, self->fd, reg.handle, BUF_SIZE, P3,
			      "after the parent's write");

	if (variant->child_alive)
		pt_release_child(_metadata, go, child,
				 "the child's copy no longer holds what it wrote");
	pt_dereg_unpinned(_metadata, self->fd, self->pins0, reg.handle);
}

/* ------------------------------------------------------------------ */
/* ro_rule: what a read-only mapping registers as (checklist item 7)   */

FIXTURE(ro_rule)
{
	int fd;
	long long pins0;
};

FIXTURE_SETUP(ro_rule)
{
	pt_open(_metadata, &self->fd, &self->pins0);
}

FIXTURE_TEARDOWN(ro_rule)
{
	EXPECT_EQ(0, close(self->fd));
	EXPECT_EQ(self->pins0, mt_foll_pins());
}

/*
 * @buf, a PROT_READ mapping of BUF_SIZE bytes of pattern P0: LOCAL_WRITE
 * is -EFAULT with nothing left pinned; REMOTE_READ alone registers (into
 * @reg), pinning every page, and the device reads P0.
 */
static void pt_reg_readonly_only(struct __test_metadata *_metadata, int fd,
				 long long pins0, uint8_t *buf,
				 struct mrct_reg *reg)
{
	EXPECT_EQ(-EFAULT, mt_reg(fd, buf, BUF_SIZE, FAR_IOVA, LW, 0, reg));
	EXPECT_EQ(pins0, mt_foll_pins());

	ASSERT_EQ(0, mt_reg(fd, buf, BUF_SIZE, FAR_IOVA, RR, 0, reg));
	EXPECT_EQ(NPAGES, mt_foll_pins() - pins0);
	pt_expect_device_sees(_metadata, fd, reg->handle, BUF_SIZE, P0,
			      "at registration");
}

/*
 * A PROT_READ shared memfd mapping: LOCAL_WRITE is -EFAULT with nothing
 * left pinned; read-only registers (a write pin would be refused, so the
 * pin is a read-only one of the memfd's own pages) and the device sees
 * what the CPU later writes through another, writable, shared mapping.
 */
TEST_F(ro_rule, readonly_shared_mapping_registers_readonly)
{
	struct mrct_reg reg;
	uint8_t *buf;
	int mfd;

	mfd = memfd_create("pin_tests", MFD_CLOEXEC);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, pt_file_fill(mfd, BUF_SIZE, P0));
	buf = mmap(NULL, BUF_SIZE, PROT_READ, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, buf);

	pt_reg_readonly_only(_metadata, self->fd, self->pins0, buf, &reg);
	/* The CPU writes through a second, writable, mapping of the memfd. */
	ASSERT_EQ(0, pt_file_fill(mfd, BUF_SIZE, P1));
	pt_expect_device_sees(_metadata, self->fd, reg.handle, BUF_SIZE, P1,
			      "after a write through another mapping");

	pt_dereg_unpinned(_metadata, self->fd, self->pins0, reg.handle);
	munmap(buf, BUF_SIZE);
	close(mfd);
}

/*
 * A PROT_READ private file mapping (page-cache pages): LOCAL_WRITE is
 * -EFAULT with nothing left pinned; read-only registers, and once the
 * process makes the mapping writable, its writes are what the device
 * reads (the pin took the process's private copy, not the page cache).
 */
TEST_F(ro_rule, readonly_private_mapping_registers_readonly)
{
	struct mrct_reg reg;
	const char *why;
	uint8_t *buf;
	int tfd;

	tfd = pt_tmpfile();
	if (tfd < 0)
		SKIP(return, PT_NO_TMPFILE);
	ASSERT_EQ(0, pt_file_fill(tfd, BUF_SIZE, P0));
	buf = mmap(NULL, BUF_SIZE, PROT_READ, MAP_PRIVATE, tfd, 0);
	ASSERT_NE(MAP_FAILED, buf);
	pt_touch_read(buf, BUF_SIZE);
	why = pt_check_pagecache(buf, BUF_SIZE);
	if (why) {
		munmap(buf, BUF_SIZE);
		close(tfd);
		SKIP(return, "%s", why);
	}

	pt_reg_readonly_only(_metadata, self->fd, self->pins0, buf, &reg);
	ASSERT_EQ(0, mprotect(buf, BUF_SIZE, PROT_READ | PROT_WRITE));
	mt_fill(buf, BUF_SIZE, P1);
	pt_expect_device_sees(_metadata, self->fd, reg.handle, BUF_SIZE, P1,
			      "after mprotect() and a CPU write");

	pt_dereg_unpinned(_metadata, self->fd, self->pins0, reg.handle);
	munmap(buf, BUF_SIZE);
	close(tfd);
}

TEST_HARNESS_MAIN
