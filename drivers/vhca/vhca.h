/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca: a virtual HCA. Device and object structures and their downcasts.
 */
#ifndef _VHCA_H
#define _VHCA_H

#include <linux/bits.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/mrcore.h>

/* Identity: no IEEE OUI is assigned to vhca, so the vendor ID is none. */
#define VHCA_VENDOR_ID		0xffffff
#define VHCA_VENDOR_PART_ID	0x0001
#define VHCA_HW_VER		1
#define VHCA_FW_VER_MAJOR	0
#define VHCA_FW_VER_MINOR	1
#define VHCA_FW_VER_SUBMINOR	0

/* rxe's user ABI version (its rxe.h), which librxe accepts: 1 or 2. */
#define VHCA_UVERBS_ABI_VERSION	2

/* Port 1 is the only port: RoCE v2 over the bound netdev. */
#define VHCA_PORT_NUM		1
#define VHCA_GID_TBL_LEN	256
#define VHCA_PKEY_TBL_LEN	1
#define VHCA_MAX_MSG_SIZE	BIT(31)

/* Queue limits. */
#define VHCA_MAX_QP		4096
#define VHCA_MAX_QP_WR		4096
#define VHCA_MAX_SGE		16
#define VHCA_MAX_CQ		4096
#define VHCA_MAX_CQE		((1 << 16) - 1)
#define VHCA_MAX_RD_ATOM	16

/*
 * ATOMIC WRITE (IBTA 1.5, 9.4.7): eight bytes stored at once at an
 * aligned remote address, with remote write rights. Linux 6.1 has no
 * name for it; librxe 44 writes the later UAPI's numbers into a user send
 * ring and reads them back from the CQ ring, and 6.1 leaves them unused:
 * the work request opcode (IB_UVERBS_WR_ATOMIC_WRITE), the completion
 * opcode (IB_UVERBS_WC_ATOMIC_WRITE; the kernel's 9 is a masked atomic no
 * user QP can post) and the device capability
 * (IB_UVERBS_DEVICE_ATOMIC_WRITE). Only user QPs post it.
 */
#define VHCA_WR_ATOMIC_WRITE		15
#define VHCA_WC_ATOMIC_WRITE		9
#define VHCA_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
#define VHCA_MAX_SRQ		1024
#define VHCA_MAX_SRQ_WR		4096
#define VHCA_MAX_AH		BIT(16)

/*
 * Device memory is one region, standing for the HCA's BAR:
 *
 *   [0, max_mkeys * VHCA_MKC_SIZE)   mkey context table, slot i at i * 64
 *   [max_mkeys * VHCA_MKC_SIZE, +xlt_size)   translation area (MTT/KLM)
 *   [... + xlt_size, + max_counters * 8)   counter table: slot i is a
 *	little-endian u64 at i * 8; slot 0 is never used
 *
 * An mkey context slot, all fields little-endian. The state byte is
 * written last and read first: it publishes the rest of the slot.
 */
#define VHCA_MKC_SIZE		64
#define VHCA_MKC_KEY		0x00	/* u32: index << 8 | variant */
#define VHCA_MKC_STATE		0x04	/* u8: enum mrc_mkey_state */
#define VHCA_MKC_ACCESS_MODE	0x05	/* u8: enum mrc_access_mode */
#define VHCA_MKC_PAGE_SHIFT	0x06	/* u8: log2 of the MTT page size */
#define VHCA_MKC_FLAGS		0x07	/* u8: MRC_MKEY_F_* */
#define VHCA_MKC_PDN		0x08	/* u32: PD number, 0 = any PD */
#define VHCA_MKC_ACCESS		0x0c	/* u32: MRC_ACCESS_* bits */
#define VHCA_MKC_IOVA		0x10	/* u64: first address covered */
#define VHCA_MKC_LENGTH		0x18	/* u64: bytes covered */
#define VHCA_MKC_XLT_OFFSET	0x20	/* u64: byte offset of first entry */
#define VHCA_MKC_XLT_ENTRIES	0x28	/* u32: MTT/KLM entry count */
#define VHCA_MKC_QPN		0x2c	/* u32: a type 2 window's QP, or 0 */
#define VHCA_MKC_COUNTER	0x30	/* u32: counter slot, 0 = none */
#define VHCA_MKC_RSVD1		0x34	/* to the end of the slot: zero */

/*
 * Counter table slots (caps.max_counters). The engine collects the
 * counters of one operation in a bitmap of this many bits on its stack.
 */
#define VHCA_MAX_COUNTERS	1024
#define VHCA_COUNTER_SIZE	8

/*
 * The walker follows a KLM entry into the key it names, and that key's
 * translation into the next one, at most this many keys deep (the key
 * the requester named included). The longest chain mrcore builds is
 * MRC_WALK_MAX_KEYS: MRC_INDIRECT_MAX_DEPTH levels of indirect keys, the
 * MR they end in, and the local DMA key under a KLM-mode (SG_GAPS) MR
 * (mrcore refuses a window over an indirect key); the limit keeps one
 * level more than that. A deeper walk fails -EINVAL.
 */
#define VHCA_WALK_MAX_DEPTH	(1 + MRC_INDIRECT_MAX_DEPTH + 1 + 1)

/**
 * struct vhca_devmem - the device memory region
 * @base: start of the region; only ever reached through io accessors
 * @mkc: mkey context table, @base + 0
 * @xlt: translation area, right after the context table
 * @cnt: counter table, right after the translation area
 * @size: bytes in the region
 */
struct vhca_devmem {
	void __iomem *base;
	void __iomem *mkc;
	void __iomem *xlt;
	void __iomem *cnt;
	size_t size;
};

/* Buckets of the fault-to-resume histogram: [2^i, 2^(i+1)) microseconds. */
#define VHCA_ODP_HIST_BUCKETS	16

/**
 * struct vhca_odp_stats - what the engine's page faults came to
 * @faults: faults raised on the fault queue (a QP parked)
 * @fault_errors: faults that could not be resolved (the WQE then
 *	completes with an access error), or met in place by a run that
 *	cannot sleep (engine.c, vhca_engine_post())
 * @sync_faults: faults resolved in place, without parking: a receive's
 *	scatter list or an atomic's result, once the responder has begun
 * @resume_hist: fault-to-resume time of raised faults, from the walk that
 *	met the entry to the QP's worker being queued again
 */
struct vhca_odp_stats {
	atomic64_t faults;
	atomic64_t fault_errors;
	atomic64_t sync_faults;
	atomic64_t resume_hist[VHCA_ODP_HIST_BUCKETS];
};

/**
 * struct vhca_fault - a page fault met by the engine
 * @vdev: the device whose key faulted (the responder's for a remote
 *	access)
 * @key: the key of the ODP context whose MTT entry was non-present or
 *	read-only
 * @iova: the faulting address, in @key's address space
 * @len: bytes of the access from @iova on
 * @write: the access writes
 * @pending: a walk recorded the fault; the engine has not raised it yet
 * @held: @vdev is held (ib_device_try_get(), taken while the operation
 *	still held its responder) until the fault work is done with it
 * @raised_ns: local_clock() when the fault was raised
 */
struct vhca_fault {
	struct vhca_dev *vdev;
	u32 key;
	u64 iova;
	u64 len;
	bool write;
	bool pending;
	bool held;
	u64 raised_ns;
};

/**
 * struct vhca_dev - one virtual HCA, bound to one netdev
 * @ibdev: the device ib_core sees; first, for ib_alloc_device()
 * @mdev: the device mrcore sees; its caps size @mem
 * @mem: device memory
 * @pdev: the platform device DMA mappings are made on
 * @ndev: the bound netdev, held through @ndev_tracker until dealloc_driver
 * @ndev_tracker: tracks our reference on @ndev
 * @parent: @ndev's parent device (a PCI or virtio NIC), or NULL; held
 *	until dealloc_driver, and @ibdev's parent in sysfs
 * @port_state: port state last reported by an event; protected by RTNL
 * @rsvd_lkey: the key the device treats as its local DMA key; latched at
 *	bring-up from mrcore's registration, as a firmware's reserved lkey
 * @mkey_users: per context slot, walkers between looking the slot up and
 *	finishing their copy (walker.c), and a transfer's pipes until
 *	vhca_pipe_release() (xfer.c); invalidation waits for zero
 * @debugfs: /sys/kernel/debug/vhca/<name>/, or NULL or an error pointer
 * @qps: QP number -> struct vhca_qp; the engine looks up responders here
 *	under RCU and takes a reference
 * @ahs: AH number -> struct vhca_ah, user AHs only (numbers from 1;
 *	irq-safe lock): what a UD WQE in a user send ring names
 *	(vhca_ah_lookup())
 * @ah_next: where the cyclic allocation of AH numbers goes on from
 * @wq: the DMA engine's workqueue: a QP's send queue runs on it when no
 *	poster runs it in its call (engine.c)
 * @engine_busy_ns: time the engine has spent running send queues, in its
 *	workers and in posters' calls, the polls of engine_linger_us left
 *	out (debugfs "engine")
 * @engine_inline_wqes: WQEs completed by runs in a poster's call (a
 *	kernel post_send or a user doorbell; debugfs "engine")
 * @engine_worker_wqes: WQEs completed by the engine's workers
 * @odp_mkeys: mkey contexts written VALID or FREE with MRC_MKEY_F_ODP
 *	and not invalidated since (devmem.c): while there are none, no walk
 *	meets a page fault
 * @atomic_lock: serialises atomics the device executes as responder
 * @counter_lock: makes each read-modify-write of a counter table slot
 *	atomic against the other engine workers and the CPU's reads and resets
 * @xbuf: per possible CPU, the pipes a transfer gathers its two sides
 *	into (xfer.c), used with preemption disabled
 * @fault_wq: the page-fault queue: a parked QP's fault, and asynchronous
 *	prefetches (mr.c), run on it (fault.c)
 * @odp: page-fault counters (debugfs "odp")
 * @fabric_node: entry on the loopback fabric's port list (fabric.c)
 * @list: entry on the live or the dead device list; protected by
 *	vhca_list_lock (main.c)
 * @name: the name the device was created with; names @mdev and @debugfs
 */
struct vhca_dev {
	struct ib_device ibdev;
	struct mrc_device mdev;
	struct vhca_devmem mem;
	struct platform_device *pdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct device *parent;
	enum ib_port_state port_state;
	u32 rsvd_lkey;
	atomic_t *mkey_users;
	struct dentry *debugfs;
	struct xarray qps;
	struct xarray ahs;
	u32 ah_next;
	struct workqueue_struct *wq;
	atomic64_t engine_busy_ns;
	atomic64_t engine_inline_wqes;
	atomic64_t engine_worker_wqes;
	atomic_t odp_mkeys;
	spinlock_t atomic_lock;	/* serialises responder atomics */
	spinlock_t counter_lock;	/* counter table read-modify-writes */
	struct vhca_xbuf **xbuf;
	struct workqueue_struct *fault_wq;
	struct vhca_odp_stats odp;
	struct list_head fabric_node;
	struct list_head list;
	char name[IB_DEVICE_NAME_MAX];
};

/**
 * struct vhca_pd - a protection domain
 * @ibpd: ib_core's PD; first, as INIT_RDMA_OBJ_SIZE() requires
 * @base_pd: mrcore's PD, which owns the PD number
 */
struct vhca_pd {
	struct ib_pd ibpd;
	struct mrc_pd base_pd;
};

/* A transfer moves at most this many bytes per gathering of its sides. */
#define VHCA_XFER_CHUNK		SZ_128K

/* Inline data a send WQE can carry, in bytes. */
#define VHCA_MAX_INLINE		256

/*
 * Bounds of a ring shared with user space (uring.c): slots a ring may
 * have, bytes an element may take.
 */
#define VHCA_URING_MAX_SLOTS	BIT(16)
#define VHCA_URING_MAX_ELEM	SZ_4K

/**
 * struct vhca_uring - a queue shared with user space (rxe's user ABI)
 * @buf: the ring, mapped into the process: any byte may change at any
 *	time; NULL for a kernel queue
 * @entry: its mmap entry, which owns the memory
 * @mask: slots - 1: the kernel's copy, never read back from @buf
 * @log2_elem: log2 of the element size: the kernel's copy
 */
struct vhca_uring {
	struct rxe_queue_buf *buf;
	struct rdma_user_mmap_entry *entry;
	u32 mask;
	u32 log2_elem;
};

struct vhca_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct vhca_cq - a completion queue
 * @ibcq: ib_core's CQ; first, as INIT_RDMA_OBJ_SIZE() requires
 * @lock: protects everything below; taken with irqsave (poll_cq may be
 *	called from any context)
 * @uring: a user CQ: the ring librxe polls (@ring, @size and @tail
 *	unused; @head is the kernel's producer index, masked)
 * @ring: @size completion slots
 * @size: slots in @ring, ibcq.cqe + 1: one stays empty, so that a full
 *	ring is told from an empty one
 * @head: next slot to fill (producer), an index below @size
 * @tail: next slot to poll (consumer), an index below @size; the ring is
 *	empty when @head == @tail
 * @notify: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP: armed by req_notify_cq,
 *	disarmed when the handler is called
 * @overflow: a completion found the ring full; the CQ is in error
 * @in_handler: a poster is running the completion handler; others leave
 *	the call to it (the handler never runs twice at once)
 * @call_again: a notification came while @in_handler: the poster running
 *	the handler calls it once more
 * @deferred: VHCA_CQ_DEFER_* callbacks a kernel post_send's run owes: it
 *	may not call the consumer back before it ends (vhca_engine_post())
 * @was_owed: a run owed it callbacks once: destroying one of its QPs
 *	waits until they are made (vhca_cq_sync_owed())
 * @owed_next: the next CQ on the owing CPU's list, while @deferred
 */
struct vhca_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* the fields below */
	struct vhca_uring uring;
	struct ib_wc *ring;
	u32 size;
	u32 head;
	u32 tail;
	u8 notify;
	u8 deferred;
	bool was_owed;
	bool overflow;
	bool in_handler;
	bool call_again;
	struct vhca_cq *owed_next;
};

/* Callbacks a run owes a CQ (struct vhca_cq, @deferred). */
#define VHCA_CQ_DEFER_HANDLER	BIT(0)	/* the handler: @in_handler is set */
#define VHCA_CQ_DEFER_ERROR	BIT(1)	/* IB_EVENT_CQ_ERR */

/**
 * struct vhca_recv_wqe - a posted receive, as the queue holds it
 * @wr_id: the caller's id
 * @num_sge: valid entries of @sge
 * @bad: a user ring's element that failed its checks (no @sge): it
 *	completes in error
 * @peeked: a copy of a receive still on its queue (a run that cannot
 *	sleep took it, vhca_queue_take_recv()): it leaves the queue as it
 *	completes (vhca_queue_recv_used()), or stays there, given back
 * @sge: scatter list, the queue's max_sge entries
 */
struct vhca_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	bool bad;
	bool peeked;
	struct ib_sge sge[];
};

/* Room for one receive taken off a queue: the most SGEs any queue allows. */
struct vhca_recv_buf {
	struct vhca_recv_wqe wqe;
	struct ib_sge sge[VHCA_MAX_SGE];
};

/**
 * struct vhca_rq - a receive queue (a QP's own, or an SRQ's)
 * @lock: protects everything below; irqsave
 * @uring: a user RQ or SRQ: the ring librxe posts to (@wqe, @size and
 *	@head unused; @tail is the kernel's consumer index, masked)
 * @wqe: @size slots of @stride bytes, each a struct vhca_recv_wqe
 * @stride: bytes per slot
 * @size: slots, a power of two
 * @max_wr: receives the caller may have outstanding (<= @size)
 * @max_sge: SGEs per receive
 * @head: next slot to fill (post_recv), free-running
 * @tail: next slot to consume (engine), free-running
 * @peeked: the receive at @tail was copied out by vhca_rq_peek() and is
 *	neither used (vhca_rq_drop()) nor given back (vhca_rq_unpeek()) yet:
 *	no other taker gets it or anything behind it meanwhile
 */
struct vhca_rq {
	spinlock_t lock;	/* the fields below */
	struct vhca_uring uring;
	void *wqe;
	u32 stride;
	u32 size;
	u32 max_wr;
	u32 max_sge;
	u32 head;
	u32 tail;
	bool peeked;
};

/**
 * struct vhca_srq - a shared receive queue
 * @ibsrq: ib_core's SRQ; first
 * @rq: the queue
 * @limit: srq_limit; 0 = not armed. Protected by @rq.lock
 */
struct vhca_srq {
	struct ib_srq ibsrq;
	struct vhca_rq rq;
	u32 limit;
};

/**
 * struct vhca_ah - an address handle: where a UD send goes
 * @ibah: ib_core's AH; first
 * @attr: the attributes it was created with (dgid, sgid index, ...)
 * @ah_num: a user AH's number in vdev->ahs (rxe_create_ah_resp.ah_num);
 *	0 for a kernel AH, which is not in the table
 */
struct vhca_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
	u32 ah_num;
};

/**
 * struct vhca_send_wqe - a posted send, as the queue holds it
 * @wr_id: the caller's id
 * @opcode: enum ib_wr_opcode, or VHCA_WR_ATOMIC_WRITE
 * @refused: not IB_WC_SUCCESS for a user WQE that failed its checks:
 *	the engine completes it with this status and executes nothing
 * @send_flags: IB_SEND_*
 * @num_sge: entries of @sge (0 with IB_SEND_INLINE)
 * @inline_len: bytes of inline data in @inline_data
 * @ex: imm_data (network order) or invalidate_rkey
 * @rdma: RDMA READ/WRITE target
 * @atomic: atomic target and operands; an ATOMIC WRITE's value is @swap
 * @ud: UD destination, copied from the AH at post time
 * @reg: IB_WR_REG_MR: the MR, its new key and access
 * @bind: IB_WR_BIND_MW: struct vhca_bind_mw_wr's fields; cur_rkey is a
 *	user WQE's key of the window as the process knows it, checked when
 *	the bind executes (0 for a kernel WR)
 * @sge: gather list, or (IB_SEND_INLINE) @inline_data
 */
struct vhca_send_wqe {
	u64 wr_id;
	u32 opcode;
	enum ib_wc_status refused;
	u32 send_flags;
	u32 num_sge;
	u32 inline_len;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	union {
		struct {
			u64 remote_addr;
			u32 rkey;
		} rdma;
		struct {
			u64 remote_addr;
			u64 compare_add;
			u64 swap;
			u32 rkey;
		} atomic;
		struct {
			union ib_gid dgid;
			u32 remote_qpn;
			u32 remote_qkey;
			u8 sgid_index;
		} ud;
		struct {
			struct ib_mr *mr;
			u32 key;
			int access;
		} reg;
		struct {
			u64 addr;
			u64 length;
			u32 cur_rkey;
			u32 mw_rkey;
			u32 mr_lkey;
			u32 access;
		} bind;
	};
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/**
 * struct vhca_sq - a send queue
 * @lock: protects @head and @tail; irqsave
 * @uring: a user SQ: the ring librxe posts to; @wqe is then one slot,
 *	the staged copy of the element at @tail (queue_user.c), and @tail
 *	the kernel's consumer index, masked
 * @staged: @uring's element at @tail is staged in @wqe
 * @wqe: @size slots of @stride bytes, each a struct vhca_send_wqe
 * @stride: bytes per slot
 * @size: slots, a power of two
 * @max_wr: sends the caller may have outstanding (<= @size)
 * @max_sge: SGEs per send
 * @max_inline: inline bytes per send
 * @head: next slot to fill (post_send), free-running
 * @tail: next slot the engine executes, free-running; a slot is free
 *	again once the engine has completed it and advanced @tail
 */
struct vhca_sq {
	spinlock_t lock;	/* the fields below */
	struct vhca_uring uring;
	bool staged;
	void *wqe;
	u32 stride;
	u32 size;
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
	u32 head;
	u32 tail;
};

/**
 * struct vhca_qp - a queue pair
 * @ibqp: ib_core's QP; first
 * @vdev: the device
 * @refs: users: the QP table's one, plus the engine's lookups (a
 *	requester executing against this QP as responder); destroy drops
 *	the table's and waits for @released
 * @released: completed when @refs reaches zero
 * @state_lock: protects @state and @attr against modify_qp and the
 *	engine's error transitions; irqsave
 * @state: the IBTA state
 * @attr: attributes as last modified: qkey, dest_qp_num, ah_attr (dgid),
 *	qp_access_flags, timeout, retry_cnt, rnr_retry, min_rnr_timer,
 *	path_mtu, psns, ...; the engine reads what it needs under @state_lock
 * @pdn: PD number the engine checks keys against (the QP's PD)
 * @sq: send queue
 * @rq: receive queue (unused with @srq)
 * @srq: the SRQ, or NULL
 * @qops: how the engine reaches @sq, @rq or @srq, @scq and @rcq (queue.h)
 * @scq: send CQ
 * @rcq: receive CQ
 * @sq_sig_all: every send completes (IB_SIGNAL_ALL_WR)
 * @sq_work: runs the send queue on the device's workqueue
 * @run_lock: protects @run_state
 * @run_state: who runs the send queue (engine.c): nobody, one runner
 *	(the worker or a user doorbell), or one runner asked to go again
 * @retry_work: re-runs it after an RNR NAK or a transport timeout
 * @rnr_left: RNR retries left for the WQE at @sq.tail (7 = infinite)
 * @retry_left: transport retries left for the WQE at @sq.tail
 * @retrying: @rnr_left and @retry_left belong to the WQE at @sq.tail
 * @rnr_timer: the RNR NAK timer the responder last answered with
 * @rx_busy: receives other QPs' engines have taken from this QP's RQ and
 *	not completed yet; protected by @state_lock. The engine flushes the
 *	RQ of a QP in ERR, and a move to RESET empties it, only at zero
 * @comm_est: IB_EVENT_COMM_EST was dispatched (the first message that
 *	reached this QP in RTR); protected by @state_lock
 * @stopped: set by destroy: the engine touches the QP no more
 * @fault: the page fault the WQE at @sq.tail met; written by the QP's
 *	engine, then by the fault work while @parked
 * @fault_work: resolves @fault on the device's fault queue
 * @parked: the QP waits for @fault: its send queue does not run
 * @fault_failed: the last fault could not be resolved: the WQE at
 *	@sq.tail runs once more without faulting, so it fails
 */
struct vhca_qp {
	struct ib_qp ibqp;
	struct vhca_dev *vdev;
	refcount_t refs;
	struct completion released;
	spinlock_t state_lock;	/* state, attr, sgid, rx_busy, comm_est */
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	/* RC: the GID its AV sends from, which its peer must name */
	union ib_gid sgid;
	u32 pdn;
	struct vhca_sq sq;
	struct vhca_rq rq;
	struct vhca_srq *srq;
	const struct vhca_queue_ops *qops;
	struct vhca_cq *scq;
	struct vhca_cq *rcq;
	bool sq_sig_all;
	struct work_struct sq_work;
	spinlock_t run_lock;	/* run_state */
	u8 run_state;
	struct delayed_work retry_work;
	u8 rnr_left;
	u8 retry_left;
	bool retrying;
	u8 rnr_timer;
	unsigned int rx_busy;
	bool comm_est;
	bool stopped;
	struct vhca_fault fault;
	struct work_struct fault_work;
	bool parked;
	bool fault_failed;
};

/**
 * struct vhca_mr - a memory region
 * @ibmr: ib_core's MR; first, and allocated by the driver in 6.1
 * @base_mr: mrcore's MR, which owns the key, the translation and the pins
 * @pages: MEM_REG fast-reg MRs only (NULL for others): the page list
 *	map_mr_sg fills with DMA addresses and the engine's REG_MR reads, as
 *	an HCA reads a descriptor list from host memory
 * @bufs: SG_GAPS fast-reg MRs only (NULL for others): the (DMA address,
 *	length) ranges map_mr_sg fills, read by the engine's REG_MR as
 *	@pages is
 * @npages: entries of @pages or @bufs the last map_mr_sg filled
 * @max_pages: entries @pages or @bufs holds (alloc_mr's max_num_sg)
 * @parts: iovec MRs of more than one piece only (uapi.c's REG_IOV; NULL
 *	for others): the hidden user MR of each piece, under @base_mr, an
 *	indirect key; deregistered after it
 * @nparts: entries of @parts
 * @alloc: allocated MRs only (alloc.c; NULL for others): the memory the
 *	kernel allocated for the MR, given back after its dereg
 */
struct vhca_mr {
	struct ib_mr ibmr;
	struct mrc_mr *base_mr;
	u64 *pages;
	struct mrc_phys_buf *bufs;
	u32 npages;
	u32 max_pages;
	struct mrc_mr **parts;
	u32 nparts;
	struct vhca_alloc *alloc;
};

/**
 * struct vhca_mw - a memory window (ib_uverbs' alloc_mw)
 * @ibmw: ib_core's MW; first, as INIT_RDMA_OBJ_SIZE() requires
 * @base_mw: mrcore's window, which owns the key and binds it
 */
struct vhca_mw {
	struct ib_mw ibmw;
	struct mrc_mw *base_mw;
};

static inline struct vhca_dev *to_vhca_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vhca_dev, ibdev);
}

static inline struct vhca_dev *mdev_to_vhca(struct mrc_device *mdev)
{
	return container_of(mdev, struct vhca_dev, mdev);
}

static inline struct vhca_pd *to_vhca_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vhca_pd, ibpd);
}

static inline struct vhca_cq *to_vhca_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vhca_cq, ibcq);
}

static inline struct vhca_qp *to_vhca_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vhca_qp, ibqp);
}

static inline struct vhca_srq *to_vhca_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct vhca_srq, ibsrq);
}

static inline struct vhca_ah *to_vhca_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vhca_ah, ibah);
}

static inline struct vhca_mr *to_vhca_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vhca_mr, ibmr);
}

static inline struct vhca_mw *to_vhca_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct vhca_mw, ibmw);
}

/* A fast-reg MR (alloc_mr), MEM_REG or SG_GAPS? */
static inline bool vhca_mr_is_frmr(const struct vhca_mr *mr)
{
	return mr->pages || mr->bufs;
}

#define vhca_dbg(vdev, fmt, ...)					\
	ibdev_dbg(&(vdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

#define vhca_dbg_pd(pd, fmt, ...)					\
do {									\
	const struct vhca_pd *__pd = (pd);				\
									\
	ibdev_dbg(__pd->ibpd.device, "PD[%u] %s: " fmt,			\
		  __pd->base_pd.pdn, __func__, ##__VA_ARGS__);		\
} while (0)

#define vhca_dbg_qp(qp, fmt, ...)					\
do {									\
	const struct vhca_qp *__qp = (qp);				\
									\
	ibdev_dbg(__qp->ibqp.device, "QP[%u] %s: " fmt,			\
		  __qp->ibqp.qp_num, __func__, ##__VA_ARGS__);		\
} while (0)

#define vhca_dbg_mr(mr, fmt, ...)					\
do {									\
	const struct vhca_mr *__mr = (mr);				\
									\
	ibdev_dbg(&mdev_to_vhca(__mr->base_mr->mdev)->ibdev,		\
		  "MR[0x%08x] %s: " fmt, __mr->base_mr->key, __func__,	\
		  ##__VA_ARGS__);					\
} while (0)

/*
 * Device-memory writes start before ib_core has named the ib_device, so
 * they are reported against the platform device, the "hardware".
 */
#define vhca_dbg_mkey(vdev, index, fmt, ...)				\
	dev_dbg(&(vdev)->pdev->dev, "MKEY[%u] %s: " fmt, index,		\
		__func__, ##__VA_ARGS__)

#endif /* _VHCA_H */
