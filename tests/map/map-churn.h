/* SPDX-License-Identifier: MIT */
/*
 * The workload of the concurrent map tests: a writer churns a map whose
 * stable keys 4i (i < STABLE) are always present, with a value that
 * replace() switches between two known ones; keys 4i+1 come and go (by
 * single changes, batches and whole reloads); keys 4i+2 and 4i+3 are
 * never present.  check_lookups() checks what a reader may see, whatever
 * the writer is doing.
 */
#ifndef LATCH_TESTS_MAP_CHURN_H
#define LATCH_TESTS_MAP_CHURN_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <latch/atomic.h>
#include <latch/map.h>

#include "check.h"

#ifndef STABLE
#define STABLE 20000u
#endif

static struct latch_map churn_map;
static bool churn_present[STABLE]; /* writer only: is 4i+1 present? */
static unsigned churn_gen[STABLE]; /* writer only: generation of 4i's value */
static uint64_t churn_keys[2 * STABLE];
static void *churn_values[2 * STABLE];

static inline void *stable_value(uint64_t key, unsigned gen)
{
	return (void *)(uintptr_t)(key * 4 + gen % 2 + 1);
}

static inline void *churn_value(uint64_t key)
{
	return (void *)(uintptr_t)(key * 4 + 3);
}

static inline void churn_setup(void)
{
	CHECK(latch_map_init(&churn_map) == 0, "init");
	for (unsigned i = 0; i < STABLE; i++)
		CHECK(latch_map_insert(&churn_map, 4 * (uint64_t)i,
		                       stable_value(4 * (uint64_t)i, 0)) == 0,
		      "insert");
}

/* One update of the writer, number @u, driven by @rng. */
static inline void churn_step(struct test_rng *rng, unsigned long u)
{
	unsigned i = (unsigned)test_rng_below(rng, STABLE);
	uint64_t key = 4 * (uint64_t)i + 1;

	if (u % 4096 == 4095) {
		/* Reload everything as it is: every node is rebuilt. */
		size_t n = 0;

		for (unsigned j = 0; j < STABLE; j++) {
			churn_keys[n] = 4 * (uint64_t)j;
			churn_values[n++] = stable_value(4 * (uint64_t)j, churn_gen[j]);
			if (churn_present[j]) {
				churn_keys[n] = 4 * (uint64_t)j + 1;
				churn_values[n++] = churn_value(4 * (uint64_t)j + 1);
			}
		}
		CHECK(latch_map_load_sorted(&churn_map, churn_keys, churn_values, n) == 0, "load");
	} else if (u % 16 == 15) {
		/* A batch: toggle a run of churn keys and replace a stable value. */
		struct latch_map_change c[9];
		unsigned n = 0;

		for (unsigned j = i; j < i + 8 && j < STABLE; j++, n++) {
			uint64_t k = 4 * (uint64_t)j + 1;

			c[n].op = churn_present[j] ? LATCH_MAP_ERASE : LATCH_MAP_INSERT;
			c[n].key = k;
			c[n].value = churn_value(k);
			churn_present[j] = !churn_present[j];
		}
		c[n].op = LATCH_MAP_REPLACE;
		c[n].key = 4 * (uint64_t)i;
		c[n++].value = stable_value(4 * (uint64_t)i, ++churn_gen[i]);
		CHECK(latch_map_commit(&churn_map, c, n, NULL) == 0, "commit");
	} else if (u % 8 == 7) {
		CHECK(latch_map_replace(&churn_map, 4 * (uint64_t)i,
		                        stable_value(4 * (uint64_t)i, ++churn_gen[i])) == 0,
		      "replace");
	} else if (churn_present[i]) {
		CHECK(latch_map_erase(&churn_map, key) == 0, "erase");
		churn_present[i] = false;
	} else {
		CHECK(latch_map_insert(&churn_map, key, churn_value(key)) == 0, "insert");
		churn_present[i] = true;
	}
}

/*
 * Lookups around stable key 4@i; returns the number of wrong answers.
 * Async-signal-safe: no allocation, no locks, no output.
 */
static inline unsigned check_lookups(unsigned i)
{
	uint64_t s = 4 * (uint64_t)i, k = 0;
	void *v = NULL;
	unsigned wrong = 0;

	wrong += !latch_map_find(&churn_map, s, &v) ||
	         (v != stable_value(s, 0) && v != stable_value(s, 1));
	wrong += latch_map_find(&churn_map, s + 2, NULL) || latch_map_find(&churn_map, s + 3, NULL);
	if (latch_map_find(&churn_map, s + 1, &v))
		wrong += v != churn_value(s + 1);
	wrong += !latch_map_floor(&churn_map, s + 2, &k, &v) || (k != s && k != s + 1) ||
	         (k == s + 1 && v != churn_value(k));
	if (i + 1 < STABLE)
		wrong += !latch_map_ceil(&churn_map, s + 2, &k, &v) || k != s + 4 ||
		         (v != stable_value(k, 0) && v != stable_value(k, 1));
	else
		wrong += latch_map_ceil(&churn_map, s + 2, NULL, NULL);
	if (i + 1 < STABLE)
		wrong += !latch_map_next(&churn_map, s, &k, NULL) || (k != s + 1 && k != s + 4);
	if (i > 0)
		wrong += !latch_map_prev(&churn_map, s, &k, NULL) || (k != s - 3 && k != s - 4);
	wrong += !latch_map_first(&churn_map, &k, NULL) || k != 0;
	wrong += !latch_map_last(&churn_map, &k, NULL) ||
	         (k != 4 * (uint64_t)(STABLE - 1) && k != 4 * (uint64_t)(STABLE - 1) + 1);
	size_t n = latch_map_size(&churn_map);
	wrong += n < STABLE || n > 2 * STABLE;
	return wrong;
}

#endif /* LATCH_TESTS_MAP_CHURN_H */
