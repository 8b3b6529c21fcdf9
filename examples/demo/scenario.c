/* SPDX-License-Identifier: MIT */
/*
 * The scenario, run in a child process: a JIT-like program and a sampling
 * profiler over it.
 *
 * The program's generated code lives in regions of a fake address space.
 * Stable regions (compiled once, never unregistered) alternate with
 * churning ones: the writer thread registers and unregisters those all
 * the time, one at a time or in batches (a recompiled function replaces
 * its old code at once).  Worker threads "run" code in stable regions.
 *
 * Every thread, the writer included, has its own profiling timer.  On
 * each tick the SIGPROF handler takes the address its thread was using,
 * resolves it to its region through the map under test and checks the
 * answer: a stable region must always resolve, to itself.  Ticks that
 * land on the writer while it is changing the map are the interesting
 * ones: the handler then runs in the middle of an update it interrupted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"

/* Where the fake code heap starts; on 32-bit targets, below 4 GiB. */
#define BASE         ((uintptr_t)(UINTPTR_MAX > 0xffffffffu ? 0x7f3a00000000ull : 0x7a000000u))
#define STRIDE       0x10000u /* one stable and one churning region per stride */
#define CHURN_OFFSET 0x8000u  /* churning regions sit between stable ones */
#define BATCH        4        /* changes in a batch: two out, two in */

static struct demo_region demo_stable[DEMO_STABLE_REGIONS];
static struct demo_region demo_churn[DEMO_CHURN_REGIONS];

static const struct demo_map *map;
static struct demo_shared *report;
static unsigned rate, nthreads;
static unsigned stop; /* accessed atomically */

/* The slot of the thread running, so its signal handler can find it. */
static _Thread_local struct demo_slot *my_slot;

unsigned long long demo_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned long long next_random(unsigned long long *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Regions of assorted sizes, so that no two neighbours look alike. */
static void lay_out_regions(void)
{
	for (unsigned i = 0; i < DEMO_STABLE_REGIONS; i++) {
		demo_stable[i].start = BASE + (uintptr_t)i * STRIDE;
		demo_stable[i].end = demo_stable[i].start + 0x1000u + (i % 7u) * 0x800u;
	}
	for (unsigned i = 0; i < DEMO_CHURN_REGIONS; i++) {
		demo_churn[i].start = BASE + (uintptr_t)i * STRIDE + CHURN_OFFSET;
		demo_churn[i].end = demo_churn[i].start + 0x800u + (i % 5u) * 0x800u;
	}
}

/* An address inside a random stable region, which must always resolve. */
static uintptr_t random_stable_address(unsigned long long *rng)
{
	unsigned long long r = next_random(rng);
	const struct demo_region *region = &demo_stable[r % DEMO_STABLE_REGIONS];

	return region->start + (uintptr_t)((r >> 32) % (region->end - region->start));
}

/* The stable region that holds @addr, by the layout. */
static const struct demo_region *expected_region(uintptr_t addr)
{
	return &demo_stable[(addr - BASE) / STRIDE];
}

static void count(unsigned long long *counter)
{
	/* Relaxed: only this thread's handler writes it; the parent only reads. */
	LATCH_STORE_RELAXED(counter, LATCH_LOAD_RELAXED(counter) + 1u);
}

/* The profiler: resolve the address this thread was using, check the answer. */
static void on_profiling_tick(int sig)
{
	struct demo_slot *s = my_slot;
	int saved_errno = errno;
	const struct demo_region *found;
	unsigned long long start, took;
	uintptr_t pc;
	unsigned interrupted;
	int err;

	(void)sig;
	/* Relaxed: written by this same thread, which the handler interrupted. */
	pc = LATCH_LOAD_RELAXED(&s->pc);
	/* Relaxed: as above; the writer fences it against its update. */
	interrupted = LATCH_LOAD_RELAXED(&s->in_update);
	count(&s->samples);
	if (interrupted)
		count(&s->interrupted);
	/* Relaxed: published to the parent by the release store below. */
	LATCH_STORE_RELAXED(&s->lookup_interrupted, interrupted);
	start = demo_now_ns();
	/* Release: a parent that sees this start time also sees lookup_interrupted. */
	LATCH_STORE_RELEASE(&s->lookup_since, start);
	err = map->find(pc, &found);
	took = demo_now_ns() - start;
	/* Relaxed: the parent only needs to see the lookup is over. */
	LATCH_STORE_RELAXED(&s->lookup_since, 0ull);

	if (err)
		count(&s->refused);
	if (found != expected_region(pc))
		count(&s->wrong);
	/* Relaxed: single writer (this handler), read by the parent. */
	if (took > LATCH_LOAD_RELAXED(&s->worst_ns))
		LATCH_STORE_RELAXED(&s->worst_ns, took);
	errno = saved_errno;
}

/* Fail the child's run; the parent reports the exit status. */
_Noreturn static void die(const char *what)
{
	fprintf(stderr, "latch-demo: %s: %s\n", what, strerror(errno));
	_exit(2);
}

/*
 * Bind the calling thread to @s, give it an address to be using, and start
 * its per-thread profiling timer.
 */
static timer_t start_profiling(struct demo_slot *s, unsigned index, unsigned long long *rng)
{
	struct sigevent sev;
	struct itimerspec its;
	long period = 1000000000L / (long)rate;
	timer_t timer;

	my_slot = s;
	/* Relaxed: read only by this thread's own signal handler. */
	LATCH_STORE_RELAXED(&s->pc, random_stable_address(rng));
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = gettid();
	/* Stagger the threads' first ticks over one period. */
	its.it_value.tv_sec = 0;
	its.it_value.tv_nsec = 1 + period / (long)(nthreads + 1) * (long)index;
	its.it_interval.tv_sec = period / 1000000000L;
	its.it_interval.tv_nsec = period % 1000000000L;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer))
		die("timer_create");
	if (timer_settime(timer, 0, &its, NULL))
		die("timer_settime");
	return timer;
}

static bool stopping(void)
{
	/* Relaxed: the flag only ends the loops; it publishes nothing. */
	return LATCH_LOAD_RELAXED(&stop) != 0;
}

/* What the stand-in for generated code computes, kept so it is not optimised out. */
static volatile uintptr_t code_result;

/* Stand-in for running generated code at @pc. */
static void run_code(uintptr_t pc)
{
	uintptr_t x = pc;

	for (unsigned i = 0; i < 256; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	/* Relaxed: every worker stores to this sink and nothing reads it; atomic only
	 * so that the stores do not race. */
	LATCH_STORE_RELAXED(&code_result, x);
}

static void *worker(void *arg)
{
	struct demo_slot *s = arg;
	unsigned index = (unsigned)(s - report->slot);
	unsigned long long rng = 0x9e3779b97f4a7c15ull * (index + 1u);
	timer_t timer = start_profiling(s, index, &rng);

	while (!stopping()) {
		uintptr_t pc = random_stable_address(&rng);

		/* Relaxed: read only by this thread's own signal handler. */
		LATCH_STORE_RELAXED(&s->pc, pc);
		run_code(pc);
	}
	timer_delete(timer);
	return NULL;
}

/*
 * The writer's next update into @changes: usually one churning region
 * registered or unregistered, every fourth time a batch replacing two
 * registered regions with two unregistered ones.  Returns its length.
 * Churning regions keep their addresses and are never freed, so one may
 * be registered again at once: no reader can see a changed key.
 */
static size_t plan_update(struct demo_change *changes, bool *registered, unsigned long long *rng,
                          unsigned long long n)
{
	size_t len = 0;

	if (n % 4u == 3u) {
		for (unsigned tries = 0; tries < 64 && len < BATCH; tries++) {
			unsigned i = (unsigned)(next_random(rng) % DEMO_CHURN_REGIONS);
			enum latch_range_op op =
			    len >= BATCH / 2 ? LATCH_RANGE_INSERT : LATCH_RANGE_ERASE;
			size_t k;

			for (k = 0; k < len && changes[k].region != &demo_churn[i]; k++)
				;
			if (k == len && registered[i] == (op == LATCH_RANGE_ERASE))
				changes[len++] = (struct demo_change){ op, &demo_churn[i] };
		}
	}
	if (len == 0) {
		unsigned i = (unsigned)(next_random(rng) % DEMO_CHURN_REGIONS);

		changes[len++] =
		    (struct demo_change){ registered[i] ? LATCH_RANGE_ERASE : LATCH_RANGE_INSERT,
			                  &demo_churn[i] };
	}
	for (size_t k = 0; k < len; k++)
		registered[changes[k].region - demo_churn] = changes[k].op == LATCH_RANGE_INSERT;
	return len;
}

/* Apply @changes to the map; a refusal is a bug the run reports. */
static void apply_or_die(const struct demo_change *changes, size_t n)
{
	int err = map->apply(changes, n);

	if (err) {
		errno = -err;
		die("the map refused an update");
	}
}

static void set_in_update(struct demo_slot *s, unsigned value)
{
	/* Signal fence: this thread's handler sees the flag ordered with the update. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Relaxed: read only by this thread's own signal handler. */
	LATCH_STORE_RELAXED(&s->in_update, value);
	/* Signal fence: as above, on the other side of the store. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void *writer(void *arg)
{
	static bool registered[DEMO_CHURN_REGIONS];
	struct demo_slot *s = arg;
	unsigned long long rng = 0x2545f4914f6cdd1dull, n = 0;
	timer_t timer = start_profiling(s, 0, &rng);
	struct demo_change changes[BATCH];

	while (!stopping()) {
		size_t len = plan_update(changes, registered, &rng, n);

		/* Relaxed: read only by this thread's own signal handler. */
		LATCH_STORE_RELAXED(&s->pc, random_stable_address(&rng));
		set_in_update(s, 1u);
		apply_or_die(changes, len);
		set_in_update(s, 0u);
		n++;
		/* Relaxed: a progress counter, single writer, read by the parent. */
		LATCH_STORE_RELAXED(&report->updates, n);
	}
	timer_delete(timer);
	return NULL;
}

static void sleep_seconds(double seconds)
{
	struct timespec left;

	left.tv_sec = (time_t)seconds;
	left.tv_nsec = (long)((seconds - (double)left.tv_sec) * 1e9);
	while (nanosleep(&left, &left) && errno == EINTR)
		;
}

_Noreturn void demo_scenario_run(const struct demo_map *m, const struct demo_options *opt,
                                 struct demo_shared *shared)
{
	pthread_t threads[DEMO_MAX_THREADS + 1];
	struct sigaction sa;
	struct demo_change change;

	map = m;
	report = shared;
	rate = opt->rate;
	nthreads = opt->threads;
	lay_out_regions();
	map->init();
	for (unsigned i = 0; i < DEMO_STABLE_REGIONS; i++) {
		change = (struct demo_change){ LATCH_RANGE_INSERT, &demo_stable[i] };
		apply_or_die(&change, 1);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_profiling_tick;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL))
		die("sigaction");

	for (unsigned i = 0; i <= nthreads; i++) {
		errno = pthread_create(&threads[i], NULL, i ? worker : writer, &shared->slot[i]);
		if (errno)
			die("pthread_create");
	}
	sleep_seconds(opt->seconds);
	/* Relaxed: the threads only need to see it eventually. */
	LATCH_STORE_RELAXED(&stop, 1u);
	for (unsigned i = 0; i <= nthreads; i++)
		pthread_join(threads[i], NULL);
	/* Release: the parent that sees it also sees every final count. */
	LATCH_STORE_RELEASE(&shared->finished, 1u);
	_exit(0);
}
