/* SPDX-License-Identifier: MIT */
/*
 * sorted-latch: the design of glibc's _dl_find_object.  Two sorted arrays
 * of [start, end) ranges and a version counter: readers binary-search the
 * array (version & 1); the writer rebuilds the other array from the
 * current one with the change applied (O(n)), then bumps the version.
 * That is the one-flip latch protocol, so it is written with <latch/seq.h>:
 * the rebuilt array is latch_seq_write_begin()'s, the bump
 * latch_seq_write_flip(), the lookup the latch read loop.  Nothing is
 * replayed onto the array readers leave: the next update rebuilds it whole.
 *
 * As an exact-key peer every element is the range [key, key + 1); as a
 * range peer it is [key, key + BENCH_RANGE_LEN).
 */
#include <stdlib.h>
#include <string.h>

#include <latch/seq.h>

#include "../bench.h"

struct sorted_range {
	long start, end; /* accessed through LATCH_LOAD_* / LATCH_STORE_* */
};

struct sorted_latch {
	struct latch_seq version;     /* readers search copy[count & 1] */
	size_t count[2];              /* entries in each copy */
	struct sorted_range *copy[2]; /* each sized for the whole pool */
	long *pool;                   /* slot i holds its key */
	long length;                  /* every range's length */
};

static void *sorted_create_length(size_t capacity, long length)
{
	struct sorted_latch *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	capacity = capacity ? capacity : 1;
	p->length = length;
	p->pool = calloc(capacity, sizeof(*p->pool));
	p->copy[0] = calloc(capacity, sizeof(*p->copy[0]));
	p->copy[1] = calloc(capacity, sizeof(*p->copy[1]));
	if (!p->pool || !p->copy[0] || !p->copy[1]) {
		free(p->pool);
		free(p->copy[0]);
		free(p->copy[1]);
		free(p);
		return NULL;
	}
	return p;
}

static void *sorted_create_keys(size_t capacity)
{
	return sorted_create_length(capacity, 1);
}

static void *sorted_create_ranges(size_t capacity)
{
	return sorted_create_length(capacity, BENCH_RANGE_LEN);
}

static void sorted_destroy(void *peer)
{
	struct sorted_latch *p = peer;

	free(p->pool);
	free(p->copy[0]);
	free(p->copy[1]);
	free(p);
}

/* Index of the first entry of copy @c (of @n entries) starting after @key. */
static inline size_t sorted_upper(const struct sorted_range *c, size_t n, long key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		/* Relaxed: the version check after the search discards torn reads. */
		if (LATCH_LOAD_RELAXED(&c[mid].start) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Publish copy @idx, which the writer just built as @count entries: the
 * flip sends readers to it.
 */
static void sorted_publish(struct sorted_latch *p, unsigned idx, size_t count)
{
	LATCH_STORE_RELAXED(&p->count[idx], count); /* ordered by the flip's release store */
	/* Release store and fence: see latch_seq_write_flip(). */
	(void)latch_seq_write_flip(&p->version);
}

/*
 * Rebuild the inactive copy as the active one with entries [0, at) kept,
 * @skip entries dropped at @at, and @add (if not NULL) inserted at @at.
 */
static void sorted_rebuild(struct sorted_latch *p, size_t at, size_t skip,
                           const struct sorted_range *add)
{
	unsigned idx = latch_seq_write_begin(&p->version);
	const struct sorted_range *from = p->copy[idx ^ 1u];
	struct sorted_range *to = p->copy[idx];
	/* Relaxed: only the (serialized) writer stores the counts. */
	size_t n = LATCH_LOAD_RELAXED(&p->count[idx ^ 1u]), out = 0;

	for (size_t i = 0; i < n; i++) {
		if (i == at && add) {
			LATCH_STORE_RELAXED(&to[out].start,
			                    add->start); /* hidden until published */
			LATCH_STORE_RELAXED(&to[out++].end, add->end);
		}
		if (i >= at && i < at + skip)
			continue;
		LATCH_STORE_RELAXED(&to[out].start, from[i].start); /* hidden until published */
		LATCH_STORE_RELAXED(&to[out++].end, from[i].end);
	}
	if (at == n && add) {
		LATCH_STORE_RELAXED(&to[out].start, add->start); /* hidden until published */
		LATCH_STORE_RELAXED(&to[out++].end, add->end);
	}
	sorted_publish(p, idx, out);
}

/* The active copy and its size, for the writer. */
static const struct sorted_range *sorted_active(const struct sorted_latch *p, size_t *n)
{
	unsigned idx = latch_seq_write_begin(&p->version) ^ 1u; /* the copy readers are on */

	*n = LATCH_LOAD_RELAXED(&p->count[idx]); /* only the writer stores it */
	return p->copy[idx];
}

static void sorted_insert(void *peer, size_t slot, long key)
{
	struct sorted_latch *p = peer;
	struct sorted_range add = { key, key + p->length };
	size_t n;
	const struct sorted_range *c = sorted_active(p, &n);

	p->pool[slot] = key;
	sorted_rebuild(p, sorted_upper(c, n, key), 0, &add);
}

static void sorted_erase(void *peer, size_t slot)
{
	struct sorted_latch *p = peer;
	size_t n;
	const struct sorted_range *c = sorted_active(p, &n);

	sorted_rebuild(p, sorted_upper(c, n, p->pool[slot]) - 1, 1, NULL);
}

static int sorted_key_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Bulk load: sort once and publish, as a loader adding many objects would. */
static void sorted_load(void *peer, const long *keys, size_t n)
{
	struct sorted_latch *p = peer;
	unsigned idx = latch_seq_write_begin(&p->version);
	struct sorted_range *to = p->copy[idx];
	long *sorted = malloc(n * sizeof(*sorted) + 1);

	if (!sorted)
		abort(); /* out of memory: the measurement would be meaningless */
	memcpy(p->pool, keys, n * sizeof(*keys));
	memcpy(sorted, keys, n * sizeof(*keys));
	qsort(sorted, n, sizeof(*sorted), sorted_key_cmp);
	for (size_t i = 0; i < n; i++) {
		LATCH_STORE_RELAXED(&to[i].start, sorted[i]); /* hidden until published */
		LATCH_STORE_RELAXED(&to[i].end, sorted[i] + p->length);
	}
	free(sorted);
	sorted_publish(p, idx, n);
}

/* The range holding @key, or NULL.  Never waits; any context. */
static inline const struct sorted_range *sorted_find(const struct sorted_latch *p, long key)
{
	const struct sorted_range *found = NULL;

	LATCH_SEQ_READ_(&p->version, idx)
	{
		const struct sorted_range *c = p->copy[idx];
		/* Relaxed: the loop discards the attempt if the version moved. */
		size_t i = sorted_upper(c, LATCH_LOAD_RELAXED(&p->count[idx]), key);

		/* Relaxed: as above. */
		found = i && key < LATCH_LOAD_RELAXED(&c[i - 1].end) ? &c[i - 1] : NULL;
	}
	return found;
}

BENCH_FIND_MANY(sorted_find_many, struct sorted_latch, sorted_find(p, key))

/* Declares the sorted-latch peer @var: instances from @create_fn, answers as @answer_flag says. */
#define SORTED_PEER(var, create_fn, answer_flag)                                                   \
	const struct bench_peer var = { .name = "sorted-latch",                                    \
		                        .flags = BENCH_SHARED | (answer_flag),                     \
		                        .create = (create_fn),                                     \
		                        .destroy = sorted_destroy,                                 \
		                        .load = sorted_load,                                       \
		                        .insert = sorted_insert,                                   \
		                        .erase = sorted_erase,                                     \
		                        .find_many = sorted_find_many }

/* A hit's answer is its range, which starts with the start: the key, or the range's. */
SORTED_PEER(bench_peer_sorted_latch, sorted_create_keys, BENCH_ANSWER_KEY);
SORTED_PEER(bench_range_peer_sorted_latch, sorted_create_ranges, BENCH_ANSWER_RANGE);
