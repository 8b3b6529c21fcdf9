/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the input is a sequence of operations on a latched
 * tree of POOL elements over KEYS keys (so keys repeat).  Each byte is one
 * operation, its top two bits the kind, its low six the operand:
 *
 *	00, 01  toggle element e: insert it if out of the tree, else erase it
 *	10      latch_tree_find() of key k (keys KEYS.. are never inserted)
 *	11      one read attempt (begin / descent / retry) of key k: with no
 *	        writer running it must not be discarded
 *
 * After every operation a reference model (how many elements hold each
 * key) must agree with the lookups, and both copies must be valid
 * red-black trees holding the same elements in key order.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tree-invariants.h"

#define POOL 64
#define KEYS 24

static struct test_elem pool[POOL];
static bool linked[POOL];
static long key_count[KEYS];

static void check_find(const struct latch_tree_root *root, long key, struct test_elem *e)
{
	long expected = key < KEYS ? key_count[key] : 0;

	CHECK((e != NULL) == (expected > 0), "find(%ld): %s, but %ld elements hold it", key,
	      e ? "found" : "not found", expected);
	if (e)
		CHECK(e->key == key && linked[e - pool], "find(%ld) returned a wrong element", key);
	(void)root;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct latch_tree_root root = LATCH_TREE_ROOT_INIT;
	long nlinked = 0;

	memset(linked, 0, sizeof(linked));
	memset(key_count, 0, sizeof(key_count));
	for (long i = 0; i < POOL; i++)
		pool[i].key = i % KEYS;

	for (size_t i = 0; i < size; i++) {
		unsigned kind = data[i] >> 6, operand = data[i] & 63u;
		long key = (long)(operand % (KEYS + 8));

		if (kind < 2) {
			struct test_elem *e = &pool[operand];

			if (linked[operand]) {
				latch_tree_erase(&root, &e->node, &test_elem_ops);
				key_count[e->key]--;
				nlinked--;
			} else {
				latch_tree_insert(&root, &e->node, &test_elem_ops);
				key_count[e->key]++;
				nlinked++;
			}
			linked[operand] = !linked[operand];
			key = e->key;
			check_tree_invariants(&root, nlinked);
			check_find(&root, key, test_find(&root, key));
		} else if (kind == 2) {
			check_find(&root, key, test_find(&root, key));
		} else {
			unsigned start = latch_seq_read_begin(&root.seq);
			struct latch_tree_node *n =
			    latch_tree_find_in_copy_(&root, start & 1u, &key, &test_elem_ops);

			CHECK(!latch_seq_read_retry(&root.seq, start),
			      "a read attempt was discarded with no writer running");
			check_find(&root, key, test_elem_of(n));
		}
	}
	/* Empty the tree again, checking as it shrinks. */
	for (long i = 0; i < POOL; i++)
		if (linked[i]) {
			latch_tree_erase(&root, &pool[i].node, &test_elem_ops);
			key_count[pool[i].key]--;
			linked[i] = false;
			check_tree_invariants(&root, --nlinked);
		}
	return 0;
}
