/* SPDX-License-Identifier: GPL-2.0 */
/* Latency accounting: exact sums and extremes plus a log-linear histogram. */
#ifndef _PAMT_BENCH_LAT_H
#define _PAMT_BENCH_LAT_H

#include <stdint.h>

#define LAT_SUB		16	/* buckets per octave */
#define LAT_NB		640	/* up to ~2^39 ns */

/**
 * struct lat - one operation's latencies
 * @count: operations
 * @total: sum of their latencies, ns
 * @min: smallest, ns
 * @max: largest, ns
 * @slow_count: operations beyond the fast path (a 0<->1 refcount step)
 * @slow_ns: their summed latency
 * @hist: log-linear histogram, 16 buckets per power of two
 */
struct lat {
	uint64_t count, total, min, max, slow_count, slow_ns;
	uint64_t hist[LAT_NB];
};

static inline unsigned int lat_bucket(uint64_t v)
{
	unsigned int msb, b;

	if (v < LAT_SUB)
		return v;
	msb = 63 - __builtin_clzll(v);
	b = LAT_SUB + (msb - 4) * LAT_SUB + ((v >> (msb - 4)) & (LAT_SUB - 1));
	return b < LAT_NB ? b : LAT_NB - 1;
}

/* The largest value that falls in bucket @b. */
static inline uint64_t lat_bucket_hi(unsigned int b)
{
	unsigned int msb, sub;

	if (b < LAT_SUB)
		return b;
	msb = (b - LAT_SUB) / LAT_SUB + 4;
	sub = (b - LAT_SUB) % LAT_SUB;
	return ((uint64_t)(LAT_SUB + sub + 1) << (msb - 4)) - 1;
}

static inline void lat_add(struct lat *l, uint64_t ns, int slow)
{
	if (!l->count || ns < l->min)
		l->min = ns;
	if (ns > l->max)
		l->max = ns;
	l->count++;
	l->total += ns;
	if (slow) {
		l->slow_count++;
		l->slow_ns += ns;
	}
	l->hist[lat_bucket(ns)]++;
}

static inline void lat_merge(struct lat *d, const struct lat *s)
{
	unsigned int i;

	if (!s->count)
		return;
	if (!d->count || s->min < d->min)
		d->min = s->min;
	if (s->max > d->max)
		d->max = s->max;
	d->count += s->count;
	d->total += s->total;
	d->slow_count += s->slow_count;
	d->slow_ns += s->slow_ns;
	for (i = 0; i < LAT_NB; i++)
		d->hist[i] += s->hist[i];
}

/* The @q quantile (0..1), as the upper edge of its bucket, capped at max. */
static inline uint64_t lat_quantile(const struct lat *l, double q)
{
	uint64_t want, cum = 0, hi;
	unsigned int i;

	if (!l->count)
		return 0;
	want = (uint64_t)(q * (double)l->count);
	if (want < 1)
		want = 1;
	for (i = 0; i < LAT_NB; i++) {
		cum += l->hist[i];
		if (cum >= want) {
			hi = lat_bucket_hi(i);
			return hi < l->max ? hi : l->max;
		}
	}
	return l->max;
}

static inline double lat_avg(const struct lat *l)
{
	return l->count ? (double)l->total / (double)l->count : 0;
}

#endif /* _PAMT_BENCH_LAT_H */
