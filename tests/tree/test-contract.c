/* SPDX-License-Identifier: MIT */
/*
 * Contract violations a debug build detects: inserting an element that is
 * already in the tree, erasing one that is not.  Each must stop the
 * program with a message naming the call, before the tree is touched.
 * And the internal consistency check made while an update is applied
 * (the two copies keep the same shape), provoked by changing a link of
 * the copy an update replays onto by hand: its message too names the call
 * the user made.
 * Linked against latch_checked (the library with debug checks on,
 * whatever the build type).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

#include <latch/tree.h>

#include "child.h"
#include "tree-invariants.h"

enum violation { INSERT_TWICE, ERASE_ABSENT, ERASE_TWICE, SHAPE_TREE_INSERT };

/*
 * Give the copy the next update replays onto (the one readers are on) a
 * link the other copy lacks: a right child of the element's node there.
 * The stray child is a whole element: that copy may be the one the
 * debug checks search before the update (copy 0), and a search that
 * reaches the stray node reads the key of the element around it.
 */
static void break_replayed_copy(const struct latch_seq *seq, struct latch_tree_node *elem,
                                struct latch_tree_node *stray)
{
	unsigned idx = latch_seq_read_begin(seq) & 1u;

	elem->node[idx].child[LATCH_RB_RIGHT] = &stray->node[idx];
}

static struct latch_tree_root root = LATCH_TREE_ROOT_INIT;
static struct test_elem elems[8];

static void commit_violation(int v)
{
	struct test_elem stranger = { 3, { { { { NULL, NULL }, 0 }, { { NULL, NULL }, 0 } } } };

	switch ((enum violation)v) {
	case INSERT_TWICE:
		latch_tree_insert(&root, &elems[3].node, &test_elem_ops);
		break;
	case ERASE_ABSENT:
		/* Same key as a linked element, but not itself linked. */
		latch_tree_erase(&root, &stranger.node, &test_elem_ops);
		break;
	case ERASE_TWICE:
		latch_tree_erase(&root, &elems[5].node, &test_elem_ops);
		latch_tree_erase(&root, &elems[5].node, &test_elem_ops);
		break;
	case SHAPE_TREE_INSERT: { /* key 4 goes right of the last element, key 3 */
		static struct test_elem above = { .key = 4 };
		/* Key 5: a search for key 4 that reaches it turns left, to nothing. */
		static struct test_elem stray = { .key = 5 };

		break_replayed_copy(&root.seq, &elems[7].node, &stray.node);
		latch_tree_insert(&root, &above.node, &test_elem_ops);
		break;
	}
	}
}

/* Run violation @v in a child; it must abort with @call in its message. */
static void expect_abort(enum violation v, const char *call)
{
	char msg[512];
	int status = test_run_child(commit_violation, (int)v, msg, sizeof(msg));

	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
	      "violation %d did not abort (status %#x); it said: \"%s\"", (int)v, status, msg);
	CHECK(strstr(msg, call) && strstr(msg, "contract violation"),
	      "message for violation %d does not name %s: \"%s\"", (int)v, call, msg);
	printf("violation %d stopped with: %s", (int)v, msg);
}

int main(void)
{
	for (long i = 0; i < 8; i++) {
		elems[i].key = i / 2; /* duplicates: keys 0 0 1 1 2 2 3 3 */
		latch_tree_insert(&root, &elems[i].node, &test_elem_ops);
	}
	expect_abort(INSERT_TWICE, "latch_tree_insert");
	expect_abort(ERASE_ABSENT, "latch_tree_erase");
	expect_abort(ERASE_TWICE, "latch_tree_erase");
	expect_abort(SHAPE_TREE_INSERT, "latch_tree_insert");
	/* The violations ran in children; here the tree is as it was. */
	check_tree_invariants(&root, 8);
	puts("test-contract: every violation was stopped with a message naming the call");
	return 0;
}
