/* SPDX-License-Identifier: MIT */
/*
 * Signal storm: a writer thread inserts and erases continuously and reader
 * threads look up keys, while a high-rate per-thread timer signal
 * (SIGEV_THREAD_ID) interrupts every one of them.  The handler looks up
 * keys that stay present (must be found) and keys never inserted (must not
 * be), wherever it lands: in the middle of an update on the writer's own
 * thread, or in the middle of a lookup on a reader's.  A watchdog turns any
 * thread that stops making progress into a failure.
 *
 * With --expect-caught the verdict inverts: the run passes only when the
 * watchdog (or a wrong answer) caught the structure; run over the seqlock
 * peer this shows the harness catches the hang the latch exists to avoid.
 *
 * Each thread's timer starts at the period asked and slows down only if
 * the thread stops getting anything done between signals (where a
 * delivery costs more than the period, as under qemu-user; see
 * api/signal-storm.h): a storm that starves the writer tests nothing.  A
 * handler that never returns still stops its thread for good, whatever
 * the period, and the watchdog still catches it.
 *
 * Overrides: LATCH_STORM_LOOKUPS (handler lookups to reach, default
 * 20000), LATCH_STORM_MAX_MS (stop even if not reached, default 10000),
 * LATCH_STORM_READERS (default 2), LATCH_STORM_PERIOD_US (timer period
 * to start with, default 20), LATCH_STORM_HANG_MS (no progress for this
 * long is a hang, default 2000).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "signal-storm.h"
#include "harness.h"
#include "signal-tls.h"

#define STABLE      256 /* keys 0 .. STABLE-1: always present */
#define CHURN       256 /* keys STABLE .. STABLE+CHURN-1: come and go */
#define KEYS        (STABLE + CHURN)
#define MAX_THREADS 17

struct thread_slot {
	pthread_t thread;
	long index;
	unsigned long progress; /* loop iterations; accessed atomically */
	long period_ns;         /* the thread's timer period at the end */
};

static struct proof_run run;
static void *state;
static struct thread_slot slots[MAX_THREADS];
static long nthreads;
static int stop; /* accessed atomically */
/* Handler statistics; accessed atomically. */
static unsigned long handler_lookups, handler_in_update, handler_in_lookup, handler_wrong;
static _Thread_local volatile sig_atomic_t in_update; /* this thread is inside insert/erase */
static _Thread_local volatile sig_atomic_t in_lookup; /* this reader is inside a lookup */
static _Thread_local unsigned long next_probe;

static void add(unsigned long *counter, unsigned long n)
{
	/* Relaxed: statistics, read after the threads are joined or by the watchdog. */
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static void on_tick(int sig)
{
	int saved_errno = errno;
	long key = (long)(next_probe++ % STABLE);
	long absent = KEYS + (long)(next_probe % 7);

	(void)sig;
	storm_tick();
	if (run.sut->find(state, key) != key || run.sut->find(state, absent) != SUT_ABSENT)
		add(&handler_wrong, 1);
	add(&handler_lookups, 2);
	if (in_update)
		add(&handler_in_update, 2);
	if (in_lookup)
		add(&handler_in_lookup, 2);
	errno = saved_errno;
}

static bool stopping(void)
{
	/* Relaxed: the flag only ends the loop. */
	return LATCH_LOAD_RELAXED(&stop) != 0;
}

static void writer_loop(struct thread_slot *slot)
{
	struct test_rng rng = { 12345 };
	bool present[CHURN] = { false };

	while (!stopping()) {
		long i = (long)test_rng_below(&rng, CHURN);

		in_update = 1;
		if (present[i])
			run.sut->erase(state, STABLE + i);
		else
			run.sut->insert(state, STABLE + i);
		in_update = 0;
		present[i] = !present[i];
		add(&slot->progress, 1);
		storm_progress();
	}
}

static void reader_loop(struct thread_slot *slot)
{
	struct test_rng rng = { (unsigned long long)slot->index * 7919 + 1 };

	while (!stopping()) {
		long key = (long)test_rng_below(&rng, KEYS + 8);
		long got;

		in_lookup = 1;
		got = run.sut->find(state, key);
		in_lookup = 0;
		if (key < STABLE ? got != key
		    : key < KEYS ? got != key && got != SUT_ABSENT
		                 : got != SUT_ABSENT)
			proof_violation(&run, "reader: find(%ld) = %ld", key, got);
		add(&slot->progress, 1);
		storm_progress();
	}
}

static void *thread_main(void *arg)
{
	struct thread_slot *slot = arg;
	timer_t timer = storm_start(test_env_long("LATCH_STORM_PERIOD_US", 20) * 1000);

	if (slot->index == 0)
		writer_loop(slot);
	else
		reader_loop(slot);
	timer_delete(timer);
	/* Read after pthread_join(), which orders it. */
	slot->period_ns = storm_period_ns();
	return NULL;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Watch every thread's progress until the goal, the time limit or a hang. */
static bool watch(long goal, long max_ms, long hang_ms)
{
	unsigned long last[MAX_THREADS] = { 0 };
	long since[MAX_THREADS];
	long start = now_ms();

	for (long t = 0; t < nthreads; t++)
		since[t] = start;
	for (;;) {
		long now;

		usleep(20000);
		now = now_ms();
		for (long t = 0; t < nthreads; t++) {
			/* Relaxed: a progress count, compared with its last value. */
			unsigned long p = LATCH_LOAD_RELAXED(&slots[t].progress);

			if (p != last[t]) {
				last[t] = p;
				since[t] = now;
			} else if (now - since[t] >= hang_ms) {
				proof_violation(
				    &run, "watchdog: %s thread %ld made no progress for %ld ms",
				    t == 0 ? "writer" : "reader", t, now - since[t]);
				return false;
			}
		}
		/* Relaxed: statistics. */
		if ((long)LATCH_LOAD_RELAXED(&handler_lookups) >= goal || now - start >= max_ms ||
		    proof_caught(&run))
			return true;
	}
}

int main(int argc, char **argv)
{
	long goal = test_env_long("LATCH_STORM_LOOKUPS", 20000);
	long max_ms = test_env_long("LATCH_STORM_MAX_MS", 10000);
	long hang_ms = test_env_long("LATCH_STORM_HANG_MS", 2000);
	struct sigaction sa;
	unsigned long writer_updates;

	proof_parse_args(&run, "proof-storm", argc, argv);
	/* Threads take the signals here: they must keep their own TLS meanwhile. */
	test_skip_if_signals_lose_tls("proof-storm");
	nthreads = 1 + test_env_long("LATCH_STORM_READERS", 2);
	CHECK(nthreads >= 1 && nthreads <= MAX_THREADS, "LATCH_STORM_READERS must be 0 .. %d",
	      MAX_THREADS - 1);
	/* The structures declare 64-byte alignment (B+-tree nodes, SIMD loads). */
	state = aligned_alloc(64, (run.sut->size(KEYS) + 63) / 64 * 64);
	CHECK(state, "out of memory");
	run.sut->init(state, KEYS);
	for (long key = 0; key < STABLE; key++)
		run.sut->insert(state, key);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGPROF, &sa, NULL) == 0, "sigaction: %s", strerror(errno));

	for (long t = 0; t < nthreads; t++) {
		slots[t].index = t;
		CHECK(pthread_create(&slots[t].thread, NULL, thread_main, &slots[t]) == 0,
		      "pthread_create failed");
	}
	if (!watch(goal, max_ms, hang_ms)) {
		/* Some thread is stuck for good: report and leave without joining it. */
		int status;

		printf("proof-storm: %s: hang detected after %lu handler lookups\n", run.sut->name,
		       LATCH_LOAD_RELAXED(&handler_lookups));
		status = proof_verdict(&run);
		fflush(stdout);
		_exit(status);
	}
	/* Relaxed: the threads only poll the flag. */
	LATCH_STORE_RELAXED(&stop, 1);
	for (long t = 0; t < nthreads; t++)
		pthread_join(slots[t].thread, NULL);

	writer_updates = slots[0].progress;
	printf("proof-storm: %s: %lu handler lookups (%lu interrupting an update on the writer's "
	       "thread, %lu a lookup on a reader's), %lu wrong; %lu updates, %ld threads signalled "
	       "every %ld us at first, the writer every %ld us at the end\n",
	       run.sut->name, handler_lookups, handler_in_update, handler_in_lookup, handler_wrong,
	       writer_updates, nthreads, test_env_long("LATCH_STORM_PERIOD_US", 20),
	       slots[0].period_ns / 1000);
	if (handler_wrong)
		proof_violation(&run, "%lu handler lookups answered wrong", handler_wrong);
	if (!proof_caught(&run))
		CHECK(handler_in_update > 0,
		      "no handler interrupted an update: the run proved nothing (timer too slow?)");
	free(state);
	return proof_verdict(&run);
}
