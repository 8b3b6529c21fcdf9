/* SPDX-License-Identifier: MIT */
/*
 * branchless: one sorted array of uint64_t keys, searched without a
 * branch that depends on the keys (the "lower_bound with prefetch" loop:
 * base += (base[half] <= key) * half), with the values in a parallel
 * array and, as a range peer, the ends in a third.  The search reads 8
 * bytes per key, against sorted-latch's 16-byte ranges and its branchy
 * loop: a sorted array at its fastest, the reference for the map's
 * lookups.
 *
 * One copy and no synchronization (single thread only, like plain): the
 * writer shifts the arrays in place, O(n) per insert or erase.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../bench.h"

struct branchless {
	uint64_t *keys;      /* n keys (range starts), increasing */
	const long **values; /* values[i]: keys[i]'s, the pool entry of its slot */
	uint64_t *ends;      /* range peer: ends[i] ends keys[i]'s range; else NULL */
	size_t n;
	long *pool; /* slot i holds its key */
};

static void branchless_destroy(void *peer)
{
	struct branchless *p = peer;

	free(p->keys);
	free(p->values);
	free(p->ends);
	free(p->pool);
	free(p);
}

static void *branchless_create(size_t capacity, bool ranges)
{
	struct branchless *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	capacity = capacity ? capacity : 1;
	p->keys = malloc(capacity * sizeof(*p->keys));
	p->values = malloc(capacity * sizeof(*p->values));
	p->ends = ranges ? malloc(capacity * sizeof(*p->ends)) : NULL;
	p->pool = calloc(capacity, sizeof(*p->pool));
	if (!p->keys || !p->values || (ranges && !p->ends) || !p->pool) {
		branchless_destroy(p);
		return NULL;
	}
	return p;
}

static void *branchless_create_keys(size_t capacity)
{
	return branchless_create(capacity, false);
}

static void *branchless_create_ranges(size_t capacity)
{
	return branchless_create(capacity, true);
}

/*
 * The index of the greatest key <= @key among keys[0..n-1] (n >= 1), or 0
 * when there is none (keys[0] > key: the caller's check fails there too).
 * Each step moves base by (base[half] <= key) * half, a flag times a
 * length, so no branch depends on the keys (nothing to mispredict) and the
 * loop runs the same log2(n) steps for every key; the two places the next
 * step may read are prefetched, so at 10^6 keys the cache misses of two
 * steps overlap.
 */
static inline size_t branchless_floor(const uint64_t *keys, size_t n, uint64_t key)
{
	const uint64_t *base = keys;

	while (n > 1) {
		size_t half = n / 2;

		__builtin_prefetch(base + half / 2);
		__builtin_prefetch(base + half + half / 2);
		base += (base[half] <= key) * half;
		n -= half;
	}
	return (size_t)(base - keys);
}

/* What a lookup asks for. */
enum branchless_match {
	BRANCHLESS_EXACT, /* the key itself */
	BRANCHLESS_FLOOR, /* the greatest key <= it */
	BRANCHLESS_RANGE, /* the range holding it */
};

/* The value @match asks for at @key, or NULL; @match is a constant once inlined. */
static inline const long *branchless_lookup(const struct branchless *p, long key,
                                            enum branchless_match match)
{
	uint64_t k = (uint64_t)key;
	size_t i;
	bool hit;

	if (!p->n)
		return NULL;
	i = branchless_floor(p->keys, p->n, k);
	if (match == BRANCHLESS_EXACT)
		hit = p->keys[i] == k;
	else
		hit = p->keys[i] <= k && (match == BRANCHLESS_FLOOR || k < p->ends[i]);
	return hit ? p->values[i] : NULL;
}

BENCH_FIND_MANY(branchless_find_many, struct branchless,
                branchless_lookup(p, key, BRANCHLESS_EXACT))
BENCH_FIND_MANY(branchless_floor_many, struct branchless,
                branchless_lookup(p, key, BRANCHLESS_FLOOR))
BENCH_FIND_MANY(branchless_range_find_many, struct branchless,
                branchless_lookup(p, key, BRANCHLESS_RANGE))

/* Entry @i becomes slot @slot's key (and range). */
static void branchless_put(struct branchless *p, size_t i, size_t slot)
{
	p->keys[i] = (uint64_t)p->pool[slot];
	p->values[i] = &p->pool[slot];
	if (p->ends)
		p->ends[i] = (uint64_t)p->pool[slot] + BENCH_RANGE_LEN;
}

/* Moves entries [from, n) to start at @to, in every array. */
static void branchless_shift(struct branchless *p, size_t from, size_t to)
{
	size_t len = p->n - from;

	memmove(p->keys + to, p->keys + from, len * sizeof(*p->keys));
	memmove(p->values + to, p->values + from, len * sizeof(*p->values));
	if (p->ends)
		memmove(p->ends + to, p->ends + from, len * sizeof(*p->ends));
}

static void branchless_insert(void *peer, size_t slot, long key)
{
	struct branchless *p = peer;
	size_t at = 0; /* where @key goes: after every key below it */

	if (p->n) {
		at = branchless_floor(p->keys, p->n, (uint64_t)key);
		at += p->keys[at] < (uint64_t)key;
	}
	p->pool[slot] = key;
	branchless_shift(p, at, at + 1);
	p->n++;
	branchless_put(p, at, slot);
}

static void branchless_erase(void *peer, size_t slot)
{
	struct branchless *p = peer;
	size_t at = branchless_floor(p->keys, p->n, (uint64_t)p->pool[slot]);

	branchless_shift(p, at + 1, at);
	p->n--;
}

/* Orders pool entries by their keys, as uint64_t. */
static int branchless_slot_cmp(const void *a, const void *b)
{
	uint64_t x = (uint64_t) * *(const long *const *)a;
	uint64_t y = (uint64_t) * *(const long *const *)b;

	return (x > y) - (x < y);
}

/* Fill slots 0..n-1 from keys[0..n-1] (any order): sorted once, O(n log n). */
static void branchless_load(void *peer, const long *keys, size_t n)
{
	struct branchless *p = peer;

	memcpy(p->pool, keys, n * sizeof(*keys));
	for (size_t i = 0; i < n; i++)
		p->values[i] = &p->pool[i];
	qsort(p->values, n, sizeof(*p->values), branchless_slot_cmp);
	p->n = n;
	for (size_t i = 0; i < n; i++)
		branchless_put(p, i, (size_t)(p->values[i] - p->pool));
}

const struct bench_peer bench_peer_branchless = {
	.name = "branchless",
	.flags = BENCH_ANSWER_KEY,
	.create = branchless_create_keys,
	.destroy = branchless_destroy,
	.load = branchless_load,
	.insert = branchless_insert,
	.erase = branchless_erase,
	.find_many = branchless_find_many,
	.floor_many = branchless_floor_many,
};

const struct bench_peer bench_range_peer_branchless = {
	.name = "branchless",
	.flags = BENCH_ANSWER_RANGE,
	.create = branchless_create_ranges,
	.destroy = branchless_destroy,
	.load = branchless_load,
	.insert = branchless_insert,
	.erase = branchless_erase,
	.find_many = branchless_range_find_many,
};
