// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: memory keys.
 *
 * A key is index << 8 | variant (see mrc_make_key()). The index names the
 * device's mkey context slot and is handed out cyclically from
 * [1, max_mkeys - 1]; the variant tells successive users of one slot apart.
 * mdev->mkey_variant[] records each index's current variant: a key is live
 * only while its index is allocated and its variant equals that record.
 *
 * Publication is two-phase so a lockless lookup never pairs a new owner
 * with the previous variant: reserve the index (lookups see NULL), record
 * the new variant, then store the owner with release semantics.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/xarray.h>

#include "mrcore_loc.h"

static bool mrc_mkey_index_valid(const struct mrc_device *mdev, u32 index)
{
	return index && index < mdev->caps.max_mkeys;
}

/* Second phase of an allocation: the index is reserved by the caller. */
static void mrc_mkey_publish(struct mrc_device *mdev, u32 index, u8 variant,
			     void *owner)
{
	void *old;

	lockdep_assert_held(&mdev->mkeys.xa_lock);

	/* Pairs with smp_rmb() in mrc_mkey_owner(): variant before owner. */
	WRITE_ONCE(mdev->mkey_variant[index], variant);
	if (!owner)
		return;

	/* The reservation already holds the slot: nothing is allocated. */
	old = __xa_store(&mdev->mkeys, index, owner, GFP_ATOMIC);
	WARN_ON_ONCE(xa_is_err(old));
}

static void mrc_mkey_count(struct mrc_device *mdev, u32 key)
{
	atomic_inc(&mdev->num_mkeys);
	atomic64_inc(&mdev->stats_mkey_allocs);
	mrc_dbg(mdev, "key %#x allocated\n", key);
}

/**
 * mrc_mkey_alloc - allocate a memory key
 * @mdev: registered device
 * @owner: object mrc_mkey_owner() returns for the key; may be NULL, which
 *	reserves the key without making it findable
 * @key: on success, the new key
 *
 * The index is taken cyclically from [1, caps.max_mkeys - 1]. Its variant
 * is the previous variant of that index plus one (mod 256), so a reused
 * index never gets the variant it had last time.
 *
 * Context: process context; may sleep.
 * Return: 0, -ENOSPC when every index is in use, or -ENOMEM.
 */
int mrc_mkey_alloc(struct mrc_device *mdev, void *owner, u32 *key)
{
	struct xa_limit limit = XA_LIMIT(1, mdev->caps.max_mkeys - 1);
	u32 index;
	u8 variant;
	int ret;

	xa_lock(&mdev->mkeys);
	ret = __xa_alloc_cyclic(&mdev->mkeys, &index, NULL, limit,
				&mdev->mkey_next, GFP_KERNEL);
	if (ret < 0) {
		xa_unlock(&mdev->mkeys);
		/* -EBUSY from the xarray means full, not "try again". */
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	variant = mdev->mkey_variant[index] + 1;
	mrc_mkey_publish(mdev, index, variant, owner);
	xa_unlock(&mdev->mkeys);

	*key = mrc_make_key(index, variant);
	mrc_mkey_count(mdev, *key);
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_mkey_alloc);

/**
 * mrc_mkey_alloc_at - allocate one exact, caller-chosen memory key
 * @mdev: registered device
 * @owner: as for mrc_mkey_alloc()
 * @key: the key wanted; its variant becomes the index's variant as is, so
 *	a caller reusing a key it freed gets the same key back
 *
 * Context: process context; may sleep.
 * Return: 0; -EKEYREJECTED if the index of @key is 0 or >= caps.max_mkeys;
 * -ENOKEY if that index is in use (with any variant); or -ENOMEM.
 */
int mrc_mkey_alloc_at(struct mrc_device *mdev, void *owner, u32 key)
{
	u32 index = mrc_key_index(key);
	int ret;

	if (!mrc_mkey_index_valid(mdev, index))
		return -EKEYREJECTED;

	xa_lock(&mdev->mkeys);
	ret = __xa_insert(&mdev->mkeys, index, NULL, GFP_KERNEL);
	if (ret) {
		xa_unlock(&mdev->mkeys);
		return ret == -EBUSY ? -ENOKEY : ret;
	}
	mrc_mkey_publish(mdev, index, mrc_key_variant(key), owner);
	xa_unlock(&mdev->mkeys);

	mrc_mkey_count(mdev, key);
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_mkey_alloc_at);

/* Allocated (owner or reservation) and carrying this key's variant. */
static bool mrc_mkey_live_locked(struct mrc_device *mdev, u32 key)
{
	u32 index = mrc_key_index(key);
	XA_STATE(xas, &mdev->mkeys, index);

	lockdep_assert_held(&mdev->mkeys.xa_lock);

	return xas_load(&xas) &&
	       mdev->mkey_variant[index] == mrc_key_variant(key);
}

/**
 * mrc_mkey_free - free a memory key
 * @mdev: registered device
 * @key: a key from mrc_mkey_alloc() or mrc_mkey_alloc_at()
 *
 * The caller must have invalidated the key's context in the device. A key
 * that is not live (a double free, or a stale key whose index has been
 * reallocated since) is counted in stats_misuse, logs one line and frees
 * nothing, so the index's current user is unaffected. An owner found
 * through mrc_mkey_owner() may still be in use by RCU readers after this
 * returns.
 *
 * Context: process context; does not sleep.
 */
void mrc_mkey_free(struct mrc_device *mdev, u32 key)
{
	u32 index = mrc_key_index(key);

	if (mrc_misuse(mdev, !mrc_mkey_index_valid(mdev, index)))
		return;

	xa_lock(&mdev->mkeys);
	if (mrc_misuse(mdev, !mrc_mkey_live_locked(mdev, key))) {
		xa_unlock(&mdev->mkeys);
		mrc_dbg(mdev, "free of dead key %#x\n", key);
		return;
	}
	__xa_erase(&mdev->mkeys, index);
	xa_unlock(&mdev->mkeys);

	atomic_dec(&mdev->num_mkeys);
	mrc_dbg(mdev, "key %#x freed\n", key);
}
EXPORT_SYMBOL_GPL(mrc_mkey_free);

/**
 * mrc_mkey_owner - find the owner of a live memory key
 * @mdev: registered device
 * @key: any 32-bit value, e.g. an lkey or rkey from the wire
 *
 * Lockless: the xarray is read under RCU. The result is only stable while
 * the caller is inside the RCU read-side critical section it called this
 * from, so the caller should hold rcu_read_lock() and take its own
 * reference (e.g. kref_get_unless_zero()) before leaving it; owners must
 * therefore be freed RCU-safely (kfree_rcu() or after synchronize_rcu())
 * once their key is freed.
 *
 * Context: any context.
 * Return: the owner given at allocation if @key (index and variant) is
 * live, NULL otherwise, including for keys allocated with a NULL owner.
 */
void *mrc_mkey_owner(struct mrc_device *mdev, u32 key)
{
	u32 index = mrc_key_index(key);
	void *owner;

	if (!mrc_mkey_index_valid(mdev, index))
		return NULL;

	owner = xa_load(&mdev->mkeys, index);
	/* Pairs with the store-release of the owner in mrc_mkey_publish(). */
	smp_rmb();
	if (READ_ONCE(mdev->mkey_variant[index]) != mrc_key_variant(key))
		return NULL;
	return owner;
}
EXPORT_SYMBOL_GPL(mrc_mkey_owner);
