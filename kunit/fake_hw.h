/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake mrcore backend for KUnit: a device whose "device memory" is plain
 * arrays the tests read back, whose ops count their calls, and which can
 * be told to fail one chosen call.
 */
#ifndef _MRCORE_FAKE_HW_H
#define _MRCORE_FAKE_HW_H

#include <kunit/test.h>

#include <rdma/mrcore.h>

enum fake_hw_op {
	FAKE_HW_FENCE,
	FAKE_HW_INVALIDATE_MKEY,
	FAKE_HW_WRITE_MKEY,
	FAKE_HW_WRITE_XLT,
	FAKE_HW_READ_COUNTER,
	FAKE_HW_RESET_COUNTER,
	FAKE_HW_SET_MKEY_COUNTER,
	FAKE_HW_SYNC_MKEY,
	FAKE_HW_NUM_OPS /* keep me last */
};

/**
 * struct fake_hw - a fake device
 * @mdev: the device mrcore sees; ops reach back with to_fake_hw()
 * @ops: this device's own ops table, so a test may clear a callback
 * @test: the test that owns the fake, for KUNIT_FAIL from the ops
 * @mkeys: device memory: one context per slot, as last written
 * @xlt: device memory: the translation area
 * @counters: device memory: the counter table, caps.max_counters slots
 *	(NULL without); tests add to it as the device's engine would
 * @calls: calls per op
 * @last_index: slot of the last write_mkey/invalidate_mkey/sync_mkey call
 * @fail_op: op to fail
 * @fail_nth: fail the @fail_nth call (counting from 1) of @fail_op with
 *	@fail_err; 0 never fails. fence and sync_mkey return void and never
 *	fail
 * @fail_err: the error of the failed call: -EIO unless
 *	fake_hw_fail_next_err() chose another
 * @expected_misuse: caller bugs the test provokes on purpose; checked
 *	against mdev.stats_misuse at unregistration
 * @registered: mrc_register_device() succeeded and has not been undone
 * @log: the ops in call order (failed calls included); the first
 *	FAKE_HW_LOG_MAX are kept
 * @log_len: ops called so far, including those not kept in @log
 *
 * The ops do not lock: tests call them from one thread at a time.
 */
struct fake_hw {
	struct mrc_device mdev;
	struct mrc_hw_ops ops;
	struct kunit *test;
	struct mrc_mkey_ctx *mkeys;
	u8 *xlt;
	u64 *counters;
	unsigned int calls[FAKE_HW_NUM_OPS];
	u32 last_index[FAKE_HW_NUM_OPS];
	enum fake_hw_op fail_op;
	unsigned int fail_nth;
	int fail_err;
	s64 expected_misuse;
	bool registered;
	u8 *log;
	unsigned int log_len;
};

#define FAKE_HW_LOG_MAX		4096

static inline struct fake_hw *to_fake_hw(struct mrc_device *mdev)
{
	return container_of(mdev, struct fake_hw, mdev);
}

void fake_hw_default_caps(struct mrc_caps *caps);
struct fake_hw *fake_hw_create(struct kunit *test, const char *name,
			       const struct mrc_caps *caps);
int fake_hw_register(struct fake_hw *hw);
void fake_hw_unregister(struct fake_hw *hw);
void fake_hw_fail_nth(struct fake_hw *hw, enum fake_hw_op op,
		      unsigned int nth);
void fake_hw_expect_misuse(struct fake_hw *hw, unsigned int n);
void fake_hw_fail_next(struct fake_hw *hw, enum fake_hw_op op,
		       unsigned int k);
void fake_hw_fail_next_err(struct fake_hw *hw, enum fake_hw_op op,
			   unsigned int k, int err);
u32 fake_hw_random_seed(void);
void fake_hw_wait_for_stop(void);
enum fake_hw_op fake_hw_log_at(struct fake_hw *hw, unsigned int pos);
bool fake_hw_assert_reg_order(struct kunit *test, struct fake_hw *hw,
			      unsigned int mark, bool xlt);
const struct mrc_mkey_ctx *fake_hw_ctx(struct fake_hw *hw, u32 key);
u64 fake_hw_mtt(struct fake_hw *hw, const struct mrc_mkey_ctx *ctx, u32 i);
struct mrc_klm fake_hw_klm(struct fake_hw *hw, const struct mrc_mkey_ctx *ctx,
			   u32 i);
bool fake_hw_expect_klm(struct fake_hw *hw, const struct mrc_mkey_ctx *ctx,
			u32 i, u32 bcount, u32 key, u64 addr);

#endif /* _MRCORE_FAKE_HW_H */
