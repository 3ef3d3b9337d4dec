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
	MRC_CAP_KLM		= 1 << 0,	/* KLM access mode */
	MRC_CAP_ODP		= 1 << 1,	/* non-present MTT entries fault */
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
 */
struct mrc_caps {
	u32 max_mkeys;
	u32 max_pds;
	u64 xlt_size;
	unsigned long page_size_bitmap;
	u32 flags;
};

enum mrc_mkey_state {
	MRC_MKEY_INVALID = 0,	/* slot unused or revoked: every access fails */
	MRC_MKEY_FREE,		/* allocated, no translation (fast-reg target) */
	MRC_MKEY_VALID,		/* accesses allowed within the context's rules */
};

enum mrc_access_mode {
	MRC_ACCESS_MODE_PA = 0,	/* iova is a DMA address; no table */
	MRC_ACCESS_MODE_MTT,	/* uniform pages of 1 << page_shift bytes */
	MRC_ACCESS_MODE_KLM,	/* {byte count, key, address} list */
};

/* Access rights carried in a context: the ib_access_flags bit values. */
#define MRC_ACCESS_LOCAL_WRITE		BIT(0)
#define MRC_ACCESS_REMOTE_WRITE		BIT(1)
#define MRC_ACCESS_REMOTE_READ		BIT(2)
#define MRC_ACCESS_REMOTE_ATOMIC	BIT(3)
#define MRC_ACCESS_MW_BIND		BIT(4)

/**
 * struct mrc_mkey_ctx - the CPU form of one mkey context
 * @key: full key (index and variant) the device must match
 * @state: enum mrc_mkey_state
 * @access_mode: enum mrc_access_mode
 * @pdn: PD number, or MRC_PDN_ANY
 * @access: MRC_ACCESS_* bits
 * @page_shift: log2 of the MTT page size (MTT mode only)
 * @iova: first I/O virtual address the key covers
 * @length: bytes covered; U64_MAX means "all addresses" (PA mode)
 * @xlt_offset: byte offset of the first MTT/KLM entry in the translation area
 * @xlt_entries: number of MTT/KLM entries
 *
 * The backend encodes this into its own device-memory layout.
 */
struct mrc_mkey_ctx {
	u32 key;
	u8 state;
	u8 access_mode;
	u8 page_shift;
	u32 pdn;
	u32 access;
	u64 iova;
	u64 length;
	u64 xlt_offset;
	u32 xlt_entries;
};

/**
 * struct mrc_hw_ops - how mrcore reaches the device
 * @fence: order every earlier table write before any later one, as seen by
 *	the device. mrcore issues one fence per registration, between the
 *	translation entries and the context that makes them reachable.
 * @invalidate_mkey: make slot @index unusable (state INVALID) and return only
 *	when the device can no longer start an access through it.
 * @write_mkey: write @ctx into context slot @index.
 * @write_xlt: copy @len bytes of encoded entries to byte @offset of the
 *	translation area.
 *
 * All ops may sleep. A non-zero return is a negative errno and leaves the
 * device as it was before the call.
 */
struct mrc_hw_ops {
	void (*fence)(struct mrc_device *mdev);
	int (*invalidate_mkey)(struct mrc_device *mdev, u32 index);
	int (*write_mkey)(struct mrc_device *mdev, u32 index,
			  const struct mrc_mkey_ctx *ctx);
	int (*write_xlt)(struct mrc_device *mdev, u64 offset, const void *src,
			 size_t len);
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

/**
 * struct mrc_device - one device registered by a backend
 * @name: for messages; owned by the backend
 * @ops: the backend's ops table
 * @caps: the device's capabilities, filled by the backend before register
 * @dma_dev: the struct device DMA mappings are made on (may be NULL)
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
 * @debugfs: this device's debugfs directory, or NULL
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
	struct dentry *debugfs;
};

/**
 * struct mrc_pd - a protection domain, embedded in the caller's PD object
 * @mdev: owning device
 * @pdn: PD number the device compares against every context's PD
 */
struct mrc_pd {
	struct mrc_device *mdev;
	u32 pdn;
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

#endif /* _RDMA_MRCORE_H */
