// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore fast registration against the fake backend:
 * allocation (checks, the FREE context, unwinding at every stage), the
 * device-side REG_MR (state, key, page list and access checks; the exact
 * MTT entries and context it leaves in device memory; its write order),
 * invalidation (exact key, kind, PD, windows; VALID -> FREE) and
 * deallocation; the same for SG_GAPS (KLM-mode) fast-reg MRs, whose
 * REG_MR writes one KLM entry per DMA range.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

#define FRWR_PAGES	16
#define FRWR_BIG	100	/* pages: more than one write_xlt */
#define LW		MRC_ACCESS_LOCAL_WRITE
#define RR		MRC_ACCESS_REMOTE_READ
#define RW		MRC_ACCESS_REMOTE_WRITE
#define LRW		(LW | RR | RW)

/* A page list of three 4 KiB pages covering 0x2100 bytes from 0x200 in. */
#define FRWR_IOVA	0xabc200ULL
#define FRWR_LEN	0x2100ULL
#define FRWR_SHIFT	12
static const u64 frwr_pages[] = { 0x100000, 0x7000, 0x345000 };

struct frwr_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct mrc_pd pd;
	struct mrc_pd pd2;
	struct mrc_mr *mr;	/* fast-reg MR, dealloc'd by .exit */
	struct mrc_mr *dma_mr;	/* a plain MR, dereg'd by .exit */
	int mkeys0;
};

/* @key with its variant moved on by @n, as ib_inc_rkey() does. */
static u32 frwr_key(u32 key, u8 n)
{
	return mrc_make_key(mrc_key_index(key), mrc_key_variant(key) + n);
}

static struct mrc_mr *frwr_alloc(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;

	ctx->mr = mrc_alloc_frmr(&ctx->pd, FRWR_PAGES);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mr);
	return ctx->mr;
}

static int frwr_reg(struct mrc_mr *mr, u32 key, u32 access)
{
	return mrc_frmr_exec_reg(mr, key, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT,
				 frwr_pages, ARRAY_SIZE(frwr_pages), access);
}

/* Nothing allocated is left: keys, translation space, MRs. */
static bool assert_baseline(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	bool ok;

	ok = atomic_read(&mdev->num_mkeys) == ctx->mkeys0 &&
	     atomic_read(&mdev->xlt_segs_used) == 0 &&
	     atomic_read(&mdev->num_mrs) == 0 &&
	     atomic_read(&mdev->num_mrs_type[MRC_MR_FAST_REG]) == 0;
	if (!ok)
		KUNIT_FAIL(test, "leak: mkeys %d/%d xlt segs %d mrs %d fast_reg %d",
			   atomic_read(&mdev->num_mkeys), ctx->mkeys0,
			   atomic_read(&mdev->xlt_segs_used),
			   atomic_read(&mdev->num_mrs),
			   atomic_read(&mdev->num_mrs_type[MRC_MR_FAST_REG]));
	return ok;
}

/* The slot of @mr holds a FREE context with @key and no translation. */
static void assert_free_ctx(struct kunit *test, struct mrc_mr *mr, u32 key)
{
	struct frwr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = fake_hw_ctx(ctx->hw, key);

	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_FREE);
	KUNIT_EXPECT_EQ(test, c->access_mode, mr->mode);
	KUNIT_EXPECT_EQ(test, c->pdn, mr->pd->pdn);
	KUNIT_EXPECT_EQ(test, c->access, 0U);
	KUNIT_EXPECT_EQ(test, c->xlt_entries, 0U);
	KUNIT_EXPECT_EQ(test, c->xlt_offset, mr->xlt.offset);
}

static void mrc_alloc_frmr_free_context(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	struct mrc_mr *mr;

	mr = frwr_alloc(test);

	/* One context write: no entries yet, so no fence. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 false));
	assert_free_ctx(test, mr, mr->key);
	KUNIT_EXPECT_EQ(test, mr->type, MRC_MR_FAST_REG);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, mr->key),
			    (void *)mr);
	/* Space for every page was reserved up front. */
	KUNIT_EXPECT_GE(test, mr->xlt.size,
			(u64)FRWR_PAGES * MRC_MTT_ENTRY_SIZE);
	KUNIT_EXPECT_EQ(test,
			atomic_read(&ctx->mdev->num_mrs_type[MRC_MR_FAST_REG]),
			1);

	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mr), 0);
	ctx->mr = NULL;
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_alloc_frmr_bad_args(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	u32 max = mrc_frmr_max_pages(ctx->mdev);
	unsigned int mark = ctx->hw->log_len;
	struct mrc_pd nopd = {};

	/* Default fake caps: 64 segments of 8 entries. */
	KUNIT_EXPECT_EQ(test, max, 512U);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr(&ctx->pd, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr(&ctx->pd, max + 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr(NULL, 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr(&nopd, 1)), -EINVAL);

	/* Refused before anything reached the device. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));

	/* The whole area is one MR's. */
	ctx->mr = mrc_alloc_frmr(&ctx->pd, max);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mr);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr(&ctx->pd, 1)), -ENOSPC);
}

struct frwr_fail_case {
	const char *desc;
	int stage;		/* enum mrc_stage; -1: fake write_mkey */
	int ret;
};

static const struct frwr_fail_case frwr_fail_cases[] = {
	{ "injected at key_alloc", MRC_STAGE_KEY_ALLOC, -ENOSPC },
	{ "injected at xlt_alloc", MRC_STAGE_XLT_ALLOC, -ENOSPC },
	{ "injected at write_mkey", MRC_STAGE_WRITE_MKEY, -EIO },
	{ "backend write_mkey fails", -1, -EIO },
};

static void frwr_fail_desc(const struct frwr_fail_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(frwr_fail, frwr_fail_cases, frwr_fail_desc);

static void mrc_alloc_frmr_fail_unwinds(struct kunit *test)
{
	const struct frwr_fail_case *p = test->param_value;
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;

	/* Before: one failure armed, on the next pass through the stage. */
	if (p->stage < 0)
		fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	else
		atomic_set(&ctx->mdev->inject,
			   1 << MRC_INJECT_LEFT_SHIFT | (p->stage + 1));

	mr = mrc_alloc_frmr(&ctx->pd, FRWR_PAGES);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), p->ret);

	/* After: nothing held, nothing VALID or FREE left in device memory. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->inject), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));

	/* And the next allocation works. */
	frwr_alloc(test);
	assert_free_ctx(test, ctx->mr, ctx->mr->key);
}

static void mrc_frmr_exec_reg_writes_mtt_then_context(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 old = mr->key, key = frwr_key(old, 1);
	unsigned int mark = ctx->hw->log_len, i;

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LRW), 0);

	/* Entries, one fence, the context last. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	c = fake_hw_ctx(ctx->hw, key);
	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_MTT);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)FRWR_SHIFT);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, c->access, (u32)LRW);
	KUNIT_EXPECT_EQ(test, c->iova, FRWR_IOVA);
	KUNIT_EXPECT_EQ(test, c->length, FRWR_LEN);
	KUNIT_EXPECT_EQ(test, c->xlt_offset, mr->xlt.offset);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, (u32)ARRAY_SIZE(frwr_pages));
	for (i = 0; i < ARRAY_SIZE(frwr_pages); i++)
		KUNIT_EXPECT_EQ_MSG(test, fake_hw_mtt(ctx->hw, c, i),
				    frwr_pages[i] | MRC_MTT_READ |
				    MRC_MTT_WRITE, "MTT entry %u", i);

	/* The WR's key is the MR's now; the previous one finds nothing. */
	KUNIT_EXPECT_EQ(test, mr->key, key);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, key), (void *)mr);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, old));
}

static void mrc_frmr_exec_reg_same_key(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = mr->key;

	/* A ULP that does not rotate the key registers with the same one. */
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, key, LW), 0);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, key), (void *)mr);
}

static void mrc_frmr_exec_reg_valid_fails(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);
	unsigned int mark;

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW), 0);

	/* IBTA: a second REG_MR without an invalidation fails, unchanged. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, frwr_key(key, 1), LRW), -EINVAL);
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, key, LW), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, mr->key, key);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->key, key);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->access, (u32)LW);
}

struct frwr_reg_case {
	const char *desc;
	s8 key_index;		/* added to the MR's index */
	u64 iova;
	u64 length;
	u8 page_shift;
	u64 page0;		/* replaces the first page */
	u32 npages;
	u32 access;
	int ret;
};

#define FRWR_NP	ARRAY_SIZE(frwr_pages)

static const struct frwr_reg_case frwr_reg_cases[] = {
	{ "key of another index", 1, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT,
	  0x100000, FRWR_NP, LW, -EINVAL },
	{ "no pages", 0, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT, 0x100000, 0, LW,
	  -EINVAL },
	{ "more pages than max_pages", 0, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT,
	  0x100000, FRWR_PAGES + 1, LW, -EINVAL },
	{ "remote write without local write", 0, FRWR_IOVA, FRWR_LEN,
	  FRWR_SHIFT, 0x100000, FRWR_NP, RW | RR, -EINVAL },
	{ "remote atomic without local write", 0, FRWR_IOVA, FRWR_LEN,
	  FRWR_SHIFT, 0x100000, FRWR_NP, MRC_ACCESS_REMOTE_ATOMIC, -EINVAL },
	{ "unknown access bit", 0, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT,
	  0x100000, FRWR_NP, LW | BIT(12), -EINVAL },
	{ "zero based", 0, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT, 0x100000,
	  FRWR_NP, LW | MRC_ACCESS_ZERO_BASED, -EINVAL },
	{ "on demand", 0, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT, 0x100000,
	  FRWR_NP, LW | MRC_ACCESS_ON_DEMAND, -EOPNOTSUPP },
	{ "page size not in the caps", 0, FRWR_IOVA, FRWR_LEN, 13, 0x100000,
	  FRWR_NP, LW, -EINVAL },
	{ "page size below 4 KiB", 0, FRWR_IOVA, FRWR_LEN, 9, 0x100000,
	  FRWR_NP, LW, -EINVAL },
	{ "misaligned page", 0, FRWR_IOVA, FRWR_LEN, FRWR_SHIFT, 0x100800,
	  FRWR_NP, LW, -EINVAL },
	{ "length beyond the pages", 0, FRWR_IOVA, FRWR_LEN + 0x1000,
	  FRWR_SHIFT, 0x100000, FRWR_NP, LW, -EINVAL },
	{ "zero length", 0, FRWR_IOVA, 0, FRWR_SHIFT, 0x100000, FRWR_NP, LW,
	  -EINVAL },
	{ "range wraps", 0, U64_MAX - 0x100, FRWR_LEN, FRWR_SHIFT, 0x100000,
	  FRWR_NP, LW, -EINVAL },
};

static void frwr_reg_desc(const struct frwr_reg_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(frwr_reg, frwr_reg_cases, frwr_reg_desc);

static void mrc_frmr_exec_reg_bad_args(struct kunit *test)
{
	const struct frwr_reg_case *p = test->param_value;
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u64 pages[FRWR_PAGES + 1] = {};
	unsigned int mark = ctx->hw->log_len;
	u32 key;

	memcpy(pages, frwr_pages, sizeof(frwr_pages));
	pages[0] = p->page0;
	key = mrc_make_key(mrc_key_index(mr->key) + p->key_index,
			   mrc_key_variant(mr->key) + 1);

	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_reg(mr, key, p->iova, p->length,
						p->page_shift, pages,
						p->npages, p->access),
			p->ret);

	/* Refused before the device was touched: still FREE, same key. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_free_ctx(test, mr, mr->key);

	/* And a good REG_MR still works. */
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, mr->key, LW), 0);
}

static void mrc_frmr_exec_reg_access_sets_entries(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);
	unsigned int i;

	/* Read-only rights: entries without the W bit. */
	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, RR), 0);
	c = fake_hw_ctx(ctx->hw, key);
	KUNIT_EXPECT_EQ(test, c->access, (u32)RR);
	for (i = 0; i < ARRAY_SIZE(frwr_pages); i++)
		KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, i),
				frwr_pages[i] | MRC_MTT_READ);

	/* Registration-only hints are accepted and not stored. */
	KUNIT_ASSERT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			0);
	key = frwr_key(key, 1);
	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW |
				       MRC_ACCESS_RELAXED_ORDERING), 0);
	c = fake_hw_ctx(ctx->hw, key);
	KUNIT_EXPECT_EQ(test, c->access, (u32)LW);
	for (i = 0; i < ARRAY_SIZE(frwr_pages); i++)
		KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, i),
				frwr_pages[i] | MRC_MTT_READ | MRC_MTT_WRITE);
}

static void mrc_frmr_exec_reg_max_pages(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	unsigned int mark, i;
	struct mrc_mr *mr;
	u64 *pages;

	pages = kunit_kcalloc(test, FRWR_BIG, sizeof(*pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pages);
	for (i = 0; i < FRWR_BIG; i++)
		pages[i] = 0x40000000ULL + (u64)(FRWR_BIG - i) * SZ_4K;
	ctx->mr = mrc_alloc_frmr(&ctx->pd, FRWR_BIG);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mr);
	mr = ctx->mr;

	/* Exactly max_pages entries, several encoding chunks' worth. */
	mark = ctx->hw->log_len;
	KUNIT_ASSERT_EQ(test, mrc_frmr_exec_reg(mr, mr->key, 0x1000,
						FRWR_BIG * SZ_4K, 12, pages,
						FRWR_BIG, LW), 0);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	KUNIT_EXPECT_GT(test, ctx->hw->calls[FAKE_HW_WRITE_XLT], 1U);
	c = fake_hw_ctx(ctx->hw, mr->key);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, (u32)FRWR_BIG);
	for (i = 0; i < FRWR_BIG; i++)
		KUNIT_EXPECT_EQ_MSG(test, fake_hw_mtt(ctx->hw, c, i),
				    pages[i] | MRC_MTT_READ | MRC_MTT_WRITE,
				    "MTT entry %u", i);
}

static void mrc_frmr_exec_reg_not_fast_reg(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	unsigned int mark;

	ctx->dma_mr = mrc_reg_dma_mr(&ctx->pd, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->dma_mr);

	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, frwr_reg(ctx->dma_mr, ctx->dma_mr->key, LW),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, frwr_reg(NULL, 0, LW), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
}

static void mrc_frmr_exec_reg_write_fails_stays_free(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 old = mr->key, key = frwr_key(old, 1);

	/* A failed entry write or context write leaves the MR FREE. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_XLT, 1);
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, key, LW), -EIO);
	assert_free_ctx(test, mr, old);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, key, LW), -EIO);
	assert_free_ctx(test, mr, old);

	/* The key did not move on: the old one still finds the MR. */
	KUNIT_EXPECT_EQ(test, mr->key, old);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, old), (void *)mr);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, key));

	KUNIT_EXPECT_EQ(test, frwr_reg(mr, key, LW), 0);
}

static void mrc_frmr_exec_inv_to_free(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);
	unsigned int mark;

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LRW), 0);

	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			0);

	/* One context write, FREE with the same key, no translation. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark + 1);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(ctx->hw, mark),
			FAKE_HW_WRITE_MKEY);
	assert_free_ctx(test, mr, key);
	KUNIT_EXPECT_EQ(test, mr->key, key);

	/* FREE again: the next REG_MR is accepted. */
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, frwr_key(key, 1), LW), 0);
}

static void mrc_frmr_exec_inv_stale_variant(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 old = mr->key, key = frwr_key(old, 1);
	unsigned int mark;

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW), 0);

	/* The key before the REG_MR's, and one never used, are refused. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, old),
			-ENOKEY);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn,
						frwr_key(key, 1)), -ENOKEY);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);

	/* The current one succeeds. */
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			0);
	assert_free_ctx(test, mr, key);
}

static void mrc_frmr_exec_inv_free_is_noop(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	unsigned int mark = ctx->hw->log_len;

	/* Invalidating a FREE MR succeeds and writes nothing. */
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn,
						mr->key), 0);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_free_ctx(test, mr, mr->key);
}

static void mrc_frmr_exec_inv_not_fast_reg(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	unsigned int mark;

	ctx->dma_mr = mrc_reg_dma_mr(&ctx->pd, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->dma_mr);

	/* IBTA: only a fast-reg MR is invalidated; the others stay VALID. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(mdev, ctx->pd.pdn,
						ctx->dma_mr->key), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(mdev, ctx->pd.pdn,
						mdev->local_dma_lkey),
			-EINVAL);
	/* Keys that are not live at all. */
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(mdev, ctx->pd.pdn,
						mrc_make_key(40, 1)), -ENOKEY);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(mdev, ctx->pd.pdn, 0),
			-ENOKEY);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(mdev, ctx->pd.pdn, U32_MAX),
			-ENOKEY);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, ctx->dma_mr->key)->state,
			(u8)MRC_MKEY_VALID);
}

static void mrc_frmr_exec_inv_other_pd(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW), 0);

	/* A QP of another PD may not invalidate the MR. */
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd2.pdn, key),
			-EPERM);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);
}

static void mrc_frmr_exec_inv_busy_with_windows(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW | MRC_ACCESS_MW_BIND), 0);

	/* IBTA: not while windows are bound to it. */
	atomic_set(&mr->num_mw, 1);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);
	atomic_set(&mr->num_mw, 0);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			0);
}

static void mrc_frmr_exec_inv_write_fails_stays_valid(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW), 0);

	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			-EIO);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);
	/* Still VALID for mrcore too: a REG_MR is refused, an INV works. */
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, key, LW), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			0);
}

static int frwr_reg_nowait(struct mrc_mr *mr, u32 key, u32 npages,
			   u32 access)
{
	return mrc_frmr_exec_reg_nowait(mr, key, FRWR_IOVA, FRWR_LEN,
					FRWR_SHIFT, frwr_pages, npages,
					access);
}

/*
 * The _nowait forms, for an engine that cannot sleep: while the MR's
 * mutex is held they change nothing and check nothing (-EAGAIN); free,
 * they are the REG_MR and invalidation of the other forms, checks and
 * write order included.
 */
static void mrc_frmr_exec_nowait_mutex_busy(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 old = mr->key, key = frwr_key(old, 1);
	u32 n = ARRAY_SIZE(frwr_pages);
	unsigned int mark;

	mutex_lock(&mr->lock);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, frwr_reg_nowait(mr, key, n, LRW), -EAGAIN);
	/* Not even checked: an empty page list is refused only later. */
	KUNIT_EXPECT_EQ(test, frwr_reg_nowait(mr, key, 0, LRW), -EAGAIN);
	mutex_unlock(&mr->lock);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_free_ctx(test, mr, old);
	KUNIT_EXPECT_EQ(test, mr->key, old);

	KUNIT_EXPECT_EQ(test, frwr_reg_nowait(mr, key, 0, LRW), -EINVAL);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, frwr_reg_nowait(mr, key, n, LRW), 0);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, mr->key, key);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, key), (void *)mr);
	/* VALID: refused, as by mrc_frmr_exec_reg(). */
	KUNIT_EXPECT_EQ(test, frwr_reg_nowait(mr, frwr_key(key, 1), n, LW),
			-EINVAL);

	mutex_lock(&mr->lock);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_exec_inv_nowait(ctx->mdev, ctx->pd.pdn, 0,
						  key), -EAGAIN);
	mutex_unlock(&mr->lock);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);

	/* The checks of mrc_exec_inv(), then VALID -> FREE. */
	KUNIT_EXPECT_EQ(test, mrc_exec_inv_nowait(ctx->mdev, ctx->pd.pdn, 0,
						  frwr_key(key, 1)), -ENOKEY);
	KUNIT_EXPECT_EQ(test, mrc_exec_inv_nowait(ctx->mdev, ctx->pd2.pdn, 0,
						  key), -EPERM);
	KUNIT_EXPECT_EQ(test, mrc_exec_inv_nowait(ctx->mdev, ctx->pd.pdn, 0,
						  key), 0);
	assert_free_ctx(test, mr, key);
}

/*
 * A backend's write_mkey that may not wait for a drain gives up with
 * -EAGAIN (struct mrc_hw_ops): the invalidation fails so, the MR still
 * VALID in mrcore's record, and the engine's second execution, where it
 * can sleep, finishes it.
 */
static void mrc_exec_inv_nowait_drain_later(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW), 0);

	fake_hw_fail_next_err(ctx->hw, FAKE_HW_WRITE_MKEY, 1, -EAGAIN);
	KUNIT_EXPECT_EQ(test, mrc_exec_inv_nowait(ctx->mdev, ctx->pd.pdn, 0,
						  key), -EAGAIN);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, frwr_key(key, 1), LW), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr->key, key);
	KUNIT_EXPECT_EQ(test, mrc_exec_inv(ctx->mdev, ctx->pd.pdn, 0, key), 0);
	assert_free_ctx(test, mr, key);
	KUNIT_EXPECT_EQ(test, frwr_reg(mr, frwr_key(key, 1), LW), 0);
}

static void mrc_frmr_reg_inv_cycles_wrap_variant(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = mr->key;
	unsigned int i;

	/* Each cycle rotates the key, as nvme-rdma does; the variant wraps. */
	for (i = 0; i < 300; i++) {
		key = frwr_key(key, 1);
		KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LRW), 0);
		KUNIT_ASSERT_EQ(test, fake_hw_ctx(ctx->hw, key)->key, key);
		KUNIT_ASSERT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn,
							key), 0);
	}
	KUNIT_EXPECT_EQ(test, mr->key, key);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, key), (void *)mr);
}

static void mrc_dealloc_frmr_valid(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);
	unsigned int mark;

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW), 0);

	/* Invalidated first, then everything freed under the current key. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mr), 0);
	ctx->mr = NULL;
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark + 1);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(ctx->hw, mark),
			FAKE_HW_INVALIDATE_MKEY);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, key));
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			-ENOKEY);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_dealloc_frmr_invalidate_fails(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = frwr_alloc(test);
	u32 key = frwr_key(mr->key, 1);

	KUNIT_ASSERT_EQ(test, frwr_reg(mr, key, LW), 0);

	/* A failed dealloc leaves the MR registered and findable by key. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_INVALIDATE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mr), -EIO);
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_inv(ctx->mdev, ctx->pd.pdn, key),
			0);
}

static void mrc_dealloc_frmr_not_fast_reg(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;

	ctx->dma_mr = mrc_reg_dma_mr(&ctx->pd, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->dma_mr);

	/* A caller bug: refused and counted, the MR untouched. */
	fake_hw_expect_misuse(ctx->hw, 1);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(ctx->dma_mr), -EINVAL);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, ctx->dma_mr->key)->state,
			(u8)MRC_MKEY_VALID);
}

/* SG_GAPS: three ranges of odd lengths and alignments, 0x2010 bytes. */
#define GAPS_MAX	8
#define GAPS_IOVA	0x77000001ULL
#define GAPS_LEN	(0x10ULL + 0x1fff + 0x1)
static const struct mrc_phys_buf gaps_bufs[] = {
	{ 0x100003, 0x10 }, { 0x7000, 0x1fff }, { 0x345678, 0x1 },
};

static struct mrc_mr *gaps_alloc(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;

	ctx->mr = mrc_alloc_frmr_sg_gaps(&ctx->pd, GAPS_MAX);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mr);
	return ctx->mr;
}

static int gaps_reg(struct mrc_mr *mr, u32 key, u32 access)
{
	return mrc_frmr_exec_reg_klm(mr, key, GAPS_IOVA, gaps_bufs,
				     ARRAY_SIZE(gaps_bufs), access);
}

static void mrc_alloc_frmr_sg_gaps_free_context(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	struct mrc_pd nopd = {};
	struct mrc_mr *mr;

	/* Bad arguments first: nothing reaches the device. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr_sg_gaps(&ctx->pd, 0)),
			-EINVAL);
	/* Default fake caps: 64 segments of 4 KLM entries. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr_sg_gaps(&ctx->pd, 257)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr_sg_gaps(&nopd, 1)),
			-EINVAL);
	ctx->mdev->caps.flags &= ~MRC_CAP_KLM;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_frmr_sg_gaps(&ctx->pd, 1)),
			-EOPNOTSUPP);
	ctx->mdev->caps.flags |= MRC_CAP_KLM;
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);

	/* One FREE context in KLM mode; space for every entry reserved. */
	mr = gaps_alloc(test);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 false));
	KUNIT_EXPECT_EQ(test, mr->type, MRC_MR_FAST_REG);
	KUNIT_EXPECT_EQ(test, mr->mode, (u8)MRC_ACCESS_MODE_KLM);
	assert_free_ctx(test, mr, mr->key);
	KUNIT_EXPECT_GE(test, mr->xlt.size,
			(u64)GAPS_MAX * MRC_KLM_ENTRY_SIZE);

	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mr), 0);
	ctx->mr = NULL;
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_frmr_exec_reg_klm_writes_entries(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = gaps_alloc(test);
	u32 old = mr->key, key = frwr_key(old, 1);
	unsigned int mark = ctx->hw->log_len, i;
	const struct mrc_mkey_ctx *c;

	KUNIT_ASSERT_EQ(test, gaps_reg(mr, key, LRW), 0);

	/* Entries, one fence, the context last. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	c = fake_hw_ctx(ctx->hw, key);
	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_KLM);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, c->access, (u32)LRW);
	KUNIT_EXPECT_EQ(test, c->iova, GAPS_IOVA);
	KUNIT_EXPECT_EQ(test, c->length, GAPS_LEN);
	KUNIT_EXPECT_EQ(test, c->xlt_offset, mr->xlt.offset);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, (u32)ARRAY_SIZE(gaps_bufs));
	/* One entry per range, through the local DMA key. */
	for (i = 0; i < ARRAY_SIZE(gaps_bufs); i++)
		fake_hw_expect_klm(ctx->hw, c, i, gaps_bufs[i].size,
				   ctx->mdev->local_dma_lkey,
				   gaps_bufs[i].addr);

	KUNIT_EXPECT_EQ(test, mr->key, key);
	KUNIT_EXPECT_EQ(test, mr->length, GAPS_LEN);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, key), (void *)mr);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, old));
}

static void mrc_frmr_exec_reg_klm_max_entries(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_phys_buf bufs[GAPS_MAX];
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr = gaps_alloc(test);
	unsigned int i;

	/* The largest range and exactly max_entries of them. */
	for (i = 0; i < GAPS_MAX; i++)
		bufs[i] = (struct mrc_phys_buf){ (u64)i * SZ_4G + 1,
						 i ? 1 + i : MRC_KLM_MAX_BCOUNT };
	KUNIT_ASSERT_EQ(test, mrc_frmr_exec_reg_klm(mr, mr->key, 0, bufs,
						    GAPS_MAX, LW), 0);
	c = fake_hw_ctx(ctx->hw, mr->key);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, (u32)GAPS_MAX);
	for (i = 0; i < GAPS_MAX; i++)
		fake_hw_expect_klm(ctx->hw, c, i, bufs[i].size,
				   ctx->mdev->local_dma_lkey, bufs[i].addr);
}

struct gaps_reg_case {
	const char *desc;
	s8 key_index;		/* added to the MR's index */
	u64 iova;
	u32 nbufs;
	u64 size1;		/* replaces the size of range 1 */
	u64 addr1;		/* replaces the address of range 1 */
	u32 access;
	int ret;
};

#define GAPS_N	ARRAY_SIZE(gaps_bufs)

static const struct gaps_reg_case gaps_reg_cases[] = {
	{ "key of another index", 1, GAPS_IOVA, GAPS_N, 0x1fff, 0x7000, LW,
	  -EINVAL },
	{ "no ranges", 0, GAPS_IOVA, 0, 0x1fff, 0x7000, LW, -EINVAL },
	{ "more ranges than max_entries", 0, GAPS_IOVA, GAPS_MAX + 1, 0x1fff,
	  0x7000, LW, -EINVAL },
	{ "empty range", 0, GAPS_IOVA, GAPS_N, 0, 0x7000, LW, -EINVAL },
	{ "range longer than a KLM entry", 0, GAPS_IOVA, GAPS_N,
	  MRC_KLM_MAX_BCOUNT + 1, 0x7000, LW, -EINVAL },
	{ "range wraps", 0, GAPS_IOVA, GAPS_N, 0x1fff, U64_MAX - 0x10, LW,
	  -EINVAL },
	{ "key range wraps", 0, U64_MAX - 0x100, GAPS_N, 0x1fff, 0x7000, LW,
	  -EINVAL },
	{ "zero based", 0, GAPS_IOVA, GAPS_N, 0x1fff, 0x7000,
	  LW | MRC_ACCESS_ZERO_BASED, -EINVAL },
	{ "remote write without local write", 0, GAPS_IOVA, GAPS_N, 0x1fff,
	  0x7000, RR | RW, -EINVAL },
	{ "on demand", 0, GAPS_IOVA, GAPS_N, 0x1fff, 0x7000,
	  LW | MRC_ACCESS_ON_DEMAND, -EOPNOTSUPP },
};

static void gaps_reg_desc(const struct gaps_reg_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(gaps_reg, gaps_reg_cases, gaps_reg_desc);

static void mrc_frmr_exec_reg_klm_bad_args(struct kunit *test)
{
	const struct gaps_reg_case *p = test->param_value;
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_phys_buf bufs[GAPS_MAX + 1];
	struct mrc_mr *mr = gaps_alloc(test);
	unsigned int mark = ctx->hw->log_len, i;
	u32 key;

	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		bufs[i] = gaps_bufs[i % GAPS_N];
	bufs[1] = (struct mrc_phys_buf){ p->addr1, p->size1 };
	key = mrc_make_key(mrc_key_index(mr->key) + p->key_index,
			   mrc_key_variant(mr->key) + 1);

	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_reg_klm(mr, key, p->iova, bufs,
						    p->nbufs, p->access),
			p->ret);

	/* Refused before the device was touched: still FREE, same key. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_free_ctx(test, mr, mr->key);
	KUNIT_EXPECT_EQ(test, gaps_reg(mr, mr->key, LW), 0);
}

static void mrc_frmr_exec_reg_mode_mismatch(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *gaps = gaps_alloc(test);
	unsigned int mark = ctx->hw->log_len;
	struct mrc_mr *mtt;

	/* A page list is for MTT mode, ranges for KLM mode. */
	KUNIT_EXPECT_EQ(test, frwr_reg(gaps, gaps->key, LW), -EINVAL);
	ctx->dma_mr = mrc_alloc_frmr(&ctx->pd, FRWR_PAGES);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->dma_mr);
	mtt = ctx->dma_mr;
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, gaps_reg(mtt, mtt->key, LW), -EINVAL);
	KUNIT_EXPECT_EQ(test, gaps_reg(NULL, 0, LW), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_free_ctx(test, gaps, gaps->key);
	assert_free_ctx(test, mtt, mtt->key);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mtt), 0);
	ctx->dma_mr = NULL;
}

static void mrc_frmr_exec_reg_klm_inv_cycles(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = gaps_alloc(test);
	u32 key = mr->key;
	unsigned int i;

	/* REG_MR, REG_MR again (refused), invalidate: FREE in KLM mode. */
	for (i = 0; i < 300; i++) {
		key = frwr_key(key, 1);
		KUNIT_ASSERT_EQ(test, gaps_reg(mr, key, LRW), 0);
		KUNIT_ASSERT_EQ(test, gaps_reg(mr, frwr_key(key, 1), LW),
				-EINVAL);
		KUNIT_ASSERT_EQ(test,
				mrc_exec_inv(ctx->mdev, ctx->pd.pdn, 0, key), 0);
		KUNIT_ASSERT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
				(u8)MRC_MKEY_FREE);
	}
	assert_free_ctx(test, mr, key);

	/* A failed entry or context write leaves it FREE. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_XLT, 1);
	KUNIT_EXPECT_EQ(test, gaps_reg(mr, frwr_key(key, 1), LW), -EIO);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, gaps_reg(mr, frwr_key(key, 1), LW), -EIO);
	assert_free_ctx(test, mr, key);
	KUNIT_EXPECT_EQ(test, mr->key, key);

	/* Dealloc of a VALID SG_GAPS MR leaves nothing. */
	KUNIT_EXPECT_EQ(test, gaps_reg(mr, key, LW), 0);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mr), 0);
	ctx->mr = NULL;
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_frmr_exec_reg_klm_nowait_mutex_busy(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = gaps_alloc(test);
	u32 old = mr->key, key = frwr_key(old, 1);
	u32 n = ARRAY_SIZE(gaps_bufs);
	unsigned int mark;

	mutex_lock(&mr->lock);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_reg_klm_nowait(mr, key, GAPS_IOVA,
							   gaps_bufs, n, LRW),
			-EAGAIN);
	mutex_unlock(&mr->lock);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_free_ctx(test, mr, old);

	/* An MTT-mode REG_MR is refused before the mutex, as ever. */
	KUNIT_EXPECT_EQ(test, frwr_reg_nowait(mr, key, 1, LW), -EINVAL);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_frmr_exec_reg_klm_nowait(mr, key, GAPS_IOVA,
							   gaps_bufs, n, LRW),
			0);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, mrc_exec_inv_nowait(ctx->mdev, ctx->pd.pdn, 0,
						  key), 0);
	assert_free_ctx(test, mr, key);
}

static int frwr_test_init(struct kunit *test)
{
	struct frwr_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	caps.page_size_bitmap |= SZ_4K;
	caps.flags |= MRC_CAP_KLM;
	ctx->hw = fake_hw_create(test, "mrc-kunit-frwr", &caps);
	ctx->mdev = &ctx->hw->mdev;
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd2), 0);
	ctx->mkeys0 = atomic_read(&ctx->mdev->num_mkeys);
	return 0;
}

static void frwr_test_exit(struct kunit *test)
{
	struct frwr_test_ctx *ctx = test->priv;

	/* Also runs when init or a case failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_XLT, 0);
	atomic_set(&ctx->mdev->inject, 0);
	if (!IS_ERR_OR_NULL(ctx->mr)) {
		atomic_set(&ctx->mr->num_mw, 0);
		KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(ctx->mr), 0);
	}
	if (!IS_ERR_OR_NULL(ctx->dma_mr))
		KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->dma_mr), 0);
	if (ctx->pd.pdn)
		mrc_pd_fini(&ctx->pd);
	if (ctx->pd2.pdn)
		mrc_pd_fini(&ctx->pd2);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case frwr_test_cases[] = {
	KUNIT_CASE(mrc_alloc_frmr_free_context),
	KUNIT_CASE(mrc_alloc_frmr_bad_args),
	KUNIT_CASE_PARAM(mrc_alloc_frmr_fail_unwinds, frwr_fail_gen_params),
	KUNIT_CASE(mrc_frmr_exec_reg_writes_mtt_then_context),
	KUNIT_CASE(mrc_frmr_exec_reg_same_key),
	KUNIT_CASE(mrc_frmr_exec_reg_valid_fails),
	KUNIT_CASE_PARAM(mrc_frmr_exec_reg_bad_args, frwr_reg_gen_params),
	KUNIT_CASE(mrc_frmr_exec_reg_access_sets_entries),
	KUNIT_CASE(mrc_frmr_exec_reg_max_pages),
	KUNIT_CASE(mrc_frmr_exec_reg_not_fast_reg),
	KUNIT_CASE(mrc_frmr_exec_reg_write_fails_stays_free),
	KUNIT_CASE(mrc_frmr_exec_inv_to_free),
	KUNIT_CASE(mrc_frmr_exec_inv_stale_variant),
	KUNIT_CASE(mrc_frmr_exec_inv_free_is_noop),
	KUNIT_CASE(mrc_frmr_exec_inv_not_fast_reg),
	KUNIT_CASE(mrc_frmr_exec_inv_other_pd),
	KUNIT_CASE(mrc_frmr_exec_inv_busy_with_windows),
	KUNIT_CASE(mrc_frmr_exec_inv_write_fails_stays_valid),
	KUNIT_CASE(mrc_frmr_exec_nowait_mutex_busy),
	KUNIT_CASE(mrc_exec_inv_nowait_drain_later),
	KUNIT_CASE(mrc_frmr_reg_inv_cycles_wrap_variant),
	KUNIT_CASE(mrc_dealloc_frmr_valid),
	KUNIT_CASE(mrc_dealloc_frmr_invalidate_fails),
	KUNIT_CASE(mrc_dealloc_frmr_not_fast_reg),
	KUNIT_CASE(mrc_alloc_frmr_sg_gaps_free_context),
	KUNIT_CASE(mrc_frmr_exec_reg_klm_writes_entries),
	KUNIT_CASE(mrc_frmr_exec_reg_klm_max_entries),
	KUNIT_CASE_PARAM(mrc_frmr_exec_reg_klm_bad_args, gaps_reg_gen_params),
	KUNIT_CASE(mrc_frmr_exec_reg_mode_mismatch),
	KUNIT_CASE(mrc_frmr_exec_reg_klm_inv_cycles),
	KUNIT_CASE(mrc_frmr_exec_reg_klm_nowait_mutex_busy),
	{}
};

static struct kunit_suite frwr_test_suite = {
	.name = "mrcore_fastreg",
	.init = frwr_test_init,
	.exit = frwr_test_exit,
	.test_cases = frwr_test_cases,
};

kunit_test_suite(frwr_test_suite);
