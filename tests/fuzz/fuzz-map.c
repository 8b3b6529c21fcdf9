/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the input is a sequence of operations on a latched
 * map, checked against a reference model (a sorted array).  Keys are
 * 3 * b for a byte b, so splits, merges and borrowing all happen and
 * every key has absent neighbours.  Each operation is one byte, its top
 * three bits the kind, the rest an operand; some take following bytes:
 *
 *	000  insert key(next byte)          must give -EEXIST iff present
 *	001  erase key(next byte)           must give -ENOENT iff absent
 *	010  replace key(next byte)         must give -ENOENT iff absent
 *	011  a batch of (operand % 4) + 2 changes, each an op byte and a key
 *	     byte; all or nothing, with the first bad change's index
 *	100  every reader call at key(next byte)
 *	101  load_sorted of the keys of the bits of the next 4 bytes
 *	110  the next operation's first allocation fails: it must fail
 *	     with -ENOMEM, or not allocate, and leave the map unchanged
 *	111  reserve (operand * 4) entries
 *
 * After every change both copies must be valid B+-trees equal to each
 * other and to the model (map-check.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "map/map-check.h"

#define MAX_BATCH 5

static uint64_t key_of(uint8_t b)
{
	return 3u * (uint64_t)b;
}

/* A value that names its key and the step that stored it. */
static void *value_of(uint64_t key, size_t step)
{
	return (void *)(uintptr_t)((key << 16) | (step & 0xffffu) | 1u);
}

/*
 * Apply @c to the model as latch_map_commit() must: returns 0, or the
 * error of the first change that is invalid where the earlier ones leave
 * the map, with *@bad its index (the model is then restored by the caller).
 */
static int model_commit(struct model *md, const struct latch_map_change *c, size_t n, size_t *bad)
{
	for (size_t i = 0; i < n; i++) {
		bool has = model_has(md, c[i].key);
		int err = 0;

		if (c[i].op == LATCH_MAP_INSERT && has)
			err = -EEXIST;
		else if (c[i].op != LATCH_MAP_INSERT && !has)
			err = -ENOENT;
		if (err) {
			*bad = i;
			return err;
		}
		if (c[i].op == LATCH_MAP_INSERT) {
			model_insert(md, c[i].key, c[i].value);
		} else if (c[i].op == LATCH_MAP_ERASE) {
			model_erase(md, c[i].key);
		} else {
			md->values[model_lower(md, c[i].key)] = c[i].value;
		}
	}
	return 0;
}

static void model_copy(struct model *to, const struct model *from)
{
	memcpy(to->keys, from->keys, from->n * sizeof(*to->keys));
	memcpy(to->values, from->values, from->n * sizeof(*to->values));
	to->n = from->n;
}

/*
 * latch_map_find_many() of the keys the next bytes name (up to 70: past a
 * group of 64), against the model.
 */
static void check_find_many(const struct latch_map *m, const struct model *md, const uint8_t *data,
                            size_t size)
{
	uint64_t keys[70];
	void *values[70];
	bool found[70];
	size_t n = size < 70 ? size : 70, hits, want = 0;

	for (size_t i = 0; i < n; i++)
		keys[i] = key_of(data[i]);
	hits = latch_map_find_many(m, keys, n, values, found);
	for (size_t i = 0; i < n; i++) {
		size_t at = model_lower(md, keys[i]);
		bool has = at < md->n && md->keys[at] == keys[i];

		CHECK(found[i] == has && (!has || values[i] == md->values[at]),
		      "find_many: key %llu", (unsigned long long)keys[i]);
		want += has;
	}
	CHECK(hits == want, "find_many: %zu hits, the model has %zu", hits, want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model md, saved;
	struct latch_map m;
	bool fail_next = false;

	if (!md.keys) {
		model_init(&md, 256);
		model_init(&saved, 256);
		real_alloc = latch_btree_alloc_hook_;
		latch_btree_alloc_hook_ = counting_alloc;
	}
	md.n = 0;
	md.undone = false;
	alloc_fail_at = -1;
	CHECK(latch_map_init(&m) == 0, "latch_map_init failed");
	for (size_t i = 0; i < size; i++) {
		unsigned kind = data[i] >> 5, operand = data[i] & 31u;
		struct latch_map_change c[MAX_BATCH];
		size_t n = 0, bad = 0, got_bad = SIZE_MAX;
		int want, got = 0;

		if (kind == 6) {
			fail_next = true;
			continue;
		}
		if (kind == 4) {
			if (i + 1 < size)
				check_readers_at(&m, &md, key_of(data[++i]) + operand % 3);
			continue;
		}
		model_copy(&saved, &md);
		if (fail_next)
			alloc_fail_at = alloc_calls;
		if (kind <= 2 && i + 1 < size) {
			static const enum latch_map_op ops[] = { LATCH_MAP_INSERT, LATCH_MAP_ERASE,
				                                 LATCH_MAP_REPLACE };
			uint64_t key = key_of(data[++i]);

			c[n++] = (struct latch_map_change){ ops[kind], key, value_of(key, i) };
			got = kind == 0   ? latch_map_insert(&m, key, c[0].value)
			      : kind == 1 ? latch_map_erase(&m, key)
			                  : latch_map_replace(&m, key, c[0].value);
		} else if (kind == 3) {
			while (n < operand % 4 + 2 && i + 2 < size) {
				uint64_t key = key_of(data[i + 2]);

				c[n] =
				    (struct latch_map_change){ (enum latch_map_op)(data[i + 1] % 3),
					                       key, value_of(key, i) };
				n++;
				i += 2;
			}
			got = latch_map_commit(&m, c, n, &got_bad);
			md.undone = md.undone || (got != 0 && got != -ENOMEM && got_bad > 0);
		} else if (kind == 5 && i + 4 < size) {
			uint64_t keys[32];
			void *values[32];
			int expect = 0;

			for (unsigned b = 0; b < 32; b++)
				if (data[i + 1 + b / 8] >> (b % 8) & 1u) {
					keys[n] = key_of((uint8_t)(b * 8 + operand % 8));
					values[n] = value_of(keys[n], i);
					n++;
				}
			i += 4;
			if (operand & 16u && n >= 2) { /* out of order: refused, map unchanged */
				uint64_t k = keys[0];

				keys[0] = keys[1];
				keys[1] = k;
				expect = -EINVAL;
			}
			got = latch_map_load_sorted(&m, keys, values, n);
			CHECK(got == expect || (got == -ENOMEM && fail_next && !expect),
			      "load_sorted of %zu keys: %d, expected %d", n, got, expect);
			if (!got) {
				md.n = 0;
				md.undone = false; /* both copies built alike */
				for (size_t k = 0; k < n; k++)
					model_insert(&md, keys[k], values[k]);
			}
			n = 0; /* the model is done */
		} else if (kind == 7) {
			got = latch_map_reserve(&m, operand * 4u);
		} else {
			break; /* an operation cut short by the end of the input */
		}
		if (n) {
			want = model_commit(&md, c, n, &bad);
			if (got == -ENOMEM) {
				CHECK(fail_next, "-ENOMEM without an allocation failure");
				CHECK(got_bad == SIZE_MAX || got_bad == n,
				      "-ENOMEM: *failed is %zu, not %zu", got_bad, n);
			} else {
				CHECK(got == want, "change %zu: %d, the model says %d", i, got,
				      want);
				CHECK(!want || got_bad == SIZE_MAX || got_bad == bad,
				      "first bad change %zu, the model says %zu", got_bad, bad);
			}
			if (got)
				model_copy(&md, &saved);
		} else if (got == -ENOMEM) {
			CHECK(fail_next, "-ENOMEM without an allocation failure");
		}
		fail_next = false;
		alloc_fail_at = -1;
		check_map(&m, &md);
		CHECK(latch_map_size(&m) == md.n, "size %zu, model %zu", latch_map_size(&m), md.n);
		check_find_many(&m, &md, data + i, size - i);
	}
	latch_map_destroy(&m);
	return 0;
}
