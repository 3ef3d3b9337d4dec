/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore_test_stamp.c's ioctls, dispatched by the main file: stamped RDMA
 * WRITEs into an MR while it is reregistered or deregistered, and the
 * wait for a receive completion whose SEND failed.
 */
#ifndef _MRCORE_TEST_STAMP_H
#define _MRCORE_TEST_STAMP_H

#include <linux/compiler_types.h>

struct mrct_ctx;

int mrct_stamp_writes(struct mrct_ctx *ctx, void __user *uarg);
int mrct_qp_wait_recv(struct mrct_ctx *ctx, void __user *uarg);

#endif /* _MRCORE_TEST_STAMP_H */
