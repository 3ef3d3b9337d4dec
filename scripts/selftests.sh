#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the userspace selftests on the host: mr_tests, dp_tests, frwr_tests,
# fmr_tests, mw_tests, counter_tests, keys_tests, odp_tests,
# dmabuf_tests and pin_tests, against
# the kselftest harness of the cached linux-source-6.1 tree and the private
# UAPI of mrcore_test.ko, and the benchmarks mr_bench (registration) and
# dp_bench (data-path copy rate), all statically linked so the VM needs no
# libraries.
#
# Usage: selftests.sh OUTDIR
#	(writes OUTDIR/mr_tests, OUTDIR/dp_tests, OUTDIR/frwr_tests,
#	 OUTDIR/fmr_tests, OUTDIR/mw_tests, OUTDIR/counter_tests,
#	 OUTDIR/keys_tests, OUTDIR/odp_tests, OUTDIR/dmabuf_tests,
#	 OUTDIR/pin_tests, OUTDIR/mkey_exhaust,
#	 OUTDIR/mr_bench,
#	 OUTDIR/dp_bench, OUTDIR/odp_bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

[ $# = 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
mkdir -p "$out"
src=$(mrc_linux_tree)

cflags=(-O2 -Wall -Werror -I"$src/tools/testing/selftests"
	-I"$top/drivers/mrcore_test")
# Static when the C library allows it (libc6-dev ships libc.a on Debian).
ldflags=(-static)
echo 'int main(void) { return 0; }' |
	gcc -x c -static -o /dev/null - 2>/dev/null || ldflags=()

gcc "${cflags[@]}" -o "$out/mr_tests" \
	"$top/tools/testing/selftests/mrcore/mr_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/dp_tests" \
	"$top/tools/testing/selftests/mrcore/dp_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/rereg_tests" \
	"$top/tools/testing/selftests/mrcore/rereg_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/frwr_tests" \
	"$top/tools/testing/selftests/mrcore/frwr_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/fmr_tests" \
	"$top/tools/testing/selftests/mrcore/fmr_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/mw_tests" \
	"$top/tools/testing/selftests/mrcore/mw_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/counter_tests" \
	"$top/tools/testing/selftests/mrcore/counter_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/keys_tests" \
	"$top/tools/testing/selftests/mrcore/keys_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/odp_tests" \
	"$top/tools/testing/selftests/mrcore/odp_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/dmabuf_tests" \
	"$top/tools/testing/selftests/mrcore/dmabuf_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/pin_tests" \
	"$top/tools/testing/selftests/mrcore/pin_tests.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/mkey_exhaust" \
	"$top/tools/testing/selftests/mrcore/mkey_exhaust.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/mr_bench" \
	"$top/tools/testing/selftests/mrcore/mr_bench.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/odp_bench" \
	"$top/tools/testing/selftests/mrcore/odp_bench.c" "${ldflags[@]}"
gcc "${cflags[@]}" -o "$out/dp_bench" \
	"$top/tools/testing/selftests/mrcore/dp_bench.c" "${ldflags[@]}"
