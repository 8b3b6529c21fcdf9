/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree core shared by latch_map and latch_range_map: two
 * full trees (copy 0 and copy 1) sharing no node, steered by one latch
 * counter, one flip per update, nodes from type-stable pools (btree.h).
 * A map's leaves hold (key, value) entries; a range map's hold (start,
 * value, end), the end in an array after the node.  Every function here
 * serves both; the ends are read and written only for span leaves.
 *
 * Writer: every update is validated and its worst-case node need
 * reserved by the caller first, so nothing can fail once the first copy
 * is touched.  It is made to the idle copy, readers are sent there by
 * one flip, and the same update is replayed on the copy they left.
 *
 * The separator invariant: the bound an inner node holds for child i is
 * exactly the least key of child i's subtree (entry 0 of the whole tree
 * included).  Inserting keeps it (a key below a leaf's first key can only
 * arrive in the leftmost leaf, whose path is lowered); erasing a leaf's
 * first entry raises the bounds above it; splits, shares and merges set
 * bounds from the first key of the node on their right.  So a descent by
 * "greatest bound <= x" reaches a leaf whose first key is <= x (unless x
 * is below every key), and a floor lookup is answered inside that leaf:
 * a range that holds x is never left behind a bound that fell inside it
 * (the failure of GCC PR119151, whose b-tree kept stale bounds after
 * removals).  tests/map/map-check.h checks it on both copies.
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

#include "btree.h"

typedef struct latch_btree_node node_t;
typedef struct latch_btree_ent ent_t;

enum { INNER = 0, LEAF = 1 };

/* ---- pools ---- */

static void *default_alloc(size_t align, size_t size)
{
	return aligned_alloc(align, size);
}

void *(*latch_btree_alloc_)(size_t align, size_t size) = default_alloc;

/* A chunk: LATCH_BTREE_CHUNK nodes of the pool's size, then the link to the previous chunk. */
static void **chunk_link(const struct latch_btree_pool *p, void *chunk)
{
	return (void **)((char *)chunk + LATCH_BTREE_CHUNK * p->node_size);
}

static node_t *chunk_node(const struct latch_btree_pool *p, void *chunk, unsigned i)
{
	return (node_t *)((char *)chunk + i * p->node_size);
}

/* Bytes of a chunk of @p, a multiple of 64 (for aligned_alloc()). */
static size_t chunk_bytes(const struct latch_btree_pool *p)
{
	return (LATCH_BTREE_CHUNK * p->node_size + sizeof(void *) + 63) / 64 * 64;
}

/* ---- the chunk hook of published maps (src/publish.c) ---- */

int (*latch_btree_chunk_hook_)(const struct latch_btree_pool *p, void *chunk, size_t bytes);

/* Does the hook, if one is set, refuse the new chunk @c of @bytes? */
static bool chunk_refused(const struct latch_btree_pool *p, void *c, size_t bytes)
{
	/* Relaxed: set once, by a call that must not run beside this writer. */
	int (*hook)(const struct latch_btree_pool *, void *, size_t) =
	    LATCH_LOAD_RELAXED(&latch_btree_chunk_hook_);

	return hook && hook(p, c, bytes) != 0;
}

void latch_btree_pool_chunks_(const struct latch_btree_pool *p,
                              void (*fn)(void *chunk, size_t bytes, void *ctx), void *ctx)
{
	for (void *c = p->chunks; c; c = *chunk_link(p, c))
		fn(c, chunk_bytes(p), ctx);
}

int latch_btree_pool_reserve(struct latch_btree_pool *p, size_t want)
{
	while (p->free < want) {
		size_t bytes = chunk_bytes(p);
		void *c = latch_btree_alloc_(_Alignof(node_t), bytes);

		if (!c)
			return -ENOMEM;
		if (chunk_refused(p, c, bytes)) {
			free(c);
			return -ENOMEM;
		}
		/*
		 * Relaxed stores: a reader reaches these nodes only through a
		 * reference stored later with release, after which it sees
		 * them initialised; before that no reader can know them.
		 */
		for (unsigned i = 0; i < LATCH_BTREE_CHUNK; i++) {
			uint64_t *w = (uint64_t *)chunk_node(p, c, i);

			for (size_t j = 0; j < p->node_size / sizeof(*w); j++)
				LATCH_STORE_RELAXED(&w[j], (uint64_t)0);
			latch_btree_pool_give(p, chunk_node(p, c, i));
		}
		*chunk_link(p, c) = p->chunks;
		p->chunks = c;
		p->total += LATCH_BTREE_CHUNK;
	}
	return 0;
}

struct latch_btree_node *latch_btree_pool_take(struct latch_btree_pool *p)
{
	node_t *n = p->free_list;

	p->free_list = (void *)n->slot[0];
	p->free--;
	return n;
}

void latch_btree_pool_give(struct latch_btree_pool *p, struct latch_btree_node *n)
{
	/*
	 * Relaxed: only the writer follows the free list; a stale reader that
	 * loads this link finds a node of the same kind (or 0, which ends its
	 * attempt), and fails its retry check anyway.
	 */
	LATCH_STORE_RELAXED(&n->slot[0], (uintptr_t)p->free_list);
	p->free_list = n;
	p->free++;
}

void latch_btree_pool_free(struct latch_btree_pool *p)
{
	while (p->chunks) {
		void *c = p->chunks;

		p->chunks = *chunk_link(p, c);
		free(c);
	}
	p->free_list = NULL;
	p->total = p->free = 0;
}

/* ---- the writer's view of a node (only the writer stores nodes) ---- */

/* Do nodes of @kind in @t carry ends? */
static bool has_ends(const struct latch_map *t, unsigned kind)
{
	return kind == LEAF && t->spans;
}

/*
 * Used entries of @n: keys increase strictly up to the last used entry,
 * which entry 15 and every padding entry repeat, so the used entries are
 * those whose key differs from entry 15's, and the last used one.
 */
static unsigned node_used(const node_t *n)
{
	unsigned c = 1;

	/* Plain loads: only this (serialized) writer stores nodes. */
	for (unsigned i = 0; i < LATCH_BTREE_FANOUT - 1; i++)
		c += n->key[i] != n->key[LATCH_BTREE_FANOUT - 1];
	return c;
}

static unsigned node_read(const struct latch_map *t, unsigned kind, const node_t *n, ent_t *e)
{
	unsigned c = node_used(n);
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
static void node_write(const struct latch_map *t, unsigned kind, node_t *n, const ent_t *e,
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
static void leaf_insert_at(const struct latch_map *t, node_t *n, unsigned c, unsigned at,
                           const ent_t *x)
{
	uintptr_t *end = has_ends(t, LEAF) ? latch_btree_ends_(n) : NULL;

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
static void leaf_remove_at(const struct latch_map *t, node_t *n, unsigned c, unsigned at)
{
	uintptr_t *end = has_ends(t, LEAF) ? latch_btree_ends_(n) : NULL;

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

static void set_root(struct latch_map *t, unsigned cp, uintptr_t ref)
{
	/* Release: publishes the node's contents to a stale reader (see node_write()). */
	LATCH_STORE_RELEASE(&t->copy[cp].root, ref);
}

static void set_size(struct latch_map *t, unsigned cp, size_t size)
{
	/* Relaxed: published by the flip together with the rest of the copy. */
	LATCH_STORE_RELAXED(&t->copy[cp].size, size);
}

/* Set the key of entry @i of the inner node @p (and of its padding copies). */
static void set_key(struct latch_map *t, node_t *p, unsigned i, uint64_t key)
{
	ent_t e[LATCH_BTREE_FANOUT];
	unsigned c = node_read(t, INNER, p, e);

	e[i].key = key;
	node_write(t, INNER, p, e, c);
}

/*
 * Write the n entries of @e over the sibling pair @l, @r of @kind
 * (children @j and @j+1 of @p), half each, and make @p's bound of @r its
 * new first key.
 */
static void share(struct latch_map *t, unsigned kind, node_t *p, unsigned j, node_t *l, node_t *r,
                  const ent_t *e, unsigned n)
{
	unsigned half = n / 2;

	node_write(t, kind, l, e, half);
	node_write(t, kind, r, e + half, n - half);
	set_key(t, p, j + 1, e[half].key);
}

/*
 * Store the c entries of @e (c may be 17) into node @n at depth @h of the
 * descent @path.  An overfull node first shares with a sibling that has
 * room, so nodes fill up before they split; otherwise it splits and the
 * new node goes into the parent, up to a new root.
 */
static void put(struct latch_map *t, unsigned cp, const struct latch_btree_step *path, unsigned h,
                node_t *n, unsigned kind, ent_t *e, unsigned c)
{
	for (;;) {
		ent_t buf[2 * LATCH_BTREE_FANOUT + 1];

		if (c <= LATCH_BTREE_FANOUT) {
			node_write(t, kind, n, e, c);
			return;
		}
		if (h > 0) {
			node_t *p = path[h - 1].node;
			unsigned j = path[h - 1].idx, pc = node_used(p);

			if (j > 0) {
				node_t *l = latch_btree_node_(p->slot[j - 1]);
				unsigned lc = node_read(t, kind, l, buf);

				if (lc < LATCH_BTREE_FANOUT) {
					memcpy(buf + lc, e, c * sizeof(*e));
					share(t, kind, p, j - 1, l, n, buf, lc + c);
					return;
				}
			}
			if (j + 1 < pc) {
				node_t *r = latch_btree_node_(p->slot[j + 1]);

				memcpy(buf, e, c * sizeof(*e));
				unsigned rc = node_read(t, kind, r, buf + c);

				if (rc < LATCH_BTREE_FANOUT) {
					share(t, kind, p, j, n, r, buf, c + rc);
					return;
				}
			}
		}
		/* Split: n keeps the first half, s takes the rest. */
		node_t *s = latch_btree_pool_take(&t->pool[kind]);
		unsigned half = c / 2;
		ent_t up = { e[half].key, latch_btree_ref_(s, kind == LEAF), 0 };

		node_write(t, kind, s, e + half, c - half);
		node_write(t, kind, n, e, half);
		if (h == 0) {
			node_t *root = latch_btree_pool_take(&t->pool[INNER]);
			ent_t two[2] = { { e[0].key, latch_btree_ref_(n, kind == LEAF), 0 }, up };

			node_write(t, INNER, root, two, 2);
			set_root(t, cp, latch_btree_ref_(root, false));
			t->copy[cp].height++;
			return;
		}
		h--;
		n = path[h].node;
		kind = INNER;
		c = node_read(t, INNER, n, e);
		ent_insert(e, &c, path[h].idx + 1, up);
	}
}

void latch_btree_insert_at_(struct latch_map *t, unsigned cp, const struct latch_btree_spot *s,
                            const struct latch_btree_ent *x)
{
	ent_t e[LATCH_BTREE_FANOUT + 1];
	unsigned c;

	set_size(t, cp, t->copy[cp].size + 1);
	if (!s->leaf) {
		node_t *leaf = latch_btree_pool_take(&t->pool[LEAF]);

		node_write(t, LEAF, leaf, x, 1);
		set_root(t, cp, latch_btree_ref_(leaf, true));
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
	c = node_read(t, LEAF, s->leaf, e);
	ent_insert(e, &c, s->at, *x);
	put(t, cp, s->path, s->depth, s->leaf, LEAF, e, c);
}

/*
 * Store the c entries of @e into node @n at depth @h of @path after a
 * removal.  An underfull node borrows from a sibling with entries to
 * spare, or merges with it; a merge removes an entry from the parent, up
 * to the root, which shrinks when it has one child left.
 */
static void fix(struct latch_map *t, unsigned cp, const struct latch_btree_step *path, unsigned h,
                node_t *n, unsigned kind, ent_t *e, unsigned c)
{
	for (;;) {
		ent_t buf[2 * LATCH_BTREE_FANOUT];

		if (h == 0) {
			if (c == 0 || (kind == INNER && c == 1)) {
				set_root(t, cp, c ? e[0].slot : 0);
				t->copy[cp].height--;
				latch_btree_pool_give(&t->pool[kind], n);
			} else {
				node_write(t, kind, n, e, c);
			}
			return;
		}
		if (c >= LATCH_BTREE_MIN) {
			node_write(t, kind, n, e, c);
			return;
		}
		node_t *p = path[h - 1].node;
		unsigned j = path[h - 1].idx, total;
		node_t *l, *r;

		if (j > 0) { /* pair with the left sibling */
			j--;
			l = latch_btree_node_(p->slot[j]);
			r = n;
			total = node_read(t, kind, l, buf);
			memcpy(buf + total, e, c * sizeof(*e));
			total += c;
		} else { /* pair with the right sibling */
			l = n;
			r = latch_btree_node_(p->slot[j + 1]);
			memcpy(buf, e, c * sizeof(*e));
			total = c + node_read(t, kind, r, buf + c);
		}
		if (total >= 2 * LATCH_BTREE_MIN) {
			share(t, kind, p, j, l, r, buf, total);
			return;
		}
		/* Merge into the left node; the right one goes back to its pool. */
		node_write(t, kind, l, buf, total);
		latch_btree_pool_give(&t->pool[kind], r);
		h--;
		n = p;
		kind = INNER;
		c = node_read(t, INNER, p, e);
		ent_remove(e, &c, j + 1);
	}
}

void latch_btree_erase_at_(struct latch_map *t, unsigned cp, const struct latch_btree_spot *s)
{
	ent_t e[LATCH_BTREE_FANOUT];
	node_t *leaf = s->leaf;
	unsigned h = s->depth, c = s->used, at = s->at;

	set_size(t, cp, t->copy[cp].size - 1);
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
	c = node_read(t, LEAF, leaf, e);
	ent_remove(e, &c, at);
	fix(t, cp, s->path, h, leaf, LEAF, e, c);
}

void latch_btree_replace_at_(const struct latch_btree_spot *s, uintptr_t value)
{
	/* The last used entry's value is repeated in the padding after it. */
	for (unsigned i = s->at; i < (s->at == s->used - 1 ? LATCH_BTREE_FANOUT : s->at + 1); i++)
		/* Release, as every slot store (ent_store()). */
		LATCH_STORE_RELEASE(&s->leaf->slot[i], value);
}

/* The writer's descent (below, beside the readers' count functions). */
static void locate(const struct latch_map *t, unsigned from, unsigned to, uint64_t key,
                   struct latch_btree_spot *spot);

void latch_btree_insert_(struct latch_map *t, unsigned cp, const struct latch_btree_ent *x)
{
	struct latch_btree_spot s;

	locate(t, cp, cp, x->key, &s);
	latch_btree_insert_at_(t, cp, &s, x);
}

void latch_btree_erase_(struct latch_map *t, unsigned cp, uint64_t key)
{
	struct latch_btree_spot s;

	locate(t, cp, cp, key, &s);
	latch_btree_erase_at_(t, cp, &s);
}

void latch_btree_replace_(struct latch_map *t, unsigned cp, uint64_t key, uintptr_t value)
{
	struct latch_btree_spot s;

	locate(t, cp, cp, key, &s);
	latch_btree_replace_at_(&s, value);
}

/* Return every node of the subtree @ref to its pool. */
static void free_subtree(struct latch_map *t, uintptr_t ref)
{
	node_t *n = latch_btree_node_(ref);

	if (!(ref & LATCH_BTREE_LEAF)) {
		unsigned c = node_used(n);

		for (unsigned i = 0; i < c; i++)
			free_subtree(t, n->slot[i]);
	}
	latch_btree_pool_give(&t->pool[ref & LATCH_BTREE_LEAF ? LEAF : INNER], n);
}

/* ---- the one-flip update ---- */

/*
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
void latch_btree_write_(struct latch_map *t,
                        void (*apply)(struct latch_map *t, unsigned cp, const void *ctx),
                        const void *ctx)
{
	apply(t, latch_seq_write_begin(&t->seq), ctx);
	apply(t, latch_btree_flip_(t), ctx);
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

/*
 * Nodes of @kind each copy uses now, on average: the copies may differ in
 * shape (a range map's failed batch is undone on one copy only), and the
 * pools serve both.
 */
static size_t in_use(const struct latch_map *t, unsigned kind)
{
	return (t->pool[kind].total - t->pool[kind].free) / 2;
}

/* Make the pools hold @leaves and @inner more nodes for each copy. */
static int reserve_more(struct latch_map *t, size_t leaves, size_t inner)
{
	if (latch_btree_pool_reserve(&t->pool[LEAF], 2 * leaves) ||
	    latch_btree_pool_reserve(&t->pool[INNER], 2 * inner))
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
 * An insertion adds at most one leaf and one inner node per level
 * (splits and a new root); erasures only free nodes.  The need is also at
 * most what a valid tree of every entry the update can hold at once has
 * beyond what is in use, since the tree is valid after every change.
 * The bound is concave in the nodes in use, so reserving it for the
 * average of the two copies covers both (in_use()).
 */
int latch_btree_reserve_inserts_(struct latch_map *t, size_t changes, size_t inserts)
{
	size_t leaves, inner, height;

	if (!changes)
		return 0;
	max_nodes(t->copy[0].size + inserts, &leaves, &inner, &height);
	return reserve_more(t, min2(changes, sub0(leaves, in_use(t, LEAF))),
	                    min2(changes * height, sub0(inner, in_use(t, INNER))));
}

int latch_btree_reserve_(struct latch_map *t, size_t n)
{
	size_t leaves, inner, height;

	max_nodes(n, &leaves, &inner, &height);
	return reserve_more(t, sub0(leaves, in_use(t, LEAF)), sub0(inner, in_use(t, INNER)));
}

/* ---- bulk load ---- */

/* Nodes of a packed tree of @entries entries: leaves, inner nodes. */
static void packed_nodes(size_t entries, size_t *leaves, size_t *inner)
{
	size_t x = (entries + LATCH_BTREE_FANOUT - 1) / LATCH_BTREE_FANOUT;

	*leaves = x;
	*inner = 0;
	while (x > 1) {
		x = (x + LATCH_BTREE_FANOUT - 1) / LATCH_BTREE_FANOUT;
		*inner += x;
	}
}

struct load {
	size_t n;
	void (*get)(const void *src, size_t i, ent_t *e);
	const void *src;
	ent_t *level; /* scratch: one entry per leaf */
};

/*
 * Make copy @cp a packed tree of the load's entries; its old nodes must
 * be back in the pools.  The count entries of a level go to
 * g = ceil(count/16) nodes as evenly as possible, so every node but a
 * lone root holds at least 8.
 */
static void build(struct latch_map *t, unsigned cp, const struct load *ld)
{
	size_t count = ld->n, height = 1;
	unsigned kind = LEAF;

	set_size(t, cp, ld->n);
	if (!count) {
		set_root(t, cp, 0);
		t->copy[cp].height = 0;
		return;
	}
	for (;;) {
		size_t g = (count + LATCH_BTREE_FANOUT - 1) / LATCH_BTREE_FANOUT;

		for (size_t i = 0; i < g; i++) {
			size_t lo = (size_t)((uint64_t)i * count / g);
			size_t hi = (size_t)((uint64_t)(i + 1) * count / g);
			ent_t e[LATCH_BTREE_FANOUT];
			node_t *n = latch_btree_pool_take(&t->pool[kind]);

			for (size_t k = lo; k < hi; k++) {
				if (kind == LEAF)
					ld->get(ld->src, k, &e[k - lo]);
				else
					e[k - lo] = ld->level[k];
			}
			node_write(t, kind, n, e, (unsigned)(hi - lo));
			/* In place: entry i is written after entries lo >= i are read. */
			ld->level[i] = (ent_t){ e[0].key, latch_btree_ref_(n, kind == LEAF), 0 };
		}
		if (g == 1)
			break;
		count = g;
		kind = INNER;
		height++;
	}
	set_root(t, cp, ld->level[0].slot);
	t->copy[cp].height = height;
}

/*
 * Replace copy @cp by the load's entries.  The copy's old nodes go back
 * to the pools first: readers are not sent to this copy while it
 * changes, so they may be reused at once (see the file comment).
 */
static void apply_load(struct latch_map *t, unsigned cp, const void *ctx)
{
	if (t->copy[cp].root)
		free_subtree(t, t->copy[cp].root);
	build(t, cp, ctx);
}

/* Reserve a packed tree of @n entries beyond @leaves_now and @inner_now per copy; its scratch. */
static ent_t *prepare_build(struct latch_map *t, size_t n, size_t leaves_now, size_t inner_now)
{
	size_t leaves, inner;

	packed_nodes(n, &leaves, &inner);
	if (reserve_more(t, sub0(leaves, leaves_now), sub0(inner, inner_now)))
		return NULL;
	return latch_btree_alloc_(_Alignof(ent_t), (leaves ? leaves : 1) * sizeof(ent_t));
}

int latch_btree_load_(struct latch_map *t, size_t n,
                      void (*get)(const void *src, size_t i, struct latch_btree_ent *e),
                      const void *src)
{
	/*
	 * Each copy first frees what it uses, then takes the packed tree, so
	 * the pools need only what the new trees need beyond that.
	 */
	struct load ld = { n, get, src, prepare_build(t, n, in_use(t, LEAF), in_use(t, INNER)) };

	if (!ld.level)
		return -ENOMEM;
	latch_btree_write_(t, apply_load, &ld);
	free(ld.level);
	return 0;
}

/* ---- recovery after fork() ---- */

/* A walk of one copy: its nodes (sorted later) and its entries in order. */
struct census {
	const node_t **nodes;
	ent_t *ents;
	size_t nnodes, nents;
};

static void census_walk(const struct latch_map *t, uintptr_t ref, struct census *cs)
{
	const node_t *n = latch_btree_node_(ref);
	bool leaf = ref & LATCH_BTREE_LEAF;
	unsigned c = node_used(n);

	cs->nodes[cs->nnodes++] = n;
	if (leaf) {
		cs->nents += node_read(t, LEAF, n, cs->ents + cs->nents);
		return;
	}
	for (unsigned i = 0; i < c; i++)
		census_walk(t, n->slot[i], cs);
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const node_t *const *)a,
	          y = (uintptr_t) * (const node_t *const *)b;

	return (x > y) - (x < y);
}

/* Put every node of @p's chunks that is not in the sorted @used on the free list. */
static void refill(struct latch_btree_pool *p, const node_t **used, size_t nused)
{
	p->free_list = NULL;
	p->free = p->total = 0;
	for (void *c = p->chunks; c; c = *chunk_link(p, c)) {
		p->total += LATCH_BTREE_CHUNK;
		for (unsigned i = 0; i < LATCH_BTREE_CHUNK; i++) {
			const node_t *n = chunk_node(p, c, i);

			if (!bsearch(&n, used, nused, sizeof(*used), ptr_cmp))
				latch_btree_pool_give(p, chunk_node(p, c, i));
		}
	}
}

static void census_get(const void *src, size_t i, ent_t *e)
{
	*e = ((const struct census *)src)->ents[i];
}

int latch_btree_recover_(struct latch_map *t)
{
	unsigned live = latch_seq_write_begin(&t->seq) ^ 1u, idle = live ^ 1u;
	size_t n = t->copy[live].size, leaves, inner, height;
	struct census cs = { NULL, NULL, 0, 0 };
	struct load ld = { n, census_get, &cs, NULL };
	int err = -ENOMEM;

	/* A valid copy of n entries has at most max_nodes(n) nodes. */
	max_nodes(n, &leaves, &inner, &height);
	cs.nodes = latch_btree_alloc_(_Alignof(node_t *), (leaves + inner + 1) * sizeof(node_t *));
	cs.ents = latch_btree_alloc_(_Alignof(ent_t), (n + LATCH_BTREE_FANOUT) * sizeof(ent_t));
	if (!cs.nodes || !cs.ents)
		goto out;
	if (t->copy[live].root)
		census_walk(t, t->copy[live].root, &cs);
	qsort(cs.nodes, cs.nnodes, sizeof(*cs.nodes), ptr_cmp);
	/* Every node the live copy does not use is free: the idle copy is rebuilt from them. */
	refill(&t->pool[INNER], cs.nodes, cs.nnodes);
	refill(&t->pool[LEAF], cs.nodes, cs.nnodes);
	ld.level = prepare_build(t, n, 0, 0);
	if (!ld.level)
		goto out;
	build(t, idle, &ld);
	free(ld.level);
	err = 0;
out:
	free(cs.nodes);
	free(cs.ents);
	return err;
}

/* ---- set-up ---- */

static int simd_supported(void);

void latch_btree_init_(struct latch_map *t, bool spans)
{
	/*
	 * Relaxed: the choice is the same whichever thread makes it, and a
	 * map's readers run only after its initialisation is published.
	 */
	if (LATCH_LOAD_RELAXED(&latch_btree_simd_) < 0)
		LATCH_STORE_RELAXED(&latch_btree_simd_, simd_supported());
	memset(t, 0, sizeof(*t));
	latch_seq_init(&t->seq);
	t->spans = spans;
	t->pool[INNER].node_size = sizeof(node_t);
	t->pool[LEAF].node_size = spans ? sizeof(struct latch_btree_span_leaf) : sizeof(node_t);
}

void latch_btree_destroy_(struct latch_map *t)
{
	latch_btree_pool_free(&t->pool[INNER]);
	latch_btree_pool_free(&t->pool[LEAF]);
	memset(t, 0, sizeof(*t));
}

/* ---- readers ---- */

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
 * Start loading the lines of @n's slots (and ends, with @ends) while its
 * keys are counted: the entry the count picks is then read without a
 * second round of cache misses.  A prefetch is no access: it cannot fault
 * nor race, whatever the node holds.
 */
static inline __attribute__((always_inline)) void prefetch_slots(const node_t *n, bool ends)
{
	const char *p = (const char *)n->slot;

	for (size_t at = 0; at < (ends ? 2 : 1) * sizeof(n->slot); at += 64)
		__builtin_prefetch(p + at);
}

/*
 * One lookup attempt on copy @cp.  Memory safety holds for any copy,
 * however stale: a reference with bit 0 clear always points to inner-node
 * memory, whose slots only ever hold references (or 0); a reference with
 * bit 0 set to leaf memory of the tree's one leaf size; positions are
 * clamped to 0..15; the descent is capped.  Values are copied, never
 * dereferenced.
 *
 * A floor lookup needs no neighbouring subtree: by the separator
 * invariant (file comment) the leaf the descent reaches starts at or
 * below x unless x is below every key.  A ceil lookup notes the nearest
 * subtree right of the path, for when every key of the leaf is below x.
 */
static inline __attribute__((always_inline)) bool
attempt_with(const struct latch_map *t, unsigned cp, uint64_t x, enum latch_btree_mode mode,
             ent_t *out, bool *bad, unsigned (*count_le)(const node_t *, uint64_t),
             unsigned (*count_lt)(const node_t *, uint64_t))
{
	/* Acquire: pairs with the writer's release store of the root. */
	uintptr_t ref = LATCH_LOAD_ACQUIRE(&t->copy[cp].root);
	uintptr_t side = 0; /* the nearest subtree right of the path */
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
		prefetch_slots(n, false);
		unsigned c = count_le(n, x);
		unsigned i = c - (c != 0);

		if (mode == LATCH_BTREE_CEIL && i + 1 < LATCH_BTREE_FANOUT &&
		    LATCH_LOAD_RELAXED(&n->key[i + 1]) != LATCH_LOAD_RELAXED(&n->key[i]))
			side = LATCH_LOAD_ACQUIRE(&n->slot[i + 1]);
		/* Acquire: pairs with the writer's release store of the reference. */
		ref = LATCH_LOAD_ACQUIRE(&n->slot[i]);
	}
	leaf = latch_btree_node_(ref);
	prefetch_slots(leaf, t->spans);
	switch (mode) {
	case LATCH_BTREE_EXACT:
		pos = count_lt(leaf, x);
		pos -= pos == LATCH_BTREE_FANOUT;
		if (LATCH_LOAD_RELAXED(&leaf->key[pos]) != x)
			return false;
		break;
	case LATCH_BTREE_FLOOR:
		pos = count_le(leaf, x);
		if (pos == 0)
			return false;
		pos--;
		break;
	case LATCH_BTREE_CEIL:
		pos = count_lt(leaf, x);
		if (pos == LATCH_BTREE_FANOUT) {
			if (!side)
				return false;
			leaf = edge_leaf(side, 0, depth);
			pos = 0;
			if (!leaf) {
				*bad = true;
				return false;
			}
		}
		break;
	}
	/* Relaxed: copied out; the retry check decides whether they count. */
	out->key = LATCH_LOAD_RELAXED(&leaf->key[pos]);
	out->slot = LATCH_LOAD_RELAXED(&leaf->slot[pos]);
	out->end = t->spans ? LATCH_LOAD_RELAXED(&latch_btree_ends_(leaf)[pos]) : 0;
	return true;
}

static bool attempt_scalar(const struct latch_map *t, unsigned cp, uint64_t x,
                           enum latch_btree_mode mode, ent_t *out, bool *bad)
{
	return attempt_with(t, cp, x, mode, out, bad, latch_btree_count_le_, latch_btree_count_lt_);
}

int latch_btree_simd_ = -1;

#ifdef LATCH_BTREE_X86_SIMD
__attribute__((target("avx2"))) static bool attempt_avx2(const struct latch_map *t, unsigned cp,
                                                         uint64_t x, enum latch_btree_mode mode,
                                                         ent_t *out, bool *bad)
{
	return attempt_with(t, cp, x, mode, out, bad, latch_btree_count_le_avx2_,
	                    latch_btree_count_lt_avx2_);
}

__attribute__((target("avx512f"))) static bool attempt_avx512(const struct latch_map *t,
                                                              unsigned cp, uint64_t x,
                                                              enum latch_btree_mode mode,
                                                              ent_t *out, bool *bad)
{
	return attempt_with(t, cp, x, mode, out, bad, latch_btree_count_le_avx512_,
	                    latch_btree_count_lt_avx512_);
}

static int simd_supported(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return LATCH_BTREE_COUNT_AVX512;
	return __builtin_cpu_supports("avx2") ? LATCH_BTREE_COUNT_AVX2 : LATCH_BTREE_COUNT_SCALAR;
}
#else
static int simd_supported(void)
{
	return LATCH_BTREE_COUNT_SCALAR;
}
#endif

/*
 * The writer's descent to @key's spot in copies @from..@to, spot[i] for
 * copy from + i: both copies go level by level side by side, so that
 * their cache misses overlap.  It uses the readers' branchless in-node
 * counts (plain loads would do: only this serialized writer stores
 * nodes).  In an inner node, the child is the last used entry whose bound
 * is <= @key, found from the padding copy the count may end in as the
 * reader does; in the leaf, the used entries are those below entry 15's
 * key (which the padding repeats), plus that one.
 */
static inline __attribute__((always_inline)) void
locate_with(const struct latch_map *t, unsigned from, unsigned to, uint64_t key,
            struct latch_btree_spot *spot, unsigned (*count_le)(const node_t *, uint64_t),
            unsigned (*count_lt)(const node_t *, uint64_t))
{
	uintptr_t r[2];
	bool inner = false;

	for (unsigned i = 0; i <= to - from; i++) {
		r[i] = t->copy[from + i].root;
		spot[i].leaf = NULL;
		spot[i].depth = spot[i].used = spot[i].at = 0;
		inner |= r[i] && !(r[i] & LATCH_BTREE_LEAF);
	}
	while (inner) {
		inner = false;
		for (unsigned i = 0; i <= to - from; i++) {
			struct latch_btree_spot *s = &spot[i];

			if (!r[i] || (r[i] & LATCH_BTREE_LEAF))
				continue;
			node_t *n = latch_btree_node_(r[i]);
			unsigned c = count_le(n, key);
			unsigned at = count_lt(n, n->key[c - (c != 0)]);

			s->path[s->depth].node = n;
			s->path[s->depth++].idx = at;
			r[i] = n->slot[at];
			inner |= !(r[i] & LATCH_BTREE_LEAF);
		}
	}
	for (unsigned i = 0; i <= to - from; i++) {
		node_t *leaf = latch_btree_node_(r[i]);
		unsigned below;

		if (!leaf)
			continue;
		spot[i].leaf = leaf;
		spot[i].used = count_lt(leaf, leaf->key[LATCH_BTREE_FANOUT - 1]) + 1;
		below = count_lt(leaf, key);
		spot[i].at = below < spot[i].used ? below : spot[i].used;
	}
}

static void locate_scalar(const struct latch_map *t, unsigned from, unsigned to, uint64_t key,
                          struct latch_btree_spot *spot)
{
	locate_with(t, from, to, key, spot, latch_btree_count_le_, latch_btree_count_lt_);
}

#ifdef LATCH_BTREE_X86_SIMD
__attribute__((target("avx2"))) static void locate_avx2(const struct latch_map *t, unsigned from,
                                                        unsigned to, uint64_t key,
                                                        struct latch_btree_spot *spot)
{
	locate_with(t, from, to, key, spot, latch_btree_count_le_avx2_, latch_btree_count_lt_avx2_);
}

__attribute__((target("avx512f"))) static void locate_avx512(const struct latch_map *t,
                                                             unsigned from, unsigned to,
                                                             uint64_t key,
                                                             struct latch_btree_spot *spot)
{
	locate_with(t, from, to, key, spot, latch_btree_count_le_avx512_,
	            latch_btree_count_lt_avx512_);
}
#endif

/* Is @key at @s? */
static bool spot_holds(const struct latch_btree_spot *s, uint64_t key)
{
	return s->at < s->used && s->leaf->key[s->at] == key;
}

static void locate(const struct latch_map *t, unsigned from, unsigned to, uint64_t key,
                   struct latch_btree_spot *spot)
{
#ifdef LATCH_BTREE_X86_SIMD
	/* Relaxed: as in latch_btree_attempt_(). */
	switch (LATCH_LOAD_RELAXED(&latch_btree_simd_)) {
	case LATCH_BTREE_COUNT_AVX512:
		locate_avx512(t, from, to, key, spot);
		return;
	case LATCH_BTREE_COUNT_AVX2:
		locate_avx2(t, from, to, key, spot);
		return;
	}
#endif
	locate_scalar(t, from, to, key, spot);
}

bool latch_btree_locate_both_(const struct latch_map *t, uint64_t key,
                              struct latch_btree_spot spot[2])
{
	locate(t, 0, 1, key, spot);
	return spot_holds(&spot[latch_seq_write_begin(&t->seq)], key);
}

bool latch_btree_attempt_(const struct latch_map *t, unsigned cp, uint64_t x,
                          enum latch_btree_mode mode, struct latch_btree_ent *out, bool *bad)
{
#ifdef LATCH_BTREE_X86_SIMD
	/* Relaxed: set once, before any map is shared, and never changed after. */
	switch (LATCH_LOAD_RELAXED(&latch_btree_simd_)) {
	case LATCH_BTREE_COUNT_AVX512:
		return attempt_avx512(t, cp & 1u, x, mode, out, bad);
	case LATCH_BTREE_COUNT_AVX2:
		return attempt_avx2(t, cp & 1u, x, mode, out, bad);
	}
#endif
	return attempt_scalar(t, cp & 1u, x, mode, out, bad);
}

bool latch_btree_lookup_(const struct latch_map *t, uint64_t x, enum latch_btree_mode mode,
                         struct latch_btree_ent *out)
{
	ent_t e = { 0, 0, 0 };
	bool bad = false, hit = false;

	LATCH_SEQ_READ_(&t->seq, cp)
	{
		e = (ent_t){ 0, 0, 0 };
		hit = latch_btree_attempt_(t, cp, x, mode, &e, &bad);
	}
	/* A copy readers are sent to is complete: no attempt on it is abandoned. */
	if (bad)
		return false;
	/* What the flips so far published happens-before, for ThreadSanitizer. */
	latch_tsan_acquire_(t);
	*out = e;
	return hit;
}

size_t latch_btree_size_(const struct latch_map *t)
{
	size_t size = 0;

	/* Relaxed: the loop's retry check makes it consistent with its copy. */
	LATCH_SEQ_READ_(&t->seq, cp) size = LATCH_LOAD_RELAXED(&t->copy[cp].size);
	return size;
}
