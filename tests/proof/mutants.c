/* SPDX-License-Identifier: MIT */
/*
 * Deliberately broken latch trees, each missing one piece of the
 * technique, built here from the public latch_seq / latch_rb primitives
 * (the library has no hooks for them).  The proof harnesses must catch
 * every one of them; a harness that passes a mutant proves nothing.
 *
 *   wrong-copy  readers search copy !(count & 1): the copy being changed.
 *   skip-retry  readers never discard an attempt that overlapped a flip.
 *   flip-first  the writer flips the counter before it changes either
 *               copy, then changes both, so the copy readers were just
 *               sent to is changed while they are on it.
 *   readers-copy  the writer changes the copy readers are on
 *               (count & 1) first, flips, then changes the other one,
 *               which readers are now on: every change is made under
 *               readers' feet.
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

bool sut_never_retry(const void *s, unsigned start)
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
                     sut_latch_attempt, sut_never_retry);

/*
 * The writers of flip-first and readers-copy: one update that changes
 * copy @first, flips the counter, then changes copy @first ^ 1, with
 * each copy's own descent (latch_tree_insert_copy_()).  @flip_first: flip
 * before the first change instead of after it.
 */
static void mutant_update(void *s, long key, bool insert, unsigned first, bool flip_first)
{
	struct sut_tree *t = s;
	struct test_elem *e = sut_tree_elem(s, key);

	for (unsigned i = 0; i < 2; i++) {
		unsigned idx = first ^ i;

		if (flip_first == (i == 0))
			(void)latch_seq_write_flip(&t->u.latch.seq);
		if (insert)
			latch_tree_insert_copy_(&t->u.latch, &e->node, idx, &test_elem_ops);
		else
			latch_rb_erase(&e->node.node[idx], &t->u.latch.tree[idx]);
	}
}

/* flip-first: the flip comes first, then both copies are changed. */

static void flip_first_update(void *s, long key, bool insert)
{
	const struct sut_tree *t = s;
	/* The copy readers are sent to by the flip: changed while they are on it (the bug). */
	unsigned first = latch_seq_write_begin(&t->u.latch.seq);

	mutant_update(s, key, insert, first, true);
}

static void flip_first_insert(void *s, long key)
{
	flip_first_update(s, key, true);
}

static void flip_first_erase(void *s, long key)
{
	flip_first_update(s, key, false);
}

static long flip_first_find(const void *s, long key)
{
	return sut_find_by_attempts(&sut_mutant_flip_first, s, key);
}

const struct sut_ops sut_mutant_flip_first =
    SUT_LATCHED_TREE("mutant-flip-first", flip_first_insert, flip_first_erase, flip_first_find,
                     sut_latch_attempt, sut_latch_read_retry);

/* readers-copy: the first change goes to the copy readers are on, then the flip. */

static void readers_copy_update(void *s, long key, bool insert)
{
	const struct sut_tree *t = s;
	/* count & 1, not latch_seq_write_begin()'s (count & 1) ^ 1: the bug. */
	unsigned first = latch_seq_write_begin(&t->u.latch.seq) ^ 1u;

	mutant_update(s, key, insert, first, false);
}

static void readers_copy_insert(void *s, long key)
{
	readers_copy_update(s, key, true);
}

static void readers_copy_erase(void *s, long key)
{
	readers_copy_update(s, key, false);
}

static long readers_copy_find(const void *s, long key)
{
	return sut_find_by_attempts(&sut_mutant_readers_copy, s, key);
}

const struct sut_ops sut_mutant_readers_copy =
    SUT_LATCHED_TREE("mutant-readers-copy", readers_copy_insert, readers_copy_erase,
                     readers_copy_find, sut_latch_attempt, sut_latch_read_retry);
