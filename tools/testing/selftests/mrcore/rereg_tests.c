// SPDX-License-Identifier: GPL-2.0
/*
 * Rereg and dereg while the device is writing (issue 16, item 4; ANCHORS.md
 * checklist item 19), over loopback RC pairs of /dev/mrcore_test on vhca.
 *
 * writes_under_rereg: MRCT_STAMP_WRITES keeps the send queue of QP A full
 * of RDMA WRITEs into an MR M of B's while the module reregisters M
 * (IB_MR_REREG_TRANS, same iova) back and forth between buffers A and B.
 * Write s copies source slot s, every 8-byte word of which names s and its
 * own place, to slot s of M, so every word found in A or B says which
 * write put it there. The module's records bound, per write, the
 * generations of M that can have overlapped it; a word of write s may be
 * in a buffer only if M pointed at that buffer in one of them. A write
 * that no change overlapped must be whole in its generation's buffer and
 * absent from the other one. An error completion (the QP then goes to
 * ERR) is allowed only for a write a change overlapped; the pair is then
 * replaced and the writes go on. The module also copies, after each
 * change, the slots of the old buffer that the outstanding writes would
 * land in, and reports any byte that changed afterwards.
 *
 * writes_under_dereg: the same writes, and M deregistered under them:
 * once the dereg has returned no byte of its buffer changes (the module
 * copies all of it then and compares at the end), the writes posted
 * after it complete in error, and a WRITE through the stale rkey on a
 * fresh pair is refused.
 *
 * recv_at_old_iova_after_rereg: a receive posted with M's lkey at M's
 * old iova; M reregistered to a new buffer at a new iova; the SEND that
 * meets the receive fails: the receive with a local protection error,
 * the SEND with a remote operational error (IBTA 9.9.3: the responder's
 * local error NAKs the requester), both QPs in ERR, and neither buffer
 * changed. A fresh pair then works through M at its new iova.
 *
 * checker_*: the verdict code itself, on made-up records and buffers: it
 * must find a stamp in a buffer M did not point at, a write that is not
 * whole, a byte that is no stamp, and an error outside a change.
 *
 * Every case needs vhca (rxe in 6.1 has no rereg): another device skips.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"

#define PAGE		4096UL

#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define PAIR_ACCESS	(LW | RW)

/* The stamped writes: one slot per write, M as long as all the slots. */
#define SLOT		256U
#define WRITES		8192U
#define M_LEN		((uint64_t)WRITES * SLOT)
#define DEPTH		16U
/* Writes of each generation that no change overlaps. */
#define CLEAN		32U
/* iovas unlike the user addresses, so VA-for-iova confusion shows. */
#define SRC_IOVA	0x3c3c00000000ULL
#define M_IOVA		0x5a5a00000000ULL
#define NEW_IOVA	0x6b6b00000000ULL

/* A word of a source slot: magic, word index, sequence. */
#define STAMP_MAGIC	0x57aULL
#define WORDS		(SLOT / 8)

#define NO_DEREG	UINT32_MAX

static uint64_t stamp(uint32_t seq, uint32_t word)
{
	return STAMP_MAGIC << 52 | (uint64_t)word << 32 | seq;
}

/* What a buffer holds and must hold: two of them, M's targets. */
struct rr_bufs {
	const uint8_t *buf[2];	/* now */
	const uint8_t *fill[2];	/* before any write */
	uint32_t slots;
	uint32_t slot_size;
};

/* What the checker found; every field but clean[] and the last must be 0. */
struct rr_verdict {
	uint32_t misplaced;	/* a stamp in a buffer M did not point at */
	uint32_t corrupt;	/* a word neither the fill nor its stamp */
	uint32_t partial;	/* a write that succeeded, not all there */
	uint32_t bad_errors;	/* an error with no change overlapping */
	uint32_t after_dereg;	/* a success posted after the dereg */
	uint32_t clean[2];	/* succeeded, no change overlapping, per buffer */
	uint32_t overlapped;	/* writes a change overlapped */
	uint32_t overlap_errors;	/* of them, failed other than flushed */
	uint32_t flushed;
	uint32_t first_bad;	/* the slot of the first finding, or -1 */
};

static uint64_t rr_word(const uint8_t *buf, uint32_t slot, uint32_t word,
			uint32_t slot_size)
{
	uint64_t v;

	memcpy(&v, buf + (uint64_t)slot * slot_size + word * 8, sizeof(v));
	return v;
}

/*
 * Whether write @rec may have reached buffer @x: M pointed at it in a
 * generation g from gen_post to gen_done, before the dereg (@dead).
 */
static bool rr_legal(const struct mrct_stamp_rec *rec, int x, uint32_t dead)
{
	uint32_t g, hi = rec->gen_done;

	if (rec->status == MRCT_WC_NONE || rec->status == MRCT_WC_WR_FLUSH_ERR)
		return false;
	if (dead != NO_DEREG && hi >= dead)
		hi = dead - 1;
	for (g = rec->gen_post; g <= hi && g - rec->gen_post < 2; g++)
		if (g % 2 == (uint32_t)x)
			return true;
	return false;
}

static void rr_bad(struct rr_verdict *v, uint32_t *what, uint32_t slot)
{
	(*what)++;
	if (v->first_bad == UINT32_MAX)
		v->first_bad = slot;
}

/* Every word of slot @s of buffer @x: how many are write @s's. */
static uint32_t rr_check_slot(const struct rr_bufs *b, int x, uint32_t s,
			      const struct mrct_stamp_rec *rec, uint32_t dead,
			      struct rr_verdict *v)
{
	uint32_t w, words = b->slot_size / 8, mine = 0;
	uint64_t now, was;

	for (w = 0; w < words; w++) {
		now = rr_word(b->buf[x], s, w, b->slot_size);
		was = rr_word(b->fill[x], s, w, b->slot_size);
		if (now == was)
			continue;
		if (now != stamp(s, w)) {
			rr_bad(v, &v->corrupt, s);
			continue;
		}
		mine++;
		if (!rr_legal(rec, x, dead))
			rr_bad(v, &v->misplaced, s);
	}
	return mine;
}

/* The verdict on write @s, from its record and what both buffers hold. */
static void rr_check_write(const struct rr_bufs *b, uint32_t s,
			   const struct mrct_stamp_rec *rec, uint32_t dead,
			   struct rr_verdict *v)
{
	uint32_t words = b->slot_size / 8, in[2];
	bool overlapped = rec->gen_done != rec->gen_post;

	in[0] = rr_check_slot(b, 0, s, rec, dead, v);
	in[1] = rr_check_slot(b, 1, s, rec, dead, v);
	if (rec->status == MRCT_WC_NONE)
		return;
	if (overlapped)
		v->overlapped++;
	if (rec->status == MRCT_WC_WR_FLUSH_ERR) {
		v->flushed++;
	} else if (dead != NO_DEREG && rec->gen_post >= dead) {
		/* Posted after the dereg: it must fail. */
		if (rec->status == MRCT_WC_SUCCESS)
			rr_bad(v, &v->after_dereg, s);
	} else if (rec->status != MRCT_WC_SUCCESS) {
		if (overlapped)
			v->overlap_errors++;
		else
			rr_bad(v, &v->bad_errors, s);
	} else if (!overlapped) {
		/* All of it in its generation's buffer, none in the other. */
		if (in[rec->gen_post % 2] != words)
			rr_bad(v, &v->partial, s);
		else
			v->clean[rec->gen_post % 2]++;
	} else if (in[0] + in[1] < words) {
		/* Word by word in one buffer or the other: no word lost. */
		rr_bad(v, &v->partial, s);
	}
}

static void rr_check(const struct rr_bufs *b, const struct mrct_stamp_rec *recs,
		     uint32_t dead, struct rr_verdict *v)
{
	uint32_t s;

	memset(v, 0, sizeof(*v));
	v->first_bad = UINT32_MAX;
	for (s = 0; s < b->slots; s++)
		rr_check_write(b, s, &recs[s], dead, v);
}

/* Log what the checker found, with the first bad slot's record. */
static void rr_log(struct __test_metadata *_metadata, const char *what,
		   const struct rr_verdict *v, const struct mrct_stamp_rec *recs)
{
	const struct mrct_stamp_rec *r;

	TH_LOG("figures: %s: clean in A %u, in B %u; overlapped %u (failed %u)",
	       what, v->clean[0], v->clean[1], v->overlapped,
	       v->overlap_errors);
	TH_LOG("figures: %s: flushed %u", what, v->flushed);
	if (v->first_bad == UINT32_MAX)
		return;
	r = &recs[v->first_bad];
	TH_LOG("%s: misplaced %u, corrupt %u, partial %u, bad errors %u, after dereg %u",
	       what, v->misplaced, v->corrupt, v->partial, v->bad_errors,
	       v->after_dereg);
	TH_LOG("%s: the first at slot %u: gen_post %u, gen_done %u, %s", what,
	       v->first_bad, r->gen_post, r->gen_done, mt_wc_name(r->status));
}

static void rr_expect_clean(struct __test_metadata *_metadata,
			    const struct rr_verdict *v)
{
	EXPECT_EQ(0, v->misplaced);
	EXPECT_EQ(0, v->corrupt);
	EXPECT_EQ(0, v->partial);
	EXPECT_EQ(0, v->bad_errors);
	EXPECT_EQ(0, v->after_dereg);
}

/* The device cases ------------------------------------------------------- */

/*
 * A mapping of guard page, A, guard page, B, guard page; A and B @len
 * bytes each, every byte filled and its copy kept in @want.
 */
struct rr_area {
	uint8_t *map;
	uint8_t *want;
	size_t size;
	uint64_t len;
};

FIXTURE(rereg)
{
	int fd;			/* -1: no vhca, the case is skipped */
	struct mrct_qp_create pair;
	struct rr_area dst;
	uint8_t *src;		/* the stamped source, M_LEN */
	struct mrct_reg smr;	/* LW over src, SRC_IOVA */
	struct mrct_stamp_rec *recs;
};

FIXTURE_SETUP(rereg)
{
	int err;

	self->fd = mt_fixture_open(_metadata);
	if (self->fd < 0)
		return;
	err = mt_pair(self->fd, 0, PAIR_ACCESS, 1, 0, &self->pair);
	ASSERT_EQ(0, err) TH_LOG("MRCT_QP_CREATE: %s", strerror(-err));
	mt_fixture_vhca(_metadata, &self->fd, self->pair.flags);
}

/* Closing the file destroys the pairs and deregisters the MRs. */
FIXTURE_TEARDOWN(rereg)
{
	if (self->fd >= 0)
		EXPECT_EQ(0, close(self->fd));
	if (self->dst.map && self->dst.map != MAP_FAILED)
		munmap(self->dst.map, self->dst.size);
	free(self->dst.want);
	if (self->src && self->src != MAP_FAILED)
		munmap(self->src, M_LEN);
	free(self->recs);
}

/* TEST_F whose body runs only when the fixture found vhca (see dp_tests). */
#define RR_TEST(name, timeout)						\
	static void rrt_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_rereg *self);		\
	TEST_F_TIMEOUT(rereg, name, timeout)				\
	{								\
		if (self->fd >= 0)					\
			rrt_##name(_metadata, self);			\
	}								\
	static void rrt_##name(struct __test_metadata *_metadata,	\
			       struct _test_data_rereg *self)

static uint8_t *rr_map(size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Buffer @x (0: A, 1: B) of @a. */
static uint8_t *rr_buf(const struct rr_area *a, int x)
{
	return a->map + PAGE + x * (a->len + PAGE);
}

static const uint8_t *rr_want(const struct rr_area *a, int x)
{
	return a->want + PAGE + x * (a->len + PAGE);
}

static void rr_area_init(struct __test_metadata *_metadata, struct rr_area *a,
			 uint64_t len, uint64_t seed)
{
	a->len = len;
	a->size = 2 * len + 3 * PAGE;
	a->map = rr_map(a->size);
	ASSERT_NE(MAP_FAILED, a->map);
	a->want = malloc(a->size);
	ASSERT_NE(NULL, a->want);
	mt_fill(a->map, a->size, seed);
	memcpy(a->want, a->map, a->size);
}

/* The three guard pages are as they were filled. */
static void rr_expect_guards(struct __test_metadata *_metadata,
			     const struct rr_area *a)
{
	size_t off[3] = { 0, PAGE + a->len, 2 * PAGE + 2 * a->len };
	int i;

	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, memcmp(a->map + off[i], a->want + off[i], PAGE))
			TH_LOG("guard page %d changed", i);
	}
}

/* The source: slot s of M_LEN / SLOT stamped for write s, registered LW. */
static void rr_src_init(struct __test_metadata *_metadata,
			struct _test_data_rereg *self)
{
	uint32_t s, w;
	uint64_t v;

	self->src = rr_map(M_LEN);
	ASSERT_NE(MAP_FAILED, self->src);
	for (s = 0; s < WRITES; s++) {
		for (w = 0; w < WORDS; w++) {
			v = stamp(s, w);
			memcpy(self->src + (uint64_t)s * SLOT + w * 8, &v, 8);
		}
	}
	ASSERT_EQ(0, mt_reg(self->fd, self->src, M_LEN, SRC_IOVA, LW, 0,
			    &self->smr));
	self->recs = calloc(WRITES, sizeof(*self->recs));
	ASSERT_NE(NULL, self->recs);
	for (s = 0; s < WRITES; s++)
		self->recs[s].status = MRCT_WC_NONE;
}

/* M over buffer A at M_IOVA, LW | RW, on PD 0 with the pair. */
static void rr_m_init(struct __test_metadata *_metadata,
		      struct _test_data_rereg *self, struct mrct_reg *m)
{
	rr_area_init(_metadata, &self->dst, M_LEN, 0xa11);
	ASSERT_EQ(0, mt_reg(self->fd, rr_buf(&self->dst, 0), M_LEN, M_IOVA,
			    LW | RW, 0, m));
}

static void rr_stamp_req(struct _test_data_rereg *self, const struct mrct_reg *m,
			 struct mrct_stamp_writes *w, uint32_t first,
			 uint32_t gen)
{
	memset(w, 0, sizeof(*w));
	w->src_iova = SRC_IOVA;
	w->iova = M_IOVA;
	w->addr[0] = (uintptr_t)rr_buf(&self->dst, 0);
	w->addr[1] = (uintptr_t)rr_buf(&self->dst, 1);
	w->length = M_LEN;
	w->recs = (uintptr_t)&self->recs[first];
	w->pair = self->pair.handle;
	w->mr = m->handle;
	w->src_lkey = self->smr.info.lkey;
	w->slot_size = SLOT;
	w->first = first;
	w->count = WRITES - first;
	w->depth = DEPTH;
	w->clean = CLEAN;
	w->gen = gen;
}

/* One call: it must end with every posted write complete, nothing stale. */
static void rr_stamp_call(struct __test_metadata *_metadata, int fd,
			  struct mrct_stamp_writes *w)
{
	int err = mt_ioctl(fd, MRCT_STAMP_WRITES, w);

	ASSERT_EQ(0, err) TH_LOG("MRCT_STAMP_WRITES: %s", strerror(-err));
	EXPECT_EQ(0, w->post_err) TH_LOG("ib_post_send(): %s",
					 strerror(-w->post_err));
	EXPECT_EQ(w->posted, w->completed);
	ASSERT_LT(0, w->posted);
	EXPECT_EQ(0, w->stale_bytes)
		TH_LOG("%llu bytes M had left changed, first at 0x%llx (M in gen %u)",
		       (unsigned long long)w->stale_bytes,
		       (unsigned long long)w->stale_offset, w->stale_gen);
}

/* Replace the pair, whose QPs are in ERR after a failed write. */
static void rr_new_pair(struct __test_metadata *_metadata,
			struct _test_data_rereg *self)
{
	struct mrct_qp_destroy d = { .handle = self->pair.handle };

	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_DESTROY, &d));
	ASSERT_EQ(0, mt_pair(self->fd, 0, PAIR_ACCESS, 1, 0, &self->pair));
}

static struct rr_bufs rr_bufs_of(const struct rr_area *a, uint32_t slots)
{
	return (struct rr_bufs) {
		.buf = { rr_buf(a, 0), rr_buf(a, 1) },
		.fill = { rr_want(a, 0), rr_want(a, 1) },
		.slots = slots,
		.slot_size = SLOT,
	};
}

RR_TEST(writes_under_rereg, 900)
{
	unsigned int rounds = 1, changes = 0, busy = 0;
	struct mrct_stamp_writes w;
	struct rr_verdict v;
	struct rr_bufs bufs;
	uint32_t first = 0, gen = 0;
	struct mrct_reg m;

	rr_src_init(_metadata, self);
	rr_m_init(_metadata, self, &m);

	while (first < WRITES) {
		rr_stamp_req(self, &m, &w, first, gen);
		rr_stamp_call(_metadata, self->fd, &w);
		first += w.posted;
		gen = w.gen;
		changes += w.changes;
		busy += w.busy_changes;
		if (w.status == MRCT_WC_SUCCESS)
			continue;
		rr_new_pair(_metadata, self);
		rounds++;
	}
	TH_LOG("figures: writes_under_rereg: %u writes of %u bytes, %u pairs",
	       WRITES, SLOT, rounds);
	TH_LOG("figures: writes_under_rereg: %u reregs, %u with writes outstanding",
	       changes, busy);

	bufs = rr_bufs_of(&self->dst, WRITES);
	rr_check(&bufs, self->recs, NO_DEREG, &v);
	rr_log(_metadata, "writes_under_rereg", &v, self->recs);
	rr_expect_clean(_metadata, &v);
	rr_expect_guards(_metadata, &self->dst);
	/* M went both ways, and each buffer got writes of its own. */
	EXPECT_LE(2, changes);
	EXPECT_LT(0, v.clean[0]);
	EXPECT_LT(0, v.clean[1]);
	ASSERT_EQ(0, mt_dereg(self->fd, m.handle));
}

/* A WRITE of one slot through @rkey on a fresh pair: @status expected. */
static void rr_write_one(struct __test_metadata *_metadata,
			 struct _test_data_rereg *self, uint32_t rkey,
			 uint32_t status)
{
	struct mrct_qp_post p = {
		.remote_addr = M_IOVA,
		.opcode = MRCT_WR_RDMA_WRITE,
		.rkey = rkey,
		.num_sge = 1,
	};

	rr_new_pair(_metadata, self);
	p.handle = self->pair.handle;
	p.sge[0].addr = SRC_IOVA;
	p.sge[0].length = SLOT;
	p.sge[0].lkey = self->smr.info.lkey;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, &p));
	ASSERT_EQ(0, p.post_err);
	EXPECT_EQ(status, p.status) TH_LOG("WRITE through the stale rkey: %s",
					   mt_wc_name(p.status));
}

RR_TEST(writes_under_dereg, 600)
{
	uint32_t s, after = 0, failed_after = 0;
	struct mrct_stamp_writes w;
	struct rr_verdict v;
	struct rr_bufs bufs;
	struct mrct_reg m;

	rr_src_init(_metadata, self);
	rr_m_init(_metadata, self, &m);

	rr_stamp_req(self, &m, &w, 0, 0);
	w.flags = MRCT_STAMP_DEREG;
	w.clean = 4 * CLEAN;
	rr_stamp_call(_metadata, self->fd, &w);
	ASSERT_EQ(1, w.changes);
	ASSERT_EQ(1, w.gen);
	/* The module deregistered M: its handle is gone. */
	EXPECT_EQ(-ENOENT, mt_dereg(self->fd, m.handle));

	for (s = 0; s < w.posted; s++) {
		if (self->recs[s].gen_post < 1)
			continue;
		after++;
		if (self->recs[s].status != MRCT_WC_SUCCESS)
			failed_after++;
	}
	TH_LOG("figures: writes_under_dereg: %u posted, %u after the dereg (%u failed)",
	       w.posted, after, failed_after);
	TH_LOG("figures: writes_under_dereg: outstanding at the dereg %u, first error %s",
	       w.busy_changes, mt_wc_name(w.status));
	EXPECT_EQ(after, failed_after);

	bufs = rr_bufs_of(&self->dst, WRITES);
	rr_check(&bufs, self->recs, 1, &v);
	rr_log(_metadata, "writes_under_dereg", &v, self->recs);
	rr_expect_clean(_metadata, &v);
	rr_expect_guards(_metadata, &self->dst);
	EXPECT_LT(0, v.clean[0]);

	/* The stale rkey on a live QP: refused, and A stays as it is. */
	memcpy(self->dst.want, self->dst.map, self->dst.size);
	rr_write_one(_metadata, self, m.info.rkey, MRCT_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, memcmp(self->dst.want, self->dst.map, self->dst.size));
}

/* Post a receive on B: @len bytes at @iova through @lkey. */
static void rr_recv_b(struct __test_metadata *_metadata, int fd,
		      uint32_t pair, uint64_t iova, uint32_t len, uint32_t lkey)
{
	struct mrct_qp_recv r = {
		.handle = pair,
		.qp = 1,
		.num_sge = 1,
	};

	r.sge[0].addr = iova;
	r.sge[0].length = len;
	r.sge[0].lkey = lkey;
	ASSERT_EQ(0, mt_ioctl(fd, MRCT_QP_POST_RECV, &r));
	ASSERT_EQ(0, r.post_err);
}

/* A SEND of @len source bytes from A; the result in @p. */
static void rr_send(struct __test_metadata *_metadata,
		    struct _test_data_rereg *self, uint32_t len,
		    struct mrct_qp_post *p)
{
	memset(p, 0, sizeof(*p));
	p->handle = self->pair.handle;
	p->opcode = MRCT_WR_SEND;
	p->num_sge = 1;
	p->sge[0].addr = SRC_IOVA;
	p->sge[0].length = len;
	p->sge[0].lkey = self->smr.info.lkey;
	p->flags = MRCT_POST_WAIT_RECV;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_POST, p));
	ASSERT_EQ(0, p->post_err);
}

/* Old buffer A (M's before the rereg) and new buffer B, as filled. */
static void rr_expect_area(struct __test_metadata *_metadata,
			   const struct rr_area *a)
{
	EXPECT_EQ(0, memcmp(rr_buf(a, 0), rr_want(a, 0), a->len))
		TH_LOG("the old buffer changed");
	EXPECT_EQ(0, memcmp(rr_buf(a, 1), rr_want(a, 1), a->len))
		TH_LOG("the new buffer changed");
	rr_expect_guards(_metadata, a);
}

#define MSG_OFF		0x300U
#define MSG_LEN		0x500U

/* ANCHORS 19: a receive that still names the old iova after a rereg. */
RR_TEST(recv_at_old_iova_after_rereg, 120)
{
	struct mrct_qp_wait_recv wr = {};
	struct mrct_rereg rr = {};
	struct mrct_qp_post p;
	struct mrct_reg m;

	self->src = rr_map(M_LEN);
	ASSERT_NE(MAP_FAILED, self->src);
	mt_fill(self->src, M_LEN, 0x5e4d);
	ASSERT_EQ(0, mt_reg(self->fd, self->src, M_LEN, SRC_IOVA, LW, 0,
			    &self->smr));
	rr_area_init(_metadata, &self->dst, 2 * PAGE, 0x01d);
	ASSERT_EQ(0, mt_reg(self->fd, rr_buf(&self->dst, 0), 2 * PAGE, M_IOVA,
			    LW | RW, 0, &m));

	rr_recv_b(_metadata, self->fd, self->pair.handle, M_IOVA + MSG_OFF,
		  2 * PAGE - MSG_OFF, m.info.lkey);
	rr.handle = m.handle;
	rr.flags = MRCT_REREG_TRANS;
	rr.addr = (uintptr_t)rr_buf(&self->dst, 1);
	rr.length = 2 * PAGE;
	rr.iova = NEW_IOVA;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_REREG, &rr));
	/* vhca keeps the keys: the receive's lkey is M's, its iova stale. */
	ASSERT_EQ(m.info.lkey, rr.info.lkey);

	rr_send(_metadata, self, MSG_LEN, &p);
	EXPECT_EQ(MRCT_WC_REM_OP_ERR, p.status)
		TH_LOG("SEND: %s, want REM_OP_ERR", mt_wc_name(p.status));
	wr.handle = self->pair.handle;
	wr.qp = 1;
	ASSERT_EQ(0, mt_ioctl(self->fd, MRCT_QP_WAIT_RECV, &wr));
	EXPECT_EQ(MRCT_WC_LOC_PROT_ERR, wr.status)
		TH_LOG("receive: %s, want LOC_PROT_ERR", mt_wc_name(wr.status));
	EXPECT_EQ(MRCT_QPS_ERR, wr.qp_state[0])
		TH_LOG("QP B is %s", mt_qps_name(wr.qp_state[0]));
	EXPECT_EQ(MRCT_QPS_ERR, wr.qp_state[1])
		TH_LOG("QP A is %s", mt_qps_name(wr.qp_state[1]));
	rr_expect_area(_metadata, &self->dst);

	/* A new pair works through M at its new iova, into the new buffer. */
	rr_new_pair(_metadata, self);
	rr_recv_b(_metadata, self->fd, self->pair.handle, NEW_IOVA + MSG_OFF,
		  2 * PAGE - MSG_OFF, m.info.lkey);
	rr_send(_metadata, self, MSG_LEN, &p);
	EXPECT_EQ(MRCT_WC_SUCCESS, p.status)
		TH_LOG("SEND on the new pair: %s", mt_wc_name(p.status));
	EXPECT_EQ(MRCT_WC_SUCCESS, p.recv_status)
		TH_LOG("its receive: %s", mt_wc_name(p.recv_status));
	EXPECT_EQ(MSG_LEN, p.recv_byte_len);
	memcpy(self->dst.want + (rr_buf(&self->dst, 1) - self->dst.map) +
	       MSG_OFF, self->src, MSG_LEN);
	rr_expect_area(_metadata, &self->dst);
	ASSERT_EQ(0, mt_dereg(self->fd, m.handle));
}

/* The checker, on made-up records and buffers --------------------------- */

#define CK_SLOTS	6U

/* Two buffers of CK_SLOTS slots, filled, and the records of six writes. */
struct ck {
	uint8_t buf[2][CK_SLOTS * SLOT];
	uint8_t fill[2][CK_SLOTS * SLOT];
	struct mrct_stamp_rec recs[CK_SLOTS];
	struct rr_bufs bufs;
	struct rr_verdict v;
};

/* Write @s landed whole in buffer @x. */
static void ck_land(struct ck *c, int x, uint32_t s)
{
	uint64_t v;
	uint32_t w;

	for (w = 0; w < WORDS; w++) {
		v = stamp(s, w);
		memcpy(&c->buf[x][s * SLOT + w * 8], &v, 8);
	}
}

/*
 * Six writes of a good run: 0 and 1 clean in A (generation 0), 2
 * overlapped by the change to B and landed in A, 3 overlapped and failed,
 * 4 flushed, 5 clean in B.
 */
static void ck_init(struct ck *c)
{
	static const struct mrct_stamp_rec recs[CK_SLOTS] = {
		{ 0, 0, MRCT_WC_SUCCESS }, { 0, 0, MRCT_WC_SUCCESS },
		{ 0, 1, MRCT_WC_SUCCESS }, { 0, 1, MRCT_WC_REM_ACCESS_ERR },
		{ 1, 1, MRCT_WC_WR_FLUSH_ERR }, { 1, 1, MRCT_WC_SUCCESS },
	};

	mt_fill(c->buf, sizeof(c->buf), 0xc4e);
	memcpy(c->fill, c->buf, sizeof(c->buf));
	memcpy(c->recs, recs, sizeof(recs));
	ck_land(c, 0, 0);
	ck_land(c, 0, 1);
	ck_land(c, 0, 2);
	ck_land(c, 1, 5);
	c->bufs = (struct rr_bufs) {
		.buf = { c->buf[0], c->buf[1] },
		.fill = { c->fill[0], c->fill[1] },
		.slots = CK_SLOTS,
		.slot_size = SLOT,
	};
}

TEST(checker_passes_a_good_run)
{
	static struct ck c;

	ck_init(&c);
	rr_check(&c.bufs, c.recs, NO_DEREG, &c.v);
	rr_expect_clean(_metadata, &c.v);
	EXPECT_EQ(2, c.v.clean[0]);
	EXPECT_EQ(1, c.v.clean[1]);
	EXPECT_EQ(2, c.v.overlapped);
	EXPECT_EQ(1, c.v.overlap_errors);
	EXPECT_EQ(1, c.v.flushed);
}

/* Write 5 (generation 1 only, M on B) also in A: misplaced. */
TEST(checker_catches_stamp_of_other_generation)
{
	static struct ck c;

	ck_init(&c);
	ck_land(&c, 0, 5);
	rr_check(&c.bufs, c.recs, NO_DEREG, &c.v);
	EXPECT_EQ(WORDS, c.v.misplaced);
	EXPECT_EQ(5, c.v.first_bad);
}

/* A flushed write (never executed) left a word; one of a clean write lost. */
TEST(checker_catches_flushed_bytes_and_partial_write)
{
	static struct ck c;
	uint64_t v = stamp(4, 3);

	ck_init(&c);
	memcpy(&c.buf[1][4 * SLOT + 3 * 8], &v, 8);
	memcpy(&c.buf[0][1 * SLOT + 8], &c.fill[0][1 * SLOT + 8], 8);
	rr_check(&c.bufs, c.recs, NO_DEREG, &c.v);
	EXPECT_EQ(1, c.v.misplaced);
	EXPECT_EQ(1, c.v.partial);
	EXPECT_EQ(1, c.v.first_bad);
}

/* A byte that is no stamp; a word of write 0 in slot 1's place. */
TEST(checker_catches_foreign_bytes)
{
	static struct ck c;

	ck_init(&c);
	c.buf[1][3 * SLOT + 17] ^= 0x40;
	memcpy(&c.buf[0][1 * SLOT], &c.buf[0][0], 8);
	rr_check(&c.bufs, c.recs, NO_DEREG, &c.v);
	EXPECT_EQ(2, c.v.corrupt);
	EXPECT_EQ(1, c.v.partial);
}

/*
 * An error no change overlapped; a success posted after the dereg (and
 * an error there, which is right).
 */
TEST(checker_catches_errors_outside_a_change)
{
	static struct ck c;

	ck_init(&c);
	c.recs[0].status = MRCT_WC_REM_ACCESS_ERR;
	rr_check(&c.bufs, c.recs, NO_DEREG, &c.v);
	EXPECT_EQ(1, c.v.bad_errors);
	EXPECT_EQ(0, c.v.first_bad);

	ck_init(&c);
	rr_check(&c.bufs, c.recs, 1, &c.v);
	EXPECT_EQ(1, c.v.after_dereg);
	EXPECT_EQ(5, c.v.first_bad);

	/* After the dereg an error is what must happen: no finding. */
	ck_init(&c);
	c.recs[5].status = MRCT_WC_REM_ACCESS_ERR;
	memcpy(c.buf[1], c.fill[1], sizeof(c.buf[1]));
	rr_check(&c.bufs, c.recs, 1, &c.v);
	rr_expect_clean(_metadata, &c.v);
}

TEST_HARNESS_MAIN
