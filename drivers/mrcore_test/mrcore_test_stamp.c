// SPDX-License-Identifier: GPL-2.0
/*
 * mrcore_test: RDMA WRITEs kept in flight into an MR while it is
 * reregistered or deregistered (MRCT_STAMP_WRITES), and the wait for a
 * receive completion whose SEND failed (MRCT_QP_WAIT_RECV).
 *
 * A rereg or dereg must not let the device write where the MR no longer
 * points: a write that overlaps the change may land in the old buffer or
 * in the new one, or fail, but once the change has returned the old
 * buffer is the process's again. To put writes in the device while the
 * change runs, two threads share one call. A work item (the poster)
 * keeps the send queue of one QP full of RDMA WRITEs into M and polls
 * their completions; the calling thread, in the process that owns the
 * memory, changes M between them. Both count generations: the poster
 * records, for each write, how many changes had finished before it was
 * posted and how many had begun before its completion was polled, which
 * bounds the buffers it may have reached; the caller checks the bytes.
 *
 * After each change the calling thread copies what the buffer M left
 * holds where the writes outstanding at the change would land, and
 * compares it once they have completed: a byte that changed in between
 * was written through a translation that was gone.
 *
 * The context's lock is held for the whole call, as by the benchmark
 * loops: device removal waits for it, at most one progress deadline.
 */
#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mrcore_test.h"

/**
 * struct mrct_stamp_run - one MRCT_STAMP_WRITES call
 * @req: the request, copied in and out
 * @work: the poster
 * @wq: the calling thread waits here for completions and the poster's end
 * @qp: the QP that posts
 * @cq: its CQ
 * @rkey: M's rkey; still used after the dereg (those writes must fail)
 * @first_id: wr_id of write 0; write i has @first_id + i
 * @recs: one record per write
 * @begun: changes of M begun, counted from @req.gen
 * @done: changes of M finished, counted from @req.gen
 * @posted: writes posted (set by the poster only)
 * @completed: writes whose completion was polled (poster only)
 * @stop: the calling thread asks the poster to post no more
 * @finished: the poster has returned from its loop
 * @err: the poster's error: a failed poll, or no completion in time
 * @target: writes that must complete before the next change
 * @frozen: what the buffer M left held after the last change
 * @frozen_addr: user address @frozen was copied from
 * @frozen_off: its offset in that buffer
 * @frozen_len: its length; 0 when there is nothing to compare
 * @frozen_gen: the generation M had moved to
 * @bounce: a page of the buffer as it is now, for the comparison
 * @wc: completions polled at once
 */
struct mrct_stamp_run {
	struct mrct_stamp_writes req;
	struct work_struct work;
	wait_queue_head_t wq;
	struct ib_qp *qp;
	struct ib_cq *cq;
	u32 rkey;
	u64 first_id;
	struct mrct_stamp_rec *recs;
	atomic_t begun;
	atomic_t done;
	atomic_t posted;
	atomic_t completed;
	bool stop;
	bool finished;
	int err;
	u32 target;
	u8 *frozen;
	u64 frozen_addr;
	u64 frozen_off;
	u64 frozen_len;
	u32 frozen_gen;
	u8 *bounce;
	struct ib_wc wc[MRCT_QP_DEPTH];
};

/* The poster ------------------------------------------------------------ */

/* Post write @i: slot first + i of the source to the same slot of M. */
static int mrct_stamp_post(struct mrct_stamp_run *run, u32 i)
{
	const struct mrct_stamp_writes *req = &run->req;
	u64 off = (u64)(req->first + i) * req->slot_size;
	const struct ib_send_wr *bad = NULL;
	struct ib_sge sge = {
		.addr = req->src_iova + off,
		.length = req->slot_size,
		.lkey = req->src_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = run->first_id + i,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = req->iova + off,
		.rkey = run->rkey,
	};

	/* Acquire: the write is posted after the changes counted here. */
	run->recs[i].gen_post = atomic_read_acquire(&run->done);
	return ib_post_send(run->qp, &wr.wr, &bad);
}

/*
 * Record the @n completions polled; return how many were writes of this
 * call (others are receives, or late work of an earlier call). The first
 * failed one stops the posting: the QP is in ERR and flushes the rest.
 */
static u32 mrct_stamp_reap(struct mrct_stamp_run *run, int n, bool *posting)
{
	struct mrct_stamp_rec *rec;
	u32 mine = 0;
	u64 i;
	int k;

	for (k = 0; k < n; k++) {
		/* Earlier sends wrap around, receives have bit 63: too big. */
		i = run->wc[k].wr_id - run->first_id;
		if (i >= run->req.count)
			continue;
		rec = &run->recs[i];
		/* A change begun after this read began after the write ended. */
		rec->gen_done = atomic_read(&run->begun);
		rec->status = run->wc[k].status;
		if (rec->status != IB_WC_SUCCESS) {
			if (run->req.status == IB_WC_SUCCESS)
				run->req.status = rec->status;
			*posting = false;
		}
		mine++;
	}
	return mine;
}

/* Post up to @run's depth; false once posting has stopped for good. */
static bool mrct_stamp_fill(struct mrct_stamp_run *run, u32 *posted,
			    u32 inflight)
{
	int err;

	while (inflight < run->req.depth && *posted < run->req.count) {
		err = mrct_stamp_post(run, *posted);
		if (err) {
			run->req.post_err = err;
			return false;
		}
		inflight++;
		atomic_set(&run->posted, ++*posted);
		/*
		 * Pairs with the smp_mb() after a change finishes: either that
		 * change sees this write posted, or the next write sees it.
		 */
		smp_mb();
	}
	return true;
}

/*
 * Keep the send queue full until every write is posted (or one failed,
 * or the calling thread says stop), then collect what is in flight. The
 * deadline is a progress deadline: no completion for MRCT_STAMP_WAIT_MS.
 */
static void mrct_stamp_poster(struct work_struct *work)
{
	struct mrct_stamp_run *run = container_of(work, struct mrct_stamp_run,
						  work);
	unsigned long progress = jiffies;
	u32 posted = 0, completed = 0, mine;
	bool posting = true;
	int n;

	for (;;) {
		if (READ_ONCE(run->stop))
			posting = false;
		if (posting)
			posting = mrct_stamp_fill(run, &posted,
						  posted - completed);
		if (posted == completed &&
		    (!posting || posted == run->req.count))
			break;

		n = ib_poll_cq(run->cq, run->req.depth, run->wc);
		if (n < 0) {
			run->err = n;
			break;
		}
		/* The completions are read before the changes begun. */
		smp_rmb();
		mine = mrct_stamp_reap(run, n, &posting);
		if (mine) {
			completed += mine;
			progress = jiffies;
			/* Release: the records before the count. */
			smp_mb__before_atomic();
			atomic_add(mine, &run->completed);
			wake_up(&run->wq);
			continue;
		}
		if (time_after(jiffies, progress +
			       msecs_to_jiffies(MRCT_STAMP_WAIT_MS))) {
			run->err = -ETIMEDOUT;
			break;
		}
		usleep_range(20, 100);
	}
	/* Release: records and counters before the end is seen. */
	smp_store_release(&run->finished, true);
	wake_up(&run->wq);
}

/* The calling thread ------------------------------------------------------ */

/* @target writes have completed, or the poster has returned. */
static bool mrct_stamp_reached(struct mrct_stamp_run *run, u32 target)
{
	/* Acquire: the records of those writes are written. */
	if (atomic_read_acquire(&run->completed) >= target)
		return true;
	/* Acquire: all records and counters are written. */
	return smp_load_acquire(&run->finished);
}

static int mrct_stamp_wait(struct mrct_stamp_run *run, u32 target)
{
	if (wait_event_killable(run->wq, mrct_stamp_reached(run, target)))
		return -EINTR;
	return 0;
}

/*
 * Move M to @addr, same iova and length, as MRCT_REREG does for TRANS:
 * vhca changes M in place and keeps its keys. A driver that built a new
 * MR instead gave it new keys, which the writes do not use: the new MR
 * takes the handle, as in MRCT_REREG, and the call fails.
 */
static int mrct_stamp_rereg(struct mrct_ctx *ctx, struct mrct_stamp_run *run,
			    struct ib_mr *mr, u64 addr)
{
	const struct mrct_stamp_writes *req = &run->req;
	struct ib_mr *new;

	new = ctx->ibdev->ops.rereg_user_mr(mr, IB_MR_REREG_TRANS, addr,
					    req->length, req->iova, 0, mr->pd,
					    NULL);
	if (IS_ERR(new))
		return PTR_ERR(new);
	if (new) {
		mrct_mr_adopt(ctx, new, mr->pd);
		xa_store(&ctx->mrs, req->mr, new, GFP_KERNEL);
		ib_dereg_mr(mr);
		return -EOPNOTSUPP;
	}
	mr->iova = req->iova;
	mr->length = req->length;
	return 0;
}

/* Deregister M as MRCT_DEREG does; its handle goes with it. */
static int mrct_stamp_dereg(struct mrct_ctx *ctx, u32 handle, struct ib_mr *mr)
{
	int err;

	err = ib_dereg_mr(mr);
	if (err)
		return err;
	xa_erase(&ctx->mrs, handle);
	ctx->nr_mrs--;
	return 0;
}

/*
 * Copy what the buffer M left (@addr) holds where the device may not
 * write any more: all of it after the dereg; after a rereg, the slots of
 * the writes not complete when the change began (@from on) up to the
 * last one posted, and one more, which may have read the old generation
 * just before the change finished (see mrct_stamp_fill()).
 */
static int mrct_stamp_freeze(struct mrct_stamp_run *run, u64 addr, u32 from)
{
	const struct mrct_stamp_writes *req = &run->req;
	u32 to;

	if (req->flags & MRCT_STAMP_DEREG) {
		run->frozen_off = 0;
		run->frozen_len = req->length;
	} else {
		to = min_t(u32, atomic_read(&run->posted) + 1, req->count);
		run->frozen_off = (u64)(req->first + from) * req->slot_size;
		run->frozen_len = (u64)(to - from) * req->slot_size;
	}
	run->frozen_addr = addr;
	run->frozen_gen = atomic_read(&run->done);
	if (copy_from_user(run->frozen,
			   u64_to_user_ptr(addr + run->frozen_off),
			   run->frozen_len))
		return -EFAULT;
	return 0;
}

/* Count the bytes of the frozen range that changed since it was copied. */
static int mrct_stamp_compare(struct mrct_stamp_run *run)
{
	struct mrct_stamp_writes *req = &run->req;
	u64 off, n, k;

	for (off = 0; off < run->frozen_len; off += n) {
		n = min_t(u64, PAGE_SIZE, run->frozen_len - off);
		if (copy_from_user(run->bounce,
				   u64_to_user_ptr(run->frozen_addr +
						   run->frozen_off + off), n))
			return -EFAULT;
		if (!memcmp(run->bounce, run->frozen + off, n))
			continue;
		for (k = 0; k < n; k++) {
			if (run->bounce[k] == run->frozen[off + k])
				continue;
			if (!req->stale_bytes) {
				req->stale_gen = run->frozen_gen;
				req->stale_offset = run->frozen_off + off + k;
			}
			req->stale_bytes++;
		}
	}
	run->frozen_len = 0;
	return 0;
}

/*
 * Change M (rereg to the other buffer, or dereg) while the poster keeps
 * writing, then freeze the part of the old buffer the device must leave
 * alone from now on.
 */
static int mrct_stamp_change(struct mrct_ctx *ctx, struct mrct_stamp_run *run,
			     struct ib_mr *mr)
{
	struct mrct_stamp_writes *req = &run->req;
	u32 gen = atomic_read(&run->done);
	u32 from = atomic_read(&run->completed);
	u32 posted;
	int err;

	if (atomic_read(&run->posted) > from)
		req->busy_changes++;
	atomic_inc(&run->begun);
	/* Begun before M changes: see mrct_stamp_reap(). */
	smp_mb__after_atomic();
	if (req->flags & MRCT_STAMP_DEREG)
		err = mrct_stamp_dereg(ctx, req->mr, mr);
	else
		err = mrct_stamp_rereg(ctx, run, mr, req->addr[(gen + 1) % 2]);
	if (err)
		return err;
	/* M has changed before a write reads the new generation. */
	smp_mb__before_atomic();
	atomic_inc(&run->done);
	/* Pairs with the smp_mb() in mrct_stamp_fill(). */
	smp_mb__after_atomic();
	req->changes++;
	posted = atomic_read(&run->posted);
	run->target = min_t(u64, (u64)posted + req->clean, U32_MAX);
	return mrct_stamp_freeze(run, req->addr[gen % 2], from);
}

/* Nothing left to change M under: M is gone, or every write posted. */
static bool mrct_stamp_over(struct mrct_stamp_run *run)
{
	if (run->req.flags & MRCT_STAMP_DEREG && run->req.changes)
		return true;
	/* Acquire: the poster's counters and records are complete. */
	return smp_load_acquire(&run->finished) ||
	       atomic_read(&run->posted) >= run->req.count;
}

/*
 * Before each change, @clean writes posted since the last one complete:
 * the generation gets writes of its own, and the writes the last change
 * overlapped are done, so its frozen range can be compared.
 */
static int mrct_stamp_loop(struct mrct_ctx *ctx, struct mrct_stamp_run *run,
			   struct ib_mr *mr)
{
	int err;

	run->target = run->req.clean;
	for (;;) {
		err = mrct_stamp_wait(run, run->target);
		/* The last frozen range is compared once all is done. */
		if (err || mrct_stamp_over(run))
			return err;
		err = mrct_stamp_compare(run);
		if (!err)
			err = mrct_stamp_change(ctx, run, mr);
		if (err)
			return err;
	}
}

/*
 * The writes have all completed, or the loop failed: have the poster
 * stop then. It returns within its progress deadline either way.
 */
static int mrct_stamp_finish(struct mrct_stamp_run *run, int err)
{
	if (!err)
		err = mrct_stamp_wait(run, U32_MAX);
	if (err)
		WRITE_ONCE(run->stop, true);
	flush_work(&run->work);
	if (!err)
		err = run->err;
	if (!err)
		err = mrct_stamp_compare(run);
	return err;
}

static int mrct_stamp_locked(struct mrct_ctx *ctx, struct mrct_stamp_run *run)
{
	struct mrct_stamp_writes *req = &run->req;
	struct mrct_pair *pair;
	struct ib_mr *mr;
	int err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, req->pair);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	if (!ctx->is_vhca)
		return -EOPNOTSUPP;
	mr = xa_load(&ctx->mrs, req->mr);
	if (!mr)
		return -ENOENT;

	run->qp = pair->qp[req->qp];
	run->cq = pair->cq[req->qp];
	run->rkey = mr->rkey;
	run->first_id = pair->next_wr_id;
	pair->next_wr_id += req->count;
	atomic_set(&run->begun, req->gen);
	atomic_set(&run->done, req->gen);
	queue_work(system_unbound_wq, &run->work);

	err = mrct_stamp_finish(run, mrct_stamp_loop(ctx, run, mr));
	/* Writes may still be in flight after a failed poll or a timeout. */
	if (run->err)
		pair->wedged = true;
	req->gen = atomic_read(&run->done);
	req->posted = atomic_read(&run->posted);
	req->completed = atomic_read(&run->completed);
	return err;
}

static int mrct_stamp_check_req(const struct mrct_stamp_writes *req)
{
	int i;

	if (req->qp > 1 || req->flags & ~MRCT_STAMP_FLAGS ||
	    !req->count || req->count > MRCT_STAMP_MAX_WRITES ||
	    !req->depth || req->depth > MRCT_QP_DEPTH ||
	    !req->clean || req->clean > MRCT_STAMP_MAX_WRITES ||
	    !req->slot_size || req->slot_size % 8 ||
	    req->slot_size > MRCT_STAMP_MAX_SLOT ||
	    !req->length || req->length > MRCT_STAMP_MAX_LEN)
		return -EINVAL;
	/* Cannot overflow: a u32 sum of two u32 times 4096 fits in a u64. */
	if (((u64)req->first + req->count) * req->slot_size > req->length)
		return -EINVAL;
	/* uverbs' rule for a TRANS rereg. */
	for (i = 0; i < ARRAY_SIZE(req->addr); i++)
		if ((req->addr[i] & ~PAGE_MASK) != (req->iova & ~PAGE_MASK))
			return -EINVAL;
	return 0;
}

/* Allocate what the call needs besides @run; the records start unposted. */
static int mrct_stamp_alloc(struct mrct_stamp_run *run)
{
	u32 i;

	run->recs = kvmalloc_array(run->req.count, sizeof(*run->recs),
				   GFP_KERNEL);
	run->frozen = kvmalloc(run->req.length, GFP_KERNEL);
	run->bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!run->recs || !run->frozen || !run->bounce)
		return -ENOMEM;
	for (i = 0; i < run->req.count; i++)
		run->recs[i] = (struct mrct_stamp_rec) {
			.status = MRCT_WC_NONE,
		};
	return 0;
}

static void mrct_stamp_free(struct mrct_stamp_run *run)
{
	kfree(run->bounce);
	kvfree(run->frozen);
	kvfree(run->recs);
	kvfree(run);
}

/* The out fields start at zero; MRCT_WC_SUCCESS until a write fails. */
static void mrct_stamp_reset_out(struct mrct_stamp_writes *req)
{
	req->stale_bytes = 0;
	req->stale_offset = 0;
	req->changes = 0;
	req->busy_changes = 0;
	req->posted = 0;
	req->completed = 0;
	req->status = IB_WC_SUCCESS;
	req->post_err = 0;
	req->stale_gen = 0;
}

/**
 * mrct_stamp_writes - MRCT_STAMP_WRITES
 * @ctx: the file's context
 * @uarg: struct mrct_stamp_writes
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_stamp_writes(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_stamp_run *run;
	int err;

	BUILD_BUG_ON(sizeof(struct mrct_stamp_rec) != 16);
	BUILD_BUG_ON(sizeof(struct mrct_stamp_writes) != 136);
	BUILD_BUG_ON(MRCT_STAMP_MAX_SLOT > PAGE_SIZE);

	run = kvzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return -ENOMEM;
	if (copy_from_user(&run->req, uarg, sizeof(run->req))) {
		err = -EFAULT;
		goto out_free;
	}
	err = mrct_stamp_check_req(&run->req);
	if (err)
		goto out_free;
	mrct_stamp_reset_out(&run->req);
	err = mrct_stamp_alloc(run);
	if (err)
		goto out_free;
	init_waitqueue_head(&run->wq);
	INIT_WORK(&run->work, mrct_stamp_poster);

	mutex_lock(&ctx->lock);
	err = mrct_stamp_locked(ctx, run);
	mutex_unlock(&ctx->lock);

	if (!err && copy_to_user(u64_to_user_ptr(run->req.recs), run->recs,
				 (size_t)run->req.count * sizeof(*run->recs)))
		err = -EFAULT;
	if (!err && copy_to_user(uarg, &run->req, sizeof(run->req)))
		err = -EFAULT;
out_free:
	mrct_stamp_free(run);
	return err;
}

static int mrct_qp_wait_recv_locked(struct mrct_ctx *ctx,
				    struct mrct_qp_wait_recv *req)
{
	struct mrct_pair *pair;
	struct ib_wc wc;
	int err;

	lockdep_assert_held(&ctx->lock);
	pair = mrct_pair_get(ctx, req->handle);
	if (IS_ERR(pair))
		return PTR_ERR(pair);
	err = mrct_wait_wc(ctx, pair->cq[req->qp], 0, true, &wc);
	if (err)
		return err;
	req->status = wc.status;
	req->opcode = wc.opcode;
	req->byte_len = wc.byte_len;
	mrct_qp_states(pair, req->qp, req->status, req->qp_state);
	return 0;
}

/**
 * mrct_qp_wait_recv - MRCT_QP_WAIT_RECV
 * @ctx: the file's context
 * @uarg: struct mrct_qp_wait_recv
 *
 * Return: 0 or -errno, as the UAPI header says.
 */
int mrct_qp_wait_recv(struct mrct_ctx *ctx, void __user *uarg)
{
	struct mrct_qp_wait_recv req;

	BUILD_BUG_ON(sizeof(struct mrct_qp_wait_recv) != 32);

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.qp > 1 || req.reserved)
		return -EINVAL;
	return mrct_call_locked(ctx, mrct_qp_wait_recv_locked, &req, uarg);
}
