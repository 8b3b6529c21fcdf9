/* SPDX-License-Identifier: MIT */
/*
 * latch-demo: a writer thread inserts and erases elements continuously
 * while a high-rate timer signal interrupts that same thread; the signal
 * handler looks up keys that are always present.  With a latch every one
 * of those lookups finishes and is right, even the ones that interrupted
 * an update halfway.
 *
 * Usage: latch-demo [seconds]   (default 3)
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

#include <latch/tree.h>

struct item {
	long key;
	struct latch_tree_node node;
};

static bool item_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return latch_tree_entry(a, struct item, node)->key <
	       latch_tree_entry(b, struct item, node)->key;
}

static int item_comp(const void *key, const struct latch_tree_node *n)
{
	long k = *(const long *)key, nk = latch_tree_entry(n, struct item, node)->key;

	return (k > nk) - (k < nk);
}

static const struct latch_tree_ops item_ops = { item_less, item_comp };

#define STABLE 256 /* keys 0..255 are never removed */
#define CHURN  256 /* keys 1000.. come and go */

static struct latch_tree_root tree = LATCH_TREE_ROOT_INIT;
static struct item stable[STABLE], churn[CHURN];
static volatile sig_atomic_t in_update, stop;
static volatile sig_atomic_t lookups, lookups_in_update, wrong;

static void on_tick(int sig)
{
	static long next;
	long key = next++ % STABLE;
	struct latch_tree_node *n = latch_tree_find(&tree, &key, &item_ops);

	(void)sig;
	lookups++;
	if (in_update)
		lookups_in_update++;
	if (!n || latch_tree_entry(n, struct item, node)->key != key)
		wrong++;
}

static void *writer(void *arg)
{
	struct sigevent sev;
	struct itimerspec every = { { 0, 20000 }, { 0, 20000 } }; /* 50 kHz */
	timer_t timer;
	unsigned long long updates = 0;

	(void)arg;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) || timer_settime(timer, 0, &every, NULL)) {
		perror("timer");
		exit(1);
	}
	while (!stop) {
		struct item *it = &churn[updates % CHURN];

		in_update = 1;
		if (updates / CHURN % 2 == 0)
			latch_tree_insert(&tree, &it->node, &item_ops);
		else
			latch_tree_erase(&tree, &it->node, &item_ops);
		in_update = 0;
		updates++;
	}
	timer_delete(timer);
	printf("writer: %llu updates\n", updates);
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 3;
	struct sigaction sa;
	pthread_t thread;

	for (long i = 0; i < STABLE; i++) {
		stable[i].key = i;
		latch_tree_insert(&tree, &stable[i].node, &item_ops);
	}
	for (long i = 0; i < CHURN; i++)
		churn[i].key = 1000 + i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);

	printf("latch-demo: a writer updates a latched tree for %d s while a 50 kHz signal\n"
	       "interrupts it; the handler looks up keys that are always present.\n",
	       seconds);
	pthread_create(&thread, NULL, writer, NULL);
	sleep((unsigned)seconds);
	stop = 1;
	pthread_join(thread, NULL);
	printf(
	    "lookups in the signal handler: %ld, inside an interrupted update: %ld, wrong: %ld\n",
	    (long)lookups, (long)lookups_in_update, (long)wrong);
	if (wrong || !lookups_in_update) {
		printf("FAILED\n");
		return 1;
	}
	printf(
	    "every lookup finished and was right, including the ones that interrupted an update\n");
	return 0;
}
