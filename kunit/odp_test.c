// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore's on-demand paging bookkeeping that needs no
 * user mm: the refusals of ODP registrations, the sync_mkey requirement
 * of MRC_CAP_ODP, faults, prefetches and stats on keys that are not an
 * ODP MR's, and the "odp" debugfs file. A KUnit case runs in a kthread
 * (current->mm is NULL), so faulting real pages is left to the VM tier.
 */
#include <kunit/test.h>
#include <linux/dcache.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "fake_hw.h"

#define ODP_TEST_MAX_DEVS	2
#define ODP_START		0x10000ULL
#define ODP_LEN			((u64)SZ_64K)
#define LW_OD			(MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_ON_DEMAND)
#define CAP_ODP_KSM		(MRC_CAP_ODP | MRC_CAP_KSM)

/* Distinct names: each registered device gets a debugfs directory. */
static const char * const odp_dev_names[ODP_TEST_MAX_DEVS] = {
	"mrc-kunit-odp0", "mrc-kunit-odp1",
};

struct odp_test_dev {
	struct fake_hw *hw;
	struct mrc_pd pd;
};

struct odp_test_ctx {
	struct odp_test_dev devs[ODP_TEST_MAX_DEVS];
	unsigned int ndevs;
	struct mrc_mr *mr;
};

/* A fake, not yet registered, with @flags on top of the default caps. */
static struct fake_hw *odp_dev_create(struct kunit *test, u32 flags)
{
	struct odp_test_ctx *ctx = test->priv;
	struct mrc_caps caps;
	struct fake_hw *hw;

	KUNIT_ASSERT_LT(test, ctx->ndevs, ARRAY_SIZE(ctx->devs));
	fake_hw_default_caps(&caps);
	caps.flags |= flags;
	hw = fake_hw_create(test, odp_dev_names[ctx->ndevs], &caps);
	ctx->devs[ctx->ndevs++].hw = hw;
	return hw;
}

/* A registered fake with @flags and a PD on it. */
static struct odp_test_dev *odp_dev_add(struct kunit *test, u32 flags)
{
	struct odp_test_ctx *ctx = test->priv;
	struct odp_test_dev *d;

	odp_dev_create(test, flags);
	d = &ctx->devs[ctx->ndevs - 1];
	KUNIT_ASSERT_EQ(test, fake_hw_register(d->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(&d->hw->mdev, &d->pd), 0);
	return d;
}

/* What a refused registration must leave as it was. */
struct odp_snap {
	int mkeys;
	int segs;
	int mrs;
	unsigned int log_len;
};

static void odp_take_snap(const struct fake_hw *hw, struct odp_snap *s)
{
	s->mkeys = atomic_read(&hw->mdev.num_mkeys);
	s->segs = atomic_read(&hw->mdev.xlt_segs_used);
	s->mrs = atomic_read(&hw->mdev.num_mrs);
	s->log_len = hw->log_len;
}

static void odp_expect_unchanged(struct kunit *test, const struct fake_hw *hw,
				 const struct odp_snap *s)
{
	KUNIT_EXPECT_EQ(test, atomic_read(&hw->mdev.num_mkeys), s->mkeys);
	KUNIT_EXPECT_EQ(test, atomic_read(&hw->mdev.xlt_segs_used), s->segs);
	KUNIT_EXPECT_EQ(test, atomic_read(&hw->mdev.num_mrs), s->mrs);
	/* No op at all was called, so no write_mkey and no write_xlt. */
	KUNIT_EXPECT_EQ(test, hw->log_len, s->log_len);
}

struct odp_refusal {
	const char *desc;
	u32 caps;
	u64 start;
	u64 length;
	u64 iova;
	u32 access;
	int ret;
};

static const struct odp_refusal odp_refusals[] = {
	{ "no MRC_CAP_ODP", 0, ODP_START, ODP_LEN, ODP_START, LW_OD,
	  -EOPNOTSUPP },
	{ "implicit without MRC_CAP_KSM", MRC_CAP_ODP, 0, U64_MAX, 0, LW_OD,
	  -EOPNOTSUPP },
	{ "implicit at iova 0x1000", CAP_ODP_KSM, 0, U64_MAX, 0x1000, LW_OD,
	  -EINVAL },
	{ "implicit with HUGETLB", CAP_ODP_KSM, 0, U64_MAX, 0,
	  LW_OD | MRC_ACCESS_HUGETLB, -EINVAL },
	{ "zero based", CAP_ODP_KSM, ODP_START, ODP_LEN, ODP_START,
	  LW_OD | MRC_ACCESS_ZERO_BASED, -EOPNOTSUPP },
	{ "unknown access bit", CAP_ODP_KSM, ODP_START, ODP_LEN, ODP_START,
	  LW_OD | BIT(12), -EINVAL },
	{ "explicit of length 0", CAP_ODP_KSM, ODP_START, 0, ODP_START, LW_OD,
	  -EINVAL },
	{ "explicit without a user mm", CAP_ODP_KSM, ODP_START, ODP_LEN,
	  ODP_START, LW_OD, -EFAULT },
	{ "implicit without a user mm", CAP_ODP_KSM, 0, U64_MAX, 0, LW_OD,
	  -EFAULT },
};

static void odp_refusal_desc(const struct odp_refusal *p, char *desc)
{
	strscpy(desc, p->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(odp_refusal, odp_refusals, odp_refusal_desc);

/*
 * Proves: an ODP registration the device cannot serve, a malformed one,
 * and a well-formed one from a task without a user mm each fail with
 * their errno before anything is allocated or written to the device.
 */
static void mrc_reg_user_mr_odp_refused(struct kunit *test)
{
	const struct odp_refusal *p = test->param_value;
	struct odp_test_ctx *ctx = test->priv;
	struct odp_test_dev *d;
	struct odp_snap before;
	struct mrc_mr *mr;

	if (p->ret == -EFAULT && current->mm)
		kunit_skip(test, "the test thread has a user mm");
	d = odp_dev_add(test, p->caps);
	odp_take_snap(d->hw, &before);

	mr = mrc_reg_user_mr(&d->pd, p->start, p->length, p->iova, p->access);
	if (!IS_ERR(mr)) {
		ctx->mr = mr;	/* for .exit to deregister */
		KUNIT_FAIL(test, "%s: registered as key %#x", p->desc, mr->key);
		return;
	}
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), (long)p->ret);
	odp_expect_unchanged(test, d->hw, &before);
}

/*
 * Proves: MRC_CAP_ODP without ops->sync_mkey is refused (-EINVAL) before
 * the device is touched, and the same device registers once it has it.
 */
static void mrc_register_device_odp_needs_sync_mkey(struct kunit *test)
{
	struct fake_hw *hw = odp_dev_create(test, MRC_CAP_ODP);
	void (*sync_mkey)(struct mrc_device *mdev, u32 index);

	sync_mkey = hw->ops.sync_mkey;
	KUNIT_ASSERT_TRUE(test, sync_mkey);
	hw->ops.sync_mkey = NULL;
	KUNIT_EXPECT_EQ(test, fake_hw_register(hw), -EINVAL);
	KUNIT_EXPECT_FALSE(test, hw->registered);
	KUNIT_EXPECT_EQ(test, hw->log_len, 0U);

	hw->ops.sync_mkey = sync_mkey;
	KUNIT_EXPECT_EQ(test, fake_hw_register(hw), 0);
}

/*
 * Proves: faults on an unknown key (-ENOKEY), the local DMA key and a live
 * non-ODP MR's key (-EINVAL) each count one fault error and no fault, and
 * touch no device op; prefetch and the MR's ODP stats refuse a non-ODP
 * MR (-EINVAL) without counting a prefetch.
 */
static void mrc_odp_fault_not_odp_key(struct kunit *test)
{
	struct odp_test_ctx *ctx = test->priv;
	struct odp_test_dev *d = odp_dev_add(test, MRC_CAP_ODP);
	struct mrc_device *mdev = &d->hw->mdev;
	/* Slots 1 and 2 hold the local DMA key and the MR. */
	u32 unknown = mrc_make_key(mdev->caps.max_mkeys - 1, 0x5a);
	struct mrc_odp_stats st;
	unsigned int mark;

	ctx->mr = mrc_reg_dma_mr(&d->pd, MRC_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mr);
	mark = d->hw->log_len;

	KUNIT_EXPECT_EQ(test, mrc_odp_fault(mdev, unknown, 0, 1, 0), -ENOKEY);
	KUNIT_EXPECT_EQ(test, mrc_odp_fault(mdev, mdev->local_dma_lkey, 0, 1,
					    0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mrc_odp_fault(mdev, ctx->mr->key, 0, 1,
					    MRC_ODP_WRITE), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mdev->odp.fault_errors), 3LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mdev->odp.faults), 0LL);

	KUNIT_EXPECT_EQ(test, mrc_odp_prefetch(mdev, d->pd.pdn, ctx->mr->key,
					       0, SZ_4K, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mdev->odp.prefetches), 0LL);
	KUNIT_EXPECT_EQ(test, mrc_mr_odp_stats(ctx->mr, &st), -EINVAL);
	KUNIT_EXPECT_EQ(test, d->hw->log_len, mark);
}

/* Whether @name exists in @d's debugfs directory; drops the reference. */
static bool odp_debugfs_has(const struct odp_test_dev *d, const char *name)
{
	struct dentry *dentry = debugfs_lookup(name, d->hw->mdev.debugfs);
	bool found = !IS_ERR_OR_NULL(dentry);

	if (found)
		dput(dentry);
	return found;
}

/*
 * Proves: the "odp" counters file exists for a device with MRC_CAP_ODP
 * and not for one without; "stats", there for both, shows the lookups
 * themselves work.
 */
static void mrc_register_device_odp_debugfs(struct kunit *test)
{
	struct odp_test_dev *with, *without;

	if (!IS_ENABLED(CONFIG_DEBUG_FS))
		kunit_skip(test, "CONFIG_DEBUG_FS is off");
	with = odp_dev_add(test, MRC_CAP_ODP);
	without = odp_dev_add(test, 0);
	/* A NULL parent would make debugfs_lookup() search the root. */
	if (IS_ERR_OR_NULL(with->hw->mdev.debugfs) ||
	    IS_ERR_OR_NULL(without->hw->mdev.debugfs))
		kunit_skip(test, "no debugfs directory for the devices");

	KUNIT_EXPECT_TRUE(test, odp_debugfs_has(with, "stats"));
	KUNIT_EXPECT_TRUE(test, odp_debugfs_has(with, "odp"));
	KUNIT_EXPECT_TRUE(test, odp_debugfs_has(without, "stats"));
	KUNIT_EXPECT_FALSE(test, odp_debugfs_has(without, "odp"));
}

static int odp_test_init(struct kunit *test)
{
	struct odp_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;
	return 0;
}

static void odp_test_exit(struct kunit *test)
{
	struct odp_test_ctx *ctx = test->priv;
	struct odp_test_dev *d;
	unsigned int i;

	/* Also runs when a case failed or skipped part-way. */
	if (!ctx)
		return;
	if (!IS_ERR_OR_NULL(ctx->mr))
		KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->mr), 0);
	for (i = 0; i < ctx->ndevs; i++) {
		d = &ctx->devs[i];
		if (d->pd.pdn)
			mrc_pd_fini(&d->pd);
		fake_hw_unregister(d->hw);
	}
}

static struct kunit_case odp_test_cases[] = {
	KUNIT_CASE_PARAM(mrc_reg_user_mr_odp_refused, odp_refusal_gen_params),
	KUNIT_CASE(mrc_register_device_odp_needs_sync_mkey),
	KUNIT_CASE(mrc_odp_fault_not_odp_key),
	KUNIT_CASE(mrc_register_device_odp_debugfs),
	{}
};

static struct kunit_suite odp_test_suite = {
	.name = "mrcore_odp",
	.init = odp_test_init,
	.exit = odp_test_exit,
	.test_cases = odp_test_cases,
};

kunit_test_suite(odp_test_suite);
