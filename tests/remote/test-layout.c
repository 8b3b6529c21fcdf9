/* SPDX-License-Identifier: MIT */
/*
 * The published layout (<latch/layout.h>) against layout.expected, which
 * keeps the layout of every LATCH_LAYOUT_VERSION ever released: the
 * offsets and sizes of every field and the constants.  The test fails
 * when the layout of the current version differs from its stored one (a
 * change without a version bump) or when the current version has none
 * (bump it and append the new layout, keeping the old ones).
 *
 * test-layout EXPECTED [--mutant]: with --mutant it describes a layout
 * with one field moved, as a change without a bump would, and must fail.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <latch/layout.h>

#include "check.h"

static char listing[8192];
static size_t used;

#define LINE(...) (used += (size_t)snprintf(listing + used, sizeof(listing) - used, __VA_ARGS__))
#define FIELD(type, field)                                                                         \
	LINE(#type "." #field " %zu %zu\n", offsetof(struct type, field),                          \
	     sizeof(((struct type *)0)->field))

static void describe(int mutant)
{
	LINE("version %d\n", LATCH_LAYOUT_VERSION);
	LINE("registry_magic %#llx\n", (unsigned long long)LATCH_LAYOUT_REGISTRY_MAGIC);
	LINE("map_magic %#llx\n", (unsigned long long)LATCH_LAYOUT_MAP_MAGIC);
	LINE("slots %d name_max %d fanout %d key_width %d leaf_tag %d max_depth %d\n",
	     LATCH_LAYOUT_SLOTS, LATCH_LAYOUT_NAME_MAX, LATCH_LAYOUT_FANOUT, LATCH_LAYOUT_KEY_WIDTH,
	     LATCH_LAYOUT_LEAF_TAG, LATCH_LAYOUT_MAX_DEPTH);
	LINE("kind_map %d kind_range %d pad_repeat_last %d\n", LATCH_LAYOUT_KIND_MAP,
	     LATCH_LAYOUT_KIND_RANGE, LATCH_LAYOUT_PAD_REPEAT_LAST);
	LINE("latch_layout_registry %zu\n", sizeof(struct latch_layout_registry));
	FIELD(latch_layout_registry, magic);
	FIELD(latch_layout_registry, version);
	FIELD(latch_layout_registry, slots);
	FIELD(latch_layout_registry, sequence);
	FIELD(latch_layout_registry, reserved);
	FIELD(latch_layout_registry, table);
	LINE("latch_layout_map %zu\n", sizeof(struct latch_layout_map));
	FIELD(latch_layout_map, magic);
	FIELD(latch_layout_map, version);
	FIELD(latch_layout_map, kind);
	FIELD(latch_layout_map, flags);
	FIELD(latch_layout_map, fanout);
	FIELD(latch_layout_map, key_width);
	FIELD(latch_layout_map, slot_width);
	FIELD(latch_layout_map, count_width);
	FIELD(latch_layout_map, sequence_width);
	FIELD(latch_layout_map, inner_size);
	FIELD(latch_layout_map, leaf_size);
	FIELD(latch_layout_map, slots_offset);
	FIELD(latch_layout_map, ends_offset);
	FIELD(latch_layout_map, leaf_tag);
	FIELD(latch_layout_map, max_depth);
	FIELD(latch_layout_map, padding);
	if (mutant) /* node_align moved after sequence, the version unchanged */
		LINE("latch_layout_map.node_align 80 4\n");
	else
		FIELD(latch_layout_map, node_align);
	FIELD(latch_layout_map, sequence);
	FIELD(latch_layout_map, root);
	FIELD(latch_layout_map, entries);
	FIELD(latch_layout_map, height);
	FIELD(latch_layout_map, name);
}

int main(int argc, char **argv)
{
	static char file[65536], header[32];
	FILE *f;
	size_t len;
	const char *stored;

	CHECK(argc >= 2, "usage: test-layout EXPECTED [--mutant]");
	describe(argc > 2 && strcmp(argv[2], "--mutant") == 0);
	f = fopen(argv[1], "r");
	CHECK(f, "cannot open %s", argv[1]);
	len = fread(file, 1, sizeof(file) - 1, f);
	fclose(f);
	file[len] = '\0';
	/* Each version's block starts with its "version N" line and ends at a blank line. */
	snprintf(header, sizeof(header), "version %d\n", LATCH_LAYOUT_VERSION);
	stored = strstr(file, header);
	while (stored && stored != file && stored[-1] != '\n')
		stored = strstr(stored + 1, header);
	if (!stored) {
		fprintf(stderr,
		        "FAIL: %s has no layout for version %d: append this block (and keep the "
		        "older ones):\n\n%s\n",
		        argv[1], LATCH_LAYOUT_VERSION, listing);
		return 1;
	}
	const char *end = strstr(stored, "\n\n");
	size_t stored_len = end ? (size_t)(end - stored) + 1 : strlen(stored);

	if (stored_len != used || memcmp(stored, listing, used) != 0) {
		fprintf(
		    stderr,
		    "FAIL: the layout changed but LATCH_LAYOUT_VERSION is still %d.  Raise it "
		    "(include/latch/layout.h), describe the change in latch_layout(7) and append "
		    "the new layout to %s.  Layout now:\n\n%s\n",
		    LATCH_LAYOUT_VERSION, argv[1], listing);
		return 1;
	}
	printf("layout version %d: as stored in %s\n", LATCH_LAYOUT_VERSION, argv[1]);
	return 0;
}
