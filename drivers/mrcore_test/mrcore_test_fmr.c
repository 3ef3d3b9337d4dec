// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: FMR pools on a vhca device, through mrcore's API.
 *
 * A context's first FMR call gives it a buffer of MRCT_FMR_BUF_PAGES
 * kernel pages, each DMA-mapped on the device's DMA device. Pools are
 * created on the context's PDs (mrcore's PD behind the ib_pd, from
 * vhca_pd_mrc()), and map lists of those pages by index; the test
 * program then has the device read and write through the keys with
 * MRCT_DEV_READ / MRCT_DEV_WRITE and checks the bytes with
 * MRCT_FMR_BUF_READ. A benchmark call times map + unmap cycles that hit
 * the cache and cycles that miss it.
 *
 * Everything runs under the context's lock; unbinding gives back every
 * mapping held, destroys the pools and frees the buffer.
 */
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/mrcore_fmr.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

/* The benchmark's iovas: a new page-aligned one per miss. */
#define MRCT_FMR_BENCH_IOVA	0x100000000ULL
/*
 * Cycles between two reads of the clock: a hit costs little more than
 * ktime_get_ns() itself under QEMU TCG, so timing each cycle would
 * mostly measure the clock.
 */
#define MRCT_FMR_BENCH_BATCH	64

/**
 * struct mrct_fmr_pool - a pool of the context
 * @pool: mrcore's pool
 * @flush_calls: calls of its flush function
 * @held: mappings of it the context holds
 */
struct mrct_fmr_pool {
	struct mrc_fmr_pool *pool;
	atomic_t flush_calls;
	u32 held;
};

/**
 * struct mrct_fmr_held - a mapping the context holds
 * @p: its pool
 * @mr: the FMR mrc_fmr_pool_map_phys() returned
 */
struct mrct_fmr_held {
	struct mrct_fmr_pool *p;
	struct mrc_mr *mr;
};

/**
 * struct mrct_fmr - a context's FMR state (ctx->ext[MRCT_EXT_FMR])
 * @dma_dev: the device the pages are mapped on
 * @pages: the buffer
 * @dma: each page's DMA address
 * @pools: handle -> struct mrct_fmr_pool
 * @next_pool: allocation cursor for @pools
 * @nr_pools: entries in @pools
 * @maps: handle -> struct mrct_fmr_held
 * @next_map: allocation cursor for @maps
 * @nr_maps: entries in @maps
 *
 * Used under the context's lock.
 */
struct mrct_fmr {
	struct device *dma_dev;
	struct page *pages[MRCT_FMR_BUF_PAGES];
	dma_addr_t dma[MRCT_FMR_BUF_PAGES];
	struct xarray pools;
	u32 next_pool;
	u32 nr_pools;
	struct xarray maps;
	u32 next_map;
	u32 nr_maps;
};

static void mrct_fmr_free_buf(struct mrct_fmr *f, unsigned int n)
{
	while (n--) {
		dma_unmap_page(f->dma_dev, f->dma[n], PAGE_SIZE,
			       DMA_BIDIRECTIONAL);
		__free_page(f->pages[n]);
	}
}

static int mrct_fmr_alloc_buf(struct mrct_fmr *f)
{
	unsigned int i;

	for (i = 0; i < MRCT_FMR_BUF_PAGES; i++) {
		f->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!f->pages[i])
			goto out_free;
		f->dma[i] = dma_map_page(f->dma_dev, f->pages[i], 0, PAGE_SIZE,
					 DMA_BIDIRECTIONAL);
		if (dma_mapping_error(f->dma_dev, f->dma[i])) {
			__free_page(f->pages[i]);
			goto out_free;
		}
	}
	return 0;

out_free:
	mrct_fmr_free_buf(f, i);
	return -ENOMEM;
}

/* The context's FMR state, made on first use; an ERR_PTR if it cannot be. */
static struct mrct_fmr *mrct_fmr_get(struct mrct_ctx *ctx)
{
	struct mrct_fmr *f = ctx->ext[MRCT_EXT_FMR];
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return ERR_PTR(-ENODEV);
	if (!ctx->is_vhca)
		return ERR_PTR(-EOPNOTSUPP);
	if (f)
		return f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->dma_dev = ctx->ibdev->dma_device;
	xa_init_flags(&f->pools, XA_FLAGS_ALLOC);
	xa_init_flags(&f->maps, XA_FLAGS_ALLOC);
	err = mrct_fmr_alloc_buf(f);
	if (err) {
		kfree(f);
		return ERR_PTR(err);
	}
	ctx->ext[MRCT_EXT_FMR] = f;
	return f;
}

static void mrct_fmr_flush_fn(struct mrc_fmr_pool *pool, void *arg)
{
	struct mrct_fmr_pool *p = arg;

	atomic_inc(&p->flush_calls);
}

static int mrct_fmr_pool_create_locked(struct mrct_ctx *ctx,
				       struct mrct_fmr_pool_create *req)
{
	struct mrc_fmr_pool_param param = {
		.pool_size = req->pool_size,
		.max_pages_per_fmr = req->max_pages,
		.page_shift = PAGE_SHIFT,
		.access = req->access,
		.max_remaps = req->max_remaps,
		.dirty_watermark = req->dirty_watermark,
		.flags = (req->flags & MRCT_FMR_CACHE ? MRC_FMR_POOL_CACHE : 0) |
			 (req->flags & MRCT_FMR_STRICT ? MRC_FMR_POOL_STRICT : 0),
		.flush_function = mrct_fmr_flush_fn,
	};
	struct mrct_fmr *f = mrct_fmr_get(ctx);
	struct mrct_fmr_pool *p;
	struct mrc_pd *pd;
	int err;

	if (IS_ERR(f))
		return PTR_ERR(f);
	if (f->nr_pools >= MRCT_FMR_MAX_POOLS)
		return -EMFILE;
	pd = vhca_pd_mrc(ctx->pd[req->pd]);
	if (!pd)
		return -EOPNOTSUPP;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	atomic_set(&p->flush_calls, 0);
	param.flush_arg = p;
	p->pool = mrc_create_fmr_pool(pd, &param);
	if (IS_ERR(p->pool)) {
		err = PTR_ERR(p->pool);
		goto out_free;
	}
	err = xa_alloc_cyclic(&f->pools, &req->handle, p, XA_LIMIT(1, U32_MAX),
			      &f->next_pool, GFP_KERNEL);
	if (err < 0)
		goto out_destroy;
	f->nr_pools++;
	return 0;

out_destroy:
	mrc_destroy_fmr_pool(p->pool);
out_free:
	kfree(p);
	return err;
}

static int mrct_fmr_pool_create(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_fmr_pool_create req;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS || req.max_pages > MRCT_FMR_MAX_LIST ||
	    req.flags & ~(MRCT_FMR_CACHE | MRCT_FMR_STRICT))
		return -EINVAL;

	mutex_lock(&ctx->lock);
	err = mrct_fmr_pool_create_locked(ctx, &req);
	mutex_unlock(&ctx->lock);
	if (err)
		return err;
	/* On a fault the pool stays until the file is closed. */
	return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
}

/* A pool of the context by handle, or an ERR_PTR. */
static struct mrct_fmr_pool *mrct_fmr_pool_get(struct mrct_ctx *ctx,
					       u32 handle)
{
	struct mrct_fmr *f = mrct_fmr_get(ctx);
	struct mrct_fmr_pool *p;

	if (IS_ERR(f))
		return ERR_CAST(f);
	p = xa_load(&f->pools, handle);
	return p ? p : ERR_PTR(-ENOENT);
}

static int mrct_fmr_handle_in(void __user *uarg, u32 *handle)
{
	struct mrct_fmr_handle req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	*handle = req.handle;
	return 0;
}

static int mrct_fmr_pool_destroy(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_fmr_pool *p;
	struct mrct_fmr *f;
	u32 handle;
	int err;

	err = mrct_fmr_handle_in(uarg, &handle);
	if (err)
		return err;

	mutex_lock(&ctx->lock);
	p = mrct_fmr_pool_get(ctx, handle);
	if (IS_ERR(p)) {
		err = PTR_ERR(p);
		goto out_unlock;
	}
	if (p->held) {
		err = -EBUSY;
		goto out_unlock;
	}
	f = ctx->ext[MRCT_EXT_FMR];
	xa_erase(&f->pools, handle);
	f->nr_pools--;
	/* Fails only for a device error: the pool is gone anyway. */
	err = mrc_destroy_fmr_pool(p->pool);
	kfree(p);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

/* Map the request's buffer pages through pool @p. */
static int mrct_fmr_map_locked(struct mrct_fmr *f, struct mrct_fmr_pool *p,
			       struct mrct_fmr_map *req)
{
	u64 dma[MRCT_FMR_MAX_LIST];
	struct mrct_fmr_held *h;
	struct mrc_mr *mr;
	u32 i;
	int err;

	if (f->nr_maps >= MRCT_FMR_MAX_HELD)
		return -EMFILE;
	for (i = 0; i < req->npages; i++)
		dma[i] = f->dma[req->pages[i]];
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;

	mr = mrc_fmr_pool_map_phys(p->pool, dma, req->npages, req->iova);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto out_free;
	}
	h->p = p;
	h->mr = mr;
	err = xa_alloc_cyclic(&f->maps, &req->handle, h, XA_LIMIT(1, U32_MAX),
			      &f->next_map, GFP_KERNEL);
	if (err < 0)
		goto out_unmap;
	f->nr_maps++;
	p->held++;
	req->key = mr->key;
	req->length = mr->length;
	return 0;

out_unmap:
	mrc_fmr_pool_unmap(mr);
out_free:
	kfree(h);
	return err;
}

static int mrct_fmr_map(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_fmr_pool *p;
	struct mrct_fmr_map req;
	u32 i;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.npages > MRCT_FMR_MAX_LIST)
		return -EINVAL;
	for (i = 0; i < req.npages; i++)
		if (req.pages[i] >= MRCT_FMR_BUF_PAGES)
			return -EINVAL;

	mutex_lock(&ctx->lock);
	p = mrct_fmr_pool_get(ctx, req.pool);
	if (IS_ERR(p))
		err = PTR_ERR(p);
	else
		err = mrct_fmr_map_locked(ctx->ext[MRCT_EXT_FMR], p, &req);
	mutex_unlock(&ctx->lock);
	if (err)
		return err;
	/* On a fault the mapping stays held until the file is closed. */
	return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
}

static int mrct_fmr_unmap(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_fmr_held *h;
	struct mrct_fmr *f;
	u32 handle;
	int err;

	err = mrct_fmr_handle_in(uarg, &handle);
	if (err)
		return err;

	mutex_lock(&ctx->lock);
	f = mrct_fmr_get(ctx);
	if (IS_ERR(f)) {
		err = PTR_ERR(f);
		goto out_unlock;
	}
	h = xa_erase(&f->maps, handle);
	if (!h) {
		err = -ENOENT;
		goto out_unlock;
	}
	f->nr_maps--;
	h->p->held--;
	err = mrc_fmr_pool_unmap(h->mr);
	kfree(h);
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}

static int mrct_fmr_flush(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_fmr_pool *p;
	u32 handle;
	int err;

	err = mrct_fmr_handle_in(uarg, &handle);
	if (err)
		return err;

	mutex_lock(&ctx->lock);
	p = mrct_fmr_pool_get(ctx, handle);
	err = IS_ERR(p) ? PTR_ERR(p) : mrc_flush_fmr_pool(p->pool);
	mutex_unlock(&ctx->lock);
	return err;
}

static int mrct_fmr_stats(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrc_fmr_pool_stats st;
	struct mrct_fmr_stats req;
	struct mrct_fmr_pool *p;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	p = mrct_fmr_pool_get(ctx, req.pool);
	if (IS_ERR(p)) {
		mutex_unlock(&ctx->lock);
		return PTR_ERR(p);
	}
	mrc_fmr_pool_get_stats(p->pool, &st);
	req.flush_calls = atomic_read(&p->flush_calls);
	mutex_unlock(&ctx->lock);

	req.hits = st.hits;
	req.misses = st.misses;
	req.remaps = st.remaps;
	req.exhausted = st.exhausted;
	req.flushes = st.flushes;
	req.flushed = st.flushed;
	req.strict_unmaps = st.strict_unmaps;
	req.in_use = st.in_use;
	req.free = st.free;
	req.dirty = st.dirty;
	return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
}

/* The CPU copies between the buffer and @kbuf, page by page. */
static void mrct_fmr_buf_copy(struct mrct_fmr *f, u32 offset, u8 *kbuf,
			      u32 len, bool write)
{
	u32 done = 0, n, pg, off;
	u8 *va;

	while (done < len) {
		pg = (offset + done) >> PAGE_SHIFT;
		off = (offset + done) & ~PAGE_MASK;
		n = min_t(u32, len - done, PAGE_SIZE - off);
		dma_sync_single_for_cpu(f->dma_dev, f->dma[pg], PAGE_SIZE,
					DMA_BIDIRECTIONAL);
		va = page_address(f->pages[pg]) + off;
		if (write)
			memcpy(va, kbuf + done, n);
		else
			memcpy(kbuf + done, va, n);
		dma_sync_single_for_device(f->dma_dev, f->dma[pg], PAGE_SIZE,
					   DMA_BIDIRECTIONAL);
		done += n;
	}
}

static int mrct_fmr_buf(struct mrct_ctx *ctx, void __user *uarg, bool write)
{
	struct mrct_fmr_buf req;
	struct mrct_fmr *f;
	u8 *kbuf;
	u32 end;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (check_add_overflow(req.offset, req.length, &end) ||
	    end > MRCT_FMR_BUF_PAGES * PAGE_SIZE)
		return -EINVAL;
	kbuf = kvmalloc(max_t(u32, req.length, 1), GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;
	if (write && copy_from_user(kbuf, u64_to_user_ptr(req.ptr),
				    req.length)) {
		err = -EFAULT;
		goto out_free;
	}

	mutex_lock(&ctx->lock);
	f = mrct_fmr_get(ctx);
	if (IS_ERR(f))
		err = PTR_ERR(f);
	else
		mrct_fmr_buf_copy(f, req.offset, kbuf, req.length, write);
	mutex_unlock(&ctx->lock);

	if (!err && !write &&
	    copy_to_user(u64_to_user_ptr(req.ptr), kbuf, req.length))
		err = -EFAULT;
out_free:
	kvfree(kbuf);
	return err;
}

/*
 * One map + unmap cycle; after -EAGAIN (every FMR dirty and the worker
 * behind) flush synchronously and map again, once.
 */
static int mrct_fmr_bench_cycle(struct mrct_fmr_pool *p, const u64 *dma,
				u32 npages, u64 iova, u64 *sync_flushes)
{
	struct mrc_mr *mr;
	int err;

	mr = mrc_fmr_pool_map_phys(p->pool, dma, npages, iova);
	if (PTR_ERR_OR_ZERO(mr) == -EAGAIN) {
		err = mrc_flush_fmr_pool(p->pool);
		if (err)
			return err;
		(*sync_flushes)++;
		mr = mrc_fmr_pool_map_phys(p->pool, dma, npages, iova);
	}
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	return mrc_fmr_pool_unmap(mr);
}

static int mrct_fmr_bench_locked(struct mrct_ctx *ctx,
				 struct mrct_fmr_bench *req)
{
	u64 dma[MRCT_FMR_MAX_LIST], iova = MRCT_FMR_BENCH_IOVA, start;
	struct mrct_fmr_pool *p;
	struct mrct_fmr *f;
	u32 i;
	int err = 0;

	p = mrct_fmr_pool_get(ctx, req->pool);
	if (IS_ERR(p))
		return PTR_ERR(p);
	if (p->held)
		return -EBUSY;
	f = ctx->ext[MRCT_EXT_FMR];
	for (i = 0; i < req->npages; i++)
		dma[i] = f->dma[i];

	start = ktime_get_ns();
	do {
		if (req->mode == MRCT_FMR_BENCH_MISS)
			iova += PAGE_SIZE;
		err = mrct_fmr_bench_cycle(p, dma, req->npages, iova,
					   &req->sync_flushes);
		if (err)
			break;
		/* The clock and the checks once a batch, not in each cycle. */
		if (++req->cycles % MRCT_FMR_BENCH_BATCH)
			continue;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
		req->elapsed_ns = ktime_get_ns() - start;
	} while (req->elapsed_ns < req->min_ns);
	req->elapsed_ns = ktime_get_ns() - start;
	return err;
}

static int mrct_fmr_bench(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_fmr_bench req;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || !req.npages || req.npages > MRCT_FMR_MAX_LIST ||
	    req.min_ns > MRCT_BENCH_MAX_NS ||
	    (req.mode != MRCT_FMR_BENCH_HIT && req.mode != MRCT_FMR_BENCH_MISS))
		return -EINVAL;
	req.cycles = 0;
	req.elapsed_ns = 0;
	req.sync_flushes = 0;

	mutex_lock(&ctx->lock);
	err = mrct_fmr_bench_locked(ctx, &req);
	mutex_unlock(&ctx->lock);
	if (err)
		return err;
	return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
}

static long mrct_fmr_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			   void __user *uarg)
{
	switch (cmd) {
	case MRCT_FMR_POOL_CREATE:
		return mrct_fmr_pool_create(ctx, uarg);
	case MRCT_FMR_POOL_DESTROY:
		return mrct_fmr_pool_destroy(ctx, uarg);
	case MRCT_FMR_MAP:
		return mrct_fmr_map(ctx, uarg);
	case MRCT_FMR_UNMAP:
		return mrct_fmr_unmap(ctx, uarg);
	case MRCT_FMR_FLUSH:
		return mrct_fmr_flush(ctx, uarg);
	case MRCT_FMR_STATS:
		return mrct_fmr_stats(ctx, uarg);
	case MRCT_FMR_BUF_READ:
		return mrct_fmr_buf(ctx, uarg, false);
	case MRCT_FMR_BUF_WRITE:
		return mrct_fmr_buf(ctx, uarg, true);
	case MRCT_FMR_BENCH:
		return mrct_fmr_bench(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/* Give back every mapping, destroy the pools, free the buffer. */
static void mrct_fmr_unbind(struct mrct_ctx *ctx)
{
	struct mrct_fmr *f = ctx->ext[MRCT_EXT_FMR];
	struct mrct_fmr_held *h;
	struct mrct_fmr_pool *p;
	unsigned long handle;
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!f)
		return;
	xa_for_each(&f->maps, handle, h) {
		xa_erase(&f->maps, handle);
		mrc_fmr_pool_unmap(h->mr);
		kfree(h);
	}
	xa_for_each(&f->pools, handle, p) {
		xa_erase(&f->pools, handle);
		err = mrc_destroy_fmr_pool(p->pool);
		if (err)
			ibdev_warn(ctx->ibdev, "FMR pool %lu: destroy failed: %d\n",
				   handle, err);
		kfree(p);
	}
	/* The pools' keys are invalid: the device reaches no page now. */
	mrct_fmr_free_buf(f, MRCT_FMR_BUF_PAGES);
	xa_destroy(&f->maps);
	xa_destroy(&f->pools);
	kfree(f);
	ctx->ext[MRCT_EXT_FMR] = NULL;
}

const struct mrct_ext mrct_fmr_ext = {
	.ioctl = mrct_fmr_ioctl,
	.unbind = mrct_fmr_unbind,
};
