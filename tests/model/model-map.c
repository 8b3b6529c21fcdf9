/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (f): the latched B+-tree map of <latch/map.h>, through its
 * own latch_map_commit() and latch_map_find() (and latch_map_load_sorted()
 * and latch_map_erase() to build the start): the real src/map.c and
 * src/btree.c, with the scalar (relaxed atomic) in-node count.
 *
 * Node capacity.  A reader inside a node that the writer is rewriting
 * loads every key of it with an independent relaxed load, each of which
 * may read the old or the new key: 2^16 executions per node and lookup at
 * the real capacity of 16 (one split under one lookup, without the node
 * reuse below, took 262147 executions and 8.5 minutes).  src/btree.h has
 * no switch for the capacity,
 * so run.sh checks this harness on a copy of the sources in which its
 * two constants are lowered (LATCH_BTREE_FANOUT 16 -> 4, LATCH_BTREE_MIN
 * 8 -> 2) by the same textual rewrite it uses for mutants; no other line
 * changes, and every loop and bound of the map is written in terms of
 * them.  The harness refuses to compile on the unrewritten sources.
 *
 * Scenario (keys k map to the value 1000 + k, never dereferenced).  Built
 * by main() before any thread starts: a root R over two leaves with two
 * keys each, in both copies.  The writer makes one update, a batch of
 * three changes (one flip):
 *
 *	      R                      A                           R
 *	    /   \      erase 20             insert 50, 60      /   \
 *	 A{10,20} B{30,40}  -->  A{10,30,40}      -->      A{10,30}  B{40,50,60}
 *
 * Erasing 20 leaves A with one key: it merges with B, B goes back to the
 * leaf pool, and R, left with one child, goes back to the inner pool (A
 * becomes the root).  Inserting 50 fills A; inserting 60 splits it, which
 * takes a leaf (B again, the last one freed) and a new root (R again).
 * So in the replay, on the copy readers have just left, B and R are freed
 * and reused while a reader that started before the flip may still be
 * inside them (design.md 7.2, 7.4): it may load new keys and references
 * into a node it reached as something else, or R's free-list link
 * (another inner node of the pool, whose slots are 0), and must stop at
 * the 0, stay in pool memory of the right kind, and fail its retry check.
 *
 * The reader looks up 30 (present throughout; it moves from B to A, and B
 * is reused without it) and then 60 (inserted by the update), each
 * checked against the oracle of model.h (the harness reads the map's
 * counter) and, when found, for its value.  Two lookups: a lookup of 20
 * (erased) or 40 as well multiplies the executions (32143 for 30 and 20)
 * and catches nothing more.
 *
 * Shims, none of which runs concurrently with a reader or orders anything:
 * the pools are stocked from static nodes (zero, as a new chunk is after
 * latch_btree_pool_reserve() zeroes it, and published to both threads by
 * their creation) with the real latch_btree_pool_give(), so no update
 * allocates a chunk (64 nodes of zeroing stores per chunk would make every
 * execution slow; the allocation hook asserts that none is asked for);
 * memcpy() and memset() (GenMC takes memcpy() only with a length known at
 * compile time, and rejects the map's memset() of a whole struct; run.sh
 * compiles this harness with -fno-builtin-memcpy -fno-builtin-memset)
 * copy the writer's private entry arrays word by word
 * and clear a struct latch_map field by field; qsort() (the batch's
 * validation sorts a private array of three) is an insertion sort, and
 * bsearch() (used only by latch_map_load_sorted(), which GenMC's C library
 * lacks) a linear search.
 * LATCH_BTREE_NO_SIMD selects the scalar count, as in a ThreadSanitizer
 * build: the SIMD counts' plain vector loads are outside C11 (design.md
 * 7.7), and the relaxed-atomic count is its reference.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

/* The shims: see the file comment. */
static void model_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base;

	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp(b + (j - 1) * size, b + j * size) > 0; j--)
			for (size_t k = 0; k < size; k++) {
				char t = b[(j - 1) * size + k];

				b[(j - 1) * size + k] = b[j * size + k];
				b[j * size + k] = t;
			}
}

#define qsort model_qsort

static void *model_bsearch(const void *key, const void *base, size_t n, size_t size,
                           int (*cmp)(const void *, const void *))
{
	for (size_t i = 0; i < n; i++)
		if (!cmp(key, (const char *)base + i * size))
			return (void *)((const char *)base + i * size);
	return NULL;
}

#define bsearch model_bsearch

void *memcpy(void *dst, const void *src, size_t n)
{
	assert(n % sizeof(uint64_t) == 0); /* arrays of struct ent only */
	for (size_t i = 0; i < n / sizeof(uint64_t); i++)
		((uint64_t *)dst)[i] = ((const uint64_t *)src)[i];
	return dst;
}

#define LATCH_BTREE_NO_SIMD 1

#include <latch/map.h>

void *memset(void *dst, int c, size_t n)
{
	struct latch_map *m = dst;

	/* Only latch_map_init() and latch_map_destroy() call it, on a whole map. */
	assert(c == 0 && n == sizeof(*m));
	m->seq.sequence = 0;
	for (int i = 0; i < 2; i++) {
		m->copy[i].root = 0;
		m->copy[i].size = 0;
		m->copy[i].height = 0;
		m->pool[i].free_list = NULL;
		m->pool[i].chunks = NULL;
		m->pool[i].total = 0;
		m->pool[i].free = 0;
		m->pool[i].node_size = 0;
	}
	m->spans = false;
	return dst;
}

#include <src/btree.c>
#include <src/map.c>

_Static_assert(LATCH_BTREE_FANOUT == 4 && LATCH_BTREE_MIN == 2,
               "model-map.c runs on the copy of the sources run.sh makes (file comment)");

/* Nodes each pool is stocked with: more than the updates here can take. */
#define MODEL_STOCK 12

static struct latch_map map;
static struct latch_btree_node stock[2][MODEL_STOCK];

/* The allocation hook: scratch arrays only, never a chunk of nodes. */
static void *model_alloc(size_t align, size_t size)
{
	assert(size < LATCH_BTREE_CHUNK * sizeof(struct latch_btree_node));
	return aligned_alloc(align, size);
}

static void *value_of(uint64_t key)
{
	return (void *)(uintptr_t)(1000 + key);
}

/* Lifetimes (model.h), set by main(). */
static struct model_life always, l60;

/*
 * latch_map_find() of @key, checked by model_check(): @life is when the
 * key is in the map.
 */
static void model_find(uint64_t key, const struct model_life *life)
{
	/* The harness's own look at the counter: relaxed, it orders nothing. */
	unsigned before = LATCH_LOAD_RELAXED(&map.seq.sequence);
	void *value = NULL;
	bool found = latch_map_find(&map, key, &value);
	unsigned after = LATCH_LOAD_RELAXED(&map.seq.sequence);

	assert(!found || value == value_of(key)); /* the key's own value */
	model_check(before, after, &life, 1, found ? 0 : -1);
}

static void *writer(void *arg)
{
	/* One update: the replay frees B and R and takes them back at once. */
	const struct latch_map_change batch[] = {
		{ LATCH_MAP_ERASE, 20, NULL },
		{ LATCH_MAP_INSERT, 50, value_of(50) },
		{ LATCH_MAP_INSERT, 60, value_of(60) },
	};

	(void)arg;
	assert(latch_map_commit(&map, batch, 3, NULL) == 0);
	return NULL;
}

/*
 * One reader.  30 comes first: its first attempt carries no
 * synchronization from an earlier one, so only the flip's release store
 * and the reader's acquire load of the count order the idle copy's
 * changes before it (design.md 3.2 W2, 3.3 R1), and only the flip's
 * release fence and the reader's acquire fence make it see the flip after
 * loading a relaxed key or value the replay stored (W3, R3 + R4): keys and
 * values are relaxed, and a stale reader's acquire load of a reference
 * may read one stored before the flip.
 */
static void *reader(void *arg)
{
	(void)arg;
	model_find(30, &always);
	model_find(60, &l60);
	return NULL;
}

int main(void)
{
	const uint64_t keys[] = { 10, 20, 30, 40, 50 };
	void *values[5];
	pthread_t r, w;
	unsigned start;
	size_t free_leaves, free_inner;

	latch_map_init(&map);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < MODEL_STOCK; i++) {
			latch_btree_pool_give(&map.pool[k], &stock[k][i]);
			map.pool[k].total++;
		}
	latch_btree_alloc_ = model_alloc;
	for (int i = 0; i < 5; i++)
		values[i] = value_of(keys[i]);
	/* {10, 20} and {30, 40, 50} under a root, then 50 goes. */
	assert(latch_map_load_sorted(&map, keys, values, 5) == 0);
	assert(latch_map_erase(&map, 50) == 0);
	start = LATCH_LOAD_RELAXED(&map.seq.sequence);
	always.until = MODEL_NEVER;
	l60.from = start + 1; /* inserted by the update */
	l60.until = MODEL_NEVER;
	free_leaves = map.pool[LEAF].free;
	free_inner = map.pool[INNER].free;
	w = model_spawn(writer, NULL);
	r = model_spawn(reader, NULL);
	model_join(w);
	model_join(r);
	/* The shape drawn above, with B and R of each copy taken back. */
	assert(map.pool[LEAF].free == free_leaves && map.pool[INNER].free == free_inner);
	assert(map.copy[0].height == 2 && map.copy[1].height == 2);
	latch_map_destroy(&map);
	return 0;
}
