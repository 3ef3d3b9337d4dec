// SPDX-License-Identifier: GPL-2.0
/*
 * vhca hardware counters: what `rdma statistic show link <dev>/1` and
 * /sys/class/infiniband/<dev>/ports/1/hw_counters/ show.
 *
 * The counters are the device's on-demand paging and dma-buf figures,
 * read when ib_core asks (at most every RDMA_HW_STATS_DEFAULT_LIFESPAN
 * ms): mrcore's per-device ODP counters (mrc_odp_dev_stats), the
 * engine's fault queue (vhca_odp_stats) and mrcore's dma-buf counters
 * (mrc_dmabuf_dev_stats). They are device-wide; vhca has one port, which
 * reports them. The same values are in debugfs (mrcore/<dev>/odp and
 * dmabuf, vhca/<dev>/odp) with the latency histograms besides.
 */
#include <rdma/ib_verbs.h>

#include "vhca_loc.h"

enum vhca_hw_counter {
	VHCA_CNT_ODP_FAULTS,
	VHCA_CNT_ODP_FAULT_ERRORS,
	VHCA_CNT_ODP_FAULT_PAGES,
	VHCA_CNT_ODP_INVALIDATIONS,
	VHCA_CNT_ODP_INVALIDATED_PAGES,
	VHCA_CNT_ODP_PREFETCHES,
	VHCA_CNT_ODP_PREFETCHED_PAGES,
	VHCA_CNT_ODP_CHILDREN_CREATED,
	VHCA_CNT_ODP_CHILDREN_RECLAIMED,
	VHCA_CNT_ODP_QP_FAULTS,
	VHCA_CNT_ODP_QP_FAULT_ERRORS,
	VHCA_CNT_ODP_SYNC_FAULTS,
	VHCA_CNT_DMABUF_MOVES,
	VHCA_CNT_DMABUF_REMAPS,
	VHCA_NUM_HW_COUNTERS	/* keep me last */
};

static const struct rdma_stat_desc vhca_hw_counter_descs[] = {
	[VHCA_CNT_ODP_FAULTS] = { .name = "odp_faults" },
	[VHCA_CNT_ODP_FAULT_ERRORS] = { .name = "odp_fault_errors" },
	[VHCA_CNT_ODP_FAULT_PAGES] = { .name = "odp_fault_pages" },
	[VHCA_CNT_ODP_INVALIDATIONS] = { .name = "odp_invalidations" },
	[VHCA_CNT_ODP_INVALIDATED_PAGES] = { .name = "odp_invalidated_pages" },
	[VHCA_CNT_ODP_PREFETCHES] = { .name = "odp_prefetches" },
	[VHCA_CNT_ODP_PREFETCHED_PAGES] = { .name = "odp_prefetched_pages" },
	[VHCA_CNT_ODP_CHILDREN_CREATED] = { .name = "odp_children_created" },
	[VHCA_CNT_ODP_CHILDREN_RECLAIMED] = {
		.name = "odp_children_reclaimed"
	},
	[VHCA_CNT_ODP_QP_FAULTS] = { .name = "odp_qp_faults" },
	[VHCA_CNT_ODP_QP_FAULT_ERRORS] = { .name = "odp_qp_fault_errors" },
	[VHCA_CNT_ODP_SYNC_FAULTS] = { .name = "odp_sync_faults" },
	[VHCA_CNT_DMABUF_MOVES] = { .name = "dmabuf_moves" },
	[VHCA_CNT_DMABUF_REMAPS] = { .name = "dmabuf_remaps" },
};

static_assert(ARRAY_SIZE(vhca_hw_counter_descs) == VHCA_NUM_HW_COUNTERS);

/**
 * vhca_alloc_hw_port_stats - ib_device_ops.alloc_hw_port_stats
 * @ibdev: the device
 * @port_num: its port (1)
 *
 * Return: the counters' struct, or NULL without memory.
 */
struct rdma_hw_stats *vhca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num)
{
	return rdma_alloc_hw_stats_struct(vhca_hw_counter_descs,
					  VHCA_NUM_HW_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * vhca_get_hw_stats - ib_device_ops.get_hw_stats
 * @ibdev: the device
 * @stats: from vhca_alloc_hw_port_stats()
 * @port: its port
 * @index: the counter asked for; every counter is read whatever it is
 *
 * Return: the number of counters filled (all of them).
 */
int vhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct vhca_dev *vdev = to_vhca_dev(ibdev);
	const struct mrc_odp_dev_stats *odp = &vdev->mdev.odp;
	const struct mrc_dmabuf_dev_stats *db = &vdev->mdev.dmabuf;
	u64 *v = stats->value;

	v[VHCA_CNT_ODP_FAULTS] = atomic64_read(&odp->faults);
	v[VHCA_CNT_ODP_FAULT_ERRORS] = atomic64_read(&odp->fault_errors);
	v[VHCA_CNT_ODP_FAULT_PAGES] = atomic64_read(&odp->fault_pages);
	v[VHCA_CNT_ODP_INVALIDATIONS] = atomic64_read(&odp->invalidations);
	v[VHCA_CNT_ODP_INVALIDATED_PAGES] =
		atomic64_read(&odp->invalidated_pages);
	v[VHCA_CNT_ODP_PREFETCHES] = atomic64_read(&odp->prefetches);
	v[VHCA_CNT_ODP_PREFETCHED_PAGES] =
		atomic64_read(&odp->prefetched_pages);
	v[VHCA_CNT_ODP_CHILDREN_CREATED] =
		atomic64_read(&odp->children_created);
	v[VHCA_CNT_ODP_CHILDREN_RECLAIMED] =
		atomic64_read(&odp->children_reclaimed);
	v[VHCA_CNT_ODP_QP_FAULTS] = atomic64_read(&vdev->odp.faults);
	v[VHCA_CNT_ODP_QP_FAULT_ERRORS] =
		atomic64_read(&vdev->odp.fault_errors);
	v[VHCA_CNT_ODP_SYNC_FAULTS] = atomic64_read(&vdev->odp.sync_faults);
	v[VHCA_CNT_DMABUF_MOVES] = atomic64_read(&db->moves);
	v[VHCA_CNT_DMABUF_REMAPS] = atomic64_read(&db->remaps);
	return VHCA_NUM_HW_COUNTERS;
}
