// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore protection domains: PD numbers, the max_pds cap
 * and the counters behind debugfs "stats".
 */
#include <kunit/test.h>
#include <linux/bitmap.h>

#include "fake_hw.h"

struct pd_test_ctx {
	struct fake_hw *hw;
	struct mrc_pd *pds;	/* max_pds entries */
	unsigned int num_pds;	/* pds[0 .. num_pds - 1] are live */
};

/* Usable PD numbers: 1 .. max_pds - 1. */
static unsigned int pd_test_limit(struct pd_test_ctx *ctx)
{
	return ctx->hw->mdev.caps.max_pds - 1;
}

/* Allocates PDs until the device refuses; returns that error. */
static int pd_test_fill(struct kunit *test, struct pd_test_ctx *ctx)
{
	int ret;

	do {
		KUNIT_ASSERT_LE(test, ctx->num_pds, pd_test_limit(ctx));
		ret = mrc_pd_init(&ctx->hw->mdev, &ctx->pds[ctx->num_pds]);
		if (!ret)
			ctx->num_pds++;
	} while (!ret);
	return ret;
}

static void pd_test_release_all(struct pd_test_ctx *ctx)
{
	while (ctx->num_pds)
		mrc_pd_fini(&ctx->pds[--ctx->num_pds]);
}

static void mrc_pd_init_distinct_pdns(struct kunit *test)
{
	struct pd_test_ctx *ctx = test->priv;
	unsigned long *seen;
	unsigned int i;

	seen = kunit_kcalloc(test, BITS_TO_LONGS(pd_test_limit(ctx) + 1),
			     sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);

	pd_test_fill(test, ctx);

	/* After: every usable number once, each PD pointing at the device. */
	KUNIT_EXPECT_EQ(test, ctx->num_pds, pd_test_limit(ctx));
	for (i = 0; i < ctx->num_pds; i++) {
		u32 pdn = ctx->pds[i].pdn;

		KUNIT_EXPECT_PTR_EQ(test, ctx->pds[i].mdev, &ctx->hw->mdev);
		KUNIT_ASSERT_GE(test, pdn, 1U);
		KUNIT_ASSERT_LE(test, pdn, pd_test_limit(ctx));
		KUNIT_EXPECT_FALSE_MSG(test, __test_and_set_bit(pdn, seen),
				       "pdn %u handed out twice", pdn);
	}
	pd_test_release_all(ctx);
}

static void mrc_pd_init_exhausted(struct kunit *test)
{
	struct pd_test_ctx *ctx = test->priv;
	struct mrc_pd *victim;
	u32 pdn;

	/* Before: all max_pds - 1 numbers in use. */
	KUNIT_EXPECT_EQ(test, pd_test_fill(test, ctx), -ENOMEM);
	KUNIT_ASSERT_EQ(test, ctx->num_pds, pd_test_limit(ctx));

	/* Releasing one makes exactly that number available again. */
	victim = &ctx->pds[ctx->num_pds / 2];
	pdn = victim->pdn;
	mrc_pd_fini(victim);
	KUNIT_EXPECT_EQ(test, mrc_pd_init(&ctx->hw->mdev, victim), 0);
	KUNIT_EXPECT_EQ(test, victim->pdn, pdn);

	/* And the device is full again. */
	KUNIT_EXPECT_EQ(test, mrc_pd_init(&ctx->hw->mdev,
					  &ctx->pds[ctx->num_pds]), -ENOMEM);
	pd_test_release_all(ctx);
}

static void mrc_pd_init_counts(struct kunit *test)
{
	struct pd_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = &ctx->hw->mdev;
	s64 allocs;

	/* Before: nothing live, nothing ever allocated. */
	KUNIT_ASSERT_EQ(test, atomic_read(&mdev->num_pds), 0);
	KUNIT_ASSERT_EQ(test, atomic64_read(&mdev->stats_pd_allocs), 0LL);

	pd_test_fill(test, ctx);
	allocs = atomic64_read(&mdev->stats_pd_allocs);

	/* A refused init counts as neither live nor allocated. */
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_pds),
			(int)pd_test_limit(ctx));
	KUNIT_EXPECT_EQ(test, allocs, (s64)pd_test_limit(ctx));

	/* Releases lower the live count only. */
	pd_test_release_all(ctx);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_pds), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mdev->stats_pd_allocs), allocs);
}

static void mrc_pd_fini_clears_pdn(struct kunit *test)
{
	struct pd_test_ctx *ctx = test->priv;
	struct mrc_pd pd = {};

	KUNIT_ASSERT_EQ(test, mrc_pd_init(&ctx->hw->mdev, &pd), 0);
	KUNIT_EXPECT_NE(test, pd.pdn, 0U);

	mrc_pd_fini(&pd);

	/* After: the PD no longer names a number, and no PD is live. */
	KUNIT_EXPECT_EQ(test, pd.pdn, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->hw->mdev.num_pds), 0);
}

/* A caller bug: rejected, counted and logged, never a warning. */
static void mrc_pd_fini_twice(struct kunit *test)
{
	struct pd_test_ctx *ctx = test->priv;
	struct mrc_pd pd = {}, other = {};

	KUNIT_ASSERT_EQ(test, mrc_pd_init(&ctx->hw->mdev, &pd), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(&ctx->hw->mdev, &other), 0);
	mrc_pd_fini(&pd);

	fake_hw_expect_misuse(ctx->hw, 1);
	mrc_pd_fini(&pd);

	/* After: caught; the other PD is still live and its number taken. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->hw->mdev.stats_misuse), 1LL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->hw->mdev.num_pds), 1);
	KUNIT_EXPECT_EQ(test, mrc_pd_init(&ctx->hw->mdev, &pd), 0);
	KUNIT_EXPECT_NE(test, pd.pdn, other.pdn);
	mrc_pd_fini(&pd);
	mrc_pd_fini(&other);
}

static int pd_test_init(struct kunit *test)
{
	struct pd_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	ctx->hw = fake_hw_create(test, "mrc-kunit-pd", &caps);
	ctx->pds = kunit_kcalloc(test, caps.max_pds, sizeof(*ctx->pds),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->pds);
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	return 0;
}

static void pd_test_exit(struct kunit *test)
{
	struct pd_test_ctx *ctx = test->priv;

	/* Also runs when init failed part-way. */
	if (!ctx)
		return;
	pd_test_release_all(ctx);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case pd_test_cases[] = {
	KUNIT_CASE(mrc_pd_init_distinct_pdns),
	KUNIT_CASE(mrc_pd_init_exhausted),
	KUNIT_CASE(mrc_pd_init_counts),
	KUNIT_CASE(mrc_pd_fini_clears_pdn),
	KUNIT_CASE(mrc_pd_fini_twice),
	{}
};

static struct kunit_suite pd_test_suite = {
	.name = "mrcore_pd",
	.init = pd_test_init,
	.exit = pd_test_exit,
	.test_cases = pd_test_cases,
};

kunit_test_suite(pd_test_suite);
