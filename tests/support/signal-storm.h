/* SPDX-License-Identifier: MIT */
/*
 * Support for tests whose signal handlers check answers: a timer that
 * signals one thread (the caller) periodically, and a check that can
 * fail from inside a handler.
 *
 * The storm adapts so that the code it interrupts keeps running.  Where
 * delivering a signal costs more than the period (under a CPU emulator
 * such as qemu-user a delivery takes tens of microseconds, the periods
 * here are 20 to 100), a thread signalled every period does nothing but
 * run its handler: the writer never finishes an update and the test
 * checks nothing, or its watchdog fires.  So the interrupted code reports
 * each unit of work with storm_progress(), every handler starts with
 * storm_tick(), and a handler that finds no progress since the last
 * STORM_IDLE_TICKS handlers doubles the period (timer_settime() is
 * async-signal-safe), up to STORM_MAX_PERIOD_NS.  Where the work keeps
 * up, the period stays as asked; storm_period_ns() tells the one in use.
 * A lookup that hangs in a handler is still a hang: no period helps it,
 * and the tests' watchdogs catch it.
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

/* Handlers in a row without progress before the period doubles; the longest period. */
#define STORM_IDLE_TICKS    16
#define STORM_MAX_PERIOD_NS 100000000L

#ifdef __cplusplus
#define STORM_THREAD_LOCAL thread_local
#else
#define STORM_THREAD_LOCAL _Thread_local
#endif

/*
 * A thread's storm: its timer and what storm_tick() needs.  Only that
 * thread and its own handlers use it (the timer signals that thread), so
 * relaxed atomics suffice: a handler and the code it interrupts run one
 * at a time, and the atomics only keep each access whole.
 */
struct storm_state {
	timer_t timer;
	long period_ns;
	unsigned long progress; /* units of work done; accessed atomically */
	unsigned long seen;     /* progress at the last tick that saw it move */
	unsigned idle;          /* ticks since then */
};

static STORM_THREAD_LOCAL struct storm_state storm_self;

/* The calling thread's code did one more unit of work. */
static inline void storm_progress(void)
{
	__atomic_fetch_add(&storm_self.progress, 1, __ATOMIC_RELAXED);
}

/* First thing in a storm handler: slow the storm down if it starves the thread. */
static inline void storm_tick(void)
{
	struct storm_state *s = &storm_self;
	unsigned long p = __atomic_load_n(&s->progress, __ATOMIC_RELAXED);

	if (p != s->seen) {
		s->seen = p;
		s->idle = 0;
		return;
	}
	if (++s->idle < STORM_IDLE_TICKS || s->period_ns >= STORM_MAX_PERIOD_NS)
		return;
	s->idle = 0;
	s->period_ns =
	    2 * s->period_ns < STORM_MAX_PERIOD_NS ? 2 * s->period_ns : STORM_MAX_PERIOD_NS;
	{
		struct itimerspec every = {
			{ s->period_ns / 1000000000L, s->period_ns % 1000000000L },
			{ s->period_ns / 1000000000L, s->period_ns % 1000000000L }
		};

		(void)timer_settime(s->timer, 0, &every, NULL);
	}
}

/* The period the calling thread's storm uses now, in nanoseconds. */
static inline long storm_period_ns(void)
{
	return storm_self.period_ns;
}

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
 * nanoseconds (less than a second) at first, slower if the thread's work
 * stalls (see storm_tick()).  One storm a thread.  Where per-thread timers
 * are unavailable the test exits with @missing: TEST_SKIP, or 1 for a test
 * that must not be skipped.
 */
static inline timer_t storm_start_or(long period_ns, int missing)
{
	struct itimerspec every = { { 0, period_ns }, { 0, period_ns } };
	struct sigevent sev;
	timer_t timer;

	/* Before the timer exists: no handler of this thread's storm runs yet. */
	storm_self.period_ns = period_ns;
	storm_self.seen = __atomic_load_n(&storm_self.progress, __ATOMIC_RELAXED);
	storm_self.idle = 0;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = STORM_SIGNAL;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
		perror(missing == TEST_SKIP ? "skipped: timer_create(SIGEV_THREAD_ID)"
		                            : "timer_create(SIGEV_THREAD_ID)");
		exit(missing);
	}
	storm_self.timer = timer;
	CHECK(timer_settime(timer, 0, &every, NULL) == 0, "timer_settime");
	return timer;
}

/* storm_start_or(), skipping the test where per-thread timers are unavailable. */
static inline timer_t storm_start(long period_ns)
{
	return storm_start_or(period_ns, TEST_SKIP);
}

#endif /* LATCH_TESTS_SIGNAL_STORM_H */
