/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrcore: FMRs and FMR pools (being written; the API is in fmr.c).
 */
#ifndef _RDMA_MRCORE_FMR_H
#define _RDMA_MRCORE_FMR_H

#include <rdma/mrcore.h>

#endif /* _RDMA_MRCORE_FMR_H */
