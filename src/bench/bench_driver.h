/* bench_driver.h: what psring's MPI benchmarks share, as nccl-tests' common.cu does for its
 * operations: the flags every one of them takes (-b -e -f -n -w --csv --compute-us --compute
 * --check-options --help: parsing, limits, messages and their --help lines), the start (the
 * launcher's --check-options without MPI, OpenBLAS for --compute, MPI_Init), the size sweep, the
 * warm-up and timed-block loop, the nccl-tests row (size count type time algbw busbw #wrong, on
 * stdout and in the CSV) and the --csv file itself.
 * A benchmark (allreduce.c, ps.c) describes itself in a bench_spec_t (its name, its own flags and
 * their help, its checks) and does its own operation per size; a new one does the same.
 * Not here: what is timed, how it is checked, the PS's own columns. */
#ifndef PSRING_BENCH_DRIVER_H
#define PSRING_BENCH_DRIVER_H
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include "train_step.h"

/* the shared flags; a benchmark sets its defaults before bench_init */
typedef struct {
    size_t min_bytes, max_bytes;   /* -b, -e (4 bytes .. 16 GiB); --compute: both the model's gradient */
    double factor;                 /* -f, in (1, 1024] */
    int iters, warmup;             /* -n 1..1000000, -w 0..1000000 */
    int compute_us;                /* --compute-us: CPU work before each timed call (0 = back to back) */
    int compute_mlp;               /* --compute mlp:LAYERS:BATCH given: the real step, as in step */
    train_step_spec_t step;
    char csv[1024];                /* --csv, "" = none */
} bench_opts_t;

/* What a benchmark tells the driver about itself. Own long options use letters or values in
 * 256..BENCH_OPT_BASE-1; the driver's own are at BENCH_OPT_BASE and above. */
#define BENCH_OPT_BASE 0x1000
typedef struct {
    const char *prog;          /* its name: the first word of every refusal */
    const char *synopsis;      /* --help's first line, after "usage: " */
    const char *help;          /* --help lines of its own flags, printed after -w's */
    const char *help_csv;      /* who writes the CSV and how, for --csv's line: "rank 0" */
    const char *help_pacing;   /* the --compute-us and --compute lines: what they time here */
    /* the refusals getopt's verdicts lead to, in this program's words (one %s: the option, or the
     * stray argument), and what ends every refusal ("" or the usage line) */
    const char *unknown_fmt, *missing_fmt, *extra_fmt, *tail;
    const char *shortopts;           /* its own short options, getopt style ("c:") */
    const struct option *longopts;   /* its own long options, ended by {0} */
    /* one of its own options (c as getopt_long returned it); refuses with bench_refuse */
    void (*flag)(void *own, int c, const char *arg);
    /* after every flag and the shared checks; nranks is 0 under --check-options (no MPI) */
    void (*check)(void *own, const bench_opts_t *o, int nranks);
    void *own;                 /* what flag and check fill in */
} bench_spec_t;

/* main's start. With --check-options anywhere: parse and validate in this one process, MPI never
 * started, and exit 0 (or 2 with the refusal), so that the launcher reports a bad flag once.
 * Else OpenBLAS as psring-train sets it up for --compute (one thread; may re-exec, so before MPI),
 * MPI_Init, and the parse on every rank (they all reach the same verdict; rank 0 says it). o holds
 * the benchmark's defaults on entry. */
void bench_init(bench_opts_t *o, const bench_spec_t *spec, int argc, char **argv, int *rank, int *nranks);

/* one line "<prog>: <fmt with arg><tail>" from rank 0, MPI_Finalize, exit 2 */
void bench_refuse(const char *fmt, const char *arg) __attribute__((noreturn));

/* --compute-us or --compute: each rank works before each timed call and times the calls alone */
int bench_paced(const bench_opts_t *o);

/* The sweep -b, -b x f, ... up to -e (a size within 1e-9 of -e counts), count = bytes / 4:
 *   for (bench_size_t s = {0}; bench_size_next(o, &s);) ... s.bytes, s.count ...
 * s = {0} is before the first size; 0 past the last. */
typedef struct {
    double at;
    size_t bytes, count;
} bench_size_t;
int bench_size_next(const bench_opts_t *o, bench_size_t *s);

/* Up to BENCH_BLOCKS blocks of timed calls, the implementations taking turns block by block, so
 * that load from other processes on a shared machine falls on all of them alike. */
#define BENCH_BLOCKS 5
typedef struct {
    int nimpl;
    void (*warm)(void *self, int k);             /* one untimed call of implementation k */
    double (*timed)(void *self, int k, int n);   /* n timed calls of k (a barrier first): seconds */
    void *self;
} bench_impls_t;
/* -w untimed calls of each implementation, then -n timed ones in blocks; tsum[k] (nimpl of them,
 * zeroed here): the seconds of implementation k on this rank */
void bench_time(const bench_opts_t *o, const bench_impls_t *im, double *tsum);

/* The collectives' row, nccl-tests style: algbw = bytes / tmax, busbw = algbw x 2(N-1)/N; wrong
 * < 0: not checked (N/A). bench_row_header prints the table's header (the caller's rank 0),
 * bench_row one row on stdout and (csv not NULL) in the CSV opened with BENCH_ROW_CSV. */
#define BENCH_ROW_CSV "size,count,impl,time_us,algbw_GBps,busbw_GBps,wrong,nranks,chunk_kb"
void bench_row_header(void);
void bench_row(FILE *csv, size_t bytes, size_t count, const char *name, double tmax, long wrong, int nranks,
               int chunk_kb);

/* The --csv file (call on the one rank that writes it; NULL without --csv): header is written
 * to a new file, append 0 starts it anew. Cannot open: one line, MPI_Abort with exit 2. */
FILE *bench_csv_open(const bench_opts_t *o, const char *header, int append);
/* closes it (NULL: nothing); 0, or -1 after one line naming the error */
int bench_csv_close(const bench_opts_t *o, FILE *csv);

#endif
