// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: on-demand paging (ODP) of user MRs.
 *
 * An ODP MR pins nothing and charges no RLIMIT_MEMLOCK. It is registered
 * in MTT mode with PAGE_SIZE pages whose entries start non-present, and
 * its context carries MRC_MKEY_F_ODP, so the device reports an access to
 * a non-present entry (or a write to a read-only one) as a page fault
 * instead of failing it. The backend hands the fault to mrc_odp_fault(),
 * which resolves the pages with hmm_range_fault(), DMA-maps them (on a
 * device with MRC_CAP_USER_DIRECT, takes their direct addresses) and
 * writes their entries, after which the device retries the access.
 *
 * Every MR has an mmu_interval_notifier over its user range. One pattern
 * serves both sides (umem_odp's and test_hmm's):
 *
 *  - fault: mmu_interval_read_begin(), hmm_range_fault() under the mmap
 *    lock, then @umem_mutex, then mmu_interval_read_retry(): a notifier
 *    that ran meanwhile sends the fault round again (for at most
 *    HMM_RANGE_DEFAULT_TIMEOUT); otherwise the pages are mapped and their
 *    entries written under the mutex, so no invalidation can slip
 *    between the check and the write.
 *  - invalidate: @umem_mutex (only a trylock when the range may not
 *    block), mmu_interval_set_seq(), then the entries of the range are
 *    zapped in device memory, ops->sync_mkey() waits for device accesses
 *    that may have read them, and only then are the pages unmapped (and
 *    dirtied where the device could write them).
 *
 * The notifier callback runs in reclaim, so nothing under @umem_mutex
 * allocates: the fault path allocates its buffers (and the per-page
 * state of the chunks it maps into) before taking it, and the zap writes
 * zeros from the zero page. Lockdep is told so when the mutex is
 * initialised.
 *
 * Registration is O(1) in the MR's size on a device that keeps free
 * translation space zeroed (MRC_CAP_XLT_ZEROED): no entry is written, and
 * the per-page state (hmm pfn and DMA address) lives in chunks of
 * MRC_ODP_CHUNK_PAGES pages allocated by the first fault into each.
 *
 * Implicit ODP (a parent over the whole address space whose children are
 * explicit ODP MRs) is in odp_implicit.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/export.h>
#include <linux/hmm.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "odp.h"

/* Pages per chunk of per-page state: one fault's worth (2 MiB of pages). */
#define MRC_ODP_CHUNK_SHIFT	9
#define MRC_ODP_CHUNK_PAGES	BIT(MRC_ODP_CHUNK_SHIFT)
static_assert(MRC_ODP_CHUNK_PAGES >= MRC_ODP_FAULT_MAX_PAGES,
	      "a fault spans at most two chunks");

/**
 * struct mrc_odp_chunk - the state of MRC_ODP_CHUNK_PAGES pages of an MR
 * @pfns: per page, the hmm pfn it is mapped with (HMM_PFN_VALID set, and
 *	HMM_PFN_WRITE if its entry is writable), or 0 when not mapped
 * @dma: per page, its DMA address while mapped
 */
struct mrc_odp_chunk {
	unsigned long pfns[MRC_ODP_CHUNK_PAGES];
	dma_addr_t dma[MRC_ODP_CHUNK_PAGES];
};

/* A zero MTT entry is non-present; the zero page supplies them. */
#define MRC_ODP_ZERO_ENTRIES	(PAGE_SIZE / MRC_MTT_ENTRY_SIZE)

static bool mrc_odp_invalidate(struct mmu_interval_notifier *sub,
			       const struct mmu_notifier_range *range,
			       unsigned long cur_seq);

static const struct mmu_interval_notifier_ops mrc_odp_notifier_ops = {
	.invalidate = mrc_odp_invalidate,
};

/* Where @odp's counters add up: an implicit child's are its parent's. */
static struct mrc_odp *mrc_odp_acct(struct mrc_odp *odp)
{
	return odp->parent ?: odp;
}

static void mrc_odp_mapped_add(struct mrc_odp *odp, long n)
{
	atomic64_add(n, &odp->mapped);
	if (odp->parent)
		atomic64_add(n, &odp->parent->mapped);
}

static struct device *mrc_odp_dev(const struct mrc_odp *odp)
{
	return odp->mr->mdev->dma_dev;
}

static struct mrc_odp_chunk *mrc_odp_chunk(const struct mrc_odp *odp, u64 i)
{
	return odp->chunks[i >> MRC_ODP_CHUNK_SHIFT];
}

/* The hmm pfn page @i is mapped with, 0 when it is not mapped. */
static unsigned long mrc_odp_pfn(const struct mrc_odp *odp, u64 i)
{
	struct mrc_odp_chunk *c = mrc_odp_chunk(odp, i);

	return c ? c->pfns[i & (MRC_ODP_CHUNK_PAGES - 1)] : 0;
}

static unsigned long *mrc_odp_pfn_slot(struct mrc_odp *odp, u64 i)
{
	return &mrc_odp_chunk(odp, i)->pfns[i & (MRC_ODP_CHUNK_PAGES - 1)];
}

static dma_addr_t *mrc_odp_dma_slot(struct mrc_odp *odp, u64 i)
{
	return &mrc_odp_chunk(odp, i)->dma[i & (MRC_ODP_CHUNK_PAGES - 1)];
}

/* The MTT entry of a mapped page @i; 0 (non-present) when unmapped. */
static __le64 mrc_odp_entry(struct mrc_odp *odp, u64 i)
{
	unsigned long pfn = mrc_odp_pfn(odp, i);
	u64 e;

	if (!(pfn & HMM_PFN_VALID))
		return 0;
	e = *mrc_odp_dma_slot(odp, i) | MRC_MTT_READ;
	if (pfn & HMM_PFN_WRITE)
		e |= MRC_MTT_WRITE;
	return cpu_to_le64(e);
}

/*
 * A page the device may write is mapped DMA_BIDIRECTIONAL, a read-only
 * one (the zero page, a page shared copy-on-write) DMA_TO_DEVICE: those
 * may be mapped many times over, and the device never writes them.
 */
static enum dma_data_direction mrc_odp_dir(unsigned long pfn)
{
	return pfn & HMM_PFN_WRITE ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
}

/*
 * The DMA address of @page for the device: its direct one on a device
 * that reaches user pages directly (mrc_user_direct()), else a mapping.
 * The page may be in other MRs too (pinned, ODP, another process's):
 * overlapping mappings, which the DMA API is told are intended with
 * DMA_ATTR_SKIP_CPU_SYNC, as mrc_umem_map() does; the sync it skips is
 * done here. DMA_MAPPING_ERROR when the mapping fails.
 */
static dma_addr_t mrc_odp_map_page(struct mrc_odp *odp, struct page *page,
				   enum dma_data_direction dir)
{
	struct device *dev = mrc_odp_dev(odp);
	dma_addr_t dma;

	if (mrc_user_direct(odp->mr->mdev))
		return mrc_user_addr(odp->mr->mdev, page_to_phys(page));
	dma = dma_map_page_attrs(dev, page, 0, PAGE_SIZE, dir,
				 DMA_ATTR_SKIP_CPU_SYNC);
	if (dma_mapping_error(dev, dma))
		return DMA_MAPPING_ERROR;
	dma_sync_single_for_device(dev, dma, PAGE_SIZE, dir);
	return dma;
}

/* Undo mrc_odp_map_page(): the CPU sync, then the unmap. */
static void mrc_odp_unmap_dma(struct mrc_odp *odp, dma_addr_t dma,
			      enum dma_data_direction dir)
{
	struct device *dev = mrc_odp_dev(odp);

	if (mrc_user_direct(odp->mr->mdev))
		return;
	dma_sync_single_for_cpu(dev, dma, PAGE_SIZE, dir);
	dma_unmap_page_attrs(dev, dma, PAGE_SIZE, dir, DMA_ATTR_SKIP_CPU_SYNC);
}

/* Unmap page @i, dirtying it if the device could write it. */
static void mrc_odp_unmap_page(struct mrc_odp *odp, u64 i)
{
	unsigned long pfn = mrc_odp_pfn(odp, i);

	lockdep_assert_held(&odp->umem_mutex);

	mrc_odp_unmap_dma(odp, *mrc_odp_dma_slot(odp, i), mrc_odp_dir(pfn));
	if (pfn & HMM_PFN_WRITE)
		set_page_dirty(compound_head(hmm_pfn_to_page(pfn)));
	*mrc_odp_pfn_slot(odp, i) = 0;
	mrc_odp_mapped_add(odp, -1);
}

/*
 * Zap the entries of pages [@first, @last] in device memory, wait for the
 * device accesses that may have read them, then unmap the mapped ones.
 * Return: pages unmapped.
 */
static u64 mrc_odp_zap(struct mrc_odp *odp, u64 first, u64 last)
{
	struct mrc_mr *mr = odp->mr;
	struct mrc_device *mdev = mr->mdev;
	const void *zeros = page_address(ZERO_PAGE(0));
	u64 i, n, unmapped = 0;

	lockdep_assert_held(&odp->umem_mutex);

	for (i = first; i <= last; i += n) {
		n = min_t(u64, last + 1 - i, MRC_ODP_ZERO_ENTRIES);
		/* Device memory writes of a checked range do not fail. */
		WARN_ON_ONCE(mdev->ops->write_xlt(mdev, mr->xlt.offset +
						  i * MRC_MTT_ENTRY_SIZE,
						  zeros,
						  n * MRC_MTT_ENTRY_SIZE));
	}
	mdev->ops->sync_mkey(mdev, mrc_key_index(mr->key));

	for (i = first; i <= last; i++) {
		if (mrc_odp_pfn(odp, i) & HMM_PFN_VALID) {
			mrc_odp_unmap_page(odp, i);
			unmapped++;
		}
	}
	return unmapped;
}

/*
 * The mapped pages among [@first, @last], as a tighter range; chunks no
 * fault has reached are skipped whole.
 */
static bool mrc_odp_mapped_span(const struct mrc_odp *odp, u64 *first,
				u64 *last)
{
	u64 i, lo = U64_MAX, hi = 0;

	for (i = *first; i <= *last; i++) {
		if (!mrc_odp_chunk(odp, i)) {
			i |= MRC_ODP_CHUNK_PAGES - 1;
			continue;
		}
		if (mrc_odp_pfn(odp, i) & HMM_PFN_VALID) {
			lo = min(lo, i);
			hi = i;
		}
	}
	if (lo == U64_MAX)
		return false;
	*first = lo;
	*last = hi;
	return true;
}

/*
 * The notifier callback: the CPU page tables of part of the range are
 * about to change. Reclaim, munmap, mprotect, madvise, fork's COW, THP
 * splits and process exit all come through here.
 */
static bool mrc_odp_invalidate(struct mmu_interval_notifier *sub,
			       const struct mmu_notifier_range *range,
			       unsigned long cur_seq)
{
	struct mrc_odp *odp = container_of(sub, struct mrc_odp, notifier);
	struct mrc_odp *acct = mrc_odp_acct(odp);
	u64 end = odp->start + (odp->npages << PAGE_SHIFT);
	u64 first, last, zapped;

	if (mmu_notifier_range_blockable(range))
		mutex_lock(&odp->umem_mutex);
	else if (!mutex_trylock(&odp->umem_mutex))
		return false;

	mmu_interval_set_seq(sub, cur_seq);
	first = (max_t(u64, range->start, odp->start) - odp->start) >>
		PAGE_SHIFT;
	last = (min_t(u64, range->end, end) - 1 - odp->start) >> PAGE_SHIFT;
	if (range->start < end && range->end > odp->start &&
	    mrc_odp_mapped_span(odp, &first, &last)) {
		zapped = mrc_odp_zap(odp, first, last);
		atomic64_inc(&acct->invalidations);
		atomic64_add(zapped, &acct->invalidated_pages);
		atomic64_inc(&odp->mr->mdev->odp.invalidations);
		atomic64_add(zapped, &odp->mr->mdev->odp.invalidated_pages);
	}
	/* An implicit child left with no page mapped is idle. */
	if (odp->parent && !atomic64_read(&odp->mapped))
		mrc_odp_reclaim_kick(odp->parent->imp);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

/*
 * Map the pages hmm_range_fault() returned for [@idx, @idx + @n) and write
 * their entries (@ents is the caller's buffer of @n). Pages already mapped
 * to the same page keep their mapping; only their W bit may change.
 * Return: pages newly mapped, or -EFAULT if a DMA mapping failed (the
 * pages mapped before it stay mapped, with their entries written).
 */
static long mrc_odp_install(struct mrc_odp *odp, u64 idx, u64 n,
			    const unsigned long *hmm_pfns, __le64 *ents)
{
	struct mrc_mr *mr = odp->mr;
	struct mrc_device *mdev = mr->mdev;
	unsigned long flags_mask = HMM_PFN_VALID |
				   (odp->writable ? HMM_PFN_WRITE : 0);
	long ret = 0, mapped = 0;
	u64 i;

	lockdep_assert_held(&odp->umem_mutex);

	for (i = 0; i < n; i++) {
		unsigned long pfn = hmm_pfns[i], old;
		u64 j = idx + i;
		struct page *page;
		dma_addr_t dma;

		if (!(pfn & HMM_PFN_VALID) || (pfn & HMM_PFN_ERROR))
			continue;
		page = hmm_pfn_to_page(pfn);
		pfn = page_to_pfn(page) | (pfn & flags_mask);
		old = mrc_odp_pfn(odp, j);
		if (old & HMM_PFN_VALID) {
			bool same = hmm_pfn_to_page(old) == page;

			/* The notifier unmaps before a page can change. */
			WARN_ON_ONCE(!same);
			if (same && ((old & HMM_PFN_WRITE) ||
				     !(pfn & HMM_PFN_WRITE)))
				continue;
			/* Now writable (or, a bug, another page): remapped. */
			mrc_odp_zap(odp, j, j);
		}
		dma = mrc_odp_map_page(odp, page, mrc_odp_dir(pfn));
		if (dma == DMA_MAPPING_ERROR) {
			ret = -EFAULT;
			n = i;
			break;
		}
		*mrc_odp_dma_slot(odp, j) = dma;
		*mrc_odp_pfn_slot(odp, j) = pfn;
		mrc_odp_mapped_add(odp, 1);
		mapped++;
	}

	for (i = 0; i < n; i++)
		ents[i] = mrc_odp_entry(odp, idx + i);
	if (n) {
		/* Checked range: device memory writes do not fail. */
		WARN_ON_ONCE(mdev->ops->write_xlt(mdev, mr->xlt.offset +
						  idx * MRC_MTT_ENTRY_SIZE,
						  ents,
						  n * MRC_MTT_ENTRY_SIZE));
		mdev->ops->fence(mdev);
	}
	return ret ?: mapped;
}

/*
 * Make sure the chunks of pages [@idx, @idx + @n) exist: the missing ones
 * are allocated here, outside @umem_mutex, and installed under it.
 */
static int mrc_odp_get_chunks(struct mrc_odp *odp, u64 idx, u64 n)
{
	u64 c, last = (idx + n - 1) >> MRC_ODP_CHUNK_SHIFT;
	struct mrc_odp_chunk *fresh;

	for (c = idx >> MRC_ODP_CHUNK_SHIFT; c <= last; c++) {
		/* Set once, under the mutex: a stale NULL only costs a kfree. */
		if (READ_ONCE(odp->chunks[c]))
			continue;
		fresh = kvzalloc(sizeof(*fresh), GFP_KERNEL);
		if (!fresh)
			return -ENOMEM;
		mutex_lock(&odp->umem_mutex);
		if (!odp->chunks[c]) {
			WRITE_ONCE(odp->chunks[c], fresh);
			fresh = NULL;
		}
		mutex_unlock(&odp->umem_mutex);
		kvfree(fresh);
	}
	return 0;
}

/**
 * mrc_odp_map_range - resolve and map pages of an explicit ODP MR
 * @odp: the MR's state
 * @idx: first page
 * @n: pages, at most MRC_ODP_FAULT_MAX_PAGES
 * @flags: MRC_ODP_WRITE faults them in writable; with MRC_ODP_NO_FAULT
 *	only those present in the CPU page tables are mapped
 *
 * Context: process context, not holding any mmap_lock; may sleep.
 * Return: pages newly mapped; -EFAULT when the process has exited, an
 * address has no VMA or the VMA forbids reading; -EPERM for a write
 * fault on memory the process may not write; -EBUSY when invalidations
 * kept racing for HMM_RANGE_DEFAULT_TIMEOUT; -ENOMEM.
 */
long mrc_odp_map_range(struct mrc_odp *odp, u64 idx, u64 n, u32 flags)
{
	struct mm_struct *mm = odp->notifier.mm;
	unsigned long timeout = jiffies +
				msecs_to_jiffies(HMM_RANGE_DEFAULT_TIMEOUT);
	struct hmm_range range = {
		.notifier = &odp->notifier,
		.start = odp->start + (idx << PAGE_SHIFT),
		.end = odp->start + ((idx + n) << PAGE_SHIFT),
	};
	unsigned long *hmm_pfns;
	__le64 *ents;
	long ret;

	if (!(flags & MRC_ODP_NO_FAULT)) {
		range.default_flags = HMM_PFN_REQ_FAULT;
		if ((flags & MRC_ODP_WRITE) && odp->writable)
			range.default_flags |= HMM_PFN_REQ_WRITE;
	}

	/* Allocations before the mutex: the notifier side may reclaim. */
	ret = mrc_odp_get_chunks(odp, idx, n);
	if (ret)
		return ret;
	hmm_pfns = kmalloc_array(n, sizeof(*hmm_pfns) + sizeof(*ents),
				 GFP_KERNEL);
	if (!hmm_pfns)
		return -ENOMEM;
	ents = (__le64 *)(hmm_pfns + n);
	range.hmm_pfns = hmm_pfns;

	if (!mmget_not_zero(mm)) {
		ret = -EFAULT;
		goto out_free;
	}
	for (;;) {
		range.notifier_seq = mmu_interval_read_begin(&odp->notifier);
		mmap_read_lock(mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
		if (ret == -EBUSY && !time_after(jiffies, timeout))
			continue;
		if (ret)
			break;

		mutex_lock(&odp->umem_mutex);
		if (mmu_interval_read_retry(&odp->notifier,
					    range.notifier_seq)) {
			mutex_unlock(&odp->umem_mutex);
			if (time_after(jiffies, timeout)) {
				ret = -EBUSY;
				break;
			}
			continue;
		}
		ret = mrc_odp_install(odp, idx, n, hmm_pfns, ents);
		mutex_unlock(&odp->umem_mutex);
		break;
	}
	mmput(mm);
out_free:
	kfree(hmm_pfns);
	return ret;
}

/*
 * How many of the @n pages from @idx on one step maps: at most a fault's
 * worth, and for an implicit parent no further than the child's block.
 */
static u64 mrc_odp_step(const struct mrc_odp *odp, u64 idx, u64 n)
{
	u64 max = MRC_ODP_FAULT_MAX_PAGES;

	if (odp->imp)
		max = min(max, BIT_ULL(MRC_ODP_CHILD_PAGE_SHIFT) -
			       (idx & (BIT_ULL(MRC_ODP_CHILD_PAGE_SHIFT) - 1)));
	return min(n, max);
}

/* Map one step of pages (mrc_odp_step()) of an explicit or implicit MR. */
static long mrc_odp_map_step(struct mrc_odp *odp, u64 idx, u64 n, u32 flags)
{
	if (odp->imp)
		return mrc_odp_implicit_map(odp, idx, n, flags);
	return mrc_odp_map_range(odp, idx, n, flags);
}

/*
 * The pages of @odp's MR that [@iova, @iova + @len) touches, from its
 * first page on, at most @max; @len 0 counts as 1 byte.
 */
static int mrc_odp_pages(const struct mrc_odp *odp, u64 iova, u64 len,
			 u64 max, u64 *idx, u64 *n)
{
	const struct mrc_mr *mr = odp->mr;
	u64 end, mr_end = mr->iova + mr->length;

	if (iova < mr->iova || iova >= mr_end)
		return -ERANGE;
	if (check_add_overflow(iova, max_t(u64, len, 1), &end) ||
	    end > mr_end)
		end = mr_end;
	*idx = (iova >> PAGE_SHIFT) - (mr->iova >> PAGE_SHIFT);
	*n = min(((end - 1) >> PAGE_SHIFT) - (mr->iova >> PAGE_SHIFT) + 1 -
		 *idx, max);
	return 0;
}

/* Bucket of the fault-latency histogram for @ns. */
static unsigned int mrc_odp_hist_bucket(u64 ns)
{
	u64 us = div_u64(ns, NSEC_PER_USEC);

	if (!us)
		return 0;
	return min_t(unsigned int, ilog2(us), MRC_ODP_HIST_BUCKETS - 1);
}

/* @mr if it is a held ODP MR a fault may name, else dropped: -EINVAL. */
static struct mrc_mr *mrc_odp_only(struct mrc_mr *mr)
{
	if (IS_ERR(mr))
		return mr;
	/* An implicit child is faulted through its parent only. */
	if (!mr->odp || mr->odp->parent) {
		mrc_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	return mr;
}

static struct mrc_mr *mrc_odp_lookup(struct mrc_device *mdev, u32 key)
{
	return mrc_odp_only(mrc_mr_lookup(mdev, key));
}

/**
 * mrc_odp_fault - resolve a device page fault on an ODP MR
 * @mdev: the device that faulted
 * @key: the key whose context has MRC_MKEY_F_ODP and a non-present entry
 *	(the key of the MR itself, also when the access came through a
 *	window or an indirect key naming it; an implicit MR's, never its
 *	child's; or that of an MR of a kind with its own fault hook, a
 *	movable dma-buf MR's, handed to it: mrc_dmabuf_fault())
 * @iova: address that faulted, in @key's address space
 * @len: bytes of the access from @iova on (0 counts as 1): the pages they
 *	touch are mapped, up to MRC_ODP_FAULT_MAX_PAGES
 * @flags: MRC_ODP_WRITE for a write access
 *
 * Faults the pages in from the registering process's mm, DMA-maps them
 * and writes their MTT entries (writable where the MR has write rights
 * and the CPU mapping allows writing). The device may then retry the
 * access. Concurrent invalidations are honoured: the entries written are
 * those of a page-table state no notifier has since changed.
 *
 * Context: process context, not holding any mmap_lock; may sleep.
 * Return: 0; -ENOKEY if @key is not live (the MR is being deregistered);
 * -EINVAL if it is not an ODP MR's key (or is an implicit child's);
 * -ERANGE if @iova is outside the MR; -EFAULT if the process has exited
 * or an address has no VMA or an unreadable one; -EPERM for a write to
 * memory the process may not write; -EBUSY if invalidations kept
 * racing; -ENOSPC if an implicit MR's new child found no key or
 * translation space; -ENOMEM. For a dma-buf MR, those of
 * mrc_dmabuf_fault().
 */
int mrc_odp_fault(struct mrc_device *mdev, u32 key, u64 iova, u64 len,
		  u32 flags)
{
	u64 t0 = local_clock();
	struct mrc_mr *mr;
	u64 idx, n;
	long ret;

	mr = mrc_mr_lookup(mdev, key);
	if (!IS_ERR(mr) && mrc_mr_kind(mr)->fault) {
		/* A kind with its own fault (dma-buf): counted as its own. */
		ret = mrc_mr_kind(mr)->fault(mr, iova, len, flags);
		mrc_mr_put(mr);
		return ret;
	}
	mr = mrc_odp_only(mr);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto out_count;
	}
	ret = mrc_odp_pages(mr->odp, iova, len, MRC_ODP_FAULT_MAX_PAGES, &idx,
			    &n);
	if (!ret)
		ret = mrc_odp_map_step(mr->odp, idx,
				       mrc_odp_step(mr->odp, idx, n),
				       flags & MRC_ODP_WRITE);
	if (ret >= 0) {
		atomic64_inc(&mr->odp->faults);
		atomic64_add(ret, &mr->odp->fault_pages);
		atomic64_add(ret, &mdev->odp.fault_pages);
	}
	mrc_mr_put(mr);

out_count:
	if (ret < 0) {
		atomic64_inc(&mdev->odp.fault_errors);
		pr_debug("%s: fault key 0x%08x iova 0x%llx: %ld\n", mdev->name,
			 key, iova, ret);
		return ret;
	}
	atomic64_inc(&mdev->odp.faults);
	atomic64_inc(&mdev->odp.fault_ns_hist[mrc_odp_hist_bucket(local_clock() -
								   t0)]);
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_odp_fault);

/**
 * mrc_odp_prefetch - map a range of an ODP MR ahead of the device's accesses
 * @mdev: device
 * @pdn: PD number the caller acts for; the MR must be of this PD
 * @key: the ODP MR's key
 * @iova: first address, in the key's address space
 * @len: bytes; the range is clipped to the MR
 * @flags: MRC_ODP_WRITE to map writable (faulting for write),
 *	MRC_ODP_NO_FAULT to map only pages already present
 *
 * The advise_mr PREFETCH (0), PREFETCH_WRITE (MRC_ODP_WRITE) and
 * PREFETCH_NO_FAULT (MRC_ODP_NO_FAULT) advices, synchronously; the
 * backend runs it from a work item for an asynchronous advice.
 *
 * Context: process context, not holding any mmap_lock; may sleep.
 * Return: 0; -EINVAL if @key is not an ODP MR's key or the MR is of
 * another PD; otherwise the errors of mrc_odp_fault().
 */
int mrc_odp_prefetch(struct mrc_device *mdev, u32 pdn, u32 key, u64 iova,
		     u64 len, u32 flags)
{
	struct mrc_mr *mr;
	u64 idx, n, done = 0;
	long ret = 0;

	mr = mrc_odp_lookup(mdev, key);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	if (mr->pd->pdn != pdn) {
		ret = -EINVAL;
		goto out_put;
	}
	ret = mrc_odp_pages(mr->odp, iova, len, mr->odp->npages, &idx, &n);
	while (!ret && n) {
		u64 chunk = mrc_odp_step(mr->odp, idx, n);

		ret = mrc_odp_map_step(mr->odp, idx, chunk, flags);
		if (ret < 0)
			break;
		done += ret;
		ret = 0;
		idx += chunk;
		n -= chunk;
		cond_resched();
	}
	atomic64_add(done, &mr->odp->prefetched_pages);
	atomic64_add(done, &mdev->odp.prefetched_pages);
	if (!ret)
		atomic64_inc(&mdev->odp.prefetches);

out_put:
	mrc_mr_put(mr);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_odp_prefetch);

/**
 * mrc_mr_odp_stats - the on-demand paging counters of an MR
 * @mr: a registered MR
 * @st: out: its counters
 *
 * Context: any context.
 * Return: 0, or -EINVAL if @mr is not an ODP MR.
 */
int mrc_mr_odp_stats(struct mrc_mr *mr, struct mrc_odp_stats *st)
{
	struct mrc_odp *odp = mr->odp;

	if (!odp)
		return -EINVAL;
	*st = (struct mrc_odp_stats) {
		.faults = atomic64_read(&odp->faults),
		.fault_pages = atomic64_read(&odp->fault_pages),
		.invalidations = atomic64_read(&odp->invalidations),
		.invalidated_pages = atomic64_read(&odp->invalidated_pages),
		.prefetched_pages = atomic64_read(&odp->prefetched_pages),
		.mapped_pages = atomic64_read(&odp->mapped),
	};
	if (odp->imp) {
		st->children = atomic64_read(&odp->imp->live);
		st->children_created = atomic64_read(&odp->imp->created);
		st->children_reclaimed = atomic64_read(&odp->imp->reclaimed);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_mr_odp_stats);

/**
 * mrc_odp_check - the checks of an ODP registration that need no allocation
 * @pd: a checked protection domain
 * @attr: a user MR with MRC_ACCESS_ON_DEMAND
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP on a device without MRC_CAP_ODP, for implicit
 * ODP (start 0, length U64_MAX) on a device without MRC_CAP_KSM, or
 * ZERO_BASED; -EINVAL for the range and access errors of
 * mrc_reg_user_mr() and for implicit ODP at an iova other than 0;
 * -EFAULT without a user mm.
 */
int mrc_odp_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	const u32 caps = pd->mdev->caps.flags;
	int ret;

	ret = mrc_check_access(attr->access & ~MRC_ACCESS_ON_DEMAND);
	if (ret)
		return ret;
	if (!(caps & MRC_CAP_ODP))
		return -EOPNOTSUPP;
	if (attr->access & MRC_ACCESS_ZERO_BASED)
		return -EOPNOTSUPP;
	if (mrc_odp_is_implicit(attr)) {
		if (!(caps & MRC_CAP_KSM))
			return -EOPNOTSUPP;
		/* The parent's address space is the process's: iova 0. */
		if (attr->iova)
			return -EINVAL;
		/*
		 * HUGETLB promises that every page of the MR is huge: "in
		 * explicit mode only" (ibv_reg_mr(3)), as the whole address
		 * space cannot keep that promise.
		 */
		if (attr->access & MRC_ACCESS_HUGETLB)
			return -EINVAL;
	} else {
		ret = mrc_check_user_range(attr->start, attr->length,
					   attr->iova);
		if (ret)
			return ret;
	}
	return current->mm ? 0 : -EFAULT;
}

/**
 * mrc_odp_free - free the ODP state of an MR
 * @odp: its notifier removed (or never inserted) and no page mapped
 *
 * Context: process context.
 */
void mrc_odp_free(struct mrc_odp *odp)
{
	u64 c;

	if (odp->imp)
		mrc_odp_implicit_free(odp->imp);
	mutex_destroy(&odp->umem_mutex);
	if (odp->chunks)
		for (c = 0; c < odp->nchunks; c++)
			kvfree(odp->chunks[c]);
	kvfree(odp->chunks);
	kfree(odp);
}

static struct mrc_odp *mrc_odp_alloc(const struct mrc_reg_attr *attr)
{
	u64 start = attr->start & PAGE_MASK;
	struct mrc_odp *odp;

	odp = kzalloc(sizeof(*odp), GFP_KERNEL);
	if (!odp)
		return NULL;
	mutex_init(&odp->umem_mutex);
	/* The notifier takes the mutex in reclaim: say so to lockdep now. */
	if (IS_ENABLED(CONFIG_LOCKDEP)) {
		fs_reclaim_acquire(GFP_KERNEL);
		mutex_lock(&odp->umem_mutex);
		mutex_unlock(&odp->umem_mutex);
		fs_reclaim_release(GFP_KERNEL);
	}
	odp->start = start;
	odp->npages = (PAGE_ALIGN(attr->start + attr->length) - start) >>
		      PAGE_SHIFT;
	odp->writable = mrc_access_writable(attr->access);
	odp->nchunks = DIV_ROUND_UP_ULL(odp->npages, MRC_ODP_CHUNK_PAGES);
	odp->chunks = kvcalloc(odp->nchunks, sizeof(*odp->chunks), GFP_KERNEL);
	if (!odp->chunks) {
		mrc_odp_free(odp);
		return NULL;
	}
	return odp;
}

/**
 * mrc_odp_reg_range - register an explicit ODP MR over a range of an mm
 * @pd: a checked protection domain
 * @attr: the range and rights
 * @mm: the mm whose pages the MR maps
 * @parent: an implicit child's parent, whose write rights the child's
 *	entries follow, or NULL
 *
 * The notifier is inserted, then the MR installed with non-present
 * entries and an MRC_MKEY_F_ODP context.
 *
 * Context: process context; may sleep.
 * Return: the MR or an ERR_PTR().
 */
struct mrc_mr *mrc_odp_reg_range(struct mrc_pd *pd,
				 const struct mrc_reg_attr *attr,
				 struct mm_struct *mm, struct mrc_odp *parent)
{
	bool writable = parent ? parent->writable :
				 mrc_access_writable(attr->access);
	struct mrc_xlt_table t = {
		.iova = attr->iova,
		.length = attr->length,
		.writable = writable,
		.mode = MRC_ACCESS_MODE_MTT,
		.page_shift = PAGE_SHIFT,
		.odp = true,
	};
	struct mrc_odp *odp;
	struct mrc_mr *mr;
	int ret;

	odp = mrc_odp_alloc(attr);
	if (!odp)
		return ERR_PTR(-ENOMEM);
	odp->writable = writable;
	odp->parent = parent;
	t.nentries = odp->npages;

	mr = mrc_mr_alloc(pd, attr);
	if (!mr) {
		ret = -ENOMEM;
		goto out_free_odp;
	}
	odp->mr = mr;
	mr->odp = odp;

	ret = mmu_interval_notifier_insert(&odp->notifier, mm, odp->start,
					   odp->npages << PAGE_SHIFT,
					   &mrc_odp_notifier_ops);
	if (ret)
		goto out_free_mr;

	ret = mrc_mr_install_table(mr, &t);
	if (ret)
		goto out_remove_notifier;
	return mr;

out_remove_notifier:
	mmu_interval_notifier_remove(&odp->notifier);
out_free_mr:
	mrc_mr_free(mr);
out_free_odp:
	mrc_odp_free(odp);
	return ERR_PTR(ret);
}

/**
 * mrc_odp_reg - register an ODP MR over the caller's memory
 * @pd: a checked protection domain
 * @attr: a user MR with MRC_ACCESS_ON_DEMAND that passed mrc_odp_check()
 *
 * Nothing is pinned. An explicit MR: the notifier is inserted, then the
 * MR installed with non-present entries and an MRC_MKEY_F_ODP context.
 * Implicit ODP (start 0, length U64_MAX): the parent's KSM key, whose
 * children the faults create.
 *
 * Context: process context of the process that owns the memory.
 * Return: the MR; -ENOMEM; -ENOSPC when no key or translation space is
 * free; or the error of a backend op or of the notifier insertion.
 */
struct mrc_mr *mrc_odp_reg(struct mrc_pd *pd, const struct mrc_reg_attr *attr)
{
	if (mrc_odp_is_implicit(attr))
		return mrc_odp_reg_implicit(pd, attr);
	return mrc_odp_reg_range(pd, attr, current->mm, NULL);
}

/**
 * mrc_odp_release - tear down the ODP state of an MR being deregistered
 * @mr: an ODP MR whose key the device no longer resolves
 *
 * Every mapped page is unmapped and dirtied where the device could write
 * it, under @umem_mutex while the notifier is still in place: no page is
 * pinned, so only the notifier keeps a page in the table from being freed
 * (an invalidation waits for the mutex before the page can go). Then the
 * notifier is removed (waiting for a callback in progress, which finds
 * nothing mapped). No fault can map again: the key no longer resolves and
 * no fault holds the MR. An implicit parent's children are deregistered
 * instead (each the same way).
 *
 * Context: process context; may sleep.
 */
void mrc_odp_release(struct mrc_mr *mr)
{
	struct mrc_odp *odp = mr->odp;
	u64 i;

	if (odp->imp) {
		mrc_odp_release_implicit(odp);
		goto out_free;
	}
	mutex_lock(&odp->umem_mutex);
	for (i = 0; i < odp->npages; i++) {
		if (!mrc_odp_chunk(odp, i))
			i |= MRC_ODP_CHUNK_PAGES - 1;
		else if (mrc_odp_pfn(odp, i) & HMM_PFN_VALID)
			mrc_odp_unmap_page(odp, i);
	}
	mutex_unlock(&odp->umem_mutex);
	mmu_interval_notifier_remove(&odp->notifier);
out_free:
	mr->odp = NULL;
	mrc_odp_free(odp);
}
