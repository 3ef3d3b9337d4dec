// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: counters of remote writes into memory regions (the fi_mr_bind()
 * model, FI_REMOTE_WRITE).
 *
 * A counter is a slot of the device's counter table (caps.max_counters
 * slots, slot 0 never used). mrc_mr_bind_counter() stores the slot in the
 * counter field of the MR's live context with ops->set_mkey_counter(),
 * which does not revoke the context, so I/O through the key goes on while
 * it is bound; every context mrcore writes for the MR afterwards (rereg,
 * REG_MR, invalidation, FMR map and unmap) carries it too. The device adds
 * one to each distinct counter of the contexts an incoming RDMA WRITE or
 * atomic passed through once the operation succeeded; mrcore never counts
 * anything itself: mrc_counter_read() reads the device's value.
 *
 * Locking: slots are allocated under mrc_counter_mutex, which protects
 * every device's counter_map and num_counters (allocation and free are
 * rare). A binding changes under the MR's mutex, the same that serialises
 * every other context write of the MR; a counter's num_mrs changes there
 * too, so mrc_free_counter() must not race binds of the same counter (the
 * caller's rule, as for any free).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/export.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "mrcore_loc.h"

/* Protects every device's counter_map and num_counters. */
static DEFINE_MUTEX(mrc_counter_mutex);

/* Does @mdev have a counter table, and the ops to reach it? */
static bool mrc_counters_supported(const struct mrc_device *mdev)
{
	const struct mrc_hw_ops *ops = mdev->ops;

	return mdev->caps.max_counters >= 2 &&
	       mdev->caps.max_counters <= MRC_MAX_COUNTERS &&
	       ops->read_counter && ops->reset_counter && ops->set_mkey_counter;
}

/* A free slot of @mdev's table; the map is allocated with the first. */
static int mrc_counter_index_alloc(struct mrc_device *mdev, u32 *index)
{
	u32 n = mdev->caps.max_counters;
	unsigned long bit;

	lockdep_assert_held(&mrc_counter_mutex);

	if (!mdev->counter_map) {
		mdev->counter_map = bitmap_zalloc(n, GFP_KERNEL);
		if (!mdev->counter_map)
			return -ENOMEM;
		/* Slot 0 means "no counter" in a context. */
		__set_bit(0, mdev->counter_map);
	}

	bit = find_first_zero_bit(mdev->counter_map, n);
	if (bit >= n)
		return -ENOSPC;
	__set_bit(bit, mdev->counter_map);
	mdev->num_counters++;
	*index = bit;
	return 0;
}

static void mrc_counter_index_free(struct mrc_device *mdev, u32 index)
{
	lockdep_assert_held(&mrc_counter_mutex);

	__clear_bit(index, mdev->counter_map);
	if (--mdev->num_counters)
		return;
	bitmap_free(mdev->counter_map);
	mdev->counter_map = NULL;
}

/**
 * mrc_alloc_counter - allocate a counter of the device's counter table
 * @mdev: registered device
 *
 * The counter starts at 0 and is bound to no MR.
 *
 * Context: process context; may sleep.
 * Return: the counter; ERR_PTR(-EOPNOTSUPP) if the device has no counter
 * table (caps.max_counters 0) or not the ops to reach it;
 * ERR_PTR(-ENOSPC) when every slot is in use; ERR_PTR(-ENOMEM).
 */
struct mrc_counter *mrc_alloc_counter(struct mrc_device *mdev)
{
	struct mrc_counter *c;
	int ret;

	if (!mrc_counters_supported(mdev))
		return ERR_PTR(-EOPNOTSUPP);

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->mdev = mdev;
	atomic_set(&c->num_mrs, 0);

	mutex_lock(&mrc_counter_mutex);
	ret = mrc_counter_index_alloc(mdev, &c->index);
	mutex_unlock(&mrc_counter_mutex);
	if (ret) {
		kfree(c);
		return ERR_PTR(ret);
	}

	/* A slot freed earlier holds its last value: start from 0. */
	mdev->ops->reset_counter(mdev, c->index);
	mrc_dbg(mdev, "counter %u allocated\n", c->index);
	return c;
}
EXPORT_SYMBOL_GPL(mrc_alloc_counter);

/**
 * mrc_free_counter - free a counter bound to no MR
 * @c: from mrc_alloc_counter()
 *
 * No bind of @c may run at the same time.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBUSY while an MR is bound to @c (nothing changes).
 */
int mrc_free_counter(struct mrc_counter *c)
{
	struct mrc_device *mdev = c->mdev;

	if (atomic_read(&c->num_mrs))
		return -EBUSY;

	mutex_lock(&mrc_counter_mutex);
	mrc_counter_index_free(mdev, c->index);
	mutex_unlock(&mrc_counter_mutex);
	mrc_dbg(mdev, "counter %u freed\n", c->index);
	kfree(c);
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_free_counter);

/* Store @index in the counter field of @mr's context; under its lock. */
static int mrc_mr_set_counter(struct mrc_mr *mr, u32 index)
{
	struct mrc_device *mdev = mr->mdev;

	lockdep_assert_held(&mr->lock);
	return mdev->ops->set_mkey_counter(mdev, mrc_key_index(mr->key), index);
}

static int mrc_mr_bind_locked(struct mrc_mr *mr, struct mrc_counter *c)
{
	int ret;

	lockdep_assert_held(&mr->lock);

	/* One counter per MR: unbind before binding another. */
	if (mr->counter)
		return -EBUSY;
	ret = mrc_mr_set_counter(mr, c->index);
	if (ret)
		return ret;
	atomic_inc(&c->num_mrs);
	mr->counter = c;
	return 0;
}

static int mrc_mr_unbind_locked(struct mrc_mr *mr)
{
	struct mrc_counter *c = mr->counter;
	int ret;

	lockdep_assert_held(&mr->lock);

	if (!c)
		return -ENOENT;
	/* Returns once no write that found the counter can still add to it. */
	ret = mrc_mr_set_counter(mr, 0);
	if (ret)
		return ret;
	mr->counter = NULL;
	atomic_dec(&c->num_mrs);
	return 0;
}

/**
 * mrc_mr_bind_counter - count remote writes into an MR on a counter
 * @mr: any memory region (a fast-reg MR, an FMR and an indirect key
 *	included), FREE or VALID
 * @c: a counter of @mr's device, or NULL to unbind
 * @flags: MRC_COUNT_REMOTE_WRITE to bind; 0 to unbind
 *
 * Binding stores @c's slot in the counter field of @mr's device context
 * without revoking it (I/O through the key goes on), and every context
 * mrcore writes for @mr later keeps it, so the device counts each
 * successful incoming RDMA WRITE or atomic that lands in @mr, through
 * its key, a window bound to it or an indirect key naming it, once per
 * operation. Several MRs may share a counter. Unbinding clears the field
 * and returns once no write that found the counter there can still add
 * to it. mrc_dereg_mr() unbinds by itself.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL for @flags other than the above, or @c of another
 * device; -EBUSY if @mr already has a counter (@c's included); -ENOENT
 * when unbinding an MR without one; or the error of
 * ops->set_mkey_counter, after which nothing changed.
 */
int mrc_mr_bind_counter(struct mrc_mr *mr, struct mrc_counter *c, u32 flags)
{
	int ret;

	if (flags != (c ? MRC_COUNT_REMOTE_WRITE : 0))
		return -EINVAL;
	if (c && c->mdev != mr->mdev)
		return -EINVAL;

	mutex_lock(&mr->lock);
	if (c)
		ret = mrc_mr_bind_locked(mr, c);
	else
		ret = mrc_mr_unbind_locked(mr);
	mrc_dbg(mr->mdev, "MR[0x%08x] %s: counter %u: %d\n", mr->key, __func__,
		c ? c->index : 0, ret);
	mutex_unlock(&mr->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_mr_bind_counter);

/**
 * mrc_mr_drop_counter - unbind the counter of an MR being deregistered
 * @mr: the MR, its key already invalidated, under its lock
 *
 * Called by mrc_dereg_mr() only. The device no longer resolves the key,
 * so the field is cleared only to wait for the writes that found the
 * counter before; a failure of the op (a slot the device refuses) is not
 * expected and changes nothing for the counter, which is released anyway.
 *
 * Context: process context; may sleep.
 */
void mrc_mr_drop_counter(struct mrc_mr *mr)
{
	struct mrc_counter *c = mr->counter;

	lockdep_assert_held(&mr->lock);

	if (!c)
		return;
	WARN_ON_ONCE(mrc_mr_set_counter(mr, 0));
	mr->counter = NULL;
	atomic_dec(&c->num_mrs);
}

/**
 * mrc_counter_read - read a counter, from the device
 * @c: from mrc_alloc_counter()
 *
 * An operation whose completion the caller has seen is counted already.
 *
 * Context: process context; the backend's op may sleep.
 * Return: the remote writes counted since allocation or the last reset.
 */
u64 mrc_counter_read(const struct mrc_counter *c)
{
	return c->mdev->ops->read_counter(c->mdev, c->index);
}
EXPORT_SYMBOL_GPL(mrc_counter_read);

/**
 * mrc_counter_reset - set a counter back to 0
 * @c: from mrc_alloc_counter(), bound or not
 *
 * A write completing while this runs may be counted before the reset
 * (and lost) or after it.
 *
 * Context: process context; may sleep.
 */
void mrc_counter_reset(struct mrc_counter *c)
{
	c->mdev->ops->reset_counter(c->mdev, c->index);
}
EXPORT_SYMBOL_GPL(mrc_counter_reset);
