# SPDX-License-Identifier: GPL-2.0
# iSER helpers: a LIO iSCSI target configured through configfs (no
# targetcli) with a RAM-disk LUN and an iSER portal, and open-iscsi's
# iscsid + iscsiadm on the built-in "iser" iface, both in this VM; and
# iser_suite, the whole test over one RDMA device. Needs lib.sh and
# nvmeof.sh (run_for, rdma_link_up, pattern_rw, fio_verify, klog_*).
#
# The initramfs provides /etc/iscsi (initiator name, short timeouts so a
# broken data path fails a login in seconds) and /etc/passwd with root,
# without which iscsid refuses iscsiadm ("unknown local user with uid 0").

LIO=/sys/kernel/config/target
ISER_IQN=iqn.2026-11.org.mrcore:ram0
ISER_RD=rd_mcp_0/ram0
ISER_MB=32
ISCSID_LOG=/tmp/iscsid.log

iser_modules() {
	modprobe crc32_generic 2>/dev/null
	modprobe crc32c_generic 2>/dev/null	# iscsi_target_mod's digests
	modprobe crct10dif_generic 2>/dev/null
	modprobe target_core_mod && modprobe iscsi_target_mod &&
	modprobe ib_isert && modprobe ib_iser && modprobe sd_mod
}

# iser_modules_up TYPE: iser_modules and the RDMA device's (rxe or vhca).
iser_modules_up() {
	iser_modules || return 1
	case $1 in
	rxe)	modprobe rdma_rxe ;;
	vhca)	load_mrcore ;;
	*)	echo "unknown RDMA device type $1"; return 1 ;;
	esac
}

# iser_undo_modules TYPE: after a failed setup, leave no vhca loaded for
# the next script.
iser_undo_modules() {
	[ "$1" = vhca ] && unload_mrcore 2>/dev/null
	return 0
}

# lio_up ADDR: $ISER_MB MiB rd_mcp backstore, $ISER_IQN with one TPG and
# LUN 0 on it, a portal on ADDR:3260 with iSER on, demo mode (any
# initiator, no authentication, writable), then the TPG enabled.
lio_up() {
	local rd=$LIO/core/$ISER_RD tpg=$LIO/iscsi/$ISER_IQN/tpgt_1 a
	mkdir -p $rd &&
	echo "rd_pages=$((ISER_MB * 256))" > $rd/control &&
	echo 1 > $rd/enable || return 1
	mkdir -p $tpg/lun/lun_0 &&
	ln -s $rd $tpg/lun/lun_0/ram0 || return 1
	mkdir "$tpg/np/$1:3260" &&
	echo 1 > "$tpg/np/$1:3260/iser" || return 1
	for a in generate_node_acls=1 authentication=0 \
		 demo_mode_write_protect=0 cache_dynamic_acls=1; do
		echo "${a#*=}" > "$tpg/attrib/${a%=*}" || return 1
	done
	echo 1 > $tpg/enable
}

# lio_down ADDR: lio_up undone in reverse order; keeps going after an
# error and fails if any step did.
lio_down() {
	local rd=$LIO/core/$ISER_RD tpg=$LIO/iscsi/$ISER_IQN/tpgt_1 rc=0
	[ -d $tpg ] && { echo 0 > $tpg/enable || rc=1; }
	if [ -d "$tpg/np/$1:3260" ]; then
		echo 0 > "$tpg/np/$1:3260/iser" || rc=1
		rmdir "$tpg/np/$1:3260" || rc=1
	fi
	[ -L $tpg/lun/lun_0/ram0 ] && { rm $tpg/lun/lun_0/ram0 || rc=1; }
	[ -d $tpg/lun/lun_0 ] && { rmdir $tpg/lun/lun_0 || rc=1; }
	[ -d $tpg ] && { rmdir $tpg || rc=1; }
	[ -d $LIO/iscsi/$ISER_IQN ] && { rmdir $LIO/iscsi/$ISER_IQN || rc=1; }
	[ -d $rd ] && { rmdir $rd || rc=1; }
	[ -d $LIO/core/${ISER_RD%/*} ] && { rmdir $LIO/core/${ISER_RD%/*} || rc=1; }
	return $rc
}

# iscsid_up: start iscsid in the foreground (its log in $ISCSID_LOG) and
# wait until it listens for iscsiadm.
iscsid_up() {
	mkdir -p /run/lock/iscsi /etc/iscsi/nodes /etc/iscsi/send_targets
	# Its own session: on SIGTERM iscsid signals its whole process group.
	setsid iscsid -f < /dev/null > $ISCSID_LOG 2>&1 &
	echo $! > /tmp/iscsid.pid
	# iscsid serves iscsiadm on an abstract unix socket.
	wait_for $PROGRESS_TMO grep -q '@ISCSIADM_ABSTRACT_NAMESPACE' /proc/net/unix ||
		{ echo "iscsid is not listening"; tail -3 $ISCSID_LOG; return 1; }
}

iscsid_down() {
	local pid
	[ -f /tmp/iscsid.pid ] || return 0
	pid=$(cat /tmp/iscsid.pid)
	kill "$pid" && rm -f /tmp/iscsid.pid &&
	wait_for $PROGRESS_TMO sh -c "[ ! -d /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status"
}

# iser_sessions: the open-iscsi sessions (/sys/class/iscsi_session/sessionN)
# logged in to $ISER_IQN.
iser_sessions() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/targetname" 2>/dev/null)" = "$ISER_IQN" ] && echo "$s"
	done
}

# iser_session_state: the state of $ISER_IQN's session(s): LOGGED_IN,
# FAILED (connection lost, in recovery) or FREE; nothing when none exists.
iser_session_state() {
	local s
	for s in $(iser_sessions); do
		cat "$s/state" 2>/dev/null
	done
}

# iser_disk: the SCSI disk of $ISER_IQN's LUN 0, as /dev/sdX.
iser_disk() {
	local s b
	for s in $(iser_sessions); do
		for b in "$s"/device/target*/*:0/block/*; do
			[ -b "/dev/${b##*/}" ] && { echo "/dev/${b##*/}"; return 0; }
		done
	done
	return 1
}

# iser_discover ADDR: SendTargets discovery over iSER lists $ISER_IQN.
iser_discover() {
	local out
	out=$(iscsiadm -m discovery -t st -p "$1:3260" -I iser 2>&1) ||
		{ echo "$out"; return 1; }
	echo "$out" | grep -q "$ISER_IQN" || { echo "not listed: $out"; return 1; }
}

# iser_login ADDR: log in to $ISER_IQN on ADDR over iSER and print the new
# SCSI disk; on failure print why.
iser_login() {
	local out
	out=$(run_for 90 iscsiadm -m node -T $ISER_IQN -p "$1:3260" -I iser --login) ||
		{ echo "$out"; return 1; }
	wait_for $PROGRESS_TMO iser_disk || { echo "logged in, but no SCSI disk appeared"; return 1; }
	iser_disk
}

iser_logout() {
	local out
	out=$(run_for 90 iscsiadm -m node -T $ISER_IQN -p "$1:3260" -I iser --logout) ||
		{ echo "$out"; return 1; }
	wait_for $PROGRESS_TMO sh -c "! grep -qx '$ISER_IQN' /sys/class/iscsi_session/*/targetname" ||
		{ echo "the session is still there"; return 1; }
}

# iser_forget ADDR: drop the node and discovery records.
iser_forget() {
	iscsiadm -m node -T $ISER_IQN -p "$1:3260" -I iser -o delete
	iscsiadm -m discoverydb -t st -p "$1:3260" -o delete
}

# iser_diag: iscsid's last words, as TAP comments, after a failure.
iser_diag() {
	tail -5 $ISCSID_LOG 2>/dev/null | sed 's/^/# iscsid: /'
}

# iser_suite TYPE DEV NETDEV ADDR: the iSER test over an RDMA device DEV of
# TYPE (rxe or vhca) on NETDEV with ADDR: target and initiator up, discovery
# and login over iSER, a pattern written, read back and compared, fio
# verify, logout, a second login that must read the same pattern, logout,
# and everything torn down in reverse (for vhca: the device idle first,
# modules unloaded, no leak in the kernel log).
iser_suite() {
	local type=$1 dev=$2 netdev=$3 addr=$4 T="iser-$1" disk out
	klog_mark "$T"
	grep -q swiotlb=force /proc/cmdline && echo "# $T: swiotlb=force"

	t_gate "$T: iSER, LIO and $type modules load" iser_modules_up "$type" ||
		return 4
	t_gate "$T: rdma link add $dev netdev $netdev, GID of $addr" \
		rdma_link_up "$type" "$dev" "$netdev" "$addr" ||
		{ rdma_link_down "$dev" "$netdev" > /dev/null 2>&1
		  iser_undo_modules "$type"; return 4; }
	[ "$type" = vhca ] && vhca_baseline "$dev"

	t_check "$T: LIO target $ISER_IQN, ${ISER_MB} MiB rd_mcp LUN, iSER portal $addr:3260" \
		lio_up "$addr"
	t_eval "$T: the portal has iSER on" \
		"[ \"\$(cat '$LIO/iscsi/$ISER_IQN/tpgt_1/np/$addr:3260/iser')\" = 1 ]"
	t_check "$T: iscsid runs" iscsid_up

	# One try: iscsid gives a discovery login a minute (initramfs.sh);
	# a failure is shown with the kernel log.
	if ! t_gate "$T: SendTargets discovery over iSER finds the target" \
		run_for 90 iser_discover "$addr"; then
		klog_since "$T" | tail -15 | sed 's/^/#   /'
		iser_diag
	elif out=$(iser_login "$addr"); then
		disk=$out
		t_ok "$T: login over iSER ($disk)"
		t_eval "$T: the session's transport is iser" \
			'iscsiadm -m session | grep -q "^iser: .*$ISER_IQN"'
		t_eval "$T: the target sees the initiator's session" \
			'grep -q . "$LIO/iscsi/$ISER_IQN/tpgt_1/dynamic_sessions"'
		t_check "$T: 16 MiB pattern written, read back, identical" \
			run_for 60 pattern_rw "$disk" 16
		t_check "$T: fio randwrite 4k with crc32c verify (at 16 MiB)" \
			run_for 120 fio --thread --name=verify --filename="$disk" \
			--direct=1 --ioengine=libaio --rw=randwrite --bs=4k \
			--iodepth=16 --offset=16M --size=8M --verify=crc32c \
			--do_verify=1 --output=/dev/null
		t_check "$T: logout" iser_logout "$addr"
		if out=$(iser_login "$addr"); then
			disk=$out
			t_ok "$T: second login ($disk)"
			t_check "$T: the pattern reads back after a new login" \
				run_for 60 sh -c "dd if=$disk of=/tmp/back bs=1M count=16 iflag=direct 2>/dev/null &&
						  cmp /tmp/pat /tmp/back"
			t_check "$T: second logout" iser_logout "$addr"
		else
			t_fail "$T: second login" "$(echo "$out" | tail -1)"
			iser_diag
		fi
	else
		t_fail "$T: login over iSER" "$(echo "$out" | tail -1)"
		iser_diag
	fi

	# Teardown, in reverse. A session a failed step left behind goes first.
	[ -n "$(iser_sessions)" ] && iser_logout "$addr" > /dev/null
	iser_forget "$addr" > /dev/null 2>&1
	t_check "$T: iscsid stops" iscsid_down
	t_check "$T: LIO configuration removed in reverse order" run_for 60 lio_down "$addr"
	if [ "$type" = vhca ]; then
		t_check "$T: $dev idle: no MR, PD, key or translation left behind" \
			vhca_idle "$dev"
	fi
	t_check "$T: rdma link del $dev" run_for 60 rdma_link_down "$dev" "$netdev"
	if [ "$type" = vhca ]; then
		t_check "$T: rmmod vhca mrcore" run_for 60 unload_mrcore
		t_check "$T: no leak or warning in the kernel log" klog_clean "$T"
	fi
}
