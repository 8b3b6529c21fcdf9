/* SPDX-License-Identifier: MIT */
/*
 * Contract checks of the void writer calls: they stop the program with a
 * message naming the call the user made.
 *
 * LATCH_REQUIRE() is for violations a few compares detect: it checks in
 * every build.  LATCH_CONTRACT() is for those only a search detects: it
 * checks in debug builds and compiles to nothing with NDEBUG.  Both run
 * before the structure is touched, except the internal consistency
 * check made while an update is applied (src/tree.c, insert_noted()).
 */
#ifndef LATCH_SRC_CONTRACT_H
#define LATCH_SRC_CONTRACT_H

#include <stdio.h>
#include <stdlib.h>

#define LATCH_REQUIRE(cond, call, what)                                                            \
	do {                                                                                       \
		if (__builtin_expect(!(cond), 0)) {                                                \
			fprintf(stderr, "%s: contract violation: %s\n", (call), (what));           \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#ifdef NDEBUG
/* @call is still evaluated, so a parameter passed only for it counts as used. */
#define LATCH_CONTRACT(cond, call, what) ((void)(call))
#else
#define LATCH_CONTRACT(cond, call, what) LATCH_REQUIRE(cond, call, what)
#endif

#endif /* LATCH_SRC_CONTRACT_H */
