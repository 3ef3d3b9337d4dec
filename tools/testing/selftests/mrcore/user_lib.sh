# SPDX-License-Identifier: GPL-2.0
# Debian's user-space RDMA stack (libibverbs and its providers, librdmacm,
# their example programs, perftest, libfabric, pyverbs), unchanged, in the
# VM: the host's root is shared read-only over virtio-9p (scripts/vmtest.sh,
# mount tag "hostroot") and the programs run in a chroot of it.
#
# Source it after lib.sh (it sources nvmeof.sh for kill_tree when that is
# not loaded yet). Interface, kept stable:
#
#   MRC_ROOT      where the host's root is mounted: /host
#   MRC_PAIR_TMO  mrc_pair's deadline in seconds (default 120, never below
#                 lib.sh's PROGRESS_TMO): it bounds a failure only.
#
#   mrc_root_up
#       Mount the host's root at $MRC_ROOT (read-only), then in it /proc,
#       /sys, /dev (devtmpfs: /dev/infiniband/uverbs* and rdma_cm appear
#       as the modules create them), /dev/pts, /dev/shm, /tmp and /run
#       (tmpfs, writable). Loads ib_uverbs and rdma_ucm. Idempotent; fails
#       saying why (no virtio-9p device, no 9p module, ...): a test that
#       needs the chroot then fails, it is never skipped.
#   mrc_root_down
#       Unmount what mrc_root_up mounted.
#   mrc_chroot CMD [ARGS...]
#       Run CMD in the chroot (mrc_root_up first when needed) with a clean
#       environment: PATH of Debian, HOME=/tmp, LC_ALL=C, plus the
#       variables named in MRC_CHROOT_ENV ("NAME=VALUE ..."). stdin,
#       stdout and stderr are the caller's; returns CMD's status (127 when
#       the chroot cannot be set up).
#   mrc_pair READY SERVER_CMD [ARGS...] -- CLIENT_CMD [ARGS...]
#       A server and a client, two processes in the chroot. The server
#       starts first; the client once READY holds:
#         tcp:PORT  the server listens on TCP PORT (/proc/net/tcp, tcp6)
#         cm:PORT   an RDMA CM listener on PORT (rdma res show cm_id)
#                   whose process waits for its events
#         now       at once
#       Both are bounded by MRC_PAIR_TMO seconds from the server's start;
#       one still running then is killed (with its children) and its
#       status is 124. Sets MRC_SRV_RC and MRC_CLI_RC (exit statuses; the
#       client's is 125 when it was never started because the server
#       exited or never became ready) and MRC_SRV_OUT and MRC_CLI_OUT
#       (files holding each one's stdout and stderr, with a last line
#       saying why when it was killed or not started; they stay until the
#       next mrc_pair). Returns 0 when both exited 0, else 1.
#   mrc_pair_why
#       One line saying which side of the last mrc_pair failed, with the
#       last line of its output (for t_fail).
#   t_pair NAME READY SERVER... -- CLIENT...
#       mrc_pair as a check: "ok - NAME" when both exited 0.
#   mrc_has_uverbs DEV
#       DEV has a user verbs node (ib_uverbs took it).
#   mrc_dev_counts DEV TYPE
#       One line of what DEV holds: ib_core's restrack objects ("rdma res
#       show", cm_ids included) and, for TYPE vhca, mrcore's accounting and
#       vhca's live device keys. Take it before a program as BASE.
#   mrc_dev_settled DEV TYPE
#       Every count of mrc_dev_counts back to $BASE, waited for (the last
#       reference to the uverbs file may go after the process is reaped);
#       else prints both lines and fails.
#   mrc_dev_run T TYPE DEV NETDEV ADDR CMD [ARGS...]
#       DEV of TYPE (its module loaded) made on NETDEV with ADDR's GID and
#       its uverbs node waited for (t_gate lines), BASE taken, CMD run,
#       every count back to BASE (a t_check line); then DEV removed (a
#       t_check line). T is the lines' prefix. Fails when a gate or CMD
#       failed.

type kill_tree >/dev/null 2>&1 || . ./nvmeof.sh

MRC_ROOT=/host
MRC_PAIR_TMO=${MRC_PAIR_TMO:-120}
[ "$MRC_PAIR_TMO" -ge "$PROGRESS_TMO" ] || MRC_PAIR_TMO=$PROGRESS_TMO
MRC_CHROOT_ENV=${MRC_CHROOT_ENV:-}
MRC_9P_TAG=hostroot

# The virtio-9p device of tag hostroot is bound (virtio_pci probes it,
# 9pnet_virtio registers the tag).
mrc_9p_tag_seen() {
	grep -qx "$MRC_9P_TAG" /sys/bus/virtio/drivers/9pnet_virtio/virtio*/mount_tag 2>/dev/null
}

# mrc_mounted PATH: something is mounted on PATH (busybox has no
# mountpoint applet).
mrc_mounted() {
	awk -v p="$1" '$2 == p {f = 1} END {exit !f}' /proc/mounts
}

mrc_root_up() {
	local m
	mrc_mounted $MRC_ROOT/run && return 0
	for m in virtio_pci 9pnet_virtio 9p ib_uverbs rdma_ucm; do
		modprobe $m 2>/dev/null || builtin_module $m ||
			{ echo "user_lib: cannot load $m"; return 1; }
	done
	if ! mrc_mounted $MRC_ROOT; then
		wait_for $PROGRESS_TMO mrc_9p_tag_seen ||
			{ echo "user_lib: no virtio-9p device with tag $MRC_9P_TAG (vmtest.sh's -virtfs)"; return 1; }
		mkdir -p $MRC_ROOT
		# Read-only, so the guest's page cache may keep what it read.
		mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose \
			$MRC_9P_TAG $MRC_ROOT ||
			{ echo "user_lib: mount of the host's root at $MRC_ROOT failed"; return 1; }
	fi
	[ -x $MRC_ROOT/usr/bin/env ] ||
		{ echo "user_lib: $MRC_ROOT holds no /usr/bin/env"; return 1; }
	mrc_mounted $MRC_ROOT/proc || mount -t proc proc $MRC_ROOT/proc || return 1
	mrc_mounted $MRC_ROOT/sys || mount -t sysfs sysfs $MRC_ROOT/sys || return 1
	# debugfs (fail_page_alloc) and, where the kernel has it, cgroup v2
	# (the memory controller): user_mrlib.c's alloc cases.
	mrc_mounted $MRC_ROOT/sys/kernel/debug ||
		mount -t debugfs debugfs $MRC_ROOT/sys/kernel/debug || return 1
	if grep -qw cgroup2 /proc/filesystems; then
		mrc_mounted $MRC_ROOT/sys/fs/cgroup ||
			mount -t cgroup2 cgroup2 $MRC_ROOT/sys/fs/cgroup || return 1
	fi
	mrc_mounted $MRC_ROOT/dev || mount -t devtmpfs devtmpfs $MRC_ROOT/dev || return 1
	mkdir -p $MRC_ROOT/dev/pts $MRC_ROOT/dev/shm
	mrc_mounted $MRC_ROOT/dev/pts || mount -t devpts devpts $MRC_ROOT/dev/pts || return 1
	mrc_mounted $MRC_ROOT/dev/shm || mount -t tmpfs tmpfs $MRC_ROOT/dev/shm || return 1
	mrc_mounted $MRC_ROOT/tmp || mount -t tmpfs tmpfs $MRC_ROOT/tmp || return 1
	mount -t tmpfs tmpfs $MRC_ROOT/run
}

mrc_root_down() {
	local m rc=0
	for m in run tmp dev/shm dev/pts dev sys/kernel/debug sys/fs/cgroup sys proc ""; do
		if mrc_mounted $MRC_ROOT${m:+/$m}; then
			umount $MRC_ROOT/$m || rc=1
		fi
	done
	return $rc
}

mrc_chroot() {
	mrc_root_up >&2 || return 127
	# MRC_CHROOT_ENV is split into words on purpose.
	# shellcheck disable=SC2086
	chroot $MRC_ROOT /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/tmp LC_ALL=C $MRC_CHROOT_ENV "$@"
}

# mrc_listening READY: see mrc_pair.
mrc_listening() {
	local port
	case "$1" in
	now)	return 0 ;;
	tcp:*)	port=$(printf '%04X' "${1#tcp:}")
		# Field 2 is local address:port, field 4 the state (0A: LISTEN).
		cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
			awk -v p=":$port" '$4 == "0A" && substr($2, length($2) - 4) == p {f = 1}
					   END {exit !f}' ;;
	cm:*)	mrc_cm_listening "${1#cm:}" ;;
	*)	echo "mrc_pair: unknown READY $1" >&2; return 2 ;;
	esac
}

# mrc_cm_listening PORT: an RDMA CM listener on PORT whose process has
# come back from rdma_listen(). The cm_id says LISTEN as soon as
# rdma_listen() has changed its state, before ib_cm listens for it: a
# client's connect request in between is rejected. So the listener's
# process must also wait in rdma_get_cm_event() (a thread of it sleeping
# in ucma_get_event(), by /proc's wchan).
mrc_cm_listening() {
	local pid t
	pid=$(rdma res show cm_id 2>/dev/null |
		grep "state LISTEN.*src-addr [^ ]*:$1\( \|$\)" |
		sed -n 's/.* pid \([0-9][0-9]*\).*/\1/p' | head -1)
	[ -n "$pid" ] || return 1
	for t in /proc/$pid/task/*/wchan; do
		[ "$(cat "$t" 2>/dev/null)" = ucma_get_event ] && return 0
	done
	return 1
}

# mrc_pair_side DIR NAME BEFORE|AFTER ARGS...: one side of mrc_pair in the
# background: the words of ARGS before "--" (or after it) run in the
# chroot, their output to DIR/NAME and their status to DIR/NAME.rc.
mrc_pair_side() {
	local d=$1 n=$2 side=$3
	shift 3
	(
		past=
		# Each word is shifted off the front once; the side's own
		# words are put back at the end, in order.
		for a; do
			shift
			if [ -z "$past" ] && [ "$a" = -- ]; then
				past=1
				continue
			fi
			case "$side$past" in
			BEFORE|AFTER1) set -- "$@" "$a" ;;
			esac
		done
		mrc_chroot "$@"
		echo $? > "$d/$n.rc"
	) < /dev/null > "$d/$n" 2>&1 &
}

mrc_pair() {
	local ready=$1 d n spid cpid=
	shift
	rm -rf /tmp/mrc_pair.*
	d=$(mktemp -d /tmp/mrc_pair.XXXXXX) || return 1
	MRC_SRV_OUT=$d/server MRC_CLI_OUT=$d/client
	MRC_SRV_RC=124 MRC_CLI_RC=125
	: > "$MRC_CLI_OUT"
	mrc_root_up > "$d/setup" 2>&1 ||
		{ cat "$d/setup" > "$MRC_SRV_OUT"; MRC_SRV_RC=127; return 1; }
	n=$((MRC_PAIR_TMO * 10))
	mrc_pair_side "$d" server BEFORE "$@"
	spid=$!
	while [ $n -gt 0 ] && [ ! -e "$d/server.rc" ] && ! mrc_listening "$ready"; do
		sleep 0.1
		n=$((n - 1))
	done
	if [ -e "$d/server.rc" ]; then
		echo "client not started: the server exited first" >> "$MRC_CLI_OUT"
	elif [ $n -le 0 ]; then
		echo "client not started: the server was not ready ($ready) in ${MRC_PAIR_TMO}s" >> "$MRC_CLI_OUT"
	else
		mrc_pair_side "$d" client AFTER "$@"
		cpid=$!
	fi
	while [ $n -gt 0 ] && { [ ! -e "$d/server.rc" ] ||
				{ [ -n "$cpid" ] && [ ! -e "$d/client.rc" ]; }; }; do
		sleep 0.1
		n=$((n - 1))
	done
	# What still runs at the deadline is killed and not waited for (a
	# process stuck in the kernel would hang the script).
	if [ -e "$d/server.rc" ]; then
		wait $spid
		MRC_SRV_RC=$(cat "$d/server.rc")
	else
		kill_tree $spid
		echo "timed out after ${MRC_PAIR_TMO}s" >> "$MRC_SRV_OUT"
	fi
	if [ -n "$cpid" ]; then
		if [ -e "$d/client.rc" ]; then
			wait $cpid
			MRC_CLI_RC=$(cat "$d/client.rc")
		else
			kill_tree $cpid
			MRC_CLI_RC=124
			echo "timed out after ${MRC_PAIR_TMO}s" >> "$MRC_CLI_OUT"
		fi
	fi
	[ "$MRC_SRV_RC" = 0 ] && [ "$MRC_CLI_RC" = 0 ]
}

mrc_pair_why() {
	if [ "$MRC_SRV_RC" != 0 ]; then
		echo "server rc $MRC_SRV_RC: $(tail -1 "$MRC_SRV_OUT"); client rc $MRC_CLI_RC: $(tail -1 "$MRC_CLI_OUT")"
	else
		echo "client rc $MRC_CLI_RC: $(tail -1 "$MRC_CLI_OUT")"
	fi
}

t_pair() {
	local name=$1
	shift
	if mrc_pair "$@"; then
		t_ok "$name"
	else
		t_fail "$name" "$(mrc_pair_why)"
	fi
}

mrc_has_uverbs() {
	grep -qx "$1" /sys/class/infiniband_verbs/uverbs*/ibdev 2>/dev/null
}

# Every kind any user program makes: a kind a program does not use stays
# at its base.
mrc_dev_counts() {
	local k
	for k in qp cq pd mr cm_id; do
		printf '%s %s ' $k "$(rdma_res $k "$1" | wc -l)"
	done
	[ "$2" = vhca ] || { echo; return 0; }
	for k in pds mkeys mrs mrs_user mrs_indirect mrs_dmabuf mws \
		 xlt_segs_used pages_pinned; do
		printf '%s %s ' $k "$(mrc_stat "$1" $k)"
	done
	printf 'dev_keys %s\n' "$(awk 'NR > 1' "/sys/kernel/debug/vhca/$1/mkeys" | wc -l)"
}

mrc_dev_at_base() { [ "$(mrc_dev_counts "$1" "$2")" = "$BASE" ]; }
mrc_dev_settled() {
	wait_for "$PROGRESS_TMO" mrc_dev_at_base "$1" "$2" && return 0
	echo "now: $(mrc_dev_counts "$1" "$2"); before: $BASE"
	return 1
}

mrc_dev_run() {
	local T=$1 type=$2 dev=$3 net=$4 addr=$5 ret=0
	shift 5
	if t_gate "$T: rdma link add $dev netdev $net, GID of $addr" \
		rdma_link_up "$type" "$dev" "$net" "$addr" &&
	   t_gate "$T: a uverbs node" wait_for "$PROGRESS_TMO" mrc_has_uverbs "$dev"; then
		BASE=$(mrc_dev_counts "$dev" "$type")
		echo "# $T: before: $BASE"
		"$@" || ret=1
		t_check "$T: every count back to what it was" \
			mrc_dev_settled "$dev" "$type"
	else
		ret=1
	fi
	t_check "$T: rdma link del $dev" rdma_link_down "$dev" "$net"
	return $ret
}
