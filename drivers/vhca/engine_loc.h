/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca engine: prototypes shared by the engine's files only (engine.c,
 * fault.c). The rest of the driver calls the engine through engine.h.
 */
#ifndef _VHCA_ENGINE_LOC_H
#define _VHCA_ENGINE_LOC_H

#include "vhca.h"

/* Where @qp's walks record a fault: nowhere once one failed. */
static inline struct vhca_fault *vhca_qp_fault(struct vhca_qp *qp)
{
	return qp->fault_failed ? NULL : &qp->fault;
}

/* fault.c: the ODP fault queue */
bool vhca_fault_resolve_sync(struct vhca_fault *f);
void vhca_fault_raise(struct vhca_qp *qp);
void vhca_fault_work(struct work_struct *work);

#endif /* _VHCA_ENGINE_LOC_H */
