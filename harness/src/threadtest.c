/*
 * threadtest: thread create/join microbenchmark.
 *
 * For each of N iterations the parent creates one thread; parent and child
 * each run a counting loop of L iterations, atomically bump a shared counter,
 * then spin until the counter shows both have finished; the parent joins.
 * On two CPUs the ideal is the two loops overlapping.  What really happens
 * depends on where the scheduler puts the new thread and when.
 *
 * Prints one line: "time <ms> ms".
 *
 * Build: gcc -O2 -Wall -pthread -o threadtest threadtest.c
 *        (also meaningful at -O0: the loop counter then lives in memory)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long loops = 10000;
static int yield_in_spin;
static int pin;
static int finished;

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n iterations] [-l loops] [-y] [-s] [-a]\n"
		"  -n N  iterations (default 500)\n"
		"  -l L  counting loop length per thread (default 10000; k/M/G suffixes)\n"
		"  -y    call sched_yield() inside the spin loop\n"
		"  -s    give the child a head start: parent usleep(1) after create\n"
		"  -a    pin the child to CPU 1 and the parent to CPU 0\n",
		prog);
	exit(2);
}

/* Accept "40M" / "10k": that is how loop sizes are quoted in the threads. */
static unsigned long parse_count(const char *s, const char *prog)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': v *= 1000UL; end++; break;
	case 'm': case 'M': v *= 1000000UL; end++; break;
	case 'g': case 'G': v *= 1000000000UL; end++; break;
	}
	if (end == s || *end != '\0')
		usage(prog);
	return v;
}

static void count_loop(void)
{
	unsigned long i;

	/*
	 * The empty asm makes the compiler keep the loop at -O2 (otherwise it
	 * is deleted) while still letting the counter live in a register.
	 */
	for (i = 0; i < loops; i++)
		__asm__ __volatile__("" : "+r"(i));
}

static void finish_and_spin(void)
{
	__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < 2) {
		if (yield_in_spin)
			sched_yield();
	}
}

static void *child(void *arg)
{
	(void)arg;
	count_loop();
	finish_and_spin();
	return NULL;
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity (need at least 2 CPUs for -a)");
		exit(1);
	}
}

static void make_attr(pthread_attr_t *attr)
{
	cpu_set_t set;

	pthread_attr_init(attr);
	if (!pin)
		return;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	pthread_attr_setaffinity_np(attr, sizeof(set), &set);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void one_iteration(pthread_attr_t *attr, int head_start)
{
	pthread_t tid;
	int err;

	__atomic_store_n(&finished, 0, __ATOMIC_SEQ_CST);
	err = pthread_create(&tid, attr, child, NULL);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		exit(1);
	}
	if (head_start)
		usleep(1);
	count_loop();
	finish_and_spin();
	pthread_join(tid, NULL);
}

int main(int argc, char **argv)
{
	long iterations = 500, i;
	int head_start = 0, opt;
	pthread_attr_t attr;
	double start;

	while ((opt = getopt(argc, argv, "n:l:ysah")) != -1) {
		switch (opt) {
		case 'n': iterations = (long)parse_count(optarg, argv[0]); break;
		case 'l': loops = parse_count(optarg, argv[0]); break;
		case 'y': yield_in_spin = 1; break;
		case 's': head_start = 1; break;
		case 'a': pin = 1; break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	if (pin)
		pin_self(0);
	make_attr(&attr);

	start = now_ms();
	for (i = 0; i < iterations; i++)
		one_iteration(&attr, head_start);
	printf("time %.0f ms\n", now_ms() - start);
	pthread_attr_destroy(&attr);
	return 0;
}
