/* gemm.c: psring-bench-gemm, the GEMM-only bound of a training step.
 * Times exactly the cblas_sgemm calls one training step of an MLP makes (per layer: forward
 * B x OUT x IN, weight gradient OUT x IN x B, input gradient B x IN x OUT for all but the first
 * layer) on random buffers and nothing else, so a trainer can be judged as a fraction of it.
 * With --matmul M,N,K it times one C(M,N) = A(M,K) B(K,N) shape instead, to compare OpenBLAS
 * kernels (run with PSRING_NO_BLAS_FIX=1 to see what OpenBLAS picks by itself).
 * Deliberately not here: bias, activations, loss, optimizer, data (that is the trainer's cost). */
#include "config.h"
#include "common/parse.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/timer.h"
#include "model/blas.h"
#include "model/mlp.h"
#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the flags; gemm_defaults is the one home of their defaults, which usage prints */
typedef struct {
    char layers[256];
    int batch, threads, matmul, mnk[3];
    double seconds;
    long steps;                       /* 0: run for seconds */
} gemm_opts_t;

static const gemm_opts_t gemm_defaults = { .layers = "784,256,10", .batch = 64, .threads = 1, .seconds = 3.0 };

static void usage(FILE *f) {
    const gemm_opts_t *d = &gemm_defaults;
    fprintf(f,
            "usage: psring-bench-gemm [--layers %s] [--batch %d] [--seconds %g | --steps N]\n"
            "                         [--threads %d] [--matmul M,N,K]\n"
            "Times the SGEMM calls of one MLP training step (the GEMM-only bound) or one shape.\n",
            d->layers, d->batch, d->seconds, d->threads);
}

/* a whole-number flag's value, or exit 2 with one line */
static long long_flag(const char *flag, const char *s, long lo, long hi) {
    long v;
    if (parse_long(s, lo, hi, &v)) die_input("%s: '%s' is not a whole number in %ld..%ld", flag, s, lo, hi);
    return v;
}

static float *random_floats(rng_t *r, size_t n) {
    float *p = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = rng_float(r) - 0.5f;
    return p;
}

/* one GEMM call, C(M,N) = alpha A B + beta C, row-major, with given transposes */
typedef struct {
    CBLAS_TRANSPOSE ta, tb;
    int M, N, K;
    float beta;
    float *a, *b, *c;
} call_t;

static void call_run(const call_t *c) {
    int lda = c->ta == CblasNoTrans ? c->K : c->M;
    int ldb = c->tb == CblasNoTrans ? c->N : c->K;
    cblas_sgemm(CblasRowMajor, c->ta, c->tb, c->M, c->N, c->K, 1.0f, c->a, lda, c->b, ldb,
                c->beta, c->c, c->N);
}

static void call_make(call_t *c, rng_t *r, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N,
                      int K, float beta) {
    c->ta = ta; c->tb = tb; c->M = M; c->N = N; c->K = K; c->beta = beta;
    c->a = random_floats(r, (size_t)M * K);
    c->b = random_floats(r, (size_t)K * N);
    c->c = random_floats(r, (size_t)M * N);
}

/* runs the calls for `seconds` (or `steps` when > 0) after a warm-up; returns seconds per step */
static double time_calls(const call_t *calls, int n, double seconds, long steps, long *done) {
    for (int w = 0; w < 20; w++)
        for (int i = 0; i < n; i++) call_run(&calls[i]);
    long k = 0;
    double t0 = timer_now(), t;
    for (;;) {
        for (int rep = 0; rep < 10 && (steps <= 0 || k < steps); rep++, k++)
            for (int i = 0; i < n; i++) call_run(&calls[i]);
        t = timer_now() - t0;
        if (steps > 0 ? k >= steps : t >= seconds) break;
    }
    *done = k;
    return t / (double)k;
}

/* --matmul M,N,K: three whole numbers in 1..65536, or exit 2 */
static void parse_matmul(const char *arg, int mnk[3]) {
    const char *p = arg;
    char *end;
    for (int i = 0; i < 3; i++) {
        long v;
        if (parse_long_at(p, &end, 1, 1 << 16, &v) || (i < 2 ? *end != ',' : *end != '\0'))
            die_input("--matmul: '%s' is not M,N,K (three whole numbers in 1..65536)", arg);
        mnk[i] = (int)v;
        p = end + 1;
    }
}

/* the command line into g (at gemm_defaults on entry); 1 after --help, bad input exits 2 */
static int parse_flags(int argc, char **argv, gemm_opts_t *g) {
    static const struct option opts[] = {
        {"layers", required_argument, 0, 'l'}, {"batch", required_argument, 0, 'b'},
        {"seconds", required_argument, 0, 's'}, {"steps", required_argument, 0, 'n'},
        {"threads", required_argument, 0, 't'}, {"matmul", required_argument, 0, 'm'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    opterr = 0;  /* one line of our own instead of getopt's plus the usage */
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
            if (strlen(optarg) >= sizeof g->layers) die_input("--layers: too long");
            strcpy(g->layers, optarg);
            break;
        case 'b': g->batch = (int)long_flag("--batch", optarg, 1, 1 << 20); break;
        case 's':   /* (0, 3600]: the smallest double above 0 is the lower bound */
            if (parse_double(optarg, nextafter(0.0, 1.0), 3600.0, &g->seconds))
                die_input("--seconds: '%s' is not a number of seconds in (0, 3600]", optarg);
            break;
        case 'n': g->steps = long_flag("--steps", optarg, 1, 1L << 40); break;
        case 't': g->threads = (int)long_flag("--threads", optarg, 1, 1024); break;
        case 'm': parse_matmul(optarg, g->mnk); g->matmul = 1; break;
        case 'h': usage(stdout); return 1;
        case ':': die_input("%s needs a value (see --help)", parse_bad_option(argv, opts));
        default: die_input("unknown option '%s' (see --help)", parse_bad_option(argv, opts));
        }
    }
    if (optind < argc) die_input("unexpected argument '%s' (see --help)", argv[optind]);
    return 0;
}

/* the calls to time into calls (3 x MLP_MAX_SIZES at most): --matmul's one, or the same calls,
 * shapes and transposes as linear_forward / linear_backward; their FLOPs in *flops */
static int make_calls(const gemm_opts_t *g, rng_t *r, call_t *calls, double *flops) {
    int ncalls = 0;
    *flops = 0.0;
    if (g->matmul) {
        call_make(&calls[ncalls++], r, CblasNoTrans, CblasNoTrans, g->mnk[0], g->mnk[1], g->mnk[2], 0.0f);
        *flops = 2.0 * g->mnk[0] * g->mnk[1] * g->mnk[2];
        return ncalls;
    }
    int sizes[MLP_MAX_SIZES];
    char err[256];
    int ns = mlp_parse_layers(g->layers, sizes, MLP_MAX_SIZES, err, sizeof err);
    if (ns < 0) die_input("%s", err);
    for (int l = 0; l + 1 < ns; l++) {
        int IN = sizes[l], OUT = sizes[l + 1], B = g->batch;
        call_make(&calls[ncalls++], r, CblasNoTrans, CblasTrans, B, OUT, IN, 1.0f);
        call_make(&calls[ncalls++], r, CblasTrans, CblasNoTrans, OUT, IN, B, 1.0f);
        *flops += 4.0 * B * IN * OUT;
        if (l > 0) {
            call_make(&calls[ncalls++], r, CblasNoTrans, CblasNoTrans, B, IN, OUT, 0.0f);
            *flops += 2.0 * B * IN * OUT;
        }
    }
    return ncalls;
}

/* the result lines: per is seconds per step (or call), done how many ran */
static void report(const gemm_opts_t *g, int ncalls, double flops, double per, long done) {
    if (g->matmul) {
        printf("matmul %dx%dx%d threads %d core %s: %.1f GFLOP/s (%.2f us per call, %ld calls)\n",
               g->mnk[0], g->mnk[1], g->mnk[2], g->threads, blas_corename(), flops / per * 1e-9, per * 1e6, done);
        printf("gflops %.2f\n", flops / per * 1e-9);
    } else {
        printf("gemm bound: layers %s batch %d threads %d core %s: %d SGEMM calls per step, "
               "%.2f us per step, %.1f GFLOP/s (%ld steps)\n",
               g->layers, g->batch, g->threads, blas_corename(), ncalls, per * 1e6, flops / per * 1e-9, done);
        printf("gemm_bound_samples_per_s %.0f\n", g->batch / per);
        printf("gflops %.2f\n", flops / per * 1e-9);
    }
    printf("core %s\n", blas_corename());
}

int main(int argc, char **argv) {
    char blas_log[512];
    blas_setup(argc, argv, 1, blas_log, sizeof blas_log);  /* threads re-pinned below */
    gemm_opts_t g = gemm_defaults;
    if (parse_flags(argc, argv, &g)) return 0;
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
    openblas_set_num_threads(g.threads);
#endif
    if (blas_log[0]) printf("%s\n", blas_log);
    rng_t r;
    rng_init(&r, 1234, 0);
    call_t calls[3 * MLP_MAX_SIZES];
    double flops;
    int ncalls = make_calls(&g, &r, calls, &flops);
    long done;
    double per = time_calls(calls, ncalls, g.seconds, g.steps, &done);
    report(&g, ncalls, flops, per, done);
    for (int i = 0; i < ncalls; i++) { free(calls[i].a); free(calls[i].b); free(calls[i].c); }
    return 0;
}
