#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# plot-colors.sh DIR [gp|svg]: "strategy colour" for every curve that the
# plots in DIR draw (gnuplot scripts, SVG, or both), one line per distinct
# pair: one line per strategy when each has one colour in every picture.
dir=${1:?usage: plot-colors.sh DIR [gp|svg]}
{
	[ "$2" = svg ] || cat "$dir"/*.gp 2>/dev/null |
		grep -o "lc rgb '#[0-9a-f]*' title '[^']*'" |
		sed "s/lc rgb '\(#[0-9a-f]*\)' title '\([^']*\)'/\2 \1/"
	[ "$2" = gp ] || cat "$dir"/*.svg 2>/dev/null |
		grep -o "fill='#[0-9a-f]*' font-size='12'>[^<]*<" |
		sed "s/fill='\(#[0-9a-f]*\)' font-size='12'>\([^<]*\)</\2 \1/"
} | grep -v '^seed ' | sort -u
