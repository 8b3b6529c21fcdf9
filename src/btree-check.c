/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree's invariant checker, beside the red-black tree's
 * (latch_rb_check()): the tests run it on both copies after every
 * operation, the proof harnesses at chosen instructions.
 */
#include <errno.h>

#include "btree.h"

/* A walk of one copy: what it found so far, and the first broken invariant. */
struct walk {
	const struct latch_btree *t;
	struct latch_btree_census *census;
	unsigned leaf_depth;
	bool have_last;
	uint64_t last;
	const char *why;
};

static bool broken(struct walk *w, const char *why)
{
	if (!w->why)
		w->why = why;
	return false;
}

/* Check the subtree @ref at @depth, whose keys must lie in [lo, hi) (hi only with @has_hi). */
static bool walk_node(struct walk *w, uintptr_t ref, unsigned depth, uint64_t lo, bool has_hi,
                      uint64_t hi, bool root)
{
	const struct latch_btree_node *n = latch_btree_node_(ref);
	bool leaf = ref & LATCH_BTREE_LEAF;
	unsigned c = 1;

	if (!n)
		return broken(w, "a NULL reference");
	if (depth >= LATCH_BTREE_MAX_DEPTH)
		return broken(w, "deeper than a reader's descent may go");
	/* Plain loads: the writer is stopped, or is the caller. */
	while (c < LATCH_BTREE_FANOUT && n->key[c] > n->key[c - 1])
		c++;
	for (unsigned i = c; i < LATCH_BTREE_FANOUT; i++)
		if (n->key[i] != n->key[c - 1] || n->slot[i] != n->slot[c - 1])
			return broken(w, "a padding entry is not a copy of the last used one");
	if (!root && c < LATCH_BTREE_MIN)
		return broken(w, "a node other than the root is less than half full");
	if (root && !leaf && c < 2)
		return broken(w, "an inner root has one child");
	w->census->shape = w->census->shape * 1000003u + c * 2u + leaf;
	for (unsigned i = 0; i < c; i++)
		if (n->key[i] < lo || (has_hi && n->key[i] >= hi))
			return broken(w, "a key lies outside its parent's bounds");
	if (leaf) {
		const uintptr_t *end = w->t->spans ? latch_btree_ends_(n) : NULL;

		if (!w->census->leaves++)
			w->leaf_depth = depth;
		if (depth != w->leaf_depth)
			return broken(w, "leaves at different depths");
		for (unsigned i = c; end && i < LATCH_BTREE_FANOUT; i++)
			if (end[i] != end[c - 1])
				return broken(w,
				              "a padding end is not a copy of the last used one");
		for (unsigned i = 0; i < c; i++) {
			struct latch_btree_ent e = { n->key[i], n->slot[i], end ? end[i] : 0 };

			if (end && e.end <= e.key)
				return broken(w, "a span does not end after its start");
			if (end && w->have_last && w->last > e.key)
				return broken(w, "two spans overlap");
			w->have_last = true;
			w->last = end ? e.end : e.key;
			w->census->entries++;
			if (w->census->entry)
				w->census->entry(w->census->ctx, &e);
		}
		return true;
	}
	w->census->inner++;
	for (unsigned i = 0; i < c; i++) {
		uintptr_t child = n->slot[i];
		bool last = i + 1 == c;

		if (!child)
			return broken(w, "an inner entry has no child");
		/* The separator invariant (btree-write.c): a bound is its child's least key. */
		if (latch_btree_node_(child)->key[0] != n->key[i])
			return broken(w, "a bound is not the least key of its child");
		if (!walk_node(w, child, depth + 1, n->key[i], last ? has_hi : true,
		               last ? hi : n->key[i + 1], false))
			return false;
	}
	return true;
}

int latch_btree_check(const struct latch_btree *t, unsigned cp, struct latch_btree_census *census,
                      const char **why)
{
	struct walk w = { t, census, 0, false, 0, NULL };

	census->entries = census->leaves = census->inner = 0;
	census->shape = 0;
	if (!t->copy[cp].root) {
		if (t->copy[cp].size || t->copy[cp].height)
			broken(&w, "an empty copy has a size or a height");
	} else if (walk_node(&w, t->copy[cp].root, 0, 0, false, 0, true)) {
		if (census->entries != t->copy[cp].size)
			broken(&w, "the copy's size is not its number of entries");
		else if (w.leaf_depth + 1 != t->copy[cp].height)
			broken(&w, "the copy's height is not its number of levels");
	}
	if (w.why && why)
		*why = w.why;
	return w.why ? -EPROTO : 0;
}
