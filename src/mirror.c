/* SPDX-License-Identifier: MIT */
/*
 * Rebuilding one copy of a latched tree from the other.  Both copies have
 * the same shape (see src/tree.c), so the rebuilt copy links each element
 * exactly where the stable copy does: every link and parent pointer of
 * node[from] is stored, shifted to the same element's node[to], in
 * node[to].
 */
#include <latch/tree.h>

#include "mirror.h"

/* @rb (a node of copy from) shifted to the same element's node of copy to. */
static struct latch_rb_node *twin(struct latch_rb_node *rb, ptrdiff_t shift)
{
	return rb ? rb + shift : NULL;
}

void latch_tree_mirror_(struct latch_tree_root *root, void (*after_copy)(void *ctx, unsigned idx),
                        void *ctx)
{
	/* Relaxed: only the (serialized) writer stores the counter. */
	unsigned from = LATCH_LOAD_RELAXED(&root->seq.sequence) & 1u, to = from ^ 1u;
	/* node[to] - node[from] within one struct latch_tree_node. */
	ptrdiff_t shift = (ptrdiff_t)to - (ptrdiff_t)from;

	/*
	 * Copy @from, the one readers are on, is a complete red-black tree
	 * wherever the writer stopped (the old contents before its flip, the
	 * new ones after it), so its parent pointers can be walked.  No reader
	 * is sent to copy @to before the next update's flip, so the stores to
	 * it race with no reader that could use them: relaxed, published by
	 * that flip's release store.
	 */
	for (struct latch_rb_node *rb = latch_rb_first(&root->tree[from]); rb;
	     rb = latch_rb_next(rb)) {
		struct latch_rb_node *mirror = rb + shift;
		uintptr_t colour = rb->parent_colour & 1;
		struct latch_rb_node *parent = (struct latch_rb_node *)(rb->parent_colour - colour);

		mirror->parent_colour = (uintptr_t)twin(parent, shift) | colour;
		for (int dir = LATCH_RB_LEFT; dir <= LATCH_RB_RIGHT; dir++)
			LATCH_STORE_RELAXED(&mirror->child[dir], twin(rb->child[dir], shift));
	}
	LATCH_STORE_RELAXED(&root->tree[to].node, twin(root->tree[from].node, shift));
	if (after_copy)
		after_copy(ctx, to);
}
