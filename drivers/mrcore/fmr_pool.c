// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: FMR pools, apart from the FMRs they own (fmr.c), as ib_core
 * kept its FMR pool apart.
 *
 * A pool owns a fixed set of FMRs and, with its cache on, finds a mapping
 * of the same page list and iova by hash: such a hit takes a user and
 * writes nothing to the device. The last unmap leaves the FMR mapped on
 * the free list, still in the cache, unless it has been remapped
 * max_remaps times (the dirty list) or the pool is strict (unmapped on
 * the spot). A flush unmaps the dirty FMRs in one batch (an explicit one
 * also every free FMR still mapped); the dirty watermark queues it on
 * system_unbound_wq. Until then a non-strict pool's unmapped FMR is still
 * usable on the device through its last key: that is the trade-off
 * Documentation/mrcore/fmr.rst describes.
 *
 * A hit and a non-strict unmap take no lock: the hit walks the cache's
 * chain (the FMRs live as long as the pool) and takes a user with
 * atomic_inc_unless_negative() on the FMR's user count, which is
 * MRC_FMR_OWNED while the pool owns the FMR (a miss takes a free one by
 * moving the count from 0 to that, under the pool's lock); the unmap
 * drops the count. The free list therefore also holds FMRs in use: a
 * miss parks those it meets off the list, and only their last unmap
 * then takes the lock, to put them back.
 *
 * Locking: the FMR's mutex (mrc_mr.lock) serialises its maps, unmaps and
 * deallocation; a pool's spinlock protects its lists, the writers of its
 * cache and its counters and is never held across a device write; the
 * pool's flush_sem is held for writing by a flush and for reading around
 * the device writes of a miss and of a strict unmap, so a flush also
 * waits for those.
 *
 * Reading order: the pool and its cache helpers, the flush, create and
 * destroy, then a map (a hit, or a miss that takes a free FMR) and an
 * unmap, the explicit flush and the counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/export.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <rdma/mrcore_fmr.h>

#include "fmr.h"

/**
 * struct mrc_fmr_pool - a pool of FMRs with a mapping cache
 * @pd: protection domain of every FMR
 * @param: the creation parameters
 * @fmrs: every FMR of the pool, @param.pool_size of them
 * @batch: a flush's list for mrc_fmr_unmap_batch(), under @flush_sem
 * @lock: protects @free_list, @dirty_list, @nr_dirty, @cache's chains (for
 *	writers), @stats and the FMRs' pool fields but @users and @hot
 * @free_list: FMRs nobody owns, in second-chance order: a miss takes the
 *	first that has no users and was not hit since the last miss passed
 *	it; unmapped FMRs go first. FMRs in use stay on it until a miss
 *	meets them, which parks them off it until their last user goes
 * @dirty_list: FMRs without users that were remapped @param.max_remaps
 *	times: mapped, not in @cache, owned by the pool until a flush
 * @nr_dirty: entries of @dirty_list
 * @cache: mapped FMRs by hash of page list and iova; lookups take no lock
 * @hits: cache hits, per CPU (a hit takes no lock)
 * @flush_sem: held for writing by a flush; for reading around the device
 *	writes of a miss and of a strict unmap, so that a flush waits for
 *	them
 * @flush_work: the flush worker, on system_unbound_wq
 * @stats: counters but hits; the gauges are filled in by
 *	mrc_fmr_pool_get_stats()
 */
struct mrc_fmr_pool {
	struct mrc_pd *pd;
	struct mrc_fmr_pool_param param;
	struct mrc_fmr **fmrs;
	struct mrc_mr **batch;
	spinlock_t lock;	/* protects the lists, cache chains, stats */
	struct list_head free_list;
	struct list_head dirty_list;
	u32 nr_dirty;
	DECLARE_HASHTABLE(cache, MRC_FMR_HASH_BITS);
	u64 __percpu *hits;
	struct rw_semaphore flush_sem;
	struct work_struct flush_work;
	struct mrc_fmr_pool_stats stats;
};

static bool mrc_fmr_pool_cache_on(const struct mrc_fmr_pool *pool)
{
	return pool->param.flags & MRC_FMR_POOL_CACHE;
}

static bool mrc_fmr_pool_strict(const struct mrc_fmr_pool *pool)
{
	return pool->param.flags & MRC_FMR_POOL_STRICT;
}

/*
 * The cache's hash of a page list and iova: of the iova, the first page
 * and the length only, so that a hit costs two multiplies whatever the
 * list's length; a lookup compares the whole list.
 */
static u32 mrc_fmr_hash(const u64 *pages, u32 npages, u64 iova)
{
	return hash_64(iova ^ (pages[0] * GOLDEN_RATIO_64) ^ npages, 32);
}

/* What a lookup compares before it takes a user: what the hash covers. */
static bool mrc_fmr_maybe_same(const struct mrc_fmr *fmr, const u64 *pages,
			       u32 npages, u64 iova)
{
	/* A miss may be rewriting them: READ_ONCE(). */
	return READ_ONCE(fmr->iova) == iova &&
	       READ_ONCE(fmr->npages) == npages &&
	       READ_ONCE(fmr->pages[0]) == pages[0];
}

/* Whether the cached mapping of an FMR with a user is this one. */
static bool mrc_fmr_same(const struct mrc_fmr *fmr, const u64 *pages,
			 u32 npages, u64 iova)
{
	u32 i;

	if (fmr->iova != iova || fmr->npages != npages)
		return false;
	for (i = 0; i < npages; i++)
		if (fmr->pages[i] != pages[i])
			return false;
	return true;
}

/* Out of the cache, if in it; readers may still be on its node. */
static void mrc_fmr_uncache(struct mrc_fmr_pool *pool, struct mrc_fmr *fmr)
{
	lockdep_assert_held(&pool->lock);

	if (fmr->cached) {
		hash_del_rcu(&fmr->node);
		WRITE_ONCE(fmr->cached, false);
	}
}

/* Back on the free list with no users, after the pool owned it. */
static void mrc_fmr_pool_free_one(struct mrc_fmr_pool *pool,
				  struct mrc_fmr *fmr)
{
	lockdep_assert_held(&pool->lock);

	/* First: a miss takes it before any mapped one. */
	list_add(&fmr->list, &pool->free_list);
	/* Pairs with the atomics of a hit or a miss that takes it next. */
	atomic_set_release(&fmr->users, 0);
}

/* Owned by the pool on the dirty list; a flush unmaps it. */
static void mrc_fmr_pool_dirty_one(struct mrc_fmr_pool *pool,
				   struct mrc_fmr *fmr)
{
	lockdep_assert_held(&pool->lock);

	list_add_tail(&fmr->list, &pool->dirty_list);
	if (++pool->nr_dirty >= pool->param.dirty_watermark)
		queue_work(system_unbound_wq, &pool->flush_work);
}

static int mrc_fmr_pool_put(struct mrc_fmr_pool *pool, struct mrc_fmr *fmr);

/*
 * A hit: the mapped FMR with this page list and iova, with one more
 * user; NULL if none is cached. Lock-free, and without RCU: a pool's FMRs
 * and their cache nodes live as long as the pool, which no lookup may
 * outlive, so a lookup may walk a chain (even across a sleep) while a
 * miss moves a node: it only ever compares a key and tries a count. An
 * FMR is taken by incrementing @users unless the pool owns it
 * (negative); a miss may have taken it and mapped it again between the
 * compare and the increment, and the compare only covers what the hash
 * does, so the whole key is compared once the FMR cannot change.
 */
static struct mrc_fmr *mrc_fmr_cache_get(struct mrc_fmr_pool *pool,
					 u32 hash, const u64 *pages,
					 u32 npages, u64 iova)
{
	struct mrc_fmr *fmr;

	hash_for_each_possible_rcu(pool->cache, fmr, node, hash, true) {
		if (!mrc_fmr_maybe_same(fmr, pages, npages, iova) ||
		    !atomic_inc_unless_negative(&fmr->users))
			continue;
		if (READ_ONCE(fmr->cached) &&
		    mrc_fmr_same(fmr, pages, npages, iova)) {
			if (!READ_ONCE(fmr->hot))
				WRITE_ONCE(fmr->hot, true);
			this_cpu_inc(*pool->hits);
			return fmr;
		}
		/* Not this one; in a strict pool, the put may sleep. */
		mrc_fmr_pool_put(pool, fmr);
	}
	return NULL;
}

/* FMRs a flush unmaps: the dirty ones, and with @all the free mapped ones. */
static unsigned int mrc_fmr_pool_collect(struct mrc_fmr_pool *pool, bool all,
					 struct list_head *batch)
{
	struct mrc_fmr *fmr, *tmp;
	unsigned int n = 0;

	lockdep_assert_held(&pool->lock);

	list_splice_init(&pool->dirty_list, batch);
	pool->nr_dirty = 0;
	if (all) {
		list_for_each_entry_safe(fmr, tmp, &pool->free_list, list) {
			/* Not mapped, or in use: left alone. */
			if (!fmr->remaps ||
			    atomic_cmpxchg(&fmr->users, 0, MRC_FMR_OWNED))
				continue;
			list_move_tail(&fmr->list, batch);
		}
	}
	list_for_each_entry(fmr, batch, list) {
		mrc_fmr_uncache(pool, fmr);
		pool->batch[n++] = &fmr->mr;
	}
	return n;
}

/*
 * After a flush's unmap: unmapped FMRs to the head of the free list, the
 * ones whose unmap failed (still mapped) back to the dirty list.
 */
static void mrc_fmr_pool_putback(struct mrc_fmr_pool *pool,
				 struct list_head *batch)
{
	struct mrc_fmr *fmr, *tmp;

	lockdep_assert_held(&pool->lock);

	list_for_each_entry_safe(fmr, tmp, batch, list) {
		list_del(&fmr->list);
		/* Owned by the flush: no map or unmap runs on it. */
		if (fmr->state == MRC_MKEY_VALID) {
			/* No wake-up: the next flush or watermark retries. */
			list_add_tail(&fmr->list, &pool->dirty_list);
			pool->nr_dirty++;
			continue;
		}
		fmr->remaps = 0;
		fmr->retire = false;
		WRITE_ONCE(fmr->hot, false);
		mrc_fmr_pool_free_one(pool, fmr);
		pool->stats.flushed++;
	}
}

/*
 * Unmap the dirty FMRs (with @all also every free one still mapped) in
 * one batch, then call the flush function with no lock held.
 */
static int mrc_fmr_pool_flush(struct mrc_fmr_pool *pool, bool all)
{
	struct mrc_device *mdev = pool->pd->mdev;
	LIST_HEAD(batch);
	unsigned int n;
	int ret = 0;

	down_write(&pool->flush_sem);
	spin_lock_irq(&pool->lock);
	n = mrc_fmr_pool_collect(pool, all, &batch);
	spin_unlock_irq(&pool->lock);

	if (n)
		ret = mrc_fmr_unmap_batch(mdev, pool->batch, n);

	spin_lock_irq(&pool->lock);
	mrc_fmr_pool_putback(pool, &batch);
	pool->stats.flushes++;
	spin_unlock_irq(&pool->lock);
	up_write(&pool->flush_sem);

	mrc_dbg(mdev, "FMR pool %p: flushed %u%s: %d\n", pool, n,
		all ? " (all)" : "", ret);
	if (pool->param.flush_function)
		pool->param.flush_function(pool, pool->param.flush_arg);
	return ret;
}

static void mrc_fmr_pool_flush_work(struct work_struct *work)
{
	struct mrc_fmr_pool *pool = container_of(work, struct mrc_fmr_pool,
						 flush_work);

	mrc_fmr_pool_flush(pool, false);
}

/* The checks of a pool's parameters, before anything is allocated. */
static int mrc_fmr_pool_check(const struct mrc_pd *pd,
			      const struct mrc_fmr_pool_param *p,
			      struct mrc_fmr_attr *attr)
{
	if (!p)
		return -EINVAL;
	if (!p->pool_size || p->pool_size > MRC_FMR_POOL_MAX_SIZE)
		return -EINVAL;
	if (!p->dirty_watermark || p->dirty_watermark > p->pool_size)
		return -EINVAL;
	if (p->flags & ~MRC_FMR_POOL_FLAGS)
		return -EINVAL;

	*attr = (struct mrc_fmr_attr) {
		.max_pages = p->max_pages_per_fmr,
		.max_maps = p->max_remaps,
		.page_shift = p->page_shift,
	};
	return mrc_fmr_check_attr(pd, p->access, attr);
}

/* FMR @i of a pool being built: allocated, on the free list. */
static int mrc_fmr_pool_add(struct mrc_fmr_pool *pool, u32 i,
			    const struct mrc_fmr_attr *attr)
{
	struct mrc_fmr *fmr;
	u64 *pages = NULL;

	if (mrc_fmr_pool_cache_on(pool)) {
		pages = kcalloc(attr->max_pages, sizeof(*pages), GFP_KERNEL);
		if (!pages)
			return -ENOMEM;
	}
	fmr = mrc_fmr_create(pool->pd, pool->param.access, attr, 0);
	if (IS_ERR(fmr)) {
		kfree(pages);
		return PTR_ERR(fmr);
	}
	fmr->pool = pool;
	fmr->pages = pages;
	pool->fmrs[i] = fmr;
	list_add_tail(&fmr->list, &pool->free_list);
	return 0;
}

/* Deregister the FMRs a pool has; one whose key cannot be freed leaks. */
static int mrc_fmr_pool_free_fmrs(struct mrc_fmr_pool *pool, u32 n)
{
	int ret = 0, err;
	u32 i;

	for (i = 0; i < n; i++) {
		err = mrc_fmr_destroy(pool->fmrs[i]);
		if (WARN_ON_ONCE(err) && !ret)
			ret = err;
	}
	return ret;
}

static void mrc_fmr_pool_free(struct mrc_fmr_pool *pool)
{
	free_percpu(pool->hits);
	kvfree(pool->batch);
	kvfree(pool->fmrs);
	kfree(pool);
}

/**
 * mrc_create_fmr_pool - create a pool of FMRs
 * @pd: protection domain of every FMR
 * @param: the pool's shape; copied
 *
 * Validates every parameter, then allocates @param->pool_size FMRs (as
 * mrc_alloc_fmr() with @param->max_pages_per_fmr, @param->max_remaps and
 * @param->page_shift), all unmapped and free.
 *
 * Context: process context; may sleep.
 * Return: the pool; ERR_PTR(-EINVAL) for a bad @pd or parameter (see
 * struct mrc_fmr_pool_param; -EOPNOTSUPP for ON_DEMAND); -ENOSPC when
 * keys or translation space run out; -ENOMEM; or the error of
 * ops->write_mkey. Nothing is left behind on failure.
 */
struct mrc_fmr_pool *mrc_create_fmr_pool(struct mrc_pd *pd,
					 const struct mrc_fmr_pool_param *param)
{
	struct mrc_fmr_attr attr;
	struct mrc_fmr_pool *pool;
	int ret;
	u32 i;

	ret = mrc_fmr_pool_check(pd, param, &attr);
	if (ret)
		return ERR_PTR(ret);

	pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	if (!pool)
		return ERR_PTR(-ENOMEM);
	pool->pd = pd;
	pool->param = *param;
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->free_list);
	INIT_LIST_HEAD(&pool->dirty_list);
	hash_init(pool->cache);
	init_rwsem(&pool->flush_sem);
	INIT_WORK(&pool->flush_work, mrc_fmr_pool_flush_work);
	pool->fmrs = kvcalloc(param->pool_size, sizeof(*pool->fmrs),
			      GFP_KERNEL);
	pool->batch = kvcalloc(param->pool_size, sizeof(*pool->batch),
			       GFP_KERNEL);
	pool->hits = alloc_percpu(u64);
	if (!pool->fmrs || !pool->batch || !pool->hits) {
		ret = -ENOMEM;
		goto out_free_pool;
	}

	for (i = 0; i < param->pool_size; i++) {
		ret = mrc_fmr_pool_add(pool, i, &attr);
		if (ret)
			goto out_free_fmrs;
	}
	mrc_dbg(pd->mdev, "FMR pool %p: %u FMRs of %u pages, flags 0x%x\n",
		pool, param->pool_size, param->max_pages_per_fmr,
		param->flags);
	return pool;

out_free_fmrs:
	mrc_fmr_pool_free_fmrs(pool, i);
out_free_pool:
	mrc_fmr_pool_free(pool);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(mrc_create_fmr_pool);

/* FMRs of @pool with users now. */
static u32 mrc_fmr_pool_in_use(struct mrc_fmr_pool *pool)
{
	u32 i, n = 0;

	for (i = 0; i < pool->param.pool_size; i++)
		n += atomic_read(&pool->fmrs[i]->users) > 0;
	return n;
}

/**
 * mrc_destroy_fmr_pool - free a pool and its FMRs
 * @pool: from mrc_create_fmr_pool(); no FMR of it may be in use and no
 *	other call on it may be running
 *
 * Cancels the flush worker (waiting for a flush in progress), then
 * deregisters every FMR, mapped or not: its key is invalidated on the
 * device, draining its accesses, so nothing the pool mapped stays
 * reachable.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBUSY (nothing changes) while an FMR of the pool has users;
 * or the first error of ops->invalidate_mkey: the pool is freed anyway,
 * and the FMRs that could not be invalidated are leaked with their keys.
 */
int mrc_destroy_fmr_pool(struct mrc_fmr_pool *pool)
{
	int ret;

	if (mrc_fmr_pool_in_use(pool))
		return -EBUSY;

	cancel_work_sync(&pool->flush_work);
	ret = mrc_fmr_pool_free_fmrs(pool, pool->param.pool_size);
	mrc_fmr_pool_free(pool);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_destroy_fmr_pool);

/*
 * A free FMR for a miss, owned by the caller (@users MRC_FMR_OWNED), off
 * the free list and the cache; NULL if there is none. Second chance: an
 * FMR hit since the last miss passed it goes to the tail once; one in use
 * is parked off the list (its last user puts it back), so every step
 * takes, parks or spares an FMR and a pool in use is not scanned again.
 */
static struct mrc_fmr *mrc_fmr_pool_take(struct mrc_fmr_pool *pool)
{
	u32 steps = 2 * pool->param.pool_size;
	struct mrc_fmr *fmr;

	lockdep_assert_held(&pool->lock);

	while (steps--) {
		fmr = list_first_entry_or_null(&pool->free_list,
					       struct mrc_fmr, list);
		if (!fmr)
			break;
		if (atomic_read(&fmr->users) > 0) {
			list_del_init(&fmr->list);
			fmr->parked = true;
			/* Pairs with mrc_fmr_pool_put(): users, then parked. */
			smp_mb();
			if (!atomic_read(&fmr->users)) {
				fmr->parked = false;
				list_add_tail(&fmr->list, &pool->free_list);
			}
			continue;
		}
		if (!fmr->retire && READ_ONCE(fmr->hot)) {
			WRITE_ONCE(fmr->hot, false);
			list_move_tail(&fmr->list, &pool->free_list);
			continue;
		}
		/* A hit may take it first: then it is in use. */
		if (atomic_cmpxchg(&fmr->users, 0, MRC_FMR_OWNED))
			continue;
		list_del_init(&fmr->list);
		mrc_fmr_uncache(pool, fmr);
		/* Its last user's release did not get it yet: no more maps. */
		if (fmr->retire) {
			mrc_fmr_pool_dirty_one(pool, fmr);
			continue;
		}
		return fmr;
	}
	pool->stats.exhausted++;
	/* Dirty FMRs below the watermark: a flush frees them. */
	if (pool->nr_dirty)
		queue_work(system_unbound_wq, &pool->flush_work);
	return NULL;
}

/* A miss: map a free FMR, the one that was not used for longest. */
static struct mrc_mr *mrc_fmr_pool_miss(struct mrc_fmr_pool *pool,
					const u64 *pages, u32 npages,
					u64 iova, u32 hash)
{
	bool cache = mrc_fmr_pool_cache_on(pool);
	struct mrc_fmr *fmr;
	int ret;

	down_read(&pool->flush_sem);
	spin_lock_irq(&pool->lock);
	fmr = mrc_fmr_pool_take(pool);
	spin_unlock_irq(&pool->lock);
	if (!fmr) {
		up_read(&pool->flush_sem);
		return ERR_PTR(-EAGAIN);
	}

	/* Owned and uncached: a hit may still compare these, not take it. */
	ret = mrc_fmr_map(fmr, pages, npages, iova);
	if (!ret && cache) {
		memcpy(fmr->pages, pages, npages * sizeof(*pages));
		WRITE_ONCE(fmr->npages, npages);
		WRITE_ONCE(fmr->iova, iova);
	}

	spin_lock_irq(&pool->lock);
	if (ret) {
		/* Unchanged: still mapped as before, or not at all. */
		mrc_fmr_pool_free_one(pool, fmr);
	} else {
		if (fmr->remaps++)
			pool->stats.remaps++;
		fmr->retire = fmr->remaps >= pool->param.max_remaps;
		pool->stats.misses++;
		if (cache) {
			hash_add_rcu(pool->cache, &fmr->node, hash);
			WRITE_ONCE(fmr->cached, true);
		}
		/* On the free list in use: a later miss parks it. */
		list_add_tail(&fmr->list, &pool->free_list);
		/* The key and mapping before the first user. */
		atomic_set_release(&fmr->users, 1);
	}
	spin_unlock_irq(&pool->lock);
	up_read(&pool->flush_sem);
	return ret ? ERR_PTR(ret) : &fmr->mr;
}

/**
 * mrc_fmr_pool_map_phys - map a page list through a pool
 * @pool: the pool
 * @pages: DMA addresses of the pages, as for mrc_map_phys_fmr()
 * @npages: entries of @pages, in [1, max_pages_per_fmr]
 * @iova: address of the first byte through the key
 *
 * With the cache on, an FMR mapped with the same @pages and @iova (in use
 * or free) is returned with one more user, and nothing is written to the
 * device nor any lock taken. Otherwise a free FMR is mapped, replacing
 * its cached mapping (its key changes, so the key of that mapping no
 * longer works): one that is not mapped at all first, then in
 * second-chance order, which approximates the least recently used (one
 * hit since the last miss looked at it is spared once). The caller reads
 * the key, iova and length from the returned MR and gives the MR back
 * with mrc_fmr_pool_unmap() once per successful call.
 *
 * Context: process context; may sleep (a miss writes the device, and
 * waits for a flush in progress).
 * Return: the FMR; ERR_PTR(-EAGAIN) when no FMR is free (the dirty ones,
 * if any, are being flushed: try again later, or mrc_flush_fmr_pool());
 * -EINVAL for a bad page list (as mrc_map_phys_fmr()); or the error of a
 * backend op.
 */
struct mrc_mr *mrc_fmr_pool_map_phys(struct mrc_fmr_pool *pool,
				     const u64 *pages, u32 npages, u64 iova)
{
	struct mrc_fmr *fmr;
	u32 hash = 0;

	if (!pages || !npages || npages > pool->param.max_pages_per_fmr)
		return ERR_PTR(-EINVAL);

	if (mrc_fmr_pool_cache_on(pool)) {
		hash = mrc_fmr_hash(pages, npages, iova);
		fmr = mrc_fmr_cache_get(pool, hash, pages, npages, iova);
		if (fmr)
			return &fmr->mr;
	}
	return mrc_fmr_pool_miss(pool, pages, npages, iova, hash);
}
EXPORT_SYMBOL_GPL(mrc_fmr_pool_map_phys);

/*
 * A strict pool's FMR whose last user went: unmapped before it is free,
 * unless a hit took it again first (its user unmaps it then).
 */
static int mrc_fmr_pool_strict_unmap(struct mrc_fmr_pool *pool,
				     struct mrc_fmr *fmr)
{
	struct mrc_mr *mr = &fmr->mr;
	int ret;

	down_read(&pool->flush_sem);
	spin_lock_irq(&pool->lock);
	if (atomic_cmpxchg(&fmr->users, 0, MRC_FMR_OWNED)) {
		spin_unlock_irq(&pool->lock);
		up_read(&pool->flush_sem);
		return 0;
	}
	fmr->parked = false;
	list_del_init(&fmr->list);
	/* No hit finds it from now on. */
	mrc_fmr_uncache(pool, fmr);
	spin_unlock_irq(&pool->lock);

	ret = mrc_fmr_unmap_batch(mr->mdev, &mr, 1);
	spin_lock_irq(&pool->lock);
	if (ret) {
		/* Still mapped: a flush retries. */
		list_add_tail(&fmr->list, &pool->dirty_list);
		pool->nr_dirty++;
	} else {
		fmr->remaps = 0;
		fmr->retire = false;
		WRITE_ONCE(fmr->hot, false);
		mrc_fmr_pool_free_one(pool, fmr);
		pool->stats.strict_unmaps++;
	}
	spin_unlock_irq(&pool->lock);
	up_read(&pool->flush_sem);
	return ret;
}

/*
 * A non-strict pool's FMR whose last user went, when it is parked or
 * must retire: parked, it goes back to the tail of the free list; mapped
 * max_remaps times, the pool takes it for the dirty list (unless a hit
 * took it again first), out of the cache, and the flush worker is queued
 * at the watermark.
 */
static void mrc_fmr_pool_release(struct mrc_fmr_pool *pool,
				 struct mrc_fmr *fmr)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	if (fmr->parked) {
		fmr->parked = false;
		list_add_tail(&fmr->list, &pool->free_list);
	}
	if (fmr->retire && !atomic_cmpxchg(&fmr->users, 0, MRC_FMR_OWNED)) {
		list_del(&fmr->list);
		mrc_fmr_uncache(pool, fmr);
		mrc_fmr_pool_dirty_one(pool, fmr);
	}
	spin_unlock_irqrestore(&pool->lock, flags);
}

/* Drop a user; what the last one's going means. */
static int mrc_fmr_pool_put(struct mrc_fmr_pool *pool, struct mrc_fmr *fmr)
{
	int users = atomic_dec_if_positive(&fmr->users);

	if (mrc_misuse(fmr->mr.mdev, users < 0))
		return -EINVAL;
	if (users)
		return 0;
	if (mrc_fmr_pool_strict(pool))
		return mrc_fmr_pool_strict_unmap(pool, fmr);
	/* Fully ordered after the decrement: pairs with a parking miss. */
	if (READ_ONCE(fmr->parked) || READ_ONCE(fmr->retire))
		mrc_fmr_pool_release(pool, fmr);
	return 0;
}

/**
 * mrc_fmr_pool_unmap - give back an FMR from mrc_fmr_pool_map_phys()
 * @mr: the FMR the map returned
 *
 * Drops one user. When the last goes, in a non-strict pool the FMR stays
 * mapped, and usable on the device through its key, until a flush or a
 * miss that maps it again: it stays on the free list and in the cache
 * (no lock is taken), or, once mapped max_remaps times since its last
 * flush, it goes to the dirty list, and the flush worker is queued when
 * the dirty ones reach the watermark. In a strict pool the FMR is
 * unmapped on the device (waiting for its accesses) before this returns.
 *
 * Context: any context for a non-strict pool (nothing sleeps); process
 * context for a strict one (the last unmap writes the device).
 * Return: 0; -EINVAL (counted as misuse) if @mr is not an FMR of a pool
 * or has no users; or, strict, the error of ops->write_mkey: the FMR
 * then waits, still mapped, for a flush.
 */
int mrc_fmr_pool_unmap(struct mrc_mr *mr)
{
	struct mrc_fmr *fmr;

	if (!mr || mr->type != MRC_MR_FMR)
		return -EINVAL;
	fmr = to_mrc_fmr(mr);
	if (mrc_misuse(mr->mdev, !fmr->pool))
		return -EINVAL;
	return mrc_fmr_pool_put(fmr->pool, fmr);
}
EXPORT_SYMBOL_GPL(mrc_fmr_pool_unmap);

/**
 * mrc_flush_fmr_pool - unmap every FMR of a pool that has no users
 * @pool: the pool
 *
 * Waits for a flush, miss or strict unmap in progress, then unmaps every
 * dirty FMR and every free FMR still mapped in one batch (one fence),
 * drops them from the cache and calls the flush function. On return no
 * FMR given back with mrc_fmr_pool_unmap() before the call is usable on
 * the device any more; FMRs in use are left alone.
 *
 * Context: process context; may sleep. Not from the flush function.
 * Return: 0, or the first error of ops->write_mkey (the FMRs whose unmap
 * failed stay mapped, on the dirty list).
 */
int mrc_flush_fmr_pool(struct mrc_fmr_pool *pool)
{
	return mrc_fmr_pool_flush(pool, true);
}
EXPORT_SYMBOL_GPL(mrc_flush_fmr_pool);

/**
 * mrc_fmr_pool_get_stats - a pool's counters
 * @pool: the pool
 * @stats: filled in: the counters, and the gauges in_use, free and dirty
 *	as they are now
 *
 * Context: any context.
 */
void mrc_fmr_pool_get_stats(struct mrc_fmr_pool *pool,
			    struct mrc_fmr_pool_stats *stats)
{
	unsigned long flags;
	int cpu, users;
	u32 i;

	spin_lock_irqsave(&pool->lock, flags);
	*stats = pool->stats;
	stats->dirty = pool->nr_dirty;
	spin_unlock_irqrestore(&pool->lock, flags);

	for_each_possible_cpu(cpu)
		stats->hits += *per_cpu_ptr(pool->hits, cpu);
	for (i = 0; i < pool->param.pool_size; i++) {
		users = atomic_read(&pool->fmrs[i]->users);
		stats->in_use += users > 0;
		stats->free += !users;
	}
}
EXPORT_SYMBOL_GPL(mrc_fmr_pool_get_stats);
