// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore FMR pools (drivers/mrcore/fmr_pool.c) against
 * the fake backend; the FMRs themselves are tested in fmr_test.c, whose
 * context and helpers (fmr_test.h) this suite shares.
 *
 * mrcore_fmr_pool: creation and its unwinding, cache hits that write
 * nothing to the device, misses, LRU and second-chance reuse, parked
 * FMRs coming back, concurrent users, exhaustion, max_remaps and the
 * dirty list, the watermark waking the flush worker, explicit flushes,
 * strict pools, misuse and destruction.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <rdma/mrcore_fmr.h>

#include "fake_hw.h"
#include "fmr_test.h"

static void fmr_test_flush_fn(struct mrc_fmr_pool *pool, void *arg)
{
	struct fmr_test_ctx *ctx = arg;

	atomic_inc(&ctx->flush_calls);
	complete(&ctx->flushed);
}

static void fmr_pool_param(struct fmr_test_ctx *ctx,
			   struct mrc_fmr_pool_param *p, u32 size,
			   u32 max_remaps, u32 watermark, u32 flags)
{
	*p = (struct mrc_fmr_pool_param) {
		.pool_size = size,
		.max_pages_per_fmr = FMR_PAGES,
		.page_shift = 12,
		.access = LRW,
		.max_remaps = max_remaps,
		.dirty_watermark = watermark,
		.flags = flags,
		.flush_function = fmr_test_flush_fn,
		.flush_arg = ctx,
	};
}

static struct mrc_fmr_pool *fmr_pool(struct kunit *test, u32 size,
				     u32 max_remaps, u32 watermark, u32 flags)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_fmr_pool_param p;

	fmr_pool_param(ctx, &p, size, max_remaps, watermark, flags);
	ctx->pool = mrc_create_fmr_pool(&ctx->pd, &p);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->pool);
	return ctx->pool;
}

/* Pool maps go through here so .exit can give them back after a failure. */
static struct mrc_mr *pool_map(struct kunit *test, const u64 *pages,
			       u32 npages, u64 iova)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;
	unsigned int i;

	mr = mrc_fmr_pool_map_phys(ctx->pool, pages, npages, iova);
	if (IS_ERR(mr))
		return mr;
	for (i = 0; i < FMR_HELD; i++) {
		if (!ctx->held[i]) {
			ctx->held[i] = mr;
			return mr;
		}
	}
	KUNIT_FAIL(test, "more than %d pool maps held", FMR_HELD);
	return mr;
}

static struct mrc_mr *pool_map_a(struct kunit *test, u64 iova)
{
	struct mrc_mr *mr = pool_map(test, fmr_pages, FMR_NP, iova);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	return mr;
}

static int pool_unmap(struct kunit *test, struct mrc_mr *mr)
{
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int i;

	for (i = 0; i < FMR_HELD; i++) {
		if (ctx->held[i] == mr) {
			ctx->held[i] = NULL;
			break;
		}
	}
	return mrc_fmr_pool_unmap(mr);
}

static struct mrc_fmr_pool_stats pool_stats(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_fmr_pool_stats st;

	mrc_fmr_pool_get_stats(ctx->pool, &st);
	return st;
}

static void mrc_create_fmr_pool_all_free(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int mkeys = ctx->hw->calls[FAKE_HW_WRITE_MKEY];
	unsigned int xlts = ctx->hw->calls[FAKE_HW_WRITE_XLT];
	struct mrc_fmr_pool_stats st;

	fmr_pool(test, 4, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);

	/* Every FMR allocated up front: a FREE context each, no entries. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mrs_type[MRC_MR_FMR]),
			4);
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_WRITE_MKEY], mkeys + 4);
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_WRITE_XLT], xlts);
	st = pool_stats(test);
	KUNIT_EXPECT_EQ(test, st.free, 4U);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.dirty, 0U);

	KUNIT_EXPECT_EQ(test, mrc_destroy_fmr_pool(ctx->pool), 0);
	ctx->pool = NULL;
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

struct fmr_pool_case {
	const char *desc;
	u32 size;
	u32 max_pages;
	u8 page_shift;
	u32 access;
	u32 max_remaps;
	u32 watermark;
	u32 flags;
	int ret;
};

static const struct fmr_pool_case fmr_pool_cases[] = {
	{ "empty pool", 0, FMR_PAGES, 12, LW, 4, 1, 0, -EINVAL },
	{ "pool too big", MRC_FMR_POOL_MAX_SIZE + 1, FMR_PAGES, 12, LW, 4, 1,
	  0, -EINVAL },
	{ "no watermark", 4, FMR_PAGES, 12, LW, 4, 0, 0, -EINVAL },
	{ "watermark above the pool", 4, FMR_PAGES, 12, LW, 4, 5, 0,
	  -EINVAL },
	{ "unknown flag", 4, FMR_PAGES, 12, LW, 4, 1, BIT(5), -EINVAL },
	{ "no remaps", 4, FMR_PAGES, 12, LW, 0, 1, 0, -EINVAL },
	{ "more remaps than variants", 4, FMR_PAGES, 12, LW,
	  MRC_FMR_MAX_MAPS + 1, 1, 0, -EINVAL },
	{ "no pages", 4, 0, 12, LW, 4, 1, 0, -EINVAL },
	{ "page size not in the caps", 4, FMR_PAGES, 14, LW, 4, 1, 0,
	  -EINVAL },
	{ "zero based", 4, FMR_PAGES, 12, LW | MRC_ACCESS_ZERO_BASED, 4, 1, 0,
	  -EINVAL },
	{ "on demand", 4, FMR_PAGES, 12, LW | MRC_ACCESS_ON_DEMAND, 4, 1, 0,
	  -EOPNOTSUPP },
};

static void fmr_pool_desc(const struct fmr_pool_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fmr_pool, fmr_pool_cases, fmr_pool_desc);

static void mrc_create_fmr_pool_bad_params(struct kunit *test)
{
	const struct fmr_pool_case *c = test->param_value;
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	struct mrc_fmr_pool_param p = {
		.pool_size = c->size,
		.max_pages_per_fmr = c->max_pages,
		.page_shift = c->page_shift,
		.access = c->access,
		.max_remaps = c->max_remaps,
		.dirty_watermark = c->watermark,
		.flags = c->flags,
	};

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_create_fmr_pool(&ctx->pd, &p)),
			c->ret);
	/* Every parameter is checked before the first FMR exists. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_create_fmr_pool(&ctx->pd, NULL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_create_fmr_pool(NULL, &p)),
			-EINVAL);
}

static void mrc_create_fmr_pool_fail_unwinds(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int invs = ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY];
	struct mrc_fmr_pool_param p;

	/* The third FMR's context write fails: the first two go again. */
	fmr_pool_param(ctx, &p, 4, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 3);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_create_fmr_pool(&ctx->pd, &p)),
			-EIO);
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY],
			invs + 2);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));

	/* Translation space runs out part-way: -ENOSPC, nothing left. */
	p.pool_size = 64;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_create_fmr_pool(&ctx->pd, &p)),
			-ENOSPC);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_fmr_pool_map_phys_hit_writes_nothing(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_fmr_pool_stats st;
	struct mrc_mr *mr, *again;
	unsigned int mark;
	u32 key;

	fmr_pool(test, 4, FMR_MAPS, 4, MRC_FMR_POOL_CACHE);
	mr = pool_map_a(test, FMR_IOVA);
	key = mr->key;
	assert_mapped(test, key, FMR_IOVA);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);
	/* Unmapped but cached: the key still works on the device. */
	assert_mapped(test, key, FMR_IOVA);

	/* Same list and iova: the same FMR and key, no device op at all. */
	mark = ctx->hw->log_len;
	again = pool_map_a(test, FMR_IOVA);
	KUNIT_EXPECT_PTR_EQ(test, again, mr);
	KUNIT_EXPECT_EQ(test, again->key, key);
	/* A second user while in use: still nothing written. */
	KUNIT_EXPECT_PTR_EQ(test, pool_map_a(test, FMR_IOVA), mr);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);

	st = pool_stats(test);
	KUNIT_EXPECT_EQ(test, st.hits, 2ULL);
	KUNIT_EXPECT_EQ(test, st.misses, 1ULL);
	KUNIT_EXPECT_EQ(test, st.in_use, 1U);
	KUNIT_EXPECT_EQ(test, st.free, 3U);
	KUNIT_EXPECT_EQ(test, pool_unmap(test, mr), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(test).in_use, 1U);
	KUNIT_EXPECT_EQ(test, pool_unmap(test, mr), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(test).in_use, 0U);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
}

static void mrc_fmr_pool_map_phys_miss(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_fmr_pool_stats st;
	struct mrc_mr *mr;
	unsigned int mark;

	fmr_pool(test, 4, FMR_MAPS, 4, MRC_FMR_POOL_CACHE);
	mr = pool_map_a(test, FMR_IOVA);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);

	/* Another iova, or another list: a registration each. */
	mark = ctx->hw->log_len;
	mr = pool_map_a(test, FMR_IOVA + SZ_4K);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	assert_mapped(test, mr->key, FMR_IOVA + SZ_4K);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);
	mark = ctx->hw->log_len;
	mr = pool_map(test, fmr_pages_b, ARRAY_SIZE(fmr_pages_b), FMR_IOVA);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);

	st = pool_stats(test);
	KUNIT_EXPECT_EQ(test, st.hits, 0ULL);
	KUNIT_EXPECT_EQ(test, st.misses, 3ULL);
	KUNIT_EXPECT_EQ(test, st.remaps, 0ULL);
}

static void mrc_fmr_pool_map_phys_cache_off(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;
	unsigned int mark;

	fmr_pool(test, 2, FMR_MAPS, 2, 0);
	mr = pool_map_a(test, FMR_IOVA);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);

	/* Without the cache the same list is mapped again. */
	mark = ctx->hw->log_len;
	mr = pool_map_a(test, FMR_IOVA);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	KUNIT_EXPECT_EQ(test, pool_stats(test).hits, 0ULL);
	KUNIT_EXPECT_EQ(test, pool_stats(test).misses, 2ULL);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);
}

static void mrc_fmr_pool_map_phys_lru_remap(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *a, *b, *c;
	u32 key_a;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	key_a = a->key;
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	b = pool_map_a(test, 0x10200);
	KUNIT_EXPECT_PTR_NE(test, a, b);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);

	/* A miss remaps the FMR unmapped least recently: A's. */
	c = pool_map_a(test, 0x20200);
	KUNIT_EXPECT_PTR_EQ(test, c, a);
	KUNIT_EXPECT_NE(test, c->key, key_a);
	/* The cached mapping's key is stale: the device holds the new one. */
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key_a)->key, c->key);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, key_a));
	KUNIT_EXPECT_EQ(test, pool_stats(test).remaps, 1ULL);

	/* B is still cached; A's old mapping is not. */
	KUNIT_EXPECT_PTR_EQ(test, pool_map_a(test, 0x10200), b);
	KUNIT_EXPECT_EQ(test, pool_stats(test).hits, 1ULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, fmr_pages, FMR_NP,
					       FMR_IOVA)), -EAGAIN);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, c), 0);
}

static void mrc_fmr_pool_map_phys_exhausted(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *a, *b;
	unsigned int mark;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	b = pool_map_a(test, 0x10200);

	/* Both in use: -EAGAIN, nothing written. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, fmr_pages, FMR_NP,
					       0x20200)), -EAGAIN);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, pool_stats(test).exhausted, 1ULL);
	/* A hit on one in use still works. */
	KUNIT_EXPECT_PTR_EQ(test, pool_map_a(test, FMR_IOVA), a);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);
	/* One free again: the miss succeeds. */
	KUNIT_ASSERT_EQ(test, pool_unmap(test, pool_map_a(test, 0x20200)), 0);
}

static void mrc_fmr_pool_map_phys_bad_list(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	u64 bad[] = { 0x100800 };
	unsigned int mark;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, fmr_pages, 0, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, NULL, 1, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, fmr_pages,
					       FMR_PAGES + 1, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, bad, 1, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	/* The FMR the misaligned list took is free again. */
	KUNIT_EXPECT_EQ(test, pool_stats(test).free, 2U);
	KUNIT_EXPECT_EQ(test, pool_stats(test).in_use, 0U);
}

static void mrc_fmr_pool_map_phys_write_fails(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, fmr_pages, FMR_NP,
					       FMR_IOVA)), -EIO);
	KUNIT_EXPECT_EQ(test, pool_stats(test).free, 2U);
	KUNIT_EXPECT_EQ(test, pool_stats(test).misses, 0ULL);

	/* Not cached: the same list is a miss that now works. */
	KUNIT_ASSERT_EQ(test, pool_unmap(test, pool_map_a(test, FMR_IOVA)), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(test).misses, 1ULL);
}

static void mrc_fmr_pool_max_remaps_goes_dirty(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_fmr_pool_stats st;
	struct mrc_mr *a, *mr;
	unsigned int mark;
	u32 key;

	/* Two maps between flushes; the worker waits for three dirty. */
	fmr_pool(test, 3, 2, 3, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	mr = pool_map_a(test, 0x10200);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);
	mr = pool_map_a(test, 0x18200);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);
	/* The least recently unmapped is A's FMR: its second map. */
	mr = pool_map_a(test, 0x20200);
	KUNIT_ASSERT_PTR_EQ(test, mr, a);
	key = mr->key;

	/* Remapped max_remaps times: the last unmap makes it dirty. */
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);
	st = pool_stats(test);
	KUNIT_EXPECT_EQ(test, st.dirty, 1U);
	KUNIT_EXPECT_EQ(test, st.free, 2U);
	KUNIT_EXPECT_EQ(test, st.remaps, 1ULL);
	/* Still mapped (the trade-off), but no longer a cache hit. */
	assert_mapped(test, key, 0x20200);
	mark = ctx->hw->log_len;
	mr = pool_map_a(test, 0x20200);
	KUNIT_EXPECT_PTR_NE(test, mr, a);
	KUNIT_EXPECT_GT(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, pool_stats(test).hits, 0ULL);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, mr), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->flush_calls), 0);
}

static void mrc_fmr_pool_watermark_wakes_worker(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_fmr_pool_stats st;
	unsigned long left;
	struct mrc_mr *a, *b;
	u32 key_a, key_b;

	/* Every map dirties its FMR; the second dirty one wakes the worker. */
	fmr_pool(test, 3, 1, 2, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	b = pool_map_a(test, 0x10200);
	key_a = a->key;
	key_b = b->key;
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(test).dirty, 1U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->flush_calls), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);

	/* The worker unmaps both and calls the flush function. */
	left = wait_for_completion_timeout(&ctx->flushed,
					   msecs_to_jiffies(FMR_WAIT_MS));
	KUNIT_ASSERT_NE(test, left, 0UL);
	st = pool_stats(test);
	KUNIT_EXPECT_EQ(test, st.flushes, 1ULL);
	KUNIT_EXPECT_EQ(test, st.flushed, 2ULL);
	KUNIT_EXPECT_EQ(test, st.dirty, 0U);
	KUNIT_EXPECT_EQ(test, st.free, 3U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->flush_calls), 1);
	assert_free_ctx(test, a, key_a);
	assert_free_ctx(test, b, key_b);
}

static void mrc_flush_fmr_pool_unmaps_free(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct fake_hw *hw = ctx->hw;
	struct mrc_mr *a, *b, *busy;
	unsigned int mkeys, fences;
	u32 key_a, key_b;

	fmr_pool(test, 4, FMR_MAPS, 4, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	b = pool_map_a(test, 0x10200);
	busy = pool_map_a(test, 0x20200);
	key_a = a->key;
	key_b = b->key;
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);
	assert_mapped(test, key_a, FMR_IOVA);

	/* Both given back FMRs unmapped in one batch; the busy one kept. */
	mkeys = hw->calls[FAKE_HW_WRITE_MKEY];
	fences = hw->calls[FAKE_HW_FENCE];
	KUNIT_EXPECT_EQ(test, mrc_flush_fmr_pool(ctx->pool), 0);
	KUNIT_EXPECT_EQ(test, hw->calls[FAKE_HW_WRITE_MKEY], mkeys + 2);
	KUNIT_EXPECT_EQ(test, hw->calls[FAKE_HW_FENCE], fences + 1);
	assert_free_ctx(test, a, key_a);
	assert_free_ctx(test, b, key_b);
	assert_mapped(test, busy->key, 0x20200);
	/* Synchronous: the flush function has run. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->flush_calls), 1);
	KUNIT_EXPECT_EQ(test, pool_stats(test).flushed, 2ULL);

	/* The cache forgot them: the same list is a miss. */
	a = pool_map_a(test, FMR_IOVA);
	KUNIT_EXPECT_EQ(test, pool_stats(test).hits, 0ULL);
	KUNIT_EXPECT_EQ(test, pool_stats(test).misses, 4ULL);
	/* But the busy one's mapping still hits. */
	KUNIT_EXPECT_PTR_EQ(test, pool_map_a(test, 0x20200), busy);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, busy), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, busy), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
}

static void mrc_fmr_pool_strict_unmap_invalidates(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct fake_hw *hw = ctx->hw;
	unsigned int mkeys, fences, mark;
	struct mrc_mr *a;
	u32 key;

	fmr_pool(test, 2, FMR_MAPS, 2,
		 MRC_FMR_POOL_CACHE | MRC_FMR_POOL_STRICT);
	a = pool_map_a(test, FMR_IOVA);
	key = a->key;
	/* In use, the cache still serves a second user. */
	mark = hw->log_len;
	KUNIT_EXPECT_PTR_EQ(test, pool_map_a(test, FMR_IOVA), a);
	KUNIT_EXPECT_EQ(test, hw->log_len, mark);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	assert_mapped(test, key, FMR_IOVA);

	/* The last unmap makes the key useless before it returns. */
	mkeys = hw->calls[FAKE_HW_WRITE_MKEY];
	fences = hw->calls[FAKE_HW_FENCE];
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	KUNIT_EXPECT_EQ(test, hw->calls[FAKE_HW_WRITE_MKEY], mkeys + 1);
	KUNIT_EXPECT_EQ(test, hw->calls[FAKE_HW_FENCE], fences + 1);
	assert_free_ctx(test, a, key);
	KUNIT_EXPECT_EQ(test, pool_stats(test).strict_unmaps, 1ULL);

	/* Nothing unmapped is cached: the same list maps again. */
	mark = hw->log_len;
	a = pool_map_a(test, FMR_IOVA);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, hw, mark,
							 true));
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
}

static void mrc_fmr_pool_misuse(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *plain = fmr_alloc(test, 0, LW);
	struct mrc_mr *a;
	unsigned int mark;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);

	/* Caller bugs: refused and counted, nothing written. */
	mark = ctx->hw->log_len;
	fake_hw_expect_misuse(ctx->hw, 5);
	KUNIT_EXPECT_EQ(test, mrc_fmr_pool_unmap(a), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_fmr_pool_unmap(plain), -EINVAL);
	KUNIT_EXPECT_EQ(test, fmr_map(a, 0x10200), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(&a, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(a), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_fmr_pool_unmap(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	/* The cached mapping is intact. */
	KUNIT_EXPECT_PTR_EQ(test, pool_map_a(test, FMR_IOVA), a);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
}

/* A hit spares its FMR from the next miss once (second chance). */
static void mrc_fmr_pool_hit_spares_from_miss(struct kunit *test)
{
	struct mrc_mr *a, *b, *c;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	b = pool_map_a(test, 0x10200);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);
	/* A was used longest ago, but is hit now. */
	KUNIT_ASSERT_PTR_EQ(test, pool_map_a(test, FMR_IOVA), a);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);

	c = pool_map_a(test, 0x20200);
	KUNIT_EXPECT_PTR_EQ(test, c, b);
	/* A is still cached: a hit, nothing written. */
	KUNIT_EXPECT_PTR_EQ(test, pool_map_a(test, FMR_IOVA), a);
	KUNIT_EXPECT_EQ(test, pool_stats(test).hits, 2ULL);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, c), 0);
}

/*
 * A miss parks an FMR in use off the free list; its last unmap puts it
 * back, so a later miss can take it.
 */
static void mrc_fmr_pool_parked_comes_back(struct kunit *test)
{
	struct mrc_mr *a, *b, *c;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	b = pool_map_a(test, 0x10200);
	/* Both in use: the miss parks both and fails. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(pool_map(test, fmr_pages, FMR_NP,
					       0x20200)), -EAGAIN);
	KUNIT_EXPECT_EQ(test, pool_stats(test).in_use, 2U);
	KUNIT_EXPECT_EQ(test, pool_stats(test).free, 0U);

	/* B's last user goes: back on the list, the miss takes it. */
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(test).free, 1U);
	c = pool_map_a(test, 0x20200);
	KUNIT_EXPECT_PTR_EQ(test, c, b);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, c), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);

	/* Both came back: two misses in a row find two free FMRs. */
	a = pool_map_a(test, 0x30200);
	b = pool_map_a(test, 0x40200);
	KUNIT_EXPECT_PTR_NE(test, a, b);
	KUNIT_EXPECT_EQ(test, pool_stats(test).in_use, 2U);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);
	KUNIT_EXPECT_EQ(test, pool_stats(test).free, 2U);
}

#define FMR_RACE_THREADS	2
#define FMR_RACE_ITERS		2000
#define FMR_RACE_IOVAS		5	/* more than the pool holds */
#define FMR_RACE_HOLD		2	/* maps a thread holds at once */

struct fmr_race;

/**
 * struct fmr_racer - one thread of mrc_fmr_pool_concurrent_users
 * @race: the race
 * @task: the thread
 * @done: completed when it has given everything back
 * @rnd: its random state
 * @held: the maps it holds, and their iovas in @iova
 * @iova: see @held
 * @maps: successful maps
 * @again: -EAGAIN answers (each followed by a flush)
 * @wrong: maps whose FMR was not mapped at the iova asked for
 * @errors: other failures
 */
struct fmr_racer {
	struct fmr_race *race;
	struct task_struct *task;
	struct completion done;
	struct rnd_state rnd;
	struct mrc_mr *held[FMR_RACE_HOLD];
	u64 iova[FMR_RACE_HOLD];
	unsigned int maps, again, wrong, errors;
};

struct fmr_race {
	struct fmr_test_ctx *ctx;
	struct completion go;
	struct fmr_racer r[FMR_RACE_THREADS];
};

/* Map @iova into slot @i; the key must be VALID over it while held. */
static void fmr_racer_map(struct fmr_racer *w, unsigned int i, u64 iova)
{
	struct fmr_test_ctx *ctx = w->race->ctx;
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr;

	mr = mrc_fmr_pool_map_phys(ctx->pool, fmr_pages, FMR_NP, iova);
	if (PTR_ERR_OR_ZERO(mr) == -EAGAIN) {
		w->again++;
		if (mrc_flush_fmr_pool(ctx->pool))
			w->errors++;
		return;
	}
	if (IS_ERR(mr)) {
		w->errors++;
		return;
	}
	w->maps++;
	c = fake_hw_ctx(ctx->hw, mr->key);
	if (mr->iova != iova || c->key != mr->key ||
	    c->state != MRC_MKEY_VALID || c->iova != iova)
		w->wrong++;
	w->held[i] = mr;
	w->iova[i] = iova;
}

static void fmr_racer_unmap(struct fmr_racer *w, unsigned int i)
{
	if (mrc_fmr_pool_unmap(w->held[i]))
		w->errors++;
	w->held[i] = NULL;
}

static int fmr_racer_fn(void *arg)
{
	struct fmr_racer *w = arg;
	unsigned int n, i;
	u32 r;

	wait_for_completion(&w->race->go);
	for (n = 0; n < FMR_RACE_ITERS; n++) {
		r = prandom_u32_state(&w->rnd);
		i = r % FMR_RACE_HOLD;
		if (w->held[i])
			fmr_racer_unmap(w, i);
		else
			fmr_racer_map(w, i, 0x10200 + (u64)((r >> 8) %
						FMR_RACE_IOVAS) * SZ_64K);
		cond_resched();
	}
	for (i = 0; i < FMR_RACE_HOLD; i++)
		if (w->held[i])
			fmr_racer_unmap(w, i);
	complete(&w->done);

	fake_hw_wait_for_stop();
	return 0;
}

static const u32 fmr_race_flags[] = {
	MRC_FMR_POOL_CACHE,
	MRC_FMR_POOL_CACHE | MRC_FMR_POOL_STRICT,
};

static void fmr_race_desc(const u32 *flags, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *flags & MRC_FMR_POOL_STRICT ? "strict" : "cached");
}

KUNIT_ARRAY_PARAM(fmr_race, fmr_race_flags, fmr_race_desc);

/*
 * Threads hit, miss, unmap and flush one small pool at once: every map
 * returns an FMR mapped at the iova asked for, nothing fails but with
 * -EAGAIN, nothing is misused, and in the end the counts add up and
 * every FMR is free or dirty.
 */
static void mrc_fmr_pool_concurrent_users(struct kunit *test)
{
	const u32 *flags = test->param_value;
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int i, started, maps = 0;
	s64 misuse0 = atomic64_read(&ctx->mdev->stats_misuse);
	struct mrc_fmr_pool_stats st;
	struct fmr_race *race;

	fmr_pool(test, 3, FMR_MAPS, 2, *flags);
	race = kunit_kzalloc(test, sizeof(*race), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, race);
	race->ctx = ctx;
	init_completion(&race->go);
	for (started = 0; started < FMR_RACE_THREADS; started++) {
		struct fmr_racer *w = &race->r[started];

		w->race = race;
		prandom_seed_state(&w->rnd, fake_hw_random_seed() + started);
		init_completion(&w->done);
		w->task = kthread_run(fmr_racer_fn, w, "mrc_fmr_race_%u",
				      started);
		if (IS_ERR(w->task))
			break;
	}
	complete_all(&race->go);
	for (i = 0; i < started; i++) {
		struct fmr_racer *w = &race->r[i];

		wait_for_completion(&w->done);
		kthread_stop(w->task);
		KUNIT_EXPECT_EQ(test, w->errors, 0U);
		KUNIT_EXPECT_EQ(test, w->wrong, 0U);
		maps += w->maps;
	}
	KUNIT_ASSERT_EQ(test, started, FMR_RACE_THREADS);

	/* A worker flush running now would own the dirty ones: flush. */
	KUNIT_ASSERT_EQ(test, mrc_flush_fmr_pool(ctx->pool), 0);
	st = pool_stats(test);
	KUNIT_EXPECT_EQ(test, st.hits + st.misses, (u64)maps);
	KUNIT_EXPECT_GT(test, st.hits, 0ULL);
	KUNIT_EXPECT_GT(test, st.misses, 0ULL);
	KUNIT_EXPECT_EQ(test, st.in_use, 0U);
	KUNIT_EXPECT_EQ(test, st.free, 3U);
	KUNIT_EXPECT_EQ(test, st.dirty, 0U);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->mdev->stats_misuse),
			misuse0);
	/* Every FMR can still be taken: three misses in a row. */
	for (i = 0; i < 3; i++)
		pool_map_a(test, 0x800200 + i * SZ_64K);
	KUNIT_EXPECT_EQ(test, pool_stats(test).in_use, 3U);
}

static void mrc_destroy_fmr_pool_busy_then_invalid(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *a, *b;
	u32 key_a, key_b;

	fmr_pool(test, 2, FMR_MAPS, 2, MRC_FMR_POOL_CACHE);
	a = pool_map_a(test, FMR_IOVA);
	b = pool_map_a(test, 0x10200);
	key_a = a->key;
	key_b = b->key;
	KUNIT_ASSERT_EQ(test, pool_unmap(test, a), 0);

	/* B is in use: nothing changes. */
	KUNIT_EXPECT_EQ(test, mrc_destroy_fmr_pool(ctx->pool), -EBUSY);
	assert_mapped(test, key_a, FMR_IOVA);
	KUNIT_ASSERT_EQ(test, pool_unmap(test, b), 0);

	/* Every key invalidated, the cached mapping included. */
	KUNIT_EXPECT_EQ(test, mrc_destroy_fmr_pool(ctx->pool), 0);
	ctx->pool = NULL;
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key_a)->state,
			(u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key_b)->state,
			(u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->flush_calls), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static struct kunit_case fmr_pool_test_cases[] = {
	KUNIT_CASE(mrc_create_fmr_pool_all_free),
	KUNIT_CASE_PARAM(mrc_create_fmr_pool_bad_params, fmr_pool_gen_params),
	KUNIT_CASE(mrc_create_fmr_pool_fail_unwinds),
	KUNIT_CASE(mrc_fmr_pool_map_phys_hit_writes_nothing),
	KUNIT_CASE(mrc_fmr_pool_map_phys_miss),
	KUNIT_CASE(mrc_fmr_pool_map_phys_cache_off),
	KUNIT_CASE(mrc_fmr_pool_map_phys_lru_remap),
	KUNIT_CASE(mrc_fmr_pool_hit_spares_from_miss),
	KUNIT_CASE(mrc_fmr_pool_parked_comes_back),
	KUNIT_CASE_PARAM(mrc_fmr_pool_concurrent_users, fmr_race_gen_params),
	KUNIT_CASE(mrc_fmr_pool_map_phys_exhausted),
	KUNIT_CASE(mrc_fmr_pool_map_phys_bad_list),
	KUNIT_CASE(mrc_fmr_pool_map_phys_write_fails),
	KUNIT_CASE(mrc_fmr_pool_max_remaps_goes_dirty),
	KUNIT_CASE(mrc_fmr_pool_watermark_wakes_worker),
	KUNIT_CASE(mrc_flush_fmr_pool_unmaps_free),
	KUNIT_CASE(mrc_fmr_pool_strict_unmap_invalidates),
	KUNIT_CASE(mrc_fmr_pool_misuse),
	KUNIT_CASE(mrc_destroy_fmr_pool_busy_then_invalid),
	{}
};

static struct kunit_suite fmr_pool_test_suite = {
	.name = "mrcore_fmr_pool",
	.init = fmr_test_init,
	.exit = fmr_test_exit,
	.test_cases = fmr_pool_test_cases,
};

kunit_test_suite(fmr_pool_test_suite);
