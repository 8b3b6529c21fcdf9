/* SPDX-License-Identifier: MIT */
/*
 * Contract checks for violations only a debug build can afford to detect.
 * They stop the program with a message naming the call, before the
 * structure is touched; with NDEBUG they compile to nothing.
 */
#ifndef LATCH_SRC_CONTRACT_H
#define LATCH_SRC_CONTRACT_H

#include <stdio.h>
#include <stdlib.h>

#ifdef NDEBUG
#define LATCH_CONTRACT(cond, call, what) ((void)0)
#else
#define LATCH_CONTRACT(cond, call, what)                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s: contract violation: %s\n", (call), (what));           \
			abort();                                                                   \
		}                                                                                  \
	} while (0)
#endif

#endif /* LATCH_SRC_CONTRACT_H */
