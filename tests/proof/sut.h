/* SPDX-License-Identifier: MIT */
/*
 * A "structure under test": the small table of operations every proof
 * harness (single-step, signal storm, linearizability, mutants) drives, so
 * one harness checks the latch tree, the seqlock peer and the deliberately
 * broken variants alike, and later latched structures join by adding an
 * entry.
 *
 * A structure holds keys 0 .. keys-1, each at most once; insert and erase
 * are called only for an absent / present key.  Lookups answer with the
 * key of the element they found (read from the element itself, so a wrong
 * element shows up as a wrong key) or SUT_ABSENT.
 *
 * The read side is also offered split into one attempt (read_begin,
 * read_attempt, read_retry), so a harness can check that an attempt is
 * right on its first try, or replay a reader that started earlier.
 * Structures without a latch leave those members NULL.
 */
#ifndef LATCH_PROOF_SUT_H
#define LATCH_PROOF_SUT_H

#include <stdbool.h>
#include <stddef.h>

/* A lookup's answer when it found no element. */
#define SUT_ABSENT (-1L)

struct sut_ops {
	const char *name;
	/* bytes of state for @keys keys (the harness places it, e.g. in shared memory) */
	size_t (*size)(long keys);
	/* make @s an empty structure for keys 0 .. @keys-1; before sharing */
	void (*init)(void *s, long keys);
	/* writer only, serialized */
	void (*insert)(void *s, long key);
	void (*erase)(void *s, long key);
	/* any context: the structure's complete lookup */
	long (*find)(const void *s, long key);
	/* one read attempt, split; NULL for structures without a latch */
	unsigned (*read_begin)(const void *s);
	long (*read_attempt)(const void *s, unsigned start, long key);
	bool (*read_retry)(const void *s, unsigned start);
	/* number of copies, and a raw descent of copy @idx counting its @steps */
	unsigned copies;
	long (*descend)(const void *s, unsigned idx, long key, unsigned *steps);
	/*
	 * true when an update rewrites only the idle copy and replays nothing
	 * onto the other (the latched value): that copy then holds the state
	 * before the previous update, so only the copy readers are on has a
	 * raw descent to check.
	 */
	bool idle_copy_lags;
	/*
	 * Optional: called by a writer that runs in a process forked after
	 * init(), before its first update, for a structure that makes itself
	 * that process's own on the first writer call there (the range map
	 * after fork(); test-range-fork checks that step), so that the
	 * harness's own fork does not make it part of the first update.
	 */
	void (*writer_start)(void *s);
};

/*
 * The table of a latched structure whose functions are named after one
 * prefix: PREFIX_size, _init, _insert, _erase, _find, _read_begin,
 * _attempt, _read_retry and _descend, over two copies.
 */
#define SUT_LATCHED_OPS(name_, prefix)                                                             \
	{                                                                                          \
		.name = (name_), .size = prefix##_size, .init = prefix##_init,                     \
		.insert = prefix##_insert, .erase = prefix##_erase, .find = prefix##_find,         \
		.read_begin = prefix##_read_begin, .read_attempt = prefix##_attempt,               \
		.read_retry = prefix##_read_retry, .copies = 2, .descend = prefix##_descend,       \
	}

/* The latch tree, the seqlock peer and the deliberately broken trees (mutants.c). */
extern const struct sut_ops sut_latch_tree, sut_seqlock_tree;
extern const struct sut_ops sut_mutant_wrong_copy, sut_mutant_skip_retry, sut_mutant_flip_first,
    sut_mutant_readers_copy;
/* The other latched structures (sut-range.c, sut-value.c, sut-map.c). */
extern const struct sut_ops sut_range_map, sut_range_payload, sut_latched_value, sut_latch_map,
    sut_latch_map_batch;
/* A complete lookup written out of a structure's split read side (for the mutants). */
long sut_find_by_attempts(const struct sut_ops *ops, const void *s, long key);
/* The skip-retry bug (mutants.c): a read retry that never discards an attempt. */
bool sut_never_retry(const void *s, unsigned start);

/* Broken maps (sut-map.c), which the harnesses must catch like the tree mutants. */
extern const struct sut_ops sut_mutant_map_wrong_copy, sut_mutant_map_skip_retry;

/*
 * Node memory for the B+-tree structures (sut-map.c, sut-range.c): their
 * nodes come from the structure's own bytes, so a structure lives
 * wherever the harness put it (a MAP_SHARED arena for the single-step
 * harness).  sut_arena_run() runs @fn with every allocation of the tree
 * core served from @a; sut_arena_bytes() is the room @keys keys need with
 * leaves of @leaf_size bytes.
 */
struct sut_arena {
	size_t used, room;
	unsigned char *heap;
};
void sut_arena_run(struct sut_arena *a, void (*fn)(void *ctx), void *ctx);
size_t sut_arena_bytes(long keys, size_t leaf_size);

/* The structure named @name (any of the above), or NULL. */
const struct sut_ops *sut_by_name(const char *name);

/* Print the names sut_by_name() knows to stderr. */
void sut_list(void);

#endif /* LATCH_PROOF_SUT_H */
