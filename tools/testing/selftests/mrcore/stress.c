// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency stress of mrcore and vhca (issue 20, item 3): memory
 * registrations, reregistrations, window binds, invalidations and
 * deregistrations from many threads at once on shared PDs, through the
 * kernel's verbs (the test chardev /dev/mrcore_test) and through user
 * space's (libibverbs and librxe over the device, libvhca's rereg built
 * in), for a bounded number of rounds; stress_vhca.sh runs it while
 * NVMe-oF keeps the same device busy.
 *
 *	stress [-r ROUNDS] [-t THREADS] [-s SEED] [-d DEV] [-k | -u]
 *
 * THREADS (default: twice the online CPUs) are split between the two
 * halves (-k: kernel half only, -u: user half only). A half's threads go
 * in groups of at most GROUP_MAX, each sharing one context and its two
 * PDs: an open file of /dev/mrcore_test (the kernel half) or an
 * ibv_context (the user half). Every thread has a loopback RC pair and a
 * source MR on each PD. In each of its ROUNDS a thread:
 *  - maps a buffer and registers it on a PD drawn at random: pinned with
 *    MW_BIND, or (one in three) ODP in shared anonymous memory, whose bytes
 *    survive MADV_DONTNEED, so an exact verdict holds under it;
 *  - writes and reads random ranges through the MR's rkey; every byte
 *    the MR covers is compared with what it must hold after each transfer;
 *  - pinned: reregisters it once or twice (TRANS to a second buffer, PD to
 *    the other PD, ACCESS without REMOTE_READ, any together), each
 *    followed by traffic, a READ refused while REMOTE_READ is off, a WRITE
 *    from the old PD's pair refused, and the buffer left behind unchanged;
 *  - pinned: binds a type 2 window (a Bind MW WR), moves data through it,
 *    invalidates it (LOCAL_INV), and sometimes checks the stale rkey is
 *    refused; the kernel half a type 1 window too (mrc_bind_mw);
 *  - pinned: offers the MR to the other threads of its group; three times
 *    a round every thread binds a window of its own (type 2, or type 1 in
 *    the kernel half) to its slot of the last page of another's offered
 *    MR, if one is offered then, writes it through the window, checks the
 *    owner's buffer, and invalidates and frees the window; meanwhile the
 *    owner asks for an ACCESS rereg, withdraws the MR and deregisters it;
 *  - kernel half: device reads and writes through the lkey
 *    (MRCT_DEV_READ/WRITE), and REG_MR / WRITE / verify / LOCAL_INV cycles
 *    of an FRWR MR (MRCT_FRWR_CYCLE, verified by the module);
 *  - ODP: while registered, one invalidator thread drops pages of every
 *    thread's ODP buffer (MADV_DONTNEED) in a loop; half the ODP buffers
 *    are unmapped before their MR is deregistered;
 *  - every fourth round, and after every completion in error, replaces a
 *    loopback pair.
 *
 * The races this makes: in the kernel, the calls of one chardev file are
 * serialised by its lock, so threads sharing a file interleave their
 * calls on its PDs and MRs (a bind of another thread's MR between its
 * withdrawal and its dereg, a dereg while another's window is bound)
 * while the files, the user contexts, the invalidator and NVMe-oF run in
 * mrcore and vhca at the same time; a user context serialises nothing,
 * so its threads' registrations, binds and deregistrations on one PD run
 * concurrently in the kernel.
 *
 * Errors tolerated, each counted, and only these (anything else fails):
 *  - bind_gone: a guest's bind to another thread's MR fails because the
 *    owner deregistered it after the guest read its offer: a type 1 bind
 *    -ENOENT (no such MR handle), or a Bind MW WR completing MW_BIND_ERR
 *    (the lkey is no longer valid). Tolerated only when the offer's
 *    generation changed since the guest read it (the owner withdraws an
 *    MR before deregistering it); the pair is replaced after MW_BIND_ERR.
 *  - dereg_busy, rereg_busy: the owner's dereg or ACCESS rereg is -EBUSY
 *    (EBUSY) because a guest's window is bound to the MR. Tolerated only
 *    when some guest had started a bind, and not finished its unbind,
 *    before the call returned: guests count binds started and unbinds
 *    done per offer, and the owner reads the latter before the call and
 *    the former after it. The dereg is retried until it succeeds (60 s at
 *    most).
 *  - odp_access_err: an RDMA access to an ODP MR completes REM_ACCESS_ERR
 *    because invalidations kept its page fault from settling (mrcore's
 *    mrc_odp_map_range() gives up with -EBUSY after
 *    HMM_RANGE_DEFAULT_TIMEOUT, and vhca runs the WQE once more without
 *    faulting). Tolerated only when the invalidator dropped pages of that
 *    buffer during the access; a failed WRITE must have left every 8-byte
 *    word of its range old or new, and nothing outside it changed.
 *  - dev_eagain: MRCT_DEV_READ of an ODP MR is -EAGAIN (the device's own
 *    reads never fault: a page not mapped now, or dropped meanwhile).
 *
 * At the end every object is freed, each free checked, and one summary
 * line per half counts the operations of each kind. The program is one
 * kselftest case, so its verdict is a TAP line; a failure logs
 * "stress.c:LINE: thread N round R: why" and stops every thread, which
 * unwinds what it made. The harness's timeout bounds a hang only.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>
#include <vhca/verbs.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"
#include "mrct_util.h"
#include "user_util.h"

#define PAGE		4096UL
/* Every MR under test: its last page is the guests', the rest its owner's. */
#define MR_PAGES	8
#define MR_LEN		(MR_PAGES * PAGE)
#define OWN_LEN		((MR_PAGES - 1) * PAGE)
#define GUEST_OFF	OWN_LEN
#define GUEST_SLOT	64
/* A thread's source buffer: sources at 0, READ sinks at SINK_OFF. */
#define SRC_LEN		(2 * MR_LEN)
#define SINK_OFF	MR_LEN
/* The kernel half's iovas, unlike any user address. */
#define SRC_IOVA	0x3c0000000000ULL
#define MR_IOVA		0x5a0000000000ULL

#define GROUP_MAX	4
#define MAX_THREADS	256
/* How long a wait for progress lasts before it is a failure. */
#define DEADLINE_MS	60000
/* The harness's bound on the whole run: a hang, never a verdict. */
#define TIMEOUT_S	3600
/* The invalidator's pause between two drops. */
#define DROP_PAUSE_US	200

/*
 * The MRCT_* values are ib_core's (mrcore_test checks that it builds), and
 * so are libibverbs' (the uverbs ABI carries them unchanged): access bits,
 * rereg flags and completion statuses go to either half as they are.
 */
#define LW		MRCT_ACCESS_LOCAL_WRITE
#define RW		MRCT_ACCESS_REMOTE_WRITE
#define RR		MRCT_ACCESS_REMOTE_READ
#define MWB		MRCT_ACCESS_MW_BIND
#define ODP		MRCT_ACCESS_ON_DEMAND
#define QP_ACCESS	(LW | RW | RR)

/* What a thread counts: operations, then the errors it tolerated. */
enum st_count {
	C_REG, C_REG_ODP, C_REREG_TRANS, C_REREG_PD, C_REREG_ACCESS, C_DEREG,
	C_WRITE, C_READ, C_DEV_RW, C_MW1, C_MW2, C_INV, C_GUEST, C_REFUSED,
	C_FRWR, C_QP, C_MUNMAP,
	T_BIND_GONE, T_DEREG_BUSY, T_REREG_BUSY, T_ODP_ERR, T_DEV_EAGAIN,
	C_NUM
};

static const char * const st_count_names[C_NUM] = {
	"reg", "reg_odp", "rereg_trans", "rereg_pd", "rereg_access", "dereg",
	"rdma_write", "rdma_read", "dev_rw", "mw1_bind", "mw2_bind",
	"local_inv", "guest_bind", "refused", "frwr_cycles", "qp_pairs",
	"munmap",
	"tolerated:bind_gone", "tolerated:dereg_busy", "tolerated:rereg_busy",
	"tolerated:odp_access_err", "tolerated:dev_eagain",
};

/* Options. */
static unsigned int opt_rounds = 8, opt_threads, opt_seed = 1;
static bool opt_kernel = true, opt_user = true;
static const char *opt_dev = "vhca0";

/* Failures so far; any stops every thread at its next step. */
static unsigned int st_failures;
/* The first failure's line, the verdict's reason. */
static char st_first[600];

/* An MR a thread offers to the others of its group: what a bind needs. */
struct st_offered {
	bool live;
	uint32_t gen;		/* changes when the owner withdraws it */
	uint32_t handle;	/* kernel half: the MR's handle */
	uint32_t lkey;
	uint32_t pd;
	uint64_t iova;
	uint8_t *buf;
};

/*
 * An offer and its windows: the guests count @binds_started before a
 * bind and @unbinds_done once their window is unbound (or the bind
 * failed), for st_busy_ok().
 */
struct st_offer {
	pthread_mutex_t lock;	/* protects @v */
	struct st_offered v;
	uint64_t binds_started;	/* __atomic */
	uint64_t unbinds_done;	/* __atomic */
};

/* One shared context: a chardev file or an ibv_context, and its PDs. */
struct st_group {
	bool user;
	unsigned int members;
	int fd;				/* kernel half */
	struct ibv_context *ctx;	/* user half */
	struct ibv_pd *pd[MRCT_NUM_PDS];
	int gid_index;
	union ibv_gid gid;
	struct st_offer offer[GROUP_MAX];
};

/*
 * An ODP buffer the invalidator may drop pages of; @drops counts its
 * drops, for the owner's verdict on an access error.
 */
struct st_odp {
	pthread_mutex_t lock;	/* protects @live, @buf */
	bool live;
	uint8_t *buf;
	uint64_t drops;		/* __atomic */
};

static struct st_odp st_odps[MAX_THREADS];

/* The MR of a thread's round. */
struct st_mr {
	bool live;		/* registered */
	bool odp;
	uint8_t *buf[2];	/* MR_LEN each; [1] for TRANS (pinned only) */
	uint8_t *want[2];	/* OWN_LEN each: what buf[i] must hold */
	int cur;		/* the buffer the MR covers */
	uint32_t pd;
	uint32_t access;
	uint64_t iova;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t handle;	/* kernel half */
	struct ibv_mr *mr;	/* user half */
};

/* A window of a thread's: its own MR's, or a guest's on another's. */
struct st_mw {
	bool live;
	int type;
	uint32_t pd;
	uint32_t rkey;
	uint32_t handle;	/* kernel half */
	struct ibv_mw *mw;	/* user half */
	struct st_offer *offer;	/* a guest's: the offer it counts in */
};

/* A user-half loopback pair: QP 0 requests, QP 1 answers and binds. */
struct st_upair {
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	uint64_t wr_id;
};

struct st_ops;

struct st_thread {
	unsigned int id;
	unsigned int member;	/* in its group */
	struct st_group *g;
	const struct st_ops *ops;
	pthread_t tid;
	uint64_t rng;
	uint64_t seq;		/* patterns */
	unsigned int round;
	unsigned long count[C_NUM];
	uint8_t *src;		/* SRC_LEN, private */
	struct st_mr m;
	struct st_mw own;	/* a window on m */
	struct st_mw guest;	/* a window on another's MR */
	/* kernel half */
	uint32_t kpair[MRCT_NUM_PDS];
	uint32_t ksrc[MRCT_NUM_PDS];	/* source MRs' handles */
	uint32_t ksrc_lkey[MRCT_NUM_PDS];
	/* user half */
	struct st_upair upair[MRCT_NUM_PDS];
	struct ibv_mr *usrc[MRCT_NUM_PDS];
};

/*
 * What a half does with a verbs call. Each returns 0 or -errno (a call
 * that failed); the data-path calls give the completion's status in
 * *@status.
 */
struct st_ops {
	const char *name;
	int (*pair_up)(struct st_thread *t, uint32_t pd);
	int (*pair_down)(struct st_thread *t, uint32_t pd);
	int (*src_reg)(struct st_thread *t, uint32_t pd);
	int (*src_dereg)(struct st_thread *t, uint32_t pd);
	int (*reg)(struct st_thread *t, struct st_mr *m);
	/* On success the MR's keys, iova, PD, buffer and access are updated. */
	int (*rereg)(struct st_thread *t, struct st_mr *m, uint32_t flags,
		     uint32_t pd, int buf, uint32_t access);
	int (*dereg)(struct st_thread *t, struct st_mr *m);
	/* @op of @len bytes between src[@soff] and @raddr through @rkey. */
	int (*rdma)(struct st_thread *t, uint32_t pd, uint32_t op,
		    uint64_t soff, uint64_t raddr, uint32_t rkey, uint32_t len,
		    uint32_t *status);
	int (*mw_alloc)(struct st_thread *t, uint32_t pd, int type,
			struct st_mw *w);
	int (*mw_free)(struct st_thread *t, struct st_mw *w);
	/* A Bind MW WR on the answering QP of @w->pd's pair. */
	int (*bind2)(struct st_thread *t, struct st_mw *w, uint32_t lkey,
		     uint64_t addr, uint64_t len, uint32_t *status);
	/* A type 1 bind (length 0 unbinds); NULL where there is none. */
	int (*bind1)(struct st_thread *t, struct st_mw *w, uint32_t mr,
		     uint64_t addr, uint64_t len);
	/* LOCAL_INV of @rkey on the answering QP of @pd's pair. */
	int (*inv)(struct st_thread *t, uint32_t pd, uint32_t rkey,
		   uint32_t *status);
	/* What only this half does in a round; NULL for nothing. */
	int (*extras)(struct st_thread *t);
};

/* ---------------------------------------------------------------- */
/* Helpers                                                          */

static bool st_stopped(void)
{
	return __atomic_load_n(&st_failures, __ATOMIC_RELAXED);
}

/* Log why, stop every thread; returns -1 for the caller to return. */
static int st_fail(struct st_thread *t, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# stress.c:%d: %s thread %u round %u: %s\n", line,
		t->ops->name, t->id, t->round, msg);
	if (__atomic_add_fetch(&st_failures, 1, __ATOMIC_RELAXED) == 1)
		snprintf(st_first, sizeof(st_first),
			 "stress.c:%d: %s thread %u round %u: %s", line,
			 t->ops->name, t->id, t->round, msg);
	return -1;
}

#define FAIL(t, ...)	st_fail(t, __LINE__, __VA_ARGS__)

/* splitmix64: reproducible per seed and thread. */
static uint64_t st_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t st_rand(struct st_thread *t, uint32_t n)
{
	return st_next(&t->rng) % n;
}

/* A pattern seed no other transfer of the run uses. */
static uint64_t st_seed(struct st_thread *t)
{
	return (uint64_t)opt_seed << 40 | (uint64_t)t->id << 28 | ++t->seq;
}

/* A range of 8-byte words in [0, OWN_LEN): *@off and *@len. */
static void st_range(struct st_thread *t, size_t *off, size_t *len)
{
	*off = 8 * st_rand(t, OWN_LEN / 8);
	*len = 8 * (1 + st_rand(t, (OWN_LEN - *off) / 8));
}

static uint8_t *st_map(bool shared)
{
	void *p = mmap(NULL, MR_LEN, PROT_READ | PROT_WRITE,
		       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The first byte at which @len bytes of @a and @b differ, or @len. */
static size_t st_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			break;
	return i;
}

/* Buffer @i of the MR holds what it must, its guests' page aside. */
static int st_same(struct st_thread *t, int i, const char *what)
{
	const struct st_mr *m = &t->m;
	size_t d = st_diff(m->buf[i], m->want[i], OWN_LEN);

	if (d == OWN_LEN)
		return 0;
	return FAIL(t, "%s: buffer %d byte 0x%zx is 0x%02x, want 0x%02x", what,
		    i, d, m->buf[i][d], m->want[i][d]);
}

static uint64_t st_drops(struct st_thread *t)
{
	return __atomic_load_n(&st_odps[t->id].drops, __ATOMIC_ACQUIRE);
}

/* A new loopback pair on @pd in place of the old one. */
static int st_pair_renew(struct st_thread *t, uint32_t pd)
{
	int err = t->ops->pair_down(t, pd);

	if (err)
		return FAIL(t, "pair on PD %u: destroy: %s", pd, strerror(-err));
	err = t->ops->pair_up(t, pd);
	if (err)
		return FAIL(t, "pair on PD %u: create: %s", pd, strerror(-err));
	t->count[C_QP]++;
	return 0;
}

/*
 * -EBUSY from the owner's dereg or rereg of offer @o is legitimate only
 * if a guest's window could have been bound during the call: some bind
 * started by its end (@started, read after it) was not unbound at its
 * start (@done, read before it).
 */
static bool st_busy_ok(const struct st_offer *o, uint64_t done)
{
	return __atomic_load_n(&o->binds_started, __ATOMIC_ACQUIRE) != done;
}

static uint64_t st_unbinds(const struct st_offer *o)
{
	return __atomic_load_n(&o->unbinds_done, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------- */
/* Traffic and its verdicts                                         */

/*
 * After @status other than SUCCESS of an access through the ODP MR at
 * @off, @len (@src the bytes a WRITE carried, NULL for a READ): tolerated
 * only as odp_access_err (see the top of the file). The pair is replaced.
 */
static int st_odp_error(struct st_thread *t, uint32_t pd, uint32_t status,
			uint64_t drops, size_t off, size_t len,
			const uint8_t *src, const char *what)
{
	struct st_mr *m = &t->m;
	const uint8_t *got = m->buf[m->cur], *old = m->want[m->cur];
	size_t i;

	if (!m->odp || status != MRCT_WC_REM_ACCESS_ERR ||
	    st_drops(t) == drops)
		return FAIL(t, "%s: wc.status %s on the %s MR on PD %u", what,
			    mt_wc_name(status), m->odp ? "ODP" : "pinned", pd);
	if (st_diff(got, old, off) != off ||
	    st_diff(got + off + len, old + off + len, OWN_LEN - off - len) !=
	    OWN_LEN - off - len)
		return FAIL(t, "%s: REM_ACCESS_ERR, and bytes outside the range changed",
			    what);
	for (i = 0; src && i < len; i += 8) {
		if (memcmp(got + off + i, old + off + i, 8) &&
		    memcmp(got + off + i, src + i, 8))
			return FAIL(t, "%s: REM_ACCESS_ERR, and word 0x%zx is neither old nor new",
				    what, off + i);
	}
	memcpy(m->want[m->cur] + off, got + off, len);
	t->count[T_ODP_ERR]++;
	return st_pair_renew(t, pd);
}

/*
 * An RDMA WRITE of @len new bytes through @rkey at @raddr, on @pd's pair,
 * which is byte @off of the MR: they land there, and nothing else of the
 * MR's buffer changes.
 */
static int st_write(struct st_thread *t, uint32_t pd, uint32_t rkey,
		    uint64_t raddr, size_t off, size_t len, const char *what)
{
	struct st_mr *m = &t->m;
	uint64_t drops = st_drops(t);
	uint32_t status;
	int err;

	mt_fill(t->src, len, st_seed(t));
	err = t->ops->rdma(t, pd, MRCT_WR_RDMA_WRITE, 0, raddr, rkey, len,
			   &status);
	if (err)
		return FAIL(t, "%s: RDMA WRITE: %s", what, strerror(-err));
	t->count[C_WRITE]++;
	if (status != MRCT_WC_SUCCESS)
		return st_odp_error(t, pd, status, drops, off, len, t->src,
				    what);
	memcpy(m->want[m->cur] + off, t->src, len);
	return st_same(t, m->cur, what);
}

/* An RDMA READ of @len bytes through @rkey at @raddr, byte @off of the MR. */
static int st_read(struct st_thread *t, uint32_t pd, uint32_t rkey,
		   uint64_t raddr, size_t off, size_t len, const char *what)
{
	struct st_mr *m = &t->m;
	uint64_t drops = st_drops(t);
	uint8_t *sink = t->src + SINK_OFF;
	uint32_t status;
	size_t d;
	int err;

	mt_fill(sink, len, st_seed(t));
	err = t->ops->rdma(t, pd, MRCT_WR_RDMA_READ, SINK_OFF, raddr, rkey,
			   len, &status);
	if (err)
		return FAIL(t, "%s: RDMA READ: %s", what, strerror(-err));
	t->count[C_READ]++;
	if (status != MRCT_WC_SUCCESS)
		return st_odp_error(t, pd, status, drops, off, len, NULL, what);
	d = st_diff(sink, m->want[m->cur] + off, len);
	if (d != len)
		return FAIL(t, "%s: READ byte 0x%zx of the MR is 0x%02x, want 0x%02x",
			    what, off + d, sink[d], m->want[m->cur][off + d]);
	return st_same(t, m->cur, what);
}

/*
 * An RDMA @op through @rkey at @raddr, on @pd's pair, that must be
 * refused: REM_ACCESS_ERR, nothing of the MR changed; the pair is replaced.
 */
static int st_refused(struct st_thread *t, uint32_t pd, uint32_t op,
		      uint32_t rkey, uint64_t raddr, const char *what)
{
	uint32_t status;
	int err;

	mt_fill(t->src, PAGE, st_seed(t));
	err = t->ops->rdma(t, pd, op, op == MRCT_WR_RDMA_READ ? SINK_OFF : 0,
			   raddr, rkey, PAGE, &status);
	if (err)
		return FAIL(t, "%s: %s", what, strerror(-err));
	if (status != MRCT_WC_REM_ACCESS_ERR)
		return FAIL(t, "%s: wc.status %s, want REM_ACCESS_ERR", what,
			    mt_wc_name(status));
	t->count[C_REFUSED]++;
	if (st_same(t, t->m.cur, what))
		return -1;
	return st_pair_renew(t, pd);
}

/* A WRITE and, if the MR allows it, a READ of random ranges by its rkey. */
static int st_traffic(struct st_thread *t, const char *what)
{
	struct st_mr *m = &t->m;
	size_t off, len;

	st_range(t, &off, &len);
	if (st_write(t, m->pd, m->rkey, m->iova + off, off, len, what))
		return -1;
	st_range(t, &off, &len);
	if (!(m->access & RR))
		return 0;
	return st_read(t, m->pd, m->rkey, m->iova + off, off, len, what);
}

/* ---------------------------------------------------------------- */
/* The MR of a round                                                */

static uint64_t st_kiova(struct st_thread *t, int buf)
{
	return MR_IOVA + ((uint64_t)t->id << 32) +
	       ((uint64_t)(t->round * 2 + buf) % 4096) * MR_LEN * 2;
}

/* Offer the pinned MR to the group's guests. */
static void st_offer(struct st_thread *t)
{
	struct st_offer *o = &t->g->offer[t->member];
	struct st_mr *m = &t->m;

	pthread_mutex_lock(&o->lock);
	o->v.handle = m->handle;
	o->v.lkey = m->lkey;
	o->v.pd = m->pd;
	o->v.iova = m->iova;
	o->v.buf = m->buf[m->cur];
	o->v.live = true;
	pthread_mutex_unlock(&o->lock);
}

static void st_withdraw(struct st_thread *t)
{
	struct st_offer *o = &t->g->offer[t->member];
	struct st_odp *d = &st_odps[t->id];

	pthread_mutex_lock(&o->lock);
	if (o->v.live)
		o->v.gen++;
	o->v.live = false;
	pthread_mutex_unlock(&o->lock);
	pthread_mutex_lock(&d->lock);
	d->live = false;
	pthread_mutex_unlock(&d->lock);
}

static int st_mr_new(struct st_thread *t)
{
	struct st_mr *m = &t->m;
	struct st_odp *d = &st_odps[t->id];
	int i, n, err;

	m->odp = !st_rand(t, 3);
	m->pd = st_rand(t, MRCT_NUM_PDS);
	m->access = m->odp ? LW | RW | RR | ODP : LW | RW | RR | MWB;
	m->cur = 0;
	n = m->odp ? 1 : 2;
	for (i = 0; i < n; i++) {
		m->buf[i] = st_map(m->odp);
		if (!m->buf[i])
			return FAIL(t, "mmap: %s", strerror(errno));
		mt_fill(m->buf[i], MR_LEN, st_seed(t));
		memcpy(m->want[i], m->buf[i], OWN_LEN);
	}
	err = t->ops->reg(t, m);
	if (err)
		return FAIL(t, "%s registration on PD %u: %s",
			    m->odp ? "ODP" : "pinned", m->pd, strerror(-err));
	m->live = true;
	t->count[m->odp ? C_REG_ODP : C_REG]++;
	if (m->odp) {
		pthread_mutex_lock(&d->lock);
		d->buf = m->buf[0];
		d->live = true;
		pthread_mutex_unlock(&d->lock);
	}
	return 0;
}

/*
 * Deregister the MR, the offer withdrawn; -EBUSY (a guest's window) is
 * retried for DEADLINE_MS.
 */
static int st_dereg(struct st_thread *t)
{
	struct st_offer *o = &t->g->offer[t->member];
	uint64_t end = uu_now_ms() + DEADLINE_MS, done;
	struct st_mr *m = &t->m;
	int err;

	st_withdraw(t);
	for (;;) {
		done = st_unbinds(o);
		err = t->ops->dereg(t, m);
		if (!err)
			break;
		if (err != -EBUSY)
			return FAIL(t, "dereg: %s", strerror(-err));
		if (!st_busy_ok(o, done))
			return FAIL(t, "dereg: EBUSY, yet no guest's window can be bound");
		t->count[T_DEREG_BUSY]++;
		if (uu_now_ms() > end)
			return FAIL(t, "dereg: still EBUSY after %u s",
				    DEADLINE_MS / 1000);
		usleep(1000);
	}
	m->live = false;
	t->count[C_DEREG]++;
	return 0;
}

/* Free what is left of the round's MR; the ODP buffer maybe unmapped first. */
static int st_mr_free(struct st_thread *t, bool unmap_first)
{
	struct st_mr *m = &t->m;
	int i, ret = 0;

	st_withdraw(t);
	if (unmap_first && m->odp && m->buf[0]) {
		if (munmap(m->buf[0], MR_LEN))
			ret = FAIL(t, "munmap under the ODP MR: %s",
				   strerror(errno));
		m->buf[0] = NULL;
		t->count[C_MUNMAP]++;
	}
	if (m->live && st_dereg(t))
		ret = -1;
	for (i = 0; i < 2; i++) {
		if (m->buf[i] && munmap(m->buf[i], MR_LEN))
			ret = FAIL(t, "munmap: %s", strerror(errno));
		m->buf[i] = NULL;
	}
	return ret;
}

/*
 * One rereg of the pinned MR with @flags: TRANS to the other buffer, PD
 * to the other PD, ACCESS with REMOTE_READ flipped; then traffic.
 */
static int st_rereg(struct st_thread *t, uint32_t flags)
{
	struct st_mr *m = &t->m;
	uint32_t old_pd = m->pd;
	int old_buf = m->cur, err;

	err = t->ops->rereg(t, m, flags,
			    flags & MRCT_REREG_PD ? !m->pd : m->pd,
			    flags & MRCT_REREG_TRANS ? !m->cur : m->cur,
			    flags & MRCT_REREG_ACCESS ? m->access ^ RR : m->access);
	if (err)
		return FAIL(t, "rereg 0x%x: %s", flags, strerror(-err));
	t->count[C_REREG_TRANS] += !!(flags & MRCT_REREG_TRANS);
	t->count[C_REREG_PD] += !!(flags & MRCT_REREG_PD);
	t->count[C_REREG_ACCESS] += !!(flags & MRCT_REREG_ACCESS);
	if (st_traffic(t, "after a rereg"))
		return -1;
	if (!(m->access & RR) &&
	    st_refused(t, m->pd, MRCT_WR_RDMA_READ, m->rkey, m->iova,
		       "READ without REMOTE_READ after a rereg"))
		return -1;
	if (m->pd != old_pd && st_rand(t, 2) &&
	    st_refused(t, old_pd, MRCT_WR_RDMA_WRITE, m->rkey, m->iova,
		       "WRITE from the old PD after a rereg"))
		return -1;
	if (m->cur != old_buf)
		return st_same(t, old_buf, "the buffer a rereg left");
	return 0;
}

static int st_rereg_phase(struct st_thread *t)
{
	int i, n = 1 + st_rand(t, 2);

	for (i = 0; i < n; i++)
		if (st_rereg(t, 1 + st_rand(t, 7)))
			return -1;
	if (!(t->m.access & RR))
		return st_rereg(t, MRCT_REREG_ACCESS);
	return 0;
}

/*
 * While offered: an ACCESS rereg to the same rights. 0, keys kept (vhca
 * reregisters in place), or -EBUSY for a guest's window.
 */
static int st_rereg_offered(struct st_thread *t)
{
	struct st_offer *o = &t->g->offer[t->member];
	struct st_mr *m = &t->m;
	uint32_t lkey = m->lkey, rkey = m->rkey;
	uint64_t done = st_unbinds(o);
	int err;

	err = t->ops->rereg(t, m, MRCT_REREG_ACCESS, m->pd, m->cur, m->access);
	if (err == -EBUSY) {
		if (!st_busy_ok(o, done))
			return FAIL(t, "offered rereg: EBUSY, yet no guest's window can be bound");
		t->count[T_REREG_BUSY]++;
		return 0;
	}
	if (err)
		return FAIL(t, "offered rereg: %s", strerror(-err));
	t->count[C_REREG_ACCESS]++;
	if (m->lkey != lkey || m->rkey != rkey)
		return FAIL(t, "offered rereg: keys 0x%x/0x%x became 0x%x/0x%x",
			    lkey, rkey, m->lkey, m->rkey);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Windows                                                          */

static int st_mw_free(struct st_thread *t, struct st_mw *w)
{
	int err;

	if (!w->live)
		return 0;
	err = t->ops->mw_free(t, w);
	w->live = false;
	if (w->offer)
		__atomic_add_fetch(&w->offer->unbinds_done, 1, __ATOMIC_RELEASE);
	w->offer = NULL;
	if (err)
		return FAIL(t, "window dealloc: %s", strerror(-err));
	return 0;
}

/* LOCAL_INV of a type 2 window's rkey, which must succeed. */
static int st_inv(struct st_thread *t, struct st_mw *w)
{
	uint32_t status;
	int err = t->ops->inv(t, w->pd, w->rkey, &status);

	if (err)
		return FAIL(t, "LOCAL_INV: %s", strerror(-err));
	if (status != MRCT_WC_SUCCESS)
		return FAIL(t, "LOCAL_INV of window 0x%x: wc.status %s", w->rkey,
			    mt_wc_name(status));
	t->count[C_INV]++;
	return 0;
}

/*
 * A type 2 window over a random range of the pinned MR: bound, data
 * through it both ways, LOCAL_INV, then maybe a WRITE through the stale
 * rkey refused; freed.
 */
static int st_own_window(struct st_thread *t)
{
	struct st_mr *m = &t->m;
	struct st_mw *w = &t->own;
	size_t off, len, o2, l2;
	uint32_t status;
	int err;

	err = t->ops->mw_alloc(t, m->pd, MRCT_MW_TYPE_2, w);
	if (err)
		return FAIL(t, "type 2 window alloc: %s", strerror(-err));
	st_range(t, &off, &len);
	err = t->ops->bind2(t, w, m->lkey, m->iova + off, len, &status);
	if (err || status != MRCT_WC_SUCCESS)
		return FAIL(t, "Bind MW of its own MR: %s, wc.status %s",
			    strerror(-err), mt_wc_name(status));
	t->count[C_MW2]++;
	o2 = off + 8 * st_rand(t, len / 8);
	l2 = 8 * (1 + st_rand(t, (off + len - o2) / 8));
	if (st_write(t, m->pd, w->rkey, m->iova + o2, o2, l2,
		     "WRITE through its type 2 window") ||
	    st_read(t, m->pd, w->rkey, m->iova + off, off, len,
		    "READ through its type 2 window") ||
	    st_inv(t, w))
		return -1;
	if (st_rand(t, 2) &&
	    st_refused(t, m->pd, MRCT_WR_RDMA_WRITE, w->rkey, m->iova + off,
		       "WRITE through an invalidated window"))
		return -1;
	return st_mw_free(t, w);
}

/* Whether the owner withdrew offer @o since its generation was @gen. */
static bool st_withdrawn(struct st_offer *o, uint32_t gen)
{
	bool changed;

	pthread_mutex_lock(&o->lock);
	changed = o->v.gen != gen;
	pthread_mutex_unlock(&o->lock);
	return changed;
}

/*
 * A bind of the guest's window @w (type @type) to offer @o, read as
 * @snap: 0 bound, 1 refused as bind_gone (the pair replaced after a
 * refused Bind MW WR), -1 failed.
 */
static int st_guest_bind(struct st_thread *t, struct st_mw *w, int type,
			 struct st_offer *o, const struct st_offered *snap,
			 uint64_t addr)
{
	uint32_t status = MRCT_WC_SUCCESS;
	bool gone;
	int err;

	if (type == MRCT_MW_TYPE_1) {
		err = t->ops->bind1(t, w, snap->handle, addr, GUEST_SLOT);
		gone = err == -ENOENT;
	} else {
		err = t->ops->bind2(t, w, snap->lkey, addr, GUEST_SLOT, &status);
		gone = !err && status == MRCT_WC_MW_BIND_ERR;
	}
	if (!err && status == MRCT_WC_SUCCESS)
		return 0;
	if (!gone)
		return FAIL(t, "guest bind (type %d): %s, wc.status %s", type,
			    strerror(-err), mt_wc_name(status));
	if (!st_withdrawn(o, snap->gen))
		return FAIL(t, "guest bind (type %d) refused (%s) while the MR is offered",
			    type, err ? strerror(-err) : mt_wc_name(status));
	t->count[T_BIND_GONE]++;
	if (status != MRCT_WC_SUCCESS && st_pair_renew(t, w->pd))
		return -1;
	return 1;
}

/*
 * A guest's window on another thread's offered MR, over this thread's
 * slot of its last page: bound (type 1 or 2), written through, the
 * owner's buffer checked, unbound, freed.
 */
static int st_guest(struct st_thread *t)
{
	struct st_group *g = t->g;
	struct st_mw *w = &t->guest;
	size_t slot = GUEST_OFF + t->member * GUEST_SLOT;
	unsigned int i, first = st_rand(t, g->members);
	struct st_offered snap = {};
	struct st_offer *o = NULL;
	uint32_t status;
	int err, type;

	/* The first offer live, from a random member on. */
	for (i = 0; i < g->members && !snap.live; i++) {
		o = &g->offer[(first + i) % g->members];
		if (o == &g->offer[t->member])
			continue;
		pthread_mutex_lock(&o->lock);
		snap = o->v;
		pthread_mutex_unlock(&o->lock);
	}
	if (!snap.live)
		return 0;

	type = t->ops->bind1 && st_rand(t, 2) ? MRCT_MW_TYPE_1 : MRCT_MW_TYPE_2;
	__atomic_add_fetch(&o->binds_started, 1, __ATOMIC_RELEASE);
	err = t->ops->mw_alloc(t, snap.pd, type, w);
	if (err) {
		__atomic_add_fetch(&o->unbinds_done, 1, __ATOMIC_RELEASE);
		return FAIL(t, "guest window alloc: %s", strerror(-err));
	}
	w->offer = o;
	err = st_guest_bind(t, w, type, o, &snap, snap.iova + slot);
	if (err)
		return err < 0 ? -1 : st_mw_free(t, w);
	t->count[type == MRCT_MW_TYPE_1 ? C_MW1 : C_MW2]++;
	t->count[C_GUEST]++;

	mt_fill(t->src, GUEST_SLOT, st_seed(t));
	err = t->ops->rdma(t, snap.pd, MRCT_WR_RDMA_WRITE, 0, snap.iova + slot,
			   w->rkey, GUEST_SLOT, &status);
	if (err || status != MRCT_WC_SUCCESS)
		return FAIL(t, "guest WRITE through its window: %s, wc.status %s",
			    strerror(-err), mt_wc_name(status));
	t->count[C_WRITE]++;
	/* The window holds the MR, so the owner's buffer is still mapped. */
	if (memcmp(snap.buf + slot, t->src, GUEST_SLOT))
		return FAIL(t, "guest WRITE through its window: not in the owner's buffer");
	if (type == MRCT_MW_TYPE_2)
		err = st_inv(t, w);
	else if (t->ops->bind1(t, w, 0, 0, 0))
		err = FAIL(t, "guest unbind of a type 1 window");
	if (err)
		return -1;
	return st_mw_free(t, w);
}

/* ---------------------------------------------------------------- */
/* A thread                                                         */

static int st_round(struct st_thread *t)
{
	struct st_mr *m = &t->m;

	if (st_mr_new(t) || st_traffic(t, "a new MR"))
		return -1;
	if (!m->odp) {
		if (st_rereg_phase(t))
			return -1;
		st_offer(t);
	}
	if (st_guest(t) || (!m->odp && st_own_window(t)) || st_guest(t))
		return -1;
	if (t->ops->extras && t->ops->extras(t))
		return -1;
	if (st_guest(t))
		return -1;
	if (!m->odp && st_rereg_offered(t))
		return -1;
	if (st_traffic(t, "after the guests"))
		return -1;
	if (st_mr_free(t, st_rand(t, 2)))
		return -1;
	if (t->round % 4 == 3)
		return st_pair_renew(t, st_rand(t, MRCT_NUM_PDS));
	return 0;
}

/* Windows, the MR and its buffers of a round that stopped half way. */
static void st_unwind_round(struct st_thread *t)
{
	st_mw_free(t, &t->guest);
	st_mw_free(t, &t->own);
	st_mr_free(t, false);
}

static int st_thread_init(struct st_thread *t)
{
	uint32_t pd;
	int err, i;

	t->src = mmap(NULL, SRC_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->src == MAP_FAILED) {
		t->src = NULL;
		return FAIL(t, "mmap: %s", strerror(errno));
	}
	for (i = 0; i < 2; i++) {
		t->m.want[i] = malloc(OWN_LEN);
		if (!t->m.want[i])
			return FAIL(t, "malloc: %s", strerror(errno));
	}
	for (pd = 0; pd < MRCT_NUM_PDS; pd++) {
		err = t->ops->src_reg(t, pd);
		if (err)
			return FAIL(t, "source MR on PD %u: %s", pd,
				    strerror(-err));
		err = t->ops->pair_up(t, pd);
		if (err)
			return FAIL(t, "pair on PD %u: %s", pd, strerror(-err));
		t->count[C_QP]++;
	}
	return 0;
}

static void st_thread_fini(struct st_thread *t)
{
	uint32_t pd;
	int err, i;

	for (pd = 0; pd < MRCT_NUM_PDS; pd++) {
		err = t->ops->pair_down(t, pd);
		if (err)
			FAIL(t, "pair on PD %u: destroy: %s", pd, strerror(-err));
		err = t->ops->src_dereg(t, pd);
		if (err)
			FAIL(t, "source MR on PD %u: dereg: %s", pd,
			     strerror(-err));
	}
	for (i = 0; i < 2; i++)
		free(t->m.want[i]);
	if (t->src)
		munmap(t->src, SRC_LEN);
}

static void *st_thread_main(void *arg)
{
	struct st_thread *t = arg;

	if (!st_thread_init(t)) {
		for (t->round = 0; t->round < opt_rounds && !st_stopped();
		     t->round++)
			if (st_round(t))
				break;
	}
	st_unwind_round(t);
	st_thread_fini(t);
	return NULL;
}

/* The invalidator: drops pages of live ODP buffers until told to stop. */
struct st_dropper {
	pthread_t tid;
	unsigned int threads;
	bool stop;		/* __atomic */
	uint64_t rng;
	unsigned long drops;
	int err;
};

static void *st_dropper_main(void *arg)
{
	struct st_dropper *dr = arg;
	struct st_odp *d;
	uint64_t r;
	size_t off, len;

	while (!__atomic_load_n(&dr->stop, __ATOMIC_ACQUIRE)) {
		r = st_next(&dr->rng);
		d = &st_odps[r % dr->threads];
		off = (r >> 16) % MR_PAGES;
		len = 1 + (r >> 24) % (MR_PAGES - off);
		pthread_mutex_lock(&d->lock);
		if (d->live) {
			if (madvise(d->buf + off * PAGE, len * PAGE,
				    MADV_DONTNEED))
				dr->err = errno;
			__atomic_add_fetch(&d->drops, 1, __ATOMIC_RELEASE);
			dr->drops++;
		}
		pthread_mutex_unlock(&d->lock);
		usleep(DROP_PAUSE_US);
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* The kernel half: /dev/mrcore_test                                */

static int k_pair_up(struct st_thread *t, uint32_t pd)
{
	struct mrct_qp_create qc;
	int err = mt_pair(t->g->fd, pd, QP_ACCESS, 1, 0, &qc);

	if (err)
		return err;
	t->kpair[pd] = qc.handle;
	/* The windows, the device reads and rereg in place need vhca. */
	return qc.flags & MRCT_QP_F_VHCA ? 0 : -ENODEV;
}

static int k_pair_down(struct st_thread *t, uint32_t pd)
{
	struct mrct_qp_destroy d = { .handle = t->kpair[pd] };

	if (!d.handle)
		return 0;
	t->kpair[pd] = 0;
	return mt_ioctl(t->g->fd, MRCT_QP_DESTROY, &d);
}

static int k_src_reg(struct st_thread *t, uint32_t pd)
{
	struct mrct_reg reg;
	int err = mt_reg(t->g->fd, t->src, SRC_LEN, SRC_IOVA, QP_ACCESS, pd,
			 &reg);

	if (err)
		return err;
	t->ksrc[pd] = reg.handle;
	t->ksrc_lkey[pd] = reg.info.lkey;
	return 0;
}

static int k_src_dereg(struct st_thread *t, uint32_t pd)
{
	uint32_t h = t->ksrc[pd];

	t->ksrc[pd] = 0;
	return h ? mt_dereg(t->g->fd, h) : 0;
}

static int k_reg(struct st_thread *t, struct st_mr *m)
{
	struct mrct_reg reg;
	uint64_t iova = st_kiova(t, m->cur);
	int err;

	err = mt_reg(t->g->fd, m->buf[m->cur], MR_LEN, iova, m->access, m->pd,
		     &reg);
	if (err)
		return err;
	m->handle = reg.handle;
	m->lkey = reg.info.lkey;
	m->rkey = reg.info.rkey;
	m->iova = iova;
	return 0;
}

static int k_rereg(struct st_thread *t, struct st_mr *m, uint32_t flags,
		   uint32_t pd, int buf, uint32_t access)
{
	struct mrct_rereg r = {
		.handle = m->handle,
		.flags = flags,
		.access = access,
		.pd = pd,
	};
	int err;

	if (flags & MRCT_REREG_TRANS) {
		r.addr = (uintptr_t)m->buf[buf];
		r.length = MR_LEN;
		r.iova = st_kiova(t, buf);
	}
	err = mt_ioctl(t->g->fd, MRCT_REREG, &r);
	if (err)
		return err;
	m->lkey = r.info.lkey;
	m->rkey = r.info.rkey;
	if (flags & MRCT_REREG_TRANS)
		m->iova = r.iova;
	m->pd = pd;
	m->cur = buf;
	m->access = access;
	return 0;
}

static int k_dereg(struct st_thread *t, struct st_mr *m)
{
	return mt_dereg(t->g->fd, m->handle);
}

static int k_rdma(struct st_thread *t, uint32_t pd, uint32_t op,
		  uint64_t soff, uint64_t raddr, uint32_t rkey, uint32_t len,
		  uint32_t *status)
{
	struct mrct_qp_post p = {
		.handle = t->kpair[pd],
		.qp = 1,		/* B requests, A answers */
		.opcode = op,
		.rkey = rkey,
		.remote_addr = raddr,
		.num_sge = 1,
		.sge[0] = {
			.addr = SRC_IOVA + soff,
			.length = len,
			.lkey = t->ksrc_lkey[pd],
		},
	};
	int err = mt_ioctl(t->g->fd, MRCT_QP_POST, &p);

	if (err)
		return err;
	*status = p.status;
	return p.post_err;
}

static int k_mw_alloc(struct st_thread *t, uint32_t pd, int type,
		      struct st_mw *w)
{
	struct mrct_mw_alloc a = { .pd = pd, .type = type };
	int err = mt_ioctl(t->g->fd, MRCT_MW_ALLOC, &a);

	if (err)
		return err;
	w->live = true;
	w->type = type;
	w->pd = pd;
	w->handle = a.handle;
	w->rkey = a.rkey;
	return 0;
}

static int k_mw_free(struct st_thread *t, struct st_mw *w)
{
	struct mrct_mw_handle h = { .handle = w->handle };

	return mt_ioctl(t->g->fd, MRCT_MW_DEALLOC, &h);
}

static int k_bind2(struct st_thread *t, struct st_mw *w, uint32_t lkey,
		   uint64_t addr, uint64_t len, uint32_t *status)
{
	struct mrct_mw_bind_wr b = {
		.addr = addr,
		.length = len,
		.handle = w->handle,
		.key_mode = MRCT_MW_KEY_NEXT,
		.mr_lkey = lkey,
		.access = RW | RR,
		.pair = t->kpair[w->pd],
		.qp = 0,
	};
	int err = mt_ioctl(t->g->fd, MRCT_MW_BIND_WR, &b);

	if (err)
		return err;
	*status = b.status;
	if (b.status == MRCT_WC_SUCCESS)
		w->rkey = b.rkey;
	return b.post_err;
}

static int k_bind1(struct st_thread *t, struct st_mw *w, uint32_t mr,
		   uint64_t addr, uint64_t len)
{
	struct mrct_mw_bind b = {
		.addr = addr,
		.length = len,
		.handle = w->handle,
		.mr = mr,
		.access = len ? RW | RR : 0,
	};
	int err = mt_ioctl(t->g->fd, MRCT_MW_BIND, &b);

	w->rkey = b.rkey;
	return err;
}

static int k_inv(struct st_thread *t, uint32_t pd, uint32_t rkey,
		 uint32_t *status)
{
	struct mrct_frwr_inv i = {
		.pair = t->kpair[pd],
		.qp = 0,
		.opcode = MRCT_WR_LOCAL_INV,
		.key = rkey,
	};
	int err = mt_ioctl(t->g->fd, MRCT_FRWR_INV, &i);

	if (err)
		return err;
	*status = i.status;
	return i.post_err;
}

/* MRCT_DEV_@req of @len bytes at byte @off of the MR, through its lkey. */
static int k_dev(struct st_thread *t, unsigned long req, size_t off,
		 void *buf, size_t len)
{
	struct mrct_xfer x = {
		.iova = t->m.iova + off,
		.length = len,
		.ptr = (uintptr_t)buf,
		.handle = t->m.handle,
		.pd = t->m.pd,
	};

	return mt_ioctl(t->g->fd, req, &x);
}

/* The device writes (pinned) and reads through the lkey. */
static int k_dev_rw(struct st_thread *t)
{
	struct st_mr *m = &t->m;
	uint8_t *sink = t->src + SINK_OFF;
	size_t off, len, d;
	int err;

	if (!m->odp) {
		st_range(t, &off, &len);
		mt_fill(t->src, len, st_seed(t));
		err = k_dev(t, MRCT_DEV_WRITE, off, t->src, len);
		if (err)
			return FAIL(t, "MRCT_DEV_WRITE: %s", strerror(-err));
		t->count[C_DEV_RW]++;
		memcpy(m->want[m->cur] + off, t->src, len);
		if (st_same(t, m->cur, "after MRCT_DEV_WRITE"))
			return -1;
	}
	st_range(t, &off, &len);
	err = k_dev(t, MRCT_DEV_READ, off, sink, len);
	if (err == -EAGAIN && m->odp) {
		t->count[T_DEV_EAGAIN]++;
		return 0;
	}
	if (err)
		return FAIL(t, "MRCT_DEV_READ: %s", strerror(-err));
	t->count[C_DEV_RW]++;
	d = st_diff(sink, m->want[m->cur] + off, len);
	if (d != len)
		return FAIL(t, "MRCT_DEV_READ: byte 0x%zx is 0x%02x, want 0x%02x",
			    off + d, sink[d], m->want[m->cur][off + d]);
	return 0;
}

/* A type 1 window of the pinned MR: bound, written through, unbound. */
static int k_window1(struct st_thread *t)
{
	struct st_mr *m = &t->m;
	struct st_mw *w = &t->own;
	size_t off, len;
	int err;

	err = k_mw_alloc(t, m->pd, MRCT_MW_TYPE_1, w);
	if (err)
		return FAIL(t, "type 1 window alloc: %s", strerror(-err));
	st_range(t, &off, &len);
	err = k_bind1(t, w, m->handle, m->iova + off, len);
	if (err)
		return FAIL(t, "type 1 bind of its own MR: %s", strerror(-err));
	t->count[C_MW1]++;
	if (st_write(t, m->pd, w->rkey, m->iova + off, off, len,
		     "WRITE through its type 1 window"))
		return -1;
	err = k_bind1(t, w, 0, 0, 0);
	if (err)
		return FAIL(t, "type 1 unbind: %s", strerror(-err));
	return st_mw_free(t, w);
}

/* REG_MR / WRITE / verify / LOCAL_INV cycles of an FRWR MR, by the module. */
static int k_frwr(struct st_thread *t)
{
	uint32_t pd = st_rand(t, MRCT_NUM_PDS);
	struct mrct_frwr_alloc a = {
		.pd = pd, .max_pages = 8, .nchunks = 8, .chunk_shift = 12,
	};
	struct mrct_frwr_cycle c = {
		.pair = t->kpair[pd],
		.cycles = 4,
		.max_nents = 8,
		.access = LW | RW,
		.seed = (uint32_t)st_seed(t),
	};
	struct mrct_frwr_free f = {};
	int err, ret = 0;

	err = mt_ioctl(t->g->fd, MRCT_FRWR_ALLOC, &a);
	if (err)
		return FAIL(t, "MRCT_FRWR_ALLOC: %s", strerror(-err));
	c.handle = a.handle;
	err = mt_ioctl(t->g->fd, MRCT_FRWR_CYCLE, &c);
	if (err)
		ret = FAIL(t, "MRCT_FRWR_CYCLE: %s", strerror(-err));
	else if (c.step != MRCT_FRWR_STEP_NONE || c.done != c.cycles)
		ret = FAIL(t, "FRWR cycle %u of %u stopped at step %u: err %d, wc.status %s",
			   c.done, c.cycles, c.step, c.err,
			   mt_wc_name(c.status));
	t->count[C_FRWR] += c.done;
	f.handle = a.handle;
	err = mt_ioctl(t->g->fd, MRCT_FRWR_FREE, &f);
	if (err)
		ret = FAIL(t, "MRCT_FRWR_FREE: %s", strerror(-err));
	return ret;
}

static int k_extras(struct st_thread *t)
{
	if (k_dev_rw(t))
		return -1;
	if (!t->m.odp && k_window1(t))
		return -1;
	return k_frwr(t);
}

static const struct st_ops k_ops = {
	.name = "kernel",
	.pair_up = k_pair_up,
	.pair_down = k_pair_down,
	.src_reg = k_src_reg,
	.src_dereg = k_src_dereg,
	.reg = k_reg,
	.rereg = k_rereg,
	.dereg = k_dereg,
	.rdma = k_rdma,
	.mw_alloc = k_mw_alloc,
	.mw_free = k_mw_free,
	.bind2 = k_bind2,
	.bind1 = k_bind1,
	.inv = k_inv,
	.extras = k_extras,
};

/* ---------------------------------------------------------------- */
/* The user half: libibverbs, libvhca                               */

static int u_pair_down(struct st_thread *t, uint32_t pd)
{
	struct st_upair *p = &t->upair[pd];
	int i, ret = 0;

	for (i = 0; i < 2; i++)
		if (p->qp[i])
			ret = ibv_destroy_qp(p->qp[i]) ?: ret;
	if (p->cq)
		ret = ibv_destroy_cq(p->cq) ?: ret;
	memset(p, 0, sizeof(*p));
	return -ret;
}

static int u_pair_up(struct st_thread *t, uint32_t pd)
{
	struct st_upair *p = &t->upair[pd];
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i, ret;

	p->cq = ibv_create_cq(t->g->ctx, 64, NULL, NULL, 0);
	if (!p->cq)
		return -errno;
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	for (i = 0; i < 2; i++) {
		p->qp[i] = ibv_create_qp(t->g->pd[pd], &ia);
		if (!p->qp[i])
			return -errno;
	}
	for (i = 0; i < 2; i++) {
		ret = uu_qp_to_rts(p->qp[i], QP_ACCESS, p->qp[!i]->qp_num,
				   t->g->gid_index, &t->g->gid);
		if (ret)
			return -ret;
	}
	return 0;
}

static int u_src_reg(struct st_thread *t, uint32_t pd)
{
	t->usrc[pd] = ibv_reg_mr(t->g->pd[pd], t->src, SRC_LEN, QP_ACCESS);
	return t->usrc[pd] ? 0 : -errno;
}

static int u_src_dereg(struct st_thread *t, uint32_t pd)
{
	struct ibv_mr *mr = t->usrc[pd];

	t->usrc[pd] = NULL;
	return mr ? -ibv_dereg_mr(mr) : 0;
}

static int u_reg(struct st_thread *t, struct st_mr *m)
{
	m->mr = ibv_reg_mr(t->g->pd[m->pd], m->buf[m->cur], MR_LEN,
			   m->access);
	if (!m->mr)
		return -errno;
	m->lkey = m->mr->lkey;
	m->rkey = m->mr->rkey;
	m->iova = (uintptr_t)m->mr->addr;
	return 0;
}

static int u_rereg(struct st_thread *t, struct st_mr *m, uint32_t flags,
		   uint32_t pd, int buf, uint32_t access)
{
	int ret = vhcav_rereg_mr(m->mr, flags, t->g->pd[pd], m->buf[buf],
				 MR_LEN, access);

	if (ret)
		return -ret;
	m->lkey = m->mr->lkey;
	m->rkey = m->mr->rkey;
	m->iova = (uintptr_t)m->mr->addr;
	m->pd = pd;
	m->cur = buf;
	m->access = access;
	return 0;
}

static int u_dereg(struct st_thread *t, struct st_mr *m)
{
	return -ibv_dereg_mr(m->mr);
}

/* Post @wr on QP @qp of @pd's pair and wait for its completion. */
static int u_post_wait(struct st_thread *t, uint32_t pd, int qp,
		       struct ibv_send_wr *wr, uint32_t *status)
{
	struct st_upair *p = &t->upair[pd];
	uint64_t end = uu_now_ms() + DEADLINE_MS;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int n, ret;

	wr->wr_id = ++p->wr_id;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(p->qp[qp], wr, &bad);
	if (ret)
		return -ret;
	while (uu_now_ms() < end) {
		n = ibv_poll_cq(p->cq, 1, &wc);
		if (n < 0)
			return -EIO;
		if (!n) {
			usleep(100);
			continue;
		}
		if (wc.wr_id == wr->wr_id) {
			*status = wc.status;
			return 0;
		}
	}
	return -ETIMEDOUT;
}

static int u_rdma(struct st_thread *t, uint32_t pd, uint32_t op,
		  uint64_t soff, uint64_t raddr, uint32_t rkey, uint32_t len,
		  uint32_t *status)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->src + soff,
		.length = len,
		.lkey = t->usrc[pd]->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op == MRCT_WR_RDMA_READ ? IBV_WR_RDMA_READ :
						    IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return u_post_wait(t, pd, 0, &wr, status);
}

static int u_mw_alloc(struct st_thread *t, uint32_t pd, int type,
		      struct st_mw *w)
{
	w->mw = ibv_alloc_mw(t->g->pd[pd], type == MRCT_MW_TYPE_1 ?
			     IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	if (!w->mw)
		return -errno;
	w->live = true;
	w->type = type;
	w->pd = pd;
	w->rkey = w->mw->rkey;
	return 0;
}

static int u_mw_free(struct st_thread *t, struct st_mw *w)
{
	return -ibv_dealloc_mw(w->mw);
}

/*
 * librxe takes only the lkey of bind_info.mr, so a guest names another
 * thread's MR by a copy that holds its lkey, never by the owner's
 * struct ibv_mr, which its dereg frees.
 */
static int u_bind2(struct st_thread *t, struct st_mw *w, uint32_t lkey,
		   uint64_t addr, uint64_t len, uint32_t *status)
{
	struct ibv_mr mr = { .lkey = lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = {
			.mw = w->mw,
			.rkey = ibv_inc_rkey(w->mw->rkey),
			.bind_info = {
				.mr = &mr,
				.addr = addr,
				.length = len,
				.mw_access_flags = RW | RR,
			},
		},
	};
	int err = u_post_wait(t, w->pd, 1, &wr, status);

	if (!err && *status == IBV_WC_SUCCESS) {
		/* ibv_post_send(3): the caller keeps mw->rkey. */
		w->mw->rkey = wr.bind_mw.rkey;
		w->rkey = wr.bind_mw.rkey;
	}
	return err;
}

static int u_inv(struct st_thread *t, uint32_t pd, uint32_t rkey,
		 uint32_t *status)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = rkey,
	};

	return u_post_wait(t, pd, 1, &wr, status);
}

static const struct st_ops u_ops = {
	.name = "user",
	.pair_up = u_pair_up,
	.pair_down = u_pair_down,
	.src_reg = u_src_reg,
	.src_dereg = u_src_dereg,
	.reg = u_reg,
	.rereg = u_rereg,
	.dereg = u_dereg,
	.rdma = u_rdma,
	.mw_alloc = u_mw_alloc,
	.mw_free = u_mw_free,
	.bind2 = u_bind2,
	.inv = u_inv,
};

/* ---------------------------------------------------------------- */
/* Groups, the run                                                  */

/* Open a group's context: NULL, or why not. */
static const char *st_group_open(struct st_group *g)
{
	int i;

	for (i = 0; i < GROUP_MAX; i++)
		pthread_mutex_init(&g->offer[i].lock, NULL);
	if (!g->user) {
		g->fd = mt_open(opt_dev);
		return g->fd < 0 ? "cannot bind /dev/" MRCT_DEV_NAME : NULL;
	}
	g->ctx = uu_open_device(opt_dev);
	if (!g->ctx)
		return "cannot open the device with libibverbs";
	if (!vhcav_is_vhca(g->ctx))
		return "libvhca: not a vhca device";
	for (i = 0; i < MRCT_NUM_PDS; i++) {
		g->pd[i] = ibv_alloc_pd(g->ctx);
		if (!g->pd[i])
			return "ibv_alloc_pd failed";
	}
	g->gid_index = uu_roce_gid(g->ctx, &g->gid);
	if (g->gid_index < 0) {
		/* For the caller's strerror(errno). */
		errno = -g->gid_index;
		return "no IPv4 RoCE v2 GID on port 1";
	}
	return NULL;
}

/* Close a group's context: 0 or -errno, everything tried. */
static int st_group_close(struct st_group *g)
{
	int i, ret = 0;

	if (!g->user)
		return g->fd >= 0 && close(g->fd) ? -errno : 0;
	for (i = 0; i < MRCT_NUM_PDS; i++)
		if (g->pd[i])
			ret = ibv_dealloc_pd(g->pd[i]) ?: ret;
	if (g->ctx)
		ret = ibv_close_device(g->ctx) ? errno : ret;
	return -ret;
}

/* Threads first/.. of one half, in @ngroups groups from @groups. */
static void st_plan(struct st_thread *threads, unsigned int first,
		    unsigned int n, struct st_group *groups, bool user)
{
	unsigned int ngroups = (n + GROUP_MAX - 1) / GROUP_MAX, i;

	for (i = 0; i < ngroups; i++) {
		groups[i].user = user;
		groups[i].fd = -1;
	}
	for (i = 0; i < n; i++) {
		struct st_thread *t = &threads[first + i];

		t->id = first + i;
		t->g = &groups[i % ngroups];
		t->member = t->g->members++;
		t->ops = user ? &u_ops : &k_ops;
		t->rng = (uint64_t)opt_seed << 32 | t->id;
	}
}

/* The summary line of one half. */
static void st_summary(const struct st_thread *threads, unsigned int n,
		       const char *half, unsigned int groups)
{
	unsigned long sum[C_NUM] = {};
	char line[2048];
	unsigned int i, c;
	int len;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		for (c = 0; c < C_NUM; c++)
			sum[c] += threads[i].count[c];
	len = snprintf(line, sizeof(line),
		       "# stress: summary: %s half, %u threads in %u contexts, %u rounds:",
		       half, n, groups, opt_rounds);
	for (c = 0; c < C_NUM && len < (int)sizeof(line); c++)
		len += snprintf(line + len, sizeof(line) - len, " %s %lu",
				st_count_names[c], sum[c]);
	fprintf(stderr, "%s\n", line);
}

/* One case; a fixture only for TEST_F_TIMEOUT's bound. */
FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, concurrency, TIMEOUT_S)
{
	static struct st_thread threads[MAX_THREADS];
	static struct st_group groups[2 * MAX_THREADS];
	unsigned int nk, nu, gk, gu, i;
	struct st_dropper dr = { .rng = opt_seed };
	const char *why;

	nk = opt_kernel ? (opt_user ? (opt_threads + 1) / 2 : opt_threads) : 0;
	nu = opt_threads - nk;
	gk = (nk + GROUP_MAX - 1) / GROUP_MAX;
	gu = (nu + GROUP_MAX - 1) / GROUP_MAX;
	st_plan(threads, 0, nk, groups, false);
	st_plan(threads, nk, nu, groups + gk, true);
	TH_LOG("%s, seed %u, %u rounds: kernel %u threads in %u files, user %u in %u contexts",
	       opt_dev, opt_seed, opt_rounds, nk, gk, nu, gu);
	for (i = 0; i < gk + gu; i++) {
		why = st_group_open(&groups[i]);
		if (why)
			TH_LOG("context %u (%s half) on %s: %s (%s)", i,
			       groups[i].user ? "user" : "kernel", opt_dev, why,
			       strerror(errno));
		ASSERT_EQ(NULL, why);
	}
	for (i = 0; i < opt_threads; i++)
		pthread_mutex_init(&st_odps[i].lock, NULL);

	dr.threads = opt_threads;
	ASSERT_EQ(0, pthread_create(&dr.tid, NULL, st_dropper_main, &dr));
	for (i = 0; i < opt_threads; i++)
		ASSERT_EQ(0, pthread_create(&threads[i].tid, NULL,
					    st_thread_main, &threads[i]));
	for (i = 0; i < opt_threads; i++)
		ASSERT_EQ(0, pthread_join(threads[i].tid, NULL));
	__atomic_store_n(&dr.stop, true, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(dr.tid, NULL));
	for (i = 0; i < gk + gu; i++) {
		int err = st_group_close(&groups[i]);

		if (err)
			TH_LOG("context %u: close: %s", i, strerror(-err));
		EXPECT_EQ(0, err);
	}

	st_summary(threads, nk, "kernel", gk);
	st_summary(threads + nk, nu, "user", gu);
	fprintf(stderr, "# stress: summary: invalidator: dontneed %lu\n",
		dr.drops);
	if (dr.err)
		TH_LOG("MADV_DONTNEED: %s", strerror(dr.err));
	EXPECT_EQ(0, dr.err);
	/* No failure: its line would be the reason of this one. */
	EXPECT_STREQ("", st_first);
	EXPECT_EQ(0, st_failures);
}

static void st_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-r ROUNDS] [-t THREADS] [-s SEED] [-d DEV] [-k | -u]\n"
		"  -r ROUNDS   rounds per thread (default %u)\n"
		"  -t THREADS  threads, split between the halves (default: 2 per online CPU)\n"
		"  -s SEED     seed of every random choice and pattern (default %u)\n"
		"  -d DEV      the vhca device (default %s)\n"
		"  -k, -u      the kernel half (/dev/%s) or the user half only\n",
		prog, opt_rounds, opt_seed, opt_dev, MRCT_DEV_NAME);
	exit(2);
}

static unsigned int st_number(const char *s, const char *prog)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (!*s || *end || v > UINT32_MAX)
		st_usage(prog);
	return v;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int c;

	opt_threads = 2 * (cpus > 0 ? cpus : 1);
	while ((c = getopt(argc, argv, "r:t:s:d:kuh")) != -1) {
		switch (c) {
		case 'r':
			opt_rounds = st_number(optarg, argv[0]);
			break;
		case 't':
			opt_threads = st_number(optarg, argv[0]);
			break;
		case 's':
			opt_seed = st_number(optarg, argv[0]);
			break;
		case 'd':
			opt_dev = optarg;
			break;
		case 'k':
			opt_user = false;
			break;
		case 'u':
			opt_kernel = false;
			break;
		default:
			st_usage(argv[0]);
		}
	}
	if (optind != argc || !opt_rounds || !opt_threads ||
	    opt_threads > MAX_THREADS || (!opt_kernel && !opt_user) ||
	    (opt_kernel && opt_user && opt_threads < 2))
		st_usage(argv[0]);
	return test_harness_run(1, argv);
}
