/*
 * calibrate: micro-measurements of this machine for the simulator's machine model.
 *
 * Run by `schedbench.py calibrate`; every figure comes from a tiny test below,
 * never from a benchmark result.  Each test runs R times (default 5); one line
 * per figure on stdout:
 *
 *   <name> <median> <min> <max> <runs>       e.g. "loop_ns 0.3124 0.3101 0.3190 7"
 *   <name> none <reason...>                  when it cannot be measured here
 *
 * Times are in microseconds (names ending _us) or nanoseconds (_ns).
 *
 *   loop_ns              one iteration of threadtest's counting loop (same code)
 *   loop_memory_ns       the same loop with its counter in memory, as threadtest-O0
 *                        (built with -O0) runs it
 *   thread_create_join_us  pthread_create + pthread_join of an empty thread, one CPU
 *   wakeup_remote_us     one-way pipe ping-pong between threads pinned to CPUs A and B
 *   wakeup_remote_busy_us  the same while a SCHED_IDLE spinner keeps CPU B out of idle
 *                        (the waker pays the IPI but no idle-state exit)
 *   wakeup_idle_us       write-to-read latency when CPU B has idled 2 ms (deep idle;
 *                        a halted vCPU in a guest)
 *   wakeup_local_us      one-way pipe ping-pong, both threads on CPU A
 *   context_switch_us    two threads on CPU A calling sched_yield(): wall time per
 *                        switch the kernel counted (getrusage, RUSAGE_THREAD)
 *   loop_alone_ns / loop_busy_ns  the counting loop on CPU A with the CPUs of -c idle,
 *                        then with each of them running the same loop
 *
 * With -p FROM:TO:STEP (microseconds; asked for in a guest only) also the idle-span sweep
 * for the host's halt-polling window, one line per span with every round's median:
 *
 *   halt_poll_sweep_us <span_us> <round 1> <round 2> ... <round R>
 *
 * each the median write-to-read latency (us) of a thread on CPU B woken when B has been
 * idle <span_us> since its thread last ran (the waker waits for the wakee's receive time,
 * then spins the span: the span is B's idle time, not the time between two writes).
 *
 * Options: -a CPU -b CPU (default: the first two CPUs we may use), -c LIST (comma
 * separated CPUs to load for the contention test; default every other allowed CPU),
 * -r R repeats, -s SCALE (multiplies every count; 0.1 for a quick look).
 * Progress goes to stderr.
 *
 * Build: gcc -O2 -Wall -pthread -o calibrate calibrate.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPEATS 51
#define MAX_LOADERS 1024
#define IDLE_GAP_NS 2000000LL
#define MAX_SPANS 64

static int cpu_a = -1, cpu_b = -1;
static int loaders[MAX_LOADERS], nloaders = -1;
static int repeats = 5;
static double scale = 1.0;
static long sweep_from, sweep_to, sweep_step; /* -p, us; sweep_step 0: no sweep */

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-a CPU] [-b CPU] [-c CPU,CPU,...] [-r repeats] [-s scale]"
		" [-p FROM:TO:STEP]\n", prog);
	exit(2);
}

static void die(const char *what)
{
	fprintf(stderr, "calibrate: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long scaled(long n)
{
	long v = (long)(n * scale);

	return v < 1 ? 1 : v;
}

/* The same loop as threadtest.c's count_loop(), kept out of line so it compiles alike. */
static __attribute__((noinline)) void count_loop(unsigned long loops)
{
	unsigned long i;

	for (i = 0; i < loops; i++)
		__asm__ __volatile__("" : "+r"(i));
}

/* What -O0 makes of count_loop(): the counter is loaded and stored every iteration. */
static __attribute__((noinline)) void count_loop_memory(unsigned long loops)
{
	volatile unsigned long i;

	for (i = 0; i < loops; i++)
		;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void spawn(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(tid, NULL, fn, arg);

	if (err) {
		errno = err;
		die("pthread_create");
	}
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Prints "name median min max runs" and returns the median. */
static double report(const char *name, double *values, int n)
{
	double median;

	qsort(values, n, sizeof(*values), cmp_double);
	median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
	printf("%s %.6g %.6g %.6g %d\n", name, median, values[0], values[n - 1], n);
	fflush(stdout);
	return median;
}

static void progress(const char *what)
{
	fprintf(stderr, "calibrate: %s\n", what);
}

/* ---- the counting loop ------------------------------------------------------ */

static unsigned long loop_size(void)
{
	unsigned long n = 1000000;
	long long target = (long long)(50e6 * scale), t0;

	if (target < 2000000)
		target = 2000000;
	for (;;) {
		t0 = now_ns();
		count_loop(n);
		if (now_ns() - t0 >= target || n > (1UL << 40))
			return n;
		n *= 2;
	}
}

static double loop_once_ns(unsigned long n)
{
	long long t0 = now_ns();

	count_loop(n);
	return (double)(now_ns() - t0) / n;
}

static double loop_memory_once_ns(unsigned long n)
{
	long long t0 = now_ns();

	count_loop_memory(n);
	return (double)(now_ns() - t0) / n;
}

/* ---- thread create + join ----------------------------------------------------- */

static void *empty_thread(void *arg)
{
	return arg;
}

static double create_join_us(long n)
{
	pthread_t tid;
	long long t0;
	long i;

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		spawn(&tid, empty_thread, NULL);
		pthread_join(tid, NULL);
	}
	return (now_ns() - t0) / 1e3 / n;
}

/* ---- pipe ping-pong ------------------------------------------------------------ */

struct pong {
	int cpu, in, out;
	long n;
};

static void *pong_thread(void *arg)
{
	struct pong *p = arg;
	char c;
	long i;

	pin(p->cpu);
	for (i = 0; i < p->n; i++) {
		if (read(p->in, &c, 1) != 1)
			die("read");
		if (write(p->out, &c, 1) != 1)
			die("write");
	}
	return NULL;
}

/* One-way time (half a round trip) between a thread on `from` and one on `to`. */
static double pingpong_us(int from, int to, long n)
{
	int there[2], back[2];
	struct pong p;
	pthread_t tid;
	long long t0 = 0;
	long i, warm = n / 10 + 10;
	char c = 'x';

	if (pipe(there) || pipe(back))
		die("pipe");
	p.cpu = to;
	p.in = there[0];
	p.out = back[1];
	p.n = n + warm;
	pin(from);
	spawn(&tid, pong_thread, &p);
	for (i = 0; i < n + warm; i++) {
		if (i == warm)
			t0 = now_ns();
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			die("ping");
	}
	t0 = now_ns() - t0;
	pthread_join(tid, NULL);
	close(there[0]);
	close(there[1]);
	close(back[0]);
	close(back[1]);
	return t0 / 1e3 / n / 2;
}

/* ---- a SCHED_IDLE spinner that keeps a CPU busy without competing ------------ */

struct spinner {
	pthread_t tid;
	int cpu, state; /* 0 starting, 1 spinning, -1 could not become SCHED_IDLE */
	int stop;
	unsigned long loops;
};

static void *spin_thread(void *arg)
{
	struct spinner *s = arg;
	struct sched_param sp;

	memset(&sp, 0, sizeof(sp));
	pin(s->cpu);
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp)) {
		__atomic_store_n(&s->state, -1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	__atomic_store_n(&s->state, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		count_loop(1000);
		s->loops++;
	}
	return NULL;
}

/* ---- wakeup of a CPU that has been idle for a while ------------------------------ */

struct listener {
	int cpu, in;
	long n;
	long long *received;
};

static void *listen_thread(void *arg)
{
	struct listener *l = arg;
	char c;
	long i;

	pin(l->cpu);
	for (i = 0; i < l->n; i++) {
		if (read(l->in, &c, 1) != 1)
			die("read");
		__atomic_store_n(&l->received[i], now_ns(), __ATOMIC_RELEASE);
	}
	return NULL;
}

/* A run of one-byte wakeups through a pipe: the waker on `from`, the listener on `to`. */
struct wake_run {
	long long *sent, *got;
	int fds[2];
	struct listener l;
	pthread_t tid;
	long n;
};

static void wake_run_start(struct wake_run *w, int from, int to, long n)
{
	w->n = n;
	w->sent = calloc(n, sizeof(*w->sent));
	w->got = calloc(n, sizeof(*w->got));
	if (!w->sent || !w->got)
		die("calloc");
	if (pipe(w->fds))
		die("pipe");
	w->l.cpu = to;
	w->l.in = w->fds[0];
	w->l.n = n;
	w->l.received = w->got;
	pin(from);
	spawn(&w->tid, listen_thread, &w->l);
}

static void wake_run_send(struct wake_run *w, long i)
{
	char c = 'x';

	w->sent[i] = now_ns();
	if (write(w->fds[1], &c, 1) != 1)
		die("write");
}

/* Joins the listener; the median latency in us of the wakes after the first `skip`. */
static double wake_run_finish(struct wake_run *w, long skip)
{
	long counted = w->n - skip, i;
	double *lat = calloc(counted, sizeof(*lat)), median;

	if (!lat)
		die("calloc");
	pthread_join(w->tid, NULL);
	for (i = 0; i < counted; i++)
		lat[i] = (w->got[skip + i] - w->sent[skip + i]) / 1e3;
	qsort(lat, counted, sizeof(*lat), cmp_double);
	median = counted % 2 ? lat[counted / 2] : (lat[counted / 2 - 1] + lat[counted / 2]) / 2;
	close(w->fds[0]);
	close(w->fds[1]);
	free(w->sent);
	free(w->got);
	free(lat);
	return median;
}

/* Median write-to-read latency in us; the waker spins (its CPU never idles). */
static double idle_wakeup_us(int from, int to, long n)
{
	struct wake_run w;
	long i;

	wake_run_start(&w, from, to, n);
	for (i = 0; i < n; i++) {
		long long until = now_ns() + IDLE_GAP_NS;

		while (now_ns() < until)
			;
		wake_run_send(&w, i);
	}
	return wake_run_finish(&w, 0);
}

/*
 * Median latency in us of n wakeups of a thread on `to`, each sent `span_ns` after that thread
 * received the previous one (it then blocks at once: `to` idles for the span).  The waker
 * spins on `from` (its CPU never idles).  The first n / 10 + 5 wakes are not counted: the
 * first follows a longer idle, and KVM grows a vCPU's polling window over a few halts
 * (grow_halt_poll_ns(), virt/kvm/kvm_main.c).
 */
static double idle_span_wakeup_us(int from, int to, long long span_ns, long counted)
{
	long warm = counted / 10 + 5, n = counted + warm, i;
	struct wake_run w;

	wake_run_start(&w, from, to, n);
	usleep(1000); /* let the listener pin itself and block */
	for (i = 0; i < n; i++) {
		long long until, last = 0;

		if (i > 0)
			while (!(last = __atomic_load_n(&w.got[i - 1], __ATOMIC_ACQUIRE)))
				;
		until = (i > 0 ? last : now_ns()) + span_ns;
		while (now_ns() < until)
			;
		wake_run_send(&w, i);
	}
	return wake_run_finish(&w, warm);
}

/* Every span of -p in each round (rounds outside, so drift spreads over every span). */
static void halt_poll_sweep(void)
{
	static double sweep[MAX_SPANS][MAX_REPEATS];
	int nspans = (int)((sweep_to - sweep_from) / sweep_step) + 1, k, r;

	progress("idle-span sweep for the host's halt-polling window");
	for (r = 0; r < repeats; r++)
		for (k = 0; k < nspans; k++)
			sweep[k][r] = idle_span_wakeup_us(cpu_a, cpu_b,
				(sweep_from + k * sweep_step) * 1000LL, scaled(100));
	for (k = 0; k < nspans; k++) {
		printf("halt_poll_sweep_us %ld", sweep_from + k * sweep_step);
		for (r = 0; r < repeats; r++)
			printf(" %.6g", sweep[k][r]);
		printf("\n");
	}
	fflush(stdout);
}

/* ---- same-CPU context switch through sched_yield() --------------------------------- */

struct yielder {
	pthread_t tid;
	int cpu;
	int *go;
	long n, switches;
};

static void *yield_thread(void *arg)
{
	struct yielder *y = arg;
	struct rusage before, after;
	long i;

	pin(y->cpu);
	while (!__atomic_load_n(y->go, __ATOMIC_SEQ_CST))
		sched_yield();
	getrusage(RUSAGE_THREAD, &before);
	for (i = 0; i < y->n; i++)
		sched_yield();
	getrusage(RUSAGE_THREAD, &after);
	y->switches = (after.ru_nivcsw - before.ru_nivcsw) + (after.ru_nvcsw - before.ru_nvcsw);
	return NULL;
}

/* Wall time per counted switch; < 0 when the yields did not switch. */
static double yield_switch_us(int cpu, long n)
{
	struct yielder y[2];
	int go = 0, i;
	long long t0;
	long switches;

	for (i = 0; i < 2; i++) {
		y[i].cpu = cpu;
		y[i].go = &go;
		y[i].n = n;
		y[i].switches = 0;
		spawn(&y[i].tid, yield_thread, &y[i]);
	}
	usleep(10000);
	t0 = now_ns();
	__atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 2; i++)
		pthread_join(y[i].tid, NULL);
	t0 = now_ns() - t0;
	switches = y[0].switches + y[1].switches;
	if (switches < n / 2)
		return -1;
	return t0 / 1e3 / switches;
}

/* ---- contention: the loop on CPU A alone, then with every loader CPU busy ----------- */

static void *load_thread(void *arg)
{
	struct spinner *s = arg;

	pin(s->cpu);
	__atomic_store_n(&s->state, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
		count_loop(100000);
	return NULL;
}

static void contention(unsigned long n)
{
	static struct spinner load[MAX_LOADERS];
	double alone[MAX_REPEATS], busy[MAX_REPEATS];
	int i, r;

	pin(cpu_a);
	for (r = 0; r < repeats; r++)
		alone[r] = loop_once_ns(n);
	if (nloaders == 0) {
		report("loop_alone_ns", alone, repeats);
		printf("loop_busy_ns none no other CPU to load\n");
		return;
	}
	for (i = 0; i < nloaders; i++) {
		load[i].cpu = loaders[i];
		load[i].state = 0;
		load[i].stop = 0;
		spawn(&load[i].tid, load_thread, &load[i]);
	}
	for (i = 0; i < nloaders; i++)
		while (!__atomic_load_n(&load[i].state, __ATOMIC_SEQ_CST))
			usleep(1000);
	usleep(20000); /* let frequency and the host settle under the load */
	for (r = 0; r < repeats; r++)
		busy[r] = loop_once_ns(n);
	for (i = 0; i < nloaders; i++)
		__atomic_store_n(&load[i].stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < nloaders; i++)
		pthread_join(load[i].tid, NULL);
	report("loop_alone_ns", alone, repeats);
	report("loop_busy_ns", busy, repeats);
	printf("loaded_cpus %d %d %d 1\n", nloaders, nloaders, nloaders);
}

/* ---- driver ----------------------------------------------------------------------- */

static void pick_cpus(void)
{
	cpu_set_t allowed;
	int cpu, i;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		die("sched_getaffinity");
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (cpu_a < 0)
			cpu_a = cpu;
		else if (cpu_b < 0 && cpu != cpu_a)
			cpu_b = cpu;
	}
	if (nloaders < 0) {
		nloaders = 0;
		for (cpu = 0; cpu < CPU_SETSIZE && nloaders < MAX_LOADERS; cpu++)
			if (CPU_ISSET(cpu, &allowed) && cpu != cpu_a)
				loaders[nloaders++] = cpu;
	}
	for (i = 0; i < nloaders; i++)
		if (loaders[i] == cpu_a) {
			fprintf(stderr, "calibrate: -c must not include CPU %d (-a)\n", cpu_a);
			exit(2);
		}
}

static void parse_list(char *text, const char *prog)
{
	char *tok, *end;

	nloaders = 0;
	for (tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
		long v = strtol(tok, &end, 10);

		if (end == tok || *end || v < 0 || v >= CPU_SETSIZE || nloaders >= MAX_LOADERS)
			usage(prog);
		loaders[nloaders++] = (int)v;
	}
}

static void measure_remote(double *values)
{
	struct spinner spin;
	int r;

	progress("cross-CPU wakeup (pipe ping-pong)");
	for (r = 0; r < repeats; r++)
		values[r] = pingpong_us(cpu_a, cpu_b, scaled(5000));
	report("wakeup_remote_us", values, repeats);

	progress("cross-CPU wakeup of a busy CPU (SCHED_IDLE spinner on the other CPU)");
	memset(&spin, 0, sizeof(spin));
	spin.cpu = cpu_b;
	spawn(&spin.tid, spin_thread, &spin);
	while (!__atomic_load_n(&spin.state, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (spin.state > 0)
		for (r = 0; r < repeats; r++)
			values[r] = pingpong_us(cpu_a, cpu_b, scaled(5000));
	__atomic_store_n(&spin.stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(spin.tid, NULL);
	if (spin.state > 0)
		report("wakeup_remote_busy_us", values, repeats);
	else
		printf("wakeup_remote_busy_us none SCHED_IDLE refused\n");

	progress("wakeup of a CPU idle for 2 ms");
	for (r = 0; r < repeats; r++)
		values[r] = idle_wakeup_us(cpu_a, cpu_b, scaled(60));
	report("wakeup_idle_us", values, repeats);
}

int main(int argc, char **argv)
{
	double values[MAX_REPEATS];
	unsigned long n;
	int opt, r;

	while ((opt = getopt(argc, argv, "a:b:c:r:s:p:h")) != -1) {
		switch (opt) {
		case 'a': cpu_a = atoi(optarg); break;
		case 'b': cpu_b = atoi(optarg); break;
		case 'c': parse_list(optarg, argv[0]); break;
		case 'r': repeats = atoi(optarg); break;
		case 's': scale = atof(optarg); break;
		case 'p':
			if (sscanf(optarg, "%ld:%ld:%ld", &sweep_from, &sweep_to, &sweep_step) != 3
			    || sweep_from < 1 || sweep_step < 1 || sweep_to < sweep_from
			    || (sweep_to - sweep_from) / sweep_step >= MAX_SPANS || sweep_to > 100000)
				usage(argv[0]);
			break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || repeats < 1 || repeats > MAX_REPEATS || !(scale > 0 && scale <= 100))
		usage(argv[0]);
	pick_cpus();
	printf("cpu_a %d %d %d 1\n", cpu_a, cpu_a, cpu_a);
	if (cpu_b >= 0)
		printf("cpu_b %d %d %d 1\n", cpu_b, cpu_b, cpu_b);
	pin(cpu_a);

	progress("counting loop");
	n = loop_size();
	for (r = 0; r < repeats; r++)
		values[r] = loop_once_ns(n);
	report("loop_ns", values, repeats);
	for (r = 0; r < repeats; r++)
		values[r] = loop_memory_once_ns(n / 4 + 1);
	report("loop_memory_ns", values, repeats);

	progress("thread create + join");
	for (r = 0; r < repeats; r++)
		values[r] = create_join_us(scaled(2000));
	report("thread_create_join_us", values, repeats);

	progress("same-CPU wakeup (pipe ping-pong)");
	for (r = 0; r < repeats; r++)
		values[r] = pingpong_us(cpu_a, cpu_a, scaled(5000));
	report("wakeup_local_us", values, repeats);

	progress("same-CPU context switch (sched_yield between two threads)");
	for (r = 0; r < repeats; r++) {
		values[r] = yield_switch_us(cpu_a, scaled(20000));
		if (values[r] < 0)
			break;
	}
	if (r == repeats)
		report("context_switch_us", values, repeats);
	else
		printf("context_switch_us none sched_yield did not switch between the threads\n");

	if (cpu_b >= 0)
		measure_remote(values);
	else
		printf("wakeup_remote_us none only one CPU may be used\n");
	if (sweep_step && cpu_b >= 0)
		halt_poll_sweep();
	else if (sweep_step)
		printf("halt_poll_sweep_us none only one CPU may be used\n");

	progress("contention (the loop alone, then with the other CPUs looping)");
	contention(n);
	return 0;
}
