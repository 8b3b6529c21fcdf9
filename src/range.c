/* SPDX-License-Identifier: MIT */
/*
 * The range map's writer side: every batch is checked whole against the
 * map under the writers' mutex, then applied as one latched-tree commit
 * that also updates each copy's bounds along with that copy.
 */
#include <errno.h>
#include <stdlib.h>

#include <latch/range.h>

#include "commit.h"
#include "contract.h"

/* Batches up to this size plan on the stack; larger ones allocate. */
#define LOCAL_PLAN 16

static bool range_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return latch_range_of_(a)->start < latch_range_of_(b)->start;
}

static int range_comp(const void *key, const struct latch_tree_node *n)
{
	return latch_range_order_(key, n, NULL);
}

static const struct latch_tree_ops range_ops = { range_less, range_comp };

void latch_range_map_init(struct latch_range_map *m)
{
	latch_tree_init(&m->tree);
	for (unsigned idx = 0; idx < 2; idx++) {
		/* Relaxed: the map is not shared yet. */
		LATCH_STORE_RELAXED(&m->low[idx], (uintptr_t)0);
		LATCH_STORE_RELAXED(&m->high[idx], (uintptr_t)0);
	}
	pthread_mutex_init(&m->lock, NULL);
}

/* The range of copy @idx's node @rb (writer side). */
static struct latch_range *range_at(const struct latch_rb_node *rb, unsigned idx)
{
	return latch_range_of_(latch_tree_from_rb_(rb, idx));
}

/* After copy @idx changed: its bounds follow, before readers return to it. */
static void update_bounds(void *ctx, unsigned idx)
{
	struct latch_range_map *m = ctx;
	const struct latch_rb_node *first = latch_rb_first(&m->tree.tree[idx]);
	const struct latch_rb_node *last = latch_rb_last(&m->tree.tree[idx]);

	/*
	 * Relaxed: readers are kept off copy idx until the next flip, whose
	 * release store publishes these stores with the copy's links; a
	 * reader that sees one early is sent to retry (see latch_range_admit_).
	 * The ranges do not overlap, so the last one by start ends highest.
	 */
	LATCH_STORE_RELAXED(&m->low[idx], first ? range_at(first, idx)->start : (uintptr_t)0);
	LATCH_STORE_RELAXED(&m->high[idx], last ? range_at(last, idx)->end : (uintptr_t)0);
}

static struct latch_range *range_of_change(const struct latch_tree_change *c)
{
	return latch_range_of_(c->node);
}

static int by_start(const void *a, const void *b)
{
	uintptr_t sa = range_of_change(a)->start, sb = range_of_change(b)->start;

	return (sa > sb) - (sa < sb);
}

/* The range in the map that starts at @start, or NULL (writer side). */
static struct latch_range *range_starting_at(const struct latch_range_map *m, uintptr_t start)
{
	return latch_range_of_(latch_tree_seek_in_copy_(&m->tree, 0, latch_range_order_, &start,
	                                                NULL, LATCH_TREE_SEEK_EQUAL_));
}

/* Is @r among the @nerase erases of @plan (sorted by start)? */
static bool erased_by(const struct latch_tree_change *plan, size_t nerase,
                      const struct latch_range *r)
{
	const struct latch_tree_change probe = { LATCH_TREE_ERASE,
		                                 (struct latch_tree_node *)&r->node };
	const struct latch_tree_change *hit =
	    bsearch(&probe, plan, nerase, sizeof(*plan), by_start);

	return hit && range_of_change(hit) == r;
}

/*
 * Does insert @r overlap a range that stays in the map, or is @r in the
 * map already?  Walks the ranges overlapping [r->start, r->end): the one
 * with the greatest start <= r->start, then its successors that start
 * before r->end.  Writer side, on copy 0.
 */
static bool overlaps_survivor(const struct latch_range_map *m, const struct latch_tree_change *plan,
                              size_t nerase, const struct latch_range *r)
{
	const struct latch_tree_node *below = latch_tree_seek_in_copy_(
	    &m->tree, 0, latch_range_order_, &r->start, NULL, LATCH_TREE_SEEK_FLOOR_);
	const struct latch_rb_node *rb = below ? &below->node[0] : latch_rb_first(&m->tree.tree[0]);

	for (; rb && range_at(rb, 0)->start < r->end; rb = latch_rb_next(rb)) {
		const struct latch_range *other = range_at(rb, 0);

		if (other->end > r->start && (other == r || !erased_by(plan, nerase, other)))
			return true;
	}
	return false;
}

/*
 * Check a plan against the map: erases first (@nerase of them), then
 * inserts, each part sorted by start.  Returns 0 or the error to report.
 * Cost O(n log n + n log N).  Under the writers' mutex.
 */
static int check_plan(const struct latch_range_map *m, const struct latch_tree_change *plan,
                      size_t nerase, size_t n)
{
	for (size_t i = 0; i < nerase; i++) {
		const struct latch_range *r = range_of_change(&plan[i]);

		/* Ranges in the map have distinct starts, so a repeat sorts next to itself. */
		if (range_starting_at(m, r->start) != r ||
		    (i > 0 && range_of_change(&plan[i - 1]) == r))
			return -EINVAL;
	}
	for (size_t i = nerase; i < n; i++) {
		const struct latch_range *r = range_of_change(&plan[i]);

		if (i > nerase && range_of_change(&plan[i - 1])->end > r->start)
			return -EEXIST;
		if (overlaps_survivor(m, plan, nerase, r))
			return -EEXIST;
	}
	return 0;
}

int latch_range_commit(struct latch_range_map *m, const struct latch_range_change *changes,
                       size_t n)
{
	struct latch_tree_change local[LOCAL_PLAN], *plan = local;
	size_t nerase = 0, ninsert = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct latch_range *r = changes[i].range;

		if (!r ||
		    (changes[i].op != LATCH_TREE_INSERT && changes[i].op != LATCH_TREE_ERASE) ||
		    (changes[i].op == LATCH_TREE_INSERT && r->start >= r->end))
			return -EINVAL;
	}
	if (n > LOCAL_PLAN && !(plan = malloc(n * sizeof(*plan))))
		return -ENOMEM;
	/* The plan: erases first (so inserts may take their place), then inserts. */
	for (size_t i = 0; i < n; i++)
		if (changes[i].op == LATCH_TREE_ERASE)
			plan[nerase++] =
			    (struct latch_tree_change){ LATCH_TREE_ERASE, &changes[i].range->node };
	for (size_t i = 0; i < n; i++)
		if (changes[i].op == LATCH_TREE_INSERT)
			plan[nerase + ninsert++] =
			    (struct latch_tree_change){ LATCH_TREE_INSERT,
				                        &changes[i].range->node };
	qsort(plan, nerase, sizeof(*plan), by_start);
	qsort(plan + nerase, ninsert, sizeof(*plan), by_start);

	pthread_mutex_lock(&m->lock);
	err = check_plan(m, plan, nerase, n);
	if (!err)
		latch_tree_commit_unchecked_(&m->tree, plan, n, &range_ops, update_bounds, m);
	pthread_mutex_unlock(&m->lock);

	if (plan != local)
		free(plan);
	return err;
}

int latch_range_insert(struct latch_range_map *m, struct latch_range *r)
{
	const struct latch_range_change change = { LATCH_TREE_INSERT, r };

	return latch_range_commit(m, &change, 1);
}

void latch_range_erase(struct latch_range_map *m, struct latch_range *r)
{
	const struct latch_range_change change = { LATCH_TREE_ERASE, r };
	int err = latch_range_commit(m, &change, 1);

	LATCH_CONTRACT(err == 0, "latch_range_erase", "the range is not in the map");
	(void)err;
}
