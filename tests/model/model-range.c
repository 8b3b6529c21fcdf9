/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (e): the range map of <latch/range.h>, through its own
 * latch_range_insert(), latch_range_erase() and latch_range_find(): the
 * real src/range.c on the real latched tree, its writers serialized by
 * the map's own mutex, its per-copy bounds (low[], high[]) stored relaxed
 * with each copy and read relaxed by latch_range_find() before the
 * descent.
 *
 * The map starts with [10, 20), [30, 40) and [70, 80) (a black root 30
 * with two red children).  The writer erases [10, 20), which raises the
 * lowest start, then sets up a new range [50, 60) and inserts it: it
 * lands as the inner grandchild of a red parent and two rotations lift it
 * to the root.  A reader that used a copy's links with another moment's
 * bounds would reject an address that is in the map.
 *
 * The reader looks up 15, 55, 75, 35, 45 and 85, each checked against the
 * oracle of model.h (the harness reads the map's counter): 35 and 75 are
 * always found (in ranges moved by the rotations), 15 before the erase's
 * flip and not after, 55 after the insert's flip and not before, 45 (a
 * gap) and 85 (past every end) never.  GenMC also reports any data race:
 * [50, 60)'s start and end are stored by the writer thread just before
 * its insert and loaded with plain loads by the reader.
 *
 * Shims (GenMC models only part of the C library; none of these runs
 * concurrently with a reader or orders anything): qsort() and bsearch(),
 * which src/range.c uses on the writer's private batch plan, are replaced
 * by simple equivalents below; pthread_atfork(), which its load-time
 * constructor calls, reports success without registering anything
 * (fork() is outside the model); fputs() (an error message) prints
 * nothing.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>

/* The shims: see the file comment. */
static void model_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base;

	/* Insertion sort, swapping byte by byte: the plans here are tiny. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp(b + (j - 1) * size, b + j * size) > 0; j--)
			for (size_t k = 0; k < size; k++) {
				char t = b[(j - 1) * size + k];

				b[(j - 1) * size + k] = b[j * size + k];
				b[j * size + k] = t;
			}
}

static void *model_bsearch(const void *key, const void *base, size_t n, size_t size,
                           int (*cmp)(const void *, const void *))
{
	for (size_t i = 0; i < n; i++)
		if (cmp(key, (const char *)base + i * size) == 0)
			return (void *)((const char *)base + i * size);
	return NULL;
}

static int model_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	(void)prepare;
	(void)parent;
	(void)child;
	return 0;
}

#define qsort          model_qsort
#define bsearch        model_bsearch
#define pthread_atfork model_atfork
#define fputs(s, f)    ((void)(s), (void)(f), 0)

#include <latch/range.h>

#include <src/rbtree.c>
#include <src/tree.c>
#include <src/mirror.c>
#include <src/range.c>

static struct latch_range_map map;
static struct latch_range r10 = { 10, 20 }, r30 = { 30, 40 }, r70 = { 70, 80 }, r50;
/* When each range is in the map (model.h); set by main(). */
static struct model_life l10, l30, l50, l70;

/*
 * latch_range_find() of @addr, checked by model_check(): @r is the one
 * range that ever holds @addr (NULL for none) and @life its lifetime.
 */
static void model_range_find(uintptr_t addr, const struct latch_range *r,
                             const struct model_life *life)
{
	/* The harness's own look at the counter: relaxed, it orders nothing. */
	unsigned before = LATCH_LOAD_RELAXED(&map.tree.seq.sequence);
	const struct latch_range *found = latch_range_find(&map, addr);
	unsigned after = LATCH_LOAD_RELAXED(&map.tree.seq.sequence);

	assert(!found || found == r); /* only the range that holds @addr */
	model_check(before, after, &life, r ? 1 : 0, found ? 0 : -1);
}

static void *writer(void *arg)
{
	(void)arg;
	assert(latch_range_erase(&map, &r10) == 0);
	/* Plain stores: before the insert (and after the erase's flip). */
	r50.start = 50;
	r50.end = 60;
	assert(latch_range_insert(&map, &r50) == 0);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	model_range_find(15, &r10, &l10);
	model_range_find(55, &r50, &l50);
	model_range_find(75, &r70, &l70);
	model_range_find(35, &r30, &l30);
	model_range_find(45, NULL, NULL);
	model_range_find(85, NULL, NULL);
	return NULL;
}

int main(void)
{
	pthread_t r, w;
	unsigned start;

	latch_range_map_init(&map);
	assert(latch_range_insert(&map, &r10) == 0);
	assert(latch_range_insert(&map, &r30) == 0);
	assert(latch_range_insert(&map, &r70) == 0);
	start = LATCH_LOAD_RELAXED(&map.tree.seq.sequence); /* one flip per insert */
	l10.until = start + 1;                              /* erased by the first update */
	l30.until = MODEL_NEVER;
	l70.until = MODEL_NEVER;
	l50.from = start + 2; /* inserted by the second */
	l50.until = MODEL_NEVER;
	w = model_spawn(writer, NULL);
	r = model_spawn(reader, NULL);
	model_join(w);
	model_join(r);
	return 0;
}
