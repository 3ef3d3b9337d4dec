/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: FMRs ("fast memory regions") and FMR pools, the kernel API the
 * memory-regions document describes (ib_alloc_fmr(), ib_map_phys_fmr(),
 * ib_unmap_fmr(), ib_dealloc_fmr(); ib_create_fmr_pool(),
 * ib_fmr_pool_map_phys(), ib_fmr_pool_unmap(), ib_flush_fmr_pool()),
 * which ib_core no longer has. The CPU maps a page list onto an FMR's key
 * with a few device writes, and a pool caches mappings so that mapping the
 * same pages again writes nothing at all.
 *
 * Documentation/mrcore/fmr.rst has the semantics, the locking and the
 * security trade-off of a cache: an FMR unmapped from a non-strict pool
 * stays usable on the device, through its last key, until the pool
 * flushes it.
 */
#ifndef _RDMA_MRCORE_FMR_H
#define _RDMA_MRCORE_FMR_H

#include <rdma/mrcore.h>

/*
 * Every map gives the FMR's key a new variant, and variants are 8 bits:
 * at most this many maps between two unmaps, so that no two mappings of
 * one FMR live at the same time carry the same key.
 */
#define MRC_FMR_MAX_MAPS	255

/**
 * struct mrc_fmr_attr - the shape of an FMR, fixed at allocation
 * @max_pages: the longest page list a map may carry, in [1,
 *	mrc_fmr_max_pages()]
 * @max_maps: maps allowed between two unmaps (the first map included), in
 *	[1, MRC_FMR_MAX_MAPS]
 * @page_shift: log2 of the page size of every map; a size of the device's
 *	caps.page_size_bitmap
 */
struct mrc_fmr_attr {
	u32 max_pages;
	u32 max_maps;
	u8 page_shift;
};

/* fmr.c; mrc_alloc_fmr() in reg.c, the pools in fmr_pool.c */
u32 mrc_fmr_max_pages(const struct mrc_device *mdev);
struct mrc_mr *mrc_alloc_fmr(struct mrc_pd *pd, u32 access,
			     const struct mrc_fmr_attr *attr);
int mrc_map_phys_fmr(struct mrc_mr *mr, const u64 *pages, u32 npages,
		     u64 iova);
int mrc_unmap_fmr(struct mrc_mr *const *mrs, unsigned int nmrs);
int mrc_dealloc_fmr(struct mrc_mr *mr);

struct mrc_fmr_pool;

/* mrc_fmr_pool_param.flags */
#define MRC_FMR_POOL_CACHE	BIT(0)	/* look mappings up by page list + iova */
#define MRC_FMR_POOL_STRICT	BIT(1)	/* invalidate on the last unmap */
#define MRC_FMR_POOL_FLAGS	(MRC_FMR_POOL_CACHE | MRC_FMR_POOL_STRICT)

/* Largest pool, in FMRs. */
#define MRC_FMR_POOL_MAX_SIZE	65536

/**
 * struct mrc_fmr_pool_param - what mrc_create_fmr_pool() builds
 * @pool_size: FMRs in the pool, in [1, MRC_FMR_POOL_MAX_SIZE]; all are
 *	allocated at creation
 * @max_pages_per_fmr: the longest page list a map may carry
 * @page_shift: log2 of the page size of every map
 * @access: MRC_ACCESS_* rights of every FMR (ZERO_BASED and MW_BIND are
 *	refused)
 * @max_remaps: maps of one FMR between two flushes, in [1,
 *	MRC_FMR_MAX_MAPS]: an FMR whose last user unmaps it after this many
 *	goes to the dirty list, where only a flush makes it usable again
 * @dirty_watermark: dirty FMRs that wake the flush worker, in [1,
 *	@pool_size]
 * @flags: MRC_FMR_POOL_*
 * @flush_function: called after every flush (worker or
 *	mrc_flush_fmr_pool()), in process context with no pool lock held;
 *	may be NULL
 * @flush_arg: passed to @flush_function
 */
struct mrc_fmr_pool_param {
	u32 pool_size;
	u32 max_pages_per_fmr;
	u8 page_shift;
	u32 access;
	u32 max_remaps;
	u32 dirty_watermark;
	u32 flags;
	void (*flush_function)(struct mrc_fmr_pool *pool, void *arg);
	void *flush_arg;
};

/**
 * struct mrc_fmr_pool_stats - what a pool has done, for tests and tuning
 * @hits: maps served from the cache, writing nothing to the device
 * @misses: maps that mapped an FMR on the device
 * @remaps: misses that mapped an FMR still mapped (no unmap in between)
 * @exhausted: maps that failed -EAGAIN: no FMR was free
 * @flushes: flushes run (worker and mrc_flush_fmr_pool())
 * @flushed: FMRs unmapped by flushes
 * @strict_unmaps: FMRs unmapped on their last unmap (strict pools)
 * @in_use: FMRs with users now
 * @free: FMRs on the free list now (mapped and cached, or unmapped)
 * @dirty: FMRs on the dirty list now
 */
struct mrc_fmr_pool_stats {
	u64 hits;
	u64 misses;
	u64 remaps;
	u64 exhausted;
	u64 flushes;
	u64 flushed;
	u64 strict_unmaps;
	u32 in_use;
	u32 free;
	u32 dirty;
};

struct mrc_fmr_pool *mrc_create_fmr_pool(struct mrc_pd *pd,
					 const struct mrc_fmr_pool_param *param);
int mrc_destroy_fmr_pool(struct mrc_fmr_pool *pool);
struct mrc_mr *mrc_fmr_pool_map_phys(struct mrc_fmr_pool *pool,
				     const u64 *pages, u32 npages, u64 iova);
int mrc_fmr_pool_unmap(struct mrc_mr *mr);
int mrc_flush_fmr_pool(struct mrc_fmr_pool *pool);
void mrc_fmr_pool_get_stats(struct mrc_fmr_pool *pool,
			    struct mrc_fmr_pool_stats *stats);

#endif /* _RDMA_MRCORE_FMR_H */
