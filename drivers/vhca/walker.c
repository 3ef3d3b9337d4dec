// SPDX-License-Identifier: GPL-2.0
/*
 * vhca walker: the device side of a memory access, the path the DMA engine
 * takes for every SGE and every remote range.
 *
 * A walk turns (PD, key, iova, length, direction) into DMA addresses using
 * only what device memory holds: the key's context slot, then its MTT or
 * KLM entries. It then moves the bytes at those DMA addresses, a CPU page
 * at a time. mrcore's CPU-side objects are never consulted, so a wrong
 * table moves the wrong bytes and tests see it.
 *
 * Rules, checked in this order (Documentation/mrcore/vhca.rst has the
 * table):
 *
 *  1. key: the slot (key >> 8) exists, is VALID and holds this very key
 *     (variant included), else -ENOKEY;
 *  2. PD: the context's PD is the requester's, or MRC_PDN_ANY, else -EPERM;
 *  3. rights: local reads are always allowed; local writes need
 *     LOCAL_WRITE, remote reads REMOTE_READ, remote writes REMOTE_WRITE;
 *     a context of MRC_PDN_ANY (the local DMA key) serves local access
 *     only, and one carrying MRC_ACCESS_REMOTE_ONLY (a memory window)
 *     remote access only; else -EPERM;
 *  4. QP: a context bound to a QP (a type 2 window, ctx.qpn != 0) admits
 *     a remote access only on that QP (the responder's number; 0, "no
 *     QP", matches none), else -EPERM;
 *  5. a zero-length access stops here;
 *  6. range: [iova, iova + len) does not wrap and lies inside [ctx.iova,
 *     ctx.iova + ctx.length), else -ERANGE;
 *  7. translation, by access mode: PA (the iova is the DMA address), MTT,
 *     KLM or KSM; malformed tables give -EINVAL, an entry without the
 *     R/W bit the access needs gives -EFAULT, or, in a context with
 *     MRC_MKEY_F_ODP, -EAGAIN: a page fault, recorded in the walk's
 *     struct vhca_fault (if it has one) for the engine to raise. A KSM
 *     entry naming key 0 is non-present the same way (a nested walk of
 *     key 0 fails -ENOKEY in a context without the flag). A fault met
 *     below a KLM or KSM entry of an ODP context is moved up to that
 *     context (its key, and the address in its space), so the fault
 *     names the outermost ODP key of the walk: an implicit ODP parent's,
 *     never its child's;
 *  8. bytes: each DMA address becomes a physical address with
 *     dma_to_phys(), as vhca's DMA is dma-direct (with swiotlb, a kernel
 *     caller's mapping gives the bounce buffer's bytes, as for any
 *     device; user pages are registered at their direct addresses,
 *     MRC_CAP_USER_DIRECT, so the engine reaches the process's own
 *     pages); a page frame without a struct page gives -EFAULT.
 *
 * Nesting: a KLM entry names a key, and that key is walked one level
 * deeper with rules 1 (its own VALID context, exact variant: -ENOKEY), 4
 * and 6-8 (its own address space; a write still needs the W bit of its
 * MTT entries). In place of rules 2 and 3 a nested key must be of the PD
 * of the context that named it, or be the local DMA key, whose PA
 * context makes the entry's address a DMA address (-EPERM); a local
 * access still never passes through a REMOTE_ONLY context. Rule 3 (the
 * right, and the local DMA key serving local access only) applies to a
 * nested key only when the context that named it carries
 * MRC_MKEY_F_NESTED_RIGHTS, which mrcore sets on indirect keys: an
 * indirect key grants no right that a key it names does not grant at
 * the time of the access. Checking at every access, rather than having
 * mrcore invalidate indirect keys when a named MR changes, needs no
 * record of which indirect keys name which MR, leaves no window between
 * the named context's change and the invalidation (write_mkey drains
 * the walkers of the old context, so once a rereg that narrows rights
 * returns, no access uses the old ones), also covers a key freed and
 * registered again at the same value with fewer rights, and lets an
 * indirect key work again when the rights come back. Other nested keys
 * need none of the access's rights: a window grants its own and the MR
 * beneath needs none of them (mrcore checked MW_BIND when it bound the
 * window); an implicit ODP child has no rights of its own (its KSM
 * parent's are the MR's); the local DMA key under an SG_GAPS or KLM-mode
 * MR serves local access only, while remote access through that MR is
 * the MR's to grant.
 * Counters: a walk made for an operation that counts (a remote write or
 * atomic, vhca_access_counted()) records the counter field of every
 * context it resolves bytes through, at every level, in the operation's
 * set; the engine adds one to each once the operation has succeeded
 * (vhca_counted_end()). A counter the table does not have is a
 * malformed context (-EINVAL), whether the walk records or not.
 * Gathering: a walk made for a transfer (vhca_access_gather(), xfer.c)
 * makes the same checks but moves no byte. It appends the pages it
 * resolves to a struct vhca_pipe, and every key it enters stays held in
 * the pipe, so that no invalidation frees those pages before the
 * transfer has copied between its two sides' pipes and let the keys go
 * (vhca_pipe_release()). A full pipe stops the walk (-ENOSPC) between
 * two pieces (pages, entries or keys), with what it gathered so far
 * checked.
 * A walk goes at most VHCA_WALK_MAX_DEPTH keys deep, the key the
 * requester named included; a deeper one fails -EINVAL, so the
 * recursion is bounded whatever device memory holds (a KLM entry naming
 * its own key included).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-direct.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <asm/unaligned.h>

#include "vhca_loc.h"

/*
 * The levels of the deepest walk mrcore builds: the indirect keys, the MR
 * they end in, and the local DMA key under a KLM-mode MR (SG_GAPS). A
 * window's walk is at most 3 keys (window, MR, local DMA key): mrcore
 * binds windows to memory regions only and never lets an indirect key
 * name a window. VHCA_WALK_MAX_DEPTH leaves one level more. Each level
 * holds a context on the stack, so the bound is also the walk's stack
 * budget.
 */
static_assert(VHCA_WALK_MAX_DEPTH >= MRC_WALK_MAX_KEYS,
	      "every walk mrcore builds must fit");
static_assert(MRC_WALK_MAX_KEYS >= 3, "a window's walk must fit");
static_assert(VHCA_WALK_MAX_DEPTH <= 8, "the walk recurses once per level");

/**
 * struct vhca_walk - one access in progress
 * @vdev: the device
 * @pdn: PD number of the requester
 * @qpn: number of the QP the access is made on (the responder's for a
 *	remote access), or 0 for none
 * @dir: direction and rights of the access
 * @buf: the next byte of the caller's buffer to fill or drain
 * @counters: the operation's set of counter slots (VHCA_MAX_COUNTERS
 *	bits) to record the contexts' counters in, or NULL
 * @fault: where a page fault is recorded, or NULL
 * @pipe: a gathering walk (vhca_access_gather()): where the pages the
 *	walk resolves and the keys it holds go; NULL for a walk that moves
 *	bytes to or from @buf, or probes
 */
struct vhca_walk {
	struct vhca_dev *vdev;
	u32 pdn;
	u32 qpn;
	enum vhca_access_dir dir;
	u8 *buf;
	unsigned long *counters;
	struct vhca_fault *fault;
	struct vhca_pipe *pipe;
};

static int vhca_walk_key(struct vhca_walk *w, u32 key, u64 iova, u64 len,
			 const struct mrc_mkey_ctx *parent, unsigned int depth);

static bool vhca_dir_writes(enum vhca_access_dir dir)
{
	return dir == VHCA_ACCESS_LOCAL_WRITE ||
	       dir == VHCA_ACCESS_REMOTE_WRITE ||
	       dir == VHCA_ACCESS_ATOMIC_WRITE ||
	       dir == VHCA_ACCESS_ATOMIC_STORE;
}

/* The accesses of an atomic: eight aligned bytes, moved in one access. */
static bool vhca_dir_atomic(enum vhca_access_dir dir)
{
	return dir == VHCA_ACCESS_ATOMIC_READ ||
	       dir == VHCA_ACCESS_ATOMIC_WRITE ||
	       dir == VHCA_ACCESS_ATOMIC_STORE;
}

static bool vhca_dir_remote(enum vhca_access_dir dir)
{
	return dir != VHCA_ACCESS_LOCAL_READ && dir != VHCA_ACCESS_LOCAL_WRITE;
}

/* The MRC_ACCESS_* right an access needs, or 0 (local reads). */
static int vhca_dir_right(enum vhca_access_dir dir, u32 *right)
{
	switch (dir) {
	case VHCA_ACCESS_LOCAL_READ:
		*right = 0;
		return 0;
	case VHCA_ACCESS_LOCAL_WRITE:
		*right = MRC_ACCESS_LOCAL_WRITE;
		return 0;
	case VHCA_ACCESS_REMOTE_READ:
		*right = MRC_ACCESS_REMOTE_READ;
		return 0;
	case VHCA_ACCESS_REMOTE_WRITE:
	case VHCA_ACCESS_ATOMIC_STORE:
		*right = MRC_ACCESS_REMOTE_WRITE;
		return 0;
	case VHCA_ACCESS_ATOMIC_READ:
	case VHCA_ACCESS_ATOMIC_WRITE:
		*right = MRC_ACCESS_REMOTE_ATOMIC;
		return 0;
	}
	return -EINVAL;
}

/*
 * Move @n bytes between the walk's buffer and @va. An atomic's target is
 * one aligned u64 (resp.c), so within a page: it is loaded or stored in
 * one access, never torn for the CPUs or for another walk reading it.
 */
static void vhca_copy(struct vhca_walk *w, void *va, size_t n)
{
	bool writes = vhca_dir_writes(w->dir);
	u64 *p = va;

	if (vhca_dir_atomic(w->dir) && n == sizeof(u64) &&
	    IS_ALIGNED((unsigned long)va, sizeof(u64))) {
		if (writes)
			WRITE_ONCE(*p, get_unaligned((u64 *)w->buf));
		else
			put_unaligned(READ_ONCE(*p), (u64 *)w->buf);
	} else if (writes) {
		memcpy(va, w->buf, n);
	} else {
		memcpy(w->buf, va, n);
	}
}

/*
 * Add @n bytes at @phys to a gathering walk's pipe, as the next bytes of
 * its run: merged into the last span when they follow it.
 */
static int vhca_pipe_add(struct vhca_pipe *p, phys_addr_t phys, size_t n)
{
	struct vhca_span *last = p->nr_spans ? &p->span[p->nr_spans - 1] :
				 NULL;

	if (last && last->phys + last->len == phys &&
	    n <= U32_MAX - last->len) {
		last->len += n;
	} else {
		if (p->nr_spans == VHCA_PIPE_SPANS)
			return -ENOSPC;
		p->span[p->nr_spans++] = (struct vhca_span) {
			.phys = phys,
			.len = n,
		};
	}
	p->bytes += n;
	return 0;
}

/*
 * Move @len bytes between the caller's buffer and DMA address @dma, one
 * CPU page at a time: the device sees what a DMA to @dma would reach. A
 * gathering walk records the pages in its pipe instead.
 */
static int vhca_dma_copy(struct vhca_walk *w, dma_addr_t dma, u64 len)
{
	struct device *dev = &w->vdev->pdev->dev;
	dma_addr_t end;

	if (check_add_overflow(dma, (dma_addr_t)len, &end))
		return -EFAULT;

	while (len) {
		phys_addr_t phys = dma_to_phys(dev, dma);
		size_t off = offset_in_page(phys);
		size_t n = min_t(u64, len, PAGE_SIZE - off);
		void *va;

		if (!pfn_valid(PHYS_PFN(phys)))
			return -EFAULT;

		/*
		 * A gathering walk records the page, a walk with a buffer
		 * copies, a probe (neither) checks and moves nothing.
		 */
		if (w->pipe) {
			int err = vhca_pipe_add(w->pipe, phys, n);

			if (err)
				return err;
		} else if (w->buf) {
			va = kmap_local_page(pfn_to_page(PHYS_PFN(phys)));
			vhca_copy(w, va + off, n);
			kunmap_local(va);
			w->buf += n;
		}
		dma += n;
		len -= n;
	}
	return 0;
}

/*
 * An ODP context's entry lacks a bit the access needs: record the first
 * such fault of the walk's operation and fail the walk with -EAGAIN.
 */
static int vhca_walk_fault(struct vhca_walk *w, const struct mrc_mkey_ctx *ctx,
			   u64 iova, u64 len)
{
	struct vhca_fault *f = w->fault;

	if (f && !f->pending)
		*f = (struct vhca_fault) {
			.vdev = w->vdev,
			.key = ctx->key,
			.iova = iova,
			.len = len,
			.write = vhca_dir_writes(w->dir),
			.pending = true,
		};
	return -EAGAIN;
}

/*
 * MTT mode. Entries describe pages of 1 << page_shift bytes of the key's
 * address space, which starts at ALIGN_DOWN(ctx->iova, page size): entry 0
 * covers the page holding the key's first byte, and byte @iova sits in
 * entry (iova >> shift) - (ctx->iova >> shift), at offset iova & (page
 * size - 1) from the page address the entry holds. So an iova and its DMA
 * address share their offset within a page, as mrcore's page-size choice
 * guarantees.
 */
static int vhca_walk_mtt(struct vhca_walk *w, const struct mrc_mkey_ctx *ctx,
			 u64 iova, u64 len)
{
	struct vhca_dev *vdev = w->vdev;
	unsigned int shift = ctx->page_shift;
	u64 need, pgsz, idx;
	int err;

	if (shift >= BITS_PER_LONG ||
	    !(vdev->mdev.caps.page_size_bitmap & BIT(shift)))
		return -EINVAL;
	err = vhca_mkey_xlt_check(vdev, ctx);
	if (err)
		return err;

	need = vhca_dir_writes(w->dir) ? MRC_MTT_READ | MRC_MTT_WRITE :
					 MRC_MTT_READ;
	pgsz = BIT_ULL(shift);
	idx = (iova >> shift) - (ctx->iova >> shift);
	for (; len; idx++) {
		u64 entry, off, n;

		if (idx >= ctx->xlt_entries)
			return -EINVAL;
		entry = readq(vdev->mem.xlt + ctx->xlt_offset +
			      idx * MRC_MTT_ENTRY_SIZE);
		if ((entry & need) != need)
			return ctx->flags & MRC_MKEY_F_ODP ?
			       vhca_walk_fault(w, ctx, iova, len) : -EFAULT;
		if (!IS_ALIGNED(entry & MRC_MTT_ADDR_MASK, pgsz))
			return -EINVAL;

		off = iova & (pgsz - 1);
		n = min(len, pgsz - off);
		err = vhca_dma_copy(w, (entry & MRC_MTT_ADDR_MASK) + off, n);
		if (err)
			return err;
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * Bytes [@off, @off + @len) of one KLM or KSM entry of @ctx, at @iova of
 * @ctx's address space, through @key, the key the entry names, from
 * @addr in its space: the local DMA key (the address is a DMA address)
 * or another key of @ctx's PD, walked by the nested-key rules. A page
 * fault this nested walk records is moved up to @ctx when @ctx is an ODP
 * context.
 */
static int vhca_walk_klm_entry(struct vhca_walk *w,
			       const struct mrc_mkey_ctx *ctx, u32 key,
			       u64 addr, u64 iova, u64 off, u64 len,
			       unsigned int depth)
{
	struct vhca_fault *f = w->fault;
	bool had_fault = f && f->pending;
	u64 delta;
	int err;

	if (check_add_overflow(addr, off, &addr))
		return -EINVAL;
	err = vhca_walk_key(w, key, addr, len, ctx, depth + 1);
	if (err != -EAGAIN || !f || had_fault || !f->pending ||
	    !(ctx->flags & MRC_MKEY_F_ODP))
		return err;

	/*
	 * Where the fault fell inside this piece, if it was recorded in the
	 * space of the key the entry names (deeper keys: the piece's start).
	 */
	delta = f->iova - addr;
	if (f->iova < addr || delta >= len)
		delta = 0;
	f->key = ctx->key;
	f->iova = iova + delta;
	f->len = len - delta;
	return err;
}

/*
 * KLM mode. Entries cover consecutive byte ranges of the key's address
 * space from ctx->iova on, entry i covering bcount bytes at address addr
 * of key i. Byte @iova is found by adding up byte counts from entry 0.
 */
static int vhca_walk_klm(struct vhca_walk *w, const struct mrc_mkey_ctx *ctx,
			 u64 iova, u64 len, unsigned int depth)
{
	u64 off = iova - ctx->iova;
	void __iomem *klm;
	u32 i, key;
	u64 addr;
	int err;

	err = vhca_mkey_xlt_check(w->vdev, ctx);
	if (err)
		return err;

	klm = w->vdev->mem.xlt + ctx->xlt_offset;
	for (i = 0; len; i++, klm += MRC_KLM_ENTRY_SIZE) {
		u32 bcount;
		u64 n;

		if (i >= ctx->xlt_entries)
			return -EINVAL;
		bcount = readl(klm + offsetof(struct mrc_klm, bcount));
		if (!bcount)
			return -EINVAL;
		if (off >= bcount) {
			off -= bcount;
			continue;
		}

		n = min_t(u64, len, bcount - off);
		key = readl(klm + offsetof(struct mrc_klm, key));
		addr = readq(klm + offsetof(struct mrc_klm, addr));
		err = vhca_walk_klm_entry(w, ctx, key, addr, iova, off, n,
					  depth);
		if (err)
			return err;
		iova += n;
		len -= n;
		off = 0;
	}
	return 0;
}

/*
 * KSM mode. Entry i covers the block of 1 << page_shift bytes at
 * ctx->iova + (i << page_shift), naming a key and the address of the
 * block's first byte in that key's space. ctx->iova must be aligned to
 * the block size. An entry naming key 0 in an ODP context is
 * non-present: a page fault of this context.
 *
 * An ODP context's entries change while walks run (mrcore hooks and
 * unhooks implicit children), so an entry's key is read once, and
 * before its address: mrcore stores the address, fences, then the key
 * word (write_xlt stores whole 8-byte words), and unhooks by storing the
 * key word alone, so a walk that sees a key sees the address written
 * with it. The read of the key must come first: readl() orders the
 * loads after it (its relaxed and __raw_ forms would not).
 */
static int vhca_walk_ksm(struct vhca_walk *w, const struct mrc_mkey_ctx *ctx,
			 u64 iova, u64 len, unsigned int depth)
{
	unsigned int shift = ctx->page_shift;
	void __iomem *klm;
	u64 bsz, idx, addr;
	u32 key;
	int err;

	if (shift < PAGE_SHIFT || shift >= BITS_PER_LONG)
		return -EINVAL;
	bsz = BIT_ULL(shift);
	if (!IS_ALIGNED(ctx->iova, bsz))
		return -EINVAL;
	err = vhca_mkey_xlt_check(w->vdev, ctx);
	if (err)
		return err;

	idx = (iova - ctx->iova) >> shift;
	for (; len; idx++) {
		u64 off = (iova - ctx->iova) & (bsz - 1);
		u64 n = min(len, bsz - off);

		if (idx >= ctx->xlt_entries)
			return -EINVAL;
		klm = w->vdev->mem.xlt + ctx->xlt_offset +
		      idx * MRC_KLM_ENTRY_SIZE;
		key = readl(klm + offsetof(struct mrc_klm, key));
		if (!key && (ctx->flags & MRC_MKEY_F_ODP))
			return vhca_walk_fault(w, ctx, iova, len);
		addr = readq(klm + offsetof(struct mrc_klm, addr));
		err = vhca_walk_klm_entry(w, ctx, key, addr, iova, off, n,
					  depth);
		if (err)
			return err;
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * The rights rule: @ctx grants the access's @right (vhca_dir_right()),
 * and the local DMA key (MRC_PDN_ANY) serves local access only.
 */
static int vhca_check_right(const struct vhca_walk *w,
			    const struct mrc_mkey_ctx *ctx, u32 right)
{
	if (ctx->pdn == MRC_PDN_ANY && vhca_dir_remote(w->dir))
		return -EPERM;
	return (ctx->access & right) == right ? 0 : -EPERM;
}

/* The PD and rights rules: the requester's access against its key. */
static int vhca_check_rights(const struct vhca_walk *w,
			     const struct mrc_mkey_ctx *ctx)
{
	u32 right;
	int err;

	err = vhca_dir_right(w->dir, &right);
	if (err)
		return err;
	/* The local DMA key serves every PD. */
	if (ctx->pdn != MRC_PDN_ANY && ctx->pdn != w->pdn)
		return -EPERM;
	return vhca_check_right(w, ctx, right);
}

/*
 * IBA 10.6.7: a memory window's key is an rkey only. Checked at every
 * level, so that no local access passes through a window however the
 * keys above it are built.
 */
static int vhca_check_remote_only(const struct vhca_walk *w,
				  const struct mrc_mkey_ctx *ctx)
{
	if ((ctx->access & MRC_ACCESS_REMOTE_ONLY) && !vhca_dir_remote(w->dir))
		return -EPERM;
	return 0;
}

/*
 * A key a KLM entry of @parent names: the local DMA key, or a key of
 * @parent's PD (never MRC_PDN_ANY: only the local DMA key has it). If
 * @parent is an indirect key, the named key must also grant the access's
 * right now, whatever it granted when the indirect key was registered.
 */
static int vhca_check_nested(const struct vhca_walk *w, u32 key,
			     const struct mrc_mkey_ctx *ctx,
			     const struct mrc_mkey_ctx *parent)
{
	u32 right;
	int err;

	if (key != w->vdev->rsvd_lkey &&
	    (ctx->pdn == MRC_PDN_ANY || ctx->pdn != parent->pdn))
		return -EPERM;
	if (!(parent->flags & MRC_MKEY_F_NESTED_RIGHTS))
		return 0;
	err = vhca_dir_right(w->dir, &right);
	if (err)
		return err;
	return vhca_check_right(w, ctx, right);
}

/* A type 2 window serves remote accesses on its own QP only. */
static int vhca_check_qp(const struct vhca_walk *w,
			 const struct mrc_mkey_ctx *ctx)
{
	if (ctx->qpn && vhca_dir_remote(w->dir) && ctx->qpn != w->qpn)
		return -EPERM;
	return 0;
}

static int vhca_check_range(const struct mrc_mkey_ctx *ctx, u64 iova, u64 len)
{
	u64 end, ctx_end;

	if (check_add_overflow(iova, len, &end))
		return -ERANGE;
	/* A context that wraps is a malformed one. */
	if (check_add_overflow(ctx->iova, ctx->length, &ctx_end))
		return -EINVAL;
	if (iova < ctx->iova || end > ctx_end)
		return -ERANGE;
	return 0;
}

/*
 * Record the context's counter in the operation's set. Only slots the
 * table has are recorded; max_counters never exceeds the set's bits.
 */
static int vhca_record_counter(const struct vhca_walk *w,
			       const struct mrc_mkey_ctx *ctx)
{
	if (!ctx->counter)
		return 0;
	if (ctx->counter >= w->vdev->mdev.caps.max_counters)
		return -EINVAL;
	if (w->counters)
		__set_bit(ctx->counter, w->counters);
	return 0;
}

/*
 * One key's part of the walk. PD and rights are checked for the key the
 * requester named (no @parent); a key reached through a KLM entry of
 * @parent is checked against @parent's PD instead, and for the access's
 * right when @parent carries MRC_MKEY_F_NESTED_RIGHTS.
 */
static int vhca_walk_ctx(struct vhca_walk *w, u32 key,
			 const struct mrc_mkey_ctx *ctx,
			 const struct mrc_mkey_ctx *parent, u64 iova, u64 len,
			 unsigned int depth)
{
	int err;

	if (parent)
		err = vhca_check_nested(w, key, ctx, parent);
	else
		err = vhca_check_rights(w, ctx);
	if (!err)
		err = vhca_check_remote_only(w, ctx);
	if (!err)
		err = vhca_check_qp(w, ctx);
	if (err)
		return err;
	if (!len)
		return 0;

	err = vhca_check_range(ctx, iova, len);
	if (err)
		return err;
	err = vhca_record_counter(w, ctx);
	if (err)
		return err;

	switch (ctx->access_mode) {
	case MRC_ACCESS_MODE_PA:
		return vhca_dma_copy(w, iova, len);
	case MRC_ACCESS_MODE_MTT:
		return vhca_walk_mtt(w, ctx, iova, len);
	case MRC_ACCESS_MODE_KLM:
		return vhca_walk_klm(w, ctx, iova, len, depth);
	case MRC_ACCESS_MODE_KSM:
		return vhca_walk_ksm(w, ctx, iova, len, depth);
	}
	return -EINVAL;
}

/*
 * The pipe holds @key already: its slot cannot be drained, so the pages
 * its entries named stay; a second hold would add a count and nothing
 * else (entering it again still reads the slot, and fails once a
 * revocation has begun).
 */
static bool vhca_pipe_holds(const struct vhca_pipe *p, u32 key)
{
	u32 i;

	for (i = p->nr_keys; i--;)
		if (p->key[i] == key)
			return true;
	return false;
}

/*
 * Hold @key's slot for as long as its translation and bytes are used:
 * to the end of this walk, or, in a gathering walk, until the pipe is
 * released (vhca_pipe_release()), once the bytes its pages hold are
 * moved. @parent is the context whose KLM entry named @key, NULL for the
 * key the requester named (@depth 0).
 */
static int vhca_walk_key(struct vhca_walk *w, u32 key, u64 iova, u64 len,
			 const struct mrc_mkey_ctx *parent, unsigned int depth)
{
	struct vhca_pipe *p = w->pipe;
	bool keep = false;
	struct mrc_mkey_ctx ctx;
	int err;

	if (depth >= VHCA_WALK_MAX_DEPTH)
		return -EINVAL;
	if (p && !vhca_pipe_holds(p, key)) {
		if (p->nr_keys == VHCA_PIPE_KEYS)
			return -ENOSPC;
		keep = true;
	}

	err = vhca_mkey_get(w->vdev, key, &ctx);
	if (err)
		return err;
	if (keep)
		p->key[p->nr_keys++] = key;
	err = vhca_walk_ctx(w, key, &ctx, parent, iova, len, depth);
	if (!keep)
		vhca_mkey_put(w->vdev, key);
	return err;
}

/**
 * vhca_access_fault - vhca_access_counted(), recording a page fault
 * @vdev: the device
 * @pdn: PD number of the requester
 * @qpn: as for vhca_access()
 * @key: lkey or rkey
 * @iova: first address, in the key's address space
 * @buf: kernel buffer, or NULL to check the walk without moving bytes
 * @len: bytes
 * @dir: enum vhca_access_dir
 * @counters: as for vhca_access_counted()
 * @fault: where the walk records a page fault (a non-present or
 *	read-only MTT entry of an MRC_MKEY_F_ODP context, the walk then
 *	failing -EAGAIN), unless one is pending in it already; or NULL
 *
 * Context: any context but NMI; does not sleep.
 * Return: as vhca_access().
 */
int vhca_access_fault(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
		      u64 iova, void *buf, size_t len,
		      enum vhca_access_dir dir, unsigned long *counters,
		      struct vhca_fault *fault)
{
	struct vhca_walk w = {
		.vdev = vdev,
		.pdn = pdn,
		.qpn = qpn,
		.dir = dir,
		.buf = buf,
		.counters = counters,
		.fault = fault,
	};

	return vhca_walk_key(&w, key, iova, len, NULL, 0);
}

/**
 * vhca_access_gather - walk an access, keeping its pages and keys for a copy
 * @vdev: the device
 * @pdn: PD number of the requester
 * @qpn: as for vhca_access()
 * @key: lkey or rkey
 * @iova: first address, in the key's address space
 * @len: bytes
 * @dir: enum vhca_access_dir, not an atomic's
 * @counters: as for vhca_access_counted()
 * @fault: as for vhca_access_fault()
 * @p: the pipe the walk appends to
 *
 * The walk makes every check vhca_access() makes but moves no byte: the
 * pages it resolves are appended to @p as spans of physical addresses,
 * adding to @p->bytes, and every key it enters stays held in @p, so that
 * no invalidation can free those pages until vhca_pipe_release(). A
 * pipe that fills up stops the walk between two pieces: the walk's first
 * @p->bytes (as it grew) are gathered and checked, and the rest is not
 * checked yet. The caller releases @p whatever the result.
 *
 * Context: any context but NMI; does not sleep.
 * Return: 0 with all @len bytes gathered; -ENOSPC when @p filled up
 * first; else as vhca_access_fault().
 */
int vhca_access_gather(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
		       u64 iova, u64 len, enum vhca_access_dir dir,
		       unsigned long *counters, struct vhca_fault *fault,
		       struct vhca_pipe *p)
{
	struct vhca_walk w = {
		.vdev = vdev,
		.pdn = pdn,
		.qpn = qpn,
		.dir = dir,
		.counters = counters,
		.fault = fault,
		.pipe = p,
	};

	if (vhca_dir_atomic(dir))
		return -EINVAL;
	return vhca_walk_key(&w, key, iova, len, NULL, 0);
}

/**
 * vhca_pipe_release - let the keys of a gathering walk go
 * @vdev: the device the walks were made on
 * @p: the pipe; it is empty afterwards
 *
 * Context: any context but NMI; does not sleep.
 */
void vhca_pipe_release(struct vhca_dev *vdev, struct vhca_pipe *p)
{
	while (p->nr_keys)
		vhca_mkey_put(vdev, p->key[--p->nr_keys]);
	p->nr_spans = 0;
	p->bytes = 0;
}

/**
 * vhca_access_counted - vhca_access(), recording the contexts' counters
 * @vdev: the device
 * @pdn: PD number of the requester
 * @qpn: number of the QP the access is made on, as for vhca_access()
 * @key: lkey or rkey
 * @iova: first address, in the key's address space
 * @buf: kernel buffer, or NULL to check the walk without moving bytes
 * @len: bytes
 * @dir: enum vhca_access_dir
 * @counters: the operation's set (struct vhca_counted's ids), or NULL:
 *	the counter slot of every context the walk resolves bytes through
 *	is set in it, the key @key names included, so the engine can add
 *	to each once when the operation succeeds. Bits of a failed walk
 *	may have been set.
 *
 * Context: any context but NMI; does not sleep.
 * Return: as vhca_access().
 */
int vhca_access_counted(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
			u64 iova, void *buf, size_t len,
			enum vhca_access_dir dir, unsigned long *counters)
{
	return vhca_access_fault(vdev, pdn, qpn, key, iova, buf, len, dir,
				 counters, NULL);
}

/**
 * vhca_access - vhca_dev_access() for the driver's own callers (the engine)
 * @vdev: the device
 * @pdn: PD number of the requester
 * @qpn: number of the QP the access is made on: the requester's for a
 *	local access, the responder's for a remote one; 0 for none, which a
 *	type 2 window refuses for remote access
 * @key: lkey or rkey
 * @iova: first address, in the key's address space
 * @buf: kernel buffer, or NULL to check the walk without moving bytes
 * @len: bytes
 * @dir: enum vhca_access_dir
 *
 * Context: any context but NMI; does not sleep.
 * Return: as vhca_dev_access(), without -ENODEV.
 */
int vhca_access(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key, u64 iova,
		void *buf, size_t len, enum vhca_access_dir dir)
{
	return vhca_access_counted(vdev, pdn, qpn, key, iova, buf, len, dir,
				   NULL);
}

/**
 * vhca_dev_access - move bytes between a kernel buffer and memory named by a key
 * @ibdev: a vhca ib_device
 * @pdn: PD number of the requester (the QP's PD); checked against the context
 * @key: lkey or rkey
 * @iova: first address, in the key's address space
 * @buf: kernel buffer
 * @len: bytes; 0 is allowed and checks only the key, PD and rights
 * @dir: enum vhca_access_dir
 *
 * The walk reads only device memory; the rules are in the comment at the
 * top of this file. The access is made on no QP, so a type 2 memory
 * window refuses it for remote directions (-EPERM). The caller keeps
 * @ibdev registered for the call (ib_device_try_get() or a client's
 * reference). Bytes before the first failing piece may have been moved.
 *
 * Context: any context but NMI; does not sleep. @len should be bounded by
 * the caller (a message, a page run): the copy does not yield.
 * Return: 0; -ENODEV if @ibdev is not a vhca; -ENOKEY for a key whose
 * context is not VALID or whose variant differs (a nested key's
 * included); -EPERM for a PD mismatch (a nested key of another PD
 * included), a missing right (of a key an indirect key names
 * included), a local access through a memory window
 * (MRC_ACCESS_REMOTE_ONLY), or a remote access through a type 2 window;
 * -ERANGE when [@iova, @iova + @len) is outside the key (or a piece
 * outside a nested key) or wraps; -EFAULT for a translation entry
 * without the R/W bit the access needs, or a DMA address that reaches no
 * page; -EAGAIN for such an entry of an ODP MR (a page fault: this call
 * does not resolve it); -EINVAL for a bad @dir, a malformed context or table, or a walk
 * nested deeper than VHCA_WALK_MAX_DEPTH keys.
 */
int vhca_dev_access(struct ib_device *ibdev, u32 pdn, u32 key, u64 iova,
		    void *buf, size_t len, enum vhca_access_dir dir)
{
	if (!vhca_is_vhca(ibdev))
		return -ENODEV;

	return vhca_access(to_vhca_dev(ibdev), pdn, 0, key, iova, buf, len,
			   dir);
}
EXPORT_SYMBOL_GPL(vhca_dev_access);

/**
 * vhca_mkey_info - read back what the device holds for a key
 * @ibdev: a vhca ib_device
 * @key: key
 * @page_shift: out: MTT page shift (0 for PA/KLM)
 * @entries: out: translation entries (0 for PA)
 * @mode: out: enum mrc_access_mode
 *
 * Context: any context; does not sleep.
 * Return: 0; -ENODEV if @ibdev is not a vhca; -ENOKEY if the device does
 * not hold @key as VALID.
 */
int vhca_mkey_info(struct ib_device *ibdev, u32 key, u8 *page_shift,
		   u32 *entries, u8 *mode)
{
	struct vhca_dev *vdev;
	struct mrc_mkey_ctx ctx;
	int err;

	if (!vhca_is_vhca(ibdev))
		return -ENODEV;

	vdev = to_vhca_dev(ibdev);
	err = vhca_mkey_get(vdev, key, &ctx);
	if (err)
		return err;
	vhca_mkey_put(vdev, key);

	*mode = ctx.access_mode;
	*page_shift = ctx.access_mode == MRC_ACCESS_MODE_MTT ?
		      ctx.page_shift : 0;
	*entries = ctx.access_mode == MRC_ACCESS_MODE_PA ? 0 : ctx.xlt_entries;
	return 0;
}
EXPORT_SYMBOL_GPL(vhca_mkey_info);
