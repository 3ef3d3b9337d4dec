// SPDX-License-Identifier: GPL-2.0
/*
 * vhca fast registration (FRWR): the verbs that prepare a fast-reg MR and
 * the device side of the work requests that use it, and of the other
 * memory-management work requests: invalidation (of fast-reg MRs and
 * type 2 windows) and Bind MW.
 *
 * alloc_mr gets a FREE key from mrcore and a CPU-side page list, which
 * map_mr_sg fills through ib_sg_to_pages(); like an HCA reading the
 * descriptor list from host memory, the engine reads that list when it
 * executes IB_WR_REG_MR, and mrcore writes it to device memory as MTT
 * entries followed by the VALID context. LOCAL_INV and Send with
 * Invalidate return the context to FREE. The state machine, the checks
 * and the locking are mrcore's (drivers/mrcore/frwr.c).
 *
 * The ULP owns the page list between map_mr_sg and the REG_MR's
 * completion, as with any HCA: it must not map the MR again meanwhile.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/slab.h>

#include "vhca_loc.h"

/**
 * vhca_alloc_mr - ib_device_ops.alloc_mr
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: the longest page list, in [1, VHCA_MAX_FRWR_PAGES]
 *
 * The MR's key is FREE until a REG_MR; lkey and rkey are that key, and
 * the ULP changes their variant with ib_update_fast_reg_key().
 *
 * Context: process context; may sleep.
 * Return: the MR or an ERR_PTR: -EOPNOTSUPP for SG_GAPS and INTEGRITY MRs;
 * -EINVAL for any other type or a bad @max_num_sg; -ENOMEM; or mrcore's
 * error (-ENOSPC when no key or translation space is free).
 */
struct ib_mr *vhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct vhca_pd *pd = to_vhca_pd(ibpd);
	struct mrc_mr *base_mr;
	struct vhca_mr *mr;
	int err;

	if (type == IB_MR_TYPE_SG_GAPS || type == IB_MR_TYPE_INTEGRITY)
		return ERR_PTR(-EOPNOTSUPP);
	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > VHCA_MAX_FRWR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto out_free_mr;
	}
	mr->max_pages = max_num_sg;

	base_mr = mrc_alloc_frmr(&pd->base_pd, max_num_sg);
	if (IS_ERR(base_mr)) {
		err = PTR_ERR(base_mr);
		goto out_free_pages;
	}

	mr->base_mr = base_mr;
	mr->ibmr.lkey = base_mr->key;
	mr->ibmr.rkey = base_mr->key;
	vhca_dbg_mr(mr, "max_num_sg %u\n", max_num_sg);
	return &mr->ibmr;

out_free_pages:
	kfree(mr->pages);
out_free_mr:
	kfree(mr);
	return ERR_PTR(err);
}

/* ib_sg_to_pages() callback: append one page; -ENOMEM when full. */
static int vhca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct vhca_mr *mr = to_vhca_mr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

/**
 * vhca_map_mr_sg - ib_device_ops.map_mr_sg
 * @ibmr: a fast-reg MR
 * @sg: DMA-mapped scatterlist
 * @sg_nents: entries of @sg
 * @sg_offset: in: byte offset into @sg; out: see ib_sg_to_pages()
 *
 * Fills the page list with ib_sg_to_pages() at ibmr->page_size, which
 * also sets ibmr->iova and ibmr->length. Nothing reaches the device until
 * the REG_MR executes.
 *
 * Context: any context; does not sleep.
 * Return: the number of @sg entries mapped, or -EINVAL as
 * ib_sg_to_pages(); -EINVAL for an MR that is not a fast-reg MR.
 */
int vhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct vhca_mr *mr = to_vhca_mr(ibmr);

	if (!mr->pages)
		return -EINVAL;

	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, vhca_set_page);
}

/*
 * ib_access_flags of a REG_MR to MRC_ACCESS_* (the same bits; mr.c
 * asserts it). The optional range holds hints a device may ignore: all
 * but RELAXED_ORDERING are dropped, as for any registration.
 */
static u32 vhca_frwr_access(int access)
{
	return (u32)access &
	       ~(IB_ACCESS_OPTIONAL & ~IB_ACCESS_RELAXED_ORDERING);
}

/**
 * vhca_exec_reg_mr - execute IB_WR_REG_MR, as the device
 * @vdev: the device executing the WR
 * @pdn: PD number of the executing QP
 * @ibmr: the WR's MR
 * @key: the WR's key: the MR's index, any variant
 * @access: the WR's ib_access_flags
 *
 * Writes the page list map_mr_sg built (at ibmr->page_size, covering
 * ibmr->iova and ibmr->length) as MTT entries and then the context VALID
 * with @key. ibmr->lkey and rkey are the ULP's: the device does not
 * change them.
 *
 * Context: the engine's worker; may sleep briefly (the MR's mutex).
 * Return: 0; -EPERM if @ibmr is another device's or of another PD than
 * @pdn; -EINVAL if it is not a fast-reg MR or its page size is unset; or
 * the error of mrc_frmr_exec_reg() (-EINVAL for an MR that is not FREE,
 * a key of another index, a page list that does not fit, bad rights).
 */
int vhca_exec_reg_mr(struct vhca_dev *vdev, u32 pdn, struct ib_mr *ibmr,
		     u32 key, int access)
{
	struct vhca_mr *mr;

	if (!ibmr || ibmr->device != &vdev->ibdev)
		return -EPERM;
	mr = to_vhca_mr(ibmr);
	if (!mr->pages)
		return -EINVAL;
	if (mr->base_mr->pd->pdn != pdn)
		return -EPERM;
	if (!is_power_of_2(ibmr->page_size))
		return -EINVAL;

	return mrc_frmr_exec_reg(mr->base_mr, key, ibmr->iova, ibmr->length,
				 ilog2(ibmr->page_size), mr->pages, mr->npages,
				 vhca_frwr_access(access));
}

/**
 * vhca_exec_inv - execute LOCAL_INV or a received Send with Invalidate
 * @vdev: the device that holds @key
 * @pdn: PD number of the executing (or receiving) QP
 * @key: the key to invalidate: a fast-reg MR's or a type 2 window's
 *
 * Moves the context of @key from VALID to FREE, once the device's
 * accesses through it have drained; a FREE MR stays FREE. A type 2
 * window's rkey stops working the same way, and the window no longer
 * holds its MR.
 *
 * Context: the engine's worker; may sleep (the MR's mutex, the drain).
 * Return: 0, or the error of mrc_exec_inv(): -ENOKEY for a key that is
 * not live (stale variant included), -EINVAL for a key that is neither a
 * fast-reg MR's nor a type 2 window's (a type 1 window's included),
 * -EPERM for another PD, -EBUSY for an MR with windows bound. The engine
 * fails the WR on any of them (IB_WC_LOC_PROT_ERR for LOCAL_INV; the
 * responder's IB_WC_REM_INV_REQ_ERR for Send with Invalidate).
 */
int vhca_exec_inv(struct vhca_dev *vdev, u32 pdn, u32 key)
{
	return mrc_exec_inv(&vdev->mdev, pdn, key);
}

/**
 * vhca_exec_bind_mw - execute IB_WR_BIND_MW, as the device
 * @vdev: the device executing the WR
 * @pdn: PD number of the executing QP
 * @qpn: number of the executing QP: the window serves remote accesses
 *	on this QP only
 * @mw_key: the window's new rkey (struct vhca_bind_mw_wr.mw_rkey)
 * @mr_key: the MR's key
 * @addr: the window's first address in the MR
 * @length: bytes
 * @access: the WR's ib_access_flags (IB_ZERO_BASED included)
 *
 * mrcore checks the IBA rules (a type 2 window of @pdn, an MR of @pdn
 * with MW_BIND, the window inside the MR, rights a subset of the MR's)
 * and writes the window's context: KLM mode over @mr_key, with @qpn.
 *
 * Context: the engine's worker; may sleep (mrcore's mutexes, the drain
 * of a window bound before).
 * Return: 0 or the error of mrc_mw_exec_bind(); the engine completes the
 * WR with IB_WC_MW_BIND_ERR on any error.
 */
int vhca_exec_bind_mw(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 mw_key,
		      u32 mr_key, u64 addr, u64 length, u32 access)
{
	return mrc_mw_exec_bind(&vdev->mdev, pdn, qpn, mw_key, mr_key, addr,
				length, vhca_frwr_access(access));
}
