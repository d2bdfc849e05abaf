/*
 * yieldloop: N threads loop on sched_yield() for a fixed duration.
 *
 * Prints how many yields were made and how many context switches the
 * process actually went through (getrusage), because a yield with nothing
 * else runnable on its CPU may never enter the scheduler at all: with fewer
 * tasks than CPUs this benchmark can measure nothing but the syscall.
 *
 * Output (one line):
 *   tasks: T  cpus: C  seconds: S  yields: Y  yields/s: R
 *   context_switches: X  voluntary: V  involuntary: I  switches/s: Z
 *
 * Build: gcc -O2 -Wall -pthread -o yieldloop yieldloop.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int stop;

struct task {
	pthread_t tid;
	unsigned long long yields;
};

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t tasks] [-d seconds]\n"
		"  -t N  yielding threads (default: number of online CPUs + 1)\n"
		"  -d S  duration in seconds, fractions allowed (default 5)\n",
		prog);
	exit(2);
}

static void *yielder(void *arg)
{
	struct task *t = arg;
	unsigned long long n = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		sched_yield();
		n++;
	}
	t->yields = n;
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts))
		;
}

static void start_tasks(struct task *tasks, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = pthread_create(&tasks[i].tid, NULL, yielder, &tasks[i]);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
}

static unsigned long long join_tasks(struct task *tasks, int n)
{
	unsigned long long total = 0;
	int i;

	for (i = 0; i < n; i++) {
		pthread_join(tasks[i].tid, NULL);
		total += tasks[i].yields;
	}
	return total;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int ntasks = (int)cpus + 1, opt;
	double duration = 5.0, start, elapsed;
	struct rusage before, after;
	unsigned long long yields;
	long vol, invol;
	struct task *tasks;

	while ((opt = getopt(argc, argv, "t:d:h")) != -1) {
		switch (opt) {
		case 't': ntasks = atoi(optarg); break;
		case 'd': duration = atof(optarg); break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || ntasks <= 0 || duration <= 0)
		usage(argv[0]);
	if (ntasks <= cpus)
		fprintf(stderr, "yieldloop: warning: %d tasks on %ld CPUs: a yield "
			"with nothing else runnable may not switch at all\n",
			ntasks, cpus);

	tasks = calloc(ntasks, sizeof(*tasks));
	if (!tasks)
		return 1;
	getrusage(RUSAGE_SELF, &before);
	start = now_s();
	start_tasks(tasks, ntasks);
	sleep_s(duration);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	yields = join_tasks(tasks, ntasks);
	elapsed = now_s() - start;
	getrusage(RUSAGE_SELF, &after);

	/* RUSAGE_SELF sums all threads of the process on Linux. */
	vol = after.ru_nvcsw - before.ru_nvcsw;
	invol = after.ru_nivcsw - before.ru_nivcsw;
	printf("tasks: %d  cpus: %ld  seconds: %.3f  yields: %llu  yields/s: %.0f  "
	       "context_switches: %ld  voluntary: %ld  involuntary: %ld  "
	       "switches/s: %.0f\n",
	       ntasks, cpus, elapsed, yields, yields / elapsed,
	       vol + invol, vol, invol, (vol + invol) / elapsed);
	free(tasks);
	return 0;
}
