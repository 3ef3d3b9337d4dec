/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca: what the virtual HCA exports to test code.
 *
 * vhca_dev_access() is the device-side path the DMA engine uses: it
 * resolves (key, iova, length) through the mkey context and the MTT/KLM
 * entries it reads back from device memory, checks state, PD, access and
 * range there, and copies the bytes page by page at the DMA addresses the
 * tables name. It never looks at mrcore's CPU-side structures, so a wrong
 * table gives wrong bytes. The rules are in drivers/vhca/walker.c and
 * Documentation/mrcore/vhca.rst.
 *
 * Every call takes an ib_device the caller keeps registered for the call
 * (an ib_client's device, or ib_device_try_get()). None of them sleeps.
 */
#ifndef _RDMA_VHCA_H
#define _RDMA_VHCA_H

#include <linux/container_of.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

/* Direction and rights of a device access (MRC_ACCESS_* names the MR's). */
enum vhca_access_dir {
	VHCA_ACCESS_LOCAL_READ,		/* gather from the MR (send, RDMA write source) */
	VHCA_ACCESS_LOCAL_WRITE,	/* scatter into the MR (receive, RDMA read sink) */
	VHCA_ACCESS_REMOTE_READ,	/* responder reads the MR */
	VHCA_ACCESS_REMOTE_WRITE,	/* responder writes the MR */
	VHCA_ACCESS_ATOMIC_READ,	/* responder reads an atomic's target */
	VHCA_ACCESS_ATOMIC_WRITE,	/* responder writes an atomic's result */
	VHCA_ACCESS_ATOMIC_STORE,	/* responder stores an ATOMIC WRITE's 8 bytes */
};

/**
 * vhca_dev_access - move bytes between a kernel buffer and memory named by a key
 * @ibdev: a vhca ib_device
 * @pdn: PD number of the requester (the QP's PD); checked against the context
 * @key: lkey or rkey
 * @iova: first address, in the key's address space
 * @buf: kernel buffer, or NULL to check the whole walk without moving bytes
 * @len: bytes; 0 is allowed and checks only the key, PD and rights
 * @dir: enum vhca_access_dir
 *
 * The access is made on no QP: a type 2 memory window (bound to a QP)
 * refuses it for the remote directions.
 *
 * Return: 0; -ENODEV if @ibdev is not a vhca; -ENOKEY for a key whose
 * context is not VALID or whose variant differs (a key a KLM entry names
 * included); -EPERM for a PD mismatch (a named key of another PD
 * included), a missing right, or a remote access through a type 2
 * window; -ERANGE when [iova, iova + len) is outside the key or wraps;
 * -EFAULT for a translation entry without the R/W bit the access needs,
 * or a DMA address with no page behind it; -EINVAL for a bad @dir, a
 * malformed context or table, or keys nested too deep. On an error, bytes
 * of the pieces before the failing one may have been moved.
 */
int vhca_dev_access(struct ib_device *ibdev, u32 pdn, u32 key, u64 iova,
		    void *buf, size_t len, enum vhca_access_dir dir);

/**
 * vhca_mkey_info - read back what the device holds for a key
 * @ibdev: a vhca ib_device
 * @key: key
 * @page_shift: out: MTT page shift (0 for PA/KLM)
 * @entries: out: translation entries (0 for PA)
 * @mode: out: enum mrc_access_mode
 *
 * Return: 0; -ENODEV if @ibdev is not a vhca; -ENOKEY if the device does
 * not hold @key as VALID.
 */
int vhca_mkey_info(struct ib_device *ibdev, u32 key, u8 *page_shift,
		   u32 *entries, u8 *mode);

/* The PD number behind an ib_pd of a vhca device; 0 for any other PD. */
u32 vhca_pd_pdn(struct ib_pd *ibpd);

struct mrc_pd;
struct mrc_mr;

/* mrcore's PD / MR behind a vhca ib_pd / ib_mr; NULL for other devices. */
struct mrc_pd *vhca_pd_mrc(struct ib_pd *ibpd);
struct mrc_mr *vhca_mr_mrc(struct ib_mr *ibmr);

/**
 * struct vhca_bind_mw_wr - a Bind Memory Window work request (type 2)
 * @wr: the WR, with opcode IB_WR_BIND_MW; no SGEs are read
 * @mw_rkey: the window's new rkey: the key of a type 2 window (from
 *	mrc_alloc_mw()) with the same index and any variant, as
 *	ib_inc_rkey() makes one
 * @mr_lkey: the key of the MR the window is bound to: an MR of the QP's
 *	PD registered with IB_ACCESS_MW_BIND
 * @addr: first address of the window, in the MR's address space
 * @length: bytes of the window, inside the MR
 * @access: IB_ACCESS_REMOTE_* rights of the window, a subset of the
 *	MR's, with IB_ZERO_BASED for a window whose addresses start at 0
 *
 * 6.1's ib_verbs.h has the opcode (IB_WR_BIND_MW, completing as
 * IB_WC_BIND_MW, failing as IB_WC_MW_BIND_ERR) but no kernel WR struct
 * for it: kernel callers of a vhca RC QP post this one, with
 * &bind.wr as the WR. The device executes it in QP order, binding the
 * window to the MR and to the QP it was posted on
 * (mrc_mw_exec_bind()): remote accesses through @mw_rkey are then
 * accepted on that QP only. A refused bind completes with
 * IB_WC_MW_BIND_ERR and moves the QP to the error state. Type 1 windows
 * are bound with mrc_bind_mw(), not with a WR.
 */
struct vhca_bind_mw_wr {
	struct ib_send_wr wr;
	u32 mw_rkey;
	u32 mr_lkey;
	u64 addr;
	u64 length;
	u32 access;
};

/* The Bind MW WR @wr (opcode IB_WR_BIND_MW) is part of. */
static inline const struct vhca_bind_mw_wr *
vhca_bind_mw_wr(const struct ib_send_wr *wr)
{
	return container_of(wr, struct vhca_bind_mw_wr, wr);
}

#endif /* _RDMA_VHCA_H */
