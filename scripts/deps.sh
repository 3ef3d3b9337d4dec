#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what the build and the test tiers need, when it is missing.
# Idempotent: a package already present costs nothing.
#
# Usage: scripts/deps.sh [build|kunit|vm|verbs|all]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# Everything said here is for the log: scripts that print a path on
# stdout (kunit.sh --build-only, read by vmtest.sh) call this one.
exec >&2

want=(make gcc bc bison flex libelf-dev libssl-dev kmod cpio)
# Debian's user-space RDMA stack, which the VM tier runs unchanged in a
# chroot of the host's root (user_verbs.sh): the verbs and RDMA CM
# libraries with their providers (librxe), their example programs,
# perftest, libfabric's verbs provider and fi_* tools, pyverbs; and the
# headers our own C test programs are compiled against.
verbs=(libibverbs1 ibverbs-providers librdmacm1 ibverbs-utils rdmacm-utils
       perftest libfabric1 libfabric-bin python3-pyverbs
       libibverbs-dev librdmacm-dev libfabric-dev)
case "${1:-all}" in
build)	;;
kunit)	want+=(python3 qemu-system-x86 linux-source-6.1 xz-utils dwarves rsync) ;;
vm)	# linux-source-6.1: the C selftests build against its kselftest harness
	# (lib.mk, which installs them with rsync).
	# open-iscsi: iscsid and iscsiadm, the iSER initiator's user space (the
	# LIO target is configured through configfs, no targetcli).
	want+=(qemu-system-x86 busybox-static iproute2 fio nvme-cli rdma-core
	       ibverbs-utils open-iscsi linux-source-6.1 xz-utils rsync
	       "${verbs[@]}") ;;
verbs)	want+=("${verbs[@]}") ;;
all)	want+=(python3 qemu-system-x86 linux-source-6.1 xz-utils dwarves rsync
	       sparse busybox-static iproute2 fio nvme-cli ibverbs-utils
	       "${verbs[@]}") ;;
*)	echo "usage: $0 [build|kunit|vm|verbs|all]" >&2; exit 2 ;;
esac

abi=$(mrc_abi)
want+=("linux-headers-$abi-amd64")

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	echo "deps: installing ${missing[*]}"
	# The package lists may predate a package (or its current version).
	mrc_apt_update
	mrc_as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
