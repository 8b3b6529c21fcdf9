/* SPDX-License-Identifier: MIT */
/*
 * latch-demo: a sampling profiler over a JIT-like program, run once per
 * implementation of its code-region map.
 *
 * main.c      options, one child process per implementation, the watchdog
 * scenario.c  the child: regions, the writer, the workers, the profiler
 * maps.c      the three region maps: liblatch, seqlock, rwlock
 * report.c    progress line, table, verdicts, closing paragraph
 *
 * The child and the parent share one block of memory (struct demo_shared):
 * the child's threads count their samples there and the parent's watchdog
 * reads it, so the parent can tell what a child was doing when it stopped
 * making progress.
 */
#ifndef LATCH_DEMO_H
#define LATCH_DEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <latch/range.h>
#include <latch/tree.h>

#define DEMO_STABLE_REGIONS 1024 /* never unregistered: must always resolve */
#define DEMO_CHURN_REGIONS  1024 /* registered and unregistered all the time */
#define DEMO_MAX_THREADS    64   /* workers besides the writer */

/* A region of the fake code heap: [start, end), fixed for the whole run. */
struct demo_region {
	uintptr_t start, end;
	struct latch_tree_node node; /* links of the single-copy peers' trees */
};

/* One change of an update: register or unregister a region. */
struct demo_change {
	enum latch_range_op op;
	struct demo_region *region;
};

/* What an implementation is known to do in this scenario. */
enum demo_expect {
	DEMO_EXPECT_PASS,        /* every lookup finishes and is right */
	DEMO_EXPECT_HANG,        /* hangs once a handler interrupts the writer */
	DEMO_EXPECT_HANG_OR_FAIL /* deadlocks or refuses the lookup there */
};

/* A region map implementation; all of it runs in the child. */
struct demo_map {
	const char *name;  /* for --only */
	const char *label; /* for the table */
	enum demo_expect expect;
	const char *lesson; /* what its row shows, for the closing paragraph */
	/* Prepare an empty map.  Called once, before any other call. */
	void (*init)(void);
	/*
	 * Apply @n changes as one update (readers see all or none of a batch
	 * where the map can).  Returns 0 or -errno.  Writer thread only.
	 */
	int (*apply)(const struct demo_change *changes, size_t n);
	/*
	 * The region holding @addr, or NULL; from the profiling signal
	 * handler.  Returns 0, or -errno when the implementation refused
	 * to look (then *found is NULL).
	 */
	int (*find)(uintptr_t addr, const struct demo_region **found);
};

/* liblatch, seqlock, rwlock: the order of the table. */
#define DEMO_NMAPS 3
extern const struct demo_map demo_maps[DEMO_NMAPS];

/* One thread's state and counters; written by the child, read by the parent. */
struct demo_slot {
	_Alignas(64) uintptr_t pc;   /* the address the thread is using now */
	unsigned in_update;          /* nonzero while the thread changes the map */
	unsigned lookup_interrupted; /* the lookup in progress interrupted an update */
	/* Start of the lookup in progress (ns), 0 if none.  The 8-byte fields
	 * are accessed atomically: aligned to 8 on 32-bit targets too. */
	_Alignas(8) unsigned long long lookup_since;
	unsigned long long samples;     /* lookups started in the signal handler */
	unsigned long long interrupted; /* ... of which interrupted an update */
	unsigned long long wrong;       /* lookups that gave the wrong region (or none) */
	unsigned long long refused;     /* ... of which the implementation refused */
	unsigned long long worst_ns;    /* slowest completed lookup */
};

/* Everything the child reports; slot 0 is the writer, then the workers. */
struct demo_shared {
	unsigned long long updates; /* updates the writer completed */
	unsigned finished;          /* the child completed its run */
	unsigned nslots;
	struct demo_slot slot[];
};

/* The scenario's parameters (the command-line options). */
struct demo_options {
	double seconds;   /* per implementation */
	unsigned threads; /* workers besides the writer */
	unsigned rate;    /* profiling signals per second per thread */
	const char *only; /* run only this implementation, or NULL */
	bool tty;         /* stdout is a terminal: show the progress line */
	bool colour;      /* ... and colour is welcome */
};

/* Run the scenario on @map for @opt->seconds, reporting into @shared; then exit. */
_Noreturn void demo_scenario_run(const struct demo_map *map, const struct demo_options *opt,
                                 struct demo_shared *shared);

/* CLOCK_MONOTONIC in nanoseconds; async-signal-safe. */
unsigned long long demo_now_ns(void);

/* How a child's run ended, as the watchdog saw it. */
enum demo_end {
	DEMO_END_FINISHED, /* ran its time and exited normally */
	DEMO_END_HUNG,     /* a lookup stayed in progress past the hang limit */
	DEMO_END_OVERRAN,  /* did not exit in time, no lookup stuck */
	DEMO_END_CRASHED,  /* killed by a signal it raised itself */
	DEMO_END_ERROR     /* exited with an error status */
};

/* One implementation's run, summed over its threads. */
struct demo_outcome {
	const struct demo_map *map;
	enum demo_end end;
	int status;                  /* exit status or signal number */
	bool stuck_in_update;        /* the stuck lookup interrupted an update */
	bool stuck_on_writer;        /* ... on the writer thread */
	unsigned long long stuck_ns; /* how long the stuck lookup had run */
	unsigned long long samples, interrupted, wrong, refused, worst_ns, updates;
	bool as_expected;
};

/* A lookup in progress this long counts as hung. */
#define DEMO_HANG_NS 1000000000ull

/*
 * The progress line of a run in progress (on a terminal only; now->stuck_ns
 * is the age of the oldest lookup in progress); demo_progress_end() clears it.
 */
void demo_progress(const struct demo_options *opt, const struct demo_outcome *now, double elapsed);
void demo_progress_end(const struct demo_options *opt);

/* What is about to run. */
void demo_report_header(const struct demo_options *opt);

/* The table, the closing paragraph and the result; true when all ran as expected. */
bool demo_report_table(const struct demo_options *opt, struct demo_outcome *outs, size_t n);

#endif /* LATCH_DEMO_H */
