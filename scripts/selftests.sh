#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the VM tier's user space on the host and install it:
#
# - the selftests the kselftest way: tools/testing/selftests/mrcore is
#   placed in the cached linux-source-6.1 tree (for its lib.mk and
#   kselftest harness) and its Makefile builds the C tests (against the
#   private UAPI of mrcore_test.ko) and installs them with the scripts
#   into SELFTESTS_DIR, with kselftest-list.txt ("make emit_tests": the
#   TEST_PROGS in the Makefile's order), which run.sh runs;
# - the benchmarks and the demo of tools/mrcore into TOOLS_DIR.
#
# Programs are statically linked when the C library allows it, so the VM
# needs no libraries. Objects stay in the cache: only what changed is
# rebuilt.
#
# Usage: selftests.sh SELFTESTS_DIR TOOLS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

[ $# = 2 ] || { echo "usage: $0 SELFTESTS_DIR TOOLS_DIR" >&2; exit 2; }
out=$1 tools_out=$2
tree=$(mrc_linux_tree)
# One build directory per source tree: make compares times, and two
# checkouts' files have unrelated ones.
build="$MRCORE_CACHE/selftests-build/$(echo "$top" | md5sum | cut -c1-8)"
mkdir -p "$build/mrcore" "$build/tools"

# Static when the C library allows it (libc6-dev ships libc.a on Debian).
ldflags=-static
echo 'int main(void) { return 0; }' |
	gcc -x c -static -o /dev/null - 2>/dev/null || ldflags=

# Only files whose contents changed are copied (see tree.sh).
rsync -rl --checksum --delete "$top/tools/testing/selftests/mrcore/" \
	"$tree/tools/testing/selftests/mrcore/"
ksft=(make -s --no-print-directory -C "$tree/tools/testing/selftests/mrcore"
      OUTPUT="$build/mrcore" MRCORE_SRC="$top")
"${ksft[@]}" USERLDFLAGS="$ldflags" INSTALL_PATH="$out" install >/dev/null
"${ksft[@]}" COLLECTION=mrcore emit_tests > "$out/kselftest-list.txt"

make -s --no-print-directory -C "$top/tools/mrcore" OUTPUT="$build/tools" \
	MRCORE_SRC="$top" LDFLAGS="$ldflags" INSTALL_PATH="$tools_out" install >/dev/null
