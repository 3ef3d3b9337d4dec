# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# The runner of user_cm.sh and user_fabric.sh: one kselftest-harness
# program of this directory, run in the host root's chroot (user_lib.sh)
# over each device in turn, its TAP turned into this tier's lines
# (chardev_lib.sh's tap_to_lines), the device's counts (user_lib.sh's
# mrc_dev_counts) and the kernel log checked after it, and the "observed:"
# facts of the runs compared.
#
# Source it after lib.sh, chardev_lib.sh, nvmeof.sh and user_lib.sh, with:
#
#   UPROG   the program (./UPROG, copied into the chroot's /tmp)
#   UNAME   the prefix of every line ("user-cm")
#   UPORT   the port the program uses (MRC_UPORT)
#
#   urig_main TYPE DEV NETDEV ADDR [TYPE DEV NETDEV ADDR]...
#       Each device of TYPE (vhca or rxe) made on a dummy NETDEV with
#       ADDR's GID, the program run over it with MRC_UDEV, MRC_UDEV_TYPE,
#       MRC_UADDR and MRC_UPORT, the device removed (vhca and mrcore
#       unloaded after a vhca device, as the scripts after expect); then
#       the facts compared; exits with the result.

rc=0

# urig_run DEV TYPE ADDR: the program, its raw output kept for the facts.
urig_run() {
	mrc_chroot env MRC_UDEV="$1" MRC_UDEV_TYPE="$2" MRC_UADDR="$3" \
		MRC_UPORT="$UPORT" "/tmp/$UPROG" 2>&1 |
		tee "/tmp/$UPROG.$1.raw" |
		tap_to_lines "$UNAME $1" "$UPROG"
}

# urig_device TYPE DEV NETDEV ADDR
urig_device() {
	local type="$1" dev="$2" net="$3" addr="$4" T="$UNAME $2"
	: > "/tmp/$UPROG.$dev.raw"
	klog_mark "$T"
	case "$type" in
	vhca)	t_gate "$T: mrcore and vhca load" load_mrcore || { rc=1; return; } ;;
	rxe)	t_gate "$T: rdma_rxe loads" modprobe rdma_rxe || { rc=1; return; } ;;
	esac
	mrc_dev_run "$T" "$type" "$dev" "$net" "$addr" \
		urig_run "$dev" "$type" "$addr" || rc=1
	[ "$type" = vhca ] && t_check "$T: vhca and mrcore unload" unload_mrcore
	t_check "$T: no leak or warning in the kernel log" klog_clean "$T"
	t_check "$T: no hung task in the kernel log" klog_no_hang "$T"
}

# urig_facts DEV: the run's "observed: NAME=VALUE" lines, NAME=VALUE each.
urig_facts() {
	sed -n 's/.*observed: \([^=]*=.*\)$/\1/p' "/tmp/$UPROG.$1.raw" | sort -u
}

# urig_compare DEV1 DEV2: every fact of either run, a differing value (or
# one the other run has not) printed as a finding; comments only.
urig_compare() {
	urig_facts "$1" > "/tmp/$UPROG.$1.facts"
	urig_facts "$2" > "/tmp/$UPROG.$2.facts"
	awk -F= -v a="$1" -v b="$2" -v pfx="$UNAME" '
	FNR == NR { va[$1] = substr($0, length($1) + 2); names[$1]; next }
	{ vb[$1] = substr($0, length($1) + 2); names[$1] }
	END {
		for (n in names) {
			x = (n in va) ? va[n] : "(not observed)"
			y = (n in vb) ? vb[n] : "(not observed)"
			if (x == y) {
				same++
				continue
			}
			print "# " pfx ": " a " and " b " differ: " n ": " x " on " a ", " y " on " b
			diff++
		}
		print "# " pfx ": " a " and " b ": " same + 0 " facts the same, " diff + 0 " differ"
	}' "/tmp/$UPROG.$1.facts" "/tmp/$UPROG.$2.facts"
}

urig_main() {
	local devs=
	[ -x "./$UPROG" ] || { t_fail "$UNAME: prerequisite" "no ./$UPROG"; exit 4; }
	t_gate "$UNAME: the host's root in a chroot" mrc_root_up || exit 1
	cp "./$UPROG" "$MRC_ROOT/tmp/$UPROG" ||
		{ t_fail "$UNAME: prerequisite" "cannot copy $UPROG into the chroot"; exit 4; }
	while [ $# -ge 4 ]; do
		urig_device "$1" "$2" "$3" "$4"
		devs="$devs $2"
		shift 4
	done
	# shellcheck disable=SC2086 # two device names, split on purpose
	[ "$(echo $devs | wc -w)" = 2 ] && urig_compare $devs
	rm -f "$MRC_ROOT/tmp/$UPROG"
	mrc_root_down
	exit $rc
}
