// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore memory windows against the fake backend:
 * allocation (types, the FREE context, unwinding at every stage), type 1
 * binds (the KLM context over the MR key, the new variant each time,
 * zero-length unbind, rebind), the device-side type 2 bind and
 * invalidation (the FREE/VALID machine, the consumer's variant, the QP),
 * type 1 windows bound through a WR as librxe binds them (the variant
 * wrapping within its 8 bits, the index naming the window),
 * every IBA rule with its errno, MRs with bound windows refusing dereg and
 * invalidation, the windows of a destroyed QP (mrc_mw_unbind_qp()), the
 * device-only REMOTE_ONLY right, and deallocation. Every case ends with no key, translation
 * segment, window or MR left.
 */
#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

#define LW		MRC_ACCESS_LOCAL_WRITE
#define RR		MRC_ACCESS_REMOTE_READ
#define RW		MRC_ACCESS_REMOTE_WRITE
#define RA		MRC_ACCESS_REMOTE_ATOMIC
#define BIND		MRC_ACCESS_MW_BIND
#define ZB		MRC_ACCESS_ZERO_BASED
#define FULL		(LW | RR | RW | RA | BIND)

/* Every MR of the suite: 64 KiB of DMA space at MW_IOVA. */
#define MW_IOVA		0x40000ULL
#define MW_LEN		0x10000ULL
#define MW_QPN		0x123

enum mw_mr_sel {
	MR_FULL,	/* every right, MW_BIND */
	MR_FULL2,	/* the same over other memory */
	MR_NOBIND,	/* LW | RR */
	MR_RO,		/* RR | MW_BIND: no local write */
	MR_PD2,		/* every right, the other PD */
	MR_NUM,
	MR_NONE = MR_NUM,
};

static const u32 mw_mr_access[MR_NUM] = {
	[MR_FULL] = FULL,
	[MR_FULL2] = FULL,
	[MR_NOBIND] = LW | RR,
	[MR_RO] = RR | BIND,
	[MR_PD2] = FULL,
};

struct mw_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct mrc_pd pd;
	struct mrc_pd pd2;
	struct mrc_mr *mrs[MR_NUM];
	struct mrc_mr *extra;	/* one more MR a case registers */
	struct mrc_mw *mw[4];
	int mkeys0;
};

static struct mrc_mw *mw_alloc(struct kunit *test, unsigned int slot,
			       enum mrc_mw_type type)
{
	struct mw_test_ctx *ctx = test->priv;

	ctx->mw[slot] = mrc_alloc_mw(&ctx->pd, type);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mw[slot]);
	return ctx->mw[slot];
}

static void mw_dealloc(struct kunit *test, unsigned int slot)
{
	struct mw_test_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, mrc_dealloc_mw(ctx->mw[slot]), 0);
	ctx->mw[slot] = NULL;
}

/* @key with its variant moved on by @n. */
static u32 mw_key(u32 key, u8 n)
{
	return mrc_make_key(mrc_key_index(key), mrc_key_variant(key) + n);
}

/* LOCAL_INV of @key on the suite's QP of the window's PD. */
static int mw_inv(struct kunit *test, u32 key)
{
	struct mw_test_ctx *ctx = test->priv;

	return mrc_exec_inv(ctx->mdev, ctx->pd.pdn, MW_QPN, key);
}

static const struct mrc_mkey_ctx *mw_ctx(struct kunit *test, u32 key)
{
	struct mw_test_ctx *ctx = test->priv;

	return fake_hw_ctx(ctx->hw, key);
}

/*
 * The window's slot is FREE under @key, in KLM mode, with no entries and
 * no rights but the device-only REMOTE_ONLY every window carries.
 */
static void assert_mw_free(struct kunit *test, u32 key)
{
	struct mw_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = mw_ctx(test, key);

	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_FREE);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_KLM);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, c->access, (u32)MRC_ACCESS_REMOTE_ONLY);
	KUNIT_EXPECT_EQ(test, c->xlt_entries, 0U);
	KUNIT_EXPECT_EQ(test, c->qpn, 0U);
}

/*
 * The window's slot is VALID under @key, one KLM entry over @mr, with
 * @access and REMOTE_ONLY (a window is an rkey only).
 */
static void assert_mw_bound(struct kunit *test, u32 key, struct mrc_mr *mr,
			    u64 iova, u64 addr, u64 len, u32 access, u32 qpn)
{
	struct mw_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c = mw_ctx(test, key);

	KUNIT_EXPECT_EQ(test, c->key, key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_KLM);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, c->access, access | MRC_ACCESS_REMOTE_ONLY);
	KUNIT_EXPECT_EQ(test, c->iova, iova);
	KUNIT_EXPECT_EQ(test, c->length, len);
	KUNIT_EXPECT_EQ(test, c->qpn, qpn);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, 1U);
	KUNIT_EXPECT_TRUE(test, fake_hw_expect_klm(ctx->hw, c, 0, len,
						   mr->key, addr));
}

/* Nothing allocated is left but the suite's MRs and @mws windows. */
static bool assert_baseline(struct kunit *test, int mws)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	unsigned int i;
	bool ok = true;

	for (i = 0; i < MR_NUM; i++)
		ok &= atomic_read(&ctx->mrs[i]->num_mw) == 0;
	ok &= atomic_read(&mdev->num_mws) == mws &&
	      atomic_read(&mdev->num_mkeys) == ctx->mkeys0 + MR_NUM + mws &&
	      atomic_read(&mdev->num_mrs) == MR_NUM;
	if (!ok)
		KUNIT_FAIL(test, "leak: mws %d mkeys %d/%d mrs %d num_mw %d",
			   atomic_read(&mdev->num_mws),
			   atomic_read(&mdev->num_mkeys),
			   ctx->mkeys0 + MR_NUM + mws,
			   atomic_read(&mdev->num_mrs),
			   atomic_read(&ctx->mrs[MR_FULL]->num_mw));
	return ok;
}

static void mrc_alloc_mw_free_context(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	enum mrc_mkey_kind kind;
	unsigned int mark = ctx->hw->log_len;
	struct mrc_mw *mw1, *mw2;
	u32 k1, k2;

	mw1 = mw_alloc(test, 0, MRC_MW_TYPE_1);
	mw2 = mw_alloc(test, 1, MRC_MW_TYPE_2);
	k1 = mrc_mw_rkey(mw1);
	k2 = mrc_mw_rkey(mw2);

	/* One context write each, FREE: no access through either yet. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark + 2);
	assert_mw_free(test, k1);
	assert_mw_free(test, k2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mws), 2);

	/* The key finds the window as a window, never as an MR. */
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_find(ctx->mdev, k1, &kind),
			    (void *)mw1);
	KUNIT_EXPECT_EQ(test, kind, MRC_MKEY_KIND_MW);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, k1));

	/* Dealloc invalidates the slot and frees the key. */
	mw_dealloc(test, 0);
	mw_dealloc(test, 1);
	KUNIT_EXPECT_EQ(test, mw_ctx(test, k1)->state, (u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_NULL(test, mrc_mkey_find(ctx->mdev, k2, &kind));
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 0));
}

static void mrc_alloc_mw_bad_args(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	unsigned int mark = ctx->hw->log_len;
	struct mrc_pd nopd = {};

	/* IBA has types 1 and 2 only: 3 (and 0) are refused. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_mw(&ctx->pd, 3)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_mw(&ctx->pd, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_mw(NULL, MRC_MW_TYPE_1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_mw(&nopd, MRC_MW_TYPE_1)),
			-EINVAL);
	/* A window is a KLM key: a device without KLM has none. */
	ctx->mdev->caps.flags &= ~MRC_CAP_KLM;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_mw(&ctx->pd, MRC_MW_TYPE_2)),
			-EOPNOTSUPP);
	ctx->mdev->caps.flags |= MRC_CAP_KLM;

	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 0));
}

struct mw_fail_case {
	const char *desc;
	int stage;		/* enum mrc_stage; -1: fake write_mkey */
	int ret;
};

static const struct mw_fail_case mw_fail_cases[] = {
	{ "injected at key_alloc", MRC_STAGE_KEY_ALLOC, -ENOSPC },
	{ "injected at xlt_alloc", MRC_STAGE_XLT_ALLOC, -ENOSPC },
	{ "injected at write_mkey", MRC_STAGE_WRITE_MKEY, -EIO },
	{ "backend write_mkey fails", -1, -EIO },
};

static void mw_fail_desc(const struct mw_fail_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mw_fail, mw_fail_cases, mw_fail_desc);

static void mrc_alloc_mw_fail_unwinds(struct kunit *test)
{
	const struct mw_fail_case *p = test->param_value;
	struct mw_test_ctx *ctx = test->priv;
	int segs = atomic_read(&ctx->mdev->xlt_segs_used);

	/* Before: one failure armed, on the next pass through the stage. */
	if (p->stage < 0)
		fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	else
		atomic_set(&ctx->mdev->inject,
			   1 << MRC_INJECT_LEFT_SHIFT | (p->stage + 1));

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_mw(&ctx->pd, MRC_MW_TYPE_2)),
			p->ret);

	/* After: nothing held; the next allocation works. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->inject), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), segs);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 0));
	assert_mw_free(test, mrc_mw_rkey(mw_alloc(test, 0, MRC_MW_TYPE_2)));
}

static void mrc_bind_mw_type1_context(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_1);
	u32 old = mrc_mw_rkey(mw), key;
	unsigned int mark = ctx->hw->log_len;

	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw, mr, MW_IOVA + 0x100, 0x2000,
					  RR | RW), 0);

	/* Entries, one fence, the context last; a new variant. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	key = mrc_mw_rkey(mw);
	KUNIT_EXPECT_EQ(test, key, mw_key(old, 1));
	assert_mw_bound(test, key, mr, MW_IOVA + 0x100, MW_IOVA + 0x100,
			0x2000, RR | RW, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);

	/* The old rkey is gone for lookups too. */
	KUNIT_EXPECT_EQ(test, mw_inv(test, old),
			-ENOKEY);
	/* A type 1 window is not invalidated by a WR. */
	KUNIT_EXPECT_EQ(test, mw_inv(test, key),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mw_ctx(test, key)->state, (u8)MRC_MKEY_VALID);
}

static void mrc_bind_mw_zero_length_unbinds(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_1);
	u32 bound;

	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw, mr, MW_IOVA, MW_LEN, RR), 0);
	bound = mrc_mw_rkey(mw);

	/* IBA: a zero-length bind invalidates the window, with a new key. */
	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, NULL, 0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), mw_key(bound, 1));
	assert_mw_free(test, mrc_mw_rkey(mw));
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 0);
	KUNIT_EXPECT_EQ(test, mw_inv(test, bound),
			-ENOKEY);

	/* The MR is free to go again. */
	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, mr, MW_IOVA, 0x10, RR), 0);
	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, mr, 0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), mw_key(bound, 3));
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 1));
}

static void mrc_bind_mw_rebind_moves(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_FULL], *b = ctx->mrs[MR_FULL2];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_1);
	u64 off_a;
	u32 key;

	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw, a, MW_IOVA, 0x1000, RR), 0);
	off_a = mw_ctx(test, mrc_mw_rkey(mw))->xlt_offset;

	/* A rebind writes the idle entries and switches in one write. */
	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw, b, MW_IOVA + 0x1000, 0x800,
					  RR | RA), 0);
	key = mrc_mw_rkey(mw);
	assert_mw_bound(test, key, b, MW_IOVA + 0x1000, MW_IOVA + 0x1000,
			0x800, RR | RA, 0);
	KUNIT_EXPECT_NE(test, mw_ctx(test, key)->xlt_offset, off_a);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_mw), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->num_mw), 1);

	/* Rebinding to the same MR keeps the count at one. */
	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw, b, MW_IOVA, MW_LEN, RR), 0);
	KUNIT_EXPECT_EQ(test, mw_ctx(test, mrc_mw_rkey(mw))->xlt_offset,
			off_a);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->num_mw), 1);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), mw_key(key, 1));
}

static void mrc_bind_mw_long_window_splits(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_1);
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *dma;
	u64 base = SZ_1G;

	ctx->extra = mrc_reg_dma_mr(&ctx->pd, LW | RR | BIND);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->extra);
	dma = ctx->extra;

	/* 5 GiB: entries of at most MRC_KLM_MAX_BCOUNT, end to end. */
	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw, dma, base, 5ULL * SZ_1G, RR), 0);
	c = mw_ctx(test, mrc_mw_rkey(mw));
	KUNIT_EXPECT_EQ(test, c->length, 5ULL * SZ_1G);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, 3U);
	fake_hw_expect_klm(ctx->hw, c, 0, SZ_2G, dma->key, base);
	fake_hw_expect_klm(ctx->hw, c, 1, SZ_2G, dma->key, base + SZ_2G);
	fake_hw_expect_klm(ctx->hw, c, 2, SZ_1G, dma->key,
			   base + 2ULL * SZ_2G);

	/* The reserved entries cap a window. */
	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, dma, 0, MRC_MW_MAX_LENGTH, RR),
			0);
	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, dma, 0, MRC_MW_MAX_LENGTH + 1,
					  RR), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, NULL, 0, 0, 0), 0);
}

struct mw_bind_case {
	const char *desc;
	enum mrc_mw_type type;
	enum mw_mr_sel mr;
	u64 addr;
	u64 length;
	u32 access;
	int ret;
};

static const struct mw_bind_case mw_bind_cases[] = {
	{ "type 2 window", MRC_MW_TYPE_2, MR_FULL, MW_IOVA, 0x100, RR,
	  -EINVAL },
	{ "MR without MW_BIND", MRC_MW_TYPE_1, MR_NOBIND, MW_IOVA, 0x100, RR,
	  -EPERM },
	{ "MR of another PD", MRC_MW_TYPE_1, MR_PD2, MW_IOVA, 0x100, RR,
	  -EPERM },
	{ "remote write, MR without local write", MRC_MW_TYPE_1, MR_RO,
	  MW_IOVA, 0x100, RR | RW, -EPERM },
	{ "remote atomic, MR without local write", MRC_MW_TYPE_1, MR_RO,
	  MW_IOVA, 0x100, RA, -EPERM },
	{ "zero based type 1", MRC_MW_TYPE_1, MR_FULL, MW_IOVA, 0x100,
	  RR | ZB, -EINVAL },
	{ "local write on a window", MRC_MW_TYPE_1, MR_FULL, MW_IOVA, 0x100,
	  LW | RR, -EINVAL },
	{ "MW_BIND on a window", MRC_MW_TYPE_1, MR_FULL, MW_IOVA, 0x100,
	  BIND, -EINVAL },
	{ "starts below the MR", MRC_MW_TYPE_1, MR_FULL, MW_IOVA - 1, 0x100,
	  RR, -ERANGE },
	{ "ends past the MR", MRC_MW_TYPE_1, MR_FULL, MW_IOVA + MW_LEN - 0x10,
	  0x11, RR, -ERANGE },
	{ "longer than the MR", MRC_MW_TYPE_1, MR_FULL, MW_IOVA, MW_LEN + 1,
	  RR, -ERANGE },
	{ "wraps", MRC_MW_TYPE_1, MR_FULL, U64_MAX - 0x10, 0x100, RR,
	  -ERANGE },
	{ "longer than a window can be", MRC_MW_TYPE_1, MR_FULL, MW_IOVA,
	  MRC_MW_MAX_LENGTH + 1, RR, -EINVAL },
	{ "no MR with a length", MRC_MW_TYPE_1, MR_NONE, MW_IOVA, 0x100, RR,
	  -EINVAL },
	{ "device-only REMOTE_ONLY", MRC_MW_TYPE_1, MR_FULL, MW_IOVA, 0x100,
	  RR | MRC_ACCESS_REMOTE_ONLY, -EINVAL },
};

static void mw_bind_desc(const struct mw_bind_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mw_bind, mw_bind_cases, mw_bind_desc);

static void mrc_bind_mw_rules(struct kunit *test)
{
	const struct mw_bind_case *p = test->param_value;
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = p->mr == MR_NONE ? NULL : ctx->mrs[p->mr];
	struct mrc_mw *mw = mw_alloc(test, 0, p->type);
	u32 key = mrc_mw_rkey(mw);
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, mr, p->addr, p->length,
					  p->access), p->ret);

	/* Refused before the device was touched: unbound, same key. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), key);
	assert_mw_free(test, key);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 1));
}

/* What a Bind MW WR names, for the table below. */
enum mw_wr_key {
	WK_WINDOW,	/* the window, variant + 1 */
	WK_SAME,	/* the window, its current variant */
	WK_MR_INDEX,	/* an MR's index */
	WK_DEAD,	/* an index nobody has */
	WK_MR,		/* (MR side) MR_FULL's key */
	WK_STALE,	/* (MR side) MR_FULL's key, wrong variant */
	WK_LOCAL,	/* (MR side) the local DMA key */
	WK_PD2,		/* (MR side) MR_PD2's key */
	WK_NOBIND,	/* (MR side) MR_NOBIND's key */
	WK_RO,		/* (MR side) MR_RO's key */
};

struct mw_wr_case {
	const char *desc;
	enum mrc_mw_type type;
	bool bound;		/* bind once first */
	bool other_pd;		/* the QP is of pd2 */
	enum mw_wr_key mwk;
	enum mw_wr_key mrk;
	u64 addr;
	u64 length;
	u32 access;
	int ret;
};

static const struct mw_wr_case mw_wr_cases[] = {
	{ "type 2, same consumer key", MRC_MW_TYPE_2, false, false, WK_SAME,
	  WK_MR, MW_IOVA, 0x100, RR, 0 },
	{ "type 2, new consumer key", MRC_MW_TYPE_2, false, false, WK_WINDOW,
	  WK_MR, MW_IOVA, 0x100, RR | RW | RA, 0 },
	{ "type 1 through a WR", MRC_MW_TYPE_1, true, false, WK_WINDOW,
	  WK_MR, MW_IOVA, 0x100, RR, 0 },
	{ "type 1 zero length through a WR", MRC_MW_TYPE_1, true, false,
	  WK_WINDOW, WK_MR, MW_IOVA, 0, 0, 0 },
	{ "type 1 first bind through a WR", MRC_MW_TYPE_1, false, false,
	  WK_WINDOW, WK_MR, MW_IOVA, 0x100, RR | RW | RA, 0 },
	{ "type 1 unbound, zero length through a WR", MRC_MW_TYPE_1, false,
	  false, WK_WINDOW, WK_MR, MW_IOVA, 0, 0, 0 },
	{ "type 1 zero-based through a WR", MRC_MW_TYPE_1, false, false,
	  WK_WINDOW, WK_MR, MW_IOVA, 0x100, RR | ZB, -EINVAL },
	{ "type 1 QP of another PD", MRC_MW_TYPE_1, true, true, WK_WINDOW,
	  WK_MR, MW_IOVA, 0x100, RR, -EPERM },
	{ "type 2 already bound", MRC_MW_TYPE_2, true, false, WK_WINDOW,
	  WK_MR, MW_IOVA, 0x100, RR, -EINVAL },
	{ "type 2 zero length", MRC_MW_TYPE_2, false, false, WK_WINDOW,
	  WK_MR, MW_IOVA, 0, RR, -EINVAL },
	{ "QP of another PD", MRC_MW_TYPE_2, false, true, WK_WINDOW, WK_MR,
	  MW_IOVA, 0x100, RR, -EPERM },
	{ "index of an MR", MRC_MW_TYPE_2, false, false, WK_MR_INDEX, WK_MR,
	  MW_IOVA, 0x100, RR, -EINVAL },
	{ "index nobody has", MRC_MW_TYPE_2, false, false, WK_DEAD, WK_MR,
	  MW_IOVA, 0x100, RR, -ENOKEY },
	{ "stale MR key", MRC_MW_TYPE_2, false, false, WK_WINDOW, WK_STALE,
	  MW_IOVA, 0x100, RR, -ENOKEY },
	{ "MR key is a window's", MRC_MW_TYPE_2, false, false, WK_WINDOW,
	  WK_SAME, MW_IOVA, 0x100, RR, -EINVAL },
	{ "local DMA key", MRC_MW_TYPE_2, false, false, WK_WINDOW, WK_LOCAL,
	  MW_IOVA, 0x100, RR, -EINVAL },
	{ "MR of another PD", MRC_MW_TYPE_2, false, false, WK_WINDOW, WK_PD2,
	  MW_IOVA, 0x100, RR, -EPERM },
	{ "MR without MW_BIND", MRC_MW_TYPE_2, false, false, WK_WINDOW,
	  WK_NOBIND, MW_IOVA, 0x100, RR, -EPERM },
	{ "remote write, MR without local write", MRC_MW_TYPE_2, false,
	  false, WK_WINDOW, WK_RO, MW_IOVA, 0x100, RW, -EPERM },
	{ "outside the MR", MRC_MW_TYPE_2, false, false, WK_WINDOW, WK_MR,
	  MW_IOVA + MW_LEN, 0x100, RR, -ERANGE },
	{ "unknown right", MRC_MW_TYPE_2, false, false, WK_WINDOW, WK_MR,
	  MW_IOVA, 0x100, RR | BIT(12), -EINVAL },
	{ "device-only REMOTE_ONLY", MRC_MW_TYPE_2, false, false, WK_WINDOW,
	  WK_MR, MW_IOVA, 0x100, RR | MRC_ACCESS_REMOTE_ONLY, -EINVAL },
};

static void mw_wr_desc(const struct mw_wr_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mw_wr, mw_wr_cases, mw_wr_desc);

static u32 mw_wr_key(struct kunit *test, enum mw_wr_key k, u32 window)
{
	struct mw_test_ctx *ctx = test->priv;

	switch (k) {
	case WK_WINDOW:
		return mw_key(window, 1);
	case WK_SAME:
		return window;
	case WK_MR_INDEX:
		return mw_key(ctx->mrs[MR_FULL]->key, 1);
	case WK_DEAD:
		return mrc_make_key(ctx->mdev->caps.max_mkeys - 1, 0);
	case WK_MR:
		return ctx->mrs[MR_FULL]->key;
	case WK_STALE:
		return mw_key(ctx->mrs[MR_FULL]->key, 1);
	case WK_LOCAL:
		return ctx->mdev->local_dma_lkey;
	case WK_PD2:
		return ctx->mrs[MR_PD2]->key;
	case WK_NOBIND:
		return ctx->mrs[MR_NOBIND]->key;
	case WK_RO:
		return ctx->mrs[MR_RO]->key;
	}
	return 0;
}

static void mrc_mw_exec_bind_rules(struct kunit *test)
{
	const struct mw_wr_case *p = test->param_value;
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, p->type);
	u32 pdn = p->other_pd ? ctx->pd2.pdn : ctx->pd.pdn;
	u32 key, mwk, mrk;
	u8 state;
	int num;

	if (p->bound)
		KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn,
						       MW_QPN,
						       mw_key(mrc_mw_rkey(mw), 1),
						       mr->key, MW_IOVA, MW_LEN,
						       RR), 0);
	key = mrc_mw_rkey(mw);
	state = mw_ctx(test, key)->state;
	num = atomic_read(&mr->num_mw);
	mwk = mw_wr_key(test, p->mwk, key);
	mrk = mw_wr_key(test, p->mrk, key);

	KUNIT_EXPECT_EQ(test, mrc_mw_exec_bind(ctx->mdev, pdn, MW_QPN, mwk,
					       mrk, p->addr, p->length,
					       p->access), p->ret);

	if (p->ret) {
		/* Refused: the window is as it was. */
		KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), key);
		KUNIT_EXPECT_EQ(test, mw_ctx(test, key)->state, state);
		KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), num);
	} else if (p->length) {
		/* Bound with the WR's key; a type 2 window to the QP. */
		KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), mwk);
		assert_mw_bound(test, mwk, mr, p->addr, p->addr, p->length,
				p->access,
				p->type == MRC_MW_TYPE_2 ? MW_QPN : 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);
	} else {
		KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), mwk);
		assert_mw_free(test, mwk);
		KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 0);
	}
}

static void mrc_mw_exec_bind_zero_based(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_2);
	u32 key = mw_key(mrc_mw_rkey(mw), 7);

	/* A zero-based type 2 window's addresses start at 0. */
	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       key, mr->key, MW_IOVA + 0x800,
					       0x400, RR | ZB), 0);
	assert_mw_bound(test, key, mr, 0, MW_IOVA + 0x800, 0x400, RR, MW_QPN);
}

/*
 * librxe binds a type 1 window (ibv_bind_mw()) through a Bind MW WQE as
 * it binds a type 2 one, with the next rkey: the low 8 bits plus one,
 * wrapping within them. The key keeps the window's index across the wrap,
 * and the window takes each WR's variant.
 */
static void mrc_mw_exec_bind_variant_wraps(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_1);
	u32 index = mrc_key_index(mrc_mw_rkey(mw));
	u32 last = mrc_make_key(index, 0xff);
	u32 next = (last & ~0xffU) | ((last + 1) & 0xff);

	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       last, mr->key, MW_IOVA, 0x100,
					       RR), 0);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), last);
	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       next, mr->key, MW_IOVA + 0x100,
					       0x200, RR | RW), 0);
	KUNIT_EXPECT_EQ(test, mrc_key_index(next), index);
	KUNIT_EXPECT_EQ(test, mrc_key_variant(next), (u8)0);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), next);
	/* A type 1 window serves any QP of its PD: no QP in the context. */
	assert_mw_bound(test, next, mr, MW_IOVA + 0x100, MW_IOVA + 0x100,
			0x200, RR | RW, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);
	/* Unbound through a WR, the window is FREE under the WR's key. */
	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       mw_key(next, 1), mr->key,
					       MW_IOVA, 0, 0), 0);
	assert_mw_free(test, mw_key(next, 1));
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 0);
}

/*
 * The WR's key names the window by its index: a key with another
 * window's index binds that window and leaves this one as it was. (vhca
 * refuses a user WQE whose new rkey's index is not the current one's
 * before it gets here.)
 */
static void mrc_mw_exec_bind_index_names_window(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *a = mw_alloc(test, 0, MRC_MW_TYPE_1);
	struct mrc_mw *b = mw_alloc(test, 1, MRC_MW_TYPE_1);
	u32 ka = mrc_mw_rkey(a), kb = mrc_mw_rkey(b);

	KUNIT_ASSERT_NE(test, mrc_key_index(ka), mrc_key_index(kb));
	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       mw_key(kb, 1), mr->key, MW_IOVA,
					       0x100, RR), 0);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(b), mw_key(kb, 1));
	assert_mw_bound(test, mw_key(kb, 1), mr, MW_IOVA, MW_IOVA, 0x100, RR,
			0);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(a), ka);
	assert_mw_free(test, ka);
}

static void mrc_exec_inv_type2_cycle(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_2);
	u32 key = mrc_mw_rkey(mw);
	unsigned int i, mark;

	/* FREE -> VALID -> FREE, many times, each with a new key. */
	for (i = 0; i < 300; i++) {
		key = mw_key(key, 1);
		KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn,
						       MW_QPN, key, mr->key,
						       MW_IOVA, MW_LEN, RR),
				0);
		KUNIT_ASSERT_EQ(test, atomic_read(&mr->num_mw), 1);
		/* An MR with a window bound is not deregistered. */
		if (i == 0)
			KUNIT_EXPECT_EQ(test, mrc_dereg_mr(mr), -EBUSY);
		/* The stale key does not invalidate; the current one does. */
		KUNIT_ASSERT_EQ(test, mw_inv(test, mw_key(key, 1)), -ENOKEY);
		mark = ctx->hw->log_len;
		KUNIT_ASSERT_EQ(test, mw_inv(test, key), 0);
		KUNIT_ASSERT_EQ(test, ctx->hw->log_len, mark + 1);
		assert_mw_free(test, key);
		KUNIT_ASSERT_EQ(test, atomic_read(&mr->num_mw), 0);
	}

	/* Invalidating a FREE window succeeds and writes nothing. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mw_inv(test, key), 0);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->mdev->stats_mw_binds),
			300LL);
}

static void mrc_exec_inv_rules(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_2);
	u32 key = mw_key(mrc_mw_rkey(mw), 1);
	unsigned int mark;

	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(mdev, ctx->pd.pdn, MW_QPN, key,
					       mr->key, MW_IOVA, MW_LEN, RR),
			0);

	mark = ctx->hw->log_len;
	/* Only a QP of the window's PD invalidates it. */
	KUNIT_EXPECT_EQ(test, mrc_exec_inv(mdev, ctx->pd2.pdn, MW_QPN, key),
			-EPERM);
	/* Keys that are no fast-reg MR and no type 2 window. */
	KUNIT_EXPECT_EQ(test, mw_inv(test, mr->key),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mw_inv(test, mdev->local_dma_lkey), -EINVAL);
	/* Keys that are not live. */
	KUNIT_EXPECT_EQ(test, mw_inv(test, 0), -ENOKEY);
	KUNIT_EXPECT_EQ(test, mw_inv(test, mw_key(key, 1)), -ENOKEY);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, mw_ctx(test, key)->state, (u8)MRC_MKEY_VALID);

	/* A failed write leaves the window bound. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, mw_inv(test, key), -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);
	KUNIT_EXPECT_EQ(test, mw_inv(test, key), 0);
}

static void mrc_dereg_mr_busy_with_windows(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mw *mw1 = mw_alloc(test, 0, MRC_MW_TYPE_1);
	struct mrc_mw *mw2 = mw_alloc(test, 1, MRC_MW_TYPE_2);
	u64 page = 0x200000;
	struct mrc_mr *fr;
	u32 key;

	/* A fast-reg MR, VALID with MW_BIND, two windows over it. */
	ctx->mdev->caps.page_size_bitmap |= SZ_4K;
	ctx->extra = mrc_alloc_frmr(&ctx->pd, 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->extra);
	fr = ctx->extra;
	key = mw_key(fr->key, 1);
	KUNIT_ASSERT_EQ(test, mrc_frmr_exec_reg(fr, key, 0x1000, 0x1000, 12,
						&page, 1, LW | RR | BIND), 0);
	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw1, fr, 0x1000, 0x1000, RR), 0);
	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       mrc_mw_rkey(mw2), key, 0x1800,
					       0x100, RR), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fr->num_mw), 2);

	/* IBA 10.6.7.2.6: neither deregistered nor invalidated. */
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(fr), -EBUSY);
	KUNIT_EXPECT_EQ(test, mw_inv(test, key),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, mw_ctx(test, key)->state, (u8)MRC_MKEY_VALID);

	/* Still findable after the refused dealloc: a window unbinds. */
	KUNIT_EXPECT_EQ(test, mw_inv(test, mrc_mw_rkey(mw2)), 0);
	KUNIT_EXPECT_EQ(test, mw_inv(test, key),
			-EBUSY);
	/* Dealloc of the last bound window frees the MR. */
	mw_dealloc(test, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fr->num_mw), 0);
	KUNIT_EXPECT_EQ(test, mw_inv(test, key), 0);

	/* A window over a FREE fast-reg MR is refused. */
	KUNIT_EXPECT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       mrc_mw_rkey(mw2), key, 0x1000,
					       0x100, RR), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(fr), 0);
	ctx->extra = NULL;
}

static void mrc_dealloc_mw_bound(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_2);
	u32 key = mw_key(mrc_mw_rkey(mw), 1);
	unsigned int mark;

	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       key, mr->key, MW_IOVA, MW_LEN,
					       RR), 0);

	/* A failed invalidation leaves the window bound and usable. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_INVALIDATE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_mw(mw), -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);

	/* Dealloc: one invalidation, then the MR is free again. */
	mark = ctx->hw->log_len;
	mw_dealloc(test, 0);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark + 1);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(ctx->hw, mark),
			FAKE_HW_INVALIDATE_MKEY);
	KUNIT_EXPECT_EQ(test, mw_ctx(test, key)->state, (u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_EQ(test, mw_inv(test, key),
			-ENOKEY);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 0));
}

struct mw_wfail_case {
	const char *desc;
	int stage;		/* enum mrc_stage, or -1 - the fake op */
	int ret;
};

static const struct mw_wfail_case mw_wfail_cases[] = {
	{ "injected at write_xlt", MRC_STAGE_WRITE_XLT, -EIO },
	{ "injected at write_mkey", MRC_STAGE_WRITE_MKEY, -EIO },
	{ "backend write_xlt fails", -1 - FAKE_HW_WRITE_XLT, -EIO },
	{ "backend write_mkey fails", -1 - FAKE_HW_WRITE_MKEY, -EIO },
};

static void mw_wfail_desc(const struct mw_wfail_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mw_wfail, mw_wfail_cases, mw_wfail_desc);

static void mrc_bind_mw_fail_unchanged(struct kunit *test)
{
	const struct mw_wfail_case *p = test->param_value;
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_FULL], *b = ctx->mrs[MR_FULL2];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_1);
	u32 key;

	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw, a, MW_IOVA, 0x100, RR), 0);
	key = mrc_mw_rkey(mw);

	/* Before: one failure armed in the rebind. */
	if (p->stage < 0)
		fake_hw_fail_next(ctx->hw, -1 - p->stage, 1);
	else
		atomic_set(&ctx->mdev->inject,
			   1 << MRC_INJECT_LEFT_SHIFT | (p->stage + 1));
	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw, b, MW_IOVA, 0x200, RR), p->ret);

	/* After: still bound to a with the same key and entries. */
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw), key);
	assert_mw_bound(test, key, a, MW_IOVA, MW_IOVA, 0x100, RR, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_mw), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->num_mw), 0);
	KUNIT_EXPECT_EQ(test, mrc_dereg_mr(a), -EBUSY);
}

/* Bind type 2 window @mw over all of @mr on QP @qpn; the new rkey. */
static u32 mw_bind2(struct kunit *test, struct mrc_mw *mw, struct mrc_mr *mr,
		    u32 qpn)
{
	struct mw_test_ctx *ctx = test->priv;
	u32 key = mw_key(mrc_mw_rkey(mw), 1);

	KUNIT_ASSERT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, qpn,
					       key, mr->key, MW_IOVA, MW_LEN,
					       RR), 0);
	return key;
}

/* Is @key's entry marked as a window bound to a QP? */
static bool mw_marked(struct kunit *test, u32 key)
{
	struct mw_test_ctx *ctx = test->priv;

	return xa_get_mark(&ctx->mdev->mkeys, mrc_key_index(key),
			   MRC_MKEY_MARK_QP);
}

/*
 * A type 2B window belongs to its QP: a LOCAL_INV posted on, or a Send
 * with Invalidate arriving at, another QP of the window's PD fails
 * -EPERM and leaves it bound; its own QP invalidates it. A FREE window
 * has no QP: any QP of the PD may "invalidate" it, which writes nothing.
 */
static void mrc_exec_inv_other_qp(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_2);
	u32 key = mw_bind2(test, mw, mr, MW_QPN);
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_exec_inv(ctx->mdev, ctx->pd.pdn, MW_QPN + 1,
					   key), -EPERM);
	KUNIT_EXPECT_EQ(test, mrc_exec_inv(ctx->mdev, ctx->pd.pdn, 0, key),
			-EPERM);

	/* Before its own QP: nothing written, still bound, MR still held. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_mw_bound(test, key, mr, MW_IOVA, MW_IOVA, MW_LEN, RR, MW_QPN);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);

	KUNIT_EXPECT_EQ(test, mw_inv(test, key), 0);
	assert_mw_free(test, key);
	KUNIT_EXPECT_FALSE(test, mw_marked(test, key));

	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_exec_inv(ctx->mdev, ctx->pd.pdn, MW_QPN + 1,
					   key), 0);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 1));
}

/*
 * An engine that cannot sleep leaves a window's invalidation to a context
 * that can (mrc_exec_inv_nowait()): -EAGAIN, nothing written, the window
 * still bound; the same key invalidates as ever from there.
 */
static void mrc_exec_inv_nowait_window_later(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw = mw_alloc(test, 0, MRC_MW_TYPE_2);
	u32 key = mw_bind2(test, mw, mr, MW_QPN);
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_exec_inv_nowait(ctx->mdev, ctx->pd.pdn,
						  MW_QPN, key), -EAGAIN);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_mw_bound(test, key, mr, MW_IOVA, MW_IOVA, MW_LEN, RR, MW_QPN);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);

	KUNIT_EXPECT_EQ(test, mw_inv(test, key), 0);
	assert_mw_free(test, key);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 0);
}

/*
 * A type 2 window's context names its QP, and 0 is "no QP" to the
 * device: a Bind MW with QP 0 is refused before the device is touched.
 * A type 1 window bound through a WR carries no QP and needs none.
 */
static void mrc_mw_exec_bind_type2_needs_qp(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *mr = ctx->mrs[MR_FULL];
	struct mrc_mw *mw2 = mw_alloc(test, 0, MRC_MW_TYPE_2);
	struct mrc_mw *mw1 = mw_alloc(test, 1, MRC_MW_TYPE_1);
	u32 k2 = mrc_mw_rkey(mw2), k1 = mw_key(mrc_mw_rkey(mw1), 1);
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, 0,
					       mw_key(k2, 1), mr->key,
					       MW_IOVA, 0x100, RR), -EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw2), k2);
	assert_mw_free(test, k2);

	KUNIT_EXPECT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, 0, k1,
					       mr->key, MW_IOVA, 0x100, RR),
			0);
	assert_mw_bound(test, k1, mr, MW_IOVA, MW_IOVA, 0x100, RR, 0);
	KUNIT_EXPECT_FALSE(test, mw_marked(test, k1));
}

/*
 * QP MW_QPN is destroyed: its two type 2 windows go FREE under their
 * keys, as an invalidation on it leaves them, and leave their MRs. A
 * window of another QP and a type 1 window stay bound. The freed windows
 * may be bound again on another QP, and the MR they left deregistered.
 */
static void mrc_mw_unbind_qp_frees_windows(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_FULL], *b = ctx->mrs[MR_FULL2];
	struct mrc_mw *mw0 = mw_alloc(test, 0, MRC_MW_TYPE_2);
	struct mrc_mw *mw1 = mw_alloc(test, 1, MRC_MW_TYPE_2);
	struct mrc_mw *mw2 = mw_alloc(test, 2, MRC_MW_TYPE_2);
	struct mrc_mw *mw3 = mw_alloc(test, 3, MRC_MW_TYPE_1);
	u32 k0, k1, k2, k3;
	unsigned int mark;

	k0 = mw_bind2(test, mw0, a, MW_QPN);
	k1 = mw_bind2(test, mw1, b, MW_QPN);
	k2 = mw_bind2(test, mw2, a, MW_QPN + 1);
	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw3, a, MW_IOVA, 0x100, RR), 0);
	k3 = mrc_mw_rkey(mw3);
	KUNIT_EXPECT_TRUE(test, mw_marked(test, k0));
	KUNIT_EXPECT_TRUE(test, mw_marked(test, k1));
	KUNIT_EXPECT_TRUE(test, mw_marked(test, k2));
	KUNIT_EXPECT_FALSE(test, mw_marked(test, k3));
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_mw), 3);
	mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_mw_unbind_qp(ctx->mdev, MW_QPN), 0);

	/* After: one context write per window of the QP; FREE, same keys. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark + 2);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(ctx->hw, mark),
			FAKE_HW_WRITE_MKEY);
	KUNIT_EXPECT_EQ(test, fake_hw_log_at(ctx->hw, mark + 1),
			FAKE_HW_WRITE_MKEY);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw0), k0);
	KUNIT_EXPECT_EQ(test, mrc_mw_rkey(mw1), k1);
	assert_mw_free(test, k0);
	assert_mw_free(test, k1);
	KUNIT_EXPECT_FALSE(test, mw_marked(test, k0) || mw_marked(test, k1));
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_mw), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->num_mw), 0);
	assert_mw_bound(test, k2, a, MW_IOVA, MW_IOVA, MW_LEN, RR, MW_QPN + 1);
	KUNIT_EXPECT_TRUE(test, mw_marked(test, k2));
	assert_mw_bound(test, k3, a, MW_IOVA, MW_IOVA, 0x100, RR, 0);

	/* Nothing is bound to the number any more: no device op. */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_mw_unbind_qp(ctx->mdev, MW_QPN), 0);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);

	k0 = mw_bind2(test, mw0, a, MW_QPN + 2);
	assert_mw_bound(test, k0, a, MW_IOVA, MW_IOVA, MW_LEN, RR, MW_QPN + 2);
	KUNIT_EXPECT_EQ(test, mrc_dereg_mr(b), 0);
	ctx->mrs[MR_FULL2] = NULL;
}

/*
 * While no window is bound to any QP the call returns at once, with no
 * device op, for any number (0 included): type 1 windows are never
 * marked, and an invalidated type 2 window loses its mark.
 */
static void mrc_mw_unbind_qp_nothing_bound(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_FULL];
	struct mrc_mw *mw1 = mw_alloc(test, 0, MRC_MW_TYPE_1);
	struct mrc_mw *mw2 = mw_alloc(test, 1, MRC_MW_TYPE_2);
	unsigned int mark;
	u32 k2;

	KUNIT_ASSERT_EQ(test, mrc_bind_mw(mw1, a, MW_IOVA, 0x100, RR), 0);
	k2 = mw_bind2(test, mw2, a, MW_QPN);
	KUNIT_ASSERT_EQ(test, mw_inv(test, k2), 0);
	KUNIT_EXPECT_FALSE(test, xa_marked(&ctx->mdev->mkeys,
					   MRC_MKEY_MARK_QP));

	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_mw_unbind_qp(ctx->mdev, MW_QPN), 0);
	KUNIT_EXPECT_EQ(test, mrc_mw_unbind_qp(ctx->mdev, 0), 0);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_mw_bound(test, mrc_mw_rkey(mw1), a, MW_IOVA, MW_IOVA, 0x100,
			RR, 0);
	assert_mw_free(test, k2);
}

/*
 * A failed context write leaves that window bound to the number (the
 * backend must then never reuse it) and is returned; the QP's other
 * window is freed anyway, and a second call frees the one left.
 */
static void mrc_mw_unbind_qp_write_fails(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_FULL], *b = ctx->mrs[MR_FULL2];
	struct mrc_mw *mw0 = mw_alloc(test, 0, MRC_MW_TYPE_2);
	struct mrc_mw *mw1 = mw_alloc(test, 1, MRC_MW_TYPE_2);
	u32 k0 = mw_bind2(test, mw0, a, MW_QPN);
	u32 k1 = mw_bind2(test, mw1, b, MW_QPN);
	int valid;

	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, mrc_mw_unbind_qp(ctx->mdev, MW_QPN), -EIO);

	/* After: exactly one still VALID, marked, holding its MR. */
	valid = (mw_ctx(test, k0)->state == MRC_MKEY_VALID) +
		(mw_ctx(test, k1)->state == MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, valid, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->num_mw) +
			      atomic_read(&b->num_mw), 1);
	KUNIT_EXPECT_EQ(test, mw_marked(test, k0) + mw_marked(test, k1), 1);

	KUNIT_EXPECT_EQ(test, mrc_mw_unbind_qp(ctx->mdev, MW_QPN), 0);
	assert_mw_free(test, k0);
	assert_mw_free(test, k1);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 2));
}

/*
 * Windows bind to memory regions only: an indirect key is refused
 * -EINVAL by both binds, so a window's walk stays window, MR, local DMA
 * key (MRC_WALK_MAX_KEYS).
 */
static void mrc_bind_mw_indirect_refused(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_FULL];
	struct mrc_key_range r = { a->key, MW_IOVA, 0x1000 };
	struct mrc_mw *mw1 = mw_alloc(test, 0, MRC_MW_TYPE_1);
	struct mrc_mw *mw2 = mw_alloc(test, 1, MRC_MW_TYPE_2);
	u32 k1 = mrc_mw_rkey(mw1), k2 = mrc_mw_rkey(mw2);
	struct mrc_mr *ind;
	unsigned int mark;

	ctx->extra = mrc_reg_indirect(&ctx->pd, &r, 1, MW_IOVA, RR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->extra);
	ind = ctx->extra;
	mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_bind_mw(mw1, ind, MW_IOVA, 0x100, RR),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_mw_exec_bind(ctx->mdev, ctx->pd.pdn, MW_QPN,
					       mw_key(k2, 1), ind->key,
					       MW_IOVA, 0x100, RR), -EINVAL);

	/* After: nothing written, both windows FREE, the key unheld. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	assert_mw_free(test, k1);
	assert_mw_free(test, k2);
	KUNIT_EXPECT_EQ(test, atomic_read(&ind->num_mw), 0);
}

/* REMOTE_ONLY is the device's: no registration takes it from a caller. */
static void mrc_check_access_remote_only_refused(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	struct mrc_key_range r = { ctx->mrs[MR_FULL]->key, MW_IOVA, 0x100 };
	const u32 ro = MRC_ACCESS_REMOTE_ONLY;
	unsigned int mark = ctx->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_check_access(RR | ro), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_dma_mr(&ctx->pd, LW | ro)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, &r, 1,
						       MW_IOVA, RR | ro)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test, 0));
}

static int mw_test_init(struct kunit *test)
{
	struct mrc_phys_buf buf = { .size = MW_LEN };
	struct mw_test_ctx *ctx;
	struct mrc_caps caps;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	caps.flags |= MRC_CAP_KLM;
	ctx->hw = fake_hw_create(test, "mrc-kunit-mw", &caps);
	ctx->mdev = &ctx->hw->mdev;
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd2), 0);
	ctx->mkeys0 = atomic_read(&ctx->mdev->num_mkeys);

	for (i = 0; i < MR_NUM; i++) {
		buf.addr = 0x1000000ULL * (i + 1);
		ctx->mrs[i] = mrc_reg_phys_mr(i == MR_PD2 ? &ctx->pd2 :
					      &ctx->pd, &buf, 1, MW_IOVA,
					      mw_mr_access[i]);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mrs[i]);
	}
	return 0;
}

static void mw_test_exit(struct kunit *test)
{
	struct mw_test_ctx *ctx = test->priv;
	unsigned int i;

	/* Also runs when init or a case failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_XLT, 0);
	atomic_set(&ctx->mdev->inject, 0);
	for (i = 0; i < ARRAY_SIZE(ctx->mw); i++)
		if (!IS_ERR_OR_NULL(ctx->mw[i]))
			KUNIT_EXPECT_EQ(test, mrc_dealloc_mw(ctx->mw[i]), 0);
	if (!IS_ERR_OR_NULL(ctx->extra))
		KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->extra), 0);
	for (i = 0; i < MR_NUM; i++)
		if (!IS_ERR_OR_NULL(ctx->mrs[i]))
			KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->mrs[i]), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mws), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys),
			ctx->mkeys0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
	if (ctx->pd.pdn)
		mrc_pd_fini(&ctx->pd);
	if (ctx->pd2.pdn)
		mrc_pd_fini(&ctx->pd2);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case mw_test_cases[] = {
	KUNIT_CASE(mrc_alloc_mw_free_context),
	KUNIT_CASE(mrc_alloc_mw_bad_args),
	KUNIT_CASE_PARAM(mrc_alloc_mw_fail_unwinds, mw_fail_gen_params),
	KUNIT_CASE(mrc_bind_mw_type1_context),
	KUNIT_CASE(mrc_bind_mw_zero_length_unbinds),
	KUNIT_CASE(mrc_bind_mw_rebind_moves),
	KUNIT_CASE(mrc_bind_mw_long_window_splits),
	KUNIT_CASE_PARAM(mrc_bind_mw_rules, mw_bind_gen_params),
	KUNIT_CASE_PARAM(mrc_bind_mw_fail_unchanged, mw_wfail_gen_params),
	KUNIT_CASE_PARAM(mrc_mw_exec_bind_rules, mw_wr_gen_params),
	KUNIT_CASE(mrc_mw_exec_bind_zero_based),
	KUNIT_CASE(mrc_mw_exec_bind_variant_wraps),
	KUNIT_CASE(mrc_mw_exec_bind_index_names_window),
	KUNIT_CASE(mrc_exec_inv_type2_cycle),
	KUNIT_CASE(mrc_exec_inv_rules),
	KUNIT_CASE(mrc_dereg_mr_busy_with_windows),
	KUNIT_CASE(mrc_dealloc_mw_bound),
	KUNIT_CASE(mrc_exec_inv_other_qp),
	KUNIT_CASE(mrc_exec_inv_nowait_window_later),
	KUNIT_CASE(mrc_mw_exec_bind_type2_needs_qp),
	KUNIT_CASE(mrc_mw_unbind_qp_frees_windows),
	KUNIT_CASE(mrc_mw_unbind_qp_nothing_bound),
	KUNIT_CASE(mrc_mw_unbind_qp_write_fails),
	KUNIT_CASE(mrc_bind_mw_indirect_refused),
	KUNIT_CASE(mrc_check_access_remote_only_refused),
	{}
};

static struct kunit_suite mw_test_suite = {
	.name = "mrcore_mw",
	.init = mw_test_init,
	.exit = mw_test_exit,
	.test_cases = mw_test_cases,
};

kunit_test_suite(mw_test_suite);
