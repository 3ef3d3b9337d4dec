// SPDX-License-Identifier: GPL-2.0
/*
 * A fake mrcore backend for KUnit, and the test module's boilerplate.
 */
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "fake_hw.h"

static unsigned int random_seed = 0x6d72636f;
module_param(random_seed, uint, 0444);
MODULE_PARM_DESC(random_seed, "Seed for the randomised test cases");

/**
 * fake_hw_random_seed - seed for the randomised test cases
 *
 * Return: the random_seed module parameter.
 */
u32 fake_hw_random_seed(void)
{
	return random_seed;
}

/**
 * fake_hw_wait_for_stop - end of a test's worker thread
 *
 * Sleeps until kthread_stop(), so that the test, not the worker, decides
 * when the thread exits and kthread_stop() always finds it.
 */
void fake_hw_wait_for_stop(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

/* Counts and logs the call and says whether this one is to fail. */
static int fake_hw_call(struct fake_hw *hw, enum fake_hw_op op)
{
	if (hw->log_len < FAKE_HW_LOG_MAX)
		hw->log[hw->log_len] = op;
	hw->log_len++;
	hw->calls[op]++;
	if (hw->fail_nth && hw->fail_op == op && hw->calls[op] == hw->fail_nth)
		return hw->fail_err;
	return 0;
}

static bool fake_hw_slot_ok(struct fake_hw *hw, u32 index)
{
	if (index && index < hw->mdev.caps.max_mkeys)
		return true;
	KUNIT_FAIL(hw->test, "%s: mkey slot %u out of range [1, %u)",
		   hw->mdev.name, index, hw->mdev.caps.max_mkeys);
	return false;
}

static void fake_hw_fence(struct mrc_device *mdev)
{
	fake_hw_call(to_fake_hw(mdev), FAKE_HW_FENCE);
}

static int fake_hw_invalidate_mkey(struct mrc_device *mdev, u32 index)
{
	struct fake_hw *hw = to_fake_hw(mdev);
	int ret;

	ret = fake_hw_call(hw, FAKE_HW_INVALIDATE_MKEY);
	if (ret)
		return ret;
	if (!fake_hw_slot_ok(hw, index))
		return -EINVAL;

	hw->last_index[FAKE_HW_INVALIDATE_MKEY] = index;
	hw->mkeys[index].state = MRC_MKEY_INVALID;
	return 0;
}

static int fake_hw_write_mkey(struct mrc_device *mdev, u32 index,
			      const struct mrc_mkey_ctx *ctx)
{
	struct fake_hw *hw = to_fake_hw(mdev);
	int ret;

	ret = fake_hw_call(hw, FAKE_HW_WRITE_MKEY);
	if (ret)
		return ret;
	if (!fake_hw_slot_ok(hw, index))
		return -EINVAL;
	/* A context must carry the key of the slot it is written to. */
	KUNIT_EXPECT_EQ(hw->test, mrc_key_index(ctx->key), index);

	hw->last_index[FAKE_HW_WRITE_MKEY] = index;
	hw->mkeys[index] = *ctx;
	return 0;
}

static int fake_hw_write_xlt(struct mrc_device *mdev, u64 offset,
			     const void *src, size_t len)
{
	struct fake_hw *hw = to_fake_hw(mdev);
	u64 end;
	int ret;

	ret = fake_hw_call(hw, FAKE_HW_WRITE_XLT);
	if (ret)
		return ret;
	if (check_add_overflow(offset, (u64)len, &end) ||
	    end > mdev->caps.xlt_size) {
		KUNIT_FAIL(hw->test, "%s: xlt write [%llu, +%zu) past %llu",
			   mdev->name, offset, len, mdev->caps.xlt_size);
		return -EINVAL;
	}

	memcpy(hw->xlt + offset, src, len);
	return 0;
}

static bool fake_hw_counter_ok(struct fake_hw *hw, u32 counter)
{
	if (counter && counter < hw->mdev.caps.max_counters)
		return true;
	KUNIT_FAIL(hw->test, "%s: counter slot %u out of range [1, %u)",
		   hw->mdev.name, counter, hw->mdev.caps.max_counters);
	return false;
}

static u64 fake_hw_read_counter(struct mrc_device *mdev, u32 counter)
{
	struct fake_hw *hw = to_fake_hw(mdev);

	fake_hw_call(hw, FAKE_HW_READ_COUNTER);
	if (!fake_hw_counter_ok(hw, counter))
		return 0;
	return hw->counters[counter];
}

static void fake_hw_reset_counter(struct mrc_device *mdev, u32 counter)
{
	struct fake_hw *hw = to_fake_hw(mdev);

	fake_hw_call(hw, FAKE_HW_RESET_COUNTER);
	if (fake_hw_counter_ok(hw, counter))
		hw->counters[counter] = 0;
}

/* Only the counter field changes: the state (and the rest) stays. */
static int fake_hw_set_mkey_counter(struct mrc_device *mdev, u32 index,
				    u32 counter)
{
	struct fake_hw *hw = to_fake_hw(mdev);
	int ret;

	ret = fake_hw_call(hw, FAKE_HW_SET_MKEY_COUNTER);
	if (ret)
		return ret;
	if (!fake_hw_slot_ok(hw, index) ||
	    (counter && !fake_hw_counter_ok(hw, counter)))
		return -EINVAL;

	hw->last_index[FAKE_HW_SET_MKEY_COUNTER] = index;
	hw->mkeys[index].counter = counter;
	return 0;
}

/*
 * Nothing to wait for: the fake runs no accesses. It returns void, so an
 * armed failure of it has no effect.
 */
static void fake_hw_sync_mkey(struct mrc_device *mdev, u32 index)
{
	struct fake_hw *hw = to_fake_hw(mdev);

	fake_hw_call(hw, FAKE_HW_SYNC_MKEY);
	if (fake_hw_slot_ok(hw, index))
		hw->last_index[FAKE_HW_SYNC_MKEY] = index;
}

static const struct mrc_hw_ops fake_hw_ops = {
	.fence = fake_hw_fence,
	.invalidate_mkey = fake_hw_invalidate_mkey,
	.read_counter = fake_hw_read_counter,
	.reset_counter = fake_hw_reset_counter,
	.set_mkey_counter = fake_hw_set_mkey_counter,
	.sync_mkey = fake_hw_sync_mkey,
	.write_mkey = fake_hw_write_mkey,
	.write_xlt = fake_hw_write_xlt,
};

/**
 * fake_hw_default_caps - small but valid caps
 * @caps: filled in
 */
void fake_hw_default_caps(struct mrc_caps *caps)
{
	*caps = (struct mrc_caps) {
		.max_mkeys = 64,
		.max_pds = 16,
		.xlt_size = 64 * MRC_XLT_SEG_SIZE,
		.page_size_bitmap = PAGE_SIZE | SZ_2M,
		.flags = 0,
	};
}

/**
 * fake_hw_create - a fake device, not yet registered
 * @test: owner; all memory is test-managed
 * @name: device name, also its debugfs directory
 * @caps: caps to size device memory by and to register with
 *
 * Fails the test (assertion) if memory runs out.
 *
 * Return: the fake.
 */
struct fake_hw *fake_hw_create(struct kunit *test, const char *name,
			       const struct mrc_caps *caps)
{
	struct fake_hw *hw;

	hw = kunit_kzalloc(test, sizeof(*hw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, hw);
	hw->mkeys = kunit_kcalloc(test, caps->max_mkeys, sizeof(*hw->mkeys),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, hw->mkeys);
	hw->xlt = kunit_kzalloc(test, caps->xlt_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, hw->xlt);
	hw->log = kunit_kzalloc(test, FAKE_HW_LOG_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, hw->log);
	if (caps->max_counters) {
		hw->counters = kunit_kcalloc(test, caps->max_counters,
					     sizeof(*hw->counters), GFP_KERNEL);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, hw->counters);
	}

	hw->test = test;
	hw->ops = fake_hw_ops;
	hw->mdev.name = name;
	hw->mdev.ops = &hw->ops;
	hw->mdev.caps = *caps;
	return hw;
}

/**
 * fake_hw_register - mrc_register_device() on the fake
 * @hw: the fake
 *
 * Return: what mrc_register_device() returned.
 */
int fake_hw_register(struct fake_hw *hw)
{
	int ret;

	ret = mrc_register_device(&hw->mdev);
	hw->registered = !ret;
	hw->expected_misuse = 0;
	return ret;
}

/**
 * fake_hw_unregister - mrc_unregister_device() if registered
 * @hw: the fake, or NULL
 *
 * Fails the test if the core caught more or fewer caller bugs than the
 * test announced with fake_hw_expect_misuse().
 */
void fake_hw_unregister(struct fake_hw *hw)
{
	if (!hw || !hw->registered)
		return;
	KUNIT_EXPECT_EQ_MSG(hw->test, atomic64_read(&hw->mdev.stats_misuse),
			    hw->expected_misuse, "%s: caller bugs caught",
			    hw->mdev.name);
	mrc_unregister_device(&hw->mdev);
	hw->registered = false;
}

/**
 * fake_hw_fail_nth - make one call of one op fail with -EIO
 * @hw: the fake
 * @op: op to fail
 * @nth: which call, counting from 1 over the fake's lifetime; 0 disarms
 */
void fake_hw_fail_nth(struct fake_hw *hw, enum fake_hw_op op,
		      unsigned int nth)
{
	hw->fail_op = op;
	hw->fail_nth = nth;
	hw->fail_err = -EIO;
}

/**
 * fake_hw_expect_misuse - announce caller bugs the test commits on purpose
 * @hw: the fake
 * @n: how many more
 */
void fake_hw_expect_misuse(struct fake_hw *hw, unsigned int n)
{
	hw->expected_misuse += n;
}

/**
 * fake_hw_fail_next - make the @k-th next call of one op fail with -EIO
 * @hw: the fake
 * @op: op to fail
 * @k: 1 for the next call, 2 for the one after, ...
 */
void fake_hw_fail_next(struct fake_hw *hw, enum fake_hw_op op,
		       unsigned int k)
{
	fake_hw_fail_nth(hw, op, hw->calls[op] + k);
}

/**
 * fake_hw_fail_next_err - fake_hw_fail_next(), failing with @err
 * @hw: the fake
 * @op: op to fail
 * @k: 1 for the next call, 2 for the one after, ...
 * @err: a negative errno, such as the -EAGAIN of a write_mkey that may
 *	not wait for a drain (struct mrc_hw_ops)
 */
void fake_hw_fail_next_err(struct fake_hw *hw, enum fake_hw_op op,
			   unsigned int k, int err)
{
	fake_hw_fail_next(hw, op, k);
	hw->fail_err = err;
}

/**
 * fake_hw_log_at - the op called at a position of the log
 * @hw: the fake
 * @pos: position, counting from 0; below min(log_len, FAKE_HW_LOG_MAX)
 *
 * Return: the op, or FAKE_HW_NUM_OPS for a position not kept.
 */
enum fake_hw_op fake_hw_log_at(struct fake_hw *hw, unsigned int pos)
{
	if (pos >= hw->log_len || pos >= FAKE_HW_LOG_MAX)
		return FAKE_HW_NUM_OPS;
	return hw->log[pos];
}

/**
 * fake_hw_assert_reg_order - the ops since @mark are one registration
 * @test: the test
 * @hw: the fake
 * @mark: hw->log_len before the registration
 * @xlt: translation entries were expected
 *
 * With @xlt: one or more write_xlt, exactly one fence, then write_mkey as
 * the last op. Without: write_mkey alone. Nothing is invalidated.
 *
 * Return: true if so; otherwise the test has failed with the sequence.
 */
bool fake_hw_assert_reg_order(struct kunit *test, struct fake_hw *hw,
			      unsigned int mark, bool xlt)
{
	unsigned int pos, n = hw->log_len - mark, writes = 0;
	bool ok = n >= 1 && hw->log_len <= FAKE_HW_LOG_MAX;

	for (pos = mark; ok && pos < hw->log_len - 1; pos++) {
		enum fake_hw_op op = hw->log[pos];

		if (op == FAKE_HW_WRITE_XLT)
			ok = pos == mark + writes++;
		else
			ok = op == FAKE_HW_FENCE && pos == hw->log_len - 2;
	}
	if (ok)
		ok = hw->log[hw->log_len - 1] == FAKE_HW_WRITE_MKEY &&
		     (xlt ? writes >= 1 && n == writes + 2 : n == 1);
	if (!ok)
		KUNIT_FAIL(test, "%s: %u ops since mark, %u xlt writes, last op %d; expected %s",
			   hw->mdev.name, n, writes,
			   fake_hw_log_at(hw, hw->log_len - 1),
			   xlt ? "xlt writes, one fence, write_mkey" :
				 "write_mkey only");
	return ok;
}

/**
 * fake_hw_ctx - the context device memory holds for a key's slot
 * @hw: the fake
 * @key: any key of the device
 *
 * Return: the slot's context as last written (its state may be INVALID).
 */
const struct mrc_mkey_ctx *fake_hw_ctx(struct fake_hw *hw, u32 key)
{
	u32 index = mrc_key_index(key);

	KUNIT_ASSERT_LT(hw->test, index, hw->mdev.caps.max_mkeys);
	return &hw->mkeys[index];
}

/**
 * fake_hw_mtt - decode MTT entry @i of a context from device memory
 * @hw: the fake
 * @ctx: an MTT-mode context
 * @i: entry, below ctx->xlt_entries
 *
 * Return: the entry as a CPU-endian u64.
 */
u64 fake_hw_mtt(struct fake_hw *hw, const struct mrc_mkey_ctx *ctx, u32 i)
{
	u64 off = ctx->xlt_offset + (u64)i * MRC_MTT_ENTRY_SIZE;
	__le64 e;

	KUNIT_ASSERT_LE(hw->test, off + MRC_MTT_ENTRY_SIZE,
			hw->mdev.caps.xlt_size);
	memcpy(&e, hw->xlt + off, sizeof(e));
	return le64_to_cpu(e);
}

/**
 * fake_hw_klm - KLM entry @i of a context, from device memory
 * @hw: the fake
 * @ctx: a KLM-mode context
 * @i: entry, below ctx->xlt_entries
 *
 * Return: the entry, still little-endian.
 */
struct mrc_klm fake_hw_klm(struct fake_hw *hw, const struct mrc_mkey_ctx *ctx,
			   u32 i)
{
	u64 off = ctx->xlt_offset + (u64)i * MRC_KLM_ENTRY_SIZE;
	struct mrc_klm e;

	KUNIT_ASSERT_LE(hw->test, off + MRC_KLM_ENTRY_SIZE,
			hw->mdev.caps.xlt_size);
	memcpy(&e, hw->xlt + off, sizeof(e));
	return e;
}

/**
 * fake_hw_expect_klm - KLM entry @i of a context is the one expected
 * @hw: the fake
 * @ctx: a KLM-mode context
 * @i: entry, below ctx->xlt_entries
 * @bcount: expected byte count
 * @key: expected key
 * @addr: expected address
 *
 * Return: true if so; otherwise the test has failed with both entries.
 */
bool fake_hw_expect_klm(struct fake_hw *hw, const struct mrc_mkey_ctx *ctx,
			u32 i, u32 bcount, u32 key, u64 addr)
{
	struct mrc_klm e = fake_hw_klm(hw, ctx, i);
	bool ok;

	ok = i < ctx->xlt_entries && le32_to_cpu(e.bcount) == bcount &&
	     le32_to_cpu(e.key) == key && le64_to_cpu(e.addr) == addr;
	if (!ok)
		KUNIT_FAIL(hw->test, "%s: KLM %u/%u of %#x: {%#x %#x %#llx} != {%#x %#x %#llx}",
			   hw->mdev.name, i, ctx->xlt_entries, ctx->key,
			   le32_to_cpu(e.bcount), le32_to_cpu(e.key),
			   le64_to_cpu(e.addr), bcount, key, addr);
	return ok;
}

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for mrcore");
MODULE_AUTHOR("mrcore developers");
