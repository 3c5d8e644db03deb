/* Ping-pong between ranks 0 and 1 (usage: pingpong ROUNDS): prints the mean
 * round trip in microseconds, for measuring libparsched_mpi's cost per call
 * (run with and without LD_PRELOAD). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n = argc > 1 ? atoi(argv[1]) : 100000, v = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("round trip %.3f us\n", t / n * 1e6);
    MPI_Finalize();
    return 0;
}
