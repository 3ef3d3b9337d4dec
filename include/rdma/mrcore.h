/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: a hardware-independent RDMA memory-region core.
 *
 * A driver backend describes its device (caps) and supplies struct
 * mrc_hw_ops; mrcore owns protection domains, memory keys and the space
 * of the device's translation area. The backend only ever sees encoded
 * requests: "write this mkey context into slot N", "write these bytes at
 * translation offset X", "invalidate slot N", "fence".
 */
#ifndef _RDMA_MRCORE_H
#define _RDMA_MRCORE_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <linux/idr.h>

struct device;
struct scatterlist;
struct sg_table;
struct dentry;
struct mrc_device;

/*
 * Memory keys: bits 31..8 are the index of the mkey context slot in device
 * memory, bits 7..0 the variant. Index 0 is never handed out. The variant
 * of an index changes every time the index is allocated again, so a key
 * held by a stale user never matches the live context.
 */
#define MRC_KEY_VARIANT_BITS	8
#define MRC_KEY_VARIANT_MASK	0xffU
#define MRC_KEY_INDEX_BITS	24
#define MRC_MAX_MKEYS		BIT(MRC_KEY_INDEX_BITS)

static inline u32 mrc_key_index(u32 key)
{
	return key >> MRC_KEY_VARIANT_BITS;
}

static inline u8 mrc_key_variant(u32 key)
{
	return key & MRC_KEY_VARIANT_MASK;
}

static inline u32 mrc_make_key(u32 index, u8 variant)
{
	return index << MRC_KEY_VARIANT_BITS | variant;
}

/* PD numbers are 24 bits, like the PD field of an mkey context. */
#define MRC_MAX_PDS		BIT(24)
/* The context of the reserved local DMA key matches any PD. */
#define MRC_PDN_ANY		0

/* Translation area: allocated in segments of 64 bytes (8 MTT or 4 KLM). */
#define MRC_XLT_SEG_SHIFT	6
#define MRC_XLT_SEG_SIZE	BIT(MRC_XLT_SEG_SHIFT)
/* Largest translation area: 2^26 segments, buddy bitmaps within 16 MiB. */
#define MRC_MAX_XLT_SIZE	BIT_ULL(32)
#define MRC_MTT_ENTRY_SIZE	8
#define MRC_KLM_ENTRY_SIZE	16

enum mrc_cap_flags {
	/* KLM access mode, and MRC_MKEY_F_NESTED_RIGHTS in KLM contexts */
	MRC_CAP_KLM		= 1 << 0,
	MRC_CAP_ODP		= 1 << 1,	/* non-present MTT entries fault */
	/*
	 * The translation area starts zeroed, and mrcore zeroes what it
	 * frees, so fresh space reads as non-present entries: an ODP
	 * registration then writes no entries at all.
	 */
	MRC_CAP_XLT_ZEROED	= 1 << 2,
	/* KSM access mode; with MRC_CAP_ODP, implicit ODP MRs */
	MRC_CAP_KSM		= 1 << 3,
	/*
	 * The device reaches memory at its direct DMA address,
	 * phys_to_dma(@dma_dev, phys), seeing what the CPU sees: a software
	 * engine that moves bytes with the CPU. mrcore then maps user pages
	 * (pinned and ODP) through the DMA API neither at registration nor
	 * at a fault, and their entries hold those direct addresses: a
	 * mapping would only let bounce buffers (swiotlb) come between the
	 * engine and the pages the process uses, and no sync at
	 * registration time can keep the two in step while the MR lives.
	 * Memory a kernel caller maps itself (FRWR pages, physical MRs,
	 * dma-buf attachments) keeps its DMA addresses.
	 */
	MRC_CAP_USER_DIRECT	= 1 << 4,
};

/**
 * struct mrc_caps - what a backend's device offers
 * @max_mkeys: mkey context slots, a power of two in [2, MRC_MAX_MKEYS];
 *	slot 0 is never used, so max_mkeys - 1 keys (the local DMA key
 *	included) can be live at once
 * @max_pds: protection domains, in [2, MRC_MAX_PDS]; PD number 0 is never
 *	used, so max_pds - 1 PDs can be live at once
 * @xlt_size: bytes of translation area, a non-zero multiple of
 *	MRC_XLT_SEG_SIZE and <= MRC_MAX_XLT_SIZE; the segment count need not
 *	be a power of two
 * @page_size_bitmap: page sizes MTT entries may describe; must include
 *	PAGE_SIZE
 * @flags: enum mrc_cap_flags
 * @max_counters: slots of the device's counter table, 0 or in [2,
 *	MRC_MAX_COUNTERS]; slot 0 is never used (a context's counter 0 means
 *	"none"), so max_counters - 1 counters can be live at once. 0: the
 *	device counts nothing and mrc_alloc_counter() fails -EOPNOTSUPP
 */
struct mrc_caps {
	u32 max_mkeys;
	u32 max_pds;
	u64 xlt_size;
	unsigned long page_size_bitmap;
	u32 flags;
	u32 max_counters;
};

/* Largest counter table a device may have (mrc_caps.max_counters). */
#define MRC_MAX_COUNTERS	BIT(16)

enum mrc_mkey_state {
	MRC_MKEY_INVALID = 0,	/* slot unused or revoked: every access fails */
	MRC_MKEY_FREE,		/* allocated, no translation (fast-reg target) */
	MRC_MKEY_VALID,		/* accesses allowed within the context's rules */
};

/* mrc_mkey_ctx.flags */
#define MRC_MKEY_F_ODP		BIT(0)	/* entries may be non-present: fault */
/* The keys the entries name must each grant the access's right. */
#define MRC_MKEY_F_NESTED_RIGHTS	BIT(1)
#define MRC_MKEY_F_ALL		(MRC_MKEY_F_ODP | MRC_MKEY_F_NESTED_RIGHTS)

enum mrc_access_mode {
	MRC_ACCESS_MODE_PA = 0,	/* iova is a DMA address; no table */
	MRC_ACCESS_MODE_MTT,	/* uniform pages of 1 << page_shift bytes */
	MRC_ACCESS_MODE_KLM,	/* {byte count, key, address} list */
	/*
	 * {key, address} entries of 1 << page_shift bytes each (the byte
	 * count is unused, written 0): entry i covers the block of the
	 * key's address space at iova + (i << page_shift), which must be
	 * aligned to the block size.
	 */
	MRC_ACCESS_MODE_KSM,
};

/* Access rights carried in a context: the ib_access_flags bit values. */
#define MRC_ACCESS_LOCAL_WRITE		BIT(0)
#define MRC_ACCESS_REMOTE_WRITE		BIT(1)
#define MRC_ACCESS_REMOTE_READ		BIT(2)
#define MRC_ACCESS_REMOTE_ATOMIC	BIT(3)
#define MRC_ACCESS_MW_BIND		BIT(4)
/*
 * Device-only: mrcore sets it on the context of every memory window and
 * never accepts it from a caller (mrc_check_access() and the window
 * binds refuse it). IBA 10.6.7: a window grants remote access only, so
 * the device refuses a local access (the key used as an lkey) through a
 * context that carries it. Above every ib_access_flags bit, the optional
 * range (bits 20..29) included.
 */
#define MRC_ACCESS_REMOTE_ONLY		BIT(30)

/**
 * struct mrc_mkey_ctx - the CPU form of one mkey context
 * @key: full key (index and variant) the device must match
 * @state: enum mrc_mkey_state
 * @access_mode: enum mrc_access_mode
 * @pdn: PD number, or MRC_PDN_ANY
 * @access: MRC_ACCESS_* bits: those of MRC_ACCESS_HW_MASK, plus
 *	MRC_ACCESS_REMOTE_ONLY on a memory window's context
 * @page_shift: log2 of the MTT page size (MTT mode) or of the block
 *	each entry covers (KSM mode)
 * @iova: first I/O virtual address the key covers
 * @length: bytes covered; U64_MAX means "all addresses" (PA mode)
 * @xlt_offset: byte offset of the first MTT/KLM entry in the translation area
 * @xlt_entries: number of MTT/KLM entries
 * @qpn: a type 2 memory window's QP: remote accesses through the key are
 *	allowed only on the QP with this number; 0 for every other key
 * @counter: slot of the device's counter table that counts remote writes
 *	through this context (struct mrc_counter), 0 for none; a memory
 *	window's context has none (writes through it count on its MR's)
 * @flags: MRC_MKEY_F_*. MRC_MKEY_F_ODP (MTT or KSM mode, devices with
 *	MRC_CAP_ODP only): an access that meets an MTT entry without the
 *	R/W bit it needs, or a KSM entry naming key 0, is a page fault for
 *	the backend to report to mrc_odp_fault(), not a protection error.
 *	A fault met below a KSM or KLM entry is reported against the
 *	outermost context of the walk that carries the flag (an implicit
 *	ODP MR's, not its child's). MRC_MKEY_F_NESTED_RIGHTS (KLM mode,
 *	devices with MRC_CAP_KLM; mrcore sets it on indirect keys only):
 *	at every access, each key an entry names must itself grant the
 *	right the access needs, as if the requester had named it, so a
 *	named key's narrowed rights take effect at once. Without it a
 *	named key is checked for PD, not rights (a window's MR, an
 *	implicit ODP child, the local DMA key under an SG_GAPS MR)
 *
 * The backend encodes this into its own device-memory layout.
 */
struct mrc_mkey_ctx {
	u32 key;
	u8 state;
	u8 access_mode;
	u8 page_shift;
	u8 flags;
	u32 pdn;
	u32 access;
	u64 iova;
	u64 length;
	u64 xlt_offset;
	u32 xlt_entries;
	u32 qpn;
	u32 counter;
};

/**
 * struct mrc_hw_ops - how mrcore reaches the device
 * @fence: order every earlier table write before any later one, as seen by
 *	the device. mrcore issues one fence per registration, between the
 *	translation entries and the context that makes them reachable.
 * @invalidate_mkey: make slot @index unusable (state INVALID) and return only
 *	when the device can no longer start an access through it.
 * @write_mkey: write @ctx into context slot @index, so that the device never
 *	resolves an access through a mix of the previous context and @ctx. If
 *	the slot held a usable context (rereg switches a live key this way),
 *	return only when no device access that resolved the previous context
 *	is still running, as for @invalidate_mkey: the caller frees what the
 *	previous context reached as soon as this returns. While the slot
 *	switches, accesses through the key may fail as if it were invalid
 *	(vhca revokes, drains, then writes; mlx5's UMR rereg has the same
 *	window), so a rereg of a key in use by a peer can fail that I/O.
 * @write_xlt: copy @len bytes of encoded entries to byte @offset of the
 *	translation area. mrcore writes whole entries, so @offset and @len
 *	are multiples of 8; each 8-byte word is then stored whole: a device
 *	access running beside the write reads such a word (an MTT entry, a
 *	KLM entry's half) either as it was or as written, never part of
 *	each.
 * @read_counter: the value of counter slot @counter (1 .. max_counters - 1).
 * @reset_counter: set counter slot @counter to 0.
 * @set_mkey_counter: set only the counter field of context slot @index to
 *	@counter (0: none), whatever the slot's state, without revoking it:
 *	accesses through the key go on. When the field held a counter
 *	before, return only when no remote write that found that counter in
 *	the context can still add to it.
 * @sync_mkey: return only when no device access that read translation
 *	entries of slot @index before the call is still running, without
 *	changing the slot: accesses that start later see the entries as they
 *	are now. ODP invalidation zaps entries, calls this and only then
 *	unmaps the pages. It is called from mmu notifier callbacks, so it
 *	must not allocate memory or wait for anything that may.
 *
 * The three counter ops are needed only with caps.max_counters > 0,
 * @sync_mkey only with MRC_CAP_ODP.
 * All ops may sleep, except under the _nowait exec calls
 * (mrc_frmr_exec_reg_nowait(), mrc_frmr_exec_reg_klm_nowait(),
 * mrc_exec_inv_nowait()), which only a backend's own engine makes, where
 * it cannot sleep, so the backend knows when its ops run under them:
 * there @fence, @write_xlt and @write_mkey must not sleep, and
 * @write_mkey must not wait for a drain either: while accesses are
 * running through the context it would revoke, it returns -EAGAIN.
 * A non-zero return is a negative errno and leaves the device as it was
 * before the call.
 */
struct mrc_hw_ops {
	void (*fence)(struct mrc_device *mdev);
	int (*invalidate_mkey)(struct mrc_device *mdev, u32 index);
	int (*write_mkey)(struct mrc_device *mdev, u32 index,
			  const struct mrc_mkey_ctx *ctx);
	int (*write_xlt)(struct mrc_device *mdev, u64 offset, const void *src,
			 size_t len);
	u64 (*read_counter)(struct mrc_device *mdev, u32 counter);
	void (*reset_counter)(struct mrc_device *mdev, u32 counter);
	int (*set_mkey_counter)(struct mrc_device *mdev, u32 index,
				u32 counter);
	void (*sync_mkey)(struct mrc_device *mdev, u32 index);
};

/**
 * struct mrc_xlt_buddy - buddy allocator of translation-area segments
 * @lock: protects @bits and @num_free
 * @num_segs: segments in the translation area (caps.xlt_size / 64)
 * @max_order: log2 of the largest block, rounded down (ilog2(@num_segs))
 * @bits: per order, one bit per block of that order; set = free
 * @num_free: per order, number of free blocks
 *
 * A segment count that is not a power of two starts as one free block per
 * set bit of @num_segs, largest first, so every block is still naturally
 * aligned and blocks never straddle the end of the area.
 */
struct mrc_xlt_buddy {
	spinlock_t lock;	/* protects bits, num_free */
	unsigned long num_segs;
	unsigned int max_order;
	unsigned long **bits;
	unsigned int *num_free;
};

enum mrc_mr_type {
	MRC_MR_DMA,		/* all memory, PA access mode */
	MRC_MR_PHYS,		/* caller's list of DMA address ranges */
	MRC_MR_SG,		/* caller's DMA-mapped sg_table */
	MRC_MR_USER,		/* pinned and DMA-mapped user memory */
	MRC_MR_FAST_REG,	/* fast registration: FREE until a REG_MR */
	MRC_MR_FMR,		/* FMR: mapped and unmapped by CPU calls */
	MRC_MR_INDIRECT,	/* KLM entries naming other keys */
	MRC_MR_DMABUF,		/* a range of a dma-buf (dmabuf.c) */
	MRC_MR_NUM_TYPES	/* keep me last */
};

/*
 * The stages of a registration that failure injection can fail, in the
 * order a user MR passes them. Documentation/mrcore/testing.rst has the
 * debugfs knob ("fail_stage") and the errno each stage fails with.
 */
enum mrc_stage {
	MRC_STAGE_PIN,		/* pin_user_pages of a user MR */
	MRC_STAGE_SG_ALLOC,	/* appending pinned pages to its sg_table */
	MRC_STAGE_DMA_MAP,	/* dma_map_sgtable of its table */
	MRC_STAGE_KEY_ALLOC,	/* mkey allocation */
	MRC_STAGE_XLT_ALLOC,	/* translation-area allocation */
	MRC_STAGE_WRITE_XLT,	/* ops->write_xlt of one chunk of entries */
	MRC_STAGE_WRITE_MKEY,	/* ops->write_mkey of the context */
	MRC_STAGE_NOWAIT,	/* a _nowait exec call gives up (-EAGAIN) */
	MRC_NUM_STAGES		/* keep me last */
};

/* Buckets of the fault-latency histogram: [2^i, 2^(i+1)) microseconds. */
#define MRC_ODP_HIST_BUCKETS	16

/**
 * struct mrc_odp_dev_stats - a device's on-demand paging counters
 * @faults: mrc_odp_fault() calls that mapped their range
 * @fault_errors: mrc_odp_fault() calls that failed
 * @fault_pages: pages mapped by faults
 * @invalidations: notifier invalidations that zapped at least one page
 * @invalidated_pages: pages zapped and unmapped by them
 * @prefetches: mrc_odp_prefetch() calls that succeeded
 * @prefetched_pages: pages mapped by them
 * @children_created: implicit ODP children created by faults and prefetch
 * @children_reclaimed: implicit ODP children reclaimed while idle
 * @fault_ns_hist: resolution time of successful faults, bucket i counting
 *	[2^i, 2^(i+1)) microseconds (the last bucket: everything above)
 */
struct mrc_odp_dev_stats {
	atomic64_t faults;
	atomic64_t fault_errors;
	atomic64_t fault_pages;
	atomic64_t invalidations;
	atomic64_t invalidated_pages;
	atomic64_t prefetches;
	atomic64_t prefetched_pages;
	atomic64_t children_created;
	atomic64_t children_reclaimed;
	atomic64_t fault_ns_hist[MRC_ODP_HIST_BUCKETS];
};

/**
 * struct mrc_dmabuf_dev_stats - a device's dma-buf MR counters
 * @regs_movable: registrations that follow the exporter's moves
 * @regs_pinned: registrations in the pinned fallback
 * @moves: move_notify calls on the device's dma-buf MRs
 * @faults: mrc_dmabuf_fault() calls
 * @fault_errors: mrc_dmabuf_fault() calls that failed
 * @remaps: faults that mapped the buffer again
 */
struct mrc_dmabuf_dev_stats {
	atomic64_t regs_movable;
	atomic64_t regs_pinned;
	atomic64_t moves;
	atomic64_t faults;
	atomic64_t fault_errors;
	atomic64_t remaps;
};

/**
 * struct mrc_device - one device registered by a backend
 * @name: for messages; owned by the backend
 * @ops: the backend's ops table
 * @caps: the device's capabilities, filled by the backend before register
 * @dma_dev: the struct device DMA mappings are made on; NULL for a device
 *	that reaches memory by physical address (user pages then are, as
 *	with MRC_CAP_USER_DIRECT)
 * @priv: backend's pointer
 * @mkeys: index -> owner (NULL owners are stored as reserved entries);
 *	index 0 is never used. Its xa_lock protects the array, @mkey_next
 *	and every write to @mkey_variant; lookups read it under RCU.
 * @mkey_next: next index for cyclic allocation, under @mkeys' xa_lock
 * @mkey_variant: per index, the variant of its last allocation;
 *	written under @mkeys' xa_lock, read locklessly by mrc_mkey_owner()
 * @pd_ida: PD numbers, 1 .. max_pds - 1 (the ida locks itself)
 * @xlt: translation-area allocator
 * @local_dma_lkey: reserved PA-mode key valid for every PD, local access
 * @num_pds: live PDs
 * @num_mkeys: live keys, the local DMA key included
 * @xlt_segs_used: segments of translation area in use
 * @stats_pd_allocs: PDs ever allocated
 * @stats_mkey_allocs: keys ever allocated
 * @stats_misuse: caller bugs caught: frees of stale, freed or invalid keys,
 *	PDs and translation pieces
 * @num_mrs: live memory regions
 * @num_mrs_type: live memory regions per enum mrc_mr_type
 * @pages_pinned: PAGE_SIZE pages pinned by live user MRs
 * @stats_mr_regs: memory regions ever registered
 * @stats_mr_reregs: successful re-registrations
 * @num_mws: live memory windows
 * @stats_mw_binds: successful memory window binds (unbinds included)
 * @stats_fr_regs: REG_MR work requests executed successfully
 * @inject: armed failure injection, 0 when disarmed; see mrc_inject()
 * @stats_injected: failures injected, per enum mrc_stage
 * @debugfs: this device's debugfs directory, or NULL
 * @counter_map: counter slots in use (bit 0 always set), allocated with
 *	the first counter and freed with the last; under counter.c's mutex
 * @num_counters: live counters; under counter.c's mutex
 * @reg_pending: asynchronous registrations whose completion has not
 *	returned yet; mrc_unregister_device() waits for 0
 * @odp: on-demand paging counters of the device's ODP MRs (odp.c)
 * @dmabuf: counters of the device's dma-buf MRs (dmabuf.c)
 */
struct mrc_device {
	const char *name;
	const struct mrc_hw_ops *ops;
	struct mrc_caps caps;
	struct device *dma_dev;
	void *priv;

	struct xarray mkeys;
	u32 mkey_next;
	u8 *mkey_variant;
	struct ida pd_ida;
	struct mrc_xlt_buddy xlt;
	u32 local_dma_lkey;

	atomic_t num_pds;
	atomic_t num_mkeys;
	atomic_t xlt_segs_used;
	atomic64_t stats_pd_allocs;
	atomic64_t stats_mkey_allocs;
	atomic64_t stats_misuse;
	atomic_t num_mrs;
	atomic_t num_mrs_type[MRC_MR_NUM_TYPES];
	atomic64_t pages_pinned;
	atomic64_t stats_mr_regs;
	atomic64_t stats_mr_reregs;
	atomic_t num_mws;
	atomic64_t stats_mw_binds;
	atomic64_t stats_fr_regs;
	atomic_t inject;
	atomic64_t stats_injected[MRC_NUM_STAGES];
	struct dentry *debugfs;
	unsigned long *counter_map;
	u32 num_counters;
	atomic_t reg_pending;
	struct mrc_odp_dev_stats odp;
	struct mrc_dmabuf_dev_stats dmabuf;
};

/**
 * struct mrc_pd - a protection domain, embedded in the caller's PD object
 * @mdev: owning device
 * @pdn: PD number the device compares against every context's PD
 * @reg_pending: asynchronous registrations of the PD whose completion has
 *	not returned yet (mrc_reg_mr_async()); mrc_pd_fini() waits for 0
 */
struct mrc_pd {
	struct mrc_device *mdev;
	u32 pdn;
	atomic_t reg_pending;
};

/**
 * struct mrc_xlt - a piece of translation area
 * @offset: byte offset in the translation area, a multiple of @size
 * @size: bytes reserved (a power-of-two number of segments); 0 once freed
 */
struct mrc_xlt {
	u64 offset;
	u64 size;
};

/**
 * struct mrc_key_users - lookups by key still using an object
 * @count: lookups holding the object; its teardown waits for zero
 * @dying: its teardown has begun: new lookups by key fail
 *
 * Keys arrive from peers and work requests, so an object found by key may
 * be torn down while the lookup still needs it after its RCU read-side
 * section (to take the object's mutex). Lookups hold @count; teardown sets
 * @dying and waits for @count to drain before it frees anything.
 */
struct mrc_key_users {
	atomic_t count;
	bool dying;
};

/* device.c */
int mrc_register_device(struct mrc_device *mdev);
void mrc_unregister_device(struct mrc_device *mdev);

/* pd.c */
int mrc_pd_init(struct mrc_device *mdev, struct mrc_pd *pd);
void mrc_pd_fini(struct mrc_pd *pd);

/* mkey.c */
int mrc_mkey_alloc(struct mrc_device *mdev, void *owner, u32 *key);
int mrc_mkey_alloc_at(struct mrc_device *mdev, void *owner, u32 key);
void mrc_mkey_free(struct mrc_device *mdev, u32 key);
void *mrc_mkey_owner(struct mrc_device *mdev, u32 key);

/* xlt.c */
int mrc_xlt_alloc(struct mrc_device *mdev, u64 bytes, struct mrc_xlt *xlt);
void mrc_xlt_free(struct mrc_device *mdev, struct mrc_xlt *xlt);

/*
 * Memory regions.
 *
 * Every registration validates its arguments before it allocates, builds
 * the translation in a CPU buffer, copies it to the translation area with
 * write_xlt, issues one fence and writes the mkey context last. lkey and
 * rkey are the same key. Documentation/mrcore/registration.rst has the
 * details and the errno of every call.
 */

/*
 * Registration-only access bits (never stored in a device context).
 * MRC_ACCESS_ON_DEMAND is accepted by user MRs on devices with
 * MRC_CAP_ODP (odp.c); every other registration refuses it with
 * -EOPNOTSUPP.
 */
#define MRC_ACCESS_ZERO_BASED		BIT(5)
#define MRC_ACCESS_ON_DEMAND		BIT(6)
#define MRC_ACCESS_HUGETLB		BIT(7)
#define MRC_ACCESS_RELAXED_ORDERING	BIT(20)
#define MRC_ACCESS_SUPPORTED	(MRC_ACCESS_LOCAL_WRITE |		\
				 MRC_ACCESS_REMOTE_WRITE |		\
				 MRC_ACCESS_REMOTE_READ |		\
				 MRC_ACCESS_REMOTE_ATOMIC |		\
				 MRC_ACCESS_MW_BIND |			\
				 MRC_ACCESS_ZERO_BASED |		\
				 MRC_ACCESS_HUGETLB |			\
				 MRC_ACCESS_RELAXED_ORDERING)
/* What a dma-buf MR takes (ibv_reg_dmabuf_mr(3)). */
#define MRC_DMABUF_ACCESS	(MRC_ACCESS_LOCAL_WRITE |		\
				 MRC_ACCESS_REMOTE_WRITE |		\
				 MRC_ACCESS_REMOTE_READ |		\
				 MRC_ACCESS_REMOTE_ATOMIC |		\
				 MRC_ACCESS_RELAXED_ORDERING)
/* The bits a device context carries. */
#define MRC_ACCESS_HW_MASK	(MRC_ACCESS_LOCAL_WRITE |		\
				 MRC_ACCESS_REMOTE_WRITE |		\
				 MRC_ACCESS_REMOTE_READ |		\
				 MRC_ACCESS_REMOTE_ATOMIC |		\
				 MRC_ACCESS_MW_BIND)
/*
 * Rights that let the device, or a window bound to the MR, modify memory:
 * the MR's pages are pinned writable and its MTT entries carry
 * MRC_MTT_WRITE (ib_access_writable() in ib_verbs.h counts the same bits).
 */
#define MRC_ACCESS_WRITABLE	(MRC_ACCESS_LOCAL_WRITE |		\
				 MRC_ACCESS_REMOTE_WRITE |		\
				 MRC_ACCESS_REMOTE_ATOMIC |		\
				 MRC_ACCESS_MW_BIND)

static inline bool mrc_access_writable(u32 access)
{
	return access & MRC_ACCESS_WRITABLE;
}

/*
 * MTT entry: little-endian u64, the DMA address of one page of the MR's
 * page size (at least 4 KiB, so the low 12 bits are free) | R/W enable.
 */
#define MRC_MTT_READ		BIT_ULL(0)
#define MRC_MTT_WRITE		BIT_ULL(1)
#define MRC_MTT_ADDR_MASK	(~0xfffULL)
#define MRC_MTT_MIN_PAGE_SHIFT	12

/**
 * struct mrc_klm - one KLM entry as it sits in the translation area
 * @bcount: bytes this entry covers, 1 .. MRC_KLM_MAX_BCOUNT
 * @key: key the bytes are reached through (the local DMA key for plain
 *	DMA addresses, another MR's key for indirect keys)
 * @addr: address within @key: a DMA address under the local DMA key
 *
 * The entries of a KLM-mode key are laid end to end: entry i covers the
 * @bcount bytes that follow those of entries 0 .. i - 1, starting at the
 * context's iova.
 */
struct mrc_klm {
	__le32 bcount;
	__le32 key;
	__le64 addr;
};

/* mrcore splits longer contiguous runs into entries of at most this. */
#define MRC_KLM_MAX_BCOUNT	BIT(31)

/**
 * struct mrc_phys_buf - one range of a physical MR
 * @addr: DMA address
 * @size: bytes
 */
struct mrc_phys_buf {
	u64 addr;
	u64 size;
};

struct mrc_umem;
struct mrc_counter;
struct mrc_odp;
struct mrc_dmabuf;

/**
 * struct mrc_mr - a memory region, allocated by mrcore
 * @mdev: device
 * @pd: protection domain
 * @type: enum mrc_mr_type
 * @key: lkey == rkey; kept across rereg
 * @access: MRC_ACCESS_* as registered
 * @iova: first address the key covers (0 for ZERO_BASED)
 * @length: bytes covered
 * @page_shift: MTT page size (MTT mode), 0 otherwise
 * @mode: enum mrc_access_mode of the context
 * @nentries: MTT or KLM entries written
 * @xlt: translation area holding them (size 0 for PA mode)
 * @umem: pinned user memory (MRC_MR_USER without ON_DEMAND)
 * @odp: on-demand paging state (MRC_MR_USER with ON_DEMAND), or NULL
 * @dmabuf: the dma-buf behind an MRC_MR_DMABUF MR, or NULL
 * @bufs: mrcore's copy of the ranges (MRC_MR_PHYS), to rebuild entries
 * @nbufs: entries of @bufs
 * @sgt: the caller's table (MRC_MR_SG); it must stay mapped until dereg
 * @num_mw: bound memory windows; dereg and invalidation fail -EBUSY
 *	while non-zero. Incremented only under @lock (a bind), decremented
 *	anywhere once the window's context no longer reaches the MR
 * @counter: the counter remote writes into the MR count on, or NULL;
 *	written under @lock (mrc_mr_bind_counter()), and every context of
 *	the MR mrcore writes carries it
 * @users: lookups by key (mrc_mr_lookup()) still using the MR;
 *	mrc_dereg_mr() turns new ones away and waits for these
 * @lock: serialises rereg, dereg, binds of windows to this MR and (for a
 *	fast-reg MR) REG_MR and invalidation
 * @rcu: the MR is the owner of its key, so it is freed after a grace period
 *
 * Everything but @num_mw is written only under @lock, by rereg; readers
 * that do not hold @lock see the values of the registration that was live
 * when they looked the key up, or of a later one.
 */
struct mrc_mr {
	struct mrc_device *mdev;
	struct mrc_pd *pd;
	enum mrc_mr_type type;
	u32 key;
	u32 access;
	u64 iova;
	u64 length;
	u8 page_shift;
	u8 mode;
	u32 nentries;
	struct mrc_xlt xlt;
	struct mrc_umem *umem;
	struct mrc_odp *odp;
	struct mrc_dmabuf *dmabuf;
	struct mrc_phys_buf *bufs;
	unsigned int nbufs;
	struct sg_table *sgt;
	atomic_t num_mw;
	struct mrc_counter *counter;
	struct mrc_key_users users;
	struct mutex lock;	/* protects rereg/dereg/binds of this MR */
	struct rcu_head rcu;
};

/* Rereg flags: the IB_MR_REREG_* values. */
#define MRC_REREG_TRANS		BIT(0)
#define MRC_REREG_PD		BIT(1)
#define MRC_REREG_ACCESS	BIT(2)
#define MRC_REREG_SUPPORTED	(MRC_REREG_TRANS | MRC_REREG_PD |	\
				 MRC_REREG_ACCESS)

/* access.c */
int mrc_check_access(u32 access);

/* xlt_build.c */
unsigned long mrc_best_page_size(struct scatterlist *sgl, unsigned int nents,
				 u64 iova, unsigned long pgsz_bitmap);

/* reg.c; mrc_rereg_user_mr() in rereg.c, mrc_dereg_mr() in mr.c */
struct mrc_mr *mrc_reg_dma_mr(struct mrc_pd *pd, u32 access);
struct mrc_mr *mrc_reg_phys_mr(struct mrc_pd *pd,
			       const struct mrc_phys_buf *bufs,
			       unsigned int nbufs, u64 iova, u32 access);
struct mrc_mr *mrc_reg_sg_mr(struct mrc_pd *pd, struct sg_table *sgt,
			     u64 iova, u64 length, u32 access);
struct mrc_mr *mrc_reg_user_mr(struct mrc_pd *pd, u64 start, u64 length,
			       u64 iova, u32 access);
int mrc_rereg_user_mr(struct mrc_mr *mr, int flags, struct mrc_pd *pd,
		      u64 start, u64 length, u64 iova, u32 access);
int mrc_dereg_mr(struct mrc_mr *mr);

/* umem.c: the RLIMIT_MEMLOCK charge every pin or backend allocation takes */
struct mm_struct;
int mrc_pinned_charge(struct mm_struct *mm, unsigned long npages);
void mrc_pinned_uncharge(struct mm_struct *mm, unsigned long npages);

/*
 * Fast registration (FRWR, IBTA "Fast Register Physical MR").
 *
 * mrc_alloc_frmr() returns an MR of type MRC_MR_FAST_REG whose key's
 * context is FREE, in MTT mode, with translation space for max_pages
 * entries. The backend's engine, executing work requests as the device,
 * moves it FREE -> VALID with mrc_frmr_exec_reg() (IB_WR_REG_MR) and
 * VALID -> FREE with mrc_frmr_exec_inv() (LOCAL_INV, Send with
 * Invalidate). Both run under the MR's @lock, which also serialises them
 * with deregistration; neither allocates. A REG_MR may change the key's
 * variant (ib_update_fast_reg_key()): the MR's @key, and the key
 * mrc_mkey_owner() finds it by, become the WR's. Free with
 * mrc_dealloc_frmr(), never mrc_dereg_mr(), so that invalidations by key
 * still running are waited for.
 */

/* frwr.c; the allocations in reg.c */
u32 mrc_frmr_max_pages(const struct mrc_device *mdev);
struct mrc_mr *mrc_alloc_frmr(struct mrc_pd *pd, u32 max_pages);
int mrc_dealloc_frmr(struct mrc_mr *mr);
int mrc_frmr_exec_reg(struct mrc_mr *mr, u32 key, u64 iova, u64 length,
		      unsigned int page_shift, const u64 *dma_pages,
		      u32 npages, u32 access);
int mrc_frmr_exec_inv(struct mrc_device *mdev, u32 pdn, u32 key);

/*
 * The same, for an engine executing where it cannot sleep (a kernel
 * post_send's own run): -EAGAIN where the calls above would sleep, the MR
 * then as mrcore last recorded it, and the engine executes the work
 * request again where it can sleep.
 */
int mrc_frmr_exec_reg_nowait(struct mrc_mr *mr, u32 key, u64 iova,
			     u64 length, unsigned int page_shift,
			     const u64 *dma_pages, u32 npages, u32 access);

/*
 * Fast registration with gaps (IB_MR_TYPE_SG_GAPS): a KLM-mode fast-reg
 * MR whose REG_MR carries a list of DMA ranges of any length and
 * alignment, each written as one KLM entry {bcount, local DMA key, addr}.
 * mrc_frmr_exec_reg() refuses a KLM-mode MR and mrc_frmr_exec_reg_klm()
 * an MTT-mode one (-EINVAL). mrc_dealloc_frmr() and the invalidations
 * serve both.
 */
struct mrc_mr *mrc_alloc_frmr_sg_gaps(struct mrc_pd *pd, u32 max_entries);
int mrc_frmr_exec_reg_klm(struct mrc_mr *mr, u32 key, u64 iova,
			  const struct mrc_phys_buf *bufs, u32 nbufs,
			  u32 access);
int mrc_frmr_exec_reg_klm_nowait(struct mrc_mr *mr, u32 key, u64 iova,
				 const struct mrc_phys_buf *bufs, u32 nbufs,
				 u32 access);

/*
 * Invalidation as the device executes it (LOCAL_INV, Send with
 * Invalidate): the key of a fast-reg MR (as mrc_frmr_exec_inv(), @qpn
 * unused) or of a type 2 memory window, which only the QP it is bound to
 * invalidates; anything else fails (a type 1 window: -EINVAL).
 */
int mrc_exec_inv(struct mrc_device *mdev, u32 pdn, u32 qpn, u32 key);
int mrc_exec_inv_nowait(struct mrc_device *mdev, u32 pdn, u32 qpn, u32 key);

/*
 * Memory windows (IBA 10.6.7): type 1 bound by mrc_bind_mw(), type 2 (2B:
 * bound to one QP) bound by the engine executing a Bind MW work request
 * with mrc_mw_exec_bind(). A bound window's context is a KLM-mode key
 * over the MR's key, so every access through it is walked through the
 * MR's context and table; a type 2 window's context carries its QP, and
 * a backend destroying a QP frees the windows bound to it with
 * mrc_mw_unbind_qp() before the QP's number can be reused. Every
 * window's context carries MRC_ACCESS_REMOTE_ONLY.
 * Documentation/mrcore/windows.rst has the rules and errnos.
 */
enum mrc_mw_type {
	MRC_MW_TYPE_1 = 1,	/* the IB_MW_TYPE_* values */
	MRC_MW_TYPE_2 = 2,
};

/*
 * A window reserves this many KLM entries (one translation segment) when
 * it is allocated, so a bind allocates nothing; each entry covers up to
 * MRC_KLM_MAX_BCOUNT bytes of the MR, which caps a window's length.
 */
#define MRC_MW_KLM_ENTRIES	(MRC_XLT_SEG_SIZE / MRC_KLM_ENTRY_SIZE)
#define MRC_MW_MAX_LENGTH	((u64)MRC_MW_KLM_ENTRIES * MRC_KLM_MAX_BCOUNT)
/* The rights a window may grant (and ZERO_BASED, type 2 only). */
#define MRC_MW_ACCESS		(MRC_ACCESS_REMOTE_READ |		\
				 MRC_ACCESS_REMOTE_WRITE |		\
				 MRC_ACCESS_REMOTE_ATOMIC |		\
				 MRC_ACCESS_ZERO_BASED)

struct mrc_mw;

struct mrc_mw *mrc_alloc_mw(struct mrc_pd *pd, enum mrc_mw_type type);
int mrc_dealloc_mw(struct mrc_mw *mw);
u32 mrc_mw_rkey(const struct mrc_mw *mw);
int mrc_bind_mw(struct mrc_mw *mw, struct mrc_mr *mr, u64 addr, u64 length,
		u32 access);
int mrc_mw_exec_bind(struct mrc_device *mdev, u32 pdn, u32 qpn, u32 mw_key,
		     u32 mr_key, u64 addr, u64 length, u32 access);
int mrc_mw_unbind_qp(struct mrc_device *mdev, u32 qpn);

/*
 * Counters (the fi_mr_bind() model): a slot of the device's counter
 * table, bound to memory regions whose writes it counts. The device adds
 * one to each distinct counter of the contexts an incoming RDMA WRITE
 * (with or without immediate) or atomic passed through, once the
 * operation has succeeded at the responder; failed operations, reads and
 * local writes add nothing. A write through a memory window or an
 * indirect key counts on the counter of the MR it lands in (and on the
 * indirect key's own, if it has one). Documentation/mrcore/counters.rst
 * has the rules and errnos.
 */
#define MRC_COUNT_REMOTE_WRITE	BIT(0)	/* count remote writes and atomics */

/**
 * struct mrc_counter - a counter of the device's counter table
 * @mdev: device
 * @index: its slot, 1 .. caps.max_counters - 1
 * @num_mrs: memory regions bound to it; mrc_free_counter() fails -EBUSY
 *	while non-zero. Changed under the bound MR's lock
 */
struct mrc_counter {
	struct mrc_device *mdev;
	u32 index;
	atomic_t num_mrs;
};

/* The counter slot the contexts of @mr carry, 0 for none; under @mr->lock. */
static inline u32 mrc_mr_counter_index(const struct mrc_mr *mr)
{
	return mr->counter ? mr->counter->index : 0;
}

/* counter.c */
struct mrc_counter *mrc_alloc_counter(struct mrc_device *mdev);
int mrc_free_counter(struct mrc_counter *c);
int mrc_mr_bind_counter(struct mrc_mr *mr, struct mrc_counter *c, u32 flags);
u64 mrc_counter_read(const struct mrc_counter *c);
void mrc_counter_reset(struct mrc_counter *c);
/* mrcore's own, for mrc_dereg_mr(); not exported. */
void mrc_mr_drop_counter(struct mrc_mr *mr);

/*
 * Indirect keys (the UMR/KLM model): one key over a list of ranges of
 * other keys of the same PD, laid end to end from @iova. A named key may
 * itself be indirect, to a nesting depth of MRC_INDIRECT_MAX_DEPTH: a
 * memory region has depth 0, an indirect key 1 + the largest depth of the
 * keys it names.
 */
#define MRC_INDIRECT_MAX_DEPTH	3
/*
 * The most contexts a device walk resolves for one access: the indirect
 * levels, the memory region at the bottom, and the local DMA key when
 * that region is itself KLM mode (SG_GAPS, a KLM-mode physical MR), or
 * the child under an implicit ODP region (KSM mode). A window's walk is
 * shorter, at most 3: the window, the memory region it is bound to, and
 * the local DMA key or implicit child under that region. Windows
 * never sit above an indirect key, nor an indirect key above a window:
 * a bind refuses indirect keys and mrc_reg_indirect() refuses windows
 * (-EINVAL both).
 */
#define MRC_WALK_MAX_KEYS	(MRC_INDIRECT_MAX_DEPTH + 2)

/**
 * struct mrc_key_range - one piece of an indirect key
 * @key: an MR's key (lkey) of the same PD
 * @addr: first address of the piece, in @key's address space
 * @length: bytes, not 0
 */
struct mrc_key_range {
	u32 key;
	u64 addr;
	u64 length;
};

struct mrc_mr *mrc_reg_indirect(struct mrc_pd *pd,
				const struct mrc_key_range *ranges,
				unsigned int nranges, u64 iova, u32 access);

/*
 * One entry point for every kind of memory region, with a requested key
 * (the fi_mr_regattr() model). Documentation/mrcore/registration.rst,
 * "Requested keys" and "Asynchronous registration", has the rules.
 */
struct mrc_fmr_attr;

/**
 * struct mrc_reg_attr - a registration of any kind of memory region
 * @type: enum mrc_mr_type; selects the members that apply
 * @access: MRC_ACCESS_* rights; must be 0 for MRC_MR_FAST_REG
 * @key: the exact key (index and variant) the MR is to get, or 0 to let
 *	mrcore choose; a fast-reg MR starts with it, an FMR holds it until
 *	its first map
 * @iova: PHYS, SG, USER, INDIRECT: address of the first byte
 * @length: SG, USER: bytes
 * @start: USER: user address of the first byte
 * @phys: PHYS: @phys.bufs, @phys.nbufs as for mrc_reg_phys_mr()
 * @sgt: SG: as for mrc_reg_sg_mr()
 * @indirect: INDIRECT: @indirect.ranges, @indirect.nranges as for
 *	mrc_reg_indirect()
 * @frmr: FAST_REG: @frmr.max_entries MTT entries, or KLM entries when
 *	@frmr.sg_gaps (mrc_alloc_frmr_sg_gaps())
 * @fmr: FMR: the shape, as for mrc_alloc_fmr()
 */
struct mrc_reg_attr {
	enum mrc_mr_type type;
	u32 access;
	u32 key;
	u64 iova;
	u64 length;
	u64 start;
	union {
		struct {
			const struct mrc_phys_buf *bufs;
			unsigned int nbufs;
		} phys;
		struct sg_table *sgt;
		struct {
			const struct mrc_key_range *ranges;
			unsigned int nranges;
		} indirect;
		struct {
			u32 max_entries;
			bool sg_gaps;
		} frmr;
		const struct mrc_fmr_attr *fmr;
	};
};

/* reg.c */
struct mrc_mr *mrc_reg_mr(struct mrc_pd *pd, const struct mrc_reg_attr *attr);
int mrc_reg_mr_async(struct mrc_pd *pd, const struct mrc_reg_attr *attr,
		     void (*done)(void *ctx, struct mrc_mr *mr, int err),
		     void *ctx);
void mrc_reg_async_flush(struct mrc_pd *pd);
void mrc_reg_async_flush_dev(struct mrc_device *mdev);
int mrc_dereg_any(struct mrc_mr *mr);

/*
 * On-demand paging (odp.c): a user MR registered with MRC_ACCESS_ON_DEMAND
 * pins nothing. Its MTT entries start non-present and its context carries
 * MRC_MKEY_F_ODP; the backend reports an access that meets a non-present
 * entry (or a write meeting a read-only one) to mrc_odp_fault(), which
 * maps the pages and writes their entries, and then retries the access.
 * An mmu_interval_notifier zaps entries (and calls ops->sync_mkey) before
 * the CPU page tables change. Documentation/mrcore/odp.rst has the rules.
 */
#define MRC_ODP_WRITE		BIT(0)	/* the access writes: map writable */
#define MRC_ODP_NO_FAULT	BIT(1)	/* prefetch: map only present pages */

/* The most pages one fault maps: a 2 MiB range of 4 KiB pages. */
#define MRC_ODP_FAULT_MAX_PAGES	512

/*
 * Implicit ODP (start 0, length U64_MAX): a KSM parent over the user
 * address space below MRC_ODP_IMPLICIT_SPAN, one entry per child MR of
 * 1 << MRC_ODP_CHILD_SHIFT bytes, created by the first fault into it.
 */
#define MRC_ODP_CHILD_SHIFT	30
#define MRC_ODP_IMPLICIT_SPAN	BIT_ULL(47)

/**
 * struct mrc_odp_stats - the on-demand paging counters of one MR
 * @faults: faults that mapped pages of it
 * @fault_pages: pages they mapped
 * @invalidations: invalidations that zapped pages of it
 * @invalidated_pages: pages they zapped
 * @prefetched_pages: pages mapped by prefetch
 * @mapped_pages: pages mapped now
 * @children: implicit ODP: child MRs live now (0 for an explicit MR)
 * @children_created: implicit ODP: children ever created
 * @children_reclaimed: implicit ODP: children reclaimed while idle
 *
 * An implicit ODP MR's counters add up those of its children.
 */
struct mrc_odp_stats {
	u64 faults;
	u64 fault_pages;
	u64 invalidations;
	u64 invalidated_pages;
	u64 prefetched_pages;
	u64 mapped_pages;
	u64 children;
	u64 children_created;
	u64 children_reclaimed;
};

int mrc_odp_fault(struct mrc_device *mdev, u32 key, u64 iova, u64 len,
		  u32 flags);
int mrc_odp_prefetch(struct mrc_device *mdev, u32 pdn, u32 key, u64 iova,
		     u64 len, u32 flags);
int mrc_mr_odp_stats(struct mrc_mr *mr, struct mrc_odp_stats *st);

/* mw.c */
struct mrc_mw *mrc_alloc_mw_key(struct mrc_pd *pd, enum mrc_mw_type type,
				u32 key);

/*
 * dma-buf MRs (dmabuf.c): a range of a dma-buf, by file descriptor. When
 * the kernel has CONFIG_DMABUF_MOVE_NOTIFY, the exporter is dynamic and
 * the device has MRC_CAP_ODP, the MR follows the exporter's moves: its
 * context carries MRC_MKEY_F_ODP, move_notify zaps the entries and the
 * next device access faults them back in (mrc_odp_fault()). Otherwise
 * the buffer is pinned and mapped once. Documentation/mrcore/dmabuf.rst
 * has the rules.
 */

/**
 * struct mrc_dmabuf_stats - the dma-buf counters of one MR
 * @moves: move_notify calls (the exporter moved the buffer)
 * @faults: device faults on the MR
 * @remaps: faults that mapped the buffer again
 * @pinned: the MR is in the pinned fallback (it never moves)
 * @mapped: the buffer is mapped for the device now
 */
struct mrc_dmabuf_stats {
	u64 moves;
	u64 faults;
	u64 remaps;
	bool pinned;
	bool mapped;
};

struct mrc_mr *mrc_reg_dmabuf_mr(struct mrc_pd *pd, int fd, u64 offset,
				 u64 length, u64 iova, u32 access);
int mrc_mr_dmabuf_stats(struct mrc_mr *mr, struct mrc_dmabuf_stats *st);

#endif /* _RDMA_MRCORE_H */
