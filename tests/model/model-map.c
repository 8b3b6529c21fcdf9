/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (f): the latched B+-tree map of <latch/map.h>, through its
 * own latch_map_commit() and latch_map_find() (and latch_map_load_sorted()
 * and latch_map_erase() to build the start): the real src/map.c and
 * src/btree-*.c, with the scalar (relaxed atomic) in-node count.
 *
 * The node capacity is lowered to 4, the pools are stocked from static
 * nodes, and a few C library calls are shimmed: model-btree.h.
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
 */
#include "model-btree.h"

#include <src/map.c>

static struct latch_map map;

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
	unsigned before = LATCH_LOAD_RELAXED(&latch_btree_of_map(&map)->seq.sequence);
	void *value = NULL;
	bool found = latch_map_find(&map, key, &value);
	unsigned after = LATCH_LOAD_RELAXED(&latch_btree_of_map(&map)->seq.sequence);

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
	struct latch_btree *core = latch_btree_of_map(&map);

	latch_map_init(&map);
	model_stock_pools(core);
	for (int i = 0; i < 5; i++)
		values[i] = value_of(keys[i]);
	/* {10, 20} and {30, 40, 50} under a root, then 50 goes. */
	assert(latch_map_load_sorted(&map, keys, values, 5) == 0);
	assert(latch_map_erase(&map, 50) == 0);
	start = LATCH_LOAD_RELAXED(&latch_btree_of_map(&map)->seq.sequence);
	always.until = MODEL_NEVER;
	l60.from = start + 1; /* inserted by the update */
	l60.until = MODEL_NEVER;
	free_leaves = core->pool[LATCH_BTREE_LEAF_POOL].free;
	free_inner = core->pool[LATCH_BTREE_INNER_POOL].free;
	w = model_spawn(writer, NULL);
	r = model_spawn(reader, NULL);
	model_join(w);
	model_join(r);
	/* The shape drawn above, with B and R of each copy taken back. */
	assert(core->pool[LATCH_BTREE_LEAF_POOL].free == free_leaves &&
	       core->pool[LATCH_BTREE_INNER_POOL].free == free_inner);
	assert(core->copy[0].height == 2 && core->copy[1].height == 2);
	latch_map_destroy(&map);
	return 0;
}
