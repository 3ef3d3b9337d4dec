// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vhca's QP rules (qp_rules.h): what create_qp accepts and
 * grants, which modify_qp values and transitions pass, which send WRs
 * post_send queues and how it encodes them. Linked into vhca.ko and run
 * when it loads; no vhca device is needed.
 */
#include <kunit/test.h>
#include <linux/string.h>
#include <rdma/ib_mad.h>
#include <rdma/vhca.h>

#include "qp_rules.h"

/* --- create_qp: type, flags, CQs ------------------------------------- */

struct init_case {
	const char *desc;
	enum ib_qp_type type;
	u32 create_flags;
	bool xrcd;
	bool no_recv_cq;
	u32 port_num;
	int ret;
};

static const struct init_case init_cases[] = {
	{ "RC", IB_QPT_RC, 0, false, false, 0, 0 },
	{ "UD", IB_QPT_UD, 0, false, false, 0, 0 },
	{ "GSI on port 1", IB_QPT_GSI, 0, false, false, 1, 0 },
	{ "GSI on port 2", IB_QPT_GSI, 0, false, false, 2, -EINVAL },
	{ "SMI", IB_QPT_SMI, 0, false, false, 1, -EOPNOTSUPP },
	{ "UC", IB_QPT_UC, 0, false, false, 0, -EOPNOTSUPP },
	{ "XRC_INI", IB_QPT_XRC_INI, 0, false, false, 0, -EOPNOTSUPP },
	{ "RAW_PACKET", IB_QPT_RAW_PACKET, 0, false, false, 0, -EOPNOTSUPP },
	{ "INTEGRITY_EN", IB_QPT_RC, IB_QP_CREATE_INTEGRITY_EN, false, false,
	  0, -EOPNOTSUPP },
	{ "BLOCK_MULTICAST_LOOPBACK", IB_QPT_UD,
	  IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK, false, false, 0, -EOPNOTSUPP },
	{ "RC with an XRC domain", IB_QPT_RC, 0, true, false, 0, -EOPNOTSUPP },
	{ "no receive CQ", IB_QPT_RC, 0, false, true, 0, -EINVAL },
};

static void init_desc(const struct init_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(init, init_cases, init_desc);

static void vhca_qp_check_init_table(struct kunit *test)
{
	const struct init_case *c = test->param_value;
	struct ib_qp_init_attr init = {
		.qp_type = c->type,
		.create_flags = c->create_flags,
		.port_num = c->port_num,
	};
	struct ib_cq *cq;

	/* The checks look at the pointers only. */
	cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	init.send_cq = cq;
	init.recv_cq = c->no_recv_cq ? NULL : cq;
	if (c->xrcd) {
		init.xrcd = kunit_kzalloc(test, sizeof(*init.xrcd), GFP_KERNEL);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, init.xrcd);
	}

	KUNIT_EXPECT_EQ(test, vhca_qp_check_init(&init), c->ret);
}

/* --- create_qp: capacities ------------------------------------------- */

struct caps_case {
	const char *desc;
	struct ib_qp_cap in;
	bool has_srq;
	int ret;
	struct ib_qp_cap out;	/* when ret == 0 */
};

#define SGE_B	((u32)sizeof(struct ib_sge))

static const struct caps_case caps_cases[] = {
	{ "nvme-rdma like", { 128, 129, 3, 1, 0 }, false, 0,
	  { 128, 129, 3, 1, 3 * SGE_B } },
	{ "zero WRs grant one", { 0, 0, 0, 0, 0 }, false, 0,
	  { 1, 1, 0, 0, 0 } },
	{ "inline larger than the SGEs", { 16, 16, 1, 1, 100 }, false, 0,
	  { 16, 16, 1, 1, ALIGN(100, SGE_B) } },
	{ "every limit", { VHCA_MAX_QP_WR, VHCA_MAX_QP_WR, VHCA_MAX_SGE,
	  VHCA_MAX_SGE, VHCA_MAX_INLINE }, false, 0,
	  { VHCA_MAX_QP_WR, VHCA_MAX_QP_WR, VHCA_MAX_SGE, VHCA_MAX_SGE,
	    VHCA_MAX_INLINE } },
	{ "SRQ: receive caps ignored", { 8, 1000000, 2, 1000, 0 }, true, 0,
	  { 8, 0, 2, 0, 2 * SGE_B } },
	{ "max_send_wr too big", { VHCA_MAX_QP_WR + 1, 1, 1, 1, 0 }, false,
	  -EINVAL },
	{ "max_recv_wr too big", { 1, VHCA_MAX_QP_WR + 1, 1, 1, 0 }, false,
	  -EINVAL },
	{ "max_send_sge too big", { 1, 1, VHCA_MAX_SGE + 1, 1, 0 }, false,
	  -EINVAL },
	{ "max_recv_sge too big", { 1, 1, 1, VHCA_MAX_SGE + 1, 0 }, false,
	  -EINVAL },
	{ "max_inline_data too big", { 1, 1, 1, 1, VHCA_MAX_INLINE + 1 },
	  false, -EINVAL },
	{ "max_send_wr too big with an SRQ", { U32_MAX, 1, 1, 1, 0 }, true,
	  -EINVAL },
};

static void caps_desc(const struct caps_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(caps, caps_cases, caps_desc);

static void vhca_qp_caps_table(struct kunit *test)
{
	const struct caps_case *c = test->param_value;
	struct ib_qp_cap cap = c->in;

	KUNIT_ASSERT_EQ(test, vhca_qp_caps(&cap, c->has_srq), c->ret);
	if (c->ret)
		return;

	/* After: the caps granted, never less than asked for. */
	KUNIT_EXPECT_EQ(test, cap.max_send_wr, c->out.max_send_wr);
	KUNIT_EXPECT_EQ(test, cap.max_recv_wr, c->out.max_recv_wr);
	KUNIT_EXPECT_EQ(test, cap.max_send_sge, c->out.max_send_sge);
	KUNIT_EXPECT_EQ(test, cap.max_recv_sge, c->out.max_recv_sge);
	KUNIT_EXPECT_EQ(test, cap.max_inline_data, c->out.max_inline_data);
	KUNIT_EXPECT_GE(test, cap.max_inline_data, c->in.max_inline_data);
}

/* A slot holds the header, then the larger of the SGEs and inline data. */
static void vhca_sq_stride_sizes(struct kunit *test)
{
	const u32 hdr = sizeof(struct vhca_send_wqe);

	KUNIT_EXPECT_EQ(test, vhca_sq_stride(0, 0), hdr);
	KUNIT_EXPECT_EQ(test, vhca_sq_stride(4, 0), hdr + 4 * SGE_B);
	KUNIT_EXPECT_EQ(test, vhca_sq_stride(1, 64), hdr + 64);
	KUNIT_EXPECT_EQ(test, vhca_sq_stride(1, 65), hdr + 80);
	KUNIT_EXPECT_EQ(test, vhca_sq_stride(VHCA_MAX_SGE, VHCA_MAX_INLINE),
			hdr + max_t(u32, VHCA_MAX_SGE * SGE_B,
				    VHCA_MAX_INLINE));
	/* Every slot stays 8-byte aligned for the u64 fields. */
	KUNIT_EXPECT_EQ(test, vhca_sq_stride(3, 13) % 8, 0U);
}

/* Free-running indices wrap onto the ring. */
static void vhca_sq_slot_wraps(struct kunit *test)
{
	struct vhca_sq sq = {
		.wqe = (void *)0x10000,
		.stride = 128,
		.size = 8,
	};

	KUNIT_EXPECT_PTR_EQ(test, (void *)vhca_sq_slot(&sq, 0), sq.wqe);
	KUNIT_EXPECT_PTR_EQ(test, (void *)vhca_sq_slot(&sq, 9),
			    sq.wqe + 128);
	KUNIT_EXPECT_PTR_EQ(test, (void *)vhca_sq_slot(&sq, U32_MAX),
			    sq.wqe + 7 * 128);
}

/* --- modify_qp: values ----------------------------------------------- */

struct attr_case {
	const char *desc;
	enum ib_qp_type type;
	int mask;
	struct ib_qp_attr attr;
	int ret;
};

static const struct attr_case attr_cases[] = {
	{ "nothing given", IB_QPT_RC, 0, { }, 0 },
	{ "pkey_index 0", IB_QPT_RC, IB_QP_PKEY_INDEX, { .pkey_index = 0 }, 0 },
	{ "pkey_index past the table", IB_QPT_RC, IB_QP_PKEY_INDEX,
	  { .pkey_index = VHCA_PKEY_TBL_LEN }, -EINVAL },
	{ "port 1", IB_QPT_UD, IB_QP_PORT, { .port_num = 1 }, 0 },
	{ "port 0", IB_QPT_UD, IB_QP_PORT, { .port_num = 0 }, -EINVAL },
	{ "port 2", IB_QPT_UD, IB_QP_PORT, { .port_num = 2 }, -EINVAL },
	{ "every remote right", IB_QPT_RC, IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = VHCA_QP_ACCESS_SUPPORTED }, 0 },
	{ "MW_BIND right", IB_QPT_RC, IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ACCESS_MW_BIND }, -EINVAL },
	{ "path_mtu 4096", IB_QPT_RC, IB_QP_PATH_MTU,
	  { .path_mtu = IB_MTU_4096 }, 0 },
	{ "path_mtu 256", IB_QPT_RC, IB_QP_PATH_MTU,
	  { .path_mtu = IB_MTU_256 }, 0 },
	{ "path_mtu 0", IB_QPT_RC, IB_QP_PATH_MTU, { .path_mtu = 0 },
	  -EINVAL },
	{ "path_mtu past 4096", IB_QPT_RC, IB_QP_PATH_MTU,
	  { .path_mtu = IB_MTU_4096 + 1 }, -EINVAL },
	{ "max_rd_atomic at the limit", IB_QPT_RC, IB_QP_MAX_QP_RD_ATOMIC,
	  { .max_rd_atomic = VHCA_MAX_RD_ATOM }, 0 },
	{ "max_rd_atomic past it", IB_QPT_RC, IB_QP_MAX_QP_RD_ATOMIC,
	  { .max_rd_atomic = VHCA_MAX_RD_ATOM + 1 }, -EINVAL },
	{ "max_dest_rd_atomic past the limit", IB_QPT_RC,
	  IB_QP_MAX_DEST_RD_ATOMIC,
	  { .max_dest_rd_atomic = VHCA_MAX_RD_ATOM + 1 }, -EINVAL },
	{ "timeout 31", IB_QPT_RC, IB_QP_TIMEOUT, { .timeout = 31 }, 0 },
	{ "timeout 32", IB_QPT_RC, IB_QP_TIMEOUT, { .timeout = 32 }, -EINVAL },
	{ "retry_cnt 7", IB_QPT_RC, IB_QP_RETRY_CNT, { .retry_cnt = 7 }, 0 },
	{ "retry_cnt 8", IB_QPT_RC, IB_QP_RETRY_CNT, { .retry_cnt = 8 },
	  -EINVAL },
	{ "rnr_retry 8", IB_QPT_RC, IB_QP_RNR_RETRY, { .rnr_retry = 8 },
	  -EINVAL },
	{ "min_rnr_timer 32", IB_QPT_RC, IB_QP_MIN_RNR_TIMER,
	  { .min_rnr_timer = 32 }, -EINVAL },
	{ "dest_qp_num 24 bits", IB_QPT_RC, IB_QP_DEST_QPN,
	  { .dest_qp_num = 0xffffff }, 0 },
	{ "dest_qp_num 25 bits", IB_QPT_RC, IB_QP_DEST_QPN,
	  { .dest_qp_num = 0x1000000 }, -EINVAL },
	{ "AV with a GRH", IB_QPT_RC, IB_QP_AV,
	  { .ah_attr = { .ah_flags = IB_AH_GRH } }, 0 },
	{ "AV without a GRH", IB_QPT_RC, IB_QP_AV, { }, -EINVAL },
	{ "alternate path", IB_QPT_RC, IB_QP_ALT_PATH,
	  { .alt_ah_attr = { .ah_flags = IB_AH_GRH } }, -EOPNOTSUPP },
	{ "path_mig_state ARMED", IB_QPT_RC, IB_QP_PATH_MIG_STATE,
	  { .path_mig_state = IB_MIG_ARMED }, 0 },
	{ "out-of-range value not in the mask", IB_QPT_RC, IB_QP_QKEY,
	  { .timeout = 200, .retry_cnt = 200 }, 0 },
};

static void attr_desc(const struct attr_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(attr, attr_cases, attr_desc);

static void vhca_qp_check_attr_table(struct kunit *test)
{
	const struct attr_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, vhca_qp_check_attr(&c->attr, c->mask,
						     c->type),
			    c->ret, "mask %#x", c->mask);
}

/* --- modify_qp: transitions ------------------------------------------ */

#define RC_INIT_MASK	(IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |	\
			 IB_QP_ACCESS_FLAGS)
#define RC_RTR_MASK	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |	\
			 IB_QP_DEST_QPN | IB_QP_RQ_PSN |		\
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)
#define RC_RTS_MASK	(IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |	\
			 IB_QP_RNR_RETRY | IB_QP_SQ_PSN |		\
			 IB_QP_MAX_QP_RD_ATOMIC)

struct state_case {
	const char *desc;
	enum ib_qp_type type;
	enum ib_qp_state cur;
	int mask;
	enum ib_qp_state qp_state;
	enum ib_qp_state cur_qp_state;
	int ret;
	enum ib_qp_state next;	/* when ret == 0 */
};

static const struct state_case state_cases[] = {
	{ "RC RESET->INIT", IB_QPT_RC, IB_QPS_RESET, RC_INIT_MASK,
	  IB_QPS_INIT, 0, 0, IB_QPS_INIT },
	{ "RC RESET->INIT without access flags", IB_QPT_RC, IB_QPS_RESET,
	  RC_INIT_MASK & ~IB_QP_ACCESS_FLAGS, IB_QPS_INIT, 0, -EINVAL },
	{ "RC INIT->RTR", IB_QPT_RC, IB_QPS_INIT, RC_RTR_MASK, IB_QPS_RTR, 0,
	  0, IB_QPS_RTR },
	{ "RC INIT->RTR without an AV", IB_QPT_RC, IB_QPS_INIT,
	  RC_RTR_MASK & ~IB_QP_AV, IB_QPS_RTR, 0, -EINVAL },
	{ "RC RTR->RTS", IB_QPT_RC, IB_QPS_RTR, RC_RTS_MASK, IB_QPS_RTS, 0, 0,
	  IB_QPS_RTS },
	{ "RC RTR->RTS with a QKEY", IB_QPT_RC, IB_QPS_RTR,
	  RC_RTS_MASK | IB_QP_QKEY, IB_QPS_RTS, 0, -EINVAL },
	{ "RC INIT->RTS skips RTR", IB_QPT_RC, IB_QPS_INIT, RC_RTS_MASK,
	  IB_QPS_RTS, 0, -EINVAL },
	{ "UD RESET->INIT", IB_QPT_UD, IB_QPS_RESET,
	  IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY,
	  IB_QPS_INIT, 0, 0, IB_QPS_INIT },
	{ "UD RESET->INIT without a QKEY", IB_QPT_UD, IB_QPS_RESET,
	  IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT, IB_QPS_INIT, 0,
	  -EINVAL },
	{ "GSI RESET->INIT as ib_mad does", IB_QPT_GSI, IB_QPS_RESET,
	  IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_QKEY, IB_QPS_INIT, 0, 0,
	  IB_QPS_INIT },
	{ "GSI INIT->RTR", IB_QPT_GSI, IB_QPS_INIT, IB_QP_STATE, IB_QPS_RTR,
	  0, 0, IB_QPS_RTR },
	{ "GSI RTR->RTS", IB_QPT_GSI, IB_QPS_RTR, IB_QP_STATE | IB_QP_SQ_PSN,
	  IB_QPS_RTS, 0, 0, IB_QPS_RTS },
	{ "RTS->SQD with notification", IB_QPT_RC, IB_QPS_RTS,
	  IB_QP_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY, IB_QPS_SQD, 0, 0,
	  IB_QPS_SQD },
	{ "SQD->RTS", IB_QPT_RC, IB_QPS_SQD, IB_QP_STATE, IB_QPS_RTS, 0, 0,
	  IB_QPS_RTS },
	{ "RTS->ERR", IB_QPT_RC, IB_QPS_RTS, IB_QP_STATE, IB_QPS_ERR, 0, 0,
	  IB_QPS_ERR },
	{ "INIT->ERR", IB_QPT_UD, IB_QPS_INIT, IB_QP_STATE, IB_QPS_ERR, 0, 0,
	  IB_QPS_ERR },
	{ "ERR->RESET", IB_QPT_RC, IB_QPS_ERR, IB_QP_STATE, IB_QPS_RESET, 0,
	  0, IB_QPS_RESET },
	{ "ERR->ERR", IB_QPT_RC, IB_QPS_ERR, IB_QP_STATE, IB_QPS_ERR, 0, 0,
	  IB_QPS_ERR },
	{ "RESET->ERR", IB_QPT_RC, IB_QPS_RESET, IB_QP_STATE, IB_QPS_ERR, 0,
	  -EINVAL },
	{ "ERR->RTS", IB_QPT_RC, IB_QPS_ERR, IB_QP_STATE, IB_QPS_RTS, 0,
	  -EINVAL },
	{ "RTS attributes only", IB_QPT_RC, IB_QPS_RTS, IB_QP_MIN_RNR_TIMER,
	  0, 0, 0, IB_QPS_RTS },
	{ "RTR attributes only", IB_QPT_RC, IB_QPS_RTR, IB_QP_MIN_RNR_TIMER,
	  0, 0, -EINVAL },
	{ "matching CUR_STATE", IB_QPT_RC, IB_QPS_RTS,
	  IB_QP_STATE | IB_QP_CUR_STATE, IB_QPS_RTS, IB_QPS_RTS, 0,
	  IB_QPS_RTS },
	{ "CUR_STATE not the state", IB_QPT_RC, IB_QPS_RTS,
	  IB_QP_STATE | IB_QP_CUR_STATE, IB_QPS_RTS, IB_QPS_SQD, -EINVAL },
	{ "unknown state", IB_QPT_RC, IB_QPS_RTS, IB_QP_STATE,
	  IB_QPS_ERR + 1, 0, -EINVAL },
};

static void state_desc(const struct state_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(state, state_cases, state_desc);

static void vhca_qp_next_state_table(struct kunit *test)
{
	const struct state_case *c = test->param_value;
	struct ib_qp_attr attr = {
		.qp_state = c->qp_state,
		.cur_qp_state = c->cur_qp_state,
	};
	enum ib_qp_state next = IB_QPS_SQE;	/* never a case's answer */
	int ret;

	ret = vhca_qp_next_state(c->cur, &attr, c->mask, c->type, &next);
	KUNIT_EXPECT_EQ_MSG(test, ret, c->ret, "%d -> %d mask %#x", c->cur,
			    c->qp_state, c->mask);
	if (!c->ret)
		KUNIT_EXPECT_EQ(test, next, c->next);
}

/* --- post_send: validation ------------------------------------------- */

/* Every kind of WR begins with struct ib_send_wr. */
union any_wr {
	struct ib_send_wr wr;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
	struct ib_ud_wr ud;
	struct ib_reg_wr reg;
	struct vhca_bind_mw_wr bind;
};

#define TEST_MAX_WR	4
#define TEST_MAX_SGE	2
#define TEST_MAX_INLINE	64

struct wr_case {
	const char *desc;
	enum ib_qp_type type;
	enum ib_wr_opcode opcode;
	int send_flags;
	int num_sge;
	u32 len;		/* of each SGE */
	u64 remote_addr;
	bool no_ah;		/* UD/GSI: leave ud.ah NULL */
	bool no_mr;		/* REG_MR: leave reg.mr NULL */
	int ret;
};

static const struct wr_case wr_cases[] = {
	{ "RC SEND", IB_QPT_RC, IB_WR_SEND, 0, 2, 4096, 0, false, false, 0 },
	{ "RC SEND, no SGE", IB_QPT_RC, IB_WR_SEND, 0, 0, 0, 0, false, false,
	  0 },
	{ "RC SEND, too many SGEs", IB_QPT_RC, IB_WR_SEND, 0, 3, 8, 0, false,
	  false, -EINVAL },
	{ "RC SEND, negative SGE count", IB_QPT_RC, IB_WR_SEND, 0, -1, 8, 0,
	  false, false, -EINVAL },
	{ "RC SEND_WITH_INV", IB_QPT_RC, IB_WR_SEND_WITH_INV, 0, 1, 8, 0,
	  false, false, 0 },
	{ "RC WRITE_WITH_IMM", IB_QPT_RC, IB_WR_RDMA_WRITE_WITH_IMM, 0, 1, 8,
	  0, false, false, 0 },
	{ "RC READ", IB_QPT_RC, IB_WR_RDMA_READ, 0, 2, 8, 0, false, false, 0 },
	{ "RC READ inline", IB_QPT_RC, IB_WR_RDMA_READ, IB_SEND_INLINE, 1, 8,
	  0, false, false, -EINVAL },
	{ "RC WRITE inline, fits", IB_QPT_RC, IB_WR_RDMA_WRITE, IB_SEND_INLINE,
	  2, TEST_MAX_INLINE / 2, 0, false, false, 0 },
	{ "RC WRITE inline, one byte over", IB_QPT_RC, IB_WR_RDMA_WRITE,
	  IB_SEND_INLINE, 1, TEST_MAX_INLINE + 1, 0, false, false, -EINVAL },
	{ "RC SEND inline, lengths overflow u32", IB_QPT_RC, IB_WR_SEND,
	  IB_SEND_INLINE, 2, 0x80000000, 0, false, false, -EINVAL },
	{ "RC CMP_AND_SWP", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP, 0, 1, 8,
	  0x1000, false, false, 0 },
	{ "RC FETCH_AND_ADD", IB_QPT_RC, IB_WR_ATOMIC_FETCH_AND_ADD, 0, 1, 8,
	  0x1008, false, false, 0 },
	/* The responder refuses it, with a completion (resp.c). */
	{ "RC atomic, misaligned remote address", IB_QPT_RC,
	  IB_WR_ATOMIC_FETCH_AND_ADD, 0, 1, 8, 0x1004, false, false, 0 },
	{ "RC atomic, 4-byte SGE", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP, 0, 1,
	  4, 0x1000, false, false, -EINVAL },
	{ "RC atomic, two SGEs", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP, 0, 2, 8,
	  0x1000, false, false, -EINVAL },
	{ "RC atomic, no SGE", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP, 0, 0, 0,
	  0x1000, false, false, -EINVAL },
	{ "RC atomic inline", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP,
	  IB_SEND_INLINE, 1, 8, 0x1000, false, false, -EINVAL },
	{ "RC LOCAL_INV", IB_QPT_RC, IB_WR_LOCAL_INV, 0, 0, 0, 0, false,
	  false, 0 },
	{ "RC REG_MR", IB_QPT_RC, IB_WR_REG_MR, 0, 0, 0, 0, false, false, 0 },
	{ "RC REG_MR without an MR", IB_QPT_RC, IB_WR_REG_MR, 0, 0, 0, 0,
	  false, true, -EINVAL },
	{ "RC BIND_MW", IB_QPT_RC, IB_WR_BIND_MW, 0, 0, 0, 0, false, false,
	  0 },
	{ "RC LSO", IB_QPT_RC, IB_WR_LSO, 0, 1, 8, 0, false, false, -EINVAL },
	{ "RC READ_WITH_INV", IB_QPT_RC, IB_WR_RDMA_READ_WITH_INV, 0, 1, 8, 0,
	  false, false, -EINVAL },
	{ "RC REG_MR_INTEGRITY", IB_QPT_RC, IB_WR_REG_MR_INTEGRITY, 0, 0, 0, 0,
	  false, false, -EINVAL },
	{ "RC reserved opcode", IB_QPT_RC, IB_WR_RESERVED1, 0, 0, 0, 0, false,
	  false, -EINVAL },
	{ "UD SEND", IB_QPT_UD, IB_WR_SEND, 0, 1, 256, 0, false, false, 0 },
	{ "UD SEND_WITH_IMM inline", IB_QPT_UD, IB_WR_SEND_WITH_IMM,
	  IB_SEND_INLINE, 1, 16, 0, false, false, 0 },
	{ "UD SEND without an AH", IB_QPT_UD, IB_WR_SEND, 0, 1, 8, 0, true,
	  false, -EINVAL },
	{ "UD WRITE", IB_QPT_UD, IB_WR_RDMA_WRITE, 0, 1, 8, 0, false, false,
	  -EINVAL },
	{ "UD READ", IB_QPT_UD, IB_WR_RDMA_READ, 0, 1, 8, 0, false, false,
	  -EINVAL },
	{ "UD SEND_WITH_INV", IB_QPT_UD, IB_WR_SEND_WITH_INV, 0, 1, 8, 0,
	  false, false, -EINVAL },
	{ "UD LOCAL_INV", IB_QPT_UD, IB_WR_LOCAL_INV, 0, 0, 0, 0, false, false,
	  -EINVAL },
	{ "UD BIND_MW", IB_QPT_UD, IB_WR_BIND_MW, 0, 0, 0, 0, false, false,
	  -EINVAL },
	{ "GSI SEND", IB_QPT_GSI, IB_WR_SEND, 0, 2, 256, 0, false, false, 0 },
	{ "GSI atomic", IB_QPT_GSI, IB_WR_ATOMIC_FETCH_AND_ADD, 0, 1, 8, 0,
	  false, false, -EINVAL },
	{ "UC SEND (no UC QPs)", IB_QPT_UC, IB_WR_SEND, 0, 1, 8, 0, false,
	  false, -EINVAL },
};

static void wr_desc(const struct wr_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(wr, wr_cases, wr_desc);

static const struct vhca_sq test_sq = {
	.max_wr = TEST_MAX_WR,
	.max_sge = TEST_MAX_SGE,
	.max_inline = TEST_MAX_INLINE,
	.size = TEST_MAX_WR,
};

static void vhca_send_wr_check_table(struct kunit *test)
{
	const struct wr_case *c = test->param_value;
	struct ib_sge sge[TEST_MAX_SGE + 1] = { };
	struct vhca_ah *ah;
	union any_wr w = { };
	struct ib_mr mr;
	int i;

	ah = kunit_kzalloc(test, sizeof(*ah), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah);
	for (i = 0; i < ARRAY_SIZE(sge); i++)
		sge[i].length = c->len;

	w.wr.opcode = c->opcode;
	w.wr.send_flags = c->send_flags;
	w.wr.num_sge = c->num_sge;
	w.wr.sg_list = sge;
	if (c->type == IB_QPT_RC) {
		if (c->opcode == IB_WR_REG_MR)
			w.reg.mr = c->no_mr ? NULL : &mr;
		else
			w.atomic.remote_addr = c->remote_addr;
	} else {
		w.ud.ah = c->no_ah ? NULL : &ah->ibah;
	}

	KUNIT_EXPECT_EQ(test, vhca_send_wr_check(&test_sq, c->type, &w.wr),
			c->ret);
}

/* The queue holds max_wr WRs: the next is -ENOMEM, across index wrap. */
static void vhca_send_wr_check_queue_full(struct kunit *test)
{
	struct vhca_sq sq = test_sq;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };

	/* Before: max_wr - 1 queued, with head wrapped past 0. */
	sq.tail = U32_MAX - 1;
	sq.head = sq.tail + TEST_MAX_WR - 1;
	KUNIT_EXPECT_EQ(test, vhca_send_wr_check(&sq, IB_QPT_RC, &wr), 0);

	/* After one more: full. */
	sq.head++;
	KUNIT_EXPECT_EQ(test, vhca_send_wr_check(&sq, IB_QPT_RC, &wr),
			-ENOMEM);

	/* A bad WR on a full queue is still a bad WR. */
	wr.opcode = IB_WR_LSO;
	KUNIT_EXPECT_EQ(test, vhca_send_wr_check(&sq, IB_QPT_RC, &wr),
			-EINVAL);
}

/* --- post_send: encoding --------------------------------------------- */

struct build_ctx {
	struct vhca_send_wqe *wqe;
	struct vhca_ah *ah;
};

static int build_test_init(struct kunit *test)
{
	struct build_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->wqe = kunit_kzalloc(test, vhca_sq_stride(VHCA_MAX_SGE,
						      VHCA_MAX_INLINE),
				 GFP_KERNEL);
	ctx->ah = kunit_kzalloc(test, sizeof(*ctx->ah), GFP_KERNEL);
	if (!ctx->wqe || !ctx->ah)
		return -ENOMEM;

	/* A slot a previous WQE left dirty. */
	memset(ctx->wqe, 0xa5, vhca_sq_stride(VHCA_MAX_SGE, VHCA_MAX_INLINE));
	ctx->ah->attr.ah_flags = IB_AH_GRH;
	ctx->ah->attr.grh.dgid.raw[10] = 0xff;
	ctx->ah->attr.grh.dgid.raw[11] = 0xff;
	ctx->ah->attr.grh.dgid.raw[15] = 7;
	ctx->ah->attr.grh.sgid_index = 3;
	test->priv = ctx;
	return 0;
}

static bool assert_sges(struct kunit *test, const struct vhca_send_wqe *wqe,
			const struct ib_sge *sge, int n)
{
	int i;

	KUNIT_EXPECT_EQ(test, wqe->num_sge, (u32)n);
	KUNIT_EXPECT_EQ(test, wqe->inline_len, 0U);
	for (i = 0; i < n; i++) {
		if (wqe->sge[i].addr != sge[i].addr ||
		    wqe->sge[i].length != sge[i].length ||
		    wqe->sge[i].lkey != sge[i].lkey) {
			KUNIT_FAIL(test,
				   "sge %d: %llx/%u/%x, want %llx/%u/%x", i,
				   wqe->sge[i].addr, wqe->sge[i].length,
				   wqe->sge[i].lkey, sge[i].addr,
				   sge[i].length, sge[i].lkey);
			return false;
		}
	}
	return true;
}

static void vhca_send_wqe_build_rdma_write_imm(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	struct ib_sge sge[2] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x101 },
		{ .addr = 0x8000, .length = 4096, .lkey = 0x202 },
	};
	struct ib_rdma_wr w = {
		.wr = {
			.wr_id = 42,
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE,
			.sg_list = sge,
			.num_sge = 2,
			.ex.imm_data = cpu_to_be32(0xdeadbeef),
		},
		.remote_addr = 0x7f0000001000ULL,
		.rkey = 0xabcd01,
	};
	struct vhca_send_wqe *wqe = ctx->wqe;

	vhca_send_wqe_build(wqe, IB_QPT_RC, 0, &w.wr);

	KUNIT_EXPECT_EQ(test, wqe->wr_id, 42ULL);
	KUNIT_EXPECT_EQ(test, wqe->opcode, (u32)IB_WR_RDMA_WRITE_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wqe->send_flags,
			(u32)(IB_SEND_SIGNALED | IB_SEND_FENCE));
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wqe->ex.imm_data), 0xdeadbeefU);
	KUNIT_EXPECT_EQ(test, wqe->rdma.remote_addr, 0x7f0000001000ULL);
	KUNIT_EXPECT_EQ(test, wqe->rdma.rkey, 0xabcd01U);
	assert_sges(test, wqe, sge, 2);
}

static void vhca_send_wqe_build_rdma_read(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	struct ib_sge sge = { .addr = 0x2000, .length = 512, .lkey = 7 };
	struct ib_rdma_wr w = {
		.wr = {
			.wr_id = 1,
			.opcode = IB_WR_RDMA_READ,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = 0x3000,
		.rkey = 0x99,
	};

	vhca_send_wqe_build(ctx->wqe, IB_QPT_RC, 0, &w.wr);

	KUNIT_EXPECT_EQ(test, ctx->wqe->rdma.remote_addr, 0x3000ULL);
	KUNIT_EXPECT_EQ(test, ctx->wqe->rdma.rkey, 0x99U);
	/* No immediate: the dirty slot's bytes are gone. */
	KUNIT_EXPECT_EQ(test, ctx->wqe->ex.invalidate_rkey, 0U);
	assert_sges(test, ctx->wqe, &sge, 1);
}

static void vhca_send_wqe_build_atomic(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	struct ib_sge sge = { .addr = 0x4000, .length = 8, .lkey = 5 };
	struct ib_atomic_wr w = {
		.wr = {
			.wr_id = 9,
			.opcode = IB_WR_ATOMIC_CMP_AND_SWP,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = 0x5008,
		.compare_add = 0x1111222233334444ULL,
		.swap = 0x5555666677778888ULL,
		.rkey = 0x77,
	};

	vhca_send_wqe_build(ctx->wqe, IB_QPT_RC, 0, &w.wr);

	KUNIT_EXPECT_EQ(test, ctx->wqe->atomic.remote_addr, 0x5008ULL);
	KUNIT_EXPECT_EQ(test, ctx->wqe->atomic.compare_add,
			0x1111222233334444ULL);
	KUNIT_EXPECT_EQ(test, ctx->wqe->atomic.swap, 0x5555666677778888ULL);
	KUNIT_EXPECT_EQ(test, ctx->wqe->atomic.rkey, 0x77U);
	assert_sges(test, ctx->wqe, &sge, 1);
}

static void vhca_send_wqe_build_send_inv(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_INV,
		.ex.invalidate_rkey = 0x123456,
	};

	vhca_send_wqe_build(ctx->wqe, IB_QPT_RC, 0, &wr);

	KUNIT_EXPECT_EQ(test, ctx->wqe->ex.invalidate_rkey, 0x123456U);
	KUNIT_EXPECT_EQ(test, ctx->wqe->num_sge, 0U);
}

static void vhca_send_wqe_build_local_inv(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	struct ib_sge sge = { .addr = 1, .length = 1 };
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = 0xfeed00,
		/* Not a data WR: an SGE given anyway is not copied. */
		.sg_list = &sge,
		.num_sge = 1,
	};

	vhca_send_wqe_build(ctx->wqe, IB_QPT_RC, 0, &wr);

	KUNIT_EXPECT_EQ(test, ctx->wqe->opcode, (u32)IB_WR_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, ctx->wqe->ex.invalidate_rkey, 0xfeed00U);
	KUNIT_EXPECT_EQ(test, ctx->wqe->num_sge, 0U);
}

static void vhca_send_wqe_build_reg_mr(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	struct ib_mr mr = { };
	struct ib_reg_wr w = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 3 },
		.mr = &mr,
		.key = 0x4242,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
	};

	vhca_send_wqe_build(ctx->wqe, IB_QPT_RC, 0, &w.wr);

	KUNIT_EXPECT_PTR_EQ(test, ctx->wqe->reg.mr, &mr);
	KUNIT_EXPECT_EQ(test, ctx->wqe->reg.key, 0x4242U);
	KUNIT_EXPECT_EQ(test, ctx->wqe->reg.access,
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, ctx->wqe->num_sge, 0U);
}

/* A Bind MW copies the window, the MR, the range and the rights. */
static void vhca_send_wqe_build_bind_mw(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	struct ib_sge sge = { .addr = 1, .length = 1 };
	struct vhca_bind_mw_wr w = {
		.wr = {
			.opcode = IB_WR_BIND_MW,
			.wr_id = 9,
			/* Not a data WR: an SGE given anyway is not copied. */
			.sg_list = &sge,
			.num_sge = 1,
		},
		.mw_rkey = 0x1207,
		.mr_lkey = 0x3401,
		.addr = 0x10000123,
		.length = 0x2000,
		.access = IB_ACCESS_REMOTE_READ | IB_ZERO_BASED,
	};

	vhca_send_wqe_build(ctx->wqe, IB_QPT_RC, 0, &w.wr);

	KUNIT_EXPECT_EQ(test, ctx->wqe->opcode, (u32)IB_WR_BIND_MW);
	KUNIT_EXPECT_EQ(test, ctx->wqe->wr_id, 9ULL);
	KUNIT_EXPECT_EQ(test, ctx->wqe->bind.mw_rkey, 0x1207U);
	KUNIT_EXPECT_EQ(test, ctx->wqe->bind.mr_lkey, 0x3401U);
	KUNIT_EXPECT_EQ(test, ctx->wqe->bind.addr, 0x10000123ULL);
	KUNIT_EXPECT_EQ(test, ctx->wqe->bind.length, 0x2000ULL);
	KUNIT_EXPECT_EQ(test, ctx->wqe->bind.access,
			(u32)(IB_ACCESS_REMOTE_READ | IB_ZERO_BASED));
	KUNIT_EXPECT_EQ(test, ctx->wqe->num_sge, 0U);
}

/* Inline SGEs name kernel memory; their bytes land back to back. */
static void vhca_send_wqe_build_inline(struct kunit *test)
{
	struct build_ctx *ctx = test->priv;
	static const char a[] = "vhca inline ";
	static const char b[] = "payload";
	struct ib_sge sge[2] = {
		{ .addr = (uintptr_t)a, .length = sizeof(a) - 1 },
		{ .addr = (uintptr_t)b, .length = sizeof(b) },
	};
	struct ib_rdma_wr w = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_INLINE,
			.sg_list = sge,
			.num_sge = 2,
		},
		.remote_addr = 0x10,
		.rkey = 1,
	};

	vhca_send_wqe_build(ctx->wqe, IB_QPT_RC, 0, &w.wr);

	KUNIT_EXPECT_EQ(test, ctx->wqe->num_sge, 0U);
	KUNIT_EXPECT_EQ(test, ctx->wqe->inline_len,
			(u32)(sizeof(a) - 1 + sizeof(b)));
	KUNIT_EXPECT_EQ(test, memcmp(ctx->wqe->inline_data,
				     "vhca inline payload", sizeof(a) - 1 +
				     sizeof(b)), 0);
	KUNIT_EXPECT_EQ(test, ctx->wqe->rdma.remote_addr, 0x10ULL);
}

struct ud_case {
	const char *desc;
	enum ib_qp_type type;
	u32 wr_qkey;
	u32 want_qkey;
};

#define QP_QKEY	0x11111111U

static const struct ud_case ud_cases[] = {
	{ "UD, WR's Q_Key", IB_QPT_UD, 0x22222222, 0x22222222 },
	{ "UD, high bit: the QP's Q_Key", IB_QPT_UD, 0x80000000, QP_QKEY },
	{ "GSI, IB_QP_SET_QKEY: the QP's Q_Key", IB_QPT_GSI, IB_QP_SET_QKEY,
	  QP_QKEY },
	{ "GSI, high bit (IB_QP1_QKEY): the QP's Q_Key", IB_QPT_GSI,
	  IB_QP1_QKEY, QP_QKEY },
	{ "GSI, other Q_Key as given", IB_QPT_GSI, 0x33333333, 0x33333333 },
};

static void ud_desc(const struct ud_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ud, ud_cases, ud_desc);

/* The destination comes from the AH and the WR, the Q_Key per IBTA. */
static void vhca_send_wqe_build_ud_table(struct kunit *test)
{
	const struct ud_case *c = test->param_value;
	struct build_ctx *ctx = test->priv;
	struct ib_sge sge = { .addr = 0x6000, .length = 256, .lkey = 2 };
	struct ib_ud_wr w = {
		.wr = {
			.wr_id = 77,
			.opcode = IB_WR_SEND_WITH_IMM,
			.sg_list = &sge,
			.num_sge = 1,
			.ex.imm_data = cpu_to_be32(5),
		},
		.ah = &ctx->ah->ibah,
		.remote_qpn = 0x1234,
		.remote_qkey = c->wr_qkey,
	};
	struct vhca_send_wqe *wqe = ctx->wqe;

	vhca_send_wqe_build(wqe, c->type, QP_QKEY, &w.wr);

	KUNIT_EXPECT_EQ(test, memcmp(&wqe->ud.dgid, &ctx->ah->attr.grh.dgid,
				     sizeof(wqe->ud.dgid)), 0);
	KUNIT_EXPECT_EQ(test, wqe->ud.sgid_index, (u8)3);
	KUNIT_EXPECT_EQ(test, wqe->ud.remote_qpn, 0x1234U);
	KUNIT_EXPECT_EQ(test, wqe->ud.remote_qkey, c->want_qkey);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wqe->ex.imm_data), 5U);
	assert_sges(test, wqe, &sge, 1);
}

static struct kunit_case qp_test_cases[] = {
	KUNIT_CASE_PARAM(vhca_qp_check_init_table, init_gen_params),
	KUNIT_CASE_PARAM(vhca_qp_caps_table, caps_gen_params),
	KUNIT_CASE(vhca_sq_stride_sizes),
	KUNIT_CASE(vhca_sq_slot_wraps),
	KUNIT_CASE_PARAM(vhca_qp_check_attr_table, attr_gen_params),
	KUNIT_CASE_PARAM(vhca_qp_next_state_table, state_gen_params),
	KUNIT_CASE_PARAM(vhca_send_wr_check_table, wr_gen_params),
	KUNIT_CASE(vhca_send_wr_check_queue_full),
	{}
};

static struct kunit_suite qp_test_suite = {
	.name = "vhca_qp",
	.test_cases = qp_test_cases,
};

static struct kunit_case wqe_test_cases[] = {
	KUNIT_CASE(vhca_send_wqe_build_rdma_write_imm),
	KUNIT_CASE(vhca_send_wqe_build_rdma_read),
	KUNIT_CASE(vhca_send_wqe_build_atomic),
	KUNIT_CASE(vhca_send_wqe_build_send_inv),
	KUNIT_CASE(vhca_send_wqe_build_local_inv),
	KUNIT_CASE(vhca_send_wqe_build_reg_mr),
	KUNIT_CASE(vhca_send_wqe_build_bind_mw),
	KUNIT_CASE(vhca_send_wqe_build_inline),
	KUNIT_CASE_PARAM(vhca_send_wqe_build_ud_table, ud_gen_params),
	{}
};

static struct kunit_suite wqe_test_suite = {
	.name = "vhca_qp_wqe",
	.init = build_test_init,
	.test_cases = wqe_test_cases,
};

kunit_test_suites(&qp_test_suite, &wqe_test_suite);
