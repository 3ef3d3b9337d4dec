#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The line coverage a fuzz run reached (make fuzz): of every source line of
# drivers/mrcore and drivers/vhca where the compiler put a KCOV call
# (CONFIG_KCOV, KCOV_INSTRUMENT in their Kbuild: one a basic block), the
# share whose call some execution of the fuzzer made.
#
# Usage: fuzz-cover.sh DIR [KBUILD]
#   DIR     the run's files: pcs (mrc_fuzz -p: every PC KCOV reported, hex)
#           and sections (fuzz.sh: "vhca ADDRESS" of vhca.ko's .text and
#           "_text ADDRESS", the running kernel's); or, for a run split
#           across boots (fuzz.sh FUZZ_RESUME=1), leg.N/ with those two
#           each, every leg's PCs mapped with its own boot's addresses
#   KBUILD  the debug kernel's build directory ($MRCORE_CACHE/kbuild)
# Writes DIR/cover.txt (per file: lines reached / lines instrumented),
# DIR/lines.reached and DIR/lines.all (file:line), prints the summary.
#
# KCOV reports a return address: the instruction after the call, made
# "canonical" by subtracting the KASLR offset. So a reported PC P was the
# call at P - 5 (a rel32 call) + the offset; mrcore is built into vmlinux
# (its addresses are vmlinux's), vhca is a module (its address is its
# .text base plus an offset in vhca.ko's .text).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

dir=${1:?usage: fuzz-cover.sh DIR [KBUILD]}
kbuild=${2:-$MRCORE_CACHE/kbuild}
pkg="$kbuild/drivers/mrcore-pkg/drivers"
# The boots whose PCs count: the run's own, or its legs'.
if [ -s "$dir/pcs" ]; then
	boots=$dir
else
	boots=$(for d in "$dir"/leg.*; do if [ -s "$d/pcs" ]; then echo "$d"; fi; done)
	[ -n "$boots" ] || { echo "fuzz-cover: no $dir/pcs, nor leg.*/pcs" >&2; exit 1; }
fi
for f in "$kbuild/vmlinux" "$pkg/vhca/vhca.ko"; do
	[ -s "$f" ] || { echo "fuzz-cover: no $f" >&2; exit 1; }
done
for d in $boots; do
	for f in "$d/pcs" "$d/sections"; do
		[ -s "$f" ] || { echo "fuzz-cover: no $f" >&2; exit 1; }
	done
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rel PATH: the path from drivers/mrcore or drivers/vhca on, or nothing.
rel() {
	sed -n -E 's#.*/(drivers/(mrcore|vhca)/[^:]*:[0-9]+).*#\1#p'
}

# Every instrumented line: the KCOV calls in each object, by section.
for o in "$pkg"/mrcore/*.o "$pkg/vhca/vhca.ko"; do
	case "$o" in *.mod.o) continue ;; esac
	objdump -dr "$o" | awk '
		/^Disassembly of section / { sec = $4; sub(/:$/, "", sec) }
		/R_X86_64_PLT32[ \t]+__sanitizer_cov_trace_pc/ {
			a = $1; sub(/:$/, "", a); print sec, a }' |
	while read -r sec addr; do
		echo "$sec 0x$addr"
	done | sort -u > "$tmp/sites"
	# One addr2line per section: -j takes one.
	for sec in $(awk '{print $1}' "$tmp/sites" | sort -u); do
		awk -v s="$sec" '$1 == s {print $2}' "$tmp/sites" |
			addr2line -e "$o" -j "$sec" | rel
	done
done | sort -u > "$dir/lines.all"

# The reached ones. The relocation offsets above point at the call's
# operand (call + 1); the PCs are the call + 5. Both are mapped to the
# call's own line.
vtext=$(nm "$kbuild/vmlinux" | awk '$3 == "_text" {v = $1} END {print "0x" v}')
for d in $boots; do
	kaslr=$(awk '$1 == "_text" {print $2}' "$d/sections")
	vhca=$(awk '$1 == "vhca" {print $2}' "$d/sections")
	[ -n "$kaslr" ] && [ -n "$vhca" ] ||
		{ echo "fuzz-cover: $d/sections lacks _text or vhca" >&2; exit 1; }
	python3 - "$kaslr" "$vtext" "$vhca" "$d/pcs" <<'EOF'
import sys
k = int(sys.argv[1], 16) - int(sys.argv[2], 16)
v = int(sys.argv[3], 16)
for line in open(sys.argv[4]):
    if not line.strip():
        continue
    pc = int(line, 16) + k - 5
    if v <= pc < v + (16 << 20):
        print("v 0x%x" % (pc - v))
    else:
        print("k 0x%x" % (pc - k))
EOF
done | sort -u > "$tmp/pcs"
{
	awk '$1 == "k" {print $2}' "$tmp/pcs" | addr2line -e "$kbuild/vmlinux" | rel
	awk '$1 == "v" {print $2}' "$tmp/pcs" | addr2line -e "$pkg/vhca/vhca.ko" -j .text | rel
} | sort -u > "$tmp/reached"
# Only lines that are instrumented count (a PC of another object never
# names ours; this keeps the ratio honest if one did).
comm -12 "$tmp/reached" "$dir/lines.all" > "$dir/lines.reached"

awk -F: 'FNR == NR {r[$1]++; next} {a[$1]++}
	END {
		for (f in a) {
			printf "%-40s %5d / %5d  %5.1f%%\n", f, r[f], a[f], 100 * r[f] / a[f]
			R += r[f]; A += a[f]
			d = f; sub(/\/[^\/]*$/, "", d); dr[d] += r[f]; da[d] += a[f]
		}
		for (d in da)
			printf "%-40s %5d / %5d  %5.1f%%\n", d "/ (all)", dr[d], da[d], 100 * dr[d] / da[d]
		printf "%-40s %5d / %5d  %5.1f%%\n", "total", R, A, 100 * R / A
	}' "$dir/lines.reached" "$dir/lines.all" | sort > "$dir/cover.txt"
grep -E '\(all\)|^total' "$dir/cover.txt" | sed 's/^/fuzz-cover: /'
echo "fuzz-cover: per file in $dir/cover.txt"
