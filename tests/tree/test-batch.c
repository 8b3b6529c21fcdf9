/* SPDX-License-Identifier: MIT */
/*
 * Batches on the latched tree against a reference model, after every
 * call of random sequences with duplicated keys:
 *
 *  - latch_tree_commit() of 0..40 changes (inserts of free elements under
 *    random keys, erases of linked ones, in random order);
 *  - latch_tree_replace() of a linked element by a free one with the same
 *    key.
 *
 * After every call: both copies valid and identical (tree-invariants.h),
 * copy 0 holds exactly the elements the model says, and latch_tree_find()
 * finds each key exactly when the model has it.
 *
 * Overrides: LATCH_TEST_BATCH_OPS (calls per seed, default 3000),
 * LATCH_TEST_SEEDS (default 3).
 */
#include <string.h>

#include "tree-invariants.h"

#define POOL      256
#define KEYS      64
#define MAX_BATCH 40

struct model {
	struct test_elem elems[POOL];
	bool linked[POOL];
	long count[KEYS];
	long nlinked;
};

static void check_against(const struct latch_tree_root *root, const struct model *m)
{
	bool seen[POOL] = { false };
	const struct latch_rb_node *rb;

	check_tree_invariants(root, m->nlinked);
	for (rb = latch_rb_first(&root->tree[0]); rb; rb = latch_rb_next(rb)) {
		const struct test_elem *e = test_elem_of(latch_tree_from_rb_(rb, 0));

		CHECK(e >= m->elems && e < m->elems + POOL && !seen[e - m->elems],
		      "copy 0 holds a foreign or repeated element");
		seen[e - m->elems] = true;
	}
	for (long i = 0; i < POOL; i++)
		CHECK(seen[i] == m->linked[i], "element %ld: in tree %d, model says %d", i, seen[i],
		      m->linked[i]);
	for (long k = 0; k < KEYS; k++)
		CHECK((test_find(root, k) != NULL) == (m->count[k] > 0), "find(%ld) disagrees", k);
}

static void set_linked(struct model *m, long i, bool linked)
{
	m->linked[i] = linked;
	m->count[m->elems[i].key] += linked ? 1 : -1;
	m->nlinked += linked ? 1 : -1;
}

static void random_batch(struct latch_tree_root *root, struct model *m, struct test_rng *rng)
{
	struct latch_tree_change changes[MAX_BATCH] = { 0 };
	bool picked[POOL] = { false };
	size_t n = (size_t)test_rng_below(rng, MAX_BATCH + 1);

	for (size_t k = 0; k < n; k++) {
		long i;

		do
			i = (long)test_rng_below(rng, POOL);
		while (picked[i]);
		picked[i] = true;
		if (!m->linked[i])
			m->elems[i].key = (long)test_rng_below(rng, KEYS);
		changes[k] =
		    (struct latch_tree_change){ m->linked[i] ? LATCH_TREE_ERASE : LATCH_TREE_INSERT,
			                        &m->elems[i].node };
	}
	latch_tree_commit(root, changes, n, &test_elem_ops);
	for (size_t k = 0; k < n; k++) {
		long i = test_elem_of(changes[k].node) - m->elems;

		set_linked(m, i, changes[k].op == LATCH_TREE_INSERT);
	}
}

static void random_replace(struct latch_tree_root *root, struct model *m, struct test_rng *rng)
{
	long old = (long)test_rng_below(rng, POOL), new_elem = (long)test_rng_below(rng, POOL);

	if (!m->linked[old] || m->linked[new_elem])
		return;
	m->elems[new_elem].key = m->elems[old].key;
	latch_tree_replace(root, &m->elems[old].node, &m->elems[new_elem].node, &test_elem_ops);
	set_linked(m, old, false);
	set_linked(m, new_elem, true);
}

int main(void)
{
	long ops = test_env_long("LATCH_TEST_BATCH_OPS", 3000);
	long seeds = test_env_long("LATCH_TEST_SEEDS", 3);
	static struct model m;

	for (long seed = 0; seed < seeds; seed++) {
		struct latch_tree_root root = LATCH_TREE_ROOT_INIT;
		struct test_rng rng = { (unsigned long long)seed * 0x9E3779B97F4A7C15ull + 11 };

		memset(&m, 0, sizeof(m));
		for (long op = 0; op < ops; op++) {
			if (test_rng_below(&rng, 3) == 0)
				random_replace(&root, &m, &rng);
			else
				random_batch(&root, &m, &rng);
			check_against(&root, &m);
		}
	}
	printf("test-batch: %ld batches and replacements checked: all passed\n", seeds * ops);
	return 0;
}
