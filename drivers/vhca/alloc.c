// SPDX-License-Identifier: GPL-2.0
/*
 * Allocated MRs (the driver method MR_ALLOC, seed 002's
 * IBV_ACCESS_ALLOCATE_MR): the kernel allocates the memory, registers it
 * and lets the caller map it, so the MR is built from physically
 * contiguous blocks and needs the fewest translation entries.
 *
 * Blocks are taken the largest order first (up to MAX_ORDER - 1 and the
 * DMA device's largest mapping, never more than what is left), dropping
 * an order when the buddy allocator has none free, down to single pages:
 * a fragmented machine gives more, smaller blocks, never a failure while
 * pages are free. Every block is
 * zeroed and split into single pages, so each page has its own reference
 * count: the mmap entry holds one on each (vhca_mmap_pages_insert()),
 * and so does every mapping of them. The blocks are registered as a
 * physical MR (mrcore picks the largest MTT page size the blocks and the
 * iova allow) at their direct DMA address, phys_to_dma(), not mapped
 * through the DMA API: the process writes these pages while the engine
 * reads them, so no bounce buffer may come between the two (with
 * swiotlb=force one would), as for every user page (MRC_CAP_USER_DIRECT).
 *
 * The pages are charged to the caller's pinned_vm against
 * RLIMIT_MEMLOCK, as mrcore charges a user MR, from before the first
 * allocation until the MR is deregistered. Dereg removes the mmap
 * entry; pages still mapped stay allocated until the
 * process unmaps them, no longer reachable by the device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-direct.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <uapi/rdma/vhca_user_ioctl.h>

#include "vhca_loc.h"

/**
 * struct vhca_alloc - the memory of an allocated MR
 * @mm: the process charged, grabbed
 * @npages: pages, charged to @mm's pinned_vm
 * @dma_dev: the device whose DMA addresses @bufs holds
 * @bufs: each block's DMA address and size
 * @nbufs: blocks allocated
 * @entry: the mmap entry, which owns the pages
 */
struct vhca_alloc {
	struct mm_struct *mm;
	unsigned long npages;
	struct device *dma_dev;
	struct mrc_phys_buf *bufs;
	unsigned int nbufs;
	struct rdma_user_mmap_entry *entry;
};

/*
 * One block of 1 << @order pages, zeroed; high orders do not retry or
 * warn (a smaller order is tried next), single pages may fail rather
 * than wake the OOM killer.
 */
static struct page *vhca_alloc_block(unsigned int order)
{
	gfp_t gfp = GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | __GFP_ACCOUNT;

	gfp |= order ? __GFP_NORETRY : __GFP_RETRY_MAYFAIL;
	return alloc_pages(gfp, order);
}

/*
 * Allocate @a->npages pages into @pages, the largest blocks first, each
 * block in @a->bufs at its DMA address. @a->bufs has room for @a->npages
 * blocks. On failure every page allocated is freed.
 */
static int vhca_alloc_fill(struct vhca_alloc *a, struct page **pages)
{
	unsigned int order = MAX_ORDER - 1;
	unsigned long done = 0, i;
	struct page *page;
	int err;

	while (done < a->npages) {
		order = min_t(unsigned int, order, ilog2(a->npages - done));
		page = vhca_alloc_block(order);
		if (!page) {
			if (order--)
				continue;
			err = -ENOMEM;
			goto out_free;
		}
		split_page(page, order);
		for (i = 0; i < (1UL << order); i++)
			pages[done + i] = page + i;
		a->bufs[a->nbufs++] = (struct mrc_phys_buf) {
			.addr = phys_to_dma(a->dma_dev, page_to_phys(page)),
			.size = PAGE_SIZE << order,
		};
		done += 1UL << order;

		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out_free;
		}
		cond_resched();
	}
	return 0;

out_free:
	a->nbufs = 0;
	for (i = 0; i < done; i++)
		__free_page(pages[i]);
	return err;
}

/* Give everything of @a back; the MR on it is deregistered. */
static void vhca_alloc_free(struct vhca_alloc *a)
{
	if (a->entry)
		rdma_user_mmap_entry_remove(a->entry);
	mrc_pinned_uncharge(a->mm, a->npages);
	mmdrop(a->mm);
	kvfree(a->bufs);
	kfree(a);
}

/**
 * vhca_amr_free - the memory of an allocated MR, after its dereg
 * @mr: an MR whose key has been deregistered
 */
void vhca_amr_free(struct vhca_mr *mr)
{
	if (!mr->alloc)
		return;
	vhca_alloc_free(mr->alloc);
	mr->alloc = NULL;
}

/* Contiguous blocks of an allocated MR, 0 for other MRs. */
u32 vhca_amr_blocks(const struct vhca_mr *mr)
{
	return mr->alloc ? mr->alloc->nbufs : 0;
}

/**
 * vhca_amr_register - allocate and register memory for a user MR
 * @mr: a new vhca MR, without a registration yet
 * @pd: its PD
 * @ibuc: the caller's context, through which the pages are mapped
 * @attr: type MRC_MR_PHYS, with the access, iova and key to register
 *	with (the blocks are filled in here)
 * @length: bytes, 1 .. VHCA_UAPI_MAX_ALLOC (rounded up to pages)
 * @offset: out, the mmap offset of the pages
 *
 * Context: process context of the caller; may sleep for long.
 * Return: mrcore's MR (@mr->alloc set), or an ERR_PTR: -EINVAL for a
 * bad @length, -ENOMEM past RLIMIT_MEMLOCK or when pages run out,
 * -EINTR on a fatal signal, or mrcore's error. Nothing is left charged,
 * allocated or mapped on an error.
 */
struct mrc_mr *vhca_amr_register(struct vhca_mr *mr, struct vhca_pd *pd,
				 struct ib_ucontext *ibuc,
				 struct mrc_reg_attr *attr, u64 length,
				 u64 *offset)
{
	struct vhca_alloc *a;
	struct page **pages;
	struct mrc_mr *base_mr;
	unsigned long i;
	int err;

	if (!length || length > VHCA_UAPI_MAX_ALLOC)
		return ERR_PTR(-EINVAL);

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return ERR_PTR(-ENOMEM);
	a->npages = PAGE_ALIGN(length) >> PAGE_SHIFT;
	a->dma_dev = pd->base_pd.mdev->dma_dev;
	a->mm = current->mm;
	mmgrab(a->mm);
	err = mrc_pinned_charge(a->mm, a->npages);
	if (err)
		goto out_mm;
	a->bufs = kvcalloc(a->npages, sizeof(*a->bufs), GFP_KERNEL);
	pages = kvcalloc(a->npages, sizeof(*pages), GFP_KERNEL);
	if (!a->bufs || !pages) {
		err = -ENOMEM;
		goto out_arrays;
	}
	err = vhca_alloc_fill(a, pages);
	if (err)
		goto out_arrays;

	attr->phys.bufs = a->bufs;
	attr->phys.nbufs = a->nbufs;
	base_mr = mrc_reg_mr(&pd->base_pd, attr);
	if (IS_ERR(base_mr)) {
		err = PTR_ERR(base_mr);
		goto out_pages;
	}
	a->entry = vhca_mmap_pages_insert(ibuc, pages, a->npages, offset);
	if (IS_ERR(a->entry)) {
		err = PTR_ERR(a->entry);
		a->entry = NULL;
		WARN_ON_ONCE(mrc_dereg_mr(base_mr));
		goto out_pages;
	}
	mr->alloc = a;
	return base_mr;

out_pages:
	for (i = 0; i < a->npages; i++)
		__free_page(pages[i]);
out_arrays:
	kvfree(pages);
	kvfree(a->bufs);
	mrc_pinned_uncharge(a->mm, a->npages);
out_mm:
	mmdrop(a->mm);
	kfree(a);
	return ERR_PTR(err);
}
