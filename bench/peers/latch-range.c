/* SPDX-License-Identifier: MIT */
/* latch-range: liblatch's address-range map, <latch/range.h>. */
#include <stdint.h>
#include <stdlib.h>

#include <latch/range.h>

#include "../bench.h"

struct latch_range_peer {
	struct latch_range_map map;
	long *pool; /* the start each slot holds */
};

static void *latch_range_create(size_t capacity)
{
	struct latch_range_peer *p = bench_alloc_pooled(
	    sizeof(*p), offsetof(struct latch_range_peer, pool), capacity, sizeof(*p->pool));

	if (p && latch_range_map_init(&p->map) != 0)
		abort();
	return p;
}

static void latch_range_destroy(void *peer)
{
	struct latch_range_peer *p = peer;

	latch_range_map_destroy(&p->map);
	free(p->pool);
	free(p);
}

static void latch_range_peer_insert(void *peer, size_t slot, long key)
{
	struct latch_range_peer *p = peer;

	p->pool[slot] = key;
	if (latch_range_insert(&p->map, (uintptr_t)key, (uintptr_t)key + BENCH_RANGE_LEN,
	                       &p->pool[slot], NULL) != 0)
		abort(); /* an overlap: the driver's keys are wrong */
}

static void latch_range_peer_erase(void *peer, size_t slot)
{
	struct latch_range_peer *p = peer;

	latch_range_erase(&p->map, (uintptr_t)p->pool[slot]);
}

/* One latch_range_load_sorted() of every range, keys increasing. */
static void latch_range_peer_load_sorted(void *peer, const long *keys, size_t n)
{
	struct latch_range_peer *p = peer;
	struct latch_range *r = malloc((n ? n : 1) * sizeof(*r));

	if (!r)
		abort();
	for (size_t i = 0; i < n; i++) {
		p->pool[i] = keys[i];
		r[i] = (struct latch_range){ (uintptr_t)keys[i],
			                     (uintptr_t)keys[i] + BENCH_RANGE_LEN, &p->pool[i] };
	}
	if (latch_range_load_sorted(&p->map, r, n, NULL) != 0)
		abort(); /* unsorted or overlapping: the driver's keys are wrong */
	free(r);
}

/* The range's value: the pool entry that holds its start. */
static inline const void *range_peer_find(const struct latch_range_peer *p, long key)
{
	struct latch_range r;

	return latch_range_find(&p->map, (uintptr_t)key, &r) ? r.value : NULL;
}

BENCH_FIND_MANY(range_peer_find_many, struct latch_range_peer, range_peer_find(p, key))
/* latch_range_find_many(): one call per batch, every answer from one state. */
BENCH_FIND_BATCH(range_peer_find_batch, struct latch_range_peer, {
	uintptr_t addrs[BENCH_MAX_LOOKUP_BATCH];
	struct latch_range out[BENCH_MAX_LOOKUP_BATCH];
	bool found[BENCH_MAX_LOOKUP_BATCH];

	for (size_t i = 0; i < k; i++)
		addrs[i] = (uintptr_t)keys[i];
	latch_range_find_many(&p->map, addrs, k, out, found);
	for (size_t i = 0; i < k; i++)
		answers[i] = found[i] ? out[i].value : NULL;
})

const struct bench_peer bench_range_peer_latch = {
	.name = "latch",
	.flags = BENCH_SHARED | BENCH_ANSWER_RANGE,
	.create = latch_range_create,
	.destroy = latch_range_destroy,
	.insert = latch_range_peer_insert,
	.erase = latch_range_peer_erase,
	.load_sorted = latch_range_peer_load_sorted,
	.find_many = range_peer_find_many,
	.find_batch = range_peer_find_batch,
};

/*
 * latch-deref: "latch" whose lookup also reads what the value points to
 * (the start in the pool entry, compared with the key), as a caller that
 * keeps its data behind the value must: the baseline a payload copy
 * replaces.
 */
static inline const void *deref_find(const struct latch_range_peer *p, long key)
{
	struct latch_range r;

	return latch_range_find(&p->map, (uintptr_t)key, &r) && *(const long *)r.value <= key
	           ? r.value
	           : NULL;
}

BENCH_FIND_MANY(deref_find_many, struct latch_range_peer, deref_find(p, key))

const struct bench_peer bench_range_peer_deref = {
	.name = "latch-deref",
	.flags = BENCH_SHARED | BENCH_ANSWER_RANGE,
	.create = latch_range_create,
	.destroy = latch_range_destroy,
	.insert = latch_range_peer_insert,
	.erase = latch_range_peer_erase,
	.find_many = deref_find_many,
};

/*
 * latch-payload16, latch-payload64: the same map made with
 * latch_range_map_init_payload(), each range holding a 16- or 64-byte
 * payload whose first word is the answer (the pool entry that holds its
 * start); a lookup is latch_range_find_payload(), copying the whole
 * payload out.  Beside "latch": what holding values by value costs.
 */
#define PAYLOAD_PEER(bytes)                                                                        \
	static void *payload##bytes##_create(size_t capacity)                                      \
	{                                                                                          \
		struct latch_range_peer *p =                                                       \
		    bench_alloc_pooled(sizeof(*p), offsetof(struct latch_range_peer, pool),        \
		                       capacity, sizeof(*p->pool));                                \
                                                                                                   \
		if (p && latch_range_map_init_payload(&p->map, bytes) != 0)                        \
			abort();                                                                   \
		return p;                                                                          \
	}                                                                                          \
                                                                                                   \
	static void payload##bytes##_insert(void *peer, size_t slot, long key)                     \
	{                                                                                          \
		struct latch_range_peer *p = peer;                                                 \
		uintptr_t w[bytes / sizeof(uintptr_t)] = { (uintptr_t)&p->pool[slot] };            \
                                                                                                   \
		p->pool[slot] = key;                                                               \
		if (latch_range_insert_payload(&p->map, (uintptr_t)key,                            \
		                               (uintptr_t)key + BENCH_RANGE_LEN, w, NULL) != 0)    \
			abort();                                                                   \
	}                                                                                          \
                                                                                                   \
	static inline const void *payload##bytes##_find(const struct latch_range_peer *p,          \
	                                                long key)                                  \
	{                                                                                          \
		uintptr_t w[bytes / sizeof(uintptr_t)];                                            \
                                                                                                   \
		return latch_range_find_payload(&p->map, (uintptr_t)key, NULL, w)                  \
		           ? (const void *)w[0]                                                    \
		           : NULL;                                                                 \
	}                                                                                          \
                                                                                                   \
	BENCH_FIND_MANY(payload##bytes##_find_many, struct latch_range_peer,                       \
	                payload##bytes##_find(p, key))                                             \
                                                                                                   \
	const struct bench_peer bench_range_peer_payload##bytes = {                                \
		.name = "latch-payload" #bytes,                                                    \
		.flags = BENCH_SHARED | BENCH_ANSWER_RANGE,                                        \
		.create = payload##bytes##_create,                                                 \
		.destroy = latch_range_destroy,                                                    \
		.insert = payload##bytes##_insert,                                                 \
		.erase = latch_range_peer_erase,                                                   \
		.find_many = payload##bytes##_find_many,                                           \
	};

PAYLOAD_PEER(16)
PAYLOAD_PEER(64)
