/* SPDX-License-Identifier: MIT */
/*
 * One copy of a latch tree, with no synchronization of its own: the
 * building block of the peers that protect a single tree with a seqlock,
 * an rwlock or a mutex, which the benchmark, the demo and the tests
 * compare the latch against.  Only copy 0 (each element's node[0]) is
 * used; lookups are the latch tree's own bounded descent.
 *
 * Writer functions must be serialized by the caller; the lookup needs
 * the tree stable (that is the peer's lock's job).
 */
#ifndef LATCH_PEERS_ONE_COPY_TREE_H
#define LATCH_PEERS_ONE_COPY_TREE_H

#include "tree-private.h"

/* Add @node.  Cost O(log n).  Writer only. */
static inline void one_copy_insert(struct latch_tree_root *root, struct latch_tree_node *node,
                                   const struct latch_tree_ops *ops)
{
	latch_tree_insert_copy_(root, node, 0, ops);
}

/* Remove @node.  Cost O(log n).  Writer only. */
static inline void one_copy_erase(struct latch_tree_root *root, struct latch_tree_node *node)
{
	latch_rb_erase(&node->node[0], &root->tree[0]);
}

/* An element equal to @key, or NULL.  Cost O(log n). */
static inline struct latch_tree_node *
one_copy_find(const struct latch_tree_root *root, const void *key, const struct latch_tree_ops *ops)
{
	return latch_tree_find_in_copy_(root, 0, key, ops);
}

#endif /* LATCH_PEERS_ONE_COPY_TREE_H */
