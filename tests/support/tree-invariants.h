/* SPDX-License-Identifier: MIT */
/*
 * Whole-structure checks of a latched tree, for tests: both copies are
 * valid red-black trees, hold the same elements in the same order, sorted
 * by key, and as many as the caller expects.
 */
#ifndef LATCH_TESTS_TREE_INVARIANTS_H
#define LATCH_TESTS_TREE_INVARIANTS_H

#include "check.h"
#include "elem.h"

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

	a = latch_rb_first(&root->tree[0]);
	b = latch_rb_first(&root->tree[1]);
	for (; a && b; a = latch_rb_next(a), b = latch_rb_next(b), count++) {
		struct latch_tree_node *ea = latch_tree_from_rb_(a, 0);
		struct latch_tree_node *eb = latch_tree_from_rb_(b, 1);

		CHECK(ea == eb, "copies differ at position %ld", count);
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
