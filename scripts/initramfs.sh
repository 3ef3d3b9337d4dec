#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Assemble the VM tier's initramfs.
#
# Usage: initramfs.sh OUT KROOT KVER 'MODULES...' KO_DIR
#   KROOT   a root holding lib/modules/KVER (stock .deb or a debug install)
#   MODULES distro modules the tests use; closures resolved by modprobe
#   KO_DIR  directory with our mrcore.ko / vhca.ko built for KVER (may be
#           empty when they are part of the kernel)
#
# Contents: busybox-static as /bin/sh and friends, the dynamic tools the
# tests run with their shared libraries, the module closures with a depmod
# index (so modprobe and request_module work), our modules under /mrcore,
# the selftests installed under /selftests and the benchmarks and the demo
# under /tools (scripts/selftests.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=$1 kroot=$2 kver=$3 mods=$4 kodir=$5

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,mnt,root,var/run}
mkdir -p "$stage"/{usr/bin,usr/sbin,lib/modules/"$kver",mrcore,selftests,tools}
cp /bin/busybox "$stage/bin/busybox"
for a in $("$stage/bin/busybox" --list); do
	[ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"
done

# Dynamic tools and their libraries. The tools shadow busybox's applets.
copy_bin() {
	local bin=$1 lib
	[ -x "$bin" ] || return 0
	cp "$bin" "$stage/usr/bin/"
	for lib in $(ldd "$bin" | awk '/=> \//{print $3} /^\t\/lib/{print $1}'); do
		[ -e "$stage$lib" ] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
}
for b in /usr/bin/rdma /usr/sbin/ip /usr/bin/fio /usr/sbin/nvme \
	 /usr/sbin/iscsid /usr/sbin/iscsiadm; do
	copy_bin "$b"
done
mkdir -p "$stage/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib64/"
ln -sf ../usr/bin/ip "$stage/sbin/ip"
# The kernel's request_module (vm-init.sh points it at /sbin/modprobe):
# LIO asks for ib_isert when a portal turns iSER on, crypto for crc32c.
ln -sf ../bin/busybox "$stage/sbin/modprobe"
echo 'root:x:0:0:root:/root:/bin/sh' > "$stage/etc/passwd"
echo 'root:x:0:' > "$stage/etc/group"

# open-iscsi (iSER tests). iscsid refuses iscsiadm unless /etc/passwd has
# root (above). A login, a discovery and a NOP-Out answer each get a
# minute, so that a slow moment of the debug kernel under TCG is never
# taken for a dead target (no verdict by the clock; a 10 s discovery
# login once timed out in a cold make check), while a broken data path
# still fails within that minute: one login try, SendTargets discovery
# reopened once. I/O is failed 5 s after a connection is lost, which is
# what the removal tests need; that is a bound on recovery, not a
# verdict.
mkdir -p "$stage"/etc/iscsi/{nodes,send_targets,ifaces}
echo 'InitiatorName=iqn.2026-11.org.mrcore:vm' > "$stage/etc/iscsi/initiatorname.iscsi"
cat > "$stage/etc/iscsi/iscsid.conf" <<'EOF'
node.startup = manual
node.session.initial_login_retry_max = 1
node.conn[0].timeo.login_timeout = 60
node.conn[0].timeo.logout_timeout = 60
node.conn[0].timeo.noop_out_interval = 5
node.conn[0].timeo.noop_out_timeout = 60
node.session.timeo.replacement_timeout = 5
node.session.err_timeo.abort_timeout = 10
node.session.err_timeo.lu_reset_timeout = 10
node.session.err_timeo.tgt_reset_timeout = 10
node.session.scan = auto
discovery.sendtargets.timeo.login_timeout = 60
discovery.sendtargets.reopen_max = 1
EOF

# Module closures, in the same layout as the source root, then an index.
src="$kroot/lib/modules/$kver"
for m in $mods; do
	modprobe -d "$kroot" -S "$kver" --show-depends "$m" ||
		echo "initramfs: no module $m for $kver" >&2
done | awk '$1 == "insmod" {print $2}' | sort -u | while read -r ko; do
	rel=${ko#"$kroot"}
	mkdir -p "$stage$(dirname "$rel")"
	cp "$ko" "$stage$rel"
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ -f "$src/$f" ] && cp "$src/$f" "$stage/lib/modules/$kver/"
done
depmod -b "$stage" "$kver"

if [ -n "$kodir" ]; then
	for ko in "$kodir"/drivers/mrcore/mrcore.ko "$kodir"/drivers/vhca/vhca.ko \
		  "$kodir"/drivers/mrcore_test/mrcore_test.ko; do
		[ -f "$ko" ] && cp "$ko" "$stage/mrcore/"
	done
fi
bash "$here/selftests.sh" "$stage/selftests" "$stage/tools"
cp "$here/vm-init.sh" "$stage/init"
chmod +x "$stage/init"

(cd "$stage" && find . | cpio -o -H newc --quiet) > "$out"
