/* SPDX-License-Identifier: MIT */
/*
 * Run one case of a test in a child process, for cases that must stop
 * the program (contract violations): the child's stderr is captured and
 * its wait status returned.
 */
#ifndef LATCH_TESTS_CHILD_H
#define LATCH_TESTS_CHILD_H

#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Run @fn(@arg) in a child; @msg receives (up to @size - 1 bytes of) its stderr. */
static inline int test_run_child(void (*fn)(int), int arg, char *msg, size_t size)
{
	int pipefd[2], status;
	ssize_t len;
	pid_t pid;

	CHECK(pipe(pipefd) == 0, "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		fn(arg);
		_exit(0);
	}
	close(pipefd[1]);
	len = read(pipefd[0], msg, size - 1);
	msg[len > 0 ? len : 0] = '\0';
	close(pipefd[0]);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	return status;
}

#endif /* LATCH_TESTS_CHILD_H */
