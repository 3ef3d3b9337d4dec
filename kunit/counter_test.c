// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite mrcore_counter: counters of remote writes (counter.c), on
 * the fake backend. The fake's counter table stands for the device's: the
 * cases add to it where the engine would and check what mrcore reads, and
 * they check the counter field mrcore leaves in every context it writes.
 */
#include <kunit/test.h>
#include <linux/sizes.h>

#include <rdma/mrcore_fmr.h>

#include "fake_hw.h"

#define CNT_SLOTS	8	/* caps.max_counters: 7 usable slots */
#define RW		MRC_ACCESS_REMOTE_WRITE
#define LRW		(MRC_ACCESS_LOCAL_WRITE | RW | MRC_ACCESS_REMOTE_READ)

#define CNT_IOVA	0x10000ULL
static const struct mrc_phys_buf cnt_bufs[] = {
	{ .addr = 0x100000, .size = SZ_8K },
};

static const u64 cnt_pages[] = { 0x200000, 0x201000 };

struct counter_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct mrc_pd pd;
	struct mrc_mr *mr;	/* a physical MR, dereg'd by .exit */
	struct mrc_counter *c;	/* freed by .exit */
};

static struct mrc_mr *cnt_phys_mr(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;

	mr = mrc_reg_phys_mr(&ctx->pd, cnt_bufs, ARRAY_SIZE(cnt_bufs),
			     CNT_IOVA, LRW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	return mr;
}

static struct mrc_counter *cnt_alloc(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_counter *c;

	c = mrc_alloc_counter(ctx->mdev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	return c;
}

/* The counter field of @mr's context, as the device holds it. */
static u32 cnt_field(struct kunit *test, const struct mrc_mr *mr)
{
	struct counter_test_ctx *ctx = test->priv;

	return fake_hw_ctx(ctx->hw, mr->key)->counter;
}

static void mrc_alloc_counter_no_table(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;

	/* Before: a device without a counter table. */
	ctx->mdev->caps.max_counters = 0;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_counter(ctx->mdev)),
			-EOPNOTSUPP);

	/* A table but no ops to reach it is no table either. */
	ctx->mdev->caps.max_counters = CNT_SLOTS;
	ctx->hw->ops.read_counter = NULL;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_counter(ctx->mdev)),
			-EOPNOTSUPP);
}

static void mrc_alloc_counter_exhausts_table(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_counter *c[CNT_SLOTS - 1];
	unsigned int i;
	u32 freed;

	/* Slots 1 .. CNT_SLOTS - 1, each once; slot 0 never. */
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		c[i] = cnt_alloc(test);
		KUNIT_EXPECT_GE(test, c[i]->index, 1U);
		KUNIT_EXPECT_LT(test, c[i]->index, (u32)CNT_SLOTS);
		KUNIT_EXPECT_EQ(test, atomic_read(&c[i]->num_mrs), 0);
	}
	KUNIT_EXPECT_EQ(test, ctx->mdev->num_counters, CNT_SLOTS - 1U);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_alloc_counter(ctx->mdev)), -ENOSPC);

	/* A freed slot is handed out again, its stale value reset. */
	freed = c[3]->index;
	KUNIT_EXPECT_EQ(test, mrc_free_counter(c[3]), 0);
	ctx->hw->counters[freed] = 99;
	c[3] = cnt_alloc(test);
	KUNIT_EXPECT_EQ(test, c[3]->index, freed);
	KUNIT_EXPECT_EQ(test, mrc_counter_read(c[3]), 0ULL);

	/* After: the last free releases the table's map. */
	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ(test, mrc_free_counter(c[i]), 0);
	KUNIT_EXPECT_EQ(test, ctx->mdev->num_counters, 0U);
	KUNIT_EXPECT_PTR_EQ(test, ctx->mdev->counter_map, NULL);
}

static void mrc_counter_read_device_value(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	unsigned int reads;

	/* Before: the device counted 42 writes. */
	ctx->c = cnt_alloc(test);
	ctx->hw->counters[ctx->c->index] = 42;
	reads = ctx->hw->calls[FAKE_HW_READ_COUNTER];

	/* The value is the device's, read through the op each time. */
	KUNIT_EXPECT_EQ(test, mrc_counter_read(ctx->c), 42ULL);
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_READ_COUNTER], reads + 1);

	/* After a reset: 0 in the device. */
	mrc_counter_reset(ctx->c);
	KUNIT_EXPECT_EQ(test, ctx->hw->counters[ctx->c->index], 0ULL);
	KUNIT_EXPECT_EQ(test, mrc_counter_read(ctx->c), 0ULL);
}

static void mrc_mr_bind_counter_sets_field_live(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	unsigned int writes, invs;

	ctx->mr = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), 0U);
	writes = ctx->hw->calls[FAKE_HW_WRITE_MKEY];
	invs = ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY];

	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);

	/* After: the field only; the context was never revoked. */
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), ctx->c->index);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, ctx->mr->key)->state,
			(u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_WRITE_MKEY], writes);
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY], invs);
	KUNIT_EXPECT_EQ(test, ctx->hw->last_index[FAKE_HW_SET_MKEY_COUNTER],
			mrc_key_index(ctx->mr->key));
	KUNIT_EXPECT_PTR_EQ(test, ctx->mr->counter, ctx->c);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 1);
}

static void mrc_mr_bind_counter_bad_flags(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;

	ctx->mr = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);

	/* Bind with no flag, an unknown one, or more; unbind with one. */
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c, BIT(1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE |
						  BIT(1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, NULL,
						  MRC_COUNT_REMOTE_WRITE),
			-EINVAL);

	/* After: nothing reached the device. */
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_SET_MKEY_COUNTER], 0U);
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 0);
}

static void mrc_mr_bind_counter_other_device(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_counter *other;
	struct fake_hw *hw2;
	struct mrc_caps caps;

	/* Before: a counter of a second device. */
	fake_hw_default_caps(&caps);
	caps.max_counters = CNT_SLOTS;
	hw2 = fake_hw_create(test, "mrc-kunit-counter2", &caps);
	KUNIT_ASSERT_EQ(test, fake_hw_register(hw2), 0);
	other = mrc_alloc_counter(&hw2->mdev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, other);
	ctx->mr = cnt_phys_mr(test);

	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, other,
						  MRC_COUNT_REMOTE_WRITE),
			-EINVAL);

	/* After: neither device changed. */
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&other->num_mrs), 0);
	KUNIT_EXPECT_EQ(test, mrc_free_counter(other), 0);
	fake_hw_unregister(hw2);
}

static void mrc_mr_bind_counter_one_per_mr(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_counter *c2;

	ctx->mr = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);
	c2 = cnt_alloc(test);
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);

	/* A second bind, of the same counter or another, is refused. */
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, c2,
						  MRC_COUNT_REMOTE_WRITE),
			-EBUSY);

	/* After: the first binding stands. */
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), ctx->c->index);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c2->num_mrs), 0);
	KUNIT_EXPECT_EQ(test, mrc_free_counter(c2), 0);
}

static void mrc_mr_bind_counter_unbind_clears(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;

	ctx->mr = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);

	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, NULL, 0), 0);

	/* After: the field is 0, the context still VALID. */
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), 0U);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, ctx->mr->key)->state,
			(u8)MRC_MKEY_VALID);
	KUNIT_EXPECT_PTR_EQ(test, ctx->mr->counter, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 0);

	/* Nothing left to unbind. */
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, NULL, 0), -ENOENT);
}

static void mrc_mr_bind_counter_op_fails(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;

	ctx->mr = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);

	/* A refused field write binds nothing. */
	fake_hw_fail_nth(ctx->hw, FAKE_HW_SET_MKEY_COUNTER, 1);
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE),
			-EIO);
	KUNIT_EXPECT_PTR_EQ(test, ctx->mr->counter, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 0);

	/* A refused unbind leaves the binding. */
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);
	fake_hw_fail_nth(ctx->hw, FAKE_HW_SET_MKEY_COUNTER, 3);
	KUNIT_EXPECT_EQ(test, mrc_mr_bind_counter(ctx->mr, NULL, 0), -EIO);
	KUNIT_EXPECT_PTR_EQ(test, ctx->mr->counter, ctx->c);
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), ctx->c->index);
	fake_hw_fail_nth(ctx->hw, FAKE_HW_SET_MKEY_COUNTER, 0);
}

static void mrc_free_counter_bound_busy(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;

	ctx->mr = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);

	KUNIT_EXPECT_EQ(test, mrc_free_counter(ctx->c), -EBUSY);
	KUNIT_EXPECT_EQ(test, ctx->mdev->num_counters, 1U);

	/* After an unbind it goes. */
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, mrc_free_counter(ctx->c), 0);
	ctx->c = NULL;
	KUNIT_EXPECT_EQ(test, ctx->mdev->num_counters, 0U);
}

static void mrc_mr_bind_counter_shared(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_mr *mr2;

	ctx->mr = cnt_phys_mr(test);
	mr2 = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);

	/* Two MRs, one counter: both contexts carry its slot. */
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(mr2, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), ctx->c->index);
	KUNIT_EXPECT_EQ(test, cnt_field(test, mr2), ctx->c->index);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 2);

	/* Deregistering one releases its binding only. */
	KUNIT_EXPECT_EQ(test, mrc_dereg_mr(mr2), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 1);
	KUNIT_EXPECT_EQ(test, mrc_free_counter(ctx->c), -EBUSY);
	KUNIT_EXPECT_EQ(test, cnt_field(test, ctx->mr), ctx->c->index);
}

static void mrc_dereg_mr_releases_counter(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	u32 index;

	ctx->mr = cnt_phys_mr(test);
	ctx->c = cnt_alloc(test);
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(ctx->mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);
	index = mrc_key_index(ctx->mr->key);

	KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->mr), 0);
	ctx->mr = NULL;

	/* After: the slot is invalid, its field cleared, the counter free. */
	KUNIT_EXPECT_EQ(test, ctx->hw->mkeys[index].state,
			(u8)MRC_MKEY_INVALID);
	KUNIT_EXPECT_EQ(test, ctx->hw->mkeys[index].counter, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 0);
	KUNIT_EXPECT_EQ(test, mrc_free_counter(ctx->c), 0);
	ctx->c = NULL;
}

static void mrc_frmr_exec_reg_keeps_counter(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;
	unsigned int i;
	u32 key;

	/* Before: a FREE fast-reg MR with a counter. */
	mr = mrc_alloc_frmr(&ctx->pd, 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	ctx->c = cnt_alloc(test);
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, cnt_field(test, mr), ctx->c->index);

	/* REG_MR / LOCAL_INV cycles, each with a new variant. */
	for (i = 0; i < 3; i++) {
		key = mrc_make_key(mrc_key_index(mr->key),
				   mrc_key_variant(mr->key) + 1);
		KUNIT_ASSERT_EQ(test, mrc_frmr_exec_reg(mr, key, CNT_IOVA,
							SZ_8K, 12, cnt_pages,
							2, LRW), 0);
		KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
				(u8)MRC_MKEY_VALID);
		KUNIT_EXPECT_EQ(test, cnt_field(test, mr), ctx->c->index);

		KUNIT_ASSERT_EQ(test, mrc_frmr_exec_inv(ctx->mdev,
							ctx->pd.pdn, key), 0);
		KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->state,
				(u8)MRC_MKEY_FREE);
		KUNIT_EXPECT_EQ(test, cnt_field(test, mr), ctx->c->index);
	}

	/* After an unbind, a REG_MR writes no counter. */
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(mr, NULL, 0), 0);
	key = mrc_make_key(mrc_key_index(mr->key), mrc_key_variant(mr->key) + 1);
	KUNIT_ASSERT_EQ(test, mrc_frmr_exec_reg(mr, key, CNT_IOVA, SZ_8K, 12,
						cnt_pages, 2, LRW), 0);
	KUNIT_EXPECT_EQ(test, cnt_field(test, mr), 0U);
	KUNIT_EXPECT_EQ(test, mrc_dealloc_frmr(mr), 0);
}

static void mrc_map_phys_fmr_keeps_counter(struct kunit *test)
{
	static const struct mrc_fmr_attr attr = {
		.max_pages = 4,
		.max_maps = 4,
		.page_shift = 12,
	};
	struct counter_test_ctx *ctx = test->priv;
	struct mrc_mr *mr;
	unsigned int i;

	mr = mrc_alloc_fmr(&ctx->pd, LRW, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	ctx->c = cnt_alloc(test);
	KUNIT_ASSERT_EQ(test, mrc_mr_bind_counter(mr, ctx->c,
						  MRC_COUNT_REMOTE_WRITE), 0);

	/* Remaps switch tables and variants; each context keeps the slot. */
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, mrc_map_phys_fmr(mr, cnt_pages, 2,
						       CNT_IOVA + i * SZ_8K),
				0);
		KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, mr->key)->state,
				(u8)MRC_MKEY_VALID);
		KUNIT_EXPECT_EQ(test, cnt_field(test, mr), ctx->c->index);
	}

	/* Unmapped: FREE, still carrying it for the next map. */
	KUNIT_ASSERT_EQ(test, mrc_unmap_fmr(&mr, 1), 0);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, mr->key)->state,
			(u8)MRC_MKEY_FREE);
	KUNIT_EXPECT_EQ(test, cnt_field(test, mr), ctx->c->index);

	/* Deallocation releases the binding. */
	KUNIT_EXPECT_EQ(test, mrc_dealloc_fmr(mr), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->c->num_mrs), 0);
}

static int counter_test_init(struct kunit *test)
{
	struct counter_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	caps.page_size_bitmap |= SZ_4K;
	caps.max_counters = CNT_SLOTS;
	ctx->hw = fake_hw_create(test, "mrc-kunit-counter", &caps);
	ctx->mdev = &ctx->hw->mdev;
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd), 0);
	return 0;
}

static void counter_test_exit(struct kunit *test)
{
	struct counter_test_ctx *ctx = test->priv;

	/* Also runs when init or a case failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	fake_hw_fail_nth(ctx->hw, FAKE_HW_SET_MKEY_COUNTER, 0);
	if (!IS_ERR_OR_NULL(ctx->mr))
		KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->mr), 0);
	if (!IS_ERR_OR_NULL(ctx->c))
		KUNIT_EXPECT_EQ(test, mrc_free_counter(ctx->c), 0);
	if (ctx->pd.pdn)
		mrc_pd_fini(&ctx->pd);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case counter_test_cases[] = {
	KUNIT_CASE(mrc_alloc_counter_no_table),
	KUNIT_CASE(mrc_alloc_counter_exhausts_table),
	KUNIT_CASE(mrc_counter_read_device_value),
	KUNIT_CASE(mrc_mr_bind_counter_sets_field_live),
	KUNIT_CASE(mrc_mr_bind_counter_bad_flags),
	KUNIT_CASE(mrc_mr_bind_counter_other_device),
	KUNIT_CASE(mrc_mr_bind_counter_one_per_mr),
	KUNIT_CASE(mrc_mr_bind_counter_unbind_clears),
	KUNIT_CASE(mrc_mr_bind_counter_op_fails),
	KUNIT_CASE(mrc_free_counter_bound_busy),
	KUNIT_CASE(mrc_mr_bind_counter_shared),
	KUNIT_CASE(mrc_dereg_mr_releases_counter),
	KUNIT_CASE(mrc_frmr_exec_reg_keeps_counter),
	KUNIT_CASE(mrc_map_phys_fmr_keeps_counter),
	{}
};

static struct kunit_suite counter_test_suite = {
	.name = "mrcore_counter",
	.init = counter_test_init,
	.exit = counter_test_exit,
	.test_cases = counter_test_cases,
};

kunit_test_suite(counter_test_suite);
