/* SPDX-License-Identifier: MIT */
/*
 * range-reclaim-urcu: freeing what ranges point to safely with liburcu
 * (flavour memb).
 *
 * A JIT keeps recompiling functions: each new version of a function gets
 * a new code blob that replaces the old one in the range map (one batch,
 * so a lookup finds the old version or the new one, never neither).  A
 * profiler thread, and the sampling signal handler that interrupts it,
 * resolve addresses to blobs.  The contract that makes freeing safe:
 *
 *   readers:  urcu_memb_read_lock(); latch_range_find(..., &r);
 *             use r.value; urcu_memb_read_unlock();   (allowed in signal
 *             handlers of registered threads with this flavour)
 *   writer:   erase the blob's range, then free the blob only after a grace
 *             period: urcu_memb_call_rcu() (deferred) or
 *             urcu_memb_synchronize_rcu() (waits) followed by free().
 *
 * Usage: range-reclaim-urcu [recompilations]   (default 100000)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <latch/atomic.h>
#include <latch/range.h>

#define FUNCTIONS 64
#define LIVE      0x11feUL

struct code_blob {
	uintptr_t start, end; /* where it is mapped: its range, whose value it is */
	struct rcu_head rcu;  /* for call_rcu() */
	unsigned long state;  /* LIVE until freed: a reader must never see anything else */
	unsigned version;
};

static struct latch_range_map code;
static int stop;
static volatile sig_atomic_t samples, bad_samples;
static long lookups, bad_lookups;

/* Reader side (thread or signal handler): is @pc in live code? */
static int resolve(uintptr_t pc)
{
	struct latch_range r;
	int ok = 1;

	urcu_memb_read_lock();
	if (latch_range_find(&code, pc, &r))
		ok = ((const struct code_blob *)r.value)->state == LIVE;
	urcu_memb_read_unlock();
	return ok;
}

static void on_sample(int sig)
{
	(void)sig;
	samples++;
	bad_samples += !resolve(0x10000 + (uintptr_t)(samples % FUNCTIONS) * 0x100 + 8);
}

static void *profiler(void *arg)
{
	struct sigevent sev = { 0 };
	struct itimerspec every = { { 0, 200000 }, { 0, 200000 } }; /* 200 us */
	sigset_t prof;
	timer_t timer;

	(void)arg;
	urcu_memb_register_thread(); /* before the first read-side section */
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	pthread_sigmask(SIG_UNBLOCK, &prof, NULL); /* registered: samples may now arrive */
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0)
		timer_settime(timer, 0, &every, NULL);
	/* Relaxed: a stop request; pthread_join() orders the counters. */
	for (uintptr_t pc = 0x10000; !LATCH_LOAD_RELAXED(&stop); pc += 0x40) {
		bad_lookups += !resolve(0x10000 + pc % (FUNCTIONS * 0x100));
		lookups++;
	}
	timer_delete(timer);
	pthread_sigmask(SIG_BLOCK, &prof, NULL);
	urcu_memb_unregister_thread();
	return NULL;
}

static struct code_blob *compile(int function, unsigned version)
{
	struct code_blob *b = calloc(1, sizeof(*b));

	if (!b)
		abort();
	b->start = 0x10000 + (uintptr_t)function * 0x100;
	b->end = b->start + 0x80 + version % 0x80; /* each version a new size */
	b->state = LIVE;
	b->version = version;
	return b;
}

static void release(struct code_blob *b)
{
	b->state = 0; /* poison: a reader that still held it would notice */
	free(b);
}

static void release_rcu(struct rcu_head *head)
{
	release(caa_container_of(head, struct code_blob, rcu));
}

int main(int argc, char **argv)
{
	long recompilations = argc > 1 ? atol(argv[1]) : 100000;
	struct code_blob *fn[FUNCTIONS];
	struct sigaction sa;
	sigset_t prof;
	pthread_t thread;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sample;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &prof, NULL); /* the profiler unblocks once registered */

	if (latch_range_map_init(&code) != 0)
		abort();
	for (int f = 0; f < FUNCTIONS; f++) {
		fn[f] = compile(f, 0);
		if (latch_range_insert(&code, fn[f]->start, fn[f]->end, fn[f], NULL) != 0)
			abort();
	}
	pthread_create(&thread, NULL, profiler, NULL);

	for (long i = 1; i <= recompilations; i++) {
		int f = (int)(i % FUNCTIONS);
		struct code_blob *old = fn[f], *new_blob = compile(f, (unsigned)i);
		const struct latch_range_change swap[] = {
			{ LATCH_RANGE_ERASE, { old->start, old->end, old } },
			{ LATCH_RANGE_INSERT, { new_blob->start, new_blob->end, new_blob } },
		};

		if (latch_range_commit(&code, swap, 2, NULL) != 0)
			abort();
		fn[f] = new_blob;
		if (i % 100 == 0) { /* now and then wait for readers here ... */
			urcu_memb_synchronize_rcu();
			release(old);
		} else { /* ... usually let a helper thread free it after a grace period */
			urcu_memb_call_rcu(&old->rcu, release_rcu);
		}
	}

	LATCH_STORE_RELAXED(&stop, 1); /* Relaxed: a stop request (see profiler()). */
	pthread_join(thread, NULL);
	for (int f = 0; f < FUNCTIONS; f++) {
		latch_range_erase(&code, fn[f]->start);
		urcu_memb_call_rcu(&fn[f]->rcu, release_rcu);
	}
	urcu_memb_barrier(); /* wait until every deferred free has run */
	latch_range_map_destroy(&code);

	printf("%ld recompilations; profiler: %ld lookups, %d samples in its signal handler; "
	       "dead code seen: %ld\n",
	       recompilations, lookups, (int)samples, bad_lookups + bad_samples);
	printf("range-reclaim-urcu: %s\n",
	       bad_lookups || bad_samples || !lookups ? "WRONG" : "every blob read was live");
	return bad_lookups || bad_samples || !lookups ? 1 : 0;
}
