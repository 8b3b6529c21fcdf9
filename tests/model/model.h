/* SPDX-License-Identifier: MIT */
/*
 * What every GenMC harness of tests/model shares.  The harnesses are
 * compiled by GenMC (clang to LLVM IR, then explored under RC11), never by
 * the project's build: see tests/model/README.md.
 *
 * Each harness includes the library's real headers, and the real
 * src/ files it needs, from the tree named by the include path: the source
 * tree for the harness itself, a rewritten copy of it for a mutant
 * (tests/model/run.sh).  GenMC's own <assert.h>, <pthread.h>, <stdlib.h>
 * and <stdio.h> come first on its include path; everything else is the
 * system's.
 */
#ifndef LATCH_MODEL_H
#define LATCH_MODEL_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Shim for the ThreadSanitizer hooks of latch/detail/atomic.h: the library calls ThreadSanitizer's
 * __tsan_release() and __tsan_acquire() through weak references, which
 * are NULL unless the process runs ThreadSanitizer.  GenMC cannot take the
 * address of a function that is declared but defined nowhere, so the
 * harnesses define the include guard and the calls, as the library
 * compiles without ThreadSanitizer: calls that do nothing.  They order
 * nothing either way (ThreadSanitizer's annotations are not memory
 * operations).
 */
#define LATCH_TSAN_SHIMMED_ 1
static inline void latch_tsan_release_(const void *addr)
{
	(void)addr;
}

static inline void latch_tsan_acquire_(const void *addr)
{
	(void)addr;
}

/*
 * The oracle a lookup is checked against.  A lookup reads the copy the
 * counter named when it started, as that copy stood at the flip that
 * wrote that count, so what it may find is a function of the count: an
 * element is present at the counts [from, until).  The harness reads the
 * count itself just before and just after each lookup (relaxed loads: they
 * add no synchronization); by coherence the count the lookup used lies
 * between the two.  model_check() then asserts that a key present (in
 * some element) at every count in between is found, that a key present at
 * none of them is not, and that an element found is one that held the key
 * at one of them.
 */
struct model_life {
	unsigned from, until; /* present at counts from, ..., until - 1 */
};

/* "Never" for until. */
#define MODEL_NEVER 1000u

/*
 * Check a lookup that ran while the count went from @before to @after:
 * @cands are the @n elements that ever hold its key, @found the index of
 * the one it found, or -1.
 */
static inline void model_check(unsigned before, unsigned after,
                               const struct model_life *const *cands, int n, int found)
{
	bool always = true, never = true, seen = false;

	assert(before <= after);
	for (unsigned c = before; c <= after; c++) {
		bool any = false;

		for (int i = 0; i < n; i++) {
			bool here = c >= cands[i]->from && c < cands[i]->until;

			any = any || here;
			seen = seen || (here && i == found);
		}
		always = always && any;
		never = never && !any;
	}
	if (always)
		assert(found >= 0); /* a key present throughout is found */
	if (never)
		assert(found < 0); /* a key absent throughout is not */
	if (found >= 0)
		assert(seen); /* what is found was there at some point */
}

/* Start @fn(@arg) in a new thread; GenMC explores every interleaving. */
static inline pthread_t model_spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg))
		assert(!"pthread_create failed");
	return t;
}

static inline void model_join(pthread_t t)
{
	pthread_join(t, NULL);
}

#endif /* LATCH_MODEL_H */
