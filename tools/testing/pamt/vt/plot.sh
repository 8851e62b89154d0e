#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Draw what pamt_vt wrote to DIR: with gnuplot, one PNG per scaling metric
# (scale-METRIC.gp) and the replay's latency tails (replay.gp); without it,
# one SVG per scaling metric and scenario drawn by awk from the same data
# (scale-SCEN.dat), and no replay plot.
dir=${1:?usage: plot.sh DIR}
here=$(dirname "$0")
if "$here/ensure-gnuplot.sh"; then
	rc=0
	for gp in "$dir"/scale-*.gp "$dir"/replay.gp; do
		[ -e "$gp" ] || continue
		png=${gp%.gp}.png
		if ! gnuplot "$gp" || [ ! -s "$png" ]; then
			echo "plot.sh: gnuplot failed on $gp" >&2
			rc=1
		fi
	done
	ls "$dir"/scale-*.png "$dir"/replay.png 2>/dev/null | sed 's/^/plot: /'
	exit $rc
fi
for dat in "$dir"/scale-*.dat; do
	[ -e "$dat" ] || continue
	scen=$(basename "$dat" .dat | sed 's/^scale-//')
	awk -v dir="$dir" -v scen="$scen" -v styles="$here/../bench/styles.def" \
		-f "$here/svgplot.awk" "$dat"
done
ls "$dir"/scale-*.svg 2>/dev/null | sed 's/^/plot: /'
