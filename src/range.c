/* SPDX-License-Identifier: MIT */
/*
 * The range map's writer side: every batch is checked whole against the
 * map under the writers' mutex, then applied as one latched-tree commit
 * that also updates each copy's bounds along with that copy.
 *
 * fork(): the child has only the thread that forked, so a mutex another
 * thread held at the fork would stay locked in it for ever, and that
 * thread's update would stay half done.  Every map therefore records the
 * fork generation its mutex belongs to (a counter bumped in the child of
 * every fork); the first writer call in a later generation re-initialises
 * the mutex and rebuilds the copy readers are not using from the one they
 * are using, which the latch keeps whole at every instruction of the
 * writer.  The fork waits for nothing and the parent pays one compare
 * per writer call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <latch/range.h>

#include "commit.h"
#include "mirror.h"

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

/*
 * Forks between the process that loaded the library and this one: 0 in
 * that process, bumped in the child of every fork while the child has a
 * single thread.  Threads created later see it through pthread_create(),
 * so relaxed accesses suffice.
 */
static unsigned long fork_generation;

/* Serializes the adoption of maps into a new generation (adopt()). */
static pthread_mutex_t adopt_lock = PTHREAD_MUTEX_INITIALIZER;

/* Around fork(): no adoption is half done in the child. */
static void before_fork(void)
{
	pthread_mutex_lock(&adopt_lock);
}

static void after_fork_in_parent(void)
{
	pthread_mutex_unlock(&adopt_lock);
}

static void after_fork_in_child(void)
{
	/* The forking thread took the lock in before_fork() and is this one. */
	pthread_mutex_unlock(&adopt_lock);
	LATCH_STORE_RELAXED(&fork_generation, LATCH_LOAD_RELAXED(&fork_generation) + 1);
}

/* At load time, before any thread of the program can hold a map's mutex. */
__attribute__((constructor)) static void register_fork_handlers(void)
{
	if (pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) != 0) {
		fputs(
		    "liblatch: pthread_atfork failed: range maps cannot be written after fork()\n",
		    stderr);
		abort();
	}
}

void latch_range_map_init(struct latch_range_map *m)
{
	latch_tree_init(&m->tree);
	for (unsigned idx = 0; idx < 2; idx++) {
		/* Relaxed: the map is not shared yet. */
		LATCH_STORE_RELAXED(&m->low[idx], (uintptr_t)0);
		LATCH_STORE_RELAXED(&m->high[idx], (uintptr_t)0);
	}
	pthread_mutex_init(&m->lock, NULL);
	/* Relaxed: the map is not shared yet. */
	LATCH_STORE_RELAXED(&m->generation, LATCH_LOAD_RELAXED(&fork_generation));
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

/*
 * Make @m's mutex and copies this process's own: the mutex may be held by
 * a thread of the parent that does not exist here, whose update may be
 * half done in the copy readers are not using.  A map that is merely new
 * to this generation (or was never written) goes through the same steps,
 * which then change nothing.  Cost O(n), once per map and generation.
 */
static void adopt(struct latch_range_map *m, unsigned long generation)
{
	pthread_mutex_lock(&adopt_lock);
	/* Relaxed: adopt_lock orders this with the last adoption's store. */
	if (LATCH_LOAD_RELAXED(&m->generation) != generation) {
		/*
		 * No thread of this process holds or waits for the mutex:
		 * every writer call comes through here first, and none can
		 * pass before the store below.
		 */
		pthread_mutex_init(&m->lock, NULL);
		latch_tree_mirror_(&m->tree, update_bounds, m);
		/* Release: pairs with the acquire load in lock_writers(). */
		LATCH_STORE_RELEASE(&m->generation, generation);
	}
	pthread_mutex_unlock(&adopt_lock);
}

/* Take the writers' mutex of @m, adopting the map first after a fork. */
static void lock_writers(struct latch_range_map *m)
{
	unsigned long generation = LATCH_LOAD_RELAXED(&fork_generation);

	/*
	 * Acquire: a writer that sees the map adopted into this generation
	 * also sees the re-initialised mutex and the rebuilt copy.
	 */
	if (LATCH_LOAD_ACQUIRE(&m->generation) != generation)
		adopt(m, generation);
	pthread_mutex_lock(&m->lock);
}

static struct latch_range *range_of_change(const struct latch_tree_change *c)
{
	return latch_range_of_(c->node);
}

/* Changes in order of their range's start, then of the range's address. */
static int by_start(const void *a, const void *b)
{
	const struct latch_range *ra = range_of_change(a), *rb = range_of_change(b);
	uintptr_t sa = ra->start, sb = rb->start, pa = (uintptr_t)ra, pb = (uintptr_t)rb;

	return sa != sb ? (sa > sb) - (sa < sb) : (pa > pb) - (pa < pb);
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

	return bsearch(&probe, plan, nerase, sizeof(*plan), by_start) != NULL;
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
 * inserts, each part sorted by start (see by_start()).  Returns 0 or the
 * error to report: -EINVAL for a range erased twice, then -ENOENT for an
 * erase of a range not in the map, then -EEXIST.
 * Cost O(n log n + n log N).  Under the writers' mutex.
 */
static int check_plan(const struct latch_range_map *m, const struct latch_tree_change *plan,
                      size_t nerase, size_t n)
{
	/* A repeat sorts next to itself. */
	for (size_t i = 1; i < nerase; i++)
		if (range_of_change(&plan[i - 1]) == range_of_change(&plan[i]))
			return -EINVAL;
	for (size_t i = 0; i < nerase; i++) {
		const struct latch_range *r = range_of_change(&plan[i]);

		/* Ranges in the map have distinct starts. */
		if (range_starting_at(m, r->start) != r)
			return -ENOENT;
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

/* latch_range_commit(), for the public call @call. */
static int commit(const char *call, struct latch_range_map *m,
                  const struct latch_range_change *changes, size_t n)
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

	lock_writers(m);
	err = check_plan(m, plan, nerase, n);
	if (!err)
		latch_tree_commit_unchecked_(call, &m->tree, plan, n, &range_ops, update_bounds, m);
	pthread_mutex_unlock(&m->lock);

	if (plan != local)
		free(plan);
	return err;
}

int latch_range_commit(struct latch_range_map *m, const struct latch_range_change *changes,
                       size_t n)
{
	return commit("latch_range_commit", m, changes, n);
}

int latch_range_insert(struct latch_range_map *m, struct latch_range *r)
{
	const struct latch_range_change change = { LATCH_TREE_INSERT, r };

	return commit("latch_range_insert", m, &change, 1);
}

int latch_range_erase(struct latch_range_map *m, struct latch_range *r)
{
	const struct latch_range_change change = { LATCH_TREE_ERASE, r };

	return commit("latch_range_erase", m, &change, 1);
}
