/* SPDX-License-Identifier: MIT */
/*
 * urcu-lfht: liburcu's RCU lock-free resizable hash table (flavour memb),
 * exact-key lookups only.  Used as liburcu documents it: readers inside
 * rcu_read_lock(), the writer allocates on insert and frees an erased
 * element through call_rcu() after a grace period.
 */
#define _LGPL_SOURCE
#include <stdlib.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "../bench.h"

struct lfht_elem {
	long key;
	struct cds_lfht_node node;
	struct rcu_head rcu;
};

struct lfht_peer {
	struct cds_lfht *ht;
	struct lfht_elem **slots; /* the element slot i is in the table as, or NULL */
	size_t capacity;
};

static int lfht_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct lfht_elem, node)->key == *(const long *)key;
}

static void lfht_reader_enter(void)
{
	urcu_memb_register_thread();
}

static void lfht_reader_exit(void)
{
	urcu_memb_unregister_thread();
}

static void *lfht_create(size_t capacity)
{
	struct lfht_peer *p = calloc(1, sizeof(*p));
	unsigned long buckets = 1;

	if (!p)
		return NULL;
	while (buckets < capacity)
		buckets <<= 1;
	p->capacity = capacity;
	p->slots = calloc(capacity ? capacity : 1, sizeof(*p->slots));
	p->ht = cds_lfht_new_flavor(buckets, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
	                            &urcu_memb_flavor, NULL);
	if (!p->slots || !p->ht) {
		free(p->slots);
		free(p);
		return NULL;
	}
	/* The driver's thread is the writer: liburcu wants it registered. */
	urcu_memb_register_thread();
	return p;
}

static void lfht_free_elem(struct rcu_head *head)
{
	free(caa_container_of(head, struct lfht_elem, rcu));
}

static void lfht_insert(void *peer, size_t slot, long key)
{
	struct lfht_peer *p = peer;
	struct lfht_elem *e = malloc(sizeof(*e));

	if (!e)
		abort(); /* out of memory: the measurement would be meaningless */
	e->key = key;
	cds_lfht_node_init(&e->node);
	urcu_memb_read_lock();
	cds_lfht_add(p->ht, bench_hash(key), &e->node);
	urcu_memb_read_unlock();
	p->slots[slot] = e;
}

static void lfht_erase(void *peer, size_t slot)
{
	struct lfht_peer *p = peer;
	struct lfht_elem *e = p->slots[slot];

	urcu_memb_read_lock();
	cds_lfht_del(p->ht, &e->node);
	urcu_memb_read_unlock();
	p->slots[slot] = NULL;
	urcu_memb_call_rcu(&e->rcu, lfht_free_elem);
}

static void lfht_destroy(void *peer)
{
	struct lfht_peer *p = peer;

	for (size_t i = 0; i < p->capacity; i++)
		if (p->slots[i])
			lfht_erase(p, i);
	urcu_memb_barrier(); /* every call_rcu() callback has run */
	cds_lfht_destroy(p->ht, NULL);
	urcu_memb_unregister_thread();
	free(p->slots);
	free(p);
}

static inline struct cds_lfht_node *lfht_find(struct lfht_peer *p, long key)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;

	urcu_memb_read_lock();
	cds_lfht_lookup(p->ht, bench_hash(key), lfht_match, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	urcu_memb_read_unlock();
	return node; /* compared with NULL only: never dereferenced after unlock */
}

BENCH_FIND_MANY(lfht_find_many, struct lfht_peer, lfht_find(p, key))

const struct bench_peer bench_peer_urcu_lfht = {
	.name = "urcu-lfht",
	.flags = BENCH_SHARED | BENCH_HASH,
	.create = lfht_create,
	.destroy = lfht_destroy,
	.insert = lfht_insert,
	.erase = lfht_erase,
	.find_many = lfht_find_many,
	.reader_enter = lfht_reader_enter,
	.reader_exit = lfht_reader_exit,
};
