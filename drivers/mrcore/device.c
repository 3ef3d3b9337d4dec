// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: device registration. A backend fills in struct mrc_device and
 * calls mrc_register_device(); from then on the core owns the device's key
 * space, PD numbers and translation area until mrc_unregister_device().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "mrcore_loc.h"

/* Every callback is mandatory: the core never checks for NULL later. */
static bool mrc_ops_valid(const struct mrc_hw_ops *ops)
{
	return ops && ops->fence && ops->invalidate_mkey && ops->write_mkey &&
	       ops->write_xlt;
}

static bool mrc_caps_valid(const struct mrc_caps *caps)
{
	if (caps->max_mkeys < 2 || caps->max_mkeys > MRC_MAX_MKEYS ||
	    !is_power_of_2(caps->max_mkeys))
		return false;
	if (caps->max_pds < 2 || caps->max_pds > MRC_MAX_PDS)
		return false;
	if (!caps->xlt_size || caps->xlt_size > MRC_MAX_XLT_SIZE ||
	    !IS_ALIGNED(caps->xlt_size, MRC_XLT_SEG_SIZE))
		return false;
	/* The local DMA key and kernel MRs describe CPU pages. */
	return caps->page_size_bitmap & PAGE_SIZE;
}

/* Runs before anything is allocated, so failure needs no unwinding. */
static int mrc_validate(const struct mrc_device *mdev)
{
	if (!mdev->name)
		return -EINVAL;
	if (!mrc_ops_valid(mdev->ops)) {
		mrc_dbg(mdev, "incomplete ops table\n");
		return -EINVAL;
	}
	/* ODP zaps entries and must know when the device stopped using them. */
	if ((mdev->caps.flags & MRC_CAP_ODP) && !mdev->ops->sync_mkey) {
		mrc_dbg(mdev, "MRC_CAP_ODP without sync_mkey\n");
		return -EINVAL;
	}
	if (!mrc_caps_valid(&mdev->caps)) {
		mrc_dbg(mdev, "bad caps: mkeys %u pds %u xlt %llu pages %#lx\n",
			mdev->caps.max_mkeys, mdev->caps.max_pds,
			mdev->caps.xlt_size, mdev->caps.page_size_bitmap);
		return -EINVAL;
	}
	return 0;
}

/* Core state that needs no allocation; the backend may not have zeroed it. */
static void mrc_init_state(struct mrc_device *mdev)
{
	unsigned int type, stage;

	xa_init_flags(&mdev->mkeys, XA_FLAGS_ALLOC1);
	mdev->mkey_next = 1;
	mdev->mkey_variant = NULL;
	ida_init(&mdev->pd_ida);
	mdev->local_dma_lkey = 0;
	atomic_set(&mdev->num_pds, 0);
	atomic_set(&mdev->num_mkeys, 0);
	atomic_set(&mdev->xlt_segs_used, 0);
	atomic64_set(&mdev->stats_pd_allocs, 0);
	atomic64_set(&mdev->stats_mkey_allocs, 0);
	atomic64_set(&mdev->stats_misuse, 0);
	atomic_set(&mdev->num_mrs, 0);
	for (type = 0; type < MRC_MR_NUM_TYPES; type++)
		atomic_set(&mdev->num_mrs_type[type], 0);
	atomic64_set(&mdev->pages_pinned, 0);
	atomic64_set(&mdev->stats_mr_regs, 0);
	atomic64_set(&mdev->stats_mr_reregs, 0);
	atomic_set(&mdev->num_mws, 0);
	atomic64_set(&mdev->stats_mw_binds, 0);
	atomic64_set(&mdev->stats_fr_regs, 0);
	atomic_set(&mdev->inject, 0);
	atomic_set(&mdev->reg_pending, 0);
	for (stage = 0; stage < MRC_NUM_STAGES; stage++)
		atomic64_set(&mdev->stats_injected[stage], 0);
	memset(&mdev->odp, 0, sizeof(mdev->odp));
	memset(&mdev->dmabuf, 0, sizeof(mdev->dmabuf));
	mdev->debugfs = NULL;
}

static void mrc_destroy_state(struct mrc_device *mdev)
{
	kvfree(mdev->mkey_variant);
	mdev->mkey_variant = NULL;
	ida_destroy(&mdev->pd_ida);
	xa_destroy(&mdev->mkeys);
}

/* The "mrs_<type>" lines of the stats file. */
static const char * const mrc_mr_type_names[MRC_MR_NUM_TYPES] = {
	[MRC_MR_DMA] = "dma",
	[MRC_MR_PHYS] = "phys",
	[MRC_MR_SG] = "sg",
	[MRC_MR_USER] = "user",
	[MRC_MR_FAST_REG] = "fast_reg",
	[MRC_MR_FMR] = "fmr",
	[MRC_MR_INDIRECT] = "indirect",
	[MRC_MR_DMABUF] = "dmabuf",
};

static void mrc_stats_show_mrs(struct seq_file *s, struct mrc_device *mdev)
{
	unsigned int type;

	seq_printf(s, "mrs %d\n", atomic_read(&mdev->num_mrs));
	for (type = 0; type < MRC_MR_NUM_TYPES; type++)
		seq_printf(s, "mrs_%s %d\n", mrc_mr_type_names[type],
			   atomic_read(&mdev->num_mrs_type[type]));
	seq_printf(s, "pages_pinned %lld\n",
		   (long long)atomic64_read(&mdev->pages_pinned));
	seq_printf(s, "mr_regs %lld\n",
		   (long long)atomic64_read(&mdev->stats_mr_regs));
	seq_printf(s, "mr_reregs %lld\n",
		   (long long)atomic64_read(&mdev->stats_mr_reregs));
	seq_printf(s, "mws %d\n", atomic_read(&mdev->num_mws));
	seq_printf(s, "mw_binds %lld\n",
		   (long long)atomic64_read(&mdev->stats_mw_binds));
	seq_printf(s, "fr_regs %lld\n",
		   (long long)atomic64_read(&mdev->stats_fr_regs));
}

static int mrc_stats_show(struct seq_file *s, void *unused)
{
	struct mrc_device *mdev = s->private;

	seq_printf(s, "pds %d\n", atomic_read(&mdev->num_pds));
	seq_printf(s, "mkeys %d\n", atomic_read(&mdev->num_mkeys));
	seq_printf(s, "xlt_segs_used %d\n", atomic_read(&mdev->xlt_segs_used));
	seq_printf(s, "xlt_segs_total %lu\n", mdev->xlt.num_segs);
	seq_printf(s, "pd_allocs %lld\n",
		   (long long)atomic64_read(&mdev->stats_pd_allocs));
	seq_printf(s, "mkey_allocs %lld\n",
		   (long long)atomic64_read(&mdev->stats_mkey_allocs));
	seq_printf(s, "misuse %lld\n",
		   (long long)atomic64_read(&mdev->stats_misuse));
	mrc_stats_show_mrs(s, mdev);
	seq_printf(s, "injected %llu\n", mrc_inject_total(mdev));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mrc_stats);

/* The "odp" file: the on-demand paging counters and fault histogram. */
static int mrc_odp_stats_show(struct seq_file *s, void *unused)
{
	struct mrc_device *mdev = s->private;
	struct mrc_odp_dev_stats *st = &mdev->odp;
	unsigned int i;

	seq_printf(s, "faults %lld\n", (long long)atomic64_read(&st->faults));
	seq_printf(s, "fault_errors %lld\n",
		   (long long)atomic64_read(&st->fault_errors));
	seq_printf(s, "fault_pages %lld\n",
		   (long long)atomic64_read(&st->fault_pages));
	seq_printf(s, "invalidations %lld\n",
		   (long long)atomic64_read(&st->invalidations));
	seq_printf(s, "invalidated_pages %lld\n",
		   (long long)atomic64_read(&st->invalidated_pages));
	seq_printf(s, "prefetches %lld\n",
		   (long long)atomic64_read(&st->prefetches));
	seq_printf(s, "prefetched_pages %lld\n",
		   (long long)atomic64_read(&st->prefetched_pages));
	seq_printf(s, "children_created %lld\n",
		   (long long)atomic64_read(&st->children_created));
	seq_printf(s, "children_reclaimed %lld\n",
		   (long long)atomic64_read(&st->children_reclaimed));
	for (i = 0; i < MRC_ODP_HIST_BUCKETS; i++)
		seq_printf(s, "fault_us_%u %lld\n", 1U << i,
			   (long long)atomic64_read(&st->fault_ns_hist[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mrc_odp_stats);

/* The "dmabuf" file: the counters of the device's dma-buf MRs. */
static int mrc_dmabuf_stats_show(struct seq_file *s, void *unused)
{
	struct mrc_device *mdev = s->private;
	const struct mrc_dmabuf_dev_stats *st = &mdev->dmabuf;

	seq_printf(s, "regs_movable %lld\n",
		   (long long)atomic64_read(&st->regs_movable));
	seq_printf(s, "regs_pinned %lld\n",
		   (long long)atomic64_read(&st->regs_pinned));
	seq_printf(s, "moves %lld\n", (long long)atomic64_read(&st->moves));
	seq_printf(s, "faults %lld\n", (long long)atomic64_read(&st->faults));
	seq_printf(s, "fault_errors %lld\n",
		   (long long)atomic64_read(&st->fault_errors));
	seq_printf(s, "remaps %lld\n", (long long)atomic64_read(&st->remaps));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mrc_dmabuf_stats);

/* debugfs failures are not fatal: the device works without its files. */
static void mrc_debugfs_add(struct mrc_device *mdev)
{
	mdev->debugfs = debugfs_create_dir(mdev->name, mrc_debugfs_root);
	debugfs_create_file("stats", 0444, mdev->debugfs, mdev,
			    &mrc_stats_fops);
	if (mdev->caps.flags & MRC_CAP_ODP)
		debugfs_create_file("odp", 0444, mdev->debugfs, mdev,
				    &mrc_odp_stats_fops);
	debugfs_create_file("dmabuf", 0444, mdev->debugfs, mdev,
			    &mrc_dmabuf_stats_fops);
	mrc_inject_debugfs_add(mdev);
}

/*
 * Waits for open users of "stats" and "fail_stage", so @mdev may be freed
 * afterwards.
 */
static void mrc_debugfs_remove(struct mrc_device *mdev)
{
	debugfs_remove(mdev->debugfs);
	mdev->debugfs = NULL;
}

/*
 * The local DMA key lets a kernel caller name any DMA address of the device
 * for local writes in any PD: a PA-mode context covering every address.
 */
static int mrc_local_dma_key_init(struct mrc_device *mdev)
{
	struct mrc_mkey_ctx ctx = {
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_PA,
		.pdn = MRC_PDN_ANY,
		.access = MRC_ACCESS_LOCAL_WRITE,
		.iova = 0,
		.length = U64_MAX,
	};
	u32 key;
	int ret;

	ret = mrc_mkey_alloc(mdev, NULL, &key);
	if (ret)
		return ret;

	ctx.key = key;
	/* A failed write leaves the slot as it was: nothing to invalidate. */
	ret = mdev->ops->write_mkey(mdev, mrc_key_index(key), &ctx);
	if (ret)
		goto out_free_key;

	mdev->local_dma_lkey = key;
	return 0;

out_free_key:
	mrc_mkey_free(mdev, key);
	return ret;
}

static void mrc_local_dma_key_fini(struct mrc_device *mdev)
{
	u32 key = mdev->local_dma_lkey;
	int ret;

	ret = mdev->ops->invalidate_mkey(mdev, mrc_key_index(key));
	if (ret)
		pr_warn("%s: invalidating the local DMA key failed: %d\n",
			mdev->name, ret);
	mrc_mkey_free(mdev, key);
	mdev->local_dma_lkey = 0;
}

/**
 * mrc_register_device - hand a backend's device to the core
 * @mdev: device with @name, @ops and @caps filled in; @dma_dev and @priv
 *	are the backend's and left alone
 *
 * Checks the ops table and caps before allocating anything, sets up the
 * key space, PD numbers and translation-area allocator, writes the local
 * DMA key's context through @ops->write_mkey and adds
 * /sys/kernel/debug/mrcore/<name>/stats and fail_stage. On failure
 * nothing is left allocated and no context is left written.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL for a missing name or callback or an invalid cap;
 * -ENOMEM; or the error of @ops->write_mkey.
 */
int mrc_register_device(struct mrc_device *mdev)
{
	int ret;

	ret = mrc_validate(mdev);
	if (ret)
		return ret;

	mrc_init_state(mdev);
	mdev->mkey_variant = kvcalloc(mdev->caps.max_mkeys,
				      sizeof(*mdev->mkey_variant), GFP_KERNEL);
	if (!mdev->mkey_variant) {
		ret = -ENOMEM;
		goto out_destroy_state;
	}

	ret = mrc_xlt_init(mdev);
	if (ret)
		goto out_destroy_state;

	ret = mrc_local_dma_key_init(mdev);
	if (ret)
		goto out_fini_xlt;

	mrc_debugfs_add(mdev);
	mrc_dbg(mdev, "registered, local DMA key %#x\n", mdev->local_dma_lkey);
	return 0;

out_fini_xlt:
	mrc_xlt_fini(mdev);
out_destroy_state:
	mrc_destroy_state(mdev);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_register_device);

/**
 * mrc_unregister_device - take a device away from the core
 * @mdev: a device registered with mrc_register_device()
 *
 * Waits for asynchronous registrations still pending (their PDs should
 * have been released, which waits for them already), removes the debugfs
 * files, invalidates and frees the local DMA key and frees the core's
 * state. The caller must have released every PD, key and
 * piece of translation area first and must ensure no lookup runs any more;
 * a leak is reported once with a warning and the memory is freed anyway.
 *
 * Context: process context; may sleep.
 */
void mrc_unregister_device(struct mrc_device *mdev)
{
	/* Requests of mrc_reg_mr_async() use @mdev until their completion. */
	mrc_reg_async_flush_dev(mdev);
	mrc_debugfs_remove(mdev);
	mrc_local_dma_key_fini(mdev);

	WARN_ONCE(atomic_read(&mdev->num_pds) ||
		  atomic_read(&mdev->num_mkeys) ||
		  atomic_read(&mdev->xlt_segs_used),
		  "%s: unregistered with %d PDs, %d keys, %d xlt segments in use\n",
		  mdev->name, atomic_read(&mdev->num_pds),
		  atomic_read(&mdev->num_mkeys),
		  atomic_read(&mdev->xlt_segs_used));

	mrc_xlt_fini(mdev);
	mrc_destroy_state(mdev);
	mrc_dbg(mdev, "unregistered\n");
}
EXPORT_SYMBOL_GPL(mrc_unregister_device);
