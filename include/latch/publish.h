/* SPDX-License-Identifier: MIT */
/*
 * latch/publish.h - maps that readers outside the process can find and
 * read: another process (<latch/remote.h>, latch-inspect(1)) or an eBPF
 * program.
 *
 *	latch_range_publish(&code, "jit-code", LATCH_PUBLISH_NAMES);
 *	...                                   // updates as usual
 *	latch_range_unpublish(&code);         // before latch_range_map_destroy()
 *
 * Publishing puts a descriptor of the map (struct latch_layout_map, the
 * addresses of its counter and copies and its node geometry) in the
 * process's registry, latch_registry: an exported symbol an outside reader
 * finds from the process's memory alone, as a debugger finds the GDB JIT
 * interface's __jit_debug_descriptor.  The registry is itself a latch,
 * safe to read while it changes.  The layout is an ABI of its own:
 * <latch/layout.h>, latch_layout(7).
 *
 * Synchronization table:
 *
 *	call                        context                 serialize with
 *	latch_map_publish()         threads                 the map's writers
 *	latch_map_unpublish()       threads                 the map's writers
 *	latch_range_publish()       threads                 nothing (RESIDENT: the map's writers)
 *	latch_range_unpublish()     threads                 nothing (RESIDENT: the map's writers)
 *
 * Calls on different maps may run at once: a mutex serializes the
 * registry's writers.  None may run in a signal handler (they lock and
 * allocate).  The reference for each call is its man page: latch_publish(3).
 */
#ifndef LATCH_PUBLISH_H
#define LATCH_PUBLISH_H

#include <latch/layout.h>
#include <latch/map.h>
#include <latch/range.h>
#include <latch/visibility.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The map's values point to NUL-terminated names, which tools may print. */
#define LATCH_PUBLISH_NAMES    1u
/** Keep the map's node memory resident (mlock), for readers that cannot fault pages in. */
#define LATCH_PUBLISH_RESIDENT 2u

/**
 * latch_registry - the process's registry of published maps.
 * For readers outside the process, which find it by this name in the
 * symbol tables of the mapped liblatch (or of a program that linked it
 * statically) and read it as <latch/layout.h> describes.  Never written
 * by anything but the calls below.
 */
LATCH_API extern struct latch_layout_registry latch_registry;

/**
 * latch_map_publish() - make @m readable from outside the process as @name.
 *
 * @name: 1 to 63 bytes, unique among the process's published maps and
 * range maps.  @flags: LATCH_PUBLISH_NAMES and LATCH_PUBLISH_RESIDENT, or
 * 0.  Returns 0; -EINVAL (NULL @m, NULL or empty @name, @name of 64 bytes
 * or more, an unknown flag); -EEXIST (@name is in use, or @m is already
 * published); -ENOMEM (no memory, the registry's LATCH_LAYOUT_SLOTS are
 * in use, or RESIDENT and mlock() failed: RLIMIT_MEMLOCK).  Cost O(1)
 * plus, with RESIDENT, one mlock() per 64-node chunk.  Threads, not
 * signal handlers; serialized with @m's writers (the library serializes
 * the registry itself).
 */
LATCH_API int latch_map_publish(struct latch_map *m, const char *name, unsigned flags);

/**
 * latch_map_unpublish() - take @m out of the registry.
 *
 * Returns 0, or -ENOENT when @m is not published.  Call it before
 * latch_map_destroy(): an outside reader that was inside the map may
 * still read its memory after that (it gets an error, see
 * latch_publish(3)).  Cost O(1) plus, with RESIDENT, one munlock() per
 * chunk.  Threads, not signal handlers; serialized with @m's writers.
 */
LATCH_API int latch_map_unpublish(struct latch_map *m);

/**
 * latch_range_publish() - make @m readable from outside the process as @name.
 *
 * As latch_map_publish(); maps and range maps share one namespace.  May
 * run beside @m's writers, except with LATCH_PUBLISH_RESIDENT, which
 * walks @m's node chunks: then no writer call on @m may run meanwhile.
 * Threads, not signal handlers.
 */
LATCH_API int latch_range_publish(struct latch_range_map *m, const char *name, unsigned flags);

/**
 * latch_range_unpublish() - take @m out of the registry.
 * As latch_map_unpublish(); call it before latch_range_map_destroy().
 * Threads, not signal handlers; with RESIDENT, no writer call on @m may
 * run meanwhile.
 */
LATCH_API int latch_range_unpublish(struct latch_range_map *m);

#ifdef __cplusplus
}
#endif

#endif /* LATCH_PUBLISH_H */
