/* SPDX-License-Identifier: MIT */
/*
 * The reader of another process's published maps (<latch/remote.h>):
 * the target's memory is read with process_vm_readv(2), which returns an
 * error instead of faulting, and everything read is validated before it
 * is used, so a hostile target can make a lookup fail but not misbehave.
 *
 * Ordering.  In the target, the writer's flip is a release store of the
 * counter followed by a release fence (latch_seq_write_flip()), and a
 * copy is changed only while the counter names the other one.  Here each
 * read is a separate system call, and the kernel copies the target's
 * memory after pinning its pages under the target's mmap lock: every
 * call's loads happen after the previous call returned and the next
 * call's loads after this one's.  A count read in one call therefore
 * precedes every load of the later calls, which precede the count read in
 * the last call, as the acquire load and the acquire fence order a local
 * reader's loads; and if both counts are equal, no flip happened between
 * them, so the copy they name was not changed while it was read.  The
 * count that ends one lookup starts the next lookup of the same map, so
 * an attempt costs height + 2 calls: the root and the height, a node per
 * level, the count (read together with the registry's count, which says
 * whether the descriptors cached here still stand).
 *
 * Mutants for the tests: LATCH_REMOTE_MUTANT=1 walks the copy the writer
 * changes ((count & 1) ^ 1); =2 never compares the counts, so it keeps
 * attempts a flip overlapped.  tests/remote builds them into libraries of
 * their own and checks that the tests catch them.
 */
#define _GNU_SOURCE 1 /* process_vm_readv() */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <latch/remote.h>

#include "remote-private.h"

#ifndef LATCH_REMOTE_MUTANT
#define LATCH_REMOTE_MUTANT 0
#endif

/* The largest node this reader accepts (a range map's leaf is 384 bytes on 64-bit targets). */
#define NODE_MAX 4096u

/* A published map as read from its descriptor, validated. */
struct rmap {
	uint64_t addr;             /* of the descriptor */
	struct latch_layout_map d; /* its contents */
	uint32_t seq;              /* the last count read of the map's counter */
	bool seq_known;
};

struct latch_remote {
	pid_t pid;
	uint64_t registry; /* its address in the target */
	bool cached;       /* maps[] is the registry as it was at count reg_seq */
	uint32_t reg_seq;
	unsigned nmaps;
	struct rmap maps[LATCH_LAYOUT_SLOTS];
	uint64_t calls; /* process_vm_readv() calls made */
};

uint64_t latch_remote_calls_(const struct latch_remote *r)
{
	return r->calls;
}

/* ---- reading the target ---- */

/* The error of a failed process_vm_readv() (@err: its errno). */
static int read_error(int err)
{
	switch (err) {
	case ESRCH:
	case EINVAL: /* the process is exiting: it has no memory left */
		return -ESRCH;
	case EPERM:
	case EACCES:
		return -EPERM;
	case ENOMEM:
		return -ENOMEM;
	default:
		return -EFAULT;
	}
}

/*
 * Read @n pieces, remote[i] into local[i], in one call.  Returns 0, or
 * -ESRCH, -EPERM, -ENOMEM, -EFAULT (a piece could not be read whole).
 */
static int read_pieces(struct latch_remote *r, const struct iovec *local,
                       const struct iovec *remote, unsigned long n)
{
	size_t want = 0;
	ssize_t got;

	for (unsigned long i = 0; i < n; i++)
		want += local[i].iov_len;
	r->calls++;
	got = process_vm_readv(r->pid, local, n, remote, n, 0);
	if (got < 0)
		return read_error(errno);
	return (size_t)got == want ? 0 : -EFAULT;
}

/* The target's address @addr as a pointer; false when it does not fit one. */
static bool remote_ptr(uint64_t addr, void **p)
{
	if (addr > UINTPTR_MAX)
		return false;
	*p = (void *)(uintptr_t)addr;
	return true;
}

/* Read @len bytes at @addr into @buf in one call. */
static int read_at(struct latch_remote *r, void *buf, uint64_t addr, size_t len)
{
	struct iovec local = { buf, len }, remote = { NULL, len };

	if (!remote_ptr(addr, &remote.iov_base))
		return -EFAULT;
	return read_pieces(r, &local, &remote, 1);
}

/* A @width-byte (4 or 8) word of the target at @p. */
static uint64_t word(const unsigned char *p, unsigned width)
{
	uint32_t w32;
	uint64_t w64;

	if (width == 4) {
		memcpy(&w32, p, 4);
		return w32;
	}
	memcpy(&w64, p, 8);
	return w64;
}

/* ---- descriptors and the registry ---- */

static bool valid_name(const char *name)
{
	size_t len = name ? strnlen(name, LATCH_LAYOUT_NAME_MAX) : 0;

	return len > 0 && len < LATCH_LAYOUT_NAME_MAX;
}

/* Is @n a power of two between @lo and @hi? */
static bool pow2_within(uint32_t n, uint32_t lo, uint32_t hi)
{
	return n >= lo && n <= hi && (n & (n - 1)) == 0;
}

/* Can this reader walk a map @d describes? */
static bool valid_desc(const struct latch_layout_map *d)
{
	uint32_t slots_end = d->slots_offset + LATCH_LAYOUT_FANOUT * d->slot_width;

	if (d->magic != LATCH_LAYOUT_MAP_MAGIC || d->version != LATCH_LAYOUT_VERSION)
		return false;
	if (d->kind != LATCH_LAYOUT_KIND_MAP && d->kind != LATCH_LAYOUT_KIND_RANGE)
		return false;
	if (d->fanout != LATCH_LAYOUT_FANOUT || d->key_width != LATCH_LAYOUT_KEY_WIDTH ||
	    d->leaf_tag != LATCH_LAYOUT_LEAF_TAG || d->sequence_width != 4 ||
	    d->padding != LATCH_LAYOUT_PAD_REPEAT_LAST || d->max_depth == 0 ||
	    d->max_depth > LATCH_LAYOUT_MAX_DEPTH)
		return false;
	if ((d->slot_width != 4 && d->slot_width != 8) || d->slot_width > sizeof(uintptr_t) ||
	    (d->count_width != 4 && d->count_width != 8))
		return false;
	if (d->slots_offset != LATCH_LAYOUT_FANOUT * LATCH_LAYOUT_KEY_WIDTH ||
	    !pow2_within(d->node_align, 8, NODE_MAX))
		return false;
	if (d->inner_size < slots_end || d->inner_size > NODE_MAX || d->leaf_size < slots_end ||
	    d->leaf_size > NODE_MAX)
		return false;
	if (d->kind == LATCH_LAYOUT_KIND_RANGE
	        ? d->ends_offset < slots_end ||
	              d->ends_offset + LATCH_LAYOUT_FANOUT * d->slot_width > d->leaf_size
	        : d->ends_offset != 0)
		return false;
	if (!d->sequence || !d->root[0] || !d->root[1] || !d->entries[0] || !d->entries[1] ||
	    !d->height[0] || !d->height[1])
		return false;
	return memchr(d->name, '\0', sizeof(d->name)) && d->name[0];
}

static const uint64_t registry_sequence = offsetof(struct latch_layout_registry, sequence);

/*
 * Read the registry and every descriptor it names, under its counter.
 * Returns 0 (maps[] then holds them), or -ESRCH, -EPERM, -EFAULT (a
 * descriptor could not be read), -EPROTO (a descriptor is invalid),
 * -EAGAIN (the registry changed on every attempt).
 */
static int refresh(struct latch_remote *r)
{
	for (unsigned attempt = 0; attempt < LATCH_REMOTE_ATTEMPTS; attempt++) {
		uint64_t table[LATCH_LAYOUT_SLOTS];
		uint32_t start, end;
		unsigned n = 0;
		int bad = 0, err;

		r->cached = false;
		err = read_at(r, &start, r->registry + registry_sequence, sizeof(start));
		if (!err)
			err = read_at(r, table,
			              r->registry + offsetof(struct latch_layout_registry, table) +
			                  (start & 1u) * sizeof(table),
			              sizeof(table));
		if (err)
			return err;
		for (unsigned i = 0; i < LATCH_LAYOUT_SLOTS && !bad; i++) {
			struct rmap *m = &r->maps[n];

			if (!table[i])
				continue;
			bad = read_at(r, &m->d, table[i], sizeof(m->d));
			if (bad == -ESRCH || bad == -EPERM)
				return bad;
			if (!bad && !valid_desc(&m->d))
				bad = -EPROTO;
			m->addr = table[i];
			m->seq_known = false;
			n++;
		}
		err = read_at(r, &end, r->registry + registry_sequence, sizeof(end));
		if (err)
			return err;
		if (end != start)
			continue;
		if (bad)
			return bad;
		r->nmaps = n;
		r->reg_seq = start;
		r->cached = true;
		return 0;
	}
	return -EAGAIN;
}

/* The cached map called @name, or NULL. */
static struct rmap *cached_map(struct latch_remote *r, const char *name)
{
	for (unsigned i = 0; i < r->nmaps; i++)
		if (strcmp(r->maps[i].d.name, name) == 0)
			return &r->maps[i];
	return NULL;
}

/*
 * The map called @name, from the cache when it holds it; else the
 * registry is read again (it may have been published since), and NULL
 * with *@err = 0 means there is none.
 */
static struct rmap *find_map(struct latch_remote *r, const char *name, int *err)
{
	struct rmap *m = r->cached ? cached_map(r, name) : NULL;
	uint32_t now;

	*err = 0;
	if (m)
		return m;
	if (r->cached) {
		/* Not cached: is the cache still the registry as it is? */
		*err = read_at(r, &now, r->registry + registry_sequence, sizeof(now));
		if (*err || now == r->reg_seq)
			return NULL;
	}
	*err = refresh(r);
	return *err ? NULL : cached_map(r, name);
}

/* ---- walking a map ---- */

enum mode {
	EXACT, /* the entry with key x */
	FLOOR, /* the entry with the greatest key <= x */
	CEIL,  /* the entry with the least key >= x */
	COUNT  /* the number of entries */
};

struct hit {
	uint64_t key, slot, end;
};

static uint64_t node_key(const unsigned char *node, unsigned i)
{
	return word(node + (size_t)i * LATCH_LAYOUT_KEY_WIDTH, LATCH_LAYOUT_KEY_WIDTH);
}

/* Keys of @node <= @x (@le) or < @x: a position in 0..16 whatever the node holds. */
static unsigned count_keys(const unsigned char *node, uint64_t x, bool le)
{
	unsigned c = 0;

	for (unsigned i = 0; i < LATCH_LAYOUT_FANOUT; i++)
		c += le ? node_key(node, i) <= x : node_key(node, i) < x;
	return c;
}

/*
 * One attempt on copy @cp of @m: the entry @mode selects for @x, in
 * *@out.  Returns 1 (found), 0 (none), -EPROTO (the copy is not a valid
 * tree), -EFAULT, -ESRCH, -EPERM.  At most height + 1 calls (2 height for
 * CEIL), each bounded: the height is at most max_depth, every node read
 * is one of the descriptor's sizes into a buffer of NODE_MAX bytes, every
 * position is in 0..15.
 */
static int walk(struct latch_remote *r, const struct latch_layout_map *d, unsigned cp, uint64_t x,
                enum mode mode, struct hit *out)
{
	unsigned char root[8], height[8], node[NODE_MAX];
	struct iovec local[2] = { { root, d->slot_width }, { height, d->count_width } };
	struct iovec remote[2] = { { NULL, d->slot_width }, { NULL, d->count_width } };
	uint64_t ref, levels, side = 0;
	unsigned level = 0, side_level = 0, pos = 0;
	bool leftmost = false;
	int err;

	if (mode == COUNT) {
		if (!remote_ptr(d->entries[cp], &remote[1].iov_base))
			return -EFAULT;
		err = read_pieces(r, &local[1], &remote[1], 1);
		out->key = err ? 0 : word(height, d->count_width);
		return err ? err : 1;
	}
	if (!remote_ptr(d->root[cp], &remote[0].iov_base) ||
	    !remote_ptr(d->height[cp], &remote[1].iov_base))
		return -EFAULT;
	err = read_pieces(r, local, remote, 2);
	if (err)
		return err;
	ref = word(root, d->slot_width);
	levels = word(height, d->count_width);
	if (!ref)
		return 0;
	if (levels == 0 || levels > d->max_depth)
		return -EPROTO;
	for (;;) {
		bool leaf = ref & d->leaf_tag;
		uint64_t addr = ref & ~(uint64_t)d->leaf_tag;

		if (leaf != (level + 1 == levels) || !addr || addr % d->node_align)
			return -EPROTO;
		err = read_at(r, node, addr, leaf ? d->leaf_size : d->inner_size);
		if (err)
			return err;
		if (!leaf) {
			unsigned c = count_keys(node, x, true), i = leftmost ? 0 : c - (c != 0);

			if (!leftmost && mode == CEIL && i + 1 < LATCH_LAYOUT_FANOUT &&
			    node_key(node, i + 1) != node_key(node, i)) {
				side = word(node + d->slots_offset + (i + 1) * d->slot_width,
				            d->slot_width);
				side_level = level + 1;
			}
			ref = word(node + d->slots_offset + i * d->slot_width, d->slot_width);
			level++;
			continue;
		}
		if (leftmost)
			break;
		if (mode == EXACT) {
			pos = count_keys(node, x, false);
			pos -= pos == LATCH_LAYOUT_FANOUT;
			if (node_key(node, pos) != x)
				return 0;
		} else if (mode == FLOOR) {
			pos = count_keys(node, x, true);
			if (pos == 0)
				return 0;
			pos--;
		} else {
			pos = count_keys(node, x, false);
			if (pos == LATCH_LAYOUT_FANOUT) {
				/* Every key is below x: the least key of the next subtree. */
				if (!side)
					return 0;
				ref = side;
				level = side_level;
				leftmost = true;
				pos = 0;
				continue;
			}
		}
		break;
	}
	out->key = node_key(node, pos);
	out->slot = word(node + d->slots_offset + pos * d->slot_width, d->slot_width);
	out->end = d->kind == LATCH_LAYOUT_KIND_RANGE
	               ? word(node + d->ends_offset + pos * d->slot_width, d->slot_width)
	               : 0;
	return 1;
}

/*
 * The latch read loop around walk() for map @name of @kind (0: either).
 * Returns walk()'s answer from an attempt no flip overlapped, or its
 * error, or -EINVAL, -ENOENT, -EAGAIN (see latch_remote_range_find()).
 */
static int lookup(struct latch_remote *r, const char *name, enum latch_layout_kind kind, uint64_t x,
                  enum mode mode, struct hit *out)
{
	if (!r || !valid_name(name))
		return -EINVAL;
	for (unsigned attempt = 0; attempt < LATCH_REMOTE_ATTEMPTS; attempt++) {
		uint32_t counts[2];
		struct iovec local[2] = { { &counts[0], 4 }, { &counts[1], 4 } };
		struct iovec remote[2] = { { NULL, 4 }, { NULL, 4 } };
		struct rmap *m;
		int err, res;

		m = find_map(r, name, &err);
		if (!m)
			return err ? err : -ENOENT;
		if (kind && m->d.kind != (uint32_t)kind)
			return -ENOENT;
		remote_ptr(r->registry + registry_sequence, &remote[0].iov_base);
		if (!remote_ptr(m->d.sequence, &remote[1].iov_base))
			return -EFAULT;
		if (!m->seq_known) {
			err = read_pieces(r, &local[1], &remote[1], 1);
			if (err)
				return err;
			m->seq = counts[1];
			m->seq_known = true;
		}
		/* The copy the counter names (the mutant: the one the writer changes). */
		res = walk(r, &m->d, (m->seq & 1u) ^ (LATCH_REMOTE_MUTANT == 1), x, mode, out);
		if (res == -ESRCH || res == -EPERM)
			return res;
		/* The registry's count, then the map's, in one call. */
		err = read_pieces(r, local, remote, 2);
		if (err == -ESRCH || err == -EPERM)
			return err;
		if (err == -EFAULT) {
			/* One of the counters is unreadable: the registry's, or the map's. */
			err = read_pieces(r, local, remote, 1);
			if (err || counts[0] == r->reg_seq)
				return err ? err : -EFAULT; /* not unpublished, yet unreadable */
		}
		if (err || counts[0] != r->reg_seq) {
			/* The map may be gone: look for it again. */
			r->cached = false;
			continue;
		}
		if (counts[1] != m->seq) {
			/* A flip overlapped the attempt: it read a copy that may have changed. */
			m->seq = counts[1];
			if (LATCH_REMOTE_MUTANT != 2)
				continue;
		}
		return res;
	}
	return -EAGAIN;
}

int latch_remote_range_find(struct latch_remote *r, const char *name, uint64_t addr,
                            struct latch_range *out)
{
	struct hit h;
	int res = lookup(r, name, LATCH_LAYOUT_KIND_RANGE, addr, FLOOR, &h);

	if (res == 1 && addr >= h.end)
		res = 0;
	if (res == 1 && out)
		*out = (struct latch_range){ (uintptr_t)h.key, (uintptr_t)h.end,
			                     (void *)(uintptr_t)h.slot };
	return res;
}

int latch_remote_range_ceil(struct latch_remote *r, const char *name, uint64_t addr,
                            struct latch_range *out)
{
	struct hit h;
	int res = lookup(r, name, LATCH_LAYOUT_KIND_RANGE, addr, CEIL, &h);

	if (res == 1 && out)
		*out = (struct latch_range){ (uintptr_t)h.key, (uintptr_t)h.end,
			                     (void *)(uintptr_t)h.slot };
	return res;
}

int latch_remote_map_find(struct latch_remote *r, const char *name, uint64_t key, uint64_t *value)
{
	struct hit h;
	int res = lookup(r, name, LATCH_LAYOUT_KIND_MAP, key, EXACT, &h);

	if (res == 1 && value)
		*value = h.slot;
	return res;
}

int latch_remote_map_ceil(struct latch_remote *r, const char *name, uint64_t key, uint64_t *found,
                          uint64_t *value)
{
	struct hit h;
	int res = lookup(r, name, LATCH_LAYOUT_KIND_MAP, key, CEIL, &h);

	if (res == 1 && found)
		*found = h.key;
	if (res == 1 && value)
		*value = h.slot;
	return res;
}

int latch_remote_list(struct latch_remote *r, struct latch_remote_info *out, size_t max)
{
	char names[LATCH_LAYOUT_SLOTS][LATCH_LAYOUT_NAME_MAX];
	unsigned n, listed = 0;
	int err;

	if (!r || (!out && max))
		return -EINVAL;
	err = refresh(r);
	if (err)
		return err;
	n = r->nmaps;
	for (unsigned i = 0; i < n; i++)
		memcpy(names[i], r->maps[i].d.name, LATCH_LAYOUT_NAME_MAX);
	for (unsigned i = 0; i < n; i++) {
		struct hit h;
		struct rmap *m;
		int res = lookup(r, names[i], 0, 0, COUNT, &h);

		if (res == -ENOENT)
			continue; /* unpublished meanwhile */
		if (res < 0)
			return res;
		m = cached_map(r, names[i]);
		if (!m)
			continue;
		if (listed < max) {
			struct latch_remote_info *info = &out[listed];

			memcpy(info->name, m->d.name, LATCH_LAYOUT_NAME_MAX);
			info->kind = (enum latch_layout_kind)m->d.kind;
			info->flags = m->d.flags;
			info->entries = h.key;
		}
		listed++;
	}
	return (int)listed;
}

int latch_remote_describe(struct latch_remote *r, const char *name, struct latch_layout_map *out)
{
	struct rmap *m;
	int err;

	if (!r || !valid_name(name))
		return -EINVAL;
	m = find_map(r, name, &err);
	if (!m)
		return err ? err : -ENOENT;
	if (out)
		*out = m->d;
	return 1;
}

int latch_remote_read_name(struct latch_remote *r, uint64_t addr, char *buf, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 0;

	if (!r || !buf || !size)
		return -EINVAL;
	while (len < size - 1) {
		size_t chunk = page - (size_t)((addr + len) % page);
		int err;

		if (chunk > size - 1 - len)
			chunk = size - 1 - len;
		err = read_at(r, buf + len, addr + len, chunk);
		if (err) {
			buf[len] = '\0';
			return err;
		}
		char *nul = memchr(buf + len, '\0', chunk);
		if (nul)
			return (int)(nul - buf);
		len += chunk;
	}
	buf[len] = '\0';
	return -ENAMETOOLONG;
}

/* ---- attaching: finding latch_registry (remote-elf.c reads the files) ---- */

/*
 * The registry at @addr: 0 when its header is one this reader knows,
 * -EPROTO when not, or the read's error.
 */
static int check_registry(struct latch_remote *r, uint64_t addr)
{
	struct latch_layout_registry head;
	int err = read_at(r, &head, addr, offsetof(struct latch_layout_registry, table));

	if (err)
		return err;
	if (head.magic != LATCH_LAYOUT_REGISTRY_MAGIC || head.version != LATCH_LAYOUT_VERSION ||
	    head.slots != LATCH_LAYOUT_SLOTS)
		return -EPROTO;
	return 0;
}

int latch_remote_attach(pid_t pid, struct latch_remote **out)
{
	struct latch_remote *r;
	struct latch_remote_mapped *files;
	size_t n;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (pid <= 0)
		return -ESRCH;
	err = latch_remote_mapped_files_(pid, &files, &n);
	if (err)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(files);
		return -ENOMEM;
	}
	r->pid = pid;
	err = -ENOENT;
	/* liblatch itself first, then every other file (a static link). */
	for (int pass = 0; pass < 2 && err && err != -ESRCH && err != -EPERM; pass++) {
		for (size_t i = 0; i < n && err; i++) {
			uint64_t addr;
			int res;

			if (latch_remote_is_liblatch_(files[i].path) != (pass == 0))
				continue;
			addr = latch_remote_elf_symbol_(pid, &files[i], "latch_registry");
			if (!addr)
				continue;
			res = check_registry(r, addr);
			if (res == 0)
				r->registry = addr;
			/* A bad registry is reported unless a good one turns up. */
			if (res == 0 || err == -ENOENT || res == -ESRCH || res == -EPERM)
				err = res;
			if (res == -ESRCH || res == -EPERM)
				break;
		}
	}
	free(files);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

void latch_remote_detach(struct latch_remote *r)
{
	free(r);
}
