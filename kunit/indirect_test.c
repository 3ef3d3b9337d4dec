// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore indirect keys against the fake backend: the KLM
 * entries and context written (one entry per piece, long pieces split,
 * MRC_MKEY_F_NESTED_RIGHTS set),
 * every check on the named keys with its errno, the nesting limit,
 * unwinding at every stage, and what a later dereg of a named MR leaves.
 * Every case ends with no key, translation segment or MR left.
 */
#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

#define LW		MRC_ACCESS_LOCAL_WRITE
#define RR		MRC_ACCESS_REMOTE_READ
#define RW		MRC_ACCESS_REMOTE_WRITE
#define ZB		MRC_ACCESS_ZERO_BASED

/* The suite's MRs: 64 KiB of DMA space each at IND_IOVA. */
#define IND_IOVA	0x40000ULL
#define IND_LEN		0x10000ULL
#define IND_MAX_MRS	8

enum ind_mr_sel {
	MR_A,		/* LW | RR | RW */
	MR_B,		/* LW | RR | RW, other memory */
	MR_RO,		/* RR */
	MR_PD2,		/* LW | RR | RW, the other PD */
	MR_NUM
};

static const u32 ind_mr_access[MR_NUM] = {
	[MR_A] = LW | RR | RW,
	[MR_B] = LW | RR | RW,
	[MR_RO] = RR,
	[MR_PD2] = LW | RR | RW,
};

struct ind_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct mrc_pd pd;
	struct mrc_pd pd2;
	struct mrc_mr *mrs[MR_NUM];
	struct mrc_mr *extra[IND_MAX_MRS];	/* dereg'd by .exit, last first */
	int mkeys0;
};

/* Registrations go through here so .exit can clean up after a failure. */
static struct mrc_mr *ind_track(struct kunit *test, struct mrc_mr *mr)
{
	struct ind_test_ctx *ctx = test->priv;
	unsigned int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	for (i = 0; i < IND_MAX_MRS; i++) {
		if (!ctx->extra[i]) {
			ctx->extra[i] = mr;
			return mr;
		}
	}
	KUNIT_FAIL(test, "more than %d MRs", IND_MAX_MRS);
	return mr;
}

static void ind_dereg(struct kunit *test, struct mrc_mr *mr)
{
	struct ind_test_ctx *ctx = test->priv;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, mrc_dereg_mr(mr), 0);
	for (i = 0; i < IND_MAX_MRS; i++)
		if (ctx->extra[i] == mr)
			ctx->extra[i] = NULL;
}

/* An indirect key over all of @n: one piece of each. */
static struct mrc_mr *ind_over(struct kunit *test, struct mrc_mr *n, u32 acc)
{
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_key_range r = {
		.key = n->key, .addr = n->iova, .length = n->length,
	};

	return mrc_reg_indirect(&ctx->pd, &r, 1, 0x1000, acc);
}

/* Nothing allocated is left but the suite's MRs. */
static bool assert_baseline(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = ctx->mdev;
	bool ok;

	ok = atomic_read(&mdev->num_mkeys) == ctx->mkeys0 + MR_NUM &&
	     atomic_read(&mdev->num_mrs) == MR_NUM &&
	     atomic_read(&mdev->num_mrs_type[MRC_MR_INDIRECT]) == 0;
	if (!ok)
		KUNIT_FAIL(test, "leak: mkeys %d/%d mrs %d indirect %d",
			   atomic_read(&mdev->num_mkeys), ctx->mkeys0 + MR_NUM,
			   atomic_read(&mdev->num_mrs),
			   atomic_read(&mdev->num_mrs_type[MRC_MR_INDIRECT]));
	return ok;
}

static void mrc_reg_indirect_writes_klm(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_A], *b = ctx->mrs[MR_B], *ind;
	const struct mrc_key_range r[] = {
		{ b->key, IND_IOVA + 0x800, 0x100 },
		{ a->key, IND_IOVA, IND_LEN },
		{ b->key, IND_IOVA + 0x3, 0x5 },
	};
	unsigned int mark = ctx->hw->log_len;
	const struct mrc_mkey_ctx *c;

	ind = ind_track(test, mrc_reg_indirect(&ctx->pd, r, ARRAY_SIZE(r),
					       0x7000, LW | RR));

	/* Entries, one fence, the VALID KLM context last. */
	KUNIT_EXPECT_TRUE(test, fake_hw_assert_reg_order(test, ctx->hw, mark,
							 true));
	KUNIT_EXPECT_EQ(test, ind->type, MRC_MR_INDIRECT);
	KUNIT_EXPECT_EQ(test, mrc_indirect_depth(ind), 1U);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_owner(ctx->mdev, ind->key),
			    (void *)ind);
	c = fake_hw_ctx(ctx->hw, ind->key);
	KUNIT_EXPECT_EQ(test, c->key, ind->key);
	KUNIT_EXPECT_EQ(test, c->state, (u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, c->access_mode, (u8)MRC_ACCESS_MODE_KLM);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, c->access, (u32)(LW | RR));
	/* The device checks the named keys' rights at every access. */
	KUNIT_EXPECT_EQ(test, c->flags, (u8)MRC_MKEY_F_NESTED_RIGHTS);
	KUNIT_EXPECT_EQ(test, c->iova, 0x7000ULL);
	KUNIT_EXPECT_EQ(test, c->length, 0x100 + IND_LEN + 0x5);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, 3U);
	fake_hw_expect_klm(ctx->hw, c, 0, 0x100, b->key, IND_IOVA + 0x800);
	fake_hw_expect_klm(ctx->hw, c, 1, IND_LEN, a->key, IND_IOVA);
	fake_hw_expect_klm(ctx->hw, c, 2, 0x5, b->key, IND_IOVA + 0x3);
	KUNIT_EXPECT_EQ(test,
			atomic_read(&ctx->mdev->num_mrs_type[MRC_MR_INDIRECT]),
			1);

	/*
	 * No rereg: it would rewrite the context without the flag and with
	 * rights the named keys were never checked for.
	 */
	mark = ctx->hw->log_len;
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(ind, MRC_REREG_ACCESS, NULL,
						0, 0, 0, LW | RR | RW),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, mrc_rereg_user_mr(ind, MRC_REREG_PD, &ctx->pd,
						0, 0, 0, 0),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, c->access, (u32)(LW | RR));
	KUNIT_EXPECT_EQ(test, c->flags, (u8)MRC_MKEY_F_NESTED_RIGHTS);

	ind_dereg(test, ind);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, c->key)->state,
			(u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_indirect_zero_based_and_long(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	struct mrc_key_range r;
	struct mrc_mr *dma, *ind;

	dma = ind_track(test, mrc_reg_dma_mr(&ctx->pd, LW | RR));

	/* 5 GiB of one key: entries of at most MRC_KLM_MAX_BCOUNT. */
	r = (struct mrc_key_range){ dma->key, SZ_1G, 5ULL * SZ_1G };
	ind = mrc_reg_indirect(&ctx->pd, &r, 1, 0x1234, RR | ZB);
	c = fake_hw_ctx(ctx->hw, ind_track(test, ind)->key);
	KUNIT_EXPECT_EQ(test, c->iova, 0ULL);
	KUNIT_EXPECT_EQ(test, c->length, 5ULL * SZ_1G);
	KUNIT_ASSERT_EQ(test, c->xlt_entries, 3U);
	fake_hw_expect_klm(ctx->hw, c, 0, SZ_2G, dma->key, SZ_1G);
	fake_hw_expect_klm(ctx->hw, c, 1, SZ_2G, dma->key,
			   SZ_1G + (u64)SZ_2G);
	fake_hw_expect_klm(ctx->hw, c, 2, SZ_1G, dma->key,
			   SZ_1G + 2ULL * SZ_2G);
}

/* What a range names, for the table below. */
enum ind_key_sel {
	K_A,		/* MR_A */
	K_STALE,	/* MR_A's index, another variant */
	K_DEAD,		/* an index nobody has */
	K_LOCAL,	/* the local DMA key */
	K_RO,		/* MR_RO */
	K_PD2,		/* MR_PD2 */
	K_MW,		/* a window's key */
	K_FRMR,		/* a FREE fast-reg MR */
};

struct ind_bad_case {
	const char *desc;
	enum ind_key_sel key;
	u64 addr;
	u64 length;
	u64 iova;
	u32 access;
	int ret;
};

static const struct ind_bad_case ind_bad_cases[] = {
	{ "empty piece", K_A, IND_IOVA, 0, 0, RR, -EINVAL },
	{ "stale key", K_STALE, IND_IOVA, 0x10, 0, RR, -ENOKEY },
	{ "key nobody has", K_DEAD, IND_IOVA, 0x10, 0, RR, -ENOKEY },
	{ "local DMA key", K_LOCAL, IND_IOVA, 0x10, 0, RR, -EINVAL },
	{ "window's key", K_MW, 0, 0x10, 0, RR, -EINVAL },
	{ "FREE fast-reg MR", K_FRMR, 0, 0x10, 0, RR, -EINVAL },
	{ "MR of another PD", K_PD2, IND_IOVA, 0x10, 0, RR, -EPERM },
	{ "write over a read-only MR", K_RO, IND_IOVA, 0x10, 0, LW | RR,
	  -EPERM },
	{ "remote write over a read-only MR", K_RO, IND_IOVA, 0x10, 0,
	  LW | RW, -EPERM },
	{ "starts below the MR", K_A, IND_IOVA - 1, 0x10, 0, RR, -ERANGE },
	{ "ends past the MR", K_A, IND_IOVA + IND_LEN - 1, 2, 0, RR,
	  -ERANGE },
	{ "key range wraps", K_A, IND_IOVA, 0x10, U64_MAX - 0x8, RR,
	  -EINVAL },
	{ "MW_BIND asked for", K_A, IND_IOVA, 0x10, 0,
	  LW | MRC_ACCESS_MW_BIND, -EINVAL },
	{ "remote write without local write", K_A, IND_IOVA, 0x10, 0, RW,
	  -EINVAL },
	{ "on demand", K_A, IND_IOVA, 0x10, 0, MRC_ACCESS_ON_DEMAND,
	  -EOPNOTSUPP },
};

static void ind_bad_desc(const struct ind_bad_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ind_bad, ind_bad_cases, ind_bad_desc);

static u32 ind_key(struct kunit *test, enum ind_key_sel k,
		   struct mrc_mw **mw, struct mrc_mr **fr)
{
	struct ind_test_ctx *ctx = test->priv;
	u32 a = ctx->mrs[MR_A]->key;

	switch (k) {
	case K_A:
		return a;
	case K_STALE:
		return mrc_make_key(mrc_key_index(a), mrc_key_variant(a) + 1);
	case K_DEAD:
		return mrc_make_key(ctx->mdev->caps.max_mkeys - 1, 0);
	case K_LOCAL:
		return ctx->mdev->local_dma_lkey;
	case K_RO:
		return ctx->mrs[MR_RO]->key;
	case K_PD2:
		return ctx->mrs[MR_PD2]->key;
	case K_MW:
		*mw = mrc_alloc_mw(&ctx->pd, MRC_MW_TYPE_1);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, *mw);
		return mrc_mw_rkey(*mw);
	case K_FRMR:
		*fr = ind_track(test, mrc_alloc_frmr(&ctx->pd, 1));
		return (*fr)->key;
	}
	return 0;
}

static void mrc_reg_indirect_bad_args(struct kunit *test)
{
	const struct ind_bad_case *p = test->param_value;
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_mw *mw = NULL;
	struct mrc_mr *fr = NULL;
	struct mrc_key_range r;
	unsigned int mark;
	int keys;

	r = (struct mrc_key_range){ ind_key(test, p->key, &mw, &fr), p->addr,
				    p->length };
	mark = ctx->hw->log_len;
	keys = atomic_read(&ctx->mdev->num_mkeys);

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, &r, 1,
						       p->iova, p->access)),
			p->ret);

	/* Refused before anything was allocated or written. */
	KUNIT_EXPECT_EQ(test, ctx->hw->log_len, mark);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), keys);
	if (mw)
		KUNIT_EXPECT_EQ(test, mrc_dealloc_mw(mw), 0);
	if (fr) {
		KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(fr), 0);
		ctx->extra[0] = NULL;
	}
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_indirect_bad_list(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_A];
	struct mrc_key_range r[2] = {
		{ a->key, IND_IOVA, 0x10 },
		{ a->key, IND_IOVA + IND_LEN, 0x10 },	/* outside */
	};
	struct mrc_pd nopd = {};

	/* One bad piece fails the whole list, whatever its place. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, r, 2, 0, RR)),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, r, 0, 0, RR)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, NULL, 1, 0,
						       RR)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&nopd, r, 1, 0, RR)),
			-EINVAL);
	ctx->mdev->caps.flags &= ~MRC_CAP_KLM;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, r, 1, 0, RR)),
			-EOPNOTSUPP);
	ctx->mdev->caps.flags |= MRC_CAP_KLM;
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_indirect_nesting_limit(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_mr *a = ctx->mrs[MR_A], *lvl[MRC_INDIRECT_MAX_DEPTH + 1];
	struct mrc_mr *mixed;
	struct mrc_key_range r[2];
	unsigned int d;

	/* Depth d names depth d - 1; the MR at the bottom is depth 0. */
	lvl[0] = a;
	for (d = 1; d <= MRC_INDIRECT_MAX_DEPTH; d++) {
		lvl[d] = ind_track(test, ind_over(test, lvl[d - 1], RR));
		KUNIT_EXPECT_EQ(test, mrc_indirect_depth(lvl[d]), d);
		fake_hw_expect_klm(ctx->hw, fake_hw_ctx(ctx->hw, lvl[d]->key),
				   0, IND_LEN, lvl[d - 1]->key,
				   lvl[d - 1]->iova);
	}

	/* One level more is refused, alone or next to a shallow key. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(ind_over(test,
					       lvl[MRC_INDIRECT_MAX_DEPTH],
					       RR)), -ELOOP);
	r[0] = (struct mrc_key_range){ a->key, IND_IOVA, 0x10 };
	r[1] = (struct mrc_key_range){ lvl[MRC_INDIRECT_MAX_DEPTH]->key,
				       0x1000, 0x10 };
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, r, 2, 0,
						       RR)), -ELOOP);

	/* The deepest named key sets the depth. */
	r[1].key = lvl[MRC_INDIRECT_MAX_DEPTH - 2]->key;
	mixed = ind_track(test, mrc_reg_indirect(&ctx->pd, r, 2, 0, RR));
	KUNIT_EXPECT_EQ(test, mrc_indirect_depth(mixed),
			MRC_INDIRECT_MAX_DEPTH - 1);
}

static void mrc_reg_indirect_over_frmr(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	struct mrc_mr *fr, *ind;
	u64 page = 0x300000;
	u32 key;

	fr = ind_track(test, mrc_alloc_frmr(&ctx->pd, 1));
	key = mrc_make_key(mrc_key_index(fr->key),
			   mrc_key_variant(fr->key) + 1);
	KUNIT_ASSERT_EQ(test, mrc_frmr_exec_reg(fr, key, 0x5000, 0x1000, 12,
						&page, 1, LW | RR), 0);

	/* A VALID fast-reg MR may be named, by its current key. */
	ind = ind_track(test, ind_over(test, fr, LW));
	c = fake_hw_ctx(ctx->hw, ind->key);
	fake_hw_expect_klm(ctx->hw, c, 0, 0x1000, key, 0x5000);

	/* Invalidated later, it is no longer VALID: no new names. */
	KUNIT_ASSERT_EQ(test, mrc_exec_inv(ctx->mdev, ctx->pd.pdn, 0, key), 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ind_over(test, fr, LW)), -EINVAL);
}

static void mrc_reg_indirect_named_dereg(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_phys_buf buf = { 0x9000000, IND_LEN };
	struct mrc_mr *n, *ind;
	u32 nkey;

	n = ind_track(test, mrc_reg_phys_mr(&ctx->pd, &buf, 1, IND_IOVA, RR));
	nkey = n->key;
	ind = ind_track(test, ind_over(test, n, RR));

	/*
	 * The named MR goes first: not refused (no reference is kept); the
	 * indirect key's entry now names a key that is not live, so the
	 * device's walk through it fails.
	 */
	ind_dereg(test, n);
	KUNIT_EXPECT_NULL(test, mrc_mkey_owner(ctx->mdev, nkey));
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, nkey)->state,
			(u8)MRC_MKEY_INVALID);
	fake_hw_expect_klm(ctx->hw, fake_hw_ctx(ctx->hw, ind->key), 0,
			   IND_LEN, nkey, IND_IOVA);
	ind_dereg(test, ind);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

struct ind_fail_case {
	const char *desc;
	int stage;		/* enum mrc_stage, or -1 - the fake op */
	int ret;
};

static const struct ind_fail_case ind_fail_cases[] = {
	{ "injected at key_alloc", MRC_STAGE_KEY_ALLOC, -ENOSPC },
	{ "injected at xlt_alloc", MRC_STAGE_XLT_ALLOC, -ENOSPC },
	{ "injected at write_xlt", MRC_STAGE_WRITE_XLT, -EIO },
	{ "injected at write_mkey", MRC_STAGE_WRITE_MKEY, -EIO },
	{ "backend write_xlt fails", -1 - FAKE_HW_WRITE_XLT, -EIO },
	{ "backend write_mkey fails", -1 - FAKE_HW_WRITE_MKEY, -EIO },
};

static void ind_fail_desc(const struct ind_fail_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ind_fail, ind_fail_cases, ind_fail_desc);

static void mrc_reg_indirect_fail_unwinds(struct kunit *test)
{
	const struct ind_fail_case *p = test->param_value;
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_key_range r[20];
	struct mrc_mr *ind;
	int segs = atomic_read(&ctx->mdev->xlt_segs_used);
	unsigned int i;

	/* 20 pieces: two write_xlt chunks, the second one fails. */
	for (i = 0; i < ARRAY_SIZE(r); i++)
		r[i] = (struct mrc_key_range){ ctx->mrs[MR_A]->key,
					       IND_IOVA + i * 0x100, 0x100 };
	if (p->stage < 0)
		fake_hw_fail_next(ctx->hw, -1 - p->stage,
				  p->stage == -1 - FAKE_HW_WRITE_XLT ? 2 : 1);
	else
		atomic_set(&ctx->mdev->inject,
			   (p->stage == MRC_STAGE_WRITE_XLT ? 2 : 1) <<
			   MRC_INJECT_LEFT_SHIFT | (p->stage + 1));

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_indirect(&ctx->pd, r,
						       ARRAY_SIZE(r), 0, RR)),
			p->ret);

	/* After: nothing held; the same registration then works. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->inject), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), segs);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	ind = ind_track(test, mrc_reg_indirect(&ctx->pd, r, ARRAY_SIZE(r), 0,
					       RR));
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, ind->key)->xlt_entries,
			20U);
}

static int ind_test_init(struct kunit *test)
{
	struct mrc_phys_buf buf = { .size = IND_LEN };
	struct ind_test_ctx *ctx;
	struct mrc_caps caps;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	caps.flags |= MRC_CAP_KLM;
	caps.page_size_bitmap |= SZ_4K;
	ctx->hw = fake_hw_create(test, "mrc-kunit-indirect", &caps);
	ctx->mdev = &ctx->hw->mdev;
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd2), 0);
	ctx->mkeys0 = atomic_read(&ctx->mdev->num_mkeys);

	for (i = 0; i < MR_NUM; i++) {
		buf.addr = 0x1000000ULL * (i + 1);
		ctx->mrs[i] = mrc_reg_phys_mr(i == MR_PD2 ? &ctx->pd2 :
					      &ctx->pd, &buf, 1, IND_IOVA,
					      ind_mr_access[i]);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mrs[i]);
	}
	return 0;
}

static void ind_test_exit(struct kunit *test)
{
	struct ind_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;
	int i;

	/* Also runs when init or a case failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_XLT, 0);
	atomic_set(&ctx->mdev->inject, 0);
	/* Later registrations may name earlier ones: last first. */
	for (i = IND_MAX_MRS - 1; i >= 0; i--) {
		mr = ctx->extra[i];
		if (!mr)
			continue;
		if (mr->type == MRC_MR_FAST_REG)
			KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mr), 0);
		else
			KUNIT_EXPECT_EQ(test, mrc_dereg_mr(mr), 0);
	}
	for (i = 0; i < MR_NUM; i++)
		if (!IS_ERR_OR_NULL(ctx->mrs[i]))
			KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->mrs[i]), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys),
			ctx->mkeys0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
	if (ctx->pd.pdn)
		mrc_pd_fini(&ctx->pd);
	if (ctx->pd2.pdn)
		mrc_pd_fini(&ctx->pd2);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case ind_test_cases[] = {
	KUNIT_CASE(mrc_reg_indirect_writes_klm),
	KUNIT_CASE(mrc_reg_indirect_zero_based_and_long),
	KUNIT_CASE_PARAM(mrc_reg_indirect_bad_args, ind_bad_gen_params),
	KUNIT_CASE(mrc_reg_indirect_bad_list),
	KUNIT_CASE(mrc_reg_indirect_nesting_limit),
	KUNIT_CASE(mrc_reg_indirect_over_frmr),
	KUNIT_CASE(mrc_reg_indirect_named_dereg),
	KUNIT_CASE_PARAM(mrc_reg_indirect_fail_unwinds, ind_fail_gen_params),
	{}
};

static struct kunit_suite ind_test_suite = {
	.name = "mrcore_indirect",
	.init = ind_test_init,
	.exit = ind_test_exit,
	.test_cases = ind_test_cases,
};

kunit_test_suite(ind_test_suite);
