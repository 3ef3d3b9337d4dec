#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's user-space RDMA stack, unchanged (run from the host's root in a
# chroot, user_lib.sh), over each device type of USER_DEVS (default
# "rxe vhca"; vmtest.sh passes USER_DEVS as mrcore.userdevs=): rxe0 on
# one dummy netdev, vhca0 on another, each with its own IPv4 address. Two
# processes, a server and a client, talk over the same device and address
# (the traffic loops back through the device):
#
#   ibv_devinfo -v; (vhca) a vhca on the VM's NIC has device/net/ in
#   sysfs; ibv_rc_pingpong (plain, -o ODP, -O implicit ODP),
#   ibv_ud_pingpong, ibv_srq_pingpong, all with -c; rping -v -V,
#   rdma_server / rdma_client, ucmatose, udaddy; perftest's ib_write_bw,
#   ib_read_bw, ib_send_bw, ib_atomic_bw, ib_write_lat, ib_read_lat,
#   ib_send_lat with and without -R (RDMA CM), ib_write_bw --odp;
#   fi_info -p verbs, fi_pingpong -c over verbs (MSG) and over
#   "ofi_rxm;verbs" (RDM; at libfabric's default universe size refused,
#   see below).
#
# Where a device is expected to refuse a case (rxe 6.1 has no ODP), the
# refusal is asserted with the message the program prints (user_expect):
# rxe0 is the reference, and its refusals say nothing about vhca0, which
# is expected to run every case but one that asks more than any device of
# either type has (RDM at libfabric's default universe size).
#
# What the programs check of the data: the ibv_*_pingpong -c check is the
# first byte of each page of the last message (rc and ud: a buffer filled
# with 0x7b before, so a message that did not land is seen; srq: a zeroed
# buffer, so it sees little); it prints "invalid data" but exits 0, so
# that line is looked for. rping -V compares every ping (a mismatch fails
# it) and -v prints them; fi_pingpong -c checks every byte of every
# message. rdma_server/rdma_client, ucmatose, udaddy and perftest check
# completions only.
. ./lib.sh
. ./nvmeof.sh
. ./user_lib.sh

USER_DEVS=${USER_DEVS:-rxe vhca}
# What no run may print: a failed data check of the programs.
BAD='invalid data|data mismatch|Data check error'
PORT=20000

# user_expect TYPE CASE: "ok" when a device of TYPE must run CASE, else
# the message the program prints when it refuses.
user_expect() {
	case "$1:$2" in
	# rxe in 6.1 reports no ODP capability: rc_pingpong checks it
	# first (-O sets -o too).
	rxe:rc_odp|rxe:rc_iodp)
		echo "The device isn't ODP capable" ;;
	# perftest's ODP capability check (the message names send even for
	# a write test), after which it fails to create its MR.
	rxe:write_bw_odp)
		echo "Send is not supported for RC transport" ;;
	# libfabric 1.17's ofi_rxm sizes the CQ of its verbs MSG endpoints
	# for FI_UNIVERSE_SIZE peers (1024 by default): 128 sends and 128
	# receives each, 262144 entries, past max_cqe (rxe 32767, vhca
	# 65535), so ibv_create_cq() fails EINVAL and so does fi_enable()
	# (libfabric's main clamps the size to max_cqe since 3aaf8f5a9, in
	# no release yet).
	*:fi_rdm_universe)
		echo "Unable to create verbs CQ" ;;
	*)	echo ok ;;
	esac
}

# gid_index DEV ADDR: the index of ADDR's RoCE v2 GID in DEV's table.
gid_index() {
	local gid f i
	gid=$(gid_of_ipv4 "$2")
	for f in /sys/class/infiniband/$1/ports/1/gids/*; do
		i=${f##*/}
		[ "$(cat "$f" 2>/dev/null)" = "$gid" ] || continue
		[ "$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			{ echo "$i"; return 0; }
	done
	echo "no RoCE v2 GID $gid on $1" >&2
	return 1
}

# u_show: the last lines of both sides of the last pair, as comments.
u_show() {
	tail -12 "$MRC_SRV_OUT" | sed 's/^/#   server: /'
	tail -12 "$MRC_CLI_OUT" | sed 's/^/#   client: /'
}

# u_pair NAME READY SERVER... -- CLIENT...: mrc_pair, run again (three
# runs at most) when it lost perftest's own race. perftest 4.5-0.17 with
# -R connects twice: its parameters go over one RDMA CM connection, then
# the server creates, binds and listens on a second cm_id while the
# client, back from the exchange at once, connects to it; a request that
# arrives before rdma_listen() is rejected by ib_cm for an unknown service
# ID (REJECTED, reason 8), and the client's retry then uses the cm_ids it
# has just destroyed (segmentation fault; later perftest reallocates them).
# Seen twice in about ten full checks (rxe0 stock, vhca0 debug). Any other
# failure, and this one three times in a row, is the case's result.
u_pair() {
	local name=$1 port=${2#cm:} try
	shift
	for try in 1 2 3; do
		mrc_pair "$@" && return 0
		grep -q -F 'Event: RDMA_CM_EVENT_REJECTED; error: 8.' "$MRC_CLI_OUT" ||
			return 1
		echo "# $name: run $try lost perftest's listen/connect race (REJECTED 8)"
		# The killed server's listener is gone before the next run
		# waits for its own.
		wait_for "$PROGRESS_TMO" u_no_listener "$port" || return 1
	done
	return 1
}

u_no_listener() {
	! rdma res show cm_id 2>/dev/null | grep -q "state LISTEN.*src-addr [^ ]*:$1\( \|\$\)"
}

# u_case NAME CASE READY WANT SERVER... -- CLIENT...: a pair (user_lib's
# mrc_pair) that must do what user_expect says of $TYPE: either both
# exit 0, the client prints a line matching WANT (grep -E) and neither a
# line matching BAD; or it is refused: a side fails and prints the
# expected message.
u_case() {
	local name="$T: $1" exp want=$4 ready=$3 why=
	exp=$(user_expect "$TYPE" "$2")
	shift 4
	PORT=$((PORT + 1))
	if u_pair "$name" "$ready" "$@"; then
		if [ "$exp" != ok ]; then
			why="ran, but $TYPE is expected to refuse it ($exp)"
		elif ! grep -q -E "$want" "$MRC_CLI_OUT"; then
			why="client printed no '$want': $(tail -1 "$MRC_CLI_OUT")"
		elif grep -E -h "$BAD" "$MRC_SRV_OUT" "$MRC_CLI_OUT" > /tmp/u_bad; then
			why="data check: $(head -1 /tmp/u_bad)"
		fi
	elif [ "$exp" = ok ]; then
		why=$(mrc_pair_why)
	elif grep -q -F "$exp" "$MRC_SRV_OUT" "$MRC_CLI_OUT"; then
		t_ok "$name: refused by $TYPE as expected ($exp)"
		return 0
	else
		why="expected the refusal '$exp'; $(mrc_pair_why)"
	fi
	if [ -z "$why" ]; then
		t_ok "$name"
	else
		t_fail "$name" "$why"
		u_show
	fi
}

# u_nic_parent: a vhca bound to the VM's NIC (vmtest.sh's -nic: a netdev
# with a parent device, as a real HCA's is) hangs under that device in
# sysfs, so /sys/class/infiniband/vhca1/device/net/ lists the netdev:
# where rdma-core's tests look for a device's addresses (rxe has no
# parent device, so the path does not exist for rxe0).
u_nic_parent() {
	local n nic= out
	modprobe virtio_net 2>/dev/null || builtin_module virtio_net
	wait_for $PROGRESS_TMO sh -c 'ls -d /sys/class/net/*/device' >/dev/null
	for n in /sys/class/net/*; do
		[ -e "$n/device" ] && { nic=${n##*/}; break; }
	done
	if [ -z "$nic" ]; then
		t_fail "$T: device/net/ of a vhca on the VM's NIC" "no netdev with a parent device"
		return
	fi
	if ! out=$(ip link set "$nic" up 2>&1 && rdma link add vhca1 type vhca netdev "$nic" 2>&1); then
		t_fail "$T: rdma link add vhca1 netdev $nic" "$out"
		return
	fi
	t_eval "$T: /sys/class/infiniband/vhca1/device/net/ lists $nic" \
		"[ \"\$(readlink -f /sys/class/infiniband/vhca1/device)\" = \
		   \"\$(readlink -f /sys/class/net/$nic/device)\" ] &&
		 ls /sys/class/infiniband/vhca1/device/net/ | grep -qx '$nic' ||
		 { ls -l /sys/class/infiniband/vhca1/ | grep device; false; }"
	t_check "$T: rdma link del vhca1 ($nic)" rdma link del vhca1
	ip link set "$nic" down
}

# user_suite TYPE DEV NETDEV ADDR: every case on a device of TYPE.
user_suite() {
	local g d=$2 a=$4 p t env=$MRC_CHROOT_ENV
	T="user-$1" TYPE=$1
	case "$TYPE" in
	rxe)	t_gate "$T: rdma_rxe loads" modprobe rdma_rxe || return 1 ;;
	vhca)	t_gate "$T: mrcore and vhca load" load_mrcore || return 1 ;;
	*)	t_fail "$T: device type" "unknown type $TYPE (rxe or vhca)"
		return 1 ;;
	esac
	t_gate "$T: rdma link add $d netdev $3, GID of $a" \
		rdma_link_up "$TYPE" "$d" "$3" "$a" || return 1
	if ! g=$(gid_index "$d" "$a" 2>&1); then
		t_fail "$T: RoCE v2 GID index of $a" "$g"
		rdma_link_down "$d" "$3"
		return 1
	fi
	echo "# $T: $d, $a, GID index $g"

	t_eval "$T: ibv_devinfo -v -d $d shows it, port active" \
		"mrc_chroot ibv_devinfo -v -d $d > /tmp/u_devinfo 2>&1 &&
		 grep -q 'hca_id:[[:space:]]*$d\$' /tmp/u_devinfo &&
		 grep -q 'state:[[:space:]]*PORT_ACTIVE' /tmp/u_devinfo &&
		 grep -q 'max_qp:' /tmp/u_devinfo &&
		 grep -q 'link_layer:[[:space:]]*Ethernet' /tmp/u_devinfo ||
		 { tail -3 /tmp/u_devinfo; false; }"
	[ "$TYPE" = vhca ] && u_nic_parent

	# libibverbs' examples: a TCP exchange of the QP numbers, then traffic.
	p="-d $d -g $g -n 200 -c"
	u_case "ibv_rc_pingpong" rc tcp:$((PORT + 1)) 'bytes in .* seconds' \
		ibv_rc_pingpong $p -p $((PORT + 1)) -- \
		ibv_rc_pingpong $p -p $((PORT + 1)) $a
	u_case "ibv_rc_pingpong -o (ODP)" rc_odp tcp:$((PORT + 1)) 'bytes in .* seconds' \
		ibv_rc_pingpong $p -o -p $((PORT + 1)) -- \
		ibv_rc_pingpong $p -o -p $((PORT + 1)) $a
	u_case "ibv_rc_pingpong -O (implicit ODP)" rc_iodp tcp:$((PORT + 1)) 'bytes in .* seconds' \
		ibv_rc_pingpong $p -O -p $((PORT + 1)) -- \
		ibv_rc_pingpong $p -O -p $((PORT + 1)) $a
	# UD messages fit the path MTU (1024 on a 1500-byte netdev).
	u_case "ibv_ud_pingpong" ud tcp:$((PORT + 1)) 'bytes in .* seconds' \
		ibv_ud_pingpong $p -s 512 -p $((PORT + 1)) -- \
		ibv_ud_pingpong $p -s 512 -p $((PORT + 1)) $a
	u_case "ibv_srq_pingpong" srq tcp:$((PORT + 1)) 'bytes in .* seconds' \
		ibv_srq_pingpong $p -p $((PORT + 1)) -- \
		ibv_srq_pingpong $p -p $((PORT + 1)) $a

	# librdmacm's examples, connected through the RDMA CM on $a.
	u_case "rping -v -V" rping cm:$((PORT + 1)) 'ping data: rdma-ping-19' \
		rping -s -v -V -C 20 -a $a -p $((PORT + 1)) -- \
		rping -c -v -V -C 20 -a $a -p $((PORT + 1))
	u_case "rdma_server / rdma_client" rdma_server cm:$((PORT + 1)) 'rdma_client: end 0' \
		rdma_server -s $a -p $((PORT + 1)) -- \
		rdma_client -s $a -p $((PORT + 1))
	u_case "ucmatose" ucmatose cm:$((PORT + 1)) 'data transfers complete' \
		ucmatose -b $a -p $((PORT + 1)) -C 20 -- \
		ucmatose -s $a -p $((PORT + 1)) -C 20
	# udaddy's port is fixed (7174); -p is its port space.
	u_case "udaddy" udaddy cm:7174 'data transfers complete' \
		udaddy -b $a -C 20 -- \
		udaddy -s $a -C 20

	# perftest: a TCP exchange, or with -R the RDMA CM.
	for t in write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat; do
		p="-d $d -x $g -F -n 200"
		u_case "ib_$t" "$t" tcp:$((PORT + 1)) '^ *[0-9]+ +[0-9]+ ' \
			ib_$t $p -p $((PORT + 1)) -- \
			ib_$t $p -p $((PORT + 1)) $a
		u_case "ib_$t -R" "${t}_cm" cm:$((PORT + 1)) '^ *[0-9]+ +[0-9]+ ' \
			ib_$t $p -R -p $((PORT + 1)) -- \
			ib_$t $p -R -p $((PORT + 1)) $a
	done
	u_case "ib_write_bw --odp" write_bw_odp tcp:$((PORT + 1)) '^ *[0-9]+ +[0-9]+ ' \
		ib_write_bw $p --odp -p $((PORT + 1)) -- \
		ib_write_bw $p --odp -p $((PORT + 1)) $a

	# libfabric's verbs provider: fi_pingpong's control connection is TCP.
	t_eval "$T: fi_info -p verbs lists $d" \
		"mrc_chroot fi_info -p verbs > /tmp/u_fi_info 2>&1 &&
		 grep -q 'domain: $d\$' /tmp/u_fi_info ||
		 { tail -3 /tmp/u_fi_info; false; }"
	u_case "fi_pingpong -p verbs -e msg -c" fi_msg tcp:$((PORT + 1)) 'Mxfers' \
		fi_pingpong -p verbs -e msg -d $d -c -B $((PORT + 1)) -- \
		fi_pingpong -p verbs -e msg -d $d -c -P $((PORT + 1)) $a
	# RDM endpoints: ofi_rxm over verbs MSG endpoints, one per peer,
	# connected through the RDMA CM on demand. With libfabric's default
	# universe size the server's fi_enable() fails (user_expect; its
	# warning names the CQ); for two processes a universe of 16 asks a
	# CQ of 4096 entries. The client must reach the last size (1m).
	MRC_CHROOT_ENV="$env FI_LOG_LEVEL=warn"
	u_case "fi_pingpong -p ofi_rxm;verbs -e rdm (universe 1024)" fi_rdm_universe \
		tcp:$((PORT + 1)) '^1m ' \
		fi_pingpong -p "ofi_rxm;verbs" -e rdm -d $d -c -B $((PORT + 1)) -- \
		fi_pingpong -p "ofi_rxm;verbs" -e rdm -d $d -c -P $((PORT + 1)) $a
	MRC_CHROOT_ENV="$env FI_LOG_LEVEL=warn FI_UNIVERSE_SIZE=16"
	u_case "fi_pingpong -p ofi_rxm;verbs -e rdm -c (universe 16)" fi_rdm \
		tcp:$((PORT + 1)) '^1m +10 +=10 ' \
		fi_pingpong -p "ofi_rxm;verbs" -e rdm -d $d -c -B $((PORT + 1)) -- \
		fi_pingpong -p "ofi_rxm;verbs" -e rdm -d $d -c -P $((PORT + 1)) $a
	MRC_CHROOT_ENV=$env

	t_check "$T: rdma link del $d" rdma_link_down "$d" "$3"
	# The scripts after this one load vhca themselves.
	[ "$TYPE" = vhca ] && t_check "$T: rmmod vhca mrcore" run_for 60 unload_mrcore
	return 0
}

t_gate "user: the host's root in a chroot at $MRC_ROOT" mrc_root_up ||
	{ t_fail "user: no case run ($USER_DEVS)" "no chroot of the host's root"; exit 1; }
for type in $USER_DEVS; do
	case "$type" in
	rxe)	user_suite rxe rxe0 uvr0 10.90.0.1 ;;
	vhca)	user_suite vhca vhca0 uvv0 10.91.0.1 ;;
	*)	t_fail "user: device type $type" "unknown (USER_DEVS: rxe, vhca)" ;;
	esac
done
mrc_root_down
