/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree's changes to one copy: insert, erase and replace at
 * a spot the writer's descent found, with the splits, shares and merges
 * that keep every node but the root at least half full.  Only the writer
 * calls them, on a copy the counter keeps readers off (btree-commit.c);
 * still every store a reader may load is atomic, since a reader that
 * started before the flip may be inside this copy (its retry check then
 * fails, but its loads must not tear).
 *
 * The separator invariant: the bound an inner node holds for child i is
 * exactly the least key of child i's subtree (entry 0 of the whole tree
 * included).  Inserting keeps it (a key below a leaf's first key can only
 * arrive in the leftmost leaf, whose path is lowered); erasing a leaf's
 * first entry raises the bounds above it; splits, shares and merges set
 * bounds from the first key of the node on their right.  Readers rely on
 * it (btree-descend.c), and so does the range map's overlap check
 * (btree-commit.c); latch_btree_check() checks it.
 *
 * Rebalancing, for a node n at depth h of the descent, its parent p:
 *
 * put() - n has 17 entries after an insert:
 *
 *	  share with a sibling that has room       split when both are full
 *	  p: [..|l |n |..]                         p: [..|n |..]
 *	  l: 12   n: 17   ->  l: 14  n: 15          n: 17  ->  n: 8  s: 9
 *	  (p's bound of n becomes n's first key)    (p gains (s's first key, s);
 *	                                             a full p repeats this one
 *	                                             level up; the root splits
 *	                                             into a new root of two)
 *
 * fix() - n has 7 entries after an erase:
 *
 *	  borrow: n and a sibling hold >= 16       merge: they hold < 16
 *	  l: 10   n: 7    ->  l: 8   n: 9           l: 8  n: 7  ->  l: 15
 *	  (p's bound of the right one is reset)     (p loses the right one's
 *	                                             entry, which may leave p
 *	                                             underfull in turn; a root
 *	                                             with one child gives way
 *	                                             to that child)
 */
#include <string.h>

#include "btree.h"

typedef struct latch_btree_node node_t;
typedef struct latch_btree_ent ent_t;

/* ---- the writer's view of a node (only the writer stores nodes) ---- */

/* Do nodes of @kind in @t carry ends? */
static bool has_ends(const struct latch_btree *t, unsigned kind)
{
	return kind == LATCH_BTREE_LEAF_POOL && t->spans;
}

/*
 * Used entries of @n: keys increase strictly up to the last used entry,
 * which entry 15 and every padding entry repeat, so the used entries are
 * those whose key differs from entry 15's, and the last used one.
 */
unsigned latch_btree_node_used(const node_t *n)
{
	unsigned c = 1;

	/* Plain loads: only this (serialized) writer stores nodes. */
	for (unsigned i = 0; i < LATCH_BTREE_FANOUT - 1; i++)
		c += n->key[i] != n->key[LATCH_BTREE_FANOUT - 1];
	return c;
}

unsigned latch_btree_node_read(const struct latch_btree *t, unsigned kind, const node_t *n,
                               ent_t *e)
{
	unsigned c = latch_btree_node_used(n);
	const uintptr_t *end = has_ends(t, kind) ? latch_btree_ends_(n) : NULL;

	for (unsigned i = 0; i < c; i++) {
		e[i].key = n->key[i];
		e[i].slot = n->slot[i];
		e[i].end = end ? end[i] : 0;
	}
	return c;
}

/* Store (@key, @slot, @to_end) as entry @i of @n (@end: @n's ends, or NULL). */
static void ent_store(node_t *n, uintptr_t *end, unsigned i, uint64_t key, uintptr_t slot,
                      uintptr_t to_end)
{
	/*
	 * Relaxed key and end, release slot: the copy being written is read
	 * only by readers whose retry check fails, and the flip's release
	 * store publishes it whole.  The release on a child reference also
	 * orders a fresh chunk's initialisation before a stale reader that
	 * follows the reference with acquire.
	 */
	LATCH_STORE_RELAXED(&n->key[i], key);
	if (end)
		LATCH_STORE_RELAXED(&end[i], to_end);
	LATCH_STORE_RELEASE(&n->slot[i], slot);
}

/* Copy entry @from of @n over entry @to (plain loads: only this writer stores nodes). */
static void ent_move(node_t *n, uintptr_t *end, unsigned to, unsigned from)
{
	ent_store(n, end, to, n->key[from], n->slot[from], end ? end[from] : 0);
}

/* Store entries e[0..c-1] into @n, padding with copies of e[c-1]. */
void latch_btree_node_write(const struct latch_btree *t, unsigned kind, node_t *n, const ent_t *e,
                            unsigned c)
{
	uintptr_t *end = has_ends(t, kind) ? latch_btree_ends_(n) : NULL;

	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i++) {
		const ent_t *s = &e[i < c ? i : c - 1];

		ent_store(n, end, i, s->key, s->slot, s->end);
	}
}

/*
 * Insert @x at entry @at of the leaf @n, which has @c < 16 used entries,
 * in place.  Entries at..c-1 move up one; the padding after them already
 * repeats the old last entry, which stays last unless @x is appended, in
 * which case the padding becomes copies of @x.
 */
static void leaf_insert_at(const struct latch_btree *t, node_t *n, unsigned c, unsigned at,
                           const ent_t *x)
{
	uintptr_t *end = has_ends(t, LATCH_BTREE_LEAF_POOL) ? latch_btree_ends_(n) : NULL;

	for (unsigned i = c; i > at; i--)
		ent_move(n, end, i, i - 1);
	for (unsigned i = at; i < (at == c ? LATCH_BTREE_FANOUT : at + 1); i++)
		ent_store(n, end, i, x->key, x->slot, x->end);
}

/*
 * Remove entry @at of the leaf @n, which has @c >= 2 used entries, in
 * place.  Entries at+1..c-1 move down one, leaving entry c-1 as it was:
 * a copy of the new last entry, like the padding after it; removing the
 * last entry makes the padding copies of the one before it.
 */
static void leaf_remove_at(const struct latch_btree *t, node_t *n, unsigned c, unsigned at)
{
	uintptr_t *end = has_ends(t, LATCH_BTREE_LEAF_POOL) ? latch_btree_ends_(n) : NULL;

	for (unsigned i = at; i + 1 < c; i++)
		ent_move(n, end, i, i + 1);
	for (unsigned i = c - 1; at == c - 1 && i < LATCH_BTREE_FANOUT; i++)
		ent_move(n, end, i, c - 2);
}

static void ent_insert(ent_t *e, unsigned *c, unsigned at, ent_t x)
{
	for (unsigned i = *c; i > at; i--)
		e[i] = e[i - 1];
	e[at] = x;
	(*c)++;
}

static void ent_remove(ent_t *e, unsigned *c, unsigned at)
{
	for (unsigned i = at; i + 1 < *c; i++)
		e[i] = e[i + 1];
	(*c)--;
}

void latch_btree_set_root(struct latch_btree *t, unsigned cp, uintptr_t ref)
{
	/* Release: publishes the node's contents to a stale reader (see latch_btree_node_write()). */
	LATCH_STORE_RELEASE(&t->copy[cp].root, ref);
}

void latch_btree_set_size(struct latch_btree *t, unsigned cp, size_t size)
{
	/* Relaxed: published by the flip together with the rest of the copy. */
	LATCH_STORE_RELAXED(&t->copy[cp].size, size);
}

/* Set the key of entry @i of the inner node @p (and of its padding copies). */
static void set_key(struct latch_btree *t, node_t *p, unsigned i, uint64_t key)
{
	ent_t e[LATCH_BTREE_FANOUT];
	unsigned c = latch_btree_node_read(t, LATCH_BTREE_INNER_POOL, p, e);

	e[i].key = key;
	latch_btree_node_write(t, LATCH_BTREE_INNER_POOL, p, e, c);
}

/*
 * Write the n entries of @e over the sibling pair @l, @r of @kind
 * (children @j and @j+1 of @p), half each, and make @p's bound of @r its
 * new first key.
 */
static void share(struct latch_btree *t, unsigned kind, node_t *p, unsigned j, node_t *l, node_t *r,
                  const ent_t *e, unsigned n)
{
	unsigned half = n / 2;

	latch_btree_node_write(t, kind, l, e, half);
	latch_btree_node_write(t, kind, r, e + half, n - half);
	set_key(t, p, j + 1, e[half].key);
}

/*
 * Store the c entries of @e (c may be 17) into node @n at depth @h of the
 * descent @path.  An overfull node first shares with a sibling that has
 * room, so nodes fill up before they split; otherwise it splits and the
 * new node goes into the parent, up to a new root.
 */
static void put(struct latch_btree *t, unsigned cp, const struct latch_btree_step *path, unsigned h,
                node_t *n, unsigned kind, ent_t *e, unsigned c)
{
	for (;;) {
		ent_t buf[2 * LATCH_BTREE_FANOUT + 1];

		if (c <= LATCH_BTREE_FANOUT) {
			latch_btree_node_write(t, kind, n, e, c);
			return;
		}
		if (h > 0) {
			node_t *p = path[h - 1].node;
			unsigned j = path[h - 1].idx, pc = latch_btree_node_used(p);

			if (j > 0) {
				node_t *l = latch_btree_node_(p->slot[j - 1]);
				unsigned lc = latch_btree_node_read(t, kind, l, buf);

				if (lc < LATCH_BTREE_FANOUT) {
					memcpy(buf + lc, e, c * sizeof(*e));
					share(t, kind, p, j - 1, l, n, buf, lc + c);
					return;
				}
			}
			if (j + 1 < pc) {
				node_t *r = latch_btree_node_(p->slot[j + 1]);

				memcpy(buf, e, c * sizeof(*e));
				unsigned rc = latch_btree_node_read(t, kind, r, buf + c);

				if (rc < LATCH_BTREE_FANOUT) {
					share(t, kind, p, j, n, r, buf, c + rc);
					return;
				}
			}
		}
		/* Split: n keeps the first half, s takes the rest. */
		node_t *s = latch_btree_pool_take(&t->pool[kind]);
		unsigned half = c / 2;
		ent_t up = { e[half].key, latch_btree_ref_(s, kind == LATCH_BTREE_LEAF_POOL), 0 };

		latch_btree_node_write(t, kind, s, e + half, c - half);
		latch_btree_node_write(t, kind, n, e, half);
		if (h == 0) {
			node_t *root = latch_btree_pool_take(&t->pool[LATCH_BTREE_INNER_POOL]);
			ent_t two[2] = { { e[0].key,
				           latch_btree_ref_(n, kind == LATCH_BTREE_LEAF_POOL), 0 },
				         up };

			latch_btree_node_write(t, LATCH_BTREE_INNER_POOL, root, two, 2);
			latch_btree_set_root(t, cp, latch_btree_ref_(root, false));
			t->copy[cp].height++;
			return;
		}
		h--;
		n = path[h].node;
		kind = LATCH_BTREE_INNER_POOL;
		c = latch_btree_node_read(t, LATCH_BTREE_INNER_POOL, n, e);
		ent_insert(e, &c, path[h].idx + 1, up);
	}
}

void latch_btree_insert_at(struct latch_btree *t, unsigned cp, const struct latch_btree_spot *s,
                           const struct latch_btree_ent *x)
{
	ent_t e[LATCH_BTREE_FANOUT + 1];
	unsigned c;

	latch_btree_set_size(t, cp, t->copy[cp].size + 1);
	if (!s->leaf) {
		node_t *leaf = latch_btree_pool_take(&t->pool[LATCH_BTREE_LEAF_POOL]);

		latch_btree_node_write(t, LATCH_BTREE_LEAF_POOL, leaf, x, 1);
		latch_btree_set_root(t, cp, latch_btree_ref_(leaf, true));
		t->copy[cp].height = 1;
		return;
	}
	/* A new least key lowers the first bound of the nodes on the leftmost path. */
	for (unsigned i = 0; i < s->depth; i++)
		if (x->key < s->path[i].node->key[0])
			set_key(t, s->path[i].node, 0, x->key);
	if (s->used < LATCH_BTREE_FANOUT) {
		leaf_insert_at(t, s->leaf, s->used, s->at, x);
		return;
	}
	c = latch_btree_node_read(t, LATCH_BTREE_LEAF_POOL, s->leaf, e);
	ent_insert(e, &c, s->at, *x);
	put(t, cp, s->path, s->depth, s->leaf, LATCH_BTREE_LEAF_POOL, e, c);
}

/*
 * Store the c entries of @e into node @n at depth @h of @path after a
 * removal.  An underfull node borrows from a sibling with entries to
 * spare, or merges with it; a merge removes an entry from the parent, up
 * to the root, which shrinks when it has one child left.
 */
static void fix(struct latch_btree *t, unsigned cp, const struct latch_btree_step *path, unsigned h,
                node_t *n, unsigned kind, ent_t *e, unsigned c)
{
	for (;;) {
		ent_t buf[2 * LATCH_BTREE_FANOUT];

		if (h == 0) {
			if (c == 0 || (kind == LATCH_BTREE_INNER_POOL && c == 1)) {
				latch_btree_set_root(t, cp, c ? e[0].slot : 0);
				t->copy[cp].height--;
				latch_btree_pool_give(&t->pool[kind], n);
			} else {
				latch_btree_node_write(t, kind, n, e, c);
			}
			return;
		}
		if (c >= LATCH_BTREE_MIN) {
			latch_btree_node_write(t, kind, n, e, c);
			return;
		}
		node_t *p = path[h - 1].node;
		unsigned j = path[h - 1].idx, total;
		node_t *l, *r;

		if (j > 0) { /* pair with the left sibling */
			j--;
			l = latch_btree_node_(p->slot[j]);
			r = n;
			total = latch_btree_node_read(t, kind, l, buf);
			memcpy(buf + total, e, c * sizeof(*e));
			total += c;
		} else { /* pair with the right sibling */
			l = n;
			r = latch_btree_node_(p->slot[j + 1]);
			memcpy(buf, e, c * sizeof(*e));
			total = c + latch_btree_node_read(t, kind, r, buf + c);
		}
		if (total >= 2 * LATCH_BTREE_MIN) {
			share(t, kind, p, j, l, r, buf, total);
			return;
		}
		/* Merge into the left node; the right one goes back to its pool. */
		latch_btree_node_write(t, kind, l, buf, total);
		latch_btree_pool_give(&t->pool[kind], r);
		h--;
		n = p;
		kind = LATCH_BTREE_INNER_POOL;
		c = latch_btree_node_read(t, LATCH_BTREE_INNER_POOL, p, e);
		ent_remove(e, &c, j + 1);
	}
}

void latch_btree_erase_at(struct latch_btree *t, unsigned cp, const struct latch_btree_spot *s)
{
	ent_t e[LATCH_BTREE_FANOUT];
	node_t *leaf = s->leaf;
	unsigned h = s->depth, c = s->used, at = s->at;

	latch_btree_set_size(t, cp, t->copy[cp].size - 1);
	/*
	 * The separator invariant: the leaf's bound, and every bound above
	 * it for which the leaf is the first of its subtree, become its new
	 * first key.  Done before fix(), which reads them when it shares.
	 */
	for (unsigned k = h; at == 0 && c > 1 && k-- > 0;) {
		set_key(t, s->path[k].node, s->path[k].idx, leaf->key[1]);
		if (s->path[k].idx != 0)
			break;
	}
	if (c > LATCH_BTREE_MIN || (h == 0 && c > 1)) {
		leaf_remove_at(t, leaf, c, at);
		return;
	}
	c = latch_btree_node_read(t, LATCH_BTREE_LEAF_POOL, leaf, e);
	ent_remove(e, &c, at);
	fix(t, cp, s->path, h, leaf, LATCH_BTREE_LEAF_POOL, e, c);
}

void latch_btree_replace_at(const struct latch_btree_spot *s, uintptr_t value)
{
	/* The last used entry's value is repeated in the padding after it. */
	for (unsigned i = s->at; i < (s->at == s->used - 1 ? LATCH_BTREE_FANOUT : s->at + 1); i++)
		/* Release, as every slot store (ent_store()). */
		LATCH_STORE_RELEASE(&s->leaf->slot[i], value);
}

void latch_btree_free_subtree(struct latch_btree *t, uintptr_t ref)
{
	node_t *n = latch_btree_node_(ref);

	if (!(ref & LATCH_BTREE_LEAF)) {
		unsigned c = latch_btree_node_used(n);

		for (unsigned i = 0; i < c; i++)
			latch_btree_free_subtree(t, n->slot[i]);
	}
	latch_btree_pool_give(
	    &t->pool[ref & LATCH_BTREE_LEAF ? LATCH_BTREE_LEAF_POOL : LATCH_BTREE_INNER_POOL], n);
}
