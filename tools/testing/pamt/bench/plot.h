/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every picture of pamt_bench and pamt_vt shares: one colour per
 * strategy, and the latency tail as 1 - CDF.  vt/svgplot.awk repeats the
 * colours for the plots it draws without gnuplot.
 */
#ifndef _PAMT_BENCH_PLOT_H
#define _PAMT_BENCH_PLOT_H

#include <stdio.h>
#include <string.h>
#include "lat.h"

/* By name, so that a strategy keeps its colour when others come or go. */
static inline const char *strat_color(const char *name)
{
	static const char * const map[][2] = {
		{ "lock", "#7f7f7f" },
		{ "atomic", "#d62728" },
		{ "lean", "#ff7f0e" },
		{ "magazine", "#1f77b4" },
		{ "magazine+arena", "#2ca02c" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(name, map[i][0]))
			return map[i][1];
	return "#9467bd";
}

/*
 * One gnuplot data block: x in us, y the fraction of calls slower than x,
 * from the fastest call (y = 1) to the slowest (the last step ends at the
 * maximum).  Drawn "with steps" on log-log axes.
 */
static inline void plot_write_tail(FILE *f, const struct lat *l)
{
	uint64_t cum = 0;
	double y = 1;
	unsigned int b;

	if (!l->count) {
		fprintf(f, "\n\n");
		return;
	}
	/* x > 0 for the log axis: the clock may read 0 ns */
	fprintf(f, "%.4f 1\n", (l->min ? l->min : 1) / 1e3);
	for (b = 0; b < LAT_NB; b++) {
		if (!l->hist[b])
			continue;
		cum += l->hist[b];
		if (cum == l->count)
			break;
		y = 1 - (double)cum / l->count;
		fprintf(f, "%.4f %.10g\n", (lat_bucket_hi(b) + 1) / 1e3, y);
	}
	fprintf(f, "%.4f %.10g\n\n\n", l->max / 1e3, y);
}

#endif
