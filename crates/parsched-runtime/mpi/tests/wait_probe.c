/* A test program for libparsched_mpi: rank 0 computes for DELAY_MS, then sends
 * rank 1 one message; rank 1 waits for it in MPI_Recv (or MPI_Irecv + MPI_Wait
 * with "wait", MPI_Irecv + polling MPI_Test with "test", MPI_Barrier with
 * "barrier"). Rank 1 prints the CPU time its
 * process used while it waited and the wall time. Usage: wait_probe DELAY_MS
 * [recv|wait|test|barrier]. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double delay = argc > 1 ? atof(argv[1]) * 1e-3 : 1.0;
    const char *how = argc > 2 ? argv[2] : "recv";
    int v = 42;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = now(CLOCK_MONOTONIC);
        volatile double x = 0;
        while (now(CLOCK_MONOTONIC) - t0 < delay)
            x += 1.0;
        if (!strcmp(how, "barrier"))
            MPI_Barrier(MPI_COMM_WORLD);
        else
            MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        int got = 0;
        if (!strcmp(how, "barrier")) {
            MPI_Barrier(MPI_COMM_WORLD);
            got = 42;
        } else if (!strcmp(how, "test")) {
            MPI_Request r;
            int flag = 0;
            MPI_Irecv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r);
            while (!flag)
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        } else if (!strcmp(how, "wait")) {
            MPI_Request r;
            MPI_Irecv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        printf("waited wall %.4f cpu %.4f got %d\n", now(CLOCK_MONOTONIC) - w0,
               now(CLOCK_PROCESS_CPUTIME_ID) - c0, got);
        fflush(stdout);
    } else if (!strcmp(how, "barrier")) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
