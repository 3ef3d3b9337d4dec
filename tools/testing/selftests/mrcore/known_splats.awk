# SPDX-License-Identifier: GPL-2.0
# A kernel log on stdin, the same log on stdout without the warnings we
# know to come from 6.1 code that is not ours and to be harmless here;
# each one left out is named on stderr as a "#" line. Used by scripts/lib.sh on console
# logs and by the VM scripts on dmesg.
#
# One today: nvme-rdma kmallocs its 16-byte completion entries and maps
# each DMA_FROM_DEVICE, so entries sharing a cacheline overlap, and
# DMA-API debug warns "cacheline tracking EEXIST" from nvme_rdma_alloc_qe
# on any device that really DMA-maps (rxe maps nothing, so it never shows
# there). It is harmless on x86, whose DMA is cache-coherent.
#
# Two: isert_create_send_desc() syncs tx_desc->dma_addr for the CPU before
# isert_init_tx_hdrs() has mapped it (a fresh command's descriptor, e.g.
# the SendTargets text response), so DMA-API debug warns that it "tries
# to sync DMA memory it has not allocated [device address=0x0...]". The
# sync of address 0 does nothing on x86.
#
# Three: ib_cq_pool_cleanup()'s WARN_ON(cq->cqe_used) when "rdma link
# del" removes a device under a live iSER target session (removal_vhca.sh,
# linkdel-iser; seen once so far, on the stock kernel). 6.1's ib_isert
# answers RDMA_CM_EVENT_DEVICE_REMOVAL with wait_event_interruptible(rem_wait,
# state == ISER_CONN_DOWN), but isert_release_work() sets ISER_CONN_DOWN
# before isert_put_conn() reaches isert_destroy_qp() and its
# ib_cq_pool_put(), so the handler can return, and ib_core go on to
# ib_cq_pool_cleanup(), while the pooled CQ is still in use. ib_core then
# frees the CQ itself. Left out only with the link deletion in the trace
# and ib_isert loaded. The same deletion (the same PID) may go on to warn
# twice more for the same cause (seen once, 2026-11-28): ib_free_cq()'s
# WARN_ON_ONCE(cq->usecnt), from ib_cq_pool_cleanup(), as isert's QP
# still holds the CQ; and rdma_restrack_clean()'s WARN_ON(!xa_empty())
# from ib_dealloc_device(), as that QP is still tracked. Those two are
# left out only after the first, from the same PID.
#
# A warning block is left out only when it holds both the message and the
# frame.
function flush(   i, pid) {
	pid = ""
	if (match(blk, /WARNING: CPU: [0-9]+ PID: [0-9]+ /))
		pid = substr(blk, RSTART, RLENGTH)
	sub(/.*PID: /, "", pid)
	if (blk ~ /overlapping mappings aren.t supported/ &&
	    blk ~ /nvme_rdma_alloc_qe/) {
		print "# known 6.1 false positive left out: DMA-API overlap " \
		      "from nvme_rdma_alloc_qe" > "/dev/stderr"
	} else if (blk ~ /tries to sync DMA memory it has not allocated \[device address=0x0+\]/ &&
		   blk ~ /isert_create_send_desc/) {
		print "# known 6.1 false positive left out: DMA-API sync of " \
		      "an unmapped descriptor from isert_create_send_desc" \
		      > "/dev/stderr"
	} else if (blk ~ /WARNING: .* at drivers\/infiniband\/core\/cq\.c:[0-9]+ ib_cq_pool_cleanup/ &&
		   blk ~ /nldev_dellink/ && blk ~ /Modules linked in:.* ib_isert /) {
		print "# known 6.1 bug left out: ib_cq_pool_cleanup finds a " \
		      "pooled CQ ib_isert has not put yet at rdma link del" \
		      > "/dev/stderr"
		pool_pid = pid
	} else if (pid != "" && pid == pool_pid &&
		   blk ~ /nldev_dellink/ && blk ~ /Modules linked in:.* ib_isert / &&
		   ((blk ~ /WARNING: .* at drivers\/infiniband\/core\/cq\.c:[0-9]+ ib_free_cq/ &&
		     blk ~ /ib_cq_pool_cleanup/) ||
		    (blk ~ /WARNING: .* at drivers\/infiniband\/core\/restrack\.c:[0-9]+ rdma_restrack_clean/ &&
		     blk ~ /ib_dealloc_device/))) {
		print "# known 6.1 bug left out: the same rdma link del " \
		      "frees the CQ ib_isert's QP still holds, and finds " \
		      "that QP tracked" > "/dev/stderr"
	} else {
		for (i = 1; i <= n; i++)
			print lines[i]
	}
	n = 0; blk = ""; inblk = 0
}
/-+\[ cut here \]-+/ { if (inblk) flush(); inblk = 1 }
inblk {
	lines[++n] = $0; blk = blk "\n" $0
	if ($0 ~ /---\[ end trace/) flush()
	next
}
{ print }
END { if (inblk) flush() }
