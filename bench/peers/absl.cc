// SPDX-License-Identifier: MIT
/*
 * absl-flat, absl-btree: abseil's absl::flat_hash_map<uint64_t, void *>
 * (a SwissTable: open addressing, 16 control bytes probed at once) and
 * absl::btree_map<uint64_t, void *> (a B-tree of 256-byte nodes), the
 * hash map and the ordered map C++ programs reach for.  Neither may be
 * read while it is written: single thread only, like plain.  Each slot's
 * value is the address of its pool entry, as in latch-map.  The hash map
 * reserves the whole pool up front, so it never grows during a run (an
 * insert may still rehash it in place to drop what erases left behind).
 */
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <new>

#include <absl/container/btree_map.h>
#include <absl/container/flat_hash_map.h>

#include "../bench.h"

namespace
{

using flat_map = absl::flat_hash_map<uint64_t, void *>;
using btree_map = absl::btree_map<uint64_t, void *>;

template <class Map> struct absl_peer {
	Map map;
	long *pool = nullptr; // slot i holds its key
};

using flat_peer = absl_peer<flat_map>;
using btree_peer = absl_peer<btree_map>;

void reserve(flat_map &map, size_t n)
{
	map.reserve(n);
}

void reserve(btree_map &, size_t)
{
}

// The driver is C: an exception cannot cross it, so running out of memory aborts (noexcept).
template <class Map> void *absl_create(size_t capacity) noexcept
{
	auto *p = new absl_peer<Map>();

	p->pool = static_cast<long *>(calloc(capacity ? capacity : 1, sizeof(*p->pool)));
	if (!p->pool) {
		delete p;
		return nullptr;
	}
	reserve(p->map, capacity);
	return p;
}

template <class Map> void absl_destroy(void *peer) noexcept
{
	auto *p = static_cast<absl_peer<Map> *>(peer);

	free(p->pool);
	delete p;
}

template <class Map> void absl_insert(void *peer, size_t slot, long key) noexcept
{
	auto *p = static_cast<absl_peer<Map> *>(peer);

	p->pool[slot] = key;
	if (!p->map.emplace(static_cast<uint64_t>(key), &p->pool[slot]).second)
		abort(); // a duplicate: the driver's keys are wrong
}

template <class Map> void absl_erase(void *peer, size_t slot) noexcept
{
	auto *p = static_cast<absl_peer<Map> *>(peer);

	if (p->map.erase(static_cast<uint64_t>(p->pool[slot])) != 1)
		abort(); // a driver error
}

// The value of @key, or NULL.
template <class Map> inline const void *absl_find(const absl_peer<Map> *p, long key)
{
	auto it = p->map.find(static_cast<uint64_t>(key));

	return it == p->map.end() ? nullptr : it->second;
}

// The value of the greatest key <= @key, or NULL.
inline const void *absl_floor(const btree_peer *p, long key)
{
	auto it = p->map.upper_bound(static_cast<uint64_t>(key));

	return it == p->map.begin() ? nullptr : std::prev(it)->second;
}

BENCH_FIND_MANY(flat_find_many, flat_peer, absl_find(p, key))
BENCH_FIND_MANY(btree_find_many, btree_peer, absl_find(p, key))
BENCH_FIND_MANY(btree_floor_many, btree_peer, absl_floor(p, key))

using find_fn = void (*)(void *, const long *, size_t, struct bench_tally *);

// The table entry of the peer over @Map (C++17 has no designated initializers).
template <class Map>
constexpr bench_peer absl_peer_entry(const char *name, unsigned flags, find_fn find, find_fn floor)
{
	bench_peer peer{};

	peer.name = name;
	peer.flags = flags | BENCH_ANSWER_KEY;
	peer.create = absl_create<Map>;
	peer.destroy = absl_destroy<Map>;
	peer.insert = absl_insert<Map>;
	peer.erase = absl_erase<Map>;
	peer.find_many = find;
	peer.floor_many = floor;
	return peer;
}

} // namespace

extern "C" const struct bench_peer bench_peer_absl_flat =
    absl_peer_entry<flat_map>("absl-flat", BENCH_HASH, flat_find_many, nullptr);
extern "C" const struct bench_peer bench_peer_absl_btree =
    absl_peer_entry<btree_map>("absl-btree", 0, btree_find_many, btree_floor_many);
