/* memlat: seed 004's memlat benchmark -- one thread, two equal regions of S
 * bytes, dependent (pointer-chasing) random accesses within one region for
 * A accesses ("access time"), then the other, for R rounds or T seconds.
 *
 *   memlat --size S --access-time A [--rounds R | --seconds T]
 *          [--mode none|unify|fault|migrate] [--cpus C0,C1] [--seed N]
 *          [--warm-rounds W]
 *
 * S accepts suffixes K, M, G (powers of 1024). Each region is a random
 * cyclic permutation of its 64-byte lines, so every access is a load that
 * depends on the previous one (latency-bound, no prefetching helps).
 *
 * Modes:
 *   none    stay put: no affinity change (with --cpus the thread is pinned to
 *           C0 once; without, the default scheduler places it).
 *   unify   user-level unification by explicit hint: before visiting region
 *           r the thread moves itself with sched_setaffinity to C_r, so each
 *           region stays in the private cache of its own core (a
 *           micro-schedule per visit).
 *   fault   the page-touch trap at user level: the region not being visited
 *           is mprotect(PROT_NONE); the first touch of it faults, and the
 *           SIGSEGV handler opens it (and closes the other) and moves the
 *           thread to the region's core. Same placement as unify, with a
 *           protection fault and two mprotect calls per visit added.
 *   migrate no regions: measure the micro-schedule itself. R round trips
 *           C0 -> C1 -> C0, each leg a sched_setaffinity to one CPU followed
 *           by a check (sched_getcpu) that the thread runs there; reports the
 *           median and mean one-way cost in microseconds.
 *
 * Prints one JSON object on stdout: parameters, accesses, ns_per_access
 * (wall time of the measured rounds over their accesses, migrations
 * included), total_s, migrations, the CPUs seen (a bit mask, sampled), the
 * CPUs allowed at the end (bit mask: a controller's cpuset or affinity shows
 * here) and the CPU it ended on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LINE 64

enum mode { NONE, UNIFY, FAULT, MIGRATE };

static size_t size = 1 << 20;
static long access_time = 1 << 12;
static long rounds = 0, warm_rounds = 1;
static double seconds = 0;
static enum mode mode = NONE;
static int cpu[2] = {-1, -1};
static uint64_t seed = 1;

static char *region[2];
static size_t region_bytes; /* rounded up to pages */
static volatile int open_region = -1;
static long migrations = 0, faults = 0;
static uint64_t cpus_seen = 0;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *field, const char *msg) {
    fprintf(stderr, "memlat: %s: %s\n", field, msg);
    exit(2);
}

static uint64_t rng(void) { /* splitmix64 */
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void pin(int c) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("memlat: sched_setaffinity");
        exit(1);
    }
}

static void note_cpu(void) {
    int c = sched_getcpu();
    if (c >= 0 && c < 64)
        cpus_seen |= 1ull << c;
}

/* Move to CPU c and return only once running there. */
static void move_to(int c) {
    pin(c);
    while (sched_getcpu() != c)
        sched_yield();
    migrations++;
    note_cpu();
}

/* A random cyclic permutation of the region's lines: line i holds a pointer
 * to the next line of the cycle. */
static void build(char *base, size_t n) {
    size_t *order = malloc(n * sizeof *order);
    if (!order)
        die("size", "out of memory");
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(char **)(base + order[i] * LINE) = base + order[(i + 1) % n] * LINE;
    free(order);
}

static void set_prot(int r, int prot) {
    if (mprotect(region[r], region_bytes, prot) != 0) {
        perror("memlat: mprotect");
        _exit(1);
    }
}

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    char *a = si->si_addr;
    for (int r = 0; r < 2; r++) {
        if (a >= region[r] && a < region[r] + region_bytes && r != open_region) {
            /* Open r here, close the other, move to r's core. */
            set_prot(r, PROT_READ | PROT_WRITE);
            if (open_region >= 0)
                set_prot(open_region, PROT_NONE);
            open_region = r;
            faults++;
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu[r], &set);
            sched_setaffinity(0, sizeof set, &set);
            while (sched_getcpu() != cpu[r])
                sched_yield();
            migrations++;
            return;
        }
    }
    /* A real fault: restore the default action and let it happen. */
    signal(sig, SIG_DFL);
}

static size_t parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0)
        die("size", "expected a positive size like 700K, 4M");
    switch (*end) {
    case 'k': case 'K': v *= 1024; end++; break;
    case 'm': case 'M': v *= 1024 * 1024; end++; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        die("size", "expected a positive size like 700K, 4M");
    return (size_t)v;
}

static long parse_long(const char *field, const char *s, long lo) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected an integer >= %ld, got '%s'", lo, s);
        die(field, msg);
    }
    return v;
}

static double median(double *v, long n) {
    for (long i = 1; i < n; i++) /* insertion sort: n is small */
        for (long j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int run_migrate(void) {
    long n = rounds > 0 ? rounds : 1000;
    double *leg = malloc(2 * n * sizeof *leg);
    if (!leg)
        die("rounds", "out of memory");
    move_to(cpu[0]);
    migrations = 0;
    double t0 = now();
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            double a = now();
            move_to(cpu[1 - k]);
            leg[2 * i + k] = (now() - a) * 1e6;
        }
    double total = now() - t0;
    double med = median(leg, 2 * n);
    printf("{\"bench\":\"memlat\",\"mode\":\"migrate\",\"cpus\":[%d,%d],"
           "\"round_trips\":%ld,\"migrations\":%ld,\"one_way_us_median\":%.3f,"
           "\"one_way_us_mean\":%.3f,\"round_trip_us_median\":%.3f,"
           "\"total_s\":%.6f}\n",
           cpu[0], cpu[1], n, migrations, med, total * 1e6 / (2 * n),
           2 * med, total);
    free(leg);
    return 0;
}

/* Chase n pointers from *p. */
static char *chase(char *p, long n) {
    for (long i = 0; i < n; i++)
        p = *(char *volatile *)p;
    return p;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            puts("usage: memlat --size S --access-time A [--rounds R | --seconds T]\n"
                 "              [--mode none|unify|fault|migrate] [--cpus C0,C1]\n"
                 "              [--seed N] [--warm-rounds W]");
            return 0;
        }
        if (!v)
            die(a, "missing value");
        if (!strcmp(a, "--size"))
            size = parse_size(v);
        else if (!strcmp(a, "--access-time"))
            access_time = parse_long("access-time", v, 1);
        else if (!strcmp(a, "--rounds"))
            rounds = parse_long("rounds", v, 1);
        else if (!strcmp(a, "--warm-rounds"))
            warm_rounds = parse_long("warm-rounds", v, 0);
        else if (!strcmp(a, "--seconds")) {
            char *end;
            seconds = strtod(v, &end);
            if (end == v || *end || !(seconds > 0))
                die("seconds", "expected a positive number");
        } else if (!strcmp(a, "--seed"))
            seed = (uint64_t)parse_long("seed", v, 0);
        else if (!strcmp(a, "--mode")) {
            if (!strcmp(v, "none"))
                mode = NONE;
            else if (!strcmp(v, "unify"))
                mode = UNIFY;
            else if (!strcmp(v, "fault"))
                mode = FAULT;
            else if (!strcmp(v, "migrate"))
                mode = MIGRATE;
            else
                die("mode", "expected none, unify, fault or migrate");
        } else if (!strcmp(a, "--cpus")) {
            if (sscanf(v, "%d,%d", &cpu[0], &cpu[1]) != 2 || cpu[0] < 0 || cpu[1] < 0)
                die("cpus", "expected two CPU numbers like 0,1");
        } else
            die(a, "unknown option");
        i++;
    }
    if (mode != NONE && cpu[0] < 0)
        die("cpus", "this mode needs --cpus C0,C1");
    if (mode == MIGRATE)
        return run_migrate();
    if (size < 2 * LINE)
        die("size", "at least 128 bytes");
    if (rounds == 0 && seconds == 0)
        rounds = 10;

    long page = sysconf(_SC_PAGESIZE);
    region_bytes = (size + page - 1) / page * page;
    size_t lines = size / LINE;
    for (int r = 0; r < 2; r++) {
        region[r] = mmap(NULL, region_bytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region[r] == MAP_FAILED)
            die("size", "cannot map the regions");
        build(region[r], lines);
    }
    if (mode == FAULT) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
        set_prot(1, PROT_NONE);
        open_region = 0;
    }
    if (cpu[0] >= 0)
        move_to(cpu[0]);

    char *pos[2] = {region[0], region[1]};
    /* Warm-up rounds (not measured): each region's lines are loaded once
     * in the mode's placement. */
    for (long w = 0; w < warm_rounds; w++)
        for (int r = 0; r < 2; r++) {
            if (mode == UNIFY)
                move_to(cpu[r]);
            pos[r] = chase(pos[r], access_time < (long)lines ? (long)lines : access_time);
        }
    migrations = 0;
    faults = 0;
    long done = 0;
    double t0 = now(), t = t0;
    for (;;) {
        for (int r = 0; r < 2; r++) {
            if (mode == UNIFY)
                move_to(cpu[r]);
            pos[r] = chase(pos[r], access_time);
        }
        done++;
        if ((done & 15) == 0 || rounds)
            note_cpu();
        if (rounds ? done >= rounds : (t = now()) - t0 >= seconds)
            break;
    }
    t = now();
    double total = t - t0;
    /* Where the thread may run at the end (a cpuset or affinity set by a
     * controller shows here), and where it ran last. */
    unsigned long long allowed = 0;
    cpu_set_t aset;
    if (sched_getaffinity(0, sizeof aset, &aset) == 0)
        for (int c = 0; c < 64; c++)
            if (CPU_ISSET(c, &aset))
                allowed |= 1ull << c;
    double accesses = 2.0 * access_time * done;
    printf("{\"bench\":\"memlat\",\"mode\":\"%s\",\"size\":%zu,\"access_time\":%ld,"
           "\"cpus\":[%d,%d],\"rounds\":%ld,\"accesses\":%.0f,"
           "\"ns_per_access\":%.4f,\"total_s\":%.6f,\"migrations\":%ld,"
           "\"faults\":%ld,\"migrations_per_s\":%.1f,\"cpus_seen\":%llu,"
           "\"allowed_end\":%llu,\"cpu_end\":%d,\"end\":%llu}\n",
           mode == NONE ? "none" : mode == UNIFY ? "unify" : "fault", size,
           access_time, cpu[0], cpu[1], done, accesses, total * 1e9 / accesses,
           total, migrations, faults, migrations / total,
           (unsigned long long)cpus_seen, allowed, sched_getcpu(),
           (unsigned long long)((pos[0] - region[0]) ^ (pos[1] - region[1])));
    return 0;
}
