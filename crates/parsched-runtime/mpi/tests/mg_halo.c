/* A multigrid-like halo exchange: V-cycles for the 2-D Poisson problem
 * -lap u = f on the unit square (u = 0 on the boundary), rows split among
 * the ranks at every level. Each weighted-Jacobi sweep, restriction and
 * prolongation exchanges one halo row with each neighbour; the coarsest
 * level (one row per rank) is swept many times; each cycle ends with an
 * MPI_Allreduce of the residual. The coarse levels make it communication
 * bound, the fine one compute bound. f is chosen so that u = sin(pi x)
 * sin(pi y): rank 0 prints "mg_halo: verified" (exit 0) when the residual
 * fell by 1e6 and the error is within the discretisation's (40 h^2), else
 * the numbers (exit 1).
 * Usage: mg_halo N CYCLES (N a power of two, at least 4 x ranks). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LEVELS 24

struct level {
    long n, m; /* n intervals per side; m rows owned by each rank */
    double h, *u, *f, *r;
};

static int rank, size;

#define AT(L, a, i, j) ((L)->a[(i) * ((L)->n + 1) + (j)])

/* Fills the ghost rows 0 and m+1 of x from the neighbours (the boundary
   rows, global 0 and n, stay 0). */
static void halo(struct level *L, double *x)
{
    long W = L->n + 1, m = L->m;
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(x + 1 * W, (int)W, MPI_DOUBLE, up, 0, x + (m + 1) * W, (int)W, MPI_DOUBLE, down,
                 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(x + m * W, (int)W, MPI_DOUBLE, down, 1, x, (int)W, MPI_DOUBLE, up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Global row of local row i; rows 0 and n are the boundary. */
static long grow(const struct level *L, long i) { return rank * L->m + i - 1; }

static int interior(const struct level *L, long i) { long g = grow(L, i); return g > 0 && g < L->n; }

static void residual(struct level *L)
{
    halo(L, L->u);
    double h2 = 1.0 / (L->h * L->h);
    for (long i = 1; i <= L->m; i++)
        for (long j = 1; j < L->n; j++)
            AT(L, r, i, j) = interior(L, i)
                ? AT(L, f, i, j) - h2 * (4 * AT(L, u, i, j) - AT(L, u, i - 1, j) -
                                         AT(L, u, i + 1, j) - AT(L, u, i, j - 1) -
                                         AT(L, u, i, j + 1))
                : 0;
}

static void smooth(struct level *L, int sweeps)
{
    for (int s = 0; s < sweeps; s++) {
        residual(L);
        double w = 0.8 * L->h * L->h / 4;
        for (long i = 1; i <= L->m; i++)
            for (long j = 1; j < L->n; j++)
                AT(L, u, i, j) += w * AT(L, r, i, j);
    }
}

static void vcycle(struct level *lv, int k, int nlev)
{
    struct level *L = &lv[k];
    if (k == nlev - 1) {
        smooth(L, 60);
        return;
    }
    struct level *Cl = &lv[k + 1];
    smooth(L, 2);
    residual(L);
    halo(L, L->r);
    for (long i = 1; i <= Cl->m; i++)
        for (long j = 1; j < Cl->n; j++) {
            long fi = 2 * i - 1, fj = 2 * j; /* the local fine row of coarse row i */
            AT(Cl, f, i, j) =
                (4 * AT(L, r, fi, fj) + 2 * (AT(L, r, fi - 1, fj) + AT(L, r, fi + 1, fj) +
                                              AT(L, r, fi, fj - 1) + AT(L, r, fi, fj + 1)) +
                 AT(L, r, fi - 1, fj - 1) + AT(L, r, fi - 1, fj + 1) + AT(L, r, fi + 1, fj - 1) +
                 AT(L, r, fi + 1, fj + 1)) / 16;
            if (!interior(Cl, i))
                AT(Cl, f, i, j) = 0;
        }
    for (long i = 0; i <= Cl->m + 1; i++)
        for (long j = 0; j <= Cl->n; j++)
            AT(Cl, u, i, j) = 0;
    vcycle(lv, k + 1, nlev);
    halo(Cl, Cl->u);
    /* bilinear prolongation: fine global row g = 2G (+1) */
    for (long i = 1; i <= L->m; i++) {
        long g = grow(L, i);
        if (!interior(L, i))
            continue;
        long G = g / 2, ci = G - rank * Cl->m + 1; /* local coarse row of G */
        for (long j = 1; j < L->n; j++) {
            long J = j / 2;
            double v;
            if (g % 2 == 0)
                v = j % 2 == 0 ? AT(Cl, u, ci, J) : (AT(Cl, u, ci, J) + AT(Cl, u, ci, J + 1)) / 2;
            else if (j % 2 == 0)
                v = (AT(Cl, u, ci, J) + AT(Cl, u, ci + 1, J)) / 2;
            else
                v = (AT(Cl, u, ci, J) + AT(Cl, u, ci, J + 1) + AT(Cl, u, ci + 1, J) +
                     AT(Cl, u, ci + 1, J + 1)) / 4;
            AT(L, u, i, j) += v;
        }
    }
    smooth(L, 2);
}

static double norm(struct level *L)
{
    residual(L);
    double s = 0, all = 0;
    for (long i = 1; i <= L->m; i++)
        for (long j = 1; j < L->n; j++)
            s += AT(L, r, i, j) * AT(L, r, i, j);
    MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(all);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 2 ? atol(argv[1]) : 0;
    int cycles = argc > 2 ? atoi(argv[2]) : 0;
    if (n < 4L * size || (n & (n - 1)) || cycles < 1 || (size & (size - 1))) {
        if (rank == 0)
            fprintf(stderr, "usage: mg_halo N CYCLES (N a power of two >= 4 x ranks, a power "
                            "of two ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct level lv[LEVELS];
    int nlev = 0;
    for (long k = n; k / size >= 2 && nlev < LEVELS; k /= 2, nlev++) {
        struct level *L = &lv[nlev];
        L->n = k;
        L->m = k / size;
        L->h = 1.0 / k;
        size_t cells = (size_t)(L->m + 2) * (size_t)(k + 1);
        L->u = calloc(cells, sizeof(double));
        L->f = calloc(cells, sizeof(double));
        L->r = calloc(cells, sizeof(double));
        if (!L->u || !L->f || !L->r)
            MPI_Abort(MPI_COMM_WORLD, 3);
    }
    struct level *F = &lv[0];
    const double pi = acos(-1.0);
    for (long i = 1; i <= F->m; i++)
        for (long j = 0; j <= n; j++) {
            double x = grow(F, i) * F->h, y = j * F->h;
            AT(F, f, i, j) = interior(F, i) && j > 0 && j < n
                                 ? 2 * pi * pi * sin(pi * x) * sin(pi * y) : 0;
        }
    double r0 = norm(F), r = r0, t0 = MPI_Wtime();
    for (int c = 0; c < cycles; c++) {
        vcycle(lv, 0, nlev);
        r = norm(F);
    }
    double wall = MPI_Wtime() - t0, err = 0, all = 0;
    for (long i = 1; i <= F->m; i++)
        for (long j = 1; j < n; j++) {
            double x = grow(F, i) * F->h, y = j * F->h;
            if (interior(F, i))
                err = fmax(err, fabs(AT(F, u, i, j) - sin(pi * x) * sin(pi * y)));
        }
    MPI_Allreduce(&err, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = r <= 1e-6 * r0 && all <= 40 * F->h * F->h;
    if (rank == 0)
        printf("mg_halo: %s: N=%ld, %d levels, %d cycles in %.3f s, residual %.3g of %.3g, "
               "error %.3g (bound %.3g)\n",
               ok ? "verified" : "FAILED", n, nlev, cycles, wall, r, r0, all, 40 * F->h * F->h);
    MPI_Finalize();
    return ok ? 0 : 1;
}
