/* SPDX-License-Identifier: MIT */
/*
 * latch/atomic.h - the few atomic operations liblatch is built from.
 *
 * Public headers must compile as C11 and as C++, so they cannot use
 * _Atomic types.  These helpers wrap the compiler's __atomic builtins
 * (gcc and clang, C and C++), which have exactly the C11 memory-model
 * semantics of atomic_load_explicit() and friends on plain objects.
 *
 * Every field that a reader may load while the writer changes it is
 * accessed through these helpers on both sides, so there is no data race
 * in C11 terms.  Each call site states why its ordering is sufficient.
 *
 * The reference for each call (cost, contexts, what to serialize, errors)
 * is its man page: latch_atomic(3).
 */
#ifndef LATCH_ATOMIC_H
#define LATCH_ATOMIC_H

#if !defined(__GNUC__) && !defined(__clang__)
#error "liblatch needs the __atomic builtins of gcc or clang"
#endif

/** Load *ptr with no ordering beyond atomicity (no torn values). */
#define LATCH_LOAD_RELAXED(ptr) __atomic_load_n((ptr), __ATOMIC_RELAXED)

/** Load *ptr; later loads and stores cannot move before it. */
#define LATCH_LOAD_ACQUIRE(ptr) __atomic_load_n((ptr), __ATOMIC_ACQUIRE)

/** Store val to *ptr with no ordering beyond atomicity. */
#define LATCH_STORE_RELAXED(ptr, val) __atomic_store_n((ptr), (val), __ATOMIC_RELAXED)

/** Store val to *ptr; earlier loads and stores cannot move after it. */
#define LATCH_STORE_RELEASE(ptr, val) __atomic_store_n((ptr), (val), __ATOMIC_RELEASE)

/* The fence functions and the ThreadSanitizer hooks the readers use. */
#include <latch/detail/atomic.h>

/** Order earlier loads before every later load and store. */
#define LATCH_FENCE_ACQUIRE() latch_fence_acquire_()

/** Order every earlier load and store before later stores. */
#define LATCH_FENCE_RELEASE() latch_fence_release_()

#endif /* LATCH_ATOMIC_H */
