#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench, in one VM boot:
#
# 1. User MR registration: mr_bench times REG+DEREG rounds of 4 KiB to
#    1 GiB buffers (4 KiB pages and THP) through /dev/mrcore_test, that is
#    ib_reg_user_mr() and ib_dereg_mr(), on vhca0 and on rxe0 side by side;
#    tables with the ratio and vhca's translation entries. The format is in
#    Documentation/mrcore/registration.rst, "Benchmark".
# 2. Data-path copy rate, on the same two devices: dp_bench times a plain
#    memcpy between kernel buffers and RDMA WRITEs between two MRs over a
#    loopback RC pair (4 KiB, 64 KiB, 1 MiB); a table of MB/s with the
#    ratios vhca/memcpy and vhca/rxe. Then ./frwr_tests --bench: FRWR
#    REG_MR + LOCAL_INV cycles per second with 1, 16 and 256 pages, vhca
#    beside rxe (and on vhca once more with engine_linger_us=20), and
#    ./fmr_tests --bench: FMR pool map/unmap with cache
#    hits and misses on vhca (rxe has no FMRs). Then odp_bench: on-demand
#    paging on vhca (rxe has no ODP in 6.1): 1 GiB registration pinned vs
#    ODP, first-touch throughput of pinned, ODP and prefetched ODP memory,
#    fault-to-resume latency of 4 KiB and 2 MiB faults, invalidation cost.
# 3. NVMe-oF over RDMA, vhca beside rxe: one device at a time on a dummy
#    netdev of its own, with an nvmet-rdma port and subsystem of its own
#    exporting the same RAM disk; the host connects with nr_io_queues =
#    fio jobs (nvme-rdma caps it at the CPUs). fio 4 KiB random read (QD 32)
#    and 128 KiB sequential read (QD 32), 1 and 4 jobs (group_reporting),
#    $RUNTIME s each. A table with the ratio vhca/rxe. Around each vhca
#    4 KiB run, the share of the CPUs that was busy and the share of that
#    the engine's workers took (/proc/stat, vhca's debugfs "engine"), and
#    the IOPS the same CPU time would give with a free engine.
#
# These are measurements: nothing is compared with a threshold. A figure
# that cannot be measured reads n/a and its part prints a "not ok" line
# saying why; the other parts still run.
# Runs in the selftests directory (MRC_SELFTESTS, by default where it is
# in the source tree), for its lib.sh and nvmeof.sh and for the tests that
# have a benchmark mode; its own programs are beside this script.
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
cd "${MRC_SELFTESTS:-$BENCH_DIR/../testing/selftests/mrcore}" || exit 1
. ./lib.sh
. ./nvmeof.sh

RUNTIME=${BENCH_RUNTIME:-10}

MR_VHCA=vhca0
MR_VHCA_NETDEV=mbd0
MR_RXE=rxe0
MR_RXE_NETDEV=mbd1
# Options of mr_bench, e.g. "-s 0.1" for a tenth of the rounds.
MR_BENCH_ARGS=${MR_BENCH_ARGS:-}
# Options of dp_bench, e.g. "-t 1" for 1 s a cell.
DP_BENCH_ARGS=${DP_BENCH_ARGS:-}
# Options of frwr_tests --bench / fmr_tests --bench, e.g. "-t 1".
FRWR_BENCH_ARGS=${FRWR_BENCH_ARGS:-}
FMR_BENCH_ARGS=${FMR_BENCH_ARGS:-}

# mr_down: undo what mr_bench_part set up, best effort.
mr_down() {
	rdma link del $MR_VHCA 2>/dev/null
	rdma link del $MR_RXE 2>/dev/null
	ip link del $MR_VHCA_NETDEV 2>/dev/null
	ip link del $MR_RXE_NETDEV 2>/dev/null
	rmmod mrcore_test 2>/dev/null
	unload_mrcore 2>/dev/null
}

# mr_missing WHY: neither the registration nor the copy-rate figures can
# be measured.
mr_missing() {
	t_fail "bench: reg/dereg figures measured" "$1"
	t_fail "bench: data-path copy rates measured" "$1"
	mr_down
	return 1
}

# mr_bench_part: vhca0 and rxe0 on dummy netdevs of their own, mr_bench
# and dp_bench on both, then everything removed again so the NVMe-oF part
# starts clean.
mr_bench_part() {
	local rc

	# rxe's ICRC needs a crc32 implementation; the generic one always works.
	modprobe crc32_generic 2>/dev/null
	modprobe rdma_rxe || mr_missing "modprobe rdma_rxe failed" || return 1
	load_mrcore || mr_missing "mrcore and vhca do not load" || return 1
	load_mrcore_test || mr_missing "mrcore_test does not load" || return 1
	[ -c /dev/mrcore_test ] || mr_missing "no /dev/mrcore_test" || return 1
	[ -x $BENCH_DIR/mr_bench ] || mr_missing "no $BENCH_DIR/mr_bench" || return 1
	dummy_up $MR_VHCA_NETDEV 10.78.0.1/24 ||
		mr_missing "cannot create dummy $MR_VHCA_NETDEV" || return 1
	rdma link add $MR_VHCA type vhca netdev $MR_VHCA_NETDEV ||
		mr_missing "rdma link add $MR_VHCA failed" || return 1
	dummy_up $MR_RXE_NETDEV 10.79.0.1/24 ||
		mr_missing "cannot create dummy $MR_RXE_NETDEV" || return 1
	rdma link add $MR_RXE type rxe netdev $MR_RXE_NETDEV ||
		mr_missing "rdma link add $MR_RXE failed" || return 1

	# Its own "ok"/"not ok" line says whether every cell was measured.
	# shellcheck disable=SC2086
	$BENCH_DIR/mr_bench $MR_BENCH_ARGS $MR_VHCA $MR_RXE 2>&1
	rc=$?
	[ $rc -le 1 ] || t_fail "bench: mr_bench ran to its end" "exit status $rc"

	# The same: its last line is "ok"/"not ok". A wedged data path ends
	# its wait in the module after MRCT_QP_WAIT_MS (60 s without progress);
	# the deadline is for the rest.
	if [ -x $BENCH_DIR/dp_bench ]; then
		# shellcheck disable=SC2086
		run_for 300 $BENCH_DIR/dp_bench $DP_BENCH_ARGS $MR_VHCA $MR_RXE
		rc=$?
		[ $rc -le 1 ] ||
			t_fail "bench: dp_bench ran to its end" "exit status $rc"
	else
		t_fail "bench: data-path copy rates measured" "no $BENCH_DIR/dp_bench"
	fi

	if [ -x ./frwr_tests ]; then
		# shellcheck disable=SC2086
		run_for 300 ./frwr_tests --bench $FRWR_BENCH_ARGS $MR_VHCA $MR_RXE
		rc=$?
		[ $rc -le 1 ] ||
			t_fail "bench: frwr_tests --bench ran to its end" "exit status $rc"
		# The same on vhca with the engine lingering (off by default).
		if echo 20 > /sys/module/vhca/parameters/engine_linger_us; then
			echo "bench: FRWR again on $MR_VHCA with engine_linger_us=20"
			# shellcheck disable=SC2086
			run_for 300 ./frwr_tests --bench $FRWR_BENCH_ARGS $MR_VHCA
			rc=$?
			echo 0 > /sys/module/vhca/parameters/engine_linger_us
			[ $rc -le 1 ] ||
				t_fail "bench: frwr_tests --bench (linger) ran to its end" "exit status $rc"
		fi
	else
		t_fail "bench: FRWR cycle rates measured" "no ./frwr_tests in $(pwd)"
	fi

	# On-demand paging exists on vhca only (6.1's rxe refuses the
	# registration, which odp_bench reports): its own ok/not ok line.
	if [ -x $BENCH_DIR/odp_bench ]; then
		run_for 600 $BENCH_DIR/odp_bench $MR_VHCA $MR_RXE
		rc=$?
		[ $rc -le 1 ] || t_fail "bench: odp_bench ran to its end" "exit status $rc"
	else
		t_fail "bench: odp figures measured" "no $BENCH_DIR/odp_bench"
	fi

	t_eval "bench: $MR_VHCA and $MR_RXE removed, modules unloaded" \
		"rdma link del $MR_VHCA && rdma link del $MR_RXE &&
		 rmmod mrcore_test && unload_mrcore"
	ip link del $MR_VHCA_NETDEV
	ip link del $MR_RXE_NETDEV
}

mr_bench_part

# FMR pools have no rxe counterpart: hits against misses on vhca alone.
# It loads and unloads the modules itself and prints its own ok/not ok.
FMR_BENCH_ARGS=$FMR_BENCH_ARGS sh ./fmr_chardev.sh --bench

# --- NVMe-oF --------------------------------------------------------------

# fio_figure DEV RW BS QD JOBS FIELD: one number from fio's terse output
# (field 8 = read IOPS, field 7 = read KiB/s; one line for all jobs with
# group_reporting), or nothing when fio failed or overran its deadline.
fio_figure() {
	run_for $((RUNTIME + 60)) \
		fio --thread --name=b --filename="$1" --direct=1 \
		    --ioengine=libaio --rw="$2" --bs="$3" --iodepth="$4" \
		    --numjobs="$5" --time_based --runtime="$RUNTIME" \
		    --size=100M --group_reporting \
		    --output-format=terse --terse-version=3 |
		awk -F';' -v f="$6" '$1 == "3" && $f ~ /^[0-9]+$/ {print $f; exit}'
}

# nv_set TYPE JOBS WHAT VALUE / nv_get TYPE JOBS WHAT: a figure of the
# NVMe-oF part (WHAT: iops, kibs or queues).
nv_set() { eval "nv_${1}_${2}_$3=\$4"; }
nv_get() { eval "echo \${nv_${1}_${2}_$3:-}"; }

# nv_why TYPE WHY: the first reason TYPE's figures are incomplete.
nv_why() {
	[ -n "$(eval "echo \${nv_why_$1:-}")" ] || eval "nv_why_$1=\$2"
}

# cpu_ticks: busy and total CPU time of all CPUs so far, in USER_HZ ticks
# (busy: user, nice, system, irq, softirq, steal).
cpu_ticks() {
	awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9,
			      $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit}' /proc/stat
}

# engine_ns DEV: nanoseconds vhca DEV's engine has been busy.
engine_ns() {
	awk '$1 == "busy_ns" {print $2}' "/sys/kernel/debug/vhca/$1/engine" 2>/dev/null
}

# nv_share JOBS IOPS T0 T1 E0 E1: where the CPUs went during a vhca 4 KiB
# run (cpu_ticks before/after, engine_ns before/after), and the IOPS the
# same CPU time would give if the engine cost nothing: the ceiling of
# any engine speed-up when the CPUs are saturated.
nv_share() {
	awk -v j="$1" -v iops="$2" -v t0="$3" -v t1="$4" -v e0="$5" -v e1="$6" \
	    -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" 'BEGIN {
		split(t0, a, " "); split(t1, b, " ")
		busy = (b[1] - a[1]) / hz; total = (b[2] - a[2]) / hz
		eng = (e1 - e0) / 1e9
		if (total <= 0 || busy <= eng || iops == "") {
			print "bench: NVMe-oF over vhca0, " j " job(s): CPU share not measured"
			exit
		}
		printf "bench: NVMe-oF over vhca0, %d job(s), 4 KiB randread: CPUs busy %.0f%% of the time, vhca engine %.1f%% of the CPU time used; with a free engine at most %.0f IOPS (%.2fx)\n",
		       j, 100 * busy / total, 100 * eng / busy,
		       iops * busy / (busy - eng), busy / (busy - eng)
	}'
}

# nv_side TYPE DEV NETDEV ADDR PORT: DEV of TYPE on NETDEV with ADDR, its
# own nvmet port and subsystem on the RAM disk, and for 1 and 4 jobs a
# connect with as many I/O queues, the two fio runs, a disconnect.
nv_side() {
	local type=$1 dev=$2 netdev=$3 addr=$4 jobs blk out t0 t1 e0 e1

	NQN=nqn.2026-11.org.mrcore:bench-$dev
	NVMET_PORT=$5
	if ! out=$(run_for $((PROGRESS_TMO + 30)) rdma_link_up "$type" "$dev" "$netdev" "$addr"); then
		nv_why "$type" "$dev: $(echo "$out" | tail -1)"
		run_for 60 rdma_link_down "$dev" "$netdev" >/dev/null 2>&1
		return 1
	fi
	if ! out=$(nvmet_up "$addr" 2>&1); then
		nv_why "$type" "nvmet port on $addr: $(echo "$out" | tail -1)"
		nvmet_down >/dev/null 2>&1
		run_for 60 rdma_link_down "$dev" "$netdev" >/dev/null 2>&1
		return 1
	fi
	for jobs in 1 4; do
		if ! blk=$(nvme_host_up "$addr" $jobs); then
			nv_why "$type" "connect, nr_io_queues=$jobs: $(echo "$blk" | tail -1)"
			nvme_host_down >/dev/null 2>&1
			continue
		fi
		nv_set "$type" $jobs queues "$(nvme_queues)"
		t0=$(cpu_ticks)
		e0=$(engine_ns "$dev")
		nv_set "$type" $jobs iops "$(fio_figure "$blk" randread 4k 32 $jobs 8)"
		t1=$(cpu_ticks)
		e1=$(engine_ns "$dev")
		[ "$type" = vhca ] &&
			nv_share $jobs "$(nv_get "$type" $jobs iops)" "$t0" "$t1" "$e0" "$e1"
		nv_set "$type" $jobs kibs "$(fio_figure "$blk" read 128k 32 $jobs 7)"
		echo "bench: NVMe-oF over $dev, $jobs job(s), $(nv_get "$type" $jobs queues) I/O queue(s):" \
		     "4 KiB randread $(nv_get "$type" $jobs iops) IOPS," \
		     "128 KiB read $(nv_get "$type" $jobs kibs) KiB/s"
		nvme_host_down >/dev/null ||
			nv_why "$type" "disconnect after $jobs job(s) timed out"
	done
	nvmet_down
	run_for 60 rdma_link_down "$dev" "$netdev" >/dev/null ||
		nv_why "$type" "rdma link del $dev failed"
}

# nv_mbps KIB/S: MB/s (10^6 B/s) with one decimal, or n/a.
nv_mbps() {
	[ -n "$1" ] || { echo n/a; return; }
	awk -v k="$1" 'BEGIN {printf "%.1f", k * 1024 / 1e6}'
}

# nv_ratio A B: A / B with two decimals, or n/a.
nv_ratio() {
	case "$1:$2" in
	n/a:* | *:n/a | :* | *: | *:0 | *:0.0) echo n/a; return ;;
	esac
	awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'
}

# nv_row LABEL JOBS RXE VHCA
nv_row() {
	printf '| %-29s | %4s | %10s | %10s | %8s |\n' "$1" "$2" "${3:-n/a}" \
		"${4:-n/a}" "$(nv_ratio "${4:-n/a}" "${3:-n/a}")"
}

# nv_verdict TYPE DEV: one line, whether all of TYPE's figures were measured.
nv_verdict() {
	local jobs w why

	why=$(eval "echo \${nv_why_$1:-}")
	for jobs in 1 4; do
		for w in iops kibs; do
			case "$(nv_get "$1" $jobs $w)" in
			"" | 0) why=${why:-"$jobs job(s): no $w figure (fio failed)"} ;;
			esac
		done
	done
	if [ -z "$why" ]; then
		t_ok "bench: NVMe-oF over $2 figures measured"
	else
		t_fail "bench: NVMe-oF over $2 figures measured" "$why"
	fi
}

nvmeof_part() {
	local ncpu j

	if ! nvmeof_modules || ! modprobe rdma_rxe || ! load_mrcore; then
		t_fail "bench: NVMe-oF modules load" "nvmet, nvme-rdma, rxe, mrcore or vhca"
		return 1
	fi
	# A broken connection fails I/O at once instead of hanging fio.
	NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
	nv_side rxe rxe0 nbr0 10.77.0.1 11
	nv_side vhca vhca0 nbv0 10.76.0.1 12
	run_for 60 unload_mrcore >/dev/null ||
		nv_why vhca "rmmod vhca mrcore failed"

	ncpu=$(grep -c ^processor /proc/cpuinfo)
	echo "bench: NVMe-oF over RDMA, RAM-disk namespace (brd), fio libaio direct, QD 32 per job, ${RUNTIME} s each"
	echo "bench: nr_io_queues = jobs (nvme-rdma caps it at the $ncpu CPUs); I/O queues used, rxe/vhca:" \
	     "1 job $(nv_get rxe 1 queues)/$(nv_get vhca 1 queues)," \
	     "4 jobs $(nv_get rxe 4 queues)/$(nv_get vhca 4 queues); ratio = vhca / rxe"
	echo "| workload                      | jobs |        rxe |       vhca | vhca/rxe |"
	echo "|-------------------------------|-----:|-----------:|-----------:|---------:|"
	for j in 1 4; do
		nv_row "4 KiB randread QD32 (IOPS)" $j \
			"$(nv_get rxe $j iops)" "$(nv_get vhca $j iops)"
	done
	for j in 1 4; do
		nv_row "128 KiB seq read QD32 (MB/s)" $j \
			"$(nv_mbps "$(nv_get rxe $j kibs)")" \
			"$(nv_mbps "$(nv_get vhca $j kibs)")"
	done
	nv_verdict rxe rxe0
	nv_verdict vhca vhca0
}

nvmeof_part
