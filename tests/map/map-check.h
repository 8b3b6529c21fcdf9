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
};

static inline void model_init(struct model *md, size_t cap)
{
	md->keys = malloc(cap * sizeof(*md->keys));
	md->values = malloc(cap * sizeof(*md->values));
	CHECK(md->keys && md->values, "out of memory");
	md->n = 0;
	md->cap = cap;
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

/* ---- the invariants of one copy ---- */

struct shape {
	uint64_t *keys;   /* the entries in order */
	uintptr_t *slots; /* their values */
	uintptr_t *ends;  /* their ends (span trees: a range map's) */
	bool spans;
	size_t n, cap;
	unsigned long long sig; /* a hash of the shape: node sizes in visiting order */
	size_t leaves, inner;
	unsigned leaf_depth;
};

/*
 * Check the subtree @ref at @depth whose keys must lie in [lo, hi) (hi
 * only when @has_hi), append its entries to @s.
 */
static inline void check_node(struct shape *s, uintptr_t ref, unsigned depth, uint64_t lo,
                              bool has_hi, uint64_t hi, bool root)
{
	const struct latch_btree_node *n = latch_btree_node_(ref);
	bool leaf = ref & LATCH_BTREE_LEAF;
	unsigned c = 1;

	CHECK(n, "a NULL reference at depth %u", depth);
	CHECK(depth < LATCH_BTREE_MAX_DEPTH, "too deep");
	while (c < LATCH_BTREE_FANOUT && n->key[c] > n->key[c - 1])
		c++;
	for (unsigned i = c; i < LATCH_BTREE_FANOUT; i++)
		CHECK(n->key[i] == n->key[c - 1] && n->slot[i] == n->slot[c - 1],
		      "padding entry %u of a node with %u entries is not a copy of the last", i, c);
	if (!root)
		CHECK(c >= LATCH_BTREE_MIN, "a %s with %u entries (minimum %u)",
		      leaf ? "leaf" : "inner node", c, LATCH_BTREE_MIN);
	else if (!leaf)
		CHECK(c >= 2, "an inner root with %u children", c);
	s->sig = s->sig * 1000003u + c * 2u + leaf;
	for (unsigned i = 0; i < c; i++) {
		CHECK(n->key[i] >= lo, "key %llu below its bound %llu",
		      (unsigned long long)n->key[i], (unsigned long long)lo);
		CHECK(!has_hi || n->key[i] < hi, "key %llu not below its bound %llu",
		      (unsigned long long)n->key[i], (unsigned long long)hi);
	}
	if (leaf) {
		if (!s->leaves++)
			s->leaf_depth = depth;
		CHECK(depth == s->leaf_depth, "leaves at depths %u and %u", depth, s->leaf_depth);
		const uintptr_t *end = s->spans ? latch_btree_ends_(n) : NULL;

		for (unsigned i = c; end && i < LATCH_BTREE_FANOUT; i++)
			CHECK(end[i] == end[c - 1], "padding end %u is not a copy of the last", i);
		for (unsigned i = 0; i < c; i++) {
			CHECK(s->n < s->cap, "more entries than the size says");
			s->keys[s->n] = n->key[i];
			s->ends[s->n] = end ? end[i] : 0;
			s->slots[s->n++] = n->slot[i];
		}
		return;
	}
	s->inner++;
	for (unsigned i = 0; i < c; i++) {
		uintptr_t child = n->slot[i];
		bool last = i + 1 == c;

		CHECK(child, "inner entry %u has no child", i);
		/* The separator invariant (src/btree.c): a bound is its child's least key. */
		CHECK(latch_btree_node_(child)->key[0] == n->key[i],
		      "the bound of child %u is %llu, its first key %llu", i,
		      (unsigned long long)n->key[i],
		      (unsigned long long)latch_btree_node_(child)->key[0]);
		check_node(s, child, depth + 1, n->key[i], last ? has_hi : true,
		           last ? hi : n->key[i + 1], false);
	}
}

static inline void check_copy(const struct latch_map *m, unsigned cp, struct shape *s)
{
	s->n = 0;
	s->sig = 0;
	s->leaves = s->inner = 0;
	s->leaf_depth = 0;
	s->spans = m->spans;
	if (!m->copy[cp].root) {
		CHECK(m->copy[cp].size == 0 && m->copy[cp].height == 0,
		      "an empty copy with a size");
		return;
	}
	check_node(s, m->copy[cp].root, 0, 0, false, 0, true);
	CHECK(s->n == m->copy[cp].size, "copy %u has %zu entries, its size says %zu", cp, s->n,
	      m->copy[cp].size);
	CHECK(s->leaf_depth + 1 == m->copy[cp].height, "copy %u: height %zu, leaves at depth %u",
	      cp, m->copy[cp].height, s->leaf_depth);
	CHECK(latch_btree_node_(m->copy[cp].root)->key[0] == s->keys[0],
	      "copy %u: the root's first bound is not the least key", cp);
}

/*
 * Check both copies of @m, which must hold @n entries each, the same ones
 * (and, with @same_shape, in nodes of the same sizes), and the pools.
 * Returns the shapes, valid until the next call.
 */
static inline const struct shape *check_copies(const struct latch_map *m, size_t n, bool same_shape)
{
	static struct shape s[2];

	for (unsigned cp = 0; cp < 2; cp++) {
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
		check_copy(m, cp, &s[cp]);
	}
	CHECK(!same_shape ||
	          (s[0].sig == s[1].sig && s[0].leaves == s[1].leaves && s[0].inner == s[1].inner),
	      "the copies have different shapes");
	CHECK(s[0].n == n && s[1].n == n, "copies hold %zu and %zu entries, expected %zu", s[0].n,
	      s[1].n, n);
	for (size_t i = 0; i < n; i++)
		CHECK(s[0].keys[i] == s[1].keys[i] && s[0].slots[i] == s[1].slots[i] &&
		          s[0].ends[i] == s[1].ends[i],
		      "entry %zu differs between the copies", i);
	CHECK(m->pool[0].total - m->pool[0].free == s[0].inner + s[1].inner,
	      "inner pool: %zu nodes taken, copies use %zu", m->pool[0].total - m->pool[0].free,
	      s[0].inner + s[1].inner);
	CHECK(m->pool[1].total - m->pool[1].free == s[0].leaves + s[1].leaves,
	      "leaf pool: %zu nodes taken, copies use %zu", m->pool[1].total - m->pool[1].free,
	      s[0].leaves + s[1].leaves);
	return s;
}

/* Check both copies, their equality, the pools, and the model. */
static inline void check_map(const struct latch_map *m, const struct model *md)
{
	const struct shape *s = check_copies(m, md->n, true);

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
static inline double map_bytes_per_entry(const struct latch_map *m)
{
	size_t bytes =
	    m->pool[0].total * m->pool[0].node_size + m->pool[1].total * m->pool[1].node_size;

	return m->copy[0].size ? (double)bytes / (double)m->copy[0].size : 0.0;
}

/*
 * Allocation failure injection for the tree core's allocator hook: set
 * latch_btree_alloc_ to counting_alloc (keeping the real one in
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
