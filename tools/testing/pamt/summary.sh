#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Add up the last "N passed, N failed" line of each log given (a glob is
# expanded here); exit 1 on any failure or if nothing passed.
for f in $1; do
	grep -E '^[0-9]+ passed, [0-9]+ failed$' "$f" | tail -n 1
done | awk '{ p += $1; f += $3 }
	END { printf "%d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }'
