/* SPDX-License-Identifier: MIT */
/*
 * The state shared by the tree-shaped structures under test (the latch
 * tree, its mutants, the seqlock peer): a root and one element per key.
 */
#ifndef LATCH_PROOF_SUT_TREE_H
#define LATCH_PROOF_SUT_TREE_H

#include "elem.h"
#include "seqlock-tree.h"
#include "sut.h"

struct sut_tree {
	union {
		struct latch_tree_root latch; /* the latch tree and its mutants */
		struct seqlock_tree seqlock;  /* the seqlock peer */
	} u;
	long keys;
	struct test_elem pool[]; /* pool[k] holds key k */
};

/* The table of a latched tree whose state is a struct sut_tree. */
#define SUT_LATCHED_TREE(name_, insert_, erase_, find_, attempt_, retry_)                          \
	{                                                                                          \
		.name = (name_), .size = sut_tree_size, .init = sut_tree_init,                     \
		.insert = (insert_), .erase = (erase_), .find = (find_),                           \
		.read_begin = sut_latch_read_begin, .read_attempt = (attempt_),                    \
		.read_retry = (retry_), .copies = 2, .descend = sut_tree_descend,                  \
	}

size_t sut_tree_size(long keys);
void sut_tree_init(void *s, long keys);

/* The element for @key, or NULL when @key is outside the pool. */
struct test_elem *sut_tree_elem(void *s, long key);

/* The key of @n, or SUT_ABSENT for NULL. */
long sut_tree_key_of(const struct latch_tree_node *n);

/* One descent of copy @idx, as latch_tree_find() makes it. */
long sut_tree_attempt(const void *s, unsigned idx, long key);

/* The latch tree's writer (latch_tree_insert() / latch_tree_erase()) and its one read attempt. */
void sut_latch_insert(void *s, long key);
void sut_latch_erase(void *s, long key);
long sut_latch_attempt(const void *s, unsigned start, long key);

/* latch_seq_read_begin() / latch_seq_read_retry() on the latch tree's counter. */
unsigned sut_latch_read_begin(const void *s);
bool sut_latch_read_retry(const void *s, unsigned start);

/* A raw descent of copy @idx, bounded by LATCH_RB_MAX_DEPTH; *steps counts links followed. */
long sut_tree_descend(const void *s, unsigned idx, long key, unsigned *steps);

#endif /* LATCH_PROOF_SUT_TREE_H */
