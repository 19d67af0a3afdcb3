/* Conjugate gradient on the 1D Poisson matrix tridiag(-1, 2, -1) of size n: two allreduces per
 * iteration.
 *
 * Usage: cg <n> [iters=50] [start=<s>]
 * Each iteration: halo exchange of one value with each neighbour, a matrix-vector product,
 * two dot products combined with MPI_Allreduce, three vector updates (about 12 n / p flops).
 */
#include <math.h>
#include "common.h"

static double dot(const double *x, const double *y, long m) {
    double acc = 0.0;
    for (long i = 0; i < m; i++) acc += x[i] * y[i];
    return acc;
}

int main(int argc, char **argv) {
    wl_state s;
    wl_init(&s, &argc, &argv);
    long n = wl_arg(argc, argv, 1, "n", 0);
    long iters = wl_arg(argc, argv, 2, "iters", 50);
    int rank = s.rank, size = s.size;
    long lo, hi;
    wl_block(n, size, rank, &lo, &hi);
    long m = hi - lo;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double *x = calloc(m + 1, sizeof(double)), *r = malloc((m + 1) * sizeof(double));
    double *d = calloc(m + 2, sizeof(double)), *q = malloc((m + 1) * sizeof(double));
    for (long i = 0; i < m; i++) r[i] = d[i + 1] = 1.0;  /* b = 1, x0 = 0 */
    double rr, rr_local = dot(r, r, m);
    MPI_Allreduce(&rr_local, &rr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    wl_start(&s);
    for (long it = 0; it < iters; it++) {
        wl_sample(&s);
        d[0] = d[m + 1] = 0.0;
        MPI_Sendrecv(d + 1, 1, MPI_DOUBLE, left, 0, d + m + 1, 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(d + m, 1, MPI_DOUBLE, right, 1, d, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        wl_comm(&s);
        for (long i = 0; i < m; i++) q[i] = 2.0 * d[i + 1] - d[i] - d[i + 2];
        double dq_local = dot(d + 1, q, m), dq;
        wl_comp(&s, 5.0 * m);
        MPI_Allreduce(&dq_local, &dq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        wl_comm(&s);
        double alpha = rr / dq;
        for (long i = 0; i < m; i++) { x[i] += alpha * d[i + 1]; r[i] -= alpha * q[i]; }
        double rr_new_local = dot(r, r, m), rr_new;
        wl_comp(&s, 6.0 * m);
        MPI_Allreduce(&rr_new_local, &rr_new, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        wl_comm(&s);
        double beta = rr_new / rr;
        rr = rr_new;
        for (long i = 0; i < m; i++) d[i + 1] = r[i] + beta * d[i + 1];
        wl_comp(&s, 2.0 * m);
    }
    wl_finish(&s, "cg");
    if (rank == 0) fprintf(stderr, "cg n=%ld p=%d iters=%ld residual=%.6g\n", n, size, iters, sqrt(rr));
    free(x); free(r); free(d); free(q);
    MPI_Finalize();
    return 0;
}
