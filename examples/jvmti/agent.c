/* SPDX-License-Identifier: MIT */
/*
 * liblatch-jvmti-agent: a sampling profiler for HotSpot, built on a
 * latch_range_map of the JVM's generated code.
 *
 *	java -agentpath:/path/to/liblatch-jvmti-agent.so[=OPTIONS] ...
 *
 * The map: CompiledMethodLoad stores the method's code [code_addr,
 * code_addr + code_size) with a record naming it ("Class.method"),
 * DynamicCodeGenerated stores stubs (the interpreter, adapters, runtime
 * stubs); latch_range_store() evicts, in the same flip, whatever stale code
 * the new range overlaps.  CompiledMethodUnload erases the record its load
 * stored with latch_range_erase_if(), so a late unload never erases code
 * that reused the addresses.  At VMInit, GenerateEvents replays the code
 * that existed before the events were enabled.  The map is published as
 * "jvm-code" (<latch/publish.h>): latch-inspect(1) lists, dumps and
 * resolves it from outside the JVM while it runs.
 *
 * The samples: a CPU-time timer per thread (timer_create() on the thread's
 * CPU clock, SIGEV_THREAD_ID), for the Java threads and the JVM's own
 * (compiler, GC, service threads) alike, found in /proc/self/task.  The
 * SIGPROF handler reads the interrupted PC from the ucontext and resolves
 * it with latch_range_find(), which never waits, even when the handler
 * interrupted this very thread inside a latch_range_store() or
 * latch_range_erase_if(); each answer goes to a preallocated log.
 *
 * At VM death: sampling stops, every answer is checked against a replay of
 * the writers' log (see check_samples()), and a flat profile and a summary
 * are printed.
 *
 * OPTIONS, comma-separated: interval_us=N (CPU time between samples of a
 * thread, default 1000), max_samples=N (the sample log's size, default
 * 1048576), loads=FILE (write "START END NAME" to FILE for each compiled
 * method stored, as it is stored).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <ucontext.h>

#include <jvmti.h>

#include <latch/publish.h>
#include <latch/range.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

_Static_assert(ATOMIC_LONG_LOCK_FREE == 2 && ATOMIC_BOOL_LOCK_FREE == 2 &&
                   ATOMIC_INT_LOCK_FREE == 2,
               "the signal handler needs lock-free atomics");

/* ---- the records: what a range's value points to ---- */

enum kind { KIND_METHOD, KIND_STUB };

/* Longer names are cut, ending in "...". */
#define RECORD_NAME_MAX 160

struct record {
  /*
   * First: a range's value points to its record, and so to a
   * NUL-terminated name, which is what LATCH_PUBLISH_NAMES tells
   * outside readers (latch-inspect prints it).
   */
  char name[RECORD_NAME_MAX]; /* "Class.method" or the stub's name */
  enum kind kind;
  jmethodID method; /* KIND_METHOD: the method compiled */
  /* The range stored with this record (value: the record): what the unload
   * erases. */
  struct latch_range range;
  struct record
      *next; /* KIND_METHOD: the next record of its unload index bucket */
  /*
   * After sampling stopped, for the replay (check_samples()) and the
   * profile: in the states S_j with born <= j < died (born -1: never
   * stored; died LONG_MAX: never removed).
   */
  long born, died;
  unsigned long samples;
};

/*
 * Records are never freed while the process runs: a signal handler may
 * hold a value it found a moment before the range was erased, and the
 * profile reads every record after the run.  They live in an append-only
 * arena of chunks (never moved, so pointers stay valid), freed at VM death
 * once sampling has stopped.
 */
#define CHUNK_RECORDS 1024
struct chunk {
  struct chunk *next;
  size_t used;
  struct record records[CHUNK_RECORDS];
};

/* ---- the writers' log, replayed by the check ---- */

/*
 * OP_STORE and OP_ERASE_IF are writer calls: op number k took the sequence
 * numbers 2k and 2k + 1 before and after the call, and is logged with its
 * result, failed or not.  A store that evicted ranges is logged as one
 * OP_EVICT entry per evicted range, then its OP_STORE, all with the
 * store's sequence number: readers see the evictions and the new range in
 * one flip.
 */
enum op { OP_STORE, OP_EVICT, OP_ERASE_IF };

struct event {
  enum op op;
  int result;
  struct latch_range range;
  unsigned long seq;
};

/* ---- the samples ---- */

struct sample {
  uintptr_t pc;
  struct latch_range found; /* valid when hit */
  unsigned long before, after;
  uint32_t ns; /* the lookup's cost */
  bool hit, mid_update;
};

/* ---- the agent's state ---- */

static jvmtiEnv *jvmti;
static struct latch_range_map code;

/*
 * The agent's mutex guards the agent's bookkeeping, not the map.  The map
 * locks its writers itself, latch_range_erase_if() compares and erases in
 * one step under that lock and latch_range_store() evicts and inserts in
 * one step, so no find-compare-erase or erase-then-insert needs a lock of
 * ours.  agent_lock is still held:
 *
 *  - around each writer call and its log entries: the check replays the
 *    log in the order the map applied the calls, which it knows only when
 *    each call runs alone between its sequence numbers 2k and 2k + 1;
 *  - for the record arena, the unload index, the loads file and the
 *    counts: plain memory, shared by the JVM's threads that post events;
 *  - for dead: VM death destroys the map, so no callback may be in it then.
 *
 * An agent without the check, which kept the map until the process ends,
 * would hold it for the second item only and call the map outside it.
 * The signal handlers never take it.
 */
static pthread_mutex_t agent_lock = PTHREAD_MUTEX_INITIALIZER;
static bool dead; /* VM death: the callbacks do nothing more */
static struct chunk *chunks;
static struct event *events;
static size_t nevents, events_cap;
static unsigned long loads, unloads, stale_unloads, gone_unloads, stubs,
    evicting_stores, evictions, store_retries, duplicates, failures;
static FILE *loads_file;

/*
 * The unload index: the records of stored methods by (method, start), so
 * that CompiledMethodUnload, which names only those, erases the very
 * record its load stored.  HotSpot queues a method's unload event before
 * its space can be reused, and sends the queued events in order, so among
 * records with the same key the oldest is the one unloaded.  A record
 * leaves the index at its unload; one evicted by newer code stays until
 * then.
 */
#define INDEX_BUCKETS 4096
static struct record *unload_index[INDEX_BUCKETS];

/*
 * The writers' sequence number: 2k before op k started, 2k + 1 while it
 * runs, 2k + 2 once it returned.  Only writers holding agent_lock add to it.
 */
static atomic_ulong seq;
/*
 * Set around each writer call.  initial-exec: a handler reads it at a fixed
 * offset from the thread pointer, where the default model for a dlopen()ed
 * library may call __tls_get_addr(), which can allocate on a thread's first
 * access and so is not async-signal-safe.
 */
static _Thread_local volatile sig_atomic_t in_writer
    __attribute__((tls_model("initial-exec")));

static struct sample *samples;
static unsigned long max_samples = 1ul << 20;
static long interval_us = 1000;
static atomic_ulong nsamples;
static atomic_bool sampling;
static atomic_int handlers_active;

struct timed_thread {
  pid_t tid;
  timer_t timer;
  bool armed;
};
static struct timed_thread *timed;
static size_t ntimed, timed_cap;
static pthread_t timer_thread;
static bool timer_thread_started;

/* ---- the writer side, under agent_lock ---- */

/* @name, cut to RECORD_NAME_MAX - 1 bytes, "..." marking a cut. */
static void name_set(char *dst, const char *name) {
  if ((size_t)snprintf(dst, RECORD_NAME_MAX, "%s", name) >= RECORD_NAME_MAX)
    memcpy(dst + RECORD_NAME_MAX - 4, "...", 4);
}

static struct record *record_new(enum kind kind, jmethodID method,
                                 const char *name, uintptr_t start,
                                 uintptr_t end) {
  struct record *r;

  if (!chunks || chunks->used == CHUNK_RECORDS) {
    struct chunk *c = calloc(1, sizeof(*c));

    if (!c)
      return NULL;
    c->next = chunks;
    chunks = c;
  }
  r = &chunks->records[chunks->used++];
  *r = (struct record){.kind = kind,
                       .method = method,
                       .range = {start, end, r},
                       .born = -1,
                       .died = LONG_MAX};
  name_set(r->name, name);
  return r;
}

static size_t index_bucket(jmethodID method, uintptr_t start) {
  uint64_t h = ((uint64_t)(uintptr_t)method ^ ((uint64_t)start >> 4)) *
               0x9e3779b97f4a7c15u;

  return (size_t)(h >> 32) % INDEX_BUCKETS;
}

static void index_add(struct record *rec) {
  struct record **head =
      &unload_index[index_bucket(rec->method, rec->range.start)];

  rec->next = *head;
  *head = rec;
}

/* Take the oldest record of @method at @start out of the index; NULL if none.
 */
static struct record *index_take(jmethodID method, uintptr_t start) {
  struct record **link = NULL, *rec;

  for (struct record **at = &unload_index[index_bucket(method, start)]; *at;
       at = &(*at)->next)
    if ((*at)->method == method && (*at)->range.start == start)
      link = at; /* the newest come first: keep the last */
  if (!link)
    return NULL;
  rec = *link;
  *link = rec->next;
  return rec;
}

/* Room for @more log entries. */
static bool events_reserve(size_t more) {
  if (events_cap - nevents < more) {
    size_t cap = events_cap ? events_cap : 4096;
    struct event *e;

    while (cap - nevents < more)
      cap *= 2;
    e = realloc(events, cap * sizeof(*e));

    if (!e)
      return false;
    events = e;
    events_cap = cap;
  }
  return true;
}

/* Begin a writer call: the flag for this thread's handler, then the sequence
 * number. */
static unsigned long writer_begin(void) {
  in_writer = 1;
  /* A handler on this thread sees the flag set before any store of the call. */
  atomic_signal_fence(memory_order_seq_cst);
  /*
   * 2k -> 2k + 1.  Sequenced before the call's flips of the latch, which
   * are release operations: a lookup that saw any of this call's
   * changes, then issued an acquire fence, reads this value or a later
   * one.  acq_rel keeps the call's own stores after it as well.
   */
  return atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel);
}

static void writer_end(void) {
  /*
   * 2k + 1 -> 2k + 2.  Release: a handler whose acquire load reads
   * 2k + 2 or more sees every store of the call.
   */
  atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel);
  atomic_signal_fence(memory_order_seq_cst);
  in_writer = 0;
}

/*
 * Store @rec's range, evicting what it overlaps, with room for @room
 * evicted ranges in @evicted; *@n: how many were evicted (or, on -ENOSPC,
 * overlap).  Logged: the evictions and the store at one sequence number.
 */
static int logged_store(const struct record *rec, struct latch_range *evicted,
                        size_t room, size_t *n) {
  unsigned long s;
  int err;

  if (!events_reserve(room + 1))
    return -ENOMEM;
  s = writer_begin();
  err = latch_range_store(&code, rec->range.start, rec->range.end,
                          rec->range.value, evicted, room, n);
  writer_end();
  for (size_t i = 0; err == 0 && i < *n; i++)
    events[nevents++] = (struct event){OP_EVICT, 0, evicted[i], s};
  events[nevents++] = (struct event){OP_STORE, err, rec->range, s};
  return err;
}

/* Erase @rec's range if the map still holds it as stored. */
static int logged_erase_if(const struct record *rec) {
  unsigned long s;
  int err;

  if (!events_reserve(1))
    return -ENOMEM;
  s = writer_begin();
  err = latch_range_erase_if(&code, &rec->range);
  writer_end();
  events[nevents++] = (struct event){OP_ERASE_IF, err, rec->range, s};
  return err;
}

/* Room for this many evicted ranges on the stack; a store that evicts more
 * calls again. */
#define EVICTED_ROOM 4

/*
 * Store @rec's range, evicting in the same flip every range it overlaps
 * (a sample never falls into a gap between the old code and the new).
 * When more ranges overlap than @evicted has room for, the store changes
 * nothing and says how many: again with that much room.  (Under
 * agent_lock nothing changes the map in between; the loop is for an agent
 * whose writers do not share a lock.)
 */
static int store_code(const struct record *rec) {
  struct latch_range few[EVICTED_ROOM], *evicted = few;
  size_t room = EVICTED_ROOM, n = 0;
  int err;

  while ((err = logged_store(rec, evicted, room, &n)) == -ENOSPC) {
    store_retries++;
    if (evicted != few)
      free(evicted);
    evicted = malloc(n * sizeof(*evicted));
    if (!evicted)
      return -ENOMEM;
    room = n;
  }
  if (err == 0 && n > 0) {
    evicting_stores++;
    evictions += n;
  }
  if (evicted != few)
    free(evicted);
  return err;
}

/*
 * The same code twice: a method's, or a stub at the same place (HotSpot's
 * replay names adapters without the fingerprint the first event gave).
 */
static bool same_code(const struct record *a, enum kind kind, jmethodID method,
                      uintptr_t start, uintptr_t end) {
  if (a->kind != kind || a->range.start != start || a->range.end != end)
    return false;
  return kind == KIND_STUB || a->method == method;
}

/*
 * Add the code [start, end) named @name.  A range already there for the
 * same code is a replay of GenerateEvents: nothing to do.  Ranges it
 * overlaps are stale: HotSpot reuses the space of freed code, and for some
 * stubs it never says it freed them, while a CompiledMethodUnload may come
 * after the space was reused.  The store evicts them.
 */
static void add_code(enum kind kind, jmethodID method, const char *name,
                     const void *addr, size_t size) {
  uintptr_t start = (uintptr_t)addr, end = start + size;
  struct latch_range r;
  struct record *rec;

  if (size == 0 || end < start)
    return;
  pthread_mutex_lock(&agent_lock);
  if (dead) {
    /* nothing */
  } else if (latch_range_find(&code, start, &r) &&
             same_code(r.value, kind, method, start, end)) {
    duplicates++;
  } else if (!(rec = record_new(kind, method, name, start, end)) ||
             store_code(rec) != 0) {
    failures++;
  } else if (kind == KIND_STUB) {
    stubs++;
  } else {
    loads++;
    index_add(rec);
    if (loads_file) {
      fprintf(loads_file, "%#" PRIxPTR " %#" PRIxPTR " %s\n", start, end,
              rec->name);
      fflush(loads_file);
    }
  }
  pthread_mutex_unlock(&agent_lock);
}

/* ---- the JVMTI callbacks ---- */

/* "Lpkg/Cls;" and "m" -> "pkg.Cls.m" in @out; false when the JVM cannot tell.
 */
static bool method_name(jmethodID method, char out[RECORD_NAME_MAX]) {
  char *mname = NULL, *csig = NULL;
  jclass klass = NULL;
  bool ok = false;

  if ((*jvmti)->GetMethodName(jvmti, method, &mname, NULL, NULL) ==
          JVMTI_ERROR_NONE &&
      (*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) ==
          JVMTI_ERROR_NONE &&
      (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) ==
          JVMTI_ERROR_NONE) {
    const char *c = csig[0] == 'L' ? csig + 1 : csig;
    int n = (int)strcspn(c, ";");

    /* Cut by record_new() if too long. */
    if (snprintf(out, RECORD_NAME_MAX, "%.*s.%s", n, c, mname) >= 0) {
      for (int i = 0; i < n && i < RECORD_NAME_MAX && out[i]; i++)
        out[i] = out[i] == '/' ? '.' : out[i];
      ok = true;
    }
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
  (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
  return ok;
}

static void JNICALL on_compiled_method_load(jvmtiEnv *env, jmethodID method,
                                            jint code_size,
                                            const void *code_addr,
                                            jint map_length,
                                            const jvmtiAddrLocationMap *map,
                                            const void *compile_info) {
  char name[RECORD_NAME_MAX];

  (void)env, (void)map_length, (void)map, (void)compile_info;
  if (code_size > 0 && method_name(method, name))
    add_code(KIND_METHOD, method, name, code_addr, (size_t)code_size);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *env, jmethodID method,
                                              const void *code_addr) {
  struct record *rec;

  (void)env;
  pthread_mutex_lock(&agent_lock);
  /*
   * Erase the range this method's load stored at @code_addr, only if
   * the map still holds it as stored (start, end and record): by the
   * time HotSpot sends this event the space may already hold other
   * code, which a later store put there evicting this range, and
   * erasing by address alone would remove the newcomer.
   * latch_range_erase_if() compares and erases in one step under the
   * map's own lock; agent_lock is held here for the log and the index
   * (see its comment), not for the map.
   *
   * The record is not freed here, nor ever while the process runs: a
   * signal handler on another thread may have found it just before the
   * erase and still hold its pointer, and the profile reads it after
   * the run.  Records stay in their arena until VM death, when sampling
   * has stopped and no handler can hold one.
   */
  if (dead) {
    /* nothing */
  } else if (!(rec = index_take(method, (uintptr_t)code_addr))) {
    gone_unloads++; /* never stored: it came before the agent saw its load */
  } else {
    switch (logged_erase_if(rec)) {
    case 0:
      unloads++;
      break;
    case -ESTALE: /* the start holds newer code, which evicted this range */
      stale_unloads++;
      break;
    case -ENOENT: /* evicted by newer code, which does not start here */
      gone_unloads++;
      break;
    default:
      failures++;
    }
  }
  pthread_mutex_unlock(&agent_lock);
}

static void JNICALL on_dynamic_code_generated(jvmtiEnv *env, const char *name,
                                              const void *address,
                                              jint length) {
  (void)env;
  if (length > 0)
    add_code(KIND_STUB, NULL, name ? name : "(stub)", address, (size_t)length);
}

/* ---- sampling ---- */

static uintptr_t context_pc(const void *context) {
  const ucontext_t *uc = context;

#if defined(__x86_64__)
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)uc->uc_mcontext.pc;
#else
#error "context_pc(): add where this architecture's ucontext keeps the PC"
#endif
}

static uint32_t ns_between(const struct timespec *a, const struct timespec *b) {
  int64_t ns =
      (int64_t)(b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec);

  return ns < 0 ? 0 : ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

/* Async-signal-safe: lock-free atomics, clock_gettime() and latch_range_find()
 * only. */
static void on_sigprof(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;

  (void)sig, (void)info;
  /*
   * seq_cst, paired with stop_sampling(): either this handler sees
   * sampling cleared and writes nothing, or stop_sampling() sees it
   * active and waits until it is done.
   */
  atomic_fetch_add_explicit(&handlers_active, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&sampling, memory_order_seq_cst)) {
    /* Relaxed: the slot is this handler's alone; publication is the decrement
     * below. */
    unsigned long i =
        atomic_fetch_add_explicit(&nsamples, 1, memory_order_relaxed);

    if (i < max_samples) {
      struct sample *s = &samples[i];
      struct timespec t0, t1;

      s->pc = context_pc(context);
      s->mid_update = in_writer;
      /*
       * Acquire: every writer call that ended before this
       * load (seq >= 2k + 2 for op k) happens before the lookup.
       */
      s->before = atomic_load_explicit(&seq, memory_order_acquire);
      clock_gettime(CLOCK_MONOTONIC, &t0);
      s->hit = latch_range_find(&code, s->pc, &s->found);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      /*
       * Acquire fence: if the lookup read a flip of op k (a
       * release), the fence makes op k's writer_begin()
       * happen before the load below, which then reads
       * 2k + 1 or more.
       */
      atomic_thread_fence(memory_order_acquire);
      s->after = atomic_load_explicit(&seq, memory_order_relaxed);
      s->ns = ns_between(&t0, &t1);
    }
  }
  /* Release: publishes the slot to stop_sampling()'s acquire loads. */
  atomic_fetch_sub_explicit(&handlers_active, 1, memory_order_release);
  errno = saved_errno;
}

/*
 * A thread's CPU clock, by its id: the kernel's encoding of per-thread
 * CPU clocks (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)), which lets one
 * thread arm timers for every other.
 */
static clockid_t thread_cpu_clock(pid_t tid) {
  return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

/* Arm a CPU-time timer for every thread of /proc/self/task not armed yet. */
static void arm_new_threads(void) {
  struct itimerspec every = {
      {interval_us / 1000000, interval_us % 1000000 * 1000},
      {interval_us / 1000000, interval_us % 1000000 * 1000}};
  DIR *dir = opendir("/proc/self/task");
  struct dirent *d;

  if (!dir)
    return;
  while ((d = readdir(dir))) {
    pid_t tid = (pid_t)atol(d->d_name);
    struct sigevent sev;
    struct timed_thread *t;
    size_t i;

    if (tid <= 0)
      continue;
    for (i = 0; i < ntimed && timed[i].tid != tid; i++)
      ;
    if (i < ntimed)
      continue;
    if (ntimed == timed_cap) {
      size_t cap = timed_cap ? 2 * timed_cap : 64;
      struct timed_thread *n = realloc(timed, cap * sizeof(*n));

      if (!n)
        break;
      timed = n;
      timed_cap = cap;
    }
    t = &timed[ntimed++];
    t->tid = tid;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_notify_thread_id = tid;
    /* A thread gone meanwhile fails here: it stays listed, unarmed. */
    t->armed = timer_create(thread_cpu_clock(tid), &sev, &t->timer) == 0;
    if (t->armed && timer_settime(t->timer, 0, &every, NULL) != 0) {
      timer_delete(t->timer);
      t->armed = false;
    }
  }
  closedir(dir);
}

/* New threads (the JIT adds compiler threads on demand) are armed within 20 ms.
 */
static void *timer_main(void *arg) {
  const struct timespec pause = {0, 20000000};
  sigset_t prof;

  (void)arg;
  sigemptyset(&prof);
  sigaddset(&prof, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &prof, NULL);
  while (atomic_load_explicit(&sampling, memory_order_relaxed)) {
    arm_new_threads();
    nanosleep(&pause, NULL);
  }
  return NULL;
}

static bool start_sampling(void) {
  struct sigaction sa;

  samples = mmap(NULL, max_samples * sizeof(*samples), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (samples == MAP_FAILED) {
    samples = NULL;
    return false;
  }
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, NULL) != 0)
    return false;
  atomic_store_explicit(&sampling, true, memory_order_seq_cst);
  timer_thread_started =
      pthread_create(&timer_thread, NULL, timer_main, NULL) == 0;
  return timer_thread_started;
}

static void stop_sampling(void) {
  const struct timespec pause = {0, 1000000};
  struct sigaction sa;

  /* seq_cst: see on_sigprof(). */
  atomic_store_explicit(&sampling, false, memory_order_seq_cst);
  if (timer_thread_started)
    pthread_join(timer_thread, NULL);
  timer_thread_started = false;
  for (size_t i = 0; i < ntimed; i++)
    if (timed[i].armed)
      timer_delete(timed[i].timer);
  /* Ignored from now on: a signal still pending from a deleted timer is
   * discarded. */
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, NULL);
  /*
   * seq_cst, then acquire by the same load: once it reads 0 every
   * handler that took a slot has filled it and left.
   */
  while (atomic_load_explicit(&handlers_active, memory_order_seq_cst) != 0)
    nanosleep(&pause, NULL);
}

/* ---- the check ---- */

static bool is_record(const void *p) {
  /* Compared as integers: @p may point anywhere when an answer is wrong. */
  for (const struct chunk *c = chunks; c; c = c->next) {
    uintptr_t first = (uintptr_t)c->records, off = (uintptr_t)p - first;

    if ((uintptr_t)p >= first && off < c->used * sizeof(struct record))
      return off % sizeof(struct record) == 0;
  }
  return false;
}

static int by_start(const void *a, const void *b) {
  const struct record *x = *(const struct record *const *)a,
                      *y = *(const struct record *const *)b;

  return (x->range.start > y->range.start) - (x->range.start < y->range.start);
}

/* The states a range was in: S_j for born <= j < died. */
struct span {
  long born, died;
};

static int by_born(const void *a, const void *b) {
  const struct span *x = a, *y = b;

  return (x->born > y->born) - (x->born < y->born);
}

/* A record the log says was in the map as @r, from op k on, and still is. */
static bool logged_live(const struct latch_range *r, size_t k) {
  const struct record *rec = r->value;

  return is_record(rec) && rec->born >= 0 && (size_t)rec->born <= k &&
         rec->died == LONG_MAX && rec->range.start == r->start &&
         rec->range.end == r->end;
}

/*
 * Replay the writers' log: op k turns state S_k into S_(k+1) (S_0 empty),
 * so a range stored by op b and erased or evicted by op d is in S_j for
 * b + 1 <= j < d + 1.  A lookup that read before = seq before it and
 * after = seq after it saw one of the states S_j with
 *
 *	before / 2 <= j <= (after + 1) / 2
 *
 * (ops that had returned are in; an op not yet begun is out; an op
 * under way either way).  A found range must hold the PC and be in one of
 * those states; a miss is wrong when every one of those states has a
 * range holding the PC (ranges never overlap, so in each state at most one
 * does, and a store that replaced one by another left no state without:
 * a miss there would be a reader seeing the eviction without the new
 * range).  Returns the number of wrong answers and sets *@checked.
 */
static unsigned long check_samples(unsigned long n, unsigned long *checked,
                                   FILE *out) {
  struct record **live = NULL;
  struct span *spans = NULL;
  size_t nlive = 0, k = 0;
  uintptr_t maxlen = 0;
  unsigned long wrong = 0;

  /* k: the op the entry belongs to (evictions come before their store). */
  for (size_t i = 0; i < nevents; k += events[i].op != OP_EVICT, i++) {
    const struct event *e = &events[i];
    struct record *rec = e->range.value;

    if (e->seq != 2 * k) {
      fprintf(out, "jvmti-agent: check: op %zu has sequence number %lu\n", k,
              e->seq);
      wrong++;
    }
    if (e->result != 0)
      continue;
    if (e->op == OP_STORE && is_record(rec) && rec->born < 0) {
      rec->born = (long)k + 1;
    } else if (e->op == OP_STORE || !logged_live(&e->range, k)) {
      fprintf(out, "jvmti-agent: check: op %zu %s a range %s the map\n", k,
              e->op == OP_STORE ? "stored" : "removed",
              e->op == OP_STORE ? "already in" : "not in");
      wrong++;
    } else {
      rec->died = (long)k + 1;
    }
  }
  for (const struct chunk *c = chunks; c; c = c->next)
    nlive += c->used;
  live = malloc((nlive ? nlive : 1) * sizeof(*live));
  spans = malloc((nlive ? nlive : 1) * sizeof(*spans));
  if (!live || !spans) {
    free(live);
    free(spans);
    fprintf(out, "jvmti-agent: check: out of memory\n");
    return wrong + 1;
  }
  nlive = 0;
  for (struct chunk *c = chunks; c; c = c->next)
    for (size_t i = 0; i < c->used; i++)
      if (c->records[i].born >= 0) {
        const struct latch_range *r = &c->records[i].range;

        live[nlive++] = &c->records[i];
        if (r->end - r->start > maxlen)
          maxlen = r->end - r->start;
      }
  qsort(live, nlive, sizeof(*live), by_start);

  for (unsigned long i = 0; i < n; i++) {
    const struct sample *s = &samples[i];
    long lo = (long)(s->before / 2), hi = (long)((s->after + 1) / 2);
    bool ok;

    if (s->hit) {
      const struct record *rec = s->found.value;

      ok = is_record(rec) && rec->born >= 0 &&
           s->found.start == rec->range.start &&
           s->found.end == rec->range.end && s->pc >= rec->range.start &&
           s->pc < rec->range.end && rec->born <= hi && rec->died > lo;
    } else {
      /* The ranges that may hold the PC start in [pc - maxlen, pc]. */
      size_t a = 0, b = nlive, nspans = 0;
      long uncovered =
          lo; /* the first state from lo on where none holds the PC */

      while (a < b) { /* b: the first range starting above the PC */
        size_t m = a + (b - a) / 2;

        if (live[m]->range.start <= s->pc)
          a = m + 1;
        else
          b = m;
      }
      while (b-- > 0 && s->pc - live[b]->range.start < maxlen)
        if (s->pc < live[b]->range.end)
          spans[nspans++] = (struct span){live[b]->born, live[b]->died};
      qsort(spans, nspans, sizeof(*spans), by_born);
      for (size_t j = 0; j < nspans && spans[j].born <= uncovered; j++)
        if (spans[j].died > uncovered)
          uncovered = spans[j].died;
      ok = uncovered <= hi;
    }
    if (!ok && wrong < 10)
      fprintf(out,
              "jvmti-agent: check: wrong answer for pc %#" PRIxPTR
              " (seq %lu..%lu): %s "
              "[%#" PRIxPTR ", %#" PRIxPTR ")\n",
              s->pc, s->before, s->after, s->hit ? "found" : "missed",
              s->hit ? s->found.start : 0, s->hit ? s->found.end : 0);
    wrong += !ok;
  }
  free(live);
  free(spans);
  *checked = n;
  return wrong;
}

/* ---- the report ---- */

struct entry {
  const char *name;
  enum kind kind;
  unsigned long samples;
};

static int by_name(const void *a, const void *b) {
  const struct entry *x = a, *y = b;

  return x->kind != y->kind ? (int)x->kind - (int)y->kind
                            : strcmp(x->name, y->name);
}

static int by_samples(const void *a, const void *b) {
  const struct entry *x = a, *y = b;

  return x->samples != y->samples ? (x->samples < y->samples ? 1 : -1)
                                  : by_name(a, b);
}

static int by_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

  return (x > y) - (x < y);
}

static void report(FILE *out) {
  unsigned long taken = atomic_load_explicit(&nsamples, memory_order_relaxed);
  unsigned long n = taken < max_samples ? taken : max_samples;
  unsigned long in_jit = 0, in_stubs = 0, mid = 0, checked = 0, wrong;
  size_t nentries = 0, merged = 0;
  struct entry *entries;
  uint32_t *ns = malloc((n ? n : 1) * sizeof(*ns));
  double ns_sum = 0;

  wrong = check_samples(n, &checked, out);
  for (unsigned long i = 0; i < n; i++) {
    const struct sample *s = &samples[i];

    mid += s->mid_update;
    ns_sum += s->ns;
    if (ns)
      ns[i] = s->ns;
    if (s->hit && is_record(s->found.value)) {
      struct record *rec = s->found.value;

      rec->samples++;
      rec->kind == KIND_METHOD ? in_jit++ : in_stubs++;
    }
  }
  if (ns)
    qsort(ns, n, sizeof(*ns), by_u32);

  /* The flat profile: samples per name, over every compilation of it. */
  for (const struct chunk *c = chunks; c; c = c->next)
    nentries += c->used;
  entries = malloc((nentries ? nentries : 1) * sizeof(*entries));
  if (entries) {
    nentries = 0;
    for (const struct chunk *c = chunks; c; c = c->next)
      for (size_t i = 0; i < c->used; i++)
        if (c->records[i].samples)
          entries[nentries++] = (struct entry){
              c->records[i].name, c->records[i].kind, c->records[i].samples};
    qsort(entries, nentries, sizeof(*entries), by_name);
    for (size_t i = 0; i < nentries; i++) {
      if (merged && by_name(&entries[merged - 1], &entries[i]) == 0)
        entries[merged - 1].samples += entries[i].samples;
      else
        entries[merged++] = entries[i];
    }
    qsort(entries, merged, sizeof(*entries), by_samples);
    fprintf(
        out,
        "jvmti-agent: flat profile, %lu samples (top 15 of the JVM's code)\n",
        n);
    fprintf(out, "  %8s %6s  %s\n", "samples", "%", "code");
    for (size_t i = 0; i < merged && i < 15; i++)
      fprintf(out, "  %8lu %5.1f%%  %s%s\n", entries[i].samples,
              100.0 * (double)entries[i].samples / (double)(n ? n : 1),
              entries[i].kind == KIND_STUB ? "[stub] " : "", entries[i].name);
    fprintf(out,
            "  %8lu %5.1f%%  (elsewhere: the JVM, libraries, the kernel)\n",
            n - in_jit - in_stubs,
            100.0 * (double)(n - in_jit - in_stubs) / (double)(n ? n : 1));
    free(entries);
  }
  fprintf(out,
          "jvmti-agent: loads=%lu unloads=%lu stale_unloads=%lu "
          "gone_unloads=%lu stubs=%lu "
          "evicting_stores=%lu evictions=%lu store_retries=%lu duplicates=%lu "
          "failures=%lu "
          "samples=%lu in_jit=%lu in_stubs=%lu mid_update=%lu dropped=%lu "
          "lookup_ns_mean=%.0f lookup_ns_median=%u lookup_ns_max=%u\n",
          loads, unloads, stale_unloads, gone_unloads, stubs, evicting_stores,
          evictions, store_retries, duplicates, failures, n, in_jit, in_stubs,
          mid, taken - n, n ? ns_sum / (double)n : 0.0, ns && n ? ns[n / 2] : 0,
          ns && n ? ns[n - 1] : 0);
  fprintf(out, "jvmti-agent: check: %lu answers, %lu wrong%s\n", checked, wrong,
          wrong ? ": FAIL" : "");
  fflush(out);
  free(ns);
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni) {
  (void)env, (void)jni;
  pthread_mutex_lock(&agent_lock);
  dead = true; /* callbacks still to come leave the map alone */
  pthread_mutex_unlock(&agent_lock);
  stop_sampling();
  pthread_mutex_lock(&agent_lock);
  report(stdout);
  /*
   * Out of the registry before anything it points to goes: an outside
   * reader still inside the map then reads memory that changed and says
   * so (latch_publish(3)).
   */
  latch_range_unpublish(&code);
  /* No handler runs any more and no writer will: free everything. */
  while (chunks) {
    struct chunk *c = chunks;

    chunks = c->next;
    free(c);
  }
  memset(unload_index, 0, sizeof(unload_index));
  if (loads_file)
    fclose(loads_file);
  loads_file = NULL;
  free(events);
  events = NULL;
  nevents = events_cap = 0;
  free(timed);
  timed = NULL;
  ntimed = timed_cap = 0;
  if (samples)
    munmap(samples, max_samples * sizeof(*samples));
  samples = NULL;
  latch_range_map_destroy(&code);
  pthread_mutex_unlock(&agent_lock);
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread) {
  (void)jni, (void)thread;
  if (!start_sampling())
    fprintf(stderr, "jvmti-agent: cannot start sampling: %s\n",
            strerror(errno));
  /* Code generated before the events were enabled, and again what came since
   * (duplicates). */
  (*env)->GenerateEvents(env, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
  (*env)->GenerateEvents(env, JVMTI_EVENT_COMPILED_METHOD_LOAD);
}

/* ---- loading ---- */

static void open_loads_file(const char *path, size_t len) {
  char *p = strndup(path, len);

  if (loads_file)
    fclose(loads_file);
  loads_file = p ? fopen(p, "we") : NULL;
  if (!loads_file)
    fprintf(stderr, "jvmti-agent: cannot write %.*s: %s\n", (int)len, path,
            strerror(errno));
  free(p);
}

static void parse_options(const char *options) {
  while (options && *options) {
    const char *comma = strchr(options, ',');
    size_t len = comma ? (size_t)(comma - options) : strlen(options);

    if (len > 12 && strncmp(options, "interval_us=", 12) == 0)
      interval_us = atol(options + 12);
    else if (len > 12 && strncmp(options, "max_samples=", 12) == 0)
      max_samples = strtoul(options + 12, NULL, 10);
    else if (len > 6 && strncmp(options, "loads=", 6) == 0)
      open_loads_file(options + 6, len - 6);
    else
      fprintf(stderr, "jvmti-agent: unknown option '%.*s'\n", (int)len,
              options);
    options = comma ? comma + 1 : NULL;
  }
  if (interval_us < 10)
    interval_us = 10;
  if (max_samples < 1)
    max_samples = 1;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  static const jvmtiEvent wanted[] = {
      JVMTI_EVENT_VM_INIT,
      JVMTI_EVENT_VM_DEATH,
      JVMTI_EVENT_COMPILED_METHOD_LOAD,
      JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
      JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
  };
  jvmtiCapabilities caps;
  jvmtiEventCallbacks callbacks;
  int err;

  (void)reserved;
  parse_options(options);
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK ||
      latch_range_map_init(&code) != 0) {
    fprintf(stderr, "jvmti-agent: no JVMTI 1.2 environment\n");
    return JNI_ERR;
  }
  /*
   * For readers outside the JVM (latch-inspect PID --dump jvm-code).
   * NAMES: each value points to a record, whose first member is its
   * name.  The profiler works without it: a failure is only reported.
   */
  err = latch_range_publish(&code, "jvm-code", LATCH_PUBLISH_NAMES);
  if (err)
    fprintf(stderr, "jvmti-agent: cannot publish the code map: %s\n",
            strerror(-err));
  memset(&caps, 0, sizeof(caps));
  caps.can_generate_compiled_method_load_events = 1;
  memset(&callbacks, 0, sizeof(callbacks));
  callbacks.VMInit = on_vm_init;
  callbacks.VMDeath = on_vm_death;
  callbacks.CompiledMethodLoad = on_compiled_method_load;
  callbacks.CompiledMethodUnload = on_compiled_method_unload;
  callbacks.DynamicCodeGenerated = on_dynamic_code_generated;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventCallbacks(jvmti, &callbacks, sizeof(callbacks)) !=
          JVMTI_ERROR_NONE) {
    fprintf(stderr, "jvmti-agent: cannot have the compiled-code events\n");
    return JNI_ERR;
  }
  for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
    if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, wanted[i],
                                           NULL) != JVMTI_ERROR_NONE) {
      fprintf(stderr, "jvmti-agent: cannot enable event %d\n", (int)wanted[i]);
      return JNI_ERR;
    }
  return JNI_OK;
}
