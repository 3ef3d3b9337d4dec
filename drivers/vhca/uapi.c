// SPDX-License-Identifier: GPL-2.0
/*
 * vhca's driver methods (include/uapi/rdma/vhca_user_ioctl.h): what user
 * space reaches through the uverbs ioctl beyond rxe's user ABI, for the
 * memory registrations no uverbs command carries. libvhca calls them.
 *
 * QUERY (device): the limits below and the ABI version; on any other
 *	device the method does not exist, which is how libvhca knows vhca.
 * MR_REG_IOV: one MR over an iovec, laid end to end from an iova (the
 *	fi_mr_regv() model), with an optional requested key. One piece is an
 *	ordinary user MR; n pieces are n hidden user MRs under one indirect
 *	key, which is the MR user space sees.
 * MR_REG_INDIRECT: an indirect key over other keys of the PD, from a
 *	list of (key, address, length) or a strided layout, with an optional
 *	requested key.
 * MR_ALLOC: memory the kernel allocates in contiguous blocks, registers
 *	and lets the caller map (alloc.c).
 *
 * Every attribute is checked before anything is allocated; counts are
 * bounded (VHCA_UAPI_MAX_IOV, VHCA_UAPI_MAX_RANGES), reserved fields must
 * be 0, lengths must not wrap. Each MR made is a uverbs MR object, set up
 * as ib_uverbs' own MR methods do: the generic dereg frees it through
 * vhca_dereg_mr(), and so does the end of the process.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#define UVERBS_MODULE_NAME vhca_ib

#include <linux/overflow.h>
#include <linux/slab.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>
#include <uapi/rdma/vhca_user_ioctl.h>

#include "vhca_loc.h"

/* What an indirect key's access may hold (the header says: rights only). */
#define VHCA_UAPI_INDIRECT_ACCESS (IB_ACCESS_LOCAL_WRITE |		\
				   IB_ACCESS_REMOTE_READ |		\
				   IB_ACCESS_REMOTE_WRITE |		\
				   IB_ACCESS_REMOTE_ATOMIC)

/*
 * A hidden piece of an iovec MR has the MR's rights and kind (ODP or
 * pinned) but no MW_BIND, so no window can hold it past the MR's dereg,
 * and its own address as iova: the indirect key above it gives the MR
 * its iova.
 */
#define VHCA_UAPI_PIECE_DROP (IB_ACCESS_MW_BIND | IB_ZERO_BASED)

static int UVERBS_HANDLER(VHCA_IB_METHOD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *uctx = ib_uverbs_get_ucontext(attrs);
	struct vhca_uapi_caps caps = {
		.abi_version = VHCA_UAPI_ABI_VERSION,
		.max_iov = VHCA_UAPI_MAX_IOV,
		.max_ranges = VHCA_UAPI_MAX_RANGES,
		.max_indirect_depth = MRC_INDIRECT_MAX_DEPTH,
		.max_alloc = VHCA_UAPI_MAX_ALLOC,
	};

	if (IS_ERR(uctx))
		return PTR_ERR(uctx);
	caps.max_mkeys = to_vhca_dev(uctx->device)->mdev.caps.max_mkeys;
	return uverbs_copy_to_struct_or_zero(attrs, VHCA_IB_ATTR_QUERY_RESP,
					     &caps, sizeof(caps));
}

/*
 * The optional requested key: 0 (mrcore chooses) when absent. A key the
 * device can never give (index 0, past max_mkeys, the local DMA key's)
 * is -EKEYREJECTED, as mrc_mkey_alloc_at() says it, where mrc_reg_mr()
 * says -EINVAL; one in use mrcore refuses with -ENOKEY.
 */
static int vhca_uapi_key(struct uverbs_attr_bundle *attrs, u16 idx,
			 struct ib_device *ibdev, u32 *key)
{
	const struct mrc_device *mdev = &to_vhca_dev(ibdev)->mdev;
	u32 index;
	int err;

	*key = 0;
	if (!uverbs_attr_is_valid(attrs, idx))
		return 0;
	err = uverbs_copy_from(key, attrs, idx);
	if (err)
		return err;
	index = mrc_key_index(*key);
	if (*key && (!index || index >= mdev->caps.max_mkeys ||
		     index == mrc_key_index(mdev->local_dma_lkey)))
		return -EKEYREJECTED;
	return 0;
}

/*
 * Access flags and iova, common to both registrations: the flags ib_core
 * knows, checked as ib_uverbs checks reg_mr's (ib_check_mr_access()).
 */
static int vhca_uapi_access_iova(struct uverbs_attr_bundle *attrs,
				 struct ib_device *ibdev, u16 access_idx,
				 u16 iova_idx, u32 *access, u64 *iova)
{
	int err;

	err = uverbs_get_flags32(access, attrs, access_idx,
				 IB_ACCESS_SUPPORTED);
	if (err)
		return err;
	err = ib_check_mr_access(ibdev, *access);
	if (err)
		return err;
	return uverbs_copy_from(iova, attrs, iova_idx);
}

/*
 * Make @mr the new MR object of the method, as ib_uverbs' own MR methods
 * do, and return its keys. The object is committed even when copying a
 * key out fails: ib_uverbs then destroys it with the method's error.
 */
static int vhca_uapi_mr_commit(struct uverbs_attr_bundle *attrs,
			       struct vhca_mr *mr, struct ib_pd *pd,
			       u16 handle_idx, u16 lkey_idx, u16 rkey_idx)
{
	struct ib_uobject *uobj = uverbs_attr_get_uobject(attrs, handle_idx);
	struct ib_mr *ibmr = &mr->ibmr;
	int err;

	ibmr->device = pd->device;
	ibmr->pd = pd;
	ibmr->type = IB_MR_TYPE_USER;
	ibmr->uobject = uobj;
	ibmr->iova = mr->base_mr->iova;
	ibmr->length = mr->base_mr->length;
	atomic_inc(&pd->usecnt);

	rdma_restrack_new(&ibmr->res, RDMA_RESTRACK_MR);
	rdma_restrack_set_name(&ibmr->res, NULL);
	rdma_restrack_add(&ibmr->res);
	uobj->object = ibmr;
	uverbs_finalize_uobj_create(attrs, handle_idx);

	err = uverbs_copy_to(attrs, lkey_idx, &ibmr->lkey, sizeof(ibmr->lkey));
	if (err)
		return err;
	return uverbs_copy_to(attrs, rkey_idx, &ibmr->rkey, sizeof(ibmr->rkey));
}

/* Deregister what vhca_uapi_reg_pieces() registered, last first. */
static void vhca_uapi_drop_pieces(struct mrc_mr **parts, unsigned int n)
{
	while (n--)
		WARN_ON_ONCE(mrc_dereg_mr(parts[n]));
}

/*
 * The hidden user MR of each piece, and the range each becomes in the
 * indirect key above them.
 */
static int vhca_uapi_reg_pieces(struct mrc_pd *pd,
				const struct vhca_uapi_iov *iov,
				unsigned int n, u32 access,
				struct mrc_mr **parts,
				struct mrc_key_range *ranges)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		parts[i] = mrc_reg_user_mr(pd, iov[i].addr, iov[i].length,
					   iov[i].addr, access);
		if (IS_ERR(parts[i])) {
			int err = PTR_ERR(parts[i]);

			vhca_uapi_drop_pieces(parts, i);
			return err;
		}
		ranges[i] = (struct mrc_key_range) {
			.key = parts[i]->key,
			.addr = iov[i].addr,
			.length = iov[i].length,
		};
	}
	return 0;
}

/*
 * REG_IOV of n > 1 pieces: the pieces, then the indirect key over them
 * with the requested key. The ranges are only needed while registering.
 */
static struct mrc_mr *vhca_uapi_reg_iov_indirect(struct vhca_mr *mr,
						 struct mrc_pd *pd,
						 const struct vhca_uapi_iov *iov,
						 unsigned int n, u32 access,
						 u64 iova, u32 key)
{
	struct mrc_reg_attr attr = {
		.type = MRC_MR_INDIRECT,
		.access = access & VHCA_UAPI_INDIRECT_ACCESS,
		.key = key,
		.iova = access & IB_ZERO_BASED ? 0 : iova,
	};
	struct mrc_key_range *ranges;
	struct mrc_mr *base_mr;
	int err;

	mr->parts = kcalloc(n, sizeof(*mr->parts), GFP_KERNEL);
	ranges = kvcalloc(n, sizeof(*ranges), GFP_KERNEL);
	if (!mr->parts || !ranges) {
		err = -ENOMEM;
		goto out_free;
	}
	err = vhca_uapi_reg_pieces(pd, iov, n, access & ~VHCA_UAPI_PIECE_DROP,
				   mr->parts, ranges);
	if (err)
		goto out_free;

	attr.indirect.ranges = ranges;
	attr.indirect.nranges = n;
	base_mr = mrc_reg_mr(pd, &attr);
	if (IS_ERR(base_mr)) {
		err = PTR_ERR(base_mr);
		vhca_uapi_drop_pieces(mr->parts, n);
		goto out_free;
	}
	kvfree(ranges);
	mr->nparts = n;
	return base_mr;

out_free:
	kvfree(ranges);
	kfree(mr->parts);
	mr->parts = NULL;
	return ERR_PTR(err);
}

/* The iovec's pieces: each not empty, their total not wrapping the iova. */
static int vhca_uapi_check_iov(const struct vhca_uapi_iov *iov,
			       unsigned int n, u64 iova)
{
	u64 total = 0, end;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!iov[i].length ||
		    check_add_overflow(iov[i].addr, iov[i].length - 1, &end) ||
		    check_add_overflow(total, iov[i].length, &total))
			return -EINVAL;
	}
	if (check_add_overflow(iova, total - 1, &end))
		return -EINVAL;
	return 0;
}

static int UVERBS_HANDLER(VHCA_IB_METHOD_MR_REG_IOV)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd = uverbs_attr_get_obj(attrs,
						 VHCA_IB_ATTR_REG_IOV_PD_HANDLE);
	struct mrc_pd *pd = &to_vhca_pd(ibpd)->base_pd;
	const struct vhca_uapi_iov *iov;
	struct mrc_mr *base_mr;
	struct vhca_mr *mr;
	struct ib_mr *ibmr;
	u32 access, key, mrc_access;
	u64 iova;
	int n, err;

	n = uverbs_attr_ptr_get_array_size(attrs, VHCA_IB_ATTR_REG_IOV_IOV,
					   sizeof(*iov));
	if (n < 0)
		return n;
	if (!n || n > VHCA_UAPI_MAX_IOV)
		return -EINVAL;
	iov = uverbs_attr_get_alloced_ptr(attrs, VHCA_IB_ATTR_REG_IOV_IOV);
	err = vhca_uapi_access_iova(attrs, ibpd->device,
				    VHCA_IB_ATTR_REG_IOV_ACCESS,
				    VHCA_IB_ATTR_REG_IOV_IOVA, &access, &iova);
	if (err)
		return err;
	err = vhca_uapi_key(attrs, VHCA_IB_ATTR_REG_IOV_KEY, ibpd->device, &key);
	if (err)
		return err;
	err = vhca_uapi_check_iov(iov, n, iova);
	if (err)
		return err;
	/* A window bound to an indirect key is refused anyway; say so now. */
	if (n > 1 && (access & IB_ACCESS_MW_BIND))
		return -EINVAL;
	err = vhca_mr_access(access, &mrc_access);
	if (err)
		return err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	if (n == 1) {
		struct mrc_reg_attr attr = {
			.type = MRC_MR_USER,
			.access = mrc_access,
			.key = key,
			.iova = iova,
			.length = iov[0].length,
			.start = iov[0].addr,
		};

		base_mr = mrc_reg_mr(pd, &attr);
	} else {
		base_mr = vhca_uapi_reg_iov_indirect(mr, pd, iov, n, mrc_access,
						     iova, key);
	}
	ibmr = vhca_mr_attach(mr, base_mr);
	if (IS_ERR(ibmr))
		return PTR_ERR(ibmr);
	return vhca_uapi_mr_commit(attrs, mr, ibpd, VHCA_IB_ATTR_REG_IOV_HANDLE,
				   VHCA_IB_ATTR_REG_IOV_RESP_LKEY,
				   VHCA_IB_ATTR_REG_IOV_RESP_RKEY);
}

/* RANGES: copied as they are; reserved fields 0, no empty or wrapping range. */
static int vhca_uapi_ranges(struct uverbs_attr_bundle *attrs,
			    struct mrc_key_range **out)
{
	const struct vhca_uapi_key_range *in;
	struct mrc_key_range *ranges;
	int n, i;

	n = uverbs_attr_ptr_get_array_size(attrs,
					   VHCA_IB_ATTR_REG_INDIRECT_RANGES,
					   sizeof(*in));
	if (n < 0)
		return n;
	if (!n || n > VHCA_UAPI_MAX_RANGES ||
	    uverbs_attr_is_valid(attrs, VHCA_IB_ATTR_REG_INDIRECT_REPEAT))
		return -EINVAL;
	in = uverbs_attr_get_alloced_ptr(attrs,
					 VHCA_IB_ATTR_REG_INDIRECT_RANGES);
	for (i = 0; i < n; i++) {
		u64 end;

		if (in[i].reserved || !in[i].length ||
		    check_add_overflow(in[i].addr, in[i].length - 1, &end))
			return -EINVAL;
	}

	ranges = kvcalloc(n, sizeof(*ranges), GFP_KERNEL);
	if (!ranges)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		ranges[i] = (struct mrc_key_range) {
			.key = in[i].key,
			.addr = in[i].addr,
			.length = in[i].length,
		};
	*out = ranges;
	return n;
}

/*
 * INTERLEAVED and REPEAT: the strided layout expanded into its range
 * list, repetition by repetition, column by column. Each column's last
 * piece must not wrap its key's address space (mrcore checks the
 * ranges' bounds against the keys when it registers).
 */
static int vhca_uapi_interleaved(struct uverbs_attr_bundle *attrs,
				 struct mrc_key_range **out)
{
	const struct vhca_uapi_interleaved *col;
	struct mrc_key_range *ranges;
	u32 repeat, r;
	u64 stride, last, end;
	int n, i, err;

	n = uverbs_attr_ptr_get_array_size(attrs,
					   VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED,
					   sizeof(*col));
	if (n < 0)
		return n;
	err = uverbs_copy_from(&repeat, attrs,
			       VHCA_IB_ATTR_REG_INDIRECT_REPEAT);
	if (err)
		return err;
	if (!n || !repeat || (u64)n * repeat > VHCA_UAPI_MAX_RANGES)
		return -EINVAL;
	col = uverbs_attr_get_alloced_ptr(attrs,
					  VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED);
	for (i = 0; i < n; i++) {
		if (!col[i].bytes_count ||
		    check_add_overflow((u64)col[i].bytes_count,
				       col[i].bytes_skip, &stride) ||
		    check_mul_overflow(stride, (u64)(repeat - 1), &last) ||
		    check_add_overflow(col[i].addr, last, &last) ||
		    check_add_overflow(last, (u64)col[i].bytes_count - 1, &end))
			return -EINVAL;
	}

	ranges = kvcalloc((size_t)n * repeat, sizeof(*ranges), GFP_KERNEL);
	if (!ranges)
		return -ENOMEM;
	for (r = 0; r < repeat; r++)
		for (i = 0; i < n; i++)
			ranges[r * n + i] = (struct mrc_key_range) {
				.key = col[i].key,
				.addr = col[i].addr + r *
					((u64)col[i].bytes_count +
					 col[i].bytes_skip),
				.length = col[i].bytes_count,
			};
	*out = ranges;
	return n * repeat;
}

static int UVERBS_HANDLER(VHCA_IB_METHOD_MR_REG_INDIRECT)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd =
		uverbs_attr_get_obj(attrs, VHCA_IB_ATTR_REG_INDIRECT_PD_HANDLE);
	bool list = uverbs_attr_is_valid(attrs,
					 VHCA_IB_ATTR_REG_INDIRECT_RANGES);
	bool strided = uverbs_attr_is_valid(attrs,
					    VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED);
	struct mrc_reg_attr attr = { .type = MRC_MR_INDIRECT };
	struct mrc_key_range *ranges;
	struct mrc_mr *base_mr;
	struct vhca_mr *mr;
	struct ib_mr *ibmr;
	u32 access;
	int n, err;

	if (list == strided)
		return -EINVAL;
	err = vhca_uapi_access_iova(attrs, ibpd->device,
				    VHCA_IB_ATTR_REG_INDIRECT_ACCESS,
				    VHCA_IB_ATTR_REG_INDIRECT_IOVA, &access,
				    &attr.iova);
	if (err)
		return err;
	if (access & ~VHCA_UAPI_INDIRECT_ACCESS)
		return -EINVAL;
	attr.access = access;
	err = vhca_uapi_key(attrs, VHCA_IB_ATTR_REG_INDIRECT_KEY, ibpd->device,
			    &attr.key);
	if (err)
		return err;

	n = list ? vhca_uapi_ranges(attrs, &ranges) :
		   vhca_uapi_interleaved(attrs, &ranges);
	if (n < 0)
		return n;
	attr.indirect.ranges = ranges;
	attr.indirect.nranges = n;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		kvfree(ranges);
		return -ENOMEM;
	}
	base_mr = mrc_reg_mr(&to_vhca_pd(ibpd)->base_pd, &attr);
	kvfree(ranges);
	ibmr = vhca_mr_attach(mr, base_mr);
	if (IS_ERR(ibmr))
		return PTR_ERR(ibmr);
	return vhca_uapi_mr_commit(attrs, mr, ibpd,
				   VHCA_IB_ATTR_REG_INDIRECT_HANDLE,
				   VHCA_IB_ATTR_REG_INDIRECT_RESP_LKEY,
				   VHCA_IB_ATTR_REG_INDIRECT_RESP_RKEY);
}

static int UVERBS_HANDLER(VHCA_IB_METHOD_MR_ALLOC)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *ibpd = uverbs_attr_get_obj(attrs,
						 VHCA_IB_ATTR_MR_ALLOC_PD_HANDLE);
	struct ib_ucontext *uctx = ib_uverbs_get_ucontext(attrs);
	struct mrc_reg_attr attr = { .type = MRC_MR_PHYS };
	struct mrc_mr *base_mr;
	struct vhca_mr *mr;
	struct ib_mr *ibmr;
	u64 length, offset;
	u32 access, blocks;
	int err;

	if (IS_ERR(uctx))
		return PTR_ERR(uctx);
	err = uverbs_copy_from(&length, attrs, VHCA_IB_ATTR_MR_ALLOC_LENGTH);
	if (err)
		return err;
	err = vhca_uapi_access_iova(attrs, ibpd->device,
				    VHCA_IB_ATTR_MR_ALLOC_ACCESS,
				    VHCA_IB_ATTR_MR_ALLOC_IOVA, &access,
				    &attr.iova);
	if (err)
		return err;
	/* The memory is the kernel's, resident until dereg: nothing to page. */
	if (access & IB_ACCESS_ON_DEMAND)
		return -EINVAL;
	err = vhca_uapi_key(attrs, VHCA_IB_ATTR_MR_ALLOC_KEY, ibpd->device,
			    &attr.key);
	if (err)
		return err;
	err = vhca_mr_access(access, &attr.access);
	if (err)
		return err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	base_mr = vhca_amr_register(mr, to_vhca_pd(ibpd), uctx, &attr,
				    length, &offset);
	ibmr = vhca_mr_attach(mr, base_mr);
	if (IS_ERR(ibmr))
		return PTR_ERR(ibmr);
	blocks = vhca_amr_blocks(mr);
	err = vhca_uapi_mr_commit(attrs, mr, ibpd,
				  VHCA_IB_ATTR_MR_ALLOC_HANDLE,
				  VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY,
				  VHCA_IB_ATTR_MR_ALLOC_RESP_RKEY);
	if (err)
		return err;
	err = uverbs_copy_to(attrs, VHCA_IB_ATTR_MR_ALLOC_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err)
		return err;
	return uverbs_copy_to(attrs, VHCA_IB_ATTR_MR_ALLOC_RESP_BLOCKS,
			      &blocks, sizeof(blocks));
}

/**
 * vhca_uapi_mr_free_parts - the hidden pieces of an iovec MR
 * @mr: an MR whose key has been deregistered
 *
 * After the indirect key above them: no access can reach them any more
 * through it, and nothing else holds them (they have no MW_BIND).
 */
void vhca_uapi_mr_free_parts(struct vhca_mr *mr)
{
	if (!mr->parts)
		return;
	vhca_uapi_drop_pieces(mr->parts, mr->nparts);
	kfree(mr->parts);
	mr->parts = NULL;
}

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_QUERY,
			    UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_QUERY_RESP,
						UVERBS_ATTR_STRUCT(struct vhca_uapi_caps,
								   reserved),
						UA_MANDATORY));

ADD_UVERBS_METHODS(vhca_uapi_device, UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(VHCA_IB_METHOD_QUERY));

#define VHCA_UAPI_ARRAY_IN(id, type, mandatory) \
	UVERBS_ATTR_PTR_IN(id, UVERBS_ATTR_MIN_SIZE(sizeof(type)), mandatory, \
			   UA_ALLOC_AND_COPY)
#define VHCA_UAPI_KEY_OUT(id) \
	UVERBS_ATTR_PTR_OUT(id, UVERBS_ATTR_TYPE(u32), UA_MANDATORY)
#define VHCA_UAPI_NEW_MR(id) \
	UVERBS_ATTR_IDR(id, UVERBS_OBJECT_MR, UVERBS_ACCESS_NEW, UA_MANDATORY)
#define VHCA_UAPI_PD(id) \
	UVERBS_ATTR_IDR(id, UVERBS_OBJECT_PD, UVERBS_ACCESS_READ, UA_MANDATORY)
#define VHCA_UAPI_ACCESS(id) \
	UVERBS_ATTR_FLAGS_IN(id, enum ib_uverbs_access_flags, UA_MANDATORY)

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_MR_REG_IOV,
			    VHCA_UAPI_NEW_MR(VHCA_IB_ATTR_REG_IOV_HANDLE),
			    VHCA_UAPI_PD(VHCA_IB_ATTR_REG_IOV_PD_HANDLE),
			    VHCA_UAPI_ARRAY_IN(VHCA_IB_ATTR_REG_IOV_IOV,
					       struct vhca_uapi_iov, UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_REG_IOV_IOVA,
					       UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
			    VHCA_UAPI_ACCESS(VHCA_IB_ATTR_REG_IOV_ACCESS),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_REG_IOV_KEY,
					       UVERBS_ATTR_TYPE(u32), UA_OPTIONAL),
			    VHCA_UAPI_KEY_OUT(VHCA_IB_ATTR_REG_IOV_RESP_LKEY),
			    VHCA_UAPI_KEY_OUT(VHCA_IB_ATTR_REG_IOV_RESP_RKEY));

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_MR_REG_INDIRECT,
			    VHCA_UAPI_NEW_MR(VHCA_IB_ATTR_REG_INDIRECT_HANDLE),
			    VHCA_UAPI_PD(VHCA_IB_ATTR_REG_INDIRECT_PD_HANDLE),
			    VHCA_UAPI_ARRAY_IN(VHCA_IB_ATTR_REG_INDIRECT_RANGES,
					       struct vhca_uapi_key_range,
					       UA_OPTIONAL),
			    VHCA_UAPI_ARRAY_IN(VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED,
					       struct vhca_uapi_interleaved,
					       UA_OPTIONAL),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_REG_INDIRECT_REPEAT,
					       UVERBS_ATTR_TYPE(u32), UA_OPTIONAL),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_REG_INDIRECT_IOVA,
					       UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
			    VHCA_UAPI_ACCESS(VHCA_IB_ATTR_REG_INDIRECT_ACCESS),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_REG_INDIRECT_KEY,
					       UVERBS_ATTR_TYPE(u32), UA_OPTIONAL),
			    VHCA_UAPI_KEY_OUT(VHCA_IB_ATTR_REG_INDIRECT_RESP_LKEY),
			    VHCA_UAPI_KEY_OUT(VHCA_IB_ATTR_REG_INDIRECT_RESP_RKEY));

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_MR_ALLOC,
			    VHCA_UAPI_NEW_MR(VHCA_IB_ATTR_MR_ALLOC_HANDLE),
			    VHCA_UAPI_PD(VHCA_IB_ATTR_MR_ALLOC_PD_HANDLE),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_MR_ALLOC_LENGTH,
					       UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_MR_ALLOC_IOVA,
					       UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
			    VHCA_UAPI_ACCESS(VHCA_IB_ATTR_MR_ALLOC_ACCESS),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_MR_ALLOC_KEY,
					       UVERBS_ATTR_TYPE(u32), UA_OPTIONAL),
			    VHCA_UAPI_KEY_OUT(VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY),
			    VHCA_UAPI_KEY_OUT(VHCA_IB_ATTR_MR_ALLOC_RESP_RKEY),
			    UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_MR_ALLOC_RESP_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_MR_ALLOC_RESP_BLOCKS,
						UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

ADD_UVERBS_METHODS(vhca_uapi_mr, UVERBS_OBJECT_MR,
		   &UVERBS_METHOD(VHCA_IB_METHOD_MR_REG_IOV),
		   &UVERBS_METHOD(VHCA_IB_METHOD_MR_REG_INDIRECT),
		   &UVERBS_METHOD(VHCA_IB_METHOD_MR_ALLOC));

/* ib_device.driver_def of every vhca device. */
const struct uapi_definition vhca_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &vhca_uapi_device),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_MR, &vhca_uapi_mr),
	{},
};
