/* Shared helpers of the automodel MPI workloads: timing split into computation and
 * communication, modelled computation under SimGrid SMPI, load sampling, and the result line.
 *
 * Every workload prints, on rank 0, one line
 *     time=<s> comp=<s> comm=<s> [cpu=<fraction> bw=<fraction>]
 * where time is the wall (or simulated) time between two barriers, and comp / comm are the
 * per-rank computation / communication times averaged over ranks.
 *
 * Under SMPI (built with smpicc) the computation is also *modelled*: work(flops) injects the
 * flop count with smpi_execute_flops when the run uses --cfg=smpi/simulate-computation:no, so
 * simulated times depend on the platform's host speed and CPU-availability traces, not on the
 * machine that runs the simulation. cpu and bw are then the CPU availability of the rank's host
 * and the bandwidth of the route to the next host, as fractions of their values at t = 0,
 * averaged over samples (one per iteration) and ranks. Platform traces must therefore start at
 * full availability at t = 0. An argument start=<seconds> delays the measured part by that many
 * simulated seconds, so runs of one campaign see different parts of the load traces.
 */
#ifndef AUTOMODEL_WORKLOAD_COMMON_H
#define AUTOMODEL_WORKLOAD_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SMPI_H
#include <simgrid/host.h>
#include <xbt/config.h>
#endif

typedef struct {
    double comp, comm, t0, mark;
    double cpu_sum, bw_sum;
    long samples;
    double speed0, bw0;
    int model_flops;
    double start_delay;
    int rank, size;
} wl_state;

/* Start MPI, record rank and size, and parse the optional start=<seconds> argument; returns the
 * number of positional arguments left. */
static int wl_init(wl_state *s, int *argc, char ***argvp) {
    MPI_Init(argc, argvp);
    char **argv = *argvp;
    memset(s, 0, sizeof *s);
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->size);
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        if (strncmp(argv[i], "start=", 6) == 0)
            s->start_delay = atof(argv[i] + 6);
        else
            argv[kept++] = argv[i];
    }
    *argc = kept;
#ifdef SMPI_H
    s->model_flops = !sg_cfg_get_boolean("smpi/simulate-computation");
    sg_host_t self = sg_host_self();
    size_t count = sg_host_count();
    sg_host_t *hosts = sg_host_list();
    sg_host_t other = hosts[0] == self && count > 1 ? hosts[1] : hosts[0];
    for (size_t i = 0; i + 1 < count; i++)
        if (hosts[i] == self) { other = hosts[i + 1]; break; }
    if (other == self && count > 1) other = hosts[0];
    s->speed0 = sg_host_get_available_speed(self);
    s->bw0 = other == self ? 0.0 : sg_host_get_route_bandwidth(self, other);
    free(hosts);
#endif
    return kept;
}

static void wl_sample(wl_state *s) {
#ifdef SMPI_H
    sg_host_t self = sg_host_self();
    s->cpu_sum += sg_host_get_available_speed(self) / (s->speed0 > 0 ? s->speed0 : 1.0);
    size_t count = sg_host_count();
    sg_host_t *hosts = sg_host_list();
    sg_host_t other = self;
    for (size_t i = 0; i < count; i++)
        if (hosts[i] == self) { other = hosts[(i + 1) % count]; break; }
    s->bw_sum += (other == self || s->bw0 <= 0) ? 1.0 : sg_host_get_route_bandwidth(self, other) / s->bw0;
    free(hosts);
    s->samples++;
#else
    (void)s;
#endif
}

/* Start the measured part: optional simulated delay, then a barrier. */
static void wl_start(wl_state *s) {
#ifdef SMPI_H
    if (s->start_delay > 0) usleep((useconds_t)(s->start_delay * 1e6));
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    s->t0 = s->mark = MPI_Wtime();
}

/* Charge the time since the last mark to computation (after doing `flops` of work). */
static void wl_comp(wl_state *s, double flops) {
#ifdef SMPI_H
    if (s->model_flops && flops > 0) smpi_execute_flops(flops);
#else
    (void)flops;
#endif
    double now = MPI_Wtime();
    s->comp += now - s->mark;
    s->mark = now;
}

/* Charge the time since the last mark to communication. */
static void wl_comm(wl_state *s) {
    double now = MPI_Wtime();
    s->comm += now - s->mark;
    s->mark = now;
}

/* End the measured part and print the result line on rank 0. */
static void wl_finish(wl_state *s, const char *name) {
    MPI_Barrier(MPI_COMM_WORLD);
    double elapsed = MPI_Wtime() - s->t0;
    wl_comm(s);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double local[5] = {s->comp, s->comm, s->cpu_sum, s->bw_sum, (double)s->samples};
    double sum[5];
    double tmax;
    MPI_Reduce(local, sum, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&elapsed, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s time=%.9g comp=%.9g comm=%.9g", name, tmax, sum[0] / size, sum[1] / size);
        if (sum[4] > 0) printf(" cpu=%.6g bw=%.6g", sum[2] / sum[4], sum[3] / sum[4]);
        printf("\n");
        fflush(stdout);
    }
}

/* Parse a positive integer argument or exit with a one-line message. */
static long wl_arg(int argc, char **argv, int i, const char *name, long fallback) {
    if (i >= argc) {
        if (fallback > 0) return fallback;
        fprintf(stderr, "%s: missing argument %d (%s)\n", argv[0], i, name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v <= 0) {
        fprintf(stderr, "%s: argument %d (%s) must be a positive integer, got '%s'\n", argv[0], i, name, argv[i]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

/* Deterministic per-rank pseudo-random numbers in [0, 1). */
static double wl_rand(unsigned long long *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0;
}

/* Rows [lo, hi) of n owned by rank r of p (block distribution, remainder spread). */
static void wl_block(long n, int p, int r, long *lo, long *hi) {
    long base = n / p, extra = n % p;
    *lo = r * base + (r < extra ? r : extra);
    *hi = *lo + base + (r < extra ? 1 : 0);
}

#endif
