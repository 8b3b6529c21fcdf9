/* SPDX-License-Identifier: MIT */
/*
 * Misuse of the void writer calls, against the library built with its
 * debug contract checks: each misuse must stop the program with a message
 * naming the call, before the structure is touched.  Each case runs in a
 * child process; its SIGABRT handler checks that the structure is exactly
 * as it was (both copies, every lookup) and reports with its exit status.
 */
#include <signal.h>
#include <string.h>

#include <latch/range.h>

#include "../child.h"
#include "../tree-invariants.h"

#define UNCHANGED 3 /* exit status: aborted, structure intact */

static struct latch_tree_root tree = LATCH_TREE_ROOT_INIT;
static struct test_elem elems[4] = { { .key = 1 }, { .key = 2 }, { .key = 2 }, { .key = 3 } };
static struct latch_range_map map = LATCH_RANGE_MAP_INIT;
static struct latch_range ranges[2] = { { .start = 10, .end = 20 }, { .start = 30, .end = 40 } };

/* The state every case starts from: elems 0 and 1 in the tree, range 0 in the map. */
static void check_initial_state(void)
{
	check_tree_invariants(&tree, 2);
	CHECK(test_find(&tree, 1) == &elems[0] && test_find(&tree, 2) == &elems[1] &&
	          test_find(&tree, 3) == NULL,
	      "tree lookups");
	CHECK(latch_range_find(&map, 15) == &ranges[0] && latch_range_find(&map, 35) == NULL &&
	          map.low[0] == 10 && map.high[1] == 20,
	      "map lookups and bounds");
}

static void on_abort(int sig)
{
	(void)sig;
	check_initial_state(); /* exits 1 with a message if anything changed */
	_exit(UNCHANGED);
}

/* In the child: commit misuse @which, with the abort handler checking the aftermath. */
static void commit_misuse(int which)
{
	struct latch_tree_change twice[2] = { { LATCH_TREE_INSERT, &elems[3].node },
		                              { LATCH_TREE_INSERT, &elems[3].node } };
	struct latch_tree_change absent[2] = { { LATCH_TREE_INSERT, &elems[3].node },
		                               { LATCH_TREE_ERASE, &elems[2].node } };

	signal(SIGABRT, on_abort);
	switch (which) {
	case 0:
		latch_tree_insert(&tree, &elems[0].node, &test_elem_ops);
		break;
	case 1:
		latch_tree_erase(&tree, &elems[2].node, &test_elem_ops);
		break;
	case 2:
		latch_tree_commit(&tree, twice, 2, &test_elem_ops);
		break;
	case 3:
		latch_tree_commit(&tree, absent, 2, &test_elem_ops);
		break;
	case 4: /* keys 1 and 3 differ */
		latch_tree_replace(&tree, &elems[0].node, &elems[3].node, &test_elem_ops);
		break;
	case 5: /* elems[1] is in the tree already */
		latch_tree_replace(&tree, &elems[2].node, &elems[1].node, &test_elem_ops);
		break;
	default:
		latch_range_erase(&map, &ranges[1]);
		break;
	}
}

/* Misuse @which of @call must abort, naming @call, with everything intact. */
static void misuse(const char *call, int which)
{
	char msg[512];
	int status = test_run_child(commit_misuse, which, msg, sizeof(msg));

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == UNCHANGED,
	      "%s misuse %d: expected an abort with the structure unchanged (status %#x): %s", call,
	      which, status, msg);
	CHECK(strstr(msg, call) && strstr(msg, "contract violation"),
	      "%s misuse %d: the message does not name the call: %s", call, which, msg);
}

int main(void)
{
	latch_tree_insert(&tree, &elems[0].node, &test_elem_ops);
	latch_tree_insert(&tree, &elems[1].node, &test_elem_ops);
	CHECK(latch_range_insert(&map, &ranges[0]) == 0, "range insert");
	check_initial_state();

	misuse("latch_tree_insert", 0);
	misuse("latch_tree_erase", 1);
	misuse("latch_tree_commit", 2);
	misuse("latch_tree_commit", 3);
	misuse("latch_tree_replace", 4);
	misuse("latch_tree_replace", 5);
	misuse("latch_range_erase", 6);
	puts("test-api-contracts: 7 misuses stopped with the structure unchanged");
	return 0;
}
