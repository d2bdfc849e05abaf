/*
 * threadtest_burn: the burn variant of threadtest.
 *
 * For each of N iterations the parent creates one thread; parent and child
 * each burn burn_us of CPU, timed with gettimeofday(), bump a shared counter
 * and spin until both are done; the parent joins.  Reported per run:
 *
 *   time: <wall us>  work: <sum of both threads' burn us>
 *   wait: <sum of both threads' spin us>  idx: work / wall
 *
 * idx 2.0 means perfect overlap on two CPUs; near 1.0 (or below, once
 * spinning eats the CPU) means the threads ran one after the other.
 *
 * Build: gcc -O2 -Wall -pthread -o threadtest_burn threadtest_burn.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long burn_us = 10000;
static int use_cpu_clock;
static int yield_in_spin;
static int finished;

struct account {
	long long work_us;
	long long wait_us;
};

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n iterations] [-b burn_us] [-c] [-y]\n"
		"  -n N  iterations (default 100)\n"
		"  -b U  microseconds each thread burns per iteration (default 10000)\n"
		"  -c    burn thread CPU time (CLOCK_THREAD_CPUTIME_ID) instead of\n"
		"        gettimeofday() wall time; shows how much the wall clock flatters\n"
		"  -y    call sched_yield() inside the spin loop\n",
		prog);
	exit(2);
}

static long long wall_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec * 1000000LL + tv.tv_usec;
}

static long long thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* Returns the burn as seen by the wall clock, which is what idx divides. */
static long long burn(void)
{
	long long start = wall_us();
	long long (*clk)(void) = use_cpu_clock ? thread_cpu_us : wall_us;
	long long cstart = clk();

	while (clk() - cstart < burn_us)
		;
	return wall_us() - start;
}

static long long finish_and_spin(void)
{
	long long start = wall_us();

	__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < 2) {
		if (yield_in_spin)
			sched_yield();
	}
	return wall_us() - start;
}

static void *child(void *arg)
{
	struct account *acc = arg;

	acc->work_us = burn();
	acc->wait_us = finish_and_spin();
	return NULL;
}

static void one_iteration(struct account *total)
{
	struct account mine, theirs;
	pthread_t tid;
	int err;

	__atomic_store_n(&finished, 0, __ATOMIC_SEQ_CST);
	err = pthread_create(&tid, NULL, child, &theirs);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		exit(1);
	}
	mine.work_us = burn();
	mine.wait_us = finish_and_spin();
	pthread_join(tid, NULL);
	total->work_us += mine.work_us + theirs.work_us;
	total->wait_us += mine.wait_us + theirs.wait_us;
}

int main(int argc, char **argv)
{
	struct account total = { 0, 0 };
	long iterations = 100, i;
	long long start, elapsed;
	int opt;

	while ((opt = getopt(argc, argv, "n:b:cyh")) != -1) {
		switch (opt) {
		case 'n': iterations = atol(optarg); break;
		case 'b': burn_us = atoll(optarg); break;
		case 'c': use_cpu_clock = 1; break;
		case 'y': yield_in_spin = 1; break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || iterations <= 0 || burn_us < 0)
		usage(argv[0]);

	start = wall_us();
	for (i = 0; i < iterations; i++)
		one_iteration(&total);
	elapsed = wall_us() - start;
	if (elapsed <= 0)
		elapsed = 1;
	printf("time: %lld (us)  work: %lld  wait: %lld  idx: %.2f\n",
	       elapsed, total.work_us, total.wait_us,
	       (double)total.work_us / (double)elapsed);
	return 0;
}
