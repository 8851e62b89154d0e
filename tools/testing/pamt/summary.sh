#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Add up every "N passed, N failed" line of a log; exit 1 on any failure.
awk '/^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3 }
     END { printf "%d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' "$1"
