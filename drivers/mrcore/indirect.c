// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: indirect keys (the UMR/KLM model).
 *
 * An indirect key is a KLM-mode key whose entries name other memory
 * regions' keys: {bcount, key, address in that key's space}, laid end to
 * end from the indirect key's iova. The device resolves an access through
 * it by walking into the named keys' contexts: each must still be VALID
 * with the entry's exact key, of the indirect key's PD, and hold the
 * entry's range (and a write needs the W bit of its MTT entries). Its
 * context carries MRC_MKEY_F_NESTED_RIGHTS, so the device also checks
 * the access's right against each named key, at every access: an
 * indirect key grants no more than the regions it names grant at the
 * time of the access. A rereg that narrows a named region's rights (same
 * key) stops the accesses through the indirect key that need them once
 * it returns, and a named key freed and registered again at the same
 * value (a requested key) is reached only within the new region's
 * rights. The check at registration below (every named region grants
 * each right asked for) remains, so that a key that could never be used
 * is refused with an errno instead of failing every access.
 *
 * Why the device and not invalidation: mrcore keeps no record of which
 * indirect keys name a region, and invalidating them on every rereg
 * would need one, with its locking, and would leave a window between the
 * region's new context and the invalidation; the device reads the named
 * context in the same walk that moves the bytes. Windows and implicit ODP
 * children are not reached through this flag: a window grants its own
 * rights over an MR that needs none of them, and a child has none.
 *
 * Everything is validated before anything is allocated: each named key is
 * looked up under RCU and must be a live, VALID memory region of the same
 * PD that holds the range and grants the rights asked for. Windows are
 * not memory regions: an indirect key never names one, and no window is
 * bound to an indirect key (mw.c), so neither sits above the other. No
 * reference to the named regions is kept: deregistering one later frees
 * its key, and the device's walks through the entries naming it fail from
 * then on (the entry's key no longer matches a live context). Nesting is
 * bounded: a memory region has depth 0, an indirect key one more than the
 * deepest key it names, at most MRC_INDIRECT_MAX_DEPTH, so the device's
 * walk is bounded too (MRC_WALK_MAX_KEYS). Cycles cannot be built: a key
 * can only name keys that exist before it.
 *
 * An indirect key is a struct mrc_mr of type MRC_MR_INDIRECT, freed with
 * mrc_dereg_mr() like any other.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/build_bug.h>
#include <linux/export.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "mrcore_loc.h"

/* KLM entries encoded per write_xlt, in a 256-byte stack buffer. */
#define MRC_INDIRECT_CHUNK	16

/**
 * struct mrc_indirect - an indirect key
 * @mr: the MR; first, because mrc_dereg_mr() frees it with kfree_rcu() of
 *	its address
 * @depth: 1 + the largest depth of the keys it names
 */
struct mrc_indirect {
	struct mrc_mr mr;
	u8 depth;
};

static_assert(offsetof(struct mrc_indirect, mr) == 0);

/**
 * mrc_indirect_depth - how deep a memory region's key nests
 * @mr: a live MR
 *
 * Context: any context.
 * Return: 0 for a memory region, 1 .. MRC_INDIRECT_MAX_DEPTH for an
 * indirect key.
 */
unsigned int mrc_indirect_depth(const struct mrc_mr *mr)
{
	if (mr->type != MRC_MR_INDIRECT)
		return 0;
	return container_of(mr, struct mrc_indirect, mr)->depth;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_indirect_depth);

/* Entries a range takes: one per MRC_KLM_MAX_BCOUNT bytes. */
static u64 mrc_indirect_entries(u64 length)
{
	return div64_u64(length, MRC_KLM_MAX_BCOUNT) +
	       !!(length % MRC_KLM_MAX_BCOUNT);
}

/* The named MR's side of a range, under RCU; its depth in @depth. */
static int mrc_indirect_check_mr(const struct mrc_pd *pd,
				 const struct mrc_mr *mr,
				 const struct mrc_key_range *r, u32 need,
				 unsigned int *depth)
{
	/* FMRs remap by CPU calls without a REG_MR's ordering. */
	if (mr->type == MRC_MR_FMR)
		return -EINVAL;
	/* Usable now: a fast-reg MR must be VALID. */
	if (mrc_mr_state(mr) != MRC_MKEY_VALID)
		return -EINVAL;
	/* Of the indirect key's PD: it cannot widen what a PD reaches. */
	if (READ_ONCE(mr->pd)->pdn != pd->pdn)
		return -EPERM;
	/* The named MR grants every right the indirect key asks for. */
	if ((mr->access & need) != need)
		return -EPERM;
	/* The range lies inside the named MR. */
	if (r->addr < mr->iova || r->length > mr->length ||
	    r->addr - mr->iova > mr->length - r->length)
		return -ERANGE;
	*depth = mrc_indirect_depth(mr);
	return 0;
}

/* One range: its key looked up and checked; its depth in @depth. */
static int mrc_indirect_check_range(const struct mrc_pd *pd,
				    const struct mrc_key_range *r, u32 need,
				    unsigned int *depth)
{
	struct mrc_device *mdev = pd->mdev;
	enum mrc_mkey_kind kind;
	struct mrc_mr *mr;
	int ret;

	/* Pieces are not empty; the local DMA key is no MR of the PD. */
	if (!r->length || r->key == mdev->local_dma_lkey)
		return -EINVAL;

	rcu_read_lock();
	mr = mrc_mkey_find(mdev, r->key, &kind);
	if (!mr)
		ret = -ENOKEY;
	else if (kind != MRC_MKEY_KIND_MR)
		ret = -EINVAL;
	else
		ret = mrc_indirect_check_mr(pd, mr, r, need, depth);
	rcu_read_unlock();
	return ret;
}

/*
 * Every range checked; the depth of the new key in @depth, its entries in
 * @nentries and its length in @length.
 */
static int mrc_indirect_check(const struct mrc_pd *pd,
			      const struct mrc_key_range *ranges,
			      unsigned int nranges, u64 iova, u32 access,
			      unsigned int *depth, u32 *nentries, u64 *length)
{
	u32 need = access & MRC_ACCESS_HW_MASK;
	u64 end, total = 0, entries = 0;
	unsigned int i, d, max = 0;
	int ret;

	for (i = 0; i < nranges; i++) {
		ret = mrc_indirect_check_range(pd, &ranges[i], need, &d);
		if (ret)
			return ret;
		max = max(max, d);
		if (check_add_overflow(total, ranges[i].length, &total))
			return -EINVAL;
		entries += mrc_indirect_entries(ranges[i].length);
	}
	/* The key's addresses do not wrap; its entries fit a context. */
	if (check_add_overflow(iova, total - 1, &end) || entries > U32_MAX)
		return -EINVAL;
	/* Nesting is bounded, so the device's walk is. */
	if (max + 1 > MRC_INDIRECT_MAX_DEPTH)
		return -ELOOP;

	*depth = max + 1;
	*nentries = entries;
	*length = total;
	return 0;
}

/* Encode every range, split at MRC_KLM_MAX_BCOUNT, a chunk at a time. */
static int mrc_indirect_write_klm(struct mrc_mr *mr,
				  const struct mrc_key_range *ranges,
				  unsigned int nranges)
{
	struct mrc_klm buf[MRC_INDIRECT_CHUNK];
	u64 offset = mr->xlt.offset, addr, left;
	unsigned int i, n = 0;
	u32 bc;
	int ret;

	for (i = 0; i < nranges; i++) {
		addr = ranges[i].addr;
		for (left = ranges[i].length; left; left -= bc, addr += bc) {
			bc = min_t(u64, left, MRC_KLM_MAX_BCOUNT);
			buf[n++] = (struct mrc_klm) {
				.bcount = cpu_to_le32(bc),
				.key = cpu_to_le32(ranges[i].key),
				.addr = cpu_to_le64(addr),
			};
			if (n < ARRAY_SIZE(buf))
				continue;
			ret = mrc_xlt_write(mr->mdev, offset, buf, sizeof(buf));
			if (ret)
				return ret;
			offset += sizeof(buf);
			n = 0;
		}
	}
	if (!n)
		return 0;
	return mrc_xlt_write(mr->mdev, offset, buf, n * sizeof(*buf));
}

/* mrc_install.write: the KLM entries of @arg, the registration's attr. */
static int mrc_indirect_write(struct mrc_mr *mr, const void *arg)
{
	const struct mrc_reg_attr *attr = arg;

	return mrc_indirect_write_klm(mr, attr->indirect.ranges,
				      attr->indirect.nranges);
}

/* mrc_install.ctx: VALID in KLM mode, over the entries just written. */
static void mrc_indirect_ctx(const struct mrc_mr *mr, struct mrc_mkey_ctx *ctx)
{
	*ctx = (struct mrc_mkey_ctx) {
		.key = mr->key,
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_KLM,
		.pdn = mr->pd->pdn,
		.access = mr->access & MRC_ACCESS_HW_MASK,
		.iova = mr->iova,
		.length = mr->length,
		.xlt_offset = mr->xlt.offset,
		.xlt_entries = mr->nentries,
		/* The named keys' rights are checked at every access. */
		.flags = MRC_MKEY_F_NESTED_RIGHTS,
	};
}

/*
 * The checks of an indirect key before allocating: its own arguments,
 * then every range; the depth, entries and length it will have.
 */
static int mrc_indirect_prepare(const struct mrc_pd *pd,
				const struct mrc_reg_attr *attr, u64 *iova,
				unsigned int *depth, u32 *nentries,
				u64 *length)
{
	u32 access = attr->access;
	int ret;

	ret = mrc_check_access(access);
	if (ret)
		return ret;
	if ((access & MRC_ACCESS_MW_BIND) || !attr->indirect.ranges ||
	    !attr->indirect.nranges)
		return -EINVAL;
	if (!(pd->mdev->caps.flags & MRC_CAP_KLM))
		return -EOPNOTSUPP;
	*iova = access & MRC_ACCESS_ZERO_BASED ? 0 : attr->iova;
	return mrc_indirect_check(pd, attr->indirect.ranges,
				  attr->indirect.nranges, *iova, access, depth,
				  nentries, length);
}

/**
 * mrc_indirect_check_attr - the checks of an indirect key
 * @pd: a checked protection domain
 * @attr: type MRC_MR_INDIRECT; its key is checked by the caller
 *
 * The named keys are looked up now: a snapshot, which the registration
 * itself checks again.
 *
 * Context: any context.
 * Return: 0, or the errno mrc_reg_indirect() fails with first.
 */
int mrc_indirect_check_attr(const struct mrc_pd *pd,
			    const struct mrc_reg_attr *attr)
{
	unsigned int depth;
	u32 nentries;
	u64 iova, length;

	return mrc_indirect_prepare(pd, attr, &iova, &depth, &nentries,
				    &length);
}

/**
 * mrc_indirect_reg_attr - register an indirect key
 * @pd: a checked protection domain
 * @attr: type MRC_MR_INDIRECT; a requested key is checked by the caller
 * @umem: NULL (only a user MR takes prepared memory)
 *
 * The body of mrc_reg_indirect(), which is mrc_reg_mr() with key 0.
 *
 * Context: process context; may sleep.
 * Return: the MR, or the ERR_PTR() of mrc_reg_indirect().
 */
struct mrc_mr *mrc_indirect_reg_attr(struct mrc_pd *pd,
				     const struct mrc_reg_attr *attr,
				     struct mrc_umem *umem)
{
	struct mrc_install in = {
		.write = mrc_indirect_write,
		.ctx = mrc_indirect_ctx,
		.arg = attr,
	};
	struct mrc_indirect *ind;
	struct mrc_mr *mr;
	unsigned int depth;
	u32 nentries;
	u64 iova, length;
	int ret;

	ret = mrc_indirect_prepare(pd, attr, &iova, &depth, &nentries,
				   &length);
	if (ret)
		return ERR_PTR(ret);

	mr = mrc_mr_zalloc(pd, MRC_MR_INDIRECT, attr->access, attr->key,
			   sizeof(*ind));
	if (!mr)
		return ERR_PTR(-ENOMEM);
	ind = container_of(mr, struct mrc_indirect, mr);
	ind->depth = depth;
	mr->mode = MRC_ACCESS_MODE_KLM;
	mr->iova = iova;
	mr->length = length;
	mr->nentries = nentries;
	in.xlt_bytes = (u64)nentries * MRC_KLM_ENTRY_SIZE;

	ret = mrc_mr_install(mr, &in);
	if (ret)
		goto out_free_mr;
	mrc_dbg(pd->mdev, "MR[0x%08x] %s: ranges %u entries %u depth %u\n",
		mr->key, __func__, attr->indirect.nranges, nentries, depth);
	return mr;

out_free_mr:
	mrc_mr_free(mr);
	return ERR_PTR(ret);
}
