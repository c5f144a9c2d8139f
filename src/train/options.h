/* options.h: psring-train's own flags in one struct, parsed from one table (options.c) together
 * with the chosen topology's flags (its descriptor's table, topology.h), validated in one place,
 * so bad input always gets one clear line and exit code 2 before any process talks to another.
 * The trainer's options never name a topology's settings: those live in the topology's own
 * config struct (topo_cfg), which only the topology reads. */
#ifndef PSRING_OPTIONS_H
#define PSRING_OPTIONS_H
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include "model/mlp.h"
#include "model/optim.h"
#include "data/sampler.h"
#include "exchange/topology.h"

typedef enum { SCALING_WEAK, SCALING_STRONG } scaling_t;

/* room for any topology's config struct (checked against its config_size when parsing) */
#define OPTIONS_TOPOLOGY_CONFIG_MAX 8192

typedef struct {
    const topology_t *topology;   /* --topology: its descriptor (topology_list.c) */
    int topology_index;           /* ... its place in the list (the table's CHOICE value) */
    int device;                   /* device_t: cpu, or cuda (GPU local_rank % device count) */
    char layers_spec[256];
    int sizes[MLP_MAX_SIZES];
    int nsizes;
    int batch;               /* as given: per worker (weak) or global (strong) */
    int epochs;
    long steps;              /* cap on optimizer steps in total, 0 = none */
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
    long snapshot_every;     /* steps between worker 0's copies of its parameters, 0 = none */
    char snapshots[1024];    /* ... written here after training (snapshots.h) */
    char eval_snapshots[1024];   /* test every copy in this file instead of training */
    /* Horovod-style data parallelism */
    int scaling;             /* scaling_t */
    int lr_scale;            /* --lr-scale: 0 linear (lr *= global_batch / batch), 1 none */
    int lr_scale_linear;     /* lr_scale == 0 */
    float warmup_epochs;
    int accumulate;          /* backward passes per exchange */
    uint64_t slow_ranks;     /* testing: these worker ranks (bit r: rank r) sleep slow_ms per step */
    int slow_ms;
    char timeline[1024];     /* Chrome-trace JSON of every process's phases (timeline.h), "" = off */
    float stall_warn;        /* seconds without progress before a rank is named as stalled, 0 = off */
    /* optimizer and data split (every topology) */
    int optimizer;           /* optim_kind_t: --optimizer sgd|adam|lars */
    float beta1, beta2, eps; /* Adam */
    float lars_eta;          /* LARS trust coefficient */
    int sampler;             /* sampler_kind_t: --sampler */
    int check_options;       /* --check-options: validate and exit, no MPI (the launcher's pre-check) */
    int describe;            /* --describe: print what the launcher needs (topology.h), exit */
    int describe_np;         /* --describe-np N: the -np the launcher was given, 0 = none */
    int describe_workers;    /* --describe-workers N: the launcher's --workers, 0 = none */
    topology_layout_t layout;   /* the topology's layout for describe_workers workers */
    /* the topology's own flags, as its table stores them (its config struct) */
    _Alignas(16) unsigned char topo_cfg[OPTIONS_TOPOLOGY_CONFIG_MAX];
} options_t;

/* Returns 0 ok, 1 when --help was printed, 2 on bad input (the message is in err). */
int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen);
void options_usage(FILE *f);
/* 64-bit hash of every option that must agree across ranks (layers, batch, seed, lr, and the
 * topology's own), compared at start-up so mismatched command lines fail fast instead of
 * hanging. The rows of the tables say what is hashed (opttab.h). */
uint64_t options_fingerprint(const options_t *o);
/* The optimizer every exchange runs: kind, hyper-parameters and the layer layout (LARS). */
optim_config_t options_optim_config(const options_t *o);
/* what the topology gets of the trainer's options */
topology_common_t options_common(const options_t *o);
/* the topology's exchange, from its config and options_common */
exchange_t *options_exchange_create(const options_t *o, size_t count);
/* --describe: the "key=value" lines the launcher reads (psring) */
void options_describe(const options_t *o, FILE *f);

#endif
