# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the scripts. Sourced, never executed.

MRCORE_CACHE=${MRCORE_CACHE:-$HOME/.cache/mrcore}
export MRCORE_CACHE

# What in a console log is a kernel splat: any of it fails a test run,
# even when every check passed.
MRC_SPLAT='(BUG:|WARNING:|KASAN:|UBSAN:|Oops|general protection|Call Trace:|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|suspicious RCU usage|kernel BUG|Kernel panic|self-detected stall|detected stalls on CPUs)'

# mrc_known_splats LOG: LOG without the warnings we know to be false
# positives of code that is not ours (the list and the reasons are in
# known_splats.awk, shared with the VM scripts).
mrc_known_splats() {
	awk -f "$(dirname "${BASH_SOURCE[0]}")/../tools/testing/selftests/mrcore/known_splats.awk" "$1"
}

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

# The build tree of Debian's current 6.1 kernel (linux-headers-<abi>-amd64,
# which scripts/deps.sh installs): what the test tiers build against,
# whatever kernel the host runs.
mrc_debian_kdir() {
	echo "/usr/src/linux-headers-$(mrc_abi)-amd64"
}

# The linux-source-6.1 tree in the cache, extracted again when the package
# version changes, with the hooks that place this project under
# drivers/mrcore-pkg (scripts/tree.sh fills that directory). checkpatch.pl
# and the kselftest harness are read from the same tree.
mrc_linux_tree() {
	local tree="$MRCORE_CACHE/linux" ver
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	if [ ! -f "$tree/.mrcore-version" ] || [ "$(cat "$tree/.mrcore-version")" != "$ver" ]; then
		echo "tree: extracting linux-source-6.1 $ver" >&2
		rm -rf "$tree" && mkdir -p "$tree"
		tar -C "$tree" --strip-components=1 -xf /usr/src/linux-source-6.1.tar.xz
		# drivers/Kconfig ends with "endmenu": insert our line before it.
		sed -i '$d' "$tree/drivers/Kconfig"
		printf 'source "drivers/mrcore-pkg/Kconfig"\n\nendmenu\n' >> "$tree/drivers/Kconfig"
		echo 'obj-y += mrcore-pkg/' >> "$tree/drivers/Makefile"
		echo "$ver" > "$tree/.mrcore-version"
	fi
	echo "$tree"
}
