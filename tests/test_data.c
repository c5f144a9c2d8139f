/* test_data.c: Check suites for src/data: suite_idx (synthetic IDX files, plain and gzipped, one
 * good load per layout and one failing load per way a file can be wrong, each error naming the
 * file; plus the real MNIST when present), suite_sampler (every rank's sampler built in one
 * process: disjoint cover, padding, drop_last, determinism, and N ranks x batch b == one process
 * x batch N*b) and batch_gather checks (bit for bit against torchvision's normalisation).
 * It does not download data: real-MNIST tests run only where mnist_dir.h finds it
 * ($PSRING_MNIST_DIR, else the tree's data/mnist). */
#include "data/batch.h"
#include "data/idx.h"
#include "data/sampler.h"
#include "mnist_dir.h"
#include "unit.h"
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---------------------------------------------------------------- synthetic IDX files ---- */

enum { N_IMG = 5, ROWS = 3, COLS = 4 };

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);  p[3] = (unsigned char)v;
}

static void write_file(const char *path, const unsigned char *buf, size_t n, int gz) {
    if (gz) {
        gzFile f = gzopen(path, "wb");
        ck_assert_msg(f != NULL, "gzopen %s: %s", path, strerror(errno));
        if (n) ck_assert_int_eq(gzwrite(f, buf, (unsigned)n), (int)n);
        ck_assert_int_eq(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        ck_assert_msg(f != NULL, "fopen %s: %s", path, strerror(errno));
        if (n) ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
        ck_assert_int_eq(fclose(f), 0);
    }
}

static unsigned char *read_whole(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "fopen %s: %s", path, strerror(errno));
    static unsigned char buf[1 << 16];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* how a test case breaks the otherwise valid pair of files */
typedef enum {
    BREAK_NONE, BREAK_MAGIC, BREAK_TRUNCATE, BREAK_TRAILING, BREAK_LABEL10, BREAK_COUNT,
    BREAK_ROWS0, BREAK_COUNT0, BREAK_COLS_HUGE, BREAK_SHORT_HEADER, BREAK_EMPTY, BREAK_MISSING,
    BREAK_GZ_CRC, BREAK_GZ_CUT
} breakage_t;

typedef struct {
    int gz;            /* write files gzipped (and named .gz) */
    breakage_t brk;
    int on_labels;     /* break the labels file instead of the images file */
} layout_t;

static int pixel_of(int i, int p) { return (i * 37 + p * 11) % 256; }
static int label_of(int i) { return (i * 3 + 1) % 10; }

/* writes DIR/<split>-{images,labels}; the broken file's path goes to badpath */
static void write_pair(const char *dir, const char *split, const layout_t *L, char *badpath, size_t blen) {
    unsigned char img[16 + N_IMG * ROWS * COLS + 8], lab[8 + N_IMG + 8];
    size_t ni = 16 + N_IMG * ROWS * COLS, nl = 8 + N_IMG;
    put_be32(img, 0x803); put_be32(img + 4, N_IMG); put_be32(img + 8, ROWS); put_be32(img + 12, COLS);
    for (int i = 0; i < N_IMG; i++)
        for (int p = 0; p < ROWS * COLS; p++) img[16 + i * ROWS * COLS + p] = (unsigned char)pixel_of(i, p);
    put_be32(lab, 0x801); put_be32(lab + 4, N_IMG);
    for (int i = 0; i < N_IMG; i++) lab[8 + i] = (unsigned char)label_of(i);

    unsigned char *b = L->on_labels ? lab : img;
    size_t *nb = L->on_labels ? &nl : &ni;
    switch (L->brk) {
    case BREAK_NONE: case BREAK_MISSING: case BREAK_GZ_CRC: case BREAK_GZ_CUT: break;
    case BREAK_MAGIC: put_be32(b, L->on_labels ? 0x802 : 0x801); break;
    case BREAK_TRUNCATE: *nb -= 3; break;
    case BREAK_TRAILING: b[*nb] = 0; b[*nb + 1] = 7; *nb += 2; break;
    case BREAK_LABEL10: lab[8 + 3] = 10; break;
    case BREAK_COUNT: put_be32(lab + 4, N_IMG - 1); nl -= 1; break;   /* a consistent file of 4 */
    case BREAK_ROWS0: put_be32(img + 8, 0); break;
    case BREAK_COUNT0: put_be32(b + 4, 0); break;
    case BREAK_COLS_HUGE: put_be32(img + 12, 1025); break;
    case BREAK_SHORT_HEADER: *nb = L->on_labels ? 6 : 13; break;
    case BREAK_EMPTY: *nb = 0; break;
    }
    const char *sfx = L->gz ? ".gz" : "";
    char ip[512], lp[512];
    snprintf(ip, sizeof ip, "%s/%s-images-idx3-ubyte%s", dir, split, sfx);
    snprintf(lp, sizeof lp, "%s/%s-labels-idx1-ubyte%s", dir, split, sfx);
    const char *bad = L->on_labels ? lp : ip;
    snprintf(badpath, blen, "%s", bad);
    if (!(L->brk == BREAK_MISSING && !L->on_labels)) write_file(ip, img, ni, L->gz);
    if (!(L->brk == BREAK_MISSING && L->on_labels)) write_file(lp, lab, nl, L->gz);

    if (L->brk == BREAK_GZ_CRC || L->brk == BREAK_GZ_CUT) {
        size_t n;
        unsigned char *raw = read_whole(bad, &n);
        ck_assert_uint_gt(n, 20);
        if (L->brk == BREAK_GZ_CRC) raw[n - 6] ^= 0x5a;   /* inside the CRC-32 of the trailer */
        else n -= 12;                                     /* cut into the deflate stream */
        write_file(bad, raw, n, 0);
    }
}

static void make_case_dir(char *dir, size_t len, const char *name) {
    snprintf(dir, len, "%s/%s", unit_dir, name);
    ck_assert_msg(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
}

/* written out here rather than calling batch_normalise, so a change there cannot pass unnoticed */
static float norm(int v) { return ((float)v / 255.0f - 0.1307f) / 0.3081f; }

/* --- good loads: plain, gzipped, both splits, limit variants */
typedef struct { int gz; const char *split; int limit; int want; } good_case_t;
static const good_case_t good_cases[] = {
    {0, "train", 0, N_IMG}, {1, "train", 0, N_IMG}, {0, "t10k", 0, N_IMG}, {1, "t10k", 3, 3},
    {0, "train", 1, 1}, {1, "train", N_IMG + 10, N_IMG}, {0, "train", -1, N_IMG},
};

START_TEST(test_idx_good) {
    const good_case_t *c = &good_cases[_i];
    char dir[512], bad[512], err[512] = "";
    char name[32];
    snprintf(name, sizeof name, "good%d", _i);
    make_case_dir(dir, sizeof dir, name);
    layout_t L = {c->gz, BREAK_NONE, 0};
    write_pair(dir, c->split, &L, bad, sizeof bad);
    dataset_t ds;
    int rc = dataset_load(&ds, dir, c->split, c->limit, err, sizeof err);
    ck_assert_msg(rc == 0, "case %d: %s", _i, err);
    ck_assert_int_eq(ds.count, c->want);
    ck_assert_int_eq(ds.rows, ROWS);
    ck_assert_int_eq(ds.cols, COLS);
    ck_assert_int_eq(ds.dim, ROWS * COLS);
    for (int i = 0; i < ds.count; i++) {
        ck_assert_int_eq(ds.labels[i], label_of(i));
        for (int p = 0; p < ds.dim; p++)
            ck_assert_msg(ds.pixels[i * ds.dim + p] == pixel_of(i, p), "image %d pixel %d", i, p);
    }
    dataset_free(&ds);
    ck_assert_ptr_null(ds.pixels);
    ck_assert_int_eq(ds.count, 0);
}
END_TEST

/* images plain and labels gzipped in one directory; and plain preferred when both exist */
START_TEST(test_idx_mixed_and_preference) {
    char dir[512], bad[512], err[512] = "", p[600];
    make_case_dir(dir, sizeof dir, "mixed");
    layout_t plain = {0, BREAK_NONE, 0}, gz = {1, BREAK_NONE, 0};
    write_pair(dir, "train", &gz, bad, sizeof bad);
    write_pair(dir, "train", &plain, bad, sizeof bad);
    snprintf(p, sizeof p, "%s/train-labels-idx1-ubyte", dir);
    ck_assert_int_eq(unlink(p), 0);   /* labels now only as .gz */
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte.gz", dir);
    write_file(p, (const unsigned char *)"garbage", 7, 0);   /* would fail if it were read */
    dataset_t ds;
    ck_assert_msg(dataset_load(&ds, dir, "train", 0, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(ds.count, N_IMG);
    ck_assert_int_eq(ds.labels[4], label_of(4));
    dataset_free(&ds);
}
END_TEST

/* --- each way a file can be wrong; expect must appear in the error, as must the file's path */
typedef struct { layout_t L; const char *expect; } bad_case_t;
static const bad_case_t bad_cases[] = {
    {{0, BREAK_MAGIC, 0}, "bad magic 0x00000801, expected 0x00000803 (IDX images)"},
    {{1, BREAK_MAGIC, 1}, "bad magic 0x00000802, expected 0x00000801 (IDX labels)"},
    {{0, BREAK_TRUNCATE, 0}, "truncated: header promises 76 bytes, file has 73"},
    {{1, BREAK_TRUNCATE, 1}, "truncated: header promises 13 bytes, file has 10"},
    {{0, BREAK_TRAILING, 1}, "2 trailing bytes after the 13"},
    {{1, BREAK_TRAILING, 0}, "2 trailing bytes after the 76"},
    {{0, BREAK_LABEL10, 1}, "label 10 at index 3"},
    {{1, BREAK_LABEL10, 1}, "label 10 at index 3"},
    {{0, BREAK_COUNT, 1}, "4 labels, but"},
    {{0, BREAK_ROWS0, 0}, "bad rows 0"},
    {{1, BREAK_COUNT0, 0}, "bad count 0"},
    {{0, BREAK_COUNT0, 1}, "bad count 0"},
    {{0, BREAK_COLS_HUGE, 0}, "bad cols 1025"},
    {{0, BREAK_SHORT_HEADER, 0}, "shorter than the 16-byte IDX images header"},
    {{1, BREAK_SHORT_HEADER, 1}, "shorter than the 8-byte IDX labels header"},
    {{0, BREAK_EMPTY, 1}, "truncated"},
    {{0, BREAK_MISSING, 0}, "no train-images-idx3-ubyte[.gz] in "},
    {{1, BREAK_MISSING, 1}, "no train-labels-idx1-ubyte[.gz] in "},
    {{1, BREAK_GZ_CRC, 0}, "gzip decompression failed"},
    {{1, BREAK_GZ_CRC, 1}, "gzip decompression failed"},
    {{1, BREAK_GZ_CUT, 0}, "gzip decompression failed"},
};

START_TEST(test_idx_bad) {
    const bad_case_t *c = &bad_cases[_i];
    char dir[512], bad[512], err[512] = "", name[32];
    snprintf(name, sizeof name, "bad%d", _i);
    make_case_dir(dir, sizeof dir, name);
    write_pair(dir, "train", &c->L, bad, sizeof bad);
    dataset_t ds;
    memset(&ds, 0x7f, sizeof ds);
    int rc = dataset_load(&ds, dir, "train", 0, err, sizeof err);
    ck_assert_msg(rc == -1, "case %d loaded but should fail with '%s'", _i, c->expect);
    ck_assert_msg(strstr(err, c->expect) != NULL, "case %d: error '%s' lacks '%s'", _i, err, c->expect);
    /* names the file (or for a missing file, the directory it is missing from) */
    const char *who = c->L.brk == BREAK_MISSING ? dir : bad;
    ck_assert_msg(strstr(err, who) != NULL, "case %d: error '%s' does not name %s", _i, err, who);
    ck_assert_ptr_null(ds.pixels);
    ck_assert_ptr_null(ds.labels);
    ck_assert_int_eq(ds.count, 0);
    dataset_free(&ds);   /* harmless on a failed load */
}
END_TEST

START_TEST(test_idx_bad_dir_and_split) {
    char err[512] = "", dir[600], bad[512];
    dataset_t ds;
    snprintf(dir, sizeof dir, "%s/does-not-exist", unit_dir);
    ck_assert_int_eq(dataset_load(&ds, dir, "train", 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, dir) && strstr(err, "No such file or directory"), "%s", err);

    make_case_dir(dir, sizeof dir, "split");
    layout_t L = {0, BREAK_NONE, 0};
    write_pair(dir, "train", &L, bad, sizeof bad);
    ck_assert_int_eq(dataset_load(&ds, dir, "test", 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "bad split 'test'"), "%s", err);
    /* a file given as the directory */
    ck_assert_int_eq(dataset_load(&ds, bad, "train", 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, bad) && strstr(err, "not a directory"), "%s", err);
    /* empty directory names the first missing file; a tiny err buffer is truncated, not overrun */
    make_case_dir(dir, sizeof dir, "empty");
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    ck_assert_int_eq(dataset_load(&ds, dir, "t10k", 0, tiny, 5), -1);
    ck_assert_int_eq(tiny[4], '\0');
    ck_assert_int_eq(tiny[5], 'x');
    ck_assert_int_eq(dataset_load(&ds, dir, "t10k", 0, NULL, 0), -1);
}
END_TEST

/* the low-level readers directly: they return the raw bytes */
START_TEST(test_idx_low_level) {
    char dir[512], bad[512], err[512] = "", p[600];
    make_case_dir(dir, sizeof dir, "low");
    layout_t L = {1, BREAK_NONE, 0};
    write_pair(dir, "t10k", &L, bad, sizeof bad);
    uint8_t *pix = NULL, *lab = NULL;
    int n, r, c;
    snprintf(p, sizeof p, "%s/t10k-images-idx3-ubyte.gz", dir);
    ck_assert_msg(idx_read_images(p, &pix, &n, &r, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(n, N_IMG); ck_assert_int_eq(r, ROWS); ck_assert_int_eq(c, COLS);
    ck_assert_int_eq(pix[2 * ROWS * COLS + 5], pixel_of(2, 5));
    free(pix);
    /* a labels file read as images is refused by magic */
    snprintf(p, sizeof p, "%s/t10k-labels-idx1-ubyte.gz", dir);
    ck_assert_int_eq(idx_read_images(p, &pix, &n, &r, &c, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "bad magic 0x00000801"), "%s", err);
    ck_assert_msg(idx_read_labels(p, &lab, &n, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(n, N_IMG);
    ck_assert_int_eq(lab[4], label_of(4));
    free(lab);
    snprintf(p, sizeof p, "%s/nope", dir);
    ck_assert_int_eq(idx_read_labels(p, &lab, &n, err, sizeof err), -1);
    ck_assert_msg(strstr(err, p) && strstr(err, "cannot open"), "%s", err);
}
END_TEST

START_TEST(test_batch_gather) {
    char dir[512], bad[512], err[512] = "";
    make_case_dir(dir, sizeof dir, "batch");
    layout_t L = {0, BREAK_NONE, 0};
    write_pair(dir, "train", &L, bad, sizeof bad);
    dataset_t ds;
    ck_assert_msg(dataset_load(&ds, dir, "train", 0, err, sizeof err) == 0, "%s", err);
    const uint32_t idx[] = {4, 0, 4, 2};
    float x[4 * ROWS * COLS];
    uint8_t y[4];
    batch_gather(x, y, &ds, idx, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(y[i], label_of(idx[i]));
        for (int p = 0; p < ds.dim; p++) ck_assert(x[i * ds.dim + p] == norm(pixel_of(idx[i], p)));
    }
    dataset_free(&ds);
}
END_TEST

/* batch_gather on in-memory datasets: every pixel value 0..255, row widths around the vector
 * widths (the SIMD copies' main loops and tails), batches shorter and longer than the prefetch
 * distance, repeated and descending indices. Compared bit for bit with the formula. */
typedef struct { int dim, n; } gather_case_t;
static const gather_case_t gather_cases[] = {
    {1, 1}, {7, 3}, {8, 2}, {15, 5}, {16, 1}, {17, 9}, {31, 64}, {33, 4}, {784, 1}, {784, 64}, {785, 70},
};

START_TEST(test_batch_gather_table) {
    const gather_case_t *c = &gather_cases[_i];
    enum { COUNT = 300 };
    dataset_t ds = {0};
    ds.count = COUNT;
    ds.rows = 1;
    ds.cols = c->dim;
    ds.dim = c->dim;
    ds.pixels = malloc((size_t)COUNT * c->dim);
    ds.labels = malloc(COUNT);
    float *x = malloc(sizeof(float) * (size_t)c->n * c->dim);
    uint8_t *y = malloc((size_t)c->n);
    uint32_t *idx = malloc(sizeof(uint32_t) * (size_t)c->n);
    ck_assert(ds.pixels && ds.labels && x && y && idx);
    int seen[256] = {0};
    for (size_t k = 0; k < COUNT; k++) {
        ds.labels[k] = (uint8_t)(k % 10);
        for (int p = 0; p < c->dim; p++) {
            uint8_t v = (uint8_t)((k * 131 + (size_t)p * 29 + k * p) % 256);
            ds.pixels[k * c->dim + p] = v;
            seen[v] = 1;
        }
    }
    if (c->dim >= 784)   /* the table covers the whole byte range where rows are long enough */
        for (int v = 0; v < 256; v++) ck_assert_msg(seen[v], "pixel value %d not in the fixture", v);
    for (int i = 0; i < c->n; i++) idx[i] = (uint32_t)((COUNT - 1 - (size_t)i * 7) % COUNT);
    if (c->n > 2) idx[2] = idx[0];   /* a repeat */
    memset(x, 0xff, sizeof(float) * (size_t)c->n * c->dim);   /* NaN: a skipped element shows */
    batch_gather(x, y, &ds, idx, c->n);
    for (int i = 0; i < c->n; i++) {
        ck_assert_int_eq(y[i], ds.labels[idx[i]]);
        for (int p = 0; p < c->dim; p++) {
            float want = norm(ds.pixels[(size_t)idx[i] * c->dim + p]);
            float got = x[(size_t)i * c->dim + p];
            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "dim %d n %d: row %d pixel %d: %.9g, want %.9g",
                          c->dim, c->n, i, p, (double)got, (double)want);
        }
    }
    free(ds.pixels); free(ds.labels); free(x); free(y); free(idx);
}
END_TEST

/* batch_normalise is torchvision's arithmetic for all 256 values; the end points as PyTorch prints them */
START_TEST(test_batch_normalise) {
    for (int v = 0; v < 256; v++) {
        float got = batch_normalise((uint8_t)v), want = norm(v);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "value %d: %.9g, want %.9g", v, (double)got, (double)want);
    }
    ck_assert_float_eq_tol(batch_normalise(0), -0.42421296f, 1e-7f);
    ck_assert_float_eq_tol(batch_normalise(255), 2.8214867f, 1e-6f);
}
END_TEST

/* ---------------------------------------------------------------- real MNIST ---- */

START_TEST(test_mnist_real) {
    const char *dir = test_mnist_dir();
    char err[512] = "";
    dataset_t tr, te;
    ck_assert_msg(dataset_load(&tr, dir, "train", 0, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(tr.count, 60000);
    ck_assert_int_eq(tr.rows, 28);
    ck_assert_int_eq(tr.cols, 28);
    const uint8_t train_first[] = {5, 0, 4, 1, 9, 2, 1, 3, 1, 4};
    for (int i = 0; i < 10; i++) ck_assert_int_eq(tr.labels[i], train_first[i]);
    int hist[10] = {0};
    for (int i = 0; i < tr.count; i++) hist[tr.labels[i]]++;
    ck_assert_int_eq(hist[1], 6742);   /* the most frequent digit in the training set */
    ck_assert_int_eq(hist[5], 5421);   /* the least frequent */
    /* the normalised pixel range is exactly PyTorch's: 0 -> -0.4242, 255 -> 2.8215; every row
     * goes through batch_gather, as training sees it */
    float lo = 1e9f, hi = -1e9f;
    double sum = 0;
    enum { CHUNK = 1000 };
    float *x = malloc(sizeof(float) * CHUNK * (size_t)tr.dim);
    uint8_t y[CHUNK];
    uint32_t idx[CHUNK];
    ck_assert_ptr_nonnull(x);
    for (int i0 = 0; i0 < tr.count; i0 += CHUNK) {
        int n = tr.count - i0 < CHUNK ? tr.count - i0 : CHUNK;
        for (int j = 0; j < n; j++) idx[j] = (uint32_t)(i0 + j);
        batch_gather(x, y, &tr, idx, n);
        for (size_t i = 0; i < (size_t)n * tr.dim; i++) {
            float v = x[i];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            sum += v;
        }
    }
    free(x);
    ck_assert_double_eq_tol(sum / ((double)tr.count * tr.dim), 0.0, 1e-3);
    dataset_free(&tr);

    ck_assert_msg(dataset_load(&te, dir, "t10k", 100, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(te.count, 100);
    dataset_free(&te);
    ck_assert_msg(dataset_load(&te, dir, "t10k", 0, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(te.count, 10000);
    const uint8_t test_first[] = {7, 2, 1, 0, 4, 1, 4, 9, 5, 9};
    for (int i = 0; i < 10; i++) ck_assert_int_eq(te.labels[i], test_first[i]);
    dataset_free(&te);
}
END_TEST

static Suite *suite_idx(void) {
    const unit_test_t synthetic[] = {
        UNIT_LOOP(test_idx_good, UNIT_LEN(good_cases)), UNIT_TEST(test_idx_mixed_and_preference),
        UNIT_LOOP(test_idx_bad, UNIT_LEN(bad_cases)), UNIT_TEST(test_idx_bad_dir_and_split),
        UNIT_TEST(test_idx_low_level), UNIT_TEST(test_batch_gather),
        UNIT_LOOP(test_batch_gather_table, UNIT_LEN(gather_cases)), UNIT_TEST(test_batch_normalise),
    };
    const unit_test_t real[] = {UNIT_TEST(test_mnist_real)};
    Suite *s = suite_create("idx");
    unit_tmpdir_add(unit_tcase(s, "synthetic", synthetic, UNIT_LEN(synthetic)));
    if (test_mnist_dir()) {
        tcase_set_timeout(unit_tcase(s, "mnist", real, UNIT_LEN(real)), 120);
    } else {
        fprintf(stderr, "test_data: " TEST_MNIST_MISSING ": real-data test not run\n");
    }
    return s;
}

/* ---------------------------------------------------------------- sampler ---- */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* builds all N ranks' samplers in this process */
static sampler_t *make_ranks(size_t size, int N, uint64_t seed, int shuffle, int drop_last, int epoch) {
    sampler_t *s = calloc((size_t)N, sizeof *s);
    ck_assert_ptr_nonnull(s);
    for (int r = 0; r < N; r++) {
        ck_assert_int_eq(sampler_init(&s[r], size, N, r, seed, shuffle, drop_last), 0);
        sampler_set_epoch(&s[r], epoch);
    }
    return s;
}

static void free_ranks(sampler_t *s, int N) {
    for (int r = 0; r < N; r++) sampler_free(&s[r]);
    free(s);
}

START_TEST(test_sampler_bad_args) {
    sampler_t s;
    ck_assert_int_eq(sampler_init(&s, 10, 0, 0, 1, 1, 0), -1);
    ck_assert_int_eq(sampler_init(&s, 10, 3, 3, 1, 1, 0), -1);
    ck_assert_int_eq(sampler_init(&s, 10, 3, -1, 1, 1, 0), -1);
    ck_assert_int_eq(sampler_init(&s, 0, 1, 0, 1, 1, 0), -1);
    ck_assert_int_eq(sampler_init(&s, 10, 3, 2, 1, 1, 0), 0);
    sampler_free(&s);
}
END_TEST

/* the permutation is a permutation, and shuffle off is the identity whatever the epoch */
START_TEST(test_sampler_perm) {
    const size_t size = 1000;
    sampler_t s;
    ck_assert_int_eq(sampler_init(&s, size, 1, 0, 42, 1, 0), 0);
    uint32_t *sorted = malloc(size * sizeof *sorted);
    for (int e = 0; e < 3; e++) {
        sampler_set_epoch(&s, e);
        ck_assert_int_eq(s.epoch, e);
        ck_assert_uint_eq(s.num_samples, size);
        memcpy(sorted, s.indices, size * sizeof *sorted);
        qsort(sorted, size, sizeof *sorted, cmp_u32);
        for (size_t i = 0; i < size; i++) ck_assert_uint_eq(sorted[i], i);
        size_t fixed = 0;
        for (size_t i = 0; i < size; i++) fixed += s.indices[i] == i;
        ck_assert_uint_lt(fixed, 20);   /* expected about 1 fixed point for a random permutation */
    }
    free(sorted);
    sampler_free(&s);
    ck_assert_int_eq(sampler_init(&s, size, 1, 0, 42, 0, 0), 0);
    for (int e = 0; e < 3; e++) {
        sampler_set_epoch(&s, e);
        for (size_t i = 0; i < size; i++) ck_assert_uint_eq(s.indices[i], i);
    }
    sampler_free(&s);
}
END_TEST

START_TEST(test_sampler_determinism) {
    const size_t size = 257;
    sampler_t a, b, c, d;
    ck_assert_int_eq(sampler_init(&a, size, 4, 0, 7, 1, 0), 0);
    ck_assert_int_eq(sampler_init(&b, size, 4, 3, 7, 1, 0), 0);   /* another rank, same epoch */
    ck_assert_int_eq(sampler_init(&c, size, 1, 0, 7, 1, 0), 0);
    ck_assert_int_eq(sampler_init(&d, size, 1, 0, 8, 1, 0), 0);   /* another seed */
    sampler_set_epoch(&a, 5);
    sampler_set_epoch(&b, 5);
    sampler_set_epoch(&c, 5);
    sampler_set_epoch(&d, 5);
    ck_assert_mem_eq(a.perm, b.perm, size * sizeof *a.perm);
    ck_assert_mem_eq(a.perm, c.perm, size * sizeof *a.perm);
    ck_assert(memcmp(a.perm, d.perm, size * sizeof *a.perm) != 0);
    uint32_t *e5 = malloc(size * sizeof *e5);
    memcpy(e5, c.indices, size * sizeof *e5);
    sampler_set_epoch(&c, 6);
    ck_assert(memcmp(e5, c.indices, size * sizeof *e5) != 0);
    sampler_set_epoch(&c, 5);   /* going back reproduces it exactly */
    ck_assert_mem_eq(e5, c.indices, size * sizeof *e5);
    free(e5);
    sampler_free(&a); sampler_free(&b); sampler_free(&c); sampler_free(&d);
}
END_TEST

/* size % N == 0: the shards are disjoint and together cover [0, size) */
START_TEST(test_sampler_disjoint_cover) {
    const int Ns[] = {1, 2, 3, 4, 5, 8};
    for (int k = 0; k < 6; k++) {
        int N = Ns[k];
        size_t size = (size_t)N * 31;
        for (int sh = 0; sh < 2; sh++) {
            sampler_t *s = make_ranks(size, N, 123, sh, 0, 2);
            unsigned char *seen = calloc(size, 1);
            for (int r = 0; r < N; r++) {
                ck_assert_uint_eq(s[r].num_samples, size / N);
                ck_assert_uint_eq(s[r].total_size, size);
                for (size_t i = 0; i < s[r].num_samples; i++) {
                    uint32_t v = s[r].indices[i];
                    ck_assert_uint_lt(v, size);
                    ck_assert_msg(!seen[v], "N=%d: index %u on two ranks", N, v);
                    seen[v] = 1;
                }
            }
            for (size_t i = 0; i < size; i++) ck_assert_msg(seen[i], "N=%d: index %zu on no rank", N, i);
            free(seen);
            free_ranks(s, N);
        }
    }
}
END_TEST

/* size 10, N 3: padded to 12 by repeating the permutation's first 2 entries; drop_last gives 9 */
START_TEST(test_sampler_padding) {
    sampler_t *s = make_ranks(10, 3, 99, 1, 0, 1);
    const uint32_t *p = s[0].perm;
    for (int r = 0; r < 3; r++) {
        ck_assert_uint_eq(s[r].total_size, 12);
        ck_assert_uint_eq(s[r].num_samples, 4);
        for (int k = 0; k < 4; k++) ck_assert_uint_eq(s[r].indices[k], p[(r + 3 * k) % 10]);
    }
    /* positions 10 and 11 (rank 1 and 2's last) wrap to positions 0 and 1 (rank 0 and 1's first) */
    ck_assert_uint_eq(s[1].indices[3], s[0].indices[0]);
    ck_assert_uint_eq(s[2].indices[3], s[1].indices[0]);
    free_ranks(s, 3);

    s = make_ranks(10, 3, 99, 1, 1, 1);
    unsigned char seen[10] = {0};
    for (int r = 0; r < 3; r++) {
        ck_assert_uint_eq(s[r].total_size, 9);
        ck_assert_uint_eq(s[r].num_samples, 3);
        for (int k = 0; k < 3; k++) {
            ck_assert_uint_eq(s[r].indices[k], s[r].perm[r + 3 * k]);
            ck_assert(!seen[s[r].indices[k]]);
            seen[s[r].indices[k]] = 1;
        }
    }
    ck_assert_uint_eq(s[0].perm[9] < 10 && !seen[s[0].perm[9]], 1);   /* the dropped one */
    free_ranks(s, 3);

    /* padding larger than the data: size 3, N 8 -> 8 positions, perm repeated 0,1,2,0,1,2,0,1 */
    s = make_ranks(3, 8, 5, 1, 0, 0);
    for (int r = 0; r < 8; r++) {
        ck_assert_uint_eq(s[r].num_samples, 1);
        ck_assert_uint_eq(s[r].indices[0], s[r].perm[r % 3]);
    }
    free_ranks(s, 8);
    /* drop_last with fewer samples than ranks: nobody gets anything, as in PyTorch */
    s = make_ranks(3, 8, 5, 1, 1, 0);
    for (int r = 0; r < 8; r++) ck_assert_uint_eq(s[r].num_samples, 0);
    free_ranks(s, 8);
}
END_TEST

/* THE property: the N ranks' k-th batches of b together are the one-process k-th batch of N*b
 * (positions [k*N*b, (k+1)*N*b) of the padded permutation), last partial batch included. */
START_TEST(test_sampler_union_is_big_batch) {
    const size_t sizes[] = {10, 37, 64, 100, 1001};
    const int bs[] = {1, 2, 3, 5, 8, 16};
    uint32_t got[64 * 4], want[64 * 4];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (int N = 1; N <= 4; N++)
    for (int sh = 0; sh < 2; sh++)
    for (int dl = 0; dl < 2; dl++)
    for (size_t bi = 0; bi < sizeof bs / sizeof bs[0]; bi++) {
        size_t size = sizes[si];
        int b = bs[bi];
        int epoch = (int)(si + bi);
        sampler_t *s = make_ranks(size, N, 2024, sh, dl, epoch);
        sampler_t one;
        ck_assert_int_eq(sampler_init(&one, size, 1, 0, 2024, sh, 0), 0);
        sampler_set_epoch(&one, epoch);
        size_t ns = s[0].num_samples, batches = 0;
        for (size_t start = 0; start < ns; start += (size_t)b, batches++) {
            size_t len = ns - start < (size_t)b ? ns - start : (size_t)b;
            size_t n = 0;
            for (int r = 0; r < N; r++)
                for (size_t i = 0; i < len; i++) got[n++] = s[r].indices[start + i];
            size_t q0 = start * (size_t)N;
            for (size_t i = 0; i < n; i++) want[i] = one.indices[(q0 + i) % size];
            qsort(got, n, sizeof *got, cmp_u32);
            qsort(want, n, sizeof *want, cmp_u32);
            ck_assert_msg(memcmp(got, want, n * sizeof *got) == 0,
                          "size %zu N %d b %d shuffle %d drop_last %d: batch %zu differs", size, N, b, sh,
                          dl, batches);
        }
        ck_assert_uint_eq(batches, (ns + b - 1) / b);
        sampler_free(&one);
        free_ranks(s, N);
    }
}
END_TEST

/* ------------------------------------------------------- sampler strategies (sampler_set_kind) */

static const struct { size_t size; int N, drop_last; } kind_cases[] = {
    {100, 4, 0}, {103, 4, 0}, {103, 4, 1}, {7, 3, 0}, {10, 1, 0}, {3, 5, 0},
};

static sampler_t *make_kind(size_t size, int N, uint64_t seed, int drop_last, sampler_kind_t k, int epoch) {
    sampler_t *s = make_ranks(size, N, seed, 1, drop_last, 0);
    for (int r = 0; r < N; r++) {
        sampler_set_kind(&s[r], k);
        sampler_set_epoch(&s[r], epoch);
    }
    return s;
}

/* counts[i] = how often index i occurs over all ranks */
static void count_all(const sampler_t *s, int N, size_t size, int *counts) {
    memset(counts, 0, size * sizeof *counts);
    for (int r = 0; r < N; r++)
        for (size_t k = 0; k < s[r].num_samples; k++) {
            ck_assert_uint_lt(s[r].indices[k], size);
            counts[s[r].indices[k]]++;
        }
}

/* shuffle-then-shard: rank r's indices are the r-th contiguous block of the padded global
 * permutation (the N = 1 distributed sampler's epoch is that permutation); disjoint when nothing
 * is padded, covering unless dropped; and the blocks differ from distributed's strided picks */
START_TEST(test_sampler_shuffle_then_shard) {
    size_t size = kind_cases[_i].size;
    int N = kind_cases[_i].N, dl = kind_cases[_i].drop_last;
    for (int e = 0; e < 3; e++) {
        sampler_t *s = make_kind(size, N, 21, dl, SAMPLER_SHUFFLE_THEN_SHARD, e);
        sampler_t *d = make_ranks(size, N, 21, 1, dl, e);
        sampler_t *one = make_ranks(size, 1, 21, 1, 0, e);
        int *counts = calloc(size, sizeof *counts);
        for (int r = 0; r < N; r++) {
            ck_assert_uint_eq(s[r].num_samples, d[r].num_samples);
            for (size_t k = 0; k < s[r].num_samples; k++)
                ck_assert_uint_eq(s[r].indices[k], one[0].perm[((size_t)r * s[r].num_samples + k) % size]);
        }
        count_all(s, N, size, counts);
        size_t total = s[0].num_samples * (size_t)N;
        for (size_t i = 0; i < size; i++) {
            if (total == size) ck_assert_int_eq(counts[i], 1);        /* disjoint and covering */
            else if (!dl) ck_assert_int_ge(counts[i], 1);             /* padded: covering */
            else ck_assert_int_le(counts[i], 1);                      /* dropped: disjoint */
        }
        if (N > 1 && size >= 100 && e == 0)
            ck_assert_msg(memcmp(s[0].indices, d[0].indices, s[0].num_samples * sizeof(uint32_t)) != 0,
                          "shuffle-then-shard gave distributed's indices");
        free(counts);
        free_ranks(s, N); free_ranks(d, N); free_ranks(one, 1);
    }
}
END_TEST

/* shard-then-shuffle: the SET of each rank's indices is its fixed contiguous shard of the file
 * order, the same in every epoch; only the order changes from epoch to epoch */
START_TEST(test_sampler_shard_then_shuffle) {
    size_t size = kind_cases[_i].size;
    int N = kind_cases[_i].N, dl = kind_cases[_i].drop_last;
    sampler_t *s0 = make_kind(size, N, 5, dl, SAMPLER_SHARD_THEN_SHUFFLE, 0);
    int *counts = calloc(size, sizeof *counts);
    count_all(s0, N, size, counts);
    size_t total = s0[0].num_samples * (size_t)N;
    for (size_t i = 0; i < size; i++) {
        if (total == size) ck_assert_int_eq(counts[i], 1);
        else if (!dl) ck_assert_int_ge(counts[i], 1);
        else ck_assert_int_le(counts[i], 1);
    }
    for (int e = 1; e < 4; e++) {
        sampler_t *s = make_kind(size, N, 5, dl, SAMPLER_SHARD_THEN_SHUFFLE, e);
        for (int r = 0; r < N; r++) {
            size_t ns = s[r].num_samples;
            int *seen = calloc(size, sizeof *seen);
            for (size_t k = 0; k < ns; k++) seen[s[r].indices[k]]++;
            for (size_t k = 0; k < ns; k++) {
                size_t want = ((size_t)r * ns + k) % size;   /* the shard, in file order */
                ck_assert_int_ge(seen[want], 1);
            }
            if (ns >= 20)
                ck_assert_msg(memcmp(s[r].indices, s0[r].indices, ns * sizeof(uint32_t)) != 0,
                              "rank %d: epoch %d has the order of epoch 0", r, e);
            free(seen);
        }
        free_ranks(s, N);
    }
    free(counts);
    free_ranks(s0, N);
}
END_TEST

/* split-epochs: every rank walks ALL samples each epoch, in the order of data epoch e*N + r
 * (the distributed N = 1 permutation of that epoch), so the ranks' orders differ */
START_TEST(test_sampler_split_epochs) {
    size_t size = kind_cases[_i].size;
    int N = kind_cases[_i].N, dl = kind_cases[_i].drop_last;
    for (int e = 0; e < 3; e++) {
        sampler_t *s = make_kind(size, N, 8, dl, SAMPLER_SPLIT_EPOCHS, e);
        for (int r = 0; r < N; r++) {
            ck_assert_uint_eq(s[r].num_samples, size);
            int *seen = calloc(size, sizeof *seen);
            for (size_t k = 0; k < size; k++) seen[s[r].indices[k]]++;
            for (size_t i = 0; i < size; i++) ck_assert_int_eq(seen[i], 1);   /* a permutation */
            free(seen);
            sampler_t *one = make_ranks(size, 1, 8, 1, 0, e * N + r);
            ck_assert_mem_eq(s[r].indices, one[0].indices, size * sizeof(uint32_t));
            free_ranks(one, 1);
        }
        if (N > 1 && size >= 100)
            ck_assert_msg(memcmp(s[0].indices, s[1].indices, size * sizeof(uint32_t)) != 0, "ranks 0 and 1 share an order");
        free_ranks(s, N);
    }
}
END_TEST

/* every kind depends on (seed, epoch, rank) only: rebuilt samplers agree, switching kinds back
 * restores distributed exactly, and another seed changes the order */
START_TEST(test_sampler_kinds_deterministic) {
    for (int k = 0; k <= SAMPLER_SPLIT_EPOCHS; k++) {
        sampler_t *a = make_kind(257, 4, 99, 0, (sampler_kind_t)k, 3);
        sampler_t *b = make_kind(257, 4, 99, 0, (sampler_kind_t)k, 3);
        sampler_t *c = make_kind(257, 4, 98, 0, (sampler_kind_t)k, 3);
        for (int r = 0; r < 4; r++) {
            ck_assert_mem_eq(a[r].indices, b[r].indices, a[r].num_samples * sizeof(uint32_t));
            ck_assert_msg(memcmp(a[r].indices, c[r].indices, a[r].num_samples * sizeof(uint32_t)) != 0,
                          "kind %d rank %d: seed does not matter", k, r);
        }
        free_ranks(a, 4); free_ranks(b, 4); free_ranks(c, 4);
    }
    sampler_t *d = make_ranks(257, 4, 99, 1, 0, 3);
    sampler_t *x = make_kind(257, 4, 99, 0, SAMPLER_SPLIT_EPOCHS, 3);
    for (int r = 0; r < 4; r++) {
        sampler_set_kind(&x[r], SAMPLER_DISTRIBUTED);
        ck_assert_uint_eq(x[r].num_samples, d[r].num_samples);
        ck_assert_mem_eq(x[r].indices, d[r].indices, d[r].num_samples * sizeof(uint32_t));
    }
    free_ranks(d, 4); free_ranks(x, 4);
    static const struct { const char *name; int ok; sampler_kind_t k; } names[] = {
        {"distributed", 1, SAMPLER_DISTRIBUTED}, {"shard-then-shuffle", 1, SAMPLER_SHARD_THEN_SHUFFLE},
        {"shuffle-then-shard", 1, SAMPLER_SHUFFLE_THEN_SHARD}, {"split-epochs", 1, SAMPLER_SPLIT_EPOCHS},
        {"", 0, 0}, {"Distributed", 0, 0}, {"split", 0, 0}, {"split-epochsx", 0, 0},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        sampler_kind_t k = SAMPLER_DISTRIBUTED;
        ck_assert_int_eq(sampler_kind_parse(names[i].name, &k), names[i].ok ? 0 : -1);
        if (names[i].ok) {
            ck_assert_int_eq(k, names[i].k);
            ck_assert_str_eq(sampler_kind_name(k), names[i].name);
        }
    }
}
END_TEST

static Suite *suite_sampler(void) {
    const int nk = UNIT_LEN(kind_cases);
    const unit_test_t tests[] = {
        UNIT_TEST(test_sampler_bad_args), UNIT_TEST(test_sampler_perm), UNIT_TEST(test_sampler_determinism),
        UNIT_TEST(test_sampler_disjoint_cover), UNIT_TEST(test_sampler_padding),
        UNIT_TEST(test_sampler_union_is_big_batch), UNIT_LOOP(test_sampler_shuffle_then_shard, nk),
        UNIT_LOOP(test_sampler_shard_then_shuffle, nk), UNIT_LOOP(test_sampler_split_epochs, nk),
        UNIT_TEST(test_sampler_kinds_deterministic),
    };
    return unit_suite("sampler", tests, UNIT_LEN(tests));
}

int main(void) {
    Suite *suites[] = {suite_idx(), suite_sampler()};
    return unit_run(suites, UNIT_LEN(suites));
}
