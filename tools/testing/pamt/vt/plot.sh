#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Draw the scaling curves that pamt_vt --scale wrote to DIR: one PNG per
# metric with gnuplot (scale-METRIC.gp), or, without gnuplot, one SVG per
# metric and scenario drawn by awk from the same data (scale-SCEN.dat).
dir=${1:?usage: plot.sh DIR}
here=$(dirname "$0")
if "$here/ensure-gnuplot.sh"; then
	for gp in "$dir"/scale-*.gp; do
		gnuplot "$gp" || echo "plot.sh: gnuplot failed on $gp" >&2
	done
	ls "$dir"/scale-*.png 2>/dev/null | sed 's/^/plot: /'
	exit 0
fi
for dat in "$dir"/scale-*.dat; do
	scen=$(basename "$dat" .dat | sed 's/^scale-//')
	awk -v dir="$dir" -v scen="$scen" -f "$here/svgplot.awk" "$dat"
done
ls "$dir"/scale-*.svg 2>/dev/null | sed 's/^/plot: /'
