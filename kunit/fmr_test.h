/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the mrcore_fmr suite (fmr_test.c) and the mrcore_fmr_pool suite
 * (fmr_pool_test.c) share: one context per case, with the fake device, a
 * PD and what the case still holds, and the helpers both suites call.
 * fmr_test_init() and fmr_test_exit(), in fmr_test.c, set up and tear
 * down that context for both.
 */
#ifndef _MRCORE_FMR_TEST_H
#define _MRCORE_FMR_TEST_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/sizes.h>
#include <rdma/mrcore_fmr.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

#define FMR_PAGES	8
#define FMR_MAPS	4
#define FMR_NUM		4	/* plain FMRs a case may hold */
#define FMR_HELD	8	/* pool mappings a case may hold */
#define FMR_WAIT_MS	60000	/* for the flush worker: a failure's bound only */
#define LW		MRC_ACCESS_LOCAL_WRITE
#define RR		MRC_ACCESS_REMOTE_READ
#define RW		MRC_ACCESS_REMOTE_WRITE
#define LRW		(LW | RR | RW)

/* Three 4 KiB pages, the first byte 0x200 into the first. */
#define FMR_IOVA	0xabc200ULL
#define FMR_LEN		(3 * SZ_4K - 0x200)
static const u64 fmr_pages[] = { 0x100000, 0x7000, 0x345000 };
static const u64 fmr_pages_b[] = { 0x200000, 0x201000 };
#define FMR_NP		ARRAY_SIZE(fmr_pages)

struct fmr_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct mrc_pd pd;
	struct mrc_mr *fmr[FMR_NUM];	/* unmapped and dealloc'd by .exit */
	struct mrc_mr *dma_mr;		/* dereg'd by .exit */
	struct mrc_fmr_pool *pool;	/* destroyed by .exit */
	struct mrc_mr *held[FMR_HELD];	/* pool maps not yet given back */
	struct completion flushed;
	atomic_t flush_calls;
	int mkeys0;
};

static const struct mrc_fmr_attr fmr_attr = {
	.max_pages = FMR_PAGES,
	.max_maps = FMR_MAPS,
	.page_shift = 12,
};

static inline struct mrc_mr *fmr_alloc(struct kunit *test, unsigned int i,
				       u32 access)
{
	struct fmr_test_ctx *ctx = test->priv;

	ctx->fmr[i] = mrc_alloc_fmr(&ctx->pd, access, &fmr_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->fmr[i]);
	return ctx->fmr[i];
}

static inline int fmr_map(struct mrc_mr *mr, u64 iova)
{
	return mrc_map_phys_fmr(mr, fmr_pages, FMR_NP, iova);
}

/* Nothing allocated is left: keys, translation space, MRs. */
static inline bool assert_baseline(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	bool ok;

	ok = atomic_read(&mdev->num_mkeys) == ctx->mkeys0 &&
	     atomic_read(&mdev->xlt_segs_used) == 0 &&
	     atomic_read(&mdev->num_mrs) == 0 &&
	     atomic_read(&mdev->num_mrs_type[MRC_MR_FMR]) == 0;
	if (!ok)
		KUNIT_FAIL(test, "leak: mkeys %d/%d xlt segs %d mrs %d fmr %d",
			   atomic_read(&mdev->num_mkeys), ctx->mkeys0,
			   atomic_read(&mdev->xlt_segs_used),
			   atomic_read(&mdev->num_mrs),
			   atomic_read(&mdev->num_mrs_type[MRC_MR_FMR]));
	return ok;
}

/* The slot of @mr holds a FREE context with @key: no access at all. */
static inline void assert_free_ctx(struct kunit *test, struct mrc_mr *mr, u32 key)
{
	struct fmr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = fake_hw_ctx(ctx->hw, key);

	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_FREE);
	KUNIT_EXPECT_EQ(test, c->pdn, mr->pd->pdn);
	KUNIT_EXPECT_EQ(test, c->access, 0U);
	KUNIT_EXPECT_EQ(test, c->xlt_entries, 0U);
}

/* The slot holds @key VALID over fmr_pages from @iova. */
static inline void assert_mapped(struct kunit *test, u32 key, u64 iova)
{
	struct fmr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = fake_hw_ctx(ctx->hw, key);

	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, c->iova, iova);
	KUNIT_EXPECT_EQ(test, c->xlt_entries, (u32)FMR_NP);
}

int fmr_test_init(struct kunit *test);
void fmr_test_exit(struct kunit *test);

#endif /* _MRCORE_FMR_TEST_H */
