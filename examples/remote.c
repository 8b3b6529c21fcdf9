/* SPDX-License-Identifier: MIT */
/*
 * remote: a profiler in another process names the code a JIT emitted.
 *
 * The JIT (a child process here) keeps its code blobs in a range map
 * whose values are the blobs' names, publishes it, and keeps emitting and
 * retiring blobs.  The profiler (the parent) attaches to it and resolves
 * addresses with latch_remote_range_find(), reading the JIT's memory with
 * process_vm_readv(): no cooperation from the JIT at lookup time, right
 * answers even while the JIT is in the middle of an update, and the
 * blob's name read from the JIT's memory too.
 */
#define _GNU_SOURCE 1 /* kill(), fork(), prctl() */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <latch/publish.h>
#include <latch/remote.h>

#define BLOBS     64
#define BLOB_SIZE 0x1000

static const char *const names[4] = { "interp_loop", "jit_fib", "jit_sort", "jit_hash" };

static uintptr_t blob_start(unsigned i)
{
	return 0x7f0000000000 + (uintptr_t)i * BLOB_SIZE;
}

/* The JIT: blobs with even numbers stay, odd ones come and go. */
static void jit(int ready_fd)
{
	static struct latch_range_map code;

	latch_range_map_init(&code);
	for (unsigned i = 0; i < BLOBS; i += 2)
		latch_range_insert(&code, blob_start(i), blob_start(i) + BLOB_SIZE / 2,
		                   (void *)names[i % 4], NULL);
	if (latch_range_publish(&code, "jit-code", LATCH_PUBLISH_NAMES) != 0)
		_exit(1);
	/* Under Yama's ptrace_scope 1, a process may read only its descendants and those that allow it. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	for (unsigned long n = 0;; n++) {
		unsigned i = 1 + 2 * (unsigned)(n % (BLOBS / 2));

		latch_range_insert(&code, blob_start(i), blob_start(i) + BLOB_SIZE / 2,
		                   (void *)names[i % 4], NULL);
		latch_range_erase(&code, blob_start(i));
		/* A JIT compiles between its updates: leave readers time for a whole attempt. */
		usleep(50);
	}
}

int main(void)
{
	struct latch_remote *r;
	struct latch_remote_info info;
	int ready[2], status, wrong = 0;
	pid_t child;
	char c;

	if (pipe(ready) != 0 || (child = fork()) < 0)
		return 1;
	if (child == 0)
		jit(ready[1]);
	if (read(ready[0], &c, 1) != 1 || latch_remote_attach(child, &r) != 0)
		return 1;
	if (latch_remote_list(r, &info, 1) != 1)
		return 1;
	printf("process %d publishes \"%s\", %llu ranges\n", (int)child, info.name,
	       (unsigned long long)info.entries);
	for (unsigned round = 0; round < 1000; round++) {
		unsigned i = 2 * (round % (BLOBS / 2)); /* a blob that is always there */
		struct latch_range blob;
		char name[32];
		int res = latch_remote_range_find(r, "jit-code", blob_start(i) + 0x123, &blob);

		if (res == -EAGAIN)
			continue; /* the JIT flipped during every attempt: ask again later */
		if (res != 1 ||
		    latch_remote_read_name(r, (uintptr_t)blob.value, name, sizeof(name)) < 0 ||
		    strcmp(name, names[i % 4]) != 0)
			wrong++;
		else if (round < 3)
			printf("%#lx is in %s [%#lx, %#lx)\n",
			       (unsigned long)(blob_start(i) + 0x123), name,
			       (unsigned long)blob.start, (unsigned long)blob.end);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	latch_remote_detach(r);
	printf("%d wrong answers\n", wrong);
	return wrong == 0 ? 0 : 1;
}
