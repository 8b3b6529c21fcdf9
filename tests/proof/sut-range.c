/* SPDX-License-Identifier: MIT */
/*
 * The range map as a structure under test: key k is the range
 * [16k + 4, 16k + 12) with value k + 1; a lookup of key k asks which
 * range holds address 16k + 8 and answers the key of the range found
 * (from its start, checked against its end and value, so a wrong range
 * or a torn entry shows up as a wrong key).  Its nodes come from the
 * structure's own bytes, as the latched map's do (sut-map.c).
 *
 * The writer uses every kind of change: an erase is latch_range_erase(),
 * latch_range_remove() or latch_range_erase_if() (by the key), and an
 * insert of key k is followed, when key k + 1 is present, by a
 * latch_range_store() of k + 1's own range over it: one eviction and one
 * insert in one update, during which k + 1, present before and after,
 * must be found at every instruction (a gap between the eviction and the
 * insert would show).
 *
 * "range-payload" is the same map made with latch_range_map_init_payload():
 * each range holds a 32-byte payload (its start, end, value k + 1 and a
 * checksum of the three), inserted and stored with the payload calls,
 * erased by erase or remove, and looked up with latch_range_find_payload();
 * an attempt copies the payload out of the slot the leaf entry names, as
 * that call does, and a payload that is not the range's own, whole, is a
 * wrong key.  Its slots come from the arena too.
 */
#include <string.h>

#include <latch/range.h>

#include "btree.h"
#include "check.h"
#include "sut.h"

#define RANGE_STRIDE  16
#define PAYLOAD_WORDS 4

struct sut_range {
	struct latch_range_map map;
	long keys;
	bool payload; /* range-payload */
	struct sut_arena arena;
	_Alignas(64) unsigned char heap[];
};

static uintptr_t range_probe(long key)
{
	return (uintptr_t)key * RANGE_STRIDE + RANGE_STRIDE / 2;
}

/* The key the range [start, end) with @value stands for, or -2 when it is none of the pool's. */
static long range_key(bool hit, uintptr_t start, uintptr_t end, uintptr_t value, uintptr_t addr)
{
	long k = (long)(start / RANGE_STRIDE);

	if (!hit || addr < start || addr >= end)
		return SUT_ABSENT;
	if (start % RANGE_STRIDE != 4 || end != start + 8 || value != (uintptr_t)k + 1)
		return -2;
	return k;
}

/* The payload of the range [start, end) with @value. */
static void payload_of(uint64_t *w, uint64_t start, uint64_t end, uint64_t value)
{
	w[0] = start;
	w[1] = end;
	w[2] = value;
	w[3] = (start ^ (end << 16) ^ (value << 32)) * 0x9e3779b97f4a7c15ull;
}

/* The value @w holds if it is the whole payload of [start, end), else 0 (no key's). */
static uintptr_t payload_value(const uint64_t *w, uintptr_t start, uintptr_t end)
{
	uint64_t x[PAYLOAD_WORDS];

	payload_of(x, start, end, w[2]);
	return memcmp(x, w, sizeof(x)) == 0 ? (uintptr_t)w[2] : 0;
}

static size_t leaf_bytes(void)
{
	return sizeof(struct latch_btree_span_leaf);
}

/* The arena: the nodes, and (range-payload) chunks of 64 slots for keys + 1 ranges, with room. */
static size_t arena_bytes(long keys, bool payload)
{
	size_t slots = payload ? ((size_t)keys / LATCH_BTREE_CHUNK + 2) *
	                             (LATCH_BTREE_CHUNK * sizeof(uint64_t[PAYLOAD_WORDS]) + 128)
	                       : 0;

	return sut_arena_bytes(keys, leaf_bytes()) + slots;
}

static size_t range_size(long keys)
{
	return sizeof(struct sut_range) + arena_bytes(keys, false);
}

static size_t payload_size(long keys)
{
	return sizeof(struct sut_range) + arena_bytes(keys, true);
}

static void range_reserve(void *ctx)
{
	struct sut_range *t = ctx;
	int err = t->payload
	              ? latch_range_map_init_payload(&t->map, sizeof(uint64_t[PAYLOAD_WORDS]))
	              : latch_range_map_init(&t->map);

	/* One more than the keys: a store into a full map reserves for one more. */
	CHECK(err == 0 && latch_range_reserve(&t->map, (size_t)t->keys + 1) == 0,
	      "the range map's nodes do not fit its arena");
}

static void init(void *s, long keys, bool payload)
{
	struct sut_range *t = s;

	memset(t, 0, sizeof(*t));
	t->keys = keys;
	t->payload = payload;
	t->arena = (struct sut_arena){ 0, arena_bytes(keys, payload), t->heap };
	sut_arena_run(&t->arena, range_reserve, t);
}

static void range_init(void *s, long keys)
{
	init(s, keys, false);
}

static void payload_init(void *s, long keys)
{
	init(s, keys, true);
}

/*
 * A writer call that changes nothing, so that the map adopts itself in a
 * forked writer before its first update.  Not in the arena: the adoption
 * rebuilds the idle copy from nodes the map holds, and its scratch
 * buffers are malloc()ed and freed, as in any other writer call.
 */
static void range_writer_start(void *s)
{
	struct sut_range *t = s;

	CHECK(latch_range_reserve(&t->map, (size_t)t->keys) == 0,
	      "the range map could not be adopted after fork");
}

/* The range that stands for @key. */
static struct latch_range range_of_key(long key)
{
	uintptr_t start = (uintptr_t)key * RANGE_STRIDE + 4;

	return (struct latch_range){ start, start + 8, (void *)(uintptr_t)(key + 1) };
}

static void range_insert(void *s, long key)
{
	struct sut_range *t = s;
	struct latch_range r = range_of_key(key), next = range_of_key(key + 1), evicted;
	size_t n = 0;

	uint64_t w[PAYLOAD_WORDS];

	payload_of(w, r.start, r.end, (uintptr_t)r.value);
	CHECK((t->payload ? latch_range_insert_payload(&t->map, r.start, r.end, w, NULL)
	                  : latch_range_insert(&t->map, r.start, r.end, r.value, NULL)) == 0,
	      "latch_range_insert(%ld) failed", key);
	/* Key k + 1's range stored over itself: evicted and inserted in one update. */
	if (key + 1 < t->keys && latch_range_find(&t->map, next.start, NULL)) {
		payload_of(w, next.start, next.end, (uintptr_t)next.value);
		CHECK((t->payload ? latch_range_store_payload(&t->map, next.start, next.end, w,
		                                              &evicted, 1, &n)
		                  : latch_range_store(&t->map, next.start, next.end, next.value,
		                                      &evicted, 1, &n)) == 0 &&
		          n == 1 && evicted.start == next.start && evicted.end == next.end &&
		          evicted.value == (t->payload ? NULL : next.value),
		      "latch_range_store(%ld) over itself failed", key + 1);
	}
}

static void range_erase(void *s, long key)
{
	struct sut_range *t = s;
	struct latch_range r = range_of_key(key), got = { 0, 0, NULL };

	/* A map with payloads has no erase_if (it compares values): an erase instead. */
	switch (key % (t->payload ? 2 : 3)) {
	case 0:
		CHECK(latch_range_erase(&t->map, r.start) == 0, "latch_range_erase(%ld) failed",
		      key);
		break;
	case 1:
		CHECK(latch_range_remove(&t->map, r.start, &got) == 0 && got.end == r.end &&
		          got.value == (t->payload ? NULL : r.value),
		      "latch_range_remove(%ld) failed", key);
		break;
	default:
		CHECK(latch_range_erase_if(&t->map, &r) == 0, "latch_range_erase_if(%ld) failed",
		      key);
		break;
	}
}

static long range_find(const void *s, long key)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);
	struct latch_range r = { 0, 0, NULL };
	bool hit = latch_range_find(&t->map, addr, &r);

	return range_key(hit, r.start, r.end, (uintptr_t)r.value, addr);
}

static long payload_find(const void *s, long key)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);
	struct latch_range r = { 0, 0, NULL };
	uint64_t w[PAYLOAD_WORDS] = { 0, 0, 0, 0 };
	bool hit = latch_range_find_payload(&t->map, addr, &r, w);

	return range_key(hit, r.start, r.end, hit ? payload_value(w, r.start, r.end) : 0, addr);
}

static unsigned range_read_begin(const void *s)
{
	const struct sut_range *t = s;

	return latch_seq_read_begin(&latch_btree_of_range(&t->map)->seq);
}

/* One attempt of latch_range_find() on copy (start & 1): a floor descent and its leaf entry. */
static long range_attempt(const void *s, unsigned start, long key)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);
	struct latch_btree_ent e = { 0, 0, 0 };
	bool bad, hit = latch_btree_attempt(latch_btree_of_range(&t->map), start, addr,
	                                    LATCH_BTREE_FLOOR, &e, &bad);

	return bad ? -2 : range_key(hit, (uintptr_t)e.key, e.end, e.slot, addr);
}

/*
 * One attempt of latch_range_find_payload() on copy (start & 1): the floor
 * descent, then the payload copied from the slot the leaf entry names
 * (relaxed loads, as the library's attempt does).
 */
static long payload_attempt(const void *s, unsigned start, long key)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);
	struct latch_btree_ent e = { 0, 0, 0 };
	uint64_t w[PAYLOAD_WORDS] = { 0, 0, 0, 0 };
	bool bad, hit = latch_btree_attempt(latch_btree_of_range(&t->map), start, addr,
	                                    LATCH_BTREE_FLOOR, &e, &bad);

	if (bad)
		return -2;
	hit = hit && addr < e.end && e.slot;
	for (unsigned i = 0; hit && i < PAYLOAD_WORDS; i++)
		w[i] = LATCH_LOAD_RELAXED(&((const uint64_t *)e.slot)[i]);
	return range_key(hit, (uintptr_t)e.key, e.end, hit ? payload_value(w, e.key, e.end) : 0,
	                 addr);
}

static bool range_read_retry(const void *s, unsigned start)
{
	const struct sut_range *t = s;

	return latch_seq_read_retry(&latch_btree_of_range(&t->map)->seq, start);
}

/*
 * A raw floor descent of copy @idx, counting its levels.  It answers the
 * start it found, not the end or value: a leaf being rewritten may pair
 * an entry's start with its neighbour's end between the stores of an
 * entry, and only the retry check makes them agree (see sut-map.c).
 */
static long range_descend(const void *s, unsigned idx, long key, unsigned *steps)
{
	const struct sut_range *t = s;
	uintptr_t addr = range_probe(key);
	uintptr_t ref = LATCH_LOAD_ACQUIRE(&latch_btree_of_range(&t->map)->copy[idx].root);

	*steps = 0;
	while (ref && !(ref & LATCH_BTREE_LEAF) && *steps < LATCH_BTREE_MAX_DEPTH) {
		const struct latch_btree_node *n = latch_btree_node_(ref);
		unsigned c = latch_btree_count_le_(n, addr);

		ref = LATCH_LOAD_ACQUIRE(&n->slot[c - (c != 0)]);
		++*steps;
	}
	if (!(ref & LATCH_BTREE_LEAF))
		return SUT_ABSENT;
	const struct latch_btree_node *leaf = latch_btree_node_(ref);
	unsigned pos = latch_btree_count_le_(leaf, addr);
	uint64_t start = pos ? LATCH_LOAD_RELAXED(&leaf->key[pos - 1]) : 0;

	if (!pos || start % RANGE_STRIDE != 4 || addr >= start + 8)
		return SUT_ABSENT;
	return (long)(start / RANGE_STRIDE);
}

const struct sut_ops sut_range_map = {
	.name = "range-map",
	.size = range_size,
	.init = range_init,
	.insert = range_insert,
	.erase = range_erase,
	.find = range_find,
	.read_begin = range_read_begin,
	.read_attempt = range_attempt,
	.read_retry = range_read_retry,
	.copies = 2,
	.descend = range_descend,
	.writer_start = range_writer_start,
};

const struct sut_ops sut_range_payload = {
	.name = "range-payload",
	.size = payload_size,
	.init = payload_init,
	.insert = range_insert,
	.erase = range_erase,
	.find = payload_find,
	.read_begin = range_read_begin,
	.read_attempt = payload_attempt,
	.read_retry = range_read_retry,
	.copies = 2,
	.descend = range_descend,
	.writer_start = range_writer_start,
};
