/* Dense matrix multiply C = A B (n x n): cubic computation, quadratic communication.
 *
 * Usage: matmul <n> [start=<s>]
 * Row-block distribution: A is scattered by rows, B is broadcast to every rank, each rank
 * computes its rows of C (2 n^3 / p flops), and C is gathered on rank 0.
 */
#include "common.h"

int main(int argc, char **argv) {
    wl_state s;
    wl_init(&s, &argc, &argv);
    long n = wl_arg(argc, argv, 1, "n", 0);
    int rank = s.rank, size = s.size;

    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++) {
        long lo, hi;
        wl_block(n, size, r, &lo, &hi);
        counts[r] = (int)((hi - lo) * n);
        displs[r] = (int)(lo * n);
    }
    long rows = counts[rank] / n;
    double *a = NULL, *c = NULL;
    double *b = malloc(n * n * sizeof(double));
    double *la = malloc((rows * n + 1) * sizeof(double)), *lc = malloc((rows * n + 1) * sizeof(double));
    if (rank == 0) {
        a = malloc(n * n * sizeof(double));
        c = malloc(n * n * sizeof(double));
        unsigned long long seed = 42;
        for (long i = 0; i < n * n; i++) { a[i] = wl_rand(&seed); b[i] = wl_rand(&seed); }
    }

    wl_start(&s);
    wl_sample(&s);
    MPI_Scatterv(a, counts, displs, MPI_DOUBLE, la, counts[rank], MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(b, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    wl_comm(&s);
    wl_sample(&s);
    for (long i = 0; i < rows; i++) {
        double *ci = lc + i * n;
        for (long j = 0; j < n; j++) ci[j] = 0.0;
        for (long k = 0; k < n; k++) {
            double aik = la[i * n + k];
            const double *bk = b + k * n;
            for (long j = 0; j < n; j++) ci[j] += aik * bk[j];
        }
    }
    wl_comp(&s, 2.0 * rows * n * n);
    wl_sample(&s);
    MPI_Gatherv(lc, counts[rank], MPI_DOUBLE, c, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    wl_comm(&s);
    wl_finish(&s, "matmul");

    if (rank == 0) {
        double trace = 0.0;
        for (long i = 0; i < n; i++) trace += c[i * n + i];
        fprintf(stderr, "matmul n=%ld p=%d trace=%.6g\n", n, size, trace);
        free(a);
        free(c);
    }
    free(b); free(la); free(lc); free(counts); free(displs);
    MPI_Finalize();
    return 0;
}
