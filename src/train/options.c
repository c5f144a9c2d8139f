/* options.c: psring-train's command line (getopt_long), defaults, validation, fingerprint.
 * Every value is checked here, before any rank talks to another, so bad input costs one line and
 * exit code 2 on every rank instead of a hang later. It does not open files beyond checking that
 * --data is a directory. */
#include "config.h"
#include "../common/parse.h"
#include "options.h"
#include <getopt.h>
#include <string.h>
#include <stdlib.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    OPT_TOPOLOGY = 256, OPT_LAYERS, OPT_BATCH, OPT_EPOCHS, OPT_STEPS, OPT_LR, OPT_MOMENTUM,
    OPT_WD, OPT_SEED, OPT_DATA, OPT_TRAIN_LIMIT, OPT_TEST_LIMIT, OPT_DROP_LAST, OPT_THREADS,
    OPT_CSV, OPT_CKPT, OPT_CKPT_EVERY, OPT_RESUME, OPT_QUIET, OPT_LOG_EVERY, OPT_LOSS_LOG,
    OPT_DUMP_PARAMS, OPT_SCALING, OPT_LR_SCALE, OPT_WARMUP, OPT_ACCUMULATE, OPT_FP16,
    OPT_ALLREDUCE, OPT_OVERLAP, OPT_BUCKET_MB, OPT_CHUNK_KB, OPT_SERVERS, OPT_SYNC,
    OPT_STALENESS, OPT_TRANSPORT, OPT_BIND, OPT_PEER_TIMEOUT, OPT_SLOW_RANK, OPT_SLOW_MS,
    OPT_RING_OP, OPT_AUTOTUNE, OPT_AUTOTUNE_LOG, OPT_HIERARCHICAL,
    OPT_TIMELINE, OPT_STALL_WARN, OPT_PS_AUTH, OPT_DEVICE,
    OPT_OPTIMIZER, OPT_BETA1, OPT_BETA2, OPT_EPS, OPT_LARS_ETA, OPT_SAMPLER, OPT_PS_CHUNK_KB, OPT_PS_CREDIT,
    OPT_CHECK_OPTIONS, OPT_TIMING_SKIP, OPT_SAMPLES,
};

static const struct option long_opts[] = {
    {"topology", required_argument, 0, OPT_TOPOLOGY},
    {"layers", required_argument, 0, OPT_LAYERS},
    {"batch", required_argument, 0, OPT_BATCH},
    {"epochs", required_argument, 0, OPT_EPOCHS},
    {"steps", required_argument, 0, OPT_STEPS},
    {"samples", required_argument, 0, OPT_SAMPLES},
    {"timing-skip", required_argument, 0, OPT_TIMING_SKIP},
    {"lr", required_argument, 0, OPT_LR},
    {"momentum", required_argument, 0, OPT_MOMENTUM},
    {"weight-decay", required_argument, 0, OPT_WD},
    {"seed", required_argument, 0, OPT_SEED},
    {"data", required_argument, 0, OPT_DATA},
    {"train-limit", required_argument, 0, OPT_TRAIN_LIMIT},
    {"test-limit", required_argument, 0, OPT_TEST_LIMIT},
    {"drop-last", no_argument, 0, OPT_DROP_LAST},
    {"threads", required_argument, 0, OPT_THREADS},
    {"csv", required_argument, 0, OPT_CSV},
    {"checkpoint", required_argument, 0, OPT_CKPT},
    {"checkpoint-every", required_argument, 0, OPT_CKPT_EVERY},
    {"resume", required_argument, 0, OPT_RESUME},
    {"quiet", no_argument, 0, OPT_QUIET},
    {"log-every", required_argument, 0, OPT_LOG_EVERY},
    {"loss-log", required_argument, 0, OPT_LOSS_LOG},
    {"dump-params", required_argument, 0, OPT_DUMP_PARAMS},
    {"scaling", required_argument, 0, OPT_SCALING},
    {"lr-scale", required_argument, 0, OPT_LR_SCALE},
    {"warmup-epochs", required_argument, 0, OPT_WARMUP},
    {"accumulate", required_argument, 0, OPT_ACCUMULATE},
    {"fp16", no_argument, 0, OPT_FP16},
    {"allreduce", required_argument, 0, OPT_ALLREDUCE},
    {"overlap", no_argument, 0, OPT_OVERLAP},
    {"bucket-mb", required_argument, 0, OPT_BUCKET_MB},
    {"chunk-kb", required_argument, 0, OPT_CHUNK_KB},
    {"servers", required_argument, 0, OPT_SERVERS},
    {"sync", required_argument, 0, OPT_SYNC},
    {"staleness", required_argument, 0, OPT_STALENESS},
    {"transport", required_argument, 0, OPT_TRANSPORT},
    {"bind", required_argument, 0, OPT_BIND},
    {"peer-timeout", required_argument, 0, OPT_PEER_TIMEOUT},
    {"slow-rank", required_argument, 0, OPT_SLOW_RANK},
    {"slow-ms", required_argument, 0, OPT_SLOW_MS},
    {"timeline", required_argument, 0, OPT_TIMELINE},
    {"stall-warn", required_argument, 0, OPT_STALL_WARN},
    {"ps-auth", required_argument, 0, OPT_PS_AUTH},
    {"ps-chunk-kb", required_argument, 0, OPT_PS_CHUNK_KB},
    {"ps-credit", required_argument, 0, OPT_PS_CREDIT},
    {"op", required_argument, 0, OPT_RING_OP},
    {"autotune", no_argument, 0, OPT_AUTOTUNE},
    {"autotune-log", required_argument, 0, OPT_AUTOTUNE_LOG},
    {"hierarchical", no_argument, 0, OPT_HIERARCHICAL},
    {"device", required_argument, 0, OPT_DEVICE},
    {"optimizer", required_argument, 0, OPT_OPTIMIZER},
    {"beta1", required_argument, 0, OPT_BETA1},
    {"beta2", required_argument, 0, OPT_BETA2},
    {"eps", required_argument, 0, OPT_EPS},
    {"lars-eta", required_argument, 0, OPT_LARS_ETA},
    {"sampler", required_argument, 0, OPT_SAMPLER},
    {"check-options", no_argument, 0, OPT_CHECK_OPTIONS},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

void options_usage(FILE *f) {
    fputs(
"usage: psring-train [options]            (one process: --topology local)\n"
"       mpirun -np N psring-train --topology ring|ps [options]   (or: psring train -np N ...)\n"
"\n"
"Trains an MLP on MNIST data-parallel; the topology only changes how gradients are exchanged.\n"
"\n"
"Model and data\n"
"  --topology local|ring|ps   how workers exchange gradients (default local)\n"
"  --device cpu|cuda          train on the CPU or on GPU local_rank % GPUs (default cpu)\n"
"  --layers L0,L1,...,10      layer widths, first 784, last 10 (default 784,512,256,10)\n"
"  --data DIR                 MNIST IDX files, plain or .gz (default data/mnist)\n"
"  --train-limit K            train on the first K samples only (default all 60000)\n"
"  --test-limit K             evaluate on the first K test samples (default all 10000)\n"
"  --drop-last                drop the tail instead of padding shards (DistributedSampler)\n"
"  --sampler KIND             how the data is split among workers (default distributed):\n"
"                             distributed         a global shuffle per epoch, rank r takes every\n"
"                                                 N-th position (PyTorch DistributedSampler)\n"
"                             shuffle-then-shard  a global shuffle per epoch, rank r takes the r-th\n"
"                                                 contiguous block of it\n"
"                             shard-then-shuffle  fixed contiguous shard per rank, shuffled within\n"
"                             split-epochs        every rank sees the whole dataset per epoch in its\n"
"                                                 own order (epochs split among ranks: N x the steps)\n"
"Optimisation\n"
"  --batch B                  batch per worker (weak scaling) or global (strong) (default 64)\n"
"  --scaling weak|strong      weak: --batch per worker; strong: --batch global, split (default weak)\n"
"  --epochs E                 epochs (default 10)\n"
"  --steps N                  stop after N optimizer steps in total (default: no cap)\n"
"  --timing-skip K            leave the first K steps (warm-up: page faults, cold caches) out of\n"
"                             the CSV's times and samples/s (default 0)\n"
"  --lr X                     learning rate for --batch samples (default by --optimizer: sgd\n"
"                             0.02, adam 0.001 as torch.optim.Adam, lars 1)\n"
"  --lr-scale linear|none     scale lr by global batch / --batch (Goyal et al.) (default linear)\n"
"  --warmup-epochs X          ramp lr from --lr to the scaled lr over X epochs (default 0)\n"
"  --optimizer sgd|adam|lars  torch.optim.SGD, torch.optim.Adam (L2 decay), LARS (default sgd)\n"
"  --momentum X               SGD and LARS momentum (default 0.9)\n"
"  --beta1 X --beta2 X        Adam moment decay rates (default 0.9, 0.999)\n"
"  --eps X                    Adam denominator term (default 1e-8)\n"
"  --lars-eta X               LARS trust coefficient (default 0.001)\n"
"  --weight-decay X           L2 weight decay (default 0)\n"
"  --accumulate K             K backward passes of B samples per exchange (default 1)\n"
"  --seed S                   seed for init and data order (default 42)\n"
"  --threads T                BLAS threads per process (default 1)\n"
"Ring allreduce (--topology ring)\n"
"  --allreduce ring|mpi|nccl  psring's ring, MPI_Allreduce or (--device cuda) NCCL (default ring)\n"
"  --fp16                     gradients travel as IEEE half, accumulate in float\n"
"  --overlap                  exchange finished layers while backward continues\n"
"  --bucket-mb X              fusion bucket for --overlap (default 4)\n"
"  --chunk-kb X               ring pipeline chunk (default 256)\n"
"  --op average|sum|adasum    combine the gradients: mean, plain sum (scale --lr yourself), or\n"
"                             Adasum (pairwise adaptive sum, power-of-two workers) (default average)\n"
"  --autotune                 with --overlap: try bucket and chunk sizes in the first steps, keep the fastest\n"
"  --autotune-log FILE        write the autotune trials as CSV (rank 0)\n"
"  --hierarchical             reduce inside each host, ring across hosts, broadcast inside each host\n"
"Parameter server (--topology ps)\n"
"  --servers S                the first S ranks are servers, the rest workers (default 1)\n"
"  --sync bsp|async|ssp       synchronisation (default bsp)\n"
"  --staleness K              ssp: max clocks a worker may run ahead of the slowest (default 2)\n"
"  --samples N                async/ssp: train on N samples in all, shared by the workers (default:\n"
"                             --epochs x the samples of an epoch); each worker goes on through its\n"
"                             own epochs until the servers say the budget is spent\n"
"  --transport tcp|ipc        ZeroMQ transport (default tcp)\n"
"  --bind ADDR|CIDR|IFACE|auto  address servers bind to; a subnet (10.99.0.0/24) or an interface\n"
"                             name picks each server host's own address there (default 127.0.0.1)\n"
"  --peer-timeout SEC         a silent peer is declared dead after SEC seconds (default 10)\n"
"  --fp16                     gradients and parameters travel as IEEE half\n"
"  --ps-auth KEYFILE          CurveZMQ: servers accept only workers holding KEYFILE (psring keygen)\n"
"  --ps-chunk-kb K            bsp: push, apply and answer each shard in K KiB slices, overlapping the\n"
"                             server's apply and reply with later slices' arrival; 0 = whole shards\n"
"                             (default 1024; LARS always uses whole shards)\n"
"  --ps-credit C              bsp: a worker keeps at most C slices of each shard on the way and sends\n"
"                             the next as an answer returns (BytePS' scheduling credit), so slices\n"
"                             reach the server together; 0 = all at once (default 2)\n"
"Output\n"
"  --csv FILE                 append one row of results (header written once)\n"
"  --checkpoint FILE          write training state here (atomically) at the end\n"
"  --checkpoint-every N       ... and every N steps\n"
"  --resume FILE              continue from a checkpoint (same model and seed)\n"
"  --log-every N              print the loss every N steps (default: per epoch)\n"
"  --loss-log FILE            write \"step,loss\" for every step (loss averaged over workers)\n"
"  --dump-params FILE         write the final parameters as raw float32\n"
"  --quiet                    only errors and the final summary\n"
"  --timeline FILE            Chrome-trace JSON of every process's phases (Perfetto, chrome://tracing)\n"
"  --stall-warn SEC           name a rank that makes no progress for SEC s (ring: rank 0, ps: server 0)\n"
"Testing\n"
"  --slow-rank R[,R..] --slow-ms M  workers R (0..63) sleep M ms per step (stragglers, tests)\n"
"  --check-options            validate the options and exit: 0, or 2 with the one-line error; starts\n"
"                             no MPI (psring runs it once before mpirun starts N ranks)\n"
"  -h, --help                 this text\n", f);
}

/* each module names its own enum (optim_kind_name, ps_sync_name); --topology's words, by value */
const char *topology_name(topology_t t) {
    static const char *const names[] = { [TOPO_LOCAL] = "local", [TOPO_RING] = "ring", [TOPO_PS] = "ps" };
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void defaults(options_t *o) {
    memset(o, 0, sizeof *o);
    o->topology = TOPO_LOCAL;
    strcpy(o->layers_spec, "784,512,256,10");
    o->batch = 64;
    o->epochs = 10;
    o->lr = 0;   /* 0 = not given: optim_default_lr of the --optimizer once all flags are read */
    o->momentum = 0.9f;
    o->weight_decay = 0.0f;
    o->seed = 42;
    strcpy(o->data_dir, "data/mnist");
    o->threads = 1;
    o->scaling = SCALING_WEAK;
    o->lr_scale_linear = 1;
    o->accumulate = 1;
    o->allreduce = ALLREDUCE_RING;
    o->bucket_mb = 4.0f;
    o->chunk_kb = 256;
    o->ps_chunk_kb = PS_CHUNK_KB_DEFAULT;
    o->ps_credit = PS_CREDIT_DEFAULT;
    o->servers = 1;
    o->sync = SYNC_BSP;
    o->staleness = 2;
    strcpy(o->transport, "tcp");
    strcpy(o->bind, "127.0.0.1");
    o->peer_timeout = 10.0f;
    o->slow_ranks = 0;
    o->optimizer = OPTIM_SGD;
    o->beta1 = 0.9f;
    o->beta2 = 0.999f;
    o->eps = 1e-8f;
    o->lars_eta = 0.001f;
    o->sampler = SAMPLER_DISTRIBUTED;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return 2; } while (0)
/* an output path: not empty, not the next flag taken as the value, and it fits */
#define PATH_FLAG(flag, dst) do { \
        int r_ = parse_path(optarg, dst, sizeof dst); \
        if (r_ == -1) FAIL(flag " needs a path: got '%s'", optarg); \
        if (r_ == -2) FAIL(flag " path is too long"); \
    } while (0)

static int copy_str(char *dst, size_t cap, const char *src) {
    if (strlen(src) >= cap) return -1;
    strcpy(dst, src);
    return 0;
}

int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen) {
    defaults(o);
    long v;
    int c;
    int adam_flag = 0, lars_flag = 0, momentum_flag = 0;   /* --beta1/--beta2/--eps, --lars-eta, --momentum given */
    optind = 0;   /* 0, not 1: glibc then also forgets a half-read "-xy" cluster of the last call
                   * (found by fuzz/fuzz_options: parse 2 read freed memory after "-h0") */
    opterr = 0;
    int li;
    while ((li = -1, c = getopt_long(argc, argv, ":h", long_opts, &li)) != -1) {
        const char *name = c == '?' || c == ':' ? parse_bad_option(argv, long_opts) : optind > 1 && optind - 1 < argc ? argv[optind - 1] : "?";
        if (parse_long_exact(argv, long_opts, li)) FAIL("write --%s out in full (an abbreviation of it was given)", long_opts[li].name);
        /* one case per flag, each with its own bounds and message: the cases share a shape by
         * design (a table of flags would hide what each one checks) */
        switch (c) {
        case OPT_TOPOLOGY:
            if (!strcmp(optarg, "local")) o->topology = TOPO_LOCAL;
            else if (!strcmp(optarg, "ring")) o->topology = TOPO_RING;
            else if (!strcmp(optarg, "ps")) o->topology = TOPO_PS;
            else FAIL("--topology must be local, ring or ps: got '%s'", optarg);
            break;
        case OPT_LAYERS:
            if (copy_str(o->layers_spec, sizeof o->layers_spec, optarg)) FAIL("--layers is too long");
            break;
        case OPT_BATCH:
            if (parse_long(optarg, 1, 1 << 20, &v)) FAIL("--batch must be an integer in 1..1048576: got '%s'", optarg);
            o->batch = (int)v; break;
        case OPT_EPOCHS:
            if (parse_long(optarg, 1, 100000, &v)) FAIL("--epochs must be an integer >= 1: got '%s'", optarg);
            o->epochs = (int)v; break;
        case OPT_STEPS:
            if (parse_long(optarg, 1, 1L << 40, &v)) FAIL("--steps must be an integer >= 1: got '%s'", optarg);
            o->steps = v; break;
        case OPT_SAMPLES:
            if (parse_long(optarg, 1, 1L << 50, &v)) FAIL("--samples must be an integer >= 1: got '%s'", optarg);
            o->samples = v; break;
        case OPT_TIMING_SKIP:
            if (parse_long(optarg, 0, 1L << 40, &v)) FAIL("--timing-skip must be an integer >= 0: got '%s'", optarg);
            o->timing_skip = v; break;
        case OPT_LR:
            if (parse_float(optarg, 1e-12, 1e3, &o->lr)) FAIL("--lr must be a number > 0: got '%s'", optarg);
            break;
        case OPT_MOMENTUM:
            if (parse_float(optarg, 0, 0.999999, &o->momentum)) FAIL("--momentum must be in [0, 1): got '%s'", optarg);
            momentum_flag = 1;
            break;
        case OPT_WD:
            if (parse_float(optarg, 0, 1, &o->weight_decay)) FAIL("--weight-decay must be in [0, 1]: got '%s'", optarg);
            break;
        case OPT_SEED: {
            unsigned long long s;
            if (parse_ull(optarg, ULLONG_MAX, &s)) FAIL("--seed must be a non-negative integer: got '%s'", optarg);
            o->seed = s; break;
        }
        case OPT_DATA:
            if (copy_str(o->data_dir, sizeof o->data_dir, optarg)) FAIL("--data path is too long");
            break;
        case OPT_TRAIN_LIMIT:
            if (parse_long(optarg, 1, 1L << 30, &v)) FAIL("--train-limit must be an integer >= 1: got '%s'", optarg);
            o->train_limit = (int)v; break;
        case OPT_TEST_LIMIT:
            if (parse_long(optarg, 1, 1L << 30, &v)) FAIL("--test-limit must be an integer >= 1: got '%s'", optarg);
            o->test_limit = (int)v; break;
        case OPT_DROP_LAST: o->drop_last = 1; break;
        case OPT_THREADS:
            if (parse_long(optarg, 1, 1024, &v)) FAIL("--threads must be an integer in 1..1024: got '%s'", optarg);
            o->threads = (int)v; break;
        case OPT_CSV: PATH_FLAG("--csv", o->csv); break;
        case OPT_CKPT: PATH_FLAG("--checkpoint", o->checkpoint); break;
        case OPT_CKPT_EVERY:
            if (parse_long(optarg, 1, 1L << 30, &v)) FAIL("--checkpoint-every must be an integer >= 1: got '%s'", optarg);
            o->checkpoint_every = (int)v; break;
        case OPT_RESUME: PATH_FLAG("--resume", o->resume); break;
        case OPT_QUIET: o->quiet = 1; break;
        case OPT_LOG_EVERY:
            if (parse_long(optarg, 1, 1L << 30, &v)) FAIL("--log-every must be an integer >= 1: got '%s'", optarg);
            o->log_every = (int)v; break;
        case OPT_LOSS_LOG: PATH_FLAG("--loss-log", o->loss_log); break;
        case OPT_TIMELINE: PATH_FLAG("--timeline", o->timeline); break;
        case OPT_DUMP_PARAMS: PATH_FLAG("--dump-params", o->dump_params); break;
        case OPT_SCALING:
            if (!strcmp(optarg, "weak")) o->scaling = SCALING_WEAK;
            else if (!strcmp(optarg, "strong")) o->scaling = SCALING_STRONG;
            else FAIL("--scaling must be weak or strong: got '%s'", optarg);
            break;
        case OPT_LR_SCALE:
            if (!strcmp(optarg, "linear")) o->lr_scale_linear = 1;
            else if (!strcmp(optarg, "none")) o->lr_scale_linear = 0;
            else FAIL("--lr-scale must be linear or none: got '%s'", optarg);
            break;
        case OPT_WARMUP:
            if (parse_float(optarg, 0, 1e6, &o->warmup_epochs)) FAIL("--warmup-epochs must be a number >= 0: got '%s'", optarg);
            break;
        case OPT_ACCUMULATE:
            if (parse_long(optarg, 1, 1024, &v)) FAIL("--accumulate must be an integer in 1..1024: got '%s'", optarg);
            o->accumulate = (int)v; break;
        case OPT_FP16: o->fp16 = 1; break;
        case OPT_ALLREDUCE:
            if (!strcmp(optarg, "ring")) o->allreduce = ALLREDUCE_RING;
            else if (!strcmp(optarg, "mpi")) o->allreduce = ALLREDUCE_MPI;
            else if (!strcmp(optarg, "nccl")) o->allreduce = ALLREDUCE_NCCL;
            else FAIL("--allreduce must be ring, mpi or nccl: got '%s'", optarg);
            break;
        case OPT_OVERLAP: o->overlap = 1; break;
        case OPT_BUCKET_MB:
            if (parse_float(optarg, 1.0 / 1024, 4096, &o->bucket_mb)) FAIL("--bucket-mb must be a number in [1/1024, 4096]: got '%s'", optarg);
            break;
        case OPT_CHUNK_KB:
            if (parse_long(optarg, 1, 1 << 20, &v)) FAIL("--chunk-kb must be an integer in 1..1048576: got '%s'", optarg);
            o->chunk_kb = (int)v; break;
        case OPT_SERVERS:
            if (parse_long(optarg, 1, 4096, &v)) FAIL("--servers must be an integer >= 1: got '%s'", optarg);
            o->servers = (int)v; break;
        case OPT_SYNC:
            if (!strcmp(optarg, "bsp")) o->sync = SYNC_BSP;
            else if (!strcmp(optarg, "async")) o->sync = SYNC_ASYNC;
            else if (!strcmp(optarg, "ssp")) o->sync = SYNC_SSP;
            else FAIL("--sync must be bsp, async or ssp: got '%s'", optarg);
            break;
        case OPT_STALENESS:
            if (parse_long(optarg, 0, 1 << 20, &v)) FAIL("--staleness must be an integer >= 0: got '%s'", optarg);
            o->staleness = (int)v; break;
        case OPT_TRANSPORT: {
            ps_transport_t t;   /* the PS's own parser: one definition of the valid values */
            if (ps_transport_parse(optarg, &t) != 0) FAIL("--transport must be tcp or ipc: got '%s'", optarg);
            strcpy(o->transport, optarg); break;
        }
        case OPT_BIND:
            if (!optarg[0] || copy_str(o->bind, sizeof o->bind, optarg)) FAIL("--bind needs an address (e.g. 127.0.0.1 or 10.0.0.5)");
            break;
        case OPT_PEER_TIMEOUT:
            if (parse_float(optarg, 0.1, 86400, &o->peer_timeout)) FAIL("--peer-timeout must be a number of seconds in [0.1, 86400]: got '%s'", optarg);
            break;
        case OPT_SLOW_RANK:
        {   /* a list, so that every worker of an async run can be slowed to a known pace */
            char *p = optarg, *end;
            for (;;) {
                if (parse_long_at(p, &end, 0, 63, &v) || (*end != ',' && *end != '\0'))
                    FAIL("--slow-rank must be worker ranks in 0..63, comma-separated: got '%s'", optarg);
                o->slow_ranks |= 1ull << v;
                if (!*end) break;
                p = end + 1;
            }
            break;
        }
        case OPT_SLOW_MS:
            if (parse_long(optarg, 0, 600000, &v)) FAIL("--slow-ms must be an integer in 0..600000: got '%s'", optarg);
            o->slow_ms = (int)v; break;
        case OPT_STALL_WARN:
            if (parse_float(optarg, 0.01, 86400, &o->stall_warn)) FAIL("--stall-warn must be a number of seconds in [0.01, 86400]: got '%s'", optarg);
            break;
        case OPT_RING_OP:
            if (!strcmp(optarg, "average")) o->ring_op = RING_OP_AVERAGE;
            else if (!strcmp(optarg, "sum")) o->ring_op = RING_OP_SUM;
            else if (!strcmp(optarg, "adasum")) o->ring_op = RING_OP_ADASUM;
            else FAIL("--op must be average, sum or adasum: got '%s'", optarg);
            break;
        case OPT_AUTOTUNE: o->autotune = 1; break;
        case OPT_AUTOTUNE_LOG:
            if (!optarg[0] || copy_str(o->autotune_log, sizeof o->autotune_log, optarg)) FAIL("--autotune-log needs a file path");
            break;
        case OPT_HIERARCHICAL: o->hierarchical = 1; break;
        case OPT_PS_CHUNK_KB:
            if (parse_long(optarg, 0, 1 << 20, &v)) FAIL("--ps-chunk-kb must be an integer in 0..1048576 (0 = whole shards): got '%s'", optarg);
            o->ps_chunk_kb = (int)v; break;
        case OPT_PS_CREDIT:
            if (parse_long(optarg, 0, 1 << 20, &v)) FAIL("--ps-credit must be an integer in 0..1048576 (0 = every slice at once): got '%s'", optarg);
            o->ps_credit = (int)v; break;
        case OPT_PS_AUTH:
            if (!optarg[0] || copy_str(o->ps_auth, sizeof o->ps_auth, optarg)) FAIL("--ps-auth needs a keyfile path (psring keygen FILE makes one)");
            break;
        case OPT_OPTIMIZER:
            if (!strcmp(optarg, "sgd")) o->optimizer = OPTIM_SGD;
            else if (!strcmp(optarg, "adam")) o->optimizer = OPTIM_ADAM;
            else if (!strcmp(optarg, "lars")) o->optimizer = OPTIM_LARS;
            else FAIL("--optimizer must be sgd, adam or lars: got '%s'", optarg);
            break;
        case OPT_BETA1:
            if (parse_float(optarg, 0, 0.999999, &o->beta1)) FAIL("--beta1 must be in [0, 1): got '%s'", optarg);
            adam_flag = 1; break;
        case OPT_BETA2:
            if (parse_float(optarg, 0, 0.999999, &o->beta2)) FAIL("--beta2 must be in [0, 1): got '%s'", optarg);
            adam_flag = 1; break;
        case OPT_EPS:
            if (parse_float(optarg, 1e-30, 1, &o->eps)) FAIL("--eps must be a number in (0, 1]: got '%s'", optarg);
            adam_flag = 1; break;
        case OPT_LARS_ETA:
            if (parse_float(optarg, 1e-9, 1e3, &o->lars_eta)) FAIL("--lars-eta must be a number in (0, 1000]: got '%s'", optarg);
            lars_flag = 1; break;
        case OPT_SAMPLER:
            if (sampler_kind_parse(optarg, &o->sampler) != 0)
                FAIL("--sampler must be distributed, shard-then-shuffle, shuffle-then-shard or split-epochs: got '%s'", optarg);
            break;
        case OPT_DEVICE:
            if (!strcmp(optarg, "cpu")) o->device = DEVICE_CPU;
            else if (!strcmp(optarg, "cuda")) o->device = DEVICE_CUDA;
            else FAIL("--device must be cpu or cuda: got '%s'", optarg);
#ifndef HAVE_CUDA
            if (o->device == DEVICE_CUDA) FAIL("psring was built without CUDA (configure --with-cuda)");
#endif
            break;
        case OPT_CHECK_OPTIONS: o->check_options = 1; break;
        case 'h':
            options_usage(stdout);
            return 1;
        case ':':
            FAIL("option %s needs a value (see --help)", name);
        default:
            FAIL("unknown option '%s' (see --help)", name);
        }
    }
    if (optind < argc) FAIL("unexpected argument '%s' (see --help)", argv[optind]);
    if (o->lr == 0) o->lr = optim_default_lr(o->optimizer);

    char lerr[256];
    o->nsizes = mlp_parse_layers(o->layers_spec, o->sizes, MLP_MAX_SIZES, lerr, sizeof lerr);
    if (o->nsizes < 0) FAIL("%s", lerr);
    if (o->optimizer == OPTIM_LARS && 2 * (o->nsizes - 1) > OPTIM_MAX_SEGMENTS)
        FAIL("--optimizer lars handles up to %d linear layers: --layers has %d", OPTIM_MAX_SEGMENTS / 2, o->nsizes - 1);
    struct stat st;
    if (stat(o->data_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        FAIL("--data %s: no such directory (fetch MNIST with experiments/get-mnist)", o->data_dir);
    if (o->topology != TOPO_RING && (o->overlap || o->allreduce != ALLREDUCE_RING))
        FAIL("--overlap and --allreduce apply to --topology ring only");
    if (o->topology != TOPO_PS && o->sync != SYNC_BSP)
        FAIL("--sync applies to --topology ps only");
    if (o->samples && (o->topology != TOPO_PS || o->sync == SYNC_BSP))
        FAIL("--samples applies to --topology ps --sync async or ssp only (bsp and the ring keep epochs)");
    if (o->topology == TOPO_LOCAL && o->fp16)
        FAIL("--fp16 applies to --topology ring or ps (local has no exchange to compress)");
    if (o->resume[0] && stat(o->resume, &st) != 0)
        FAIL("--resume %s: no such file", o->resume);
    /* what a run writes at its end is refused now, not after the training: a folder, a file that
     * cannot be written, or (for a new file, and for the checkpoint and the timeline, which write
     * beside theirs and rename) a folder that cannot be. Checked by the process that writes them,
     * worker 0 (MPI rank S on a PS), or by one process alone (the launcher's --check-options): on
     * real hosts another one may lack a folder it never uses */
    const struct { const char *flag, *path; int beside; } outs[] = {
        { "--csv", o->csv, 0 }, { "--checkpoint", o->checkpoint, 1 }, { "--dump-params", o->dump_params, 0 },
        { "--timeline", o->timeline, 1 }, { "--loss-log", o->loss_log, 0 } };
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    int r = 0;
    int writer = !rank || (parse_int(rank, 0, INT_MAX, &r) == 0 && r == (o->topology == TOPO_PS ? o->servers : 0));
    for (size_t i = 0; writer && i < sizeof outs / sizeof outs[0]; i++) {
        const char *path = outs[i].path;
        if (!*path) continue;
        int exists = stat(path, &st) == 0;
        if (exists && S_ISDIR(st.st_mode)) FAIL("%s %s: is a directory", outs[i].flag, path);
        if (exists && !outs[i].beside) {
            if (access(path, W_OK) != 0) FAIL("%s %s: cannot write it: %s", outs[i].flag, path, strerror(errno));
            continue;
        }
        char dir[sizeof o->csv + 2];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash) snprintf(dir, sizeof dir, ".");
        else if (slash == dir) dir[1] = 0;
        else *slash = 0;
        if (access(dir, W_OK) != 0) FAIL("%s %s: cannot write in %s: %s", outs[i].flag, path, dir, strerror(errno));
    }
    if (o->slow_ms > 0 && !o->slow_ranks)
        FAIL("--slow-ms needs --slow-rank");
    if (o->ps_auth[0] && o->topology != TOPO_PS)
        FAIL("--ps-auth applies to --topology ps only");
    if (o->ps_auth[0] && stat(o->ps_auth, &st) != 0)
        FAIL("--ps-auth %s: no such file (make one with: psring keygen %s)", o->ps_auth, o->ps_auth);
    if (momentum_flag && o->optimizer == OPTIM_ADAM)
        FAIL("--momentum applies to --optimizer sgd or lars (Adam's moments are --beta1/--beta2)");
    if (adam_flag && o->optimizer != OPTIM_ADAM)
        FAIL("--beta1, --beta2 and --eps apply to --optimizer adam only");
    if (lars_flag && o->optimizer != OPTIM_LARS)
        FAIL("--lars-eta applies to --optimizer lars only");
    if (o->allreduce == ALLREDUCE_NCCL && o->device != DEVICE_CUDA)
        FAIL("--allreduce nccl needs --device cuda (NCCL reduces GPU buffers)");
    /* what the GPU path does not do (yet): say so rather than silently running on the CPU */
    if (o->device == DEVICE_CUDA && o->overlap)
        FAIL("--overlap is not implemented for --device cuda (the GPU ring reduces after backward)");
    if (o->device == DEVICE_CUDA && (o->ring_op == RING_OP_ADASUM || o->hierarchical))
        FAIL("--op adasum and --hierarchical are not implemented for --device cuda");
    if (o->device == DEVICE_CUDA && o->fp16)
        FAIL("--fp16 is not implemented for --device cuda");
    if (o->device == DEVICE_CUDA && o->stall_warn > 0 && o->topology == TOPO_RING)
        FAIL("--stall-warn is not implemented for --topology ring --device cuda");
    if (o->stall_warn > 0 && o->overlap)
        FAIL("--stall-warn does not combine with --overlap (the check runs on the main thread's MPI calls)");
    if (o->topology != TOPO_RING && (o->ring_op != RING_OP_AVERAGE || o->autotune || o->hierarchical))
        FAIL("--op, --autotune and --hierarchical apply to --topology ring only");
    if (o->ring_op == RING_OP_ADASUM && (o->fp16 || o->overlap || o->allreduce != ALLREDUCE_RING || o->hierarchical))
        FAIL("--op adasum runs on psring's ring in float on the whole gradient: not with --fp16, --overlap, --allreduce mpi|nccl or --hierarchical");
    if (o->autotune && !o->overlap)
        FAIL("--autotune tunes the --overlap buckets and ring chunks: add --overlap");
    if (o->autotune && o->allreduce != ALLREDUCE_RING)
        FAIL("--autotune tunes psring's ring: not with --allreduce mpi|nccl");
    if (o->autotune_log[0] && !o->autotune)
        FAIL("--autotune-log needs --autotune");
    if (o->hierarchical && (o->fp16 || o->overlap || o->allreduce != ALLREDUCE_RING))
        FAIL("--hierarchical runs psring's ring in float on the calling thread: not with --fp16, --overlap or --allreduce mpi|nccl");
    return 0;
}

/* FNV-1a over the fields every rank must agree on; paths, logging and --slow-* are per-rank. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001b3ull; }
    return h;
}

uint64_t options_fingerprint(const options_t *o) {
    uint64_t h = 0xcbf29ce484222325ull;
    int ints[] = {o->topology, o->batch, o->epochs, o->train_limit, o->test_limit, o->drop_last,
                  o->scaling, o->lr_scale_linear, o->accumulate, o->fp16, o->allreduce, o->overlap,
                  o->chunk_kb, o->servers, o->sync, o->staleness, o->nsizes, o->log_every,
                  o->loss_log[0] != 0,    /* the last two decide which steps run a collective */
                  o->ps_auth[0] != 0,     /* CURVE on one side only would end in a handshake stall */
                  o->stall_warn > 0};     /* ring: rank 0 would wait for arrival reports never sent */
    h = fnv(h, ints, sizeof ints);
    h = fnv(h, o->sizes, sizeof(int) * (size_t)o->nsizes);
    float fl[] = {o->lr, o->momentum, o->weight_decay, o->warmup_epochs, o->bucket_mb};
    h = fnv(h, fl, sizeof fl);
    h = fnv(h, &o->steps, sizeof o->steps);
    h = fnv(h, &o->samples, sizeof o->samples);
    h = fnv(h, &o->seed, sizeof o->seed);
    h = fnv(h, o->transport, strlen(o->transport));
    int ring_ints[] = {o->ring_op, o->autotune, o->hierarchical};   /* each changes the collectives run */
    h = fnv(h, ring_ints, sizeof ring_ints);
    int ext[] = {o->optimizer, o->sampler, o->ps_chunk_kb};   /* PS slices: servers and workers must agree */
    h = fnv(h, ext, sizeof ext);
    float ofl[] = {o->beta1, o->beta2, o->eps, o->lars_eta};
    h = fnv(h, ofl, sizeof ofl);
    return h;
}

optim_config_t options_optim_config(const options_t *o) {
    optim_config_t c = {0};
    c.lr = o->lr;
    c.momentum = o->momentum;
    c.weight_decay = o->weight_decay;
    c.kind = o->optimizer;
    c.beta1 = o->beta1;
    c.beta2 = o->beta2;
    c.eps = o->eps;
    c.lars_eta = o->lars_eta;
    /* only LARS reads the layout; options_parse already refused layer lists it cannot hold */
    if (optim_set_layout(&c, o->sizes, o->nsizes) != 0) c.nseg = 0;
    return c;
}

void options_defaults(options_t *o) { defaults(o); }
