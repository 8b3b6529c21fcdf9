/* SPDX-License-Identifier: MIT */
/*
 * The latched map as a structure under test: key k maps to the value
 * k + 1 (so a wrong entry shows up as a wrong key).  The map's nodes come
 * from the structure's own bytes: init() points the map's allocator at
 * them and reserves every node the key space can need, so a writer never
 * allocates afterwards and the whole map lives wherever the harness put
 * the structure (a MAP_SHARED arena for the single-step harness).
 */
#include <stdint.h>
#include <string.h>

#include <latch/map.h>

#include "btree.h"
#include "check.h"
#include "sut.h"

struct sut_map {
	struct latch_map map;
	long keys;
	struct sut_arena arena;
	_Alignas(64) unsigned char heap[];
};

/* Where the next allocation comes from; only sut_arena_run() allocates. */
static struct sut_arena *arena;

static void *arena_alloc(size_t align, size_t size)
{
	size_t at = (arena->used + align - 1) / align * align;

	if (at + size > arena->room)
		return NULL;
	arena->used = at + size;
	return arena->heap + at;
}

void sut_arena_run(struct sut_arena *a, void (*fn)(void *ctx), void *ctx)
{
	void *(*saved)(size_t, size_t) = latch_btree_alloc_hook_;

	arena = a;
	latch_btree_alloc_hook_ = arena_alloc;
	fn(ctx);
	latch_btree_alloc_hook_ = saved;
}

size_t sut_arena_bytes(long keys, size_t leaf_size)
{
	/* Chunks of 64 nodes for both copies' leaves (>= 8 entries) and inner nodes, with room. */
	size_t chunks = (size_t)keys / 128 + 8;

	return chunks * (LATCH_BTREE_CHUNK + 1) * leaf_size;
}

static size_t map_size(long keys)
{
	return sizeof(struct sut_map) + sut_arena_bytes(keys, sizeof(struct latch_btree_node));
}

static void map_reserve(void *ctx)
{
	struct sut_map *t = ctx;

	CHECK(latch_map_init(&t->map) == 0 && latch_map_reserve(&t->map, (size_t)t->keys) == 0,
	      "the map's nodes do not fit its arena");
}

static void map_init(void *s, long keys)
{
	struct sut_map *t = s;

	memset(t, 0, sizeof(*t));
	t->keys = keys;
	t->arena = (struct sut_arena){ 0, sut_arena_bytes(keys, sizeof(struct latch_btree_node)),
		                       t->heap };
	sut_arena_run(&t->arena, map_reserve, t);
}

static void map_insert(void *s, long key)
{
	struct sut_map *t = s;

	CHECK(latch_map_insert(&t->map, (uint64_t)key, (void *)(uintptr_t)(key + 1)) == 0,
	      "latch_map_insert(%ld) failed", key);
}

static void map_erase(void *s, long key)
{
	struct sut_map *t = s;

	CHECK(latch_map_erase(&t->map, (uint64_t)key) == 0, "latch_map_erase(%ld) failed", key);
}

/* The key a found value stands for. */
static long value_key(bool hit, void *v)
{
	return hit ? (long)(uintptr_t)v - 1 : SUT_ABSENT;
}

static long map_find(const void *s, long key)
{
	const struct sut_map *t = s;
	void *v = NULL;
	bool hit = latch_map_find(&t->map, (uint64_t)key, &v);

	return value_key(hit, v);
}

static unsigned map_read_begin(const void *s)
{
	const struct sut_map *t = s;

	return latch_seq_read_begin(&latch_btree_of_map(&t->map)->seq);
}

static long map_attempt(const void *s, unsigned start, long key)
{
	const struct sut_map *t = s;
	struct latch_btree_ent e;
	bool bad, hit = latch_btree_attempt(latch_btree_of_map(&t->map), start, (uint64_t)key,
	                                    LATCH_BTREE_EXACT, &e, &bad);

	return bad ? -2 : value_key(hit, (void *)e.slot);
}

static bool map_read_retry(const void *s, unsigned start)
{
	const struct sut_map *t = s;

	return latch_seq_read_retry(&latch_btree_of_map(&t->map)->seq, start);
}

/*
 * A raw descent of copy @idx, counting its levels.  It answers the key it
 * found, not the value's: in the copy being changed, a leaf being
 * rewritten may pair a key with its neighbour's value between the two
 * stores of an entry, and only the retry check makes key and value agree.
 * What a raw descent must show is that it ends, within the cap, on keys
 * that are in the copy.
 */
static long map_descend(const void *s, unsigned idx, long key, unsigned *steps)
{
	const struct sut_map *t = s;
	uintptr_t ref = LATCH_LOAD_ACQUIRE(&latch_btree_of_map(&t->map)->copy[idx].root);

	*steps = 0;
	while (ref && !(ref & LATCH_BTREE_LEAF) && *steps < LATCH_BTREE_MAX_DEPTH) {
		const struct latch_btree_node *n = latch_btree_node_(ref);
		unsigned c = latch_btree_count_le_(n, (uint64_t)key);

		ref = LATCH_LOAD_ACQUIRE(&n->slot[c - (c != 0)]);
		++*steps;
	}
	if (!(ref & LATCH_BTREE_LEAF))
		return SUT_ABSENT;
	const struct latch_btree_node *leaf = latch_btree_node_(ref);
	unsigned pos = latch_btree_count_lt_(leaf, (uint64_t)key);

	pos -= pos == LATCH_BTREE_FANOUT;
	if (LATCH_LOAD_RELAXED(&leaf->key[pos]) != (uint64_t)key)
		return SUT_ABSENT;
	return key;
}

const struct sut_ops sut_latch_map = SUT_LATCHED_OPS("latch-map", map);

/* Keys of the harnesses' batched lookup: the one asked for and its successors. */
#define BATCH 16

/*
 * The map's batched lookup as the harnesses' complete lookup:
 * latch_map_find_many() of @key and its BATCH - 1 successors (present and
 * absent ones alike), answering for @key, so that every harness checks
 * batches as it checks single lookups: at every instruction of the
 * writer (single-step), in handlers (storm), for linearizability.  Each
 * other answer of the batch must be its own key's (a hit's value is its
 * key + 1), or the lookup answers -3, which no harness accepts.  That a
 * batch's answers come from one state is tests/api/test-find-many.c's.
 */
static long map_batch_find(const void *s, long key)
{
	const struct sut_map *t = s;
	uint64_t keys[BATCH];
	void *values[BATCH];
	bool found[BATCH];

	for (unsigned i = 0; i < BATCH; i++)
		keys[i] = (uint64_t)key + i;
	latch_map_find_many(&t->map, keys, BATCH, values, found);
	for (unsigned i = 1; i < BATCH; i++)
		if (found[i] && value_key(true, values[i]) != key + (long)i)
			return -3;
	return value_key(found[0], values[0]);
}

const struct sut_ops sut_latch_map_batch = {
	.name = "latch-map-batch",
	.size = map_size,
	.init = map_init,
	.insert = map_insert,
	.erase = map_erase,
	.find = map_batch_find,
	.read_begin = map_read_begin,
	.read_attempt = map_attempt,
	.read_retry = map_read_retry,
	.copies = 2,
	.descend = map_descend,
};

/*
 * Broken maps the harnesses must catch, each missing one piece of the
 * technique on the read side (the writer is the library's own):
 *
 *   map-wrong-copy  readers search copy !(count & 1): the copy being changed.
 *   map-skip-retry  readers never discard an attempt that overlapped a flip.
 */
static long map_wrong_copy_attempt(const void *s, unsigned start, long key)
{
	return map_attempt(s, start ^ 1u, key); /* the bug */
}

static long map_wrong_copy_find(const void *s, long key)
{
	return sut_find_by_attempts(&sut_mutant_map_wrong_copy, s, key);
}

static long map_skip_retry_find(const void *s, long key)
{
	return sut_find_by_attempts(&sut_mutant_map_skip_retry, s, key);
}

/* The map's table with a mutant's find, attempt and retry. */
#define SUT_MAP_MUTANT(name_, find_, attempt_, retry_)                                             \
	{                                                                                          \
		.name = (name_), .size = map_size, .init = map_init, .insert = map_insert,         \
		.erase = map_erase, .find = (find_), .read_begin = map_read_begin,                 \
		.read_attempt = (attempt_), .read_retry = (retry_), .copies = 2,                   \
		.descend = map_descend,                                                            \
	}

const struct sut_ops sut_mutant_map_wrong_copy = SUT_MAP_MUTANT(
    "mutant-map-wrong-copy", map_wrong_copy_find, map_wrong_copy_attempt, map_read_retry);
const struct sut_ops sut_mutant_map_skip_retry =
    SUT_MAP_MUTANT("mutant-map-skip-retry", map_skip_retry_find, map_attempt, sut_never_retry);
