/* SPDX-License-Identifier: MIT */
/*
 * latch-inspect: the maps another process published with liblatch
 * (latch-inspect(1)).
 *
 *	latch-inspect PID                   list the published maps
 *	latch-inspect --dump NAME PID       print every entry of one
 *	latch-inspect --resolve PID ADDR... the range holding each address
 *	latch-inspect --perf-map PID        write /tmp/perf-PID.map
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <latch/publish.h>
#include <latch/remote.h>

static const char usage[] = "usage: latch-inspect [--map NAME] PID\n"
                            "       latch-inspect --dump NAME PID\n"
                            "       latch-inspect [--map NAME] --resolve PID ADDR...\n"
                            "       latch-inspect [--map NAME] --perf-map [--output FILE] PID\n";

static const char *pid_arg;

static int fail(const char *what, int err)
{
	fprintf(stderr, "latch-inspect: %s: %s\n", what, strerror(-err));
	return 1;
}

static const char *kind_name(enum latch_layout_kind kind)
{
	return kind == LATCH_LAYOUT_KIND_RANGE ? "range" : "map";
}

/* The published maps, at most LATCH_LAYOUT_SLOTS; *@n their number. */
static int list_maps(struct latch_remote *r, struct latch_remote_info *info, int *n)
{
	int res = latch_remote_list(r, info, LATCH_LAYOUT_SLOTS);

	if (res < 0)
		return fail("listing the published maps", res);
	*n = res < LATCH_LAYOUT_SLOTS ? res : LATCH_LAYOUT_SLOTS;
	return 0;
}

static int list(struct latch_remote *r)
{
	struct latch_remote_info info[LATCH_LAYOUT_SLOTS];
	int n;

	if (list_maps(r, info, &n))
		return 1;
	printf("%-32s %-6s %12s  %s\n", "NAME", "KIND", "ENTRIES", "FLAGS");
	for (int i = 0; i < n; i++)
		printf("%-32s %-6s %12" PRIu64 "  %s%s\n", info[i].name, kind_name(info[i].kind),
		       info[i].entries, info[i].flags & LATCH_PUBLISH_NAMES ? "names " : "",
		       info[i].flags & LATCH_PUBLISH_RESIDENT ? "resident" : "");
	return 0;
}

/* The name a value of a NAMES map points to, or "?" with the reason on stderr. */
static const char *value_name(struct latch_remote *r, uint64_t value, char *buf, size_t size)
{
	int res = latch_remote_read_name(r, value, buf, size);

	if (res >= 0 || res == -ENAMETOOLONG)
		return buf;
	snprintf(buf, size, "?(%s)", strerror(-res));
	return buf;
}

/* The published map called @name: its description, or 1 after saying why not. */
static int find_info(struct latch_remote *r, const char *name, struct latch_remote_info *out)
{
	struct latch_remote_info info[LATCH_LAYOUT_SLOTS];
	int n;

	if (list_maps(r, info, &n))
		return 1;
	for (int i = 0; i < n; i++) {
		if (strcmp(info[i].name, name) == 0) {
			*out = info[i];
			return 0;
		}
	}
	fprintf(stderr, "latch-inspect: process %s published no map called %s\n", pid_arg, name);
	return 1;
}

static int dump(struct latch_remote *r, const char *name)
{
	struct latch_remote_info info;
	char buf[256];
	uint64_t at = 0;
	int res;

	if (find_info(r, name, &info))
		return 1;
	for (;;) {
		struct latch_range range;
		uint64_t key, value;

		if (info.kind == LATCH_LAYOUT_KIND_RANGE) {
			res = latch_remote_range_ceil(r, name, at, &range);
			key = range.start;
			value = (uintptr_t)range.value;
		} else {
			res = latch_remote_map_ceil(r, name, at, &key, &value);
		}
		if (res <= 0)
			break;
		if (info.kind == LATCH_LAYOUT_KIND_RANGE)
			printf("%016" PRIx64 "-%016" PRIx64, key, (uint64_t)range.end);
		else
			printf("%016" PRIx64, key);
		if (info.flags & LATCH_PUBLISH_NAMES)
			printf(" %s\n", value_name(r, value, buf, sizeof(buf)));
		else
			printf(" %#" PRIx64 "\n", value);
		if (key == UINT64_MAX)
			break;
		at = key + 1;
	}
	return res < 0 ? fail(name, res) : 0;
}

static int resolve(struct latch_remote *r, const char *only, char **addrs, int n)
{
	struct latch_remote_info info[LATCH_LAYOUT_SLOTS];
	int maps, status = 0;
	char buf[256];

	if (list_maps(r, info, &maps))
		return 1;
	for (int a = 0; a < n; a++) {
		char *end;
		uint64_t addr = strtoull(addrs[a], &end, 16);
		bool found = false;

		if (*end || end == addrs[a]) {
			fprintf(stderr, "latch-inspect: %s is not a hex address\n", addrs[a]);
			return 1;
		}
		for (int i = 0; i < maps && !found; i++) {
			struct latch_range range;
			int res;

			if (info[i].kind != LATCH_LAYOUT_KIND_RANGE ||
			    (only && strcmp(only, info[i].name) != 0))
				continue;
			res = latch_remote_range_find(r, info[i].name, addr, &range);
			if (res < 0 && res != -ENOENT)
				return fail(info[i].name, res);
			if (res != 1)
				continue;
			found = true;
			printf("%016" PRIx64 " %s %016" PRIx64 "-%016" PRIx64 " ", addr,
			       info[i].name, (uint64_t)range.start, (uint64_t)range.end);
			if (info[i].flags & LATCH_PUBLISH_NAMES)
				printf("%s+%#" PRIx64 "\n",
				       value_name(r, (uintptr_t)range.value, buf, sizeof(buf)),
				       addr - range.start);
			else
				printf("%p\n", range.value);
		}
		if (!found) {
			printf("%016" PRIx64 " ?\n", addr);
			status = 2;
		}
	}
	return status;
}

static int perf_map(struct latch_remote *r, const char *only, const char *output)
{
	struct latch_remote_info info[LATCH_LAYOUT_SLOTS];
	char path[64], buf[256];
	long lines = 0;
	int maps, res = 0;
	FILE *f;

	if (list_maps(r, info, &maps))
		return 1;
	if (!output) {
		snprintf(path, sizeof(path), "/tmp/perf-%s.map", pid_arg);
		output = path;
	}
	f = fopen(output, "w");
	if (!f) {
		perror(output);
		return 1;
	}
	for (int i = 0; i < maps && res >= 0; i++) {
		uint64_t at = 0;
		struct latch_range range;

		if (info[i].kind != LATCH_LAYOUT_KIND_RANGE ||
		    !(info[i].flags & LATCH_PUBLISH_NAMES) ||
		    (only && strcmp(only, info[i].name) != 0))
			continue;
		/* perf's format: START SIZE name, hexadecimal without 0x. */
		while ((res = latch_remote_range_ceil(r, info[i].name, at, &range)) == 1) {
			fprintf(f, "%" PRIx64 " %" PRIx64 " %s\n", (uint64_t)range.start,
			        (uint64_t)(range.end - range.start),
			        value_name(r, (uintptr_t)range.value, buf, sizeof(buf)));
			lines++;
			if (range.start == UINTPTR_MAX)
				break;
			at = (uint64_t)range.start + 1;
		}
		if (res < 0)
			fail(info[i].name, res);
	}
	if (fclose(f) != 0) {
		perror(output);
		return 1;
	}
	fprintf(stderr, "latch-inspect: %ld symbols written to %s\n", lines, output);
	return res < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = { { "dump", required_argument, NULL, 'd' },
		                                 { "map", required_argument, NULL, 'm' },
		                                 { "resolve", no_argument, NULL, 'r' },
		                                 { "perf-map", no_argument, NULL, 'p' },
		                                 { "output", required_argument, NULL, 'o' },
		                                 { "help", no_argument, NULL, 'h' },
		                                 { NULL, 0, NULL, 0 } };
	const char *dump_name = NULL, *only = NULL, *output = NULL;
	bool want_resolve = false, want_perf = false;
	struct latch_remote *r;
	char *end;
	long pid;
	int opt, err, status;

	while ((opt = getopt_long(argc, argv, "d:m:rpo:h", options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dump_name = optarg;
			break;
		case 'm':
			only = optarg;
			break;
		case 'r':
			want_resolve = true;
			break;
		case 'p':
			want_perf = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind >= argc || (dump_name != NULL) + want_resolve + want_perf > 1 ||
	    (!want_resolve && optind + 1 != argc)) {
		fputs(usage, stderr);
		return 2;
	}
	pid_arg = argv[optind];
	pid = strtol(pid_arg, &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "latch-inspect: %s is not a process id\n", pid_arg);
		return 2;
	}
	err = latch_remote_attach((pid_t)pid, &r);
	if (err)
		return fail(pid_arg, err);
	if (dump_name)
		status = dump(r, dump_name);
	else if (want_resolve)
		status = resolve(r, only, argv + optind + 1, argc - optind - 1);
	else if (want_perf)
		status = perf_map(r, only, output);
	else
		status = list(r);
	latch_remote_detach(r);
	return status;
}
