/* SPDX-License-Identifier: MIT */
/*
 * Runs the fuzz target over files, without libFuzzer: every compiler
 * replays the committed corpus as a regression test.
 *
 * Usage: fuzz-tree-replay FILE-OR-DIRECTORY... (and fuzz-map-replay)
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long replay_file(const char *path)
{
	static uint8_t data[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	CHECK(f, "cannot open %s", path);
	n = fread(data, 1, sizeof(data), f);
	fclose(f);
	LLVMFuzzerTestOneInput(data, n);
	return 1;
}

static long replay(const char *path)
{
	struct stat st;
	struct dirent *d;
	long count = 0;
	DIR *dir;

	CHECK(stat(path, &st) == 0, "cannot stat %s", path);
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	dir = opendir(path);
	CHECK(dir, "cannot open directory %s", path);
	while ((d = readdir(dir))) {
		char child[4096];

		if (d->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, d->d_name);
		count += replay(child);
	}
	closedir(dir);
	return count;
}

int main(int argc, char **argv)
{
	long count = 0;

	for (int i = 1; i < argc; i++)
		count += replay(argv[i]);
	CHECK(count > 0, "no input replayed");
	printf("%s: %ld inputs replayed, all passed\n", argv[0], count);
	return 0;
}
