// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: the device a context is bound to.
 *
 * MRCT_SET_DEVICE binds an open file's context to an RDMA device by name:
 * a reference on the device and MRCT_NUM_PDS PDs on it. vhca devices are
 * told apart from the others (rxe, for the benchmark), which are good for
 * registration and the QP pairs only.
 *
 * An ib_client tracks device removal: when a bound device goes away, every
 * context on it destroys its QP pairs, lets each feature file free what it
 * made, deregisters its MRs, frees its PDs and drops its reference, so
 * "rdma link del" never waits for a test to close its file (at most for
 * one completion wait, which asks mrct_dev_removing() and stops). Closing
 * the file unbinds the same way.
 *
 * In reading order: the list of contexts and the feature files' hooks,
 * the ib_client (add, unbind, remove), binding, then the calls the other
 * files make: the context's life on the list, the removal check, and the
 * client's registration.
 */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/* Taken before any context's lock. */
static DEFINE_MUTEX(mrct_lock);	/* protects mrct_ctxs, our client data */
static LIST_HEAD(mrct_ctxs);

static struct ib_client mrct_client;

/* Read by the main ioctl too, for the commands it does not know. */
const struct mrct_ext *const mrct_exts[MRCT_NUM_EXTS] = {
	[MRCT_EXT_COUNTER] = &mrct_counter_ext,
	[MRCT_EXT_FRWR] = &mrct_frwr_ext,
	[MRCT_EXT_FMR] = &mrct_fmr_ext,
	[MRCT_EXT_MW] = &mrct_mw_ext,
	[MRCT_EXT_KEYS] = &mrct_keys_ext,
	[MRCT_EXT_ODP] = &mrct_odp_ext,
	[MRCT_EXT_DMABUF] = &mrct_dmabuf_ext,
};

/*
 * vhca registers its ib_device on a platform device of its own name. The
 * vhca_*() calls are made only on such a device; any other one (rxe, for
 * the benchmark) is good for registration only.
 */
static bool mrct_is_vhca(struct ib_device *ibdev)
{
	struct device *dma = ibdev->dma_device;

	return dma && dev_is_platform(dma) &&
	       !strcmp(to_platform_device(dma)->name, "vhca");
}

/*
 * Our client data on a device is the device itself while it may be bound
 * and NULL once its removal has begun.
 */
static int mrct_add_one(struct ib_device *ibdev)
{
	ib_set_client_data(ibdev, &mrct_client, ibdev);
	return 0;
}

/* Destroy the pairs, deregister everything and let go of the device. */
static void mrct_unbind(struct mrct_ctx *ctx)
{
	struct mrct_pair *pair;
	unsigned long handle;
	struct ib_mr *mr;
	int i, err;

	lockdep_assert_held(&ctx->lock);
	/* QPs first: they hold their PD, and WRs may name the MRs. */
	xa_for_each(&ctx->pairs, handle, pair) {
		xa_erase(&ctx->pairs, handle);
		mrct_pair_free(ctx, pair);
	}
	ctx->nr_pairs = 0;
	/*
	 * The feature files' objects name MRs and PDs; in reverse order, so
	 * windows (bound to FRWR MRs too) go before the MRs they hold.
	 */
	for (i = MRCT_NUM_EXTS - 1; i >= 0; i--)
		mrct_exts[i]->unbind(ctx);
	xa_for_each(&ctx->mrs, handle, mr) {
		err = ib_dereg_mr(mr);
		if (err)
			ibdev_warn(ctx->ibdev, "MR handle %lu: dereg failed: %d\n",
				   handle, err);
		xa_erase(&ctx->mrs, handle);
	}
	ctx->nr_mrs = 0;
	for (i = 0; i < MRCT_NUM_PDS; i++) {
		if (ctx->pd[i])
			ib_dealloc_pd(ctx->pd[i]);
		ctx->pd[i] = NULL;
	}
	ib_device_put(ctx->ibdev);
	ctx->ibdev = NULL;
	ctx->is_vhca = false;
}

static void mrct_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct mrct_ctx *ctx;

	mutex_lock(&mrct_lock);
	ib_set_client_data(ibdev, &mrct_client, NULL);
	list_for_each_entry(ctx, &mrct_ctxs, node) {
		mutex_lock(&ctx->lock);
		if (ctx->ibdev == ibdev)
			mrct_unbind(ctx);
		mutex_unlock(&ctx->lock);
	}
	mutex_unlock(&mrct_lock);
}

static struct ib_client mrct_client = {
	.name = "mrcore_test",
	.add = mrct_add_one,
	.remove = mrct_remove_one,
	.no_kverbs_req = 1,
};

static int mrct_bind(struct mrct_ctx *ctx, struct ib_device *ibdev)
{
	struct ib_pd *pd;
	int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < MRCT_NUM_PDS; i++) {
		pd = ib_alloc_pd(ibdev, 0);
		if (IS_ERR(pd))
			goto out_dealloc_pds;
		ctx->pd[i] = pd;
	}
	ctx->ibdev = ibdev;
	ctx->is_vhca = mrct_is_vhca(ibdev);
	return 0;

out_dealloc_pds:
	while (i--) {
		ib_dealloc_pd(ctx->pd[i]);
		ctx->pd[i] = NULL;
	}
	return PTR_ERR(pd);
}

/**
 * mrct_set_device - MRCT_SET_DEVICE
 * @ctx: the file's context
 * @uarg: struct mrct_set_device
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_set_device(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_set_device req;
	struct ib_device *ibdev;
	int err;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (strnlen(req.name, sizeof(req.name)) == sizeof(req.name))
		return -EINVAL;

	ibdev = ib_device_get_by_name(req.name, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return -ENODEV;

	mutex_lock(&mrct_lock);
	mutex_lock(&ctx->lock);
	if (ctx->ibdev)
		err = -EBUSY;
	else if (ib_get_client_data(ibdev, &mrct_client) != ibdev)
		err = -ENODEV;	/* being removed: we would never be told */
	else
		err = mrct_bind(ctx, ibdev);
	mutex_unlock(&ctx->lock);
	mutex_unlock(&mrct_lock);
	if (err)
		ib_device_put(ibdev);
	return err;
}

/**
 * mrct_dev_ctx_add - let device removal find a new context
 * @ctx: the context of a file being opened, initialised and not bound
 */
void mrct_dev_ctx_add(struct mrct_ctx *ctx)
{
	mutex_lock(&mrct_lock);
	list_add(&ctx->node, &mrct_ctxs);
	mutex_unlock(&mrct_lock);
}

/**
 * mrct_dev_ctx_del - take a closing context off the list and unbind it
 * @ctx: the context of a file being released
 *
 * On return nothing of @ctx is left on a device, and device removal no
 * longer sees it.
 */
void mrct_dev_ctx_del(struct mrct_ctx *ctx)
{
	/* Off the list first: device removal no longer sees the context. */
	mutex_lock(&mrct_lock);
	list_del(&ctx->node);
	mutex_unlock(&mrct_lock);

	mutex_lock(&ctx->lock);
	if (ctx->ibdev)
		mrct_unbind(ctx);
	mutex_unlock(&ctx->lock);
}

/**
 * mrct_dev_removing - whether the removal of @ctx's device has begun
 * @ctx: the context, bound and locked
 *
 * A wait under @ctx->lock asks this to end early: the removal waits for
 * the lock to unbind the context.
 *
 * Return: true once the device's removal has begun.
 */
bool mrct_dev_removing(struct mrct_ctx *ctx)
{
	return ib_get_client_data(ctx->ibdev, &mrct_client) != ctx->ibdev;
}

/**
 * mrct_dev_init - start tracking RDMA devices
 *
 * Return: 0 or the error of ib_register_client().
 */
int mrct_dev_init(void)
{
	return ib_register_client(&mrct_client);
}

/**
 * mrct_dev_exit - stop tracking RDMA devices
 */
void mrct_dev_exit(void)
{
	ib_unregister_client(&mrct_client);
}
