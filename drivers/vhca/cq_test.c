// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases of vhca's completion queues: where a CQ's completion
 * handler is called. A kernel post_send's run (vhca_engine_post()) may
 * not call a consumer back, so it owes the call and raises an interrupt
 * on its CPU as it ends, which makes it; any other poster calls it in
 * its own call (cq.c).
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/preempt.h>

#include "engine.h"
#include "vhca_loc.h"

/* A bound on the wait for the interrupt, not a verdict by the clock. */
#define CQT_WAIT_MS	60000
#define CQT_CQS		2
#define CQT_CQE		4	/* completions a CQ holds */

/**
 * struct cqt_cq - a CQ of a case and what its callbacks saw
 * @cq: the CQ, made by vhca_create_cq() as ib_core would
 * @calls: completion handler calls
 * @events: CQ event handler calls (IB_EVENT_CQ_ERR)
 * @hardirq: the last call of either ran in hard interrupt context
 * @called: completed by each handler call
 */
struct cqt_cq {
	struct vhca_cq cq;
	atomic_t calls;
	atomic_t events;
	bool hardirq;
	struct completion called;
};

struct cqt_ctx {
	struct ib_device ibdev;
	struct cqt_cq cqs[CQT_CQS];
	int made;
};

static void cqt_handler(struct ib_cq *ibcq, void *context)
{
	struct cqt_cq *c = context;

	c->hardirq = in_hardirq();
	atomic_inc(&c->calls);
	complete(&c->called);
}

static void cqt_event(struct ib_event *ev, void *context)
{
	struct cqt_cq *c = context;

	if (ev->event != IB_EVENT_CQ_ERR || ev->element.cq != &c->cq.ibcq)
		return;
	c->hardirq = in_hardirq();
	atomic_inc(&c->events);
}

static int cqt_init(struct kunit *test)
{
	struct ib_cq_init_attr attr = { .cqe = CQT_CQE };
	struct cqt_ctx *ctx;
	struct cqt_cq *c;
	int i;

	/* A run's interrupt takes cq->lock, a sleeping lock on RT. */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "vhca runs nothing in post_send on PREEMPT_RT");
	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->ibdev.num_comp_vectors = 1;
	test->priv = ctx;
	for (i = 0; i < CQT_CQS; i++) {
		c = &ctx->cqs[i];
		c->cq.ibcq.device = &ctx->ibdev;
		if (vhca_create_cq(&c->cq.ibcq, &attr, NULL))
			return -EINVAL;
		ctx->made++;
		c->cq.ibcq.comp_handler = cqt_handler;
		c->cq.ibcq.event_handler = cqt_event;
		c->cq.ibcq.cq_context = c;
		init_completion(&c->called);
		vhca_req_notify_cq(&c->cq.ibcq, IB_CQ_NEXT_COMP);
	}
	return 0;
}

/*
 * As a QP's destruction does, wait for any interrupt still owing the CQs
 * a call (a case that gave up waiting), then destroy them.
 */
static void cqt_exit(struct kunit *test)
{
	struct cqt_ctx *ctx = test->priv;
	int i;

	if (!ctx)
		return;
	if (ctx->made == CQT_CQS)
		vhca_cq_sync_owed(&ctx->cqs[0].cq.ibcq, &ctx->cqs[1].cq.ibcq);
	for (i = 0; i < ctx->made; i++)
		vhca_destroy_cq(&ctx->cqs[i].cq.ibcq, NULL);
}

/* Post one successful completion of @wr_id to @c's CQ. */
static int cqt_post(struct cqt_cq *c, u64 wr_id)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RDMA_WRITE,
	};

	return vhca_cq_post(&c->cq, &wc, false);
}

/* Wait for @c's handler; false if it never came. */
static bool cqt_wait(struct cqt_cq *c)
{
	return wait_for_completion_timeout(&c->called,
					   msecs_to_jiffies(CQT_WAIT_MS));
}

/**
 * vhca_cq_run_owes_handler() - a case of vhca_cq
 * @test: the case
 *
 * A completion queued inside a kernel post_send's run does not call the
 * handler there; the run's end raises the interrupt that calls it, in
 * hard interrupt context, once; the completion is there to poll.
 */
static void vhca_cq_run_owes_handler(struct kunit *test)
{
	struct cqt_ctx *ctx = test->priv;
	struct cqt_cq *c = &ctx->cqs[0];
	int in_run, err;
	struct ib_wc wc;

	vhca_engine_nosleep_begin();
	err = cqt_post(c, 7);
	in_run = atomic_read(&c->calls);
	vhca_engine_nosleep_end();

	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, in_run, 0);
	KUNIT_ASSERT_TRUE(test, cqt_wait(c));
	KUNIT_EXPECT_TRUE(test, c->hardirq);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&c->cq.ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
}

/**
 * vhca_cq_run_owes_each_cq() - a case of vhca_cq
 * @test: the case
 *
 * A run that completes to two CQs, one of them twice, owes each handler
 * one call (the CQ is disarmed by the first completion), and both are
 * made once the run has ended.
 */
static void vhca_cq_run_owes_each_cq(struct kunit *test)
{
	struct cqt_ctx *ctx = test->priv;
	int err[3], in_run = 0, i;

	/* No expectation inside the run: a failing one allocates. */
	vhca_engine_nosleep_begin();
	err[0] = cqt_post(&ctx->cqs[0], 1);
	err[1] = cqt_post(&ctx->cqs[1], 2);
	err[2] = cqt_post(&ctx->cqs[0], 3);
	for (i = 0; i < CQT_CQS; i++)
		in_run += atomic_read(&ctx->cqs[i].calls);
	vhca_engine_nosleep_end();

	for (i = 0; i < ARRAY_SIZE(err); i++)
		KUNIT_EXPECT_EQ(test, err[i], 0);
	KUNIT_EXPECT_EQ(test, in_run, 0);
	for (i = 0; i < CQT_CQS; i++) {
		KUNIT_ASSERT_TRUE(test, cqt_wait(&ctx->cqs[i]));
		KUNIT_EXPECT_TRUE(test, ctx->cqs[i].hardirq);
		KUNIT_EXPECT_EQ(test, atomic_read(&ctx->cqs[i].calls), 1);
	}
}

/**
 * vhca_cq_run_owes_overflow() - a case of vhca_cq
 * @test: the case
 *
 * A run that fills a CQ past its size owes it both the handler's call
 * (for the first completion) and IB_EVENT_CQ_ERR (for the lost one): the
 * CQ is owed once, with both, and the interrupt makes both; the
 * completions before the loss poll.
 */
static void vhca_cq_run_owes_overflow(struct kunit *test)
{
	struct cqt_ctx *ctx = test->priv;
	struct cqt_cq *c = &ctx->cqs[0];
	int err[CQT_CQE + 1], in_run, i;
	struct ib_wc wc[CQT_CQE + 1];

	vhca_engine_nosleep_begin();
	for (i = 0; i <= CQT_CQE; i++)
		err[i] = cqt_post(c, i);
	in_run = atomic_read(&c->calls) + atomic_read(&c->events);
	vhca_engine_nosleep_end();

	for (i = 0; i < CQT_CQE; i++)
		KUNIT_EXPECT_EQ(test, err[i], 0);
	KUNIT_EXPECT_EQ(test, err[CQT_CQE], -ENOSPC);
	KUNIT_EXPECT_EQ(test, in_run, 0);
	/* The event is made before the handler: the handler's wait covers it. */
	KUNIT_ASSERT_TRUE(test, cqt_wait(c));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->events), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	KUNIT_EXPECT_TRUE(test, c->hardirq);
	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&c->cq.ibcq, CQT_CQE + 1, wc),
			CQT_CQE);
}

/**
 * vhca_cq_poster_calls_handler() - a case of vhca_cq
 * @test: the case
 *
 * Outside a kernel post_send's run (the engine's worker, a user
 * doorbell), the poster calls the handler itself, before vhca_cq_post()
 * returns, in its own context.
 */
static void vhca_cq_poster_calls_handler(struct kunit *test)
{
	struct cqt_ctx *ctx = test->priv;
	struct cqt_cq *c = &ctx->cqs[0];

	c->hardirq = true;	/* the call must clear it */
	KUNIT_EXPECT_EQ(test, cqt_post(c, 9), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	KUNIT_EXPECT_FALSE(test, c->hardirq);
}

static struct kunit_case cq_test_cases[] = {
	KUNIT_CASE(vhca_cq_run_owes_handler),
	KUNIT_CASE(vhca_cq_run_owes_each_cq),
	KUNIT_CASE(vhca_cq_run_owes_overflow),
	KUNIT_CASE(vhca_cq_poster_calls_handler),
	{}
};

static struct kunit_suite cq_test_suite = {
	.name = "vhca_cq",
	.init = cqt_init,
	.exit = cqt_exit,
	.test_cases = cq_test_cases,
};

kunit_test_suites(&cq_test_suite);
