/* SPDX-License-Identifier: MIT */
/*
 * A program that uses liblatch the way an application does: it includes
 * every public header, uses the tree and the counter, and checks the
 * answers.  Written in the common subset of C11 and C++17 (consumer.cpp
 * includes it, after the check of the C++ wrappers that main() calls
 * there).  With the argument "shared" or "static" it also checks where
 * latch_tree_insert() was linked from: liblatch.so, or the program
 * itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* dladdr() */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <latch/atomic.h>
#include <latch/rbtree.h>
#include <latch/seq.h>
#include <latch/tree.h>
#include <latch/visibility.h>

struct item {
	long key;
	struct latch_tree_node node;
};

static bool item_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return latch_tree_entry_const(a, struct item, node)->key <
	       latch_tree_entry_const(b, struct item, node)->key;
}

static int item_comp(const void *key, const struct latch_tree_node *n)
{
	long k = *(const long *)key, nk = latch_tree_entry_const(n, struct item, node)->key;

	return (k > nk) - (k < nk);
}

static const struct latch_tree_ops item_ops = { item_less, item_comp };

/* The file the code of latch_tree_insert() was loaded from. */
static const char *insert_origin(void)
{
	void (*fn)(struct latch_tree_root *, struct latch_tree_node *,
	           const struct latch_tree_ops *) = latch_tree_insert;
	void *addr;
	Dl_info info;

	memcpy(&addr, &fn, sizeof(addr)); /* ISO C has no function-to-object cast */
	return dladdr(addr, &info) && info.dli_fname ? info.dli_fname : "";
}

int main(int argc, char **argv)
{
	static struct latch_tree_root tree = LATCH_TREE_ROOT_INIT;
	static struct item items[64];
	struct latch_seq seq = LATCH_SEQ_INIT;
	long i, key;
	unsigned start;

	for (i = 0; i < 64; i++) {
		items[i].key = i * 3;
		latch_tree_insert(&tree, &items[i].node, &item_ops);
	}
	for (key = 0; key < 64 * 3; key++) {
		struct latch_tree_node *n = latch_tree_find(&tree, &key, &item_ops);
		struct latch_tree_node *want = key % 3 ? NULL : &items[key / 3].node;

		if (n != want) {
			fprintf(stderr, "consumer: wrong answer for key %ld\n", key);
			return 1;
		}
	}
	for (i = 0; i < 64; i++)
		latch_tree_erase(&tree, &items[i].node, &item_ops);
	if (!latch_tree_empty(&tree) || latch_rb_check(&tree.tree[0], NULL) != 0) {
		fprintf(stderr, "consumer: the tree is not empty after erasing everything\n");
		return 1;
	}

	if (latch_seq_write_begin(&seq) != 1 || latch_seq_write_flip(&seq) != 0) {
		fprintf(stderr, "consumer: the counter names the wrong copies\n");
		return 1;
	}
	start = latch_seq_read_begin(&seq);
	if (start != 1 || latch_seq_read_retry(&seq, start)) {
		fprintf(stderr, "consumer: the counter is %u after one update\n", start);
		return 1;
	}

#ifdef __cplusplus
	if (cxx_wrappers() != 0) /* consumer.cpp */
		return 1;
#endif

	if (argc > 1) {
		const char *origin = insert_origin();
		bool from_library = strstr(origin, "liblatch.so") != NULL;

		if (from_library != (strcmp(argv[1], "shared") == 0)) {
			fprintf(stderr,
			        "consumer: expected %s linking, latch_tree_insert is in '%s'\n",
			        argv[1], origin);
			return 1;
		}
		printf("consumer: %s linking ok (%s)\n", argv[1], origin);
	}
	return 0;
}
