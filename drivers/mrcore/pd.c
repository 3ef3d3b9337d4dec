// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: protection domains. A PD is only a number here: the device
 * compares it with the PD of every context an access goes through.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/idr.h>

#include "mrcore_loc.h"

/**
 * mrc_pd_init - give a PD a PD number
 * @mdev: registered device
 * @pd: caller's PD; @pd->mdev and @pd->pdn are set on success
 *
 * PD numbers are taken from [1, caps.max_pds - 1]; 0 is MRC_PDN_ANY.
 *
 * Context: process context; may sleep.
 * Return: 0, or -ENOMEM when max_pds - 1 PDs are already live or memory
 * ran out.
 */
int mrc_pd_init(struct mrc_device *mdev, struct mrc_pd *pd)
{
	int pdn;
	int ret;

	if (atomic_inc_return(&mdev->num_pds) > mdev->caps.max_pds - 1) {
		ret = -ENOMEM;
		goto out_dec_pds;
	}

	pdn = ida_alloc_range(&mdev->pd_ida, 1, mdev->caps.max_pds - 1,
			      GFP_KERNEL);
	if (pdn < 0) {
		/* Exhaustion reads as -ENOMEM, as for the cap check above. */
		ret = pdn == -ENOSPC ? -ENOMEM : pdn;
		goto out_dec_pds;
	}

	pd->mdev = mdev;
	pd->pdn = pdn;
	atomic_set(&pd->reg_pending, 0);
	atomic64_inc(&mdev->stats_pd_allocs);
	mrc_dbg(mdev, "PD %u allocated\n", pd->pdn);
	return 0;

out_dec_pds:
	atomic_dec(&mdev->num_pds);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_pd_init);

/**
 * mrc_pd_fini - release a PD's number
 * @pd: a PD set up by mrc_pd_init()
 *
 * The caller must already have freed every key whose context names @pd.
 * A PD without a valid number (e.g. released twice) is counted in
 * stats_misuse, logged on one line and ignored. Asynchronous
 * registrations of @pd still pending (mrc_reg_mr_async()) are waited for
 * first: their completions run, and must free what they register.
 *
 * Context: any context without pending asynchronous registrations of
 * @pd; with some, process context (it sleeps until they complete).
 */
void mrc_pd_fini(struct mrc_pd *pd)
{
	struct mrc_device *mdev = pd->mdev;

	if (mrc_misuse(mdev, !pd->pdn || pd->pdn >= mdev->caps.max_pds))
		return;
	/* Requests of mrc_reg_mr_async() use @pd until their completion. */
	mrc_reg_async_flush(pd);

	mrc_dbg(mdev, "PD %u released\n", pd->pdn);
	ida_free(&mdev->pd_ida, pd->pdn);
	pd->pdn = 0;
	atomic_dec(&mdev->num_pds);
}
EXPORT_SYMBOL_GPL(mrc_pd_fini);
