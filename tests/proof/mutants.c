/* SPDX-License-Identifier: MIT */
/*
 * Deliberately broken latch trees, each missing one piece of the
 * technique, built here from the public latch_seq / latch_rb primitives
 * (the library has no hooks for them).  The proof harnesses must catch
 * every one of them; a harness that passes a mutant proves nothing.
 *
 *   wrong-copy  readers search copy !(count & 1): the copy being changed.
 *   skip-retry  readers never discard an attempt that overlapped a flip.
 *   flip-once   the writer flips the counter once per update instead of
 *               once before each copy, so one copy is changed while
 *               readers are on it.
 */
#include "sut-tree.h"

/* wrong-copy */

static long wrong_copy_attempt(const void *s, unsigned start, long key)
{
	return sut_tree_attempt(s, (start & 1u) ^ 1u, key); /* the bug */
}

static long wrong_copy_find(const void *s, long key)
{
	return sut_find_by_attempts(&sut_mutant_wrong_copy, s, key);
}

const struct sut_ops sut_mutant_wrong_copy =
    SUT_LATCHED_TREE("mutant-wrong-copy", sut_latch_insert, sut_latch_erase, wrong_copy_find,
                     wrong_copy_attempt, sut_latch_read_retry);

/* skip-retry */

static bool never_retry(const void *s, unsigned start)
{
	(void)s;
	(void)start;
	return false; /* the bug */
}

static long skip_retry_find(const void *s, long key)
{
	return sut_find_by_attempts(&sut_mutant_skip_retry, s, key);
}

const struct sut_ops sut_mutant_skip_retry =
    SUT_LATCHED_TREE("mutant-skip-retry", sut_latch_insert, sut_latch_erase, skip_retry_find,
                     sut_latch_attempt, never_retry);

/* flip-once: one flip per update, then both copies are changed. */

static void flip_once_insert(void *s, long key)
{
	struct sut_tree *t = s;
	struct test_elem *e = sut_tree_elem(s, key);

	latch_seq_flip_(&t->u.latch.seq);
	latch_tree_insert_copy_(&t->u.latch, &e->node, 0, &test_elem_ops);
	latch_tree_insert_copy_(&t->u.latch, &e->node, 1, &test_elem_ops); /* the bug */
}

static void flip_once_erase(void *s, long key)
{
	struct sut_tree *t = s;
	struct test_elem *e = sut_tree_elem(s, key);

	latch_seq_flip_(&t->u.latch.seq);
	latch_rb_erase(&e->node.node[0], &t->u.latch.tree[0]);
	latch_rb_erase(&e->node.node[1], &t->u.latch.tree[1]); /* the bug */
}

static long flip_once_find(const void *s, long key)
{
	return sut_find_by_attempts(&sut_mutant_flip_once, s, key);
}

const struct sut_ops sut_mutant_flip_once =
    SUT_LATCHED_TREE("mutant-flip-once", flip_once_insert, flip_once_erase, flip_once_find,
                     sut_latch_attempt, sut_latch_read_retry);
