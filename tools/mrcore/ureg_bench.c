// SPDX-License-Identifier: GPL-2.0
/*
 * ureg_bench: user-space memory registration through libibverbs on one
 * device (make bench runs it on vhca0 and rxe0 side by side; bench.sh).
 *
 *	ureg_bench -d DEV [-s SCALE]
 *
 * Prints one line per figure, "ureg DEV WHAT SIZE VALUE UNIT", or
 * "ureg DEV WHAT SIZE refused ERRNO-TEXT" when the device refuses it:
 *
 *   reg+dereg  ibv_reg_mr() + ibv_dereg_mr() of a populated anonymous
 *              buffer (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE), mean
 *              microseconds per pair, at 4 KiB, 2 MiB, 64 MiB and 1 GiB
 *   odp        the same with IBV_ACCESS_ON_DEMAND at 1 GiB (nothing
 *              pinned: the registration's own cost)
 *   alloc      64 MiB made ready for RDMA two ways, mean microseconds:
 *              "plain" mmap + populate + ibv_reg_mr (and back), "alloc"
 *              libvhca's vhcav_alloc_mr (and vhcav_dereg_mr), which
 *              allocates contiguous blocks, registers and maps them
 *
 * Rounds per size are fixed (times SCALE), so figures compare between
 * runs. The buffer is populated once, before the clock starts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <vhca/verbs.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define MRW_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_WRITE)

static double scale = 1.0;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int rounds(int base)
{
	int n = (int)(base * scale);

	return n > 0 ? n : 1;
}

static const char *size_name(size_t size)
{
	static char buf[32];

	if (size >= 1UL << 30)
		snprintf(buf, sizeof(buf), "%zuG", size >> 30);
	else if (size >= 1UL << 20)
		snprintf(buf, sizeof(buf), "%zuM", size >> 20);
	else
		snprintf(buf, sizeof(buf), "%zuK", size >> 10);
	return buf;
}

static void *buf_get(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x5a, size);
	return p;
}

/* Mean microseconds of n reg+dereg pairs, or -errno. */
static double reg_dereg(struct ibv_pd *pd, void *p, size_t size, int access,
			int n)
{
	double t0 = now_us();
	struct ibv_mr *mr;
	int i;

	for (i = 0; i < n; i++) {
		mr = ibv_reg_mr(pd, p, size, access);
		if (!mr)
			return -errno;
		if (ibv_dereg_mr(mr))
			return -EIO;
	}
	return (now_us() - t0) / n;
}

static void report(const char *dev, const char *what, size_t size, double v)
{
	if (v < 0)
		printf("ureg %s %s %s refused %s\n", dev, what, size_name(size),
		       strerror((int)-v));
	else
		printf("ureg %s %s %s %.1f us\n", dev, what, size_name(size), v);
	fflush(stdout);
}

static void bench_sizes(struct ibv_pd *pd, const char *dev)
{
	static const struct { size_t size; int rounds; } sz[] = {
		{ 4UL << 10, 2000 }, { 2UL << 20, 200 },
		{ 64UL << 20, 20 }, { 1UL << 30, 3 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sz); i++) {
		void *p = buf_get(sz[i].size);

		if (!p) {
			report(dev, "reg+dereg", sz[i].size, -ENOMEM);
			continue;
		}
		/* One pair first: page tables and caches warm. */
		reg_dereg(pd, p, sz[i].size, MRW_ACCESS, 1);
		report(dev, "reg+dereg", sz[i].size,
		       reg_dereg(pd, p, sz[i].size, MRW_ACCESS,
				 rounds(sz[i].rounds)));
		munmap(p, sz[i].size);
	}
}

static void bench_odp(struct ibv_pd *pd, const char *dev)
{
	size_t size = 1UL << 30;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		report(dev, "odp", size, -ENOMEM);
		return;
	}
	report(dev, "odp", size, reg_dereg(pd, p, size,
					   MRW_ACCESS | IBV_ACCESS_ON_DEMAND,
					   rounds(20)));
	munmap(p, size);
}

/* 64 MiB: mmap + populate + reg + dereg + munmap, against libvhca's. */
static void bench_alloc(struct ibv_pd *pd, const char *dev)
{
	size_t size = 64UL << 20;
	int i, n = rounds(10);
	struct ibv_mr *mr;
	double t0;
	void *p;

	t0 = now_us();
	for (i = 0; i < n; i++) {
		p = buf_get(size);
		mr = p ? ibv_reg_mr(pd, p, size, MRW_ACCESS) : NULL;
		if (!mr) {
			report(dev, "alloc-plain", size, -(errno ? errno : ENOMEM));
			if (p)
				munmap(p, size);
			return;
		}
		ibv_dereg_mr(mr);
		munmap(p, size);
	}
	report(dev, "alloc-plain", size, (now_us() - t0) / n);

	t0 = now_us();
	for (i = 0; i < n; i++) {
		mr = vhcav_alloc_mr(pd, size, MRW_ACCESS, 0);
		if (!mr) {
			report(dev, "alloc-vhcav", size, -errno);
			return;
		}
		/* Touch it as the plain buffer was touched. */
		memset(mr->addr, 0x5a, size);
		vhcav_dereg_mr(mr);
	}
	report(dev, "alloc-vhcav", size, (now_us() - t0) / n);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	const char *dev = NULL;
	int opt, i;

	while ((opt = getopt(argc, argv, "d:s:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 's':
			scale = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s -d DEV [-s SCALE]\n", argv[0]);
			return 2;
		}
	}
	if (!dev || scale <= 0) {
		fprintf(stderr, "usage: %s -d DEV [-s SCALE]\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "ureg_bench: cannot open %s\n", dev);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "ureg_bench: ibv_alloc_pd: %s\n", strerror(errno));
		return 1;
	}
	bench_sizes(pd, dev);
	bench_odp(pd, dev);
	bench_alloc(pd, dev);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
