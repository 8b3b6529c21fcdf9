/* SPDX-License-Identifier: MIT */
/*
 * The range map: the B+-tree core (btree.h) keyed by start, with span
 * leaves that also hold each range's end, and a writers' mutex that
 * survives fork().
 *
 * Batches go to the core's one engine (btree-commit.c), which checks each
 * change against the idle copy as the ones before it left it, undoes
 * what it made when one is bad, and otherwise flips once and replays.
 *
 * fork(): the child has only the thread that forked, so a mutex another
 * thread held at the fork would stay locked in it for ever, and that
 * thread's update would stay half done.  Every map therefore records the
 * fork generation its mutex belongs to (a counter bumped in the child of
 * every fork); the first writer call in a later generation re-initialises
 * the mutex and rebuilds the copy readers are not using, and the node
 * pools, from the copy they are using, which the latch keeps whole at
 * every instruction of the writer.  The fork waits for nothing and the
 * parent pays one compare per writer call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <latch/range.h>

#include "btree.h"

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

int latch_range_map_init(struct latch_range_map *m)
{
	latch_btree_init(latch_btree_of_range(m), true);
	if (pthread_mutex_init(&m->lock, NULL) != 0)
		return -ENOMEM;
	/* Relaxed: the map is not shared yet. */
	LATCH_STORE_RELAXED(&m->generation, LATCH_LOAD_RELAXED(&fork_generation));
	return 0;
}

void latch_range_map_destroy(struct latch_range_map *m)
{
	latch_btree_destroy(latch_btree_of_range(m));
	pthread_mutex_destroy(&m->lock);
}

/*
 * Make @m's mutex and copies this process's own: the mutex may be held by
 * a thread of the parent that does not exist here, whose update may be
 * half done in the copy readers are not using.  A map that is merely new
 * to this generation (or was never written) goes through the same steps,
 * which then change nothing it holds.  Returns 0 or -ENOMEM (the map is
 * then adopted by a later writer call).  Cost O(n log n), once per map
 * and generation.
 */
static int adopt(struct latch_range_map *m, unsigned long generation)
{
	int err = 0;

	pthread_mutex_lock(&adopt_lock);
	/* Relaxed: adopt_lock orders this with the last adoption's store. */
	if (LATCH_LOAD_RELAXED(&m->generation) != generation) {
		/*
		 * No thread of this process holds or waits for the mutex:
		 * every writer call comes through here first, and none can
		 * pass before the store below.
		 */
		pthread_mutex_init(&m->lock, NULL);
		err = latch_btree_recover(latch_btree_of_range(m));
		/* Release: pairs with the acquire load in lock_writers(). */
		if (!err)
			LATCH_STORE_RELEASE(&m->generation, generation);
	}
	pthread_mutex_unlock(&adopt_lock);
	return err;
}

/* Take the writers' mutex of @m, adopting the map first after a fork.  0 or -ENOMEM. */
static int lock_writers(struct latch_range_map *m)
{
	unsigned long generation = LATCH_LOAD_RELAXED(&fork_generation);

	/*
	 * Acquire: a writer that sees the map adopted into this generation
	 * also sees the re-initialised mutex and the rebuilt copy.
	 */
	if (LATCH_LOAD_ACQUIRE(&m->generation) != generation && adopt(m, generation))
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	return 0;
}

static struct latch_range range_of(const struct latch_btree_ent *e)
{
	return (struct latch_range){ (uintptr_t)e->key, e->end, (void *)e->slot };
}

/* The core's op for each of the range map's (the order of enum latch_range_op). */
static const enum latch_btree_op core_op[] = {
	[LATCH_RANGE_INSERT] = LATCH_BTREE_INSERT,
	[LATCH_RANGE_ERASE] = LATCH_BTREE_ERASE,
	[LATCH_RANGE_ERASE_IF] = LATCH_BTREE_ERASE_IF,
	[LATCH_RANGE_STORE] = LATCH_BTREE_STORE,
};

/* Change @i of the batch @src (an array of struct latch_range_change) as the core's. */
static void change_of(const void *src, size_t i, struct latch_btree_change *c)
{
	const struct latch_range_change *rc = &((const struct latch_range_change *)src)[i];

	/* Unsigned: an op outside the enum, negative included, is a bad op. */
	c->op = (unsigned)rc->op < sizeof(core_op) / sizeof(core_op[0]) ? core_op[rc->op]
	                                                                : LATCH_BTREE_BAD_OP;
	c->ent =
	    (struct latch_btree_ent){ rc->range.start, (uintptr_t)rc->range.value, rc->range.end };
}

/*
 * Apply a batch under the writers' mutex: the core's one engine does the
 * rest.  @removed: what a lone change removes (NULL: nobody asks).
 */
static int commit(struct latch_range_map *m, const struct latch_range_change *changes, size_t n,
                  size_t *failed, struct latch_range *collision,
                  struct latch_btree_removed *removed)
{
	struct latch_btree_ent hit;
	size_t bad = n;
	int err;

	if (!n)
		return 0;
	err = lock_writers(m);
	if (!err) {
		err = latch_btree_commit(latch_btree_of_range(m), n, change_of, changes, &bad, &hit,
		                         removed);
		pthread_mutex_unlock(&m->lock);
	}
	if (err == -EEXIST && collision)
		*collision = range_of(&hit);
	if (err && failed)
		*failed = bad;
	return err;
}

int latch_range_commit(struct latch_range_map *m, const struct latch_range_change *changes,
                       size_t n, size_t *failed)
{
	return commit(m, changes, n, failed, NULL, NULL);
}

int latch_range_insert(struct latch_range_map *m, uintptr_t start, uintptr_t end, void *value,
                       struct latch_range *collision)
{
	const struct latch_range_change c = { LATCH_RANGE_INSERT, { start, end, value } };

	return commit(m, &c, 1, NULL, collision, NULL);
}

int latch_range_erase(struct latch_range_map *m, uintptr_t start)
{
	const struct latch_range_change c = { LATCH_RANGE_ERASE, { start, 0, NULL } };

	return commit(m, &c, 1, NULL, NULL, NULL);
}

/* The engine's removed entry @i, into the caller's array of ranges @ctx. */
static void put_range(void *ctx, size_t i, const struct latch_btree_ent *e)
{
	((struct latch_range *)ctx)[i] = range_of(e);
}

int latch_range_remove(struct latch_range_map *m, uintptr_t start, struct latch_range *removed)
{
	const struct latch_range_change c = { LATCH_RANGE_ERASE, { start, 0, NULL } };
	struct latch_btree_removed r = { put_range, removed, removed ? 1 : 0, 0 };

	return commit(m, &c, 1, NULL, NULL, &r);
}

int latch_range_erase_if(struct latch_range_map *m, const struct latch_range *expected)
{
	const struct latch_range_change c = { LATCH_RANGE_ERASE_IF, *expected };

	return commit(m, &c, 1, NULL, NULL, NULL);
}

int latch_range_store(struct latch_range_map *m, uintptr_t start, uintptr_t end, void *value,
                      struct latch_range *evicted, size_t max_evicted, size_t *n_evicted)
{
	const struct latch_range_change c = { LATCH_RANGE_STORE, { start, end, value } };
	struct latch_btree_removed r = { put_range, evicted, evicted ? max_evicted : 0, 0 };
	int err = commit(m, &c, 1, NULL, NULL, &r);

	if (n_evicted)
		*n_evicted = err && err != -ENOSPC ? 0 : r.n;
	return err;
}

static void load_get(const void *src, size_t i, struct latch_btree_ent *e)
{
	const struct latch_range *r = &((const struct latch_range *)src)[i];

	*e = (struct latch_btree_ent){ r->start, (uintptr_t)r->value, r->end };
}

int latch_range_load_sorted(struct latch_range_map *m, const struct latch_range *ranges, size_t n,
                            size_t *failed)
{
	size_t bad = n;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		bad = i;
		if (ranges[i].start >= ranges[i].end ||
		    (i && ranges[i].start < ranges[i - 1].start))
			err = -EINVAL;
		else if (i && ranges[i].start < ranges[i - 1].end)
			err = -EEXIST;
	}
	if (!err) {
		bad = n;
		err = lock_writers(m);
	}
	if (!err) {
		err = latch_btree_load(latch_btree_of_range(m), n, load_get, ranges);
		pthread_mutex_unlock(&m->lock);
	}
	if (err && failed)
		*failed = bad;
	return err;
}

int latch_range_reserve(struct latch_range_map *m, size_t n)
{
	int err = lock_writers(m);

	if (!err) {
		err = latch_btree_reserve(latch_btree_of_range(m), n);
		pthread_mutex_unlock(&m->lock);
	}
	return err;
}

/* ---- readers ---- */

static bool lookup(const struct latch_range_map *m, uint64_t x, enum latch_btree_mode mode,
                   struct latch_range *out)
{
	struct latch_btree_ent e;
	bool hit = latch_btree_span_lookup(latch_btree_of_range(m), x, mode, &e);

	if (hit && out)
		*out = range_of(&e);
	return hit;
}

bool latch_range_find(const struct latch_range_map *m, uintptr_t addr, struct latch_range *out)
{
	struct latch_btree_ent e;

	/* One descent; the leaf entry holds the end, copied out in the same attempt. */
	if (!latch_btree_span_lookup(latch_btree_of_range(m), addr, LATCH_BTREE_FLOOR, &e) ||
	    addr >= e.end)
		return false;
	if (out)
		*out = range_of(&e);
	return true;
}

size_t latch_range_find_many(const struct latch_range_map *m, const uintptr_t *addrs, size_t n,
                             struct latch_range *out, bool *found)
{
	struct latch_btree_ent e[LATCH_BTREE_MANY];
	uint64_t x[LATCH_BTREE_MANY];
	size_t hits = 0;

	for (size_t at = 0; at < n; at += LATCH_BTREE_MANY) {
		size_t k = n - at < LATCH_BTREE_MANY ? n - at : LATCH_BTREE_MANY;

		for (size_t i = 0; i < k; i++)
			x[i] = addrs[at + i];
		latch_btree_span_lookup_many(latch_btree_of_range(m), x, k, LATCH_BTREE_FLOOR, e,
		                             found + at);
		/* One floor descent each; the end, copied out with it, tells whether it holds. */
		for (size_t i = 0; i < k; i++) {
			found[at + i] = found[at + i] && addrs[at + i] < e[i].end;
			if (found[at + i])
				out[at + i] = range_of(&e[i]);
			hits += found[at + i];
		}
	}
	return hits;
}

bool latch_range_floor(const struct latch_range_map *m, uintptr_t addr, struct latch_range *out)
{
	return lookup(m, addr, LATCH_BTREE_FLOOR, out);
}

bool latch_range_ceil(const struct latch_range_map *m, uintptr_t addr, struct latch_range *out)
{
	return lookup(m, addr, LATCH_BTREE_CEIL, out);
}

bool latch_range_first(const struct latch_range_map *m, struct latch_range *out)
{
	return lookup(m, 0, LATCH_BTREE_CEIL, out);
}

bool latch_range_last(const struct latch_range_map *m, struct latch_range *out)
{
	return lookup(m, UINTPTR_MAX, LATCH_BTREE_FLOOR, out);
}

bool latch_range_next(const struct latch_range_map *m, uintptr_t start, struct latch_range *out)
{
	return start != UINTPTR_MAX && lookup(m, (uint64_t)start + 1, LATCH_BTREE_CEIL, out);
}

bool latch_range_prev(const struct latch_range_map *m, uintptr_t start, struct latch_range *out)
{
	return start != 0 && lookup(m, (uint64_t)start - 1, LATCH_BTREE_FLOOR, out);
}

size_t latch_range_size(const struct latch_range_map *m)
{
	return latch_btree_size(latch_btree_of_range(m));
}
