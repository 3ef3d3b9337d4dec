// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore FMRs (drivers/mrcore/fmr.c) against the fake
 * backend; the FMR pools are tested in fmr_pool_test.c, which shares this
 * file's context and helpers (fmr_test.h) and its .init and .exit.
 *
 * mrcore_fmr: allocation (checks, the FREE context, unwinding at every
 * stage), maps (the MTT entries and VALID context they leave in device
 * memory and their write order, a new key variant and the other table on
 * every map, max_maps, argument checks, failures that keep the previous
 * mapping), the batch unmap's single fence, deallocation.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <rdma/mrcore_fmr.h>

#include "fake_hw.h"
#include "fmr_test.h"
#include "../drivers/mrcore/mrcore_loc.h"

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

/**
 * fmr_test_init() - set up a case of mrcore_fmr or mrcore_fmr_pool
 * @test: the case; its context goes in test->priv
 *
 * Registers a fake device and initialises a PD on it.
 *
 * Return: 0, or -ENOMEM; a failed assertion ends the case.
 */
int fmr_test_init(struct kunit *test)
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

/**
 * fmr_test_exit() - tear down a case of mrcore_fmr or mrcore_fmr_pool
 * @test: the case
 *
 * Gives back what the case still holds (pool maps, the pool, FMRs, the
 * DMA MR), then the PD and the fake device; also after a failure part-way.
 */
void fmr_test_exit(struct kunit *test)
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

kunit_test_suite(fmr_test_suite);
