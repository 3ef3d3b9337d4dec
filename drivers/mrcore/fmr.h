/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: the FMR as fmr.c (FMRs) and fmr_pool.c (their pools) share it.
 */
#ifndef _MRCORE_FMR_H
#define _MRCORE_FMR_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <rdma/mrcore_fmr.h>

#include "mrcore_loc.h"

/* Buckets of a pool's cache: 2^8. */
#define MRC_FMR_HASH_BITS	8
/* mrc_fmr.users of a pool FMR the pool owns: no hit may take it. */
#define MRC_FMR_OWNED		(-1)

/**
 * struct mrc_fmr - an FMR
 * @mr: the MR; first, because mrc_dereg_mr() frees it as a struct mrc_mr
 *	(kfree_rcu() of its address), which is then the address of this
 * @max_pages: MTT entries of each of the two tables in @mr.xlt
 * @max_maps: maps allowed between two unmaps
 * @maps: maps since the last unmap; under @mr.lock
 * @page_shift: log2 of the page size of every map
 * @state: enum mrc_mkey_state of the context as mrcore last wrote it:
 *	FREE or VALID; under @mr.lock
 * @table: the table (0 or 1) the VALID context uses; under @mr.lock
 * @pool: the pool that owns the FMR, or NULL
 * @list: on the pool's free list (with or without users), its dirty list
 *	or a flush's batch; off every list while owned by a miss or strict
 *	unmap, or parked
 * @node: in the pool's cache while @cached
 * @cached: in the pool's cache, with @pages, @npages and @iova its key
 * @users: users of the pool FMR (taken and dropped without the pool's
 *	lock), or MRC_FMR_OWNED while the pool owns it: a miss mapping it,
 *	a flush or strict unmap unmapping it, or on the dirty list
 * @hot: hit since the last miss passed it on the free list
 * @parked: taken off the free list in use by a miss; the last user puts
 *	it back
 * @retire: mapped max_remaps times: the last user sends it to the dirty
 *	list
 * @remaps: maps since the pool last unmapped the FMR on the device
 * @pages: the page list of the cached mapping (max_pages entries)
 * @npages: its length
 * @iova: its iova
 *
 * The pool fields but @users and @hot are under the pool's lock; @remaps,
 * @retire and the key (@pages, @npages, @iova) change only while the pool
 * owns the FMR, so a user or a hit holding @users reads them as they were.
 */
struct mrc_fmr {
	struct mrc_mr mr;
	u32 max_pages;
	u32 max_maps;
	u32 maps;
	u8 page_shift;
	u8 state;
	u8 table;
	struct mrc_fmr_pool *pool;
	struct list_head list;
	struct hlist_node node;
	bool cached;
	atomic_t users;
	bool hot;
	bool parked;
	bool retire;
	u32 remaps;
	u64 *pages;
	u32 npages;
	u64 iova;
};

static_assert(offsetof(struct mrc_fmr, mr) == 0);

/* Only for an MR whose type is MRC_MR_FMR. */
static inline struct mrc_fmr *to_mrc_fmr(struct mrc_mr *mr)
{
	return container_of(mr, struct mrc_fmr, mr);
}

int mrc_fmr_check_attr(const struct mrc_pd *pd, u32 access,
		       const struct mrc_fmr_attr *attr);
struct mrc_fmr *mrc_fmr_create(struct mrc_pd *pd, u32 access,
			       const struct mrc_fmr_attr *attr, u32 key);
int mrc_fmr_map(struct mrc_fmr *fmr, const u64 *pages, u32 npages, u64 iova);
int mrc_fmr_unmap_batch(struct mrc_device *mdev, struct mrc_mr *const *mrs,
			unsigned int nmrs);
int mrc_fmr_destroy(struct mrc_fmr *fmr);

#endif /* _MRCORE_FMR_H */
