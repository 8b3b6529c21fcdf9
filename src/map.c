/* SPDX-License-Identifier: MIT */
/*
 * The latched map: the B+-tree core with (key, value) leaves.  Its calls
 * translate into the core's changes and lookups; writers are serialized
 * by the caller (latch(3) says why the map has no lock of its own).
 */
#include <errno.h>

#include <latch/map.h>

#include "btree.h"

int latch_map_init(struct latch_map *m)
{
	latch_btree_init(latch_btree_of_map(m), false);
	return 0;
}

void latch_map_destroy(struct latch_map *m)
{
	latch_btree_destroy(latch_btree_of_map(m));
}

int latch_map_reserve(struct latch_map *m, size_t n)
{
	return latch_btree_reserve(latch_btree_of_map(m), n);
}

/* ---- writers ---- */

/* Change @i of the batch @src (an array of struct latch_map_change) as the core's. */
static void change_of(const void *src, size_t i, struct latch_btree_change *c)
{
	const struct latch_map_change *mc = &((const struct latch_map_change *)src)[i];

	switch (mc->op) {
	case LATCH_MAP_INSERT:
		c->op = LATCH_BTREE_INSERT;
		break;
	case LATCH_MAP_ERASE:
		c->op = LATCH_BTREE_ERASE;
		break;
	case LATCH_MAP_REPLACE:
		c->op = LATCH_BTREE_REPLACE;
		break;
	default:
		c->op = LATCH_BTREE_BAD_OP;
		break;
	}
	c->ent = (struct latch_btree_ent){ mc->key, (uintptr_t)mc->value, 0 };
}

int latch_map_commit(struct latch_map *m, const struct latch_map_change *changes, size_t n,
                     size_t *failed)
{
	size_t bad;
	int err =
	    latch_btree_commit(latch_btree_of_map(m), n, change_of, changes, &bad, NULL, NULL);

	if (err && failed)
		*failed = bad;
	return err;
}

int latch_map_insert(struct latch_map *m, uint64_t key, void *value)
{
	const struct latch_map_change c = { LATCH_MAP_INSERT, key, value };

	return latch_map_commit(m, &c, 1, NULL);
}

int latch_map_erase(struct latch_map *m, uint64_t key)
{
	const struct latch_map_change c = { LATCH_MAP_ERASE, key, NULL };

	return latch_map_commit(m, &c, 1, NULL);
}

/* The engine's removed entry, into the caller's value @ctx. */
static void put_value(void *ctx, size_t i, const struct latch_btree_ent *e)
{
	(void)i;
	*(void **)ctx = (void *)e->slot;
}

int latch_map_remove(struct latch_map *m, uint64_t key, void **removed)
{
	const struct latch_map_change c = { LATCH_MAP_ERASE, key, NULL };
	struct latch_btree_removed r = { put_value, removed, removed ? 1 : 0, 0 };
	size_t bad;

	return latch_btree_commit(latch_btree_of_map(m), 1, change_of, &c, &bad, NULL, &r);
}

int latch_map_replace(struct latch_map *m, uint64_t key, void *value)
{
	const struct latch_map_change c = { LATCH_MAP_REPLACE, key, value };

	return latch_map_commit(m, &c, 1, NULL);
}

struct load_src {
	const uint64_t *keys;
	void *const *values;
};

static void load_get(const void *src, size_t i, struct latch_btree_ent *e)
{
	const struct load_src *s = src;

	e->key = s->keys[i];
	e->slot = s->values ? (uintptr_t)s->values[i] : 0;
	e->end = 0;
}

int latch_map_load_sorted(struct latch_map *m, const uint64_t *keys, void *const *values, size_t n)
{
	const struct load_src src = { keys, values };

	if (n && !keys)
		return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (keys[i - 1] >= keys[i])
			return -EINVAL;
	return latch_btree_load(latch_btree_of_map(m), n, load_get, &src);
}

/* ---- readers ---- */

static bool lookup(const struct latch_map *m, uint64_t x, enum latch_btree_mode mode,
                   uint64_t *found, void **value)
{
	struct latch_btree_ent e;
	bool hit = latch_btree_lookup(latch_btree_of_map(m), x, mode, &e);

	if (hit && found)
		*found = e.key;
	if (hit && value)
		*value = (void *)e.slot;
	return hit;
}

bool latch_map_find(const struct latch_map *m, uint64_t key, void **value)
{
	return lookup(m, key, LATCH_BTREE_EXACT, NULL, value);
}

bool latch_map_floor(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return lookup(m, key, LATCH_BTREE_FLOOR, found, value);
}

bool latch_map_ceil(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return lookup(m, key, LATCH_BTREE_CEIL, found, value);
}

bool latch_map_first(const struct latch_map *m, uint64_t *found, void **value)
{
	return lookup(m, 0, LATCH_BTREE_CEIL, found, value);
}

bool latch_map_last(const struct latch_map *m, uint64_t *found, void **value)
{
	return lookup(m, UINT64_MAX, LATCH_BTREE_FLOOR, found, value);
}

bool latch_map_next(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return key != UINT64_MAX && lookup(m, key + 1, LATCH_BTREE_CEIL, found, value);
}

bool latch_map_prev(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return key != 0 && lookup(m, key - 1, LATCH_BTREE_FLOOR, found, value);
}

size_t latch_map_find_many(const struct latch_map *m, const uint64_t *keys, size_t n, void **values,
                           bool *found)
{
	struct latch_btree_ent e[LATCH_BTREE_MANY];
	size_t hits = 0;

	for (size_t at = 0; at < n; at += LATCH_BTREE_MANY) {
		size_t k = n - at < LATCH_BTREE_MANY ? n - at : LATCH_BTREE_MANY;

		hits += latch_btree_lookup_many(latch_btree_of_map(m), keys + at, k,
		                                LATCH_BTREE_EXACT, e, found + at);
		for (size_t i = 0; i < k; i++)
			if (found[at + i])
				values[at + i] = (void *)e[i].slot;
	}
	return hits;
}

size_t latch_map_size(const struct latch_map *m)
{
	return latch_btree_size(latch_btree_of_map(m));
}
