/* SPDX-License-Identifier: MIT */
/*
 * The remote reader's internals that its tests measure; not installed,
 * not exported.
 */
#ifndef LATCH_SRC_REMOTE_PRIVATE_H
#define LATCH_SRC_REMOTE_PRIVATE_H

#include <stdint.h>

#include <latch/remote.h>

/* The process_vm_readv() calls @r made so far. */
uint64_t latch_remote_calls_(const struct latch_remote *r);

#endif /* LATCH_SRC_REMOTE_PRIVATE_H */
