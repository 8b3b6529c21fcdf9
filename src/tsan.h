/* SPDX-License-Identifier: MIT */
/*
 * The writer side of the ThreadSanitizer annotations (see latch/atomic.h),
 * for a library built without ThreadSanitizer that may run in a process
 * with it.
 */
#ifndef LATCH_SRC_TSAN_H
#define LATCH_SRC_TSAN_H

/*
 * ThreadSanitizer's release call: a weak reference, so it is NULL unless
 * the process runs ThreadSanitizer (whose runtime defines it).
 */
extern void __tsan_release(void *addr) __attribute__((weak));

/*
 * Tell ThreadSanitizer, when the process runs it, that everything this
 * thread did so far happens-before whatever a thread does after its
 * __tsan_acquire(@addr).  Cost without ThreadSanitizer: one load of the
 * symbol's address and one well-predicted branch.
 */
static inline void latch_tsan_release_(void *addr)
{
	if (__builtin_expect(__tsan_release != NULL, 0))
		__tsan_release(addr);
}

#endif /* LATCH_SRC_TSAN_H */
