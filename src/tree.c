/* SPDX-License-Identifier: MIT */
/*
 * The latched tree's writer side: every change is made to copy 0 while
 * readers use copy 1, then to copy 1 while readers use copy 0.
 */
#include <latch/tree.h>

#include "commit.h"
#include "contract.h"
#include "tsan.h"

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

/*
 * Stop, naming @call, before any change unless every change of the batch
 * is valid.  Every build checks what one compare per change can tell
 * (cost O(n)); debug builds also check the batch against the tree as it
 * is now (cost O(n^2 + n log N)).
 */
static void check_batch(const char *call, const struct latch_tree_root *root,
                        const struct latch_tree_change *changes, size_t n,
                        const struct latch_tree_ops *ops)
{
	for (size_t i = 0; i < n; i++) {
		LATCH_REQUIRE(changes[i].node, call, "a change has no element");
		LATCH_REQUIRE(changes[i].op == LATCH_TREE_INSERT ||
		                  changes[i].op == LATCH_TREE_ERASE,
		              call, "a change has an unknown operation");
	}
#ifndef NDEBUG
	for (size_t i = 0; i < n; i++) {
		const struct latch_tree_node *node = changes[i].node;

		LATCH_CONTRACT(changes[i].op != LATCH_TREE_INSERT ||
		                   !copy0_contains(root, node, ops),
		               call, "an element to insert is already in the tree");
		LATCH_CONTRACT(changes[i].op != LATCH_TREE_ERASE || copy0_contains(root, node, ops),
		               call, "an element to erase is not in the tree");
		for (size_t j = 0; j < i; j++)
			LATCH_CONTRACT(changes[j].node != node, call,
			               "an element appears twice in the batch");
	}
#else
	(void)root;
	(void)ops;
#endif
}

/*
 * The two copies always have the same shape: every change is made to
 * both, in the same order, by the same deterministic code.  So an element
 * inserted into copy 1 belongs where it went in copy 0 when copy 0 was in
 * the same state, and copy 1 needs no descent.  insert_noting() notes
 * that place in the element's copy-1 node, whose parent_colour no reader
 * ever loads and which is not linked yet; insert_noted() links it there.
 */

/* Insert @node into copy 0, noting its parent and side.  Cost O(log N). */
static void insert_noting(struct latch_tree_root *root, struct latch_tree_node *node,
                          const struct latch_tree_ops *ops)
{
	struct latch_rb_node *parent;
	struct latch_rb_node **link = latch_tree_link_of_(root, node, 0, ops, &parent);

	/* Nodes are pointer-aligned: bit 0 says "right child of parent". */
	node->node[1].parent_colour =
	    (uintptr_t)parent | (uintptr_t)(parent && link == &parent->child[LATCH_RB_RIGHT]);
	/* Before the first link to the element: see latch/atomic.h. */
	latch_tsan_release_(node);
	latch_rb_link_node(&node->node[0], parent, link);
	latch_rb_insert_colour(&node->node[0], &root->tree[0]);
}

/*
 * Insert @node into copy 1 where insert_noting() put it in copy 0, for the
 * public call @call.  Cost O(log N).
 */
static void insert_noted(const char *call, struct latch_tree_root *root,
                         struct latch_tree_node *node)
{
	uintptr_t noted = node->node[1].parent_colour;
	struct latch_rb_node *parent0 = (struct latch_rb_node *)(noted & ~(uintptr_t)1);
	/* The parent element's copy-1 node follows its copy-0 node. */
	struct latch_rb_node *parent = parent0 ? parent0 + 1 : NULL;
	struct latch_rb_node **link = parent ? &parent->child[noted & 1] : &root->tree[1].node;

	/*
	 * An internal consistency check, made while the update is under way
	 * (so it stops the program with the tree half changed): the checks
	 * before the update leave only unserialized writers or links changed
	 * outside the library to make it fail.
	 */
	LATCH_CONTRACT(!*link, call,
	               "the copies no longer have the same shape (writers not serialized, or the "
	               "tree changed outside liblatch)");
	latch_rb_link_node(&node->node[1], parent, link);
	latch_rb_insert_colour(&node->node[1], &root->tree[1]);
}

/* Make @changes, in order, to copy @idx only, for @call.  Cost O(n log N). */
static void apply_to_copy(const char *call, struct latch_tree_root *root,
                          const struct latch_tree_change *changes, size_t n, unsigned idx,
                          const struct latch_tree_ops *ops)
{
	for (size_t i = 0; i < n; i++) {
		if (changes[i].op == LATCH_TREE_ERASE)
			latch_rb_erase(&changes[i].node->node[idx], &root->tree[idx]);
		else if (idx == 0)
			insert_noting(root, changes[i].node, ops);
		else
			insert_noted(call, root, changes[i].node);
	}
}

void latch_tree_commit_unchecked_(const char *call, struct latch_tree_root *root,
                                  const struct latch_tree_change *changes, size_t n,
                                  const struct latch_tree_ops *ops,
                                  void (*after_copy)(void *ctx, unsigned idx), void *ctx)
{
	latch_seq_write_begin(&root->seq);
	apply_to_copy(call, root, changes, n, 0, ops);
	if (after_copy)
		after_copy(ctx, 0);
	latch_seq_write_switch(&root->seq);
	apply_to_copy(call, root, changes, n, 1, ops);
	if (after_copy)
		after_copy(ctx, 1);
	latch_seq_write_end(&root->seq);
}

void latch_tree_insert(struct latch_tree_root *root, struct latch_tree_node *node,
                       const struct latch_tree_ops *ops)
{
	const struct latch_tree_change change = { LATCH_TREE_INSERT, node };

	check_batch("latch_tree_insert", root, &change, 1, ops);
	latch_tree_commit_unchecked_("latch_tree_insert", root, &change, 1, ops, NULL, NULL);
}

void latch_tree_erase(struct latch_tree_root *root, struct latch_tree_node *node,
                      const struct latch_tree_ops *ops)
{
	const struct latch_tree_change change = { LATCH_TREE_ERASE, node };

	check_batch("latch_tree_erase", root, &change, 1, ops);
	latch_tree_commit_unchecked_("latch_tree_erase", root, &change, 1, ops, NULL, NULL);
}

void latch_tree_commit(struct latch_tree_root *root, const struct latch_tree_change *changes,
                       size_t n, const struct latch_tree_ops *ops)
{
	check_batch("latch_tree_commit", root, changes, n, ops);
	latch_tree_commit_unchecked_("latch_tree_commit", root, changes, n, ops, NULL, NULL);
}

void latch_tree_replace(struct latch_tree_root *root, struct latch_tree_node *old,
                        struct latch_tree_node *new_node, const struct latch_tree_ops *ops)
{
	const struct latch_tree_change changes[2] = { { LATCH_TREE_ERASE, old },
		                                      { LATCH_TREE_INSERT, new_node } };

	check_batch("latch_tree_replace", root, changes, 2, ops);
	/* Every build: two compares and two calls of less() tell. */
	LATCH_REQUIRE(old != new_node, "latch_tree_replace",
	              "an element appears twice in the batch");
	LATCH_REQUIRE(!ops->less(old, new_node) && !ops->less(new_node, old), "latch_tree_replace",
	              "the two elements do not compare equal");
	latch_tree_commit_unchecked_("latch_tree_replace", root, changes, 2, ops, NULL, NULL);
}
