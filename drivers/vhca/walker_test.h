/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the vhca_walker suite's two files share: the case's device
 * (struct walker_ctx, set up by walker_test_init() in walker_test.c) and
 * helpers that write contexts and translation entries into its device
 * memory through vhca_hw_ops, as mrcore does; and the cases of
 * walker_odp_test.c, which walker_test.c lists in the suite.
 */
#ifndef _VHCA_WALKER_TEST_H
#define _VHCA_WALKER_TEST_H

#include <kunit/test.h>
#include <linux/dma-direct.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "vhca_loc.h"

#define WT_MKEYS	64
#define WT_XLT_SIZE	SZ_64K
#define WT_PAGES	4
#define WT_PDN		5
#define WT_OTHER_PDN	6
#define WT_QPN		77
#define WT_COUNTERS	16
/* Slot of the device's local DMA key, as mrcore's first allocation. */
#define WT_RSVD_INDEX	1

/**
 * struct walker_ctx - one case's device
 * @vdev: a vhca_dev with device memory and walker counts only
 * @pages: pages the tables name, zeroed
 * @next_index: next context slot to hand out
 * @next_xlt: next free byte of the translation area
 */
struct walker_ctx {
	struct vhca_dev *vdev;
	struct page *pages[WT_PAGES];
	u32 next_index;
	u64 next_xlt;
};

static inline u64 wt_dma(struct walker_ctx *ctx, unsigned int page)
{
	return phys_to_dma(&ctx->vdev->pdev->dev,
			   page_to_phys(ctx->pages[page]));
}

static inline u8 *wt_va(struct walker_ctx *ctx, unsigned int page)
{
	return page_address(ctx->pages[page]);
}

static inline struct mrc_klm wt_klm(u32 bcount, u32 key, u64 addr)
{
	return (struct mrc_klm) {
		.bcount = cpu_to_le32(bcount),
		.key = cpu_to_le32(key),
		.addr = cpu_to_le64(addr),
	};
}

/* A fresh key: the next slot, with a variant that is not 0. */
static inline u32 wt_new_key(struct kunit *test, struct walker_ctx *ctx)
{
	KUNIT_ASSERT_LT(test, ctx->next_index, (u32)WT_MKEYS);
	return mrc_make_key(ctx->next_index++, 0x5a);
}

/* Reserve @bytes of translation area, 64-byte aligned as mrcore's. */
static inline u64 wt_xlt(struct kunit *test, struct walker_ctx *ctx,
			 u64 bytes)
{
	u64 off = ctx->next_xlt;

	ctx->next_xlt = ALIGN(off + bytes, MRC_XLT_SEG_SIZE);
	KUNIT_ASSERT_LE(test, ctx->next_xlt, (u64)WT_XLT_SIZE);
	return off;
}

static inline void wt_write_mkey(struct kunit *test, struct walker_ctx *ctx,
				 const struct mrc_mkey_ctx *c)
{
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.write_mkey(&ctx->vdev->mdev,
						     mrc_key_index(c->key), c),
			0);
}

/*
 * An MTT-mode key of @pdn at @iova over pages @first .. @first + @n - 1,
 * entry i holding page @first + i's address | @bits[i], with context
 * @flags (MRC_MKEY_F_*).
 */
static inline u32 wt_mtt_key(struct kunit *test, struct walker_ctx *ctx,
			     u32 pdn, u64 iova, unsigned int first,
			     const u64 *bits, unsigned int n, u32 access,
			     u8 flags)
{
	__le64 mtt[WT_PAGES];
	struct mrc_mkey_ctx c = {
		.key = wt_new_key(test, ctx),
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_MTT,
		.page_shift = PAGE_SHIFT,
		.pdn = pdn,
		.access = access,
		.iova = iova,
		.length = (u64)n << PAGE_SHIFT,
		.xlt_entries = n,
		.flags = flags,
	};
	unsigned int i;

	KUNIT_ASSERT_LE(test, first + n, (unsigned int)WT_PAGES);
	for (i = 0; i < n; i++)
		mtt[i] = cpu_to_le64(wt_dma(ctx, first + i) | bits[i]);
	c.xlt_offset = wt_xlt(test, ctx, sizeof(mtt[0]) * n);
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.write_xlt(&ctx->vdev->mdev,
						    c.xlt_offset, mtt,
						    sizeof(mtt[0]) * n),
			0);
	wt_write_mkey(test, ctx, &c);
	return c.key;
}

/*
 * An MTT-mode MR of @pdn over @npages of the case's pages from @first, at
 * page-aligned @iova, every entry carrying @bits (MRC_MTT_READ/WRITE).
 */
static inline u32 wt_mtt_mr(struct kunit *test, struct walker_ctx *ctx,
			    u32 pdn, u64 iova, unsigned int first,
			    unsigned int npages, u64 bits, u32 access)
{
	u64 each[WT_PAGES];
	unsigned int i;

	KUNIT_ASSERT_LE(test, npages, (unsigned int)WT_PAGES);
	for (i = 0; i < npages; i++)
		each[i] = bits;
	return wt_mtt_key(test, ctx, pdn, iova, first, each, npages, access,
			  0);
}

/*
 * A KLM-mode key of @pdn at @iova over @n entries, bound to QP @qpn (a
 * type 2 window) or to none (0); its length is the entries' byte counts.
 */
static inline u32 wt_klm_key_qp(struct kunit *test, struct walker_ctx *ctx,
				u32 pdn, u64 iova, const struct mrc_klm *klm,
				unsigned int n, u32 access, u32 qpn)
{
	struct mrc_mkey_ctx c = {
		.key = wt_new_key(test, ctx),
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_KLM,
		.pdn = pdn,
		.access = access,
		.iova = iova,
		.xlt_entries = n,
		.qpn = qpn,
	};
	unsigned int i;

	for (i = 0; i < n; i++)
		c.length += le32_to_cpu(klm[i].bcount);
	c.xlt_offset = wt_xlt(test, ctx, sizeof(*klm) * n);
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.write_xlt(&ctx->vdev->mdev,
						    c.xlt_offset, klm,
						    sizeof(*klm) * n),
			0);
	wt_write_mkey(test, ctx, &c);
	return c.key;
}

static inline u32 wt_klm_key(struct kunit *test, struct walker_ctx *ctx,
			     u32 pdn, u64 iova, const struct mrc_klm *klm,
			     unsigned int n, u32 access)
{
	return wt_klm_key_qp(test, ctx, pdn, iova, klm, n, access, 0);
}

/* Bytes [@off, @off + @len) of page @page are all zero (untouched). */
static inline bool wt_zero(struct walker_ctx *ctx, unsigned int page,
			   unsigned int off, unsigned int len)
{
	return !memchr_inv(wt_va(ctx, page) + off, 0, len);
}

static inline void wt_fill(u8 *buf, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = seed + i * 7;
}

void vhca_walk_records_counters(struct kunit *test);
void vhca_walk_odp_fault_recorded(struct kunit *test);
void vhca_walk_odp_fault_nested(struct kunit *test);
void vhca_walk_odp_flag_checked(struct kunit *test);
void vhca_odp_mkeys_counted(struct kunit *test);
void vhca_nosleep_write_mkey_walker_inside(struct kunit *test);
void vhca_walk_ksm_blocks(struct kunit *test);
void vhca_walk_ksm_odp_fault(struct kunit *test);
void vhca_xfer_one_copy(struct kunit *test);
void vhca_xfer_checks_both_first(struct kunit *test);
void vhca_xfer_gather_falls_short(struct kunit *test);
void vhca_xfer_long_message(struct kunit *test);
void vhca_xfer_inline(struct kunit *test);
void vhca_gather_holds_keys(struct kunit *test);

#endif /* _VHCA_WALKER_TEST_H */
