#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: build (W=1, zero warnings), sparse, checkpatch, KUnit in QEMU
# on the debug kernel, the VM tier on the stock and on the debug kernel.
# (The storage ULPs over vhca with swiotlb=force are a manual run,
# "scripts/vmtest.sh --swiotlb --ulp": 6.1's nvmet-rdma fills data buffers
# after rdma_rw mapped them DMA_TO_DEVICE and never syncs, so under
# swiotlb the device reads stale bounce buffers; see
# Documentation/mrcore/datapath.rst.)
# Every stage runs even when an earlier one failed; the last line is
# "N passed, N failed" over all of them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

MRCORE_RESULTS=$(mktemp)
export MRCORE_RESULTS
trap 'rm -f "$MRCORE_RESULTS"' EXIT
start=$(date +%s)

# stage NAME CMD...: a stage that is one check; its output must not
# contain a compiler or sparse warning.
stage() {
	local name=$1 out rc
	shift
	echo "=== $name"
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | tail -40
	if [ $rc = 0 ] && ! echo "$out" | grep -q -E 'warning:|error:|^(WARNING|ERROR|CHECK):'; then
		echo "$name 1 0" >> "$MRCORE_RESULTS"
		echo "ok - $name"
	else
		echo "$name 0 1" >> "$MRCORE_RESULTS"
		echo "not ok - $name"
	fi
}

bash "$here/deps.sh" all
make -s -C "$top" clean >/dev/null 2>&1
stage "build (W=1)" make -C "$top" modules
make -s -C "$top" clean >/dev/null 2>&1
stage "sparse (C=2)" make -C "$top" sparse
stage "checkpatch --strict" make -s -C "$top" checkpatch

echo "=== kunit"
bash "$here/kunit.sh" || true
echo "=== vmtest (stock kernel)"
bash "$here/vmtest.sh" --kernel=stock || true
echo "=== vmtest (debug kernel)"
bash "$here/vmtest.sh" --kernel=debug || true

echo "=== summary ($(($(date +%s) - start)) s)"
awk '{n = $1; for (i = 2; i < NF - 1; i++) n = n " " $i
      printf "%-22s %5d passed, %d failed\n", n, $(NF-1), $NF; p += $(NF-1); f += $NF}
     END {printf "%d passed, %d failed\n", p, f}' "$MRCORE_RESULTS" > "$MRCORE_RESULTS.sum"
cat "$MRCORE_RESULTS.sum"
failed=$(tail -1 "$MRCORE_RESULTS.sum" | awk '{print $3}')
rm -f "$MRCORE_RESULTS.sum"
[ "$failed" = 0 ]
