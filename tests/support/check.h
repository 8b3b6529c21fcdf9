/* SPDX-License-Identifier: MIT */
/*
 * Minimal test support: CHECK() fails the test with a message and never
 * compiles out (unlike assert()); test_env_long() reads overridable
 * iteration counts from the environment.
 */
#ifndef LATCH_TESTS_CHECK_H
#define LATCH_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* Exit status CTest reports as "skipped" (SKIP_RETURN_CODE). */
#define TEST_SKIP 77

/* The value of environment variable @name, or @fallback when unset. */
static inline long test_env_long(const char *name, long fallback)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : fallback;
}

/* A small, fast, seedable PRNG (xorshift64*), identical on every platform. */
struct test_rng {
	unsigned long long state;
};

static inline unsigned long long test_rng_next(struct test_rng *r)
{
	r->state ^= r->state >> 12;
	r->state ^= r->state << 25;
	r->state ^= r->state >> 27;
	return r->state * 2685821657736338717ull;
}

/* Uniform in [0, bound). */
static inline unsigned long test_rng_below(struct test_rng *r, unsigned long bound)
{
	return (unsigned long)(test_rng_next(r) % bound);
}

#endif /* LATCH_TESTS_CHECK_H */
