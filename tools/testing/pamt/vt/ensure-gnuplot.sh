#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench draws its plots with gnuplot.  On a fresh machine it is not
# there (only .ci/run installs it): install it when we can (root with
# apt-get), else say so; plot.sh then draws SVG without it.
# PAMT_NO_GNUPLOT=1: behave as without it (to try the SVG fallback).
[ -n "$PAMT_NO_GNUPLOT" ] && exit 1
command -v gnuplot >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "gnuplot missing: apt-get install gnuplot-nox" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox \
		>/dev/null 2>&1 ||
	{ apt-get update -qq >/dev/null 2>&1 &&
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox \
		>/dev/null 2>&1; }
fi
command -v gnuplot >/dev/null 2>&1 && exit 0
echo "gnuplot not available (not root, or no apt-get): plots drawn as SVG" >&2
exit 1
