/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca QP rules: the pure checks and encodings qp.c applies, apart so that
 * qp_test.c can drive them without a device.
 */
#ifndef _VHCA_QP_RULES_H
#define _VHCA_QP_RULES_H

#include "vhca.h"

/* Rights a QP may grant its peer through IB_QP_ACCESS_FLAGS. */
#define VHCA_QP_ACCESS_SUPPORTED	(IB_ACCESS_LOCAL_WRITE |	\
					 IB_ACCESS_REMOTE_WRITE |	\
					 IB_ACCESS_REMOTE_READ |	\
					 IB_ACCESS_REMOTE_ATOMIC)

/* IBTA 10.2.5: a UD send's Q_Key with this bit set means "the QP's own". */
#define VHCA_QKEY_USE_QP		BIT(31)

/* QP numbers are 24 bits; 0 and 1 are the special QPs. */
#define VHCA_QPN_MAX			(BIT(24) - 1)
#define VHCA_QPN_GSI			1

/* The slot of free-running index @idx in @sq; @sq->size is a power of 2. */
static inline struct vhca_send_wqe *vhca_sq_slot(const struct vhca_sq *sq,
						 u32 idx)
{
	return sq->wqe + (size_t)(idx & (sq->size - 1)) * sq->stride;
}

int vhca_qp_check_init(const struct ib_qp_init_attr *init);
int vhca_qp_caps(struct ib_qp_cap *cap, bool has_srq);
u32 vhca_sq_stride(u32 max_sge, u32 max_inline);
int vhca_qp_check_attr(const struct ib_qp_attr *attr, int mask,
		       enum ib_qp_type type);
int vhca_qp_next_state(enum ib_qp_state cur, const struct ib_qp_attr *attr,
		       int mask, enum ib_qp_type type,
		       enum ib_qp_state *next);
int vhca_send_wr_check(const struct vhca_sq *sq, enum ib_qp_type type,
		       const struct ib_send_wr *wr);
void vhca_send_wqe_build(struct vhca_send_wqe *wqe, enum ib_qp_type type,
			 u32 qp_qkey, const struct ib_send_wr *wr);

#endif /* _VHCA_QP_RULES_H */
