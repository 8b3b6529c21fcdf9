/* SPDX-License-Identifier: MIT */
/*
 * The remote reader's internals: what remote.c takes from remote-elf.c,
 * and what its tests measure; not installed, not exported.
 */
#ifndef LATCH_SRC_REMOTE_PRIVATE_H
#define LATCH_SRC_REMOTE_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <latch/remote.h>

/* A file the target maps, and where its first page (file offset 0) is. */
struct latch_remote_mapped {
	char path[PATH_MAX];
	uint64_t start;
};

/* The files /proc/PID/maps names, each once; -ESRCH, -EPERM or -ENOMEM on failure. */
int latch_remote_mapped_files_(pid_t pid, struct latch_remote_mapped **files, size_t *n);

/*
 * Where the target mapped the object @want of the ELF file @f, or 0 (from
 * the file's .symtab or .dynsym, plus the load bias).
 */
uint64_t latch_remote_elf_symbol_(pid_t pid, const struct latch_remote_mapped *f, const char *want);

/* Is @path's file name liblatch's? */
bool latch_remote_is_liblatch_(const char *path);

/* The process_vm_readv() calls @r made so far. */
uint64_t latch_remote_calls_(const struct latch_remote *r);

#endif /* LATCH_SRC_REMOTE_PRIVATE_H */
