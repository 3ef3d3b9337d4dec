// SPDX-License-Identifier: GPL-2.0
/*
 * libvhca (libvhca/include/vhca/verbs.h) against a device, through its
 * public calls only: user_mrlib.sh runs this in the host root's chroot
 * (user_lib.sh), once over vhca0 and once over rxe0.
 *
 * On vhca every call of the header has its cases: one test per function,
 * flag and documented error. Traffic goes over a loopback RC pair of the
 * one device (two QPs connected to each other over its IPv4 RoCE v2 GID):
 * QP 0 reads and writes, from and into the pair's own "peer" buffer, the
 * MR or key under test, whose bytes are checked where they must land and
 * where they must not (the rest of each buffer stays as it was). Keys are
 * also used as the local SGE of a WRITE to the peer buffer.
 *
 * On any other device (rxe0) vhcav_is_vhca() is 0 and every call fails
 * with EOPNOTSUPP, creating nothing: the notvhca group. Each test decides
 * at its start whether it applies to the device (MRC_UDEV_TYPE, not the
 * library's own answer) and skips otherwise.
 *
 * A call that fails must leave nothing behind: such cases count the MRs
 * of this process in "rdma -j res show mr" before and after. ODP cases
 * read the MR's odp_faults and odp_prefetched_pages from vhca's driver
 * attributes in "rdma -j -dd res show mr".
 *
 * dma-buf exporters: /dev/udmabuf (CONFIG_UDMABUF) and mrcore_test's
 * static exporter (/dev/mrcore_test); a case needing one that is absent
 * skips.
 *
 * Environment: MRC_UDEV (device, default vhca0), MRC_UDEV_TYPE (vhca or
 * rxe; default from the name).
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/udmabuf.h>

#include <infiniband/verbs.h>
#include <vhca/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/vhca_user_ioctl.h>

#include "mrcore_test_uapi.h"
#include "mrct_util.h"
#include "user_util.h"

#define PAGE		4096UL
#define DEADLINE_S	60
#define T_S		300	/* per test: TCG, a debug kernel, rdma runs */

/* The pair's peer buffer: sources, READ destinations, gather targets. */
#define PEER_LEN	(128 * PAGE)
#define SRC_OFF		0
#define RD_OFF		(PEER_LEN / 4)
#define GATHER_OFF	(PEER_LEN / 2)
#define MAX_XFER	(PEER_LEN / 4)

#define LW		IBV_ACCESS_LOCAL_WRITE
#define RW		IBV_ACCESS_REMOTE_WRITE
#define RR		IBV_ACCESS_REMOTE_READ
#define ODP		IBV_ACCESS_ON_DEMAND
#define ACC		(LW | RW | RR)

/* IOVAs of the registrations that choose one (page aligned). */
#define IOVA_KEY	0x40000000ULL
#define IOVA_IOV	0x50000000ULL
#define IOVA_IND	0x60000000ULL
#define IOVA_DB		0x70000000ULL

/* The variant byte of the keys this program asks for. */
#define KEY_VARIANT	0x5a

/* A loopback RC pair: QP 0 is the requester, QP 1 answers it. */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	uint8_t *buf;		/* PEER_LEN bytes */
	struct ibv_mr *mr;	/* over buf, ACC, on pd */
	uint64_t wr_id;
};

struct rig {
	const char *name;
	bool vhca;		/* what the runner says the device is */
	struct ibv_context *ctx;
	int gid_index;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_pd *pd2;	/* made by rig_pd2() */
	struct pair p;		/* on pd, made by rig_pair() */
	struct pair p2;		/* on pd2, made by rig_pair2() */
	struct vhcav_caps caps;	/* filled by rig_caps() */
};

/* ---------------------------------------------------------------- */
/* Device, PDs, the pair                                            */

static void rig_setup(struct __test_metadata *_metadata, struct rig *r)
{
	const char *type = getenv("MRC_UDEV_TYPE");

	r->name = getenv("MRC_UDEV") ?: "vhca0";
	if (type) {
		ASSERT_TRUE(!strcmp(type, "vhca") || !strcmp(type, "rxe"))
			TH_LOG("MRC_UDEV_TYPE is %s: vhca or rxe", type);
		r->vhca = !strcmp(type, "vhca");
	} else {
		r->vhca = !strncmp(r->name, "vhca", 4);
	}
	r->gid_index = -1;
	r->ctx = uu_open(_metadata, r->name);
	r->pd = ibv_alloc_pd(r->ctx);
	ASSERT_NE(NULL, r->pd) TH_LOG("ibv_alloc_pd: %s", strerror(errno));
}

static void pair_down(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->buf)
		munmap(p->buf, PEER_LEN);
	memset(p, 0, sizeof(*p));
}

/* Best effort: a failed test leaves the rest to its process's exit. */
static void rig_teardown(struct rig *r)
{
	pair_down(&r->p);
	pair_down(&r->p2);
	if (r->pd2)
		ibv_dealloc_pd(r->pd2);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->ctx)
		ibv_close_device(r->ctx);
}

static void rig_pd2(struct __test_metadata *_metadata, struct rig *r)
{
	if (r->pd2)
		return;
	r->pd2 = ibv_alloc_pd(r->ctx);
	ASSERT_NE(NULL, r->pd2) TH_LOG("ibv_alloc_pd: %s", strerror(errno));
}

static void rig_caps(struct __test_metadata *_metadata, struct rig *r)
{
	int ret = vhcav_query(r->ctx, &r->caps);

	ASSERT_EQ(0, ret) TH_LOG("vhcav_query: %s", strerror(ret));
}

/* The port's IPv4-mapped RoCE v2 GID, which the loopback pair uses. */
static void rig_gid(struct __test_metadata *_metadata, struct rig *r)
{
	if (r->gid_index < 0)
		r->gid_index = uu_gid(_metadata, r->ctx, r->name, &r->gid);
}

/* RESET, INIT, RTR towards @dest, RTS: 0 or an errno value. */
static int qp_connect(struct rig *r, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	return uu_qp_to_rts(qp, ACC | IBV_ACCESS_REMOTE_ATOMIC, dest,
			    r->gid_index, &r->gid);
}

/* Both QPs of @p connected again: after a completion in error. */
static void pair_restart(struct __test_metadata *_metadata, struct rig *r,
			 struct pair *p)
{
	struct ibv_wc wc;
	int i, ret;

	while (ibv_poll_cq(p->cq, 1, &wc) > 0)
		;
	for (i = 0; i < 2; i++) {
		ret = qp_connect(r, p->qp[i], p->qp[!i]->qp_num);
		ASSERT_EQ(0, ret) TH_LOG("QP %u back to RTS: %s",
					 p->qp[i]->qp_num, strerror(ret));
	}
}

static uint8_t *map_buf(struct __test_metadata *_metadata, size_t len)
{
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, b) TH_LOG("mmap of %zu bytes: %s", len,
					strerror(errno));
	return b;
}

static void pair_up(struct __test_metadata *_metadata, struct rig *r,
		    struct ibv_pd *pd, struct pair *p)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	int i, ret;

	rig_gid(_metadata, r);
	p->pd = pd;
	p->cq = ibv_create_cq(r->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, p->cq) TH_LOG("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	for (i = 0; i < 2; i++) {
		p->qp[i] = ibv_create_qp(pd, &ia);
		ASSERT_NE(NULL, p->qp[i]) TH_LOG("ibv_create_qp: %s",
						 strerror(errno));
	}
	for (i = 0; i < 2; i++) {
		ret = qp_connect(r, p->qp[i], p->qp[!i]->qp_num);
		ASSERT_EQ(0, ret) TH_LOG("QP to RTS: %s", strerror(ret));
	}
	p->buf = map_buf(_metadata, PEER_LEN);
	p->mr = ibv_reg_mr(pd, p->buf, PEER_LEN, ACC);
	ASSERT_NE(NULL, p->mr) TH_LOG("ibv_reg_mr of the peer buffer: %s",
				      strerror(errno));
}

static void rig_pair(struct __test_metadata *_metadata, struct rig *r)
{
	pair_up(_metadata, r, r->pd, &r->p);
}

static void rig_pair2(struct __test_metadata *_metadata, struct rig *r)
{
	rig_pd2(_metadata, r);
	pair_up(_metadata, r, r->pd2, &r->p2);
}

/* ---------------------------------------------------------------- */
/* Traffic                                                          */

/*
 * Post @wr (signaled, its wr_id made unique) on QP 0 of @p and wait for
 * its completion: the status, or -1 when none came within the deadline.
 */
static int post_wait(struct __test_metadata *_metadata, struct pair *p,
		     struct ibv_send_wr *wr)
{
	uint64_t end = uu_now_ms() + DEADLINE_S * 1000ULL;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int n, ret;

	wr->wr_id = ++p->wr_id;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(p->qp[0], wr, &bad);
	ASSERT_EQ(0, ret) TH_LOG("ibv_post_send: %s", strerror(ret));
	while (uu_now_ms() < end) {
		n = ibv_poll_cq(p->cq, 1, &wc);
		ASSERT_LE(0, n) TH_LOG("ibv_poll_cq: %d", n);
		if (!n) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id == wr->wr_id)
			return wc.status;
	}
	return -1;
}

/*
 * One signaled @op on QP 0 of @p: @len bytes between @laddr (@lkey) and
 * @raddr (@rkey). The completion's status, or -1 when none came within
 * the deadline.
 */
static int rdma_op(struct __test_metadata *_metadata, struct pair *p,
		   enum ibv_wr_opcode op, uint64_t laddr, uint32_t lkey,
		   uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return post_wait(_metadata, p, &wr);
}

static const char *wc_name(int status)
{
	return status < 0 ? "no completion" : ibv_wc_status_str(status);
}

/* RDMA WRITE from the peer buffer at @off to (@raddr, @rkey). */
static int peer_write(struct __test_metadata *_metadata, struct pair *p,
		      size_t off, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	return rdma_op(_metadata, p, IBV_WR_RDMA_WRITE,
		       (uintptr_t)p->buf + off, p->mr->lkey, raddr, rkey, len);
}

/* RDMA READ of (@raddr, @rkey) into the peer buffer at @off. */
static int peer_read(struct __test_metadata *_metadata, struct pair *p,
		     size_t off, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	return rdma_op(_metadata, p, IBV_WR_RDMA_READ,
		       (uintptr_t)p->buf + off, p->mr->lkey, raddr, rkey, len);
}

#define EXPECT_WC(want, got, what) do {					\
	int __want = (want), __got = (got);				\
	ASSERT_EQ(__want, __got) TH_LOG("%s: %s, want %s", what,	\
					wc_name(__got), wc_name(__want)); \
} while (0)

/* A remote access through a key that must refuse it. */
#define EXPECT_WC_REFUSED(got, what) do {				\
	int __got = (got);						\
	ASSERT_TRUE(__got == IBV_WC_REM_ACCESS_ERR ||			\
		    __got == IBV_WC_LOC_PROT_ERR)			\
		TH_LOG("%s: %s, want REM_ACCESS_ERR (or LOC_PROT_ERR)",	\
		       what, wc_name(__got));				\
} while (0)

/* @len bytes at @got must be those at @want. */
static void same_bytes(struct __test_metadata *_metadata, const char *what,
		       const uint8_t *got, const uint8_t *want, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (got[i] != want[i])
			break;
	ASSERT_EQ(len, i) TH_LOG("%s: byte %zu of %zu is 0x%02x, want 0x%02x",
				 what, i, len, got[i], want[i]);
}

static uint8_t *dup_bytes(struct __test_metadata *_metadata,
			  const uint8_t *b, size_t len)
{
	uint8_t *c = malloc(len);

	ASSERT_NE(NULL, c);
	memcpy(c, b, len);
	return c;
}

/* ---------------------------------------------------------------- */
/* What the kernel lists: rdma res show mr                          */

/* The output of "rdma -j [-dd] res show mr", NUL-terminated, malloc'd. */
static char *rdma_mrs(struct __test_metadata *_metadata, bool driver)
{
	const char *cmd = driver ? "rdma -j -dd res show mr 2>&1" :
				   "rdma -j res show mr 2>&1";
	size_t len = 0, room = 65536;
	char *out = malloc(room);
	FILE *f;
	int st;
	char c;

	ASSERT_NE(NULL, out);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f) TH_LOG("popen %s: %s", cmd, strerror(errno));
	for (;;) {
		size_t n;

		if (room - len < 4096) {
			room *= 2;
			out = realloc(out, room);
			ASSERT_NE(NULL, out);
		}
		n = fread(out + len, 1, room - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	out[len] = '\0';
	st = pclose(f);
	ASSERT_EQ(0, st) TH_LOG("%s: status 0x%x: %.200s", cmd, st, out);
	/* No MR at all may print nothing. */
	c = out[strspn(out, "\n ")];
	ASSERT_TRUE(c == '[' || c == '\0')
		TH_LOG("%s: not a JSON array: %.200s", cmd, out);
	return out;
}

/* The next MR of the listing from @p on: where it starts, or NULL. */
static const char *mr_next(const char *p)
{
	return strstr(p, "\"ifindex\":");
}

/*
 * The number of field "@key" in the record [@rec, @end), a quoted hex
 * string or a plain number in @base (strtoull's "0x" is taken in base
 * 16): true when the record has it.
 */
static bool mr_field(const char *rec, const char *end, const char *key,
		     int base, unsigned long long *val)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(rec, pat);
	if (!p || (end && p >= end))
		return false;
	p += strlen(pat);
	p += strspn(p, " \"");
	*val = strtoull(p, NULL, base);
	return true;
}

/* How many MRs of this process the kernel lists. */
static int own_mrs(struct __test_metadata *_metadata)
{
	char *out = rdma_mrs(_metadata, false);
	unsigned long long pid;
	const char *rec, *end;
	int n = 0;

	for (rec = mr_next(out); rec; rec = end) {
		end = mr_next(rec + 1);
		if (mr_field(rec, end, "pid", 10, &pid) &&
		    pid == (unsigned long long)getpid())
			n++;
	}
	free(out);
	return n;
}

/*
 * Field @key (decimal) of this process's MR of lkey @lkey; -1 when the
 * listing has no such MR or field. @driver: vhca's driver attributes.
 */
static long long mr_attr(struct __test_metadata *_metadata, uint32_t lkey,
			 const char *key, bool driver)
{
	char *out = rdma_mrs(_metadata, driver);
	unsigned long long v, pid, ret = -1;
	const char *rec, *end;

	for (rec = mr_next(out); rec; rec = end) {
		end = mr_next(rec + 1);
		if (mr_field(rec, end, "lkey", 16, &v) && v == lkey &&
		    mr_field(rec, end, "pid", 10, &pid) &&
		    pid == (unsigned long long)getpid()) {
			char drv[64];

			/* rdma names a driver attribute drv_NAME. */
			snprintf(drv, sizeof(drv), "drv_%s", key);
			if (!mr_field(rec, end, key, 10, &ret) &&
			    !(driver && mr_field(rec, end, drv, 10, &ret)))
				ret = -1;
			break;
		}
	}
	free(out);
	return ret;
}

#define SAME_MRS(base, what) do {					\
	int __base = (base), __now = own_mrs(_metadata);		\
	ASSERT_EQ(__base, __now) TH_LOG("%s: this process has %d MRs, want %d", \
					what, __now, __base);		\
} while (0)

/* ---------------------------------------------------------------- */
/* Failures                                                         */

/*
 * What a registration that must fail gave: @mr NULL and @err (its errno)
 * @want or @want2. One that succeeded is deregistered before the case
 * fails.
 */
static void want_null(struct __test_metadata *_metadata, const char *what,
		      struct ibv_mr *mr, int err, int want, int want2)
{
	if (mr) {
		uint32_t lkey = mr->lkey;
		int ret = vhcav_dereg_mr(mr);

		ASSERT_TRUE(false) TH_LOG("%s: registered (lkey 0x%x; dereg %d), want %s",
					  what, lkey, ret, strerror(want));
	}
	ASSERT_TRUE(err == want || err == want2)
		TH_LOG("%s: %s, want %s", what, strerror(err), strerror(want));
}

/* A registration (@call) that must fail with @want (or @want2). */
#define WANT_NULL2(want, want2, what, call) do {			\
	struct ibv_mr *__mr;						\
	errno = 0;							\
	__mr = (call);							\
	want_null(_metadata, what, __mr, errno, want, want2);		\
} while (0)

/* @want2 -1: only @want. */
#define WANT_NULL(want, what, call) WANT_NULL2(want, -1, what, call)

/* A call returning an errno value that must be @want (or @want2). */
#define WANT_RET2(want, want2, call, what) do {				\
	int __ret, __want = (want);					\
	const char *__what = (what);					\
	errno = 0;							\
	__ret = (call);							\
	ASSERT_TRUE(__ret == __want || __ret == (want2))		\
		TH_LOG("%s: %s, want %s", __what,			\
		       __ret ? strerror(__ret) : "success",		\
		       __want ? strerror(__want) : "success");		\
	if (__ret)							\
		ASSERT_EQ(__ret, errno) TH_LOG("%s: returned %d, errno %d", \
					       __what, __ret, errno);	\
} while (0)

/* @want2 -1: only @want. */
#define WANT_RET(want, call, what) WANT_RET2(want, -1, call, what)

/* The public fields of an MR, to see that a refused call left them. */
struct mr_view {
	struct ibv_pd *pd;
	void *addr;
	size_t length;
	uint32_t lkey, rkey;
};

static void mr_view(const struct ibv_mr *mr, struct mr_view *v)
{
	v->pd = mr->pd;
	v->addr = mr->addr;
	v->length = mr->length;
	v->lkey = mr->lkey;
	v->rkey = mr->rkey;
}

static void same_view(struct __test_metadata *_metadata, const char *what,
		      const struct ibv_mr *mr, const struct mr_view *v)
{
	ASSERT_TRUE(mr->pd == v->pd && mr->addr == v->addr &&
		    mr->length == v->length && mr->lkey == v->lkey &&
		    mr->rkey == v->rkey)
		TH_LOG("%s: the MR changed: %p %zu bytes keys 0x%x/0x%x, was %p %zu 0x%x/0x%x",
		       what, mr->addr, mr->length, mr->lkey, mr->rkey,
		       v->addr, v->length, v->lkey, v->rkey);
}

/* ---------------------------------------------------------------- */
/* Layouts: where the bytes of a key land                           */

/* A buffer a key covers pieces of, and what it must hold. */
struct area {
	uint8_t *buf;
	uint8_t *want;
	size_t len;
};

/* A piece of a key: @len bytes at @off of area @a, in key order. */
struct piece {
	int a;
	size_t off, len;
};

static void area_make(struct __test_metadata *_metadata, struct area *ar,
		      size_t len, uint64_t seed)
{
	ar->buf = map_buf(_metadata, len);
	ar->len = len;
	mt_fill(ar->buf, len, seed);
	ar->want = dup_bytes(_metadata, ar->buf, len);
}

static void area_free(struct area *ar)
{
	munmap(ar->buf, ar->len);
	free(ar->want);
}

static size_t pieces_len(const struct piece *pc, int n)
{
	size_t t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += pc[i].len;
	return t;
}

/* Every area holds exactly what it must. */
static void areas_check(struct __test_metadata *_metadata, const char *what,
			const struct area *ar, int nar)
{
	char w[128];
	int i;

	for (i = 0; i < nar; i++) {
		snprintf(w, sizeof(w), "%s: area %d", what, i);
		same_bytes(_metadata, w, ar[i].buf, ar[i].want, ar[i].len);
	}
}

/*
 * Traffic through a key (@lkey, @rkey at @iova) laid over @pc: an RDMA
 * WRITE of the whole key lands piece by piece in the areas and nowhere
 * else; an RDMA READ of it returns the pieces in order; a WRITE with the
 * key as the local SGE gathers them into the peer buffer.
 */
static void layout_traffic(struct __test_metadata *_metadata, struct pair *p,
			   uint32_t lkey, uint32_t rkey,
			   uint64_t iova, struct area *ar, int nar,
			   const struct piece *pc, int n, uint64_t seed)
{
	size_t total = pieces_len(pc, n), pos;
	uint8_t *src = p->buf + SRC_OFF;
	int i;

	ASSERT_GE(MAX_XFER, total);
	mt_fill(src, total, seed);
	EXPECT_WC(IBV_WC_SUCCESS, peer_write(_metadata, p, SRC_OFF, iova, rkey,
					     total), "RDMA WRITE through the key");
	for (i = 0, pos = 0; i < n; pos += pc[i].len, i++)
		memcpy(ar[pc[i].a].want + pc[i].off, src + pos, pc[i].len);
	areas_check(_metadata, "after the RDMA WRITE", ar, nar);

	for (i = 0; i < nar; i++) {
		mt_fill(ar[i].buf, ar[i].len, seed + 1 + i);
		memcpy(ar[i].want, ar[i].buf, ar[i].len);
	}
	memset(p->buf + RD_OFF, 0, total);
	EXPECT_WC(IBV_WC_SUCCESS, peer_read(_metadata, p, RD_OFF, iova, rkey,
					    total), "RDMA READ through the key");
	for (i = 0, pos = 0; i < n; pos += pc[i].len, i++)
		same_bytes(_metadata, "RDMA READ: a piece", p->buf + RD_OFF + pos,
			   ar[pc[i].a].buf + pc[i].off, pc[i].len);

	memset(p->buf + GATHER_OFF, 0, total);
	EXPECT_WC(IBV_WC_SUCCESS,
		  rdma_op(_metadata, p, IBV_WR_RDMA_WRITE, iova, lkey,
			  (uintptr_t)p->buf + GATHER_OFF, p->mr->rkey, total),
		  "RDMA WRITE with the key as the local SGE");
	for (i = 0, pos = 0; i < n; pos += pc[i].len, i++)
		same_bytes(_metadata, "gathered through the lkey: a piece",
			   p->buf + GATHER_OFF + pos,
			   ar[pc[i].a].buf + pc[i].off, pc[i].len);
	areas_check(_metadata, "after the READ and the gather", ar, nar);
}

/* A plain MR over a whole area (ibv_reg_mr, iova = address). */
static struct ibv_mr *area_mr(struct __test_metadata *_metadata,
			      struct ibv_pd *pd, struct area *ar, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, ar->buf, ar->len, access);

	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

/* ---------------------------------------------------------------- */
/* Memory windows, keys, dma-bufs                                   */

/* A type 2 window over @len bytes at @addr of @mr, bound by QP 1's WR. */
static struct ibv_mw *bind_mw2(struct __test_metadata *_metadata,
			       struct pair *p, struct ibv_mr *mr, void *addr,
			       size_t len)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint64_t end = uu_now_ms() + DEADLINE_S * 1000ULL;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	int n, ret;

	mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw) TH_LOG("ibv_alloc_mw: %s", strerror(errno));
	wr.wr_id = ++p->wr_id;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = RW | RR;
	ret = ibv_post_send(p->qp[1], &wr, &bad);
	ASSERT_EQ(0, ret) TH_LOG("IBV_WR_BIND_MW: %s", strerror(ret));
	for (;;) {
		ASSERT_GT(end, uu_now_ms()) TH_LOG("no completion of the bind");
		n = ibv_poll_cq(p->cq, 1, &wc);
		ASSERT_LE(0, n);
		if (n && wc.wr_id == wr.wr_id)
			break;
		if (!n)
			usleep(1000);
	}
	EXPECT_WC(IBV_WC_SUCCESS, wc.status, "bind of the type 2 window");
	mw->rkey = wr.bind_mw.rkey;
	return mw;
}

/*
 * A requested key no MR has: an index from the top of the device's range
 * down (the device hands out low indices first), found by registering
 * with it and deregistering; the key is the MR's to ask for again.
 */
static uint32_t free_key(struct __test_metadata *_metadata, struct rig *r)
{
	uint32_t idx, tries, key;
	struct ibv_mr *mr;
	uint8_t *b;
	int ret;

	rig_caps(_metadata, r);
	ASSERT_LT(1, r->caps.max_mkeys);
	idx = r->caps.max_mkeys - 1;
	if (idx > 0xffffff)
		idx = 0xffffff;
	b = map_buf(_metadata, PAGE);
	for (tries = 0; tries < 256 && idx; tries++, idx--) {
		key = idx << 8 | KEY_VARIANT;
		mr = vhcav_reg_mr_key(r->pd, b, PAGE, (uintptr_t)b, LW, key);
		if (mr) {
			ASSERT_EQ(key, mr->lkey);
			ret = vhcav_dereg_mr(mr);
			ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s",
						 strerror(ret));
			munmap(b, PAGE);
			return key;
		}
		ASSERT_EQ(ENOKEY, errno) TH_LOG("key 0x%x: %s, want ENOKEY or success",
						key, strerror(errno));
	}
	ASSERT_TRUE(false) TH_LOG("no free key among the top 256 indices");
	return 0;
}

enum { DB_UDMABUF, DB_MRCT };

/* A dma-buf from one of the exporters, and the CPU's view of its bytes. */
struct dbuf {
	int kind;
	int dev;	/* /dev/udmabuf or /dev/mrcore_test */
	int fd;		/* the dma-buf */
	int memfd;	/* udmabuf: the memfd it is made of */
	uint8_t *map;	/* udmabuf: the memfd's mapping */
	size_t len;
};

static bool dbuf_have(int kind)
{
	return !access(kind == DB_UDMABUF ? "/dev/udmabuf" :
		       "/dev/" MRCT_DEV_NAME, R_OK | W_OK);
}

/*
 * The exporter of a case that any will do: udmabuf when there is one,
 * except under swiotlb=force, where 6.1's udmabuf never syncs the bounced
 * mapping it gives its importer; mrcore_test's exporter syncs it around
 * every CPU access.
 */
static int dbuf_pick(void)
{
	if (dbuf_have(DB_UDMABUF) &&
	    !(mt_swiotlb_forced() && dbuf_have(DB_MRCT)))
		return DB_UDMABUF;
	return DB_MRCT;
}

static void dbuf_make(struct __test_metadata *_metadata, struct dbuf *d,
		      int kind, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->len = len;
	d->memfd = -1;
	if (kind == DB_UDMABUF) {
		struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC,
					     .size = len };

		d->dev = open("/dev/udmabuf", O_RDWR);
		ASSERT_LE(0, d->dev) TH_LOG("/dev/udmabuf: %s", strerror(errno));
		d->memfd = memfd_create("user_mrlib", MFD_ALLOW_SEALING);
		ASSERT_LE(0, d->memfd) TH_LOG("memfd_create: %s", strerror(errno));
		ASSERT_EQ(0, ftruncate(d->memfd, len));
		ASSERT_EQ(0, fcntl(d->memfd, F_ADD_SEALS, F_SEAL_SHRINK));
		d->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			      d->memfd, 0);
		ASSERT_NE(MAP_FAILED, d->map);
		uc.memfd = d->memfd;
		d->fd = ioctl(d->dev, UDMABUF_CREATE, &uc);
		ASSERT_LE(0, d->fd) TH_LOG("UDMABUF_CREATE: %s", strerror(errno));
	} else {
		struct mrct_dmabuf_create c = { .size = len };
		int ret;

		d->dev = open("/dev/" MRCT_DEV_NAME, O_RDWR);
		ASSERT_LE(0, d->dev) TH_LOG("/dev/%s: %s", MRCT_DEV_NAME,
					    strerror(errno));
		ret = mt_ioctl(d->dev, MRCT_DMABUF_CREATE, &c);
		ASSERT_EQ(0, ret) TH_LOG("MRCT_DMABUF_CREATE: %s", strerror(-ret));
		d->fd = c.fd;
	}
}

/* The CPU reads @len bytes at @off of the buffer into @buf, or writes them. */
static void dbuf_rw(struct __test_metadata *_metadata, struct dbuf *d,
		    size_t off, void *buf, size_t len, bool write)
{
	struct mrct_dmabuf_rw rw = {
		.offset = off, .length = len, .ptr = (uintptr_t)buf,
		.fd = d->fd, .flags = write ? MRCT_DMABUF_RW_WRITE : 0,
	};
	int ret;

	if (d->kind == DB_UDMABUF) {
		if (write)
			memcpy(d->map + off, buf, len);
		else
			memcpy(buf, d->map + off, len);
		return;
	}
	ret = mt_ioctl(d->dev, MRCT_DMABUF_RW, &rw);
	ASSERT_EQ(0, ret) TH_LOG("MRCT_DMABUF_RW: %s", strerror(-ret));
}

/*
 * A FETCH_AND_ADD of 5 by the pair through @mr's rkey on the u64 at byte
 * 8 of @d (at IOVA_DB + 8): the old value comes back, the buffer holds the
 * sum, its neighbours unchanged.
 */
static void dbuf_fetch_add(struct __test_metadata *_metadata, struct rig *r,
			   struct dbuf *d, struct ibv_mr *mr)
{
	struct pair *p = &r->p;
	uint64_t was[3] = { 0x1111, 0x7000000000000001ULL, 0x3333 }, now[3];
	uint64_t *old = (uint64_t *)(p->buf + RD_OFF);
	struct ibv_sge sge = { .addr = (uintptr_t)old, .length = 8,
			       .lkey = p->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.wr.atomic = { .remote_addr = IOVA_DB + 8, .compare_add = 5,
			       .rkey = mr->rkey },
	};
	int st;

	dbuf_rw(_metadata, d, 0, was, sizeof(was), true);
	*old = 0;
	st = post_wait(_metadata, p, &wr);
	ASSERT_EQ(IBV_WC_SUCCESS, st) TH_LOG("FETCH_AND_ADD: %s", wc_name(st));
	EXPECT_EQ(was[1], *old);
	dbuf_rw(_metadata, d, 0, now, sizeof(now), false);
	EXPECT_EQ(was[0], now[0]);
	EXPECT_EQ(was[1] + 5, now[1]);
	EXPECT_EQ(was[2], now[2]);
}

static void dbuf_free(struct dbuf *d)
{
	if (d->map)
		munmap(d->map, d->len);
	if (d->memfd >= 0)
		close(d->memfd);
	close(d->fd);
	close(d->dev);
}

/*
 * A dma-buf MR over [@off, @off + @len) of a fresh @kind buffer: an RDMA
 * WRITE lands in the buffer (seen by the CPU) at the right place, an
 * RDMA READ returns what the CPU wrote there.
 */
static void dmabuf_case(struct __test_metadata *_metadata, struct rig *r,
			int kind)
{
	const size_t blen = 16 * PAGE, off = 4 * PAGE, len = 8 * PAGE;
	struct pair *p = &r->p;
	uint8_t *cpu, *was;
	struct ibv_mr *mr;
	struct dbuf d;
	int base, ret;

	rig_pair(_metadata, r);
	dbuf_make(_metadata, &d, kind, blen);
	cpu = malloc(blen);
	ASSERT_NE(NULL, cpu);
	mt_fill(cpu, blen, 40);
	dbuf_rw(_metadata, &d, 0, cpu, blen, true);
	was = dup_bytes(_metadata, cpu, blen);

	base = own_mrs(_metadata);
	mr = vhcav_reg_dmabuf_mr(r->pd, off, len, IOVA_DB, d.fd, ACC);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_dmabuf_mr: %s", strerror(errno));
	ASSERT_EQ(len, mr->length);
	ASSERT_EQ(r->pd, mr->pd);
	ASSERT_EQ(base + 1, own_mrs(_metadata));

	/* A WRITE into the middle: the CPU sees it at off + 100, only. */
	mt_fill(p->buf + SRC_OFF, 3 * PAGE, 41);
	EXPECT_WC(IBV_WC_SUCCESS, peer_write(_metadata, p, SRC_OFF,
					     IOVA_DB + 100, mr->rkey, 3 * PAGE),
		  "RDMA WRITE into the dma-buf MR");
	memcpy(was + off + 100, p->buf + SRC_OFF, 3 * PAGE);
	dbuf_rw(_metadata, &d, 0, cpu, blen, false);
	same_bytes(_metadata, "the dma-buf after the RDMA WRITE", cpu, was, blen);

	mt_fill(cpu, blen, 42);
	dbuf_rw(_metadata, &d, 0, cpu, blen, true);
	EXPECT_WC(IBV_WC_SUCCESS, peer_read(_metadata, p, RD_OFF, IOVA_DB,
					    mr->rkey, len),
		  "RDMA READ of the dma-buf MR");
	same_bytes(_metadata, "RDMA READ of the dma-buf MR", p->buf + RD_OFF,
		   cpu + off, len);

	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	SAME_MRS(base, "after vhcav_dereg_mr");
	dbuf_free(&d);
	free(cpu);
	free(was);
}

/* ---------------------------------------------------------------- */
/* query                                                            */

FIXTURE(query) {
	struct rig r;
};

FIXTURE_SETUP(query)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(query)
{
	rig_teardown(&self->r);
}

/* 1 on vhca, errno untouched. */
TEST_F_TIMEOUT(query, is_vhca, T_S)
{
	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	errno = 4321;
	ASSERT_EQ(1, vhcav_is_vhca(self->r.ctx));
	ASSERT_EQ(4321, errno);
}

/* The kernel module's ABI version and limits, as its UAPI header says. */
TEST_F_TIMEOUT(query, caps, T_S)
{
	struct vhcav_caps *c = &self->r.caps;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_caps(_metadata, &self->r);
	TH_LOG("abi %u max_iov %u max_ranges %u max_indirect_depth %u max_mkeys %u",
	       c->abi_version, c->max_iov, c->max_ranges,
	       c->max_indirect_depth, c->max_mkeys);
	ASSERT_EQ(VHCA_UAPI_ABI_VERSION, c->abi_version);
	ASSERT_EQ(VHCA_UAPI_MAX_IOV, c->max_iov);
	ASSERT_EQ(VHCA_UAPI_MAX_RANGES, c->max_ranges);
	ASSERT_LE(1, c->max_indirect_depth);
	ASSERT_LE(2, c->max_mkeys);
}

/* ---------------------------------------------------------------- */
/* notvhca: every call on another device                            */

FIXTURE(notvhca) {
	struct rig r;
};

FIXTURE_SETUP(notvhca)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(notvhca)
{
	rig_teardown(&self->r);
}

TEST_F_TIMEOUT(notvhca, is_vhca, T_S)
{
	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	errno = 4321;
	ASSERT_EQ(0, vhcav_is_vhca(self->r.ctx));
	ASSERT_EQ(4321, errno);
}

/* EOPNOTSUPP, and the caps are not written. */
TEST_F_TIMEOUT(notvhca, query, T_S)
{
	struct vhcav_caps caps, was;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	memset(&caps, 0xa5, sizeof(caps));
	was = caps;
	WANT_RET(EOPNOTSUPP, vhcav_query(self->r.ctx, &caps), "vhcav_query");
	ASSERT_EQ(0, memcmp(&caps, &was, sizeof(caps)));
}

/* The device's own MR: refused, unchanged, and still its to free. */
TEST_F_TIMEOUT(notvhca, rereg, T_S)
{
	struct rig *r = &self->r;
	struct area a;
	struct ibv_mr *mr;
	struct mr_view v;
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 1);
	mr = area_mr(_metadata, r->pd, &a, ACC);
	mr_view(mr, &v);
	base = own_mrs(_metadata);
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS,
					    NULL, NULL, 0, LW | RR),
		 "vhcav_rereg_mr (access)");
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					    NULL, a.buf, 2 * PAGE, 0),
		 "vhcav_rereg_mr (translation)");
	same_view(_metadata, "refused rereg", mr, &v);
	SAME_MRS(base, "after the refused reregs");
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
}

TEST_F_TIMEOUT(notvhca, advise, T_S)
{
	struct rig *r = &self->r;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct area a;
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 2);
	mr = area_mr(_metadata, r->pd, &a, ACC);
	sge.addr = (uintptr_t)a.buf;
	sge.length = a.len;
	sge.lkey = mr->lkey;
	base = own_mrs(_metadata);
	WANT_RET(EOPNOTSUPP, vhcav_advise_mr(r->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
					     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
		 "vhcav_advise_mr");
	SAME_MRS(base, "after vhcav_advise_mr");
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
}

/* The device is asked nothing: any descriptor will do (a memfd here). */
TEST_F_TIMEOUT(notvhca, reg_dmabuf, T_S)
{
	int base, fd;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	fd = memfd_create("user_mrlib", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 4 * PAGE));
	base = own_mrs(_metadata);
	WANT_NULL(EOPNOTSUPP, "vhcav_reg_dmabuf_mr",
		  vhcav_reg_dmabuf_mr(self->r.pd, 0, 4 * PAGE, IOVA_DB, fd, ACC));
	SAME_MRS(base, "after vhcav_reg_dmabuf_mr");
	close(fd);
}

TEST_F_TIMEOUT(notvhca, reg_mr_key, T_S)
{
	struct area a;
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 3);
	base = own_mrs(_metadata);
	WANT_NULL(EOPNOTSUPP, "vhcav_reg_mr_key (any key)",
		  vhcav_reg_mr_key(self->r.pd, a.buf, a.len, (uintptr_t)a.buf, ACC, 0));
	WANT_NULL(EOPNOTSUPP, "vhcav_reg_mr_key (a key)",
		  vhcav_reg_mr_key(self->r.pd, a.buf, a.len, (uintptr_t)a.buf, ACC,
				   0x100 | KEY_VARIANT));
	SAME_MRS(base, "after vhcav_reg_mr_key");
	area_free(&a);
}

TEST_F_TIMEOUT(notvhca, reg_mr_iov, T_S)
{
	struct iovec iov[2];
	struct area a;
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 4);
	iov[0].iov_base = a.buf;
	iov[0].iov_len = PAGE;
	iov[1].iov_base = a.buf + 2 * PAGE;
	iov[1].iov_len = PAGE;
	base = own_mrs(_metadata);
	WANT_NULL(EOPNOTSUPP, "vhcav_reg_mr_iov",
		  vhcav_reg_mr_iov(self->r.pd, iov, 2, IOVA_IOV, ACC, 0));
	SAME_MRS(base, "after vhcav_reg_mr_iov");
	area_free(&a);
}

TEST_F_TIMEOUT(notvhca, reg_indirect, T_S)
{
	struct vhcav_key_range rg[2];
	struct ibv_mr *in;
	struct area a;
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 5);
	in = area_mr(_metadata, self->r.pd, &a, ACC);
	rg[0] = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf, PAGE };
	rg[1] = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf + 2 * PAGE,
					  PAGE };
	base = own_mrs(_metadata);
	WANT_NULL(EOPNOTSUPP, "vhcav_reg_indirect",
		  vhcav_reg_indirect(self->r.pd, rg, 2, IOVA_IND, ACC, 0));
	SAME_MRS(base, "after vhcav_reg_indirect");
	ASSERT_EQ(0, ibv_dereg_mr(in));
	area_free(&a);
}

TEST_F_TIMEOUT(notvhca, reg_interleaved, T_S)
{
	struct vhcav_interleaved col[2];
	struct ibv_mr *in;
	struct area a;
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 6);
	in = area_mr(_metadata, self->r.pd, &a, ACC);
	col[0] = (struct vhcav_interleaved){ in->lkey, (uintptr_t)a.buf, 64, 64 };
	col[1] = (struct vhcav_interleaved){ in->lkey, (uintptr_t)a.buf + PAGE,
					     64, 64 };
	base = own_mrs(_metadata);
	WANT_NULL(EOPNOTSUPP, "vhcav_reg_interleaved",
		  vhcav_reg_interleaved(self->r.pd, col, 2, 4, IOVA_IND, ACC, 0));
	SAME_MRS(base, "after vhcav_reg_interleaved");
	ASSERT_EQ(0, ibv_dereg_mr(in));
	area_free(&a);
}

/* The device's own MR: refused, and ibv_dereg_mr() still frees it. */
TEST_F_TIMEOUT(notvhca, dereg, T_S)
{
	struct ibv_mr *mr;
	struct area a;
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 7);
	mr = area_mr(_metadata, self->r.pd, &a, ACC);
	base = own_mrs(_metadata);
	WANT_RET(EOPNOTSUPP, vhcav_dereg_mr(mr), "vhcav_dereg_mr");
	SAME_MRS(base, "after vhcav_dereg_mr");
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	SAME_MRS(base - 1, "after ibv_dereg_mr");
	area_free(&a);
}

/* vhcav_alloc_mr: refused, nothing allocated or charged. */
TEST_F_TIMEOUT(notvhca, alloc, T_S)
{
	int base;

	if (self->r.vhca)
		SKIP(return, "%s is vhca: notvhca cases are for the others", self->r.name);
	base = own_mrs(_metadata);
	WANT_NULL(EOPNOTSUPP, "vhcav_alloc_mr",
		  vhcav_alloc_mr(self->r.pd, 1 << 20, ACC, 0));
	SAME_MRS(base, "after vhcav_alloc_mr");
}

/* ---------------------------------------------------------------- */
/* rereg                                                            */

FIXTURE(rereg) {
	struct rig r;
};

FIXTURE_SETUP(rereg)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(rereg)
{
	rig_teardown(&self->r);
}

/* The kernel's view of the MR: listed with the length the MR says. */
static void listed_as(struct __test_metadata *_metadata, const char *what,
		      const struct ibv_mr *mr)
{
	long long len = mr_attr(_metadata, mr->lkey, "mrlen", false);

	ASSERT_EQ((long long)mr->length, len)
		TH_LOG("%s: rdma res show mr: lkey 0x%x mrlen %lld, the MR says %zu",
		       what, mr->lkey, len, mr->length);
}

/* New pages: the MR's bytes are the new buffer's, the old one is let be. */
TEST_F_TIMEOUT(rereg, trans, T_S)
{
	struct rig *r = &self->r;
	struct area ar[2];
	struct piece pc = { 1, 0, 8 * PAGE };
	struct ibv_mr *mr;
	int ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &ar[0], 4 * PAGE, 10);
	area_make(_metadata, &ar[1], 8 * PAGE, 11);
	mr = area_mr(_metadata, r->pd, &ar[0], ACC);
	ret = vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			     ar[1].buf, ar[1].len, 0);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_rereg_mr: %s", strerror(ret));
	ASSERT_EQ(ar[1].buf, mr->addr);
	ASSERT_EQ(ar[1].len, mr->length);
	ASSERT_EQ(r->pd, mr->pd);
	listed_as(_metadata, "after the rereg", mr);
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)ar[1].buf, ar, 2, &pc, 1, 12);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&ar[0]);
	area_free(&ar[1]);
}

/* Another PD: its QPs reach the MR, the old PD's no longer do. */
TEST_F_TIMEOUT(rereg, pd, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct area a;
	int ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	rig_pair2(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 20);
	mr = area_mr(_metadata, r->pd, &a, ACC);
	ret = vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, r->pd2, NULL, 0, 0);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_rereg_mr: %s", strerror(ret));
	ASSERT_EQ(r->pd2, mr->pd);
	ASSERT_EQ(a.buf, mr->addr);
	ASSERT_EQ(a.len, mr->length);
	layout_traffic(_metadata, &r->p2, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 21);

	mt_fill(r->p.buf + SRC_OFF, PAGE, 22);
	EXPECT_WC_REFUSED(peer_write(_metadata, &r->p, SRC_OFF, (uintptr_t)a.buf,
				     mr->rkey, PAGE),
			  "RDMA WRITE from a QP of the old PD");
	areas_check(_metadata, "after the refused WRITE", &a, 1);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
}

/* Remote write taken away: READs work, a WRITE is refused, nothing lands. */
TEST_F_TIMEOUT(rereg, access, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct area a;
	int ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 30);
	mr = area_mr(_metadata, r->pd, &a, ACC);
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 31);
	ret = vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     LW | RR);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_rereg_mr: %s", strerror(ret));
	ASSERT_EQ(a.buf, mr->addr);
	ASSERT_EQ(a.len, mr->length);

	mt_fill(a.buf, a.len, 32);
	memcpy(a.want, a.buf, a.len);
	EXPECT_WC(IBV_WC_SUCCESS, peer_read(_metadata, &r->p, RD_OFF,
					    (uintptr_t)a.buf, mr->rkey, a.len),
		  "RDMA READ after the rereg");
	same_bytes(_metadata, "RDMA READ after the rereg", r->p.buf + RD_OFF,
		   a.buf, a.len);
	mt_fill(r->p.buf + SRC_OFF, PAGE, 33);
	EXPECT_WC_REFUSED(peer_write(_metadata, &r->p, SRC_OFF, (uintptr_t)a.buf,
				     mr->rkey, PAGE),
			  "RDMA WRITE without the remote write right");
	areas_check(_metadata, "after the refused WRITE", &a, 1);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
}

/*
 * Translation, PD and access at once, on an MR of libvhca's own: the
 * new PD's QPs read and write the new pages; the old PD's are refused.
 */
TEST_F_TIMEOUT(rereg, all, T_S)
{
	struct rig *r = &self->r;
	struct area ar[2];
	struct piece pc = { 1, 0, 8 * PAGE };
	struct ibv_mr *mr;
	int ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	rig_pair2(_metadata, r);
	area_make(_metadata, &ar[0], 4 * PAGE, 40);
	area_make(_metadata, &ar[1], 8 * PAGE, 41);
	mr = vhcav_reg_mr_key(r->pd, ar[0].buf, ar[0].len, (uintptr_t)ar[0].buf,
			      LW | RR, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_mr_key: %s", strerror(errno));
	ret = vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
				 IBV_REREG_MR_CHANGE_PD |
				 IBV_REREG_MR_CHANGE_ACCESS,
			     r->pd2, ar[1].buf, ar[1].len, ACC);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_rereg_mr: %s", strerror(ret));
	ASSERT_EQ(r->pd2, mr->pd);
	ASSERT_EQ(ar[1].buf, mr->addr);
	ASSERT_EQ(ar[1].len, mr->length);
	listed_as(_metadata, "after the rereg", mr);
	layout_traffic(_metadata, &r->p2, mr->lkey, mr->rkey,
		       (uintptr_t)ar[1].buf, ar, 2, &pc, 1, 42);

	EXPECT_WC_REFUSED(peer_read(_metadata, &r->p, RD_OFF,
				    (uintptr_t)ar[1].buf, mr->rkey, PAGE),
			  "RDMA READ from a QP of the old PD");
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	area_free(&ar[0]);
	area_free(&ar[1]);
}

/* EINVAL for flags and arguments ibv_rereg_mr() refuses; nothing changes. */
TEST_F_TIMEOUT(rereg, refused_bad_flags, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct mr_view v;
	struct area a;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 50);
	mr = area_mr(_metadata, r->pd, &a, ACC);
	mr_view(mr, &v);
	base = own_mrs(_metadata);
	WANT_RET(EINVAL, vhcav_rereg_mr(mr, 0, NULL, NULL, 0, 0), "no flag");
	WANT_RET(EINVAL, vhcav_rereg_mr(mr, IBV_REREG_MR_FLAGS_SUPPORTED + 1,
					r->pd, a.buf, a.len, ACC),
		 "an unknown flag");
	WANT_RET(EINVAL, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL,
					0, 0),
		 "CHANGE_PD to no PD");
	WANT_RET(EINVAL, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					NULL, a.buf, 0, 0),
		 "CHANGE_TRANSLATION to length 0");
	WANT_RET(EINVAL, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					NULL, NULL, a.len, 0),
		 "CHANGE_TRANSLATION to address NULL");
	WANT_RET(EINVAL, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					NULL, 0, RW),
		 "CHANGE_ACCESS to remote write without local write");
	same_view(_metadata, "refused reregs", mr, &v);
	SAME_MRS(base, "after the refused reregs");
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 51);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
}

/* An ODP MR is not re-registered in place: EOPNOTSUPP, and it works on. */
TEST_F_TIMEOUT(rereg, refused_odp, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct mr_view v;
	struct area a, b;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	rig_pd2(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 60);
	area_make(_metadata, &b, 4 * PAGE, 61);
	mr = area_mr(_metadata, r->pd, &a, ACC | ODP);
	mr_view(mr, &v);
	base = own_mrs(_metadata);
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS,
					    NULL, NULL, 0, LW | RR | ODP),
		 "CHANGE_ACCESS of an ODP MR");
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					    NULL, b.buf, b.len, 0),
		 "CHANGE_TRANSLATION of an ODP MR");
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, r->pd2,
					    NULL, 0, 0),
		 "CHANGE_PD of an ODP MR");
	same_view(_metadata, "refused reregs", mr, &v);
	SAME_MRS(base, "after the refused reregs");
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 62);
	areas_check(_metadata, "the buffer offered to the refused rereg", &b, 1);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
	area_free(&b);
}

/* A dma-buf MR: EOPNOTSUPP, and it works on. */
TEST_F_TIMEOUT(rereg, refused_dmabuf, T_S)
{
	int kind = dbuf_pick();
	const size_t len = 4 * PAGE;
	struct rig *r = &self->r;
	struct ibv_mr *mr;
	struct mr_view v;
	struct area b;
	struct dbuf d;
	int base, ret;
	uint8_t *cpu;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	if (!dbuf_have(kind))
		SKIP(return, "no dma-buf exporter (/dev/udmabuf, /dev/%s)",
		     MRCT_DEV_NAME);
	rig_pair(_metadata, r);
	area_make(_metadata, &b, len, 70);
	dbuf_make(_metadata, &d, kind, len);
	mr = vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, d.fd, ACC);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_dmabuf_mr: %s", strerror(errno));
	mr_view(mr, &v);
	base = own_mrs(_metadata);
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS,
					    NULL, NULL, 0, LW | RR),
		 "CHANGE_ACCESS of a dma-buf MR");
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					    NULL, b.buf, b.len, 0),
		 "CHANGE_TRANSLATION of a dma-buf MR");
	same_view(_metadata, "refused reregs", mr, &v);
	SAME_MRS(base, "after the refused reregs");

	mt_fill(r->p.buf + SRC_OFF, len, 71);
	EXPECT_WC(IBV_WC_SUCCESS, peer_write(_metadata, &r->p, SRC_OFF, IOVA_DB,
					     mr->rkey, len),
		  "RDMA WRITE into the dma-buf MR after the refused reregs");
	cpu = malloc(len);
	ASSERT_NE(NULL, cpu);
	dbuf_rw(_metadata, &d, 0, cpu, len, false);
	same_bytes(_metadata, "the dma-buf after the RDMA WRITE", cpu,
		   r->p.buf + SRC_OFF, len);
	areas_check(_metadata, "the buffer offered to the refused rereg", &b, 1);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	dbuf_free(&d);
	area_free(&b);
	free(cpu);
}

/* An indirect key: EOPNOTSUPP, and it works on. */
TEST_F_TIMEOUT(rereg, refused_indirect, T_S)
{
	struct rig *r = &self->r;
	struct piece pc[2] = { { 0, 0, PAGE }, { 0, 2 * PAGE, PAGE } };
	struct vhcav_key_range rg[2];
	struct ibv_mr *in, *mr;
	struct area a, b;
	struct mr_view v;
	int base, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 80);
	area_make(_metadata, &b, 4 * PAGE, 81);
	in = area_mr(_metadata, r->pd, &a, ACC);
	rg[0] = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf, PAGE };
	rg[1] = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf + 2 * PAGE,
					  PAGE };
	mr = vhcav_reg_indirect(r->pd, rg, 2, IOVA_IND, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_indirect: %s", strerror(errno));
	mr_view(mr, &v);
	base = own_mrs(_metadata);
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS,
					    NULL, NULL, 0, LW | RR),
		 "CHANGE_ACCESS of an indirect key");
	WANT_RET(EOPNOTSUPP, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					    NULL, b.buf, b.len, 0),
		 "CHANGE_TRANSLATION of an indirect key");
	same_view(_metadata, "refused reregs", mr, &v);
	SAME_MRS(base, "after the refused reregs");
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey, IOVA_IND, &a, 1,
		       pc, 2, 82);
	areas_check(_metadata, "the buffer offered to the refused rereg", &b, 1);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	ASSERT_EQ(0, ibv_dereg_mr(in));
	area_free(&a);
	area_free(&b);
}

/*
 * A type 2 window bound to the MR: EBUSY, and the MR stays whole: the
 * old keys, the MR's and the window's, still reach the old pages.
 */
TEST_F_TIMEOUT(rereg, refused_windows_bound, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct mr_view v;
	struct area a, b;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 90);
	area_make(_metadata, &b, 4 * PAGE, 91);
	mr = area_mr(_metadata, r->pd, &a, ACC | IBV_ACCESS_MW_BIND);
	mw = bind_mw2(_metadata, &r->p, mr, a.buf + PAGE, 2 * PAGE);
	mr_view(mr, &v);
	base = own_mrs(_metadata);
	WANT_RET(EBUSY, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				       NULL, 0, ACC),
		 "CHANGE_ACCESS with a window bound");
	WANT_RET(EBUSY, vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				       NULL, b.buf, b.len, 0),
		 "CHANGE_TRANSLATION with a window bound");
	same_view(_metadata, "refused reregs", mr, &v);
	SAME_MRS(base, "after the refused reregs");

	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 92);
	mt_fill(r->p.buf + SRC_OFF, 2 * PAGE, 93);
	EXPECT_WC(IBV_WC_SUCCESS, peer_write(_metadata, &r->p, SRC_OFF,
					     (uintptr_t)a.buf + PAGE, mw->rkey,
					     2 * PAGE),
		  "RDMA WRITE through the window");
	memcpy(a.want + PAGE, r->p.buf + SRC_OFF, 2 * PAGE);
	areas_check(_metadata, "after the WRITE through the window", &a, 1);
	areas_check(_metadata, "the buffer offered to the refused rereg", &b, 1);
	ASSERT_EQ(0, ibv_dealloc_mw(mw));
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
	area_free(&b);
}

/*
 * A rereg that fails in the kernel (new pages that cannot be pinned: an
 * unmapped range), with the access changed too: the MR is as before,
 * keys, length, rights and pages, and the kernel lists it so.
 */
TEST_F_TIMEOUT(rereg, refused_keeps_mr, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct mr_view v;
	struct area a;
	uint8_t *hole;
	int base, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 100);
	mr = area_mr(_metadata, r->pd, &a, ACC);
	mr_view(mr, &v);
	hole = map_buf(_metadata, 8 * PAGE);
	ASSERT_EQ(0, munmap(hole, 8 * PAGE));
	base = own_mrs(_metadata);
	ret = vhcav_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
				 IBV_REREG_MR_CHANGE_ACCESS,
			     NULL, hole, 8 * PAGE, LW);
	ASSERT_NE(0, ret) TH_LOG("a rereg to unmapped memory succeeded");
	TH_LOG("rereg to unmapped memory: %s", strerror(ret));
	same_view(_metadata, "failed rereg", mr, &v);
	SAME_MRS(base, "after the failed rereg");
	listed_as(_metadata, "after the failed rereg", mr);
	/* Remote write still granted, the old pages still mapped. */
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 101);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
}

/* ---------------------------------------------------------------- */
/* advise                                                           */

FIXTURE(advise) {
	struct rig r;
};

FIXTURE_SETUP(advise)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(advise)
{
	rig_teardown(&self->r);
}

#define ODP_PAGES	16

/* An ODP MR over a fresh buffer, the CPU's bytes in it. */
static struct ibv_mr *odp_mr(struct __test_metadata *_metadata,
			     struct ibv_pd *pd, struct area *a, uint64_t seed)
{
	area_make(_metadata, a, ODP_PAGES * PAGE, seed);
	return area_mr(_metadata, pd, a, ACC | ODP);
}

static long long odp_stat(struct __test_metadata *_metadata,
			  struct ibv_mr *mr, const char *key)
{
	long long v = mr_attr(_metadata, mr->lkey, key, true);

	ASSERT_LE(0, v) TH_LOG("rdma res show mr -dd: no %s for lkey 0x%x",
			       key, mr->lkey);
	return v;
}

/* Poll until the MR's odp_prefetched_pages is @want (or the deadline). */
static long long wait_prefetched(struct __test_metadata *_metadata,
				 struct ibv_mr *mr, long long want)
{
	uint64_t end = uu_now_ms() + DEADLINE_S * 1000ULL;
	long long v;

	for (;;) {
		v = odp_stat(_metadata, mr, "odp_prefetched_pages");
		if (v == want || uu_now_ms() > end)
			return v;
		usleep(100000);
	}
}

/*
 * @advice over the whole of a fresh ODP MR, with @flags: every page is
 * mapped (when the call returns with FLUSH, in time without), and then
 * an RDMA @op over the whole MR (READ: the CPU's bytes come back;
 * WRITE: they land) causes no page fault.
 */
static void advise_case(struct __test_metadata *_metadata, struct rig *r,
			enum ibv_advise_mr_advice advice, uint32_t flags,
			enum ibv_wr_opcode op, uint64_t seed)
{
	struct ibv_sge sge;
	struct ibv_mr *mr;
	long long f0, pf;
	struct area a;
	uint8_t *peer;

	rig_pair(_metadata, r);
	/* The pair's buffer exists from rig_pair() on. */
	peer = r->p.buf + (op == IBV_WR_RDMA_READ ? RD_OFF : SRC_OFF);
	mr = odp_mr(_metadata, r->pd, &a, seed);
	f0 = odp_stat(_metadata, mr, "odp_faults");
	sge = (struct ibv_sge){ (uintptr_t)a.buf, a.len, mr->lkey };
	WANT_RET(0, vhcav_advise_mr(r->pd, advice, flags, &sge, 1), "the advice");
	if (flags & IBV_ADVISE_MR_FLAG_FLUSH)
		pf = odp_stat(_metadata, mr, "odp_prefetched_pages");
	else
		pf = wait_prefetched(_metadata, mr, ODP_PAGES);
	ASSERT_EQ(ODP_PAGES, pf) TH_LOG("odp_prefetched_pages %lld of %d", pf,
					ODP_PAGES);
	if (op == IBV_WR_RDMA_WRITE)
		mt_fill(peer, a.len, seed + 1);
	EXPECT_WC(IBV_WC_SUCCESS, rdma_op(_metadata, &r->p, op, (uintptr_t)peer,
					  r->p.mr->lkey, (uintptr_t)a.buf,
					  mr->rkey, a.len),
		  "RDMA READ or WRITE of the prefetched MR");
	same_bytes(_metadata, "the MR and the peer buffer", a.buf, peer, a.len);
	ASSERT_EQ(f0, odp_stat(_metadata, mr, "odp_faults"))
		TH_LOG("the prefetched pages faulted");
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	area_free(&a);
}

/* PREFETCH, queued: the pages get mapped; an RDMA READ then never faults. */
TEST_F_TIMEOUT(advise, prefetch, T_S)
{
	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	advise_case(_metadata, &self->r, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
		    IBV_WR_RDMA_READ, 110);
}

/* PREFETCH_WRITE, queued: mapped writable; an RDMA WRITE then never faults. */
TEST_F_TIMEOUT(advise, prefetch_write, T_S)
{
	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	advise_case(_metadata, &self->r, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0,
		    IBV_WR_RDMA_WRITE, 120);
}

/*
 * PREFETCH_NO_FAULT (with FLUSH): only the pages the CPU has are mapped;
 * reading those never faults, reading the others does (zeros).
 */
TEST_F_TIMEOUT(advise, prefetch_no_fault, T_S)
{
	const size_t len = ODP_PAGES * PAGE;
	struct rig *r = &self->r;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	uint8_t *buf;
	long long f0;
	size_t i;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	buf = map_buf(_metadata, len);
	for (i = 0; i < ODP_PAGES; i += 2)
		mt_fill(buf + i * PAGE, PAGE, 130 + i);
	mr = ibv_reg_mr(r->pd, buf, len, ACC | ODP);
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr (ODP): %s", strerror(errno));
	f0 = odp_stat(_metadata, mr, "odp_faults");
	sge = (struct ibv_sge){ (uintptr_t)buf, len, mr->lkey };
	WANT_RET(0, vhcav_advise_mr(r->pd,
				    IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
				    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
		 "PREFETCH_NO_FAULT with FLUSH");
	ASSERT_EQ(ODP_PAGES / 2, odp_stat(_metadata, mr, "odp_prefetched_pages"));
	EXPECT_WC(IBV_WC_SUCCESS, peer_read(_metadata, &r->p, RD_OFF,
					    (uintptr_t)buf, mr->rkey, PAGE),
		  "RDMA READ of a page the CPU wrote");
	same_bytes(_metadata, "RDMA READ of a page the CPU wrote",
		   r->p.buf + RD_OFF, buf, PAGE);
	ASSERT_EQ(f0, odp_stat(_metadata, mr, "odp_faults"));

	EXPECT_WC(IBV_WC_SUCCESS, peer_read(_metadata, &r->p, RD_OFF,
					    (uintptr_t)buf, mr->rkey, len),
		  "RDMA READ of the whole MR");
	same_bytes(_metadata, "RDMA READ of the whole MR", r->p.buf + RD_OFF,
		   buf, len);
	ASSERT_LT(f0, odp_stat(_metadata, mr, "odp_faults"))
		TH_LOG("the untouched pages were read without a fault");
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	munmap(buf, len);
}

/* FLUSH: mapped when the call returns; the first RDMA WRITE never faults. */
TEST_F_TIMEOUT(advise, flush, T_S)
{
	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	advise_case(_metadata, &self->r, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		    IBV_ADVISE_MR_FLAG_FLUSH, IBV_WR_RDMA_WRITE, 140);
}

/*
 * Refused advice (FLUSH, so the device's answer is the call's): an MR
 * that is not ODP, an ODP MR of another PD, a range outside the MR, an
 * unknown advice or flag, no range. Nothing is made, the MR works on.
 */
TEST_F_TIMEOUT(advise, bad, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, ODP_PAGES * PAGE };
	struct ibv_mr *mr, *pinned, *other;
	struct area a, b, c;
	struct ibv_sge sge;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	rig_pd2(_metadata, r);
	mr = odp_mr(_metadata, r->pd, &a, 150);
	other = odp_mr(_metadata, r->pd2, &c, 151);
	area_make(_metadata, &b, 4 * PAGE, 152);
	pinned = area_mr(_metadata, r->pd, &b, ACC);
	base = own_mrs(_metadata);

	sge = (struct ibv_sge){ (uintptr_t)b.buf, b.len, pinned->lkey };
	WANT_RET(EINVAL, vhcav_advise_mr(r->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
					 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
		 "PREFETCH of a pinned MR");
	sge = (struct ibv_sge){ (uintptr_t)c.buf, c.len, other->lkey };
	WANT_RET(EINVAL, vhcav_advise_mr(r->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
					 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
		 "PREFETCH of another PD's ODP MR");
	sge = (struct ibv_sge){ (uintptr_t)a.buf + a.len, PAGE, mr->lkey };
	WANT_RET2(ERANGE, EINVAL,
		  vhcav_advise_mr(r->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				  IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
		  "PREFETCH of a range past the MR");
	sge = (struct ibv_sge){ (uintptr_t)a.buf, a.len, mr->lkey };
	WANT_RET2(EOPNOTSUPP, EINVAL,
		  vhcav_advise_mr(r->pd, 7, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
		  "an unknown advice");
	WANT_RET2(EINVAL, EOPNOTSUPP,
		  vhcav_advise_mr(r->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				  IBV_ADVISE_MR_FLAG_FLUSH << 1, &sge, 1),
		  "an unknown flag");
	WANT_RET(EINVAL, vhcav_advise_mr(r->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
					 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 0),
		 "no range");
	SAME_MRS(base, "after the refused advice");
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 153);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	ASSERT_EQ(0, ibv_dereg_mr(other));
	ASSERT_EQ(0, ibv_dereg_mr(pinned));
	area_free(&a);
	area_free(&b);
	area_free(&c);
}

/* ---------------------------------------------------------------- */
/* dmabuf                                                           */

FIXTURE(dmabuf) {
	struct rig r;
};

FIXTURE_SETUP(dmabuf)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(dmabuf)
{
	rig_teardown(&self->r);
}

/* A udmabuf (a sealed memfd): the CPU sees the device's bytes. */
TEST_F_TIMEOUT(dmabuf, reg, T_S)
{
	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	if (!dbuf_have(DB_UDMABUF))
		SKIP(return, "no /dev/udmabuf (CONFIG_UDMABUF)");
	if (mt_swiotlb_forced())
		SKIP(return, "swiotlb=force: 6.1's udmabuf never syncs a bounced import");
	dmabuf_case(_metadata, &self->r, DB_UDMABUF);
}

/* mrcore_test's static exporter: the same, on any kernel. */
TEST_F_TIMEOUT(dmabuf, reg_static, T_S)
{
	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	if (!dbuf_have(DB_MRCT))
		SKIP(return, "no /dev/%s (mrcore_test not loaded)", MRCT_DEV_NAME);
	dmabuf_case(_metadata, &self->r, DB_MRCT);
}

/* ibv_reg_dmabuf_mr()'s errors; nothing is made. */
TEST_F_TIMEOUT(dmabuf, bad, T_S)
{
	int kind = dbuf_pick();
	const size_t len = 4 * PAGE;
	struct rig *r = &self->r;
	struct dbuf d;
	int base, mfd;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	if (!dbuf_have(kind))
		SKIP(return, "no dma-buf exporter (/dev/udmabuf, /dev/%s)",
		     MRCT_DEV_NAME);
	dbuf_make(_metadata, &d, kind, len);
	mfd = memfd_create("user_mrlib", 0);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, len));
	base = own_mrs(_metadata);
	WANT_NULL(EBADF, "fd -1",
		  vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, -1, ACC));
	WANT_NULL(EINVAL, "a memfd, not a dma-buf",
		  vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, mfd, ACC));
	WANT_NULL(EINVAL, "length 0",
		  vhcav_reg_dmabuf_mr(r->pd, 0, 0, IOVA_DB, d.fd, ACC));
	WANT_NULL(EINVAL, "a range past the buffer",
		  vhcav_reg_dmabuf_mr(r->pd, PAGE, len, IOVA_DB, d.fd, ACC));
	WANT_NULL(EINVAL, "iova and offset at other places in a page",
		  vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB + 100, d.fd, ACC));
	WANT_NULL(EINVAL, "remote write without local write",
		  vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, d.fd, RW | RR));
	WANT_NULL2(EINVAL, EOPNOTSUPP, "ON_DEMAND",
		   vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, d.fd, ACC | ODP));
	/*
	 * ibv_reg_dmabuf_mr(3): only the rights and RELAXED_ORDERING.
	 * ib_uverbs' REG_DMABUF_MR refuses the rest (EINVAL) before vhca
	 * sees them; mrcore's own refusal (EOPNOTSUPP) is dmabuf_tests.c's.
	 */
	WANT_NULL(EINVAL, "MW_BIND",
		  vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, d.fd,
				      ACC | IBV_ACCESS_MW_BIND));
	WANT_NULL(EINVAL, "ZERO_BASED",
		  vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, d.fd,
				      ACC | IBV_ACCESS_ZERO_BASED));
	WANT_NULL(EINVAL, "HUGETLB",
		  vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, d.fd,
				      ACC | IBV_ACCESS_HUGETLB));
	SAME_MRS(base, "after the refused registrations");
	close(mfd);
	dbuf_free(&d);
}

/*
 * The other two flags ibv_reg_dmabuf_mr(3) supports, REMOTE_ATOMIC and
 * RELAXED_ORDERING: registered, the rights kept (an atomic through the
 * rkey lands), dereg leaves nothing.
 */
TEST_F_TIMEOUT(dmabuf, atomic_relaxed, T_S)
{
	int kind = dbuf_pick();
	const int acc = ACC | IBV_ACCESS_REMOTE_ATOMIC |
			IBV_ACCESS_RELAXED_ORDERING;
	const size_t len = 4 * PAGE;
	struct rig *r = &self->r;
	struct ibv_mr *mr;
	struct dbuf d;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	if (!dbuf_have(kind))
		SKIP(return, "no dma-buf exporter (/dev/udmabuf, /dev/%s)",
		     MRCT_DEV_NAME);
	rig_pair(_metadata, r);
	dbuf_make(_metadata, &d, kind, len);
	base = own_mrs(_metadata);
	mr = vhcav_reg_dmabuf_mr(r->pd, 0, len, IOVA_DB, d.fd, acc);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_dmabuf_mr: %s", strerror(errno));
	dbuf_fetch_add(_metadata, r, &d, mr);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	SAME_MRS(base, "after ibv_dereg_mr");
	dbuf_free(&d);
}

/* ---------------------------------------------------------------- */
/* key: requested keys                                              */

FIXTURE(key) {
	struct rig r;
};

FIXTURE_SETUP(key)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(key)
{
	rig_teardown(&self->r);
}

/* Key 0: any key; the kernel lists the MR as this process's. */
TEST_F_TIMEOUT(key, any, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct area a;
	int base, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 200);
	base = own_mrs(_metadata);
	mr = vhcav_reg_mr_key(r->pd, a.buf, a.len, IOVA_KEY, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_mr_key: %s", strerror(errno));
	ASSERT_EQ(a.buf, mr->addr);
	ASSERT_EQ(a.len, mr->length);
	ASSERT_EQ(r->pd, mr->pd);
	ASSERT_EQ(base + 1, own_mrs(_metadata));
	ASSERT_EQ((long long)a.len, mr_attr(_metadata, mr->lkey, "mrlen", false));
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey, IOVA_KEY, &a, 1,
		       &pc, 1, 201);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	SAME_MRS(base, "after vhcav_dereg_mr");
	area_free(&a);
}

/* The key asked for is the lkey and the rkey, and again after a dereg. */
TEST_F_TIMEOUT(key, requested, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct area a;
	uint32_t key;
	int i, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 210);
	key = free_key(_metadata, r);
	for (i = 0; i < 2; i++) {
		mr = vhcav_reg_mr_key(r->pd, a.buf, a.len, IOVA_KEY, ACC, key);
		ASSERT_NE(NULL, mr) TH_LOG("registration %d with key 0x%x: %s",
					   i, key, strerror(errno));
		ASSERT_EQ(key, mr->lkey);
		ASSERT_EQ(key, mr->rkey);
		ASSERT_EQ((long long)a.len, mr_attr(_metadata, key, "mrlen",
						    false));
		layout_traffic(_metadata, &r->p, key, key, IOVA_KEY, &a, 1,
			       &pc, 1, 211 + i);
		ret = vhcav_dereg_mr(mr);
		ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	}
	area_free(&a);
}

/* An iovec MR with a requested key. */
TEST_F_TIMEOUT(key, requested_iov, T_S)
{
	struct rig *r = &self->r;
	struct piece pc[2] = { { 0, 0, PAGE }, { 1, 0, PAGE } };
	struct area ar[2];
	struct iovec iov[2];
	struct ibv_mr *mr;
	uint32_t key;
	int ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &ar[0], PAGE, 220);
	area_make(_metadata, &ar[1], PAGE, 221);
	iov[0] = (struct iovec){ ar[0].buf, PAGE };
	iov[1] = (struct iovec){ ar[1].buf, PAGE };
	key = free_key(_metadata, r);
	mr = vhcav_reg_mr_iov(r->pd, iov, 2, IOVA_IOV, ACC, key);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_mr_iov, key 0x%x: %s", key,
				   strerror(errno));
	ASSERT_EQ(key, mr->lkey);
	ASSERT_EQ(key, mr->rkey);
	layout_traffic(_metadata, &r->p, key, key, IOVA_IOV, ar, 2, pc, 2,
		       222);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	area_free(&ar[0]);
	area_free(&ar[1]);
}

/* Indirect keys, list and strided, with a requested key. */
TEST_F_TIMEOUT(key, requested_indirect, T_S)
{
	struct rig *r = &self->r;
	struct piece pc[2] = { { 0, 0, PAGE }, { 0, 2 * PAGE, PAGE } };
	struct vhcav_interleaved col;
	struct vhcav_key_range rg[2];
	struct ibv_mr *in, *mr;
	struct area a;
	uint32_t key;
	int ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 230);
	in = area_mr(_metadata, r->pd, &a, ACC);
	rg[0] = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf, PAGE };
	rg[1] = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf + 2 * PAGE,
					  PAGE };
	key = free_key(_metadata, r);
	mr = vhcav_reg_indirect(r->pd, rg, 2, IOVA_IND, ACC, key);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_indirect, key 0x%x: %s", key,
				   strerror(errno));
	ASSERT_EQ(key, mr->lkey);
	ASSERT_EQ(key, mr->rkey);
	layout_traffic(_metadata, &r->p, key, key, IOVA_IND, &a, 1, pc, 2,
		       231);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));

	/* The same two pieces as one column: a page, a page skipped, twice. */
	col = (struct vhcav_interleaved){ in->lkey, (uintptr_t)a.buf, PAGE, PAGE };
	mr = vhcav_reg_interleaved(r->pd, &col, 1, 2, IOVA_IND, ACC, key);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_interleaved, key 0x%x: %s", key,
				   strerror(errno));
	ASSERT_EQ(key, mr->lkey);
	ASSERT_EQ(key, mr->rkey);
	layout_traffic(_metadata, &r->p, key, key, IOVA_IND, &a, 1, pc, 2,
		       232);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	ASSERT_EQ(0, ibv_dereg_mr(in));
	area_free(&a);
}

/* ENOKEY for a key an MR has, by every call that takes a key. */
TEST_F_TIMEOUT(key, in_use, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct vhcav_key_range rg;
	struct vhcav_interleaved col;
	struct ibv_mr *mr, *plain;
	struct iovec iov;
	struct area a, b;
	uint32_t key;
	int base, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 240);
	area_make(_metadata, &b, 4 * PAGE, 241);
	key = free_key(_metadata, r);
	mr = vhcav_reg_mr_key(r->pd, a.buf, a.len, IOVA_KEY, ACC, key);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_mr_key 0x%x: %s", key,
				   strerror(errno));
	plain = area_mr(_metadata, r->pd, &b, ACC);
	iov = (struct iovec){ b.buf, b.len };
	rg = (struct vhcav_key_range){ plain->lkey, (uintptr_t)b.buf, b.len };
	col = (struct vhcav_interleaved){ plain->lkey, (uintptr_t)b.buf, PAGE, 0 };
	base = own_mrs(_metadata);

	WANT_NULL(ENOKEY, "vhcav_reg_mr_key, a libvhca MR's key",
		  vhcav_reg_mr_key(r->pd, b.buf, b.len, (uintptr_t)b.buf, ACC, key));
	WANT_NULL(ENOKEY, "vhcav_reg_mr_key, an ibv_reg_mr MR's key",
		  vhcav_reg_mr_key(r->pd, b.buf, b.len, (uintptr_t)b.buf, ACC,
				   plain->lkey));
	WANT_NULL(ENOKEY, "vhcav_reg_mr_iov",
		  vhcav_reg_mr_iov(r->pd, &iov, 1, (uintptr_t)b.buf, ACC, key));
	WANT_NULL(ENOKEY, "vhcav_reg_indirect",
		  vhcav_reg_indirect(r->pd, &rg, 1, IOVA_IND, ACC, key));
	WANT_NULL(ENOKEY, "vhcav_reg_interleaved",
		  vhcav_reg_interleaved(r->pd, &col, 1, 4, IOVA_IND, ACC, key));
	SAME_MRS(base, "after the refused registrations");

	layout_traffic(_metadata, &r->p, key, key, IOVA_KEY, &a, 1, &pc, 1,
		       242);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	ASSERT_EQ(0, ibv_dereg_mr(plain));
	area_free(&a);
	area_free(&b);
}

/* EKEYREJECTED: index 0, index max_mkeys and the last index of all. */
TEST_F_TIMEOUT(key, rejected, T_S)
{
	struct rig *r = &self->r;
	struct vhcav_key_range rg;
	struct ibv_mr *plain;
	uint32_t keys[3];
	struct iovec iov;
	char what[96];
	int base, i, n = 0;
	struct area a;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_caps(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 250);
	plain = area_mr(_metadata, r->pd, &a, ACC);
	iov = (struct iovec){ a.buf, a.len };
	rg = (struct vhcav_key_range){ plain->lkey, (uintptr_t)a.buf, a.len };
	keys[n++] = KEY_VARIANT;			/* index 0 */
	if (r->caps.max_mkeys <= 0xffffff) {
		keys[n++] = r->caps.max_mkeys << 8 | KEY_VARIANT;
		keys[n++] = 0xffffff00 | KEY_VARIANT;
	}
	base = own_mrs(_metadata);
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "vhcav_reg_mr_key 0x%x", keys[i]);
		WANT_NULL(EKEYREJECTED, what,
			  vhcav_reg_mr_key(r->pd, a.buf, a.len, IOVA_KEY, ACC, keys[i]));
		snprintf(what, sizeof(what), "vhcav_reg_mr_iov 0x%x", keys[i]);
		WANT_NULL(EKEYREJECTED, what,
			  vhcav_reg_mr_iov(r->pd, &iov, 1, IOVA_IOV, ACC, keys[i]));
		snprintf(what, sizeof(what), "vhcav_reg_indirect 0x%x", keys[i]);
		WANT_NULL(EKEYREJECTED, what,
			  vhcav_reg_indirect(r->pd, &rg, 1, IOVA_IND, ACC, keys[i]));
	}
	SAME_MRS(base, "after the refused registrations");
	ASSERT_EQ(0, ibv_dereg_mr(plain));
	area_free(&a);
}

/* ---------------------------------------------------------------- */
/* iov                                                              */

FIXTURE(iov) {
	struct rig r;
};

FIXTURE_SETUP(iov)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(iov)
{
	rig_teardown(&self->r);
}

/*
 * An iovec MR over @n (2 .. 8) pieces of the areas (@pc), at an iova
 * with the first piece's offset in the page; its fields, then traffic.
 */
static void iov_case(struct __test_metadata *_metadata, struct rig *r,
		     struct area *ar, int nar, const struct piece *pc, int n,
		     int access, uint64_t seed)
{
	size_t total = pieces_len(pc, n);
	struct iovec iov[8];
	struct ibv_mr *mr;
	uint64_t iova;
	int i, base, ret;

	ASSERT_TRUE(n > 1 && n <= 8 && pc[0].len >= 32 && pc[1].len >= 32);
	for (i = 0; i < n; i++)
		iov[i] = (struct iovec){ ar[pc[i].a].buf + pc[i].off, pc[i].len };
	iova = IOVA_IOV + ((uintptr_t)iov[0].iov_base & (PAGE - 1));
	base = own_mrs(_metadata);
	mr = vhcav_reg_mr_iov(r->pd, iov, n, iova, access, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_mr_iov of %d pieces: %s", n,
				   strerror(errno));
	ASSERT_EQ(iov[0].iov_base, mr->addr);
	ASSERT_EQ(total, mr->length);
	ASSERT_EQ(r->pd, mr->pd);
	ASSERT_LT(base, own_mrs(_metadata));
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey, iova, ar, nar,
		       pc, n, seed);

	/* A WRITE across the first boundary lands on both sides of it. */
	mt_fill(r->p.buf + SRC_OFF, 64, seed + 50);
	EXPECT_WC(IBV_WC_SUCCESS, peer_write(_metadata, &r->p, SRC_OFF,
					     iova + pc[0].len - 32, mr->rkey,
					     64),
		  "RDMA WRITE across a piece boundary");
	memcpy(ar[pc[0].a].want + pc[0].off + pc[0].len - 32,
	       r->p.buf + SRC_OFF, 32);
	memcpy(ar[pc[1].a].want + pc[1].off, r->p.buf + SRC_OFF + 32, 32);
	areas_check(_metadata, "after the WRITE across the boundary", ar, nar);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	SAME_MRS(base, "after vhcav_dereg_mr");
}

/* One piece: an ordinary MR at a chosen iova. */
TEST_F_TIMEOUT(iov, one, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct iovec iov;
	struct area a;
	int ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 300);
	iov = (struct iovec){ a.buf, a.len };
	mr = vhcav_reg_mr_iov(r->pd, &iov, 1, IOVA_IOV, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_mr_iov: %s", strerror(errno));
	ASSERT_EQ(a.buf, mr->addr);
	ASSERT_EQ(a.len, mr->length);
	ASSERT_EQ((long long)a.len, mr_attr(_metadata, mr->lkey, "mrlen", false));
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey, IOVA_IOV, &a, 1,
		       &pc, 1, 301);
	/* Past its end: refused, nothing written. */
	EXPECT_WC_REFUSED(peer_write(_metadata, &r->p, SRC_OFF,
				     IOVA_IOV + a.len - 32, mr->rkey, 64),
			  "RDMA WRITE past the end of the MR");
	areas_check(_metadata, "after the refused WRITE", &a, 1);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	area_free(&a);
}

/* Three pieces of three buffers, at byte offsets: laid end to end. */
TEST_F_TIMEOUT(iov, three, T_S)
{
	struct rig *r = &self->r;
	struct piece pc[3] = {
		{ 0, 100, 5000 }, { 1, 7, 3 * PAGE + 13 }, { 2, 3000, 777 },
	};
	struct area ar[3];

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &ar[0], 2 * PAGE, 310);
	area_make(_metadata, &ar[1], 4 * PAGE, 311);
	area_make(_metadata, &ar[2], PAGE, 312);
	iov_case(_metadata, r, ar, 3, pc, 3, ACC, 313);
	area_free(&ar[0]);
	area_free(&ar[1]);
	area_free(&ar[2]);
}

/* The same on demand: the pieces' pages are faulted in. */
TEST_F_TIMEOUT(iov, odp, T_S)
{
	struct rig *r = &self->r;
	struct piece pc[3] = {
		{ 0, 100, 5000 }, { 1, 7, 3 * PAGE + 13 }, { 2, 3000, 777 },
	};
	struct area ar[3];

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &ar[0], 2 * PAGE, 320);
	area_make(_metadata, &ar[1], 4 * PAGE, 321);
	area_make(_metadata, &ar[2], PAGE, 322);
	iov_case(_metadata, r, ar, 3, pc, 3, ACC | ODP, 323);
	area_free(&ar[0]);
	area_free(&ar[1]);
	area_free(&ar[2]);
}

/* No piece, too many, an empty one, lengths that wrap, MW_BIND on two. */
TEST_F_TIMEOUT(iov, bad, T_S)
{
	struct rig *r = &self->r;
	struct iovec *iov;
	struct area a;
	uint32_t i, n;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_caps(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 330);
	n = r->caps.max_iov + 1;
	iov = calloc(n, sizeof(*iov));
	ASSERT_NE(NULL, iov);
	for (i = 0; i < n; i++)
		iov[i] = (struct iovec){ a.buf + (i % 4) * PAGE, 64 };
	base = own_mrs(_metadata);

	WANT_NULL(EINVAL, "iovcnt 0",
		  vhcav_reg_mr_iov(r->pd, iov, 0, IOVA_IOV, ACC, 0));
	WANT_NULL2(EINVAL, E2BIG, "iovcnt max_iov + 1",
		   vhcav_reg_mr_iov(r->pd, iov, n, IOVA_IOV, ACC, 0));
	iov[1].iov_len = 0;
	WANT_NULL(EINVAL, "a piece of length 0",
		  vhcav_reg_mr_iov(r->pd, iov, 3, IOVA_IOV, ACC, 0));
	iov[1].iov_len = SIZE_MAX - 100;
	WANT_NULL2(EINVAL, EOVERFLOW, "lengths whose sum wraps",
		   vhcav_reg_mr_iov(r->pd, iov, 3, IOVA_IOV, ACC, 0));
	/* Two pages from the last page's start: the end wraps. */
	iov[0].iov_len = PAGE;
	iov[1] = (struct iovec){ a.buf + PAGE, PAGE };
	WANT_NULL2(EINVAL, EOVERFLOW, "an iova whose end wraps",
		   vhcav_reg_mr_iov(r->pd, iov, 2, -PAGE, ACC, 0));
	iov[0].iov_len = 64;
	iov[1].iov_len = 64;
	WANT_NULL2(EINVAL, EOPNOTSUPP, "MW_BIND over two pieces",
		   vhcav_reg_mr_iov(r->pd, iov, 2, IOVA_IOV,
				    ACC | IBV_ACCESS_MW_BIND, 0));
	SAME_MRS(base, "after the refused registrations");
	free(iov);
	area_free(&a);
}

/* ---------------------------------------------------------------- */
/* indirect                                                         */

FIXTURE(indirect) {
	struct rig r;
};

FIXTURE_SETUP(indirect)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(indirect)
{
	rig_teardown(&self->r);
}

/* Three ranges over two MRs, the first MR twice. */
TEST_F_TIMEOUT(indirect, list, T_S)
{
	struct rig *r = &self->r;
	struct piece pc[3] = {
		{ 0, 100, 3000 }, { 1, 5000, 2000 }, { 0, 2 * PAGE, PAGE },
	};
	struct vhcav_key_range rg[3];
	struct ibv_mr *in[2], *mr;
	struct area ar[2];
	int i, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	for (i = 0; i < 2; i++) {
		area_make(_metadata, &ar[i], 4 * PAGE, 400 + i);
		in[i] = area_mr(_metadata, r->pd, &ar[i], ACC);
	}
	for (i = 0; i < 3; i++)
		rg[i] = (struct vhcav_key_range){ in[pc[i].a]->lkey,
			(uintptr_t)ar[pc[i].a].buf + pc[i].off, pc[i].len };
	mr = vhcav_reg_indirect(r->pd, rg, 3, IOVA_IND, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_indirect: %s", strerror(errno));
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey, IOVA_IND, ar, 2,
		       pc, 3, 402);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ibv_dereg_mr(in[i]));
		area_free(&ar[i]);
	}
}

/* Two columns over two MRs, with skips, four times over. */
TEST_F_TIMEOUT(indirect, strided, T_S)
{
	struct rig *r = &self->r;
	struct vhcav_interleaved col[2];
	struct ibv_mr *in[2], *mr;
	struct piece pc[8];
	struct area ar[2];
	int i, j, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	for (i = 0; i < 2; i++) {
		area_make(_metadata, &ar[i], 4 * PAGE, 410 + i);
		in[i] = area_mr(_metadata, r->pd, &ar[i], ACC);
	}
	col[0] = (struct vhcav_interleaved){ in[0]->lkey, (uintptr_t)ar[0].buf,
					     64, 192 };
	col[1] = (struct vhcav_interleaved){ in[1]->lkey,
					     (uintptr_t)ar[1].buf + 32, 100, 28 };
	for (i = 0; i < 4; i++)
		for (j = 0; j < 2; j++)
			pc[i * 2 + j] = (struct piece){ j,
				(uintptr_t)col[j].addr - (uintptr_t)ar[j].buf +
				i * (col[j].bytes_count + col[j].bytes_skip),
				col[j].bytes_count };
	mr = vhcav_reg_interleaved(r->pd, col, 2, 4, IOVA_IND, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_interleaved: %s", strerror(errno));
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey, IOVA_IND, ar, 2,
		       pc, 8, 412);
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ibv_dereg_mr(in[i]));
		area_free(&ar[i]);
	}
}

/*
 * Depth 2: an outer key over part of an inner one (which spans both MRs)
 * and over the MRs themselves.
 */
TEST_F_TIMEOUT(indirect, key_of_keys, T_S)
{
	struct rig *r = &self->r;
	/* Inner: A[100, 3100) then B[5000, 7000), at IOVA_IND. */
	struct piece pc[4] = {
		{ 0, 1100, 2000 }, { 1, 5000, 1000 },	/* inner [1000, 4000) */
		{ 1, 2 * PAGE, 500 }, { 0, 3 * PAGE, 100 },
	};
	struct vhcav_key_range rg[3];
	struct ibv_mr *in[2], *inner, *outer;
	struct area ar[2];
	int i, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_caps(_metadata, r);
	if (r->caps.max_indirect_depth < 2)
		SKIP(return, "max_indirect_depth %u", r->caps.max_indirect_depth);
	rig_pair(_metadata, r);
	for (i = 0; i < 2; i++) {
		area_make(_metadata, &ar[i], 4 * PAGE, 420 + i);
		in[i] = area_mr(_metadata, r->pd, &ar[i], ACC);
	}
	rg[0] = (struct vhcav_key_range){ in[0]->lkey, (uintptr_t)ar[0].buf + 100,
					  3000 };
	rg[1] = (struct vhcav_key_range){ in[1]->lkey,
					  (uintptr_t)ar[1].buf + 5000, 2000 };
	inner = vhcav_reg_indirect(r->pd, rg, 2, IOVA_IND, ACC, 0);
	ASSERT_NE(NULL, inner) TH_LOG("inner key: %s", strerror(errno));
	rg[0] = (struct vhcav_key_range){ inner->lkey, IOVA_IND + 1000, 3000 };
	rg[1] = (struct vhcav_key_range){ in[1]->lkey,
					  (uintptr_t)ar[1].buf + 2 * PAGE, 500 };
	rg[2] = (struct vhcav_key_range){ in[0]->lkey,
					  (uintptr_t)ar[0].buf + 3 * PAGE, 100 };
	outer = vhcav_reg_indirect(r->pd, rg, 3, IOVA_IND + 0x1000000, ACC, 0);
	ASSERT_NE(NULL, outer) TH_LOG("outer key: %s", strerror(errno));
	layout_traffic(_metadata, &r->p, outer->lkey, outer->rkey,
		       IOVA_IND + 0x1000000, ar, 2, pc, 4, 422);
	ret = vhcav_dereg_mr(outer);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr (outer): %s", strerror(ret));
	ret = vhcav_dereg_mr(inner);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr (inner): %s", strerror(ret));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ibv_dereg_mr(in[i]));
		area_free(&ar[i]);
	}
}

/*
 * A chain of keys, each over the whole of the one before, to
 * max_indirect_depth: the deepest reaches the MR; one more is ELOOP.
 */
TEST_F_TIMEOUT(indirect, depth_limit, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 64, 2 * PAGE };
	struct vhcav_key_range rg;
	struct ibv_mr **chain, *in;
	uint64_t iova = 0;
	uint32_t d, depth;
	struct area a;
	int base, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_caps(_metadata, r);
	depth = r->caps.max_indirect_depth;
	ASSERT_GE(64, depth) TH_LOG("max_indirect_depth %u: a chain that long is not tried",
				    depth);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 430);
	in = area_mr(_metadata, r->pd, &a, ACC);
	chain = calloc(depth + 1, sizeof(*chain));
	ASSERT_NE(NULL, chain);
	rg = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf + 64, 2 * PAGE };
	for (d = 1; d <= depth; d++) {
		iova = IOVA_IND + (uint64_t)d * 0x100000;
		chain[d] = vhcav_reg_indirect(r->pd, &rg, 1, iova, ACC, 0);
		ASSERT_NE(NULL, chain[d]) TH_LOG("key of depth %u: %s", d,
						 strerror(errno));
		rg = (struct vhcav_key_range){ chain[d]->lkey, iova, 2 * PAGE };
	}
	layout_traffic(_metadata, &r->p, chain[depth]->lkey,
		       chain[depth]->rkey, iova, &a, 1, &pc, 1, 431);
	base = own_mrs(_metadata);
	WANT_NULL(ELOOP, "a key of depth max_indirect_depth + 1",
		  vhcav_reg_indirect(r->pd, &rg, 1, IOVA_IND, ACC, 0));
	SAME_MRS(base, "after the refused key");
	for (d = depth; d >= 1; d--) {
		ret = vhcav_dereg_mr(chain[d]);
		ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr depth %u: %s", d,
					 strerror(ret));
	}
	ASSERT_EQ(0, ibv_dereg_mr(in));
	free(chain);
	area_free(&a);
}

/*
 * An MR the key names is deregistered (ibv_dereg_mr): every access
 * through the key that meets it fails on the device, and never reaches
 * the pages it had: a remote READ brings nothing back, a remote WRITE
 * leaves the old pages, a gather through the lkey sends the peer nothing.
 */
TEST_F_TIMEOUT(indirect, inner_dereg, T_S)
{
	struct rig *r = &self->r;
	struct pair *p = &r->p;
	struct vhcav_key_range rg[2];
	struct ibv_mr *in[2], *mr;
	const size_t part = 2 * PAGE;	/* B's part, at IOVA_IND + part */
	struct area ar[2];
	uint8_t *peer_was;
	int i, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	for (i = 0; i < 2; i++) {
		area_make(_metadata, &ar[i], 4 * PAGE, 440 + i);
		in[i] = area_mr(_metadata, r->pd, &ar[i], ACC);
		rg[i] = (struct vhcav_key_range){ in[i]->lkey,
						  (uintptr_t)ar[i].buf, part };
	}
	mr = vhcav_reg_indirect(r->pd, rg, 2, IOVA_IND, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_indirect: %s", strerror(errno));
	ASSERT_EQ(0, ibv_dereg_mr(in[1]));

	mt_fill(p->buf, PEER_LEN, 442);
	peer_was = dup_bytes(_metadata, p->buf, PEER_LEN);
	EXPECT_WC_REFUSED(peer_read(_metadata, p, RD_OFF, IOVA_IND + part,
				    mr->rkey, part),
			  "RDMA READ through the key of the deregistered MR's part");
	same_bytes(_metadata, "the peer after the refused READ", p->buf,
		   peer_was, PEER_LEN);

	pair_restart(_metadata, r, p);
	EXPECT_WC_REFUSED(peer_write(_metadata, p, SRC_OFF, IOVA_IND + part,
				     mr->rkey, part),
			  "RDMA WRITE through the key into the deregistered MR's part");
	areas_check(_metadata, "after the refused WRITE", ar, 2);

	pair_restart(_metadata, r, p);
	EXPECT_WC_REFUSED(rdma_op(_metadata, p, IBV_WR_RDMA_WRITE,
				  IOVA_IND + part, mr->lkey,
				  (uintptr_t)p->buf + GATHER_OFF, p->mr->rkey,
				  part),
			  "RDMA WRITE gathering the deregistered MR's part");
	same_bytes(_metadata, "the peer after the refused gather", p->buf,
		   peer_was, PEER_LEN);

	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr: %s", strerror(ret));
	ASSERT_EQ(0, ibv_dereg_mr(in[0]));
	area_free(&ar[0]);
	area_free(&ar[1]);
	free(peer_was);
}

/* A key of another PD: EPERM, by both layouts. */
TEST_F_TIMEOUT(indirect, other_pd, T_S)
{
	struct rig *r = &self->r;
	struct vhcav_interleaved col;
	struct vhcav_key_range rg;
	struct ibv_mr *other;
	struct area a;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pd2(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 450);
	other = area_mr(_metadata, r->pd2, &a, ACC);
	rg = (struct vhcav_key_range){ other->lkey, (uintptr_t)a.buf, a.len };
	col = (struct vhcav_interleaved){ other->lkey, (uintptr_t)a.buf, 64, 64 };
	base = own_mrs(_metadata);
	WANT_NULL(EPERM, "vhcav_reg_indirect over another PD's MR",
		  vhcav_reg_indirect(r->pd, &rg, 1, IOVA_IND, ACC, 0));
	WANT_NULL(EPERM, "vhcav_reg_interleaved over another PD's MR",
		  vhcav_reg_interleaved(r->pd, &col, 1, 4, IOVA_IND, ACC, 0));
	SAME_MRS(base, "after the refused keys");
	ASSERT_EQ(0, ibv_dereg_mr(other));
	area_free(&a);
}

/* What the other process of indirect.other_process registered. */
struct other_mr {
	uint64_t addr;
	uint32_t len;
	uint32_t lkey;
	uint32_t rkey;
	int err;	/* errno of the step that failed, or 0 */
};

#define OTHER_SEED 460

/*
 * The other process: its own context of device @name, PD and MR of @len
 * bytes (full rights), described on @out; it waits for EOF on @in, then
 * checks that its bytes are still its own and exits 0, or 1 when not,
 * 2 when a step failed (after sending that step's errno). Never returns.
 */
static void other_process(const char *name, int in, int out, uint32_t len)
{
	struct other_mr o = { .len = len };
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd = NULL;
	uint8_t *buf, *want;
	char c;
	int i, n;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	want = malloc(len);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (buf != MAP_FAILED && want && ctx)
		pd = ibv_alloc_pd(ctx);
	if (pd) {
		mt_fill(buf, len, OTHER_SEED);
		memcpy(want, buf, len);
		mr = ibv_reg_mr(pd, buf, len, ACC);
	}
	if (mr) {
		o.addr = (uintptr_t)buf;
		o.lkey = mr->lkey;
		o.rkey = mr->rkey;
	} else {
		o.err = errno ?: ENOMEM;
	}
	if (write(out, &o, sizeof(o)) != sizeof(o) || o.err)
		_exit(2);
	while (read(in, &c, 1) > 0)
		;
	_exit(memcmp(buf, want, len) ? 1 : 0);
}

/*
 * Keys of another process's MR (its own context and PD): as keys of an
 * indirect key EPERM by both layouts, as a requested key ENOKEY (the key
 * is taken), and as an rkey of an RDMA WRITE and READ a remote access
 * error; the other process's bytes untouched.
 */
TEST_F_TIMEOUT(indirect, other_process, T_S)
{
	struct rig *r = &self->r;
	struct pair *p = &r->p;
	struct vhcav_interleaved col;
	struct vhcav_key_range rg;
	int go[2], back[2], status, base;
	struct other_mr o;
	struct area a;
	uint8_t *peer_was;
	pid_t pid;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 461);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(back));
	pid = fork();
	ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
	if (!pid) {
		close(go[1]);
		close(back[0]);
		other_process(r->name, go[0], back[1], 4 * PAGE);
	}
	close(go[0]);
	close(back[1]);
	ASSERT_EQ(sizeof(o), read(back[0], &o, sizeof(o)))
		TH_LOG("the other process sent nothing");
	ASSERT_EQ(0, o.err) TH_LOG("the other process: %s", strerror(o.err));

	rg = (struct vhcav_key_range){ o.lkey, o.addr, o.len };
	col = (struct vhcav_interleaved){ o.lkey, o.addr, 64, 64 };
	base = own_mrs(_metadata);
	WANT_NULL(EPERM, "vhcav_reg_indirect over another process's MR",
		  vhcav_reg_indirect(r->pd, &rg, 1, IOVA_IND, ACC, 0));
	WANT_NULL(EPERM, "vhcav_reg_interleaved over another process's MR",
		  vhcav_reg_interleaved(r->pd, &col, 1, 4, IOVA_IND, ACC, 0));
	WANT_NULL(ENOKEY, "vhcav_reg_mr_key, another process's key",
		  vhcav_reg_mr_key(r->pd, a.buf, a.len, IOVA_KEY, ACC, o.lkey));
	SAME_MRS(base, "after the refused registrations");

	mt_fill(p->buf, PEER_LEN, 462);
	peer_was = dup_bytes(_metadata, p->buf, PEER_LEN);
	EXPECT_WC_REFUSED(peer_write(_metadata, p, SRC_OFF, o.addr, o.rkey,
				     PAGE),
			  "RDMA WRITE with another process's rkey");
	pair_restart(_metadata, r, p);
	EXPECT_WC_REFUSED(peer_read(_metadata, p, RD_OFF, o.addr, o.rkey, PAGE),
			  "RDMA READ with another process's rkey");
	same_bytes(_metadata, "the peer after the refused READ", p->buf,
		   peer_was, PEER_LEN);

	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the other process: status 0x%x (1: its bytes changed)",
		       status);
	close(back[0]);
	free(peer_was);
	area_free(&a);
}

/*
 * No range, too many (as a list, and as a strided layout once
 * expanded), repeat 0, a range or column of 0 bytes, a range whose end
 * wraps, an iova whose end wraps, rights that are not rights.
 */
TEST_F_TIMEOUT(indirect, bad, T_S)
{
	struct rig *r = &self->r;
	struct vhcav_interleaved col[2];
	struct vhcav_key_range *rg;
	struct ibv_mr *in;
	uint32_t i, n;
	struct area a;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_caps(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 460);
	in = area_mr(_metadata, r->pd, &a, ACC);
	n = r->caps.max_ranges + 1;
	rg = calloc(n, sizeof(*rg));
	ASSERT_NE(NULL, rg);
	for (i = 0; i < n; i++)
		rg[i] = (struct vhcav_key_range){ in->lkey,
						  (uintptr_t)a.buf + (i % 64) * 64,
						  64 };
	for (i = 0; i < 2; i++)
		col[i] = (struct vhcav_interleaved){ in->lkey,
			(uintptr_t)a.buf + i * 64, 64, 64 };
	base = own_mrs(_metadata);

	WANT_NULL(EINVAL, "n 0",
		  vhcav_reg_indirect(r->pd, rg, 0, IOVA_IND, ACC, 0));
	WANT_NULL2(EINVAL, E2BIG, "n max_ranges + 1",
		   vhcav_reg_indirect(r->pd, rg, n, IOVA_IND, ACC, 0));
	rg[1].length = 0;
	WANT_NULL(EINVAL, "a range of length 0",
		  vhcav_reg_indirect(r->pd, rg, 3, IOVA_IND, ACC, 0));
	rg[1].length = UINT64_MAX - 16;
	WANT_NULL2(EINVAL, EOVERFLOW, "a range whose end wraps",
		   vhcav_reg_indirect(r->pd, rg, 3, IOVA_IND, ACC, 0));
	/* Two pages from the last page's start: the end wraps. */
	rg[0].length = PAGE;
	rg[1] = (struct vhcav_key_range){ in->lkey, (uintptr_t)a.buf + PAGE,
					  PAGE };
	WANT_NULL2(EINVAL, EOVERFLOW, "an iova whose end wraps",
		   vhcav_reg_indirect(r->pd, rg, 2, -PAGE, ACC, 0));
	rg[0].length = 64;
	rg[1].length = 64;
	WANT_NULL2(EINVAL, EOPNOTSUPP, "access MW_BIND",
		   vhcav_reg_indirect(r->pd, rg, 3, IOVA_IND,
				      ACC | IBV_ACCESS_MW_BIND, 0));
	WANT_NULL2(EINVAL, EOPNOTSUPP, "access ON_DEMAND",
		   vhcav_reg_indirect(r->pd, rg, 3, IOVA_IND, ACC | ODP, 0));

	WANT_NULL(EINVAL, "strided, n 0",
		  vhcav_reg_interleaved(r->pd, col, 0, 4, IOVA_IND, ACC, 0));
	WANT_NULL(EINVAL, "strided, repeat 0",
		  vhcav_reg_interleaved(r->pd, col, 2, 0, IOVA_IND, ACC, 0));
	WANT_NULL2(EINVAL, E2BIG, "strided, repeat * n past max_ranges",
		   vhcav_reg_interleaved(r->pd, col, 2,
					 r->caps.max_ranges / 2 + 1,
					 IOVA_IND, ACC, 0));
	col[1].bytes_count = 0;
	WANT_NULL(EINVAL, "strided, bytes_count 0",
		  vhcav_reg_interleaved(r->pd, col, 2, 4, IOVA_IND, ACC, 0));
	SAME_MRS(base, "after the refused keys");
	ASSERT_EQ(0, ibv_dereg_mr(in));
	free(rg);
	area_free(&a);
}

/* ---------------------------------------------------------------- */
/* dereg                                                            */

FIXTURE(dereg) {
	struct rig r;
};

FIXTURE_SETUP(dereg)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(dereg)
{
	rig_teardown(&self->r);
}

/* An MR of ibv_reg_mr(): EINVAL, and it stays, in use and freeable. */
TEST_F_TIMEOUT(dereg, foreign, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct mr_view v;
	struct area a;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 500);
	mr = area_mr(_metadata, r->pd, &a, ACC);
	mr_view(mr, &v);
	base = own_mrs(_metadata);
	WANT_RET(EINVAL, vhcav_dereg_mr(mr), "vhcav_dereg_mr of an ibv_reg_mr MR");
	same_view(_metadata, "refused dereg", mr, &v);
	SAME_MRS(base, "after the refused dereg");
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 501);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	SAME_MRS(base - 1, "after ibv_dereg_mr");
	area_free(&a);
}

/* A window bound to a libvhca MR: EBUSY, the MR stays; freed once unbound. */
TEST_F_TIMEOUT(dereg, windows_bound, T_S)
{
	struct rig *r = &self->r;
	struct piece pc = { 0, 0, 4 * PAGE };
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct area a;
	int base, ret;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	area_make(_metadata, &a, 4 * PAGE, 510);
	mr = vhcav_reg_mr_key(r->pd, a.buf, a.len, (uintptr_t)a.buf,
			      ACC | IBV_ACCESS_MW_BIND, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_reg_mr_key: %s", strerror(errno));
	mw = bind_mw2(_metadata, &r->p, mr, a.buf, 2 * PAGE);
	base = own_mrs(_metadata);
	WANT_RET(EBUSY, vhcav_dereg_mr(mr), "vhcav_dereg_mr with a window bound");
	/*
	 * No SAME_MRS here: 6.1's ib_dereg_mr_user() takes the MR out of
	 * restrack before the driver refuses, so rdma res stops listing an
	 * MR that stays registered (librxe's MRs too). The traffic below
	 * shows it is whole.
	 */
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)a.buf, &a, 1, &pc, 1, 511);
	mt_fill(r->p.buf + SRC_OFF, PAGE, 512);
	EXPECT_WC(IBV_WC_SUCCESS, peer_write(_metadata, &r->p, SRC_OFF,
					     (uintptr_t)a.buf, mw->rkey, PAGE),
		  "RDMA WRITE through the window");
	memcpy(a.want, r->p.buf + SRC_OFF, PAGE);
	areas_check(_metadata, "after the WRITE through the window", &a, 1);
	ASSERT_EQ(0, ibv_dealloc_mw(mw));
	ret = vhcav_dereg_mr(mr);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_dereg_mr once unbound: %s", strerror(ret));
	SAME_MRS(base - 1, "after vhcav_dereg_mr");
	area_free(&a);
}

/* ---------------------------------------------------------------- */
/* alloc: memory the kernel allocates for an MR                     */

FIXTURE(alloc) {
	struct rig r;
};

FIXTURE_SETUP(alloc)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(alloc)
{
	rig_teardown(&self->r);
}

/* This process's pinned_vm (RLIMIT_MEMLOCK's count), in kB. */
static long vm_pin_kb(struct __test_metadata *_metadata)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	ASSERT_LE(0, kb) TH_LOG("no VmPin in /proc/self/status");
	return kb;
}

/*
 * What every allocated MR of @len bytes must be: zeroed, the length
 * asked, charged to pinned_vm (@pin0 before it), usable by traffic
 * through its keys at an offset. Its block and entry counts in @blocks
 * and @entries.
 */
static void alloc_check(struct __test_metadata *_metadata, struct rig *r,
			struct ibv_mr *mr, size_t len, long pin0,
			long long *blocks, long long *entries, uint64_t seed)
{
	struct piece pc = { 0, PAGE, 4 * PAGE };
	long pin1 = vm_pin_kb(_metadata);
	struct area a;
	size_t i;

	EXPECT_EQ(len, mr->length);
	EXPECT_EQ(pin0 + (long)(len >> 10), pin1)
		TH_LOG("VmPin %ld kB before, %ld kB after", pin0, pin1);
	for (i = 0; i < len; i++)
		if (((uint8_t *)mr->addr)[i])
			break;
	EXPECT_EQ(len, i) TH_LOG("byte %zu of the new memory is not 0", i);
	*entries = mr_attr(_metadata, mr->lkey, "entries", true);
	*blocks = mr_attr(_metadata, mr->lkey, "alloc_blocks", true);
	TH_LOG("%zu MiB: %lld blocks, %lld translation entries", len >> 20,
	       *blocks, *entries);
	EXPECT_LT(0, *entries);
	EXPECT_LT(0, *blocks);

	a.buf = mr->addr;
	a.len = 8 * PAGE;
	mt_fill(a.buf, a.len, seed);
	a.want = dup_bytes(_metadata, a.buf, a.len);
	layout_traffic(_metadata, &r->p, mr->lkey, mr->rkey,
		       (uintptr_t)mr->addr + PAGE, &a, 1, &pc, 1, seed + 1);
	free(a.want);
}

/*
 * 64 MiB: mapped at an address aligned to the largest block (4 MiB), at
 * most 64 translation entries (an unfragmented VM gives 4 MiB blocks: 32
 * entries of 2 MiB); all given back at dereg.
 */
TEST_F_TIMEOUT(alloc, basic, T_S)
{
	struct rig *r = &self->r;
	size_t len = 64UL << 20;
	long long entries, blocks;
	struct ibv_mr *mr;
	int base;
	long pin0;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	rig_pair(_metadata, r);
	base = own_mrs(_metadata);
	pin0 = vm_pin_kb(_metadata);
	mr = vhcav_alloc_mr(r->pd, len, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_alloc_mr: %s", strerror(errno));
	EXPECT_EQ(0, (uintptr_t)mr->addr % (4UL << 20))
		TH_LOG("addr %p not 4 MiB aligned", mr->addr);
	alloc_check(_metadata, r, mr, len, pin0, &blocks, &entries, 601);
	EXPECT_GE(64, entries);

	ASSERT_EQ(0, vhcav_dereg_mr(mr));
	SAME_MRS(base, "after vhcav_dereg_mr");
	EXPECT_EQ(pin0, vm_pin_kb(_metadata)) TH_LOG("VmPin not given back");
}

/* fail_page_alloc's debugfs directory (CONFIG_FAIL_PAGE_ALLOC). */
#define FPA "/sys/kernel/debug/fail_page_alloc"

/* Write @val to the file @path (debugfs, cgroup, proc): 0 or -errno. */
static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

static void fpa_set(struct __test_metadata *_metadata, const char *knob,
		    const char *val)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", FPA, knob);
	ret = write_str(path, val);
	ASSERT_EQ(0, ret) TH_LOG("%s <- %s: %s", path, val, strerror(-ret));
}

/*
 * A fragmented buddy allocator, as fail_page_alloc makes one for this
 * task alone: every block of order 3 (32 KiB) and up it asks for fails.
 * An 8 MiB allocation must still succeed, from blocks of order 2 only
 * (the largest left), 512 of them, and be whole. Debug kernel only
 * (the stock kernel has no fault injection).
 */
TEST_F_TIMEOUT(alloc, fragmented, T_S)
{
	struct rig *r = &self->r;
	size_t len = 8UL << 20;
	long long entries, blocks;
	struct ibv_mr *mr;
	int base, err;
	long pin0;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	if (access(FPA, F_OK))
		SKIP(return, "no %s: this kernel has no CONFIG_FAIL_PAGE_ALLOC",
		     FPA);
	rig_pair(_metadata, r);
	base = own_mrs(_metadata);
	pin0 = vm_pin_kb(_metadata);
	/* Only tasks with make-it-fail set, every call, no budget. */
	fpa_set(_metadata, "task-filter", "Y");
	fpa_set(_metadata, "verbose", "0");
	fpa_set(_metadata, "interval", "1");
	fpa_set(_metadata, "times", "-1");
	fpa_set(_metadata, "space", "0");
	/* vhca's blocks are GFP_HIGHUSER: sleeping and highmem allowed. */
	fpa_set(_metadata, "ignore-gfp-wait", "N");
	fpa_set(_metadata, "ignore-gfp-highmem", "N");
	fpa_set(_metadata, "min-order", "3");
	fpa_set(_metadata, "probability", "100");
	ASSERT_EQ(0, write_str("/proc/thread-self/make-it-fail", "1"));
	mr = vhcav_alloc_mr(r->pd, len, ACC, 0);
	err = errno;
	ASSERT_EQ(0, write_str("/proc/thread-self/make-it-fail", "0"));
	fpa_set(_metadata, "probability", "0");
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_alloc_mr with no block over order 2: %s",
				   strerror(err));
	alloc_check(_metadata, r, mr, len, pin0, &blocks, &entries, 611);
	EXPECT_EQ(len / (4 * PAGE), blocks)
		TH_LOG("%lld blocks; want %zu of order 2", blocks,
		       len / (4 * PAGE));

	ASSERT_EQ(0, vhcav_dereg_mr(mr));
	SAME_MRS(base, "after vhcav_dereg_mr");
	EXPECT_EQ(pin0, vm_pin_kb(_metadata)) TH_LOG("VmPin not given back");
}

/* The memory cgroup alloc.memcg runs in (cgroup v2). */
#define CG_ROOT "/sys/fs/cgroup"
#define CG CG_ROOT "/mrc_alloc"

/* A cgroup file's first number; -1 when unreadable. */
static long long cg_read(const char *path, const char *key)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen(path, "r");
	size_t klen = key ? strlen(key) : 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (key && (strncmp(line, key, klen) || line[klen] != ' '))
			continue;
		v = strtoll(line + (key ? klen + 1 : 0), NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

static bool cg_has_memory(void)
{
	char line[256] = "";
	FILE *f = fopen(CG_ROOT "/cgroup.controllers", "r");

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return strstr(line, "memory");
}

static void cg_write(struct __test_metadata *_metadata, const char *path,
		     const char *val)
{
	int ret = write_str(path, val);

	ASSERT_EQ(0, ret) TH_LOG("%s <- %s: %s", path, val, strerror(-ret));
}

/*
 * The pages of an allocated MR are charged to the caller's memory cgroup
 * (__GFP_ACCOUNT): in a cgroup whose memory.max is 16 MiB a 64 MiB
 * allocation fails with ENOMEM part way, every block already taken given
 * back (memory.current where it was), nothing registered or charged to
 * pinned_vm; with room for it, the cgroup holds its 64 MiB until the MR
 * is deregistered. Kernels with the memory controller (the stock one).
 */
TEST_F_TIMEOUT(alloc, memcg, T_S)
{
	struct rig *r = &self->r;
	size_t len = 64UL << 20;
	long long cur0, cur1, ooms;
	struct ibv_mr *mr;
	int base, err;
	char pid[32];
	long pin0;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	if (!cg_has_memory())
		SKIP(return, "no memory controller in %s (cgroup v2)", CG_ROOT);
	rig_pair(_metadata, r);
	cg_write(_metadata, CG_ROOT "/cgroup.subtree_control", "+memory");
	rmdir(CG);	/* a failed run's, empty */
	ASSERT_EQ(0, mkdir(CG, 0755)) TH_LOG("mkdir %s: %s", CG, strerror(errno));
	snprintf(pid, sizeof(pid), "%d", getpid());
	cg_write(_metadata, CG "/memory.max", "16M");
	cg_write(_metadata, CG "/cgroup.procs", pid);
	base = own_mrs(_metadata);
	pin0 = vm_pin_kb(_metadata);
	cur0 = cg_read(CG "/memory.current", NULL);

	mr = vhcav_alloc_mr(r->pd, len, ACC, 0);
	err = errno;
	cur1 = cg_read(CG "/memory.current", NULL);
	ooms = cg_read(CG "/memory.events", "max");
	want_null(_metadata, "64 MiB in a cgroup of 16 MiB", mr, err, ENOMEM, -1);
	SAME_MRS(base, "after the refused allocation");
	EXPECT_EQ(pin0, vm_pin_kb(_metadata)) TH_LOG("VmPin changed");
	EXPECT_LT(0, ooms) TH_LOG("memory.events: the limit was never hit");
	/* Slab may keep a few pages charged; the blocks are all back. */
	EXPECT_GT(cur0 + (1 << 20), cur1)
		TH_LOG("memory.current %lld before, %lld after", cur0, cur1);

	cg_write(_metadata, CG "/memory.max", "max");
	mr = vhcav_alloc_mr(r->pd, len, ACC, 0);
	ASSERT_NE(NULL, mr) TH_LOG("vhcav_alloc_mr: %s", strerror(errno));
	cur1 = cg_read(CG "/memory.current", NULL);
	/* Its blocks, less what slab gave back meanwhile. */
	EXPECT_LE(cur0 + (long long)len - (1 << 20), cur1)
		TH_LOG("memory.current %lld before, %lld with the MR", cur0, cur1);
	ASSERT_EQ(0, vhcav_dereg_mr(mr));
	cur1 = cg_read(CG "/memory.current", NULL);
	EXPECT_GT(cur0 + (1 << 20), cur1)
		TH_LOG("memory.current %lld before, %lld after dereg", cur0, cur1);
	SAME_MRS(base, "after vhcav_dereg_mr");

	cg_write(_metadata, CG_ROOT "/cgroup.procs", pid);
	EXPECT_EQ(0, rmdir(CG)) TH_LOG("rmdir %s: %s", CG, strerror(errno));
}

/* Refused: nothing registered, nothing charged. */
TEST_F_TIMEOUT(alloc, bad, T_S)
{
	struct ibv_pd *pd = self->r.pd;
	struct vhcav_caps caps;
	long pin0;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	ASSERT_EQ(0, vhcav_query(self->r.ctx, &caps));
	base = own_mrs(_metadata);
	pin0 = vm_pin_kb(_metadata);
	WANT_NULL(EINVAL, "length 0", vhcav_alloc_mr(pd, 0, ACC, 0));
	WANT_NULL(EINVAL, "past max_alloc",
		  vhcav_alloc_mr(pd, caps.max_alloc + 1, ACC, 0));
	WANT_NULL(EINVAL, "ON_DEMAND", vhcav_alloc_mr(pd, PAGE, ACC | ODP, 0));
	WANT_NULL(EINVAL, "remote write without local write",
		  vhcav_alloc_mr(pd, PAGE, RW | RR, 0));
	WANT_NULL(EKEYREJECTED, "a key of index 0",
		  vhcav_alloc_mr(pd, PAGE, ACC, 0x42));
	SAME_MRS(base, "after the refused allocations");
	EXPECT_EQ(pin0, vm_pin_kb(_metadata)) TH_LOG("VmPin changed");
}

/* ---------------------------------------------------------------- */
/* Raw ioctls: what libvhca never sends                             */

FIXTURE(raw) {
	struct rig r;
};

FIXTURE_SETUP(raw)
{
	rig_setup(_metadata, &self->r);
}

FIXTURE_TEARDOWN(raw)
{
	rig_teardown(&self->r);
}

#define RAW_MAX 12

/* One RDMA_VERBS_IOCTL being built, and where its outputs land. */
struct raw {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[RAW_MAX];
	uint32_t lkey, rkey, blocks;
	uint64_t offset;
	struct vhca_uapi_caps caps;
};

static struct ib_uverbs_attr *raw_add(struct raw *q, uint16_t id, uint16_t len,
				      uint64_t data)
{
	struct ib_uverbs_attr *a = &q->attrs[q->hdr.num_attrs++];

	*a = (struct ib_uverbs_attr){ .attr_id = id, .len = len,
		.flags = UVERBS_ATTR_F_MANDATORY, .data = data };
	return a;
}

/* The errno of @q on @ctx's command fd, 0 on success. */
static int raw_call(struct ibv_context *ctx, struct raw *q)
{
	q->hdr.length = sizeof(q->hdr) + q->hdr.num_attrs * sizeof(q->attrs[0]);
	q->hdr.driver_id = RDMA_DRIVER_RXE;
	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &q->hdr) ? errno : 0;
}

/* MR_ALLOC of one page on @pd, every attribute as libvhca sends it. */
static void raw_alloc(struct raw *q, struct ibv_pd *pd)
{
	memset(q, 0, sizeof(*q));
	q->hdr.object_id = UVERBS_OBJECT_MR;
	q->hdr.method_id = VHCA_IB_METHOD_MR_ALLOC;
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_HANDLE, 0, 0);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_PD_HANDLE, 0, pd->handle);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_LENGTH, 8, PAGE);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_IOVA, 8, 0);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_ACCESS, 8, IB_UVERBS_ACCESS_LOCAL_WRITE);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY, 4, (uintptr_t)&q->lkey);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_RESP_RKEY, 4, (uintptr_t)&q->rkey);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_RESP_MMAP_OFFSET, 8,
		(uintptr_t)&q->offset);
	raw_add(q, VHCA_IB_ATTR_MR_ALLOC_RESP_BLOCKS, 4, (uintptr_t)&q->blocks);
}

/* The attribute @id of @q. */
static struct ib_uverbs_attr *raw_attr(struct raw *q, uint16_t id)
{
	unsigned int i;

	for (i = 0; i < q->hdr.num_attrs; i++)
		if (q->attrs[i].attr_id == id)
			return &q->attrs[i];
	return NULL;
}

/* Destroy the MR whose handle @q's HANDLE attribute got back. */
static int raw_destroy(struct ibv_context *ctx, struct raw *q)
{
	struct raw d = { 0 };

	d.hdr.object_id = UVERBS_OBJECT_MR;
	d.hdr.method_id = UVERBS_METHOD_MR_DESTROY;
	raw_add(&d, UVERBS_ATTR_DESTROY_MR_HANDLE, 0,
		raw_attr(q, VHCA_IB_ATTR_MR_ALLOC_HANDLE)->data);
	return raw_call(ctx, &d);
}

/* @q must fail with @want; one that succeeded is undone first. */
static void raw_want(struct __test_metadata *_metadata, struct rig *r,
		     int want, const char *what, struct raw *q)
{
	int got = raw_call(r->ctx, q);

	if (!got)
		raw_destroy(r->ctx, q);
	EXPECT_EQ(want, got) TH_LOG("%s: %s, want %s", what,
				    got ? strerror(got) : "success",
				    strerror(want));
}

/*
 * MR_ALLOC and QUERY with attributes libvhca never sends: short, long
 * (zero or garbage tail), reserved bits, unknown rights, an unknown
 * mandatory attribute, a duplicate, a missing one, another object's
 * handle, a bad pointer. Each refused (the as-sent call succeeds, so the
 * builder is right), nothing registered or charged after them.
 */
TEST_F_TIMEOUT(raw, mr_alloc, T_S)
{
	struct rig *r = &self->r;
	uint64_t tail[2] = { PAGE, 0 };
	struct ib_uverbs_attr *a;
	struct raw q;
	long pin0;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	base = own_mrs(_metadata);
	pin0 = vm_pin_kb(_metadata);

	raw_alloc(&q, r->pd);
	ASSERT_EQ(0, raw_call(r->ctx, &q)) TH_LOG("MR_ALLOC as libvhca sends it");
	EXPECT_EQ(1, q.blocks);
	EXPECT_NE(0, q.lkey);
	ASSERT_EQ(0, raw_destroy(r->ctx, &q));

	raw_alloc(&q, r->pd);
	raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_LENGTH)->len = 4;
	raw_want(_metadata, r, EINVAL, "LENGTH of 4 bytes", &q);

	raw_alloc(&q, r->pd);
	a = raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_LENGTH);
	a->len = sizeof(tail);
	a->data = (uintptr_t)tail;
	raw_want(_metadata, r, EINVAL, "LENGTH of 16 bytes, the tail 0", &q);
	tail[1] = 0xdead;
	raw_want(_metadata, r, EINVAL, "LENGTH of 16 bytes, a garbage tail", &q);

	raw_alloc(&q, r->pd);
	raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY)->len = 2;
	raw_want(_metadata, r, EINVAL, "RESP_LKEY of 2 bytes", &q);

	raw_alloc(&q, r->pd);
	raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_IOVA)->attr_data.reserved = 1;
	raw_want(_metadata, r, EINVAL, "IOVA with its reserved field set", &q);

	raw_alloc(&q, r->pd);
	raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_ACCESS)->data |= 1ULL << 40;
	raw_want(_metadata, r, EINVAL, "ACCESS with an unknown right", &q);

	raw_alloc(&q, r->pd);
	raw_add(&q, VHCA_IB_ATTR_MR_ALLOC_RESP_BLOCKS + 7, 8, 0);
	raw_want(_metadata, r, EPROTONOSUPPORT, "an unknown mandatory attribute", &q);

	raw_alloc(&q, r->pd);
	raw_add(&q, VHCA_IB_ATTR_MR_ALLOC_LENGTH, 8, PAGE);
	raw_want(_metadata, r, EINVAL, "LENGTH twice", &q);

	raw_alloc(&q, r->pd);
	q.hdr.num_attrs--;	/* RESP_BLOCKS */
	raw_want(_metadata, r, EINVAL, "no RESP_BLOCKS", &q);

	raw_alloc(&q, r->pd);
	raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_PD_HANDLE)->data = r->pd->handle + 1000;
	raw_want(_metadata, r, ENOENT, "a PD handle that names nothing", &q);

	raw_alloc(&q, r->pd);
	raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY)->data = 8;
	raw_want(_metadata, r, EFAULT, "RESP_LKEY at address 8", &q);

	raw_alloc(&q, r->pd);
	raw_attr(&q, VHCA_IB_ATTR_MR_ALLOC_LENGTH)->data = -PAGE;
	raw_want(_metadata, r, EINVAL, "LENGTH of 2^64 - 4096", &q);

	SAME_MRS(base, "after the refused ioctls");
	EXPECT_EQ(pin0, vm_pin_kb(_metadata)) TH_LOG("VmPin changed");
}

/*
 * REG_INDIRECT with arrays libvhca never sends: a RANGES length that is
 * not a whole number of ranges, a range's reserved field set, RANGES and
 * INTERLEAVED together, neither, a bad pointer; QUERY's output short.
 */
TEST_F_TIMEOUT(raw, reg_indirect_query, T_S)
{
	struct rig *r = &self->r;
	struct vhca_uapi_key_range rg[2];
	struct ibv_mr *in;
	struct area a;
	struct raw q;
	int base;

	if (!self->r.vhca)
		SKIP(return, "%s is not a vhca device", self->r.name);
	area_make(_metadata, &a, 4 * PAGE, 470);
	in = area_mr(_metadata, r->pd, &a, ACC);
	base = own_mrs(_metadata);

#define RAW_IND(ranges_len) do {					\
	memset(&q, 0, sizeof(q));					\
	q.hdr.object_id = UVERBS_OBJECT_MR;				\
	q.hdr.method_id = VHCA_IB_METHOD_MR_REG_INDIRECT;		\
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_HANDLE, 0, 0);		\
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_PD_HANDLE, 0, r->pd->handle); \
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_RANGES, (ranges_len),	\
		(uintptr_t)rg);						\
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_IOVA, 8, IOVA_IND);	\
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_ACCESS, 8,		\
		IB_UVERBS_ACCESS_LOCAL_WRITE);				\
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_RESP_LKEY, 4, (uintptr_t)&q.lkey); \
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_RESP_RKEY, 4, (uintptr_t)&q.rkey); \
} while (0)

	rg[0] = (struct vhca_uapi_key_range){ in->lkey, 0, (uintptr_t)a.buf, PAGE };
	rg[1] = (struct vhca_uapi_key_range){ in->lkey, 0,
					      (uintptr_t)a.buf + PAGE, PAGE };
	RAW_IND(sizeof(rg));
	ASSERT_EQ(0, raw_call(r->ctx, &q)) TH_LOG("REG_INDIRECT as libvhca sends it");
	ASSERT_EQ(0, raw_destroy(r->ctx, &q));

	RAW_IND(sizeof(rg) - 4);
	raw_want(_metadata, r, EINVAL, "RANGES of one range and a half", &q);
	RAW_IND(sizeof(rg) + 8);
	raw_want(_metadata, r, EINVAL, "RANGES of two ranges and 8 bytes", &q);
	RAW_IND(0);
	raw_want(_metadata, r, EINVAL, "RANGES of 0 bytes", &q);

	rg[1].reserved = 1;
	RAW_IND(sizeof(rg));
	raw_want(_metadata, r, EINVAL, "a range's reserved field set", &q);
	rg[1].reserved = 0;

	RAW_IND(sizeof(rg));
	raw_add(&q, VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED, sizeof(rg),
		(uintptr_t)rg);
	raw_want(_metadata, r, EINVAL, "RANGES and INTERLEAVED", &q);

	RAW_IND(sizeof(rg));
	raw_attr(&q, VHCA_IB_ATTR_REG_INDIRECT_RANGES)->attr_id =
		VHCA_IB_ATTR_REG_INDIRECT_REPEAT;
	raw_attr(&q, VHCA_IB_ATTR_REG_INDIRECT_REPEAT)->len = 4;
	raw_attr(&q, VHCA_IB_ATTR_REG_INDIRECT_REPEAT)->data = 1;
	raw_want(_metadata, r, EINVAL, "neither RANGES nor INTERLEAVED", &q);

	RAW_IND(sizeof(rg));
	raw_attr(&q, VHCA_IB_ATTR_REG_INDIRECT_RANGES)->data = 8;
	raw_want(_metadata, r, EFAULT, "RANGES at address 8", &q);
#undef RAW_IND

	memset(&q, 0, sizeof(q));
	q.hdr.object_id = UVERBS_OBJECT_DEVICE;
	q.hdr.method_id = VHCA_IB_METHOD_QUERY;
	raw_add(&q, VHCA_IB_ATTR_QUERY_RESP, sizeof(q.caps), (uintptr_t)&q.caps);
	ASSERT_EQ(0, raw_call(r->ctx, &q)) TH_LOG("QUERY as libvhca sends it");
	raw_attr(&q, VHCA_IB_ATTR_QUERY_RESP)->len = 8;
	EXPECT_EQ(EINVAL, raw_call(r->ctx, &q)) TH_LOG("QUERY into 8 bytes");

	SAME_MRS(base, "after the refused ioctls");
	ASSERT_EQ(0, ibv_dereg_mr(in));
	area_free(&a);
}

TEST_HARNESS_MAIN
