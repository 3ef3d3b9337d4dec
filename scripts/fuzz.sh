#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz: the fuzzer (tools/testing/selftests/mrcore/fuzz.sh, mrc_fuzz)
# in QEMU on the debug kernel (KASAN, lockdep, UBSAN, DMA-API debug,
# kmemleak, KCOV on mrcore and vhca), then the kmemleak scan (leaks.sh),
# then the line coverage it reached (fuzz-cover.sh).
#
# Environment: FUZZ_SECONDS (default 600 when FUZZ_EXECS is not set either),
# FUZZ_EXECS, FUZZ_SEED (default: the clock), FUZZ_THREADS (default 3),
# FUZZ_FAMILIES (mrc_fuzz -f letters; default all),
# FUZZ_OUT (where the run's files go; default a new directory
# under $MRCORE_CACHE/fuzz), KERNEL (debug, or stock: no KCOV, kmemleak).
# The VM is given FUZZ_SECONDS plus an hour, or 12 hours with FUZZ_EXECS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

kernel=${KERNEL:-debug}
[ -n "${FUZZ_EXECS:-}" ] || FUZZ_SECONDS=${FUZZ_SECONDS:-600}
FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}
FUZZ_OUT=${FUZZ_OUT:-$MRCORE_CACHE/fuzz/$FUZZ_SEED}
export FUZZ_SECONDS FUZZ_EXECS FUZZ_SEED FUZZ_THREADS FUZZ_FAMILIES FUZZ_OUT
if [ -n "${FUZZ_SECONDS:-}" ]; then
	tmo=$((FUZZ_SECONDS + 3600))
else
	tmo=43200
fi
echo "fuzz: seed $FUZZ_SEED, ${FUZZ_SECONDS:+$FUZZ_SECONDS s}${FUZZ_EXECS:+ $FUZZ_EXECS execs}, files in $FUZZ_OUT"
rc=0
MRCORE_VM_TIMEOUT=$tmo bash "$here/vmtest.sh" --kernel="$kernel" --fuzz || rc=1
if [ "$kernel" = debug ] && [ -s "$FUZZ_OUT/pcs" ]; then
	bash "$here/fuzz-cover.sh" "$FUZZ_OUT" "$MRCORE_CACHE/kbuild" || rc=1
fi
exit $rc
