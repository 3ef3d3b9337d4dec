// SPDX-License-Identifier: GPL-2.0
/*
 * vhca debugfs: /sys/kernel/debug/vhca/<name>/{mkeys,xlt}, decoded from
 * device memory with the device's own accessors, never from mrcore's
 * CPU-side objects, so they show what the device would act on; and
 * "engine", the time the DMA engine has been busy.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/minmax.h>
#include <linux/seq_file.h>

#include "vhca_loc.h"

/* Entries the "xlt" file decodes per key; the rest are only counted. */
#define VHCA_XLT_DUMP_MAX	16

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
		seq_puts(m, "index    key        state   mode pdn      access     iova               length             xlt_offset         xlt_entries qpn\n");
		return 0;
	}

	if (vhca_read_mkey(vdev, *(loff_t *)v, &ctx) ||
	    ctx.state == MRC_MKEY_INVALID)
		return SEQ_SKIP;

	seq_printf(m, "%-8u 0x%08x %-7s %-4s %-8u 0x%08x 0x%016llx 0x%016llx 0x%016llx %-11u %u\n",
		   (u32)*(loff_t *)v, ctx.key,
		   vhca_mkey_state_name(ctx.state),
		   vhca_access_mode_name(ctx.access_mode),
		   ctx.pdn, ctx.access, ctx.iova, ctx.length, ctx.xlt_offset,
		   ctx.xlt_entries, ctx.qpn);
	return 0;
}

static const struct seq_operations vhca_mkeys_sops = {
	.start = vhca_mkeys_seq_start,
	.next = vhca_mkeys_seq_next,
	.stop = vhca_mkeys_seq_stop,
	.show = vhca_mkeys_seq_show,
};

DEFINE_SEQ_ATTRIBUTE(vhca_mkeys);

/*
 * The "xlt" file: for every VALID MTT or KLM context, a line naming the
 * key, then its first VHCA_XLT_DUMP_MAX entries, then how many were not
 * shown. A seq_file position is a slot index (slot 0 is never used).
 */
static void *vhca_xlt_seq_find(struct seq_file *m, loff_t *pos)
{
	struct vhca_dev *vdev = m->private;

	for (*pos = max_t(loff_t, *pos, 1); *pos < vdev->mdev.caps.max_mkeys;
	     ++*pos) {
		void __iomem *slot = vhca_mkc_slot(vdev, *pos);

		if (readb(slot + VHCA_MKC_STATE) == MRC_MKEY_VALID &&
		    readb(slot + VHCA_MKC_ACCESS_MODE) != MRC_ACCESS_MODE_PA)
			return pos;
	}
	return NULL;
}

static void *vhca_xlt_seq_start(struct seq_file *m, loff_t *pos)
{
	return vhca_xlt_seq_find(m, pos);
}

static void *vhca_xlt_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return vhca_xlt_seq_find(m, pos);
}

static void vhca_xlt_seq_stop(struct seq_file *m, void *v)
{
}

static void vhca_xlt_show_mtt(struct seq_file *m, void __iomem *entry, u32 i)
{
	u64 mtt = readq(entry);

	seq_printf(m, "  [%u] addr 0x%016llx %c%c\n", i,
		   mtt & MRC_MTT_ADDR_MASK, mtt & MRC_MTT_READ ? 'R' : '-',
		   mtt & MRC_MTT_WRITE ? 'W' : '-');
}

static void vhca_xlt_show_klm(struct seq_file *m, void __iomem *entry, u32 i)
{
	seq_printf(m, "  [%u] bcount %u key 0x%08x addr 0x%016llx\n", i,
		   readl(entry + offsetof(struct mrc_klm, bcount)),
		   readl(entry + offsetof(struct mrc_klm, key)),
		   readq(entry + offsetof(struct mrc_klm, addr)));
}

/* The entries of a held context, which lie in the area (checked). */
static void vhca_xlt_show_entries(struct seq_file *m, struct vhca_dev *vdev,
				  const struct mrc_mkey_ctx *ctx)
{
	bool mtt = ctx->access_mode == MRC_ACCESS_MODE_MTT;
	u64 size = mtt ? MRC_MTT_ENTRY_SIZE : MRC_KLM_ENTRY_SIZE;
	u32 shown = min_t(u32, ctx->xlt_entries, VHCA_XLT_DUMP_MAX);
	void __iomem *entry = vdev->mem.xlt + ctx->xlt_offset;
	u32 i;

	for (i = 0; i < shown; i++, entry += size) {
		if (mtt)
			vhca_xlt_show_mtt(m, entry, i);
		else
			vhca_xlt_show_klm(m, entry, i);
	}
	if (shown < ctx->xlt_entries)
		seq_printf(m, "  ... %u more not shown (first %u of %u)\n",
			   ctx->xlt_entries - shown, shown, ctx->xlt_entries);
}

/*
 * The slot is held while it is decoded, so its context and entries are
 * one registration's, not a mix across a concurrent rereg.
 */
static int vhca_xlt_seq_show(struct seq_file *m, void *v)
{
	struct vhca_dev *vdev = m->private;
	u32 index = *(loff_t *)v;
	struct mrc_mkey_ctx ctx;
	u32 key;

	key = readl(vhca_mkc_slot(vdev, index) + VHCA_MKC_KEY);
	if (vhca_mkey_get(vdev, key, &ctx))
		return SEQ_SKIP;

	seq_printf(m, "key 0x%08x index %u mode %s page_shift %u entries %u xlt_offset 0x%016llx\n",
		   key, index, vhca_access_mode_name(ctx.access_mode),
		   ctx.page_shift, ctx.xlt_entries, ctx.xlt_offset);
	if (vhca_mkey_xlt_check(vdev, &ctx))
		seq_puts(m, "  entries lie outside the translation area\n");
	else
		vhca_xlt_show_entries(m, vdev, &ctx);

	vhca_mkey_put(vdev, key);
	return 0;
}

static const struct seq_operations vhca_xlt_sops = {
	.start = vhca_xlt_seq_start,
	.next = vhca_xlt_seq_next,
	.stop = vhca_xlt_seq_stop,
	.show = vhca_xlt_seq_show,
};

DEFINE_SEQ_ATTRIBUTE(vhca_xlt);

/*
 * The "engine" file: nanoseconds the engine has spent running send queues
 * since the device was created, the linger polls left out (two reads
 * around a workload give the engine's share of the CPUs); the WQEs
 * completed by runs in a poster's call and by the workers; the ODP mkey
 * contexts live, which keep a kernel post_send from running SENDs.
 */
static int vhca_engine_show(struct seq_file *m, void *unused)
{
	struct vhca_dev *vdev = m->private;

	seq_printf(m, "busy_ns %lld\n",
		   (long long)atomic64_read(&vdev->engine_busy_ns));
	seq_printf(m, "inline_wqes %lld\n",
		   (long long)atomic64_read(&vdev->engine_inline_wqes));
	seq_printf(m, "worker_wqes %lld\n",
		   (long long)atomic64_read(&vdev->engine_worker_wqes));
	seq_printf(m, "odp_mkeys %d\n", atomic_read(&vdev->odp_mkeys));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vhca_engine);

/*
 * The "odp" file: the engine's page faults (struct vhca_odp_stats) and
 * their fault-to-resume histogram, bucket "resume_us_<n>" counting
 * [n, 2n) microseconds (the first [0, 2), the last everything above).
 */
static int vhca_odp_show(struct seq_file *m, void *unused)
{
	struct vhca_dev *vdev = m->private;
	unsigned int i;

	seq_printf(m, "faults %lld\n",
		   (long long)atomic64_read(&vdev->odp.faults));
	seq_printf(m, "fault_errors %lld\n",
		   (long long)atomic64_read(&vdev->odp.fault_errors));
	seq_printf(m, "sync_faults %lld\n",
		   (long long)atomic64_read(&vdev->odp.sync_faults));
	for (i = 0; i < VHCA_ODP_HIST_BUCKETS; i++)
		seq_printf(m, "resume_us_%u %lld\n", 1U << i,
			   (long long)atomic64_read(&vdev->odp.resume_hist[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vhca_odp);

/**
 * vhca_debugfs_init - add /sys/kernel/debug/vhca/<name>/{mkeys,xlt,engine,odp}
 * @vdev: the device; its memory is allocated
 * @root: the driver's debugfs directory
 *
 * The files show live keys, rkeys included, and DMA addresses, so only
 * root may read them. debugfs failures are not fatal: the device works
 * without its files.
 */
void vhca_debugfs_init(struct vhca_dev *vdev, struct dentry *root)
{
	vdev->debugfs = debugfs_create_dir(vdev->name, root);
	debugfs_create_file("mkeys", 0400, vdev->debugfs, vdev,
			    &vhca_mkeys_fops);
	debugfs_create_file("xlt", 0400, vdev->debugfs, vdev,
			    &vhca_xlt_fops);
	debugfs_create_file("engine", 0400, vdev->debugfs, vdev,
			    &vhca_engine_fops);
	debugfs_create_file("odp", 0400, vdev->debugfs, vdev, &vhca_odp_fops);
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
