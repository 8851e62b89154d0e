#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The targets of pamt_vt --scale (split memory, N = 8, 16 and 256, the
# seed-size boot) with one model parameter moved at a time, over the range
# the README gives for it, then with seeds 2 to 5 (other draws of the
# SEAMCALL times and of where guest memory lies); prints a Markdown table,
# a row per setting.
#
#   ./sensitivity.sh [-j JOBS] [OUTDIR]    (make sensitivity: -j 2)
#
# A cell says "met" when magazine met every target of that group, else
# which rows missed: "MISSED N = 8, ...".
set -e
cd "$(dirname "$0")"
jobs=1
if [ "$1" = -j ]; then
	jobs=$2
	shift 2
fi
out=${1:-build/sensitivity}
mkdir -p "$out"

# name|flags: the defaults first, then each parameter at both ends of its range
settings='defaults|
sockets 1|--sockets 1
sockets 4|--sockets 4
xfer-local 50 ns|--xfer-local 50
xfer-local 70 ns|--xfer-local 70
xfer-remote 120 ns|--xfer-remote 120
xfer-remote 200 ns|--xfer-remote 200
handoff 1 transfer|--handoff 1
handoff 3 transfers|--handoff 3
quantum 10 ns|--quantum 10
quantum 100 ns|--quantum 100
SEAMCALLs x0.5 (ADD 2 us, REMOVE 1 us)|--add 2000 --remove 1000
SEAMCALLs x2 (ADD 8 us, REMOVE 4 us)|--add 8000 --remove 4000
work between faults 500 ns|--work 500
work between faults 2 us|--work 2000
start jitter 100 us, work jitter +-50%|--start-jitter 100000 --work-jitter 1000
seed 2|--seed 2
seed 3|--seed 3
seed 4|--seed 4
seed 5|--seed 5'

i=0
while IFS='|' read -r name flags; do
	printf '%s\t%s\t%s\n' "$i" "$name" "$flags"
	i=$((i + 1))
done <<<"$settings" >"$out/settings.tsv"

run_one() {
	local i=$1 flags=$3 d=$4
	# shellcheck disable=SC2086
	./build/pamt_vt --scale --targets-only --out "$d/$i" $flags \
		>"$d/$i.txt" 2>/dev/null
}
export -f run_one

while IFS=$'\t' read -r i name flags; do
	printf '%s\0%s\0%s\0%s\0' "$i" "$name" "$flags" "$out"
done <"$out/settings.tsv" | xargs -0 -n 4 -P "$jobs" bash -c 'run_one "$@"' _

echo "| setting | cold-boot waiting <= 1/4 atomic's | max get <= 1.25x longest ADD | boot avg get 256 <= 1.5x 8 | churn slow <= 1/20, 1/50 of atomic's |"
echo "|---|---|---|---|---|"
while IFS=$'\t' read -r i name flags; do
	awk -v name="$name" -F'|' '
	function grp(w) {
		if (w ~ /waiting/) return 1
		if (w ~ /max get/) return 2
		if (w ~ /avg get/) return 3
		if (w ~ /churn/) return 4
		return 0
	}
	function add(l, x) { return l == "" ? x : l ", " x }
	/^\| / && NF >= 5 {
		g = grp($2)
		if (!g)
			next
		n[g]++
		what = $2
		sub(/^.*, /, "", what)
		sub(/^boot /, "", what)
		sub(/ +$/, "", what)
		if ($4 ~ /MISSED/) m[g] = add(m[g], what)
	}
	END {
		line = "| " name " |"
		for (g = 1; g <= 4; g++) {
			if (!n[g])
				cell = "no result"
			else if (m[g] == "")
				cell = "met"
			else
				cell = "MISSED " m[g]
			line = line " " cell " |"
		}
		print line
	}' "$out/$i.txt"
done <"$out/settings.tsv"
