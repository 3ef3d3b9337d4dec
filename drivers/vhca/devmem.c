// SPDX-License-Identifier: GPL-2.0
/*
 * vhca device memory: the mkey context table, the translation area and the
 * counter table, and the mrc_hw_ops that write them.
 *
 * The region comes from vmalloc but is typed __iomem and reached only
 * through io accessors, as the BAR of a real HCA would be, so sparse (C=2)
 * proves that nothing touches it as plain memory. Both the CPU side
 * (mrcore, through the ops below) and the device side (vhca_read_mkey(),
 * the walker, the debugfs dumps) read and write it the same way.
 *
 * Drain: every slot has a count of walkers inside it. A walker raises the
 * count before it reads the state and drops it after its last byte
 * (vhca_mkey_get(), vhca_mkey_put(), called by the walker), and the
 * device side of invalidation stores INVALID and then waits for the count
 * to reach zero (vhca_mkey_drain()). A transfer keeps the counts of the
 * slots its two sides' walks entered raised until it has copied between
 * the pages they found (xfer.c). With a full barrier on each side,
 * either the walker sees INVALID or the invalidation sees the count, so
 * once invalidate_mkey returns no walker still uses the old context, its
 * entries or the memory they named. The counts live here, beside the
 * slots they count. A kernel post_send's run, which may not sleep, does
 * not wait: with walkers inside it leaves the slot as it was and the work
 * request to the worker, whose write drains it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <asm/unaligned.h>

#include "engine.h"
#include "vhca_loc.h"

/* Slot 0 is never handed out, so no key with index 0 can be written. */
static bool vhca_mkey_index_valid(struct vhca_dev *vdev, u32 index)
{
	return index && index < vdev->mdev.caps.max_mkeys;
}

static int vhca_xlt_range_check(struct vhca_dev *vdev, u64 offset, u64 len)
{
	u64 end;

	if (check_add_overflow(offset, len, &end) ||
	    end > vdev->mdev.caps.xlt_size)
		return -EINVAL;
	return 0;
}

/**
 * vhca_mkey_xlt_check - do a context's translation entries fit the area?
 * @vdev: the device
 * @ctx: an MTT or KLM context
 *
 * The entries must start at a multiple of their size and end inside the
 * translation area. Used for every context written and again by every
 * reader of the entries, which trusts nothing it reads back.
 *
 * Return: 0, or -EINVAL for any other mode or entries out of place.
 */
int vhca_mkey_xlt_check(struct vhca_dev *vdev, const struct mrc_mkey_ctx *ctx)
{
	u64 entry_size;

	switch (ctx->access_mode) {
	case MRC_ACCESS_MODE_MTT:
		entry_size = MRC_MTT_ENTRY_SIZE;
		break;
	case MRC_ACCESS_MODE_KLM:
	case MRC_ACCESS_MODE_KSM:
		entry_size = MRC_KLM_ENTRY_SIZE;
		break;
	default:
		return -EINVAL;
	}
	if (!IS_ALIGNED(ctx->xlt_offset, entry_size))
		return -EINVAL;
	return vhca_xlt_range_check(vdev, ctx->xlt_offset,
				    (u64)ctx->xlt_entries * entry_size);
}

/* A counter field: 0 (none) or a slot of the counter table. */
static bool vhca_counter_field_valid(struct vhca_dev *vdev, u32 counter)
{
	return counter < vdev->mdev.caps.max_counters || !counter;
}

/*
 * What the device refuses in a context: a slot it does not have, a key
 * whose index names another slot, an unknown state or access mode, a
 * counter it does not have, a flag it does not know or one outside the
 * modes it applies to, and translation entries misaligned or outside the
 * translation area.
 */
static int vhca_mkey_ctx_check(struct vhca_dev *vdev, u32 index,
			       const struct mrc_mkey_ctx *ctx)
{
	if (!vhca_mkey_index_valid(vdev, index) ||
	    mrc_key_index(ctx->key) != index)
		return -EINVAL;
	if (ctx->state > MRC_MKEY_VALID)
		return -EINVAL;
	if (!vhca_counter_field_valid(vdev, ctx->counter))
		return -EINVAL;
	/* Only MTT and KSM entries can be non-present. */
	if ((ctx->flags & ~MRC_MKEY_F_ALL) ||
	    ((ctx->flags & MRC_MKEY_F_ODP) &&
	     ctx->access_mode != MRC_ACCESS_MODE_MTT &&
	     ctx->access_mode != MRC_ACCESS_MODE_KSM))
		return -EINVAL;
	/* Only an indirect key's KLM entries have their rights checked. */
	if ((ctx->flags & MRC_MKEY_F_NESTED_RIGHTS) &&
	    ctx->access_mode != MRC_ACCESS_MODE_KLM)
		return -EINVAL;
	if (ctx->access_mode == MRC_ACCESS_MODE_PA)
		return 0;
	return vhca_mkey_xlt_check(vdev, ctx);
}

/* Everything in the slot but the state byte, reserved bytes zeroed. */
static void vhca_mkc_write_fields(void __iomem *slot,
				  const struct mrc_mkey_ctx *ctx)
{
	writel(ctx->key, slot + VHCA_MKC_KEY);
	writeb(ctx->access_mode, slot + VHCA_MKC_ACCESS_MODE);
	writeb(ctx->page_shift, slot + VHCA_MKC_PAGE_SHIFT);
	writeb(ctx->flags, slot + VHCA_MKC_FLAGS);
	writel(ctx->pdn, slot + VHCA_MKC_PDN);
	writel(ctx->access, slot + VHCA_MKC_ACCESS);
	writeq(ctx->iova, slot + VHCA_MKC_IOVA);
	writeq(ctx->length, slot + VHCA_MKC_LENGTH);
	writeq(ctx->xlt_offset, slot + VHCA_MKC_XLT_OFFSET);
	writel(ctx->xlt_entries, slot + VHCA_MKC_XLT_ENTRIES);
	writel(ctx->qpn, slot + VHCA_MKC_QPN);
	writel(ctx->counter, slot + VHCA_MKC_COUNTER);
	memset_io(slot + VHCA_MKC_RSVD1, 0, VHCA_MKC_SIZE - VHCA_MKC_RSVD1);
}

/*
 * Does @slot hold a context a walk may meet a page fault in: an ODP one,
 * VALID or FREE? vdev->odp_mkeys counts them.
 */
static bool vhca_mkc_odp(void __iomem *slot)
{
	return readb(slot + VHCA_MKC_STATE) != MRC_MKEY_INVALID &&
	       (readb(slot + VHCA_MKC_FLAGS) & MRC_MKEY_F_ODP);
}

/*
 * Revoke a slot that is not INVALID. A VALID slot may have walkers inside
 * it, reading its fields and entries and copying: wait for them, so none
 * mixes the old context with the new one. A FREE slot has none, as
 * walkers only stay in VALID slots.
 *
 * In a run that may not sleep (vhca_engine_nosleep(): the _nowait exec
 * calls of mrcore), walkers are not waited for: with one inside a VALID
 * slot, -EAGAIN and the slot as it was (struct mrc_hw_ops). One that
 * entered as the revocation landed finds the state back at VALID when it
 * reads it again; the context's fields were never touched.
 */
static int vhca_mkc_revoke(struct vhca_dev *vdev, u32 index)
{
	void __iomem *slot = vhca_mkc_slot(vdev, index);
	u8 state = readb(slot + VHCA_MKC_STATE);
	bool nosleep = vhca_engine_nosleep();

	if (state == MRC_MKEY_INVALID)
		return 0;
	if (state == MRC_MKEY_VALID && nosleep &&
	    atomic_read(&vdev->mkey_users[index]))
		return -EAGAIN;

	writeb(MRC_MKEY_INVALID, slot + VHCA_MKC_STATE);
	if (state != MRC_MKEY_VALID) {
		/* The revocation lands before any field of the new context. */
		wmb();
		return 0;
	}
	if (!nosleep) {
		vhca_mkey_drain(vdev, index);
		return 0;
	}
	if (vhca_mkey_drained(vdev, index))
		return 0;
	/* A walker came in as it was revoked: VALID again, nothing done. */
	writeb(MRC_MKEY_VALID, slot + VHCA_MKC_STATE);
	return -EAGAIN;
}

/*
 * Encode @ctx into slot @index so that the device never sees half a key:
 * a slot that is not INVALID is revoked first (and drained of walkers; in
 * a run that may not sleep, -EAGAIN instead while some are inside, the
 * slot as it was), then every field but the state is written, and the
 * state byte goes last, behind a write barrier. A rejected context leaves
 * the slot untouched. An ODP context is counted in vdev->odp_mkeys before it can
 * be walked, and uncounted once it cannot.
 */
static int vhca_write_mkey(struct mrc_device *mdev, u32 index,
			   const struct mrc_mkey_ctx *ctx)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);
	bool odp, was_odp;
	void __iomem *slot;
	int err;

	err = vhca_mkey_ctx_check(vdev, index, ctx);
	if (err) {
		vhca_dbg_mkey(vdev, index,
			      "rejected key 0x%08x state %u mode %u\n",
			      ctx->key, ctx->state, ctx->access_mode);
		return err;
	}

	slot = vhca_mkc_slot(vdev, index);
	was_odp = vhca_mkc_odp(slot);
	odp = ctx->state != MRC_MKEY_INVALID && (ctx->flags & MRC_MKEY_F_ODP);
	err = vhca_mkc_revoke(vdev, index);
	if (err) {
		vhca_dbg_mkey(vdev, index, "walkers inside: not now\n");
		return err;
	}
	if (odp && !was_odp) {
		atomic_inc(&vdev->odp_mkeys);
		/*
		 * Counted before the key can be walked: a post naming it
		 * comes after, and a run reads the count after the post.
		 */
		smp_mb__after_atomic();
	}
	vhca_mkc_write_fields(slot, ctx);
	/* Pairs with the rmb() in vhca_read_mkey(): fields before state. */
	wmb();
	writeb(ctx->state, slot + VHCA_MKC_STATE);
	if (was_odp && !odp)
		atomic_dec(&vdev->odp_mkeys);

	vhca_dbg_mkey(vdev, index, "key 0x%08x state %u mode %u pdn %u\n",
		      ctx->key, ctx->state, ctx->access_mode, ctx->pdn);
	return 0;
}

/*
 * Revoke slot @index: once the INVALID state is visible no walker can
 * enter the slot, and the walkers already inside it (which saw it VALID)
 * are waited for, so on return the caller may unmap and free whatever the
 * context and its translation named. Work requests that resolved the key
 * earlier and will walk it again later are the engine's to drain.
 */
static int vhca_invalidate_mkey(struct mrc_device *mdev, u32 index)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);
	void __iomem *slot;
	bool was_odp;

	if (!vhca_mkey_index_valid(vdev, index))
		return -EINVAL;

	slot = vhca_mkc_slot(vdev, index);
	was_odp = vhca_mkc_odp(slot);
	writeb(MRC_MKEY_INVALID, slot + VHCA_MKC_STATE);
	vhca_mkey_drain(vdev, index);
	if (was_odp)
		atomic_dec(&vdev->odp_mkeys);

	vhca_dbg_mkey(vdev, index, "invalidated\n");
	return 0;
}

/*
 * ODP invalidation has zapped entries of slot @index: wait for the walkers
 * inside the slot, which may have read them before the zap. The slot
 * stays VALID; walkers that enter later read the zapped entries.
 */
static void vhca_sync_mkey(struct mrc_device *mdev, u32 index)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);

	if (vhca_mkey_index_valid(vdev, index))
		vhca_mkey_drain(vdev, index);
}

/*
 * Every naturally aligned 8-byte word of the range is stored whole, as a
 * device takes a posted write of aligned quadwords: a walk running
 * beside the write sees each MTT entry, and each half of a KLM entry,
 * either old or new, never a mix (memcpy_toio() stores 4 bytes at a
 * time on x86). Entries are 8 or 16 bytes, so every write mrcore makes
 * is of whole words; another range is copied as it comes.
 */
static int vhca_write_xlt(struct mrc_device *mdev, u64 offset,
			  const void *src, size_t len)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);
	void __iomem *dst;
	size_t i;

	if (vhca_xlt_range_check(vdev, offset, len))
		return -EINVAL;

	dst = vdev->mem.xlt + offset;
	if (!IS_ALIGNED(offset | len, sizeof(u64))) {
		memcpy_toio(dst, src, len);
		return 0;
	}
	for (i = 0; i < len; i += sizeof(u64))
		__raw_writeq(get_unaligned((const u64 *)(src + i)), dst + i);
	return 0;
}

static void vhca_fence(struct mrc_device *mdev)
{
	/* Translation entries land before the context that reaches them. */
	wmb();
}

/*
 * Counters. The engine adds to the counter table from its workers, the
 * CPU reads and resets slots through the ops; every read-modify-write of
 * a slot is made under counter_lock, so increments from several QPs'
 * workers never lose one.
 *
 * An operation collects the counters of the contexts its walks pass
 * through and adds to them only once it has succeeded, after the walks
 * have left their slots, so draining a slot's walkers would not keep an
 * operation from adding to a counter just cleared from the slot. Instead
 * the engine holds vhca_counter_srcu from before its first walk until its
 * last addition (vhca_counted_begin() .. vhca_counted_end()), and
 * set_mkey_counter, having replaced a counter in a context, waits for a
 * grace period: an operation that read the old field entered its
 * read-side section before the field changed, so it has finished adding.
 */
DEFINE_STATIC_SRCU(vhca_counter_srcu);

static bool vhca_counter_index_valid(struct vhca_dev *vdev, u32 counter)
{
	return counter && counter < vdev->mdev.caps.max_counters;
}

/* Counter table slot @counter; @counter is checked. */
static void __iomem *vhca_counter_slot(struct vhca_dev *vdev, u32 counter)
{
	return vdev->mem.cnt + (size_t)counter * VHCA_COUNTER_SIZE;
}

static u64 vhca_read_counter(struct mrc_device *mdev, u32 counter)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);
	u64 val;

	if (WARN_ON_ONCE(!vhca_counter_index_valid(vdev, counter)))
		return 0;

	/* readq may be two loads (32-bit): never half of an increment. */
	spin_lock_bh(&vdev->counter_lock);
	val = readq(vhca_counter_slot(vdev, counter));
	spin_unlock_bh(&vdev->counter_lock);
	return val;
}

static void vhca_reset_counter(struct mrc_device *mdev, u32 counter)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);

	if (WARN_ON_ONCE(!vhca_counter_index_valid(vdev, counter)))
		return;

	spin_lock_bh(&vdev->counter_lock);
	writeq(0, vhca_counter_slot(vdev, counter));
	spin_unlock_bh(&vdev->counter_lock);
}

/*
 * Replace the counter field of slot @index alone: the state is left as it
 * is, so walkers keep resolving the key and I/O in flight goes on. A
 * walker reads the field once per context, so it sees the old counter or
 * the new one. When a counter was replaced, wait until no operation that
 * found it can still add to it (the comment above vhca_counter_srcu).
 */
static int vhca_set_mkey_counter(struct mrc_device *mdev, u32 index,
				 u32 counter)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);
	void __iomem *slot;
	u32 old;

	if (!vhca_mkey_index_valid(vdev, index) ||
	    !vhca_counter_field_valid(vdev, counter))
		return -EINVAL;

	slot = vhca_mkc_slot(vdev, index);
	old = readl(slot + VHCA_MKC_COUNTER);
	writel(counter, slot + VHCA_MKC_COUNTER);
	if (old && old != counter)
		synchronize_srcu(&vhca_counter_srcu);

	vhca_dbg_mkey(vdev, index, "counter %u (was %u)\n", counter, old);
	return 0;
}

const struct mrc_hw_ops vhca_hw_ops = {
	.fence = vhca_fence,
	.invalidate_mkey = vhca_invalidate_mkey,
	.read_counter = vhca_read_counter,
	.reset_counter = vhca_reset_counter,
	.set_mkey_counter = vhca_set_mkey_counter,
	.sync_mkey = vhca_sync_mkey,
	.write_mkey = vhca_write_mkey,
	.write_xlt = vhca_write_xlt,
};

/**
 * vhca_counted_begin - start an operation whose success may count
 * @cnt: the operation's collection, empty on return
 *
 * Call before the operation's first walk; the walks it passes @cnt->ids
 * to (vhca_access_counted()) add the counters of the contexts they
 * resolve. Always end with vhca_counted_end().
 *
 * Context: any context but NMI; does not sleep.
 */
void vhca_counted_begin(struct vhca_counted *cnt)
	__acquires(&vhca_counter_srcu)
{
	bitmap_zero(cnt->ids, VHCA_MAX_COUNTERS);
	cnt->srcu = srcu_read_lock(&vhca_counter_srcu);
}

/**
 * vhca_counted_end - end an operation, adding one to its counters
 * @vdev: the device whose memory the walks resolved (the responder's)
 * @cnt: from vhca_counted_begin()
 * @success: the operation succeeded: each counter collected gets one;
 *	otherwise none does
 *
 * Context: any context but NMI; does not sleep.
 */
void vhca_counted_end(struct vhca_dev *vdev, struct vhca_counted *cnt,
		      bool success)
	__releases(&vhca_counter_srcu)
{
	unsigned long bit;

	if (success && !bitmap_empty(cnt->ids, VHCA_MAX_COUNTERS)) {
		spin_lock_bh(&vdev->counter_lock);
		for_each_set_bit(bit, cnt->ids, VHCA_MAX_COUNTERS) {
			void __iomem *slot = vhca_counter_slot(vdev, bit);

			writeq(readq(slot) + 1, slot);
		}
		spin_unlock_bh(&vdev->counter_lock);
	}
	srcu_read_unlock(&vhca_counter_srcu, cnt->srcu);
}

/**
 * vhca_read_mkey - decode an mkey context slot, as the device sees it
 * @vdev: the device
 * @index: slot index
 * @out: the decoded context
 *
 * Reads the state first and the other fields after a read barrier, so a
 * state other than INVALID comes with the fields it published. Only the
 * device side (the walker, the debugfs dumps) calls this; it never
 * consults mrcore's CPU-side structures. A slot may be rewritten while it
 * is read: only a walker holding the slot (vhca_mkey_get()) is sure that
 * a VALID state came with that context's own fields.
 *
 * Context: any context.
 * Return: 0, or -EINVAL if @index is not a slot of @vdev.
 */
int vhca_read_mkey(struct vhca_dev *vdev, u32 index, struct mrc_mkey_ctx *out)
{
	void __iomem *slot;

	if (index >= vdev->mdev.caps.max_mkeys)
		return -EINVAL;

	slot = vhca_mkc_slot(vdev, index);
	out->state = readb(slot + VHCA_MKC_STATE);
	/* Pairs with the wmb() in vhca_write_mkey(): state before fields. */
	rmb();
	out->key = readl(slot + VHCA_MKC_KEY);
	out->access_mode = readb(slot + VHCA_MKC_ACCESS_MODE);
	out->page_shift = readb(slot + VHCA_MKC_PAGE_SHIFT);
	out->flags = readb(slot + VHCA_MKC_FLAGS);
	out->pdn = readl(slot + VHCA_MKC_PDN);
	out->access = readl(slot + VHCA_MKC_ACCESS);
	out->iova = readq(slot + VHCA_MKC_IOVA);
	out->length = readq(slot + VHCA_MKC_LENGTH);
	out->xlt_offset = readq(slot + VHCA_MKC_XLT_OFFSET);
	out->xlt_entries = readl(slot + VHCA_MKC_XLT_ENTRIES);
	out->qpn = readl(slot + VHCA_MKC_QPN);
	out->counter = readl(slot + VHCA_MKC_COUNTER);
	return 0;
}

/**
 * vhca_devmem_init - allocate a device's memory region
 * @vdev: the device; @vdev->mdev.caps gives the sizes
 *
 * The region is zeroed: every context slot starts INVALID, every
 * translation entry non-present and every counter 0.
 *
 * Return: 0; -EINVAL for more counters than VHCA_MAX_COUNTERS; -ENOMEM.
 */
int vhca_devmem_init(struct vhca_dev *vdev)
{
	const struct mrc_caps *caps = &vdev->mdev.caps;
	size_t mkc_size = (size_t)caps->max_mkeys * VHCA_MKC_SIZE;
	size_t cnt_size = (size_t)caps->max_counters * VHCA_COUNTER_SIZE;
	void *mem;

	BUILD_BUG_ON(VHCA_MKC_RSVD1 > VHCA_MKC_SIZE);
	BUILD_BUG_ON(VHCA_MKC_COUNTER + sizeof(u32) > VHCA_MKC_RSVD1);
	BUILD_BUG_ON(!is_power_of_2(VHCA_MKC_SIZE));
	BUILD_BUG_ON(VHCA_MAX_COUNTERS > MRC_MAX_COUNTERS);

	if (caps->max_counters > VHCA_MAX_COUNTERS)
		return -EINVAL;
	mem = vzalloc(mkc_size + caps->xlt_size + cnt_size);
	if (!mem)
		return -ENOMEM;
	spin_lock_init(&vdev->counter_lock);
	atomic_set(&vdev->odp_mkeys, 0);

	/*
	 * The one place device memory is plain memory: from here on it is
	 * __iomem and only io accessors reach it. vhca_devmem_fini() holds
	 * the only other cast, to free it.
	 */
	vdev->mem.base = (void __force __iomem *)mem;
	vdev->mem.mkc = vdev->mem.base;
	vdev->mem.xlt = vdev->mem.base + mkc_size;
	vdev->mem.cnt = vdev->mem.xlt + caps->xlt_size;
	vdev->mem.size = mkc_size + caps->xlt_size + cnt_size;
	return 0;
}

/**
 * vhca_devmem_fini - free a device's memory region
 * @vdev: the device; nothing may read or write the region any more
 */
void vhca_devmem_fini(struct vhca_dev *vdev)
{
	vfree((void __force *)vdev->mem.base);
	vdev->mem.base = NULL;
	vdev->mem.mkc = NULL;
	vdev->mem.xlt = NULL;
	vdev->mem.cnt = NULL;
}

static const char *const vhca_mkey_state_names[] = {
	[MRC_MKEY_INVALID] = "INVALID",
	[MRC_MKEY_FREE] = "FREE",
	[MRC_MKEY_VALID] = "VALID",
};

static const char *const vhca_access_mode_names[] = {
	[MRC_ACCESS_MODE_PA] = "PA",
	[MRC_ACCESS_MODE_MTT] = "MTT",
	[MRC_ACCESS_MODE_KLM] = "KLM",
	[MRC_ACCESS_MODE_KSM] = "KSM",
};

static const char *vhca_name_of(const char *const *names, size_t num, u8 v)
{
	return v < num && names[v] ? names[v] : "?";
}

/* The name of a context state, "?" for an unknown one. */
const char *vhca_mkey_state_name(u8 state)
{
	return vhca_name_of(vhca_mkey_state_names,
			    ARRAY_SIZE(vhca_mkey_state_names), state);
}

/* The name of an access mode, "?" for an unknown one. */
const char *vhca_access_mode_name(u8 mode)
{
	return vhca_name_of(vhca_access_mode_names,
			    ARRAY_SIZE(vhca_access_mode_names), mode);
}

/**
 * vhca_mkey_drain - wait for the walkers inside a revoked slot
 * @vdev: the device
 * @index: a slot whose state the caller has just set to INVALID
 *
 * Context: process context; sleeps while walkers are inside the slot.
 */
void vhca_mkey_drain(struct vhca_dev *vdev, u32 index)
{
	atomic_t *users = &vdev->mkey_users[index];

	/* Pairs with smp_mb__after_atomic() in vhca_mkey_get(). */
	smp_mb();
	/*
	 * Acquire: what the caller reads next (e.g. a buffer a walker
	 * just wrote) must not be read before the count was seen at zero.
	 */
	wait_var_event(users, !atomic_read_acquire(users));
}

/**
 * vhca_mkey_drained - vhca_mkey_drain(), for a run that may not wait
 * @vdev: the device
 * @index: a slot whose state the caller has just set to INVALID
 *
 * Context: any context; does not sleep.
 * Return: true when no walker is inside the slot: none can enter it any
 * more. False when some are: the caller may not reuse what the slot's
 * context named until a drain has waited for them.
 */
bool vhca_mkey_drained(struct vhca_dev *vdev, u32 index)
{
	/* As in vhca_mkey_drain(). */
	smp_mb();
	return !atomic_read_acquire(&vdev->mkey_users[index]);
}

/**
 * vhca_mkey_users_init - allocate the per-slot counts of walkers
 * @vdev: the device; @vdev->mdev.caps gives the slot count
 *
 * Return: 0 or -ENOMEM.
 */
int vhca_mkey_users_init(struct vhca_dev *vdev)
{
	vdev->mkey_users = kvcalloc(vdev->mdev.caps.max_mkeys,
				    sizeof(*vdev->mkey_users), GFP_KERNEL);
	return vdev->mkey_users ? 0 : -ENOMEM;
}

/**
 * vhca_mkey_users_fini - free the per-slot counts of walkers
 * @vdev: the device; every slot is INVALID and drained
 */
void vhca_mkey_users_fini(struct vhca_dev *vdev)
{
	kvfree(vdev->mkey_users);
	vdev->mkey_users = NULL;
}
