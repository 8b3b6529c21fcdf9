/* SPDX-License-Identifier: MIT */
/*
 * Range maps with payloads (latch_range_map_init_payload()).
 *
 * Without arguments: the calls and their errors (bad sizes, payload and
 * value calls on the wrong kind of map), each error leaving the map
 * unchanged; random sequences of insert_payload, store_payload (evicting
 * none or several, with room or not), erase_if_payload (the range as it
 * is, or with another end or payload), erase and remove against a model,
 * after each call the payload slots checked (every range has its own
 * slot of the pool, both copies agree, the free list holds exactly the
 * others) and every range's payload read back; allocation failure at
 * every allocation of inserts and stores (a new chunk of slots, of
 * nodes); reserve() covering the slots.
 *
 * "storm": reader threads, and a SIGPROF handler on the writer thread,
 * copy payloads out and keep them while the writer erases (by start or
 * by record) and re-inserts
 * ranges and stores shifted ones over them, so that slots are reused at
 * once by the same range or another.  Every copy must be one whole
 * payload the range held at some moment of the read: its words all
 * derive from one (start, end, generation), start and end are the range
 * found, and the generation lies between the ones published before and
 * after the read.  "storm --expect-caught" passes only if a bad copy is
 * seen: run against the library's mutants (src/range.c), it shows the
 * storm catches a payload copied after the re-check and a slot filled
 * after its range is published.
 *
 * Overrides: LATCH_TEST_RANGE_OPS (operations per seed, default 3000),
 * LATCH_TEST_SEEDS (default 3), LATCH_TEST_STORM_MS (default 1500; the
 * mutant runs stop at the first bad copy or after 20 times that).
 */
#define _GNU_SOURCE /* timer_create(SIGEV_THREAD_ID) */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <latch/range.h>

#include "map-check.h"
#include "range-private.h"
#include "signal-storm.h"

#define WORDS_MAX (LATCH_RANGE_PAYLOAD_MAX / 8)

/* Word @i of the payload identified by @seed. */
static uint64_t word_of(uint64_t seed, size_t i)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + i + 1;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static void fill(uint64_t *w, size_t size, uint64_t seed)
{
	for (size_t i = 0; i < size / 8; i++)
		w[i] = word_of(seed, i);
}

static bool is_payload(const uint64_t *w, size_t size, uint64_t seed)
{
	for (size_t i = 0; i < size / 8; i++)
		if (w[i] != word_of(seed, i))
			return false;
	return true;
}

static void check_slots(const struct latch_range_map *m)
{
	const char *why = "";
	int err = latch_range_check_payloads(m, &why);

	CHECK(err == 0, "payload slots: %d %s", err, why);
}

/* ---- the model: at most MODEL ranges in [0, SPACE) ---- */

#define SPACE 1024u
#define MODEL 256

struct model_range {
	uintptr_t start, end;
	uint64_t seed;
};

static struct model_range model[MODEL];
static size_t model_n;
static struct test_rng rng = { 2026 };

/* Index of the first model range that ends after @start; model_n if none. */
static size_t model_from(uintptr_t start)
{
	size_t i = 0;

	while (i < model_n && model[i].end <= start)
		i++;
	return i;
}

/* How many model ranges [start, end) overlaps, from index *@at. */
static size_t model_overlaps(uintptr_t start, uintptr_t end, size_t *at)
{
	size_t i = model_from(start), k = 0;

	*at = i;
	while (i + k < model_n && model[i + k].start < end)
		k++;
	return k;
}

static void model_put(size_t at, size_t evict, struct model_range r)
{
	memmove(&model[at + 1], &model[at + evict], (model_n - at - evict) * sizeof(model[0]));
	model[at] = r;
	model_n = model_n - evict + 1;
}

static void model_drop(size_t at)
{
	memmove(&model[at], &model[at + 1], (model_n - at - 1) * sizeof(model[0]));
	model_n--;
}

/* The map must hold the model's ranges and payloads, and nothing else. */
static void check_model(const struct latch_range_map *m, size_t size)
{
	uint64_t w[WORDS_MAX];
	struct latch_range r;

	check_slots(m);
	CHECK(latch_range_size(m) == model_n, "size %zu, model %zu", latch_range_size(m), model_n);
	for (size_t i = 0; i < model_n; i++) {
		const struct model_range *x = &model[i];
		uintptr_t at = x->start + (x->end - x->start) / 2;

		memset(w, 0, sizeof(w));
		CHECK(latch_range_find_payload(m, at, &r, w) && r.start == x->start &&
		          r.end == x->end && r.value == NULL && is_payload(w, size, x->seed),
		      "range [%zu, %zu) and its payload", (size_t)x->start, (size_t)x->end);
		CHECK(latch_range_find(m, x->end - 1, &r) && r.start == x->start && !r.value,
		      "a map with payloads reports no value");
	}
	for (int k = 0; k < 16; k++) {
		uintptr_t a = test_rng_below(&rng, SPACE + 8);
		size_t i = model_from(a);
		bool in = i < model_n && model[i].start <= a;

		CHECK(latch_range_find_payload(m, a, NULL, NULL) == in, "find at %zu", (size_t)a);
	}
}

/* One random change against the model; returns 1 when the map rejected it. */
static int one_change(struct latch_range_map *m, size_t size, uint64_t *next_seed)
{
	uint64_t w[WORDS_MAX];
	struct latch_range out[4], r;
	uintptr_t start = test_rng_below(&rng, SPACE), end = start + 1 + test_rng_below(&rng, 40);
	size_t at, k, n = 99, room;
	uint64_t seed = (*next_seed)++;
	int err;

	if (test_rng_below(&rng, 16) == 0)
		end = start; /* empty: -EINVAL */
	fill(w, size, seed);
	switch (test_rng_below(&rng, 5)) {
	case 0:
		k = model_overlaps(start, end, &at);
		err = latch_range_insert_payload(m, start, end, w, &r);
		if (end == start) {
			CHECK(err == -EINVAL, "insert of an empty range: %d", err);
		} else if (k) {
			CHECK(err == -EEXIST && r.start == model[at].start &&
			          r.end == model[at].end && !r.value,
			      "insert over a range: %d", err);
		} else {
			CHECK(err == 0, "insert: %d", err);
			model_put(at, 0, (struct model_range){ start, end, seed });
		}
		return err != 0;
	case 1:
		k = model_overlaps(start, end, &at);
		room = test_rng_below(&rng, 5);
		err = latch_range_store_payload(m, start, end, w, out, room, &n);
		if (end == start) {
			CHECK(err == -EINVAL && n == 0, "store of an empty range: %d", err);
		} else if (k > room) {
			CHECK(err == -ENOSPC && n == k, "store without room: %d, %zu", err, n);
			for (size_t i = 0; i < room; i++)
				CHECK(out[i].start == model[at + i].start && !out[i].value,
				      "evictions reported without room");
		} else {
			CHECK(err == 0 && n == k, "store: %d, %zu of %zu", err, n, k);
			for (size_t i = 0; i < k; i++)
				CHECK(out[i].start == model[at + i].start &&
				          out[i].end == model[at + i].end && !out[i].value,
				      "evicted range %zu", i);
			model_put(at, k, (struct model_range){ start, end, seed });
		}
		return err != 0;
	case 2: {
		/* A conditional erase: the range as it is, with another end or payload, or none. */
		struct model_range x = { start, end, seed };
		unsigned how = (unsigned)test_rng_below(&rng, 4);

		if (model_n && how) {
			x = model[test_rng_below(&rng, model_n)];
			x.end += how == 2;
			x.seed += how == 3;
		}
		fill(w, size, x.seed);
		at = model_from(x.start);
		bool there = at < model_n && model[at].start == x.start;
		bool same = there && model[at].end == x.end && model[at].seed == x.seed;

		err = latch_range_erase_if_payload(m, x.start, x.end, w);
		CHECK(err == (!there ? -ENOENT
		              : same ? 0
		                     : -ESTALE),
		      "erase_if at %zu: %d", (size_t)x.start, err);
		if (same)
			model_drop(at);
		return err != 0;
	}
	default:
		/* An erase or remove, mostly of a range there. */
		if (model_n && test_rng_below(&rng, 4))
			start = model[test_rng_below(&rng, model_n)].start;
		at = model_from(start);
		bool there = at < model_n && model[at].start == start;
		struct model_range x = there ? model[at] : (struct model_range){ 0, 0, 0 };

		memset(&r, 0x5a, sizeof(r));
		err = test_rng_below(&rng, 2) ? latch_range_erase(m, start)
		                              : latch_range_remove(m, start, &r);
		CHECK(err == (there ? 0 : -ENOENT), "erase at %zu: %d", (size_t)start, err);
		if (there) {
			CHECK(r.start == (uintptr_t)0x5a5a5a5a5a5a5a5aull ||
			          (r.start == x.start && r.end == x.end && !r.value),
			      "removed range");
			model_drop(at);
		}
		return err != 0;
	}
}

static long random_runs(size_t size, long ops, long seeds)
{
	struct latch_range_map m;
	uint64_t seed = 1;
	long rejected = 0;

	for (long s = 0; s < seeds; s++) {
		CHECK(latch_range_map_init_payload(&m, size) == 0, "init %zu", size);
		model_n = 0;
		for (long i = 0; i < ops; i++) {
			rejected += one_change(&m, size, &seed);
			check_model(&m, size);
		}
		latch_range_map_destroy(&m);
	}
	return rejected;
}

/* ---- the calls, their errors, allocation failure ---- */

static void test_calls(void)
{
	static const size_t bad[] = { 0, 4, 12, 257, 264, LATCH_RANGE_PAYLOAD_MAX + 8, SIZE_MAX };
	struct latch_range_map m, plain;
	struct latch_range r, ranges[1] = { { 1, 2, NULL } };
	struct latch_range_change c = { LATCH_RANGE_INSERT, { 100, 200, NULL } };
	uint64_t w[WORDS_MAX], got[WORDS_MAX];
	size_t failed = 99, n = 99;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(latch_range_map_init_payload(&m, bad[i]) == -EINVAL, "size %zu", bad[i]);
	CHECK(latch_range_map_init_payload(&m, 8) == 0 && latch_range_payload_size(&m) == 8,
	      "size 8");
	latch_range_map_destroy(&m);
	CHECK(latch_range_map_init_payload(&m, LATCH_RANGE_PAYLOAD_MAX) == 0, "the largest size");
	latch_range_map_destroy(&m);

	CHECK(latch_range_map_init_payload(&m, 24) == 0, "init 24");
	CHECK(latch_range_map_init(&plain) == 0 && latch_range_payload_size(&plain) == 0, "plain");
	fill(w, 24, 7);
	CHECK(latch_range_insert_payload(&m, 10, 20, w, NULL) == 0, "insert_payload");
	/* The caller's buffer is copied: changing it changes nothing in the map. */
	fill(w, 24, 8);
	memset(got, 0, sizeof(got));
	CHECK(latch_range_find_payload(&m, 19, &r, got) && r.start == 10 && r.end == 20 &&
	          !r.value && is_payload(got, 24, 7) && got[3] == 0,
	      "find_payload copies 24 bytes");
	CHECK(!latch_range_find_payload(&m, 20, &r, got) && r.start == 10, "end excluded");

	/* Errors: each leaves the map as it was. */
	CHECK(latch_range_insert_payload(&m, 30, 30, w, NULL) == -EINVAL, "empty range");
	CHECK(latch_range_insert_payload(&m, 30, 40, NULL, NULL) == -EINVAL, "NULL payload");
	CHECK(latch_range_insert(&m, 30, 40, w, NULL) == -EINVAL, "a value on a payload map");
	CHECK(latch_range_store(&m, 30, 40, w, NULL, 0, &n) == -EINVAL && n == 0,
	      "a stored value on a payload map");
	CHECK(latch_range_erase_if(&m, &(struct latch_range){ 10, 20, NULL }) == -EINVAL,
	      "erase_if compares values, which a payload map has not");
	CHECK(latch_range_commit(&m, &c, 1, &failed) == -EINVAL && failed == 0, "batch");
	CHECK(latch_range_load_sorted(&m, ranges, 1, &failed) == -EINVAL && failed == 0, "load");
	CHECK(latch_range_insert_payload(&m, 15, 40, w, &r) == -EEXIST && r.start == 10 &&
	          r.end == 20 && !r.value,
	      "collision, without its slot");
	CHECK(latch_range_store_payload(&m, 0, 40, w, NULL, 0, &n) == -ENOSPC && n == 1,
	      "store without room");
	CHECK(latch_range_erase_if_payload(&m, 10, 20, NULL) == -EINVAL, "erase_if, no payload");
	CHECK(latch_range_erase_if_payload(&m, 10, 21, got) == -ESTALE &&
	          latch_range_erase_if_payload(&m, 10, 20, w) == -ESTALE &&
	          latch_range_erase_if_payload(&m, 11, 20, got) == -ENOENT,
	      "erase_if_payload: another end, another payload, no range");
	CHECK(latch_range_erase_if_payload(&plain, 10, 20, got) == -EINVAL,
	      "erase_if_payload on a map without payloads");
	CHECK(latch_range_insert_payload(&plain, 1, 2, w, NULL) == -EINVAL &&
	          latch_range_store_payload(&plain, 1, 2, w, NULL, 0, &n) == -EINVAL && n == 0,
	      "a payload on a map without");
	CHECK(latch_range_size(&plain) == 0, "the plain map is unchanged");
	memset(got, 0, sizeof(got));
	CHECK(latch_range_size(&m) == 1 && latch_range_find_payload(&m, 10, NULL, got) &&
	          is_payload(got, 24, 7),
	      "the errors left the map unchanged");
	check_slots(&m);

	/* A store evicts, reports without slots, and frees the slot for the next change. */
	CHECK(latch_range_store_payload(&m, 5, 15, w, &r, 1, &n) == 0 && n == 1 && r.start == 10 &&
	          r.end == 20 && !r.value,
	      "store_payload evicts");
	check_slots(&m);
	CHECK(latch_range_erase_if_payload(&m, 5, 15, w) == 0,
	      "erase_if_payload of the range as it is");
	CHECK(latch_range_insert_payload(&m, 5, 15, w, NULL) == 0, "insert again");
	CHECK(latch_range_remove(&m, 5, &r) == 0 && r.start == 5 && r.end == 15 && !r.value,
	      "remove");
	CHECK(latch_range_size(&m) == 0, "empty again");
	check_slots(&m);
	/* find_payload on a map without payloads copies nothing. */
	CHECK(latch_range_insert(&plain, 1, 2, &r, NULL) == 0, "plain insert");
	memset(got, 0x33, sizeof(got));
	CHECK(latch_range_find_payload(&plain, 1, &r, got) && r.value == &r && got[0] == got[1],
	      "a map without payloads: the value, no bytes");
	latch_range_map_destroy(&plain);
	latch_range_map_destroy(&m);
}

/*
 * Run @fn with the k-th allocation failing for k = 0, 1, ... until it
 * succeeds; returns how many failed (allocations made before a failure
 * stay in the pools, so each failure is at a new allocation).
 */
static long every_failure(struct latch_range_map *m, size_t size, int (*fn)(void *), void *arg)
{
	for (long k = 0;; k++) {
		int r;

		alloc_calls = 0;
		alloc_fail_at = k;
		r = fn(arg);
		alloc_fail_at = -1;
		if (r == 0)
			return k;
		CHECK(r == -ENOMEM, "allocation failure %ld gave %d", k, r);
		check_model(m, size);
	}
}

struct call {
	struct latch_range_map *m;
	uintptr_t start, end;
	const uint64_t *w;
	size_t n;
};

static int call_insert(void *arg)
{
	struct call *c = arg;

	return latch_range_insert_payload(c->m, c->start, c->end, c->w, NULL);
}

static int call_store(void *arg)
{
	struct call *c = arg;
	struct latch_range out[64];

	return latch_range_store_payload(c->m, c->start, c->end, c->w, out, 64, &c->n);
}

static int call_reserve(void *arg)
{
	struct call *c = arg;

	return latch_range_reserve(c->m, c->n);
}

static void test_enomem(size_t size)
{
	struct latch_range_map m;
	uint64_t w[WORDS_MAX];
	long most = 0;

	real_alloc = latch_btree_alloc_hook_;
	latch_btree_alloc_hook_ = counting_alloc;
	CHECK(latch_range_map_init_payload(&m, size) == 0, "init");
	model_n = 0;
	/* Inserts, 4 apart: each chunk of slots and of nodes runs out in turn. */
	for (uintptr_t i = 0; i < 200; i++) {
		struct call c = { &m, 4 * i, 4 * i + 2, w, 0 };
		long made;

		fill(w, size, 1000 + i);
		made = every_failure(&m, size, call_insert, &c);
		most = made > most ? made : most;
		model_put(model_n, 0, (struct model_range){ c.start, c.end, 1000 + i });
	}
	CHECK(most >= 2, "no insert failed at both a chunk of slots and one of nodes");
	/* Stores evicting 5 ranges each: their slot, their nodes. */
	for (uintptr_t i = 0; i < 30; i++) {
		struct call c = { &m, 20 * i + 1, 20 * i + 19, w, 0 };
		size_t at, k = model_overlaps(c.start, c.end, &at);

		fill(w, size, 5000 + i);
		every_failure(&m, size, call_store, &c);
		CHECK(c.n == k && k == 5, "store evicted %zu, expected %zu", c.n, k);
		model_put(at, k, (struct model_range){ c.start, c.end, 5000 + i });
	}
	check_model(&m, size);
	/* reserve() covers the slots: no allocation up to that many ranges. */
	struct call r = { &m, 0, 0, w, 1000 };

	every_failure(&m, size, call_reserve, &r);
	alloc_calls = 0;
	alloc_fail_at = 0;
	for (uintptr_t s = 4096; model_n < 1000 && model_n < MODEL; s += 2) {
		fill(w, size, s);
		CHECK(latch_range_insert_payload(&m, s, s + 1, w, NULL) == 0,
		      "insert after reserve");
		model_put(model_n, 0, (struct model_range){ s, s + 1, s });
	}
	CHECK(alloc_calls == 0, "%ld allocations after reserve()", alloc_calls);
	alloc_fail_at = -1;
	check_model(&m, size);
	latch_btree_alloc_hook_ = real_alloc;
	latch_range_map_destroy(&m);
}

/* ---- the storm ---- */

#define CELLS    128u
#define CELL     64u /* address space per cell */
#define STORM_SZ 64u /* payload bytes */
#define HOLD     64u /* copies each reader keeps */

/*
 * The payload of generation @gen of a range [start, end): word 0 the
 * start, 1 the end, 2 the generation, the rest derived from all three.
 */
static void storm_fill(uint64_t *w, uint64_t start, uint64_t end, uint64_t gen)
{
	w[0] = start;
	w[1] = end;
	w[2] = gen;
	for (size_t i = 3; i < STORM_SZ / 8; i++)
		w[i] = word_of(start ^ (end << 20) ^ (gen << 40), i);
}

static bool storm_whole(const uint64_t *w)
{
	for (size_t i = 3; i < STORM_SZ / 8; i++)
		if (w[i] != word_of(w[0] ^ (w[1] << 20) ^ (w[2] << 40), i))
			return false;
	return true;
}

static struct latch_range_map storm_map;
static _Atomic uint64_t published[CELLS]; /* the newest generation of each cell, once written */
static atomic_bool storm_stop;
static atomic_long bad_copies, handler_reads, handler_mid_update;
static atomic_int in_update; /* the writer is inside a call (its own handler reads it) */
static bool expect_caught;

/*
 * One read of cell @c: returns false for a bad copy.  Async-signal-safe.
 * A copy is good when it is one whole payload of the range found and its
 * generation was the cell's at some moment of the read: at least the one
 * published before, at most the one after the one published after (the
 * writer publishes a generation once its call returns).
 */
static bool read_cell(unsigned c, uint64_t *w, struct latch_range *r, bool *hit)
{
	uint64_t lo = atomic_load_explicit(&published[c], memory_order_acquire), hi;

	*hit = latch_range_find_payload(&storm_map, (uintptr_t)c * CELL + 20, r, w);
	hi = atomic_load_explicit(&published[c], memory_order_acquire);
	if (!*hit)
		return true;
	return storm_whole(w) && w[0] == r->start && w[1] == r->end && w[2] >= lo &&
	       w[2] <= hi + 1 && r->start / CELL == c;
}

static void on_sigprof(int sig)
{
	static unsigned next; /* this handler runs on the writer thread only */
	uint64_t w[STORM_SZ / 8];
	struct latch_range r;
	bool hit;

	(void)sig;
	storm_tick();
	if (!read_cell(next++ % CELLS, w, &r, &hit)) {
		SIG_CHECK(expect_caught, "a bad payload copy");
		atomic_fetch_add_explicit(&bad_copies, 1, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&handler_reads, 1, memory_order_relaxed);
	if (atomic_load_explicit(&in_update, memory_order_relaxed))
		atomic_fetch_add_explicit(&handler_mid_update, 1, memory_order_relaxed);
}

struct held {
	struct latch_range r;
	uint64_t w[STORM_SZ / 8];
};

static void *reader(void *arg)
{
	struct test_rng rr = { (uintptr_t)arg * 7919 + 1 };
	static _Thread_local struct held hold[HOLD];
	long reads = 0, hits = 0, n = 0;

	while (!atomic_load_explicit(&storm_stop, memory_order_relaxed)) {
		struct held *h = &hold[n % HOLD];
		bool hit;

		if (!read_cell((unsigned)test_rng_below(&rr, CELLS), h->w, &h->r, &hit)) {
			CHECK(expect_caught,
			      "a bad payload copy: [%zu, %zu) holds (%llu, %llu, gen %llu)",
			      (size_t)h->r.start, (size_t)h->r.end, (unsigned long long)h->w[0],
			      (unsigned long long)h->w[1], (unsigned long long)h->w[2]);
			atomic_fetch_add_explicit(&bad_copies, 1, memory_order_relaxed);
		}
		reads++;
		hits += hit;
		n += hit;
	}
	/* What it kept is its own: still whole, nothing to free. */
	for (long i = 0; i < (n < (long)HOLD ? n : (long)HOLD); i++)
		CHECK(expect_caught || (storm_whole(hold[i].w) && hold[i].w[0] == hold[i].r.start),
		      "a kept copy changed");
	/* A mutant may be caught before a reader's first read: then it has nothing to show. */
	CHECK(expect_caught || hits > 0, "reader %zu found nothing in %ld reads",
	      (size_t)(uintptr_t)arg, reads);
	return (void *)(intptr_t)reads;
}

/* Cell @c's range, generation @gen: at the cell's start, or shifted by 8 for odd generations. */
static void cell_range(unsigned c, uint64_t gen, uintptr_t *start, uintptr_t *end)
{
	*start = (uintptr_t)c * CELL + (gen % 2 ? 8 : 0);
	*end = *start + 40 + (uintptr_t)(gen % 3) * 4;
}

static int storm(void)
{
	long ms = test_env_long("LATCH_TEST_STORM_MS", 1500);
	struct timespec t0, now;
	pthread_t th[2];
	uint64_t gen[CELLS], w[STORM_SZ / 8];
	struct test_rng wr = { 99 };
	long changes = 0, reads = 0;

	CHECK(latch_range_map_init_payload(&storm_map, STORM_SZ) == 0, "init");
	for (unsigned c = 0; c < CELLS; c++) {
		uintptr_t s, e;

		gen[c] = 2;
		cell_range(c, gen[c], &s, &e);
		storm_fill(w, s, e, gen[c]);
		CHECK(latch_range_insert_payload(&storm_map, s, e, w, NULL) == 0, "fill");
		atomic_store(&published[c], gen[c]);
	}
	for (uintptr_t i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, reader, (void *)i) == 0, "pthread_create");
	storm_handle(on_sigprof);
	timer_t timer = storm_start(50000);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		unsigned c = (unsigned)test_rng_below(&wr, CELLS);
		uint64_t g = gen[c] + 1;
		uintptr_t s, e, old_s, old_e;
		size_t n = 0;
		struct latch_range ev;
		int err;

		cell_range(c, gen[c], &old_s, &old_e);
		cell_range(c, g, &s, &e);
		storm_fill(w, s, e, g);
		atomic_store_explicit(&in_update, 1, memory_order_relaxed);
		if (test_rng_below(&wr, 2)) {
			/* Erase (by record or by start), then insert: the slot just freed is the one taken. */
			uint64_t old_w[STORM_SZ / 8];

			storm_fill(old_w, old_s, old_e, gen[c]);
			err = test_rng_below(&wr, 2)
			          ? latch_range_erase_if_payload(&storm_map, old_s, old_e, old_w)
			          : latch_range_erase(&storm_map, old_s);
			err = err ? err : latch_range_insert_payload(&storm_map, s, e, w, NULL);
		} else {
			/* A store over it: a new slot, then the old one freed for the next change. */
			err = latch_range_store_payload(&storm_map, s, e, w, &ev, 1, &n);
			CHECK(err || (n == 1 && ev.start == old_s), "store evicted %zu", n);
		}
		atomic_store_explicit(&in_update, 0, memory_order_relaxed);
		CHECK(err == 0, "writer: %d", err);
		gen[c] = g;
		atomic_store_explicit(&published[c], g, memory_order_release);
		changes++;
		storm_progress();
		clock_gettime(CLOCK_MONOTONIC, &now);
		long el = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (expect_caught ? atomic_load(&bad_copies) > 0 || el > 20 * ms : el > ms)
			break;
	}
	timer_delete(timer);
	signal(STORM_SIGNAL, SIG_IGN);
	atomic_store(&storm_stop, true);
	for (int i = 0; i < 2; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		reads += (long)(intptr_t)ret;
	}
	check_slots(&storm_map);
	latch_range_map_destroy(&storm_map);
	printf("test-range-payload storm: %ld changes, %ld thread reads, %ld handler reads "
	       "(%ld mid-update), %ld bad copies\n",
	       changes, reads, atomic_load(&handler_reads), atomic_load(&handler_mid_update),
	       atomic_load(&bad_copies));
	if (expect_caught) {
		CHECK(atomic_load(&bad_copies) > 0, "the mutant was not caught");
		printf("test-range-payload storm: the mutant was caught\n");
		return 0;
	}
	CHECK(changes > 100 && reads > 100, "too little work to show anything");
	CHECK(atomic_load(&handler_reads) > 0, "no signal handler read");
	return 0;
}

int main(int argc, char **argv)
{
	long ops = test_env_long("LATCH_TEST_RANGE_OPS", 3000);
	long seeds = test_env_long("LATCH_TEST_SEEDS", 3);
	static const size_t sizes[] = { 8, 24, 64, LATCH_RANGE_PAYLOAD_MAX };

	if (argc > 1 && strcmp(argv[1], "storm") == 0) {
		expect_caught = argc > 2 && strcmp(argv[2], "--expect-caught") == 0;
		return storm();
	}
	test_calls();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		long rejected = random_runs(sizes[i], ops / 2, seeds);

		CHECK(rejected > 0, "no call was rejected: the error cases went untested");
		printf("test-range-payload: %ld changes with %zu-byte payloads checked (%ld "
		       "rejected)\n",
		       seeds * ops / 2, sizes[i], rejected);
	}
	test_enomem(24);
	test_enomem(LATCH_RANGE_PAYLOAD_MAX);
	printf("test-range-payload: passed\n");
	return 0;
}
