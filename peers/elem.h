/* SPDX-License-Identifier: MIT */
/* The element type the tests share: a long key and a latch tree node. */
#ifndef LATCH_PEERS_ELEM_H
#define LATCH_PEERS_ELEM_H

#include <latch/tree.h>

struct test_elem {
	long key;
	struct latch_tree_node node;
};

static inline struct test_elem *test_elem_of(const struct latch_tree_node *n)
{
	return n ? latch_tree_entry(n, struct test_elem, node) : NULL;
}

static inline bool test_elem_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return test_elem_of(a)->key < test_elem_of(b)->key;
}

static inline int test_elem_comp(const void *key, const struct latch_tree_node *n)
{
	long k = *(const long *)key, nk = test_elem_of(n)->key;

	return (k > nk) - (k < nk);
}

static const struct latch_tree_ops test_elem_ops = {
	.less = test_elem_less,
	.comp = test_elem_comp,
};

static inline struct test_elem *test_find(const struct latch_tree_root *root, long key)
{
	return test_elem_of(latch_tree_find(root, &key, &test_elem_ops));
}

#endif /* LATCH_PEERS_ELEM_H */
