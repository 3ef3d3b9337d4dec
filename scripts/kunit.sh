#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every KUnit suite in QEMU, on the debug kernel: linux-source-6.1's
# kunit.py with this project placed in the tree and kunit/.kunitconfig
# (KASAN, lockdep, DMA-API debug, UBSAN). The build directory lives in the
# cache, so a rerun after an edit is an incremental build. Any splat in the
# console log fails the run even when every case passed.
#
# 1. mrcore's suites (kunit/) are built in: kunit.py boots the kernel and
#    parses their KTAP.
# 2. vhca's suites (drivers/vhca/*_test.c) are linked into vhca.ko
#    (CONFIG_VHCA_KUNIT_TEST=m: vhca stays a module, so that the VM tier on
#    this kernel can load and unload it) and run when it loads. The same
#    kernel is booted once more by the VM tier's machinery with only
#    vhca_kunit.sh, which loads vhca and reports each case and each suite's
#    count against its plan (scripts/vmtest.sh --kernel=debug
#    --only=vhca_kunit.sh; no rebuild, the kernel was just built).
#
# The result line counts both: "kunit: N passed, N failed".
#
# Usage: kunit.sh [--build-only]   (--build-only prints the build directory)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

bash "$here/deps.sh" kunit
tree=$(bash "$here/tree.sh")
kbuild="$MRCORE_CACHE/kbuild"
kunit=(python3 "$tree/tools/testing/kunit/kunit.py")
common=(--arch=x86_64 --build_dir="$kbuild" --kunitconfig="$top/kunit/.kunitconfig"
	--jobs="$(nproc)")

if [ "${1:-}" = --build-only ]; then
	(cd "$tree" && "${kunit[@]}" build "${common[@]}") >&2
	echo "$kbuild"
	exit 0
fi

rc=0
(cd "$tree" && "${kunit[@]}" run "${common[@]}" --timeout=1800 \
	--qemu_args='-smp 2' --qemu_args='-cpu max') | tee "$MRCORE_CACHE/kunit.out" || rc=$?

summary=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$MRCORE_CACHE/kunit.out" | tail -1 || true)
ran=$(echo "$summary" | sed -n 's/.*Ran \([0-9]*\) tests.*/\1/p')
passed=$(echo "$summary" | sed -n 's/.*passed: \([0-9]*\).*/\1/p')
ran=${ran:-0} passed=${passed:-0}
failed=$((ran - passed))
[ "$rc" != 0 ] && [ "$failed" = 0 ] && failed=1

if grep -E -q "$MRC_SPLAT" "$kbuild/test.log"; then
	echo "kunit: kernel splat in the console log ($kbuild/test.log):"
	grep -E -m 5 "$MRC_SPLAT" "$kbuild/test.log" | sed 's/^/  /'
	failed=$((failed + 1))
fi
if [ "$ran" = 0 ]; then
	echo "kunit: no test ran"
	failed=$((failed + 1))
fi

# vhca's suites: their own "ok - kunit: SUITE: case" lines and the VM
# run's summary line "vmtest(debug/only:vhca_kunit.sh): P passed, F
# failed, S skipped", which also fails a splat or an unfinished run.
vlog="$MRCORE_CACHE/kunit-vhca.out"
MRCORE_RESULTS='' MRCORE_KUNIT_BUILT=1 bash "$here/vmtest.sh" --kernel=debug \
	--only=vhca_kunit.sh 2>&1 | tee "$vlog" || true
vsum=$(grep -E '^vmtest\(debug/only:vhca_kunit\.sh\): ' "$vlog" | tail -1 || true)
vpassed=$(echo "$vsum" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
vfailed=$(echo "$vsum" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
vskipped=$(echo "$vsum" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
if [ -z "$vpassed" ] || [ -z "$vfailed" ]; then
	echo "kunit: vhca's suites did not run to a summary ($vlog)"
	vpassed=0 vfailed=1
elif [ "$vpassed" = 0 ]; then
	echo "kunit: no vhca case passed"
	vfailed=$((vfailed + 1))
fi
# A skipped case is not a pass: as in kunit.py's count above, it fails.
vfailed=$((vfailed + ${vskipped:-0}))

echo "kunit: mrcore suites $passed passed, $failed failed;" \
	"vhca suites $vpassed passed, $vfailed failed"
passed=$((passed + vpassed))
failed=$((failed + vfailed))
echo "kunit: $passed passed, $failed failed"
[ -n "${MRCORE_RESULTS:-}" ] && echo "kunit $passed $failed" >> "$MRCORE_RESULTS"
[ "$failed" = 0 ]
