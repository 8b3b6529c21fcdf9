/* SPDX-License-Identifier: MIT */
/*
 * The churning writer of the outside readers' tests (test-remote.c,
 * test-bpf.c), and the model that checks their answers against it.
 *
 * The writer's log: the child applies a deterministic sequence of
 * operations (op k is a function of k and the contents: single inserts
 * and erases, batches through latch_range_commit(), whole new contents
 * through latch_range_load_sorted()), and after each one stores how many
 * it finished in shared memory (shm->done; shm->in_update is set while it
 * is inside a library call).  The reader replays the same sequence on a
 * model.  A lookup that started after @t0 operations were done and ended
 * before op @t1 + 1 began may have seen the contents after any of ops t0
 * .. t1 (t1 perhaps half done): a range it found must hold the address and
 * be one some of those states had; a range all of them had must be found
 * (check_answer()).
 *
 * Slot j's range lies in cell j, [churn_base + j * churn_cell, + churn_cell).
 */
#ifndef LATCH_TEST_REMOTE_CHURN_H
#define LATCH_TEST_REMOTE_CHURN_H

#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <latch/publish.h>
#include <latch/remote.h>

#include "check.h"

#define NAME  "churned"
#define BATCH 8u

static size_t nslots;
static bool expect_caught;
/* Where slot j's cell is: churn_base + j * churn_cell. */
static uint64_t churn_base = UINT64_C(0x100000), churn_cell = 256;
/*
 * What the writer does besides: threads that look up its map (the writer
 * on the first CPU, reader i on CPU i + 1 modulo their number, so that
 * they run at once), a perf map it appends to.
 */
#define CHURN_READERS_MAX 4
static unsigned churn_readers;
static const char *churn_perf_map;
static unsigned churn_publish_flags;

/* Slot j's range: inside its own cell, so ranges of different slots never overlap. */
static uint64_t slot_start(size_t j)
{
	return churn_base + j * churn_cell;
}

static uint64_t slot_end(size_t j)
{
	return slot_start(j) + 16 + (j * 37) % (churn_cell - 32);
}

/* A random address in a random slot's cell, and that slot. */
static uint64_t random_addr(struct test_rng *rng, size_t *j)
{
	*j = test_rng_below(rng, nslots);
	return slot_start(*j) + test_rng_below(rng, churn_cell);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A wrong answer: the test fails, or with --expect-caught succeeds. */
static void wrong(const char *what, uint64_t addr, int res, const struct latch_range *r)
{
	fprintf(stderr, "%s: address %#llx, result %d, range [%#llx, %#llx) value %p\n", what,
	        (unsigned long long)addr, res, (unsigned long long)(res == 1 ? r->start : 0),
	        (unsigned long long)(res == 1 ? r->end : 0), res == 1 ? r->value : NULL);
	if (expect_caught) {
		printf("caught, as expected\n");
		exit(0);
	}
	exit(1);
}

/* ---- the operations both sides replay ---- */

enum op_kind { OP_SINGLE, OP_BATCH, OP_LOAD };

struct change {
	uint32_t slot;
	bool present; /* after the change */
};

/* Op @k on @present (not changed): its kind, and its changes in order in @out. */
static enum op_kind plan(uint64_t k, const unsigned char *present, struct change *out, size_t *n)
{
	struct test_rng rng = { (k + 1) * 0x9e3779b97f4a7c15ull };
	unsigned long r = test_rng_below(&rng, 64);

	*n = 0;
	if (r == 0) {
		for (size_t j = 0; j < nslots; j++) {
			bool now = test_rng_below(&rng, 2);

			if (now != (bool)present[j])
				out[(*n)++] = (struct change){ (uint32_t)j, now };
		}
		return OP_LOAD;
	}
	size_t count = r < 16 ? 1 + test_rng_below(&rng, BATCH) : 1;
	/* A slot may appear twice in a batch: its second change undoes the first. */
	for (size_t i = 0; i < count; i++) {
		uint32_t j = (uint32_t)test_rng_below(&rng, nslots);
		bool was = present[j];

		for (size_t p = 0; p < i; p++)
			if (out[p].slot == j)
				was = out[p].present;
		out[i] = (struct change){ j, !was };
	}
	*n = count;
	return r < 16 ? OP_BATCH : OP_SINGLE;
}

static void apply_model(unsigned char *present, const struct change *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		present[c[i].slot] = c[i].present;
}

/* ---- the child: the writer ---- */

struct shared {
	uint64_t done;      /* operations finished */
	uint32_t in_update; /* the writer is inside a library call */
	uint32_t stop;      /* the parent asks the writer to exit */
	uint32_t ready;
};

static struct shared *shm;

static void pace(long ns)
{
	double until = now_s() + (double)ns * 1e-9;

	while (ns > 0 && now_s() < until)
		;
}

/* A thread of the writer's process that looks addresses up in its map, beside the writer. */
static void *local_reader(void *arg)
{
	const struct latch_range_map *m = arg;
	struct test_rng rng = { (uint64_t)(uintptr_t)&rng };
	struct latch_range out;
	size_t j;

	/* Acquire: pairs with the writer's release; nothing else is ordered by it. */
	while (!__atomic_load_n(&shm->stop, __ATOMIC_ACQUIRE))
		latch_range_find(m, random_addr(&rng, &j), &out);
	return NULL;
}

/* Append the ranges op @c inserted to the perf map @f, as a JIT writes it. */
static void perf_map_append(FILE *f, const struct change *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].present)
			fprintf(f, "%llx %llx slot%u\n", (unsigned long long)slot_start(c[i].slot),
			        (unsigned long long)(slot_end(c[i].slot) - slot_start(c[i].slot)),
			        (unsigned)c[i].slot);
}

static void writer(long pace_ns)
{
	static struct latch_range_map m;
	unsigned char *present = calloc(nslots, 1);
	struct change *c = malloc(nslots * sizeof(*c));
	struct latch_range_change *batch = malloc(BATCH * sizeof(*batch));
	struct latch_range *all = malloc(nslots * sizeof(*all));
	FILE *perf_map = NULL;
	pthread_t readers[CHURN_READERS_MAX];

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
	CHECK(present && c && batch && all, "out of memory");
	CHECK(latch_range_map_init(&m) == 0, "init");
	CHECK(latch_range_publish(&m, NAME, churn_publish_flags) == 0, "publish");
	CHECK(churn_readers <= CHURN_READERS_MAX, "%u reader threads", churn_readers);
	for (unsigned i = 0; i < churn_readers; i++) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		cpu_set_t cpus;

		CHECK(pthread_create(&readers[i], NULL, local_reader, &m) == 0, "a reader thread");
		CPU_ZERO(&cpus);
		CPU_SET((int)((i + 1) % (unsigned long)(ncpu > 0 ? ncpu : 1)), &cpus);
		pthread_setaffinity_np(readers[i], sizeof(cpus), &cpus); /* a hint: may fail */
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	}
	if (churn_perf_map)
		CHECK(perf_map = fopen(churn_perf_map, "w"), "%s", churn_perf_map);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
	__atomic_store_n(&shm->ready, 1, __ATOMIC_RELEASE);
	for (uint64_t k = 0; !__atomic_load_n(&shm->stop, __ATOMIC_ACQUIRE); k++) {
		size_t n, total = 0;
		enum op_kind kind = plan(k, present, c, &n);
		int err = 0;

		__atomic_store_n(&shm->in_update, 1, __ATOMIC_RELAXED);
		switch (kind) {
		case OP_SINGLE:
			err =
			    c[0].present
			        ? latch_range_insert(&m, slot_start(c[0].slot), slot_end(c[0].slot),
			                             (void *)(uintptr_t)(c[0].slot + 1), NULL)
			        : latch_range_erase(&m, slot_start(c[0].slot));
			break;
		case OP_BATCH:
			for (size_t i = 0; i < n; i++) {
				uint32_t j = c[i].slot;

				batch[i] = (struct latch_range_change){
					c[i].present ? LATCH_RANGE_INSERT : LATCH_RANGE_ERASE,
					{ slot_start(j), slot_end(j), (void *)(uintptr_t)(j + 1) }
				};
			}
			err = latch_range_commit(&m, batch, n, NULL);
			break;
		case OP_LOAD:
			apply_model(present, c, n);
			for (size_t j = 0; j < nslots; j++)
				if (present[j])
					all[total++] =
					    (struct latch_range){ slot_start(j), slot_end(j),
						                  (void *)(uintptr_t)(j + 1) };
			err = latch_range_load_sorted(&m, all, total, NULL);
			break;
		}
		__atomic_store_n(&shm->in_update, 0, __ATOMIC_RELAXED);
		CHECK(err == 0, "op %llu failed: %d", (unsigned long long)k, err);
		apply_model(present, c, n);
		if (perf_map)
			perf_map_append(perf_map, c, n);
		/* Release: the op is done before a reader sees the count. */
		__atomic_store_n(&shm->done, k + 1, __ATOMIC_RELEASE);
		pace(pace_ns);
	}
	/* The reader threads saw shm->stop too: none may run while the map is destroyed. */
	for (unsigned i = 0; i < churn_readers; i++)
		CHECK(pthread_join(readers[i], NULL) == 0, "join a reader thread");
	CHECK(!perf_map || fclose(perf_map) == 0, "%s", churn_perf_map);
	CHECK(latch_range_unpublish(&m) == 0, "unpublish");
	latch_range_map_destroy(&m);
	_exit(0);
}

static pid_t start_writer(long pace_ns)
{
	pid_t pid;

	shm->done = shm->stop = shm->ready = 0;
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		writer(pace_ns);
	while (!__atomic_load_n(&shm->ready, __ATOMIC_ACQUIRE))
		usleep(100);
	return pid;
}

/* ---- the parent: the model of what the child did ---- */

struct model {
	unsigned char *present; /* after ops 0 .. step-1 */
	uint64_t step;
	struct change *c;
	unsigned char *scratch; /* the replay of an interval */
};

static void model_advance(struct model *md, uint64_t to)
{
	size_t n;

	for (; md->step < to; md->step++) {
		plan(md->step, md->present, md->c, &n);
		apply_model(md->present, md->c, n);
	}
}

/*
 * The check of a lookup of @addr (slot @j) that ran while ops @t0 .. @t1
 * were done or under way: @res and @r its answer.
 */
static void check_answer(struct model *md, uint64_t t0, uint64_t t1, uint64_t addr, size_t j,
                         int res, const struct latch_range *r)
{
	bool at_start, touched = false, inside = addr < slot_end(j);
	size_t n;

	model_advance(md, t0);
	at_start = md->present[j];
	/* Ops t0 .. t1-1 are done; op t1 may be half done: replay them on a copy. */
	memcpy(md->scratch, md->present, nslots);
	for (uint64_t k = t0; k <= t1; k++) {
		plan(k, md->scratch, md->c, &n);
		for (size_t i = 0; i < n; i++)
			touched |= md->c[i].slot == j;
		apply_model(md->scratch, md->c, n);
	}
	if (res < 0 && res != -EAGAIN)
		wrong("error", addr, res, r);
	if (res == 1 && (r->start != slot_start(j) || r->end != slot_end(j) ||
	                 r->value != (void *)(uintptr_t)(j + 1) || !inside))
		wrong("found a range that does not hold the address", addr, res, r);
	if (res == 1 && !at_start && !touched)
		wrong("found a range absent throughout the lookup", addr, res, r);
	if (res == 0 && at_start && !touched && inside)
		wrong("missed a range present throughout the lookup", addr, res, r);
}

static void model_init(struct model *md)
{
	md->present = calloc(nslots, 1);
	md->scratch = malloc(nslots);
	md->c = malloc(nslots * sizeof(*md->c));
	md->step = 0;
	CHECK(md->present && md->scratch && md->c, "out of memory");
}

static void model_free(struct model *md)
{
	free(md->present);
	free(md->scratch);
	free(md->c);
}

static void finish_writer(pid_t pid)
{
	int status;

	__atomic_store_n(&shm->stop, 1, __ATOMIC_RELEASE);
	kill(pid, SIGCONT);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer failed: status %#x",
	      status);
}

#endif /* LATCH_TEST_REMOTE_CHURN_H */
