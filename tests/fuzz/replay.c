/* SPDX-License-Identifier: MIT */
/*
 * Runs the fuzz target over files, without libFuzzer: every compiler
 * replays the committed corpus as a regression test.
 *
 * Usage: fuzz-tree-replay FILE-OR-DIRECTORY... (and fuzz-map-replay)
 */
/*
 * The 64-bit file interfaces on 32-bit targets too: there, without this,
 * stat() and readdir() fail with EOVERFLOW on a filesystem whose inode
 * numbers or directory offsets need 64 bits.
 */
#define _FILE_OFFSET_BITS 64
#include <dirent.h>
#include <errno.h>
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

	CHECK(stat(path, &st) == 0, "cannot stat %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	dir = opendir(path);
	CHECK(dir, "cannot open directory %s", path);
	for (;;) {
		char child[4096];

		errno = 0;
		d = readdir(dir);
		if (!d)
			break;
		if (d->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, d->d_name);
		count += replay(child);
	}
	/* NULL both at the end and on an error: errno tells them apart. */
	CHECK(errno == 0, "cannot read directory %s: %s", path, strerror(errno));
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
