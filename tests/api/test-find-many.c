/* SPDX-License-Identifier: MIT */
/*
 * Batched lookups: latch_map_find_many() and latch_range_find_many().
 *
 * 1. Answers: after random updates, batches of every size from 0 to past
 *    two groups of 64 (random keys, present and absent) agree with
 *    single lookups, leave the outputs of misses alone, and count hits.
 * 2. One snapshot: a writer thread commits batches that move every entry
 *    of the map from one generation to the next at once (64 replaces, or
 *    64 erase+insert pairs for ranges), while a reader thread and a timer
 *    signal on the writer's own thread look all 64 keys up in one call:
 *    every answer of a call must be of one generation, and a handler that
 *    interrupted an update must succeed without the counter moving.
 *
 *	test-find-many [--mutant per-key --expect-caught]
 *
 * The mutant answers each key with its own lookup (so a batch can mix two
 * states); with --expect-caught the test passes only if part 2 catches it.
 * Overrides: LATCH_MANY_MS (part 2's run time per map, default 500).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <latch/map.h>
#include <latch/range.h>

#include "btree.h" /* the counter of a map's core, to check it did not move */
#include "signal-storm.h"

#define GROUP 64

static bool per_key; /* the mutant */

/* ---- the calls under test, or the mutant ---- */

static size_t map_many(const struct latch_map *m, const uint64_t *keys, size_t n, void **values,
                       bool *found)
{
	size_t hits = 0;

	if (!per_key)
		return latch_map_find_many(m, keys, n, values, found);
	for (size_t i = 0; i < n; i++)
		hits += found[i] = latch_map_find(m, keys[i], &values[i]);
	return hits;
}

static size_t range_many(const struct latch_range_map *m, const uintptr_t *addrs, size_t n,
                         struct latch_range *out, bool *found)
{
	size_t hits = 0;

	if (!per_key)
		return latch_range_find_many(m, addrs, n, out, found);
	for (size_t i = 0; i < n; i++)
		hits += found[i] = latch_range_find(m, addrs[i], &out[i]);
	return hits;
}

/* ---- part 1: answers ---- */

#define PROBES 200 /* past three groups */

static void check_map_answers(const struct latch_map *m, struct test_rng *rng, uint64_t span)
{
	static uint64_t keys[PROBES];
	static void *values[PROBES];
	static bool found[PROBES];

	for (size_t n = 0; n <= PROBES; n += n < 70 ? 1 : 13) {
		size_t hits = 0, want = 0;

		for (size_t i = 0; i < n; i++) {
			keys[i] = test_rng_next(rng) % span;
			values[i] = &values[i]; /* a miss must leave it */
		}
		hits = map_many(m, keys, n, values, found);
		for (size_t i = 0; i < n; i++) {
			void *v = NULL;
			bool hit = latch_map_find(m, keys[i], &v);

			CHECK(found[i] == hit, "batch of %zu: key %llu found %d, alone %d", n,
			      (unsigned long long)keys[i], found[i], hit);
			CHECK(hit ? values[i] == v : values[i] == &values[i],
			      "batch of %zu: key %llu: wrong value, or a miss overwrote it", n,
			      (unsigned long long)keys[i]);
			want += hit;
		}
		CHECK(hits == want, "batch of %zu: returned %zu hits, %zu found", n, hits, want);
	}
}

static void check_range_answers(const struct latch_range_map *m, struct test_rng *rng,
                                uintptr_t span)
{
	static uintptr_t addrs[PROBES];
	static struct latch_range out[PROBES];
	static bool found[PROBES];
	static int marker;
	const struct latch_range untouched = { 1, 2, &marker };

	for (size_t n = 0; n <= PROBES; n += n < 70 ? 1 : 13) {
		size_t hits = 0, want = 0;

		for (size_t i = 0; i < n; i++) {
			addrs[i] = (uintptr_t)(test_rng_next(rng) % span);
			out[i] = untouched;
		}
		hits = range_many(m, addrs, n, out, found);
		for (size_t i = 0; i < n; i++) {
			struct latch_range r;
			bool hit = latch_range_find(m, addrs[i], &r);

			CHECK(found[i] == hit, "batch of %zu: address %#lx found %d, alone %d", n,
			      (unsigned long)addrs[i], found[i], hit);
			CHECK(hit ? out[i].start == r.start && out[i].end == r.end &&
			                out[i].value == r.value
			          : out[i].value == &marker,
			      "batch of %zu: address %#lx: wrong range, or a miss overwrote it", n,
			      (unsigned long)addrs[i]);
			want += hit;
		}
		CHECK(hits == want, "batch of %zu: returned %zu hits, %zu found", n, hits, want);
	}
}

static void test_answers(void)
{
	struct test_rng rng = { 11 };
	struct latch_map m;
	struct latch_range_map rm;

	CHECK(latch_map_init(&m) == 0 && latch_range_map_init(&rm) == 0, "init");
	CHECK(latch_map_find_many(&m, NULL, 0, NULL, NULL) == 0, "an empty batch");
	CHECK(latch_range_find_many(&rm, NULL, 0, NULL, NULL) == 0, "an empty batch");
	check_map_answers(&m, &rng, 100);
	check_range_answers(&rm, &rng, 100);
	for (unsigned round = 0; round < 12; round++) {
		/* Grow to about 6000 entries, then shrink, through every tree height up to 4. */
		for (unsigned i = 0; i < 1000; i++) {
			uint64_t k = test_rng_next(&rng) % 20000;
			uintptr_t start = (uintptr_t)(test_rng_next(&rng) % 20000) * 16;

			if (round < 6) {
				(void)latch_map_insert(&m, k, (void *)(uintptr_t)(k + 1));
				(void)latch_range_insert(&rm, start, start + 1 + k % 15,
				                         (void *)(start + 1), NULL);
			} else {
				(void)latch_map_erase(&m, k);
				(void)latch_range_erase(&rm, start);
			}
		}
		check_map_answers(&m, &rng, 20000);
		check_range_answers(&rm, &rng, 20000 * 16);
	}
	latch_map_destroy(&m);
	latch_range_map_destroy(&rm);
}

/* ---- part 2: one snapshot ---- */

static struct latch_map snap_map;
static struct latch_range_map snap_ranges;
static bool ranges_phase;
static atomic_bool stop;
static atomic_ulong mixed, calls;
static volatile sig_atomic_t in_update, handler_calls, handler_in_update;

/* Entry i of generation g: key i, value g + 1; the range [256 i, 256 i + 128). */
static uintptr_t start_of(unsigned i)
{
	return 4096 + (uintptr_t)i * 256;
}

/* One call over all 64 entries: false when its answers are not all of one generation. */
static bool one_state(void)
{
	uint64_t keys[GROUP];
	uintptr_t addrs[GROUP];
	void *values[GROUP];
	struct latch_range out[GROUP];
	bool found[GROUP];

	for (unsigned i = 0; i < GROUP; i++) {
		keys[i] = i;
		addrs[i] = start_of(i) + 5;
	}
	if (ranges_phase) {
		if (range_many(&snap_ranges, addrs, GROUP, out, found) != GROUP)
			return false;
		for (unsigned i = 1; i < GROUP; i++)
			if (out[i].value != out[0].value)
				return false;
		return true;
	}
	if (map_many(&snap_map, keys, GROUP, values, found) != GROUP)
		return false;
	for (unsigned i = 1; i < GROUP; i++)
		if (values[i] != values[0])
			return false;
	return true;
}

static const struct latch_seq *snap_seq(void)
{
	return ranges_phase ? &latch_btree_of_range(&snap_ranges)->seq
	                    : &latch_btree_of_map(&snap_map)->seq;
}

static void on_tick(int sig)
{
	unsigned before = latch_seq_read_begin(snap_seq());

	(void)sig;
	storm_tick();
	if (!one_state())
		atomic_fetch_add_explicit(&mixed, 1, memory_order_relaxed);
	handler_calls++;
	if (in_update) {
		handler_in_update++;
		/* The writer is stopped under us: the counter cannot move. */
		SIG_CHECK(!latch_seq_read_retry(snap_seq(), before),
		          "the counter moved under a batch that interrupted the writer");
	}
}

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (!one_state())
			atomic_fetch_add_explicit(&mixed, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
	}
	return NULL;
}

/* Move every entry to generation @g + 1 in one commit. */
static void next_generation(unsigned long g)
{
	static struct latch_map_change mc[GROUP];
	static struct latch_range_change rc[2 * GROUP];

	for (unsigned i = 0; i < GROUP; i++) {
		void *v = (void *)(uintptr_t)(g + 2);

		mc[i] = (struct latch_map_change){ LATCH_MAP_REPLACE, i, v };
		rc[2 * i] =
		    (struct latch_range_change){ LATCH_RANGE_ERASE, { start_of(i), 0, NULL } };
		rc[2 * i + 1] =
		    (struct latch_range_change){ LATCH_RANGE_INSERT,
			                         { start_of(i), start_of(i) + 128, v } };
	}
	in_update = 1;
	if (ranges_phase)
		CHECK(latch_range_commit(&snap_ranges, rc, 2 * GROUP, NULL) == 0, "range commit");
	else
		CHECK(latch_map_commit(&snap_map, mc, GROUP, NULL) == 0, "map commit");
	in_update = 0;
	storm_progress();
}

/* Part 2 on one map; returns the calls that mixed two states. */
static unsigned long test_snapshot(bool ranges, long ms)
{
	struct timespec t0, t;
	pthread_t thread;
	unsigned long g = 0;
	timer_t timer;

	ranges_phase = ranges;
	atomic_store(&stop, false);
	atomic_store(&mixed, 0);
	atomic_store(&calls, 0);
	handler_calls = handler_in_update = 0;
	for (unsigned i = 0; i < GROUP; i++) {
		CHECK(latch_map_insert(&snap_map, i, (void *)(uintptr_t)1) == 0, "insert");
		CHECK(latch_range_insert(&snap_ranges, start_of(i), start_of(i) + 128,
		                         (void *)(uintptr_t)1, NULL) == 0,
		      "insert");
	}
	CHECK(pthread_create(&thread, NULL, reader, NULL) == 0, "pthread_create");
	timer = storm_start(20000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int k = 0; k < 16; k++)
			next_generation(g++);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms &&
	         !(per_key && atomic_load(&mixed)));
	timer_delete(timer);
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	printf("test-find-many: %s: %lu generations, %lu reader calls, %ld in the writer's "
	       "handler (%ld inside an update), %lu mixed two states\n",
	       ranges ? "range map" : "map", g, atomic_load(&calls), (long)handler_calls,
	       (long)handler_in_update, atomic_load(&mixed));
	for (unsigned i = 0; i < GROUP; i++) {
		CHECK(latch_map_erase(&snap_map, i) == 0, "erase");
		CHECK(latch_range_erase(&snap_ranges, start_of(i)) == 0, "erase");
	}
	return atomic_load(&mixed);
}

int main(int argc, char **argv)
{
	long ms = test_env_long("LATCH_MANY_MS", 500);
	bool expect_caught = false;
	unsigned long caught;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mutant") && i + 1 < argc && !strcmp(argv[i + 1], "per-key"))
			per_key = true, i++;
		else if (!strcmp(argv[i], "--expect-caught"))
			expect_caught = true;
		else
			CHECK(0, "usage: test-find-many [--mutant per-key --expect-caught]");
	}
	if (!expect_caught)
		test_answers();
	CHECK(latch_map_init(&snap_map) == 0 && latch_range_map_init(&snap_ranges) == 0, "init");
	storm_handle(on_tick);
	caught = test_snapshot(false, ms);
	if (!expect_caught || !caught)
		caught += test_snapshot(true, ms);
	latch_map_destroy(&snap_map);
	latch_range_map_destroy(&snap_ranges);
	if (expect_caught) {
		CHECK(caught > 0,
		      "the mutant's batches never mixed two states: the test cannot fail");
		printf("test-find-many: the mutant was caught\n");
		return 0;
	}
	CHECK(caught == 0, "%lu batched lookups mixed two states of the map", caught);
	CHECK(handler_in_update > 0 || storm_period_ns() > 20000,
	      "no signal landed inside an update; nothing was tested there");
	printf("test-find-many: passed\n");
	return 0;
}
