/* SPDX-License-Identifier: MIT */
/*
 * What the proof harnesses share: the command line
 *
 *	HARNESS [STRUCTURE] [--expect-caught]
 *
 * (STRUCTURE defaults to latch-tree; --expect-caught inverts the verdict,
 * for mutants and controls: the run passes only when the harness caught
 * the structure misbehaving), and the report of the first violation.
 */
#ifndef LATCH_PROOF_HARNESS_H
#define LATCH_PROOF_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <latch/atomic.h>

#include "check.h"
#include "sut.h"

/* PROOF_UNDER_TSAN: 1 in a ThreadSanitizer build (gcc or clang). */
#if defined(__SANITIZE_THREAD__)
#define PROOF_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PROOF_UNDER_TSAN 1
#endif
#endif
#ifndef PROOF_UNDER_TSAN
#define PROOF_UNDER_TSAN 0
#endif

struct proof_run {
	const char *harness;
	const struct sut_ops *sut;
	bool expect_caught;
	int caught; /* set once by proof_violation(); accessed atomically */
};

static inline void proof_parse_args(struct proof_run *run, const char *harness, int argc,
                                    char **argv)
{
	run->harness = harness;
	run->sut = &sut_latch_tree;
	run->expect_caught = false;
	run->caught = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--expect-caught") == 0) {
			run->expect_caught = true;
			continue;
		}
		run->sut = sut_by_name(argv[i]);
		if (!run->sut) {
			fprintf(stderr, "usage: %s [STRUCTURE] [--expect-caught]\n", harness);
			sut_list();
			exit(2);
		}
	}
	printf("%s: structure %s%s\n", harness, run->sut->name,
	       run->expect_caught ? " (expected to be caught)" : "");
}

/* Record a violation; only the first one is printed.  Not for signal handlers (it prints). */
static inline void proof_violation(struct proof_run *run, const char *fmt, ...)
{
	va_list ap;

	/* Relaxed: the flag only tells the harness to stop; the message is printed once. */
	if (LATCH_LOAD_RELAXED(&run->caught))
		return;
	LATCH_STORE_RELAXED(&run->caught, 1);
	fprintf(stderr, "%s: %s: violation: ", run->harness, run->sut->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static inline bool proof_caught(struct proof_run *run)
{
	/* Relaxed: see proof_violation(). */
	return LATCH_LOAD_RELAXED(&run->caught) != 0;
}

/* The exit status: 0 when the outcome is the one expected. */
static inline int proof_verdict(struct proof_run *run)
{
	bool caught = proof_caught(run);

	if (run->expect_caught)
		printf("%s: %s: %s\n", run->harness, run->sut->name,
		       caught ? "caught, as expected"
		              : "NOT caught: the harness missed a broken structure");
	else
		printf("%s: %s: %s\n", run->harness, run->sut->name, caught ? "FAILED" : "passed");
	return caught == run->expect_caught ? 0 : 1;
}

#endif /* LATCH_PROOF_HARNESS_H */
