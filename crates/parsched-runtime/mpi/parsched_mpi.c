/*
 * libparsched_mpi: an MPI profiling-interface library that tells parsched's
 * controller how a process waits, and waits the way it is told to.
 *
 * Loaded with LD_PRELOAD (or linked before libmpi), it wraps MPI's blocking
 * receives, waits, probes and collectives through the profiling interface
 * (PMPI_*). Per process it publishes, in the job's statistics file
 * (docs/formats/fcs-sync-file.md, the file named by PARSCHED_FCS_SYNC_FILE,
 * or a private one shared by the job's ranks when that is unset):
 *   - synchronizations completed, wall time waiting, CPU time spinning and
 *     wall time blocked (the file's first 4096 bytes, the layout the
 *     controller's FCS classifier already reads);
 *   - messages sent to it and consumed by it, and whether it waits now, so
 *     the controller sees which process has a message pending (the
 *     extension after byte 4096).
 *
 * How a process waits (seed 003's design space, section 2), from
 * PARSCHED_MPI_WAIT:
 *   busy        MPI's own polling (the default);
 *   spin-block  poll for PARSCHED_MPI_SPIN_US microseconds, then sleep on the
 *               process's doorbell (a futex word in the shared file) until a
 *               sender rings it or PARSCHED_MPI_BLOCK_POLL_US passes;
 *   spin-yield  poll for the spin time, then keep polling with sched_yield
 *               (having asked the controller, once, to boost another
 *               process with a pending message).
 * A sender rings the destination's doorbell after every send; a collective
 * rings its communicator's ranks when it completes locally. Under the
 * controller's arrival actions (PARSCHED_MPI_BELL, a FIFO, with
 * PARSCHED_MPI_ARRIVALS=1), a send to a rank that is not blocked also
 * writes a byte to the FIFO (once until the controller has looked), so the
 * controller can boost the destination at once if it is not running
 * (dynamic coscheduling).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 127
#define BASE_BYTES 4096
#define EXT_SLOT_BYTES 64
#define FILE_BYTES (BASE_BYTES + SLOTS * EXT_SLOT_BYTES)
#define MAGIC "PSYNC1\0\0"
#define TRACKED 4096
#define GAP_NS 500000u /* a pause between two polls longer than this: not running */

/* The extension slot of one process (after the first 4096 bytes). */
struct ext {
    _Atomic uint32_t doorbell;   /* rung by senders; the process sleeps on it */
    _Atomic uint32_t waiting;    /* 0 running, 1 spinning, 2 blocked */
    _Atomic uint64_t sent_to;    /* messages sent to this process (any sender) */
    _Atomic uint64_t consumed;   /* messages it has received */
    _Atomic uint64_t wait_since_ns; /* CLOCK_MONOTONIC when the current wait began */
    _Atomic uint32_t pid;        /* the rank's process (0 until MPI_Init) */
    _Atomic uint32_t tid;        /* the thread that called MPI_Init */
    _Atomic uint64_t last_arrival_ns; /* CLOCK_MONOTONIC of the last send to it */
    _Atomic uint32_t boosted;    /* set by the controller with a boost: the rank
                                    drops it (back to SCHED_OTHER) once it has
                                    received, i.e. used the boost */
    _Atomic uint32_t bell;       /* 1: a message arrived while it spun, 2: it
                                    yields (spin-yield); set by whoever rings
                                    the controller's bell, cleared by it */
    _Atomic uint64_t poll_ns;    /* CLOCK_MONOTONIC when it was last seen
                                    running (a poll, a send, a wait's start
                                    or end): recent = it runs */
};
_Static_assert(sizeof(struct ext) == EXT_SLOT_BYTES, "extension slot layout");

enum strategy { BUSY, SPIN_BLOCK, SPIN_YIELD };

static struct {
    int on;
    int rank, size;
    enum strategy how;
    uint64_t spin_ns, poll_ns;
    unsigned char *map;
    _Atomic uint64_t *base; /* this process's 4 base words, or NULL */
    struct ext *ext;        /* all extension slots, or NULL */
    MPI_Request recv_req[TRACKED];
    int recv_n;
    int verbose;
    int bell_fd; /* the controller's bell (a FIFO), or -1 */
    int arrivals; /* ring it for every message sent (dynamic coscheduling) */
    uint64_t running_ns; /* a rank seen this recently is running: no ring */
    uint64_t tests, sleeps, c_syncs, c_wait, c_spin, c_blocked;
} S;

static uint64_t now_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void add(int word, uint64_t v)
{
    if (S.base)
        atomic_fetch_add_explicit(&S.base[word], v, memory_order_relaxed);
}

static struct ext *slot(int world_rank)
{
    if (!S.ext || world_rank < 0 || world_rank >= SLOTS)
        return NULL;
    return &S.ext[world_rank];
}

/* Tells the controller (dynamic coscheduling, spin-yield) that something
   happened to a rank: flags it (once until the controller has looked); a
   yield also writes a byte to the controller's FIFO, to wake it at once. An
   arrival does not: the controller scans the flags every 200 us, because a
   wake-up from the sender preempts the sender on its CPU just as it starts
   to wait for the reply (docs/runtime.md, "MPI programs"). */
static void bell(struct ext *e, uint32_t what)
{
    uint32_t zero = 0;
    if (S.bell_fd >= 0 && atomic_compare_exchange_strong(&e->bell, &zero, what) && what == 2)
        (void)!write(S.bell_fd, "!", 1);
}

/* This rank is running now (it is calling MPI). */
static void seen(struct ext *me, uint64_t t)
{
    if (me)
        atomic_store_explicit(&me->poll_ns, t, memory_order_relaxed);
}

/* A send to world_rank (`message`), or a collective's completion: counts the
   message, wakes the rank if it sleeps, and (dynamic coscheduling) rings the
   controller's bell unless the rank was seen running in the last
   PARSCHED_MPI_RUNNING_US (20): the controller's handler decides from when
   each rank was last seen running whether the destination is believed
   running on its CPU. */
static void ring(int world_rank, int message)
{
    struct ext *e = slot(world_rank);
    if (!e)
        return;
    uint64_t t = now_ns(CLOCK_MONOTONIC);
    seen(slot(S.rank), t);
    if (message) {
        atomic_fetch_add(&e->sent_to, 1);
        atomic_store(&e->last_arrival_ns, t);
    }
    atomic_fetch_add(&e->doorbell, 1);
    uint32_t w = atomic_load(&e->waiting);
    if (w == 2)
        syscall(SYS_futex, &e->doorbell, FUTEX_WAKE, 1, NULL, NULL, 0);
    else if (message && S.arrivals &&
             t - atomic_load_explicit(&e->poll_ns, memory_order_relaxed) > S.running_ns)
        bell(e, 1);
}

/* The world rank of rank r of comm (MPI_PROC_NULL and the like: -1). */
static int world_of(MPI_Comm comm, int r)
{
    if (r < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return r;
    MPI_Group g, w;
    int out = -1;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &w);
    PMPI_Group_translate_ranks(g, 1, &r, w, &out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&w);
    return out == MPI_UNDEFINED ? -1 : out;
}

/* Rings every other rank of comm; with `message`, counts a message to each
   (a collective's entry: each peer then has one pending from this rank until
   it completes the collective itself). Returns the number of peers. */
static int ring_all(MPI_Comm comm, int message)
{
    int inter = 0, n = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter || !S.ext)
        return 0;
    PMPI_Comm_size(comm, &n);
    for (int r = 0; r < n; r++) {
        int w = world_of(comm, r);
        if (w != S.rank)
            ring(w, message);
    }
    return n - 1;
}

static void consumed(uint64_t n)
{
    struct ext *e = slot(S.rank);
    if (e && n)
        atomic_fetch_add(&e->consumed, n);
}

static int is_recv(MPI_Request r, int forget)
{
    for (int i = 0; i < S.recv_n; i++)
        if (memcmp(&S.recv_req[i], &r, sizeof r) == 0) {
            if (forget)
                S.recv_req[i] = S.recv_req[--S.recv_n];
            return 1;
        }
    return 0;
}

/* A boost given by the controller (SCHED_FIFO, flagged in the rank's slot)
   ends when the rank has waited a spin time in vain (see wait_on): a thread
   may always lower its own policy. */
static void give_back_boost(struct ext *me)
{
    if (me && atomic_load_explicit(&me->boosted, memory_order_relaxed) &&
        atomic_exchange(&me->boosted, 0)) {
        struct sched_param p = {0};
        sched_setscheduler(0, SCHED_OTHER, &p);
    }
}

/* A wait: test() until it reports completion, the way the strategy says. */
typedef int (*test_fn)(void *ctx, int *done);

static int counted(test_fn test, void *ctx, int *done)
{
    S.tests++;
    return test(ctx, done);
}
#define test(ctx, done) counted(test, ctx, done)

static int wait_on(test_fn test, void *ctx)
{
    int done = 0, rc = test(ctx, &done);
    if (rc != MPI_SUCCESS || done || !S.on) {
        if (rc == MPI_SUCCESS && done)
            add(0, 1);
        return rc;
    }
    struct ext *me = slot(S.rank);
    /* A boost lets a rank absorb its message and compute on with its peers
       (as Solaris' raised priority lasts a quantum): it lasts until the rank
       has waited a spin time in vain, when it gives it up (else it would
       spin at real-time priority, keeping its CPU from everyone else), or
       until the controller ends it a period later. Giving it up at once
       would hand the CPU to the other job just as the awaited message comes. */
    /* Spinning is timed by the wall clock between consecutive polls (a
       thread's CPU clock costs a system call per read); a gap longer than
       GAP_NS means the thread was not running (preempted, or its job frozen
       by the controller) and is not counted. */
    uint64_t t0 = now_ns(CLOCK_MONOTONIC), prev = t0;
    uint64_t spun_cpu = 0, blocked = 0;
    if (me) {
        atomic_store(&me->wait_since_ns, t0);
        atomic_store_explicit(&me->poll_ns, t0, memory_order_relaxed);
        atomic_store(&me->waiting, 1);
    }
    uint64_t until = S.how == BUSY ? UINT64_MAX : t0 + S.spin_ns;
    while (rc == MPI_SUCCESS && !done && prev < until) {
        rc = test(ctx, &done);
        uint64_t t = now_ns(CLOCK_MONOTONIC);
        if (t - prev < GAP_NS)
            spun_cpu += t - prev;
        prev = t;
        if (me) {
            atomic_store_explicit(&me->poll_ns, t, memory_order_relaxed);
            if (t - t0 > S.spin_ns)
                give_back_boost(me);
        }
    }
    give_back_boost(me);
    /* spin-yield: once per wait, ask the controller to boost another
       process with a pending message (it does nothing without one) */
    if (S.how == SPIN_YIELD && me && rc == MPI_SUCCESS && !done)
        bell(me, 2);
    while (rc == MPI_SUCCESS && !done) {
        if (S.how == SPIN_YIELD) {
            uint64_t c = now_ns(CLOCK_MONOTONIC);
            sched_yield();
            rc = test(ctx, &done);
            uint64_t t = now_ns(CLOCK_MONOTONIC);
            if (t - c < GAP_NS)
                spun_cpu += t - c;
            if (me)
                atomic_store_explicit(&me->poll_ns, t, memory_order_relaxed);
            continue;
        }
        /* spin-block: sleep on the doorbell, test when it rings or the poll
           interval passes (collectives' own messages do not ring) */
        uint32_t bell = me ? atomic_load(&me->doorbell) : 0;
        rc = test(ctx, &done);
        if (rc != MPI_SUCCESS || done)
            break;
        uint64_t b0 = now_ns(CLOCK_MONOTONIC);
        struct timespec ts = {(time_t)(S.poll_ns / 1000000000u),
                              (long)(S.poll_ns % 1000000000u)};
        S.sleeps++;
        if (me) {
            atomic_store(&me->waiting, 2);
            syscall(SYS_futex, &me->doorbell, FUTEX_WAIT, bell, &ts, NULL, 0);
            atomic_store(&me->waiting, 1);
        } else {
            nanosleep(&ts, NULL);
        }
        blocked += now_ns(CLOCK_MONOTONIC) - b0;
        rc = test(ctx, &done);
    }
    uint64_t t1 = now_ns(CLOCK_MONOTONIC), wall = t1 - t0;
    if (me) {
        seen(me, t1);
        atomic_store(&me->waiting, 0);
    }
    if (rc == MPI_SUCCESS) {
        add(0, 1);
        add(1, wall);
        add(2, spun_cpu);
        add(3, blocked);
        S.c_syncs++;
        S.c_wait += wall;
        S.c_spin += spun_cpu;
        S.c_blocked += blocked;
    }
    return rc;
}
#undef test

/* ---- the test functions ---- */

struct one { MPI_Request *req; MPI_Status *st; };
static int test_one(void *c, int *done)
{
    struct one *o = c;
    return PMPI_Test(o->req, done, o->st);
}

struct all { int n; MPI_Request *req; MPI_Status *st; };
static int test_all(void *c, int *done)
{
    struct all *a = c;
    return PMPI_Testall(a->n, a->req, done, a->st);
}

struct any { int n; MPI_Request *req; int *idx; MPI_Status *st; };
static int test_any(void *c, int *done)
{
    struct any *a = c;
    return PMPI_Testany(a->n, a->req, a->idx, done, a->st);
}

struct probe { int src, tag; MPI_Comm comm; MPI_Status *st; };
static int test_probe(void *c, int *done)
{
    struct probe *p = c;
    return PMPI_Iprobe(p->src, p->tag, p->comm, done, p->st);
}

static int wait_request(MPI_Request *req, MPI_Status *st)
{
    MPI_Status tmp;
    struct one o = {req, st == MPI_STATUS_IGNORE ? &tmp : st};
    return wait_on(test_one, &o);
}

/* ---- setup ---- */

static void map_file(void)
{
    const char *path = getenv("PARSCHED_FCS_SYNC_FILE");
    char mine[256] = "";
    if (!path || !*path) {
        /* no controller: a private file for the job's ranks */
        if (S.rank == 0) {
            snprintf(mine, sizeof mine, "/dev/shm/parsched-mpi-XXXXXX");
            int fd = mkstemp(mine);
            if (fd < 0) {
                snprintf(mine, sizeof mine, "/tmp/parsched-mpi-XXXXXX");
                fd = mkstemp(mine);
            }
            if (fd >= 0)
                close(fd);
            else
                mine[0] = 0;
        }
        PMPI_Bcast(mine, sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);
        path = mine[0] ? mine : NULL;
    }
    int fd = path ? open(path, O_RDWR) : -1;
    if (fd >= 0 && S.rank == 0) {
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size < FILE_BYTES && ftruncate(fd, FILE_BYTES) != 0) {
            close(fd);
            fd = -1;
        }
    }
    int ok = fd >= 0, all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        void *m = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            S.map = m;
            S.ext = (struct ext *)(S.map + BASE_BYTES);
            if (S.rank < SLOTS)
                S.base = (_Atomic uint64_t *)(S.map + 8 + 32 * S.rank);
        }
    }
    if (fd >= 0)
        close(fd);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (mine[0] && S.rank == 0)
        unlink(mine);
    struct ext *me = slot(S.rank);
    if (me) {
        atomic_store(&me->pid, (uint32_t)getpid());
        atomic_store(&me->tid, (uint32_t)syscall(SYS_gettid));
    }
    if (S.map && S.rank == 0)
        memcpy(S.map, MAGIC, 8);
}

static uint64_t env_us(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return dflt * 1000u;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end) {
        fprintf(stderr, "libparsched_mpi: %s=%s: a whole number of microseconds is allowed\n",
                name, v);
        exit(2);
    }
    return x * 1000u;
}

static void setup(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &S.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &S.size);
    const char *how = getenv("PARSCHED_MPI_WAIT");
    if (!how || !*how || !strcmp(how, "busy"))
        S.how = BUSY;
    else if (!strcmp(how, "spin-block"))
        S.how = SPIN_BLOCK;
    else if (!strcmp(how, "spin-yield"))
        S.how = SPIN_YIELD;
    else {
        fprintf(stderr, "libparsched_mpi: PARSCHED_MPI_WAIT=%s: allowed: busy, spin-block, "
                        "spin-yield\n", how);
        exit(2);
    }
    S.verbose = getenv("PARSCHED_MPI_VERBOSE") && *getenv("PARSCHED_MPI_VERBOSE") == '1';
    S.spin_ns = env_us("PARSCHED_MPI_SPIN_US", 100);
    S.poll_ns = env_us("PARSCHED_MPI_BLOCK_POLL_US", 1000);
    if (S.poll_ns == 0)
        S.poll_ns = 1000;
    S.bell_fd = -1;
    S.running_ns = env_us("PARSCHED_MPI_RUNNING_US", 20);
    const char *bell_path = getenv("PARSCHED_MPI_BELL");
    if (bell_path && *bell_path) {
        S.bell_fd = open(bell_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        const char *a = getenv("PARSCHED_MPI_ARRIVALS");
        S.arrivals = a && !strcmp(a, "1");
        if (S.bell_fd < 0 && S.verbose)
            fprintf(stderr, "libparsched_mpi: PARSCHED_MPI_BELL=%s: %s (no arrival actions)\n",
                    bell_path, strerror(errno));
    }
    map_file();
    S.on = 1;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        setup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        setup();
    return rc;
}

int MPI_Finalize(void)
{
    if (S.verbose)
        fprintf(stderr,
                "libparsched_mpi: rank %d: %llu waits, %.6f s waiting, %.6f s spinning (CPU), "
                "%.6f s blocked, %llu tests, %llu sleeps\n",
                S.rank, (unsigned long long)S.c_syncs, S.c_wait * 1e-9, S.c_spin * 1e-9,
                S.c_blocked * 1e-9, (unsigned long long)S.tests, (unsigned long long)S.sleeps);
    S.on = 0;
    if (S.bell_fd >= 0)
        close(S.bell_fd);
    S.bell_fd = -1;
    S.running_ns = env_us("PARSCHED_MPI_RUNNING_US", 20);
    if (S.map)
        munmap(S.map, FILE_BYTES);
    S.map = NULL;
    S.base = NULL;
    S.ext = NULL;
    return PMPI_Finalize();
}

/* ---- point to point ---- */

#define SEND_WRAPPER(NAME, CALL)                                                   \
    int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,     \
             MPI_Comm comm)                                                        \
    {                                                                              \
        int rc = CALL(buf, count, type, dest, tag, comm);                          \
        if (rc == MPI_SUCCESS && S.on)                                             \
            ring(world_of(comm, dest), 1);                                         \
        return rc;                                                                 \
    }
SEND_WRAPPER(MPI_Send, PMPI_Send)
SEND_WRAPPER(MPI_Ssend, PMPI_Ssend)
SEND_WRAPPER(MPI_Bsend, PMPI_Bsend)
SEND_WRAPPER(MPI_Rsend, PMPI_Rsend)

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
    if (rc == MPI_SUCCESS && S.on)
        ring(world_of(comm, dest), 1);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    int rc = PMPI_Irecv(buf, count, type, src, tag, comm, req);
    if (rc == MPI_SUCCESS && S.on && S.recv_n < TRACKED)
        S.recv_req[S.recv_n++] = *req;
    return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Status *st)
{
    if (!S.on)
        return PMPI_Recv(buf, count, type, src, tag, comm, st);
    MPI_Request r;
    int rc = PMPI_Irecv(buf, count, type, src, tag, comm, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = wait_request(&r, st);
    if (rc == MPI_SUCCESS && src != MPI_PROC_NULL)
        consumed(1);
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                 MPI_Comm comm, MPI_Status *st)
{
    if (!S.on)
        return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag,
                             comm, st);
    MPI_Request r[2];
    MPI_Status sts[2];
    int rc = PMPI_Irecv(rbuf, rcount, rtype, src, rtag, comm, &r[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &r[1]);
    if (rc != MPI_SUCCESS)
        return rc;
    ring(world_of(comm, dest), 1);
    struct all a = {2, r, sts};
    rc = wait_on(test_all, &a);
    if (rc == MPI_SUCCESS) {
        if (st != MPI_STATUS_IGNORE)
            *st = sts[0];
        if (src != MPI_PROC_NULL)
            consumed(1);
    }
    return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    if (!S.on)
        return PMPI_Wait(req, st);
    MPI_Request was = *req;
    int rc = wait_request(req, st);
    if (rc == MPI_SUCCESS && is_recv(was, 1))
        consumed(1);
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (!S.on || n <= 0)
        return PMPI_Waitall(n, reqs, sts);
    MPI_Request was[64];
    int k = n < 64 ? n : 64;
    memcpy(was, reqs, k * sizeof *reqs);
    MPI_Status small[64], *buf = sts;
    if (sts == MPI_STATUSES_IGNORE)
        buf = n <= 64 ? small : malloc(sizeof *buf * (size_t)n);
    int rc;
    if (buf) {
        struct all a = {n, reqs, buf};
        rc = wait_on(test_all, &a);
        if (buf != sts && buf != small)
            free(buf);
    } else {
        rc = MPI_SUCCESS; /* no memory for the statuses: one request at a time */
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            rc = wait_request(&reqs[i], MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS) {
        uint64_t got = 0;
        for (int i = 0; i < k; i++)
            got += (uint64_t)is_recv(was[i], 1);
        consumed(got);
    }
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    if (!S.on || n <= 0)
        return PMPI_Waitany(n, reqs, idx, st);
    MPI_Request was[64];
    int k = n < 64 ? n : 64;
    memcpy(was, reqs, k * sizeof *reqs);
    MPI_Status tmp;
    struct any a = {n, reqs, idx, st == MPI_STATUS_IGNORE ? &tmp : st};
    int rc = wait_on(test_any, &a);
    if (rc == MPI_SUCCESS && *idx >= 0 && *idx < k && is_recv(was[*idx], 1))
        consumed(1);
    return rc;
}

/* Receives completed by a test count as consumed too (else a program that
   polls with MPI_Test would show messages pending for ever, and its tracked
   requests would pile up). */
int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    MPI_Request was = *req;
    int rc = PMPI_Test(req, flag, st);
    if (rc == MPI_SUCCESS && *flag && S.on && is_recv(was, 1))
        consumed(1);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    MPI_Request was[64];
    int k = n < 64 ? (n > 0 ? n : 0) : 64;
    memcpy(was, reqs, k * sizeof *reqs);
    int rc = PMPI_Testall(n, reqs, flag, sts);
    if (rc == MPI_SUCCESS && *flag && S.on) {
        uint64_t got = 0;
        for (int i = 0; i < k; i++)
            got += (uint64_t)is_recv(was[i], 1);
        consumed(got);
    }
    return rc;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    if (!S.on)
        return PMPI_Probe(src, tag, comm, st);
    MPI_Status tmp;
    struct probe p = {src, tag, comm, st == MPI_STATUS_IGNORE ? &tmp : st};
    return wait_on(test_probe, &p);
}

/* ---- collectives: the nonblocking form, then the strategy's wait ---- */

/* A collective, started nonblocking: entering it counts as a message to
   every peer (pending there until the peer completes it too, which is what
   a periodic boost looks for), completing it consumes one from each. */
static int collective(int rc, MPI_Request *r, MPI_Comm comm)
{
    if (rc != MPI_SUCCESS)
        return rc;
    int peers = ring_all(comm, 1);
    rc = wait_request(r, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) {
        ring_all(comm, 0);
        consumed((uint64_t)peers);
    }
    return rc;
}

int MPI_Barrier(MPI_Comm comm)
{
    if (!S.on)
        return PMPI_Barrier(comm);
    MPI_Request r;
    return collective(PMPI_Ibarrier(comm, &r), &r, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (!S.on)
        return PMPI_Bcast(buf, count, type, root, comm);
    MPI_Request r;
    return collective(PMPI_Ibcast(buf, count, type, root, comm, &r), &r, comm);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    if (!S.on)
        return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    MPI_Request r;
    return collective(PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, &r), &r, comm);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    if (!S.on)
        return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    MPI_Request r;
    return collective(PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, &r), &r, comm);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    if (!S.on)
        return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    MPI_Request r;
    return collective(PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r), &r,
                      comm);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    if (!S.on)
        return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    MPI_Request r;
    return collective(PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r), &r,
                      comm);
}
