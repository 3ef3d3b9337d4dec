// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore memory regions against the fake backend: what
 * each kind of registration writes to device memory and in which order,
 * argument checking, complete unwinding after a failure at every stage,
 * deregistration and rereg. User-memory pinning needs an mm, which a KUnit
 * thread has not; only the user-MR checks that run before pinning are
 * tested here, the rest runs in the VM tier.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

#define MR_TEST_MAX_MRS		8
#define MR_TEST_XLT_SIZE	SZ_256K
#define MR_TEST_MAX_SEGS	8
#define LW			MRC_ACCESS_LOCAL_WRITE
#define RR			MRC_ACCESS_REMOTE_READ
#define RWR			(MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE)

/*
 * A phys list that takes 4 KiB MTT entries (iova and DMA address differ in
 * bit 13) and more than one write_xlt chunk: 64 MiB from a page offset.
 */
#define MR_BIG_ADDR		0x10001000ULL
#define MR_BIG_IOVA		0x3000ULL
#define MR_BIG_LEN		((u64)SZ_64M)
#define MR_BIG_ENTRIES		(SZ_64M / SZ_4K)

struct mr_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct fake_hw *hw2;
	struct mrc_pd pd;
	struct mrc_pd pd2;
	struct mrc_pd pd_other;
	struct mrc_mr *mrs[MR_TEST_MAX_MRS];
	int mkeys0;
	struct sg_table sgt;
	u32 *keys;
	unsigned int num_keys;
};

/* Registrations go through here so .exit can clean up after a failure. */
static struct mrc_mr *mr_track(struct kunit *test, struct mrc_mr *mr)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int i;

	if (IS_ERR_OR_NULL(mr))
		return mr;
	for (i = 0; i < MR_TEST_MAX_MRS; i++) {
		if (!ctx->mrs[i]) {
			ctx->mrs[i] = mr;
			return mr;
		}
	}
	KUNIT_FAIL(test, "more than %d MRs", MR_TEST_MAX_MRS);
	return mr;
}

static int mr_dereg(struct kunit *test, struct mrc_mr *mr)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int i;
	int ret;

	ret = mrc_dereg_mr(mr);
	if (ret)
		return ret;
	for (i = 0; i < MR_TEST_MAX_MRS; i++)
		if (ctx->mrs[i] == mr)
			ctx->mrs[i] = NULL;
	return 0;
}

static unsigned int mr_valid_slots(struct fake_hw *hw)
{
	unsigned int i, n = 0;

	for (i = 1; i < hw->mdev.caps.max_mkeys; i++)
		n += hw->mkeys[i].state == MRC_MKEY_VALID;
	return n;
}

/*
 * Nothing registered is left: keys, translation space, MR counts and
 * contexts are as after device registration (the local DMA key only).
 */
static bool assert_baseline(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	unsigned int type;
	bool ok = true;

	ok &= atomic_read(&mdev->num_mkeys) == ctx->mkeys0;
	ok &= atomic_read(&mdev->xlt_segs_used) == 0;
	ok &= atomic_read(&mdev->num_mrs) == 0;
	for (type = 0; type < MRC_MR_NUM_TYPES; type++)
		ok &= atomic_read(&mdev->num_mrs_type[type]) == 0;
	ok &= atomic64_read(&mdev->pages_pinned) == 0;
	ok &= mr_valid_slots(ctx->hw) == 1;
	ok &= atomic64_read(&mdev->stats_misuse) == 0;
	if (!ok)
		KUNIT_FAIL(test, "leak: mkeys %d/%d xlt segs %d mrs %d valid %u misuse %lld",
			   atomic_read(&mdev->num_mkeys), ctx->mkeys0,
			   atomic_read(&mdev->xlt_segs_used),
			   atomic_read(&mdev->num_mrs), mr_valid_slots(ctx->hw),
			   (long long)atomic64_read(&mdev->stats_misuse));
	return ok;
}

/* The context of @mr in device memory matches what mrcore recorded. */
static const struct mrc_mkey_ctx *assert_ctx(struct kunit *test,
					     const struct mrc_mr *mr)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = fake_hw_ctx(ctx->hw, mr->key);

	KUNIT_EXPECT_EQ(test, c->key, mr->key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, c->access_mode, mr->mode);
	KUNIT_EXPECT_EQ(test, c->pdn, mr->pd->pdn);
	KUNIT_EXPECT_EQ(test, c->access, mr->access & MRC_ACCESS_HW_MASK);
	KUNIT_EXPECT_EQ(test, c->iova, mr->iova);
	KUNIT_EXPECT_EQ(test, c->length, mr->length);
	KUNIT_EXPECT_EQ(test, c->page_shift, mr->page_shift);
	KUNIT_EXPECT_EQ(test, c->xlt_entries, mr->nentries);
	if (mr->mode != MRC_ACCESS_MODE_PA)
		KUNIT_EXPECT_EQ(test, c->xlt_offset, mr->xlt.offset);
	return c;
}

static void assert_mtt(struct kunit *test, const struct mrc_mkey_ctx *c,
		       const u64 *want, unsigned int n)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, c->xlt_entries, n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, fake_hw_mtt(ctx->hw, c, i), want[i],
				    "MTT entry %u", i);
}

static struct mrc_mr *mr_reg_big(struct kunit *test, u32 access)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_phys_buf buf = { MR_BIG_ADDR, MR_BIG_LEN };

	return mr_track(test, mrc_reg_phys_mr(&ctx->pd, &buf, 1, MR_BIG_IOVA,
					      access));
}

static void mrc_reg_dma_mr_pa_context(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_dma_mr(&ctx->pd, LW | RR));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);

	/* One context write and nothing else: no table, so no fence. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 false));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_PA);
	KUNIT_EXPECT_EQ(test, c->iova, 0ULL);
	KUNIT_EXPECT_EQ(test, c->length, U64_MAX);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, c->access, (u32)(LW | RR));
	KUNIT_EXPECT_EQ(test, mr->type, MRC_MR_DMA);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mrs_type[MRC_MR_DMA]),
			1);

	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_dma_mr_bad_args(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_dma_mr(&ctx->pd,
						     MRC_ACCESS_REMOTE_WRITE)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_dma_mr(&ctx->pd, BIT(12))),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_dma_mr(&ctx->pd,
						     MRC_ACCESS_ON_DEMAND)),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_dma_mr(NULL, LW)), -EINVAL);

	/* Refused before anything was allocated or written. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_phys_mr_mtt_2m(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_phys_buf bufs[] = {
		{ 0x40000000, SZ_2M }, { 0x80000000, SZ_2M },
	};
	const u64 want[] = {
		0x40000000 | MRC_MTT_READ | MRC_MTT_WRITE,
		0x80000000 | MRC_MTT_READ | MRC_MTT_WRITE,
	};
	unsigned int mark = ctx->hw->log_len;
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_phys_mr(&ctx->pd, bufs, 2, 0x7f0000000000,
					    RWR | RR));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);

	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_MTT);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)21);
	KUNIT_EXPECT_EQ(test, c->iova, 0x7f0000000000ULL);
	KUNIT_EXPECT_EQ(test, c->length, (u64)SZ_4M);
	assert_mtt(test, c, want, ARRAY_SIZE(want));

	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_phys_mr_mtt_partial_pages(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	/* A page tail, a contiguous page, then a short range elsewhere. */
	const struct mrc_phys_buf bufs[] = {
		{ 0x10000800, 0x1800 }, { 0x10002000, SZ_4K },
		{ 0x20000000, 0x100 },
	};
	const u64 want[] = {
		0x10000000 | MRC_MTT_READ, 0x10001000 | MRC_MTT_READ,
		0x10002000 | MRC_MTT_READ, 0x20000000 | MRC_MTT_READ,
	};
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr;

	/* Read-only: no entry carries the write bit. */
	mr = mr_track(test, mrc_reg_phys_mr(&ctx->pd, bufs, 3, 0x5800, RR));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);

	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)12);
	KUNIT_EXPECT_EQ(test, c->length, 0x2900ULL);
	assert_mtt(test, c, want, ARRAY_SIZE(want));

	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_phys_mr_klm(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_phys_buf bufs[] = {
		{ 0x10000010, 0x30 }, { 0x20000000, SZ_4K },
		{ 0x20001000, 0x10 },
	};
	unsigned int mark = ctx->hw->log_len;
	const struct mrc_mkey_ctx *c;
	struct mrc_klm e;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_phys_mr(&ctx->pd, bufs, 3, 0x1000, LW));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);

	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_KLM);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)0);
	KUNIT_EXPECT_EQ(test, c->length, 0x1040ULL);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, 2U);

	/* The contiguous second and third ranges are one entry. */
	e = fake_hw_klm(ctx->hw, c, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e.bcount), 0x30U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e.key), ctx->mdev->local_dma_lkey);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e.addr), 0x10000010ULL);
	e = fake_hw_klm(ctx->hw, c, 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e.bcount), 0x1010U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e.key), ctx->mdev->local_dma_lkey);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e.addr), 0x20000000ULL);

	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_phys_mr_klm_unsupported(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_phys_buf buf = { 0x10000010, 0x30 };
	unsigned int mark = ctx->hw->log_len;

	ctx->mdev->caps.flags &= ~MRC_CAP_KLM;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_phys_mr(&ctx->pd, &buf, 1, 0,
						      LW)), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_phys_mr_zero_based(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_phys_buf buf = { 0x40000000, SZ_8K };
	const u64 want[] = { 0x40000000 | MRC_MTT_READ };
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr;

	/*
	 * The iova passed is ignored: the key's addresses start at 0, which
	 * is 2 MiB aligned like the range, so one 2 MiB entry covers it.
	 */
	mr = mr_track(test, mrc_reg_phys_mr(&ctx->pd, &buf, 1, 0x1234000,
					    MRC_ACCESS_ZERO_BASED));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->iova, 0ULL);
	KUNIT_EXPECT_EQ(test, c->length, (u64)SZ_8K);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)21);
	assert_mtt(test, c, want, ARRAY_SIZE(want));
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
}

static void mrc_reg_phys_mr_chunked(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	unsigned int xlt_calls = ctx->hw->calls[FAKE_HW_WRITE_XLT];
	const struct mrc_mkey_ctx *c;
	u64 flags = MRC_MTT_READ | MRC_MTT_WRITE;
	struct mrc_mr *mr;

	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);

	/* Several write_xlt calls, still one fence, the context last. */
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_WRITE_XLT] - xlt_calls,
			(unsigned int)(MR_BIG_ENTRIES * MRC_MTT_ENTRY_SIZE /
				       MRC_XLT_CHUNK_BYTES));
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	c = assert_ctx(test, mr);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, (u32)MR_BIG_ENTRIES);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)12);
	KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, 0),
			(MR_BIG_ADDR & ~0xfffULL) | flags);
	KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, MR_BIG_ENTRIES / 2),
			(MR_BIG_ADDR + MR_BIG_LEN / 2) | flags);
	KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, MR_BIG_ENTRIES - 1),
			(MR_BIG_ADDR + MR_BIG_LEN - SZ_4K) | flags);

	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

struct phys_bad_case {
	const char *desc;
	struct mrc_phys_buf bufs[2];
	unsigned int nbufs;
	u64 iova;
	u32 access;
	int ret;
};

static const struct phys_bad_case phys_bad_cases[] = {
	{ "no ranges", { { 0x1000, SZ_4K } }, 0, 0, LW, -EINVAL },
	{ "empty range", { { 0x1000, SZ_4K }, { 0x3000, 0 } }, 2, 0, LW,
	  -EINVAL },
	{ "range wraps", { { 0ULL - SZ_4K, SZ_8K } }, 1, 0, LW, -EINVAL },
	{ "total wraps", { { 0, 1ULL << 63 }, { 0, 1ULL << 63 } }, 2, 0, LW,
	  -EINVAL },
	{ "key range wraps", { { 0x1000, SZ_8K } }, 1, 0ULL - SZ_4K, LW,
	  -EINVAL },
	{ "remote write without local write", { { 0x1000, SZ_4K } }, 1, 0,
	  MRC_ACCESS_REMOTE_WRITE, -EINVAL },
	{ "unknown access bit", { { 0x1000, SZ_4K } }, 1, 0, BIT(9), -EINVAL },
	{ "on demand", { { 0x1000, SZ_4K } }, 1, 0, MRC_ACCESS_ON_DEMAND,
	  -EOPNOTSUPP },
};

static void phys_bad_desc(const struct phys_bad_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(phys_bad, phys_bad_cases, phys_bad_desc);

static void mrc_reg_phys_mr_bad_args(struct kunit *test)
{
	const struct phys_bad_case *p = test->param_value;
	struct mr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_phys_mr(&ctx->pd, p->bufs,
						      p->nbufs, p->iova,
						      p->access)), p->ret);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

/* Points ctx->sgt at @n hand-filled DMA segments; nothing is mapped. */
static struct sg_table *mr_sgt(struct kunit *test, const struct mrc_phys_buf *segs,
			       unsigned int n)
{
	struct mr_test_ctx *ctx = test->priv;
	struct scatterlist *sgl;
	unsigned int i;

	sgl = kunit_kcalloc(test, n, sizeof(*sgl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sgl);
	sg_init_table(sgl, n);
	for (i = 0; i < n; i++) {
		sg_dma_address(&sgl[i]) = segs[i].addr;
		sg_dma_len(&sgl[i]) = segs[i].size;
	}
	ctx->sgt.sgl = sgl;
	ctx->sgt.nents = n;
	ctx->sgt.orig_nents = n;
	return &ctx->sgt;
}

static void mrc_reg_sg_mr_mtt(struct kunit *test)
{
	const struct mrc_phys_buf segs[] = {
		{ 0x200000, SZ_1M }, { 0x300000, SZ_1M }, { 0x600000, SZ_2M },
	};
	const u64 want[] = { 0x200000 | MRC_MTT_READ | MRC_MTT_WRITE,
			     0x600000 | MRC_MTT_READ | MRC_MTT_WRITE };
	struct mr_test_ctx *ctx = test->priv;
	struct sg_table *sgt = mr_sgt(test, segs, ARRAY_SIZE(segs));
	unsigned int mark = ctx->hw->log_len;
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_sg_mr(&ctx->pd, sgt, 0x40000000, SZ_4M,
					  LW));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->page_shift, (u8)21);
	assert_mtt(test, c, want, ARRAY_SIZE(want));
	KUNIT_EXPECT_EQ(test, mr->type, MRC_MR_SG);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_sg_mr_klm(struct kunit *test)
{
	const struct mrc_phys_buf segs[] = {
		{ 0x200000, 0x200 }, { 0x600100, 0x300 },
	};
	struct mr_test_ctx *ctx = test->priv;
	struct sg_table *sgt = mr_sgt(test, segs, ARRAY_SIZE(segs));
	const struct mrc_mkey_ctx *c;
	struct mrc_klm e;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_sg_mr(&ctx->pd, sgt, 0, 0x500, LW));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_KLM);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, 2U);
	e = fake_hw_klm(ctx->hw, c, 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e.bcount), 0x300U);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e.addr), 0x600100ULL);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

/* @length shorter than the table: only that much is registered. */
static void mrc_reg_sg_mr_window(struct kunit *test)
{
	const struct mrc_phys_buf segs[] = {
		{ 0x200000, SZ_4K }, { 0x800000, SZ_4K }, { 0x900000, SZ_4K },
	};
	const u64 want[] = { 0x200000 | MRC_MTT_READ,
			     0x800000 | MRC_MTT_READ };
	struct mr_test_ctx *ctx = test->priv;
	struct sg_table *sgt = mr_sgt(test, segs, ARRAY_SIZE(segs));
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_sg_mr(&ctx->pd, sgt, 0x10000, 0x1800,
					  RR));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->length, 0x1800ULL);
	assert_mtt(test, c, want, ARRAY_SIZE(want));
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
}

static void mrc_reg_sg_mr_bad_args(struct kunit *test)
{
	const struct mrc_phys_buf segs[] = { { 0x200000, SZ_4K } };
	struct mr_test_ctx *ctx = test->priv;
	struct sg_table *sgt = mr_sgt(test, segs, ARRAY_SIZE(segs));
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_sg_mr(&ctx->pd, sgt, 0,
						    SZ_4K + 1, LW)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_sg_mr(&ctx->pd, sgt, 0, 0, LW)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_sg_mr(&ctx->pd, NULL, 0, SZ_4K,
						    LW)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_sg_mr(&ctx->pd, sgt,
						    0ULL - SZ_2K, SZ_4K, LW)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_sg_mr(&ctx->pd, sgt, 0, SZ_4K,
						    MRC_ACCESS_REMOTE_ATOMIC)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

struct user_bad_case {
	const char *desc;
	u64 start;
	u64 length;
	u64 iova;
	u32 access;
	int ret;
};

static const struct user_bad_case user_bad_cases[] = {
	{ "zero length", 0x10000, 0, 0x10000, LW, -EINVAL },
	{ "start + length wraps", 0ULL - SZ_4K, SZ_8K, 0x1000, LW, -EINVAL },
	{ "page-aligned end wraps", 0ULL - 0x10, 0x8, 0x1000ULL - 0x10, LW,
	  -EINVAL },
	{ "more than UINT_MAX pages", 0, (1ULL << 44) + SZ_4K, 0, LW,
	  -EINVAL },
	{ "page offset of iova differs", 0x10000, SZ_4K, 0x20010, LW,
	  -EINVAL },
	{ "key range wraps", 0x10000, SZ_8K, 0ULL - SZ_4K, LW, -EINVAL },
	{ "zero based from a page offset", 0x10010, SZ_4K, 0x10,
	  MRC_ACCESS_ZERO_BASED, -EINVAL },
	{ "remote write without local write", 0x10000, SZ_4K, 0x10000,
	  MRC_ACCESS_REMOTE_WRITE, -EINVAL },
	{ "unknown access bit", 0x10000, SZ_4K, 0x10000, BIT(30), -EINVAL },
	{ "on demand", 0x10000, SZ_4K, 0x10000, MRC_ACCESS_ON_DEMAND,
	  -EOPNOTSUPP },
	/* Valid arguments: only the missing mm stops it. */
	{ "no user mm", 0x10000, SZ_4K, 0x90000, LW, -EFAULT },
	{ "no user mm, zero based", 0x10000, SZ_4K, 0x123,
	  MRC_ACCESS_ZERO_BASED, -EFAULT },
};

static void user_bad_desc(const struct user_bad_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(user_bad, user_bad_cases, user_bad_desc);

static void mrc_reg_user_mr_bad_args(struct kunit *test)
{
	const struct user_bad_case *p = test->param_value;
	struct mr_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;

	/* A KUnit case runs in a kernel thread: no mm to pin from. */
	KUNIT_ASSERT_NULL(test, current->mm);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_user_mr(&ctx->pd, p->start,
						      p->length, p->iova,
						      p->access)), p->ret);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

enum fail_stage {
	FAIL_KEY_ALLOC,
	FAIL_XLT_ALLOC,
	FAIL_WRITE_XLT_FIRST,
	FAIL_WRITE_XLT_LAST,
	FAIL_WRITE_MKEY,
};

struct fail_case {
	const char *desc;
	enum fail_stage stage;
	int ret;
};

static const struct fail_case fail_cases[] = {
	{ "key allocation (keys exhausted)", FAIL_KEY_ALLOC, -ENOSPC },
	{ "translation space (area full)", FAIL_XLT_ALLOC, -ENOSPC },
	{ "first write_xlt", FAIL_WRITE_XLT_FIRST, -EIO },
	{ "last write_xlt", FAIL_WRITE_XLT_LAST, -EIO },
	{ "write_mkey", FAIL_WRITE_MKEY, -EIO },
};

static void fail_desc(const struct fail_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fail, fail_cases, fail_desc);

/* Take every free key (NULL owners), to be given back by mr_free_keys(). */
static void mr_take_keys(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	u32 max = ctx->mdev->caps.max_mkeys;

	ctx->keys = kunit_kcalloc(test, max, sizeof(*ctx->keys), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->keys);
	while (ctx->num_keys < max &&
	       !mrc_mkey_alloc(ctx->mdev, NULL, &ctx->keys[ctx->num_keys]))
		ctx->num_keys++;
}

static void mr_free_keys(struct mr_test_ctx *ctx)
{
	while (ctx->num_keys)
		mrc_mkey_free(ctx->mdev, ctx->keys[--ctx->num_keys]);
}

/* Arm one failure for the next registration of the big MR. */
static void mr_arm_failure(struct kunit *test, enum fail_stage stage,
			   struct mrc_xlt *hog)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int chunks = MR_BIG_ENTRIES * MRC_MTT_ENTRY_SIZE /
			      MRC_XLT_CHUNK_BYTES;

	switch (stage) {
	case FAIL_KEY_ALLOC:
		mr_take_keys(test);
		break;
	case FAIL_XLT_ALLOC:
		/* Rounded up to a power of two: the whole area is taken. */
		KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev,
						    MR_TEST_XLT_SIZE / 2 + 1,
						    hog), 0);
		break;
	case FAIL_WRITE_XLT_FIRST:
		fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_XLT, 1);
		break;
	case FAIL_WRITE_XLT_LAST:
		fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_XLT, chunks);
		break;
	case FAIL_WRITE_MKEY:
		fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
		break;
	}
}

static void mrc_reg_phys_mr_fail_unwinds(struct kunit *test)
{
	const struct fail_case *p = test->param_value;
	struct mr_test_ctx *ctx = test->priv;
	struct mrc_xlt hog = {};
	struct mrc_mr *mr;

	mr_arm_failure(test, p->stage, &hog);
	mr = mr_reg_big(test, LW);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), p->ret);

	/* After: everything given back, no context left VALID. */
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_XLT, 0);
	mr_free_keys(ctx);
	if (hog.size)
		mrc_xlt_free(ctx->mdev, &hog);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));

	/* And the device is still fully usable. */
	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_mr_fail_unwinds_other_kinds(struct kunit *test)
{
	const struct mrc_phys_buf klm = { 0x10000010, 0x30 };
	const struct mrc_phys_buf segs[] = { { 0x200000, SZ_2M } };
	struct mr_test_ctx *ctx = test->priv;
	struct sg_table *sgt = mr_sgt(test, segs, 1);

	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_dma_mr(&ctx->pd, LW)), -EIO);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_XLT, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_phys_mr(&ctx->pd, &klm, 1, 0,
						      LW)), -EIO);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_phys_mr(&ctx->pd, &klm, 1, 0,
						      LW)), -EIO);
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_sg_mr(&ctx->pd, sgt, 0, SZ_2M,
						    LW)), -EIO);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_dereg_mr_invalidates_first(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;
	unsigned int mark;
	u32 key;

	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	key = mr->key;

	mark = ctx->hw->log_len;
	KUNIT_ASSERT_EQ(test, mr_dereg(test, mr), 0);

	/* The only device op, and before anything was freed. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark + 1);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(ctx->hw, mark),
			FAKE_HW_INVALIDATE_MKEY);
	KUNIT_EXPECT_EQ(test, ctx->hw->last_index[FAKE_HW_INVALIDATE_MKEY],
			mrc_key_index(key));
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
			(u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_dereg_mr_busy_with_windows(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int mark;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_dma_mr(&ctx->pd, LW));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);

	/* A bound window pins the MR: nothing happens. */
	atomic_set(&mr->num_mw, 1);
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), -EBUSY);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_ctx(test, mr);

	atomic_set(&mr->num_mw, 0);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_dereg_mr_invalidate_fails(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;
	int segs;

	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	segs = atomic_read(&ctx->mdev->xlt_segs_used);

	/* The key may still be in use: nothing may be freed. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_INVALIDATE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), -EIO);
	assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), segs);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mrs), 1);

	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

/* A rereg that fails leaves the context and its entries as they were. */
struct mr_snapshot {
	struct mrc_mkey_ctx ctx;
	u64 first;
	u64 last;
	struct mrc_pd *pd;
	u32 access;
	int segs;
};

static void mr_snap(struct kunit *test, struct mrc_mr *mr,
		    struct mr_snapshot *s)
{
	struct mr_test_ctx *ctx = test->priv;

	s->ctx = *fake_hw_ctx(ctx->hw, mr->key);
	s->first = fake_hw_mtt(ctx->hw, &s->ctx, 0);
	s->last = fake_hw_mtt(ctx->hw, &s->ctx, s->ctx.xlt_entries - 1);
	s->pd = mr->pd;
	s->access = mr->access;
	s->segs = atomic_read(&ctx->mdev->xlt_segs_used);
}

static void assert_unchanged(struct kunit *test, struct mrc_mr *mr,
			     const struct mr_snapshot *s)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = fake_hw_ctx(ctx->hw, mr->key);

	KUNIT_EXPECT_EQ(test, c->key, s->ctx.key);
	KUNIT_EXPECT_EQ(test, c->state, s->ctx.state);
	KUNIT_EXPECT_EQ(test, c->access_mode, s->ctx.access_mode);
	KUNIT_EXPECT_EQ(test, c->page_shift, s->ctx.page_shift);
	KUNIT_EXPECT_EQ(test, c->pdn, s->ctx.pdn);
	KUNIT_EXPECT_EQ(test, c->access, s->ctx.access);
	KUNIT_EXPECT_EQ(test, c->iova, s->ctx.iova);
	KUNIT_EXPECT_EQ(test, c->length, s->ctx.length);
	KUNIT_EXPECT_EQ(test, c->xlt_offset, s->ctx.xlt_offset);
	KUNIT_EXPECT_EQ(test, c->xlt_entries, s->ctx.xlt_entries);
	KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, 0), s->first);
	KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, c->xlt_entries - 1),
			s->last);
	KUNIT_EXPECT_PTR_EQ(test, mr->pd, s->pd);
	KUNIT_EXPECT_EQ(test, mr->access, s->access);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), s->segs);
	assert_ctx(test, mr);
}

static void mrc_rereg_user_mr_bad_args(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	struct mr_snapshot snap;
	unsigned int mark;
	struct mrc_mr *mr;

	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	mr_snap(test, mr, &snap);
	mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, 0, NULL, 0, 0, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, BIT(3), NULL, 0, 0, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_PD, NULL, 0, 0,
						0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_PD,
						&ctx->pd_other, 0, 0, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_ACCESS, NULL, 0,
						0, 0, MRC_ACCESS_REMOTE_WRITE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_ACCESS, NULL, 0,
						0, 0, MRC_ACCESS_ON_DEMAND),
			-EOPNOTSUPP);
	/* Only user MRs have a translation the caller can name. */
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_TRANS, NULL,
						0x10000, SZ_4K, 0x10000, 0),
			-EINVAL);
	/* Where the key's addresses start belongs to the translation. */
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_ACCESS, NULL, 0,
						0, 0,
						LW | MRC_ACCESS_ZERO_BASED),
			-EINVAL);

	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_unchanged(test, mr, &snap);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_rereg_user_mr_pd(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	struct mr_snapshot snap;
	unsigned int mark;
	struct mrc_mr *mr;

	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	mr_snap(test, mr, &snap);
	mark = ctx->hw->log_len;

	KUNIT_ASSERT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_PD, &ctx->pd2,
						0, 0, 0, 0), 0);

	/* Same key, same entries in the same place: one context write. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 false));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->key, snap.ctx.key);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd2.pdn);
	KUNIT_EXPECT_EQ(test, c->xlt_offset, snap.ctx.xlt_offset);
	KUNIT_EXPECT_EQ(test, fake_hw_mtt(ctx->hw, c, 0), snap.first);
	KUNIT_EXPECT_PTR_EQ(test, mr->pd, &ctx->pd2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used),
			snap.segs);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->mdev->stats_mr_reregs), 1LL);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_rereg_user_mr_access_drops_write(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	struct mrc_phys_buf bufs[] = {
		{ 0x40000000, SZ_2M }, { 0x80000000, SZ_2M },
	};
	const u64 want[] = { 0x40000000 | MRC_MTT_READ,
			     0x80000000 | MRC_MTT_READ };
	const struct mrc_mkey_ctx *c;
	struct mr_snapshot snap;
	unsigned int mark;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_phys_mr(&ctx->pd, bufs, 2, 0, LW | RR));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	mr_snap(test, mr, &snap);
	/* mrcore rebuilds from its own copy, not from the caller's array. */
	memset(bufs, 0, sizeof(bufs));
	mark = ctx->hw->log_len;

	KUNIT_ASSERT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_ACCESS, NULL, 0,
						0, 0, RR), 0);

	/* New entries without W, in fresh space; the old space is free. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->key, snap.ctx.key);
	KUNIT_EXPECT_NE(test, c->xlt_offset, snap.ctx.xlt_offset);
	KUNIT_EXPECT_EQ(test, c->access, (u32)RR);
	assert_mtt(test, c, want, ARRAY_SIZE(want));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used),
			snap.segs);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_rereg_user_mr_access_keeps_entries(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	struct mr_snapshot snap;
	unsigned int mark;
	struct mrc_mr *mr;

	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	mr_snap(test, mr, &snap);
	mark = ctx->hw->log_len;

	/* Still writable: the entries stay, only the context changes. */
	KUNIT_ASSERT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_ACCESS, NULL, 0,
						0, 0, RWR | RR), 0);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 false));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->access, (u32)(RWR | RR));
	KUNIT_EXPECT_EQ(test, c->xlt_offset, snap.ctx.xlt_offset);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_rereg_user_mr_dma_access(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	unsigned int mark;
	struct mrc_mr *mr;

	mr = mr_track(test, mrc_reg_dma_mr(&ctx->pd, RR));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	mark = ctx->hw->log_len;

	KUNIT_ASSERT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_ACCESS |
						MRC_REREG_PD, &ctx->pd2, 0, 0,
						0, RWR), 0);
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 false));
	c = assert_ctx(test, mr);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_PA);
	KUNIT_EXPECT_EQ(test, c->access, (u32)RWR);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd2.pdn);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static const struct fail_case rereg_fail_cases[] = {
	{ "translation space (area full)", FAIL_XLT_ALLOC, -ENOSPC },
	{ "first write_xlt", FAIL_WRITE_XLT_FIRST, -EIO },
	{ "last write_xlt", FAIL_WRITE_XLT_LAST, -EIO },
	{ "write_mkey", FAIL_WRITE_MKEY, -EIO },
};

KUNIT_ARRAY_PARAM(rereg_fail, rereg_fail_cases, fail_desc);

static void mrc_rereg_user_mr_fail_keeps_old(struct kunit *test)
{
	const struct fail_case *p = test->param_value;
	struct mr_test_ctx *ctx = test->priv;
	struct mr_snapshot snap;
	struct mrc_xlt hog = {};
	struct mrc_mr *mr;

	/* Before: a writable big MR; the rereg makes it read-only. */
	mr = mr_reg_big(test, LW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	mr_snap(test, mr, &snap);
	if (p->stage == FAIL_XLT_ALLOC)
		KUNIT_ASSERT_EQ(test, mrc_xlt_alloc(ctx->mdev, MR_TEST_XLT_SIZE / 4,
						    &hog), 0);
	else
		mr_arm_failure(test, p->stage, &hog);

	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(mr, MRC_REREG_ACCESS |
						MRC_REREG_PD, &ctx->pd2, 0, 0,
						0, RR), p->ret);

	/* After: the old registration is intact and still deregisters. */
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_XLT, 0);
	if (hog.size)
		mrc_xlt_free(ctx->mdev, &hog);
	assert_unchanged(test, mr, &snap);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, mr), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_mr_stats(struct kunit *test)
{
	const struct mrc_phys_buf buf = { 0x200000, SZ_2M };
	struct mr_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	struct sg_table *sgt = mr_sgt(test, &buf, 1);
	struct mrc_mr *a, *b, *c;

	a = mr_track(test, mrc_reg_dma_mr(&ctx->pd, LW));
	b = mr_track(test, mrc_reg_phys_mr(&ctx->pd, &buf, 1, 0, LW));
	c = mr_track(test, mrc_reg_sg_mr(&ctx->pd, sgt, 0, SZ_2M, LW));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);

	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mrs), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mrs_type[MRC_MR_DMA]), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mrs_type[MRC_MR_PHYS]), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mrs_type[MRC_MR_SG]), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mrs_type[MRC_MR_USER]), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mdev->stats_mr_regs), 3LL);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mkeys), ctx->mkeys0 + 3);

	KUNIT_EXPECT_EQ(test, mr_dereg(test, c), 0);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, b), 0);
	KUNIT_EXPECT_EQ(test, mr_dereg(test, a), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	KUNIT_EXPECT_EQ(test, atomic64_read(&mdev->stats_mr_regs), 3LL);
}

static int mr_test_init(struct kunit *test)
{
	struct mr_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	caps.xlt_size = MR_TEST_XLT_SIZE;
	caps.flags |= MRC_CAP_KLM;
	ctx->hw = fake_hw_create(test, "mrc-kunit-mr", &caps);
	ctx->mdev = &ctx->hw->mdev;
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd2), 0);

	/* A PD of another device, for the cross-device checks. */
	fake_hw_default_caps(&caps);
	ctx->hw2 = fake_hw_create(test, "mrc-kunit-mr2", &caps);
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw2), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(&ctx->hw2->mdev, &ctx->pd_other), 0);

	ctx->mkeys0 = atomic_read(&ctx->mdev->num_mkeys);
	return 0;
}

static void mr_test_exit(struct kunit *test)
{
	struct mr_test_ctx *ctx = test->priv;
	unsigned int i;

	/* Also runs when init or a case failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_XLT, 0);
	for (i = 0; i < MR_TEST_MAX_MRS; i++) {
		if (ctx->mrs[i]) {
			atomic_set(&ctx->mrs[i]->num_mw, 0);
			mr_dereg(test, ctx->mrs[i]);
		}
	}
	mr_free_keys(ctx);
	if (ctx->pd.pdn)
		mrc_pd_fini(&ctx->pd);
	if (ctx->pd2.pdn)
		mrc_pd_fini(&ctx->pd2);
	fake_hw_unregister(ctx->hw);
	if (ctx->hw2) {
		if (ctx->pd_other.pdn)
			mrc_pd_fini(&ctx->pd_other);
		fake_hw_unregister(ctx->hw2);
	}
}

static struct kunit_case mr_test_cases[] = {
	KUNIT_CASE(mrc_reg_dma_mr_pa_context),
	KUNIT_CASE(mrc_reg_dma_mr_bad_args),
	KUNIT_CASE(mrc_reg_phys_mr_mtt_2m),
	KUNIT_CASE(mrc_reg_phys_mr_mtt_partial_pages),
	KUNIT_CASE(mrc_reg_phys_mr_klm),
	KUNIT_CASE(mrc_reg_phys_mr_klm_unsupported),
	KUNIT_CASE(mrc_reg_phys_mr_zero_based),
	KUNIT_CASE(mrc_reg_phys_mr_chunked),
	KUNIT_CASE_PARAM(mrc_reg_phys_mr_bad_args, phys_bad_gen_params),
	KUNIT_CASE(mrc_reg_sg_mr_mtt),
	KUNIT_CASE(mrc_reg_sg_mr_klm),
	KUNIT_CASE(mrc_reg_sg_mr_window),
	KUNIT_CASE(mrc_reg_sg_mr_bad_args),
	KUNIT_CASE_PARAM(mrc_reg_user_mr_bad_args, user_bad_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_phys_mr_fail_unwinds, fail_gen_params),
	KUNIT_CASE(mrc_reg_mr_fail_unwinds_other_kinds),
	KUNIT_CASE(mrc_dereg_mr_invalidates_first),
	KUNIT_CASE(mrc_dereg_mr_busy_with_windows),
	KUNIT_CASE(mrc_dereg_mr_invalidate_fails),
	KUNIT_CASE(mrc_rereg_user_mr_bad_args),
	KUNIT_CASE(mrc_rereg_user_mr_pd),
	KUNIT_CASE(mrc_rereg_user_mr_access_drops_write),
	KUNIT_CASE(mrc_rereg_user_mr_access_keeps_entries),
	KUNIT_CASE(mrc_rereg_user_mr_dma_access),
	KUNIT_CASE_PARAM(mrc_rereg_user_mr_fail_keeps_old,
			 rereg_fail_gen_params),
	KUNIT_CASE(mrc_reg_mr_stats),
	{}
};

static struct kunit_suite mr_test_suite = {
	.name = "mrcore_mr",
	.init = mr_test_init,
	.exit = mr_test_exit,
	.test_cases = mr_test_cases,
};

kunit_test_suite(mr_test_suite);
