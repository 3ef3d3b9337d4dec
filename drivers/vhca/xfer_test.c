// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases of the vhca_walker suite (listed in walker_test.c) for
 * transfers (xfer.c): bytes moved once from the source's pages to the
 * destination's, both sides checked before a byte is written (whole,
 * when one gathering covers the message; by probes when it does not),
 * inline data, and the keys a gathering walk holds until its pipe is
 * released. They share the case's device and the helpers of
 * walker_test.h.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "engine_loc.h"
#include "vhca_loc.h"
#include "walker_test.h"

/* Give the case's device the per-CPU pipes vhca_xfer() uses. */
static void xt_pipes(struct kunit *test, struct walker_ctx *ctx)
{
	struct vhca_dev *vdev = ctx->vdev;
	unsigned int cpu;

	vdev->xbuf = kunit_kcalloc(test, nr_cpu_ids, sizeof(*vdev->xbuf),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vdev->xbuf);
	for_each_possible_cpu(cpu) {
		vdev->xbuf[cpu] = kunit_kzalloc(test, sizeof(*vdev->xbuf[cpu]),
						GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, vdev->xbuf[cpu]);
	}
}

/* A local list of the case's PD. */
static struct vhca_cursor xt_sgl(struct walker_ctx *ctx,
				 const struct ib_sge *sge, u32 num,
				 enum vhca_access_dir dir)
{
	return (struct vhca_cursor) {
		.kind = VHCA_CURSOR_SGL,
		.dir = dir,
		.vdev = ctx->vdev,
		.pdn = WT_PDN,
		.qpn = WT_QPN,
		.sge = sge,
		.num = num,
	};
}

/* No walk holds any slot: every key a transfer entered was let go. */
static bool xt_no_holds(struct walker_ctx *ctx)
{
	u32 i;

	for (i = 0; i < WT_MKEYS; i++)
		if (atomic_read(&ctx->vdev->mkey_users[i]))
			return false;
	return true;
}

/*
 * A transfer of @len bytes from @src to @dst is refused with @err, on
 * side @side, before a byte of pages 2 and 3 (every destination of
 * these cases) is written, and lets every key go.
 */
static void xt_refused(struct kunit *test, struct walker_ctx *ctx,
		       struct vhca_cursor *src, struct vhca_cursor *dst,
		       u64 len, int err, enum vhca_side side)
{
	enum vhca_side got;

	KUNIT_EXPECT_EQ(test, vhca_xfer(ctx->vdev, src, dst, len, false,
					&got), err);
	KUNIT_EXPECT_EQ(test, got, side);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 0, PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 3, 0, PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));
}

/*
 * A KLM key of @n entries of @bcount bytes, all through the local DMA
 * key: entry i at @dma + i * @stride, but entry @bad (if below @n) names
 * a key no context holds.
 */
static u32 xt_klm_dma(struct kunit *test, struct walker_ctx *ctx, u64 dma,
		      unsigned int n, u32 bcount, u32 stride,
		      unsigned int bad)
{
	u32 nokey = mrc_make_key(WT_MKEYS - 1, 0x33);
	struct mrc_klm *klm;
	unsigned int i;

	klm = kunit_kcalloc(test, n, sizeof(*klm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, klm);
	for (i = 0; i < n; i++)
		klm[i] = wt_klm(bcount, i == bad ? nokey : ctx->vdev->rsvd_lkey,
				dma + (u64)i * stride);
	return wt_klm_key(test, ctx, WT_PDN, 0, klm, n,
			  MRC_ACCESS_LOCAL_WRITE);
}

/**
 * vhca_xfer_one_copy() - a case of vhca_walker
 * @test: the case
 *
 * A transfer from one SGE into two lands every byte where the lists
 * say, and nothing around them; the cursors end past the bytes moved
 * and no key stays held. A remote range as the source, read through its
 * rkey, lands the same way.
 */
void vhca_xfer_one_copy(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 siova = 0x10000, diova = 0x40000;
	const u64 riova = 0x80000;
	struct ib_sge ssge[1], dsge[2];
	struct vhca_cursor src, dst;
	enum vhca_side side;
	u8 *s0 = wt_va(ctx, 0), *d0 = wt_va(ctx, 2);
	u32 skey, dkey, rkey;

	xt_pipes(test, ctx);
	wt_fill(s0, PAGE_SIZE, 1);
	wt_fill(wt_va(ctx, 1), PAGE_SIZE, 2);
	skey = wt_mtt_mr(test, ctx, WT_PDN, siova, 0, 2, MRC_MTT_READ, 0);
	dkey = wt_mtt_mr(test, ctx, WT_PDN, diova, 2, 2,
			 MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_LOCAL_WRITE);

	ssge[0] = (struct ib_sge) { .addr = siova + 100, .length = 5000,
				    .lkey = skey };
	dsge[0] = (struct ib_sge) { .addr = diova + 10, .length = 3000,
				    .lkey = dkey };
	dsge[1] = (struct ib_sge) { .addr = diova + 5000, .length = 2000,
				    .lkey = dkey };
	src = xt_sgl(ctx, ssge, 1, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, dsge, 2, VHCA_ACCESS_LOCAL_WRITE);

	KUNIT_ASSERT_EQ(test, vhca_xfer(ctx->vdev, &src, &dst, 5000, false,
					&side), 0);
	/* Source bytes 100..3099 (page 0) at 10; 3100..5099 at 5000. */
	KUNIT_EXPECT_EQ(test, memcmp(d0 + 10, s0 + 100, 3000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 3) + 5000 - PAGE_SIZE,
				     s0 + 3100, PAGE_SIZE - 3100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 3) + 5000 - PAGE_SIZE +
				     PAGE_SIZE - 3100, wt_va(ctx, 1),
				     5100 - PAGE_SIZE), 0);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 0, 10));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 3010, PAGE_SIZE - 3010));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 3, 0, 5000 - PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 3, 7000 - PAGE_SIZE,
					2 * PAGE_SIZE - 7000));
	KUNIT_EXPECT_EQ(test, src.idx, 1U);
	KUNIT_EXPECT_EQ(test, src.off, 0ULL);
	KUNIT_EXPECT_EQ(test, dst.idx, 2U);
	KUNIT_EXPECT_EQ(test, dst.off, 0ULL);
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));

	rkey = wt_mtt_mr(test, ctx, WT_PDN, riova, 1, 1, MRC_MTT_READ,
			 MRC_ACCESS_REMOTE_READ);
	src = (struct vhca_cursor) {
		.kind = VHCA_CURSOR_RANGE,
		.dir = VHCA_ACCESS_REMOTE_READ,
		.vdev = ctx->vdev,
		.pdn = WT_PDN,
		.qpn = WT_QPN,
		.rkey = rkey,
		.addr = riova + 64,
	};
	dsge[0] = (struct ib_sge) { .addr = diova, .length = 256,
				    .lkey = dkey };
	dst = xt_sgl(ctx, dsge, 1, VHCA_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_xfer(ctx->vdev, &src, &dst, 256, false,
					&side), 0);
	KUNIT_EXPECT_EQ(test, memcmp(d0, wt_va(ctx, 1) + 64, 256), 0);
	KUNIT_EXPECT_EQ(test, src.addr, riova + 64 + 256);
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));
}

/**
 * vhca_xfer_checks_both_first() - a case of vhca_walker
 * @test: the case
 *
 * A message one gathering covers is checked whole before a byte moves:
 * a bad second SGE on either side fails the transfer with that side
 * named, and the destination's first SGE, which was good, is untouched.
 */
void vhca_xfer_checks_both_first(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 siova = 0x10000, diova = 0x40000;
	struct ib_sge ssge[2], dsge[2];
	struct vhca_cursor src, dst;
	u32 skey, dkey;

	xt_pipes(test, ctx);
	wt_fill(wt_va(ctx, 0), PAGE_SIZE, 3);
	skey = wt_mtt_mr(test, ctx, WT_PDN, siova, 0, 1, MRC_MTT_READ, 0);
	dkey = wt_mtt_mr(test, ctx, WT_PDN, diova, 2, 1,
			 MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_LOCAL_WRITE);

	/* The destination's second SGE names a key nobody registered. */
	ssge[0] = (struct ib_sge) { .addr = siova, .length = 2000,
				    .lkey = skey };
	dsge[0] = (struct ib_sge) { .addr = diova, .length = 1000,
				    .lkey = dkey };
	dsge[1] = (struct ib_sge) { .addr = diova + 1000, .length = 1000,
				    .lkey = dkey + 1 };
	src = xt_sgl(ctx, ssge, 1, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, dsge, 2, VHCA_ACCESS_LOCAL_WRITE);
	xt_refused(test, ctx, &src, &dst, 2000, -ENOKEY, VHCA_DST);

	/* The source's second SGE runs past its MR. */
	ssge[0].length = 1000;
	ssge[1] = (struct ib_sge) { .addr = siova + PAGE_SIZE - 500,
				    .length = 1000, .lkey = skey };
	dsge[1].lkey = dkey;
	src = xt_sgl(ctx, ssge, 2, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, dsge, 2, VHCA_ACCESS_LOCAL_WRITE);
	xt_refused(test, ctx, &src, &dst, 2000, -ERANGE, VHCA_SRC);
}

/**
 * vhca_xfer_gather_falls_short() - a case of vhca_walker
 * @test: the case
 *
 * A source of more pieces than a pipe holds (80 KLM entries of 32 bytes,
 * apart from each other) is moved in two gatherings, every byte in
 * order; and when its last piece is bad, nothing is written although the
 * first gathering was good: the rest was probed before the first copy.
 * A destination in as many pieces, from one MR, falls short the same
 * way and gets every piece.
 */
void vhca_xfer_gather_falls_short(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const unsigned int n = 80, bc = 32, stride = 48;
	const u64 siova = 0x10000, diova = 0x40000;
	struct ib_sge ssge, dsge;
	struct vhca_cursor src, dst;
	enum vhca_side side;
	u8 *s0 = wt_va(ctx, 0), *d0 = wt_va(ctx, 2);
	u32 good, bad, skey, dkey;
	unsigned int i;

	BUILD_BUG_ON(80 <= VHCA_PIPE_SPANS);
	BUILD_BUG_ON(79 * 48 + 32 > PAGE_SIZE);
	xt_pipes(test, ctx);
	wt_fill(s0, PAGE_SIZE, 4);
	good = xt_klm_dma(test, ctx, wt_dma(ctx, 0), n, bc, stride, n);
	bad = xt_klm_dma(test, ctx, wt_dma(ctx, 0), n, bc, stride, n - 1);
	dkey = wt_mtt_mr(test, ctx, WT_PDN, diova, 2, 1,
			 MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_LOCAL_WRITE);
	dsge = (struct ib_sge) { .addr = diova, .length = n * bc,
				 .lkey = dkey };

	ssge = (struct ib_sge) { .addr = 0, .length = n * bc, .lkey = bad };
	src = xt_sgl(ctx, &ssge, 1, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, &dsge, 1, VHCA_ACCESS_LOCAL_WRITE);
	xt_refused(test, ctx, &src, &dst, n * bc, -ENOKEY, VHCA_SRC);

	ssge.lkey = good;
	src = xt_sgl(ctx, &ssge, 1, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, &dsge, 1, VHCA_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_xfer(ctx->vdev, &src, &dst, n * bc, false,
					&side), 0);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, memcmp(d0 + i * bc, s0 + i * stride, bc),
				0);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, n * bc, PAGE_SIZE - n * bc));
	KUNIT_EXPECT_EQ(test, src.idx, 1U);
	KUNIT_EXPECT_EQ(test, dst.idx, 1U);
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));

	memset(d0, 0, PAGE_SIZE);
	skey = wt_mtt_mr(test, ctx, WT_PDN, siova, 0, 1, MRC_MTT_READ, 0);
	dkey = xt_klm_dma(test, ctx, wt_dma(ctx, 2), n, bc, stride, n);
	ssge = (struct ib_sge) { .addr = siova, .length = n * bc,
				 .lkey = skey };
	dsge = (struct ib_sge) { .addr = 0, .length = n * bc, .lkey = dkey };
	src = xt_sgl(ctx, &ssge, 1, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, &dsge, 1, VHCA_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_xfer(ctx->vdev, &src, &dst, n * bc, false,
					&side), 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, memcmp(d0 + i * stride, s0 + i * bc, bc),
				0);
		KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, i * stride + bc,
						stride - bc));
	}
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));
}

/*
 * A KLM key of @n entries of 1 KiB through the local DMA key, entry i
 * naming the 1 KiB piece @piece(i) of the 8 in pages @page and @page + 1;
 * entry @bad (if below @n) names a key no context holds.
 */
static u32 xt_klm_pieces(struct kunit *test, struct walker_ctx *ctx,
			 unsigned int page, unsigned int n,
			 unsigned int (*piece)(unsigned int), unsigned int bad)
{
	u32 nokey = mrc_make_key(WT_MKEYS - 1, 0x33);
	struct mrc_klm *klm;
	unsigned int i;

	klm = kunit_kcalloc(test, n, sizeof(*klm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, klm);
	for (i = 0; i < n; i++) {
		unsigned int q = piece(i);

		klm[i] = wt_klm(SZ_1K, i == bad ? nokey : ctx->vdev->rsvd_lkey,
				wt_dma(ctx, page + q / 4) + (q % 4) * SZ_1K);
	}
	return wt_klm_key(test, ctx, WT_PDN, 0, klm, n,
			  MRC_ACCESS_LOCAL_WRITE);
}

/* The pieces the long message's source and destination go through. */
static unsigned int xt_src_piece(unsigned int i)
{
	return (3 * i + i / 8) % 8;
}

static unsigned int xt_dst_piece(unsigned int i)
{
	return i % 8;
}

/**
 * vhca_xfer_long_message() - a case of vhca_walker
 * @test: the case
 *
 * A message longer than VHCA_XFER_CHUNK (160 entries of 1 KiB, cycling
 * through the 8 KiB of pages 0 and 1 as source and of pages 2 and 3 as
 * destination) has both sides probed first: a destination whose last
 * entry is bad is not written at all. A good one is written in several
 * chunks, and each destination piece ends with the source piece of the
 * last entry that wrote it, which a lost or misplaced last chunk would
 * change.
 */
void vhca_xfer_long_message(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const unsigned int n = 160;
	const u64 len = (u64)n * SZ_1K;
	struct ib_sge ssge, dsge;
	struct vhca_cursor src, dst;
	enum vhca_side side;
	u32 skey, good, bad;
	unsigned int k;

	BUILD_BUG_ON(160 * SZ_1K <= VHCA_XFER_CHUNK);
	xt_pipes(test, ctx);
	wt_fill(wt_va(ctx, 0), PAGE_SIZE, 5);
	wt_fill(wt_va(ctx, 1), PAGE_SIZE, 55);
	skey = xt_klm_pieces(test, ctx, 0, n, xt_src_piece, n);
	good = xt_klm_pieces(test, ctx, 2, n, xt_dst_piece, n);
	bad = xt_klm_pieces(test, ctx, 2, n, xt_dst_piece, n - 1);
	ssge = (struct ib_sge) { .addr = 0, .length = len, .lkey = skey };

	dsge = (struct ib_sge) { .addr = 0, .length = len, .lkey = bad };
	src = xt_sgl(ctx, &ssge, 1, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, &dsge, 1, VHCA_ACCESS_LOCAL_WRITE);
	xt_refused(test, ctx, &src, &dst, len, -ENOKEY, VHCA_DST);

	dsge.lkey = good;
	src = xt_sgl(ctx, &ssge, 1, VHCA_ACCESS_LOCAL_READ);
	dst = xt_sgl(ctx, &dsge, 1, VHCA_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_xfer(ctx->vdev, &src, &dst, len, false,
					&side), 0);
	for (k = 0; k < 8; k++) {
		/* Entry n - 8 + k wrote piece k last. */
		unsigned int q = xt_src_piece(n - 8 + k);

		KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 2 + k / 4) +
					     (k % 4) * SZ_1K,
					     wt_va(ctx, q / 4) + (q % 4) * SZ_1K,
					     SZ_1K), 0);
	}
	KUNIT_EXPECT_EQ(test, dst.idx, 1U);
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));
}

/**
 * vhca_xfer_inline() - a case of vhca_walker
 * @test: the case
 *
 * Inline data is copied straight into the destination's pages; the
 * source cursor ends past it.
 */
void vhca_xfer_inline(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 diova = 0x40000;
	struct vhca_cursor src, dst;
	struct ib_sge dsge;
	enum vhca_side side;
	u8 data[200];
	u32 dkey;

	xt_pipes(test, ctx);
	wt_fill(data, sizeof(data), 6);
	dkey = wt_mtt_mr(test, ctx, WT_PDN, diova, 2, 1,
			 MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_LOCAL_WRITE);
	dsge = (struct ib_sge) { .addr = diova + 7, .length = sizeof(data),
				 .lkey = dkey };
	src = xt_sgl(ctx, NULL, sizeof(data), VHCA_ACCESS_LOCAL_READ);
	src.inline_data = data;
	dst = xt_sgl(ctx, &dsge, 1, VHCA_ACCESS_LOCAL_WRITE);

	KUNIT_ASSERT_EQ(test, vhca_xfer(ctx->vdev, &src, &dst, sizeof(data),
					false, &side), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 2) + 7, data, sizeof(data)),
			0);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 0, 7));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 7 + sizeof(data),
					PAGE_SIZE - 7 - sizeof(data)));
	KUNIT_EXPECT_EQ(test, src.off, (u64)sizeof(data));
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));
}

/**
 * vhca_gather_holds_keys() - a case of vhca_walker
 * @test: the case
 *
 * A gathering walk moves no byte; it keeps every key it entered held,
 * once each however often it entered it, until its pipe is released,
 * and merges pieces that follow each other in memory into one span. A
 * walk entering more keys than a pipe holds stops (-ENOSPC) with the
 * pieces before it gathered.
 */
void vhca_gather_holds_keys(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	struct vhca_dev *vdev = ctx->vdev;
	u32 rsvd = mrc_key_index(vdev->rsvd_lkey);
	struct mrc_klm klm[20];
	struct vhca_pipe *p;
	u32 key, mr[20];
	unsigned int i;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	wt_fill(wt_va(ctx, 1), PAGE_SIZE, 7);

	/* Two entries, 100 and 50 bytes, back to back in page 1. */
	klm[0] = wt_klm(100, vdev->rsvd_lkey, wt_dma(ctx, 1));
	klm[1] = wt_klm(50, vdev->rsvd_lkey, wt_dma(ctx, 1) + 100);
	key = wt_klm_key(test, ctx, WT_PDN, 0, klm, 2, 0);
	KUNIT_ASSERT_EQ(test, vhca_access_gather(vdev, WT_PDN, 0, key, 0, 150,
						 VHCA_ACCESS_LOCAL_READ, NULL,
						 NULL, p), 0);
	KUNIT_EXPECT_EQ(test, p->bytes, 150ULL);
	KUNIT_EXPECT_EQ(test, p->nr_spans, 1U);
	KUNIT_EXPECT_EQ(test, p->span[0].phys, page_to_phys(ctx->pages[1]));
	KUNIT_EXPECT_EQ(test, p->span[0].len, 150U);
	KUNIT_EXPECT_EQ(test, p->nr_keys, 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->mkey_users[rsvd]), 1);
	KUNIT_EXPECT_EQ(test,
			atomic_read(&vdev->mkey_users[mrc_key_index(key)]), 1);
	vhca_pipe_release(vdev, p);
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));
	KUNIT_EXPECT_EQ(test, p->nr_keys, 0U);
	KUNIT_EXPECT_EQ(test, p->nr_spans, 0U);
	KUNIT_EXPECT_EQ(test, p->bytes, 0ULL);

	/* 20 entries naming 20 MRs: the pipe holds the KLM key and 15. */
	BUILD_BUG_ON(ARRAY_SIZE(mr) <= VHCA_PIPE_KEYS);
	for (i = 0; i < ARRAY_SIZE(mr); i++) {
		mr[i] = wt_mtt_mr(test, ctx, WT_PDN, 0x100000 * (i + 1), 3, 1,
				  MRC_MTT_READ, 0);
		klm[i] = wt_klm(64, mr[i], 0x100000 * (i + 1));
	}
	key = wt_klm_key(test, ctx, WT_PDN, 0, klm, ARRAY_SIZE(mr), 0);
	KUNIT_EXPECT_EQ(test, vhca_access_gather(vdev, WT_PDN, 0, key, 0,
						 64 * ARRAY_SIZE(mr),
						 VHCA_ACCESS_LOCAL_READ, NULL,
						 NULL, p), -ENOSPC);
	KUNIT_EXPECT_EQ(test, p->nr_keys, (u32)VHCA_PIPE_KEYS);
	KUNIT_EXPECT_EQ(test, p->bytes, 64ULL * (VHCA_PIPE_KEYS - 1));
	vhca_pipe_release(vdev, p);
	KUNIT_EXPECT_TRUE(test, xt_no_holds(ctx));
}
