/* SPDX-License-Identifier: MIT */
/*
 * A ThreadSanitizer user of the installed, uninstrumented liblatch: built
 * with -fsanitize=thread, it runs a writer thread that initialises
 * elements and objects and inserts and erases them in a tree, a range
 * map and a map, and reader threads that look them up and read every
 * field.  ThreadSanitizer must report nothing: the publication happens
 * inside the library, which it cannot see unless the library tells it.
 *
 * The tree's readers and the maps' readers are separate threads: a
 * thread that reads the tree synchronizes with the writer through the
 * tree's elements, which would hide a missing publication of the maps'
 * values (the writer initialises a blob before it inserts the tree's
 * element of the same round).
 *
 * Elements are never reused while readers run (erased ones wait for the
 * end of the run, standing in for a grace period).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <latch/map.h>
#include <latch/range.h>
#include <latch/tree.h>

#define KEYS    64   /* keys the writer cycles through */
#define ROUNDS  3000 /* inserts (and erases) per structure */
#define READERS 2    /* of the tree, and as many of the range map and map */

struct item {
	long key, payload; /* payload = key * 3, written before the insert */
	struct latch_tree_node node;
};

struct blob {
	uintptr_t start, end; /* the range it is mapped at; it is the range's value */
	long id;              /* and the key it is the map's value of */
};

static struct latch_tree_root tree = LATCH_TREE_ROOT_INIT;
static pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER; /* the tree's writers */
static struct latch_range_map ranges;
static struct latch_map map;
static struct item *items[ROUNDS];
static struct blob *blobs[ROUNDS];
static int done;

static struct item *item_of(const struct latch_tree_node *n)
{
	return n ? latch_tree_entry(n, struct item, node) : NULL;
}

static bool item_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return item_of(a)->key < item_of(b)->key;
}

static int item_comp(const void *key, const struct latch_tree_node *n)
{
	long k = *(const long *)key, nk = item_of(n)->key;

	return (k > nk) - (k < nk);
}

static const struct latch_tree_ops item_ops = { item_less, item_comp };

static void fail(const char *what)
{
	fprintf(stderr, "tsan-consumer: %s\n", what);
	exit(1);
}

static void *writer(void *arg)
{
	(void)arg;
	for (long i = 0; i < ROUNDS; i++) {
		long key = i % KEYS;
		struct item *it = (struct item *)malloc(sizeof(*it));
		struct blob *b = (struct blob *)malloc(sizeof(*b));

		if (!it || !b)
			fail("out of memory");
		/* Every field, links included, written here, then published by the library. */
		*it = (struct item){ key,
			             key * 3,
			             { { { { NULL, NULL }, 0 }, { { NULL, NULL }, 0 } } } };
		*b = (struct blob){ (uintptr_t)(key * 16), (uintptr_t)(key * 16 + 8), key };
		items[i] = it;
		blobs[i] = b;
		pthread_mutex_lock(&tree_lock);
		latch_tree_insert(&tree, &it->node, &item_ops);
		pthread_mutex_unlock(&tree_lock);
		if (latch_range_insert(&ranges, b->start, b->end, b, NULL) != 0)
			fail("range insert");
		if (latch_map_insert(&map, (uint64_t)key, b) != 0)
			fail("map insert");
		if (i >= KEYS / 2) { /* keep about KEYS / 2 of each in the structures */
			pthread_mutex_lock(&tree_lock);
			latch_tree_erase(&tree, &items[i - KEYS / 2]->node, &item_ops);
			pthread_mutex_unlock(&tree_lock);
			if (latch_range_erase(&ranges, blobs[i - KEYS / 2]->start) != 0)
				fail("range erase");
			if (latch_map_erase(&map, (uint64_t)blobs[i - KEYS / 2]->id) != 0)
				fail("map erase");
		}
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Looks items up in the tree and walks it; returns whether it saw one. */
static void *tree_reader(void *arg)
{
	long seen = 0, key = (long)(uintptr_t)arg;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		struct item *it = item_of(latch_tree_find(&tree, &key, &item_ops));

		if (it && (it->key != key || it->payload != key * 3))
			fail("a found item has the wrong fields");
		/* A walk reads every element's key and links. */
		for (struct latch_tree_node *n = latch_tree_first(&tree); n;
		     n = latch_tree_next(&tree, n, &item_ops))
			seen += item_of(n)->payload == item_of(n)->key * 3;
		key = (key + 7) % KEYS;
	}
	return (void *)(uintptr_t)(seen > 0);
}

/* Looks blobs up in the range map and the map; returns whether it found one. */
static void *map_reader(void *arg)
{
	long seen = 0, key = (long)(uintptr_t)arg;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		struct latch_range r;
		void *value;

		if (latch_range_find(&ranges, (uintptr_t)(key * 16 + 4), &r)) {
			if (((const struct blob *)r.value)->id != key)
				fail("a found range has the wrong id");
			seen++;
		}
		if (latch_map_find(&map, (uint64_t)key, &value)) {
			if (((const struct blob *)value)->id != key)
				fail("a found map value has the wrong id");
			seen++;
		}
		key = (key + 7) % KEYS;
	}
	return (void *)(uintptr_t)(seen > 0);
}

int main(void)
{
	pthread_t w, r[2 * READERS];
	void *saw;
	long total = 0;

	if (latch_range_map_init(&ranges) != 0 || latch_map_init(&map) != 0)
		fail("map init");
	for (long i = 0; i < 2 * READERS; i++)
		if (pthread_create(&r[i], NULL, i < READERS ? tree_reader : map_reader,
		                   (void *)(uintptr_t)i) != 0)
			fail("pthread_create");
	if (pthread_create(&w, NULL, writer, NULL) != 0)
		fail("pthread_create");
	pthread_join(w, NULL);
	for (long i = 0; i < 2 * READERS; i++) {
		pthread_join(r[i], &saw);
		total += saw != NULL;
	}
	for (long i = 0; i < ROUNDS; i++) {
		free(items[i]);
		free(blobs[i]);
	}
	latch_map_destroy(&map);
	latch_range_map_destroy(&ranges);
	printf("tsan-consumer: %d rounds, %ld of %d readers found elements or values, no report\n",
	       ROUNDS, total, 2 * READERS);
	return 0;
}
