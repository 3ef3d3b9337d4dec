// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for mrcore memory keys: index range, requested keys, variant
 * rotation, stale keys, exhaustion, long-run and concurrent uniqueness.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#include "fake_hw.h"
#include "../drivers/mrcore/mrcore_loc.h"

/* Enough cycles for every index to wrap its 8-bit variant many times. */
#define MKEY_CYCLES		(BIT(16) + 4096)
#define MKEY_CYCLES_LIVE	40	/* of 62 usable slots */
#define MKEY_REUSE_ROUNDS	300
#define MKEY_RACE_THREADS	4
#define MKEY_RACE_ITERS		5000
#define MKEY_RACE_LIVE		8

struct mkey_test_ctx {
	struct fake_hw *hw;
	struct mrc_device *mdev;
	u32 *keys;		/* max_mkeys entries */
	unsigned int num_keys;	/* keys[0 .. num_keys - 1] are live */
	int owners[2];		/* distinct owner cookies */
};

static u32 mkey_test_slots(struct mkey_test_ctx *ctx)
{
	return ctx->mdev->caps.max_mkeys;
}

/* Allocates keys (owner &owners[0]) until refused; returns the error. */
static int mkey_test_fill(struct kunit *test, struct mkey_test_ctx *ctx)
{
	int ret;

	do {
		KUNIT_ASSERT_LT(test, ctx->num_keys, mkey_test_slots(ctx));
		ret = mrc_mkey_alloc(ctx->mdev, &ctx->owners[0],
				     &ctx->keys[ctx->num_keys]);
		if (!ret)
			ctx->num_keys++;
	} while (!ret);
	return ret;
}

static void mkey_test_free_all(struct mkey_test_ctx *ctx)
{
	while (ctx->num_keys)
		mrc_mkey_free(ctx->mdev, ctx->keys[--ctx->num_keys]);
}

static void *mkey_test_owner(struct mrc_device *mdev, u32 key)
{
	void *owner;

	rcu_read_lock();
	owner = mrc_mkey_owner(mdev, key);
	rcu_read_unlock();
	return owner;
}

static void mrc_mkey_alloc_index_in_range(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	unsigned long *seen;
	unsigned int i;

	seen = kunit_kcalloc(test, BITS_TO_LONGS(mkey_test_slots(ctx)),
			     sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);
	__set_bit(mrc_key_index(ctx->mdev->local_dma_lkey), seen);

	mkey_test_fill(test, ctx);

	/* After: every slot but 0 and the local DMA key's, each once. */
	KUNIT_EXPECT_EQ(test, ctx->num_keys, mkey_test_slots(ctx) - 2);
	for (i = 0; i < ctx->num_keys; i++) {
		u32 index = mrc_key_index(ctx->keys[i]);

		KUNIT_ASSERT_NE(test, index, 0U);
		KUNIT_ASSERT_LT(test, index, mkey_test_slots(ctx));
		KUNIT_EXPECT_FALSE_MSG(test, __test_and_set_bit(index, seen),
				       "index %u handed out twice", index);
	}
	mkey_test_free_all(ctx);
}

/* Exhaustion is -ENOSPC (the xarray's -EBUSY is translated). */
static void mrc_mkey_alloc_exhausted(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 freed, key;

	KUNIT_EXPECT_EQ(test, mkey_test_fill(test, ctx), -ENOSPC);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys),
			(int)mkey_test_slots(ctx) - 1);
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc(ctx->mdev, NULL, &key), -ENOSPC);

	/* Freeing one key makes its index, and only it, available. */
	freed = ctx->keys[--ctx->num_keys];
	mrc_mkey_free(ctx->mdev, freed);
	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, NULL, &key), 0);
	ctx->keys[ctx->num_keys++] = key;
	KUNIT_EXPECT_EQ(test, mrc_key_index(key), mrc_key_index(freed));
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc(ctx->mdev, NULL, &key), -ENOSPC);
	mkey_test_free_all(ctx);
}

static void mrc_mkey_alloc_variant_changes_on_reuse(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	unsigned int round;
	u32 old, new;

	/* Before: one free index, so every allocation reuses it. */
	mkey_test_fill(test, ctx);
	old = ctx->keys[--ctx->num_keys];

	for (round = 0; round < MKEY_REUSE_ROUNDS; round++) {
		mrc_mkey_free(ctx->mdev, old);
		KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, NULL, &new), 0);
		KUNIT_ASSERT_EQ(test, mrc_key_index(new), mrc_key_index(old));
		KUNIT_ASSERT_NE_MSG(test, mrc_key_variant(new),
				    mrc_key_variant(old),
				    "round %u: key %#x reused as is", round,
				    old);
		old = new;
	}
	mrc_mkey_free(ctx->mdev, old);
	mkey_test_free_all(ctx);
}

static void mrc_mkey_alloc_at_exact(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 key = mrc_make_key(mkey_test_slots(ctx) - 1, 0x5a);

	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc_at(ctx->mdev, &ctx->owners[1],
						key), 0);

	/* After: that very key is live and no neighbouring variant is. */
	KUNIT_EXPECT_PTR_EQ(test, mkey_test_owner(ctx->mdev, key),
			    (void *)&ctx->owners[1]);
	KUNIT_EXPECT_NULL(test, mkey_test_owner(ctx->mdev, key + 1));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 2);
	mrc_mkey_free(ctx->mdev, key);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 1);
}

static void mrc_mkey_alloc_at_taken(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 key;

	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, &ctx->owners[0],
					     &key), 0);

	/* The index is taken whatever variant is asked for. */
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc_at(ctx->mdev, &ctx->owners[1],
						key), -ENOKEY);
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc_at(ctx->mdev, &ctx->owners[1],
						key ^ 0x80), -ENOKEY);
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc_at(ctx->mdev, NULL,
						ctx->mdev->local_dma_lkey),
			-ENOKEY);

	/* After: the holder is undisturbed. */
	KUNIT_EXPECT_PTR_EQ(test, mkey_test_owner(ctx->mdev, key),
			    (void *)&ctx->owners[0]);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 2);
	mrc_mkey_free(ctx->mdev, key);
}

static void mrc_mkey_alloc_at_out_of_range(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	const u32 bad[] = {
		mrc_make_key(0, 0),
		mrc_make_key(0, 0x11),
		mrc_make_key(mkey_test_slots(ctx), 0),
		mrc_make_key(mkey_test_slots(ctx) + 1, 0x22),
		U32_MAX,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, mrc_mkey_alloc_at(ctx->mdev, NULL,
							    bad[i]),
				    -EKEYREJECTED, "key %#x", bad[i]);

	/* After: nothing allocated. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 1);
}

static void mrc_mkey_alloc_null_owner_reserves(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 key;

	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, NULL, &key), 0);

	/* Reserved: not findable, but not available either. */
	KUNIT_EXPECT_NULL(test, mkey_test_owner(ctx->mdev, key));
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc_at(ctx->mdev, NULL, key), -ENOKEY);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 2);

	mrc_mkey_free(ctx->mdev, key);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 1);
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc_at(ctx->mdev, NULL, key), 0);
	mrc_mkey_free(ctx->mdev, key);
}

/* A caller bug: rejected, counted and logged, never a warning. */
static void mrc_mkey_free_stale_key(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 stale, live;

	/* Before: a freed key whose index has been given out again. */
	mkey_test_fill(test, ctx);
	stale = ctx->keys[--ctx->num_keys];
	mrc_mkey_free(ctx->mdev, stale);
	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, &ctx->owners[1],
					     &live), 0);
	KUNIT_ASSERT_EQ(test, mrc_key_index(live), mrc_key_index(stale));

	fake_hw_expect_misuse(ctx->hw, 1);
	mrc_mkey_free(ctx->mdev, stale);

	/* After: caught; the live key is untouched and its index taken. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->mdev->stats_misuse), 1LL);
	KUNIT_EXPECT_PTR_EQ(test, mkey_test_owner(ctx->mdev, live),
			    (void *)&ctx->owners[1]);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys),
			(int)mkey_test_slots(ctx) - 1);
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc(ctx->mdev, NULL, &stale), -ENOSPC);
	mrc_mkey_free(ctx->mdev, live);
	mkey_test_free_all(ctx);
}

static void mrc_mkey_free_double_free(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 key;

	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, NULL, &key), 0);
	mrc_mkey_free(ctx->mdev, key);

	fake_hw_expect_misuse(ctx->hw, 1);
	mrc_mkey_free(ctx->mdev, key);

	/* After: caught, freed once; the local DMA key is the only key. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->mdev->stats_misuse), 1LL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 1);
	KUNIT_EXPECT_EQ(test, mrc_mkey_alloc_at(ctx->mdev, NULL,
						ctx->mdev->local_dma_lkey),
			-ENOKEY);
}

static void mrc_mkey_owner_stale_variant(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 key, index, older, newer;
	u8 variant;

	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, &ctx->owners[0],
					     &key), 0);
	index = mrc_key_index(key);
	variant = mrc_key_variant(key);
	older = mrc_make_key(index, variant - 1);
	newer = mrc_make_key(index, variant + 1);

	KUNIT_EXPECT_PTR_EQ(test, mkey_test_owner(ctx->mdev, key),
			    (void *)&ctx->owners[0]);
	/* The right index with any other variant finds nothing. */
	KUNIT_EXPECT_NULL(test, mkey_test_owner(ctx->mdev, older));
	KUNIT_EXPECT_NULL(test, mkey_test_owner(ctx->mdev, newer));
	KUNIT_EXPECT_NULL(test, mkey_test_owner(ctx->mdev, 0));

	/* After the free, the key itself finds nothing. */
	mrc_mkey_free(ctx->mdev, key);
	KUNIT_EXPECT_NULL(test, mkey_test_owner(ctx->mdev, key));
}

static void mrc_mkey_find_kinds(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	enum mrc_mkey_kind kind = MRC_MKEY_KIND_MW;
	u32 mr, mw, moved;

	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc(ctx->mdev, &ctx->owners[0], &mr),
			0);
	KUNIT_ASSERT_EQ(test, mrc_mkey_alloc_kind(ctx->mdev, &ctx->owners[1],
						  MRC_MKEY_KIND_MW, &mw), 0);

	/* Each key finds its owner and kind; only the MR is an MR owner. */
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_find(ctx->mdev, mr, &kind),
			    (void *)&ctx->owners[0]);
	KUNIT_EXPECT_EQ(test, kind, MRC_MKEY_KIND_MR);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_find(ctx->mdev, mw, &kind),
			    (void *)&ctx->owners[1]);
	KUNIT_EXPECT_EQ(test, kind, MRC_MKEY_KIND_MW);
	KUNIT_EXPECT_PTR_EQ(test, mkey_test_owner(ctx->mdev, mr),
			    (void *)&ctx->owners[0]);
	KUNIT_EXPECT_NULL(test, mkey_test_owner(ctx->mdev, mw));

	/* A moved variant: the index still finds it, the old key does not. */
	moved = mrc_make_key(mrc_key_index(mw), mrc_key_variant(mw) + 5);
	mrc_mkey_set_variant(ctx->mdev, moved);
	KUNIT_EXPECT_NULL(test, mrc_mkey_find(ctx->mdev, mw, &kind));
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_find(ctx->mdev, moved, &kind),
			    (void *)&ctx->owners[1]);
	KUNIT_EXPECT_PTR_EQ(test, mrc_mkey_find_index(ctx->mdev,
						      mrc_key_index(mw),
						      &kind),
			    (void *)&ctx->owners[1]);
	KUNIT_EXPECT_NULL(test, mrc_mkey_find_index(ctx->mdev, 0, &kind));

	mrc_mkey_free(ctx->mdev, moved);
	mrc_mkey_free(ctx->mdev, mr);
	KUNIT_EXPECT_NULL(test, mrc_mkey_find_index(ctx->mdev,
						    mrc_key_index(mw), &kind));
}

/* Shadow state of the long-run test; the keys live in ctx->keys. */
struct mkey_cycle {
	unsigned long *live;	/* indices live in the shadow */
	u16 *last;		/* per index, last variant; U16_MAX = none */
	struct rnd_state rnd;
};

/* @key is in range, not live, and differs from its index's last key. */
static bool assert_key_fresh(struct kunit *test, struct mkey_test_ctx *ctx,
			     struct mkey_cycle *c, u32 key, unsigned int cycle)
{
	u32 index = mrc_key_index(key);

	if (!index || index >= mkey_test_slots(ctx)) {
		KUNIT_FAIL(test, "cycle %u: key %#x out of range", cycle, key);
		return false;
	}
	if (test_bit(index, c->live)) {
		KUNIT_FAIL(test, "cycle %u: key %#x has a live index", cycle,
			   key);
		return false;
	}
	if (c->last[index] == mrc_key_variant(key)) {
		KUNIT_FAIL(test, "cycle %u: key %#x repeats its last variant",
			   cycle, key);
		return false;
	}
	return true;
}

/* Allocates a key, checks it is fresh and adds it to the shadow. */
static bool mkey_cycle_take(struct kunit *test, struct mkey_test_ctx *ctx,
			    struct mkey_cycle *c, unsigned int cycle)
{
	u32 key;
	int ret;

	ret = mrc_mkey_alloc(ctx->mdev, ctx, &key);
	if (ret) {
		KUNIT_FAIL(test, "cycle %u: alloc failed: %d", cycle, ret);
		return false;
	}
	ctx->keys[ctx->num_keys++] = key;
	if (!assert_key_fresh(test, ctx, c, key, cycle))
		return false;
	__set_bit(mrc_key_index(key), c->live);
	c->last[mrc_key_index(key)] = mrc_key_variant(key);
	return true;
}

/* Frees the key in @slot; a freed key must no longer be findable. */
static bool mkey_cycle_drop(struct kunit *test, struct mkey_test_ctx *ctx,
			    struct mkey_cycle *c, unsigned int slot)
{
	u32 key = ctx->keys[slot];

	ctx->keys[slot] = ctx->keys[--ctx->num_keys];
	__clear_bit(mrc_key_index(key), c->live);
	mrc_mkey_free(ctx->mdev, key);
	if (mkey_test_owner(ctx->mdev, key)) {
		KUNIT_FAIL(test, "freed key %#x still has an owner", key);
		return false;
	}
	return true;
}

static void mrc_mkey_alloc_many_cycles_unique(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	u32 slots = mkey_test_slots(ctx);
	struct mkey_cycle *c;
	unsigned int i, slot;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	c->live = kunit_kcalloc(test, BITS_TO_LONGS(slots),
				sizeof(unsigned long), GFP_KERNEL);
	c->last = kunit_kmalloc_array(test, slots, sizeof(*c->last),
				      GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c->live);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c->last);
	memset(c->last, 0xff, slots * sizeof(*c->last));
	prandom_seed_state(&c->rnd, fake_hw_random_seed());
	kunit_info(test, "random_seed %u\n", fake_hw_random_seed());

	/* Before: a standing set of live keys. */
	while (ctx->num_keys < MKEY_CYCLES_LIVE)
		KUNIT_ASSERT_TRUE(test, mkey_cycle_take(test, ctx, c, 0));

	/* Each cycle: allocate, check, then free a random live key. */
	for (i = 0; i < MKEY_CYCLES; i++) {
		if (!mkey_cycle_take(test, ctx, c, i))
			break;
		slot = prandom_u32_state(&c->rnd) % ctx->num_keys;
		if (!mkey_cycle_drop(test, ctx, c, slot))
			break;
	}

	while (ctx->num_keys)
		mkey_cycle_drop(test, ctx, c, ctx->num_keys - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 1);
}

struct mkey_race;

/* One allocating thread; only it touches its fields until @done. */
struct mkey_worker {
	struct mkey_race *race;
	struct task_struct *task;
	struct completion done;
	u32 seed;
	u32 keys[MKEY_RACE_LIVE];
	unsigned int live;
	unsigned int allocs;
	unsigned int errors;
};

struct mkey_race {
	struct mrc_device *mdev;
	struct completion go;
	spinlock_t lock;	/* protects @held */
	unsigned long *held;	/* indices some worker holds a key for */
	struct mkey_worker workers[MKEY_RACE_THREADS];
};

static void mkey_worker_alloc(struct mkey_worker *w)
{
	struct mkey_race *race = w->race;
	bool dup;
	u32 key;

	if (mrc_mkey_alloc(race->mdev, w, &key)) {
		w->errors++;
		return;
	}
	spin_lock(&race->lock);
	dup = __test_and_set_bit(mrc_key_index(key), race->held);
	spin_unlock(&race->lock);
	/* A duplicate index, or a key that finds someone else. */
	if (dup || mkey_test_owner(race->mdev, key) != w)
		w->errors++;
	w->keys[w->live++] = key;
	w->allocs++;
}

/* Clears the shadow bit before the free, so the index may be reused. */
static void mkey_worker_free(struct mkey_worker *w, unsigned int slot)
{
	struct mkey_race *race = w->race;
	u32 key = w->keys[slot];

	if (mkey_test_owner(race->mdev, key) != w)
		w->errors++;
	spin_lock(&race->lock);
	__clear_bit(mrc_key_index(key), race->held);
	spin_unlock(&race->lock);
	mrc_mkey_free(race->mdev, key);
	w->keys[slot] = w->keys[--w->live];
}

static int mkey_worker_fn(void *data)
{
	struct mkey_worker *w = data;
	struct rnd_state rnd;
	unsigned int i;

	prandom_seed_state(&rnd, w->seed);
	wait_for_completion(&w->race->go);
	for (i = 0; i < MKEY_RACE_ITERS; i++) {
		if (w->live < MKEY_RACE_LIVE &&
		    (!w->live || prandom_u32_state(&rnd) & 1))
			mkey_worker_alloc(w);
		else
			mkey_worker_free(w, prandom_u32_state(&rnd) % w->live);
		cond_resched();
	}
	while (w->live)
		mkey_worker_free(w, w->live - 1);
	complete(&w->done);

	fake_hw_wait_for_stop();
	return 0;
}

/* Starts the workers; returns how many started. */
static unsigned int mkey_race_start(struct mkey_race *race)
{
	unsigned int i;

	for (i = 0; i < MKEY_RACE_THREADS; i++) {
		struct mkey_worker *w = &race->workers[i];

		w->race = race;
		w->seed = fake_hw_random_seed() + i;
		init_completion(&w->done);
		w->task = kthread_run(mkey_worker_fn, w, "mrc_kunit_%u", i);
		if (IS_ERR(w->task))
			break;
	}
	complete_all(&race->go);
	return i;
}

static void mrc_mkey_alloc_concurrent_unique(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;
	unsigned int i, started, errors = 0, allocs = 0;
	struct mkey_race *race;

	race = kunit_kzalloc(test, sizeof(*race), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, race);
	race->held = kunit_kcalloc(test, BITS_TO_LONGS(mkey_test_slots(ctx)),
				   sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, race->held);
	race->mdev = ctx->mdev;
	spin_lock_init(&race->lock);
	init_completion(&race->go);

	started = mkey_race_start(race);
	for (i = 0; i < started; i++) {
		wait_for_completion(&race->workers[i].done);
		kthread_stop(race->workers[i].task);
		errors += race->workers[i].errors;
		allocs += race->workers[i].allocs;
	}

	/* After: all ran, no key was ever shared, everything came back. */
	KUNIT_EXPECT_EQ(test, started, MKEY_RACE_THREADS);
	KUNIT_EXPECT_EQ(test, errors, 0U);
	KUNIT_EXPECT_GE(test, allocs, started * MKEY_RACE_ITERS / 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mdev->num_mkeys), 1);
}

static int mkey_test_init(struct kunit *test)
{
	struct mkey_test_ctx *ctx;
	struct mrc_caps caps;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	fake_hw_default_caps(&caps);
	ctx->hw = fake_hw_create(test, "mrc-kunit-mkey", &caps);
	ctx->mdev = &ctx->hw->mdev;
	ctx->keys = kunit_kcalloc(test, caps.max_mkeys, sizeof(*ctx->keys),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->keys);
	KUNIT_ASSERT_EQ(test, fake_hw_register(ctx->hw), 0);
	return 0;
}

static void mkey_test_exit(struct kunit *test)
{
	struct mkey_test_ctx *ctx = test->priv;

	/* Also runs when init failed part-way. */
	if (!ctx || !ctx->hw || !ctx->hw->registered)
		return;
	mkey_test_free_all(ctx);
	fake_hw_unregister(ctx->hw);
}

static struct kunit_case mkey_test_cases[] = {
	KUNIT_CASE(mrc_mkey_alloc_index_in_range),
	KUNIT_CASE(mrc_mkey_alloc_exhausted),
	KUNIT_CASE(mrc_mkey_alloc_variant_changes_on_reuse),
	KUNIT_CASE(mrc_mkey_alloc_at_exact),
	KUNIT_CASE(mrc_mkey_alloc_at_taken),
	KUNIT_CASE(mrc_mkey_alloc_at_out_of_range),
	KUNIT_CASE(mrc_mkey_alloc_null_owner_reserves),
	KUNIT_CASE(mrc_mkey_free_stale_key),
	KUNIT_CASE(mrc_mkey_free_double_free),
	KUNIT_CASE(mrc_mkey_owner_stale_variant),
	KUNIT_CASE(mrc_mkey_find_kinds),
	KUNIT_CASE(mrc_mkey_alloc_many_cycles_unique),
	KUNIT_CASE(mrc_mkey_alloc_concurrent_unique),
	{}
};

static struct kunit_suite mkey_test_suite = {
	.name = "mrcore_mkey",
	.init = mkey_test_init,
	.exit = mkey_test_exit,
	.test_cases = mkey_test_cases,
};

kunit_test_suite(mkey_test_suite);
