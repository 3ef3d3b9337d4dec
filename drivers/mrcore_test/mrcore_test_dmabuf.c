// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: dma-buf MRs, and a dma-buf exporter to register them over.
 *
 * Debian's stock 6.1 kernel has no udmabuf, so the module exports buffers
 * of its own: an array of pages behind a dma-buf file descriptor. Its
 * lifetime is the dma-buf's: dma_buf_export() holds the module, and the
 * release op frees the pages once the last descriptor and the last
 * importer (an MR) let go. A DYNAMIC buffer has pin/unpin, so an importer
 * may attach without pinning it (with CONFIG_DMABUF_MOVE_NOTIFY), and
 * MRCT_DMABUF_MOVE moves it to new pages under its reservation lock,
 * telling the importers first. Every op counts its calls, for the tests.
 *
 * Locking: the reservation lock (dmabuf->resv) keeps @pages from moving:
 * MOVE swaps them under it, and RW, INFO and a dynamic buffer's
 * map_dma_buf run under it. @lock, inside it, protects the one DMA
 * mapping the importers share and the counters; a static buffer's
 * map_dma_buf (called without the reservation lock, at attach time)
 * takes only @lock, and its pages never change.
 *
 * MRCT_REG_DMABUF registers through the device's reg_user_mr_dmabuf and
 * keeps the MR as one of the context's (the context's other ioctls work
 * on it); MRCT_DMABUF_STATS reads mrcore's counters of it.
 */
#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>
#include <rdma/vhca.h>

#include "mrcore_test.h"

MODULE_IMPORT_NS(DMA_BUF);

/* Buffers alive now, every context's (MRCT_DMABUF_INFO's @live). */
static atomic_t mrct_dmabuf_live = ATOMIC_INIT(0);

/**
 * struct mrct_dmabuf - one exported buffer
 * @dmabuf: the dma-buf
 * @lock: protects @map and the fields below it; taken inside the
 *	reservation lock
 * @pages: the backing, @npages zeroed pages; changed only by a move,
 *	under the reservation lock
 * @npages: pages
 * @map: @pages as a table mapped DMA_BIDIRECTIONAL for @map_dev, while
 *	an importer has the buffer mapped; every importer gets a copy of
 *	it. Mapping the same pages once per importer would make mappings
 *	the device writes overlap, which DMA-API debug rightly refuses.
 * @map_dev: the device @map is for: importers on another device are
 *	refused (-EBUSY) while it is mapped
 * @map_users: importers holding a copy of @map
 * @pins: pins held now
 * @maps: map_dma_buf calls
 * @unmaps: unmap_dma_buf calls
 * @moves: moves done
 * @attachments: attachments now
 */
struct mrct_dmabuf {
	struct dma_buf *dmabuf;
	struct mutex lock;	/* protects the counters */
	struct page **pages;
	unsigned long npages;
	struct sg_table *map;
	struct device *map_dev;
	unsigned int map_users;
	u64 pins;
	u64 maps;
	u64 unmaps;
	u64 moves;
	u64 attachments;
};

static void mrct_pages_free(struct page **pages, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(pages);
}

static struct page **mrct_pages_alloc(unsigned long n)
{
	struct page **pages;
	unsigned long i;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pages[i]) {
			mrct_pages_free(pages, i);
			return NULL;
		}
	}
	return pages;
}

/* Count attachments: INFO shows importers coming and going. */
static int mrct_dmabuf_attach(struct dma_buf *dmabuf,
			      struct dma_buf_attachment *attach)
{
	struct mrct_dmabuf *buf = dmabuf->priv;

	mutex_lock(&buf->lock);
	buf->attachments++;
	mutex_unlock(&buf->lock);
	return 0;
}

static void mrct_dmabuf_detach(struct dma_buf *dmabuf,
			       struct dma_buf_attachment *attach)
{
	struct mrct_dmabuf *buf = dmabuf->priv;

	mutex_lock(&buf->lock);
	buf->attachments--;
	mutex_unlock(&buf->lock);
}

/* A DYNAMIC buffer does not move while pinned (MOVE fails -EBUSY). */
static int mrct_dmabuf_pin(struct dma_buf_attachment *attach)
{
	struct mrct_dmabuf *buf = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	mutex_lock(&buf->lock);
	buf->pins++;
	mutex_unlock(&buf->lock);
	return 0;
}

static void mrct_dmabuf_unpin(struct dma_buf_attachment *attach)
{
	struct mrct_dmabuf *buf = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	mutex_lock(&buf->lock);
	buf->pins--;
	mutex_unlock(&buf->lock);
}

/*
 * Map @buf's pages for @dev into @buf->map. Contiguous pages merge into
 * one segment, never larger than one mapping may be (under swiotlb=force
 * 256 KiB: a larger segment fails to map when the pages happen to be
 * contiguous enough).
 */
static int mrct_dmabuf_map_pages(struct mrct_dmabuf *buf, struct device *dev)
{
	size_t max_map = dma_max_mapping_size(dev);
	unsigned int max_seg;
	struct sg_table *map;
	int err;

	lockdep_assert_held(&buf->lock);
	max_seg = min_t(size_t, max_map, SZ_1G) & PAGE_MASK;
	if (!max_seg)
		return -EINVAL;
	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		return -ENOMEM;
	err = sg_alloc_table_from_pages_segment(map, buf->pages, buf->npages,
						0, buf->npages << PAGE_SHIFT,
						max_seg, GFP_KERNEL);
	if (err)
		goto out_free;
	err = dma_map_sgtable(dev, map, DMA_BIDIRECTIONAL, 0);
	if (err)
		goto out_free_table;
	buf->map = map;
	buf->map_dev = dev;
	return 0;

out_free_table:
	sg_free_table(map);
out_free:
	kfree(map);
	return err;
}

static void mrct_dmabuf_unmap_pages(struct mrct_dmabuf *buf)
{
	lockdep_assert_held(&buf->lock);
	dma_unmap_sgtable(buf->map_dev, buf->map, DMA_BIDIRECTIONAL, 0);
	sg_free_table(buf->map);
	kfree(buf->map);
	buf->map = NULL;
	buf->map_dev = NULL;
}

/* A copy of @map's DMA segments, for one importer to own. */
static int mrct_dmabuf_copy_map(const struct sg_table *map,
				struct sg_table *sgt)
{
	struct scatterlist *from, *to;
	unsigned int i;
	int err;

	err = sg_alloc_table(sgt, map->nents, GFP_KERNEL);
	if (err)
		return err;
	to = sgt->sgl;
	for_each_sg(map->sgl, from, map->nents, i) {
		sg_set_page(to, sg_page(from), from->length, from->offset);
		sg_dma_address(to) = sg_dma_address(from);
		sg_dma_len(to) = sg_dma_len(from);
		to = sg_next(to);
	}
	return 0;
}

/*
 * The pages as a table mapped for the importer's device: a copy of the
 * buffer's one mapping, made by the first importer, shared by the rest.
 */
static struct sg_table *mrct_dmabuf_map(struct dma_buf_attachment *attach,
					enum dma_data_direction dir)
{
	struct mrct_dmabuf *buf = attach->dmabuf->priv;
	struct sg_table *sgt;
	int err;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);

	mutex_lock(&buf->lock);
	err = -EBUSY;
	if (buf->map && buf->map_dev != attach->dev)
		goto out_unlock;
	err = buf->map ? 0 : mrct_dmabuf_map_pages(buf, attach->dev);
	if (err)
		goto out_unlock;
	err = mrct_dmabuf_copy_map(buf->map, sgt);
	if (err) {
		if (!buf->map_users)
			mrct_dmabuf_unmap_pages(buf);
		goto out_unlock;
	}
	buf->map_users++;
	buf->maps++;
	mutex_unlock(&buf->lock);
	return sgt;

out_unlock:
	mutex_unlock(&buf->lock);
	kfree(sgt);
	return ERR_PTR(err);
}

static void mrct_dmabuf_unmap(struct dma_buf_attachment *attach,
			      struct sg_table *sgt,
			      enum dma_data_direction dir)
{
	struct mrct_dmabuf *buf = attach->dmabuf->priv;

	sg_free_table(sgt);
	kfree(sgt);
	mutex_lock(&buf->lock);
	if (!--buf->map_users)
		mrct_dmabuf_unmap_pages(buf);
	buf->unmaps++;
	mutex_unlock(&buf->lock);
}

/* The last reference went: no importer is left, nor a descriptor. */
static void mrct_dmabuf_release(struct dma_buf *dmabuf)
{
	struct mrct_dmabuf *buf = dmabuf->priv;

	mrct_pages_free(buf->pages, buf->npages);
	mutex_destroy(&buf->lock);
	kfree(buf);
	atomic_dec(&mrct_dmabuf_live);
}

static const struct dma_buf_ops mrct_dmabuf_static_ops = {
	.attach = mrct_dmabuf_attach,
	.detach = mrct_dmabuf_detach,
	.map_dma_buf = mrct_dmabuf_map,
	.release = mrct_dmabuf_release,
	.unmap_dma_buf = mrct_dmabuf_unmap,
};

static const struct dma_buf_ops mrct_dmabuf_dynamic_ops = {
	.attach = mrct_dmabuf_attach,
	.detach = mrct_dmabuf_detach,
	.map_dma_buf = mrct_dmabuf_map,
	.pin = mrct_dmabuf_pin,
	.release = mrct_dmabuf_release,
	.unmap_dma_buf = mrct_dmabuf_unmap,
	.unpin = mrct_dmabuf_unpin,
};

/* One of the module's buffers by descriptor, held; ERR_PTR otherwise. */
static struct dma_buf *mrct_dmabuf_get(int fd)
{
	struct dma_buf *dmabuf = dma_buf_get(fd);

	if (IS_ERR(dmabuf))
		return dmabuf;
	if (dmabuf->ops != &mrct_dmabuf_static_ops &&
	    dmabuf->ops != &mrct_dmabuf_dynamic_ops) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}
	return dmabuf;
}

static struct dma_buf *mrct_dmabuf_export(u64 size, bool dynamic)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct dma_buf *dmabuf;
	struct mrct_dmabuf *buf;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	mutex_init(&buf->lock);
	buf->npages = size >> PAGE_SHIFT;
	buf->pages = mrct_pages_alloc(buf->npages);
	if (!buf->pages) {
		dmabuf = ERR_PTR(-ENOMEM);
		goto out_free_buf;
	}

	exp.ops = dynamic ? &mrct_dmabuf_dynamic_ops : &mrct_dmabuf_static_ops;
	exp.size = size;
	exp.flags = O_RDWR;
	exp.priv = buf;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf))
		goto out_free_pages;
	/* From here on the release op frees @buf. */
	buf->dmabuf = dmabuf;
	atomic_inc(&mrct_dmabuf_live);
	return dmabuf;

out_free_pages:
	mrct_pages_free(buf->pages, buf->npages);
out_free_buf:
	mutex_destroy(&buf->lock);
	kfree(buf);
	return dmabuf;
}

static long mrct_dmabuf_create(void __user *uarg)
{
	struct mrct_dmabuf_create req;
	struct dma_buf *dmabuf;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!req.size || req.size > MRCT_DMABUF_MAX_SIZE ||
	    !PAGE_ALIGNED(req.size) || req.flags & ~MRCT_DMABUF_DYNAMIC)
		return -EINVAL;

	dmabuf = mrct_dmabuf_export(req.size, req.flags & MRCT_DMABUF_DYNAMIC);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	req.fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (req.fd < 0) {
		dma_buf_put(dmabuf);
		return req.fd;
	}
	/* The descriptor is the caller's now, whatever the copy does. */
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/* Sync the importers' mapping for the CPU (@to_cpu) or back. */
static void mrct_dmabuf_sync(struct mrct_dmabuf *buf, bool to_cpu)
{
	mutex_lock(&buf->lock);
	if (buf->map && to_cpu)
		dma_sync_sgtable_for_cpu(buf->map_dev, buf->map,
					 DMA_BIDIRECTIONAL);
	else if (buf->map)
		dma_sync_sgtable_for_device(buf->map_dev, buf->map,
					    DMA_BIDIRECTIONAL);
	mutex_unlock(&buf->lock);
}

/* Copy between @kbuf and the buffer at @offset, page by page. */
static void mrct_dmabuf_copy(struct mrct_dmabuf *buf, u64 offset, u8 *kbuf,
			     u64 len, bool write)
{
	u64 done, n, in;
	void *va;

	for (done = 0; done < len; done += n) {
		in = (offset + done) & ~PAGE_MASK;
		n = min_t(u64, len - done, PAGE_SIZE - in);
		va = kmap_local_page(buf->pages[(offset + done) >> PAGE_SHIFT]);
		if (write)
			memcpy(va + in, kbuf + done, n);
		else
			memcpy(kbuf + done, va + in, n);
		kunmap_local(va);
	}
}

static int mrct_dmabuf_rw_buf(const struct mrct_dmabuf_rw *req, u8 *kbuf)
{
	bool write = req->flags & MRCT_DMABUF_RW_WRITE;
	struct dma_buf *dmabuf;
	int err = 0;

	dmabuf = mrct_dmabuf_get(req->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	if (req->offset > dmabuf->size ||
	    req->length > dmabuf->size - req->offset) {
		err = -EINVAL;
		goto out_put;
	}
	dma_resv_lock(dmabuf->resv, NULL);
	mrct_dmabuf_sync(dmabuf->priv, true);
	mrct_dmabuf_copy(dmabuf->priv, req->offset, kbuf, req->length, write);
	mrct_dmabuf_sync(dmabuf->priv, false);
	dma_resv_unlock(dmabuf->resv);
out_put:
	dma_buf_put(dmabuf);
	return err;
}

static long mrct_dmabuf_rw(void __user *uarg)
{
	struct mrct_dmabuf_rw req;
	void __user *ubuf;
	bool write;
	u8 *kbuf;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~MRCT_DMABUF_RW_WRITE || !req.length ||
	    req.length > MRCT_MAX_XFER)
		return -EINVAL;
	write = req.flags & MRCT_DMABUF_RW_WRITE;
	ubuf = u64_to_user_ptr(req.ptr);

	kbuf = kvmalloc(req.length, GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;
	err = write && copy_from_user(kbuf, ubuf, req.length) ? -EFAULT : 0;
	if (!err)
		err = mrct_dmabuf_rw_buf(&req, kbuf);
	if (!err && !write && copy_to_user(ubuf, kbuf, req.length))
		err = -EFAULT;
	kvfree(kbuf);
	return err;
}

/*
 * Move @buf to @fresh pages: the importers first (after move_notify no
 * device reaches the old pages: they zapped, waited and unmapped), then
 * the copy. Under the reservation lock throughout, so no importer maps
 * the buffer again before it is done.
 */
static void mrct_dmabuf_move_to(struct mrct_dmabuf *buf, struct page **fresh)
{
	struct page **old = buf->pages;
	unsigned long i;
	bool mapped;

	dma_resv_assert_held(buf->dmabuf->resv);
	dma_buf_move_notify(buf->dmabuf);
	for (i = 0; i < buf->npages; i++)
		copy_highpage(fresh[i], old[i]);

	mutex_lock(&buf->lock);
	buf->pages = fresh;
	buf->moves++;
	mapped = buf->map_users;
	mutex_unlock(&buf->lock);
	/* An importer kept its mapping: rather leak than free its pages. */
	if (WARN_ON_ONCE(mapped))
		return;
	mrct_pages_free(old, buf->npages);
}

static long mrct_dmabuf_move(void __user *uarg)
{
	struct mrct_dmabuf_fd req;
	struct dma_buf *dmabuf;
	struct mrct_dmabuf *buf;
	struct page **fresh;
	int err = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	dmabuf = mrct_dmabuf_get(req.fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	buf = dmabuf->priv;
	if (!dma_buf_is_dynamic(dmabuf)) {
		err = -EINVAL;
		goto out_put;
	}
	fresh = mrct_pages_alloc(buf->npages);
	if (!fresh) {
		err = -ENOMEM;
		goto out_put;
	}

	dma_resv_lock(dmabuf->resv, NULL);
	/* Pins change under the reservation lock only. */
	if (buf->pins)
		err = -EBUSY;
	else
		mrct_dmabuf_move_to(buf, fresh);
	dma_resv_unlock(dmabuf->resv);
	if (err)
		mrct_pages_free(fresh, buf->npages);
out_put:
	dma_buf_put(dmabuf);
	return err;
}

static long mrct_dmabuf_info(void __user *uarg)
{
	struct mrct_dmabuf_info req;
	struct dma_buf *dmabuf;
	struct mrct_dmabuf *buf;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	dmabuf = mrct_dmabuf_get(req.fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	buf = dmabuf->priv;

	dma_resv_lock(dmabuf->resv, NULL);
	mutex_lock(&buf->lock);
	req.flags = dma_buf_is_dynamic(dmabuf) ? MRCT_DMABUF_DYNAMIC : 0;
	/* What the tests check mrcore's choice of mode against. */
	if (IS_ENABLED(CONFIG_DMABUF_MOVE_NOTIFY))
		req.flags |= MRCT_DMABUF_MOVE_NOTIFY;
	req.size = dmabuf->size;
	req.pins = buf->pins;
	req.maps = buf->maps;
	req.unmaps = buf->unmaps;
	req.moves = buf->moves;
	req.attachments = buf->attachments;
	mutex_unlock(&buf->lock);
	dma_resv_unlock(dmabuf->resv);
	dma_buf_put(dmabuf);
	/* Ours is one of them until the put above: read after it. */
	req.live = atomic_read(&mrct_dmabuf_live);

	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/*
 * The driver's reg_user_mr_dmabuf, then what ib_reg_user_mr() fills in
 * after a driver's registration (restrack aside: mrct_mr_adopt()).
 */
static int mrct_reg_dmabuf_locked(struct mrct_ctx *ctx,
				  struct mrct_reg_dmabuf *req)
{
	struct ib_pd *pd;
	struct ib_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->ibdev)
		return -ENODEV;
	if (!ctx->ibdev->ops.reg_user_mr_dmabuf)
		return -EOPNOTSUPP;
	pd = ctx->pd[req->pd];
	mr = ctx->ibdev->ops.reg_user_mr_dmabuf(pd, req->offset, req->length,
						req->iova, req->fd,
						req->access, NULL);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	mrct_mr_adopt(ctx, mr, pd);
	mr->iova = req->iova;
	mr->length = req->length;

	err = mrct_mr_store(ctx, mr, &req->handle);
	if (err) {
		ib_dereg_mr(mr);
		return err;
	}
	return mrct_fill_info(ctx, mr, &req->info);
}

static long mrct_reg_dmabuf(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_reg_dmabuf req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.pd >= MRCT_NUM_PDS)
		return -EINVAL;
	return mrct_call_locked(ctx, mrct_reg_dmabuf_locked, &req, uarg);
}

static int mrct_dmabuf_stats_locked(struct mrct_ctx *ctx,
				    struct mrct_dmabuf_stats *req)
{
	struct mrc_mr *base = mrct_vhca_mr(ctx, req->handle);
	struct mrc_dmabuf_dev_stats *d;
	struct mrc_dmabuf_stats st;
	int err;

	if (IS_ERR(base))
		return PTR_ERR(base);
	err = mrc_mr_dmabuf_stats(base, &st);
	if (err)
		return err;

	d = &base->mdev->dmabuf;
	req->flags = (st.pinned ? MRCT_DMABUF_MR_PINNED : 0) |
		     (st.mapped ? MRCT_DMABUF_MR_MAPPED : 0);
	req->moves = st.moves;
	req->faults = st.faults;
	req->remaps = st.remaps;
	req->dev_regs_movable = atomic64_read(&d->regs_movable);
	req->dev_regs_pinned = atomic64_read(&d->regs_pinned);
	req->dev_moves = atomic64_read(&d->moves);
	req->dev_faults = atomic64_read(&d->faults);
	req->dev_fault_errors = atomic64_read(&d->fault_errors);
	req->dev_remaps = atomic64_read(&d->remaps);
	return 0;
}

static long mrct_dmabuf_stats(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_dmabuf_stats req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags)
		return -EINVAL;
	return mrct_call_locked(ctx, mrct_dmabuf_stats_locked, &req, uarg);
}

static long mrct_dmabuf_ioctl(struct mrct_ctx *ctx, unsigned int cmd,
			      void __user *uarg)
{
	BUILD_BUG_ON(sizeof(struct mrct_dmabuf_create) != 16);
	BUILD_BUG_ON(sizeof(struct mrct_dmabuf_rw) != 32);
	BUILD_BUG_ON(sizeof(struct mrct_dmabuf_fd) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_dmabuf_info) != 64);
	BUILD_BUG_ON(sizeof(struct mrct_reg_dmabuf) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_dmabuf_stats) != 80);

	switch (cmd) {
	case MRCT_DMABUF_CREATE:
		return mrct_dmabuf_create(uarg);
	case MRCT_DMABUF_RW:
		return mrct_dmabuf_rw(uarg);
	case MRCT_DMABUF_MOVE:
		return mrct_dmabuf_move(uarg);
	case MRCT_DMABUF_INFO:
		return mrct_dmabuf_info(uarg);
	case MRCT_REG_DMABUF:
		return mrct_reg_dmabuf(ctx, uarg);
	case MRCT_DMABUF_STATS:
		return mrct_dmabuf_stats(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * Nothing of its own to free: the MRs are the context's, and a buffer
 * lives as long as its descriptors and importers.
 */
static void mrct_dmabuf_unbind(struct mrct_ctx *ctx)
{
}

const struct mrct_ext mrct_dmabuf_ext = {
	.ioctl = mrct_dmabuf_ioctl,
	.unbind = mrct_dmabuf_unbind,
};
