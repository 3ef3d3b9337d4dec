// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore device registration: cap checking, the local DMA
 * key, unwinding and unregistration, all against the fake backend.
 */
#include <kunit/test.h>
#include <linux/dcache.h>
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "fake_hw.h"

#define DEVICE_TEST_NAME "mrc-kunit-device"

struct device_test_ctx {
	struct fake_hw *hw;
};

/* What a bad-caps case breaks in an otherwise valid fake. */
enum bad_field {
	BAD_NAME,
	BAD_OPS,
	BAD_OP,
	BAD_MAX_MKEYS,
	BAD_MAX_PDS,
	BAD_XLT_SIZE,
	BAD_PAGE_SIZES,
};

struct bad_caps_case {
	const char *desc;
	enum bad_field field;
	u64 value;
};

static const struct bad_caps_case bad_caps_cases[] = {
	{ "no name", BAD_NAME, 0 },
	{ "no ops table", BAD_OPS, 0 },
	{ "no fence", BAD_OP, FAKE_HW_FENCE },
	{ "no invalidate_mkey", BAD_OP, FAKE_HW_INVALIDATE_MKEY },
	{ "no write_mkey", BAD_OP, FAKE_HW_WRITE_MKEY },
	{ "no write_xlt", BAD_OP, FAKE_HW_WRITE_XLT },
	{ "max_mkeys 0", BAD_MAX_MKEYS, 0 },
	{ "max_mkeys 1", BAD_MAX_MKEYS, 1 },
	{ "max_mkeys 48 not a power of two", BAD_MAX_MKEYS, 48 },
	{ "max_mkeys above MRC_MAX_MKEYS", BAD_MAX_MKEYS, MRC_MAX_MKEYS << 1 },
	{ "max_pds 0", BAD_MAX_PDS, 0 },
	{ "max_pds 1", BAD_MAX_PDS, 1 },
	{ "max_pds above MRC_MAX_PDS", BAD_MAX_PDS, MRC_MAX_PDS + 1ULL },
	{ "xlt_size 0", BAD_XLT_SIZE, 0 },
	{ "xlt_size not a segment multiple", BAD_XLT_SIZE, 100 },
	{ "xlt_size above MRC_MAX_XLT_SIZE", BAD_XLT_SIZE,
	  MRC_MAX_XLT_SIZE + MRC_XLT_SEG_SIZE },
	{ "page sizes without PAGE_SIZE", BAD_PAGE_SIZES, PAGE_SIZE << 1 },
	{ "no page sizes", BAD_PAGE_SIZES, 0 },
};

static void bad_caps_desc(const struct bad_caps_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad_caps, bad_caps_cases, bad_caps_desc);

static void bad_caps_apply(struct fake_hw *hw, const struct bad_caps_case *c)
{
	switch (c->field) {
	case BAD_NAME:
		hw->mdev.name = NULL;
		break;
	case BAD_OPS:
		hw->mdev.ops = NULL;
		break;
	case BAD_OP:
		if (c->value == FAKE_HW_FENCE)
			hw->ops.fence = NULL;
		else if (c->value == FAKE_HW_INVALIDATE_MKEY)
			hw->ops.invalidate_mkey = NULL;
		else if (c->value == FAKE_HW_WRITE_MKEY)
			hw->ops.write_mkey = NULL;
		else
			hw->ops.write_xlt = NULL;
		break;
	case BAD_MAX_MKEYS:
		hw->mdev.caps.max_mkeys = c->value;
		break;
	case BAD_MAX_PDS:
		hw->mdev.caps.max_pds = c->value;
		break;
	case BAD_XLT_SIZE:
		hw->mdev.caps.xlt_size = c->value;
		break;
	case BAD_PAGE_SIZES:
		hw->mdev.caps.page_size_bitmap = c->value;
		break;
	}
}

/* No op was called and no core state was allocated. */
static bool assert_untouched(struct kunit *test, struct fake_hw *hw)
{
	unsigned int op;
	bool ok = true;

	for (op = 0; op < FAKE_HW_NUM_OPS; op++) {
		if (hw->calls[op]) {
			KUNIT_FAIL(test, "op %u called %u times", op,
				   hw->calls[op]);
			ok = false;
		}
	}
	if (hw->mdev.mkey_variant || hw->mdev.xlt.bits || hw->mdev.debugfs) {
		KUNIT_FAIL(test, "state left: variants %p xlt %p debugfs %p",
			   hw->mdev.mkey_variant, hw->mdev.xlt.bits,
			   hw->mdev.debugfs);
		ok = false;
	}
	return ok;
}

/* Every context slot of the fake is still as it was at creation. */
static bool assert_slots_unwritten(struct kunit *test, struct fake_hw *hw)
{
	const struct mrc_mkey_ctx *mc;
	u32 i;

	for (i = 0; i < hw->mdev.caps.max_mkeys; i++) {
		mc = &hw->mkeys[i];
		if (mc->state != MRC_MKEY_INVALID || mc->key) {
			KUNIT_FAIL(test, "slot %u written: key %#x state %u",
				   i, mc->key, mc->state);
			return false;
		}
	}
	return true;
}

static void mrc_register_device_bad_caps(struct kunit *test)
{
	const struct bad_caps_case *c = test->param_value;
	struct device_test_ctx *ctx = test->priv;

	/* Before: a valid fake with one thing broken. */
	bad_caps_apply(ctx->hw, c);

	KUNIT_EXPECT_EQ(test, fake_hw_register(ctx->hw), -EINVAL);

	/* After: rejected before any allocation or device access. */
	KUNIT_EXPECT_FALSE(test, ctx->hw->registered);
	assert_untouched(test, ctx->hw);
}

static void mrc_register_device_writes_local_dma_key(struct kunit *test)
{
	struct device_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = &ctx->hw->mdev;
	const struct mrc_mkey_ctx *mc;
	u32 key, index;

	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	key = mdev->local_dma_lkey;
	index = mrc_key_index(key);

	/* After: one context write, at the key's slot, in device memory. */
	KUNIT_ASSERT_EQ(test, ctx->hw->calls[FAKE_HW_WRITE_MKEY], 1U);
	KUNIT_ASSERT_GT(test, index, 0U);
	KUNIT_ASSERT_LT(test, index, mdev->caps.max_mkeys);
	mc = &ctx->hw->mkeys[index];
	KUNIT_EXPECT_EQ(test, mc->key, key);
	KUNIT_EXPECT_EQ(test, mc->state, MRC_MKEY_VALID);
	KUNIT_EXPECT_EQ(test, mc->access_mode, MRC_ACCESS_MODE_PA);
	KUNIT_EXPECT_EQ(test, mc->pdn, MRC_PDN_ANY);
	KUNIT_EXPECT_EQ(test, mc->access, MRC_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, mc->iova, 0ULL);
	KUNIT_EXPECT_EQ(test, mc->length, U64_MAX);

	/* The key is allocated in the core, not only written to the device. */
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mkeys), 1);
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc_at(mdev, NULL, key), -ENOKEY);
}

static void mrc_register_device_write_mkey_fails(struct kunit *test)
{
	struct device_test_ctx *ctx = test->priv;
	struct mrc_device *mdev = &ctx->hw->mdev;

	/* Before: the first context write (the local DMA key) will fail. */
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_MKEY, 1);

	KUNIT_EXPECT_EQ(test, fake_hw_register(ctx->hw), -EIO);

	/* After: everything undone; nothing invalidated that was not set. */
	KUNIT_EXPECT_FALSE(test, ctx->hw->registered);
	KUNIT_EXPECT_NULL(test, mdev->mkey_variant);
	KUNIT_EXPECT_NULL(test, mdev->xlt.bits);
	KUNIT_EXPECT_NULL(test, mdev->xlt.num_free);
	KUNIT_EXPECT_NULL(test, mdev->debugfs);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mkeys), 0);
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY], 0U);
	assert_slots_unwritten(test, ctx->hw);

	/* And the same device registers cleanly once the fault is gone. */
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_MKEY, 0);
	KUNIT_EXPECT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mdev->num_mkeys), 1);
}

static void mrc_register_device_non_pow2_xlt(struct kunit *test)
{
	struct device_test_ctx *ctx = test->priv;

	/* Before: 7 segments, i.e. free blocks of 4, 2 and 1 segments. */
	ctx->hw->mdev.caps.xlt_size = 7 * MRC_XLT_SEG_SIZE;

	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);

	KUNIT_EXPECT_EQ(test, ctx->hw->mdev.xlt.num_segs, 7UL);
	KUNIT_EXPECT_EQ(test, ctx->hw->mdev.xlt.max_order, 2U);
}

/* Whether @name exists under @parent; the lookup's reference is dropped. */
static bool debugfs_exists(const char *name, struct dentry *parent)
{
	struct dentry *d = debugfs_lookup(name, parent);
	bool found = !IS_ERR_OR_NULL(d);

	if (found)
		dput(d);
	return found;
}

static void mrc_register_device_creates_debugfs(struct kunit *test)
{
	struct device_test_ctx *ctx = test->priv;
	struct dentry *root, *dir;

	root = debugfs_lookup("mrcore", NULL);
	if (IS_ERR_OR_NULL(root))
		kunit_skip(test, "no /sys/kernel/debug/mrcore");

	KUNIT_EXPECT_FALSE(test, debugfs_exists(DEVICE_TEST_NAME, root));
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);

	/* After register: <name>/stats exists. */
	dir = debugfs_lookup(DEVICE_TEST_NAME, root);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, dir);
	if (!IS_ERR_OR_NULL(dir))
		KUNIT_EXPECT_TRUE(test, debugfs_exists("stats", dir));
	dput(dir);

	/* After unregister: the directory is gone. */
	fake_hw_unregister(ctx->hw);
	KUNIT_EXPECT_FALSE(test, debugfs_exists(DEVICE_TEST_NAME, root));
	dput(root);
}

static void mrc_unregister_device_invalidates_local_key(struct kunit *test)
{
	struct device_test_ctx *ctx = test->priv;
	u32 index;

	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	index = mrc_key_index(ctx->hw->mdev.local_dma_lkey);
	KUNIT_ASSERT_EQ(test, ctx->hw->mkeys[index].state, MRC_MKEY_VALID);
	KUNIT_ASSERT_EQ(test, ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY], 0U);

	fake_hw_unregister(ctx->hw);

	/* After: exactly that slot invalidated in device memory. */
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY], 1U);
	KUNIT_EXPECT_EQ(test, ctx->hw->last_index[FAKE_HW_INVALIDATE_MKEY],
			index);
	KUNIT_EXPECT_EQ(test, ctx->hw->mkeys[index].state, MRC_MKEY_INVALID);
	KUNIT_EXPECT_NULL(test, ctx->hw->mdev.mkey_variant);
}

static void mrc_unregister_device_invalidate_fails(struct kunit *test)
{
	struct device_test_ctx *ctx = test->priv;

	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	fake_hw_fail_nth(ctx->hw, FAKE_HW_INVALIDATE_MKEY, 1);

	fake_hw_unregister(ctx->hw);

	/* After: the core let go of everything despite the device error. */
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_INVALIDATE_MKEY], 1U);
	KUNIT_EXPECT_NULL(test, ctx->hw->mdev.mkey_variant);
	KUNIT_EXPECT_NULL(test, ctx->hw->mdev.xlt.bits);
	KUNIT_EXPECT_EQ(test, fake_hw_register(ctx->hw), 0);
}

static int device_test_init(struct kunit *test)
{
	struct device_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;

	test->priv = ctx;

	fake_hw_default_caps(&caps);
	ctx->hw = fake_hw_create(test, DEVICE_TEST_NAME, &caps);
	return 0;
}

static void device_test_exit(struct kunit *test)
{
	struct device_test_ctx *ctx = test->priv;

	/* Also runs when init failed part-way. */
	if (ctx)
		fake_hw_unregister(ctx->hw);
}

static struct kunit_case device_test_cases[] = {
	KUNIT_CASE_PARAM(mrc_register_device_bad_caps, bad_caps_gen_params),
	KUNIT_CASE(mrc_register_device_writes_local_dma_key),
	KUNIT_CASE(mrc_register_device_write_mkey_fails),
	KUNIT_CASE(mrc_register_device_non_pow2_xlt),
	KUNIT_CASE(mrc_register_device_creates_debugfs),
	KUNIT_CASE(mrc_unregister_device_invalidates_local_key),
	KUNIT_CASE(mrc_unregister_device_invalidate_fails),
	{}
};

static struct kunit_suite device_test_suite = {
	.name = "mrcore_device",
	.init = device_test_init,
	.exit = device_test_exit,
	.test_cases = device_test_cases,
};

kunit_test_suite(device_test_suite);
