// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: translation tables (xlt) in the device's translation area: the
 * space they live in, and the writing of their entries. How a table is
 * planned and its MTT or KLM entries built from DMA segments is in
 * xlt_build.c.
 *
 * The space: a binary buddy allocator over 64-byte segments.
 * A block of order o covers segments [b << o, (b + 1) << o) and is named by
 * bit b of bits[o]; a set bit means the block is free. Blocks are therefore
 * naturally aligned, and a block's buddy is bit b ^ 1 of the same order.
 * Freeing merges with the buddy as long as it is free, so any aligned run
 * of free segments is always findable as one block.
 *
 * The writing: a planned table goes to fresh space in chunks of at most
 * MRC_XLT_CHUNK_BYTES, each built in a CPU buffer and copied with
 * write_xlt (mrc_xlt_write(), a failure-injection stage), then one fence.
 *
 * Reading order: the allocator (init, fini, alloc, free), then the
 * writing (one write_xlt, a table's chunks, a whole table).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/export.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mrcore_loc.h"

/* Blocks of @order that fit entirely in the area. */
static unsigned long mrc_xlt_blocks(const struct mrc_xlt_buddy *buddy,
				    unsigned int order)
{
	return buddy->num_segs >> order;
}

/* One free block per set bit of num_segs, largest at offset 0. */
static void mrc_xlt_seed(struct mrc_xlt_buddy *buddy)
{
	unsigned long seg = 0;
	int order;

	for (order = buddy->max_order; order >= 0; order--) {
		if (!(buddy->num_segs & BIT(order)))
			continue;
		__set_bit(seg >> order, buddy->bits[order]);
		buddy->num_free[order]++;
		seg += BIT(order);
	}
}

static void mrc_xlt_free_bitmaps(struct mrc_xlt_buddy *buddy)
{
	unsigned int order;

	for (order = 0; order <= buddy->max_order; order++)
		kvfree(buddy->bits[order]);
}

/**
 * mrc_xlt_init - set up the translation-area allocator of a device
 * @mdev: device whose caps.xlt_size has been validated
 *
 * Return: 0 or -ENOMEM.
 */
int mrc_xlt_init(struct mrc_device *mdev)
{
	struct mrc_xlt_buddy *buddy = &mdev->xlt;
	unsigned int order;

	spin_lock_init(&buddy->lock);
	buddy->num_segs = mdev->caps.xlt_size >> MRC_XLT_SEG_SHIFT;
	buddy->max_order = ilog2(buddy->num_segs);

	buddy->num_free = kcalloc(buddy->max_order + 1,
				  sizeof(*buddy->num_free), GFP_KERNEL);
	if (!buddy->num_free)
		return -ENOMEM;

	/* Zeroed, so mrc_xlt_free_bitmaps() may run on a partial array. */
	buddy->bits = kcalloc(buddy->max_order + 1, sizeof(*buddy->bits),
			      GFP_KERNEL);
	if (!buddy->bits)
		goto out_free_num_free;

	for (order = 0; order <= buddy->max_order; order++) {
		buddy->bits[order] =
			kvcalloc(BITS_TO_LONGS(mrc_xlt_blocks(buddy, order)),
				 sizeof(unsigned long), GFP_KERNEL);
		if (!buddy->bits[order])
			goto out_free_bitmaps;
	}

	mrc_xlt_seed(buddy);
	return 0;

out_free_bitmaps:
	mrc_xlt_free_bitmaps(buddy);
	kfree(buddy->bits);
	buddy->bits = NULL;
out_free_num_free:
	kfree(buddy->num_free);
	buddy->num_free = NULL;
	return -ENOMEM;
}

/**
 * mrc_xlt_fini - free the translation-area allocator of a device
 * @mdev: device set up by mrc_xlt_init()
 */
void mrc_xlt_fini(struct mrc_device *mdev)
{
	struct mrc_xlt_buddy *buddy = &mdev->xlt;

	mrc_xlt_free_bitmaps(buddy);
	kfree(buddy->bits);
	buddy->bits = NULL;
	kfree(buddy->num_free);
	buddy->num_free = NULL;
}

/*
 * Take a free block of @order, splitting the smallest larger free block if
 * needed; the upper half of each split stays free. Returns false if no block
 * is large enough.
 */
static bool mrc_xlt_take(struct mrc_xlt_buddy *buddy, unsigned int order,
			 unsigned long *seg)
{
	unsigned int o = order;
	unsigned long block;

	lockdep_assert_held(&buddy->lock);

	while (o <= buddy->max_order && !buddy->num_free[o])
		o++;
	if (o > buddy->max_order)
		return false;

	block = find_first_bit(buddy->bits[o], mrc_xlt_blocks(buddy, o));
	if (WARN_ON_ONCE(block >= mrc_xlt_blocks(buddy, o)))
		return false;
	__clear_bit(block, buddy->bits[o]);
	buddy->num_free[o]--;

	while (o > order) {
		o--;
		block <<= 1;
		__set_bit(block ^ 1, buddy->bits[o]);
		buddy->num_free[o]++;
	}

	*seg = block << order;
	return true;
}

/* The block, or a larger free block containing it, is free already. */
static bool mrc_xlt_is_free(const struct mrc_xlt_buddy *buddy,
			    unsigned long block, unsigned int order)
{
	for (; order <= buddy->max_order; order++, block >>= 1) {
		if (block >= mrc_xlt_blocks(buddy, order))
			break;
		if (test_bit(block, buddy->bits[order]))
			return true;
	}
	return false;
}

/*
 * Return block @block of @order, merging it with its buddy for as long as
 * the buddy is free. Returns false, changing nothing, on a double free.
 */
static bool mrc_xlt_put(struct mrc_xlt_buddy *buddy, unsigned long block,
			unsigned int order)
{
	lockdep_assert_held(&buddy->lock);

	if (mrc_xlt_is_free(buddy, block, order))
		return false;

	while (order < buddy->max_order) {
		unsigned long mate = block ^ 1;

		if (mate >= mrc_xlt_blocks(buddy, order) ||
		    !test_bit(mate, buddy->bits[order]))
			break;
		__clear_bit(mate, buddy->bits[order]);
		buddy->num_free[order]--;
		block >>= 1;
		order++;
	}

	__set_bit(block, buddy->bits[order]);
	buddy->num_free[order]++;
	return true;
}

/* Segments needed for @bytes, as a block order; false if it cannot fit. */
static bool mrc_xlt_order(const struct mrc_xlt_buddy *buddy, u64 bytes,
			  unsigned int *order)
{
	u64 segs;

	if (check_add_overflow(bytes, (u64)MRC_XLT_SEG_SIZE - 1, &segs))
		return false;
	segs >>= MRC_XLT_SEG_SHIFT;
	if (segs > buddy->num_segs)
		return false;

	*order = order_base_2(segs);
	return *order <= buddy->max_order;
}

/**
 * mrc_xlt_alloc - reserve a piece of a device's translation area
 * @mdev: registered device
 * @bytes: bytes of MTT/KLM entries to hold
 * @xlt: filled in on success
 *
 * @bytes is rounded up to a power-of-two number of 64-byte segments; the
 * piece is naturally aligned, i.e. @xlt->offset is a multiple of
 * @xlt->size.
 *
 * Context: process context; does not sleep.
 * Return: 0; -EINVAL if @bytes is 0; -ENOSPC if no free block is large
 * enough, which includes requests larger than the whole area.
 */
int mrc_xlt_alloc(struct mrc_device *mdev, u64 bytes, struct mrc_xlt *xlt)
{
	struct mrc_xlt_buddy *buddy = &mdev->xlt;
	unsigned int order;
	unsigned long seg;
	bool found;

	if (!bytes)
		return -EINVAL;
	if (!mrc_xlt_order(buddy, bytes, &order))
		return -ENOSPC;

	spin_lock(&buddy->lock);
	found = mrc_xlt_take(buddy, order, &seg);
	spin_unlock(&buddy->lock);
	if (!found)
		return -ENOSPC;

	atomic_add(1 << order, &mdev->xlt_segs_used);
	xlt->offset = (u64)seg << MRC_XLT_SEG_SHIFT;
	xlt->size = (u64)MRC_XLT_SEG_SIZE << order;
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_xlt_alloc);

/* Only what mrc_xlt_alloc() can have handed out. */
static bool mrc_xlt_valid(const struct mrc_device *mdev,
			  const struct mrc_xlt *xlt)
{
	u64 end;

	return xlt->size >= MRC_XLT_SEG_SIZE && is_power_of_2(xlt->size) &&
	       IS_ALIGNED(xlt->offset, xlt->size) &&
	       !check_add_overflow(xlt->offset, xlt->size, &end) &&
	       end <= mdev->caps.xlt_size;
}

/*
 * Keep free space zeroed (MRC_CAP_XLT_ZEROED): zero @xlt before it goes
 * back to the allocator. Writes of a checked range do not fail.
 */
static void mrc_xlt_zero(struct mrc_device *mdev, const struct mrc_xlt *xlt)
{
	const void *zeros = page_address(ZERO_PAGE(0));
	u64 off, n;

	for (off = 0; off < xlt->size; off += n) {
		n = min_t(u64, xlt->size - off, PAGE_SIZE);
		WARN_ON_ONCE(mdev->ops->write_xlt(mdev, xlt->offset + off,
						  zeros, n));
	}
}

/**
 * mrc_xlt_free - return a piece of translation area
 * @mdev: registered device
 * @xlt: a piece from mrc_xlt_alloc(); its size is zeroed
 *
 * A piece that mrc_xlt_alloc() cannot have returned, or one already free,
 * is counted in stats_misuse, logged on one line and ignored.
 *
 * Context: process context; does not sleep.
 */
void mrc_xlt_free(struct mrc_device *mdev, struct mrc_xlt *xlt)
{
	struct mrc_xlt_buddy *buddy = &mdev->xlt;
	unsigned int order;
	bool freed;

	if (mrc_misuse(mdev, !mrc_xlt_valid(mdev, xlt)))
		return;

	if (mdev->caps.flags & MRC_CAP_XLT_ZEROED)
		mrc_xlt_zero(mdev, xlt);
	order = ilog2(xlt->size >> MRC_XLT_SEG_SHIFT);
	spin_lock(&buddy->lock);
	freed = mrc_xlt_put(buddy, xlt->offset >> (MRC_XLT_SEG_SHIFT + order),
			    order);
	spin_unlock(&buddy->lock);
	if (mrc_misuse(mdev, !freed))
		return;

	atomic_sub(1 << order, &mdev->xlt_segs_used);
	xlt->size = 0;
}
EXPORT_SYMBOL_GPL(mrc_xlt_free);

static unsigned int mrc_xlt_entry_size(u8 mode)
{
	return mode == MRC_ACCESS_MODE_MTT ? MRC_MTT_ENTRY_SIZE :
					     MRC_KLM_ENTRY_SIZE;
}

/**
 * mrc_xlt_write - ops->write_xlt as a failure-injection stage
 * @mdev: device
 * @offset: byte offset in the translation area
 * @src: encoded entries
 * @len: bytes
 *
 * An injected failure is -EIO in place of the call, so the device is left
 * as it was, as after a real failure of the op.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int mrc_xlt_write(struct mrc_device *mdev, u64 offset, const void *src,
		  size_t len)
{
	if (mrc_inject(mdev, MRC_STAGE_WRITE_XLT))
		return -EIO;
	return mdev->ops->write_xlt(mdev, offset, src, len);
}

/* Fill up to @n entries of @t into @buf; how many, or -EINVAL. */
static int mrc_xlt_fill(struct mrc_xlt_table *t, struct mrc_mtt_builder *mtt,
			struct mrc_klm_builder *klm, void *buf, u32 n)
{
	if (t->mode == MRC_ACCESS_MODE_MTT)
		return mrc_mtt_fill(mtt, buf, n);
	return mrc_klm_fill(klm, buf, n);
}

/*
 * Build the entries of @t in chunks of at most MRC_XLT_CHUNK_BYTES and copy
 * each to the translation area at @t->xlt with write_xlt.
 */
static int mrc_xlt_copy(struct mrc_device *mdev, struct mrc_xlt_table *t)
{
	unsigned int esize = mrc_xlt_entry_size(t->mode);
	u32 chunk = min_t(u32, t->nentries, MRC_XLT_CHUNK_BYTES / esize);
	u64 small[MRC_XLT_STACK_BYTES / sizeof(u64)];
	struct mrc_mtt_builder mtt;
	struct mrc_klm_builder klm;
	u64 offset = t->xlt.offset;
	u32 left = t->nentries;
	void *buf = small;
	int ret = 0, n;

	/* Fresh space of such a device reads as non-present entries already. */
	if (t->odp && (mdev->caps.flags & MRC_CAP_XLT_ZEROED))
		return 0;

	/* Small tables, the common case, are built on the stack. */
	if ((size_t)chunk * esize > sizeof(small)) {
		buf = kvmalloc_array(chunk, esize, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	/* ODP entries start non-present: zero, written chunk by chunk. */
	if (t->odp)
		memset(buf, 0, (size_t)chunk * esize);

	if (t->mode == MRC_ACCESS_MODE_MTT)
		mrc_mtt_builder_init(&mtt, &t->segs, t->iova, t->page_shift,
				     t->nentries, t->writable);
	else
		mrc_klm_builder_init(&klm, &t->segs, mdev->local_dma_lkey);

	while (left) {
		if (t->odp)
			n = min(left, chunk);
		else
			n = mrc_xlt_fill(t, &mtt, &klm, buf, min(left, chunk));
		/* The plan counted these entries: a shortfall is a bug. */
		if (WARN_ON_ONCE(n <= 0)) {
			ret = -EINVAL;
			break;
		}
		ret = mrc_xlt_write(mdev, offset, buf, (size_t)n * esize);
		if (ret)
			break;
		offset += (u64)n * esize;
		left -= n;
		cond_resched();
	}

	if (buf != small)
		kvfree(buf);
	return ret;
}

/**
 * mrc_xlt_table_write - write a planned translation to fresh space
 * @mdev: device
 * @t: planned by mrc_xlt_plan(); @t->xlt is set here
 *
 * Puts the entries into fresh translation space and fences, so they are
 * visible before any context that reaches them. PA mode has no entries.
 * On failure nothing is held.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int mrc_xlt_table_write(struct mrc_device *mdev, struct mrc_xlt_table *t)
{
	int ret;

	t->xlt.size = 0;
	if (t->mode == MRC_ACCESS_MODE_PA)
		return 0;

	if (mrc_inject(mdev, MRC_STAGE_XLT_ALLOC))
		return -ENOSPC;
	ret = mrc_xlt_alloc(mdev, (u64)t->nentries * mrc_xlt_entry_size(t->mode),
			    &t->xlt);
	if (ret)
		return ret;

	ret = mrc_xlt_copy(mdev, t);
	if (ret)
		goto out_free_xlt;

	mdev->ops->fence(mdev);
	return 0;

out_free_xlt:
	mrc_xlt_free(mdev, &t->xlt);
	return ret;
}

/**
 * mrc_xlt_table_free - free the space mrc_xlt_table_write() took, if any
 * @mdev: device
 * @t: the translation
 *
 * Context: any context.
 */
void mrc_xlt_table_free(struct mrc_device *mdev, struct mrc_xlt_table *t)
{
	if (t->xlt.size)
		mrc_xlt_free(mdev, &t->xlt);
}
