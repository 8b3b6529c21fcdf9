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

/** Order earlier loads before every later load and store. */
#define LATCH_FENCE_ACQUIRE() __atomic_thread_fence(__ATOMIC_ACQUIRE)

/** Order every earlier load and store before later stores. */
#define LATCH_FENCE_RELEASE() __atomic_thread_fence(__ATOMIC_RELEASE)

/*
 * ThreadSanitizer cannot see the release stores that publish an element
 * when they run inside a library built without it, so a program built
 * with -fsanitize=thread would be told that the element's initialisation
 * races with its lock-free readers.  The library therefore releases each
 * element to ThreadSanitizer (__tsan_release() on its struct
 * latch_tree_node, when the process runs ThreadSanitizer) before the
 * first link to it is stored, and the inline readers, when compiled with
 * ThreadSanitizer, acquire each element they reach before reading it.
 * Without ThreadSanitizer the reader side compiles to nothing.
 */
#if defined(__SANITIZE_THREAD__)
#define LATCH_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LATCH_TSAN_ 1
#endif
#endif

#ifdef LATCH_TSAN_
#ifdef __cplusplus
extern "C" {
#endif
void __tsan_acquire(void *addr); /* ThreadSanitizer's interface */
#ifdef __cplusplus
}
#endif
/* Reader side: everything done before the release of @addr happens-before. */
#define LATCH_TSAN_ACQUIRE_(addr) __tsan_acquire((void *)(addr))
#else
#define LATCH_TSAN_ACQUIRE_(addr) ((void)0)
#endif

#endif /* LATCH_ATOMIC_H */
