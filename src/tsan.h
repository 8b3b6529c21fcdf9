/* SPDX-License-Identifier: MIT */
/*
 * The library's side of the ThreadSanitizer annotations (see
 * latch/atomic.h), for a library built without ThreadSanitizer that may
 * run in a process with it.
 */
#ifndef LATCH_SRC_TSAN_H
#define LATCH_SRC_TSAN_H

#include <stdint.h>

#include <latch/atomic.h> /* LATCH_TSAN_: this file is compiled with ThreadSanitizer */

/*
 * ThreadSanitizer's release and acquire calls: weak references, so they
 * are NULL unless the process runs ThreadSanitizer (whose runtime defines
 * them).  A library compiled with ThreadSanitizer always has its runtime,
 * and latch/atomic.h has declared __tsan_acquire() plainly already.
 */
extern void __tsan_release(void *addr) __attribute__((weak));
#ifndef LATCH_TSAN_
extern void __tsan_acquire(void *addr) __attribute__((weak));
#endif

/*
 * Tell ThreadSanitizer, when the process runs it, that everything this
 * thread did so far happens-before whatever a thread does after its
 * latch_tsan_acquire_(@addr).  Cost without ThreadSanitizer: one load of
 * the symbol's address and one well-predicted branch.
 */
static inline void latch_tsan_release_(const void *addr)
{
	if (__builtin_expect(__tsan_release != NULL, 0))
		__tsan_release((void *)(uintptr_t)addr);
}

/*
 * Tell ThreadSanitizer, when the process runs it, that every
 * latch_tsan_release_(@addr) made so far happens-before what this thread
 * does next.  Same cost as latch_tsan_release_() without it.
 */
static inline void latch_tsan_acquire_(const void *addr)
{
#ifdef LATCH_TSAN_
	__tsan_acquire((void *)(uintptr_t)addr);
#else
	if (__builtin_expect(__tsan_acquire != NULL, 0))
		__tsan_acquire((void *)(uintptr_t)addr);
#endif
}

#endif /* LATCH_SRC_TSAN_H */
