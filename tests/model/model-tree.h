/* SPDX-License-Identifier: MIT */
/*
 * The latched tree under GenMC, for harnesses (c) and (d): the real
 * src/rbtree.c and src/tree.c compiled into the harness (GenMC explores
 * one translation unit), and a small tree whose updates rotate.
 *
 * The starting tree, built by main() before any thread starts, with keys
 * inserted in the order 20, 10, 30, 40, 25 (r: red, the rest black):
 *
 *	      20
 *	     /  \
 *	   10    30
 *	        /  \
 *	      25r   40r
 *
 * Erasing 10 (a black leaf) rotates the root down to the left.  Each
 * lookup is checked against the oracle of model.h.
 */
#ifndef LATCH_MODEL_TREE_H
#define LATCH_MODEL_TREE_H

#include "model.h"

#include <latch/tree.h>

#include <src/rbtree.c>
#include <src/tree.c>

struct elem {
	long key; /* plain: set before the insert, read by readers' comp() */
	struct latch_tree_node node;
	struct model_life life; /* set by main() */
};

static bool elem_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return latch_tree_entry_const(a, struct elem, node)->key <
	       latch_tree_entry_const(b, struct elem, node)->key;
}

static int elem_comp(const void *key, const struct latch_tree_node *n)
{
	long k = *(const long *)key, nk = latch_tree_entry_const(n, struct elem, node)->key;

	return (k > nk) - (k < nk);
}

static const struct latch_tree_ops elem_ops = { elem_less, elem_comp };

static struct latch_tree_root tree = LATCH_TREE_ROOT_INIT;
static struct elem e10, e20, e25, e30, e40;

/* The count once the starting tree is built: one flip per insert. */
#define MODEL_START 5u

/* The starting tree above; before any other thread exists. */
static void model_tree_start(void)
{
	struct elem *order[] = { &e20, &e10, &e30, &e40, &e25 };
	long keys[] = { 20, 10, 30, 40, 25 };

	latch_tree_init(&tree);
	for (int i = 0; i < 5; i++) {
		order[i]->key = keys[i];
		order[i]->life.from = 0;
		order[i]->life.until = MODEL_NEVER;
		latch_tree_insert(&tree, &order[i]->node, &elem_ops);
	}
	assert(LATCH_LOAD_RELAXED(&tree.seq.sequence) == MODEL_START);
}

/* The harness's own look at the counter: relaxed, so it orders nothing. */
static unsigned model_count(void)
{
	return LATCH_LOAD_RELAXED(&tree.seq.sequence);
}

/*
 * latch_tree_find() of @key, checked by model_check(): @cands are the @n
 * elements that ever hold @key.  Returns the element found, or NULL.
 */
static const struct elem *model_find(long key, const struct elem *const *cands, int n)
{
	const struct model_life *lives[2];
	unsigned before = model_count();
	const struct latch_tree_node *node = latch_tree_find(&tree, &key, &elem_ops);
	unsigned after = model_count();
	const struct elem *found = node ? latch_tree_entry_const(node, struct elem, node) : NULL;
	int index = -1;

	assert(n <= 2);
	for (int i = 0; i < n; i++) {
		lives[i] = &cands[i]->life;
		if (found == cands[i])
			index = i;
	}
	assert(!found || index >= 0); /* only an element that holds the key */
	model_check(before, after, lives, n, index);
	return found;
}

#endif /* LATCH_MODEL_TREE_H */
