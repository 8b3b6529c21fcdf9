/* SPDX-License-Identifier: MIT */
/*
 * Linearizability: one writer toggles keys (insert if absent, erase if
 * present) following a fixed sequence and publishes two counts, updates
 * started and updates completed; N readers look up random keys and record
 * (completed before, key, answer, started after).  Any update the lookup
 * could have seen lies in that window, so the checker accepts an answer
 * only if the key's state after some update count c, before <= c <=
 * after, gives it: found (the key's own element) or absent.
 *
 * The sequence is a random run of HALF toggles followed by the same run
 * again, so it returns the set to its start and repeats with period
 * 2 * HALF: the state after any count is computed, never stored.
 *
 * With --expect-caught the verdict inverts (for the mutants).
 *
 * A reader only meets a broken structure's bad moments while it runs on
 * another CPU than the writer, so --expect-caught needs two CPUs (it exits
 * 77, skipped, with fewer).  Even with two, a loaded machine may run the
 * writer and the readers in turns for long stretches, and time alone says
 * nothing of how hard the harness looked.  What can catch a mutant is a
 * contended lookup: one during which the writer ran, an update starting or
 * completing between the lookup's first and last look at the counts (a
 * window that merely holds an update under way is not enough: a writer
 * preempted mid-update leaves one under way for a whole time slice, and
 * nothing changes under the readers).  So with --expect-caught the run looks until
 * it catches the mutant or has checked LATCH_LINEAR_CONTENDED contended
 * lookups, a budget that does not depend on the machine's load; the time
 * limit is only a backstop.  Missing the mutant within that budget fails;
 * reaching the time limit short of it is a skip that says how far it got:
 * the machine gave no chance to look, the harness did not miss anything.
 *
 * Overrides: LATCH_LINEAR_LOOKUPS (checked lookups in total, default
 * 200000), LATCH_LINEAR_MAX_MS (stop after this long even if fewer were
 * checked; default 0, no limit), LATCH_LINEAR_CONTENDED (with
 * --expect-caught: contended lookups to check, default 0, none: the
 * lookup count and the time limit alone), LATCH_LINEAR_READERS (default
 * 2), LATCH_LINEAR_KEYS (default 256).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "harness.h"

#define HALF   4096
#define PERIOD (2 * HALF)
#define BATCH  4096 /* records a reader collects before checking them */

struct record {
	unsigned long before, after; /* completed before the lookup, started after it */
	/* Started before it and completed after it: the writer ran during it if either moved. */
	unsigned long started_before, completed_after;
	long key, got;
};

struct reader_slot {
	pthread_t thread;
	long index, quota;
};

static struct proof_run run;
static void *state;
static long keys;
static long sequence[PERIOD]; /* sequence[i]: the key update i+1 (mod PERIOD) toggles */
static long **toggles;        /* toggles[k]: positions 1..PERIOD where key k toggles */
static long *ntoggles;
static unsigned long started, completed; /* accessed atomically */
static int stop;                         /* accessed atomically */
static unsigned long checked;            /* accessed atomically */
static unsigned long contended;          /* checked lookups the writer ran during; atomically */
static unsigned long contended_goal;     /* stop once this many were checked; 0: none */
static long deadline_ms;                 /* 0: none */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool initially_present(long key)
{
	return key % 3 != 0;
}

/* How many times @key toggled in updates 1 .. @count. */
static unsigned long toggles_until(long key, unsigned long count)
{
	unsigned long in_period = count % PERIOD;
	long lo = 0, hi = ntoggles[key];

	while (lo < hi) { /* first position > in_period */
		long mid = (lo + hi) / 2;

		if ((unsigned long)toggles[key][mid] <= in_period)
			lo = mid + 1;
		else
			hi = mid;
	}
	return count / PERIOD * (unsigned long)ntoggles[key] + (unsigned long)lo;
}

static void check_record(const struct record *r)
{
	bool in_pool = r->key >= 0 && r->key < keys;
	unsigned long at_before, at_after;

	if (r->got != SUT_ABSENT && r->got != r->key) {
		proof_violation(&run, "find(%ld) answered key %ld", r->key, r->got);
		return;
	}
	if (!in_pool) {
		if (r->got != SUT_ABSENT)
			proof_violation(&run, "find(%ld) found a key never inserted", r->key);
		return;
	}
	at_before = toggles_until(r->key, r->before);
	at_after = toggles_until(r->key, r->after);
	if (at_after != at_before)
		return; /* the key was both present and absent inside the window */
	if ((r->got == r->key) != (initially_present(r->key) ^ (at_before & 1)))
		proof_violation(&run,
		                "find(%ld) = %ld, but the key was %s after every update count from "
		                "%lu to %lu",
		                r->key, r->got, r->got == SUT_ABSENT ? "present" : "absent",
		                r->before, r->after);
}

static bool stopping(void)
{
	/* Relaxed: the flag only ends the loop. */
	return LATCH_LOAD_RELAXED(&stop) != 0;
}

static void *writer(void *arg)
{
	bool *present = calloc((size_t)keys, sizeof(bool));
	unsigned long n = 0;

	(void)arg;
	CHECK(present, "out of memory");
	for (long k = 0; k < keys; k++)
		present[k] = initially_present(k);
	while (!stopping()) {
		long key = sequence[n % PERIOD];

		/* Relaxed store, then release fence: a reader that sees any change of
		 * update n+1 and then runs its acquire fence sees started >= n+1. */
		LATCH_STORE_RELAXED(&started, n + 1);
		LATCH_FENCE_RELEASE();
		if (present[key])
			run.sut->erase(state, key);
		else
			run.sut->insert(state, key);
		present[key] = !present[key];
		n++;
		/* Release: a reader that sees completed == n sees all of update n. */
		LATCH_STORE_RELEASE(&completed, n);
	}
	free(present);
	return NULL;
}

static void *reader(void *arg)
{
	struct reader_slot *slot = arg;
	struct test_rng rng = { (unsigned long long)slot->index * 0x9E3779B97F4A7C15ull + 1 };
	long quota = slot->quota;
	struct record *batch = calloc(BATCH, sizeof(*batch));
	long done = 0;

	CHECK(batch, "out of memory");
	while (done < quota && !proof_caught(&run) && (!deadline_ms || now_ms() < deadline_ms) &&
	       /* Relaxed: a statistic that only ends the loop. */
	       (!contended_goal || LATCH_LOAD_RELAXED(&contended) < contended_goal)) {
		long n = quota - done < BATCH ? quota - done : BATCH;
		unsigned long overlapped = 0;

		for (long i = 0; i < n; i++) {
			struct record *r = &batch[i];

			r->key = (long)test_rng_below(&rng, (unsigned long)keys + 2);
			/* Acquire: pairs with the writer's release of completed. */
			r->before = LATCH_LOAD_ACQUIRE(&completed);
			/* Relaxed: a statistic (did the writer run during the lookup?). */
			r->started_before = LATCH_LOAD_RELAXED(&started);
			r->got = run.sut->find(state, r->key);
			/* Acquire fence: the lookup's loads are ordered before this load. */
			LATCH_FENCE_ACQUIRE();
			r->after = LATCH_LOAD_RELAXED(&started);
			/* Relaxed: the same statistic. */
			r->completed_after = LATCH_LOAD_RELAXED(&completed);
		}
		for (long i = 0; i < n; i++) {
			check_record(&batch[i]);
			overlapped += batch[i].after > batch[i].started_before ||
			              batch[i].completed_after > batch[i].before;
		}
		done += n;
		/* Relaxed: statistics. */
		__atomic_fetch_add(&checked, (unsigned long)n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&contended, overlapped, __ATOMIC_RELAXED);
	}
	free(batch);
	return NULL;
}

static void make_sequence(void)
{
	struct test_rng rng = { 0xC0FFEEull };

	toggles = calloc((size_t)keys, sizeof(*toggles));
	ntoggles = calloc((size_t)keys, sizeof(*ntoggles));
	CHECK(toggles && ntoggles, "out of memory");
	for (long i = 0; i < HALF; i++)
		sequence[i] = sequence[i + HALF] = (long)test_rng_below(&rng, (unsigned long)keys);
	for (long i = 0; i < PERIOD; i++)
		ntoggles[sequence[i]]++;
	for (long k = 0; k < keys; k++) {
		toggles[k] = calloc((size_t)ntoggles[k] + 1, sizeof(long));
		CHECK(toggles[k], "out of memory");
		ntoggles[k] = 0;
	}
	for (long i = 0; i < PERIOD; i++)
		toggles[sequence[i]][ntoggles[sequence[i]]++] = i + 1;
}

int main(int argc, char **argv)
{
	long lookups = test_env_long("LATCH_LINEAR_LOOKUPS", 200000);
	long readers = test_env_long("LATCH_LINEAR_READERS", 2);
	pthread_t writer_thread;
	struct reader_slot slots[64];

	proof_parse_args(&run, "proof-linear", argc, argv);
	keys = test_env_long("LATCH_LINEAR_KEYS", 256);
	CHECK(keys > 0 && readers >= 1 && readers <= 64 && lookups >= readers,
	      "need LATCH_LINEAR_KEYS > 0, 1 <= LATCH_LINEAR_READERS <= 64, enough lookups");
	if (run.expect_caught) {
		cpu_set_t cpus;

		if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) < 2) {
			printf("proof-linear: skipped: catching a broken structure needs 2 CPUs, "
			       "this process may use %d\n",
			       CPU_COUNT(&cpus));
			return TEST_SKIP;
		}
	}
	if (test_env_long("LATCH_LINEAR_MAX_MS", 0) > 0)
		deadline_ms = now_ms() + test_env_long("LATCH_LINEAR_MAX_MS", 0);
	if (run.expect_caught && test_env_long("LATCH_LINEAR_CONTENDED", 0) > 0)
		contended_goal = (unsigned long)test_env_long("LATCH_LINEAR_CONTENDED", 0);
	make_sequence();
	/* The structures declare 64-byte alignment (B+-tree nodes, SIMD loads). */
	state = aligned_alloc(64, (run.sut->size(keys) + 63) / 64 * 64);
	CHECK(state, "out of memory");
	run.sut->init(state, keys);
	for (long k = 0; k < keys; k++)
		if (initially_present(k))
			run.sut->insert(state, k);

	CHECK(pthread_create(&writer_thread, NULL, writer, NULL) == 0, "pthread_create failed");
	for (long t = 0; t < readers; t++) {
		slots[t].index = t + 1;
		slots[t].quota = lookups / readers;
		CHECK(pthread_create(&slots[t].thread, NULL, reader, &slots[t]) == 0,
		      "pthread_create failed");
	}
	for (long t = 0; t < readers; t++)
		pthread_join(slots[t].thread, NULL);
	/* Relaxed: the writer only polls the flag. */
	LATCH_STORE_RELAXED(&stop, 1);
	pthread_join(writer_thread, NULL);

	printf("proof-linear: %s: %lu lookups checked by %ld readers against %lu updates, %lu of "
	       "them contended (the writer ran during them)\n",
	       run.sut->name, checked, readers, completed, contended);
	for (long k = 0; k < keys; k++)
		free(toggles[k]);
	free(toggles);
	free(ntoggles);
	free(state);
	if (contended_goal && !proof_caught(&run) && contended < contended_goal &&
	    checked < (unsigned long)(lookups / readers * readers)) {
		printf(
		    "proof-linear: %s: skipped: the time limit came after only %lu of the %lu "
		    "contended lookups the run needs (the machine ran the readers and the writer "
		    "at the same time too seldom); the mutant was neither caught nor missed\n",
		    run.sut->name, contended, contended_goal);
		return TEST_SKIP;
	}
	return proof_verdict(&run);
}
