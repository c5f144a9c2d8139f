/* bench_driver.c: see bench_driver.h */
#include "bench_driver.h"
#include "common/check.h"
#include "common/mpi_check.h"
#include "common/parse.h"
#include "model/blas.h"
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_CSV = BENCH_OPT_BASE, OPT_COMPUTE_US, OPT_COMPUTE, OPT_CHECK_OPTIONS };
static const struct option shared_opts[] = {
    {"minbytes", required_argument, 0, 'b'}, {"maxbytes", required_argument, 0, 'e'},
    {"stepfactor", required_argument, 0, 'f'}, {"iters", required_argument, 0, 'n'},
    {"warmup", required_argument, 0, 'w'}, {"csv", required_argument, 0, OPT_CSV},
    {"compute-us", required_argument, 0, OPT_COMPUTE_US}, {"compute", required_argument, 0, OPT_COMPUTE},
    {"check-options", no_argument, 0, OPT_CHECK_OPTIONS}, {"help", no_argument, 0, 'h'}};
#define NSHARED (sizeof shared_opts / sizeof shared_opts[0])
#define MAX_OPTS 64

/* the refusals' voice and who says them: all ranks parse the same argv, rank 0 speaks */
static const bench_spec_t *me;
static int my_rank, check_only;

void bench_refuse(const char *fmt, const char *arg) {
    if (my_rank == 0) {
        fprintf(stderr, "%s: ", me->prog);
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "%s\n", me->tail);
    }
    if (!check_only) MPI_Finalize();
    exit(EXIT_BADINPUT);
}

/* a default size as the flags take it: 4096 -> "4K" */
static const char *size_words(size_t b, char *out, size_t n) {
    const char *unit = "";
    if (b && b % ((size_t)1 << 30) == 0) { b >>= 30; unit = "G"; }
    else if (b && b % ((size_t)1 << 20) == 0) { b >>= 20; unit = "M"; }
    else if (b && b % 1024 == 0) { b >>= 10; unit = "K"; }
    snprintf(out, n, "%zu%s", b, unit);
    return out;
}

static void usage(const bench_opts_t *d) {
    char lo[32], hi[32];
    printf("usage: %s\n"
           "  -b, --minbytes SIZE   smallest message, bytes of float data, K/M/G suffixes (default %s)\n"
           "  -e, --maxbytes SIZE   largest message (default %s)\n"
           "  -f, --stepfactor F    multiply the size by F each row (default %g)\n"
           "  -n, --iters N         timed iterations per size (default %d)\n"
           "  -w, --warmup N        untimed iterations first (default %d)\n",
           me->synopsis, size_words(d->min_bytes, lo, sizeof lo), size_words(d->max_bytes, hi, sizeof hi),
           d->factor, d->iters, d->warmup);
    fputs(me->help, stdout);
    printf("      --csv FILE        also write the rows as CSV (%s)\n", me->help_csv);
    fputs(me->help_pacing, stdout);
    fputs("      --check-options   validate the options and exit (0, or 2 with the error) without starting MPI\n"
          "                        (psring runs it once before mpirun starts N ranks)\n", stdout);
}

static void parse(bench_opts_t *o, int argc, char **argv, int nranks) {
    const bench_opts_t defaults = *o;
    /* the shared options, then the benchmark's, in one getopt_long table */
    struct option lo[MAX_OPTS];
    size_t n = 0;
    for (size_t i = 0; i < NSHARED; i++) lo[n++] = shared_opts[i];
    for (const struct option *p = me->longopts; p && p->name; p++) {
        if (n + 1 >= MAX_OPTS) die("%s: more than %d options", me->prog, MAX_OPTS - 1);
        lo[n++] = *p;
    }
    lo[n] = (struct option){0, 0, 0, 0};
    char shortopts[64];
    snprintf(shortopts, sizeof shortopts, ":b:e:f:n:w:h%s", me->shortopts ? me->shortopts : "");

    opterr = 0;
    int c, li, sizes_set = 0;
    while ((li = -1, c = getopt_long(argc, argv, shortopts, lo, &li)) != -1) {
        if (parse_long_exact(argv, lo, li)) bench_refuse("write --%s out in full (an abbreviation of it was given)", lo[li].name);
        switch (c) {
        case 'b': sizes_set = 1; if (parse_size(optarg, 4, (size_t)16 << 30, &o->min_bytes)) bench_refuse("-b: not a size of at least 4 bytes (like 4K, 16M): '%s'", optarg); break;
        case 'e': sizes_set = 1; if (parse_size(optarg, 4, (size_t)16 << 30, &o->max_bytes)) bench_refuse("-e: not a size of at least 4 bytes (like 4K, 16M): '%s'", optarg); break;
        /* (1, 1024]: the double just above 1 is the lower bound */
        case 'f': if (parse_double(optarg, nextafter(1.0, 2.0), 1024, &o->factor)) bench_refuse("-f: step factor must be a number in (1, 1024]: '%s'", optarg); break;
        case 'n': if (parse_int(optarg, 1, 1000000, &o->iters)) bench_refuse("-n: iterations must be an integer in 1..1000000: '%s'", optarg); break;
        case 'w': if (parse_int(optarg, 0, 1000000, &o->warmup)) bench_refuse("-w: warm-up iterations must be an integer in 0..1000000: '%s'", optarg); break;
        case OPT_CSV: {
            int r = parse_path(optarg, o->csv, sizeof o->csv);
            if (r == -1) bench_refuse("--csv needs a path: got '%s'", optarg);
            if (r == -2) bench_refuse("--csv: path too long: '%s'", optarg);
            break;
        }
        case OPT_COMPUTE_US: if (parse_int(optarg, 0, 10000000, &o->compute_us)) bench_refuse("--compute-us must be an integer in 0..10000000: '%s'", optarg); break;
        case OPT_COMPUTE: {
            char err[512];
            if (train_step_parse(optarg, &o->step, err, sizeof err)) bench_refuse("%s", err);
            o->compute_mlp = 1;
            break;
        }
        case OPT_CHECK_OPTIONS: break;   /* bench_init saw it before MPI_Init */
        case 'h':
            if (my_rank == 0) usage(&defaults);
            if (!check_only) MPI_Finalize();
            exit(0);
        case ':': bench_refuse(me->missing_fmt, parse_bad_option(argv, lo)); break;
        case '?': bench_refuse(me->unknown_fmt, parse_bad_option(argv, lo)); break;
        default: me->flag(me->own, c, optarg); break;
        }
    }
    if (optind < argc) bench_refuse(me->extra_fmt, argv[optind]);
    if (o->compute_mlp && o->compute_us) bench_refuse("--compute and --compute-us are alternatives: give one%s", "");
    if (o->compute_mlp && sizes_set) bench_refuse("--compute times the model's own gradient: leave out -b and -e%s", "");
    if (o->compute_mlp) o->min_bytes = o->max_bytes = 4 * mlp_count_params(o->step.sizes, o->step.nsizes);
    if (o->min_bytes > o->max_bytes) bench_refuse("-b is larger than -e%s", "");
    if (me->check) me->check(me->own, o, nranks);
}

void bench_init(bench_opts_t *o, const bench_spec_t *spec, int argc, char **argv, int *rank, int *nranks) {
    me = spec;
    /* --check-options: the launcher validates once, so a bad flag is not reported by every rank */
    for (int i = 1; i < argc; i++) check_only |= !strcmp(argv[i], "--check-options");
    if (check_only) {
        parse(o, argc, argv, 0);
        exit(0);
    }
    /* the --compute step runs OpenBLAS as psring-train does: the same kernels, one thread (may
     * re-exec this process, so before MPI starts) */
    blas_setup(argc, argv, 1, NULL, 0);
    mpiCheck(MPI_Init(&argc, &argv));
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, nranks));
    my_rank = *rank;
    psring_log_rank = *rank;
    parse(o, argc, argv, *nranks);
}

int bench_paced(const bench_opts_t *o) { return o->compute_us > 0 || o->compute_mlp; }

int bench_size_next(const bench_opts_t *o, bench_size_t *s) {
    s->at = s->at > 0 ? s->at * o->factor : (double)o->min_bytes;
    if (!(s->at <= (double)o->max_bytes * (1 + 1e-9))) return 0;
    s->count = (size_t)s->at / sizeof(float);
    s->bytes = s->count * sizeof(float);
    return 1;
}

void bench_time(const bench_opts_t *o, const bench_impls_t *im, double *tsum) {
    for (int k = 0; k < im->nimpl; k++) {
        tsum[k] = 0;
        for (int i = 0; i < o->warmup; i++) im->warm(im->self, k);
    }
    int blocks = o->iters < BENCH_BLOCKS ? o->iters : BENCH_BLOCKS;
    for (int b = 0; b < blocks; b++) {
        int n = o->iters / blocks + (b < o->iters % blocks);
        for (int k = 0; k < im->nimpl; k++) tsum[k] += im->timed(im->self, k, n);
    }
}

void bench_row_header(void) {
    printf("# %12s %12s %10s %12s %12s %12s %8s\n", "size", "count", "impl", "time_us", "algbw_GBps", "busbw_GBps", "wrong");
    fflush(stdout);
}

void bench_row(FILE *csv, size_t bytes, size_t count, const char *name, double tmax, long wrong, int nranks,
               int chunk_kb) {
    double algbw = tmax > 0 ? (double)bytes / tmax / 1e9 : 0;
    double busbw = algbw * 2.0 * (nranks - 1) / nranks;
    char wbuf[32];
    if (wrong < 0) snprintf(wbuf, sizeof wbuf, "N/A"); else snprintf(wbuf, sizeof wbuf, "%ld", wrong);
    printf("  %12zu %12zu %10s %12.1f %12.3f %12.3f %8s\n", bytes, count, name, tmax * 1e6, algbw, busbw, wbuf);
    fflush(stdout);
    if (csv) fprintf(csv, "%zu,%zu,%s,%.3f,%.4f,%.4f,%ld,%d,%d\n", bytes, count, name, tmax * 1e6, algbw, busbw, wrong, nranks, chunk_kb);
}

FILE *bench_csv_open(const bench_opts_t *o, const char *header, int append) {
    if (!o->csv[0]) return NULL;
    int fresh = !append || access(o->csv, F_OK) != 0;
    FILE *f = fopen(o->csv, append ? "a" : "w");
    if (!f) {
        fprintf(stderr, "%s: --csv %s: %s\n", me->prog, o->csv, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
    }
    if (fresh) fprintf(f, "%s\n", header);
    return f;
}

int bench_csv_close(const bench_opts_t *o, FILE *csv) {
    if (!csv) return 0;
    /* a write that failed at an earlier flush (a full disk) shows in ferror, not in fclose */
    int lost = ferror(csv);
    if (fclose(csv) == 0 && !lost) return 0;
    fprintf(stderr, "%s: --csv %s: %s\n", me->prog, o->csv, lost && !errno ? "a write failed" : strerror(errno));
    return -1;
}
