/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhca engine: what the rest of the driver calls it through. The queues
 * (qp.c, queue_kern.c) ring it here, as a doorbell; the engine reaches
 * them back only through queue.h.
 */
#ifndef _VHCA_ENGINE_H
#define _VHCA_ENGINE_H

#include "vhca.h"

int vhca_engine_init(struct vhca_dev *vdev);
void vhca_engine_fini(struct vhca_dev *vdev);
/* Initialise @qp's work items; called by create_qp before the QP is visible. */
void vhca_engine_qp_init(struct vhca_qp *qp);
/* Run @qp's send queue soon (post_send, a move to RTS or to ERR). */
void vhca_engine_kick(struct vhca_qp *qp);
/* Run a user QP's send queue now, in its doorbell's system call. */
void vhca_engine_doorbell(struct vhca_qp *qp);
/* Run a kernel QP's send queue now if its post_send may, else soon. */
void vhca_engine_post(struct vhca_qp *qp);
/* Is this CPU in such a run, which may neither sleep nor call back? */
bool vhca_engine_nosleep(void);
/* Enter and leave such a run (vhca_engine_post(), KUnit cases). */
void vhca_engine_nosleep_begin(void);
void vhca_engine_nosleep_end(void);
/* Stop running @qp's send queue and wait for the engine to leave it. */
void vhca_engine_qp_stop(struct vhca_qp *qp);

#endif /* _VHCA_ENGINE_H */
