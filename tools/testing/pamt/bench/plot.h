/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every picture of pamt_bench and pamt_vt shares: one style per
 * strategy (styles.def), and the latency tail as 1 - CDF.
 */
#ifndef _PAMT_BENCH_PLOT_H
#define _PAMT_BENCH_PLOT_H

#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include "lat.h"

struct plot_style {
	const char *name, *color;
	int dt, pt, lw;
};

/* By name, so that a strategy keeps its style when others come or go. */
static inline const struct plot_style *strat_style(const char *name)
{
	static const struct plot_style map[] = {
#define PAMT_STYLE(n, c, d, p, w) { n, c, d, p, w },
#include "styles.def"
#undef PAMT_STYLE
	};
	static const struct plot_style other = { "", "#9467bd", 5, 9, 2 };
	unsigned int i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(name, map[i].name))
			return &map[i];
	return &other;
}

static inline const char *strat_color(const char *name)
{
	return strat_style(name)->color;
}

/*
 * Curves are drawn in two passes, the wide ones first, so that a narrow
 * dashed curve on top of a wide one leaves both visible: @pass 0 or 1.
 */
static inline bool strat_in_pass(const char *name, int pass)
{
	return (strat_style(name)->lw > 2) == !pass;
}

/* Legends below each panel, off the curves. */
#define PLOT_KEY	"set key below horizontal\n"

/*
 * The gnuplot line style of @name, and its point type if @points, written
 * to @b: colour last,
 * then the title, as ../vt/plot-colors.sh reads them.
 */
static inline const char *strat_gp(char *b, size_t n, const char *name,
				   bool points)
{
	const struct plot_style *st = strat_style(name);
	char pt[16] = "";

	if (points)
		snprintf(pt, sizeof(pt), " pt %d", st->pt);
	snprintf(b, n, "lw %d dt %d%s lc rgb '%s'", st->lw, st->dt, pt,
		 st->color);
	return b;
}

/*
 * One gnuplot data block: x in us, y the fraction of calls slower than x,
 * from the fastest call (y = 1) to the slowest (the last step ends at the
 * maximum).  Drawn "with steps" on log-log axes, whose x axis starts at
 * @floor_ns, the timer's resolution: a call it timed below that (0 ns)
 * is drawn at it.
 */
static inline double plot_us(double ns, double floor_ns)
{
	return (ns > floor_ns ? ns : floor_ns) / 1e3;
}

static inline void plot_write_tail(FILE *f, const struct lat *l,
				   double floor_ns)
{
	uint64_t cum = 0;
	double y = 1;
	unsigned int b;

	if (!l->count) {
		fprintf(f, "\n\n");
		return;
	}
	fprintf(f, "%.4f 1\n", plot_us(l->min, floor_ns));
	for (b = 0; b < LAT_NB; b++) {
		if (!l->hist[b])
			continue;
		cum += l->hist[b];
		if (cum == l->count)
			break;
		y = 1 - (double)cum / l->count;
		fprintf(f, "%.4f %.10g\n",
			plot_us(lat_bucket_hi(b) + 1, floor_ns), y);
	}
	fprintf(f, "%.4f %.10g\n\n\n", plot_us(l->max, floor_ns), y);
}

#endif
