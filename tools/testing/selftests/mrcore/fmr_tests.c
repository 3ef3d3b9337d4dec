// SPDX-License-Identifier: GPL-2.0
/*
 * FMR pools on vhca, end to end, through /dev/mrcore_test.
 *
 * The module owns a buffer of kernel pages, DMA-mapped on the device; a
 * pool maps lists of those pages (by index) at an iova, and the vhca
 * *device* reads or writes through the key it returns, resolving it with
 * the context and translation entries in its own memory. The bytes are
 * checked against what the CPU wrote into (or reads back from) the pages.
 * Then the key's life: a cache hit gives the same key, an unmapped FMR of
 * a non-strict pool still works until a flush, a strict pool's does not,
 * a remapped FMR's earlier key is dead, max_remaps sends an FMR to the
 * dirty list and the watermark's worker flushes it, an exhausted pool
 * says -EAGAIN.
 *
 * "fmr_tests --bench [-t SECONDS] [DEVICE]" instead times pool map +
 * unmap cycles that hit the cache and cycles that miss it, and prints the
 * rates and the miss/hit cost ratio.
 *
 * The device is vhca0 unless MRCT_DEVICE (or the bench's argument) names
 * another.
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
#include <sys/ioctl.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"

#define PAGE		4096U
#define LRW		(MRCT_ACCESS_LOCAL_WRITE | MRCT_ACCESS_REMOTE_READ | \
			 MRCT_ACCESS_REMOTE_WRITE)
#define IOVA		0x7000200ULL	/* 0x200 into a page */
/* How long the flush worker may take to make progress: a minute. */
#define FLUSH_WAIT_S	60

static int ft_pool(int fd, uint32_t size, uint32_t max_pages,
		   uint32_t max_remaps, uint32_t watermark, uint32_t flags,
		   uint32_t *handle)
{
	struct mrct_fmr_pool_create c = {
		.pool_size = size,
		.max_pages = max_pages,
		.max_remaps = max_remaps,
		.dirty_watermark = watermark,
		.access = LRW,
		.flags = flags,
	};
	int err;

	err = mt_ioctl(fd, MRCT_FMR_POOL_CREATE, &c);
	*handle = c.handle;
	return err;
}

static int ft_handle(int fd, unsigned long req, uint32_t handle)
{
	struct mrct_fmr_handle h = { .handle = handle };

	return mt_ioctl(fd, req, &h);
}

/* Map buffer pages @pages[0 .. n) at @iova; @m gets key and length. */
static int ft_map(int fd, uint32_t pool, const uint32_t *pages, uint32_t n,
		  uint64_t iova, struct mrct_fmr_map *m)
{
	memset(m, 0, sizeof(*m));
	m->pool = pool;
	m->npages = n;
	m->iova = iova;
	memcpy(m->pages, pages, n * sizeof(*pages));
	return mt_ioctl(fd, MRCT_FMR_MAP, m);
}

static int ft_unmap(int fd, const struct mrct_fmr_map *m)
{
	return ft_handle(fd, MRCT_FMR_UNMAP, m->handle);
}

static struct mrct_fmr_stats ft_stats(int fd, uint32_t pool)
{
	struct mrct_fmr_stats st = { .pool = pool };

	if (mt_ioctl(fd, MRCT_FMR_STATS, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

static int ft_buf(int fd, unsigned long req, uint32_t offset, void *buf,
		  uint32_t len)
{
	struct mrct_fmr_buf b = {
		.ptr = (uintptr_t)buf,
		.offset = offset,
		.length = len,
	};

	return mt_ioctl(fd, req, &b);
}

/* The device moves @len bytes through @key at @iova, on PD 0. */
static int ft_dev(int fd, unsigned long req, uint32_t key, uint64_t iova,
		  void *buf, uint64_t len)
{
	struct mrct_xfer x = {
		.iova = iova,
		.length = len,
		.ptr = (uintptr_t)buf,
		.key = key,
		.flags = MRCT_XFER_RAW_KEY,
	};

	return mt_ioctl(fd, req, &x);
}

static uint8_t ft_byte(uint32_t page, uint32_t off, uint32_t seed)
{
	return (page * 131 + off * 7 + seed * 29 + (off >> 8)) & 0xff;
}

/* Fill every buffer page with its own pattern. */
static int ft_fill(int fd, uint32_t seed)
{
	static uint8_t buf[MRCT_FMR_BUF_PAGES * PAGE];
	uint32_t p, i;

	for (p = 0; p < MRCT_FMR_BUF_PAGES; p++)
		for (i = 0; i < PAGE; i++)
			buf[p * PAGE + i] = ft_byte(p, i, seed);
	return ft_buf(fd, MRCT_FMR_BUF_WRITE, 0, buf, sizeof(buf));
}

/* Where byte @i of a mapping of @pages at @iova lives, as its pattern. */
static uint8_t ft_expect(const uint32_t *pages, uint64_t iova, uint64_t i,
			 uint32_t seed)
{
	uint64_t pos = (iova & (PAGE - 1)) + i;

	return ft_byte(pages[pos / PAGE], pos % PAGE, seed);
}

/* The device reads the whole mapping; the first wrong byte or -1. */
static long ft_check_read(int fd, const struct mrct_fmr_map *m,
			  const uint32_t *pages, uint32_t seed, int *err)
{
	uint8_t *buf = malloc(m->length);
	long bad = -1;
	uint64_t i;

	*err = buf ? ft_dev(fd, MRCT_DEV_READ, m->key, m->iova, buf,
			    m->length) : -ENOMEM;
	for (i = 0; !*err && i < m->length; i++) {
		if (buf[i] != ft_expect(pages, m->iova, i, seed)) {
			bad = i;
			break;
		}
	}
	free(buf);
	return bad;
}

static double ft_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Poll until the worker has flushed and left nothing dirty; -ETIMEDOUT
 * when it has not within FLUSH_WAIT_S.
 */
static int ft_wait_flushed(int fd, uint32_t pool, uint64_t flushes)
{
	double deadline = ft_now() + FLUSH_WAIT_S;
	struct mrct_fmr_stats st;

	for (;;) {
		st = ft_stats(fd, pool);
		if (st.flushes > flushes && !st.dirty)
			return 0;
		if (ft_now() > deadline)
			return -ETIMEDOUT;
		usleep(10000);
	}
}

static const uint32_t list_a[] = { 5, 2, 9 };
static const uint32_t list_b[] = { 7, 8 };
#define NA	ARRAY_SIZE(list_a)
#define NB	ARRAY_SIZE(list_b)

FIXTURE(fmr)
{
	int fd;
	uint32_t pool;
};

FIXTURE_SETUP(fmr)
{
	self->pool = 0;
	self->fd = mt_open(mt_devname());
	if (self->fd < 0)
		TH_LOG("cannot open /dev/%s on %s: %s (is mrcore_test loaded?)",
		       MRCT_DEV_NAME, mt_devname(), strerror(-self->fd));
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ft_fill(self->fd, 1));
}

FIXTURE_TEARDOWN(fmr)
{
	/* Closing the file gives back mappings and destroys the pools. */
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
}

TEST_F(fmr, device_reads_mapped_pages)
{
	struct mrct_fmr_map m;
	int err;

	ASSERT_EQ(0, ft_pool(self->fd, 4, 8, 4, 4, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m));
	/* From 0x200 into the first page to the end of the last. */
	ASSERT_EQ(NA * PAGE - 0x200, m.length);
	EXPECT_EQ(-1, ft_check_read(self->fd, &m, list_a, 1, &err));
	EXPECT_EQ(0, err);
	/* Past the end is out of range. */
	EXPECT_EQ(-ERANGE, ft_dev(self->fd, MRCT_DEV_READ, m.key,
				  m.iova + m.length - 1, &err, 2));
	EXPECT_EQ(0, ft_unmap(self->fd, &m));
}

TEST_F(fmr, device_write_seen_by_cpu)
{
	uint8_t in[5000], out[2 * PAGE];
	struct mrct_fmr_map m;
	unsigned int i;

	ASSERT_EQ(0, ft_pool(self->fd, 4, 8, 4, 4, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_b, NB, 0x40000, &m));
	for (i = 0; i < sizeof(in); i++)
		in[i] = i * 13 + 5;
	ASSERT_EQ(0, ft_dev(self->fd, MRCT_DEV_WRITE, m.key, 0x40000 + 100,
			    in, sizeof(in)));

	/* Pages 7 and 8 hold the bytes from offset 100 on. */
	ASSERT_EQ(0, ft_buf(self->fd, MRCT_FMR_BUF_READ, 7 * PAGE, out,
			    sizeof(out)));
	EXPECT_EQ(0, memcmp(out + 100, in, sizeof(in)));
	EXPECT_EQ(ft_byte(7, 99, 1), out[99]);
	EXPECT_EQ(ft_byte(8, 100 + sizeof(in) - PAGE, 1),
		  out[100 + sizeof(in)]);
	EXPECT_EQ(0, ft_unmap(self->fd, &m));
}

TEST_F(fmr, cache_hit_same_key)
{
	struct mrct_fmr_map m1, m2;
	struct mrct_fmr_stats st;
	int err;

	ASSERT_EQ(0, ft_pool(self->fd, 4, 8, 4, 4, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m1));
	ASSERT_EQ(0, ft_unmap(self->fd, &m1));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m2));

	/* The same key, still reading the right bytes. */
	EXPECT_EQ(m1.key, m2.key);
	EXPECT_EQ(-1, ft_check_read(self->fd, &m2, list_a, 1, &err));
	EXPECT_EQ(0, err);
	st = ft_stats(self->fd, self->pool);
	EXPECT_EQ(1, st.hits);
	EXPECT_EQ(1, st.misses);
	EXPECT_EQ(0, ft_unmap(self->fd, &m2));
}

TEST_F(fmr, unmapped_key_valid_until_flush)
{
	struct mrct_fmr_map m;
	uint8_t b;
	int err;

	ASSERT_EQ(0, ft_pool(self->fd, 4, 8, 4, 4, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m));
	ASSERT_EQ(0, ft_unmap(self->fd, &m));

	/* The trade-off: unmapped, cached, and the device still reads. */
	EXPECT_EQ(-1, ft_check_read(self->fd, &m, list_a, 1, &err));
	EXPECT_EQ(0, err);

	/* The flush ends it, and calls the flush function. */
	ASSERT_EQ(0, ft_handle(self->fd, MRCT_FMR_FLUSH, self->pool));
	EXPECT_EQ(-ENOKEY, ft_dev(self->fd, MRCT_DEV_READ, m.key, m.iova,
				  &b, 1));
	EXPECT_EQ(1, ft_stats(self->fd, self->pool).flush_calls);
	EXPECT_EQ(1, ft_stats(self->fd, self->pool).flushed);
}

TEST_F(fmr, strict_unmap_kills_key)
{
	struct mrct_fmr_map m;
	uint8_t b;

	ASSERT_EQ(0, ft_pool(self->fd, 4, 8, 4, 4,
			     MRCT_FMR_CACHE | MRCT_FMR_STRICT, &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m));
	EXPECT_EQ(0, ft_dev(self->fd, MRCT_DEV_READ, m.key, m.iova, &b, 1));
	ASSERT_EQ(0, ft_unmap(self->fd, &m));

	/* No window: the key is dead when the unmap returns. */
	EXPECT_EQ(-ENOKEY, ft_dev(self->fd, MRCT_DEV_READ, m.key, m.iova,
				  &b, 1));
	EXPECT_EQ(1, ft_stats(self->fd, self->pool).strict_unmaps);
}

TEST_F(fmr, remap_makes_earlier_key_stale)
{
	struct mrct_fmr_map m1, m2;
	uint8_t b;
	int err;

	/* One FMR: the second list remaps it. */
	ASSERT_EQ(0, ft_pool(self->fd, 1, 8, 4, 1, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m1));
	ASSERT_EQ(0, ft_unmap(self->fd, &m1));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_b, NB, 0x90000, &m2));

	/* Same slot, new variant: the earlier key finds nothing. */
	EXPECT_EQ(m1.key >> 8, m2.key >> 8);
	EXPECT_NE(m1.key, m2.key);
	EXPECT_EQ(-ENOKEY, ft_dev(self->fd, MRCT_DEV_READ, m1.key, m1.iova,
				  &b, 1));
	EXPECT_EQ(-1, ft_check_read(self->fd, &m2, list_b, 1, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(1, ft_stats(self->fd, self->pool).remaps);
	EXPECT_EQ(0, ft_unmap(self->fd, &m2));
}

/* The harness's own timeout above the worker's FLUSH_WAIT_S. */
TEST_F_TIMEOUT(fmr, remap_limit_then_worker_flush, 2 * FLUSH_WAIT_S)
{
	struct mrct_fmr_map m1, m2;
	struct mrct_fmr_stats st;
	uint8_t b;

	/* One map per FMR between flushes; two dirty wake the worker. */
	ASSERT_EQ(0, ft_pool(self->fd, 2, 8, 1, 2, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m1));
	ASSERT_EQ(0, ft_unmap(self->fd, &m1));
	st = ft_stats(self->fd, self->pool);
	EXPECT_EQ(1, st.dirty);
	EXPECT_EQ(0, st.flushes);
	/* Dirty but not yet flushed: the key still works. */
	EXPECT_EQ(0, ft_dev(self->fd, MRCT_DEV_READ, m1.key, m1.iova, &b, 1));

	/* A dirty FMR is no cache hit: the same list maps the other one. */
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m2));
	EXPECT_NE(m1.key, m2.key);
	EXPECT_EQ(0, ft_stats(self->fd, self->pool).hits);
	ASSERT_EQ(0, ft_unmap(self->fd, &m2));

	ASSERT_EQ(0, ft_wait_flushed(self->fd, self->pool, 0))
		TH_LOG("the watermark's worker flushed nothing in %d s",
		       FLUSH_WAIT_S);
	st = ft_stats(self->fd, self->pool);
	EXPECT_EQ(2, st.flushed);
	EXPECT_EQ(2, st.free);
	EXPECT_LE(1, st.flush_calls);
	EXPECT_EQ(-ENOKEY, ft_dev(self->fd, MRCT_DEV_READ, m1.key, m1.iova,
				  &b, 1));
	EXPECT_EQ(-ENOKEY, ft_dev(self->fd, MRCT_DEV_READ, m2.key, m2.iova,
				  &b, 1));
}

TEST_F(fmr, pool_exhausted_eagain)
{
	struct mrct_fmr_map a, b, c;

	ASSERT_EQ(0, ft_pool(self->fd, 2, 8, 4, 2, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &a));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_b, NB, 0x90000, &b));
	EXPECT_EQ(-EAGAIN, ft_map(self->fd, self->pool, list_a, NA, 0xa0200,
				  &c));
	EXPECT_EQ(1, ft_stats(self->fd, self->pool).exhausted);

	/* One given back: the map succeeds. */
	ASSERT_EQ(0, ft_unmap(self->fd, &a));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, 0xa0200, &c));
	EXPECT_EQ(0, ft_unmap(self->fd, &c));
	EXPECT_EQ(0, ft_unmap(self->fd, &b));
}

TEST_F(fmr, bad_arguments_einval)
{
	uint32_t five[] = { 0, 1, 2, 3, 4 };
	struct mrct_fmr_pool_create c = {
		.pool_size = 4, .max_pages = 8, .max_remaps = 4,
		.dirty_watermark = 0, .access = LRW,
	};
	struct mrct_fmr_map m;

	/* Pool parameters, checked by mrcore. */
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_FMR_POOL_CREATE, &c));
	c.dirty_watermark = 5;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_FMR_POOL_CREATE, &c));
	c.dirty_watermark = 4;
	c.access = LRW | MRCT_ACCESS_ZERO_BASED;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_FMR_POOL_CREATE, &c));
	c.access = MRCT_ACCESS_REMOTE_WRITE;
	EXPECT_EQ(-EINVAL, mt_ioctl(self->fd, MRCT_FMR_POOL_CREATE, &c));

	/* Page lists: empty, longer than the pool's FMRs. */
	ASSERT_EQ(0, ft_pool(self->fd, 2, 4, 4, 2, MRCT_FMR_CACHE,
			     &self->pool));
	EXPECT_EQ(-EINVAL, ft_map(self->fd, self->pool, five, 0, IOVA, &m));
	EXPECT_EQ(-EINVAL, ft_map(self->fd, self->pool, five, 5, IOVA, &m));
	EXPECT_EQ(0, ft_stats(self->fd, self->pool).in_use);
}

TEST_F(fmr, destroy_busy_then_keys_dead)
{
	struct mrct_fmr_map m;
	uint8_t b;

	ASSERT_EQ(0, ft_pool(self->fd, 2, 8, 4, 2, MRCT_FMR_CACHE,
			     &self->pool));
	ASSERT_EQ(0, ft_map(self->fd, self->pool, list_a, NA, IOVA, &m));
	EXPECT_EQ(-EBUSY, ft_handle(self->fd, MRCT_FMR_POOL_DESTROY,
				    self->pool));
	ASSERT_EQ(0, ft_unmap(self->fd, &m));
	/* Cached, still valid, until the pool goes. */
	EXPECT_EQ(0, ft_dev(self->fd, MRCT_DEV_READ, m.key, m.iova, &b, 1));
	ASSERT_EQ(0, ft_handle(self->fd, MRCT_FMR_POOL_DESTROY, self->pool));
	EXPECT_EQ(-ENOKEY, ft_dev(self->fd, MRCT_DEV_READ, m.key, m.iova,
				  &b, 1));
	EXPECT_EQ(-ENOENT, ft_handle(self->fd, MRCT_FMR_POOL_DESTROY,
				     self->pool));
}

/* ---- --bench ---- */

struct ft_rate {
	double per_s;
	double ns;
	unsigned long long cycles;
	unsigned long long sync_flushes;
};

static int ft_bench_one(int fd, uint32_t pool, uint32_t mode, uint32_t npages,
			double secs, struct ft_rate *r)
{
	struct mrct_fmr_bench b = {
		.min_ns = (uint64_t)(secs * 1e9),
		.pool = pool,
		.npages = npages,
		.mode = mode,
	};
	int err;

	err = mt_ioctl(fd, MRCT_FMR_BENCH, &b);
	if (err || !b.cycles || !b.elapsed_ns)
		return err ? err : -EIO;
	r->cycles = b.cycles;
	r->sync_flushes = b.sync_flushes;
	r->ns = (double)b.elapsed_ns / b.cycles;
	r->per_s = 1e9 / r->ns;
	return 0;
}

static int ft_bench(const char *dev, double secs)
{
	const uint32_t npages = 8, size = 64, remaps = 32, wm = 32;
	struct ft_rate hit, miss;
	uint32_t pool;
	int fd, err;

	printf("# fmr bench: %s, pool of %u FMRs, %u pages a map, ", dev, size,
	       npages);
	printf("max_remaps %u, watermark %u, cache on, %.1f s a mode\n",
	       remaps, wm, secs);
	fd = mt_open(dev);
	if (fd < 0) {
		printf("not ok - fmr bench: hit and miss rates measured # cannot open %s: %s\n",
		       dev, strerror(-fd));
		return 1;
	}
	err = ft_pool(fd, size, npages, remaps, wm, MRCT_FMR_CACHE, &pool);
	if (!err)
		err = ft_bench_one(fd, pool, MRCT_FMR_BENCH_HIT, npages, secs,
				   &hit);
	if (!err)
		err = ft_bench_one(fd, pool, MRCT_FMR_BENCH_MISS, npages, secs,
				   &miss);
	close(fd);
	if (err) {
		printf("not ok - fmr bench: hit and miss rates measured # %s\n",
		       strerror(-err));
		return 1;
	}

	printf("# %-6s %12s %14s %10s %8s\n", "mode", "cycles", "cycles/s",
	       "ns/cycle", "flushes");
	printf("# %-6s %12llu %14.0f %10.1f %8llu\n", "hit", hit.cycles,
	       hit.per_s, hit.ns, hit.sync_flushes);
	printf("# %-6s %12llu %14.0f %10.1f %8llu\n", "miss", miss.cycles,
	       miss.per_s, miss.ns, miss.sync_flushes);
	printf("# fmr bench: a miss costs %.1fx a hit (target: at least 10x)\n",
	       miss.ns / hit.ns);
	printf("ok - fmr bench: hit and miss rates measured\n");
	return 0;
}

/* TEST_HARNESS_MAIN's constructor, for a main() of our own. */
static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

int main(int argc, char **argv)
{
	double secs = 2.0;
	int opt;

	if (argc < 2 || strcmp(argv[1], "--bench"))
		return test_harness_run(argc, argv);

	optind = 2;
	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't' || atof(optarg) <= 0 || atof(optarg) > 10) {
			fprintf(stderr, "usage: %s --bench [-t SECONDS (0-10)] [DEVICE]\n",
				argv[0]);
			return 2;
		}
		secs = atof(optarg);
	}
	return ft_bench(optind < argc ? argv[optind] : mt_devname(), secs);
}
