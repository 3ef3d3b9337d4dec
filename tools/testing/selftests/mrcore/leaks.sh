#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmemleak after the suites (debug kernel; the last script of the tier, and
# of make fuzz): with vhca and mrcore_test unloaded, kmemleak's scans must
# report no unreferenced object that mrcore, vhca or mrcore_test allocated
# (kmemleak_ours in lib.sh: a frame of ours in the object's backtrace, by
# symbol, or by address inside a range where vhca or mrcore_test was once
# loaded). The kernel's other reports are counted in a comment.
#
# Two scans: kmemleak reports no object younger than 5 s, and a scan takes
# longer than that here, so what the rmmods orphaned is old enough for the
# second.
#
# The attribution is first shown able to fail: a report in kmemleak's
# format with one object allocated by mrcore, one by an unloaded vhca
# (a bare address in its recorded range) and one of the kernel's must be
# classified as two of ours and one not. kmemleak's side is shown on this
# very kernel with leaks planted on purpose: mrcore_test's debugfs
# kmemleak_plant allocates objects marked "mrct kmemleak plant" and loses
# them; of the 16 planted, the scans must report at least one (one whose
# address an old stack slot still holds is not reported, which is why
# there are 16), attributed to us like any leak of ours, and are then left
# out of the verdict on the rest. (kmemleak-test, the kernel's module for
# this, cannot serve: on this kernel the scan after it never returns,
# Documentation/mrcore/hardening.rst.)
# Kernels without kmemleak (the stock one) skip, decided before anything is
# checked.
. ./lib.sh

T=leaks
if [ ! -w /sys/kernel/debug/kmemleak ]; then
	echo "ok - $T: kmemleak # SKIP no /sys/kernel/debug/kmemleak (CONFIG_DEBUG_KMEMLEAK)"
	exit 0
fi
# MRCORE_KMEMLEAK=0 (vmtest.sh) boots the debug kernel with kmemleak off.
if grep -qw 'kmemleak=off' /proc/cmdline; then
	echo "ok - $T: kmemleak # SKIP kmemleak=off on the command line (MRCORE_KMEMLEAK=0)"
	exit 0
fi
out=/tmp/kmemleak
rm -f $out.seen $out.mine $out.planted
scan_failed=

# leaks_sample: a report of three objects; the vhca range is a fake one
# added to the module map for this check only (a copy of the map).
leaks_sample() {
	cat <<'EOF'
unreferenced object 0xffff888104c3a000 (size 64):
  comm "insmod", pid 80, jiffies 4294892296 (age 11.160s)
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace:
    [<ffffffff8134a4b5>] kmalloc_trace+0x25/0x90
    [<ffffffff81d3a1c2>] mrc_reg_mr+0x112/0x5a0
    [<ffffffff81002a3d>] do_one_initcall+0x5d/0x310
unreferenced object 0xffff888104c3a400 (size 128):
  comm "rdma", pid 81, jiffies 4294892300 (age 11.100s)
  backtrace:
    [<(____ptrval____)>] kmalloc_trace+0x25/0x90
    [<(____ptrval____)>] 0xffffffffc0a01234
unreferenced object 0xffff888104c3a800 (size 32):
  comm "swapper/0", pid 1, jiffies 4294892200 (age 12.000s)
  backtrace:
    [<ffffffff8134a4b5>] kmalloc_trace+0x25/0x90
    [<ffffffff81002a3d>] do_one_initcall+0x5d/0x310
EOF
}

# In a subshell: the map it classifies with is a copy.
leaks_classify_sample() (
	cp $MRC_MODMAP $out.map 2>/dev/null || : > $out.map
	echo "vhca 65536 0xffffffffc0a00000" >> $out.map
	MRC_MODMAP=$out.map
	leaks_sample > $out.sample
	kmemleak_classify $out.sample $out.sample.mine
	n=$(grep -c '^unreferenced object' $out.sample.mine)
	[ "$n" = 2 ] || { echo "$n objects of ours, 2 expected"; exit 1; }
	grep -q 0xffff888104c3a800 $out.sample.mine.other ||
		{ echo "the kernel's object was not left to the kernel"; exit 1; }
)
t_check "$T: a sample report is attributed (mrcore's and a gone vhca's objects ours, the kernel's not)" \
	leaks_classify_sample

# kmemleak_scan_into: one scan; ours appended to $out.mine, the rest to
# $out.seen ("clear" after each scan: a report is seen once).
kmemleak_scan_into() {
	local t0
	t0=$(date +%s)
	kmemleak_ours $out
	[ $? = 2 ] && scan_failed=1
	echo "# $T: scan in $(($(date +%s) - t0)) s:" \
		"$(grep -c '^unreferenced object' $out.all) unreferenced objects reported"
	cat $out >> $out.mine
	cat $out.other >> $out.seen
}

PLANT=/sys/kernel/debug/mrcore_test/kmemleak_plant
PLANTED=16
planted=
if [ ! -w $PLANT ]; then
	modprobe ib_core 2>/dev/null
	load_mrcore 2>/dev/null
	load_mrcore_test 2>/dev/null
fi
if [ -w $PLANT ] && echo $PLANTED > $PLANT; then
	planted=1
fi
t_eval "$T: $PLANTED objects planted through mrcore_test's debugfs kmemleak_plant" \
	'[ -n "$planted" ]'

rmmod mrcore_test 2>/dev/null
rmmod vhca 2>/dev/null
kmemleak_scan_into
kmemleak_scan_into

# leaks_unplant: the planted objects out of $out.mine into $out.planted.
leaks_unplant() {
	awk -v planted=$out.planted -v rest=$out.mine.rest '
	function flush() {
		if (rec != "")
			printf "%s", rec > (plant ? planted : rest)
		rec = ""
		plant = 0
	}
	/^unreferenced object/ { flush() }
	{ rec = rec $0 "\n" }
	/mrct kmemleak pl/ { plant = 1 }
	END { flush() }' $out.mine
	touch $out.planted $out.mine.rest
	mv $out.mine.rest $out.mine
}
leaks_unplant
nplanted=$(grep -c '^unreferenced object' $out.planted)
t_eval "$T: kmemleak reports planted objects, attributed to us ($nplanted of $PLANTED)" \
	'[ -n "$planted" ] && [ "$nplanted" -ge 1 ]'
if [ -s $out.mine ]; then
	echo "# $T: unreferenced objects of ours:"
	sed "s/^/# /" $out.mine | head -80
fi
t_eval "$T: no object of mrcore, vhca or mrcore_test unreferenced" \
	'[ -z "$scan_failed" ] || { echo "a scan failed"; false; } &&
	 { [ ! -s $out.mine ] || { grep -c "^unreferenced" $out.mine; false; }; }'
# The kernel's own, for the record.
echo "# $T: other unreferenced objects (not ours):" \
	"$(grep -c '^unreferenced object' $out.seen)"
