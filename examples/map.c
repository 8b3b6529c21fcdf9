/* SPDX-License-Identifier: MIT */
/*
 * map: a symbol table for a profiler.  Function start addresses map to
 * their names; the profiler's signal handler asks "which function holds
 * this address?" (the greatest start <= address) while the main thread
 * loads and unloads code.  The handler never waits, even when it
 * interrupted an update.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <latch/map.h>

static struct latch_map symbols;
static volatile sig_atomic_t samples, misses;
static volatile uint64_t sample_pc = 0x1010;

/* The profiler's tick: resolve the sampled address, in signal context. */
static void on_sample(int sig)
{
	uint64_t start;
	void *name;

	(void)sig;
	samples++;
	if (!latch_map_floor(&symbols, sample_pc, &start, &name))
		misses++;
}

static const char *symbolize(uint64_t pc)
{
	uint64_t start;
	void *name;

	return latch_map_floor(&symbols, pc, &start, &name) ? name : "?";
}

int main(void)
{
	static const uint64_t starts[] = { 0x1000, 0x1080, 0x1200, 0x2000 };
	static void *const names[] = { "main", "parse", "eval", "print" };
	struct latch_map_change plugin[] = {
		{ LATCH_MAP_INSERT, 0x9000, "plugin_init" },
		{ LATCH_MAP_INSERT, 0x9100, "plugin_run" },
		{ LATCH_MAP_REPLACE, 0x2000, "print_fast" },
	};
	struct sigaction sa;
	int wrong = 0;

	if (latch_map_init(&symbols) != 0 || latch_map_load_sorted(&symbols, starts, names, 4) != 0)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sample;
	sigaction(SIGPROF, &sa, NULL);

	/* Load a plugin: both symbols and a patched function appear at once. */
	raise(SIGPROF);
	if (latch_map_commit(&symbols, plugin, 3, NULL) != 0)
		return 1;
	raise(SIGPROF);
	wrong |= strcmp(symbolize(0x1234), "eval") != 0;
	wrong |= strcmp(symbolize(0x2010), "print_fast") != 0;
	wrong |= strcmp(symbolize(0x9150), "plugin_run") != 0;
	wrong |= strcmp(symbolize(0x0fff), "?") != 0;
	printf("0x1234 is in %s, 0x9150 in %s, %zu symbols\n", symbolize(0x1234), symbolize(0x9150),
	       latch_map_size(&symbols));

	/* Walk the table in address order. */
	uint64_t pc;
	void *name;
	for (bool ok = latch_map_first(&symbols, &pc, &name); ok;
	     ok = latch_map_next(&symbols, pc, &pc, &name))
		printf("  %#llx %s\n", (unsigned long long)pc, (const char *)name);

	/* Unload the plugin. */
	if (latch_map_erase(&symbols, 0x9000) != 0 || latch_map_erase(&symbols, 0x9100) != 0)
		return 1;
	wrong |= strcmp(symbolize(0x9150), "print_fast") != 0; /* the last function before it */
	wrong |= samples != 2 || misses != 0;
	latch_map_destroy(&symbols);
	if (wrong)
		fprintf(stderr, "map: a lookup was wrong\n");
	return wrong;
}
