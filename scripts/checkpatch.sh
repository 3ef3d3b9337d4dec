#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch --strict from linux-source-6.1 over our own files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
bash "$here/deps.sh" kunit
src=$(mrc_linux_tree)
"$src/scripts/checkpatch.pl" --strict --no-tree --terse --show-types -f "$@"
