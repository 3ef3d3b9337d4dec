// SPDX-License-Identifier: GPL-2.0
/*
 * mrc_fuzz: a seeded, multi-threaded fuzzer of what user space reaches in
 * mrcore and vhca (issue 20, item 1). fuzz.sh runs it in the host root's
 * chroot over a vhca device, with /dev/mrcore_test loaded.
 *
 *	mrc_fuzz [-s SEED] [-t THREADS] [-n EXECS] [-d SECONDS] [-D DEV]
 *		 [-f FAMILIES] [-o DIR] [-c DIR] [-p FILE] [-w SECONDS] [-v]
 *	mrc_fuzz -r SEED:THREAD:EXEC [-D DEV] [-f FAMILIES] [-o DIR] [-v]
 *	mrc_fuzz -L DIR
 *
 * Every operation is one "exec". Each thread runs execs one after the
 * other; an exec picks a family, then an operation of that family's table,
 * then all its arguments, from a PRNG seeded by the exec's own seed, which
 * is therefore the whole input of the exec. The families (-f, letters):
 *
 *   a  /dev/mrcore_test: every ioctl of mrcore_test_uapi.h, with handles,
 *      keys, addresses and lengths mostly drawn from what the thread made,
 *      mixed with boundary values and bad pointers;
 *   b  uverbs on the device: write() commands and RDMA_VERBS_IOCTL methods
 *      on the context's cmd_fd (PD, MR, MW, CQ, QP, SRQ, AH; rereg, advise,
 *      dma-buf; udata too short, too long, garbage; garbage commands), and
 *      libibverbs' own calls (ibv_reg_mr, ibv_post_send, ibv_bind_mw,
 *      ibv_poll_cq) on a loopback RC pair;
 *   c  vhca's driver methods (vhca_user_ioctl.h): QUERY, MR_REG_IOV,
 *      MR_REG_INDIRECT, MR_ALLOC (and mmap of what it returns), and the
 *      same methods with attributes dropped, doubled or misshapen;
 *   d  the rings vhca shares with user space (rxe's ABI): QPs and CQs made
 *      with raw commands, their mmapped send, receive and completion rings
 *      filled with garbage or with well-formed WQEs, indices moved, headers
 *      overwritten, each round rung with POST_SEND;
 *   e  memory racing the registrations of every thread: munmap, mprotect,
 *      madvise(MADV_DONTNEED) and fork() over a shared arena, and ODP MRs
 *      on it that fault while it changes;
 *   f  rdma netlink, as root, on raw NETLINK_RDMA and NETLINK_ROUTE
 *      sockets: dummy netdevs of the family's own ("fzn" names) made, set
 *      up, down, to odd MTUs and deleted while vhca links sit on them (so
 *      ib_core and vhca must unregister those), vhca links added with
 *      names random, empty, too long, with '%' or '/', taken, on netdevs
 *      of other threads, "lo", none or no such one, deleted by index (one
 *      of its own, or a random one a GET cleared), GETs and dumps, and
 *      malformed requests; /dev/mrcore_test files bound to its links, with
 *      MRs and QPs, when they go. It never deletes a device that was there
 *      before the run (vhca0), nor a netdev that is not its own: see
 *      "family f" below. At most FZ_NL_DUMMIES dummies a thread, so as
 *      many links (vhca takes one device a netdev), all deleted at the end.
 *
 * Reproducible: -s SEED (default: the clock, printed first). Thread T's
 * stream of exec seeds is derived from (SEED, T) alone. With KCOV
 * (/sys/kernel/debug/kcov) each thread collects the kernel PCs of each
 * exec; an exec that reaches a PC no exec reached before has its input
 * kept (-c DIR, a file each) and later execs now and then run a kept input
 * mutated instead of a fresh one: the same seed with some of its draws
 * replaced by those of a second seed. Which execs did that is logged in
 * DIR/subst.T (-o DIR), so that -r SEED:THREAD:EXEC replays thread THREAD's
 * execs 0 to EXEC, single-threaded, exactly as they were drawn. Races with
 * the other threads are not replayed: a reproducer, not a recording.
 *
 * Before each exec a thread records (thread, exec, seed, family, op) in a
 * small ring: DIR/ring with -o DIR, so that after a kill or a kernel splat
 * "mrc_fuzz -L DIR" prints the last execs of every thread and how to
 * replay them. A watchdog gives every exec -w SECONDS (default 300: some
 * ioctls wait a minute by design) and, past that, prints the stuck exec,
 * writes its reproducer and aborts. Nothing else waits without a bound.
 *
 * The program checks itself: each thread keeps a canary, memory
 * registered read-only through both targets and never written but by the
 * CPU, whose bytes it compares after every exec; every 64 execs the CPU
 * writes a new pattern and the device must read it back through the MR
 * (a pin that lost its page, after a fork say, shows there). A canary that
 * changed, or a fork child that crashed, fails the run: exit status 1, a
 * reproducer line in DIR/repro.THREAD.EXEC. At the end, where the time
 * went (each family's share of the time spent in execs, and the six
 * operations that took the most), then one line:
 *
 *	fuzz: execs N, execs/s X, new-coverage inputs K, PCs P, errors-by-errno ...
 *
 * and, with -p FILE, every PC seen, one a line in hex. No device: exit 2.
 *
 * What the kernel may write, the program gives it: every address an
 * operation passes comes from sacrificial regions (each between guard
 * pages, so that a copy that runs off its end faults) or is bad on
 * purpose, never from the program's own data; an ODP range stays within
 * its region, as the device would fault in anything it covers.
 *
 * A request that nothing answered (family f's malformed ones, that the
 * kernel drops unheard) counts as ENOMSG. KCOV traces the calling thread's
 * system calls only: what vhca's engine does later in its own work items,
 * and the unregistration of a link that its netdev's going queues, are
 * executed but not counted as coverage.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/kcov.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/vhca_user_ioctl.h>

/* A private UAPI, so not under include/uapi (the test_hmm pattern). */
#include "mrcore_test_uapi.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define FZ_PAGE		4096UL
#define FZ_PORT		1

/* Sacrificial memory of each thread (fz_thread.reg). */
#define FZ_POOLS	4
#define FZ_POOL_LEN	(256UL << 10)
#define FZ_SMALL_LEN	(64UL << 10)	/* scratch, shared, read-only, PROT_NONE */
#define FZ_THP_LEN	(2UL << 20)
#define FZ_CANARY_LEN	(16UL << 10)
#define FZ_BIG_LEN	(64UL << 10)	/* attribute arrays; the kernel only reads it */

/* The arena the memory family changes under every thread's feet. */
#define FZ_SLOTS	16
#define FZ_SLOT_LEN	(128UL << 10)
#define FZ_ARENA_LEN	(FZ_SLOTS * FZ_SLOT_LEN)

#define FZ_TAB		8	/* live objects of one kind per thread */
#define FZ_GONE		4	/* handles given back, remembered to pass again */
#define FZ_KEYS		32	/* keys seen, per thread */
#define FZ_RING_SLOTS	16	/* execs remembered per thread */
#define FZ_CORPUS	4096	/* inputs kept in memory, the newest */
#define FZ_COVER	(256UL << 10)	/* KCOV entries per thread */
#define FZ_PCSET_BITS	21		/* the set of PCs: 2^21 slots, 16 MiB */
#define FZ_MAX_ERRNO	134
#define FZ_CANARY_EVERY	64	/* execs between device checks of the canary */
#define FZ_PROGRESS_S	600	/* seconds between the progress lines */

#define FZ_KCOV_PATH	"/sys/kernel/debug/kcov"
#define FZ_RING_MAGIC	"mrcfuzz1"

/* Families (-f): bits of fz_opts.families. */
enum {
	FZ_F_CDEV, FZ_F_UVERBS, FZ_F_METHODS, FZ_F_RINGS, FZ_F_MEMORY, FZ_F_NETLINK,
	FZ_NFAM
};

#define FZ_MAX_OPS	48	/* operations in one family's table, at most */

/* --- state ----------------------------------------------------------- */

/**
 * struct fz_obj - an object a thread made and may name again
 * @h: its handle (or file descriptor)
 * @lkey: its local key, where it has one
 * @rkey: its remote key
 * @aux: a kind's own number: the PD (handle or index) it was made on, ...
 * @iova: the first address of its key's address space
 * @len: bytes from @iova
 * @n: a kind's own counters (for a pair of /dev/mrcore_test: receives
 *     posted on A and on B, then completions of them not yet collected)
 */
struct fz_obj {
	uint32_t h;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t aux;
	uint64_t iova;
	uint64_t len;
	uint32_t n[4];
};

/* Live objects of one kind, and a few handles given back (stale ones). */
struct fz_tab {
	struct fz_obj o[FZ_TAB];
	unsigned int n;
	uint32_t gone[FZ_GONE];
	unsigned int ngone;
};

/* A mapped ring and our own copies of its geometry and of our index. */
struct fz_uring {
	struct rxe_queue_buf *buf;
	size_t size;
	uint32_t mask;
	uint32_t log2;
	uint32_t idx;	/* producer (SQ, RQ, SRQ) or consumer (CQ) */
};

struct fz_ucq {
	bool live;
	uint32_t h;
	struct fz_uring r;
};

struct fz_uqp {
	bool live;
	uint32_t h;
	uint32_t qpn;
	uint32_t pd;
	int cq;		/* index in fz_uv.cqs, or -1 */
	int peer;	/* index of the QP it is connected to, or -1 */
	struct fz_uring sq;
	struct fz_uring rq;
};

struct fz_usrq {
	bool live;
	uint32_t h;
	struct fz_uring r;
};

#define FZ_UCQS		6
#define FZ_UQPS		8
#define FZ_USRQS	2
#define FZ_LMRS		8

/* The thread's /dev/mrcore_test context. */
struct fz_cd {
	int fd;			/* -1 without the device */
	bool bound;
	uint32_t dma_lkey;	/* the PD's local_dma_lkey, from QP_CREATE */
	uint32_t canary_h;	/* the canary MR, 0 when none */
	struct fz_tab mrs, pairs, frwr, pools, fmaps, mws, inds, gaps, cnts, keys;
	uint32_t tokens[4];	/* held key requests (MRCT_KEYS_HOLD) */
	unsigned int ntokens;
	int dmabufs[4];
	unsigned int ndmabufs;
};

/* The thread's uverbs context on the device. */
struct fz_uv {
	struct ibv_context *ctx;
	int fd;			/* ctx->cmd_fd */
	union ibv_gid gid;
	int gid_index;
	uint32_t canary_pd;	/* raw PD of the canary MR */
	uint32_t canary_h;	/* the canary MR's handle */
	struct fz_tab pds, mrs, mws, ahs, allocs;
	struct fz_ucq cqs[FZ_UCQS];
	struct fz_uqp qps[FZ_UQPS];
	struct fz_usrq srqs[FZ_USRQS];
	/* libibverbs' own objects: a PD, a CQ, a connected pair, MRs, MWs */
	struct ibv_pd *lpd;
	struct ibv_cq *lcq;
	struct ibv_qp *lqp[2];
	struct ibv_mr *lmr[FZ_LMRS];
	struct ibv_mw *lmw[2];
};

/*
 * Family f's netdevs and links. Each thread has FZ_NL_DUMMIES dummy
 * netdevs, "fzn<thread>_<slot>", and names its links "fzl<thread>_<slot>".
 * vhca binds one device to a netdev, and the family adds links on its own
 * dummies only: so the dummies bound the links, and deleting a dummy takes
 * its link with it, tracked or not. All of them together are at most
 * FZ_NL_MAX_DUMMIES, as vhca takes xlt_mb (64 MiB) for every device.
 */
#define FZ_NL_DUMMIES	4
#define FZ_NL_LINKS	4
#define FZ_NL_MAX_DUMMIES	8
#define FZ_NL_DEVS	64	/* the RDMA devices a dump may list */
#define FZ_NL_REQ	4096	/* a request's bytes */
#define FZ_NL_BUF	(64UL << 10)	/* one read of answers */
#define FZ_NL_THREADS	8	/* thread numbers drawn for other threads' names */

/**
 * struct fz_nl_link - a link the family added and found by name
 * @made: @index was this link's (it may be gone since: a stale index)
 * @live: as far as the thread knows, the device is there
 * @index: its ib_core index (indexes are not reused within a run)
 * @mrct_fd: a /dev/mrcore_test file bound to it, or -1
 * @name: its name as ib_core has it
 */
struct fz_nl_link {
	bool made;
	bool live;
	uint32_t index;
	int mrct_fd;
	char name[IB_DEVICE_NAME_MAX];
};

/* The thread's netlink sockets and what it made through them. */
struct fz_nl {
	int rdma;		/* NETLINK_RDMA, -1 without family f */
	int route;		/* NETLINK_ROUTE */
	uint32_t seq;
	bool dummy[FZ_NL_DUMMIES];	/* made and not deleted */
	struct fz_nl_link links[FZ_NL_LINKS];
	uint8_t *req;		/* FZ_NL_REQ bytes */
	size_t len;		/* of the request in @req */
	uint8_t *buf;		/* FZ_NL_BUF bytes of answers */
};

/* A region of sacrificial memory. */
struct fz_region {
	uint8_t *p;
	size_t len;
};

enum {
	FZ_R_POOL,			/* FZ_POOLS of them */
	FZ_R_SHARED = FZ_R_POOL + FZ_POOLS,	/* a memfd, MAP_SHARED */
	FZ_R_THP,			/* 2 MiB aligned, MADV_HUGEPAGE */
	FZ_R_SCRATCH,			/* what the kernel writes outputs into */
	FZ_R_RO,			/* read-only, written once before */
	FZ_R_NONE,			/* PROT_NONE */
	FZ_NREG
};

/* An exec's input: a seed, and the seed of the mutation applied (0: none). */
struct fz_input {
	uint64_t seed;
	uint64_t mut;
};

/* Replay: exec @exec of the thread ran @in, a kept input, not its own. */
struct fz_subst {
	uint64_t exec;
	struct fz_input in;
};

/* The PRNG of an exec: @s's draws, each replaced by @m's @flip / 65536 times. */
struct fz_rng {
	uint64_t s;
	uint64_t m;
	uint32_t flip;
};

/**
 * struct fz_rec - one exec in the ring
 * @exec: its index in its thread
 * @seed: its input's seed
 * @mut: its input's mutation seed, 0 for none
 * @start_ns: CLOCK_MONOTONIC when it began
 * @family: FZ_F_*
 * @op: index in the family's table
 * @done: 0 while it runs
 * @thread: the thread's number
 * @reserved: 0
 * @what: what the operation said it is doing (a command's name, ...)
 */
struct fz_rec {
	uint64_t exec;
	uint64_t seed;
	uint64_t mut;
	uint64_t start_ns;
	uint16_t family;
	uint16_t op;
	uint32_t done;
	uint32_t thread;
	uint32_t reserved;
	char what[32];
};

/* DIR/ring: this header, then FZ_RING_SLOTS records per thread. */
struct fz_ring {
	char magic[8];
	uint64_t seed;
	uint32_t threads;
	uint32_t slots;
	uint32_t families;
	uint32_t reserved;
	char dev[64];
	struct fz_rec rec[];
};

struct fz_thread {
	unsigned int id;
	pthread_t tid;
	uint64_t stream;	/* the exec seeds */
	uint64_t exec;		/* the exec running */
	struct fz_rng r;
	struct fz_rec *cur;	/* its record, for the watchdog */
	unsigned int ring_base;	/* its first record in the ring */
	struct fz_region reg[FZ_NREG];
	uint8_t *canary;
	uint8_t *check;		/* what the device read of the canary */
	uint8_t *big;
	uint32_t canary_gen;
	struct fz_cd cd;
	struct fz_uv uv;
	struct fz_nl nl;
	uint32_t keys[FZ_KEYS];
	unsigned int nkeys;
	int kcov_fd;
	uint64_t *cover;
	int subst_fd;		/* DIR/subst.ID, appended; -1 without -o */
	struct fz_subst *subst;	/* replay: the substitutions logged */
	size_t nsubst;
	size_t subst_at;
	uint64_t new_inputs;
	bool exact;		/* set-up sequences: no call misshapen */
	bool failed;		/* it detected a failure (reported once) */
};

/* One operation of a family's table. */
struct fz_op {
	const char *name;
	void (*fn)(struct fz_thread *t);
	unsigned int weight;
};

struct fz_family {
	const char *name;
	char letter;
	const struct fz_op *ops;
	unsigned int nops;
	unsigned int weight;
};

struct fz_opts {
	uint64_t seed;
	unsigned int threads;
	uint64_t execs;		/* 0: no bound */
	unsigned int seconds;	/* 0: no bound */
	const char *dev;
	unsigned int families;
	const char *out_dir;
	const char *corpus_dir;
	const char *pc_file;
	unsigned int watchdog;
	bool verbose;
	bool replay;
	unsigned int replay_thread;
	uint64_t replay_exec;
	const char *argv0;
};

static struct fz_opts opt = {
	.watchdog = 300,
	.families = (1U << FZ_NFAM) - 1,
};

/* What the threads share. */
static struct {
	struct fz_thread *threads;
	unsigned int nthreads;
	uint64_t start_ns;
	uint64_t deadline_ns;
	uint64_t claimed;	/* execs claimed, against -n */
	uint64_t done;		/* execs finished */
	int stop;
	int failed;
	uint64_t errnos[FZ_MAX_ERRNO + 1];	/* [0]: success */
	uint64_t err_other;
	/* where the time goes: execs and nanoseconds of each operation */
	uint64_t op_n[FZ_NFAM][FZ_MAX_OPS];
	uint64_t op_ns[FZ_NFAM][FZ_MAX_OPS];
	struct fz_ring *ring;
	/* the arena: slots that the memory family unmaps, protects, ... */
	uint8_t *arena;
	int dead[FZ_SLOTS];
	pthread_rwlock_t map_lock;	/* write: a slot is unmapped */
	/* family f: the RDMA devices there before the run, never deleted */
	uint32_t nl_keep[FZ_NL_DEVS];
	char nl_keep_name[FZ_NL_DEVS][IB_DEVICE_NAME_MAX];
	unsigned int nl_nkeep;
	int nl_dummies;		/* family f's dummies of all threads */
	/* coverage */
	uint64_t *pcs;
	uint64_t npcs;
	struct fz_input corpus[FZ_CORPUS];
	uint64_t ncorpus;
	pthread_mutex_t corpus_lock;
	pthread_mutex_t out_lock;
} g = {
	.map_lock = PTHREAD_RWLOCK_INITIALIZER,
	.corpus_lock = PTHREAD_MUTEX_INITIALIZER,
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* --- utilities ------------------------------------------------------- */

static uint64_t fz_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A line on stdout, whole, whatever the other threads print. */
static void fz_log(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&g.out_lock);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&g.out_lock);
}

static uint64_t fz_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* splitmix64: the derivation of every seed and every draw. */
static uint64_t fz_mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Of 65536 draws, how many a mutation replaces (its seed's low 2 bits). */
static const uint32_t fz_flips[4] = { 1024, 4096, 16384, 32768 };

/*
 * The exec's next draw. Both streams advance on every draw, so that a
 * mutation changes the draws it replaces and leaves the others as they
 * were: the same choices, some of them flipped.
 */
static uint64_t fz_rand(struct fz_thread *t)
{
	uint64_t v = fz_mix(&t->r.s);

	if (t->r.m) {
		uint64_t w = fz_mix(&t->r.m);

		if ((w & 0xffff) < t->r.flip)
			v = (w >> 16) | (w << 48);
	}
	return v;
}

static uint64_t fz_below(struct fz_thread *t, uint64_t n)
{
	return n ? fz_rand(t) % n : 0;
}

static bool fz_one_in(struct fz_thread *t, uint64_t n)
{
	return fz_below(t, n) == 0;
}

/* @len bytes that depend on @seed alone (splitmix64 words). */
static void fz_pattern(void *p, size_t len, uint64_t seed)
{
	uint8_t *b = p;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			v = fz_mix(&seed);
		b[i] = v >> ((i & 7) * 8);
	}
}

/* Garbage of the exec's: one draw seeds it all. */
static void fz_fill(struct fz_thread *t, void *p, size_t len)
{
	fz_pattern(p, len, fz_rand(t));
}

/* What the exec is doing, for the ring (a command's name, ...). */
static void fz_what(struct fz_thread *t, const char *what)
{
	if (t->cur)
		snprintf(t->cur->what, sizeof(t->cur->what), "%s", what);
}

/* Values at and around the edges a check may get wrong. */
static const uint64_t fz_edges[] = {
	0, 1, 2, 3, 7, 8, 63, 64, 255, 256, FZ_PAGE - 1, FZ_PAGE, FZ_PAGE + 1,
	(2UL << 20) - 1, 2UL << 20, 0x7fffffff, 0x80000000, 0xfffffffe,
	0xffffffff, 0x100000000ULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, ~0ULL - FZ_PAGE, ~0ULL - 1, ~0ULL,
};

static uint64_t fz_u64(struct fz_thread *t)
{
	switch (fz_below(t, 5)) {
	case 0:
	case 1:
		return fz_edges[fz_below(t, ARRAY_SIZE(fz_edges))];
	case 2:
		return fz_below(t, 300);
	case 3:
		return (1ULL << fz_below(t, 64)) + fz_below(t, 3) - 1;
	default:
		return fz_rand(t);
	}
}

static uint32_t fz_u32(struct fz_thread *t)
{
	uint64_t v = fz_u64(t);

	/* The 64-bit edges fold to U32_MAX, not to 0. */
	return v > 0xffffffffULL && fz_one_in(t, 2) ? 0xffffffffU : (uint32_t)v;
}

/* A small count around @max: 0, 1, up to @max, @max + 1, a wild one. */
static uint32_t fz_count(struct fz_thread *t, uint32_t max)
{
	switch (fz_below(t, 10)) {
	case 0:
		return 0;
	case 1:
		return max;
	case 2:
		return max + 1;
	case 3:
		return fz_u32(t);
	default:
		return 1 + fz_below(t, max);
	}
}

/*
 * Access flags, mostly meaningful (the IB_ACCESS_* bits, which the
 * MRCT_ACCESS_* and IBV_ACCESS_* values spell), now and then not.
 */
static uint32_t fz_access(struct fz_thread *t)
{
	uint32_t a = 0;

	switch (fz_below(t, 10)) {
	case 0:
		return 0;
	case 1:
		return fz_u32(t);
	case 2:
		return 0x1f;	/* every right, MW_BIND included */
	default:
		a = fz_rand(t) & 0x1f;
		if (fz_one_in(t, 6))
			a |= MRCT_ACCESS_ZERO_BASED;
		if (fz_one_in(t, 6))
			a |= MRCT_ACCESS_ON_DEMAND;
		if (fz_one_in(t, 16))
			a |= MRCT_ACCESS_HUGETLB;
		if (fz_one_in(t, 8))
			a |= MRCT_ACCESS_RELAXED_ORDERING;
		return a;
	}
}

/* Count a result: 0 or -errno. Returns it. */
static int fz_res(int ret)
{
	if (ret > 0)
		ret = 0;
	if (-ret <= FZ_MAX_ERRNO)
		__atomic_fetch_add(&g.errnos[-ret], 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&g.err_other, 1, __ATOMIC_RELAXED);
	return ret;
}

/* The result of a call that sets errno on failure (-1). */
static int fz_sys(long ret)
{
	return fz_res(ret < 0 ? -errno : 0);
}

/* --- object tables --------------------------------------------------- */

static struct fz_obj *tab_add(struct fz_tab *tab, const struct fz_obj *o)
{
	if (tab->n >= FZ_TAB)
		return NULL;
	tab->o[tab->n] = *o;
	return &tab->o[tab->n++];
}

/* A live object, or NULL when there is none. */
static struct fz_obj *tab_pick(struct fz_thread *t, struct fz_tab *tab)
{
	return tab->n ? &tab->o[fz_below(t, tab->n)] : NULL;
}

/* Forget @o, remembering its handle as a stale one. */
static void tab_del(struct fz_tab *tab, struct fz_obj *o)
{
	tab->gone[tab->ngone++ % FZ_GONE] = o->h;
	*o = tab->o[--tab->n];
}

static struct fz_obj *tab_find(struct fz_tab *tab, uint32_t h)
{
	unsigned int i;

	for (i = 0; i < tab->n; i++)
		if (tab->o[i].h == h)
			return &tab->o[i];
	return NULL;
}

/*
 * A handle to pass: mostly a live one (@o set to it), else one given
 * back, 0, a neighbour or a wild value (@o NULL). Never @protect, the
 * canary's, which no operation may change.
 */
static uint32_t tab_handle(struct fz_thread *t, struct fz_tab *tab,
			   struct fz_obj **o, uint32_t protect)
{
	struct fz_obj *live = tab_pick(t, tab);
	uint32_t h;

	*o = NULL;
	switch (fz_below(t, 10)) {
	case 0:
		h = tab->ngone ? tab->gone[fz_below(t, fz_min(tab->ngone, FZ_GONE))] : 0;
		break;
	case 1:
		h = fz_one_in(t, 2) ? 0 : fz_u32(t);
		break;
	case 2:
		h = live ? live->h + 1 : 1;
		break;
	default:
		if (!live)
			return 0;
		*o = live;
		return live->h;
	}
	if (h == protect)
		return 0;
	*o = tab_find(tab, h);
	return h;
}

/* A command that frees an object by its handle, and the table of those. */
struct fz_free {
	const char *name;
	unsigned long cmd;
	size_t tab;	/* offset of the table in struct fz_cd or struct fz_uv */
};

/*
 * One of the @n commands of @frees, its table in @base and the handle to
 * pass it (tab_handle(), never @protect).
 */
static const struct fz_free *fz_free_pick(struct fz_thread *t,
					  const struct fz_free *frees, unsigned int n,
					  void *base, uint32_t protect,
					  struct fz_tab **tab, struct fz_obj **o,
					  uint32_t *h)
{
	const struct fz_free *f = &frees[fz_below(t, n)];

	fz_what(t, f->name);
	*tab = (void *)((char *)base + f->tab);
	*h = tab_handle(t, *tab, o, protect);
	return f;
}

/* --- keys ------------------------------------------------------------ */

static void fz_key_add(struct fz_thread *t, uint32_t key)
{
	t->keys[t->nkeys++ % FZ_KEYS] = key;
}

/* @o has new keys (a fast registration, a bind...), and now covers @len from @iova. */
static void fz_rekey(struct fz_thread *t, struct fz_obj *o, uint32_t lkey,
		     uint32_t rkey, uint64_t iova, uint64_t len)
{
	o->lkey = lkey;
	o->rkey = rkey;
	o->iova = iova;
	o->len = len;
	fz_key_add(t, rkey);
}

/*
 * A key to pass: one the kernel gave out (any target's, any context's
 * canary's too: no write through it may land), a neighbour of one (the
 * next index, the next variant), 0, the local DMA key, or a wild value.
 */
static uint32_t fz_key(struct fz_thread *t)
{
	uint32_t k = t->nkeys ? t->keys[fz_below(t, fz_min(t->nkeys, FZ_KEYS))] : 0;

	switch (fz_below(t, 10)) {
	case 0:
		return k + 1;
	case 1:
		return k + 0x100;
	case 2:
		return k ^ (1U << fz_below(t, 32));
	case 3:
		return fz_one_in(t, 2) ? t->cd.dma_lkey : fz_u32(t);
	default:
		return k;
	}
}

/* An address in @o's key space: mostly inside, now and then around it. */
static uint64_t fz_iova_in(struct fz_thread *t, const struct fz_obj *o)
{
	if (!o)
		return fz_u64(t);
	switch (fz_below(t, 8)) {
	case 0:
		return o->iova + o->len;
	case 1:
		return o->iova - 1 - fz_below(t, 64);
	case 2:
		return fz_u64(t);
	default:
		return o->iova + fz_below(t, o->len ? o->len : 1);
	}
}

/* --- sacrificial memory ---------------------------------------------- */

/*
 * mmap() of ours that makes a new mapping, under the arena's lock: a slot
 * the memory family has just unmapped is never taken by one of them.
 */
static void *fz_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	pthread_rwlock_rdlock(&g.map_lock);
	p = mmap(addr, len, prot, flags, fd, off);
	pthread_rwlock_unlock(&g.map_lock);
	return p;
}

/*
 * @len bytes, aligned to @align, mapped with @prot (@flags, @fd) between
 * two PROT_NONE guard pages, so that a kernel copy that starts in the
 * region faults at its end instead of running into our own memory.
 */
static uint8_t *fz_map_guarded(size_t len, size_t align, int prot, int flags,
			       int fd)
{
	size_t span = len + align + 2 * FZ_PAGE;
	uint8_t *res, *p;

	res = fz_mmap(NULL, span, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return NULL;
	p = (uint8_t *)(((uintptr_t)res + FZ_PAGE + align - 1) & ~(uintptr_t)(align - 1));
	if (fz_mmap(p, len, prot, flags | MAP_FIXED, fd, 0) == MAP_FAILED)
		return NULL;
	return p;
}

static uint8_t *fz_map_anon(size_t len, size_t align)
{
	uint8_t *p = fz_map_guarded(len, align, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1);

	if (p)
		memset(p, 0x5a, len);	/* real pages, not the zero page */
	return p;
}

/* The thread's regions: 0 or -errno. */
static int fz_mem_setup(struct fz_thread *t)
{
	struct fz_region *r = t->reg;
	unsigned int i;
	int fd;

	for (i = 0; i < FZ_POOLS; i++) {
		r[FZ_R_POOL + i].p = fz_map_anon(FZ_POOL_LEN, FZ_PAGE);
		r[FZ_R_POOL + i].len = FZ_POOL_LEN;
	}
	fd = memfd_create("mrc_fuzz", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, FZ_SMALL_LEN))
		return -errno;
	r[FZ_R_SHARED].p = fz_map_guarded(FZ_SMALL_LEN, FZ_PAGE,
					  PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	r[FZ_R_SHARED].len = FZ_SMALL_LEN;
	close(fd);
	r[FZ_R_THP].p = fz_map_anon(FZ_THP_LEN, FZ_THP_LEN);
	r[FZ_R_THP].len = FZ_THP_LEN;
	if (r[FZ_R_THP].p)
		madvise(r[FZ_R_THP].p, FZ_THP_LEN, MADV_HUGEPAGE);
	r[FZ_R_SCRATCH].p = fz_map_anon(FZ_SMALL_LEN, FZ_PAGE);
	r[FZ_R_SCRATCH].len = FZ_SMALL_LEN;
	r[FZ_R_RO].p = fz_map_anon(FZ_SMALL_LEN, FZ_PAGE);
	r[FZ_R_RO].len = FZ_SMALL_LEN;
	if (r[FZ_R_RO].p && mprotect(r[FZ_R_RO].p, FZ_SMALL_LEN, PROT_READ))
		return -errno;
	r[FZ_R_NONE].p = fz_map_guarded(FZ_SMALL_LEN, FZ_PAGE, PROT_NONE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1);
	r[FZ_R_NONE].len = FZ_SMALL_LEN;
	t->canary = fz_map_anon(FZ_CANARY_LEN, FZ_PAGE);
	t->check = malloc(FZ_CANARY_LEN);
	t->big = malloc(FZ_BIG_LEN);
	for (i = 0; i < FZ_NREG; i++)
		if (!r[i].p)
			return -ENOMEM;
	if (!t->canary || !t->check || !t->big)
		return -ENOMEM;
	return 0;
}

/* The arena, one mapping of FZ_SLOTS slots between guard pages. */
static int fz_arena_setup(void)
{
	g.arena = fz_map_anon(FZ_ARENA_LEN, FZ_THP_LEN);
	return g.arena ? 0 : -ENOMEM;
}

static uint8_t *fz_slot(unsigned int s)
{
	return g.arena + (size_t)s * FZ_SLOT_LEN;
}

/* An address that is never mapped: low, non-canonical, kernel, the top. */
static uint64_t fz_bad_addr(struct fz_thread *t)
{
	switch (fz_below(t, 6)) {
	case 0:
		return 0;
	case 1:
		return 0x1000 + fz_below(t, 0xe000);	/* below mmap_min_addr */
	case 2:
		return 0x800000000000ULL + fz_below(t, 1 << 20);
	case 3:
		return 0xffff888000000000ULL + fz_below(t, 1 << 20) * 8;
	case 4:
		return ~0ULL - fz_below(t, 2 * FZ_PAGE);
	default:
		return 0x8000000000000000ULL;
	}
}

/* An offset into @len bytes: the start, a page, any byte, near the end. */
static uint64_t fz_offset(struct fz_thread *t, uint64_t len)
{
	switch (fz_below(t, 8)) {
	case 0:
	case 1:
		return 0;
	case 2:
	case 3:
		return fz_below(t, len / FZ_PAGE) * FZ_PAGE;
	case 4:
		return len - 1 - fz_below(t, fz_min(len, 64));
	case 5:
		return len - FZ_PAGE;
	default:
		return fz_below(t, len);
	}
}

/*
 * A user address to register, or to have the kernel read or write: in a
 * region of this thread or in the arena (*@room: bytes mapped from it),
 * read-only, PROT_NONE, or never mapped (*@room 0).
 */
static uint64_t fz_addr(struct fz_thread *t, uint64_t *room)
{
	const struct fz_region *r;
	unsigned int k = fz_below(t, 20);
	uint64_t off;

	if (k < 6) {
		r = &t->reg[FZ_R_POOL + k % FZ_POOLS];
	} else if (k < 10) {
		unsigned int s = fz_below(t, FZ_SLOTS);

		/* A slot given up is not ours any more (mm_munmap()). */
		if (__atomic_load_n(&g.dead[s], __ATOMIC_RELAXED)) {
			*room = 0;
			return fz_bad_addr(t);
		}
		off = fz_offset(t, FZ_SLOT_LEN);
		*room = FZ_ARENA_LEN - s * FZ_SLOT_LEN - off;
		return (uintptr_t)fz_slot(s) + off;
	} else if (k < 11) {
		r = &t->reg[FZ_R_SHARED];
	} else if (k < 12) {
		r = &t->reg[FZ_R_THP];
	} else if (k < 13) {
		r = &t->reg[FZ_R_SCRATCH];
	} else if (k < 15) {
		r = &t->reg[FZ_R_RO];
	} else if (k < 16) {
		r = &t->reg[FZ_R_NONE];
	} else {
		*room = 0;
		return fz_bad_addr(t);
	}
	off = fz_offset(t, r->len);
	*room = r->len - off;
	return (uintptr_t)r->p + off;
}

/* A length for @room bytes: inside, exactly, one past, or an edge. */
static uint64_t fz_len(struct fz_thread *t, uint64_t room)
{
	switch (fz_below(t, 12)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return FZ_PAGE - 1 + fz_below(t, 3);
	case 3:
		return room;
	case 4:
		return room + 1 + fz_below(t, FZ_PAGE);
	case 5:
		return fz_u64(t);
	default:
		return 1 + fz_below(t, room ? fz_min(room, FZ_SMALL_LEN) : 8192);
	}
}

/*
 * An address and a length to register with @access; now and then the
 * range wraps. An ODP MR is never pinned: the device faults in whatever
 * its range covers, this program's own memory too. So an ODP range stays
 * within its region and the guard page after it (the implicit ODP MR, all
 * of the address space from 0, is made elsewhere: the operations only
 * draw its addresses at random).
 */
static void fz_range(struct fz_thread *t, uint32_t access, __u64 *addr, __u64 *len)
{
	uint64_t room;

	*addr = fz_addr(t, &room);
	*len = fz_one_in(t, 16) ? 0 - *addr + fz_below(t, 3) : fz_len(t, room);
	if ((access & MRCT_ACCESS_ON_DEMAND) && *len > room + FZ_PAGE)
		*len = fz_below(t, room + FZ_PAGE + 1);
}

/*
 * A buffer for the kernel to copy into or out of, @len bytes: scratch
 * mostly, else any sacrificial region or a bad address.
 */
static uint64_t fz_ubuf(struct fz_thread *t, uint64_t len)
{
	const struct fz_region *s = &t->reg[FZ_R_SCRATCH];
	uint64_t room;

	if (fz_below(t, 4))
		return (uintptr_t)s->p + (len < s->len ? fz_below(t, s->len - len + 1) : 0);
	return fz_addr(t, &room);
}

/*
 * A bad pointer to an ioctl's argument of @size bytes: NULL, PROT_NONE,
 * never mapped, or straddling the guard page after scratch, so that the
 * copy in (or out) faults part-way.
 */
static void *fz_bad_arg(struct fz_thread *t, size_t size)
{
	const struct fz_region *s = &t->reg[FZ_R_SCRATCH];

	switch (fz_below(t, 4)) {
	case 0:
		return NULL;
	case 1:
		return t->reg[FZ_R_NONE].p;
	case 2:
		return s->p + s->len - (size > 1 ? size / 2 : 1);
	default:
		return (void *)(uintptr_t)fz_bad_addr(t);
	}
}

/* --- the exec ring, reproducers, failures ---------------------------- */

static const struct fz_family fz_families[FZ_NFAM];

static void fz_family_letters(unsigned int mask, char *buf)
{
	unsigned int i, n = 0;

	for (i = 0; i < FZ_NFAM; i++)
		if (mask & (1U << i))
			buf[n++] = fz_families[i].letter;
	buf[n] = '\0';
}

/* The command that replays thread @thread's execs 0 to @exec. */
static void fz_repro_line(char *buf, size_t len, uint64_t seed, unsigned int fams,
			  const char *dev, unsigned int thread, uint64_t exec)
{
	char f[FZ_NFAM + 1];

	fz_family_letters(fams, f);
	snprintf(buf, len, "%s -D %s -f %s%s%s -r %llu:%u:%llu", opt.argv0, dev, f,
		 opt.out_dir ? " -o " : "", opt.out_dir ? opt.out_dir : "",
		 (unsigned long long)seed, thread, (unsigned long long)exec);
}

/* Write the reproducer of @t's current exec to DIR/repro.T.E, and print it. */
static void fz_repro(struct fz_thread *t)
{
	char line[512], path[512];
	FILE *f;

	fz_repro_line(line, sizeof(line), opt.seed, opt.families, opt.dev,
		      t->id, t->exec);
	fz_log("fuzz: reproducer: %s\n", line);
	if (!opt.out_dir)
		return;
	snprintf(path, sizeof(path), "%s/repro.%u.%llu", opt.out_dir, t->id,
		 (unsigned long long)t->exec);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\n# thread %u, exec %llu of seed %llu\n%s\n", t->id,
		(unsigned long long)t->exec, (unsigned long long)opt.seed, line);
	fclose(f);
}

/* A failure the program detected: say it, keep its reproducer, stop. */
static void fz_fail(struct fz_thread *t, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fz_log("fuzz: FAILURE: thread %u, exec %llu: %s\n", t->id,
	       (unsigned long long)t->exec, msg);
	t->failed = true;
	fz_repro(t);
	__atomic_store_n(&g.failed, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&g.stop, 1, __ATOMIC_RELAXED);
}

static size_t fz_ring_size(unsigned int threads)
{
	return sizeof(struct fz_ring) +
	       (size_t)threads * FZ_RING_SLOTS * sizeof(struct fz_rec);
}

/* The ring: DIR/ring with -o DIR, else shared anonymous memory. */
static int fz_ring_setup(unsigned int threads)
{
	size_t size = fz_ring_size(threads);
	char path[512];
	void *p;
	int fd;

	/* A replay leaves the ring of the run it replays as it was. */
	if (opt.out_dir && !opt.replay) {
		snprintf(path, sizeof(path), "%s/ring", opt.out_dir);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		if (ftruncate(fd, size)) {
			close(fd);
			return -errno;
		}
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED)
		return -errno;
	g.ring = p;
	memcpy(g.ring->magic, FZ_RING_MAGIC, sizeof(g.ring->magic));
	g.ring->seed = opt.seed;
	g.ring->threads = threads;
	g.ring->slots = FZ_RING_SLOTS;
	g.ring->families = opt.families;
	snprintf(g.ring->dev, sizeof(g.ring->dev), "%s", opt.dev);
	return 0;
}

static void fz_ring_begin(struct fz_thread *t, const struct fz_input *in,
			  unsigned int family, unsigned int op)
{
	struct fz_rec *rec = &g.ring->rec[t->ring_base + t->exec % FZ_RING_SLOTS];

	__atomic_store_n(&rec->done, 0, __ATOMIC_RELAXED);
	rec->thread = t->id;
	rec->exec = t->exec;
	rec->seed = in->seed;
	rec->mut = in->mut;
	rec->family = family;
	rec->op = op;
	rec->what[0] = '\0';
	__atomic_store_n(&rec->start_ns, fz_now_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&t->cur, rec, __ATOMIC_RELEASE);
}

static void fz_ring_end(struct fz_thread *t)
{
	__atomic_store_n(&t->cur->done, 1, __ATOMIC_RELEASE);
}

static const char *fz_op_name(unsigned int family, unsigned int op)
{
	if (family >= FZ_NFAM || op >= fz_families[family].nops)
		return "?";
	return fz_families[family].ops[op].name;
}

/* One record as a line (no newline). */
static void fz_rec_line(const struct fz_rec *rec, char *buf, size_t len)
{
	snprintf(buf, len, "thread %u exec %llu seed %llu mut %llu %s/%s%s%s%s",
		 rec->thread, (unsigned long long)rec->exec,
		 (unsigned long long)rec->seed, (unsigned long long)rec->mut,
		 rec->family < FZ_NFAM ? fz_families[rec->family].name : "?",
		 fz_op_name(rec->family, rec->op), rec->what[0] ? " (" : "",
		 rec->what, rec->what[0] ? ")" : "");
}

static int fz_rec_cmp(const void *a, const void *b)
{
	const struct fz_rec *x = a, *y = b;

	return x->exec < y->exec ? -1 : x->exec > y->exec;
}

/*
 * -L DIR: the last execs of every thread, oldest first, the one running
 * when the program stopped marked, and the command that replays each
 * thread up to its last exec.
 */
static int fz_ring_print(const char *dir)
{
	struct fz_rec recs[FZ_RING_SLOTS];
	const struct fz_ring *ring;
	char path[512], line[512];
	unsigned int th, i, n;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/ring", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < sizeof(*ring)) {
		fprintf(stderr, "mrc_fuzz: no ring in %s\n", path);
		return 2;
	}
	ring = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (ring == MAP_FAILED || memcmp(ring->magic, FZ_RING_MAGIC, 8) ||
	    ring->slots != FZ_RING_SLOTS ||
	    fz_ring_size(ring->threads) > (size_t)st.st_size) {
		fprintf(stderr, "mrc_fuzz: %s is not a ring of this program\n", path);
		return 2;
	}
	printf("fuzz: ring of seed %llu, %u threads, device %.64s\n",
	       (unsigned long long)ring->seed, ring->threads, ring->dev);
	for (th = 0; th < ring->threads; th++) {
		const struct fz_rec *last = NULL;

		for (i = n = 0; i < FZ_RING_SLOTS; i++)
			if (ring->rec[th * FZ_RING_SLOTS + i].start_ns)
				recs[n++] = ring->rec[th * FZ_RING_SLOTS + i];
		qsort(recs, n, sizeof(recs[0]), fz_rec_cmp);
		for (i = 0; i < n; i++) {
			fz_rec_line(&recs[i], line, sizeof(line));
			printf("fuzz:   %s%s\n", line, recs[i].done ? "" : "  <- running");
			last = &recs[i];
		}
		if (!last)
			continue;
		fz_repro_line(line, sizeof(line), ring->seed, ring->families,
			      ring->dev, last->thread, last->exec);
		printf("fuzz:   replay: %s\n", line);
	}
	return 0;
}

/* --- substitutions: which execs ran a kept input, for the replay ------ */

static void fz_subst_open(struct fz_thread *t)
{
	char path[512];

	t->subst_fd = -1;
	if (!opt.out_dir || opt.replay)
		return;
	snprintf(path, sizeof(path), "%s/subst.%u", opt.out_dir, t->id);
	t->subst_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
			   0644);
}

/* Log that exec @t->exec runs @in instead of its fresh seed. */
static void fz_subst_log(struct fz_thread *t, const struct fz_input *in)
{
	char line[80];
	int n;

	if (t->subst_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%llu %llu %llu\n", (unsigned long long)t->exec,
		     (unsigned long long)in->seed, (unsigned long long)in->mut);
	if (write(t->subst_fd, line, n) != n)
		fz_log("fuzz: thread %u: cannot log a substitution: %s\n", t->id,
		       strerror(errno));
}

/* Replay: load DIR/subst.THREAD, the execs that ran a kept input. */
static void fz_subst_load(struct fz_thread *t)
{
	unsigned long long exec, seed, mut;
	size_t cap = 0;
	char path[512];
	FILE *f;

	if (!opt.out_dir) {
		fz_log("fuzz: replay without -o DIR: %s\n",
		       "execs that ran a kept input run their fresh seed");
		return;
	}
	snprintf(path, sizeof(path), "%s/subst.%u", opt.out_dir, t->id);
	f = fopen(path, "r");
	if (!f) {
		fz_log("fuzz: replay: no %s: every exec runs its fresh seed\n", path);
		return;
	}
	while (fscanf(f, "%llu %llu %llu", &exec, &seed, &mut) == 3) {
		if (t->nsubst == cap) {
			struct fz_subst *more;

			cap = cap ? 2 * cap : 256;
			more = realloc(t->subst, cap * sizeof(*more));
			if (!more)
				break;
			t->subst = more;
		}
		t->subst[t->nsubst++] = (struct fz_subst){
			.exec = exec,
			.in = { .seed = seed, .mut = mut },
		};
	}
	fclose(f);
	fz_log("fuzz: replay: %zu execs of thread %u ran a kept input\n", t->nsubst, t->id);
}

/* --- coverage: KCOV, the set of PCs, the corpus ---------------------- */

/* Add @pc to the set: true when no exec had reached it before. */
static bool fz_pc_add(uint64_t pc)
{
	const uint64_t mask = (1ULL << FZ_PCSET_BITS) - 1;
	uint64_t i = (pc * 0x9e3779b97f4a7c15ULL) >> (64 - FZ_PCSET_BITS);
	uint64_t n;

	for (n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uint64_t cur = __atomic_load_n(&g.pcs[i], __ATOMIC_RELAXED);

		if (cur == pc)
			return false;
		if (cur)
			continue;
		if (__atomic_compare_exchange_n(&g.pcs[i], &cur, pc, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_fetch_add(&g.npcs, 1, __ATOMIC_RELAXED);
			return true;
		}
		if (cur == pc)
			return false;
	}
	return false;	/* full: nothing counts as new any more */
}

/*
 * KCOV for this thread (Documentation/dev-tools/kcov.rst): a buffer of
 * FZ_COVER entries, tracing PCs of this thread's system calls from now
 * on. Without KCOV the run goes on without coverage.
 */
static void fz_kcov_open(struct fz_thread *t)
{
	uint64_t *cover;
	int fd;

	t->kcov_fd = -1;
	if (!g.pcs)
		return;
	fd = open(FZ_KCOV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (ioctl(fd, KCOV_INIT_TRACE, FZ_COVER))
		goto out_close;
	cover = mmap(NULL, FZ_COVER * sizeof(*cover), PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, 0);
	if (cover == MAP_FAILED)
		goto out_close;
	if (ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC)) {
		munmap(cover, FZ_COVER * sizeof(*cover));
		goto out_close;
	}
	t->cover = cover;
	t->kcov_fd = fd;
	return;

out_close:
	fz_log("fuzz: thread %u: KCOV: %s: no coverage from it\n", t->id,
	       strerror(errno));
	close(fd);
}

static void fz_kcov_reset(struct fz_thread *t)
{
	if (t->cover)
		__atomic_store_n(&t->cover[0], 0, __ATOMIC_RELAXED);
}

/* The PCs of the exec that just ended: true when one of them is new. */
static bool fz_kcov_collect(struct fz_thread *t)
{
	uint64_t n, i;
	bool fresh = false;

	if (!t->cover)
		return false;
	n = __atomic_load_n(&t->cover[0], __ATOMIC_RELAXED);
	if (n > FZ_COVER - 1)
		n = FZ_COVER - 1;
	for (i = 1; i <= n; i++)
		fresh |= fz_pc_add(t->cover[i]);
	return fresh;
}

static void fz_kcov_close(struct fz_thread *t)
{
	if (t->kcov_fd < 0)
		return;
	ioctl(t->kcov_fd, KCOV_DISABLE, 0);
	munmap(t->cover, FZ_COVER * sizeof(*t->cover));
	close(t->kcov_fd);
	t->cover = NULL;
	t->kcov_fd = -1;
}

/* Keep @in, which reached new code: in memory, and in -c DIR. */
static void fz_corpus_add(const struct fz_input *in, unsigned int family,
			  unsigned int op)
{
	char path[512];
	FILE *f;

	pthread_mutex_lock(&g.corpus_lock);
	g.corpus[g.ncorpus++ % FZ_CORPUS] = *in;
	pthread_mutex_unlock(&g.corpus_lock);
	if (!opt.corpus_dir)
		return;
	snprintf(path, sizeof(path), "%s/%016llx-%016llx", opt.corpus_dir,
		 (unsigned long long)in->seed, (unsigned long long)in->mut);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%llu %llu %s/%s\n", (unsigned long long)in->seed,
		(unsigned long long)in->mut, fz_families[family].name,
		fz_op_name(family, op));
	fclose(f);
}

/* The inputs an earlier run kept in -c DIR (their names say them). */
static void fz_corpus_load(void)
{
	unsigned long long seed, mut;
	struct dirent *e;
	DIR *d;

	if (!opt.corpus_dir)
		return;
	mkdir(opt.corpus_dir, 0755);
	d = opendir(opt.corpus_dir);
	if (!d)
		return;
	while ((e = readdir(d)) && g.ncorpus < FZ_CORPUS)
		if (sscanf(e->d_name, "%16llx-%16llx", &seed, &mut) == 2)
			g.corpus[g.ncorpus++] = (struct fz_input){ seed, mut };
	closedir(d);
}

/*
 * The next exec's input. Three draws of the thread's stream per exec,
 * whatever happens, so that exec i's fresh seed depends on (SEED, thread,
 * i) alone. Now and then (with coverage) a kept input, mutated, instead;
 * which is logged for the replay, which takes it from there.
 */
static void fz_next_input(struct fz_thread *t, struct fz_input *in)
{
	uint64_t fresh = fz_mix(&t->stream);
	uint64_t pick = fz_mix(&t->stream);
	uint64_t mut = fz_mix(&t->stream) | 1;
	uint64_t n;

	*in = (struct fz_input){ .seed = fresh };
	if (opt.replay) {
		if (t->subst_at < t->nsubst && t->subst[t->subst_at].exec == t->exec)
			*in = t->subst[t->subst_at++].in;
		return;
	}
	n = __atomic_load_n(&g.ncorpus, __ATOMIC_RELAXED);
	if (!g.pcs || !n || (pick & 0xff) >= 51)
		return;
	pthread_mutex_lock(&g.corpus_lock);
	in->seed = g.corpus[(pick >> 8) % fz_min(n, FZ_CORPUS)].seed;
	pthread_mutex_unlock(&g.corpus_lock);
	in->mut = mut;
	fz_subst_log(t, in);
}

/* --- family a: /dev/mrcore_test -------------------------------------- */

/*
 * An ioctl of the thread's context: 0 or -errno, counted. Now and then
 * the argument is a bad pointer instead (every command copies its
 * argument in or out, and one that made something before its copy out
 * failed must unmake it: kmemleak tells). What such a call wrote is not
 * in our copy, so the caller sees -EFAULT whatever the kernel said.
 */
static int cd_ioctl(struct fz_thread *t, unsigned long cmd, void *arg)
{
	void *p = !t->exact && fz_one_in(t, 32) ? fz_bad_arg(t, _IOC_SIZE(cmd)) : arg;
	int ret = fz_sys(ioctl(t->cd.fd, cmd, p));

	return p == arg || ret ? ret : -EFAULT;
}

/* A PD index: one of the context's two, or not. */
static uint32_t cd_pd(struct fz_thread *t)
{
	return fz_below(t, 8) ? fz_below(t, MRCT_NUM_PDS) : fz_u32(t);
}

/*
 * Keep @o, just made, in @tab and its keys among the thread's keys; when
 * the table is full, give it back at once with @free_cmd (every freeing
 * command takes { handle, reserved }).
 */
static void cd_keep(struct fz_thread *t, struct fz_tab *tab,
		    const struct fz_obj *o, unsigned long free_cmd)
{
	struct mrct_dereg d = { .handle = o->h };

	if (o->lkey)
		fz_key_add(t, o->lkey);
	if (o->rkey && o->rkey != o->lkey)
		fz_key_add(t, o->rkey);
	if (!tab_add(tab, o))
		fz_sys(ioctl(t->cd.fd, free_cmd, &d));
}

/* Keep an MR of MRCT_REG or MRCT_REG_DMABUF, as its answer describes it. */
static void cd_keep_mr(struct fz_thread *t, uint32_t h, const struct mrct_mr_info *info,
		       uint32_t pd, uint64_t iova, uint64_t len)
{
	struct fz_obj o = {
		.h = h, .lkey = info->lkey, .rkey = info->rkey, .aux = pd,
		.iova = iova, .len = len,
	};

	cd_keep(t, &t->cd.mrs, &o, MRCT_DEREG);
}

/* MRCT_REG as @r says, the MR kept. */
static void cd_reg_one(struct fz_thread *t, struct mrct_reg *r)
{
	if (!cd_ioctl(t, MRCT_REG, r))
		cd_keep_mr(t, r->handle, &r->info, r->pd, r->iova, r->length);
}

/* Held key requests go on: from this file, or from a new unbound one. */
static void cd_release_holds(struct fz_thread *t, bool other_file)
{
	struct fz_cd *cd = &t->cd;
	int fd = other_file ? open("/dev/" MRCT_DEV_NAME, O_RDWR | O_CLOEXEC) : -1;
	unsigned int i;

	for (i = 0; i < cd->ntokens; i++) {
		struct mrct_keys_hold h = { .token = cd->tokens[i] };

		fz_sys(ioctl(fd >= 0 ? fd : cd->fd, MRCT_KEYS_RELEASE, &h));
	}
	cd->ntokens = 0;
	if (fd >= 0)
		close(fd);
}

/*
 * Bind the context to the device, and register the canary on PD 0, with
 * remote read rights only: no write through any key may land in it.
 */
static int cd_bind(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_set_device sd = {};
	struct mrct_reg r = {
		.addr = (uintptr_t)t->canary,
		.length = FZ_CANARY_LEN,
		.iova = (uintptr_t)t->canary,
		.access = MRCT_ACCESS_REMOTE_READ,
	};
	int ret;

	snprintf(sd.name, sizeof(sd.name), "%s", opt.dev);
	ret = fz_sys(ioctl(cd->fd, MRCT_SET_DEVICE, &sd));
	if (ret)
		return ret;
	cd->bound = true;
	ret = fz_sys(ioctl(cd->fd, MRCT_REG, &r));
	if (ret)
		return ret;
	cd->canary_h = r.handle;
	fz_key_add(t, r.info.lkey);
	fz_key_add(t, r.info.rkey);
	return 0;
}

/* Open and bind the thread's context: 0, or -errno. */
static int cd_open(struct fz_thread *t, bool bind)
{
	struct fz_cd *cd = &t->cd;
	int dmabufs[ARRAY_SIZE(cd->dmabufs)];
	unsigned int n = cd->ndmabufs;

	/* Everything of the old context goes; the dma-buf files do not. */
	memcpy(dmabufs, cd->dmabufs, sizeof(dmabufs));
	memset(cd, 0, sizeof(*cd));
	memcpy(cd->dmabufs, dmabufs, sizeof(dmabufs));
	cd->ndmabufs = n;
	cd->fd = open("/dev/" MRCT_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (cd->fd < 0)
		return -errno;
	return bind ? cd_bind(t) : 0;
}

/* Close the context with whatever it holds, and open a new one. */
static void cd_reopen(struct fz_thread *t)
{
	fz_what(t, "close");
	cd_release_holds(t, fz_one_in(t, 2));
	if (t->cd.fd >= 0)
		close(t->cd.fd);
	/* Now and then one stays unbound: every call is then -ENODEV. */
	cd_open(t, !fz_one_in(t, 8));
}

/* MRCT_SET_DEVICE again, and calls on files that are not bound. */
static void cd_set_device(struct fz_thread *t)
{
	static const unsigned long unbound[] = {
		MRCT_COUNTERS, MRCT_REG, MRCT_QP_CREATE, MRCT_FRWR_ALLOC,
		MRCT_FMR_POOL_CREATE, MRCT_MW_ALLOC, MRCT_CNT_ALLOC,
		MRCT_KEYS_REG, MRCT_ODP_STATS, MRCT_GAPS_ALLOC,
	};
	struct mrct_set_device sd = {};
	uint64_t arg[32] = {};
	int fd;

	switch (fz_below(t, 5)) {
	case 0:
		fz_what(t, "again");
		snprintf(sd.name, sizeof(sd.name), "%s", opt.dev);
		cd_ioctl(t, MRCT_SET_DEVICE, &sd);
		return;
	case 1:
		fz_what(t, "no NUL");
		memset(sd.name, 'v', sizeof(sd.name));
		break;
	case 2:
		fz_what(t, "no such device");
		snprintf(sd.name, sizeof(sd.name), "vhca%u", 90 + (unsigned int)fz_below(t, 10));
		break;
	case 3:
		fz_what(t, "garbage after NUL");
		fz_fill(t, sd.name, sizeof(sd.name));
		snprintf(sd.name, sizeof(sd.name) / 2, "%s", opt.dev);
		break;
	default:
		fz_what(t, "unbound");
		break;
	}
	fd = open("/dev/" MRCT_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (fz_sys(fd))
		return;
	if (sd.name[0])
		fz_sys(ioctl(fd, MRCT_SET_DEVICE, &sd));
	fz_sys(ioctl(fd, unbound[fz_below(t, ARRAY_SIZE(unbound))], arg));
	close(fd);
}

static void cd_reg(struct fz_thread *t)
{
	struct mrct_reg r = {};

	if (fz_one_in(t, 32)) {
		fz_what(t, "implicit ODP");
		r.length = ~0ULL;
		r.access = MRCT_ACCESS_ON_DEMAND | (fz_rand(t) & 0xf);
	} else {
		r.access = fz_access(t);
		fz_range(t, r.access, &r.addr, &r.length);
	}
	r.iova = fz_below(t, 3) ? r.addr : fz_u64(t);
	r.pd = cd_pd(t);
	if (fz_one_in(t, 32))
		r.reserved = fz_u32(t);
	cd_reg_one(t, &r);
}

/* A transfer length: small inside @o mostly, else an edge. */
static uint64_t cd_xfer_len(struct fz_thread *t, const struct fz_obj *o)
{
	uint64_t in = o && o->len ? fz_min(o->len, FZ_SMALL_LEN) : FZ_PAGE;

	switch (fz_below(t, 8)) {
	case 0:
		return fz_len(t, o ? o->len : 0);
	case 1:
		return MRCT_MAX_XFER + fz_below(t, 2);
	default:
		return fz_below(t, in + 1);
	}
}

/* MRCT_DEV_READ / _WRITE: the device moves bytes through a key. */
static void cd_xfer(struct fz_thread *t)
{
	bool write = fz_one_in(t, 2);
	struct mrct_xfer x = {};
	struct fz_obj *o;

	fz_what(t, write ? "dev_write" : "dev_read");
	x.handle = tab_handle(t, &t->cd.mrs, &o, t->cd.canary_h);
	/* The canary may be read, and must refuse every write. */
	if (fz_one_in(t, 16))
		x.handle = t->cd.canary_h;
	x.flags = fz_below(t, 8) ? fz_below(t, 4) : fz_u32(t);
	if (x.flags & MRCT_XFER_RAW_KEY)
		x.key = fz_key(t);
	x.iova = fz_iova_in(t, o);
	x.length = cd_xfer_len(t, o);
	x.ptr = fz_ubuf(t, x.length);
	x.pd = cd_pd(t);
	cd_ioctl(t, write ? MRCT_DEV_WRITE : MRCT_DEV_READ, &x);
}

static void cd_rereg(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_rereg rr = {};
	struct fz_obj *o;

	rr.handle = tab_handle(t, &cd->mrs, &o, cd->canary_h);
	rr.flags = fz_below(t, 8) ? 1 + fz_below(t, 7) : fz_u32(t);
	/* The MR may be an ODP one: its new range is bounded as if it were. */
	fz_range(t, MRCT_ACCESS_ON_DEMAND, &rr.addr, &rr.length);
	rr.iova = fz_below(t, 3) ? rr.addr : fz_u64(t);
	rr.access = fz_access(t);
	rr.pd = cd_pd(t);
	if (cd_ioctl(t, MRCT_REREG, &rr) || !o)
		return;
	o->lkey = rr.info.lkey;
	o->rkey = rr.info.rkey;
	fz_key_add(t, o->lkey);
	if (rr.flags & MRCT_REREG_TRANS) {
		o->iova = rr.iova;
		o->len = rr.length;
	}
	if (rr.flags & MRCT_REREG_PD)
		o->aux = rr.pd;
}

/* The commands that free an object by its handle (and its table). */
static const struct fz_free cd_frees[] = {
	{ "dereg", MRCT_DEREG, offsetof(struct fz_cd, mrs) },
	{ "qp_destroy", MRCT_QP_DESTROY, offsetof(struct fz_cd, pairs) },
	{ "frwr_free", MRCT_FRWR_FREE, offsetof(struct fz_cd, frwr) },
	{ "fmr_pool_destroy", MRCT_FMR_POOL_DESTROY, offsetof(struct fz_cd, pools) },
	{ "fmr_unmap", MRCT_FMR_UNMAP, offsetof(struct fz_cd, fmaps) },
	{ "mw_dealloc", MRCT_MW_DEALLOC, offsetof(struct fz_cd, mws) },
	{ "ind_dereg", MRCT_IND_DEREG, offsetof(struct fz_cd, inds) },
	{ "gaps_free", MRCT_GAPS_FREE, offsetof(struct fz_cd, gaps) },
	{ "cnt_free", MRCT_CNT_FREE, offsetof(struct fz_cd, cnts) },
	{ "keys_dereg", MRCT_KEYS_DEREG, offsetof(struct fz_cd, keys) },
};

static void cd_free(struct fz_thread *t)
{
	const struct fz_free *f;
	struct mrct_dereg d = {};
	struct fz_tab *tab;
	struct fz_obj *o;

	f = fz_free_pick(t, cd_frees, ARRAY_SIZE(cd_frees), &t->cd, t->cd.canary_h,
			 &tab, &o, &d.handle);
	if (fz_one_in(t, 32))
		d.reserved = fz_u32(t);
	if (!cd_ioctl(t, f->cmd, &d) && o)
		tab_del(tab, o);
}

static void cd_counters(struct fz_thread *t)
{
	struct mrct_counters c;

	cd_ioctl(t, MRCT_COUNTERS, &c);
}

static void cd_qp_create(struct fz_thread *t)
{
	struct mrct_qp_create qc = {};
	struct fz_obj o = {};

	qc.pd = cd_pd(t);
	qc.access = fz_below(t, 4) ? fz_rand(t) & 0xf : fz_access(t);
	qc.max_send_sge = fz_below(t, 4) ? 1 + fz_below(t, 4) : fz_count(t, MRCT_QP_MAX_SGE);
	qc.max_recv_sge = fz_below(t, 4) ? 1 + fz_below(t, 4) : fz_count(t, MRCT_QP_MAX_SGE);
	qc.max_inline = fz_below(t, 4) ? fz_below(t, 512) : fz_count(t, MRCT_QP_MAX_INLINE);
	if (fz_one_in(t, 32))
		qc.reserved = fz_u32(t);
	if (cd_ioctl(t, MRCT_QP_CREATE, &qc))
		return;
	t->cd.dma_lkey = qc.local_dma_lkey;
	o.h = qc.handle;
	o.aux = qc.pd;
	cd_keep(t, &t->cd.pairs, &o, MRCT_QP_DESTROY);
}

/* An SGE list of @n entries over the thread's MRs (or @user addresses). */
static void cd_sges(struct fz_thread *t, struct mrct_sge *sge, uint32_t n, bool user)
{
	uint32_t i;

	for (i = 0; i < fz_min(n, MRCT_QP_MAX_SGE); i++) {
		struct fz_obj *mr = tab_pick(t, &t->cd.mrs);

		sge[i].length = cd_xfer_len(t, mr);
		sge[i].lkey = mr && fz_below(t, 4) ? mr->lkey : fz_key(t);
		sge[i].addr = user ? fz_ubuf(t, sge[i].length) : fz_iova_in(t, mr);
	}
}

/* A receive on QP @q of @pair (-1: any), with SGEs over the thread's MRs. */
static void cd_post_recv(struct fz_thread *t, struct fz_obj *pair, int q)
{
	struct mrct_qp_recv r = {};
	struct fz_obj *o = pair;

	if (o)
		r.handle = o->h;
	else
		r.handle = tab_handle(t, &t->cd.pairs, &o, 0);
	r.qp = q >= 0 ? (uint32_t)q : fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
	r.num_sge = fz_below(t, 4) ? fz_below(t, 3) : fz_count(t, MRCT_QP_MAX_SGE);
	cd_sges(t, r.sge, r.num_sge, false);
	if (!cd_ioctl(t, MRCT_QP_POST_RECV, &r) && !r.post_err && o && r.qp < 2)
		o->n[r.qp]++;
}

static void cd_qp_post_recv(struct fz_thread *t)
{
	cd_post_recv(t, NULL, -1);
}

/*
 * A send on QP @q of @pair that consumes a receive (SEND, with immediate,
 * with invalidate) must find one posted on the peer: without, the peer
 * answers RNR for ever and the call waits its minute. False when none
 * could be posted.
 */
static bool cd_need_recv(struct fz_thread *t, struct fz_obj *pair, uint32_t q)
{
	if (!pair || q > 1 || pair->n[!q])
		return true;
	cd_post_recv(t, pair, !q);
	return pair->n[!q];
}

/*
 * After a send on QP @q of @pair: its peer's receive is taken (and its
 * completion waits to be collected, unless @waited); a QP that went to
 * ERR has flushed its receives, whose completions now wait.
 */
static void cd_after_send(struct fz_obj *pair, uint32_t q, bool consumed,
			  bool waited, const uint32_t *state)
{
	uint32_t i;

	if (!pair || q > 1)
		return;
	if (consumed && pair->n[!q]) {
		pair->n[!q]--;
		pair->n[2 + !q] += !waited;
	}
	for (i = 0; i < 2; i++) {
		uint32_t qp = i ? !q : q;

		if (state[i] != MRCT_QPS_ERR)
			continue;
		pair->n[2 + qp] += pair->n[qp];
		pair->n[qp] = 0;
	}
}

/* Does @opcode take a receive of the peer? */
static bool cd_consumes(uint32_t opcode)
{
	return opcode == 1 || opcode == MRCT_WR_SEND || opcode == 3 ||
	       opcode == MRCT_WR_SEND_WITH_INV;
}

/*
 * MRCT_QP_POST: one WR of any opcode, unknown ones included. IB_WR_BIND_MW
 * (8) and the registration opcodes (0x20, 0x21) must be refused by the
 * module (-EINVAL): their WRs are other structures (struct vhca_bind_mw_wr,
 * struct ib_reg_wr), which it posts with MRCT_MW_BIND_WR and MRCT_FRWR_REG.
 */
static void cd_qp_post(struct fz_thread *t)
{
	static const uint32_t ops[] = {
		MRCT_WR_RDMA_WRITE, 1, MRCT_WR_SEND, 3, MRCT_WR_RDMA_READ,
		MRCT_WR_ATOMIC_CMP_AND_SWP, MRCT_WR_ATOMIC_FETCH_AND_ADD,
		MRCT_WR_LOCAL_INV, MRCT_WR_SEND_WITH_INV, MRCT_WR_LSO, 11, 12,
		13, 14, 15, 16, 31, 0xff, 8, 0x20, 0x21,
	};
	struct mrct_qp_post p = {};
	struct fz_obj *pair, *mr;
	bool ok;

	p.handle = tab_handle(t, &t->cd.pairs, &pair, 0);
	p.qp = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
	p.opcode = fz_below(t, 4) ? ops[fz_below(t, 7)] : ops[fz_below(t, ARRAY_SIZE(ops))];
	if (cd_consumes(p.opcode) && !cd_need_recv(t, pair, p.qp))
		p.opcode = MRCT_WR_RDMA_WRITE;
	p.send_flags = fz_below(t, 8) ? fz_rand(t) & MRCT_SEND_FLAGS : fz_u32(t);
	p.rkey = fz_key(t);
	mr = tab_pick(t, &t->cd.mrs);
	p.remote_addr = fz_iova_in(t, mr);
	p.compare_add = fz_u64(t);
	p.swap = fz_u64(t);
	p.num_sge = fz_below(t, 4) ? fz_below(t, 4) : fz_count(t, MRCT_QP_MAX_SGE);
	cd_sges(t, p.sge, p.num_sge, p.send_flags & MRCT_SEND_INLINE);
	if (cd_consumes(p.opcode) && fz_one_in(t, 2))
		p.flags = MRCT_POST_WAIT_RECV;
	else if (fz_one_in(t, 32))
		p.flags = fz_u32(t);
	fz_what(t, p.send_flags & MRCT_SEND_INLINE ? "inline" : "");
	ok = !cd_ioctl(t, MRCT_QP_POST, &p) && !p.post_err;
	if (ok)
		cd_after_send(pair, p.qp, cd_consumes(p.opcode) &&
			      p.status == MRCT_WC_SUCCESS,
			      p.flags & MRCT_POST_WAIT_RECV, p.qp_state);
}

/*
 * MRCT_QP_WAIT_RECV waits its minute for a receive completion that never
 * comes, so it is asked for one only where a completion waits, or with
 * arguments it must refuse at once.
 */
static void cd_qp_wait_recv(struct fz_thread *t)
{
	struct mrct_qp_wait_recv w = {};
	struct fz_obj *pair = tab_pick(t, &t->cd.pairs);
	uint32_t q = fz_below(t, 2);

	if (pair && pair->n[2 + q] && fz_below(t, 4)) {
		w.handle = pair->h;
		w.qp = q;
		if (!cd_ioctl(t, MRCT_QP_WAIT_RECV, &w))
			pair->n[2 + q]--;
		return;
	}
	fz_what(t, "refused");
	w.handle = pair ? pair->h : 0;
	w.qp = 2 + fz_below(t, 0xfff0);
	if (fz_one_in(t, 2)) {
		w.qp = q;
		w.handle = pair ? pair->h + 1000 : 0;
	}
	cd_ioctl(t, MRCT_QP_WAIT_RECV, &w);
}

/* A pair's handle and QP index, for the calls that post on a pair. */
static void cd_pair(struct fz_thread *t, uint32_t *pair, uint32_t *qp,
		    struct fz_obj **o)
{
	*pair = tab_handle(t, &t->cd.pairs, o, 0);
	*qp = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
}

/* A benchmark's duration: short, or refused. */
static uint64_t cd_min_ns(struct fz_thread *t)
{
	static const uint64_t ns[] = {
		0, 1, 100000, 1000000, MRCT_BENCH_MAX_NS + 1, ~0ULL,
	};

	return ns[fz_below(t, ARRAY_SIZE(ns))];
}

static void cd_bench(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct fz_obj *o, *mr = tab_pick(t, &cd->mrs);

	switch (fz_below(t, 4)) {
	case 0: {
		struct mrct_bench_memcpy b = {
			.length = fz_below(t, 8) ? fz_below(t, FZ_SMALL_LEN) :
				  MRCT_BENCH_MAX_LEN + fz_below(t, 2),
			.min_ns = cd_min_ns(t),
		};

		fz_what(t, "memcpy");
		cd_ioctl(t, MRCT_BENCH_MEMCPY, &b);
		break;
	}
	case 1: {
		struct mrct_bench_write b = {};

		fz_what(t, "write");
		cd_pair(t, &b.handle, &b.qp, &o);
		b.length = cd_xfer_len(t, mr);
		b.lkey = mr ? mr->lkey : fz_key(t);
		b.rkey = fz_key(t);
		b.local_addr = fz_iova_in(t, mr);
		b.remote_addr = fz_iova_in(t, tab_pick(t, &cd->mrs));
		b.depth = fz_count(t, MRCT_QP_DEPTH);
		b.min_ns = cd_min_ns(t);
		cd_ioctl(t, MRCT_BENCH_WRITE, &b);
		break;
	}
	case 2: {
		struct mrct_frwr_bench b = {};

		fz_what(t, "frwr");
		cd_pair(t, &b.pair, &b.qp, &o);
		b.npages = fz_count(t, MRCT_FRWR_BENCH_MAX_PAGES);
		b.depth = fz_count(t, MRCT_QP_DEPTH / 2);
		b.min_ns = cd_min_ns(t);
		cd_ioctl(t, MRCT_FRWR_BENCH, &b);
		break;
	}
	default: {
		struct mrct_fmr_bench b = {};

		fz_what(t, "fmr");
		b.pool = tab_handle(t, &cd->pools, &o, 0);
		b.npages = fz_count(t, MRCT_FMR_MAX_LIST);
		b.mode = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
		b.min_ns = cd_min_ns(t);
		cd_ioctl(t, MRCT_FMR_BENCH, &b);
		break;
	}
	}
}

static void cd_frwr_alloc(struct fz_thread *t)
{
	static const uint32_t shifts[] = { 11, 12, 12, 13, 16, 21, 22, 64 };
	struct mrct_frwr_alloc fa = {};
	struct fz_obj o = {};

	fa.pd = cd_pd(t);
	fa.max_pages = fz_count(t, 64);
	fa.nchunks = fz_below(t, 8) ? fz_count(t, 32) : MRCT_FRWR_MAX_CHUNKS + fz_below(t, 2);
	fa.chunk_shift = shifts[fz_below(t, ARRAY_SIZE(shifts))];
	/* Valid but large buffers (up to 16 MiB each) would fill the VM. */
	if (fa.chunk_shift >= 12 && fa.chunk_shift <= 21 &&
	    fa.nchunks && fa.nchunks <= MRCT_FRWR_MAX_CHUNKS &&
	    ((uint64_t)fa.nchunks << fa.chunk_shift) > (1UL << 20))
		fa.nchunks = 1 + ((1UL << 20) >> fa.chunk_shift) / 2;
	if (cd_ioctl(t, MRCT_FRWR_ALLOC, &fa))
		return;
	o = (struct fz_obj){
		.h = fa.handle, .lkey = fa.lkey, .rkey = fa.rkey, .aux = fa.pd,
		.n = { fa.nchunks, fa.chunk_shift },
	};
	cd_keep(t, &t->cd.frwr, &o, MRCT_FRWR_FREE);
}

static void cd_frwr_reg(struct fz_thread *t)
{
	static const uint32_t sizes[] = { 4096, 8192, 2 << 20, 0, 3000, 1U << 31 };
	struct mrct_frwr_reg fr = {};
	struct fz_obj *o, *pair;
	uint64_t chunk;

	fr.handle = tab_handle(t, &t->cd.frwr, &o, 0);
	cd_pair(t, &fr.pair, &fr.qp, &pair);
	chunk = o ? 1ULL << fz_min(o->n[1], 21) : FZ_PAGE;
	fr.access = fz_access(t);
	fr.flags = fz_below(t, 8) ? fz_below(t, 5) : fz_u32(t);
	fr.key = fr.flags & MRCT_FRWR_RAW_KEY ? fz_key(t) : fz_u32(t) & 0xff;
	fr.first = o && fz_below(t, 4) ? fz_below(t, o->n[0] + 1) : fz_u32(t);
	fr.stride = fz_below(t, 4) ? fz_below(t, 3) : fz_u32(t);
	fr.offset = fz_below(t, 2) ? 0 : fz_below(t, 4) ? fz_below(t, chunk) : fz_u32(t);
	fr.page_size = fz_below(t, 2) ? chunk : sizes[fz_below(t, ARRAY_SIZE(sizes))];
	fr.length = fz_below(t, 4) ? 1 + fz_below(t, chunk * (o ? o->n[0] : 1)) : fz_u64(t);
	if (!cd_ioctl(t, MRCT_FRWR_REG, &fr) && o && fr.status == MRCT_WC_SUCCESS)
		fz_rekey(t, o, fr.lkey, fr.rkey, fr.iova, fr.length);
}

static void cd_frwr_inv(struct fz_thread *t)
{
	struct mrct_frwr_inv fi = {};
	struct fz_obj *pair;

	cd_pair(t, &fi.pair, &fi.qp, &pair);
	fi.opcode = fz_below(t, 8) ? (fz_one_in(t, 2) ? MRCT_WR_LOCAL_INV :
				      MRCT_WR_SEND_WITH_INV) : fz_u32(t);
	if (fi.opcode == MRCT_WR_SEND_WITH_INV && !cd_need_recv(t, pair, fi.qp))
		fi.opcode = MRCT_WR_LOCAL_INV;
	fi.key = fz_key(t);
	if (fi.opcode == MRCT_WR_SEND_WITH_INV && fz_one_in(t, 2))
		fi.flags = MRCT_POST_WAIT_RECV;
	if (!cd_ioctl(t, MRCT_FRWR_INV, &fi) && !fi.post_err)
		cd_after_send(pair, fi.qp, fi.opcode == MRCT_WR_SEND_WITH_INV &&
			      (fi.status == MRCT_WC_SUCCESS ||
			       fi.status == MRCT_WC_REM_INV_REQ_ERR),
			      fi.flags & MRCT_POST_WAIT_RECV, fi.qp_state);
}

static void cd_frwr_xfer(struct fz_thread *t)
{
	struct mrct_frwr_xfer fx = {};
	struct fz_obj *o, *pair;

	fx.handle = tab_handle(t, &t->cd.frwr, &o, 0);
	cd_pair(t, &fx.pair, &fx.qp, &pair);
	fx.dir = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
	fx.flags = fz_below(t, 4) ? 0 : fz_u32(t) & 3;
	fx.key = fx.flags & MRCT_FRWR_XFER_RAW_KEY ? fz_key(t) : 0;
	fx.offset = fz_below(t, 4) ? 0 : fz_u64(t) & 0xffff;
	fx.length = cd_xfer_len(t, o);
	fx.seed = fz_rand(t);
	fx.seed_old = fz_below(t, 8) ? fx.seed ^ 0x5a : fx.seed;
	cd_ioctl(t, MRCT_FRWR_XFER, &fx);
}

static void cd_frwr_cycle(struct fz_thread *t)
{
	struct mrct_frwr_cycle fc = {};
	struct fz_obj *o, *pair;

	fc.handle = tab_handle(t, &t->cd.frwr, &o, 0);
	cd_pair(t, &fc.pair, &fc.qp, &pair);
	fc.cycles = fz_below(t, 8) ? 1 + fz_below(t, 8) :
		    fz_one_in(t, 2) ? 0 : MRCT_FRWR_MAX_CYCLES + 1;
	fc.max_nents = fz_count(t, o ? o->n[0] : 4);
	fc.access = fz_below(t, 2) ? MRCT_ACCESS_LOCAL_WRITE | MRCT_ACCESS_REMOTE_WRITE :
		    fz_access(t);
	fc.seed = fz_rand(t);
	if (!cd_ioctl(t, MRCT_FRWR_CYCLE, &fc) && o)
		fz_key_add(t, fc.key);
}

static void cd_fmr_pool_create(struct fz_thread *t)
{
	struct mrct_fmr_pool_create pc = {};
	struct fz_obj o = {};

	pc.pd = cd_pd(t);
	pc.pool_size = fz_count(t, 16);
	pc.max_pages = fz_count(t, MRCT_FMR_MAX_LIST);
	pc.max_remaps = fz_count(t, 8);
	pc.dirty_watermark = fz_count(t, pc.pool_size);
	pc.access = fz_access(t);
	pc.flags = fz_below(t, 8) ? fz_below(t, 4) : fz_u32(t);
	if (cd_ioctl(t, MRCT_FMR_POOL_CREATE, &pc))
		return;
	o.h = pc.handle;
	o.n[0] = pc.max_pages;
	cd_keep(t, &t->cd.pools, &o, MRCT_FMR_POOL_DESTROY);
}

static void cd_fmr_map(struct fz_thread *t)
{
	struct mrct_fmr_map m = {};
	struct fz_obj *pool, o = {};
	uint32_t i;

	m.pool = tab_handle(t, &t->cd.pools, &pool, 0);
	m.npages = fz_count(t, pool ? pool->n[0] : MRCT_FMR_MAX_LIST);
	for (i = 0; i < fz_min(m.npages, MRCT_FMR_MAX_LIST); i++)
		m.pages[i] = fz_below(t, 16) ? fz_below(t, MRCT_FMR_BUF_PAGES) :
			     fz_u32(t);
	m.iova = fz_below(t, 4) ? fz_rand(t) & ~0xfffULL & 0xffffffffffffULL : fz_u64(t);
	if (cd_ioctl(t, MRCT_FMR_MAP, &m))
		return;
	o = (struct fz_obj){
		.h = m.handle, .lkey = m.key, .rkey = m.key, .iova = m.iova,
		.len = m.length,
	};
	cd_keep(t, &t->cd.fmaps, &o, MRCT_FMR_UNMAP);
}

/* FMR: flush, stats, and the CPU's copies in and out of the buffer. */
static void cd_fmr_misc(struct fz_thread *t)
{
	struct fz_obj *pool;

	switch (fz_below(t, 4)) {
	case 0:
	case 1: {
		struct mrct_fmr_handle h = {};
		struct mrct_fmr_stats s = {};
		bool flush = fz_one_in(t, 2);

		fz_what(t, flush ? "flush" : "stats");
		h.handle = tab_handle(t, &t->cd.pools, &pool, 0);
		s.pool = h.handle;
		cd_ioctl(t, flush ? MRCT_FMR_FLUSH : MRCT_FMR_STATS,
			 flush ? (void *)&h : (void *)&s);
		break;
	}
	default: {
		const uint32_t buf = MRCT_FMR_BUF_PAGES * FZ_PAGE;
		struct mrct_fmr_buf b = {};
		bool write = fz_one_in(t, 2);

		fz_what(t, write ? "buf_write" : "buf_read");
		b.offset = fz_below(t, 4) ? fz_below(t, buf) : fz_u32(t);
		b.length = fz_below(t, 4) ? fz_below(t, buf - fz_min(b.offset, buf) + 1) :
			   fz_u32(t);
		b.ptr = fz_ubuf(t, b.length);
		cd_ioctl(t, write ? MRCT_FMR_BUF_WRITE : MRCT_FMR_BUF_READ, &b);
		break;
	}
	}
}

static void cd_mw_alloc(struct fz_thread *t)
{
	struct mrct_mw_alloc a = {};
	struct fz_obj o = {};

	a.pd = cd_pd(t);
	a.type = fz_below(t, 8) ? 1 + fz_below(t, 2) : fz_u32(t);
	if (cd_ioctl(t, MRCT_MW_ALLOC, &a))
		return;
	o = (struct fz_obj){ .h = a.handle, .rkey = a.rkey, .aux = a.type };
	cd_keep(t, &t->cd.mws, &o, MRCT_MW_DEALLOC);
}

/* A window's bounds over @mr: inside, all of it, unbind (0), or wild. */
static void cd_window(struct fz_thread *t, const struct fz_obj *mr,
		      __u64 *addr, __u64 *len)
{
	*addr = fz_iova_in(t, mr);
	switch (fz_below(t, 6)) {
	case 0:
		*len = 0;
		break;
	case 1:
		*len = mr ? mr->len : 1;
		break;
	case 2:
		*len = fz_u64(t);
		break;
	default:
		*len = 1 + fz_below(t, mr && mr->len ? mr->len : FZ_PAGE);
		break;
	}
}

static void cd_mw_bind(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_mw_bind b = {};
	struct fz_obj *mw, *mr;
	bool ind = fz_one_in(t, 4);

	b.handle = tab_handle(t, &cd->mws, &mw, 0);
	b.mr = ind ? tab_handle(t, &cd->inds, &mr, 0) :
		     tab_handle(t, &cd->mrs, &mr, cd->canary_h);
	/* The canary has no MW_BIND right: a bind on it must be refused. */
	if (fz_one_in(t, 32))
		b.mr = cd->canary_h;
	b.flags = ind ? MRCT_MW_BIND_INDIRECT : 0;
	if (fz_one_in(t, 32))
		b.flags = fz_u32(t);
	cd_window(t, mr, &b.addr, &b.length);
	b.access = fz_access(t);
	if (!cd_ioctl(t, MRCT_MW_BIND, &b) && mw)
		fz_rekey(t, mw, 0, b.rkey, b.addr, b.length);
}

static void cd_mw_bind_wr(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_mw_bind_wr b = {};
	struct fz_obj *mw, *mr = tab_pick(t, &cd->mrs), *pair;

	b.key_mode = fz_below(t, 8) ? fz_below(t, 3) : fz_u32(t);
	b.handle = b.key_mode == MRCT_MW_KEY_RAW && fz_one_in(t, 2) ? 0 :
		   tab_handle(t, &cd->mws, &mw, 0);
	b.mw_rkey = fz_key(t);
	b.mr_lkey = mr && fz_below(t, 4) ? mr->lkey : fz_key(t);
	cd_window(t, mr, &b.addr, &b.length);
	b.access = fz_below(t, 4) ? fz_rand(t) & (MRCT_ACCESS_REMOTE_WRITE |
						  MRCT_ACCESS_REMOTE_READ |
						  MRCT_ACCESS_REMOTE_ATOMIC |
						  MRCT_ACCESS_ZERO_BASED) :
		   fz_access(t);
	cd_pair(t, &b.pair, &b.qp, &pair);
	if (!cd_ioctl(t, MRCT_MW_BIND_WR, &b) && b.rkey)
		fz_key_add(t, b.rkey);
}

static void cd_ind_reg(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_ind_reg r = {};
	struct fz_obj o = {};
	uint32_t i;

	r.iova = fz_below(t, 2) ? fz_rand(t) & 0xfffffffff000ULL : fz_u64(t);
	r.pd = cd_pd(t);
	r.access = fz_below(t, 2) ? fz_rand(t) & 0xf : fz_access(t);
	r.nranges = fz_count(t, MRCT_IND_MAX_RANGES);
	for (i = 0; i < fz_min(r.nranges, MRCT_IND_MAX_RANGES); i++) {
		struct fz_obj *mr = tab_pick(t, fz_one_in(t, 4) ? &cd->inds : &cd->mrs);

		r.ranges[i].key = mr && fz_below(t, 4) ? mr->lkey : fz_key(t);
		r.ranges[i].addr = fz_iova_in(t, mr);
		r.ranges[i].length = fz_below(t, 4) ? 1 + fz_below(t, FZ_PAGE) : fz_u64(t);
		if (fz_one_in(t, 64))
			r.ranges[i].reserved = 1;
		o.len += r.ranges[i].length;
	}
	if (cd_ioctl(t, MRCT_IND_REG, &r))
		return;
	o.h = r.handle;
	o.lkey = r.key;
	o.rkey = r.key;
	o.iova = r.iova;
	cd_keep(t, &cd->inds, &o, MRCT_IND_DEREG);
}

static void cd_gaps_alloc(struct fz_thread *t)
{
	struct mrct_gaps_alloc a = {};
	struct fz_obj o = {};

	a.pd = cd_pd(t);
	a.max_sg = fz_count(t, MRCT_GAPS_MAX_PIECES);
	if (cd_ioctl(t, MRCT_GAPS_ALLOC, &a))
		return;
	o = (struct fz_obj){ .h = a.handle, .lkey = a.lkey, .rkey = a.rkey };
	cd_keep(t, &t->cd.gaps, &o, MRCT_GAPS_FREE);
}

static void cd_gaps_reg(struct fz_thread *t)
{
	struct mrct_gaps_reg r = {};
	struct fz_obj *o, *pair;
	uint32_t i;

	r.handle = tab_handle(t, &t->cd.gaps, &o, 0);
	cd_pair(t, &r.pair, &r.qp, &pair);
	r.access = fz_access(t);
	r.npieces = fz_count(t, MRCT_GAPS_MAX_PIECES);
	for (i = 0; i < fz_min(r.npieces, MRCT_GAPS_MAX_PIECES); i++) {
		r.pieces[i].offset = fz_below(t, 4) ? fz_below(t, MRCT_GAPS_BUF_SIZE) :
				     fz_u32(t);
		r.pieces[i].length = fz_below(t, 4) ? fz_below(t, 2 * FZ_PAGE) : fz_u32(t);
	}
	if (!cd_ioctl(t, MRCT_GAPS_REG, &r) && o && r.status == MRCT_WC_SUCCESS)
		fz_rekey(t, o, r.lkey, r.rkey, r.iova, r.length);
}

static void cd_gaps_buf(struct fz_thread *t)
{
	struct mrct_gaps_buf b = {};
	struct fz_obj *o;
	bool write = fz_one_in(t, 2);

	fz_what(t, write ? "write" : "read");
	b.handle = tab_handle(t, &t->cd.gaps, &o, 0);
	b.offset = fz_below(t, 4) ? fz_below(t, MRCT_GAPS_BUF_SIZE) : fz_u32(t);
	b.length = fz_below(t, 4) ? fz_below(t, MRCT_GAPS_BUF_SIZE + 1) : fz_u32(t);
	b.ptr = fz_ubuf(t, b.length);
	cd_ioctl(t, write ? MRCT_GAPS_BUF_WRITE : MRCT_GAPS_BUF_READ, &b);
}

static void cd_cnt_alloc(struct fz_thread *t)
{
	struct mrct_cnt_alloc a;
	struct fz_obj o = {};

	if (cd_ioctl(t, MRCT_CNT_ALLOC, &a))
		return;
	o.h = a.handle;
	cd_keep(t, &t->cd.cnts, &o, MRCT_CNT_FREE);
}

/* An lkey of any MR kind of the context, or any key. */
static uint32_t cd_any_lkey(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct fz_tab *tabs[] = { &cd->mrs, &cd->frwr, &cd->inds, &cd->gaps, &cd->fmaps };
	struct fz_obj *o = tab_pick(t, tabs[fz_below(t, ARRAY_SIZE(tabs))]);

	return o && fz_below(t, 4) ? o->lkey : fz_key(t);
}

static void cd_cnt_bind(struct fz_thread *t)
{
	struct mrct_cnt_bind b = {};
	struct fz_obj *o;

	b.key = cd_any_lkey(t);
	b.handle = fz_one_in(t, 4) ? 0 : tab_handle(t, &t->cd.cnts, &o, 0);
	b.flags = fz_below(t, 8) ? (b.handle ? MRCT_COUNT_REMOTE_WRITE : 0) : fz_u32(t);
	cd_ioctl(t, MRCT_CNT_BIND, &b);
}

static void cd_cnt_read(struct fz_thread *t)
{
	struct mrct_cnt_read r = {};
	struct fz_obj *o;

	r.handle = tab_handle(t, &t->cd.cnts, &o, 0);
	r.flags = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
	cd_ioctl(t, MRCT_CNT_READ, &r);
}

static void cd_keys_reg(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_keys_reg r = {};
	struct fz_obj o = {};

	r.access = fz_access(t);
	fz_range(t, r.access, &r.addr, &r.length);
	r.iova = fz_below(t, 3) ? r.addr : fz_u64(t);
	r.pd = cd_pd(t);
	switch (fz_below(t, 4)) {
	case 0:
		r.key = 0;
		break;
	case 1:
		r.key = fz_key(t);	/* in use, most likely */
		break;
	default:
		r.key = (uint32_t)fz_below(t, 1U << 14) << 8 | (uint32_t)fz_below(t, 256);
		break;
	}
	r.flags = fz_below(t, 8) ? fz_below(t, 4) : fz_u32(t);
	if (fz_one_in(t, 32))
		r.token = fz_u32(t);
	if (cd_ioctl(t, MRCT_KEYS_REG, &r))
		return;
	if (r.token && cd->ntokens < ARRAY_SIZE(cd->tokens))
		cd->tokens[cd->ntokens++] = r.token;
	else if (r.token)
		fz_sys(ioctl(cd->fd, MRCT_KEYS_RELEASE,
			     &(struct mrct_keys_hold){ .token = r.token }));
	o = (struct fz_obj){ .h = r.handle, .iova = r.iova, .len = r.length };
	if (!(r.flags & MRCT_KEYS_ASYNC)) {
		o.lkey = r.key;
		o.rkey = r.key;
	}
	cd_keep(t, &cd->keys, &o, MRCT_KEYS_DEREG);
}

static void cd_keys_wait(struct fz_thread *t)
{
	static const uint32_t ms[] = { 0, 1, 10, 100, MRCT_QP_WAIT_MS + 1, ~0U };
	struct mrct_keys_wait w = {};
	struct fz_obj *o;

	w.handle = tab_handle(t, &t->cd.keys, &o, 0);
	w.timeout_ms = fz_below(t, 8) ? ms[fz_below(t, 4)] : ms[fz_below(t, ARRAY_SIZE(ms))];
	if (cd_ioctl(t, MRCT_KEYS_WAIT, &w) || !o)
		return;
	if (w.err)
		tab_del(&t->cd.keys, o);
	else
		fz_rekey(t, o, w.key, w.key, o->iova, o->len);
}

/* A held request: its state, or let it go (any file may). */
static void cd_keys_hold(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_keys_hold h = {};
	unsigned int i = fz_below(t, cd->ntokens + 1);
	bool release = fz_one_in(t, 2);

	fz_what(t, release ? "release" : "state");
	h.token = i < cd->ntokens ? cd->tokens[i] : fz_u32(t);
	if (cd_ioctl(t, release ? MRCT_KEYS_RELEASE : MRCT_KEYS_HOLD_STATE, &h) ||
	    !release || i >= cd->ntokens)
		return;
	cd->tokens[i] = cd->tokens[--cd->ntokens];
}

static void cd_odp_advise(struct fz_thread *t)
{
	struct mrct_odp_advise a = {};
	struct fz_obj *o;

	a.handle = tab_handle(t, &t->cd.mrs, &o, 0);
	a.addr = fz_iova_in(t, o);
	a.length = fz_below(t, 4) ? cd_xfer_len(t, o) : fz_u32(t);
	a.advice = fz_below(t, 8) ? fz_below(t, 3) : fz_u32(t);
	a.flags = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
	a.pd = cd_pd(t);
	cd_ioctl(t, MRCT_ODP_ADVISE, &a);
}

/* An MR's ODP or dma-buf counters (both answers start with its handle). */
static void cd_mr_stats(struct fz_thread *t)
{
	union {
		struct mrct_odp_stats odp;
		struct mrct_dmabuf_stats dmabuf;
	} s = {};
	bool odp = fz_one_in(t, 2);
	struct fz_obj *o;

	fz_what(t, odp ? "odp" : "dmabuf");
	s.odp.handle = tab_handle(t, &t->cd.mrs, &o, 0);
	cd_ioctl(t, odp ? MRCT_ODP_STATS : MRCT_DMABUF_STATS, &s);
}

static void cd_dmabuf_create(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	struct mrct_dmabuf_create c = {};

	switch (fz_below(t, 8)) {
	case 0:
		c.size = fz_u64(t);
		break;
	case 1:
		c.size = MRCT_DMABUF_MAX_SIZE + FZ_PAGE;
		break;
	default:
		c.size = (1 + fz_below(t, 32)) * FZ_PAGE;
		break;
	}
	c.flags = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
	if (cd_ioctl(t, MRCT_DMABUF_CREATE, &c))
		return;
	if (cd->ndmabufs < ARRAY_SIZE(cd->dmabufs))
		cd->dmabufs[cd->ndmabufs++] = c.fd;
	else
		close(c.fd);
}

/* A dma-buf descriptor: one of ours, a closed one, another file, a wild one. */
static int cd_dmabuf_fd(struct fz_thread *t, unsigned int *i)
{
	struct fz_cd *cd = &t->cd;

	*i = fz_below(t, cd->ndmabufs + 2);
	if (*i < cd->ndmabufs)
		return cd->dmabufs[*i];
	switch (fz_below(t, 4)) {
	case 0:
		return -1;
	case 1:
		return cd->fd;
	case 2:
		return t->uv.fd;
	default:
		return fz_u32(t);
	}
}

/* The module's buffers: CPU copies, a move, what importers did, a close. */
static void cd_dmabuf_op(struct fz_thread *t)
{
	struct fz_cd *cd = &t->cd;
	unsigned int i;
	int fd = cd_dmabuf_fd(t, &i);

	switch (fz_below(t, 5)) {
	case 0:
	case 1: {
		struct mrct_dmabuf_rw rw = {};

		fz_what(t, "rw");
		rw.fd = fd;
		rw.offset = fz_below(t, 4) ? fz_below(t, 32 * FZ_PAGE) : fz_u64(t);
		rw.length = fz_below(t, 4) ? 1 + fz_below(t, 8 * FZ_PAGE) : fz_u64(t);
		rw.ptr = fz_ubuf(t, rw.length);
		rw.flags = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
		cd_ioctl(t, MRCT_DMABUF_RW, &rw);
		break;
	}
	case 2: {
		struct mrct_dmabuf_fd m = { .fd = fd };

		fz_what(t, "move");
		cd_ioctl(t, MRCT_DMABUF_MOVE, &m);
		break;
	}
	case 3: {
		struct mrct_dmabuf_info in = { .fd = fd };

		fz_what(t, "info");
		cd_ioctl(t, MRCT_DMABUF_INFO, &in);
		break;
	}
	default:
		/* An MR holds its buffer: the file may go before the MR. */
		fz_what(t, "close");
		if (i >= cd->ndmabufs)
			return;
		close(fd);
		cd->dmabufs[i] = cd->dmabufs[--cd->ndmabufs];
		break;
	}
}

static void cd_reg_dmabuf(struct fz_thread *t)
{
	struct mrct_reg_dmabuf r = {};
	unsigned int i;

	r.fd = cd_dmabuf_fd(t, &i);
	r.offset = fz_below(t, 4) ? fz_below(t, 8) * FZ_PAGE : fz_u64(t);
	r.length = fz_below(t, 4) ? (1 + fz_below(t, 8)) * FZ_PAGE : fz_len(t, 32 * FZ_PAGE);
	r.iova = fz_below(t, 2) ? fz_rand(t) & 0xfffffffff000ULL : fz_u64(t);
	r.access = fz_access(t);
	r.pd = cd_pd(t);
	if (!cd_ioctl(t, MRCT_REG_DMABUF, &r))
		cd_keep_mr(t, r.handle, &r.info, r.pd, r.iova, r.length);
}

/* MRCT_STAMP_WRITES: WRITEs in flight while the module changes an MR. */
static void cd_stamp(struct fz_thread *t)
{
	static const uint32_t slots[] = { 8, 64, 512, 4096, 0, 7, 4104 };
	struct mrct_stamp_writes s = {};
	struct fz_obj *mr, *pair, *src = tab_pick(t, &t->cd.mrs);

	cd_pair(t, &s.pair, &s.qp, &pair);
	s.mr = tab_handle(t, &t->cd.mrs, &mr, t->cd.canary_h);
	s.src_lkey = src && fz_below(t, 4) ? src->lkey : fz_key(t);
	s.src_iova = fz_iova_in(t, src);
	/*
	 * M moves between two buffers of that length: where it is (its iova,
	 * when that is its address), and the start of a pool region. M may be
	 * an ODP MR, which must not reach past a region.
	 */
	s.iova = mr ? mr->iova : fz_u64(t);
	s.length = fz_min(mr ? mr->len : fz_u64(t), FZ_POOL_LEN);
	s.addr[0] = mr ? mr->iova : fz_u64(t);
	s.addr[1] = (uintptr_t)t->reg[FZ_R_POOL + fz_below(t, FZ_POOLS)].p;
	if (fz_one_in(t, 2)) {
		s.addr[1] = s.addr[0];
		s.addr[0] = (uintptr_t)t->reg[FZ_R_POOL + fz_below(t, FZ_POOLS)].p;
	}
	s.slot_size = slots[fz_below(t, ARRAY_SIZE(slots))];
	s.first = fz_below(t, 4) ? 0 : fz_u32(t);
	s.count = fz_below(t, 8) ? 1 + fz_below(t, 32) :
		  fz_one_in(t, 2) ? 0 : MRCT_STAMP_MAX_WRITES + 1;
	s.depth = fz_count(t, MRCT_QP_DEPTH);
	s.clean = fz_below(t, 8) ? 1 + fz_below(t, 4) : 0;
	s.flags = fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t);
	s.gen = fz_below(t, 4) ? 0 : fz_u32(t);
	s.recs = fz_ubuf(t, (uint64_t)fz_min(s.count, 64) * sizeof(struct mrct_stamp_rec));
	if (!cd_ioctl(t, MRCT_STAMP_WRITES, &s) && mr && (s.flags & MRCT_STAMP_DEREG))
		tab_del(&t->cd.mrs, mr);
}

/* Numbers the module does not know, sizes it does not take, any bytes. */
static void cd_raw_ioctl(struct fz_thread *t)
{
	uint8_t *arg = t->reg[FZ_R_SCRATCH].p;
	unsigned long cmd;

	cmd = _IOC(fz_below(t, 4), fz_below(t, 8) ? MRCT_IOC_MAGIC : fz_below(t, 256),
		   fz_below(t, 256), fz_below(t, 4) ? fz_below(t, 1024) : fz_below(t, 1 << 14));
	fz_fill(t, arg, 1024);
	cd_ioctl(t, cmd, arg);
}

static const struct fz_op fz_cd_ops[] = {
	{ "reopen", cd_reopen, 1 },
	{ "set_device", cd_set_device, 1 },
	{ "reg", cd_reg, 10 },
	{ "xfer", cd_xfer, 8 },
	{ "rereg", cd_rereg, 4 },
	{ "free", cd_free, 8 },
	{ "counters", cd_counters, 1 },
	{ "qp_create", cd_qp_create, 2 },
	{ "qp_post", cd_qp_post, 6 },
	{ "qp_post_recv", cd_qp_post_recv, 3 },
	{ "qp_wait_recv", cd_qp_wait_recv, 1 },
	{ "bench", cd_bench, 1 },
	{ "frwr_alloc", cd_frwr_alloc, 2 },
	{ "frwr_reg", cd_frwr_reg, 3 },
	{ "frwr_inv", cd_frwr_inv, 2 },
	{ "frwr_xfer", cd_frwr_xfer, 2 },
	{ "frwr_cycle", cd_frwr_cycle, 1 },
	{ "fmr_pool_create", cd_fmr_pool_create, 1 },
	{ "fmr_map", cd_fmr_map, 2 },
	{ "fmr_misc", cd_fmr_misc, 2 },
	{ "mw_alloc", cd_mw_alloc, 2 },
	{ "mw_bind", cd_mw_bind, 3 },
	{ "mw_bind_wr", cd_mw_bind_wr, 2 },
	{ "ind_reg", cd_ind_reg, 2 },
	{ "gaps_alloc", cd_gaps_alloc, 1 },
	{ "gaps_reg", cd_gaps_reg, 2 },
	{ "gaps_buf", cd_gaps_buf, 1 },
	{ "cnt_alloc", cd_cnt_alloc, 1 },
	{ "cnt_bind", cd_cnt_bind, 2 },
	{ "cnt_read", cd_cnt_read, 1 },
	{ "keys_reg", cd_keys_reg, 2 },
	{ "keys_wait", cd_keys_wait, 1 },
	{ "keys_hold", cd_keys_hold, 1 },
	{ "odp_advise", cd_odp_advise, 2 },
	{ "mr_stats", cd_mr_stats, 2 },
	{ "dmabuf_create", cd_dmabuf_create, 1 },
	{ "dmabuf_op", cd_dmabuf_op, 2 },
	{ "reg_dmabuf", cd_reg_dmabuf, 2 },
	{ "stamp", cd_stamp, 1 },
	{ "raw_ioctl", cd_raw_ioctl, 1 },
};

/* --- uverbs: commands, methods, rings -------------------------------- */

#define FZ_ATTRS	12

/*
 * A write() command on the context: the header, @in (@in_len bytes, its
 * first u64 the response's address when @resp_len is not 0), then the
 * driver's part of udata. Now and then (1 in 16) udata is misshapen:
 * driver input rxe's ABI does not have (zeros or garbage), a response
 * shorter than the verb's, longer, or at an address that faults (the
 * longer and faulting ones land in scratch, or nowhere). 0 or -errno,
 * counted; a misshapen call that succeeded answers -EBADMSG, its
 * response not being where the caller looks.
 */
static int uv_cmd(struct fz_thread *t, uint32_t cmd, void *in, size_t in_len,
		  void *resp, size_t resp_len)
{
	alignas(8) uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	const struct fz_region *s = &t->reg[FZ_R_SCRATCH];
	size_t extra = 0, out = resp_len;
	uint64_t where = (uintptr_t)resp;
	bool bad = !t->exact && fz_one_in(t, 16);
	int ret;

	if (in_len + sizeof(*h) + 64 > sizeof(buf))
		return -E2BIG;
	memcpy(buf + sizeof(*h), in, in_len);
	if (bad) {
		switch (fz_below(t, 5)) {
		case 0:
			extra = 8;
			memset(buf + sizeof(*h) + in_len, 0, extra);
			break;
		case 1:
			extra = 8 * (1 + fz_below(t, 8));
			fz_fill(t, buf + sizeof(*h) + in_len, extra);
			break;
		case 2:
			out = resp_len >= 4 ? resp_len - 4 * (1 + fz_below(t, resp_len / 4)) : 0;
			break;
		case 3:
			out = resp_len + 8 * (1 + fz_below(t, 64));
			where = (uintptr_t)s->p;
			break;
		default:
			where = (uintptr_t)fz_bad_arg(t, resp_len);
			break;
		}
	}
	if (resp_len)
		memcpy(buf + sizeof(*h), &where, sizeof(where));
	h->command = cmd;
	h->in_words = (sizeof(*h) + in_len + extra) / 4;
	h->out_words = out / 4;
	ret = fz_sys(write(t->uv.fd, buf, sizeof(*h) + in_len + extra));
	return bad && !ret ? -EBADMSG : ret;
}

/* An attribute of a method call: as struct ib_uverbs_attr takes it. */
struct fz_attr {
	uint16_t id;
	uint16_t len;
	uint64_t data;
};

/*
 * A method call: RDMA_VERBS_IOCTL with @n attributes, each flagged
 * mandatory. Now and then (1 in 16) it is misshapen: an attribute
 * dropped, doubled, of another length (an output then points into
 * scratch, as a longer one is zeroed to its end), with unknown flags, of
 * an unknown id, with its reserved bits set, or another driver id. The
 * handles of new objects come back in @a's data. 0 or -errno, counted; a
 * misshapen call that succeeded answers -EBADMSG.
 */
static int uv_method(struct fz_thread *t, uint16_t obj, uint16_t method,
		     struct fz_attr *a, unsigned int n)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[FZ_ATTRS + 1];
	} c = {};
	bool bad = !t->exact && n && fz_one_in(t, 16);
	unsigned int i, k;
	int ret;

	c.hdr.object_id = obj;
	c.hdr.method_id = method;
	c.hdr.driver_id = RDMA_DRIVER_RXE;
	for (i = 0; i < n && i < FZ_ATTRS; i++)
		c.attrs[i] = (struct ib_uverbs_attr){
			.attr_id = a[i].id,
			.len = a[i].len,
			.flags = UVERBS_ATTR_F_MANDATORY,
			.data = a[i].data,
		};
	c.hdr.num_attrs = i;
	if (bad) {
		k = fz_below(t, c.hdr.num_attrs);
		switch (fz_below(t, 7)) {
		case 0:
			c.attrs[k] = c.attrs[--c.hdr.num_attrs];
			break;
		case 1:
			c.attrs[c.hdr.num_attrs++] = c.attrs[k];
			break;
		case 2:
			c.attrs[k].len = fz_u32(t);
			c.attrs[k].data = (uintptr_t)t->reg[FZ_R_SCRATCH].p;
			break;
		case 3:
			c.attrs[k].flags |= 1U << fz_below(t, 16);
			break;
		case 4:
			c.attrs[k].attr_id = fz_u32(t);
			break;
		case 5:
			c.attrs[k].attr_data.reserved = fz_u32(t) | 1;
			break;
		default:
			c.hdr.driver_id = fz_below(t, 32);
			break;
		}
	}
	c.hdr.length = sizeof(c.hdr) + c.hdr.num_attrs * sizeof(c.attrs[0]);
	ret = fz_sys(ioctl(t->uv.fd, RDMA_VERBS_IOCTL, &c.hdr));
	if (bad)
		return ret ? ret : -EBADMSG;
	for (i = 0; i < n && i < FZ_ATTRS; i++)
		a[i].data = c.attrs[i].data;
	return ret;
}

/*
 * Map a ring the kernel described: 0 (nothing to map when @mi's size is
 * 0), -errno, or -EPROTO for a geometry that does not fit the mapping.
 * The geometry is read once, here: garbage written into the header later
 * never changes our copy.
 */
static int fz_ring_map(struct fz_thread *t, struct fz_uring *q,
		       const struct mminfo *mi)
{
	struct rxe_queue_buf *b;

	memset(q, 0, sizeof(*q));
	if (!mi->size)
		return 0;
	b = fz_mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, t->uv.fd,
		    mi->offset);
	if (b == MAP_FAILED)
		return fz_sys(-1);
	q->mask = b->index_mask;
	q->log2 = b->log2_elem_size;
	if (q->log2 < 4 || q->log2 > 16 || (q->mask & (q->mask + 1)) ||
	    sizeof(*b) + (((size_t)q->mask + 1) << q->log2) > mi->size) {
		munmap(b, mi->size);
		return -EPROTO;
	}
	q->buf = b;
	q->size = mi->size;
	return 0;
}

static void fz_ring_unmap(struct fz_uring *q)
{
	if (q->buf)
		munmap(q->buf, q->size);
	memset(q, 0, sizeof(*q));
}

static void *fz_ring_elem(const struct fz_uring *q, uint32_t idx)
{
	return q->buf->data + ((size_t)(idx & q->mask) << q->log2);
}

static void fz_ring_publish(struct fz_uring *q, uint32_t idx)
{
	q->idx = idx & q->mask;
	__atomic_store_n(&q->buf->producer_index, idx, __ATOMIC_RELEASE);
}

/* A PD handle: a live one, the libibverbs PD's, the canary's, or not. */
static uint32_t uv_pd(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	struct fz_obj *o;

	switch (fz_below(t, 8)) {
	case 0:
		return uv->lpd ? uv->lpd->handle : 0;
	case 1:
		return uv->canary_pd;
	default:
		return tab_handle(t, &uv->pds, &o, 0);
	}
}

/* A live CQ's index, or -1. */
static int uv_cq_pick(struct fz_thread *t)
{
	int i = fz_below(t, FZ_UCQS);

	return t->uv.cqs[i].live ? i : -1;
}

static uint32_t uv_cq_handle(struct fz_thread *t, int i)
{
	return i >= 0 ? t->uv.cqs[i].h : fz_one_in(t, 2) ? 0 : fz_u32(t);
}

/* A live QP's index, or -1. */
static int uv_qp_pick(struct fz_thread *t)
{
	int i = fz_below(t, FZ_UQPS);

	return t->uv.qps[i].live ? i : -1;
}

static int uv_destroy(struct fz_thread *t, uint32_t cmd, uint32_t h)
{
	struct {
		uint64_t response;
		uint32_t handle;
		uint32_t reserved;
	} c = { .handle = h };
	uint64_t resp[2];

	/* DESTROY_CQ answers two words, DESTROY_QP and _SRQ one. */
	return uv_cmd(t, cmd, &c, sizeof(c), resp,
		      cmd == IB_USER_VERBS_CMD_DESTROY_CQ ? 8 : 4);
}

/* Destroy CQ @i; its ring is unmapped before, or after. */
static void uv_cq_destroy(struct fz_thread *t, int i)
{
	struct fz_ucq *cq = &t->uv.cqs[i];
	bool before = fz_one_in(t, 2);
	int ret;

	if (before)
		fz_ring_unmap(&cq->r);
	ret = uv_destroy(t, IB_USER_VERBS_CMD_DESTROY_CQ, cq->h);
	if (ret == -EBUSY)	/* QPs still use it */
		return;
	fz_ring_unmap(&cq->r);
	cq->live = false;
}

static void uv_qp_destroy(struct fz_thread *t, int i)
{
	struct fz_uqp *qp = &t->uv.qps[i];
	unsigned int j;

	if (fz_one_in(t, 2)) {
		fz_ring_unmap(&qp->sq);
		fz_ring_unmap(&qp->rq);
	}
	uv_destroy(t, IB_USER_VERBS_CMD_DESTROY_QP, qp->h);
	fz_ring_unmap(&qp->sq);
	fz_ring_unmap(&qp->rq);
	qp->live = false;
	for (j = 0; j < FZ_UQPS; j++)
		if (t->uv.qps[j].peer == i)
			t->uv.qps[j].peer = -1;
}

/* A CQ of @cqe entries with its ring mapped, in slot @i: 0 or -errno. */
static int uv_cq_create(struct fz_thread *t, int i, uint32_t cqe)
{
	struct fz_ucq *cq = &t->uv.cqs[i];
	struct ib_uverbs_create_cq c = { .cqe = cqe, .comp_channel = -1 };
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct rxe_create_cq_resp drv;
	} r = {};
	int ret;

	if (fz_one_in(t, 8)) {
		c.comp_vector = fz_u32(t);
		c.comp_channel = fz_one_in(t, 2) ? fz_u32(t) : t->uv.fd;
	}
	c.user_handle = fz_rand(t);
	ret = uv_cmd(t, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), &r, sizeof(r));
	if (ret)
		return ret;
	cq->h = r.core.cq_handle;
	cq->live = true;
	/* Now and then its ring stays unmapped: the kernel fills it anyway. */
	if (!fz_one_in(t, 8) && !fz_ring_map(t, &cq->r, &r.drv.mi))
		cq->r.idx = cq->r.buf->consumer_index & cq->r.mask;
	return 0;
}

/*
 * A QP in slot @i (its old one destroyed) from @c, rings mapped: 0 or
 * -errno. The SQ's elements say how many SGEs a WQE holds.
 */
static int uv_qp_create(struct fz_thread *t, int i, struct ib_uverbs_create_qp *c,
			int cq)
{
	struct fz_uqp *qp = &t->uv.qps[i];
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct rxe_create_qp_resp drv;
	} r = {};
	int ret;

	if (qp->live)
		uv_qp_destroy(t, i);
	ret = uv_cmd(t, IB_USER_VERBS_CMD_CREATE_QP, c, sizeof(*c), &r, sizeof(r));
	if (ret)
		return ret;
	*qp = (struct fz_uqp){
		.live = true, .h = r.core.qp_handle, .qpn = r.core.qpn,
		.pd = c->pd_handle, .cq = cq, .peer = -1,
	};
	if (fz_one_in(t, 16))
		return 0;
	if (!fz_ring_map(t, &qp->sq, &r.drv.sq_mi))
		fz_ring_map(t, &qp->rq, &r.drv.rq_mi);
	return 0;
}

/* An RC QP's creation command: small queues, on PD @pd and CQ @cq. */
static void uv_qp_cmd(struct ib_uverbs_create_qp *c, uint32_t pd, uint32_t cq)
{
	*c = (struct ib_uverbs_create_qp){
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4,
		.max_recv_sge = 4, .max_inline_data = 64, .qp_type = IBV_QPT_RC,
	};
}

/*
 * Move QP @h to @state as a connection to @dest_qpn on our own GID needs.
 * Every attribute of the connection is filled in whatever the state (the
 * kernel reads those of the mask only); few retries and no RNR retry, so
 * that a request the peer drops or has no receive for errs out within a
 * second instead of hanging.
 */
static int uv_modify(struct fz_thread *t, uint32_t h, int state, uint32_t dest_qpn)
{
	static const uint32_t masks[] = {
		[IBV_QPS_RESET] = IBV_QP_STATE,
		[IBV_QPS_INIT] = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS,
		[IBV_QPS_RTR] = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
		[IBV_QPS_RTS] = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				IBV_QP_MAX_QP_RD_ATOMIC,
	};
	struct ib_uverbs_modify_qp c = {
		.qp_handle = h, .qp_state = state, .port_num = FZ_PORT,
		.qp_access_flags = 0xf, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1, .timeout = 12, .retry_cnt = 1,
		.max_rd_atomic = 1,
		.dest = {
			.sgid_index = t->uv.gid_index, .hop_limit = 64,
			.is_global = 1, .port_num = FZ_PORT,
		},
	};

	memcpy(c.dest.dgid, t->uv.gid.raw, 16);
	c.attr_mask = (unsigned int)state < ARRAY_SIZE(masks) ? masks[state] :
		      IBV_QP_STATE;
	return uv_cmd(t, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), NULL, 0);
}

/* RESET, INIT, RTR towards @dest_qpn, RTS: 0 or the first -errno. */
static int uv_connect(struct fz_thread *t, uint32_t h, uint32_t dest_qpn)
{
	bool exact = t->exact;
	int ret;

	t->exact = true;
	ret = uv_modify(t, h, IBV_QPS_RESET, 0);
	if (!ret)
		ret = uv_modify(t, h, IBV_QPS_INIT, 0);
	if (!ret)
		ret = uv_modify(t, h, IBV_QPS_RTR, dest_qpn);
	if (!ret)
		ret = uv_modify(t, h, IBV_QPS_RTS, 0);
	t->exact = exact;
	return ret;
}

/* After a reset, our ring indices follow the kernel's again. */
static void uv_qp_resync(struct fz_uqp *qp)
{
	struct fz_uring *q[] = { &qp->sq, &qp->rq };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(q); i++) {
		if (!q[i]->buf)
			continue;
		q[i]->idx = __atomic_load_n(&q[i]->buf->consumer_index,
					    __ATOMIC_ACQUIRE) & q[i]->mask;
		fz_ring_publish(q[i], q[i]->idx);
	}
}

/* The doorbell as librxe rings it: POST_SEND of no WR. */
static int uv_doorbell(struct fz_thread *t, uint32_t h)
{
	struct ib_uverbs_post_send c = {
		.qp_handle = h,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};
	struct ib_uverbs_post_send_resp r;

	return uv_cmd(t, IB_USER_VERBS_CMD_POST_SEND, &c, sizeof(c), &r, sizeof(r));
}

/* --- family b: uverbs ------------------------------------------------ */

/* Keep @o in @tab; when the table is full, free it with @free_cmd. */
static void uv_keep(struct fz_thread *t, struct fz_tab *tab,
		    const struct fz_obj *o, uint32_t free_cmd)
{
	uint32_t h = o->h;

	if (o->lkey)
		fz_key_add(t, o->lkey);
	if (o->rkey && o->rkey != o->lkey)
		fz_key_add(t, o->rkey);
	if (!tab_add(tab, o))
		uv_cmd(t, free_cmd, &h, sizeof(h), NULL, 0);
}

static void uv_alloc_pd(struct fz_thread *t)
{
	struct ib_uverbs_alloc_pd c = {};
	struct ib_uverbs_alloc_pd_resp r = {};
	struct fz_obj o = {};

	if (uv_cmd(t, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), &r, sizeof(r)))
		return;
	o.h = r.pd_handle;
	uv_keep(t, &t->uv.pds, &o, IB_USER_VERBS_CMD_DEALLOC_PD);
}

/* REG_MR of @addr, @len as @iova; the MR kept. */
static void uv_reg(struct fz_thread *t, uint64_t addr, uint64_t len,
		   uint64_t iova, uint32_t access)
{
	struct ib_uverbs_reg_mr c = {
		.start = addr, .length = len, .hca_va = iova,
		.pd_handle = uv_pd(t), .access_flags = access,
	};
	struct ib_uverbs_reg_mr_resp r = {};
	struct fz_obj o;

	if (uv_cmd(t, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), &r, sizeof(r)))
		return;
	o = (struct fz_obj){
		.h = r.mr_handle, .lkey = r.lkey, .rkey = r.rkey,
		.aux = c.pd_handle, .iova = iova, .len = len,
	};
	uv_keep(t, &t->uv.mrs, &o, IB_USER_VERBS_CMD_DEREG_MR);
}

static void uv_reg_mr(struct fz_thread *t)
{
	uint32_t access;
	__u64 addr, len;

	if (fz_one_in(t, 32)) {
		fz_what(t, "implicit ODP");
		uv_reg(t, 0, ~0ULL, 0, IBV_ACCESS_ON_DEMAND | (fz_rand(t) & 0xf));
		return;
	}
	access = fz_access(t);
	fz_range(t, access, &addr, &len);
	uv_reg(t, addr, len, fz_below(t, 3) ? addr : fz_u64(t), access);
}

static void uv_rereg_mr(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	struct ib_uverbs_rereg_mr c = {};
	struct ib_uverbs_rereg_mr_resp r = {};
	struct fz_obj *o;
	__u64 addr, len;

	c.mr_handle = tab_handle(t, &uv->mrs, &o, uv->canary_h);
	c.flags = fz_below(t, 8) ? 1 + fz_below(t, 7) : fz_u32(t);
	/* The MR may be an ODP one: its new range is bounded as if it were. */
	fz_range(t, IBV_ACCESS_ON_DEMAND, &addr, &len);
	c.start = addr;
	c.length = len;
	c.hca_va = fz_below(t, 3) ? addr : fz_u64(t);
	c.pd_handle = uv_pd(t);
	c.access_flags = fz_access(t);
	if (uv_cmd(t, IB_USER_VERBS_CMD_REREG_MR, &c, sizeof(c), &r, sizeof(r)) || !o)
		return;
	o->lkey = r.lkey;
	o->rkey = r.rkey;
	fz_key_add(t, r.lkey);
	if (c.flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		o->iova = c.hca_va;
		o->len = c.length;
	}
	if (c.flags & IBV_REREG_MR_CHANGE_PD)
		o->aux = c.pd_handle;
}

static void uv_alloc_mw(struct fz_thread *t)
{
	struct ib_uverbs_alloc_mw c = {};
	struct ib_uverbs_alloc_mw_resp r = {};
	struct fz_obj o = {};

	c.pd_handle = uv_pd(t);
	c.mw_type = fz_below(t, 8) ? 1 + fz_below(t, 2) : fz_u32(t) & 0xff;
	if (fz_one_in(t, 32))
		c.reserved[fz_below(t, 3)] = 1;
	if (uv_cmd(t, IB_USER_VERBS_CMD_ALLOC_MW, &c, sizeof(c), &r, sizeof(r)))
		return;
	o = (struct fz_obj){ .h = r.mw_handle, .rkey = r.rkey, .aux = c.mw_type };
	uv_keep(t, &t->uv.mws, &o, IB_USER_VERBS_CMD_DEALLOC_MW);
}

/* The commands that free an object by its handle alone (and its table). */
static const struct fz_free uv_frees[] = {
	{ "dealloc_pd", IB_USER_VERBS_CMD_DEALLOC_PD, offsetof(struct fz_uv, pds) },
	{ "dereg_mr", IB_USER_VERBS_CMD_DEREG_MR, offsetof(struct fz_uv, mrs) },
	{ "dealloc_mw", IB_USER_VERBS_CMD_DEALLOC_MW, offsetof(struct fz_uv, mws) },
	{ "destroy_ah", IB_USER_VERBS_CMD_DESTROY_AH, offsetof(struct fz_uv, ahs) },
};

static void uv_free(struct fz_thread *t)
{
	const struct fz_free *f;
	struct fz_tab *tab;
	struct fz_obj *o;
	uint32_t h;

	f = fz_free_pick(t, uv_frees, ARRAY_SIZE(uv_frees), &t->uv, t->uv.canary_h,
			 &tab, &o, &h);
	if (!uv_cmd(t, f->cmd, &h, sizeof(h), NULL, 0) && o)
		tab_del(tab, o);
}

/* A queue's depth: small mostly, else an edge. */
static uint32_t uv_depth(struct fz_thread *t)
{
	return fz_below(t, 4) ? 1 + fz_below(t, 128) : fz_u32(t);
}

static void uv_create_cq(struct fz_thread *t)
{
	int i = fz_below(t, FZ_UCQS);

	if (t->uv.cqs[i].live)
		uv_cq_destroy(t, i);
	if (!t->uv.cqs[i].live)
		uv_cq_create(t, i, uv_depth(t));
}

static void uv_resize_cq(struct fz_thread *t)
{
	int i = uv_cq_pick(t);
	struct ib_uverbs_resize_cq c = {};
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct rxe_resize_cq_resp drv;
	} r = {};
	struct fz_uring q;

	c.cq_handle = uv_cq_handle(t, i);
	c.cqe = uv_depth(t);
	if (uv_cmd(t, IB_USER_VERBS_CMD_RESIZE_CQ, &c, sizeof(c), &r, sizeof(r)) ||
	    i < 0)
		return;
	/* The new ring; the old mapping may stay a while, or go now. */
	if (fz_ring_map(t, &q, &r.drv.mi))
		return;
	fz_ring_unmap(&t->uv.cqs[i].r);
	t->uv.cqs[i].r = q;
	if (q.buf)
		q.idx = q.buf->consumer_index & q.mask;
}

static void uv_destroy_cq(struct fz_thread *t)
{
	int i = uv_cq_pick(t);

	if (i >= 0)
		uv_cq_destroy(t, i);
	else
		uv_destroy(t, IB_USER_VERBS_CMD_DESTROY_CQ, uv_cq_handle(t, -1));
}

static void uv_notify_cq(struct fz_thread *t)
{
	struct ib_uverbs_req_notify_cq c = {
		.cq_handle = uv_cq_handle(t, uv_cq_pick(t)),
		.solicited_only = fz_below(t, 4) ? fz_below(t, 2) : fz_u32(t),
	};

	uv_cmd(t, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &c, sizeof(c), NULL, 0);
}

/* A live SRQ's index, or -1. */
static int uv_srq_pick(struct fz_thread *t)
{
	int i = fz_below(t, FZ_USRQS);

	return t->uv.srqs[i].live ? i : -1;
}

static void uv_create_qp(struct fz_thread *t)
{
	static const uint32_t types[] = {
		IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET,
		IBV_QPT_XRC_SEND, IBV_QPT_DRIVER, 0, 99,
	};
	struct ib_uverbs_create_qp c;
	int cq = uv_cq_pick(t), srq = uv_srq_pick(t);

	uv_qp_cmd(&c, uv_pd(t), uv_cq_handle(t, cq));
	if (fz_one_in(t, 4))
		c.recv_cq_handle = uv_cq_handle(t, uv_cq_pick(t));
	c.qp_type = fz_below(t, 2) ? IBV_QPT_RC : types[fz_below(t, ARRAY_SIZE(types))];
	if (fz_one_in(t, 2)) {
		c.max_send_wr = uv_depth(t);
		c.max_recv_wr = uv_depth(t);
		c.max_send_sge = fz_count(t, 8);
		c.max_recv_sge = fz_count(t, 8);
		c.max_inline_data = fz_below(t, 2) ? fz_below(t, 512) : fz_u32(t);
	}
	if (fz_one_in(t, 4)) {
		c.is_srq = 1;
		c.srq_handle = srq >= 0 ? t->uv.srqs[srq].h : fz_u32(t);
	}
	c.sq_sig_all = fz_below(t, 4) ? 0 : fz_u32(t) & 0xff;
	c.user_handle = fz_rand(t);
	uv_qp_create(t, fz_below(t, FZ_UQPS), &c, cq);
}

/* Any attribute mask and values: edges, garbage, our GID or not. */
static void uv_modify_qp_wild(struct fz_thread *t, struct ib_uverbs_modify_qp *c)
{
	uint8_t *b = (uint8_t *)c;
	size_t i;

	/* Every byte after the handle and the mask, from the exec's draws. */
	for (i = offsetof(struct ib_uverbs_modify_qp, qkey); i < sizeof(*c); i++)
		b[i] = fz_below(t, 4) ? 0 : fz_rand(t);
	c->attr_mask = fz_below(t, 2) ? fz_rand(t) & 0x1fffff : fz_u32(t);
	c->qp_state = fz_below(t, 8);
	c->cur_qp_state = fz_below(t, 8);
	c->port_num = fz_below(t, 4) ? FZ_PORT : fz_rand(t);
	c->path_mtu = fz_below(t, 8);
	if (fz_below(t, 2)) {
		memcpy(c->dest.dgid, t->uv.gid.raw, 16);
		c->dest.sgid_index = fz_below(t, 4) ? t->uv.gid_index : fz_rand(t);
		c->dest.is_global = 1;
		c->dest.port_num = FZ_PORT;
	} else {
		fz_fill(t, &c->dest, sizeof(c->dest));
	}
	c->dest_qp_num = fz_u32(t);
}

static void uv_modify_qp(struct fz_thread *t)
{
	int i = uv_qp_pick(t);
	struct ib_uverbs_modify_qp c = {};
	struct fz_uqp *qp = i >= 0 ? &t->uv.qps[i] : NULL;

	if (qp && fz_below(t, 3)) {
		fz_what(t, "state");
		if (fz_one_in(t, 2)) {
			uv_modify(t, qp->h, fz_below(t, 8),
				  qp->peer >= 0 ? t->uv.qps[qp->peer].qpn : qp->qpn);
			return;
		}
		if (!uv_connect(t, qp->h, qp->peer >= 0 ? t->uv.qps[qp->peer].qpn :
				fz_below(t, 2) ? qp->qpn : fz_u32(t) & 0xffffff))
			uv_qp_resync(qp);
		return;
	}
	fz_what(t, "wild");
	uv_modify_qp_wild(t, &c);
	c.qp_handle = qp ? qp->h : fz_u32(t);
	uv_cmd(t, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), NULL, 0);
}

static void uv_query_qp(struct fz_thread *t)
{
	int i = uv_qp_pick(t);
	struct ib_uverbs_query_qp c = {
		.qp_handle = i >= 0 ? t->uv.qps[i].h : fz_u32(t),
		.attr_mask = fz_u32(t),
	};
	struct ib_uverbs_query_qp_resp r;

	uv_cmd(t, IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c), &r, sizeof(r));
}

static void uv_destroy_qp(struct fz_thread *t)
{
	int i = uv_qp_pick(t);

	if (i >= 0)
		uv_qp_destroy(t, i);
	else
		uv_destroy(t, IB_USER_VERBS_CMD_DESTROY_QP, fz_u32(t));
}

static void uv_srq(struct fz_thread *t)
{
	int i = fz_below(t, FZ_USRQS);
	struct fz_usrq *srq = &t->uv.srqs[i];

	switch (fz_below(t, 4)) {
	case 0: {
		struct ib_uverbs_create_srq c = {
			.pd_handle = uv_pd(t), .max_wr = uv_depth(t),
			.max_sge = fz_count(t, 8), .srq_limit = fz_u32(t) & 0xff,
		};
		struct {
			struct ib_uverbs_create_srq_resp core;
			struct rxe_create_srq_resp drv;
		} r = {};

		fz_what(t, "create");
		if (srq->live)
			return;
		if (uv_cmd(t, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c), &r, sizeof(r)))
			return;
		srq->live = true;
		srq->h = r.core.srq_handle;
		if (!fz_ring_map(t, &srq->r, &r.drv.mi))
			srq->r.idx = srq->r.buf->producer_index & srq->r.mask;
		break;
	}
	case 1: {
		struct {
			struct ib_uverbs_modify_srq core;
			struct rxe_modify_srq_cmd drv;
		} c = {};

		fz_what(t, "modify");
		c.core.srq_handle = srq->live ? srq->h : fz_u32(t);
		c.core.attr_mask = fz_below(t, 4) ? fz_below(t, 4) : fz_u32(t);
		c.core.max_wr = uv_depth(t);
		c.core.srq_limit = fz_u32(t);
		/* Where a resized ring's mminfo would go: scratch, or bad. */
		c.drv.mmap_info_addr = fz_ubuf(t, sizeof(struct mminfo));
		uv_cmd(t, IB_USER_VERBS_CMD_MODIFY_SRQ, &c,
		       fz_below(t, 2) ? sizeof(c) : sizeof(c.core), NULL, 0);
		break;
	}
	case 2: {
		struct ib_uverbs_query_srq c = { .srq_handle = srq->live ? srq->h : fz_u32(t) };
		struct ib_uverbs_query_srq_resp r;

		fz_what(t, "query");
		uv_cmd(t, IB_USER_VERBS_CMD_QUERY_SRQ, &c, sizeof(c), &r, sizeof(r));
		break;
	}
	default:
		fz_what(t, "destroy");
		if (!srq->live) {
			uv_destroy(t, IB_USER_VERBS_CMD_DESTROY_SRQ, fz_u32(t));
			return;
		}
		if (uv_destroy(t, IB_USER_VERBS_CMD_DESTROY_SRQ, srq->h) == -EBUSY)
			return;
		fz_ring_unmap(&srq->r);
		srq->live = false;
		break;
	}
}

static void uv_create_ah(struct fz_thread *t)
{
	struct ib_uverbs_create_ah c = {};
	struct {
		struct ib_uverbs_create_ah_resp core;
		struct rxe_create_ah_resp drv;
	} r = {};
	struct fz_obj o = {};

	c.pd_handle = uv_pd(t);
	c.user_handle = fz_rand(t);
	if (fz_below(t, 2)) {
		memcpy(c.attr.grh.dgid, t->uv.gid.raw, 16);
		c.attr.grh.sgid_index = t->uv.gid_index;
		c.attr.grh.hop_limit = 64;
		c.attr.is_global = 1;
		c.attr.port_num = FZ_PORT;
	} else {
		fz_fill(t, &c.attr, sizeof(c.attr));
	}
	if (fz_one_in(t, 8))
		c.attr.port_num = fz_rand(t);
	if (uv_cmd(t, IB_USER_VERBS_CMD_CREATE_AH, &c, sizeof(c), &r, sizeof(r)))
		return;
	o.h = r.core.ah_handle;
	uv_keep(t, &t->uv.ahs, &o, IB_USER_VERBS_CMD_DESTROY_AH);
}

/* QUERY_DEVICE, QUERY_PORT of any port number. */
static void uv_query(struct fz_thread *t)
{
	if (fz_one_in(t, 2)) {
		struct ib_uverbs_query_device c = {};
		struct ib_uverbs_query_device_resp r;

		fz_what(t, "device");
		uv_cmd(t, IB_USER_VERBS_CMD_QUERY_DEVICE, &c, sizeof(c), &r, sizeof(r));
	} else {
		struct ib_uverbs_query_port c = {
			.port_num = fz_below(t, 2) ? FZ_PORT : fz_rand(t),
		};
		struct ib_uverbs_query_port_resp r;

		fz_what(t, "port");
		uv_cmd(t, IB_USER_VERBS_CMD_QUERY_PORT, &c, sizeof(c), &r, sizeof(r));
	}
}

/* ADVISE_MR: prefetch (ODP) over SGEs of the thread's MRs, or anything. */
static void uv_advise(struct fz_thread *t, uint32_t pd, struct ib_uverbs_sge *sge,
		      unsigned int n)
{
	struct fz_attr a[] = {
		{ UVERBS_ATTR_ADVISE_MR_PD_HANDLE, 0, pd },
		{ UVERBS_ATTR_ADVISE_MR_ADVICE, fz_below(t, 2) ? 4 : 8,
		  fz_below(t, 8) ? fz_below(t, 3) : fz_u32(t) },
		{ UVERBS_ATTR_ADVISE_MR_FLAGS, 4,
		  fz_below(t, 8) ? fz_below(t, 2) : fz_u32(t) },
		{ UVERBS_ATTR_ADVISE_MR_SGE_LIST, n * sizeof(*sge), (uintptr_t)sge },
	};

	uv_method(t, UVERBS_OBJECT_MR, UVERBS_METHOD_ADVISE_MR, a, ARRAY_SIZE(a));
}

static void uv_advise_mr(struct fz_thread *t)
{
	struct ib_uverbs_sge sge[8];
	struct fz_obj *mr = tab_pick(t, &t->uv.mrs);
	unsigned int i, n = fz_below(t, 8) ? 1 + fz_below(t, 4) : fz_below(t, 9);

	for (i = 0; i < n; i++) {
		struct fz_obj *o = fz_below(t, 4) ? mr : tab_pick(t, &t->uv.mrs);

		sge[i].addr = fz_iova_in(t, o);
		sge[i].length = cd_xfer_len(t, o);
		sge[i].lkey = o && fz_below(t, 4) ? o->lkey : fz_key(t);
	}
	uv_advise(t, mr && fz_below(t, 4) ? mr->aux : uv_pd(t), sge, n);
}

/* REG_DMABUF_MR over one of the chardev's buffers (or not a dma-buf). */
static void uv_reg_dmabuf_mr(struct fz_thread *t)
{
	uint32_t lkey = 0, rkey = 0;
	unsigned int i;
	struct fz_attr a[] = {
		{ UVERBS_ATTR_REG_DMABUF_MR_HANDLE, 0, 0 },
		{ UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, 0, uv_pd(t) },
		{ UVERBS_ATTR_REG_DMABUF_MR_OFFSET, 8,
		  fz_below(t, 4) ? fz_below(t, 8) * FZ_PAGE : fz_u64(t) },
		{ UVERBS_ATTR_REG_DMABUF_MR_LENGTH, 8,
		  fz_below(t, 4) ? (1 + fz_below(t, 8)) * FZ_PAGE : fz_u64(t) },
		{ UVERBS_ATTR_REG_DMABUF_MR_IOVA, 8, fz_u64(t) & ~0xfffULL },
		{ UVERBS_ATTR_REG_DMABUF_MR_FD, 4, (uint32_t)cd_dmabuf_fd(t, &i) },
		{ UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, 4, fz_access(t) },
		{ UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, 4, (uintptr_t)&lkey },
		{ UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, 4, (uintptr_t)&rkey },
	};
	struct fz_obj o;

	if (uv_method(t, UVERBS_OBJECT_MR, UVERBS_METHOD_REG_DMABUF_MR, a,
		      ARRAY_SIZE(a)))
		return;
	o = (struct fz_obj){
		.h = a[0].data, .lkey = lkey, .rkey = rkey, .aux = a[1].data,
		.iova = a[4].data, .len = a[3].data,
	};
	uv_keep(t, &t->uv.mrs, &o, IB_USER_VERBS_CMD_DEREG_MR);
}

/*
 * Any write() command number with any body: the response address (the
 * first u64 of most commands, and of the extended header) always points
 * into scratch or faults; CREATE_COMP_CHANNEL's new file is closed.
 */
static void uv_garbage_write(struct fz_thread *t)
{
	alignas(8) uint8_t buf[512];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	uint8_t *scratch = t->reg[FZ_R_SCRATCH].p;
	uint64_t resp = fz_below(t, 4) ? (uintptr_t)scratch : fz_bad_addr(t);
	size_t len = sizeof(*h) + 8 * fz_below(t, (sizeof(buf) - sizeof(*h)) / 8 + 1);
	bool ext = fz_one_in(t, 4);
	int ret;

	fz_fill(t, buf, sizeof(buf));
	h->command = fz_below(t, 64) | (ext ? IB_USER_VERBS_CMD_FLAG_EXTENDED : 0);
	h->in_words = fz_below(t, 4) ? len / 4 : fz_rand(t);
	h->out_words = fz_below(t, 64);
	if (ext) {
		struct ib_uverbs_ex_cmd_hdr *x = (void *)(h + 1);

		x->response = resp;
		if (len < sizeof(*h) + sizeof(*x))
			len = sizeof(*h) + sizeof(*x);
	} else {
		memcpy(h + 1, &resp, sizeof(resp));
	}
	if (h->command == IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL)
		memcpy(h + 1, &(uint64_t){ (uintptr_t)scratch }, 8);
	ret = fz_sys(write(t->uv.fd, buf, len));
	if (!ret && h->command == IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL)
		close(((struct ib_uverbs_create_comp_channel_resp *)scratch)->fd);
}

/*
 * RDMA_VERBS_IOCTL of any object, method and attributes. Every pointer an
 * attribute carries points into scratch, faults, or is a small inline
 * value below mmap_min_addr, so whatever the kernel takes for an output
 * lands in sacrificial memory.
 */
static void uv_garbage_ioctl(struct fz_thread *t)
{
	struct fz_attr a[FZ_ATTRS];
	unsigned int i, n = fz_below(t, FZ_ATTRS + 1);
	uint16_t obj, method;

	obj = fz_below(t, 32) | (fz_one_in(t, 4) ? 1U << UVERBS_ID_NS_SHIFT : 0);
	method = fz_below(t, 32) | (fz_one_in(t, 4) ? 1U << UVERBS_ID_NS_SHIFT : 0);
	for (i = 0; i < n; i++) {
		a[i].id = fz_below(t, 16) | (fz_one_in(t, 4) ? 1U << UVERBS_ID_NS_SHIFT : 0);
		a[i].len = fz_below(t, 4) ? fz_below(t, 65) : fz_rand(t);
		switch (fz_below(t, 4)) {
		case 0:
			a[i].data = fz_below(t, 0x1000);
			break;
		case 1:
			a[i].data = fz_bad_addr(t);
			break;
		default:
			a[i].data = fz_ubuf(t, a[i].len);
			break;
		}
	}
	fz_what(t, "");
	uv_method(t, obj, method, a, n);
}

/*
 * libibverbs' own path: MRs by ibv_reg_mr on its PD, a connected RC pair
 * of its QPs on its CQ, WRs by ibv_post_send (librxe writes them into
 * the ring), windows by ibv_bind_mw, completions by ibv_poll_cq. librxe
 * copies inline data with the CPU, so inline WRs gather from scratch
 * only; every other address is the kernel's to check.
 */
static void lib_reg(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	unsigned int i = fz_below(t, FZ_LMRS);
	uint32_t access;
	__u64 addr, len;

	if (uv->lmr[i]) {
		fz_what(t, "dereg");
		fz_sys(-ibv_dereg_mr(uv->lmr[i]));
		uv->lmr[i] = NULL;
		return;
	}
	access = fz_access(t);
	fz_range(t, access, &addr, &len);
	uv->lmr[i] = ibv_reg_mr(uv->lpd, (void *)(uintptr_t)addr, len, access);
	fz_sys(uv->lmr[i] ? 0 : -1);
	if (uv->lmr[i]) {
		fz_key_add(t, uv->lmr[i]->lkey);
		fz_key_add(t, uv->lmr[i]->rkey);
	}
}

static void lib_pair_destroy(struct fz_uv *uv)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (uv->lqp[i])
			ibv_destroy_qp(uv->lqp[i]);
		uv->lqp[i] = NULL;
	}
	if (uv->lcq)
		ibv_destroy_cq(uv->lcq);
	uv->lcq = NULL;
}

/*
 * A new pair: both QPs on the CQ, connected to each other (our own
 * connect, through the raw commands: librxe keeps no state of it).
 */
static void lib_pair(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 4,
			.max_recv_sge = 4, .max_inline_data = 64,
		},
	};
	unsigned int i;

	lib_pair_destroy(uv);
	pthread_rwlock_rdlock(&g.map_lock);
	uv->lcq = ibv_create_cq(uv->ctx, 256, NULL, NULL, 0);
	a.send_cq = uv->lcq;
	a.recv_cq = uv->lcq;
	for (i = 0; uv->lcq && i < 2; i++)
		uv->lqp[i] = ibv_create_qp(uv->lpd, &a);
	pthread_rwlock_unlock(&g.map_lock);
	if (fz_sys(uv->lcq && uv->lqp[0] && uv->lqp[1] ? 0 : -1)) {
		lib_pair_destroy(uv);
		return;
	}
	for (i = 0; i < 2; i++)
		uv_connect(t, uv->lqp[i]->handle, uv->lqp[!i]->qp_num);
}

/* A gather list of @n SGEs over our MRs, or scratch for inline data. */
static void lib_sges(struct fz_thread *t, struct ibv_sge *sge, unsigned int n,
		     bool inl)
{
	const struct fz_region *s = &t->reg[FZ_R_SCRATCH];
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct ibv_mr *mr = t->uv.lmr[fz_below(t, FZ_LMRS)];
		struct fz_obj o = {};

		if (mr)
			o = (struct fz_obj){ .iova = (uintptr_t)mr->addr, .len = mr->length };
		sge[i].length = cd_xfer_len(t, mr ? &o : NULL);
		sge[i].lkey = mr && fz_below(t, 4) ? mr->lkey : fz_key(t);
		sge[i].addr = fz_iova_in(t, mr ? &o : NULL);
		if (inl) {
			sge[i].length %= 64;
			sge[i].addr = (uintptr_t)s->p + fz_below(t, s->len - 64);
		}
	}
}

static void lib_post(struct fz_thread *t)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV,
	};
	struct fz_uv *uv = &t->uv;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_sge sge[4], rsge[4];
	unsigned int q = fz_below(t, 2);

	if (!uv->lqp[0]) {
		lib_pair(t);
		return;
	}
	/* A receive on the peer first, most of the time. */
	if (fz_below(t, 4)) {
		rwr.num_sge = fz_below(t, 3);
		lib_sges(t, rsge, rwr.num_sge, false);
		rwr.sg_list = rsge;
		fz_res(-ibv_post_recv(uv->lqp[!q], &rwr, &rbad));
	}
	wr.wr_id = fz_rand(t);
	wr.opcode = ops[fz_below(t, ARRAY_SIZE(ops))];
	wr.send_flags = IBV_SEND_SIGNALED | (fz_one_in(t, 4) ? IBV_SEND_FENCE : 0);
	if (fz_one_in(t, 4) && wr.opcode <= IBV_WR_SEND_WITH_IMM)
		wr.send_flags |= IBV_SEND_INLINE;
	wr.num_sge = fz_below(t, 8) ? fz_below(t, 3) : fz_below(t, 5);
	lib_sges(t, sge, wr.num_sge, wr.send_flags & IBV_SEND_INLINE);
	wr.sg_list = sge;
	wr.imm_data = fz_rand(t);
	switch (wr.opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr.wr.atomic.remote_addr = fz_iova_in(t, tab_pick(t, &uv->mrs)) & ~7ULL;
		wr.wr.atomic.rkey = fz_key(t);
		wr.wr.atomic.compare_add = fz_rand(t);
		wr.wr.atomic.swap = fz_rand(t);
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		wr.invalidate_rkey = fz_key(t);
		break;
	case IBV_WR_BIND_MW:
		if (!uv->lmw[1])
			return;
		wr.bind_mw.mw = uv->lmw[1];
		wr.bind_mw.rkey = ibv_inc_rkey(uv->lmw[1]->rkey);
		wr.bind_mw.bind_info.mr = uv->lmr[fz_below(t, FZ_LMRS)];
		if (!wr.bind_mw.bind_info.mr)
			return;
		wr.bind_mw.bind_info.addr = (uintptr_t)wr.bind_mw.bind_info.mr->addr +
					    fz_below(t, 64);
		wr.bind_mw.bind_info.length = fz_below(t, 2 * FZ_PAGE);
		wr.bind_mw.bind_info.mw_access_flags = fz_access(t) & 0xe;
		break;
	default:
		wr.wr.rdma.remote_addr = fz_iova_in(t, tab_pick(t, &uv->mrs));
		wr.wr.rdma.rkey = fz_key(t);
		break;
	}
	fz_res(-ibv_post_send(uv->lqp[q], &wr, &bad));
}

/* Windows: a type 1 bound with ibv_bind_mw, a type 2 for lib_post. */
static void lib_bind(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	unsigned int i = fz_below(t, 2);
	struct ibv_mw_bind b = {};

	if (!uv->lmw[i]) {
		fz_what(t, "alloc");
		uv->lmw[i] = ibv_alloc_mw(uv->lpd, i ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
		fz_sys(uv->lmw[i] ? 0 : -1);
		return;
	}
	if (fz_one_in(t, 8)) {
		fz_what(t, "dealloc");
		fz_res(-ibv_dealloc_mw(uv->lmw[i]));
		uv->lmw[i] = NULL;
		return;
	}
	if (i || !uv->lqp[0])
		return;
	fz_what(t, "bind");
	b.wr_id = fz_rand(t);
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = uv->lmr[fz_below(t, FZ_LMRS)];
	/*
	 * librxe 44 reads the MR's lkey of every bind, an unbind (no MR, no
	 * length) too, so a NULL MR crashes it, not the kernel: the unbind
	 * is sent through the rings (family d) instead.
	 */
	if (!b.bind_info.mr)
		return;
	b.bind_info.addr = (uintptr_t)b.bind_info.mr->addr + fz_below(t, 64);
	b.bind_info.length = fz_below(t, 4) ? fz_below(t, 2 * FZ_PAGE) : fz_u64(t);
	b.bind_info.mw_access_flags = fz_access(t) & 0xe;
	if (!fz_res(-ibv_bind_mw(uv->lqp[fz_below(t, 2)], uv->lmw[0], &b)))
		fz_key_add(t, uv->lmw[0]->rkey);
}

/* Completions, for at most 50 ms. */
static void lib_poll(struct fz_thread *t)
{
	uint64_t end = fz_now_ns() + 50000000ULL;
	struct ibv_wc wc[16];
	int n;

	if (!t->uv.lcq)
		return;
	do {
		n = ibv_poll_cq(t->uv.lcq, ARRAY_SIZE(wc), wc);
	} while (n == 0 && fz_now_ns() < end);
	fz_res(n < 0 ? -EIO : 0);
}

/* A requested key: none, one in use, the local DMA key's index, an edge. */
static void mt_key(struct fz_thread *t, struct fz_attr *a, unsigned int *n,
		   uint16_t id)
{
	uint32_t key;

	switch (fz_below(t, 6)) {
	case 0:
	case 1:
		return;		/* optional: mrcore chooses */
	case 2:
		key = fz_key(t);
		break;
	case 3:
		key = (uint32_t)(1 + fz_below(t, 1U << 12)) << 8 | (uint32_t)fz_below(t, 256);
		break;
	default:
		key = fz_u32(t);
		break;
	}
	a[(*n)++] = (struct fz_attr){ id, 4, key };
}

/* Keep a method's new MR (in @a[0]) with its keys. */
static void mt_keep(struct fz_thread *t, const struct fz_attr *a, uint32_t pd,
		    uint32_t lkey, uint32_t rkey, uint64_t iova, uint64_t len)
{
	struct fz_obj o = {
		.h = a[0].data, .lkey = lkey, .rkey = rkey, .aux = pd,
		.iova = iova, .len = len,
	};

	uv_keep(t, &t->uv.mrs, &o, IB_USER_VERBS_CMD_DEREG_MR);
}

/* --- family c: vhca's driver methods ---------------------------------- */

/* QUERY with a response of any size (the struct's, shorter, longer, none). */
static void mt_query(struct fz_thread *t)
{
	static const uint16_t lens[] = {
		sizeof(struct vhca_uapi_caps), offsetof(struct vhca_uapi_caps, reserved),
		0, 4, sizeof(struct vhca_uapi_caps) + 8, 4096,
	};
	struct fz_attr a = {
		VHCA_IB_ATTR_QUERY_RESP, lens[fz_below(t, ARRAY_SIZE(lens))], 0,
	};

	a.data = fz_ubuf(t, a.len);
	uv_method(t, UVERBS_OBJECT_DEVICE, VHCA_IB_METHOD_QUERY, &a, 1);
}

static void mt_reg_iov(struct fz_thread *t)
{
	struct vhca_uapi_iov *iov = (void *)t->big;
	uint32_t lkey = 0, rkey = 0, i, n;
	uint64_t total = 0, iova;
	struct fz_attr a[FZ_ATTRS];
	unsigned int k = 0;
	uint32_t pd = uv_pd(t), access = fz_access(t);

	n = fz_below(t, 4) ? 1 + fz_below(t, 4) : fz_count(t, VHCA_UAPI_MAX_IOV);
	n = fz_min(n, VHCA_UAPI_MAX_IOV + 1);
	for (i = 0; i < n; i++) {
		fz_range(t, access, &iov[i].addr, &iov[i].length);
		total += iov[i].length;
	}
	iova = fz_below(t, 2) ? iov[0].addr : fz_u64(t);
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_IOV_HANDLE, 0, 0 };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_IOV_PD_HANDLE, 0, pd };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_IOV_IOV, n * sizeof(*iov),
				   (uintptr_t)iov };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_IOV_IOVA, 8, iova };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_IOV_ACCESS, 4, access };
	mt_key(t, a, &k, VHCA_IB_ATTR_REG_IOV_KEY);
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_IOV_RESP_LKEY, 4, (uintptr_t)&lkey };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_IOV_RESP_RKEY, 4, (uintptr_t)&rkey };
	if (!uv_method(t, UVERBS_OBJECT_MR, VHCA_IB_METHOD_MR_REG_IOV, a, k))
		mt_keep(t, a, pd, lkey, rkey, iova, total);
}

/* A range of an indirect key: over a key of ours mostly, else anything. */
static void mt_key_range(struct fz_thread *t, __u32 *key, __u64 *addr)
{
	struct fz_obj *mr = tab_pick(t, &t->uv.mrs);

	*key = mr && fz_below(t, 4) ? mr->lkey : fz_key(t);
	*addr = fz_iova_in(t, mr);
}

/* REG_INDIRECT from a list of ranges, a strided layout, both, or neither. */
static void mt_reg_indirect(struct fz_thread *t)
{
	struct vhca_uapi_key_range *r = (void *)t->big;
	struct vhca_uapi_interleaved *col = (void *)t->big;
	uint32_t lkey = 0, rkey = 0, i, n, form = fz_below(t, 8);
	uint32_t pd = uv_pd(t);
	struct fz_attr a[FZ_ATTRS];
	unsigned int k = 0;
	uint64_t iova = fz_below(t, 2) ? fz_rand(t) & 0xfffffffff000ULL : fz_u64(t);
	const uint32_t max_list = FZ_BIG_LEN / sizeof(*r) - 1;

	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_HANDLE, 0, 0 };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_PD_HANDLE, 0, pd };
	if (form < 5) {
		fz_what(t, "ranges");
		/* An attribute's length is 16 bits: at most 2730 ranges. */
		n = fz_below(t, 4) ? 1 + fz_below(t, 8) : fz_min(fz_count(t, 2730), max_list);
		for (i = 0; i < n; i++) {
			mt_key_range(t, &r[i].key, &r[i].addr);
			r[i].length = fz_below(t, 4) ? 1 + fz_below(t, FZ_PAGE) : fz_u64(t);
			r[i].reserved = fz_one_in(t, 64);
		}
		a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_RANGES,
					   n * sizeof(*r), (uintptr_t)r };
	}
	if (form >= 4) {
		fz_what(t, form == 4 ? "both" : form == 7 ? "neither" : "strided");
		n = fz_below(t, 4) ? 1 + fz_below(t, 4) : fz_count(t, 64);
		n = fz_min(n, FZ_BIG_LEN / sizeof(*col));
		for (i = 0; form != 4 && form != 7 && i < n; i++) {
			mt_key_range(t, &col[i].key, &col[i].addr);
			col[i].bytes_count = fz_below(t, 4) ? 1 + fz_below(t, 512) : fz_u32(t);
			col[i].bytes_skip = fz_below(t, 4) ? fz_below(t, 512) : fz_u64(t);
		}
		if (form != 7)
			a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED,
						   n * sizeof(*col), (uintptr_t)col };
		a[k++] = (struct fz_attr){
			VHCA_IB_ATTR_REG_INDIRECT_REPEAT, 4,
			fz_below(t, 4) ? 1 + fz_below(t, 16) :
			fz_one_in(t, 2) ? VHCA_UAPI_MAX_RANGES / (n ? n : 1) + fz_below(t, 2) :
			fz_u32(t),
		};
	}
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_IOVA, 8, iova };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_ACCESS, 4,
				   fz_below(t, 2) ? fz_rand(t) & 0xf : fz_access(t) };
	mt_key(t, a, &k, VHCA_IB_ATTR_REG_INDIRECT_KEY);
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_RESP_LKEY, 4,
				   (uintptr_t)&lkey };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_REG_INDIRECT_RESP_RKEY, 4,
				   (uintptr_t)&rkey };
	if (!uv_method(t, UVERBS_OBJECT_MR, VHCA_IB_METHOD_MR_REG_INDIRECT, a, k))
		mt_keep(t, a, pd, lkey, rkey, iova, FZ_PAGE);
}

/*
 * MR_ALLOC, then mmap of the offset it returned: as libvhca maps it, or
 * longer, at the next page's offset, private, executable, or not at all.
 * The mappings are kept (as fz_obj: iova the address, len the length)
 * and unmapped later, before or after the MR goes.
 */
static void mt_mr_alloc(struct fz_thread *t)
{
	uint32_t lkey = 0, rkey = 0, blocks = 0, pd = uv_pd(t);
	uint64_t offset = 0, len, maplen;
	struct fz_attr a[FZ_ATTRS];
	struct fz_obj o = {};
	unsigned int k = 0;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED;
	void *p;

	switch (fz_below(t, 8)) {
	case 0:
		len = fz_u64(t);
		/* Valid but up to 1 GiB: the VM's memory; refused sizes only. */
		if (len > (4UL << 20) && len <= VHCA_UAPI_MAX_ALLOC)
			len = VHCA_UAPI_MAX_ALLOC + 1;
		break;
	case 1:
		len = fz_below(t, 2) ? 0 : VHCA_UAPI_MAX_ALLOC + 1;
		break;
	default:
		len = 1 + fz_below(t, 64 * FZ_PAGE);
		break;
	}
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_HANDLE, 0, 0 };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_PD_HANDLE, 0, pd };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_LENGTH, 8, len };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_IOVA, 8,
				   fz_below(t, 2) ? fz_rand(t) & 0xffffffc00000ULL : fz_u64(t) };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_ACCESS, 4, fz_access(t) };
	mt_key(t, a, &k, VHCA_IB_ATTR_MR_ALLOC_KEY);
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY, 4, (uintptr_t)&lkey };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_RESP_RKEY, 4, (uintptr_t)&rkey };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_RESP_MMAP_OFFSET, 8,
				   (uintptr_t)&offset };
	a[k++] = (struct fz_attr){ VHCA_IB_ATTR_MR_ALLOC_RESP_BLOCKS, 4,
				   (uintptr_t)&blocks };
	if (uv_method(t, UVERBS_OBJECT_MR, VHCA_IB_METHOD_MR_ALLOC, a, k))
		return;
	mt_keep(t, a, pd, lkey, rkey, a[3].data, len);
	maplen = (len + FZ_PAGE - 1) & ~(FZ_PAGE - 1);
	switch (fz_below(t, 8)) {
	case 0:
		return;
	case 1:
		maplen += FZ_PAGE;
		break;
	case 2:
		offset += FZ_PAGE;
		break;
	case 3:
		flags = MAP_PRIVATE;
		break;
	case 4:
		prot |= PROT_EXEC;
		break;
	default:
		break;
	}
	fz_what(t, "mmap");
	p = fz_mmap(NULL, maplen, prot, flags, t->uv.fd, offset);
	if (fz_sys(p == MAP_FAILED ? -1 : 0))
		return;
	o = (struct fz_obj){ .iova = (uintptr_t)p, .len = maplen };
	if (!tab_add(&t->uv.allocs, &o))
		munmap(p, maplen);
}

/* Unmap an MR_ALLOC mapping, whether its MR is still there or not. */
static void mt_alloc_unmap(struct fz_thread *t)
{
	struct fz_obj *o = tab_pick(t, &t->uv.allocs);

	if (!o)
		return;
	fz_sys(munmap((void *)(uintptr_t)o->iova, o->len));
	tab_del(&t->uv.allocs, o);
}

/* Method ids of vhca's namespace that do not exist, on each object. */
static void mt_no_method(struct fz_thread *t)
{
	static const uint16_t objs[] = {
		UVERBS_OBJECT_DEVICE, UVERBS_OBJECT_MR, UVERBS_OBJECT_PD,
		UVERBS_OBJECT_QP, UVERBS_OBJECT_CQ,
	};
	struct fz_attr a = { 1U << UVERBS_ID_NS_SHIFT, 8, fz_rand(t) };

	uv_method(t, objs[fz_below(t, ARRAY_SIZE(objs))],
		  (1U << UVERBS_ID_NS_SHIFT) + fz_below(t, 8), &a, fz_below(t, 2));
}

static const struct fz_op fz_mt_ops[] = {
	{ "query", mt_query, 1 },
	{ "reg_iov", mt_reg_iov, 4 },
	{ "reg_indirect", mt_reg_indirect, 4 },
	{ "mr_alloc", mt_mr_alloc, 2 },
	{ "alloc_unmap", mt_alloc_unmap, 1 },
	{ "no_method", mt_no_method, 1 },
};

/* --- family d: the rings --------------------------------------------- */

/* A live QP with a mapped SQ (and, with @peer, connected), or NULL. */
static struct fz_uqp *rg_qp(struct fz_thread *t, bool peer)
{
	int i = uv_qp_pick(t);
	struct fz_uqp *qp = i >= 0 ? &t->uv.qps[i] : NULL;

	if (!qp || !qp->sq.buf || (peer && qp->peer < 0))
		return NULL;
	return qp;
}

/*
 * Two RC QPs on one new CQ, connected to each other on our own GID: the
 * loopback pair whose rings the other operations fill.
 */
static void rg_pair(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	struct ib_uverbs_create_qp c;
	int cq = fz_below(t, FZ_UCQS), a = fz_below(t, FZ_UQPS);
	int b = (a + 1 + fz_below(t, FZ_UQPS - 1)) % FZ_UQPS;
	uint32_t pd = uv->pds.n ? uv->pds.o[fz_below(t, uv->pds.n)].h : uv->canary_pd;
	bool exact = t->exact;

	t->exact = true;
	if (uv->cqs[cq].live)
		uv_cq_destroy(t, cq);
	if (uv->cqs[cq].live || uv_cq_create(t, cq, 256))
		goto out;
	uv_qp_cmd(&c, pd, uv->cqs[cq].h);
	if (uv_qp_create(t, a, &c, cq) || uv_qp_create(t, b, &c, cq))
		goto out;
	if (uv_connect(t, uv->qps[a].h, uv->qps[b].qpn) ||
	    uv_connect(t, uv->qps[b].h, uv->qps[a].qpn))
		goto out;
	uv->qps[a].peer = b;
	uv->qps[b].peer = a;
	uv_qp_resync(&uv->qps[a]);
	uv_qp_resync(&uv->qps[b]);
out:
	t->exact = exact;
}

/*
 * An address for a WQE: in one of our MRs mostly (one of PD @pd, where
 * there is one, so that well-formed WQEs do work), else anywhere.
 */
static uint64_t rg_addr(struct fz_thread *t, uint32_t pd, struct fz_obj **mr)
{
	unsigned int i;
	uint64_t room;

	*mr = tab_pick(t, &t->uv.mrs);
	for (i = 0; i < 4 && *mr && (*mr)->aux != pd; i++)
		*mr = tab_pick(t, &t->uv.mrs);
	if (*mr && fz_below(t, 4))
		return fz_iova_in(t, *mr);
	return fz_below(t, 2) ? fz_addr(t, &room) : fz_u64(t);
}

/* A gather list of @room entries at most, plausible or not. */
static void rg_sges(struct fz_thread *t, uint32_t pd, struct rxe_dma_info *dma,
		    uint32_t room, bool plausible)
{
	uint32_t i, n = fz_min(room, plausible ? 1 + fz_below(t, 2) : 1 + fz_below(t, 8));
	uint32_t total = 0;

	for (i = 0; i < n; i++) {
		struct fz_obj *mr;

		dma->sge[i].addr = rg_addr(t, pd, &mr);
		dma->sge[i].length = plausible || fz_below(t, 2) ? cd_xfer_len(t, mr) :
				     fz_u32(t);
		dma->sge[i].lkey = mr && fz_below(t, 4) ? mr->lkey : fz_key(t);
		total += dma->sge[i].length;
	}
	dma->num_sge = plausible || fz_below(t, 2) ? n : fz_count(t, room);
	dma->length = plausible || fz_below(t, 2) ? total : fz_u32(t);
	dma->resid = plausible || fz_below(t, 2) ? dma->length : fz_u32(t);
	if (!plausible && fz_one_in(t, 4)) {
		dma->cur_sge = fz_count(t, room);
		dma->sge_offset = fz_u32(t);
	}
}

/* How many SGEs the elements of ring @q hold after @off bytes. */
static uint32_t rg_room(const struct fz_uring *q, size_t off)
{
	size_t esize = 1UL << q->log2;

	return esize > off ? (esize - off) / sizeof(struct rxe_sge) : 0;
}

/*
 * One send WQE at @w: @plausible, a well-formed one of a random opcode
 * between our MRs (what librxe would write); else fields at their edges,
 * or (1 in 4) nothing but random bytes.
 */
static void rg_wqe(struct fz_thread *t, struct fz_uqp *qp, struct rxe_send_wqe *w,
		   bool plausible)
{
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV, IBV_WR_TSO, 11, 12, 13, 14, 15, 0xff, 0x80000000,
	};
	size_t esize = 1UL << qp->sq.log2;
	struct fz_obj *mr, *mw;

	if (!plausible && fz_one_in(t, 4)) {
		fz_fill(t, w, esize);
		return;
	}
	memset(w, 0, esize);
	w->wr.wr_id = fz_rand(t);
	w->wr.opcode = ops[fz_below(t, plausible ? 10 : ARRAY_SIZE(ops))];
	w->wr.send_flags = plausible || fz_below(t, 2) ? IBV_SEND_SIGNALED : fz_u32(t);
	w->wr.ex.imm_data = fz_rand(t);
	w->wr.wr.rdma.remote_addr = rg_addr(t, qp->pd, &mr);
	w->wr.wr.rdma.rkey = mr && fz_below(t, 4) ? mr->rkey : fz_key(t);
	switch (w->wr.opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.wr.atomic.remote_addr = rg_addr(t, qp->pd, &mr) &
					      (plausible ? ~7ULL : ~0ULL);
		w->wr.wr.atomic.compare_add = fz_rand(t);
		w->wr.wr.atomic.swap = fz_rand(t);
		w->wr.wr.atomic.rkey = mr && fz_below(t, 4) ? mr->rkey : fz_key(t);
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		w->wr.ex.invalidate_rkey = fz_key(t);
		break;
	case IBV_WR_BIND_MW:
		mw = tab_pick(t, &t->uv.mws);
		w->wr.wr.mw.addr = rg_addr(t, qp->pd, &mr);
		w->wr.wr.mw.length = fz_below(t, 4) ? fz_below(t, 2 * FZ_PAGE) : fz_u64(t);
		w->wr.wr.mw.mr_lkey = mr && fz_below(t, 4) ? mr->lkey : fz_key(t);
		w->wr.wr.mw.mw_rkey = mw && fz_below(t, 4) ? mw->rkey : fz_key(t);
		w->wr.wr.mw.rkey = mw ? mw->rkey + 1 : fz_key(t);
		w->wr.wr.mw.access = fz_access(t);
		break;
	default:
		break;
	}
	w->iova = w->wr.wr.rdma.remote_addr;
	if (!plausible) {
		w->iova = fz_below(t, 2) ? w->iova : fz_u64(t);
		w->status = fz_below(t, 4) ? 0 : fz_u32(t);
		w->state = fz_below(t, 4) ? 0 : fz_u32(t);
		w->mask = fz_below(t, 4) ? 0 : fz_u32(t);
		w->first_psn = fz_below(t, 4) ? 0 : fz_u32(t);
		w->ssn = fz_rand(t);
		if (fz_one_in(t, 2))
			w->wr.wr.ud.remote_qpn = fz_u32(t);
		if (fz_one_in(t, 2))
			w->wr.wr.ud.ah_num = fz_u32(t);
		if (fz_one_in(t, 4))
			w->wr.send_flags |= IBV_SEND_INLINE;
	}
	if (w->wr.send_flags & IBV_SEND_INLINE) {
		size_t room = esize - offsetof(struct rxe_send_wqe, dma.inline_data);

		w->dma.length = fz_below(t, 2) ? fz_below(t, room + 1) : fz_u32(t);
		fz_fill(t, w->dma.inline_data, fz_below(t, room + 1));
		return;
	}
	rg_sges(t, qp->pd, &w->dma, rg_room(&qp->sq, offsetof(struct rxe_send_wqe, dma.sge)),
		plausible);
}

/* Receives on @q (an RQ or an SRQ) of PD @pd: plausible, or garbage. */
static void rg_recvs(struct fz_thread *t, uint32_t pd, struct fz_uring *q,
		     bool plausible)
{
	uint32_t i, n = 1 + fz_below(t, 4);
	size_t esize = 1UL << q->log2;

	for (i = 0; i < n; i++) {
		struct rxe_recv_wqe *w = fz_ring_elem(q, q->idx + i);

		if (!plausible && fz_one_in(t, 4)) {
			fz_fill(t, w, esize);
			continue;
		}
		memset(w, 0, esize);
		w->wr_id = fz_rand(t);
		rg_sges(t, pd, &w->dma, rg_room(q, offsetof(struct rxe_recv_wqe, dma.sge)),
			plausible);
	}
	fz_ring_publish(q, plausible || fz_below(t, 8) ? q->idx + n : fz_u32(t));
}

/*
 * Ring the doorbell: POST_SEND of no WR, as librxe does; now and then
 * with WRs in the command after all (ib_core parses them; a user QP's
 * driver must not take them for its ring).
 */
static void rg_doorbell(struct fz_thread *t, struct fz_uqp *qp)
{
	struct {
		struct ib_uverbs_post_send c;
		struct ib_uverbs_send_wr wr[2];
		struct ib_uverbs_sge sge[2];
	} p = {};
	struct ib_uverbs_post_send_resp r;

	if (fz_below(t, 8)) {
		uv_doorbell(t, qp->h);
		return;
	}
	fz_what(t, "WRs in the doorbell");
	fz_fill(t, &p, sizeof(p));
	p.c.qp_handle = qp->h;
	p.c.wr_count = fz_below(t, 3);
	p.c.sge_count = fz_below(t, 3);
	p.c.wqe_size = fz_below(t, 4) ? sizeof(p.wr[0]) : fz_u32(t) & 0xff;
	p.wr[0].num_sge = fz_below(t, 3);
	p.wr[1].num_sge = fz_below(t, 3);
	uv_cmd(t, IB_USER_VERBS_CMD_POST_SEND, &p, sizeof(p), &r, sizeof(r));
}

/* Garbage WQEs in an SQ, the producer moved (forwards, backwards, past the mask). */
static void rg_sq_garbage(struct fz_thread *t)
{
	struct fz_uqp *qp = rg_qp(t, false);
	uint32_t i, n = 1 + fz_below(t, 4), prod;

	if (!qp)
		return;
	for (i = 0; i < n; i++)
		rg_wqe(t, qp, fz_ring_elem(&qp->sq, qp->sq.idx + i), false);
	prod = qp->sq.idx + n;
	switch (fz_below(t, 16)) {
	case 0:
		fz_what(t, "producer backwards");
		prod = qp->sq.idx - fz_below(t, qp->sq.mask + 1);
		break;
	case 1:
		fz_what(t, "producer past the mask");
		prod = qp->sq.idx + (qp->sq.mask + 1) * (1 + fz_below(t, 1000));
		break;
	case 2:
		fz_what(t, "producer wild");
		prod = fz_u32(t);
		break;
	default:
		break;
	}
	fz_ring_publish(&qp->sq, prod);
	rg_doorbell(t, qp);
}

/* Well-formed WQEs, a receive posted on the peer first for the sends. */
static void rg_sq_valid(struct fz_thread *t)
{
	struct fz_uqp *qp = rg_qp(t, true);
	struct fz_uqp *peer;
	uint32_t i, n = 1 + fz_below(t, 3);

	if (!qp)
		return;
	peer = &t->uv.qps[qp->peer];
	if (peer->rq.buf && fz_below(t, 4))
		rg_recvs(t, peer->pd, &peer->rq, true);
	for (i = 0; i < n; i++)
		rg_wqe(t, qp, fz_ring_elem(&qp->sq, qp->sq.idx + i), true);
	fz_ring_publish(&qp->sq, qp->sq.idx + n);
	rg_doorbell(t, qp);
}

static void rg_rq_garbage(struct fz_thread *t)
{
	struct fz_uqp *qp = rg_qp(t, false);
	int s = uv_srq_pick(t);

	if (s >= 0 && t->uv.srqs[s].r.buf && fz_one_in(t, 2)) {
		fz_what(t, "srq");
		rg_recvs(t, ~0U, &t->uv.srqs[s].r, false);
	} else if (qp && qp->rq.buf) {
		rg_recvs(t, qp->pd, &qp->rq, false);
	}
}

/* Take a CQ ring's new entries (a ring's worth at most), as librxe does. */
static void rg_drain(struct fz_uring *q)
{
	uint32_t prod = __atomic_load_n(&q->buf->producer_index, __ATOMIC_ACQUIRE) & q->mask;
	uint32_t n = 0;

	while (q->idx != prod && n++ <= q->mask)
		q->idx = (q->idx + 1) & q->mask;
	__atomic_store_n(&q->buf->consumer_index, q->idx, __ATOMIC_RELEASE);
}

/* A CQ: its entries taken, or its consumer index wild. */
static void rg_cq(struct fz_thread *t)
{
	int i = uv_cq_pick(t);
	struct fz_uring *q = i >= 0 ? &t->uv.cqs[i].r : NULL;

	if (!q || !q->buf)
		return;
	if (fz_one_in(t, 4)) {
		fz_what(t, "consumer wild");
		__atomic_store_n(&q->buf->consumer_index, fz_u32(t), __ATOMIC_RELEASE);
		return;
	}
	fz_what(t, "drain");
	rg_drain(q);
}

/* A ring header's element size and index mask overwritten. */
static void rg_header(struct fz_thread *t)
{
	struct fz_uqp *qp = rg_qp(t, false);
	int c = uv_cq_pick(t);
	struct fz_uring *q;

	switch (fz_below(t, 3)) {
	case 0:
		q = qp ? &qp->sq : NULL;
		break;
	case 1:
		q = qp ? &qp->rq : NULL;
		break;
	default:
		q = c >= 0 ? &t->uv.cqs[c].r : NULL;
		break;
	}
	if (!q || !q->buf)
		return;
	q->buf->log2_elem_size = fz_below(t, 2) ? fz_u32(t) : 31;
	q->buf->index_mask = fz_below(t, 2) ? fz_u32(t) : ~0U;
	if (qp)
		rg_doorbell(t, qp);
}

/*
 * Wait, at most a second, for the kernel to take what an SQ holds or
 * for its QP to go to ERR, taking completions meanwhile. Not settling is
 * not a failure: the engine may be busy with the other threads' work.
 */
static void rg_settle(struct fz_thread *t)
{
	struct fz_uqp *qp = rg_qp(t, false);
	uint64_t end = fz_now_ns() + 1000000000ULL;
	struct ib_uverbs_query_qp c = { .attr_mask = IBV_QP_STATE };
	struct ib_uverbs_query_qp_resp r;
	bool exact = t->exact;

	if (!qp)
		return;
	c.qp_handle = qp->h;
	t->exact = true;
	while (fz_now_ns() < end) {
		uint32_t cons = __atomic_load_n(&qp->sq.buf->consumer_index,
						__ATOMIC_ACQUIRE);

		if (qp->cq >= 0 && t->uv.cqs[qp->cq].live && t->uv.cqs[qp->cq].r.buf)
			rg_drain(&t->uv.cqs[qp->cq].r);
		if ((cons & qp->sq.mask) == qp->sq.idx)
			break;
		if (uv_cmd(t, IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c), &r, sizeof(r)) ||
		    r.qp_state == IBV_QPS_ERR)
			break;
		usleep(1000);
	}
	t->exact = exact;
}

/* Back to RTS (from ERR, say), towards its peer or itself. */
static void rg_reconnect(struct fz_thread *t)
{
	struct fz_uqp *qp = rg_qp(t, false);

	if (qp && !uv_connect(t, qp->h, qp->peer >= 0 ? t->uv.qps[qp->peer].qpn :
			      qp->qpn))
		uv_qp_resync(qp);
}

/* A ring unmapped while its object lives; the doorbell rung after. */
static void rg_unmap(struct fz_thread *t)
{
	struct fz_uqp *qp = rg_qp(t, false);

	if (!qp)
		return;
	fz_ring_unmap(fz_one_in(t, 2) ? &qp->sq : &qp->rq);
	uv_doorbell(t, qp->h);
}

static const struct fz_op fz_rg_ops[] = {
	{ "pair", rg_pair, 1 },
	{ "sq_garbage", rg_sq_garbage, 6 },
	{ "sq_valid", rg_sq_valid, 4 },
	{ "rq_garbage", rg_rq_garbage, 2 },
	{ "cq", rg_cq, 2 },
	{ "header", rg_header, 1 },
	{ "settle", rg_settle, 2 },
	{ "reconnect", rg_reconnect, 1 },
	{ "unmap", rg_unmap, 1 },
};

/* --- family e: memory that changes under the registrations ----------- */

/*
 * 1 to 4 slots from a random one, within the arena: false when one of
 * them was given up (mm_munmap()): what is there now is not ours. The
 * caller holds the arena's lock for reading, so that the answer holds
 * while it changes the slots.
 */
static bool mm_slots(struct fz_thread *t, uint8_t **p, size_t *len)
{
	unsigned int s = fz_below(t, FZ_SLOTS);
	unsigned int i, n = 1 + fz_below(t, fz_min(4, FZ_SLOTS - s));

	for (i = s; i < s + n; i++)
		if (__atomic_load_n(&g.dead[i], __ATOMIC_RELAXED))
			return false;
	*p = fz_slot(s);
	*len = (size_t)n * FZ_SLOT_LEN;
	return true;
}

/*
 * munmap a slot and map it again, the hole open a moment: a registration
 * or an ODP fault of another thread meets no mapping. Under the arena's
 * lock, so that no mmap of ours takes the hole; one that is not ours
 * (the C library's) would, and the slot is then given up.
 */
static void mm_munmap(struct fz_thread *t)
{
	unsigned int s = fz_below(t, FZ_SLOTS);
	void *p;

	if (__atomic_load_n(&g.dead[s], __ATOMIC_RELAXED))
		return;
	pthread_rwlock_wrlock(&g.map_lock);
	fz_sys(munmap(fz_slot(s), FZ_SLOT_LEN));
	usleep(fz_below(t, 200));
	p = mmap(fz_slot(s), FZ_SLOT_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != fz_slot(s)) {
		if (p != MAP_FAILED)
			munmap(p, FZ_SLOT_LEN);
		__atomic_store_n(&g.dead[s], 1, __ATOMIC_RELAXED);
		fz_log("fuzz: thread %u: arena slot %u taken by another mapping: given up\n",
		       t->id, s);
	}
	pthread_rwlock_unlock(&g.map_lock);
}

static void mm_mprotect(struct fz_thread *t)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE,
	};
	uint8_t *p;
	size_t len;

	pthread_rwlock_rdlock(&g.map_lock);
	if (mm_slots(t, &p, &len))
		fz_sys(mprotect(p, len, prots[fz_below(t, ARRAY_SIZE(prots))]));
	pthread_rwlock_unlock(&g.map_lock);
}

/* MADV_DONTNEED mostly: the pages go; pinned ones stay the MR's. */
static void mm_madvise(struct fz_thread *t)
{
	static const struct {
		const char *name;
		int advice;
	} adv[] = {
		{ "dontneed", MADV_DONTNEED }, { "dontneed", MADV_DONTNEED },
		{ "dontneed", MADV_DONTNEED }, { "free", MADV_FREE },
		{ "pageout", MADV_PAGEOUT }, { "cold", MADV_COLD },
		{ "hugepage", MADV_HUGEPAGE }, { "nohugepage", MADV_NOHUGEPAGE },
		{ "dontfork", MADV_DONTFORK }, { "dofork", MADV_DOFORK },
	};
	unsigned int i = fz_below(t, ARRAY_SIZE(adv));
	uint8_t *p;
	size_t len;

	fz_what(t, adv[i].name);
	pthread_rwlock_rdlock(&g.map_lock);
	if (mm_slots(t, &p, &len)) {
		if (fz_one_in(t, 2)) {
			/* Part of it, from any page. */
			size_t off = fz_below(t, len / FZ_PAGE) * FZ_PAGE;

			p += off;
			len = FZ_PAGE * (1 + fz_below(t, (len - off) / FZ_PAGE));
		}
		fz_sys(madvise(p, len, adv[i].advice));
	}
	pthread_rwlock_unlock(&g.map_lock);
}

/* New pages over old ones at once (MAP_FIXED over our own slots). */
static void mm_remap(struct fz_thread *t)
{
	uint8_t *p;
	size_t len;

	pthread_rwlock_rdlock(&g.map_lock);
	if (mm_slots(t, &p, &len))
		fz_sys(mmap(p, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ? -1 : 0);
	pthread_rwlock_unlock(&g.map_lock);
}

/*
 * fork(): every pinned private page is copied for the child at once,
 * while the other threads register, fault and invalidate. The child
 * exits at once; one that crashed fails the run.
 */
static void mm_fork(struct fz_thread *t)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0)
		_exit(0);
	if (fz_sys(pid))
		return;
	if (waitpid(pid, &status, 0) != pid)
		return;
	if (WIFSIGNALED(status))
		fz_fail(t, "fork child %d killed by signal %d", pid, WTERMSIG(status));
	else if (WEXITSTATUS(status))
		fz_fail(t, "fork child %d exited %d", pid, WEXITSTATUS(status));
}

/* An ODP MR over the arena, through uverbs or the chardev. */
static void mm_odp_reg(struct fz_thread *t)
{
	uint32_t access = IBV_ACCESS_ON_DEMAND | (fz_rand(t) & 0xf);
	uint8_t *p;
	size_t len;
	bool ok;

	pthread_rwlock_rdlock(&g.map_lock);
	ok = mm_slots(t, &p, &len);
	pthread_rwlock_unlock(&g.map_lock);
	if (!ok)
		return;
	if (fz_one_in(t, 2) || !(opt.families & (1U << FZ_F_CDEV))) {
		fz_what(t, "uverbs");
		uv_reg(t, (uintptr_t)p, len, (uintptr_t)p, access);
	} else {
		struct mrct_reg r = {
			.addr = (uintptr_t)p, .length = len, .iova = (uintptr_t)p,
			.access = access, .pd = fz_below(t, MRCT_NUM_PDS),
		};

		fz_what(t, "chardev");
		cd_reg_one(t, &r);
	}
}

/* Faults on ODP MRs: prefetches, and device reads through them. */
static void mm_odp_fault(struct fz_thread *t)
{
	switch (fz_below(t, 3)) {
	case 0:
		fz_what(t, "advise");
		uv_advise_mr(t);
		break;
	case 1:
		if (!(opt.families & (1U << FZ_F_CDEV)))
			return;
		fz_what(t, "chardev advise");
		cd_odp_advise(t);
		break;
	default:
		if (!(opt.families & (1U << FZ_F_CDEV)))
			return;
		fz_what(t, "chardev xfer");
		cd_xfer(t);
		break;
	}
}

static const struct fz_op fz_mm_ops[] = {
	{ "munmap", mm_munmap, 2 },
	{ "mprotect", mm_mprotect, 2 },
	{ "madvise", mm_madvise, 4 },
	{ "remap", mm_remap, 2 },
	{ "fork", mm_fork, 1 },
	{ "odp_reg", mm_odp_reg, 3 },
	{ "odp_fault", mm_odp_fault, 4 },
};

/* --- family f: rdma netlink, links and the netdevs under them -------- */

/*
 * What the family may delete, and why nothing else goes: RDMA_NLDEV_CMD_DELLINK
 * of the indexes it found its own links at, or of an index a GET showed to
 * be no device or one of the family's ("fzl" names), never of one of the
 * devices there before the run (g.nl_keep: vhca0, an rxe...); RTM_DELLINK
 * of its own dummies only, by name. Its NEWLINKs name its own dummies,
 * another thread's, "lo" or netdevs that do not exist, never vhca0's.
 */

#define FZ_NL_RDMA(op)	RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)

/* A device in a dump, and the devices of one. */
struct fz_nl_dev {
	uint32_t index;
	char name[IB_DEVICE_NAME_MAX];
};

struct fz_nl_devs {
	unsigned int n;
	struct fz_nl_dev d[FZ_NL_DEVS];
};

typedef void (*fz_nl_fn)(const struct nlmsghdr *h, void *arg);

static void nl_dummy_name(char *buf, unsigned int thread, unsigned int slot)
{
	snprintf(buf, IFNAMSIZ, "fzn%u_%u", thread, slot);
}

static void nl_link_name(char *buf, unsigned int thread, unsigned int slot)
{
	snprintf(buf, IB_DEVICE_NAME_MAX, "fzl%u_%u", thread, slot);
}

/* Any thread's dummy (another's, one of no thread, or ours): made or not. */
static void nl_dummy_other(struct fz_thread *t, char *buf)
{
	unsigned int thread = fz_below(t, FZ_NL_THREADS);

	nl_dummy_name(buf, thread, fz_below(t, FZ_NL_DUMMIES));
}

/* One of the devices that were there before the run? */
static bool nl_kept(uint32_t index)
{
	unsigned int i;

	for (i = 0; i < g.nl_nkeep; i++)
		if (g.nl_keep[i] == index)
			return true;
	return false;
}

/* A new request of @type; its attributes follow. */
static void nl_begin(struct fz_nl *nl, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *h = (struct nlmsghdr *)nl->req;

	memset(nl->req, 0, FZ_NL_REQ);
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	nl->len = NLMSG_HDRLEN;
}

/* @len bytes of @data (zeroes if NULL) after the request's, aligned. */
static void nl_raw(struct fz_nl *nl, const void *data, size_t len)
{
	if (nl->len + NLMSG_ALIGN(len) > FZ_NL_REQ)
		return;
	if (data)
		memcpy(nl->req + nl->len, data, len);
	nl->len += NLMSG_ALIGN(len);
}

/* An attribute whose header says @nla_len (NLA_HDRLEN + @len if right). */
static void nl_attr_len(struct fz_nl *nl, uint16_t type, const void *data,
			size_t len, uint16_t nla_len)
{
	struct nlattr a = { .nla_len = nla_len, .nla_type = type };

	if (nl->len + NLA_HDRLEN + NLA_ALIGN(len) > FZ_NL_REQ)
		return;
	nl_raw(nl, &a, sizeof(a));
	nl_raw(nl, data, len);
}

static void nl_attr(struct fz_nl *nl, uint16_t type, const void *data, size_t len)
{
	nl_attr_len(nl, type, data, len, NLA_HDRLEN + len);
}

static void nl_str(struct fz_nl *nl, uint16_t type, const char *s)
{
	nl_attr(nl, type, s, strlen(s) + 1);
}

static void nl_u32(struct fz_nl *nl, uint16_t type, uint32_t v)
{
	nl_attr(nl, type, &v, sizeof(v));
}

/*
 * Send @len bytes of the request (its header says nlmsg_len as the caller
 * left it), then read every answer there is. The kernel answers a request
 * within the sendto() itself, and queues the next part of a dump within
 * the recv() that made room, so nothing here waits. @fn sees each answer
 * to this request but the acknowledgment. Returns the request's error
 * (0 or -errno), 0 when it was answered without one, -ENOMSG when nothing
 * answered it (a request without NLM_F_ACK that failed unheard, say).
 */
static int nl_talk(struct fz_nl *nl, int fd, size_t len, fz_nl_fn fn, void *arg)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	struct nlmsghdr *h = (struct nlmsghdr *)nl->req;
	uint32_t seq = ++nl->seq;
	int err = -ENOMSG;
	int n;

	h->nlmsg_seq = seq;
	if (sendto(fd, nl->req, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	while ((n = recv(fd, nl->buf, FZ_NL_BUF, MSG_DONTWAIT)) > 0) {
		for (h = (struct nlmsghdr *)nl->buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)))
					err = e->error;
			} else if (h->nlmsg_type == NLMSG_DONE) {
				/* A dump's end carries the dump's error. */
				err = 0;
				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					memcpy(&err, NLMSG_DATA(h), sizeof(int));
			} else {
				if (err == -ENOMSG)
					err = 0;
				if (fn)
					fn(h, arg);
			}
		}
	}
	return err;
}

/* The request as built: its header's length right. */
static int nl_send(struct fz_nl *nl, int fd, fz_nl_fn fn, void *arg)
{
	((struct nlmsghdr *)nl->req)->nlmsg_len = nl->len;
	return nl_talk(nl, fd, nl->len, fn, arg);
}

/* An answer of RDMA_NLDEV_CMD_GET: its device's index and name, kept. */
static void nl_dev_fn(const struct nlmsghdr *h, void *arg)
{
	struct fz_nl_devs *devs = arg;
	const struct nlattr *a = NLMSG_DATA(h);
	int left = h->nlmsg_len - NLMSG_HDRLEN;
	struct fz_nl_dev d = {};
	bool index = false, name = false;

	if (h->nlmsg_type != FZ_NL_RDMA(RDMA_NLDEV_CMD_GET) || devs->n >= FZ_NL_DEVS)
		return;
	for (; left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left;
	     left -= NLA_ALIGN(a->nla_len),
	     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len))) {
		const char *data = (const char *)a + NLA_HDRLEN;
		int len = a->nla_len - NLA_HDRLEN;

		switch (a->nla_type & NLA_TYPE_MASK) {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			if (len >= (int)sizeof(d.index)) {
				memcpy(&d.index, data, sizeof(d.index));
				index = true;
			}
			break;
		case RDMA_NLDEV_ATTR_DEV_NAME:
			snprintf(d.name, sizeof(d.name), "%.*s", len, data);
			name = true;
			break;
		}
	}
	if (index && name)
		devs->d[devs->n++] = d;
}

/* Every RDMA device there is (up to FZ_NL_DEVS): 0 or -errno. */
static int nl_devices(struct fz_nl *nl, struct fz_nl_devs *devs)
{
	devs->n = 0;
	nl_begin(nl, FZ_NL_RDMA(RDMA_NLDEV_CMD_GET),
		 NLM_F_REQUEST | NLM_F_DUMP | NLM_F_ACK);
	return nl_send(nl, nl->rdma, nl_dev_fn, devs);
}

/* RDMA_NLDEV_CMD_GET of @index: 0 and the device in @devs, or -errno. */
static int nl_device(struct fz_nl *nl, uint32_t index, struct fz_nl_devs *devs)
{
	devs->n = 0;
	nl_begin(nl, FZ_NL_RDMA(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_ACK);
	nl_u32(nl, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	return nl_send(nl, nl->rdma, nl_dev_fn, devs);
}

/*
 * The name ib_core gives a device added as @name: what its buffer holds
 * (IB_DEVICE_NAME_MAX - 1 bytes, to the first NUL), '/' made '!' as in
 * every kobject's name.
 */
static void nl_canon(char *out, const char *name)
{
	size_t i;

	for (i = 0; i < IB_DEVICE_NAME_MAX - 1 && name[i]; i++)
		out[i] = name[i] == '/' ? '!' : name[i];
	out[i] = '\0';
}

/* Close a link's /dev/mrcore_test file and forget the link (its index stays). */
static void nl_link_forget(struct fz_nl_link *l)
{
	if (l->mrct_fd >= 0)
		close(l->mrct_fd);
	l->mrct_fd = -1;
	l->live = false;
}

/*
 * A NEWLINK of @name succeeded: find the device by name and keep it in
 * slot @slot, or in a free one if @slot is -1. Not found (already gone
 * with its netdev) or no slot free, it is not tracked: it goes with its
 * dummy at the latest.
 */
static void nl_adopt(struct fz_thread *t, int slot, const char *name)
{
	struct fz_nl *nl = &t->nl;
	struct fz_nl_devs devs;
	char want[IB_DEVICE_NAME_MAX];
	struct fz_nl_link *l;
	unsigned int i;

	nl_canon(want, name);
	if (fz_res(nl_devices(nl, &devs)))
		return;
	for (i = 0; i < FZ_NL_LINKS && slot < 0; i++)
		if (!nl->links[i].live)
			slot = i;
	if (slot < 0)
		return;
	for (i = 0; i < devs.n; i++) {
		if (strcmp(devs.d[i].name, want) || nl_kept(devs.d[i].index))
			continue;
		l = &nl->links[slot];
		nl_link_forget(l);
		l->made = true;
		l->live = true;
		l->index = devs.d[i].index;
		memcpy(l->name, want, sizeof(l->name));
		return;
	}
}

/*
 * A slot of the thread's links, -1 if none: a live one, or with @stale,
 * now and then one whose device is known to be gone (its index stale).
 */
static int nl_link_pick(struct fz_thread *t, bool stale)
{
	unsigned int s = fz_below(t, FZ_NL_LINKS), i;
	bool any = stale && fz_one_in(t, 4);

	for (i = 0; i < FZ_NL_LINKS; i++) {
		const struct fz_nl_link *l = &t->nl.links[(s + i) % FZ_NL_LINKS];

		if (l->made && (l->live || any))
			return (s + i) % FZ_NL_LINKS;
	}
	return -1;
}

/* A dummy slot of the thread's: a live one mostly, else any. */
static unsigned int nl_dummy_pick(struct fz_thread *t)
{
	unsigned int d = fz_below(t, FZ_NL_DUMMIES), i;

	if (fz_one_in(t, 4))
		return d;
	for (i = 0; i < FZ_NL_DUMMIES; i++)
		if (t->nl.dummy[(d + i) % FZ_NL_DUMMIES])
			return (d + i) % FZ_NL_DUMMIES;
	return d;
}

/* An index to name: one of the thread's links, a kept device's, any. */
static uint32_t nl_any_index(struct fz_thread *t)
{
	int s;

	switch (fz_below(t, 8)) {
	case 0:
	case 1:
	case 2:
	case 3:
		s = nl_link_pick(t, true);
		if (s >= 0)
			return t->nl.links[s].index;
		return fz_below(t, 64);
	case 4:
		return g.nl_keep[fz_below(t, g.nl_nkeep)];
	case 5:
		return fz_below(t, 64);
	default:
		return fz_u32(t);
	}
}

/* An MTU for a dummy (it takes any): the edges of IPv4, IPv6, RoCE, u32. */
static uint32_t nl_mtu(struct fz_thread *t)
{
	static const uint32_t mtus[] = {
		0, 1, 67, 68, 256, 1279, 1280, 1500, 4096, 4200, 9000, 65535, 65536,
	};

	return fz_below(t, 4) ? mtus[fz_below(t, ARRAY_SIZE(mtus))] : fz_u32(t);
}

/* An RTM request about the netdev @name; its flags change @change to @set. */
static void nl_rt_begin(struct fz_nl *nl, uint16_t type, uint16_t flags,
			const char *name, unsigned int change, unsigned int set)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC, .ifi_change = change, .ifi_flags = set,
	};

	/* ifi_index stays 0: a netdev is named, never numbered. */
	nl_begin(nl, type, NLM_F_REQUEST | NLM_F_ACK | flags);
	nl_raw(nl, &ifi, sizeof(ifi));
	nl_str(nl, IFLA_IFNAME, name);
}

/*
 * Make the thread's dummy @d, up or down, with an MTU if @mtu (under the
 * cap of all threads): 0 or -errno.
 */
static int nl_dummy_make(struct fz_thread *t, unsigned int d, bool up,
			 const uint32_t *mtu)
{
	struct fz_nl *nl = &t->nl;
	char name[IFNAMSIZ];
	bool counted = false;
	size_t at;
	int ret;

	nl_dummy_name(name, t->id, d);
	if (!nl->dummy[d]) {
		if (__atomic_add_fetch(&g.nl_dummies, 1, __ATOMIC_RELAXED) > FZ_NL_MAX_DUMMIES) {
			__atomic_sub_fetch(&g.nl_dummies, 1, __ATOMIC_RELAXED);
			fz_what(t, "dummies at the cap");
			return -EDQUOT;
		}
		counted = true;
	}
	nl_rt_begin(nl, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, name,
		    up ? IFF_UP : 0, up ? IFF_UP : 0);
	if (mtu)
		nl_u32(nl, IFLA_MTU, *mtu);
	at = nl->len;
	nl_attr(nl, IFLA_LINKINFO | NLA_F_NESTED, NULL, 0);
	nl_str(nl, IFLA_INFO_KIND, "dummy");
	((struct nlattr *)(nl->req + at))->nla_len = nl->len - at;
	ret = fz_res(nl_send(nl, nl->route, NULL, NULL));
	if (!ret && counted)
		nl->dummy[d] = true;
	else if (counted)
		__atomic_sub_fetch(&g.nl_dummies, 1, __ATOMIC_RELAXED);
	return ret;
}

/* RTM_DELLINK of the thread's dummy @d: its link goes with it. 0 or -errno. */
static int nl_dummy_remove(struct fz_thread *t, unsigned int d)
{
	struct fz_nl *nl = &t->nl;
	char name[IFNAMSIZ];
	int ret;

	nl_dummy_name(name, t->id, d);
	nl_rt_begin(nl, RTM_DELLINK, 0, name, 0, 0);
	ret = nl_send(nl, nl->route, NULL, NULL);
	/* Only this thread makes the name: gone either way. */
	if ((!ret || ret == -ENODEV) && nl->dummy[d]) {
		nl->dummy[d] = false;
		__atomic_sub_fetch(&g.nl_dummies, 1, __ATOMIC_RELAXED);
	}
	return ret;
}

/* RDMA_NLDEV_CMD_NEWLINK, each attribute given or not (NULL). */
static int nl_newlink(struct fz_thread *t, const char *name, size_t name_len,
		      const char *type, const char *ndev)
{
	struct fz_nl *nl = &t->nl;

	nl_begin(nl, FZ_NL_RDMA(RDMA_NLDEV_CMD_NEWLINK), NLM_F_REQUEST | NLM_F_ACK);
	if (name)
		nl_attr(nl, RDMA_NLDEV_ATTR_DEV_NAME, name, name_len + 1);
	if (type)
		nl_str(nl, RDMA_NLDEV_ATTR_LINK_TYPE, type);
	if (ndev)
		nl_str(nl, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
	return fz_res(nl_send(nl, nl->rdma, NULL, NULL));
}

/* RDMA_NLDEV_CMD_DELLINK of @index, which the caller has cleared. */
static int nl_dellink(struct fz_nl *nl, uint32_t index)
{
	nl_begin(nl, FZ_NL_RDMA(RDMA_NLDEV_CMD_DELLINK), NLM_F_REQUEST | NLM_F_ACK);
	nl_u32(nl, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	return nl_send(nl, nl->rdma, NULL, NULL);
}

/*
 * May the family delete device @index, which it did not find as its own?
 * Never one of those there before the run; one there now only if its name
 * is one of the family's; one that is not there, yes (the kernel must say
 * so). A GET tells, counted.
 */
static bool nl_may_delete(struct fz_thread *t, uint32_t index)
{
	struct fz_nl_devs devs;
	int ret;

	if (nl_kept(index))
		return false;
	ret = fz_res(nl_device(&t->nl, index, &devs));
	if (ret == -EINVAL && !devs.n)
		return true;
	return !ret && devs.n == 1 && devs.d[0].index == index &&
	       !strncmp(devs.d[0].name, "fzl", 3);
}

static void nl_dummy_add(struct fz_thread *t)
{
	unsigned int d = fz_below(t, FZ_NL_DUMMIES);
	bool up = fz_below(t, 4);
	bool set_mtu = fz_one_in(t, 4);
	uint32_t mtu = set_mtu ? nl_mtu(t) : 0;

	fz_what(t, up ? "up" : "down");
	nl_dummy_make(t, d, up, set_mtu ? &mtu : NULL);
}

/* The netdev going: ib_core and vhca must unregister the link on it. */
static void nl_dummy_del(struct fz_thread *t)
{
	fz_res(nl_dummy_remove(t, nl_dummy_pick(t)));
}

/* Up, down or a new MTU: the port of the link on it changes. */
static void nl_dummy_set(struct fz_thread *t)
{
	struct fz_nl *nl = &t->nl;
	char name[IFNAMSIZ];
	unsigned int k;

	/* Now and then another thread's (or no thread's) dummy. */
	if (fz_one_in(t, 4))
		nl_dummy_other(t, name);
	else
		nl_dummy_name(name, t->id, nl_dummy_pick(t));
	k = fz_below(t, 3);
	fz_what(t, k == 0 ? "up" : k == 1 ? "down" : "mtu");
	nl_rt_begin(nl, RTM_NEWLINK, 0, name, k < 2 ? IFF_UP : 0, k == 0 ? IFF_UP : 0);
	if (k == 2)
		nl_u32(nl, IFLA_MTU, nl_mtu(t));
	fz_res(nl_send(nl, nl->route, NULL, NULL));
}

/*
 * A vhca link: mostly a name of the thread's own on one of its dummies,
 * now and then a name or a netdev the kernel must refuse, another type,
 * an attribute missing. One that was made is found and kept.
 */
static void nl_link_add(struct fz_thread *t)
{
	static const char *const types[] = {
		"VHCA", "vhc", "", "vhcavhcavhcavhcavhca",
	};
	char name[IB_DEVICE_NAME_MAX + 16], type[IFNAMSIZ], ndev[IFNAMSIZ];
	unsigned int s = fz_below(t, FZ_NL_LINKS), k;
	bool own = false, no_name, no_type, no_ndev = false;
	size_t name_len, len = 0;

	k = fz_below(t, 16);
	if (k < 9) {
		own = true;
		nl_link_name(name, t->id, s);
	} else if (k == 9) {
		fz_what(t, "random name");
		len = 1 + fz_below(t, IB_DEVICE_NAME_MAX - 1);
		fz_fill(t, name, len);	/* a NUL in it ends the name there */
		name[len] = '\0';
	} else if (k == 10) {
		fz_what(t, "empty name");
		name[0] = '\0';
	} else if (k == 11) {
		/* 63 fits, 64 is cut to 63, longer ones are refused. */
		fz_what(t, "long name");
		len = IB_DEVICE_NAME_MAX - 1 + fz_below(t, 8);
		memset(name, 'y', len);
		memcpy(name, "fzl", 3);
		name[len] = '\0';
	} else if (k == 12) {
		fz_what(t, "name with %");
		snprintf(name, sizeof(name), "fzl%u_%%d", t->id);
	} else if (k == 13) {
		fz_what(t, "taken name");
		snprintf(name, sizeof(name), "%s", g.nl_keep_name[fz_below(t, g.nl_nkeep)]);
	} else if (k == 14) {
		fz_what(t, "other thread's name");
		nl_link_name(name, fz_below(t, FZ_NL_THREADS), s);
	} else {
		fz_what(t, "name with /");
		snprintf(name, sizeof(name), "fzl%u/%u", t->id, s);
	}
	name_len = k == 9 ? len : strlen(name);

	if (fz_below(t, 16)) {
		strcpy(type, "vhca");
	} else if (fz_below(t, 4)) {
		/* No such type: ib_core asks for module rdma-link-TYPE first. */
		snprintf(type, sizeof(type), "%s", types[fz_below(t, ARRAY_SIZE(types))]);
	} else {
		fz_fill(t, type, sizeof(type) - 1);
		type[sizeof(type) - 1] = '\0';
	}

	k = fz_below(t, 16);
	if (k < 10)
		nl_dummy_name(ndev, t->id, nl_dummy_pick(t));
	else if (k < 13)
		nl_dummy_other(t, ndev);
	else if (k == 13)
		strcpy(ndev, "lo");
	else if (k == 14)
		snprintf(ndev, sizeof(ndev), "fzq%u", (unsigned int)fz_below(t, 1000));
	else
		no_ndev = true;

	no_name = fz_one_in(t, 32);
	no_type = fz_one_in(t, 32);
	if (nl_newlink(t, no_name ? NULL : name, name_len, no_type ? NULL : type,
		       no_ndev ? NULL : ndev))
		return;
	nl_adopt(t, own ? (int)s : -1, name);
}

/*
 * DELLINK: of one of the thread's links (or its stale index), of a random
 * index a GET cleared, or, now and then, of a device there before the run,
 * which the same check must refuse.
 */
static void nl_link_del(struct fz_thread *t)
{
	struct fz_nl *nl = &t->nl;
	unsigned int k = fz_below(t, 10);
	uint32_t index;
	int s, ret;

	if (k < 6) {
		s = nl_link_pick(t, true);
		if (s < 0)
			return;
		fz_what(t, nl->links[s].live ? "own" : "own stale");
		index = nl->links[s].index;
		if (nl_kept(index))
			return;
		ret = fz_res(nl_dellink(nl, index));
		if (!ret || ret == -EINVAL)
			nl_link_forget(&nl->links[s]);
		return;
	}
	if (k < 9) {
		fz_what(t, "random index");
		index = fz_one_in(t, 2) ? fz_below(t, 64) : fz_u32(t);
	} else {
		fz_what(t, "kept index");
		index = g.nl_keep[fz_below(t, g.nl_nkeep)];
	}
	if (!nl_may_delete(t, index)) {
		fz_what(t, "refused");
		return;
	}
	fz_res(nl_dellink(nl, index));
}

/* Read-only: GET, PORT_GET, RES_GET of an index, their dumps, SYS_GET. */
static void nl_get(struct fz_thread *t)
{
	static const uint16_t cmds[] = {
		RDMA_NLDEV_CMD_GET, RDMA_NLDEV_CMD_PORT_GET, RDMA_NLDEV_CMD_RES_GET,
		RDMA_NLDEV_CMD_SYS_GET,
	};
	struct fz_nl *nl = &t->nl;
	uint16_t cmd = cmds[fz_below(t, ARRAY_SIZE(cmds))];
	bool dump = fz_one_in(t, 2);

	fz_what(t, dump ? "dump" : "get");
	nl_begin(nl, FZ_NL_RDMA(cmd),
		 NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0));
	/* PORT_GET's dump is of one device's ports. */
	if (cmd != RDMA_NLDEV_CMD_SYS_GET &&
	    (!dump || cmd == RDMA_NLDEV_CMD_PORT_GET || fz_one_in(t, 4)))
		nl_u32(nl, RDMA_NLDEV_ATTR_DEV_INDEX, nl_any_index(t));
	if (cmd == RDMA_NLDEV_CMD_PORT_GET && !dump)
		nl_u32(nl, RDMA_NLDEV_ATTR_PORT_INDEX, fz_below(t, 4) ? 1 : fz_u32(t));
	fz_res(nl_send(nl, nl->rdma, NULL, NULL));
}

/*
 * Malformed requests. Whatever the kernel makes of their bytes, they can
 * name only what the family may touch: every string in them is one of
 * the thread's names (or a u32 read as one: a link on the thread's dummy,
 * which goes with it), every DELLINK index is 0xffffffff (ib_core's
 * indexes are 31 bits), and random bytes go only where no name or index
 * is read from: the payloads of unknown attributes and of commands
 * nothing handles.
 */
static void nl_garbage(struct fz_thread *t)
{
	static const uint32_t none = 0xffffffff;
	struct fz_nl *nl = &t->nl;
	unsigned int s = fz_below(t, FZ_NL_LINKS), k = fz_below(t, 9), i, n;
	char name[IB_DEVICE_NAME_MAX], ndev[IFNAMSIZ];
	uint8_t junk[64], ff[8];
	struct nlattr *a = NULL;
	size_t len;
	int ret;

	nl_link_name(name, t->id, s);
	nl_dummy_name(ndev, t->id, nl_dummy_pick(t));
	memset(ff, 0xff, sizeof(ff));
	if (k < 4) {
		nl_begin(nl, FZ_NL_RDMA(RDMA_NLDEV_CMD_NEWLINK), NLM_F_REQUEST | NLM_F_ACK);
		a = (struct nlattr *)(nl->req + nl->len);
		nl_str(nl, RDMA_NLDEV_ATTR_DEV_NAME, name);
		nl_str(nl, RDMA_NLDEV_ATTR_LINK_TYPE, "vhca");
		nl_str(nl, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
		/* Which of the three attributes goes wrong. */
		for (i = fz_below(t, 3); i; i--)
			a = (struct nlattr *)((uint8_t *)a + NLA_ALIGN(a->nla_len));
	}
	switch (k) {
	case 0:
		fz_what(t, "newlink attr cut");
		a->nla_len = fz_below(t, a->nla_len);
		break;
	case 1:
		fz_what(t, "newlink attr long");
		a->nla_len = fz_one_in(t, 4) ? 0xffff : a->nla_len + 1 + fz_below(t, 64);
		break;
	case 2:
		fz_what(t, "newlink unknown attrs");
		for (n = 1 + fz_below(t, 4); n; n--) {
			static const uint16_t types[] = {
				0, RDMA_NLDEV_ATTR_MAX, (uint16_t)NLA_TYPE_MASK,
				RDMA_NLDEV_ATTR_DEV_NAME | NLA_F_NESTED,
				RDMA_NLDEV_ATTR_NDEV_NAME | NLA_F_NET_BYTEORDER,
			};

			len = fz_below(t, sizeof(junk) + 1);
			fz_fill(t, junk, len);
			/* A known type with a flag is still read: no junk in it. */
			i = fz_below(t, ARRAY_SIZE(types) + 1);
			if (i == ARRAY_SIZE(types))
				nl_attr(nl, RDMA_NLDEV_ATTR_MAX + fz_below(t, 200), junk, len);
			else if (i >= 3)
				nl_attr(nl, types[i], i == 3 ? name : ndev,
					strlen(i == 3 ? name : ndev) + 1);
			else
				nl_attr(nl, types[i], junk, len);
		}
		break;
	case 3:
		fz_what(t, "newlink wrong types");
		switch (fz_below(t, 4)) {
		case 0:	/* a name without its NUL, last of its kind wins */
			nl_attr(nl, RDMA_NLDEV_ATTR_DEV_NAME, name, strlen(name));
			break;
		case 1:
			nl_attr(nl, RDMA_NLDEV_ATTR_LINK_TYPE, NULL, 0);
			break;
		case 2:
			nl_attr(nl, RDMA_NLDEV_ATTR_NDEV_NAME, ndev, strlen(ndev));
			break;
		default:
			/* A u32 as the last name: a name of one byte (x86). */
			nl_u32(nl, RDMA_NLDEV_ATTR_DEV_NAME, s);
			name[0] = s;
			name[1] = '\0';
			break;
		}
		break;
	case 4:
		fz_what(t, "dellink malformed");
		nl_begin(nl, FZ_NL_RDMA(RDMA_NLDEV_CMD_DELLINK), NLM_F_REQUEST | NLM_F_ACK);
		for (n = 1 + fz_below(t, 3); n; n--) {
			uint16_t type = RDMA_NLDEV_ATTR_DEV_INDEX;

			len = fz_below(t, sizeof(ff) + 1);
			if (fz_one_in(t, 4))
				type |= NLA_F_NESTED;
			/*
			 * Cut, never longer: a length past the payload
			 * would read the next header as an index.
			 */
			nl_attr_len(nl, type, ff, len, fz_one_in(t, 4) ?
				    fz_below(t, NLA_HDRLEN + len + 1) : NLA_HDRLEN + len);
		}
		break;
	case 5:
		fz_what(t, "header");
		n = FZ_NL_RDMA(fz_one_in(t, 2) ? RDMA_NLDEV_CMD_GET : RDMA_NLDEV_CMD_NEWLINK);
		nl_begin(nl, n, fz_rand(t) & 0xffff);
		nl_u32(nl, RDMA_NLDEV_ATTR_DEV_INDEX, none);
		nl_str(nl, RDMA_NLDEV_ATTR_DEV_NAME, name);
		len = fz_below(t, 2) ? nl->len - fz_below(t, nl->len + 1) :
				       nl->len + 1 + fz_below(t, 64);
		((struct nlmsghdr *)nl->req)->nlmsg_len = len;
		fz_res(nl_talk(nl, nl->rdma, nl->len, NULL, NULL));
		return;
	case 6:
		fz_what(t, "no such command");
		if (fz_one_in(t, 2)) {
			/* nldev's ops end at RDMA_NLDEV_NUM_OPS */
			n = FZ_NL_RDMA(RDMA_NLDEV_NUM_OPS +
				       fz_below(t, 1024 - RDMA_NLDEV_NUM_OPS));
		} else {
			/* client 0 has no ops; clients end at RDMA_NL_NUM_CLIENTS */
			n = fz_one_in(t, 2) ? 0 : RDMA_NL_NUM_CLIENTS +
				fz_below(t, 64 - RDMA_NL_NUM_CLIENTS);
			n = n << 10 | fz_below(t, 1024);
		}
		nl_begin(nl, n, NLM_F_REQUEST | NLM_F_ACK |
			 (fz_one_in(t, 2) ? NLM_F_DUMP : 0));
		len = fz_below(t, sizeof(junk) + 1);
		fz_fill(t, junk, len);
		nl_raw(nl, junk, len);
		break;
	case 7:
		fz_what(t, "control type");
		nl_begin(nl, fz_below(t, NLMSG_MIN_TYPE), NLM_F_REQUEST | NLM_F_ACK);
		nl_u32(nl, RDMA_NLDEV_ATTR_DEV_INDEX, none);
		break;
	default:
		/* A GET and a second request in one datagram, its length wrong. */
		fz_what(t, "two requests");
		nl_begin(nl, FZ_NL_RDMA(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_ACK);
		nl_u32(nl, RDMA_NLDEV_ATTR_DEV_INDEX, nl_any_index(t));
		((struct nlmsghdr *)nl->req)->nlmsg_len = nl->len;
		len = nl->len;
		nl_raw(nl, NULL, NLMSG_HDRLEN);
		((struct nlmsghdr *)(nl->req + len))->nlmsg_type =
			FZ_NL_RDMA(fz_one_in(t, 2) ? RDMA_NLDEV_CMD_GET : RDMA_NLDEV_CMD_PORT_GET);
		((struct nlmsghdr *)(nl->req + len))->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		nl_u32(nl, RDMA_NLDEV_ATTR_DEV_INDEX, nl_any_index(t));
		((struct nlmsghdr *)(nl->req + len))->nlmsg_len =
			nl->len - len + fz_below(t, 8) - 4;
		fz_res(nl_talk(nl, nl->rdma, nl->len, NULL, NULL));
		return;
	}
	ret = fz_res(nl_send(nl, nl->rdma, NULL, NULL));
	/* A NEWLINK that went through all the same made a device to keep. */
	if (!ret && k < 4)
		nl_adopt(t, s, name);
}

/*
 * A /dev/mrcore_test file bound to one of the thread's links, with MRs
 * and a QP pair on it, held: when the link or its netdev goes, mrcore_test
 * must let go of all of it at once, and the file answer without it.
 */
static void nl_bind(struct fz_thread *t)
{
	struct mrct_set_device sd = {};
	struct mrct_qp_create qc = {};
	struct mrct_reg r = {};
	struct fz_nl_link *l;
	int s, fd;

	if (!(opt.families & (1U << FZ_F_CDEV)))
		return;
	s = nl_link_pick(t, false);
	if (s < 0)
		return;
	l = &t->nl.links[s];
	if (l->mrct_fd < 0) {
		fz_what(t, "bind");
		fd = open("/dev/" MRCT_DEV_NAME, O_RDWR | O_CLOEXEC);
		if (fz_sys(fd))
			return;
		snprintf(sd.name, sizeof(sd.name), "%s", l->name);
		if (fz_sys(ioctl(fd, MRCT_SET_DEVICE, &sd))) {
			close(fd);
			return;
		}
		l->mrct_fd = fd;
	} else {
		fz_what(t, "bound");
	}
	r.access = fz_access(t);
	r.pd = fz_below(t, MRCT_NUM_PDS);
	fz_range(t, r.access, &r.addr, &r.length);
	r.iova = r.addr;
	fz_sys(ioctl(l->mrct_fd, MRCT_REG, &r));
	if (fz_one_in(t, 2)) {
		qc.pd = fz_below(t, MRCT_NUM_PDS);
		qc.max_send_sge = 1;
		qc.max_recv_sge = 1;
		fz_sys(ioctl(l->mrct_fd, MRCT_QP_CREATE, &qc));
	}
}

/*
 * A link added on a dummy, then the dummy deleted at once: the device is
 * still being added, or just was, when its netdev goes.
 */
static void nl_churn(struct fz_thread *t)
{
	unsigned int d = fz_below(t, FZ_NL_DUMMIES), s = fz_below(t, FZ_NL_LINKS);
	char name[IB_DEVICE_NAME_MAX], ndev[IFNAMSIZ];
	bool adopt = fz_one_in(t, 2);

	if (!t->nl.dummy[d] && nl_dummy_make(t, d, fz_one_in(t, 2), NULL))
		return;
	nl_link_name(name, t->id, s);
	nl_dummy_name(ndev, t->id, d);
	if (!nl_newlink(t, name, strlen(name), "vhca", ndev) && adopt)
		nl_adopt(t, s, name);
	fz_res(nl_dummy_remove(t, d));
}

static const struct fz_op fz_nl_ops[] = {
	{ "dummy_add", nl_dummy_add, 3 },
	{ "dummy_del", nl_dummy_del, 2 },
	{ "dummy_set", nl_dummy_set, 2 },
	{ "link_add", nl_link_add, 5 },
	{ "link_del", nl_link_del, 3 },
	{ "get", nl_get, 3 },
	{ "garbage", nl_garbage, 3 },
	{ "bind", nl_bind, 1 },
	{ "churn", nl_churn, 2 },
};

/* The two sockets and the buffers: 0 or -errno. */
static int nl_open_sockets(struct fz_nl *nl)
{
	nl->req = malloc(FZ_NL_REQ);
	nl->buf = malloc(FZ_NL_BUF);
	if (!nl->req || !nl->buf)
		return -ENOMEM;
	nl->rdma = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (nl->rdma < 0)
		return -errno;
	nl->route = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	return nl->route < 0 ? -errno : 0;
}

static void nl_close_sockets(struct fz_nl *nl)
{
	if (nl->rdma >= 0)
		close(nl->rdma);
	if (nl->route >= 0)
		close(nl->route);
	free(nl->req);
	free(nl->buf);
	nl->rdma = -1;
	nl->route = -1;
	nl->req = NULL;
	nl->buf = NULL;
}

/*
 * The thread's sockets; dummies of its names left by a run that was killed
 * go first (their links with them). 0 or -errno.
 */
static int nl_open(struct fz_thread *t)
{
	struct fz_nl *nl = &t->nl;
	unsigned int i;
	int ret;

	for (i = 0; i < FZ_NL_LINKS; i++)
		nl->links[i].mrct_fd = -1;
	ret = nl_open_sockets(nl);
	if (ret)
		return ret;
	for (i = 0; i < FZ_NL_DUMMIES; i++)
		nl_dummy_remove(t, i);
	return 0;
}

/* Every link of the thread's, then every dummy: nothing of theirs stays. */
static void nl_close(struct fz_thread *t)
{
	struct fz_nl *nl = &t->nl;
	unsigned int i;

	if (nl->rdma < 0)
		return;
	for (i = 0; i < FZ_NL_LINKS; i++) {
		struct fz_nl_link *l = &nl->links[i];

		if (l->live && !nl_kept(l->index))
			nl_dellink(nl, l->index);
		nl_link_forget(l);
	}
	for (i = 0; i < FZ_NL_DUMMIES; i++)
		nl_dummy_remove(t, i);
	nl_close_sockets(nl);
}

/*
 * Can family f run? As root only (NEWLINK and DELLINK need CAP_NET_ADMIN),
 * and the devices there now, opt.dev among them, are kept in g.nl_keep:
 * the family never deletes those. NULL, or why not.
 */
static const char *nl_environment(void)
{
	struct fz_nl nl = { .rdma = -1, .route = -1 };
	struct fz_nl_devs devs;
	const char *why = NULL;
	unsigned int i;

	if (geteuid())
		return "not root";
	if (nl_open_sockets(&nl))
		why = "no netlink socket";
	else if (nl_devices(&nl, &devs))
		why = "no RDMA device dump";
	else if (devs.n >= FZ_NL_DEVS)
		why = "too many RDMA devices to keep";
	nl_close_sockets(&nl);
	if (why)
		return why;
	for (i = 0; i < devs.n; i++) {
		g.nl_keep[i] = devs.d[i].index;
		memcpy(g.nl_keep_name[i], devs.d[i].name, IB_DEVICE_NAME_MAX);
	}
	g.nl_nkeep = devs.n;
	for (i = 0; i < devs.n; i++)
		if (!strcmp(devs.d[i].name, opt.dev))
			return NULL;
	return "the device is not in the RDMA netlink dump";
}

/* --- contexts: open, close ------------------------------------------- */

/* The GID of port 1 our loopback connections use: IPv4-mapped if any. */
static void uv_find_gid(struct fz_uv *uv)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid g;
	int i;

	uv->gid_index = 0;
	for (i = 0; i < 16 && !ibv_query_gid(uv->ctx, FZ_PORT, i, &g); i++) {
		if (!g.global.subnet_prefix && !g.global.interface_id)
			continue;
		uv->gid = g;
		uv->gid_index = i;
		if (!memcmp(g.raw, v4, sizeof(v4)))
			return;
	}
}

static struct ibv_context *fz_open_dev(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * The thread's uverbs context: the device opened, its GID, libibverbs'
 * PD, and the canary registered read-only (remote read) on a PD of its
 * own. 0, or -errno.
 */
static int uv_open(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	struct ib_uverbs_alloc_pd pc = {};
	struct ib_uverbs_alloc_pd_resp pr = {};
	struct ib_uverbs_reg_mr rc = {
		.start = (uintptr_t)t->canary, .length = FZ_CANARY_LEN,
		.hca_va = (uintptr_t)t->canary, .access_flags = IBV_ACCESS_REMOTE_READ,
	};
	struct ib_uverbs_reg_mr_resp rr = {};
	unsigned int i;
	int ret;

	memset(uv, 0, sizeof(*uv));
	uv->fd = -1;
	for (i = 0; i < FZ_UQPS; i++) {
		uv->qps[i].peer = -1;
		uv->qps[i].cq = -1;
	}
	pthread_rwlock_rdlock(&g.map_lock);
	uv->ctx = fz_open_dev(opt.dev);
	if (uv->ctx)
		uv->lpd = ibv_alloc_pd(uv->ctx);
	pthread_rwlock_unlock(&g.map_lock);
	if (!uv->ctx)
		return -ENODEV;
	if (!uv->lpd) {
		/* libibverbs' calls all need its PD: no context without it. */
		ibv_close_device(uv->ctx);
		uv->ctx = NULL;
		return -ENOMEM;
	}
	uv->fd = uv->ctx->cmd_fd;
	uv_find_gid(uv);
	t->exact = true;
	ret = uv_cmd(t, IB_USER_VERBS_CMD_ALLOC_PD, &pc, sizeof(pc), &pr, sizeof(pr));
	if (!ret) {
		uv->canary_pd = pr.pd_handle;
		rc.pd_handle = pr.pd_handle;
		ret = uv_cmd(t, IB_USER_VERBS_CMD_REG_MR, &rc, sizeof(rc), &rr, sizeof(rr));
	}
	t->exact = false;
	if (ret)
		return ret;
	uv->canary_h = rr.mr_handle;
	fz_key_add(t, rr.lkey);
	fz_key_add(t, rr.rkey);
	return 0;
}

/*
 * Close the context with whatever it holds (the kernel destroys it all);
 * libibverbs' objects first, as its own memory goes with them. The rings
 * and MR_ALLOC mappings are unmapped after: their pages outlive the
 * objects until then.
 */
static void uv_close(struct fz_thread *t)
{
	struct fz_uv *uv = &t->uv;
	unsigned int i;

	if (!uv->ctx)
		return;
	lib_pair_destroy(uv);
	for (i = 0; i < FZ_LMRS; i++)
		if (uv->lmr[i])
			ibv_dereg_mr(uv->lmr[i]);
	for (i = 0; i < ARRAY_SIZE(uv->lmw); i++)
		if (uv->lmw[i])
			ibv_dealloc_mw(uv->lmw[i]);
	if (uv->lpd)
		ibv_dealloc_pd(uv->lpd);
	ibv_close_device(uv->ctx);
	uv->ctx = NULL;
	for (i = 0; i < FZ_UCQS; i++)
		fz_ring_unmap(&uv->cqs[i].r);
	for (i = 0; i < FZ_UQPS; i++) {
		fz_ring_unmap(&uv->qps[i].sq);
		fz_ring_unmap(&uv->qps[i].rq);
	}
	for (i = 0; i < FZ_USRQS; i++)
		fz_ring_unmap(&uv->srqs[i].r);
	for (i = 0; i < uv->allocs.n; i++)
		munmap((void *)(uintptr_t)uv->allocs.o[i].iova, uv->allocs.o[i].len);
	memset(uv, 0, sizeof(*uv));
	uv->fd = -1;
}

static void uv_reopen(struct fz_thread *t)
{
	uv_close(t);
	fz_res(uv_open(t));
}

static const struct fz_op fz_uv_ops[] = {
	{ "reopen", uv_reopen, 1 },
	{ "alloc_pd", uv_alloc_pd, 2 },
	{ "reg_mr", uv_reg_mr, 8 },
	{ "rereg_mr", uv_rereg_mr, 4 },
	{ "alloc_mw", uv_alloc_mw, 2 },
	{ "free", uv_free, 5 },
	{ "create_cq", uv_create_cq, 2 },
	{ "resize_cq", uv_resize_cq, 1 },
	{ "destroy_cq", uv_destroy_cq, 1 },
	{ "notify_cq", uv_notify_cq, 1 },
	{ "create_qp", uv_create_qp, 3 },
	{ "modify_qp", uv_modify_qp, 4 },
	{ "query_qp", uv_query_qp, 1 },
	{ "destroy_qp", uv_destroy_qp, 1 },
	{ "srq", uv_srq, 2 },
	{ "create_ah", uv_create_ah, 1 },
	{ "query", uv_query, 1 },
	{ "advise_mr", uv_advise_mr, 3 },
	{ "reg_dmabuf_mr", uv_reg_dmabuf_mr, 1 },
	{ "garbage_write", uv_garbage_write, 2 },
	{ "garbage_ioctl", uv_garbage_ioctl, 2 },
	{ "lib_reg", lib_reg, 3 },
	{ "lib_pair", lib_pair, 1 },
	{ "lib_post", lib_post, 5 },
	{ "lib_bind", lib_bind, 2 },
	{ "lib_poll", lib_poll, 2 },
};

static const struct fz_family fz_families[FZ_NFAM] = {
	[FZ_F_CDEV] = { "cdev", 'a', fz_cd_ops, ARRAY_SIZE(fz_cd_ops), 30 },
	[FZ_F_UVERBS] = { "uverbs", 'b', fz_uv_ops, ARRAY_SIZE(fz_uv_ops), 25 },
	[FZ_F_METHODS] = { "methods", 'c', fz_mt_ops, ARRAY_SIZE(fz_mt_ops), 10 },
	[FZ_F_RINGS] = { "rings", 'd', fz_rg_ops, ARRAY_SIZE(fz_rg_ops), 20 },
	[FZ_F_MEMORY] = { "memory", 'e', fz_mm_ops, ARRAY_SIZE(fz_mm_ops), 15 },
	[FZ_F_NETLINK] = { "netlink", 'f', fz_nl_ops, ARRAY_SIZE(fz_nl_ops), 6 },
};

static_assert(ARRAY_SIZE(fz_cd_ops) <= FZ_MAX_OPS, "FZ_MAX_OPS");
static_assert(ARRAY_SIZE(fz_uv_ops) <= FZ_MAX_OPS, "FZ_MAX_OPS");
static_assert(ARRAY_SIZE(fz_mt_ops) <= FZ_MAX_OPS, "FZ_MAX_OPS");
static_assert(ARRAY_SIZE(fz_rg_ops) <= FZ_MAX_OPS, "FZ_MAX_OPS");
static_assert(ARRAY_SIZE(fz_mm_ops) <= FZ_MAX_OPS, "FZ_MAX_OPS");
static_assert(ARRAY_SIZE(fz_nl_ops) <= FZ_MAX_OPS, "FZ_MAX_OPS");

/* --- the canary ------------------------------------------------------ */

static uint64_t fz_canary_seed(const struct fz_thread *t)
{
	return (uint64_t)t->id << 32 | t->canary_gen;
}

/*
 * The canary's bytes are what the CPU last wrote; every FZ_CANARY_EVERY
 * execs (and at the end, @device) the CPU writes a new generation and the
 * device must read exactly that through the canary MR. False, and the
 * run failed, when either differs.
 */
static bool fz_canary_check(struct fz_thread *t, bool device)
{
	uint8_t *want = t->check, *got = t->check + FZ_CANARY_LEN;
	struct mrct_xfer x = {
		.iova = (uintptr_t)t->canary, .length = FZ_CANARY_LEN,
		.ptr = (uintptr_t)got, .handle = t->cd.canary_h,
	};
	size_t i;

	fz_pattern(want, FZ_CANARY_LEN, fz_canary_seed(t));
	if (memcmp(want, t->canary, FZ_CANARY_LEN)) {
		for (i = 0; want[i] == t->canary[i]; i++)
			;
		fz_fail(t, "canary changed at byte %zu (%#x, not %#x): nothing writes it",
			i, t->canary[i], want[i]);
		return false;
	}
	if (!device || !t->cd.canary_h)
		return true;
	t->canary_gen++;
	fz_pattern(want, FZ_CANARY_LEN, fz_canary_seed(t));
	memcpy(t->canary, want, FZ_CANARY_LEN);
	/* An MR the fuzz has deregistered (a wild handle) is no failure. */
	if (fz_sys(ioctl(t->cd.fd, MRCT_DEV_READ, &x)))
		return true;
	if (!memcmp(want, got, FZ_CANARY_LEN))
		return true;
	for (i = 0; want[i] == got[i]; i++)
		;
	fz_fail(t, "the device read byte %zu of the canary MR as %#x, the CPU wrote %#x",
		i, got[i], want[i]);
	return false;
}

/* --- execs ----------------------------------------------------------- */

static unsigned int fz_pick_family(struct fz_thread *t)
{
	unsigned int i, total = 0, x;

	for (i = 0; i < FZ_NFAM; i++)
		if (opt.families & (1U << i))
			total += fz_families[i].weight;
	x = fz_below(t, total);
	for (i = 0; i < FZ_NFAM; i++) {
		if (!(opt.families & (1U << i)))
			continue;
		if (x < fz_families[i].weight)
			break;
		x -= fz_families[i].weight;
	}
	return i;
}

static unsigned int fz_pick_op(struct fz_thread *t, const struct fz_family *f)
{
	unsigned int i, total = 0, x;

	for (i = 0; i < f->nops; i++)
		total += f->ops[i].weight;
	x = fz_below(t, total);
	for (i = 0; i < f->nops - 1; i++) {
		if (x < f->ops[i].weight)
			break;
		x -= f->ops[i].weight;
	}
	return i;
}

static void fz_run_exec(struct fz_thread *t, const struct fz_input *in)
{
	const struct fz_family *fam;
	unsigned int f, op;
	uint64_t start;
	char line[256];

	t->r = (struct fz_rng){
		.s = in->seed,
		.m = in->mut,
		.flip = in->mut ? fz_flips[in->mut & 3] : 0,
	};
	f = fz_pick_family(t);
	fam = &fz_families[f];
	op = fz_pick_op(t, fam);
	fz_ring_begin(t, in, f, op);
	if (opt.verbose) {
		fz_rec_line(t->cur, line, sizeof(line));
		fz_log("fuzz: %s\n", line);
	}
	fz_kcov_reset(t);
	start = fz_now_ns();
	/* A context the fuzz closed and could not open again: try again. */
	if (f != FZ_F_CDEV && f != FZ_F_NETLINK && !t->uv.ctx)
		fz_res(uv_open(t));
	else
		fam->ops[op].fn(t);
	__atomic_fetch_add(&g.op_n[f][op], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g.op_ns[f][op], fz_now_ns() - start, __ATOMIC_RELAXED);
	if (fz_kcov_collect(t) && !opt.replay) {
		t->new_inputs++;
		fz_corpus_add(in, f, op);
	}
	fz_ring_end(t);
	__atomic_fetch_add(&g.done, 1, __ATOMIC_RELAXED);
}

static bool fz_should_stop(struct fz_thread *t)
{
	if (__atomic_load_n(&g.stop, __ATOMIC_RELAXED))
		return true;
	if (opt.replay)
		return t->exec > opt.replay_exec;
	if (g.deadline_ns && fz_now_ns() >= g.deadline_ns)
		return true;
	return opt.execs && __atomic_fetch_add(&g.claimed, 1, __ATOMIC_RELAXED) >= opt.execs;
}

static void *fz_worker(void *arg)
{
	struct fz_thread *t = arg;
	struct fz_input in;

	fz_kcov_open(t);
	for (t->exec = 0; !fz_should_stop(t); t->exec++) {
		fz_next_input(t, &in);
		fz_run_exec(t, &in);
		if (!fz_canary_check(t, t->exec % FZ_CANARY_EVERY == FZ_CANARY_EVERY - 1))
			goto out;	/* t->exec: the exec after which it failed */
	}
	if (t->exec)
		t->exec--;	/* the last exec run, for a reproducer */
out:
	fz_kcov_close(t);
	return NULL;
}

static int fz_workers_done;

/*
 * Every FZ_PROGRESS_S seconds, a line of how far the run is (the rate
 * overall, and "now": over the last FZ_PROGRESS_S seconds): a long run
 * stopped from outside still says how many execs it made, and a rate
 * that falls as the run goes on shows.
 */
static void fz_progress(uint64_t *last_ns, uint64_t *last_done)
{
	uint64_t now = fz_now_ns(), done, pcs, kept;
	double all, lap;

	if (now - *last_ns < FZ_PROGRESS_S * 1000000000ULL)
		return;
	done = __atomic_load_n(&g.done, __ATOMIC_RELAXED);
	pcs = __atomic_load_n(&g.npcs, __ATOMIC_RELAXED);
	kept = __atomic_load_n(&g.ncorpus, __ATOMIC_RELAXED);
	all = (now - g.start_ns) / 1e9;
	lap = (now - *last_ns) / 1e9;
	fz_log("fuzz: progress %.0f s: execs %llu, %.1f/s, now %.1f/s, PCs %llu, kept %llu\n",
	       all, (unsigned long long)done, done / all, (done - *last_done) / lap,
	       (unsigned long long)pcs, (unsigned long long)kept);
	*last_ns = now;
	*last_done = done;
}

/*
 * Every exec gets opt.watchdog seconds. One that takes longer is stuck
 * (the kernel waits for ever, or longer than any of its own bounds):
 * print it and its reproducer, and abort.
 */
static void *fz_watchdog(void *arg)
{
	const uint64_t limit = opt.watchdog * 1000000000ULL;
	uint64_t last_ns = g.start_ns, last_done = 0;
	char line[256];
	unsigned int i;

	while (!__atomic_load_n(&fz_workers_done, __ATOMIC_ACQUIRE)) {
		sleep(1);
		if (!opt.replay)
			fz_progress(&last_ns, &last_done);
		for (i = 0; i < g.nthreads; i++) {
			struct fz_thread *t = &g.threads[i];
			struct fz_rec *rec = __atomic_load_n(&t->cur, __ATOMIC_ACQUIRE);
			uint64_t start;

			if (!rec || __atomic_load_n(&rec->done, __ATOMIC_ACQUIRE))
				continue;
			start = __atomic_load_n(&rec->start_ns, __ATOMIC_ACQUIRE);
			if (fz_now_ns() - start < limit)
				continue;
			fz_rec_line(rec, line, sizeof(line));
			fz_log("fuzz: WATCHDOG: %s has run for more than %u s\n", line,
			       opt.watchdog);
			fz_repro(t);
			abort();
		}
	}
	return NULL;
}

/* --- set-up, the summary, main ---------------------------------------- */

/*
 * Is @name a vhca device? It must answer vhca's QUERY method, which no
 * other device has. 0, -ENODEV (no such device), or -EPROTONOSUPPORT.
 */
static int fz_device_check(const char *name)
{
	struct vhca_uapi_caps caps = {};
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr;
	} c = {
		.hdr = {
			.length = sizeof(c),
			.object_id = UVERBS_OBJECT_DEVICE,
			.method_id = VHCA_IB_METHOD_QUERY,
			.num_attrs = 1,
			.driver_id = RDMA_DRIVER_RXE,
		},
		.attr = {
			.attr_id = VHCA_IB_ATTR_QUERY_RESP,
			.len = sizeof(caps),
			.flags = UVERBS_ATTR_F_MANDATORY,
			.data = (uintptr_t)&caps,
		},
	};
	struct ibv_context *ctx = fz_open_dev(name);
	int ret;

	if (!ctx)
		return -ENODEV;
	ret = ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &c.hdr) ? -errno : 0;
	ibv_close_device(ctx);
	if (ret)
		return -EPROTONOSUPPORT;
	printf("fuzz: %s: vhca ABI %u, %u key slots\n", name, caps.abi_version,
	       caps.max_mkeys);
	return 0;
}

/* A thread's memory and contexts, made before any thread runs. */
static int fz_thread_setup(struct fz_thread *t, unsigned int slot, unsigned int id)
{
	int ret;

	t->id = id;
	t->ring_base = slot * FZ_RING_SLOTS;
	t->stream = opt.seed ^ (0x9e3779b97f4a7c15ULL * (id + 1));
	fz_mix(&t->stream);
	t->cd.fd = -1;
	t->uv.fd = -1;
	t->nl.rdma = -1;
	t->nl.route = -1;
	t->kcov_fd = -1;
	ret = fz_mem_setup(t);
	if (ret)
		return ret;
	t->check = realloc(t->check, 2 * FZ_CANARY_LEN);
	if (!t->check)
		return -ENOMEM;
	fz_pattern(t->canary, FZ_CANARY_LEN, fz_canary_seed(t));
	if (opt.families & (1U << FZ_F_CDEV)) {
		t->exact = true;
		ret = cd_open(t, true);
		t->exact = false;
		if (ret)
			return ret;
	}
	ret = uv_open(t);
	if (ret)
		return ret;
	if (opt.families & (1U << FZ_F_NETLINK)) {
		ret = nl_open(t);
		if (ret)
			return ret;
	}
	if (opt.replay)
		fz_subst_load(t);
	else
		fz_subst_open(t);
	return 0;
}

/*
 * The end: a last canary check, then every context closed, and family f's
 * links and dummies deleted.
 */
static void fz_thread_teardown(struct fz_thread *t)
{
	unsigned int i;

	if (!t->failed)
		fz_canary_check(t, t->cd.bound);
	cd_release_holds(t, false);
	if (t->cd.fd >= 0)
		close(t->cd.fd);
	for (i = 0; i < t->cd.ndmabufs; i++)
		close(t->cd.dmabufs[i]);
	uv_close(t);
	nl_close(t);
	if (t->subst_fd >= 0)
		close(t->subst_fd);
}

static int fz_errno_cmp(const void *a, const void *b)
{
	uint64_t x = g.errnos[*(const int *)a], y = g.errnos[*(const int *)b];

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Operations (family * FZ_MAX_OPS + op) by time spent, most first. */
static int fz_op_time_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	uint64_t tx = g.op_ns[x / FZ_MAX_OPS][x % FZ_MAX_OPS];
	uint64_t ty = g.op_ns[y / FZ_MAX_OPS][y % FZ_MAX_OPS];

	return tx < ty ? 1 : tx > ty ? -1 : 0;
}

/*
 * Where the time went: each family's share of the time the threads spent
 * in execs, and the costliest operations, "family/op execs mean-ms share".
 */
static void fz_time_summary(void)
{
	int order[FZ_NFAM * FZ_MAX_OPS], i, f, op;
	uint64_t fam_ns[FZ_NFAM] = { 0 }, total = 0;
	char buf[1024];
	size_t n = 0;

	for (i = 0; i < FZ_NFAM * FZ_MAX_OPS; i++) {
		order[i] = i;
		fam_ns[i / FZ_MAX_OPS] += g.op_ns[i / FZ_MAX_OPS][i % FZ_MAX_OPS];
		total += g.op_ns[i / FZ_MAX_OPS][i % FZ_MAX_OPS];
	}
	if (!total)
		return;
	for (f = 0; f < FZ_NFAM; f++)
		n += snprintf(buf + n, sizeof(buf) - n, " %s %.1f%%",
			      fz_families[f].name, 100.0 * fam_ns[f] / total);
	fz_log("fuzz: time in execs by family:%s\n", buf);
	qsort(order, FZ_NFAM * FZ_MAX_OPS, sizeof(order[0]), fz_op_time_cmp);
	n = 0;
	for (i = 0; i < 6; i++) {
		f = order[i] / FZ_MAX_OPS;
		op = order[i] % FZ_MAX_OPS;
		if (!g.op_ns[f][op])
			break;
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s/%s %llu %.2f %.1f%%",
			      i ? ", " : "", fz_families[f].name,
			      fz_families[f].ops[op].name,
			      (unsigned long long)g.op_n[f][op],
			      g.op_ns[f][op] / 1e6 / g.op_n[f][op],
			      100.0 * g.op_ns[f][op] / total);
	}
	fz_log("fuzz: costliest operations (execs, mean ms, share): %s\n", buf);
}

/* The one line of the end. */
static void fz_summary(double secs)
{
	int order[FZ_MAX_ERRNO + 1], i;
	uint64_t inputs = 0;
	char buf[4096];
	size_t n = 0;

	for (i = 0; i < (int)g.nthreads; i++)
		inputs += g.threads[i].new_inputs;
	for (i = 0; i <= FZ_MAX_ERRNO; i++)
		order[i] = i;
	qsort(order, FZ_MAX_ERRNO + 1, sizeof(order[0]), fz_errno_cmp);
	for (i = 0; i <= FZ_MAX_ERRNO && g.errnos[order[i]] && n < sizeof(buf) - 64; i++) {
		const char *name = order[i] ? strerrorname_np(order[i]) : "ok";

		if (name)
			n += snprintf(buf + n, sizeof(buf) - n, " %s=%llu", name,
				      (unsigned long long)g.errnos[order[i]]);
		else
			n += snprintf(buf + n, sizeof(buf) - n, " E%d=%llu", order[i],
				      (unsigned long long)g.errnos[order[i]]);
	}
	if (g.err_other)
		snprintf(buf + n, sizeof(buf) - n, " other=%llu",
			 (unsigned long long)g.err_other);
	fz_time_summary();
	fz_log("fuzz: execs %llu, execs/s %.1f, new-coverage inputs %llu, PCs %llu, %s%s\n",
	       (unsigned long long)g.done, secs > 0 ? g.done / secs : 0.0,
	       (unsigned long long)inputs, (unsigned long long)g.npcs, "errors-by-errno",
	       n ? buf : " none");
}

static int fz_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* -p FILE: every PC reached, sorted, in hex, one a line. */
static int fz_write_pcs(const char *path)
{
	uint64_t *pcs, i, n = 0;
	FILE *f;

	pcs = malloc((g.npcs + 1) * sizeof(*pcs));
	f = fopen(path, "w");
	if (!pcs || !f) {
		free(pcs);
		if (f)
			fclose(f);
		return -errno;
	}
	for (i = 0; g.pcs && i < (1ULL << FZ_PCSET_BITS) && n <= g.npcs; i++)
		if (g.pcs[i])
			pcs[n++] = g.pcs[i];
	qsort(pcs, n, sizeof(*pcs), fz_u64_cmp);
	for (i = 0; i < n; i++)
		fprintf(f, "0x%016llx\n", (unsigned long long)pcs[i]);
	free(pcs);
	return fclose(f) ? -errno : 0;
}

static void fz_usage(FILE *f)
{
	fprintf(f,
		"usage: mrc_fuzz [-s SEED] [-t THREADS] [-n EXECS] [-d SECONDS] [-D DEV]\n"
		"                [-f FAMILIES] [-o DIR] [-c DIR] [-p FILE] [-w SECONDS] [-v]\n"
		"       mrc_fuzz -r SEED:THREAD:EXEC [-D DEV] [-f FAMILIES] [-o DIR] [-v]\n"
		"       mrc_fuzz -L DIR\n"
		"  -s SEED     the run's seed (default: the clock)\n"
		"  -t THREADS  threads (default: the CPUs online)\n"
		"  -n EXECS    stop after EXECS execs in all\n"
		"  -d SECONDS  stop after SECONDS (default 60 when neither -n nor -d)\n"
		"  -D DEV      the vhca device (default $MRC_UDEV, else vhca0)\n"
		"  -f FAMILIES letters of the families to run (default abcdef):\n"
		"              a /dev/mrcore_test, b uverbs, c vhca's methods,\n"
		"              d the rings, e memory races, f rdma netlink links\n"
		"              and the netdevs under them (as root)\n"
		"  -o DIR      the ring, substitutions and reproducers go there\n"
		"  -c DIR      the inputs that reached new code (KCOV)\n"
		"  -p FILE     every PC reached, in hex, at the end\n"
		"  -w SECONDS  the watchdog: the most one exec may take (default 300)\n"
		"  -v          print every exec as it starts\n"
		"  -r S:T:E    replay thread T's execs 0 to E of seed S, alone\n"
		"  -L DIR      print the last execs recorded in DIR/ring, and exit\n");
}

/* A number option, @min to @max: false when it is not one. */
static bool fz_number(const char *s, unsigned long long min,
		      unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && *s && !*end && *v >= min && *v <= max;
}

static unsigned int fz_parse_families(const char *s)
{
	unsigned int mask = 0;

	for (; *s; s++) {
		if (*s < 'a' || *s >= 'a' + FZ_NFAM)
			return 0;
		mask |= 1U << (*s - 'a');
	}
	return mask;
}

/* Options into opt: 0 to run, 1 to exit 0 (-h), 2 on an error, 3 for -L. */
static int fz_options(int argc, char **argv, const char **list_dir)
{
	unsigned long long seed, exec, v;
	bool seeded = false;
	int c;

	opt.argv0 = argv[0];
	while ((c = getopt(argc, argv, "s:t:n:d:D:f:o:c:p:w:vr:L:h")) != -1) {
		switch (c) {
		case 's':
			if (!fz_number(optarg, 0, ~0ULL, &v))
				return 2;
			opt.seed = v;
			seeded = true;
			break;
		case 't':
			if (!fz_number(optarg, 1, 256, &v))
				return 2;
			opt.threads = v;
			break;
		case 'n':
			if (!fz_number(optarg, 1, ~0ULL, &v))
				return 2;
			opt.execs = v;
			break;
		case 'd':
			if (!fz_number(optarg, 1, 1U << 30, &v))
				return 2;
			opt.seconds = v;
			break;
		case 'D':
			opt.dev = optarg;
			break;
		case 'f':
			opt.families = fz_parse_families(optarg);
			if (!opt.families)
				return 2;
			break;
		case 'o':
			opt.out_dir = optarg;
			break;
		case 'c':
			opt.corpus_dir = optarg;
			break;
		case 'p':
			opt.pc_file = optarg;
			break;
		case 'w':
			if (!fz_number(optarg, 1, 1U << 20, &v))
				return 2;
			opt.watchdog = v;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'r':
			if (sscanf(optarg, "%llu:%u:%llu", &seed, &opt.replay_thread,
				   &exec) != 3)
				return 2;
			opt.seed = seed;
			opt.replay_exec = exec;
			opt.replay = true;
			seeded = true;
			break;
		case 'L':
			*list_dir = optarg;
			return 3;
		case 'h':
			fz_usage(stdout);
			return 1;
		default:
			return 2;
		}
	}
	if (optind != argc)
		return 2;
	if (!opt.dev)
		opt.dev = getenv("MRC_UDEV") ? getenv("MRC_UDEV") : "vhca0";
	if (!seeded)
		opt.seed = (uint64_t)time(NULL);
	if (opt.replay)
		opt.threads = 1;
	if (!opt.threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		opt.threads = n < 1 ? 1 : n > 64 ? 64 : n;
	}
	if (!opt.execs && !opt.seconds && !opt.replay)
		opt.seconds = 60;
	return 0;
}

/* What this kernel and device offer: the families that can run, KCOV. */
static int fz_environment(void)
{
	char f[FZ_NFAM + 1];
	int ret, fd;

	ret = fz_device_check(opt.dev);
	if (ret == -ENODEV) {
		printf("fuzz: no vhca device %s\n", opt.dev);
		return 2;
	}
	if (ret) {
		printf("fuzz: %s is not a vhca device (no QUERY method)\n", opt.dev);
		return 2;
	}
	fd = open("/dev/" MRCT_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0 && (opt.families & (1U << FZ_F_CDEV))) {
		printf("fuzz: no /dev/%s (%s): family a is off\n", MRCT_DEV_NAME,
		       strerror(errno));
		opt.families &= ~(1U << FZ_F_CDEV);
	}
	if (fd >= 0)
		close(fd);
	if (opt.families & (1U << FZ_F_NETLINK)) {
		const char *why = nl_environment();

		if (why) {
			printf("fuzz: family f is off: %s\n", why);
			opt.families &= ~(1U << FZ_F_NETLINK);
		}
	}
	if (!opt.families) {
		printf("fuzz: no family left to run\n");
		return 2;
	}
	fz_family_letters(opt.families, f);
	printf("fuzz: families %s, %u threads, device %s\n", f, opt.threads, opt.dev);
	if (!opt.replay && !access(FZ_KCOV_PATH, R_OK | W_OK)) {
		g.pcs = calloc(1ULL << FZ_PCSET_BITS, sizeof(*g.pcs));
		printf("fuzz: KCOV %s\n", g.pcs ? "on" : "off: no memory for the PC set");
	} else if (!opt.replay) {
		printf("fuzz: no KCOV (%s: %s): no coverage feedback\n", FZ_KCOV_PATH,
		       strerror(errno));
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *list_dir = NULL;
	pthread_t wd;
	uint64_t start;
	unsigned int i;
	int ret;

	ret = fz_options(argc, argv, &list_dir);
	if (ret == 3) {
		opt.out_dir = list_dir;	/* the replay lines name it */
		return fz_ring_print(list_dir);
	}
	if (ret) {
		if (ret == 2)
			fz_usage(stderr);
		return ret == 1 ? 0 : 2;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("fuzz: seed %llu%s\n", (unsigned long long)opt.seed,
	       opt.replay ? " (replay)" : "");
	fflush(stdout);
	ret = fz_environment();
	if (ret)
		return ret;
	if (opt.out_dir)
		mkdir(opt.out_dir, 0755);
	fz_corpus_load();
	g.nthreads = opt.threads;
	g.threads = calloc(g.nthreads, sizeof(*g.threads));
	if (!g.threads || fz_arena_setup() || fz_ring_setup(g.nthreads)) {
		printf("fuzz: set-up failed: %s\n", strerror(errno));
		return 2;
	}
	for (i = 0; i < g.nthreads; i++) {
		ret = fz_thread_setup(&g.threads[i], i,
				      opt.replay ? opt.replay_thread : i);
		if (ret) {
			printf("fuzz: thread %u: set-up failed: %s\n", i, strerror(-ret));
			return 2;
		}
	}
	start = fz_now_ns();
	g.start_ns = start;
	if (opt.seconds)
		g.deadline_ns = start + opt.seconds * 1000000000ULL;
	pthread_create(&wd, NULL, fz_watchdog, NULL);
	for (i = 0; i < g.nthreads; i++)
		pthread_create(&g.threads[i].tid, NULL, fz_worker, &g.threads[i]);
	for (i = 0; i < g.nthreads; i++)
		pthread_join(g.threads[i].tid, NULL);
	__atomic_store_n(&fz_workers_done, 1, __ATOMIC_RELEASE);
	pthread_join(wd, NULL);
	/* Closing the contexts is bounded too: the alarm ends a stuck close. */
	alarm(opt.watchdog);
	for (i = 0; i < g.nthreads; i++)
		fz_thread_teardown(&g.threads[i]);
	alarm(0);
	fz_summary((fz_now_ns() - start) / 1e9);
	if (opt.pc_file && fz_write_pcs(opt.pc_file))
		fz_log("fuzz: cannot write %s: %s\n", opt.pc_file, strerror(errno));
	return g.failed ? 1 : 0;
}
