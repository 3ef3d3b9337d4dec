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

tree="$MRCORE_CACHE/linux"
ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
if [ ! -f "$tree/.mrcore-version" ] || [ "$(cat "$tree/.mrcore-version")" != "$ver" ]; then
	echo "tree: extracting linux-source-6.1 $ver" >&2
	rm -rf "$tree" && mkdir -p "$tree"
	tar -C "$tree" --strip-components=1 -xf /usr/src/linux-source-6.1.tar.xz
	# drivers/Kconfig ends with "endmenu": insert our source line before it.
	sed -i '$d' "$tree/drivers/Kconfig"
	printf 'source "drivers/mrcore-pkg/Kconfig"\n\nendmenu\n' >> "$tree/drivers/Kconfig"
	echo 'obj-y += mrcore-pkg/' >> "$tree/drivers/Makefile"
	echo "$ver" > "$tree/.mrcore-version"
fi

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
