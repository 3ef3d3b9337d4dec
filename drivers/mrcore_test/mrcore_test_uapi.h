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
 *
 * The data path is tested through loopback RC pairs (MRCT_QP_*) built on
 * the context's PDs with standard kernel verbs, so they work on any RoCE
 * device: the same cases run on vhca and on rxe.
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
#define MRCT_MODE_KSM		3

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

/*
 * Data path: a loopback RC pair.
 *
 * MRCT_QP_CREATE builds two RC QPs, A (index 0) and B (index 1), on the
 * context's PD @pd, each with a CQ of its own for sends and receives, and
 * connects them to each other by hand over the first RoCE v2 GID of port 1
 * that maps an IPv4 address: INIT (qp_access_flags = @access), RTR (path
 * MTU 1024, peer QPN, PSN 0, min_rnr_timer 12), RTS (timeout 14,
 * retry_cnt 7, rnr_retry 7). MRs for the SGEs and the remote side are
 * registered with MRCT_REG on the same context: a key is just a number
 * here, so a test may pass any value (key + 1, a deregistered key, a key
 * of the other PD).
 *
 * MRCT_QP_POST posts one signaled send WR on one QP of the pair and waits
 * up to MRCT_QP_WAIT_MS for its completion; a receive for a SEND is posted
 * before, on the peer, with MRCT_QP_POST_RECV. Post-time errors are
 * results, not ioctl errors: @post_err is what ib_post_send() returned and
 * @bad_wr whether it pointed at the WR. The pair is gone with
 * MRCT_QP_DESTROY, or when the file is closed, in any QP state.
 */
#define MRCT_QP_MAX_SGE		32
/* Inline bytes MRCT_QP_POST copies into the kernel for IB_SEND_INLINE. */
#define MRCT_QP_MAX_INLINE	4096
/* Send and receive slots of each QP of a pair; pairs per context. */
#define MRCT_QP_DEPTH		16
#define MRCT_MAX_PAIRS		64
/*
 * How long MRCT_QP_POST waits for a completion (the bench loops: for the
 * next one). It bounds a failure only, the wait ends at the completion;
 * a minute, as a debug kernel under TCG on a busy host stalls for seconds.
 */
#define MRCT_QP_WAIT_MS		60000

/* mrct_qp_create.flags (out) */
#define MRCT_QP_F_VHCA		0x1U	/* the device is a vhca */
#define MRCT_QP_F_ATOMIC	0x2U	/* atomic_cap is not IB_ATOMIC_NONE */

/* WR opcodes: the enum ib_wr_opcode values (MRCT_QP_POST passes any). */
#define MRCT_WR_RDMA_WRITE		0
#define MRCT_WR_SEND			2
#define MRCT_WR_RDMA_READ		4
#define MRCT_WR_ATOMIC_CMP_AND_SWP	5
#define MRCT_WR_ATOMIC_FETCH_AND_ADD	6
#define MRCT_WR_LSO			10

/* Send flags accepted by MRCT_QP_POST: the IB_SEND_* values. */
#define MRCT_SEND_FENCE		0x1U
#define MRCT_SEND_SOLICITED	0x4U
#define MRCT_SEND_INLINE	0x8U
#define MRCT_SEND_FLAGS		(MRCT_SEND_FENCE | MRCT_SEND_SOLICITED | \
				 MRCT_SEND_INLINE)

/* Completion statuses: the enum ib_wc_status values. */
#define MRCT_WC_SUCCESS		0
#define MRCT_WC_LOC_LEN_ERR	1
#define MRCT_WC_LOC_QP_OP_ERR	2
#define MRCT_WC_LOC_PROT_ERR	4
#define MRCT_WC_WR_FLUSH_ERR	5
#define MRCT_WC_LOC_ACCESS_ERR	8
#define MRCT_WC_REM_INV_REQ_ERR	9
#define MRCT_WC_REM_ACCESS_ERR	10
#define MRCT_WC_REM_OP_ERR	11
#define MRCT_WC_RETRY_EXC_ERR	12
#define MRCT_WC_RNR_RETRY_EXC_ERR 13
/* Not a status: no completion was polled (post failed, or not waited). */
#define MRCT_WC_NONE		0xffffffffU

/* Completion opcodes: the enum ib_wc_opcode values. */
#define MRCT_WC_SEND		0
#define MRCT_WC_RDMA_WRITE	1
#define MRCT_WC_RDMA_READ	2
#define MRCT_WC_COMP_SWAP	3
#define MRCT_WC_FETCH_ADD	4
#define MRCT_WC_RECV		0x80

/* QP states: the enum ib_qp_state values; UNKNOWN if query_qp failed. */
#define MRCT_QPS_RESET		0
#define MRCT_QPS_INIT		1
#define MRCT_QPS_RTR		2
#define MRCT_QPS_RTS		3
#define MRCT_QPS_ERR		6
#define MRCT_QPS_UNKNOWN	0xffffffffU

/* mrct_qp_post.bad_wr and mrct_qp_recv.bad_wr */
#define MRCT_BAD_WR_NULL	0	/* bad_wr left NULL */
#define MRCT_BAD_WR_SELF	1	/* bad_wr == the WR posted */
#define MRCT_BAD_WR_OTHER	2	/* bad_wr set to something else */

/**
 * struct mrct_sge - one scatter/gather entry, as struct ib_sge
 * @addr: address in the key's address space (its iova); with
 *	  MRCT_SEND_INLINE, a user address of the caller instead
 * @length: bytes
 * @lkey: local key, passed as given
 */
struct mrct_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/**
 * struct mrct_qp_create - MRCT_QP_CREATE: a connected loopback RC pair
 * @pd: (in) PD index of both QPs, below MRCT_NUM_PDS
 * @access: (in) qp_access_flags of both QPs: MRCT_ACCESS_LOCAL_WRITE and
 *	    MRCT_ACCESS_REMOTE_{WRITE,READ,ATOMIC} only
 * @max_send_sge: (in/out) requested, then what the device granted
 * @max_recv_sge: (in/out) requested, then granted
 * @max_inline: (in/out) max_inline_data requested, then granted
 * @handle: (out) the pair's handle in this context, never 0
 * @qpn: (out) QP numbers of A and B
 * @local_dma_lkey: (out) the PD's local_dma_lkey
 * @gid_index: (out) the sgid index both QPs use (the dgid is the same GID)
 * @gid: (out) that GID
 * @flags: (out) MRCT_QP_F_*
 * @reserved: zero
 *
 * Each QP has MRCT_QP_DEPTH send and MRCT_QP_DEPTH receive slots; the
 * caps reported are A's (B is created the same way). Return: 0; -EINVAL bad
 * input; -ENODEV no device bound; -EADDRNOTAVAIL no RoCE v2 IPv4 GID on
 * port 1; -EOPNOTSUPP port 1 is not RoCE; -EMFILE too many pairs; the
 * errno of ib_alloc_cq(), ib_create_qp() or ib_modify_qp().
 */
struct mrct_qp_create {
	__u32 pd;
	__u32 access;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline;
	__u32 handle;
	__u32 qpn[2];
	__u32 local_dma_lkey;
	__u32 gid_index;
	__u8 gid[16];
	__u32 flags;
	__u32 reserved;
};

/**
 * struct mrct_qp_destroy - MRCT_QP_DESTROY
 * @handle: (in) pair; one already destroyed is -ENOENT
 * @reserved: zero
 */
struct mrct_qp_destroy {
	__u32 handle;
	__u32 reserved;
};

/* mrct_qp_post.flags */
#define MRCT_POST_WAIT_RECV	0x1U	/* also wait for a receive on the peer */
#define MRCT_POST_FLAGS		MRCT_POST_WAIT_RECV

/**
 * struct mrct_qp_post - MRCT_QP_POST: post one send WR and wait for it
 * @remote_addr: (in) RDMA/atomic target, in the rkey's address space
 * @compare_add: (in) atomic compare (CMP_AND_SWP) or add (FETCH_AND_ADD)
 * @swap: (in) atomic swap value
 * @handle: (in) pair
 * @qp: (in) 0: post on A (peer B), 1: post on B (peer A)
 * @opcode: (in) enum ib_wr_opcode, passed unchecked but for REG_MR,
 *	    REG_MR_INTEGRITY and BIND_MW (-EINVAL: their WRs are containers
 *	    this ioctl does not build)
 * @send_flags: (in) MRCT_SEND_*; IB_SEND_SIGNALED is always added
 * @rkey: (in) remote key, passed unchecked
 * @num_sge: (in) entries of @sge, at most MRCT_QP_MAX_SGE, passed unchecked
 *	     against the QP's max_send_sge
 * @flags: (in) MRCT_POST_*
 * @post_err: (out) ib_post_send()'s return value
 * @bad_wr: (out) MRCT_BAD_WR_*
 * @status: (out) the send completion's status, or MRCT_WC_NONE
 * @wc_opcode: (out) its opcode (meaningful on success only)
 * @byte_len: (out) its byte_len
 * @vendor_err: (out) its vendor_err
 * @recv_status: (out) with MRCT_POST_WAIT_RECV and a successful send: the
 *		 peer's receive completion's status, else MRCT_WC_NONE
 * @recv_opcode: (out) its opcode
 * @recv_byte_len: (out) its byte_len
 * @qp_state: (out) state of the posting QP and of its peer after the
 *	      completion, MRCT_QPS_*; after an error completion the module
 *	      waits up to a second for the posting QP to reach ERR
 * @reserved: zero
 * @sge: (in) local gather (or, for a READ or an atomic, scatter) list
 *
 * The WR is signaled, with a wr_id of the module's. With MRCT_SEND_INLINE
 * the SGE addresses are user addresses: the module copies the bytes (at
 * most MRCT_QP_MAX_INLINE in all) into a kernel buffer and posts that.
 * Return: 0 once the WR was rejected at post or completed (see @post_err
 * and @status); -ETIMEDOUT no completion within MRCT_QP_WAIT_MS (the pair
 * then refuses further posts with -EIO: destroy it); -EINTR a fatal
 * signal; -ENODEV the device is being removed; -ENOENT no such pair;
 * -EINVAL bad input.
 */
struct mrct_qp_post {
	__u64 remote_addr;
	__u64 compare_add;
	__u64 swap;
	__u32 handle;
	__u32 qp;
	__u32 opcode;
	__u32 send_flags;
	__u32 rkey;
	__u32 num_sge;
	__u32 flags;
	__s32 post_err;
	__u32 bad_wr;
	__u32 status;
	__u32 wc_opcode;
	__u32 byte_len;
	__u32 vendor_err;
	__u32 recv_status;
	__u32 recv_opcode;
	__u32 recv_byte_len;
	__u32 qp_state[2];
	__u32 reserved[2];
	struct mrct_sge sge[MRCT_QP_MAX_SGE];
};

/**
 * struct mrct_qp_recv - MRCT_QP_POST_RECV: post one receive, do not wait
 * @handle: (in) pair
 * @qp: (in) 0: on A's receive queue, 1: on B's
 * @num_sge: (in) entries of @sge, at most MRCT_QP_MAX_SGE, passed unchecked
 *	     against the QP's max_recv_sge
 * @post_err: (out) ib_post_recv()'s return value
 * @bad_wr: (out) MRCT_BAD_WR_*
 * @reserved: zero
 * @sge: (in) scatter list, addresses in the lkeys' address spaces
 *
 * Its completion is collected by the MRCT_QP_POST that sends to it
 * (MRCT_POST_WAIT_RECV). Return: 0 (see @post_err); -ENOENT no such
 * pair; -EINVAL bad input; -EIO the pair timed out before.
 */
struct mrct_qp_recv {
	__u32 handle;
	__u32 qp;
	__u32 num_sge;
	__s32 post_err;
	__u32 bad_wr;
	__u32 reserved;
	struct mrct_sge sge[MRCT_QP_MAX_SGE];
};

/*
 * Benchmarks: the data path's copy rate beside a plain memcpy.
 *
 * MRCT_BENCH_MEMCPY copies between two kernel buffers of its own in a loop;
 * MRCT_BENCH_WRITE has one QP of a loopback pair (MRCT_QP_CREATE) execute
 * RDMA WRITEs in a loop, with up to @depth signaled WRs in flight, polling
 * the CQ itself. Each runs for at least @min_ns (at most
 * MRCT_BENCH_MAX_NS) and reports what it did and how long that took, so
 * the caller computes the rate.
 */
#define MRCT_BENCH_MAX_LEN	(16U << 20)
#define MRCT_BENCH_MAX_NS	10000000000ULL

/**
 * struct mrct_bench_memcpy - MRCT_BENCH_MEMCPY: memcpy() in the kernel
 * @length: (in) bytes per copy, 1 to MRCT_BENCH_MAX_LEN
 * @min_ns: (in) copy until this much time has passed
 * @copies: (out) copies done
 * @elapsed_ns: (out) time from the first copy's start to the last's end
 *
 * The buffers are kvmalloc()ed and written once before the timed loop, so
 * they are as warm as the caches of the size allow. Needs no device.
 * Return: 0; -EINVAL bad input; -ENOMEM; -EINTR a fatal signal.
 */
struct mrct_bench_memcpy {
	__u64 length;
	__u64 min_ns;
	__u64 copies;
	__u64 elapsed_ns;
};

/**
 * struct mrct_bench_write - MRCT_BENCH_WRITE: RDMA WRITEs in a loop
 * @local_addr: (in) source of every WR, in @lkey's address space
 * @remote_addr: (in) target of every WR, in @rkey's address space
 * @min_ns: (in) post new WRs until this much time has passed, then wait
 *	    for those in flight
 * @wrs: (out) WRs that completed successfully
 * @elapsed_ns: (out) time from the first post to the last completion
 * @handle: (in) pair
 * @qp: (in) 0: post on A (to B), 1: post on B (to A)
 * @length: (in) bytes per WR, at least 1 (one SGE)
 * @lkey: (in) local key, passed as given
 * @rkey: (in) remote key, passed as given
 * @depth: (in) WRs in flight at most, 1 to MRCT_QP_DEPTH
 * @status: (out) MRCT_WC_SUCCESS, or the first failed completion's status
 *	    (posting then stops)
 * @post_err: (out) ib_post_send()'s error, if it failed (posting then
 *	      stops)
 *
 * Every WR is signaled, with a wr_id of the module's. Return: 0 once
 * every WR posted has completed (see @status and @post_err); -ETIMEDOUT
 * no completion for MRCT_QP_WAIT_MS (the pair then refuses further work
 * with -EIO); -EINTR a fatal signal and -ENODEV the device's removal (the
 * same); -ENOENT no such pair; -EINVAL bad input.
 */
struct mrct_bench_write {
	__u64 local_addr;
	__u64 remote_addr;
	__u64 min_ns;
	__u64 wrs;
	__u64 elapsed_ns;
	__u32 handle;
	__u32 qp;
	__u32 length;
	__u32 lkey;
	__u32 rkey;
	__u32 depth;
	__u32 status;
	__s32 post_err;
};

#define MRCT_IOC_MAGIC		0xCF
#define MRCT_SET_DEVICE		_IOW(MRCT_IOC_MAGIC, 0x40, struct mrct_set_device)
#define MRCT_REG		_IOWR(MRCT_IOC_MAGIC, 0x41, struct mrct_reg)
#define MRCT_DEV_READ		_IOW(MRCT_IOC_MAGIC, 0x42, struct mrct_xfer)
#define MRCT_DEV_WRITE		_IOW(MRCT_IOC_MAGIC, 0x43, struct mrct_xfer)
#define MRCT_REREG		_IOWR(MRCT_IOC_MAGIC, 0x44, struct mrct_rereg)
#define MRCT_DEREG		_IOW(MRCT_IOC_MAGIC, 0x45, struct mrct_dereg)
#define MRCT_COUNTERS		_IOR(MRCT_IOC_MAGIC, 0x46, struct mrct_counters)
#define MRCT_QP_CREATE		_IOWR(MRCT_IOC_MAGIC, 0x47, struct mrct_qp_create)
#define MRCT_QP_DESTROY		_IOW(MRCT_IOC_MAGIC, 0x48, struct mrct_qp_destroy)
#define MRCT_QP_POST		_IOWR(MRCT_IOC_MAGIC, 0x49, struct mrct_qp_post)
#define MRCT_QP_POST_RECV	_IOWR(MRCT_IOC_MAGIC, 0x4A, struct mrct_qp_recv)
#define MRCT_BENCH_MEMCPY	_IOWR(MRCT_IOC_MAGIC, 0x4B, struct mrct_bench_memcpy)
#define MRCT_BENCH_WRITE	_IOWR(MRCT_IOC_MAGIC, 0x4C, struct mrct_bench_write)

/* FRWR ------------------------------------------------------------------ */

/*
 * Fast registration (mrcore_test_frwr.c), with standard kernel verbs only,
 * so the same calls run on vhca and rxe.
 *
 * MRCT_FRWR_ALLOC allocates an IB_MR_TYPE_MEM_REG MR with ib_alloc_mr() and
 * a buffer of its own: @nchunks chunks of 2^@chunk_shift bytes, each a
 * naturally aligned block of pages DMA-mapped on the device. MRCT_FRWR_REG
 * maps a page list taken from that buffer (chunk @first, then @first +
 * @stride, ..., modulo @nchunks) with ib_map_mr_sg() and posts IB_WR_REG_MR
 * on a loopback pair's QP (MRCT_QP_CREATE); MRCT_FRWR_INV posts
 * IB_WR_LOCAL_INV or IB_WR_SEND_WITH_INV with any key. MRCT_FRWR_XFER moves
 * bytes over the pair between the MR, through an rkey, and a staging
 * buffer of the module's (the PD's local_dma_lkey), and compares them with
 * what the CPU sees in the pages the last successful REG_MR mapped.
 * MRCT_FRWR_CYCLE runs REG_MR / RDMA WRITE / verify / LOCAL_INV cycles on
 * one MR with a page list that changes every cycle (ANCHORS item 27), and
 * MRCT_FRWR_BENCH times REG_MR + LOCAL_INV cycles on MRs of its own.
 *
 * As with MRCT_QP_POST, what the device did is a result, not an ioctl
 * error: post errors, completion statuses (MRCT_WC_*) and QP states come
 * back in the struct, and every call waits for its completions (at most
 * MRCT_QP_WAIT_MS each; -ETIMEDOUT wedges the pair). The MRs are freed
 * with MRCT_FRWR_FREE, or when the file is closed.
 */
#define MRCT_FRWR_MAX_MRS		16	/* per context */
#define MRCT_FRWR_MAX_CHUNKS		1024	/* per MR buffer */
#define MRCT_FRWR_MAX_BUF		(16U << 20)	/* bytes per MR buffer */
/* Bytes of the staging buffer: the most one RDMA WR of MRCT_FRWR_XFER moves. */
#define MRCT_FRWR_STAGING_SIZE		(64U << 10)
#define MRCT_FRWR_MAX_CYCLES		1000000
#define MRCT_FRWR_BENCH_MAX_PAGES	512

/* More enum ib_wr_opcode, ib_wc_status and ib_wc_flags values. */
#define MRCT_WR_LOCAL_INV		7
#define MRCT_WR_SEND_WITH_INV		9
#define MRCT_WC_MW_BIND_ERR		6
#define MRCT_WC_WITH_INVALIDATE		0x4U

/**
 * struct mrct_frwr_alloc - MRCT_FRWR_ALLOC: an FRWR MR and its buffer
 * @pd: (in) PD index of the MR
 * @max_pages: (in) ib_alloc_mr()'s max_num_sg, passed unchecked
 * @nchunks: (in) chunks of the buffer, 1 to MRCT_FRWR_MAX_CHUNKS
 * @chunk_shift: (in) log2 of a chunk's bytes: 12 (a page) to 21 (2 MiB);
 *		 at most MRCT_FRWR_MAX_BUF bytes in all
 * @handle: (out) the MR's handle among the context's FRWR MRs, never 0
 * @lkey: (out) the MR's lkey
 * @rkey: (out) its rkey
 * @dev_max_pages: (out) the device's max_fast_reg_page_list_len
 * @page_size_cap: (out) the device's page_size_cap
 *
 * Return: 0; -EINVAL bad input; -ENODEV no device bound; -EMFILE
 * MRCT_FRWR_MAX_MRS already; -ENOMEM (a chunk larger than a page may not
 * be available); or ib_alloc_mr()'s errno, as the driver returned it.
 */
struct mrct_frwr_alloc {
	__u32 pd;
	__u32 max_pages;
	__u32 nchunks;
	__u32 chunk_shift;
	__u32 handle;
	__u32 lkey;
	__u32 rkey;
	__u32 dev_max_pages;
	__u64 page_size_cap;
};

/**
 * struct mrct_frwr_free - MRCT_FRWR_FREE: ib_dereg_mr() and the buffer
 * @handle: (in) FRWR MR; one already freed is -ENOENT
 * @reserved: zero
 */
struct mrct_frwr_free {
	__u32 handle;
	__u32 reserved;
};

/* mrct_frwr_reg.flags: the key of the REG_MR WR (at most one). */
#define MRCT_FRWR_KEY_NEXT	0x1U	/* ib_update_fast_reg_key(variant + 1) */
#define MRCT_FRWR_KEY_SET	0x2U	/* ib_update_fast_reg_key(@key & 0xff) */
#define MRCT_FRWR_RAW_KEY	0x4U	/* @key as given; the MR's keys unchanged */

/**
 * struct mrct_frwr_reg - MRCT_FRWR_REG: map a page list and post REG_MR
 * @handle: (in) FRWR MR
 * @pair: (in) pair whose QP posts the WR
 * @qp: (in) 0: QP A, 1: QP B
 * @access: (in) the WR's access (MRCT_ACCESS_*), passed unchecked
 * @flags: (in) MRCT_FRWR_KEY_NEXT, _KEY_SET or _RAW_KEY; none: the MR's
 *	   current key
 * @key: (in) the variant (KEY_SET) or the whole key (RAW_KEY); else 0
 * @first: (in) buffer chunk of the first scatterlist entry
 * @stride: (in) entry i is chunk (@first + i * @stride) % nchunks
 * @offset: (in) byte offset into the first chunk (ib_map_mr_sg's sg_offset)
 * @page_size: (in) ib_map_mr_sg()'s page_size, passed unchecked
 * @length: (in) bytes from @offset; the entries are the chunks that holds
 * @iova: (out) the MR's iova after ib_map_mr_sg()
 * @map_ret: (out) what ib_map_mr_sg() returned; the WR is posted only
 *	     when it is @nents
 * @nents: (out) scatterlist entries
 * @post_err: (out) ib_post_send()'s return value
 * @bad_wr: (out) MRCT_BAD_WR_*
 * @status: (out) the completion's status, or MRCT_WC_NONE
 * @lkey: (out) the MR's lkey after the call
 * @rkey: (out) its rkey
 * @qp_state: (out) posting QP and peer after the completion, MRCT_QPS_*
 * @reserved: zero
 *
 * The WR carries the key the MR has after the update @flags asks for
 * (made only when the WR is posted), or @key with MRCT_FRWR_RAW_KEY.
 * After a successful completion the module records the page list, for
 * MRCT_FRWR_XFER. Return: 0 (see the results); -ENOENT no such MR or
 * pair; -EINVAL bad input (a page list beyond the buffer); -EIO the pair
 * is wedged; -ETIMEDOUT, -EINTR, -ENODEV as MRCT_QP_POST.
 */
struct mrct_frwr_reg {
	__u32 handle;
	__u32 pair;
	__u32 qp;
	__u32 access;
	__u32 flags;
	__u32 key;
	__u32 first;
	__u32 stride;
	__u32 offset;
	__u32 page_size;
	__u64 length;
	__u64 iova;
	__s32 map_ret;
	__u32 nents;
	__s32 post_err;
	__u32 bad_wr;
	__u32 status;
	__u32 lkey;
	__u32 rkey;
	__u32 qp_state[2];
	__u32 reserved;
};

/**
 * struct mrct_frwr_inv - MRCT_FRWR_INV: LOCAL_INV or Send with Invalidate
 * @pair: (in) pair
 * @qp: (in) 0: post on A, 1: post on B
 * @opcode: (in) MRCT_WR_LOCAL_INV or MRCT_WR_SEND_WITH_INV (zero bytes)
 * @key: (in) invalidate_rkey, any value
 * @flags: (in) MRCT_POST_WAIT_RECV (Send with Invalidate only): also wait
 *	   for the peer's receive, posted before with MRCT_QP_POST_RECV
 * @post_err: (out) ib_post_send()'s return value
 * @bad_wr: (out) MRCT_BAD_WR_*
 * @status: (out) the send completion's status, or MRCT_WC_NONE
 * @recv_status: (out) with MRCT_POST_WAIT_RECV, once the send completed
 *		 with MRCT_WC_SUCCESS or MRCT_WC_REM_INV_REQ_ERR: the
 *		 receive's status; else MRCT_WC_NONE
 * @recv_wc_flags: (out) its wc_flags (MRCT_WC_WITH_INVALIDATE)
 * @recv_inv_rkey: (out) its invalidate_rkey, with MRCT_WC_WITH_INVALIDATE
 * @qp_state: (out) posting QP and peer after the completion(s)
 * @reserved: zero
 *
 * Return: as MRCT_FRWR_REG.
 */
struct mrct_frwr_inv {
	__u32 pair;
	__u32 qp;
	__u32 opcode;
	__u32 key;
	__u32 flags;
	__s32 post_err;
	__u32 bad_wr;
	__u32 status;
	__u32 recv_status;
	__u32 recv_wc_flags;
	__u32 recv_inv_rkey;
	__u32 qp_state[2];
	__u32 reserved;
};

/* mrct_frwr_xfer.dir */
#define MRCT_FRWR_WRITE		0	/* RDMA WRITE staging -> MR */
#define MRCT_FRWR_READ		1	/* RDMA READ MR -> staging */
/* mrct_frwr_xfer.flags */
#define MRCT_FRWR_XFER_RAW_KEY	0x1U	/* the rkey is @key, not the MR's */

/**
 * struct mrct_frwr_xfer - MRCT_FRWR_XFER: bytes through the MR's rkey
 * @offset: (in) first byte, from the start of the last registration
 * @length: (in) bytes, within that registration
 * @eq_new: (out) bytes of the side written that hold @seed's pattern
 * @eq_old: (out) bytes of it that still hold @seed_old's
 * @handle: (in) FRWR MR
 * @pair: (in) pair; QP @qp is the requester, its peer the responder
 * @qp: (in) 0 or 1
 * @dir: (in) MRCT_FRWR_WRITE or MRCT_FRWR_READ
 * @flags: (in) MRCT_FRWR_XFER_RAW_KEY
 * @key: (in) the rkey with MRCT_FRWR_XFER_RAW_KEY, else 0
 * @seed: (in) the pattern moved
 * @seed_old: (in) the pattern the side written holds before; its low byte
 *	      must differ from @seed's
 * @post_err: (out) ib_post_send()'s error, if it failed
 * @status: (out) the last completion's status (the WRs stop at the first
 *	    that fails), or MRCT_WC_NONE
 * @qp_state: (out) requester and responder after the last completion
 * @wrs: (out) WRs that were posted and completed
 * @reserved: zero
 *
 * The pages the last successful REG_MR of the MR mapped are filled by the
 * CPU (with @seed_old for a WRITE, @seed for a READ), the pair moves the
 * bytes a MRCT_FRWR_STAGING_SIZE piece a WR, and the side written (the
 * MR's pages for a WRITE, the staging buffer for a READ) is counted: all
 * of it @seed after a success, all of it @seed_old when the first WR
 * failed. A pattern's byte depends on its offset in the registration and
 * on its page, so bytes in the wrong page do not count. Return: 0 (see
 * the results); -ENODATA no REG_MR of the MR has succeeded yet; the rest
 * as MRCT_FRWR_REG.
 */
struct mrct_frwr_xfer {
	__u64 offset;
	__u64 length;
	__u64 eq_new;
	__u64 eq_old;
	__u32 handle;
	__u32 pair;
	__u32 qp;
	__u32 dir;
	__u32 flags;
	__u32 key;
	__u32 seed;
	__u32 seed_old;
	__s32 post_err;
	__u32 status;
	__u32 qp_state[2];
	__u32 wrs;
	__u32 reserved;
};

/* mrct_frwr_cycle.step: where a cycle stopped. */
#define MRCT_FRWR_STEP_NONE	0	/* all cycles done */
#define MRCT_FRWR_STEP_MAP	1	/* ib_map_mr_sg() mapped less (@err) */
#define MRCT_FRWR_STEP_REG	2	/* REG_MR: @err (post) or @status */
#define MRCT_FRWR_STEP_WRITE	3	/* RDMA WRITE through the new key */
#define MRCT_FRWR_STEP_VERIFY	4	/* the pages do not hold what was written */
#define MRCT_FRWR_STEP_INV	5	/* LOCAL_INV of the new key */

/**
 * struct mrct_frwr_cycle - MRCT_FRWR_CYCLE: REG_MR, use, LOCAL_INV, again
 * @handle: (in) FRWR MR, page size = its chunk size
 * @pair: (in) pair
 * @qp: (in) the QP that registers, writes and invalidates
 * @cycles: (in) 1 to MRCT_FRWR_MAX_CYCLES
 * @max_nents: (in) the most chunks one cycle's page list takes
 * @access: (in) the REG_MR's access; needs MRCT_ACCESS_REMOTE_WRITE and
 *	    MRCT_ACCESS_LOCAL_WRITE for the cycle to work
 * @seed: (in) cycle i writes the pattern @seed + i
 * @done: (out) cycles completed and verified
 * @step: (out) MRCT_FRWR_STEP_*: where cycle @done stopped
 * @err: (out) the post's or ib_map_mr_sg()'s error there (-ERANGE: it
 *	 mapped fewer entries)
 * @status: (out) the completion's status there
 * @key: (out) the MR's key after the last cycle
 * @reserved: zero
 *
 * Cycle i takes a new key variant, maps a page list whose first chunk,
 * direction (ascending, descending), length and offset change with i,
 * posts REG_MR, RDMA WRITEs a pattern over the whole registration from
 * the other QP's side of the pair, checks every byte in the pages through
 * the CPU, and LOCAL_INVs the key. Return: as MRCT_FRWR_REG.
 */
struct mrct_frwr_cycle {
	__u32 handle;
	__u32 pair;
	__u32 qp;
	__u32 cycles;
	__u32 max_nents;
	__u32 access;
	__u32 seed;
	__u32 done;
	__u32 step;
	__s32 err;
	__u32 status;
	__u32 key;
	__u32 reserved;
};

/**
 * struct mrct_frwr_bench - MRCT_FRWR_BENCH: REG_MR + LOCAL_INV cycles
 * @min_ns: (in) start cycles until this much time has passed, at most
 *	    MRCT_BENCH_MAX_NS
 * @cycles: (out) cycles whose REG_MR and LOCAL_INV both succeeded
 * @elapsed_ns: (out) first post to last completion
 * @pair: (in) pair; its PD is the MRs'
 * @qp: (in) the QP that posts
 * @npages: (in) 4 KiB pages of every registration, 1 to
 *	    MRCT_FRWR_BENCH_MAX_PAGES
 * @depth: (in) MRs, and so cycles, in flight: 1 to MRCT_QP_DEPTH / 2
 * @status: (out) MRCT_WC_SUCCESS, or the first failed completion's status
 * @post_err: (out) the first error of ib_map_mr_sg() or ib_post_send()
 *
 * The module allocates @depth MRs and @npages pages, DMA-mapped once,
 * before the clock starts. A cycle is what a ULP does per I/O:
 * ib_update_fast_reg_key() to the next variant, ib_map_mr_sg() of the
 * pages, and REG_MR and LOCAL_INV posted as one chain, both signaled; it
 * ends with the LOCAL_INV's completion. The CQ is busy-polled. Return: 0
 * (see @status and @post_err); -ETIMEDOUT, -EINTR as MRCT_BENCH_WRITE;
 * -ENOMEM; ib_alloc_mr()'s errno; the rest as MRCT_FRWR_REG.
 */
struct mrct_frwr_bench {
	__u64 min_ns;
	__u64 cycles;
	__u64 elapsed_ns;
	__u32 pair;
	__u32 qp;
	__u32 npages;
	__u32 depth;
	__u32 status;
	__s32 post_err;
};

#define MRCT_FRWR_ALLOC		_IOWR(MRCT_IOC_MAGIC, 0x50, struct mrct_frwr_alloc)
#define MRCT_FRWR_FREE		_IOW(MRCT_IOC_MAGIC, 0x51, struct mrct_frwr_free)
#define MRCT_FRWR_REG		_IOWR(MRCT_IOC_MAGIC, 0x52, struct mrct_frwr_reg)
#define MRCT_FRWR_INV		_IOWR(MRCT_IOC_MAGIC, 0x53, struct mrct_frwr_inv)
#define MRCT_FRWR_XFER		_IOWR(MRCT_IOC_MAGIC, 0x54, struct mrct_frwr_xfer)
#define MRCT_FRWR_CYCLE		_IOWR(MRCT_IOC_MAGIC, 0x55, struct mrct_frwr_cycle)
#define MRCT_FRWR_BENCH		_IOWR(MRCT_IOC_MAGIC, 0x56, struct mrct_frwr_bench)

/* End of FRWR ----------------------------------------------------------- */

/* FMR ------------------------------------------------------------------- */

/*
 * FMR pools (mrcore_test_fmr.c): mrcore's FMR pool API on a vhca device.
 *
 * The first FMR call of a context gives it a kernel buffer of
 * MRCT_FMR_BUF_PAGES pages (PAGE_SIZE each), DMA-mapped on the device;
 * MRCT_FMR_BUF_READ and MRCT_FMR_BUF_WRITE let the CPU read and fill it.
 * A pool (MRCT_FMR_POOL_CREATE, on one of the context's PDs) maps lists of
 * those pages (by index) at an iova with MRCT_FMR_MAP and gives them back
 * with MRCT_FMR_UNMAP; the device reads and writes through the key the
 * map returns with MRCT_DEV_READ / MRCT_DEV_WRITE and MRCT_XFER_RAW_KEY.
 * Every page size is PAGE_SIZE. Pools, mappings and the buffer go when
 * the file is closed or the device removed. Needs a vhca device
 * (-EOPNOTSUPP otherwise).
 */
#define MRCT_FMR_BUF_PAGES	64
#define MRCT_FMR_MAX_LIST	32	/* pages per map */
#define MRCT_FMR_MAX_POOLS	8	/* per context */
#define MRCT_FMR_MAX_HELD	1024	/* mappings held per context */

/* mrct_fmr_pool_create.flags: MRC_FMR_POOL_* */
#define MRCT_FMR_CACHE		0x1U
#define MRCT_FMR_STRICT		0x2U

/**
 * struct mrct_fmr_pool_create - MRCT_FMR_POOL_CREATE
 * @pd: (in) PD index, below MRCT_NUM_PDS
 * @pool_size: (in) FMRs
 * @max_pages: (in) pages per map, at most MRCT_FMR_MAX_LIST
 * @max_remaps: (in) maps of an FMR between flushes
 * @dirty_watermark: (in) dirty FMRs that wake the flush worker
 * @access: (in) MRCT_ACCESS_* rights of the FMRs
 * @flags: (in) MRCT_FMR_*
 * @handle: (out) the pool's handle in this context, never 0
 *
 * The values reach mrc_create_fmr_pool() as given (page shift
 * PAGE_SHIFT). Return: 0, -EMFILE (MRCT_FMR_MAX_POOLS), or mrcore's errno.
 */
struct mrct_fmr_pool_create {
	__u32 pd;
	__u32 pool_size;
	__u32 max_pages;
	__u32 max_remaps;
	__u32 dirty_watermark;
	__u32 access;
	__u32 flags;
	__u32 handle;
};

/**
 * struct mrct_fmr_handle - MRCT_FMR_POOL_DESTROY, MRCT_FMR_FLUSH (a pool),
 *	MRCT_FMR_UNMAP (a mapping)
 * @handle: (in) the pool or mapping; an unknown one is -ENOENT
 * @reserved: zero
 *
 * MRCT_FMR_POOL_DESTROY is -EBUSY while the pool has mappings held.
 */
struct mrct_fmr_handle {
	__u32 handle;
	__u32 reserved;
};

/**
 * struct mrct_fmr_map - MRCT_FMR_MAP: mrc_fmr_pool_map_phys()
 * @iova: (in) address of the first byte through the key
 * @length: (out) bytes the mapping covers
 * @pool: (in) pool handle
 * @npages: (in) entries of @pages, passed to mrcore as given (up to
 *	MRCT_FMR_MAX_LIST)
 * @handle: (out) the mapping's handle, for MRCT_FMR_UNMAP; every map has
 *	its own, a cache hit too
 * @key: (out) lkey == rkey of the mapping
 * @pages: (in) buffer page indexes, below MRCT_FMR_BUF_PAGES
 *
 * Return: 0; -EAGAIN no FMR free; -EMFILE MRCT_FMR_MAX_HELD mappings
 * held; -ENOENT no such pool; mrcore's errno.
 */
struct mrct_fmr_map {
	__u64 iova;
	__u64 length;
	__u32 pool;
	__u32 npages;
	__u32 handle;
	__u32 key;
	__u32 pages[MRCT_FMR_MAX_LIST];
};

/**
 * struct mrct_fmr_stats - MRCT_FMR_STATS: struct mrc_fmr_pool_stats
 * @hits: (out) maps served by the cache, nothing written to the device
 * @misses: (out) maps that wrote the device
 * @remaps: (out) misses on an FMR still mapped
 * @exhausted: (out) maps that failed -EAGAIN
 * @flushes: (out) flushes run
 * @flushed: (out) FMRs unmapped by flushes
 * @strict_unmaps: (out) FMRs unmapped by their last unmap (strict)
 * @pool: (in) pool handle
 * @flush_calls: (out) calls of the pool's flush function
 * @in_use: (out) FMRs with users
 * @free: (out) FMRs on the free list
 * @dirty: (out) FMRs on the dirty list
 * @reserved: zero
 */
struct mrct_fmr_stats {
	__u64 hits;
	__u64 misses;
	__u64 remaps;
	__u64 exhausted;
	__u64 flushes;
	__u64 flushed;
	__u64 strict_unmaps;
	__u32 pool;
	__u32 flush_calls;
	__u32 in_use;
	__u32 free;
	__u32 dirty;
	__u32 reserved;
};

/**
 * struct mrct_fmr_buf - MRCT_FMR_BUF_READ, MRCT_FMR_BUF_WRITE: the CPU
 *	copies between the context's buffer and user memory
 * @ptr: (in) user buffer
 * @offset: (in) first byte in the kernel buffer
 * @length: (in) bytes; @offset + @length at most MRCT_FMR_BUF_PAGES pages
 */
struct mrct_fmr_buf {
	__u64 ptr;
	__u32 offset;
	__u32 length;
};

/* mrct_fmr_bench.mode */
#define MRCT_FMR_BENCH_HIT	0	/* the same list and iova every time */
#define MRCT_FMR_BENCH_MISS	1	/* a new iova every time */

/**
 * struct mrct_fmr_bench - MRCT_FMR_BENCH: pool map + unmap cycles
 * @min_ns: (in) cycle until this much time has passed, at most
 *	MRCT_BENCH_MAX_NS
 * @cycles: (out) map + unmap cycles done
 * @elapsed_ns: (out) time they took
 * @sync_flushes: (out) mrc_flush_fmr_pool() calls the loop made after a
 *	map failed -EAGAIN (it then maps again)
 * @pool: (in) pool handle, with no mapping held
 * @npages: (in) pages per map (buffer pages 0 .. @npages - 1)
 * @mode: (in) MRCT_FMR_BENCH_*
 * @reserved: zero
 *
 * Return: 0; -EINVAL bad input; -EINTR a fatal signal; mrcore's errno.
 */
struct mrct_fmr_bench {
	__u64 min_ns;
	__u64 cycles;
	__u64 elapsed_ns;
	__u64 sync_flushes;
	__u32 pool;
	__u32 npages;
	__u32 mode;
	__u32 reserved;
};

#define MRCT_FMR_POOL_CREATE	_IOWR(MRCT_IOC_MAGIC, 0x60, struct mrct_fmr_pool_create)
#define MRCT_FMR_POOL_DESTROY	_IOW(MRCT_IOC_MAGIC, 0x61, struct mrct_fmr_handle)
#define MRCT_FMR_MAP		_IOWR(MRCT_IOC_MAGIC, 0x62, struct mrct_fmr_map)
#define MRCT_FMR_UNMAP		_IOW(MRCT_IOC_MAGIC, 0x63, struct mrct_fmr_handle)
#define MRCT_FMR_FLUSH		_IOW(MRCT_IOC_MAGIC, 0x64, struct mrct_fmr_handle)
#define MRCT_FMR_STATS		_IOWR(MRCT_IOC_MAGIC, 0x65, struct mrct_fmr_stats)
#define MRCT_FMR_BUF_READ	_IOW(MRCT_IOC_MAGIC, 0x66, struct mrct_fmr_buf)
#define MRCT_FMR_BUF_WRITE	_IOW(MRCT_IOC_MAGIC, 0x67, struct mrct_fmr_buf)
#define MRCT_FMR_BENCH		_IOWR(MRCT_IOC_MAGIC, 0x68, struct mrct_fmr_bench)

/* End of FMR ------------------------------------------------------------ */

/* MW -------------------------------------------------------------------- */

/*
 * Memory windows, indirect keys and SG_GAPS fast registration
 * (mrcore_test_mw.c), on a vhca device only (-EOPNOTSUPP otherwise).
 *
 * Windows and indirect keys are mrcore's: the calls reach mrcore's API on
 * the PD and MR behind the context's ib_pd and ib_mr (vhca_pd_mrc(),
 * vhca_mr_mrc()). MRCT_MW_ALLOC allocates a window of any type number on a
 * PD index (mrc_alloc_mw()); MRCT_MW_BIND binds a type 1 window to an MR
 * of MRCT_REG, or to one of the context's indirect keys, with
 * mrc_bind_mw() (length 0 unbinds); MRCT_MW_BIND_WR posts a struct
 * vhca_bind_mw_wr (IB_WR_BIND_MW) on a loopback pair's QP and waits for
 * its completion, which binds a type 2 window to that QP; MRCT_MW_DEALLOC
 * frees a window (mrc_dealloc_mw()). LOCAL_INV and Send with Invalidate
 * of any key are MRCT_FRWR_INV's, and data moves through any rkey with
 * MRCT_QP_POST (or MRCT_DEV_READ / _WRITE with MRCT_XFER_RAW_KEY).
 *
 * MRCT_IND_REG registers an indirect key (mrc_reg_indirect()) over ranges
 * of keys given as numbers; MRCT_IND_DEREG deregisters it (mrc_dereg_mr()).
 *
 * MRCT_GAPS_ALLOC allocates an IB_MR_TYPE_SG_GAPS MR (ib_alloc_mr()) with
 * a buffer of MRCT_GAPS_BUF_SIZE bytes of physically contiguous kernel
 * memory, DMA-mapped once; MRCT_GAPS_REG maps pieces of that buffer (any
 * offset and length, with gaps between them) with ib_map_mr_sg() and
 * posts IB_WR_REG_MR on a pair's QP; MRCT_GAPS_BUF_READ / _WRITE let the
 * CPU read and fill the buffer; MRCT_GAPS_FREE deregisters the MR and
 * frees the buffer.
 *
 * As with MRCT_QP_POST, what a posted WR did is a result (post error,
 * completion status, QP states), not an ioctl error; mrcore's calls
 * return mrcore's errno. Everything is freed when the file is closed or
 * the device removed: windows first, then indirect keys, then the
 * SG_GAPS MRs, all before the context's own MRs and PDs.
 */
#define MRCT_MW_MAX		64	/* windows per context */
#define MRCT_IND_MAX		64	/* indirect keys per context */
#define MRCT_IND_MAX_RANGES	8	/* ranges per indirect key */
#define MRCT_GAPS_MAX		4	/* SG_GAPS MRs per context */
#define MRCT_GAPS_BUF_SIZE	(64U << 10)	/* buffer of each */
#define MRCT_GAPS_MAX_PIECES	16	/* pieces per REG_MR */

/* Window types: enum ib_mw_type (MRCT_MW_ALLOC passes any value). */
#define MRCT_MW_TYPE_1		1
#define MRCT_MW_TYPE_2		2

/* The opcode of a Bind MW completion: IB_WC_BIND_MW. */
#define MRCT_WC_BIND_MW		5

/**
 * struct mrct_mw_alloc - MRCT_MW_ALLOC: mrc_alloc_mw()
 * @pd: (in) PD index, below MRCT_NUM_PDS
 * @type: (in) window type, passed to mrcore as given
 * @handle: (out) the window's handle in this context, never 0
 * @rkey: (out) its rkey (mrc_mw_rkey())
 *
 * Return: 0; -EMFILE MRCT_MW_MAX windows already; -ENODEV no device bound;
 * -EOPNOTSUPP not a vhca; or mrcore's errno (-EINVAL for a type other
 * than 1 or 2).
 */
struct mrct_mw_alloc {
	__u32 pd;
	__u32 type;
	__u32 handle;
	__u32 rkey;
};

/**
 * struct mrct_mw_handle - MRCT_MW_DEALLOC (a window), MRCT_IND_DEREG (an
 *	indirect key), MRCT_GAPS_FREE (an SG_GAPS MR)
 * @handle: (in) the object; an unknown one is -ENOENT
 * @reserved: zero
 *
 * Return: 0, or the errno of mrc_dealloc_mw(), mrc_dereg_mr() or
 * ib_dereg_mr() (-EBUSY while windows are bound to the MR); after an
 * error the object and its handle stay.
 */
struct mrct_mw_handle {
	__u32 handle;
	__u32 reserved;
};

/* mrct_mw_bind.flags */
#define MRCT_MW_BIND_INDIRECT	0x1U	/* @mr is an indirect key's handle */

/**
 * struct mrct_mw_bind - MRCT_MW_BIND: mrc_bind_mw(), a type 1 bind
 * @addr: (in) first byte of the window, in the MR's address space
 * @length: (in) bytes; 0 unbinds
 * @handle: (in) window
 * @mr: (in) MR handle of MRCT_REG (an indirect key's handle with
 *	MRCT_MW_BIND_INDIRECT); 0 passes no MR (NULL)
 * @access: (in) the window's rights (MRCT_ACCESS_*), passed as given
 * @flags: (in) MRCT_MW_BIND_*
 * @rkey: (out) the window's rkey after the call, written back whether
 *	the bind succeeded or not
 * @reserved: zero
 *
 * Return: 0 or mrcore's errno; -ENOENT no such window or MR.
 */
struct mrct_mw_bind {
	__u64 addr;
	__u64 length;
	__u32 handle;
	__u32 mr;
	__u32 access;
	__u32 flags;
	__u32 rkey;
	__u32 reserved;
};

/* mrct_mw_bind_wr.key_mode: the WR's mw_rkey. */
#define MRCT_MW_KEY_NEXT	0	/* ib_inc_rkey() of the window's rkey */
#define MRCT_MW_KEY_SAME	1	/* the window's rkey as it is */
#define MRCT_MW_KEY_RAW		2	/* @mw_rkey as given */

/**
 * struct mrct_mw_bind_wr - MRCT_MW_BIND_WR: post IB_WR_BIND_MW and wait
 * @addr: (in) the WR's addr: first byte of the window in the MR
 * @length: (in) the WR's length
 * @handle: (in) window; 0 only with MRCT_MW_KEY_RAW (no window of ours)
 * @key_mode: (in) MRCT_MW_KEY_*
 * @mw_rkey: (in) the key with MRCT_MW_KEY_RAW; (out) the key the WR
 *	carried
 * @mr_lkey: (in) the WR's mr_lkey, any value
 * @access: (in) the WR's access (MRCT_ACCESS_REMOTE_*, _ZERO_BASED),
 *	passed as given
 * @pair: (in) pair whose QP posts the WR
 * @qp: (in) 0: QP A, 1: QP B; a type 2 window is bound to that QP
 * @post_err: (out) ib_post_send()'s return value
 * @bad_wr: (out) MRCT_BAD_WR_*
 * @status: (out) the completion's status, or MRCT_WC_NONE
 * @rkey: (out) the window's rkey (mrc_mw_rkey()) after the completion; 0
 *	without a window
 * @qp_state: (out) posting QP and peer after the completion, MRCT_QPS_*
 * @reserved: zero
 *
 * vhca completes a refused bind with MRCT_WC_MW_BIND_ERR and moves the QP
 * to ERR. Return: 0 (see the results); -ENOENT no such window or pair;
 * -EINVAL bad input; -EIO, -ETIMEDOUT, -EINTR, -ENODEV as MRCT_QP_POST.
 */
struct mrct_mw_bind_wr {
	__u64 addr;
	__u64 length;
	__u32 handle;
	__u32 key_mode;
	__u32 mw_rkey;
	__u32 mr_lkey;
	__u32 access;
	__u32 pair;
	__u32 qp;
	__s32 post_err;
	__u32 bad_wr;
	__u32 status;
	__u32 rkey;
	__u32 qp_state[2];
	__u32 reserved;
};

/**
 * struct mrct_ind_range - one piece of an indirect key (struct mrc_key_range)
 * @addr: first byte, in @key's address space
 * @length: bytes
 * @key: the key the piece is reached through, passed as given
 * @reserved: zero
 */
struct mrct_ind_range {
	__u64 addr;
	__u64 length;
	__u32 key;
	__u32 reserved;
};

/**
 * struct mrct_ind_reg - MRCT_IND_REG: mrc_reg_indirect()
 * @iova: (in) address of the first byte through the new key
 * @pd: (in) PD index, below MRCT_NUM_PDS
 * @access: (in) MRCT_ACCESS_* rights, passed as given
 * @nranges: (in) entries of @ranges, at most MRCT_IND_MAX_RANGES, passed
 *	as given (0 included)
 * @handle: (out) the key's handle, for MRCT_IND_DEREG and
 *	MRCT_MW_BIND_INDIRECT
 * @key: (out) lkey == rkey
 * @reserved: zero
 * @ranges: (in) the pieces, laid end to end from @iova
 *
 * Return: 0; -EMFILE MRCT_IND_MAX keys already; or mrcore's errno
 * (-ELOOP nested too deep, -EPERM another PD's key or a right the named
 * MR lacks, -ERANGE a piece outside its MR, -ENOKEY a key not live).
 */
struct mrct_ind_reg {
	__u64 iova;
	__u32 pd;
	__u32 access;
	__u32 nranges;
	__u32 handle;
	__u32 key;
	__u32 reserved;
	struct mrct_ind_range ranges[MRCT_IND_MAX_RANGES];
};

/**
 * struct mrct_gaps_alloc - MRCT_GAPS_ALLOC: an SG_GAPS MR and its buffer
 * @pd: (in) PD index
 * @max_sg: (in) ib_alloc_mr()'s max_num_sg, passed as given
 * @handle: (out) the MR's handle among the context's SG_GAPS MRs
 * @lkey: (out) its lkey
 * @rkey: (out) its rkey
 * @sg_gaps_cap: (out) 1 if the device sets IBK_SG_GAPS_REG, else 0
 *
 * The buffer is zeroed. Return: 0; -EMFILE MRCT_GAPS_MAX MRs already;
 * -ENOMEM; or ib_alloc_mr()'s errno.
 */
struct mrct_gaps_alloc {
	__u32 pd;
	__u32 max_sg;
	__u32 handle;
	__u32 lkey;
	__u32 rkey;
	__u32 sg_gaps_cap;
};

/**
 * struct mrct_gaps_piece - one scatterlist entry of an SG_GAPS REG_MR
 * @offset: first byte in the MR's buffer
 * @length: bytes (0 allowed); @offset + @length at most
 *	MRCT_GAPS_BUF_SIZE
 */
struct mrct_gaps_piece {
	__u32 offset;
	__u32 length;
};

/**
 * struct mrct_gaps_reg - MRCT_GAPS_REG: map pieces, post REG_MR, wait
 * @iova: (out) the MR's iova after ib_map_mr_sg(): the DMA address of the
 *	first piece's first byte
 * @length: (out) the MR's length after ib_map_mr_sg()
 * @handle: (in) SG_GAPS MR
 * @pair: (in) pair
 * @qp: (in) 0: post on A, 1: on B
 * @access: (in) the WR's access, passed as given
 * @npieces: (in) entries of @pieces, 1 to MRCT_GAPS_MAX_PIECES
 * @map_ret: (out) what ib_map_mr_sg() returned; the WR is posted only
 *	when it is @npieces
 * @post_err: (out) ib_post_send()'s return value
 * @bad_wr: (out) MRCT_BAD_WR_*
 * @status: (out) the completion's status, or MRCT_WC_NONE
 * @lkey: (out) the MR's lkey after the call
 * @rkey: (out) its rkey
 * @qp_state: (out) posting QP and peer after the completion
 * @reserved: zero
 * @pieces: (in) the scatterlist, in order
 *
 * Before the post the key moves to its next variant
 * (ib_update_fast_reg_key()), which the WR carries. Return: 0 (see the
 * results); -ENOENT no such MR or pair; -EINVAL bad input; the rest as
 * MRCT_QP_POST.
 */
struct mrct_gaps_reg {
	__u64 iova;
	__u64 length;
	__u32 handle;
	__u32 pair;
	__u32 qp;
	__u32 access;
	__u32 npieces;
	__s32 map_ret;
	__s32 post_err;
	__u32 bad_wr;
	__u32 status;
	__u32 lkey;
	__u32 rkey;
	__u32 qp_state[2];
	__u32 reserved;
	struct mrct_gaps_piece pieces[MRCT_GAPS_MAX_PIECES];
};

/**
 * struct mrct_gaps_buf - MRCT_GAPS_BUF_READ, MRCT_GAPS_BUF_WRITE: the CPU
 *	copies between an SG_GAPS MR's buffer and user memory
 * @ptr: (in) user buffer
 * @handle: (in) SG_GAPS MR
 * @offset: (in) first byte in its buffer
 * @length: (in) bytes; @offset + @length at most MRCT_GAPS_BUF_SIZE
 * @reserved: zero
 */
struct mrct_gaps_buf {
	__u64 ptr;
	__u32 handle;
	__u32 offset;
	__u32 length;
	__u32 reserved;
};

#define MRCT_MW_ALLOC		_IOWR(MRCT_IOC_MAGIC, 0x70, struct mrct_mw_alloc)
#define MRCT_MW_DEALLOC		_IOW(MRCT_IOC_MAGIC, 0x71, struct mrct_mw_handle)
#define MRCT_MW_BIND		_IOWR(MRCT_IOC_MAGIC, 0x72, struct mrct_mw_bind)
#define MRCT_MW_BIND_WR		_IOWR(MRCT_IOC_MAGIC, 0x73, struct mrct_mw_bind_wr)
#define MRCT_IND_REG		_IOWR(MRCT_IOC_MAGIC, 0x74, struct mrct_ind_reg)
#define MRCT_IND_DEREG		_IOW(MRCT_IOC_MAGIC, 0x75, struct mrct_mw_handle)
#define MRCT_GAPS_ALLOC		_IOWR(MRCT_IOC_MAGIC, 0x76, struct mrct_gaps_alloc)
#define MRCT_GAPS_FREE		_IOW(MRCT_IOC_MAGIC, 0x77, struct mrct_mw_handle)
#define MRCT_GAPS_REG		_IOWR(MRCT_IOC_MAGIC, 0x78, struct mrct_gaps_reg)
#define MRCT_GAPS_BUF_READ	_IOW(MRCT_IOC_MAGIC, 0x79, struct mrct_gaps_buf)
#define MRCT_GAPS_BUF_WRITE	_IOW(MRCT_IOC_MAGIC, 0x7A, struct mrct_gaps_buf)

/* End of MW ------------------------------------------------------------- */

/*
 * Counters (mrcore_test_counter.c, ioctls 0x90-0x9F): mrcore's counters of
 * remote writes into MRs (the fi_mr_bind() model), on a vhca device only.
 * MRCT_CNT_ALLOC allocates one (mrc_alloc_counter()); MRCT_CNT_BIND binds
 * it to the MR that owns an lkey of this context (an MRCT_REG MR, an FRWR
 * MR, an FMR, an indirect key, an SG_GAPS MR: any MR of the context's
 * PDs), or unbinds with handle 0 (mrc_mr_bind_counter()); MRCT_CNT_READ
 * reads the device's value (mrc_counter_read()), and resets it after the
 * read with MRCT_CNT_READ_RESET. Counters still allocated go with the
 * file, unbound from the context's MRs first.
 */
#define MRCT_CNT_MAX			16	/* per context */
#define MRCT_COUNT_REMOTE_WRITE		0x1U	/* MRC_COUNT_REMOTE_WRITE */
#define MRCT_CNT_READ_RESET		0x1U	/* mrct_cnt_read.flags */

/**
 * struct mrct_cnt_alloc - MRCT_CNT_ALLOC
 * @handle: (out) the counter's handle in this context, never 0
 * @index: (out) its slot in the device's counter table
 *
 * Return: 0; -ENODEV no device bound; -EOPNOTSUPP not a vhca (or no
 * counter table); -EMFILE MRCT_CNT_MAX counters already; mrcore's errno.
 */
struct mrct_cnt_alloc {
	__u32 handle;
	__u32 index;
};

/**
 * struct mrct_cnt_free - MRCT_CNT_FREE: mrc_free_counter()
 * @handle: (in) counter; an unknown one is -ENOENT
 * @reserved: zero
 *
 * Return: 0; -ENOENT; -EBUSY while bound to an MR (the counter stays).
 */
struct mrct_cnt_free {
	__u32 handle;
	__u32 reserved;
};

/**
 * struct mrct_cnt_bind - MRCT_CNT_BIND: mrc_mr_bind_counter()
 * @key: (in) current lkey of an MR of this context's PDs
 * @handle: (in) counter, or 0 to unbind
 * @flags: (in) passed to mrcore unchecked (MRCT_COUNT_REMOTE_WRITE to
 *	   bind, 0 to unbind)
 * @reserved: zero
 *
 * Return: 0; -ENOENT no such counter, or @key names no MR of the
 * context; else mrcore's errno (-EINVAL, -EBUSY, -ENOENT).
 */
struct mrct_cnt_bind {
	__u32 key;
	__u32 handle;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct mrct_cnt_read - MRCT_CNT_READ: mrc_counter_read()
 * @handle: (in) counter
 * @flags: (in) MRCT_CNT_READ_*
 * @value: (out) the device's value, before any reset
 *
 * Return: 0; -ENOENT no such counter; -EINVAL unknown flags.
 */
struct mrct_cnt_read {
	__u32 handle;
	__u32 flags;
	__u64 value;
};

#define MRCT_CNT_ALLOC		_IOR(MRCT_IOC_MAGIC, 0x90, struct mrct_cnt_alloc)
#define MRCT_CNT_FREE		_IOW(MRCT_IOC_MAGIC, 0x91, struct mrct_cnt_free)
#define MRCT_CNT_BIND		_IOW(MRCT_IOC_MAGIC, 0x92, struct mrct_cnt_bind)
#define MRCT_CNT_READ		_IOWR(MRCT_IOC_MAGIC, 0x93, struct mrct_cnt_read)

/* End of counters -------------------------------------------------------- */

/* Requested keys and asynchronous registration ------------------------- */

/*
 * mrcore_test_keys.c, vhca only: user memory registered through mrcore's
 * mrc_reg_mr() (struct mrc_reg_attr, type MRC_MR_USER) on the PD behind a
 * context PD, with a key the caller asks for, synchronously or with
 * mrc_reg_mr_async(). Such an MR is not an ib_mr: it is reached by its
 * key only (MRCT_QP_POST with it as rkey or lkey, MRCT_DEV_READ/WRITE
 * with MRCT_XFER_RAW_KEY).
 */
#define MRCT_KEYS_MAX		16	/* MRs and requests per context */

/* mrct_keys_reg.flags */
#define MRCT_KEYS_ASYNC		0x1U	/* mrc_reg_mr_async(); MRCT_KEYS_WAIT */
#define MRCT_KEYS_HOLD		0x2U	/* with ASYNC: hold the completion */
#define MRCT_KEYS_FLAGS		(MRCT_KEYS_ASYNC | MRCT_KEYS_HOLD)

/*
 * The longest a held completion waits for MRCT_KEYS_RELEASE before it
 * releases itself, so that a program that died holding one cannot keep
 * close() waiting for ever.
 */
#define MRCT_KEYS_HOLD_MAX_MS	90000

/**
 * struct mrct_keys_reg - MRCT_KEYS_REG: register user memory with a key
 * @addr: (in) user address of the first byte
 * @length: (in) bytes
 * @iova: (in) address of the first byte in the key's address space
 * @access: (in) MRCT_ACCESS_* bits, passed to mrcore as given
 * @pd: (in) PD index, below MRCT_NUM_PDS
 * @key: (in) the exact key wanted (index << 8 | variant), or 0 to let
 *	 mrcore choose; (out) without MRCT_KEYS_ASYNC, the MR's key
 * @flags: (in) MRCT_KEYS_*
 * @handle: (out) the MR's (or the pending request's) handle, never 0
 * @token: (in) zero; (out) with MRCT_KEYS_HOLD, the hold's token (never
 *	   0) for MRCT_KEYS_HOLD_STATE and MRCT_KEYS_RELEASE, else 0
 *
 * With MRCT_KEYS_ASYNC the call returns once mrcore accepted the request
 * (its synchronous checks passed, the memory was charged to the caller);
 * MRCT_KEYS_WAIT then returns its completion. With MRCT_KEYS_HOLD too,
 * the request's completion, called by mrcore's worker once the MR is
 * registered (or the registration failed), waits there until
 * MRCT_KEYS_RELEASE (from any file) or MRCT_KEYS_HOLD_MAX_MS: until then
 * the request is pending for certain (MRCT_KEYS_DEREG is -EBUSY, closing
 * the file waits for it). Return: 0; -EINVAL bad
 * input; -EMFILE MRCT_KEYS_MAX MRs and requests already; -ENODEV no
 * device bound; -EOPNOTSUPP not a vhca; or mrcore's errno (-EINVAL a bad
 * key, -ENOKEY its index in use, ...).
 */
struct mrct_keys_reg {
	__u64 addr;
	__u64 length;
	__u64 iova;
	__u32 access;
	__u32 pd;
	__u32 key;
	__u32 flags;
	__u32 handle;
	__u32 token;
};

/**
 * struct mrct_keys_wait - MRCT_KEYS_WAIT: the completion of a request
 * @handle: (in) from MRCT_KEYS_REG with MRCT_KEYS_ASYNC
 * @timeout_ms: (in) how long to wait, at most MRCT_QP_WAIT_MS; 0 polls
 * @err: (out) 0, or the errno the registration failed with (the handle
 *	 is gone then)
 * @key: (out) the MR's key on success
 * @calls: (out) completions the request got so far: 1 once done
 * @reserved: zero
 *
 * Return: 0 (see @err); -ETIMEDOUT not completed within @timeout_ms (the
 * request stays pending); -ENOENT no such handle; -EINTR a fatal signal.
 */
struct mrct_keys_wait {
	__u32 handle;
	__u32 timeout_ms;
	__s32 err;
	__u32 key;
	__u32 calls;
	__u32 reserved;
};

/**
 * struct mrct_keys_handle - MRCT_KEYS_DEREG: mrc_dereg_mr()
 * @handle: (in) a completed registration; a pending one is -EBUSY, a
 *	failed one (no MR) only drops its handle
 * @reserved: zero
 */
struct mrct_keys_handle {
	__u32 handle;
	__u32 reserved;
};

/* mrct_keys_hold.state */
#define MRCT_KEYS_HOLD_WAITING	0x1U	/* the completion waits for release */
#define MRCT_KEYS_HOLD_CLOSING	0x2U	/* its file's unbind waits for it */

/**
 * struct mrct_keys_hold - MRCT_KEYS_HOLD_STATE, MRCT_KEYS_RELEASE: a held
 *	request, by its token, from any file (bound to a device or not)
 * @token: (in) from MRCT_KEYS_REG with MRCT_KEYS_HOLD
 * @state: (out) MRCT_KEYS_HOLD_* bits: for MRCT_KEYS_RELEASE, the state
 *	   it was released in
 *
 * MRCT_KEYS_RELEASE lets the held completion go on: it records the result
 * and completes the request. Return: 0; -ENOENT no request is held under
 * @token (released already, or it released itself after
 * MRCT_KEYS_HOLD_MAX_MS).
 */
struct mrct_keys_hold {
	__u32 token;
	__u32 state;
};

#define MRCT_KEYS_REG		_IOWR(MRCT_IOC_MAGIC, 0x80, struct mrct_keys_reg)
#define MRCT_KEYS_WAIT		_IOWR(MRCT_IOC_MAGIC, 0x81, struct mrct_keys_wait)
#define MRCT_KEYS_DEREG		_IOW(MRCT_IOC_MAGIC, 0x82, struct mrct_keys_handle)
#define MRCT_KEYS_HOLD_STATE	_IOWR(MRCT_IOC_MAGIC, 0x83, struct mrct_keys_hold)
#define MRCT_KEYS_RELEASE	_IOWR(MRCT_IOC_MAGIC, 0x84, struct mrct_keys_hold)

/* End of requested keys ------------------------------------------------- */

/*
 * On-demand paging. MRCT_REG with MRCT_ACCESS_ON_DEMAND registers an ODP
 * MR: nothing is pinned (pinned_vm does not move), and the device maps
 * pages when its accesses fault (MRCT_QP_POST; MRCT_DEV_READ and
 * MRCT_DEV_WRITE do not fault: they fail -EAGAIN on a page that is not
 * mapped). MRCT_ODP_ADVISE is ib_advise_mr() on such an MR; MRCT_ODP_STATS
 * reads its counters and the device's. The vhca device's own fault-queue
 * counters are in /sys/kernel/debug/vhca/<dev>/odp.
 */

/* mrct_odp_advise.advice: the IB_UVERBS_ADVISE_MR_ADVICE_* values */
#define MRCT_ADVISE_PREFETCH		0
#define MRCT_ADVISE_PREFETCH_WRITE	1
#define MRCT_ADVISE_PREFETCH_NO_FAULT	2
/* mrct_odp_advise.flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH */
#define MRCT_ADVISE_FLUSH		0x1U

/**
 * struct mrct_odp_advise - MRCT_ODP_ADVISE: ib_advise_mr() on one range
 * @addr: (in) first address, in the MR's address space (its iova)
 * @length: (in) bytes
 * @handle: (in) MR, from MRCT_REG
 * @advice: (in) MRCT_ADVISE_*, passed unchecked
 * @flags: (in) MRCT_ADVISE_FLUSH or 0 (asynchronous), passed unchecked
 * @pd: (in) PD index the advice is given on, below MRCT_NUM_PDS
 * @reserved: zero
 *
 * Return: 0 or the errno of ib_advise_mr(): without MRCT_ADVISE_FLUSH it
 * only queues the prefetch; -ENOENT no such MR; -ENODEV no device.
 */
struct mrct_odp_advise {
	__u64 addr;
	__u32 length;
	__u32 handle;
	__u32 advice;
	__u32 flags;
	__u32 pd;
	__u32 reserved;
};

/**
 * struct mrct_odp_stats - MRCT_ODP_STATS: ODP counters of an MR and its device
 * @handle: (in) an ODP MR
 * @reserved: zero
 * @faults: (out) faults that mapped pages of the MR
 * @fault_pages: (out) pages they mapped
 * @invalidations: (out) notifier invalidations that unmapped pages of it
 * @invalidated_pages: (out) pages they unmapped
 * @prefetched_pages: (out) pages mapped by MRCT_ODP_ADVISE
 * @mapped_pages: (out) pages mapped now
 * @dev_faults: (out) the device's resolved faults, every MR's
 * @dev_fault_errors: (out) the device's faults that failed
 * @dev_fault_pages: (out) pages the device's faults mapped
 * @dev_invalidations: (out) the device's invalidations
 * @dev_invalidated_pages: (out) pages they unmapped
 * @dev_prefetches: (out) the device's successful prefetches
 * @dev_prefetched_pages: (out) pages they mapped
 * @children: (out) implicit ODP MR: its children live now (0 otherwise)
 * @children_created: (out) implicit ODP MR: children it ever created
 * @children_reclaimed: (out) implicit ODP MR: children reclaimed idle
 * @dev_children_created: (out) the device's implicit children created
 * @dev_children_reclaimed: (out) the device's children reclaimed idle
 *
 * An implicit ODP MR's counters add up its children's.
 *
 * Return: 0; -ENOENT no such MR; -EINVAL not an ODP MR (or bad input);
 * -EOPNOTSUPP not a vhca device; -ENODEV no device.
 */
struct mrct_odp_stats {
	__u32 handle;
	__u32 reserved;
	__u64 faults;
	__u64 fault_pages;
	__u64 invalidations;
	__u64 invalidated_pages;
	__u64 prefetched_pages;
	__u64 mapped_pages;
	__u64 dev_faults;
	__u64 dev_fault_errors;
	__u64 dev_fault_pages;
	__u64 dev_invalidations;
	__u64 dev_invalidated_pages;
	__u64 dev_prefetches;
	__u64 dev_prefetched_pages;
	__u64 children;
	__u64 children_created;
	__u64 children_reclaimed;
	__u64 dev_children_created;
	__u64 dev_children_reclaimed;
};

#define MRCT_ODP_ADVISE		_IOW(MRCT_IOC_MAGIC, 0xA0, struct mrct_odp_advise)
#define MRCT_ODP_STATS		_IOWR(MRCT_IOC_MAGIC, 0xA1, struct mrct_odp_stats)

/* End of on-demand paging ----------------------------------------------- */

/*
 * dma-buf MRs. The module carries a dma-buf exporter of its own: a
 * buffer of pages, made with MRCT_DMABUF_CREATE and returned as a dma-buf
 * file descriptor of the caller (O_CLOEXEC), which the buffer lives as
 * long as (and as long as any importer, an MR, holds it). A DYNAMIC
 * buffer's exporter has pin/unpin, so an importer may let it move:
 * MRCT_DMABUF_MOVE copies the bytes to new pages under the buffer's
 * reservation lock and tells the importers (move_notify) - unless one has
 * it pinned. MRCT_DMABUF_RW reads and writes the bytes with the CPU, and
 * MRCT_DMABUF_INFO counts what importers did to the buffer. None of these
 * need a bound device; they refuse a descriptor that is not one of the
 * module's buffers (-EINVAL).
 *
 * MRCT_REG_DMABUF registers a range of any dma-buf (this module's, or a
 * udmabuf) through the device's reg_user_mr_dmabuf; the MR is an MR of
 * the context like MRCT_REG's (MRCT_DEREG, MRCT_DEV_*, MRCT_QP_POST).
 * MRCT_DMABUF_STATS reads mrcore's counters of such an MR and of its
 * device (also in /sys/kernel/debug/mrcore/<dev>/dmabuf).
 */

/* Largest buffer of MRCT_DMABUF_CREATE. */
#define MRCT_DMABUF_MAX_SIZE	(64U << 20)

/* mrct_dmabuf_create.flags, mrct_dmabuf_info.flags */
#define MRCT_DMABUF_DYNAMIC	0x1U	/* the exporter has pin/unpin */
/*
 * mrct_dmabuf_info.flags only: the kernel has CONFIG_DMABUF_MOVE_NOTIFY,
 * so an importer that can fault may take a dynamic buffer unpinned.
 */
#define MRCT_DMABUF_MOVE_NOTIFY	0x2U

/**
 * struct mrct_dmabuf_create - MRCT_DMABUF_CREATE: a buffer of zeroed pages
 * @size: (in) bytes, a non-zero multiple of the page size, at most
 *	  MRCT_DMABUF_MAX_SIZE
 * @flags: (in) MRCT_DMABUF_DYNAMIC or 0 (a static exporter: importers
 *	   map it at attach time, and it never moves)
 * @fd: (out) the dma-buf file descriptor
 *
 * Return: 0; -EINVAL bad @size or @flags; -ENOMEM; -EMFILE.
 */
struct mrct_dmabuf_create {
	__u64 size;
	__u32 flags;
	__s32 fd;
};

/* mrct_dmabuf_rw.flags */
#define MRCT_DMABUF_RW_WRITE	0x1U	/* copy from @ptr into the buffer */

/**
 * struct mrct_dmabuf_rw - MRCT_DMABUF_RW: the CPU reads or writes a buffer
 * @offset: (in) first byte in the buffer
 * @length: (in) bytes, 1 .. MRCT_MAX_XFER; within the buffer
 * @ptr: (in) user buffer the bytes are copied to (read) or from (write)
 * @fd: (in) one of the module's dma-buf descriptors
 * @flags: (in) MRCT_DMABUF_RW_WRITE or 0
 *
 * Under the buffer's reservation lock, so never in the middle of a move;
 * the importers' mappings are synced for the CPU around the copy.
 * Return: 0; -EINVAL bad input or not one of the module's buffers;
 * -EBADF; -EFAULT; -ENOMEM.
 */
struct mrct_dmabuf_rw {
	__u64 offset;
	__u64 length;
	__u64 ptr;
	__s32 fd;
	__u32 flags;
};

/**
 * struct mrct_dmabuf_fd - MRCT_DMABUF_MOVE: move a buffer to new pages
 * @fd: (in) one of the module's DYNAMIC dma-buf descriptors
 * @reserved: zero
 *
 * Under the reservation lock: new pages are allocated, the importers are
 * told (move_notify: after it no device reaches the old pages), the bytes
 * copied and the old pages freed. Return: 0; -EBUSY an importer has the
 * buffer pinned; -EINVAL not DYNAMIC, bad input or not one of the
 * module's buffers; -EBADF; -ENOMEM.
 */
struct mrct_dmabuf_fd {
	__s32 fd;
	__u32 reserved;
};

/**
 * struct mrct_dmabuf_info - MRCT_DMABUF_INFO: what importers did to a buffer
 * @fd: (in) one of the module's dma-buf descriptors
 * @flags: (out) MRCT_DMABUF_DYNAMIC if the buffer is;
 *	   MRCT_DMABUF_MOVE_NOTIFY if the kernel has CONFIG_DMABUF_MOVE_NOTIFY
 * @size: (out) bytes
 * @pins: (out) pins held now (an importer's dma_buf_pin(), and the one
 *	  dma-buf's core takes per mapping of a dynamic buffer when the
 *	  kernel lacks CONFIG_DMABUF_MOVE_NOTIFY)
 * @maps: (out) map_dma_buf calls
 * @unmaps: (out) unmap_dma_buf calls
 * @moves: (out) MRCT_DMABUF_MOVE calls that moved it
 * @attachments: (out) attachments now
 * @live: (out) buffers of the module alive now, every caller's
 *
 * Return: 0; -EINVAL not one of the module's buffers; -EBADF.
 */
struct mrct_dmabuf_info {
	__s32 fd;
	__u32 flags;
	__u64 size;
	__u64 pins;
	__u64 maps;
	__u64 unmaps;
	__u64 moves;
	__u64 attachments;
	__u64 live;
};

/**
 * struct mrct_reg_dmabuf - MRCT_REG_DMABUF: reg_user_mr_dmabuf on PD @pd
 * @offset: (in) first byte in the buffer
 * @length: (in) bytes
 * @iova: (in) I/O virtual address of the first byte
 * @fd: (in) a dma-buf descriptor (any exporter's), passed unchecked
 * @access: (in) MRCT_ACCESS_* bits, passed unchecked
 * @pd: (in) PD index, below MRCT_NUM_PDS
 * @handle: (out) the MR's handle in this context, never 0
 * @info: (out) keys and translation
 *
 * The arguments reach the driver as given (mrcore checks them). The MR
 * holds the buffer: @fd may be closed before MRCT_DEREG. Return: 0 or
 * mrcore's errno; -EOPNOTSUPP the device has no reg_user_mr_dmabuf;
 * -ENODEV no device.
 */
struct mrct_reg_dmabuf {
	__u64 offset;
	__u64 length;
	__u64 iova;
	__s32 fd;
	__u32 access;
	__u32 pd;
	__u32 handle;
	struct mrct_mr_info info;
};

/* mrct_dmabuf_stats.flags */
#define MRCT_DMABUF_MR_PINNED	0x1U	/* pinned fallback: never moves */
#define MRCT_DMABUF_MR_MAPPED	0x2U	/* the buffer is mapped now */

/**
 * struct mrct_dmabuf_stats - MRCT_DMABUF_STATS: dma-buf counters of an MR
 * @handle: (in) a dma-buf MR
 * @flags: (out) MRCT_DMABUF_MR_*
 * @moves: (out) move_notify calls on the MR
 * @faults: (out) device faults on it
 * @remaps: (out) faults that mapped the buffer again
 * @dev_regs_movable: (out) the device's movable registrations
 * @dev_regs_pinned: (out) the device's pinned registrations
 * @dev_moves: (out) move_notify calls, every MR of the device
 * @dev_faults: (out) the device's dma-buf faults
 * @dev_fault_errors: (out) those that failed
 * @dev_remaps: (out) those that mapped a buffer again
 *
 * Return: 0; -ENOENT no such MR; -EINVAL not a dma-buf MR (or bad
 * input); -EOPNOTSUPP not a vhca device; -ENODEV no device.
 */
struct mrct_dmabuf_stats {
	__u32 handle;
	__u32 flags;
	__u64 moves;
	__u64 faults;
	__u64 remaps;
	__u64 dev_regs_movable;
	__u64 dev_regs_pinned;
	__u64 dev_moves;
	__u64 dev_faults;
	__u64 dev_fault_errors;
	__u64 dev_remaps;
};

#define MRCT_DMABUF_CREATE	_IOWR(MRCT_IOC_MAGIC, 0xB0, struct mrct_dmabuf_create)
#define MRCT_DMABUF_RW		_IOW(MRCT_IOC_MAGIC, 0xB1, struct mrct_dmabuf_rw)
#define MRCT_DMABUF_MOVE	_IOW(MRCT_IOC_MAGIC, 0xB2, struct mrct_dmabuf_fd)
#define MRCT_DMABUF_INFO	_IOWR(MRCT_IOC_MAGIC, 0xB3, struct mrct_dmabuf_info)
#define MRCT_REG_DMABUF		_IOWR(MRCT_IOC_MAGIC, 0xB4, struct mrct_reg_dmabuf)
#define MRCT_DMABUF_STATS	_IOWR(MRCT_IOC_MAGIC, 0xB5, struct mrct_dmabuf_stats)

/* End of dma-buf MRs ---------------------------------------------------- */

/* Stamped writes under rereg and dereg ----------------------------------- */

/*
 * mrcore_test_stamp.c: RDMA WRITEs kept in flight into an MR M while the
 * module reregisters M (IB_MR_REREG_TRANS) back and forth between two user
 * buffers, or deregisters it, so that a test can tell where every write
 * landed. Needs a vhca device: its rereg keeps M's keys.
 *
 * Write i of a call (sequence s = @first + i) copies slot s of a source
 * MR to slot s of M: @slot_size bytes from @src_iova + s * @slot_size
 * (@src_lkey) to @iova + s * @slot_size (M's rkey). Slots are distinct
 * per sequence, so once the caller has stamped each source slot with its
 * own sequence, every byte a write leaves names the write.
 *
 * A change of M (a rereg, or the dereg) moves it to the next generation;
 * in generation g M is registered at @addr[g % 2] (same @iova, same
 * @length), so the caller registers M at @addr[@gen % 2] first. A
 * kernel thread keeps up to @depth WRITEs posted on QP @qp of the pair
 * all along; the calling thread waits until @clean writes posted after
 * the last change have completed, then changes M, while the queue stays
 * full, and so on until @count writes were posted. Each write's record
 * says which changes may have overlapped it: @gen_post is the number of
 * changes finished before it was posted, @gen_done the number begun
 * before its completion was polled; it may have landed only in the
 * buffers of generations @gen_post to @gen_done.
 *
 * After each change the module copies, from the buffer M left (all of
 * it after the dereg, else the slots of the writes that were not yet
 * complete when the change began), what the device may no longer touch,
 * and compares it once those writes are done: @stale_bytes.
 */
#define MRCT_STAMP_MAX_WRITES	65536
#define MRCT_STAMP_MAX_SLOT	4096
#define MRCT_STAMP_MAX_LEN	(64U << 20)
/* How long the calls wait without any completion. */
#define MRCT_STAMP_WAIT_MS	60000

/**
 * struct mrct_stamp_rec - what became of one write of MRCT_STAMP_WRITES
 * @gen_post: changes of M finished before the write was posted
 * @gen_done: changes of M begun before its completion was polled
 * @status: its completion's status; MRCT_WC_NONE when not posted
 * @reserved: zero
 */
struct mrct_stamp_rec {
	__u32 gen_post;
	__u32 gen_done;
	__u32 status;
	__u32 reserved;
};

/* mrct_stamp_writes.flags */
#define MRCT_STAMP_DEREG	0x1U	/* one change, a dereg of M; no rereg */
#define MRCT_STAMP_FLAGS	MRCT_STAMP_DEREG

/**
 * struct mrct_stamp_writes - MRCT_STAMP_WRITES: writes into M while it
 *	changes
 * @src_iova: (in) slot 0 of the source, in @src_lkey's address space
 * @iova: (in) M's iova, slot 0 of the target; kept by every rereg
 * @addr: (in) the user buffers M alternates between, page offsets equal
 *	  to @iova's
 * @length: (in) M's length, at most MRCT_STAMP_MAX_LEN, and room for
 *	    slot @first + @count - 1
 * @recs: (in) user array of @count struct mrct_stamp_rec, (out) filled
 * @stale_bytes: (out) bytes of a buffer M had left that changed later
 * @stale_offset: (out) offset in its buffer of the first of them
 * @pair: (in) pair; its PD is M's and the source's
 * @qp: (in) 0: post on A (to B), 1: post on B (to A)
 * @mr: (in) M's handle; gone after MRCT_STAMP_DEREG
 * @src_lkey: (in) the source's key, passed as given
 * @slot_size: (in) bytes per write: a multiple of 8, at most
 *	       MRCT_STAMP_MAX_SLOT
 * @first: (in) sequence of the first write
 * @count: (in) writes to post, 1 to MRCT_STAMP_MAX_WRITES
 * @depth: (in) writes in flight at most, 1 to MRCT_QP_DEPTH
 * @clean: (in) writes posted after a change that complete before the
 *	   next change begins, at least 1
 * @flags: (in) MRCT_STAMP_*
 * @gen: (in) M's generation, (out) after the changes
 * @changes: (out) changes made
 * @busy_changes: (out) of them, those begun with writes posted and not
 *		  yet complete
 * @posted: (out) writes posted; posting stops at the first failed
 *	    completion (the QP is then in ERR: destroy the pair)
 * @completed: (out) writes whose completion was polled: all posted
 * @status: (out) MRCT_WC_SUCCESS, or the first failed completion's status
 * @post_err: (out) ib_post_send()'s error, if it failed
 * @stale_gen: (out) the generation M had moved to when the first stale
 *	       byte's buffer was copied
 *
 * Return: 0 once every posted write has completed (see @status,
 * @post_err and @recs); -ETIMEDOUT no completion for MRCT_STAMP_WAIT_MS
 * (the pair then refuses further work with -EIO); the errno of a rereg or
 * dereg that failed; -EINTR a fatal signal; -EFAULT a buffer unreadable;
 * -EOPNOTSUPP not a vhca device; -ENOENT no such pair or MR; -EINVAL bad
 * input; -ENOMEM.
 */
struct mrct_stamp_writes {
	__u64 src_iova;
	__u64 iova;
	__u64 addr[2];
	__u64 length;
	__u64 recs;
	__u64 stale_bytes;
	__u64 stale_offset;
	__u32 pair;
	__u32 qp;
	__u32 mr;
	__u32 src_lkey;
	__u32 slot_size;
	__u32 first;
	__u32 count;
	__u32 depth;
	__u32 clean;
	__u32 flags;
	__u32 gen;
	__u32 changes;
	__u32 busy_changes;
	__u32 posted;
	__u32 completed;
	__u32 status;
	__s32 post_err;
	__u32 stale_gen;
};

/**
 * struct mrct_qp_wait_recv - MRCT_QP_WAIT_RECV: the next receive completion
 * @handle: (in) pair
 * @qp: (in) the QP whose receive: 0 A, 1 B
 * @status: (out) the receive completion's status
 * @opcode: (out) its opcode
 * @byte_len: (out) its byte_len
 * @qp_state: (out) states of that QP and of its peer after it, as
 *	      MRCT_QP_POST reports them
 * @reserved: zero
 *
 * For a receive whose SEND failed, which MRCT_QP_POST does not wait for.
 * Send completions on that QP's CQ are dropped. Return: 0; -ETIMEDOUT no
 * receive completion within MRCT_QP_WAIT_MS (the pair is left as it is);
 * -EINTR a fatal signal; -ENODEV the device is being removed; -ENOENT no
 * such pair; -EINVAL bad input; -EIO the pair timed out before.
 */
struct mrct_qp_wait_recv {
	__u32 handle;
	__u32 qp;
	__u32 status;
	__u32 opcode;
	__u32 byte_len;
	__u32 qp_state[2];
	__u32 reserved;
};

#define MRCT_STAMP_WRITES	_IOWR(MRCT_IOC_MAGIC, 0xC0, struct mrct_stamp_writes)
#define MRCT_QP_WAIT_RECV	_IOWR(MRCT_IOC_MAGIC, 0xC1, struct mrct_qp_wait_recv)

/* End of stamped writes ------------------------------------------------- */

#endif /* _MRCORE_TEST_UAPI_H */
