/* Conway's game of life on a torus, rows split among the ranks, one halo
 * row exchanged with each neighbour (MPI_Sendrecv) per generation: the
 * paper's LIFE (seed 003, section 4), a fine-grained communicating program.
 * The board starts with gliders 8 cells apart, all heading the same way, so
 * after GENS generations (a multiple of 4) it must be the first board moved
 * GENS/4 cells down and right: every rank checks its rows against that and
 * rank 0 prints "life: verified" (exit 0) or the mismatches (exit 1).
 * Usage: life ROWS COLS GENS (ROWS a multiple of 8 x ranks, COLS of 8). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first board: a glider in every 8x8 block. */
static int first(long r, long c)
{
    static const char g[3][4] = {".O.", "..O", "OOO"};
    long i = r % 8, j = c % 8;
    return i < 3 && j < 3 && g[i][j] == 'O';
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long R = argc > 3 ? atol(argv[1]) : 0, C = argc > 3 ? atol(argv[2]) : 0;
    long gens = argc > 3 ? atol(argv[3]) : 0;
    if (R <= 0 || C <= 0 || R % (8L * size) || C % 8 || gens < 0 || gens % 4) {
        if (rank == 0)
            fprintf(stderr, "usage: life ROWS COLS GENS (ROWS a multiple of 8 x ranks, COLS "
                            "of 8, GENS of 4)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long m = R / size, r0 = rank * m, W = C + 2;
    unsigned char *a = calloc((size_t)(m + 2) * W, 1), *b = calloc((size_t)(m + 2) * W, 1);
    if (!a || !b)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (long i = 1; i <= m; i++)
        for (long j = 1; j <= C; j++)
            a[i * W + j] = (unsigned char)first(r0 + i - 1, j - 1);
    int up = (rank + size - 1) % size, down = (rank + 1) % size;
    double t0 = MPI_Wtime();
    for (long g = 0; g < gens; g++) {
        MPI_Sendrecv(a + 1 * W, (int)W, MPI_UNSIGNED_CHAR, up, 0, a + (m + 1) * W, (int)W,
                     MPI_UNSIGNED_CHAR, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(a + m * W, (int)W, MPI_UNSIGNED_CHAR, down, 1, a, (int)W,
                     MPI_UNSIGNED_CHAR, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (long i = 0; i <= m + 1; i++) {
            a[i * W] = a[i * W + C];
            a[i * W + C + 1] = a[i * W + 1];
        }
        for (long i = 1; i <= m; i++) {
            const unsigned char *p = a + (i - 1) * W, *q = a + i * W, *s = a + (i + 1) * W;
            unsigned char *o = b + i * W;
            for (long j = 1; j <= C; j++) {
                int n = p[j - 1] + p[j] + p[j + 1] + q[j - 1] + q[j + 1] + s[j - 1] + s[j] +
                        s[j + 1];
                o[j] = (unsigned char)(n == 3 || (n == 2 && q[j]));
            }
        }
        unsigned char *t = a;
        a = b;
        b = t;
    }
    double wall = MPI_Wtime() - t0;
    long bad = 0, shift = gens / 4, all = 0;
    for (long i = 1; i <= m; i++)
        for (long j = 1; j <= C; j++) {
            long r = ((r0 + i - 1 - shift) % R + R) % R, c = ((j - 1 - shift) % C + C) % C;
            bad += a[i * W + j] != first(r, c);
        }
    MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("life: FAILED: %ld cells differ from the expected board\n", all);
        else
            printf("life: verified: %ld generations of %ldx%ld in %.3f s\n", gens, R, C, wall);
    }
    free(a);
    free(b);
    MPI_Finalize();
    return all ? 1 : 0;
}
