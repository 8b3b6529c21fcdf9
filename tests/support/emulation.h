/* SPDX-License-Identifier: MIT */
/*
 * Is this test program running under a user-mode CPU emulator?
 *
 * The arm64 build runs its tests under qemu-user (cmake/toolchain-aarch64.cmake).
 * A few tests cannot run there: single-stepping the writer with ptrace(2),
 * and checks that depend on when signals arrive, which qemu delivers only
 * between translated blocks.  They call test_skip_if_emulated(), which
 * prints why and exits with TEST_SKIP, instead of being excluded by name.
 *
 * How it is detected: qemu-user implements no ptrace(2) request; every one
 * fails with ENOSYS.  A Linux kernel never answers ptrace with ENOSYS: a
 * request aimed at a process the caller does not trace fails with ESRCH
 * (or EPERM under a restrictive security policy).  So we ask for a word of
 * our own user area, a request that cannot succeed and changes nothing,
 * and look at errno.  The same answer (ptrace unavailable) would come from
 * a sandbox that filters ptrace with ENOSYS; a ptrace test cannot run
 * there either, and the printed reason names both.
 */
#ifndef LATCH_TESTS_EMULATION_H
#define LATCH_TESTS_EMULATION_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "check.h"

/* True when ptrace(2) is unimplemented: qemu-user (see the file comment). */
static inline bool test_emulated(void)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKUSER, getpid(), NULL, NULL);
	return word == -1 && errno == ENOSYS;
}

/* Exit with TEST_SKIP, saying why, when test_emulated(); @what names the test. */
static inline void test_skip_if_emulated(const char *what)
{
	if (!test_emulated())
		return;
	printf("%s: skipped: running under a CPU emulator (qemu-user), or ptrace(2) is "
	       "filtered: ptrace answered ENOSYS\n",
	       what);
	exit(TEST_SKIP);
}

#endif /* LATCH_TESTS_EMULATION_H */
