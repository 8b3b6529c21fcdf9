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
 * an overlapping one), and a batch costs one descent per change per copy.
 * A single change finds its spot in both copies with one paired descent,
 * whose cache misses overlap, and needs no undo: it is checked before it
 * is made.
 *
 * Memory: every node a change can take is reserved before the update
 * starts, so nothing fails once a copy is touched.  Inserts can take
 * nodes; erases only free them, but in a batch of more than one change an
 * erase may have to be undone, which re-inserts.  The undo log of a batch
 * of up to LATCH_BTREE_LOCAL_BATCH changes is on the stack.
 */
#include <errno.h>
#include <stdlib.h>

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
 * Does the span [x->key, x->end) overlap one of copy @cp, at whose spot
 * @s x->key would go?  Sets *@hit to the one with the lowest start.  The
 * spot answers it without another descent: the entry before it (the
 * floor, whose end must not pass the start) and the one after (the
 * ceiling, which must start at or after the end), from the next leaf's
 * bound when the spot is past the leaf's last entry.
 */
static bool overlaps(const struct latch_btree *t, unsigned cp, const struct latch_btree_spot *s,
                     const struct latch_btree_ent *x, struct latch_btree_ent *hit)
{
	uint64_t next;
	bool bad;

	if (!s->leaf)
		return false;
	if (spot_holds(s, x->key)) {
		*hit = spot_entry(t, s, s->at);
		return true;
	}
	/* No floor at position 0: by the separator invariant, x is below every key. */
	if (s->at > 0) {
		*hit = spot_entry(t, s, s->at - 1);
		if (hit->end > x->key)
			return true;
	}
	if (s->at < s->used) {
		*hit = spot_entry(t, s, s->at);
		return hit->key < x->end;
	}
	if (!key_after_leaf(s, &next) || next >= x->end)
		return false;
	/* A collision in the next leaf: the error path reads the whole entry. */
	return latch_btree_attempt(t, cp, x->key, LATCH_BTREE_CEIL, hit, &bad);
}

/*
 * The error change @c would meet at its spot @s in copy @cp, 0 if it is
 * valid there; for -EEXIST, *@hit is what it collides with.
 */
static int check(const struct latch_btree *t, unsigned cp, const struct latch_btree_change *c,
                 const struct latch_btree_spot *s, struct latch_btree_ent *hit)
{
	bool present = s->leaf && spot_holds(s, c->ent.key);

	switch (c->op) {
	case LATCH_BTREE_INSERT:
		if (t->spans) {
			if (c->ent.key >= c->ent.end)
				return -EINVAL;
			return overlaps(t, cp, s, &c->ent, hit) ? -EEXIST : 0;
		}
		if (present)
			*hit = spot_entry(t, s, s->at);
		return present ? -EEXIST : 0;
	case LATCH_BTREE_ERASE:
	case LATCH_BTREE_REPLACE:
		return present ? 0 : -ENOENT;
	case LATCH_BTREE_BAD_OP:
		break;
	}
	return -EINVAL;
}

/*
 * Make the checked change @c at its spot @s in copy @cp; *@undo (unless
 * NULL) becomes the change that reverts it.
 */
static void apply(struct latch_btree *t, unsigned cp, const struct latch_btree_change *c,
                  const struct latch_btree_spot *s, struct latch_btree_change *undo)
{
	if (undo) {
		undo->op = c->op == LATCH_BTREE_INSERT  ? LATCH_BTREE_ERASE
		           : c->op == LATCH_BTREE_ERASE ? LATCH_BTREE_INSERT
		                                        : LATCH_BTREE_REPLACE;
		undo->ent = c->op == LATCH_BTREE_INSERT ? c->ent : spot_entry(t, s, s->at);
	}
	switch (c->op) {
	case LATCH_BTREE_INSERT:
		latch_btree_insert_at(t, cp, s, &c->ent);
		break;
	case LATCH_BTREE_ERASE:
		latch_btree_erase_at(t, cp, s);
		break;
	case LATCH_BTREE_REPLACE:
		latch_btree_replace_at(s, c->ent.slot);
		break;
	case LATCH_BTREE_BAD_OP:
		break;
	}
}

/* One update: what latch_seq_update() hands to each half. */
struct update {
	struct latch_btree *t;
	size_t n, failed;
	void (*get)(const void *src, size_t i, struct latch_btree_change *c);
	const void *src;
	struct latch_btree_change *undo; /* n > 1: the change reverting each one made */
	struct latch_btree_ent *hit;
	struct latch_btree_change one;   /* n == 1: the change, read once */
	struct latch_btree_spot both[2]; /* n == 1: its spot in each copy */
};

/* Make @c, checked, at its spot in copy @cp (one descent of that copy). */
static void locate_and_apply(struct latch_btree *t, unsigned cp, const struct latch_btree_change *c)
{
	struct latch_btree_spot s;

	latch_btree_locate(t, cp, cp, c->ent.key, &s);
	apply(t, cp, c, &s, NULL);
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
			err = check(t, cp, &u->one, &u->both[cp], u->hit);
		}
		if (!err)
			apply(t, cp, &u->one, &u->both[cp], NULL);
		return err;
	}
	for (size_t i = 0; i < u->n; i++) {
		struct latch_btree_spot s;
		int err;

		u->get(u->src, i, &c);
		if (replay) {
			locate_and_apply(t, cp, &c);
			continue;
		}
		latch_btree_locate(t, cp, cp, c.ent.key, &s);
		err = check(t, cp, &c, &s, u->hit);
		if (err) {
			u->failed = i;
			while (i-- > 0)
				locate_and_apply(t, cp, &u->undo[i]);
			return err;
		}
		apply(t, cp, &c, &s, &u->undo[i]);
	}
	return 0;
}

int latch_btree_commit(struct latch_btree *t, size_t n,
                       void (*get)(const void *src, size_t i, struct latch_btree_change *c),
                       const void *src, size_t *failed, struct latch_btree_ent *hit)
{
	struct latch_btree_change local[LATCH_BTREE_LOCAL_BATCH], scratch;
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
	u.hit = hit ? hit : &unused;
	*failed = n;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		/* A lone change is read here once; a batch's again in each half. */
		struct latch_btree_change *c = n == 1 ? &u.one : &scratch;

		get(src, i, c);
		inserts += c->op == LATCH_BTREE_INSERT;
		erases += c->op == LATCH_BTREE_ERASE;
	}
	if (n > LATCH_BTREE_LOCAL_BATCH)
		u.undo =
		    latch_btree_alloc(_Alignof(struct latch_btree_change), n * sizeof(*u.undo));
	/* A lone change is checked before it is made: its erase is never undone. */
	if (u.undo && !latch_btree_reserve_for(t, inserts + (n > 1 ? erases : 0), inserts)) {
		err = latch_seq_update(&t->seq, update_copy, &u);
		*failed = u.failed;
	}
	if (u.undo != local)
		free(u.undo);
	return err;
}
