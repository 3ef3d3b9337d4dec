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
 * entries followed by the VALID context. An SG_GAPS MR keeps a list of
 * DMA ranges instead, written as KLM entries over the local DMA key.
 * LOCAL_INV and Send with Invalidate return the context to FREE. The
 * state machine, the checks and the locking are mrcore's
 * (drivers/mrcore/frwr.c).
 *
 * The ULP owns the page list between map_mr_sg and the REG_MR's
 * completion, as with any HCA: it must not map the MR again meanwhile.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "vhca_loc.h"

/**
 * vhca_frwr_max_sg - the longest list a fast-reg MR of a type may have
 * @vdev: the device, its mrcore device registered
 * @type: IB_MR_TYPE_MEM_REG (pages, 8-byte MTT entries) or
 *	IB_MR_TYPE_SG_GAPS (ranges, 16-byte KLM entries)
 *
 * VHCA_MAX_FRWR_PAGES, or less if the largest block of translation area
 * mrcore hands out holds fewer entries (mrc_frmr_max_pages() counts MTT
 * entries). query_device reports the MEM_REG value as
 * max_fast_reg_page_list_len.
 *
 * Return: the limit, at least 1.
 */
u32 vhca_frwr_max_sg(struct vhca_dev *vdev, enum ib_mr_type type)
{
	u32 max = mrc_frmr_max_pages(&vdev->mdev);

	BUILD_BUG_ON(MRC_KLM_ENTRY_SIZE % MRC_MTT_ENTRY_SIZE);
	if (type == IB_MR_TYPE_SG_GAPS)
		max /= MRC_KLM_ENTRY_SIZE / MRC_MTT_ENTRY_SIZE;
	return clamp_t(u32, max, 1, VHCA_MAX_FRWR_PAGES);
}

/* The CPU-side list map_mr_sg fills: pages, or ranges for SG_GAPS. */
static int vhca_frwr_alloc_list(struct vhca_mr *mr, enum ib_mr_type type,
				u32 max_num_sg)
{
	if (type == IB_MR_TYPE_SG_GAPS)
		mr->bufs = kcalloc(max_num_sg, sizeof(*mr->bufs), GFP_KERNEL);
	else
		mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages),
				    GFP_KERNEL);
	if (!mr->bufs && !mr->pages)
		return -ENOMEM;
	mr->max_pages = max_num_sg;
	return 0;
}

/**
 * vhca_alloc_mr - ib_device_ops.alloc_mr
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG, or IB_MR_TYPE_SG_GAPS (the device sets
 *	IBK_SG_GAPS_REG)
 * @max_num_sg: the longest page list (MEM_REG) or sg list (SG_GAPS), in
 *	[1, vhca_frwr_max_sg()]
 *
 * The MR's key is FREE until a REG_MR; lkey and rkey are that key, and
 * the ULP changes their variant with ib_update_fast_reg_key(). A MEM_REG
 * MR is MTT-backed (mrc_alloc_frmr()); an SG_GAPS MR is KLM-backed
 * (mrc_alloc_frmr_sg_gaps()), one entry per DMA range of any length and
 * alignment, so any sg list of up to @max_num_sg entries maps in one go.
 *
 * Context: process context; may sleep.
 * Return: the MR or an ERR_PTR: -EOPNOTSUPP for INTEGRITY MRs; -EINVAL
 * for any other type or a bad @max_num_sg; -ENOMEM; or mrcore's error
 * (-ENOSPC when no key or translation space is free).
 */
struct ib_mr *vhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct vhca_dev *vdev = to_vhca_dev(ibpd->device);
	struct vhca_pd *pd = to_vhca_pd(ibpd);
	struct mrc_mr *base_mr;
	struct vhca_mr *mr;
	int err;

	if (type == IB_MR_TYPE_INTEGRITY)
		return ERR_PTR(-EOPNOTSUPP);
	if (type != IB_MR_TYPE_MEM_REG && type != IB_MR_TYPE_SG_GAPS)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > vhca_frwr_max_sg(vdev, type))
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = vhca_frwr_alloc_list(mr, type, max_num_sg);
	if (err)
		goto out_free_mr;

	if (type == IB_MR_TYPE_SG_GAPS)
		base_mr = mrc_alloc_frmr_sg_gaps(&pd->base_pd, max_num_sg);
	else
		base_mr = mrc_alloc_frmr(&pd->base_pd, max_num_sg);
	if (IS_ERR(base_mr)) {
		err = PTR_ERR(base_mr);
		goto out_free_list;
	}

	mr->base_mr = base_mr;
	mr->ibmr.lkey = base_mr->key;
	mr->ibmr.rkey = base_mr->key;
	vhca_dbg_mr(mr, "%s max_num_sg %u\n",
		    type == IB_MR_TYPE_SG_GAPS ? "sg_gaps" : "mem_reg",
		    max_num_sg);
	return &mr->ibmr;

out_free_list:
	kfree(mr->bufs);
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

/*
 * SG_GAPS: one range per sg entry, each of any alignment and length, the
 * first starting @sg_offset_p bytes in, as ib_sg_to_pages() would start
 * (and so ibmr->iova is the first range's address). Zero-length entries
 * are consumed and give no range (a KLM entry of 0 bytes is malformed).
 * Stops when the list is full; whole entries are mapped, so the offset
 * handed back is 0.
 */
static int vhca_map_sg_gaps(struct vhca_mr *mr, struct scatterlist *sgl,
			    int sg_nents, unsigned int *sg_offset_p)
{
	unsigned int offset = sg_offset_p ? *sg_offset_p : 0;
	struct scatterlist *sg;
	int i;

	if (sg_nents <= 0 || offset > sg_dma_len(sgl))
		return -EINVAL;

	mr->npages = 0;
	mr->ibmr.iova = sg_dma_address(sgl) + offset;
	mr->ibmr.length = 0;
	for_each_sg(sgl, sg, sg_nents, i) {
		u32 len = sg_dma_len(sg) - offset;

		if (mr->npages == mr->max_pages)
			break;
		if (len) {
			mr->bufs[mr->npages].addr = sg_dma_address(sg) + offset;
			mr->bufs[mr->npages].size = len;
			mr->npages++;
			mr->ibmr.length += len;
		}
		offset = 0;
	}
	if (sg_offset_p)
		*sg_offset_p = 0;
	return i;
}

/*
 * The common MEM_REG case without an indirect call per page: no starting
 * offset and every entry a whole number of pages of ibmr->page_size,
 * starting on a page boundary, that all fit the list. For such a list
 * ib_sg_to_pages() neither coalesces nor stops early, so the result is
 * the same: every page of every entry, iova the first entry's address,
 * length their sum, all @sg_nents entries mapped. False for any other
 * list, with the MR's page count, iova and length untouched (the list's
 * slots are scratch until the caller maps it again).
 */
static bool vhca_map_pages_fast(struct vhca_mr *mr, struct scatterlist *sgl,
				int sg_nents, unsigned int *sg_offset_p)
{
	u64 psize = mr->ibmr.page_size, length = 0;
	struct scatterlist *sg;
	unsigned int shift;
	u32 n = 0;
	int i;

	if (!is_power_of_2(psize) || sg_nents <= 0 ||
	    (sg_offset_p && *sg_offset_p))
		return false;
	shift = ilog2(psize);
	for_each_sg(sgl, sg, sg_nents, i) {
		u64 addr = sg_dma_address(sg);
		u32 len = sg_dma_len(sg);

		if (!len || ((addr | len) & (psize - 1)) ||
		    (len >> shift) > mr->max_pages - n)
			return false;
		for (; len; len -= psize, addr += psize)
			mr->pages[n++] = addr;
		length += sg_dma_len(sg);
	}
	mr->npages = n;
	mr->ibmr.iova = sg_dma_address(sgl);
	mr->ibmr.length = length;
	return true;
}

/**
 * vhca_map_mr_sg - ib_device_ops.map_mr_sg
 * @ibmr: a fast-reg MR
 * @sg: DMA-mapped scatterlist
 * @sg_nents: entries of @sg
 * @sg_offset: in: byte offset into @sg; out: see ib_sg_to_pages()
 *
 * A MEM_REG MR's page list is filled as ib_sg_to_pages() fills it at
 * ibmr->page_size, setting ibmr->iova and ibmr->length too: by a loop of
 * our own for a list of whole, aligned pages that fits, else by
 * ib_sg_to_pages() itself. An
 * SG_GAPS MR stores the (DMA address, length) of each entry, the first
 * starting @sg_offset bytes in, up to max_num_sg entries; ibmr->iova is
 * the first range's address and ibmr->length their sum. Nothing reaches
 * the device until the REG_MR executes.
 *
 * Context: any context; does not sleep.
 * Return: the number of @sg entries mapped, or -EINVAL as
 * ib_sg_to_pages() (no entries, an offset beyond the first); -EINVAL for
 * an MR that is not a fast-reg MR.
 */
int vhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct vhca_mr *mr = to_vhca_mr(ibmr);

	if (mr->bufs)
		return vhca_map_sg_gaps(mr, sg, sg_nents, sg_offset);
	if (!mr->pages)
		return -EINVAL;

	if (vhca_map_pages_fast(mr, sg, sg_nents, sg_offset))
		return sg_nents;
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
 * @nosleep: the engine's run cannot sleep (vhca_engine_post())
 *
 * Writes the list map_mr_sg built as translation entries and then the
 * context VALID with @key: a MEM_REG MR's page list (at ibmr->page_size,
 * covering ibmr->iova and ibmr->length) as MTT entries
 * (mrc_frmr_exec_reg()), an SG_GAPS MR's ranges as KLM entries over the
 * local DMA key from ibmr->iova on (mrc_frmr_exec_reg_klm()).
 * ibmr->lkey and rkey are the ULP's: the device does not change them.
 * With @nosleep, mrcore's _nowait calls.
 *
 * Context: the engine's worker, may sleep briefly (the MR's mutex); or,
 * with @nosleep, a run that cannot sleep.
 * Return: 0; -EPERM if @ibmr is another device's or of another PD than
 * @pdn; -EINVAL if it is not a fast-reg MR or a MEM_REG MR's page size is
 * unset; or mrcore's error (-EINVAL for an MR that is not FREE, a key of
 * another index, a list that does not fit, bad rights; with @nosleep
 * -EAGAIN, nothing done, while the MR's mutex is held).
 */
int vhca_exec_reg_mr(struct vhca_dev *vdev, u32 pdn, struct ib_mr *ibmr,
		     u32 key, int access, bool nosleep)
{
	struct vhca_mr *mr;
	u32 rights;

	if (!ibmr || ibmr->device != &vdev->ibdev)
		return -EPERM;
	mr = to_vhca_mr(ibmr);
	if (!vhca_mr_is_frmr(mr))
		return -EINVAL;
	if (mr->base_mr->pd->pdn != pdn)
		return -EPERM;

	rights = vhca_frwr_access(access);
	if (mr->bufs && nosleep)
		return mrc_frmr_exec_reg_klm_nowait(mr->base_mr, key,
						    ibmr->iova, mr->bufs,
						    mr->npages, rights);
	if (mr->bufs)
		return mrc_frmr_exec_reg_klm(mr->base_mr, key, ibmr->iova,
					     mr->bufs, mr->npages, rights);
	if (!is_power_of_2(ibmr->page_size))
		return -EINVAL;
	if (nosleep)
		return mrc_frmr_exec_reg_nowait(mr->base_mr, key, ibmr->iova,
						ibmr->length,
						ilog2(ibmr->page_size),
						mr->pages, mr->npages, rights);
	return mrc_frmr_exec_reg(mr->base_mr, key, ibmr->iova, ibmr->length,
				 ilog2(ibmr->page_size), mr->pages, mr->npages,
				 rights);
}

/**
 * vhca_exec_inv - execute LOCAL_INV or a received Send with Invalidate
 * @vdev: the device that holds @key
 * @pdn: PD number of the executing (or receiving) QP
 * @qpn: number of that QP: the requester for LOCAL_INV, the responder a
 *	Send with Invalidate arrived on
 * @key: the key to invalidate: a fast-reg MR's or a type 2 window's
 * @nosleep: the engine's run cannot sleep (vhca_engine_post())
 *
 * Moves the context of @key from VALID to FREE, once the device's
 * accesses through it have drained; a FREE MR stays FREE. A type 2
 * window's rkey stops working the same way, and the window no longer
 * holds its MR; only the QP the window is bound to invalidates it.
 *
 * With @nosleep, mrc_exec_inv_nowait(): -EAGAIN where it would sleep.
 *
 * Context: the engine's worker, may sleep (the MR's mutex, the drain); or,
 * with @nosleep, a run that cannot sleep.
 * Return: 0, or the error of mrc_exec_inv(): -ENOKEY for a key that is
 * not live (stale variant included), -EINVAL for a key that is neither a
 * fast-reg MR's nor a type 2 window's (a type 1 window's included),
 * -EPERM for another PD or a type 2 window bound to another QP, -EBUSY
 * for an MR with windows bound. The engine
 * fails the WR on any of them (IB_WC_LOC_PROT_ERR for LOCAL_INV; the
 * responder's IB_WC_REM_INV_REQ_ERR for Send with Invalidate).
 */
int vhca_exec_inv(struct vhca_dev *vdev, u32 pdn, u32 qpn, u32 key,
		  bool nosleep)
{
	if (nosleep)
		return mrc_exec_inv_nowait(&vdev->mdev, pdn, qpn, key);
	return mrc_exec_inv(&vdev->mdev, pdn, qpn, key);
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
 * @access: the WR's ib_access_flags (IB_ZERO_BASED included); hints of
 *	the optional range are dropped, relaxed ordering too: the window's
 *	accesses are the MR's, ordered as the MR's are
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
				length, access & ~IB_ACCESS_OPTIONAL);
}

/**
 * vhca_exec_user_bind_mw - execute a Bind MW WQE of a user send ring
 * @vdev: the device executing the WQE
 * @pdn: PD number of the executing QP
 * @qpn: number of the executing QP (a type 2 window is bound to it)
 * @cur_rkey: the window's rkey as the consumer knows it
 *	(rxe_send_wr.wr.mw.mw_rkey)
 * @new_rkey: the rkey the window is to take (rxe_send_wr.wr.mw.rkey)
 * @mr_key: the MR's lkey (rxe_send_wr.wr.mw.mr_lkey)
 * @addr: the window's first address in the MR
 * @length: bytes; 0 unbinds a type 1 window
 * @access: the WQE's access bits (IB_ZERO_BASED for a type 2 window)
 *
 * librxe posts this for ibv_bind_mw() of a type 1 window as for
 * IBV_WR_BIND_MW of a type 2 one, with the next rkey ibv_inc_rkey()
 * makes. Two checks come first, as rxe makes them: the new rkey keeps
 * the window's index, only its low 8 bits (the variant) change; and the
 * consumer's current rkey is the one the device holds for the window, so
 * a bind through a stale rkey fails. mrcore then checks the rest
 * (vhca_exec_bind_mw()); a type 1 window may be bound through a WQE in
 * any state, as rxe allows.
 *
 * Context: the engine's worker; may sleep.
 * Return: 0; -EINVAL if the two rkeys name different indexes, or the
 * device holds no window context under @cur_rkey; or the error of
 * vhca_exec_bind_mw(). The engine completes the WQE with
 * IB_WC_MW_BIND_ERR on any error.
 */
int vhca_exec_user_bind_mw(struct vhca_dev *vdev, u32 pdn, u32 qpn,
			   u32 cur_rkey, u32 new_rkey, u32 mr_key, u64 addr,
			   u64 length, u32 access)
{
	struct mrc_mkey_ctx ctx;

	if (mrc_key_index(cur_rkey) != mrc_key_index(new_rkey))
		return -EINVAL;
	/*
	 * The slot as the device holds it; a window's is FREE or VALID
	 * under its current key. A bind racing on another QP is ordered by
	 * mrcore's window mutex; the check, as rxe's, precedes it.
	 */
	if (vhca_read_mkey(vdev, mrc_key_index(cur_rkey), &ctx) ||
	    (ctx.state != MRC_MKEY_FREE && ctx.state != MRC_MKEY_VALID) ||
	    ctx.key != cur_rkey)
		return -EINVAL;
	return vhca_exec_bind_mw(vdev, pdn, qpn, new_rkey, mr_key, addr,
				 length, access);
}
