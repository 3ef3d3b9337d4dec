/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: the ODP state as odp.c (explicit ODP) and odp_implicit.c
 * (implicit parents and their children) share it.
 */
#ifndef _MRCORE_ODP_H
#define _MRCORE_ODP_H

#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "mrcore_loc.h"

struct mrc_odp_chunk;

/**
 * struct mrc_odp_implicit - the children of an implicit ODP MR
 * @lock: protects @children and the parent's KSM entries; taken before
 *	a child's locks and the mmap lock, never by a notifier callback
 * @children: child index (address >> MRC_ODP_CHILD_SHIFT) -> child MR
 * @mm: the registering mm (mmgrab()): children's notifiers go on it
 * @reclaim_work: deregisters children with no page mapped
 * @reclaim_lock: protects @dying against the queuing of @reclaim_work
 * @dying: the parent is being deregistered: @reclaim_work is not queued
 * @live: children registered now
 * @created: children ever created
 * @reclaimed: children ever reclaimed while idle
 */
struct mrc_odp_implicit {
	struct mutex lock;	/* children, the parent's KSM entries */
	struct xarray children;
	struct mm_struct *mm;
	struct work_struct reclaim_work;
	spinlock_t reclaim_lock;	/* dying */
	bool dying;
	atomic64_t live;
	atomic64_t created;
	atomic64_t reclaimed;
};

/**
 * struct mrc_odp - the on-demand paging state of one MR
 * @mr: the MR
 * @parent: an implicit child's parent, else NULL; the child's counters
 *	add to the parent's
 * @imp: an implicit parent's children, else NULL; the parent has no
 *	notifier, no per-page state and no MTT of its own
 * @active: an implicit child's faults in progress (taken under the
 *	parent's @imp->lock): reclaim leaves the child alone meanwhile
 * @notifier: covers [@start, @start + @npages pages) of the registering mm
 * @umem_mutex: protects @chunks (the pointers and their contents) and the
 *	MR's MTT entries in device memory; taken by the fault path and the
 *	notifier callback
 * @start: user address of MTT entry 0 (page aligned)
 * @npages: MTT entries, one per PAGE_SIZE page
 * @writable: the MR has write rights: entries may carry MRC_MTT_WRITE
 * @chunks: per MRC_ODP_CHUNK_PAGES pages, their state, or NULL while no
 *	fault has mapped into them (none of them mapped)
 * @nchunks: entries of @chunks
 * @mapped: pages mapped now
 * @faults: see struct mrc_odp_stats
 * @fault_pages: see struct mrc_odp_stats
 * @invalidations: see struct mrc_odp_stats
 * @invalidated_pages: see struct mrc_odp_stats
 * @prefetched_pages: see struct mrc_odp_stats
 */
struct mrc_odp {
	struct mrc_mr *mr;
	struct mrc_odp *parent;
	struct mrc_odp_implicit *imp;
	atomic_t active;
	struct mmu_interval_notifier notifier;
	struct mutex umem_mutex;	/* pfns, dma, device MTT entries */
	u64 start;
	u64 npages;
	bool writable;
	struct mrc_odp_chunk **chunks;
	u64 nchunks;
	atomic64_t mapped;
	atomic64_t faults;
	atomic64_t fault_pages;
	atomic64_t invalidations;
	atomic64_t invalidated_pages;
	atomic64_t prefetched_pages;
};

/* Implicit ODP: the whole address space, start 0 and length U64_MAX. */
static inline bool mrc_odp_is_implicit(const struct mrc_reg_attr *attr)
{
	return !attr->start && attr->length == U64_MAX;
}

/* Page index of a child's first page in its parent's address space. */
#define MRC_ODP_CHILD_PAGE_SHIFT	(MRC_ODP_CHILD_SHIFT - PAGE_SHIFT)

/* odp.c */
long mrc_odp_map_range(struct mrc_odp *odp, u64 idx, u64 n, u32 flags);
struct mrc_mr *mrc_odp_reg_range(struct mrc_pd *pd,
				 const struct mrc_reg_attr *attr,
				 struct mm_struct *mm, struct mrc_odp *parent);
void mrc_odp_free(struct mrc_odp *odp);

/* odp_implicit.c */
long mrc_odp_implicit_map(struct mrc_odp *podp, u64 idx, u64 n, u32 flags);
void mrc_odp_reclaim_kick(struct mrc_odp_implicit *imp);
struct mrc_mr *mrc_odp_reg_implicit(struct mrc_pd *pd,
				    const struct mrc_reg_attr *attr);
void mrc_odp_release_implicit(struct mrc_odp *odp);
void mrc_odp_implicit_free(struct mrc_odp_implicit *imp);

#endif /* _MRCORE_ODP_H */
