/* tests/hostile/hostile_plugin.c: hostile libraries. The reference plugin
 * (tests/fixtures/reference_plugin.c) is compiled into this file unchanged, and its table is
 * wrapped so that, with a few macros, one library misbehaves in exactly one way:
 *
 *   HOSTILE_AT=AT_x HOSTILE_DO=DO_y   do y (crash, exit, hang, allocate ...) at place x
 *   HOSTILE_GARBAGE=G_x               every export returns a tensor with garbage x
 *   HOSTILE_CTOR=C_x                  the library constructor tampers with process state x
 *   HOSTILE_TABLE=T_x                 dlpv_get_plugin returns a bad table x
 *
 * tests/hostile/CMakeLists.txt builds one library per table line and says what the
 * validator must report for it. Nothing here is meant to be clean code: it is the enemy.
 * SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <setjmp.h>
#include <ctype.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef MUTANT_NAME
#define MUTANT_NAME "dlpv-hostile"
#endif
/* The reference's own entry point is renamed; ours (below) wraps its table. */
#define dlpv_get_plugin dlpv_hostile_reference_entry
#include "../fixtures/reference_plugin.c"
#undef dlpv_get_plugin

/* ---- places and deeds -------------------------------------------------------------------- */
#define AT_NONE 0
#define AT_CTOR 1       /* the library constructor (runs inside dlopen) */
#define AT_GET_PLUGIN 2 /* dlpv_get_plugin() */
#define AT_EXPORT 3     /* export_versioned / export_legacy */
#define AT_IMPORT 4     /* import_versioned / import_legacy */
#define AT_READ 5       /* read_array */
#define AT_DELETER 6    /* the deleter of a tensor this library exported */

#define DO_NOTHING 0
#define DO_SEGV 1        /* write through NULL */
#define DO_ABORT 2       /* abort() */
#define DO_EXIT0 3       /* exit(0): atexit handlers run, the process "succeeds" */
#define DO__EXIT3 4      /* _exit(3) */
#define DO_LOOP 5        /* spin forever */
#define DO_SLEEP 6       /* sleep far past any timeout */
#define DO_ALLOC 7       /* allocate and touch memory without bound, no NULL check */
#define DO_FLOOD 8       /* megabytes of binary junk on stdout and stderr, then carry on */
#define DO_FAKE_RESULT 9 /* print fake protocol "pass" lines on every low fd, then crash */
#define DO_FORK_ORPHAN 10 /* fork a child that keeps every inherited fd open, then crash */
#define DO_SEGV_IN_HANDLER_LOOP 11 /* SIGSEGV handler that returns: the fault repeats forever */
#define DO_FORGE_EVENT 12 /* find the worker's event pipe (/proc/self/fd) and write well-formed
                             "pass" results into it (old and guessed-nonce forms), then carry on */
#define DO_FORGE_PARTIAL 13 /* write half an event line (no newline) into the event pipe, carry on */
#define DO_REWIRE_EVENT 14 /* find the worker's event pipe (/proc/self/fd: a writable pipe above
                              stderr), put a pipe of its own over it and relay what the worker
                              writes to the real one, every "fail" turned into "pass": a man in
                              the middle that learns each nonce from the worker itself */
#define DO_NEVER_RETURN 15 /* leave the call without returning to the caller: pthread_exit() on
                              the calling thread (a deleter that jumps out of the call) */
#define DO_LONGJMP_BACK 16 /* longjmp to the jmp_buf the library's last export (JMP_AT_EXPORT) or
                              its entry point (JMP_AT_ENTRY) took with setjmp: a frame long gone */
#define DO_FORGE_NONCE 17  /* find the command in flight in the worker's memory (its nonce and
                              case id: "run NONCE SUBJECT CASE"), then write a well-formed "pass"
                              result for it into every writable pipe (the worker's event pipe at
                              fd 501 among them), then carry on */
#define DO_FORGE_RENEW 18  /* find the command in flight as DO_FORGE_NONCE does, then forever write
                              well-formed phase events for it that alternate between "load" and
                              the case's own phase: each change of phase used to buy new time */
#define JMP_AT_EXPORT 1
#define JMP_AT_ENTRY 2
#ifndef HOSTILE_JMP_AT
#define HOSTILE_JMP_AT JMP_AT_EXPORT
#endif

#ifndef HOSTILE_AT
#define HOSTILE_AT AT_NONE
#endif
#ifndef HOSTILE_DO
#define HOSTILE_DO DO_NOTHING
#endif

/* ---- garbage tensors (applied to every successful export) ------------------------------- */
#define G_NONE 0
#define G_NDIM_NEG 1          /* ndim = -1 */
#define G_NDIM_HUGE 2         /* ndim = INT32_MAX (2^31 - 1) */
#define G_NDIM_MIN 3          /* ndim = INT32_MIN (-2^31) */
#define G_SHAPE_NULL 4        /* shape = NULL (ndim untouched) */
#define G_SHAPE_NEG 5         /* shape[0] = -3 */
#define G_STRIDES_HUGE 6      /* strides[0] = 2^59 elements: the tensor spans 2^62 bytes */
#define G_DATA_NULL 7         /* data = NULL with nonzero size */
#define G_STRUCT_UNALIGNED 8  /* the managed struct pointer is 1 byte off alignment */
#define G_STRUCT_DANGLING 9   /* the managed struct pointer points into an unmapped page */
#define G_DATA_DANGLING 10    /* data points into an unmapped page */
#define G_DELETER_GARBAGE 11  /* deleter is a garbage function pointer */
#define G_SHAPE_DANGLING 12   /* shape points into an unmapped page */
#define G_STRIDES_OVERFLOW 13 /* strides[0] = INT64_MAX: the span overflows int64 */
#ifndef HOSTILE_GARBAGE
#define HOSTILE_GARBAGE G_NONE
#endif

/* ---- constructor tampering -------------------------------------------------------------- */
#define C_NONE 0
#define C_SIGNALS 1        /* SIGSEGV, SIGABRT, SIGTERM, SIGBUS ignored; all signals blocked */
#define C_SEGV_EXIT0 2     /* SIGSEGV handler that _exit(0)s: a crash looks like success */
#define C_CLOSE_STDIO 3    /* close fds 0, 1, 2 */
#define C_CLOSE_PROTOCOL 4 /* close fds 3 and 4 and put /dev/null in their place */
#define C_THREAD_ABORT 5   /* start a thread that calls abort() about 200 microseconds later */
#define C_ITIMER 6         /* arm setitimer(ITIMER_REAL, 1 ms): SIGALRM ends the process */
#define C_CHAOS 7          /* for the chaos soak: SIGUSR1 closes the protocol pipes, SIGUSR2
                              forges an event line into them; with DLPV_CHAOS_PLAN set, the
                              library hits itself on a plan (chaos_step) */
#ifndef HOSTILE_CTOR
#define HOSTILE_CTOR C_NONE
#endif

/* ---- bad tables ------------------------------------------------------------------------- */
#define T_NONE 0
#define T_ABI99 1      /* abi_version 99 */
#define T_NULL_NAME 2  /* name = NULL */
#define T_NULL 3       /* dlpv_get_plugin returns NULL */
#define T_GARBAGE 4    /* dlpv_get_plugin returns a pointer into an unmapped page */
#define T_NAME_GARBAGE 5 /* name points into an unmapped page */
#define T_NO_ENTRY 6   /* dlpv_get_plugin is not exported at all */
#define T_UNDEFINED 7  /* the library needs a symbol nobody defines (dlopen RTLD_NOW fails) */
#ifndef HOSTILE_TABLE
#define HOSTILE_TABLE T_NONE
#endif

/* A page no access may touch (PROT_NONE, never unmapped so no later mapping can land there):
 * what a pointer to freed-and-returned memory looks like at its worst. */
static void* dead_page(void) {
  static char* page = NULL;
  if (!page) {
    void* p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    page = p == MAP_FAILED ? (char*)(uintptr_t)0x1000 : (char*)p;
  }
  return page + 64;
}

static void write_all(int fd, const void* buf, size_t n) {
  const char* p = (const char*)buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

/* Every fd >= 3 that is a pipe (the worker's protocol pipes among them); `writable` picks
 * the write ends. Uses only async-signal-safe calls when `fds` is given a fixed range. */
static int is_pipe(int fd, int writable) {
  struct stat st;
  int fl;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return 0;
  fl = fcntl(fd, F_GETFL);
  if (fl < 0) return 0;
  return writable ? (fl & O_ACCMODE) != O_RDONLY : 1;
}

static const char forged_lines[] =
    "{\"event\":\"result\",\"outcome\":{\"status\":\"pass\",\"message\":\"forged\"}}\n"
    "{\"event\":\"result\",\"nonce\":\"0000000000000000\",\"case\":\"x\",\"outcome\":{\"status\":\"pass\"}}\n";

/* A library that looks its fds up the way anyone can (/proc/self/fd) and writes into every
 * pipe it may write to, past the stdio ones. */
static void forge_into_pipes(const char* text, size_t n) {
  DIR* d = opendir("/proc/self/fd");
  struct dirent* e;
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    int fd = atoi(e->d_name);
    if (fd >= 3 && fd != dirfd(d) && is_pipe(fd, 1)) write_all(fd, text, n);
  }
  closedir(d);
}

/* The relay of DO_REWIRE_EVENT, one per hijacked pipe: line by line, "status":"fail" becomes
 * "status":"pass" on its way to the real pipe. */
struct relay { int tap, real; };

static void* relay_events(void* arg) {
  struct relay* r = (struct relay*)arg;
  char line[1 << 16];
  size_t used = 0;
  for (;;) {
    ssize_t n = read(r->tap, line + used, sizeof line - 1 - used);
    if (n <= 0) return NULL;
    used += (size_t)n;
    line[used] = 0;
    char* nl;
    while ((nl = memchr(line, '\n', used)) != NULL) {
      size_t len = (size_t)(nl - line) + 1;
      char* hit;
      while ((hit = strstr(line, "\"status\":\"fail\"")) != NULL && hit < nl) memcpy(hit + 10, "pass", 4);
      write_all(r->real, line, len);
      memmove(line, line + len, used - len);
      used -= len;
      line[used] = 0;
    }
    if (used == sizeof line - 1) used = 0; /* a line too long to hold: dropped */
  }
}

/* Every writable pipe above stderr (the worker's event pipe among them, wherever it was put)
 * gets a pipe of its own in its place, with a relay to the real one. */
static void rewire_event_fd(void) {
  static struct relay relays[16];
  int fd, n = 0;
  for (fd = 3; fd < 1100 && n < 16; ++fd) {
    int p[2];
    pthread_t t;
    if (!is_pipe(fd, 1) || pipe(p) != 0) continue;
    relays[n].real = fcntl(fd, F_DUPFD_CLOEXEC, 1100);
    relays[n].tap = p[0];
    dup2(p[1], fd);
    close(p[1]);
    pthread_create(&t, NULL, relay_events, &relays[n]);
    pthread_detach(t);
    ++n;
  }
}

static void chaos_close_pipes(int sig) {
  int fd;
  (void)sig;
  for (fd = 3; fd < 1100; ++fd)
    if (is_pipe(fd, 0)) close(fd);
}

static void chaos_forge(int sig) {
  int fd;
  (void)sig;
  for (fd = 3; fd < 1100; ++fd)
    if (is_pipe(fd, 1)) write_all(fd, forged_lines, sizeof forged_lines - 1);
}

static void* abort_soon(void* arg) {
  struct timespec ts = {0, 200 * 1000};
  (void)arg;
  nanosleep(&ts, NULL);
  abort();
  return NULL;
}

static jmp_buf g_jump_back;
static int g_jump_set = 0;

/* DO_FORGE_NONCE: every "run " + 16 hex digits + " " in the process's writable memory, and
 * the case id after the subject number, each answered with a forged "pass". Read through
 * /proc/self/mem, so an unreadable page is skipped rather than faulted on. */
static void forge_with_nonce(int renew) {
  FILE* maps = fopen("/proc/self/maps", "r");
  int mem = open("/proc/self/mem", O_RDONLY);
  char line[512];
  if (!maps || mem < 0) { if (maps) fclose(maps); if (mem >= 0) close(mem); return; }
  while (fgets(line, sizeof line, maps)) {
    unsigned long lo, hi;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' || perms[1] != 'w') continue;
    if (hi - lo > (64ul << 20)) continue;
    size_t n = hi - lo;
    char* buf = (char*)malloc(n + 1);
    if (!buf) continue;
    ssize_t got = pread(mem, buf, n, (off_t)lo);
    if (got > 0) {
      buf[got] = 0;
      for (ssize_t i = 0; i + 21 < got; ++i) {
        int k, ok = memcmp(buf + i, "run ", 4) == 0 && buf[i + 20] == ' ';
        for (k = 4; ok && k < 20; ++k) ok = isxdigit((unsigned char)buf[i + k]) != 0;
        if (!ok) continue;
        char nonce[17], id[300];
        int subject;
        memcpy(nonce, buf + i + 4, 16);
        nonce[16] = 0;
        if (sscanf(buf + i + 21, "%d %299s", &subject, id) != 2) continue;
        char forged[1024];
        if (renew) {
          struct timespec ts = {0, 100 * 1000 * 1000};
          for (;;) {
            int len2 = snprintf(forged, sizeof forged,
                                "{\"event\":\"phase\",\"nonce\":\"%s\",\"phase\":\"load\",\"subject\":0,"
                                "\"step\":\"entry\"}\n{\"event\":\"phase\",\"nonce\":\"%s\",\"phase\":\"deleter\"}\n",
                                nonce, nonce);
            forge_into_pipes(forged, (size_t)len2);
            nanosleep(&ts, NULL);
          }
        }
        int len = snprintf(forged, sizeof forged,
                           "{\"event\":\"result\",\"nonce\":\"%s\",\"case\":\"%s\",\"outcome\":"
                           "{\"status\":\"pass\",\"message\":\"forged\",\"checks\":[]}}\n", nonce, id);
        forge_into_pipes(forged, (size_t)len);
      }
    }
    free(buf);
  }
  fclose(maps);
  close(mem);
}

static void segv_return_handler(int sig) { (void)sig; /* returns: the faulting store runs again */ }
static void segv_exit0_handler(int sig) { (void)sig; _exit(0); }

static void hostile_do(int deed) {
  switch (deed) {
    case DO_SEGV: { volatile int* volatile bad = NULL; *bad = 1; break; }
    case DO_ABORT: abort();
    case DO_EXIT0: exit(0);
    case DO__EXIT3: _exit(3);
    case DO_LOOP: { volatile unsigned long spin = 0; for (;;) ++spin; }
    case DO_SLEEP: {
      struct timespec ts = {3600, 0};
      for (;;) nanosleep(&ts, &ts);
    }
    case DO_ALLOC: {
      const size_t chunk = (size_t)32 << 20;
      for (;;) {
        char* p = (char*)malloc(chunk);
        memset(p, 0xAB, chunk); /* no NULL check, like much real code */
      }
    }
    case DO_FLOOD: {
      static unsigned char junk[1 << 16];
      unsigned x = 12345u;
      size_t i;
      int round;
      for (i = 0; i < sizeof junk; ++i) { x = x * 1103515245u + 12345u; junk[i] = (unsigned char)(x >> 16); }
      for (round = 0; round < 128; ++round) { /* 8 MiB to each stream */
        write_all(1, junk, sizeof junk);
        write_all(2, junk, sizeof junk);
      }
      fwrite(junk, 1, 4096, stdout); /* and some buffered junk the worker will flush */
      break;
    }
    case DO_FAKE_RESULT: {
      static const char fake[] =
          "\n{\"event\":\"result\",\"outcome\":{\"status\":\"pass\",\"message\":\"forged\"}}\n"
          "{\"event\":\"phase\",\"phase\":\"forged\"}\n";
      int fd;
      for (fd = 0; fd <= 16; ++fd) write_all(fd, fake, sizeof fake - 1);
      hostile_do(DO_SEGV);
      break;
    }
    case DO_FORK_ORPHAN: {
      if (fork() == 0) { /* the child keeps every inherited fd (pipes included) open */
        struct timespec ts = {30, 0};
        nanosleep(&ts, NULL);
        _exit(0);
      }
      hostile_do(DO_SEGV);
      break;
    }
    case DO_FORGE_EVENT:
      forge_into_pipes(forged_lines, sizeof forged_lines - 1);
      break;
    case DO_REWIRE_EVENT:
      rewire_event_fd();
      break;
    case DO_NEVER_RETURN:
      pthread_exit(NULL);
    case DO_LONGJMP_BACK:
      if (g_jump_set) longjmp(g_jump_back, 1);
      break;
    case DO_FORGE_NONCE:
      forge_with_nonce(0);
      break;
    case DO_FORGE_RENEW:
      forge_with_nonce(1);
      break;
    case DO_FORGE_PARTIAL:
      forge_into_pipes("{\"event\":\"res", 14);
      break;
    case DO_SEGV_IN_HANDLER_LOOP: {
      signal(SIGSEGV, segv_return_handler);
      hostile_do(DO_SEGV);
      break;
    }
    default: break;
  }
}

#if HOSTILE_CTOR == C_CHAOS
/* The planned chaos of the soak (DLPV_CHAOS_PLAN=SEED:PERMILLE:COUNTER_FILE:LOG_FILE): every call
 * the validator makes into the library during a case (export, import, read, deleter) takes the
 * next number of a counter shared by all the run's workers (a file under flock); call k is hit
 * when a hash of (SEED, k) says so, with PERMILLE per mille, and the hash picks the hit: SIGKILL,
 * SIGSEGV, the protocol pipes closed, or a forged line. One lane runs one case at a time, so the
 * calls come in the run's order and a seed replays the same run. Each hit is logged as
 * "K ACTION PID". Load steps are not counted (spare workers load concurrently), and no hit is a
 * hang: a timeout is confirmed in a fresh worker beside the lane, whose calls would interleave
 * with the lane's (hangs are proven by the hostile fixtures that hang, one by one). */
static uint64_t chaos_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void chaos_step(void) {
  const char* plan = getenv("DLPV_CHAOS_PLAN");
  unsigned long long seed = 0, k = 0;
  unsigned permille = 0;
  char counter[512] = {0}, logname[512] = {0};
  int fd;
  uint64_t h;
  if (!plan || sscanf(plan, "%llu:%u:%511[^:]:%511s", &seed, &permille, counter, logname) != 4) return;
  fd = open(counter, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  flock(fd, LOCK_EX);
  if (pread(fd, &k, sizeof k, 0) != (ssize_t)sizeof k) k = 0;
  ++k;
  pwrite(fd, &k, sizeof k, 0);
  flock(fd, LOCK_UN);
  close(fd);
  h = chaos_mix(seed ^ chaos_mix(k));
  if (h % 1000 >= permille) return;
  {
    static const char* names[] = {"SIGKILL", "SIGSEGV", "close_pipes", "forge"};
    static const int weights[] = {3, 3, 2, 2};
    unsigned pick = (unsigned)((h >> 20) % 10), a = 0;
    char line[128];
    int n;
    while (pick >= (unsigned)weights[a]) pick -= (unsigned)weights[a++];
    n = snprintf(line, sizeof line, "%llu %s %ld\n", k, names[a], (long)getpid());
    fd = open(logname, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      write_all(fd, line, (size_t)n);
      close(fd);
    }
    switch (a) {
      case 0: raise(SIGKILL); break;
      case 1: raise(SIGSEGV); break;
      case 2: chaos_close_pipes(0); break;
      default: chaos_forge(0); break;
    }
  }
}
#define CHAOS_STEP(place) \
  do { if ((place) != AT_CTOR && (place) != AT_GET_PLUGIN) chaos_step(); } while (0)
#else
#define CHAOS_STEP(place) ((void)0)
#endif

#define HOSTILE_HERE(place) \
  do { CHAOS_STEP(place); if (HOSTILE_AT == (place)) hostile_do(HOSTILE_DO); } while (0)

__attribute__((constructor)) static void hostile_constructor(void) {
#if HOSTILE_CTOR == C_SIGNALS
  {
    sigset_t all;
    signal(SIGSEGV, SIG_IGN);
    signal(SIGBUS, SIG_IGN);
    signal(SIGABRT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_DFL);
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
  }
#elif HOSTILE_CTOR == C_SEGV_EXIT0
  signal(SIGSEGV, segv_exit0_handler);
#elif HOSTILE_CTOR == C_CLOSE_STDIO
  close(0);
  close(1);
  close(2);
#elif HOSTILE_CTOR == C_THREAD_ABORT
  {
    pthread_t t;
    if (pthread_create(&t, NULL, abort_soon, NULL) == 0) pthread_detach(t);
  }
#elif HOSTILE_CTOR == C_ITIMER
  {
    struct itimerval it = {{0, 0}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
  }
#elif HOSTILE_CTOR == C_CHAOS
  signal(SIGUSR1, chaos_close_pipes);
  signal(SIGUSR2, chaos_forge);
#elif HOSTILE_CTOR == C_CLOSE_PROTOCOL
  close(3);
  close(4);
  open("/dev/null", O_RDWR); /* lands on fd 3 (or lower) */
  open("/dev/null", O_RDWR); /* and fd 4 */
#endif
  HOSTILE_HERE(AT_CTOR);
}

/* ---- garbage ---------------------------------------------------------------------------- */

typedef void (*vdeleter_fn)(DLManagedTensorVersioned*);
typedef void (*ldeleter_fn)(DLManagedTensor*);

/* Unaligned copies remember the real struct in front of them: [orig][pad][copy at +9]. */
static void unaligned_vdeleter(DLManagedTensorVersioned* self) {
  char* block = (char*)self - 9;
  DLManagedTensorVersioned* orig;
  memcpy(&orig, block, sizeof orig);
  orig->deleter(orig);
  free(block);
}
static void unaligned_ldeleter(DLManagedTensor* self) {
  char* block = (char*)self - 9;
  DLManagedTensor* orig;
  memcpy(&orig, block, sizeof orig);
  orig->deleter(orig);
  free(block);
}

static void* unaligned_copy(void* orig, size_t size) {
  char* block = (char*)malloc(size + 16);
  memcpy(block, &orig, sizeof orig);
  memcpy(block + 9, orig, size);
  return block + 9;
}

static void garble(DLTensor* t) {
#if HOSTILE_GARBAGE == G_NDIM_NEG
  t->ndim = -1;
#elif HOSTILE_GARBAGE == G_NDIM_HUGE
  t->ndim = INT32_MAX;
#elif HOSTILE_GARBAGE == G_NDIM_MIN
  t->ndim = INT32_MIN;
#elif HOSTILE_GARBAGE == G_SHAPE_NULL
  t->shape = NULL;
#elif HOSTILE_GARBAGE == G_SHAPE_NEG
  if (t->ndim > 0) t->shape[0] = -3;
#elif HOSTILE_GARBAGE == G_STRIDES_HUGE
  if (t->ndim > 0 && t->strides) t->strides[0] = (int64_t)1 << 59;
#elif HOSTILE_GARBAGE == G_STRIDES_OVERFLOW
  if (t->ndim > 0 && t->strides) t->strides[0] = INT64_MAX;
#elif HOSTILE_GARBAGE == G_DATA_NULL
  t->data = NULL;
#elif HOSTILE_GARBAGE == G_DATA_DANGLING
  t->data = dead_page();
#elif HOSTILE_GARBAGE == G_SHAPE_DANGLING
  t->shape = (int64_t*)dead_page();
#else
  (void)t;
#endif
}

#if HOSTILE_DO == DO_LONGJMP_BACK && HOSTILE_JMP_AT == JMP_AT_EXPORT
#define TAKE_JUMP_BACK() do { if (setjmp(g_jump_back) == 0) g_jump_set = 1; } while (0)
#else
#define TAKE_JUMP_BACK() do { } while (0)
#endif

static int hostile_export_versioned(const DLPVRequest* req, DLManagedTensorVersioned** out) {
  int rc;
  TAKE_JUMP_BACK();
  HOSTILE_HERE(AT_EXPORT);
  rc = g_plugin.export_versioned(req, out);
  if (rc != DLPV_OK || !*out) return rc;
  garble(&(*out)->dl_tensor);
#if HOSTILE_GARBAGE == G_DELETER_GARBAGE
  (*out)->deleter = (vdeleter_fn)(uintptr_t)0x7b;
#elif HOSTILE_GARBAGE == G_STRUCT_UNALIGNED
  {
    DLManagedTensorVersioned* copy = (DLManagedTensorVersioned*)unaligned_copy(*out, sizeof **out);
    vdeleter_fn d = unaligned_vdeleter;
    memcpy((char*)copy + offsetof(DLManagedTensorVersioned, deleter), &d, sizeof d);
    *out = copy;
  }
#elif HOSTILE_GARBAGE == G_STRUCT_DANGLING
  (*out)->deleter(*out);
  *out = (DLManagedTensorVersioned*)dead_page();
#endif
  return rc;
}

static int hostile_export_legacy(const DLPVRequest* req, DLManagedTensor** out) {
  int rc;
  TAKE_JUMP_BACK();
  HOSTILE_HERE(AT_EXPORT);
  rc = g_plugin.export_legacy(req, out);
  if (rc != DLPV_OK || !*out) return rc;
  garble(&(*out)->dl_tensor);
#if HOSTILE_GARBAGE == G_DELETER_GARBAGE
  (*out)->deleter = (ldeleter_fn)(uintptr_t)0x7b;
#elif HOSTILE_GARBAGE == G_STRUCT_UNALIGNED
  {
    DLManagedTensor* copy = (DLManagedTensor*)unaligned_copy(*out, sizeof **out);
    ldeleter_fn d = unaligned_ldeleter;
    memcpy((char*)copy + offsetof(DLManagedTensor, deleter), &d, sizeof d);
    *out = copy;
  }
#elif HOSTILE_GARBAGE == G_STRUCT_DANGLING
  (*out)->deleter(*out);
  *out = (DLManagedTensor*)dead_page();
#endif
  return rc;
}

/* AT_DELETER: the deleter of every export misbehaves before doing its job. */
static vdeleter_fn g_real_vdeleter;
static ldeleter_fn g_real_ldeleter;
static void hostile_vdeleter(DLManagedTensorVersioned* self) { HOSTILE_HERE(AT_DELETER); g_real_vdeleter(self); }
static void hostile_ldeleter(DLManagedTensor* self) { HOSTILE_HERE(AT_DELETER); g_real_ldeleter(self); }

static int deleter_export_versioned(const DLPVRequest* req, DLManagedTensorVersioned** out) {
  int rc = hostile_export_versioned(req, out);
  if (rc == DLPV_OK && *out && (*out)->deleter) {
    g_real_vdeleter = (*out)->deleter;
    (*out)->deleter = hostile_vdeleter;
  }
  return rc;
}
static int deleter_export_legacy(const DLPVRequest* req, DLManagedTensor** out) {
  int rc = hostile_export_legacy(req, out);
  if (rc == DLPV_OK && *out && (*out)->deleter) {
    g_real_ldeleter = (*out)->deleter;
    (*out)->deleter = hostile_ldeleter;
  }
  return rc;
}

static int hostile_import_versioned(DLManagedTensorVersioned* t, void** out) {
  HOSTILE_HERE(AT_IMPORT);
  return g_plugin.import_versioned(t, out);
}
static int hostile_import_legacy(DLManagedTensor* t, void** out) {
  HOSTILE_HERE(AT_IMPORT);
  return g_plugin.import_legacy(t, out);
}
static int hostile_read_array(void* array, void* dst, size_t nbytes) {
  HOSTILE_HERE(AT_READ);
  return g_plugin.read_array(array, dst, nbytes);
}

#if HOSTILE_TABLE == T_UNDEFINED
extern int dlpv_hostile_nobody_defines_this(void);
#define ABI_OF_TABLE (DLPV_ABI_VERSION + 0 * dlpv_hostile_nobody_defines_this())
#elif HOSTILE_TABLE == T_ABI99
#define ABI_OF_TABLE 99
#else
#define ABI_OF_TABLE DLPV_ABI_VERSION
#endif

static DLPVPlugin g_hostile;

#if HOSTILE_TABLE == T_NO_ENTRY
#define ENTRY_VISIBILITY __attribute__((visibility("hidden")))
#else
#define ENTRY_VISIBILITY __attribute__((visibility("default")))
#endif

ENTRY_VISIBILITY const DLPVPlugin* dlpv_get_plugin(void) {
#if HOSTILE_DO == DO_LONGJMP_BACK && HOSTILE_JMP_AT == JMP_AT_ENTRY
  if (setjmp(g_jump_back) == 0) g_jump_set = 1;
#endif
  HOSTILE_HERE(AT_GET_PLUGIN);
  g_hostile = g_plugin;
  g_hostile.abi_version = ABI_OF_TABLE;
  g_hostile.export_versioned = HOSTILE_AT == AT_DELETER ? deleter_export_versioned : hostile_export_versioned;
  g_hostile.export_legacy = HOSTILE_AT == AT_DELETER ? deleter_export_legacy : hostile_export_legacy;
  g_hostile.import_versioned = hostile_import_versioned;
  g_hostile.import_legacy = hostile_import_legacy;
  g_hostile.read_array = hostile_read_array;
#if HOSTILE_TABLE == T_NULL_NAME
  g_hostile.name = NULL;
#elif HOSTILE_TABLE == T_NAME_GARBAGE
  g_hostile.name = (const char*)dead_page();
#elif HOSTILE_TABLE == T_NULL
  return NULL;
#elif HOSTILE_TABLE == T_GARBAGE
  return (const DLPVPlugin*)dead_page();
#endif
  return &g_hostile;
}
