/* options.c: psring-train's command line. The trainer's flags are rows of two tables (before and
 * after the topologies' sections of --help); each topology's flags are rows of its descriptor's
 * table (topology.h). One getopt_long array is made of all of them; a flag is stored where its
 * row says, in options_t or in the chosen topology's config. Every value is checked here, before
 * any rank talks to another, so bad input costs one line and exit code 2 on every rank instead
 * of a hang later. It does not open files beyond checking that paths can be used. */
#include "config.h"
#include "common/parse.h"
#include "train/options.h"
#include "train/topology_list.h"
#include <getopt.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#define AT(field) offsetof(options_t, field), sizeof(((options_t *)0)->field)

static const char *const device_words[] = {"cpu", "cuda", NULL};
static const char *const scaling_words[] = {"weak", "strong", NULL};
static const char *const lr_scale_words[] = {"linear", "none", NULL};
static const char *const optimizer_words[] = {"sgd", "adam", "lars", NULL};

static int parse_sampler(const char *arg, void *target) { return sampler_kind_parse(arg, (sampler_kind_t *)target); }

/* a list, so that every worker of an async run can be slowed to a known pace */
static int parse_slow_ranks(const char *arg, void *target) {
    uint64_t *ranks = target;
    const char *p = arg;
    char *end;
    long v;
    for (;;) {
        if (parse_long_at(p, &end, 0, 63, &v) || (*end != ',' && *end != '\0')) return -1;
        *ranks |= 1ull << v;
        if (!*end) return 0;
        p = end + 1;
    }
}

static char topology_usage[128];   /* "--topology local|ring|ps", from the list */

static const opttab_row_t head_rows[] = {
    OPT_SECTION("Model and data"),
    OPT_CHOICE("topology", AT(topology_index), topology_names, OPT_AGREE, topology_usage, "how workers exchange gradients (default local)"),
    OPT_CHOICE("device", AT(device), device_words, OPT_PER_RANK, "--device cpu|cuda", "train on the CPU or on GPU local_rank % GPUs (default cpu)"),
    OPT_STRING("layers", AT(layers_spec), "is too long", OPT_AGREE, "--layers L0,L1,...,10", "layer widths, first 784, last 10 (default 784,512,256,10)"),
    OPT_PATH("data", AT(data_dir), OPT_PER_RANK, "--data DIR", "MNIST IDX files, plain or .gz (default data/mnist)"),
    OPT_INT("train-limit", AT(train_limit), 1, 1L << 30, "must be an integer >= 1", OPT_AGREE, "--train-limit K", "train on the first K samples only (default all 60000)"),
    OPT_INT("test-limit", AT(test_limit), 1, 1L << 30, "must be an integer >= 1", OPT_AGREE, "--test-limit K", "evaluate on the first K test samples (default all 10000)"),
    OPT_FLAG("drop-last", AT(drop_last), OPT_AGREE, "--drop-last", "drop the tail instead of padding shards (DistributedSampler)"),
    OPT_CUSTOM("sampler", AT(sampler), parse_sampler, "must be distributed, shard-then-shuffle, shuffle-then-shard or split-epochs", OPT_AGREE, "--sampler KIND", "how the data is split among workers (default distributed):\n"
           "distributed         a global shuffle per epoch, rank r takes every\n"
           "                    N-th position (PyTorch DistributedSampler)\n"
           "shuffle-then-shard  a global shuffle per epoch, rank r takes the r-th\n"
           "                    contiguous block of it\n"
           "shard-then-shuffle  fixed contiguous shard per rank, shuffled within\n"
           "split-epochs        every rank sees the whole dataset per epoch in its\n"
           "                    own order (epochs split among ranks: N x the steps)"),
    OPT_SECTION("Optimisation"),
    OPT_INT("batch", AT(batch), 1, 1 << 20, "must be an integer in 1..1048576", OPT_AGREE, "--batch B", "batch per worker (weak scaling) or global (strong) (default 64)"),
    OPT_CHOICE("scaling", AT(scaling), scaling_words, OPT_AGREE, "--scaling weak|strong", "weak: --batch per worker; strong: --batch global, split (default weak)"),
    OPT_INT("epochs", AT(epochs), 1, 100000, "must be an integer >= 1", OPT_AGREE, "--epochs E", "epochs (default 10)"),
    OPT_LONG("steps", AT(steps), 1, 1L << 40, "must be an integer >= 1", OPT_AGREE, "--steps N", "stop after N optimizer steps in total (default: no cap)"),
    OPT_LONG("timing-skip", AT(timing_skip), 0, 1L << 40, "must be an integer >= 0", OPT_PER_RANK, "--timing-skip K", "leave the first K steps (warm-up: page faults, cold caches) out of\n"
           "the CSV's times and samples/s (default 0)"),
    OPT_FLOAT("lr", AT(lr), 1e-12, 1e3, "must be a number in [1e-12, 1000]", OPT_AGREE, "--lr X", "learning rate for --batch samples (default by --optimizer: sgd\n"
           "0.02, adam 0.001 as torch.optim.Adam, lars 1)"),
    OPT_CHOICE("lr-scale", AT(lr_scale), lr_scale_words, OPT_AGREE, "--lr-scale linear|none", "scale lr by global batch / --batch (Goyal et al.) (default linear)"),
    OPT_FLOAT("warmup-epochs", AT(warmup_epochs), 0, 1e6, "must be a number >= 0", OPT_AGREE, "--warmup-epochs X", "ramp lr from --lr to the scaled lr over X epochs (default 0)"),
    OPT_CHOICE("optimizer", AT(optimizer), optimizer_words, OPT_AGREE, "--optimizer sgd|adam|lars", "torch.optim.SGD, torch.optim.Adam (L2 decay), LARS (default sgd)"),
    OPT_FLOAT("momentum", AT(momentum), 0, 0.999999, "must be in [0, 1)", OPT_AGREE, "--momentum X", "SGD and LARS momentum (default 0.9)"),
    OPT_FLOAT("beta1", AT(beta1), 0, 0.999999, "must be in [0, 1)", OPT_AGREE, "--beta1 X --beta2 X", "Adam moment decay rates (default 0.9, 0.999)"),
    OPT_FLOAT("beta2", AT(beta2), 0, 0.999999, "must be in [0, 1)", OPT_AGREE, NULL, NULL),
    OPT_FLOAT("eps", AT(eps), 1e-30, 1, "must be a number in (0, 1]", OPT_AGREE, "--eps X", "Adam denominator term (default 1e-8)"),
    OPT_FLOAT("lars-eta", AT(lars_eta), 1e-9, 1e3, "must be a number in (0, 1000]", OPT_AGREE, "--lars-eta X", "LARS trust coefficient (default 0.001)"),
    OPT_FLOAT("weight-decay", AT(weight_decay), 0, 1, "must be in [0, 1]", OPT_AGREE, "--weight-decay X", "L2 weight decay (default 0)"),
    OPT_INT("accumulate", AT(accumulate), 1, 1024, "must be an integer in 1..1024", OPT_AGREE, "--accumulate K", "K backward passes of B samples per exchange (default 1)"),
    OPT_U64("seed", AT(seed), "must be a non-negative integer", OPT_AGREE, "--seed S", "seed for init and data order (default 42)"),
    OPT_INT("threads", AT(threads), 1, 1024, "must be an integer in 1..1024", OPT_PER_RANK, "--threads T", "BLAS threads per process (default 1)"),
};

static const opttab_row_t tail_rows[] = {
    OPT_SECTION("Output"),
    OPT_PATH("csv", AT(csv), OPT_PER_RANK, "--csv FILE", "append one row of results (header written once)"),
    OPT_PATH("checkpoint", AT(checkpoint), OPT_PER_RANK, "--checkpoint FILE", "write training state here (atomically) at the end"),
    OPT_INT("checkpoint-every", AT(checkpoint_every), 1, 1L << 30, "must be an integer >= 1", OPT_PER_RANK, "--checkpoint-every N", "... and every N steps"),
    OPT_PATH("resume", AT(resume), OPT_PER_RANK, "--resume FILE", "continue from a checkpoint (same model and seed)"),
    /* the next two decide which steps run a collective (the loss average): they must agree */
    OPT_INT("log-every", AT(log_every), 1, 1L << 30, "must be an integer >= 1", OPT_AGREE, "--log-every N", "print the loss every N steps (default: per epoch)"),
    OPT_PATH("loss-log", AT(loss_log), OPT_AGREE_SET, "--loss-log FILE", "write \"step,loss\" for every step (loss averaged over workers)"),
    OPT_PATH("dump-params", AT(dump_params), OPT_PER_RANK, "--dump-params FILE", "write the final parameters as raw float32"),
    /* on or off must agree: with copies the epochs' tests, a collective, are left out */
    OPT_LONG("snapshot-every", AT(snapshot_every), 1, 1L << 30, "must be an integer >= 1", OPT_AGREE, "--snapshot-every K --snapshots FILE",
            "worker 0 copies its parameters at step 0 and every K steps (the copies' time off the clock), writes them to FILE after training; no test at epoch ends"),
    OPT_PATH("snapshots", AT(snapshots), OPT_AGREE_SET, NULL, NULL),
    OPT_PATH("eval-snapshots", AT(eval_snapshots), OPT_PER_RANK, "--eval-snapshots FILE", "test every copy in FILE, in one process (no mpirun): \"step,elapsed_s,test_accuracy\" on stdout"),
    OPT_FLAG("quiet", AT(quiet), OPT_PER_RANK, "--quiet", "only errors and the final summary"),
    OPT_PATH("timeline", AT(timeline), OPT_PER_RANK, "--timeline FILE", "Chrome-trace JSON of every process's phases (Perfetto, chrome://tracing)"),
    /* on or off must agree: rank 0 would wait for arrival reports never sent */
    OPT_FLOAT("stall-warn", AT(stall_warn), 0.01, 86400, "must be a number of seconds in [0.01, 86400]", OPT_AGREE_SET, "--stall-warn SEC", "name a rank that makes no progress for SEC s (ring: rank 0, ps: server 0)"),
    OPT_SECTION("Testing"),
    OPT_CUSTOM("slow-rank", AT(slow_ranks), parse_slow_ranks, "must be worker ranks in 0..63, comma-separated", OPT_PER_RANK, "--slow-rank R[,R..] --slow-ms M", "workers R (0..63) sleep M ms per step (stragglers, tests)"),
    OPT_INT("slow-ms", AT(slow_ms), 0, 600000, "must be an integer in 0..600000", OPT_PER_RANK, NULL, NULL),
    OPT_FLAG("check-options", AT(check_options), OPT_PER_RANK, "--check-options", "validate the options and exit: 0, or 2 with the one-line error; starts\n"
           "no MPI (psring runs it once before mpirun starts N ranks)"),
    OPT_FLAG("describe", AT(describe), OPT_PER_RANK, "--describe", "validate the options but for files, print what the launcher needs of\n"
           "the topology as key=value lines (psring reads them) and exit"),
    OPT_INT("describe-np", AT(describe_np), 1, 999999, "must be an integer in 1..999999", OPT_PER_RANK, "--describe-np N", "with --describe: refuse N processes the topology cannot run on; with\n"
           "--check-options: also load the data and a --resume checkpoint, and refuse a\n"
           "batch its workers' shards cannot fill"),
    OPT_INT("describe-workers", AT(describe_workers), 1, 999999, "must be an integer in 1..999999", OPT_PER_RANK, "--describe-workers N", "with --describe: the processes and hosts the topology's layout wants for\n"
           "N workers, and the flags N implies (psring train --workers N)"),
};

static const opttab_t head = {head_rows, sizeof head_rows / sizeof head_rows[0]};
static const opttab_t tail = {tail_rows, sizeof tail_rows / sizeof tail_rows[0]};

void options_usage(FILE *f) {
    fputs("usage: psring-train [options]            (one process: --topology local)\n"
          "       mpirun -np N psring-train --topology ring|ps [options]   (or: psring train -np N ...)\n"
          "\n"
          "Trains an MLP on MNIST data-parallel; the topology only changes how gradients are exchanged.\n"
          "\n", f);
    topology_list_usage(topology_usage, sizeof topology_usage);
    opttab_usage(&head, f);
    for (int i = 0; topology_list[i]; i++) opttab_usage(&topology_list[i]->flags, f);
    opttab_usage(&tail, f);
    fputs("  -h, --help                 this text\n", f);
}

static void defaults(options_t *o) {
    memset(o, 0, sizeof *o);
    o->topology = topology_list[0];
    strcpy(o->layers_spec, "784,512,256,10");
    o->batch = 64;
    o->epochs = 10;
    o->lr = 0;   /* 0 = not given: optim_default_lr of the --optimizer once all flags are read */
    o->seed = 42;
    strcpy(o->data_dir, "data/mnist");
    o->threads = 1;
    o->scaling = SCALING_WEAK;
    o->accumulate = 1;
    optim_config_t d = optim_defaults(OPTIM_SGD);   /* the hyper-parameters' one home */
    o->optimizer = d.kind;
    o->momentum = d.momentum;
    o->weight_decay = d.weight_decay;
    o->beta1 = d.beta1;
    o->beta2 = d.beta2;
    o->eps = d.eps;
    o->lars_eta = d.lars_eta;
    o->sampler = SAMPLER_DISTRIBUTED;
    o->topology->defaults(o->topo_cfg);
}

/* ---- one getopt_long array over every table ---------------------------------------------- */

#define MAX_FLAGS 160
static struct option long_opts[MAX_FLAGS + 2];
static int nlong;

/* every table's flags once (a flag two topologies share, --fp16, is one entry); val = index */
static void build_long_opts(void) {
    if (nlong) return;
    const opttab_t *tabs[2 + 32];
    int nt = 0;
    tabs[nt++] = &head;
    tabs[nt++] = &tail;
    for (int i = 0; topology_list[i] && nt < 34; i++) tabs[nt++] = &topology_list[i]->flags;
    for (int t = 0; t < nt; t++)
        for (size_t r = 0; r < tabs[t]->n; r++) {
            const opttab_row_t *row = &tabs[t]->rows[r];
            if (row->kind == OPTTAB_SECTION) continue;
            int dup = 0;
            for (int k = 0; k < nlong && !dup; k++) dup = !strcmp(long_opts[k].name, row->flag);
            if (dup) continue;
            if (nlong == MAX_FLAGS) abort();   /* a programming error: raise MAX_FLAGS */
            long_opts[nlong] = (struct option){row->flag, row->kind == OPTTAB_FLAG ? no_argument : required_argument, 0, 256 + nlong};
            nlong++;
        }
    long_opts[nlong] = (struct option){"help", no_argument, 0, 'h'};
    long_opts[nlong + 1] = (struct option){0, 0, 0, 0};
}

/* the flags of a command line in their order, each with its value, before any is stored */
typedef struct { const char *flag, *arg; } given_t;

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return 2; } while (0)

/* getopt_long's pass: unknown flags, missing values and abbreviations refused in order; stops at
 * --help (1) */
static int collect(int argc, char **argv, given_t *g, int *ng, char *err, size_t errlen) {
    build_long_opts();
    optind = 0;   /* 0, not 1: glibc then also forgets a half-read "-xy" cluster of the last call
                   * (fuzz/fuzz_options: parse 2 read freed memory after "-h0") */
    opterr = 0;
    int c, li;
    *ng = 0;
    while ((li = -1, c = getopt_long(argc, argv, ":h", long_opts, &li)) != -1) {
        const char *name = c == '?' || c == ':' ? parse_bad_option(argv, long_opts) : optind > 1 && optind - 1 < argc ? argv[optind - 1] : "?";
        if (parse_long_exact(argv, long_opts, li)) FAIL("write --%s out in full (an abbreviation of it was given)", long_opts[li].name);
        if (c == 'h') return 1;
        if (c == ':') FAIL("option %s needs a value (see --help)", name);
        if (c < 256 || c >= 256 + nlong) FAIL("unknown option '%s' (see --help)", name);
        g[(*ng)++] = (given_t){long_opts[c - 256].name, optarg};
    }
    if (optind < argc) FAIL("unexpected argument '%s' (see --help)", argv[optind]);
    return 0;
}

static int was_given(const given_t *g, int ng, const char *flag) {
    for (int i = 0; i < ng; i++)
        if (!strcmp(g[i].flag, flag)) return 1;
    return 0;
}

/* "--fp16 applies to --topology ring or ps only" */
static int refuse_elsewhere(const char *flag, char *err, size_t errlen) {
    const char *names[32];
    int n = 0;
    for (int i = 0; topology_list[i] && n < 31; i++)
        if (topology_flag(topology_list[i], flag)) names[n++] = topology_list[i]->name;
    names[n] = NULL;
    char w[256];
    opttab_words(names, w, sizeof w);
    FAIL("--%s applies to --topology %s only", flag, w);
}

/* the values in order, into options_t or the topology's config: --topology first, so its
 * defaults are in place before its flags */
static int store(options_t *o, const given_t *g, int ng, char *err, size_t errlen) {
    for (int i = 0; i < ng; i++)
        if (!strcmp(g[i].flag, "topology") && opttab_set(opttab_find(&head, "topology"), o, g[i].arg, err, errlen)) return 2;
    o->topology = topology_list[o->topology_index];
    if (o->topology->config_size > sizeof o->topo_cfg) abort();   /* a programming error */
    o->topology->defaults(o->topo_cfg);
    for (int i = 0; i < ng; i++) {
        if (!strcmp(g[i].flag, "topology")) continue;   /* stored above */
        const opttab_row_t *row = opttab_find(&head, g[i].flag);
        if (!row) row = opttab_find(&tail, g[i].flag);
        void *base = o;
        if (!row) {
            row = topology_flag(o->topology, g[i].flag);
            if (!row) return refuse_elsewhere(g[i].flag, err, errlen);
            base = o->topo_cfg;
        }
        if (opttab_set(row, base, g[i].arg, err, errlen)) return 2;
    }
    return 0;
}

/* the rules between the trainer's own flags */
static int check_trainer(options_t *o, const given_t *g, int ng, char *err, size_t errlen) {
#ifndef HAVE_CUDA
    if (o->device == DEVICE_CUDA) FAIL("psring was built without CUDA (configure --with-cuda)");
#endif
    if (o->lr == 0) o->lr = optim_default_lr(o->optimizer);
    o->lr_scale_linear = o->lr_scale == 0;
    char lerr[256];
    o->nsizes = mlp_parse_layers(o->layers_spec, o->sizes, MLP_MAX_SIZES, lerr, sizeof lerr);
    if (o->nsizes < 0) FAIL("%s", lerr);
    if (o->optimizer == OPTIM_LARS && 2 * (o->nsizes - 1) > OPTIM_MAX_SEGMENTS)
        FAIL("--optimizer lars handles up to %d linear layers: --layers has %d", OPTIM_MAX_SEGMENTS / 2, o->nsizes - 1);
    if (o->slow_ms > 0 && !o->slow_ranks) FAIL("--slow-ms needs --slow-rank");
    if (was_given(g, ng, "momentum") && o->optimizer == OPTIM_ADAM)
        FAIL("--momentum applies to --optimizer sgd or lars (Adam's moments are --beta1/--beta2)");
    if ((was_given(g, ng, "beta1") || was_given(g, ng, "beta2") || was_given(g, ng, "eps")) && o->optimizer != OPTIM_ADAM)
        FAIL("--beta1, --beta2 and --eps apply to --optimizer adam only");
    if (was_given(g, ng, "lars-eta") && o->optimizer != OPTIM_LARS)
        FAIL("--lars-eta applies to --optimizer lars only");
    if (!o->snapshot_every != !o->snapshots[0]) FAIL("--snapshot-every and --snapshots go together");
    const char *world = getenv("OMPI_COMM_WORLD_SIZE");   /* under mpirun: how many ranks */
    if (o->eval_snapshots[0] && (o->snapshots[0] || (world && strcmp(world, "1") != 0)))
        FAIL("--eval-snapshots tests copies on one process, without mpirun and without --snapshots");
    if (o->checkpoint_every && !o->checkpoint[0]) FAIL("--checkpoint-every needs --checkpoint FILE (there is nowhere to write)");
    if (o->describe_np && !o->describe && !o->check_options) FAIL("--describe-np goes with --describe or --check-options");
    if (o->describe_workers && !o->describe) FAIL("--describe-workers goes with --describe");
    if (o->describe_np && o->describe_workers) FAIL("give --describe-np or --describe-workers, not both");
    return 0;
}

/* what a run writes at its end is refused now, not after the training: a folder, a file that
 * cannot be written, or (for a new file, and for every output but the appended CSV, which are
 * written beside theirs and renamed: outfile.h) a folder that cannot be. Checked by the process that writes them,
 * worker 0 (the first rank after the topology's servers), or by one process alone (the
 * launcher's --check-options): on real hosts another one may lack a folder it never uses */
static int check_outputs(const options_t *o, char *err, size_t errlen) {
    const struct { const char *flag, *path; int beside; } outs[] = {
        { "--csv", o->csv, 0 }, { "--checkpoint", o->checkpoint, 1 }, { "--dump-params", o->dump_params, 1 },
        { "--timeline", o->timeline, 1 }, { "--loss-log", o->loss_log, 1 }, { "--snapshots", o->snapshots, 1 } };
    topology_launch_t l = {0};
    o->topology->launch(o->topo_cfg, &l);
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    int r = 0;
    int writer = !rank || (parse_int(rank, 0, INT_MAX, &r) == 0 && r == l.servers);
    struct stat st;
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
    return 0;
}

/* the files the flags name (skipped by --describe alone: on other hosts they are theirs) */
static int check_files(const options_t *o, char *err, size_t errlen) {
    struct stat st;
    if (stat(o->data_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        FAIL("--data %s: no such directory (fetch MNIST with experiments/get-mnist)", o->data_dir);
    if (o->resume[0] && stat(o->resume, &st) != 0)
        FAIL("--resume %s: no such file", o->resume);
    if (o->eval_snapshots[0] && (stat(o->eval_snapshots, &st) != 0 || !S_ISREG(st.st_mode)))
        FAIL("--eval-snapshots %s: no such file", o->eval_snapshots);
    return check_outputs(o, err, errlen);
}

/* --describe-workers N: the topology's layout for N workers, the flags N implies set in its config
 * before its checks run (topology.h); without a layout of its own, every process is a worker on a
 * host of its own */
static int describe_layout(options_t *o, char *err, size_t errlen) {
    int n = o->describe_workers;
    topology_layout_t *l = &o->layout;
    if (o->topology->layout) return o->topology->layout(o->topo_cfg, n, l, err, errlen) ? -1 : 0;
    *l = (topology_layout_t){ .processes = n, .hosts = n };
    snprintf(l->what, sizeof l->what, "%d worker%s, one per host", n, n == 1 ? "" : "s");
    return 0;
}

int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen) {
    defaults(o);
    given_t g[256];
    int ng = 0;
    if (argc > 256) FAIL("too many arguments (%d)", argc);
    int rc = collect(argc, argv, g, &ng, err, errlen);
    if (rc == 1) { options_usage(stdout); return 1; }
    if (rc || (rc = store(o, g, ng, err, errlen)) || (rc = check_trainer(o, g, ng, err, errlen))) return rc;
    if (o->describe_workers && describe_layout(o, err, errlen)) return 2;   /* first: it may imply flags */
    topology_common_t c = options_common(o);
    if (o->topology->check && o->topology->check(o->topo_cfg, &c, err, errlen)) return 2;
    int np = o->describe_workers ? o->layout.processes : o->describe_np;
    if (o->describe && o->topology->processes && o->topology->processes(o->topo_cfg, np, err, errlen)) return 2;
    if (o->describe && !o->check_options) return 0;
    return check_files(o, err, errlen) ? 2 : 0;
}

uint64_t options_fingerprint(const options_t *o) {
    uint64_t h = opttab_fingerprint(&head, o, 0xcbf29ce484222325ull);
    h = opttab_fingerprint(&tail, o, h);
    return opttab_fingerprint(&o->topology->flags, o->topo_cfg, h);
}

optim_config_t options_optim_config(const options_t *o) {
    optim_config_t c = { .kind = (optim_kind_t)o->optimizer, .lr = o->lr, .momentum = o->momentum,
                         .weight_decay = o->weight_decay, .beta1 = o->beta1, .beta2 = o->beta2, .eps = o->eps,
                         .lars_eta = o->lars_eta };
    /* only LARS reads the layout; options_parse already refused layer lists it cannot hold */
    if (optim_set_layout(&c, o->sizes, o->nsizes) != 0) c.nseg = 0;
    return c;
}

topology_common_t options_common(const options_t *o) {
    topology_common_t c = {
        .fingerprint = options_fingerprint(o), .optim = options_optim_config(o), .device = (device_t)o->device,
        .stall_warn = o->stall_warn, .layers = o->layers_spec, .quiet = o->quiet,
        .check_files = !o->describe || o->check_options,
    };
    return c;
}

exchange_t *options_exchange_create(const options_t *o, size_t count) {
    topology_common_t c = options_common(o);
    return o->topology->create(o->topo_cfg, &c, count);
}

void options_describe(const options_t *o, FILE *f) {
    topology_launch_t l = {0};
    o->topology->launch(o->topo_cfg, &l);
    fprintf(f, "topology=%s\ndirect=%d\nservers=%d\ncluster_bind=%d\npeer_timeout=%g\nrecovery=%d\n",
            o->topology->name, l.direct, l.servers, l.cluster_bind, l.peer_timeout, l.recovery);
    if (o->describe_workers)
        fprintf(f, "processes=%d\nhosts=%d\nlayout=%s\nargs=%s\n", o->layout.processes, o->layout.hosts, o->layout.what,
                o->layout.args);
    fputs("topologies=", f);
    for (int i = 0; topology_list[i]; i++) fprintf(f, "%s%s", i ? " " : "", topology_list[i]->name);
    fputc('\n', f);
}
