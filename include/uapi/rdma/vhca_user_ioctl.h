/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * vhca's driver methods: what user space reaches through the uverbs ioctl
 * (RDMA_VERBS_IOCTL on a context's cmd_fd) beyond rxe's user ABI, which
 * vhca otherwise presents. The ids live in the driver namespace
 * (UVERBS_ID_DRIVER_NS); the header's driver_id is RDMA_DRIVER_RXE, the
 * id vhca registers with. A device that is not vhca (rxe) answers them
 * with EPROTONOSUPPORT (no such method), which is how the project's
 * library (libvhca) tells the two apart.
 *
 * Documentation/mrcore/libvhca.rst has the rules; drivers/vhca/uapi.c
 * implements them. Every MR a method makes is a uverbs MR object: the
 * generic DEREG_MR command (ibv_dereg_mr() of librxe's, or libvhca's
 * vhcav_dereg_mr()) frees it, and so does the process's exit.
 */
#ifndef _UAPI_RDMA_VHCA_USER_IOCTL_H
#define _UAPI_RDMA_VHCA_USER_IOCTL_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* Bumped when a method or attribute changes meaning; QUERY reports it. */
#define VHCA_UAPI_ABI_VERSION	1

/* Bounds every method checks (QUERY reports the same numbers). */
#define VHCA_UAPI_MAX_IOV	256	/* REG_IOV entries */
#define VHCA_UAPI_MAX_RANGES	4096	/* REG_INDIRECT ranges, after expansion */
#define VHCA_UAPI_MAX_ALLOC	(1ULL << 30)	/* MR_ALLOC bytes */

/* Methods on UVERBS_OBJECT_DEVICE. */
enum vhca_ib_device_methods {
	VHCA_IB_METHOD_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum vhca_ib_query_attrs {
	VHCA_IB_ATTR_QUERY_RESP = (1U << UVERBS_ID_NS_SHIFT),	/* out: struct vhca_uapi_caps */
};

/**
 * struct vhca_uapi_caps - what QUERY reports
 * @abi_version: VHCA_UAPI_ABI_VERSION of the kernel module
 * @max_iov: VHCA_UAPI_MAX_IOV
 * @max_ranges: VHCA_UAPI_MAX_RANGES
 * @max_indirect_depth: how deep indirect keys nest (a memory region is
 *	depth 0, an indirect key one more than the deepest key it names)
 * @max_mkeys: key slots of the device: a requested key's index (key >> 8)
 *	is below this, and not 0
 * @reserved: 0
 * @max_alloc: VHCA_UAPI_MAX_ALLOC
 */
struct vhca_uapi_caps {
	__u32 abi_version;
	__u32 max_iov;
	__u32 max_ranges;
	__u32 max_indirect_depth;
	__u32 max_mkeys;
	__u32 reserved;
	__aligned_u64 max_alloc;
};

/* Methods on UVERBS_OBJECT_MR. */
enum vhca_ib_mr_methods {
	VHCA_IB_METHOD_MR_REG_IOV = (1U << UVERBS_ID_NS_SHIFT),
	VHCA_IB_METHOD_MR_REG_INDIRECT,
	VHCA_IB_METHOD_MR_ALLOC,
};

/**
 * struct vhca_uapi_iov - one piece of a REG_IOV registration
 * @addr: user address of the first byte
 * @length: bytes, not 0
 */
struct vhca_uapi_iov {
	__aligned_u64 addr;
	__aligned_u64 length;
};

/*
 * REG_IOV: one MR over the pieces of an iovec laid end to end from IOVA
 * (the fi_mr_regv() model), optionally with a requested key. One piece is
 * an ordinary user MR (pinned, or ODP with IB_UVERBS_ACCESS_ON_DEMAND);
 * more become an indirect key over one hidden user MR per piece.
 */
enum vhca_ib_reg_iov_attrs {
	VHCA_IB_ATTR_REG_IOV_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VHCA_IB_ATTR_REG_IOV_PD_HANDLE,
	VHCA_IB_ATTR_REG_IOV_IOV,	/* in: struct vhca_uapi_iov[1 .. MAX_IOV] */
	VHCA_IB_ATTR_REG_IOV_IOVA,	/* in: u64 */
	VHCA_IB_ATTR_REG_IOV_ACCESS,	/* in: flags, enum ib_uverbs_access_flags */
	VHCA_IB_ATTR_REG_IOV_KEY,	/* in: u32, optional: the key to get */
	VHCA_IB_ATTR_REG_IOV_RESP_LKEY,	/* out: u32 */
	VHCA_IB_ATTR_REG_IOV_RESP_RKEY,	/* out: u32 */
};

/**
 * struct vhca_uapi_key_range - one piece of an indirect key
 * @key: the lkey of an MR (or indirect key) of the same PD
 * @reserved: 0
 * @addr: first address of the piece, in @key's address space
 * @length: bytes, not 0
 */
struct vhca_uapi_key_range {
	__u32 key;
	__u32 reserved;
	__aligned_u64 addr;
	__aligned_u64 length;
};

/**
 * struct vhca_uapi_interleaved - one column of a strided layout
 * @key: the lkey of an MR (or indirect key) of the same PD
 * @bytes_count: bytes taken per repetition, not 0
 * @addr: where the first repetition starts, in @key's address space
 * @bytes_skip: bytes skipped after each piece in @key's address space
 *
 * A layout of n columns repeated REPEAT times is the range list
 * (key[j], addr[j] + i * (bytes_count[j] + bytes_skip[j]), bytes_count[j])
 * for i in 0 .. REPEAT - 1, j in 0 .. n - 1, in that order (the UMR
 * "interleaved" layout of the seeds).
 */
struct vhca_uapi_interleaved {
	__u32 key;
	__u32 bytes_count;
	__aligned_u64 addr;
	__aligned_u64 bytes_skip;
};

/*
 * REG_INDIRECT: an indirect key over other keys of the same PD, from a
 * list of ranges or from a strided layout (exactly one of RANGES and
 * INTERLEAVED; REPEAT goes with INTERLEAVED), optionally with a requested
 * key. ACCESS holds rights only (LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE,
 * REMOTE_ATOMIC); every named key must grant what the access uses.
 */
enum vhca_ib_reg_indirect_attrs {
	VHCA_IB_ATTR_REG_INDIRECT_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VHCA_IB_ATTR_REG_INDIRECT_PD_HANDLE,
	VHCA_IB_ATTR_REG_INDIRECT_RANGES,	/* in: struct vhca_uapi_key_range[] */
	VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED,	/* in: struct vhca_uapi_interleaved[] */
	VHCA_IB_ATTR_REG_INDIRECT_REPEAT,	/* in: u32, 1 .. MAX_RANGES */
	VHCA_IB_ATTR_REG_INDIRECT_IOVA,		/* in: u64 */
	VHCA_IB_ATTR_REG_INDIRECT_ACCESS,	/* in: flags, enum ib_uverbs_access_flags */
	VHCA_IB_ATTR_REG_INDIRECT_KEY,		/* in: u32, optional */
	VHCA_IB_ATTR_REG_INDIRECT_RESP_LKEY,	/* out: u32 */
	VHCA_IB_ATTR_REG_INDIRECT_RESP_RKEY,	/* out: u32 */
};

/*
 * MR_ALLOC: the kernel allocates LENGTH bytes (whole pages, zeroed) in
 * physically contiguous blocks, the largest orders first, registers them
 * at IOVA (ZERO_BASED: 0) so the MR needs the fewest translation entries,
 * and returns an mmap offset of the context's cmd_fd through which the
 * caller maps them (MAP_SHARED, exactly LENGTH bytes rounded up to pages;
 * libvhca maps them at IOVA). The pages are charged to the caller's
 * RLIMIT_MEMLOCK (pinned_vm) until the MR is deregistered; a mapping
 * keeps its pages until it is unmapped. ACCESS: no ON_DEMAND.
 */
enum vhca_ib_mr_alloc_attrs {
	VHCA_IB_ATTR_MR_ALLOC_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VHCA_IB_ATTR_MR_ALLOC_PD_HANDLE,
	VHCA_IB_ATTR_MR_ALLOC_LENGTH,		/* in: u64, 1 .. MAX_ALLOC */
	VHCA_IB_ATTR_MR_ALLOC_IOVA,		/* in: u64 */
	VHCA_IB_ATTR_MR_ALLOC_ACCESS,		/* in: flags, enum ib_uverbs_access_flags */
	VHCA_IB_ATTR_MR_ALLOC_KEY,		/* in: u32, optional */
	VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY,	/* out: u32 */
	VHCA_IB_ATTR_MR_ALLOC_RESP_RKEY,	/* out: u32 */
	VHCA_IB_ATTR_MR_ALLOC_RESP_MMAP_OFFSET,	/* out: u64 */
	VHCA_IB_ATTR_MR_ALLOC_RESP_BLOCKS,	/* out: u32, contiguous blocks */
};

#endif /* _UAPI_RDMA_VHCA_USER_IOCTL_H */
