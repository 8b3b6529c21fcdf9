/* SPDX-License-Identifier: MIT */
/*
 * Whole-structure checks of a latched tree, for tests: both copies are
 * valid red-black trees, hold the same elements in the same order, sorted
 * by key, and as many as the caller expects, and have the same shape
 * (the same root, each element with the same children and colour in both
 * copies), which the writer's replay of inserts relies on (insert_noted()
 * in src/tree.c).
 */
#ifndef LATCH_TESTS_TREE_INVARIANTS_H
#define LATCH_TESTS_TREE_INVARIANTS_H

#include "check.h"
#include "elem.h"

/* The element linked at @rb in copy @idx, or NULL. */
static inline const struct latch_tree_node *tree_elem_at(const struct latch_rb_node *rb,
                                                         unsigned idx)
{
	return rb ? latch_tree_from_rb_(rb, idx) : NULL;
}

/* The checks above for any element type, ordered by @ops->less. */
static inline void check_latch_tree(const struct latch_tree_root *root, long expected,
                                    const struct latch_tree_ops *ops)
{
	const char *why = "";
	struct latch_rb_node *a, *b;
	const struct latch_tree_node *prev = NULL;
	long count = 0;

	for (unsigned idx = 0; idx < 2; idx++) {
		long n = latch_rb_check(&root->tree[idx], &why);

		CHECK(n == expected, "copy %u: latch_rb_check gave %ld (expected %ld): %s", idx, n,
		      expected, n < 0 ? why : "wrong count");
	}

	CHECK(tree_elem_at(root->tree[0].node, 0) == tree_elem_at(root->tree[1].node, 1),
	      "the copies have different roots");
	a = latch_rb_first(&root->tree[0]);
	b = latch_rb_first(&root->tree[1]);
	for (; a && b; a = latch_rb_next(a), b = latch_rb_next(b), count++) {
		struct latch_tree_node *ea = latch_tree_from_rb_(a, 0);
		struct latch_tree_node *eb = latch_tree_from_rb_(b, 1);

		CHECK(ea == eb, "copies differ at position %ld", count);
		for (int dir = LATCH_RB_LEFT; dir <= LATCH_RB_RIGHT; dir++)
			CHECK(tree_elem_at(a->child[dir], 0) == tree_elem_at(b->child[dir], 1),
			      "copies differ in shape at position %ld (%s child)", count,
			      dir == LATCH_RB_LEFT ? "left" : "right");
		CHECK((a->parent_colour & 1) == (b->parent_colour & 1),
		      "copies differ in colour at position %ld", count);
		CHECK(!prev || !ops->less(ea, prev), "copy out of order at %ld", count);
		prev = ea;
	}
	CHECK(!a && !b && count == expected, "copies hold %ld shared elements, expected %ld", count,
	      expected);
	CHECK(latch_tree_empty(root) == (expected == 0), "latch_tree_empty disagrees");
}

static inline void check_tree_invariants(const struct latch_tree_root *root, long expected)
{
	check_latch_tree(root, expected, &test_elem_ops);
}

#endif /* LATCH_TESTS_TREE_INVARIANTS_H */
