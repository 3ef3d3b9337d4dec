/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: prototypes shared between the core's own files, grouped by the
 * file that defines them. Nothing here is visible to backends.
 */
#ifndef _MRCORE_LOC_H
#define _MRCORE_LOC_H

#include <linux/bits.h>
#include <linux/dma-direct.h>
#include <linux/printk.h>
#include <linux/ratelimit.h>
#include <linux/sizes.h>

#include <rdma/mrcore.h>

/* Debug messages name the device they are about. */
#define mrc_dbg(mdev, fmt, ...) \
	pr_debug("%s: " fmt, (mdev)->name, ##__VA_ARGS__)

/*
 * A caller bug that mrcore survives, such as freeing a stale key or freeing
 * twice: the call is rejected without touching live state, counted in
 * stats_misuse and reported on one ratelimited line naming the function.
 * Not a WARN: nothing is inconsistent, and the KUnit suites provoke these
 * on purpose and check the count.
 */
static inline bool __mrc_misuse(struct mrc_device *mdev, bool bad,
				const char *fn)
{
	if (unlikely(bad)) {
		atomic64_inc(&mdev->stats_misuse);
		pr_err_ratelimited("%s: %s: caller bug rejected\n", mdev->name,
				   fn);
	}
	return bad;
}

#define mrc_misuse(mdev, cond) __mrc_misuse(mdev, cond, __func__)

/* Debug messages name the MR's key and the function. */
#define mrc_dbg_mr(mr, fmt, ...)					\
	do {								\
		const struct mrc_mr *__mr = (mr);			\
									\
		mrc_dbg(__mr->mdev, "MR[0x%08x] %s: " fmt, __mr->key,	\
			__func__, ##__VA_ARGS__);			\
	} while (0)

/* inject.c */

/*
 * mdev->inject packs the armed stage and its countdown in one word, so
 * arming, disarming and every pass are single atomic operations: 0 when
 * disarmed, else (passes left, the failing one included) <<
 * MRC_INJECT_LEFT_SHIFT | (stage + 1).
 */
#define MRC_INJECT_LEFT_SHIFT	4
#define MRC_INJECT_STAGE_MASK	(BIT(MRC_INJECT_LEFT_SHIFT) - 1)
#define MRC_INJECT_MAX_LEFT	1000000U

bool __mrc_inject(struct mrc_device *mdev, enum mrc_stage stage);
void mrc_inject_debugfs_add(struct mrc_device *mdev);
u64 mrc_inject_total(struct mrc_device *mdev);

/**
 * mrc_inject - a registration passes a stage: should it fail here?
 * @mdev: device
 * @stage: the stage being passed
 *
 * Counts the pass against the failure armed through debugfs "fail_stage"
 * and returns true exactly once, on the armed pass, which also disarms.
 * Disarmed, this is one READ_ONCE.
 *
 * Context: any context.
 * Return: true if the caller must fail the stage with its errno.
 */
static inline bool mrc_inject(struct mrc_device *mdev, enum mrc_stage stage)
{
	if (likely(!atomic_read(&mdev->inject)))
		return false;
	return __mrc_inject(mdev, stage);
}

/* mkey.c */

/*
 * What owns a key: the tag of its entry in mdev->mkeys (xa_tag_pointer()
 * takes 0, 1 and 3). MR is 0, so an untagged owner is an MR.
 */
enum mrc_mkey_kind {
	MRC_MKEY_KIND_MR = 0,	/* struct mrc_mr (mrc_mkey_alloc()) */
	MRC_MKEY_KIND_MW = 1,	/* struct mrc_mw (mw.c) */
};

/*
 * Marks a type 2 window's entry while the window is bound to a QP, so
 * that the windows of a destroyed QP are found without a scan of every
 * key (XA_MARK_0 is the allocating xarray's free mark).
 */
#define MRC_MKEY_MARK_QP	XA_MARK_1

int mrc_mkey_alloc_kind(struct mrc_device *mdev, void *owner,
			enum mrc_mkey_kind kind, u32 *key);
int mrc_mkey_check_req(struct mrc_device *mdev, u32 key);
int mrc_mkey_take(struct mrc_device *mdev, void *owner,
		  enum mrc_mkey_kind kind, u32 want, u32 *key);
void *mrc_mkey_find(struct mrc_device *mdev, u32 key, enum mrc_mkey_kind *kind);
void *mrc_mkey_find_index(struct mrc_device *mdev, u32 index,
			  enum mrc_mkey_kind *kind);
void mrc_mkey_set_variant(struct mrc_device *mdev, u32 key);
void mrc_mkey_mark_qp(struct mrc_device *mdev, u32 key, bool bound);
bool mrc_mkey_any_qp(struct mrc_device *mdev);
void *mrc_mkey_next_qp(struct mrc_device *mdev, u32 *index);
bool mrc_key_users_tryget(struct mrc_key_users *u);
void mrc_key_users_put(struct mrc_key_users *u);
void mrc_key_users_quiesce(struct mrc_key_users *u);
void mrc_key_users_revive(struct mrc_key_users *u);

static inline void mrc_key_users_init(struct mrc_key_users *u)
{
	atomic_set(&u->count, 0);
	u->dying = false;
}

/* main.c */
extern struct dentry *mrc_debugfs_root;

/* reg.c: the workqueue of asynchronous registrations */
int mrc_reg_init(void);
void mrc_reg_exit(void);

/* kinds.c */

struct mrc_umem;
struct mrc_seg_iter;

/**
 * struct mrc_kind_ops - what mrcore does differently per kind of MR
 * @check: the checks of a registration that need no allocation (@pd and
 *	the requested key are checked already), so that an asynchronous
 *	registration refuses synchronously; NULL: the kind is not
 *	registered through mrc_reg_mr() (-EINVAL)
 * @reg: the registration itself, checks included; @umem is memory a user
 *	MR's registering process prepared for a worker, else NULL
 * @dereg: the function that frees an MR of the kind (mrc_dereg_any())
 * @release: tears down the kind's own state once the device no longer
 *	resolves the key, in mrc_dereg_mr(); NULL for none
 * @state: the state of the MR's context; NULL: VALID while registered
 * @fault: resolves a device page fault on the MR (mrc_odp_fault()'s
 *	entry), other than an ODP user MR's; NULL for none
 * @segs: the DMA segments of the MR's memory, for rereg to rebuild its
 *	entries (mrc_mr_segs()); NULL for none
 */
struct mrc_kind_ops {
	int (*check)(const struct mrc_pd *pd, const struct mrc_reg_attr *attr);
	struct mrc_mr *(*reg)(struct mrc_pd *pd,
			      const struct mrc_reg_attr *attr,
			      struct mrc_umem *umem);
	int (*dereg)(struct mrc_mr *mr);
	void (*release)(struct mrc_mr *mr);
	enum mrc_mkey_state (*state)(const struct mrc_mr *mr);
	int (*fault)(struct mrc_mr *mr, u64 iova, u64 len, u32 flags);
	void (*segs)(const struct mrc_mr *mr, struct mrc_seg_iter *it);
};

extern const struct mrc_kind_ops mrc_kinds[MRC_MR_NUM_TYPES];

/* The kind of a registered MR (its type is always in range). */
static inline const struct mrc_kind_ops *mrc_mr_kind(const struct mrc_mr *mr)
{
	return &mrc_kinds[mr->type];
}

/* basic.c: DMA, physical, sg and user MRs */
int mrc_dma_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr);
struct mrc_mr *mrc_dma_reg(struct mrc_pd *pd, const struct mrc_reg_attr *attr,
			   struct mrc_umem *umem);
int mrc_phys_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr);
void mrc_phys_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it);
struct mrc_mr *mrc_phys_reg(struct mrc_pd *pd,
			    const struct mrc_reg_attr *attr,
			    struct mrc_umem *umem);
int mrc_sg_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr);
void mrc_sg_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it);
struct mrc_mr *mrc_sg_reg(struct mrc_pd *pd, const struct mrc_reg_attr *attr,
			  struct mrc_umem *umem);
int mrc_user_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr);
struct mrc_mr *mrc_user_reg(struct mrc_pd *pd,
			    const struct mrc_reg_attr *attr,
			    struct mrc_umem *umem);
void mrc_user_release(struct mrc_mr *mr);
void mrc_user_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it);
struct mrc_xlt_table;

/*
 * User pages are not mapped through the DMA API but addressed directly
 * (mrc_user_addr()): on a device with MRC_CAP_USER_DIRECT or without a
 * DMA device.
 */
static inline bool mrc_user_direct(const struct mrc_device *mdev)
{
	return !mdev->dma_dev || (mdev->caps.flags & MRC_CAP_USER_DIRECT);
}

/* The direct DMA address of @phys on @mdev (mrc_user_direct()). */
static inline dma_addr_t mrc_user_addr(const struct mrc_device *mdev,
				       phys_addr_t phys)
{
	return mdev->dma_dev ? phys_to_dma(mdev->dma_dev, phys) : phys;
}

int mrc_user_xlt(struct mrc_device *mdev, struct mrc_umem *umem, u64 iova,
		 u64 length, u32 access, struct mrc_xlt_table *t);

/* frwr.c */
enum mrc_mkey_state mrc_frmr_state(const struct mrc_mr *mr);
int mrc_frmr_do_inv(struct mrc_device *mdev, u32 pdn, u32 key, bool nowait);
int mrc_frmr_check_attr(const struct mrc_pd *pd,
			const struct mrc_reg_attr *attr);
struct mrc_mr *mrc_frmr_reg_attr(struct mrc_pd *pd,
				 const struct mrc_reg_attr *attr,
				 struct mrc_umem *umem);

/* fmr.c */
int mrc_fmr_check_reg_attr(const struct mrc_pd *pd,
			   const struct mrc_reg_attr *attr);
struct mrc_mr *mrc_fmr_reg_attr(struct mrc_pd *pd,
				const struct mrc_reg_attr *attr,
				struct mrc_umem *umem);

/* indirect.c */
unsigned int mrc_indirect_depth(const struct mrc_mr *mr);
int mrc_indirect_check_attr(const struct mrc_pd *pd,
			    const struct mrc_reg_attr *attr);
struct mrc_mr *mrc_indirect_reg_attr(struct mrc_pd *pd,
				     const struct mrc_reg_attr *attr,
				     struct mrc_umem *umem);

/* mr.c: the core every kind uses */

struct mrc_mkey_ctx;

/**
 * struct mrc_install - what mrc_mr_install() puts behind a key
 * @table: a planned translation, written to fresh space, and reached by
 *	the VALID context mrc_ctx_fill() makes of it; or NULL for a kind
 *	that writes its own entries and context, with the fields below
 * @xlt_bytes: without @table: translation space to reserve in the MR's
 *	xlt
 * @write: without @table: writes the entries into the MR's xlt (a fence
 *	follows), or NULL when there are none yet (no fence)
 * @ctx: without @table: fills the context
 * @arg: passed to @write
 */
struct mrc_install {
	struct mrc_xlt_table *table;
	u64 xlt_bytes;
	int (*write)(struct mrc_mr *mr, const void *arg);
	void (*ctx)(const struct mrc_mr *mr, struct mrc_mkey_ctx *ctx);
	const void *arg;
};

void mrc_mr_init(struct mrc_mr *mr, struct mrc_pd *pd, enum mrc_mr_type type,
		 u32 access);
struct mrc_mr *mrc_mr_zalloc(struct mrc_pd *pd, enum mrc_mr_type type,
			     u32 access, u32 key, size_t size);
struct mrc_mr *mrc_mr_alloc(struct mrc_pd *pd,
			    const struct mrc_reg_attr *attr);
void mrc_mr_free(struct mrc_mr *mr);
int mrc_mr_install(struct mrc_mr *mr, const struct mrc_install *in);

/* mrc_mr_install() of a planned translation. */
static inline int mrc_mr_install_table(struct mrc_mr *mr,
				       struct mrc_xlt_table *t)
{
	const struct mrc_install in = { .table = t };

	return mrc_mr_install(mr, &in);
}

int mrc_dereg_mr_nested(struct mrc_mr *mr, unsigned int subclass);
int mrc_check_user_range(u64 start, u64 length, u64 iova);
void mrc_mr_count(struct mrc_mr *mr);
int mrc_check_pd(const struct mrc_pd *pd);
int mrc_write_mkey(struct mrc_device *mdev, u32 key,
		   const struct mrc_mkey_ctx *ctx);
struct mrc_mr *mrc_mr_lookup(struct mrc_device *mdev, u32 key);
void mrc_mr_put(struct mrc_mr *mr);
enum mrc_mkey_state mrc_mr_state(const struct mrc_mr *mr);
void mrc_ctx_fill(struct mrc_mkey_ctx *ctx, u32 key, const struct mrc_pd *pd,
		  u32 access, const struct mrc_xlt_table *t);
void mrc_mr_set_xlt(struct mrc_mr *mr, const struct mrc_xlt_table *t);
void mrc_mr_get_xlt(const struct mrc_mr *mr, struct mrc_xlt_table *t);
void mrc_mr_segs(const struct mrc_mr *mr, struct mrc_seg_iter *it);

/* ZERO_BASED puts the first byte at address 0 of the key. */
static inline u64 mrc_effective_iova(u64 iova, u32 access)
{
	return access & MRC_ACCESS_ZERO_BASED ? 0 : iova;
}

/* xlt_build.c */

/**
 * struct mrc_seg_iter - the DMA segments of a registration, as one stream
 * @sg: next scatterlist entry (scatterlist source)
 * @sg_left: DMA entries not yet returned
 * @buf: next range (array source)
 * @buf_left: ranges not yet returned
 * @skip: bytes of the stream still to skip before the window
 * @left: bytes of the window still to return
 *
 * Plain data: copying the struct forks the iteration.
 */
struct mrc_seg_iter {
	struct scatterlist *sg;
	unsigned int sg_left;
	const struct mrc_phys_buf *buf;
	unsigned int buf_left;
	u64 skip;
	u64 left;
};

/**
 * struct mrc_mtt_builder - state of a chunked MTT fill
 * @it: remaining segments
 * @flags: R/W bits of every entry
 * @page_shift: log2 of the page size
 * @va: address of the first byte after the current segment
 * @next_blk: address of the next block (page) to emit
 * @seg_addr: DMA address of the current segment (valid if @seg_len)
 * @seg_va: address of the current segment's first byte
 * @seg_len: bytes of the current segment; 0 before the first
 * @prev_end: DMA address just past the current segment
 * @started: a segment has been taken
 * @left: entries still to emit
 */
struct mrc_mtt_builder {
	struct mrc_seg_iter it;
	u64 flags;
	unsigned int page_shift;
	u64 va;
	u64 next_blk;
	u64 seg_addr;
	u64 seg_va;
	u64 seg_len;
	u64 prev_end;
	bool started;
	u32 left;
};

/**
 * struct mrc_klm_builder - state of a chunked KLM fill
 * @it: remaining segments
 * @key: key of every entry
 * @run_addr: DMA address of the rest of the current run
 * @run_len: bytes left in the current run; 0 for none
 * @next_addr: a segment looked at and put back (valid if @have_next)
 * @next_len: its length
 * @have_next: a segment was put back
 */
struct mrc_klm_builder {
	struct mrc_seg_iter it;
	u32 key;
	u64 run_addr;
	u64 run_len;
	u64 next_addr;
	u64 next_len;
	bool have_next;
};

/**
 * struct mrc_xlt_table - one translation, planned and then written
 * @segs: the memory, exactly @length bytes
 * @iova: address of its first byte in the key's address space
 * @length: bytes
 * @writable: MTT entries carry MRC_MTT_WRITE
 * @odp: an ODP MR's table: @nentries non-present (zero) entries are
 *	written, @segs is unused, and the context carries MRC_MKEY_F_ODP
 * @mode: enum mrc_access_mode, set by mrc_xlt_plan()
 * @page_shift: MTT page shift, set by mrc_xlt_plan()
 * @nentries: entries, set by mrc_xlt_plan()
 * @xlt: where the entries are written; size 0 until then
 */
struct mrc_xlt_table {
	struct mrc_seg_iter segs;
	u64 iova;
	u64 length;
	bool writable;
	bool odp;
	u8 mode;
	u8 page_shift;
	u32 nentries;
	struct mrc_xlt xlt;
};

void mrc_seg_iter_sg(struct mrc_seg_iter *it, struct scatterlist *sgl,
		     unsigned int nents, u64 offset, u64 length);
void mrc_seg_iter_phys(struct mrc_seg_iter *it,
		       const struct mrc_phys_buf *bufs, unsigned int nbufs);
bool mrc_seg_next(struct mrc_seg_iter *it, u64 *addr, u64 *len);
unsigned long mrc_page_size_segs(const struct mrc_seg_iter *segs, u64 iova,
				 unsigned long pgsz_bitmap, u64 *bytes);
int mrc_mtt_count(u64 iova, u64 length, unsigned int page_shift, u32 *count);
void mrc_mtt_builder_init(struct mrc_mtt_builder *b,
			  const struct mrc_seg_iter *segs, u64 iova,
			  unsigned int page_shift, u32 count, bool writable);
int mrc_mtt_fill(struct mrc_mtt_builder *b, __le64 *out, u32 max);
void mrc_klm_builder_init(struct mrc_klm_builder *b,
			  const struct mrc_seg_iter *segs, u32 key);
u32 mrc_klm_fill(struct mrc_klm_builder *b, struct mrc_klm *out, u32 max);
int mrc_klm_count(const struct mrc_seg_iter *segs, u32 max, u32 *count);
int mrc_xlt_plan(const struct mrc_device *mdev, struct mrc_xlt_table *t);

/* xlt.c */

/* Entries built in the CPU per write_xlt call, at most. */
#define MRC_XLT_CHUNK_BYTES	SZ_64K
/* Tables up to this size are built in a stack buffer (32 MTT entries). */
#define MRC_XLT_STACK_BYTES	256

int mrc_xlt_init(struct mrc_device *mdev);
void mrc_xlt_fini(struct mrc_device *mdev);
int mrc_xlt_write(struct mrc_device *mdev, u64 offset, const void *src,
		  size_t len);
int mrc_xlt_table_write(struct mrc_device *mdev, struct mrc_xlt_table *t);
void mrc_xlt_table_free(struct mrc_device *mdev, struct mrc_xlt_table *t);

/* umem.c */
struct mrc_umem *mrc_umem_get(struct mrc_device *mdev, u64 start, u64 length,
			      u32 access);
void mrc_umem_release(struct mrc_umem *umem);
struct mrc_umem *mrc_umem_prepare(struct mrc_device *mdev, u64 start,
				  u64 length, u32 access);
int mrc_umem_populate(struct mrc_umem *umem);
void mrc_umem_abandon(struct mrc_umem *umem);
int mrc_umem_check_range(u64 start, u64 length);
bool mrc_umem_writable(const struct mrc_umem *umem);
u64 mrc_umem_start(const struct mrc_umem *umem);
void mrc_umem_segs(const struct mrc_umem *umem, struct mrc_seg_iter *it);

/* odp.c */
int mrc_odp_check(const struct mrc_pd *pd, const struct mrc_reg_attr *attr);
struct mrc_mr *mrc_odp_reg(struct mrc_pd *pd, const struct mrc_reg_attr *attr);
void mrc_odp_release(struct mrc_mr *mr);

/* dmabuf.c */
int mrc_dmabuf_fault(struct mrc_mr *mr, u64 iova, u64 len, u32 flags);
void mrc_dmabuf_release(struct mrc_mr *mr);

#endif /* _MRCORE_LOC_H */
