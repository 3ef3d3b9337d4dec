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
 *
 * Owners are of two kinds (enum mrc_mkey_kind): memory regions and memory
 * windows. The kind is the tag of the owner's xarray entry
 * (xa_tag_pointer()), so telling them apart needs no common member in the
 * owners' structs; mrc_mkey_owner() returns MR owners only, so callers
 * that predate windows never mistake a window for an MR.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>

#include "mrcore_loc.h"

static bool mrc_mkey_index_valid(const struct mrc_device *mdev, u32 index)
{
	return index && index < mdev->caps.max_mkeys;
}

/* Second phase of an allocation: the index is reserved by the caller. */
static void mrc_mkey_publish(struct mrc_device *mdev, u32 index, u8 variant,
			     void *owner, enum mrc_mkey_kind kind)
{
	void *old;

	lockdep_assert_held(&mdev->mkeys.xa_lock);

	/* Pairs with smp_rmb() in mrc_mkey_find(): variant before owner. */
	WRITE_ONCE(mdev->mkey_variant[index], variant);
	if (!owner)
		return;

	/* The reservation already holds the slot: nothing is allocated. */
	old = __xa_store(&mdev->mkeys, index, xa_tag_pointer(owner, kind),
			 GFP_ATOMIC);
	WARN_ON_ONCE(xa_is_err(old));
}

/* A kind fits the tag bits of an entry; the owner leaves them clear. */
static bool mrc_mkey_kind_ok(const void *owner, enum mrc_mkey_kind kind)
{
	return !WARN_ON_ONCE((kind != MRC_MKEY_KIND_MR &&
			      kind != MRC_MKEY_KIND_MW) ||
			     ((unsigned long)owner & 3UL));
}

static void mrc_mkey_count(struct mrc_device *mdev, u32 key)
{
	atomic_inc(&mdev->num_mkeys);
	atomic64_inc(&mdev->stats_mkey_allocs);
	mrc_dbg(mdev, "key %#x allocated\n", key);
}

/**
 * mrc_mkey_alloc_kind - allocate a memory key for an owner of some kind
 * @mdev: registered device
 * @owner: object mrc_mkey_find() returns for the key, at least 4-byte
 *	aligned; may be NULL, which reserves the key without making it
 *	findable
 * @kind: what @owner is
 * @key: on success, the new key
 *
 * As mrc_mkey_alloc(), which is this with MRC_MKEY_KIND_MR.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for an unknown @kind or a misaligned @owner (a bug,
 * with a warning), -ENOSPC when every index is in use, or -ENOMEM.
 */
int mrc_mkey_alloc_kind(struct mrc_device *mdev, void *owner,
			enum mrc_mkey_kind kind, u32 *key)
{
	struct xa_limit limit = XA_LIMIT(1, mdev->caps.max_mkeys - 1);
	u32 index;
	u8 variant;
	int ret;

	if (!mrc_mkey_kind_ok(owner, kind))
		return -EINVAL;

	xa_lock(&mdev->mkeys);
	ret = __xa_alloc_cyclic(&mdev->mkeys, &index, NULL, limit,
				&mdev->mkey_next, GFP_KERNEL);
	if (ret < 0) {
		xa_unlock(&mdev->mkeys);
		/* -EBUSY from the xarray means full, not "try again". */
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	variant = mdev->mkey_variant[index] + 1;
	mrc_mkey_publish(mdev, index, variant, owner, kind);
	xa_unlock(&mdev->mkeys);

	*key = mrc_make_key(index, variant);
	mrc_mkey_count(mdev, *key);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mkey_alloc_kind);

/**
 * mrc_mkey_alloc - allocate a memory key
 * @mdev: registered device
 * @owner: object mrc_mkey_owner() returns for the key (a memory region:
 *	its kind is MRC_MKEY_KIND_MR), at least 4-byte aligned; may be NULL,
 *	which reserves the key without making it findable
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
	return mrc_mkey_alloc_kind(mdev, owner, MRC_MKEY_KIND_MR, key);
}
EXPORT_SYMBOL_GPL(mrc_mkey_alloc);

/* Both phases of an exact allocation; -ENOKEY if @index is taken. */
static int mrc_mkey_insert_at(struct mrc_device *mdev, u32 index, u8 variant,
			      void *owner, enum mrc_mkey_kind kind)
{
	int ret;

	xa_lock(&mdev->mkeys);
	ret = __xa_insert(&mdev->mkeys, index, NULL, GFP_KERNEL);
	if (!ret)
		mrc_mkey_publish(mdev, index, variant, owner, kind);
	xa_unlock(&mdev->mkeys);
	return ret == -EBUSY ? -ENOKEY : ret;
}

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

	ret = mrc_mkey_insert_at(mdev, index, mrc_key_variant(key), owner,
				 MRC_MKEY_KIND_MR);
	if (ret)
		return ret;

	mrc_mkey_count(mdev, key);
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_mkey_alloc_at);

/* Allocated, as an owner or a reservation (xa_load() hides those). */
static bool mrc_mkey_index_used(struct mrc_device *mdev, u32 index)
{
	XA_STATE(xas, &mdev->mkeys, index);
	bool used;

	xa_lock(&mdev->mkeys);
	used = xas_load(&xas);
	xa_unlock(&mdev->mkeys);
	return used;
}

/**
 * mrc_mkey_check_req - may a registration ask for this exact key?
 * @mdev: registered device
 * @key: the key asked for (index and variant); 0 asks for none
 *
 * The checks of a requested key before anything is allocated: a valid
 * index that is not the local DMA key's, and not in use. In use is a
 * snapshot: the allocation itself (mrc_mkey_take()) can still find the
 * index taken meanwhile and fail -ENOKEY then.
 *
 * Context: process or softirq context; takes the mkeys lock.
 * Return: 0 (also for @key 0); -EINVAL for index 0, an index >=
 * caps.max_mkeys or the local DMA key's index; -ENOKEY if the index is
 * in use, with any variant.
 */
int mrc_mkey_check_req(struct mrc_device *mdev, u32 key)
{
	u32 index = mrc_key_index(key);

	if (!key)
		return 0;
	if (!mrc_mkey_index_valid(mdev, index) ||
	    index == mrc_key_index(mdev->local_dma_lkey))
		return -EINVAL;
	return mrc_mkey_index_used(mdev, index) ? -ENOKEY : 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mkey_check_req);

/**
 * mrc_mkey_take - give an owner the key it asked for, or any key
 * @mdev: registered device
 * @owner: as for mrc_mkey_alloc_kind()
 * @kind: what @owner is
 * @want: the exact key wanted (index and variant, checked by
 *	mrc_mkey_check_req()), or 0 for the next free one
 * @key: on success, the key: @want if it was not 0
 *
 * A requested key keeps its variant as asked, as mrc_mkey_alloc_at()
 * does; the next allocation of the index after it is freed moves on from
 * that variant.
 *
 * Context: process context; may sleep.
 * Return: 0; the errors of mrc_mkey_alloc_kind() for @want 0; for a
 * requested key -EINVAL (a key mrc_mkey_check_req() refuses), -ENOKEY if
 * its index is in use, or -ENOMEM.
 */
int mrc_mkey_take(struct mrc_device *mdev, void *owner,
		  enum mrc_mkey_kind kind, u32 want, u32 *key)
{
	int ret;

	if (!want)
		return mrc_mkey_alloc_kind(mdev, owner, kind, key);
	if (!mrc_mkey_kind_ok(owner, kind))
		return -EINVAL;
	ret = mrc_mkey_check_req(mdev, want);
	if (ret)
		return ret;

	ret = mrc_mkey_insert_at(mdev, mrc_key_index(want),
				 mrc_key_variant(want), owner, kind);
	if (ret)
		return ret;

	*key = want;
	mrc_mkey_count(mdev, want);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mkey_take);

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

/* The entry of a valid @index, or NULL; @variant must match if >= 0. */
static void *mrc_mkey_entry(struct mrc_device *mdev, u32 index, int variant)
{
	void *entry;

	if (!mrc_mkey_index_valid(mdev, index))
		return NULL;

	entry = xa_load(&mdev->mkeys, index);
	/* Pairs with the store-release of the owner in mrc_mkey_publish(). */
	smp_rmb();
	if (variant >= 0 && READ_ONCE(mdev->mkey_variant[index]) != variant)
		return NULL;
	return entry;
}

/**
 * mrc_mkey_find - find the owner of a live memory key, of any kind
 * @mdev: registered device
 * @key: any 32-bit value, e.g. an lkey or rkey from the wire
 * @kind: on success, what the owner is
 *
 * Lockless, with the rules of mrc_mkey_owner(): call under
 * rcu_read_lock() and hold the owner before leaving the section.
 *
 * Context: any context.
 * Return: the owner if @key (index and variant) is live and has one,
 * NULL otherwise.
 */
void *mrc_mkey_find(struct mrc_device *mdev, u32 key, enum mrc_mkey_kind *kind)
{
	void *entry = mrc_mkey_entry(mdev, mrc_key_index(key),
				     mrc_key_variant(key));

	if (!entry)
		return NULL;
	*kind = xa_pointer_tag(entry);
	return xa_untag_pointer(entry);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mkey_find);

/**
 * mrc_mkey_find_index - find the owner of an allocated index, any variant
 * @mdev: registered device
 * @index: a key index (mrc_key_index())
 * @kind: on success, what the owner is
 *
 * For a Bind MW work request, whose key names the window by index and
 * carries the variant the window is to take. Same rules as
 * mrc_mkey_find().
 *
 * Context: any context.
 * Return: the owner, or NULL if @index is not allocated or has none.
 */
void *mrc_mkey_find_index(struct mrc_device *mdev, u32 index,
			  enum mrc_mkey_kind *kind)
{
	void *entry = mrc_mkey_entry(mdev, index, -1);

	if (!entry)
		return NULL;
	*kind = xa_pointer_tag(entry);
	return xa_untag_pointer(entry);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mkey_find_index);

/**
 * mrc_mkey_set_variant - a live key's owner moves it to another variant
 * @mdev: registered device
 * @key: the key's index with its new variant
 *
 * The device executed a REG_MR or a window bind that changed the key
 * (ib_update_fast_reg_key(), a window's new rkey). From now on lookups by
 * the old variant fail and lookups by @key find the owner, which does not
 * change. The caller serialises changes of one index.
 *
 * Context: process context; does not sleep.
 */
void mrc_mkey_set_variant(struct mrc_device *mdev, u32 key)
{
	xa_lock(&mdev->mkeys);
	/* Read locklessly by mrc_mkey_entry(); the owner does not change. */
	WRITE_ONCE(mdev->mkey_variant[mrc_key_index(key)],
		   mrc_key_variant(key));
	xa_unlock(&mdev->mkeys);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mkey_set_variant);

/**
 * mrc_mkey_mark_qp - mark or unmark a key's owner as bound to a QP
 * @mdev: registered device
 * @key: a live key (its index is what counts)
 * @bound: set (a type 2 window was bound) or clear (it left VALID)
 *
 * The mark lives in the key's xarray entry (MRC_MKEY_MARK_QP) and goes
 * with it when the key is freed. The caller serialises marks of one
 * index (the window's mutex).
 *
 * Context: process context; does not sleep.
 */
void mrc_mkey_mark_qp(struct mrc_device *mdev, u32 key, bool bound)
{
	if (bound)
		xa_set_mark(&mdev->mkeys, mrc_key_index(key), MRC_MKEY_MARK_QP);
	else
		xa_clear_mark(&mdev->mkeys, mrc_key_index(key),
			      MRC_MKEY_MARK_QP);
}

/**
 * mrc_mkey_any_qp - is any key's owner marked as bound to a QP?
 * @mdev: registered device
 *
 * Context: any context.
 * Return: true if some entry carries MRC_MKEY_MARK_QP (a snapshot).
 */
bool mrc_mkey_any_qp(struct mrc_device *mdev)
{
	return xa_marked(&mdev->mkeys, MRC_MKEY_MARK_QP);
}

/**
 * mrc_mkey_next_qp - the next owner marked as bound to a QP
 * @mdev: registered device
 * @index: in: the first index to look at; out: the index found
 *
 * Call under rcu_read_lock() and hold the owner before leaving the
 * section, as for mrc_mkey_find(). Only windows are ever marked.
 *
 * Context: any context.
 * Return: the owner, or NULL if no index from *@index on is marked.
 */
void *mrc_mkey_next_qp(struct mrc_device *mdev, u32 *index)
{
	unsigned long i = *index;
	void *entry;

	entry = xa_find(&mdev->mkeys, &i, mdev->caps.max_mkeys - 1,
			MRC_MKEY_MARK_QP);
	if (!entry)
		return NULL;
	*index = i;
	return xa_untag_pointer(entry);
}

/**
 * mrc_mkey_owner - find the memory region that owns a live memory key
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
 * Return: the owner given to mrc_mkey_alloc() or mrc_mkey_alloc_at() if
 * @key (index and variant) is live, NULL otherwise, including for keys
 * allocated with a NULL owner and for keys of other kinds (windows: see
 * mrc_mkey_find()).
 */
void *mrc_mkey_owner(struct mrc_device *mdev, u32 key)
{
	enum mrc_mkey_kind kind;
	void *owner;

	owner = mrc_mkey_find(mdev, key, &kind);
	if (!owner || kind != MRC_MKEY_KIND_MR)
		return NULL;
	return owner;
}
EXPORT_SYMBOL_GPL(mrc_mkey_owner);

/**
 * mrc_key_users_tryget - hold an object just found by key
 * @u: the object's lookup count
 *
 * Called inside the RCU read-side section of the lookup.
 *
 * Context: any context.
 * Return: true if held (drop with mrc_key_users_put()); false if the
 * object is being torn down and must be treated as not found.
 */
bool mrc_key_users_tryget(struct mrc_key_users *u)
{
	atomic_inc(&u->count);
	/* Pairs with smp_mb() in mrc_key_users_quiesce(): count, then dying. */
	smp_mb__after_atomic();
	if (likely(!READ_ONCE(u->dying)))
		return true;
	mrc_key_users_put(u);
	return false;
}

/**
 * mrc_key_users_put - drop a hold from mrc_key_users_tryget()
 * @u: the object's lookup count
 *
 * Context: any context.
 */
void mrc_key_users_put(struct mrc_key_users *u)
{
	/* Fully ordered: the caller is done with the object before it drops. */
	if (atomic_dec_and_test(&u->count))
		wake_up_var(&u->count);
}

/**
 * mrc_key_users_quiesce - turn new lookups away and wait for the others
 * @u: the object's lookup count
 *
 * Context: process context; may sleep. The caller holds no lock a holder
 * may wait for (the object's mutex in particular).
 */
void mrc_key_users_quiesce(struct mrc_key_users *u)
{
	/* Read locklessly by mrc_key_users_tryget(). */
	WRITE_ONCE(u->dying, true);
	/* Pairs with smp_mb__after_atomic() in mrc_key_users_tryget(). */
	smp_mb();
	wait_var_event(&u->count, !atomic_read(&u->count));
}

/**
 * mrc_key_users_revive - a teardown failed: lookups may find the object
 * @u: the object's lookup count
 *
 * Context: any context.
 */
void mrc_key_users_revive(struct mrc_key_users *u)
{
	/* Read locklessly by mrc_key_users_tryget(). */
	WRITE_ONCE(u->dying, false);
}
