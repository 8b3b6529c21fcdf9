/* SPDX-License-Identifier: MIT */
/*
 * The three region maps the demo compares.  All three hold the same
 * regions; they differ in how a lookup is kept safe from the writer:
 *
 *   liblatch  latch_range_map: a B+-tree in two copies under a latch, a
 *             lookup never waits (the value of each range is its region);
 *   seqlock   one copy; a lookup waits while an update is in progress;
 *   rwlock    one copy; a lookup takes the read side of a pthread rwlock.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "demo.h"
#include "seqlock-tree.h"

/* ---- liblatch: the range map, two copies under a latch ------------------ */

static struct latch_range_map latch_map;

static void latch_init(void)
{
	if (latch_range_map_init(&latch_map))
		abort();
}

/* Single changes through insert/erase, batches through one commit. */
static int latch_apply(const struct demo_change *changes, size_t n)
{
	struct latch_range_change batch[8];
	struct demo_region *r = changes->region;

	if (n > 1) {
		if (n > sizeof(batch) / sizeof(batch[0]))
			return -E2BIG;
		for (size_t i = 0; i < n; i++)
			batch[i] = (struct latch_range_change){ changes[i].op,
				                                { changes[i].region->start,
				                                  changes[i].region->end,
				                                  changes[i].region } };
		return latch_range_commit(&latch_map, batch, n, NULL);
	}
	if (changes->op == LATCH_RANGE_INSERT)
		return latch_range_insert(&latch_map, r->start, r->end, r, NULL);
	return latch_range_erase(&latch_map, r->start);
}

static int latch_find(uintptr_t addr, const struct demo_region **found)
{
	struct latch_range r;

	*found = latch_range_find(&latch_map, addr, &r) ? r.value : NULL;
	return 0;
}

/* ---- the single-copy peers: the same tree, ordered by a range comparator -- */

static struct demo_region *range_of(const struct latch_tree_node *n)
{
	return latch_tree_entry(n, struct demo_region, node);
}

/* Ranges never overlap, so ordering them by start orders them fully. */
static bool range_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return range_of(a)->start < range_of(b)->start;
}

/* 0 when the address lies in [start, end). */
static int range_comp(const void *key, const struct latch_tree_node *n)
{
	uintptr_t addr = *(const uintptr_t *)key;
	const struct demo_region *r = range_of(n);

	return addr < r->start ? -1 : addr >= r->end ? 1 : 0;
}

static const struct latch_tree_ops range_ops = { range_less, range_comp };

static const struct demo_region *range_or_null(const struct latch_tree_node *n)
{
	return n ? range_of(n) : NULL;
}

/* Apply @changes to the one copy; the caller keeps readers out. */
static void one_copy_apply(struct latch_tree_root *root, const struct demo_change *changes,
                           size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (changes[i].op == LATCH_RANGE_INSERT)
			one_copy_insert(root, &changes[i].region->node, &range_ops);
		else
			one_copy_erase(root, &changes[i].region->node);
	}
}

static struct seqlock_tree seqlock_map;

static void seqlock_init(void)
{
	seqlock_map = (struct seqlock_tree)SEQLOCK_TREE_INIT;
}

static int seqlock_apply(const struct demo_change *changes, size_t n)
{
	seqlock_tree_write_begin(&seqlock_map);
	one_copy_apply(&seqlock_map.one, changes, n);
	seqlock_tree_write_end(&seqlock_map);
	return 0;
}

static int seqlock_find(uintptr_t addr, const struct demo_region **found)
{
	*found = range_or_null(seqlock_tree_find(&seqlock_map, &addr, &range_ops));
	return 0;
}

static pthread_rwlock_t rwlock_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct latch_tree_root rwlock_map;

static void rwlock_init(void)
{
	latch_tree_init(&rwlock_map);
}

static int rwlock_apply(const struct demo_change *changes, size_t n)
{
	int err = pthread_rwlock_wrlock(&rwlock_lock);

	if (err)
		return -err;
	one_copy_apply(&rwlock_map, changes, n);
	pthread_rwlock_unlock(&rwlock_lock);
	return 0;
}

static int rwlock_find(uintptr_t addr, const struct demo_region **found)
{
	/* glibc refuses (EDEADLK) when this thread holds the write side. */
	int err = pthread_rwlock_rdlock(&rwlock_lock);

	*found = NULL;
	if (err)
		return -err;
	*found = range_or_null(one_copy_find(&rwlock_map, &addr, &range_ops));
	pthread_rwlock_unlock(&rwlock_lock);
	return 0;
}

const struct demo_map demo_maps[DEMO_NMAPS] = {
	{ "liblatch", "liblatch", DEMO_EXPECT_PASS,
	  "liblatch keeps two copies of the tree and steers every reader to the one not "
	  "being changed, so even the lookups that interrupted an update finished at once, "
	  "with the right region.",
	  latch_init, latch_apply, latch_find },
	{ "seqlock", "seqlock (one copy)", DEMO_EXPECT_HANG,
	  "A seqlock keeps one copy: its reader waits for the update to finish, but the "
	  "update cannot go on until the handler returns, so the thread spins forever.",
	  seqlock_init, seqlock_apply, seqlock_find },
	{ "rwlock", "rwlock (one copy)", DEMO_EXPECT_HANG_OR_FAIL,
	  "An rwlock reader needs the lock its own thread holds, or is taking or "
	  "releasing, for writing: the thread deadlocks, or glibc refuses the lock "
	  "(EDEADLK) and the sample is lost.",
	  rwlock_init, rwlock_apply, rwlock_find },
};
