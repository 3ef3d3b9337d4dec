// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vhca's walker (walker.c): KLM entries that name other
 * keys (indirect keys, memory windows, SG_GAPS MRs over the local DMA
 * key), the nesting rules and depth limit, the rights of the keys an
 * indirect key names checked at every access, a type 2 window's QP, a
 * window's key refused as an lkey, the address arithmetic of a
 * zero-based window, where the bytes land, and the counters a walk
 * records.
 *
 * Each case gets a device memory of its own and no ib_device: contexts
 * and entries are written through vhca_hw_ops, as mrcore writes them, and
 * read back by vhca_access(), as the engine does. The "DMA addresses" are
 * those of pages the case allocates (dma-direct, as on a real vhca).
 * Linked into vhca.ko and run when it loads.
 */
#include <kunit/test.h>
#include <linux/dma-direct.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "vhca_loc.h"
#include "walker_test.h"

static int walker_test_init(struct kunit *test)
{
	struct mrc_mkey_ctx rsvd;
	struct walker_ctx *ctx;
	struct vhca_dev *vdev;
	unsigned int i;
	int err;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	vdev = kunit_kzalloc(test, sizeof(*vdev), GFP_KERNEL);
	if (!ctx || !vdev)
		return -ENOMEM;
	/* A device that is never registered: dma-direct, no range map. */
	vdev->pdev = kunit_kzalloc(test, sizeof(*vdev->pdev), GFP_KERNEL);
	if (!vdev->pdev)
		return -ENOMEM;
	ctx->vdev = vdev;
	ctx->next_index = WT_RSVD_INDEX + 1;
	test->priv = ctx;

	vdev->mdev.caps.max_mkeys = WT_MKEYS;
	vdev->mdev.caps.max_pds = 16;
	vdev->mdev.caps.xlt_size = WT_XLT_SIZE;
	vdev->mdev.caps.page_size_bitmap = PAGE_SIZE | SZ_2M | SZ_1G;
	vdev->mdev.caps.max_counters = WT_COUNTERS;
	err = vhca_devmem_init(vdev);
	if (err)
		return err;
	err = vhca_mkey_users_init(vdev);
	if (err)
		return err;
	for (i = 0; i < WT_PAGES; i++) {
		ctx->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!ctx->pages[i])
			return -ENOMEM;
	}

	/* The local DMA key, as mrcore registers it: PA, any PD, local. */
	rsvd = (struct mrc_mkey_ctx) {
		.key = mrc_make_key(WT_RSVD_INDEX, 0x01),
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_PA,
		.pdn = MRC_PDN_ANY,
		.access = MRC_ACCESS_LOCAL_WRITE,
		.length = U64_MAX,
	};
	vdev->rsvd_lkey = rsvd.key;
	return vhca_hw_ops.write_mkey(&vdev->mdev, WT_RSVD_INDEX, &rsvd);
}

/* Also after a failed init: whatever was set up is undone. */
static void walker_test_exit(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	unsigned int i;

	if (!ctx)
		return;
	for (i = 0; i < WT_PAGES; i++)
		if (ctx->pages[i])
			__free_page(ctx->pages[i]);
	vhca_mkey_users_fini(ctx->vdev);
	vhca_devmem_fini(ctx->vdev);
}

/*
 * An indirect key over two pieces of an MR: a write through it lands at
 * the MR addresses its entries name, and nowhere else; a read across
 * the entry boundary reads the same bytes back.
 */
static void vhca_walk_nested_key_allowed(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 mr_iova = 0x100000, ind_iova = 0x7000;
	struct mrc_klm klm[2];
	u8 in[150], out[20];
	u32 mr, ind;

	mr = wt_mtt_mr(test, ctx, WT_PDN, mr_iova, 0, 1,
		       MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_LOCAL_WRITE);
	klm[0] = wt_klm(100, mr, mr_iova + 200);
	klm[1] = wt_klm(50, mr, mr_iova + 1000);
	ind = wt_klm_key(test, ctx, WT_PDN, ind_iova, klm, 2,
			 MRC_ACCESS_LOCAL_WRITE);
	wt_fill(in, sizeof(in), 1);

	KUNIT_ASSERT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, ind_iova,
					  in, sizeof(in),
					  VHCA_ACCESS_LOCAL_WRITE), 0);

	/* After: piece 0 at MR offset 200, piece 1 at 1000, gaps intact. */
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 0) + 200, in, 100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 0) + 1000, in + 100, 50), 0);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 0, 0, 200));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 0, 300, 700));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 0, 1050, PAGE_SIZE - 1050));

	KUNIT_ASSERT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind,
					  ind_iova + 90, out, sizeof(out),
					  VHCA_ACCESS_LOCAL_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, in + 90, sizeof(out)), 0);
}

/*
 * A nested key is matched with its variant: an entry naming the MR's
 * slot with another variant fails as a stale key does, and so does an
 * entry whose MR has since been registered again under a new variant.
 */
static void vhca_walk_nested_key_stale_variant(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	struct mrc_mkey_ctx mrc;
	struct mrc_klm klm;
	u32 mr, stale, ind;
	u8 buf[16];

	mr = wt_mtt_mr(test, ctx, WT_PDN, 0, 0, 1, MRC_MTT_READ,
		       MRC_ACCESS_REMOTE_READ);
	stale = mrc_make_key(mrc_key_index(mr), mrc_key_variant(mr) + 1);
	klm = wt_klm(64, stale, 0);
	ind = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1, 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), -ENOKEY);

	/* Before: an entry naming the live key reads. */
	klm = wt_klm(64, mr, 0);
	ind = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1, 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), 0);

	/* After: the MR's slot holds a new variant (a REG_MR's key). */
	KUNIT_ASSERT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(mr),
					     &mrc), 0);
	mrc.key = stale;
	wt_write_mkey(test, ctx, &mrc);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), -ENOKEY);
}

/*
 * A key may only name keys of its own PD: an indirect key of PD 5 over
 * an MR of PD 6 is refused, although the requester's PD is the indirect
 * key's.
 */
static void vhca_walk_nested_key_other_pd(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	struct mrc_klm klm;
	u32 mr, ind;
	u8 buf[16];

	mr = wt_mtt_mr(test, ctx, WT_OTHER_PDN, 0, 0, 1,
		       MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_LOCAL_WRITE);
	klm = wt_klm(PAGE_SIZE, mr, 0);
	ind = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1, MRC_ACCESS_LOCAL_WRITE);
	wt_fill(buf, sizeof(buf), 3);

	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_WRITE), -EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), -EPERM);
	/* After: nothing reached the other PD's memory. */
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 0, 0, PAGE_SIZE));
}

/*
 * A nested key's range is checked in its own address space, and a write
 * through it needs the W bit of its own MTT entries.
 */
static void vhca_walk_nested_key_range_and_mtt(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 mr_iova = 0x40000;
	struct mrc_klm klm;
	u32 ro_mr, ind;
	u8 buf[200];

	ro_mr = wt_mtt_mr(test, ctx, WT_PDN, mr_iova, 0, 1, MRC_MTT_READ,
			  MRC_ACCESS_LOCAL_WRITE);

	/* An entry that runs 104 bytes past the MR's end. */
	klm = wt_klm(sizeof(buf), ro_mr, mr_iova + PAGE_SIZE - 96);
	ind = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1, 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), -ERANGE);

	/* Inside the MR: reads pass, writes lack the MTT W bit. */
	klm = wt_klm(sizeof(buf), ro_mr, mr_iova);
	ind = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1, MRC_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 0, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_WRITE), -EFAULT);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 0, 0, PAGE_SIZE));
}

/*
 * A chain of @nklm KLM keys, each naming the next, the last naming the
 * local DMA key over page 0: a walk through the first holds nklm + 1
 * keys. Returns the first key.
 */
static u32 wt_chain(struct kunit *test, struct walker_ctx *ctx,
		    unsigned int nklm, u32 len)
{
	struct mrc_klm klm = wt_klm(len, ctx->vdev->rsvd_lkey,
				    wt_dma(ctx, 0));
	u32 key = 0;
	unsigned int i;

	for (i = 0; i < nklm; i++) {
		key = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1,
				 MRC_ACCESS_LOCAL_WRITE);
		klm = wt_klm(len, key, 0);
	}
	return key;
}

/*
 * A walk holds at most VHCA_WALK_MAX_DEPTH keys: a chain that long moves
 * its bytes, one key longer fails -EINVAL and moves none, and so does a
 * key whose entry names itself.
 */
static void vhca_walk_depth_limit(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	u32 deepest, too_deep, self;
	struct mrc_klm klm;
	u8 buf[32];

	wt_fill(buf, sizeof(buf), 5);
	deepest = wt_chain(test, ctx, VHCA_WALK_MAX_DEPTH - 1, sizeof(buf));
	too_deep = wt_chain(test, ctx, VHCA_WALK_MAX_DEPTH, sizeof(buf));

	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, too_deep, 0,
					  buf, sizeof(buf),
					  VHCA_ACCESS_LOCAL_WRITE), -EINVAL);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 0, 0, PAGE_SIZE));

	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, deepest, 0,
					  buf, sizeof(buf),
					  VHCA_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 0), buf, sizeof(buf)), 0);

	/* A KLM key whose one entry names its own key: bounded, -EINVAL. */
	klm = wt_klm(sizeof(buf), mrc_make_key(ctx->next_index, 0x5a), 0);
	self = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1,
			  MRC_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_EQ(test, le32_to_cpu(klm.key), self);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, self, 0,
					  buf, sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), -EINVAL);
}

/*
 * A type 2 window serves remote accesses on its own QP only: another QP
 * and "no QP" get -EPERM, zero-length accesses included. Rights are the
 * window's: the MR beneath grants no remote right (only MW_BIND), yet
 * the window's remote write lands.
 */
static void vhca_walk_type2_window_qp(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 mr_iova = 0x300000;
	const u32 wrights = MRC_ACCESS_REMOTE_READ | MRC_ACCESS_REMOTE_WRITE |
			    MRC_ACCESS_REMOTE_ONLY;
	struct mrc_klm klm;
	u8 buf[64];
	u32 mr, mw;

	mr = wt_mtt_mr(test, ctx, WT_PDN, mr_iova, 1, 1,
		       MRC_MTT_READ | MRC_MTT_WRITE,
		       MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_MW_BIND);
	klm = wt_klm(PAGE_SIZE, mr, mr_iova);
	mw = wt_klm_key_qp(test, ctx, WT_PDN, mr_iova, &klm, 1, wrights,
			   WT_QPN);
	wt_fill(buf, sizeof(buf), 9);

	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, WT_QPN + 1, mw,
					  mr_iova, buf, sizeof(buf),
					  VHCA_ACCESS_REMOTE_WRITE), -EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw, mr_iova,
					  buf, sizeof(buf),
					  VHCA_ACCESS_REMOTE_READ), -EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, WT_QPN + 1, mw,
					  mr_iova, NULL, 0,
					  VHCA_ACCESS_REMOTE_READ), -EPERM);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 1, 0, PAGE_SIZE));

	/* On its own QP: the write lands at the MR's page. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, WT_QPN, mw,
					  mr_iova + 8, buf, sizeof(buf),
					  VHCA_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 1) + 8, buf, sizeof(buf)), 0);

	/* The MR's key itself grants no remote right. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, WT_QPN, mr,
					  mr_iova, buf, sizeof(buf),
					  VHCA_ACCESS_REMOTE_READ), -EPERM);
}

/*
 * A zero-based window over [mr_iova + 4000, + 1000) of a two-page MR:
 * window address a is MR address mr_iova + 4000 + a, so a write at 50
 * starts 4050 bytes into page 2 and runs into page 3; the MR's own
 * addresses and bytes past the window's end are outside the window.
 */
static void vhca_walk_zero_based_window(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 mr_iova = 0x200000;
	struct mrc_klm klm;
	u8 buf[200];
	u32 mr, mw;

	mr = wt_mtt_mr(test, ctx, WT_PDN, mr_iova, 2, 2,
		       MRC_MTT_READ | MRC_MTT_WRITE,
		       MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_MW_BIND);
	klm = wt_klm(1000, mr, mr_iova + 4000);
	mw = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1,
			MRC_ACCESS_REMOTE_WRITE | MRC_ACCESS_REMOTE_READ |
			MRC_ACCESS_REMOTE_ONLY);
	wt_fill(buf, sizeof(buf), 11);

	KUNIT_ASSERT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw, 50, buf,
					  sizeof(buf),
					  VHCA_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 2) + 4050, buf, 46), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 3), buf + 46, 154), 0);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 0, 4050));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 3, 154, PAGE_SIZE - 154));

	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw, 900, buf,
					  sizeof(buf),
					  VHCA_ACCESS_REMOTE_READ), -ERANGE);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw,
					  mr_iova + 4000, buf, 8,
					  VHCA_ACCESS_REMOTE_READ), -ERANGE);
}

/*
 * An SG_GAPS-style key: KLM entries over the local DMA key at DMA
 * addresses of any alignment. A remote read through it gathers the
 * pieces in entry order, although the local DMA key itself serves local
 * access only.
 */
static void vhca_walk_sg_gaps_local_dma_key(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 iova = 0x1234;
	u32 rsvd = ctx->vdev->rsvd_lkey;
	struct mrc_klm klm[2];
	u8 want[300], got[300];
	u32 key;

	wt_fill(want, sizeof(want), 13);
	memcpy(wt_va(ctx, 0) + 50, want, 100);
	memcpy(wt_va(ctx, 2) + 301, want + 100, 200);
	klm[0] = wt_klm(100, rsvd, wt_dma(ctx, 0) + 50);
	klm[1] = wt_klm(200, rsvd, wt_dma(ctx, 2) + 301);
	key = wt_klm_key(test, ctx, WT_PDN, iova, klm, 2,
			 MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_READ);

	KUNIT_ASSERT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, key, iova, got,
					  sizeof(got),
					  VHCA_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, want, sizeof(want)), 0);

	/* The local DMA key named directly still refuses remote access. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, rsvd,
					  wt_dma(ctx, 0), got, 8,
					  VHCA_ACCESS_REMOTE_READ), -EPERM);
}

/*
 * A memory window is an rkey only (mrcore marks its context
 * MRC_ACCESS_REMOTE_ONLY): its key used as an lkey is refused -EPERM for
 * local reads and writes, zero-length ones included, and so is a local
 * access through a KLM key that names the window; the bytes beneath stay
 * as they were. The same window serves a remote read.
 */
static void vhca_walk_window_key_as_lkey(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 mr_iova = 0x500000;
	struct mrc_klm klm;
	u8 want[64], buf[64];
	u32 mr, mw, ind;

	mr = wt_mtt_mr(test, ctx, WT_PDN, mr_iova, 1, 1,
		       MRC_MTT_READ | MRC_MTT_WRITE,
		       MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_MW_BIND);
	klm = wt_klm(PAGE_SIZE, mr, mr_iova);
	mw = wt_klm_key(test, ctx, WT_PDN, mr_iova, &klm, 1,
			MRC_ACCESS_REMOTE_READ | MRC_ACCESS_REMOTE_WRITE |
			MRC_ACCESS_REMOTE_ONLY);
	klm = wt_klm(PAGE_SIZE, mw, mr_iova);
	ind = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1,
			 MRC_ACCESS_LOCAL_WRITE);
	wt_fill(want, sizeof(want), 21);
	memcpy(wt_va(ctx, 1) + 16, want, sizeof(want));
	wt_fill(buf, sizeof(buf), 99);

	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw,
					  mr_iova + 16, buf, sizeof(buf),
					  VHCA_ACCESS_LOCAL_READ), -EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw,
					  mr_iova + 16, buf, sizeof(buf),
					  VHCA_ACCESS_LOCAL_WRITE), -EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw, mr_iova,
					  NULL, 0, VHCA_ACCESS_LOCAL_READ),
			-EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind, 16, buf,
					  sizeof(buf),
					  VHCA_ACCESS_LOCAL_WRITE), -EPERM);

	/* After: the page and the caller's buffer are untouched. */
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 1) + 16, want, sizeof(want)),
			0);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 1, 0, 16));
	KUNIT_EXPECT_EQ(test, buf[0], (u8)99);

	/* As an rkey the window reads the same bytes. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw,
					  mr_iova + 16, buf, sizeof(buf),
					  VHCA_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
}

/* Rewrite @key's context with @access and @flags, the rest as it is. */
static void wt_set_ctx(struct kunit *test, struct walker_ctx *ctx, u32 key,
		       u32 access, u8 flags)
{
	struct mrc_mkey_ctx c;

	KUNIT_ASSERT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(key),
					     &c), 0);
	KUNIT_ASSERT_EQ(test, c.key, key);
	c.access = access;
	c.flags = flags;
	wt_write_mkey(test, ctx, &c);
}

/*
 * An indirect key's context (MRC_MKEY_F_NESTED_RIGHTS) has the access's
 * right checked against the key each entry names, at every access: once
 * the MR it names has lost REMOTE_WRITE and REMOTE_READ (a rereg that
 * keeps the key), remote writes and reads through it fail -EPERM and
 * move nothing; with the rights back they work again. A KLM context
 * without the flag over the same MR (a window) still needs none of the
 * MR's rights. The flag is refused outside KLM mode.
 */
static void vhca_walk_nested_rights_checked(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u32 all = MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE |
			MRC_ACCESS_REMOTE_READ;
	const u32 remote = MRC_ACCESS_REMOTE_WRITE | MRC_ACCESS_REMOTE_READ;
	const u64 mr_iova = 0x600000, ind_iova = 0x9000;
	struct mrc_mkey_ctx c;
	struct mrc_klm klm;
	u8 in[64], out[64];
	u32 mr, ind, mw;

	mr = wt_mtt_mr(test, ctx, WT_PDN, mr_iova, 2, 1,
		       MRC_MTT_READ | MRC_MTT_WRITE, all);
	klm = wt_klm(PAGE_SIZE, mr, mr_iova);
	ind = wt_klm_key(test, ctx, WT_PDN, ind_iova, &klm, 1, all);
	wt_set_ctx(test, ctx, ind, all, MRC_MKEY_F_NESTED_RIGHTS);
	mw = wt_klm_key(test, ctx, WT_PDN, mr_iova, &klm, 1,
			remote | MRC_ACCESS_REMOTE_ONLY);
	wt_fill(in, sizeof(in), 41);

	/* Before: the MR grants both rights; a write lands, reads back. */
	KUNIT_ASSERT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind,
					  ind_iova + 32, in, sizeof(in),
					  VHCA_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 2) + 32, in, sizeof(in)), 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind,
					  ind_iova + 32, out, sizeof(out),
					  VHCA_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, in, sizeof(in)), 0);

	/* The MR keeps its key but only LOCAL_WRITE. */
	wt_set_ctx(test, ctx, mr, MRC_ACCESS_LOCAL_WRITE, 0);
	wt_fill(in, sizeof(in), 77);
	wt_fill(out, sizeof(out), 99);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind,
					  ind_iova + 32, in, sizeof(in),
					  VHCA_ACCESS_REMOTE_WRITE), -EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind,
					  ind_iova + 32, out, sizeof(out),
					  VHCA_ACCESS_REMOTE_READ), -EPERM);
	/* After: the page still holds the first write; nothing was read. */
	wt_fill(in, sizeof(in), 41);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 2) + 32, in, sizeof(in)), 0);
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 0, 32));
	KUNIT_EXPECT_TRUE(test, wt_zero(ctx, 2, 96, PAGE_SIZE - 96));
	KUNIT_EXPECT_EQ(test, out[0], (u8)99);

	/* No flag: the window's own rights suffice, not the MR's. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, mw,
					  mr_iova + 32, out, sizeof(out),
					  VHCA_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, in, sizeof(in)), 0);

	/* The rights back: the indirect key works again. */
	wt_set_ctx(test, ctx, mr, all, 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ind,
					  ind_iova + 32, out, sizeof(out),
					  VHCA_ACCESS_REMOTE_READ), 0);

	/* Only KLM entries name keys: the flag elsewhere is malformed. */
	KUNIT_ASSERT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(mr), &c),
			0);
	c.flags = MRC_MKEY_F_NESTED_RIGHTS;
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.write_mkey(&ctx->vdev->mdev,
						     mrc_key_index(mr), &c),
			-EINVAL);
}

/*
 * Through an indirect key, the local DMA key is checked as if named
 * directly: it serves local access only, so a remote read through a
 * flagged KLM entry naming it fails, while a local write lands. (mrcore
 * never lets an indirect key name it; the device does not rely on that.)
 */
static void vhca_walk_nested_rights_local_dma_key(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u32 rights = MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_READ;
	struct mrc_klm klm;
	u8 in[32], out[32];
	u32 key;

	klm = wt_klm(PAGE_SIZE, ctx->vdev->rsvd_lkey, wt_dma(ctx, 3));
	key = wt_klm_key(test, ctx, WT_PDN, 0, &klm, 1, rights);
	wt_fill(in, sizeof(in), 5);

	/* Before: without the flag, the key's own REMOTE_READ suffices. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, key, 0, out,
					  sizeof(out),
					  VHCA_ACCESS_REMOTE_READ), 0);

	wt_set_ctx(test, ctx, key, rights, MRC_MKEY_F_NESTED_RIGHTS);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, key, 0, out,
					  sizeof(out),
					  VHCA_ACCESS_REMOTE_READ), -EPERM);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, key, 0, in,
					  sizeof(in),
					  VHCA_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 3), in, sizeof(in)), 0);
}

static struct kunit_case walker_test_cases[] = {
	KUNIT_CASE(vhca_walk_nested_key_allowed),
	KUNIT_CASE(vhca_walk_nested_key_stale_variant),
	KUNIT_CASE(vhca_walk_nested_key_other_pd),
	KUNIT_CASE(vhca_walk_nested_key_range_and_mtt),
	KUNIT_CASE(vhca_walk_depth_limit),
	KUNIT_CASE(vhca_walk_type2_window_qp),
	KUNIT_CASE(vhca_walk_zero_based_window),
	KUNIT_CASE(vhca_walk_sg_gaps_local_dma_key),
	KUNIT_CASE(vhca_walk_window_key_as_lkey),
	KUNIT_CASE(vhca_walk_nested_rights_checked),
	KUNIT_CASE(vhca_walk_nested_rights_local_dma_key),
	KUNIT_CASE(vhca_walk_records_counters),
	KUNIT_CASE(vhca_walk_odp_fault_recorded),
	KUNIT_CASE(vhca_walk_odp_fault_nested),
	KUNIT_CASE(vhca_walk_odp_flag_checked),
	KUNIT_CASE(vhca_odp_mkeys_counted),
	KUNIT_CASE(vhca_nosleep_write_mkey_walker_inside),
	KUNIT_CASE(vhca_walk_ksm_blocks),
	KUNIT_CASE(vhca_walk_ksm_odp_fault),
	KUNIT_CASE(vhca_xfer_one_copy),
	KUNIT_CASE(vhca_xfer_checks_both_first),
	KUNIT_CASE(vhca_xfer_gather_falls_short),
	KUNIT_CASE(vhca_xfer_long_message),
	KUNIT_CASE(vhca_xfer_inline),
	KUNIT_CASE(vhca_gather_holds_keys),
	{}
};

static struct kunit_suite walker_test_suite = {
	.name = "vhca_walker",
	.init = walker_test_init,
	.exit = walker_test_exit,
	.test_cases = walker_test_cases,
};

kunit_test_suite(walker_test_suite);
