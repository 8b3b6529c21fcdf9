/* SPDX-License-Identifier: MIT */
/* The correct structures under test: the latch tree and the seqlock peer. */
#include <stdio.h>
#include <string.h>

#include "sut-tree.h"

size_t sut_tree_size(long keys)
{
	return sizeof(struct sut_tree) + (size_t)keys * sizeof(struct test_elem);
}

void sut_tree_init(void *s, long keys)
{
	struct sut_tree *t = s;

	memset(t, 0, sut_tree_size(keys));
	latch_tree_init(&t->u.latch);
	t->keys = keys;
	for (long k = 0; k < keys; k++)
		t->pool[k].key = k;
}

struct test_elem *sut_tree_elem(void *s, long key)
{
	struct sut_tree *t = s;

	return key >= 0 && key < t->keys ? &t->pool[key] : NULL;
}

long sut_tree_key_of(const struct latch_tree_node *n)
{
	return n ? test_elem_of(n)->key : SUT_ABSENT;
}

long sut_tree_attempt(const void *s, unsigned idx, long key)
{
	const struct sut_tree *t = s;

	return sut_tree_key_of(latch_tree_find_in_copy_(&t->u.latch, idx, &key, &test_elem_ops));
}

unsigned sut_latch_read_begin(const void *s)
{
	const struct sut_tree *t = s;

	return latch_seq_read_begin(&t->u.latch.seq);
}

bool sut_latch_read_retry(const void *s, unsigned start)
{
	const struct sut_tree *t = s;

	return latch_seq_read_retry(&t->u.latch.seq, start);
}

long sut_tree_descend(const void *s, unsigned idx, long key, unsigned *steps)
{
	const struct sut_tree *t = s;
	const struct latch_rb_node *rb = latch_rb_root_node(&t->u.latch.tree[idx]);

	for (*steps = 0; rb && *steps < LATCH_RB_MAX_DEPTH; ++*steps) {
		const struct latch_tree_node *n = latch_tree_from_rb_(rb, idx);
		int c = test_elem_comp(&key, n);

		if (c == 0)
			return test_elem_of(n)->key;
		rb = latch_rb_child(rb, c > 0 ? LATCH_RB_RIGHT : LATCH_RB_LEFT);
	}
	return SUT_ABSENT;
}

long sut_find_by_attempts(const struct sut_ops *ops, const void *s, long key)
{
	unsigned start;
	long found;

	do {
		start = ops->read_begin(s);
		found = ops->read_attempt(s, start, key);
	} while (ops->read_retry(s, start));
	return found;
}

/* The latch tree, exactly as the library offers it. */

void sut_latch_insert(void *s, long key)
{
	struct sut_tree *t = s;

	latch_tree_insert(&t->u.latch, &sut_tree_elem(s, key)->node, &test_elem_ops);
}

void sut_latch_erase(void *s, long key)
{
	struct sut_tree *t = s;

	latch_tree_erase(&t->u.latch, &sut_tree_elem(s, key)->node, &test_elem_ops);
}

static long latch_find(const void *s, long key)
{
	const struct sut_tree *t = s;

	return sut_tree_key_of(latch_tree_find(&t->u.latch, &key, &test_elem_ops));
}

long sut_latch_attempt(const void *s, unsigned start, long key)
{
	return sut_tree_attempt(s, start & 1u, key);
}

const struct sut_ops sut_latch_tree =
    SUT_LATCHED_TREE("latch-tree", sut_latch_insert, sut_latch_erase, latch_find, sut_latch_attempt,
                     sut_latch_read_retry);

/* The seqlock peer: one copy; its readers wait while a write is in progress. */

static void seqlock_insert(void *s, long key)
{
	struct sut_tree *t = s;

	seqlock_tree_insert(&t->u.seqlock, &sut_tree_elem(s, key)->node, &test_elem_ops);
}

static void seqlock_erase(void *s, long key)
{
	struct sut_tree *t = s;

	seqlock_tree_erase(&t->u.seqlock, &sut_tree_elem(s, key)->node);
}

static long seqlock_find(const void *s, long key)
{
	const struct sut_tree *t = s;

	return sut_tree_key_of(seqlock_tree_find(&t->u.seqlock, &key, &test_elem_ops));
}

const struct sut_ops sut_seqlock_tree = {
	.name = "seqlock-tree",
	.size = sut_tree_size,
	.init = sut_tree_init,
	.insert = seqlock_insert,
	.erase = seqlock_erase,
	.find = seqlock_find,
};

static const struct sut_ops *const all_suts[] = {
	&sut_latch_tree,
	&sut_seqlock_tree,
	&sut_mutant_wrong_copy,
	&sut_mutant_skip_retry,
	&sut_mutant_flip_first,
	&sut_mutant_readers_copy,
	&sut_range_map,
	&sut_range_payload,
	&sut_latched_value,
	&sut_latch_map,
	&sut_latch_map_batch,
	&sut_mutant_map_wrong_copy,
	&sut_mutant_map_skip_retry,
};

const struct sut_ops *sut_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(all_suts) / sizeof(all_suts[0]); i++)
		if (strcmp(all_suts[i]->name, name) == 0)
			return all_suts[i];
	return NULL;
}

void sut_list(void)
{
	fprintf(stderr, "structures:");
	for (size_t i = 0; i < sizeof(all_suts) / sizeof(all_suts[0]); i++)
		fprintf(stderr, " %s", all_suts[i]->name);
	fputc('\n', stderr);
}
