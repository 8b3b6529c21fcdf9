/* SPDX-License-Identifier: MIT */
/*
 * Every-instruction interruption: the writer, a forked child working on a
 * structure in a MAP_SHARED arena, is single-stepped with ptrace; at every
 * instruction it executes the parent, like a signal handler that
 * interrupted it there, checks for every key (present, absent, and the one
 * being changed):
 *
 *  - the complete lookup (latch_tree_find() for the latch tree) is right;
 *  - one attempt (latch_seq_read_begin(), one descent of copy count & 1,
 *    latch_seq_read_retry()) is right and is not discarded: the lookup
 *    succeeds on its first attempt while the writer is stopped;
 *  - readers that took their count earlier (at the start of the update in
 *    progress, and one instruction ago) and descend now are either told to
 *    retry or right;
 *  - a raw descent of every copy, the one being changed included, stops
 *    before LATCH_RB_MAX_DEPTH and never answers an element the key does
 *    not name, nor one for a key absent before and after the update (for
 *    a structure whose idle copy lags an update behind, the latched value,
 *    only the copy readers are on).
 *
 * "Right" means: the key's element for a key present before and after the
 * update in progress, none for a key absent before and after, either for
 * the key being changed.
 *
 * Overrides: LATCH_PROOF_STEPS (writer instructions to check, default
 * 20000; stepping goes on past it until the first update has completed, as
 * sanitizer builds make an update many times longer, up to 50 times that
 * number), LATCH_PROOF_KEYS (key space; about half is present, default 512).
 * Exits 77 (skipped) where ptrace is denied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <latch/rbtree.h>

#include "harness.h"

/* Written by the writer child, read by the parent while the child is stopped. */
struct writer_status {
	volatile long op;       /* number of the update in progress (1, 2, ...) */
	volatile long key;      /* the key it changes */
	volatile int in_update; /* inside the structure's insert/erase */
};

struct stepper {
	struct proof_run run;
	const struct sut_ops *sut;
	void *state; /* in the shared arena */
	struct writer_status *status;
	long keys;
	bool *present;     /* the parent's model: state before the update in progress */
	long op, changing; /* the update in progress as the parent last saw it */
	unsigned op_start; /* a reader's count taken when that update started */
	unsigned prev;     /* a reader's count taken one instruction ago */
	long steps, steps_in_update, ops_seen, probes, initial;
};

/* Deterministic key choice shared by the child and (through status) the parent. */
static long next_key(struct test_rng *rng, long keys)
{
	return (long)test_rng_below(rng, (unsigned long)keys);
}

static bool initially_present(long key)
{
	return (key * 2654435761u >> 7) & 1;
}

static void writer_child(struct stepper *st)
{
	struct test_rng rng = { 0x5eed5eedull };
	bool *present = st->present; /* the child's own copy after fork */

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		_exit(TEST_SKIP);
	/*
	 * Not stepped: the range map adopts itself in this new process on its
	 * first writer call, a rebuild that a sanitizer build makes longer
	 * than the whole step budget, so that no update would be checked.
	 */
	if (st->sut->writer_start)
		st->sut->writer_start(st->state);
	raise(SIGSTOP); /* the parent starts stepping from here */
	for (long op = 1;; op++) {
		long key = next_key(&rng, st->keys);

		st->status->key = key;
		st->status->op = op;
		st->status->in_update = 1;
		if (present[key])
			st->sut->erase(st->state, key);
		else
			st->sut->insert(st->state, key);
		st->status->in_update = 0;
		present[key] = !present[key];
	}
}

/* Is @got a right answer for @key now? */
static bool answer_ok(const struct stepper *st, long key, long got)
{
	bool in_pool = key >= 0 && key < st->keys;

	if (got != SUT_ABSENT && got != key)
		return false; /* an element the key does not name */
	if (st->op > 0 && key == st->changing)
		return true; /* either answer */
	return (got == key) == (in_pool && st->present[key]);
}

/* A reader that took its count @start earlier descends now: retry, or be right. */
static void check_stale_reader(struct stepper *st, long key, unsigned start, const char *when)
{
	long got = st->sut->read_attempt(st->state, start, key);

	if (!st->sut->read_retry(st->state, start) && !answer_ok(st, key, got))
		proof_violation(
		    &st->run,
		    "instruction %ld (update %ld on key %ld): a reader that %s accepted %ld "
		    "for key %ld",
		    st->steps, st->op, st->changing, when, got, key);
}

static void check_key(struct stepper *st, long key)
{
	const struct sut_ops *sut = st->sut;
	long got = sut->find(st->state, key);
	unsigned start;

	st->probes++;
	if (!answer_ok(st, key, got))
		proof_violation(&st->run,
		                "instruction %ld (update %ld on key %ld): find(%ld) = %ld",
		                st->steps, st->op, st->changing, key, got);

	start = sut->read_begin(st->state);
	got = sut->read_attempt(st->state, start, key);
	if (sut->read_retry(st->state, start))
		proof_violation(
		    &st->run,
		    "instruction %ld: the first attempt for key %ld was discarded although "
		    "the writer is stopped",
		    st->steps, key);
	else if (!answer_ok(st, key, got))
		proof_violation(
		    &st->run,
		    "instruction %ld (update %ld on key %ld): first attempt for key %ld "
		    "answered %ld",
		    st->steps, st->op, st->changing, key, got);

	check_stale_reader(st, key, st->op_start, "started with the update");
	check_stale_reader(st, key, st->prev, "started one instruction earlier");

	for (unsigned idx = 0; idx < sut->copies; idx++) {
		unsigned steps;

		/* A lagging idle copy holds an older state, which no reader accepts. */
		if (sut->idle_copy_lags && idx != (sut->read_begin(st->state) & 1u))
			continue;

		got = sut->descend(st->state, idx, key, &steps);
		if (steps >= LATCH_RB_MAX_DEPTH)
			proof_violation(
			    &st->run,
			    "instruction %ld: a raw descent of copy %u for key %ld did not "
			    "stop within %d steps",
			    st->steps, idx, key, LATCH_RB_MAX_DEPTH);
		/* A raw descent may miss a present key on the copy being changed, nothing else. */
		else if (got != SUT_ABSENT && !answer_ok(st, key, got))
			proof_violation(
			    &st->run,
			    "instruction %ld: a raw descent of copy %u for key %ld answered "
			    "%ld",
			    st->steps, idx, key, got);
	}
}

/* Everything checked at one instruction of the writer. */
static void check_instruction(struct stepper *st)
{
	long op = st->status->op;

	if (op != st->op) {
		/* A new update: the previous one has completed. */
		if (st->op > 0)
			st->present[st->changing] = !st->present[st->changing];
		st->op = op;
		st->changing = st->status->key;
		st->op_start = st->sut->read_begin(st->state);
		st->ops_seen++;
	}
	st->steps_in_update += st->status->in_update;
	for (long key = 0; key < st->keys + 2 && !proof_caught(&st->run); key++)
		check_key(st, key);
	st->prev = st->sut->read_begin(st->state);
}

int main(int argc, char **argv)
{
	struct stepper st = { 0 };
	long max_steps = test_env_long("LATCH_PROOF_STEPS", 20000);
	size_t arena_size, state_at;
	char *arena;
	pid_t child;
	int status;

	proof_parse_args(&st.run, "proof-singlestep", argc, argv);
	st.sut = st.run.sut;
	if (PROOF_UNDER_TSAN) {
		/* TSan cannot see the other process's accesses, so it adds no check here,
		 * while its instrumentation makes each update ~30 times longer to step. */
		printf("proof-singlestep: skipped under ThreadSanitizer: it checks nothing across "
		       "processes; run this harness in a build without TSan\n");
		return TEST_SKIP;
	}
	st.keys = test_env_long("LATCH_PROOF_KEYS", 512);
	CHECK(st.keys > 0 && max_steps > 0, "LATCH_PROOF_KEYS and LATCH_PROOF_STEPS must be > 0");
	if (!st.sut->read_begin || !st.sut->descend) {
		printf("proof-singlestep: %s has no latch read side to check\n", st.sut->name);
		return TEST_SKIP;
	}
	/* The structure after the status, on a cache line: the B+-tree ones are 64-byte aligned. */
	state_at = (sizeof(struct writer_status) + 63) / 64 * 64;
	arena_size = state_at + st.sut->size(st.keys);
	arena = mmap(NULL, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(arena != MAP_FAILED, "mmap: %s", strerror(errno));
	st.status = (struct writer_status *)(void *)arena;
	st.state = arena + state_at;
	st.present = calloc((size_t)st.keys, sizeof(bool));
	CHECK(st.present, "out of memory");

	st.sut->init(st.state, st.keys);
	for (long key = 0; key < st.keys; key++)
		if (initially_present(key)) {
			st.sut->insert(st.state, key);
			st.present[key] = true;
			st.initial++;
		}

	child = fork();
	CHECK(child >= 0, "fork: %s", strerror(errno));
	if (child == 0)
		writer_child(&st);

	CHECK(waitpid(child, &status, 0) == child, "waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP) {
		printf("proof-singlestep: skipped: ptrace(PTRACE_TRACEME) is denied here\n");
		return TEST_SKIP;
	}
	CHECK(WIFSTOPPED(status), "the writer child did not stop (status %#x)", status);
	st.prev = st.op_start = st.sut->read_begin(st.state);

	/* ops_seen > 1: the second update has begun, so the first one ran to its end. */
	while ((st.steps < max_steps || st.ops_seen < 2) && st.steps < 50 * max_steps &&
	       !proof_caught(&st.run)) {
		if (ptrace(PTRACE_SINGLESTEP, child, NULL, NULL) != 0) {
			int err = errno;

			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			if (st.steps == 0 && (err == EPERM || err == EACCES)) {
				printf(
				    "proof-singlestep: skipped: PTRACE_SINGLESTEP is denied (%s)\n",
				    strerror(err));
				return TEST_SKIP;
			}
			CHECK(0, "PTRACE_SINGLESTEP: %s", strerror(err));
		}
		CHECK(waitpid(child, &status, 0) == child, "waitpid: %s", strerror(errno));
		CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP,
		      "the writer child stopped unexpectedly (status %#x) at instruction %ld",
		      status, st.steps);
		st.steps++;
		check_instruction(&st);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	printf("proof-singlestep: %s: %ld writer instructions checked (%ld inside updates), "
	       "%ld updates from %ld elements, %ld keys probed per instruction, %ld probes of 6 "
	       "lookups each\n",
	       st.sut->name, st.steps, st.steps_in_update, st.ops_seen, st.initial, st.keys + 2,
	       st.probes);
	if (!proof_caught(&st.run))
		CHECK(st.steps_in_update > 0 && st.ops_seen > 1,
		      "the run never stopped the writer inside an update: it proved nothing");
	free(st.present);
	munmap(arena, arena_size);
	return proof_verdict(&st.run);
}
