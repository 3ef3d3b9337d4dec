#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prepare a writable linux-source-6.1 tree in the cache with this project
# placed under drivers/mrcore-pkg (an in-tree build), and print its path.
# Only files whose contents changed are copied, so an unchanged file never
# triggers a rebuild.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

tree=$(mrc_linux_tree)
mkdir -p "$tree/drivers/mrcore-pkg"
# Compare contents, not times, and give a copied file the current time: a
# file edited after an earlier sync but before its object was built must
# still look newer than that object.
rsync -rl --checksum --delete --prune-empty-dirs \
	--exclude='*.mod.c' --include='*/' --include='Kbuild' \
	--include='Kconfig' --include='*.[ch]' --exclude='*' \
	"$top/drivers" "$top/include" "$top/kunit" "$top/Kbuild" "$top/Kconfig" \
	"$tree/drivers/mrcore-pkg/"
echo "$tree"
