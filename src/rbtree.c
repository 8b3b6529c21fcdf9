/* SPDX-License-Identifier: MIT */
/*
 * Red-black tree rebalancing whose child-link stores tolerate lockless
 * readers (see latch/rbtree.h).
 *
 * Two rules make a lockless descent safe on the copy being modified:
 *
 *  1. Every child-link store is a release store (set_child()).  A reader
 *     that loads a link with acquire therefore sees everything the writer
 *     did before storing it: the node's own links and the caller's key.
 *     On x86 a relaxed store compiles to the same instruction, but that
 *     is a fact about the hardware only: in C11 a relaxed store gives the
 *     reader no happens-before edge to the node's initialisation, so its
 *     loads of the key are a data race on every CPU, and the compiler may
 *     move the initialisation after the store (arm64 hardware may too).
 *     GenMC finds that race (tests/model, mutants relaxed-publish and
 *     relaxed-rotate).
 *  2. Every restructuring step first detaches, then re-attaches:
 *     a rotation makes x let go of y before y takes x, and only then
 *     publishes y in x's place.  At no instruction do the links form a
 *     cycle, so a reader of the writer's own program order always reaches
 *     a leaf; with rule 1, a concurrent reader only ever sees the links
 *     at the same or a later instruction at each step, so it never goes
 *     round a cycle either (latch/rbtree.h).
 *
 * Directions are indices (LATCH_RB_LEFT = 0, LATCH_RB_RIGHT = 1), so each
 * mirrored pair of cases is written once with `side` and `!side`.
 */
#include <latch/rbtree.h>

#include <stdbool.h>

enum { RED = 0, BLACK = 1 };

static struct latch_rb_node *parent_of(const struct latch_rb_node *n)
{
	return (struct latch_rb_node *)(n->parent_colour & ~(uintptr_t)1);
}

static bool is_red(const struct latch_rb_node *n)
{
	return n && (n->parent_colour & 1) == RED;
}

static int colour_of(const struct latch_rb_node *n)
{
	return (int)(n->parent_colour & 1);
}

static void set_colour(struct latch_rb_node *n, int colour)
{
	n->parent_colour = (n->parent_colour & ~(uintptr_t)1) | (uintptr_t)colour;
}

static void set_parent(struct latch_rb_node *n, struct latch_rb_node *parent)
{
	n->parent_colour = (uintptr_t)parent | (n->parent_colour & 1);
}

/* Which child of @parent is @n. */
static int side_of(const struct latch_rb_node *n, const struct latch_rb_node *parent)
{
	return parent->child[LATCH_RB_RIGHT] == n ? LATCH_RB_RIGHT : LATCH_RB_LEFT;
}

/*
 * Store a child link.  The writer reads its own links with plain loads:
 * only it stores them, so those loads race with nothing.
 */
static void set_child(struct latch_rb_node *n, int dir, struct latch_rb_node *child)
{
	/* Release: see rule 1 in the file comment. */
	LATCH_STORE_RELEASE(&n->child[dir], child);
}

/* Make whatever pointed at @old (its parent's link, or the root) point at @new_node. */
static void replace_child(struct latch_rb_node *parent, struct latch_rb_node *old,
                          struct latch_rb_node *new_node, struct latch_rb_root *root)
{
	if (parent)
		set_child(parent, side_of(old, parent), new_node);
	else
		/* Release: as in set_child(). */
		LATCH_STORE_RELEASE(&root->node, new_node);
}

/*
 * Rotate @x down to its @d side; its child y on the other side comes up.
 * Shown for d = LEFT (mirror it for RIGHT):
 *
 *	    x                 y
 *	   / \               / \
 *	  a   y     -->     x   c
 *	     / \           / \
 *	    b   c         a   b
 *
 * Store order (rule 2): x lets go of y (x->right = b), y takes x
 * (y->left = x), then y is published where x was.  Readers that were
 * inside y's subtree keep walking; readers above may miss it briefly.
 * Colours are the caller's.
 */
static void rotate(struct latch_rb_node *x, int d, struct latch_rb_root *root)
{
	struct latch_rb_node *xparent = parent_of(x);
	struct latch_rb_node *y = x->child[!d];
	struct latch_rb_node *b = y->child[d];

	set_child(x, !d, b);
	set_child(y, d, x);
	replace_child(xparent, x, y, root);
	if (b)
		set_parent(b, x);
	set_parent(y, xparent);
	set_parent(x, y);
}

/* The extreme node of the subtree at @n in direction @dir. */
static struct latch_rb_node *extreme(struct latch_rb_node *n, int dir)
{
	while (n && n->child[dir])
		n = n->child[dir];
	return n;
}

/*
 * Cases are drawn with the parent P on its grandparent G's left (side =
 * LEFT); the code handles the mirror image with the same lines.  Lower
 * case is black, upper case red, N the node being fixed.
 */
void latch_rb_insert_colour(struct latch_rb_node *node, struct latch_rb_root *root)
{
	for (;;) {
		struct latch_rb_node *parent = parent_of(node);
		struct latch_rb_node *gparent, *uncle;
		int side;

		if (!parent) {
			/* N is the root: paint it black, which adds one black to every path. */
			set_colour(node, BLACK);
			return;
		}
		if (!is_red(parent))
			return; /* a red child of a black parent breaks nothing */

		gparent = parent_of(parent); /* a red parent is never the root */
		side = side_of(parent, gparent);
		uncle = gparent->child[!side];

		if (is_red(uncle)) {
			/*
			 * Case 1 - red uncle: push G's black down one level.
			 *
			 *	      g               G
			 *	     / \             / \
			 *	    P   U    -->    p   u
			 *	    |               |
			 *	    N               N
			 *
			 * G may now have a red parent: continue from G.
			 */
			set_colour(parent, BLACK);
			set_colour(uncle, BLACK);
			set_colour(gparent, RED);
			node = gparent;
			continue;
		}

		if (node == parent->child[!side]) {
			/*
			 * Case 2 - black uncle, N is an inner grandchild:
			 * rotate P down so that N becomes the outer one.
			 *
			 *	     g               g
			 *	    / \             / \
			 *	   P   u    -->    N   u
			 *	    \             /
			 *	     N           P
			 *
			 * P (now N's child) plays N in case 3.
			 */
			rotate(parent, side, root);
			parent = node;
		}

		/*
		 * Case 3 - black uncle, outer grandchild N: rotate G down
		 * and swap colours, so P is the black top of the subtree.
		 *
		 *	       g              p
		 *	      / \            / \
		 *	     P   u   -->    N   G
		 *	    /                    \
		 *	   N                      u
		 */
		rotate(gparent, !side, root);
		set_colour(parent, BLACK);
		set_colour(gparent, RED);
		return;
	}
}

/*
 * Restore the black height after a black node was removed from
 * @parent's @side: that subtree (root N, black or empty) has one black
 * fewer than the sibling subtree S.  Drawn for side = LEFT; upper case
 * red, lower case black, x either colour.
 */
static void erase_colour(struct latch_rb_node *parent, int side, struct latch_rb_root *root)
{
	for (;;) {
		/* S is not empty: its side holds at least one more black. */
		struct latch_rb_node *sibling = parent->child[!side];
		struct latch_rb_node *near, *far, *short_node;

		if (is_red(sibling)) {
			/*
			 * Case 1 - red sibling: rotate it above the parent, so
			 * N's new sibling (sl) is black.
			 *
			 *	     p                 s
			 *	    / \               / \
			 *	   n   S     -->     P   sr
			 *	      / \           / \
			 *	     sl  sr        n   sl
			 */
			rotate(parent, side, root);
			set_colour(sibling, BLACK);
			set_colour(parent, RED);
			sibling = parent->child[!side];
		}

		near = sibling->child[side];
		far = sibling->child[!side];
		if (!is_red(near) && !is_red(far)) {
			/*
			 * Case 2 - black sibling, black nephews: paint S red,
			 * which removes a black from S's side too.
			 *
			 *	     x                x
			 *	    / \              / \
			 *	   n   s     -->    n   S
			 *	      / \              / \
			 *	     sl  sr           sl  sr
			 *
			 * A red parent absorbs the deficit by turning black;
			 * otherwise the parent's whole subtree is now short.
			 */
			set_colour(sibling, RED);
			if (is_red(parent)) {
				set_colour(parent, BLACK);
				return;
			}
			short_node = parent;
			parent = parent_of(short_node);
			if (!parent)
				return; /* the root: every path lost one black */
			side = side_of(short_node, parent);
			continue;
		}

		if (!is_red(far)) {
			/*
			 * Case 3 - black sibling, red near nephew, black far
			 * nephew: rotate S down so the red nephew is on the far
			 * side.
			 *
			 *	     x                x
			 *	    / \              / \
			 *	   n   s     -->    n   sl
			 *	      / \                \
			 *	     SL  sr               S
			 *	                           \
			 *	                            sr
			 */
			rotate(sibling, !side, root);
			set_colour(near, BLACK);
			set_colour(sibling, RED);
			far = sibling;
			sibling = near;
		}

		/*
		 * Case 4 - black sibling, red far nephew: rotate the parent
		 * down to N's side; S takes the parent's colour, the parent
		 * and SR turn black, which adds one black to N's side only.
		 *
		 *	     x                  x
		 *	    / \                / \
		 *	   n   s      -->     p   sr
		 *	      / \            / \
		 *	     y   SR         n   y
		 */
		rotate(parent, side, root);
		set_colour(sibling, colour_of(parent));
		set_colour(parent, BLACK);
		set_colour(far, BLACK);
		return;
	}
}

/*
 * Erase, in three shapes (upper case red, lower case black, x either):
 *
 * (a) at most one child: the child (if any) takes N's place.  A single
 *     child is always a red leaf under a black N; it turns black.
 *
 *	     p          p
 *	     |    -->   |
 *	     n          c
 *	     |
 *	     C
 *
 *     A black N without children leaves a path short: fix at p.
 *
 * (b) two children, the successor is N's right child s: s takes N's
 *     place and colour; s's own colour is lost from its right side.
 *
 *	      n              s
 *	     / \            / \
 *	    a   s    -->   a   z
 *	         \
 *	          z
 *
 * (c) two children, the successor s is deeper (leftmost under N's
 *     right child r): s leaves its place to its right child z, then
 *     takes N's place and colour.
 *
 *	      n              s
 *	     / \            / \
 *	    a   r    -->   a   r
 *	       /              /
 *	      q              q
 *	     /              /
 *	    s              z
 *	     \
 *	      z
 *
 * Store order: s is detached first (q->left = z), then takes N's right
 * and left subtrees, and only then is published in N's place, so no
 * instruction leaves a cycle; N's own links are untouched.
 */
void latch_rb_erase(struct latch_rb_node *node, struct latch_rb_root *root)
{
	struct latch_rb_node *left = node->child[LATCH_RB_LEFT];
	struct latch_rb_node *right = node->child[LATCH_RB_RIGHT];
	struct latch_rb_node *parent = parent_of(node);
	struct latch_rb_node *short_parent = NULL; /* where a black went missing */
	struct latch_rb_node *lifted;              /* the node that moved up, if any */
	int short_side = LATCH_RB_LEFT;
	bool lost_black;

	if (!left || !right) {
		/* (a) */
		lifted = left ? left : right;
		if (parent)
			short_side = side_of(node, parent);
		replace_child(parent, node, lifted, root);
		lost_black = !is_red(node);
		short_parent = parent;
		if (lifted)
			set_parent(lifted, parent);
	} else {
		/* (b) or (c) */
		struct latch_rb_node *succ = extreme(right, LATCH_RB_LEFT);

		lifted = succ->child[LATCH_RB_RIGHT];
		if (succ == right) {
			short_parent = succ;
			short_side = LATCH_RB_RIGHT;
		} else {
			short_parent = parent_of(succ);
			short_side = LATCH_RB_LEFT;
			set_child(short_parent, LATCH_RB_LEFT, lifted);
			set_child(succ, LATCH_RB_RIGHT, right);
			set_parent(right, succ);
		}
		set_child(succ, LATCH_RB_LEFT, left);
		set_parent(left, succ);
		lost_black = !is_red(succ);
		replace_child(parent, node, succ, root);
		succ->parent_colour = node->parent_colour; /* N's parent and colour */
		if (lifted)
			set_parent(lifted, short_parent);
	}

	if (!lost_black)
		return;
	if (lifted) {
		/* The node that moved up is a red leaf: black restores the count. */
		set_colour(lifted, BLACK);
		return;
	}
	if (short_parent)
		erase_colour(short_parent, short_side, root);
}

/* The in-order neighbour of @n in direction @dir. */
static struct latch_rb_node *step(const struct latch_rb_node *n, int dir)
{
	struct latch_rb_node *parent;

	if (n->child[dir])
		return extreme(n->child[dir], !dir);
	while ((parent = parent_of(n)) && n == parent->child[dir])
		n = parent;
	return parent;
}

struct latch_rb_node *latch_rb_first(const struct latch_rb_root *root)
{
	return extreme(root->node, LATCH_RB_LEFT);
}

struct latch_rb_node *latch_rb_last(const struct latch_rb_root *root)
{
	return extreme(root->node, LATCH_RB_RIGHT);
}

struct latch_rb_node *latch_rb_next(const struct latch_rb_node *node)
{
	return step(node, LATCH_RB_RIGHT);
}

struct latch_rb_node *latch_rb_prev(const struct latch_rb_node *node)
{
	return step(node, LATCH_RB_LEFT);
}

/* Black height of the subtree at @n, or -1 with *why set. */
static long check_subtree(const struct latch_rb_node *n, const struct latch_rb_node *parent,
                          unsigned depth, long *count, const char **why)
{
	long left, right;

	if (!n)
		return 1;
	if (depth >= LATCH_RB_MAX_DEPTH) {
		*why = "deeper than LATCH_RB_MAX_DEPTH (a cycle?)";
		return -1;
	}
	if (parent_of(n) != parent) {
		*why = "a node's parent pointer does not name its parent";
		return -1;
	}
	if (is_red(n) && (is_red(n->child[0]) || is_red(n->child[1]))) {
		*why = "a red node has a red child";
		return -1;
	}
	++*count;
	left = check_subtree(n->child[LATCH_RB_LEFT], n, depth + 1, count, why);
	if (left < 0)
		return -1;
	right = check_subtree(n->child[LATCH_RB_RIGHT], n, depth + 1, count, why);
	if (right < 0)
		return -1;
	if (left != right) {
		*why = "two paths hold different numbers of black nodes";
		return -1;
	}
	return left + !is_red(n);
}

long latch_rb_check(const struct latch_rb_root *root, const char **why)
{
	const char *unused;
	long count = 0;

	if (!why)
		why = &unused;
	if (is_red(root->node)) {
		*why = "the root is red";
		return -1;
	}
	if (check_subtree(root->node, NULL, 0, &count, why) < 0)
		return -1;
	return count;
}
