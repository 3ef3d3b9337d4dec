#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz: the fuzzer (tools/testing/selftests/mrcore/fuzz.sh, mrc_fuzz)
# in QEMU on the debug kernel (KASAN, lockdep, UBSAN, DMA-API debug,
# kmemleak, KCOV on mrcore and vhca), then the kmemleak scan (leaks.sh),
# then the line coverage it reached (fuzz-cover.sh).
#
# Environment: FUZZ_SECONDS (default 600 when FUZZ_EXECS is not set either),
# FUZZ_EXECS, FUZZ_SEED (default: the clock), FUZZ_THREADS (default 3),
# FUZZ_FAMILIES (mrc_fuzz -f letters; default all),
# FUZZ_OUT (where the run's files go; default a new directory
# under $MRCORE_CACHE/fuzz), KERNEL (debug, or stock: no KCOV, kmemleak).
# The VM is given FUZZ_SECONDS plus an hour, or 12 hours with FUZZ_EXECS.
#
# FUZZ_RESUME=1 splits one run of FUZZ_EXECS execs across boots, for a run
# longer than one sitting. Each call boots once and runs one leg of at
# most FUZZ_SECONDS, with the execs the earlier legs left to do; FUZZ_OUT
# (required) holds the run: the ledger (its first line the run's execs,
# seed, threads and families; then a line a leg: its seed, the commit,
# execs, seconds, verdict), the corpus of every leg so far, where each
# leg starts, and leg.N/, a leg's own files (as a plain run's). Leg N's
# seed is FUZZ_SEED + N. Every leg runs the commit leg 0 ran (a run
# starts from a clean tree; a later leg on a tree that moved on runs a
# clone at that commit, in $MRCORE_CACHE/fuzz-src), so the run's count is
# of one code base. A leg counts only when its boot passed every check
# (the fuzzer's, the counts, no splat, no leak); after a failed leg the
# run is over and the ledger says so. A leg whose checks passed but whose
# count could not be read is "uncounted": its execs do not count, and
# the run goes on. To stop a leg, kill this script's process group: a
# leg stopped so leaves no line, and the next call runs it again. The
# coverage is that of every leg, each mapped with its own boot's
# addresses.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

kernel=${KERNEL:-debug}
ledger=
pin=
# The tree whose scripts/vmtest.sh boots (resume() may point it at a
# clone of the run's commit).
vmsrc=$here/..

# fuzz_boot: one boot of the fuzzer with the settings exported, its
# TAP lines also in $1 when given; the status of the boot's checks.
fuzz_boot() {
	local tmo
	if [ -n "${FUZZ_SECONDS:-}" ]; then
		tmo=$((FUZZ_SECONDS + 3600))
	else
		tmo=43200
	fi
	export FUZZ_SECONDS FUZZ_EXECS FUZZ_SEED FUZZ_THREADS FUZZ_FAMILIES FUZZ_OUT FUZZ_CARRY
	if [ -n "${1:-}" ]; then
		MRCORE_VM_TIMEOUT=$tmo bash "$vmsrc/scripts/vmtest.sh" --kernel="$kernel" --fuzz |
			tee "$1"
	else
		MRCORE_VM_TIMEOUT=$tmo bash "$vmsrc/scripts/vmtest.sh" --kernel="$kernel" --fuzz
	fi
}

# ledger_done: the execs of the run's legs that passed.
ledger_done() {
	awk '$1 == "leg" && $NF == "pass" {
		for (i = 2; i < NF; i++) if ($i == "execs") n += $(i + 1) }
	     END {print n + 0}' "$ledger"
}

# ledger_commit: the commit leg 0 ran, which every leg runs; nothing
# before leg 0.
ledger_commit() {
	awk '$1 == "leg" && $2 == "0" {
		for (i = 3; i < NF; i++) if ($i == "commit") print $(i + 1) }' "$ledger"
}

# leg_source: set pin to the run's commit (ledger_commit, or this tree's
# HEAD for leg 0, which must be clean) and vmsrc to a tree of it; 1 when
# there is none to run.
leg_source() {
	local top=$here/..

	pin=$(ledger_commit)
	if [ -z "$pin" ]; then
		if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
			echo "fuzz: a run starts from a committed tree (every leg runs its commit): $top has changes" >&2
			return 1
		fi
		pin=$(git -C "$top" rev-parse --short HEAD)
		return 0
	fi
	if ! git -C "$top" rev-parse -q --verify "$pin^{commit}" > /dev/null; then
		echo "fuzz: the run's commit $pin is not in $top" >&2
		return 1
	fi
	if [ "$(git -C "$top" rev-parse HEAD)" != "$(git -C "$top" rev-parse "$pin^{commit}")" ]; then
		vmsrc=$MRCORE_CACHE/fuzz-src
		rm -rf "$vmsrc"
		if ! git clone -q "$top" "$vmsrc" || ! git -C "$vmsrc" checkout -q "$pin"; then
			echo "fuzz: cannot check out the run's commit $pin in $vmsrc" >&2
			return 1
		fi
		echo "fuzz: this tree is not at the run's commit $pin: the leg runs a clone of it ($vmsrc)"
	fi
}

# resume: one leg of the run in FUZZ_OUT (FUZZ_RESUME=1, above).
resume() {
	local head want legs did left leg lseed dir execs secs t0 start rc=0 verdict
	: "${FUZZ_OUT:?FUZZ_RESUME=1 needs FUZZ_OUT, the directory of the run}"
	mkdir -p "$FUZZ_OUT"
	FUZZ_OUT=$(cd "$FUZZ_OUT" && pwd)
	ledger=$FUZZ_OUT/ledger
	if [ ! -s "$ledger" ]; then
		: "${FUZZ_EXECS:?a new run needs FUZZ_EXECS}"
		: "${FUZZ_SEED:?a new run needs FUZZ_SEED}"
		echo "run execs $FUZZ_EXECS seed $FUZZ_SEED threads ${FUZZ_THREADS:-3}" \
			"families ${FUZZ_FAMILIES:-all} kernel $kernel" > "$ledger"
	fi
	head=$(head -1 "$ledger")
	want="run execs ${FUZZ_EXECS:-$(echo "$head" | awk '{print $3}')}"
	want="$want seed ${FUZZ_SEED:-$(echo "$head" | awk '{print $5}')}"
	want="$want threads ${FUZZ_THREADS:-$(echo "$head" | awk '{print $7}')}"
	want="$want families ${FUZZ_FAMILIES:-$(echo "$head" | awk '{print $9}')}"
	want="$want kernel $kernel"
	if [ "$head" != "$want" ]; then
		echo "fuzz: $ledger is another run: \"$head\", not \"$want\"" >&2
		return 1
	fi
	if grep -q ' result fail' "$ledger"; then
		echo "fuzz: the run in $FUZZ_OUT failed: $(grep ' result fail' "$ledger" | head -1)" >&2
		echo "fuzz: it is over; start a new one in another FUZZ_OUT" >&2
		return 1
	fi
	FUZZ_EXECS=$(echo "$head" | awk '{print $3}')
	FUZZ_SEED=$(echo "$head" | awk '{print $5}')
	FUZZ_THREADS=$(echo "$head" | awk '{print $7}')
	FUZZ_FAMILIES=$(echo "$head" | awk '$9 != "all" {print $9}')
	did=$(ledger_done)
	legs=$(grep -c '^leg ' "$ledger" || true)
	if [ "$did" -ge "$FUZZ_EXECS" ]; then
		echo "fuzz: the run in $FUZZ_OUT is complete: $did execs in $legs legs, every leg clean"
		return 0
	fi
	left=$((FUZZ_EXECS - did))
	leg_source || return 1
	leg=$legs
	lseed=$((FUZZ_SEED + leg))
	dir=$FUZZ_OUT/leg.$leg
	rm -rf "$dir"
	mkdir -p "$dir/corpus"
	[ -d "$FUZZ_OUT/corpus" ] && cp -r "$FUZZ_OUT/corpus/." "$dir/corpus/"
	echo "fuzz: the run in $FUZZ_OUT: $did of $FUZZ_EXECS execs done in $leg legs;" \
		"leg $leg: seed $lseed, at most $left execs${FUZZ_SECONDS:+ and $FUZZ_SECONDS s}"
	t0=$(date +%s)
	start=$(date -u +%Y-%m-%dT%H:%MZ)
	# A subshell: fuzz_boot exports the leg's settings.
	(FUZZ_OUT=$dir FUZZ_SEED=$lseed FUZZ_EXECS=$left FUZZ_CARRY=1 \
		fuzz_boot "$dir/tap") || rc=1
	secs=$(($(date +%s) - t0))
	# The count: the guest's summary file, else its line on the console
	# (where a kernel message may have cut into it).
	execs=$(sed -n 's/^fuzz: execs \([0-9]*\),.*/\1/p' "$dir/summary" 2>/dev/null || true)
	[ -n "$execs" ] ||
		execs=$(sed -n 's/^ok - fuzz vhca0: mrc_fuzz seed [0-9]*: execs \([0-9]*\),.*/\1/p' \
			"$dir/tap" | tail -1)
	if [ $rc != 0 ]; then
		verdict=fail
		# How far it got, for the record: the last progress line.
		[ -n "$execs" ] || execs=$(sed -n 's/.*progress [0-9]* s: execs \([0-9]*\),.*/\1/p' \
			"$dir/tap" | tail -1)
	elif [ -z "$execs" ]; then
		verdict=uncounted
	else
		verdict=pass
	fi
	echo "leg $leg seed $lseed commit $pin" \
		"start $start execs ${execs:-0} seconds $secs result $verdict" >> "$ledger"
	mkdir -p "$FUZZ_OUT/corpus"
	cp -r "$dir/corpus/." "$FUZZ_OUT/corpus/"
	did=$(ledger_done)
	case $verdict in
	pass)	echo "fuzz: leg $leg passed: $execs execs in $secs s; the run: $did of $FUZZ_EXECS execs in $((leg + 1)) legs, every leg clean" ;;
	uncounted)
		echo "fuzz: leg $leg passed its checks but its count was not found: it does not count (files in $dir)" ;;
	*)	echo "fuzz: leg $leg FAILED after ${execs:-0} execs: the run is over (files in $dir)" ;;
	esac
	if [ "$kernel" = debug ] && ls "$FUZZ_OUT"/leg.*/pcs > /dev/null 2>&1; then
		bash "$here/fuzz-cover.sh" "$FUZZ_OUT" "$MRCORE_CACHE/kbuild" || rc=1
	fi
	[ $verdict != fail ] && [ $rc = 0 ]
}

if [ "${FUZZ_RESUME:-}" = 1 ]; then
	resume
	exit
fi

[ -n "${FUZZ_EXECS:-}" ] || FUZZ_SECONDS=${FUZZ_SECONDS:-600}
FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}
FUZZ_OUT=${FUZZ_OUT:-$MRCORE_CACHE/fuzz/$FUZZ_SEED}
echo "fuzz: seed $FUZZ_SEED, ${FUZZ_SECONDS:+$FUZZ_SECONDS s}${FUZZ_EXECS:+ $FUZZ_EXECS execs}, files in $FUZZ_OUT"
rc=0
fuzz_boot || rc=1
if [ "$kernel" = debug ] && [ -s "$FUZZ_OUT/pcs" ]; then
	bash "$here/fuzz-cover.sh" "$FUZZ_OUT" "$MRCORE_CACHE/kbuild" || rc=1
fi
exit $rc
