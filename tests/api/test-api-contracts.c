/* SPDX-License-Identifier: MIT */
/*
 * Misuse of the writer calls.  Each misuse of a void call must stop the
 * program with a message naming the call, before the structure is
 * touched.  Each case runs in a child process; its SIGABRT handler checks
 * that the structure is exactly as it was (both copies, every lookup) and
 * reports with its exit status.  The range map's calls return errors
 * instead, with the map unchanged.
 *
 * Built twice: test-api-contracts against the library with its debug
 * checks (every case), test-api-release (LATCH_TEST_RELEASE) against the
 * library as a release build makes it, with NDEBUG, which must still stop
 * the misuses a compare detects and return the range map's errors.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <latch/range.h>

#include "child.h"
#include "tree-invariants.h"

#define UNCHANGED 3 /* exit status: aborted, structure intact */

static struct latch_tree_root tree = LATCH_TREE_ROOT_INIT;
static struct test_elem elems[4] = { { .key = 1 }, { .key = 2 }, { .key = 2 }, { .key = 3 } };
static struct latch_range_map map;

/* The state every case starts from: elems 0 and 1 in the tree, range 0 in the map. */
static void check_initial_state(void)
{
	check_tree_invariants(&tree, 2);
	CHECK(test_find(&tree, 1) == &elems[0] && test_find(&tree, 2) == &elems[1] &&
	          test_find(&tree, 3) == NULL,
	      "tree lookups");
	struct latch_range r;

	CHECK(latch_range_find(&map, 15, &r) && r.start == 10 && r.end == 20 && r.value == &map &&
	          !latch_range_find(&map, 35, NULL) && latch_range_size(&map) == 1,
	      "map lookups");
}

static void on_abort(int sig)
{
	(void)sig;
	check_initial_state(); /* exits 1 with a message if anything changed */
	_exit(UNCHANGED);
}

/* The misuses, in the order main() runs them. */
enum misuse_case {
	/* Every build stops these: a compare or two tell. */
	UNKNOWN_OP,
	NO_ELEMENT,
	INSERT_NULL,
	ERASE_NULL,
	REPLACE_UNEQUAL,
	REPLACE_BY_ITSELF,
	EVERY_BUILD_CASES,
	/* Only debug builds stop these: a search tells. */
	INSERT_PRESENT = EVERY_BUILD_CASES,
	ERASE_ABSENT,
	COMMIT_TWICE,
	COMMIT_ABSENT,
	REPLACE_BY_PRESENT,
	CASES
};

static const char *const call_of[CASES] = {
	[UNKNOWN_OP] = "latch_tree_commit",          [NO_ELEMENT] = "latch_tree_commit",
	[INSERT_NULL] = "latch_tree_insert",         [ERASE_NULL] = "latch_tree_erase",
	[REPLACE_UNEQUAL] = "latch_tree_replace",    [REPLACE_BY_ITSELF] = "latch_tree_replace",
	[INSERT_PRESENT] = "latch_tree_insert",      [ERASE_ABSENT] = "latch_tree_erase",
	[COMMIT_TWICE] = "latch_tree_commit",        [COMMIT_ABSENT] = "latch_tree_commit",
	[REPLACE_BY_PRESENT] = "latch_tree_replace",
};

/* In the child: commit misuse @which, with the abort handler checking the aftermath. */
static void commit_misuse(int which)
{
	/* Each batch starts with a valid insert, which must not be made either. */
	struct latch_tree_change twice[2] = { { LATCH_TREE_INSERT, &elems[3].node },
		                              { LATCH_TREE_INSERT, &elems[3].node } };
	struct latch_tree_change absent[2] = { { LATCH_TREE_INSERT, &elems[3].node },
		                               { LATCH_TREE_ERASE, &elems[2].node } };
	struct latch_tree_change unknown[2] = { { LATCH_TREE_INSERT, &elems[3].node },
		                                { (enum latch_tree_op)7, &elems[2].node } };
	struct latch_tree_change no_element[2] = { { LATCH_TREE_INSERT, &elems[3].node },
		                                   { LATCH_TREE_ERASE, NULL } };

	signal(SIGABRT, on_abort);
	switch ((enum misuse_case)which) {
	case UNKNOWN_OP:
		latch_tree_commit(&tree, unknown, 2, &test_elem_ops);
		break;
	case NO_ELEMENT:
		latch_tree_commit(&tree, no_element, 2, &test_elem_ops);
		break;
	case INSERT_NULL:
		latch_tree_insert(&tree, NULL, &test_elem_ops);
		break;
	case ERASE_NULL:
		latch_tree_erase(&tree, NULL, &test_elem_ops);
		break;
	case REPLACE_UNEQUAL: /* keys 1 and 3 differ */
		latch_tree_replace(&tree, &elems[0].node, &elems[3].node, &test_elem_ops);
		break;
	case REPLACE_BY_ITSELF:
		latch_tree_replace(&tree, &elems[1].node, &elems[1].node, &test_elem_ops);
		break;
	case INSERT_PRESENT:
		latch_tree_insert(&tree, &elems[0].node, &test_elem_ops);
		break;
	case ERASE_ABSENT:
		latch_tree_erase(&tree, &elems[2].node, &test_elem_ops);
		break;
	case COMMIT_TWICE:
		latch_tree_commit(&tree, twice, 2, &test_elem_ops);
		break;
	case COMMIT_ABSENT:
		latch_tree_commit(&tree, absent, 2, &test_elem_ops);
		break;
	case REPLACE_BY_PRESENT: /* elems[1] is in the tree already */
		latch_tree_replace(&tree, &elems[2].node, &elems[1].node, &test_elem_ops);
		break;
	case CASES:
		break;
	}
}

/* Misuse @which must abort, naming its call, with everything intact. */
static void misuse(int which)
{
	const char *call = call_of[which];
	char msg[512];
	int status = test_run_child(commit_misuse, which, msg, sizeof(msg));

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == UNCHANGED,
	      "%s misuse %d: expected an abort with the structure unchanged (status %#x): %s", call,
	      which, status, msg);
	CHECK(strstr(msg, call) && strstr(msg, "contract violation"),
	      "%s misuse %d: the message does not name the call: %s", call, which, msg);
}

/* The range map's writer calls report misuse and leave the map unchanged. */
static void range_errors(void)
{
	const struct latch_range_change erase_absent = { LATCH_RANGE_ERASE, { 30, 40, NULL } };
	const struct latch_range_change unknown = { (enum latch_range_op)7, { 50, 60, NULL } };
	const struct latch_range bad_load[2] = { { 1, 5, NULL }, { 4, 8, NULL } };
	struct latch_range hit;
	size_t failed = 9;

	CHECK(latch_range_erase(&map, 30) == -ENOENT, "erase of a range not in the map");
	CHECK(latch_range_erase(&map, 15) == -ENOENT, "erase by an address inside a range");
	CHECK(latch_range_commit(&map, &erase_absent, 1, &failed) == -ENOENT && failed == 0,
	      "batch erasing a stranger");
	CHECK(latch_range_commit(&map, &unknown, 1, NULL) == -EINVAL, "batch with an unknown op");
	CHECK(latch_range_insert(&map, 10, 20, NULL, &hit) == -EEXIST && hit.start == 10,
	      "insert of a range in the map");
	CHECK(latch_range_insert(&map, 20, 10, NULL, NULL) == -EINVAL, "inverted range");
	CHECK(latch_range_load_sorted(&map, bad_load, 2, &failed) == -EEXIST && failed == 1,
	      "load of overlapping ranges");
	check_initial_state();
}

int main(void)
{
#ifdef LATCH_TEST_RELEASE
	const int cases = EVERY_BUILD_CASES;
	const char *name = "test-api-release";
#else
	const int cases = CASES;
	const char *name = "test-api-contracts";
#endif

	latch_tree_insert(&tree, &elems[0].node, &test_elem_ops);
	latch_tree_insert(&tree, &elems[1].node, &test_elem_ops);
	CHECK(latch_range_map_init(&map) == 0 && latch_range_insert(&map, 10, 20, &map, NULL) == 0,
	      "range insert");
	check_initial_state();

	for (int which = 0; which < cases; which++)
		misuse(which);
	range_errors();
	printf("%s: %d misuses stopped with the structure unchanged, range errors reported\n", name,
	       cases);
	return 0;
}
