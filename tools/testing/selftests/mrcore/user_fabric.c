// SPDX-License-Identifier: GPL-2.0
/*
 * libfabric's verbs provider (Debian's libfabric 1.17, unchanged) over one
 * device, and libvhca where the provider refuses a feature of seed 000:
 * user_fabric.sh runs this in the host root's chroot (user_lib.sh), over
 * vhca0 and then over rxe0.
 *
 * Each case opens provider "verbs" on the device's domain (FI_EP_MSG,
 * FI_MSG | FI_RMA, mr_mode FI_MR_LOCAL | FI_MR_VIRT_ADDR |
 * FI_MR_ALLOCATED | FI_MR_PROV_KEY, what the provider asks, as
 * fi_pingpong does), listens on a passive endpoint at the device's IPv4
 * address and connects a client endpoint of this process to it
 * (fi_connect, FI_CONNREQ, fi_accept, FI_CONNECTED on both: one event
 * queue, one thread). RMA writes and reads from the client go through the
 * keys of the server's MRs; the bytes are checked where they must land
 * and where they must not.
 *
 * The provider's MR cache is turned off (FI_MR_CACHE_MONITOR=disabled,
 * set before libfabric reads it): each fi_mr_reg*() is then one
 * ibv_reg_mr() and each fi_close() one ibv_dereg_mr(), which is what the
 * cases count in "rdma res show mr"; with the cache on, fi_close() keeps
 * the registration for reuse.
 *
 * Refusals of the verbs provider 1.17 (prov/verbs/src/verbs_mr.c): a
 * requested key is ignored (FI_MR_PROV_KEY: the key is the device's);
 * fi_mr_regv() of more than one iovec fails with -FI_EINVAL; fi_mr_bind()
 * fails with -FI_ENOSYS (the MR's bind op is fi_no_bind). After the first
 * two, libvhca's equivalent (vhcav_reg_mr_key, vhcav_reg_mr_iov) runs on
 * the same device, opened by name with libibverbs: on vhca0 the key is
 * the one asked for and the iovec is one MR, bytes checked through a
 * self-connected RC QP; on rxe0 (MRC_UDEV_TYPE=rxe) each fails with
 * EOPNOTSUPP.
 *
 * The seed's other items each have a case: the FI_SEND and FI_RECV
 * rights, the reserved offset and flags, fi_close of an MR in use (the
 * provider binds MRs to nothing, so it has no -FI_EBUSY), FI_REG_MR
 * events on an EQ bound to the domain, and the scalable mode, for which
 * fi_getinfo finds no verbs domain. Where the seed allows more than one
 * answer, the provider's is logged and must be one of them.
 *
 * Facts that may differ between devices are logged as "observed:
 * NAME=VALUE"; user_fabric.sh compares them across vhca0 and rxe0.
 *
 * Environment: MRC_UDEV (device, default vhca0), MRC_UDEV_TYPE (vhca or
 * rxe; default from the name), MRC_UADDR (its IPv4 address, required),
 * MRC_UPORT (port, default 20887).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <linux/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <infiniband/verbs.h>
#include <vhca/verbs.h>

#include "user_util.h"

#define PAGE		4096UL
#define BUF_LEN		(16 * PAGE)
#define T_S		120	/* per test: TCG, a debug kernel */
#define DEADLINE_MS	30000
#define FAB_ACC		(FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define IBV_ACC		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define KEY_VARIANT	0xc3	/* the variant byte of the keys asked for */
#define IOVA_KEY	0x40000000ULL

struct fab {
	const char *dev;
	bool vhca;
	const char *addr;
	const char *port;
	struct fi_info *hints, *pinfo, *cinfo, *sinfo;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_eq *deq;	/* bound to the domain (FI_REG_MR) */
	struct fid_pep *pep;
	struct fid_ep *cep, *sep;
	struct fid_cq *ccq, *scq;
	__u8 *sbuf, *cbuf;	/* the server's and the client's, BUF_LEN */
	struct fid_mr *lmr;	/* over cbuf: the RMA's local side */
	/* libvhca's side: the device opened by libibverbs */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;	/* RC, connected to itself */
	struct ibv_mr *pmr;	/* plain MR over cbuf */
	struct ibv_mr *vmr;	/* libvhca's MR under test */
};

FIXTURE(fab) {
	struct fab f;
};

FIXTURE_SETUP(fab)
{
	const char *type = getenv("MRC_UDEV_TYPE");
	struct fab *f = &self->f;

	f->dev = getenv("MRC_UDEV") ?: "vhca0";
	f->vhca = type ? !strcmp(type, "vhca") : !strncmp(f->dev, "vhca", 4);
	f->addr = getenv("MRC_UADDR");
	f->port = getenv("MRC_UPORT") ?: "20887";
	ASSERT_NE(NULL, f->addr) TH_LOG("MRC_UADDR is not set");
	/* Read once, when libfabric initialises: before fi_getinfo(). */
	setenv("FI_MR_CACHE_MONITOR", "disabled", 1);
}

static void fab_close(struct fid *fid)
{
	if (fid)
		fi_close(fid);
}

/* Best effort: a failed test leaves the rest to its process's exit. */
FIXTURE_TEARDOWN(fab)
{
	struct fab *f = &self->f;

	if (f->vmr)
		vhcav_dereg_mr(f->vmr);
	if (f->pmr)
		ibv_dereg_mr(f->pmr);
	if (f->qp)
		ibv_destroy_qp(f->qp);
	if (f->cq)
		ibv_destroy_cq(f->cq);
	if (f->pd)
		ibv_dealloc_pd(f->pd);
	if (f->ctx)
		ibv_close_device(f->ctx);
	fab_close(f->lmr ? &f->lmr->fid : NULL);
	fab_close(f->sep ? &f->sep->fid : NULL);
	fab_close(f->cep ? &f->cep->fid : NULL);
	fab_close(f->scq ? &f->scq->fid : NULL);
	fab_close(f->ccq ? &f->ccq->fid : NULL);
	fab_close(f->pep ? &f->pep->fid : NULL);
	fab_close(f->eq ? &f->eq->fid : NULL);
	fab_close(f->domain ? &f->domain->fid : NULL);
	fab_close(f->deq ? &f->deq->fid : NULL);
	fab_close(f->fabric ? &f->fabric->fid : NULL);
	if (f->sinfo)
		fi_freeinfo(f->sinfo);
	if (f->cinfo)
		fi_freeinfo(f->cinfo);
	if (f->pinfo)
		fi_freeinfo(f->pinfo);
	if (f->hints)
		fi_freeinfo(f->hints);
	if (f->sbuf)
		munmap(f->sbuf, BUF_LEN);
	if (f->cbuf)
		munmap(f->cbuf, BUF_LEN);
}

/* ---------------------------------------------------------------- */
/* libfabric: the pair                                              */

static struct fi_info *fab_getinfo(struct __test_metadata *_metadata,
				   struct fab *f, bool passive)
{
	struct fi_info *info = NULL;
	int ret;

	ret = fi_getinfo(FI_VERSION(1, 17), f->addr, f->port,
			 passive ? FI_SOURCE : 0, f->hints, &info);
	ASSERT_EQ(0, ret) TH_LOG("fi_getinfo(verbs, %s, %s%s): %s", f->dev,
				 f->addr, passive ? ", FI_SOURCE" : "",
				 fi_strerror(-ret));
	ASSERT_STREQ("verbs", info->fabric_attr->prov_name);
	ASSERT_STREQ(f->dev, info->domain_attr->name);
	ASSERT_EQ(FI_EP_MSG, info->ep_attr->type);
	/* The provider chooses the keys: the refusal cases rest on it. */
	ASSERT_TRUE(info->domain_attr->mr_mode & FI_MR_PROV_KEY);
	return info;
}

/* What every case asks for: the verbs provider on the device, FI_EP_MSG. */
static void fab_hints(struct __test_metadata *_metadata, struct fab *f)
{
	f->hints = fi_allocinfo();
	ASSERT_NE(NULL, f->hints);
	f->hints->caps = FI_MSG | FI_RMA;
	f->hints->mode = FI_CONTEXT;
	f->hints->ep_attr->type = FI_EP_MSG;
	f->hints->addr_format = FI_SOCKADDR_IN;
	f->hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
					 FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	f->hints->fabric_attr->prov_name = strdup("verbs");
	f->hints->domain_attr->name = strdup(f->dev);
	ASSERT_TRUE(f->hints->fabric_attr->prov_name && f->hints->domain_attr->name);
}

/* A CQ bound to @ep, the EQ too; the endpoint enabled. */
static void fab_ep_up(struct __test_metadata *_metadata, struct fab *f,
		      struct fid_ep *ep, struct fid_cq **cq)
{
	struct fi_cq_attr ca = {
		.size = 64, .format = FI_CQ_FORMAT_CONTEXT,
		.wait_obj = FI_WAIT_NONE,
	};
	int ret;

	ret = fi_cq_open(f->domain, &ca, cq, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_cq_open: %s", fi_strerror(-ret));
	ret = fi_ep_bind(ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV);
	ASSERT_EQ(0, ret) TH_LOG("fi_ep_bind (CQ): %s", fi_strerror(-ret));
	ret = fi_ep_bind(ep, &f->eq->fid, 0);
	ASSERT_EQ(0, ret) TH_LOG("fi_ep_bind (EQ): %s", fi_strerror(-ret));
	ret = fi_enable(ep);
	ASSERT_EQ(0, ret) TH_LOG("fi_enable: %s", fi_strerror(-ret));
}

/*
 * The provider on the device, a passive endpoint listening on the
 * address, a client endpoint connected to it and the server's endpoint
 * accepted; buffers mapped (server 0xa5, client 0x5a), the client's
 * registered with fi_mr_reg() as the RMA's local side (FI_MR_LOCAL).
 */
static void fab_up(struct __test_metadata *_metadata, struct fab *f)
{
	struct fi_eq_attr ea = { .size = 16, .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry entry;
	__u64 end = uu_now_ms() + DEADLINE_MS;
	bool cdone = false, sdone = false;
	__u32 event;
	ssize_t n;
	int ret;

	f->sbuf = uu_map_buf(_metadata, BUF_LEN, 0xa5);
	f->cbuf = uu_map_buf(_metadata, BUF_LEN, 0x5a);
	fab_hints(_metadata, f);

	f->pinfo = fab_getinfo(_metadata, f, true);
	f->cinfo = fab_getinfo(_metadata, f, false);
	ret = fi_fabric(f->pinfo->fabric_attr, &f->fabric, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_fabric: %s", fi_strerror(-ret));
	ret = fi_eq_open(f->fabric, &ea, &f->eq, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_eq_open: %s", fi_strerror(-ret));
	ret = fi_passive_ep(f->fabric, f->pinfo, &f->pep, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_passive_ep: %s", fi_strerror(-ret));
	ret = fi_pep_bind(f->pep, &f->eq->fid, 0);
	ASSERT_EQ(0, ret) TH_LOG("fi_pep_bind: %s", fi_strerror(-ret));
	ret = fi_listen(f->pep);
	ASSERT_EQ(0, ret) TH_LOG("fi_listen: %s", fi_strerror(-ret));

	ret = fi_domain(f->fabric, f->cinfo, &f->domain, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_domain(%s): %s", f->dev, fi_strerror(-ret));
	ret = fi_endpoint(f->domain, f->cinfo, &f->cep, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_endpoint (client): %s", fi_strerror(-ret));
	fab_ep_up(_metadata, f, f->cep, &f->ccq);
	ret = fi_connect(f->cep, f->cinfo->dest_addr, NULL, 0);
	ASSERT_EQ(0, ret) TH_LOG("fi_connect: %s", fi_strerror(-ret));

	/* One EQ: the client's address and route events, FI_CONNREQ, both
	 * FI_CONNECTED, in whatever order the CM gives them.
	 */
	while (!(cdone && sdone)) {
		ASSERT_GT(end, uu_now_ms())
			TH_LOG("not connected in %d ms (client %d, server %d)",
			       DEADLINE_MS, cdone, sdone);
		n = fi_eq_sread(f->eq, &event, &entry, sizeof(entry), 1000, 0);
		if (n == -FI_EAGAIN)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry e = { 0 };

			fi_eq_readerr(f->eq, &e, 0);
			ASSERT_EQ(0, e.err) TH_LOG("EQ error: %s (provider %d)",
						   fi_strerror(e.err), e.prov_errno);
		}
		ASSERT_EQ((ssize_t)sizeof(entry), n) TH_LOG("fi_eq_sread: %s",
							    fi_strerror((int)-n));
		if (event == FI_CONNREQ) {
			ASSERT_EQ(NULL, f->sep) TH_LOG("a second FI_CONNREQ");
			f->sinfo = entry.info;
			ret = fi_endpoint(f->domain, f->sinfo, &f->sep, NULL);
			ASSERT_EQ(0, ret) TH_LOG("fi_endpoint (server): %s",
						 fi_strerror(-ret));
			fab_ep_up(_metadata, f, f->sep, &f->scq);
			ret = fi_accept(f->sep, NULL, 0);
			ASSERT_EQ(0, ret) TH_LOG("fi_accept: %s", fi_strerror(-ret));
		} else if (event == FI_CONNECTED && entry.fid == &f->cep->fid) {
			cdone = true;
		} else if (event == FI_CONNECTED && f->sep && entry.fid == &f->sep->fid) {
			sdone = true;
		} else {
			ASSERT_TRUE(false) TH_LOG("unexpected EQ event %u", event);
		}
	}
	ret = fi_mr_reg(f->domain, f->cbuf, BUF_LEN, FI_READ | FI_WRITE, 0, 0, 0,
			&f->lmr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg of the local buffer: %s",
				 fi_strerror(-ret));
}

/*
 * The next completion of @cq, which must be @ctx's, within DEADLINE_MS:
 * 0, or the completion's error (positive FI_E* value) when it failed.
 */
static int fab_cq_wait(struct __test_metadata *_metadata, struct fid_cq *cq,
		       struct fi_context *ctx)
{
	__u64 end = uu_now_ms() + DEADLINE_MS;
	struct fi_cq_entry comp;
	ssize_t n;

	while (uu_now_ms() < end) {
		n = fi_cq_read(cq, &comp, 1);
		if (n == -FI_EAGAIN) {
			usleep(100);
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e = { 0 };

			n = fi_cq_readerr(cq, &e, 0);
			ASSERT_EQ(1, n);
			ASSERT_EQ(ctx, e.op_context);
			TH_LOG("completion error: %s (provider %d)",
			       fi_strerror(e.err), e.prov_errno);
			ASSERT_NE(0, e.err);
			return e.err;
		}
		ASSERT_EQ(1, n) TH_LOG("fi_cq_read: %s", fi_strerror((int)-n));
		ASSERT_EQ(ctx, comp.op_context);
		return 0;
	}
	ASSERT_TRUE(false) TH_LOG("no completion in %d ms", DEADLINE_MS);
	return -1;
}

/*
 * One RMA (@read or write) of @len bytes between cbuf + @loff and the
 * server's @raddr through @key: 0, or the completion's error (positive
 * FI_E* value) when it failed.
 */
static int fab_rma(struct __test_metadata *_metadata, struct fab *f,
		   bool read, size_t loff, __u64 raddr, __u64 key, size_t len)
{
	struct fi_context ctx;
	__u64 end = uu_now_ms() + DEADLINE_MS;
	ssize_t n;

	do {
		n = read ? fi_read(f->cep, f->cbuf + loff, len, fi_mr_desc(f->lmr),
				   0, raddr, key, &ctx) :
			   fi_write(f->cep, f->cbuf + loff, len, fi_mr_desc(f->lmr),
				    0, raddr, key, &ctx);
		if (n == -FI_EAGAIN)
			fi_cq_read(f->ccq, NULL, 0);
	} while (n == -FI_EAGAIN && uu_now_ms() < end);
	ASSERT_EQ(0, n) TH_LOG("fi_%s: %s", read ? "read" : "write",
			       fi_strerror((int)-n));
	return fab_cq_wait(_metadata, f->ccq, &ctx);
}

/*
 * Traffic through the server's MR @mr, which covers sbuf + @off on: a
 * write of 2 pages + 3 bytes into it at + PAGE + 7, a read of them back
 * into the client's buffer; the bytes where they land and around them.
 */
static void fab_traffic(struct __test_metadata *_metadata, struct fab *f,
			struct fid_mr *mr, size_t off, unsigned int seed)
{
	size_t at = off + PAGE + 7, len = 2 * PAGE + 3;
	__u64 key = fi_mr_key(mr);
	int err;

	ASSERT_NE(NULL, fi_mr_desc(mr));
	ASSERT_NE(FI_KEY_NOTAVAIL, key);
	uu_fill(f->cbuf, 4 * PAGE, seed);
	err = fab_rma(_metadata, f, false, 0, (uintptr_t)f->sbuf + at, key, len);
	ASSERT_EQ(0, err) TH_LOG("fi_write through key 0x%llx: %s",
				 (unsigned long long)key, fi_strerror(err));
	uu_is_pattern(_metadata, "written", f->sbuf + at, len, seed, 0);
	uu_is_fill(_metadata, "before the write", f->sbuf, at, 0xa5);
	uu_is_fill(_metadata, "after the write", f->sbuf + at + len,
		   BUF_LEN - at - len, 0xa5);
	err = fab_rma(_metadata, f, true, 8 * PAGE, (uintptr_t)f->sbuf + at, key,
		      len);
	ASSERT_EQ(0, err) TH_LOG("fi_read through key 0x%llx: %s",
				 (unsigned long long)key, fi_strerror(err));
	uu_is_pattern(_metadata, "read back", f->cbuf + 8 * PAGE, len, seed, 0);
	uu_is_fill(_metadata, "after the read", f->cbuf + 8 * PAGE + len,
		   8 * PAGE - len, 0x5a);
}

/* ---------------------------------------------------------------- */
/* libfabric: registration and RMA                                  */

/* fi_mr_reg, fi_mr_desc, fi_mr_key, RMA both ways, fi_close. */
TEST_F_TIMEOUT(fab, mr_reg, T_S)
{
	struct fab *f = &self->f;
	struct fid_mr *mr;
	int before, ret;

	fab_up(_metadata, f);
	before = uu_res_count(_metadata, f->dev, "mr");
	ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, 0, 0, 0, &mr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg: %s", fi_strerror(-ret));
	ASSERT_EQ(before + 1, uu_res_count(_metadata, f->dev, "mr"));
	fab_traffic(_metadata, f, mr, 0, 1);
	ret = fi_close(&mr->fid);
	ASSERT_EQ(0, ret) TH_LOG("fi_close: %s", fi_strerror(-ret));
	ASSERT_EQ(before, uu_res_count(_metadata, f->dev, "mr"));
}

/* fi_mr_regv of one iovec entry: a plain MR over it. */
TEST_F_TIMEOUT(fab, mr_regv_one, T_S)
{
	struct fab *f = &self->f;
	struct iovec iov = { NULL, 8 * PAGE };
	struct fid_mr *mr;
	int ret;

	fab_up(_metadata, f);
	iov.iov_base = f->sbuf + 4 * PAGE;
	ret = fi_mr_regv(f->domain, &iov, 1, FAB_ACC, 0, 0, 0, &mr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_regv, one entry: %s", fi_strerror(-ret));
	fab_traffic(_metadata, f, mr, 4 * PAGE, 2);
	ASSERT_EQ(0, fi_close(&mr->fid));
}

/* fi_mr_regattr: one iovec entry, the context kept. */
TEST_F_TIMEOUT(fab, mr_regattr, T_S)
{
	struct fab *f = &self->f;
	struct iovec iov = { NULL, BUF_LEN };
	struct fi_mr_attr attr = {
		.iov_count = 1, .access = FAB_ACC, .iface = FI_HMEM_SYSTEM,
	};
	struct fid_mr *mr;
	int ret;

	fab_up(_metadata, f);
	iov.iov_base = f->sbuf;
	attr.mr_iov = &iov;
	attr.context = f;
	ret = fi_mr_regattr(f->domain, &attr, 0, &mr);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_regattr: %s", fi_strerror(-ret));
	ASSERT_EQ(f, mr->fid.context);
	fab_traffic(_metadata, f, mr, 0, 3);
	ASSERT_EQ(0, fi_close(&mr->fid));
}

/* After fi_close the key is gone: an RMA write through it fails. */
TEST_F_TIMEOUT(fab, closed_key_refused, T_S)
{
	struct fab *f = &self->f;
	struct fid_mr *mr;
	__u64 key;
	int err, ret;

	fab_up(_metadata, f);
	ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, 0, 0, 0, &mr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg: %s", fi_strerror(-ret));
	key = fi_mr_key(mr);
	ASSERT_EQ(0, fi_close(&mr->fid));
	uu_fill(f->cbuf, PAGE, 4);
	err = fab_rma(_metadata, f, false, 0, (uintptr_t)f->sbuf, key, PAGE);
	ASSERT_NE(0, err) TH_LOG("a write through a closed MR's key completed");
	TH_LOG("observed: closed_key_write_err=%s", fi_strerror(err));
	uu_is_fill(_metadata, "the closed MR's memory", f->sbuf, BUF_LEN, 0xa5);
}

/*
 * FI_SEND and FI_RECV: the sender's MR registered with FI_SEND alone, the
 * receiver's with FI_RECV alone, and a message through their descriptors.
 * It is longer than the endpoint's inject size: the provider copies a
 * message up to that size inline and then does not use the descriptor.
 */
TEST_F_TIMEOUT(fab, send_recv_access, T_S)
{
	struct fab *f = &self->f;
	size_t off = 100, len = 3000;
	struct fi_context sctx, rctx;
	struct fid_mr *smr, *rmr;
	ssize_t n;
	int err, ret;

	fab_up(_metadata, f);
	ASSERT_LT(f->cinfo->tx_attr->inject_size, len);
	ret = fi_mr_reg(f->domain, f->cbuf + 2 * PAGE, 2 * PAGE, FI_SEND, 0, 0, 0,
			&smr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg, FI_SEND: %s", fi_strerror(-ret));
	ret = fi_mr_reg(f->domain, f->sbuf, 2 * PAGE, FI_RECV, 0, 0, 0, &rmr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg, FI_RECV: %s", fi_strerror(-ret));
	ASSERT_NE(NULL, fi_mr_desc(smr));
	ASSERT_NE(NULL, fi_mr_desc(rmr));

	uu_fill(f->cbuf + 2 * PAGE, len, 9);
	n = fi_recv(f->sep, f->sbuf + off, PAGE, fi_mr_desc(rmr), 0, &rctx);
	ASSERT_EQ(0, n) TH_LOG("fi_recv: %s", fi_strerror((int)-n));
	n = fi_send(f->cep, f->cbuf + 2 * PAGE, len, fi_mr_desc(smr), 0, &sctx);
	ASSERT_EQ(0, n) TH_LOG("fi_send: %s", fi_strerror((int)-n));
	err = fab_cq_wait(_metadata, f->ccq, &sctx);
	ASSERT_EQ(0, err) TH_LOG("the send: %s", fi_strerror(err));
	err = fab_cq_wait(_metadata, f->scq, &rctx);
	ASSERT_EQ(0, err) TH_LOG("the receive: %s", fi_strerror(err));
	uu_is_pattern(_metadata, "received", f->sbuf + off, len, 9, 0);
	uu_is_fill(_metadata, "before the message", f->sbuf, off, 0xa5);
	uu_is_fill(_metadata, "after the message", f->sbuf + off + len,
		   BUF_LEN - off - len, 0xa5);
	ASSERT_EQ(0, fi_close(&smr->fid));
	ASSERT_EQ(0, fi_close(&rmr->fid));
}

/*
 * A non-zero offset, which the seed reserves ("must be 0") without naming
 * an error for it: the provider's answer is logged. A registration that
 * succeeds is in the device's list and closes. The seed gives the
 * parameter no meaning, so where an RMA write to the buffer's own address
 * lands through the key is logged, not asserted: at that address, the
 * offset further on, or neither.
 */
TEST_F_TIMEOUT(fab, offset_nonzero, T_S)
{
	struct fab *f = &self->f;
	const size_t at = 2 * PAGE, off = PAGE;
	struct fid_mr *mr;
	int before, err, ret;

	fab_up(_metadata, f);
	before = uu_res_count(_metadata, f->dev, "mr");
	ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, off, 0, 0, &mr, NULL);
	TH_LOG("observed: fab_offset_ret=%s", fi_strerror(-ret));
	if (ret) {
		ASSERT_GT(0, ret);
		ASSERT_EQ(before, uu_res_count(_metadata, f->dev, "mr"));
		return;
	}
	ASSERT_EQ(before + 1, uu_res_count(_metadata, f->dev, "mr"));
	uu_fill(f->cbuf, PAGE, 10);
	err = fab_rma(_metadata, f, false, 0, (uintptr_t)f->sbuf + at,
		      fi_mr_key(mr), PAGE);
	TH_LOG("observed: fab_offset_write=%s",
	       err ? fi_strerror(err) :
	       uu_pattern_len(f->sbuf + at, PAGE, 10, 0) == PAGE ? "at_address" :
	       uu_pattern_len(f->sbuf + at + off, PAGE, 10, 0) == PAGE ?
	       "offset_further" : "neither");
	ASSERT_EQ(0, fi_close(&mr->fid));
	ASSERT_EQ(before, uu_res_count(_metadata, f->dev, "mr"));
}

/*
 * Non-zero flags, which the seed reserves ("must be 0"): a provider that
 * does not support them answers -FI_EBADFLAGS. Two: FI_RMA_EVENT, the MR
 * flag of fi_domain.h, which needs FI_MR_RMA_EVENT in the domain's mode
 * (this domain has none), and bit 14, which no 1.17 flag has. Either
 * answer of the seed: refused with nothing registered, or registered (0 is
 * success) with an MR that carries RMA both ways and closes.
 */
TEST_F_TIMEOUT(fab, flags_nonzero, T_S)
{
	static const struct {
		const char *name;
		__u64 flags;
	} fl[] = {
		{ "rma_event", FI_RMA_EVENT },
		{ "bit14", 1ULL << 14 },
	};
	struct fab *f = &self->f;
	struct fid_mr *mr;
	int before, ret;
	unsigned int i;

	fab_up(_metadata, f);
	ASSERT_FALSE(f->cinfo->domain_attr->mr_mode & FI_MR_RMA_EVENT);
	before = uu_res_count(_metadata, f->dev, "mr");
	for (i = 0; i < ARRAY_SIZE(fl); i++) {
		ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, 0, 0,
				fl[i].flags, &mr, NULL);
		TH_LOG("observed: fab_flags_%s_ret=%s", fl[i].name,
		       fi_strerror(-ret));
		if (ret) {
			ASSERT_EQ(-FI_EBADFLAGS, ret) TH_LOG("flags %s: %s",
							     fl[i].name,
							     fi_strerror(-ret));
			ASSERT_EQ(before, uu_res_count(_metadata, f->dev, "mr"));
			continue;
		}
		ASSERT_EQ(before + 1, uu_res_count(_metadata, f->dev, "mr"));
		fab_traffic(_metadata, f, mr, 0, 11 + i);
		ASSERT_EQ(0, fi_close(&mr->fid));
		ASSERT_EQ(before, uu_res_count(_metadata, f->dev, "mr"));
		/* The next one starts from the untouched buffers. */
		memset(f->sbuf, 0xa5, BUF_LEN);
		memset(f->cbuf, 0x5a, BUF_LEN);
	}
}

/*
 * fi_close's -FI_EBUSY is for an MR that endpoints or counters are still
 * bound to, and the verbs provider binds an MR to nothing
 * (mr_bind_refused): it cannot produce that. What it does instead with an
 * MR in use: the server's MR is closed while a receive posted through its
 * descriptor is outstanding. The answer is logged and must be one of the
 * seed's: -FI_EBUSY with the MR kept (the receive then takes a message,
 * bytes checked, and the MR closes), or 0 with the MR gone from the
 * device's list. After a 0 a message meets the receive, which must
 * complete; how is logged (after fi_close "further access to the
 * registered memory is not guaranteed").
 */
TEST_F_TIMEOUT(fab, close_busy, T_S)
{
	struct fab *f = &self->f;
	struct fi_context sctx, rctx;
	const size_t len = 3000;
	struct fid_mr *rmr;
	int before, err, ret;
	ssize_t n;

	fab_up(_metadata, f);
	before = uu_res_count(_metadata, f->dev, "mr");
	ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FI_RECV, 0, 0, 0, &rmr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg, FI_RECV: %s", fi_strerror(-ret));
	n = fi_recv(f->sep, f->sbuf, PAGE, fi_mr_desc(rmr), 0, &rctx);
	ASSERT_EQ(0, n) TH_LOG("fi_recv: %s", fi_strerror((int)-n));
	ret = fi_close(&rmr->fid);
	TH_LOG("observed: fab_close_busy_ret=%s", fi_strerror(-ret));
	if (ret)
		ASSERT_EQ(-FI_EBUSY, ret) TH_LOG("fi_close of the MR: %s",
						 fi_strerror(-ret));
	ASSERT_EQ(before + !!ret, uu_res_count(_metadata, f->dev, "mr"));

	uu_fill(f->cbuf, len, 12);
	n = fi_send(f->cep, f->cbuf, len, fi_mr_desc(f->lmr), 0, &sctx);
	ASSERT_EQ(0, n) TH_LOG("fi_send: %s", fi_strerror((int)-n));
	err = fab_cq_wait(_metadata, f->scq, &rctx);
	if (!ret) {
		TH_LOG("observed: fab_close_busy_recv=%s",
		       err ? fi_strerror(err) :
		       uu_pattern_len(f->sbuf, len, 12, 0) == len ? "landed" :
		       "not_landed");
		return;
	}
	ASSERT_EQ(0, err) TH_LOG("the receive: %s", fi_strerror(err));
	uu_is_pattern(_metadata, "received", f->sbuf, len, 12, 0);
	ASSERT_EQ(0, fab_cq_wait(_metadata, f->ccq, &sctx));
	ret = fi_close(&rmr->fid);
	ASSERT_EQ(0, ret) TH_LOG("fi_close once idle: %s", fi_strerror(-ret));
	ASSERT_EQ(before, uu_res_count(_metadata, f->dev, "mr"));
}

/*
 * Asynchronous registration: the domain bound with FI_REG_MR to an EQ of
 * its own. A provider may refuse the binding; then its answer is logged
 * and registration stays what it was. Bound, the seed asks: an event
 * FI_MR_COMPLETE with the registration's context and its MR, which the
 * call has written before the event can be read, and no event of a call
 * that fails (here fi_mr_regv of two entries, which the provider refuses:
 * regv_two_refused). The MR then carries RMA both ways.
 */
TEST_F_TIMEOUT(fab, reg_mr_event, T_S)
{
	struct fi_eq_attr ea = { .size = 16, .wait_obj = FI_WAIT_UNSPEC };
	struct fab *f = &self->f;
	struct fid_mr *mr = NULL, *bad = NULL;
	struct fi_eq_entry entry;
	struct iovec iov[2];
	__u64 end;
	__u32 event;
	int ret, tag;
	ssize_t n;

	fab_up(_metadata, f);
	ret = fi_eq_open(f->fabric, &ea, &f->deq, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_eq_open: %s", fi_strerror(-ret));
	ret = fi_domain_bind(f->domain, &f->deq->fid, FI_REG_MR);
	TH_LOG("observed: fab_reg_mr_bind_ret=%s", fi_strerror(-ret));
	if (ret) {
		ASSERT_GT(0, ret);
		ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, 0, 0, 0,
				&mr, &tag);
		ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg: %s", fi_strerror(-ret));
		fab_traffic(_metadata, f, mr, 0, 13);
		ASSERT_EQ(0, fi_close(&mr->fid));
		return;
	}

	iov[0] = (struct iovec){ f->sbuf, PAGE };
	iov[1] = (struct iovec){ f->sbuf + 4 * PAGE, PAGE };
	ret = fi_mr_regv(f->domain, iov, 2, FAB_ACC, 0, 0, 0, &bad, iov);
	ASSERT_NE(0, ret) TH_LOG("fi_mr_regv of two entries registered");
	ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, 0, 0, 0, &mr, &tag);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg: %s", fi_strerror(-ret));
	ASSERT_NE(NULL, mr);

	end = uu_now_ms() + DEADLINE_MS;
	do {
		n = fi_eq_sread(f->deq, &event, &entry, sizeof(entry), 1000, 0);
	} while (n == -FI_EAGAIN && uu_now_ms() < end);
	ASSERT_EQ((ssize_t)sizeof(entry), n) TH_LOG("fi_eq_sread: %s",
						    fi_strerror((int)-n));
	ASSERT_EQ(FI_MR_COMPLETE, event);
	ASSERT_EQ(&mr->fid, entry.fid);
	ASSERT_EQ(&tag, entry.context);
	/* One event: none of the failed call, before or after. */
	n = fi_eq_read(f->deq, &event, &entry, sizeof(entry), 0);
	ASSERT_EQ(-FI_EAGAIN, n) TH_LOG("a second event %u", event);

	fab_traffic(_metadata, f, mr, 0, 13);
	ASSERT_EQ(0, fi_close(&mr->fid));
}

/*
 * Scalable registration (keys the application chooses, addresses from
 * 0). The verbs provider's domains are FI_MR_VIRT_ADDR | FI_MR_PROV_KEY
 * (with FI_MR_LOCAL and FI_MR_ALLOCATED), so fi_getinfo finds no verbs
 * domain for an application that asks for FI_MR_SCALABLE (the 1.0 mode,
 * FI_LOCAL_MR given as the provider needs local registration) or for a
 * mode without FI_MR_VIRT_ADDR and FI_MR_PROV_KEY while its caps (FI_RMA)
 * make the MRs RMA targets: -FI_ENODATA. The same
 * hints with the provider's mode find the device first, so the refusals
 * are the mode's.
 */
TEST_F_TIMEOUT(fab, scalable_refused, T_S)
{
	static const struct {
		const char *name;
		__u64 mode;
		int mr_mode;
	} m[] = {
		{ "scalable", FI_CONTEXT | FI_LOCAL_MR, FI_MR_SCALABLE },
		{ "no_virt_addr_prov_key", FI_CONTEXT,
		  FI_MR_LOCAL | FI_MR_ALLOCATED },
	};
	struct fab *f = &self->f;
	struct fi_info *info;
	unsigned int i;
	int ret;

	fab_hints(_metadata, f);
	f->cinfo = fab_getinfo(_metadata, f, false);
	for (i = 0; i < ARRAY_SIZE(m); i++) {
		f->hints->mode = m[i].mode;
		f->hints->domain_attr->mr_mode = m[i].mr_mode;
		info = NULL;
		ret = fi_getinfo(FI_VERSION(1, 17), f->addr, f->port, 0,
				 f->hints, &info);
		TH_LOG("observed: fab_getinfo_%s_ret=%s", m[i].name,
		       fi_strerror(-ret));
		ASSERT_EQ(-FI_ENODATA, ret) TH_LOG("mr_mode %s: %s", m[i].name,
						   fi_strerror(-ret));
		ASSERT_EQ(NULL, info);
	}
}

/* ---------------------------------------------------------------- */
/* libvhca: the equivalents                                         */

/* The device by name, a PD, a CQ and an RC QP connected to itself. */
static void vhca_up(struct __test_metadata *_metadata, struct fab *f)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid gid;
	int gidx, ret;

	f->ctx = uu_open(_metadata, f->dev);
	f->pd = ibv_alloc_pd(f->ctx);
	ASSERT_NE(NULL, f->pd) TH_LOG("ibv_alloc_pd: %s", strerror(errno));
	f->cq = ibv_create_cq(f->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, f->cq) TH_LOG("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = f->cq;
	ia.recv_cq = f->cq;
	f->qp = ibv_create_qp(f->pd, &ia);
	ASSERT_NE(NULL, f->qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	f->pmr = ibv_reg_mr(f->pd, f->cbuf, BUF_LEN, IBV_ACC);
	ASSERT_NE(NULL, f->pmr) TH_LOG("ibv_reg_mr: %s", strerror(errno));

	gidx = uu_gid(_metadata, f->ctx, f->dev, &gid);
	ret = uu_qp_to_rts(f->qp, IBV_ACC, f->qp->qp_num, gidx, &gid);
	ASSERT_EQ(0, ret) TH_LOG("QP to RTS: %s", strerror(ret));
}

/* One signaled RDMA @op between cbuf + @loff and (@raddr, @rkey). */
static void vhca_rdma(struct __test_metadata *_metadata, struct fab *f,
		      enum ibv_wr_opcode op, size_t loff, __u64 raddr,
		      __u32 rkey, __u32 len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)f->cbuf + loff, .length = len,
		.lkey = f->pmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	__u64 end = uu_now_ms() + DEADLINE_MS;
	struct ibv_wc wc;
	int n, ret;

	ret = ibv_post_send(f->qp, &wr, &bad);
	ASSERT_EQ(0, ret) TH_LOG("ibv_post_send: %s", strerror(ret));
	while (uu_now_ms() < end) {
		n = ibv_poll_cq(f->cq, 1, &wc);
		ASSERT_LE(0, n);
		if (!n) {
			usleep(100);
			continue;
		}
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
			TH_LOG("RDMA through key 0x%x: %s", rkey,
			       ibv_wc_status_str(wc.status));
		return;
	}
	ASSERT_TRUE(false) TH_LOG("no completion in %d ms", DEADLINE_MS);
}

/*
 * A key no MR has, to ask for: from the top of the device's key indices
 * down (low ones are handed out first), tried by registering and
 * deregistering a page.
 */
static __u32 vhca_free_key(struct __test_metadata *_metadata, struct fab *f)
{
	struct vhcav_caps caps;
	struct ibv_mr *mr;
	__u32 idx, key;
	int ret, tries;

	ret = vhcav_query(f->ctx, &caps);
	ASSERT_EQ(0, ret) TH_LOG("vhcav_query: %s", strerror(ret));
	ASSERT_LT(1, caps.max_mkeys);
	idx = caps.max_mkeys - 1 > 0xffffff ? 0xffffff : caps.max_mkeys - 1;
	for (tries = 0; tries < 64 && idx; tries++, idx--) {
		key = idx << 8 | KEY_VARIANT;
		mr = vhcav_reg_mr_key(f->pd, f->cbuf, PAGE, IOVA_KEY, IBV_ACC, key);
		if (mr) {
			ASSERT_EQ(0, vhcav_dereg_mr(mr));
			return key;
		}
		ASSERT_EQ(ENOKEY, errno) TH_LOG("key 0x%x: %s", key, strerror(errno));
	}
	ASSERT_TRUE(false) TH_LOG("no free key in 64 tries");
	return 0;
}

/* ---------------------------------------------------------------- */
/* The provider's refusals, and libvhca's equivalents               */

/*
 * A requested key: the verbs provider (FI_MR_PROV_KEY) registers, but the
 * key is its own. libvhca's vhcav_reg_mr_key gives the key asked for.
 */
TEST_F_TIMEOUT(fab, requested_key, T_S)
{
	struct fab *f = &self->f;
	const __u64 want = 0x00abcd00 | KEY_VARIANT;
	struct fid_mr *mr;
	__u32 key;
	int ret;

	fab_up(_metadata, f);
	ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, 0, want, 0, &mr,
			NULL);
	TH_LOG("observed: fab_requested_key_ret=%s", fi_strerror(-ret));
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg with requested_key: %s",
				 fi_strerror(-ret));
	TH_LOG("requested key 0x%llx, fi_mr_key 0x%llx", (unsigned long long)want,
	       (unsigned long long)fi_mr_key(mr));
	ASSERT_NE(want, fi_mr_key(mr)) TH_LOG("the provider gave the requested key");
	/* The MR works with the key it has. */
	fab_traffic(_metadata, f, mr, 0, 5);
	ASSERT_EQ(0, fi_close(&mr->fid));

	/* fab_traffic wrote into it: the libvhca part starts afresh. */
	memset(f->sbuf, 0xa5, BUF_LEN);
	vhca_up(_metadata, f);
	if (!f->vhca) {
		f->vmr = vhcav_reg_mr_key(f->pd, f->sbuf, BUF_LEN, IOVA_KEY,
					  IBV_ACC, 0x100 | KEY_VARIANT);
		ASSERT_EQ(NULL, f->vmr);
		ASSERT_EQ(EOPNOTSUPP, errno) TH_LOG("vhcav_reg_mr_key on %s: %s",
						    f->dev, strerror(errno));
		return;
	}
	key = vhca_free_key(_metadata, f);
	f->vmr = vhcav_reg_mr_key(f->pd, f->sbuf, BUF_LEN, IOVA_KEY, IBV_ACC, key);
	ASSERT_NE(NULL, f->vmr) TH_LOG("vhcav_reg_mr_key 0x%x: %s", key,
				       strerror(errno));
	ASSERT_EQ(key, f->vmr->lkey);
	ASSERT_EQ(key, f->vmr->rkey);
	ASSERT_EQ(BUF_LEN, f->vmr->length);
	uu_fill(f->cbuf, PAGE, 6);
	vhca_rdma(_metadata, f, IBV_WR_RDMA_WRITE, 0, IOVA_KEY + 3 * PAGE, key, PAGE);
	uu_is_pattern(_metadata, "written through the requested key",
		      f->sbuf + 3 * PAGE, PAGE, 6, 0);
	uu_is_fill(_metadata, "before it", f->sbuf, 3 * PAGE, 0xa5);
	uu_is_fill(_metadata, "after it", f->sbuf + 4 * PAGE, BUF_LEN - 4 * PAGE, 0xa5);
	vhca_rdma(_metadata, f, IBV_WR_RDMA_READ, 4 * PAGE, IOVA_KEY + 3 * PAGE,
		  key, PAGE);
	uu_is_pattern(_metadata, "read back", f->cbuf + 4 * PAGE, PAGE, 6, 0);
}

/*
 * fi_mr_regv of two iovec entries: refused (-FI_EINVAL in 1.17), nothing
 * registered. libvhca's vhcav_reg_mr_iov makes them one MR, the pieces
 * end to end from its IOVA.
 */
TEST_F_TIMEOUT(fab, regv_two_refused, T_S)
{
	struct fab *f = &self->f;
	struct iovec iov[2];
	struct fid_mr *mr = NULL;
	int before, ret;

	fab_up(_metadata, f);
	iov[0] = (struct iovec){ f->sbuf + PAGE, PAGE };
	iov[1] = (struct iovec){ f->sbuf + 8 * PAGE, 2 * PAGE };
	before = uu_res_count(_metadata, f->dev, "mr");
	ret = fi_mr_regv(f->domain, iov, 2, FAB_ACC, 0, 0, 0, &mr, NULL);
	TH_LOG("observed: fab_regv2_ret=%s", fi_strerror(-ret));
	ASSERT_EQ(-FI_EINVAL, ret) TH_LOG("fi_mr_regv, two entries: %s",
					  fi_strerror(-ret));
	ASSERT_EQ(before, uu_res_count(_metadata, f->dev, "mr"));

	vhca_up(_metadata, f);
	f->vmr = vhcav_reg_mr_iov(f->pd, iov, 2, IOVA_KEY, IBV_ACC, 0);
	if (!f->vhca) {
		ASSERT_EQ(NULL, f->vmr);
		ASSERT_EQ(EOPNOTSUPP, errno) TH_LOG("vhcav_reg_mr_iov on %s: %s",
						    f->dev, strerror(errno));
		return;
	}
	ASSERT_NE(NULL, f->vmr) TH_LOG("vhcav_reg_mr_iov: %s", strerror(errno));
	ASSERT_EQ(3 * PAGE, f->vmr->length);
	ASSERT_EQ(iov[0].iov_base, f->vmr->addr);
	/* A write across the seam: the last 100 bytes of piece 0, then 1. */
	uu_fill(f->cbuf, 2 * PAGE, 7);
	vhca_rdma(_metadata, f, IBV_WR_RDMA_WRITE, 0, IOVA_KEY + PAGE - 100,
		  f->vmr->rkey, 2 * PAGE);
	uu_is_pattern(_metadata, "piece 0's tail", f->sbuf + 2 * PAGE - 100, 100, 7, 0);
	uu_is_pattern(_metadata, "piece 1's head", f->sbuf + 8 * PAGE, 2 * PAGE - 100,
		      7, 100);
	uu_is_fill(_metadata, "before piece 0's tail", f->sbuf, 2 * PAGE - 100, 0xa5);
	uu_is_fill(_metadata, "between the pieces", f->sbuf + 2 * PAGE, 6 * PAGE, 0xa5);
	uu_is_fill(_metadata, "after piece 1's head", f->sbuf + 10 * PAGE - 100,
		   6 * PAGE + 100, 0xa5);
	vhca_rdma(_metadata, f, IBV_WR_RDMA_READ, 4 * PAGE, IOVA_KEY + PAGE - 100,
		  f->vmr->rkey, 2 * PAGE);
	uu_is_pattern(_metadata, "read back across the seam", f->cbuf + 4 * PAGE,
		      2 * PAGE, 7, 0);
}

/*
 * fi_mr_bind: the verbs provider's MRs bind to nothing (-FI_ENOSYS): no
 * endpoint-bound MRs (FI_MR_ENDPOINT) and no counters. The MR still works
 * after the refusal. libvhca has no MR-to-endpoint binding: at the verbs
 * level the equivalent is a type 2 memory window bound to a QP, which
 * librxe carries (the MW suites test it), so none is made here.
 */
TEST_F_TIMEOUT(fab, mr_bind_refused, T_S)
{
	struct fab *f = &self->f;
	struct fid_mr *mr;
	int ret;

	fab_up(_metadata, f);
	ret = fi_mr_reg(f->domain, f->sbuf, BUF_LEN, FAB_ACC, 0, 0, 0, &mr, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_mr_reg: %s", fi_strerror(-ret));
	ret = fi_mr_bind(mr, &f->cep->fid, 0);
	TH_LOG("observed: fab_mr_bind_ret=%s", fi_strerror(-ret));
	ASSERT_EQ(-FI_ENOSYS, ret) TH_LOG("fi_mr_bind to the endpoint: %s",
					  fi_strerror(-ret));
	fab_traffic(_metadata, f, mr, 0, 8);
	ASSERT_EQ(0, fi_close(&mr->fid));
}

TEST_HARNESS_MAIN
