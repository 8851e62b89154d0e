#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tally.sh SECONDS FILE...: the closing line of make bench, adding up the
# "targets: N met, M missed" line each scenario's output ends with (and
# its "K wall-clock targets not judged"); an output without one counts as
# a miss, so a scenario that died is not silently left out.
secs=$1
shift
awk -v secs="$secs" '
FNR == 1 { files++; seen[FILENAME] = 0 }
/^targets: [0-9]+ met, [0-9]+ missed/ {
	met += $2; missed += $4; seen[FILENAME] = 1
	if (match($0, /\(([0-9]+) wall-clock/)) {
		s = substr($0, RSTART + 1); split(s, a, " "); nj += a[1]
	}
}
END {
	for (f in seen) if (!seen[f]) { missed++; bad = bad " " f }
	printf "make bench: targets: %d met, %d missed", met, missed
	if (nj) printf " (%d wall-clock targets not judged: machine busy)", nj
	printf " over %d outputs, %d s wall\n", files, secs
	if (bad != "") printf "  no tally in:%s\n", bad
}' "$@"
