/* SPDX-License-Identifier: MIT */
/*
 * latch/rbtree.h - an intrusive red-black tree whose child links tolerate
 * lockless descent.
 *
 * This is the tree underneath the latched tree (latch/tree.h).  It is
 * public for advanced users who build their own latched structures.
 *
 * What makes it different from a textbook red-black tree:
 *
 *  - Every store to a child link (linking, rotations, erase) is a single
 *    atomic release store, so a lockless reader never sees a torn pointer,
 *    and a reader that loads a link sees the node it points to fully
 *    initialised.
 *  - Rebalancing orders its stores so that, in program order, the links
 *    never form a cycle: a reader that interrupted the writer (a signal
 *    handler on its thread) follows a finite path.  A reader running at
 *    the same time as the writer loads the links of a copy being changed
 *    at different moments: it can take a link from before a rotation and
 *    the next from after it, and so miss a node or walk a longer path
 *    than the tree ever had.  It cannot go round a cycle: each link it
 *    loads with acquire was stored with release, so every later load sees
 *    at least the writer's stores up to that one, and the walk only ever
 *    moves forward through the writer's program order, at no point of
 *    which the links form a cycle; coming back to a node needs a further
 *    store of the writer (tests/model checks these orderings under the
 *    C11 model with GenMC).  Every lockless descent is still bounded by
 *    LATCH_RB_MAX_DEPTH, a safety net: for a reader that a writer which
 *    keeps changing its copy would otherwise keep walking (the latch
 *    discards that attempt anyway), and for links broken by misuse
 *    (unserialized writers, links changed outside the library).
 *  - Readers only follow child links (latch_rb_root_node(),
 *    latch_rb_child()); parent pointers and colours are the writer's.
 *
 * A lockless reader of a tree that is being modified may miss elements
 * or find them in the wrong place; it never follows a pointer the writer
 * did not store.  That is what the latch needs: it discards such reads.
 *
 * Synchronization: all functions except latch_rb_root_node() and
 * latch_rb_child() are writer-side and must be serialized by the caller.
 * No function allocates.
 *
 * The reference for each call (cost, contexts, what to serialize, errors)
 * is its man page: latch_rb(3) and the pages it lists.
 */
#ifndef LATCH_RBTREE_H
#define LATCH_RBTREE_H

#include <stddef.h>
#include <stdint.h>

#include <latch/atomic.h>
#include <latch/visibility.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Index of the left child in latch_rb_node.child. */
#define LATCH_RB_LEFT  0
/** Index of the right child in latch_rb_node.child. */
#define LATCH_RB_RIGHT 1

/**
 * Bound on the depth of any red-black tree that fits in memory: a tree of
 * n nodes is at most 2*log2(n+1) deep, so 128 covers every n < 2^64.
 * Lockless descents stop after this many steps.
 */
#define LATCH_RB_MAX_DEPTH 128

/** A node embedded in the user's element.  Contents are private. */
struct latch_rb_node {
	/* [LATCH_RB_LEFT], [LATCH_RB_RIGHT]; stored atomically, read locklessly */
	struct latch_rb_node *child[2];
	/* parent pointer | colour bit (1 = black); the writer's alone */
	uintptr_t parent_colour;
};

/** The root of a tree; all-zero (LATCH_RB_ROOT_INIT) is an empty tree. */
struct latch_rb_root {
	struct latch_rb_node *node; /* stored atomically, read locklessly */
};

/** Static initialiser for an empty struct latch_rb_root. */
#define LATCH_RB_ROOT_INIT                                                                         \
	{                                                                                          \
		NULL                                                                               \
	}

/**
 * latch_rb_root_node() - the root node of @root, or NULL if empty.
 * Cost O(1).  Any context; safe while the writer modifies the tree.
 */
static inline struct latch_rb_node *latch_rb_root_node(const struct latch_rb_root *root)
{
	/* Acquire: pairs with the writer's release store of the link, so the
	 * node it points to is seen initialised. */
	return LATCH_LOAD_ACQUIRE(&root->node);
}

/**
 * latch_rb_child() - child @dir (LATCH_RB_LEFT/RIGHT) of @node, or NULL.
 * Cost O(1).  Any context; safe while the writer modifies the tree.
 */
static inline struct latch_rb_node *latch_rb_child(const struct latch_rb_node *node, int dir)
{
	/* Acquire: as in latch_rb_root_node(). */
	return LATCH_LOAD_ACQUIRE(&node->child[dir]);
}

/**
 * latch_rb_link_node() - attach @node as a red leaf at @link.
 *
 * @link is &parent->child[dir] (or &root->node when @parent is NULL) and
 * must be NULL.  The node becomes visible to lockless readers here; every
 * field of the caller's element must be initialised before this call.
 * Follow with latch_rb_insert_colour().  Cost O(1).  Writer only.
 */
static inline void latch_rb_link_node(struct latch_rb_node *node, struct latch_rb_node *parent,
                                      struct latch_rb_node **link)
{
	node->parent_colour = (uintptr_t)parent; /* red */
	/* Relaxed: the node is unreachable until the release store below. */
	LATCH_STORE_RELAXED(&node->child[LATCH_RB_LEFT], (struct latch_rb_node *)NULL);
	LATCH_STORE_RELAXED(&node->child[LATCH_RB_RIGHT], (struct latch_rb_node *)NULL);
	/* Release: a reader that loads this link sees the node (and the
	 * caller's element) initialised. */
	LATCH_STORE_RELEASE(link, node);
}

/**
 * latch_rb_insert_colour() - rebalance after latch_rb_link_node().
 * Cost O(log n), at most two rotations.  Writer only.
 */
LATCH_API void latch_rb_insert_colour(struct latch_rb_node *node, struct latch_rb_root *root);

/**
 * latch_rb_erase() - unlink @node, which must be in @root, and rebalance.
 *
 * The node's own links are left as they were, so a lockless reader
 * standing on it can still walk on.  Its memory must stay valid until no
 * reader can hold it (the caller's grace period).
 * Cost O(log n), at most three rotations.  Writer only.
 */
LATCH_API void latch_rb_erase(struct latch_rb_node *node, struct latch_rb_root *root);

/**
 * latch_rb_first() / latch_rb_last() - the leftmost / rightmost node, or
 * NULL if the tree is empty.  Cost O(log n).  Writer only.
 */
LATCH_API struct latch_rb_node *latch_rb_first(const struct latch_rb_root *root);
LATCH_API struct latch_rb_node *latch_rb_last(const struct latch_rb_root *root);

/**
 * latch_rb_next() / latch_rb_prev() - the in-order successor /
 * predecessor of @node, or NULL.  Cost O(1) amortised, O(log n) worst.
 * Writer only (they follow parent pointers).
 */
LATCH_API struct latch_rb_node *latch_rb_next(const struct latch_rb_node *node);
LATCH_API struct latch_rb_node *latch_rb_prev(const struct latch_rb_node *node);

/**
 * latch_rb_check() - verify every red-black invariant of @root.
 *
 * Checks: the root is black and has no parent; every child's parent
 * pointer names its parent; no red node has a red child; every path from
 * the root to a leaf has the same number of black nodes; the depth is
 * within LATCH_RB_MAX_DEPTH (so there is no cycle).  Key order is the
 * caller's to check (see latch_rb_next()).
 *
 * Returns the number of nodes, or -1 with *why (if @why is not NULL) set
 * to a static description of the first violation.  Cost O(n), recursion
 * depth O(log n).  Writer only, or with the writer quiescent.
 */
LATCH_API long latch_rb_check(const struct latch_rb_root *root, const char **why);

#ifdef __cplusplus
}
#endif

#endif /* LATCH_RBTREE_H */
