# SPDX-License-Identifier: GPL-2.0
# Helpers for the VM-tier tests. Sourced by each test script.
#
# Every check prints one TAP-style line, "ok - <name>" or
# "not ok - <name> # <why>"; the host counts those lines.

MRC_KO=/mrcore

# busybox's shell prefers its own applets to PATH; the tests want
# iproute2's ip (dummy links, full syntax), so name it explicitly.
ip() { /usr/bin/ip "$@"; }

t_ok() { echo "ok - $1"; }
t_fail() { echo "not ok - $1 # $2"; }

# t_check NAME CMD...: ok when CMD succeeds.
t_check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		t_ok "$name"
	else
		t_fail "$name" "$(echo "$out" | tail -1)"
	fi
}

# t_eval NAME 'CODE': ok when the shell code succeeds; it runs in a subshell
# of this one, so the helpers here stay callable.
t_eval() {
	local name=$1 out
	if out=$(eval "$2" 2>&1); then
		t_ok "$name"
	else
		t_fail "$name" "$(echo "$out" | tail -1)"
	fi
}

# t_refuse NAME EXPECT CMD...: ok when CMD fails and prints EXPECT.
t_refuse() {
	local name=$1 expect=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		t_fail "$name" "command succeeded"
	elif echo "$out" | grep -q "$expect"; then
		t_ok "$name"
	else
		t_fail "$name" "wanted '$expect', got '$(echo "$out" | tail -1)'"
	fi
}

# How long a test waits for something it expects to happen (a GID to
# appear, I/O to be seen running, a controller or device to go) before it
# calls its absence a failure. No verdict by the clock: the waits poll and
# end as soon as it happens, so this bounds only a failure; it is a minute
# because a debug kernel under TCG on a busy host stalls for seconds.
PROGRESS_TMO=60

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds; fail
# when it has not after SECONDS (at least: the polls' own time adds).
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

builtin_module() {
	grep -q "/$1.ko" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null
}

# load_mrcore [PARAM=VALUE...]: load mrcore and vhca, our out-of-tree
# builds when present, else the kernel's own (the debug kernel builds them
# in-tree); the arguments are vhca's module parameters (max_mkeys=4096).
load_mrcore() {
	# insmod resolves nothing: bring in vhca's distro dependencies first.
	modprobe ib_core || return 1
	if [ -f $MRC_KO/mrcore.ko ]; then
		insmod $MRC_KO/mrcore.ko || return 1
	elif ! builtin_module mrcore; then
		modprobe mrcore || return 1
	fi
	# A vhca that does not load leaves no mrcore behind for the next
	# script's insmod to trip over.
	load_vhca "$@" && return 0
	builtin_module mrcore || rmmod mrcore
	return 1
}

# load_vhca [PARAM=VALUE...]: vhca alone (mrcore loaded), as load_mrcore
# loads it: after an rmmod vhca, for one. vhca's driver methods (libvhca's)
# use ib_uverbs' helpers, so ib_uverbs comes first (insmod resolves
# nothing).
load_vhca() {
	modprobe ib_uverbs || return 1
	if [ -f $MRC_KO/vhca.ko ]; then
		insmod $MRC_KO/vhca.ko "$@"
	else
		modprobe vhca "$@"
	fi && mod_note vhca
}

# The test device /dev/mrcore_test, out-of-tree build or the kernel's own.
load_mrcore_test() {
	if [ -f $MRC_KO/mrcore_test.ko ]; then
		insmod $MRC_KO/mrcore_test.ko
	else
		modprobe mrcore_test
	fi && mod_note mrcore_test
}

# mod_note NAME: remember where module NAME's code was loaded (name, size,
# base, one line per load in $MRC_MODMAP), so that kmemleak_ours can name a
# leak whose allocating frames are in a module unloaded since, which
# kmemleak can only print as a bare address.
MRC_MODMAP=/tmp/mrc_modmap
mod_note() {
	awk -v m="$1" '$1 == m {print $1, $2, $6}' /proc/modules >> $MRC_MODMAP
	return 0
}

# kmemleak_ours OUT: scan (kmemleak, debug kernel; the report in OUT.all),
# then kmemleak_classify. Returns 1 when objects of ours were reported, 2
# without kmemleak. "clear" afterwards: the next call reports only what is
# new.
kmemleak_ours() {
	local f=/sys/kernel/debug/kmemleak
	[ -w $f ] || return 2
	echo scan > $f || return 2
	cat $f > "$1.all"
	echo clear > $f
	kmemleak_classify "$1.all" "$1"
}

# kmemleak_classify REPORT OUT: write to OUT every unreferenced object of
# kmemleak's REPORT one of whose backtrace frames is ours: a symbol of
# mrcore (built in on the debug kernel), vhca or mrcore_test, or a bare
# address inside a range mod_note recorded for vhca or mrcore_test; the
# other objects to OUT.other. Returns 1 when OUT is not empty.
kmemleak_classify() {
	rm -f "$2" "$2.other"
	# A first line, so that FNR == NR is the map alone even when empty.
	echo "none 0 0x0" >> $MRC_MODMAP
	awk -v out="$2" -v other="$2.other" '
	# Module addresses are 0xffffffff........: compare the low 32 bits
	# (busybox awk has no strtonum, and doubles hold 32 bits exactly).
	function lo32(h,    i, v) {
		h = tolower(h)
		sub(/^0x/, "", h)
		if (length(h) != 16 || substr(h, 1, 8) != "ffffffff")
			return -1
		v = 0
		for (i = 9; i <= 16; i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	function flush() {
		if (rec != "")
			printf "%s", rec > (mine ? out : other)
		rec = ""
		mine = 0
	}
	FNR == NR { base[NR] = lo32($3); size[NR] = $2; n = NR; next }
	/^unreferenced object/ { flush() }
	{ rec = rec $0 "\n" }
	# A frame: "[<ADDRESS>] SYMBOL+OFF/SIZE" or "[<ADDRESS>] 0xADDRESS";
	# 6.1 prints ADDRESS as (____ptrval____) (%p, hashed) on this kernel.
	/^ +\[<[^>]*>\] / {
		if ($0 ~ /\[(vhca|mrcore_test|mrcore)\]/ ||
		    $0 ~ / (mrc|mrct|vhca)_[a-z0-9_]*\+0x/)
			mine = 1
		else if (match($0, /\] 0x[0-9a-f]+$/)) {
			a = lo32(substr($0, RSTART + 2))
			for (i = 1; i <= n; i++)
				if (a >= 0 && base[i] >= 0 &&
				    a >= base[i] && a < base[i] + size[i])
					mine = 1
		}
	}
	END { flush() }' $MRC_MODMAP "$1"
	touch "$2" "$2.other"
	[ ! -s "$2" ]
}

unload_mrcore() {
	rmmod vhca || return 1
	builtin_module mrcore || rmmod mrcore
}

# no_rdma_dev NAME: rdma dev show works and does not list NAME.
no_rdma_dev() {
	local devs
	devs=$(rdma dev show) || return 1
	! echo "$devs" | grep -q "$1"
}

# mrc_stat DEV KEY: a value from mrcore's per-device debugfs stats.
mrc_stat() {
	awk -v k="$2" '$1 == k {print $2}' "/sys/kernel/debug/mrcore/$1/stats"
}

dummy_up() {
	modprobe dummy 2>/dev/null
	ip link add "$1" type dummy &&
	ip addr add "$2" dev "$1" &&
	ip link set "$1" up
}
