/* SPDX-License-Identifier: MIT */
/*
 * The latched tree's private writer side: the steps every change to a
 * latched tree is made of, shared by the tree's own calls, the tests and
 * the benchmark.  Not installed.
 */
#ifndef LATCH_SRC_TREE_PRIVATE_H
#define LATCH_SRC_TREE_PRIVATE_H

#include <latch/tree.h>

/*
 * The link in copy @idx where @node belongs, NULL now; *parent gets the
 * node that link is in (NULL for the root).  Equal keys go right, after
 * the elements already present.  Cost O(log n).  Writer only.
 */
static inline struct latch_rb_node **
latch_tree_link_of_(struct latch_tree_root *root, const struct latch_tree_node *node, unsigned idx,
                    const struct latch_tree_ops *ops, struct latch_rb_node **parent)
{
	struct latch_rb_node **link = &root->tree[idx].node;

	*parent = NULL;
	/* Plain loads of links: only the (serialized) writer stores them. */
	while (*link) {
		*parent = *link;
		link = &(*parent)->child[ops->less(node, latch_tree_from_rb_(*parent, idx))
		                             ? LATCH_RB_LEFT
		                             : LATCH_RB_RIGHT];
	}
	return link;
}

/*
 * Link @node into copy @idx only, and rebalance that copy.  Equal keys go
 * right, after the elements already present.  Cost O(log n).  Writer
 * only; the caller steers readers away from copy @idx first.
 */
static inline void latch_tree_insert_copy_(struct latch_tree_root *root,
                                           struct latch_tree_node *node, unsigned idx,
                                           const struct latch_tree_ops *ops)
{
	struct latch_rb_node *parent;
	struct latch_rb_node **link = latch_tree_link_of_(root, node, idx, ops, &parent);

	latch_rb_link_node(&node->node[idx], parent, link);
	latch_rb_insert_colour(&node->node[idx], &root->tree[idx]);
}

/*
 * Apply @changes in order to the idle copy while readers use the other
 * one, flip once (readers then see all of them), then replay them onto
 * the copy readers left: readers see all of the changes or none.
 * Makes no checks but internal consistency
 * checks in debug builds, whose messages name @call, the public call the
 * user made: the caller has made the others.
 * Cost O(n log N) per copy.  Writer only, serialized by the caller.
 */
void latch_tree_commit_unchecked_(const char *call, struct latch_tree_root *root,
                                  const struct latch_tree_change *changes, size_t n,
                                  const struct latch_tree_ops *ops);

/*
 * Make @changes, in order, to copy @idx only.  Without @replay each
 * insert descends copy @idx and notes its place for the other copy; with
 * it, each insert goes where the note says, so the copy that is changed
 * second must see the same changes in the same order, and the other copy
 * must have been changed first.  Readers must be kept off copy @idx.
 * Cost O(n log N).  Writer only, serialized by the caller.
 */
void latch_tree_apply_copy_(const char *call, struct latch_tree_root *root,
                            const struct latch_tree_change *changes, size_t n, unsigned idx,
                            bool replay, const struct latch_tree_ops *ops);

#endif /* LATCH_SRC_TREE_PRIVATE_H */
