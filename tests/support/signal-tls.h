/* SPDX-License-Identifier: MIT */
/*
 * Does a thread keep its own thread-local storage across a signal
 * handler?  A kernel always restores it; qemu-user's 32-bit x86 emulator
 * (qemu-i386, 7.2 at least) does not: the TLS descriptor it loads when a
 * handler returns sits in one table shared by every thread of the
 * process, holding the base of the thread created last.  After that the
 * interrupted thread runs on another thread's TLS (its errno, its malloc
 * cache, its pthread_self(): pthread_join() then fails with EDEADLK), so
 * a threaded program that takes signals cannot be tested there at all.
 * The tests that signal threads call test_skip_if_signals_lose_tls(),
 * which ends them as skipped, saying why, where that happens.
 *
 * The probe runs in a child process, which it may leave broken: a
 * thread is created and joined, then the main thread takes a signal and
 * looks at its own thread-local variable.  Includers define _GNU_SOURCE
 * (or _POSIX_C_SOURCE) first, for sigaction().
 */
#ifndef LATCH_TESTS_SIGNAL_TLS_H
#define LATCH_TESTS_SIGNAL_TLS_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static _Thread_local int test_tls_mark;

static void test_tls_probe_handler(int sig)
{
	(void)sig;
}

static void *test_tls_probe_thread(void *arg)
{
	test_tls_mark = 2;
	return arg;
}

/* True when a signal handler's return leaves a thread with another thread's TLS. */
static inline bool test_signals_lose_tls(void)
{
	int status;
	pid_t child;

	fflush(stdout);
	fflush(stderr);
	child = fork();
	CHECK(child >= 0, "fork failed");
	if (child == 0) {
		struct sigaction sa;
		pthread_t thread;

		test_tls_mark = 1;
		if (pthread_create(&thread, NULL, test_tls_probe_thread, NULL) != 0 ||
		    pthread_join(thread, NULL) != 0)
			_exit(2);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = test_tls_probe_handler;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGUSR2, &sa, NULL) != 0)
			_exit(2);
		raise(SIGUSR2);
		_exit(test_tls_mark == 1 ? 0 : 1);
	}
	CHECK(waitpid(child, &status, 0) == child, "waitpid failed");
	CHECK(!WIFEXITED(status) || WEXITSTATUS(status) != 2,
	      "the TLS probe could not run a thread or take a signal");
	/* Lost, or worse: the child crashed on the other thread's TLS. */
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* Exit with TEST_SKIP, saying why, when test_signals_lose_tls(); @what names the test. */
static inline void test_skip_if_signals_lose_tls(const char *what)
{
	if (!test_signals_lose_tls())
		return;
	printf(
	    "%s: skipped: here a thread that returns from a signal handler runs on another "
	    "thread's thread-local storage (qemu-i386 keeps one TLS descriptor for all threads), "
	    "so threads that take signals cannot be tested\n",
	    what);
	exit(TEST_SKIP);
}

#endif /* LATCH_TESTS_SIGNAL_TLS_H */
