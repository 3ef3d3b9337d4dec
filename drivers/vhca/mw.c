// SPDX-License-Identifier: GPL-2.0
/*
 * vhca memory windows: ib_uverbs' alloc_mw and dealloc_mw, each a thin
 * wrapper around mrcore's windows (Documentation/mrcore/windows.rst).
 *
 * 6.1 has no kernel verb for windows: ib_uverbs alone calls these, for
 * ibv_alloc_mw() and ibv_dealloc_mw(). Kernel code uses mrcore's windows
 * directly (mrc_alloc_mw() on vhca_pd_mrc()).
 *
 * Both types are bound by a Bind MW WQE in a user send ring (librxe turns
 * ibv_bind_mw() of a type 1 window into one too), which the engine
 * executes with vhca_exec_user_bind_mw() (frwr.c); a type 2 window is
 * type 2B, bound to the QP the WQE was posted on. The rkey ib_uverbs
 * returns is the window's first; every bind moves its low 8 bits, which
 * user space tracks itself, as it does with rxe.
 */
#include <linux/build_bug.h>

#include "vhca_loc.h"

/**
 * vhca_alloc_mw - ib_device_ops.alloc_mw
 * @ibmw: the window ib_core allocated, with its PD and type
 *	(IB_MW_TYPE_1 or IB_MW_TYPE_2; ib_uverbs refuses any other)
 * @udata: ib_uverbs' driver data: none, or zeros only
 *
 * mrcore allocates the window's key and translation space and writes its
 * context FREE: every access through the rkey fails until a bind.
 *
 * Context: process context; may sleep.
 * Return: 0; -EOPNOTSUPP for driver data that is not zero; -EINVAL for
 * another type; or the error of mrc_alloc_mw() (-ENOSPC when no key or
 * translation space is left, -ENOMEM, ...).
 */
int vhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vhca_pd *pd = to_vhca_pd(ibmw->pd);
	struct vhca_mw *mw = to_vhca_mw(ibmw);
	struct mrc_mw *base_mw;
	int err;

	BUILD_BUG_ON(IB_MW_TYPE_1 != (int)MRC_MW_TYPE_1);
	BUILD_BUG_ON(IB_MW_TYPE_2 != (int)MRC_MW_TYPE_2);

	err = vhca_udata_in_check(udata, 0);
	if (err)
		return err;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;

	base_mw = mrc_alloc_mw(&pd->base_pd, (enum mrc_mw_type)ibmw->type);
	if (IS_ERR(base_mw))
		return PTR_ERR(base_mw);

	mw->base_mw = base_mw;
	ibmw->rkey = mrc_mw_rkey(base_mw);
	vhca_dbg_pd(pd, "MW[0x%08x] type %d\n", ibmw->rkey, ibmw->type);
	return 0;
}

/**
 * vhca_dealloc_mw - ib_device_ops.dealloc_mw
 * @ibmw: the window; ib_core frees it on success
 *
 * A bound window is unbound as it goes (IBA allows deallocating a bound
 * window; its MR may then be deregistered): mrcore invalidates the
 * context, waits for accesses through it, and frees key and translation.
 * A type 2 window is freed whatever QP it is bound to.
 *
 * Context: process context; may sleep.
 * Return: 0, or the error of mrc_dealloc_mw(), after which the window is
 * as it was.
 */
int vhca_dealloc_mw(struct ib_mw *ibmw)
{
	struct vhca_mw *mw = to_vhca_mw(ibmw);

	return mrc_dealloc_mw(mw->base_mw);
}
