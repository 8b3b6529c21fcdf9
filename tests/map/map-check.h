/* SPDX-License-Identifier: MIT */
/*
 * Test support for the latched map: a reference model (a sorted array)
 * and a checker of the B+-tree invariants of both copies.
 */
#ifndef LATCH_TESTS_MAP_CHECK_H
#define LATCH_TESTS_MAP_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <latch/map.h>

#include "btree.h"
#include "check.h"

/* ---- the model: keys in increasing order, with their values ---- */

struct model {
	uint64_t *keys;
	void **values;
	size_t n, cap;
	/*
	 * A batch failed after changing the idle copy, which undid its
	 * changes: the contents are the same, but the nodes of the two
	 * copies may now be shaped differently (until a bulk load).
	 */
	bool undone;
};

static inline void model_init(struct model *md, size_t cap)
{
	md->keys = malloc(cap * sizeof(*md->keys));
	md->values = malloc(cap * sizeof(*md->values));
	CHECK(md->keys && md->values, "out of memory");
	md->n = 0;
	md->cap = cap;
	md->undone = false;
}

static inline void model_free(struct model *md)
{
	free(md->keys);
	free(md->values);
}

/* Index of the first key >= @key. */
static inline size_t model_lower(const struct model *md, uint64_t key)
{
	size_t lo = 0, hi = md->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (md->keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline bool model_has(const struct model *md, uint64_t key)
{
	size_t i = model_lower(md, key);

	return i < md->n && md->keys[i] == key;
}

static inline void model_insert(struct model *md, uint64_t key, void *value)
{
	size_t i = model_lower(md, key);

	CHECK(md->n < md->cap, "model full");
	memmove(&md->keys[i + 1], &md->keys[i], (md->n - i) * sizeof(*md->keys));
	memmove(&md->values[i + 1], &md->values[i], (md->n - i) * sizeof(*md->values));
	md->keys[i] = key;
	md->values[i] = value;
	md->n++;
}

static inline void model_erase(struct model *md, uint64_t key)
{
	size_t i = model_lower(md, key);

	memmove(&md->keys[i], &md->keys[i + 1], (md->n - i - 1) * sizeof(*md->keys));
	memmove(&md->values[i], &md->values[i + 1], (md->n - i - 1) * sizeof(*md->values));
	md->n--;
}

/* ---- the invariants of both copies ---- */

/* One copy's entries in order, and what latch_btree_check() counted. */
struct shape {
	uint64_t *keys;   /* the entries in order */
	uintptr_t *slots; /* their values */
	uintptr_t *ends;  /* their ends (span trees: a range map's) */
	size_t n, cap;
	struct latch_btree_census census;
};

static inline void shape_add(void *ctx, const struct latch_btree_ent *e)
{
	struct shape *s = ctx;

	CHECK(s->n < s->cap, "more entries than the size says");
	s->keys[s->n] = e->key;
	s->slots[s->n] = e->slot;
	s->ends[s->n++] = e->end;
}

/*
 * Check both copies of the core @t, which must hold @n entries each, the
 * same ones (and, with @same_shape, in nodes of the same sizes), and the
 * pools.  Returns the shapes, valid until the next call.
 */
static inline const struct shape *check_copies(const struct latch_btree *t, size_t n,
                                               bool same_shape)
{
	static struct shape s[2];

	for (unsigned cp = 0; cp < 2; cp++) {
		const char *why = NULL;

		if (s[cp].cap < n + 1) {
			free(s[cp].keys);
			free(s[cp].slots);
			free(s[cp].ends);
			s[cp].cap = 2 * n + 16;
			s[cp].keys = malloc(s[cp].cap * sizeof(*s[cp].keys));
			s[cp].slots = malloc(s[cp].cap * sizeof(*s[cp].slots));
			s[cp].ends = malloc(s[cp].cap * sizeof(*s[cp].ends));
			CHECK(s[cp].keys && s[cp].slots && s[cp].ends, "out of memory");
		}
		s[cp].n = 0;
		s[cp].census.entry = shape_add;
		s[cp].census.ctx = &s[cp];
		CHECK(latch_btree_check(t, cp, &s[cp].census, &why) == 0, "copy %u: %s", cp, why);
	}
	CHECK(!same_shape || (s[0].census.shape == s[1].census.shape &&
	                      s[0].census.leaves == s[1].census.leaves &&
	                      s[0].census.inner == s[1].census.inner),
	      "the copies have different shapes");
	CHECK(s[0].n == n && s[1].n == n, "copies hold %zu and %zu entries, expected %zu", s[0].n,
	      s[1].n, n);
	for (size_t i = 0; i < n; i++)
		CHECK(s[0].keys[i] == s[1].keys[i] && s[0].slots[i] == s[1].slots[i] &&
		          s[0].ends[i] == s[1].ends[i],
		      "entry %zu differs between the copies", i);
	CHECK(t->pool[0].total - t->pool[0].free == s[0].census.inner + s[1].census.inner,
	      "inner pool: %zu nodes taken, copies use %zu", t->pool[0].total - t->pool[0].free,
	      s[0].census.inner + s[1].census.inner);
	CHECK(t->pool[1].total - t->pool[1].free == s[0].census.leaves + s[1].census.leaves,
	      "leaf pool: %zu nodes taken, copies use %zu", t->pool[1].total - t->pool[1].free,
	      s[0].census.leaves + s[1].census.leaves);
	return s;
}

/*
 * Check both copies, their equality (the same shape, unless a failed
 * batch was undone), the pools, and the model.
 */
static inline void check_map(const struct latch_map *m, const struct model *md)
{
	const struct shape *s = check_copies(latch_btree_of_map(m), md->n, !md->undone);

	for (size_t i = 0; i < md->n; i++) {
		CHECK(s[0].keys[i] == md->keys[i], "entry %zu: key %llu, model %llu", i,
		      (unsigned long long)s[0].keys[i], (unsigned long long)md->keys[i]);
		CHECK(s[0].slots[i] == (uintptr_t)md->values[i], "entry %zu: wrong value", i);
	}
}

/* Check every reader call at @x against the model. */
static inline void check_readers_at(const struct latch_map *m, const struct model *md, uint64_t x)
{
	size_t i = model_lower(md, x);
	bool has = i < md->n && md->keys[i] == x;
	uint64_t k = 0;
	void *v = NULL;

	CHECK(latch_map_find(m, x, &v) == has, "find(%llu)", (unsigned long long)x);
	CHECK(!has || v == md->values[i], "find(%llu): wrong value", (unsigned long long)x);
	/* ceil: index i; next: first key > x */
	CHECK(latch_map_ceil(m, x, &k, &v) == (i < md->n), "ceil(%llu)", (unsigned long long)x);
	CHECK(i == md->n || (k == md->keys[i] && v == md->values[i]), "ceil(%llu) = %llu",
	      (unsigned long long)x, (unsigned long long)k);
	size_t nx = has ? i + 1 : i;
	CHECK(latch_map_next(m, x, &k, &v) == (nx < md->n), "next(%llu)", (unsigned long long)x);
	CHECK(nx >= md->n || (k == md->keys[nx] && v == md->values[nx]), "next(%llu) = %llu",
	      (unsigned long long)x, (unsigned long long)k);
	/* floor: last key <= x; prev: last key < x */
	size_t fl = has ? i + 1 : i; /* keys[0..fl) are <= x */
	CHECK(latch_map_floor(m, x, &k, &v) == (fl > 0), "floor(%llu)", (unsigned long long)x);
	CHECK(fl == 0 || (k == md->keys[fl - 1] && v == md->values[fl - 1]), "floor(%llu) = %llu",
	      (unsigned long long)x, (unsigned long long)k);
	CHECK(latch_map_prev(m, x, &k, &v) == (i > 0), "prev(%llu)", (unsigned long long)x);
	CHECK(i == 0 || (k == md->keys[i - 1] && v == md->values[i - 1]), "prev(%llu) = %llu",
	      (unsigned long long)x, (unsigned long long)k);
	/* Out-parameters may be NULL. */
	CHECK(latch_map_floor(m, x, NULL, NULL) == (fl > 0), "floor without out-parameters");
}

static inline void check_readers(const struct latch_map *m, const struct model *md,
                                 struct test_rng *rng, unsigned probes)
{
	uint64_t k = 0;
	void *v = NULL;

	CHECK(latch_map_size(m) == md->n, "size %zu, model %zu", latch_map_size(m), md->n);
	CHECK(latch_map_first(m, &k, &v) == (md->n > 0), "first");
	CHECK(!md->n || (k == md->keys[0] && v == md->values[0]), "first = %llu",
	      (unsigned long long)k);
	CHECK(latch_map_last(m, &k, &v) == (md->n > 0), "last");
	CHECK(!md->n || (k == md->keys[md->n - 1] && v == md->values[md->n - 1]), "last = %llu",
	      (unsigned long long)k);
	for (unsigned p = 0; p < probes; p++) {
		uint64_t x;

		if (md->n && p % 2) {
			x = md->keys[test_rng_below(rng, (unsigned long)md->n)];
			x += (uint64_t)(p % 4) - 2; /* a key or a neighbour of one */
		} else {
			x = test_rng_next(rng) % (4 * (uint64_t)md->cap + 8);
		}
		check_readers_at(m, md, x);
	}
	check_readers_at(m, md, 0);
	check_readers_at(m, md, UINT64_MAX);
}

/* Bytes of node memory per entry, both copies and the pools' free nodes included. */
static inline double map_bytes_per_entry(const struct latch_btree *m)
{
	size_t bytes =
	    m->pool[0].total * m->pool[0].node_size + m->pool[1].total * m->pool[1].node_size;

	return m->copy[0].size ? (double)bytes / (double)m->copy[0].size : 0.0;
}

/*
 * Allocation failure injection for the tree core's allocator hook: set
 * latch_btree_alloc_hook_ to counting_alloc (keeping the real one in
 * real_alloc); the allocation numbered alloc_fail_at (from 0, counted in
 * alloc_calls) then fails.
 */
static __attribute__((unused)) long alloc_calls, alloc_fail_at = -1;
static __attribute__((unused)) void *(*real_alloc)(size_t, size_t);

static inline void *counting_alloc(size_t align, size_t size)
{
	if (alloc_calls++ == alloc_fail_at)
		return NULL;
	return real_alloc(align, size);
}

#endif /* LATCH_TESTS_MAP_CHECK_H */
