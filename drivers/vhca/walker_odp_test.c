// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases of the vhca_walker suite (listed in walker_test.c) for what
 * a walk records besides bytes: the counters of the contexts it resolves
 * through, ODP page faults (MTT and KSM mode, nested under indirect
 * keys, implicit ODP parents) and the context flags write_mkey accepts;
 * and KSM mode's block arithmetic. They share the case's device and the
 * helpers of walker_test.h.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "engine.h"
#include "vhca_loc.h"
#include "walker_test.h"

/* Walk @len bytes at @iova of @key as a remote write, recording counters. */
static int wt_counted_write(struct walker_ctx *ctx, struct vhca_counted *cnt,
			    u32 key, u64 iova, size_t len, bool success)
{
	u8 buf[256] = {};
	int err;

	vhca_counted_begin(cnt);
	err = vhca_access_counted(ctx->vdev, WT_PDN, 0, key, iova, buf, len,
				  VHCA_ACCESS_REMOTE_WRITE, cnt->ids);
	vhca_counted_end(ctx->vdev, cnt, success && !err);
	return err;
}

static u64 wt_counter(struct walker_ctx *ctx, u32 counter)
{
	return vhca_hw_ops.read_counter(&ctx->vdev->mdev, counter);
}

/**
 * vhca_walk_records_counters() - a case of vhca_walker
 * @test: the case
 *
 * A walk records the counter of every context it resolves bytes
 * through, at every level, each once; the engine's end of a successful
 * operation adds one to each, a failed one to none.
 */
void vhca_walk_records_counters(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 a_iova = 0x100000, b_iova = 0x200000, ind_iova = 0x5000;
	struct vhca_counted cnt;
	struct mrc_klm klm[2];
	u32 a, b, ind;

	a = wt_mtt_mr(test, ctx, WT_PDN, a_iova, 0, 1,
		      MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_REMOTE_WRITE);
	b = wt_mtt_mr(test, ctx, WT_PDN, b_iova, 1, 1,
		      MRC_MTT_READ | MRC_MTT_WRITE, MRC_ACCESS_REMOTE_WRITE);
	klm[0] = wt_klm(100, a, a_iova);
	klm[1] = wt_klm(50, b, b_iova);
	ind = wt_klm_key(test, ctx, WT_PDN, ind_iova, klm, 2,
			 MRC_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.set_mkey_counter(&ctx->vdev->mdev,
							   mrc_key_index(a), 3),
			0);
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.set_mkey_counter(&ctx->vdev->mdev,
							   mrc_key_index(b), 5),
			0);

	/* Across both pieces: both MRs' counters, nothing else. */
	KUNIT_ASSERT_EQ(test, wt_counted_write(ctx, &cnt, ind, ind_iova, 150,
					       true), 0);
	KUNIT_EXPECT_EQ(test, bitmap_weight(cnt.ids, VHCA_MAX_COUNTERS), 2U);
	KUNIT_EXPECT_TRUE(test, test_bit(3, cnt.ids) && test_bit(5, cnt.ids));
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 3), 1ULL);
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 5), 1ULL);

	/* Inside the first piece: its MR's only. */
	KUNIT_ASSERT_EQ(test, wt_counted_write(ctx, &cnt, ind, ind_iova + 10,
					       20, true), 0);
	KUNIT_EXPECT_EQ(test, bitmap_weight(cnt.ids, VHCA_MAX_COUNTERS), 1U);
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 3), 2ULL);
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 5), 1ULL);

	/* The indirect key sharing A's counter: still once per operation. */
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.set_mkey_counter(&ctx->vdev->mdev,
							   mrc_key_index(ind),
							   3), 0);
	KUNIT_ASSERT_EQ(test, wt_counted_write(ctx, &cnt, ind, ind_iova, 150,
					       true), 0);
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 3), 3ULL);
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 5), 2ULL);

	/* A walk out of range and an operation that failed add nothing. */
	KUNIT_EXPECT_EQ(test, wt_counted_write(ctx, &cnt, ind, ind_iova + 100,
					       51, true), -ERANGE);
	KUNIT_ASSERT_EQ(test, wt_counted_write(ctx, &cnt, a, a_iova, 8, false),
			0);
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 3), 3ULL);
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 5), 2ULL);

	/* A counter the table does not have: refused by the device. */
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.set_mkey_counter(&ctx->vdev->mdev,
							   mrc_key_index(a),
							   WT_COUNTERS),
			-EINVAL);
	/* Unbound: the MR's writes count no more. */
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.set_mkey_counter(&ctx->vdev->mdev,
							   mrc_key_index(b), 0),
			0);
	KUNIT_ASSERT_EQ(test, wt_counted_write(ctx, &cnt, b, b_iova, 8, true),
			0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(cnt.ids, VHCA_MAX_COUNTERS));
	KUNIT_EXPECT_EQ(test, wt_counter(ctx, 5), 2ULL);
}

/*
 * An ODP MR (MRC_MKEY_F_ODP) of @pdn at @iova over pages 0 .. @n - 1,
 * entry i with @bits[i] (0: non-present).
 */
static u32 wt_odp_mr(struct kunit *test, struct walker_ctx *ctx, u32 pdn,
		     u64 iova, const u64 *bits, unsigned int n, u32 access)
{
	return wt_mtt_key(test, ctx, pdn, iova, 0, bits, n, access,
			  MRC_MKEY_F_ODP);
}

/* The fault @f records is exactly (@key, @iova, @len, @write). */
static bool assert_fault(struct kunit *test, struct walker_ctx *ctx,
			 const struct vhca_fault *f, u32 key, u64 iova,
			 u64 len, bool write)
{
	if (f->pending && f->vdev == ctx->vdev && f->key == key &&
	    f->iova == iova && f->len == len && f->write == write)
		return true;
	KUNIT_FAIL(test,
		   "fault pending %d key 0x%x iova 0x%llx len %llu write %d, want key 0x%x iova 0x%llx len %llu write %d",
		   f->pending, f->key, f->iova, f->len, f->write, key, iova,
		   len, write);
	return false;
}

/**
 * vhca_walk_odp_fault_recorded() - a case of vhca_walker
 * @test: the case
 *
 * An ODP context's entry without the bit an access needs is a page fault:
 * -EAGAIN, recorded once (the first of an operation) with the key, the
 * faulting address and the rest of the access. The same entry in a
 * context without MRC_MKEY_F_ODP is a protection error, -EFAULT.
 */
void vhca_walk_odp_fault_recorded(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 iova = 0x40000, plain_iova = 0x80000;
	const u64 bits[3] = { MRC_MTT_READ | MRC_MTT_WRITE, 0, MRC_MTT_READ };
	struct vhca_fault f = {};
	u32 rights = MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE;
	u8 buf[16] = {};
	u32 key, plain;

	key = wt_odp_mr(test, ctx, WT_PDN, iova, bits, 3, rights);
	plain = wt_mtt_mr(test, ctx, WT_PDN, plain_iova, 0, 1, 0, rights);

	/* A present, writable page: no fault. */
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, key,
						iova + 8, buf, 8,
						VHCA_ACCESS_LOCAL_WRITE, NULL,
						&f), 0);
	KUNIT_EXPECT_FALSE(test, f.pending);

	/* Non-present: the fault starts at the page's first byte touched. */
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, key,
						iova + PAGE_SIZE + 8, buf, 16,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, key, iova + PAGE_SIZE + 8, 16, false);

	/* A pending fault is not overwritten by a later one. */
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, key,
						iova + 2 * PAGE_SIZE, buf, 8,
						VHCA_ACCESS_REMOTE_WRITE, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, key, iova + PAGE_SIZE + 8, 16, false);

	/* Across pages 0 and 1: the fault is the part in page 1. */
	f.pending = false;
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, key,
						iova + PAGE_SIZE - 4, buf, 12,
						VHCA_ACCESS_LOCAL_WRITE, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, key, iova + PAGE_SIZE, 8, true);

	/* Read-only page 2: reads pass, a write faults for write. */
	f.pending = false;
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, key,
						iova + 2 * PAGE_SIZE, buf, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), 0);
	KUNIT_EXPECT_FALSE(test, f.pending);
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, key,
						iova + 2 * PAGE_SIZE, buf, 8,
						VHCA_ACCESS_REMOTE_WRITE, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, key, iova + 2 * PAGE_SIZE, 8, true);

	/* A probe faults too; with no place to record, only -EAGAIN. */
	f.pending = false;
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, key,
						iova + PAGE_SIZE, NULL, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EAGAIN);
	KUNIT_EXPECT_TRUE(test, f.pending);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, key,
					  iova + PAGE_SIZE, buf, 8,
					  VHCA_ACCESS_LOCAL_READ), -EAGAIN);

	/* The same non-present entry without the ODP flag: -EFAULT. */
	f.pending = false;
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, plain,
						plain_iova, buf, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EFAULT);
	KUNIT_EXPECT_FALSE(test, f.pending);
}

/**
 * vhca_walk_odp_fault_nested() - a case of vhca_walker
 * @test: the case
 *
 * Through a KLM key naming an ODP MR, the fault names the MR's key and an
 * address in the MR's space: what mrcore resolves is the MR.
 */
void vhca_walk_odp_fault_nested(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 iova = 0x40000, ind_iova = 0x9000;
	const u64 bits[2] = { MRC_MTT_READ | MRC_MTT_WRITE, 0 };
	struct vhca_fault f = {};
	struct mrc_klm klm;
	u8 buf[8];
	u32 mr, ind;

	mr = wt_odp_mr(test, ctx, WT_PDN, iova, bits, 2,
		       MRC_ACCESS_LOCAL_WRITE);
	klm = wt_klm(2 * PAGE_SIZE, mr, iova);
	ind = wt_klm_key(test, ctx, WT_PDN, ind_iova, &klm, 1,
			 MRC_ACCESS_LOCAL_WRITE);

	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, ind,
						ind_iova + PAGE_SIZE + 16, buf,
						8, VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, mr, iova + PAGE_SIZE + 16, 8, false);
}

/*
 * A KSM-mode key of @pdn at @iova: @n blocks of 1 << @shift bytes, block
 * i naming @keys[i] (0: non-present) at @addrs[i], with context @flags.
 */
static u32 wt_ksm_key(struct kunit *test, struct walker_ctx *ctx, u32 pdn,
		      u64 iova, unsigned int shift, const u32 *keys,
		      const u64 *addrs, unsigned int n, u32 access, u8 flags)
{
	struct mrc_klm ksm[4];
	struct mrc_mkey_ctx c = {
		.key = wt_new_key(test, ctx),
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_KSM,
		.page_shift = shift,
		.pdn = pdn,
		.access = access,
		.iova = iova,
		.length = (u64)n << shift,
		.xlt_entries = n,
		.flags = flags,
	};
	unsigned int i;

	KUNIT_ASSERT_LE(test, n, (unsigned int)ARRAY_SIZE(ksm));
	for (i = 0; i < n; i++)
		ksm[i] = wt_klm(0, keys[i], keys[i] ? addrs[i] : 0);
	c.xlt_offset = wt_xlt(test, ctx, sizeof(ksm[0]) * n);
	KUNIT_ASSERT_EQ(test, vhca_hw_ops.write_xlt(&ctx->vdev->mdev,
						    c.xlt_offset, ksm,
						    sizeof(ksm[0]) * n),
			0);
	wt_write_mkey(test, ctx, &c);
	return c.key;
}

/**
 * vhca_walk_ksm_blocks() - a case of vhca_walker
 * @test: the case
 *
 * KSM mode: byte iova - ctx.iova sits in block (iova - ctx.iova) >>
 * page_shift, at that offset from the address the block's entry gives,
 * in the entry's key; an access crossing blocks crosses keys. A block
 * naming key 0 fails -ENOKEY without the ODP flag; a context whose iova
 * is not block aligned, or whose blocks are smaller than a page, is
 * malformed.
 */
void vhca_walk_ksm_blocks(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 iova = 0x200000, c0 = 0x10000, c1 = 0x20000;
	const u64 rw = MRC_MTT_READ | MRC_MTT_WRITE;
	u32 rights = MRC_ACCESS_LOCAL_WRITE;
	u8 in[16], out[16] = {};
	u32 keys[3];
	u64 addrs[3] = { c0, c1, 0 };
	u32 ksm, skew, tiny;

	keys[0] = wt_mtt_mr(test, ctx, WT_PDN, c0, 0, 1, rw, 0);
	keys[1] = wt_mtt_mr(test, ctx, WT_PDN, c1, 1, 1, rw, 0);
	keys[2] = 0;
	ksm = wt_ksm_key(test, ctx, WT_PDN, iova, PAGE_SHIFT, keys, addrs, 3,
			 rights, 0);

	/* The last 8 bytes of page 0 and the first 8 of page 1. */
	wt_fill(in, sizeof(in), 41);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ksm,
					  iova + PAGE_SIZE - 8, in, 16,
					  VHCA_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 0) + PAGE_SIZE - 8, in, 8), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wt_va(ctx, 1), in + 8, 8), 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ksm,
					  iova + PAGE_SIZE - 8, out, 16,
					  VHCA_ACCESS_LOCAL_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, in, sizeof(in)), 0);

	/* Block 2 names key 0, in a context without the ODP flag. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ksm,
					  iova + 2 * PAGE_SIZE, out, 8,
					  VHCA_ACCESS_LOCAL_READ), -ENOKEY);
	/* Past the last block: outside the key. */
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, ksm,
					  iova + 3 * PAGE_SIZE, out, 8,
					  VHCA_ACCESS_LOCAL_READ), -ERANGE);

	skew = wt_ksm_key(test, ctx, WT_PDN, iova + 0x800, PAGE_SHIFT, keys,
			  addrs, 2, rights, 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, skew,
					  iova + 0x800, out, 8,
					  VHCA_ACCESS_LOCAL_READ), -EINVAL);
	tiny = wt_ksm_key(test, ctx, WT_PDN, iova, PAGE_SHIFT - 1, keys,
			  addrs, 2, rights, 0);
	KUNIT_EXPECT_EQ(test, vhca_access(ctx->vdev, WT_PDN, 0, tiny, iova,
					  out, 8, VHCA_ACCESS_LOCAL_READ),
			-EINVAL);
}

/**
 * vhca_walk_ksm_odp_fault() - a case of vhca_walker
 * @test: the case
 *
 * An implicit ODP parent's walk: a block naming key 0 faults against the
 * parent, and so does a non-present page of the child a block names,
 * moved up to the parent's key and address (the part of the access from
 * the faulting page on). Through an indirect key naming the parent the
 * fault still names the parent, the outermost ODP context; a child under
 * a KSM key without the flag keeps its own fault.
 */
void vhca_walk_ksm_odp_fault(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	const u64 p = 0x400000, c = 0x40000, ind_iova = 0x9000;
	const u64 bits[2] = { MRC_MTT_READ | MRC_MTT_WRITE, 0 };
	const unsigned int shift = PAGE_SHIFT + 1;
	u32 rights = MRC_ACCESS_LOCAL_WRITE;
	struct vhca_fault f = {};
	u32 keys[2], parent, plain, ind;
	u64 addrs[2] = { c, 0 };
	struct mrc_klm klm;
	u8 buf[16] = {};

	keys[0] = wt_odp_mr(test, ctx, WT_PDN, c, bits, 2, 0);
	keys[1] = 0;
	parent = wt_ksm_key(test, ctx, WT_PDN, p, shift, keys, addrs, 2,
			    rights, MRC_MKEY_F_ODP);

	/* The child's present page: no fault. */
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, parent,
						p + 16, buf, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), 0);
	KUNIT_EXPECT_FALSE(test, f.pending);

	/* The child's page 1: the parent's fault, at the parent's address. */
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, parent,
						p + PAGE_SIZE + 16, buf, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, parent, p + PAGE_SIZE + 16, 8, false);

	/* Across the child's pages: from the faulting page on. */
	f.pending = false;
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, parent,
						p + PAGE_SIZE - 8, buf, 16,
						VHCA_ACCESS_LOCAL_WRITE, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, parent, p + PAGE_SIZE, 8, true);

	/* Block 1 names key 0: non-present, the parent's fault. */
	f.pending = false;
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, parent,
						p + BIT(shift) + 4, buf, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, parent, p + BIT(shift) + 4, 8, false);

	/* Through an indirect key: still the parent's. */
	f.pending = false;
	klm = wt_klm(2 * BIT(shift), parent, p);
	ind = wt_klm_key(test, ctx, WT_PDN, ind_iova, &klm, 1, rights);
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, ind,
						ind_iova + PAGE_SIZE, buf, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, parent, p + PAGE_SIZE, 8, false);

	/* Under a KSM key without the flag, the child keeps its fault. */
	f.pending = false;
	plain = wt_ksm_key(test, ctx, WT_PDN, p, shift, keys, addrs, 1,
			   rights, 0);
	KUNIT_EXPECT_EQ(test, vhca_access_fault(ctx->vdev, WT_PDN, 0, plain,
						p + PAGE_SIZE + 16, buf, 8,
						VHCA_ACCESS_LOCAL_READ, NULL,
						&f), -EAGAIN);
	assert_fault(test, ctx, &f, keys[0], c + PAGE_SIZE + 16, 8, false);
}

/**
 * vhca_walk_odp_flag_checked() - a case of vhca_walker
 * @test: the case
 *
 * A context flag the device does not know, or MRC_MKEY_F_ODP outside MTT
 * and KSM modes, is a malformed context: write_mkey refuses it.
 */
void vhca_walk_odp_flag_checked(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	struct mrc_mkey_ctx c = {
		.key = wt_new_key(test, ctx),
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_PA,
		.pdn = WT_PDN,
		.length = PAGE_SIZE,
		.flags = MRC_MKEY_F_ODP,
	};
	struct mrc_device *mdev = &ctx->vdev->mdev;

	KUNIT_EXPECT_EQ(test, vhca_hw_ops.write_mkey(mdev,
						     mrc_key_index(c.key), &c),
			-EINVAL);
	c.flags = BIT(fls(MRC_MKEY_F_ALL));
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.write_mkey(mdev,
						     mrc_key_index(c.key), &c),
			-EINVAL);
	c.flags = 0;
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.write_mkey(mdev,
						     mrc_key_index(c.key), &c),
			0);

	/* KLM entries are never non-present; KSM entries may be. */
	c.key = wt_new_key(test, ctx);
	c.access_mode = MRC_ACCESS_MODE_KLM;
	c.xlt_offset = wt_xlt(test, ctx, MRC_KLM_ENTRY_SIZE);
	c.xlt_entries = 1;
	c.flags = MRC_MKEY_F_ODP;
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.write_mkey(mdev,
						     mrc_key_index(c.key), &c),
			-EINVAL);
	c.access_mode = MRC_ACCESS_MODE_KSM;
	c.page_shift = PAGE_SHIFT;
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.write_mkey(mdev,
						     mrc_key_index(c.key), &c),
			0);
}

/**
 * vhca_odp_mkeys_counted() - a case of vhca_walker
 * @test: the case
 *
 * vdev->odp_mkeys, which keeps a kernel post_send from running SENDs
 * (engine.c), counts the ODP contexts a walk may meet: VALID or FREE,
 * written with MRC_MKEY_F_ODP, not yet invalidated or rewritten without
 * it. A context written twice counts once; a refused write, an INVALID
 * one and a second invalidation change nothing.
 */
void vhca_odp_mkeys_counted(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	struct mrc_device *mdev = &ctx->vdev->mdev;
	atomic_t *n = &ctx->vdev->odp_mkeys;
	u64 bits[1] = { MRC_MTT_READ };
	struct mrc_mkey_ctx c;
	u32 key, other;

	KUNIT_ASSERT_EQ(test, atomic_read(n), 0);
	key = wt_mtt_key(test, ctx, WT_PDN, 0, 0, bits, 1,
			 0, MRC_MKEY_F_ODP);
	KUNIT_EXPECT_EQ(test, atomic_read(n), 1);
	other = wt_mtt_key(test, ctx, WT_PDN, 0, 1, bits, 1,
			   0, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(n), 1);

	KUNIT_ASSERT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(key), &c),
			0);
	wt_write_mkey(test, ctx, &c);			/* ODP again */
	KUNIT_EXPECT_EQ(test, atomic_read(n), 1);
	c.state = MRC_MKEY_FREE;
	wt_write_mkey(test, ctx, &c);			/* still walkable */
	KUNIT_EXPECT_EQ(test, atomic_read(n), 1);
	c.state = MRC_MKEY_VALID;
	c.access_mode = MRC_ACCESS_MODE_PA;		/* refused */
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.write_mkey(mdev, mrc_key_index(key),
						     &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(n), 1);
	c.access_mode = MRC_ACCESS_MODE_MTT;
	c.flags = 0;
	wt_write_mkey(test, ctx, &c);			/* ODP no more */
	KUNIT_EXPECT_EQ(test, atomic_read(n), 0);

	c.flags = MRC_MKEY_F_ODP;
	c.state = MRC_MKEY_INVALID;
	wt_write_mkey(test, ctx, &c);			/* not walkable */
	KUNIT_EXPECT_EQ(test, atomic_read(n), 0);
	c.state = MRC_MKEY_VALID;
	wt_write_mkey(test, ctx, &c);
	KUNIT_EXPECT_EQ(test, atomic_read(n), 1);
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.invalidate_mkey(mdev,
							  mrc_key_index(key)),
			0);
	KUNIT_EXPECT_EQ(test, atomic_read(n), 0);
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.invalidate_mkey(mdev,
							  mrc_key_index(key)),
			0);
	KUNIT_EXPECT_EQ(test, vhca_hw_ops.invalidate_mkey(mdev,
							  mrc_key_index(other)),
			0);
	KUNIT_EXPECT_EQ(test, atomic_read(n), 0);
}

/*
 * Write @c into its slot in a run that may not sleep; *@nosleep says the
 * run was seen as one (else nothing is written: the write could sleep).
 */
static int wt_write_mkey_nosleep(struct walker_ctx *ctx,
				 const struct mrc_mkey_ctx *c, bool *nosleep)
{
	int err = -EINVAL;

	vhca_engine_nosleep_begin();
	*nosleep = vhca_engine_nosleep();
	if (*nosleep)
		err = vhca_hw_ops.write_mkey(&ctx->vdev->mdev,
					     mrc_key_index(c->key), c);
	vhca_engine_nosleep_end();
	return err;
}

/**
 * vhca_nosleep_write_mkey_walker_inside() - a case of vhca_walker
 * @test: the case
 *
 * In a run that may not sleep (a kernel post_send's), write_mkey does not
 * wait for the walkers of the VALID context it would revoke (struct
 * mrc_hw_ops): with one inside it returns -EAGAIN and leaves the slot as
 * it was (VALID, walkable, still counted as an ODP context), as often as
 * it is called; once the walker has left, the write goes through. With
 * no walker inside, the run's write is the plain one.
 */
void vhca_nosleep_write_mkey_walker_inside(struct kunit *test)
{
	struct walker_ctx *ctx = test->priv;
	u64 bits[1] = { MRC_MTT_READ };
	struct mrc_mkey_ctx held, c, now;
	bool nosleep;
	u32 key, other;

	key = wt_mtt_key(test, ctx, WT_PDN, 0, 0, bits, 1, 0, MRC_MKEY_F_ODP);
	KUNIT_ASSERT_EQ(test, atomic_read(&ctx->vdev->odp_mkeys), 1);
	KUNIT_ASSERT_EQ(test, vhca_mkey_get(ctx->vdev, key, &held), 0);

	c = held;
	c.state = MRC_MKEY_FREE;
	c.flags = 0;
	KUNIT_EXPECT_EQ(test, wt_write_mkey_nosleep(ctx, &c, &nosleep),
			-EAGAIN);
	KUNIT_EXPECT_TRUE(test, nosleep);
	KUNIT_EXPECT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(key),
					     &now), 0);
	KUNIT_EXPECT_EQ(test, now.state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, now.key, key);
	KUNIT_EXPECT_EQ(test, now.flags, (u8)MRC_MKEY_F_ODP);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->vdev->odp_mkeys), 1);
	/* Still walkable: a second walker gets in and leaves. */
	KUNIT_EXPECT_EQ(test, vhca_mkey_get(ctx->vdev, key, &now), 0);
	vhca_mkey_put(ctx->vdev, key);
	KUNIT_EXPECT_EQ(test, wt_write_mkey_nosleep(ctx, &c, &nosleep),
			-EAGAIN);

	vhca_mkey_put(ctx->vdev, key);
	KUNIT_EXPECT_EQ(test, wt_write_mkey_nosleep(ctx, &c, &nosleep), 0);
	KUNIT_EXPECT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(key),
					     &now), 0);
	KUNIT_EXPECT_EQ(test, now.state, (u8)MRC_MKEY_FREE);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->vdev->odp_mkeys), 0);

	/* No walker inside: revoked and rewritten at once. */
	other = wt_mtt_key(test, ctx, WT_PDN, 0, 1, bits, 1, 0, 0);
	KUNIT_ASSERT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(other),
					     &c), 0);
	c.state = MRC_MKEY_FREE;
	KUNIT_EXPECT_EQ(test, wt_write_mkey_nosleep(ctx, &c, &nosleep), 0);
	KUNIT_EXPECT_EQ(test, vhca_read_mkey(ctx->vdev, mrc_key_index(other),
					     &now), 0);
	KUNIT_EXPECT_EQ(test, now.state, (u8)MRC_MKEY_FREE);
}
