/* SPDX-License-Identifier: MIT */
/*
 * latch/tree.h - the latched red-black tree.
 *
 * Every element embeds two tree nodes, one per copy of the tree; a latch
 * sequence counter (latch/seq.h) steers readers to the copy that is not
 * being modified.  Lookups therefore never wait and always finish, even
 * in a signal handler that interrupted the writer on the same thread, at
 * any instruction: the copy they read is then untouched, so they succeed
 * on their first attempt.
 *
 *	struct my_elem {
 *		uintptr_t key;              // immutable while in the tree
 *		struct latch_tree_node node;
 *	};
 *
 * Synchronization table:
 *
 *	call                     context                 serialize with
 *	latch_tree_find()        any, signal handlers    nothing
 *	latch_tree_empty()       any, signal handlers    nothing
 *	latch_tree_insert()      writer                  other writers
 *	latch_tree_erase()       writer                  other writers
 *	latch_tree_init()        before sharing          everything
 *
 * Element lifetime is the caller's: after latch_tree_erase() returns, a
 * reader may still be looking at the element, so it may be freed or
 * reused only after a grace period (every reader that could have seen it
 * has finished), e.g. liburcu's synchronize_rcu() or call_rcu().
 *
 * Keys are compared with two callbacks that must agree:
 * less(a, b) is true exactly when comp(key of a, b) < 0.  Equal keys are
 * allowed; all equal elements are kept and a lookup returns one of them.
 */
#ifndef LATCH_TREE_H
#define LATCH_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include <latch/rbtree.h>
#include <latch/seq.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Embed one in each element; contents are private. */
struct latch_tree_node {
	struct latch_rb_node node[2]; /* node[i] links the element into copy i */
};

/** A latched tree; all-zero (LATCH_TREE_ROOT_INIT) is an empty tree. */
struct latch_tree_root {
	struct latch_seq seq;
	struct latch_rb_root tree[2];
};

/** Static initialiser for an empty struct latch_tree_root. */
#define LATCH_TREE_ROOT_INIT                                                                       \
	{                                                                                          \
		LATCH_SEQ_INIT,                                                                    \
		{                                                                                  \
			LATCH_RB_ROOT_INIT, LATCH_RB_ROOT_INIT                                     \
		}                                                                                  \
	}

/** The element's key ordering; see the file comment. */
struct latch_tree_ops {
	/* true when a sorts before b (writer side) */
	bool (*less)(const struct latch_tree_node *a, const struct latch_tree_node *b);
	/* <0, 0, >0 as key sorts before, with, after n (reader side) */
	int (*comp)(const void *key, const struct latch_tree_node *n);
};

/** The element that embeds the node @ptr as its member @member. */
#define latch_tree_entry(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/**
 * latch_tree_init() - make @root an empty tree.
 * Cost O(1).  Must not race with any other call on @root.
 */
static inline void latch_tree_init(struct latch_tree_root *root)
{
	latch_seq_init(&root->seq);
	/* Relaxed: the tree is not shared yet. */
	LATCH_STORE_RELAXED(&root->tree[0].node, (struct latch_rb_node *)NULL);
	LATCH_STORE_RELAXED(&root->tree[1].node, (struct latch_rb_node *)NULL);
}

/**
 * latch_tree_insert() - add @node to the tree.
 *
 * The element's key must be set before the call and stay unchanged until
 * it is erased.  Readers see the element from the moment copy 0 holds it
 * (they are then sent to copy 0).  Debug builds abort if @node is already
 * in the tree.
 * Cost O(log n) per copy, no allocation.
 * Writer only: calls that change @root must be serialized by the caller.
 */
LATCH_API void latch_tree_insert(struct latch_tree_root *root, struct latch_tree_node *node,
                                 const struct latch_tree_ops *ops);

/**
 * latch_tree_erase() - remove @node, which must be in the tree.
 *
 * Readers stop finding the element once copy 0 has lost it.  It may be
 * reused or freed only after a grace period (see the file comment).
 * Debug builds abort if @node is not in the tree.
 * Cost O(log n) per copy, no allocation.
 * Writer only: calls that change @root must be serialized by the caller.
 */
LATCH_API void latch_tree_erase(struct latch_tree_root *root, struct latch_tree_node *node,
                                const struct latch_tree_ops *ops);

/* The element that embeds @rb as its node for copy @idx. */
static inline struct latch_tree_node *latch_tree_from_rb_(const struct latch_rb_node *rb,
                                                          unsigned idx)
{
	return latch_tree_entry(rb - idx, struct latch_tree_node, node);
}

/*
 * One bounded descent of copy @idx: an element comparing equal to @key,
 * or NULL when none was found within LATCH_RB_MAX_DEPTH steps.  The
 * caller's latch retry check decides whether the answer stands.
 */
static inline struct latch_tree_node *latch_tree_find_in_copy_(const struct latch_tree_root *root,
                                                               unsigned idx, const void *key,
                                                               const struct latch_tree_ops *ops)
{
	const struct latch_rb_node *rb = latch_rb_root_node(&root->tree[idx]);
	unsigned steps;

	for (steps = 0; rb && steps < LATCH_RB_MAX_DEPTH; steps++) {
		struct latch_tree_node *n = latch_tree_from_rb_(rb, idx);
		int c = ops->comp(key, n);

		if (c == 0)
			return n;
		rb = latch_rb_child(rb, c > 0 ? LATCH_RB_RIGHT : LATCH_RB_LEFT);
	}
	return NULL;
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
	struct latch_rb_node **link = &root->tree[idx].node;
	struct latch_rb_node *parent = NULL;

	/* Plain loads of links: only the (serialized) writer stores them. */
	while (*link) {
		parent = *link;
		link = &parent->child[ops->less(node, latch_tree_from_rb_(parent, idx))
		                          ? LATCH_RB_LEFT
		                          : LATCH_RB_RIGHT];
	}
	latch_rb_link_node(&node->node[idx], parent, link);
	latch_rb_insert_colour(&node->node[idx], &root->tree[idx]);
}

/**
 * latch_tree_find() - an element whose key compares equal to @key.
 *
 * Returns one of the equal elements, or NULL.  Never waits; retries only
 * when an update completed a flip while it was reading, and succeeds on
 * its first attempt when it interrupted the writer.
 * Cost O(log n) per attempt.  Any context, including signal handlers;
 * needs no serialization.  Inline so a constant @ops inlines comp().
 */
static inline struct latch_tree_node *latch_tree_find(const struct latch_tree_root *root,
                                                      const void *key,
                                                      const struct latch_tree_ops *ops)
{
	struct latch_tree_node *found;
	unsigned start;

	do {
		start = latch_seq_read_begin(&root->seq);
		/*
		 * One descent per copy, each with a constant index: the
		 * compiler folds the copy's node offset into every load's
		 * address, so a step costs what it costs in a one-copy tree
		 * (a variable index adds an address computation to each
		 * step's chain of dependent loads).
		 */
		found = start & 1u ? latch_tree_find_in_copy_(root, 1, key, ops)
		                   : latch_tree_find_in_copy_(root, 0, key, ops);
	} while (latch_seq_read_retry(&root->seq, start));
	return found;
}

/**
 * latch_tree_empty() - true when the tree holds no element.
 * Cost O(1).  Any context, including signal handlers.
 */
static inline bool latch_tree_empty(const struct latch_tree_root *root)
{
	bool empty;
	unsigned start;

	do {
		start = latch_seq_read_begin(&root->seq);
		empty = latch_rb_root_node(&root->tree[start & 1u]) == NULL;
	} while (latch_seq_read_retry(&root->seq, start));
	return empty;
}

#ifdef __cplusplus
}
#endif

#endif /* LATCH_TREE_H */
