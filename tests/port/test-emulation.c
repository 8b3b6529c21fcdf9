/* SPDX-License-Identifier: MIT */
/*
 * The emulator detection of ../emulation.h agrees with the build: CMake
 * defines LATCH_TEST_RUN_BY_EMULATOR when CTest runs the tests through
 * CMAKE_CROSSCOMPILING_EMULATOR (the arm64 build under qemu-user), and
 * only then must test_emulated() say so.  A wrong answer would make the
 * arm64 run skip tests it could run, or run tests that cannot work there.
 */
#include "emulation.h"

#ifdef LATCH_TEST_RUN_BY_EMULATOR
#define EXPECTED true
#else
#define EXPECTED false
#endif

int main(void)
{
	bool emulated = test_emulated();

	CHECK(emulated == EXPECTED, "test_emulated() says %s, but the build %s an emulator",
	      emulated ? "emulated" : "native", EXPECTED ? "runs tests through" : "has no");
	printf("test-emulation: %s, as the build expects\n",
	       emulated ? "running under a CPU emulator" : "running natively");
	return 0;
}
