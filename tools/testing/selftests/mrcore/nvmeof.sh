# SPDX-License-Identifier: GPL-2.0
# RDMA storage helpers: an RDMA device on a dummy netdev, commands run with
# a deadline, NVMe-oF over RDMA (an nvmet-rdma target backed by a RAM disk,
# so data can be verified, and an nvme-rdma host, both in this VM), pattern
# I/O and a kernel-log check. iser.sh builds on the generic ones. The
# NVMe-oF helpers also serve NVMe/TCP (NVME_TRTYPE=tcp: nvmet-tcp and
# nvme-tcp, nvmeof_tcp_modules), which make bench compares with RDMA.
#
# Settings a script may change after sourcing this file:
#   NQN         the subsystem exported and connected to
#   NVMET_PORT  the nvmet port id (one per address)
#   NVMET_DEV   the namespace's backing device
#   NVME_TRTYPE the transport of the port and of the connect: rdma (the
#               default) or tcp
#   NVME_OPTS   extra /dev/nvme-fabrics options, e.g. "ctrl_loss_tmo=5"
#   NVME_CONNECT_TMO, NVME_DISCONNECT_TMO   deadlines in seconds
#
# Deadlines bound failures only: every wait polls and ends when what it
# waits for happens. None is below lib.sh's PROGRESS_TMO (a minute).

NQN=nqn.2026-11.org.mrcore:ram0
CFS=/sys/kernel/config/nvmet
NVMET_PORT=1
NVMET_DEV=/dev/ram0
NVME_TRTYPE=rdma
NVME_OPTS=
NVME_CONNECT_TMO=$PROGRESS_TMO
# Deletion waits for the queues to drain, then nvme_delete_ctrls polls.
NVME_DISCONNECT_TMO=$((PROGRESS_TMO + 30))

# --- Generic ---------------------------------------------------------------

# t_gate NAME CMD...: t_check that also returns CMD's status (lib.sh's
# t_check returns that of its report), for a step later ones depend on.
t_gate() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		t_ok "$name"
	else
		t_fail "$name" "$(echo "$out" | tail -1)"
	fi
	return $rc
}

# kill_tree PID: PID and every descendant, children first (so that none is
# reparented to init before it is found).
kill_tree() {
	local c
	for c in $(grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null); do
		c=${c#/proc/}
		kill_tree "${c%/status}"
	done
	kill "$1" 2>/dev/null
}

# run_for SECS CMD...: run CMD (a command or a function) with a deadline.
# Prints CMD's output and returns its status, or prints why and returns 124
# when CMD overran; CMD and its children are then sent SIGTERM. A command
# stuck in an uninterruptible kernel wait survives that: it is left behind
# and the script goes on, so that a wedged driver fails checks instead of
# hanging the VM (the hung-task detector then reports it in the log).
# CMD runs with its own output file, never the caller's pipe, so that a
# left-behind process does not hold a command substitution open.
run_for() {
	local secs=$1 d pid n rc
	shift
	d=$(mktemp -d /tmp/run_for.XXXXXX) || return 1
	( "$@"; rc=$?; : > "$d/done"; exit $rc ) < /dev/null > "$d/out" 2>&1 &
	pid=$!
	n=$((secs * 10))
	while [ ! -e "$d/done" ]; do
		if [ $n -le 0 ]; then
			cat "$d/out"
			kill_tree $pid
			echo "timed out after ${secs}s: $*"
			return 124
		fi
		sleep 0.1
		n=$((n - 1))
	done
	wait $pid
	rc=$?
	cat "$d/out"
	rm -rf "$d"
	return $rc
}

# gid_of_ipv4 A.B.C.D: the IPv4-mapped RoCE v2 GID, as sysfs prints it.
gid_of_ipv4() {
	local IFS=.
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

# rdma_link_up TYPE DEV NETDEV ADDR: a dummy NETDEV with ADDR/24 (made
# unless it exists: a device added again keeps its netdev), an RDMA device
# DEV of TYPE (rxe or vhca; the modules must be loaded) on it, and ADDR's
# GID in DEV's table, which the RDMA CM needs to resolve ADDR.
rdma_link_up() {
	local gid
	if [ ! -e "/sys/class/net/$3" ]; then
		dummy_up "$3" "$4/24" || return 1
	fi
	rdma link add "$2" type "$1" netdev "$3" || return 1
	gid=$(gid_of_ipv4 "$4")
	wait_for $PROGRESS_TMO sh -c "grep -q $gid /sys/class/infiniband/$2/ports/1/gids/*" ||
		{ echo "no GID $gid on $2"; return 1; }
}

# rdma_link_down DEV NETDEV
rdma_link_down() {
	local rc=0
	rdma link del "$1" || rc=1
	ip link del "$2" || rc=1
	return $rc
}

# vhca_baseline DEV: remember mrcore's accounting of a fresh DEV (the
# local DMA key, and whatever ib_core's own clients hold) for vhca_idle.
vhca_baseline() {
	local k
	for k in mrs pds mkeys xlt_segs_used; do
		echo "$k $(mrc_stat "$1" $k)"
	done > "/tmp/vhca_baseline.$1"
}

# vhca_idle DEV: mrcore's accounting of DEV is back to its baseline: no
# MR, PD, key or translation segment left behind by the storage stacks.
vhca_idle() {
	local k want v
	[ -s "/tmp/vhca_baseline.$1" ] || { echo "no baseline for $1"; return 1; }
	while read -r k want; do
		v=$(mrc_stat "$1" "$k")
		[ "$v" = "$want" ] || { echo "$k is $v, was $want when $1 was new"; return 1; }
	done < "/tmp/vhca_baseline.$1"
}

# klog_mark TAG: put TAG in the kernel log; klog_since TAG prints what was
# logged after it (the ring buffer is not cleared: the console keeps all).
klog_mark() {
	echo "mrcore-selftest: mark $1" > /dev/kmsg
}

# Known false positives of code that is not ours are left out
# (known_splats.awk says which and why).
klog_since() {
	dmesg | sed -n "/mrcore-selftest: mark $1\$/,\$p" | awk -f ./known_splats.awk
}

# klog_clean TAG: nothing logged since TAG says a resource was leaked or
# the kernel warned.
klog_clean() {
	local bad
	bad=$(klog_since "$1" |
	      grep -E -i 'leak|unregistered with|still in use|WARNING:|BUG:|Call Trace:')
	[ -z "$bad" ] || { echo "$bad" | head -3; return 1; }
}

# klog_no_hang TAG: the hung-task detector reported no task since TAG.
klog_no_hang() {
	local bad
	bad=$(klog_since "$1" | grep -E 'blocked for more than|hung_task')
	[ -z "$bad" ] || { echo "$bad" | head -3; return 1; }
}

# fio_read_kib OUT: KiB read so far by a fio that writes its terse
# status (--output-format=terse --status-interval=1) to OUT: field 6 of
# the latest line, fio's own count of the reads that have completed.
fio_read_kib() {
	awk -F';' '$1 == 3 {kib = $6} END {print kib + 0}' "$1" 2>/dev/null
}

# fio_bg DEV: 4 KiB random reads at QD 16 on DEV in the background, for at
# most 120 s, until fio_bg_wait collects them. fio's output goes to
# /tmp/fio_bg.out (its terse status each second, for fio_bg_running),
# its exit status to /tmp/fio_bg.rc when it exits.
fio_bg() {
	rm -f /tmp/fio_bg.rc /tmp/fio_bg.out
	( fio --thread --name=bg --filename="$1" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth=16 --time_based --runtime=120 \
		--output-format=terse --status-interval=1 \
		> /tmp/fio_bg.out 2>&1
	  echo $? > /tmp/fio_bg.rc ) < /dev/null > /dev/null 2>&1 &
	FIO_BG_PID=$!
}

# fio_bg_seen: fio_bg's fio has completed reads, or it has exited.
fio_bg_seen() {
	[ -e /tmp/fio_bg.rc ] || [ "$(fio_read_kib /tmp/fio_bg.out)" -gt 0 ]
}

# fio_bg_running: wait until fio_bg's fio is seen doing I/O: reads of it
# have completed (its own count) and it is still running. Fails, saying
# why, when it exits first or no read completes within $PROGRESS_TMO s.
fio_bg_running() {
	local kib
	wait_for $PROGRESS_TMO fio_bg_seen
	kib=$(fio_read_kib /tmp/fio_bg.out)
	if [ -e /tmp/fio_bg.rc ]; then
		echo "fio exited ($(cat /tmp/fio_bg.rc)) after $kib KiB: $(grep -v '^3;' /tmp/fio_bg.out | tail -1)"
		return 1
	fi
	[ "$kib" -gt 0 ] ||
		{ echo "no read of fio completed in ${PROGRESS_TMO}s"; return 1; }
	echo "fio has read $kib KiB"
}

# fio_bg_wait SECS: wait up to SECS for fio_bg's fio to exit and print its
# exit status. When it is still running, show on stderr where its threads
# are (state, wait channel, kernel stack) and its last words, kill it (a
# process stuck in the kernel survives that: see run_for), say so and fail.
fio_bg_wait() {
	local p t
	if ! wait_for "$1" test -s /tmp/fio_bg.rc; then
		for p in $(grep -l "^PPid:[[:space:]]*$FIO_BG_PID\$" /proc/[0-9]*/status 2>/dev/null); do
			for t in "${p%/status}"/task/*; do
				echo "# fio thread ${t##*/}: $(awk '$1 == "State:" {print $2}' "$t/status") $(cat "$t/wchan" 2>/dev/null)"
				sed 's/^/#   /' "$t/stack" 2>/dev/null | head -8
			done
		done >&2
		tail -3 /tmp/fio_bg.out | sed 's/^/# fio: /' >&2
		kill_tree "$FIO_BG_PID"
		echo "fio still running ${1}s later"
		return 1
	fi
	wait "$FIO_BG_PID" 2>/dev/null
	cat /tmp/fio_bg.rc
}

# pattern_rw DEV MB: write MB of random data with O_DIRECT, read it back,
# compare byte for byte. The pattern stays in /tmp/pat.
pattern_rw() {
	dd if=/dev/urandom of=/tmp/pat bs=1M count="$2" 2>/dev/null &&
	dd if=/tmp/pat of="$1" bs=1M oflag=direct 2>/dev/null &&
	dd if="$1" of=/tmp/back bs=1M count="$2" iflag=direct 2>/dev/null &&
	cmp /tmp/pat /tmp/back
}

# same_range A B MB SKIP: MB MiB at SKIP MiB are identical on A and B
# (both read with O_DIRECT).
same_range() {
	dd if="$1" of=/tmp/ra bs=1M count="$3" skip="$4" iflag=direct 2>/dev/null &&
	dd if="$2" of=/tmp/rb bs=1M count="$3" skip="$4" iflag=direct 2>/dev/null &&
	cmp /tmp/ra /tmp/rb
}

# fio_verify DEV SIZE: 4 KiB random writes at QD 16 with crc32c verify.
fio_verify() {
	fio --thread --name=verify --filename="$1" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --iodepth=16 --size="$2" \
		--verify=crc32c --do_verify=1 --output=/dev/null
}

# --- NVMe-oF ---------------------------------------------------------------

nvmeof_modules() {
	modprobe crc32_generic 2>/dev/null
	modprobe crc32c_generic 2>/dev/null
	modprobe crct10dif_generic 2>/dev/null
	modprobe brd rd_nr=1 rd_size=131072 &&
	modprobe nvmet && modprobe nvmet-rdma && modprobe nvme-rdma
}

# nvmeof_tcp_modules: the NVMe/TCP target and host (after nvmeof_modules).
nvmeof_tcp_modules() {
	modprobe nvmet-tcp && modprobe nvme-tcp
}

# nvme_timeouts ADMIN IO: nvme_core's command timeouts in seconds, for
# controllers created from now on; prints the old pair for a later restore.
nvme_timeouts() {
	local p=/sys/module/nvme_core/parameters
	echo "$(cat $p/admin_timeout) $(cat $p/io_timeout)"
	echo "$1" > $p/admin_timeout && echo "$2" > $p/io_timeout
}

# nvmet_up ADDR: export $NVMET_DEV as $NQN on ADDR:4420, port $NVMET_PORT,
# transport $NVME_TRTYPE.
nvmet_up() {
	local s=$CFS/subsystems/$NQN p=$CFS/ports/$NVMET_PORT
	mkdir $s &&
	echo 1 > $s/attr_allow_any_host &&
	mkdir $s/namespaces/1 &&
	echo "$NVMET_DEV" > $s/namespaces/1/device_path &&
	echo 1 > $s/namespaces/1/enable &&
	mkdir $p &&
	echo "$NVME_TRTYPE" > $p/addr_trtype &&
	echo ipv4 > $p/addr_adrfam &&
	echo "$1" > $p/addr_traddr &&
	echo 4420 > $p/addr_trsvcid &&
	ln -s $s $p/subsystems/$NQN
}

# On a lockdep kernel the port is left configured: 6.1's nvmet takes
# nvmet_config_sem then a cm_id's handler_mutex when a port goes away,
# while an I/O-queue connect nests them the other way, and lockdep reports
# that once and then switches itself off for the rest of the boot. The VM
# is discarded after the run, so nothing is lost by not removing the port.
nvmet_down() {
	local s=$CFS/subsystems/$NQN p=$CFS/ports/$NVMET_PORT
	if [ -e /proc/lockdep ]; then
		echo "# nvmet port left configured (6.1 nvmet lockdep report on port removal)"
		return 0
	fi
	rm -f $p/subsystems/$NQN
	rmdir $p 2>/dev/null
	echo 0 > $s/namespaces/1/enable 2>/dev/null
	rmdir $s/namespaces/1 2>/dev/null
	rmdir $s 2>/dev/null
}

# nvmet_port_relink: unlink $NQN from port $NVMET_PORT and link it again:
# nvmet disables the port and enables it, and nvmet-rdma listens anew. A
# device removal destroys the port's listener for good (6.1 nvmet-rdma
# repairs a port only after an address change); this brings it back once
# an RDMA device has $NVMET_PORT's address again. Only for a port whose
# listener is gone: disabling it then destroys no cm_id (see nvmet_down).
nvmet_port_relink() {
	local s=$CFS/subsystems/$NQN p=$CFS/ports/$NVMET_PORT
	rm $p/subsystems/$NQN && ln -s $s $p/subsystems/$NQN
}

# nvme_ctrls: the host controllers (/sys/class/nvme/nvmeN) connected to $NQN.
nvme_ctrls() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] && echo "$c"
	done
}

# nvme_ns_dev: the block device of $NQN's namespace 1: the multipath head
# under the subsystem, or the controller's own disk without multipath.
nvme_ns_dev() {
	local s d n
	for s in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		for d in "$s"/nvme*n1 "$s"/nvme*/nvme*n1; do
			n=${d##*/}
			case $n in *c*) continue ;; esac
			[ -b "/dev/$n" ] && { echo "/dev/$n"; return 0; }
		done
	done
	return 1
}

# nvme_connect ADDR Q: the synchronous part of a connect over $NVME_TRTYPE
# (admin queue, I/O queues); interruptible up to the admin connect,
# bounded by nvme_core's admin_timeout after that.
nvme_connect() {
	echo "transport=$NVME_TRTYPE,traddr=$1,trsvcid=4420,nqn=$NQN,nr_io_queues=$2${NVME_OPTS:+,$NVME_OPTS}" \
		> /dev/nvme-fabrics
}

# nvme_host_up ADDR [QUEUES]: connect within $NVME_CONNECT_TMO seconds and
# print the namespace's block device; on failure print why.
nvme_host_up() {
	run_for "$NVME_CONNECT_TMO" nvme_connect "$1" "${2:-1}" || return 1
	wait_for $PROGRESS_TMO nvme_ns_dev || { echo "connected, but no namespace appeared"; return 1; }
	nvme_ns_dev
}

# nvme_queues: the I/O queues of $NQN's (single) controller.
nvme_queues() {
	local c
	c=$(nvme_ctrls | head -1)
	[ -n "$c" ] && echo $(($(cat "$c/queue_count") - 1))
}

nvme_delete_ctrls() {
	local c
	for c in $(nvme_ctrls); do
		echo 1 > "$c/delete_controller" 2>/dev/null
	done
	wait_for $PROGRESS_TMO sh -c "! grep -qx '$NQN' /sys/class/nvme/nvme*/subsysnqn"
}

# nvme_host_down: delete the controllers of $NQN, within
# $NVME_DISCONNECT_TMO seconds (deletion waits for the queues to drain).
nvme_host_down() {
	run_for "$NVME_DISCONNECT_TMO" nvme_delete_ctrls
}

# --- Inspection and module parameters ---------------------------------------

# rdma_res KIND DEV: the lines of "rdma res show KIND" (qp, cq, mr, pd,
# srq, cm_id) that belong to RDMA device DEV, one object a line.
rdma_res() {
	rdma res show "$1" 2>/dev/null |
		grep -E "(^| )(dev|link) $2( |/|\$)"
}

# rdma_res_count KIND DEV COMM: how many of DEV's KIND objects the kernel
# module or process COMM owns (ib_core prints kernel owners as [name]; a
# QP made through the RDMA CM is rdma_cm's, its cm_id the ULP's).
rdma_res_count() {
	rdma_res "$1" "$2" | grep -c -E "comm \[?$3\]?( |\$)"
}

# nvmet_rdma_reload [PARAM=VALUE...]: unload nvmet-rdma and load it again
# with the given module parameters. No nvmet port may use the rdma
# transport any more (nvmet_down first): an enabled port holds the module.
nvmet_rdma_reload() {
	wait_for $PROGRESS_TMO rmmod nvmet_rdma || { echo "rmmod nvmet_rdma failed"; return 1; }
	modprobe nvmet-rdma "$@"
}

# wire_up NETA ADDRA NETB ADDRB: let two local addresses on dummy netdevs
# reach each other as if a wire joined NETA and NETB: policy routes (table
# $WIRE_TABLE, looked up before the local table) send ADDRA->ADDRB out of
# NETA and ADDRB->ADDRA out of NETB, with permanent neighbour entries for
# the far end's MAC. Without them the kernel routes between its own
# addresses through lo, and the passive RDMA CM rejects a connect whose
# source address does not route back through the netdev the request came
# in on (cma_ib_id_from_event: validate_net_dev). wire_down undoes it.
WIRE_TABLE=100
wire_up() {
	local maca macb
	maca=$(cat "/sys/class/net/$1/address") &&
	macb=$(cat "/sys/class/net/$3/address") &&
	ip route add "$4/32" dev "$1" table $WIRE_TABLE &&
	ip route add "$2/32" dev "$3" table $WIRE_TABLE &&
	ip neigh replace "$4" lladdr "$macb" dev "$1" nud permanent &&
	ip neigh replace "$2" lladdr "$maca" dev "$3" nud permanent &&
	ip rule add from "$2" to "$4" table $WIRE_TABLE pref 100 &&
	ip rule add from "$4" to "$2" table $WIRE_TABLE pref 101 &&
	ip rule add table local pref 200 &&
	ip rule del pref 0 table local
}

# wire_down NETA ADDRA NETB ADDRB
wire_down() {
	local rc=0
	ip rule add table local pref 0 2>/dev/null
	ip rule del pref 200 table local 2>/dev/null
	ip rule del pref 100 2>/dev/null || rc=1
	ip rule del pref 101 2>/dev/null || rc=1
	ip route flush table $WIRE_TABLE 2>/dev/null
	ip neigh del "$4" dev "$1" 2>/dev/null
	ip neigh del "$2" dev "$3" 2>/dev/null
	ip rule show | grep -q '^0:.*lookup local' || { echo "local rule not restored"; return 1; }
	return $rc
}
