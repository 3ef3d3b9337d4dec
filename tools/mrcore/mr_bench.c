// SPDX-License-Identifier: GPL-2.0
/*
 * mr_bench: user MR registration cost, vhca beside other RDMA devices.
 *
 * For each buffer size and backing (4 KiB pages, or THP), the buffer is
 * mapped and touched once; then, on every device named on the command
 * line, through one /dev/mrcore_test context per device, a warm-up round
 * and N timed rounds of MRCT_REG + MRCT_DEREG of the whole buffer, that is
 * ib_reg_user_mr() and ib_dereg_mr() on the device. Each round is timed
 * with CLOCK_MONOTONIC; a cell reports the median and mean round and the
 * throughput, size x rounds / time of the timed loop. For a vhca device
 * the translation (entries, page size) comes from the REG reply, and a
 * zero-length device read through the key tells vhca from the others.
 *
 * Usage: mr_bench [-s SCALE] [-t SECONDS] DEV...
 *   -s SCALE    multiply the rounds of every size by SCALE (default 1)
 *   -t SECONDS  stop a cell's timed loop once it took this long (default 10)
 * The first device is the reference of the ratio and translation columns.
 *
 * Output: "bench: " lines as cells are measured, two markdown tables, and
 * "ok - bench: reg/dereg figures measured" when every cell was measured,
 * else "not ok - ... # why". Exit status 0, 1 when a cell failed, 2 for bad
 * usage. The format is described in Documentation/mrcore/registration.rst.
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

#define PAGE		4096UL
#define HPAGE		(2UL << 20)
#define MAX_DEVS	8
#define ACCESS		(MRCT_ACCESS_LOCAL_WRITE | MRCT_ACCESS_REMOTE_READ | \
			 MRCT_ACCESS_REMOTE_WRITE)

struct bench_size {
	uint64_t bytes;
	const char *name;
	unsigned int rounds;	/* before -s */
};

/* Rounds chosen for about 1-3 s a cell under QEMU TCG. */
static const struct bench_size sizes[] = {
	{ 4ULL << 10, "4 KiB", 2000 },
	{ 64ULL << 10, "64 KiB", 1000 },
	{ 2ULL << 20, "2 MiB", 200 },
	{ 64ULL << 20, "64 MiB", 20 },
	{ 1ULL << 30, "1 GiB", 3 },
};

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define NR_SIZES	ARRAY_SIZE(sizes)

enum backing { BACKING_4K, BACKING_THP, NR_BACKINGS };

static const char *const backing_names[NR_BACKINGS] = { "4k", "thp" };

/**
 * struct cell - one size, backing and device
 * @measured: every round succeeded
 * @err: -errno of the call that failed, when not @measured
 * @what: that call
 * @timed: it failed in a timed round, not in the warm-up or before
 * @rounds: timed rounds done
 * @secs: time of the timed loop
 * @median_us: median round
 * @mean_us: mean round
 * @mbps: bytes x rounds / @secs, in 10^6 bytes per second
 * @vhca: a device read through the key worked: the device is a vhca
 * @info: the warm-up REG reply
 */
struct cell {
	int measured;
	int err;
	const char *what;
	int timed;
	unsigned int rounds;
	double secs;
	double median_us;
	double mean_us;
	double mbps;
	int vhca;
	struct mrct_mr_info info;
};

struct dev {
	const char *name;
	int fd;
	int err;	/* -errno of open or MRCT_SET_DEVICE */
	const char *what;	/* which of the two failed */
};

/* The mapping of one buffer; [map, map + size) is registered. */
struct buffer {
	uint8_t *map;
	size_t map_len;
	int err;
	const char *what;
	long long huge_kb;	/* AnonHugePages over the mapping, -1 unknown */
};

static struct dev devs[MAX_DEVS];
static int nr_devs;
static struct cell cells[NR_SIZES][NR_BACKINGS][MAX_DEVS];
static double scale = 1.0;
static double cell_cap = 10.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* AnonHugePages of the VMAs overlapping [start, start + len), in kB. */
static long long anon_huge_kb(const void *start, size_t len)
{
	unsigned long lo, hi, s = (uintptr_t)start, e = s + len;
	long long kb, total = 0;
	int in = 0, found = 0;
	char line[4096], perms[8];
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
			in = lo < e && hi > s;
			found |= in;
		} else if (in && sscanf(line, "AnonHugePages: %lld kB", &kb) == 1) {
			total += kb;
		}
	}
	fclose(f);
	return found ? total : -1;
}

/*
 * Map @size bytes: 4 KiB pages (MADV_NOHUGEPAGE), or 2 MiB aligned and
 * rounded up to 2 MiB with MADV_HUGEPAGE, so a THP can back even the
 * small sizes. Every page is written once, so registration pins present
 * pages and never faults them in.
 */
static void buffer_map(struct buffer *b, uint64_t size, enum backing bk)
{
	size_t len = size, off;
	uint8_t *p;

	memset(b, 0, sizeof(*b));
	b->huge_kb = -1;
	if (bk == BACKING_THP)
		len = (size + HPAGE - 1) & ~(HPAGE - 1);
	p = mmap(NULL, len + (bk == BACKING_THP ? HPAGE : 0),
		 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		b->err = -errno;
		b->what = "mmap";
		return;
	}
	if (bk == BACKING_THP) {
		/* Trim to a 2 MiB aligned [p, p + len). */
		off = (HPAGE - ((uintptr_t)p & (HPAGE - 1))) & (HPAGE - 1);
		if (off)
			munmap(p, off);
		munmap(p + off + len, HPAGE - off);
		p += off;
	}
	b->map = p;
	b->map_len = len;
	if (madvise(p, len, bk == BACKING_THP ? MADV_HUGEPAGE :
					       MADV_NOHUGEPAGE)) {
		b->err = -errno;
		b->what = bk == BACKING_THP ? "madvise(MADV_HUGEPAGE)" :
					      "madvise(MADV_NOHUGEPAGE)";
		return;
	}
	for (off = 0; off < len; off += PAGE)
		p[off] = (uint8_t)(off / PAGE) | 1;
	b->huge_kb = anon_huge_kb(p, len);
}

static void buffer_unmap(struct buffer *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	b->map = NULL;
}

/*
 * One round: register [buf, buf + len) with iova = va, optionally have the
 * device read zero bytes through the key, deregister. On failure *what
 * names the call; after a failed DEREG the MR stays until close().
 */
static int reg_round(int fd, void *buf, uint64_t len, struct mrct_reg *reg,
		     int *probe, const char **what)
{
	struct mrct_dereg dereg = {};
	struct mrct_xfer x = {};
	int err;

	memset(reg, 0, sizeof(*reg));
	reg->addr = (uintptr_t)buf;
	reg->length = len;
	reg->iova = (uintptr_t)buf;
	reg->access = ACCESS;
	err = xioctl(fd, MRCT_REG, reg);
	if (err) {
		*what = "REG";
		return err;
	}
	if (probe) {
		x.handle = reg->handle;
		*probe = xioctl(fd, MRCT_DEV_READ, &x);
	}
	dereg.handle = reg->handle;
	err = xioctl(fd, MRCT_DEREG, &dereg);
	if (err)
		*what = "DEREG";
	return err;
}

static unsigned int rounds_for(const struct bench_size *sz)
{
	double n = sz->rounds * scale + 0.5;

	return n < 1 ? 1 : n > 1e7 ? 10000000 : (unsigned int)n;
}

/* Warm up, then time the rounds of one cell. */
static void measure(struct cell *c, const struct dev *d, const struct buffer *b,
		    const struct bench_size *sz)
{
	unsigned int n = rounds_for(sz), i;
	struct mrct_reg reg;
	double t0, t1, start, sum = 0;
	double *samples;
	int err, probe;

	memset(c, 0, sizeof(*c));
	if (d->err) {
		c->err = d->err;
		c->what = d->what;
		return;
	}
	if (b->err) {
		c->err = b->err;
		c->what = b->what;
		return;
	}
	samples = calloc(n, sizeof(*samples));
	if (!samples) {
		c->err = -ENOMEM;
		c->what = "calloc";
		return;
	}

	err = reg_round(d->fd, b->map, sz->bytes, &reg, &probe, &c->what);
	if (err)
		goto out;
	c->info = reg.info;
	if (!probe) {
		c->vhca = 1;
	} else if (probe != -EOPNOTSUPP) {
		err = probe;
		c->what = "DEV_READ of 0 bytes through the key";
		goto out;
	}

	start = now();
	t1 = start;
	for (i = 0; i < n && !err; i++) {
		t0 = now();
		err = reg_round(d->fd, b->map, sz->bytes, &reg, NULL, &c->what);
		t1 = now();
		samples[i] = (t1 - t0) * 1e6;
		sum += samples[i];
		c->rounds = i + 1;
		if (t1 - start > cell_cap)
			break;
	}
	if (err) {
		c->timed = 1;
		c->rounds--;
		goto out;
	}
	c->secs = t1 - start;
	c->mean_us = sum / c->rounds;
	c->median_us = median(samples, c->rounds);
	c->mbps = c->secs > 0 ? sz->bytes * (double)c->rounds / c->secs / 1e6 : 0;
	c->measured = 1;
out:
	c->err = err;
	free(samples);
}

/* "4 KiB" for a page shift; "-" for none. */
static const char *shift_name(unsigned int shift, char *buf, size_t len)
{
	if (!shift)
		snprintf(buf, len, "-");
	else if (shift >= 30)
		snprintf(buf, len, "%llu GiB", 1ULL << (shift - 30));
	else if (shift >= 20)
		snprintf(buf, len, "%llu MiB", 1ULL << (shift - 20));
	else if (shift >= 10)
		snprintf(buf, len, "%llu KiB", 1ULL << (shift - 10));
	else
		snprintf(buf, len, "%llu B", 1ULL << shift);
	return buf;
}

/* The translation of a vhca cell: "512" and "2 MiB", or KLM or PA. */
static void xlt_cells(const struct cell *c, char *entries, char *page,
		      size_t len)
{
	if (!c->measured || !c->vhca) {
		snprintf(entries, len, "-");
		snprintf(page, len, "-");
		return;
	}
	switch (c->info.mode) {
	case MRCT_MODE_MTT:
		snprintf(entries, len, "%u", c->info.entries);
		shift_name(c->info.page_shift, page, len);
		break;
	case MRCT_MODE_KLM:
		snprintf(entries, len, "%u KLM", c->info.entries);
		snprintf(page, len, "mixed");
		break;
	default:
		snprintf(entries, len, "0");
		snprintf(page, len, "PA");
		break;
	}
}

static void print_cell(const struct bench_size *sz, enum backing bk,
		       const struct dev *d, const struct cell *c)
{
	char entries[32], page[32];

	printf("bench: %s %s %s: ", sz->name, backing_names[bk], d->name);
	if (!c->measured) {
		printf("FAILED: %s: %s (%s)", c->what, strerror(-c->err),
		       errname(c->err));
		if (c->timed)
			printf(" after %u timed rounds", c->rounds);
		else if (!strcmp(c->what, "REG") || !strcmp(c->what, "DEREG"))
			printf(" in the warm-up round");
		printf("\n");
		return;
	}
	printf("%u rounds in %.2f s, median %.1f us, mean %.1f us, %.1f MB/s",
	       c->rounds, c->secs, c->median_us, c->mean_us, c->mbps);
	if (c->vhca) {
		xlt_cells(c, entries, page, sizeof(entries));
		printf(", %s entries of %s", entries, page);
	}
	printf("\n");
}

static void print_buffer(const struct bench_size *sz, enum backing bk,
			 const struct buffer *b)
{
	printf("bench: buffer %s %s: ", sz->name, backing_names[bk]);
	if (b->err) {
		printf("FAILED: %s: %s\n", b->what, strerror(-b->err));
		return;
	}
	if (b->huge_kb < 0)
		printf("mapped %zu kB, AnonHugePages unknown (no smaps entry)\n",
		       b->map_len >> 10);
	else
		printf("mapped %zu kB, AnonHugePages %lld kB (%.0f%%)\n",
		       b->map_len >> 10, b->huge_kb,
		       100.0 * (b->huge_kb << 10) / b->map_len);
}

/* A markdown table of string cells, padded to column width. */
#define MAX_COLS	(4 + 4 * MAX_DEVS)
#define MAX_ROWS	(1 + NR_SIZES * NR_BACKINGS)
#define CELL_LEN	48

struct table {
	char s[MAX_ROWS][MAX_COLS][CELL_LEN];
	int rows;
	int cols;
	int left;	/* columns before this one are left aligned */
};

static char *tcell(struct table *t, int row, int col)
{
	if (col + 1 > t->cols)
		t->cols = col + 1;
	if (row + 1 > t->rows)
		t->rows = row + 1;
	return t->s[row][col];
}

/* Characters of a UTF-8 string ("µ" is two bytes, one column). */
static int width(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void table_print(const struct table *t)
{
	int w[MAX_COLS], r, c, len, pad;

	for (c = 0; c < t->cols; c++) {
		w[c] = 3;
		for (r = 0; r < t->rows; r++) {
			len = width(t->s[r][c]);
			if (len > w[c])
				w[c] = len;
		}
	}
	for (r = 0; r < t->rows; r++) {
		for (c = 0; c < t->cols; c++) {
			pad = w[c] - width(t->s[r][c]);
			if (c < t->left)
				printf("| %s%*s ", t->s[r][c], pad, "");
			else
				printf("| %*s%s ", pad, "", t->s[r][c]);
		}
		printf("|\n");
		if (r)
			continue;
		for (c = 0; c < t->cols; c++)
			printf("|%.*s%s", w[c] + 1,
			       "------------------------------------------------",
			       c < t->left ? "-" : ":");
		printf("|\n");
	}
}

static void backing_cell(char *buf, enum backing bk, long long huge_kb,
			 size_t map_len)
{
	if (bk != BACKING_THP)
		snprintf(buf, CELL_LEN, "%s", backing_names[bk]);
	else if (huge_kb < 0)
		snprintf(buf, CELL_LEN, "thp (huge ?)");
	else
		snprintf(buf, CELL_LEN, "thp (%.0f%% huge)",
			 100.0 * (huge_kb << 10) / map_len);
}

static void num_cell(char *buf, const struct cell *c, double v)
{
	if (c->measured)
		snprintf(buf, CELL_LEN, "%.1f", v);
	else
		snprintf(buf, CELL_LEN, "FAILED (%s)", errname(c->err));
}

static struct table tab;
static long long huge_kbs[NR_SIZES][NR_BACKINGS];
static size_t map_lens[NR_SIZES][NR_BACKINGS];

/* Median round per device, ratio to the first, first device's translation. */
static void print_latency_table(void)
{
	const struct cell *c, *ref;
	unsigned int s, bk;
	int d, col, row;

	memset(&tab, 0, sizeof(tab));
	tab.left = 2;
	snprintf(tcell(&tab, 0, 0), CELL_LEN, "size");
	snprintf(tcell(&tab, 0, 1), CELL_LEN, "backing");
	col = 2;
	for (d = 0; d < nr_devs; d++)
		snprintf(tcell(&tab, 0, col++), CELL_LEN, "%s µs", devs[d].name);
	for (d = 1; d < nr_devs; d++)
		snprintf(tcell(&tab, 0, col++), CELL_LEN, "%s/%s", devs[d].name,
			 devs[0].name);
	snprintf(tcell(&tab, 0, col++), CELL_LEN, "%s entries", devs[0].name);
	snprintf(tcell(&tab, 0, col), CELL_LEN, "%s page size", devs[0].name);

	row = 1;
	for (s = 0; s < NR_SIZES; s++) {
		for (bk = 0; bk < NR_BACKINGS; bk++, row++) {
			ref = &cells[s][bk][0];
			snprintf(tcell(&tab, row, 0), CELL_LEN, "%s", sizes[s].name);
			backing_cell(tcell(&tab, row, 1), bk, huge_kbs[s][bk],
				     map_lens[s][bk]);
			col = 2;
			for (d = 0; d < nr_devs; d++) {
				c = &cells[s][bk][d];
				num_cell(tcell(&tab, row, col++), c, c->median_us);
			}
			for (d = 1; d < nr_devs; d++) {
				c = &cells[s][bk][d];
				if (c->measured && ref->measured && ref->median_us > 0)
					snprintf(tcell(&tab, row, col), CELL_LEN,
						 "%.2f", c->median_us / ref->median_us);
				else
					snprintf(tcell(&tab, row, col), CELL_LEN, "-");
				col++;
			}
			xlt_cells(ref, tcell(&tab, row, col),
				  tcell(&tab, row, col + 1), CELL_LEN);
		}
	}
	table_print(&tab);
}

/* Rounds, mean round and throughput per device. */
static void print_throughput_table(void)
{
	const struct cell *c;
	unsigned int s, bk;
	int d, col, row;

	memset(&tab, 0, sizeof(tab));
	tab.left = 2;
	snprintf(tcell(&tab, 0, 0), CELL_LEN, "size");
	snprintf(tcell(&tab, 0, 1), CELL_LEN, "backing");
	col = 2;
	for (d = 0; d < nr_devs; d++) {
		snprintf(tcell(&tab, 0, col++), CELL_LEN, "%s rounds", devs[d].name);
		snprintf(tcell(&tab, 0, col++), CELL_LEN, "%s mean µs", devs[d].name);
		snprintf(tcell(&tab, 0, col++), CELL_LEN, "%s MB/s", devs[d].name);
	}
	row = 1;
	for (s = 0; s < NR_SIZES; s++) {
		for (bk = 0; bk < NR_BACKINGS; bk++, row++) {
			snprintf(tcell(&tab, row, 0), CELL_LEN, "%s", sizes[s].name);
			backing_cell(tcell(&tab, row, 1), bk, huge_kbs[s][bk],
				     map_lens[s][bk]);
			col = 2;
			for (d = 0; d < nr_devs; d++) {
				c = &cells[s][bk][d];
				snprintf(tcell(&tab, row, col++), CELL_LEN, "%u",
					 c->rounds);
				num_cell(tcell(&tab, row, col++), c, c->mean_us);
				num_cell(tcell(&tab, row, col++), c, c->mbps);
			}
		}
	}
	table_print(&tab);
}

/* The targets, as information: timing under TCG is not a test. */
static void print_targets(void)
{
	const struct cell *c, *ref;
	unsigned int s, bk, met, both;
	int d;

	for (d = 1; d < nr_devs; d++) {
		met = 0;
		both = 0;
		for (s = 0; s < NR_SIZES; s++) {
			for (bk = 0; bk < NR_BACKINGS; bk++) {
				ref = &cells[s][bk][0];
				c = &cells[s][bk][d];
				if (!ref->measured || !c->measured)
					continue;
				both++;
				if (ref->median_us <= c->median_us)
					met++;
			}
		}
		printf("bench: target %s no slower than %s (median): %u of %u cells\n",
		       devs[0].name, devs[d].name, met, both);
	}
	s = NR_SIZES - 1;
	ref = &cells[s][BACKING_THP][0];
	if (sizes[s].bytes == 1ULL << 30 && ref->measured && ref->vhca)
		printf("bench: target %s 1 GiB thp at most 512 entries: %u (%s)\n",
		       devs[0].name, ref->info.entries,
		       ref->info.entries <= 512 ? "met" : "not met");
}

static void bad_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-s SCALE] [-t SECONDS] DEV...\n"
		"  -s SCALE    multiply every size's rounds by SCALE (default 1)\n"
		"  -t SECONDS  end a cell's timed loop after SECONDS (default 10)\n",
		prog);
	exit(2);
}

static void print_header(void)
{
	char thp[128] = "unknown";
	unsigned int s;
	FILE *f;
	int d;

	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (fgets(thp, sizeof(thp), f))
			thp[strcspn(thp, "\n")] = 0;
		fclose(f);
	}
	printf("bench: mr_bench: user MR REG+DEREG rounds through /dev/%s on",
	       MRCT_DEV_NAME);
	for (d = 0; d < nr_devs; d++)
		printf(" %s", devs[d].name);
	printf("; THP %s\n", thp);
	printf("bench: rounds (scale %g):", scale);
	for (s = 0; s < NR_SIZES; s++)
		printf(" %s %u%s", sizes[s].name, rounds_for(&sizes[s]),
		       s + 1 < NR_SIZES ? "," : "");
	printf("; a cell's timed loop ends after %g s\n", cell_cap);
}

static void open_devices(void)
{
	struct mrct_set_device sd;
	int d;

	for (d = 0; d < nr_devs; d++) {
		devs[d].fd = open("/dev/" MRCT_DEV_NAME, O_RDWR);
		if (devs[d].fd < 0) {
			devs[d].err = -errno;
			devs[d].what = "open /dev/" MRCT_DEV_NAME;
			printf("bench: %s: open /dev/%s: %s\n", devs[d].name,
			       MRCT_DEV_NAME, strerror(errno));
			continue;
		}
		memset(&sd, 0, sizeof(sd));
		snprintf(sd.name, sizeof(sd.name), "%s", devs[d].name);
		devs[d].err = xioctl(devs[d].fd, MRCT_SET_DEVICE, &sd);
		devs[d].what = "MRCT_SET_DEVICE";
		if (devs[d].err)
			printf("bench: %s: MRCT_SET_DEVICE: %s\n", devs[d].name,
			       strerror(-devs[d].err));
	}
}

int main(int argc, char **argv)
{
	unsigned int s, bk, failed = 0, total = 0;
	char first[160] = "";
	struct buffer b;
	struct cell *c;
	char *end;
	int opt, d;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "s:t:h")) != -1) {
		switch (opt) {
		case 's':
			scale = strtod(optarg, &end);
			if (*end || !(scale > 0))
				bad_usage(argv[0]);
			break;
		case 't':
			cell_cap = strtod(optarg, &end);
			if (*end || !(cell_cap > 0))
				bad_usage(argv[0]);
			break;
		default:
			bad_usage(argv[0]);
		}
	}
	if (optind == argc || argc - optind > MAX_DEVS)
		bad_usage(argv[0]);
	for (d = 0; optind < argc; d++)
		devs[d].name = argv[optind++];
	nr_devs = d;

	print_header();
	open_devices();

	/* One buffer at a time: a 1 GiB one is unmapped before the next. */
	for (s = 0; s < NR_SIZES; s++) {
		for (bk = 0; bk < NR_BACKINGS; bk++) {
			buffer_map(&b, sizes[s].bytes, bk);
			print_buffer(&sizes[s], bk, &b);
			huge_kbs[s][bk] = b.err ? -1 : b.huge_kb;
			map_lens[s][bk] = b.map_len;
			for (d = 0; d < nr_devs; d++) {
				c = &cells[s][bk][d];
				measure(c, &devs[d], &b, &sizes[s]);
				print_cell(&sizes[s], bk, &devs[d], c);
				total++;
				if (c->measured)
					continue;
				if (!failed++)
					snprintf(first, sizeof(first),
						 "%s %s %s: %s: %s", sizes[s].name,
						 backing_names[bk], devs[d].name,
						 c->what, errname(c->err));
			}
			buffer_unmap(&b);
		}
	}
	for (d = 0; d < nr_devs; d++)
		if (devs[d].fd >= 0)
			close(devs[d].fd);

	printf("bench: user MR REG+DEREG round, median µs;");
	printf(" ratio = device / %s (above 1: %s faster)\n", devs[0].name,
	       devs[0].name);
	printf("bench: entries and page size: %s's translation from the REG reply\n",
	       devs[0].name);
	print_latency_table();
	printf("bench: rounds timed, mean round and throughput (size x rounds / time)\n");
	print_throughput_table();
	print_targets();

	if (failed) {
		printf("not ok - bench: reg/dereg figures measured # ");
		printf("%u of %u cells failed, first %s\n", failed, total,
		       first);
		return 1;
	}
	printf("ok - bench: reg/dereg figures measured\n");
	return 0;
}
