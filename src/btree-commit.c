/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree's one batch engine, under latch_map and
 * latch_range_map alike: their calls translate into core changes and come
 * here (the range map holding its lock).
 *
 * A batch is checked by applying it: each change is checked against the
 * idle copy (which no reader is sent to) as the changes before it left
 * it, and made there.  When a change is bad, those made are undone in
 * reverse order on the same copy and readers never saw any of it;
 * otherwise one flip publishes the copy and the batch is replayed on the
 * other copy without checks (latch_seq_update() makes the three steps).
 * So changes of one batch may interact in any way (erase a range, insert
 * an overlapping one), and a batch costs one descent per change per copy
 * (a store one more per entry it evicts).  A single change finds its spot
 * in both copies with one paired descent, whose cache misses overlap, and
 * needs no undo: it is checked before it is made.
 *
 * Memory: every node a change can take is reserved before the update
 * starts, so nothing fails while a change is being made.  Inserts and
 * stores can take nodes; erases only free them, but in a batch of more
 * than one change an erase may have to be undone, which re-inserts, and
 * so may a store's evictions, whose number only the idle copy tells: a
 * batch reserves for them, and grows its undo log (a stack of reverting
 * changes) for them, when it reaches the store, between two changes of
 * the idle copy; if that fails, what was made is undone, which never
 * allocates.  The undo log of a batch of up to LATCH_BTREE_LOCAL_BATCH
 * changes is on the stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"

/* ---- node need ---- */

/*
 * The most nodes a valid tree of @entries entries can have: leaves other
 * than the root hold >= 8 entries, inner nodes other than the root >= 8
 * children.  *height is the most levels it can have.
 */
static void max_nodes(size_t entries, size_t *leaves, size_t *inner, size_t *height)
{
	size_t x = entries / LATCH_BTREE_MIN > 1 ? entries / LATCH_BTREE_MIN : 1;

	*leaves = entries ? x : 0;
	*inner = 0;
	*height = entries ? 1 : 0;
	while (entries && x > 1) {
		x = x / LATCH_BTREE_MIN > 1 ? x / LATCH_BTREE_MIN : 1;
		*inner += x;
		(*height)++;
	}
}

static size_t min2(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * An insertion adds at most one leaf and one inner node per level
 * (splits and a new root); erasures only free nodes.  The need is also at
 * most what a valid tree of every entry the update can hold at once has
 * beyond what is in use, since the tree is valid after every change.
 * The bound is concave in the nodes in use, so reserving it for the
 * average of the two copies covers both (latch_btree_in_use()).
 */
int latch_btree_reserve_for(struct latch_btree *t, size_t changes, size_t inserts)
{
	size_t leaves, inner, height;

	if (!changes)
		return 0;
	max_nodes(t->copy[0].size + inserts, &leaves, &inner, &height);
	return latch_btree_reserve_more(
	    t,
	    min2(changes, latch_btree_sub0(leaves, latch_btree_in_use(t, LATCH_BTREE_LEAF_POOL))),
	    min2(changes * height,
	         latch_btree_sub0(inner, latch_btree_in_use(t, LATCH_BTREE_INNER_POOL))));
}

int latch_btree_reserve(struct latch_btree *t, size_t n)
{
	size_t leaves, inner, height;

	max_nodes(n, &leaves, &inner, &height);
	return latch_btree_reserve_more(
	    t, latch_btree_sub0(leaves, latch_btree_in_use(t, LATCH_BTREE_LEAF_POOL)),
	    latch_btree_sub0(inner, latch_btree_in_use(t, LATCH_BTREE_INNER_POOL)));
}

/* Is @key at @s? */
static bool spot_holds(const struct latch_btree_spot *s, uint64_t key)
{
	return s->at < s->used && s->leaf->key[s->at] == key;
}

/* The entry at position @i of the leaf of @s. */
static struct latch_btree_ent spot_entry(const struct latch_btree *t,
                                         const struct latch_btree_spot *s, unsigned i)
{
	/* Plain loads: only this (serialized) writer stores nodes. */
	return (struct latch_btree_ent){ s->leaf->key[i], s->leaf->slot[i],
		                         t->spans ? latch_btree_ends_(s->leaf)[i] : 0 };
}

/*
 * The least key above the leaf of @s, from its path: by the separator
 * invariant, the bound of the nearest subtree right of the path is
 * exactly that key.  False when the leaf is the last one.
 */
static bool key_after_leaf(const struct latch_btree_spot *s, uint64_t *key)
{
	for (unsigned k = s->depth; k-- > 0;) {
		const struct latch_btree_node *p = s->path[k].node;

		if (s->path[k].idx + 1 < latch_btree_node_used(p)) {
			*key = p->key[s->path[k].idx + 1];
			return true;
		}
	}
	return false;
}

/*
 * Is there an entry at or after the spot @s of copy @cp whose key is
 * below @end?  If so, @s is moved to it: it is at @s, or (when @s is past
 * its leaf's last entry) the first of the next leaf, whose key is the
 * bound of the nearest subtree right of the path, and one descent finds
 * its spot.  @s is left as it was when the answer is no.
 */
static bool next_below(const struct latch_btree *t, unsigned cp, struct latch_btree_spot *s,
                       uint64_t end)
{
	uint64_t next;

	if (s->at < s->used)
		return s->leaf->key[s->at] < end;
	if (!key_after_leaf(s, &next) || next >= end)
		return false;
	latch_btree_locate(t, cp, cp, next, s);
	return true;
}

/*
 * Does a span of copy @cp overlap [x->key, x->end), where @s is x->key's
 * spot?  If so, @s is moved to the one with the lowest start; else it is
 * left as it was.  The spot answers it without another descent: the entry
 * before it (the floor, whose end must not pass the start) and the one at
 * it (the ceiling, which must start at or after the end); only a ceiling
 * in the next leaf takes one descent more.
 */
static bool overlap_at(const struct latch_btree *t, unsigned cp, struct latch_btree_spot *s,
                       const struct latch_btree_ent *x)
{
	if (!s->leaf)
		return false;
	/* No floor at position 0: by the separator invariant, x is below every key. */
	if (s->at > 0 && !spot_holds(s, x->key) && latch_btree_ends_(s->leaf)[s->at - 1] > x->key) {
		s->at--;
		return true;
	}
	return next_below(t, cp, s, x->end);
}

/*
 * The spans of copy @cp that [x->key, x->end) overlaps, from x->key's
 * spot @s, in start order: sets r->n to how many, and passes the first
 * r->max of them to r->put.  Reads only; O(k) for k spans, plus one
 * descent per leaf boundary crossed.
 */
static void overlapping(const struct latch_btree *t, unsigned cp, const struct latch_btree_spot *s,
                        const struct latch_btree_ent *x, struct latch_btree_removed *r)
{
	struct latch_btree_spot c = *s;

	r->n = 0;
	for (bool more = overlap_at(t, cp, &c, x); more;
	     c.at++, more = next_below(t, cp, &c, x->end)) {
		if (r->n < r->max) {
			struct latch_btree_ent e = spot_entry(t, &c, c.at);

			r->put(r->ctx, r->n, &e);
		}
		r->n++;
	}
}

/* Where a change's removed entries go when nobody asked for them. */
static void put_nothing(void *ctx, size_t i, const struct latch_btree_ent *e)
{
	(void)ctx, (void)i, (void)e;
}

/* Report the entry at @s, which a lone erase removes, to @r. */
static void report_one(const struct latch_btree *t, const struct latch_btree_spot *s,
                       struct latch_btree_removed *r)
{
	struct latch_btree_ent e = spot_entry(t, s, s->at);

	r->n = 1;
	if (r->max)
		r->put(r->ctx, 0, &e);
}

/*
 * The error change @c would meet at its spot @s in copy @cp, 0 if it is
 * valid there; for -EEXIST, *@hit is what it collides with.  @r learns
 * what the change removes: the entry an erase removes, or how many
 * entries a store evicts (the first r->max of them passed to r->put).
 * @s may move where it is invalid (a span insert's collision).
 */
static int check(const struct latch_btree *t, unsigned cp, const struct latch_btree_change *c,
                 struct latch_btree_spot *s, struct latch_btree_ent *hit,
                 struct latch_btree_removed *r)
{
	bool present = s->leaf && spot_holds(s, c->ent.key);

	r->n = 0;
	switch (c->op) {
	case LATCH_BTREE_INSERT:
		if (t->spans) {
			if (c->ent.key >= c->ent.end)
				return -EINVAL;
			if (!overlap_at(t, cp, s, &c->ent))
				return 0;
		} else if (!present) {
			return 0;
		}
		*hit = spot_entry(t, s, s->at);
		return -EEXIST;
	case LATCH_BTREE_ERASE_IF:
		if (present && (s->leaf->slot[s->at] != c->ent.slot ||
		                (t->spans && latch_btree_ends_(s->leaf)[s->at] != c->ent.end)))
			return -ESTALE;
		/* fall through */
	case LATCH_BTREE_ERASE:
		if (!present)
			return -ENOENT;
		report_one(t, s, r);
		return 0;
	case LATCH_BTREE_REPLACE:
		return present ? 0 : -ENOENT;
	case LATCH_BTREE_STORE:
		if (!t->spans || c->ent.key >= c->ent.end)
			return -EINVAL;
		overlapping(t, cp, s, &c->ent, r);
		return 0;
	case LATCH_BTREE_BAD_OP:
		break;
	}
	return -EINVAL;
}

/* One update: what latch_seq_update() hands to each half. */
struct update {
	struct latch_btree *t;
	size_t n, failed;
	void (*get)(const void *src, size_t i, struct latch_btree_change *c);
	const void *src;
	/* n > 1: the changes reverting those made, in order; room for cap */
	struct latch_btree_change *undo;
	size_t logged, cap;
	size_t entries; /* the most entries a copy can hold during the update */
	struct latch_btree_ent *hit;
	struct latch_btree_removed *removed; /* n == 1: what the change removes */
	struct latch_btree_change one;       /* n == 1: the change, read once */
	struct latch_btree_spot both[2];     /* n == 1: the change's spot in each copy */
};

/* Log the change (@op, @e) that reverts one just about to be made (unless @u is NULL). */
static void log_undo(struct update *u, enum latch_btree_op op, struct latch_btree_ent e)
{
	if (u)
		u->undo[u->logged++] = (struct latch_btree_change){ op, e };
}

/*
 * Make the checked change @c at its spot @s in copy @cp, logging in @u
 * (unless NULL) the changes that revert it.  A store erases the spans it
 * overlaps one at a time, finding the next one from a fresh spot, then
 * inserts: k + 1 descents of the copy when it evicts k >= 1 spans, none
 * beyond @s when it evicts none.
 */
static void apply(struct latch_btree *t, unsigned cp, const struct latch_btree_change *c,
                  struct latch_btree_spot *s, struct update *u)
{
	switch (c->op) {
	case LATCH_BTREE_INSERT:
		log_undo(u, LATCH_BTREE_ERASE, c->ent);
		latch_btree_insert_at(t, cp, s, &c->ent);
		break;
	case LATCH_BTREE_ERASE:
	case LATCH_BTREE_ERASE_IF:
		log_undo(u, LATCH_BTREE_INSERT, spot_entry(t, s, s->at));
		latch_btree_erase_at(t, cp, s);
		break;
	case LATCH_BTREE_REPLACE:
		log_undo(u, LATCH_BTREE_REPLACE, spot_entry(t, s, s->at));
		latch_btree_replace_at(s, c->ent.slot);
		break;
	case LATCH_BTREE_STORE:
		while (overlap_at(t, cp, s, &c->ent)) {
			log_undo(u, LATCH_BTREE_INSERT, spot_entry(t, s, s->at));
			latch_btree_erase_at(t, cp, s);
			latch_btree_locate(t, cp, cp, c->ent.key, s);
		}
		log_undo(u, LATCH_BTREE_ERASE, c->ent);
		latch_btree_insert_at(t, cp, s, &c->ent);
		break;
	case LATCH_BTREE_BAD_OP:
		break;
	}
}

/* Make @c, checked, at its spot in copy @cp (one descent of that copy, more for a store). */
static void locate_and_apply(struct latch_btree *t, unsigned cp, const struct latch_btree_change *c)
{
	struct latch_btree_spot s;

	latch_btree_locate(t, cp, cp, c->ent.key, &s);
	apply(t, cp, c, &s, NULL);
}

/* Undo, in reverse, every change @u logged on copy @cp.  Allocates nothing. */
static void undo_all(struct update *u, unsigned cp)
{
	while (u->logged > 0)
		locate_and_apply(u->t, cp, &u->undo[--u->logged]);
}

/*
 * Make the pools hold, beyond the free nodes they have now, what @k more
 * inserts into one copy can take: a leaf and an inner node per level
 * each, but no more than would leave room for two valid trees of
 * u->entries entries, which is enough for anything.  Allocates only; no
 * copy changes.  0 or -ENOMEM.
 */
static int reserve_on_top(struct update *u, size_t k)
{
	struct latch_btree_pool *pool = u->t->pool;
	size_t most[2], height;

	max_nodes(u->entries, &most[LATCH_BTREE_LEAF_POOL], &most[LATCH_BTREE_INNER_POOL], &height);
	for (unsigned kind = 0; kind < 2; kind++) {
		size_t used = pool[kind].total - pool[kind].free;
		size_t want = pool[kind].free + k * (kind == LATCH_BTREE_LEAF_POOL ? 1 : height);

		if (latch_btree_pool_reserve(&pool[kind],
		                             min2(want, latch_btree_sub0(2 * most[kind], used))))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Before change @i of a batch, a store that evicts @k entries: room in
 * the undo log for its k + 1 reverting changes and one for each change
 * after it (a larger log replaces the old one), and the nodes that
 * re-inserting its evictions can take when it is undone.  0 or -ENOMEM.
 */
static int make_room(struct update *u, size_t i, size_t k)
{
	size_t need = u->logged + k + 1 + (u->n - i - 1);

	if (need > u->cap) {
		size_t cap = need > 2 * u->cap ? need : 2 * u->cap;
		struct latch_btree_change *log =
		    latch_btree_alloc(_Alignof(struct latch_btree_change), cap * sizeof(*log));

		if (!log)
			return -ENOMEM;
		memcpy(log, u->undo, u->logged * sizeof(*log));
		if (u->cap > LATCH_BTREE_LOCAL_BATCH)
			free(u->undo);
		u->undo = log;
		u->cap = cap;
	}
	return k ? reserve_on_top(u, k) : 0;
}

/*
 * One copy's half of an update.  The first (the idle copy, @replay
 * false) checks each change where the ones before it left the copy and
 * makes it, or undoes what it made and fails; the second replays them.
 */
static int update_copy(void *arg, unsigned cp, bool replay)
{
	struct update *u = arg;
	struct latch_btree *t = u->t;
	struct latch_btree_change c;

	if (u->n == 1) {
		int err = 0;

		if (!replay) {
			latch_btree_locate(t, 0, 1, u->one.ent.key, u->both);
			err = check(t, cp, &u->one, &u->both[cp], u->hit, u->removed);
			if (!err && u->one.op == LATCH_BTREE_STORE &&
			    u->removed->n > u->removed->max)
				err = -ENOSPC;
		}
		if (!err)
			apply(t, cp, &u->one, &u->both[cp], NULL);
		return err;
	}
	for (size_t i = 0; i < u->n; i++) {
		struct latch_btree_removed count = { put_nothing, NULL, 0, 0 };
		struct latch_btree_spot s;
		int err;

		u->get(u->src, i, &c);
		if (replay) {
			locate_and_apply(t, cp, &c);
			continue;
		}
		latch_btree_locate(t, cp, cp, c.ent.key, &s);
		err = check(t, cp, &c, &s, u->hit, &count);
		if (!err && c.op == LATCH_BTREE_STORE)
			err = make_room(u, i, count.n);
		if (err) {
			u->failed = err == -ENOMEM ? u->n : i;
			undo_all(u, cp);
			return err;
		}
		apply(t, cp, &c, &s, u);
	}
	return 0;
}

int latch_btree_commit(struct latch_btree *t, size_t n,
                       void (*get)(const void *src, size_t i, struct latch_btree_change *c),
                       const void *src, size_t *failed, struct latch_btree_ent *hit,
                       struct latch_btree_removed *removed)
{
	struct latch_btree_change local[LATCH_BTREE_LOCAL_BATCH], scratch;
	struct latch_btree_removed none = { put_nothing, NULL, SIZE_MAX, 0 };
	struct latch_btree_ent unused;
	struct update u; /* not zeroed: latch_btree_locate() fills the spots */
	size_t inserts = 0, erases = 0;
	int err = -ENOMEM;

	u.t = t;
	u.n = n;
	u.failed = 0;
	u.get = get;
	u.src = src;
	u.undo = local;
	u.logged = 0;
	u.cap = n > LATCH_BTREE_LOCAL_BATCH ? n : LATCH_BTREE_LOCAL_BATCH;
	u.hit = hit ? hit : &unused;
	u.removed = removed ? removed : &none;
	u.removed->n = 0;
	*failed = n;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		/* A lone change is read here once; a batch's again in each half. */
		struct latch_btree_change *c = n == 1 ? &u.one : &scratch;

		get(src, i, c);
		inserts += c->op == LATCH_BTREE_INSERT || c->op == LATCH_BTREE_STORE;
		erases += c->op == LATCH_BTREE_ERASE || c->op == LATCH_BTREE_ERASE_IF;
	}
	u.entries = t->copy[0].size + inserts;
	if (n > LATCH_BTREE_LOCAL_BATCH)
		u.undo =
		    latch_btree_alloc(_Alignof(struct latch_btree_change), n * sizeof(*u.undo));
	/* A lone change is checked before it is made: its erase is never undone. */
	if (u.undo && !latch_btree_reserve_for(t, inserts + (n > 1 ? erases : 0), inserts)) {
		err = latch_seq_update(&t->seq, update_copy, &u);
		*failed = u.failed;
	}
	if (u.cap > LATCH_BTREE_LOCAL_BATCH)
		free(u.undo);
	return err;
}
