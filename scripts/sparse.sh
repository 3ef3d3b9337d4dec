#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make sparse: build the modules with sparse (C=2) and W=1, against the
# headers of Debian's current 6.1 kernel, installed when missing, or
# against the build tree given as the argument.
#
# Usage: sparse.sh [KDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

bash "$here/deps.sh" all
kdir=${1:-$(mrc_debian_kdir)}
make -C "$top" KDIR="$kdir" C=2 CHECK="sparse -Wno-unknown-attribute" modules
