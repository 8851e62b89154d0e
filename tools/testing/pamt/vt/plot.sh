#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Draw the scaling curves that pamt_vt --scale wrote to DIR: one PNG per
# metric with gnuplot (scale-METRIC.gp), or, without gnuplot, one SVG per
# metric and scenario drawn by awk from the same data (scale-SCEN.dat).
dir=${1:?usage: plot.sh DIR}
here=$(dirname "$0")
if "$here/ensure-gnuplot.sh"; then
	rc=0
	for gp in "$dir"/scale-*.gp; do
		png=${gp%.gp}.png
		if ! gnuplot "$gp" || [ ! -s "$png" ]; then
			echo "plot.sh: gnuplot failed on $gp" >&2
			rc=1
		fi
	done
	ls "$dir"/scale-*.png 2>/dev/null | sed 's/^/plot: /'
	exit $rc
fi
for dat in "$dir"/scale-*.dat; do
	scen=$(basename "$dat" .dat | sed 's/^scale-//')
	awk -v dir="$dir" -v scen="$scen" -f "$here/svgplot.awk" "$dat"
done
ls "$dir"/scale-*.svg 2>/dev/null | sed 's/^/plot: /'
