/* SPDX-License-Identifier: MIT */
/*
 * Support for tests whose signal handlers check answers: a timer that
 * signals one thread (the caller) periodically, and a check that can
 * fail from inside a handler.
 */
#ifndef LATCH_TESTS_SIGNAL_STORM_H
#define LATCH_TESTS_SIGNAL_STORM_H

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* The signal the timers send. */
#define STORM_SIGNAL SIGPROF

/* Failure inside a handler: write(2) and _exit(2) are async-signal-safe. */
#define SIG_CHECK(cond, msg)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			static const char text[] = "signal handler: " msg " (" #cond ")\n";        \
			(void)!write(2, text, sizeof(text) - 1);                                   \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)

/* Run @handler for STORM_SIGNAL, with no other signal blocked while it runs. */
static inline void storm_handle(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(STORM_SIGNAL, &sa, NULL) == 0, "sigaction");
}

/*
 * A timer that sends STORM_SIGNAL to the calling thread every @period_ns
 * nanoseconds.  Exits the test as skipped where per-thread timers are
 * unavailable.
 */
static inline timer_t storm_start(long period_ns)
{
	struct itimerspec every = { { 0, period_ns }, { 0, period_ns } };
	struct sigevent sev;
	timer_t timer;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = STORM_SIGNAL;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
		perror("skipped: timer_create(SIGEV_THREAD_ID)");
		exit(TEST_SKIP);
	}
	CHECK(timer_settime(timer, 0, &every, NULL) == 0, "timer_settime");
	return timer;
}

#endif /* LATCH_TESTS_SIGNAL_STORM_H */
