/* SPDX-License-Identifier: MIT */
/*
 * The three region maps the demo compares.  All three hold the same
 * regions in the same red-black tree code; they differ only in how a
 * lookup is kept safe from the writer:
 *
 *   liblatch  two copies and a latch: a lookup never waits;
 *   seqlock   one copy; a lookup waits while an update is in progress;
 *   rwlock    one copy; a lookup takes the read side of a pthread rwlock.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>

#include "demo.h"
#include "seqlock-tree.h"

static struct demo_region *region_of(const struct latch_tree_node *n)
{
	return latch_tree_entry(n, struct demo_region, node);
}

/* Regions never overlap, so ordering them by start orders them fully. */
static bool region_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return region_of(a)->start < region_of(b)->start;
}

/* A range comparator: 0 when the address lies in [start, end). */
static int region_comp(const void *key, const struct latch_tree_node *n)
{
	uintptr_t addr = *(const uintptr_t *)key;
	const struct demo_region *r = region_of(n);

	return addr < r->start ? -1 : addr >= r->end ? 1 : 0;
}

static const struct latch_tree_ops region_ops = { region_less, region_comp };

static const struct demo_region *region_or_null(const struct latch_tree_node *n)
{
	return n ? region_of(n) : NULL;
}

/* ---- liblatch ---------------------------------------------------------- */

static struct latch_tree_root latch_map;

static void latch_init(void)
{
	latch_tree_init(&latch_map);
}

static void latch_apply(const struct demo_change *changes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (changes[i].insert)
			latch_tree_insert(&latch_map, &changes[i].region->node, &region_ops);
		else
			latch_tree_erase(&latch_map, &changes[i].region->node, &region_ops);
	}
}

static int latch_find(uintptr_t addr, const struct demo_region **found)
{
	*found = region_or_null(latch_tree_find(&latch_map, &addr, &region_ops));
	return 0;
}

/* ---- the single-copy peers --------------------------------------------- */

/* Apply @changes to the one copy; the caller keeps readers out. */
static void one_copy_apply(struct latch_tree_root *root, const struct demo_change *changes,
                           size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (changes[i].insert)
			one_copy_insert(root, &changes[i].region->node, &region_ops);
		else
			one_copy_erase(root, &changes[i].region->node);
	}
}

static struct seqlock_tree seqlock_map;

static void seqlock_init(void)
{
	seqlock_map = (struct seqlock_tree)SEQLOCK_TREE_INIT;
}

static void seqlock_apply(const struct demo_change *changes, size_t n)
{
	seqlock_tree_write_begin(&seqlock_map);
	one_copy_apply(&seqlock_map.one, changes, n);
	seqlock_tree_write_end(&seqlock_map);
}

static int seqlock_find(uintptr_t addr, const struct demo_region **found)
{
	*found = region_or_null(seqlock_tree_find(&seqlock_map, &addr, &region_ops));
	return 0;
}

static pthread_rwlock_t rwlock_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct latch_tree_root rwlock_map;

static void rwlock_init(void)
{
	latch_tree_init(&rwlock_map);
}

static void rwlock_apply(const struct demo_change *changes, size_t n)
{
	pthread_rwlock_wrlock(&rwlock_lock);
	one_copy_apply(&rwlock_map, changes, n);
	pthread_rwlock_unlock(&rwlock_lock);
}

static int rwlock_find(uintptr_t addr, const struct demo_region **found)
{
	/* glibc refuses (EDEADLK) when this thread holds the write side. */
	int err = pthread_rwlock_rdlock(&rwlock_lock);

	*found = NULL;
	if (err)
		return -err;
	*found = region_or_null(one_copy_find(&rwlock_map, &addr, &region_ops));
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
