// SPDX-License-Identifier: GPL-2.0
/*
 * vhca engine, transfers: moving the bytes of one operation between its
 * two sides.
 *
 * One side of a transfer is a struct vhca_cursor: a local gather or
 * scatter list, each SGE resolved through its lkey against the owning
 * QP's PD (VHCA_CURSOR_SGL; inline data is such a list with no SGEs), or
 * a remote (rkey, address) range resolved against the responder QP's PD
 * and number, a type 2 memory window serving its own QP only
 * (VHCA_CURSOR_RANGE). Every byte moves through the walker (walker.c),
 * which reads the mkey contexts and MTT/KLM entries in device memory.
 *
 * Flow: vhca_xfer() moves each byte once, from a source page to a
 * destination page. Per chunk of at most VHCA_XFER_CHUNK bytes, the walks
 * of both sides gather their pages into the CPU's pipes (struct
 * vhca_xbuf) and hold every key they enter, so no invalidation frees a
 * page before the copy is done; then the pages are copied and the keys
 * let go. A message one gathering covers is thus checked whole before a
 * byte is written; a larger one, or one with more pieces or keys than a
 * pipe holds, has both sides probed first (vhca_cursor_probe(): walked
 * without moving bytes), so that a protection error is found before the
 * target is touched. A walk of an ODP context that faults records the
 * fault in the cursor's struct vhca_fault and fails -EAGAIN, and the
 * engine parks the QP (fault.c). A copy that cannot be restarted as a
 * whole (into a receive already taken, an atomic's result) resolves its
 * faults in place instead and retries from the same cursors:
 * vhca_xfer_sync() and vhca_cursor_move_sync().
 */
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/sched.h>

#include "engine.h"
#include "engine_loc.h"
#include "vhca_loc.h"

/* Faults a copy resolved in place retries before it fails. */
#define VHCA_SYNC_FAULT_TRIES	8

/**
 * vhca_cursor_sgl - start a cursor over a QP's gather or scatter list
 * @cur: the cursor
 * @qp: the QP whose list it is: its keys are checked against its PD
 * @sge: the list, or NULL for inline data (set @cur->inline_data then)
 * @num: entries of @sge, or bytes of inline data
 * @dir: the access its walks make (VHCA_ACCESS_LOCAL_READ or _WRITE)
 */
void vhca_cursor_sgl(struct vhca_cursor *cur, struct vhca_qp *qp,
		     const struct ib_sge *sge, u32 num,
		     enum vhca_access_dir dir)
{
	*cur = (struct vhca_cursor) {
		.kind = VHCA_CURSOR_SGL,
		.dir = dir,
		.vdev = qp->vdev,
		.pdn = qp->pdn,
		.qpn = qp->ibqp.qp_num,
		.sge = sge,
		.num = num,
	};
}

/**
 * vhca_sge_names - does a list of SGEs name a key?
 * @sge: the list
 * @num: its entries
 * @key: the key
 *
 * Return: true if an SGE's lkey is @key.
 */
bool vhca_sge_names(const struct ib_sge *sge, u32 num, u32 key)
{
	u32 i;

	for (i = 0; i < num; i++)
		if (sge[i].lkey == key)
			return true;
	return false;
}

/**
 * vhca_sge_bytes - the bytes a list of SGEs covers
 * @sge: the list
 * @num: its entries
 *
 * Return: the sum of the lengths; U64_MAX never results from 2^32 u32s.
 */
u64 vhca_sge_bytes(const struct ib_sge *sge, u32 num)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < num; i++)
		len += sge[i].length;
	return len;
}

/*
 * Move @len bytes between @buf and the list at @cur, through the walker;
 * @buf NULL probes. The list must hold @len more bytes.
 */
static int vhca_sgl_move(struct vhca_cursor *cur, u8 *buf, u64 len)
{
	int err;

	if (!cur->sge) {
		if (buf && len)
			memcpy(buf, cur->inline_data + cur->off, len);
		cur->off += len;
		return 0;
	}

	while (len) {
		const struct ib_sge *sge;
		u64 n;

		if (cur->idx >= cur->num)
			return -EINVAL;
		sge = &cur->sge[cur->idx];
		n = min_t(u64, len, sge->length - cur->off);
		if (n) {
			err = vhca_access_fault(cur->vdev, cur->pdn, cur->qpn,
						sge->lkey, sge->addr + cur->off,
						buf, n, cur->dir, NULL,
						cur->fault);
			if (err)
				return err;
		}
		cur->off += n;
		len -= n;
		if (buf)
			buf += n;
		if (cur->off == sge->length) {
			cur->idx++;
			cur->off = 0;
		}
	}
	return 0;
}

/* Move @len bytes between @buf and the remote range at @cur. */
static int vhca_range_move(struct vhca_cursor *cur, u8 *buf, u64 len)
{
	int err;

	err = vhca_access_fault(cur->vdev, cur->pdn, cur->qpn, cur->rkey,
				cur->addr, buf, len, cur->dir, cur->counters,
				cur->fault);
	if (!err)
		cur->addr += len;
	return err;
}

/* Move @len bytes between @buf and @cur's side; @buf NULL probes. */
static int vhca_cursor_move(struct vhca_cursor *cur, u8 *buf, u64 len)
{
	if (cur->kind == VHCA_CURSOR_SGL)
		return vhca_sgl_move(cur, buf, len);
	return vhca_range_move(cur, buf, len);
}

/**
 * vhca_cursor_probe - walk bytes of one side without moving any
 * @cur: the side; it stays where it is
 * @len: bytes to walk from it
 *
 * Return: 0, or the error moving them would meet (-EAGAIN with a fault
 * recorded for a fault).
 */
int vhca_cursor_probe(const struct vhca_cursor *cur, u64 len)
{
	struct vhca_cursor c = *cur;

	return vhca_cursor_move(&c, NULL, len);
}

/*
 * Gather up to @len bytes of @cur's side into the empty pipe @p, leaving
 * @cur where it is. Stops early, with fewer bytes in @p, when @p fills
 * up. Not for inline data, which needs no walk.
 */
static int vhca_cursor_gather(const struct vhca_cursor *cur, u64 len,
			      struct vhca_pipe *p)
{
	u32 idx = cur->idx;
	u64 off = cur->off;
	int err;

	if (cur->kind == VHCA_CURSOR_RANGE) {
		err = vhca_access_gather(cur->vdev, cur->pdn, cur->qpn,
					 cur->rkey, cur->addr, len, cur->dir,
					 cur->counters, cur->fault, p);
		return err == -ENOSPC ? 0 : err;
	}

	/* Inline data is a source only, and needs no walk. */
	if (WARN_ON_ONCE(!cur->sge))
		return -EINVAL;
	while (p->bytes < len) {
		const struct ib_sge *sge;
		u64 n;

		if (idx >= cur->num)
			return -EINVAL;
		sge = &cur->sge[idx];
		n = min_t(u64, len - p->bytes, sge->length - off);
		if (n) {
			err = vhca_access_gather(cur->vdev, cur->pdn, cur->qpn,
						 sge->lkey, sge->addr + off, n,
						 cur->dir, NULL, cur->fault,
						 p);
			if (err)
				return err == -ENOSPC ? 0 : err;
		}
		idx++;
		off = 0;
	}
	return 0;
}

/* Move @cur past @len bytes it holds, as a move of them would. */
static void vhca_cursor_skip(struct vhca_cursor *cur, u64 len)
{
	if (cur->kind == VHCA_CURSOR_RANGE) {
		cur->addr += len;
		return;
	}
	if (!cur->sge) {
		cur->off += len;
		return;
	}
	while (len) {
		u64 n = min_t(u64, len, cur->sge[cur->idx].length - cur->off);

		cur->off += n;
		len -= n;
		if (cur->off == cur->sge[cur->idx].length) {
			cur->idx++;
			cur->off = 0;
		}
	}
}

/*
 * Copy the first @len bytes of the pages in @src, or of @buf when @src is
 * NULL, into the pages of @dst, a CPU page at a time: each byte moves
 * once. Both pipes hold the keys that keep their pages alive. Where the
 * two sides overlap (a loopback transfer within one buffer) the bytes
 * that land are undefined, as on a wire, which reads a source a packet at
 * a time; only the destination is written, and each piece with memmove()
 * so that the copy itself stays defined.
 */
static void vhca_pipe_copy(const struct vhca_pipe *dst,
			   const struct vhca_pipe *src, const u8 *buf, u64 len)
{
	const struct vhca_span *d = dst->span;
	const struct vhca_span *s = src ? src->span : NULL;
	u32 doff = 0, soff = 0;

	while (len) {
		phys_addr_t dp = d->phys + doff;
		size_t room = min_t(size_t, d->len - doff,
				    PAGE_SIZE - offset_in_page(dp));
		size_t n = min_t(u64, len, room);
		u8 *dva = kmap_local_page(pfn_to_page(PHYS_PFN(dp)));

		dva += offset_in_page(dp);
		if (s) {
			phys_addr_t sp = s->phys + soff;
			size_t room = min_t(size_t, s->len - soff,
					    PAGE_SIZE - offset_in_page(sp));
			u8 *sva;

			n = min(n, room);
			sva = kmap_local_page(pfn_to_page(PHYS_PFN(sp)));
			sva += offset_in_page(sp);
			if (sp < dp + n && dp < sp + n)
				memmove(dva, sva, n);
			else
				memcpy(dva, sva, n);
			kunmap_local(sva);
			soff += n;
			if (soff == s->len) {
				s++;
				soff = 0;
			}
		} else {
			memcpy(dva, buf, n);
			buf += n;
		}
		kunmap_local(dva);
		doff += n;
		if (doff == d->len) {
			d++;
			doff = 0;
		}
		len -= n;
	}
}

/* Probe both sides for @len bytes, the source unless it was already. */
static int vhca_xfer_probe(struct vhca_cursor *src, struct vhca_cursor *dst,
			   u64 len, bool src_probed, enum vhca_side *side)
{
	int err;

	*side = VHCA_SRC;
	if (!src_probed) {
		err = vhca_cursor_probe(src, len);
		if (err)
			return err;
	}
	*side = VHCA_DST;
	return vhca_cursor_probe(dst, len);
}

/*
 * Gather one chunk of at most @len bytes of both sides into @xb, the
 * source first, and copy what both gathered. Return: the bytes copied
 * through @moved, 0 in it when either side's gathering fell short of
 * @len bytes and @copy_short is false (nothing is written then, and the
 * destination is not walked after a short source); or the walker's
 * error, with *@side saying whose.
 */
static int vhca_xfer_chunk(struct vhca_xbuf *xb, struct vhca_cursor *src,
			   struct vhca_cursor *dst, u64 len, bool copy_short,
			   enum vhca_side *side, u64 *moved)
{
	const u8 *buf = NULL;
	u64 n = len;
	int err;

	*moved = 0;
	*side = VHCA_SRC;
	if (src->kind == VHCA_CURSOR_SGL && !src->sge) {
		buf = src->inline_data + src->off;
	} else {
		err = vhca_cursor_gather(src, len, &xb->src);
		if (err)
			goto out;
		n = xb->src.bytes;
		/* The rest of the source is checked before the destination. */
		if (n < len && !copy_short)
			goto out;
	}

	*side = VHCA_DST;
	err = vhca_cursor_gather(dst, n, &xb->dst);
	if (err)
		goto out;
	n = xb->dst.bytes;
	if (n < len && !copy_short)
		goto out;

	vhca_pipe_copy(&xb->dst, buf ? NULL : &xb->src, buf, n);
	*moved = n;
out:
	vhca_pipe_release(dst->vdev, &xb->dst);
	vhca_pipe_release(src->vdev, &xb->src);
	return err;
}

/**
 * vhca_xfer - copy bytes from one side of a transfer to the other
 * @vdev: the device whose transfer pipes carry them
 * @src: the side read
 * @dst: the side written
 * @len: bytes to copy; both sides must hold them
 * @src_probed: @src was probed for @len bytes already
 * @side: out, on failure: which side refused
 *
 * Each byte moves once, from a source page to a destination page, in
 * chunks of at most VHCA_XFER_CHUNK bytes: the walks of both sides
 * gather the chunk's pages and hold their keys (vhca_access_gather()),
 * the bytes are copied page to page, and the keys go. Inline data is
 * copied straight from the WQE. Nothing is written before both sides
 * are found good: a message that one gathering covers is checked whole
 * by it; a longer one, or one whose pages or keys do not fit in a
 * gathering, has both sides probed first (the source only if the
 * caller has not, as @src_probed says). Both cursors advance by the
 * bytes moved.
 *
 * Return: 0 or the walker's error.
 */
int vhca_xfer(struct vhca_dev *vdev, struct vhca_cursor *src,
	      struct vhca_cursor *dst, u64 len, bool src_probed,
	      enum vhca_side *side)
{
	bool probed = false;
	int err;

	if (len > VHCA_XFER_CHUNK) {
		err = vhca_xfer_probe(src, dst, len, src_probed, side);
		if (err)
			return err;
		probed = true;
	}

	while (len) {
		u64 n;

		err = vhca_xfer_chunk(vdev->xbuf[get_cpu()], src, dst,
				      min_t(u64, len, VHCA_XFER_CHUNK), probed,
				      side, &n);
		put_cpu();
		if (err)
			return err;
		if (!n) {
			/* Gatherings always move a byte once probed. */
			if (WARN_ON_ONCE(probed))
				return -EINVAL;
			/* The one gathering fell short: check the rest. */
			err = vhca_xfer_probe(src, dst, len, src_probed,
					      side);
			if (err)
				return err;
			probed = true;
			continue;
		}
		vhca_cursor_skip(src, n);
		vhca_cursor_skip(dst, n);
		len -= n;
		/* A kernel post_send's run may not give the CPU up. */
		if (len && !vhca_engine_nosleep())
			cond_resched();
	}
	return 0;
}

/* --- copies that cannot restart: page faults resolved in place --- */

/**
 * vhca_cursor_move_sync - move bytes of a list, resolving faults in place
 * @cur: a VHCA_CURSOR_SGL cursor
 * @buf: the bytes read or written
 * @len: how many
 *
 * As a move through @cur, but a page fault is resolved in place and the
 * move retried from the same cursor, for a copy that cannot be restarted
 * as a whole.
 *
 * Return: 0 or the walker's error.
 */
int vhca_cursor_move_sync(struct vhca_cursor *cur, u8 *buf, u64 len)
{
	struct vhca_cursor start = *cur;
	struct vhca_fault f = {};
	unsigned int tries;
	int err;

	for (tries = 0;; tries++) {
		cur->fault = tries < VHCA_SYNC_FAULT_TRIES ? &f : NULL;
		err = vhca_cursor_move(cur, buf, len);
		if (!f.pending || !vhca_fault_resolve_sync(&f))
			break;
		*cur = start;
	}
	cur->fault = start.fault;
	return err;
}

/**
 * vhca_xfer_sync - copy a message into a receive already taken
 * @vdev: the device whose transfer pipes carry it
 * @src: the sender's gather list, probed for @len bytes already
 * @dst: the receive's scatter list
 * @len: bytes to copy
 * @side: out, on failure: which side refused
 *
 * vhca_xfer() whose page faults, on either list, are resolved in place,
 * the copy starting over from the same cursors.
 *
 * Return: 0 or the walker's error.
 */
int vhca_xfer_sync(struct vhca_dev *vdev, struct vhca_cursor *src,
		   struct vhca_cursor *dst, u64 len, enum vhca_side *side)
{
	struct vhca_cursor s0 = *src, d0 = *dst;
	struct vhca_fault f = {};
	unsigned int tries;
	int err;

	for (tries = 0;; tries++) {
		src->fault = tries < VHCA_SYNC_FAULT_TRIES ? &f : NULL;
		dst->fault = src->fault;
		err = vhca_xfer(vdev, src, dst, len, true, side);
		if (!f.pending || !vhca_fault_resolve_sync(&f))
			break;
		*src = s0;
		*dst = d0;
	}
	src->fault = s0.fault;
	dst->fault = d0.fault;
	return err;
}
