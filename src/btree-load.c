/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree's whole-tree writers: the bulk load, which builds
 * packed nodes level by level, and the recovery after fork(), which
 * rebuilds the copy readers are not sent to from the one they are.
 */
#include <errno.h>
#include <stdlib.h>

#include "btree.h"

typedef struct latch_btree_node node_t;
typedef struct latch_btree_ent ent_t;

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
static void build(struct latch_btree *t, unsigned cp, const struct load *ld)
{
	size_t count = ld->n, height = 1;
	unsigned kind = LATCH_BTREE_LEAF_POOL;

	latch_btree_set_size(t, cp, ld->n);
	if (!count) {
		latch_btree_set_root(t, cp, 0);
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
				if (kind == LATCH_BTREE_LEAF_POOL)
					ld->get(ld->src, k, &e[k - lo]);
				else
					e[k - lo] = ld->level[k];
			}
			latch_btree_node_write(t, kind, n, e, (unsigned)(hi - lo));
			/* In place: entry i is written after entries lo >= i are read. */
			ld->level[i] =
			    (ent_t){ e[0].key, latch_btree_ref_(n, kind == LATCH_BTREE_LEAF_POOL),
				     0 };
		}
		if (g == 1)
			break;
		count = g;
		kind = LATCH_BTREE_INNER_POOL;
		height++;
	}
	latch_btree_set_root(t, cp, ld->level[0].slot);
	t->copy[cp].height = height;
}

/* The load and its tree, as latch_seq_write() hands them to each half. */
struct loading {
	struct latch_btree *t;
	const struct load *ld;
};

/*
 * Replace copy @cp by the load's entries.  The copy's old nodes go back
 * to the pools first: readers are not sent to this copy while it
 * changes, so they may be reused at once (btree-pool.c).
 */
static void load_copy(void *arg, unsigned cp, bool replay)
{
	const struct loading *l = arg;

	(void)replay;
	if (l->t->copy[cp].root)
		latch_btree_free_subtree(l->t, l->t->copy[cp].root);
	build(l->t, cp, l->ld);
}

/* Reserve a packed tree of @n entries beyond @leaves_now and @inner_now per copy; its scratch. */
static ent_t *prepare_build(struct latch_btree *t, size_t n, size_t leaves_now, size_t inner_now)
{
	size_t leaves, inner;

	packed_nodes(n, &leaves, &inner);
	if (latch_btree_reserve_more(t, latch_btree_sub0(leaves, leaves_now),
	                             latch_btree_sub0(inner, inner_now)))
		return NULL;
	return latch_btree_alloc(_Alignof(ent_t), (leaves ? leaves : 1) * sizeof(ent_t));
}

int latch_btree_load(struct latch_btree *t, size_t n,
                     void (*get)(const void *src, size_t i, struct latch_btree_ent *e),
                     const void *src)
{
	/*
	 * Each copy first frees what it uses, then takes the packed tree, so
	 * the pools need only what the new trees need beyond that.
	 */
	struct load ld = { n, get, src,
		           prepare_build(t, n, latch_btree_in_use(t, LATCH_BTREE_LEAF_POOL),
		                         latch_btree_in_use(t, LATCH_BTREE_INNER_POOL)) };
	struct loading l = { t, &ld };

	if (!ld.level)
		return -ENOMEM;
	latch_seq_write(&t->seq, load_copy, &l);
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

static void census_walk(const struct latch_btree *t, uintptr_t ref, struct census *cs)
{
	const node_t *n = latch_btree_node_(ref);
	bool leaf = ref & LATCH_BTREE_LEAF;
	unsigned c = latch_btree_node_used(n);

	cs->nodes[cs->nnodes++] = n;
	if (leaf) {
		cs->nents +=
		    latch_btree_node_read(t, LATCH_BTREE_LEAF_POOL, n, cs->ents + cs->nents);
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

/* Is @n among the census's (sorted) nodes?  Its pool's refill asks. */
static bool census_has(const void *ctx, const node_t *n)
{
	const struct census *cs = ctx;

	return bsearch(&n, cs->nodes, cs->nnodes, sizeof(*cs->nodes), ptr_cmp) != NULL;
}

static void census_get(const void *src, size_t i, ent_t *e)
{
	*e = ((const struct census *)src)->ents[i];
}

int latch_btree_recover(struct latch_btree *t)
{
	/* The copy readers are not sent to: a parent's writer may have stopped inside it. */
	unsigned idle = latch_seq_write_begin(&t->seq), live = idle ^ 1u;
	size_t n = t->copy[live].size;
	size_t nodes = t->pool[LATCH_BTREE_INNER_POOL].total + t->pool[LATCH_BTREE_LEAF_POOL].total;
	struct census cs = { NULL, NULL, 0, 0 };
	struct load ld = { n, census_get, &cs, NULL };
	int err = -ENOMEM;

	/* Every node of the live copy comes from the pools. */
	cs.nodes = latch_btree_alloc(_Alignof(node_t *), (nodes + 1) * sizeof(node_t *));
	cs.ents = latch_btree_alloc(_Alignof(ent_t), (n + LATCH_BTREE_FANOUT) * sizeof(ent_t));
	if (!cs.nodes || !cs.ents)
		goto out;
	if (t->copy[live].root)
		census_walk(t, t->copy[live].root, &cs);
	qsort(cs.nodes, cs.nnodes, sizeof(*cs.nodes), ptr_cmp);
	/* Every node the live copy does not use is free: the idle copy is rebuilt from them. */
	latch_btree_pool_refill(&t->pool[LATCH_BTREE_INNER_POOL], census_has, &cs);
	latch_btree_pool_refill(&t->pool[LATCH_BTREE_LEAF_POOL], census_has, &cs);
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
