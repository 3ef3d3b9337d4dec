// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: the core of every memory region, whatever its kind.
 *
 * Every registration runs the same sequence: its kind (basic.c, frwr.c,
 * fmr.c, indirect.c, odp.c, dmabuf.c) validates everything that can be
 * validated without allocating, allocates the MR (mrc_mr_zalloc()) and
 * hands it to mrc_mr_install(), which takes the key (its owner is the
 * MR), writes the translation to fresh translation space (xlt.c), fences
 * once and writes the mkey context last. A failure at any step undoes
 * the earlier ones in reverse order, so a failed registration leaves no
 * key, no translation space, no pin and no context behind. Tests fail
 * each step on purpose through mrc_inject() (the stages of enum
 * mrc_stage).
 *
 * Lookups by key, the state of a context and deregistration are here
 * too; what differs per kind is reached only through the kinds table
 * (kinds.c). Rereg (rereg.c) swaps a registration in place.
 *
 * Reading order: the context and the MR's record of its translation, the
 * MR's allocation and install, lookups, deregistration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mrcore_loc.h"

/**
 * mrc_write_mkey - ops->write_mkey as a failure-injection stage
 * @mdev: device
 * @key: the key whose slot is written
 * @ctx: the context
 *
 * As mrc_xlt_write() (xlt.c).
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int mrc_write_mkey(struct mrc_device *mdev, u32 key,
		   const struct mrc_mkey_ctx *ctx)
{
	if (mrc_inject(mdev, MRC_STAGE_WRITE_MKEY))
		return -EIO;
	return mdev->ops->write_mkey(mdev, mrc_key_index(key), ctx);
}

/**
 * mrc_ctx_fill - the VALID context of a key over a translation
 * @ctx: filled
 * @key: the key
 * @pd: its protection domain
 * @access: MRC_ACCESS_* rights
 * @t: the translation, written
 *
 * Context: any context.
 */
void mrc_ctx_fill(struct mrc_mkey_ctx *ctx, u32 key, const struct mrc_pd *pd,
		  u32 access, const struct mrc_xlt_table *t)
{
	*ctx = (struct mrc_mkey_ctx) {
		.key = key,
		.state = MRC_MKEY_VALID,
		.access_mode = t->mode,
		.page_shift = t->page_shift,
		.pdn = pd->pdn,
		.access = access & MRC_ACCESS_HW_MASK,
		.iova = t->iova,
		.length = t->length,
		.xlt_offset = t->xlt.offset,
		.xlt_entries = t->nentries,
		.flags = t->odp ? MRC_MKEY_F_ODP : 0,
	};
}

/**
 * mrc_mr_set_xlt - record a live translation in its MR
 * @mr: the MR
 * @t: the translation its context now reaches
 *
 * Context: under @mr->lock, or before the MR is findable.
 */
void mrc_mr_set_xlt(struct mrc_mr *mr, const struct mrc_xlt_table *t)
{
	mr->iova = t->iova;
	mr->length = t->length;
	mr->page_shift = t->page_shift;
	mr->mode = t->mode;
	mr->nentries = t->nentries;
	mr->xlt = t->xlt;
}

/**
 * mrc_mr_get_xlt - the live translation of an MR
 * @mr: the MR
 * @t: filled, as a translation with nothing to write
 *
 * Context: under @mr->lock.
 */
void mrc_mr_get_xlt(const struct mrc_mr *mr, struct mrc_xlt_table *t)
{
	*t = (struct mrc_xlt_table) {
		.iova = mr->iova,
		.length = mr->length,
		.writable = mrc_access_writable(mr->access),
		.mode = mr->mode,
		.page_shift = mr->page_shift,
		.nentries = mr->nentries,
		.xlt = mr->xlt,
	};
}

/**
 * mrc_mr_segs - the memory behind an MR, to rebuild its entries
 * @mr: a DMA, physical, sg or user MR
 * @it: set to iterate over its DMA segments; none for a kind without
 *	memory of its own (DMA)
 *
 * Context: under @mr->lock.
 */
void mrc_mr_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it)
{
	const struct mrc_kind_ops *kind = mrc_mr_kind(mr);

	if (kind->segs)
		kind->segs(mr, it);
	else
		mrc_seg_iter_phys(it, NULL, 0);
}

/**
 * mrc_mr_init - set up the core fields of a zeroed MR
 * @mr: zeroed, possibly embedded first in a bigger object (freed with
 *	kfree_rcu() of @mr)
 * @pd: protection domain
 * @type: enum mrc_mr_type
 * @access: MRC_ACCESS_* as registered
 *
 * Lookups by key (mrc_mr_lookup()) fail until the registration is complete
 * and calls mrc_key_users_revive(): the key is findable as soon as it is
 * allocated, before its context is written.
 *
 * Context: any context.
 */
void mrc_mr_init(struct mrc_mr *mr, struct mrc_pd *pd, enum mrc_mr_type type,
		 u32 access)
{
	mr->mdev = pd->mdev;
	mr->pd = pd;
	mr->type = type;
	mr->access = access;
	atomic_set(&mr->num_mw, 0);
	mrc_key_users_init(&mr->users);
	/* Not findable yet: nothing may bind to a half-built MR. */
	mr->users.dying = true;
	mutex_init(&mr->lock);
}

/**
 * mrc_mr_zalloc - allocate and set up an MR, alone or embedded
 * @pd: protection domain
 * @type: enum mrc_mr_type
 * @access: MRC_ACCESS_* as registered
 * @key: the key mrc_mr_install() is to take, 0 for any
 * @size: bytes of the object, at least sizeof(struct mrc_mr); a bigger
 *	object embeds its struct mrc_mr first
 *
 * Context: process context; may sleep.
 * Return: the MR, not findable yet; NULL without memory. Free it with
 * mrc_mr_free() until it is installed.
 */
struct mrc_mr *mrc_mr_zalloc(struct mrc_pd *pd, enum mrc_mr_type type,
			     u32 access, u32 key, size_t size)
{
	struct mrc_mr *mr;

	mr = kzalloc(size, GFP_KERNEL);
	if (!mr)
		return NULL;
	mrc_mr_init(mr, pd, type, access);
	mr->key = key;
	return mr;
}

/* An MR of @attr's type and rights, to take @attr's key (0: any). */
struct mrc_mr *mrc_mr_alloc(struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	return mrc_mr_zalloc(pd, attr->type, attr->access, attr->key,
			     sizeof(struct mrc_mr));
}

/* Key lookups run under RCU and may still hold @mr: free after a grace. */
void mrc_mr_free(struct mrc_mr *mr)
{
	mutex_destroy(&mr->lock);
	kfree_rcu(mr, rcu);
}

/**
 * mrc_mr_count - count a registration that succeeded
 * @mr: the MR, now live
 *
 * Context: any context.
 */
void mrc_mr_count(struct mrc_mr *mr)
{
	struct mrc_device *mdev = mr->mdev;

	atomic_inc(&mdev->num_mrs);
	atomic_inc(&mdev->num_mrs_type[mr->type]);
	atomic64_inc(&mdev->stats_mr_regs);
}

static void mrc_mr_uncount(struct mrc_mr *mr)
{
	atomic_dec(&mr->mdev->num_mrs_type[mr->type]);
	atomic_dec(&mr->mdev->num_mrs);
}

/* Reserve the translation of @in, and write it if it has entries. */
static int mrc_mr_put_xlt(struct mrc_mr *mr, const struct mrc_install *in)
{
	struct mrc_device *mdev = mr->mdev;
	int ret;

	if (in->table)
		return mrc_xlt_table_write(mdev, in->table);

	if (mrc_inject(mdev, MRC_STAGE_XLT_ALLOC))
		return -ENOSPC;
	ret = mrc_xlt_alloc(mdev, in->xlt_bytes, &mr->xlt);
	if (ret)
		return ret;
	/* No entries yet, so no fence: the context is the only write. */
	if (!in->write)
		return 0;
	ret = in->write(mr, in->arg);
	if (ret) {
		mrc_xlt_free(mdev, &mr->xlt);
		return ret;
	}
	mdev->ops->fence(mdev);
	return 0;
}

/* Free what mrc_mr_put_xlt() reserved. */
static void mrc_mr_drop_xlt(struct mrc_mr *mr, const struct mrc_install *in)
{
	if (in->table)
		mrc_xlt_table_free(mr->mdev, in->table);
	else
		mrc_xlt_free(mr->mdev, &mr->xlt);
}

/**
 * mrc_mr_install - the key, translation and context of a registration
 * @mr: from mrc_mr_zalloc() or mrc_mr_alloc(), with @mr->key the key
 *	wanted (0: any) and the fields @in's hooks read set
 * @in: the translation and context, as struct mrc_install says
 *
 * The one setup every kind of MR uses: take the key (its owner is @mr),
 * reserve its translation space and write its entries, fence once, write
 * the mkey context last, then count the MR and let lookups by key find
 * it. Each step is a failure-injection stage (KEY_ALLOC, XLT_ALLOC,
 * WRITE_XLT for a planned table, WRITE_MKEY). On failure everything this
 * did is undone in reverse order, the key given back, and @mr->key is 0.
 *
 * Context: process context; may sleep.
 * Return: 0; -ENOSPC when no key or not enough translation space is free;
 * -ENOKEY if the requested key was taken meanwhile; -ENOMEM; or the error
 * of a backend op or of @in->write.
 */
int mrc_mr_install(struct mrc_mr *mr, const struct mrc_install *in)
{
	struct mrc_device *mdev = mr->mdev;
	struct mrc_mkey_ctx ctx;
	int ret;

	if (mrc_inject(mdev, MRC_STAGE_KEY_ALLOC)) {
		mr->key = 0;
		return -ENOSPC;
	}
	ret = mrc_mkey_take(mdev, mr, MRC_MKEY_KIND_MR, mr->key, &mr->key);
	if (ret) {
		mr->key = 0;
		return ret;
	}

	ret = mrc_mr_put_xlt(mr, in);
	if (ret)
		goto out_free_key;

	if (in->ctx)
		in->ctx(mr, &ctx);
	else
		mrc_ctx_fill(&ctx, mr->key, mr->pd, mr->access, in->table);
	/* A failed write leaves the slot as it was: INVALID. */
	ret = mrc_write_mkey(mdev, mr->key, &ctx);
	if (ret)
		goto out_drop_xlt;

	if (in->table)
		mrc_mr_set_xlt(mr, in->table);
	mrc_mr_count(mr);
	/* Complete: lookups by key may find it. */
	mrc_key_users_revive(&mr->users);
	mrc_dbg_mr(mr, "type %u mode %u shift %u entries %u xlt 0x%llx\n",
		   mr->type, mr->mode, mr->page_shift, mr->nentries,
		   mr->xlt.offset);
	return 0;

out_drop_xlt:
	mrc_mr_drop_xlt(mr, in);
out_free_key:
	/* A lookup that found the key meanwhile has left again. */
	mrc_key_users_quiesce(&mr->users);
	mrc_mkey_free(mdev, mr->key);
	mr->key = 0;
	return ret;
}

/**
 * mrc_check_pd - a PD argument is an initialised PD
 * @pd: the argument
 *
 * Context: any context.
 * Return: 0 or -EINVAL.
 */
int mrc_check_pd(const struct mrc_pd *pd)
{
	return pd && pd->mdev && pd->pdn ? 0 : -EINVAL;
}

/**
 * mrc_mr_lookup - find the MR that owns a live key and hold it
 * @mdev: registered device
 * @key: any 32-bit value
 *
 * The MR stays allocated and registered until mrc_mr_put():
 * mrc_dereg_mr() waits for the hold. The holder may take the MR's mutex;
 * its fields that rereg or a REG_MR change are only stable under it.
 *
 * Context: any context; does not sleep.
 * Return: the MR; ERR_PTR(-ENOKEY) if @key is not live (unknown index,
 * stale variant, MR being deregistered); -EINVAL if it is live but owned
 * by no MR (the local DMA key, a memory window).
 */
struct mrc_mr *mrc_mr_lookup(struct mrc_device *mdev, u32 key)
{
	enum mrc_mkey_kind kind;
	struct mrc_mr *mr;

	if (key == mdev->local_dma_lkey)
		return ERR_PTR(-EINVAL);

	rcu_read_lock();
	mr = mrc_mkey_find(mdev, key, &kind);
	if (!mr)
		mr = ERR_PTR(-ENOKEY);
	else if (kind != MRC_MKEY_KIND_MR)
		mr = ERR_PTR(-EINVAL);
	else if (!mrc_key_users_tryget(&mr->users))
		mr = ERR_PTR(-ENOKEY);
	rcu_read_unlock();
	return mr;
}

/**
 * mrc_mr_put - drop a hold from mrc_mr_lookup()
 * @mr: the MR
 *
 * Context: any context.
 */
void mrc_mr_put(struct mrc_mr *mr)
{
	mrc_key_users_put(&mr->users);
}

/**
 * mrc_mr_state - the state of a registered MR's context
 * @mr: a live MR, held or found under RCU
 *
 * Every registration is VALID while registered, except a fast-reg MR,
 * which is FREE between an invalidation and the next REG_MR. Read without
 * the MR's mutex, the answer is a snapshot.
 *
 * Context: any context.
 * Return: enum mrc_mkey_state.
 */
enum mrc_mkey_state mrc_mr_state(const struct mrc_mr *mr)
{
	const struct mrc_kind_ops *kind = mrc_mr_kind(mr);

	return kind->state ? kind->state(mr) : MRC_MKEY_VALID;
}

/*
 * The checks of a user range that need no allocation: the range itself,
 * the key's range, and the page offset rule (an MTT entry maps a whole
 * page, so the key's address must sit at the same offset in its page as
 * the user address does).
 */
int mrc_check_user_range(u64 start, u64 length, u64 iova)
{
	u64 end;
	int ret;

	ret = mrc_umem_check_range(start, length);
	if (ret)
		return ret;
	if ((start ^ iova) & ~PAGE_MASK)
		return -EINVAL;
	if (check_add_overflow(iova, length, &end))
		return -EINVAL;
	return 0;
}

/**
 * mrc_dereg_mr - deregister a memory region and free it
 * @mr: a registered MR; not used by the caller after success
 *
 * Lookups by key (a window bind, an invalidation) are turned away and
 * those still holding the MR waited for. The key is then invalidated in
 * the device (ops->invalidate_mkey returns only once no device access
 * through it is still running); then the translation space is freed, user
 * memory unmapped, unpinned and uncharged, the key freed and @mr freed
 * after an RCU grace period. Indirect keys naming @mr are not tracked:
 * their entries name a key that is no longer live, so the device's walks
 * through them fail from now on.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBUSY while memory windows are bound (nothing changes); or
 * the error of ops->invalidate_mkey, after which the MR is still
 * registered and usable and the call may be repeated.
 */
int mrc_dereg_mr(struct mrc_mr *mr)
{
	return mrc_dereg_mr_nested(mr, 0);
}
EXPORT_SYMBOL_GPL(mrc_dereg_mr);

/**
 * mrc_dereg_mr_nested - mrc_dereg_mr() of an MR owned by another MR
 * @mr: as for mrc_dereg_mr()
 * @subclass: lockdep subclass of @mr->lock: SINGLE_DEPTH_NESTING for an
 *	implicit ODP child deregistered under its parent's lock, else 0
 *
 * Context: process context; may sleep.
 * Return: as mrc_dereg_mr().
 */
int mrc_dereg_mr_nested(struct mrc_mr *mr, unsigned int subclass)
{
	struct mrc_device *mdev = mr->mdev;
	int ret;

	mrc_key_users_quiesce(&mr->users);
	mutex_lock_nested(&mr->lock, subclass);
	if (atomic_read(&mr->num_mw)) {
		ret = -EBUSY;
		goto out_unlock;
	}

	ret = mdev->ops->invalidate_mkey(mdev, mrc_key_index(mr->key));
	if (ret)
		goto out_unlock;

	mrc_mr_drop_counter(mr);
	/* The kind's own state: ODP, a dma-buf attachment. */
	if (mrc_mr_kind(mr)->release)
		mrc_mr_kind(mr)->release(mr);
	if (mr->xlt.size)
		mrc_xlt_free(mdev, &mr->xlt);
	mrc_umem_release(mr->umem);
	kvfree(mr->bufs);
	mrc_mkey_free(mdev, mr->key);
	mrc_mr_uncount(mr);
	mrc_dbg_mr(mr, "deregistered\n");
	mutex_unlock(&mr->lock);

	mrc_mr_free(mr);
	return 0;

out_unlock:
	mutex_unlock(&mr->lock);
	/* Still registered: lookups by key may find it again. */
	mrc_key_users_revive(&mr->users);
	return ret;
}
