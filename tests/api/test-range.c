/* SPDX-License-Identifier: MIT */
/*
 * The range map against a reference model (the owner of every address of
 * a small address space), after every operation of random sequences:
 * latch_range_insert() (valid, empty or inverted, overlapping, already
 * in the map), latch_range_erase() (in the map or not), and
 * latch_range_commit() batches of up to 24 changes (beyond the 16 planned
 * on the stack) that replace ranges by overlapping ones, with now and
 * then one bad change.
 *
 * Every call must return what the model predicts; after an error the map
 * must be unchanged.  After every call: both copies are valid red-black
 * trees with the same ranges in order, each copy's bounds are the lowest
 * start and highest end, and latch_range_find() and latch_range_lower()
 * give the model's answer for every address (and past the end).
 *
 * Overrides: LATCH_TEST_RANGE_OPS (operations per seed, default 3000),
 * LATCH_TEST_SEEDS (default 3).
 */
#include <errno.h>
#include <string.h>

#include "range-model.h"

#define MAX_BATCH 24

/* Give range @i random bounds: usually valid, sometimes empty or inverted. */
static void reshape(struct range_model *rm, long i, struct test_rng *rng)
{
	uintptr_t start = test_rng_below(rng, SPACE);
	uintptr_t len = test_rng_below(rng, 10) == 0 ? 0 : 1 + test_rng_below(rng, 24);

	if (test_rng_below(rng, 20) == 0) /* inverted */
		len = 0, start += 3;
	rm->ranges[i].start = start;
	rm->ranges[i].end = start + len < (uintptr_t)SPACE ? start + len : (uintptr_t)SPACE;
}

/*
 * The result the model predicts for a batch, and (when 0) the model after
 * it: every -EINVAL condition is checked before every -ENOENT one, and
 * those before every -EEXIST one.
 */
static int model_commit(struct range_model *rm, const struct latch_range_change *c, size_t n)
{
	struct range_model after = *rm;
	long seen[POOL] = { 0 };

	for (size_t k = 0; k < n; k++) {
		long i = c[k].range ? c[k].range - rm->ranges : -1;

		if (i < 0 || (c[k].op == LATCH_TREE_INSERT && c[k].range->start >= c[k].range->end))
			return -EINVAL;
		if (c[k].op == LATCH_TREE_ERASE && seen[i]++)
			return -EINVAL;
	}
	for (size_t k = 0; k < n; k++)
		if (c[k].op == LATCH_TREE_ERASE && !rm->linked[c[k].range - rm->ranges])
			return -ENOENT;
	for (size_t k = 0; k < n; k++)
		if (c[k].op == LATCH_TREE_ERASE)
			after.linked[c[k].range - rm->ranges] = false;
	range_model_paint(&after);
	for (size_t k = 0; k < n; k++) {
		long i = c[k].range - rm->ranges;

		if (c[k].op != LATCH_TREE_INSERT)
			continue;
		if (rm->linked[i])
			return -EEXIST;
		for (uintptr_t a = c[k].range->start; a < c[k].range->end; a++) {
			if (after.owner[a] >= 0)
				return -EEXIST;
			after.owner[a] = i;
		}
		after.linked[i] = true;
	}
	range_model_paint(&after);
	*rm = after;
	return 0;
}

static enum latch_tree_op flip(enum latch_tree_op op)
{
	return op == LATCH_TREE_ERASE ? LATCH_TREE_INSERT : LATCH_TREE_ERASE;
}

/* Run one batch (or single call) and check the result and the map. */
static void apply(struct latch_range_map *m, struct range_model *rm,
                  const struct latch_range_change *c, size_t n, int how, long *errors)
{
	int expected = model_commit(rm, c, n), got;

	if (how == 0) { /* latch_range_insert */
		got = latch_range_insert(m, c[0].range);
	} else if (how == 1) { /* latch_range_erase */
		got = latch_range_erase(m, c[0].range);
	} else {
		got = latch_range_commit(m, c, n);
	}
	CHECK(got == expected, "%s of %zu changes returned %d, expected %d",
	      how == 0   ? "insert"
	      : how == 1 ? "erase"
	                 : "commit",
	      n, got, expected);
	*errors += got != 0;
	range_model_check(m, rm);
}

static long run(unsigned long long seed, long ops)
{
	static struct range_model rm;
	struct latch_range_map m = LATCH_RANGE_MAP_INIT;
	struct test_rng rng = { seed * 0x9E3779B97F4A7C15ull + 5 };
	struct latch_range_change batch[POOL];
	long errors = 0;
	size_t n;

	memset(&rm, 0, sizeof(rm));
	range_model_paint(&rm);
	range_model_check(&m, &rm);

	for (long op = 0; op < ops; op++) {
		long i = (long)test_rng_below(&rng, POOL);
		unsigned long kind = test_rng_below(&rng, 3);

		if (kind == 0) {
			/* Insert: a fresh shape for a free range; as is for a linked one. */
			if (!rm.linked[i])
				reshape(&rm, i, &rng);
			batch[0] = (struct latch_range_change){ LATCH_TREE_INSERT, &rm.ranges[i] };
			apply(&m, &rm, batch, 1, 0, &errors);
		} else if (kind == 1) { /* Erase: -ENOENT when the range is not in the map. */
			batch[0] = (struct latch_range_change){ LATCH_TREE_ERASE, &rm.ranges[i] };
			apply(&m, &rm, batch, 1, 1, &errors);
		} else {
			n = (size_t)test_rng_below(&rng, MAX_BATCH + 1);

			for (size_t k = 0; k < n; k++) {
				long j = (long)test_rng_below(&rng, POOL);

				if (!rm.linked[j])
					reshape(&rm, j, &rng);
				batch[k] =
				    (struct latch_range_change){ rm.linked[j] ? LATCH_TREE_ERASE
					                                      : LATCH_TREE_INSERT,
					                         &rm.ranges[j] };
			}
			if (n && test_rng_below(&rng, 8) == 0) { /* one bad change */
				size_t k = (size_t)test_rng_below(&rng, n);
				unsigned long bad = test_rng_below(&rng, 3);

				if (bad == 0)
					batch[k].range = NULL;
				else if (bad == 1)
					batch[k].op = flip(batch[k].op);
				else /* the same range again, with the other op */
					batch[n++] = (struct latch_range_change){ flip(batch[k].op),
						                                  batch[k].range };
			}
			apply(&m, &rm, batch, n, 2, &errors);
		}
	}
	/* Empty the map with one batch. */
	n = 0;
	for (long i = 0; i < POOL; i++)
		if (rm.linked[i])
			batch[n++] = (struct latch_range_change){ LATCH_TREE_ERASE, &rm.ranges[i] };
	apply(&m, &rm, batch, n, 2, &errors);
	CHECK(rm.nlinked == 0, "the final batch empties the map");
	return errors;
}

int main(void)
{
	long ops = test_env_long("LATCH_TEST_RANGE_OPS", 3000);
	long seeds = test_env_long("LATCH_TEST_SEEDS", 3), errors = 0;
	struct latch_range_map m;
	struct latch_range r = { .start = 10, .end = 20 };

	/* latch_range_map_init() gives a working empty map, as the initialiser does. */
	latch_range_map_init(&m);
	CHECK(latch_range_find(&m, 10) == NULL && latch_range_lower(&m, 10) == NULL, "empty map");
	CHECK(latch_range_insert(&m, &r) == 0 && latch_range_find(&m, 15) == &r, "insert, find");
	CHECK(latch_range_find(&m, 20) == NULL && latch_range_lower(&m, 20) == &r, "end excluded");
	CHECK(latch_range_erase(&m, &r) == 0, "erase");
	CHECK(latch_range_find(&m, 15) == NULL && latch_range_lower(&m, 15) == NULL, "erased");
	CHECK(latch_range_erase(&m, &r) == -ENOENT && latch_range_erase(&m, NULL) == -EINVAL,
	      "erase of a range not in the map");

	for (long seed = 0; seed < seeds; seed++)
		errors += run((unsigned long long)seed, ops);
	CHECK(errors > 0, "the random sequences produced no error case at all");
	printf("test-range: %ld operations (%ld rejected) checked: all passed\n", seeds * ops,
	       errors);
	return 0;
}
