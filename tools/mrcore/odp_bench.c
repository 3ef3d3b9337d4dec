// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging figures on a vhca device, through /dev/mrcore_test:
 *
 *  1. registration of 1 GiB (populated anonymous memory): pinned vs ODP,
 *     median of REG calls, and the ratio;
 *  2. first-touch throughput: RDMA WRITEs of 1 MiB from a pinned MR into
 *     64 MiB of fresh memory, registered ODP (every page faults), pinned
 *     (pinned at registration, not timed), and ODP after a synchronous
 *     PREFETCH_WRITE (not timed); MB/s and the ratios to pinned;
 *  3. fault-to-resume latency: a 4 KiB and a 2 MiB RDMA WRITE into an ODP
 *     range the CPU has just dropped (MADV_DONTNEED, so the WRITE faults)
 *     beside the same WRITE into mapped pages: median and p99 of each,
 *     and the median difference, which is what a fault adds;
 *  4. invalidation cost: MADV_DONTNEED of 64 MiB that an ODP MR has
 *     mapped beside the same of memory no MR covers, per MiB.
 *
 * Usage: odp_bench VHCA_DEV [OTHER_DEV]. OTHER_DEV (rxe) is only asked for
 * an ODP registration, to report what it answers: 6.1's rxe has no ODP.
 * Measurements only: nothing is compared with a threshold. The last line
 * is "ok - bench: odp figures measured", or "not ok" with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "mrcore_test_uapi.h"

#define KIB		1024ULL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define REG_SIZE	GIB
#define TOUCH_SIZE	(64 * MIB)
#define CHUNK		MIB
#define LAT_ROUNDS	200
#define LAT_2M_ROUNDS	40
#define ODP_REG_ROUNDS	20
#define PIN_REG_ROUNDS	3
#define MAX_REG_ROUNDS	20	/* the larger of the two */

#define RIGHTS	(MRCT_ACCESS_LOCAL_WRITE | MRCT_ACCESS_REMOTE_WRITE | \
		 MRCT_ACCESS_REMOTE_READ)
#define IB_WR_RDMA_WRITE	0

static const char *failed;

/* ioctl() as 0 or -errno (mrct_util.h needs the kselftest harness). */
static int bt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

/* /dev/mrcore_test bound to @name: the fd, or -errno. */
static int bt_open(const char *name)
{
	struct mrct_set_device sd = {};
	int fd, err;

	fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
	if (fd < 0)
		return -errno;
	snprintf(sd.name, sizeof(sd.name), "%s", name);
	err = bt_ioctl(fd, MRCT_SET_DEVICE, &sd);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int bt_reg(int fd, void *addr, uint64_t len, uint32_t access,
		  struct mrct_reg *reg)
{
	memset(reg, 0, sizeof(*reg));
	reg->addr = (uintptr_t)addr;
	reg->length = len;
	reg->iova = (uintptr_t)addr;
	reg->access = access;
	return bt_ioctl(fd, MRCT_REG, reg);
}

static void bt_dereg(int fd, uint32_t handle)
{
	struct mrct_dereg d = { .handle = handle };

	bt_ioctl(fd, MRCT_DEREG, &d);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @pct percentile of @v (sorted in place). */
static double pctl(double *v, int n, int pct)
{
	int i = (n * pct + 99) / 100 - 1;

	qsort(v, n, sizeof(*v), cmp_double);
	return v[i < 0 ? 0 : i];
}

static void *map_anon(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* One signaled RDMA WRITE of @len bytes from @src's @sva to @dst's @dva. */
static int rdma_write(int fd, uint32_t pair, const struct mrct_reg *src,
		      uint64_t sva, const struct mrct_reg *dst, uint64_t dva,
		      uint32_t len)
{
	struct mrct_qp_post p = {
		.handle = pair,
		.opcode = IB_WR_RDMA_WRITE,
		.rkey = dst->info.rkey,
		.remote_addr = dva,
		.num_sge = 1,
	};
	int err;

	p.sge[0].addr = sva;
	p.sge[0].length = len;
	p.sge[0].lkey = src->info.lkey;
	err = bt_ioctl(fd, MRCT_QP_POST, &p);
	if (!err && (p.post_err || p.status))
		err = -EIO;
	return err;
}

static int prefetch_write(int fd, const struct mrct_reg *r, uint64_t len)
{
	struct mrct_odp_advise a = {
		.addr = r->iova,
		.length = len,
		.handle = r->handle,
		.advice = MRCT_ADVISE_PREFETCH_WRITE,
		.flags = MRCT_ADVISE_FLUSH,
	};

	return bt_ioctl(fd, MRCT_ODP_ADVISE, &a);
}

/* Median time of @rounds REG calls of @buf (each deregistered after). */
static double reg_median(int fd, void *buf, uint64_t len, uint32_t access,
			 int rounds)
{
	double t[MAX_REG_ROUNDS];
	struct mrct_reg r;
	int i;

	for (i = 0; i < rounds; i++) {
		double t0 = now_us();

		if (bt_reg(fd, buf, len, access, &r)) {
			failed = "REG of the 1 GiB buffer failed";
			return -1;
		}
		t[i] = now_us() - t0;
		bt_dereg(fd, r.handle);
	}
	return pctl(t, rounds, 50);
}

static void bench_reg(int fd, const char *other)
{
	uint8_t *buf = map_anon(REG_SIZE);
	double pin, odp;
	struct mrct_reg r;
	int ofd, err;

	if (!buf) {
		failed = "no memory for the 1 GiB buffer";
		return;
	}
	memset(buf, 0x5a, REG_SIZE);
	pin = reg_median(fd, buf, REG_SIZE, RIGHTS, PIN_REG_ROUNDS);
	odp = reg_median(fd, buf, REG_SIZE, RIGHTS | MRCT_ACCESS_ON_DEMAND,
			 ODP_REG_ROUNDS);
	if (pin > 0 && odp > 0)
		printf("bench: odp reg 1 GiB: pinned %.0f us, odp %.1f us, pinned/odp %.0fx\n",
		       pin, odp, pin / odp);

	if (other) {
		ofd = bt_open(other);
		err = ofd < 0 ? ofd :
		      bt_reg(ofd, buf, 64 * KIB, RIGHTS | MRCT_ACCESS_ON_DEMAND, &r);
		printf("bench: odp reg on %s: %s\n", other,
		       err ? strerror(-err) : "registered");
		if (!err)
			bt_dereg(ofd, r.handle);
		if (ofd >= 0)
			close(ofd);
	}
	munmap(buf, REG_SIZE);
}

/*
 * Time RDMA WRITEs covering TOUCH_SIZE of fresh memory registered with
 * @access (prefetched first, untimed, with @prefetch): MB/s, or -1.
 */
static double touch_rate(int fd, uint32_t pair, const struct mrct_reg *src,
			 uint32_t access, bool prefetch)
{
	uint8_t *dst = map_anon(TOUCH_SIZE);
	struct mrct_reg r;
	double t0, us = -1;
	uint64_t off;

	if (!dst || bt_reg(fd, dst, TOUCH_SIZE, access, &r)) {
		failed = "REG of the first-touch buffer failed";
		goto out_unmap;
	}
	if (prefetch && prefetch_write(fd, &r, TOUCH_SIZE)) {
		failed = "PREFETCH_WRITE with FLUSH failed";
		goto out_dereg;
	}
	t0 = now_us();
	for (off = 0; off < TOUCH_SIZE; off += CHUNK) {
		if (rdma_write(fd, pair, src, src->iova, &r,
			       (uintptr_t)dst + off, CHUNK)) {
			failed = "a first-touch RDMA WRITE failed";
			goto out_dereg;
		}
	}
	us = now_us() - t0;
	if (memcmp(dst + TOUCH_SIZE - CHUNK, (void *)(uintptr_t)src->iova,
		   CHUNK)) {
		failed = "first-touch bytes differ";
		us = -1;
	}
out_dereg:
	bt_dereg(fd, r.handle);
out_unmap:
	if (dst)
		munmap(dst, TOUCH_SIZE);
	return us > 0 ? TOUCH_SIZE / us : -1;
}

static void bench_touch(int fd, uint32_t pair, const struct mrct_reg *src)
{
	double pin, odp, pre;

	pin = touch_rate(fd, pair, src, RIGHTS, false);
	odp = touch_rate(fd, pair, src, RIGHTS | MRCT_ACCESS_ON_DEMAND, false);
	pre = touch_rate(fd, pair, src, RIGHTS | MRCT_ACCESS_ON_DEMAND, true);
	if (pin < 0 || odp < 0 || pre < 0)
		return;
	printf("bench: odp first touch 64 MiB: pinned %.0f MB/s, ", pin);
	printf("odp %.0f MB/s (%.2f of pinned), ", odp, odp / pin);
	printf("odp prefetched %.0f MB/s (%.2f of pinned)\n", pre, pre / pin);
}

/*
 * @rounds WRITEs of @len into an ODP MR's pages dropped by the CPU just
 * before each (a fault each), and as many into mapped pages.
 */
static void bench_latency(int fd, uint32_t pair, const struct mrct_reg *src,
			  uint64_t len, int rounds, const char *name)
{
	double *fault = calloc(rounds, sizeof(double));
	double *hit = calloc(rounds, sizeof(double));
	uint8_t *dst = map_anon(len);
	struct mrct_reg r;
	double fm, hm;
	int i;

	if (!fault || !hit || !dst ||
	    bt_reg(fd, dst, len, RIGHTS | MRCT_ACCESS_ON_DEMAND, &r)) {
		failed = "setup of the latency buffer failed";
		goto out_free;
	}
	for (i = 0; i < rounds; i++) {
		double t0;

		madvise(dst, len, MADV_DONTNEED);
		t0 = now_us();
		if (rdma_write(fd, pair, src, src->iova, &r, (uintptr_t)dst,
			       len)) {
			failed = "a faulting RDMA WRITE failed";
			goto out_dereg;
		}
		fault[i] = now_us() - t0;
		t0 = now_us();
		if (rdma_write(fd, pair, src, src->iova, &r, (uintptr_t)dst,
			       len)) {
			failed = "an RDMA WRITE into mapped pages failed";
			goto out_dereg;
		}
		hit[i] = now_us() - t0;
	}
	fm = pctl(fault, rounds, 50);
	hm = pctl(hit, rounds, 50);
	printf("bench: odp fault %s: faulting WRITE median %.1f us p99 %.1f us; ",
	       name, fm, pctl(fault, rounds, 99));
	printf("mapped WRITE median %.1f us p99 %.1f us; ", hm,
	       pctl(hit, rounds, 99));
	printf("fault adds %.1f us (median)\n", fm - hm);
out_dereg:
	bt_dereg(fd, r.handle);
out_free:
	if (dst)
		munmap(dst, len);
	free(fault);
	free(hit);
}

/* MADV_DONTNEED of TOUCH_SIZE, mapped by an ODP MR (@odp) or by no MR. */
static double dontneed_us(int fd, bool odp)
{
	uint8_t *buf = map_anon(TOUCH_SIZE);
	struct mrct_reg r;
	double t0, us = -1;

	if (!buf)
		return -1;
	memset(buf, 1, TOUCH_SIZE);
	if (odp && (bt_reg(fd, buf, TOUCH_SIZE, RIGHTS | MRCT_ACCESS_ON_DEMAND, &r) ||
		    prefetch_write(fd, &r, TOUCH_SIZE))) {
		failed = "setup of the invalidation buffer failed";
		munmap(buf, TOUCH_SIZE);
		return -1;
	}
	t0 = now_us();
	madvise(buf, TOUCH_SIZE, MADV_DONTNEED);
	us = now_us() - t0;
	if (odp)
		bt_dereg(fd, r.handle);
	munmap(buf, TOUCH_SIZE);
	return us;
}

static void bench_invalidate(int fd)
{
	double plain[5], mapped[5];
	int i;

	for (i = 0; i < 5; i++) {
		plain[i] = dontneed_us(fd, false);
		mapped[i] = dontneed_us(fd, true);
		if (plain[i] < 0 || mapped[i] < 0)
			return;
	}
	printf("bench: odp invalidation: MADV_DONTNEED of 64 MiB ");
	printf("%.0f us mapped by an ODP MR, %.0f us without; ",
	       pctl(mapped, 5, 50), pctl(plain, 5, 50));
	printf("%.1f us per MiB for the invalidation\n",
	       (pctl(mapped, 5, 50) - pctl(plain, 5, 50)) / 64);
}

int main(int argc, char **argv)
{
	struct mrct_qp_create qc;
	struct mrct_reg src;
	uint8_t *sbuf;
	uint64_t i;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: %s VHCA_DEV [OTHER_DEV]\n", argv[0]);
		return 2;
	}
	fd = bt_open(argv[1]);
	if (fd < 0) {
		printf("not ok - bench: odp figures measured # open %s: %s\n",
		       argv[1], strerror(-fd));
		return 1;
	}
	sbuf = map_anon(2 * MIB);
	qc = (struct mrct_qp_create) {
		.access = RIGHTS,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	if (!sbuf || bt_ioctl(fd, MRCT_QP_CREATE, &qc) ||
	    bt_reg(fd, sbuf, 2 * MIB, RIGHTS, &src)) {
		printf("not ok - bench: odp figures measured # setup failed\n");
		return 1;
	}
	for (i = 0; i < 2 * MIB; i++)
		sbuf[i] = i * 131 + (i >> 12);

	bench_reg(fd, argc > 2 ? argv[2] : NULL);
	bench_touch(fd, qc.handle, &src);
	bench_latency(fd, qc.handle, &src, 4 * KIB, LAT_ROUNDS, "4 KiB");
	bench_latency(fd, qc.handle, &src, 2 * MIB, LAT_2M_ROUNDS, "2 MiB");
	bench_invalidate(fd);

	bt_dereg(fd, src.handle);
	close(fd);
	if (failed) {
		printf("not ok - bench: odp figures measured # %s\n", failed);
		return 1;
	}
	printf("ok - bench: odp figures measured\n");
	return 0;
}
