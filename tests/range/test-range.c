/* SPDX-License-Identifier: MIT */
/*
 * The range map against a reference model (tests/api/range-model.h),
 * after every operation of random sequences over a small address space:
 * latch_range_insert() (valid, empty or inverted, overlapping), erase
 * and remove (present or not), erase_if (the range as it is, or with
 * another end or value, or absent), store (evicting none, one or many
 * ranges across leaves, with room for all or too few of them, or
 * inverted), commit() batches of up to 24 changes mixing the four ops
 * (beyond the 16 of the stack undo log, and stores that evict enough to
 * outgrow the log) whose changes interact, with now and then a bad
 * change, and load_sorted() (sometimes unsorted, empty or overlapping).
 * Every call must return what the model predicts (with *failed,
 * *collision, the removed range and the evicted ones); after an error
 * the map must be unchanged.  After every
 * call: both copies are valid B+-trees holding the model's ranges, with
 * every inner bound equal to its child's first start (the separator
 * invariant), and every reader call agrees with the model at every
 * address.
 *
 * Then: the separator test (erase and re-insert around every leaf
 * boundary of a large map), allocation failure injected at every
 * allocation, and memory per range.
 *
 * Overrides: LATCH_TEST_RANGE_OPS (operations per seed, default 3000),
 * LATCH_TEST_SEEDS (default 3).
 */
#include "range-model.h"

#define SPACE     512u
#define MAX_BATCH 24

static struct test_rng rng = { 12345 };

static void *value_of(uintptr_t start)
{
	return (void *)(start * 4 + 1);
}

/* A random range: usually valid, sometimes empty or inverted. */
static struct latch_range random_range(void)
{
	uintptr_t start = test_rng_below(&rng, SPACE);
	uintptr_t len = test_rng_below(&rng, 10) == 0 ? 0 : 1 + test_rng_below(&rng, 24);

	if (test_rng_below(&rng, 20) == 0) /* inverted */
		return (struct latch_range){ start + 3, start, NULL };
	return (struct latch_range){ start, start + len, value_of(start) };
}

/* A start in the model (or, sometimes, not). */
static uintptr_t some_start(const struct range_model *rm)
{
	if (rm->n && test_rng_below(&rng, 6))
		return rm->r[test_rng_below(&rng, (unsigned long)rm->n)].start;
	return test_rng_below(&rng, SPACE);
}

static void one_insert(struct latch_range_map *m, struct range_model *rm, long *errors)
{
	struct latch_range x = random_range(), hit = { 0, 0, NULL }, want = { 1, 1, NULL };
	int expect = range_model_insert(rm, x, &want);
	int got = latch_range_insert(m, x.start, x.end, x.value, &hit);

	CHECK(got == expect, "insert [%lu, %lu): %d, expected %d", (unsigned long)x.start,
	      (unsigned long)x.end, got, expect);
	CHECK(got != -EEXIST || range_eq(hit, want), "insert: wrong collision");
	*errors += got != 0;
}

static void one_erase(struct latch_range_map *m, struct range_model *rm, long *errors)
{
	uintptr_t start = some_start(rm);
	int expect = range_model_erase(rm, start), got = latch_range_erase(m, start);

	CHECK(got == expect, "erase(%lu): %d, expected %d", (unsigned long)start, got, expect);
	*errors += got != 0;
}

static void one_remove(struct latch_range_map *m, struct range_model *rm, long *errors)
{
	uintptr_t start = some_start(rm);
	struct latch_range want = { 1, 2, NULL }, got = { 3, 4, NULL };
	bool out = test_rng_below(&rng, 4) != 0;
	int expect = range_model_remove(rm, start, &want);
	int r = latch_range_remove(m, start, out ? &got : NULL);

	CHECK(r == expect, "remove(%lu): %d, expected %d", (unsigned long)start, r, expect);
	CHECK(!out || r || range_eq(got, want), "remove(%lu): wrong range copied out",
	      (unsigned long)start);
	CHECK(!out || !r || (got.start == 3 && got.end == 4), "a failed remove touched *removed");
	*errors += r != 0;
}

/* A range the model holds, or one like it with another end or value, or none at its start. */
static struct latch_range some_record(const struct range_model *rm)
{
	struct latch_range x = { some_start(rm), 0, NULL };
	size_t i = range_model_at(rm, x.start);

	if (i < rm->n && rm->r[i].start == x.start)
		x = rm->r[i];
	else
		x.end = x.start + 1 + test_rng_below(&rng, 9), x.value = value_of(x.start);
	switch (test_rng_below(&rng, 6)) {
	case 0:
		x.end += 1 + test_rng_below(&rng, 3); /* replaced: another end */
		break;
	case 1:
		x.value = (void *)((uintptr_t)x.value + 2); /* replaced: another value */
		break;
	}
	return x;
}

static void one_erase_if(struct latch_range_map *m, struct range_model *rm, long *errors)
{
	struct latch_range x = some_record(rm);
	int expect = range_model_erase_if(rm, x), got = latch_range_erase_if(m, &x);

	CHECK(got == expect, "erase_if([%lu, %lu)): %d, expected %d", (unsigned long)x.start,
	      (unsigned long)x.end, got, expect);
	*errors += got != 0;
}

/* A range to store: usually short, sometimes long enough to evict many across leaves. */
static struct latch_range store_range(void)
{
	struct latch_range x = random_range();
	unsigned long how = test_rng_below(&rng, 8);

	if (x.start < x.end && how == 0)
		x.end = x.start + 1 + test_rng_below(&rng, SPACE / 2);
	else if (x.start < x.end && how == 1)
		x.end = x.start + 1 + test_rng_below(&rng, 80);
	return x;
}

static void one_store(struct latch_range_map *m, struct range_model *rm, long *errors)
{
	enum { ROOM = SPACE + 1 };
	static struct latch_range got[ROOM + 1], want[ROOM];
	struct latch_range x = store_range();
	size_t max = test_rng_below(&rng, 3) ? test_rng_below(&rng, 5) : ROOM, n = 777, n_want;
	bool out = max || test_rng_below(&rng, 2), count = test_rng_below(&rng, 5) != 0;
	int expect, r;

	for (size_t i = 0; i <= ROOM; i++)
		got[i] = (struct latch_range){ 5, 6, NULL };
	expect = range_model_store(rm, x, want, max, &n_want);
	r = latch_range_store(m, x.start, x.end, x.value, out ? got : NULL, max, count ? &n : NULL);
	CHECK(r == expect, "store [%lu, %lu) with room for %zu: %d, expected %d",
	      (unsigned long)x.start, (unsigned long)x.end, max, r, expect);
	CHECK(!count || n == n_want, "store: %zu evicted, expected %zu", n, n_want);
	for (size_t i = 0; out && i < max && i < n_want && (r == 0 || r == -ENOSPC); i++)
		CHECK(range_eq(got[i], want[i]), "store: evicted range %zu", i);
	for (size_t i = n_want < max ? n_want : max; i <= ROOM; i++)
		CHECK(got[i].start == 5 && got[i].end == 6, "store wrote evicted[%zu]", i);
	*errors += r != 0;
}

static void one_commit(struct latch_range_map *m, struct range_model *rm, long *errors)
{
	struct latch_range_change c[MAX_BATCH + 1];
	size_t n = (size_t)test_rng_below(&rng, MAX_BATCH + 1), failed = 12345, want = 54321;
	int expect, got;

	for (size_t k = 0; k < n; k++) {
		unsigned long how = test_rng_below(&rng, 8);

		if (how < 3) {
			c[k] = (struct latch_range_change){ LATCH_RANGE_ERASE,
				                            { some_start(rm), 0, NULL } };
		} else if (how == 3) {
			c[k] = (struct latch_range_change){ LATCH_RANGE_ERASE_IF, some_record(rm) };
		} else if (how == 4) {
			c[k] = (struct latch_range_change){ LATCH_RANGE_STORE, store_range() };
		} else {
			c[k] = (struct latch_range_change){ LATCH_RANGE_INSERT, random_range() };
			/* Often in a place an earlier change of the batch frees. */
			if (k && c[k - 1].op == LATCH_RANGE_ERASE && test_rng_below(&rng, 2))
				c[k].range.start = c[k - 1].range.start,
				c[k].range.end = c[k].range.start + 1 + test_rng_below(&rng, 9);
		}
	}
	if (n && test_rng_below(&rng, 16) == 0) /* an unknown op */
		c[test_rng_below(&rng, (unsigned long)n)].op = (enum latch_range_op)7;
	expect = range_model_commit(rm, c, n, &want);
	got = latch_range_commit(m, c, n, &failed);
	CHECK(got == expect, "commit of %zu: %d, expected %d", n, got, expect);
	CHECK(!got || failed == want, "commit: failed = %zu, expected %zu", failed, want);
	CHECK(got || failed == 12345, "a commit that succeeds must not touch *failed");
	*errors += got != 0;
}

static void one_load(struct latch_range_map *m, struct range_model *rm, long *errors)
{
	struct latch_range src[64];
	size_t n = (size_t)test_rng_below(&rng, 64), failed = 0, want = n;
	uintptr_t at = test_rng_below(&rng, 16);
	int expect = 0, got;

	for (size_t i = 0; i < n; i++) {
		at += test_rng_below(&rng, 6);
		src[i] = (struct latch_range){ at, at + 1 + test_rng_below(&rng, 7), value_of(at) };
		at = src[i].end;
	}
	if (n && test_rng_below(&rng, 3) == 0) { /* one bad range */
		size_t k = (size_t)test_rng_below(&rng, (unsigned long)n);
		unsigned long how = test_rng_below(&rng, 3);

		if (how == 0)
			src[k].end = src[k].start; /* empty */
		else if (k > 0 && how == 1)
			src[k].start =
			    src[k - 1].start - (src[k - 1].start > 0); /* unsorted or equal */
		else if (k > 0)
			src[k].start = src[k - 1].end - 1; /* overlaps the one before */
	}
	for (size_t i = 0; i < n && !expect; i++) {
		want = i;
		if (src[i].start >= src[i].end || (i && src[i].start < src[i - 1].start))
			expect = -EINVAL;
		else if (i && src[i].start < src[i - 1].end)
			expect = -EEXIST;
	}
	got = latch_range_load_sorted(m, src, n, &failed);
	CHECK(got == expect, "load_sorted of %zu: %d, expected %d", n, got, expect);
	CHECK(!got || failed == want, "load_sorted: failed = %zu, expected %zu", failed, want);
	if (!got) {
		memcpy(rm->r, src, n * sizeof(*src));
		rm->n = n;
	}
	*errors += got != 0;
}

static long run(long ops)
{
	struct latch_range_map m;
	struct range_model rm;
	long errors = 0;

	CHECK(latch_range_map_init(&m) == 0, "init");
	range_model_init(&rm, 4 * SPACE);
	range_model_check(&m, &rm, SPACE);
	for (long op = 0; op < ops; op++) {
		unsigned long kind = test_rng_below(&rng, 28);

		if (kind < 8)
			one_insert(&m, &rm, &errors);
		else if (kind < 11)
			one_erase(&m, &rm, &errors);
		else if (kind < 13)
			one_remove(&m, &rm, &errors);
		else if (kind < 15)
			one_erase_if(&m, &rm, &errors);
		else if (kind < 20)
			one_store(&m, &rm, &errors);
		else if (kind < 27)
			one_commit(&m, &rm, &errors);
		else
			one_load(&m, &rm, &errors);
		range_model_check(&m, &rm, SPACE);
	}
	latch_range_map_destroy(&m);
	free(rm.r);
	return errors;
}

/* ---- the separator invariant around node boundaries ---- */

/* Append the first start of every leaf under @ref, in order. */
static void leaf_starts(uintptr_t ref, uintptr_t *out, size_t *n)
{
	const struct latch_btree_node *node = latch_btree_node_(ref);
	unsigned c = 1;

	if (ref & LATCH_BTREE_LEAF) {
		out[(*n)++] = (uintptr_t)node->key[0];
		return;
	}
	while (c < LATCH_BTREE_FANOUT && node->key[c] > node->key[c - 1])
		c++;
	for (unsigned i = 0; i < c; i++)
		leaf_starts(node->slot[i], out, n);
}

static void must(int got, int want, const char *what, uintptr_t at)
{
	CHECK(got == want, "%s at boundary %lu: %d, expected %d", what, (unsigned long)at, got,
	      want);
}

/* The tree and every reader call at each address near @b. */
static void check_near(const struct latch_range_map *m, const struct range_model *rm, uintptr_t b)
{
	range_model_check_tree(m, rm);
	for (uintptr_t a = b - 25; a < b + 25; a++)
		range_model_check_at(m, rm, a);
}

/*
 * Ranges [10i, 10i + 10), adjacent, built by @how (0: load_sorted, full
 * leaves; 1: inserts in random order).  At every leaf boundary b: erase
 * the range starting at b (the separator's own range), insert a shorter
 * one there, then replace the two ranges meeting at b by one straddling
 * the old separator value, then restore them; check the invariants and
 * every lookup near b after each step.  A stale separator (GCC PR119151)
 * would send lookups of the straddling range to the wrong leaf.
 */
static void separator_test(int how)
{
	enum { N = 3000 };
	static struct latch_range src[N];
	static uintptr_t bounds[N];
	struct latch_range_map m;
	struct range_model rm;
	struct latch_range hit;
	size_t nb = 0, failed;

	CHECK(latch_range_map_init(&m) == 0, "init");
	range_model_init(&rm, N + 8);
	for (size_t i = 0; i < N; i++)
		src[i] = (struct latch_range){ 100 + 10 * i, 110 + 10 * i, value_of(100 + 10 * i) };
	if (how == 0) {
		CHECK(latch_range_load_sorted(&m, src, N, &failed) == 0, "load");
	} else {
		for (size_t i = N; i-- > 1;) { /* shuffle, then insert */
			size_t j = (size_t)test_rng_below(&rng, (unsigned long)i + 1);
			struct latch_range t = src[i];

			src[i] = src[j], src[j] = t;
		}
		for (size_t i = 0; i < N; i++)
			CHECK(latch_range_insert(&m, src[i].start, src[i].end, src[i].value,
			                         NULL) == 0,
			      "insert");
		for (size_t i = 0; i < N; i++)
			src[i] = (struct latch_range){ 100 + 10 * i, 110 + 10 * i,
				                       value_of(100 + 10 * i) };
	}
	memcpy(rm.r, src, sizeof(src));
	rm.n = N;
	range_model_check(&m, &rm, 100 + 10 * N);
	leaf_starts(latch_btree_of_range(&m)->copy[0].root, bounds, &nb);
	CHECK(nb > 100, "only %zu leaves", nb);
	for (size_t k = 1; k < nb; k++) {
		uintptr_t b = bounds[k];
		void *vb = value_of(b), *va = value_of(b - 10);

		must(latch_range_erase(&m, b), 0, "erase", b);
		range_model_erase(&rm, b);
		check_near(&m, &rm, b);
		must(latch_range_insert(&m, b + 2, b + 4, vb, NULL), 0, "insert inside", b);
		range_model_insert(&rm, (struct latch_range){ b + 2, b + 4, vb }, &hit);
		check_near(&m, &rm, b);
		/* One range across the old separator value. */
		const struct latch_range_change straddle[] = {
			{ LATCH_RANGE_ERASE, { b - 10, 0, NULL } },
			{ LATCH_RANGE_ERASE, { b + 2, 0, NULL } },
			{ LATCH_RANGE_INSERT, { b - 7, b + 6, va } },
		};
		must(latch_range_commit(&m, straddle, 3, &failed), 0, "straddle", b);
		range_model_commit(&rm, straddle, 3, &failed);
		check_near(&m, &rm, b);
		must(latch_range_insert(&m, b, b + 1, vb, &hit), -EEXIST, "collide", b);
		CHECK(hit.start == b - 7 && hit.end == b + 6,
		      "collision with the straddling range");
		const struct latch_range_change restore[] = {
			{ LATCH_RANGE_ERASE, { b - 7, 0, NULL } },
			{ LATCH_RANGE_INSERT, { b, b + 10, vb } },
			{ LATCH_RANGE_INSERT, { b - 10, b, va } },
		};
		must(latch_range_commit(&m, restore, 3, &failed), 0, "restore", b);
		range_model_commit(&rm, restore, 3, &failed);
		check_near(&m, &rm, b);
	}
	range_model_check(&m, &rm, 100 + 10 * N);
	latch_range_map_destroy(&m);
	free(rm.r);
	printf("test-range: separators checked at %zu leaf boundaries (%s)\n", nb - 1,
	       how ? "random inserts" : "bulk load");
}

/* ---- allocation failure (counting_alloc: map-check.h) ---- */

struct op {
	int (*run)(struct latch_range_map *m, const struct op *op);
	const struct latch_range_change *c;
	const struct latch_range *src;
	size_t n;
};

static int op_commit(struct latch_range_map *m, const struct op *op)
{
	size_t failed = 0;
	int r = latch_range_commit(m, op->c, op->n, &failed);

	CHECK(r == 0 || failed == op->n, "-ENOMEM must set *failed to n");
	return r;
}

/* A store of op->c[0].range with room for 64 evictions. */
static int op_store(struct latch_range_map *m, const struct op *op)
{
	struct latch_range out[64];
	size_t k = 99;
	int r = latch_range_store(m, op->c->range.start, op->c->range.end, op->c->range.value, out,
	                          64, &k);

	CHECK(r == 0 || k == 0, "-ENOMEM must set *n_evicted to 0");
	CHECK(r || k == op->n, "the store evicted %zu ranges, expected %zu", k, op->n);
	return r;
}

static int op_load(struct latch_range_map *m, const struct op *op)
{
	size_t failed = 0;
	int r = latch_range_load_sorted(m, op->src, op->n, &failed);

	CHECK(r == 0 || failed == op->n, "-ENOMEM must set *failed to n");
	return r;
}

static int op_reserve(struct latch_range_map *m, const struct op *op)
{
	return latch_range_reserve(m, op->n);
}

/*
 * Run @op with the k-th allocation failing, for k = 0, 1, ... until it
 * succeeds; every failure must return -ENOMEM and leave the map as the
 * model says.  Returns how many allocations the successful run made.
 */
static long every_failure(struct latch_range_map *m, const struct range_model *rm,
                          const struct op *op)
{
	for (long k = 0;; k++) {
		int r;

		alloc_calls = 0;
		alloc_fail_at = k;
		r = op->run(m, op);
		alloc_fail_at = -1;
		if (r == 0)
			return alloc_calls;
		CHECK(r == -ENOMEM, "allocation failure %ld gave %d", k, r);
		range_model_check_tree(m, rm);
		for (unsigned p = 0; p < 64; p++)
			range_model_check_at(m, rm, test_rng_below(&rng, 1u << 20));
	}
}

static void test_enomem(void)
{
	enum { BATCH = 40, LOAD = 20000 };
	static struct latch_range_change c[BATCH];
	static struct latch_range src[LOAD];
	struct latch_range_map m;
	struct range_model rm;
	struct latch_range hit;
	size_t failed;
	long allocs;

	real_alloc = latch_btree_alloc_hook_;
	latch_btree_alloc_hook_ = counting_alloc;
	CHECK(latch_range_map_init(&m) == 0, "init");
	range_model_init(&rm, 2 * LOAD);
	/* Single inserts: each time a chunk runs out. */
	for (unsigned i = 0; i < 1500; i++) {
		uintptr_t start = (uintptr_t)test_rng_below(&rng, 1u << 20) * 16;
		struct latch_range_change one = { LATCH_RANGE_INSERT,
			                          { start, start + 8, value_of(start) } };
		const struct op op = { op_commit, &one, NULL, 1 };

		if (range_model_insert(&rm, one.range, &hit) != 0)
			continue;
		range_model_erase(&rm, start); /* what a failure must leave */
		every_failure(&m, &rm, &op);
		range_model_insert(&rm, one.range, &hit);
	}
	range_model_check_tree(&m, &rm);
	/* A batch: its undo log and chunks, failing at each; it erases and inserts. */
	for (size_t k = 0; k < BATCH; k++) {
		uintptr_t start = k % 2 ? rm.r[k].start : ((uintptr_t)k << 24) + 8;

		c[k] = (struct latch_range_change){ k % 2 ? LATCH_RANGE_ERASE : LATCH_RANGE_INSERT,
			                            { start, start + 4, value_of(start) } };
	}
	const struct op batch = { op_commit, c, NULL, BATCH };
	allocs = every_failure(&m, &rm, &batch);
	CHECK(allocs >= 1, "the batch made no allocation: nothing was injected");
	CHECK(range_model_commit(&rm, c, BATCH, &failed) == 0, "model batch");
	range_model_check_tree(&m, &rm);
	/* A store that evicts ranges across several leaves: its insert's chunks. */
	for (int round = 0; round < 20; round++) {
		size_t at = 100 + (size_t)test_rng_below(&rng, 600);
		struct latch_range_change one = { LATCH_RANGE_STORE,
			                          { rm.r[at].start + 1, rm.r[at + 29].start + 1,
			                            value_of(rm.r[at].start) } };
		const struct op store = { op_store, &one, NULL, 30 };

		every_failure(&m, &rm, &store);
		CHECK(range_model_store(&rm, one.range, NULL, 64, &failed) == 0 && failed == 30,
		      "model store");
	}
	range_model_check_tree(&m, &rm);
	/*
	 * A batch of stores that evict 12 ranges each (outgrowing its undo
	 * log, each reserving for its evictions' undo), conditional erases,
	 * erases and inserts: failing at each allocation.
	 */
	for (size_t j = 0; j < 6; j++) {
		const struct latch_range *r = &rm.r[300 + 40 * j];

		c[4 * j] = (struct latch_range_change){ LATCH_RANGE_STORE,
			                                { r[0].start, r[12].start, value_of(j) } };
		c[4 * j + 1] = (struct latch_range_change){ LATCH_RANGE_ERASE_IF, r[20] };
		c[4 * j + 2] = (struct latch_range_change){ LATCH_RANGE_ERASE, r[25] };
		c[4 * j + 3] = (struct latch_range_change){
			LATCH_RANGE_INSERT, { r[30].start + 8, r[30].start + 12, value_of(j) }
		};
	}
	const struct op stores = { op_commit, c, NULL, 24 };
	allocs = every_failure(&m, &rm, &stores);
	CHECK(allocs >= 2, "the batch of stores made only %ld allocations", allocs);
	CHECK(range_model_commit(&rm, c, 24, &failed) == 0, "model batch of stores");
	range_model_check_tree(&m, &rm);
	/* load_sorted: scratch and chunks. */
	for (size_t i = 0; i < LOAD; i++)
		src[i] = (struct latch_range){ 3 * i, 3 * i + 2, value_of(i) };
	const struct op load = { op_load, NULL, src, LOAD };
	allocs = every_failure(&m, &rm, &load);
	CHECK(allocs >= 2, "load_sorted made only %ld allocations", allocs);
	memcpy(rm.r, src, sizeof(src));
	rm.n = LOAD;
	range_model_check_tree(&m, &rm);
	/* reserve, then no allocation by single changes up to that size. */
	const struct op reserve = { op_reserve, NULL, NULL, 2 * LOAD };
	every_failure(&m, &rm, &reserve);
	alloc_calls = 0;
	alloc_fail_at = 0;
	for (uintptr_t s = 3 * LOAD; rm.n < 2 * LOAD; s += 2) {
		CHECK(latch_range_insert(&m, s, s + 1, value_of(s), NULL) == 0,
		      "insert after reserve at size %zu", rm.n);
		range_model_insert(&rm, (struct latch_range){ s, s + 1, value_of(s) }, &hit);
	}
	CHECK(alloc_calls == 0, "%ld allocations after reserve()", alloc_calls);
	alloc_fail_at = -1;
	range_model_check_tree(&m, &rm);
	latch_btree_alloc_hook_ = real_alloc;
	latch_range_map_destroy(&m);
	free(rm.r);
}

/*
 * An erase, a remove and a conditional erase never allocate: not with the
 * allocator failing, and not with it working, not even when the pools are
 * exactly full (a bulk load of 16 ranges fills one leaf per copy from a
 * fresh 64-node chunk).
 */
static void test_erase_allocates_nothing(void)
{
	struct latch_range src[16];
	struct latch_range_map m;
	struct latch_range r, stale;

	for (uintptr_t i = 0; i < 16; i++)
		src[i] =
		    (struct latch_range){ 0x1000 * (i + 1), 0x1000 * (i + 1) + 0x800, value_of(i) };
	real_alloc = latch_btree_alloc_hook_;
	latch_btree_alloc_hook_ = counting_alloc;
	CHECK(latch_range_map_init(&m) == 0, "init");
	CHECK(latch_range_load_sorted(&m, src, 16, NULL) == 0, "load_sorted of 16 ranges");
	alloc_calls = 0;
	alloc_fail_at = 0; /* every allocation from now on fails */
	CHECK(latch_range_erase(&m, src[0].start) == 0, "erase with the allocator failing");
	CHECK(latch_range_size(&m) == 15 && !latch_range_find(&m, src[0].start, &r),
	      "the erase did not happen");
	CHECK(latch_range_remove(&m, src[1].start, &r) == 0 && range_eq(r, src[1]),
	      "remove with the allocator failing");
	stale = src[2];
	stale.value = value_of(99);
	CHECK(latch_range_erase_if(&m, &stale) == -ESTALE, "erase_if of a replaced range");
	CHECK(latch_range_erase_if(&m, &src[2]) == 0, "erase_if with the allocator failing");
	CHECK(latch_range_size(&m) == 13 && !latch_range_find(&m, src[2].start, &r),
	      "the remove or the erase_if did not happen");
	alloc_fail_at = -1;
	CHECK(latch_range_erase(&m, src[15].start) == 0, "erase of the last range");
	CHECK(alloc_calls == 0, "erase made %ld allocations", alloc_calls);
	latch_btree_alloc_hook_ = real_alloc;
	latch_range_map_destroy(&m);
}

/*
 * A batch whose store evicts 120000 packed ranges and whose next change
 * is bad: undoing the store re-inserts them, which takes about 200 more
 * leaves than the evictions freed (re-inserted leaves are not packed), so
 * the batch must have reserved them once it knew how many ranges the
 * store evicts: the bulk load of 2^17 ranges fills its leaf chunks
 * exactly, and the batch's own reservation before it starts is one chunk
 * of 64.  The map must come out unchanged, and the store alone must
 * succeed.
 */
static void test_store_undo(void)
{
	enum { N = 1 << 17, EVICT = 120000 };
	static struct latch_range src[N];
	struct latch_range_map m;
	struct range_model rm;
	size_t failed = 0;

	for (size_t i = 0; i < N; i++)
		src[i] = (struct latch_range){ 16 * i, 16 * i + 8, value_of(i) };
	CHECK(latch_range_map_init(&m) == 0, "init");
	range_model_init(&rm, N + 8);
	CHECK(latch_range_load_sorted(&m, src, N, NULL) == 0, "load_sorted");
	memcpy(rm.r, src, sizeof(src));
	rm.n = N;
	const struct latch_range_change c[] = {
		{ LATCH_RANGE_STORE, { 16 * 1000 + 4, 16 * (1000 + EVICT) - 4, value_of(1) } },
		{ LATCH_RANGE_ERASE, { 3, 0, NULL } },
	};
	CHECK(latch_range_commit(&m, c, 2, &failed) == -ENOENT && failed == 1,
	      "the bad change after the store");
	range_model_check_tree(&m, &rm);
	CHECK(latch_range_commit(&m, c, 1, &failed) == 0, "the store alone");
	CHECK(range_model_store(&rm, c[0].range, NULL, 0, &failed) == -ENOSPC && failed == EVICT &&
	          range_model_store(&rm, c[0].range, NULL, EVICT, &failed) == 0,
	      "model store");
	range_model_check_tree(&m, &rm);
	for (uintptr_t a = 16 * 990; a < 16 * (1010 + EVICT); a += 1 + a % 13)
		range_model_check_at(&m, &rm, a);
	latch_range_map_destroy(&m);
	free(rm.r);
}

/* ---- memory per range ---- */

static void test_memory(void)
{
	enum { N = 100000 };
	static struct latch_range src[N];
	struct latch_range_map m;
	size_t failed;
	double random, bulk;

	for (size_t i = 0; i < N; i++)
		src[i] = (struct latch_range){ 64 * i, 64 * i + 32, value_of(i) };
	CHECK(latch_range_map_init(&m) == 0, "init");
	for (size_t i = N; i-- > 1;) {
		size_t j = (size_t)test_rng_below(&rng, (unsigned long)i + 1);
		struct latch_range t = src[i];

		src[i] = src[j], src[j] = t;
	}
	for (size_t i = 0; i < N; i++)
		CHECK(latch_range_insert(&m, src[i].start, src[i].end, src[i].value, NULL) == 0,
		      "insert");
	random = map_bytes_per_entry(latch_btree_of_range(&m));
	for (size_t i = 0; i < N; i++)
		src[i] = (struct latch_range){ 64 * i, 64 * i + 32, value_of(i) };
	latch_range_map_destroy(&m);
	CHECK(latch_range_map_init(&m) == 0, "init");
	CHECK(latch_range_load_sorted(&m, src, N, &failed) == 0, "load");
	bulk = map_bytes_per_entry(latch_btree_of_range(&m));
	latch_range_map_destroy(&m);
	printf("test-range: %d ranges: %.1f bytes per range after random inserts, %.1f after "
	       "load_sorted (both copies, free pool nodes included)\n",
	       N, random, bulk);
	CHECK(random <= 72.0 && bulk <= 56.0, "memory per range over budget");
}

int main(void)
{
	long ops = test_env_long("LATCH_TEST_RANGE_OPS", 3000);
	long seeds = test_env_long("LATCH_TEST_SEEDS", 3), errors = 0;
	struct latch_range_map m;
	struct latch_range r, hit;

	CHECK(latch_range_map_init(&m) == 0, "init");
	CHECK(!latch_range_find(&m, 10, &r) && !latch_range_floor(&m, 10, &r) &&
	          !latch_range_first(&m, &r) && !latch_range_last(&m, &r) &&
	          !latch_range_next(&m, 0, &r) && !latch_range_prev(&m, UINTPTR_MAX, &r) &&
	          latch_range_size(&m) == 0,
	      "empty map");
	CHECK(latch_range_insert(&m, 10, 20, &r, NULL) == 0, "insert");
	CHECK(latch_range_find(&m, 15, &r) && r.start == 10 && r.end == 20 && r.value == &r,
	      "find");
	CHECK(latch_range_first(&m, &r) && r.start == 10 && latch_range_last(&m, &r) &&
	          r.start == 10 && r.end == 20,
	      "one range is first and last");
	CHECK(!latch_range_prev(&m, 10, NULL) && !latch_range_next(&m, 10, NULL) &&
	          latch_range_prev(&m, 11, &r) && r.start == 10 &&
	          latch_range_prev(&m, UINTPTR_MAX, &r) && r.start == 10,
	      "one range: nothing before or after it");
	CHECK(!latch_range_find(&m, 20, NULL) && latch_range_floor(&m, 20, NULL), "end excluded");
	CHECK(latch_range_insert(&m, 20, 30, NULL, NULL) == 0, "adjacent ranges are fine");
	CHECK(latch_range_insert(&m, 5, 11, NULL, &hit) == -EEXIST && hit.start == 10,
	      "overlap from below");
	CHECK(latch_range_insert(&m, 5, 5, NULL, NULL) == -EINVAL, "empty range");
	CHECK(latch_range_insert(&m, UINTPTR_MAX - 1, UINTPTR_MAX, NULL, NULL) == 0, "top range");
	CHECK(latch_range_find(&m, UINTPTR_MAX - 1, NULL) &&
	          !latch_range_find(&m, UINTPTR_MAX, NULL),
	      "top range found, UINTPTR_MAX is outside");
	CHECK(!latch_range_next(&m, UINTPTR_MAX - 1, NULL), "nothing after the top range");
	CHECK(latch_range_last(&m, &r) && r.start == UINTPTR_MAX - 1 && r.end == UINTPTR_MAX &&
	          latch_range_prev(&m, UINTPTR_MAX, &r) && r.start == UINTPTR_MAX - 1 &&
	          latch_range_prev(&m, UINTPTR_MAX - 1, &r) && r.start == 20,
	      "last and prev at the top");
	CHECK(latch_range_insert(&m, 0, 1, NULL, NULL) == 0, "a range at 0");
	CHECK(latch_range_first(&m, &r) && r.start == 0 && !latch_range_prev(&m, 0, NULL) &&
	          latch_range_prev(&m, 1, &r) && r.start == 0 && latch_range_prev(&m, 10, &r) &&
	          r.start == 0,
	      "nothing before the range at 0");
	CHECK(latch_range_erase(&m, 10) == 0 && latch_range_erase(&m, 10) == -ENOENT, "erase");
	CHECK(latch_range_erase(&m, 21) == -ENOENT, "erase needs the start");
	CHECK(latch_range_load_sorted(&m, NULL, 0, NULL) == 0 && latch_range_size(&m) == 0,
	      "loading nothing empties the map");
	latch_range_map_destroy(&m);

	for (long seed = 0; seed < seeds; seed++)
		errors += run(ops);
	CHECK(errors > 0, "the random sequences produced no error case at all");
	printf("test-range: %ld operations (%ld rejected) checked against the model\n", seeds * ops,
	       errors);
	separator_test(0);
	separator_test(1);
	test_enomem();
	test_erase_allocates_nothing();
	test_store_undo();
	test_memory();
	printf("test-range: passed\n");
	return 0;
}
