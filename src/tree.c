/* SPDX-License-Identifier: MIT */
/*
 * The latched tree's writer side: every change is made to copy 0 while
 * readers use copy 1, then to copy 1 while readers use copy 0.
 */
#include <latch/tree.h>

#include "contract.h"

#ifndef NDEBUG
/*
 * Is @node linked in copy 0?  Walks to the first element not less than
 * @node, then through the run of elements equal to it.  Needs nothing of
 * @node but its key, so it works on uninitialised links too.
 * Cost O(log n + number of equal keys).
 */
static bool copy0_contains(const struct latch_tree_root *root, const struct latch_tree_node *node,
                           const struct latch_tree_ops *ops)
{
	struct latch_rb_node *rb = root->tree[0].node;
	struct latch_rb_node *lower = NULL;

	while (rb) {
		if (ops->less(latch_tree_from_rb_(rb, 0), node)) {
			rb = rb->child[LATCH_RB_RIGHT];
		} else {
			lower = rb;
			rb = rb->child[LATCH_RB_LEFT];
		}
	}
	for (rb = lower; rb && !ops->less(node, latch_tree_from_rb_(rb, 0)); rb = latch_rb_next(rb))
		if (latch_tree_from_rb_(rb, 0) == node)
			return true;
	return false;
}
#endif

void latch_tree_insert(struct latch_tree_root *root, struct latch_tree_node *node,
                       const struct latch_tree_ops *ops)
{
	LATCH_CONTRACT(!copy0_contains(root, node, ops), "latch_tree_insert",
	               "the element is already in the tree");

	latch_seq_write_begin(&root->seq);
	latch_tree_insert_copy_(root, node, 0, ops);
	latch_seq_write_switch(&root->seq);
	latch_tree_insert_copy_(root, node, 1, ops);
	latch_seq_write_end(&root->seq);
}

void latch_tree_erase(struct latch_tree_root *root, struct latch_tree_node *node,
                      const struct latch_tree_ops *ops)
{
	LATCH_CONTRACT(copy0_contains(root, node, ops), "latch_tree_erase",
	               "the element is not in the tree");
	(void)ops;

	latch_seq_write_begin(&root->seq);
	latch_rb_erase(&node->node[0], &root->tree[0]);
	latch_seq_write_switch(&root->seq);
	latch_rb_erase(&node->node[1], &root->tree[1]);
	latch_seq_write_end(&root->seq);
}
