// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: implicit on-demand paging, a parent over the whole address
 * space whose children are explicit ODP MRs (odp.c).
 *
 * Implicit ODP (start 0, length U64_MAX: the whole address space) needs a
 * device with MRC_CAP_KSM. The parent MR is a KSM-mode key with
 * MRC_MKEY_F_ODP over [0, MRC_ODP_IMPLICIT_SPAN), one entry per block of
 * 1 << MRC_ODP_CHILD_SHIFT bytes, all naming key 0 (non-present) at
 * first. A fault on the parent creates the child of its block: an
 * explicit ODP MR over that block, with its own notifier, no rights of
 * its own (only the parent's walk reaches it) and the parent's PD; the
 * parent's entry then names it. Faults below the parent are reported
 * against the parent's key (the device reports a fault against the
 * outermost ODP context of the walk), so children are only ever faulted
 * through their parent, under @imp->lock's bookkeeping. A child whose
 * pages are all gone (munmap, MADV_DONTNEED, reclaim) is idle: the
 * parent's reclaim work unhooks its entry, waits for the device
 * (ops->sync_mkey() on the parent) and deregisters it. Deregistering the
 * parent stops the reclaim work and deregisters every child.
 *
 * Reading order: the parent's KSM entries, the reclaim of idle children,
 * a child's creation and a fault through the parent, then the parent's
 * registration, release and free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "odp.h"

/*
 * Point the parent's KSM entry @ci at child key @key (0: non-present).
 *
 * Walks read the entry while it changes, its key first and then its
 * address; write_xlt stores whole 8-byte words. So a hook stores the
 * address word, fences, then the word holding the key, and an unhook
 * stores the key word alone: a walk that reads a key reads the address
 * hooked with it (entry @ci's address is the same for every child of
 * the block), never a key with a stale or half-written address.
 */
static void mrc_odp_ksm_write(struct mrc_odp *podp, u64 ci, u32 key)
{
	struct mrc_mr *parent = podp->mr;
	struct mrc_device *mdev = parent->mdev;
	u64 off = parent->xlt.offset + ci * MRC_KLM_ENTRY_SIZE;
	struct mrc_klm e = {
		.key = cpu_to_le32(key),
		.addr = cpu_to_le64(ci << MRC_ODP_CHILD_SHIFT),
	};

	BUILD_BUG_ON(offsetof(struct mrc_klm, addr) != sizeof(u64) ||
		     offsetof(struct mrc_klm, key) >= sizeof(u64));
	lockdep_assert_held(&podp->imp->lock);
	/* Checked range: device memory writes do not fail. */
	if (key) {
		WARN_ON_ONCE(mdev->ops->write_xlt(mdev, off + sizeof(u64),
						  &e.addr, sizeof(u64)));
		mdev->ops->fence(mdev);
	}
	WARN_ON_ONCE(mdev->ops->write_xlt(mdev, off, &e, sizeof(u64)));
	mdev->ops->fence(mdev);
}

/*
 * Create the child of block @ci of implicit parent @podp and hook it into
 * the parent's entry. The child is an explicit ODP MR of the parent's PD
 * with no rights in its context: requesters reach it only through the
 * parent, whose rights the walk checks; its MTT entries are writable
 * when the parent is.
 */
static struct mrc_mr *mrc_odp_child_create(struct mrc_odp *podp, u64 ci)
{
	struct mrc_odp_implicit *imp = podp->imp;
	struct mrc_mr *parent = podp->mr;
	struct mrc_reg_attr attr = {
		.type = MRC_MR_USER,
		.access = MRC_ACCESS_ON_DEMAND,
		.start = ci << MRC_ODP_CHILD_SHIFT,
		.iova = ci << MRC_ODP_CHILD_SHIFT,
		.length = BIT_ULL(MRC_ODP_CHILD_SHIFT),
	};
	struct mrc_mr *mr;
	int ret;

	lockdep_assert_held(&imp->lock);

	/* The process may have exited: its mm then takes no notifier. */
	if (!mmget_not_zero(imp->mm))
		return ERR_PTR(-EFAULT);
	mr = mrc_odp_reg_range(parent->pd, &attr, imp->mm, podp);
	mmput(imp->mm);
	if (IS_ERR(mr))
		return mr;

	ret = xa_insert(&imp->children, ci, mr, GFP_KERNEL);
	if (ret) {
		WARN_ON_ONCE(mrc_dereg_mr_nested(mr, SINGLE_DEPTH_NESTING));
		return ERR_PTR(ret);
	}
	mrc_odp_ksm_write(podp, ci, mr->key);
	atomic64_inc(&imp->live);
	atomic64_inc(&imp->created);
	atomic64_inc(&parent->mdev->odp.children_created);
	return mr;
}

/**
 * mrc_odp_implicit_map - map pages of an implicit parent
 * @podp: the parent's state
 * @idx: first page, in the parent's address space
 * @n: pages, all inside one child's block
 * @flags: as for mrc_odp_map_range()
 *
 * Through the child, created if it does not exist. While the fault runs,
 * the child is marked active so reclaim leaves it alone.
 *
 * Context: process context, not holding any mmap_lock; may sleep.
 * Return: as mrc_odp_map_range(), or the error of the child's creation.
 */
long mrc_odp_implicit_map(struct mrc_odp *podp, u64 idx, u64 n, u32 flags)
{
	struct mrc_odp_implicit *imp = podp->imp;
	u64 ci = idx >> MRC_ODP_CHILD_PAGE_SHIFT;
	struct mrc_odp *codp;
	struct mrc_mr *child;
	bool idle;
	long ret;

	mutex_lock(&imp->lock);
	child = xa_load(&imp->children, ci);
	if (!child)
		child = mrc_odp_child_create(podp, ci);
	if (!IS_ERR(child))
		atomic_inc(&child->odp->active);
	mutex_unlock(&imp->lock);
	if (IS_ERR(child))
		return PTR_ERR(child);

	codp = child->odp;
	ret = mrc_odp_map_range(codp, idx - (ci << MRC_ODP_CHILD_PAGE_SHIFT),
				n, flags);
	/*
	 * A child the fault could not map into is idle at once. Under the
	 * lock: once active drops to 0 a reclaim may free the child, and
	 * it decides under the lock too.
	 */
	mutex_lock(&imp->lock);
	idle = atomic_dec_and_test(&codp->active) &&
	       !atomic64_read(&codp->mapped);
	mutex_unlock(&imp->lock);
	if (idle)
		mrc_odp_reclaim_kick(imp);
	return ret;
}

/*
 * Find idle children (no page mapped, no fault in progress), unhook them
 * from the parent's entries, wait for the device walks that may have
 * passed through those entries, and deregister them.
 */
static void mrc_odp_reclaim(struct work_struct *work)
{
	struct mrc_odp_implicit *imp = container_of(work,
						    struct mrc_odp_implicit,
						    reclaim_work);
	struct mrc_mr *child, *parent = NULL;
	struct xarray idle;
	unsigned long ci;
	u64 n = 0;

	xa_init(&idle);
	mutex_lock(&imp->lock);
	xa_for_each(&imp->children, ci, child) {
		struct mrc_odp *codp = child->odp;

		if (atomic_read(&codp->active) ||
		    atomic64_read(&codp->mapped))
			continue;
		/* No memory for the list: the child waits for the next run. */
		if (xa_insert(&idle, ci, child, GFP_KERNEL))
			break;
		parent = codp->parent->mr;
		mrc_odp_ksm_write(codp->parent, ci, 0);
		xa_erase(&imp->children, ci);
	}
	if (parent)
		parent->mdev->ops->sync_mkey(parent->mdev,
					     mrc_key_index(parent->key));
	mutex_unlock(&imp->lock);

	xa_for_each(&idle, ci, child) {
		struct mrc_device *mdev = child->mdev;

		/* Nothing can fail the device's invalidation of a child. */
		WARN_ON_ONCE(mrc_dereg_mr_nested(child, SINGLE_DEPTH_NESTING));
		atomic64_inc(&mdev->odp.children_reclaimed);
		n++;
	}
	xa_destroy(&idle);
	atomic64_sub(n, &imp->live);
	atomic64_add(n, &imp->reclaimed);
}

/**
 * mrc_odp_reclaim_kick - a child may be idle: look for idle children
 * @imp: the parent's
 *
 * Queues the reclaim work unless the parent is going.
 *
 * Context: any context.
 */
void mrc_odp_reclaim_kick(struct mrc_odp_implicit *imp)
{
	unsigned long flags;

	spin_lock_irqsave(&imp->reclaim_lock, flags);
	if (!imp->dying)
		queue_work(system_unbound_wq, &imp->reclaim_work);
	spin_unlock_irqrestore(&imp->reclaim_lock, flags);
}

/**
 * mrc_odp_reg_implicit - register an implicit ODP parent
 * @pd: a checked protection domain
 * @attr: implicit ODP that passed mrc_odp_check()
 *
 * A KSM key over the user address space whose entries name no child yet.
 * Nothing else is allocated until a fault: the KSM table is already
 * non-present on a device with MRC_CAP_XLT_ZEROED, and written with zeros
 * otherwise.
 *
 * Context: process context of the process that owns the memory.
 * Return: the MR or an ERR_PTR().
 */
struct mrc_mr *mrc_odp_reg_implicit(struct mrc_pd *pd,
				    const struct mrc_reg_attr *attr)
{
	struct mrc_xlt_table t = {
		.iova = 0,
		.length = MRC_ODP_IMPLICIT_SPAN,
		.writable = mrc_access_writable(attr->access),
		.mode = MRC_ACCESS_MODE_KSM,
		.page_shift = MRC_ODP_CHILD_SHIFT,
		.nentries = MRC_ODP_IMPLICIT_SPAN >> MRC_ODP_CHILD_SHIFT,
		.odp = true,
	};
	struct mrc_odp_implicit *imp;
	struct mrc_odp *odp;
	struct mrc_mr *mr;
	int ret;

	odp = kzalloc(sizeof(*odp), GFP_KERNEL);
	if (!odp)
		return ERR_PTR(-ENOMEM);
	mutex_init(&odp->umem_mutex);
	imp = kzalloc(sizeof(*imp), GFP_KERNEL);
	if (!imp) {
		ret = -ENOMEM;
		goto out_free_odp;
	}
	odp->imp = imp;
	mutex_init(&imp->lock);
	xa_init(&imp->children);
	INIT_WORK(&imp->reclaim_work, mrc_odp_reclaim);
	spin_lock_init(&imp->reclaim_lock);
	odp->npages = MRC_ODP_IMPLICIT_SPAN >> PAGE_SHIFT;
	odp->writable = t.writable;

	mr = mrc_mr_alloc(pd, attr);
	if (!mr) {
		ret = -ENOMEM;
		goto out_free_odp;
	}
	odp->mr = mr;
	mr->odp = odp;

	ret = mrc_mr_install_table(mr, &t);
	if (ret)
		goto out_free_mr;
	mmgrab(current->mm);
	imp->mm = current->mm;
	return mr;

out_free_mr:
	mrc_mr_free(mr);
out_free_odp:
	mrc_odp_free(odp);
	return ERR_PTR(ret);
}

/**
 * mrc_odp_release_implicit - deregister every child of a parent
 * @odp: the parent's state; the device no longer resolves its key and
 *	its holders (faults, prefetches) are gone
 *
 * Context: process context; may sleep.
 */
void mrc_odp_release_implicit(struct mrc_odp *odp)
{
	struct mrc_odp_implicit *imp = odp->imp;
	struct mrc_mr *child;
	unsigned long ci;

	spin_lock_irq(&imp->reclaim_lock);
	imp->dying = true;
	spin_unlock_irq(&imp->reclaim_lock);
	cancel_work_sync(&imp->reclaim_work);

	/* No fault holds the parent, no reclaim runs: the children are ours. */
	xa_for_each(&imp->children, ci, child) {
		xa_erase(&imp->children, ci);
		WARN_ON_ONCE(mrc_dereg_mr_nested(child, SINGLE_DEPTH_NESTING));
		atomic64_dec(&imp->live);
	}
}

/**
 * mrc_odp_implicit_free - free the children bookkeeping of a parent
 * @imp: the parent's, with no child left
 *
 * Context: process context.
 */
void mrc_odp_implicit_free(struct mrc_odp_implicit *imp)
{
	xa_destroy(&imp->children);
	mutex_destroy(&imp->lock);
	if (imp->mm)
		mmdrop(imp->mm);
	kfree(imp);
}

