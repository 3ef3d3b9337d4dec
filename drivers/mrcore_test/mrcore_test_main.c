// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: a test device for user memory regions on vhca, in the
 * pattern of lib/test_hmm.c.
 *
 * /dev/mrcore_test lets a test program register its own memory on a vhca
 * device through ib_reg_user_mr(), then have the *device* read or write
 * that memory through a key, and drive the data path through loopback RC
 * pairs with standard kernel verbs. The private UAPI is in
 * mrcore_test_uapi.h. Registration, rereg, dereg and the pairs work on
 * any RDMA device (vhca and rxe run the same cases); what needs the vhca
 * device itself is -EOPNOTSUPP, or reported as zero, on the others.
 *
 * Each open file has a context (struct mrct_ctx). This file is the module
 * and the character device: it creates and frees contexts and hands each
 * ioctl to the file that serves it:
 *
 *   mrcore_test_dev.c    binding a context to a device; device removal
 *   mrcore_test_mr.c     user MRs, and device reads and writes by key
 *   mrcore_test_qp.c     loopback RC pairs: build, destroy, wait
 *   mrcore_test_post.c   one send or receive WR on a pair
 *   mrcore_test_bench.c  the memcpy and RDMA WRITE benchmarks
 *   mrcore_test_stamp.c  WRITEs in flight through a rereg or dereg
 *   mrcore_test_kmemleak.c  leaks planted for kmemleak (debugfs)
 *
 * and every command none of those knows to the feature files (FRWR, FMR,
 * windows, counters, key states, ODP, dma-buf), through their struct
 * mrct_ext hooks.
 */
#include <linux/array_size.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/mrcore.h>

#include "mrcore_test.h"

/**
 * struct mrct_cmd - an ioctl of the main UAPI and the call that serves it
 * @cmd: the MRCT_* number, matched whole (size and direction too)
 * @fn: its handler; it copies the argument in and out and takes the
 *	context's lock itself
 */
struct mrct_cmd {
	unsigned int cmd;
	int (*fn)(struct mrct_ctx *ctx, void __user *uarg);
};

static const struct mrct_cmd mrct_cmds[] = {
	/* mrcore_test_dev.c */
	{ MRCT_SET_DEVICE,	mrct_set_device },
	/* mrcore_test_mr.c */
	{ MRCT_REG,		mrct_reg },
	{ MRCT_DEV_READ,	mrct_xfer_read },
	{ MRCT_DEV_WRITE,	mrct_xfer_write },
	{ MRCT_REREG,		mrct_rereg },
	{ MRCT_DEREG,		mrct_dereg },
	{ MRCT_COUNTERS,	mrct_counters },
	/* mrcore_test_qp.c, mrcore_test_post.c */
	{ MRCT_QP_CREATE,	mrct_qp_create },
	{ MRCT_QP_DESTROY,	mrct_qp_destroy },
	{ MRCT_QP_POST,		mrct_qp_post },
	{ MRCT_QP_POST_RECV,	mrct_qp_post_recv },
	/* mrcore_test_bench.c */
	{ MRCT_BENCH_MEMCPY,	mrct_bench_memcpy },
	{ MRCT_BENCH_WRITE,	mrct_bench_write },
	/* mrcore_test_stamp.c */
	{ MRCT_STAMP_WRITES,	mrct_stamp_writes },
	{ MRCT_QP_WAIT_RECV,	mrct_qp_wait_recv },
};

/* A command of the table, else each feature file's in turn, else -ENOTTY. */
static long mrct_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct mrct_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;
	unsigned int i;
	long ret;

	for (i = 0; i < ARRAY_SIZE(mrct_cmds); i++)
		if (mrct_cmds[i].cmd == cmd)
			return mrct_cmds[i].fn(ctx, uarg);

	for (i = 0; i < MRCT_NUM_EXTS; i++) {
		ret = mrct_exts[i]->ioctl(ctx, cmd, uarg);
		if (ret != -ENOTTY)
			return ret;
	}
	return -ENOTTY;
}

static int mrct_open(struct inode *inode, struct file *filp)
{
	struct mrct_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->mrs, XA_FLAGS_ALLOC);
	xa_init_flags(&ctx->pairs, XA_FLAGS_ALLOC);

	mrct_dev_ctx_add(ctx);
	filp->private_data = ctx;
	return 0;
}

static int mrct_release(struct inode *inode, struct file *filp)
{
	struct mrct_ctx *ctx = filp->private_data;

	mrct_dev_ctx_del(ctx);
	xa_destroy(&ctx->mrs);
	xa_destroy(&ctx->pairs);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	return 0;
}

static const struct file_operations mrct_fops = {
	.owner = THIS_MODULE,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
	.open = mrct_open,
	.release = mrct_release,
	.unlocked_ioctl = mrct_ioctl,
};

static struct miscdevice mrct_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = MRCT_DEV_NAME,
	.fops = &mrct_fops,
	.mode = 0600,
};

/* The UAPI spells ib_core's and mrcore's values; keep them equal. */
static void mrct_check_uapi(void)
{
	BUILD_BUG_ON(MRCT_NAME_MAX != IB_DEVICE_NAME_MAX);
	BUILD_BUG_ON(MRCT_ACCESS_LOCAL_WRITE != IB_ACCESS_LOCAL_WRITE);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_WRITE != IB_ACCESS_REMOTE_WRITE);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_READ != IB_ACCESS_REMOTE_READ);
	BUILD_BUG_ON(MRCT_ACCESS_REMOTE_ATOMIC != IB_ACCESS_REMOTE_ATOMIC);
	BUILD_BUG_ON(MRCT_ACCESS_MW_BIND != IB_ACCESS_MW_BIND);
	BUILD_BUG_ON(MRCT_ACCESS_ZERO_BASED != IB_ZERO_BASED);
	BUILD_BUG_ON(MRCT_ACCESS_ON_DEMAND != IB_ACCESS_ON_DEMAND);
	BUILD_BUG_ON(MRCT_ACCESS_HUGETLB != IB_ACCESS_HUGETLB);
	BUILD_BUG_ON(MRCT_ACCESS_RELAXED_ORDERING !=
		     IB_ACCESS_RELAXED_ORDERING);
	BUILD_BUG_ON(MRCT_REREG_TRANS != IB_MR_REREG_TRANS);
	BUILD_BUG_ON(MRCT_REREG_PD != IB_MR_REREG_PD);
	BUILD_BUG_ON(MRCT_REREG_ACCESS != IB_MR_REREG_ACCESS);
	BUILD_BUG_ON(MRCT_MODE_PA != MRC_ACCESS_MODE_PA);
	BUILD_BUG_ON(MRCT_MODE_MTT != MRC_ACCESS_MODE_MTT);
	BUILD_BUG_ON(MRCT_MODE_KLM != MRC_ACCESS_MODE_KLM);
	BUILD_BUG_ON(MRCT_MODE_KSM != MRC_ACCESS_MODE_KSM);
	BUILD_BUG_ON(sizeof(struct mrct_mr_info) != 16);
	BUILD_BUG_ON(sizeof(struct mrct_reg) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_xfer) != 40);
	BUILD_BUG_ON(sizeof(struct mrct_rereg) != 56);
	BUILD_BUG_ON(sizeof(struct mrct_dereg) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_counters) != 16);
}

/* The data-path UAPI spells ib_verbs.h's values too. */
static void mrct_check_qp_uapi(void)
{
	BUILD_BUG_ON(MRCT_WR_RDMA_WRITE != IB_WR_RDMA_WRITE);
	BUILD_BUG_ON(MRCT_WR_SEND != IB_WR_SEND);
	BUILD_BUG_ON(MRCT_WR_RDMA_READ != IB_WR_RDMA_READ);
	BUILD_BUG_ON(MRCT_WR_ATOMIC_CMP_AND_SWP != IB_WR_ATOMIC_CMP_AND_SWP);
	BUILD_BUG_ON(MRCT_WR_ATOMIC_FETCH_AND_ADD !=
		     IB_WR_ATOMIC_FETCH_AND_ADD);
	BUILD_BUG_ON(MRCT_WR_LSO != IB_WR_LSO);
	BUILD_BUG_ON(MRCT_SEND_FENCE != IB_SEND_FENCE);
	BUILD_BUG_ON(MRCT_SEND_SOLICITED != IB_SEND_SOLICITED);
	BUILD_BUG_ON(MRCT_SEND_INLINE != IB_SEND_INLINE);
	BUILD_BUG_ON(MRCT_WC_SUCCESS != IB_WC_SUCCESS);
	BUILD_BUG_ON(MRCT_WC_LOC_LEN_ERR != IB_WC_LOC_LEN_ERR);
	BUILD_BUG_ON(MRCT_WC_LOC_QP_OP_ERR != IB_WC_LOC_QP_OP_ERR);
	BUILD_BUG_ON(MRCT_WC_LOC_PROT_ERR != IB_WC_LOC_PROT_ERR);
	BUILD_BUG_ON(MRCT_WC_WR_FLUSH_ERR != IB_WC_WR_FLUSH_ERR);
	BUILD_BUG_ON(MRCT_WC_LOC_ACCESS_ERR != IB_WC_LOC_ACCESS_ERR);
	BUILD_BUG_ON(MRCT_WC_REM_INV_REQ_ERR != IB_WC_REM_INV_REQ_ERR);
	BUILD_BUG_ON(MRCT_WC_REM_ACCESS_ERR != IB_WC_REM_ACCESS_ERR);
	BUILD_BUG_ON(MRCT_WC_REM_OP_ERR != IB_WC_REM_OP_ERR);
	BUILD_BUG_ON(MRCT_WC_RETRY_EXC_ERR != IB_WC_RETRY_EXC_ERR);
	BUILD_BUG_ON(MRCT_WC_RNR_RETRY_EXC_ERR != IB_WC_RNR_RETRY_EXC_ERR);
	BUILD_BUG_ON(MRCT_WC_SEND != IB_WC_SEND);
	BUILD_BUG_ON(MRCT_WC_RDMA_WRITE != IB_WC_RDMA_WRITE);
	BUILD_BUG_ON(MRCT_WC_RDMA_READ != IB_WC_RDMA_READ);
	BUILD_BUG_ON(MRCT_WC_COMP_SWAP != IB_WC_COMP_SWAP);
	BUILD_BUG_ON(MRCT_WC_FETCH_ADD != IB_WC_FETCH_ADD);
	BUILD_BUG_ON(MRCT_WC_RECV != IB_WC_RECV);
	BUILD_BUG_ON(MRCT_QPS_RESET != IB_QPS_RESET);
	BUILD_BUG_ON(MRCT_QPS_INIT != IB_QPS_INIT);
	BUILD_BUG_ON(MRCT_QPS_RTR != IB_QPS_RTR);
	BUILD_BUG_ON(MRCT_QPS_RTS != IB_QPS_RTS);
	BUILD_BUG_ON(MRCT_QPS_ERR != IB_QPS_ERR);
	BUILD_BUG_ON(sizeof(struct mrct_sge) != sizeof(struct ib_sge));
	BUILD_BUG_ON(sizeof(struct mrct_qp_create) != 64);
	BUILD_BUG_ON(sizeof(struct mrct_qp_destroy) != 8);
	BUILD_BUG_ON(sizeof(struct mrct_qp_post) !=
		     104 + MRCT_QP_MAX_SGE * sizeof(struct mrct_sge));
	BUILD_BUG_ON(sizeof(struct mrct_qp_recv) !=
		     24 + MRCT_QP_MAX_SGE * sizeof(struct mrct_sge));
	BUILD_BUG_ON(sizeof(struct mrct_bench_memcpy) != 32);
	BUILD_BUG_ON(sizeof(struct mrct_bench_write) != 72);
}

static int __init mrct_init(void)
{
	int err;

	mrct_check_uapi();
	mrct_check_qp_uapi();
	err = mrct_dev_init();
	if (err)
		return err;
	err = misc_register(&mrct_misc);
	if (err)
		goto out_dev_exit;
	mrct_kmemleak_init();
	return 0;

out_dev_exit:
	mrct_dev_exit();
	return err;
}

static void __exit mrct_exit(void)
{
	mrct_kmemleak_exit();
	misc_deregister(&mrct_misc);
	mrct_dev_exit();
}

module_init(mrct_init);
module_exit(mrct_exit);

MODULE_DESCRIPTION("Test device for user memory regions on vhca and other RDMA devices");
MODULE_LICENSE("GPL");
