#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's stock 6.1 kernel image and modules into the cache, without
# installing anything to /boot, and print the directory. The directory
# holds boot/vmlinuz-<ver> and lib/modules/<ver>.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

abi=$(mrc_abi)
pkg="linux-image-$abi-amd64"
dir="$MRCORE_CACHE/stock/$abi"
if [ ! -f "$dir/.done" ]; then
	echo "kernel: fetching $pkg" >&2
	rm -rf "$dir" && mkdir -p "$dir/deb"
	(cd "$dir/deb" && apt-get download -qq "$pkg" >&2 2>/dev/null ||
		{ mrc_apt_update && apt-get download -qq "$pkg" >&2; })
	dpkg-deb -x "$dir"/deb/*.deb "$dir/root"
	rm -rf "$dir/deb"
	# The package ships no module index (its postinst makes one).
	depmod -b "$dir/root" "$(ls "$dir/root/lib/modules")"
	touch "$dir/.done"
fi
echo "$dir/root"
