/* SPDX-License-Identifier: MIT */
/*
 * The latched map, single-threaded, against a reference model: after
 * every operation both copies are checked for the B+-tree invariants
 * (sorted keys, padding copies, fill bounds, equal leaf depth, bounds
 * that hold their subtrees) and for equal content and shape, and every
 * reader call is checked against the model.
 *
 * Overrides: LATCH_MAP_MAX (largest map, default 100000; 1000000 for the
 * full size), LATCH_MAP_FULL_CHECK (full checks up to this size after
 * every operation, default 3000; beyond it every 1009th operation),
 * LATCH_MAP_COUNT=scalar or avx2 (the in-node count readers use instead
 * of the best the CPU has: the scalar reference, test-map-scalar; AVX2
 * where the CPU also has AVX-512, test-map-avx2, skipped where the build
 * or the CPU lacks it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map-check.h"

static struct test_rng rng = { 0x9e3779b97f4a7c15ull };
static long full_check_max;

static void *val(uint64_t key, unsigned gen)
{
	return (void *)(uintptr_t)(key * 8 + gen % 8 + 1);
}

/* Checks after an operation: full ones while small, sampled beyond. */
static void after_op(const struct latch_map *m, const struct model *md, unsigned long op)
{
	if ((long)md->n <= full_check_max || op % 1009 == 0)
		check_map(m, md);
	check_readers(m, md, &rng, 4);
}

static void do_insert(struct latch_map *m, struct model *md, uint64_t key, void *v)
{
	int want = model_has(md, key) ? -EEXIST : 0;

	CHECK(latch_map_insert(m, key, v) == want, "insert(%llu)", (unsigned long long)key);
	if (!want)
		model_insert(md, key, v);
}

/* An erase, or now and then a remove that must report the value (or touch nothing). */
static void do_erase(struct latch_map *m, struct model *md, uint64_t key)
{
	int want = model_has(md, key) ? 0 : -ENOENT;
	void *old = want ? NULL : md->values[model_lower(md, key)], *got = &rng;

	if (test_rng_below(&rng, 3) == 0) {
		CHECK(latch_map_remove(m, key, &got) == want, "remove(%llu)",
		      (unsigned long long)key);
		CHECK(want ? got == &rng : got == old, "remove(%llu): wrong value",
		      (unsigned long long)key);
	} else {
		CHECK(latch_map_erase(m, key) == want, "erase(%llu)", (unsigned long long)key);
	}
	if (!want)
		model_erase(md, key);
}

static void do_replace(struct latch_map *m, struct model *md, uint64_t key, void *v)
{
	int want = model_has(md, key) ? 0 : -ENOENT;

	CHECK(latch_map_replace(m, key, v) == want, "replace(%llu)", (unsigned long long)key);
	if (!want)
		md->values[model_lower(md, key)] = v;
}

static void test_empty(void)
{
	struct latch_map m;
	struct model md;

	CHECK(latch_map_init(&m) == 0, "init");
	model_init(&md, 16);
	check_map(&m, &md);
	check_readers(&m, &md, &rng, 16);
	CHECK(latch_map_erase(&m, 1) == -ENOENT, "erase from an empty map");
	CHECK(latch_map_remove(&m, 1, NULL) == -ENOENT, "remove from an empty map");
	CHECK(latch_map_replace(&m, 1, NULL) == -ENOENT, "replace in an empty map");
	CHECK(latch_map_commit(&m, NULL, 0, NULL) == 0, "an empty batch");
	do_insert(&m, &md, UINT64_MAX, val(1, 0));
	do_insert(&m, &md, 0, val(0, 0));
	check_map(&m, &md);
	check_readers(&m, &md, &rng, 16);
	do_erase(&m, &md, 0);
	do_erase(&m, &md, UINT64_MAX);
	check_map(&m, &md);
	latch_map_destroy(&m);
	model_free(&md);
}

/* Random inserts, erases and replaces over a key space of 2 * @keys keys. */
static void test_random(unsigned keys, unsigned long ops)
{
	struct latch_map m;
	struct model md;

	latch_map_init(&m);
	model_init(&md, 2 * keys + 1);
	for (unsigned long op = 0; op < ops; op++) {
		uint64_t key = test_rng_below(&rng, 2 * keys) * 3;
		unsigned r = (unsigned)test_rng_below(&rng, 10);

		/* Drift between growing and shrinking so merges and borrowing happen. */
		if (r < (op / (ops / 4 + 1) % 2 ? 3u : 6u))
			do_insert(&m, &md, key, val(key, (unsigned)op));
		else if (r < 9)
			do_erase(&m, &md, key);
		else
			do_replace(&m, &md, key, val(key, (unsigned)op + 1));
		after_op(&m, &md, op);
	}
	check_map(&m, &md);
	latch_map_destroy(&m);
	model_free(&md);
}

/* Grow to @n entries in the order @order, then erase them all in random order. */
static void test_grow_shrink(size_t n, int order)
{
	struct latch_map m;
	struct model md;
	uint64_t *keys = malloc(n * sizeof(*keys));

	CHECK(keys, "out of memory");
	for (size_t i = 0; i < n; i++)
		keys[i] = order > 0 ? i * 5 : order < 0 ? (n - i) * 5 : test_rng_next(&rng) >> 1;
	latch_map_init(&m);
	model_init(&md, n);
	for (size_t i = 0; i < n; i++) {
		do_insert(&m, &md, keys[i], val(keys[i], 0));
		after_op(&m, &md, i);
	}
	check_map(&m, &md);
	if (order == 0 && n >= 100000) {
		double b = map_bytes_per_entry(latch_btree_of_map(&m));

		printf("test-map: %zu random inserts: %.1f bytes per entry\n", n, b);
		CHECK(b <= 50.0, "%.1f bytes per entry after random inserts (target 50)", b);
	}
	for (size_t i = n; i > 1; i--) {
		size_t j = test_rng_below(&rng, (unsigned long)i);
		uint64_t t = keys[j];

		keys[j] = keys[i - 1];
		keys[i - 1] = t;
	}
	for (size_t i = 0; i < n; i++) {
		do_erase(&m, &md, keys[i]);
		after_op(&m, &md, i);
	}
	check_map(&m, &md);
	CHECK(latch_btree_of_map(&m)->copy[0].root == 0 &&
	          latch_btree_of_map(&m)->copy[1].root == 0,
	      "erasing everything leaves nodes");
	latch_map_destroy(&m);
	model_free(&md);
	free(keys);
}

static void test_load_sorted(void)
{
	static const size_t sizes[] = { 0,  1,   2,   15,  16,   17,   23,   24,    31,    32,
		                        33, 255, 256, 257, 4095, 4096, 4097, 65537, 100000 };
	struct latch_map m;
	struct model md;

	latch_map_init(&m);
	model_init(&md, 200000);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];

		md.n = n;
		for (size_t i = 0; i < n; i++) {
			md.keys[i] = i * 7 + s;
			md.values[i] = val(md.keys[i], (unsigned)s);
		}
		CHECK(latch_map_load_sorted(&m, md.keys, md.values, n) == 0, "load_sorted(%zu)", n);
		md.undone = false; /* both copies built alike */
		check_map(&m, &md);
		check_readers(&m, &md, &rng, 64);
		if (n == 100000) {
			/* The pools hold what the largest earlier load needed, so load from empty. */
			struct latch_map fresh;
			double b;

			latch_map_init(&fresh);
			CHECK(latch_map_load_sorted(&fresh, md.keys, md.values, n) == 0,
			      "load_sorted");
			b = map_bytes_per_entry(latch_btree_of_map(&fresh));
			printf("test-map: load_sorted of %zu: %.1f bytes per entry\n", n, b);
			CHECK(b <= 36.0, "%.1f bytes per entry after load_sorted (target 36)", b);
			latch_map_destroy(&fresh);
		}
		/* Updates after a load: the packed nodes split and merge. */
		for (unsigned k = 0; k < 200 && n; k++) {
			uint64_t key = test_rng_below(&rng, (unsigned long)(n * 7 + 8));

			if (k % 2)
				do_insert(&m, &md, key, val(key, k));
			else
				do_erase(&m, &md, key);
			after_op(&m, &md, k);
		}
		check_map(&m, &md);
	}
	/* Bad input leaves the map unchanged. */
	uint64_t bad[4] = { 1, 2, 2, 3 };
	CHECK(latch_map_load_sorted(&m, bad, NULL, 4) == -EINVAL, "duplicate keys accepted");
	bad[2] = 0;
	CHECK(latch_map_load_sorted(&m, bad, NULL, 4) == -EINVAL, "unsorted keys accepted");
	CHECK(latch_map_load_sorted(&m, NULL, NULL, 4) == -EINVAL, "NULL keys accepted");
	check_map(&m, &md);
	/* NULL values: every value NULL. */
	CHECK(latch_map_load_sorted(&m, (uint64_t[]){ 1, 2 }, NULL, 2) == 0, "load without values");
	md.n = 2;
	md.keys[0] = 1, md.keys[1] = 2;
	md.values[0] = md.values[1] = NULL;
	check_map(&m, &md);
	CHECK(latch_map_load_sorted(&m, NULL, NULL, 0) == 0, "load of nothing");
	md.n = 0;
	check_map(&m, &md);
	latch_map_destroy(&m);
	model_free(&md);
}

/* Apply @n changes to the model as latch_map_commit() should. */
static void model_commit(struct model *md, const struct latch_map_change *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (c[i].op == LATCH_MAP_INSERT)
			model_insert(md, c[i].key, c[i].value);
		else if (c[i].op == LATCH_MAP_ERASE)
			model_erase(md, c[i].key);
		else
			md->values[model_lower(md, c[i].key)] = c[i].value;
	}
}

static void test_commit(void)
{
	enum { N = 3000, BATCH = 400 };
	static struct latch_map_change c[BATCH];
	struct latch_map m;
	struct model md;
	size_t failed;

	latch_map_init(&m);
	model_init(&md, N + BATCH);
	for (unsigned round = 0; round < 60; round++) {
		size_t n = test_rng_below(&rng, BATCH) + 1;
		struct model scratch;

		/* A valid batch, built against a scratch model so keys may repeat. */
		model_init(&scratch, N + BATCH);
		scratch.n = md.n;
		memcpy(scratch.keys, md.keys, md.n * sizeof(*md.keys));
		memcpy(scratch.values, md.values, md.n * sizeof(*md.values));
		for (size_t i = 0; i < n; i++) {
			uint64_t key = test_rng_below(&rng, N);
			bool has = model_has(&scratch, key);

			c[i].key = key;
			c[i].value = val(key, round + (unsigned)i);
			c[i].op = !has                      ? LATCH_MAP_INSERT
			          : test_rng_below(&rng, 2) ? LATCH_MAP_ERASE
			                                    : LATCH_MAP_REPLACE;
			model_commit(&scratch, &c[i], 1);
		}
		model_free(&scratch);

		/* Spoil one change: the map must stay as it is and name it. */
		size_t at = test_rng_below(&rng, (unsigned long)n);
		struct latch_map_change keep = c[at];
		bool has_before = false;

		for (size_t i = 0; i < at; i++)
			if (c[i].key == c[at].key)
				has_before = true;
		if (round % 3 == 0) {
			c[at].op = (enum latch_map_op)7;
		} else if (c[at].op == LATCH_MAP_INSERT) {
			c[at].op = LATCH_MAP_ERASE; /* the key is absent there */
		} else {
			c[at].op = LATCH_MAP_INSERT; /* the key is present there */
		}
		int want = round % 3 == 0                ? -EINVAL
		           : c[at].op == LATCH_MAP_ERASE ? -ENOENT
		                                         : -EEXIST;
		failed = (size_t)-1;
		CHECK(latch_map_commit(&m, c, n, &failed) == want, "a bad batch was not rejected");
		md.undone = md.undone || at > 0;
		CHECK(failed == at, "failed = %zu, the bad change is %zu (repeated key: %d)",
		      failed, at, has_before);
		check_map(&m, &md);
		c[at] = keep;

		CHECK(latch_map_commit(&m, c, n, &failed) == 0, "a valid batch failed at %zu",
		      failed);
		model_commit(&md, c, n);
		check_map(&m, &md);
		check_readers(&m, &md, &rng, 32);
	}
	latch_map_destroy(&m);
	model_free(&md);
}

/* ---- allocation failure (counting_alloc: map-check.h) ---- */

/*
 * Run @op with the k-th allocation failing, for k = 0, 1, ... until it
 * succeeds; every failure must return -ENOMEM and leave the map as the
 * model says.  Returns how many allocations the successful run made.
 */
static long every_failure(struct latch_map *m, const struct model *md,
                          int (*op)(struct latch_map *m, void *ctx), void *ctx)
{
	for (long k = 0;; k++) {
		int r;

		alloc_calls = 0;
		alloc_fail_at = k;
		r = op(m, ctx);
		alloc_fail_at = -1;
		if (r == 0)
			return alloc_calls;
		CHECK(r == -ENOMEM, "allocation failure %ld gave %d", k, r);
		check_map(m, md);
		check_readers(m, md, &rng, 8);
	}
}

struct batch_ctx {
	const struct latch_map_change *c;
	size_t n;
};

static int op_commit(struct latch_map *m, void *ctx)
{
	struct batch_ctx *b = ctx;
	size_t failed = 0;
	int r = latch_map_commit(m, b->c, b->n, &failed);

	CHECK(r == 0 || failed == b->n, "-ENOMEM must set *failed to n");
	return r;
}

static int op_load(struct latch_map *m, void *ctx)
{
	struct model *src = ctx;

	return latch_map_load_sorted(m, src->keys, src->values, src->n);
}

static int op_reserve(struct latch_map *m, void *ctx)
{
	return latch_map_reserve(m, *(size_t *)ctx);
}

static void test_enomem(void)
{
	enum { BATCH = 3000 };
	static struct latch_map_change c[BATCH];
	struct latch_map m;
	struct model md, src;
	long allocs;

	real_alloc = latch_btree_alloc_hook_;
	latch_btree_alloc_hook_ = counting_alloc;
	latch_map_init(&m);
	model_init(&md, 4 * BATCH);
	/* Single inserts: each time a chunk runs out. */
	for (unsigned i = 0; i < 2000; i++) {
		uint64_t key = test_rng_next(&rng) >> 8;
		struct latch_map_change one = { LATCH_MAP_INSERT, key, val(key, i) };
		struct batch_ctx b = { &one, 1 };

		if (model_has(&md, key))
			continue;
		every_failure(&m, &md, op_commit, &b);
		model_insert(&md, key, one.value);
	}
	check_map(&m, &md);
	/* A large batch: scratch array and many chunks, failing at each. */
	for (size_t i = 0; i < BATCH; i++) {
		c[i].op = LATCH_MAP_INSERT;
		c[i].key = ((test_rng_next(&rng) >> 8) | 1) + (uint64_t)i;
		c[i].value = val(c[i].key, 1);
	}
	struct batch_ctx b = { c, BATCH };
	allocs = every_failure(&m, &md, op_commit, &b);
	CHECK(allocs >= 3, "the batch made only %ld allocations: nothing was injected", allocs);
	model_commit(&md, c, BATCH);
	check_map(&m, &md);
	/* load_sorted: scratch array and chunks. */
	model_init(&src, 60000);
	src.n = 40000;
	for (size_t i = 0; i < src.n; i++) {
		src.keys[i] = i * 3;
		src.values[i] = val(i, 2);
	}
	allocs = every_failure(&m, &md, op_load, &src);
	CHECK(allocs >= 2, "load_sorted made only %ld allocations", allocs);
	check_map(&m, &src);
	/* reserve, then no allocation at all up to that size. */
	size_t want = 60000;
	every_failure(&m, &src, op_reserve, &want);
	alloc_calls = 0;
	alloc_fail_at = 0;
	for (uint64_t k = 1; src.n < want; k += 3) {
		CHECK(latch_map_insert(&m, k, val(k, 3)) == 0,
		      "insert after reserve(%zu) at size %zu", want, src.n);
		model_insert(&src, k, val(k, 3));
		if (src.n % 4096 == 0)
			check_map(&m, &src);
	}
	CHECK(alloc_calls == 0, "%ld allocations after reserve()", alloc_calls);
	alloc_fail_at = -1;
	check_map(&m, &src);
	check_readers(&m, &src, &rng, 256);
	/*
	 * A remove never allocates (a lone erase reserves nothing), not even
	 * from a new map whose bulk load of 16 entries left no inner node free.
	 */
	latch_map_destroy(&m);
	latch_map_init(&m);
	CHECK(latch_map_load_sorted(&m, src.keys, src.values, 16) == 0, "load_sorted of 16");
	alloc_calls = 0;
	alloc_fail_at = 0;
	for (size_t i = 0; i < 16; i++) {
		void *v = NULL;

		CHECK(latch_map_remove(&m, src.keys[i], i % 2 ? &v : NULL) == 0 &&
		          (i % 2 == 0 || v == src.values[i]),
		      "remove with the allocator failing");
	}
	CHECK(alloc_calls == 0 && latch_map_size(&m) == 0, "%ld allocations by remove()",
	      alloc_calls);
	alloc_fail_at = -1;
	latch_btree_alloc_hook_ = real_alloc;
	latch_map_destroy(&m);
	model_free(&md);
	model_free(&src);
}

static const char *const count_names[] = {
	[LATCH_BTREE_COUNT_SCALAR] = "scalar",
	[LATCH_BTREE_COUNT_AVX2] = "AVX2",
	[LATCH_BTREE_COUNT_AVX512] = "AVX-512",
};

/*
 * Make every descent use the in-node count @name names (NULL or "": the
 * best the CPU has, chosen when the library loaded).  Returns 0, 77 when
 * this build or CPU lacks it, or 2 for an unknown name.
 */
static int choose_count(const char *name)
{
	enum latch_btree_count count;

	if (!name || !*name)
		return 0;
	if (strcmp(name, "scalar") == 0) {
		count = LATCH_BTREE_COUNT_SCALAR;
	} else if (strcmp(name, "avx2") == 0) {
		count = LATCH_BTREE_COUNT_AVX2;
	} else {
		fprintf(stderr, "test-map: LATCH_MAP_COUNT=%s: expected scalar or avx2\n", name);
		return 2;
	}
	if (latch_btree_use_count_(count) != 0) {
		printf("test-map: skipped: this build or CPU has no %s in-node count "
		       "(not x86-64, ThreadSanitizer, or a CPU without it)\n",
		       count_names[count]);
		return 77;
	}
	return 0;
}

int main(void)
{
	long max = test_env_long("LATCH_MAP_MAX", 100000);

	full_check_max = test_env_long("LATCH_MAP_FULL_CHECK", 3000);
	int status = choose_count(getenv("LATCH_MAP_COUNT"));

	if (status != 0)
		return status;
	test_empty();
	test_random(40, 20000);
	test_random(700, 30000);
	test_grow_shrink(5000, 1);
	test_grow_shrink(5000, -1);
	test_grow_shrink(3000, 0);
	test_grow_shrink((size_t)max, 0);
	test_load_sorted();
	test_commit();
	test_enomem();
	printf("test-map: passed, %s in-node count\n", count_names[latch_btree_count_in_use()]);
	return 0;
}
