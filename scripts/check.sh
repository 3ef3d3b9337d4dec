#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: build (W=1, zero warnings), sparse, checkpatch, KUnit in QEMU
# on the debug kernel, the VM tier on the stock and on the debug kernel.
# (The storage ULPs over vhca with swiotlb=force are a manual run,
# "scripts/vmtest.sh --swiotlb --ulp": 6.1's nvmet-rdma fills data buffers
# after rdma_rw mapped them DMA_TO_DEVICE and never syncs, so under
# swiotlb the device reads stale bounce buffers; see
# Documentation/mrcore/datapath.rst. The rest of the test mode under
# swiotlb=force, about 24 minutes on the debug kernel, is
# "scripts/vmtest.sh --kernel=debug --swiotlb": Documentation/mrcore/
# hardening.rst, "Bounce buffers".)
# Every stage runs even when an earlier one failed. The output ends with
# the time each tier took, then the results per stage, then one line
# "N passed, N failed" over all of them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

MRCORE_RESULTS=$(mktemp)
export MRCORE_RESULTS
start=$(date +%s)

# timed NAME CMD...: run CMD and note how long it took, for the table of
# tier times at the end (the set-up is timed too: on a fresh machine it is
# where the minutes go).
TIMES=$(mktemp)
trap 'rm -f "$MRCORE_RESULTS" "$TIMES"' EXIT
timed() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	"$@"
	rc=$?
	echo "$name	$(($(date +%s) - t0))" >> "$TIMES"
	return $rc
}

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

timed "set-up (packages)" bash "$here/deps.sh" all
# The build and sparse tiers use the headers of the Debian 6.1 kernel the
# VM tier boots (deps.sh installed them), whatever kernel the host runs.
kdir=$(mrc_debian_kdir)
make -s -C "$top" KDIR="$kdir" clean >/dev/null 2>&1
timed "build (W=1)" stage "build (W=1)" make -C "$top" KDIR="$kdir" modules
make -s -C "$top" KDIR="$kdir" clean >/dev/null 2>&1
timed "sparse" stage "sparse (C=2)" make -C "$top" KDIR="$kdir" sparse
timed "checkpatch" stage "checkpatch --strict" make -s -C "$top" checkpatch

echo "=== kunit"
timed "kunit (debug kernel)" bash "$here/kunit.sh" || true
echo "=== vmtest (stock kernel)"
timed "vm tier, stock kernel" bash "$here/vmtest.sh" --kernel=stock || true
echo "=== vmtest (debug kernel)"
# The user-space suites run over vhca0 only here (the stock kernel's tier
# runs them over rxe0 too, as the reference): under KASAN and lockdep it
# is vhca's kernel side that is being checked.
USER_DEVS=vhca \
	timed "vm tier, debug kernel" bash "$here/vmtest.sh" --kernel=debug || true

echo "=== time per tier (s; a kernel build, when the cache lacks it, is in its tier)"
awk -F'\t' '{printf "%-28s %6d\n", $1, $2; t += $2}
     END {printf "%-28s %6d\n", "total", t}' "$TIMES"
echo "=== summary ($(($(date +%s) - start)) s)"
awk '{n = $1; for (i = 2; i < NF - 1; i++) n = n " " $i
      printf "%-22s %5d passed, %d failed\n", n, $(NF-1), $NF; p += $(NF-1); f += $NF}
     END {printf "%d passed, %d failed\n", p, f}' "$MRCORE_RESULTS" > "$MRCORE_RESULTS.sum"
cat "$MRCORE_RESULTS.sum"
failed=$(tail -1 "$MRCORE_RESULTS.sum" | awk '{print $3}')
rm -f "$MRCORE_RESULTS.sum"
[ "$failed" = 0 ]
