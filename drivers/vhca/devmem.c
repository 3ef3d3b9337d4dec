// SPDX-License-Identifier: GPL-2.0
/*
 * vhca device memory: the mkey context table and the translation area, and
 * the mrc_hw_ops that write them.
 *
 * The region comes from vmalloc but is typed __iomem and reached only
 * through io accessors, as the BAR of a real HCA would be, so sparse (C=2)
 * proves that nothing touches it as plain memory. Both the CPU side
 * (mrcore, through the ops below) and the device side (vhca_read_mkey(),
 * the debugfs dump, and the DMA engine to come) read and write it the same
 * way.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/vmalloc.h>

#include "vhca_loc.h"

static void __iomem *vhca_mkc_slot(struct vhca_dev *vdev, u32 index)
{
	return vdev->mem.mkc + (size_t)index * VHCA_MKC_SIZE;
}

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

/*
 * What the device refuses in a context: a slot it does not have, a key
 * whose index names another slot, an unknown state or access mode, and
 * translation entries outside the translation area.
 */
static int vhca_mkey_ctx_check(struct vhca_dev *vdev, u32 index,
			       const struct mrc_mkey_ctx *ctx)
{
	u64 entry_size;

	if (!vhca_mkey_index_valid(vdev, index) ||
	    mrc_key_index(ctx->key) != index)
		return -EINVAL;
	if (ctx->state > MRC_MKEY_VALID)
		return -EINVAL;

	switch (ctx->access_mode) {
	case MRC_ACCESS_MODE_PA:
		return 0;
	case MRC_ACCESS_MODE_MTT:
		entry_size = MRC_MTT_ENTRY_SIZE;
		break;
	case MRC_ACCESS_MODE_KLM:
		entry_size = MRC_KLM_ENTRY_SIZE;
		break;
	default:
		return -EINVAL;
	}
	return vhca_xlt_range_check(vdev, ctx->xlt_offset,
				    ctx->xlt_entries * entry_size);
}

/* Everything in the slot but the state byte, reserved bytes zeroed. */
static void vhca_mkc_write_fields(void __iomem *slot,
				  const struct mrc_mkey_ctx *ctx)
{
	writel(ctx->key, slot + VHCA_MKC_KEY);
	writeb(ctx->access_mode, slot + VHCA_MKC_ACCESS_MODE);
	writeb(ctx->page_shift, slot + VHCA_MKC_PAGE_SHIFT);
	writeb(0, slot + VHCA_MKC_RSVD0);
	writel(ctx->pdn, slot + VHCA_MKC_PDN);
	writel(ctx->access, slot + VHCA_MKC_ACCESS);
	writeq(ctx->iova, slot + VHCA_MKC_IOVA);
	writeq(ctx->length, slot + VHCA_MKC_LENGTH);
	writeq(ctx->xlt_offset, slot + VHCA_MKC_XLT_OFFSET);
	writel(ctx->xlt_entries, slot + VHCA_MKC_XLT_ENTRIES);
	memset_io(slot + VHCA_MKC_RSVD1, 0, VHCA_MKC_SIZE - VHCA_MKC_RSVD1);
}

/*
 * Encode @ctx into slot @index so that the device never sees half a key:
 * a slot that is not INVALID is revoked first, then every field but the
 * state is written, and the state byte goes last, behind a write barrier.
 * A rejected context leaves the slot untouched.
 */
static int vhca_write_mkey(struct mrc_device *mdev, u32 index,
			   const struct mrc_mkey_ctx *ctx)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);
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
	if (readb(slot + VHCA_MKC_STATE) != MRC_MKEY_INVALID) {
		writeb(MRC_MKEY_INVALID, slot + VHCA_MKC_STATE);
		/* The revocation lands before any field of the new context. */
		wmb();
	}
	vhca_mkc_write_fields(slot, ctx);
	/* Pairs with the rmb() in vhca_read_mkey(): fields before state. */
	wmb();
	writeb(ctx->state, slot + VHCA_MKC_STATE);

	vhca_dbg_mkey(vdev, index, "key 0x%08x state %u mode %u pdn %u\n",
		      ctx->key, ctx->state, ctx->access_mode, ctx->pdn);
	return 0;
}

/*
 * Revoke slot @index. Nothing in the device can use a slot yet, so once
 * the INVALID state is visible no new access can start through it.
 * When the DMA engine lands, this also waits for the engine users that
 * resolved the key before the revocation (the WRs in flight on it).
 */
static int vhca_invalidate_mkey(struct mrc_device *mdev, u32 index)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);

	if (!vhca_mkey_index_valid(vdev, index))
		return -EINVAL;

	writeb(MRC_MKEY_INVALID, vhca_mkc_slot(vdev, index) + VHCA_MKC_STATE);
	/* The revocation is visible before the caller frees the translation. */
	wmb();

	vhca_dbg_mkey(vdev, index, "invalidated\n");
	return 0;
}

static int vhca_write_xlt(struct mrc_device *mdev, u64 offset,
			  const void *src, size_t len)
{
	struct vhca_dev *vdev = mdev_to_vhca(mdev);

	if (vhca_xlt_range_check(vdev, offset, len))
		return -EINVAL;

	memcpy_toio(vdev->mem.xlt + offset, src, len);
	return 0;
}

static void vhca_fence(struct mrc_device *mdev)
{
	/* Translation entries land before the context that reaches them. */
	wmb();
}

const struct mrc_hw_ops vhca_hw_ops = {
	.fence = vhca_fence,
	.invalidate_mkey = vhca_invalidate_mkey,
	.write_mkey = vhca_write_mkey,
	.write_xlt = vhca_write_xlt,
};

/**
 * vhca_read_mkey - decode an mkey context slot, as the device sees it
 * @vdev: the device
 * @index: slot index
 * @out: the decoded context
 *
 * Reads the state first and the other fields after a read barrier, so a
 * state other than INVALID comes with the fields it published. Only the
 * device side (the debugfs dump, the DMA engine) calls this; it never
 * consults mrcore's CPU-side structures.
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
	out->pdn = readl(slot + VHCA_MKC_PDN);
	out->access = readl(slot + VHCA_MKC_ACCESS);
	out->iova = readq(slot + VHCA_MKC_IOVA);
	out->length = readq(slot + VHCA_MKC_LENGTH);
	out->xlt_offset = readq(slot + VHCA_MKC_XLT_OFFSET);
	out->xlt_entries = readl(slot + VHCA_MKC_XLT_ENTRIES);
	return 0;
}

/**
 * vhca_devmem_init - allocate a device's memory region
 * @vdev: the device; @vdev->mdev.caps gives the sizes
 *
 * The region is zeroed: every context slot starts INVALID and every
 * translation entry non-present.
 *
 * Return: 0 or -ENOMEM.
 */
int vhca_devmem_init(struct vhca_dev *vdev)
{
	const struct mrc_caps *caps = &vdev->mdev.caps;
	size_t mkc_size = (size_t)caps->max_mkeys * VHCA_MKC_SIZE;
	void *mem;

	BUILD_BUG_ON(VHCA_MKC_RSVD1 > VHCA_MKC_SIZE);
	BUILD_BUG_ON(!is_power_of_2(VHCA_MKC_SIZE));

	mem = vzalloc(mkc_size + caps->xlt_size);
	if (!mem)
		return -ENOMEM;

	/*
	 * The one place device memory is plain memory: from here on it is
	 * __iomem and only io accessors reach it. vhca_devmem_fini() holds
	 * the only other cast, to free it.
	 */
	vdev->mem.base = (void __force __iomem *)mem;
	vdev->mem.mkc = vdev->mem.base;
	vdev->mem.xlt = vdev->mem.base + mkc_size;
	vdev->mem.size = mkc_size + caps->xlt_size;
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
};

static const char *vhca_name_of(const char *const *names, size_t num, u8 v)
{
	return v < num && names[v] ? names[v] : "?";
}

/*
 * The "mkeys" file lists every slot that is not INVALID, decoded from
 * device memory. A seq_file position is a slot index; slot 0 is never
 * used, so position 0 stands for the header line.
 */
static void *vhca_mkeys_seq_find(struct seq_file *m, loff_t *pos)
{
	struct vhca_dev *vdev = m->private;

	for (; *pos < vdev->mdev.caps.max_mkeys; ++*pos) {
		void __iomem *slot = vhca_mkc_slot(vdev, *pos);

		if (readb(slot + VHCA_MKC_STATE) != MRC_MKEY_INVALID)
			return pos;
	}
	return NULL;
}

static void *vhca_mkeys_seq_start(struct seq_file *m, loff_t *pos)
{
	if (!*pos)
		return SEQ_START_TOKEN;
	return vhca_mkeys_seq_find(m, pos);
}

static void *vhca_mkeys_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return vhca_mkeys_seq_find(m, pos);
}

static void vhca_mkeys_seq_stop(struct seq_file *m, void *v)
{
}

static int vhca_mkeys_seq_show(struct seq_file *m, void *v)
{
	struct vhca_dev *vdev = m->private;
	struct mrc_mkey_ctx ctx;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "index    key        state   mode pdn      access     iova               length             xlt_offset         xlt_entries\n");
		return 0;
	}

	if (vhca_read_mkey(vdev, *(loff_t *)v, &ctx) ||
	    ctx.state == MRC_MKEY_INVALID)
		return SEQ_SKIP;

	seq_printf(m, "%-8u 0x%08x %-7s %-4s %-8u 0x%08x 0x%016llx 0x%016llx 0x%016llx %u\n",
		   (u32)*(loff_t *)v, ctx.key,
		   vhca_name_of(vhca_mkey_state_names,
				ARRAY_SIZE(vhca_mkey_state_names), ctx.state),
		   vhca_name_of(vhca_access_mode_names,
				ARRAY_SIZE(vhca_access_mode_names),
				ctx.access_mode),
		   ctx.pdn, ctx.access, ctx.iova, ctx.length, ctx.xlt_offset,
		   ctx.xlt_entries);
	return 0;
}

static const struct seq_operations vhca_mkeys_sops = {
	.start = vhca_mkeys_seq_start,
	.next = vhca_mkeys_seq_next,
	.stop = vhca_mkeys_seq_stop,
	.show = vhca_mkeys_seq_show,
};

DEFINE_SEQ_ATTRIBUTE(vhca_mkeys);

/**
 * vhca_debugfs_init - add /sys/kernel/debug/vhca/<name>/mkeys
 * @vdev: the device; its memory is allocated
 * @root: the driver's debugfs directory
 *
 * The file shows live keys, rkeys included, so only root may read it.
 * debugfs failures are not fatal: the device works without its files.
 */
void vhca_debugfs_init(struct vhca_dev *vdev, struct dentry *root)
{
	vdev->debugfs = debugfs_create_dir(vdev->name, root);
	debugfs_create_file("mkeys", 0400, vdev->debugfs, vdev,
			    &vhca_mkeys_fops);
}

/**
 * vhca_debugfs_fini - remove a device's debugfs directory
 * @vdev: the device
 *
 * Waits for open readers, so device memory may be freed afterwards.
 */
void vhca_debugfs_fini(struct vhca_dev *vdev)
{
	debugfs_remove_recursive(vdev->debugfs);
	vdev->debugfs = NULL;
}
