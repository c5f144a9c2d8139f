/* train.c: psring-train, the one training loop every topology shares.
 *
 * Each worker takes its DistributedSampler shard, computes the mean gradient over its local batch
 * and hands it to an exchange (exchange.h), which returns the next parameters. The loop does not
 * know whether that was a local optimizer call, a ring allreduce or a push/pull to parameter
 * servers; that is what makes local(B) == ring(N x B/N) == ps-bsp(N x B/N) step by step, and every
 * comparison the testbed prints honest. This file is the process's front door: options, the
 * exchange, the timeline, then a worker's run as a list of named steps (run.h). It does not parse
 * argv (options.c), talk MPI or ZeroMQ (src/ring, src/ps), do layer math (src/model), or hold the
 * step loop (loop.c) or the summary (report.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/check.h"
#include "common/timeline.h"
#include "model/blas.h"
#include "train/options.h"
#include "model/model_ops.h"
#include "train/run.h"

/* Returns -1 to go on, else main's exit code: 0 after --help, --describe or --check-options, 2 on
 * bad input.
 * Under mpirun every rank refuses; one per host says why (hosts' files differ). */
static int parse_options(options_t *o, int argc, char **argv) {
    char err[1024];
    int prc = options_parse(o, argc, argv, err, sizeof err);
    if (prc == 1) return 0;
    if (prc != 0) {
        const char *rank = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
        if (!rank || !strcmp(rank, "0")) fprintf(stderr, "psring-train: %s\n", err);
        return EXIT_BADINPUT;
    }
    /* --describe: what the launcher needs of the topology (psring reads it) */
    if (o->describe) options_describe(o, stdout);
    /* --check-options: the launcher validates once, so a bad flag is not reported by every rank;
     * given the process count, the data and the batch it leaves each worker as well */
    if (o->check_options) {
        if (model_device_check(o->device) != 0) return EXIT_BADINPUT;
        if (!o->describe_np) return 0;
        topology_launch_t l = {0};
        o->topology->launch(o->topo_cfg, &l);
        int workers = o->describe_np - l.servers;
        if (workers >= 1 && !o->eval_snapshots[0] && run_check_data(o, workers, err, sizeof err) != 0) {
            fprintf(stderr, "psring-train: %s\n", err);
            return EXIT_BADINPUT;
        }
        return 0;
    }
    if (o->describe) return 0;
    return -1;
}

/* the exchange (starting MPI where the topology needs it) and --timeline: every process records;
 * worker 0 merges (on a PS it is not MPI rank 0) */
static exchange_t *start_process(const options_t *o) {
    exchange_t *ex = options_exchange_create(o, mlp_count_params(o->sizes, o->nsizes));
    if (!ex) return NULL;
    psring_log_rank = ex->is_worker ? ex->rank : -1;
    char role[48], err[1024];   /* a worker's local rank picks its GPU with --device cuda: shown so placement can be checked */
    if (ex->is_worker) snprintf(role, sizeof role, "worker %d, local rank %d", ex->rank, ex->local_rank);
    else snprintf(role, sizeof role, "server %d", ex->process_rank);
    if (timeline_init(o->timeline, ex->process_rank, ex->process_count, role, err, sizeof err) != 0) die_input("%s", err);
    return ex;
}

/* a PS server process: it serves until every worker is done, and trains nothing */
static int serve(exchange_t *ex) {
    char err[1024];
    int rc = ex->ops->serve(ex);
    if (timeline_finish(0, err, sizeof err) != 0) { fprintf(stderr, "psring: %s\n", err); rc = 1; }
    exchange_free(ex);
    return rc ? 1 : 0;
}

/* every part is written before exchange_free; worker 0 merges after it, because PS servers write
 * theirs only once every worker said goodbye (in exchange_free) */
static void end_worker(run_t *r, exchange_t *ex) {
    char err[1024];
    const options_t *o = r->o;
    const int tl_merge = o->timeline[0] && ex->rank == 0, tl_procs = ex->process_count;
    if (timeline_finish(0, err, sizeof err) != 0) die_at(NULL, 0, 1, "%s", err);
    run_free(r);
    exchange_free(ex);
    if (tl_merge && timeline_merge(o->timeline, tl_procs, TIMELINE_MERGE_TIMEOUT_S, err, sizeof err) != 0)
        die_at(NULL, 0, 1, "%s", err);
}

/* --eval-snapshots: the copies tested, and nothing trained */
static int eval_snapshots(run_t *r, exchange_t *ex) {
    snapshots_eval(r, r->o->eval_snapshots);
    run_free(r);
    exchange_free(ex);
    return 0;
}

int main(int argc, char **argv) {
    options_t o;
    int rc = parse_options(&o, argc, argv);
    if (rc >= 0) return rc;
    /* before anything loads OpenBLAS kernels or starts MPI: may re-exec this process */
    char blaslog[512] = "";
    blas_setup(argc, argv, o.threads, blaslog, sizeof blaslog);
    /* --device cuda without a GPU (or a CUDA build): one line, exit 2, before MPI starts */
    if (model_device_check(o.device) != 0) return EXIT_BADINPUT;
    exchange_t *ex = start_process(&o);
    if (!ex) return 1;
    if (!ex->is_worker) return serve(ex);
    if (blaslog[0] && !o.quiet && !o.eval_snapshots[0]) printf0("%s\n", blaslog);   /* --eval-snapshots: its CSV alone */

    run_t r;
    run_shape(&r, &o, ex);
    run_load_data(&r);
    run_build_model(&r);
    if (o.eval_snapshots[0]) return eval_snapshots(&r, ex);
    run_resume(&r);
    run_sync(&r);
    run_start(&r);
    if (r.budget) run_budget(&r);   /* a sample budget the workers share (exchange.h budget) */
    else run_epochs(&r);
    run_finish(&r);
    report_run(&r);
    end_worker(&r, ex);
    return 0;
}
