#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The fuzzer (issue 20, item 1): ./mrc_fuzz (mrc_fuzz.c, plain C with
# libibverbs) in the host root's chroot (user_lib.sh) over vhca0, with
# /dev/mrcore_test loaded: every ioctl of mrcore_test, uverbs commands and
# methods, vhca's driver methods, garbage in the mapped rings, munmap,
# madvise, mprotect and fork racing the registrations, rdma netlink link
# add and del on dummy netdevs of its own that come and go, from several
# threads, seeded and reproducible (see mrc_fuzz.c). Settings (environment),
# passed through:
#
#   FUZZ_SECONDS  how long it runs (60 when FUZZ_EXECS is not set either)
#   FUZZ_EXECS    how many executions in all (the first bound reached ends it)
#   FUZZ_SEED     the seed (default 1; make fuzz's is the clock; it is in
#                 the lines)
#   FUZZ_THREADS  threads (default 3: more than the VM's CPUs, 2 on the
#                 stock kernel, 1 on the debug kernel, so that they race)
#   FUZZ_FAMILIES the families to run, mrc_fuzz -f letters (default all)
#   FUZZ_TIMEOUT  seconds after which the run is killed (default: FUZZ_SECONDS
#                 plus 600, or 6 hours with FUZZ_EXECS alone); the program's
#                 own watchdog gives each execution 300 s before that
#   FUZZ_CARRY    1: a leg of a run split across boots (scripts/fuzz.sh
#                 FUZZ_RESUME): the inputs the earlier legs kept, in
#                 FUZZ_OUT/corpus, are where this one starts
#   FUZZ_OUT      where the run's files are copied at the end (default
#                 /tmp/mrc_fuzz): ring (mrc_fuzz -L), subst.* (for the
#                 replays), repro.* (the reproducers of failures), summary
#                 (the program's last line, when it passed), corpus/
#                 (the inputs that reached new code, with KCOV), pcs
#                 (every kernel PC reached, hex, for the coverage report)
#                 and, after a splat, dmesg (the whole kernel log: the
#                 console shows only its warnings, not the hung tasks'
#                 stacks)
#
# Lines:
#
#   ok - fuzz vhca0: mrcore, vhca and mrcore_test load
#   ok - fuzz vhca0: rdma link add vhca0 netdev fzv0, GID of 10.98.0.1
#   ok - fuzz vhca0: a uverbs node
#   # fuzz vhca0: progress T s: execs N, ...   (every 10 minutes)
#   ok - fuzz vhca0: mrc_fuzz seed S: execs N, execs/s X, ...
#   not ok - fuzz vhca0: mrc_fuzz seed S # exit status R: its last line
#   ok - fuzz vhca0: the netdevs and RDMA devices mrc_fuzz made are gone
#   ok - fuzz vhca0: every count back to what it was
#   ok - fuzz vhca0: rdma link del vhca0
#   ok - fuzz vhca0: rmmod mrcore_test
#   ok - fuzz vhca0: vhca and mrcore unload
#   ok - fuzz vhca0: no leak or warning in the kernel log
#   ok - fuzz vhca0: no hung task in the kernel log
#
# The program's own lines are comments. When it failed (a canary changed,
# a fork child crashed, the watchdog fired), was killed, or the kernel log
# says anything, the last executions of every thread and the command that
# replays each (mrc_fuzz -L) follow as comments. Those commands name the
# chroot's paths: to replay, put FUZZ_OUT back at the chroot's
# /tmp/mrc_fuzz.d (the substitutions the replay reads are there) and run
# the command in the chroot, over a vhca0 made as here. The run leaves
# mrcore and vhca unloaded, as the scripts after it expect.
. ./lib.sh
. ./chardev_lib.sh
. ./nvmeof.sh
. ./user_lib.sh

DEV=vhca0
NETDEV=fzv0
ADDR=10.98.0.1
T="fuzz $DEV"
# A fixed seed by default: the short run inside make check must not pass or
# fail by the clock's draw (make fuzz passes a new one each run).
SEED=${FUZZ_SEED:-1}
if [ -n "${FUZZ_EXECS:-}" ] && [ -z "${FUZZ_SECONDS:-}" ]; then
	TMO=${FUZZ_TIMEOUT:-21600}
else
	TMO=${FUZZ_TIMEOUT:-$((${FUZZ_SECONDS:-60} + 600))}
fi
OUT=${FUZZ_OUT:-/tmp/mrc_fuzz}
# The program's files, in the chroot's /tmp (tmpfs), then copied to OUT.
CDIR=/tmp/mrc_fuzz.d
rc=0

# fuzz_args: the program's options from the settings.
fuzz_args() {
	echo "-D $DEV -s $SEED -o $CDIR -c $CDIR/corpus -p $CDIR/pcs" \
		"${FUZZ_SECONDS:+-d $FUZZ_SECONDS}" "${FUZZ_EXECS:+-n $FUZZ_EXECS}" \
		"-t ${FUZZ_THREADS:-3}" "${FUZZ_FAMILIES:+-f $FUZZ_FAMILIES}"
}

# fuzz_load: the modules, mrcore_test's chardev included.
fuzz_load() {
	load_mrcore && load_mrcore_test
}

# fuzz_sections: where the code of vhca and mrcore_test is, for the
# coverage report (scripts/fuzz-cover.sh): "NAME ADDRESS" of each module's
# .text, and "_text ADDRESS", the kernel's (KCOV's PCs are minus the KASLR
# offset), in the run's directory; mrcore, built in on the debug kernel,
# is found in vmlinux.
fuzz_sections() {
	local m
	mkdir -p "$MRC_ROOT$CDIR"
	{
		for m in vhca mrcore mrcore_test; do
			[ -r /sys/module/$m/sections/.text ] &&
				echo "$m $(cat /sys/module/$m/sections/.text)"
		done
		awk '$3 == "_text" {print "_text 0x" $1; exit}' /proc/kallsyms
	} > "$MRC_ROOT$CDIR/sections"
}

# fuzz_ring: the last executions of every thread, as comments.
fuzz_ring() {
	mrc_chroot /tmp/mrc_fuzz -L "$CDIR" 2>&1 | sed 's/^/# /'
	for f in "$MRC_ROOT$CDIR"/repro.*; do
		[ -e "$f" ] && sed -n 's/^[^#]/# reproducer: &/p' "$f"
	done
}

# fuzz_names DIR PATTERN: the names in DIR that match PATTERN, on one line.
fuzz_names() {
	local f
	for f in "$1"/$2; do
		[ -e "$f" ] && printf '%s ' "${f##*/}"
	done
}

# fuzz_ibdevs: the RDMA devices there are.
fuzz_ibdevs() { fuzz_names /sys/class/infiniband '*'; }

# fuzz_nl_left: none of family f's netdevs (fzn*) is left, and the RDMA
# devices are those there before the run ($NL_BEFORE); else says what is.
fuzz_nl_left() {
	local net ib
	net=$(fuzz_names /sys/class/net 'fzn*')
	ib=$(fuzz_ibdevs)
	[ -z "$net" ] && [ "$ib" = "$NL_BEFORE" ] && return 0
	echo "netdevs left: ${net:-none}; RDMA devices: $ib; before: $NL_BEFORE"
	return 1
}

# fuzz_nl_gone: fuzz_nl_left, waited for (a link goes in a work item after
# its netdev). Else the dummies left are deleted, their links with them,
# so that the scripts after this one find the netdevs as they were.
fuzz_nl_gone() {
	local n why
	wait_for "$PROGRESS_TMO" fuzz_nl_left && return 0
	why=$(fuzz_nl_left)
	for n in $(fuzz_names /sys/class/net 'fzn*'); do
		ip link del "$n" 2>/dev/null
	done
	echo "$why"
	return 1
}

# fuzz_progress: the program's progress lines not shown yet, on the
# console ($SHOWN of them are).
fuzz_progress() {
	local n

	n=$(grep -c '^fuzz: progress ' /tmp/mrc_fuzz.out 2>/dev/null)
	[ "${n:-0}" -gt "$SHOWN" ] || return 0
	grep '^fuzz: progress ' /tmp/mrc_fuzz.out | tail -n $((n - SHOWN)) |
		sed "s/^fuzz: /# $T: /"
	SHOWN=$n
}

# fuzz_watch: run the program for at most TMO seconds, its output in
# /tmp/mrc_fuzz.out, its exit status returned (124 when it was killed).
# The kernel log is watched meanwhile: after an oops the program may hang
# on a lock the dead task held, so a splat ends the wait at once, with
# the last executions of every thread and the files saved first (the
# kernel still runs; a panic leaves only the seed, printed before).
# Its progress lines go to the console as they come.
fuzz_watch() {
	local pid end d
	SHOWN=0
	d=$(mktemp -d /tmp/fuzz_watch.XXXXXX) || return 1
	# The options are words, split on purpose.
	# shellcheck disable=SC2046
	( mrc_chroot /tmp/mrc_fuzz $(fuzz_args); echo $? > "$d/rc" ) \
		< /dev/null > /tmp/mrc_fuzz.out 2>&1 &
	pid=$!
	end=$(($(date +%s) + TMO))
	while [ ! -e "$d/rc" ]; do
		if ! klog_clean "$T" > /dev/null; then
			echo "# $T: a splat in the kernel log during the run:"
			klog_clean "$T" | sed 's/^/#   /'
			fuzz_ring
			fuzz_save
			dmesg > "$OUT/dmesg" 2>/dev/null &&
				echo "# $T: the kernel log is in $OUT/dmesg"
			kill_tree $pid
			rm -rf "$d"
			return 124
		fi
		if [ "$(date +%s)" -ge $end ]; then
			echo "# $T: still running after $TMO s"
			fuzz_ring
			kill_tree $pid
			rm -rf "$d"
			return 124
		fi
		fuzz_progress
		sleep 1
	done
	wait $pid
	read -r pid < "$d/rc"
	rm -rf "$d"
	return "$pid"
}

# fuzz_save: the run's files to OUT.
fuzz_save() {
	mkdir -p "$OUT" && cp -r "$MRC_ROOT$CDIR/." "$OUT/" 2>/dev/null &&
		echo "# $T: the run's files are in $OUT"
}

# fuzz_run: the program, its lines as comments, one line of ours, then
# one that the netdevs and links of its family f are gone. Its dummies
# need the dummy driver, which fzv0 (dummy_up) has loaded.
fuzz_run() {
	local status sum ret=0
	rm -rf "$MRC_ROOT$CDIR"
	fuzz_sections
	if [ "${FUZZ_CARRY:-}" = 1 ] && [ -d "$OUT/corpus" ]; then
		cp -r "$OUT/corpus" "$MRC_ROOT$CDIR/" ||
			{ t_fail "$T: the earlier legs' corpus" "cannot copy $OUT/corpus"; return 1; }
		echo "# $T: a leg: $(ls "$MRC_ROOT$CDIR/corpus" | wc -l) inputs of the earlier legs"
	fi
	NL_BEFORE=$(fuzz_ibdevs)
	# On the console first: a kernel that dies mid-run still says what ran.
	echo "# $T: running mrc_fuzz $(fuzz_args)"
	fuzz_watch
	status=$?
	sed 's/^/# /' /tmp/mrc_fuzz.out
	sum=$(grep '^fuzz: execs ' /tmp/mrc_fuzz.out | tail -1)
	if [ "$status" = 0 ] && [ -n "$sum" ]; then
		# Also a file, for scripts/fuzz.sh's ledger: the console line
		# may have a kernel message cut into it.
		echo "$sum" > "$MRC_ROOT$CDIR/summary"
		t_ok "$T: mrc_fuzz seed $SEED: ${sum#fuzz: }"
	else
		t_fail "$T: mrc_fuzz seed $SEED" "exit status $status: $(tail -1 /tmp/mrc_fuzz.out)"
		fuzz_ring
		ret=1
	fi
	# A task that died in the kernel during the run (taint D, an oops)
	# may hold what the teardown waits for (the chardev's mutex, a
	# netdev's last reference): the VM would sit there until its
	# timeout, hours for a long run. Keep the files and stop.
	if [ $(($(cat /proc/sys/kernel/tainted) & ~TAINT0 & 128)) != 0 ]; then
		echo "# $T: a task died in the kernel (taint D): no teardown"
		fuzz_save
		exit 1
	fi
	t_gate "$T: the netdevs and RDMA devices mrc_fuzz made are gone" fuzz_nl_gone ||
		ret=1
	return $ret
}

[ -x ./mrc_fuzz ] || { t_fail "$T: prerequisite" "no ./mrc_fuzz"; exit 4; }
t_gate "$T: the host's root in a chroot" mrc_root_up || exit 1
cp ./mrc_fuzz "$MRC_ROOT/tmp/mrc_fuzz" ||
	{ t_fail "$T: prerequisite" "cannot copy mrc_fuzz into the chroot"; exit 4; }

klog_mark "$T"
# Taint D never clears: only a new one is this run's (fuzz_run).
TAINT0=$(cat /proc/sys/kernel/tainted)
if t_gate "$T: mrcore, vhca and mrcore_test load" fuzz_load; then
	mrc_dev_run "$T" vhca "$DEV" "$NETDEV" "$ADDR" fuzz_run || rc=1
	if ! builtin_module mrcore_test && [ -e /sys/module/mrcore_test ]; then
		t_check "$T: rmmod mrcore_test" rmmod mrcore_test
	fi
	t_check "$T: vhca and mrcore unload" unload_mrcore
else
	rc=1
fi
if ! klog_clean "$T" > /dev/null || ! klog_no_hang "$T" > /dev/null; then
	echo "# $T: the kernel log is not clean: the last executions"
	fuzz_ring
	rc=1
fi
t_check "$T: no leak or warning in the kernel log" klog_clean "$T"
t_check "$T: no hung task in the kernel log" klog_no_hang "$T"

fuzz_save
rm -f "$MRC_ROOT/tmp/mrc_fuzz"
mrc_root_down
exit $rc
