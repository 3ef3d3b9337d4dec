// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: building translation tables (xlt): from a list of DMA segments
 * to translation entries. Writing them to the device is in xlt.c.
 *
 * A registration's memory is a list of DMA segments (a DMA-mapped
 * scatterlist, or a caller's array of ranges) read as one byte stream that
 * the key's addresses [iova, iova + length) run along. This file picks the
 * MTT page size for such a list, plans how many entries it takes and fills
 * MTT or KLM entries in CPU buffers of any size, so the caller can write a
 * huge table to the device in bounded chunks. Nothing here touches the
 * device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/export.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <kunit/visibility.h>

#include "mrcore_loc.h"

/**
 * mrc_seg_iter_sg - iterate over a window of a DMA-mapped scatterlist
 * @it: iterator to set up
 * @sgl: first entry
 * @nents: DMA entries (sg_table.nents, not orig_nents)
 * @offset: bytes of the DMA stream to skip first
 * @length: bytes to return at most; U64_MAX for "to the end"
 */
void mrc_seg_iter_sg(struct mrc_seg_iter *it, struct scatterlist *sgl,
		     unsigned int nents, u64 offset, u64 length)
{
	*it = (struct mrc_seg_iter) {
		.sg = sgl,
		.sg_left = sgl ? nents : 0,
		.skip = offset,
		.left = length,
	};
}
EXPORT_SYMBOL_IF_KUNIT(mrc_seg_iter_sg);

/**
 * mrc_seg_iter_phys - iterate over an array of DMA ranges
 * @it: iterator to set up
 * @bufs: ranges
 * @nbufs: entries of @bufs
 */
void mrc_seg_iter_phys(struct mrc_seg_iter *it,
		       const struct mrc_phys_buf *bufs, unsigned int nbufs)
{
	*it = (struct mrc_seg_iter) {
		.buf = bufs,
		.buf_left = bufs ? nbufs : 0,
		.left = U64_MAX,
	};
}
EXPORT_SYMBOL_IF_KUNIT(mrc_seg_iter_phys);

/* The next raw segment of the source, before windowing. */
static bool mrc_seg_raw(struct mrc_seg_iter *it, u64 *addr, u64 *len)
{
	if (it->sg_left) {
		*addr = sg_dma_address(it->sg);
		*len = sg_dma_len(it->sg);
		it->sg = --it->sg_left ? sg_next(it->sg) : NULL;
		if (!it->sg)
			it->sg_left = 0;
		return true;
	}
	if (it->buf_left) {
		*addr = it->buf->addr;
		*len = it->buf->size;
		it->buf++;
		it->buf_left--;
		return true;
	}
	return false;
}

/**
 * mrc_seg_next - next non-empty segment of the window
 * @it: iterator
 * @addr: out: DMA address of the segment's first byte
 * @len: out: bytes, never 0
 *
 * Return: false when the window or the source is exhausted.
 */
bool mrc_seg_next(struct mrc_seg_iter *it, u64 *addr, u64 *len)
{
	u64 a, l;

	while (it->left && mrc_seg_raw(it, &a, &l)) {
		if (it->skip >= l) {
			it->skip -= l;
			continue;
		}
		a += it->skip;
		l -= it->skip;
		it->skip = 0;
		l = min(l, it->left);
		it->left -= l;
		*addr = a;
		*len = l;
		return true;
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_seg_next);

/*
 * Fold the alignment constraints of one segment starting at @va into
 * @mask: an MTT page must map @va and @addr at the same offset, and where
 * the DMA stream jumps (the segment does not continue the previous one),
 * @va must start a page, since the entry before it cannot reach @addr.
 */
static u64 mrc_seg_mask(u64 addr, u64 va, bool first, bool contiguous)
{
	if (contiguous)
		return 0;
	return (addr ^ va) | (first ? 0 : va);
}

/*
 * Page sizes that cover the whole of [first, last] with one page are all
 * equally good; keep only the smallest of them, so a short MR does not
 * get a huge page that reaches far outside it.
 */
static u64 mrc_span_mask(u64 first, u64 last, unsigned long bitmap)
{
	unsigned int bits = fls64(first ^ last);

	if (bits >= BITS_PER_LONG)
		return 0;
	return bitmap & GENMASK(BITS_PER_LONG - 1, bits);
}

/**
 * mrc_page_size_segs - largest usable MTT page size for a segment list
 * @segs: the segments; the iterator is copied, not advanced
 * @iova: address of the first byte of the first segment
 * @pgsz_bitmap: candidate page sizes
 * @bytes: out (may be NULL): bytes in @segs, valid when the return is not 0
 *
 * Only sizes of at least 1 << MRC_MTT_MIN_PAGE_SHIFT are considered, as
 * an MTT entry has no room for lower address bits.
 *
 * Return: the page size, or 0 if no size in @pgsz_bitmap works, the list
 * is empty, or its addresses would run past U64_MAX.
 */
unsigned long mrc_page_size_segs(const struct mrc_seg_iter *segs, u64 iova,
				 unsigned long pgsz_bitmap, u64 *bytes)
{
	struct mrc_seg_iter it = *segs;
	u64 addr, len, end = 0, va = iova, mask = 0;
	bool first = true, contiguous;

	pgsz_bitmap &= GENMASK(BITS_PER_LONG - 1, MRC_MTT_MIN_PAGE_SHIFT);
	while (mrc_seg_next(&it, &addr, &len)) {
		contiguous = !first && addr == end;
		mask |= mrc_seg_mask(addr, va, first, contiguous);
		if (check_add_overflow(addr, len, &end) ||
		    check_add_overflow(va, len, &va))
			return 0;
		first = false;
	}
	/* An MR ending exactly at 2^64 is refused: va wrapped to 0 above. */
	if (first || !pgsz_bitmap)
		return 0;

	mask |= mrc_span_mask(iova, va - 1, pgsz_bitmap);
	if (mask)
		pgsz_bitmap &= GENMASK(__ffs64(mask), 0);
	if (!pgsz_bitmap)
		return 0;
	if (bytes)
		*bytes = va - iova;
	return rounddown_pow_of_two(pgsz_bitmap);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_page_size_segs);

/**
 * mrc_best_page_size - largest MTT page size a DMA-mapped list allows
 * @sgl: DMA-mapped scatterlist; its DMA segments are the MR's bytes, in
 *	order, the first byte at @iova
 * @nents: DMA entries (sg_table.nents)
 * @iova: address the MR's first byte has in the key's address space
 * @pgsz_bitmap: page sizes the device supports (caps.page_size_bitmap)
 *
 * A page size P works when every MTT entry can name one P-aligned block of
 * DMA addresses: @iova and the first DMA address agree modulo P, and at
 * every point where the DMA stream is not contiguous the address is
 * P-aligned and the DMA address agrees with it modulo P. Contiguous
 * entries merge. Of the sizes that cover the whole MR with one page, only
 * the smallest is considered. The first and last pages may reach outside
 * the MR; no other page does.
 *
 * Context: any context.
 * Return: the largest such size in @pgsz_bitmap of at least 4 KiB, or 0 if
 * there is none (an empty list included).
 */
unsigned long mrc_best_page_size(struct scatterlist *sgl, unsigned int nents,
				 u64 iova, unsigned long pgsz_bitmap)
{
	struct mrc_seg_iter it;

	mrc_seg_iter_sg(&it, sgl, nents, 0, U64_MAX);
	return mrc_page_size_segs(&it, iova, pgsz_bitmap, NULL);
}
EXPORT_SYMBOL_GPL(mrc_best_page_size);

/**
 * mrc_mtt_count - MTT entries for [iova, iova + length) at a page size
 * @iova: first address
 * @length: bytes, not 0
 * @page_shift: log2 of the page size, in [MRC_MTT_MIN_PAGE_SHIFT, 63]
 * @count: out
 *
 * Return: 0; -EINVAL for a zero length, a bad shift, a range running past
 * U64_MAX, or more than U32_MAX entries.
 */
int mrc_mtt_count(u64 iova, u64 length, unsigned int page_shift, u32 *count)
{
	u64 end, n;

	if (!length || page_shift < MRC_MTT_MIN_PAGE_SHIFT ||
	    page_shift >= 64)
		return -EINVAL;
	if (check_add_overflow(iova, length, &end))
		return -EINVAL;

	/* Pages from the one holding iova to the one holding end - 1. */
	n = ((end - 1) >> page_shift) - (iova >> page_shift) + 1;
	if (n > U32_MAX)
		return -EINVAL;
	*count = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mtt_count);

/**
 * mrc_mtt_builder_init - prepare to fill the MTT entries of a list
 * @b: builder
 * @segs: the segments, from mrc_page_size_segs()'s point of view
 * @iova: address of the first byte
 * @page_shift: page size chosen for the list
 * @count: entries, from mrc_mtt_count()
 * @writable: set MRC_MTT_WRITE in every entry
 */
void mrc_mtt_builder_init(struct mrc_mtt_builder *b,
			  const struct mrc_seg_iter *segs, u64 iova,
			  unsigned int page_shift, u32 count, bool writable)
{
	*b = (struct mrc_mtt_builder) {
		.it = *segs,
		.flags = MRC_MTT_READ | (writable ? MRC_MTT_WRITE : 0),
		.page_shift = page_shift,
		.va = iova,
		.next_blk = iova & ~(BIT_ULL(page_shift) - 1),
		.left = count,
	};
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mtt_builder_init);

/*
 * Make the next segment current. A segment that does not continue the DMA
 * stream must be placed as mrc_page_size_segs() requires, or the page size
 * does not fit the list. Returns -ENOENT when there is none.
 */
static int mrc_mtt_next_seg(struct mrc_mtt_builder *b)
{
	u64 pmask = BIT_ULL(b->page_shift) - 1;
	u64 addr, len;
	bool contiguous;

	if (!mrc_seg_next(&b->it, &addr, &len))
		return -ENOENT;

	contiguous = b->started && addr == b->prev_end;
	if (mrc_seg_mask(addr, b->va, !b->started, contiguous) & pmask)
		return -EINVAL;
	if (check_add_overflow(addr, len, &b->prev_end))
		return -EINVAL;

	b->seg_addr = addr;
	b->seg_va = b->va;
	b->seg_len = len;
	b->va += len;
	b->started = true;
	return 0;
}

/*
 * The last entry is out: the segments after it lie inside the last page
 * and must still fit it, or that page's entry names the wrong memory.
 */
static int mrc_mtt_check_tail(struct mrc_mtt_builder *b)
{
	int ret;

	do {
		ret = mrc_mtt_next_seg(b);
	} while (!ret);
	return ret == -ENOENT ? 0 : ret;
}

/*
 * The next block starts inside the current segment, or before it: that
 * happens only for the first block, which starts below iova when iova is
 * not page aligned. Blocks that continue a contiguous segment start at or
 * after it.
 */
static bool mrc_mtt_block_in_seg(const struct mrc_mtt_builder *b)
{
	if (!b->seg_len)
		return false;
	return b->next_blk < b->seg_va || b->next_blk - b->seg_va < b->seg_len;
}

/**
 * mrc_mtt_fill - fill the next MTT entries
 * @b: builder
 * @out: room for @max entries
 * @max: entries to fill at most, at most INT_MAX
 *
 * Entry i names the DMA address of the page holding address
 * ALIGN_DOWN(iova, P) + i * P. Calls continue where the previous one
 * stopped, so a table of any size can be built in chunks.
 *
 * Return: entries filled (0 once all are), or -EINVAL if the segments do
 * not fit the page size or end before the entries do.
 */
int mrc_mtt_fill(struct mrc_mtt_builder *b, __le64 *out, u32 max)
{
	u64 psize = BIT_ULL(b->page_shift);
	u32 n = 0;
	int ret;

	while (n < max && b->left) {
		if (!mrc_mtt_block_in_seg(b)) {
			ret = mrc_mtt_next_seg(b);
			if (ret)
				return -EINVAL;
			continue;
		}
		/* Modulo 2^64, so a first block starting before iova works. */
		out[n++] = cpu_to_le64((b->seg_addr + (b->next_blk - b->seg_va)) |
				       b->flags);
		b->next_blk += psize;
		if (!--b->left) {
			ret = mrc_mtt_check_tail(b);
			if (ret)
				return ret;
		}
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_mtt_fill);

/**
 * mrc_klm_builder_init - prepare to fill the KLM entries of a list
 * @b: builder
 * @segs: the segments
 * @key: key every entry names (the device's local DMA key)
 */
void mrc_klm_builder_init(struct mrc_klm_builder *b,
			  const struct mrc_seg_iter *segs, u32 key)
{
	*b = (struct mrc_klm_builder) {
		.it = *segs,
		.key = key,
	};
}
EXPORT_SYMBOL_IF_KUNIT(mrc_klm_builder_init);

/* The next segment, the one looked at and put back first if any. */
static bool mrc_klm_pull(struct mrc_klm_builder *b, u64 *addr, u64 *len)
{
	if (b->have_next) {
		b->have_next = false;
		*addr = b->next_addr;
		*len = b->next_len;
		return true;
	}
	return mrc_seg_next(&b->it, addr, len);
}

/* Start a run at the next segment and absorb every segment continuing it. */
static bool mrc_klm_start_run(struct mrc_klm_builder *b)
{
	u64 addr, len, end;

	if (!mrc_klm_pull(b, &b->run_addr, &b->run_len))
		return false;
	while (mrc_klm_pull(b, &addr, &len)) {
		if (check_add_overflow(b->run_addr, b->run_len, &end) ||
		    addr != end) {
			b->next_addr = addr;
			b->next_len = len;
			b->have_next = true;
			break;
		}
		b->run_len += len;
	}
	return true;
}

/**
 * mrc_klm_fill - fill the next KLM entries
 * @b: builder
 * @out: room for @max entries, or NULL to only count them
 * @max: entries to fill at most
 *
 * Contiguous segments merge into one run; a run longer than
 * MRC_KLM_MAX_BCOUNT is split. Calls continue where the previous one
 * stopped.
 *
 * Return: entries filled; fewer than @max only when the list is done.
 */
u32 mrc_klm_fill(struct mrc_klm_builder *b, struct mrc_klm *out, u32 max)
{
	u32 n = 0;
	u64 piece;

	while (n < max) {
		if (!b->run_len && !mrc_klm_start_run(b))
			break;
		piece = min_t(u64, b->run_len, MRC_KLM_MAX_BCOUNT);
		if (out) {
			out[n].bcount = cpu_to_le32(piece);
			out[n].key = cpu_to_le32(b->key);
			out[n].addr = cpu_to_le64(b->run_addr);
		}
		n++;
		b->run_addr += piece;
		b->run_len -= piece;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_klm_fill);

/**
 * mrc_klm_count - KLM entries a list takes
 * @segs: the segments
 * @max: the most entries that could be used (what the translation area
 *	holds); counting stops there, so a huge list costs no more than that
 * @count: out
 *
 * Return: 0, -EINVAL for an empty list, or -ENOSPC when the list needs
 * more than @max entries.
 */
int mrc_klm_count(const struct mrc_seg_iter *segs, u32 max, u32 *count)
{
	struct mrc_klm_builder b;
	u32 n;

	mrc_klm_builder_init(&b, segs, 0);
	n = mrc_klm_fill(&b, NULL, max);
	if (!n)
		return -EINVAL;
	if (mrc_klm_fill(&b, NULL, 1))
		return -ENOSPC;
	*count = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_klm_count);

/* MTT when a page size fits the list, else KLM if the device has it. */
static int mrc_xlt_plan_mode(const struct mrc_device *mdev,
			     struct mrc_xlt_table *t)
{
	unsigned long pgsz;
	u64 bytes;
	int ret;

	pgsz = mrc_page_size_segs(&t->segs, t->iova, mdev->caps.page_size_bitmap,
				  &bytes);
	if (pgsz) {
		if (bytes != t->length)
			return -EINVAL;
		t->mode = MRC_ACCESS_MODE_MTT;
		t->page_shift = __ffs(pgsz);
		return mrc_mtt_count(t->iova, t->length, t->page_shift,
				     &t->nentries);
	}

	if (!(mdev->caps.flags & MRC_CAP_KLM))
		return -EOPNOTSUPP;
	ret = mrc_klm_count(&t->segs,
			    min_t(u64, U32_MAX,
				  mdev->caps.xlt_size / MRC_KLM_ENTRY_SIZE),
			    &t->nentries);
	if (ret)
		return ret;
	t->mode = MRC_ACCESS_MODE_KLM;
	t->page_shift = 0;
	return 0;
}

/**
 * mrc_xlt_plan - choose the access mode and size of a translation
 * @mdev: device whose caps decide
 * @t: translation with @segs, @iova, @length and @writable set; @mode,
 *	@page_shift and @nentries are filled in
 *
 * The segments must hold exactly @length bytes. They get MTT entries of
 * the largest page size that fits them, or KLM entries when no page size
 * does.
 *
 * Return: 0; -EINVAL if the segments do not hold @length bytes, the range
 * runs past U64_MAX or takes more than U32_MAX entries; -EOPNOTSUPP if
 * the list needs KLM and the device has no MRC_CAP_KLM.
 */
int mrc_xlt_plan(const struct mrc_device *mdev, struct mrc_xlt_table *t)
{
	struct mrc_seg_iter it = t->segs;
	u64 addr, len, total = 0, end;

	if (!t->length || check_add_overflow(t->iova, t->length, &end))
		return -EINVAL;
	while (mrc_seg_next(&it, &addr, &len)) {
		if (check_add_overflow(total, len, &total))
			return -EINVAL;
	}
	if (total != t->length)
		return -EINVAL;

	return mrc_xlt_plan_mode(mdev, t);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_xlt_plan);
