/*
 * rqfill: cost of a trip through the scheduler versus runqueue length.
 *
 * Forks busy-looping processes onto one CPU, a few more for each step, and
 * at each step times sched_yield() calls made by this process on that same
 * CPU.  The loopers run at a low priority (nice 19 by default) so that they
 * sit in the runqueue, making the scheduler's pick more expensive where
 * that cost depends on the number of runnable tasks (2.4's goodness() scan
 * is linear, O(1) is flat, CFS grows with log n), without taking the CPU
 * away for whole time slices at every yield.  A scheduler with a hard yield
 * (O(1) moving the yielder to the expired array) will still hand the CPU
 * over, and that shows up as huge numbers: that is a finding, not a bug.
 *
 * Prints a table:
 *   runqueue length  microseconds
 *   1                0.412
 * where the length counts the loopers plus this process and the value is
 * the median of the timed calls.
 *
 * Build: gcc -O2 -Wall -pthread -o rqfill rqfill.c
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#define MAX_LOOPERS 4096

static pid_t loopers[MAX_LOOPERS];
static int nloopers;
static int cpu;
static int looper_nice = 19;
static int use_tsc;
static double tsc_per_us;

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-m max] [-L list] [-i samples] [-c cpu] [-N nice] [-t]\n"
		"  -m M     largest number of loopers; steps 0,1,2,4,...,M (default 32)\n"
		"  -L list  explicit comma-separated looper counts, e.g. 0,1,2,8,64\n"
		"  -i N     timed sched_yield() calls per step (default 20000)\n"
		"  -c CPU   CPU to fill and measure on (default 0)\n"
		"  -N NICE  nice value of the loopers (default 19)\n"
		"  -t       time with the CPU timestamp counter (x86) instead of\n"
		"           clock_gettime(CLOCK_MONOTONIC)\n",
		prog);
	exit(2);
}

static void pin_to(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void kill_loopers(void)
{
	int i;

	for (i = 0; i < nloopers; i++)
		kill(loopers[i], SIGKILL);
	for (i = 0; i < nloopers; i++)
		waitpid(loopers[i], NULL, 0);
	nloopers = 0;
}

static void on_signal(int sig)
{
	kill_loopers();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void looper(void)
{
	volatile unsigned long spin = 0;

	/* Never outlive the parent, however it dies. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setpriority(PRIO_PROCESS, 0, looper_nice))
		perror("setpriority");
	for (;;)
		spin++;
}

static void grow_to(int n)
{
	pid_t pid;

	while (nloopers < n) {
		pid = fork();
		if (pid < 0) {
			perror("fork");
			kill_loopers();
			exit(1);
		}
		if (pid == 0)
			looper();
		loopers[nloopers++] = pid;
	}
}

static double clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

#ifdef HAVE_TSC
static double tsc_us(void)
{
	return (double)__rdtsc() / tsc_per_us;
}

/* Cycles per microsecond, against the monotonic clock over ~50 ms. */
static void calibrate_tsc(void)
{
	double t0 = clock_us(), t1;
	unsigned long long c0 = __rdtsc(), c1;

	do
		t1 = clock_us();
	while (t1 - t0 < 50000.0);
	c1 = __rdtsc();
	tsc_per_us = (double)(c1 - c0) / (t1 - t0);
}
#else
static double tsc_us(void)
{
	return clock_us();
}

static void calibrate_tsc(void)
{
	fprintf(stderr, "rqfill: no timestamp counter here, using clock_gettime\n");
	use_tsc = 0;
}
#endif

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_yield_us(double *samples, int n)
{
	double (*now)(void) = use_tsc ? tsc_us : clock_us;
	double t;
	int i;

	for (i = 0; i < n; i++) {
		t = now();
		sched_yield();
		samples[i] = now() - t;
	}
	qsort(samples, n, sizeof(*samples), cmp_double);
	return samples[n / 2];
}

static int parse_steps(const char *list, int max, int *steps)
{
	int n = 0, v;
	char *copy, *tok, *save;

	if (!list) {
		steps[n++] = 0;
		for (v = 1; v <= max && n < 64; v *= 2)
			steps[n++] = v;
		return n;
	}
	copy = strdup(list);
	for (tok = strtok_r(copy, ",", &save); tok && n < 64;
	     tok = strtok_r(NULL, ",", &save)) {
		v = atoi(tok);
		if (v < 0 || v > MAX_LOOPERS || (n && v < steps[n - 1])) {
			fprintf(stderr, "rqfill: counts must be increasing, 0..%d\n",
				MAX_LOOPERS);
			exit(2);
		}
		steps[n++] = v;
	}
	free(copy);
	return n;
}

int main(int argc, char **argv)
{
	int max = 32, samples = 20000, steps[64], nsteps, i, opt;
	const char *list = NULL;
	struct timespec settle = { 0, 20 * 1000 * 1000 };
	double *buf;

	while ((opt = getopt(argc, argv, "m:L:i:c:N:th")) != -1) {
		switch (opt) {
		case 'm': max = atoi(optarg); break;
		case 'L': list = optarg; break;
		case 'i': samples = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'N': looper_nice = atoi(optarg); break;
		case 't': use_tsc = 1; break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || max < 0 || max > MAX_LOOPERS || samples <= 0)
		usage(argv[0]);
	nsteps = parse_steps(list, max, steps);
	buf = malloc(samples * sizeof(*buf));
	if (!buf)
		return 1;

	/* Children inherit the affinity, so all of them share one runqueue. */
	pin_to(cpu);
	if (use_tsc)
		calibrate_tsc();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	printf("runqueue length  microseconds\n");
	for (i = 0; i < nsteps; i++) {
		grow_to(steps[i]);
		nanosleep(&settle, NULL);
		printf("%-16d %.3f\n", steps[i] + 1, median_yield_us(buf, samples));
		fflush(stdout);
	}
	kill_loopers();
	free(buf);
	return 0;
}
