// SPDX-License-Identifier: GPL-2.0
/*
 * dp_bench: the data path's copy rate beside a plain memcpy.
 *
 * For 4 KiB, 64 KiB and 1 MiB:
 *  - memcpy: MRCT_BENCH_MEMCPY copies between two kernel buffers of
 *    mrcore_test's in a loop for the cell time; the rate every data-path
 *    figure is set against (same VM, same CPU, same emulation).
 *  - each device named: a loopback RC pair of /dev/mrcore_test (QP A to
 *    QP B over the device's own RoCE v2 GID, path MTU 1024) and two
 *    buffers of this process, 4 KiB pages, registered with MRCT_REG;
 *    MRCT_BENCH_WRITE keeps MRCT_QP_DEPTH signaled RDMA WRITEs from one
 *    to the other in flight for the cell time, busy-polling the CQ in the
 *    kernel. The target is then compared with the source, so a cell that
 *    moved wrong bytes is no measurement.
 * MB/s are 10^6 bytes per second: bytes / elapsed time as the module
 * measured it (first post to last completion).
 *
 * Usage: dp_bench [-t SECONDS] DEV [REF]
 *   -t SECONDS  a cell's time (default 0.5)
 *   DEV         the device measured (vhca0), REF the reference (rxe0)
 *
 * Output: "bench: " lines as cells are measured, a markdown table, and
 * "ok - bench: data-path copy rates measured" when every cell was, else
 * "not ok - ... # why". Exit status 0, 1 when a cell failed, 2 for bad
 * usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

#define BUF_LEN		0x100000UL	/* 1 MiB */
#define MAX_DEVS	2
/* How long to wait for a device's IPv4 GID (MRCT_QP_CREATE needs it). */
#define GID_WAIT_S	10

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static const struct {
	uint32_t bytes;
	const char *name;
} sizes[] = {
	{ 4U << 10, "4 KiB" },
	{ 64U << 10, "64 KiB" },
	{ 1U << 20, "1 MiB" },
};

#define NR_SIZES	ARRAY_SIZE(sizes)

/* One measurement: a rate, or why there is none. */
struct cell {
	double mbps;
	char why[96];
};

/**
 * struct dev - one device's loopback pair and MRs
 * @name: RDMA device
 * @fd: its /dev/mrcore_test context
 * @pair: the pair's handle
 * @src_lkey: lkey of the source buffer
 * @dst_rkey: rkey of the target buffer
 * @why: why the setup failed, empty when it worked
 */
struct dev {
	const char *name;
	int fd;
	uint32_t pair;
	uint32_t src_lkey;
	uint32_t dst_rkey;
	char why[96];
};

static struct dev devs[MAX_DEVS];
static int nr_devs;
static struct cell memcpy_cells[NR_SIZES];
static struct cell write_cells[NR_SIZES][MAX_DEVS];
static double cell_time = 0.5;
static uint8_t *src_buf, *dst_buf;

/* ioctl() as 0 or -errno. */
static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

static const char *errname(int err)
{
	const char *name = strerrorname_np(-err);

	return name ? name : "unknown errno";
}

/* Two buffers of BUF_LEN in 4 KiB pages, every page written once. */
static int buffers_map(void)
{
	uint8_t *p;

	p = mmap(NULL, 2 * BUF_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	madvise(p, 2 * BUF_LEN, MADV_NOHUGEPAGE);
	memset(p, 0, 2 * BUF_LEN);
	src_buf = p;
	dst_buf = p + BUF_LEN;
	return 0;
}

static int reg(struct dev *d, uint8_t *buf, uint32_t access,
	       struct mrct_reg *r)
{
	memset(r, 0, sizeof(*r));
	r->addr = (uintptr_t)buf;
	r->length = BUF_LEN;
	r->iova = (uintptr_t)buf;
	r->access = access;
	return xioctl(d->fd, MRCT_REG, r);
}

/*
 * Context, pair and MRs on @d. The pair needs the port's IPv4 GID, which
 * appears shortly after the netdev's address: retry while it is missing.
 */
static void dev_setup(struct dev *d)
{
	struct mrct_set_device sd = {};
	struct mrct_qp_create qc;
	struct mrct_reg r;
	int err, tries;

	d->fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
	if (d->fd < 0) {
		snprintf(d->why, sizeof(d->why), "open: %s", errname(-errno));
		return;
	}
	snprintf(sd.name, sizeof(sd.name), "%s", d->name);
	err = xioctl(d->fd, MRCT_SET_DEVICE, &sd);
	if (err) {
		snprintf(d->why, sizeof(d->why), "MRCT_SET_DEVICE: %s",
			 errname(err));
		return;
	}
	for (tries = 0; tries < GID_WAIT_S * 10; tries++) {
		memset(&qc, 0, sizeof(qc));
		qc.access = MRCT_ACCESS_LOCAL_WRITE | MRCT_ACCESS_REMOTE_WRITE;
		qc.max_send_sge = 1;
		qc.max_recv_sge = 1;
		err = xioctl(d->fd, MRCT_QP_CREATE, &qc);
		if (err != -EADDRNOTAVAIL)
			break;
		usleep(100000);
	}
	if (err) {
		snprintf(d->why, sizeof(d->why), "MRCT_QP_CREATE: %s",
			 errname(err));
		return;
	}
	d->pair = qc.handle;
	err = reg(d, src_buf, MRCT_ACCESS_LOCAL_WRITE, &r);
	if (err) {
		snprintf(d->why, sizeof(d->why), "MRCT_REG source: %s",
			 errname(err));
		return;
	}
	d->src_lkey = r.info.lkey;
	err = reg(d, dst_buf, MRCT_ACCESS_LOCAL_WRITE |
		  MRCT_ACCESS_REMOTE_WRITE, &r);
	if (err) {
		snprintf(d->why, sizeof(d->why), "MRCT_REG target: %s",
			 errname(err));
		return;
	}
	d->dst_rkey = r.info.rkey;
}

static void measure_memcpy(int fd, size_t i, struct cell *c)
{
	struct mrct_bench_memcpy b = {
		.length = sizes[i].bytes,
		.min_ns = cell_time * 1e9,
	};
	int err;

	err = xioctl(fd, MRCT_BENCH_MEMCPY, &b);
	if (err) {
		snprintf(c->why, sizeof(c->why), "MRCT_BENCH_MEMCPY: %s",
			 errname(err));
		return;
	}
	c->mbps = (double)b.copies * b.length * 1e3 / b.elapsed_ns;
	printf("bench: %s memcpy: %llu copies in %.3f s, %.1f MB/s\n",
	       sizes[i].name, (unsigned long long)b.copies,
	       b.elapsed_ns / 1e9, c->mbps);
}

/* A fresh pattern in the source, the target cleared, WRITEs, compare. */
static void measure_write(struct dev *d, size_t i, struct cell *c)
{
	uint32_t len = sizes[i].bytes, k;
	struct mrct_bench_write b = {
		.local_addr = (uintptr_t)src_buf,
		.remote_addr = (uintptr_t)dst_buf,
		.min_ns = cell_time * 1e9,
		.handle = d->pair,
		.length = len,
		.lkey = d->src_lkey,
		.rkey = d->dst_rkey,
		.depth = MRCT_QP_DEPTH,
	};
	int err;

	for (k = 0; k < len; k++)
		src_buf[k] = (uint8_t)(k * 7 + i * 13 + (d - devs) * 31 + 1);
	memset(dst_buf, 0, len);
	err = xioctl(d->fd, MRCT_BENCH_WRITE, &b);
	if (err) {
		snprintf(c->why, sizeof(c->why), "MRCT_BENCH_WRITE: %s",
			 errname(err));
		return;
	}
	if (b.post_err) {
		snprintf(c->why, sizeof(c->why), "ib_post_send: %s",
			 errname(b.post_err));
		return;
	}
	if (b.status != MRCT_WC_SUCCESS) {
		snprintf(c->why, sizeof(c->why), "completion status %u",
			 b.status);
		return;
	}
	if (!b.wrs || !b.elapsed_ns) {
		snprintf(c->why, sizeof(c->why), "no WR completed");
		return;
	}
	if (memcmp(src_buf, dst_buf, len)) {
		snprintf(c->why, sizeof(c->why),
			 "the target differs from the source");
		return;
	}
	c->mbps = (double)b.wrs * len * 1e3 / b.elapsed_ns;
	printf("bench: %s %s: %llu WRITEs in %.3f s, %.1f MB/s\n",
	       sizes[i].name, d->name, (unsigned long long)b.wrs,
	       b.elapsed_ns / 1e9, c->mbps);
}

static void fmt_rate(char *buf, size_t n, const struct cell *c)
{
	if (c->why[0])
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, "%.1f", c->mbps);
}

static void fmt_ratio(char *buf, size_t n, const struct cell *a,
		      const struct cell *b)
{
	if (a->why[0] || b->why[0] || b->mbps <= 0)
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, "%.3f", a->mbps / b->mbps);
}

static void print_table(void)
{
	char rate[4][32], ratio[2][32], hdr[128];
	const struct cell *ref;
	size_t i;
	int j;

	printf("bench: data-path copy rate, MB/s (10^6 B/s); ratios: %s / memcpy",
	       devs[0].name);
	if (nr_devs > 1)
		printf(", %s / %s", devs[0].name, devs[1].name);
	printf("\n");
	snprintf(hdr, sizeof(hdr), "| size   | memcpy MB/s | %s WRITE MB/s |",
		 devs[0].name);
	printf("%s", hdr);
	if (nr_devs > 1)
		printf(" %s WRITE MB/s |", devs[1].name);
	printf(" %s/memcpy |", devs[0].name);
	if (nr_devs > 1)
		printf(" %s/%s |", devs[0].name, devs[1].name);
	printf("\n|--------|------------:|-----------------:|");
	if (nr_devs > 1)
		printf("----------------:|");
	printf("-------------:|");
	if (nr_devs > 1)
		printf("-----------:|");
	printf("\n");
	for (i = 0; i < NR_SIZES; i++) {
		fmt_rate(rate[0], sizeof(rate[0]), &memcpy_cells[i]);
		for (j = 0; j < nr_devs; j++)
			fmt_rate(rate[j + 1], sizeof(rate[j + 1]),
				 &write_cells[i][j]);
		fmt_ratio(ratio[0], sizeof(ratio[0]), &write_cells[i][0],
			  &memcpy_cells[i]);
		printf("| %-6s | %11s | %16s |", sizes[i].name, rate[0],
		       rate[1]);
		if (nr_devs > 1)
			printf(" %15s |", rate[2]);
		printf(" %12s |", ratio[0]);
		if (nr_devs > 1) {
			ref = &write_cells[i][1];
			fmt_ratio(ratio[1], sizeof(ratio[1]),
				  &write_cells[i][0], ref);
			printf(" %10s |", ratio[1]);
		}
		printf("\n");
	}
}

static void print_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-t SECONDS] DEV [REF]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *first_why = NULL;
	int opt, j, err, fd;
	size_t i;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		switch (opt) {
		case 't':
			cell_time = atof(optarg);
			if (cell_time <= 0 || cell_time > 10)
				print_usage(argv[0]);
			break;
		default:
			print_usage(argv[0]);
		}
	}
	if (optind >= argc || argc - optind > MAX_DEVS)
		print_usage(argv[0]);
	for (j = 0; optind < argc; optind++, j++)
		devs[j].name = argv[optind];
	nr_devs = j;
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("bench: dp_bench: memcpy between kernel buffers; ");
	printf("RDMA WRITE between two 4 KiB-page MRs over a loopback RC pair on");
	for (j = 0; j < nr_devs; j++)
		printf(" %s", devs[j].name);
	printf(" (%u signaled WRs in flight, CQ busy-polled in the kernel, ",
	       MRCT_QP_DEPTH);
	printf("path MTU 1024); %.2f s a cell\n", cell_time);

	err = buffers_map();
	if (err) {
		printf("not ok - bench: data-path copy rates measured # mmap: %s\n",
		       errname(err));
		return 1;
	}
	for (j = 0; j < nr_devs; j++)
		dev_setup(&devs[j]);

	fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
	for (i = 0; i < NR_SIZES; i++) {
		if (fd < 0)
			snprintf(memcpy_cells[i].why, sizeof(memcpy_cells[i].why),
				 "open: %s", errname(-errno));
		else
			measure_memcpy(fd, i, &memcpy_cells[i]);
		for (j = 0; j < nr_devs; j++) {
			if (devs[j].why[0])
				snprintf(write_cells[i][j].why,
					 sizeof(write_cells[i][j].why), "%s",
					 devs[j].why);
			else
				measure_write(&devs[j], i, &write_cells[i][j]);
		}
	}
	if (fd >= 0)
		close(fd);

	for (i = 0; i < NR_SIZES; i++) {
		if (memcpy_cells[i].why[0]) {
			printf("bench: %s memcpy: not measured: %s\n",
			       sizes[i].name, memcpy_cells[i].why);
			first_why = first_why ? : memcpy_cells[i].why;
		}
		for (j = 0; j < nr_devs; j++) {
			if (!write_cells[i][j].why[0])
				continue;
			printf("bench: %s %s: not measured: %s\n",
			       sizes[i].name, devs[j].name,
			       write_cells[i][j].why);
			first_why = first_why ? : write_cells[i][j].why;
		}
	}
	print_table();
	for (j = 0; j < nr_devs; j++)
		if (devs[j].fd > 0)
			close(devs[j].fd);

	if (first_why) {
		printf("not ok - bench: data-path copy rates measured # %s\n",
		       first_why);
		return 1;
	}
	printf("ok - bench: data-path copy rates measured\n");
	return 0;
}
