/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the user-space test programs that run in the host
 * root's chroot (user_cm.c, user_fabric.c, user_life.c, user_mrlib.c,
 * stress.c):
 * the time, the device opened by name with libibverbs, its IPv4-mapped
 * RoCE v2 GID, a loopback RC QP brought to RTS, and the byte pattern the
 * programs move and check.
 *
 * Everything here is static inline, so a program that uses only part of
 * it builds warning-free with -Wall. The helpers that assert take the
 * harness's _metadata and exist only when kselftest_harness.h is included
 * first (user_life.c is no harness program and uses the others). An
 * assertion that fails in here is logged as this header's name; the
 * VM-tier scripts (chardev_lib.sh's tap_to_lines) take such a line as the
 * reason of the failure, like one of the program's own.
 */
#ifndef USER_UTIL_H
#define USER_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

/* The port every program uses: the devices under test have one. */
#define UU_PORT		1

/* CLOCK_MONOTONIC in milliseconds. */
static inline uint64_t uu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * The RDMA device named @name, opened: its context, or NULL with errno
 * set (ENODEV when no device has that name).
 */
static inline struct ibv_context *uu_open_device(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		err = errno;
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		errno = err;
	return ctx;
}

/*
 * The IPv4-mapped RoCE v2 GIDs of port UU_PORT (::ffff:a.b.c.d, one per
 * IPv4 address of the netdev), the first @max of them in the GID table's
 * order: each GID in @gid[i] and its index in @index[i]; how many were
 * found, or ibv_query_gid_table()'s negative errno.
 */
static inline int uu_roce_gids(struct ibv_context *ctx, union ibv_gid *gid,
			       int *index, int max)
{
	static const uint8_t v4_mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};
	struct ibv_gid_entry ents[32];
	int found = 0;
	ssize_t n;
	int i;

	n = ibv_query_gid_table(ctx, ents, 32, 0);
	if (n < 0)
		return n;
	for (i = 0; i < n && found < max; i++) {
		if (ents[i].port_num == UU_PORT &&
		    ents[i].gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(ents[i].gid.raw, v4_mapped, sizeof(v4_mapped))) {
			gid[found] = ents[i].gid;
			index[found++] = ents[i].gid_index;
		}
	}
	return found;
}

/*
 * The first of them (uu_roce_gids()), which a loopback QP addresses: its
 * index, the GID in @gid; -ENOENT when the port has none, or
 * ibv_query_gid_table()'s negative errno.
 */
static inline int uu_roce_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	int index, n = uu_roce_gids(ctx, gid, &index, 1);

	return n < 0 ? n : n ? index : -ENOENT;
}

/*
 * RC QP @qp, in RESET, through INIT (@access) and RTR, towards QP @dest of
 * the same device over GID @gid at index @gid_index (loopback: source and
 * destination are both that GID), to RTS: 0, or the errno value of the
 * ibv_modify_qp() that failed.
 */
static inline int uu_qp_to_rts(struct ibv_qp *qp, unsigned int access,
			       uint32_t dest, int gid_index,
			       const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = UU_PORT,
		.qp_access_flags = access,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = UU_PORT;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * Byte @i of pattern @seed. Patterns of two seeds (mod 256) differ in
 * every byte, and the (i >> 8) term keeps a pattern from repeating every
 * 256 bytes, so a shifted or misplaced copy does not pass as the right one.
 */
static inline uint8_t uu_pat(unsigned int seed, size_t i)
{
	return (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* @len bytes of pattern @seed at @b. */
static inline void uu_fill(uint8_t *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = uu_pat(seed, i);
}

/* How many of the @len bytes at @got are pattern @seed from its byte @from on. */
static inline size_t uu_pattern_len(const uint8_t *got, size_t len,
				    unsigned int seed, size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (got[i] != uu_pat(seed, from + i))
			break;
	return i;
}

/* The @len bytes at @got are pattern @seed from its start. */
static inline bool uu_has_pattern(const uint8_t *got, size_t len,
				  unsigned int seed)
{
	return uu_pattern_len(got, len, seed, 0) == len;
}

#ifdef __KSELFTEST_HARNESS_H

/* uu_open_device(), which must succeed: the runner made the device. */
static inline struct ibv_context *uu_open(struct __test_metadata *_metadata,
					  const char *name)
{
	struct ibv_context *ctx = uu_open_device(name);

	ASSERT_NE(NULL, ctx) TH_LOG("cannot open %s: %s", name, strerror(errno));
	return ctx;
}

/* uu_roce_gid(), which must find the GID: its index, the GID in @gid. */
static inline int uu_gid(struct __test_metadata *_metadata,
			 struct ibv_context *ctx, const char *name,
			 union ibv_gid *gid)
{
	int idx = uu_roce_gid(ctx, gid);

	ASSERT_LE(0, idx) TH_LOG("%s has no IPv4 RoCE v2 GID: %s", name,
				 idx == -ENOENT ? "none in its GID table" :
				 strerror(-idx));
	return idx;
}

/* @len bytes of private anonymous memory, every byte @byte. */
static inline uint8_t *uu_map_buf(struct __test_metadata *_metadata,
				  size_t len, uint8_t byte)
{
	uint8_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, b) TH_LOG("mmap: %s", strerror(errno));
	memset(b, byte, len);
	return b;
}

/* @len bytes at @got must be pattern @seed from its byte @from on. */
static inline void uu_is_pattern(struct __test_metadata *_metadata,
				 const char *what, const uint8_t *got,
				 size_t len, unsigned int seed, size_t from)
{
	size_t i = uu_pattern_len(got, len, seed, from);

	ASSERT_EQ(len, i) TH_LOG("%s: byte %zu of %zu is 0x%02x, not the pattern",
				 what, i, len, got[i]);
}

/* @len bytes at @got must all be @byte (untouched fill). */
static inline void uu_is_fill(struct __test_metadata *_metadata,
			      const char *what, const uint8_t *got, size_t len,
			      uint8_t byte)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (got[i] != byte)
			break;
	ASSERT_EQ(len, i) TH_LOG("%s: byte %zu of %zu is 0x%02x, want 0x%02x untouched",
				 what, i, len, got[i], byte);
}

/*
 * This process's objects of @kind (mr, srq, cq, qp, ...) on device @dev,
 * by "rdma res show" (which filters QPs by link, DEV or DEV/PORT, the
 * rest by dev).
 */
static inline int uu_res_count(struct __test_metadata *_metadata,
			       const char *dev, const char *kind)
{
	char cmd[128], line[512], last[512] = "", pid[32];
	int n = 0, st;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show %s %s %s 2>&1", kind,
		 strcmp(kind, "qp") ? "dev" : "link", dev);
	snprintf(pid, sizeof(pid), " pid %d ", getpid());
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f) TH_LOG("popen %s: %s", cmd, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, pid))
			n++;
		else
			memcpy(last, line, sizeof(last));
	}
	st = pclose(f);
	ASSERT_EQ(0, st) TH_LOG("%s: status 0x%x, last other line: %s", cmd,
				st, last);
	return n;
}

#endif /* __KSELFTEST_HARNESS_H */

#endif /* USER_UTIL_H */
