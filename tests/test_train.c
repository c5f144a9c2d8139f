/* test_train.c: Check suites for the trainer's own pieces: options (every bad value rejected with
 * code 2 and a message naming the flag), the number parser under them and every program's flags
 * (src/common/parse.h: suffixes, overflow, negative, junk, empty), the results CSV (quoting,
 * header once, foreign header refused) and checkpoints (round trip, corruption, truncation, wrong
 * model). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "train/options.h"
#include "train/topology_list.h"
#include "train/metrics.h"
#include "train/checkpoint.h"
#include "common/parse.h"
#include "unit.h"
#include <limits.h>
#include <math.h>

/* runs options_parse on a space-separated command line; --data (the test's unit_dir: it must exist)
 * is prepended */
static int parse_line(options_t *o, const char *line, char *err, size_t errlen) {
    char buf[1024];
    snprintf(buf, sizeof buf, "psring-train --data %s %s", unit_dir, line);
    char *argv[64];
    int argc = 0;
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    return options_parse(o, argc, argv, err, errlen);
}

static const struct { const char *line; const char *needle; } bad_options[] = {
    {"--batch -3", "--batch"},
    {"--batch 0", "--batch"},
    {"--batch abc", "--batch"},
    {"--epochs 0", "--epochs"},
    {"--lr -1", "--lr"},
    {"--lr nan", "--lr"},
    {"--momentum 1.5", "--momentum"},
    {"--layers 700,10", "784"},
    {"--layers 784,256,9", "10"},
    {"--layers 784", "--layers"},
    {"--layers 784,x,10", "--layers"},
    {"--topology star", "--topology"},
    {"--sync maybe --topology ps", "--sync"},
    {"--allreduce nccl2 --topology ring", "--allreduce"},
    {"--frobnicate", "frobnicate"},
    {"--scaling medium", "--scaling"},
    {"--seed -1", "--seed"},
    {"--transport udp --topology ps", "--transport"},
    {"--servers 0 --topology ps", "--servers"},
    {"--overlap", "--overlap"},
    {"--sync async", "--sync"},
    {"--fp16", "--fp16"},
    {"--resume /nonexistent/ckpt", "--resume"},
    {"--slow-ms 5", "--slow-rank"},
    {"stray", "stray"},
    {"--batch", "--batch"},
    {"--optimizer adam --momentum 0.5", "--momentum"},
};

START_TEST(test_options_bad) {
    options_t o;
    char err[512] = "";
    int rc = parse_line(&o, bad_options[_i].line, err, sizeof err);
    ck_assert_msg(rc == 2, "'%s' gave %d, expected 2", bad_options[_i].line, rc);
    ck_assert_msg(strstr(err, bad_options[_i].needle) != NULL, "'%s': message '%s' does not name '%s'",
                  bad_options[_i].line, err, bad_options[_i].needle);
    ck_assert_msg(strchr(err, '\n') == NULL, "error must be one line: '%s'", err);
}
END_TEST

/* a topology's flag as its table stored it in the options' topology config */
static int topo_int(const options_t *o, const char *flag) {
    const opttab_row_t *row = topology_flag(o->topology, flag);
    ck_assert_msg(row != NULL, "--topology %s has no --%s", o->topology->name, flag);
    return *(const int *)(o->topo_cfg + row->offset);
}

START_TEST(test_options_good) {
    options_t o;
    char err[512] = "";
    ck_assert_int_eq(parse_line(&o, "", err, sizeof err), 0);
    ck_assert_str_eq(o.topology->name, "local");
    ck_assert_int_eq(o.nsizes, 4);
    ck_assert_int_eq(o.sizes[1], 512);
    ck_assert_int_eq(o.batch, 64);
    ck_assert_int_eq(parse_line(&o, "--topology ps --servers 2 --sync ssp --staleness 3 --layers 784,128,10 --batch 32 "
                                    "--lr 0.1 --fp16 --transport ipc", err, sizeof err), 0);
    ck_assert_str_eq(o.topology->name, "ps");
    ck_assert_int_eq(topo_int(&o, "servers"), 2);
    ck_assert_int_eq(topo_int(&o, "sync"), 2);        /* the index of ssp in bsp|async|ssp */
    ck_assert_int_eq(topo_int(&o, "staleness"), 3);
    ck_assert_int_eq(o.nsizes, 3);
    ck_assert_int_eq(o.batch, 32);
    ck_assert_float_eq_tol(o.lr, 0.1f, 1e-7f);
    ck_assert_int_eq(topo_int(&o, "fp16"), 1);
    ck_assert_int_eq(topo_int(&o, "transport"), 1);   /* ipc */
    /* the topology's flags start from its defaults whatever the order on the command line */
    ck_assert_int_eq(parse_line(&o, "--chunk-kb 64 --topology ring", err, sizeof err), 0);
    ck_assert_int_eq(topo_int(&o, "chunk-kb"), 64);
    ck_assert_int_eq(topo_int(&o, "fp16"), 0);
}
END_TEST

/* a flag of another topology names the ones that have it; every topology's flags are in --help */
START_TEST(test_options_topology_flags) {
    options_t o;
    char err[512] = "";
    ck_assert_int_eq(parse_line(&o, "--topology ring --servers 2", err, sizeof err), 2);
    ck_assert_str_eq(err, "--servers applies to --topology ps only");
    ck_assert_int_eq(parse_line(&o, "--fp16", err, sizeof err), 2);
    ck_assert_str_eq(err, "--fp16 applies to --topology ring or ps only");
    ck_assert_int_eq(parse_line(&o, "--topology ps --hierarchical", err, sizeof err), 2);
    ck_assert_str_eq(err, "--hierarchical applies to --topology ring only");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    options_usage(f);
    fclose(f);
    for (int i = 0; topology_list[i]; i++) {
        const opttab_t *t = &topology_list[i]->flags;
        for (size_t r = 0; r < t->n; r++) {
            if (t->rows[r].kind == OPTTAB_SECTION) {
                ck_assert_msg(strstr(text, t->rows[r].help) != NULL, "--help lacks '%s'", t->rows[r].help);
                continue;
            }
            char want[64];
            snprintf(want, sizeof want, "  --%s", t->rows[r].flag);
            ck_assert_msg(t->rows[r].usage == NULL || strstr(text, want), "--help lacks %s", want);
        }
    }
    free(text);
}
END_TEST

/* --describe: what the launcher reads, from the topology's descriptor */
static const struct { const char *line; const char *want; } describe_cases[] = {
    {"--describe", "topology=local\ndirect=1\nservers=0\ncluster_bind=0\npeer_timeout=0\nrecovery=0\n"},
    {"--describe --topology ring", "topology=ring\ndirect=0\nservers=0\ncluster_bind=0\npeer_timeout=0\nrecovery=0\n"},
    {"--describe --topology ps --servers 3 --sync async", "topology=ps\ndirect=0\nservers=3\ncluster_bind=1\npeer_timeout=10\nrecovery=1\n"},
    {"--describe --topology ps --bind 10.0.0.1 --peer-timeout 4", "topology=ps\ndirect=0\nservers=1\ncluster_bind=0\npeer_timeout=0\nrecovery=0\n"},
    {"--describe --describe-workers 1", "topology=local\ndirect=1\nservers=0\ncluster_bind=0\npeer_timeout=0\nrecovery=0\n"
     "processes=1\nhosts=1\nlayout=one process\nargs=\n"},
    /* the servers --byteps implies are the ones the launch is told of */
    {"--describe --describe-workers 8 --topology ps --byteps 2", "topology=ps\ndirect=0\nservers=10\ncluster_bind=1\npeer_timeout=10\nrecovery=0\n"
     "processes=18\nhosts=10\nlayout=8 workers beside 8 servers, 2 more on hosts of their own\nargs=--servers 10\n"},
};

START_TEST(test_options_describe) {
    options_t o;
    char err[512] = "";
    ck_assert_int_eq(parse_line(&o, describe_cases[_i].line, err, sizeof err), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    options_describe(&o, f);
    fclose(f);
    ck_assert_msg(!strncmp(text, describe_cases[_i].want, strlen(describe_cases[_i].want)), "'%s' described as\n%s",
                  describe_cases[_i].line, text);
    ck_assert_ptr_nonnull(strstr(text, "\ntopologies=local ring ps"));
    free(text);
}
END_TEST

/* --describe-np: the process counts a topology cannot run on, refused by the topology */
START_TEST(test_options_describe_np) {
    options_t o;
    char err[512] = "";
    ck_assert_int_eq(parse_line(&o, "--describe --describe-np 2", err, sizeof err), 2);
    ck_assert_ptr_nonnull(strstr(err, "runs one process"));
    ck_assert_int_eq(parse_line(&o, "--describe --describe-np 2 --topology ps --servers 2", err, sizeof err), 2);
    ck_assert_ptr_nonnull(strstr(err, "leaves no worker"));
    ck_assert_int_eq(parse_line(&o, "--describe --describe-np 3 --topology ps --servers 2", err, sizeof err), 0);
    ck_assert_int_eq(parse_line(&o, "--describe-np 3", err, sizeof err), 2);
}
END_TEST

/* --describe-workers N: the processes and hosts of each layout (servers are ranks 0..S-1, dealt
 * round robin over the hosts): the ring one worker per host; ps-lite's servers on hosts of their
 * own; BytePS' (--byteps K) a server beside each worker plus K alone, --servers N+K implied */
static const struct { const char *line; int processes, hosts; const char *args; } layouts[] = {
    {"--topology ring --describe-workers 2", 2, 2, ""},
    {"--topology ring --describe-workers 4", 4, 4, ""},
    {"--topology ring --describe-workers 8", 8, 8, ""},
    {"--topology ps --describe-workers 2", 3, 3, ""},
    {"--topology ps --servers 2 --describe-workers 4", 6, 6, ""},
    {"--topology ps --servers 3 --describe-workers 8", 11, 11, ""},
    {"--topology ps --byteps 0 --describe-workers 2", 4, 2, "--servers 2"},
    {"--topology ps --byteps 1 --describe-workers 2", 5, 3, "--servers 3"},
    {"--topology ps --byteps 2 --describe-workers 2", 6, 4, "--servers 4"},
    {"--topology ps --byteps 0 --describe-workers 4", 8, 4, "--servers 4"},
    {"--topology ps --byteps 1 --describe-workers 4", 9, 5, "--servers 5"},
    {"--topology ps --byteps 2 --describe-workers 4", 10, 6, "--servers 6"},
    {"--topology ps --byteps 0 --describe-workers 8", 16, 8, "--servers 8"},
    {"--topology ps --byteps 1 --describe-workers 8", 17, 9, "--servers 9"},
    {"--topology ps --byteps 2 --describe-workers 8", 18, 10, "--servers 10"},
    {"--topology ps --byteps 2 --servers 10 --describe-workers 8", 18, 10, ""},   /* given as implied: nothing to add */
};

START_TEST(test_options_describe_workers) {
    options_t o;
    char err[512] = "", line[256];
    snprintf(line, sizeof line, "--describe %s", layouts[_i].line);
    ck_assert_msg(parse_line(&o, line, err, sizeof err) == 0, "%s: %s", line, err);
    ck_assert_msg(o.layout.processes == layouts[_i].processes && o.layout.hosts == layouts[_i].hosts,
                  "%s: %d processes on %d hosts", line, o.layout.processes, o.layout.hosts);
    ck_assert_str_eq(o.layout.args, layouts[_i].args);
}
END_TEST

/* what no layout can hold, or a --servers the placement contradicts: one line naming the flags */
static const struct { const char *line; const char *want; } bad_layouts[] = {
    {"--describe --describe-workers 2", "--topology local runs one worker: drop --workers 2 or pick another topology"},
    {"--describe --describe-workers 8 --topology ps --byteps 2 --servers 9",
     "--servers 9 contradicts --byteps 2 with --workers 8: the placement needs --servers 10 (or leave --servers out)"},
    {"--describe --topology ps --byteps 2", "--byteps 2 needs --servers N+2 for N workers (psring train --workers N implies it)"},
    {"--describe --describe-workers 2 --describe-np 4 --topology ring", "give --describe-np or --describe-workers, not both"},
    {"--describe-workers 2 --topology ring", "--describe-workers goes with --describe"},
    {"--describe --describe-workers 0 --topology ring", "--describe-workers must be an integer in 1..999999: got '0'"},
};

START_TEST(test_options_describe_workers_bad) {
    options_t o;
    char err[512] = "";
    ck_assert_int_eq(parse_line(&o, bad_layouts[_i].line, err, sizeof err), 2);
    ck_assert_str_eq(err, bad_layouts[_i].want);
}
END_TEST

/* without --lr each optimizer starts from its own default; a given --lr wins in any order */
static const struct { const char *line; float lr; } lr_defaults[] = {
    {"", 0.02f},
    {"--optimizer sgd", 0.02f},
    {"--optimizer adam", 0.001f},
    {"--optimizer lars", 1.0f},
    {"--optimizer adam --lr 0.05", 0.05f},
    {"--lr 0.3 --optimizer adam", 0.3f},
    {"--lr 0.01 --optimizer lars", 0.01f},
};

START_TEST(test_options_lr_default) {
    options_t o;
    char err[512] = "";
    ck_assert_msg(parse_line(&o, lr_defaults[_i].line, err, sizeof err) == 0, "'%s': %s", lr_defaults[_i].line, err);
    ck_assert_msg(o.lr == lr_defaults[_i].lr, "'%s': lr %g, expected %g", lr_defaults[_i].line, o.lr, lr_defaults[_i].lr);
    ck_assert_msg(options_optim_config(&o).lr == lr_defaults[_i].lr, "'%s': the optimizer got another lr", lr_defaults[_i].line);
}
END_TEST

START_TEST(test_options_missing_data) {
    options_t o;
    char err[512] = "";
    char *argv[] = {"psring-train", "--data", "/nonexistent/mnist", NULL};
    ck_assert_int_eq(options_parse(&o, 3, argv, err, sizeof err), 2);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/mnist"));
}
END_TEST

START_TEST(test_options_fingerprint) {
    options_t a, b;
    char err[512];
    ck_assert_int_eq(parse_line(&a, "--layers 784,128,10 --batch 32", err, sizeof err), 0);
    ck_assert_int_eq(parse_line(&b, "--layers 784,128,10 --batch 32 --quiet --csv x.csv", err, sizeof err), 0);
    ck_assert_msg(options_fingerprint(&a) == options_fingerprint(&b), "per-rank options must not change the fingerprint");
    ck_assert_int_eq(parse_line(&b, "--layers 784,256,10 --batch 32", err, sizeof err), 0);
    ck_assert(options_fingerprint(&a) != options_fingerprint(&b));
    ck_assert_int_eq(parse_line(&b, "--layers 784,128,10 --batch 32 --seed 7", err, sizeof err), 0);
    ck_assert(options_fingerprint(&a) != options_fingerprint(&b));
}
END_TEST

/* ---- metrics CSV ------------------------------------------------------------------------------ */

START_TEST(test_metrics_quote) {
    char out[64];
    metrics_quote(out, sizeof out, "plain");
    ck_assert_str_eq(out, "plain");
    metrics_quote(out, sizeof out, "784,256,10");
    ck_assert_str_eq(out, "\"784,256,10\"");
    metrics_quote(out, sizeof out, "say \"hi\"");
    ck_assert_str_eq(out, "\"say \"\"hi\"\"\"");
    metrics_quote(out, sizeof out, "");
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_metrics_append) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/r.csv", unit_dir);
    metrics_row_t r;
    metrics_row_init(&r);
    static const char *const mine[] = {"ring_path", "servers", NULL}, *const again[] = {"servers", "extra", NULL};
    metrics_add_columns(&r, mine);
    metrics_add_columns(&r, again);   /* a column two topologies share is one column */
    int base = 0;
    while (metrics_columns[base]) base++;
    ck_assert_int_eq(r.n, base + 3);
    ck_assert_str_eq(r.names[base + 2], "extra");
    metrics_set(&r, "topology", "ring");
    metrics_set(&r, "servers", "2");
    metrics_set(&r, "layers", "%s", "784,256,10");
    metrics_set(&r, "workers", "%d", 4);
    ck_assert_int_eq(metrics_append(path, &r, err, sizeof err), 0);
    ck_assert_int_eq(metrics_append(path, &r, err, sizeof err), 0);
    FILE *f = fopen(path, "r");
    char line[4096];
    int lines = 0, headers = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        if (!strncmp(line, "topology,", 9)) headers++;
        else {
            ck_assert_ptr_nonnull(strstr(line, "ring,"));
            ck_assert_ptr_nonnull(strstr(line, ",\"784,256,10\","));
            /* as many fields as columns: count commas outside quotes */
            int commas = 0, inq = 0;
            for (char *p = line; *p; p++) { if (*p == '"') inq = !inq; else if (*p == ',' && !inq) commas++; }
            ck_assert_int_eq(commas, r.n - 1);
        }
    }
    fclose(f);
    ck_assert_int_eq(lines, 3);
    ck_assert_int_eq(headers, 1);
    /* a file with another header is refused, not appended to */
    snprintf(path, sizeof path, "%s/other.csv", unit_dir);
    f = fopen(path, "w");
    fputs("a,b,c\n1,2,3\n", f);
    fclose(f);
    ck_assert_int_eq(metrics_append(path, &r, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "different header"));
    struct stat st;
    stat(path, &st);
    ck_assert_int_eq(st.st_size, 12);
}
END_TEST

/* ---- checkpoints ------------------------------------------------------------------------------ */

static checkpoint_header_t header_for(int n) {
    checkpoint_header_t h = {0};
    h.nsizes = 3;
    h.sizes[0] = 784; h.sizes[1] = 16; h.sizes[2] = 10;
    h.nparams = (uint64_t)n;
    h.state_per_param = 1;
    h.step = 1234; h.epoch = 3; h.batch_in_epoch = 17; h.seed = 99;
    h.sampler = 1; h.workers = 4; h.batch = 16; h.drop_last = 0; h.train_count = 60000;
    return h;
}

START_TEST(test_checkpoint_roundtrip) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/ck.bin", unit_dir);
    int n = 12730;
    float *p = malloc(sizeof(float) * n), *s = malloc(sizeof(float) * n);
    float *p2 = calloc(n, sizeof(float)), *s2 = calloc(n, sizeof(float));
    for (int i = 0; i < n; i++) { p[i] = (float)i * 0.001f - 3; s[i] = (float)(i % 97) * -0.5f; }
    checkpoint_header_t h = header_for(n), got;
    ck_assert_int_eq(checkpoint_save(path, &h, p, s, err, sizeof err), 0);
    ck_assert_int_eq(checkpoint_load(path, &h, &got, p2, s2, err, sizeof err), 0);
    ck_assert_int_eq(memcmp(p, p2, sizeof(float) * n), 0);
    ck_assert_int_eq(memcmp(s, s2, sizeof(float) * n), 0);
    ck_assert_int_eq(got.step, 1234);
    ck_assert_int_eq(got.epoch, 3);
    ck_assert_int_eq(got.batch_in_epoch, 17);
    ck_assert_int_eq(got.seed, 99);
    ck_assert_int_eq(got.has_layout, 1);
    ck_assert_int_eq(got.sampler, 1);
    ck_assert_int_eq(got.workers, 4);
    ck_assert_int_eq(got.batch, 16);
    ck_assert_int_eq(got.train_count, 60000);
    /* no temp file left behind */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/ck.bin.tmp.%d", unit_dir, (int)getpid());
    ck_assert_int_ne(access(tmp, F_OK), 0);

    /* a different model is refused, naming the layers */
    checkpoint_header_t other = h;
    other.sizes[1] = 32;
    ck_assert_int_eq(checkpoint_load(path, &other, &got, p2, s2, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "784,16,10"));

    /* one flipped bit anywhere is a CRC error */
    FILE *f = fopen(path, "r+b");
    fseek(f, 5000, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 5000, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
    ck_assert_int_eq(checkpoint_load(path, &h, &got, p2, s2, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "CRC"));

    /* truncated */
    ck_assert_int_eq(checkpoint_save(path, &h, p, s, err, sizeof err), 0);
    ck_assert_int_eq(truncate(path, 100), 0);
    ck_assert_int_eq(checkpoint_load(path, &h, &got, p2, s2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "truncated: 100 bytes, its header says"), "%s", err);
    ck_assert_int_eq(truncate(path, 20), 0);   /* inside the header: the size cannot be read */
    ck_assert_int_eq(checkpoint_load(path, &h, &got, p2, s2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "truncated: 20 bytes"), "%s", err);

    /* not a checkpoint at all */
    f = fopen(path, "w");
    fputs("hello world, definitely not a checkpoint", f);
    fclose(f);
    ck_assert_int_eq(checkpoint_load(path, &h, &got, p2, s2, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "magic"));

    /* unwritable directory: error, and the previous file survives */
    ck_assert_int_eq(checkpoint_save(path, &h, p, s, err, sizeof err), 0);
    snprintf(tmp, sizeof tmp, "%s/missing-dir/ck.bin", unit_dir);
    ck_assert_int_eq(checkpoint_save(tmp, &h, p, s, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "missing-dir"));
    ck_assert_int_eq(checkpoint_load(path, &h, &got, p2, s2, err, sizeof err), 0);
    free(p); free(s); free(p2); free(s2);
}
END_TEST

/* mid-epoch, (epoch, batch) means different samples under another layout: refused, naming each
 * field; at an epoch boundary, or from a file that predates layouts, any layout may continue */
START_TEST(test_checkpoint_layout) {
    char err[512];
    checkpoint_header_t h = header_for(10), now = h;
    h.has_layout = 1;
    ck_assert_int_eq(checkpoint_layout_mismatch("ck", &h, &now, err, sizeof err), 0);
    now.workers = 2; now.batch = 32;
    ck_assert_int_eq(checkpoint_layout_mismatch("ck", &h, &now, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "workers 4 (now 2)"));
    ck_assert_ptr_nonnull(strstr(err, "batch per worker 16 (now 32)"));
    ck_assert_ptr_nonnull(strstr(err, "epoch 4 (batch 17)"));
    now = h; now.sampler = 0; now.train_count = 1000;
    ck_assert_int_eq(checkpoint_layout_mismatch("ck", &h, &now, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--sampler"));
    ck_assert_ptr_nonnull(strstr(err, "training samples 60000 (now 1000)"));
    h.batch_in_epoch = 0;   /* epoch boundary */
    ck_assert_int_eq(checkpoint_layout_mismatch("ck", &h, &now, err, sizeof err), 0);
    h.batch_in_epoch = 17; h.has_layout = 0;   /* a version 2 file */
    ck_assert_int_eq(checkpoint_layout_mismatch("ck", &h, &now, err, sizeof err), 0);
}
END_TEST

/* one number for parse.h's parsers: ok 1 with its value, or ok 0 (refused, *out untouched) */
typedef enum { P_SIZE, P_INT, P_LONG, P_LONG_ANY, P_DOUBLE, P_FLOAT, P_ULL } pkind_t;
static const struct {
    pkind_t kind;
    const char *s;
    int ok;
    double want;
} numbers[] = {
    /* sizes in [4, 16 GiB], the benchmarks' -b/-e: K/M/G are powers of 1024, B optional */
    {P_SIZE, "4", 1, 4}, {P_SIZE, "4K", 1, 4096}, {P_SIZE, "4k", 1, 4096}, {P_SIZE, "4KB", 1, 4096},
    {P_SIZE, "16M", 1, 16 << 20}, {P_SIZE, "1.5G", 1, 1.5 * (1 << 30)}, {P_SIZE, "16G", 1, 16.0 * (1 << 30)},
    {P_SIZE, "64b", 1, 64},
    {P_SIZE, "3", 0, 0}, {P_SIZE, "17G", 0, 0}, {P_SIZE, "1e400", 0, 0}, {P_SIZE, "-4K", 0, 0},
    {P_SIZE, "4Q", 0, 0}, {P_SIZE, "4KK", 0, 0}, {P_SIZE, "K", 0, 0}, {P_SIZE, "", 0, 0},
    {P_SIZE, "nan", 0, 0}, {P_SIZE, "inf", 0, 0},
    /* int in [0, 100] */
    {P_INT, "0", 1, 0}, {P_INT, "42", 1, 42}, {P_INT, "100", 1, 100},
    {P_INT, "-1", 0, 0}, {P_INT, "101", 0, 0}, {P_INT, "99999999999999999999", 0, 0}, {P_INT, "4294967338", 0, 0},
    {P_INT, "4x", 0, 0}, {P_INT, "1.5", 0, 0}, {P_INT, "", 0, 0}, {P_INT, "x", 0, 0},
    /* long in [-10, 2^40] */
    {P_LONG, "-10", 1, -10}, {P_LONG, "1099511627776", 1, 1099511627776.0},
    {P_LONG, "1099511627777", 0, 0}, {P_LONG, "-11", 0, 0}, {P_LONG, "9223372036854775808", 0, 0},
    {P_LONG, "-9223372036854775809", 0, 0}, {P_LONG, "12 ", 0, 0}, {P_LONG, "", 0, 0},
    /* long over its whole range: only errno tells an overflow from LONG_MAX itself */
    {P_LONG_ANY, "9223372036854775807", 1, 9223372036854775807.0}, {P_LONG_ANY, "9223372036854775808", 0, 0},
    {P_LONG_ANY, "-9223372036854775809", 0, 0},
    /* double in (1, 1024]: an open lower bound as nextafter */
    {P_DOUBLE, "2", 1, 2}, {P_DOUBLE, "1.5", 1, 1.5}, {P_DOUBLE, "1024", 1, 1024}, {P_DOUBLE, "1e1", 1, 10},
    {P_DOUBLE, "1", 0, 0}, {P_DOUBLE, "1024.5", 0, 0}, {P_DOUBLE, "-2", 0, 0}, {P_DOUBLE, "1e400", 0, 0},
    {P_DOUBLE, "nan", 0, 0}, {P_DOUBLE, "inf", 0, 0}, {P_DOUBLE, "2x", 0, 0}, {P_DOUBLE, "", 0, 0},
    /* float in [0, 1]: an underflowing value is refused (errno), not read as 0 */
    {P_FLOAT, "0.5", 1, 0.5}, {P_FLOAT, "0", 1, 0}, {P_FLOAT, "1e-400", 0, 0}, {P_FLOAT, "1.01", 0, 0},
    /* unsigned 64-bit in [0, 2^40] (--seed's kind): a digit first, so no "-1" wrapping round */
    {P_ULL, "0", 1, 0}, {P_ULL, "1099511627776", 1, 1099511627776.0}, {P_ULL, "1099511627777", 0, 0},
    {P_ULL, "-1", 0, 0}, {P_ULL, "+1", 0, 0}, {P_ULL, " 1", 0, 0}, {P_ULL, "1x", 0, 0}, {P_ULL, "", 0, 0},
    {P_ULL, "99999999999999999999", 0, 0},
};

START_TEST(test_parse_number) {
    const char *s = numbers[_i].s;
    const double sentinel = 777;
    size_t z = 777; int i = 777; long l = 777; double d = 777; float f = 777; unsigned long long u = 777;
    int r = -2;
    double got = sentinel;
    switch (numbers[_i].kind) {
    case P_SIZE: r = parse_size(s, 4, (size_t)16 << 30, &z); got = (double)z; break;
    case P_INT: r = parse_int(s, 0, 100, &i); got = i; break;
    case P_LONG: r = parse_long(s, -10, 1L << 40, &l); got = (double)l; break;
    case P_LONG_ANY: r = parse_long(s, LONG_MIN, LONG_MAX, &l); got = (double)l; break;
    case P_DOUBLE: r = parse_double(s, nextafter(1.0, 2.0), 1024, &d); got = d; break;
    case P_FLOAT: r = parse_float(s, 0, 1, &f); got = f; break;
    case P_ULL: r = parse_ull(s, 1ULL << 40, &u); got = (double)u; break;
    }
    if (numbers[_i].ok) {
        ck_assert_msg(r == 0, "'%s' (kind %d) refused", s, numbers[_i].kind);
        ck_assert_msg(got == numbers[_i].want, "'%s' (kind %d): got %.17g, want %.17g", s, numbers[_i].kind, got,
                      numbers[_i].want);
    } else {
        ck_assert_msg(r == -1, "'%s' (kind %d) accepted as %.17g", s, numbers[_i].kind, got);
        ck_assert_msg(got == sentinel, "'%s' (kind %d): refused but wrote %.17g", s, numbers[_i].kind, got);
    }
}
END_TEST

/* a list's numbers one by one: where each ends, and not-a-number (-1) apart from out of range (-2) */
START_TEST(test_parse_long_at) {
    char *end;
    long v = 777;
    const char *list = "784,256,10";
    ck_assert_int_eq(parse_long_at(list, &end, 1, 1024, &v), 0);
    ck_assert_int_eq(v, 784);
    ck_assert_ptr_eq(end, list + 3);
    ck_assert_int_eq(parse_long_at(end + 1, &end, 1, 1024, &v), 0);
    ck_assert_int_eq(v, 256);
    ck_assert_int_eq(*end, ',');
    v = 777;
    ck_assert_int_eq(parse_long_at(",10", &end, 1, 1024, &v), -1);
    ck_assert_int_eq(parse_long_at("2000,1", &end, 1, 1024, &v), -2);
    ck_assert_int_eq(parse_long_at("0", &end, 1, 1024, &v), -2);
    ck_assert_int_eq(parse_long_at("99999999999999999999", &end, 1, 1024, &v), -2);
    ck_assert_int_eq(v, 777);
}
END_TEST

START_TEST(test_parse_path) {
    char dst[8] = "keep";
    ck_assert_int_eq(parse_path("", dst, sizeof dst), -1);
    ck_assert_int_eq(parse_path("--quiet", dst, sizeof dst), -1);   /* the next flag taken as the value */
    ck_assert_int_eq(parse_path("12345678", dst, sizeof dst), -2);  /* 8 + NUL does not fit */
    ck_assert_str_eq(dst, "keep");
    ck_assert_int_eq(parse_path("1234567", dst, sizeof dst), 0);
    ck_assert_str_eq(dst, "1234567");
}
END_TEST

static Suite *suite_parse(void) {
    const unit_test_t tests[] = {UNIT_LOOP(test_parse_number, UNIT_LEN(numbers)), UNIT_TEST(test_parse_long_at),
                                UNIT_TEST(test_parse_path)};
    return unit_suite("parse", tests, UNIT_LEN(tests));
}

/* the suites below write into unit_dir (options: as --data) */
static Suite *suite_with_tmpdir(const char *name, const unit_test_t *tests, int n) {
    Suite *s = suite_create(name);
    unit_tmpdir_add(unit_tcase(s, "core", tests, n));
    return s;
}

int main(void) {
    const unit_test_t options[] = {
        UNIT_LOOP(test_options_bad, UNIT_LEN(bad_options)), UNIT_TEST(test_options_good),
        UNIT_TEST(test_options_topology_flags), UNIT_LOOP(test_options_describe, UNIT_LEN(describe_cases)),
        UNIT_TEST(test_options_describe_np), UNIT_LOOP(test_options_describe_workers, UNIT_LEN(layouts)),
        UNIT_LOOP(test_options_describe_workers_bad, UNIT_LEN(bad_layouts)),
        UNIT_LOOP(test_options_lr_default, UNIT_LEN(lr_defaults)), UNIT_TEST(test_options_missing_data),
        UNIT_TEST(test_options_fingerprint),
    };
    const unit_test_t metrics[] = {UNIT_TEST(test_metrics_quote), UNIT_TEST(test_metrics_append)};
    const unit_test_t checkpoint[] = {UNIT_TEST(test_checkpoint_roundtrip), UNIT_TEST(test_checkpoint_layout)};
    Suite *suites[] = {
        suite_with_tmpdir("options", options, UNIT_LEN(options)),
        suite_parse(),
        suite_with_tmpdir("metrics", metrics, UNIT_LEN(metrics)),
        suite_with_tmpdir("checkpoint", checkpoint, UNIT_LEN(checkpoint)),
    };
    return unit_run(suites, UNIT_LEN(suites));
}
