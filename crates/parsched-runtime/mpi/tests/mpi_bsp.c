/* A bulk-synchronous MPI program for the runtime's tests: ITERS iterations of
 * GRAIN_US microseconds of CPU work on each rank (times its multiplier, MULTS
 * a comma-separated list: rank r takes MULTS[r mod n]), each ending in
 * MPI_Barrier. CPU work is measured on the thread's CPU clock, so a rank that
 * is frozen or preempted computes no faster. Usage:
 * mpi_bsp ITERS GRAIN_US [MULTS] */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_bsp ITERS GRAIN_US [MULTS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long iters = atol(argv[1]);
    double grain = atof(argv[2]) * 1e-6, mult = 1.0;
    if (argc > 3) {
        char *list = strdup(argv[3]), *tok, *save = NULL;
        int n = 0;
        double m[64];
        for (tok = strtok_r(list, ",", &save); tok && n < 64; tok = strtok_r(NULL, ",", &save))
            m[n++] = atof(tok);
        if (n)
            mult = m[rank % n];
        free(list);
    }
    volatile double x = 0;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        double c0 = cpu();
        while (cpu() - c0 < grain * mult)
            for (int k = 0; k < 1000; k++)
                x += 1.0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("mpi_bsp: %ld iterations in %.3f s\n", iters, MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
