/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Private UAPI of mrcore_test.ko, the test device for mrcore user MRs.
 *
 * It is shared only with tools/testing/selftests/mrcore/mr_tests.c, so it
 * lives next to the module and not under include/uapi (the test_hmm
 * pattern). Every struct has explicit padding, checked to be zero.
 *
 * One open file of /dev/mrcore_test is one context: bind it to an RDMA
 * device once with MRCT_SET_DEVICE, which allocates two PDs (index 0 and
 * 1) on it; then register, access, re-register and deregister user MRs.
 * Any device will do for registration (the benchmark compares vhca with
 * rxe); device reads and writes need a vhca device and are -EOPNOTSUPP on
 * others, where mrct_mr_info carries only the keys.
 * MRs are named by handles the module gives out, never by pointers. The
 * context deregisters what is left when the file is closed, and lets go
 * of the device when it is removed (every later call is then -ENODEV).
 */
#ifndef _MRCORE_TEST_UAPI_H
#define _MRCORE_TEST_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MRCT_DEV_NAME		"mrcore_test"
#define MRCT_NAME_MAX		64	/* IB_DEVICE_NAME_MAX */
#define MRCT_NUM_PDS		2
/* Largest device read or write per call. */
#define MRCT_MAX_XFER		(16U << 20)

/*
 * Access bits for MRCT_REG and MRCT_REREG: the ib_access_flags values.
 * (Plain constants: BIT() is not available to userspace.)
 */
#define MRCT_ACCESS_LOCAL_WRITE		0x1U
#define MRCT_ACCESS_REMOTE_WRITE	0x2U
#define MRCT_ACCESS_REMOTE_READ		0x4U
#define MRCT_ACCESS_REMOTE_ATOMIC	0x8U
#define MRCT_ACCESS_MW_BIND		0x10U
#define MRCT_ACCESS_ZERO_BASED		0x20U
#define MRCT_ACCESS_ON_DEMAND		0x40U
#define MRCT_ACCESS_HUGETLB		0x80U
#define MRCT_ACCESS_RELAXED_ORDERING	0x100000U

/* Rereg flags: the IB_MR_REREG_* values. */
#define MRCT_REREG_TRANS	0x1U
#define MRCT_REREG_PD		0x2U
#define MRCT_REREG_ACCESS	0x4U

/* Access modes reported in mrct_mr_info.mode: enum mrc_access_mode. */
#define MRCT_MODE_PA		0
#define MRCT_MODE_MTT		1
#define MRCT_MODE_KLM		2

/**
 * struct mrct_set_device - MRCT_SET_DEVICE
 * @name: (in) ib_device name, NUL-terminated: a vhca device, or any other
 *	  RDMA device for registration only
 *
 * Return: 0; -ENODEV no such device, or it is being removed; -EBUSY the
 * context is bound already; -EINVAL no NUL in @name; the error of
 * ib_alloc_pd().
 */
struct mrct_set_device {
	char name[MRCT_NAME_MAX];
};

/**
 * struct mrct_mr_info - what the device holds for an MR
 * @lkey: (out) local key
 * @rkey: (out) remote key
 * @entries: (out) MTT or KLM entries, read back from the mkey context
 * @page_shift: (out) MTT page shift (0 in PA and KLM mode)
 * @mode: (out) MRCT_MODE_*
 * @reserved: zero
 *
 * On a device other than vhca only the keys are filled in; @entries,
 * @page_shift and @mode are zero.
 */
struct mrct_mr_info {
	__u32 lkey;
	__u32 rkey;
	__u32 entries;
	__u8 page_shift;
	__u8 mode;
	__u8 reserved[2];
};

/**
 * struct mrct_reg - MRCT_REG: ib_reg_user_mr() on PD @pd
 * @addr: (in) user address of the first byte
 * @length: (in) bytes
 * @iova: (in) I/O virtual address of the first byte
 * @access: (in) MRCT_ACCESS_* bits, passed to mrcore unchecked
 * @pd: (in) PD index, below MRCT_NUM_PDS
 * @handle: (out) the MR's handle in this context, never 0
 * @reserved: zero
 * @info: (out) keys and translation
 *
 * @addr, @length, @iova and @access reach mrcore as given, so its own
 * validation is what the caller sees. Return: 0 or mrcore's errno.
 */
struct mrct_reg {
	__u64 addr;
	__u64 length;
	__u64 iova;
	__u32 access;
	__u32 pd;
	__u32 handle;
	__u32 reserved;
	struct mrct_mr_info info;
};

/* mrct_xfer.flags */
#define MRCT_XFER_REMOTE	0x1U	/* as a responder: REMOTE_* rights */
#define MRCT_XFER_RAW_KEY	0x2U	/* use @key, not @handle */
#define MRCT_XFER_FLAGS		(MRCT_XFER_REMOTE | MRCT_XFER_RAW_KEY)

/**
 * struct mrct_xfer - MRCT_DEV_READ and MRCT_DEV_WRITE
 * @iova: (in) first address, in the key's address space
 * @length: (in) bytes, at most MRCT_MAX_XFER; 0 checks only the key
 * @ptr: (in) user buffer the bytes are copied to (read) or from (write)
 * @handle: (in) MR whose lkey (or rkey, with MRCT_XFER_REMOTE) is used
 * @key: (in) the key itself, with MRCT_XFER_RAW_KEY; any value is allowed
 * @flags: (in) MRCT_XFER_*
 * @pd: (in) PD index of the requester
 *
 * The vhca device moves the bytes through the key, walking the tables in
 * its device memory (vhca_dev_access()): DEV_READ is a local read (a send
 * gathering from the MR) or, with MRCT_XFER_REMOTE, a remote read; DEV_WRITE
 * a local write (a receive) or a remote write. Return: 0, -EOPNOTSUPP when
 * the context's device is not a vhca, or the walker's errno.
 */
struct mrct_xfer {
	__u64 iova;
	__u64 length;
	__u64 ptr;
	__u32 handle;
	__u32 key;
	__u32 flags;
	__u32 pd;
};

/**
 * struct mrct_rereg - MRCT_REREG: the driver's rereg_user_mr
 * @addr: (in) new user address, with MRCT_REREG_TRANS
 * @length: (in) new length, with MRCT_REREG_TRANS
 * @iova: (in) new iova, with MRCT_REREG_TRANS
 * @handle: (in) MR
 * @flags: (in) MRCT_REREG_*
 * @access: (in) new access, with MRCT_REREG_ACCESS
 * @pd: (in) new PD index, with MRCT_REREG_PD
 * @info: (out) keys and translation after the call
 *
 * As uverbs does: no flags is -EINVAL, an unknown flag -EOPNOTSUPP, a
 * page offset of @addr different from @iova's -EINVAL, bad @access
 * -EINVAL; the rest is the driver's. The handle stays the same even when
 * the driver returns a new MR.
 */
struct mrct_rereg {
	__u64 addr;
	__u64 length;
	__u64 iova;
	__u32 handle;
	__u32 flags;
	__u32 access;
	__u32 pd;
	struct mrct_mr_info info;
};

/**
 * struct mrct_dereg - MRCT_DEREG: ib_dereg_mr()
 * @handle: (in) MR; a handle already deregistered is -ENOENT
 * @reserved: zero
 *
 * Handles are given out cyclically, so a freed handle is not reused by
 * the next registration and a second DEREG of it is -ENOENT.
 */
struct mrct_dereg {
	__u32 handle;
	__u32 reserved;
};

/**
 * struct mrct_counters - MRCT_COUNTERS
 * @pinned_vm: (out) pinned_vm of the caller's mm, in pages
 * @mrs: (out) MRs live in this context
 * @reserved: zero
 */
struct mrct_counters {
	__u64 pinned_vm;
	__u32 mrs;
	__u32 reserved;
};

#define MRCT_IOC_MAGIC		0xCF
#define MRCT_SET_DEVICE		_IOW(MRCT_IOC_MAGIC, 0x40, struct mrct_set_device)
#define MRCT_REG		_IOWR(MRCT_IOC_MAGIC, 0x41, struct mrct_reg)
#define MRCT_DEV_READ		_IOW(MRCT_IOC_MAGIC, 0x42, struct mrct_xfer)
#define MRCT_DEV_WRITE		_IOW(MRCT_IOC_MAGIC, 0x43, struct mrct_xfer)
#define MRCT_REREG		_IOWR(MRCT_IOC_MAGIC, 0x44, struct mrct_rereg)
#define MRCT_DEREG		_IOW(MRCT_IOC_MAGIC, 0x45, struct mrct_dereg)
#define MRCT_COUNTERS		_IOR(MRCT_IOC_MAGIC, 0x46, struct mrct_counters)

#endif /* _MRCORE_TEST_UAPI_H */
