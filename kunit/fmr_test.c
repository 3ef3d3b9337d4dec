// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore FMRs and FMR pools against the fake backend.
 *
 * mrcore_fmr: allocation (checks, the FREE context, unwinding at every
 * stage), maps (the MTT entries and VALID context they leave in device
 * memory and their write order, a new key variant and the other table on
 * every map, max_maps, argument checks, failures that keep the previous
 * mapping), the batch unmap's single fence, deallocation.
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

static struct mrc_mr *fmr_alloc(struct kunit *test, unsigned int i,
				u32 access)
{
	struct fmr_test_ctx *ctx = test->priv;

	ctx->fmr[i] = mrc_alloc_fmr(&ctx->pd, access, &fmr_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->fmr[i]);
	return ctx->fmr[i];
}

static int fmr_map(struct mrc_mr *mr, u64 iova)
{
	return mrc_map_phys_fmr(mr, fmr_pages, FMR_NP, iova);
}

/* Nothing allocated is left: keys, translation space, MRs. */
static bool assert_baseline(struct kunit *test)
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
static void assert_free_ctx(struct kunit *test, struct mrc_mr *mr, u32 key)
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
static void assert_mapped(struct kunit *test, u32 key, u64 iova)
{
	struct fmr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = fake_hw_ctx(ctx->hw, key);

	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, c->iova, iova);
	KUNIT_EXPECT_EQ(test, c->xlt_entries, (u32)FMR_NP);
}

/* ---- mrcore_fmr ---- */

static void mrc_alloc_fmr_free_context(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	struct mrc_mr *mr;

	mr = fmr_alloc(test, 0, LRW);

	/* One context write, FREE: nothing is reachable before a map. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 false));
	assert_free_ctx(test, mr, mr->key);
	KUNIT_EXPECT_EQ(test, mr->type, MRC_MR_FMR);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, mr->key),
			    (void *)mr);
	/* Two tables of max_pages entries. */
	KUNIT_EXPECT_GE(test, mr->xlt.size,
			2ULL * FMR_PAGES * MRC_MTT_ENTRY_SIZE);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mrs_type[MRC_MR_FMR]),
			1);

	KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(mr), 0);
	ctx->fmr[0] = NULL;
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

struct fmr_attr_case {
	const char *desc;
	u32 max_pages;		/* 0xffffffff: mrc_fmr_max_pages() + 1 */
	u32 max_maps;
	u8 page_shift;
	u32 access;
	int ret;
};

static const struct fmr_attr_case fmr_attr_cases[] = {
	{ "no pages", 0, FMR_MAPS, 12, LW, -EINVAL },
	{ "more pages than the area", U32_MAX, FMR_MAPS, 12, LW, -EINVAL },
	{ "no maps", FMR_PAGES, 0, 12, LW, -EINVAL },
	{ "more maps than variants", FMR_PAGES, MRC_FMR_MAX_MAPS + 1, 12, LW,
	  -EINVAL },
	{ "page size not in the caps", FMR_PAGES, FMR_MAPS, 13, LW, -EINVAL },
	{ "page size below 4 KiB", FMR_PAGES, FMR_MAPS, 9, LW, -EINVAL },
	{ "page shift of 64", FMR_PAGES, FMR_MAPS, 64, LW, -EINVAL },
	{ "zero based", FMR_PAGES, FMR_MAPS, 12, LW | MRC_ACCESS_ZERO_BASED,
	  -EINVAL },
	{ "window binding", FMR_PAGES, FMR_MAPS, 12, LW | MRC_ACCESS_MW_BIND,
	  -EINVAL },
	{ "remote write without local write", FMR_PAGES, FMR_MAPS, 12,
	  RW | RR, -EINVAL },
	{ "unknown access bit", FMR_PAGES, FMR_MAPS, 12, LW | BIT(12),
	  -EINVAL },
	{ "on demand", FMR_PAGES, FMR_MAPS, 12, LW | MRC_ACCESS_ON_DEMAND,
	  -EOPNOTSUPP },
};

static void fmr_attr_desc(const struct fmr_attr_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fmr_attr, fmr_attr_cases, fmr_attr_desc);

static void mrc_alloc_fmr_bad_args(struct kunit *test)
{
	const struct fmr_attr_case *p = test->param_value;
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	struct mrc_fmr_attr attr = {
		.max_pages = p->max_pages == U32_MAX ?
			     mrc_fmr_max_pages(ctx->mdev) + 1 : p->max_pages,
		.max_maps = p->max_maps,
		.page_shift = p->page_shift,
	};

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_fmr(&ctx->pd, p->access,
						    &attr)), p->ret);
	/* Refused before anything was allocated or written. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_alloc_fmr_bad_pd_or_attr(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_pd nopd = {};

	/* Default fake caps: 64 segments, 512 entries, two tables each. */
	KUNIT_EXPECT_EQ(test, mrc_fmr_max_pages(ctx->mdev), 256U);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_fmr(NULL, LW, &fmr_attr)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_fmr(&nopd, LW, &fmr_attr)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_fmr(&ctx->pd, LW, NULL)),
			-EINVAL);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

struct fmr_fail_case {
	const char *desc;
	int stage;		/* enum mrc_stage; -1: fake write_mkey */
	int ret;
};

static const struct fmr_fail_case fmr_fail_cases[] = {
	{ "injected at key_alloc", MRC_STAGE_KEY_ALLOC, -ENOSPC },
	{ "injected at xlt_alloc", MRC_STAGE_XLT_ALLOC, -ENOSPC },
	{ "injected at write_mkey", MRC_STAGE_WRITE_MKEY, -EIO },
	{ "backend write_mkey fails", -1, -EIO },
};

static void fmr_fail_desc(const struct fmr_fail_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fmr_fail, fmr_fail_cases, fmr_fail_desc);

static void mrc_alloc_fmr_fail_unwinds(struct kunit *test)
{
	const struct fmr_fail_case *p = test->param_value;
	struct fmr_test_ctx *ctx = test->priv;

	/* Before: one failure armed, on the next pass through the stage. */
	if (p->stage < 0)
		fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	else
		atomic_set(&ctx->mdev->inject,
			   1 << MRC_INJECT_LEFT_SHIFT | (p->stage + 1));

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_fmr(&ctx->pd, LW, &fmr_attr)),
			p->ret);

	/* After: nothing held; the next allocation works. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->inject), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	fmr_alloc(test, 0, LW);
}

static void mrc_map_phys_fmr_writes_mtt_then_context(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = fmr_alloc(test, 0, LRW);
	u32 old = mr->key;
	const struct mrc_mkey_ctx *c;
	unsigned int mark = ctx->hw->log_len, i;

	KUNIT_ASSERT_EQ(test, fmr_map(mr, FMR_IOVA), 0);

	/* Entries, one fence, the context last. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	/* The key moved on by one variant; the old one finds nothing. */
	KUNIT_EXPECT_EQ(test, mrc_key_index(mr->key), mrc_key_index(old));
	KUNIT_EXPECT_EQ(test, mrc_key_variant(mr->key),
			(u8)(mrc_key_variant(old) + 1));
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, mr->key),
			    (void *)mr);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, old));

	c = fake_hw_ctx(ctx->hw, mr->key);
	assert_mapped(test, mr->key, FMR_IOVA);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_MTT);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)12);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, c->access, (u32)LRW);
	/* From byte 0x200 of page 0 to the end of the last page. */
	KUNIT_EXPECT_EQ(test, c->length, (u64)FMR_LEN);
	KUNIT_EXPECT_EQ(test, mr->length, (u64)FMR_LEN);
	KUNIT_EXPECT_EQ(test, mr->iova, FMR_IOVA);
	for (i = 0; i < FMR_NP; i++)
		KUNIT_EXPECT_EQ_MSG(test, fake_hw_mtt(ctx->hw, c, i),
				    fmr_pages[i] | MRC_MTT_READ | MRC_MTT_WRITE,
				    "MTT entry %u", i);
}

static void mrc_map_phys_fmr_remap_other_table(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = fmr_alloc(test, 0, LW);
	struct mrc_mkey_ctx first;
	u32 key1;

	KUNIT_ASSERT_EQ(test, fmr_map(mr, FMR_IOVA), 0);
	key1 = mr->key;
	first = *fake_hw_ctx(ctx->hw, key1);

	/* A map without an unmap: new key, new table, old table intact. */
	KUNIT_ASSERT_EQ(test, mrc_map_phys_fmr(mr, fmr_pages_b,
					       ARRAY_SIZE(fmr_pages_b),
					       0x5000), 0);
	KUNIT_EXPECT_EQ(test, mrc_key_variant(mr->key),
			(u8)(mrc_key_variant(key1) + 1));
	KUNIT_EXPECT_NE(test, fake_hw_ctx(ctx->hw, mr->key)->xlt_offset,
			first.xlt_offset);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, mr->key)->length,
			(u64)2 * SZ_4K);
	KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, &first, 0),
			fmr_pages[0] | MRC_MTT_READ | MRC_MTT_WRITE);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, key1));

	/* The third map goes back to the first table. */
	KUNIT_ASSERT_EQ(test, fmr_map(mr, FMR_IOVA), 0);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, mr->key)->xlt_offset,
			first.xlt_offset);
}

static void mrc_map_phys_fmr_max_maps(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = fmr_alloc(test, 0, LW);
	unsigned int i, mark;
	u32 key;

	for (i = 0; i < FMR_MAPS; i++)
		KUNIT_ASSERT_EQ(test, fmr_map(mr, FMR_IOVA + i * SZ_4K), 0);
	key = mr->key;

	/* One map too many: refused before the device is touched. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, fmr_map(mr, FMR_IOVA), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, mr->key, key);
	assert_mapped(test, key, FMR_IOVA + (FMR_MAPS - 1) * SZ_4K);

	/* An unmap starts the count again. */
	KUNIT_ASSERT_EQ(test, mrc_unmap_fmr(&mr, 1), 0);
	KUNIT_EXPECT_EQ(test, fmr_map(mr, FMR_IOVA), 0);
}

struct fmr_map_case {
	const char *desc;
	u64 page0;		/* replaces the first page */
	u32 npages;
	u64 iova;
	bool no_list;
	int ret;
};

static const struct fmr_map_case fmr_map_cases[] = {
	{ "misaligned page", 0x100800, FMR_NP, FMR_IOVA, false, -EINVAL },
	{ "no pages", 0x100000, 0, FMR_IOVA, false, -EINVAL },
	{ "more pages than max_pages", 0x100000, FMR_PAGES + 1, FMR_IOVA,
	  false, -EINVAL },
	{ "no page list", 0x100000, FMR_NP, FMR_IOVA, true, -EINVAL },
	{ "mapping wraps", 0x100000, FMR_NP, U64_MAX - 0x1ff, false,
	  -EINVAL },
};

static void fmr_map_desc(const struct fmr_map_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fmr_map, fmr_map_cases, fmr_map_desc);

static void mrc_map_phys_fmr_bad_args(struct kunit *test)
{
	const struct fmr_map_case *p = test->param_value;
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = fmr_alloc(test, 0, LW);
	u64 pages[FMR_PAGES + 1] = {};
	unsigned int mark = ctx->hw->log_len;
	u32 key = mr->key;

	memcpy(pages, fmr_pages, sizeof(fmr_pages));
	pages[0] = p->page0;
	KUNIT_EXPECT_EQ(test, mrc_map_phys_fmr(mr, p->no_list ? NULL : pages,
					       p->npages, p->iova), p->ret);

	/* Refused before the device was touched: still FREE, same key. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, mr->key, key);
	assert_free_ctx(test, mr, key);
	KUNIT_EXPECT_EQ(test, fmr_map(mr, FMR_IOVA), 0);
}

static void mrc_map_phys_fmr_read_only_entries(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = fmr_alloc(test, 0, RR);
	const struct mrc_mkey_ctx *c;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, fmr_map(mr, FMR_IOVA), 0);
	c = fake_hw_ctx(ctx->hw, mr->key);
	KUNIT_EXPECT_EQ(test, c->access, (u32)RR);
	for (i = 0; i < FMR_NP; i++)
		KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, i),
				fmr_pages[i] | MRC_MTT_READ);
}

static void mrc_map_phys_fmr_write_fails_keeps_mapping(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = fmr_alloc(test, 0, LW);
	u32 key;

	KUNIT_ASSERT_EQ(test, fmr_map(mr, FMR_IOVA), 0);
	key = mr->key;

	/* A failed remap leaves the previous mapping live and its key. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_XLT, 1);
	KUNIT_EXPECT_EQ(test, fmr_map(mr, 0x9000), -EIO);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, fmr_map(mr, 0x9000), -EIO);
	KUNIT_EXPECT_EQ(test, mr->key, key);
	assert_mapped(test, key, FMR_IOVA);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, key), (void *)mr);

	/* And the next map works. */
	KUNIT_EXPECT_EQ(test, fmr_map(mr, 0x9000), 0);
	assert_mapped(test, mr->key, 0x9000);
}

static void mrc_map_phys_fmr_not_fmr(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int mark;

	ctx->dma_mr = mrc_reg_dma_mr(&ctx->pd, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->dma_mr);

	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, fmr_map(ctx->dma_mr, FMR_IOVA), -EINVAL);
	KUNIT_EXPECT_EQ(test, fmr_map(NULL, FMR_IOVA), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(&ctx->dma_mr, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
}

static void mrc_unmap_fmr_batch_one_fence(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct fake_hw *hw = ctx->hw;
	unsigned int mark, i, mkeys, fences, invs;
	struct mrc_mr *mrs[FMR_NUM];
	u32 keys[FMR_NUM];

	/* Three mapped FMRs and one never mapped. */
	for (i = 0; i < FMR_NUM; i++) {
		mrs[i] = fmr_alloc(test, i, LW);
		if (i < 3)
			KUNIT_ASSERT_EQ(test, fmr_map(mrs[i], FMR_IOVA), 0);
		keys[i] = mrs[i]->key;
	}

	mark = hw->log_len;
	mkeys = hw->calls[FAKE_HW_WRITE_MKEY];
	fences = hw->calls[FAKE_HW_FENCE];
	invs = hw->calls[FAKE_HW_INVALIDATE_MKEY];
	KUNIT_ASSERT_EQ(test, mrc_unmap_fmr(mrs, FMR_NUM), 0);

	/* A FREE context per mapped FMR, then one fence for the batch. */
	KUNIT_EXPECT_EQ(test, hw->calls[FAKE_HW_WRITE_MKEY], mkeys + 3);
	KUNIT_EXPECT_EQ(test, hw->calls[FAKE_HW_FENCE], fences + 1);
	KUNIT_EXPECT_EQ(test, hw->calls[FAKE_HW_INVALIDATE_MKEY], invs);
	KUNIT_EXPECT_EQ(test, hw->log_len, mark + 4);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, fake_hw_log_at(hw, mark + i),
				FAKE_HW_WRITE_MKEY);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(hw, mark + 3), FAKE_HW_FENCE);
	for (i = 0; i < FMR_NUM; i++) {
		/* Same key, no access. */
		KUNIT_EXPECT_EQ(test, mrs[i]->key, keys[i]);
		assert_free_ctx(test, mrs[i], keys[i]);
	}

	/* Unmapping unmapped FMRs writes nothing, not even a fence. */
	mark = hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(mrs, FMR_NUM), 0);
	KUNIT_EXPECT_EQ(test, hw->log_len, mark);
}

static void mrc_unmap_fmr_write_fails_others_unmapped(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mrs[2];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		mrs[i] = fmr_alloc(test, i, LW);
		KUNIT_ASSERT_EQ(test, fmr_map(mrs[i], FMR_IOVA), 0);
	}

	/* The first fails and stays mapped; the second is still unmapped. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(mrs, 2), -EIO);
	assert_mapped(test, mrs[0]->key, FMR_IOVA);
	assert_free_ctx(test, mrs[1], mrs[1]->key);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(mrs[0]), -EBUSY);
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(mrs, 2), 0);
	assert_free_ctx(test, mrs[0], mrs[0]->key);
}

static void mrc_unmap_fmr_bad_list(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mrs[2];
	unsigned int mark;

	mrs[0] = fmr_alloc(test, 0, LW);
	KUNIT_ASSERT_EQ(test, fmr_map(mrs[0], FMR_IOVA), 0);
	mrs[1] = NULL;

	/* Checked as a whole before anything is unmapped. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(NULL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(mrs, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(mrs, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_mapped(test, mrs[0]->key, FMR_IOVA);
}

static void mrc_dealloc_fmr_mapped_busy(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = fmr_alloc(test, 0, LW);
	unsigned int mark;
	u32 key;

	KUNIT_ASSERT_EQ(test, fmr_map(mr, FMR_IOVA), 0);
	key = mr->key;

	/* As ib_dealloc_fmr(): unmap first. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(mr), -EBUSY);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_mapped(test, key, FMR_IOVA);

	KUNIT_ASSERT_EQ(test, mrc_unmap_fmr(&mr, 1), 0);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(mr), 0);
	ctx->fmr[0] = NULL;
	/* Invalidated, then freed under the key of the last map. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark + 1);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(ctx->hw, mark),
			FAKE_HW_INVALIDATE_MKEY);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, key));
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_dealloc_fmr_not_fmr(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;

	ctx->dma_mr = mrc_reg_dma_mr(&ctx->pd, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->dma_mr);

	/* A caller bug: refused and counted, the MR untouched. */
	fake_hw_expect_misuse(ctx->hw, 1);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(ctx->dma_mr), -EINVAL);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, ctx->dma_mr->key)->state,
			(u8)MRC_MKEY_VALID);
}

/* ---- mrcore_fmr_pool ---- */

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

static int fmr_test_init(struct kunit *test)
{
	struct fmr_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;
	init_completion(&ctx->flushed);
	atomic_set(&ctx->flush_calls, 0);

	fake_hw_default_caps(&caps);
	caps.page_size_bitmap |= SZ_4K;
	ctx->hw = fake_hw_create(test, "mrc-kunit-fmr", &caps);
	ctx->mdev = &ctx->hw->mdev;
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd), 0);
	ctx->mkeys0 = atomic_read(&ctx->mdev->num_mkeys);
	return 0;
}

static void fmr_test_exit(struct kunit *test)
{
	struct fmr_test_ctx *ctx = test->priv;
	unsigned int i;

	/* Also runs when init or a case failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_XLT, 0);
	atomic_set(&ctx->mdev->inject, 0);
	for (i = 0; i < FMR_HELD; i++)
		if (ctx->held[i])
			KUNIT_EXPECT_EQ(test, mrc_fmr_pool_unmap(ctx->held[i]), 0);
	if (ctx->pool)
		KUNIT_EXPECT_EQ(test, mrc_destroy_fmr_pool(ctx->pool), 0);
	for (i = 0; i < FMR_NUM; i++) {
		if (IS_ERR_OR_NULL(ctx->fmr[i]))
			continue;
		KUNIT_EXPECT_EQ(test, mrc_unmap_fmr(&ctx->fmr[i], 1), 0);
		KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(ctx->fmr[i]), 0);
	}
	if (!IS_ERR_OR_NULL(ctx->dma_mr))
		KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->dma_mr), 0);
	if (ctx->pd.pdn)
		mrc_pd_fini(&ctx->pd);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case fmr_test_cases[] = {
	KUNIT_CASE(mrc_alloc_fmr_free_context),
	KUNIT_CASE_PARAM(mrc_alloc_fmr_bad_args, fmr_attr_gen_params),
	KUNIT_CASE(mrc_alloc_fmr_bad_pd_or_attr),
	KUNIT_CASE_PARAM(mrc_alloc_fmr_fail_unwinds, fmr_fail_gen_params),
	KUNIT_CASE(mrc_map_phys_fmr_writes_mtt_then_context),
	KUNIT_CASE(mrc_map_phys_fmr_remap_other_table),
	KUNIT_CASE(mrc_map_phys_fmr_max_maps),
	KUNIT_CASE_PARAM(mrc_map_phys_fmr_bad_args, fmr_map_gen_params),
	KUNIT_CASE(mrc_map_phys_fmr_read_only_entries),
	KUNIT_CASE(mrc_map_phys_fmr_write_fails_keeps_mapping),
	KUNIT_CASE(mrc_map_phys_fmr_not_fmr),
	KUNIT_CASE(mrc_unmap_fmr_batch_one_fence),
	KUNIT_CASE(mrc_unmap_fmr_write_fails_others_unmapped),
	KUNIT_CASE(mrc_unmap_fmr_bad_list),
	KUNIT_CASE(mrc_dealloc_fmr_mapped_busy),
	KUNIT_CASE(mrc_dealloc_fmr_not_fmr),
	{}
};

static struct kunit_suite fmr_test_suite = {
	.name = "mrcore_fmr",
	.init = fmr_test_init,
	.exit = fmr_test_exit,
	.test_cases = fmr_test_cases,
};

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

kunit_test_suites(&fmr_test_suite, &fmr_pool_test_suite);
