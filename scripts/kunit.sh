#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# KUnit in QEMU: linux-source-6.1's kunit.py with this project placed in
# the tree and kunit/.kunitconfig (KASAN, lockdep, DMA-API debug, UBSAN).
# The build directory lives in the cache, so a rerun after an edit is an
# incremental build. Any splat in the console log fails the run even when
# every case passed.
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
echo "kunit: $passed passed, $failed failed"
[ -n "${MRCORE_RESULTS:-}" ] && echo "kunit $passed $failed" >> "$MRCORE_RESULTS"
[ "$failed" = 0 ]
