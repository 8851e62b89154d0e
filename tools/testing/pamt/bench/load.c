// SPDX-License-Identifier: GPL-2.0
/*
 * Is the machine busy?  pamt_bench times real threads on real CPUs: when
 * other work competes for them, its wall-clock figures measure the
 * competition, not the cache.  So it looks before and after each run:
 *
 * - the load average against the CPUs (what an operator would check);
 * - the runnable tasks other than this one, from /proc/stat's
 *   procs_running, sampled during the probe (the load average of a
 *   scenario that follows another one counts the previous one too, so it
 *   is shown, not used);
 * - a calibration loop: one thread per CPU spins for a fixed count of
 *   iterations, and the share of its wall time it spent on a CPU says
 *   how much of the machine it got.
 *
 * Counts (SEAMCALLs, locks, pages) do not depend on it; wall-clock
 * verdicts are not judged on a busy machine.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "report.h"

#define PROBE_ITERS	(20 * 1000 * 1000UL)

static double ts_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *spin_fn(void *arg)
{
	double *share = arg, w0 = ts_s(CLOCK_MONOTONIC);
	double c0 = ts_s(CLOCK_THREAD_CPUTIME_ID);
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < PROBE_ITERS; i++)
		x += i;
	*share = (ts_s(CLOCK_THREAD_CPUTIME_ID) - c0) /
		 (ts_s(CLOCK_MONOTONIC) - w0);
	return NULL;
}

static int procs_running(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	int n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "procs_running %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/**
 * load_busy() - the verdict from the figures of one probe
 * @p: what the probe saw
 *
 * Busy when the calibration threads got less than 85% of their wall time
 * on a CPU, or when other runnable tasks averaged half the CPUs or more.
 */
bool load_busy(const struct load_probe *p)
{
	return p->cpu_share < 0.85 || p->others >= 0.5 * p->ncpu;
}

void load_probe(struct load_probe *p)
{
	pthread_t th[BENCH_MAX_WORKERS];
	double share[BENCH_MAX_WORKERS];
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	FILE *f = fopen("/proc/loadavg", "r");
	unsigned int i, n, samples = 0;
	int r;

	memset(p, 0, sizeof(*p));
	p->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (f) {
		if (fscanf(f, "%lf", &p->loadavg) != 1)
			p->loadavg = 0;
		fclose(f);
	}
	/* Other runnable tasks: this thread is running while it reads. */
	for (i = 0; i < 10; i++) {
		r = procs_running();
		if (r > 0) {
			p->others += r - 1;
			samples++;
		}
		nanosleep(&ts, NULL);
	}
	if (samples)
		p->others /= samples;
	n = p->ncpu < BENCH_MAX_WORKERS ? p->ncpu : BENCH_MAX_WORKERS;
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, spin_fn, &share[i]);
	p->cpu_share = 1;
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (share[i] < p->cpu_share)
			p->cpu_share = share[i];
	}
	p->busy = load_busy(p);
}

void load_print(FILE *f, const char *when, const struct load_probe *p)
{
	fprintf(f, "   machine %s: load average %.2f on %u CPUs, %.1f other tasks runnable, calibration loop got %.0f%% of a CPU: %s\n",
		when, p->loadavg, p->ncpu, p->others, 100 * p->cpu_share,
		p->busy ? "BUSY" : "quiet");
}
