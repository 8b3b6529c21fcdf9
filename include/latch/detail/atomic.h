/* SPDX-License-Identifier: MIT */
/*
 * latch/detail/atomic.h - the machinery under <latch/atomic.h>: the
 * fences as functions, and the ThreadSanitizer hooks of the inline
 * readers.
 *
 * Not part of the API: nothing here may be called, named or relied on
 * directly; it changes without notice.  Include <latch/atomic.h>.
 */
#ifndef LATCH_DETAIL_ATOMIC_H
#define LATCH_DETAIL_ATOMIC_H

#include <stdint.h>

/*
 * The fences are inline functions so that one place can silence gcc's
 * -Wtsan (gcc 12 and later), which warns under -fsanitize=thread at every
 * fence that ThreadSanitizer does not model fences; with -Werror it would
 * stop every program that includes these headers.  Ignoring it is sound:
 * every location the fences order is accessed through the atomic helpers
 * of <latch/atomic.h>, so TSan cannot miss a race on them; it can only fail to see the
 * synchronization a fence adds and report a race that is not one.  clang
 * models fences no better and does not warn.
 */
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 12
#define LATCH_QUIET_TSAN_FENCES_ 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif

static inline void latch_fence_acquire_(void)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
}

static inline void latch_fence_release_(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

#ifdef LATCH_QUIET_TSAN_FENCES_
#pragma GCC diagnostic pop
#undef LATCH_QUIET_TSAN_FENCES_
#endif

/*
 * ThreadSanitizer cannot see the release stores that publish an element
 * when they run inside a library built without it, so a program built
 * with -fsanitize=thread would be told that the element's initialisation
 * races with its lock-free readers.  The library therefore releases each
 * element to ThreadSanitizer (__tsan_release() on its struct
 * latch_tree_node, when the process runs ThreadSanitizer) before the
 * first link to it is stored, and the inline readers, when compiled with
 * ThreadSanitizer, acquire each element they reach before reading it.
 * Without ThreadSanitizer the reader side compiles to nothing.  The range
 * map and the map, whose lookups run inside the library, release the map
 * at each flip and acquire it after each lookup there (src/btree.h).
 */
#if defined(__SANITIZE_THREAD__)
#define LATCH_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LATCH_TSAN_ 1
#endif
#endif

/*
 * A model checker's harness, which cannot take the address of a function
 * defined nowhere, defines LATCH_TSAN_SHIMMED_ and its own
 * latch_tsan_release_() and latch_tsan_acquire_() (tests/model/model.h).
 */
#ifndef LATCH_TSAN_SHIMMED_
#ifdef __cplusplus
extern "C" {
#endif
/*
 * ThreadSanitizer's interface.  Without it in the program, weak
 * references are NULL: the writer's release costs one compare, and
 * readers compiled without ThreadSanitizer make no call at all.
 */
void __tsan_release(void *addr) __attribute__((weak));
#ifdef LATCH_TSAN_
void __tsan_acquire(void *addr);
#else
void __tsan_acquire(void *addr) __attribute__((weak));
#endif
#ifdef __cplusplus
}
#endif

/*
 * Tell ThreadSanitizer, when the process runs it, that everything this
 * thread did so far happens-before whatever a thread does after its
 * acquire of @addr.  Cost without ThreadSanitizer: one well-predicted
 * branch on the symbol's address.
 */
static inline void latch_tsan_release_(const void *addr)
{
	if (__builtin_expect(__tsan_release != 0, 0))
		__tsan_release((void *)(uintptr_t)addr);
}

/*
 * Tell ThreadSanitizer, when the process runs it, that every release of
 * @addr so far happens-before what this thread does next: the library's
 * own readers, which may run in a process with ThreadSanitizer although
 * the library was built without it.
 */
static inline void latch_tsan_acquire_(const void *addr)
{
#ifdef LATCH_TSAN_
	__tsan_acquire((void *)(uintptr_t)addr);
#else
	if (__builtin_expect(__tsan_acquire != 0, 0))
		__tsan_acquire((void *)(uintptr_t)addr);
#endif
}

#endif /* LATCH_TSAN_SHIMMED_ */

#ifdef LATCH_TSAN_
/* Reader side: everything done before the release of @addr happens-before. */
#define LATCH_TSAN_ACQUIRE_(addr) __tsan_acquire((void *)(addr))
#else
#define LATCH_TSAN_ACQUIRE_(addr) ((void)0)
#endif

#endif /* LATCH_DETAIL_ATOMIC_H */
