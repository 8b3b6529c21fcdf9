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

#include "map-check.h"

#define PER_SET   8 /* ranges in A and in B: a swap is a batch of 16 */
#define STRIDE    100
#define WATCHDOG  10 /* seconds a child may take before SIGALRM kills it */
#define MIN_FORKS 24

static struct latch_range_map map;
static struct latch_range set_a[PER_SET], set_b[PER_SET];
static int stop;

/* Fill @changes with a batch that erases @from and inserts @to. */
static void swap_batch(struct latch_range_change *changes, const struct latch_range *from,
                       const struct latch_range *to)
{
	for (int i = 0; i < PER_SET; i++) {
		changes[i] = (struct latch_range_change){ LATCH_RANGE_ERASE, from[i] };
		changes[PER_SET + i] = (struct latch_range_change){ LATCH_RANGE_INSERT, to[i] };
	}
}

static void *writer(void *arg)
{
	struct latch_range_change to_b[2 * PER_SET], to_a[2 * PER_SET];

	(void)arg;
	swap_batch(to_b, set_a, set_b);
	swap_batch(to_a, set_b, set_a);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		CHECK(latch_range_commit(&map, to_b, 2 * PER_SET, NULL) == 0, "writer: swap to B");
		CHECK(latch_range_commit(&map, to_a, 2 * PER_SET, NULL) == 0, "writer: swap to A");
	}
	return NULL;
}

/* How many of @set a lookup finds, each at its own place and with its value. */
static int found(const struct latch_range *set)
{
	int n = 0;

	for (int i = 0; i < PER_SET; i++) {
		struct latch_range r;
		bool hit = latch_range_find(&map, set[i].start + 1, &r);

		CHECK(!hit || (r.start == set[i].start && r.value == set[i].value),
		      "range %d: lookup found a stranger", i);
		n += hit;
	}
	return n;
}

/* The map holds all of A and none of B, or the reverse, and both copies agree. */
static void check_consistent(const char *when, size_t extra)
{
	int a = found(set_a), b = found(set_b);

	CHECK((a == PER_SET && b == 0) || (a == 0 && b == PER_SET),
	      "%s: the map holds %d of A and %d of B", when, a, b);
	check_copies(latch_btree_of_range(&map), PER_SET + extra, false);
}

/* Do the two copies hold different ranges?  Each walk is memory-safe on a half-changed copy. */
static bool copies_differ(void)
{
	struct latch_btree_ent e[2];
	uint64_t x[2] = { 0, 0 };

	for (int step = 0; step < 4 * PER_SET; step++) {
		bool bad[2], hit[2];

		for (unsigned cp = 0; cp < 2; cp++)
			hit[cp] = latch_btree_attempt(latch_btree_of_range(&map), cp, x[cp], LATCH_BTREE_CEIL,
			                               &e[cp], &bad[cp]);
		if (bad[0] || bad[1] || hit[0] != hit[1])
			return true;
		if (!hit[0])
			return false;
		if (e[0].key != e[1].key || e[0].end != e[1].end)
			return true;
		x[0] = x[1] = e[0].key + 1;
	}
	return true;
}

/* The child: the map as the fork left it, then writer calls of its own. */
static void child(int report)
{
	const uintptr_t mine = 3 * PER_SET * STRIDE;
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

	CHECK(latch_range_insert(&map, mine, mine + STRIDE, NULL, NULL) == 0, "child: insert");
	check_consistent("child after its insert", 1);
	CHECK(latch_range_find(&map, mine, NULL), "child: its range is found");
	CHECK(latch_range_erase(&map, mine) == 0, "child: erase");
	check_consistent("child after its erase", 0);
	if (found(set_a))
		swap_batch(swap, set_a, set_b);
	else
		swap_batch(swap, set_b, set_a);
	CHECK(latch_range_commit(&map, swap, 2 * PER_SET, NULL) == 0, "child: batch");
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

	CHECK(latch_range_map_init(&map) == 0, "init");
	for (int i = 0; i < PER_SET; i++) {
		uintptr_t sa = (uintptr_t)(2 * i) * STRIDE, sb = (uintptr_t)(2 * i + 1) * STRIDE;

		set_a[i] = (struct latch_range){ sa, sa + STRIDE / 2, &set_a[i] };
		set_b[i] = (struct latch_range){ sb, sb + STRIDE / 2, &set_b[i] };
		CHECK(latch_range_insert(&map, sa, sa + STRIDE / 2, &set_a[i], NULL) == 0,
		      "initial insert");
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
