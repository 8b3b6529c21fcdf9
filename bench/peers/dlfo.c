/* SPDX-License-Identifier: MIT */
/*
 * dlfo: glibc's real _dl_find_object() on this process's loaded objects,
 * and a latch range map holding the same objects, for workload 4's
 * side-by-side comparison.  Neither is updated during the measurement.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>

#include <latch/range.h>

#include "../bench.h"

struct dlfo_collect {
	long (*ranges)[2];
	size_t n, max;
};

/* The span of one object's PT_LOAD segments, kept if glibc knows it. */
static int dlfo_collect_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dlfo_collect *c = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	struct dl_find_object first, last;

	(void)size;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		lo = a < lo ? a : lo;
		hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
	}
	if (lo < hi && c->n < c->max && _dl_find_object((void *)lo, &first) == 0 &&
	    _dl_find_object((void *)(hi - 1), &last) == 0 &&
	    first.dlfo_map_start == last.dlfo_map_start) {
		c->ranges[c->n][0] = (long)lo;
		c->ranges[c->n++][1] = (long)hi;
	}
	return 0;
}

size_t bench_dlfo_objects(long (*ranges)[2], size_t max)
{
	struct dlfo_collect c = { ranges, 0, max };

	dl_iterate_phdr(dlfo_collect_one, &c);
	return c.n;
}

/* ---- glibc ---- */

static void *dlfo_create(size_t capacity)
{
	static char handle; /* nothing to allocate: glibc keeps the objects */

	(void)capacity;
	return &handle;
}

static void dlfo_destroy(void *peer)
{
	(void)peer;
}

static void dlfo_load(void *peer, const long *keys, size_t n)
{
	(void)peer, (void)keys, (void)n; /* the loader already loaded them */
}

static inline void *dlfo_find(long addr)
{
	struct dl_find_object r;

	return _dl_find_object((void *)addr, &r) == 0 ? r.dlfo_map_start : NULL;
}

BENCH_FIND_MANY(dlfo_find_many, char, ((void)p, dlfo_find(key)))

const struct bench_peer bench_peer_dlfo = {
	.name = "_dl_find_object",
	.create = dlfo_create,
	.destroy = dlfo_destroy,
	.load = dlfo_load,
	.find_many = dlfo_find_many,
};

/* ---- latch ---- */

struct dlfo_latch {
	struct latch_range_map map;
};

static void *dlfo_latch_create(size_t capacity)
{
	struct dlfo_latch *p = calloc(1, sizeof(*p));

	(void)capacity;
	if (p && latch_range_map_init(&p->map) != 0)
		abort();
	return p;
}

static void dlfo_latch_destroy(void *peer)
{
	struct dlfo_latch *p = peer;

	latch_range_map_destroy(&p->map);
	free(p);
}

static void dlfo_latch_load(void *peer, const long *keys, size_t n)
{
	struct dlfo_latch *p = peer;
	long ranges[64][2];
	size_t count = bench_dlfo_objects(ranges, 64);

	(void)keys, (void)n; /* the objects are the process's own */
	for (size_t i = 0; i < count; i++)
		if (latch_range_insert(&p->map, (uintptr_t)ranges[i][0], (uintptr_t)ranges[i][1], p,
		                       NULL) != 0)
			abort(); /* loaded objects never overlap */
}

BENCH_FIND_MANY(dlfo_latch_find_many, struct dlfo_latch,
                latch_range_find(&p->map, (uintptr_t)key, NULL) ? p : NULL)

const struct bench_peer bench_peer_dlfo_latch = {
	.name = "latch",
	.create = dlfo_latch_create,
	.destroy = dlfo_latch_destroy,
	.load = dlfo_latch_load,
	.find_many = dlfo_latch_find_many,
};
