/* SPDX-License-Identifier: MIT */
/*
 * Ordered lookups on the latched tree against a reference model (a count
 * per key), after every insert and erase of random sequences with unique
 * and with heavily duplicated keys:
 *
 *  - latch_tree_find_floor/ceil() for every key of the key space (and one
 *    past each end): the right key, an element in the tree, and the
 *    documented one of equal elements (floor: in-order last; ceil: first);
 *  - latch_tree_first/last(): the in-order first / last element;
 *  - a full walk with latch_tree_next() from first and latch_tree_prev()
 *    from last: one element per distinct key, in order, then NULL;
 *  - latch_tree_next/prev() from an element just erased (still valid
 *    memory): the neighbours of its key;
 *  - the whole-structure invariants of both copies.
 *
 * Then, concurrently: a reader thread walks the tree forwards and
 * backwards and probes floor/ceil while the writer inserts and erases
 * odd keys around fixed even ones.  Weak consistency must hold: every
 * walk is strictly ordered and visits every even key (present throughout).
 *
 * Overrides: LATCH_TEST_ORDERED_SIZE (largest tree, default 300),
 * LATCH_TEST_SEEDS (seeded runs per key-space shape, default 3),
 * LATCH_TEST_ORDERED_WALKS (concurrent walks each way, default 2000).
 */
#include <pthread.h>
#include <string.h>

#include "tree-invariants.h"

#define NONE (-1L)

struct model {
	struct test_elem *elems;
	bool *linked;
	long *count;    /* elements per key */
	long *floor_of; /* greatest present key <= k, or NONE */
	long *ceil_of;  /* least present key >= k, or NONE */
	long keys, pool, ops;
};

static const struct test_elem *elem(const struct latch_tree_node *n)
{
	return test_elem_of(n);
}

static void recompute(struct model *m)
{
	long last = NONE;

	for (long k = 0; k < m->keys; k++)
		m->floor_of[k] = last = m->count[k] ? k : last;
	last = NONE;
	for (long k = m->keys - 1; k >= 0; k--)
		m->ceil_of[k] = last = m->count[k] ? k : last;
}

static long floor_key(const struct model *m, long k)
{
	return k < 0 ? NONE : m->floor_of[k < m->keys ? k : m->keys - 1];
}

static long ceil_key(const struct model *m, long k)
{
	return k >= m->keys ? NONE : m->ceil_of[k < 0 ? 0 : k];
}

/* @n holds @key (or is NULL when @key is NONE) and is in the tree. */
static void check_is(const struct model *m, const struct latch_tree_node *n, long key,
                     const char *what, long probe)
{
	if (key == NONE) {
		CHECK(n == NULL, "%s(%ld): expected NULL, got key %ld", what, probe, elem(n)->key);
		return;
	}
	CHECK(n != NULL, "%s(%ld): expected key %ld, got NULL", what, probe, key);
	CHECK(elem(n)->key == key, "%s(%ld): expected key %ld, got %ld", what, probe, key,
	      elem(n)->key);
	CHECK(m->linked[elem(n) - m->elems], "%s(%ld): returned an element not in the tree", what,
	      probe);
}

/* The in-order neighbour of @n in copy 0 (writer side, as the reference). */
static const struct test_elem *neighbour(const struct latch_tree_node *n, bool after)
{
	const struct latch_rb_node *rb =
	    after ? latch_rb_next(&n->node[0]) : latch_rb_prev(&n->node[0]);

	return rb ? elem(latch_tree_from_rb_(rb, 0)) : NULL;
}

static void check_ordered(const struct latch_tree_root *root, const struct model *m)
{
	const struct latch_tree_node *n;
	long k;

	for (k = -1; k <= m->keys; k++) {
		const struct test_elem *nb;

		n = latch_tree_find_floor(root, &k, &test_elem_ops);
		check_is(m, n, floor_key(m, k), "floor", k);
		nb = n ? neighbour(n, true) : NULL;
		CHECK(!nb || nb->key > elem(n)->key, "floor(%ld) is not the last of its key", k);

		n = latch_tree_find_ceil(root, &k, &test_elem_ops);
		check_is(m, n, ceil_key(m, k), "ceil", k);
		nb = n ? neighbour(n, false) : NULL;
		CHECK(!nb || nb->key < elem(n)->key, "ceil(%ld) is not the first of its key", k);
	}

	n = latch_tree_first(root);
	CHECK(n == (root->tree[0].node ? latch_tree_from_rb_(latch_rb_first(&root->tree[0]), 0)
	                               : NULL),
	      "first is not the in-order first element");
	for (k = ceil_key(m, 0); k != NONE; k = ceil_key(m, k + 1)) {
		check_is(m, n, k, "walk next", k);
		CHECK(!neighbour(n, false) || neighbour(n, false)->key < k,
		      "walk next: not the first element of key %ld", k);
		n = latch_tree_next(root, n, &test_elem_ops);
	}
	CHECK(n == NULL, "walk next: did not end after the last key");

	n = latch_tree_last(root);
	CHECK(n == (root->tree[0].node ? latch_tree_from_rb_(latch_rb_last(&root->tree[0]), 0)
	                               : NULL),
	      "last is not the in-order last element");
	for (k = floor_key(m, m->keys - 1); k != NONE; k = floor_key(m, k - 1)) {
		check_is(m, n, k, "walk prev", k);
		CHECK(!neighbour(n, true) || neighbour(n, true)->key > k,
		      "walk prev: not the last element of key %ld", k);
		n = latch_tree_prev(root, n, &test_elem_ops);
	}
	CHECK(n == NULL, "walk prev: did not end before the first key");
}

static void after_operation(const struct latch_tree_root *root, struct model *m, long nlinked)
{
	m->ops++;
	recompute(m);
	check_latch_tree(root, nlinked, &test_elem_ops);
	check_ordered(root, m);
}

static void run(long size, long keys, unsigned long long seed, struct model *m)
{
	struct latch_tree_root root = LATCH_TREE_ROOT_INIT;
	struct test_rng rng = { seed * 0x9E3779B97F4A7C15ull + 1 };
	long nlinked = 0;

	m->keys = keys;
	memset(m->linked, 0, (size_t)m->pool * sizeof(*m->linked));
	memset(m->count, 0, (size_t)keys * sizeof(*m->count));
	after_operation(&root, m, 0);

	/* Grow to @size with some erases, then shrink to empty. */
	for (long step = 0; step < 4 * size; step++) {
		long i = (long)test_rng_below(&rng, (unsigned long)size);
		struct test_elem *e = &m->elems[i];
		bool grow = step < 2 * size;

		if (!m->linked[i] && (grow || test_rng_below(&rng, 4) == 0)) {
			e->key = (long)test_rng_below(&rng, (unsigned long)keys);
			latch_tree_insert(&root, &e->node, &test_elem_ops);
			m->linked[i] = true;
			m->count[e->key]++;
			nlinked++;
			after_operation(&root, m, nlinked);
		} else if (m->linked[i]) {
			latch_tree_erase(&root, &e->node, &test_elem_ops);
			m->linked[i] = false;
			m->count[e->key]--;
			nlinked--;
			after_operation(&root, m, nlinked);
			/* Stepping from an element that was just erased. */
			check_is(m, latch_tree_next(&root, &e->node, &test_elem_ops),
			         ceil_key(m, e->key + 1), "next of erased", e->key);
			check_is(m, latch_tree_prev(&root, &e->node, &test_elem_ops),
			         floor_key(m, e->key - 1), "prev of erased", e->key);
		}
	}
	for (long i = 0; i < size; i++) {
		if (m->linked[i]) {
			latch_tree_erase(&root, &m->elems[i].node, &test_elem_ops);
			m->linked[i] = false;
			m->count[m->elems[i].key]--;
			after_operation(&root, m, --nlinked);
		}
	}
	CHECK(latch_tree_first(&root) == NULL && latch_tree_last(&root) == NULL,
	      "an empty tree has no first or last element");
}

#define FIXED 64 /* keys 0, 2, ..., 126 stay; odd keys 1..127 come and go */
static struct test_elem fixed[FIXED], moving[FIXED];
static struct latch_tree_root shared = LATCH_TREE_ROOT_INIT;
static int walking;

/* One walk each way and one probe each way; returns the keys visited. */
static long walk_once(long probe)
{
	const struct latch_tree_node *n;
	long prev = -1, fixed_seen = 0, visited = 0;

	for (n = latch_tree_first(&shared); n; n = latch_tree_next(&shared, n, &test_elem_ops)) {
		long k = elem(n)->key;

		CHECK(k > prev, "walk next: key %ld after %ld", k, prev);
		fixed_seen += k % 2 == 0;
		prev = k;
		visited++;
	}
	CHECK(fixed_seen == FIXED, "walk next saw %ld of the %d keys present throughout",
	      fixed_seen, FIXED);
	prev = 2 * FIXED;
	fixed_seen = 0;
	for (n = latch_tree_last(&shared); n; n = latch_tree_prev(&shared, n, &test_elem_ops)) {
		long k = elem(n)->key;

		CHECK(k < prev, "walk prev: key %ld after %ld", k, prev);
		fixed_seen += k % 2 == 0;
		prev = k;
	}
	CHECK(fixed_seen == FIXED, "walk prev saw %ld of the %d keys present throughout",
	      fixed_seen, FIXED);
	/* An odd probe: its own element if present, else the even neighbour. */
	n = latch_tree_find_floor(&shared, &probe, &test_elem_ops);
	CHECK(n && (elem(n)->key == probe || elem(n)->key == probe - 1), "floor(%ld)", probe);
	n = latch_tree_find_ceil(&shared, &probe, &test_elem_ops);
	CHECK(n && (elem(n)->key == probe || elem(n)->key == probe + 1), "ceil(%ld)", probe);
	return visited;
}

static void *walker(void *arg)
{
	long walks = *(const long *)arg, visited = 0;

	for (long w = 0; w < walks; w++)
		visited += walk_once(2 * (w % (FIXED - 1)) + 1);
	/* Relaxed: the writer only polls this flag; pthread_join() orders the rest. */
	LATCH_STORE_RELAXED(&walking, 0);
	CHECK(visited >= walks * FIXED, "walks visited too few keys");
	return NULL;
}

/* Readers in another thread walk while the writer churns the odd keys. */
static long concurrent_walks(long walks)
{
	struct test_rng rng = { 77 };
	pthread_t thread;
	long updates = 0;

	for (long i = 0; i < FIXED; i++) {
		fixed[i].key = 2 * i;
		moving[i].key = 2 * i + 1;
		latch_tree_insert(&shared, &fixed[i].node, &test_elem_ops);
	}
	LATCH_STORE_RELAXED(&walking, 1);
	CHECK(pthread_create(&thread, NULL, walker, &walks) == 0, "pthread_create");
	/* Relaxed: see walker(). */
	while (LATCH_LOAD_RELAXED(&walking)) {
		struct test_elem *e = &moving[test_rng_below(&rng, FIXED - 1)];

		if (test_find(&shared, e->key) == e)
			latch_tree_erase(&shared, &e->node, &test_elem_ops);
		else
			latch_tree_insert(&shared, &e->node, &test_elem_ops);
		updates++;
	}
	pthread_join(thread, NULL);
	return updates;
}

int main(void)
{
	long size = test_env_long("LATCH_TEST_ORDERED_SIZE", 300);
	long seeds = test_env_long("LATCH_TEST_SEEDS", 3), walks;
	struct model m = { 0 };

	CHECK(size > 0, "LATCH_TEST_ORDERED_SIZE must be positive");
	m.pool = size;
	m.elems = calloc((size_t)size, sizeof(*m.elems));
	m.linked = calloc((size_t)size, sizeof(*m.linked));
	m.count = calloc((size_t)size * 4 + 16, sizeof(*m.count));
	m.floor_of = calloc((size_t)size * 4 + 16, sizeof(*m.floor_of));
	m.ceil_of = calloc((size_t)size * 4 + 16, sizeof(*m.ceil_of));
	CHECK(m.elems && m.linked && m.count && m.floor_of && m.ceil_of, "out of memory");

	for (long seed = 0; seed < seeds; seed++) {
		run(size, size * 4 + 16, (unsigned long long)seed, &m);     /* mostly unique keys */
		run(size, size / 8 + 2, (unsigned long long)seed + 99, &m); /* many duplicates */
		run(size < 7 ? size : 7, 3, (unsigned long long)seed + 7, &m); /* tiny trees */
	}
	printf("test-ordered: %ld operations checked; ", m.ops);
	walks = test_env_long("LATCH_TEST_ORDERED_WALKS", 2000);
	printf("%ld concurrent walks each way during %ld updates: all passed\n", walks,
	       concurrent_walks(walks));
	free(m.elems);
	free(m.linked);
	free(m.count);
	free(m.floor_of);
	free(m.ceil_of);
	return 0;
}
