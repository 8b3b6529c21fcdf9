/* SPDX-License-Identifier: MIT */
/*
 * Wrap-around of the latch sequence counter, on the latched tree.
 *
 * The counter is an unsigned int (32 bits on every target, 32-bit ones
 * included), so a long-lived writer passes UINT_MAX -> 0.  UINT_MAX is
 * odd, so the wrap always falls on a flip that sends readers to copy 0,
 * after an update that changed copy 0 first.  Readers must keep choosing
 * the copy that is not being changed.
 *
 * Part 1, one thread: a tree whose counter starts w + 1 below the wrap runs
 * a fixed script of inserts and erases, so the wrap falls inside
 * operation w, for every operation of the script.  Checked:
 *  - after every operation: every key's lookup agrees with the model, and
 *    both copies are valid, identical red-black trees (tree-invariants.h);
 *  - inside every insert, at each call of the writer's comparator, lookups
 *    made on the writer's own thread (what a signal handler interrupting
 *    the writer does) read the copy that is not being changed: the new key
 *    is absent until the update's one flip, every other key is as the
 *    model says, and no read needs a retry.  (The comparator runs only in
 *    the descent of the copy changed first, before the flip; the replay
 *    onto the other copy does not compare.  Part 3 looks up after the
 *    flip too.)
 *  - every operation moves the counter by exactly one, across the wrap.
 *
 * Part 2, two threads: a reader looks keys up while the writer inserts
 * and erases across the wrap; keys that stay in the tree are always found
 * and no lookup returns an element holding another key.
 *
 * Part 3, a timer signal: before every update the counter is set back to
 * UINT_MAX (where it would stand 2^32 - 1 updates later), so every
 * update's flip is the wrap, while a 20 us timer interrupts the writer at
 * arbitrary instructions.  The handler, on the writer's own thread, must
 * find every stable key, and the key being changed exactly when the flip
 * has sent readers to the copy that holds the change (after the wrap).
 *
 * Overrides: LATCH_TEST_WRAP_KEYS (part 1 keys, default 24),
 * LATCH_TEST_WRAP_ROUNDS (part 2 rounds, default 20),
 * LATCH_TEST_WRAP_UPDATES (part 2 updates per round, default 4000),
 * LATCH_TEST_WRAP_SIGNAL_MS (part 3 run time, default 300),
 * LATCH_TEST_WRAP_SIGNAL_US (part 3 timer period, default 20).
 */
#define _DEFAULT_SOURCE /* setitimer(), clock_gettime() */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "tree-invariants.h"

/* Part 1: the tree, its model, and the operation under way. */
static struct {
	struct latch_tree_root root;
	struct test_elem *elems; /* elems[k] holds key k */
	bool *present;           /* the model: present[k] when key k is in the tree */
	long keys;
	long changing;     /* key being inserted or erased, or -1 */
	bool inserting;    /* what is being done to it */
	unsigned op_start; /* the counter when the operation began */
	long mid_update_checks;
} st;

/* Every key's lookup against the model; @changing_present for st.changing. */
static void check_lookups(bool changing_present, const char *when)
{
	for (long k = 0; k < st.keys; k++) {
		bool expected = k == st.changing ? changing_present : st.present[k];
		struct test_elem *e = test_find(&st.root, k);

		CHECK((e != NULL) == expected, "%s: key %ld should be %s (counter %u)", when, k,
		      expected ? "found" : "absent", st.root.seq.sequence);
		CHECK(e == NULL || e == &st.elems[k], "%s: find(%ld) returned key %ld", when, k,
		      e->key);
	}
}

/*
 * A reader on the writer's own thread, in the middle of the update.  How
 * far the counter moved since the operation began tells what readers must
 * see: 0 (the first copy being changed, or debug builds checking the
 * contract) the old contents, 1 (after the flip, the other copy being
 * brought up to date) the new ones.
 */
static void check_mid_update(void)
{
	unsigned start = latch_seq_read_begin(&st.root.seq);
	unsigned flips = start - st.op_start; /* modulo 2^32, so right across the wrap */

	CHECK(flips <= 1, "counter moved by %u within one operation", flips);
	check_lookups(flips == 1 ? st.inserting : !st.inserting, "inside an update");
	CHECK(!latch_seq_read_retry(&st.root.seq, start),
	      "a reader that interrupted the writer had to retry (counter %u)", start);
	st.mid_update_checks++;
}

/* The writer's comparator: looks everything up, then compares. */
static bool hooked_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	if (st.changing >= 0)
		check_mid_update();
	return test_elem_less(a, b);
}

static const struct latch_tree_ops hooked_ops = {
	.less = hooked_less,
	.comp = test_elem_comp,
};

static void apply(long key, bool insert, long *in_tree)
{
	st.changing = key;
	st.inserting = insert;
	st.op_start = latch_seq_read_begin(&st.root.seq);
	if (insert)
		latch_tree_insert(&st.root, &st.elems[key].node, &hooked_ops);
	else
		latch_tree_erase(&st.root, &st.elems[key].node, &hooked_ops);
	st.present[key] = insert;
	*in_tree += insert ? 1 : -1;
	st.changing = -1;

	CHECK(st.root.seq.sequence - st.op_start == 1u, "an update moved the counter from %u to %u",
	      st.op_start, st.root.seq.sequence);
	check_lookups(false, "after an update");
	check_tree_invariants(&st.root, *in_tree);
}

/*
 * Run the script on a fresh tree whose counter wraps inside operation
 * @wrap_op (counting from 0); returns the number of operations.  Script:
 * insert every key (in @order), erase every other one, insert those
 * again, erase every key.
 */
static long run_script(const long *order, long wrap_op)
{
	unsigned initial = 0u - (unsigned)(wrap_op + 1);
	long in_tree = 0, ops = 0;

	latch_tree_init(&st.root);
	/* Relaxed: the tree is not shared; this stands for a long-lived counter. */
	LATCH_STORE_RELAXED(&st.root.seq.sequence, initial);
	memset(st.present, 0, (size_t)st.keys * sizeof(*st.present));

	for (long i = 0; i < st.keys; i++, ops++)
		apply(order[i], true, &in_tree);
	for (int insert = 0; insert < 2; insert++)
		for (long i = 0; i < st.keys; i += 2, ops++)
			apply(order[i], insert, &in_tree);
	for (long i = st.keys - 1; i >= 0; i--, ops++)
		apply(order[i], false, &in_tree);

	CHECK(st.root.seq.sequence == initial + (unsigned)ops, "%ld operations from %u ended at %u",
	      ops, initial, st.root.seq.sequence);
	CHECK(st.root.seq.sequence < initial, "the counter did not wrap");
	return ops;
}

static void part1_single_thread(void)
{
	long *order;
	long ops = 1, runs = 0;
	struct test_rng rng = { 0x5eed };

	st.keys = test_env_long("LATCH_TEST_WRAP_KEYS", 24);
	CHECK(st.keys > 0, "LATCH_TEST_WRAP_KEYS must be positive");
	st.elems = calloc((size_t)st.keys, sizeof(*st.elems));
	st.present = calloc((size_t)st.keys, sizeof(*st.present));
	order = calloc((size_t)st.keys, sizeof(*order));
	CHECK(st.elems && st.present && order, "out of memory");
	st.changing = -1;
	for (long k = 0; k < st.keys; k++) {
		st.elems[k].key = k;
		order[k] = k;
	}
	/* A shuffled insertion order exercises every rebalancing case. */
	for (long k = st.keys - 1; k > 0; k--) {
		long j = (long)test_rng_below(&rng, (unsigned long)k + 1), t = order[k];

		order[k] = order[j];
		order[j] = t;
	}
	for (long wrap_op = 0; wrap_op < ops; wrap_op++, runs++)
		ops = run_script(order, wrap_op);
	printf(
	    "test-tree-wrap: part 1: wrap inside each of %ld operations, %ld mid-update checks\n",
	    runs, st.mid_update_checks);
	free(order);
	free(st.present);
	free(st.elems);
}

/* Part 2: stable even keys 0..2*(STABLE-1), churned odd keys. */
#define STABLE 64

struct race {
	struct latch_tree_root root;
	bool started, done;
	long lookups, across_wrap;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	struct test_rng rng = { 0xC0FFEE };

	/* Acquire: pairs with the writer's release of @done; only a stop flag. */
	while (!LATCH_LOAD_ACQUIRE(&r->done)) {
		long key = (long)test_rng_below(&rng, 2 * STABLE);
		/* Relaxed: statistics only; the lookup does its own ordering. */
		unsigned before = LATCH_LOAD_RELAXED(&r->root.seq.sequence);
		struct test_elem *e = test_find(&r->root, key);
		/* Relaxed: as above. */
		unsigned after = LATCH_LOAD_RELAXED(&r->root.seq.sequence);

		if (key % 2 == 0)
			CHECK(e && e->key == key, "stable key %ld not found (counter %u..%u)", key,
			      before, after);
		else
			CHECK(!e || e->key == key, "find(%ld) returned key %ld (counter %u..%u)",
			      key, e->key, before, after);
		r->lookups++;
		r->across_wrap += after < before;
		/* Release: only tells the writer the reader is running. */
		LATCH_STORE_RELEASE(&r->started, true);
	}
	return NULL;
}

/*
 * One round: the writer keeps STABLE odd-keyed elements live, erasing the
 * oldest before inserting the next, and the wrap falls halfway.  Every
 * insert uses a fresh element, so none is reused while the reader may
 * still hold it (the grace period is the end of the round).
 */
static void race_round(long updates, struct test_elem *stable, struct test_elem *churn,
                       struct race *r)
{
	pthread_t thread;
	long next = 0;

	memset(r, 0, sizeof(*r));
	latch_tree_init(&r->root);
	for (long k = 0; k < STABLE; k++) {
		stable[k].key = 2 * k;
		latch_tree_insert(&r->root, &stable[k].node, &test_elem_ops);
	}
	/* Relaxed: not shared until pthread_create(). */
	LATCH_STORE_RELAXED(&r->root.seq.sequence, 0u - (unsigned)(updates / 2));
	CHECK(pthread_create(&thread, NULL, reader, r) == 0, "pthread_create failed");
	/* Acquire: pairs with the reader's release; start updating once it reads. */
	while (!LATCH_LOAD_ACQUIRE(&r->started))
		continue;

	for (long done = 0; done < updates; next++) {
		if (next >= STABLE) {
			latch_tree_erase(&r->root, &churn[next - STABLE].node, &test_elem_ops);
			done++;
		}
		churn[next].key = 2 * (next % STABLE) + 1;
		latch_tree_insert(&r->root, &churn[next].node, &test_elem_ops);
		done++;
	}
	/* Release: publishes nothing but the stop request. */
	LATCH_STORE_RELEASE(&r->done, true);
	CHECK(pthread_join(thread, NULL) == 0, "pthread_join failed");
	CHECK(r->root.seq.sequence < (unsigned)updates, "the counter did not wrap (%u)",
	      r->root.seq.sequence);
}

static void part2_two_threads(void)
{
	long rounds = test_env_long("LATCH_TEST_WRAP_ROUNDS", 20);
	long updates = test_env_long("LATCH_TEST_WRAP_UPDATES", 4000);
	struct test_elem *stable = calloc(STABLE, sizeof(*stable));
	struct test_elem *churn = calloc((size_t)(updates > 0 ? updates : 1), sizeof(*churn));
	long lookups = 0, across_wrap = 0;
	struct race r;

	CHECK(stable && churn, "out of memory");
	CHECK(updates >= 2, "LATCH_TEST_WRAP_UPDATES must be at least 2");
	for (long i = 0; i < rounds; i++) {
		race_round(updates, stable, churn, &r);
		lookups += r.lookups;
		across_wrap += r.across_wrap;
	}
	printf("test-tree-wrap: part 2: %ld rounds of %ld updates, %ld concurrent lookups, %ld of "
	       "them while the counter wrapped\n",
	       rounds, updates, lookups, across_wrap);
	free(churn);
	free(stable);
}

/* Part 3: stable even keys, odd keys inserted and erased in turn. */
static struct {
	struct latch_tree_root root;
	struct test_elem stable[STABLE], churn[STABLE];
	volatile sig_atomic_t churn_present[STABLE]; /* the model of the odd keys */
	sig_atomic_t changing;                       /* index into churn[] being changed, or -1 */
	sig_atomic_t changing_to;                    /* 1: it is being inserted, 0: erased */
	volatile sig_atomic_t ticks, ticks_at_uint_max, ticks_after_wrap, wrong;
} sg;

#define SIGNAL_START UINT_MAX /* the counter before every part 3 update */

static void on_tick(int sig)
{
	static long next; /* the handler's own: which keys to look up */
	/* Acquire: pairs with the writer's release stores of @changing, so the
	 * counter read below is no older than the @changing seen here. */
	long changing = LATCH_LOAD_ACQUIRE(&sg.changing);
	/* Modulo 2^32: 0 at UINT_MAX, then 1 at 0 after the update's flip. */
	unsigned flips = latch_seq_read_begin(&sg.root.seq) - SIGNAL_START;
	long stable_key = 2 * (next % STABLE), churn_index = next % STABLE;
	struct test_elem *e = test_find(&sg.root, stable_key);

	(void)sig;
	next++;
	sg.ticks++;
	if (!e || e->key != stable_key || flips > 1)
		sg.wrong++;
	if (changing >= 0) {
		/* Relaxed: written before the release store of @changing. */
		bool expected = flips == 1 ? LATCH_LOAD_RELAXED(&sg.changing_to)
		                           : !LATCH_LOAD_RELAXED(&sg.changing_to);

		e = test_find(&sg.root, sg.churn[changing].key);
		if ((e != NULL) != expected || (e && e != &sg.churn[changing]))
			sg.wrong++;
		sg.ticks_at_uint_max += flips == 0;
		sg.ticks_after_wrap += flips == 1;
	}
	if (churn_index != changing) {
		e = test_find(&sg.root, sg.churn[churn_index].key);
		if ((e != NULL) != sg.churn_present[churn_index])
			sg.wrong++;
	}
}

static long elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

static void part3_signal(void)
{
	long ms = test_env_long("LATCH_TEST_WRAP_SIGNAL_MS", 300);
	long period_us = test_env_long("LATCH_TEST_WRAP_SIGNAL_US", 20);
	struct itimerval every = { { 0, period_us }, { 0, period_us } },
	                 off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;
	struct timespec start;
	long updates = 0;

	latch_tree_init(&sg.root);
	sg.changing = -1;
	for (long k = 0; k < STABLE; k++) {
		sg.stable[k].key = 2 * k;
		sg.churn[k].key = 2 * k + 1;
		latch_tree_insert(&sg.root, &sg.stable[k].node, &test_elem_ops);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");
	/* Relaxed: the timer is not running yet; the loop sets it again. */
	LATCH_STORE_RELAXED(&sg.root.seq.sequence, SIGNAL_START);
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(setitimer(ITIMER_REAL, &every, NULL) == 0, "setitimer");

	/*
	 * The only reader is this thread's signal handler, so an element may
	 * be reused at once (the handler never outlives a lookup), and the
	 * counter may be set between updates, when no lookup is under way.
	 */
	while (updates % 1024 != 0 || elapsed_ms(&start) < ms) {
		long c = updates++ % STABLE;
		bool insert = !sg.churn_present[c];

		/* Relaxed: ordered before the handler's view by the release below. */
		LATCH_STORE_RELAXED(&sg.root.seq.sequence, SIGNAL_START);
		/* Relaxed: as above. */
		LATCH_STORE_RELAXED(&sg.changing_to, (sig_atomic_t)insert);
		/* Release: the counter and @changing_to are set before the
		 * handler can see this update under way. */
		LATCH_STORE_RELEASE(&sg.changing, (sig_atomic_t)c);
		if (insert)
			latch_tree_insert(&sg.root, &sg.churn[c].node, &test_elem_ops);
		else
			latch_tree_erase(&sg.root, &sg.churn[c].node, &test_elem_ops);
		sg.churn_present[c] = insert;
		/* Release: the model is updated before the update counts as over. */
		LATCH_STORE_RELEASE(&sg.changing, (sig_atomic_t)-1);
	}
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0, "setitimer");

	printf("test-tree-wrap: part 3: %ld updates across the wrap, %ld signals, %ld at count "
	       "UINT_MAX, %ld at count 0 inside an update, %ld wrong\n",
	       updates, (long)sg.ticks, (long)sg.ticks_at_uint_max, (long)sg.ticks_after_wrap,
	       (long)sg.wrong);
	CHECK(sg.wrong == 0, "%ld lookups from the signal handler were wrong", (long)sg.wrong);
	CHECK(sg.ticks_at_uint_max > 0 && sg.ticks_after_wrap > 0,
	      "no signal landed on both sides of the wrap inside an update; nothing was tested");
}

int main(void)
{
	part1_single_thread();
	part2_two_threads();
	part3_signal();
	return 0;
}
