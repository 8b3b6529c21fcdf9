/* SPDX-License-Identifier: MIT */
/*
 * The emulator detection of ../emulation.h agrees with the build: CMake
 * defines LATCH_TEST_RUN_BY_EMULATOR when CTest runs the tests through
 * CMAKE_CROSSCOMPILING_EMULATOR (the arm64 build under qemu-user), and
 * only then must test_emulated() say so, and test_skip_if_emulated()
 * end a test as skipped.  A wrong answer would make the arm64 run skip
 * tests it could run, or run tests that cannot work there.
 */
#include <sys/wait.h>

#include "emulation.h"

#ifdef LATCH_TEST_RUN_BY_EMULATOR
#define EXPECTED true
#else
#define EXPECTED false
#endif

int main(void)
{
	bool emulated = test_emulated();
	int status = 0;
	pid_t child;

	CHECK(emulated == EXPECTED, "test_emulated() says %s, but the build %s an emulator",
	      emulated ? "emulated" : "native", EXPECTED ? "runs tests through" : "has no");

	/* A child stands for a test that cannot run under emulation. */
	fflush(stdout);
	child = fork();
	CHECK(child >= 0, "fork failed");
	if (child == 0) {
		test_skip_if_emulated("test-emulation (child)");
		_exit(0);
	}
	CHECK(waitpid(child, &status, 0) == child, "waitpid failed");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == (EXPECTED ? TEST_SKIP : 0),
	      "test_skip_if_emulated() ended the child with status %#x", (unsigned)status);

	printf("test-emulation: %s, as the build expects\n",
	       emulated ? "running under a CPU emulator" : "running natively");
	return 0;
}
