/* options.h: every psring-train flag in one struct, parsed with getopt_long and validated in one
 * place, so bad input always gets one clear line and exit code 2 before any process talks to
 * another. The topologies never see this struct: exchange_create.c builds each one's own
 * configuration (ring_config_t, ps_config_t) from it. */
#ifndef PSRING_OPTIONS_H
#define PSRING_OPTIONS_H
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include "../model/mlp.h"
#include "../model/optim.h"
#include "../data/sampler.h"
#include "ring/ring_config.h"   /* allreduce_impl_t, ring_op_t */
#include "ps/ps_config.h"       /* sync_mode_t */

typedef enum { TOPO_LOCAL, TOPO_RING, TOPO_PS } topology_t;
typedef enum { DEVICE_CPU, DEVICE_CUDA } device_t;
typedef enum { SCALING_WEAK, SCALING_STRONG } scaling_t;

typedef struct {
    /* shared trainer */
    topology_t topology;
    device_t device;         /* where the model trains: cpu, or cuda (GPU local_rank % device count) */
    char layers_spec[256];
    int sizes[MLP_MAX_SIZES];
    int nsizes;
    int batch;               /* as given: per worker (weak) or global (strong) */
    int epochs;
    long steps;              /* cap on optimizer steps in total, 0 = none */
    long samples;            /* async/ssp: the workers' shared sample budget, 0 = epochs x an epoch's */
    long timing_skip;        /* first steps left out of the timings (warm-up) */
    float lr, momentum, weight_decay;
    uint64_t seed;
    char data_dir[1024];
    int train_limit;         /* 0 = all */
    int test_limit;          /* 0 = all */
    int drop_last;
    int threads;             /* BLAS threads per process */
    char csv[1024];
    char checkpoint[1024];
    int checkpoint_every;    /* steps; 0 = only at the end */
    char resume[1024];
    int quiet;
    int log_every;           /* steps between loss lines, 0 = per epoch only */
    char loss_log[1024];     /* per-step loss trace "step,loss" (rank 0), for equivalence tests */
    char dump_params[1024];  /* write final parameters (raw floats) here, rank 0 */
    /* Horovod-style data parallelism (ring, and the PS where it applies) */
    scaling_t scaling;
    int lr_scale_linear;     /* lr *= global_batch / batch */
    float warmup_epochs;
    int accumulate;          /* backward passes per exchange */
    int fp16;                /* gradients (and PS parameters) travel as IEEE half */
    /* ring */
    allreduce_impl_t allreduce;
    int overlap;
    float bucket_mb;
    int chunk_kb;            /* ring pipeline chunk */
    ring_op_t ring_op;       /* --op: average (sum / N), sum, adasum (Horovod's pairwise adaptive sum) */
    int autotune;            /* --autotune: search --bucket-mb / --chunk-kb in the first steps (--overlap) */
    char autotune_log[1024]; /* --autotune-log: the trials as CSV (rank 0), "" = none */
    int hierarchical;        /* --hierarchical: reduce in each host, ring across hosts, broadcast */
    /* parameter server */
    int servers;
    sync_mode_t sync;
    int staleness;
    char transport[8];       /* tcp | ipc */
    char bind[256];          /* address servers bind to */
    float peer_timeout;      /* seconds */
    uint64_t slow_ranks;     /* testing: these worker ranks (bit r: rank r) sleep slow_ms per step */
    int slow_ms;
    char timeline[1024];     /* Chrome-trace JSON of every process's phases (timeline.h), "" = off */
    float stall_warn;        /* seconds without progress before a rank is named as stalled, 0 = off */
    char ps_auth[1024];      /* CurveZMQ keyfile (psring keygen) for the PS, "" = no authentication */
    /* optimizer and data split (every topology) */
    optim_kind_t optimizer;  /* --optimizer sgd|adam|lars */
    float beta1, beta2, eps; /* Adam */
    float lars_eta;          /* LARS trust coefficient */
    sampler_kind_t sampler;  /* --sampler */
    int ps_chunk_kb;         /* --ps-chunk-kb: PS bsp push/reply slice in KiB, 0 = whole shards */
    int ps_credit;           /* --ps-credit: PS bsp slices of a shard on the way per worker, 0 = all */
    int check_options;       /* --check-options: validate and exit, no MPI (the launcher's pre-check) */
} options_t;

/* Every field at its default, as options_parse starts (the benchmarks' model of a training step
 * uses it to run psring-train's defaults without a command line). */
void options_defaults(options_t *o);
/* Returns 0 ok, 1 when --help was printed, 2 on bad input (the message is in err). */
int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen);
void options_usage(FILE *f);
const char *topology_name(topology_t t);
/* 64-bit hash of every option that must agree across ranks (layers, batch, seed, lr, ...),
 * compared at start-up so mismatched command lines fail fast instead of hanging. */
uint64_t options_fingerprint(const options_t *o);
/* The optimizer every exchange runs: kind, hyper-parameters and the layer layout (LARS). */
optim_config_t options_optim_config(const options_t *o);

#endif
