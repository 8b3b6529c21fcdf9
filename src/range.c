/* SPDX-License-Identifier: MIT */
/*
 * The range map: the B+-tree core (btree.c) keyed by start, with span
 * leaves that also hold each range's end, and a writers' mutex that
 * survives fork().
 *
 * A batch is checked by applying it: each change is made to the idle copy
 * (which no reader is sent to) after it is checked against that copy as
 * the changes before it left it.  When a change is bad, the ones made are
 * undone in reverse order on the same copy, and readers never saw any of
 * it; otherwise one flip publishes the copy and the batch is replayed on
 * the other copy without checks.  So a batch costs one check descent per
 * change, not a separate validation pass, and changes of one batch may
 * interact in any way (erase a range, insert an overlapping one).
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

/* Batches up to this size keep their undo log on the stack; larger ones allocate. */
#define LOCAL_UNDO 16

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
	latch_btree_init_(&m->tree, true);
	if (pthread_mutex_init(&m->lock, NULL) != 0)
		return -ENOMEM;
	/* Relaxed: the map is not shared yet. */
	LATCH_STORE_RELAXED(&m->generation, LATCH_LOAD_RELAXED(&fork_generation));
	return 0;
}

void latch_range_map_destroy(struct latch_range_map *m)
{
	latch_btree_destroy_(&m->tree);
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
		err = latch_btree_recover_(&m->tree);
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

/*
 * Does [@start, @end) overlap a range of copy @cp?  Sets *@hit to the one
 * with the lowest start.  The copy must be stable: the writer's idle copy.
 */
static bool overlaps(const struct latch_map *t, unsigned cp, uintptr_t start, uintptr_t end,
                     struct latch_btree_ent *hit)
{
	bool bad;

	/* The range starting at or below start, if it reaches past start... */
	if (latch_btree_attempt_(t, cp, start, LATCH_BTREE_FLOOR, hit, &bad) && hit->end > start)
		return true;
	/* ...else the first one starting above it, if it starts before end. */
	return latch_btree_attempt_(t, cp, start, LATCH_BTREE_CEIL, hit, &bad) && hit->key < end;
}

/*
 * Check change @c against copy @cp and make it there; *@undo becomes the
 * change that reverts it (set field by field: a whole-struct copy would
 * also read the padding after op, which GenMC's harness rejects as a
 * mixed-size access).  Returns 0 or the error (the copy unchanged), with
 * *@hit the range an insert collides with.
 */
static int check_and_apply(struct latch_map *t, unsigned cp, const struct latch_range_change *c,
                           struct latch_range_change *undo, struct latch_btree_ent *hit)
{
	const struct latch_btree_ent x = { c->range.start, (uintptr_t)c->range.value,
		                           c->range.end };
	bool bad;

	switch (c->op) {
	case LATCH_RANGE_INSERT:
		if (c->range.start >= c->range.end)
			return -EINVAL;
		if (overlaps(t, cp, c->range.start, c->range.end, hit))
			return -EEXIST;
		latch_btree_insert_(t, cp, &x);
		undo->op = LATCH_RANGE_ERASE;
		undo->range = c->range;
		return 0;
	case LATCH_RANGE_ERASE:
		if (!latch_btree_attempt_(t, cp, c->range.start, LATCH_BTREE_EXACT, hit, &bad))
			return -ENOENT;
		latch_btree_erase_(t, cp, c->range.start);
		undo->op = LATCH_RANGE_INSERT;
		undo->range = range_of(hit);
		return 0;
	}
	return -EINVAL;
}

/* Make the checked change @c to copy @cp. */
static void apply(struct latch_map *t, unsigned cp, const struct latch_range_change *c)
{
	const struct latch_btree_ent x = { c->range.start, (uintptr_t)c->range.value,
		                           c->range.end };

	if (c->op == LATCH_RANGE_INSERT)
		latch_btree_insert_(t, cp, &x);
	else
		latch_btree_erase_(t, cp, c->range.start);
}

/*
 * The one-flip update of a batch, under the writers' mutex: check and
 * make every change on the idle copy (undoing them there at the first bad
 * one), flip, replay on the other copy.  Nodes are reserved for every
 * change, forwards or undone, to be an insertion.
 */
static int commit_locked(struct latch_map *t, const struct latch_range_change *changes, size_t n,
                         size_t *failed, struct latch_range *collision)
{
	struct latch_range_change local[LOCAL_UNDO], *undo = local;
	struct latch_btree_ent hit;
	size_t inserts = 0, i;
	unsigned cp;
	int err = 0;

	for (i = 0; i < n; i++)
		inserts += changes[i].op == LATCH_RANGE_INSERT;
	if (n > LOCAL_UNDO)
		undo = latch_btree_alloc_(_Alignof(struct latch_range_change), n * sizeof(*undo));
	if (!undo || latch_btree_reserve_inserts_(t, n, inserts)) {
		*failed = n;
		err = -ENOMEM;
		goto out;
	}
	/* The idle copy: the counter sends readers to the other one (see btree.c, the one-flip update). */
	cp = latch_seq_write_begin(&t->seq);
	for (i = 0; i < n && !err; i++)
		err = check_and_apply(t, cp, &changes[i], &undo[i], &hit);
	if (err) {
		*failed = --i;
		if (err == -EEXIST && collision)
			*collision = range_of(&hit);
		while (i-- > 0)
			apply(t, cp, &undo[i]);
		goto out;
	}
	/*
	 * The flip: its release store publishes the idle copy whole; its
	 * release fence orders it before every store of the replay below,
	 * which readers still on that copy detect in their retry check.
	 */
	cp = latch_btree_flip_(t);
	for (i = 0; i < n; i++)
		apply(t, cp, &changes[i]);
out:
	if (undo != local)
		free(undo);
	return err;
}

static int commit(struct latch_range_map *m, const struct latch_range_change *changes, size_t n,
                  size_t *failed, struct latch_range *collision)
{
	size_t bad = n;
	int err;

	if (!n)
		return 0;
	err = lock_writers(m);
	if (!err) {
		err = commit_locked(&m->tree, changes, n, &bad, collision);
		pthread_mutex_unlock(&m->lock);
	}
	if (err && failed)
		*failed = bad;
	return err;
}

int latch_range_commit(struct latch_range_map *m, const struct latch_range_change *changes,
                       size_t n, size_t *failed)
{
	return commit(m, changes, n, failed, NULL);
}

int latch_range_insert(struct latch_range_map *m, uintptr_t start, uintptr_t end, void *value,
                       struct latch_range *collision)
{
	const struct latch_range_change c = { LATCH_RANGE_INSERT, { start, end, value } };

	return commit(m, &c, 1, NULL, collision);
}

int latch_range_erase(struct latch_range_map *m, uintptr_t start)
{
	const struct latch_range_change c = { LATCH_RANGE_ERASE, { start, 0, NULL } };

	return commit(m, &c, 1, NULL, NULL);
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
		err = latch_btree_load_(&m->tree, n, load_get, ranges);
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
		err = latch_btree_reserve_(&m->tree, n);
		pthread_mutex_unlock(&m->lock);
	}
	return err;
}

/* ---- readers ---- */

static bool lookup(const struct latch_range_map *m, uint64_t x, enum latch_btree_mode mode,
                   struct latch_range *out)
{
	struct latch_btree_ent e;
	bool hit = latch_btree_lookup_(&m->tree, x, mode, &e);

	if (hit && out)
		*out = range_of(&e);
	return hit;
}

bool latch_range_find(const struct latch_range_map *m, uintptr_t addr, struct latch_range *out)
{
	struct latch_btree_ent e;

	/* One descent; the leaf entry holds the end, copied out in the same attempt. */
	if (!latch_btree_lookup_(&m->tree, addr, LATCH_BTREE_FLOOR, &e) || addr >= e.end)
		return false;
	if (out)
		*out = range_of(&e);
	return true;
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
	return latch_btree_size_(&m->tree);
}
