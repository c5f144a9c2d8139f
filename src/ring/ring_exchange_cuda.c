/* ring_exchange_cuda.c: the ring topology with --device cuda. It is ring_exchange.c's exchange
 * (MPI start-up, fingerprints, broadcasts, averages, checkpoints all unchanged) with step_device
 * added: the gradient never leaves the GPU (ranks on one host reduce it through CUDA IPC; across
 * hosts it goes through the ring's pinned staging buffers).
 *   step_device: barrier (wait) -> sum-allreduce on the device (psring's ring on device buffers,
 *   MPI_Allreduce on a host copy, or NCCL) -> scale 1/N (kernel) -> optimizer (kernel; its state
 *   lives on the device) with the gradient cleared in the same pass.
 * What it does not do: --overlap, --fp16, --stall-warn (options.c refuses them with --device cuda),
 * LARS on the device (refused here; the PS runs it on its servers). */
#include "ring_cuda.h"
#include "common/mpi_check.h"
#include "common/cuda_mem.h"
#include "exchange/exchange_device.h"
#include "ring_exchange.h"
#include "common/check.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <stdio.h>
#include <string.h>


typedef struct {
    exchange_device_t dev;        /* first: the device state and the wrapped ops (exchange_device.h) */
    MPI_Comm comm;
    allreduce_impl_t allreduce;   /* --allreduce: ring, mpi or nccl */
    ring_cuda_t *ring;
    nccl_ring_t *nccl;
    float *h_stage;               /* --allreduce mpi: pinned host copy of the gradient */
    int sum;                      /* --op sum: no 1/N (adasum, hierarchical: refused in options.c) */
} ringdev_t;

static int rd_state_get(exchange_t *ex, float *params, float *state, size_t count) {
    ringdev_t *d = ex->device_impl;
    if (d->dev.inner->state_get(ex, params, NULL, count) != 0) return -1;
    return exchange_device_state_get(ex, params, state, count);
}

static void allreduce_device(exchange_t *ex, ringdev_t *d, float *g, size_t n) {
    int N = ex->world_size;
    uint64_t nominal = (uint64_t)(2.0 * (N - 1) / N * (double)n * sizeof(float));
    switch (d->allreduce) {
    case ALLREDUCE_RING: {
        uint64_t s0 = ring_cuda_bytes_sent(d->ring), r0 = ring_cuda_bytes_recv(d->ring);
        ring_cuda_allreduce(d->ring, g, n);
        ex->stats.bytes_sent += ring_cuda_bytes_sent(d->ring) - s0;
        ex->stats.bytes_recv += ring_cuda_bytes_recv(d->ring) - r0;
        return;
    }
    case ALLREDUCE_MPI:
        cuda_to_host(d->h_stage, g, n);
        mpiCheck(mpi_allreduce_pieces(d->h_stage, n, MPI_FLOAT, MPI_SUM, d->comm));
        cuda_to_device(g, d->h_stage, n);
        break;
    case ALLREDUCE_NCCL:
        nccl_ring_allreduce(d->nccl, g, n);
        break;
    }
    ex->stats.bytes_sent += nominal;   /* opaque implementations: the bandwidth-optimal payload */
    ex->stats.bytes_recv += nominal;
}

static int rd_step_device(exchange_t *ex, float *d_params, float *d_grads, size_t count, float lr) {
    ringdev_t *d = ex->device_impl;
    if (exchange_device_count_check(ex, count) != 0) return -1;
    double t0 = timer_now();
    if (ex->world_size > 1) {
        cuda_sync();   /* backward is done before we wait for the others (wait = skew only) */
        double tw = timer_now();
        mpiCheck(MPI_Barrier(d->comm));
        double tw1 = timer_now();
        ex->stats.wait_s += tw1 - tw;
        timeline_event("wait", tw, tw1);
        allreduce_device(ex, d, d_grads, count);
        if (!d->sum) cuda_scale(d_grads, 1.0f / (float)ex->world_size, count);   /* --op average */
    }
    double t1 = timer_now();
    exchange_device_optimizer(ex, d_params, d_grads, count, lr);
    double t2 = timer_now();
    ex->stats.exchange_s += t1 - t0;
    ex->stats.optimizer_s += t2 - t1;
    timeline_event("optimizer", t1, t2);
    ex->stats.steps++;
    return 0;
}

static void rd_free(exchange_t *ex) {
    ringdev_t *d = ex->device_impl;
    if (d->ring) ring_cuda_free(d->ring);
    if (d->nccl) nccl_ring_free(d->nccl);
    cuda_host_free(d->h_stage);
    mpiCheck(MPI_Comm_free(&d->comm));
    exchange_device_free(ex);   /* the device state, d, then ex itself (and MPI) */
}

/* the inner report, with the device path in ring_path */
static void rd_report(exchange_t *ex, exchange_report_t *r) {
    ringdev_t *d = ex->device_impl;
    if (d->dev.inner->report) d->dev.inner->report(ex, r);
    if (ex->world_size == 1) return;   /* nothing exchanged: no path, as on the CPU */
    exchange_report_set(r, "ring_path", "%s", d->allreduce == ALLREDUCE_RING ? ring_cuda_path(d->ring)
                                              : d->allreduce == ALLREDUCE_NCCL ? "nccl" : "mpi");
}

exchange_t *exchange_ring_cuda_create(const ring_config_t *c, size_t count) {
    exchange_t *ex = exchange_ring_create(c, count);
    if (!ex) return NULL;
    char where[32];
    snprintf(where, sizeof where, " on rank %d", ex->rank);
    ringdev_t *d = exchange_device_wrap(ex, sizeof *d, count, "ring exchange (cuda)", "ring",
                                        "; --topology ps runs it on the servers", where);
    d->dev.ops.name = c->allreduce == ALLREDUCE_NCCL ? "ring-nccl" : "ring";
    d->dev.ops.grad_ready = NULL;
    d->dev.ops.state_get = rd_state_get;
    d->dev.ops.step_device = rd_step_device;
    d->dev.ops.free = rd_free;
    d->dev.ops.report = rd_report;
    /* the host gradient is never exchanged here (the device one is): plain memory, not the CPU
     * ring's shared-memory window (a collective allocation of the whole gradient on every rank) */
    d->dev.ops.grads_alloc = NULL;
    d->dev.ops.grads_free = NULL;
    d->allreduce = c->allreduce;
    d->sum = c->op == RING_OP_SUM;
    mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &d->comm));
    size_t chunk_bytes = (size_t)(c->chunk_kb > 0 ? c->chunk_kb : 0) * 1024;
    if (d->allreduce == ALLREDUCE_RING) d->ring = ring_cuda_create(MPI_COMM_WORLD, count, chunk_bytes, 1);
    if (d->allreduce == ALLREDUCE_MPI) d->h_stage = cuda_host_alloc((count ? count : 1) * sizeof(float));
    if (d->allreduce == ALLREDUCE_NCCL) {
        char err[512];
        d->nccl = nccl_ring_create(MPI_COMM_WORLD, err, sizeof err);
        if (!d->nccl) {
            if (ex->rank == 0) { fprintf(stderr, "psring: %s\n", err); fflush(stderr); }
            mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
            MPI_Finalize();
            exit(EXIT_BADINPUT);
        }
    }
    ex->step_clears_grads = 1;
    return ex;
}
