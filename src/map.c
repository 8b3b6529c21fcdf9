/* SPDX-License-Identifier: MIT */
/*
 * The latched map: the B+-tree core (btree.c) with (key, value) leaves,
 * and batches validated per key before the first copy is touched.
 */
#include <errno.h>
#include <stdlib.h>

#include <latch/map.h>

#include "btree.h"

static bool contains(const struct latch_map *m, uint64_t key)
{
	struct latch_btree_ent e;
	bool bad;

	return latch_btree_attempt_(m, latch_seq_write_begin(&m->seq), key, LATCH_BTREE_EXACT, &e,
	                            &bad);
}

int latch_map_reserve(struct latch_map *m, size_t n)
{
	return latch_btree_reserve_(m, n);
}

/* ---- validation and batches ---- */

/* A change's key and its index in the batch, for sorting. */
struct keyed {
	uint64_t key;
	size_t idx;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The error of change @c when its key is @present, 0 if it is valid. */
static int change_error(const struct latch_map_change *c, bool present)
{
	switch (c->op) {
	case LATCH_MAP_INSERT:
		return present ? -EEXIST : 0;
	case LATCH_MAP_ERASE:
	case LATCH_MAP_REPLACE:
		return present ? 0 : -ENOENT;
	}
	return -EINVAL;
}

/*
 * Check @changes in order against the map as the earlier ones leave it.
 * Changes of different keys do not affect each other, so each key's
 * changes are checked in batch order, and the error of the lowest index
 * wins.  Returns 0 or the error, with *@bad its change's index.
 */
static int validate(const struct latch_map *m, const struct latch_map_change *changes, size_t n,
                    size_t *bad)
{
	struct keyed *sorted;
	size_t first = n;
	int err = 0;

	sorted = latch_btree_alloc_(_Alignof(struct keyed), n * sizeof(*sorted));
	if (!sorted) {
		*bad = n;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		sorted[i].key = changes[i].key;
		sorted[i].idx = i;
	}
	qsort(sorted, n, sizeof(*sorted), keyed_cmp);
	for (size_t i = 0; i < n;) {
		bool present = contains(m, sorted[i].key);
		size_t j = i;

		for (; j < n && sorted[j].key == sorted[i].key; j++) {
			const struct latch_map_change *c = &changes[sorted[j].idx];
			int e = change_error(c, present);

			if (e) {
				if (sorted[j].idx < first) {
					first = sorted[j].idx;
					err = e;
				}
				while (j + 1 < n && sorted[j + 1].key == sorted[i].key)
					j++;
			}
			present = c->op != LATCH_MAP_ERASE;
		}
		i = j;
	}
	free(sorted);
	*bad = first;
	return err;
}

struct batch {
	const struct latch_map_change *changes;
	size_t n;
};

static void apply_batch(struct latch_map *m, unsigned cp, const void *ctx)
{
	const struct batch *b = ctx;

	for (size_t i = 0; i < b->n; i++) {
		const struct latch_map_change *c = &b->changes[i];

		if (c->op == LATCH_MAP_INSERT) {
			const struct latch_btree_ent x = { c->key, (uintptr_t)c->value, 0 };

			latch_btree_insert_(m, cp, &x);
		} else if (c->op == LATCH_MAP_ERASE) {
			latch_btree_erase_(m, cp, c->key);
		} else {
			latch_btree_replace_(m, cp, c->key, (uintptr_t)c->value);
		}
	}
}

/* One change and its spot in each copy, found while it is checked. */
struct single {
	const struct latch_map_change *change;
	struct latch_btree_spot spot[2];
};

static void apply_single(struct latch_map *m, unsigned cp, const void *ctx)
{
	const struct single *s = ctx;
	const struct latch_map_change *c = s->change;

	if (c->op == LATCH_MAP_INSERT) {
		const struct latch_btree_ent x = { c->key, (uintptr_t)c->value, 0 };

		latch_btree_insert_at_(m, cp, &s->spot[cp], &x);
	} else if (c->op == LATCH_MAP_ERASE) {
		latch_btree_erase_at_(m, cp, &s->spot[cp]);
	} else {
		latch_btree_replace_at_(&s->spot[cp], (uintptr_t)c->value);
	}
}

/*
 * One change: one descent of both copies checks it and finds where it
 * goes in each (reserving nodes changes no copy, and each copy is changed
 * only by its own half of the update, so both spots stay valid).
 */
static int commit_one(struct latch_map *m, const struct latch_map_change *c)
{
	struct single s; /* not zeroed: latch_btree_locate_both_() fills the spots */
	int err;

	s.change = c;
	err = change_error(c, latch_btree_locate_both_(m, c->key, s.spot));
	if (!err && c->op == LATCH_MAP_INSERT && latch_btree_reserve_inserts_(m, 1, 1))
		err = -ENOMEM;
	if (!err)
		latch_btree_write_(m, apply_single, &s);
	return err;
}

int latch_map_commit(struct latch_map *m, const struct latch_map_change *changes, size_t n,
                     size_t *failed)
{
	const struct batch b = { changes, n };
	size_t bad, inserts = 0;
	int err;

	if (!n)
		return 0;
	if (n == 1) {
		err = commit_one(m, changes);
		if (err && failed)
			*failed = err == -ENOMEM ? 1 : 0;
		return err;
	}
	err = validate(m, changes, n, &bad);
	for (size_t i = 0; !err && i < n; i++)
		inserts += changes[i].op == LATCH_MAP_INSERT;
	if (!err && latch_btree_reserve_inserts_(m, inserts, inserts)) {
		bad = n;
		err = -ENOMEM;
	}
	if (err) {
		if (failed)
			*failed = bad;
		return err;
	}
	latch_btree_write_(m, apply_batch, &b);
	return 0;
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

int latch_map_replace(struct latch_map *m, uint64_t key, void *value)
{
	const struct latch_map_change c = { LATCH_MAP_REPLACE, key, value };

	return latch_map_commit(m, &c, 1, NULL);
}

/* ---- bulk load ---- */

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
	return latch_btree_load_(m, n, load_get, &src);
}

/* ---- set-up ---- */

int latch_map_init(struct latch_map *m)
{
	latch_btree_init_(m, false);
	return 0;
}

void latch_map_destroy(struct latch_map *m)
{
	latch_btree_destroy_(m);
}

/* ---- readers ---- */

static bool lookup(const struct latch_map *m, uint64_t x, enum latch_btree_mode mode,
                   uint64_t *found, void **value)
{
	struct latch_btree_ent e;
	bool hit = latch_btree_lookup_(m, x, mode, &e);

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

size_t latch_map_size(const struct latch_map *m)
{
	return latch_btree_size_(m);
}
