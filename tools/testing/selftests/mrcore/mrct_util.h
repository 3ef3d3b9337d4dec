/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kselftest programs of /dev/mrcore_test (dp, mr,
 * frwr, fmr, mw, keys and counter_tests.c): the device under test, the
 * ioctl wrapper, opening the device, the names of completion statuses and
 * QP states, test patterns, loopback pairs and plain MRs.
 *
 * Include it after kselftest_harness.h and mrcore_test_uapi.h. Everything
 * here is static inline, so a program that uses only part of it builds
 * warning-free with -Wall. An assertion that fails in here is logged as
 * this header's name; the VM-tier scripts (chardev_lib.sh) take such a line
 * as the reason of the failure, like one of the program's own.
 */
#ifndef MRCT_UTIL_H
#define MRCT_UTIL_H

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

/* The RDMA device under test: $MRCT_DEVICE, else vhca0. */
static inline const char *mt_devname(void)
{
	const char *name = getenv("MRCT_DEVICE");

	return name ? name : "vhca0";
}

/* ioctl() as 0 or -errno, restarted when a signal interrupts it. */
static inline int mt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

/* /dev/mrcore_test bound to RDMA device @name: the fd, or -errno. */
static inline int mt_open(const char *name)
{
	struct mrct_set_device sd = {};
	int fd, err;

	fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
	if (fd < 0)
		return -errno;
	snprintf(sd.name, sizeof(sd.name), "%s", name);
	err = mt_ioctl(fd, MRCT_SET_DEVICE, &sd);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * For a FIXTURE_SETUP: /dev/mrcore_test bound to mt_devname(). A device
 * that does not exist skips the case and gives -1 (the caller returns and
 * its TEST_F bodies check for it); any other failure fails the case.
 */
static inline int mt_fixture_open(struct __test_metadata *_metadata)
{
	struct mrct_set_device sd = {};
	int fd, err;

	fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
	if (fd < 0)
		TH_LOG("cannot open /dev/%s: %s (is mrcore_test loaded?)",
		       MRCT_DEV_NAME, strerror(errno));
	ASSERT_LE(0, fd);
	snprintf(sd.name, sizeof(sd.name), "%s", mt_devname());
	err = mt_ioctl(fd, MRCT_SET_DEVICE, &sd);
	if (err == -ENODEV) {
		close(fd);
		SKIP(return -1, "no RDMA device %s", mt_devname());
	}
	ASSERT_EQ(0, err);
	return fd;
}

/*
 * For a FIXTURE_SETUP whose cases need vhca: true when @qp_flags (of an
 * MRCT_QP_CREATE) say the device is one; otherwise close *@fd, set it to
 * -1 and skip the case.
 */
static inline bool mt_fixture_vhca(struct __test_metadata *_metadata,
				   int *fd, uint32_t qp_flags)
{
	if (qp_flags & MRCT_QP_F_VHCA)
		return true;
	close(*fd);
	*fd = -1;
	SKIP(return false, "%s is not a vhca device", mt_devname());
}

/* A completion status (the UAPI's values are enum ib_wc_status) by name. */
static inline const char *mt_wc_name(uint32_t status)
{
	static const char * const names[] = {
		"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
		"LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR",
		"LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR",
		"REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR",
		"LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR",
		"INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR",
		"RESP_TIMEOUT_ERR", "GENERAL_ERR",
	};

	if (status == MRCT_WC_NONE)
		return "no completion";
	if (status < ARRAY_SIZE(names))
		return names[status];
	return "?";
}

/* A QP state (enum ib_qp_state) by name. */
static inline const char *mt_qps_name(uint32_t state)
{
	static const char * const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	if (state < ARRAY_SIZE(names))
		return names[state];
	return "unknown (query_qp failed)";
}

/* Bytes that differ per 8-byte word and per seed (splitmix64). */
static inline void mt_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *b = buf;
	uint64_t z = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7)) {
			z = seed + (i >> 3) * 0x9e3779b97f4a7c15ULL;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
		}
		b[i] = z >> ((i & 7) * 8);
	}
}

/*
 * MRCT_QP_CREATE: a loopback RC pair on PD @pd with qp_access_flags
 * @access, @max_sge send and receive SGEs and @max_inline bytes inline;
 * the handle and flags in @qc.
 */
static inline int mt_pair(int fd, uint32_t pd, uint32_t access,
			  uint32_t max_sge, uint32_t max_inline,
			  struct mrct_qp_create *qc)
{
	memset(qc, 0, sizeof(*qc));
	qc->pd = pd;
	qc->access = access;
	qc->max_send_sge = max_sge;
	qc->max_recv_sge = max_sge;
	qc->max_inline = max_inline;
	return mt_ioctl(fd, MRCT_QP_CREATE, qc);
}

/* MRCT_REG of @len bytes at @addr as @iova on PD @pd; the result in @reg. */
static inline int mt_reg(int fd, void *addr, uint64_t len, uint64_t iova,
			 uint32_t access, uint32_t pd, struct mrct_reg *reg)
{
	memset(reg, 0, sizeof(*reg));
	reg->addr = (uintptr_t)addr;
	reg->length = len;
	reg->iova = iova;
	reg->access = access;
	reg->pd = pd;
	return mt_ioctl(fd, MRCT_REG, reg);
}

static inline int mt_dereg(int fd, uint32_t handle)
{
	struct mrct_dereg d = { .handle = handle };

	return mt_ioctl(fd, MRCT_DEREG, &d);
}

/*
 * For a FIXTURE_SETUP: @len zeroed bytes of anonymous memory, registered
 * (pinned) as @iova with @access on PD 0, the MR in @reg. The setup
 * fails if either step does.
 */
static inline uint8_t *mt_fixture_pinned(struct __test_metadata *_metadata,
					 int fd, size_t len, uint64_t iova,
					 uint32_t access, struct mrct_reg *reg)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0, len);
	ASSERT_EQ(0, mt_reg(fd, p, len, iova, access, 0, reg));
	return p;
}

/*
 * The device moves @len bytes between @iova of the MR @handle and @buf
 * (@req MRCT_DEV_READ or MRCT_DEV_WRITE; @flags MRCT_XFER_*): 0 or -errno.
 */
static inline int mt_xfer(int fd, unsigned long req, uint32_t handle,
			  uint64_t iova, void *buf, uint64_t len, uint32_t flags)
{
	struct mrct_xfer x = {
		.iova = iova,
		.length = len,
		.ptr = (uintptr_t)buf,
		.handle = handle,
		.flags = flags,
	};

	return mt_ioctl(fd, req, &x);
}

/* Read @path into @buf (NUL-terminated, at most @len - 1 bytes): 0 or -errno. */
static inline int mt_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

/*
 * The kernel was booted with swiotlb=force (scripts/vmtest.sh --swiotlb):
 * every streaming DMA mapping bounces, so a case whose premise a bounce
 * slot breaks (an alignment, a size, an exporter that never syncs) knows
 * it before it checks anything.
 */
static inline bool mt_swiotlb_forced(void)
{
	const char *word = "swiotlb=force";
	char cmdline[4096], *p;
	size_t n = strlen(word);

	if (mt_read_file("/proc/cmdline", cmdline, sizeof(cmdline)))
		return false;
	for (p = strstr(cmdline, word); p; p = strstr(p + 1, word))
		if ((p == cmdline || p[-1] == ' ') &&
		    (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* Write @s to @path: 0 or -errno (-EIO for a short write). */
static inline int mt_write_file(const char *path, const char *s)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/*
 * Have at least @n free 2 MiB huge pages, raising vm.nr_hugepages if
 * needed (its value before in *@old, else -1): NULL, or why not.
 */
static inline const char *mt_hugetlb_reserve(long n, long *old)
{
	char buf[64], want[32], line[128];
	long free_pages = 0;
	FILE *f;

	*old = -1;
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return "no /proc/meminfo";
	while (fgets(line, sizeof(line), f)) {
		long v;

		if (sscanf(line, "Hugepagesize: %ld kB", &v) == 1 && v != 2048) {
			fclose(f);
			return "the default huge page size is not 2 MiB";
		}
		sscanf(line, "HugePages_Free: %ld", &free_pages);
	}
	fclose(f);
	if (free_pages >= n)
		return NULL;
	if (mt_read_file("/proc/sys/vm/nr_hugepages", buf, sizeof(buf)))
		return "no /proc/sys/vm/nr_hugepages (hugetlbfs not built)";
	*old = atol(buf);
	snprintf(want, sizeof(want), "%ld", *old + n - free_pages);
	if (mt_write_file("/proc/sys/vm/nr_hugepages", want))
		return "cannot raise /proc/sys/vm/nr_hugepages";
	return NULL;
}

/* Put vm.nr_hugepages back after mt_hugetlb_reserve() (@old < 0: no-op). */
static inline void mt_hugetlb_restore(long old)
{
	char s[32];

	if (old < 0)
		return;
	snprintf(s, sizeof(s), "%ld", old);
	mt_write_file("/proc/sys/vm/nr_hugepages", s);
}

/*
 * The "@field: N kB" line (AnonHugePages, KernelPageSize, ...) of the
 * mapping that starts at @addr in /proc/self/smaps: N, or -1.
 */
static inline long mt_smaps_kb(void *addr, const char *field)
{
	unsigned long start, end;
	bool in_vma = false;
	char line[256], key[64];
	long kb = -1, v;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			if (in_vma)
				break;
			in_vma = start == (uintptr_t)addr;
		} else if (in_vma &&
			   sscanf(line, "%63[^:]: %ld kB", key, &v) == 2 &&
			   !strcmp(key, field)) {
			kb = v;
			break;
		}
	}
	fclose(f);
	return kb;
}

/* AnonHugePages of the mapping that starts at @addr, in kB, or -1. */
static inline long mt_anon_huge_kb(void *addr)
{
	return mt_smaps_kb(addr, "AnonHugePages");
}

/*
 * @n 2 MiB hugetlb pages, mapped private and anonymous at *@p, after
 * mt_hugetlb_reserve() (*@old as there): NULL, or why not, with nothing
 * left mapped or reserved. The size is the kernel's word: the default huge
 * page size in /proc/meminfo, and the mapping's KernelPageSize in smaps.
 */
static inline const char *mt_hugetlb_map(long n, long *old, uint8_t **p)
{
	const size_t len = n * (2UL << 20);
	const char *why;

	why = mt_hugetlb_reserve(n, old);
	if (why)
		return why;
	*p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (*p == MAP_FAILED)
		why = "no free 2 MiB huge pages (nr_hugepages)";
	else if (mt_smaps_kb(*p, "KernelPageSize") != 2048)
		why = "the mapping's KernelPageSize is not 2048 kB";
	else
		return NULL;
	if (*p != MAP_FAILED)
		munmap(*p, len);
	mt_hugetlb_restore(*old);
	return why;
}

/*
 * The size of a PMD-mapped transparent huge page, in bytes, as the kernel
 * says (transparent_hugepage/hpage_pmd_size); 0 when THP is not built or
 * is set to "never".
 */
static inline size_t mt_thp_size(void)
{
	const char *dir = "/sys/kernel/mm/transparent_hugepage";
	char path[96], buf[128];

	snprintf(path, sizeof(path), "%s/enabled", dir);
	if (mt_read_file(path, buf, sizeof(buf)) || strstr(buf, "[never]"))
		return 0;
	snprintf(path, sizeof(path), "%s/hpage_pmd_size", dir);
	if (mt_read_file(path, buf, sizeof(buf)))
		return 0;
	return strtoul(buf, NULL, 10);
}

/*
 * The page frame numbers of the @n 4 KiB pages from @addr (page aligned),
 * from /proc/self/pagemap, into @pfns; a page not present reads 0, and so
 * does every page without CAP_SYS_ADMIN (the kernel hides PFNs). 0 or
 * -errno.
 */
static inline int mt_pfns(const void *addr, size_t n, uint64_t *pfns)
{
	off_t at = (uintptr_t)addr / 4096 * sizeof(uint64_t);
	size_t want = n * sizeof(uint64_t), i;
	ssize_t got;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return -errno;
	got = pread(fd, pfns, want, at);
	close(fd);
	if (got != (ssize_t)want)
		return got < 0 ? -errno : -EIO;
	for (i = 0; i < n; i++)
		/* Bit 63: present; bits 0-54: the PFN. */
		pfns[i] = pfns[i] >> 63 ? pfns[i] & ((1ULL << 55) - 1) : 0;
	return 0;
}

/* The value of @name in /proc/vmstat, or -1 when the kernel has none. */
static inline long long mt_vmstat(const char *name)
{
	char line[128], key[64];
	long long v, found = -1;
	FILE *f;

	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %lld", key, &v) == 2 && !strcmp(key, name)) {
			found = v;
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * Pins taken minus pins released, system-wide (nr_foll_pin_acquired -
 * nr_foll_pin_released in /proc/vmstat): take it before and after a case;
 * equal values say every page the case pinned was unpinned. The counters
 * are the kernel's own, so they prove what mrcore's counters cannot.
 * /proc/vmstat shows the global counters without what each CPU has not
 * folded into them yet (up to its stat threshold, per counter), so
 * vm.stat_refresh folds those first: -1 when that is refused (not root)
 * or the counters are missing. A kernel without SMP has no per-CPU
 * deltas and no vm.stat_refresh. The zero page is never counted, pinned
 * or released.
 */
static inline long long mt_foll_pins(void)
{
	long long a, r;
	int err;

	err = mt_write_file("/proc/sys/vm/stat_refresh", "1");
	if (err && err != -ENOENT)
		return -1;
	a = mt_vmstat("nr_foll_pin_acquired");
	r = mt_vmstat("nr_foll_pin_released");
	return a < 0 || r < 0 ? -1 : a - r;
}

#endif /* MRCT_UTIL_H */
