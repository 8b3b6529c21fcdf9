/* SPDX-License-Identifier: MIT */
/*
 * latchbench: liblatch against every peer, side by side.
 *
 *	latchbench [--quick] [--runs N] [--readers N] [--csv FILE] [--workloads LIST]
 *	           [--selfcheck] [--small-pages]
 *
 * Workloads (see docs/benchmarks.md):
 *	1 lookup cost, one thread      4 address ranges
 *	2 read-mostly concurrency      5 batches (latch_tree_commit)
 *	3 write cost, one thread       6 memory per element
 *	7 latched value stores, one flip against two
 *	8 ordered lookups (floor)      9 bulk loads
 *
 * Workload 1 also measures, on random 64-bit keys, lookups whose keys
 * depend on the previous answer (latency) and their percentiles.
 *
 * Every figure is measured --runs times; each run measures every peer of
 * a cell one after the other ("side by side"), so a ratio is taken within
 * one run and the table shows the median over runs and the spread
 * (min..max).  --selfcheck runs tiny sizes and fails if any peer returns
 * a wrong answer; CTest runs it so the benchmark cannot rot.
 */
#include <errno.h>
#ifdef LATCH_BENCH_HAVE_MALLINFO2
#include <malloc.h>
#endif
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#include <x86intrin.h>
#endif

#include <latch/value.h>

#include "bench.h"
#include "btree.h" /* latch_btree_huge_pages_hook_ (the library is built with its test hooks) */
#include "report.h"

/* ---- options ---------------------------------------------------------- */

struct options {
	int runs;
	int readers;         /* reader threads of workloads 2 and 5 (0: cores - 1) */
	double lookup_s;     /* time per lookup / write measurement */
	double concurrent_s; /* duration of one concurrent measurement */
	bool quick, selfcheck, workload[10];
	const char *csv;
};

static struct options opt;

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds: for the concurrent workloads and the total. */
static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/*
 * CPU seconds of the calling thread: the single-thread workloads are
 * timed with it, so time the thread spends descheduled on a busy machine
 * is not counted as lookup or write time.
 */
static double cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("latchbench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The progress line: rewritten in place on a terminal, silent otherwise. */
static void progress(const char *fmt, ...)
{
	static int tty = -1;
	char line[96];
	va_list ap;

	if (tty < 0)
		tty = isatty(2);
	if (!tty || opt.selfcheck)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "\r%-79.79s", line);
}

static void progress_done(void)
{
	progress("%s", "");
	if (isatty(2) && !opt.selfcheck)
		fputc('\r', stderr);
}

/* ---- keys --------------------------------------------------------------- */

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: fast, seeded identically every run. */
static unsigned long long rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static size_t rng_below(size_t bound)
{
	return (size_t)(rng_next() % bound);
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die("out of memory (%zu bytes)", size);
	return p;
}

/* Puts keys[0..n-1] in a random order. */
static void shuffle(long *keys, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(i);
		long t = keys[i - 1];

		keys[i - 1] = keys[j];
		keys[j] = t;
	}
}

/* The keys of slots 0..n-1: first + i * stride for i in a random order. */
static long *make_keys(size_t n, long first, long stride)
{
	long *keys = xmalloc(n * sizeof(*keys));

	for (size_t i = 0; i < n; i++)
		keys[i] = first + (long)i * stride;
	shuffle(keys, n);
	return keys;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The keys of slots 0..n-1: n different uniform random 64-bit keys, in a random order. */
static long *make_random_keys(size_t n)
{
	long *keys = xmalloc(n * sizeof(*keys));
	size_t have = 0;

	while (have < n) {
		/* Draw the missing keys, then drop the repeats (rare: n^2 / 2^65). */
		for (size_t i = have; i < n; i++)
			keys[i] = (long)rng_next();
		qsort(keys, n, sizeof(*keys), cmp_long);
		have = n ? 1 : 0;
		for (size_t i = 1; i < n; i++)
			if (keys[i] != keys[have - 1])
				keys[have++] = keys[i];
	}
	shuffle(keys, n);
	return keys;
}

/* Zipf(0.99) ranks in [0, n): the cumulative distribution, for sampling. */
static double *zipf_cdf(size_t n)
{
	double *cdf = xmalloc(n * sizeof(*cdf)), sum = 0;

	for (size_t i = 0; i < n; i++)
		cdf[i] = sum += 1.0 / pow((double)(i + 1), 0.99);
	for (size_t i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static size_t zipf_rank(const double *cdf, size_t n)
{
	double u = (double)(rng_next() >> 11) * 0x1p-53;
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * @count lookup keys drawn from @keys (slots 0..n-1), uniformly or with
 * Zipf ranks (slot order is random, so hot keys are spread out), each
 * plus @offset_mod: 0 looks up the key itself, -1 a key next to it (a
 * miss for odd keys), and a positive m a random offset in [0, m).
 */
static long *make_lookups(const long *keys, size_t n, size_t count, bool zipf, long offset_mod)
{
	long *out = xmalloc(count * sizeof(*out));
	double *cdf = zipf ? zipf_cdf(n) : NULL;

	for (size_t i = 0; i < count; i++) {
		long k = keys[zipf ? zipf_rank(cdf, n) : rng_below(n)];

		out[i] = offset_mod > 0 ? k + (long)rng_below((size_t)offset_mod) : k + offset_mod;
	}
	free(cdf);
	return out;
}

/* ---- measuring ------------------------------------------------------------ */

#define LOOKUP_CHUNK 4096

static size_t lookup_count(void)
{
	return opt.selfcheck ? 1u << 14 : 1u << 20;
}

/* The span bench_answer_holds() checks @peer's answers with; 0: they point to no key. */
static unsigned long answer_span(const struct bench_peer *peer)
{
	if (peer->flags & BENCH_ANSWER_KEY)
		return 1;
	return peer->flags & BENCH_ANSWER_RANGE ? BENCH_RANGE_LEN : 0;
}

/*
 * Fails unless @t counted @done lookups that all hit (or, !@expect_hits,
 * none did) and, from a BENCH_VERIFY walk of a peer that says what its
 * answers point to, every hit's answer is right.  @when ends the message.
 */
static void check_tally(const struct bench_peer *peer, const struct bench_tally *t, size_t done,
                        bool expect_hits, const char *when)
{
	if (t->hits != (expect_hits ? done : 0))
		die("%s: %lu of %zu lookups hit%s, expected %s", peer->name, t->hits, done, when,
		    expect_hits ? "all" : "none");
	if (t->walk == BENCH_VERIFY && t->span && t->verified != t->hits)
		die("%s: %lu of %lu hits%s answered with another key", peer->name,
		    t->hits - t->verified, t->hits, when);
}

/* Looks up keys[0..n-1] once, checking every answer as check_tally() does. */
static void check_lookups(const struct bench_peer *peer, void *inst, const long *keys, size_t n,
                          bool expect_hits, const char *when)
{
	struct bench_tally t = { .walk = BENCH_VERIFY, .span = answer_span(peer) };

	peer->find_many(inst, keys, n, &t);
	check_tally(peer, &t, n, expect_hits, when);
}

/*
 * Nanoseconds (thread CPU time) per lookup of @peer over @lookups, cycled
 * for at least opt.lookup_s, in @walk's order.  Checks every answer: all
 * hits or all misses, and the first LOOKUP_CHUNK (the warm-up) verified.
 */
static double measure_lookups_in(const struct bench_peer *peer, void *inst, const long *lookups,
                                 size_t count, bool expect_hits, enum bench_walk walk, size_t batch)
{
	struct bench_tally t = { .walk = walk, .batch = batch };
	struct bench_tally check = { .walk = BENCH_VERIFY,
		                     .span = answer_span(peer),
		                     .batch = batch };
	void (*find)(void *, const long *, size_t, struct bench_tally *) =
	    batch ? peer->find_batch : peer->find_many;
	size_t done = 0, at = 0;
	double t0, elapsed;

	check_lookups(peer, inst, lookups, LOOKUP_CHUNK, expect_hits, ""); /* and warm up */
	if (batch) {
		/* The batched lookup's answers too. */
		find(inst, lookups, LOOKUP_CHUNK, &check);
		check_tally(peer, &check, LOOKUP_CHUNK, expect_hits, " (batched)");
	}
	t0 = cpu_s();
	do {
		find(inst, lookups + at, LOOKUP_CHUNK, &t);
		done += LOOKUP_CHUNK;
		at = (at + LOOKUP_CHUNK) % count;
		elapsed = cpu_s() - t0;
	} while (elapsed < opt.lookup_s);
	check_tally(peer, &t, done, expect_hits, "");
	return elapsed * 1e9 / (double)done;
}

/* measure_lookups_in() one lookup at a time. */
static double measure_lookups(const struct bench_peer *peer, void *inst, const long *lookups,
                              size_t count, bool expect_hits, enum bench_walk walk)
{
	return measure_lookups_in(peer, inst, lookups, count, expect_hits, walk, 0);
}

/* The batch sizes of the batched lookups' cells. */
static const size_t lookup_batches[] = { 16, 64, 256 };

/* Fails unless @peer finds every one of keys[0..n-1] (and right, where it can tell). */
static void check_all_found(const struct bench_peer *peer, void *inst, const long *keys, size_t n)
{
	check_lookups(peer, inst, keys, n, true, " after the writes");
}

/* Nanoseconds (thread CPU time) per insert+erase pair: erase a slot, insert it again. */
static double measure_writes(const struct bench_peer *peer, void *inst, const long *keys,
                             const size_t *slots, size_t count)
{
	size_t done = 0, batch = 1;
	double t0 = cpu_s(), elapsed;

	do {
		for (size_t i = 0; i < batch; i++, done++) {
			size_t s = slots[done % count];

			peer->erase(inst, s);
			peer->insert(inst, s, keys[s]);
		}
		elapsed = cpu_s() - t0;
		if (elapsed < opt.lookup_s / 16)
			batch *= 2;
	} while (elapsed < opt.lookup_s);
	return elapsed * 1e9 / (double)done;
}

static size_t *make_slots(size_t n, size_t count)
{
	size_t *slots = xmalloc(count * sizeof(*slots));

	for (size_t i = 0; i < count; i++)
		slots[i] = rng_below(n);
	return slots;
}

/*
 * Bytes the heap holds now (small and mmap'ed chunks); 0 without
 * mallinfo2(), where workload 6 is off and workload 9 reports no bytes.
 */
#ifdef LATCH_BENCH_HAVE_MALLINFO2
static const bool heap_measured = true;
#else
static const bool heap_measured = false;
#endif

static double heap_bytes(void)
{
#ifdef LATCH_BENCH_HAVE_MALLINFO2
	struct mallinfo2 mi = mallinfo2();

	return (double)mi.uordblks + (double)mi.hblkhd;
#else
	return 0;
#endif
}

/* A new instance of @peer holding slots 0..n-1; *bytes gets its heap use. */
static void *build(const struct bench_peer *peer, const long *keys, size_t n, double *bytes)
{
	double before = heap_bytes();
	void *inst = peer->create(n);

	if (!inst)
		die("%s: cannot create an instance of %zu elements", peer->name, n);
	if (peer->load) {
		peer->load(inst, keys, n);
	} else {
		for (size_t i = 0; i < n; i++)
			peer->insert(inst, i, keys[i]);
	}
	*bytes = heap_bytes() - before;
	return inst;
}

/*
 * inst[p] = a new instance of peers[p] holding slots 0..n-1, for every p;
 * with @memory, workload 6 records each one's heap bytes per element.
 */
static void build_all(const struct bench_peer *const *peers, size_t np, const long *keys, size_t n,
                      void **inst, bool memory)
{
	for (size_t p = 0; p < np; p++) {
		double bytes;

		progress("[build] n=%zu %s", n, peers[p]->name);
		inst[p] = build(peers[p], keys, n, &bytes);
		if (memory)
			report_add(6, (long)n, "heap", peers[p]->name, "bytes/elem",
			           bytes / (double)n);
	}
}

/* Every instance must still find all of keys[0..n-1]; then it is destroyed. */
static void check_destroy_all(const struct bench_peer *const *peers, size_t np, void **inst,
                              const long *keys, size_t n)
{
	for (size_t p = 0; p < np; p++) {
		check_all_found(peers[p], inst[p], keys, n);
		peers[p]->destroy(inst[p]);
	}
}

/* ---- workloads 1, 3, 6: one thread --------------------------------------- */

static const char *const lookup_cases[] = { "uniform hit", "uniform miss", "zipf hit",
	                                    "zipf miss" };

static void single_thread_workloads(const size_t *sizes, size_t nsizes)
{
	const size_t np = bench_peer_count;
	void **inst = xmalloc(np * sizeof(*inst));

	for (size_t si = 0; si < nsizes; si++) {
		size_t n = sizes[si], count = lookup_count();
		long *keys = make_keys(n, 1, 2); /* odd keys: even ones miss */
		size_t *slots = make_slots(n, 1u << 16);

		build_all(bench_peers, np, keys, n, inst, opt.workload[6]);
		for (size_t c = 0; opt.workload[1] && c < 4; c++) {
			bool hit = !(c & 1);
			long *lookups = make_lookups(keys, n, count, c >= 2, hit ? 0 : -1);

			for (int r = 0; r < opt.runs; r++)
				for (size_t p = 0; p < np; p++) {
					progress("[1 lookup] n=%zu %s: %s run %d/%d", n,
					         lookup_cases[c], bench_peers[p]->name, r + 1,
					         opt.runs);
					report_add(1, (long)n, lookup_cases[c],
					           bench_peers[p]->name, "ns/lookup",
					           measure_lookups(bench_peers[p], inst[p], lookups,
					                           count, hit, BENCH_INDEPENDENT));
				}
			free(lookups);
		}
		for (int r = 0; opt.workload[3] && r < opt.runs; r++)
			for (size_t p = 0; p < np; p++) {
				progress("[3 write] n=%zu %s run %d/%d", n, bench_peers[p]->name,
				         r + 1, opt.runs);
				report_add(
				    3, (long)n, "insert+erase", bench_peers[p]->name, "ns/pair",
				    measure_writes(bench_peers[p], inst[p], keys, slots, 1u << 16));
			}
		/* After all those writes every key must still be found. */
		check_destroy_all(bench_peers, np, inst, keys, n);
		free(slots);
		free(keys);
	}
	free(inst);
	progress_done();
}

/* ---- workload 1: latency and its tail, on random 64-bit keys ------------------ */

/*
 * The clock that times a batch of lookups: the time-stamp counter on x86
 * (a few ns to read; lfence keeps the lookups inside the two reads), else
 * CLOCK_MONOTONIC in ns.  Converted to ns against CLOCK_MONOTONIC over the
 * whole measurement, so no frequency is assumed.
 */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
	uint64_t t;

	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* Dependent lookups per timed batch of measure_tail(). */
#define TAIL_BATCH 8

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The latency of single lookups, as percentiles: batches of TAIL_BATCH
 * dependent lookups (a BENCH_DEPENDENT walk) are timed one by one with
 * ticks(), for at least opt.lookup_s and enough batches for p99.9; each
 * batch's time, less the median time of an empty batch (the same timed
 * call with no key: the clock's and the call's cost, reported beside),
 * divided by TAIL_BATCH is one sample.  Wall-clock time: a batch that was
 * interrupted or descheduled counts in full, as it would for a caller.
 */
static void measure_tail(const struct bench_peer *peer, void *inst, const long *lookups,
                         size_t count, long n)
{
	static const struct {
		const char *what;
		double q;
	} quantiles[] = { { "chain p50", 0.5 }, { "chain p99", 0.99 }, { "chain p99.9", 0.999 } };
	const size_t min = opt.selfcheck ? 1u << 8 : opt.quick ? 1u << 13 : 1u << 15;
	const size_t max = 1u << 18, empties = 1u << 12;
	uint64_t *tk = xmalloc(max * sizeof(*tk)), empty, c0;
	struct bench_tally t = { .walk = BENCH_DEPENDENT };
	size_t k, at = 0;
	double w0, ns_per_tick;

	for (k = 0; k < empties; k++) {
		uint64_t t0 = ticks();

		peer->find_many(inst, lookups, 0, &t);
		tk[k] = ticks() - t0;
	}
	qsort(tk, empties, sizeof(*tk), cmp_u64);
	empty = tk[empties / 2];
	w0 = now_s();
	c0 = ticks();
	for (k = 0; k < max && (k < min || k % 1024 || now_s() - w0 < opt.lookup_s); k++) {
		uint64_t t0 = ticks();

		peer->find_many(inst, lookups + at, TAIL_BATCH, &t);
		tk[k] = ticks() - t0;
		at = (at + TAIL_BATCH) % count;
	}
	ns_per_tick = (now_s() - w0) * 1e9 / (double)(ticks() - c0);
	check_tally(peer, &t, k * TAIL_BATCH, true, "");
	qsort(tk, k, sizeof(*tk), cmp_u64);
	for (size_t q = 0; q < sizeof(quantiles) / sizeof(quantiles[0]); q++) {
		uint64_t b = tk[(size_t)ceil(quantiles[q].q * (double)k) - 1];

		report_add(1, n, quantiles[q].what, peer->name, "ns/lookup",
		           (double)(b > empty ? b - empty : 0) * ns_per_tick / TAIL_BATCH);
	}
	report_add(1, n, "empty batch", peer->name, "timer ns/batch", (double)empty * ns_per_tick);
	free(tk);
}

/*
 * Workload 1 on n uniform random 64-bit keys, uniform hits: ns per lookup
 * independent (throughput) and dependent (latency), and the latency's
 * percentiles (measure_tail()), every peer side by side in each run.
 */
static void latency_workload(const size_t *sizes, size_t nsizes)
{
	static const struct {
		const char *what;
		enum bench_walk walk;
	} walks[] = { { "random hit", BENCH_INDEPENDENT }, { "random chain", BENCH_DEPENDENT } };
	const size_t np = bench_peer_count;
	void **inst = xmalloc(np * sizeof(*inst));

	for (size_t si = 0; si < nsizes; si++) {
		size_t n = sizes[si], count = lookup_count();
		long *keys = make_random_keys(n);
		long *lookups = make_lookups(keys, n, count, false, 0);

		build_all(bench_peers, np, keys, n, inst, false);
		for (int r = 0; r < opt.runs; r++)
			for (size_t p = 0; p < np; p++) {
				const struct bench_peer *peer = bench_peers[p];

				progress("[1 latency] n=%zu %s run %d/%d", n, peer->name, r + 1,
				         opt.runs);
				for (size_t w = 0; w < sizeof(walks) / sizeof(walks[0]); w++)
					report_add(1, (long)n, walks[w].what, peer->name,
					           "ns/lookup",
					           measure_lookups(peer, inst[p], lookups, count,
					                           true, walks[w].walk));
				for (size_t b = 0; peer->find_batch && b < 3; b++) {
					char what[32];

					snprintf(what, sizeof(what), "random hit x%zu",
					         lookup_batches[b]);
					report_add(1, (long)n, what, peer->name, "ns/lookup",
					           measure_lookups_in(peer, inst[p], lookups, count,
					                              true, BENCH_INDEPENDENT,
					                              lookup_batches[b]));
				}
				measure_tail(peer, inst[p], lookups, count, (long)n);
			}
		check_destroy_all(bench_peers, np, inst, keys, n);
		free(lookups);
		free(keys);
	}
	free(inst);
	progress_done();
}

/* ---- workloads 2 and 5: readers beside one writer ------------------------- */

/* Most reader threads --readers may ask for (the default, cores - 1, has no bound). */
#define MAX_READERS 4096

struct concurrent {
	const struct bench_peer *peer;
	void *inst;
	const long *lookups;
	size_t count;
	atomic_int started, go, stop;
	atomic_ulong lookups_done, retries;
};

static void *reader_main(void *arg)
{
	struct concurrent *c = arg;
	void (*find)(void *, const long *, size_t, struct bench_tally *) =
	    c->peer->find_counted ? c->peer->find_counted : c->peer->find_many;
	struct bench_tally t = { .hits = 0 };
	unsigned long done = 0;
	size_t at;

	if (c->peer->reader_enter)
		c->peer->reader_enter();
	/* Relaxed: the counter only tells the writer every reader is running. */
	at = (size_t)atomic_fetch_add_explicit(&c->started, 1, memory_order_relaxed);
	at = at * (c->count / 8) % c->count; /* each reader starts elsewhere in the keys */
	/* Relaxed: the flags carry no data; the joins below order the totals. */
	while (!atomic_load_explicit(&c->go, memory_order_relaxed))
		sched_yield();
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		find(c->inst, c->lookups + at, 256, &t);
		done += 256;
		at = (at + 256) % c->count;
	}
	if (c->peer->reader_exit)
		c->peer->reader_exit();
	/* Relaxed: read after pthread_join(), which orders it. */
	atomic_fetch_add_explicit(&c->lookups_done, done, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->retries, t.retries, memory_order_relaxed);
	return NULL;
}

/* What the writer does in one step; returns the elements it changed. */
typedef size_t (*writer_step_fn)(void *ctx);

struct concurrent_result {
	double lookups_per_s, changes_per_s, retries_per_lookup;
};

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/*
 * Pins @thread to the @k-th CPU of @allowed.  Without it, on a machine
 * busy with other work the scheduler may put the writer and a reader on
 * one CPU, where they take turns instead of running side by side.
 */
static void pin(pthread_t thread, const cpu_set_t *allowed, int k)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, allowed) && k-- == 0) {
			CPU_SET(cpu, &one);
			pthread_setaffinity_np(thread, sizeof(one), &one);
			return;
		}
}

/*
 * Readers on every core but one look up c->lookups while this thread
 * calls @step @rate times a second (0: never, <0: as fast as it can) for
 * opt.concurrent_s.  Each thread has a CPU of its own when there are
 * enough.
 */
static struct concurrent_result run_concurrent(struct concurrent *c, double rate,
                                               writer_step_fn step, void *ctx)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nreaders = opt.readers ? opt.readers : ncpu > 2 ? (int)ncpu - 1 : 1;
	pthread_t *tid = xmalloc((size_t)nreaders * sizeof(*tid));
	size_t changes = 0, steps = 0;
	double t0, elapsed;
	struct concurrent_result res;
	cpu_set_t allowed;
	bool pinned = pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) == 0 &&
	              CPU_COUNT(&allowed) > nreaders;

	atomic_store(&c->started, 0);
	atomic_store(&c->go, 0);
	atomic_store(&c->stop, 0);
	atomic_store(&c->lookups_done, 0);
	atomic_store(&c->retries, 0);
	for (int i = 0; i < nreaders; i++) {
		if (pthread_create(&tid[i], NULL, reader_main, c) != 0)
			die("cannot start a reader thread");
		if (pinned)
			pin(tid[i], &allowed, i + 1);
	}
	if (pinned)
		pin(pthread_self(), &allowed, 0);
	while (atomic_load_explicit(&c->started, memory_order_relaxed) < nreaders)
		sched_yield();
	t0 = now_s();
	atomic_store_explicit(&c->go, 1, memory_order_relaxed); /* see reader_main() */
	while ((elapsed = now_s() - t0) < opt.concurrent_s) {
		if (rate < 0) {
			changes += step(ctx);
			continue;
		}
		if (rate > 0 && (double)steps < elapsed * rate) {
			changes += step(ctx);
			steps++;
			continue;
		}
		/* Ahead of schedule (or read-only): wait for the next step. */
		sleep_s(rate > 0 ? ((double)steps / rate - elapsed) + 1e-6 : 1e-3);
	}
	atomic_store_explicit(&c->stop, 1, memory_order_relaxed); /* see reader_main() */
	for (int i = 0; i < nreaders; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	elapsed = now_s() - t0;
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
	res.lookups_per_s = (double)atomic_load(&c->lookups_done) / elapsed;
	res.changes_per_s = (double)changes / elapsed;
	res.retries_per_lookup =
	    (double)atomic_load(&c->retries) / (double)(atomic_load(&c->lookups_done) + 1);
	return res;
}

struct pair_writer {
	const struct bench_peer *peer;
	void *inst;
	const long *keys;
	const size_t *slots;
	size_t next, count;
};

/* One insert+erase pair: two changes. */
static size_t pair_step(void *ctx)
{
	struct pair_writer *w = ctx;
	size_t s = w->slots[w->next++ % w->count];

	w->peer->erase(w->inst, s);
	w->peer->insert(w->inst, s, w->keys[s]);
	return 2;
}

static const double writer_rates[] = { 0, 1e3, 1e5, -1 };
static const char *const writer_rate_names[] = { "writer 0/s", "writer 1e3/s", "writer 1e5/s",
	                                         "writer max" };

static void concurrency_workload(const size_t *sizes, size_t nsizes)
{
	for (size_t si = 0; si < nsizes; si++) {
		size_t n = sizes[si], count = lookup_count();
		long *keys = make_keys(n, 1, 2);
		long *lookups = make_lookups(keys, n, count, false, 0);
		size_t *slots = make_slots(n, 1u << 16);
		void *inst[32];
		size_t np = 0;
		const struct bench_peer *peers[32];

		for (size_t p = 0; p < bench_peer_count && np < 32; p++)
			if (bench_peers[p]->flags & BENCH_SHARED)
				peers[np++] = bench_peers[p];
		build_all(peers, np, keys, n, inst, false);
		for (int r = 0; r < opt.runs; r++)
			for (size_t w = 0; w < 4; w++)
				for (size_t p = 0; p < np; p++) {
					struct concurrent c = { .peer = peers[p],
						                .inst = inst[p],
						                .lookups = lookups,
						                .count = count };
					struct pair_writer pw = { peers[p], inst[p], keys,
						                  slots,    0,       1u << 16 };
					struct concurrent_result res;

					progress("[2 concurrent] n=%zu %s: %s run %d/%d", n,
					         writer_rate_names[w], peers[p]->name, r + 1,
					         opt.runs);
					res = run_concurrent(&c, writer_rates[w], pair_step, &pw);
					report_add(2, (long)n, writer_rate_names[w], peers[p]->name,
					           "lookups/s", res.lookups_per_s);
					report_add(2, (long)n, writer_rate_names[w], peers[p]->name,
					           "writer pairs/s", res.changes_per_s / 2);
					if (peers[p]->find_counted)
						report_add(2, (long)n, writer_rate_names[w],
						           peers[p]->name, "retries/lookup",
						           res.retries_per_lookup);
				}
		check_destroy_all(peers, np, inst, keys, n);
		free(slots);
		free(lookups);
		free(keys);
	}
	progress_done();
}

/* ---- workload 4: address ranges -------------------------------------------- */

/*
 * Build an instance of @peer from keys[0..n-1] (by load_sorted() when
 * @bulk: then the keys increase; else by n inserts), report the build's
 * CPU time and heap bytes per range, and destroy it.
 */
static void range_build(const struct bench_peer *peer, const long *keys, size_t n, bool bulk)
{
	double before = heap_bytes(), t0, t;
	void *inst = peer->create(n);

	if (!inst)
		die("%s: cannot create an instance of %zu ranges", peer->name, n);
	t0 = cpu_s();
	if (bulk) {
		peer->load_sorted(inst, keys, n);
	} else {
		for (size_t i = 0; i < n; i++)
			peer->insert(inst, i, keys[i]);
	}
	t = cpu_s() - t0;
	report_add(4, (long)n, bulk ? "build by load_sorted" : "build by inserts", peer->name,
	           "ns/range", t * 1e9 / (double)n);
	report_add(4, (long)n, bulk ? "heap after load_sorted" : "heap after inserts", peer->name,
	           "bytes/range", (heap_bytes() - before) / (double)n);
	peer->destroy(inst);
}

static void range_workload(const size_t *sizes, size_t nsizes)
{
	const size_t np = bench_range_peer_count;
	void **inst = xmalloc((np ? np : 1) * sizeof(*inst));
	const struct bench_peer *map_peer = &bench_peer_latch_map;
	void *map_inst;

	for (size_t si = 0; si < nsizes && np; si++) {
		size_t n = sizes[si], count = lookup_count();
		long *keys = make_keys(n, 1L << 20, BENCH_RANGE_STRIDE);
		long *lookups = make_lookups(keys, n, count, false, BENCH_RANGE_LEN);
		size_t *slots = make_slots(n, 1u << 16);
		long *sorted = xmalloc(n * sizeof(*sorted)); /* the same keys, increasing */

		for (size_t i = 0; i < n; i++)
			sorted[i] = (1L << 20) + (long)i * BENCH_RANGE_STRIDE;
		for (int r = 0; r < opt.runs; r++)
			for (size_t p = 0; p < np; p++) {
				progress("[4 ranges] n=%zu %s builds, run %d/%d", n,
				         bench_range_peers[p]->name, r + 1, opt.runs);
				range_build(bench_range_peers[p], keys, n, false);
				if (bench_range_peers[p]->load_sorted)
					range_build(bench_range_peers[p], sorted, n, true);
			}
		free(sorted);
		build_all(bench_range_peers, np, keys, n, inst, false);
		/*
		 * latch_map over the same starts, as keys: beside the range map's
		 * writes, what a range's end and its overlap check cost on the
		 * one engine both share.
		 */
		build_all(&map_peer, 1, keys, n, &map_inst, false);
		for (int r = 0; r < opt.runs; r++) {
			for (size_t p = 0; p < np; p++) {
				const struct bench_peer *peer = bench_range_peers[p];

				progress("[4 ranges] n=%zu %s run %d/%d", n, peer->name, r + 1,
				         opt.runs);
				report_add(4, (long)n, "find", peer->name, "ns/op",
				           measure_lookups(peer, inst[p], lookups, count, true,
				                           BENCH_INDEPENDENT));
				if (peer->find_batch)
					report_add(4, (long)n, "find x64", peer->name, "ns/op",
					           measure_lookups_in(peer, inst[p], lookups, count,
					                              true, BENCH_INDEPENDENT, 64));
				report_add(4, (long)n, "insert+erase", peer->name, "ns/op",
				           measure_writes(peer, inst[p], keys, slots, 1u << 16));
			}
			report_add(4, (long)n, "insert+erase", "latch-map (keys)", "ns/op",
			           measure_writes(map_peer, map_inst, keys, slots, 1u << 16));
		}
		check_destroy_all(&map_peer, 1, &map_inst, keys, n);
		check_destroy_all(bench_range_peers, np, inst, keys, n);
		free(slots);
		free(lookups);
		free(keys);
	}
	free(inst);
	progress_done();
}

#ifdef LATCH_BENCH_HAVE_DLFO
/* latch_range_find() against glibc's _dl_find_object() on this process's objects. */
static void dlfo_workload(void)
{
	const struct bench_peer *peers[2] = { &bench_peer_dlfo_latch, &bench_peer_dlfo };
	long ranges[64][2], *lookups;
	size_t n = bench_dlfo_objects(ranges, 64), count = lookup_count();
	void *inst[2];

	if (!n)
		die("no loaded object is known to _dl_find_object()");
	lookups = xmalloc(count * sizeof(*lookups));
	for (size_t i = 0; i < count; i++) {
		size_t o = rng_below(n);

		lookups[i] = ranges[o][0] + (long)rng_below((size_t)(ranges[o][1] - ranges[o][0]));
	}
	build_all(peers, 2, NULL, 0, inst, false);
	for (int r = 0; r < opt.runs; r++)
		for (size_t p = 0; p < 2; p++) {
			progress("[4 ranges] %zu loaded objects %s run %d/%d", n, peers[p]->name,
			         r + 1, opt.runs);
			report_add(4, (long)n, "loaded objects", peers[p]->name, "ns/op",
			           measure_lookups(peers[p], inst[p], lookups, count, true,
			                           BENCH_INDEPENDENT));
		}
	for (size_t p = 0; p < 2; p++)
		peers[p]->destroy(inst[p]);
	free(lookups);
	progress_done();
}
#endif

/* ---- workload 5: batches ---------------------------------------------------- */

struct batch_writer {
	const struct bench_peer *peer;
	void *inst;
	const size_t *order; /* a permutation of the slots */
	size_t n, batch, next;
	bool inserting;
};

/* One commit of w->batch erases, or of the same batch re-inserted. */
static size_t batch_step(void *ctx)
{
	struct batch_writer *w = ctx;

	w->peer->commit(w->inst, w->order + w->next, w->batch, w->inserting);
	if (w->inserting)
		w->next = (w->next + w->batch) % (w->n - w->batch);
	w->inserting = !w->inserting;
	return w->batch;
}

/* Batches of 1, 8 and 64 changes by every peer with commit(), a reader beside the writer. */
static void batch_workload(size_t n)
{
	static const size_t batches[] = { 1, 8, BENCH_MAX_BATCH };
	long *keys = make_keys(n, 1, 2);
	long *lookups = make_lookups(keys, n, lookup_count(), false, 0);
	size_t *order = xmalloc(n * sizeof(*order));

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(i), t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	for (size_t p = 0; p < bench_peer_count; p++) {
		const struct bench_peer *peer = bench_peers[p];
		double bytes;
		void *inst;

		if (!peer->commit)
			continue;
		inst = build(peer, keys, n, &bytes);
		for (int r = 0; r < opt.runs; r++)
			for (size_t b = 0; b < 3; b++) {
				char name[32];
				struct concurrent c = { .peer = peer,
					                .inst = inst,
					                .lookups = lookups,
					                .count = lookup_count() };
				struct batch_writer w = {
					peer, inst, order, n, batches[b], 0, false
				};
				struct concurrent_result res;

				snprintf(name, sizeof(name), "batch %zu", batches[b]);
				progress("[5 batches] n=%zu %s %s run %d/%d", n, peer->name, name,
				         r + 1, opt.runs);
				res = run_concurrent(&c, -1, batch_step, &w);
				if (w.inserting) /* put the last erased batch back */
					batch_step(&w);
				report_add(5, (long)n, name, peer->name, "ns/element",
				           1e9 / res.changes_per_s);
				if (peer->find_counted)
					report_add(5, (long)n, name, peer->name, "retries/lookup",
					           res.retries_per_lookup);
			}
		check_all_found(peer, inst, keys, n);
		peer->destroy(inst);
	}
	free(order);
	free(lookups);
	free(keys);
	progress_done();
}

/* ---- workload 8: ordered lookups -------------------------------------------- */

/* The greatest key <= k for k between the keys, by every peer with floor_many(). */
static void floor_workload(const size_t *sizes, size_t nsizes)
{
	const struct bench_peer *peers[32];
	void *inst[32];
	size_t np = 0;

	for (size_t p = 0; p < bench_peer_count && np < 32; p++)
		if (bench_peers[p]->floor_many)
			peers[np++] = bench_peers[p];
	for (size_t si = 0; si < nsizes; si++) {
		size_t n = sizes[si], count = lookup_count();
		long *keys = make_keys(n, 1, 2);
		long *lookups =
		    make_lookups(keys, n, count, false, 2); /* odd keys and the even ones after */

		build_all(peers, np, keys, n, inst, false);
		for (int r = 0; r < opt.runs; r++)
			for (size_t p = 0; p < np; p++) {
				struct bench_peer floor_peer = *peers[p];

				floor_peer.find_many = peers[p]->floor_many;
				/* A floor's answer points to the key found, not the one asked for. */
				floor_peer.flags &= ~(BENCH_ANSWER_KEY | BENCH_ANSWER_RANGE);
				progress("[8 floor] n=%zu %s run %d/%d", n, peers[p]->name, r + 1,
				         opt.runs);
				report_add(8, (long)n, "floor", peers[p]->name, "ns/lookup",
				           measure_lookups(&floor_peer, inst[p], lookups, count,
				                           true, BENCH_INDEPENDENT));
			}
		check_destroy_all(peers, np, inst, keys, n);
		free(lookups);
		free(keys);
	}
	progress_done();
}

/* ---- workload 9: bulk loads -------------------------------------------------- */

/*
 * For every peer with load_sorted(): n inserts in random order against one
 * load_sorted() of the same keys (ns per element, thread CPU time, each on
 * a new instance), and the heap bytes per element each way.
 */
static void bulk_workload(const size_t *sizes, size_t nsizes)
{
	for (size_t si = 0; si < nsizes; si++) {
		size_t n = sizes[si];
		long *keys = make_keys(n, 1, 2), *sorted = xmalloc(n * sizeof(*sorted));

		memcpy(sorted, keys, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_long);
		for (size_t p = 0; p < bench_peer_count; p++) {
			const struct bench_peer *peer = bench_peers[p];

			for (int r = 0; peer->load_sorted && r < opt.runs; r++) {
				static const char *const ways[] = { "inserts", "load_sorted" };

				for (int way = 0; way < 2; way++) {
					double heap0 = heap_bytes(), t0, t1;
					void *inst = peer->create(n);

					if (!inst)
						die("%s: cannot create an instance of %zu elements",
						    peer->name, n);
					progress("[9 bulk] n=%zu %s %s run %d/%d", n, peer->name,
					         ways[way], r + 1, opt.runs);
					t0 = cpu_s();
					if (way)
						peer->load_sorted(inst, sorted, n);
					else
						for (size_t i = 0; i < n; i++)
							peer->insert(inst, i, keys[i]);
					t1 = cpu_s();
					report_add(9, (long)n, ways[way], peer->name, "ns/element",
					           (t1 - t0) * 1e9 / (double)n);
					if (heap_measured)
						report_add(9, (long)n, ways[way], peer->name,
						           "bytes/elem",
						           (heap_bytes() - heap0) / (double)n);
					check_all_found(peer, inst, keys, n);
					peer->destroy(inst);
				}
			}
		}
		free(sorted);
		free(keys);
	}
	progress_done();
}

/* ---- workload 7: latched value stores -------------------------------------- */

/*
 * The two-flip store (the kernel's order): each flip sends readers away
 * from the copy it then writes, so the value is written twice.  Built from
 * the public primitives, beside latch_value_store()'s one flip.
 */
static inline void value_store_2flip(struct latch_seq *seq, LATCH_VALUE_WORD *copy0,
                                     LATCH_VALUE_WORD *copy1, const void *src, size_t size)
{
	latch_value_put_(latch_seq_write_flip(seq) ? copy1 : copy0, src, size);
	latch_value_put_(latch_seq_write_flip(seq) ? copy1 : copy0, src, size);
}

/*
 * Defines value_store_ns_BYTES(two_flips): nanoseconds (thread CPU time)
 * per store of a BYTES-byte value, for at least opt.lookup_s; the stored
 * value changes every time (its first 8 bytes) and is loaded back at the
 * end as a check.
 */
#define VALUE_STORE_BENCH(bytes)                                                                   \
	static double value_store_ns_##bytes(bool two_flips)                                       \
	{                                                                                          \
		static LATCH_VALUE(struct { unsigned char b[bytes]; }) v;                          \
		struct {                                                                           \
			unsigned char b[bytes];                                                    \
		} src, back;                                                                       \
		size_t done = 0, batch = 1;                                                        \
		double t0, elapsed;                                                                \
		memset(&src, 0, sizeof(src));                                                      \
		t0 = cpu_s();                                                                      \
		do {                                                                               \
			for (size_t i = 0; i < batch; i++, done++) {                               \
				src.b[done & 7] = (unsigned char)done;                             \
				if (two_flips)                                                     \
					value_store_2flip(&v.seq, v.copy[0].word, v.copy[1].word,  \
					                  &src, sizeof(src));                      \
				else                                                               \
					latch_value_store_(&v.seq, v.copy[0].word, v.copy[1].word, \
					                   &src, sizeof(src));                     \
			}                                                                          \
			elapsed = cpu_s() - t0;                                                    \
			/* The clock is a system call: read it rarely. */                          \
			if (elapsed < opt.lookup_s / 16)                                           \
				batch *= 2;                                                        \
		} while (elapsed < opt.lookup_s);                                                  \
		latch_value_load_(&v.seq, v.copy[0].word, v.copy[1].word, &back, sizeof(back));    \
		if (memcmp(&src, &back, sizeof(src)))                                              \
			die("latched value of %d bytes: the last store did not load back", bytes); \
		return elapsed * 1e9 / (double)done;                                               \
	}

VALUE_STORE_BENCH(8)
VALUE_STORE_BENCH(64)
VALUE_STORE_BENCH(1024)

static void value_workload(void)
{
	static const struct {
		const char *what;
		long bytes;
		double (*ns)(bool two_flips);
	} sizes[] = { { "store", 8, value_store_ns_8 },
		      { "store", 64, value_store_ns_64 },
		      { "store", 1024, value_store_ns_1024 } };

	for (int r = 0; r < opt.runs; r++)
		for (size_t i = 0; i < 3; i++)
			for (int two = 0; two < 2; two++) {
				progress("[7 values] %ld bytes, %s run %d/%d", sizes[i].bytes,
				         two ? "two flips" : "one flip", r + 1, opt.runs);
				report_add(7, sizes[i].bytes, sizes[i].what,
				           two ? "two flips" : "one flip", "ns/store",
				           sizes[i].ns(two != 0));
			}
	progress_done();
}

/* ---- main ---------------------------------------------------------------------- */

static void usage(void)
{
	fputs("usage: latchbench [--quick] [--runs N] [--readers N] [--csv FILE] "
	      "[--workloads 1,2,...] [--selfcheck] [--small-pages]\n",
	      stderr);
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	bool runs_set = false;

	for (int i = 1; i < 10; i++)
		opt.workload[i] = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			opt.quick = true;
		} else if (!strcmp(argv[i], "--selfcheck")) {
			opt.selfcheck = true;
		} else if (!strcmp(argv[i], "--small-pages")) {
			/* The maps' pools without huge-page regions: their effect, measured. */
			latch_btree_huge_pages_hook_ = false;
		} else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
			opt.csv = argv[++i];
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			opt.runs = atoi(argv[++i]);
			runs_set = true;
			if (opt.runs < 1 || opt.runs > REPORT_MAX_RUNS)
				die("--runs must be 1..%d", REPORT_MAX_RUNS);
		} else if (!strcmp(argv[i], "--readers") && i + 1 < argc) {
			opt.readers = atoi(argv[++i]);
			if (opt.readers < 1 || opt.readers > MAX_READERS)
				die("--readers must be 1..%d", MAX_READERS);
		} else if (!strcmp(argv[i], "--workloads") && i + 1 < argc) {
			const char *s = argv[++i];

			memset(opt.workload, 0, sizeof(opt.workload));
			for (; *s; s++)
				if (*s >= '1' && *s <= '9')
					opt.workload[*s - '0'] = true;
				else if (*s != ',')
					usage();
		} else {
			usage();
		}
	}
	if (!runs_set)
		opt.runs = opt.selfcheck ? 1 : opt.quick ? 3 : 5;
	opt.lookup_s = opt.selfcheck ? 0.001 : opt.quick ? 0.01 : 0.1;
	opt.concurrent_s = opt.selfcheck ? 0.02 : opt.quick ? 0.08 : 0.5;
#ifndef LATCH_BENCH_HAVE_MALLINFO2
	opt.workload[6] = false; /* no heap figures; bench_missing says so */
#endif
}

int main(int argc, char **argv)
{
	static const size_t key_sizes[] = { 100, 10000, 1000000 };
	static const size_t check_sizes[] = { 100, 1000 };
	static const size_t range_sizes[] = { 16, 1000, 100000 };
	static const size_t concurrent_full[] = { 10000, 1000000 };
	const size_t *sizes;
	double t0 = now_s();

	parse_args(argc, argv);
	sizes = opt.selfcheck ? check_sizes : key_sizes;
	report_header(stdout);
	if (opt.workload[1] || opt.workload[3] || opt.workload[6])
		single_thread_workloads(sizes, opt.selfcheck ? 2 : 3);
	if (opt.workload[1])
		latency_workload(sizes + 1, opt.selfcheck ? 1 : 2);
	if (opt.workload[2])
		concurrency_workload(opt.selfcheck || opt.quick ? sizes + 1 : concurrent_full,
		                     opt.selfcheck || opt.quick ? 1 : 2);
	if (opt.workload[4])
		range_workload(opt.selfcheck ? check_sizes : range_sizes, opt.selfcheck ? 2 : 3);
#ifdef LATCH_BENCH_HAVE_DLFO
	if (opt.workload[4])
		dlfo_workload();
#endif
	if (opt.workload[5])
		batch_workload(opt.selfcheck ? 1000 : 10000);
	if (opt.workload[8])
		floor_workload(sizes, opt.selfcheck ? 2 : 3);
	if (opt.workload[9])
		bulk_workload(sizes + 1, opt.selfcheck ? 1 : 2);
	if (opt.workload[7])
		value_workload();
	report_print(stdout);
	report_targets(stdout);
	if (opt.csv && report_csv(opt.csv) != 0)
		die("cannot write %s: %s", opt.csv, strerror(errno));
	printf("\n%d run(s) per figure; total %.1f s\n", opt.runs, now_s() - t0);
	return 0;
}
