/* SPDX-License-Identifier: MIT */
/*
 * Randomized insert/erase sequences on the latched tree, checked against a
 * reference model (a count per key).
 *
 * After every operation: latch_tree_find() agrees with the model for the
 * key just changed (present, absent or duplicated) and for random probes.
 * The whole-structure invariants (both copies valid red-black trees with
 * the same elements in the same order, the right count) are checked after
 * every operation while the tree holds at most FULL_CHECK_LIMIT elements,
 * and at every power of two and every 1024th operation above that, so a
 * run to 10^5 elements stays within seconds.
 *
 * Overrides: LATCH_TEST_MAX_SIZE (largest tree, default 100000),
 * LATCH_TEST_SEEDS (number of seeded runs per size, default 3).
 */
#include <string.h>

#include "tree-invariants.h"

#define FULL_CHECK_LIMIT 2048

struct model {
	struct test_elem *elems; /* the pool */
	bool *linked;            /* linked[i]: elems[i] is in the tree */
	long *slot_of_linked;    /* dense list of linked element indices ... */
	long *pos;               /* ... and each linked element's place in it */
	long *key_count;         /* how many linked elements hold each key */
	long nlinked, pool, keys;
	long full_checks, ops;
};

static void check_lookup(const struct latch_tree_root *root, const struct model *m, long key)
{
	struct test_elem *e = test_find(root, key);
	long expected = key >= 0 && key < m->keys ? m->key_count[key] : 0;

	if (expected == 0) {
		CHECK(e == NULL, "key %ld is absent but find returned an element", key);
		return;
	}
	CHECK(e != NULL, "key %ld is present (%ld times) but find returned NULL", key, expected);
	CHECK(e->key == key, "find(%ld) returned key %ld", key, e->key);
	CHECK(m->linked[e - m->elems], "find(%ld) returned an element not in the tree", key);
}

static void after_operation(const struct latch_tree_root *root, struct model *m, long key,
                            struct test_rng *rng)
{
	m->ops++;
	check_lookup(root, m, key);
	for (int i = 0; i < 4; i++)
		check_lookup(root, m, (long)test_rng_below(rng, (unsigned long)m->keys + 2) - 1);
	if (m->nlinked <= FULL_CHECK_LIMIT || (m->nlinked & (m->nlinked - 1)) == 0 ||
	    m->ops % 1024 == 0) {
		check_tree_invariants(root, m->nlinked);
		m->full_checks++;
	}
}

static void insert(struct latch_tree_root *root, struct model *m, long i, long key,
                   struct test_rng *rng)
{
	m->elems[i].key = key;
	latch_tree_insert(root, &m->elems[i].node, &test_elem_ops);
	m->linked[i] = true;
	m->pos[i] = m->nlinked;
	m->slot_of_linked[m->nlinked++] = i;
	m->key_count[key]++;
	after_operation(root, m, key, rng);
}

static void erase(struct latch_tree_root *root, struct model *m, long i, struct test_rng *rng)
{
	long last = m->slot_of_linked[--m->nlinked];

	latch_tree_erase(root, &m->elems[i].node, &test_elem_ops);
	m->linked[i] = false;
	m->slot_of_linked[m->pos[i]] = last;
	m->pos[last] = m->pos[i];
	m->key_count[m->elems[i].key]--;
	after_operation(root, m, m->elems[i].key, rng);
}

/*
 * Grow a tree to @size elements, churn it, then shrink it to empty.
 * @keys bounds the key space: a small one forces many duplicates.
 */
static void run(long size, long keys, unsigned long long seed, struct model *m)
{
	struct latch_tree_root root = LATCH_TREE_ROOT_INIT;
	struct test_rng rng = { seed * 0x9E3779B97F4A7C15ull + 1 };
	long next_unlinked = 0;

	m->keys = keys;
	m->nlinked = 0;
	memset(m->linked, 0, (size_t)m->pool * sizeof(*m->linked));
	memset(m->key_count, 0, (size_t)keys * sizeof(*m->key_count));
	check_tree_invariants(&root, 0);
	check_lookup(&root, m, 0);

	/* Grow, with an erase now and then. */
	while (next_unlinked < size) {
		if (m->nlinked > 0 && test_rng_below(&rng, 4) == 0)
			erase(&root, m,
			      m->slot_of_linked[test_rng_below(&rng, (unsigned long)m->nlinked)],
			      &rng);
		else
			insert(&root, m, next_unlinked++,
			       (long)test_rng_below(&rng, (unsigned long)keys), &rng);
	}
	/* Churn: erase one, re-insert an unlinked one under a new key. */
	for (long i = 0; i < size; i++) {
		long victim = m->slot_of_linked[test_rng_below(&rng, (unsigned long)m->nlinked)];

		erase(&root, m, victim, &rng);
		insert(&root, m, victim, (long)test_rng_below(&rng, (unsigned long)keys), &rng);
	}
	/* Shrink to empty in random order. */
	while (m->nlinked > 0)
		erase(&root, m, m->slot_of_linked[test_rng_below(&rng, (unsigned long)m->nlinked)],
		      &rng);
	check_tree_invariants(&root, 0);
}

int main(void)
{
	long max_size = test_env_long("LATCH_TEST_MAX_SIZE", 100000);
	long seeds = test_env_long("LATCH_TEST_SEEDS", 3);
	static const long sizes[] = { 0, 1, 2, 3, 7, 64, 500, 4096, 100000 };
	struct model m = { 0 };

	m.pool = max_size > 0 ? max_size : 1;
	m.elems = calloc((size_t)m.pool, sizeof(*m.elems));
	m.linked = calloc((size_t)m.pool, sizeof(*m.linked));
	m.slot_of_linked = calloc((size_t)m.pool, sizeof(*m.slot_of_linked));
	m.pos = calloc((size_t)m.pool, sizeof(*m.pos));
	m.key_count = calloc((size_t)m.pool * 4 + 16, sizeof(*m.key_count));
	CHECK(m.elems && m.linked && m.slot_of_linked && m.pos && m.key_count, "out of memory");

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		long size = sizes[s] < max_size ? sizes[s] : max_size;

		for (long seed = 0; seed < seeds; seed++) {
			/* Unique-ish keys, then heavy duplicates. */
			run(size, size * 4 + 16, (unsigned long long)(seed * 131 + size), &m);
			run(size, size / 8 + 2, (unsigned long long)(seed * 131 + size + 7), &m);
		}
		if (sizes[s] >= max_size)
			break;
	}
	printf("test-tree: %ld operations, %ld whole-tree checks, sizes up to %ld: all passed\n",
	       m.ops, m.full_checks, max_size);
	free(m.elems);
	free(m.linked);
	free(m.slot_of_linked);
	free(m.pos);
	free(m.key_count);
	return 0;
}
