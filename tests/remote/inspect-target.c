/* SPDX-License-Identifier: MIT */
/*
 * The target of inspect-test.sh: publishes a range map of names
 * ("symbols", LATCH_PUBLISH_NAMES) and a map ("ids"), writes the perf map
 * latch-inspect --perf-map must produce to the file named by its
 * argument, prints "ready" and waits to be killed.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <latch/publish.h>

#include "check.h"

#define SYMBOLS 500

int main(int argc, char **argv)
{
	static struct latch_range_map symbols;
	static struct latch_map ids;
	static char names[SYMBOLS][24];
	FILE *expected;

	CHECK(argc == 2, "usage: inspect-target EXPECTED-PERF-MAP");
	expected = fopen(argv[1], "w");
	CHECK(expected, "cannot write %s", argv[1]);
	CHECK(latch_range_map_init(&symbols) == 0 && latch_map_init(&ids) == 0, "init");
	for (unsigned i = 0; i < SYMBOLS; i++) {
		uintptr_t start = 0x10000 + (uintptr_t)i * 0x40, size = 0x10 + i % 0x30;

		snprintf(names[i], sizeof(names[i]), "fn_%u", i);
		CHECK(latch_range_insert(&symbols, start, start + size, names[i], NULL) == 0,
		      "insert");
		CHECK(latch_map_insert(&ids, i * 10, (void *)(uintptr_t)i) == 0, "insert");
		fprintf(expected, "%lx %lx %s\n", (unsigned long)start, (unsigned long)size,
		        names[i]);
	}
	CHECK(fclose(expected) == 0, "close");
	CHECK(latch_range_publish(&symbols, "symbols", LATCH_PUBLISH_NAMES) == 0, "publish");
	CHECK(latch_map_publish(&ids, "ids", 0) == 0, "publish");
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
