# SPDX-License-Identifier: GPL-2.0
# One SVG line chart per metric of a scale-SCEN.dat (log2 x, log10 y),
# each strategy in its style of ../bench/styles.def (-v styles=FILE).
BEGIN {
	while ((getline line < styles) > 0) {
		if (line !~ /^PAMT_STYLE\(/)
			continue
		gsub(/^PAMT_STYLE\(|\)$|"|[ \t]/, "", line)
		split(line, a, ",")
		c[a[1]] = a[2]; dash[a[1]] = a[3]; width[a[1]] = a[5]
	}
	close(styles)
}
NR == 1 {
	# "# N metric:strategy ...": data column i is header field i + 1
	for (i = 3; i <= NF; i++) {
		split($i, a, ":"); met[i - 1] = a[1]; strat[i - 1] = a[2]
	}
	ncol = NF - 1
	# strategies per metric: the columns that share the first metric
	for (ns = 0; met[2 + ns] == met[2]; ns++)
		;
	next
}
{ n++; x[n] = $1; for (i = 2; i <= NF; i++) v[n, i] = $i }
END {
	for (k = 0; k < ns; k++) {
		sn = strat[2 + k]
		col[k + 1] = (sn in c) ? c[sn] : "#9467bd"
		# gnuplot's dash type 1 is solid; others dashed in SVG
		da[k + 1] = (sn in dash) && dash[sn] != 1 ? " stroke-dasharray='" 2 * dash[sn] ",4'" : ""
		sw[k + 1] = (sn in width) ? width[sn] : 2
	}
	for (i = 2; i <= ncol; i += ns) {
		m = met[i]; f = dir "/scale-" m "-" scen ".svg"
		lo = 1e300; hi = -1e300
		for (j = 1; j <= n; j++) for (k = 0; k < ns; k++)
			if (v[j, i + k] > 0) {
				l = log(v[j, i + k]) / log(10)
				if (l < lo) lo = l; if (l > hi) hi = l
			}
		if (hi < lo) { lo = 0; hi = 1 }
		if (hi - lo < 1) hi = lo + 1
		xl = log(x[1]) / log(2); xh = log(x[n]) / log(2)
		if (xh == xl) xh = xl + 1
		print "<svg xmlns='http://www.w3.org/2000/svg' width='660' height='360'>" > f
		print "<rect width='660' height='360' fill='white'/>" > f
		printf "<text x='260' y='20' text-anchor='middle' font-size='14'>%s, %s (MODELLED, log-log)</text>\n", m, scen > f
		for (j = 1; j <= n; j++)
			printf "<text x='%.1f' y='345' text-anchor='middle' font-size='11'>%s</text>\n", 60 + (log(x[j]) / log(2) - xl) / (xh - xl) * 420, x[j] > f
		printf "<text x='5' y='45' font-size='11'>%.3g</text><text x='5' y='320' font-size='11'>%.3g</text>\n", 10 ^ hi, 10 ^ lo > f
		for (k = 0; k < ns; k++) {
			pts = ""
			for (j = 1; j <= n; j++) if (v[j, i + k] > 0)
				pts = pts sprintf("%.1f,%.1f ", 60 + (log(x[j]) / log(2) - xl) / (xh - xl) * 420, 320 - (log(v[j, i + k]) / log(10) - lo) / (hi - lo) * 280)
			printf "<polyline fill='none' stroke='%s' stroke-width='%s'%s points='%s'/>\n", col[k + 1], sw[k + 1], da[k + 1], pts > f
			# the legend, right of the plot area (x 60..480)
			printf "<line x1='500' x2='530' y1='%d' y2='%d' stroke='%s' stroke-width='%s'%s/>\n", 56 + 16 * k, 56 + 16 * k, col[k + 1], sw[k + 1], da[k + 1] > f
			printf "<text x='536' y='%d' fill='%s' font-size='12'>%s</text>\n", 60 + 16 * k, col[k + 1], strat[i + k] > f
		}
		print "</svg>" > f
		close(f)
	}
}
