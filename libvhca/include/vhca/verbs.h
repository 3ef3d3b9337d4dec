/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libvhca: the memory-registration calls Debian's librxe 44 cannot carry
 * to a vhca device, on the struct ibv_context libibverbs opened for it.
 *
 * Every call works on a context whose device is vhca (vhcav_is_vhca())
 * and fails with EOPNOTSUPP on any other device, touching nothing.
 * Functions returning a pointer return NULL and set errno; functions
 * returning int return 0 or an errno value (and set errno to it too).
 *
 * MRs returned here are uverbs MR objects of the context, like librxe's:
 * they are used in work requests by lkey/rkey, and the kernel frees them
 * when the process exits. Free them with vhcav_dereg_mr(), never with
 * ibv_dereg_mr() (which would hand libvhca's memory to librxe).
 * vhcav_rereg_mr() and vhcav_advise_mr() take MRs and PDs of either kind.
 *
 * Thread safety: as libibverbs: calls on different objects may run
 * concurrently; calls on one MR are the caller's to serialise.
 *
 * Fork: libvhca does not mark registered memory MADV_DONTFORK; Linux 6.1
 * copies pinned pages on fork (ibv_is_fork_initialized() says
 * IBV_FORK_UNNEEDED), so ibv_fork_init() is not needed.
 */
#ifndef VHCA_VERBS_H
#define VHCA_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct vhcav_caps - limits of a vhca device, from vhcav_query()
 * @abi_version: the kernel module's VHCA_UAPI_ABI_VERSION
 * @max_iov: most entries of vhcav_reg_mr_iov()
 * @max_ranges: most ranges of an indirect key (after a strided layout is
 *	expanded)
 * @max_indirect_depth: how deep indirect keys nest
 * @max_mkeys: key slots: a requested key's index (key >> 8) is in
 *	[1, max_mkeys)
 * @max_alloc: most bytes of vhcav_alloc_mr()
 */
struct vhcav_caps {
	uint32_t abi_version;
	uint32_t max_iov;
	uint32_t max_ranges;
	uint32_t max_indirect_depth;
	uint32_t max_mkeys;
	uint64_t max_alloc;
};

/*
 * 1 if @ctx is a vhca device whose module speaks this library's ABI
 * (VHCA_UAPI_ABI_VERSION), else 0 (errno untouched). Asked of the kernel
 * on every call, as every other call asks it first.
 */
int vhcav_is_vhca(struct ibv_context *ctx);

/*
 * Fill @caps. 0, EOPNOTSUPP (not vhca), EPROTO (a vhca module of another
 * ABI version: @caps is filled, abi_version says which, and every other
 * call fails with EOPNOTSUPP) or EINVAL (NULL arguments).
 */
int vhcav_query(struct ibv_context *ctx, struct vhcav_caps *caps);

/*
 * ibv_rereg_mr()'s contract (flags IBV_REREG_MR_CHANGE_TRANSLATION,
 * _PD, _ACCESS, any together; @pd, @addr, @length, @access read only for
 * their flag). On success @mr's public fields (pd, addr, length, lkey,
 * rkey) are what the kernel now has; on failure @mr is unchanged and
 * still registered as before. 0 or an errno value: EINVAL (bad flags or
 * arguments), EOPNOTSUPP (not vhca, or a kind of MR that cannot be
 * re-registered in place: ODP, dma-buf, indirect), EBUSY (memory windows
 * bound), or the kernel's error.
 */
int vhcav_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access);

/*
 * ibv_advise_mr()'s contract: @advice IBV_ADVISE_MR_ADVICE_PREFETCH,
 * _PREFETCH_WRITE or _PREFETCH_NO_FAULT over @num_sge ranges of ODP MRs
 * of @pd; @flags 0 or IBV_ADVISE_MR_FLAG_FLUSH (the prefetch is done
 * when the call returns). @num_sge 1 .. 4095 (the kernel's attribute
 * length is 16 bits). 0 or an errno value.
 */
int vhcav_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);

/*
 * ibv_reg_dmabuf_mr()'s contract (mr->addr is @offset, as libibverbs
 * sets it). NULL and errno on failure.
 */
struct ibv_mr *vhcav_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				   size_t length, uint64_t iova, int fd,
				   int access);

/*
 * ibv_reg_mr_iova() with a requested key (fi_mr_regattr()'s
 * requested_key): @key, 0 meaning "any", is the exact lkey/rkey the MR
 * gets. ENOKEY: the key is in use; EKEYREJECTED: the key can never be
 * given (index 0 or past max_mkeys). Other errors as ibv_reg_mr().
 */
struct ibv_mr *vhcav_reg_mr_key(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, int access, uint32_t key);

/*
 * One MR over an iovec (fi_mr_regv()): the @iovcnt pieces are laid end to
 * end from @iova, so byte k of the MR is the k-th byte of the
 * concatenation. @access as ibv_reg_mr() (ODP allowed; MW_BIND only with
 * one piece); @key as vhcav_reg_mr_key(). mr->addr is @iov[0].iov_base,
 * mr->length the sum of the lengths.
 */
struct ibv_mr *vhcav_reg_mr_iov(struct ibv_pd *pd, const struct iovec *iov,
				int iovcnt, uint64_t iova, int access,
				uint32_t key);

/**
 * struct vhcav_key_range - a piece of an indirect key
 * @lkey: an lkey of @pd: an MR, or another indirect key
 * @addr: first address of the piece in that key's address space
 * @length: bytes, not 0
 */
struct vhcav_key_range {
	uint32_t lkey;
	uint64_t addr;
	uint64_t length;
};

/*
 * An indirect key (seed 002's UMR "list" layout): the @n ranges laid end
 * to end from @iova. @access: rights only (IBV_ACCESS_LOCAL_WRITE,
 * _REMOTE_READ, _REMOTE_WRITE, _REMOTE_ATOMIC). Keys nest to
 * max_indirect_depth (ELOOP past it). An access through the key meeting
 * a named MR that has been deregistered fails on the device (a remote
 * access error or a local protection error), never reaching stale pages.
 * @n is 1 .. max_ranges, and at most 2730 (the kernel's attribute length
 * is 16 bits, an entry 24 bytes). mr->addr is @iova, mr->length the sum
 * of the lengths.
 */
struct ibv_mr *vhcav_reg_indirect(struct ibv_pd *pd,
				  const struct vhcav_key_range *ranges,
				  unsigned int n, uint64_t iova, int access,
				  uint32_t key);

/**
 * struct vhcav_interleaved - a column of a strided layout
 * @lkey: an lkey of @pd
 * @addr: where the first repetition starts in that key's address space
 * @bytes_count: bytes taken per repetition, not 0
 * @bytes_skip: bytes skipped after each piece
 */
struct vhcav_interleaved {
	uint32_t lkey;
	uint64_t addr;
	uint32_t bytes_count;
	uint64_t bytes_skip;
};

/*
 * An indirect key over a strided layout (seed 002's "interleaved"): for
 * each of @repeat repetitions, each of the @n columns in order gives
 * @bytes_count bytes, the column's address moving by bytes_count +
 * bytes_skip per repetition. @access and @key as vhcav_reg_indirect().
 * @n * @repeat is 1 .. max_ranges, @n at most 2730. mr->addr is @iova,
 * mr->length @repeat times the sum of the bytes_count.
 */
struct ibv_mr *vhcav_reg_interleaved(struct ibv_pd *pd,
				     const struct vhcav_interleaved *cols,
				     unsigned int n, uint32_t repeat,
				     uint64_t iova, int access, uint32_t key);

/*
 * Memory for an MR, allocated by the kernel (seed 002's
 * IBV_ACCESS_ALLOCATE_MR): @length bytes (rounded up to pages), zeroed,
 * in physically contiguous blocks, the largest first, so the MR needs
 * the fewest translation entries. The memory is mapped into the caller
 * at mr->addr (aligned to the largest block) and registered there with
 * @access (no ON_DEMAND) and @key as vhcav_reg_mr_key(). It is charged
 * to RLIMIT_MEMLOCK; vhcav_dereg_mr() unmaps and frees it. At most
 * max_alloc bytes.
 */
struct ibv_mr *vhcav_alloc_mr(struct ibv_pd *pd, size_t length, int access,
			      uint32_t key);

/*
 * Deregister an MR made by this library. 0 or an errno value: EINVAL for
 * an MR libvhca did not make (use ibv_dereg_mr()), EOPNOTSUPP for one of
 * a device that is not vhca, EBUSY while memory windows are bound to it
 * (the MR stays).
 */
int vhcav_dereg_mr(struct ibv_mr *mr);

#ifdef __cplusplus
}
#endif

#endif /* VHCA_VERBS_H */
