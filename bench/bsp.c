/* bsp: a bulk-synchronous benchmark -- K iterations of (compute G us; barrier)
 * on N threads (pthreads) or N processes (fork + a barrier in shared memory).
 *
 *   bsp --threads N --iters K --grain-us G --wait spin|block|spinblock|adaptive
 *       [--spin-us S] [--procs] [--loops-per-us L] [--mult M0,M1,...]
 *       [--then K2,G2,WAIT2]
 *
 * Waiting at the barrier: spin (busy-wait on the generation counter), block
 * (futex wait), or spinblock (spin S us, default 50, then futex wait).
 * adaptive follows the class a flexible-coscheduling runtime publishes for
 * the job (`parsched run --policy fcs` names a file in the environment
 * variable PARSCHED_FCS_CLASS_FILE; its first byte is 'C' for CS, 'F', 'D'
 * for DC, '-' while unclassified): CS (gang scheduled, its threads run
 * together) spin-blocks (S us, default 50), anything else blocks -- the FCS
 * papers' rule that coscheduled processes busy-wait and the others
 * spin-block. CS spins only for S us, not for ever, so a job misjudged CS
 * still shows its long waits (it blocks) and can be judged again. The
 * class is read at every barrier (a load from a shared mapping of the file);
 * without the variable, or if the file cannot be mapped, adaptive blocks.
 * --mult gives per-worker compute multipliers: worker i computes G x M[i] us
 * per iteration (load imbalance, e.g. `--threads 2 --mult 1,2`); workers
 * beyond the list use the last value; default 1 for all.
 * --then runs a second phase after the K iterations: K2 iterations of G2 us
 * (times the multipliers) waiting with WAIT2 -- a job whose behaviour
 * changes mid-run (e.g. `--wait block --then 1000,1000,spin`).
 * Compute is a fixed amount of work (a calibrated arithmetic loop), not a
 * wall-clock delay, so a descheduled worker makes no progress. The main
 * thread (process) is worker 0, so a job of N workers has exactly N tasks.
 * Synchronization statistics: where PARSCHED_FCS_SYNC_FILE names a file
 * (`parsched run --policy fcs` creates one per job, 4096 bytes, zeroed),
 * bsp maps it and publishes what the FCS papers' communication library
 * measures: the magic "PSYNC1\0\0", then per worker (slot i, 4 native u64
 * at offset 8 + 32 i) the barriers it passed, the wall-clock nanoseconds it
 * waited in them, and the CPU nanoseconds it spent spinning in them (thread
 * CPU time: a worker frozen or preempted mid-spin does not count that time).
 * Each worker writes only its own slot, after every barrier. The runtime
 * classifies from the count and the spin time (spinning hides a job's
 * waits from /proc); the wall-clock wait is informational (it includes
 * time the whole job was frozen between its slots).
 * Prints one JSON object: runtime (from the first barrier to the end), CPU
 * time and the parameters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum wait_mode { SPIN, BLOCK, SPINBLOCK, ADAPTIVE };

struct shared {
    _Atomic uint32_t count;
    _Atomic uint32_t gen; /* futex word */
    _Atomic uint32_t sleepers;
    char pad[64];
    double t0, t1;
};

static int nthreads = 2, procs = 0;
static long iters = 1000;
static double grain_us = 1000, spin_us = 50, loops_per_us = 0;
#define MAX_MULT 1024
static double mult[MAX_MULT];
static int nmult = 0;
static enum wait_mode mode = SPIN, mode2 = SPIN;
static long iters2 = 0;
static double grain2_us = 0;
static struct shared *sh;
static volatile uint64_t sink;
/* --wait adaptive: the runtime's class file, mapped (NULL: none). */
static const volatile char *class_map;
/* The runtime's synchronization-statistics file, mapped (NULL: none). */
#define SYNC_BYTES 4096
#define SYNC_SLOTS ((SYNC_BYTES - 8) / 32)
static volatile uint64_t *sync_map;

static void map_sync_file(void) {
    const char *path = getenv("PARSCHED_FCS_SYNC_FILE");
    if (!path || !*path) return;
    int fd = open(path, O_RDWR);
    if (fd < 0) return;
    void *m = mmap(NULL, SYNC_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    memcpy(m, "PSYNC1\0\0", 8);
    sync_map = (volatile uint64_t *)((char *)m + 8);
}

/* Worker `id` passed a barrier after waiting `wait_ns`, `spin_ns` of it
 * spinning. */
static void publish_sync(long id, uint64_t wait_ns, uint64_t spin_ns) {
    if (!sync_map || id >= SYNC_SLOTS) return;
    volatile uint64_t *slot = sync_map + 4 * id;
    slot[0] = slot[0] + 1;
    slot[1] = slot[1] + wait_ns;
    slot[2] = slot[2] + spin_ns;
}

static void map_class_file(void) {
    const char *path = getenv("PARSCHED_FCS_CLASS_FILE");
    if (!path || !*path) return;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return;
    void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m != MAP_FAILED) class_map = m;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val) {
    /* Not FUTEX_PRIVATE: the word may be shared between processes. */
    return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

static uint64_t work(uint64_t n) {
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

static void calibrate(void) {
    /* Best of several short runs: the rate when not interfered with. */
    double best = 0;
    uint64_t n = 200000;
    for (int r = 0; r < 7; r++) {
        double a = now();
        sink += work(n);
        double dt = (now() - a) * 1e6;
        if (dt > 0 && n / dt > best) best = n / dt;
        if (dt < 2000) n *= 2;
    }
    loops_per_us = best > 0 ? best : 100;
}

static uint64_t clock_ns(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static void barrier(long id, enum wait_mode mode) {
    if (mode == ADAPTIVE) mode = class_map && class_map[0] == 'C' ? SPINBLOCK : BLOCK;
    uint64_t t_in = sync_map ? now_ns() : 0, spun = 0;
    uint32_t g = atomic_load_explicit(&sh->gen, memory_order_acquire);
    if (atomic_fetch_add(&sh->count, 1) + 1 == (uint32_t)nthreads) {
        atomic_store(&sh->count, 0);
        atomic_fetch_add_explicit(&sh->gen, 1, memory_order_release);
        /* Whatever this thread's mode: others may sleep (phase change). */
        if (atomic_load(&sh->sleepers) > 0) futex(&sh->gen, FUTEX_WAKE, INT32_MAX);
        if (sync_map) publish_sync(id, now_ns() - t_in, 0);
        return;
    }
    if (mode != BLOCK) {
        uint64_t c0 = sync_map ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
        double limit = mode == SPIN ? -1 : now() + spin_us * 1e-6;
        unsigned k = 0;
        while (atomic_load_explicit(&sh->gen, memory_order_acquire) == g) {
            __builtin_ia32_pause();
            if (limit > 0 && (++k & 63) == 0 && now() > limit) break;
        }
        if (sync_map) spun = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    }
    while (atomic_load_explicit(&sh->gen, memory_order_acquire) == g) {
        atomic_fetch_add(&sh->sleepers, 1);
        futex(&sh->gen, FUTEX_WAIT, g);
        atomic_fetch_sub(&sh->sleepers, 1);
    }
    if (sync_map) publish_sync(id, now_ns() - t_in, spun);
}

static void *worker(void *arg) {
    long id = (long)arg;
    double m = nmult == 0 ? 1.0 : mult[id < nmult ? id : nmult - 1];
    uint64_t n = (uint64_t)(grain_us * m * loops_per_us);
    barrier(id, mode);
    if (id == 0) sh->t0 = now();
    for (long i = 0; i < iters; i++) {
        sink += work(n);
        barrier(id, mode);
    }
    n = (uint64_t)(grain2_us * m * loops_per_us);
    for (long i = 0; i < iters2; i++) {
        sink += work(n);
        barrier(id, mode2);
    }
    if (id == 0) sh->t1 = now();
    return NULL;
}

static int parse_mode(const char *v, enum wait_mode *out) {
    if (!strcmp(v, "spin")) *out = SPIN;
    else if (!strcmp(v, "block")) *out = BLOCK;
    else if (!strcmp(v, "spinblock")) *out = SPINBLOCK;
    else if (!strcmp(v, "adaptive")) *out = ADAPTIVE;
    else return -1;
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: bsp --threads N --iters K --grain-us G --wait spin|block|spinblock|adaptive "
                    "[--spin-us S] [--procs] [--loops-per-us L] [--mult M0,M1,...] [--then K2,G2,WAIT2]\n");
    exit(2);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--procs")) { procs = 1; continue; }
        if (!v) usage();
        if (!strcmp(a, "--threads")) nthreads = atoi(v);
        else if (!strcmp(a, "--iters")) iters = atol(v);
        else if (!strcmp(a, "--grain-us")) grain_us = atof(v);
        else if (!strcmp(a, "--spin-us")) spin_us = atof(v);
        else if (!strcmp(a, "--loops-per-us")) loops_per_us = atof(v);
        else if (!strcmp(a, "--mult")) {
            const char *p = v;
            nmult = 0;
            while (*p) {
                char *end;
                double x = strtod(p, &end);
                if (end == p || x < 0 || nmult >= MAX_MULT) usage();
                mult[nmult++] = x;
                p = end;
                if (*p == ',') p++;
                else if (*p) usage();
            }
            if (nmult == 0) usage();
        }
        else if (!strcmp(a, "--wait")) {
            if (parse_mode(v, &mode)) usage();
        } else if (!strcmp(a, "--then")) {
            char w[32];
            if (sscanf(v, "%ld,%lf,%31s", &iters2, &grain2_us, w) != 3 || iters2 < 0 ||
                grain2_us < 0 || parse_mode(w, &mode2))
                usage();
        } else usage();
        i++;
    }
    if (nthreads < 1 || iters < 0 || grain_us < 0) usage();
    if (loops_per_us <= 0) calibrate();
    if (mode == ADAPTIVE || mode2 == ADAPTIVE) map_class_file();
    map_sync_file();
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) { perror("mmap"); return 1; }
    memset(sh, 0, sizeof *sh);

    double start = now();
    if (procs) {
        pid_t *kids = calloc(nthreads, sizeof *kids);
        for (long t = 1; t < nthreads; t++) {
            pid_t p = fork();
            if (p < 0) { perror("fork"); return 1; }
            if (p == 0) { worker((void *)t); _exit(0); }
            kids[t] = p;
        }
        worker(0);
        for (long t = 1; t < nthreads; t++) waitpid(kids[t], NULL, 0);
    } else {
        pthread_t *th = calloc(nthreads, sizeof *th);
        for (long t = 1; t < nthreads; t++)
            if (pthread_create(&th[t], NULL, worker, (void *)t)) { perror("pthread_create"); return 1; }
        worker(0);
        for (long t = 1; t < nthreads; t++) pthread_join(th[t], NULL);
    }
    double end = now();
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    double cpu = self.ru_utime.tv_sec + self.ru_utime.tv_usec * 1e-6 + self.ru_stime.tv_sec +
                 self.ru_stime.tv_usec * 1e-6 + kids.ru_utime.tv_sec + kids.ru_utime.tv_usec * 1e-6 +
                 kids.ru_stime.tv_sec + kids.ru_stime.tv_usec * 1e-6;
    static const char *names[] = {"spin", "block", "spinblock", "adaptive"};
    printf("{\"threads\": %d, \"iters\": %ld, \"grain_us\": %g, \"wait\": \"%s\", \"spin_us\": %g, "
           "\"procs\": %s, \"loops_per_us\": %.1f, \"mult\": [",
           nthreads, iters, grain_us, names[mode], spin_us, procs ? "true" : "false", loops_per_us);
    for (int t = 0; t < nthreads; t++)
        printf("%s%g", t ? ", " : "", nmult == 0 ? 1.0 : mult[t < nmult ? t : nmult - 1]);
    if (iters2 > 0)
        printf("], \"then\": {\"iters\": %ld, \"grain_us\": %g, \"wait\": \"%s\"}", iters2,
               grain2_us, names[mode2]);
    else
        printf("]");
    printf(", \"runtime_s\": %.6f, \"total_s\": %.6f, \"cpu_s\": %.6f}\n", sh->t1 - sh->t0,
           end - start, cpu);
    return 0;
}
