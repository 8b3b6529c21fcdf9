/* SPDX-License-Identifier: MIT */
/*
 * latch/remote.h - read another process's published maps.
 *
 *	struct latch_remote *r;
 *	if (latch_remote_attach(pid, &r) == 0) {
 *		struct latch_range code;
 *		if (latch_remote_range_find(r, "jit-code", pc, &code) == 1) ...
 *		latch_remote_detach(r);
 *	}
 *
 * The target publishes its maps with <latch/publish.h>.  Attaching finds
 * the target's registry (the symbol latch_registry of the liblatch it
 * mapped, or of the program that linked liblatch statically) by reading
 * the ELF symbol tables of the files /proc/PID/maps names.  Lookups then
 * read the target's memory with process_vm_readv(2) under the latch
 * protocol: load the map's counter, walk copy (counter & 1) one whole
 * node per system call, load the counter again, and start over if it
 * changed.  The target's writer never changes the copy the counter names,
 * so a target stopped mid-update (SIGSTOP, a debugger) still answers from
 * a whole copy; the target is never stopped, signalled or written.
 *
 * Nothing read is trusted: every address, count, height and name is
 * checked, the walk is bounded, and a garbage or hostile target gives an
 * error code in bounded time, never a crash, a hang or a write outside the
 * caller's buffers.  Attaching needs the permission ptrace(2) would need
 * (PTRACE_MODE_ATTACH_REALCREDS): the same user and, under Yama's
 * ptrace_scope 1, an ancestor of the target or one it allowed with
 * prctl(PR_SET_PTRACER).
 *
 * Synchronization table:
 *
 *	call                        context                 serialize with
 *	latch_remote_attach()       threads                 nothing
 *	latch_remote_detach()       threads                 every call on the handle
 *	every other call            threads                 other calls on the handle
 *
 * A handle caches what it learnt of the target's registry: calls on one
 * handle must be serialized; separate handles are independent.
 *
 * The reference for each call is its man page: latch_remote(3).
 */
#ifndef LATCH_REMOTE_H
#define LATCH_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <latch/layout.h>
#include <latch/range.h>
#include <latch/visibility.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A handle on another process's registry; opaque. */
struct latch_remote;

/** One published map, as latch_remote_list() reports it. */
struct latch_remote_info {
	char name[LATCH_LAYOUT_NAME_MAX]; /* NUL-terminated */
	enum latch_layout_kind kind;      /* map or range map */
	unsigned flags;                   /* the LATCH_PUBLISH_* flags it was published with */
	uint64_t entries;                 /* entries (ranges) in the copy the counter named */
};

/**
 * The attempts a lookup makes before it gives up with -EAGAIN: each one
 * ends when the target's writer flipped the map's counter (or changed the
 * registry) while it read.
 */
#define LATCH_REMOTE_ATTEMPTS 64

/**
 * latch_remote_attach() - a handle on the registry of process @pid.
 *
 * Returns 0 and sets *@r (the process may have published nothing yet; it
 * may be the caller itself); -ESRCH (no such process); -EPERM (not
 * allowed to read it); -ENOENT (it has no liblatch registry); -EPROTO (its
 * registry has an unknown layout version or is corrupt); -ENOMEM.  Cost:
 * reading /proc/PID/maps and the symbol tables of the files it maps
 * (milliseconds).  Threads, not signal handlers.
 */
LATCH_API int latch_remote_attach(pid_t pid, struct latch_remote **r);

/**
 * latch_remote_detach() - release @r (NULL: nothing).  Cost O(1).  No
 * other call on @r may run meanwhile or after.
 */
LATCH_API void latch_remote_detach(struct latch_remote *r);

/**
 * latch_remote_list() - the target's published maps.
 *
 * Copies up to @max of them to @out (in registry order) and returns how
 * many there are (more than @max when they did not all fit), or -ESRCH
 * (the process exited), -EFAULT, -EPROTO (the registry or a descriptor is
 * invalid), -EAGAIN (the registry or a map changed on every attempt).
 * Each entry count is read under its map's counter.  Cost: 3 + 2 per map
 * system calls and more on retries.  Serialized with other calls on @r.
 */
LATCH_API int latch_remote_list(struct latch_remote *r, struct latch_remote_info *out, size_t max);

/**
 * latch_remote_range_find() - the range of the target's range map @name
 * that holds @addr.
 *
 * Returns 1 and copies it to *@out (unless NULL), 0 when no range holds
 * @addr, or: -EINVAL (@name NULL, empty or 64 bytes or more); -ENOENT (no
 * range map of that name is published; maps and range maps share one
 * namespace); -ESRCH (the process exited); -EFAULT (its memory could not
 * be read); -EPROTO (what was read is not a valid map); -EAGAIN (the map
 * changed on every one of LATCH_REMOTE_ATTEMPTS attempts).  Cost per
 * attempt: height + 2 process_vm_readv(2) calls (one per level, a whole
 * node each; the first lookup on a handle, and the first after the
 * registry changed, also read the registry).  Serialized with other calls
 * on @r.
 */
LATCH_API int latch_remote_range_find(struct latch_remote *r, const char *name, uint64_t addr,
                                      struct latch_range *out);

/**
 * latch_remote_range_ceil() - the range of @name with the least start >= @addr.
 * Returns and costs as latch_remote_range_find(), with up to height - 1
 * more calls when the answer is in the next subtree.  A walk by ceil(),
 * from 0 and then from each start + 1, sees every range present
 * throughout it, in order, none twice.
 */
LATCH_API int latch_remote_range_ceil(struct latch_remote *r, const char *name, uint64_t addr,
                                      struct latch_range *out);

/**
 * latch_remote_map_find() - the value of @key in the target's map @name.
 * Returns 1 and sets *@value (unless NULL), 0 when @key is absent, or the
 * errors of latch_remote_range_find() (-ENOENT: no map of that name).
 * Cost as latch_remote_range_find().  Serialized with other calls on @r.
 */
LATCH_API int latch_remote_map_find(struct latch_remote *r, const char *name, uint64_t key,
                                    uint64_t *value);

/**
 * latch_remote_map_ceil() - the entry of map @name with the least key >= @key.
 * Sets *@found and *@value (each unless NULL).  Returns and costs as
 * latch_remote_range_ceil().
 */
LATCH_API int latch_remote_map_ceil(struct latch_remote *r, const char *name, uint64_t key,
                                    uint64_t *found, uint64_t *value);

/**
 * latch_remote_describe() - the descriptor of the target's published map @name.
 *
 * Copies it to *@out (unless NULL): the addresses, in the target, of the
 * map's counter and of each copy's root, entry count and height, and the
 * node geometry (<latch/layout.h>), for a reader that walks the map by
 * itself, such as an eBPF program (latch_bpf(7)).  Returns 1, or the
 * errors of latch_remote_list() and -EINVAL, -ENOENT (no map of that
 * name).  The descriptor was validated as a lookup validates it; it
 * stands until the map is unpublished.  Cost: nothing when the handle's
 * cache holds the name, else the registry's calls.  Serialized with other
 * calls on @r.
 */
LATCH_API int latch_remote_describe(struct latch_remote *r, const char *name,
                                    struct latch_layout_map *out);

/**
 * latch_remote_read_name() - the NUL-terminated string at @addr in the target.
 *
 * For the values of maps published with LATCH_PUBLISH_NAMES.  Copies it
 * to @buf (of @size > 0 bytes, always NUL-terminated) and returns its
 * length; -EINVAL (@buf NULL or @size 0), -ESRCH, -EFAULT (unreadable),
 * -ENAMETOOLONG (no NUL in the first @size - 1 bytes; @buf then holds
 * them).  The target may change the string meanwhile: nothing orders it.
 * Cost: one system call per page it spans.  Serialized with other calls
 * on @r.
 */
LATCH_API int latch_remote_read_name(struct latch_remote *r, uint64_t addr, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* LATCH_REMOTE_H */
