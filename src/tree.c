/* SPDX-License-Identifier: MIT */
/*
 * The latched tree's writer side: every change is made to the idle copy
 * while readers use the other one, then one flip sends readers to it, and
 * the same change is replayed onto the copy they left.
 */
#include <latch/tree.h>

#include "tree-private.h"
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
 * inserted into the second copy belongs where it went in the first copy
 * when that copy was in the same state, and the second copy needs no
 * descent.  insert_noting() notes that place in the element's node for
 * the second copy, whose parent_colour no reader ever loads and which is
 * not linked yet; insert_noted() links it there.
 */

/* Insert @node into copy @idx, noting its parent and side for the other copy.  Cost O(log N). */
static void insert_noting(struct latch_tree_root *root, struct latch_tree_node *node, unsigned idx,
                          const struct latch_tree_ops *ops)
{
	struct latch_rb_node *parent;
	struct latch_rb_node **link = latch_tree_link_of_(root, node, idx, ops, &parent);

	/* Nodes are pointer-aligned: bit 0 says "right child of parent". */
	node->node[idx ^ 1u].parent_colour =
	    (uintptr_t)parent | (uintptr_t)(parent && link == &parent->child[LATCH_RB_RIGHT]);
	/* Before the first link to the element: see latch/atomic.h. */
	latch_tsan_release_(node);
	latch_rb_link_node(&node->node[idx], parent, link);
	latch_rb_insert_colour(&node->node[idx], &root->tree[idx]);
}

/*
 * Insert @node into copy @idx where insert_noting() put it in the other
 * copy, for the public call @call.  Cost O(log N).
 */
static void insert_noted(const char *call, struct latch_tree_root *root,
                         struct latch_tree_node *node, unsigned idx)
{
	uintptr_t noted = node->node[idx].parent_colour;
	struct latch_rb_node *first = (struct latch_rb_node *)(noted & ~(uintptr_t)1);
	/* The parent element's node for copy @idx, next to its node for the other copy. */
	struct latch_rb_node *parent =
	    first ? &latch_tree_from_rb_(first, idx ^ 1u)->node[idx] : NULL;
	struct latch_rb_node **link = parent ? &parent->child[noted & 1] : &root->tree[idx].node;

	/*
	 * An internal consistency check, made while the update is under way
	 * (so it stops the program with the tree half changed): the checks
	 * before the update leave only unserialized writers or links changed
	 * outside the library to make it fail.
	 */
	LATCH_CONTRACT(!*link, call,
	               "the copies no longer have the same shape (writers not serialized, or the "
	               "tree changed outside liblatch)");
	latch_rb_link_node(&node->node[idx], parent, link);
	latch_rb_insert_colour(&node->node[idx], &root->tree[idx]);
}

void latch_tree_apply_copy_(const char *call, struct latch_tree_root *root,
                            const struct latch_tree_change *changes, size_t n, unsigned idx,
                            bool replay, const struct latch_tree_ops *ops)
{
	for (size_t i = 0; i < n; i++) {
		if (changes[i].op == LATCH_TREE_ERASE)
			latch_rb_erase(&changes[i].node->node[idx], &root->tree[idx]);
		else if (replay)
			insert_noted(call, root, changes[i].node, idx);
		else
			insert_noting(root, changes[i].node, idx, ops);
	}
}

/* What latch_tree_commit_unchecked_() hands to each half of latch_seq_write(). */
struct commit {
	const char *call;
	struct latch_tree_root *root;
	const struct latch_tree_change *changes;
	size_t n;
	const struct latch_tree_ops *ops;
};

/* One copy's half of a commit. */
static void commit_copy(void *arg, unsigned idx, bool replay)
{
	const struct commit *c = arg;

	latch_tree_apply_copy_(c->call, c->root, c->changes, c->n, idx, replay, c->ops);
}

void latch_tree_commit_unchecked_(const char *call, struct latch_tree_root *root,
                                  const struct latch_tree_change *changes, size_t n,
                                  const struct latch_tree_ops *ops)
{
	struct commit c = { call, root, changes, n, ops };

	/* The first copy decides every insert's place; the second replays them. */
	latch_seq_write(&root->seq, commit_copy, &c);
}

void latch_tree_insert(struct latch_tree_root *root, struct latch_tree_node *node,
                       const struct latch_tree_ops *ops)
{
	const struct latch_tree_change change = { LATCH_TREE_INSERT, node };

	check_batch("latch_tree_insert", root, &change, 1, ops);
	latch_tree_commit_unchecked_("latch_tree_insert", root, &change, 1, ops);
}

void latch_tree_erase(struct latch_tree_root *root, struct latch_tree_node *node,
                      const struct latch_tree_ops *ops)
{
	const struct latch_tree_change change = { LATCH_TREE_ERASE, node };

	check_batch("latch_tree_erase", root, &change, 1, ops);
	latch_tree_commit_unchecked_("latch_tree_erase", root, &change, 1, ops);
}

void latch_tree_commit(struct latch_tree_root *root, const struct latch_tree_change *changes,
                       size_t n, const struct latch_tree_ops *ops)
{
	check_batch("latch_tree_commit", root, changes, n, ops);
	latch_tree_commit_unchecked_("latch_tree_commit", root, changes, n, ops);
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
	latch_tree_commit_unchecked_("latch_tree_replace", root, changes, 2, ops);
}
