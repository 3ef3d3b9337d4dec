// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: user memory for registration. The pages of [start, start +
 * length) of the calling process are charged to its mm's pinned_vm
 * (RLIMIT_MEMLOCK), pinned long term, gathered into a scatterlist and
 * DMA-mapped on the device's DMA device, or, on a device that reaches
 * memory directly (MRC_CAP_USER_DIRECT), given their direct DMA
 * addresses. Release undoes every step.
 *
 * Read-only registrations and COW: the 6.1 GUP does not make a read-only
 * long-term pin of a private mapping reliable (the shared zero page, or a
 * page still shared with a fork child, stays pinned while the next CPU
 * write moves the process to a new copy, and the device keeps reading the
 * old one). Like ib_umem_get() in 6.1, a read-only registration that
 * covers a private (COW) mapping therefore pins with FOLL_WRITE |
 * FOLL_FORCE: the pin itself breaks COW, so the pinned page is the one the
 * process keeps writing. The device still gets no write access: the MR's
 * context and MTT entries carry no write right, and the pages are not
 * dirtied on release. See Documentation/mrcore/registration.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/completion.h>
#include <linux/dma-mapping.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "mrcore_loc.h"

/* Page pointers one GUP call fills: one page of them. */
#define MRC_PIN_BATCH		(PAGE_SIZE / sizeof(struct page *))
/* Registrations of up to this many pages pin through a stack array. */
#define MRC_PIN_STACK		16
/* Registrations this large pin in parallel. */
#define MRC_PIN_PARALLEL_MIN	(SZ_1G >> PAGE_SHIFT)
#define MRC_PIN_MAX_WORKERS	16U
/* Pages appended to the scatterlist between two cond_resched(). */
#define MRC_SG_BATCH		(64 * MRC_PIN_BATCH)

/**
 * struct mrc_umem - pinned and DMA-mapped user memory
 * @mdev: device the pages are mapped for
 * @mm: mm charged and pinned from; held with mmgrab()
 * @address: first byte, as registered
 * @length: bytes, as registered
 * @npages: PAGE_SIZE pages charged to @mm->pinned_vm and pinned
 * @dma_attrs: attributes of the DMA mapping
 * @writable: pinned for write (FOLL_WRITE without FOLL_FORCE)
 * @inject_pin: where the pin is on its failure-injection point, see
 *	mrc_umem_inject()
 * @inject_sg: the same for appending to the table
 * @sgt_append: the pages, whole pages from the one holding @address
 */
struct mrc_umem {
	struct mrc_device *mdev;
	struct mm_struct *mm;
	u64 address;
	u64 length;
	unsigned long npages;
	unsigned long dma_attrs;
	bool writable;
	u8 inject_pin;
	u8 inject_sg;
	struct sg_append_table sgt_append;
};

/* Where a batched stage is on its failure-injection point. */
enum {
	MRC_UMEM_INJECT_FIRST,	/* before the stage's first batch */
	MRC_UMEM_INJECT_SECOND,	/* before its second batch */
	MRC_UMEM_INJECT_PASSED,	/* the point is behind */
};

/*
 * Pinning and appending to the table work in batches, but each passes its
 * failure-injection stage once per umem: before its second batch, so that
 * an injected failure leaves a first batch pinned and appended for the
 * unwinding to release, or before its first batch when that one is also
 * its last (@last: the batch covers everything still to do). @state is
 * the umem's enum of where the stage is, advanced here.
 */
static bool mrc_umem_inject(struct mrc_umem *umem, enum mrc_stage stage,
			    u8 *state, bool last)
{
	if (*state == MRC_UMEM_INJECT_PASSED)
		return false;
	if (*state == MRC_UMEM_INJECT_FIRST && !last) {
		*state = MRC_UMEM_INJECT_SECOND;
		return false;
	}
	*state = MRC_UMEM_INJECT_PASSED;
	return mrc_inject(umem->mdev, stage);
}

/**
 * mrc_umem_check_range - the checks a user range must pass before pinning
 * @start: first byte
 * @length: bytes
 *
 * Return: 0, or -EINVAL for a zero length, a range or page-aligned end that
 * runs past U64_MAX, or more than UINT_MAX pages.
 */
int mrc_umem_check_range(u64 start, u64 length)
{
	u64 end, aligned_end;

	if (!length)
		return -EINVAL;
	if (check_add_overflow(start, length, &end) ||
	    check_add_overflow(end, (u64)PAGE_SIZE - 1, &aligned_end))
		return -EINVAL;
	aligned_end &= PAGE_MASK;
	if ((aligned_end - (start & PAGE_MASK)) >> PAGE_SHIFT > UINT_MAX)
		return -EINVAL;
	return 0;
}

static unsigned long mrc_umem_num_pages(u64 start, u64 length)
{
	return (PAGE_ALIGN(start + length) - (start & PAGE_MASK)) >>
	       PAGE_SHIFT;
}

/**
 * mrc_pinned_charge() - charge pages to a process's locked-memory limit
 * @mm: the process's mm (the caller holds a reference)
 * @npages: pages about to be pinned or allocated for it
 *
 * Adds @npages to @mm's pinned_vm against RLIMIT_MEMLOCK up front, as
 * ib_umem does, unless the caller has CAP_IPC_LOCK. Every driver memory
 * a process holds through the device (pinned user pages, memory a backend
 * allocates for it) is charged here, so that the limit is one limit.
 *
 * Return: 0, or -ENOMEM with nothing charged.
 */
int mrc_pinned_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned;

	pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_pinned_charge);

/**
 * mrc_pinned_uncharge() - undo mrc_pinned_charge()
 * @mm: the mm charged
 * @npages: the pages charged
 */
void mrc_pinned_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
}
EXPORT_SYMBOL_GPL(mrc_pinned_uncharge);

/*
 * GUP flags for a read-only registration. Every page must be readable by
 * the process (PROT_NONE and holes fail here with -EFAULT, not later on
 * the device). If any of the range is a private mapping, the pin must
 * break COW (see the head of this file); a range of shared mappings only
 * is pinned read-only, which is reliable there.
 */
static int mrc_umem_ro_flags(struct mrc_umem *umem, unsigned int *flags)
{
	unsigned long next = umem->address & PAGE_MASK;
	unsigned long end = PAGE_ALIGN(umem->address + umem->length);
	struct vm_area_struct *vma;
	struct vma_iterator vmi;
	bool cow = false;
	int ret = 0;

	if (mmap_read_lock_killable(umem->mm))
		return -EINTR;
	vma_iter_init(&vmi, umem->mm, next);
	for_each_vma_range(vmi, vma, end) {
		if (vma->vm_start > next || !(vma->vm_flags & VM_READ)) {
			ret = -EFAULT;
			break;
		}
		cow |= is_cow_mapping(vma->vm_flags);
		next = vma->vm_end;
	}
	mmap_read_unlock(umem->mm);
	if (!ret && next < end)
		ret = -EFAULT;

	*flags = FOLL_LONGTERM | (cow ? FOLL_WRITE | FOLL_FORCE : 0);
	return ret;
}

static unsigned int mrc_umem_max_seg(const struct mrc_umem *umem)
{
	if (umem->mdev->dma_dev)
		return dma_get_max_seg_size(umem->mdev->dma_dev);
	return UINT_MAX;
}

/*
 * Append @n pinned pages; @left pages will follow in later calls. On
 * failure the caller still holds the pins of @pages.
 */
static int mrc_umem_append(struct mrc_umem *umem, struct page **pages,
			   unsigned long n, unsigned long left)
{
	if (mrc_umem_inject(umem, MRC_STAGE_SG_ALLOC, &umem->inject_sg, !left))
		return -ENOMEM;
	return sg_alloc_append_table_from_pages(&umem->sgt_append, pages, n, 0,
						n << PAGE_SHIFT,
						mrc_umem_max_seg(umem), left,
						GFP_KERNEL);
}

/*
 * Unpin every page in the table and free it. Pages are dirtied only if the
 * device could write them.
 */
static void mrc_umem_unpin(struct mrc_umem *umem, bool dirty)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(&umem->sgt_append.sgt, sg, i) {
		unpin_user_page_range_dirty_lock(sg_page(sg),
						 DIV_ROUND_UP(sg->length,
							      PAGE_SIZE),
						 dirty);
		if (!(i % MRC_PIN_BATCH))
			cond_resched();
	}
	sg_free_append_table(&umem->sgt_append);
}

/*
 * Pin in batches of one page of page pointers from the calling task,
 * appending each batch to the table. A short batch is not an error: the
 * next call starts at the first page that was not pinned and returns why.
 */
static int mrc_umem_pin_serial(struct mrc_umem *umem, unsigned int flags)
{
	unsigned long addr = umem->address & PAGE_MASK;
	unsigned long left = umem->npages;
	struct page *small[MRC_PIN_STACK];
	struct page **pages = small;
	unsigned long n, batch = ARRAY_SIZE(small);
	long pinned;
	int ret = 0;

	/* Small registrations, the common case, pin into the stack. */
	if (left > ARRAY_SIZE(small)) {
		pages = (struct page **)__get_free_page(GFP_KERNEL);
		if (!pages)
			return -ENOMEM;
		batch = MRC_PIN_BATCH;
	}

	while (left) {
		cond_resched();
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		n = min(left, batch);
		if (mrc_umem_inject(umem, MRC_STAGE_PIN, &umem->inject_pin,
				    n == left)) {
			ret = -EFAULT;
			break;
		}
		pinned = pin_user_pages_fast(addr, n, flags, pages);
		if (pinned <= 0) {
			ret = pinned ? pinned : -EFAULT;
			break;
		}
		ret = mrc_umem_append(umem, pages, pinned, left - pinned);
		if (ret) {
			unpin_user_pages(pages, pinned);
			break;
		}
		addr += pinned << PAGE_SHIFT;
		left -= pinned;
	}

	if (pages != small)
		free_page((unsigned long)pages);
	return ret;
}

/**
 * struct mrc_pin_chunk - one part of a parallel pin
 * @work: runs the chunk on system_unbound_wq (not for chunk 0)
 * @job: the pin this chunk belongs to
 * @addr: first page's address
 * @npages: pages in the chunk
 * @pages: the chunk's slice of the job's page array
 * @pinned: pages pinned so far, from @pages[0]
 * @ret: 0, or why the chunk stopped
 */
struct mrc_pin_chunk {
	struct work_struct work;
	struct mrc_pin_job *job;
	unsigned long addr;
	unsigned long npages;
	struct page **pages;
	unsigned long pinned;
	int ret;
};

/**
 * struct mrc_pin_job - a parallel pin of one registration
 * @pages: one pointer per page of the registration, in order
 * @umem: the umem being pinned
 * @mm: the registering task's mm (alive: that task waits for the job)
 * @task: the registering task, whose fatal signals stop every chunk
 * @flags: GUP flags
 * @abort: set by the first chunk that fails, to stop the others
 * @running: queued chunks not yet finished
 * @done: completed when @running drops to zero
 * @nchunks: chunks in @chunk
 * @chunk: the chunks; chunk 0 runs in the registering task
 */
struct mrc_pin_job {
	struct page **pages;
	struct mrc_umem *umem;
	struct mm_struct *mm;
	struct task_struct *task;
	unsigned int flags;
	atomic_t abort;
	atomic_t running;
	struct completion done;
	unsigned int nchunks;
	struct mrc_pin_chunk chunk[];
};

/*
 * Pin one chunk with the fast GUP on current->mm. Chunk 0 runs in the
 * registering task; the others run in workers that have adopted the
 * task's mm with kthread_use_mm(), so they too take the lockless fast
 * path (pin_user_pages_remote() would serialise every batch on the mm's
 * lock; "make bench" measured a 1 GiB THP reg+dereg at 90.6 ms that way
 * against 10.8 ms with this, in a 2-vCPU TCG guest).
 * Only chunk 0 passes the pin's failure-injection point, so an injected
 * failure stops the workers through @abort like a real one.
 */
static void mrc_pin_chunk_run(struct mrc_pin_chunk *c, bool worker)
{
	struct mrc_pin_job *job = c->job;
	unsigned long n;
	long got;

	while (c->pinned < c->npages) {
		cond_resched();
		if (atomic_read(&job->abort))
			return;
		if (fatal_signal_pending(job->task)) {
			c->ret = -EINTR;
			break;
		}
		n = min_t(unsigned long, c->npages - c->pinned, MRC_PIN_BATCH);
		if (!worker &&
		    mrc_umem_inject(job->umem, MRC_STAGE_PIN,
				    &job->umem->inject_pin,
				    c->pinned + n == c->npages)) {
			c->ret = -EFAULT;
			break;
		}
		got = pin_user_pages_fast(c->addr + (c->pinned << PAGE_SHIFT),
					  n, job->flags, c->pages + c->pinned);
		if (got <= 0) {
			c->ret = got ? got : -EFAULT;
			break;
		}
		c->pinned += got;
	}
	if (c->ret)
		atomic_set(&job->abort, 1);
}

static void mrc_pin_chunk_work(struct work_struct *work)
{
	struct mrc_pin_chunk *c = container_of(work, struct mrc_pin_chunk,
					       work);
	struct mrc_pin_job *job = c->job;

	/*
	 * The registering task waits for every chunk, so its address space
	 * outlives this work; mmget_not_zero() still guards against pinning
	 * an mm that is already being torn down.
	 */
	if (mmget_not_zero(job->mm)) {
		kthread_use_mm(job->mm);
		mrc_pin_chunk_run(c, true);
		kthread_unuse_mm(job->mm);
		mmput(job->mm);
	} else {
		c->ret = -EFAULT;
		atomic_set(&job->abort, 1);
	}
	if (atomic_dec_and_test(&job->running))
		complete(&job->done);
}

/*
 * One chunk per CPU (at most MRC_PIN_MAX_WORKERS), each a whole number of
 * GUP batches, and the page array they pin into. NULL if either cannot be
 * allocated; the caller then pins serially, which needs far less memory.
 */
static struct mrc_pin_job *mrc_pin_job_alloc(struct mrc_umem *umem,
					     unsigned int flags)
{
	unsigned int i, nchunks = min(num_online_cpus(), MRC_PIN_MAX_WORKERS);
	unsigned long per, start = 0;
	struct mrc_pin_job *job;

	job = kzalloc(struct_size(job, chunk, nchunks), GFP_KERNEL);
	if (!job)
		return NULL;
	/* Too large an array falls back to the serial pin, without a WARN. */
	job->pages = kvmalloc_array(umem->npages, sizeof(*job->pages),
				    GFP_KERNEL | __GFP_NOWARN);
	if (!job->pages) {
		kfree(job);
		return NULL;
	}

	job->umem = umem;
	job->mm = umem->mm;
	job->task = current;
	job->flags = flags;
	init_completion(&job->done);
	per = roundup(DIV_ROUND_UP(umem->npages, nchunks), MRC_PIN_BATCH);
	for (i = 0; i < nchunks && start < umem->npages; i++) {
		struct mrc_pin_chunk *c = &job->chunk[i];

		c->job = job;
		c->addr = (umem->address & PAGE_MASK) + (start << PAGE_SHIFT);
		c->npages = min(per, umem->npages - start);
		c->pages = job->pages + start;
		INIT_WORK(&c->work, mrc_pin_chunk_work);
		start += c->npages;
	}
	job->nchunks = i;
	return job;
}

static void mrc_pin_job_free(struct mrc_pin_job *job)
{
	kvfree(job->pages);
	kfree(job);
}

/* Run the job: chunks 1.. in workers, chunk 0 here, then wait for all. */
static int mrc_pin_job_run(struct mrc_pin_job *job)
{
	unsigned int i;
	int ret = 0;

	atomic_set(&job->running, job->nchunks - 1);
	for (i = 1; i < job->nchunks; i++)
		queue_work(system_unbound_wq, &job->chunk[i].work);
	mrc_pin_chunk_run(&job->chunk[0], false);

	/*
	 * Workers stop within one batch of a failure or a fatal signal. The
	 * timeout only keeps a very long pin from looking like a hung task.
	 */
	while (job->nchunks > 1 &&
	       !wait_for_completion_timeout(&job->done, 10 * HZ))
		cond_resched();

	for (i = 0; i < job->nchunks; i++)
		if (!ret && job->chunk[i].ret)
			ret = job->chunk[i].ret;
	return ret;
}

static void mrc_pin_job_unpin(struct mrc_pin_job *job)
{
	unsigned int i;

	for (i = 0; i < job->nchunks; i++)
		unpin_user_pages(job->chunk[i].pages, job->chunk[i].pinned);
}

/* Append the whole page array, yielding between batches. */
static int mrc_umem_append_all(struct mrc_umem *umem, struct page **pages)
{
	unsigned long done = 0, n;
	int ret;

	while (done < umem->npages) {
		n = min_t(unsigned long, umem->npages - done, MRC_SG_BATCH);
		ret = mrc_umem_append(umem, pages + done, n,
				      umem->npages - done - n);
		if (ret) {
			unpin_user_pages(pages + done, umem->npages - done);
			return ret;
		}
		done += n;
		cond_resched();
	}
	return 0;
}

/*
 * Pin a large registration in parallel into the job's page array, then
 * build the table from it in order. Frees the job.
 */
static int mrc_umem_pin_parallel(struct mrc_umem *umem,
				 struct mrc_pin_job *job)
{
	int ret;

	ret = mrc_pin_job_run(job);
	if (ret)
		mrc_pin_job_unpin(job);
	else
		ret = mrc_umem_append_all(umem, job->pages);

	mrc_pin_job_free(job);
	return ret;
}

static int mrc_umem_pin(struct mrc_umem *umem)
{
	unsigned int flags = FOLL_LONGTERM | FOLL_WRITE;
	struct mrc_pin_job *job;
	int ret;

	if (!umem->writable) {
		ret = mrc_umem_ro_flags(umem, &flags);
		if (ret)
			return ret;
	}

	if (umem->npages >= MRC_PIN_PARALLEL_MIN && num_online_cpus() > 1) {
		job = mrc_pin_job_alloc(umem, flags);
		if (job)
			return mrc_umem_pin_parallel(umem, job);
	}
	return mrc_umem_pin_serial(umem, flags);
}

/*
 * Map for the device. On a device that addresses user pages directly
 * (mrc_user_direct(): MRC_CAP_USER_DIRECT, or no DMA device) nothing is
 * mapped: the DMA addresses are the pages' direct ones.
 */
static int mrc_umem_map(struct mrc_umem *umem)
{
	struct sg_table *sgt = &umem->sgt_append.sgt;
	struct scatterlist *sg;
	unsigned int i;

	/* Injected in place of the mapping, so there is nothing to unmap. */
	if (mrc_inject(umem->mdev, MRC_STAGE_DMA_MAP))
		return -ENOMEM;

	if (!mrc_user_direct(umem->mdev)) {
		struct device *dev = umem->mdev->dma_dev;
		int ret;

		/*
		 * RDMA lets the same pages be registered in several MRs, so
		 * mappings may overlap. DMA_ATTR_SKIP_CPU_SYNC is how the DMA
		 * API is told that is intended; the sync it skips is done
		 * explicitly, once, right after.
		 */
		ret = dma_map_sgtable(dev, sgt, DMA_BIDIRECTIONAL,
				      umem->dma_attrs | DMA_ATTR_SKIP_CPU_SYNC);
		if (ret)
			return ret;
		dma_sync_sgtable_for_device(dev, sgt, DMA_BIDIRECTIONAL);
		return 0;
	}

	for_each_sgtable_sg(sgt, sg, i) {
		sg_dma_address(sg) = mrc_user_addr(umem->mdev, sg_phys(sg));
		sg_dma_len(sg) = sg->length;
	}
	sgt->nents = sgt->orig_nents;
	return 0;
}

static void mrc_umem_unmap(struct mrc_umem *umem)
{
	struct device *dev = umem->mdev->dma_dev;
	struct sg_table *sgt = &umem->sgt_append.sgt;

	if (mrc_user_direct(umem->mdev))
		return;
	/* Mapped with DMA_ATTR_SKIP_CPU_SYNC: sync for the CPU by hand. */
	dma_sync_sgtable_for_cpu(dev, sgt, DMA_BIDIRECTIONAL);
	dma_unmap_sgtable(dev, sgt, DMA_BIDIRECTIONAL,
			  umem->dma_attrs | DMA_ATTR_SKIP_CPU_SYNC);
}

static struct mrc_umem *mrc_umem_alloc(struct mrc_device *mdev, u64 start,
				       u64 length, u32 access)
{
	struct mrc_umem *umem;

	umem = kzalloc(sizeof(*umem), GFP_KERNEL);
	if (!umem)
		return NULL;

	umem->mdev = mdev;
	umem->address = start;
	umem->length = length;
	umem->npages = mrc_umem_num_pages(start, length);
	umem->writable = mrc_access_writable(access);
	if (access & MRC_ACCESS_RELAXED_ORDERING)
		umem->dma_attrs |= DMA_ATTR_WEAK_ORDERING;
	umem->mm = current->mm;
	mmgrab(umem->mm);
	return umem;
}

static void mrc_umem_free(struct mrc_umem *umem)
{
	mmdrop(umem->mm);
	kfree(umem);
}

/**
 * mrc_umem_prepare - the caller's side of a user registration
 * @mdev: device to map for
 * @start: first byte
 * @length: bytes
 * @access: MRC_ACCESS_* of the registration: writable rights pin for
 *	write; RELAXED_ORDERING maps with DMA_ATTR_WEAK_ORDERING
 *
 * Everything the registering process must decide while it runs: its mm
 * (held with mmgrab()), whether it may lock memory, and the
 * RLIMIT_MEMLOCK charge of the pages against its mm's pinned_vm,
 * judged by its own rlimit and CAP_IPC_LOCK. Nothing is pinned yet:
 * mrc_umem_populate() pins and maps, from this task or from a worker
 * (an asynchronous registration), and mrc_umem_abandon() gives the
 * charge back instead.
 *
 * Context: process context of the process that owns the memory.
 * Return: the charged umem; ERR_PTR(-EINVAL) for a range
 * mrc_umem_check_range() refuses; -EFAULT without a user mm; -EPERM if
 * the process may not lock memory at all; -ENOMEM over RLIMIT_MEMLOCK
 * without CAP_IPC_LOCK, or out of memory.
 */
struct mrc_umem *mrc_umem_prepare(struct mrc_device *mdev, u64 start,
				  u64 length, u32 access)
{
	struct mrc_umem *umem;
	int ret;

	ret = mrc_umem_check_range(start, length);
	if (ret)
		return ERR_PTR(ret);
	if (!current->mm)
		return ERR_PTR(-EFAULT);
	if (!can_do_mlock())
		return ERR_PTR(-EPERM);

	umem = mrc_umem_alloc(mdev, start, length, access);
	if (!umem)
		return ERR_PTR(-ENOMEM);

	ret = mrc_pinned_charge(umem->mm, umem->npages);
	if (ret) {
		mrc_umem_free(umem);
		return ERR_PTR(ret);
	}
	return umem;
}

/**
 * mrc_umem_abandon - undo mrc_umem_prepare() of a umem never populated
 * @umem: from mrc_umem_prepare()
 *
 * Context: any context that may drop an mm reference.
 */
void mrc_umem_abandon(struct mrc_umem *umem)
{
	mrc_pinned_uncharge(umem->mm, umem->npages);
	mrc_umem_free(umem);
}

/* Pin and map from current->mm, which is @umem's. */
static int mrc_umem_pin_map(struct mrc_umem *umem)
{
	int ret;

	ret = mrc_umem_pin(umem);
	if (ret)
		goto out_unpin;
	ret = mrc_umem_map(umem);
	if (ret)
		goto out_unpin;

	atomic64_add(umem->npages, &umem->mdev->pages_pinned);
	return 0;

out_unpin:
	mrc_umem_unpin(umem, false);
	return ret;
}

/*
 * A worker pins for the process that prepared the umem: it adopts the
 * process's mm with kthread_use_mm(), as the parallel pin's chunks do, so
 * GUP's fast path works on the right address space. The charge was made
 * by the process already: nothing here consults the worker's own rlimit
 * or capabilities. An mm already torn down (the process exited) cannot be
 * pinned from: -EFAULT.
 */
static int mrc_umem_pin_map_remote(struct mrc_umem *umem)
{
	int ret;

	if (!(current->flags & PF_KTHREAD) || current->mm)
		return -EFAULT;
	if (!mmget_not_zero(umem->mm))
		return -EFAULT;
	kthread_use_mm(umem->mm);
	ret = mrc_umem_pin_map(umem);
	kthread_unuse_mm(umem->mm);
	mmput(umem->mm);
	return ret;
}

/**
 * mrc_umem_populate - pin and DMA-map a prepared umem
 * @umem: from mrc_umem_prepare(); consumed on failure
 *
 * Runs in the process that prepared @umem, or in a kernel worker (without
 * an mm of its own), which pins from the process's mm. On failure
 * nothing stays pinned, mapped or charged and @umem is freed.
 *
 * Context: process context; may sleep for long.
 * Return: 0, or -EFAULT (memory not mapped, not readable, not writable
 * for a writable registration; or the process's mm is gone), -EINTR on a
 * fatal signal of the pinning task, -ENOMEM, another GUP or DMA-mapping
 * error.
 */
int mrc_umem_populate(struct mrc_umem *umem)
{
	int ret;

	if (current->mm == umem->mm)
		ret = mrc_umem_pin_map(umem);
	else
		ret = mrc_umem_pin_map_remote(umem);
	if (ret)
		mrc_umem_abandon(umem);
	return ret;
}

/**
 * mrc_umem_get - pin and DMA-map user memory of the calling process
 * @mdev: device to map for
 * @start: first byte
 * @length: bytes
 * @access: MRC_ACCESS_* of the registration: writable rights pin for
 *	write; RELAXED_ORDERING maps with DMA_ATTR_WEAK_ORDERING
 *
 * mrc_umem_prepare() and mrc_umem_populate() in the calling process.
 *
 * Return: the umem; ERR_PTR(-EINVAL) for a range mrc_umem_check_range()
 * refuses; -EFAULT without a user mm, for memory that is not mapped (or,
 * for a read-only registration, not readable), or not writable for a
 * writable one; -EPERM if the process may not lock memory at all; -ENOMEM
 * over RLIMIT_MEMLOCK without CAP_IPC_LOCK, or out of memory; -EINTR on a
 * fatal signal; another GUP or DMA-mapping error. Nothing stays pinned,
 * mapped or charged after a failure.
 */
struct mrc_umem *mrc_umem_get(struct mrc_device *mdev, u64 start, u64 length,
			      u32 access)
{
	struct mrc_umem *umem;
	int ret;

	umem = mrc_umem_prepare(mdev, start, length, access);
	if (IS_ERR(umem))
		return umem;
	ret = mrc_umem_populate(umem);
	return ret ? ERR_PTR(ret) : umem;
}

/**
 * mrc_umem_release - undo mrc_umem_get()
 * @umem: the umem, or NULL
 *
 * The device must no longer be able to reach the pages.
 */
void mrc_umem_release(struct mrc_umem *umem)
{
	if (!umem)
		return;

	mrc_umem_unmap(umem);
	mrc_umem_unpin(umem, umem->writable);
	mrc_pinned_uncharge(umem->mm, umem->npages);
	atomic64_sub(umem->npages, &umem->mdev->pages_pinned);
	mrc_umem_free(umem);
}

/* Whether the pages were pinned for write. */
bool mrc_umem_writable(const struct mrc_umem *umem)
{
	return umem->writable;
}

/* The first byte as registered. */
u64 mrc_umem_start(const struct mrc_umem *umem)
{
	return umem->address;
}

/**
 * mrc_umem_segs - the registered bytes as DMA segments
 * @umem: the umem
 * @it: set to iterate over exactly [address, address + length)
 */
void mrc_umem_segs(const struct mrc_umem *umem, struct mrc_seg_iter *it)
{
	const struct sg_table *sgt = &umem->sgt_append.sgt;

	mrc_seg_iter_sg(it, sgt->sgl, sgt->nents, umem->address & ~PAGE_MASK,
			umem->length);
}
