// SPDX-License-Identifier: GPL-2.0
/*
 * vhca memory regions: the ib_core MR verbs, each a thin wrapper around
 * mrcore, which validates, pins, maps, builds the translation and writes
 * it to device memory through vhca's mrc_hw_ops.
 *
 * In 6.1 the driver allocates struct ib_mr. A struct vhca_mr is allocated
 * after the arguments are checked and before mrcore registers anything, so
 * a registration never has to be undone for want of memory. lkey and rkey
 * are both the mrcore key.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/slab.h>
#include <rdma/restrack.h>

#include "vhca_loc.h"

/* mrcore's MR kinds as `rdma res show mr -d` names them. */
static const char *const vhca_mr_kind_names[] = {
	[MRC_MR_DMA] = "dma",
	[MRC_MR_PHYS] = "phys",
	[MRC_MR_SG] = "sg",
	[MRC_MR_USER] = "user",
	[MRC_MR_FAST_REG] = "fast_reg",
	[MRC_MR_FMR] = "fmr",
	[MRC_MR_INDIRECT] = "indirect",
	[MRC_MR_DMABUF] = "dmabuf",
};

static_assert(ARRAY_SIZE(vhca_mr_kind_names) == MRC_MR_NUM_TYPES);

static const char *vhca_mr_kind_name(const struct mrc_mr *base_mr)
{
	if (base_mr->type >= MRC_MR_NUM_TYPES)
		return "?";
	return vhca_mr_kind_names[base_mr->type];
}

/*
 * ib_access_flags to MRC_ACCESS_*. The values are the same bits; the
 * optional range (bits 20-29) holds hints a device may ignore, and vhca
 * keeps only RELAXED_ORDERING of them. mrcore checks the rest (unknown
 * bits, remote write or atomic without local write).
 */
int vhca_mr_access(int access, u32 *mrc_access)
{
	BUILD_BUG_ON(IB_ACCESS_LOCAL_WRITE != MRC_ACCESS_LOCAL_WRITE);
	BUILD_BUG_ON(IB_ACCESS_REMOTE_WRITE != MRC_ACCESS_REMOTE_WRITE);
	BUILD_BUG_ON(IB_ACCESS_REMOTE_READ != MRC_ACCESS_REMOTE_READ);
	BUILD_BUG_ON(IB_ACCESS_REMOTE_ATOMIC != MRC_ACCESS_REMOTE_ATOMIC);
	BUILD_BUG_ON(IB_ACCESS_MW_BIND != MRC_ACCESS_MW_BIND);
	BUILD_BUG_ON(IB_ZERO_BASED != MRC_ACCESS_ZERO_BASED);
	BUILD_BUG_ON(IB_ACCESS_ON_DEMAND != MRC_ACCESS_ON_DEMAND);
	BUILD_BUG_ON(IB_ACCESS_HUGETLB != MRC_ACCESS_HUGETLB);
	BUILD_BUG_ON(IB_ACCESS_RELAXED_ORDERING != MRC_ACCESS_RELAXED_ORDERING);

	if (access & ~IB_ACCESS_SUPPORTED)
		return -EINVAL;

	*mrc_access = access & ~(IB_ACCESS_OPTIONAL &
				 ~IB_ACCESS_RELAXED_ORDERING);
	return 0;
}

/*
 * Take over a registration: lkey and rkey are its key. On an error from
 * mrcore, @mr is freed.
 */
struct ib_mr *vhca_mr_attach(struct vhca_mr *mr, struct mrc_mr *base_mr)
{
	if (IS_ERR(base_mr)) {
		kfree(mr);
		return ERR_CAST(base_mr);
	}

	mr->base_mr = base_mr;
	mr->ibmr.lkey = base_mr->key;
	mr->ibmr.rkey = base_mr->key;
	vhca_dbg_mr(mr, "%s iova 0x%llx length 0x%llx access 0x%x\n",
		    vhca_mr_kind_name(base_mr), base_mr->iova,
		    base_mr->length, base_mr->access);
	return &mr->ibmr;
}

/**
 * vhca_get_dma_mr - ib_device_ops.get_dma_mr
 * @ibpd: the PD
 * @access: ib_access_flags
 *
 * A PA-mode key of @ibpd covering every DMA address. ib_core asks for one
 * only for IB_PD_UNSAFE_GLOBAL_RKEY: kernel PDs use the local DMA key.
 *
 * Return: the MR or an ERR_PTR: -EINVAL for bad @access, or mrcore's error.
 */
struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vhca_pd *pd = to_vhca_pd(ibpd);
	struct vhca_mr *mr;
	u32 mrc_access;
	int err;

	err = vhca_mr_access(access, &mrc_access);
	if (err)
		return ERR_PTR(err);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	return vhca_mr_attach(mr, mrc_reg_dma_mr(&pd->base_pd, mrc_access));
}

/*
 * How a user registration starts: driver data is checked (librxe sends
 * none; zeros are accepted, anything else refused), @access is converted,
 * and the vhca_mr allocated.
 */
static struct vhca_mr *vhca_user_mr_alloc(struct ib_udata *udata, int access,
					  u32 *mrc_access)
{
	struct vhca_mr *mr;
	int err;

	err = vhca_udata_in_check(udata, 0);
	if (err)
		return ERR_PTR(err);
	err = vhca_mr_access(access, mrc_access);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	return mr ? mr : ERR_PTR(-ENOMEM);
}

/**
 * vhca_reg_user_mr - ib_device_ops.reg_user_mr
 * @ibpd: the PD
 * @start: first user virtual address, in the calling process
 * @length: bytes
 * @iova: the address the key gives @start
 * @access: ib_access_flags: every one mrcore knows (ZERO_BASED, HUGETLB,
 *	ON_DEMAND, RELAXED_ORDERING among them); other hints of the optional
 *	range are dropped
 * @udata: NULL for kernel callers (ib_reg_user_mr()); from ib_uverbs,
 *	librxe's driver data: none, or zeros only
 *
 * mrcore pins and DMA-maps the calling process's memory, or, with
 * IB_ACCESS_ON_DEMAND, registers it for on-demand paging: nothing is
 * pinned and the engine's page faults map it (start 0 and length
 * U64_MAX, iova 0: implicit ODP over the whole address space, as
 * ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND) asks). Kernel
 * callers reach this through ib_reg_user_mr(), ib_uverbs through its
 * reg_mr command; both fill in the rest of the ib_mr and add it to
 * restrack.
 *
 * Return: the MR or an ERR_PTR: -EINVAL for bad @access, -EOPNOTSUPP for
 * driver data that is not zero, or mrcore's error.
 */
struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct vhca_pd *pd = to_vhca_pd(ibpd);
	struct vhca_mr *mr;
	u32 mrc_access;

	mr = vhca_user_mr_alloc(udata, access, &mrc_access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	return vhca_mr_attach(mr, mrc_reg_user_mr(&pd->base_pd, start, length,
						  iova, mrc_access));
}

/**
 * vhca_reg_user_mr_dmabuf - ib_device_ops.reg_user_mr_dmabuf
 * @ibpd: the PD
 * @offset: byte offset of the first byte in the dma-buf
 * @length: bytes
 * @iova: the address the key gives the first byte; same page offset as
 *	@offset
 * @fd: a dma-buf file descriptor of the calling process
 * @access: ib_access_flags
 * @udata: driver data (ib_uverbs' REG_DMABUF_MR method): none, or zeros
 *	only
 *
 * mrcore attaches the buffer on vhca's DMA device and registers the range
 * in MTT mode. With CONFIG_DMABUF_MOVE_NOTIFY and a dynamic exporter the
 * MR follows the exporter's moves: the engine faults on the zapped
 * entries after a move, as for ODP, and mrcore maps the buffer again;
 * otherwise the buffer is pinned until dereg. The caller fills in the
 * rest of the ib_mr (ib_uverbs' reg_dmabuf_mr handler does).
 *
 * Return: the MR or an ERR_PTR: -EINVAL for bad @access, -EOPNOTSUPP for
 * driver data that is not zero, or mrcore's error
 * (Documentation/mrcore/dmabuf.rst).
 */
struct ib_mr *vhca_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 iova, int fd, int access,
				      struct ib_udata *udata)
{
	struct vhca_pd *pd = to_vhca_pd(ibpd);
	struct vhca_mr *mr;
	u32 mrc_access;

	mr = vhca_user_mr_alloc(udata, access, &mrc_access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	return vhca_mr_attach(mr, mrc_reg_dmabuf_mr(&pd->base_pd, fd, offset,
						    length, iova, mrc_access));
}

/**
 * vhca_rereg_user_mr - ib_device_ops.rereg_user_mr
 * @ibmr: a user MR
 * @flags: IB_MR_REREG_* (the MRC_REREG_* values), or none: ib_uverbs
 *	drops IB_MR_REREG_PD when the PD named is the MR's own, which may
 *	leave no flag
 * @start: new user address (IB_MR_REREG_TRANS)
 * @length: new length (IB_MR_REREG_TRANS)
 * @iova: new iova (IB_MR_REREG_TRANS)
 * @access: new ib_access_flags (IB_MR_REREG_ACCESS)
 * @new_pd: new PD (IB_MR_REREG_PD); ib_uverbs passes the current PD
 *	otherwise
 * @udata: driver data: none, or zeros only
 *
 * Always in place: mrcore keeps the key, so lkey and rkey do not change,
 * and on failure leaves the old registration intact and usable. The
 * caller (ib_uverbs) then updates the ib_mr's PD, iova and length. No
 * flag left is a rereg to what the MR already is: nothing changes (as
 * mlx5). mrcore re-registers user MRs; an ODP or dma-buf MR it refuses.
 *
 * Return: NULL (changed in place, or nothing to change) or an ERR_PTR,
 * never a new MR: -EINVAL for bad @access; -EOPNOTSUPP for unknown
 * @flags, driver data that is not zero, an ODP or dma-buf MR, or an
 * @access that adds or drops IB_ACCESS_ON_DEMAND; or mrcore's error.
 */
struct ib_mr *vhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *new_pd, struct ib_udata *udata)
{
	struct vhca_mr *mr = to_vhca_mr(ibmr);
	u32 mrc_access = 0;
	int err;

	BUILD_BUG_ON(IB_MR_REREG_TRANS != MRC_REREG_TRANS);
	BUILD_BUG_ON(IB_MR_REREG_PD != MRC_REREG_PD);
	BUILD_BUG_ON(IB_MR_REREG_ACCESS != MRC_REREG_ACCESS);

	err = vhca_udata_in_check(udata, 0);
	if (err)
		return ERR_PTR(err);
	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (!flags)
		return NULL;
	if (flags & IB_MR_REREG_ACCESS) {
		err = vhca_mr_access(access, &mrc_access);
		if (err)
			return ERR_PTR(err);
		/*
		 * Pinned and on-demand MRs are built differently: neither
		 * turns into the other in place (mrcore would pin an MR
		 * that says ON_DEMAND).
		 */
		if ((mrc_access ^ mr->base_mr->access) & MRC_ACCESS_ON_DEMAND)
			return ERR_PTR(-EOPNOTSUPP);
	}

	err = mrc_rereg_user_mr(mr->base_mr, flags,
				&to_vhca_pd(new_pd)->base_pd, start, length,
				iova, mrc_access);
	if (err)
		return ERR_PTR(err);

	vhca_dbg_mr(mr, "flags 0x%x\n", flags);
	return NULL;
}

/**
 * vhca_dereg_mr - ib_device_ops.dereg_mr
 * @ibmr: the MR
 * @udata: unused
 *
 * mrcore invalidates the key (which drains the walkers inside it), then
 * unmaps, unpins and frees the translation. A fast-reg MR (MEM_REG or
 * SG_GAPS) goes through mrc_dealloc_frmr(), which first waits for
 * invalidations by key, and its page or range list is freed with it.
 *
 * Return: 0, or -EBUSY while memory windows are bound (the MR stays).
 */
int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vhca_mr *mr = to_vhca_mr(ibmr);
	int err;

	vhca_dbg_mr(mr, "deregistering\n");
	if (vhca_mr_is_frmr(mr))
		err = mrc_dealloc_frmr(mr->base_mr);
	else
		err = mrc_dereg_mr(mr->base_mr);
	if (err)
		return err;

	vhca_uapi_mr_free_parts(mr);
	vhca_amr_free(mr);
	kfree(mr->pages);
	kfree(mr->bufs);
	kfree(mr);
	return 0;
}

/**
 * vhca_mr_mrc - mrcore's MR behind an MR of a vhca device
 * @ibmr: an MR
 *
 * For kernel code that calls mrcore with a vhca MR: binding a type 1
 * memory window (mrc_bind_mw()), or naming the MR's key in an indirect
 * key. The mrcore MR lives until @ibmr is deregistered.
 *
 * Context: any context.
 * Return: the mrcore MR, or NULL if @ibmr is not a vhca MR.
 */
struct mrc_mr *vhca_mr_mrc(struct ib_mr *ibmr)
{
	if (!vhca_is_vhca(ibmr->device))
		return NULL;
	return to_vhca_mr(ibmr)->base_mr;
}
EXPORT_SYMBOL_GPL(vhca_mr_mrc);

/**
 * struct vhca_prefetch - an asynchronous advise_mr on the fault queue
 * @work: on vdev->fault_wq
 * @vdev: the device, which outlives its fault queue's work
 * @pdn: the PD the advice was given for
 * @flags: MRC_ODP_* of the advice
 * @num_sge: entries of @sge
 * @sge: copies of the caller's ranges
 */
struct vhca_prefetch {
	struct work_struct work;
	struct vhca_dev *vdev;
	u32 pdn;
	u32 flags;
	u32 num_sge;
	struct ib_sge sge[];
};

static void vhca_prefetch_work(struct work_struct *work)
{
	struct vhca_prefetch *p = container_of(work, struct vhca_prefetch,
					       work);
	u32 i;
	int err;

	for (i = 0; i < p->num_sge; i++) {
		err = mrc_odp_prefetch(&p->vdev->mdev, p->pdn, p->sge[i].lkey,
				       p->sge[i].addr, p->sge[i].length,
				       p->flags);
		if (err)
			vhca_dbg(p->vdev, "prefetch lkey 0x%08x: %d\n",
				 p->sge[i].lkey, err);
	}
	kfree(p);
}

/**
 * vhca_advise_mr - ib_device_ops.advise_mr
 * @ibpd: the PD the ranges' MRs belong to
 * @advice: PREFETCH (map readable), PREFETCH_WRITE (map writable,
 *	faulting for write) or PREFETCH_NO_FAULT (map only pages present in
 *	the CPU page tables)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: prefetch before returning;
 *	without it the ranges are copied and prefetched from the device's
 *	fault queue, and errors are not reported
 * @sg_list: ranges, each an lkey of an ODP MR of @ibpd and an address in
 *	its address space
 * @num_sge: entries of @sg_list
 * @attrs: uverbs attributes, unused
 *
 * Return: 0; -EOPNOTSUPP for an unknown advice or flag; -ENOMEM; with
 * FLUSH, the first error of mrc_odp_prefetch() (-EINVAL for a key that
 * is not an ODP MR of @ibpd, ...).
 */
int vhca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs)
{
	struct vhca_dev *vdev = to_vhca_dev(ibpd->device);
	u32 pdn = to_vhca_pd(ibpd)->base_pd.pdn;
	struct vhca_prefetch *p;
	u32 i, pf;
	int err;

	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
		pf = 0;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		pf = MRC_ODP_WRITE;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		pf = MRC_ODP_NO_FAULT;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;

	if (flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH) {
		for (i = 0; i < num_sge; i++) {
			err = mrc_odp_prefetch(&vdev->mdev, pdn,
					       sg_list[i].lkey, sg_list[i].addr,
					       sg_list[i].length, pf);
			if (err)
				return err;
		}
		return 0;
	}

	p = kmalloc(struct_size(p, sge, num_sge), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	INIT_WORK(&p->work, vhca_prefetch_work);
	p->vdev = vdev;
	p->pdn = pdn;
	p->flags = pf;
	p->num_sge = num_sge;
	memcpy(p->sge, sg_list, flex_array_size(p, sge, num_sge));
	queue_work(vdev->fault_wq, &p->work);
	return 0;
}

/* The ODP counters of @mr for `rdma res show mr -dd`. */
static int vhca_fill_res_odp(struct sk_buff *msg, struct mrc_mr *base_mr)
{
	struct mrc_odp_stats st;

	if (mrc_mr_odp_stats(base_mr, &st))
		return 0;
	if (rdma_nl_put_driver_u64(msg, "odp_faults", st.faults) ||
	    rdma_nl_put_driver_u64(msg, "odp_fault_pages", st.fault_pages) ||
	    rdma_nl_put_driver_u64(msg, "odp_invalidations",
				   st.invalidations) ||
	    rdma_nl_put_driver_u64(msg, "odp_prefetched_pages",
				   st.prefetched_pages) ||
	    rdma_nl_put_driver_u64(msg, "odp_mapped_pages", st.mapped_pages))
		return -EMSGSIZE;
	if (base_mr->mode == MRC_ACCESS_MODE_KSM &&
	    (rdma_nl_put_driver_u64(msg, "odp_children", st.children) ||
	     rdma_nl_put_driver_u64(msg, "odp_children_created",
				    st.children_created) ||
	     rdma_nl_put_driver_u64(msg, "odp_children_reclaimed",
				    st.children_reclaimed)))
		return -EMSGSIZE;
	return 0;
}

/**
 * vhca_fill_res_mr_entry - ib_device_ops.fill_res_mr_entry
 * @msg: the netlink message
 * @ibmr: the MR, held by restrack
 *
 * Adds driver attributes for `rdma res show mr -dd`: kind (dma, phys, sg,
 * user), and what the device holds for the key, read back from device
 * memory: state, mode (PA, MTT, KLM, KSM), page_size (bytes per MTT
 * entry; 0 for PA, KLM and KSM) and entries (MTT, KLM or KSM entries; 0
 * for PA); for an ODP MR, mrcore's counters of it (odp_faults,
 * odp_fault_pages, odp_invalidations, odp_prefetched_pages,
 * odp_mapped_pages), and for an implicit one odp_children,
 * odp_children_created and odp_children_reclaimed.
 *
 * Return: 0 or -EMSGSIZE.
 */
int vhca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct vhca_mr *mr = to_vhca_mr(ibmr);
	struct vhca_dev *vdev = to_vhca_dev(ibmr->device);
	u32 key = ibmr->lkey;
	const char *state = vhca_mkey_state_name(MRC_MKEY_INVALID);
	const char *mode = "-";
	struct mrc_mkey_ctx ctx;
	struct nlattr *table;
	u64 page_size = 0;
	u32 entries = 0;

	if (!vhca_mkey_get(vdev, key, &ctx)) {
		vhca_mkey_put(vdev, key);
		state = vhca_mkey_state_name(ctx.state);
		mode = vhca_access_mode_name(ctx.access_mode);
		if (ctx.access_mode == MRC_ACCESS_MODE_MTT &&
		    ctx.page_shift < 64)
			page_size = 1ULL << ctx.page_shift;
		if (ctx.access_mode != MRC_ACCESS_MODE_PA)
			entries = ctx.xlt_entries;
	}

	/* Driver attributes live in a nest the driver opens (6.1 nldev). */
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "kind",
				      vhca_mr_kind_name(mr->base_mr)) ||
	    rdma_nl_put_driver_string(msg, "state", state) ||
	    rdma_nl_put_driver_string(msg, "mode", mode) ||
	    rdma_nl_put_driver_u64(msg, "page_size", page_size) ||
	    rdma_nl_put_driver_u32(msg, "entries", entries) ||
	    (mr->nparts &&
	     rdma_nl_put_driver_u32(msg, "iov_parts", mr->nparts)) ||
	    (mr->alloc &&
	     rdma_nl_put_driver_u32(msg, "alloc_blocks",
				    vhca_amr_blocks(mr))) ||
	    vhca_fill_res_odp(msg, mr->base_mr)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
