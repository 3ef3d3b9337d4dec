// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the mrcore translation-area allocator: rounding,
 * alignment, exhaustion, buddy merging and a randomised no-overlap run.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/prandom.h>

#include "fake_hw.h"

#define XLT_RANDOM_OPS		4000
#define XLT_RANDOM_MAX_SEGS	16

struct xlt_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct fake_hw *hw2;		/* a second device some cases add */
	struct mrc_xlt *pieces;		/* one per segment, plus a spare */
	unsigned int num_pieces;	/* pieces[0 .. num_pieces - 1] live */
};

static unsigned long xlt_test_segs(struct mrc_device *mdev)
{
	return mdev->caps.xlt_size >> MRC_XLT_SEG_SHIFT;
}

static void xlt_test_free_all(struct xlt_test_ctx *ctx,
			      struct mrc_device *mdev)
{
	while (ctx->num_pieces)
		mrc_xlt_free(mdev, &ctx->pieces[--ctx->num_pieces]);
}

/* @x is naturally aligned, non-empty and inside @mdev's area. */
static bool assert_piece_sane(struct kunit *test, struct mrc_device *mdev,
			      const struct mrc_xlt *x)
{
	if (x->size < MRC_XLT_SEG_SIZE || !is_power_of_2(x->size) ||
	    !IS_ALIGNED(x->offset, x->size) ||
	    x->offset + x->size > mdev->caps.xlt_size) {
		KUNIT_FAIL(test, "bad piece [%llu, +%llu) in %llu bytes",
			   x->offset, x->size, mdev->caps.xlt_size);
		return false;
	}
	return true;
}

/* Allocates pieces of @segs segments until refused; returns the error. */
static int xlt_test_fill(struct kunit *test, struct xlt_test_ctx *ctx,
			 struct mrc_device *mdev, u64 segs)
{
	struct mrc_xlt *x;
	int ret;

	for (;;) {
		/* More pieces than segments means overlap; stop before that. */
		KUNIT_ASSERT_LE(test, ctx->num_pieces, xlt_test_segs(mdev));
		x = &ctx->pieces[ctx->num_pieces];
		ret = mrc_xlt_alloc(mdev, segs * MRC_XLT_SEG_SIZE, x);
		if (ret)
			return ret;
		ctx->num_pieces++;
		KUNIT_ASSERT_TRUE(test, assert_piece_sane(test, mdev, x));
	}
}

static void mrc_xlt_alloc_zero_bytes(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;
	struct mrc_xlt x = {};

	KUNIT_EXPECT_EQ(test, mrc_xlt_alloc(ctx->mdev, 0, &x), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
}

static void mrc_xlt_alloc_rounds_up(struct kunit *test)
{
	static const struct {
		u64 bytes;
		u64 size;
	} cases[] = {
		{ 1, 64 }, { 64, 64 }, { 65, 128 }, { 128, 128 },
		{ 3 * 64, 256 }, { 5 * 64, 512 }, { 33 * 64 - 1, 4096 },
		{ 64 * 64, 4096 },
	};
	struct xlt_test_ctx *ctx = test->priv;
	struct mrc_xlt x;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev, cases[i].bytes,
						    &x), 0);
		KUNIT_EXPECT_EQ_MSG(test, x.size, cases[i].size,
				    "%llu bytes", cases[i].bytes);
		KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used),
				(int)(x.size >> MRC_XLT_SEG_SHIFT));
		mrc_xlt_free(ctx->mdev, &x);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
}

static void mrc_xlt_alloc_too_large(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;
	u64 area = ctx->mdev->caps.xlt_size;
	const u64 bytes[] = { area + 1, 2 * area, MRC_MAX_XLT_SIZE + 1,
			      U64_MAX - MRC_XLT_SEG_SIZE + 2, U64_MAX };
	struct mrc_xlt x;
	unsigned int i;

	/* Including sizes whose rounding up would overflow. */
	for (i = 0; i < ARRAY_SIZE(bytes); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    mrc_xlt_alloc(ctx->mdev, bytes[i], &x),
				    -ENOSPC, "%llu bytes", bytes[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
}

static void mrc_xlt_alloc_naturally_aligned(struct kunit *test)
{
	static const u8 segs[] = { 1, 2, 1, 4, 1, 8, 3, 2, 16, 1, 5 };
	struct xlt_test_ctx *ctx = test->priv;
	struct mrc_xlt *x;
	unsigned int i;

	/* Mixed sizes, so later pieces come from split larger blocks. */
	for (i = 0; i < ARRAY_SIZE(segs); i++) {
		x = &ctx->pieces[ctx->num_pieces];
		KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev,
						    segs[i] * MRC_XLT_SEG_SIZE,
						    x), 0);
		ctx->num_pieces++;
		KUNIT_EXPECT_EQ_MSG(test, x->offset & (x->size - 1), 0ULL,
				    "piece %u at %llu size %llu", i, x->offset,
				    x->size);
		KUNIT_EXPECT_TRUE(test, assert_piece_sane(test, ctx->mdev, x));
	}
	xlt_test_free_all(ctx, ctx->mdev);
}

static void mrc_xlt_alloc_exhausted_recovers(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;
	struct mrc_xlt *victim;
	u64 offset;

	/* Before: every segment handed out singly. */
	KUNIT_EXPECT_EQ(test, xlt_test_fill(test, ctx, ctx->mdev, 1), -ENOSPC);
	KUNIT_ASSERT_EQ(test, ctx->num_pieces, xlt_test_segs(ctx->mdev));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used),
			(int)xlt_test_segs(ctx->mdev));

	/* Freeing one segment makes exactly it available again. */
	victim = &ctx->pieces[ctx->num_pieces / 3];
	offset = victim->offset;
	mrc_xlt_free(ctx->mdev, victim);
	KUNIT_EXPECT_EQ(test, mrc_xlt_alloc(ctx->mdev, 2 * MRC_XLT_SEG_SIZE,
					    victim), -ENOSPC);
	KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev, 1, victim), 0);
	KUNIT_EXPECT_EQ(test, victim->offset, offset);

	xlt_test_free_all(ctx, ctx->mdev);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
}

static void mrc_xlt_free_merges_buddies(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;
	struct rnd_state rnd;
	struct mrc_xlt whole;
	unsigned int i, j;

	prandom_seed_state(&rnd, fake_hw_random_seed());
	KUNIT_EXPECT_EQ(test, xlt_test_fill(test, ctx, ctx->mdev, 1), -ENOSPC);

	/* Free in random order, so merges happen in every pattern. */
	for (i = ctx->num_pieces; i > 1; i--) {
		/* swap() evaluates its arguments twice: draw the index once. */
		j = prandom_u32_state(&rnd) % i;
		swap(ctx->pieces[i - 1], ctx->pieces[j]);
	}
	xlt_test_free_all(ctx, ctx->mdev);

	/* After: one block spanning the whole area. */
	KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev, ctx->mdev->caps.xlt_size,
					    &whole), 0);
	KUNIT_EXPECT_EQ(test, whole.offset, 0ULL);
	KUNIT_EXPECT_EQ(test, whole.size, ctx->mdev->caps.xlt_size);
	mrc_xlt_free(ctx->mdev, &whole);
}

/* A caller bug: rejected, counted and logged, never a warning. */
static void mrc_xlt_free_double_free(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;
	struct mrc_xlt x, copy, whole;

	KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev, MRC_XLT_SEG_SIZE, &x),
			0);
	copy = x;
	mrc_xlt_free(ctx->mdev, &x);
	KUNIT_EXPECT_EQ(test, x.size, 0ULL);

	fake_hw_expect_misuse(ctx->hw, 1);
	mrc_xlt_free(ctx->mdev, &copy);

	/* After: caught, freed once, and the allocator is not corrupted. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->mdev->stats_misuse), 1LL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
	KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev, ctx->mdev->caps.xlt_size,
					    &whole), 0);
	KUNIT_EXPECT_EQ(test, mrc_xlt_alloc(ctx->mdev, 1, &x), -ENOSPC);
	mrc_xlt_free(ctx->mdev, &whole);
}

/* Shadow of the randomised run: which segments are in use. */
static bool xlt_shadow_free(const unsigned long *used, unsigned long start,
			    unsigned long len)
{
	return find_next_bit(used, start + len, start) >= start + len;
}

/* An -ENOSPC is only right if no aligned free run of that order exists. */
static bool assert_really_full(struct kunit *test, struct mrc_device *mdev,
			       const unsigned long *used, u64 bytes)
{
	unsigned long len, start, segs = xlt_test_segs(mdev);

	len = roundup_pow_of_two(DIV_ROUND_UP(bytes, MRC_XLT_SEG_SIZE));
	for (start = 0; start + len <= segs; start += len) {
		if (xlt_shadow_free(used, start, len)) {
			KUNIT_FAIL(test, "%llu bytes refused, segs %lu..%lu free",
				   bytes, start, start + len - 1);
			return false;
		}
	}
	return true;
}

/* @x does not overlap anything in use; then marks it in use. */
static bool assert_no_overlap(struct kunit *test, struct mrc_device *mdev,
			      unsigned long *used, const struct mrc_xlt *x)
{
	unsigned long start = x->offset >> MRC_XLT_SEG_SHIFT;
	unsigned long len = x->size >> MRC_XLT_SEG_SHIFT;

	if (!assert_piece_sane(test, mdev, x))
		return false;
	if (!xlt_shadow_free(used, start, len)) {
		KUNIT_FAIL(test, "piece [%llu, +%llu) overlaps a live piece",
			   x->offset, x->size);
		return false;
	}
	bitmap_set(used, start, len);
	return true;
}

/* One random step: free a random piece, or allocate a random size. */
static bool xlt_random_step(struct kunit *test, struct xlt_test_ctx *ctx,
			    unsigned long *used, struct rnd_state *rnd)
{
	struct mrc_device *mdev = ctx->mdev;
	struct mrc_xlt *x;
	u64 bytes;
	int ret;

	if (ctx->num_pieces && prandom_u32_state(rnd) % 3 == 0) {
		x = &ctx->pieces[prandom_u32_state(rnd) % ctx->num_pieces];
		bitmap_clear(used, x->offset >> MRC_XLT_SEG_SHIFT,
			     x->size >> MRC_XLT_SEG_SHIFT);
		mrc_xlt_free(mdev, x);
		*x = ctx->pieces[--ctx->num_pieces];
		return true;
	}

	bytes = 1 + prandom_u32_state(rnd) %
		    (XLT_RANDOM_MAX_SEGS * MRC_XLT_SEG_SIZE);
	x = &ctx->pieces[ctx->num_pieces];
	ret = mrc_xlt_alloc(mdev, bytes, x);
	if (ret == -ENOSPC)
		return assert_really_full(test, mdev, used, bytes);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ctx->num_pieces++;
	return assert_no_overlap(test, mdev, used, x);
}

static void mrc_xlt_alloc_random_no_overlap(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;
	unsigned long *used, weight;
	struct rnd_state rnd;
	unsigned int i;

	used = kunit_kcalloc(test, BITS_TO_LONGS(xlt_test_segs(ctx->mdev)),
			     sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, used);
	prandom_seed_state(&rnd, fake_hw_random_seed());
	kunit_info(test, "random_seed %u\n", fake_hw_random_seed());

	for (i = 0; i < XLT_RANDOM_OPS; i++) {
		if (!xlt_random_step(test, ctx, used, &rnd))
			break;
		weight = bitmap_weight(used, xlt_test_segs(ctx->mdev));
		KUNIT_ASSERT_EQ_MSG(test,
				    atomic_read(&ctx->mdev->xlt_segs_used),
				    (int)weight, "step %u", i);
	}
	xlt_test_free_all(ctx, ctx->mdev);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
}

static void mrc_xlt_alloc_non_pow2_area(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;
	struct mrc_caps caps;
	struct mrc_device *mdev;
	struct mrc_xlt x;

	/* Before: 7 segments, i.e. free blocks of 4, 2 and 1 segments. */
	fake_hw_default_caps(&caps);
	caps.xlt_size = 7 * MRC_XLT_SEG_SIZE;
	ctx->hw2 = fake_hw_create(test, "mrc-kunit-xlt-np2", &caps);
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw2), 0);
	mdev = &ctx->hw2->mdev;

	/* No block exceeds the area, and every segment is usable. */
	KUNIT_EXPECT_EQ(test, mrc_xlt_alloc(mdev, 8 * MRC_XLT_SEG_SIZE, &x),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, xlt_test_fill(test, ctx, mdev, 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, ctx->num_pieces, 7U);
	xlt_test_free_all(ctx, mdev);

	/* After freeing, the original 4 + 2 + 1 blocks are back. */
	KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(mdev, 4 * MRC_XLT_SEG_SIZE,
					    &ctx->pieces[0]), 0);
	ctx->num_pieces = 1;
	KUNIT_EXPECT_EQ(test, ctx->pieces[0].offset, 0ULL);
	KUNIT_EXPECT_EQ(test, mrc_xlt_alloc(mdev, 4 * MRC_XLT_SEG_SIZE, &x),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, xlt_test_fill(test, ctx, mdev, 2), -ENOSPC);
	KUNIT_EXPECT_EQ(test, ctx->num_pieces, 2U);
	KUNIT_EXPECT_EQ(test, ctx->pieces[1].offset, 4ULL * MRC_XLT_SEG_SIZE);
	KUNIT_EXPECT_EQ(test, xlt_test_fill(test, ctx, mdev, 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, ctx->num_pieces, 3U);
	KUNIT_EXPECT_EQ(test, ctx->pieces[2].offset, 6ULL * MRC_XLT_SEG_SIZE);
	xlt_test_free_all(ctx, mdev);
	fake_hw_unregister(ctx->hw2);
}

static int xlt_test_init(struct kunit *test)
{
	struct xlt_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	ctx->hw = fake_hw_create(test, "mrc-kunit-xlt", &caps);
	ctx->mdev = &ctx->hw->mdev;
	ctx->pieces = kunit_kcalloc(test, xlt_test_segs(ctx->mdev) + 1,
				    sizeof(*ctx->pieces), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->pieces);
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	return 0;
}

static void xlt_test_exit(struct kunit *test)
{
	struct xlt_test_ctx *ctx = test->priv;

	/* Also runs when init failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	if (ctx->hw2 && ctx->hw2->registered) {
		xlt_test_free_all(ctx, &ctx->hw2->mdev);
		fake_hw_unregister(ctx->hw2);
	}
	if (ctx->hw->registered)
		xlt_test_free_all(ctx, ctx->mdev);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case xlt_test_cases[] = {
	KUNIT_CASE(mrc_xlt_alloc_zero_bytes),
	KUNIT_CASE(mrc_xlt_alloc_rounds_up),
	KUNIT_CASE(mrc_xlt_alloc_too_large),
	KUNIT_CASE(mrc_xlt_alloc_naturally_aligned),
	KUNIT_CASE(mrc_xlt_alloc_exhausted_recovers),
	KUNIT_CASE(mrc_xlt_free_merges_buddies),
	KUNIT_CASE(mrc_xlt_free_double_free),
	KUNIT_CASE(mrc_xlt_alloc_random_no_overlap),
	KUNIT_CASE(mrc_xlt_alloc_non_pow2_area),
	{}
};

static struct kunit_suite xlt_test_suite = {
	.name = "mrcore_xlt",
	.init = xlt_test_init,
	.exit = xlt_test_exit,
	.test_cases = xlt_test_cases,
};

kunit_test_suite(xlt_test_suite);
