/* Parallel bucket sort of n random keys with an all-to-all exchange.
 *
 * Usage: bucketsort <n> [start=<s>]
 * Each rank draws n/p keys in [0, 1), counts how many fall in each rank's range
 * (MPI_Alltoall of p counts), sends them there (MPI_Alltoallv) and sorts what it received
 * locally (about (n/p) log2(n/p) comparisons).
 */
#include <math.h>
#include "common.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    wl_state s;
    wl_init(&s, &argc, &argv);
    long n = wl_arg(argc, argv, 1, "n", 0);
    int rank = s.rank, size = s.size;
    long lo, hi;
    wl_block(n, size, rank, &lo, &hi);
    long m = hi - lo;
    unsigned long long seed = 1234567ULL + 7919ULL * (unsigned long long)rank;
    double *keys = malloc((m + 1) * sizeof(double)), *packed = malloc((m + 1) * sizeof(double));
    for (long i = 0; i < m; i++) keys[i] = wl_rand(&seed);
    int *scount = calloc(size, sizeof(int)), *rcount = malloc(size * sizeof(int));
    int *sdispl = malloc(size * sizeof(int)), *rdispl = malloc(size * sizeof(int)), *fill = malloc(size * sizeof(int));

    wl_start(&s);
    wl_sample(&s);
    for (long i = 0; i < m; i++) scount[(int)(keys[i] * size)]++;
    sdispl[0] = 0;
    for (int r = 1; r < size; r++) sdispl[r] = sdispl[r - 1] + scount[r - 1];
    for (int r = 0; r < size; r++) fill[r] = sdispl[r];
    for (long i = 0; i < m; i++) packed[fill[(int)(keys[i] * size)]++] = keys[i];
    wl_comp(&s, 4.0 * m);
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
    long total = 0;
    for (int r = 0; r < size; r++) { rdispl[r] = (int)total; total += rcount[r]; }
    double *mine = malloc((total + 1) * sizeof(double));
    MPI_Alltoallv(packed, scount, sdispl, MPI_DOUBLE, mine, rcount, rdispl, MPI_DOUBLE, MPI_COMM_WORLD);
    wl_comm(&s);
    wl_sample(&s);
    qsort(mine, (size_t)total, sizeof(double), cmp_double);
    wl_comp(&s, total > 1 ? 10.0 * total * log2((double)total) : 0.0);
    wl_finish(&s, "bucketsort");

    int sorted = 1;
    for (long i = 1; i < total; i++) sorted &= mine[i - 1] <= mine[i];
    int all_sorted;
    MPI_Reduce(&sorted, &all_sorted, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) fprintf(stderr, "bucketsort n=%ld p=%d sorted=%d\n", n, size, all_sorted);
    free(keys); free(packed); free(mine); free(scount); free(rcount); free(sdispl); free(rdispl); free(fill);
    MPI_Finalize();
    return 0;
}
