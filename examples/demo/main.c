/* SPDX-License-Identifier: MIT */
/*
 * latch-demo: why the latch exists, in one command (`make demo`).
 *
 * Runs the same profiling scenario (scenario.c) once per region map, each
 * in its own child process under a watchdog that kills the child once a
 * lookup has been stuck for DEMO_HANG_NS, then prints one table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"

#define POLL_NS       50000000ull   /* the watchdog looks every 50 ms */
#define EXIT_GRACE_NS 2000000000ull /* time to exit after the run, beyond the hang limit */

static const char usage[] =
    "Usage: latch-demo [--seconds S] [--threads N] [--rate HZ] [--only NAME]\n"
    "\n"
    "A sampling profiler over a JIT-like program: a writer thread registers and\n"
    "unregisters code regions while per-thread profiling signals interrupt every\n"
    "thread, the writer included, and the handler resolves the address its thread\n"
    "was using.  The scenario runs once per region map (liblatch, seqlock, rwlock),\n"
    "each in its own child process under a watchdog, and one table shows the result.\n"
    "\n"
    "  --seconds S   how long each map runs (default 5; 0.1 to 600)\n"
    "  --threads N   worker threads besides the writer (default 2; 0 to 64)\n"
    "  --rate HZ     profiling signals per second per thread (default 4000; 1 to 100000)\n"
    "  --only NAME   run one map only: liblatch, seqlock or rwlock\n"
    "  --help        show this text\n"
    "\n"
    "Exit status: 0 when liblatch passed and every other map showed the failure it\n"
    "is known for, 1 when a map did otherwise, 2 on a usage error.\n";

_Noreturn static void usage_error(const char *fmt, const char *arg)
{
	fputs("latch-demo: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'latch-demo --help'.\n", stderr);
	exit(2);
}

/* @arg as a number in [lo, hi], or a usage error naming @option. */
static double number_option(const char *option, const char *arg, double lo, double hi, bool integer)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || v < lo || v > hi || (integer && v != (double)(long)v)) {
		fprintf(stderr, "latch-demo: %s wants %s from %g to %g, not '%s'\n", option,
		        integer ? "a whole number" : "a number", lo, hi, arg);
		fputs("Try 'latch-demo --help'.\n", stderr);
		exit(2);
	}
	return v;
}

static void parse_options(int argc, char **argv, struct demo_options *opt)
{
	static const struct option longs[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			opt->seconds = number_option("--seconds", optarg, 0.1, 600, false);
			break;
		case 't':
			opt->threads =
			    (unsigned)number_option("--threads", optarg, 0, DEMO_MAX_THREADS, true);
			break;
		case 'r':
			opt->rate = (unsigned)number_option("--rate", optarg, 1, 100000, true);
			break;
		case 'o':
			opt->only = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt->only) {
		size_t i;

		for (i = 0; i < DEMO_NMAPS && strcmp(demo_maps[i].name, opt->only); i++)
			;
		if (i == DEMO_NMAPS)
			usage_error("--only wants liblatch, seqlock or rwlock, not '%s'",
			            opt->only);
	}
}

/* Sum the child's counters into @out. */
static void collect(struct demo_outcome *out, const struct demo_shared *shared)
{
	out->samples = out->interrupted = out->wrong = out->refused = out->worst_ns = 0;
	for (unsigned i = 0; i < shared->nslots; i++) {
		const struct demo_slot *s = &shared->slot[i];
		/* Relaxed: counters; each is read whole, none orders anything. */
		unsigned long long worst = LATCH_LOAD_RELAXED(&s->worst_ns);

		out->samples += LATCH_LOAD_RELAXED(&s->samples);
		out->interrupted += LATCH_LOAD_RELAXED(&s->interrupted);
		out->wrong += LATCH_LOAD_RELAXED(&s->wrong);
		out->refused += LATCH_LOAD_RELAXED(&s->refused);
		if (worst > out->worst_ns)
			out->worst_ns = worst;
	}
	/* Relaxed: a progress counter, as above. */
	out->updates = LATCH_LOAD_RELAXED(&shared->updates);
}

/* The thread whose lookup has been in progress longest, or -1 if none is. */
static int oldest_lookup(const struct demo_shared *shared, unsigned long long now,
                         unsigned long long *age)
{
	int oldest = -1;

	*age = 0;
	for (unsigned i = 0; i < shared->nslots; i++) {
		/* Acquire: pairs with the handler's release store of the start time. */
		unsigned long long since = LATCH_LOAD_ACQUIRE(&shared->slot[i].lookup_since);

		if (since && now > since && now - since > *age) {
			*age = now - since;
			oldest = (int)i;
		}
	}
	return oldest;
}

/*
 * Note that lookup @stuck hung.  When the writer is in a lookup too, that
 * is the cause: the others wait for the update it interrupted (and may
 * have started waiting before it did).
 */
static void note_stuck_lookup(struct demo_outcome *out, const struct demo_shared *shared, int stuck,
                              unsigned long long age)
{
	/* Acquire: pairs with the handler's release store of the start time. */
	if (LATCH_LOAD_ACQUIRE(&shared->slot[0].lookup_since))
		stuck = 0;
	out->end = DEMO_END_HUNG;
	out->stuck_ns = age;
	out->stuck_on_writer = stuck == 0;
	/* Relaxed: ordered by the acquire load of its start time (the lookup is stuck). */
	out->stuck_in_update = LATCH_LOAD_RELAXED(&shared->slot[stuck].lookup_interrupted) != 0;
}

static void sleep_ns(unsigned long long ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* How a child that exited with @status ended. */
static void note_exit(struct demo_outcome *out, const struct demo_shared *shared, int status)
{
	/* Acquire: pairs with the child's release store, so the counts are final. */
	bool finished = LATCH_LOAD_ACQUIRE(&shared->finished) != 0;

	if (WIFSIGNALED(status)) {
		out->end = DEMO_END_CRASHED;
		out->status = WTERMSIG(status);
	} else {
		out->status = WEXITSTATUS(status);
		out->end = out->status == 0 && finished ? DEMO_END_FINISHED : DEMO_END_ERROR;
	}
}

/* Run @map in a child process under the watchdog. */
static struct demo_outcome run_one(const struct demo_map *map, const struct demo_options *opt)
{
	size_t size = sizeof(struct demo_shared) + (opt->threads + 1) * sizeof(struct demo_slot);
	struct demo_shared *shared =
	    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long long start = demo_now_ns(), limit = (unsigned long long)(opt->seconds * 1e9);
	struct demo_outcome out;
	pid_t pid;

	if (shared == MAP_FAILED) {
		perror("latch-demo: mmap");
		exit(2);
	}
	shared->nslots = opt->threads + 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("latch-demo: fork");
		exit(2);
	}
	if (pid == 0)
		demo_scenario_run(map, opt, shared);

	memset(&out, 0, sizeof(out));
	out.map = map;
	for (;;) {
		unsigned long long now, age;
		int status, oldest;

		sleep_ns(POLL_NS);
		now = demo_now_ns();
		if (waitpid(pid, &status, WNOHANG) == pid) {
			note_exit(&out, shared, status);
			break;
		}
		oldest = oldest_lookup(shared, now, &age);
		if (age >= DEMO_HANG_NS || now - start > limit + DEMO_HANG_NS + EXIT_GRACE_NS) {
			if (age >= DEMO_HANG_NS)
				note_stuck_lookup(&out, shared, oldest, age);
			else
				out.end = DEMO_END_OVERRAN;
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		collect(&out, shared);
		out.stuck_ns = age;
		demo_progress(opt, &out, (double)(now - start) / 1e9);
	}
	demo_progress_end(opt);
	collect(&out, shared);
	munmap(shared, size);
	return out;
}

int main(int argc, char **argv)
{
	struct demo_options opt = { 5.0, 2, 4000, NULL, false, false };
	struct demo_outcome outs[DEMO_NMAPS];
	size_t n = 0;

	parse_options(argc, argv, &opt);
	opt.tty = isatty(STDOUT_FILENO) == 1;
	opt.colour = opt.tty && !getenv("NO_COLOR");
	demo_report_header(&opt);
	for (size_t i = 0; i < DEMO_NMAPS; i++) {
		if (!opt.only || !strcmp(opt.only, demo_maps[i].name))
			outs[n++] = run_one(&demo_maps[i], &opt);
	}
	return demo_report_table(&opt, outs, n) ? 0 : 1;
}
