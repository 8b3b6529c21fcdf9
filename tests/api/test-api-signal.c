/* SPDX-License-Identifier: MIT */
/*
 * Same-thread signal storm: a per-thread timer signal interrupts the
 * writer at arbitrary instructions, and the handler, running on the
 * writer's own thread while the update is stopped halfway, checks every
 * answer.  A lock would deadlock there and a seqlock would spin forever;
 * the latch must answer at once and right.  Three phases:
 *
 *  1. range map: stable ranges are always found; a range being inserted
 *     or erased is found or not (either is right mid-update), every other
 *     range exactly as the writer left it; latch_range_floor() likewise.
 *  2. batches: a latch_range_commit() that swaps eight ranges for four
 *     covering the same addresses, a latch_tree_commit() that swaps
 *     sixteen elements for sixteen others with the same keys, and a
 *     latch_tree_replace(): the handler sees one whole side of each swap,
 *     never a mix and never a gap, including through a full walk with
 *     latch_tree_first()/latch_tree_next().
 *  3. latched value: every load is one whole stored value, the last one
 *     stored or the one being stored.
 *
 * Each phase runs until the signal has interrupted an update at least
 * LATCH_TEST_SIGNAL_HITS times (default 1000); the test fails if that
 * takes more than 60 seconds (the check would prove nothing).
 */
#define _GNU_SOURCE

#include <latch/range.h>
#include <latch/value.h>

#include "elem.h"
#include "signal-storm.h"

/* The writer's state, as the handler on its own thread sees it. */
static volatile sig_atomic_t phase, in_update, hits, ticks;

/* Phase 1: 32 stable ranges [100j, 100j+50) and 32 churning [100j+50, 100j+90). */
#define SLOTS 32
/* Each range's value is its own entry here, so an answer names the range it stands for. */
static struct latch_range_map map;
static struct latch_range stable[SLOTS], churn[SLOTS];
static volatile sig_atomic_t present[SLOTS], pending = -1;

/* Phase 2: eight ranges of 16 or four of 32 over [5000, 5128); two generations of
 * sixteen elements with keys 0..15; one element with key 100, replaced back and forth. */
#define NARROW 8
#define WIDE   4
static struct latch_range narrow[NARROW], wide[WIDE];
static volatile sig_atomic_t wide_in;
static struct latch_tree_root tree = LATCH_TREE_ROOT_INIT;
static struct test_elem gen[2][16], swap_elem[2];
static volatile sig_atomic_t gen_in, swap_in;

/* Phase 3: every word of a snapshot holds the same count. */
struct snapshot {
	unsigned long word[11];
	unsigned char tail[5];
};
static LATCH_VALUE(struct snapshot) value;
static volatile sig_atomic_t stored;

/* The entry of the range holding @addr (of the one with the greatest start <= @addr for @lower). */
static const struct latch_range *answer(uintptr_t addr, bool lower)
{
	struct latch_range r;
	bool hit = lower ? latch_range_floor(&map, addr, &r) : latch_range_find(&map, addr, &r);
	const struct latch_range *e = hit ? r.value : NULL;

	SIG_CHECK(!e || (e->start == r.start && e->end == r.end),
	          "a range with a stranger's value");
	return e;
}

static void check_ranges(long j)
{
	const struct latch_range *r = answer((uintptr_t)(100 * j + 60), false);
	const struct latch_range *low = answer((uintptr_t)(100 * j + 95), true);

	SIG_CHECK(answer((uintptr_t)(100 * j + 10), false) == &stable[j],
	          "a stable range was not found");
	SIG_CHECK(answer((uintptr_t)(100 * j + 95), false) == NULL, "a gap was found");
	if (j == pending) {
		SIG_CHECK(r == NULL || r == &churn[j], "a range in flux gave a wrong answer");
		SIG_CHECK(low == &stable[j] || low == &churn[j], "floor of a range in flux");
	} else {
		SIG_CHECK(r == (present[j] ? &churn[j] : NULL),
		          "a churning range gave a wrong answer");
		SIG_CHECK(low == (present[j] ? &churn[j] : &stable[j]), "floor gave a wrong range");
	}
}

static void check_batches(void)
{
	const struct latch_range *first = answer(5001, false);
	bool wide_seen = first == &wide[0];
	const struct latch_tree_node *n;
	long g, key = 0;

	SIG_CHECK(wide_seen || first == &narrow[0], "a batch left a gap in the range map");
	SIG_CHECK(in_update || wide_seen == (wide_in != 0),
	          "the range batch is in the wrong state");
	for (long k = 0; k < NARROW; k++) {
		const struct latch_range *r = answer((uintptr_t)(5001 + 16 * k), false);

		SIG_CHECK(r == (wide_seen ? &wide[k / 2] : &narrow[k]),
		          "a range batch was seen in part");
	}

	n = latch_tree_first(&tree);
	SIG_CHECK(n != NULL, "a tree batch left the tree empty");
	g = test_elem_of(n) == &gen[1][0];
	SIG_CHECK(in_update || g == gen_in, "the tree batch is in the wrong state");
	for (; key < 16; key++, n = latch_tree_next(&tree, n, &test_elem_ops)) {
		SIG_CHECK(test_elem_of(n) == &gen[g][key], "a tree batch was seen in part (walk)");
		SIG_CHECK(test_find(&tree, key) == &gen[g][key], "a tree batch was seen in part");
	}
	SIG_CHECK(test_elem_of(n) == &swap_elem[0] || test_elem_of(n) == &swap_elem[1],
	          "a replaced element was missing from the walk");
	SIG_CHECK(latch_tree_next(&tree, n, &test_elem_ops) == NULL, "the walk did not end");
	n = latch_tree_find(&tree, &swap_elem[0].key, &test_elem_ops);
	SIG_CHECK(n == &swap_elem[0].node || n == &swap_elem[1].node, "a replacement left a gap");
	SIG_CHECK(in_update || n == &swap_elem[swap_in].node,
	          "the replacement is in the wrong state");
}

static void check_value(void)
{
	struct snapshot s;

	latch_value_load(&value, &s);
	for (int i = 0; i < 11; i++)
		SIG_CHECK(s.word[i] == s.word[0], "a torn value (words)");
	for (int i = 0; i < 5; i++)
		SIG_CHECK(s.tail[i] == (unsigned char)s.word[0], "a torn value (tail)");
	SIG_CHECK(s.word[0] == (unsigned long)stored ||
	              (in_update && s.word[0] == (unsigned long)stored + 1),
	          "a value that was never stored, or an old one");
}

static void on_tick(int sig)
{
	static long next;

	(void)sig;
	storm_tick();
	ticks++;
	if (in_update)
		hits++;
	if (phase == 1)
		check_ranges(next++ % SLOTS);
	else if (phase == 2)
		check_batches();
	else if (phase == 3)
		check_value();
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Run @step until the signal interrupted @min_hits updates. */
static void run_phase(int which, void (*step)(long n), long min_hits, const char *name)
{
	double deadline = now() + 60;
	long n = 0;

	hits = 0;
	phase = which;
	while (hits < min_hits) {
		step(n++);
		storm_progress();
		CHECK(n % 1024 || now() < deadline, "%s: only %ld updates interrupted in 60 s",
		      name, (long)hits);
	}
	phase = 0;
	printf("test-api-signal: %s: %ld updates, %ld interrupted mid-update and checked\n", name,
	       n, (long)hits);
	fflush(stdout);
}

static void ranges_step(long n)
{
	long j = n * 7 % SLOTS;

	pending = j;
	in_update = 1;
	if (present[j])
		CHECK(latch_range_erase(&map, churn[j].start) == 0, "erase churn %ld", j);
	else
		CHECK(latch_range_insert(&map, churn[j].start, churn[j].end, &churn[j], NULL) == 0,
		      "insert churn %ld", j);
	in_update = 0;
	present[j] = !present[j];
	pending = -1;
}

static void batches_step(long n)
{
	struct latch_range_change changes[NARROW + WIDE];
	struct latch_tree_change tchanges[32];
	long c = 0;

	/* The side that is in goes first: a batch applies in order. */
	for (long k = 0; k < NARROW + WIDE; k++) {
		bool is_wide = wide_in ? k < WIDE : k >= NARROW;
		long i = is_wide ? (wide_in ? k : k - NARROW) : (wide_in ? k - WIDE : k);

		changes[k] =
		    (struct latch_range_change){ k < (wide_in ? WIDE : NARROW) ? LATCH_RANGE_ERASE
			                                                       : LATCH_RANGE_INSERT,
			                         is_wide ? wide[i] : narrow[i] };
	}
	for (long k = 0; k < 16; k++) {
		tchanges[c++] =
		    (struct latch_tree_change){ LATCH_TREE_ERASE, &gen[gen_in][k].node };
		tchanges[c++] =
		    (struct latch_tree_change){ LATCH_TREE_INSERT, &gen[!gen_in][k].node };
	}
	in_update = 1;
	switch (n % 3) {
	case 0:
		CHECK(latch_range_commit(&map, changes, NARROW + WIDE, NULL) == 0, "range batch");
		wide_in = !wide_in;
		in_update = 0;
		break;
	case 1:
		latch_tree_commit(&tree, tchanges, 32, &test_elem_ops);
		gen_in = !gen_in;
		in_update = 0;
		break;
	default:
		latch_tree_replace(&tree, &swap_elem[swap_in].node, &swap_elem[!swap_in].node,
		                   &test_elem_ops);
		swap_in = !swap_in;
		in_update = 0;
		break;
	}
}

static void value_step(long n)
{
	struct snapshot s;

	(void)n;
	for (int i = 0; i < 11; i++)
		s.word[i] = (unsigned long)stored + 1;
	memset(s.tail, (unsigned char)(stored + 1), sizeof(s.tail));
	in_update = 1;
	latch_value_store(&value, &s);
	stored++;
	in_update = 0; /* after the state it covers: the handler is lenient until here */
}

int main(void)
{
	long min_hits = test_env_long("LATCH_TEST_SIGNAL_HITS", 1000);
	timer_t timer;

	CHECK(latch_range_map_init(&map) == 0, "init");
	for (long j = 0; j < SLOTS; j++) {
		stable[j] = (struct latch_range){ (uintptr_t)(100 * j), (uintptr_t)(100 * j + 50),
			                          &stable[j] };
		churn[j] = (struct latch_range){ (uintptr_t)(100 * j + 50),
			                         (uintptr_t)(100 * j + 90), &churn[j] };
		CHECK(latch_range_insert(&map, stable[j].start, stable[j].end, &stable[j], NULL) ==
		          0,
		      "insert stable %ld", j);
	}
	for (long k = 0; k < NARROW; k++) {
		narrow[k] = (struct latch_range){ (uintptr_t)(5000 + 16 * k),
			                          (uintptr_t)(5016 + 16 * k), &narrow[k] };
		CHECK(latch_range_insert(&map, narrow[k].start, narrow[k].end, &narrow[k], NULL) ==
		          0,
		      "insert narrow %ld", k);
	}
	for (long k = 0; k < WIDE; k++)
		wide[k] = (struct latch_range){ (uintptr_t)(5000 + 32 * k),
			                        (uintptr_t)(5032 + 32 * k), &wide[k] };
	for (long k = 0; k < 16; k++) {
		gen[0][k].key = gen[1][k].key = k;
		latch_tree_insert(&tree, &gen[0][k].node, &test_elem_ops);
	}
	swap_elem[0].key = swap_elem[1].key = 100;
	latch_tree_insert(&tree, &swap_elem[0].node, &test_elem_ops);

	storm_handle(on_tick);
	timer = storm_start(50000); /* every 50 microseconds */
	run_phase(1, ranges_step, min_hits, "range map");
	run_phase(2, batches_step, min_hits, "batches");
	run_phase(3, value_step, min_hits, "latched value");
	timer_delete(timer);
	printf("test-api-signal: %ld signals handled, every answer right; signals every %ld us\n",
	       (long)ticks, storm_period_ns() / 1000);
	return 0;
}
