// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore: memory windows (IBA 10.6.7) and invalidation by key.
 *
 * A window is a key of its own whose context, while bound, is KLM mode
 * over the key of the memory region it is bound to: entries {bcount, MR
 * key, address in the MR}, so every access through the window is walked
 * through the MR's context and checked against it. Unbound, the context
 * is FREE: every access through the window fails.
 *
 *   type 1:  FREE/VALID --mrc_bind_mw(), length > 0-->  VALID (new variant)
 *            FREE/VALID --mrc_bind_mw(), length 0-->    FREE  (new variant)
 *   type 2:  FREE  --mrc_mw_exec_bind()-->  VALID  (the WR's variant, its QP)
 *            VALID --mrc_exec_inv()-->      FREE   (LOCAL_INV, Send with Inv.,
 *                                                   on the window's QP)
 *            VALID --mrc_mw_unbind_qp()-->  FREE   (its QP destroyed)
 *   both:    mrc_dealloc_mw(): INVALID, key freed
 *
 * Every window's context carries MRC_ACCESS_REMOTE_ONLY: the device
 * serves remote accesses only through a window (IBA 10.6.7), never a
 * local one through its key used as an lkey.
 *
 * A type 2 window bound to a QP is marked in the key xarray
 * (MRC_MKEY_MARK_QP) until it leaves VALID, so mrc_mw_unbind_qp() finds
 * a destroyed QP's windows without looking at every key, and does
 * nothing at all while no window is bound to any QP.
 *
 * A window reserves two translation segments when it is allocated, so a
 * bind never allocates: the live context reaches one segment, a rebind
 * writes the other and switches the context with one write_mkey, which
 * returns once no access resolves the old one. A failed bind therefore
 * leaves the window exactly as it was.
 *
 * Locking: the window's mutex serialises its binds, invalidations and
 * deallocation; a bind takes the MR's mutex inside it (window, then MR:
 * nothing takes them the other way round) and increments the MR's num_mw
 * under it, so mrc_dereg_mr() and a fast-reg invalidation, which check
 * num_mw under the same mutex, see every window that reaches the MR.
 * num_mw drops, without the MR's mutex, only once the window's context no
 * longer reaches the MR. Windows and MRs found by key (or by the QP mark)
 * are held through their struct mrc_key_users. Invalidation and
 * mrc_mw_unbind_qp() take the window's mutex only: a backend may call
 * them holding nothing but its own locks that mrcore never takes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "mrcore_loc.h"

/* Debug messages name the window's key and the function. */
#define mrc_dbg_mw(mw, fmt, ...)					\
	do {								\
		const struct mrc_mw *__mw = (mw);			\
									\
		mrc_dbg(__mw->mdev, "MW[0x%08x] %s: " fmt,		\
			READ_ONCE(__mw->key), __func__, ##__VA_ARGS__);	\
	} while (0)

/* Translation space per window: two halves of MRC_MW_KLM_ENTRIES. */
#define MRC_MW_XLT_HALF		((u64)MRC_MW_KLM_ENTRIES * MRC_KLM_ENTRY_SIZE)

/**
 * struct mrc_mw - a memory window
 * @mdev: device
 * @pd: protection domain
 * @type: enum mrc_mw_type
 * @key: the window's rkey; a bind changes its variant. Written under
 *	@lock, read locklessly by mrc_mw_rkey()
 * @state: enum mrc_mkey_state of the context: FREE (unbound) or VALID
 * @mr: the MR a VALID window is bound to, NULL when FREE; the window
 *	counts in its num_mw, so it stays registered
 * @addr: first byte of the window, in @mr's address space
 * @length: bytes
 * @access: the window's MRC_ACCESS_* rights (ZERO_BASED included)
 * @qpn: the QP a type 2 window is bound to; 0 otherwise
 * @half: which half of @xlt the VALID context reaches
 * @xlt: two halves of MRC_MW_KLM_ENTRIES KLM entries
 * @users: lookups by key (binds and invalidations by the device)
 * @lock: serialises binds, invalidation and deallocation of the window
 * @rcu: the window owns its key, so it is freed after a grace period
 *
 * Everything but @key is read and written only under @lock.
 */
struct mrc_mw {
	struct mrc_device *mdev;
	struct mrc_pd *pd;
	enum mrc_mw_type type;
	u32 key;
	u8 state;
	struct mrc_mr *mr;
	u64 addr;
	u64 length;
	u32 access;
	u32 qpn;
	u8 half;
	struct mrc_xlt xlt;
	struct mrc_key_users users;
	struct mutex lock;	/* protects binds/invalidation/dealloc */
	struct rcu_head rcu;
};

/**
 * struct mrc_mw_bind - one bind, as asked
 * @key: the key the window takes: its index with the new variant
 * @addr: first byte, in the MR's address space
 * @length: bytes; 0 unbinds (type 1 only)
 * @access: the window's rights
 * @qpn: the binding QP (type 2)
 */
struct mrc_mw_bind {
	u32 key;
	u64 addr;
	u64 length;
	u32 access;
	u32 qpn;
};

/* The context of an unbound window: its key and PD, no translation. */
static void mrc_mw_free_ctx(const struct mrc_mw *mw, u32 key,
			    struct mrc_mkey_ctx *ctx)
{
	*ctx = (struct mrc_mkey_ctx) {
		.key = key,
		.state = MRC_MKEY_FREE,
		.access_mode = MRC_ACCESS_MODE_KLM,
		.pdn = mw->pd->pdn,
		.access = MRC_ACCESS_REMOTE_ONLY,
		.xlt_offset = mw->xlt.offset,
	};
}

/*
 * Key (@want, or any if 0), translation space, then the FREE context;
 * undone on failure, the key given back.
 */
static int mrc_mw_install(struct mrc_mw *mw, u32 want)
{
	struct mrc_device *mdev = mw->mdev;
	struct mrc_mkey_ctx ctx;
	int ret;

	if (mrc_inject(mdev, MRC_STAGE_KEY_ALLOC))
		return -ENOSPC;
	ret = mrc_mkey_take(mdev, mw, MRC_MKEY_KIND_MW, want, &mw->key);
	if (ret)
		return ret;

	if (mrc_inject(mdev, MRC_STAGE_XLT_ALLOC)) {
		ret = -ENOSPC;
		goto out_free_key;
	}
	ret = mrc_xlt_alloc(mdev, 2 * MRC_MW_XLT_HALF, &mw->xlt);
	if (ret)
		goto out_free_key;

	/* No entries yet, so no fence: the context is the only write. */
	mrc_mw_free_ctx(mw, mw->key, &ctx);
	ret = mrc_write_mkey(mdev, mw->key, &ctx);
	if (ret)
		goto out_free_xlt;

	mw->state = MRC_MKEY_FREE;
	atomic_inc(&mdev->num_mws);
	/* Complete: lookups by key may find the window from now on. */
	mrc_key_users_revive(&mw->users);
	return 0;

out_free_xlt:
	mrc_xlt_free(mdev, &mw->xlt);
out_free_key:
	mrc_mkey_free(mdev, mw->key);
	return ret;
}

/**
 * mrc_alloc_mw - allocate a memory window
 * @pd: protection domain
 * @type: MRC_MW_TYPE_1 or MRC_MW_TYPE_2
 *
 * mrc_alloc_mw_key() with key 0: mrcore chooses the key.
 *
 * Context: process context; may sleep.
 * Return: the window, or the ERR_PTR() of mrc_alloc_mw_key().
 */
struct mrc_mw *mrc_alloc_mw(struct mrc_pd *pd, enum mrc_mw_type type)
{
	return mrc_alloc_mw_key(pd, type, 0);
}
EXPORT_SYMBOL_GPL(mrc_alloc_mw);

/**
 * mrc_alloc_mw_key - allocate a memory window with a requested key
 * @pd: protection domain
 * @type: MRC_MW_TYPE_1 or MRC_MW_TYPE_2
 * @key: the exact key (index and variant) the window is to get, or 0 to
 *	let mrcore choose
 *
 * Allocates the key (owner: the window), reserves translation space for
 * the window's KLM entries (two segments: see Documentation/mrcore/
 * windows.rst) and writes the key's context FREE, in KLM mode, with @pd:
 * the window is unbound and every access through its rkey fails until a
 * bind. mrc_mw_rkey() gives the rkey: @key until the first bind changes
 * its variant. A requested key is checked before anything is allocated
 * (Documentation/mrcore/registration.rst, "Requested keys").
 *
 * Context: process context; may sleep.
 * Return: the window; ERR_PTR(-EINVAL) for a bad @pd, a @type other than
 * 1 or 2 (type 3 included), or a @key of index 0, of an index >=
 * caps.max_mkeys or of the local DMA key's index; -EOPNOTSUPP on a device
 * without MRC_CAP_KLM; -ENOKEY if @key's index is in use; -ENOSPC when no
 * key or translation space is free; -ENOMEM; or the error of
 * ops->write_mkey. Nothing is left behind on failure.
 */
struct mrc_mw *mrc_alloc_mw_key(struct mrc_pd *pd, enum mrc_mw_type type,
				u32 key)
{
	struct mrc_mw *mw;
	int ret;

	if (mrc_check_pd(pd))
		return ERR_PTR(-EINVAL);
	/* IBA knows types 1 and 2 (2A/2B: vhca does 2B); nothing else. */
	if (type != MRC_MW_TYPE_1 && type != MRC_MW_TYPE_2)
		return ERR_PTR(-EINVAL);
	ret = mrc_mkey_check_req(pd->mdev, key);
	if (ret)
		return ERR_PTR(ret);
	if (!(pd->mdev->caps.flags & MRC_CAP_KLM))
		return ERR_PTR(-EOPNOTSUPP);

	mw = kzalloc(sizeof(*mw), GFP_KERNEL);
	if (!mw)
		return ERR_PTR(-ENOMEM);
	mw->mdev = pd->mdev;
	mw->pd = pd;
	mw->type = type;
	mw->state = MRC_MKEY_INVALID;
	mrc_key_users_init(&mw->users);
	/* Not findable until installed. */
	mw->users.dying = true;
	mutex_init(&mw->lock);

	ret = mrc_mw_install(mw, key);
	if (ret)
		goto out_free_mw;
	mrc_dbg_mw(mw, "type %u xlt 0x%llx\n", type, mw->xlt.offset);
	return mw;

out_free_mw:
	mutex_destroy(&mw->lock);
	/* Lookups that found the key ran under RCU: free after a grace. */
	kfree_rcu(mw, rcu);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(mrc_alloc_mw_key);

/**
 * mrc_dealloc_mw - unbind a memory window if bound, and free it
 * @mw: from mrc_alloc_mw()
 *
 * Binds and invalidations by key are turned away and those running
 * waited for; the key's context is invalidated (ops->invalidate_mkey
 * returns once no access through it is running), then a bound window
 * leaves its MR (whose num_mw drops), and the translation space, the key
 * and the window are freed. The rkey is invalid from then on.
 *
 * Context: process context; may sleep.
 * Return: 0, or the error of ops->invalidate_mkey, after which the window
 * is as it was and usable.
 */
int mrc_dealloc_mw(struct mrc_mw *mw)
{
	struct mrc_device *mdev = mw->mdev;
	int ret;

	mrc_key_users_quiesce(&mw->users);
	mutex_lock(&mw->lock);
	ret = mdev->ops->invalidate_mkey(mdev, mrc_key_index(mw->key));
	if (ret) {
		mutex_unlock(&mw->lock);
		/* Still allocated: lookups may find it again. */
		mrc_key_users_revive(&mw->users);
		return ret;
	}

	/* The context no longer reaches the MR: it may go. */
	if (mw->mr)
		atomic_dec(&mw->mr->num_mw);
	mrc_xlt_free(mdev, &mw->xlt);
	mrc_mkey_free(mdev, mw->key);
	atomic_dec(&mdev->num_mws);
	mrc_dbg_mw(mw, "deallocated\n");
	mutex_unlock(&mw->lock);

	mutex_destroy(&mw->lock);
	kfree_rcu(mw, rcu);
	return 0;
}
EXPORT_SYMBOL_GPL(mrc_dealloc_mw);

/**
 * mrc_mw_rkey - the current rkey of a memory window
 * @mw: from mrc_alloc_mw()
 *
 * Every bind changes the key's variant (type 1: mrcore moves it on by one;
 * type 2: the Bind MW WR carries it), so the rkey to hand to a peer is
 * read after the bind.
 *
 * Context: any context.
 * Return: the key.
 */
u32 mrc_mw_rkey(const struct mrc_mw *mw)
{
	/* Written under the window's mutex by binds. */
	return READ_ONCE(mw->key);
}
EXPORT_SYMBOL_GPL(mrc_mw_rkey);

/* The window's own rules for a bind: rights, length, type and state. */
static int mrc_mw_check_bind(const struct mrc_mw *mw,
			     const struct mrc_mw_bind *b)
{
	lockdep_assert_held(&mw->lock);

	/* A window grants remote rights only, and may be zero-based. */
	if (b->access & ~MRC_MW_ACCESS)
		return -EINVAL;
	/* IBA o10-36.2.2: a type 1 window is never zero-based. */
	if (mw->type == MRC_MW_TYPE_1 && (b->access & MRC_ACCESS_ZERO_BASED))
		return -EINVAL;
	/* The reserved KLM entries cover at most this much. */
	if (b->length > MRC_MW_MAX_LENGTH)
		return -EINVAL;
	if (mw->type == MRC_MW_TYPE_2) {
		/* IBA o10-37.2.30: a type 2 window is bound only when Free. */
		if (mw->state != MRC_MKEY_FREE)
			return -EINVAL;
		/* IBA o10-37.2.40: it is not unbound by a zero-length bind. */
		if (!b->length)
			return -EINVAL;
		/* qpn 0 is "no QP" to the device: it would serve every QP. */
		if (!b->qpn)
			return -EINVAL;
	}
	return 0;
}

/* The MR's side of a bind, under the MR's mutex. */
static int mrc_mw_check_mr(const struct mrc_mw *mw, const struct mrc_mr *mr,
			   const struct mrc_mw_bind *b)
{
	lockdep_assert_held(&mr->lock);

	/* FMRs remap without a REG_MR's ordering: no windows on them. */
	if (mr->type == MRC_MR_FMR)
		return -EINVAL;
	/*
	 * Windows bind to memory regions only, so a window's walk stays
	 * within 3 keys (MRC_WALK_MAX_KEYS). Indirect keys never carry
	 * MW_BIND either; this names the rule where it matters.
	 */
	if (mr->type == MRC_MR_INDIRECT)
		return -EINVAL;
	/* The MR is usable: a fast-reg MR must be VALID. */
	if (mrc_mr_state(mr) != MRC_MKEY_VALID)
		return -EINVAL;
	/* IBA C10-72: the window and the MR are of one PD. */
	if (mr->pd->pdn != mw->pd->pdn)
		return -EPERM;
	/* IBA C10-73: the MR allows windows. */
	if (!(mr->access & MRC_ACCESS_MW_BIND))
		return -EPERM;
	/* IBA C10-74: a window that writes needs an MR that is written to. */
	if ((b->access & (MRC_ACCESS_REMOTE_WRITE | MRC_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & MRC_ACCESS_LOCAL_WRITE))
		return -EPERM;
	/* IBA C10-75: the window lies inside the MR. */
	if (b->addr < mr->iova || b->length > mr->length ||
	    b->addr - mr->iova > mr->length - b->length)
		return -ERANGE;
	return 0;
}

/* Encode the window's entries over the MR's key into the idle half. */
static int mrc_mw_write_klm(struct mrc_mw *mw, const struct mrc_mr *mr,
			    const struct mrc_mw_bind *b, u64 offset, u32 *n)
{
	struct mrc_klm klm[MRC_MW_KLM_ENTRIES];
	u64 addr = b->addr, left = b->length;
	u32 i, bc;

	BUILD_BUG_ON(sizeof(klm) != MRC_MW_XLT_HALF);
	BUILD_BUG_ON(MRC_MW_XLT_HALF != MRC_XLT_SEG_SIZE);

	for (i = 0; left; i++) {
		bc = min_t(u64, left, MRC_KLM_MAX_BCOUNT);
		klm[i] = (struct mrc_klm) {
			.bcount = cpu_to_le32(bc),
			.key = cpu_to_le32(mr->key),
			.addr = cpu_to_le64(addr),
		};
		addr += bc;
		left -= bc;
	}
	*n = i;
	return mrc_xlt_write(mw->mdev, offset, klm, i * sizeof(*klm));
}

/* The window moved to @key: mrcore's record and the window follow. */
static void mrc_mw_set_key(struct mrc_mw *mw, u32 key)
{
	lockdep_assert_held(&mw->lock);

	if (key != mw->key)
		mrc_mkey_set_variant(mw->mdev, key);
	/* Read locklessly by mrc_mw_rkey(). */
	WRITE_ONCE(mw->key, key);
	atomic64_inc(&mw->mdev->stats_mw_binds);
}

/*
 * The window left @old (unbind, rebind elsewhere, invalidation): its
 * context, already rewritten and drained, no longer reaches @old.
 */
static void mrc_mw_leave(struct mrc_mr *old)
{
	if (old)
		atomic_dec(&old->num_mw);
}

/* A checked bind to @mr (held, its mutex held): entries, fence, context. */
static int mrc_mw_bind_locked(struct mrc_mw *mw, struct mrc_mr *mr,
			      const struct mrc_mw_bind *b)
{
	struct mrc_device *mdev = mw->mdev;
	u8 half = mw->state == MRC_MKEY_VALID ? !mw->half : mw->half;
	u64 offset = mw->xlt.offset + half * MRC_MW_XLT_HALF;
	struct mrc_mr *old = mw->mr;
	struct mrc_mkey_ctx ctx;
	u32 n;
	int ret;

	lockdep_assert_held(&mw->lock);
	lockdep_assert_held(&mr->lock);

	ret = mrc_mw_write_klm(mw, mr, b, offset, &n);
	if (ret)
		return ret;
	mdev->ops->fence(mdev);

	ctx = (struct mrc_mkey_ctx) {
		.key = b->key,
		.state = MRC_MKEY_VALID,
		.access_mode = MRC_ACCESS_MODE_KLM,
		.pdn = mw->pd->pdn,
		.access = (b->access & MRC_ACCESS_HW_MASK) |
			  MRC_ACCESS_REMOTE_ONLY,
		.iova = b->access & MRC_ACCESS_ZERO_BASED ? 0 : b->addr,
		.length = b->length,
		.xlt_offset = offset,
		.xlt_entries = n,
		.qpn = mw->type == MRC_MW_TYPE_2 ? b->qpn : 0,
	};
	/* Returns once no access resolves a previous VALID context. */
	ret = mrc_write_mkey(mdev, b->key, &ctx);
	if (ret)
		return ret;

	mrc_mw_set_key(mw, b->key);
	atomic_inc(&mr->num_mw);
	mw->mr = mr;
	mw->addr = b->addr;
	mw->length = b->length;
	mw->access = b->access;
	mw->qpn = ctx.qpn;
	mw->half = half;
	mw->state = MRC_MKEY_VALID;
	/* Found by mrc_mw_unbind_qp() until it leaves VALID. */
	if (mw->type == MRC_MW_TYPE_2)
		mrc_mkey_mark_qp(mdev, b->key, true);
	mrc_mw_leave(old);
	return 0;
}

/* A zero-length type 1 bind: FREE under @key; the old rkey dies. */
static int mrc_mw_unbind_locked(struct mrc_mw *mw, u32 key)
{
	struct mrc_mr *old = mw->mr;
	struct mrc_mkey_ctx ctx;
	int ret;

	lockdep_assert_held(&mw->lock);

	mrc_mw_free_ctx(mw, key, &ctx);
	/* Returns once no access resolves the VALID context. */
	ret = mrc_write_mkey(mw->mdev, key, &ctx);
	if (ret)
		return ret;

	mrc_mw_set_key(mw, key);
	mw->mr = NULL;
	mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
	mw->state = MRC_MKEY_FREE;
	mrc_mw_leave(old);
	return 0;
}

/* Bind to a held @mr whose key must still be @mr_key (0: any). */
static int mrc_mw_bind_mr(struct mrc_mw *mw, struct mrc_mr *mr, u32 mr_key,
			  const struct mrc_mw_bind *b)
{
	int ret;

	mutex_lock(&mr->lock);
	/* A REG_MR or dereg may have moved the MR's key on since. */
	if (mr_key && mr->key != mr_key)
		ret = -ENOKEY;
	else
		ret = mrc_mw_check_mr(mw, mr, b) ?:
		      mrc_mw_bind_locked(mw, mr, b);
	mutex_unlock(&mr->lock);
	return ret;
}

/**
 * mrc_bind_mw - bind a type 1 memory window (ibv_bind_mw()'s semantics)
 * @mw: a type 1 window
 * @mr: the MR to bind to, registered by the caller and not deregistered
 *	during the call; may be NULL when @length is 0
 * @addr: first byte of the window, in @mr's address space
 * @length: bytes, at most MRC_MW_MAX_LENGTH; 0 unbinds
 * @access: the window's rights: MRC_ACCESS_REMOTE_READ, _REMOTE_WRITE,
 *	_REMOTE_ATOMIC (ZERO_BASED is for type 2 only)
 *
 * Every call moves the rkey's variant on by one (read it back with
 * mrc_mw_rkey()), so a peer holding the previous rkey loses access. With
 * @length > 0 the window's context becomes VALID: KLM mode, one entry
 * {bcount, @mr's key, address} per MRC_KLM_MAX_BCOUNT bytes, iova @addr,
 * @access, the window's PD. A bound window may be rebound, to the same
 * MR or another; @mr's num_mw counts the window until it is unbound,
 * rebound elsewhere or deallocated. With @length 0 the context becomes
 * FREE: the window is unbound and its old rkey invalid. The context is
 * switched with one write_mkey, which returns once no access resolves the
 * previous one.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL if @mw is not type 1, @access has a bit other than
 * the remote rights (ZERO_BASED included), @length is above
 * MRC_MW_MAX_LENGTH, @mr is NULL with a length, of another device, an
 * FMR, an indirect key, or a fast-reg MR that is not VALID; -EPERM if @mr
 * is of another PD, lacks MRC_ACCESS_MW_BIND, or lacks LOCAL_WRITE while
 * the window would grant REMOTE_WRITE or REMOTE_ATOMIC; -ERANGE if the
 * window is not inside [@mr->iova, @mr->iova + @mr->length); or the error
 * of a backend op. On any error the window is as it was.
 */
int mrc_bind_mw(struct mrc_mw *mw, struct mrc_mr *mr, u64 addr, u64 length,
		u32 access)
{
	struct mrc_mw_bind b = {
		.addr = addr,
		.length = length,
		.access = access,
	};
	int ret;

	if (mw->type != MRC_MW_TYPE_1)
		return -EINVAL;
	if (length && (!mr || mr->mdev != mw->mdev))
		return -EINVAL;

	mutex_lock(&mw->lock);
	b.key = mrc_make_key(mrc_key_index(mw->key),
			     mrc_key_variant(mw->key) + 1);
	ret = mrc_mw_check_bind(mw, &b);
	if (!ret)
		ret = length ? mrc_mw_bind_mr(mw, mr, 0, &b) :
			       mrc_mw_unbind_locked(mw, b.key);
	mrc_dbg_mw(mw, "addr 0x%llx length 0x%llx access 0x%x: %d\n", addr,
		   length, access, ret);
	mutex_unlock(&mw->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_bind_mw);

/* The window that owns index @index, held; any variant. */
static struct mrc_mw *mrc_mw_get_index(struct mrc_device *mdev, u32 index)
{
	enum mrc_mkey_kind kind;
	struct mrc_mw *mw;

	rcu_read_lock();
	mw = mrc_mkey_find_index(mdev, index, &kind);
	if (!mw)
		mw = ERR_PTR(-ENOKEY);
	else if (kind != MRC_MKEY_KIND_MW)
		mw = ERR_PTR(-EINVAL);
	else if (!mrc_key_users_tryget(&mw->users))
		mw = ERR_PTR(-ENOKEY);
	rcu_read_unlock();
	return mw;
}

/* A Bind MW WR on a held window, under its mutex. */
static int mrc_mw_exec_bind_locked(struct mrc_mw *mw, u32 pdn, u32 mr_key,
				   const struct mrc_mw_bind *b)
{
	struct mrc_mr *mr;
	int ret;

	lockdep_assert_held(&mw->lock);

	/* IBA C10-72: the QP's PD is the window's. */
	if (pdn != mw->pd->pdn)
		return -EPERM;
	ret = mrc_mw_check_bind(mw, b);
	if (ret)
		return ret;
	if (!b->length)
		return mrc_mw_unbind_locked(mw, b->key);

	mr = mrc_mr_lookup(mw->mdev, mr_key);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	ret = mrc_mw_bind_mr(mw, mr, mr_key, b);
	mrc_mr_put(mr);
	return ret;
}

/**
 * mrc_mw_exec_bind - execute a Bind MW work request, as the device
 * @mdev: registered device
 * @pdn: PD number of the executing QP
 * @qpn: number of the executing QP, not 0; a type 2 window is bound to it
 * @mw_key: the window's index with the variant the consumer chose for the
 *	new rkey (the same as the current one is allowed, IBA)
 * @mr_key: the MR's current key (lkey); ignored for a zero-length bind
 * @addr: first byte of the window, in the MR's address space
 * @length: bytes, at most MRC_MW_MAX_LENGTH; 0 only for a type 1 window,
 *	which it unbinds
 * @access: the window's rights: MRC_ACCESS_REMOTE_READ, _REMOTE_WRITE,
 *	_REMOTE_ATOMIC, and for type 2 MRC_ACCESS_ZERO_BASED (the window's
 *	addresses then start at 0)
 *
 * The backend's engine calls this when it executes the WR, in QP order.
 * The window is found by the index of @mw_key, the MR by @mr_key exactly.
 * The window's context becomes VALID as for mrc_bind_mw(), with @mw_key
 * as its key, iova 0 for ZERO_BASED, and @qpn for a type 2 window (the
 * device allows remote access through it on that QP only). A type 2
 * window must be FREE: a bound one is invalidated first (mrc_exec_inv()).
 * A type 1 window, which user space binds through a WR too, may be
 * rebound or unbound (@length 0) in any state. Allocates nothing.
 *
 * Context: process context; may sleep (the window's and the MR's mutex,
 * the drain of a rebind).
 * Return: 0; -ENOKEY if no window has that index (or it is being
 * deallocated), or @mr_key is not live; -EINVAL if the index is not a
 * window's, @mr_key names no MR, an FMR or an indirect key (or the local
 * DMA key), the access or length is refused, a type 1 window is asked to
 * be zero-based, a type 2 window is not FREE or asked for length 0 or
 * QP 0, or a fast-reg MR is not VALID; -EPERM if @pdn is not the
 * window's PD, the MR is of another PD, lacks MRC_ACCESS_MW_BIND, or lacks
 * LOCAL_WRITE for a window granting REMOTE_WRITE or REMOTE_ATOMIC;
 * -ERANGE if the window is not inside the MR; or the error of a backend
 * op. On any error the window is as it was.
 */
int mrc_mw_exec_bind(struct mrc_device *mdev, u32 pdn, u32 qpn, u32 mw_key,
		     u32 mr_key, u64 addr, u64 length, u32 access)
{
	struct mrc_mw_bind b = {
		.key = mw_key,
		.addr = addr,
		.length = length,
		.access = access,
		.qpn = qpn,
	};
	struct mrc_mw *mw;
	int ret;

	mw = mrc_mw_get_index(mdev, mrc_key_index(mw_key));
	if (IS_ERR(mw)) {
		mrc_dbg(mdev, "bind key 0x%08x: %ld\n", mw_key, PTR_ERR(mw));
		return PTR_ERR(mw);
	}

	mutex_lock(&mw->lock);
	ret = mrc_mw_exec_bind_locked(mw, pdn, mr_key, &b);
	mrc_dbg_mw(mw, "qpn %u key 0x%08x mr 0x%08x addr 0x%llx length 0x%llx access 0x%x: %d\n",
		   qpn, mw_key, mr_key, addr, length, access, ret);
	mutex_unlock(&mw->lock);
	mrc_key_users_put(&mw->users);
	return ret;
}
EXPORT_SYMBOL_GPL(mrc_mw_exec_bind);

/*
 * A VALID type 2 window goes FREE under its current key: its context is
 * written FREE (write_mkey returns once no access through the VALID
 * context is running), then it leaves its MR and loses its QP mark.
 */
static int mrc_mw_free_locked(struct mrc_mw *mw)
{
	struct mrc_device *mdev = mw->mdev;
	struct mrc_mkey_ctx ctx;
	struct mrc_mr *old;
	int ret;

	lockdep_assert_held(&mw->lock);

	mrc_mw_free_ctx(mw, mw->key, &ctx);
	ret = mdev->ops->write_mkey(mdev, mrc_key_index(mw->key), &ctx);
	if (ret)
		return ret;

	old = mw->mr;
	mw->mr = NULL;
	mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
	mw->state = MRC_MKEY_FREE;
	mrc_mkey_mark_qp(mdev, mw->key, false);
	mrc_mw_leave(old);
	return 0;
}

/* The checked invalidation of a held window, under its mutex. */
static int mrc_mw_inv_locked(struct mrc_mw *mw, u32 pdn, u32 qpn, u32 key)
{
	lockdep_assert_held(&mw->lock);

	/* A bind may have moved the key on since the lookup. */
	if (key != mw->key)
		return -ENOKEY;
	/* IBA o10-37.2.26: a type 1 window is not invalidated by a WR. */
	if (mw->type != MRC_MW_TYPE_2)
		return -EINVAL;
	/* Only a QP of the window's PD may invalidate it. */
	if (pdn != mw->pd->pdn)
		return -EPERM;
	/* Invalidating a Free window is allowed and changes nothing. */
	if (mw->state == MRC_MKEY_FREE)
		return 0;
	/*
	 * A type 2B window belongs to the QP it was bound on, which alone
	 * reaches it: a LOCAL_INV posted on that QP, a Send with Invalidate
	 * arriving on it. (rxe compares the QP on access only.)
	 */
	if (qpn != mw->qpn)
		return -EPERM;
	return mrc_mw_free_locked(mw);
}

/* Invalidate the window that owns exactly @key. */
static int mrc_mw_exec_inv(struct mrc_device *mdev, u32 pdn, u32 qpn,
			   u32 key)
{
	struct mrc_mw *mw;
	int ret;

	mw = mrc_mw_get_index(mdev, mrc_key_index(key));
	if (IS_ERR(mw))
		return PTR_ERR(mw) == -EINVAL ? -ENOKEY : PTR_ERR(mw);

	mutex_lock(&mw->lock);
	ret = mrc_mw_inv_locked(mw, pdn, qpn, key);
	mrc_dbg_mw(mw, "key 0x%08x pdn %u qpn %u: %d\n", key, pdn, qpn, ret);
	mutex_unlock(&mw->lock);
	mrc_key_users_put(&mw->users);
	return ret;
}

/* mrc_exec_inv(), and with @nowait its _nowait form. */
static int mrc_do_exec_inv(struct mrc_device *mdev, u32 pdn, u32 qpn,
			   u32 key, bool nowait)
{
	enum mrc_mkey_kind kind;
	void *owner;

	if (key == mdev->local_dma_lkey)
		return -EINVAL;

	rcu_read_lock();
	owner = mrc_mkey_find(mdev, key, &kind);
	rcu_read_unlock();
	if (!owner)
		return -ENOKEY;
	/* Each path looks the key up again and holds what it finds. */
	if (kind == MRC_MKEY_KIND_MW)
		return nowait ? -EAGAIN : mrc_mw_exec_inv(mdev, pdn, qpn, key);
	return mrc_frmr_do_inv(mdev, pdn, key, nowait);
}

/**
 * mrc_exec_inv - execute an invalidation, as the device
 * @mdev: registered device
 * @pdn: PD number of the executing QP (LOCAL_INV), or of the QP a Send
 *	with Invalidate arrived on
 * @qpn: number of that QP: the requester's for LOCAL_INV, the
 *	responder's for Send with Invalidate. A type 2 window is
 *	invalidated only by the QP it is bound to; unused for a fast-reg MR
 * @key: the key to invalidate, any 32-bit value
 *
 * The backend's engine calls this for LOCAL_INV and Send with Invalidate.
 * The key must be live with exactly this variant. A fast-reg MR's key is
 * invalidated as by mrc_frmr_exec_inv() (VALID -> FREE; -EBUSY while
 * windows are bound). A type 2 window's key moves the window VALID ->
 * FREE when @qpn is the QP it is bound to (a type 2B window belongs to
 * that QP): its context is written FREE under the same key (write_mkey
 * returns once no access through the VALID context is running), the
 * window leaves its MR (whose num_mw drops) and the rkey is invalid until
 * the next bind. A FREE MR or window is left as it is, with success, on
 * any QP of its PD. Allocates nothing.
 *
 * Context: process context; may sleep (the owner's mutex, the drain).
 * Return: 0; -ENOKEY if @key is not live (unknown index, stale variant,
 * owner being freed); -EINVAL for the key of a type 1 window, of a memory
 * region that is not fast-reg, or the local DMA key; -EPERM if @pdn is not
 * the owner's PD, or a VALID type 2 window is bound to a QP other than
 * @qpn; -EBUSY for a fast-reg MR with windows bound; or the error of
 * ops->write_mkey, after which the key is still VALID.
 */
int mrc_exec_inv(struct mrc_device *mdev, u32 pdn, u32 qpn, u32 key)
{
	return mrc_do_exec_inv(mdev, pdn, qpn, key, false);
}
EXPORT_SYMBOL_GPL(mrc_exec_inv);

/**
 * mrc_exec_inv_nowait - mrc_exec_inv() where the caller cannot sleep
 * @mdev: registered device
 * @pdn: as for mrc_exec_inv()
 * @qpn: as for mrc_exec_inv()
 * @key: as for mrc_exec_inv()
 *
 * The same invalidation, for an engine that executes it where it cannot
 * sleep, such as a kernel post_send's own run, as far as it can go
 * without sleeping: a fast-reg MR whose mutex is free and through whose
 * VALID context no access is running. Where mrc_exec_inv() would sleep this
 * returns -EAGAIN, and the engine executes the work request again where
 * it can sleep. A window's key always takes -EAGAIN.
 *
 * Context: any context but hard interrupt; does not sleep. The backend's
 * write_mkey must return -EAGAIN instead of waiting there (struct
 * mrc_hw_ops).
 * Return: as mrc_exec_inv(); -EAGAIN with the key still VALID.
 */
int mrc_exec_inv_nowait(struct mrc_device *mdev, u32 pdn, u32 qpn, u32 key)
{
	return mrc_do_exec_inv(mdev, pdn, qpn, key, true);
}
EXPORT_SYMBOL_GPL(mrc_exec_inv_nowait);

/*
 * The next window marked as bound to a QP from *@index on, held; NULL
 * when none is left. A window being deallocated cannot be held: its
 * deallocation either frees the key (and the mark with it) or fails and
 * makes the window findable again, so it is looked for again until one
 * of the two has happened.
 */
static struct mrc_mw *mrc_mw_next_qp(struct mrc_device *mdev, u32 *index)
{
	struct mrc_mw *mw;
	bool held;

	for (;;) {
		rcu_read_lock();
		mw = mrc_mkey_next_qp(mdev, index);
		held = !mw || mrc_key_users_tryget(&mw->users);
		rcu_read_unlock();
		if (held)
			return mw;
		cond_resched();
	}
}

/* Free a held @mw if it is still a VALID type 2 window bound to @qpn. */
static int mrc_mw_unbind_qp_one(struct mrc_mw *mw, u32 qpn)
{
	int ret;

	mutex_lock(&mw->lock);
	if (mw->type != MRC_MW_TYPE_2 || mw->state != MRC_MKEY_VALID ||
	    mw->qpn != qpn) {
		mutex_unlock(&mw->lock);
		return 0;
	}
	ret = mrc_mw_free_locked(mw);
	mrc_dbg_mw(mw, "qpn %u destroyed: %d\n", qpn, ret);
	mutex_unlock(&mw->lock);
	return ret;
}

/**
 * mrc_mw_unbind_qp - free the type 2 windows bound to a destroyed QP
 * @mdev: registered device
 * @qpn: the number of a QP being destroyed
 *
 * A type 2 window's context names its QP by number, and numbers are
 * reused: a later QP with @qpn would inherit the windows still bound to
 * it. The backend calls this when it destroys a QP, after the QP's work
 * requests have stopped executing (no Bind MW with @qpn runs or starts)
 * and no access can arrive on it, and before @qpn can be given to
 * another QP. Every window bound to @qpn moves VALID -> FREE exactly as
 * an invalidation on that QP would move it (mrc_exec_inv()): its context
 * is written FREE under its current key, write_mkey returns once no
 * access through the VALID context is running, and the window leaves its
 * MR (whose num_mw drops). The consumer may then bind it again on
 * another QP, or deallocate it. FREE rather than INVALID: rxe keeps such
 * a window until it is invalidated (it holds the QP object, so the
 * number is not reused meanwhile) and its invalidation leaves it FREE;
 * here only the destroyed QP could invalidate it, so its destruction
 * does. Windows are found through their QP mark, not by a scan of every
 * key; while no window is bound to any QP this returns at once.
 *
 * Context: process context; may sleep (each window's mutex, the drains).
 * Takes the windows' mutexes only, never an MR's: the caller may hold
 * any lock of its own that mrcore never takes.
 * Return: 0 (also for @qpn 0, which no window is bound to); or the first
 * error of ops->write_mkey, after which the windows it failed on are
 * still VALID and bound to @qpn: the caller must then never give @qpn to
 * another QP. The other windows are freed in any case.
 */
int mrc_mw_unbind_qp(struct mrc_device *mdev, u32 qpn)
{
	struct mrc_mw *mw;
	u32 index = 1;
	int ret, err = 0;

	if (!qpn || !mrc_mkey_any_qp(mdev))
		return 0;

	while ((mw = mrc_mw_next_qp(mdev, &index))) {
		ret = mrc_mw_unbind_qp_one(mw, qpn);
		mrc_key_users_put(&mw->users);
		if (ret && !err)
			err = ret;
		index++;
	}
	return err;
}
EXPORT_SYMBOL_GPL(mrc_mw_unbind_qp);
