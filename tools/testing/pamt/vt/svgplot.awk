# SPDX-License-Identifier: GPL-2.0
# One SVG line chart per metric of a scale-SCEN.dat (log2 x, log10 y).
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
	# one colour per strategy, by name: bench/plot.h's strat_color()
	c["lock"] = "#7f7f7f"; c["atomic"] = "#d62728"
	c["lean"] = "#ff7f0e"; c["magazine"] = "#1f77b4"; c["magazine+arena"] = "#2ca02c"
	for (k = 0; k < ns; k++)
		col[k + 1] = (strat[2 + k] in c) ? c[strat[2 + k]] : "#9467bd"
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
		print "<svg xmlns='http://www.w3.org/2000/svg' width='520' height='360'>" > f
		print "<rect width='520' height='360' fill='white'/>" > f
		printf "<text x='260' y='20' text-anchor='middle' font-size='14'>%s, %s (MODELLED, log-log)</text>\n", m, scen > f
		for (j = 1; j <= n; j++)
			printf "<text x='%.1f' y='345' text-anchor='middle' font-size='11'>%s</text>\n", 60 + (log(x[j]) / log(2) - xl) / (xh - xl) * 420, x[j] > f
		printf "<text x='5' y='45' font-size='11'>%.3g</text><text x='5' y='320' font-size='11'>%.3g</text>\n", 10 ^ hi, 10 ^ lo > f
		for (k = 0; k < ns; k++) {
			pts = ""
			for (j = 1; j <= n; j++) if (v[j, i + k] > 0)
				pts = pts sprintf("%.1f,%.1f ", 60 + (log(x[j]) / log(2) - xl) / (xh - xl) * 420, 320 - (log(v[j, i + k]) / log(10) - lo) / (hi - lo) * 280)
			printf "<polyline fill='none' stroke='%s' stroke-width='2' points='%s'/>\n", col[k + 1], pts > f
			printf "<text x='440' y='%d' fill='%s' font-size='12'>%s</text>\n", 60 + 16 * k, col[k + 1], strat[i + k] > f
		}
		print "</svg>" > f
		close(f)
	}
}
