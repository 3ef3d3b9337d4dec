// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: memory regions over a range of a dma-buf (reg_user_mr_dmabuf).
 *
 * Every dma-buf MR holds a reference to its buffer (dma_buf_get()) and a
 * dynamic attachment to it on the device's DMA device; its MTT has one
 * PAGE_SIZE entry per page of [ALIGN_DOWN(offset), PAGE_ALIGN(offset +
 * length)) of the buffer. One of two modes is chosen at registration:
 *
 *  - movable, when the kernel has CONFIG_DMABUF_MOVE_NOTIFY, the exporter
 *    is dynamic (it has pin/unpin) and the device has MRC_CAP_ODP: the
 *    context carries MRC_MKEY_F_ODP, so the exporter may move the buffer
 *    whenever it holds the buffer's reservation lock. Its move_notify
 *    zaps the entries, waits for the device accesses that may have read
 *    them (ops->sync_mkey) and unmaps the attachment; the next device
 *    access faults, and mrc_dmabuf_fault() maps the buffer again and
 *    writes the entries.
 *  - pinned, otherwise: the buffer is pinned (dma_buf_pin(); a static
 *    exporter never moves anyway and maps at attach time), mapped once
 *    and registered like any table; move_notify must never be called.
 *
 * The reservation lock (dmabuf->resv) protects the mapping state and the
 * MR's entries in device memory: the exporter calls move_notify with it
 * held, and the registration, the fault path and the release take it
 * around every map, unmap and entry write. Nothing under it allocates
 * memory: the fault path allocates its entry buffer first, and the zap
 * writes zeros from the zero page.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-direction.h>
#include <linux/dma-resv.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "mrcore_loc.h"

MODULE_IMPORT_NS(DMA_BUF);

/* MTT entries per write_xlt call: one page of them. */
#define MRC_DMABUF_CHUNK	(PAGE_SIZE / MRC_MTT_ENTRY_SIZE)

/**
 * struct mrc_dmabuf - the dma-buf state of one MR
 * @mr: the MR
 * @attach: the MR's attachment; attach->dmabuf is held by the MR
 * @sgt: the attachment's mapped table, or NULL while unmapped; written
 *	under the reservation lock
 * @populated: the MR's entries in device memory may be present (written
 *	from @sgt); under the reservation lock
 * @pinned: the pinned fallback: pinned and mapped from registration to
 *	release, never moved
 * @writable: entries carry MRC_MTT_WRITE
 * @offset: byte offset of the MR's first byte in the buffer
 * @length: bytes
 * @iova: address of the first byte in the key's address space
 * @npages: MTT entries, one per PAGE_SIZE page
 * @moves: see struct mrc_dmabuf_stats
 * @faults: see struct mrc_dmabuf_stats
 * @remaps: see struct mrc_dmabuf_stats
 */
struct mrc_dmabuf {
	struct mrc_mr *mr;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	bool populated;
	bool pinned;
	bool writable;
	u64 offset;
	u64 length;
	u64 iova;
	u64 npages;
	atomic64_t moves;
	atomic64_t faults;
	atomic64_t remaps;
};

static struct dma_resv *mrc_dmabuf_resv(const struct mrc_dmabuf *db)
{
	return db->attach->dmabuf->resv;
}

/* The bytes of the MR in a mapped table, as a segment stream. */
static void mrc_dmabuf_segs(const struct mrc_dmabuf *db, struct sg_table *sgt,
			    struct mrc_seg_iter *it)
{
	mrc_seg_iter_sg(it, sgt->sgl, sgt->nents, db->offset, db->length);
}

/*
 * The table holds the MR's bytes in segments that PAGE_SIZE entries can
 * name. dma-buf's contract is page-aligned segments; one that breaks it
 * fails the map instead of the entry writes.
 */
static bool mrc_dmabuf_fits(const struct mrc_dmabuf *db, struct sg_table *sgt)
{
	struct mrc_seg_iter it;
	u64 bytes;

	mrc_dmabuf_segs(db, sgt, &it);
	return mrc_page_size_segs(&it, db->iova, PAGE_SIZE, &bytes) &&
	       bytes == db->length;
}

/*
 * Map the attachment if it is not mapped, and wait for the exporter's
 * kernel fences (a move's copy) before the device may reach the pages.
 * Return: 1 when it mapped, 0 when it was mapped already, or a negative
 * errno (nothing mapped): -EINVAL for a table that is not page-aligned.
 */
static int mrc_dmabuf_map(struct mrc_dmabuf *db)
{
	struct sg_table *sgt;
	long ret;

	dma_resv_assert_held(mrc_dmabuf_resv(db));
	if (db->sgt)
		return 0;

	sgt = dma_buf_map_attachment(db->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	ret = -EINVAL;
	if (mrc_dmabuf_fits(db, sgt))
		ret = dma_resv_wait_timeout(mrc_dmabuf_resv(db),
					    DMA_RESV_USAGE_KERNEL, false,
					    MAX_SCHEDULE_TIMEOUT);
	if (ret <= 0) {
		dma_buf_unmap_attachment(db->attach, sgt, DMA_BIDIRECTIONAL);
		return ret ? ret : -ETIMEDOUT;
	}
	/* mrc_mr_dmabuf_stats() reads it without the lock. */
	WRITE_ONCE(db->sgt, sgt);
	return 1;
}

static void mrc_dmabuf_unmap(struct mrc_dmabuf *db)
{
	dma_resv_assert_held(mrc_dmabuf_resv(db));
	if (!db->sgt)
		return;
	dma_buf_unmap_attachment(db->attach, db->sgt, DMA_BIDIRECTIONAL);
	WRITE_ONCE(db->sgt, NULL);
}

/*
 * Write every entry of the MR from the mapped table, through @buf (room
 * for MRC_DMABUF_CHUNK entries), then fence. Device memory writes of the
 * MR's own range do not fail.
 */
static void mrc_dmabuf_populate(struct mrc_dmabuf *db, __le64 *buf)
{
	struct mrc_device *mdev = db->mr->mdev;
	u64 offset = db->mr->xlt.offset;
	struct mrc_mtt_builder b;
	struct mrc_seg_iter it;
	u64 left = db->npages;
	int n;

	dma_resv_assert_held(mrc_dmabuf_resv(db));
	mrc_dmabuf_segs(db, db->sgt, &it);
	mrc_mtt_builder_init(&b, &it, db->iova, PAGE_SHIFT, db->npages,
			     db->writable);
	/* Set first: a zap must clear whatever part gets written. */
	db->populated = true;
	while (left) {
		n = mrc_mtt_fill(&b, buf, min_t(u64, left, MRC_DMABUF_CHUNK));
		/* The table was checked against the MR at registration. */
		if (WARN_ON_ONCE(n <= 0))
			break;
		WARN_ON_ONCE(mdev->ops->write_xlt(mdev, offset, buf,
						  n * MRC_MTT_ENTRY_SIZE));
		offset += (u64)n * MRC_MTT_ENTRY_SIZE;
		left -= n;
	}
	mdev->ops->fence(mdev);
}

/*
 * Make every entry non-present and return once no device access that may
 * have read the old ones is still running: after this the pages may go.
 */
static void mrc_dmabuf_zap(struct mrc_dmabuf *db)
{
	struct mrc_mr *mr = db->mr;
	struct mrc_device *mdev = mr->mdev;
	const void *zeros = page_address(ZERO_PAGE(0));
	u64 bytes = db->npages * MRC_MTT_ENTRY_SIZE, done, n;

	dma_resv_assert_held(mrc_dmabuf_resv(db));
	if (!db->populated)
		return;
	for (done = 0; done < bytes; done += n) {
		n = min_t(u64, bytes - done, PAGE_SIZE);
		/* The MR's own range: device memory writes do not fail. */
		WARN_ON_ONCE(mdev->ops->write_xlt(mdev, mr->xlt.offset + done,
						  zeros, n));
	}
	mdev->ops->sync_mkey(mdev, mrc_key_index(mr->key));
	db->populated = false;
}

/*
 * The exporter is about to move the buffer (it holds the reservation
 * lock): zap, wait for the device, unmap. The next access faults.
 */
static void mrc_dmabuf_move_notify(struct dma_buf_attachment *attach)
{
	struct mrc_dmabuf *db = attach->importer_priv;

	mrc_dmabuf_zap(db);
	mrc_dmabuf_unmap(db);
	atomic64_inc(&db->moves);
	atomic64_inc(&db->mr->mdev->dmabuf.moves);
}

/* A pinned buffer does not move: an exporter that says so is broken. */
static void mrc_dmabuf_pinned_move_notify(struct dma_buf_attachment *attach)
{
	struct mrc_dmabuf *db = attach->importer_priv;

	pr_warn_ratelimited("%s: MR[0x%08x]: move_notify on a pinned dma-buf (%s)\n",
			    db->mr->mdev->name, db->mr->key,
			    attach->dmabuf->exp_name);
}

static const struct dma_buf_attach_ops mrc_dmabuf_movable_ops = {
	.allow_peer2peer = false,
	.move_notify = mrc_dmabuf_move_notify,
};

static const struct dma_buf_attach_ops mrc_dmabuf_pinned_ops = {
	.allow_peer2peer = false,
	.move_notify = mrc_dmabuf_pinned_move_notify,
};

/* An entry buffer for mrc_dmabuf_populate(), allocated outside the lock. */
static __le64 *mrc_dmabuf_buf(const struct mrc_dmabuf *db)
{
	return kmalloc_array(min_t(u64, db->npages, MRC_DMABUF_CHUNK),
			     MRC_MTT_ENTRY_SIZE, GFP_KERNEL);
}

/*
 * Map a movable MR again if a move unmapped it, and write whatever
 * entries a zap cleared. Return: 1 when it mapped, 0 when the buffer was
 * mapped and its entries present already, or a negative errno.
 */
static int mrc_dmabuf_remap(struct mrc_dmabuf *db)
{
	__le64 *buf;
	int ret;

	/* Exporters may take the lock to evict in reclaim: allocate first. */
	buf = mrc_dmabuf_buf(db);
	if (!buf)
		return -ENOMEM;
	dma_resv_lock(mrc_dmabuf_resv(db), NULL);
	ret = mrc_dmabuf_map(db);
	if (ret > 0 || (!ret && !db->populated))
		mrc_dmabuf_populate(db, buf);
	dma_resv_unlock(mrc_dmabuf_resv(db));
	kfree(buf);
	return ret;
}

/**
 * mrc_dmabuf_fault - map a movable dma-buf MR again after a move
 * @mr: a dma-buf MR, held by the caller (mrc_mr_lookup())
 * @iova: address that faulted, in the MR's address space
 * @len: bytes of the access; unused: the whole MR is mapped
 * @flags: MRC_ODP_WRITE for a write access
 *
 * Under the buffer's reservation lock: maps the attachment if a move
 * unmapped it, waits for the exporter's kernel fences, writes every entry
 * and fences. A fault on an MR that is mapped already (another fault won
 * the race) changes nothing; a pinned MR never needs a fault.
 *
 * Context: process context; may sleep. Called from mrc_odp_fault(), which
 * holds the MR, so mrc_dmabuf_release() cannot run concurrently.
 * Return: 0; -EINVAL if @mr is not a dma-buf MR; -ERANGE if @iova is
 * outside it; -EPERM for a write to an MR without write rights; -ENOMEM;
 * or the error of mapping the attachment or of waiting for its fences.
 */
int mrc_dmabuf_fault(struct mrc_mr *mr, u64 iova, u64 len, u32 flags)
{
	struct mrc_dmabuf *db = mr->dmabuf;
	struct mrc_device *mdev = mr->mdev;
	int ret = 0;

	if (!db)
		return -EINVAL;
	atomic64_inc(&db->faults);
	atomic64_inc(&mdev->dmabuf.faults);
	if (iova < db->iova || iova - db->iova >= db->length)
		ret = -ERANGE;
	else if ((flags & MRC_ODP_WRITE) && !db->writable)
		ret = -EPERM;
	else if (!db->pinned)
		ret = mrc_dmabuf_remap(db);

	if (ret < 0) {
		atomic64_inc(&mdev->dmabuf.fault_errors);
		mrc_dbg(mdev, "MR[0x%08x]: dma-buf fault at 0x%llx: %d\n",
			mr->key, iova, ret);
		return ret;
	}
	if (ret) {
		atomic64_inc(&db->remaps);
		atomic64_inc(&mdev->dmabuf.remaps);
	}
	return 0;
}

/**
 * mrc_mr_dmabuf_stats - the dma-buf counters of an MR
 * @mr: a registered MR
 * @st: out: its counters and mode
 *
 * Context: any context.
 * Return: 0, or -EINVAL if @mr is not a dma-buf MR.
 */
int mrc_mr_dmabuf_stats(struct mrc_mr *mr, struct mrc_dmabuf_stats *st)
{
	struct mrc_dmabuf *db = mr->dmabuf;

	if (!db)
		return -EINVAL;
	*st = (struct mrc_dmabuf_stats) {
		.moves = atomic64_read(&db->moves),
		.faults = atomic64_read(&db->faults),
		.remaps = atomic64_read(&db->remaps),
		.pinned = db->pinned,
		/* A snapshot: a move or a fault may change it at once. */
		.mapped = !!READ_ONCE(db->sgt),
	};
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_mr_dmabuf_stats);

/* The checks that need neither the buffer nor an allocation. */
static int mrc_dmabuf_check(const struct mrc_pd *pd, u64 offset, u64 length,
			    u64 iova, u32 access)
{
	u64 end;
	int ret;

	ret = mrc_check_pd(pd) ?: mrc_check_access(access);
	if (ret)
		return ret;
	/*
	 * ibv_reg_dmabuf_mr(3): "only the following flags are supported:"
	 * the four rights and RELAXED_ORDERING. Not ZERO_BASED (the key's
	 * addresses are given), ON_DEMAND (the exporter moves the buffer,
	 * not faults), HUGETLB (the exporter's pages are its own) or MW_BIND.
	 */
	if (access & ~MRC_DMABUF_ACCESS)
		return -EOPNOTSUPP;
	if (!pd->mdev->dma_dev)
		return -EOPNOTSUPP;
	if (!length || check_add_overflow(offset, length, &end) ||
	    check_add_overflow(iova, length, &end))
		return -EINVAL;
	/* An MTT entry maps a whole page: the same offset in both. */
	if ((offset ^ iova) & ~PAGE_MASK)
		return -EINVAL;
	return 0;
}

/*
 * The buffer may follow the exporter's moves: the kernel lets it, the
 * exporter can, and the device faults on non-present entries.
 */
static bool mrc_dmabuf_movable(const struct mrc_device *mdev,
			       struct dma_buf *dmabuf)
{
	return IS_ENABLED(CONFIG_DMABUF_MOVE_NOTIFY) &&
	       dma_buf_is_dynamic(dmabuf) && (mdev->caps.flags & MRC_CAP_ODP);
}

static struct mrc_dmabuf *mrc_dmabuf_alloc(struct mrc_mr *mr, u64 offset,
					   u64 length, u64 iova, bool pinned)
{
	struct mrc_dmabuf *db;

	db = kzalloc(sizeof(*db), GFP_KERNEL);
	if (!db)
		return NULL;
	db->mr = mr;
	db->pinned = pinned;
	db->writable = mrc_access_writable(mr->access);
	db->offset = offset;
	db->length = length;
	db->iova = iova;
	db->npages = (PAGE_ALIGN(offset + length) -
		      ALIGN_DOWN(offset, PAGE_SIZE)) >> PAGE_SHIFT;
	atomic64_set(&db->moves, 0);
	atomic64_set(&db->faults, 0);
	atomic64_set(&db->remaps, 0);
	return db;
}

/*
 * Attach and map: pinned first in the fallback, where the mapping then
 * holds until release; a movable MR's mapping lasts until the next move.
 */
static int mrc_dmabuf_attach(struct mrc_dmabuf *db, struct dma_buf *dmabuf)
{
	struct mrc_device *mdev = db->mr->mdev;
	int ret;

	db->attach = dma_buf_dynamic_attach(dmabuf, mdev->dma_dev,
					    db->pinned ? &mrc_dmabuf_pinned_ops :
							 &mrc_dmabuf_movable_ops,
					    db);
	if (IS_ERR(db->attach))
		return PTR_ERR(db->attach);

	dma_resv_lock(dmabuf->resv, NULL);
	ret = db->pinned ? dma_buf_pin(db->attach) : 0;
	if (!ret) {
		ret = mrc_dmabuf_map(db);
		if (ret < 0 && db->pinned)
			dma_buf_unpin(db->attach);
	}
	dma_resv_unlock(dmabuf->resv);
	if (ret < 0) {
		dma_buf_detach(dmabuf, db->attach);
		return ret;
	}
	return 0;
}

/* Undo mrc_dmabuf_attach(): unmap, unpin, detach. */
static void mrc_dmabuf_detach(struct mrc_dmabuf *db)
{
	struct dma_buf *dmabuf = db->attach->dmabuf;

	dma_resv_lock(dmabuf->resv, NULL);
	mrc_dmabuf_unmap(db);
	if (db->pinned)
		dma_buf_unpin(db->attach);
	dma_resv_unlock(dmabuf->resv);
	dma_buf_detach(dmabuf, db->attach);
}

/*
 * Install the MR. A pinned table is registered as it is; a movable MR
 * starts with non-present entries and an MRC_MKEY_F_ODP context, and its
 * entries are written under the lock if no move came in between.
 */
static int mrc_dmabuf_install(struct mrc_dmabuf *db)
{
	struct mrc_xlt_table t = {
		.iova = db->iova,
		.length = db->length,
		.writable = db->writable,
		.odp = !db->pinned,
		.mode = MRC_ACCESS_MODE_MTT,
		.page_shift = PAGE_SHIFT,
		.nentries = db->npages,
	};
	__le64 *buf = NULL;
	int ret;

	if (db->pinned) {
		mrc_dmabuf_segs(db, db->sgt, &t.segs);
	} else {
		buf = mrc_dmabuf_buf(db);
		if (!buf)
			return -ENOMEM;
	}

	ret = mrc_mr_install_table(db->mr, &t);
	if (!ret && buf) {
		dma_resv_lock(mrc_dmabuf_resv(db), NULL);
		if (db->sgt)
			mrc_dmabuf_populate(db, buf);
		dma_resv_unlock(mrc_dmabuf_resv(db));
	}
	kfree(buf);
	return ret;
}

/**
 * mrc_reg_dmabuf_mr - register a range of a dma-buf
 * @pd: protection domain
 * @fd: a dma-buf file descriptor of the calling process; the MR holds its
 *	own reference to the buffer, so @fd may be closed at once
 * @offset: byte offset of the first byte in the buffer
 * @length: bytes
 * @iova: address of the first byte in the key's address space; its offset
 *	in the page must equal @offset's
 * @access: MRC_ACCESS_* rights and RELAXED_ORDERING; every other bit
 *	is refused (ZERO_BASED, ON_DEMAND, HUGETLB, MW_BIND)
 *
 * The buffer is attached on the device's DMA device and registered in MTT
 * mode, one PAGE_SIZE entry per page the range touches. With
 * CONFIG_DMABUF_MOVE_NOTIFY, a dynamic exporter and a device with
 * MRC_CAP_ODP, the MR follows the exporter's moves (the next device
 * access after a move faults and maps the buffer again); otherwise the
 * buffer is pinned for the MR's life. mrc_dereg_mr() frees it.
 *
 * Context: process context; may sleep.
 * Return: the MR; ERR_PTR(-EINVAL) for a bad @pd or @access, a zero
 * @length, an @offset + @length or @iova + @length that wraps, page
 * offsets of @offset and @iova that differ, a range beyond the buffer,
 * or an @fd that is not a dma-buf; -EBADF for a bad @fd; -EOPNOTSUPP for
 * ZERO_BASED, ON_DEMAND, HUGETLB or MW_BIND, or a device without a DMA
 * device; -ENOSPC
 * when no key or translation space is free; -ENOMEM; or the error of
 * attaching, pinning or mapping the buffer, or of a backend op.
 */
struct mrc_mr *mrc_reg_dmabuf_mr(struct mrc_pd *pd, int fd, u64 offset,
				 u64 length, u64 iova, u32 access)
{
	struct mrc_reg_attr attr = { .type = MRC_MR_DMABUF, .access = access };
	struct dma_buf *dmabuf;
	struct mrc_dmabuf *db;
	struct mrc_mr *mr;
	int ret;

	ret = mrc_dmabuf_check(pd, offset, length, iova, access);
	if (ret)
		return ERR_PTR(ret);
	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	if (offset + length > dmabuf->size) {
		ret = -EINVAL;
		goto out_put;
	}

	mr = mrc_mr_alloc(pd, &attr);
	if (!mr) {
		ret = -ENOMEM;
		goto out_put;
	}
	db = mrc_dmabuf_alloc(mr, offset, length, iova,
			      !mrc_dmabuf_movable(pd->mdev, dmabuf));
	if (!db) {
		ret = -ENOMEM;
		goto out_free_mr;
	}
	mr->dmabuf = db;

	ret = mrc_dmabuf_attach(db, dmabuf);
	if (ret)
		goto out_free_db;
	ret = mrc_dmabuf_install(db);
	if (ret)
		goto out_detach;

	atomic64_inc(db->pinned ? &pd->mdev->dmabuf.regs_pinned :
				  &pd->mdev->dmabuf.regs_movable);
	mrc_dbg(pd->mdev, "MR[0x%08x]: dma-buf %s, %s, offset 0x%llx, %llu pages\n",
		mr->key, dmabuf->exp_name, db->pinned ? "pinned" : "movable",
		offset, db->npages);
	return mr;

out_detach:
	mrc_dmabuf_detach(db);
out_free_db:
	kfree(db);
out_free_mr:
	mrc_mr_free(mr);
out_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(mrc_reg_dmabuf_mr);

/**
 * mrc_dmabuf_release - tear down the dma-buf state of an MR being
 *	deregistered
 * @mr: a dma-buf MR whose key the device no longer resolves
 *
 * Unmaps the attachment (unpinning the fallback) under the reservation
 * lock, detaches, and drops the MR's reference to the buffer, which the
 * exporter frees if it was the last.
 *
 * Context: process context; may sleep. Never concurrent with
 * mrc_dmabuf_fault(): mrc_dereg_mr() waited for the holders of the MR.
 */
void mrc_dmabuf_release(struct mrc_mr *mr)
{
	struct mrc_dmabuf *db = mr->dmabuf;
	struct dma_buf *dmabuf = db->attach->dmabuf;

	mrc_dmabuf_detach(db);
	dma_buf_put(dmabuf);
	mr->dmabuf = NULL;
	kfree(db);
}
