/* SPDX-License-Identifier: MIT */
/*
 * symbolize: resolve program counters to libc's functions from a
 * profiling signal handler, while a writer thread keeps changing the map.
 *
 * The function symbols of libc's own dynamic symbol table (found through
 * dl_iterate_phdr(); STT_FUNC with a size) are sorted, aliases and
 * overlaps dropped (the first of a start wins: the largest, then the
 * first name by strcmp), and bulk-loaded into a range map.  A writer
 * thread then erases and re-inserts symbols, one at a time or as
 * one-batch replacements, while SIGPROF (setitimer(ITIMER_PROF)) lands on
 * whichever thread is running, the writer included: the handler resolves
 * random addresses and checks every answer against the program's own
 * sorted array.  One line of summary; exit status 0 when every answer was
 * right, 77 (skipped) when libc's symbols cannot be read.
 *
 * Usage: symbolize [seconds]   (default 1: the least CPU time to run)
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <latch/atomic.h>
#include <latch/range.h>

struct sym {
	uintptr_t start, end;
	const char *name;
};

static struct sym *syms; /* sorted by start, not overlapping */
static size_t nsyms;
static struct latch_range_map map;

/* The writer's state, as a handler sees it: updates (odd while one is under way) and its symbol. */
static unsigned long updates;
static long busy = -1;
/* What the handlers did; relaxed atomics, lock-free, so async-signal-safe. */
static unsigned long lookups, mid_update, wrong;
static uintptr_t wrong_addr;
static int stop;

/* ---- libc's function symbols ---- */

/* An address from the dynamic section: glibc relocates most entries in place, not all. */
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return (const void *)(p < info->dlpi_addr ? info->dlpi_addr + p : p);
}

/* Symbols in a DT_GNU_HASH table: one past the highest index of any chain. */
static size_t gnu_hash_count(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
	const uint32_t *buckets = h + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;

	for (uint32_t b = 0; b < nbuckets; b++)
		last = buckets[b] > last ? buckets[b] : last;
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the largest first */
	return strcmp(x->name, y->name);
}

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	size_t count = 0;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *d =
		         (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		     d->d_tag != DT_NULL; d++) {
			if (d->d_tag == DT_SYMTAB)
				symtab = dyn_ptr(info, d->d_un.d_ptr);
			else if (d->d_tag == DT_STRTAB)
				strtab = dyn_ptr(info, d->d_un.d_ptr);
			else if (d->d_tag == DT_HASH)
				count = ((const uint32_t *)dyn_ptr(info, d->d_un.d_ptr))[1];
			else if (d->d_tag == DT_GNU_HASH && !count)
				count = gnu_hash_count(dyn_ptr(info, d->d_un.d_ptr));
		}
	}
	if (!symtab || !strtab || !count)
		return 0;
	syms = malloc(count * sizeof(*syms));
	if (!syms)
		return 0;
	for (size_t i = 0; i < count; i++) {
		const ElfW(Sym) *s = &symtab[i];

		if (ELF32_ST_TYPE(s->st_info) == STT_FUNC && s->st_size > 0 &&
		    s->st_shndx != SHN_UNDEF)
			syms[nsyms++] = (struct sym){ info->dlpi_addr + s->st_value,
				                      info->dlpi_addr + s->st_value + s->st_size,
				                      strtab + s->st_name };
	}
	*(const char **)data = info->dlpi_name;
	return 1;
}

/* ---- the readers: a signal handler on whichever thread runs ---- */

static _Thread_local unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned long long next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Look up one address and check the answer: @i is its symbol, or -1 in a gap. */
static void check(uintptr_t addr, long i)
{
	/* Acquire: orders the loads below after the writer's stores before its flips. */
	unsigned long before = __atomic_load_n(&updates, __ATOMIC_ACQUIRE);
	long b = __atomic_load_n(&busy, __ATOMIC_ACQUIRE);
	struct latch_range r;
	bool hit = latch_range_find(&map, addr, &r);
	/* Acquire fence, then the count: did an update start or end meanwhile? */
	unsigned long after;

	/* latch/atomic.h's fence: it builds under gcc's -fsanitize=thread -Werror (-Wtsan). */
	LATCH_FENCE_ACQUIRE();
	after = __atomic_load_n(&updates, __ATOMIC_RELAXED);
	__atomic_fetch_add(&lookups, 1, __ATOMIC_RELAXED);
	if (before & 1)
		__atomic_fetch_add(&mid_update, 1, __ATOMIC_RELAXED);
	if (hit ? i < 0 || r.start != syms[i].start || r.end != syms[i].end ||
	              r.value != syms[i].name
	        : i >= 0 && before == after && !((before & 1) && b == i)) {
		__atomic_store_n(&wrong_addr, addr, __ATOMIC_RELAXED);
		__atomic_fetch_add(&wrong, 1, __ATOMIC_RELAXED);
	}
}

static void on_prof(int sig)
{
	int saved = errno;

	(void)sig;
	for (int k = 0; k < 8; k++) {
		long i = (long)(next_random() % nsyms);
		uintptr_t len = syms[i].end - syms[i].start;

		check(syms[i].start + (uintptr_t)(next_random() % len), i);
		/* Just past it: a gap, unless the next symbol starts there. */
		check(syms[i].end,
		      i + 1 < (long)nsyms && syms[i + 1].start == syms[i].end ? i + 1 : -1);
	}
	errno = saved;
}

/* ---- the writer ---- */

static void *writer(void *arg)
{
	unsigned long long state = 0x2545f4914f6cdd1dull;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		long i;
		const struct sym *s;

		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		i = (long)(state % nsyms);
		s = &syms[i];
		/* Release: a handler that sees the count odd sees busy too. */
		__atomic_store_n(&busy, state % 4 ? i : -1L, __ATOMIC_RELEASE);
		__atomic_fetch_add(&updates, 1, __ATOMIC_ACQ_REL);
		if (state % 4) { /* erase, then insert again: briefly absent */
			if (latch_range_erase(&map, s->start) != 0 ||
			    latch_range_insert(&map, s->start, s->end, (void *)s->name, NULL) != 0)
				abort();
		} else { /* one batch: readers find the symbol throughout */
			const struct latch_range_change swap[2] = {
				{ LATCH_RANGE_ERASE, { s->start, 0, NULL } },
				{ LATCH_RANGE_INSERT, { s->start, s->end, (void *)s->name } },
			};

			if (latch_range_commit(&map, swap, 2, NULL) != 0)
				abort();
		}
		__atomic_fetch_add(&updates, 1, __ATOMIC_ACQ_REL);
	}
	return NULL;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, t0;
	const char *libc = NULL;
	struct itimerval every = { { 0, 1000 }, { 0, 1000 } }; /* 1 ms of CPU time */
	struct sigaction sa;
	struct latch_range *ranges, r;
	size_t kept = 0, failed = 0, first_bad = 0, walked = 0;
	pthread_t thread;
	int err;

	dl_iterate_phdr(collect, &libc);
	if (nsyms < 16) {
		printf("symbolize: skipped: no function symbols found in libc's .dynsym "
		       "(libc %s)\n",
		       libc ? libc : "not found by dl_iterate_phdr");
		return 77;
	}
	/* Sorted; an alias or overlap of the symbol kept before it is dropped. */
	qsort(syms, nsyms, sizeof(*syms), by_start);
	ranges = malloc(nsyms * sizeof(*ranges));
	if (!ranges || latch_range_map_init(&map) != 0)
		return 1;
	for (size_t i = 0; i < nsyms; i++)
		ranges[i] =
		    (struct latch_range){ syms[i].start, syms[i].end, (void *)syms[i].name };
	for (size_t i = 1; i < nsyms && !first_bad; i++)
		if (syms[i].start < syms[i - 1].end)
			first_bad = i;
	/* The map reports the same first overlap, and stays empty. */
	err = latch_range_load_sorted(&map, ranges, nsyms, &failed);
	if (first_bad ? err != -EEXIST || failed != first_bad : err != 0) {
		printf("symbolize: load_sorted of the raw symbols: %d at %zu, expected the overlap "
		       "at %zu\n",
		       err, failed, first_bad);
		return 1;
	}
	for (size_t i = 0; i < nsyms; i++)
		if (!kept || syms[i].start >= syms[kept - 1].end)
			syms[kept++] = syms[i];
	for (size_t i = 0; i < kept; i++)
		ranges[i] =
		    (struct latch_range){ syms[i].start, syms[i].end, (void *)syms[i].name };
	if (latch_range_load_sorted(&map, ranges, kept, &failed) != 0)
		return 1;
	free(ranges);
	for (bool more = latch_range_first(&map, &r); more;
	     more = latch_range_next(&map, r.start, &r))
		if (walked >= kept || r.start != syms[walked++].start)
			return 1;
	if (walked != kept || latch_range_size(&map) != kept)
		return 1;
	printf("symbolize: %zu function symbols of %s, %zu aliases or overlaps dropped\n", kept,
	       libc, nsyms - kept);
	nsyms = kept;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) || pthread_create(&thread, NULL, writer, NULL))
		return 1;
	setitimer(ITIMER_PROF, &every, NULL);
	/* This thread spins too, so the handler lands on both threads. */
	t0 = cpu_seconds();
	while (cpu_seconds() - t0 < seconds ||
	       __atomic_load_n(&mid_update, __ATOMIC_RELAXED) < 16) {
		if (cpu_seconds() - t0 > 60 * seconds)
			break;
	}
	memset(&every, 0, sizeof(every));
	setitimer(ITIMER_PROF, &every, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	latch_range_map_destroy(&map);

	printf("symbolize: %lu lookups in SIGPROF handlers (%lu while an update was under way), "
	       "%lu updates: %s\n",
	       lookups, mid_update, updates / 2, wrong ? "WRONG" : "every answer right");
	if (wrong)
		printf("symbolize: %lu wrong answers, the last at %#lx\n", wrong,
		       (unsigned long)wrong_addr);
	return wrong || !lookups ? 1 : 0;
}
