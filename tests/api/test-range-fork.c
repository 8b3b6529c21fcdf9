/* SPDX-License-Identifier: MIT */
/*
 * fork() while a writer thread is committing batches to a range map: the
 * child must find the map consistent (the batch being applied at the fork
 * wholly applied or not at all) and its own writer calls must work.
 *
 * The writer swaps the map between two sets of ranges, A and B, in one
 * batch each time, so a consistent map holds exactly all of A or all of
 * B.  The main thread forks repeatedly; each child checks the map, makes
 * an insert, an erase and a batch of its own under a watchdog alarm, and
 * reports whether the writer held the map at the fork.  The parent
 * requires every child to exit 0 and some forks to have landed while the
 * writer was inside a writer call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <latch/range.h>

#include "../tree-invariants.h"

#define PER_SET   8 /* ranges in A and in B: a swap is a batch of 16 */
#define STRIDE    100
#define WATCHDOG  10 /* seconds a child may take before SIGALRM kills it */
#define MIN_FORKS 24

static struct latch_range_map map = LATCH_RANGE_MAP_INIT;
static struct latch_range set_a[PER_SET], set_b[PER_SET];
static int stop;

static bool range_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return latch_range_of_(a)->start < latch_range_of_(b)->start;
}

static int range_comp(const void *key, const struct latch_tree_node *n)
{
	return latch_range_order_(key, n, NULL);
}

static const struct latch_tree_ops range_ops = { range_less, range_comp };

/* Fill @changes with a batch that erases @from and inserts @to. */
static void swap_batch(struct latch_range_change *changes, struct latch_range *from,
                       struct latch_range *to)
{
	for (int i = 0; i < PER_SET; i++) {
		changes[i] = (struct latch_range_change){ LATCH_TREE_ERASE, &from[i] };
		changes[PER_SET + i] = (struct latch_range_change){ LATCH_TREE_INSERT, &to[i] };
	}
}

static void *writer(void *arg)
{
	struct latch_range_change to_b[2 * PER_SET], to_a[2 * PER_SET];

	(void)arg;
	swap_batch(to_b, set_a, set_b);
	swap_batch(to_a, set_b, set_a);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		CHECK(latch_range_commit(&map, to_b, 2 * PER_SET) == 0, "writer: swap to B");
		CHECK(latch_range_commit(&map, to_a, 2 * PER_SET) == 0, "writer: swap to A");
	}
	return NULL;
}

/* How many of @set a lookup finds, each at its own place. */
static int found(struct latch_range *set)
{
	int n = 0;

	for (int i = 0; i < PER_SET; i++) {
		struct latch_range *r = latch_range_find(&map, set[i].start + 1);

		CHECK(!r || r == &set[i], "range %d: lookup found a stranger", i);
		n += r != NULL;
	}
	return n;
}

/* The map holds all of A and none of B, or the reverse, and both copies agree. */
static void check_consistent(const char *when, long extra)
{
	int a = found(set_a), b = found(set_b);

	CHECK((a == PER_SET && b == 0) || (a == 0 && b == PER_SET),
	      "%s: the map holds %d of A and %d of B", when, a, b);
	check_latch_tree(&map.tree, PER_SET + extra, &range_ops);
}

/* Do the two copies hold different elements, in order?  (Writer side.) */
static bool copies_differ(void)
{
	const struct latch_rb_node *a = latch_rb_first(&map.tree.tree[0]);
	const struct latch_rb_node *b = latch_rb_first(&map.tree.tree[1]);

	for (; a && b; a = latch_rb_next(a), b = latch_rb_next(b))
		if (latch_tree_from_rb_(a, 0) != latch_tree_from_rb_(b, 1))
			return true;
	return a || b;
}

/* The child: the map as the fork left it, then writer calls of its own. */
static void child(int report)
{
	static struct latch_range mine = { .start = 3 * PER_SET * STRIDE,
		                           .end = 4 * PER_SET * STRIDE };
	struct latch_range_change swap[2 * PER_SET];
	/* Copies that differ: the fork caught the writer between its first change and its replay. */
	bool half_done = copies_differ();
	int a, b, held;
	char what;

	alarm(WATCHDOG); /* a writer call that hangs gets the child killed */
	/* Lookups need no writer call: the copy they read is never half done. */
	a = found(set_a);
	b = found(set_b);
	CHECK((a == PER_SET && b == 0) || (a == 0 && b == PER_SET),
	      "child before writing: the map holds %d of A and %d of B", a, b);
	/* Did the fork catch the writer inside a writer call?  (Never waits.) */
	held = pthread_mutex_trylock(&map.lock) == EBUSY;
	if (!held)
		pthread_mutex_unlock(&map.lock);

	CHECK(latch_range_insert(&map, &mine) == 0, "child: insert");
	check_consistent("child after its insert", 1);
	CHECK(latch_range_find(&map, mine.start) == &mine, "child: its range is found");
	CHECK(latch_range_erase(&map, &mine) == 0, "child: erase");
	check_consistent("child after its erase", 0);
	if (found(set_a))
		swap_batch(swap, set_a, set_b);
	else
		swap_batch(swap, set_b, set_a);
	CHECK(latch_range_commit(&map, swap, 2 * PER_SET) == 0, "child: batch");
	check_consistent("child after its batch", 0);

	what = half_done ? 'o' : held ? 'h' : 'f';
	CHECK(write(report, &what, 1) == 1, "child: report");
	_exit(0);
}

int main(void)
{
	int forks = 0, held = 0, half_done = 0, report[2];
	pthread_t thread;
	char what;

	for (int i = 0; i < PER_SET; i++) {
		set_a[i] = (struct latch_range){ .start = (uintptr_t)(2 * i) * STRIDE,
			                         .end = (uintptr_t)(2 * i) * STRIDE + STRIDE / 2 };
		set_b[i] =
		    (struct latch_range){ .start = (uintptr_t)(2 * i + 1) * STRIDE,
			                  .end = (uintptr_t)(2 * i + 1) * STRIDE + STRIDE / 2 };
		CHECK(latch_range_insert(&map, &set_a[i]) == 0, "initial insert");
	}
	CHECK(pipe(report) == 0, "pipe");
	CHECK(pthread_create(&thread, NULL, writer, NULL) == 0, "pthread_create");

	/*
	 * Fork until MIN_FORKS forks, a third of them inside a writer call
	 * and two with one copy half changed.
	 */
	while (forks < MIN_FORKS ||
	       ((held < MIN_FORKS / 3 || half_done < 2) && forks < 50 * MIN_FORKS)) {
		int status;
		pid_t pid = fork();

		CHECK(pid >= 0, "fork");
		if (pid == 0)
			child(report[1]);
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "fork %d: the child failed (%s %d)", forks,
		      WIFSIGNALED(status) ? "killed by signal" : "exit status",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		CHECK(read(report[0], &what, 1) == 1, "fork %d: no report", forks);
		held += what != 'f';
		half_done += what == 'o';
		forks++;
		usleep(1000); /* let the writer get well into a batch */
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
	check_consistent("parent at the end", 0);
	CHECK(
	    held > 0 && half_done > 0,
	    "of %d forks, %d caught the writer inside a writer call, %d with one copy half changed",
	    forks, held, half_done);
	printf("test-range-fork: %d children passed, %d forked while the writer held the map, "
	       "%d of them with an update half applied\n",
	       forks, held, half_done);
	return 0;
}
