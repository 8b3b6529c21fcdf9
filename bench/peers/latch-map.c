/* SPDX-License-Identifier: MIT */
/*
 * latch-map: liblatch's latched B+-tree map (<latch/map.h>).  Each slot's
 * value is the address of its pool entry, so a hit is a non-NULL value;
 * the pool remembers each slot's key for erase().  The driver builds it
 * by inserts (so workload 6 shows the memory of a map grown by random
 * inserts); workload 9 measures latch_map_load_sorted() beside them.
 */
#include <stdint.h>

#include <latch/map.h>

#include "../bench.h"

struct map_peer {
	struct latch_map map;
	long *pool; /* slot i's key */
};

static void *map_create(size_t capacity)
{
	struct map_peer *p =
	    bench_alloc_pooled(sizeof(*p), offsetof(struct map_peer, pool), capacity, sizeof(long));

	if (p && latch_map_init(&p->map) != 0) {
		free(p->pool);
		free(p);
		return NULL;
	}
	return p;
}

static void map_destroy(void *peer)
{
	struct map_peer *p = peer;

	latch_map_destroy(&p->map);
	free(p->pool);
	free(p);
}

static void map_insert(void *peer, size_t slot, long key)
{
	struct map_peer *p = peer;

	p->pool[slot] = key;
	if (latch_map_insert(&p->map, (uint64_t)key, &p->pool[slot]) != 0)
		abort(); /* out of memory or a driver error: the measurement would be meaningless */
}

static void map_erase(void *peer, size_t slot)
{
	struct map_peer *p = peer;

	if (latch_map_erase(&p->map, (uint64_t)p->pool[slot]) != 0)
		abort(); /* a driver error */
}

static void map_commit(void *peer, const size_t *slots, size_t n, bool insert)
{
	struct map_peer *p = peer;
	struct latch_map_change changes[BENCH_MAX_BATCH];

	if (n > BENCH_MAX_BATCH)
		abort(); /* a driver error */
	for (size_t i = 0; i < n; i++) {
		changes[i].op = insert ? LATCH_MAP_INSERT : LATCH_MAP_ERASE;
		changes[i].key = (uint64_t)p->pool[slots[i]];
		changes[i].value = &p->pool[slots[i]];
	}
	if (latch_map_commit(&p->map, changes, n, NULL) != 0)
		abort(); /* out of memory or a driver error */
}

static void map_load_sorted(void *peer, const long *keys, size_t n)
{
	struct map_peer *p = peer;
	uint64_t *map_keys = malloc((n ? n : 1) * sizeof(*map_keys));
	void **values = malloc((n ? n : 1) * sizeof(*values));

	if (!map_keys || !values)
		abort(); /* out of memory: the measurement would be meaningless */
	for (size_t i = 0; i < n; i++) {
		p->pool[i] = keys[i];
		map_keys[i] = (uint64_t)keys[i]; /* positive: long and uint64_t order alike */
		values[i] = &p->pool[i];
	}
	if (latch_map_load_sorted(&p->map, map_keys, values, n) != 0)
		abort(); /* out of memory or unsorted keys: a driver error */
	free(values);
	free(map_keys);
}

/* The value of @key, or NULL.  Never waits; any context. */
static inline void *map_find(const struct map_peer *p, long key)
{
	void *v;

	return latch_map_find(&p->map, (uint64_t)key, &v) ? v : NULL;
}

/* The value of the greatest key <= @key, or NULL.  Never waits; any context. */
static inline void *map_floor(const struct map_peer *p, long key)
{
	void *v;

	return latch_map_floor(&p->map, (uint64_t)key, NULL, &v) ? v : NULL;
}

BENCH_FIND_MANY(map_find_many, struct map_peer, map_find(p, key))
/* latch_map_find_many(): one call per batch, every answer from one state. */
BENCH_FIND_BATCH(map_find_batch, struct map_peer, {
	void *values[BENCH_MAX_LOOKUP_BATCH];
	bool found[BENCH_MAX_LOOKUP_BATCH];

	latch_map_find_many(&p->map, keys, k, values, found);
	for (size_t i = 0; i < k; i++)
		answers[i] = found[i] ? values[i] : NULL;
})
BENCH_FIND_MANY(map_floor_many, struct map_peer, map_floor(p, key))

const struct bench_peer bench_peer_latch_map = {
	.name = "latch-map",
	.flags = BENCH_SHARED | BENCH_ANSWER_KEY,
	.create = map_create,
	.destroy = map_destroy,
	.insert = map_insert,
	.erase = map_erase,
	.load_sorted = map_load_sorted,
	.find_many = map_find_many,
	.find_batch = map_find_batch,
	.floor_many = map_floor_many,
	.commit = map_commit,
};
