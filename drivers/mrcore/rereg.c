// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: rereg, a registration changed in place (mrc_rereg_user_mr()).
 *
 * Rereg never touches the live translation: a new one goes to fresh space
 * and the context is switched in one write_mkey, which returns only when
 * nothing uses the old context any more; only then is the old translation
 * freed. Until that write succeeds the old registration is untouched, so
 * every failure leaves it valid and usable.
 *
 * Reading order: the check that needs no state, then under the MR's lock
 * the pin, the plan, the switch of the context and the commit that frees
 * what only the old context reached; mrc_rereg_user_mr() last.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/mutex.h>

#include "mrcore_loc.h"

/**
 * struct mrc_rereg - the registration a rereg switches to
 * @pd: new (or unchanged) protection domain
 * @access: new (or unchanged) access
 * @umem: newly pinned memory, or NULL to keep the MR's
 * @table: the translation; written to fresh space if @new_table
 * @new_table: @table is new, not the MR's live one
 */
struct mrc_rereg {
	struct mrc_pd *pd;
	u32 access;
	struct mrc_umem *umem;
	struct mrc_xlt_table table;
	bool new_table;
};

/* The checks of a rereg that need no allocation. */
static int mrc_rereg_check(struct mrc_mr *mr, int flags, struct mrc_pd *pd,
			   u32 access)
{
	if (!flags || flags & ~MRC_REREG_SUPPORTED)
		return -EINVAL;
	/* ODP and dma-buf MRs have no pinned memory to swap: not offered. */
	if (mr->odp || mr->dmabuf)
		return -EOPNOTSUPP;
	/*
	 * An indirect key's rights were checked against the keys it names
	 * at registration, and its context carries MRC_MKEY_F_NESTED_RIGHTS;
	 * a rereg would rewrite neither: register a new one instead.
	 */
	if (mr->type == MRC_MR_INDIRECT)
		return -EOPNOTSUPP;
	if ((flags & MRC_REREG_PD) && (mrc_check_pd(pd) || pd->mdev != mr->mdev))
		return -EINVAL;
	if (flags & MRC_REREG_ACCESS)
		return mrc_check_access(access);
	return 0;
}

/*
 * Pin the new memory if the rereg needs any: the new range for TRANS, or
 * the same range again, writable, when ACCESS adds write rights to memory
 * that was pinned read-only (ib_umem_check_rereg's rule). Such a re-pin
 * that finds the memory not writable fails -EACCES.
 */
static int mrc_rereg_pin(struct mrc_mr *mr, int flags, u64 start, u64 length,
			 struct mrc_rereg *new)
{
	struct mrc_umem *umem;

	if (flags & MRC_REREG_TRANS) {
		umem = mrc_umem_get(mr->mdev, start, length, new->access);
	} else if (mr->type == MRC_MR_USER &&
		   mrc_access_writable(new->access) &&
		   !mrc_umem_writable(mr->umem)) {
		umem = mrc_umem_get(mr->mdev, mrc_umem_start(mr->umem),
				    mr->length, new->access);
		if (PTR_ERR_OR_ZERO(umem) == -EFAULT)
			umem = ERR_PTR(-EACCES);
	} else {
		return 0;
	}

	if (IS_ERR(umem))
		return PTR_ERR(umem);
	new->umem = umem;
	return 0;
}

/*
 * Plan the new translation. The entries change with new memory, and in
 * MTT mode also when write rights come or go (entries carry the W bit);
 * otherwise the live translation is kept as it is.
 */
static int mrc_rereg_plan(struct mrc_mr *mr, u64 iova, u64 length,
			  struct mrc_rereg *new)
{
	bool writable = mrc_access_writable(new->access);
	struct mrc_xlt_table *t = &new->table;

	if (new->umem) {
		new->new_table = true;
		return mrc_user_xlt(mr->mdev, new->umem, iova, length,
				    new->access, t);
	}

	mrc_mr_get_xlt(mr, t);
	if (mr->mode != MRC_ACCESS_MODE_MTT || t->writable == writable)
		return 0;

	new->new_table = true;
	t->writable = writable;
	mrc_mr_segs(mr, &t->segs);
	return mrc_xlt_plan(mr->mdev, t);
}

/* Switch the live context to @new. Until this succeeds, nothing changed. */
static int mrc_rereg_switch(struct mrc_mr *mr, struct mrc_rereg *new)
{
	struct mrc_device *mdev = mr->mdev;
	struct mrc_mkey_ctx ctx;
	int ret;

	lockdep_assert_held(&mr->lock);

	if (new->new_table) {
		ret = mrc_xlt_table_write(mdev, &new->table);
		if (ret)
			return ret;
	}

	mrc_ctx_fill(&ctx, mr->key, new->pd, new->access, &new->table);
	/* The new context keeps counting where the old one did. */
	ctx.counter = mrc_mr_counter_index(mr);
	/* Returns once nothing uses the old context; else it is intact. */
	ret = mrc_write_mkey(mdev, mr->key, &ctx);
	if (ret && new->new_table)
		mrc_xlt_table_free(mdev, &new->table);
	return ret;
}

/* The switch succeeded: free what only the old context reached. */
static void mrc_rereg_commit(struct mrc_mr *mr, struct mrc_rereg *new)
{
	lockdep_assert_held(&mr->lock);

	if (new->new_table && mr->xlt.size)
		mrc_xlt_free(mr->mdev, &mr->xlt);
	if (new->umem) {
		mrc_umem_release(mr->umem);
		mr->umem = new->umem;
	}
	mr->pd = new->pd;
	mr->access = new->access;
	mrc_mr_set_xlt(mr, &new->table);
	atomic64_inc(&mr->mdev->stats_mr_reregs);
}

/*
 * Everything mrc_rereg_user_mr() does under the MR's lock, once the
 * arguments that need no state passed.
 */
static int mrc_rereg_locked(struct mrc_mr *mr, int flags, struct mrc_rereg *new,
			    u64 start, u64 length, u64 iova)
{
	bool old_zb = mr->access & MRC_ACCESS_ZERO_BASED;
	bool new_zb = new->access & MRC_ACCESS_ZERO_BASED;
	int ret;

	lockdep_assert_held(&mr->lock);

	if (flags & MRC_REREG_TRANS) {
		if (mr->type != MRC_MR_USER)
			return -EINVAL;
		iova = mrc_effective_iova(iova, new->access);
		ret = mrc_check_user_range(start, length, iova);
		if (ret)
			return ret;
	} else {
		/* Where the key's addresses start is part of the translation. */
		if (old_zb != new_zb)
			return -EINVAL;
		iova = mr->iova;
		length = mr->length;
	}

	ret = mrc_rereg_pin(mr, flags, start, length, new);
	if (ret)
		return ret;

	ret = mrc_rereg_plan(mr, iova, length, new);
	if (ret)
		goto out_release_umem;

	ret = mrc_rereg_switch(mr, new);
	if (ret)
		goto out_release_umem;

	mrc_rereg_commit(mr, new);
	return 0;

out_release_umem:
	mrc_umem_release(new->umem);
	return ret;
}

/**
 * mrc_rereg_user_mr - change a registration in place, keeping its key
 * @mr: a registered MR
 * @flags: MRC_REREG_TRANS, MRC_REREG_PD and/or MRC_REREG_ACCESS
 * @pd: new protection domain (MRC_REREG_PD), of the MR's device
 * @start: new user address (MRC_REREG_TRANS)
 * @length: new length (MRC_REREG_TRANS)
 * @iova: new key address (MRC_REREG_TRANS), with the rules of
 *	mrc_reg_user_mr()
 * @access: new rights (MRC_REREG_ACCESS)
 *
 * PD and ACCESS apply to every kind of MR but ODP, dma-buf and indirect
 * ones (-EOPNOTSUPP); TRANS only to user MRs. The key
 * stays the same (IBTA allows either; keeping it means a peer's rkey
 * keeps working). The new registration is built completely first: new
 * memory is pinned for TRANS, or re-pinned writable when ACCESS adds write
 * rights to memory pinned read-only; new entries go to fresh translation
 * space whenever they differ from the live ones (new memory, or MTT
 * entries whose W bit changes), so the live context never reaches a
 * half-written table. One write_mkey then switches the context. Only after
 * that are the old translation space and memory freed.
 *
 * Changing ZERO_BASED needs MRC_REREG_TRANS. RELAXED_ORDERING and HUGETLB
 * take effect at the next pin.
 *
 * Context: process context of the process that owns the memory for TRANS
 * or a re-pin; may sleep.
 * Return: 0; -EINVAL for no flag or an unknown one, a bad @pd or @access,
 * TRANS on an MR that is not a user MR, a ZERO_BASED change without
 * TRANS, or a range mrc_reg_user_mr() would refuse; -EOPNOTSUPP for an
 * ODP, dma-buf or indirect MR; -EBUSY while memory windows are bound
 * to @mr; -EACCES when write
 * rights are added and the memory cannot be pinned writable; otherwise the
 * errors of mrc_reg_user_mr(). On any error the old registration is
 * unchanged, valid and usable.
 */
int mrc_rereg_user_mr(struct mrc_mr *mr, int flags, struct mrc_pd *pd,
		      u64 start, u64 length, u64 iova, u32 access)
{
	struct mrc_rereg new = {};
	int ret;

	ret = mrc_rereg_check(mr, flags, pd, access);
	if (ret)
		return ret;

	mutex_lock(&mr->lock);
	/*
	 * A bound window was checked against the MR's PD, rights and range
	 * when it was bound; a rereg would change them under it (IBA: the
	 * MR must have no window bound). Binds take this lock too.
	 */
	if (atomic_read(&mr->num_mw)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	new.pd = flags & MRC_REREG_PD ? pd : mr->pd;
	new.access = flags & MRC_REREG_ACCESS ? access : mr->access;
	ret = mrc_rereg_locked(mr, flags, &new, start, length, iova);
out_unlock:
	mrc_dbg_mr(mr, "flags %#x: %d\n", flags, ret);
	mutex_unlock(&mr->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_rereg_user_mr);
