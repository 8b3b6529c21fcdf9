/* SPDX-License-Identifier: MIT */
/*
 * A short multi-threaded stress run: one writer inserts and erases
 * elements continuously while readers on the other cores look up keys
 * that are never removed (must always be found), keys that come and go
 * (found or not, never a wrong element) and keys never inserted (never
 * found).
 *
 * Overrides: LATCH_STRESS_MS (run time, default 1000),
 * LATCH_STRESS_READERS (default: cores - 1, at least 1).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "elem.h"

#define STABLE 1000 /* keys 0, 2, 4, ... never removed */
#define CHURN  1000 /* keys 1, 3, 5, ... come and go */

static struct latch_tree_root root = LATCH_TREE_ROOT_INIT;
static struct test_elem stable[STABLE], churn[CHURN];
static bool stop; /* accessed atomically */

static void *reader(void *arg)
{
	struct test_rng rng = { (unsigned long long)(uintptr_t)arg * 7919 + 1 };
	unsigned long lookups = 0;

	/* Relaxed: the flag only ends the loop; no data is handed over. */
	while (!LATCH_LOAD_RELAXED(&stop)) {
		long key = (long)test_rng_below(&rng, 2 * STABLE + 100);
		struct test_elem *e = test_find(&root, key);

		if (key < 2 * STABLE && key % 2 == 0)
			CHECK(e && e->key == key, "stable key %ld not found", key);
		else if (key < 2 * STABLE)
			CHECK(!e || e->key == key, "churn key %ld found as %ld", key, e->key);
		else
			CHECK(!e, "never-inserted key %ld found", key);
		lookups++;
	}
	return (void *)lookups;
}

int main(void)
{
	long ms = test_env_long("LATCH_STRESS_MS", 1000);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long nreaders = test_env_long("LATCH_STRESS_READERS", cores > 1 ? cores - 1 : 1);
	pthread_t readers[64];
	unsigned long total = 0, updates = 0;
	struct timespec t0, now;
	bool in[CHURN] = { false };

	if (nreaders > 64)
		nreaders = 64;
	for (long i = 0; i < STABLE; i++) {
		stable[i].key = 2 * i;
		latch_tree_insert(&root, &stable[i].node, &test_elem_ops);
	}
	for (long i = 0; i < CHURN; i++)
		churn[i].key = 2 * i + 1;
	for (long i = 0; i < nreaders; i++)
		CHECK(pthread_create(&readers[i], NULL, reader, (void *)(uintptr_t)(i + 1)) == 0,
		      "pthread_create");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct test_rng rng = { 42 };
	do {
		for (int burst = 0; burst < 256; burst++, updates++) {
			long i = (long)test_rng_below(&rng, CHURN);

			if (in[i])
				latch_tree_erase(&root, &churn[i].node, &test_elem_ops);
			else
				latch_tree_insert(&root, &churn[i].node, &test_elem_ops);
			in[i] = !in[i];
		}
		/* Let readers run where threads take turns (valgrind runs one at a time). */
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < ms);

	/* Relaxed: see reader(). */
	LATCH_STORE_RELAXED(&stop, true);
	for (long i = 0; i < nreaders; i++) {
		void *lookups;

		pthread_join(readers[i], &lookups);
		total += (unsigned long)(uintptr_t)lookups;
	}
	CHECK(total > 0 && updates > 0, "no work done (%lu lookups, %lu updates)", total, updates);
	printf("test-stress: %ld readers, %lu lookups, %lu updates in %ld ms: all right\n",
	       nreaders, total, updates, ms);
	return 0;
}
