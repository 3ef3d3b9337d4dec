# SPDX-License-Identifier: GPL-2.0
# Helpers for the scripts that run a kselftest program of /dev/mrcore_test
# (dp, mr, frwr, fmr, mw, keys and counter_chardev.sh). Sourced after
# lib.sh. A script names itself once with chardev_setup, which loads the
# modules; everything after prints its lines under that prefix:
#
#	chardev_setup PFX PROG "RDMA_DEVS" "NETDEVS"
#	chardev_vhca DEV NETDEV ADDR [GID]
#	chardev_baseline DEV STAT...
#	MRCT_DEVICE=DEV ./PROG 2>&1 | tap_to_lines PFX PROG || rc=1
#	t_eval "PFX: ..." 'chardev_unchanged DEV STAT...'
#	chardev_teardown DEV NETDEV
#
# A missing prerequisite is a "not ok" line and exit status 4, so a
# missing piece is never silently green.

# tap_to_lines PFX PROG [SOFT]: the kselftest TAP of PROG on stdin, our
# lines on stdout:
#
#   ok N x.NAME                ->  ok - PFX: NAME
#   ok N # SKIP WHY            ->  ok - PFX: NAME # SKIP WHY
#   not ok N x.NAME            ->  not ok - PFX: NAME # <first failed assertion>
#
# (6.1's harness leaves the name out of a SKIP line, so names come from
# its "RUN" lines.) The reason is the first "Expected" line that PROG.c or
# a shared header (mrct_util.h, user_util.h) logged, else their first
# line, else the last log line. The
# log lines of a failed case are printed above it; the "differs:" log
# lines of a case that passed (a device other than vhca that saw another
# error status or QP state than IBTA) are printed under it as comments. SOFT=1 prints every line as a comment and always
# succeeds; otherwise the exit status is 1 when a case failed or results
# are missing.
tap_to_lines() {
	awk -v pfx="$1" -v prog="$2" -v soft="${3:-0}" '
	# A log line of an assertion or TH_LOG, in the program or its helpers
	BEGIN { src = "(" prog "\\.c|mrct_util\\.h|user_util\\.h):[0-9]+:" }
	function out(s) { print (soft ? "# " : "") s }
	function flush_msgs(   i) {
		for (i = 1; i <= nlog; i++)
			print "#   " msgs[i]
	}
	function flush_differs(   i, s) {
		for (i = 1; i <= nlog; i++) {
			if (msgs[i] !~ /differs: /)
				continue
			s = msgs[i]; sub(/^.*differs: /, "", s)
			print "#   " pfx " differs: " s
		}
	}
	# The first assertion that failed, else the last log line.
	function reason(   i) {
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ src && msgs[i] ~ /Expected/)
				return msgs[i]
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ src)
				return msgs[i]
		return nlog ? msgs[nlog] : "failed"
	}
	/^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0; next }
	/^# +RUN +/ {
		name = $3; sub(/^[^.]*\./, "", name); nlog = 0; next
	}
	/^# +(OK|FAIL) +/ { next }
	/^# / { msgs[++nlog] = substr($0, 3); next }
	/^ok [0-9]+ # SKIP/ {
		why = $0; sub(/^ok [0-9]+ # SKIP */, "", why)
		out("ok - " pfx ": " name " # SKIP " why); seen++; next
	}
	/^ok [0-9]+ / {
		out("ok - " pfx ": " name); flush_differs(); seen++; next
	}
	/^not ok [0-9]+ / {
		flush_msgs()
		out("not ok - " pfx ": " name " # " reason()); seen++; failed++
		next
	}
	END {
		if (seen != plan || !plan) {
			out("not ok - " pfx ": " prog " reported " seen " of " plan " results")
			failed++
		}
		exit (failed && !soft) ? 1 : 0
	}'
}

# chardev_missing WHAT WHY: report a missing prerequisite, undo what was
# set up (best effort, so the next script starts clean) and stop.
chardev_missing() {
	local d

	t_fail "$CHARDEV_PFX: prerequisite: $1" "$2"
	for d in $CHARDEV_RDMA_DEVS; do
		rdma link del "$d" 2>/dev/null
	done
	for d in $CHARDEV_NETDEVS; do
		ip link del "$d" 2>/dev/null
	done
	rmmod mrcore_test 2>/dev/null
	unload_mrcore 2>/dev/null
	exit 4
}

# chardev_setup PFX PROG RDMA_DEVS NETDEVS: name the script (PFX, the
# prefix of its lines; PROG, its kselftest program), list the rdma links
# and netdevs that chardev_missing removes, load ib_core, mrcore, vhca and
# mrcore_test, and check /dev/mrcore_test and ./PROG. vhca's post_bytes
# is 4096 here (off by default): mrcore_test's kernel QPs then run what
# they post in their post_send, which the chardev suites' data-path,
# ODP, FRWR and window cases put to the test.
chardev_setup() {
	CHARDEV_PFX=$1
	CHARDEV_PROG=$2
	CHARDEV_RDMA_DEVS=$3
	CHARDEV_NETDEVS=$4

	modprobe ib_core || chardev_missing "ib_core" "modprobe ib_core failed"
	load_mrcore post_bytes=4096 ||
		chardev_missing "mrcore and vhca" "they do not load"
	load_mrcore_test ||
		chardev_missing "mrcore_test" "neither $MRC_KO/mrcore_test.ko nor modprobe"
	[ -c /dev/mrcore_test ] || chardev_missing "mrcore_test" "no /dev/mrcore_test"
	[ -x "./$2" ] || chardev_missing "$2" "no ./$2 binary in $(pwd)"
}

# chardev_vhca DEV NETDEV ADDR [GID]: a vhca device DEV on a dummy NETDEV
# with address ADDR; with GID, wait until DEV's port 1 lists it.
chardev_vhca() {
	dummy_up "$2" "$3" || chardev_missing "netdev" "cannot create dummy $2"
	rdma link add "$1" type vhca netdev "$2" ||
		chardev_missing "$1" "rdma link add $1 type vhca netdev $2 failed"
	[ -z "${4:-}" ] ||
		wait_for $PROGRESS_TMO sh -c "grep -q $4 /sys/class/infiniband/$1/ports/1/gids/*" ||
		chardev_missing "$1 GID" "no IPv4 GID of $2 on $1"
}

# chardev_baseline DEV STAT...: remember DEV's debugfs STATs (mkeys, pds,
# mws) as base_STAT. ib_core's MAD layer holds a PD (and QP1) of its own on
# the device, so the tests compare against these, not against zero.
chardev_baseline() {
	local dev=$1 s

	shift
	for s in "$@"; do
		eval "base_$s=\$(mrc_stat \$dev \$s)"
	done
}

# chardev_unchanged DEV STAT...: success when every STAT of DEV is back to
# its chardev_baseline value; silent either way.
chardev_unchanged() {
	local dev=$1 s

	shift
	for s in "$@"; do
		eval "[ \"\$(mrc_stat \$dev \$s)\" = \"\$base_$s\" ]" || return 1
	done
}

# chardev_compare RXE NETDEV ADDR GID STRICT CMD...: the comparison run on
# rxe, when the kernel has it. Bring up RXE on a dummy NETDEV with ADDR,
# wait for GID, run CMD (the kselftest program, its environment before it
# through env) with MRCT_DEVICE=RXE and print its results under "PFX-rxe":
# as comments, not counted, unless STRICT is 1. RXE and NETDEV are gone
# afterwards. Status 1 when a STRICT run failed.
chardev_compare() {
	local rxe=$1 net=$2 addr=$3 gid=$4 soft=1 rc=0

	[ "$5" = 1 ] && soft=0
	shift 5
	if modprobe rdma_rxe 2>/dev/null && dummy_up "$net" "$addr" &&
	   rdma link add "$rxe" type rxe netdev "$net" 2>/dev/null &&
	   wait_for $PROGRESS_TMO sh -c "grep -q $gid /sys/class/infiniband/$rxe/ports/1/gids/*"; then
		MRCT_DEVICE=$rxe "$@" 2>&1 |
			tap_to_lines "$CHARDEV_PFX-rxe" "$CHARDEV_PROG" $soft || rc=1
		rdma link del "$rxe"
	else
		echo "# $CHARDEV_PFX-rxe: comparison run skipped: no rdma_rxe or no $rxe on $net"
		rdma link del "$rxe" 2>/dev/null
	fi
	ip link del "$net" 2>/dev/null
	return $rc
}

# chardev_teardown DEV NETDEV: remove DEV and its NETDEV, then
# mrcore_test, vhca and mrcore, each removal a line of its own.
chardev_teardown() {
	t_check "$CHARDEV_PFX: rdma link del $1" rdma link del "$1"
	ip link del "$2"
	t_check "$CHARDEV_PFX: rmmod mrcore_test" rmmod mrcore_test
	t_check "$CHARDEV_PFX: unload mrcore and vhca" unload_mrcore
}
