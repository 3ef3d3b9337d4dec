/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore_test: what the module's files share.
 *
 * mrcore_test_main.c owns the module and the file, and hands each ioctl
 * to the file that serves it: mrcore_test_dev.c binds a context to a
 * device and unbinds it, mrcore_test_mr.c holds its MRs, mrcore_test_qp.c
 * its QP pairs (mrcore_test_post.c posts on them), mrcore_test_bench.c
 * and mrcore_test_stamp.c run loops on a pair. The feature files
 * (mrcore_test_frwr.c, whose loops are in mrcore_test_frwr_cycle.c,
 * mrcore_test_fmr.c, mrcore_test_mw.c with mrcore_test_gaps.c, and the
 * others of enum mrct_ext_id) each add ioctls through a struct mrct_ext:
 * the main ioctl hands them every command it does not know, and unbinding
 * a device lets each free what it made on it after the pairs go and
 * before the MRs and PDs do.
 */
#ifndef _MRCORE_TEST_H
#define _MRCORE_TEST_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test_uapi.h"

/**
 * struct mrct_pair - a loopback RC pair: QP A (0) and QP B (1)
 * @cq: CQ of each QP, for its sends and its receives
 * @qp: the QPs; qp[i]'s peer is qp[1 - i]
 * @next_wr_id: wr_id of the next send (receives: with MRCT_RECV_WRID)
 * @wedged: a wait timed out: a late completion may still come, so the
 *	pair takes no more work
 *
 * Owned by its context and used under the context's lock.
 */
struct mrct_pair {
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	u64 next_wr_id;
	bool wedged;
};

/* Feature files (enum index into mrct_ctx.ext[]). */
enum mrct_ext_id {
	MRCT_EXT_COUNTER,	/* first: unbound last, once the others' MRs went */
	MRCT_EXT_FRWR,
	MRCT_EXT_FMR,
	MRCT_EXT_MW,
	MRCT_EXT_KEYS,
	MRCT_EXT_ODP,
	MRCT_EXT_DMABUF,
	MRCT_NUM_EXTS
};

/**
 * struct mrct_ctx - the state of one open file
 * @node: entry in mrct_ctxs
 * @lock: serialises the calls on this context and device removal
 * @ibdev: bound device with a reference held, or NULL
 * @is_vhca: @ibdev is a vhca device: the device-side calls may be used
 * @pd: PDs allocated on @ibdev, indexed by the UAPI's PD index
 * @mrs: handle -> struct ib_mr
 * @next_handle: allocation cursor for @mrs
 * @nr_mrs: entries in @mrs
 * @pairs: handle -> struct mrct_pair
 * @next_pair: allocation cursor for @pairs
 * @nr_pairs: entries in @pairs
 * @ext: per feature file, its own state on the bound device (or NULL);
 *	used and freed by that file only, under @lock
 */
struct mrct_ctx {
	struct list_head node;
	struct mutex lock;	/* protects the fields below */
	struct ib_device *ibdev;
	bool is_vhca;
	struct ib_pd *pd[MRCT_NUM_PDS];
	struct xarray mrs;
	u32 next_handle;
	u32 nr_mrs;
	struct xarray pairs;
	u32 next_pair;
	u32 nr_pairs;
	void *ext[MRCT_NUM_EXTS];
};

/**
 * struct mrct_ext - a feature file's hooks
 * @ioctl: handle @cmd, or return -ENOTTY if it is not the file's; called
 *	without @ctx->lock (take it around anything that uses the device)
 * @unbind: free everything made on @ctx->ibdev and clear @ctx->ext[id];
 *	called under @ctx->lock, after the pairs are destroyed and before
 *	the MRs and PDs are freed, in reverse enum mrct_ext_id order
 */
struct mrct_ext {
	long (*ioctl)(struct mrct_ctx *ctx, unsigned int cmd,
		      void __user *uarg);
	void (*unbind)(struct mrct_ctx *ctx);
};

extern const struct mrct_ext mrct_frwr_ext;
extern const struct mrct_ext mrct_fmr_ext;
extern const struct mrct_ext mrct_mw_ext;
extern const struct mrct_ext mrct_counter_ext;
extern const struct mrct_ext mrct_keys_ext;
extern const struct mrct_ext mrct_odp_ext;
extern const struct mrct_ext mrct_dmabuf_ext;

/* Receive wr_ids have this bit, send wr_ids do not. */
#define MRCT_RECV_WRID		BIT_ULL(63)

/*
 * Rounds of a benchmark loop (polls of its CQ, copies) between two reads
 * of the clock. The VM's clocksource is the HPET, whose every read is an
 * emulated device access: read_hpet was 23% of a perf -a profile of the
 * FRWR benchmark, and 21% of dp_bench's, when the loops read it at each
 * round. A set time is overrun by at most one batch.
 */
#define MRCT_BENCH_CLOCK_POLLS	64

/*
 * Has @min_ns passed since @start? Called once a round, it reads the
 * clock only every MRCT_BENCH_CLOCK_POLLS calls (*@rounds counts them).
 */
static inline bool mrct_bench_time_up(u32 *rounds, u64 start, u64 min_ns)
{
	return !(++*rounds % MRCT_BENCH_CLOCK_POLLS) &&
	       ktime_get_ns() - start >= min_ns;
}

/*
 * By file. The ioctl handlers (int mrct_foo(ctx, uarg), named after their
 * MRCT_* command) take the context's lock themselves; the other calls
 * are made under it unless they say otherwise.
 */

/* mrcore_test_dev.c: binding; the main file's hooks into it */
extern const struct mrct_ext *const mrct_exts[MRCT_NUM_EXTS];
int mrct_set_device(struct mrct_ctx *ctx, void __user *uarg);
void mrct_dev_ctx_add(struct mrct_ctx *ctx);
void mrct_dev_ctx_del(struct mrct_ctx *ctx);
bool mrct_dev_removing(struct mrct_ctx *ctx);
int mrct_dev_init(void);
void mrct_dev_exit(void);

/* mrcore_test_kmemleak.c: debugfs's kmemleak_plant */
void mrct_kmemleak_init(void);
void mrct_kmemleak_exit(void);

/* mrcore_test_mr.c: handlers; MRs for the feature files */
int mrct_reg(struct mrct_ctx *ctx, void __user *uarg);
int mrct_xfer_read(struct mrct_ctx *ctx, void __user *uarg);
int mrct_xfer_write(struct mrct_ctx *ctx, void __user *uarg);
int mrct_rereg(struct mrct_ctx *ctx, void __user *uarg);
int mrct_dereg(struct mrct_ctx *ctx, void __user *uarg);
int mrct_counters(struct mrct_ctx *ctx, void __user *uarg);
void mrct_mr_adopt(struct mrct_ctx *ctx, struct ib_mr *mr, struct ib_pd *pd);
int mrct_mr_store(struct mrct_ctx *ctx, struct ib_mr *mr, u32 *handle);
int mrct_fill_info(struct mrct_ctx *ctx, struct ib_mr *mr,
		   struct mrct_mr_info *info);
struct mrc_mr *mrct_vhca_mr(struct mrct_ctx *ctx, u32 handle);

/* mrcore_test_qp.c: handlers; the pairs for the posting files */
int mrct_qp_create(struct mrct_ctx *ctx, void __user *uarg);
int mrct_qp_destroy(struct mrct_ctx *ctx, void __user *uarg);
void mrct_pair_free(struct mrct_ctx *ctx, struct mrct_pair *pair);
struct mrct_pair *mrct_pair_get(struct mrct_ctx *ctx, u32 handle);
u32 mrct_bad_wr(const void *bad, const void *wr);
int mrct_wait_wc(struct mrct_ctx *ctx, struct ib_cq *cq, u64 wr_id,
		 bool recv, struct ib_wc *wc);
u32 mrct_qp_state(struct ib_qp *qp);
u32 mrct_qp_state_after_error(struct ib_qp *qp);
int mrct_post_wait(struct mrct_ctx *ctx, struct mrct_pair *pair, u32 qpi,
		   struct ib_send_wr *wr, s32 *post_err, u32 *bad_wr,
		   u32 *status);
void mrct_qp_states(struct mrct_pair *pair, u32 qpi, u32 status, u32 *state);

/* mrcore_test_post.c: handlers */
int mrct_qp_post(struct mrct_ctx *ctx, void __user *uarg);
int mrct_qp_post_recv(struct mrct_ctx *ctx, void __user *uarg);

/* mrcore_test_bench.c: handlers */
int mrct_bench_memcpy(struct mrct_ctx *ctx, void __user *uarg);
int mrct_bench_write(struct mrct_ctx *ctx, void __user *uarg);

/*
 * mrcore_test_stamp.c, handlers: stamped RDMA WRITEs into an MR while it
 * is reregistered or deregistered, and the wait for a receive completion
 * whose SEND failed.
 */
int mrct_stamp_writes(struct mrct_ctx *ctx, void __user *uarg);
int mrct_qp_wait_recv(struct mrct_ctx *ctx, void __user *uarg);

/*
 * mrcore_test_frwr.c: FRWR MRs and their buffers, and the calls that
 * mrcore_test_frwr_cycle.c's loops are made of
 */
/**
 * struct mrct_frwr_map - where the pages of a registration come from
 * @first: buffer chunk of entry 0
 * @stride: entry i is chunk (@first + i * @stride) % nchunks
 * @offset: byte offset into the first chunk
 * @nents: scatterlist entries (chunks) the registration spans
 * @length: bytes from @offset
 * @iova: the MR's iova once mapped
 */
struct mrct_frwr_map {
	u32 first;
	u32 stride;
	u32 offset;
	u32 nents;
	u64 length;
	u64 iova;
};

/**
 * struct mrct_frwr_mr - an FRWR MR of a context and its buffer
 * @mr: from ib_alloc_mr(IB_MR_TYPE_MEM_REG)
 * @chunk_shift: log2 of a chunk's bytes
 * @nchunks: chunks in @pages and @dma
 * @pages: first page of each chunk (order @chunk_shift - PAGE_SHIFT)
 * @dma: each chunk's DMA address on the device
 * @sgl: @nchunks entries, filled for each ib_map_mr_sg()
 * @cur: mapping of the last REG_MR that completed successfully
 * @has_cur: @cur is set
 */
struct mrct_frwr_mr {
	struct ib_mr *mr;
	u32 chunk_shift;
	u32 nchunks;
	struct page **pages;
	u64 *dma;
	struct scatterlist *sgl;
	struct mrct_frwr_map cur;
	bool has_cur;
};

/*
 * May a key from user space name local memory on @ibdev? Not the local
 * DMA key: a kernel QP's SGE or a device access through it reaches any
 * physical address, and only the kernel may use it.
 */
static inline bool mrct_user_lkey_ok(const struct ib_device *ibdev, u32 key)
{
	return !(ibdev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY) ||
	       key != ibdev->local_dma_lkey;
}

/* mrct_user_lkey_ok() for every SGE of a list. */
static inline bool mrct_user_sges_ok(const struct ib_device *ibdev,
				     const struct ib_sge *sge, u32 num)
{
	u32 i;

	for (i = 0; i < num; i++)
		if (!mrct_user_lkey_ok(ibdev, sge[i].lkey))
			return false;
	return true;
}

static inline u64 mrct_chunk_bytes(const struct mrct_frwr_mr *fm)
{
	return BIT_ULL(fm->chunk_shift);
}

struct mrct_frwr;
struct mrct_frwr *mrct_frwr_get(struct mrct_ctx *ctx);
struct mrct_frwr_mr *mrct_frwr_mr_get(struct mrct_frwr *fr, u32 handle);
int mrct_frwr_buf_alloc(struct ib_device *ibdev, struct mrct_frwr_mr *fm);
void mrct_frwr_buf_free(struct ib_device *ibdev, struct mrct_frwr_mr *fm);
int mrct_frwr_map_sg(struct mrct_frwr_mr *fm, struct mrct_frwr_map *map,
		     u32 page_size);
void mrct_frwr_sync(struct ib_device *ibdev, struct mrct_frwr_mr *fm,
		    const struct mrct_frwr_map *map, bool for_cpu);
u64 mrct_frwr_cpu(struct mrct_frwr_mr *fm, const struct mrct_frwr_map *map,
		  u64 pos, u64 len, u32 seed, bool count);
u32 mrct_frwr_wr_key(struct ib_mr *mr, u32 flags, u32 key);
int mrct_frwr_rdma(struct mrct_ctx *ctx, struct mrct_frwr *fr,
		   struct mrct_pair *pair, u32 qpi,
		   const struct mrct_frwr_map *map, bool write,
		   u32 rkey, u64 pos, u64 len, u32 seed, u32 seed_old,
		   struct mrct_frwr_xfer *out);

/* mrcore_test_frwr_cycle.c: handlers, called by mrcore_test_frwr.c */
int mrct_frwr_cycle(struct mrct_ctx *ctx, void __user *uarg);
int mrct_frwr_bench(struct mrct_ctx *ctx, void __user *uarg);

/*
 * mrcore_test_mw.c: the MW state, which mrcore_test_gaps.c's SG_GAPS MRs
 * live in; mrcore_test_gaps.c: handlers, and freeing one MR on unbind
 */
/**
 * struct mrct_mw - the MW state of a context (ctx->ext[MRCT_EXT_MW])
 * @mws: handle -> struct mrc_mw
 * @next_mw: allocation cursor for @mws
 * @nr_mws: entries in @mws
 * @inds: handle -> struct mrc_mr, an indirect key
 * @next_ind: allocation cursor for @inds
 * @nr_inds: entries in @inds
 * @gaps: handle -> struct mrct_gaps_mr
 * @next_gaps: allocation cursor for @gaps
 * @nr_gaps: entries in @gaps
 *
 * Created by the first call after MRCT_SET_DEVICE, freed on unbind; used
 * under the context's lock.
 */
struct mrct_mw {
	struct xarray mws;
	u32 next_mw;
	u32 nr_mws;
	struct xarray inds;
	u32 next_ind;
	u32 nr_inds;
	struct xarray gaps;
	u32 next_gaps;
	u32 nr_gaps;
};

struct mrct_gaps_mr;
struct mrct_mw *mrct_mw_get(struct mrct_ctx *ctx);
int mrct_mw_store(struct xarray *xa, u32 *next, void *obj, u32 *handle);
int mrct_gaps_alloc(struct mrct_ctx *ctx, void __user *uarg);
int mrct_gaps_free(struct mrct_ctx *ctx, void __user *uarg);
int mrct_gaps_reg(struct mrct_ctx *ctx, void __user *uarg);
int mrct_gaps_buf(struct mrct_ctx *ctx, void __user *uarg, bool write);
int mrct_gaps_free_one(struct ib_device *ibdev, struct mrct_gaps_mr *g);

/*
 * The tail of every ioctl that replies: @fn(@ctx, @req) under the
 * context's lock, then *@req copied back to @uarg if @fn succeeded.
 * Evaluates to @fn's error, or -EFAULT when the copy fails (whatever @fn
 * made stays then, until the file is closed).
 */
#define mrct_call_locked(ctx, fn, req, uarg) ({				\
	struct mrct_ctx *__ctx = (ctx);					\
	typeof(req) __req = (req);					\
	int __err;							\
									\
	mutex_lock(&__ctx->lock);					\
	__err = fn(__ctx, __req);					\
	mutex_unlock(&__ctx->lock);					\
	if (!__err && copy_to_user(uarg, __req, sizeof(*__req)))	\
		__err = -EFAULT;					\
	__err;								\
})

#endif /* _MRCORE_TEST_H */
