// SPDX-License-Identifier: GPL-2.0
/*
 * vhca user contexts and the rings they share with user space.
 *
 * vhca presents rxe's user ABI (include/uapi/rdma/rdma_user_rxe.h), so
 * that the rxe provider of rdma-core (librxe) drives a vhca device
 * unchanged: a user CQ, the send and receive queues of a user QP and a
 * user SRQ are each one struct rxe_queue_buf in vmalloc memory, mapped
 * into the process through the context's uverbs file (mmap with the
 * offset a create verb returned in its struct mminfo). The header holds
 * the element size and index mask, read by librxe, then the producer and
 * the consumer index, one per cache line, then the elements.
 *
 * The memory is shared with an untrusted process, which may write any
 * byte of it at any time. The kernel therefore keeps its own copies of the
 * element size and mask (struct vhca_uring) and never reads them back;
 * it keeps its own index on the side it owns (the consumer of a send or
 * receive queue, the producer of a CQ) and only writes that to the
 * header; it masks every index it reads, and copies an element out
 * before checking or using any field of it (queue_user.c).
 *
 * Lifetime: the ring's memory belongs to its mmap entry, freed by
 * vhca_mmap_free() when ib_core drops the entry's last reference. The
 * owning object removes the entry when it is destroyed; an mmap that
 * looked the entry up before keeps it (and the memory) until it is done.
 * A mapping made by remap_vmalloc_range() holds a reference on each page,
 * so the pages of a ring still mapped after its object is gone stay
 * allocated until the process unmaps them; nothing in the kernel reads
 * them any more.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca_loc.h"

/*
 * What an mmap offset of a context maps: a ring (@buf, vmalloc_user
 * memory) or the pages of an allocated MR (@pages, alloc.c; the entry
 * holds one reference on each).
 */
struct vhca_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct page **pages;
	unsigned long npages;
};

static struct vhca_mmap_entry *
to_vhca_mmap_entry(struct rdma_user_mmap_entry *rdma)
{
	return container_of(rdma, struct vhca_mmap_entry, rdma);
}

/**
 * vhca_alloc_ucontext - open a user context (ibv_open_device)
 * @ibuc: the context ib_core allocated
 * @udata: librxe sends no driver data and expects none back
 *
 * Return: 0, or -EOPNOTSUPP for driver input vhca does not know.
 */
int vhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	return vhca_udata_in_check(udata, 0);
}

/**
 * vhca_dealloc_ucontext - close a user context
 * @ibuc: the context; ib_core destroyed every object in it first
 */
void vhca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * vhca_disassociate_ucontext - the device is going while the context is open
 * @ibuc: the context
 *
 * Called by ib_uverbs when the device is unregistered with user contexts
 * open ("rdma link del", rmmod, the netdev going). ib_uverbs destroys
 * every object of the context itself afterwards, which frees the rings;
 * vhca holds no other resource per context. Having this verb is what lets
 * ib_uverbs do that instead of waiting for every process to close the
 * device: the processes see IB_EVENT_DEVICE_FATAL.
 */
void vhca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/* An allocated MR's pages: the whole of them, at once. */
static int vhca_mmap_pages(struct vm_area_struct *vma,
			   struct vhca_mmap_entry *entry)
{
	unsigned long num = vma_pages(vma);

	if (num != entry->npages)
		return -EINVAL;
	return vm_insert_pages(vma, vma->vm_start, entry->pages, &num);
}

/**
 * vhca_mmap - map a ring, or an allocated MR's pages, into the process
 * @ibuc: the context the ring or MR belongs to
 * @vma: the mapping; its offset is the one a create verb or MR_ALLOC
 *	returned
 *
 * Both kinds of mapping hold a reference on each page they map.
 *
 * Return: 0; -EINVAL for an offset nothing live has, a mapping that is
 * not shared, larger than a ring (remap_vmalloc_range() checks the size)
 * or not exactly an MR's size; or the error of inserting the pages.
 */
int vhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct vhca_mmap_entry *entry;
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma)
		return -EINVAL;
	entry = to_vhca_mmap_entry(rdma);
	if (entry->pages)
		err = vhca_mmap_pages(vma, entry);
	else
		err = remap_vmalloc_range(vma, entry->buf, 0);
	rdma_user_mmap_entry_put(rdma);
	return err;
}

/**
 * vhca_mmap_free - the last reference to an entry is gone
 * @rdma: the entry
 *
 * Frees the ring's memory, or drops the entry's references on an MR's
 * pages: no mapping can be made any more, and the pages of existing
 * mappings are held by those mappings.
 */
void vhca_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct vhca_mmap_entry *entry = to_vhca_mmap_entry(rdma);
	unsigned long i;

	if (entry->pages) {
		for (i = 0; i < entry->npages; i++)
			put_page(entry->pages[i]);
		kvfree(entry->pages);
	}
	vfree(entry->buf);
	kfree(entry);
}

/**
 * vhca_mmap_pages_insert - offer pages to be mapped through a context
 * @ibuc: the context
 * @pages: @npages pages, one reference on each, in a kvmalloc'ed array;
 *	the entry owns both from a successful return
 * @npages: at least 1
 * @offset: out, the mmap offset
 *
 * Return: the entry, to be removed with rdma_user_mmap_entry_remove()
 * when the pages may no longer be mapped; or an ERR_PTR (-ENOMEM, or
 * ib_core's error), @pages then still the caller's.
 */
struct rdma_user_mmap_entry *vhca_mmap_pages_insert(struct ib_ucontext *ibuc,
						    struct page **pages,
						    unsigned long npages,
						    u64 *offset)
{
	struct vhca_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->pages = pages;
	entry->npages = npages;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma,
					  npages << PAGE_SHIFT);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&entry->rdma);
	return &entry->rdma;
}

/**
 * vhca_uring_init - allocate a ring shared with user space
 * @r: the ring
 * @udata: the create verb's udata, which names the user context
 * @nelem: elements the ring must hold; at least 1
 * @elem_size: bytes per element; rounded up to a power of two
 * @mi: out, where user space maps the ring: offset and size
 *
 * The ring has a power-of-two number of slots, one more than it can hold
 * (a full ring has one slot free, as librxe's queue_full() reads it).
 *
 * Return: the elements the ring holds (>= @nelem), or a negative errno:
 * -EINVAL for a size beyond what a ring may take, -ENOMEM.
 */
int vhca_uring_init(struct vhca_uring *r, struct ib_udata *udata, u32 nelem,
		    size_t elem_size, struct mminfo *mi)
{
	struct ib_ucontext *ibuc = rdma_udata_to_uverbs_attr_bundle(udata)->context;
	struct vhca_mmap_entry *entry;
	size_t bytes;
	u32 slots;
	int err;

	if (!nelem || nelem >= VHCA_URING_MAX_SLOTS || !elem_size ||
	    elem_size > VHCA_URING_MAX_ELEM)
		return -EINVAL;
	slots = roundup_pow_of_two(nelem + 1);
	elem_size = roundup_pow_of_two(elem_size);
	bytes = PAGE_ALIGN(sizeof(struct rxe_queue_buf) + slots * elem_size);

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = vmalloc_user(bytes);
	if (!entry->buf) {
		kfree(entry);
		return -ENOMEM;
	}

	r->buf = entry->buf;
	r->mask = slots - 1;
	r->log2_elem = ilog2(elem_size);
	r->buf->log2_elem_size = r->log2_elem;
	r->buf->index_mask = r->mask;

	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma, bytes);
	if (err) {
		vfree(entry->buf);
		kfree(entry);
		r->buf = NULL;
		return err;
	}
	r->entry = &entry->rdma;
	mi->offset = rdma_user_mmap_get_offset(r->entry);
	mi->size = bytes;
	mi->pad = 0;
	return slots - 1;
}

/**
 * vhca_uring_fini - give a ring up
 * @r: the ring; the kernel no longer reads or writes it
 *
 * No new mapping can be made; the memory goes with the entry's last
 * reference (vhca_mmap_free()).
 */
void vhca_uring_fini(struct vhca_uring *r)
{
	if (!r->entry)
		return;
	rdma_user_mmap_entry_remove(r->entry);
	r->entry = NULL;
	r->buf = NULL;
}

/**
 * vhca_uring_reset - empty a ring both ways (a QP moved to RESET)
 * @r: the ring
 *
 * librxe reads both indices from the header, so zeroing them there makes
 * the queue empty for both sides; the caller zeroes its own index.
 */
void vhca_uring_reset(struct vhca_uring *r)
{
	WRITE_ONCE(r->buf->producer_index, 0);
	/* Pairs with librxe's acquire load of the consumer index. */
	smp_store_release(&r->buf->consumer_index, 0);
}

/**
 * vhca_udata_in_check - refuse driver input vhca does not know
 * @udata: the verb's udata, or NULL for a kernel caller
 * @known: bytes of driver input vhca reads
 *
 * Input past @known is accepted only if it is all zero, so that a newer
 * library's fields, zeroed, pass and set ones are not ignored silently.
 *
 * Return: 0, or -EOPNOTSUPP.
 */
int vhca_udata_in_check(struct ib_udata *udata, size_t known)
{
	if (!udata || udata->inlen <= known)
		return 0;
	if (!ib_is_udata_cleared(udata, known, udata->inlen - known))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * vhca_udata_out - answer a create verb's udata
 * @udata: the verb's udata
 * @resp: the driver's response
 * @len: its size
 *
 * A response buffer shorter than the response is refused: librxe reads
 * every field of it (the ring offsets). Longer is fine: ib_core clears the
 * rest.
 *
 * Return: 0, -EINVAL for a short buffer, or -EFAULT.
 */
int vhca_udata_out(struct ib_udata *udata, void *resp, size_t len)
{
	if (udata->outlen < len)
		return -EINVAL;
	return ib_copy_to_udata(udata, resp, len);
}
