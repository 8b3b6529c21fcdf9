/* SPDX-License-Identifier: MIT */
/*
 * The remote reader (<latch/remote.h>) against live, stopped and hostile
 * targets, each a child process of this one.
 *
 *   test-remote api       publishing's and attaching's contracts, in this process
 *   test-remote churn     a child's writer changes a published range map while
 *                         this process resolves addresses in it
 *   test-remote stop      the same writer, stopped with SIGSTOP at random points
 *   test-remote hostile   children that corrupt their registry or map
 *   test-remote bench     the cost of a lookup (not a test)
 *
 * The churning writer and the check of each answer against its log are
 * churn.h's.  While the child is stopped, t0 = t1.
 *
 * --expect-caught inverts the verdict, for the reader's mutants
 * (src/remote.c, LATCH_REMOTE_MUTANT): the test must fail on them.
 *
 * Counts: LATCH_REMOTE_RANGES (slots of the map), LATCH_REMOTE_LOOKUPS
 * (churn), LATCH_REMOTE_STOPS (stop), LATCH_REMOTE_ROUNDS (hostile
 * random corruptions), LATCH_REMOTE_PACE_NS (the churning writer's pause
 * per operation), LATCH_REMOTE_SECONDS (time limit of a mutant run).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <latch/publish.h>
#include <latch/remote.h>

#include "check.h"
#include "churn.h"
#include "remote-private.h"

static struct latch_remote *attach_or_fail(pid_t pid)
{
	struct latch_remote *r;
	int err = latch_remote_attach(pid, &r);

	CHECK(err == 0, "attach %d: %d", (int)pid, err);
	return r;
}

static int churn(void)
{
	long lookups = test_env_long("LATCH_REMOTE_LOOKUPS", 20000);
	double limit = now_s() + (double)test_env_long("LATCH_REMOTE_SECONDS", 10);
	pid_t pid = start_writer(test_env_long("LATCH_REMOTE_PACE_NS", 3000));
	struct latch_remote *r = attach_or_fail(pid);
	struct test_rng rng = { 42 };
	struct model md;
	long answered = 0, again = 0, found = 0;
	uint64_t first, last;

	model_init(&md);
	first = __atomic_load_n(&shm->done, __ATOMIC_ACQUIRE);
	for (long i = 0; i < lookups || (expect_caught && now_s() < limit); i++) {
		struct latch_range out;
		size_t j;
		uint64_t addr = random_addr(&rng, &j);
		/* Acquire: the ops counted are done before the lookup's reads. */
		uint64_t t0 = __atomic_load_n(&shm->done, __ATOMIC_ACQUIRE);
		int res = latch_remote_range_find(r, NAME, addr, &out);
		uint64_t t1 = __atomic_load_n(&shm->done, __ATOMIC_ACQUIRE);

		check_answer(&md, t0, t1, addr, j, res, &out);
		again += res == -EAGAIN;
		answered += res >= 0;
		found += res == 1;
	}
	last = __atomic_load_n(&shm->done, __ATOMIC_ACQUIRE);
	finish_writer(pid);
	CHECK(latch_remote_range_find(r, NAME, churn_base, NULL) == -ESRCH, "the writer exited");
	latch_remote_detach(r);
	printf("churn: %ld lookups beside %llu writer ops: %ld answered (%ld found), %ld gave "
	       "-EAGAIN\n",
	       answered + again, (unsigned long long)(last - first), answered, found, again);
	model_free(&md);
	CHECK(answered > (answered + again) / 2, "most lookups must be answered");
	CHECK(last - first > 100, "the writer must have changed the map meanwhile");
	if (expect_caught) {
		fprintf(stderr, "FAIL: the mutant was not caught\n");
		return 1;
	}
	return 0;
}

static int stop(void)
{
	long stops = test_env_long("LATCH_REMOTE_STOPS", 40);
	pid_t pid = start_writer(0);
	struct latch_remote *r = attach_or_fail(pid);
	struct test_rng rng = { 7 };
	struct model md;
	long mid_update = 0, lookups = 0;

	model_init(&md);
	for (long s = 0; s < stops; s++) {
		int status;

		usleep((useconds_t)test_rng_below(&rng, 2000));
		CHECK(kill(pid, SIGSTOP) == 0, "SIGSTOP");
		CHECK(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status), "stopped");
		uint64_t t = __atomic_load_n(&shm->done, __ATOMIC_ACQUIRE);

		mid_update += __atomic_load_n(&shm->in_update, __ATOMIC_RELAXED);
		/* Every slot, at an address in its range and one in the gap after it. */
		for (size_t j = 0; j < nslots; j++) {
			for (int gap = 0; gap < 2; gap++) {
				struct latch_range out;
				uint64_t addr = gap ? slot_end(j) : slot_start(j) + (j % 16);
				int res = latch_remote_range_find(r, NAME, addr, &out);

				if (res == -EAGAIN)
					wrong("a stopped writer flipped the counter", addr, res,
					      &out);
				check_answer(&md, t, t, addr, j, res, &out);
				lookups++;
			}
		}
		CHECK(kill(pid, SIGCONT) == 0, "SIGCONT");
	}
	finish_writer(pid);
	CHECK(latch_remote_range_find(r, NAME, churn_base, NULL) == -ESRCH, "the writer exited");
	latch_remote_detach(r);
	model_free(&md);
	printf("stop: %ld stops, %ld inside an update, %ld lookups while stopped, all right\n",
	       stops, mid_update, lookups);
	if (expect_caught) {
		fprintf(stderr, "FAIL: the mutant was not caught\n");
		return 1;
	}
	CHECK(mid_update > 0 || stops < 20, "no stop landed inside an update");
	return 0;
}

/* ---- cost ---- */

/*
 * Lookups in a child's map of LATCH_REMOTE_RANGES ranges (inserted in
 * random order), its writer idle: microseconds and system calls per
 * lookup.  Not a test: `test-remote bench`.
 */
static int bench(void)
{
	long lookups = test_env_long("LATCH_REMOTE_LOOKUPS", 200000);
	int fds[2];
	char c;
	pid_t pid;

	CHECK(pipe(fds) == 0, "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		static struct latch_range_map m;
		struct test_rng rng = { 3 };
		size_t *order = malloc(nslots * sizeof(*order));

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CHECK(order && latch_range_map_init(&m) == 0, "init");
		for (size_t j = 0; j < nslots; j++)
			order[j] = j;
		for (size_t j = nslots; j > 1; j--) {
			size_t k = test_rng_below(&rng, j), t = order[j - 1];

			order[j - 1] = order[k];
			order[k] = t;
		}
		for (size_t j = 0; j < nslots; j++)
			CHECK(latch_range_insert(&m, slot_start(order[j]), slot_end(order[j]), NULL,
			                         NULL) == 0,
			      "insert");
		CHECK(latch_range_publish(&m, NAME, 0) == 0, "publish");
		CHECK(write(fds[1], "r", 1) == 1, "ready");
		for (;;)
			pause();
	}
	CHECK(read(fds[0], &c, 1) == 1, "ready");
	struct latch_remote *r = attach_or_fail(pid);
	struct test_rng rng = { 5 };
	long hits = 0;
	size_t j;

	CHECK(latch_remote_range_find(r, NAME, churn_base, NULL) >= 0, "warm-up");
	uint64_t calls = latch_remote_calls_(r);
	double t = now_s();

	for (long i = 0; i < lookups; i++)
		hits += latch_remote_range_find(r, NAME, random_addr(&rng, &j), NULL) == 1;
	t = now_s() - t;
	calls = latch_remote_calls_(r) - calls;
	printf("bench: %zu ranges: %.2f us and %.2f system calls per lookup (%ld lookups, %ld "
	       "found)\n",
	       nslots, t * 1e6 / (double)lookups, (double)calls / (double)lookups, lookups, hits);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	latch_remote_detach(r);
	return 0;
}

/* ---- contracts, in this process ---- */

static int api(void)
{
	static struct latch_range_map rm;
	static struct latch_map m;
	struct latch_remote *r;
	struct latch_remote_info info[4];
	struct latch_range out;
	char long_name[80], buf[16];
	uint64_t v, k;
	pid_t child;
	int status;

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK(latch_range_map_init(&rm) == 0 && latch_map_init(&m) == 0, "init");
	CHECK(latch_remote_attach(getpid(), &r) == 0, "nothing published yet: attach gives 0");
	CHECK(latch_remote_list(r, info, 4) == 0, "nothing published");
	CHECK(latch_remote_range_find(r, "code", 1, &out) == -ENOENT, "nothing published");

	CHECK(latch_range_publish(&rm, NULL, 0) == -EINVAL, "NULL name");
	CHECK(latch_range_publish(&rm, "", 0) == -EINVAL, "empty name");
	long_name[64] = '\0';
	CHECK(latch_range_publish(&rm, long_name, 0) == -EINVAL, "64-byte name");
	long_name[63] = '\0';
	CHECK(latch_range_publish(&rm, long_name, 0) == 0, "63-byte name");
	CHECK(latch_range_unpublish(&rm) == 0, "unpublish");
	CHECK(latch_range_unpublish(&rm) == -ENOENT, "not published");
	CHECK(latch_map_unpublish(&m) == -ENOENT, "not published");
	CHECK(latch_range_publish(&rm, "code", 4) == -EINVAL, "unknown flag");
	CHECK(latch_range_publish(NULL, "code", 0) == -EINVAL, "NULL map");
	CHECK(latch_range_publish(&rm, "code", LATCH_PUBLISH_NAMES | LATCH_PUBLISH_RESIDENT) == 0,
	      "publish");
	CHECK(latch_range_publish(&rm, "other", 0) == -EEXIST, "published twice");
	CHECK(latch_map_publish(&m, "code", 0) == -EEXIST, "name in use");
	CHECK(latch_map_publish(&m, "keys", 0) == 0, "publish the map");

	static const char name0[] = "first";
	for (uint64_t i = 0; i < 3000; i++) {
		CHECK(latch_range_insert(&rm, 0x1000 + i * 0x100, 0x1080 + i * 0x100, (void *)name0,
		                         NULL) == 0,
		      "insert");
		CHECK(latch_map_insert(&m, i * 2, (void *)(uintptr_t)(i + 5)) == 0, "insert");
	}
	CHECK(latch_remote_list(r, info, 4) == 2, "two maps");
	CHECK(strcmp(info[0].name, "code") == 0 && info[0].kind == LATCH_LAYOUT_KIND_RANGE &&
	          info[0].entries == 3000 &&
	          info[0].flags == (LATCH_PUBLISH_NAMES | LATCH_PUBLISH_RESIDENT),
	      "the range map's entry: %s %d %llu", info[0].name, info[0].kind,
	      (unsigned long long)info[0].entries);
	CHECK(strcmp(info[1].name, "keys") == 0 && info[1].kind == LATCH_LAYOUT_KIND_MAP,
	      "the map's entry");
	CHECK(latch_remote_list(r, info, 1) == 2, "too small an array");

	CHECK(latch_remote_range_find(r, "code", 0x1000 + 77 * 0x100 + 5, &out) == 1 &&
	          out.start == 0x1000 + 77 * 0x100 && out.end == 0x1080 + 77 * 0x100,
	      "find");
	CHECK(latch_remote_read_name(r, (uintptr_t)out.value, buf, sizeof(buf)) == 5 &&
	          strcmp(buf, "first") == 0,
	      "the value's name");
	CHECK(latch_remote_read_name(r, (uintptr_t)out.value, buf, 3) == -ENAMETOOLONG, "short");
	CHECK(latch_remote_read_name(r, 8, buf, sizeof(buf)) == -EFAULT, "unmapped");
	CHECK(latch_remote_range_find(r, "code", 0x1000 + 77 * 0x100 + 0x80, &out) == 0, "a gap");
	CHECK(latch_remote_range_find(r, "code", 0x10, &out) == 0, "below every range");
	CHECK(latch_remote_range_ceil(r, "code", 0x1001, &out) == 1 && out.start == 0x1100, "ceil");
	CHECK(latch_remote_range_ceil(r, "code", 0x1000 + 2999 * 0x100 + 1, &out) == 0, "no ceil");
	CHECK(latch_remote_range_find(r, "keys", 1, &out) == -ENOENT, "a map, not a range map");
	CHECK(latch_remote_map_find(r, "code", 1, &v) == -ENOENT, "a range map, not a map");
	CHECK(latch_remote_map_find(r, "keys", 200, &v) == 1 && v == 105, "map find");
	CHECK(latch_remote_map_find(r, "keys", 201, &v) == 0, "map miss");
	CHECK(latch_remote_map_ceil(r, "keys", 201, &k, &v) == 1 && k == 202 && v == 106, "ceil");
	CHECK(latch_remote_range_find(r, "", 1, &out) == -EINVAL, "empty name");
	CHECK(latch_remote_range_find(r, long_name, 1, &out) == -ENOENT, "63 bytes: valid");
	long_name[63] = 'x';
	CHECK(latch_remote_range_find(r, long_name, 1, &out) == -EINVAL, "64 bytes");
	CHECK(latch_remote_map_find(r, NULL, 1, &v) == -EINVAL, "NULL name");
	{
		struct latch_layout_map d;

		CHECK(latch_remote_describe(r, "code", &d) == 1 &&
		          d.kind == LATCH_LAYOUT_KIND_RANGE && strcmp(d.name, "code") == 0 &&
		          d.sequence >= (uintptr_t)&rm && d.sequence < (uintptr_t)(&rm + 1),
		      "describe: the range map's counter is in the map");
		CHECK(latch_remote_describe(r, "keys", &d) == 1 && d.kind == LATCH_LAYOUT_KIND_MAP,
		      "describe: the map");
		CHECK(latch_remote_describe(r, "none", &d) == -ENOENT, "describe: no such map");
		CHECK(latch_remote_describe(r, "", &d) == -EINVAL, "describe: empty name");
		CHECK(latch_remote_describe(NULL, "code", &d) == -EINVAL, "describe: no handle");
	}

	/* Every range, in order, by ceil. */
	uint64_t at = 0, seen = 0;
	while (latch_remote_range_ceil(r, "code", at, &out) == 1) {
		CHECK(out.start == 0x1000 + seen * 0x100, "walk: range %llu",
		      (unsigned long long)seen);
		seen++;
		at = out.start + 1;
	}
	CHECK(seen == 3000, "walked %llu ranges", (unsigned long long)seen);

	/* Unpublished: gone for readers too; the name is free again. */
	CHECK(latch_range_unpublish(&rm) == 0, "unpublish");
	CHECK(latch_remote_range_find(r, "code", 0x1005, &out) == -ENOENT, "unpublished");
	CHECK(latch_map_publish(&m, "code", 0) == -EEXIST, "the map is published as keys");
	CHECK(latch_map_unpublish(&m) == 0 && latch_map_publish(&m, "code", 0) == 0,
	      "republish under the freed name");
	CHECK(latch_remote_map_find(r, "code", 4, &v) == 1 && v == 7, "found under its new name");
	CHECK(latch_map_unpublish(&m) == 0, "unpublish");
	latch_remote_detach(r);

	/* No such process; a process without liblatch. */
	CHECK(latch_remote_attach(0, &r) == -ESRCH, "pid 0");
	child = fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	CHECK(latch_remote_attach(child, &r) == -ENOENT, "no liblatch in sleep(1)");
	kill(child, SIGKILL);
	CHECK(waitpid(child, &status, 0) == child, "waitpid");
	CHECK(latch_remote_attach(child, &r) == -ESRCH, "reaped");

	/* Many maps: the registry's slots run out, and come back. */
	static struct latch_map many[LATCH_LAYOUT_SLOTS + 1];
	for (int i = 0; i <= LATCH_LAYOUT_SLOTS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "map%d", i);
		latch_map_init(&many[i]);
		CHECK(latch_map_publish(&many[i], name, 0) ==
		          (i < LATCH_LAYOUT_SLOTS ? 0 : -ENOMEM),
		      "publish %d", i);
	}
	CHECK(latch_remote_attach(getpid(), &r) == 0, "attach");
	CHECK(latch_remote_list(r, NULL, 0) == LATCH_LAYOUT_SLOTS, "a full registry");
	for (int i = 0; i < LATCH_LAYOUT_SLOTS; i++)
		CHECK(latch_map_unpublish(&many[i]) == 0, "unpublish %d", i);
	CHECK(latch_remote_list(r, NULL, 0) == 0, "an empty registry");
	latch_remote_detach(r);
	latch_range_map_destroy(&rm);
	latch_map_destroy(&m);
	printf("api: every contract holds\n");
	return 0;
}

/* ---- hostile targets ---- */

enum hostile {
	H_REG_MAGIC,
	H_REG_VERSION,
	H_DESC_MAGIC,
	H_DESC_VERSION,
	H_DESC_NAME,
	H_DESC_POINTER,
	H_ROOT_UNMAPPED,
	H_COUNTER_UNMAPPED,
	H_CYCLE,
	H_HEIGHT,
	H_FLIPPING,
	H_RANDOM, /* random bytes over a random part: any error, or an answer */
	H_CASES
};

static const char *const hostile_names[] = {
	"registry magic",     "registry version",           "descriptor magic",
	"descriptor version", "name without NUL",           "garbage table entry",
	"unmapped root",      "unmapped counter",           "a cycle",
	"a huge height",      "a counter that never rests", "random bytes"
};
_Static_assert(sizeof(hostile_names) / sizeof(hostile_names[0]) == H_CASES,
               "a name for every hostile case");

static void fill_random(void *p, size_t len, struct test_rng *rng)
{
	unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)test_rng_next(rng);
}

/* The child: publish a map, corrupt it as @what says, tell the parent, wait. */
static void corrupt(enum hostile what, unsigned long seed, int ready_fd)
{
	static struct latch_range_map m;
	struct test_rng rng = { seed * 0x9e3779b97f4a7c15ull + 1 };
	struct latch_layout_map *d;
	uintptr_t root;
	unsigned cp;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
	CHECK(latch_range_map_init(&m) == 0, "init");
	for (uint64_t i = 0; i < 1000; i++)
		CHECK(latch_range_insert(&m, 0x1000 + i * 0x100, 0x1080 + i * 0x100, NULL, NULL) ==
		          0,
		      "insert");
	CHECK(latch_range_publish(&m, "victim", 0) == 0, "publish");
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
	d = (struct latch_layout_map *)(uintptr_t)latch_registry.table[0][0];
	cp = *(uint32_t *)(uintptr_t)d->sequence & 1u;
	root = *(uintptr_t *)(uintptr_t)d->root[cp];
	switch (what) {
	case H_REG_MAGIC:
		latch_registry.magic ^= 1;
		break;
	case H_REG_VERSION:
		latch_registry.version = LATCH_LAYOUT_VERSION + 1;
		break;
	case H_DESC_MAGIC:
		d->magic = 0;
		break;
	case H_DESC_VERSION:
		d->version = LATCH_LAYOUT_VERSION + 1;
		break;
	case H_DESC_NAME:
		memset(d->name, 'A', sizeof(d->name));
		break;
	case H_DESC_POINTER:
		latch_registry.table[0][0] = latch_registry.table[1][0] = 0xdead0000;
		break;
	case H_ROOT_UNMAPPED:
		/* Below mmap_min_addr: unmapped on every target, aligned like a node. */
		*(uintptr_t *)(uintptr_t)d->root[cp] = (uintptr_t)0x1000;
		break;
	case H_COUNTER_UNMAPPED: /* as a map destroyed without being unpublished */
		d->sequence = 0x7ff000000000ull;
		break;
	case H_CYCLE: /* an inner root whose children are all itself, 32 levels high */
		for (unsigned i = 0; i < LATCH_LAYOUT_FANOUT; i++)
			((uintptr_t *)(root + d->slots_offset))[i] = root;
		*(size_t *)(uintptr_t)d->height[cp] = LATCH_LAYOUT_MAX_DEPTH;
		break;
	case H_HEIGHT:
		*(size_t *)(uintptr_t)d->height[cp] = SIZE_MAX / 2;
		break;
	case H_FLIPPING:
		break;
	case H_RANDOM:
		switch (test_rng_below(&rng, 5)) {
		case 0:
			fill_random(&latch_registry.sequence,
			            sizeof(latch_registry) -
			                offsetof(struct latch_layout_registry, sequence),
			            &rng);
			break;
		case 1:
			fill_random((char *)d + 16, sizeof(*d) - 16, &rng);
			break;
		case 2:
			fill_random((void *)(uintptr_t)d->root[cp], sizeof(uintptr_t), &rng);
			break;
		default: /* the root node, leaves or not */
			fill_random((void *)(root & ~(uintptr_t)1), d->inner_size, &rng);
			break;
		}
		break;
	case H_CASES:
		break;
	}
	CHECK(write(ready_fd, "r", 1) == 1, "ready");
	if (what == H_FLIPPING) {
		for (;;)
			__atomic_fetch_add((uint32_t *)(uintptr_t)d->sequence, 1u,
			                   __ATOMIC_RELEASE);
	}
	for (;;)
		pause();
}

/* One hostile child: every call must end within @bound seconds with an allowed result. */
static void hostile_case(enum hostile what, unsigned long seed, double bound)
{
	static const int any[] = { 0, 1, -EFAULT, -EPROTO, -ENOENT, -EAGAIN };
	int fds[2], status, res;
	struct latch_remote *r = NULL;
	struct latch_range out;
	char c;
	pid_t pid;
	double t;

	CHECK(pipe(fds) == 0, "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		close(fds[0]);
		corrupt(what, seed, fds[1]);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1, "the hostile child is ready");
	close(fds[0]);

	t = now_s();
	res = latch_remote_attach(pid, &r);
	if (what == H_REG_MAGIC || what == H_REG_VERSION)
		CHECK(res == -EPROTO, "%s: attach gives %d", hostile_names[what], res);
	else
		CHECK(res == 0, "%s: attach gives %d", hostile_names[what], res);
	int again = 0;

	/* A counter that never rests: until the first -EAGAIN (the child may be off the CPU). */
	for (int i = 0; r && (i < 20 || (what == H_FLIPPING && !again && now_s() - t < 2)); i++) {
		uint64_t addr = 0x1000 + (uint64_t)(i % 20) * 0x3100 + 5;
		struct latch_remote_info info[2];
		bool allowed = false;

		res = latch_remote_range_find(r, "victim", addr, &out);
		switch (what) {
		case H_DESC_MAGIC:
		case H_DESC_VERSION:
		case H_DESC_NAME:
			CHECK(res == -EPROTO, "%s: find gives %d", hostile_names[what], res);
			break;
		case H_DESC_POINTER:
		case H_ROOT_UNMAPPED:
		case H_COUNTER_UNMAPPED:
			CHECK(res == -EFAULT, "%s: find gives %d", hostile_names[what], res);
			break;
		case H_CYCLE:
		case H_HEIGHT:
			CHECK(res == -EPROTO, "%s: find gives %d", hostile_names[what], res);
			break;
		case H_FLIPPING:
			/* Right answers when the child was off the CPU for a whole attempt. */
			CHECK(res == -EAGAIN || (res == 1 && out.start <= addr && addr < out.end),
			      "%s: find gives %d", hostile_names[what], res);
			again += res == -EAGAIN;
			break;
		default:
			for (size_t k = 0; k < sizeof(any) / sizeof(any[0]); k++)
				allowed |= res == any[k];
			CHECK(allowed, "%s: find gives %d", hostile_names[what], res);
			if (res == 1)
				CHECK(out.start <= addr && addr < out.end,
				      "a found range holds it");
			break;
		}
		res = latch_remote_list(r, info, 2);
		CHECK(res >= -EPROTO, "list: %d", res);
	}
	t = now_s() - t;
	/* Not required: on a loaded machine the child may never run during an attempt. */
	if (what == H_FLIPPING)
		printf("hostile: a counter that never rests: %d lookups gave -EAGAIN\n", again);
	CHECK(t < bound, "%s: %.3f s, over the bound of %.1f s", hostile_names[what], t, bound);
	latch_remote_detach(r);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
}

static int hostile(void)
{
	long rounds = test_env_long("LATCH_REMOTE_ROUNDS", 40);

	for (int what = 0; what < H_RANDOM; what++)
		hostile_case((enum hostile)what, 0, 5.0);
	for (long i = 0; i < rounds; i++)
		hostile_case(H_RANDOM, (unsigned long)i, 5.0);
	printf("hostile: %d corruptions and %ld random ones, each an error code in bounded time\n",
	       H_RANDOM, rounds);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "api";

	expect_caught = argc > 2 && strcmp(argv[2], "--expect-caught") == 0;
	nslots = (size_t)test_env_long("LATCH_REMOTE_RANGES", 1000);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED, "mmap");
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(mode, "api") == 0)
		return api();
	if (strcmp(mode, "churn") == 0)
		return churn();
	if (strcmp(mode, "stop") == 0)
		return stop();
	if (strcmp(mode, "hostile") == 0)
		return hostile();
	if (strcmp(mode, "bench") == 0)
		return bench();
	fprintf(stderr, "usage: test-remote api|churn|stop|hostile|bench [--expect-caught]\n");
	return 2;
}
