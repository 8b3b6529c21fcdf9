/* SPDX-License-Identifier: MIT */
/*
 * A reference model of a range map, for tests: the ranges sorted by
 * start, and the checks of a map against it: the B+-tree invariants of
 * both copies (the separator invariant among them: map-check.h), no
 * overlap, and every reader call.
 */
#ifndef LATCH_TESTS_RANGE_MODEL_H
#define LATCH_TESTS_RANGE_MODEL_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <latch/range.h>

#include "map-check.h"

struct range_model {
	struct latch_range *r; /* sorted by start, not overlapping */
	size_t n, cap;
};

static inline void range_model_init(struct range_model *rm, size_t cap)
{
	rm->r = malloc(cap * sizeof(*rm->r));
	CHECK(rm->r, "out of memory");
	rm->n = 0;
	rm->cap = cap;
}

/* Index of the first range with start >= @start. */
static inline size_t range_model_at(const struct range_model *rm, uintptr_t start)
{
	size_t lo = 0, hi = rm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rm->r[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Insert [start, end) as the map must: 0, -EINVAL or -EEXIST (*hit: the lowest overlapped). */
static inline int range_model_insert(struct range_model *rm, struct latch_range x,
                                     struct latch_range *hit)
{
	size_t i = range_model_at(rm, x.start);

	if (x.start >= x.end)
		return -EINVAL;
	if (i > 0 && rm->r[i - 1].end > x.start) {
		*hit = rm->r[i - 1];
		return -EEXIST;
	}
	if (i < rm->n && rm->r[i].start < x.end) {
		*hit = rm->r[i];
		return -EEXIST;
	}
	CHECK(rm->n < rm->cap, "model full");
	memmove(&rm->r[i + 1], &rm->r[i], (rm->n - i) * sizeof(*rm->r));
	rm->r[i] = x;
	rm->n++;
	return 0;
}

static inline int range_model_erase(struct range_model *rm, uintptr_t start)
{
	size_t i = range_model_at(rm, start);

	if (i == rm->n || rm->r[i].start != start)
		return -ENOENT;
	memmove(&rm->r[i], &rm->r[i + 1], (rm->n - i - 1) * sizeof(*rm->r));
	rm->n--;
	return 0;
}

/* latch_range_remove() as the map must do it: *removed (unless NULL) on success. */
static inline int range_model_remove(struct range_model *rm, uintptr_t start,
                                     struct latch_range *removed)
{
	size_t i = range_model_at(rm, start);

	if (i < rm->n && rm->r[i].start == start && removed)
		*removed = rm->r[i];
	return range_model_erase(rm, start);
}

static inline bool range_eq(struct latch_range a, struct latch_range b)
{
	return a.start == b.start && a.end == b.end && a.value == b.value;
}

/* latch_range_erase_if(): 0, -ENOENT or -ESTALE (end or value differ). */
static inline int range_model_erase_if(struct range_model *rm, struct latch_range x)
{
	size_t i = range_model_at(rm, x.start);

	if (i == rm->n || rm->r[i].start != x.start)
		return -ENOENT;
	if (!range_eq(rm->r[i], x))
		return -ESTALE;
	return range_model_erase(rm, x.start);
}

/*
 * latch_range_store(): 0, -EINVAL or -ENOSPC; *n_evicted is how many
 * overlap (0 for -EINVAL), the first min(that, max) copied to @evicted.
 */
static inline int range_model_store(struct range_model *rm, struct latch_range x,
                                    struct latch_range *evicted, size_t max, size_t *n_evicted)
{
	size_t i = range_model_at(rm, x.start), j;

	*n_evicted = 0;
	if (x.start >= x.end)
		return -EINVAL;
	if (i > 0 && rm->r[i - 1].end > x.start)
		i--;
	for (j = i; j < rm->n && rm->r[j].start < x.end; j++)
		if (evicted && j - i < max)
			evicted[j - i] = rm->r[j];
	*n_evicted = j - i;
	if (j - i > max)
		return -ENOSPC;
	CHECK(rm->n - (j - i) < rm->cap, "model full");
	memmove(&rm->r[i + 1], &rm->r[j], (rm->n - j) * sizeof(*rm->r));
	rm->r[i] = x;
	rm->n = rm->n - (j - i) + 1;
	return 0;
}

/* A batch as the map must apply it: in order, all or nothing; *failed on error. */
static inline int range_model_commit(struct range_model *rm, const struct latch_range_change *c,
                                     size_t n, size_t *failed)
{
	struct range_model after = { malloc((rm->n + n + 1) * sizeof(*rm->r)), rm->n,
		                     rm->n + n + 1 };
	struct latch_range hit;
	size_t evicted;
	int err = 0;

	CHECK(after.r, "out of memory");
	memcpy(after.r, rm->r, rm->n * sizeof(*rm->r));
	for (size_t k = 0; k < n && !err; k++) {
		*failed = k;
		if (c[k].op == LATCH_RANGE_INSERT)
			err = range_model_insert(&after, c[k].range, &hit);
		else if (c[k].op == LATCH_RANGE_ERASE)
			err = range_model_erase(&after, c[k].range.start);
		else if (c[k].op == LATCH_RANGE_ERASE_IF)
			err = range_model_erase_if(&after, c[k].range);
		else if (c[k].op == LATCH_RANGE_STORE)
			err = range_model_store(&after, c[k].range, NULL, SIZE_MAX, &evicted);
		else
			err = -EINVAL;
	}
	if (!err) {
		CHECK(after.n <= rm->cap, "model full");
		memcpy(rm->r, after.r, after.n * sizeof(*rm->r));
		rm->n = after.n;
	}
	free(after.r);
	return err;
}

/* Both copies hold the model's ranges, validly (shapes may differ: see latch_range_commit()). */
static inline void range_model_check_tree(const struct latch_range_map *m,
                                          const struct range_model *rm)
{
	const struct shape *s = check_copies(latch_btree_of_range(m), rm->n, false);

	for (size_t i = 0; i < rm->n; i++) {
		struct latch_range got = { (uintptr_t)s[0].keys[i], s[0].ends[i],
			                   (void *)s[0].slots[i] };

		CHECK(range_eq(got, rm->r[i]), "range %zu: [%lu, %lu), model [%lu, %lu)", i,
		      (unsigned long)got.start, (unsigned long)got.end,
		      (unsigned long)rm->r[i].start, (unsigned long)rm->r[i].end);
		CHECK(i == 0 || got.start >= rm->r[i - 1].end, "ranges %zu and %zu overlap", i - 1,
		      i);
	}
}

/* Every reader call at @addr against the model. */
static inline void range_model_check_at(const struct latch_range_map *m,
                                        const struct range_model *rm, uintptr_t addr)
{
	size_t i = range_model_at(rm, addr); /* first start >= addr: [0, i) start below */
	bool exact = i < rm->n && rm->r[i].start == addr;
	size_t lo = exact ? i + 1 : i; /* ranges [0, lo) start <= addr */
	bool holds = lo > 0 && addr < rm->r[lo - 1].end;
	size_t nx = exact ? i + 1 : i; /* first start > addr */
	struct latch_range got;

	CHECK(latch_range_find(m, addr, &got) == holds, "find(%lu)", (unsigned long)addr);
	CHECK(!holds || range_eq(got, rm->r[lo - 1]), "find(%lu): wrong range",
	      (unsigned long)addr);
	CHECK(latch_range_find(m, addr, NULL) == holds, "find(%lu) without out",
	      (unsigned long)addr);
	CHECK(latch_range_floor(m, addr, &got) == (lo > 0), "floor(%lu)", (unsigned long)addr);
	CHECK(lo == 0 || range_eq(got, rm->r[lo - 1]), "floor(%lu): wrong range",
	      (unsigned long)addr);
	CHECK(latch_range_ceil(m, addr, &got) == (i < rm->n), "ceil(%lu)", (unsigned long)addr);
	CHECK(i == rm->n || range_eq(got, rm->r[i]), "ceil(%lu): wrong range", (unsigned long)addr);
	CHECK(latch_range_next(m, addr, &got) == (nx < rm->n), "next(%lu)", (unsigned long)addr);
	CHECK(nx == rm->n || range_eq(got, rm->r[nx]), "next(%lu): wrong range",
	      (unsigned long)addr);
	CHECK(latch_range_prev(m, addr, &got) == (i > 0), "prev(%lu)", (unsigned long)addr);
	CHECK(i == 0 || range_eq(got, rm->r[i - 1]), "prev(%lu): wrong range", (unsigned long)addr);
}

/*
 * The whole check: both copies, the size, walks by first/next and by
 * last/prev, and every reader call at each address of [0, @space) and
 * past it.
 */
static inline void range_model_check(const struct latch_range_map *m, const struct range_model *rm,
                                     uintptr_t space)
{
	struct latch_range got;
	size_t k = 0;

	range_model_check_tree(m, rm);
	CHECK(latch_range_size(m) == rm->n, "size %zu, model %zu", latch_range_size(m), rm->n);
	for (bool more = latch_range_first(m, &got); more;
	     more = latch_range_next(m, got.start, &got))
		CHECK(k < rm->n && range_eq(got, rm->r[k++]), "walk: range %zu", k);
	CHECK(k == rm->n, "the walk saw %zu ranges of %zu", k, rm->n);
	for (bool more = latch_range_last(m, &got); more;
	     more = latch_range_prev(m, got.start, &got))
		CHECK(k > 0 && range_eq(got, rm->r[--k]), "walk backwards: range %zu", k);
	CHECK(k == 0, "the walk backwards missed %zu ranges of %zu", k, rm->n);
	for (uintptr_t a = 0; a < space + 40; a++)
		range_model_check_at(m, rm, a);
	range_model_check_at(m, rm, UINTPTR_MAX);
	range_model_check_at(m, rm, UINTPTR_MAX - 1);
}

#endif /* LATCH_TESTS_RANGE_MODEL_H */
