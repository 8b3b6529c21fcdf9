/* SPDX-License-Identifier: MIT */
/* latch-range: liblatch's address-range map, <latch/range.h>. */
#include <stdint.h>
#include <stdlib.h>

#include <latch/range.h>

#include "../bench.h"

struct latch_range_peer {
	struct latch_range_map map;
	struct latch_range *pool;
};

static void *latch_range_create(size_t capacity)
{
	struct latch_range_peer *p = bench_alloc_pooled(
	    sizeof(*p), offsetof(struct latch_range_peer, pool), capacity, sizeof(*p->pool));

	if (!p)
		return NULL;
	latch_range_map_init(&p->map);
	return p;
}

static void latch_range_destroy(void *peer)
{
	struct latch_range_peer *p = peer;

	free(p->pool);
	free(p);
}

static void latch_range_peer_insert(void *peer, size_t slot, long key)
{
	struct latch_range_peer *p = peer;
	struct latch_range *r = &p->pool[slot];

	/* A slot keeps its range for the whole run: written before first use only. */
	if (r->start != (uintptr_t)key) {
		r->start = (uintptr_t)key;
		r->end = (uintptr_t)key + BENCH_RANGE_LEN;
	}
	if (latch_range_insert(&p->map, r) != 0)
		abort(); /* an overlap: the driver's keys are wrong */
}

static void latch_range_peer_erase(void *peer, size_t slot)
{
	struct latch_range_peer *p = peer;

	latch_range_erase(&p->map, &p->pool[slot]);
}

BENCH_FIND_MANY(latch_range_find_many, struct latch_range_peer,
                latch_range_find(&p->map, (uintptr_t)key))

const struct bench_peer bench_range_peer_latch = {
	.name = "latch",
	.flags = BENCH_SHARED,
	.create = latch_range_create,
	.destroy = latch_range_destroy,
	.insert = latch_range_peer_insert,
	.erase = latch_range_peer_erase,
	.find_many = latch_range_find_many,
};
