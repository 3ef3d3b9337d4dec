# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the scripts. Sourced, never executed.

MRCORE_CACHE=${MRCORE_CACHE:-$HOME/.cache/mrcore}
export MRCORE_CACHE

mrc_as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

mrc_apt_updated=
mrc_apt_update() {
	[ -n "$mrc_apt_updated" ] && return 0
	mrc_as_root apt-get update -qq
	mrc_apt_updated=1
}

# The ABI of Debian's current 6.1 kernel, read from linux-image-amd64's
# dependency so that a point release never needs a source change.
mrc_abi() {
	local dep
	dep=$(apt-cache depends linux-image-amd64 2>/dev/null |
	      sed -n 's/.*Depends: linux-image-\(6\.1\.[0-9]*-[0-9]*\)-amd64$/\1/p' | head -1)
	if [ -z "$dep" ]; then
		mrc_apt_update
		dep=$(apt-cache depends linux-image-amd64 |
		      sed -n 's/.*Depends: linux-image-\(6\.1\.[0-9]*-[0-9]*\)-amd64$/\1/p' | head -1)
	fi
	[ -n "$dep" ] || { echo "cannot resolve the 6.1 ABI from linux-image-amd64" >&2; return 1; }
	echo "$dep"
}

# A pristine linux-source-6.1 tree extracted into the cache (read-only use:
# checkpatch, kunit.py). Extracted again when the package version changes.
mrc_linux_src() {
	local tarball=/usr/src/linux-source-6.1.tar.xz dir="$MRCORE_CACHE/src"
	local ver
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	if [ ! -f "$dir/.version" ] || [ "$(cat "$dir/.version")" != "$ver" ]; then
		rm -rf "$dir" && mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xf "$tarball" >&2
		echo "$ver" > "$dir/.version"
	fi
	echo "$dir"
}
