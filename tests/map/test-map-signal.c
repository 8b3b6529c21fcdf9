/* SPDX-License-Identifier: MIT */
/*
 * Same-thread interruption: a per-thread timer signal interrupts the
 * writer while it churns the map; the handler, on the writer's own
 * thread, makes lookups whose answers are known (map-churn.h).  Every
 * lookup must finish and be right, and the counter must not move while
 * the writer is interrupted (so each lookup succeeded on its first
 * attempt).  A hang is turned into a failure by alarm().
 *
 * Overrides: LATCH_SIGNAL_MS (run time, default 1000),
 * LATCH_SIGNAL_PERIOD_US (timer period, default 20).
 */
#define _GNU_SOURCE
#define STABLE 2000u
#include "btree.h"
#include "map-churn.h"
#include "signal-storm.h"

static volatile sig_atomic_t in_update;
static volatile sig_atomic_t lookups, lookups_in_update;

static void on_tick(int sig)
{
	static unsigned next;
	unsigned before = latch_seq_read_begin(&latch_btree_of_map(&churn_map)->seq);

	(void)sig;
	storm_tick();
	SIG_CHECK(check_lookups(next++ % STABLE) == 0, "a lookup returned a wrong answer");
	lookups++;
	if (in_update) {
		lookups_in_update++;
		/* The writer is stopped under us: the counter cannot move. */
		SIG_CHECK(!latch_seq_read_retry(&latch_btree_of_map(&churn_map)->seq, before),
		          "the counter moved under an interrupted lookup");
	}
}

static void on_alarm(int sig)
{
	(void)sig;
	SIG_CHECK(0, "watchdog fired: a lookup hung");
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(void)
{
	long ms = test_env_long("LATCH_SIGNAL_MS", 1000);
	long period_us = test_env_long("LATCH_SIGNAL_PERIOD_US", 20);
	struct test_rng rng = { 7 };
	unsigned long updates = 0;
	struct timespec t0;
	timer_t timer;

	churn_setup();
	signal(SIGALRM, on_alarm);
	alarm((unsigned)(ms / 1000 + 30));
	storm_handle(on_tick);
	timer = storm_start(period_us * 1000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_ms(&t0) < ms) {
		for (int k = 0; k < 64; k++) {
			in_update = 1;
			churn_step(&rng, updates++);
			in_update = 0;
			storm_progress();
		}
	}
	timer_delete(timer);
	alarm(0);
	printf("test-map-signal: %lu updates, %ld lookups in the handler, %ld inside an update; "
	       "signals every %ld us\n",
	       updates, (long)lookups, (long)lookups_in_update, storm_period_ns() / 1000);
	CHECK(lookups_in_update > 0, "no signal landed inside an update; nothing was tested");
	latch_map_destroy(&churn_map);
	return 0;
}
