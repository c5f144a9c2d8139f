/* ring_exchange.c: the "ring" topology for the shared trainer (exchange.h). Every process is a
 * worker; a step allreduce-sums the local mean gradients (psring's ring, or MPI_Allreduce as the
 * baseline), scales by 1/N and runs the same optimizer on every worker, so parameters stay
 * identical without ever being sent after the initial broadcast.
 *   --fp16      gradients travel as halves (ring: float accumulation per hop; mpi: MPI_Allreduce
 *               on halves with a user-defined half-sum op, which rounds after every addition)
 *   --overlap   grad_ready() fuses finished ranges into buckets that a communication thread
 *               allreduces while backward continues (ring_overlap.c)
 *   --op        average (sum / N, the default), sum (no 1/N: the user scales lr), adasum
 *               (ring_ops.c: per-tensor adaptive pairwise sum, power-of-two N)
 *   --hierarchical  reduce in each host, psring's ring between host roots, broadcast (ring_ops.c)
 *   --autotune  with --overlap: the first steps search bucket and chunk sizes (ring_autotune.c)
 * This file is the adapter (the exchange ops, the allreduce of a range, --stall-warn,
 * construction from a ring_config_t); the overlap thread is ring_overlap.c.
 * What it does not do: any recovery from a dead peer (MPI ends the job; mpirun names the rank). */
#include "ring_exchange_impl.h"
#include "common/half.h"
#include "common/check.h"
#include "common/mpi_check.h"
#include "common/timeline.h"
#include "common/timer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fp16 over MPI_Allreduce: sum of halves, rounded to half after each addition ---- */
static void half_sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
    const uint16_t *a = in;
    uint16_t *b = inout;
    float fa[1024], fb[1024];
    for (int i = 0; i < *len; i += 1024) {
        int n = *len - i < 1024 ? *len - i : 1024;
        half_to_float(fa, a + i, (size_t)n);
        half_to_float(fb, b + i, (size_t)n);
        ring_add(fb, fa, (size_t)n);
        half_from_float(b + i, fb, (size_t)n);
    }
}

/* ring_exchange_impl.h. off is where buf starts in the whole gradient (the fp16 wire buffer is indexed the same
 * way). average: the sum times 1/N, which psring's float ring folds into its pass
 * (ring_allreduce_scaled) and the others get as one ring_scale pass over the range after the sum;
 * sum and adasum are not divided (adasum(g, g) = g already, sum leaves lr to the user). */
void ringex_allreduce_range(exchange_t *ex, ring_t *r, MPI_Comm comm, float *buf, size_t off, size_t n) {
    ringex_t *x = ex->impl;
    int N = ex->world_size;
    if (N == 1 || n == 0) return;
    const float scale = x->op == RING_OP_AVERAGE ? 1.0f / (float)N : 1.0f;
    if (x->hier_on) {   /* options refuse hierarchical and adasum with --overlap: whole buffer */
        uint64_t s0 = x->hier.bytes_sent, r0 = x->hier.bytes_recv;
        hier_allreduce(&x->hier, buf, n);
        ex->stats.bytes_sent += x->hier.bytes_sent - s0; ex->stats.bytes_recv += x->hier.bytes_recv - r0;
    } else if (x->op == RING_OP_ADASUM) {
        uint64_t s0 = x->adasum.bytes_sent, r0 = x->adasum.bytes_recv;
        adasum_allreduce(&x->adasum, buf, n);
        ex->stats.bytes_sent += x->adasum.bytes_sent - s0; ex->stats.bytes_recv += x->adasum.bytes_recv - r0;
    } else if (x->allreduce == ALLREDUCE_RING && !x->fp16) {
        ring_allreduce_scaled(r, buf, n, scale);
        return;
    } else if (x->allreduce == ALLREDUCE_RING) {
        ring_allreduce_fp16(r, buf, n);
    } else {
        size_t esz = x->fp16 ? sizeof(uint16_t) : sizeof(float);
        double t_mpi = timer_now();
        /* MPI_Allreduce's internals are opaque: count the bandwidth-optimal payload, as for the ring */
        uint64_t nominal = (uint64_t)(2.0 * (N - 1) / N * (double)n * (double)esz);
        if (x->fp16) {   /* element-wise conversions: the same halves as piece by piece */
            uint16_t *h = x->half + off;
            half_from_float(h, buf, n);
            mpiCheck(mpi_allreduce_pieces(h, n, MPI_UINT16_T, x->half_sum, comm));
            half_to_float(buf, h, n);
        } else {
            mpiCheck(mpi_allreduce_pieces(buf, n, MPI_FLOAT, MPI_SUM, comm));
        }
        ex->stats.bytes_sent += nominal;
        ex->stats.bytes_recv += nominal;
        timeline_event("allreduce", t_mpi, timer_now());
    }
    if (scale != 1.0f) ring_scale(buf, scale, n);
}

/* ---- stall detection (Horovod's stall check, rank 0 as the coordinator) ----
 * Before each allreduce every rank tells rank 0 which step it reached (one 8-byte eager send,
 * never waited on by the sender beyond the copy); rank 0 collects these and, when some ranks are
 * still missing stall_warn seconds after rank 0 got there, names them once and keeps waiting.
 * The allreduce itself would block without saying who is late. Costs rank 0 a short poll per
 * step, so it is off unless --stall-warn is given. Rank 0 itself cannot be named (as in Horovod). */
static void stall_check(exchange_t *ex) {
    ringex_t *x = ex->impl;
    long step = x->stall_step++;
    int N = ex->world_size;
    if (ex->rank != 0) {
        mpiCheck(MPI_Send(&step, 1, MPI_LONG, 0, 0, x->stall_comm));
        return;
    }
    for (int r = 1; r < N; r++) {
        x->stall_in[r] = 0;
        mpiCheck(MPI_Irecv(&x->stall_got[r], 1, MPI_LONG, r, 0, x->stall_comm, &x->stall_req[r - 1]));
    }
    double t0 = timer_now();
    int arrived = 0, named = 0;
    char list[512] = "";
    int *idx = xmalloc(sizeof(int) * (size_t)N);
    while (arrived < N - 1) {
        int n = 0;
        mpiCheck(MPI_Testsome(N - 1, x->stall_req, &n, idx, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n && n != MPI_UNDEFINED; i++) { x->stall_in[idx[i] + 1] = 1; arrived++; }
        if (arrived == N - 1) break;
        double waited = timer_now() - t0;
        int due = 0;
        for (int r = 1; r < N; r++)
            if (!x->stall_in[r] && stall_watch_due(&x->stall, r, waited)) { rank_list_add(list, sizeof list, r); due = 1; }
        if (due) {
            fprintf(stderr, "psring: ring: stall: rank(s) %s have not reached step %ld for %.1f s; the others wait "
                    "in the allreduce (--stall-warn %.3g)\n", list, step + 1, waited, x->stall.warn);
            fflush(stderr);
            named = 1;
        }
        if (waited > 0.001) timer_sleep_us(100);
    }
    free(idx);
    for (int r = 1; r < N; r++) stall_watch_clear(&x->stall, r);
    if (named) {
        fprintf(stderr, "psring: ring: step %ld: every rank arrived after %.1f s\n", step + 1, timer_now() - t0);
        fflush(stderr);
    }
}

/* ---- exchange ops ---- */
static int ringex_sync_params(exchange_t *ex, float *params, size_t count) {
    ringex_t *x = ex->impl;
    x->params_seen = params;
    mpiCheck(mpi_bcast_pieces(params, count, MPI_FLOAT, 0, x->comm));
    mpiCheck(mpi_bcast_pieces(x->state, x->nstate, MPI_FLOAT, 0, x->comm));
    /* rank 0 is through a broadcast once it has sent its part, while the tree may still forward
     * between the others: wait until every rank holds both, so the start-up is over everywhere
     * when this returns (the trainer's header, the demo's count of the steps' link bytes) */
    mpiCheck(MPI_Barrier(x->comm));
    return 0;
}

static int ringex_step(exchange_t *ex, float *params, float *grads, size_t count, float lr) {
    ringex_t *x = ex->impl;
    if (count != x->count) {
        fprintf(stderr, "psring: ring exchange: step() with %zu parameters, created for %zu\n", count, x->count);
        return -1;
    }
    x->params_seen = params;
    double t0 = timer_now();
    uint64_t s0 = x->ring.bytes_sent + x->ov.ring.bytes_sent, r0 = x->ring.bytes_recv + x->ov.ring.bytes_recv;
    if (x->stall.warn > 0) stall_check(ex);
    if (x->overlap && x->ov.grads) {
        ring_overlap_flush(ex, grads);
    } else {
        /* Horovod's negotiation phase, made explicit: a barrier absorbs the skew between ranks
         * (a peer still computing or descheduled), so what follows is the collective alone, the
         * part the cost model predicts. With --overlap the background thread may be inside an
         * allreduce at this point (MPI_THREAD_SERIALIZED forbids a concurrent barrier), so
         * there the wait stays inside the transfer. */
        if (ex->world_size > 1) {
            double tw = timer_now();
            mpiCheck(MPI_Barrier(x->comm));
            double tw1 = timer_now();
            ex->stats.wait_s += tw1 - tw;
            timeline_event("wait", tw, tw1);
        }
        ringex_allreduce_range(ex, &x->ring, x->comm, grads, 0, count);
    }
    ex->stats.bytes_sent += x->ring.bytes_sent + x->ov.ring.bytes_sent - s0;
    ex->stats.bytes_recv += x->ring.bytes_recv + x->ov.ring.bytes_recv - r0;
    double t1 = timer_now();
    optim_step(&ex->optim, params, grads, x->state, count, lr);
    double t2 = timer_now();
    ex->stats.exchange_s += t1 - t0;
    ex->stats.optimizer_s += t2 - t1;
    timeline_event("optimizer", t1, t2);
    ex->stats.steps++;
    if (x->tune.active) ring_autotune_after_step(ex);
    return 0;
}

static int ringex_average(exchange_t *ex, double *vals, int n) {
    ringex_t *x = ex->impl;
    if (n <= 0) return 0;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, MPI_SUM, x->comm));
    for (int i = 0; i < n; i++) vals[i] /= ex->world_size;
    return 0;
}

static int ringex_serve(exchange_t *ex) {
    fprintf(stderr, "psring: ring exchange has no servers; serve() called on rank %d\n", ex->process_rank);
    return -1;
}

static int ringex_state_get(exchange_t *ex, float *params, float *state, size_t count) {
    ringex_t *x = ex->impl;
    if (count != x->count) {
        fprintf(stderr, "psring: ring exchange: state_get for %zu parameters, created for %zu\n", count, x->count);
        return -1;
    }
    /* parameters live in the trainer's buffer; copy them only if asked into another one */
    if (params && x->params_seen && params != x->params_seen) memcpy(params, x->params_seen, count * sizeof(float));
    if (state) memcpy(state, x->state, x->nstate * sizeof(float));
    return 0;
}

/* Restore from a checkpoint. The trainer calls this on worker 0 only (the one that read the
 * file) and then sync_params on every worker, which broadcasts params and this state: so nothing
 * collective here. params already are the trainer's (it loaded them into its own buffer). */
static int ringex_state_set(exchange_t *ex, const float *params, const float *state, size_t count) {
    ringex_t *x = ex->impl;
    if (count != x->count) {
        fprintf(stderr, "psring: ring exchange: state_set for %zu parameters, created for %zu\n", count, x->count);
        return -1;
    }
    if (state) memcpy(x->state, state, x->nstate * sizeof(float));
    return 0;
}

static int ringex_finish(exchange_t *ex, float *params, size_t count) {
    return 0;   /* nothing remote: every worker already holds the final parameters */
}

static void ring_report(exchange_t *ex, exchange_report_t *r) {
    static const char *const allreduce_names[] = {"ring", "mpi", "nccl"};
    static const char *const op_names[] = {"average", "sum", "adasum"};
    ringex_t *x = ex->impl;
    exchange_report_set(r, "allreduce", "%s", allreduce_names[x->allreduce]);
    exchange_report_set(r, "op", "%s", op_names[x->op]);
    exchange_report_set(r, "hierarchical", "%d", x->hier_on);
    exchange_report_set(r, "fp16", "%d", x->fp16);
    exchange_report_set(r, "overlap", "%d", x->overlap);
    if (ex->world_size > 1)   /* the path the steps took (shm_calls: those on the load/store one) */
        exchange_report_set(r, "ring_path", "%s", x->hier_on ? "hierarchical" : x->op == RING_OP_ADASUM ? "adasum"
                            : x->allreduce != ALLREDUCE_RING ? "mpi" : x->ring.shm_calls ? "shm" : "messages");
}

/* The gradients in the ring's shared window (one host), so step()'s ring_allreduce loads and
 * stores instead of sending. Only where step() hands the whole buffer to x->ring: --overlap
 * allreduces buckets on its own ring (and --autotune rebuilds x->ring, which would free the
 * window under the model), --fp16, --hierarchical and adasum have their own paths. */
static float *ring_grads_alloc(exchange_t *ex, size_t count) {
    ringex_t *x = ex->impl;
    if (count != x->count) die("ring exchange: gradient buffer of %zu floats, created for %zu", count, x->count);
    if (!x->overlap && !x->fp16 && !x->hier_on && x->op != RING_OP_ADASUM) return ring_buffer_alloc(&x->ring, count);
    return ring_heap_alloc(count);
}

static void ring_grads_free(exchange_t *ex, float *grads) {
    ringex_t *x = ex->impl;
    ring_buffer_free(&x->ring, grads);   /* heap memory (not one of its windows) is free()d */
}

static void ringex_free(exchange_t *ex) {
    ringex_t *x = ex->impl;
    ring_overlap_stop(&x->ov);
    ring_autotune_end(&x->tune);
    if (x->op == RING_OP_ADASUM) adasum_free(&x->adasum);
    if (x->hier_on) hier_free(&x->hier);
    if (x->stall.warn > 0) {
        stall_watch_free(&x->stall);
        mpiCheck(MPI_Comm_free(&x->stall_comm));
        free(x->stall_req); free(x->stall_got); free(x->stall_in);
    }
    ring_free(&x->ring);
    if (x->half_sum != MPI_OP_NULL) mpiCheck(MPI_Op_free(&x->half_sum));
    mpiCheck(MPI_Comm_free(&x->comm));
    startup_finalize(&x->startup);
    free(x->state);
    free(x->half);
    free(x);
    free(ex);
}

/* the exchange ops (exchange.h): the required ones (ringex_*: ring_free is the ring's own), and
 * --overlap's grad_ready, the shared-window gradients and the ring's CSV columns */
static const exchange_ops_t ring_ops_overlap = {
    .name = "ring", EXCHANGE_OPS_REQUIRED(ringex), .grad_ready = ring_overlap_grad_ready,
    .grads_alloc = ring_grads_alloc, .grads_free = ring_grads_free, .report = ring_report,
};
/* without --overlap: no grad_ready, so the trainer hands over the gradient whole */
static const exchange_ops_t ring_ops = {
    .name = "ring", EXCHANGE_OPS_REQUIRED(ringex),
    .grads_alloc = ring_grads_alloc, .grads_free = ring_grads_free, .report = ring_report,
};

/* The ring's start-up (startup.h): every process a worker, one role. The overlap thread makes
 * MPI calls while the main thread waits (never both at once, the mutex serialises them), so
 * SERIALIZED would do; ask MULTIPLE and accept SERIALIZED. No deadline: mpirun ends a ring job
 * whose process dies (no --enable-recovery). */
static void ring_startup(exchange_t *ex, ringex_t *x, const ring_config_t *c, size_t count) {
    const startup_spec_t spec = {
        .who = "ring", .fingerprint = c->fingerprint, .count = count,
        .thread_want = c->overlap ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
        .thread_need = c->overlap ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED,
        .why_need = "--overlap needs MPI_THREAD_SERIALIZED",
    };
    startup_begin(&x->startup, &spec);
    startup_local(&x->startup, STARTUP_ONE_ROLE);
    ex->rank = ex->process_rank = x->startup.rank;
    ex->world_size = ex->process_count = x->startup.size;
    ex->local_rank = x->startup.local_rank;
    ex->local_size = x->startup.local_size;
    ex->is_worker = 1;
}

/* --stall-warn: rank 0 watches, every rank reports on a communicator of its own */
static void stall_start(exchange_t *ex, ringex_t *x, double stall_warn) {
    if (!(stall_warn > 0 && ex->world_size > 1)) return;
    if (ex->rank == 0) stall_watch_init(&x->stall, ex->world_size, stall_warn);
    x->stall.warn = stall_warn;
    mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &x->stall_comm));
    x->stall_req = xcalloc((size_t)ex->world_size, sizeof(MPI_Request));
    x->stall_got = xcalloc((size_t)ex->world_size, sizeof(long));
    x->stall_in = xcalloc((size_t)ex->world_size, 1);
}

/* Horovod's Adasum takes dot products per tensor: the optimizer's layout names them (W0 b0 W1 b1
 * ..., each a contiguous range, mlp.h); exits 2 on a non-power-of-two worker count */
static void adasum_start(exchange_t *ex, ringex_t *x, size_t count) {
    const optim_config_t *oc = &ex->optim;
    size_t toff[OPTIM_MAX_SEGMENTS + 1];
    int nt = oc->nseg;
    for (int k = 0; k < nt; k++) toff[k] = oc->seg_lo[k];
    toff[nt] = nt ? oc->seg_lo[nt - 1] + oc->seg_len[nt - 1] : 0;
    if (toff[nt] != count) die("ring exchange: --op adasum: the layers give %zu parameters, the exchange has %zu", toff[nt], count);
    adasum_init(&x->adasum, MPI_COMM_WORLD, count, toff, nt);
}

exchange_t *exchange_ring_create(const ring_config_t *c, size_t count) {
    exchange_t *ex = xcalloc(1, sizeof *ex);
    ringex_t *x = xcalloc(1, sizeof *x);
    ex->impl = x;
    ex->ops = c->overlap ? &ring_ops_overlap : &ring_ops;
    ring_startup(ex, x, c, count);
    mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &x->comm));
    mpiCheck(MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN));

    ex->optim = c->optim;
    x->count = count;
    x->nstate = count * optim_state_per_param(&ex->optim);
    x->state = xcalloc(x->nstate ? x->nstate : 1, sizeof(float));
    x->allreduce = c->allreduce;
    x->fp16 = c->fp16;
    x->overlap = c->overlap;
    x->half_sum = MPI_OP_NULL;
    stall_start(ex, x, c->stall_warn);
    size_t chunk_bytes = (size_t)(c->chunk_kb > 0 ? c->chunk_kb : 0) * 1024;
    ring_init(&x->ring, MPI_COMM_WORLD, count, chunk_bytes);
    if (x->allreduce == ALLREDUCE_MPI && x->fp16) {
        x->half = xmalloc((count ? count : 1) * sizeof(uint16_t));
        mpiCheck(MPI_Op_create(half_sum_fn, 1, &x->half_sum));
    }
    if (x->overlap) ring_overlap_start(ex, c->bucket_mb, chunk_bytes);
    x->op = c->op;
    if (x->op == RING_OP_ADASUM) adasum_start(ex, x, count);
    if (c->hierarchical) {
        x->hier_on = 1;
        hier_init(&x->hier, MPI_COMM_WORLD, count, chunk_bytes, hier_local_size_from_env());
        if (ex->rank == 0 && !c->quiet)
            printf("ring: hierarchical allreduce over %d host(s), %d rank(s) on rank 0's host\n", x->hier.hosts, x->hier.local_size);
    }
    if (c->autotune && ex->world_size > 1) ring_autotune_init(ex, c);
    return ex;
}
