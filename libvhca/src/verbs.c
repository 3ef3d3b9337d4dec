// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libvhca: the calls of <vhca/verbs.h>, built from the kernel's uverbs
 * UAPI only: write() commands and RDMA_VERBS_IOCTL methods on a
 * context's cmd_fd, with the handles libibverbs keeps in its public
 * structures (ibv_pd.handle, ibv_mr.handle). Documentation/mrcore/
 * libvhca.rst has the design.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/vhca_user_ioctl.h>
#include <vhca/verbs.h>

#define VHCAV_EXPORT __attribute__((visibility("default")))

/* The most attributes any call here passes. */
#define VHCAV_MAX_ATTRS 12

/* An ioctl being built: the header, then its attributes. */
struct vhcav_ioctl {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[VHCAV_MAX_ATTRS];
};

static void ioc_init(struct vhcav_ioctl *ioc, uint16_t object, uint16_t method)
{
	memset(ioc, 0, sizeof(*ioc));
	ioc->hdr.object_id = object;
	ioc->hdr.method_id = method;
	/* vhca registers with rxe's driver id (the ABI librxe binds to). */
	ioc->hdr.driver_id = RDMA_DRIVER_RXE;
}

static struct ib_uverbs_attr *ioc_attr(struct vhcav_ioctl *ioc, uint16_t id,
				       uint16_t len, uint64_t data)
{
	struct ib_uverbs_attr *a = &ioc->attrs[ioc->hdr.num_attrs++];

	a->attr_id = id;
	a->len = len;
	a->flags = UVERBS_ATTR_F_MANDATORY;
	a->data = data;
	return a;
}

/* An input of up to 8 bytes travels inline, in data. */
static void ioc_in_u64(struct vhcav_ioctl *ioc, uint16_t id, uint64_t v)
{
	ioc_attr(ioc, id, sizeof(v), v);
}

static void ioc_in_u32(struct vhcav_ioctl *ioc, uint16_t id, uint32_t v)
{
	ioc_attr(ioc, id, sizeof(v), v);
}

/* Larger inputs and every output are user pointers. */
static void ioc_ptr(struct vhcav_ioctl *ioc, uint16_t id, const void *p,
		    size_t len)
{
	ioc_attr(ioc, id, (uint16_t)len, (uintptr_t)p);
}

/* An object handle (IDR): in data; a new object's comes back there. */
static struct ib_uverbs_attr *ioc_idr(struct vhcav_ioctl *ioc, uint16_t id,
				      uint32_t handle)
{
	return ioc_attr(ioc, id, 0, handle);
}

static int ioc_call(int fd, struct vhcav_ioctl *ioc)
{
	ioc->hdr.length = sizeof(ioc->hdr) +
			  ioc->hdr.num_attrs * sizeof(ioc->attrs[0]);
	if (ioctl(fd, RDMA_VERBS_IOCTL, &ioc->hdr))
		return errno;
	return 0;
}

/* Set errno to @err and return it (the int calls' convention). */
static int fail(int err)
{
	errno = err;
	return err;
}

/* --- which contexts are vhca ---------------------------------------- */

/*
 * What QUERY says of a context: asked on every call rather than cached,
 * so that a context closed and another opened at the same address (with
 * the same fd number) can never be taken for the first. One ioctl.
 */
struct vhcav_ctx {
	bool vhca;
	bool answered;
	struct vhcav_caps caps;
};

static bool ctx_probe(struct ibv_context *ctx, struct vhcav_ctx *c)
{
	struct vhca_uapi_caps caps = {};
	struct vhcav_ioctl ioc;
	int saved = errno;

	memset(c, 0, sizeof(*c));
	if (!ctx)
		return false;
	ioc_init(&ioc, UVERBS_OBJECT_DEVICE, VHCA_IB_METHOD_QUERY);
	ioc_ptr(&ioc, VHCA_IB_ATTR_QUERY_RESP, &caps, sizeof(caps));
	if (ioc_call(ctx->cmd_fd, &ioc)) {
		errno = saved;
		return false;
	}
	/* A vhca, of this ABI or not: caps say which (vhcav_query()). */
	c->vhca = caps.abi_version == VHCA_UAPI_ABI_VERSION;
	c->answered = true;
	errno = saved;
	c->caps = (struct vhcav_caps) {
		.abi_version = caps.abi_version,
		.max_iov = caps.max_iov,
		.max_ranges = caps.max_ranges,
		.max_indirect_depth = caps.max_indirect_depth,
		.max_mkeys = caps.max_mkeys,
		.max_alloc = caps.max_alloc,
	};
	return c->vhca;
}

VHCAV_EXPORT int vhcav_is_vhca(struct ibv_context *ctx)
{
	struct vhcav_ctx c;

	return ctx_probe(ctx, &c);
}

VHCAV_EXPORT int vhcav_query(struct ibv_context *ctx, struct vhcav_caps *caps)
{
	struct vhcav_ctx c;

	if (!ctx || !caps)
		return fail(EINVAL);
	if (!ctx_probe(ctx, &c)) {
		if (!c.answered)
			return fail(EOPNOTSUPP);
		*caps = c.caps;
		return fail(EPROTO);
	}
	*caps = c.caps;
	return 0;
}

/* --- MRs libvhca made ------------------------------------------------ */

/**
 * struct vhcav_mr - an MR libvhca made
 * @mr: what the caller sees; first
 * @next: in mr_list
 * @map: vhcav_alloc_mr(): the mapping to undo at dereg, else NULL
 * @map_len: its length
 */
struct vhcav_mr {
	struct ibv_mr mr;
	struct vhcav_mr *next;
	void *map;
	size_t map_len;
};

static pthread_mutex_t mr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vhcav_mr *mr_list;

static void mr_add(struct vhcav_mr *m)
{
	pthread_mutex_lock(&mr_lock);
	m->next = mr_list;
	mr_list = m;
	pthread_mutex_unlock(&mr_lock);
}

/* Take @mr off the list if libvhca made it; NULL if it did not. */
static struct vhcav_mr *mr_take(struct ibv_mr *mr)
{
	struct vhcav_mr **pp, *m = NULL;

	pthread_mutex_lock(&mr_lock);
	for (pp = &mr_list; *pp; pp = &(*pp)->next) {
		if (&(*pp)->mr == mr) {
			m = *pp;
			*pp = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&mr_lock);
	return m;
}

/* The generic DEREG_MR write command. */
static int cmd_dereg(int fd, uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dereg_mr cmd;
	} req = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_DEREG_MR,
			.in_words = sizeof(req) / 4,
		},
		.cmd = { .mr_handle = handle },
	};

	if (write(fd, &req, sizeof(req)) != sizeof(req))
		return errno ? errno : EIO;
	return 0;
}

/* A new MR object the kernel made: keep it, fill in what ibv_mr says. */
static struct ibv_mr *mr_made(struct vhcav_mr *m, struct ibv_pd *pd,
			      const struct ib_uverbs_attr *handle, void *addr,
			      size_t length, uint32_t lkey, uint32_t rkey)
{
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = (uint32_t)handle->data;
	m->mr.lkey = lkey;
	m->mr.rkey = rkey;
	mr_add(m);
	return &m->mr;
}

VHCAV_EXPORT int vhcav_dereg_mr(struct ibv_mr *mr)
{
	struct vhcav_mr *m;
	int err;

	if (!mr)
		return fail(EINVAL);
	m = mr_take(mr);
	if (!m) {
		struct vhcav_ctx c;

		/* Every call is EOPNOTSUPP on a device that is not vhca. */
		return fail(mr->context && !ctx_probe(mr->context, &c) ?
			    EOPNOTSUPP : EINVAL);
	}
	err = cmd_dereg(mr->context->cmd_fd, mr->handle);
	if (err) {
		/* Still registered (windows bound): keep it ours. */
		mr_add(m);
		return fail(err);
	}
	if (m->map)
		munmap(m->map, m->map_len);
	free(m);
	return 0;
}

/* --- the public uverbs commands librxe does not issue --------------- */

VHCAV_EXPORT int vhcav_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
				void *addr, size_t length, int access)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req = {};
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct vhcav_ctx c;
	const int known = IBV_REREG_MR_CHANGE_TRANSLATION |
			  IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;

	if (!mr || !mr->context)
		return fail(EINVAL);
	if (!ctx_probe(mr->context, &c))
		return fail(EOPNOTSUPP);
	if (!flags || (flags & ~known))
		return fail(EINVAL);
	if ((flags & IBV_REREG_MR_CHANGE_PD) &&
	    (!pd || pd->context != mr->context))
		return fail(EINVAL);
	/* As libibverbs' ibv_rereg_mr() checks its input. */
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length))
		return fail(EINVAL);

	req.hdr.command = IB_USER_VERBS_CMD_REREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.mr_handle = mr->handle;
	req.cmd.flags = flags;	/* IBV_REREG_MR_CHANGE_* are IB_MR_REREG_* */
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		req.cmd.start = (uintptr_t)addr;
		req.cmd.length = length;
		req.cmd.hca_va = (uintptr_t)addr;
	}
	req.cmd.pd_handle = (flags & IBV_REREG_MR_CHANGE_PD) ? pd->handle :
							       mr->pd->handle;
	req.cmd.access_flags = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? access : 0;
	if (write(mr->context->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return fail(errno ? errno : EIO);

	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	return 0;
}

VHCAV_EXPORT int vhcav_advise_mr(struct ibv_pd *pd,
				 enum ibv_advise_mr_advice advice,
				 uint32_t flags, struct ibv_sge *sg_list,
				 uint32_t num_sge)
{
	struct vhcav_ctx c;
	struct vhcav_ioctl ioc;
	size_t bytes;
	int err;

	if (!pd)
		return fail(EINVAL);
	if (!ctx_probe(pd->context, &c))
		return fail(EOPNOTSUPP);
	/* An attribute's length is 16 bits: 4095 entries of 16 bytes. */
	bytes = (size_t)num_sge * sizeof(*sg_list);
	if (!sg_list || !num_sge || bytes > UINT16_MAX)
		return fail(EINVAL);

	ioc_init(&ioc, UVERBS_OBJECT_MR, UVERBS_METHOD_ADVISE_MR);
	ioc_idr(&ioc, UVERBS_ATTR_ADVISE_MR_PD_HANDLE, pd->handle);
	ioc_in_u64(&ioc, UVERBS_ATTR_ADVISE_MR_ADVICE, advice);
	ioc_in_u32(&ioc, UVERBS_ATTR_ADVISE_MR_FLAGS, flags);
	/* struct ibv_sge is struct ib_uverbs_sge, field for field. */
	ioc_ptr(&ioc, UVERBS_ATTR_ADVISE_MR_SGE_LIST, sg_list, bytes);
	err = ioc_call(pd->context->cmd_fd, &ioc);
	return err ? fail(err) : 0;
}

VHCAV_EXPORT struct ibv_mr *vhcav_reg_dmabuf_mr(struct ibv_pd *pd,
						uint64_t offset, size_t length,
						uint64_t iova, int fd,
						int access)
{
	struct ib_uverbs_attr *handle;
	uint32_t lkey = 0, rkey = 0;
	struct vhcav_ctx c;
	struct vhcav_ioctl ioc;
	struct vhcav_mr *m;
	int err;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (!ctx_probe(pd->context, &c)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;

	ioc_init(&ioc, UVERBS_OBJECT_MR, UVERBS_METHOD_REG_DMABUF_MR);
	handle = ioc_idr(&ioc, UVERBS_ATTR_REG_DMABUF_MR_HANDLE, 0);
	ioc_idr(&ioc, UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, pd->handle);
	ioc_in_u64(&ioc, UVERBS_ATTR_REG_DMABUF_MR_OFFSET, offset);
	ioc_in_u64(&ioc, UVERBS_ATTR_REG_DMABUF_MR_LENGTH, length);
	ioc_in_u64(&ioc, UVERBS_ATTR_REG_DMABUF_MR_IOVA, iova);
	ioc_in_u32(&ioc, UVERBS_ATTR_REG_DMABUF_MR_FD, (uint32_t)fd);
	ioc_in_u32(&ioc, UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, access);
	ioc_ptr(&ioc, UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, &lkey, sizeof(lkey));
	ioc_ptr(&ioc, UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, &rkey, sizeof(rkey));
	err = ioc_call(pd->context->cmd_fd, &ioc);
	if (err) {
		free(m);
		errno = err;
		return NULL;
	}
	/* As libibverbs' ibv_reg_dmabuf_mr() sets it: the offset. */
	return mr_made(m, pd, handle, (void *)(uintptr_t)offset, length, lkey,
		       rkey);
}

/* --- vhca's driver methods ------------------------------------------- */

/* Common start of a registration by driver method: checks, the MR. */
static struct vhcav_mr *mr_start(struct ibv_pd *pd, struct vhcav_ctx *c)
{
	struct vhcav_mr *m;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (!ctx_probe(pd->context, c)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		errno = ENOMEM;
	return m;
}

static void ioc_key(struct vhcav_ioctl *ioc, uint16_t id, uint32_t key)
{
	if (key)
		ioc_in_u32(ioc, id, key);
}

VHCAV_EXPORT struct ibv_mr *vhcav_reg_mr_iov(struct ibv_pd *pd,
					     const struct iovec *iov,
					     int iovcnt, uint64_t iova,
					     int access, uint32_t key)
{
	struct vhca_uapi_iov pieces[VHCA_UAPI_MAX_IOV];
	struct vhcav_ctx c;
	struct ib_uverbs_attr *handle;
	uint32_t lkey = 0, rkey = 0;
	struct vhcav_ioctl ioc;
	struct vhcav_mr *m;
	size_t total = 0;
	int i, err;

	m = mr_start(pd, &c);
	if (!m)
		return NULL;
	if (!iov || iovcnt <= 0 || (uint32_t)iovcnt > c.caps.max_iov ||
	    iovcnt > VHCA_UAPI_MAX_IOV) {
		free(m);
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < iovcnt; i++) {
		pieces[i].addr = (uintptr_t)iov[i].iov_base;
		pieces[i].length = iov[i].iov_len;
		total += iov[i].iov_len;
	}

	ioc_init(&ioc, UVERBS_OBJECT_MR, VHCA_IB_METHOD_MR_REG_IOV);
	handle = ioc_idr(&ioc, VHCA_IB_ATTR_REG_IOV_HANDLE, 0);
	ioc_idr(&ioc, VHCA_IB_ATTR_REG_IOV_PD_HANDLE, pd->handle);
	ioc_ptr(&ioc, VHCA_IB_ATTR_REG_IOV_IOV, pieces,
		iovcnt * sizeof(pieces[0]));
	ioc_in_u64(&ioc, VHCA_IB_ATTR_REG_IOV_IOVA, iova);
	ioc_in_u32(&ioc, VHCA_IB_ATTR_REG_IOV_ACCESS, access);
	ioc_key(&ioc, VHCA_IB_ATTR_REG_IOV_KEY, key);
	ioc_ptr(&ioc, VHCA_IB_ATTR_REG_IOV_RESP_LKEY, &lkey, sizeof(lkey));
	ioc_ptr(&ioc, VHCA_IB_ATTR_REG_IOV_RESP_RKEY, &rkey, sizeof(rkey));
	err = ioc_call(pd->context->cmd_fd, &ioc);
	if (err) {
		free(m);
		errno = err;
		return NULL;
	}
	return mr_made(m, pd, handle, iov[0].iov_base, total, lkey, rkey);
}

VHCAV_EXPORT struct ibv_mr *vhcav_reg_mr_key(struct ibv_pd *pd, void *addr,
					     size_t length, uint64_t iova,
					     int access, uint32_t key)
{
	struct iovec iov = { .iov_base = addr, .iov_len = length };

	return vhcav_reg_mr_iov(pd, &iov, 1, iova, access, key);
}

/* REG_INDIRECT with ranges or columns already in @ioc's list attribute. */
static struct ibv_mr *reg_indirect(struct ibv_pd *pd, struct vhcav_mr *m,
				   struct vhcav_ioctl *ioc,
				   struct ib_uverbs_attr *handle,
				   uint64_t iova, int access, uint32_t key,
				   size_t length)
{
	uint32_t lkey = 0, rkey = 0;
	int err;

	ioc_in_u64(ioc, VHCA_IB_ATTR_REG_INDIRECT_IOVA, iova);
	ioc_in_u32(ioc, VHCA_IB_ATTR_REG_INDIRECT_ACCESS, access);
	ioc_key(ioc, VHCA_IB_ATTR_REG_INDIRECT_KEY, key);
	ioc_ptr(ioc, VHCA_IB_ATTR_REG_INDIRECT_RESP_LKEY, &lkey, sizeof(lkey));
	ioc_ptr(ioc, VHCA_IB_ATTR_REG_INDIRECT_RESP_RKEY, &rkey, sizeof(rkey));
	err = ioc_call(pd->context->cmd_fd, ioc);
	if (err) {
		free(m);
		errno = err;
		return NULL;
	}
	return mr_made(m, pd, handle, (void *)(uintptr_t)iova, length, lkey,
		       rkey);
}

VHCAV_EXPORT struct ibv_mr *vhcav_reg_indirect(struct ibv_pd *pd,
					       const struct vhcav_key_range *ranges,
					       unsigned int n, uint64_t iova,
					       int access, uint32_t key)
{
	struct vhca_uapi_key_range *r;
	struct vhcav_ctx c;
	struct ib_uverbs_attr *handle;
	struct vhcav_ioctl ioc;
	struct ibv_mr *mr;
	struct vhcav_mr *m;
	size_t total = 0;
	unsigned int i;

	m = mr_start(pd, &c);
	if (!m)
		return NULL;
	/* The list must fit one attribute (16-bit length). */
	if (!ranges || !n || n > c.caps.max_ranges ||
	    (size_t)n * sizeof(*r) > UINT16_MAX) {
		free(m);
		errno = EINVAL;
		return NULL;
	}
	r = calloc(n, sizeof(*r));
	if (!r) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		r[i].key = ranges[i].lkey;
		r[i].addr = ranges[i].addr;
		r[i].length = ranges[i].length;
		total += ranges[i].length;
	}
	ioc_init(&ioc, UVERBS_OBJECT_MR, VHCA_IB_METHOD_MR_REG_INDIRECT);
	handle = ioc_idr(&ioc, VHCA_IB_ATTR_REG_INDIRECT_HANDLE, 0);
	ioc_idr(&ioc, VHCA_IB_ATTR_REG_INDIRECT_PD_HANDLE, pd->handle);
	ioc_ptr(&ioc, VHCA_IB_ATTR_REG_INDIRECT_RANGES, r, n * sizeof(*r));
	mr = reg_indirect(pd, m, &ioc, handle, iova, access, key, total);
	free(r);
	return mr;
}

VHCAV_EXPORT struct ibv_mr *vhcav_reg_interleaved(struct ibv_pd *pd,
						  const struct vhcav_interleaved *cols,
						  unsigned int n, uint32_t repeat,
						  uint64_t iova, int access,
						  uint32_t key)
{
	struct vhca_uapi_interleaved *col;
	struct vhcav_ctx c;
	struct ib_uverbs_attr *handle;
	struct vhcav_ioctl ioc;
	struct ibv_mr *mr;
	struct vhcav_mr *m;
	size_t per = 0;
	unsigned int i;

	m = mr_start(pd, &c);
	if (!m)
		return NULL;
	if (!cols || !n || !repeat ||
	    (uint64_t)n * repeat > c.caps.max_ranges ||
	    (size_t)n * sizeof(*col) > UINT16_MAX) {
		free(m);
		errno = EINVAL;
		return NULL;
	}
	col = calloc(n, sizeof(*col));
	if (!col) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		col[i].key = cols[i].lkey;
		col[i].bytes_count = cols[i].bytes_count;
		col[i].addr = cols[i].addr;
		col[i].bytes_skip = cols[i].bytes_skip;
		per += cols[i].bytes_count;
	}
	ioc_init(&ioc, UVERBS_OBJECT_MR, VHCA_IB_METHOD_MR_REG_INDIRECT);
	handle = ioc_idr(&ioc, VHCA_IB_ATTR_REG_INDIRECT_HANDLE, 0);
	ioc_idr(&ioc, VHCA_IB_ATTR_REG_INDIRECT_PD_HANDLE, pd->handle);
	ioc_ptr(&ioc, VHCA_IB_ATTR_REG_INDIRECT_INTERLEAVED, col,
		n * sizeof(*col));
	ioc_in_u32(&ioc, VHCA_IB_ATTR_REG_INDIRECT_REPEAT, repeat);
	mr = reg_indirect(pd, m, &ioc, handle, iova, access, key,
			  per * repeat);
	free(col);
	return mr;
}

/* The largest block the kernel hands out: 4 MiB (MAX_ORDER - 1 on x86). */
#define VHCAV_ALLOC_ALIGN (4UL << 20)

/*
 * Reserve @len bytes of addresses aligned to VHCAV_ALLOC_ALIGN (so the
 * kernel's blocks meet aligned addresses and the MR takes large MTT
 * pages): a larger reservation, trimmed.
 */
static void *alloc_reserve(size_t len)
{
	size_t span = len + VHCAV_ALLOC_ALIGN;
	uintptr_t p, start;

	p = (uintptr_t)mmap(NULL, span, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if ((void *)p == MAP_FAILED)
		return NULL;
	start = (p + VHCAV_ALLOC_ALIGN - 1) & ~(VHCAV_ALLOC_ALIGN - 1);
	if (start > p)
		munmap((void *)p, start - p);
	if (p + span > start + len)
		munmap((void *)(start + len), p + span - (start + len));
	return (void *)start;
}

VHCAV_EXPORT struct ibv_mr *vhcav_alloc_mr(struct ibv_pd *pd, size_t length,
					   int access, uint32_t key)
{
	struct vhcav_ctx c;
	struct ib_uverbs_attr *handle;
	uint32_t lkey = 0, rkey = 0, blocks = 0;
	uint64_t offset = 0;
	struct vhcav_ioctl ioc;
	struct vhcav_mr *m;
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	void *at, *map;
	int err;

	m = mr_start(pd, &c);
	if (!m)
		return NULL;
	if (!length || length > c.caps.max_alloc) {
		free(m);
		errno = EINVAL;
		return NULL;
	}
	len = (length + page - 1) & ~((size_t)page - 1);
	at = alloc_reserve(len);
	if (!at) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}

	ioc_init(&ioc, UVERBS_OBJECT_MR, VHCA_IB_METHOD_MR_ALLOC);
	handle = ioc_idr(&ioc, VHCA_IB_ATTR_MR_ALLOC_HANDLE, 0);
	ioc_idr(&ioc, VHCA_IB_ATTR_MR_ALLOC_PD_HANDLE, pd->handle);
	ioc_in_u64(&ioc, VHCA_IB_ATTR_MR_ALLOC_LENGTH, length);
	ioc_in_u64(&ioc, VHCA_IB_ATTR_MR_ALLOC_IOVA, (uintptr_t)at);
	ioc_in_u32(&ioc, VHCA_IB_ATTR_MR_ALLOC_ACCESS, access);
	ioc_key(&ioc, VHCA_IB_ATTR_MR_ALLOC_KEY, key);
	ioc_ptr(&ioc, VHCA_IB_ATTR_MR_ALLOC_RESP_LKEY, &lkey, sizeof(lkey));
	ioc_ptr(&ioc, VHCA_IB_ATTR_MR_ALLOC_RESP_RKEY, &rkey, sizeof(rkey));
	ioc_ptr(&ioc, VHCA_IB_ATTR_MR_ALLOC_RESP_MMAP_OFFSET, &offset,
		sizeof(offset));
	ioc_ptr(&ioc, VHCA_IB_ATTR_MR_ALLOC_RESP_BLOCKS, &blocks,
		sizeof(blocks));
	err = ioc_call(pd->context->cmd_fd, &ioc);
	if (err)
		goto out_unreserve;

	map = mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		   pd->context->cmd_fd, (off_t)offset);
	if (map == MAP_FAILED) {
		err = errno;
		cmd_dereg(pd->context->cmd_fd, (uint32_t)handle->data);
		goto out_unreserve;
	}
	m->map = map;
	m->map_len = len;
	return mr_made(m, pd, handle, map, length, lkey, rkey);

out_unreserve:
	munmap(at, len);
	free(m);
	errno = err;
	return NULL;
}
