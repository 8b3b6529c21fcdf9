/* SPDX-License-Identifier: MIT */
/*
 * The eBPF reader (<latch/bpf/latch.bpf.h>) in the sampler
 * (examples/bpf/latch-sample) against a churning child:
 *
 *   test-bpf SAMPLER [--expect-caught]
 *
 * The child (churn.h's writer) publishes a range map whose cells are
 * pieces of its own code (the executable's text, which holds liblatch's
 * code, as the test links it statically) and churns it, a thread of its
 * own looking addresses up in the map beside it.  The sampler samples it
 * on every CPU and resolves each sampled instruction pointer in the map,
 * in the kernel at sample time, reading the child's count of finished
 * operations before and after the lookup; every answer is checked against
 * the writer's log as the remote reader's are (churn.h: check_answer()).
 * Samples that interrupted the writer inside a library call (the kernel's
 * own case) must be right too; samples of the reader thread while the
 * writer ran on another CPU test the retry.
 *
 * It also compares the answers with a /tmp/perf-PID.map symbolizer's: the
 * writer appends a line per inserted range, and after the run each sample
 * is resolved as perf does (the last line whose range holds the address).
 *
 * --expect-caught inverts the verdict, for the reader's mutants
 * (LATCH_BPF_MUTANT): the test must fail on them.  Exit 77 (with the
 * sampler's one line) where the kernel does not load the program.
 *
 * Settings: LATCH_BPF_RANGES (slots, default 64), LATCH_BPF_SECONDS (of a
 * round of sampling, default 3), LATCH_BPF_ROUNDS (of a mutant run, default
 * 5), LATCH_BPF_HZ (samples a second per CPU, default
 * 4000), LATCH_REMOTE_PACE_NS (the writer's pause per operation, default 0).
 */
#include "churn.h"

#include <sys/mman.h>

#include <latch/bpf/latch.bpf.h>

#include "latch-sample.h"

/* The executable's text mapping, which holds @fn: its start and length. */
static void code_of(uint64_t a, uint64_t *start, uint64_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	CHECK(f, "/proc/self/maps");
	*len = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) == 3 && perms[2] == 'x' &&
		    a >= lo && a < hi) {
			*start = lo;
			*len = hi - lo;
		}
	}
	fclose(f);
	CHECK(*len, "no executable mapping holds %#llx", (unsigned long long)a);
}

/* Run the sampler on @pid; its exit status (77: it cannot run here). */
static int run_sampler(const char *sampler, pid_t pid, const char *records)
{
	char hz[32], seconds[32], watch[64], target[32];
	pid_t s;
	int status;

	snprintf(hz, sizeof(hz), "%ld", test_env_long("LATCH_BPF_HZ", 4000));
	snprintf(seconds, sizeof(seconds), "%ld", test_env_long("LATCH_BPF_SECONDS", 3));
	snprintf(watch, sizeof(watch), "%llx,%llx", (unsigned long long)(uintptr_t)&shm->done,
	         (unsigned long long)(uintptr_t)&shm->in_update);
	snprintf(target, sizeof(target), "%d", (int)pid);
	s = fork();
	CHECK(s >= 0, "fork");
	if (s == 0) {
		execl(sampler, sampler, "-F", hz, "-d", seconds, "-o", records, "-w", watch, target,
		      NAME, (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(s, &status, 0) == s && WIFEXITED(status), "the sampler: status %#x", status);
	return WEXITSTATUS(status);
}

static int by_done(const void *a, const void *b)
{
	const struct latch_sample_record *x = a, *y = b;

	return (x->done_before > y->done_before) - (x->done_before < y->done_before);
}

/* A line of the perf map: [start, end) named by its slot. */
struct perf_line {
	uint64_t start, end;
	long slot;
};

/*
 * The perf map's lines, each kept once, at the place of its last
 * occurrence (perf takes the last line that holds an address, so earlier
 * copies of a line never decide).
 */
static struct perf_line *read_perf_map(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct perf_line *lines = NULL;
	unsigned long long start, size;
	long slot;
	size_t cap = 0;

	CHECK(f, "%s", path);
	*n = 0;
	while (fscanf(f, "%llx %llx slot%ld\n", &start, &size, &slot) == 3) {
		size_t i;

		for (i = 0; i < *n; i++)
			if (lines[i].start == start && lines[i].end == start + size &&
			    lines[i].slot == slot)
				break;
		if (i < *n) {
			memmove(&lines[i], &lines[i + 1], (*n - i - 1) * sizeof(*lines));
			(*n)--;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			lines = realloc(lines, cap * sizeof(*lines));
			CHECK(lines, "out of memory");
		}
		lines[(*n)++] = (struct perf_line){ start, start + size, slot };
	}
	fclose(f);
	return lines;
}

/* What perf names @ip by: the last line that holds it, or NULL. */
static const struct perf_line *perf_resolve(const struct perf_line *lines, size_t n, uint64_t ip)
{
	for (size_t i = n; i-- > 0;)
		if (ip >= lines[i].start && ip < lines[i].end)
			return &lines[i];
	return NULL;
}

/*
 * One round: the writer sampled for LATCH_BPF_SECONDS, every answer
 * checked.  Returns 0, or 77 when the sampler cannot run here.
 */
static int sample(const char *sampler, const char *records, const char *perf_map)
{
	struct latch_sample_record *rec;
	struct perf_line *lines;
	struct model md;
	uint64_t ops;
	long n = 0, writer = 0, mid_update = 0, mid_answered = 0, concurrent = 0, unreadable = 0,
	     answered = 0, found = 0, gave_up = 0, retried = 0, perf_wrong = 0, perf_missed = 0;
	size_t nlines;
	pid_t pid;
	FILE *f;
	int status;

	pid = start_writer(test_env_long("LATCH_REMOTE_PACE_NS", 0));
	ops = __atomic_load_n(&shm->done, __ATOMIC_ACQUIRE);
	status = run_sampler(sampler, pid, records);
	ops = __atomic_load_n(&shm->done, __ATOMIC_ACQUIRE) - ops;
	finish_writer(pid);
	if (status == 77) {
		unlink(records);
		unlink(perf_map);
		return 77;
	}
	CHECK(status == 0, "the sampler failed: exit %d", status);

	f = fopen(records, "rb");
	CHECK(f, "%s", records);
	rec = NULL;
	for (size_t cap = 0;; n++) {
		if ((size_t)n == cap) {
			cap = cap ? 2 * cap : 4096;
			rec = realloc(rec, cap * sizeof(*rec));
			CHECK(rec, "out of memory");
		}
		if (fread(&rec[n], sizeof(*rec), 1, f) != 1)
			break;
	}
	fclose(f);
	unlink(records);
	lines = read_perf_map(perf_map, &nlines);
	unlink(perf_map);

	/* In the order of the counts they started at: the model only goes forward. */
	qsort(rec, (size_t)n, sizeof(*rec), by_done);
	model_init(&md);
	for (long i = 0; i < n; i++) {
		const struct latch_sample_record *s = &rec[i];
		struct latch_range out = { (uintptr_t)s->start, (uintptr_t)s->end,
			                   (void *)(uintptr_t)s->value };
		/* The results as latch_remote_range_find() gives them, to check them alike. */
		static const int as_remote[] = { 1, 0, -EFAULT, -EPROTO, -EAGAIN };
		int res;
		uint64_t cell = (s->ip - churn_base) / churn_cell;
		const struct perf_line *p = perf_resolve(lines, nlines, s->ip);

		CHECK(s->result <= LATCH_BPF_FOUND && s->result >= LATCH_BPF_GAVE_UP, "result %d",
		      s->result);
		res = as_remote[LATCH_BPF_FOUND - s->result];
		writer += s->tid == (uint32_t)pid;
		mid_update += s->busy && s->tid == (uint32_t)pid;
		concurrent += s->busy && s->tid != (uint32_t)pid;
		retried += s->attempts > 1;
		if (s->result == LATCH_BPF_UNREADABLE) {
			unreadable++; /* a page not resident: no answer to check */
			continue;
		}
		if (s->ip < churn_base || cell >= nslots) {
			if (res == 1)
				wrong("found a range outside every cell", s->ip, res, &out);
		} else {
			check_answer(&md, s->done_before, s->done_after, s->ip, (size_t)cell, res,
			             &out);
		}
		gave_up += res == -EAGAIN;
		answered += res >= 0;
		found += res == 1;
		mid_answered += res >= 0 && s->busy && s->tid == (uint32_t)pid;
		/* The perf map, against the published map at sample time. */
		if (res == 1 && !p)
			perf_missed++;
		else if (p &&
		         (res == 0 || (res == 1 && (p->start != s->start || p->end != s->end))))
			perf_wrong++;
	}
	model_free(&md);
	free(rec);
	free(lines);
	printf("test-bpf: %llu writer ops; %ld samples (%ld of the writer thread, %ld inside a "
	       "writer call; %ld of "
	       "the reader thread during a writer call): %ld answered (%ld found; %ld inside a "
	       "writer call), %ld unreadable, %ld gave up, %ld retried; the perf map: %ld wrong, "
	       "%ld missed\n",
	       (unsigned long long)ops, n, writer, mid_update, concurrent, answered, found,
	       mid_answered, unreadable, gave_up, retried, perf_wrong, perf_missed);
	if (expect_caught)
		return 0;
	CHECK(n >= 100, "too few samples to judge: %ld", n);
	CHECK(mid_update > 0, "no sample landed inside a writer call");
	CHECK(answered > n / 2, "most samples must be answered");
	return 0;
}

int main(int argc, char **argv)
{
	char records[64], perf_map[64];
	uint64_t len;

	if (argc < 2) {
		fprintf(stderr, "usage: test-bpf SAMPLER [--expect-caught]\n");
		return 2;
	}
	expect_caught = argc > 2 && strcmp(argv[2], "--expect-caught") == 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	nslots = (size_t)test_env_long("LATCH_BPF_RANGES", 64);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED, "mmap");
	/* The cells: this program's code, liblatch's included (the child's is the same). */
	code_of((uintptr_t)latch_range_find, &churn_base, &len);
	churn_cell = (len / nslots) & ~(uint64_t)15;
	CHECK(churn_cell >= 64, "%zu slots in %llu bytes of code", nslots, (unsigned long long)len);
	churn_readers = 1;
	churn_publish_flags = LATCH_PUBLISH_RESIDENT;
	snprintf(records, sizeof(records), "/tmp/latch-test-bpf-%d.records", (int)getpid());
	snprintf(perf_map, sizeof(perf_map), "/tmp/latch-test-bpf-%d.map", (int)getpid());
	churn_perf_map = perf_map;
	/* A mutant is caught by chance (a sample beside a flip): a few rounds, if need be. */
	for (long round = 1;; round++) {
		int status = sample(argv[1], records, perf_map);

		if (!expect_caught || status == 77)
			return status;
		if (round >= test_env_long("LATCH_BPF_ROUNDS", 5))
			break;
	}
	fprintf(stderr, "FAIL: the mutant was not caught\n");
	return 1;
}
