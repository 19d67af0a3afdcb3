/* 2D Jacobi stencil on an n x n grid with halo exchange.
 *
 * Usage: jacobi <n> [iters=100] [start=<s>]
 * Row-block decomposition: every iteration each rank exchanges one row of n doubles with each
 * neighbour (MPI_Sendrecv) and updates its n^2/p points (5 flops each); every 10 iterations the
 * residual is combined with MPI_Allreduce.
 */
#include <math.h>
#include "common.h"

int main(int argc, char **argv) {
    wl_state s;
    wl_init(&s, &argc, &argv);
    long n = wl_arg(argc, argv, 1, "n", 0);
    long iters = wl_arg(argc, argv, 2, "iters", 100);
    int rank = s.rank, size = s.size;
    long lo, hi;
    wl_block(n, size, rank, &lo, &hi);
    long rows = hi - lo, w = n + 2;
    double *u = calloc((rows + 2) * w, sizeof(double)), *v = calloc((rows + 2) * w, sizeof(double));
    for (long i = 0; i < rows + 2; i++) { u[i * w] = v[i * w] = 1.0; }  /* hot left boundary */
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double residual = 0.0;

    wl_start(&s);
    for (long it = 0; it < iters; it++) {
        wl_sample(&s);
        MPI_Sendrecv(u + 1 * w, (int)w, MPI_DOUBLE, up, 0, u + (rows + 1) * w, (int)w, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + rows * w, (int)w, MPI_DOUBLE, down, 1, u, (int)w, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        wl_comm(&s);
        double local = 0.0;
        for (long i = 1; i <= rows; i++)
            for (long j = 1; j <= n; j++) {
                double x = 0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
                local += fabs(x - u[i * w + j]);
                v[i * w + j] = x;
            }
        double *t = u; u = v; v = t;
        wl_comp(&s, 6.0 * rows * n);
        if (it % 10 == 9) {
            MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            wl_comm(&s);
        }
    }
    wl_finish(&s, "jacobi");
    if (rank == 0) fprintf(stderr, "jacobi n=%ld p=%d iters=%ld residual=%.6g\n", n, size, iters, residual);
    free(u); free(v);
    MPI_Finalize();
    return 0;
}
