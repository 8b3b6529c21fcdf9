/* SPDX-License-Identifier: MIT */
/*
 * Readers beside a writer: one writer churns the map (single changes,
 * batches, replaces, whole reloads) while reader threads check every
 * lookup against what must hold at all times (map-churn.h).
 *
 * Overrides: LATCH_MAP_STRESS_MS (run time, default 1000),
 * LATCH_MAP_STRESS_READERS (default 2).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "map-churn.h"

static int stop;
static unsigned long reads[8], wrongs[8];

static void *reader(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	struct test_rng rng = { 0x1234567ull + id * 7919 };

	/* Relaxed: the flag crosses threads but only ends the loop. */
	while (!LATCH_LOAD_RELAXED(&stop)) {
		wrongs[id] += check_lookups((unsigned)test_rng_below(&rng, STABLE));
		reads[id]++;
	}
	return NULL;
}

int main(void)
{
	long ms = test_env_long("LATCH_MAP_STRESS_MS", 1000);
	long nreaders = test_env_long("LATCH_MAP_STRESS_READERS", 2);
	struct test_rng rng = { 42 };
	pthread_t threads[8];
	unsigned long updates = 0, total_reads = 0, total_wrong = 0;
	struct timespec t0, t;

	if (nreaders < 1 || nreaders > 8)
		nreaders = 2;
	churn_setup();
	for (long r = 0; r < nreaders; r++)
		CHECK(pthread_create(&threads[r], NULL, reader, (void *)(uintptr_t)r) == 0,
		      "pthread_create");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int k = 0; k < 64; k++)
			churn_step(&rng, updates++);
		/* Let readers run where threads take turns (valgrind runs one at a time). */
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	/* Relaxed: see reader(). */
	LATCH_STORE_RELAXED(&stop, 1);
	for (long r = 0; r < nreaders; r++) {
		pthread_join(threads[r], NULL);
		total_reads += reads[r];
		total_wrong += wrongs[r];
	}
	printf("test-map-stress: %lu updates, %lu reader rounds, %lu wrong answers\n", updates,
	       total_reads, total_wrong);
	CHECK(total_wrong == 0, "%lu wrong answers", total_wrong);
	CHECK(updates > 0 && total_reads > 0, "too little ran to test anything");
	latch_map_destroy(&churn_map);
	return 0;
}
