// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for requested keys and asynchronous registration against
 * the fake backend.
 *
 * mrcore_keys: on every registration path (DMA, physical, sg, fast-reg,
 * SG_GAPS, FMR, indirect, memory window) a requested key is the key the
 * object gets and the context in device memory carries; a second request
 * of its index is -ENOKEY; bad keys are -EINVAL with nothing written; the
 * key is free again after the object is freed and after a failure past
 * the key step (injected or by the backend). User MRs cannot pin in a
 * KUnit thread (no mm): their key checks, which come first, are covered.
 *
 * mrcore_reg_async: mrc_reg_mr_async() completes once with an MR equal to
 * the synchronous one, reports a backend failure through the completion,
 * refuses bad arguments synchronously without a completion, copies the
 * caller's ranges, and mrc_reg_async_flush(), mrc_reg_async_flush_dev()
 * and mrc_pd_fini() wait for completions still running.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <rdma/mrcore_fmr.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

#define LW		MRC_ACCESS_LOCAL_WRITE
#define RR		MRC_ACCESS_REMOTE_READ
#define RW		MRC_ACCESS_REMOTE_WRITE
#define LRW		(LW | RR | RW)

/* The key the cases ask for: an index the cyclic allocator reaches late. */
#define KEYS_INDEX	40
#define KEYS_VARIANT	0x5a
#define KEYS_KEY	mrc_make_key(KEYS_INDEX, KEYS_VARIANT)

#define KEYS_IOVA	0x40000ULL
#define KEYS_LEN	0x4000ULL
#define KEYS_ADDR	0x1000000ULL

enum keys_path {
	PATH_DMA,
	PATH_PHYS,
	PATH_SG,
	PATH_FRMR,
	PATH_SG_GAPS,
	PATH_FMR,
	PATH_INDIRECT,
	PATH_MW,
	PATH_NUM,
};

static const char *const keys_path_names[PATH_NUM] = {
	[PATH_DMA] = "dma",
	[PATH_PHYS] = "phys",
	[PATH_SG] = "sg",
	[PATH_FRMR] = "frmr",
	[PATH_SG_GAPS] = "sg_gaps",
	[PATH_FMR] = "fmr",
	[PATH_INDIRECT] = "indirect",
	[PATH_MW] = "mw",
};

/* The state a path's fresh context is in: fast-reg, FMR, window FREE. */
static const u8 keys_path_state[PATH_NUM] = {
	[PATH_DMA] = MRC_MKEY_VALID,
	[PATH_PHYS] = MRC_MKEY_VALID,
	[PATH_SG] = MRC_MKEY_VALID,
	[PATH_FRMR] = MRC_MKEY_FREE,
	[PATH_SG_GAPS] = MRC_MKEY_FREE,
	[PATH_FMR] = MRC_MKEY_FREE,
	[PATH_INDIRECT] = MRC_MKEY_VALID,
	[PATH_MW] = MRC_MKEY_FREE,
};

static const struct mrc_fmr_attr keys_fmr_attr = {
	.max_pages = 4,
	.max_maps = 8,
	.page_shift = PAGE_SHIFT,
};

/*
 * How long a case waits for a completion, and a held completion for its
 * release: a failure's bound only, as each wait ends when its event comes.
 */
#define KEYS_WAIT_MS	60000
/*
 * How long after the flush call a held completion is let go: time for a
 * flush that does not wait to return early and be caught. A flush that
 * waits passes whatever this is.
 */
#define KEYS_RELEASE_MS	200

static const struct mrc_phys_buf keys_buf = {
	.addr = KEYS_ADDR,
	.size = KEYS_LEN,
};

/**
 * struct keys_done - what the completions of a case saw
 * @calls: completions run
 * @err: the last one's error
 * @mr: the last one's MR
 * @key: the last MR's key
 * @hold: each completion waits for @release before it records anything
 * @held_out: a held completion was not let go within KEYS_WAIT_MS
 * @dereg: each completion frees its MR itself
 * @done: completed by every completion
 * @release: lets held completions go
 * @releaser: completes @release, from keys_release_later()
 */
struct keys_done {
	atomic_t calls;
	int err;
	struct mrc_mr *mr;
	u32 key;
	bool hold;
	bool held_out;
	bool dereg;
	struct completion done;
	struct completion release;
	struct delayed_work releaser;
};

struct keys_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	struct mrc_pd pd;
	struct mrc_mr *base;		/* what indirect keys name */
	struct sg_table sgt;
	struct scatterlist sgl;
	struct mrc_mr *mr[2];		/* freed by .exit */
	struct mrc_mw *mw[2];		/* freed by .exit */
	struct keys_done d;
	int mkeys0;
};

static void keys_path_desc(const enum keys_path *p, char *desc)
{
	strscpy(desc, keys_path_names[*p], KUNIT_PARAM_DESC_SIZE);
}

static const enum keys_path keys_paths[] = {
	PATH_DMA, PATH_PHYS, PATH_SG, PATH_FRMR, PATH_SG_GAPS, PATH_FMR,
	PATH_INDIRECT, PATH_MW,
};

KUNIT_ARRAY_PARAM(keys_path, keys_paths, keys_path_desc);

/* The MR kinds mrc_reg_mr_async() takes here (no window, no user MR). */
static const enum keys_path keys_mr_paths[] = {
	PATH_DMA, PATH_PHYS, PATH_SG, PATH_FRMR, PATH_SG_GAPS, PATH_FMR,
	PATH_INDIRECT,
};

KUNIT_ARRAY_PARAM(keys_mr_path, keys_mr_paths, keys_path_desc);

/* The attr of an MR path with @key. */
static void keys_attr(struct kunit *test, enum keys_path path, u32 key,
		      struct mrc_reg_attr *attr)
{
	struct keys_test_ctx *ctx = test->priv;
	static const struct mrc_reg_attr dflt = {
		.access = LRW,
		.iova = KEYS_IOVA,
		.length = KEYS_LEN,
	};

	*attr = dflt;
	attr->key = key;
	switch (path) {
	case PATH_DMA:
		attr->type = MRC_MR_DMA;
		break;
	case PATH_PHYS:
		attr->type = MRC_MR_PHYS;
		attr->phys.bufs = &keys_buf;
		attr->phys.nbufs = 1;
		break;
	case PATH_SG:
		attr->type = MRC_MR_SG;
		attr->sgt = &ctx->sgt;
		break;
	case PATH_FRMR:
	case PATH_SG_GAPS:
		attr->type = MRC_MR_FAST_REG;
		attr->access = 0;
		attr->frmr.max_entries = 4;
		attr->frmr.sg_gaps = path == PATH_SG_GAPS;
		break;
	case PATH_FMR:
		attr->type = MRC_MR_FMR;
		attr->fmr = &keys_fmr_attr;
		break;
	case PATH_INDIRECT:
		attr->type = MRC_MR_INDIRECT;
		attr->access = LW | RR;
		attr->indirect.nranges = 1;
		break;
	default:
		KUNIT_FAIL(test, "no attr for path %d", path);
	}
}

/*
 * Register on @path with @key into slot @slot of the case; the key it
 * got, or the negative errno.
 */
static int keys_reg(struct kunit *test, enum keys_path path, u32 key,
		    unsigned int slot)
{
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_key_range range = {
		.key = ctx->base->key,
		.addr = KEYS_IOVA,
		.length = KEYS_LEN,
	};
	struct mrc_reg_attr attr;
	struct mrc_mr *mr;
	struct mrc_mw *mw;

	if (path == PATH_MW) {
		mw = mrc_alloc_mw_key(&ctx->pd, MRC_MW_TYPE_1, key);
		if (IS_ERR(mw))
			return PTR_ERR(mw);
		ctx->mw[slot] = mw;
		return mrc_mw_rkey(mw);
	}

	keys_attr(test, path, key, &attr);
	if (path == PATH_INDIRECT)
		attr.indirect.ranges = &range;
	mr = mrc_reg_mr(&ctx->pd, &attr);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	ctx->mr[slot] = mr;
	return mr->key;
}

static void keys_free(struct kunit *test, enum keys_path path,
		      unsigned int slot)
{
	struct keys_test_ctx *ctx = test->priv;

	if (path == PATH_MW) {
		KUNIT_EXPECT_EQ(test, mrc_dealloc_mw(ctx->mw[slot]), 0);
		ctx->mw[slot] = NULL;
		return;
	}
	KUNIT_EXPECT_EQ(test, mrc_dereg_any(ctx->mr[slot]), 0);
	ctx->mr[slot] = NULL;
}

/* Keys and translation space are back to what init left. */
static bool assert_baseline(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;
	int mkeys = atomic_read(&ctx->mdev->num_mkeys);

	if (mkeys == ctx->mkeys0)
		return true;
	KUNIT_FAIL(test, "keys live: %d, expected %d", mkeys, ctx->mkeys0);
	return false;
}

/* ---- mrcore_keys ---- */

static void mrc_reg_mr_requested_key_exact(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;
	const struct mrc_mkey_ctx *c;
	enum mrc_mkey_kind kind;
	void *owner;

	/* Before: KEYS_INDEX is free. After: the object holds KEYS_KEY. */
	KUNIT_ASSERT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), (int)KEYS_KEY);

	/* Device memory: the slot's context carries the exact key. */
	c = fake_hw_ctx(ctx->hw, KEYS_KEY);
	KUNIT_EXPECT_EQ(test, c->key, KEYS_KEY);
	KUNIT_EXPECT_EQ(test, c->state, keys_path_state[*p]);
	KUNIT_EXPECT_EQ(test, c->pdn, ctx->pd.pdn);
	KUNIT_EXPECT_EQ(test, ctx->hw->last_index[FAKE_HW_WRITE_MKEY],
			(u32)KEYS_INDEX);

	/* mrcore finds the object by the key, index and variant. */
	rcu_read_lock();
	owner = mrc_mkey_find(ctx->mdev, KEYS_KEY, &kind);
	rcu_read_unlock();
	KUNIT_EXPECT_PTR_EQ(test, owner, *p == PATH_MW ? (void *)ctx->mw[0] :
						       (void *)ctx->mr[0]);
	rcu_read_lock();
	owner = mrc_mkey_find(ctx->mdev, KEYS_KEY + 1, &kind);
	rcu_read_unlock();
	KUNIT_EXPECT_NULL(test, owner);
	keys_free(test, *p, 0);
}

static void mrc_reg_mr_requested_key_taken(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;
	unsigned int writes;
	int mkeys;

	KUNIT_ASSERT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), (int)KEYS_KEY);
	writes = ctx->hw->calls[FAKE_HW_WRITE_MKEY];
	mkeys = atomic_read(&ctx->mdev->num_mkeys);

	/* The same key, and its index with another variant: in use. */
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 1), -ENOKEY);
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p,
				       mrc_make_key(KEYS_INDEX, 1), 1),
			-ENOKEY);

	/* After: nothing written, nothing allocated, the holder intact. */
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_WRITE_MKEY], writes);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), mkeys);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, KEYS_KEY)->key, KEYS_KEY);
	keys_free(test, *p, 0);
}

static void mrc_reg_mr_requested_key_bad(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;
	u32 dma = ctx->mdev->local_dma_lkey;
	unsigned int writes = ctx->hw->calls[FAKE_HW_WRITE_MKEY];

	/* Index 0, past the contexts, the local DMA key (any variant). */
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_VARIANT, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p,
				       mrc_make_key(ctx->mdev->caps.max_mkeys,
						    1), 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, dma, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, dma + 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, U32_MAX, 0), -EINVAL);

	/* Refused before anything was allocated or written. */
	KUNIT_EXPECT_EQ(test, ctx->hw->calls[FAKE_HW_WRITE_MKEY], writes);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_mr_requested_key_reusable(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;

	KUNIT_ASSERT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), (int)KEYS_KEY);
	keys_free(test, *p, 0);
	/* The slot went INVALID on the device. */
	KUNIT_EXPECT_EQ(test, ctx->hw->last_index[FAKE_HW_INVALIDATE_MKEY],
			(u32)KEYS_INDEX);

	/* After the free the same key is granted again. */
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), (int)KEYS_KEY);
	keys_free(test, *p, 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_mr_requested_key_injected_failure(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;

	/* Before: write_mkey, the last stage after the key, fails once. */
	atomic_set(&ctx->mdev->inject,
		   1 << MRC_INJECT_LEFT_SHIFT | (MRC_STAGE_WRITE_MKEY + 1));
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->inject), 0);

	/* After: the key was given back. */
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	KUNIT_EXPECT_EQ(test, mrc_mkey_check_req(ctx->mdev, KEYS_KEY), 0);
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), (int)KEYS_KEY);
	keys_free(test, *p, 0);
}

static void mrc_reg_mr_requested_key_xlt_failure(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;

	/* A DMA MR writes no translation: nothing to fail there. */
	if (*p == PATH_DMA)
		kunit_skip(test, "PA mode has no translation stage");

	atomic_set(&ctx->mdev->inject,
		   1 << MRC_INJECT_LEFT_SHIFT | (MRC_STAGE_XLT_ALLOC + 1));
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), -ENOSPC);

	/* After: no key held, the same key granted at once. */
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), (int)KEYS_KEY);
	keys_free(test, *p, 0);
}

static void mrc_reg_mr_requested_key_backend_failure(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;

	/* Before: the device refuses the next context write. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), -EIO);

	/* After: the key was given back. */
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	KUNIT_EXPECT_EQ(test, keys_reg(test, *p, KEYS_KEY, 0), (int)KEYS_KEY);
	keys_free(test, *p, 0);
}

static void mrc_reg_mr_chosen_key_unchanged(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;
	int key;

	/* Key 0: mrcore chooses a live, valid key, as the old calls did. */
	key = keys_reg(test, *p, 0, 0);
	KUNIT_ASSERT_GT(test, key, 0);
	KUNIT_EXPECT_NE(test, mrc_key_index(key), 0U);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, key)->key, (u32)key);
	keys_free(test, *p, 0);
}

static void mrc_reg_user_mr_requested_key_checked_first(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_reg_attr attr = {
		.type = MRC_MR_USER,
		.access = LW,
		.start = 0x10000,
		.length = SZ_4K,
		.iova = 0x10000,
	};

	/* A KUnit thread has no mm: pinning fails, after the key checks. */
	KUNIT_ASSERT_NULL(test, current->mm);
	attr.key = KEYS_VARIANT;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_mr(&ctx->pd, &attr)), -EINVAL);
	attr.key = ctx->base->key;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_mr(&ctx->pd, &attr)), -ENOKEY);
	attr.key = KEYS_KEY;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_mr(&ctx->pd, &attr)), -EFAULT);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_mr_bad_attr(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_reg_attr attr = { .type = MRC_MR_NUM_TYPES };

	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_mr(&ctx->pd, NULL)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_mr(&ctx->pd, &attr)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_mr(NULL, &attr)), -EINVAL);
	/* A fast-reg MR takes its rights from each REG_MR. */
	keys_attr(test, PATH_FRMR, 0, &attr);
	attr.access = LW;
	KUNIT_EXPECT_EQ(test, PTR_ERR(mrc_reg_mr(&ctx->pd, &attr)), -EINVAL);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void keys_release_fn(struct work_struct *work)
{
	struct keys_done *d = container_of(to_delayed_work(work),
					   struct keys_done, releaser);

	complete_all(&d->release);
}

/* Let the held completions go KEYS_RELEASE_MS from now. */
static void keys_release_later(struct keys_done *d)
{
	schedule_delayed_work(&d->releaser, msecs_to_jiffies(KEYS_RELEASE_MS));
}

static int keys_test_init(struct kunit *test)
{
	struct keys_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;
	init_completion(&ctx->d.done);
	init_completion(&ctx->d.release);
	INIT_DELAYED_WORK(&ctx->d.releaser, keys_release_fn);

	fake_hw_default_caps(&caps);
	caps.flags |= MRC_CAP_KLM;
	ctx->hw = fake_hw_create(test, "mrc-kunit-keys", &caps);
	ctx->mdev = &ctx->hw->mdev;
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &ctx->pd), 0);

	sg_init_table(&ctx->sgl, 1);
	sg_dma_address(&ctx->sgl) = KEYS_ADDR;
	sg_dma_len(&ctx->sgl) = KEYS_LEN;
	ctx->sgt.sgl = &ctx->sgl;
	ctx->sgt.nents = 1;
	ctx->sgt.orig_nents = 1;

	ctx->base = mrc_reg_phys_mr(&ctx->pd, &keys_buf, 1, KEYS_IOVA, LRW);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->base);
	ctx->mkeys0 = atomic_read(&ctx->mdev->num_mkeys);
	return 0;
}

static void keys_test_exit(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;
	unsigned int i;

	/* Also runs when init or a case failed part-way. */
	if (!ctx || !ctx->hw)
		return;
	/* A case that failed before it let its completions go. */
	cancel_delayed_work_sync(&ctx->d.releaser);
	complete_all(&ctx->d.release);
	fake_hw_fail_nth(ctx->hw, FAKE_HW_WRITE_MKEY, 0);
	atomic_set(&ctx->mdev->inject, 0);
	if (ctx->pd.pdn)
		mrc_reg_async_flush(&ctx->pd);
	for (i = 0; i < ARRAY_SIZE(ctx->mw); i++)
		if (!IS_ERR_OR_NULL(ctx->mw[i]))
			KUNIT_EXPECT_EQ(test, mrc_dealloc_mw(ctx->mw[i]), 0);
	for (i = 0; i < ARRAY_SIZE(ctx->mr); i++)
		if (!IS_ERR_OR_NULL(ctx->mr[i]))
			KUNIT_EXPECT_EQ(test, mrc_dereg_any(ctx->mr[i]), 0);
	if (!IS_ERR_OR_NULL(ctx->base))
		KUNIT_EXPECT_EQ(test, mrc_dereg_mr(ctx->base), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mrs), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->xlt_segs_used), 0);
	if (ctx->pd.pdn)
		mrc_pd_fini(&ctx->pd);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case keys_test_cases[] = {
	KUNIT_CASE_PARAM(mrc_reg_mr_requested_key_exact,
			 keys_path_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_mr_requested_key_taken,
			 keys_path_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_mr_requested_key_bad, keys_path_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_mr_requested_key_reusable,
			 keys_path_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_mr_requested_key_injected_failure,
			 keys_path_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_mr_requested_key_xlt_failure,
			 keys_path_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_mr_requested_key_backend_failure,
			 keys_path_gen_params),
	KUNIT_CASE_PARAM(mrc_reg_mr_chosen_key_unchanged,
			 keys_path_gen_params),
	KUNIT_CASE(mrc_reg_user_mr_requested_key_checked_first),
	KUNIT_CASE(mrc_reg_mr_bad_attr),
	{}
};

static struct kunit_suite keys_test_suite = {
	.name = "mrcore_keys",
	.init = keys_test_init,
	.exit = keys_test_exit,
	.test_cases = keys_test_cases,
};

/* ---- mrcore_reg_async ---- */

static void keys_done_cb(void *arg, struct mrc_mr *mr, int err)
{
	struct keys_done *d = arg;

	if (d->hold &&
	    !wait_for_completion_timeout(&d->release,
					 msecs_to_jiffies(KEYS_WAIT_MS)))
		d->held_out = true;
	d->err = err;
	d->mr = mr;
	d->key = mr ? mr->key : 0;
	if (mr && d->dereg) {
		d->err = mrc_dereg_any(mr);
		d->mr = NULL;
	}
	/* Published before the count: a flush sees all of the above. */
	atomic_inc(&d->calls);
	complete(&d->done);
}

/* Wait for one completion. */
static bool keys_wait(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;

	if (wait_for_completion_timeout(&ctx->d.done,
					msecs_to_jiffies(KEYS_WAIT_MS)))
		return true;
	KUNIT_FAIL(test, "no completion within %d ms", KEYS_WAIT_MS);
	return false;
}

static int keys_reg_async(struct kunit *test, enum keys_path path, u32 key)
{
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_key_range range = {
		.key = ctx->base->key,
		.addr = KEYS_IOVA,
		.length = KEYS_LEN,
	};
	struct mrc_reg_attr attr;
	int ret;

	keys_attr(test, path, key, &attr);
	if (path == PATH_INDIRECT)
		attr.indirect.ranges = &range;
	ret = mrc_reg_mr_async(&ctx->pd, &attr, keys_done_cb, &ctx->d);
	/* The ranges were copied: the caller's may change at once. */
	memset(&range, 0xff, sizeof(range));
	return ret;
}

static void mrc_reg_mr_async_matches_sync(struct kunit *test)
{
	const enum keys_path *p = test->param_value;
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_mr *a, *s;

	/* Before: one request with the requested key. */
	KUNIT_ASSERT_EQ(test, keys_reg_async(test, *p, KEYS_KEY), 0);
	KUNIT_ASSERT_TRUE(test, keys_wait(test));
	mrc_reg_async_flush(&ctx->pd);

	/* After: exactly one completion, with the MR under the key. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 1);
	KUNIT_ASSERT_EQ(test, ctx->d.err, 0);
	a = ctx->d.mr;
	ctx->mr[0] = a;
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a);
	KUNIT_EXPECT_EQ(test, a->key, KEYS_KEY);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, KEYS_KEY)->key, KEYS_KEY);

	/* The synchronous registration of the same attr, another key. */
	KUNIT_ASSERT_GT(test, keys_reg(test, *p, 0, 1), 0);
	s = ctx->mr[1];
	KUNIT_EXPECT_EQ(test, a->type, s->type);
	KUNIT_EXPECT_EQ(test, a->access, s->access);
	KUNIT_EXPECT_EQ(test, a->iova, s->iova);
	KUNIT_EXPECT_EQ(test, a->length, s->length);
	KUNIT_EXPECT_EQ(test, a->mode, s->mode);
	KUNIT_EXPECT_EQ(test, a->page_shift, s->page_shift);
	KUNIT_EXPECT_EQ(test, a->nentries, s->nentries);
	KUNIT_EXPECT_EQ(test, a->xlt.size, s->xlt.size);
	KUNIT_EXPECT_EQ(test, fake_hw_ctx(ctx->hw, a->key)->state,
			fake_hw_ctx(ctx->hw, s->key)->state);
	if (*p == PATH_INDIRECT)
		KUNIT_EXPECT_TRUE(test,
				  fake_hw_expect_klm(ctx->hw,
						     fake_hw_ctx(ctx->hw,
								 a->key),
						     0, KEYS_LEN,
						     ctx->base->key,
						     KEYS_IOVA));
	if (*p == PATH_PHYS)
		KUNIT_EXPECT_EQ(test, a->bufs[0].addr, KEYS_ADDR);
}

static void mrc_reg_mr_async_backend_failure(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;

	/* Before: the device refuses the next context write. */
	fake_hw_fail_next(ctx->hw, FAKE_HW_WRITE_MKEY, 1);
	KUNIT_ASSERT_EQ(test, keys_reg_async(test, PATH_PHYS, KEYS_KEY), 0);
	KUNIT_ASSERT_TRUE(test, keys_wait(test));
	mrc_reg_async_flush(&ctx->pd);

	/* After: one completion with the error, no MR, the key free. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 1);
	KUNIT_EXPECT_EQ(test, ctx->d.err, -EIO);
	KUNIT_EXPECT_NULL(test, ctx->d.mr);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
	KUNIT_EXPECT_EQ(test, mrc_mkey_check_req(ctx->mdev, KEYS_KEY), 0);
}

static void mrc_reg_mr_async_injected_failure(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;

	atomic_set(&ctx->mdev->inject,
		   1 << MRC_INJECT_LEFT_SHIFT | (MRC_STAGE_WRITE_XLT + 1));
	KUNIT_ASSERT_EQ(test, keys_reg_async(test, PATH_PHYS, KEYS_KEY), 0);
	KUNIT_ASSERT_TRUE(test, keys_wait(test));
	mrc_reg_async_flush(&ctx->pd);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 1);
	KUNIT_EXPECT_EQ(test, ctx->d.err, -EIO);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_mr_async_checks_synchronous(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_reg_attr attr;

	/* Bad and taken keys, bad rights, no completion: refused now. */
	KUNIT_EXPECT_EQ(test, keys_reg_async(test, PATH_PHYS, KEYS_VARIANT),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, keys_reg_async(test, PATH_PHYS, ctx->base->key),
			-ENOKEY);
	keys_attr(test, PATH_PHYS, 0, &attr);
	attr.access = RW;	/* remote write without local write */
	KUNIT_EXPECT_EQ(test, mrc_reg_mr_async(&ctx->pd, &attr, keys_done_cb,
					       &ctx->d), -EINVAL);
	attr.access = LW;
	attr.phys.nbufs = 0;
	KUNIT_EXPECT_EQ(test, mrc_reg_mr_async(&ctx->pd, &attr, keys_done_cb,
					       &ctx->d), -EINVAL);
	keys_attr(test, PATH_PHYS, 0, &attr);
	KUNIT_EXPECT_EQ(test, mrc_reg_mr_async(&ctx->pd, &attr, NULL, NULL),
			-EINVAL);
	/* An indirect key naming a key that is not live. */
	keys_attr(test, PATH_INDIRECT, 0, &attr);
	attr.indirect.ranges = &(struct mrc_key_range){
		.key = KEYS_KEY, .addr = KEYS_IOVA, .length = 1 };
	KUNIT_EXPECT_EQ(test, mrc_reg_mr_async(&ctx->pd, &attr, keys_done_cb,
					       &ctx->d), -ENOKEY);
	/* User memory without an mm: refused in the call. */
	attr = (struct mrc_reg_attr){ .type = MRC_MR_USER, .access = LW,
				      .start = 0x10000, .length = SZ_4K,
				      .iova = 0x10000 };
	KUNIT_EXPECT_EQ(test, mrc_reg_mr_async(&ctx->pd, &attr, keys_done_cb,
					       &ctx->d), -EFAULT);

	/* After: nothing pending, and no completion ever ran. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->pd.reg_pending), 0);
	mrc_reg_async_flush(&ctx->pd);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_async_flush_waits(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_phys_buf bufs[2] = { keys_buf, keys_buf };
	struct mrc_reg_attr attr;

	/* Before: a held completion that frees its MR itself. */
	ctx->d.hold = true;
	ctx->d.dereg = true;
	keys_attr(test, PATH_PHYS, KEYS_KEY, &attr);
	bufs[1].addr += KEYS_LEN;
	attr.phys.bufs = bufs;
	attr.phys.nbufs = 2;
	KUNIT_ASSERT_EQ(test, mrc_reg_mr_async(&ctx->pd, &attr, keys_done_cb,
					       &ctx->d), 0);
	/* The caller's ranges may go away on return: they were copied. */
	memset(bufs, 0, sizeof(bufs));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 0);

	/* After the flush: the completion ran, its MR was the right one. */
	keys_release_later(&ctx->d);
	mrc_reg_async_flush(&ctx->pd);
	KUNIT_EXPECT_FALSE(test, ctx->d.held_out);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 1);
	KUNIT_EXPECT_EQ(test, ctx->d.err, 0);
	KUNIT_EXPECT_EQ(test, ctx->d.key, KEYS_KEY);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->pd.reg_pending), 0);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_async_flush_dev_waits(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;

	/* Before: a held completion, so the request is certainly pending. */
	ctx->d.hold = true;
	ctx->d.dereg = true;
	KUNIT_ASSERT_EQ(test, keys_reg_async(test, PATH_DMA, KEYS_KEY), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->reg_pending), 1);

	keys_release_later(&ctx->d);
	mrc_reg_async_flush_dev(ctx->mdev);
	KUNIT_EXPECT_FALSE(test, ctx->d.held_out);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 1);
	KUNIT_EXPECT_EQ(test, ctx->d.key, KEYS_KEY);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->reg_pending), 0);
}

static void mrc_pd_fini_waits_for_async(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;
	struct mrc_reg_attr attr;
	struct mrc_pd pd2;

	/* Before: a request of a second PD with a held completion. */
	KUNIT_ASSERT_EQ(test, mrc_pd_init(ctx->mdev, &pd2), 0);
	ctx->d.hold = true;
	ctx->d.dereg = true;
	keys_attr(test, PATH_FRMR, KEYS_KEY, &attr);
	KUNIT_ASSERT_EQ(test, mrc_reg_mr_async(&pd2, &attr, keys_done_cb,
					       &ctx->d), 0);

	/* Releasing the PD waits for the completion, which ran fully. */
	keys_release_later(&ctx->d);
	mrc_pd_fini(&pd2);
	KUNIT_EXPECT_FALSE(test, ctx->d.held_out);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 1);
	KUNIT_EXPECT_EQ(test, ctx->d.err, 0);
	KUNIT_EXPECT_EQ(test, ctx->d.key, KEYS_KEY);
	KUNIT_EXPECT_EQ(test, pd2.pdn, 0U);
	KUNIT_EXPECT_TRUE(test, assert_baseline(test));
}

static void mrc_reg_mr_async_key_race(struct kunit *test)
{
	struct keys_test_ctx *ctx = test->priv;

	/* Before: a request whose key is taken before its worker runs. */
	KUNIT_ASSERT_EQ(test, keys_reg_async(test, PATH_FMR, KEYS_KEY), 0);
	/* Either this or the worker gets the key, never both. */
	keys_reg(test, PATH_DMA, KEYS_KEY, 1);
	KUNIT_ASSERT_TRUE(test, keys_wait(test));
	mrc_reg_async_flush(&ctx->pd);

	if (ctx->mr[1]) {
		KUNIT_EXPECT_EQ(test, ctx->d.err, -ENOKEY);
		KUNIT_EXPECT_NULL(test, ctx->d.mr);
	} else {
		KUNIT_EXPECT_EQ(test, ctx->d.err, 0);
		ctx->mr[0] = ctx->d.mr;
		KUNIT_EXPECT_EQ(test, ctx->d.key, KEYS_KEY);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->d.calls), 1);
}

static struct kunit_case async_test_cases[] = {
	KUNIT_CASE_PARAM(mrc_reg_mr_async_matches_sync,
			 keys_mr_path_gen_params),
	KUNIT_CASE(mrc_reg_mr_async_backend_failure),
	KUNIT_CASE(mrc_reg_mr_async_injected_failure),
	KUNIT_CASE(mrc_reg_mr_async_checks_synchronous),
	KUNIT_CASE(mrc_reg_async_flush_waits),
	KUNIT_CASE(mrc_reg_async_flush_dev_waits),
	KUNIT_CASE(mrc_pd_fini_waits_for_async),
	KUNIT_CASE(mrc_reg_mr_async_key_race),
	{}
};

static struct kunit_suite async_test_suite = {
	.name = "mrcore_reg_async",
	.init = keys_test_init,
	.exit = keys_test_exit,
	.test_cases = async_test_cases,
};

kunit_test_suites(&keys_test_suite, &async_test_suite);
