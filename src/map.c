/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree map: two full trees (copy 0 and copy 1) sharing no
 * node, steered by one latch counter, one flip per update.
 *
 * Writer: every update (insert, erase, replace, a batch, a bulk load) is
 * validated and its worst-case node need reserved first, so nothing can
 * fail once the first copy is touched.  Then it is made to the idle copy,
 * readers are sent there by one flip, and the same update is replayed on
 * the copy they left.  The same deterministic code on the same contents
 * gives the same shape, so the copies stay equal in content and shape.
 *
 * Node reuse: a node may be reused as soon as no reader that will pass
 * its retry check can reach it.  A copy is changed only while the counter
 * sends readers to the other copy, so readers inside the changed copy all
 * fail their retry check; readers sent to a copy after the flip see only
 * nodes reachable from its new root.  A node freed while its copy is
 * being changed is unreachable from that copy's new state, and the other
 * copy never referenced it; so it may go back to the pool at once and be
 * reused by either copy, in this update or a later one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <latch/map.h>

#include "btree.h"

typedef struct latch_btree_node node_t;

enum { INNER = 0, LEAF = 1 };

/* An entry moved around by the writer: a key and a slot. */
struct ent {
	uint64_t key;
	uintptr_t slot;
};

/* One level of a writer's descent: the node and the entry taken. */
struct step {
	node_t *node;
	unsigned idx;
};

/* ---- the writer's view of a node (only the writer stores nodes) ---- */

/* Used entries of @n: entry 15 is repeated from the last used one on. */
static unsigned node_used(const node_t *n)
{
	unsigned i = 0;

	/* Plain loads: only this (serialized) writer stores nodes. */
	while (i < LATCH_BTREE_FANOUT - 1 && n->key[i] != n->key[LATCH_BTREE_FANOUT - 1])
		i++;
	return i + 1;
}

static unsigned node_read(const node_t *n, struct ent *e)
{
	unsigned c = node_used(n);

	for (unsigned i = 0; i < c; i++) {
		e[i].key = n->key[i];
		e[i].slot = n->slot[i];
	}
	return c;
}

/* Store entries e[0..c-1] into @n, padding with copies of e[c-1]. */
static void node_write(node_t *n, const struct ent *e, unsigned c)
{
	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i++) {
		const struct ent *s = &e[i < c ? i : c - 1];

		/*
		 * Relaxed key, release slot: the copy being written is read
		 * only by readers whose retry check fails, and the flip's
		 * release store publishes it whole.  The release on a child
		 * reference also orders a fresh chunk's initialisation before
		 * a stale reader that follows the reference with acquire.
		 */
		LATCH_STORE_RELAXED(&n->key[i], s->key);
		LATCH_STORE_RELEASE(&n->slot[i], s->slot);
	}
}

/* Index of the first entry of e[0..c-1] with key >= @key. */
static unsigned ent_lower(const struct ent *e, unsigned c, uint64_t key)
{
	unsigned i = 0;

	while (i < c && e[i].key < key)
		i++;
	return i;
}

static void ent_insert(struct ent *e, unsigned *c, unsigned at, struct ent x)
{
	for (unsigned i = *c; i > at; i--)
		e[i] = e[i - 1];
	e[at] = x;
	(*c)++;
}

static void ent_remove(struct ent *e, unsigned *c, unsigned at)
{
	for (unsigned i = at; i + 1 < *c; i++)
		e[i] = e[i + 1];
	(*c)--;
}

/*
 * The used child entry an inner node's entries send @key to: the branchless
 * count readers use, then back from a padding copy to the entry it repeats.
 */
static unsigned inner_index(const node_t *n, uint64_t key)
{
	unsigned c = latch_btree_count_le_(n, key);

	return latch_btree_count_lt_(n, n->key[c - (c != 0)]);
}

/* Descend copy @cp to the leaf for @key, recording the inner steps. */
static node_t *descend(const struct latch_map *m, unsigned cp, uint64_t key, struct step *path,
                       unsigned *depth)
{
	uintptr_t r = m->copy[cp].root;
	unsigned h = 0;

	while (!(r & LATCH_BTREE_LEAF)) {
		node_t *n = latch_btree_node_(r);
		unsigned i = inner_index(n, key);

		path[h].node = n;
		path[h++].idx = i;
		r = n->slot[i];
	}
	*depth = h;
	return latch_btree_node_(r);
}

/*
 * Is @key in the map?  Writer only.  Reads the idle copy (equal to the
 * other one), whose nodes the update then walks again while they are hot.
 */
static bool contains(const struct latch_map *m, uint64_t key)
{
	struct step path[LATCH_BTREE_MAX_DEPTH];
	unsigned h, cp = latch_seq_write_begin(&m->seq);
	struct ent e[LATCH_BTREE_FANOUT];

	if (!m->copy[cp].root)
		return false;
	node_t *leaf = descend(m, cp, key, path, &h);
	unsigned c = node_read(leaf, e);
	unsigned i = ent_lower(e, c, key);

	return i < c && e[i].key == key;
}

static void set_root(struct latch_map *m, unsigned cp, uintptr_t ref)
{
	/* Release: publishes the node's contents to a stale reader (see node_write()). */
	LATCH_STORE_RELEASE(&m->copy[cp].root, ref);
}

static void set_size(struct latch_map *m, unsigned cp, size_t size)
{
	/* Relaxed: published by the flip together with the rest of the copy. */
	LATCH_STORE_RELAXED(&m->copy[cp].size, size);
}

/* Set the key of entry @i of the inner node @p (and of its padding copies). */
static void set_key(node_t *p, unsigned i, uint64_t key)
{
	struct ent e[LATCH_BTREE_FANOUT];
	unsigned c = node_read(p, e);

	e[i].key = key;
	node_write(p, e, c);
}

/*
 * Write the t entries of @e over the sibling pair @l, @r (children @j and
 * @j+1 of @p), half each, and make @p's bound of @r its new first key.
 */
static void share(node_t *p, unsigned j, node_t *l, node_t *r, const struct ent *e, unsigned t)
{
	unsigned half = t / 2;

	node_write(l, e, half);
	node_write(r, e + half, t - half);
	set_key(p, j + 1, e[half].key);
}

/*
 * Store the c entries of @e (c may be 17) into node @n at depth @h of the
 * descent @path.  An overfull node first shares with a sibling that has
 * room, so nodes fill up before they split; otherwise it splits and the
 * new node goes into the parent, up to a new root.
 */
static void put(struct latch_map *m, unsigned cp, struct step *path, unsigned h, node_t *n,
                unsigned kind, struct ent *e, unsigned c)
{
	for (;;) {
		struct ent buf[2 * LATCH_BTREE_FANOUT + 1];

		if (c <= LATCH_BTREE_FANOUT) {
			node_write(n, e, c);
			return;
		}
		if (h > 0) {
			node_t *p = path[h - 1].node;
			unsigned j = path[h - 1].idx, pc = node_used(p);

			if (j > 0) {
				node_t *l = latch_btree_node_(p->slot[j - 1]);
				unsigned lc = node_read(l, buf);

				if (lc < LATCH_BTREE_FANOUT) {
					memcpy(buf + lc, e, c * sizeof(*e));
					share(p, j - 1, l, n, buf, lc + c);
					return;
				}
			}
			if (j + 1 < pc) {
				node_t *r = latch_btree_node_(p->slot[j + 1]);

				memcpy(buf, e, c * sizeof(*e));
				unsigned rc = node_read(r, buf + c);

				if (rc < LATCH_BTREE_FANOUT) {
					share(p, j, n, r, buf, c + rc);
					return;
				}
			}
		}
		/* Split: n keeps the first half, s takes the rest. */
		node_t *s = latch_btree_pool_take(&m->pool[kind]);
		unsigned half = c / 2;
		struct ent up = { e[half].key, latch_btree_ref_(s, kind == LEAF) };

		node_write(s, e + half, c - half);
		node_write(n, e, half);
		if (h == 0) {
			node_t *root = latch_btree_pool_take(&m->pool[INNER]);
			struct ent two[2] = { { e[0].key, latch_btree_ref_(n, kind == LEAF) }, up };

			node_write(root, two, 2);
			set_root(m, cp, latch_btree_ref_(root, false));
			m->copy[cp].height++;
			return;
		}
		h--;
		n = path[h].node;
		kind = INNER;
		c = node_read(n, e);
		ent_insert(e, &c, path[h].idx + 1, up);
	}
}

static void copy_insert(struct latch_map *m, unsigned cp, uint64_t key, uintptr_t value)
{
	struct step path[LATCH_BTREE_MAX_DEPTH];
	struct ent e[LATCH_BTREE_FANOUT + 1];
	struct ent x = { key, value };
	unsigned h, c;

	if (!m->copy[cp].root) {
		node_t *leaf = latch_btree_pool_take(&m->pool[LEAF]);

		node_write(leaf, &x, 1);
		set_root(m, cp, latch_btree_ref_(leaf, true));
		m->copy[cp].height = 1;
		return;
	}
	node_t *leaf = descend(m, cp, key, path, &h);
	/* A new least key lowers the first bound of the nodes on the leftmost path. */
	for (unsigned i = 0; i < h; i++)
		if (key < path[i].node->key[0])
			set_key(path[i].node, 0, key);
	c = node_read(leaf, e);
	ent_insert(e, &c, ent_lower(e, c, key), x);
	put(m, cp, path, h, leaf, LEAF, e, c);
}

/*
 * Store the c entries of @e into node @n at depth @h of @path after a
 * removal.  An underfull node borrows from a sibling with entries to
 * spare, or merges with it; a merge removes an entry from the parent, up
 * to the root, which shrinks when it has one child left.
 */
static void fix(struct latch_map *m, unsigned cp, struct step *path, unsigned h, node_t *n,
                unsigned kind, struct ent *e, unsigned c)
{
	for (;;) {
		struct ent buf[2 * LATCH_BTREE_FANOUT];

		if (h == 0) {
			if (c == 0 || (kind == INNER && c == 1)) {
				set_root(m, cp, c ? e[0].slot : 0);
				m->copy[cp].height--;
				latch_btree_pool_give(&m->pool[kind], n);
			} else {
				node_write(n, e, c);
			}
			return;
		}
		if (c >= LATCH_BTREE_MIN) {
			node_write(n, e, c);
			return;
		}
		node_t *p = path[h - 1].node;
		unsigned j = path[h - 1].idx, t;
		node_t *l, *r;

		if (j > 0) { /* pair with the left sibling */
			j--;
			l = latch_btree_node_(p->slot[j]);
			r = n;
			t = node_read(l, buf);
			memcpy(buf + t, e, c * sizeof(*e));
			t += c;
		} else { /* pair with the right sibling */
			l = n;
			r = latch_btree_node_(p->slot[j + 1]);
			memcpy(buf, e, c * sizeof(*e));
			t = c + node_read(r, buf + c);
		}
		if (t >= 2 * LATCH_BTREE_MIN) {
			share(p, j, l, r, buf, t);
			return;
		}
		/* Merge into the left node; the right one goes back to its pool. */
		node_write(l, buf, t);
		latch_btree_pool_give(&m->pool[kind], r);
		h--;
		n = p;
		kind = INNER;
		c = node_read(p, e);
		ent_remove(e, &c, j + 1);
	}
}

static void copy_erase(struct latch_map *m, unsigned cp, uint64_t key)
{
	struct step path[LATCH_BTREE_MAX_DEPTH];
	struct ent e[LATCH_BTREE_FANOUT];
	unsigned h;
	node_t *leaf = descend(m, cp, key, path, &h);
	unsigned c = node_read(leaf, e);

	ent_remove(e, &c, ent_lower(e, c, key));
	fix(m, cp, path, h, leaf, LEAF, e, c);
}

static void copy_replace(struct latch_map *m, unsigned cp, uint64_t key, uintptr_t value)
{
	struct step path[LATCH_BTREE_MAX_DEPTH];
	struct ent e[LATCH_BTREE_FANOUT];
	unsigned h;
	node_t *leaf = descend(m, cp, key, path, &h);
	unsigned c = node_read(leaf, e);

	e[ent_lower(e, c, key)].slot = value;
	node_write(leaf, e, c);
}

/* Return every node of copy @cp's subtree @ref to its pool. */
static void free_subtree(struct latch_map *m, uintptr_t ref)
{
	node_t *n = latch_btree_node_(ref);

	if (!(ref & LATCH_BTREE_LEAF)) {
		unsigned c = node_used(n);

		for (unsigned i = 0; i < c; i++)
			free_subtree(m, n->slot[i]);
	}
	latch_btree_pool_give(&m->pool[ref & LATCH_BTREE_LEAF ? LEAF : INNER], n);
}

/* ---- the one-flip update ---- */

/*
 * Make one update, described by @apply, so that readers see it whole or
 * not at all; readers never wait.
 *
 * The idle copy is the one the counter does not send readers to.  @apply
 * changes it completely; one flip sends readers to it; @apply replays the
 * same change onto the other copy, which readers have just left.  A copy
 * is therefore written only while the counter sends readers to the other
 * one, and a reader interrupted or overtaken at any point reads a copy
 * that is complete.
 *
 * Ordering: the flip's release store publishes every store made to the
 * idle copy to a reader whose acquire load in latch_seq_read_begin() sees
 * the new count.  Stores made after the flip's release fence, to the copy
 * readers left, are detected by such a reader's acquire fence and count
 * re-check in latch_seq_read_retry(), which then discards the attempt.
 */
static void write_both_copies(struct latch_map *m,
                              void (*apply)(struct latch_map *m, unsigned cp, const void *ctx),
                              const void *ctx)
{
	apply(m, latch_seq_write_begin(&m->seq), ctx);
	apply(m, latch_seq_write_flip(&m->seq), ctx);
}

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

/* Nodes of @kind each copy uses now. */
static size_t in_use(const struct latch_map *m, unsigned kind)
{
	return (m->pool[kind].total - m->pool[kind].free) / 2;
}

/* Make the pools hold @leaves and @inner more nodes for each copy. */
static int reserve_more(struct latch_map *m, size_t leaves, size_t inner)
{
	if (latch_btree_pool_reserve(&m->pool[LEAF], 2 * leaves) ||
	    latch_btree_pool_reserve(&m->pool[INNER], 2 * inner))
		return -ENOMEM;
	return 0;
}

static size_t sub0(size_t a, size_t b)
{
	return a > b ? a - b : 0;
}

static size_t min2(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * Reserve what @inserts insertions can need at most, in both copies.  An
 * insertion adds at most one leaf and one inner node per level (splits
 * and a new root); erasures only free nodes.  The need is also at most
 * what a valid tree of all the entries can have beyond what is in use,
 * since the tree is valid after every change (and only grows within one).
 */
static int reserve_inserts(struct latch_map *m, size_t inserts)
{
	size_t leaves, inner, height;

	if (!inserts)
		return 0;
	max_nodes(m->copy[0].size + inserts, &leaves, &inner, &height);
	return reserve_more(m, min2(inserts, sub0(leaves, in_use(m, LEAF))),
	                    min2(inserts * height, sub0(inner, in_use(m, INNER))));
}

int latch_map_reserve(struct latch_map *m, size_t n)
{
	size_t leaves, inner, height;

	max_nodes(n, &leaves, &inner, &height);
	return reserve_more(m, sub0(leaves, in_use(m, LEAF)), sub0(inner, in_use(m, INNER)));
}

/* ---- validation and batches ---- */

/* A change's key and its index in the batch, for sorting. */
struct keyed {
	uint64_t key;
	size_t idx;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The error of change @c when its key is @present, 0 if it is valid. */
static int change_error(const struct latch_map_change *c, bool present)
{
	switch (c->op) {
	case LATCH_MAP_INSERT:
		return present ? -EEXIST : 0;
	case LATCH_MAP_ERASE:
	case LATCH_MAP_REPLACE:
		return present ? 0 : -ENOENT;
	}
	return -EINVAL;
}

/*
 * Check @changes in order against the map as the earlier ones leave it.
 * Changes of different keys do not affect each other, so each key's
 * changes are checked in batch order, and the error of the lowest index
 * wins.  Returns 0 or the error, with *@bad its change's index.
 */
static int validate(const struct latch_map *m, const struct latch_map_change *changes, size_t n,
                    size_t *bad)
{
	struct keyed *sorted;
	size_t first = n;
	int err = 0;

	if (n == 1) {
		*bad = 0;
		return change_error(&changes[0], contains(m, changes[0].key));
	}
	sorted = latch_btree_alloc_(_Alignof(struct keyed), n * sizeof(*sorted));
	if (!sorted) {
		*bad = n;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		sorted[i].key = changes[i].key;
		sorted[i].idx = i;
	}
	qsort(sorted, n, sizeof(*sorted), keyed_cmp);
	for (size_t i = 0; i < n;) {
		bool present = contains(m, sorted[i].key);
		size_t j = i;

		for (; j < n && sorted[j].key == sorted[i].key; j++) {
			const struct latch_map_change *c = &changes[sorted[j].idx];
			int e = change_error(c, present);

			if (e) {
				if (sorted[j].idx < first) {
					first = sorted[j].idx;
					err = e;
				}
				while (j + 1 < n && sorted[j + 1].key == sorted[i].key)
					j++;
			}
			present = c->op != LATCH_MAP_ERASE;
		}
		i = j;
	}
	free(sorted);
	*bad = first;
	return err;
}

struct batch {
	const struct latch_map_change *changes;
	size_t n;
};

static void apply_batch(struct latch_map *m, unsigned cp, const void *ctx)
{
	const struct batch *b = ctx;
	size_t size = m->copy[cp].size;

	for (size_t i = 0; i < b->n; i++) {
		const struct latch_map_change *c = &b->changes[i];

		if (c->op == LATCH_MAP_INSERT) {
			copy_insert(m, cp, c->key, (uintptr_t)c->value);
			size++;
		} else if (c->op == LATCH_MAP_ERASE) {
			copy_erase(m, cp, c->key);
			size--;
		} else {
			copy_replace(m, cp, c->key, (uintptr_t)c->value);
		}
	}
	set_size(m, cp, size);
}

int latch_map_commit(struct latch_map *m, const struct latch_map_change *changes, size_t n,
                     size_t *failed)
{
	const struct batch b = { changes, n };
	size_t bad, inserts = 0;
	int err;

	if (!n)
		return 0;
	err = validate(m, changes, n, &bad);
	for (size_t i = 0; !err && i < n; i++)
		inserts += changes[i].op == LATCH_MAP_INSERT;
	if (!err && reserve_inserts(m, inserts)) {
		bad = n;
		err = -ENOMEM;
	}
	if (err) {
		if (failed)
			*failed = bad;
		return err;
	}
	write_both_copies(m, apply_batch, &b);
	return 0;
}

int latch_map_insert(struct latch_map *m, uint64_t key, void *value)
{
	const struct latch_map_change c = { LATCH_MAP_INSERT, key, value };

	return latch_map_commit(m, &c, 1, NULL);
}

int latch_map_erase(struct latch_map *m, uint64_t key)
{
	const struct latch_map_change c = { LATCH_MAP_ERASE, key, NULL };

	return latch_map_commit(m, &c, 1, NULL);
}

int latch_map_replace(struct latch_map *m, uint64_t key, void *value)
{
	const struct latch_map_change c = { LATCH_MAP_REPLACE, key, value };

	return latch_map_commit(m, &c, 1, NULL);
}

/* ---- bulk load ---- */

/* Nodes of a packed tree of @entries entries: leaves, inner nodes, levels. */
static void packed_nodes(size_t entries, size_t *leaves, size_t *inner, size_t *height)
{
	size_t x = (entries + LATCH_BTREE_FANOUT - 1) / LATCH_BTREE_FANOUT;

	*leaves = x;
	*inner = 0;
	*height = entries ? 1 : 0;
	while (x > 1) {
		x = (x + LATCH_BTREE_FANOUT - 1) / LATCH_BTREE_FANOUT;
		*inner += x;
		(*height)++;
	}
}

struct load {
	const uint64_t *keys;
	void *const *values;
	size_t n;
	struct ent *level; /* scratch: one entry per leaf */
};

/*
 * Replace copy @cp by a packed tree of the load's entries.  The copy's
 * old nodes go back to the pools first: readers are not sent to this copy
 * while it changes, so they may be reused at once (see the file comment).
 * @m entries go to g = ceil(m/16) nodes as evenly as possible, so every
 * node but a lone root holds at least 8.
 */
static void apply_load(struct latch_map *m, unsigned cp, const void *ctx)
{
	const struct load *ld = ctx;
	size_t count = ld->n, height = 1;
	unsigned kind = LEAF;

	if (m->copy[cp].root)
		free_subtree(m, m->copy[cp].root);
	if (!count) {
		set_root(m, cp, 0);
		m->copy[cp].height = 0;
		set_size(m, cp, 0);
		return;
	}
	for (;;) {
		size_t g = (count + LATCH_BTREE_FANOUT - 1) / LATCH_BTREE_FANOUT;

		for (size_t i = 0; i < g; i++) {
			size_t lo = (size_t)((uint64_t)i * count / g);
			size_t hi = (size_t)((uint64_t)(i + 1) * count / g);
			struct ent e[LATCH_BTREE_FANOUT];
			node_t *n = latch_btree_pool_take(&m->pool[kind]);

			for (size_t k = lo; k < hi; k++) {
				if (kind == LEAF) {
					e[k - lo].key = ld->keys[k];
					e[k - lo].slot = ld->values ? (uintptr_t)ld->values[k] : 0;
				} else {
					e[k - lo] = ld->level[k];
				}
			}
			node_write(n, e, (unsigned)(hi - lo));
			/* In place: entry i is written after entries lo >= i are read. */
			ld->level[i].key = e[0].key;
			ld->level[i].slot = latch_btree_ref_(n, kind == LEAF);
		}
		if (g == 1)
			break;
		count = g;
		kind = INNER;
		height++;
	}
	set_root(m, cp, ld->level[0].slot);
	m->copy[cp].height = height;
	set_size(m, cp, ld->n);
}

int latch_map_load_sorted(struct latch_map *m, const uint64_t *keys, void *const *values, size_t n)
{
	size_t leaves, inner, height;
	struct load ld = { keys, values, n, NULL };

	if (n && !keys)
		return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (keys[i - 1] >= keys[i])
			return -EINVAL;
	packed_nodes(n, &leaves, &inner, &height);
	/*
	 * Each copy first frees what it uses, then takes the packed tree, so
	 * the pools need only what the new trees need beyond that.
	 */
	if (reserve_more(m, sub0(leaves, in_use(m, LEAF)), sub0(inner, in_use(m, INNER))))
		return -ENOMEM;
	if (leaves) {
		ld.level = latch_btree_alloc_(_Alignof(struct ent), leaves * sizeof(struct ent));
		if (!ld.level)
			return -ENOMEM;
	}
	write_both_copies(m, apply_load, &ld);
	free(ld.level);
	return 0;
}

/* ---- set-up ---- */

static int simd_supported(void);

int latch_map_init(struct latch_map *m)
{
	/*
	 * Relaxed: the choice is the same whichever thread makes it, and a
	 * map's readers run only after its initialisation is published.
	 */
	if (LATCH_LOAD_RELAXED(&latch_btree_simd_) < 0)
		LATCH_STORE_RELAXED(&latch_btree_simd_, simd_supported());
	memset(m, 0, sizeof(*m));
	latch_seq_init(&m->seq);
	return 0;
}

void latch_map_destroy(struct latch_map *m)
{
	latch_btree_pool_free(&m->pool[INNER]);
	latch_btree_pool_free(&m->pool[LEAF]);
	memset(m, 0, sizeof(*m));
}

/* ---- readers ---- */

enum mode { EXACT, FLOOR, CEIL };

/*
 * Follow @ref to a leaf, always through slot @at (0: leftmost, 15:
 * rightmost), at most @depth more levels.  Returns the leaf, or NULL when
 * the attempt must be abandoned.
 */
static const node_t *edge_leaf(uintptr_t ref, unsigned at, unsigned depth)
{
	while (!(ref & LATCH_BTREE_LEAF)) {
		const node_t *n = latch_btree_node_(ref);

		if (!n || depth++ >= LATCH_BTREE_MAX_DEPTH)
			return NULL;
		/* Acquire: pairs with the writer's release store of the reference. */
		ref = LATCH_LOAD_ACQUIRE(&n->slot[at]);
	}
	return latch_btree_node_(ref);
}

/*
 * One lookup attempt on copy @cp.  Memory safety holds for any copy,
 * however stale: a reference with bit 0 clear always points to inner-node
 * memory, whose slots only ever hold references (or 0); positions are
 * clamped to 0..15; the descent is capped.  *@bad says the attempt was
 * abandoned.  Values are copied, never dereferenced.
 */
static inline __attribute__((always_inline)) bool
attempt_with(const struct latch_map *m, unsigned cp, uint64_t x, enum mode mode, uint64_t *kout,
             uintptr_t *vout, bool *bad, unsigned (*count_le)(const node_t *, uint64_t),
             unsigned (*count_lt)(const node_t *, uint64_t))
{
	/* Acquire: pairs with the writer's release store of the root. */
	uintptr_t ref = LATCH_LOAD_ACQUIRE(&m->copy[cp].root);
	uintptr_t side = 0; /* the nearest subtree beside the path, towards the answer */
	unsigned depth = 0, pos = 0;
	const node_t *leaf;

	*bad = false;
	if (!ref)
		return false;
	while (!(ref & LATCH_BTREE_LEAF)) {
		const node_t *n = latch_btree_node_(ref);

		if (!n || depth++ >= LATCH_BTREE_MAX_DEPTH) {
			*bad = true;
			return false;
		}
		unsigned c = count_le(n, x);
		unsigned i = c - (c != 0);

		if (mode == FLOOR) {
			/* The first copy of entry i is its real index (padding repeats the last). */
			unsigned t = count_lt(n, LATCH_LOAD_RELAXED(&n->key[i]));

			if (t > 0)
				side = LATCH_LOAD_ACQUIRE(&n->slot[t - 1]);
		} else if (mode == CEIL && i + 1 < LATCH_BTREE_FANOUT &&
		           LATCH_LOAD_RELAXED(&n->key[i + 1]) != LATCH_LOAD_RELAXED(&n->key[i])) {
			side = LATCH_LOAD_ACQUIRE(&n->slot[i + 1]);
		}
		/* Acquire: pairs with the writer's release store of the reference. */
		ref = LATCH_LOAD_ACQUIRE(&n->slot[i]);
	}
	leaf = latch_btree_node_(ref);
	switch (mode) {
	case EXACT:
		pos = count_lt(leaf, x);
		pos -= pos == LATCH_BTREE_FANOUT;
		if (LATCH_LOAD_RELAXED(&leaf->key[pos]) != x)
			return false;
		break;
	case FLOOR:
		pos = count_le(leaf, x);
		if (pos > 0) {
			pos--;
		} else {
			if (!side)
				return false;
			leaf = edge_leaf(side, LATCH_BTREE_FANOUT - 1, depth);
			pos = LATCH_BTREE_FANOUT - 1;
		}
		break;
	case CEIL:
		pos = count_lt(leaf, x);
		if (pos == LATCH_BTREE_FANOUT) {
			if (!side)
				return false;
			leaf = edge_leaf(side, 0, depth);
			pos = 0;
		}
		break;
	}
	if (!leaf) {
		*bad = true;
		return false;
	}
	/* Relaxed: copied out; the retry check decides whether they count. */
	*kout = LATCH_LOAD_RELAXED(&leaf->key[pos]);
	*vout = LATCH_LOAD_RELAXED(&leaf->slot[pos]);
	return true;
}

static bool attempt_scalar(const struct latch_map *m, unsigned cp, uint64_t x, enum mode mode,
                           uint64_t *kout, uintptr_t *vout, bool *bad)
{
	return attempt_with(m, cp, x, mode, kout, vout, bad, latch_btree_count_le_,
	                    latch_btree_count_lt_);
}

int latch_btree_simd_ = -1;

#ifdef LATCH_BTREE_AVX2
__attribute__((target("avx2"))) static bool attempt_avx2(const struct latch_map *m, unsigned cp,
                                                         uint64_t x, enum mode mode, uint64_t *kout,
                                                         uintptr_t *vout, bool *bad)
{
	return attempt_with(m, cp, x, mode, kout, vout, bad, latch_btree_count_le_avx2_,
	                    latch_btree_count_lt_avx2_);
}

static int simd_supported(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") ? 1 : 0;
}
#else
static int simd_supported(void)
{
	return 0;
}
#endif

/* One attempt with the in-node count chosen by latch_map_init(). */
static bool attempt(const struct latch_map *m, unsigned cp, uint64_t x, enum mode mode,
                    uint64_t *kout, uintptr_t *vout, bool *bad)
{
#ifdef LATCH_BTREE_AVX2
	/* Relaxed: set once, before any map is shared, and never changed after. */
	if (LATCH_LOAD_RELAXED(&latch_btree_simd_) > 0)
		return attempt_avx2(m, cp, x, mode, kout, vout, bad);
#endif
	return attempt_scalar(m, cp, x, mode, kout, vout, bad);
}

bool latch_map_find_in_copy_(const struct latch_map *m, unsigned cp, uint64_t key, void **value,
                             bool *bad)
{
	uint64_t k;
	uintptr_t v = 0;
	bool hit = attempt(m, cp & 1u, key, EXACT, &k, &v, bad);

	*value = (void *)v;
	return hit;
}

static bool lookup(const struct latch_map *m, uint64_t x, enum mode mode, uint64_t *found,
                   void **value)
{
	for (;;) {
		unsigned start = latch_seq_read_begin(&m->seq);
		uint64_t k = 0;
		uintptr_t v = 0;
		bool bad, hit = attempt(m, start & 1u, x, mode, &k, &v, &bad);

		if (latch_seq_read_retry(&m->seq, start))
			continue;
		/* A copy readers are sent to is complete: no attempt on it is abandoned. */
		if (bad)
			return false;
		if (hit && found)
			*found = k;
		if (hit && value)
			*value = (void *)v;
		return hit;
	}
}

bool latch_map_find(const struct latch_map *m, uint64_t key, void **value)
{
	return lookup(m, key, EXACT, NULL, value);
}

bool latch_map_floor(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return lookup(m, key, FLOOR, found, value);
}

bool latch_map_ceil(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return lookup(m, key, CEIL, found, value);
}

bool latch_map_first(const struct latch_map *m, uint64_t *found, void **value)
{
	return lookup(m, 0, CEIL, found, value);
}

bool latch_map_last(const struct latch_map *m, uint64_t *found, void **value)
{
	return lookup(m, UINT64_MAX, FLOOR, found, value);
}

bool latch_map_next(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return key != UINT64_MAX && lookup(m, key + 1, CEIL, found, value);
}

bool latch_map_prev(const struct latch_map *m, uint64_t key, uint64_t *found, void **value)
{
	return key != 0 && lookup(m, key - 1, FLOOR, found, value);
}

size_t latch_map_size(const struct latch_map *m)
{
	for (;;) {
		unsigned start = latch_seq_read_begin(&m->seq);
		/* Relaxed: the retry check below makes it consistent with its copy. */
		size_t size = LATCH_LOAD_RELAXED(&m->copy[start & 1u].size);

		if (!latch_seq_read_retry(&m->seq, start))
			return size;
	}
}
