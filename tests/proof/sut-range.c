/* SPDX-License-Identifier: MIT */
/*
 * The range map as a structure under test: key k is the range
 * [16k + 4, 16k + 12); a lookup of key k asks which range holds address
 * 16k + 8 and answers the key of the range found (from its start, so a
 * wrong range shows up as a wrong key).
 */
#include <string.h>

#include <latch/range.h>

#include "check.h"
#include "sut.h"

#define RANGE_STRIDE 16

struct sut_range {
	struct latch_range_map map;
	long keys;
	struct latch_range pool[]; /* pool[k]: [16k + 4, 16k + 12) */
};

static uintptr_t range_probe(long key)
{
	return (uintptr_t)key * RANGE_STRIDE + RANGE_STRIDE / 2;
}

/* The key a found range stands for, or a key no probe asks for when it is not one of the pool's. */
static long range_key(const struct latch_range *r, uintptr_t addr)
{
	if (!r || addr < r->start || addr >= r->end)
		return SUT_ABSENT;
	return r->start % RANGE_STRIDE == 4 ? (long)(r->start / RANGE_STRIDE) : -2;
}

static size_t range_size(long keys)
{
	return sizeof(struct sut_range) + (size_t)keys * sizeof(struct latch_range);
}

static void range_init(void *s, long keys)
{
	struct sut_range *t = s;

	memset(t, 0, range_size(keys));
	latch_range_map_init(&t->map);
	t->keys = keys;
	for (long k = 0; k < keys; k++) {
		t->pool[k].start = (uintptr_t)k * RANGE_STRIDE + 4;
		t->pool[k].end = (uintptr_t)k * RANGE_STRIDE + 12;
	}
}

static void range_insert(void *s, long key)
{
	struct sut_range *t = s;

	CHECK(latch_range_insert(&t->map, &t->pool[key]) == 0, "latch_range_insert(%ld) failed",
	      key);
}

static void range_erase(void *s, long key)
{
	struct sut_range *t = s;

	latch_range_erase(&t->map, &t->pool[key]);
}

static long range_find(const void *s, long key)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);

	return range_key(latch_range_find(&t->map, addr), addr);
}

static unsigned range_read_begin(const void *s)
{
	const struct sut_range *t = s;

	return latch_seq_read_begin(&t->map.tree.seq);
}

/* One attempt of latch_range_find() on copy (start & 1): bounds, then a floor descent. */
static long range_attempt(const void *s, unsigned start, long key)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);
	unsigned idx = start & 1u;

	if (!latch_range_admit_(&t->map, idx, &addr))
		return SUT_ABSENT;
	return range_key(
	    latch_range_of_(latch_tree_seek_in_copy_(&t->map.tree, idx, latch_range_order_, &addr,
	                                             NULL, LATCH_TREE_SEEK_FLOOR_)),
	    addr);
}

static bool range_read_retry(const void *s, unsigned start)
{
	const struct sut_range *t = s;

	return latch_seq_read_retry(&t->map.tree.seq, start);
}

/* A raw floor descent of copy @idx, bounded, counting its steps. */
static long range_descend(const void *s, unsigned idx, long key, unsigned *steps)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);
	const struct latch_rb_node *rb = latch_rb_root_node(&t->map.tree.tree[idx]);
	const struct latch_range *floor = NULL;

	for (*steps = 0; rb && *steps < LATCH_RB_MAX_DEPTH; ++*steps) {
		const struct latch_range *r = latch_range_of_(latch_tree_from_rb_(rb, idx));
		bool right = addr >= r->start;

		if (right)
			floor = r;
		rb = latch_rb_child(rb, right ? LATCH_RB_RIGHT : LATCH_RB_LEFT);
	}
	return range_key(floor, addr);
}

const struct sut_ops sut_range_map = SUT_LATCHED_OPS("range-map", range);
