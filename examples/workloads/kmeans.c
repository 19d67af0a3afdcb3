/* k-means clustering of n points in 4 dimensions: clusters k and iterations as extra parameters.
 *
 * Usage: kmeans <n> <k> [iters=20] [start=<s>]
 * Each iteration assigns the rank's n/p points to the nearest of k centres (3 d k flops per
 * point) and combines the k x (d + 1) partial sums with MPI_Allreduce.
 */
#include <float.h>
#include "common.h"

#define DIM 4

int main(int argc, char **argv) {
    wl_state s;
    wl_init(&s, &argc, &argv);
    long n = wl_arg(argc, argv, 1, "n", 0);
    long k = wl_arg(argc, argv, 2, "k", 0);
    long iters = wl_arg(argc, argv, 3, "iters", 20);
    int rank = s.rank, size = s.size;
    long lo, hi;
    wl_block(n, size, rank, &lo, &hi);
    long m = hi - lo;
    unsigned long long seed = 99991ULL + 104729ULL * (unsigned long long)rank;
    double *pts = malloc((m * DIM + 1) * sizeof(double));
    for (long i = 0; i < m * DIM; i++) pts[i] = wl_rand(&seed);
    double *centres = malloc(k * DIM * sizeof(double));
    unsigned long long cseed = 7;
    for (long c = 0; c < k * DIM; c++) centres[c] = wl_rand(&cseed);
    double *sums = malloc(k * (DIM + 1) * sizeof(double)), *tot = malloc(k * (DIM + 1) * sizeof(double));
    double inertia = 0.0;

    wl_start(&s);
    for (long it = 0; it < iters; it++) {
        wl_sample(&s);
        for (long c = 0; c < k * (DIM + 1); c++) sums[c] = 0.0;
        inertia = 0.0;
        for (long i = 0; i < m; i++) {
            const double *x = pts + i * DIM;
            long best = 0;
            double bestd = DBL_MAX;
            for (long c = 0; c < k; c++) {
                double dd = 0.0;
                for (int j = 0; j < DIM; j++) { double t = x[j] - centres[c * DIM + j]; dd += t * t; }
                if (dd < bestd) { bestd = dd; best = c; }
            }
            inertia += bestd;
            for (int j = 0; j < DIM; j++) sums[best * (DIM + 1) + j] += x[j];
            sums[best * (DIM + 1) + DIM] += 1.0;
        }
        wl_comp(&s, 3.0 * DIM * k * m + (DIM + 1) * m);
        MPI_Allreduce(sums, tot, (int)(k * (DIM + 1)), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        wl_comm(&s);
        for (long c = 0; c < k; c++)
            if (tot[c * (DIM + 1) + DIM] > 0)
                for (int j = 0; j < DIM; j++) centres[c * DIM + j] = tot[c * (DIM + 1) + j] / tot[c * (DIM + 1) + DIM];
        wl_comp(&s, (double)k * DIM);
    }
    wl_finish(&s, "kmeans");
    if (rank == 0) fprintf(stderr, "kmeans n=%ld k=%ld p=%d iters=%ld local_inertia=%.6g\n", n, k, size, iters, inertia);
    free(pts); free(centres); free(sums); free(tot);
    MPI_Finalize();
    return 0;
}
