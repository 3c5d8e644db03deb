/*
 * libparsched_mpi's Fortran entry points (part of libparsched_mpi.so; the C
 * wrappers are in parsched_mpi.c).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

/* ---- Fortran (mpif.h and the mpi module, gfortran's names) ----
 * Open MPI's Fortran bindings call PMPI_* directly, so a profiling library
 * must define the Fortran symbols itself; MPICH's go through the C
 * functions above, and these definitions (found first under LD_PRELOAD)
 * lead to the same place. Buffers are passed through unchanged, so the
 * collectives with MPI_IN_PLACE or MPI_BOTTOM are not wrapped here. */

#ifndef MPI_F_STATUS_SIZE /* Open MPI: a Fortran status is the C one's size in MPI_Fint */
#define MPI_F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))
#endif

static MPI_Status *c_status(MPI_Fint *f, MPI_Status *c)
{
    return f == MPI_F_STATUS_IGNORE ? MPI_STATUS_IGNORE : c;
}

static void f_status(MPI_Fint *f, MPI_Status *c)
{
    if (f != MPI_F_STATUS_IGNORE)
        MPI_Status_c2f(c, f);
}

void mpi_init_(MPI_Fint *ierr) { *ierr = MPI_Init(NULL, NULL); }

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int p = 0;
    *ierr = MPI_Init_thread(NULL, NULL, *required, &p);
    *provided = p;
}

void mpi_finalize_(MPI_Fint *ierr) { *ierr = MPI_Finalize(); }

#define F_SEND(NAME, CNAME)                                                             \
    void NAME(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, \
              MPI_Fint *comm, MPI_Fint *ierr)                                           \
    {                                                                                   \
        *ierr = CNAME(buf, *count, MPI_Type_f2c(*type), *dest, *tag,                    \
                      MPI_Comm_f2c(*comm));                                             \
    }
F_SEND(mpi_send_, MPI_Send)
F_SEND(mpi_ssend_, MPI_Ssend)

void mpi_isend_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r;
    *ierr = MPI_Isend(buf, *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm), &r);
    if (*ierr == MPI_SUCCESS)
        *req = MPI_Request_c2f(r);
}

void mpi_irecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
    MPI_Request r;
    *ierr = MPI_Irecv(buf, *count, MPI_Type_f2c(*type), *src, *tag, MPI_Comm_f2c(*comm), &r);
    if (*ierr == MPI_SUCCESS)
        *req = MPI_Request_c2f(r);
}

void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag,
               MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status c;
    *ierr = MPI_Recv(buf, *count, MPI_Type_f2c(*type), *src, *tag, MPI_Comm_f2c(*comm),
                     c_status(status, &c));
    if (*ierr == MPI_SUCCESS)
        f_status(status, &c);
}

void mpi_sendrecv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *dest,
                   MPI_Fint *stag, void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype,
                   MPI_Fint *src, MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *status,
                   MPI_Fint *ierr)
{
    MPI_Status c;
    *ierr = MPI_Sendrecv(sbuf, *scount, MPI_Type_f2c(*stype), *dest, *stag, rbuf, *rcount,
                         MPI_Type_f2c(*rtype), *src, *rtag, MPI_Comm_f2c(*comm),
                         c_status(status, &c));
    if (*ierr == MPI_SUCCESS)
        f_status(status, &c);
}

void mpi_wait_(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = MPI_Request_f2c(*req);
    MPI_Status c;
    *ierr = MPI_Wait(&r, c_status(status, &c));
    if (*ierr == MPI_SUCCESS) {
        *req = MPI_Request_c2f(r);
        f_status(status, &c);
    }
}

void mpi_waitall_(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr)
{
    int k = *n;
    MPI_Request small[64], *r = k <= 64 ? small : malloc(sizeof *r * (size_t)(k > 0 ? k : 1));
    MPI_Status smalls[64], *s = k <= 64 ? smalls : malloc(sizeof *s * (size_t)(k > 0 ? k : 1));
    if (!r || !s) {
        *ierr = MPI_ERR_NO_MEM;
        goto out;
    }
    for (int i = 0; i < k; i++)
        r[i] = MPI_Request_f2c(reqs[i]);
    *ierr = MPI_Waitall(k, r, statuses == MPI_F_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : s);
    if (*ierr == MPI_SUCCESS)
        for (int i = 0; i < k; i++) {
            reqs[i] = MPI_Request_c2f(r[i]);
            if (statuses != MPI_F_STATUSES_IGNORE)
                MPI_Status_c2f(&s[i], statuses + (size_t)i * MPI_F_STATUS_SIZE);
        }
out:
    if (r != small)
        free(r);
    if (s != smalls)
        free(s);
}

void mpi_probe_(MPI_Fint *src, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status,
                MPI_Fint *ierr)
{
    MPI_Status c;
    *ierr = MPI_Probe(*src, *tag, MPI_Comm_f2c(*comm), c_status(status, &c));
    if (*ierr == MPI_SUCCESS)
        f_status(status, &c);
}

void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr) { *ierr = MPI_Barrier(MPI_Comm_f2c(*comm)); }
