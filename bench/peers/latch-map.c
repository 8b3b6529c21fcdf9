/* SPDX-License-Identifier: MIT */
/*
 * latch-map: liblatch's latched B+-tree map (<latch/map.h>).  Each slot's
 * value is the address of its pool entry, so a hit is a non-NULL value;
 * the pool remembers each slot's key for erase().  No bulk load: the
 * structure is built by inserts, so workload 6 shows the memory of a map
 * grown by random inserts.
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

/* The value of @key, or NULL.  Never waits; any context. */
static inline void *map_find(const struct map_peer *p, long key)
{
	void *v;

	return latch_map_find(&p->map, (uint64_t)key, &v) ? v : NULL;
}

BENCH_FIND_MANY(map_find_many, struct map_peer, map_find(p, key))

const struct bench_peer bench_peer_latch_map = {
	.name = "latch-map",
	.flags = BENCH_SHARED,
	.create = map_create,
	.destroy = map_destroy,
	.insert = map_insert,
	.erase = map_erase,
	.find_many = map_find_many,
};
