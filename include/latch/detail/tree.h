/* SPDX-License-Identifier: MIT */
/*
 * latch/detail/tree.h - the inline reader machinery of <latch/tree.h>.
 *
 * Not part of the API: the lookups of <latch/tree.h> are inline, so user
 * code compiles what is here, but nothing here may be called, named or
 * relied on directly; it changes without notice.  Include <latch/tree.h>.
 */
#ifndef LATCH_DETAIL_TREE_H
#define LATCH_DETAIL_TREE_H

/* Included by <latch/tree.h> once what it needs is declared, never on its own. */
#ifndef LATCH_TREE_H
#error "include <latch/tree.h>, not <latch/detail/tree.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The element that embeds @ptr as its member @member, without @ptr's
 * const.  Lookups take a const root but return the caller's
 * elements, which the tree does not own: the readers drop the const of
 * their own node pointers here, through uintptr_t, so that -Wcast-qual
 * keeps watching every other cast.
 */
#define latch_tree_entry_unconst_(ptr, type, member)                                               \
	((type *)((uintptr_t)(const void *)(ptr)-offsetof(type, member)))

/* The element that embeds @rb as its node for copy @idx. */
static inline struct latch_tree_node *latch_tree_from_rb_(const struct latch_rb_node *rb,
                                                          unsigned idx)
{
	return latch_tree_entry_unconst_(rb - idx, struct latch_tree_node, node);
}

/* What a descent looks for, relative to its probe. */
enum latch_tree_seek_ {
	LATCH_TREE_SEEK_EQUAL_, /* any element equal to the probe */
	LATCH_TREE_SEEK_FLOOR_, /* the in-order last element not after the probe */
	LATCH_TREE_SEEK_CEIL_,  /* the in-order first element not before the probe */
};

/*
 * How a lookup's probe orders against element @n: <0, 0, >0 as it lies
 * before, with, after @n.  Every lookup passes one of these as a constant
 * argument, so it inlines into the descent (and the user's comp() or
 * less() with it, when @ops is constant).
 */
static inline int latch_tree_order_key_(const void *probe, const struct latch_tree_node *n,
                                        const struct latch_tree_ops *ops)
{
	return ops->comp(probe, n);
}

/* The probe is an element and lies before every element with a greater key. */
static inline int latch_tree_order_after_(const void *probe, const struct latch_tree_node *n,
                                          const struct latch_tree_ops *ops)
{
	return ops->less((const struct latch_tree_node *)probe, n) ? -1 : 1;
}

/* The probe is an element and lies after every element with a lesser key. */
static inline int latch_tree_order_before_(const void *probe, const struct latch_tree_node *n,
                                           const struct latch_tree_ops *ops)
{
	return ops->less(n, (const struct latch_tree_node *)probe) ? 1 : -1;
}

/* No probe: it lies before every element (seek the first one). */
static inline int latch_tree_order_leftmost_(const void *probe, const struct latch_tree_node *n,
                                             const struct latch_tree_ops *ops)
{
	(void)probe;
	(void)n;
	(void)ops;
	return -1;
}

/* No probe: it lies after every element (seek the last one). */
static inline int latch_tree_order_rightmost_(const void *probe, const struct latch_tree_node *n,
                                              const struct latch_tree_ops *ops)
{
	(void)probe;
	(void)n;
	(void)ops;
	return 1;
}

/*
 * One bounded descent of copy @idx: the element sought, or NULL when there
 * is none or when the descent did not end within LATCH_RB_MAX_DEPTH steps
 * (a safety net: with release link stores and acquire loads a reader never
 * goes round a cycle, but on a copy the writer is changing it can walk a
 * longer path than the tree has, and the latch retry check then discards
 * the attempt; see latch/rbtree.h).
 */
static inline struct latch_tree_node *
latch_tree_seek_in_copy_(const struct latch_tree_root *root, unsigned idx,
                         int (*order)(const void *probe, const struct latch_tree_node *n,
                                      const struct latch_tree_ops *ops),
                         const void *probe, const struct latch_tree_ops *ops,
                         enum latch_tree_seek_ seek)
{
	const struct latch_rb_node *rb = latch_rb_root_node(&root->tree[idx]);
	struct latch_tree_node *best = NULL;
	unsigned steps;

	for (steps = 0; rb; steps++) {
		struct latch_tree_node *n = latch_tree_from_rb_(rb, idx);
		bool right;
		int c;

		if (steps == LATCH_RB_MAX_DEPTH)
			return NULL;
		/* ThreadSanitizer only: see the element's initialisation (latch/atomic.h). */
		LATCH_TSAN_ACQUIRE_(n);
		c = order(probe, n, ops);
		if (c == 0 && seek == LATCH_TREE_SEEK_EQUAL_)
			return n;
		/* Equal elements: a floor walks on right to the last of them, a
		 * ceil left to the first. */
		right = c > 0 || (c == 0 && seek == LATCH_TREE_SEEK_FLOOR_);
		/* A floor is among the nodes left behind going right, a ceil
		 * among those left behind going left. */
		if (seek != LATCH_TREE_SEEK_EQUAL_ && right == (seek == LATCH_TREE_SEEK_FLOOR_))
			best = n;
		/* latch_rb_child() is an acquire load: the child is seen initialised. */
		rb = latch_rb_child(rb, right ? LATCH_RB_RIGHT : LATCH_RB_LEFT);
	}
	return best;
}

/*
 * The read side every lookup shares: the descent above on the copy the
 * latch points to, repeated until no flip happened meanwhile.  Never
 * waits.  All parameters are passed directly (not through a struct) and
 * the loop is a statement (LATCH_SEQ_READ_), so that constant ones, the
 * comparator among them, inline.
 */
static inline struct latch_tree_node *
latch_tree_seek_(const struct latch_tree_root *root,
                 int (*order)(const void *probe, const struct latch_tree_node *n,
                              const struct latch_tree_ops *ops),
                 const void *probe, const struct latch_tree_ops *ops, enum latch_tree_seek_ seek)
{
	struct latch_tree_node *found = NULL;

	LATCH_SEQ_READ_(&root->seq, idx)
	{
		/*
		 * One descent per copy, each with a constant index: the
		 * compiler folds the copy's node offset into every load's
		 * address, so a step costs what it costs in a one-copy tree
		 * (a variable index adds an address computation to each
		 * step's chain of dependent loads).
		 */
		if (idx)
			found = latch_tree_seek_in_copy_(root, 1, order, probe, ops, seek);
		else
			found = latch_tree_seek_in_copy_(root, 0, order, probe, ops, seek);
	}
	return found;
}

/*
 * One bounded descent of copy @idx for an element equal to @key (see
 * latch_tree_seek_in_copy_()); the caller decides whether it stands.
 */
static inline struct latch_tree_node *latch_tree_find_in_copy_(const struct latch_tree_root *root,
                                                               unsigned idx, const void *key,
                                                               const struct latch_tree_ops *ops)
{
	return latch_tree_seek_in_copy_(root, idx, latch_tree_order_key_, key, ops,
	                                LATCH_TREE_SEEK_EQUAL_);
}

/* latch_tree_empty(): is the copy the latch names empty? */
static inline bool latch_tree_empty_(const struct latch_tree_root *root)
{
	bool empty = false;

	LATCH_SEQ_READ_(&root->seq, idx) empty = latch_rb_root_node(&root->tree[idx]) == NULL;
	return empty;
}

#ifdef __cplusplus
}
#endif

#endif /* LATCH_DETAIL_TREE_H */
