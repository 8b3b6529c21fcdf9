/* SPDX-License-Identifier: MIT */
/*
 * Same-thread interruption: a per-thread timer signal interrupts the
 * writer thread while it inserts and erases; the handler, running on the
 * writer's own thread, looks up keys that stay present.  Every lookup
 * must finish and be right, and the counter must not move while the
 * writer is interrupted (so the lookup succeeded on its first attempt).
 * A hang is turned into a failure by alarm().
 *
 * Overrides: LATCH_SIGNAL_MS (run time, default 1000),
 * LATCH_SIGNAL_PERIOD_US (timer period, default 20).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "elem.h"
#include "signal-storm.h"

#define STABLE 512
#define CHURN  512

static struct latch_tree_root root = LATCH_TREE_ROOT_INIT;
static struct test_elem stable[STABLE], churn[CHURN];
static volatile sig_atomic_t in_update, stop;
static volatile sig_atomic_t lookups, lookups_in_update, wrong, moved;

static void on_tick(int sig)
{
	static long next;
	long key = 2 * (next++ % STABLE);
	unsigned before = latch_seq_read_begin(&root.seq);
	struct test_elem *e = test_find(&root, key);

	(void)sig;
	lookups++;
	if (in_update) {
		lookups_in_update++;
		/* The writer is stopped under us: the counter cannot move. */
		if (latch_seq_read_retry(&root.seq, before))
			moved++;
	}
	if (!e || e->key != key)
		wrong++;
}

static void on_alarm(int sig)
{
	static const char msg[] = "test-signal: watchdog fired: a lookup hung\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

static void *writer(void *arg)
{
	long period_us = test_env_long("LATCH_SIGNAL_PERIOD_US", 20);
	/* Not skipped without per-thread timers: this test must run everywhere. */
	timer_t timer = storm_start_or(period_us * 1000, 1);
	unsigned long updates = 0;

	(void)arg;
	/* Relaxed: the flag crosses threads but only ends the loop. */
	while (!LATCH_LOAD_RELAXED(&stop)) {
		struct test_elem *e = &churn[updates % CHURN];

		in_update = 1;
		if (updates / CHURN % 2 == 0)
			latch_tree_insert(&root, &e->node, &test_elem_ops);
		else
			latch_tree_erase(&root, &e->node, &test_elem_ops);
		in_update = 0;
		updates++;
	}
	timer_delete(timer);
	return (void *)(uintptr_t)updates;
}

int main(void)
{
	long ms = test_env_long("LATCH_SIGNAL_MS", 1000);
	struct sigaction sa;
	pthread_t thread;
	void *updates;

	for (long i = 0; i < STABLE; i++) {
		stable[i].key = 2 * i;
		latch_tree_insert(&root, &stable[i].node, &test_elem_ops);
	}
	for (long i = 0; i < CHURN; i++)
		churn[i].key = 2 * i + 1;

	storm_handle(on_tick);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");
	alarm((unsigned)(ms / 1000 + 30));

	CHECK(pthread_create(&thread, NULL, writer, NULL) == 0, "pthread_create");
	usleep((useconds_t)ms * 1000);
	/* Relaxed: see the writer's loop. */
	LATCH_STORE_RELAXED(&stop, 1);
	pthread_join(thread, &updates);
	alarm(0);

	printf("test-signal: %lu updates, %ld lookups in the handler, %ld inside an update, "
	       "%ld wrong, %ld retried\n",
	       (unsigned long)(uintptr_t)updates, (long)lookups, (long)lookups_in_update,
	       (long)wrong, (long)moved);
	CHECK(wrong == 0, "%ld lookups returned a wrong answer", (long)wrong);
	CHECK(moved == 0, "the counter moved under %ld interrupted lookups", (long)moved);
	CHECK(lookups_in_update > 0, "no signal landed inside an update; nothing was tested");
	return 0;
}
