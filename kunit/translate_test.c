// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore's translation builder: MTT page-size choice, MTT
 * and KLM encoding, entry counts and mode planning. Pure computation on
 * hand-built DMA segment lists; no device involved.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

#define TR_MAX_SEGS		6
#define TR_RANDOM_LISTS		300
#define TR_RANDOM_MAX_SEGS	6
#define TR_BITMAP_4K_2M		(SZ_4K | SZ_2M)
#define TR_BITMAP_ALL		(SZ_4K | SZ_64K | SZ_2M | SZ_1G)

struct tr_seg {
	u64 addr;
	u64 len;
};

struct pgsz_case {
	const char *desc;
	struct tr_seg segs[TR_MAX_SEGS];
	unsigned int nsegs;
	u64 iova;
	unsigned long bitmap;
	unsigned long expect;
};

static const struct pgsz_case pgsz_cases[] = {
	{ "single 4K page", { { 0x100000, SZ_4K } }, 1, 0x100000,
	  TR_BITMAP_4K_2M, SZ_4K },
	{ "2M segment, iova != dma", { { 0x40000000, SZ_2M } }, 1,
	  0x7f0000200000ULL, TR_BITMAP_4K_2M, SZ_2M },
	{ "2M segment, iova off by 4K", { { 0x40000000, SZ_2M } }, 1,
	  0x7f0000201000ULL, TR_BITMAP_4K_2M, SZ_4K },
	{ "partial first page", { { 0x40000100, 0x3000 } }, 1, 0x100100,
	  TR_BITMAP_4K_2M, SZ_4K },
	{ "page offset differs from dma", { { 0x40000100, 0x3000 } }, 1,
	  0x100200, TR_BITMAP_4K_2M, 0 },
	{ "partial last page", { { 0x200000, SZ_2M + 0x10 } }, 1, 0x200000,
	  TR_BITMAP_4K_2M, SZ_2M },
	{ "interior boundary not 4K aligned",
	  { { 0x10000, 0x1800 }, { 0x50000, 0x800 } }, 2, 0x10000,
	  TR_BITMAP_4K_2M, 0 },
	{ "interior boundary 4K aligned only",
	  { { 0x200000, SZ_4K }, { 0x600000, SZ_2M - SZ_4K } }, 2, 0x200000,
	  TR_BITMAP_4K_2M, SZ_4K },
	{ "contiguous segments merge",
	  { { 0x200000, SZ_1M }, { 0x300000, SZ_1M } }, 2, 0x200000,
	  TR_BITMAP_4K_2M, SZ_2M },
	{ "discontiguous 2M-aligned segments",
	  { { 0x200000, SZ_2M }, { 0x800000, SZ_2M } }, 2, 0,
	  TR_BITMAP_4K_2M, SZ_2M },
	{ "interior dma 2M-misaligned",
	  { { 0x200000, SZ_2M }, { 0x801000, SZ_2M } }, 2, 0,
	  TR_BITMAP_4K_2M, SZ_4K },
	{ "1G segment", { { 0x40000000, SZ_1G } }, 1, 0x40000000,
	  TR_BITMAP_ALL, SZ_1G },
	{ "1G segment, iova 2M aligned", { { 0x40000000, SZ_1G } }, 1,
	  0x40200000, TR_BITMAP_ALL, SZ_2M },
	{ "1G segment, iova != dma", { { 0x80000000, SZ_1G } }, 1,
	  0x40000000, TR_BITMAP_ALL, SZ_1G },
	{ "64K pages", { { 0x30000, SZ_64K }, { 0x90000, SZ_128K } }, 2,
	  0x10000, TR_BITMAP_ALL, SZ_64K },
	{ "bitmap without PAGE_SIZE, fits", { { 0x201000, SZ_4K } }, 1,
	  0x201000, SZ_2M, SZ_2M },
	{ "bitmap without PAGE_SIZE, misaligned", { { 0x201000, SZ_4K } }, 1,
	  0x202000, SZ_2M, 0 },
	{ "short MR takes one page of the smallest covering size",
	  { { 0x40000000, 0x2000 } }, 1, 0x40000000, TR_BITMAP_ALL, SZ_64K },
	{ "sizes below 4K ignored", { { 0x1000, SZ_4K } }, 1, 0x1000,
	  SZ_512 | SZ_1K, 0 },
	{ "zero-length entries skipped",
	  { { 0x200000, 0 }, { 0x200000, SZ_2M } }, 2, 0x200000,
	  TR_BITMAP_4K_2M, SZ_2M },
	{ "empty list", { }, 0, 0, TR_BITMAP_4K_2M, 0 },
	{ "range ending at 2^64", { { 0x1000, SZ_4K } }, 1,
	  0ULL - SZ_4K, TR_BITMAP_4K_2M, 0 },
};

static void pgsz_desc(const struct pgsz_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pgsz, pgsz_cases, pgsz_desc);

/* A scatterlist whose DMA fields are set by hand: nothing is mapped. */
static struct scatterlist *tr_sgl(struct kunit *test, const struct tr_seg *segs,
				  unsigned int n)
{
	struct scatterlist *sgl;
	unsigned int i;

	sgl = kunit_kcalloc(test, max(n, 1U), sizeof(*sgl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sgl);
	sg_init_table(sgl, max(n, 1U));
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_LE(test, segs[i].len, (u64)UINT_MAX);
		sg_dma_address(&sgl[i]) = segs[i].addr;
		sg_dma_len(&sgl[i]) = segs[i].len;
	}
	return sgl;
}

static void mrc_best_page_size_table(struct kunit *test)
{
	const struct pgsz_case *c = test->param_value;
	struct scatterlist *sgl = tr_sgl(test, c->segs, c->nsegs);

	KUNIT_EXPECT_EQ(test, mrc_best_page_size(sgl, c->nsegs, c->iova,
						 c->bitmap), c->expect);
}

/* The phys-array source gives the same answer as the scatterlist one. */
static void mrc_page_size_segs_phys_matches_sg(struct kunit *test)
{
	const struct pgsz_case *c = test->param_value;
	struct mrc_phys_buf bufs[TR_MAX_SEGS];
	struct mrc_seg_iter it;
	unsigned int i;

	for (i = 0; i < c->nsegs; i++)
		bufs[i] = (struct mrc_phys_buf){ c->segs[i].addr,
						 c->segs[i].len };
	mrc_seg_iter_phys(&it, bufs, c->nsegs);
	KUNIT_EXPECT_EQ(test, mrc_page_size_segs(&it, c->iova, c->bitmap, NULL),
			c->expect);
}

/* A window that skips a page offset and ends early, as a umem uses. */
static void mrc_seg_next_window(struct kunit *test)
{
	static const struct tr_seg segs[] = {
		{ 0x10000, SZ_4K }, { 0x30000, SZ_8K }, { 0x50000, SZ_4K },
	};
	struct scatterlist *sgl = tr_sgl(test, segs, ARRAY_SIZE(segs));
	struct mrc_seg_iter it;
	u64 addr, len;

	/* Before: skip 0x1100 (into segment 2), take 0x2000 bytes. */
	mrc_seg_iter_sg(&it, sgl, ARRAY_SIZE(segs), 0x1100, 0x2000);

	KUNIT_ASSERT_TRUE(test, mrc_seg_next(&it, &addr, &len));
	KUNIT_EXPECT_EQ(test, addr, 0x30100ULL);
	KUNIT_EXPECT_EQ(test, len, 0x1f00ULL);
	KUNIT_ASSERT_TRUE(test, mrc_seg_next(&it, &addr, &len));
	KUNIT_EXPECT_EQ(test, addr, 0x50000ULL);
	KUNIT_EXPECT_EQ(test, len, 0x100ULL);
	KUNIT_EXPECT_FALSE(test, mrc_seg_next(&it, &addr, &len));
}

struct mtt_count_case {
	u64 iova;
	u64 length;
	unsigned int shift;
	int ret;
	u32 count;
};

static void mrc_mtt_count_bounds(struct kunit *test)
{
	static const struct mtt_count_case cases[] = {
		{ 0, 0, 12, -EINVAL, 0 },
		{ 0x800, SZ_4K, 12, 0, 2 },
		{ 0x1000, SZ_4K, 12, 0, 1 },
		{ 0x1000, SZ_4K, 21, 0, 1 },
		{ 0x1ff000, SZ_8K, 21, 0, 2 },
		{ 0ULL - SZ_8K, SZ_4K, 12, 0, 1 },
		{ 0ULL - SZ_4K, SZ_4K, 12, -EINVAL, 0 },
		{ 0ULL - SZ_4K, 0ULL - SZ_4K, 12, -EINVAL, 0 },
		{ 0x1000, SZ_4K, 11, -EINVAL, 0 },
		{ 0x1000, SZ_4K, 64, -EINVAL, 0 },
		{ 0, 1ULL << 44, 12, -EINVAL, 0 },
		{ 0, (1ULL << 44) - SZ_4K, 12, 0, U32_MAX },
	};
	unsigned int i;
	u32 count;
	int ret;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		count = 0;
		ret = mrc_mtt_count(cases[i].iova, cases[i].length,
				    cases[i].shift, &count);
		KUNIT_EXPECT_EQ_MSG(test, ret, cases[i].ret, "case %u", i);
		if (!ret)
			KUNIT_EXPECT_EQ_MSG(test, count, cases[i].count,
					    "case %u", i);
	}
}

/* Fill every entry of @segs at @shift into a kunit buffer. */
static __le64 *tr_mtt(struct kunit *test, const struct mrc_seg_iter *it,
		      u64 iova, u64 length, unsigned int shift, bool writable,
		      u32 *count)
{
	struct mrc_mtt_builder b;
	__le64 *out;

	KUNIT_ASSERT_EQ(test, mrc_mtt_count(iova, length, shift, count), 0);
	out = kunit_kcalloc(test, *count + 1, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	mrc_mtt_builder_init(&b, it, iova, shift, *count, writable);
	KUNIT_EXPECT_EQ(test, mrc_mtt_fill(&b, out, *count + 1), (int)*count);
	KUNIT_EXPECT_EQ(test, mrc_mtt_fill(&b, out, 1), 0);
	return out;
}

static void mrc_mtt_fill_encoding(struct kunit *test)
{
	static const struct tr_seg segs[] = {
		{ 0x10000, SZ_8K }, { 0x40000, SZ_4K },
	};
	struct scatterlist *sgl = tr_sgl(test, segs, ARRAY_SIZE(segs));
	const u64 addrs[] = { 0x10000, 0x11000, 0x40000 };
	struct mrc_seg_iter it;
	__le64 *rw, *ro;
	unsigned int i;
	u32 n;

	mrc_seg_iter_sg(&it, sgl, ARRAY_SIZE(segs), 0, U64_MAX);
	rw = tr_mtt(test, &it, 0x7000, 3 * SZ_4K, 12, true, &n);
	KUNIT_ASSERT_EQ(test, n, 3U);
	ro = tr_mtt(test, &it, 0x7000, 3 * SZ_4K, 12, false, &n);

	/* Address of the page, R always, W only when writable. */
	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		KUNIT_EXPECT_EQ(test, le64_to_cpu(rw[i]),
				addrs[i] | MRC_MTT_READ | MRC_MTT_WRITE);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(ro[i]),
				addrs[i] | MRC_MTT_READ);
	}
}

static void mrc_mtt_fill_partial_pages(struct kunit *test)
{
	/* 0x1800 bytes from 0x10800: the tail of one page, half of another. */
	static const struct tr_seg segs[] = { { 0x10800, 0x1800 } };
	struct scatterlist *sgl = tr_sgl(test, segs, 1);
	struct mrc_seg_iter it;
	__le64 *e;
	u32 n;

	mrc_seg_iter_sg(&it, sgl, 1, 0, U64_MAX);
	e = tr_mtt(test, &it, 0x3800, 0x1800, 12, false, &n);
	KUNIT_ASSERT_EQ(test, n, 2U);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e[0]), 0x10000ULL | MRC_MTT_READ);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e[1]), 0x11000ULL | MRC_MTT_READ);
}

/* Contiguous entries that split a page still give one entry for it. */
static void mrc_mtt_fill_contiguous_split_page(struct kunit *test)
{
	static const struct tr_seg segs[] = {
		{ 0x200000, 0x800 }, { 0x200800, 0x1800 }, { 0x202000, SZ_4K },
	};
	struct scatterlist *sgl = tr_sgl(test, segs, ARRAY_SIZE(segs));
	struct mrc_seg_iter it;
	__le64 *e;
	u32 n;

	mrc_seg_iter_sg(&it, sgl, ARRAY_SIZE(segs), 0, U64_MAX);
	e = tr_mtt(test, &it, 0x5000, 3 * SZ_4K, 12, true, &n);
	KUNIT_ASSERT_EQ(test, n, 3U);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e[0]) & MRC_MTT_ADDR_MASK, 0x200000ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e[1]) & MRC_MTT_ADDR_MASK, 0x201000ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e[2]) & MRC_MTT_ADDR_MASK, 0x202000ULL);
}

/* Filling in chunks of one entry gives the same table. */
static void mrc_mtt_fill_chunked(struct kunit *test)
{
	static const struct tr_seg segs[] = {
		{ 0x400000, SZ_16K }, { 0x900000, SZ_8K }, { 0x100000, 0x1234 },
	};
	struct scatterlist *sgl = tr_sgl(test, segs, ARRAY_SIZE(segs));
	u64 len = SZ_16K + SZ_8K + 0x1234;
	struct mrc_mtt_builder b;
	struct mrc_seg_iter it;
	__le64 *whole, one;
	u32 n, i;

	mrc_seg_iter_sg(&it, sgl, ARRAY_SIZE(segs), 0, U64_MAX);
	whole = tr_mtt(test, &it, 0x8000, len, 12, true, &n);
	mrc_mtt_builder_init(&b, &it, 0x8000, 12, n, true);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, mrc_mtt_fill(&b, &one, 1), 1);
		KUNIT_EXPECT_EQ_MSG(test, le64_to_cpu(one), le64_to_cpu(whole[i]),
				    "entry %u", i);
	}
	KUNIT_EXPECT_EQ(test, mrc_mtt_fill(&b, &one, 1), 0);
}

/* A page size the list does not fit is refused, not silently wrong. */
static void mrc_mtt_fill_misfit_page_size(struct kunit *test)
{
	static const struct tr_seg segs[] = {
		{ 0x10000, 0x1800 }, { 0x50000, 0x800 },
	};
	struct scatterlist *sgl = tr_sgl(test, segs, ARRAY_SIZE(segs));
	struct mrc_mtt_builder b;
	struct mrc_seg_iter it;
	__le64 out[4];
	u32 n;

	mrc_seg_iter_sg(&it, sgl, ARRAY_SIZE(segs), 0, U64_MAX);
	KUNIT_ASSERT_EQ(test, mrc_mtt_count(0x10000, SZ_8K, 12, &n), 0);
	mrc_mtt_builder_init(&b, &it, 0x10000, 12, n, false);
	KUNIT_EXPECT_EQ(test, mrc_mtt_fill(&b, out, ARRAY_SIZE(out)), -EINVAL);
}

static void mrc_klm_fill_encoding(struct kunit *test)
{
	static const struct mrc_phys_buf bufs[] = {
		{ 0x1000100, 0x300 }, { 0x1000400, 0x200 },
		{ 0x500000000ULL, 5ULL * SZ_1G },
		{ 0x2000, 0x10 },
	};
	const struct { u32 bcount; u64 addr; } want[] = {
		{ 0x500, 0x1000100 },
		{ SZ_2G, 0x500000000ULL },
		{ SZ_2G, 0x500000000ULL + SZ_2G },
		{ SZ_1G, 0x500000000ULL + 2ULL * SZ_2G },
		{ 0x10, 0x2000 },
	};
	struct mrc_klm_builder b;
	struct mrc_klm out[8];
	struct mrc_seg_iter it;
	unsigned int i;
	u32 n;

	/* Contiguous ranges merge; runs over MRC_KLM_MAX_BCOUNT split. */
	mrc_seg_iter_phys(&it, bufs, ARRAY_SIZE(bufs));
	KUNIT_ASSERT_EQ(test, mrc_klm_count(&it, U32_MAX, &n), 0);
	KUNIT_ASSERT_EQ(test, n, (u32)ARRAY_SIZE(want));

	mrc_klm_builder_init(&b, &it, 0x1234ab);
	KUNIT_ASSERT_EQ(test, mrc_klm_fill(&b, out, ARRAY_SIZE(out)), n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(out[i].bcount),
				    want[i].bcount, "entry %u", i);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(out[i].key), 0x1234abU,
				    "entry %u", i);
		KUNIT_EXPECT_EQ_MSG(test, le64_to_cpu(out[i].addr),
				    want[i].addr, "entry %u", i);
	}
}

static void mrc_klm_fill_chunked(struct kunit *test)
{
	static const struct mrc_phys_buf bufs[] = {
		{ 0x1000, 0x10 }, { 0x1010, 0x10 }, { 0x3000, 3ULL * SZ_2G },
		{ 0x900000, 0x7 },
	};
	struct mrc_klm whole[8], one;
	struct mrc_klm_builder b;
	struct mrc_seg_iter it;
	u32 n, i;

	mrc_seg_iter_phys(&it, bufs, ARRAY_SIZE(bufs));
	mrc_klm_builder_init(&b, &it, 7);
	n = mrc_klm_fill(&b, whole, ARRAY_SIZE(whole));
	KUNIT_ASSERT_EQ(test, n, 5U);

	mrc_klm_builder_init(&b, &it, 7);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, mrc_klm_fill(&b, &one, 1), 1U);
		KUNIT_EXPECT_EQ(test, memcmp(&one, &whole[i], sizeof(one)), 0);
	}
	KUNIT_EXPECT_EQ(test, mrc_klm_fill(&b, &one, 1), 0U);
}

static void mrc_klm_count_empty(struct kunit *test)
{
	static const struct mrc_phys_buf bufs[] = { { 0x1000, 0 } };
	struct mrc_seg_iter it;
	u32 n;

	mrc_seg_iter_phys(&it, bufs, ARRAY_SIZE(bufs));
	KUNIT_EXPECT_EQ(test, mrc_klm_count(&it, U32_MAX, &n), -EINVAL);
}

/* Counting stops at @max: a list longer than the area is -ENOSPC. */
static void mrc_klm_count_over_max(struct kunit *test)
{
	static const struct mrc_phys_buf bufs[] = {
		{ 0x1000, 0x10 }, { 0x5000, 0x10 }, { 0x9000, 0x10 },
	};
	struct mrc_seg_iter it;
	u32 n = 0;

	/* Three separate ranges take three entries. */
	mrc_seg_iter_phys(&it, bufs, ARRAY_SIZE(bufs));
	KUNIT_EXPECT_EQ(test, mrc_klm_count(&it, 3, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 3U);
	/* One fewer allowed: refused, and @count left alone. */
	n = 0;
	KUNIT_EXPECT_EQ(test, mrc_klm_count(&it, 2, &n), -ENOSPC);
	KUNIT_EXPECT_EQ(test, n, 0U);
}

/*
 * A device-less mrc_device is enough for planning: only caps are read
 * (the translation area's size bounds how many KLM entries are counted).
 */
static void tr_plan_dev(struct mrc_device *mdev, u32 flags)
{
	memset(mdev, 0, sizeof(*mdev));
	mdev->caps.xlt_size = SZ_64K;
	mdev->caps.page_size_bitmap = TR_BITMAP_4K_2M;
	mdev->caps.flags = flags;
}

static void mrc_trans_plan_modes(struct kunit *test)
{
	static const struct mrc_phys_buf aligned[] = {
		{ 0x200000, SZ_2M }, { 0x800000, SZ_2M },
	};
	static const struct mrc_phys_buf ragged[] = {
		{ 0x200010, 0x100 }, { 0x800000, SZ_4K },
	};
	struct mrc_device mdev;
	struct mrc_xlt_table t = {};

	/* Page-aligned uniform list: MTT at the largest page size. */
	tr_plan_dev(&mdev, MRC_CAP_KLM);
	mrc_seg_iter_phys(&t.segs, aligned, ARRAY_SIZE(aligned));
	t.iova = 0x40000000;
	t.length = 2 * SZ_2M;
	KUNIT_ASSERT_EQ(test, mrc_xlt_plan(&mdev, &t), 0);
	KUNIT_EXPECT_EQ(test, t.mode, (u8)MRC_ACCESS_MODE_MTT);
	KUNIT_EXPECT_EQ(test, t.page_shift, (u8)21);
	KUNIT_EXPECT_EQ(test, t.nentries, 2U);

	/* Ragged list: KLM, one entry per contiguous run. */
	mrc_seg_iter_phys(&t.segs, ragged, ARRAY_SIZE(ragged));
	t.length = 0x100 + SZ_4K;
	KUNIT_ASSERT_EQ(test, mrc_xlt_plan(&mdev, &t), 0);
	KUNIT_EXPECT_EQ(test, t.mode, (u8)MRC_ACCESS_MODE_KLM);
	KUNIT_EXPECT_EQ(test, t.nentries, 2U);

	/* ... which a device without KLM cannot take. */
	tr_plan_dev(&mdev, 0);
	mrc_seg_iter_phys(&t.segs, ragged, ARRAY_SIZE(ragged));
	KUNIT_EXPECT_EQ(test, mrc_xlt_plan(&mdev, &t), -EOPNOTSUPP);
}

static void mrc_trans_plan_length_mismatch(struct kunit *test)
{
	static const struct mrc_phys_buf bufs[] = { { 0x200000, SZ_2M } };
	struct mrc_device mdev;
	struct mrc_xlt_table t = {};

	tr_plan_dev(&mdev, MRC_CAP_KLM);
	mrc_seg_iter_phys(&t.segs, bufs, 1);
	t.length = SZ_2M + 1;
	KUNIT_EXPECT_EQ(test, mrc_xlt_plan(&mdev, &t), -EINVAL);
	t.length = 0;
	KUNIT_EXPECT_EQ(test, mrc_xlt_plan(&mdev, &t), -EINVAL);
	/* The key's range may not run past U64_MAX. */
	t.length = SZ_2M;
	t.iova = 0ULL - SZ_1M;
	KUNIT_EXPECT_EQ(test, mrc_xlt_plan(&mdev, &t), -EINVAL);
}

/*
 * Every byte of the MR at @iova must translate through @mtt to the DMA
 * address the segments give it. Checked at each segment's ends and at
 * every page boundary inside it; translation is linear in between.
 */
static bool assert_mtt_translates(struct kunit *test, const struct tr_seg *segs,
				  unsigned int n, u64 iova, unsigned int shift,
				  const __le64 *mtt, u32 count)
{
	u64 pmask = BIT_ULL(shift) - 1, va = iova, probe, e, got, want;
	unsigned int i;
	u64 idx;

	for (i = 0; i < n; va += segs[i].len, i++) {
		for (probe = va; probe < va + segs[i].len;
		     probe = min((probe | pmask) + 1, va + segs[i].len - 1)) {
			idx = (probe >> shift) - (iova >> shift);
			if (idx >= count) {
				KUNIT_FAIL(test, "va %#llx: entry %llu of %u",
					   probe, idx, count);
				return false;
			}
			e = le64_to_cpu(mtt[idx]);
			got = (e & MRC_MTT_ADDR_MASK & ~pmask) + (probe & pmask);
			want = segs[i].addr + (probe - va);
			if (got != want || !(e & MRC_MTT_READ)) {
				KUNIT_FAIL(test, "va %#llx -> %#llx, want %#llx (shift %u seg %u)",
					   probe, got, want, shift, i);
				return false;
			}
			if (probe == va + segs[i].len - 1)
				break;
		}
	}
	return true;
}

/*
 * A random list that some page size of at least 4 KiB fits: the
 * first segment may start inside a page, interior boundaries are page
 * aligned, later segments are sometimes contiguous with the previous.
 */
static unsigned int tr_random_list(struct rnd_state *rnd, struct tr_seg *segs,
				   u64 *iova)
{
	static const unsigned int shifts[] = { 12, 16, 21 };
	unsigned int shift = shifts[prandom_u32_state(rnd) % 3];
	unsigned int i, n = 1 + prandom_u32_state(rnd) % TR_RANDOM_MAX_SEGS;
	u64 psize = BIT_ULL(shift), off = prandom_u32_state(rnd) & (psize - 1);
	u64 base = (u64)(1 + prandom_u32_state(rnd) % 4096) << 30;

	*iova = ((u64)(prandom_u32_state(rnd) % 4096) << 30) + off;
	for (i = 0; i < n; i++) {
		u64 pages = 1 + prandom_u32_state(rnd) % 4;

		if (i && prandom_u32_state(rnd) % 3 == 0)
			segs[i].addr = segs[i - 1].addr + segs[i - 1].len;
		else
			segs[i].addr = base + ((u64)(prandom_u32_state(rnd) %
						     1024) << shift);
		segs[i].len = pages << shift;
		if (!i) {
			segs[i].addr += off;
			segs[i].len -= off;
		}
		/* The last segment may end anywhere after its first byte. */
		if (i == n - 1 && segs[i].len > 1)
			segs[i].len -= prandom_u32_state(rnd) %
				       (segs[i].len - 1);
	}
	return n;
}

static void mrc_mtt_fill_random_never_outside(struct kunit *test)
{
	struct tr_seg segs[TR_RANDOM_MAX_SEGS];
	struct scatterlist *sgl;
	struct mrc_seg_iter it;
	unsigned long pgsz;
	struct rnd_state rnd;
	unsigned int i, n;
	u64 iova, bytes;
	__le64 *mtt;
	u32 count;

	prandom_seed_state(&rnd, fake_hw_random_seed());
	kunit_info(test, "random_seed %u\n", fake_hw_random_seed());
	for (i = 0; i < TR_RANDOM_LISTS; i++) {
		n = tr_random_list(&rnd, segs, &iova);
		sgl = tr_sgl(test, segs, n);
		mrc_seg_iter_sg(&it, sgl, n, 0, U64_MAX);
		pgsz = mrc_page_size_segs(&it, iova, TR_BITMAP_ALL, &bytes);
		KUNIT_ASSERT_NE_MSG(test, pgsz, 0UL, "list %u", i);
		mtt = tr_mtt(test, &it, iova, bytes, __ffs(pgsz), true, &count);
		if (!assert_mtt_translates(test, segs, n, iova, __ffs(pgsz),
					   mtt, count))
			break;
	}
}

static struct kunit_case translate_test_cases[] = {
	KUNIT_CASE_PARAM(mrc_best_page_size_table, pgsz_gen_params),
	KUNIT_CASE_PARAM(mrc_page_size_segs_phys_matches_sg, pgsz_gen_params),
	KUNIT_CASE(mrc_seg_next_window),
	KUNIT_CASE(mrc_mtt_count_bounds),
	KUNIT_CASE(mrc_mtt_fill_encoding),
	KUNIT_CASE(mrc_mtt_fill_partial_pages),
	KUNIT_CASE(mrc_mtt_fill_contiguous_split_page),
	KUNIT_CASE(mrc_mtt_fill_chunked),
	KUNIT_CASE(mrc_mtt_fill_misfit_page_size),
	KUNIT_CASE(mrc_klm_fill_encoding),
	KUNIT_CASE(mrc_klm_fill_chunked),
	KUNIT_CASE(mrc_klm_count_empty),
	KUNIT_CASE(mrc_klm_count_over_max),
	KUNIT_CASE(mrc_trans_plan_modes),
	KUNIT_CASE(mrc_trans_plan_length_mismatch),
	KUNIT_CASE(mrc_mtt_fill_random_never_outside),
	{}
};

static struct kunit_suite translate_test_suite = {
	.name = "mrcore_translate",
	.test_cases = translate_test_cases,
};

kunit_test_suite(translate_test_suite);
